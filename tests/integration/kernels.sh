#!/usr/bin/env bash
# kernels.sh — pmubpf on the kernels fleets run, not only this one:
# Debian's own kernel packages of bullseye (5.10), bookworm (6.1),
# trixie (6.12) and sid (the newest), each booted under qemu (TCG) over
# this machine's root file system, running tests/integration/smoke.sh
# (a recording of each kind, asserted on its profile, or the one-line
# refusal where `pmubpf features` says the kernel lacks what it needs).
# Every check's line comes back as kernels.SUITE.smoke.CHECK; a kernel
# that cannot be fetched or booted is a FAIL. `make test-kernels` runs
# the full suites the same way and writes docs/kernels.md.
# KERNELS="bookworm ..." picks some.
source "$(dirname "$0")/lib.sh"
need_root matrix
for tool in qemu-system-x86_64 busybox depmod cpio; do
	if ! command -v "$tool" >/dev/null && [[ ! -x /bin/$tool && ! -x /sbin/$tool ]]; then
		fail matrix "$tool missing (tools/deps.sh installs it)"
		exit 1
	fi
done
if [[ $(uname -m) != x86_64 ]]; then
	skip matrix "the matrix boots x86-64 kernels"
	exit 0
fi
out=$(cd "$ROOT" && tools/kernels/matrix.sh smoke 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc -ne 0 ]] && ! grep -q '^FAIL ' <<<"$out"; then
	fail matrix "tools/kernels/matrix.sh exited $rc: $(tail -n 1 <<<"$out")"
fi
