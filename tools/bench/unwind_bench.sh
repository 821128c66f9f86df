#!/usr/bin/env bash
# tools/bench/unwind_bench.sh — `make bench-unwind`: --call-graph fp vs
# dwarf. Builds the unwind_deep workload with and without frame pointers
# (build/bench/unwind/), enables kernel.bpf_stats_enabled while measuring
# (restored however it exits), and runs tools/bench/unwind_bench.py, which
# writes build/bench/unwind/results.json and the "## Unwinding" section of
# docs/benchmarks.md (nothing else in that file).
#   UNWIND_BENCH_SECS=4 UNWIND_BENCH_REPS=3   (about 6 minutes on 2 CPUs)
#   tools/bench/unwind_bench.sh report         rewrite the section only
# Needs root (BPF, sysctl). Never fails on speed.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ "${1:-}" == report ]]; then
	exec python3 tools/bench/unwind_bench.py report
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "unwind_bench: needs root (BPF, sysctl): run 'sudo make bench-unwind'" >&2
	exit 1
fi
command -v bpftool >/dev/null || { echo "unwind_bench: bpftool not found" >&2; exit 1; }
out=build/bench/unwind
mkdir -p $out
CLANG=${CLANG:-clang}
$CLANG -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -Wall -Wextra -Werror \
	tools/bench/unwind_deep.c -o $out/deep_fp
$CLANG -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror tools/bench/unwind_deep.c -o $out/deep_nofp

stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$stats' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
python3 tools/bench/unwind_bench.py
