#!/usr/bin/env bash
# tools/kernels/matrix.sh [--doc FILE] SUITE... — pmubpf's integration
# suites (tests/integration/SUITE.sh) on each kernel of the matrix:
# Debian's own kernel packages of KERNELS (default: bullseye 5.10,
# bookworm 6.1, trixie 6.12, sid: the newest), each fetched
# (tools/kernels/fetch.sh), booted under qemu (tools/kernels/vm.sh) and
# running the suites there (tools/kernels/guest.sh). Prints every
# check's line as kernels.DEBIAN_SUITE.CHECK, each kernel's time, and
# exits 1 if any check failed or a kernel did not come back. With --doc,
# writes FILE (docs/kernels.md): each kernel's packages and results, and
# the table of features (`pmubpf features`) against kernels, this
# machine's own kernel included.
# Results stay in ${PMUBPF_BUILD:-build}/kernels/out/DEBIAN_SUITE.
set -u
cd "$(dirname "$0")/../.."
doc=""
if [[ ${1:-} == --doc ]]; then
	doc=$2
	shift 2
fi
[[ $# -gt 0 ]] || { echo "usage: tools/kernels/matrix.sh [--doc FILE] SUITE..." >&2; exit 2; }
build=${PMUBPF_BUILD:-build}
kdir=$build/kernels
mkdir -p "$kdir/out" # a fresh clone has none: the redirects below need it
failed=0
outs=()
for k in ${KERNELS:-bullseye bookworm trixie sid}; do
	t0=$(date +%s)
	if ! tools/kernels/fetch.sh "$k" "$kdir/$k" 2>"$kdir/$k.fetch.err"; then
		echo "FAIL kernels.$k: cannot fetch Debian's $k kernel: $(tail -n 1 "$kdir/$k.fetch.err")"
		failed=1
		continue
	fi
	out=$kdir/out/$k
	# Each suite may run to its 600 s limit (guest.sh), and boot besides.
	# A guest that died before its command began (no kver written: seen
	# once, sid's 7.2 oopsing at 1.3 s in set_next_task_fair, an int3
	# of code patching under qemu's multi-threaded TCG) boots once more.
	for try in 1 2; do
		VM_QUIET=1 VM_TIMEOUT=${VM_TIMEOUT:-$((($# + 1) * 600))} \
			tools/kernels/vm.sh "$kdir/$k" "$out" bash tools/kernels/guest.sh "$@" 2>"$kdir/$k.vm.err"
		rc=$?
		[[ $rc -ne 124 || -s $out/kver ]] && break
		echo "kernels.$k: the guest died before its command (try $try): $(grep -a -m1 -E 'Oops|panic' "$out/console")" >&2
	done
	outs+=("$k=$out")
	if [[ ! -s $out/results ]]; then
		echo "FAIL kernels.$k: $(cat "$kdir/$k/kver") gave no results (vm.sh exit $rc; $out/console): $(tail -n 1 "$kdir/$k.vm.err")"
		failed=1
		continue
	fi
	sed -E "s/^(PASS|FAIL|SKIP) /\1 kernels.$k./" "$out/results"
	grep -q '^FAIL ' "$out/results" && failed=1
	[[ $rc -eq 0 ]] || { echo "FAIL kernels.$k: the guest's run ended with $rc ($out/console)"; failed=1; }
	echo "$(($(date +%s) - t0))" >"$out/seconds"
	echo "TIME kernels.$k $(cat "$kdir/$k/kver") $(cat "$out/seconds") s"
done
if [[ -n $doc ]]; then
	here=$kdir/out/running
	mkdir -p "$here"
	uname -r >"$here/kver"
	"${PMUBPF:-./pmubpf}" features >"$here/features" 2>/dev/null
	python3 tools/kernels/report.py "$doc" "$*" "${outs[@]}" "running=$here" || failed=1
fi
exit $failed
