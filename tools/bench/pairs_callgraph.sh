#!/bin/bash
# pairs_callgraph.sh — issue 11: does --call-graph dwarf cost more than fp?
# Rounds of syscall_work (2 threads, ~1.5 s) alone, beside `pmubpf -a -F
# 999` and beside the same with --call-graph fp, shuffled, recorders
# started 2.5 s early; prints "ROUND TOOL ELAPSED_S". Compare the rounds'
# dwarf/fp ratios (pairs cancel the machine's drift). Needs root and a
# built tree (make pmubpf bench-build). docs/benchmarks.md has a run.
set -u
cd "$(dirname "$0")/../.."
W=build/bench/syscall_work
run() { $W 2 25000 "${TMPDIR:-/tmp}/pairs_sw.out" >/dev/null; awk '{print $2/1e9}' "${TMPDIR:-/tmp}/pairs_sw.out"; }
for r in $(seq 1 10); do
  for t in $(printf 'alone\ndwarf\nfp\n' | shuf); do
    case $t in
      alone) e=$(run);;
      dwarf) ./pmubpf -a -F 999 -o "${TMPDIR:-/tmp}/pairs_d.pb.gz" 2>/dev/null & P=$!; sleep 2.5; e=$(run); kill -INT $P; wait $P;;
      fp) ./pmubpf -a -F 999 --call-graph fp -o "${TMPDIR:-/tmp}/pairs_f.pb.gz" 2>/dev/null & P=$!; sleep 2.5; e=$(run); kill -INT $P; wait $P;;
    esac
    echo "$r $t $e"
  done
done
