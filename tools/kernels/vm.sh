#!/usr/bin/env bash
# tools/kernels/vm.sh KDIR OUTDIR COMMAND... — boot KDIR's kernel
# (tools/kernels/fetch.sh) under qemu (TCG: no hardware virtualisation
# is assumed) with this machine's root file system read-only over 9p,
# run COMMAND with bash inside it from the current directory, and exit
# with its status. OUTDIR (made empty) is the guest's /run/kout,
# writable: the command's results come back there; its output is
# OUTDIR/console (kernel messages and the command's output), also
# printed. VM_MEM (MiB, 3072), VM_CPUS (2), VM_TIMEOUT (s, 1200).
# VM_ARCH=arm64 boots an arm64 kernel under qemu-system-aarch64 (-M virt,
# -cpu max: an Armv8 PMU with overflow interrupts) with VM_ROOT (an arm64
# root file system, tools/kernels/rootfs.sh) as its root instead of this
# machine's, and the current directory's tree over 9p at its own path
# (read-only, under an overlay). VM_ICOUNT=1 adds -icount shift=0: one
# instruction a nanosecond of virtual time, so the PMU's cycle counter
# counts instructions (the cycles ground truth of arm64hw.sh).
# One host thread runs every vCPU (tcg,thread=single): with a thread
# each, the kernel's live code patching (a tracepoint's static key as
# BPF attaches) raced qemu's translated code, and guests oopsed on a
# stray int3 (6.12 at 340 s in __schedule; 7.2 at boot).
set -euo pipefail
kdir=$(realpath "${1:?kdir}")
out=${2:?outdir}
shift 2
[[ $# -gt 0 ]] || { echo "vm.sh: no command" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[[ -s $kdir/initrd.gz && $kdir/initrd.gz -nt $here/init.sh ]] ||
	BUSYBOX=${VM_ROOT:+$VM_ROOT/bin/busybox} "$here/initramfs.sh" "$kdir" "$kdir/initrd.gz"
rm -rf "$out" && mkdir -p "$out"
out=$(realpath "$out")
{
	echo "cd $(printf '%q' "$PWD") || exit 125"
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb"
	echo "export KOUT=/run/kout"
	printf '%q ' "$@"
	echo
} >"$out/cmd"
root=/ work=()
case ${VM_ARCH:-amd64} in
amd64)
	qemu=(qemu-system-x86_64 -machine q35 -cpu max) console=ttyS0 ;;
arm64)
	# pauth-impdef: pointer authentication by a cheap implementation-
	# defined function, not QARMA5, which qemu emulates slowly and
	# Debian's arm64 kernels use in every function (the guest behaves
	# the same; only the signatures differ).
	qemu=(qemu-system-aarch64 -machine virt -cpu max,pauth-impdef=on) console=ttyAMA0
	root=$(realpath "${VM_ROOT:?VM_ROOT: the arm64 root file system}")
	work=(-fsdev "local,id=work,path=$PWD,security_model=none,readonly=on,multidevs=remap"
	      -device virtio-9p-pci,fsdev=work,mount_tag=work) ;;
*)
	echo "vm.sh: VM_ARCH=$VM_ARCH: amd64 or arm64" >&2; exit 2 ;;
esac
[[ -z ${VM_ICOUNT:-} ]] || qemu+=(-icount shift=0)
timeout -k 10 "${VM_TIMEOUT:-1200}" "${qemu[@]}" \
	-accel tcg,thread=single -smp "${VM_CPUS:-2}" -m "${VM_MEM:-3072}" \
	-nographic -nic none -no-reboot -monitor none -serial "file:$out/console" \
	-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.gz" \
	-append "console=$console panic=-1 quiet loglevel=3 oops=panic${work:+ kwork=$PWD}" \
	-fsdev local,id=hostroot,path="$root",security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=kout,path="$out",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=kout,mount_tag=kout "${work[@]}" </dev/null >/dev/null || true
[[ -n ${VM_QUIET:-} ]] || cat "$out/console"
if [[ ! -s $out/rc ]]; then
	echo "vm.sh: $(cat "$kdir/kver"): the guest ended without the command's status (see $out/console)" >&2
	exit 124
fi
exit "$(cat "$out/rc")"
