#!/usr/bin/env bash
# arm64.sh — pmubpf on arm64: the aarch64 build (`make arm64`,
# build-arm64/) on Debian's arm64 6.1 kernel under qemu-system-aarch64,
# with the arm64 root file system of tools/kernels/rootfs.sh
# (tools/kernels/arm64.sh): hardware events against exact ground truth on
# qemu's emulated Armv8 PMU (tests/arm64/hwevents.sh, under -icount), and
# the smoke suite. Every check's line comes back as arm64.KERNEL.SUITE.CHECK.
# `make test-arm64` runs more suites on 6.1 and 6.12. On an arm64 machine
# the suites run natively instead: nothing to emulate.
# test-timeout: 1500
source "$(dirname "$0")/lib.sh"
need_root arm64
if [[ $(uname -m) == aarch64 ]]; then
	skip arm64 "this machine is arm64: every suite runs here natively"
	exit 0
fi
for tool in qemu-system-aarch64 depmod cpio; do
	if ! command -v "$tool" >/dev/null && [[ ! -x /sbin/$tool ]]; then
		fail arm64 "$tool missing (tools/deps.sh installs it)"
		exit 1
	fi
done
out=$(cd "$ROOT" && KERNELS=${ARM64_KERNELS:-bookworm} tools/kernels/arm64.sh smoke 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc -ne 0 ]] && ! grep -q '^FAIL ' <<<"$out"; then
	fail arm64 "tools/kernels/arm64.sh exited $rc: $(tail -n 1 <<<"$out")"
fi
