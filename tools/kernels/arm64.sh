#!/usr/bin/env bash
# tools/kernels/arm64.sh [SUITE...] — pmubpf built for aarch64 (`make
# arm64`: build-arm64/) on Debian's arm64 kernels of KERNELS (default:
# bookworm 6.1, trixie 6.12), each booted under qemu-system-aarch64 (TCG,
# -M virt -cpu max: an emulated Armv8 PMU) with the arm64 root file system
# of tools/kernels/rootfs.sh, twice:
#   - one CPU under -icount shift=0, where the PMU's cycle counter counts
#     instructions exactly: tests/arm64/hwevents.sh, hardware events
#     against ground truth (with two CPUs the virtual clock, and so each
#     CPU's cycle counter, advances with the other CPU's instructions too);
#   - two CPUs at qemu's own pace: the integration SUITEs (default
#     ARM64_SUITES below), as tools/kernels/matrix.sh runs them on x86-64.
# Prints every check as arm64.DEBIAN_SUITE.CHECK and each kernel's time;
# exits 1 if a check failed or a kernel did not come back. Results stay
# in build-arm64/kernels/out/.
set -u
cd "$(dirname "$0")/../.."
root=${ARM64_ROOT:-build/arm64/root}
build=build-arm64
kdir=$build/kernels
mkdir -p "$kdir/out"
[[ $# -gt 0 ]] || set -- ${ARM64_SUITES:-smoke labels arm64/golabels targets lifecycle}
[[ -x $build/pmubpf && -s $root/.pmubpf-packages ]] ||
	{ echo "FAIL arm64: no arm64 build (make arm64 makes $build/ and $root)"; exit 1; }
failed=0
# Each suite's limit in the guest: aarch64 under TCG on x86-64 runs the
# suites two to three times slower than x86-64 guests (labels: past 600 s).
limit=${ARM64_SUITE_TIMEOUT:-1500}
# boot KERNEL TAG ENV... -- SUITE...: one boot, its results as arm64.KERNEL.
boot() {
	local k=$1 tag=$2 out rc
	shift 2
	local envs=()
	while [[ $1 != -- ]]; do envs+=("$1"); shift; done
	shift
	out=$kdir/out/$k.$tag
	env "${envs[@]}" VM_ARCH=arm64 VM_ROOT="$root" VM_QUIET=1 VM_TIMEOUT=$((($# + 1) * limit)) \
		tools/kernels/vm.sh "$kdir/$k" "$out" \
		env PMUBPF_BUILD=$build PMUBPF="$PWD/$build/pmubpf" PMUBPF_TEST_VERBOSE="${PMUBPF_TEST_VERBOSE:-}" \
		PMUBPF_TEST_TIMEOUT=$limit \
		"$([[ $tag == icount ]] && echo PMUBPF_ICOUNT=1 || echo PMUBPF_ICOUNT=)" \
		bash tools/kernels/guest.sh "$@" 2>"$kdir/$k.$tag.err"
	rc=$?
	if [[ ! -s $out/results ]]; then
		echo "FAIL arm64.$k.$tag: $(cat "$kdir/$k/kver") gave no results (vm.sh exit $rc; $out/console): $(tail -n 1 "$kdir/$k.$tag.err")"
		failed=1
		return
	fi
	sed -E "s/^(PASS|FAIL|SKIP) /\1 arm64.$k./" "$out/results"
	grep -q '^FAIL ' "$out/results" && failed=1
	[[ $rc -eq 0 ]] || { echo "FAIL arm64.$k.$tag: the guest's run ended with $rc ($out/console)"; failed=1; }
}
for k in ${KERNELS:-bookworm trixie}; do
	t0=$(date +%s)
	if ! ARCH=arm64 tools/kernels/fetch.sh "$k" "$kdir/$k" 2>"$kdir/$k.fetch.err"; then
		echo "FAIL arm64.$k: cannot fetch Debian's $k arm64 kernel: $(tail -n 1 "$kdir/$k.fetch.err")"
		failed=1
		continue
	fi
	boot "$k" icount VM_CPUS=1 VM_ICOUNT=1 -- arm64/hwevents
	[[ ${ARM64_ICOUNT_ONLY:-} ]] || boot "$k" suites VM_CPUS=2 -- "$@"
	echo "TIME arm64.$k $(cat "$kdir/$k/kver") $(($(date +%s) - t0)) s"
done
exit $failed
