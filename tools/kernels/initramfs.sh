#!/usr/bin/env bash
# tools/kernels/initramfs.sh KDIR OUT — the initramfs that boots KDIR's
# kernel (tools/kernels/fetch.sh) into this machine's root file system:
# busybox-static, the modules 9p over virtio and overlayfs need (resolved by modprobe,
# decompressed: busybox insmod reads plain .ko only), and init
# (tools/kernels/init.sh). Debian builds virtio and 9p as modules (6.1:
# virtio_pci too; 6.12: xz-compressed).
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin
kdir=$(realpath "${1:?kdir}")
out=${2:?out}
kver=$(cat "$kdir/kver")
root=$kdir/root
# modprobe -d looks under BASE/lib/modules: trixie and sid ship
# /usr/lib/modules.
[[ -d $root/lib/modules ]] || { mkdir -p "$root/lib" && ln -sfn ../usr/lib/modules "$root/lib/modules"; }
[[ -s $root/lib/modules/$kver/modules.dep ]] || depmod -b "$root" "$kver"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,lower,rw,mods}
cp "${BUSYBOX:-/bin/busybox}" "$stage/bin/busybox" # BUSYBOX: the guest's (arm64: its root's)
for a in sh mount umount mkdir insmod chroot sleep cat echo poweroff ls; do
	ln -s busybox "$stage/bin/$a"
done
n=0
# virtio_pci first (its dependencies before it), then 9p's; a module
# built in is printed as "builtin".
for m in virtio_pci 9pnet_virtio 9p overlay; do
	# Not found: built in where the package ships no text modules.builtin
	# for this kmod to read (sid's 7.x); the mount says so if it is not.
	{ modprobe -d "$root" -S "$kver" --show-depends "$m" 2>/dev/null || true; } |
		awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	n=$((n + 1))
	dst=$stage/mods/$(printf '%02d' "$n")-$(basename "${ko%.xz}")
	case $ko in
	*.xz) xz -dc "$ko" >"$dst" ;;
	*.zst) zstd -qdc "$ko" >"$dst" ;;
	*) cp "$ko" "$dst" ;;
	esac
done
cp "$(dirname "$0")/init.sh" "$stage/init"
chmod +x "$stage/init"
(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
