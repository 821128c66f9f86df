#!/bin/bash
# churn_steady.sh — issue 11: what a recorder costs the churn load in its
# steady state (no start-up, no write at the end).
#
#   tools/bench/churn_steady.sh ROUNDS TOOL...
#
# One churn_work load (2 workers) runs throughout; each round runs every
# TOOL once, shuffled, and measures the load over W seconds (default 4)
# starting 1 s after the tool started. TOOL: alone | perf (perf record
# -a -g at 999 Hz) | floor (tools/bench/floor 999: the timer
# interrupts alone) | perfdummy (perf record -e dummy -a: the kernel's
# mmap/comm/fork reports alone) | pm[:ARG,ARG...] (pmubpf -a -F 999 with
# those arguments). Prints "ROUND TOOL PROCESSES/S LOAD_CPU_MS/PROCESS",
# the latter from the workers' reaped children (task CPU time, which
# excludes the host's steal). Compare rounds' ratios: pairs cancel the
# machine's drift. PIN=1: one worker on the last CPU and the tools on
# CPU 0, so that the load's cost is what the sampling does inside it,
# not the tool's competition for its CPU. Needs root and a built tree
# (make pmubpf bench-build); docs/benchmarks.md has runs.
set -u
cd "$(dirname "$0")/../.."
R=${1:-3}
shift
W=${W:-4}
T=${TMPDIR:-/tmp}
P=$T/churn_steady.progress
rm -f "$P"
ON=()
if [[ ${PIN:-0} == 1 ]]; then
	ON=(taskset -c 0)
	taskset -c $(($(nproc) - 1)) build/bench/churn_work 100000 1 "$P" >/dev/null 2>&1 &
else
	build/bench/churn_work 100000 2 "$P" >/dev/null 2>&1 &
fi
L=$!
trap 'kill $L 2>/dev/null' EXIT
sleep 2

# "MONOTONIC_S PROCESSES CPU_TICKS" now.
snap() {
	local c=0 k t n
	t=$(python3 -c 'import time; print("%.3f" % time.monotonic())')
	n=$(tail -n 1 "$P" | awk '{print $4}')
	for k in $L $(cat /proc/$L/task/*/children); do
		c=$((c + $(awk '{print $14 + $15 + $16 + $17}' /proc/$k/stat)))
	done
	echo "$t $n $c"
}

for ((r = 0; r < R; r++)); do
	for tool in $(printf '%s\n' "$@" | shuf); do
		pid=
		case $tool in
		alone) ;;
		perf) "${ON[@]}" perf record -q -e cpu-clock -F 999 -a -g -o "$T/churn_steady.perf" -- sleep $((W + 2)) >/dev/null 2>&1 & pid=$! ;;
		floor) "${ON[@]}" timeout -s INT $((W + 2)) build/bench/floor 999 >/dev/null 2>&1 & pid=$! ;;
		perfdummy) "${ON[@]}" perf record -q -e dummy -a -o "$T/churn_steady.perf" -- sleep $((W + 2)) >/dev/null 2>&1 & pid=$! ;;
		pm*)
			args=${tool#pm}
			args=${args#:}
			"${ON[@]}" ./pmubpf -a -F 999 -d $((W + 2)) -o "$T/churn_steady.pb.gz" ${args//,/ } 2>/dev/null & pid=$!
			;;
		*) echo "churn_steady.sh: unknown tool '$tool'" >&2; exit 2 ;;
		esac
		sleep 1
		a=$(snap)
		sleep "$W"
		b=$(snap)
		# A tool that ended before the window did (a bad argument, a
		# failed start) would be measured as the load alone: said, and
		# left out.
		if [[ -n $pid ]] && ! kill -0 $pid 2>/dev/null; then
			wait $pid
			echo "churn_steady.sh: round $r: $tool exited (status $?) before its window ended: left out" >&2
			sleep 1
			continue
		fi
		if [[ -n $pid ]]; then wait $pid; else sleep 1; fi
		echo "$r $tool $a $b" | awk '{ dt = $6 - $3; dn = $7 - $4; printf "%s %s %.0f %.3f\n", $1, $2, dn / dt, ($8 - $5) * 10 / dn }'
		sleep 1
	done
done
