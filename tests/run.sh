#!/usr/bin/env bash
# tests/run.sh [unit|integration] — run pmubpf's tests and count them.
# Every test prints PASS/FAIL/SKIP lines; this prints them, each script's
# time, then one line
#   N passed, N failed, N skipped
# and exits non-zero if anything failed (or a test binary crashed, or a
# script ran past its time limit).
#
# The integration tests need root (BPF): run as another user, this re-runs
# itself under `sudo -n` if it can, else counts a FAIL for the integration
# tests rather than letting them all skip into a green result.
# PMUBPF_TEST_TIMEOUT (seconds, default 600) bounds each test binary and
# script: one stuck wait cannot hang CI. A script that boots guests asks
# for more in its first lines ("# test-timeout: SECONDS", the larger wins).
# PMUBPF_BUILD names the build directory (build, or build-san for `make
# SANITIZE=1 test`); PMUBPF_SAN_UNIT, a directory of unit tests built
# with the sanitizers, runs those too, as san.* checks (`make test`).
set -u
cd "$(dirname "$0")/.."
which="${1:-all}"
limit=${PMUBPF_TEST_TIMEOUT:-600}

if [[ $(id -u) -ne 0 && $which != unit && -z ${PMUBPF_TEST_NO_SUDO:-} ]] &&
	command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
	echo "tests/run.sh: not root: re-running under sudo"
	exec sudo -n env PMUBPF_TEST_TIMEOUT="$limit" PMUBPF_BUILD="${PMUBPF_BUILD:-build}" \
		PMUBPF_SAN_UNIT="${PMUBPF_SAN_UNIT:-}" PMUBPF="${PMUBPF:-}" "$PWD/tests/run.sh" "$which"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_one() { # name, command...
	local name=$1; shift
	local out rc t0 t1
	t0=$(date +%s%N)
	# timeout: its own process group, killed as a whole (the script's
	# recorders and workloads too); KILL 10 s after TERM.
	# A script may ask for longer in its head: "# test-timeout: SECONDS".
	local lim=$limit own
	own=$(sed -n '1,20s/^# test-timeout: \([0-9]\+\)$/\1/p' "${@: -1}" 2>/dev/null | head -1)
	[[ -n $own && $own -gt $lim ]] && lim=$own
	out=$(timeout -k 10 "$lim" "$@" 2>&1); rc=$?
	t1=$(date +%s%N)
	printf '%s\n' "$out"
	printf '%s\n' "$out" >>"$log"
	if [[ $rc -eq 124 || $rc -eq 137 ]]; then
		echo "FAIL $name: ran past its ${lim}s limit (killed)" | tee -a "$log"
	elif [[ $rc -ne 0 ]] && ! grep -q '^FAIL ' <<<"$out"; then
		echo "FAIL $name: exited $rc without a FAIL line" | tee -a "$log"
	fi
	printf 'TIME %s %d.%01d s\n' "$name" $(((t1 - t0) / 1000000000)) $((((t1 - t0) / 100000000) % 10))
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
	if [[ $(id -u) -ne 0 ]]; then
		# Not a machine that lacks something: a run that cannot test.
		echo "FAIL integration: not root and sudo -n failed: the integration tests need BPF (run: sudo make test)" | tee -a "$log"
	else
		for t in tests/integration/*.sh; do
			[[ -f $t && $t != */lib.sh ]] || continue # lib.sh: sourced, not a test
			run_one "$(basename "$t" .sh)" bash "$t"
		done
	fi
fi

pass=$(grep -c '^PASS ' "$log"); fail=$(grep -c '^FAIL ' "$log"); skip=$(grep -c '^SKIP ' "$log")
echo
grep '^FAIL ' "$log" | sed 's/^/  /' || true
echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 && $pass -gt 0 ]]
