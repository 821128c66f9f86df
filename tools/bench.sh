#!/usr/bin/env bash
# tools/bench.sh [PART...] — what `make bench` runs once everything is
# built: the measurements (tools/bench/bench.py), then the document
# (tools/bench/report.py writes docs/benchmarks.md and docs/img/*.png).
#
#   tools/bench.sh                  every part: overhead cost churn write accuracy labels
#   tools/bench.sh overhead labels  some parts (make bench-overhead, ...)
#   tools/bench.sh report           only rewrite the document from the
#                                   results in build/bench/results
#
# Repetitions (defaults take about 25 minutes on a 2-CPU VM):
#   BENCH_ROUNDS=4   overhead rounds      BENCH_RUNS=10   accuracy runs
#   BENCH_FREQS=99,999,9999  BENCH_ACC_FREQS=999,4999  BENCH_COST_SECS=10
#   BENCH_WORK_SECS=1.5  BENCH_ACC_SECS=2  BENCH_QUIET_WAIT=10  BENCH_QUIET_BUDGET=120
#   BENCH_CHURN_ROUNDS=3 BENCH_CHURN_SECS=10 BENCH_CHURN_RETRIES=4  (churn: rounds,
#   recording length, repeats of disturbed runs)
# e.g. a quick look: BENCH_ROUNDS=1 BENCH_RUNS=2 make bench
#
# Needs root: BPF, perf -a, and two sysctls it sets while measuring
# (kernel.bpf_stats_enabled, kernel.perf_event_max_sample_rate), restored
# however it exits. Benchmarks never fail on speed: a non-zero exit means
# a tool could not run at all.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3

if [[ "${1:-}" == report ]]; then
	exec $PY tools/bench/report.py
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "pmubpf bench: needs root (BPF, perf -a, sysctls): run 'sudo make bench'" >&2
	exit 1
fi
for tool in perf bpftrace bpftool gnuplot go; do
	command -v $tool >/dev/null || { echo "pmubpf bench: $tool not found: run 'sudo tools/deps.sh --bench'" >&2; exit 1; }
done

max_rate=$(sysctl -n kernel.perf_event_max_sample_rate)
bpf_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.perf_event_max_sample_rate=$max_rate kernel.bpf_stats_enabled=$bpf_stats' EXIT
export BENCH_SAVED_MAX_RATE=$max_rate BENCH_SAVED_BPF_STATS=$bpf_stats

start=$SECONDS
$PY tools/bench/bench.py "$@"
$PY tools/bench/report.py
echo "bench: done in $((SECONDS - start)) s: docs/benchmarks.md"
