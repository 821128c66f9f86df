#!/usr/bin/env bash
# tools/kernels/fetch.sh SUITE DIR — Debian's kernel for SUITE (bullseye,
# bookworm, trixie, sid), unpacked under DIR: DIR/root (the packages'
# files), DIR/kver (its release), DIR/vmlinuz, DIR/packages (name=version
# of each package, for docs/kernels.md). The archive is read through an
# apt state of its own under DIR/apt: the machine's sources and package
# state are not touched. Nothing is fetched again once DIR/kver exists.
# ARCH (amd64, arm64) picks the architecture, amd64 by default.
set -euo pipefail
suite=${1:?suite}
dir=$(realpath -m "${2:?dir}") # apt takes a relative Dir:: below /
arch=${ARCH:-amd64}
[[ -s $dir/kver && -s $dir/vmlinuz ]] && exit 0

mkdir -p "$dir/apt/etc/sources.list.d" "$dir/apt/etc/preferences.d" "$dir/apt/state/lists/partial" \
	"$dir/apt/cache/archives/partial" "$dir/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
	>"$dir/apt/etc/sources.list"
A=(-o "Dir::Etc=$dir/apt/etc" -o "Dir::State=$dir/apt/state" -o "Dir::Cache=$dir/apt/cache"
   -o Dir::State::status=/dev/null -o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
   -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${A[@]}" -qq update >/dev/null

deps_of() { # the linux-* packages a package depends on, one a line
	apt-cache "${A[@]}" depends --no-pre-depends --important "$1" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-\(image\|binary\|modules\)-[^ ]*\)$/\1/p'
}
# linux-image-ARCH names the suite's current kernel; since 6.13 (sid) its
# image package is empty and depends on linux-binary-* (vmlinuz) and
# linux-modules-*.
image=$(deps_of "linux-image-$arch" | grep '^linux-image-' | head -1)
[[ -n $image ]] || { echo "fetch.sh: no linux-image-$arch in $suite" >&2; exit 1; }
pkgs=("$image" $(deps_of "$image"))
rm -f "$dir/debs/"*.deb
(cd "$dir/debs" && apt-get "${A[@]}" -qq download "${pkgs[@]}")
rm -rf "$dir/root" && mkdir -p "$dir/root"
: >"$dir/packages.tmp"
for d in "$dir/debs/"*.deb; do
	dpkg-deb -x "$d" "$dir/root"
	dpkg-deb -f "$d" Package Version | paste -sd' ' | sed 's/Package: //; s/ Version: /=/' >>"$dir/packages.tmp"
done
# The modules live under /lib/modules (bullseye, bookworm) or
# /usr/lib/modules (trixie, sid); vmlinuz under /boot or the modules.
mods=$(ls -d "$dir/root"/usr/lib/modules/* "$dir/root"/lib/modules/* 2>/dev/null | head -1 || true)
kver=$(basename "$mods")
vmlinuz=$(ls "$dir/root/boot/vmlinuz-$kver" "$mods/vmlinuz" 2>/dev/null | head -1 || true)
[[ -n $kver && -f $vmlinuz ]] || { echo "fetch.sh: no kernel image in ${pkgs[*]}" >&2; exit 1; }
ln -sfr "$vmlinuz" "$dir/vmlinuz"
mv "$dir/packages.tmp" "$dir/packages"
rm -rf "$dir/debs"
echo "$kver" >"$dir/kver"
