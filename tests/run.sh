#!/usr/bin/env bash
# tests/run.sh [unit|integration] — run pmubpf's tests and count them.
# Every test prints PASS/FAIL/SKIP lines; this prints them, then one line
#   N passed, N failed, N skipped
# and exits non-zero if anything failed (or a test binary crashed).
# PMUBPF_BUILD names the build directory (build, or build-san for `make
# SANITIZE=1 test`); PMUBPF_SAN_UNIT, a directory of unit tests built
# with the sanitizers, runs those too, as san.* checks (`make test`).
set -u
cd "$(dirname "$0")/.."
which="${1:-all}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
crashed=0

run_one() { # name, command...
	local name=$1; shift
	local out rc
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out"
	printf '%s\n' "$out" >>"$log"
	if [[ $rc -ne 0 ]] && ! grep -q '^FAIL ' <<<"$out"; then
		echo "FAIL $name: exited $rc without a FAIL line" | tee -a "$log"
	fi
}

if [[ $which == all || $which == unit ]]; then
	for t in "${PMUBPF_BUILD:-build}"/tests/test_*; do
		[[ -x $t ]] || continue
		run_one "$(basename "$t")" "$t"
	done
	if [[ -n ${PMUBPF_SAN_UNIT:-} ]]; then
		for t in "$PMUBPF_SAN_UNIT"/test_*; do
			[[ -x $t ]] || continue
			run_one "san.$(basename "$t")" \
				bash -c 'set -o pipefail; "$1" 2>&1 | sed -E "s/^(PASS|FAIL|SKIP) /\1 san./"' _ "$t"
		done
	fi
fi
if [[ $which == all || $which == integration ]]; then
	for t in tests/integration/*.sh; do
		[[ -f $t ]] || continue
		run_one "$(basename "$t" .sh)" bash "$t"
	done
fi

pass=$(grep -c '^PASS ' "$log"); fail=$(grep -c '^FAIL ' "$log"); skip=$(grep -c '^SKIP ' "$log")
echo
grep '^FAIL ' "$log" | sed 's/^/  /' || true
echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 && $pass -gt 0 ]]
