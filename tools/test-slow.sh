#!/usr/bin/env bash
# tools/test-slow.sh — `make test`'s runner on a slow, busy machine: the
# tests must not assume the speed of the one they were written on
# (issue 36). tests/run.sh runs with the environment the Makefile's
# `test` target gives it, held to one CPU's worth of time, beside
# stress-ng --cpu N (N = nproc, outside the limit) for the whole run;
# the hog is stopped at the end and this exits with the runner's status.
#
#   tools/test-slow.sh [ARGS...]        tests/run.sh ARGS (all, unit, integration)
#   tools/test-slow.sh -- CMD [ARGS...] CMD instead of tests/run.sh (to try this)
#
# The limit, the first of these this machine has:
#  - systemd as PID 1: systemd-run --scope -p CPUQuota=100%;
#  - cgroup v2 with the cpu controller: a cgroup of its own, cpu.max
#    "100000 100000";
#  - cgroup v1's cpu controller (cgroup v2 without it, as on a hybrid
#    hierarchy): cpu.cfs_quota_us 100000 per cpu.cfs_period_us 100000.
# Runs as root (the cgroup; the integration tests need it anyway): as
# another user it re-runs itself under `sudo -n`. Expects a build (`make
# test-build san-unit-build`, as `make test` does first).
set -u
cd "$(dirname "$0")/.."

if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		exec sudo -n env PMUBPF_TEST_TIMEOUT="${PMUBPF_TEST_TIMEOUT:-}" "$PWD/tools/test-slow.sh" "$@"
	fi
	echo "tools/test-slow.sh: needs root (a cgroup, and the tests' BPF): run it with sudo" >&2
	exit 1
fi
if ! command -v stress-ng >/dev/null; then
	echo "tools/test-slow.sh: stress-ng is not installed (apt-get install stress-ng)" >&2
	exit 1
fi

# What runs under the limit: the Makefile's TEST_ENV and SAN_UNIT, and
# each script's time limit (tests/run.sh: a hung script's bound, 600 s)
# tripled unless given: held like this a script takes two to three
# times as long (bounds.sh: 105 s alone, 160 s beside stress-ng).
if [[ ${1:-} == -- ]]; then
	shift
	cmd=("$@")
else
	cmd=(env PMUBPF_BUILD=build PMUBPF="$PWD/pmubpf" PMUBPF_SAN_UNIT=build-san/tests
		PMUBPF_TEST_TIMEOUT="${PMUBPF_TEST_TIMEOUT:-1800}" tests/run.sh "$@")
fi
[[ ${#cmd[@]} -gt 0 ]] || { echo "tools/test-slow.sh: -- needs a command" >&2; exit 2; }

cg=         # the cgroup directory made here (removed at the end)
cgprocs=    # the file a process is moved into it through
hog=        # stress-ng's pid
cleanup() {
	if [[ -n $hog ]]; then
		kill -TERM "$hog" 2>/dev/null # stress-ng stops its workers
		wait "$hog" 2>/dev/null
	fi
	# The cgroup goes once empty (the command's leftovers, if any, are
	# killed by their pids: the hog is outside it).
	if [[ -n $cg && -d $cg ]]; then
		local pid
		for pid in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
		for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The way to hold the command to one CPU: sets how=systemd, or cg and
# cgprocs to a cgroup made here with its quota set.
how=
if [[ -d /run/systemd/system ]] && command -v systemd-run >/dev/null &&
	systemd-run --scope --quiet --collect -p CPUQuota=100% true 2>/dev/null; then
	how=systemd
else
	v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
	if [[ -n $v2 ]] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
		# The root's children get the cpu controller; the root itself
		# may hold processes (no internal-process rule there).
		grep -qw cpu "$v2/cgroup.subtree_control" || echo +cpu >"$v2/cgroup.subtree_control" || exit 1
		cg=$v2/pmubpf-test-slow.$$
		mkdir "$cg" && echo "100000 100000" >"$cg/cpu.max" || exit 1
		cgprocs=$cg/cgroup.procs
		how="cgroup v2 ($cg, cpu.max $(cat "$cg/cpu.max"))"
	elif [[ -n $v1 ]]; then
		cg=$v1/pmubpf-test-slow.$$
		mkdir "$cg" && echo 100000 >"$cg/cpu.cfs_period_us" && echo 100000 >"$cg/cpu.cfs_quota_us" || exit 1
		cgprocs=$cg/cgroup.procs
		how="cgroup v1 ($cg, cpu.cfs_quota_us $(cat "$cg/cpu.cfs_quota_us") per $(cat "$cg/cpu.cfs_period_us"))"
	else
		echo "tools/test-slow.sh: no way to limit CPU time here (no systemd, no cgroup cpu controller)" >&2
		exit 1
	fi
fi

n=$(nproc)
stress-ng --cpu "$n" --quiet &
hog=$!
echo "tools/test-slow.sh: ${cmd[*]}: held to one CPU's time by ${how}, beside stress-ng --cpu $n (pid $hog)"
t0=$(date +%s)
if [[ $how == systemd ]]; then
	systemd-run --scope --quiet --collect -p CPUQuota=100% -- "${cmd[@]}"
	rc=$?
else
	# A child moves itself into the cgroup, then becomes the command:
	# everything it starts is held there, the hog is not.
	(echo "$BASHPID" >"$cgprocs" && exec "${cmd[@]}")
	rc=$?
fi
if ! kill -0 "$hog" 2>/dev/null; then
	echo "tools/test-slow.sh: stress-ng ended before the run did: the run was not all under load" >&2
	hog=
	((rc == 0)) && rc=1
fi
echo "tools/test-slow.sh: exit $rc after $(($(date +%s) - t0)) s"
exit "$rc"
