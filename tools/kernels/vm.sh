#!/usr/bin/env bash
# tools/kernels/vm.sh KDIR OUTDIR COMMAND... — boot KDIR's kernel
# (tools/kernels/fetch.sh) under qemu (TCG: no hardware virtualisation
# is assumed) with this machine's root file system read-only over 9p,
# run COMMAND with bash inside it from the current directory, and exit
# with its status. OUTDIR (made empty) is the guest's /run/kout,
# writable: the command's results come back there; its output is
# OUTDIR/console (kernel messages and the command's output), also
# printed. VM_MEM (MiB, 3072), VM_CPUS (2), VM_TIMEOUT (s, 1200).
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
	"$here/initramfs.sh" "$kdir" "$kdir/initrd.gz"
rm -rf "$out" && mkdir -p "$out"
out=$(realpath "$out")
{
	echo "cd $(printf '%q' "$PWD") || exit 125"
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb"
	echo "export KOUT=/run/kout"
	printf '%q ' "$@"
	echo
} >"$out/cmd"
timeout -k 10 "${VM_TIMEOUT:-1200}" qemu-system-x86_64 \
	-machine q35 -accel tcg,thread=single -cpu max -smp "${VM_CPUS:-2}" -m "${VM_MEM:-3072}" \
	-nographic -nic none -no-reboot -monitor none -serial "file:$out/console" \
	-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=3 oops=panic" \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=kout,path="$out",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=kout,mount_tag=kout </dev/null >/dev/null || true
[[ -n ${VM_QUIET:-} ]] || cat "$out/console"
if [[ ! -s $out/rc ]]; then
	echo "vm.sh: $(cat "$kdir/kver"): the guest ended without the command's status (see $out/console)" >&2
	exit 124
fi
exit "$(cat "$out/rc")"
