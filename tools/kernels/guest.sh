#!/usr/bin/env bash
# tools/kernels/guest.sh SUITE... — run inside a kernel of the matrix
# (tools/kernels/vm.sh, from the repository root): `pmubpf features`
# into $KOUT/features, then each integration suite
# (tests/integration/SUITE.sh, or tests/SUITE.sh), its PASS/FAIL/SKIP lines into
# $KOUT/results and its time into $KOUT/times. The suites run as
# tests/run.sh runs them, each under a time limit.
set -u
: "${KOUT:?run by tools/kernels/vm.sh}"
export PMUBPF_BUILD=${PMUBPF_BUILD:-build}
export PMUBPF=${PMUBPF:-$PWD/pmubpf}
limit=${PMUBPF_TEST_TIMEOUT:-600}
uname -r >"$KOUT/kver"
"$PMUBPF" features >"$KOUT/features" 2>"$KOUT/features.err"
: >"$KOUT/results"
: >"$KOUT/times"
for suite in "$@"; do
	t0=$(date +%s)
	f=tests/integration/$suite.sh
	[[ -f $f ]] || f=tests/$suite.sh # arm64/hwevents: tests/arm64/hwevents.sh
	out=$(timeout -k 10 "$limit" bash "$f" 2>&1)
	rc=$?
	printf '%s\n' "$out" >>"$KOUT/log"
	grep -E '^(PASS|FAIL|SKIP) ' <<<"$out" >>"$KOUT/results"
	if [[ $rc -eq 124 || $rc -eq 137 ]]; then
		echo "FAIL $suite: ran past its ${limit}s limit (killed)" >>"$KOUT/results"
	elif [[ $rc -ne 0 ]] && ! grep -q '^FAIL ' <<<"$out"; then
		echo "FAIL $suite: exited $rc without a FAIL line" >>"$KOUT/results"
	fi
	echo "$suite $(($(date +%s) - t0))" >>"$KOUT/times"
done
