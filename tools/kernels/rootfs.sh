#!/usr/bin/env bash
# tools/kernels/rootfs.sh DIR — a Debian bookworm arm64 root file system
# at DIR, made by mmdebstrap from the Debian archive: what an aarch64
# pmubpf links (the -dev packages: `make CROSS=arm64` compiles against it
# as its sysroot) and what the tests run inside the arm64 guest
# (tools/kernels/vm.sh with VM_ARCH=arm64 boots with it as its root: bash,
# python3, busybox-static for the initramfs). The packages' maintainer
# scripts run under qemu-user (binfmt_misc, registered here if it is
# not). Made once: DIR/.pmubpf-packages holds the list it was made with,
# and a changed list makes it again. SUITE=... picks another suite.
set -euo pipefail
dir=$(realpath -m "${1:?dir}")
suite=${SUITE:-bookworm}
PKGS=(
	libc6-dev linux-libc-dev libstdc++-12-dev  # the sysroot: C library, uapi headers, libgcc, libstdc++
	libbpf-dev libelf-dev libdw-dev zlib1g-dev liblzma-dev libprotobuf-c-dev
	libmicrohttpd-dev libcurl4-openssl-dev libpfm4-dev libdebuginfod-dev
	python3                                    # tests/integration/check.py in the guest
	golang-go                                  # go tool pprof: the independent reader of the profiles (lib.sh valid_profile)
	busybox-static                             # the guest's initramfs (tools/kernels/initramfs.sh)
	procps util-linux gzip binutils            # ps, setpriv, gzip; readelf in the suites
)
want="$suite ${PKGS[*]}"
if [[ -f $dir/.pmubpf-packages && $(cat "$dir/.pmubpf-packages") == "$want" ]]; then
	exit 0
fi
# binfmt_misc: the packages' scripts are aarch64 programs.
if [[ ! -e /proc/sys/fs/binfmt_misc/register ]]; then
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]]; then
	update-binfmts --enable qemu-aarch64
fi
echo "rootfs: making Debian $suite arm64 at $dir (mmdebstrap, a few minutes)" >&2
rm -rf "$dir.tmp"
mkdir -p "$(dirname "$dir")"
mmdebstrap --quiet --arch=arm64 --variant=minbase --mode=root \
	--include="$(IFS=,; echo "${PKGS[*]}")" \
	"$suite" "$dir.tmp" http://deb.debian.org/debian
echo "$want" >"$dir.tmp/.pmubpf-packages"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
