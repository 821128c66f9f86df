#!/bin/bash
# pairs_binaries.sh BEFORE AFTER [ROUNDS] — is pmubpf AFTER slower than
# BEFORE where both work? Rounds of cpu_work (2 threads, 20000 units)
# beside `BIN -a -F 999` for each binary, in shuffled order, recorders
# started 2.5 s early; each round prints "ROUND TOOL ELAPSED_S NS/SAMPLE"
# (the workload's elapsed time; on_sample's BPF time per run from
# kernel.bpf_stats), then the medians of the per-round AFTER/BEFORE
# ratios (pairs cancel the machine's drift). Needs root and a built
# tree (make pmubpf bench-build). docs/benchmarks.md has a run.
set -u
cd "$(dirname "$0")/../.."
before=${1:?before binary}
after=${2:?after binary}
rounds=${3:-8}
W=build/bench/cpu_work
T=${TMPDIR:-/tmp}/pairs_bin
mkdir -p "$T"
stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$stats' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
# ns per run of the perf_event program pid $1 holds.
ns_per_sample() {
	local id
	for fd in /proc/$1/fdinfo/*; do
		id=$(awk '/^prog_id:/ { print $2 }' "$fd" 2>/dev/null)
		[[ -n $id ]] || continue
		bpftool prog show id "$id" -j 2>/dev/null
		echo
	done | python3 -c '
import json, sys
best = (0, 0)
for line in sys.stdin:
    line = line.strip()
    if not line: continue
    p = json.loads(line)
    if p.get("type") == "perf_event" and p.get("run_cnt", 0) >= best[1]:
        best = (p.get("run_time_ns", 0), p.get("run_cnt", 0))
print("%.0f" % (best[0] / best[1]) if best[1] else "nan")'
}
for r in $(seq 1 "$rounds"); do
	for t in $(printf 'before\nafter\n' | shuf); do
		bin=$before
		[[ $t == after ]] && bin=$after
		"$bin" -a -F 999 -o "$T/$t.pb.gz" 2>/dev/null &
		P=$!
		sleep 2.5
		$W 2 20000 "$T/work.out" >/dev/null
		ns=$(ns_per_sample $P)
		kill -INT $P
		wait $P
		echo "$r $t $(awk '{ print $2 / 1e9 }' "$T/work.out") $ns"
	done
done | tee "$T/rounds"
python3 - "$T/rounds" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r, t, e, ns = line.split()
    rows.setdefault(r, {})[t] = (float(e), float(ns))
el = [v["after"][0] / v["before"][0] for v in rows.values() if len(v) == 2]
ns = [v["after"][1] / v["before"][1] for v in rows.values() if len(v) == 2]
print("after/before, median of %d rounds: workload elapsed %.3f (%.3f-%.3f), BPF ns/sample %.3f (%.3f-%.3f)"
      % (len(el), statistics.median(el), min(el), max(el), statistics.median(ns), min(ns), max(ns)))
PY
