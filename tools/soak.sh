#!/usr/bin/env bash
# tools/soak.sh — pmubpf always-on under process churn, measured.
#
#   tools/soak.sh MINUTES EVERY OUTDIR
#
# Runs `pmubpf -a --every EVERY --keep 3 -v` beside a process-churn load
# (tools/bench/churn_work, one worker fork+exec'ing /bin/true and
# /usr/bin/env true without pause, plus a CPU-bound demo) for MINUTES, and
# every EVERY seconds (as each window is written) records to
# OUTDIR/soak.csv:
#   t_s rss_kb bpf_kb windows samples lost tracked forgotten anon_kb file_kb
#   objects evicted heap_kb heap_free_kb
# rss_kb: pmubpf's least VmRSS over the interval (rss_max_kb: its most), the sum of anon_kb (RssAnon: its heap and
# private memory) and file_kb (RssFile + RssShmem: file pages it maps,
# such as the ELF objects it reads symbols from, which the kernel can
# reclaim and which grow with every new binary on the machine); bpf_kb:
# the memlock of every BPF map it holds
# (its fds' fdinfo); samples/lost: summed over the windows written so far
# (lost: every "lost: N samples" note, i.e. samples lost whole); tracked/
# forgotten: process records held / freed, objects/evicted: ELF objects
# held / freed by the symbol cache, heap_kb/heap_free_kb: malloc's bytes in
# use and free in its arenas (mallinfo2; all from its -v window line). Prints a
# summary line with the slopes of RSS and of anon_kb after warm-up (a
# least-squares fit over the second half), in KiB per 10 minutes. Exit 0;
# the caller judges.
#
# SOAK_LOAD=labels: the load is three programs that label each request
# with a new set carrying a trace_id, each on its own writer: our header
# (label_churn, {endpoint, req, trace_id}, a set every 2 spins of ~5 us),
# OpenTelemetry's thread context (otel_work requests, a span every 10 us
# of CPU) and Go's pprof.Do (golabels_work requests, 10 us of work),
# about 40000 sets a second each on a 2-CPU machine, without the demo.
# Each row adds, per program from the newest profile, its samples, those
# labelled with its sets (a trace_id), those labelled [too many sets] and
# the highest request number seen (lc_ label_churn, ot_ otel_work, go_
# golabels_work: _samples _labelled _too_many _req); the summary, per
# program, their totals, the least labelled share of a window and the
# sets made a second (the last request number over the time).
# SOAK_FREQ: pmubpf's -F (its default if unset).
set -u
cd "$(dirname "$0")/.."
MIN=${1:?minutes}; EVERY=${2:?seconds}; OUT=${3:?outdir}
mkdir -p "$OUT/profiles"
rm -f "$OUT"/profiles/* "$OUT/soak.csv" "$OUT/pmubpf.err"
secs=$(python3 -c "print(int(float('$MIN') * 60))")

LOAD=${SOAK_LOAD:-churn}
load=()
if [[ $LOAD == labels ]]; then
	build/tests/label_churn "$((secs + 30))" 2 >/dev/null 2>&1 &
	load+=($!)
	OTEL_WORK_BURN_NS=10000 build/tests/otel_work "$((secs + 30))" requests >/dev/null 2>&1 &
	load+=($!)
	build/tests/golabels_work requests "$((secs + 30))" 10 >/dev/null 2>&1 &
	load+=($!)
else
	build/bench/churn_work "$((secs + 30))" 1 "$OUT/churn.out" >/dev/null 2>&1 &
	load+=($!)
	build/tests/demo "$((secs + 30))" >/dev/null 2>&1 &
	load+=($!)
fi
./pmubpf -a ${SOAK_FREQ:+-F "$SOAK_FREQ"} --every "$EVERY" --keep 3 -v -d "$secs" -o "$OUT/profiles/" \
	2>"$OUT/pmubpf.err" >/dev/null &
pm=$!
t0=$(date +%s)
WRITERS="label_churn otel_work golabels_work"
echo "t_s rss_kb bpf_kb windows samples lost tracked forgotten anon_kb file_kb objects evicted heap_kb heap_free_kb rss_max_kb" \
	"$(for p in lc ot go; do printf '%s ' ${p}_samples ${p}_labelled ${p}_too_many ${p}_req; done)" >"$OUT/soak.csv"
# Per labelling program, in the newest profile: its samples, those
# labelled with its sets (a trace_id), those labelled [too many sets],
# the highest request number (req, or OTel's span id); zeros under the
# churn load.
labels_of_newest() {
	local f
	f=$(ls -t "$OUT"/profiles/*.pb.gz 2>/dev/null | head -1)
	if [[ $LOAD != labels || -z $f ]]; then echo "0 0 0 0 0 0 0 0 0 0 0 0"; return; fi
	build/tests/pprof_dump "$f" 2>/dev/null | WRITERS=$WRITERS python3 -c '
import json, os, sys
writers = os.environ["WRITERS"].split()
c = {w: [0, 0, 0, 0] for w in writers}
try:
    d = json.load(sys.stdin)
except ValueError:
    d = {"samples": []}
for s in d["samples"]:
    lb = s["labels"]
    w = c.get(lb.get("comm"))
    if w is None:
        continue
    v = s["values"][0]
    w[0] += v
    w[1] += v * ("trace_id" in lb)
    w[2] += v * (lb.get("pmubpf_labels") == "[too many sets]")
    try:
        r = int(lb["req"]) if "req" in lb else int(lb.get("span_id", "0"), 16)
    except ValueError:
        r = 0
    w[3] = max(w[3], r)
print(" ".join(str(x) for w in writers for x in c[w]))'
}
# RSS is read every second and each row keeps the interval's least (what
# pmubpf holds between profiles: building one peaks far above it, then
# malloc_trim gives that back) and its most: a single read every EVERY
# seconds lands at a random point of a build (a run read 84 and 248 MiB
# a window apart).
rss=0 anon=0 file=0 rss_max=0
sample_rss() {
	local r a f
	read -r r a f < <(awk '/^VmRSS:/ {r=$2} /^RssAnon:/ {a=$2} /^RssFile:|^RssShmem:/ {f+=$2}
		END {if (r) print r, a, f+0}' /proc/$pm/status 2>/dev/null)
	[[ -n $r ]] || return 1
	if ((rss == 0 || r < rss)); then rss=$r anon=$a file=$f; fi
	((r > rss_max)) && rss_max=$r
	return 0
}
measure() {
	local bpf w s l tr fo ob ev hu hf
	((rss > 0)) || return 1
	bpf=$(grep -h '^memlock:\|^map_id:' /proc/$pm/fdinfo/* 2>/dev/null | awk '
		/^memlock:/ {m=$2} /^map_id:/ {if (!($2 in seen)) {seen[$2]=1; t+=m}} END {print int(t/1024)}')
	w=$(grep -c -- '-> .*profiles/pmubpf\.' "$OUT/pmubpf.err")
	s=$(sed -nE 's/^pmubpf: [^:]+: ([0-9]+) samples \(.*-> .*/\1/p' "$OUT/pmubpf.err" | awk '{t+=$1} END {print t+0}')
	l=$(sed -nE 's/^pmubpf: [^:]+: lost: ([0-9]+) samples.*/\1/p' "$OUT/pmubpf.err" | awk '{t+=$1} END {print t+0}')
	read -r tr fo ob ev hu hf < <(sed -nE 's/^pmubpf: window: ([0-9]+) processes tracked, ([0-9]+) forgotten; symbol cache: ([0-9]+) objects \(([0-9]+) evicted\).*heap: ([0-9]+) KiB in use, ([0-9]+) KiB free$/\1 \2 \3 \4 \5 \6/p' "$OUT/pmubpf.err" | tail -1)
	echo "$(( $(date +%s) - t0 )) $rss $bpf $w $s $l ${tr:-0} ${fo:-0} ${anon:-0} ${file:-0} ${ob:-0} ${ev:-0} ${hu:-0} ${hf:-0} $rss_max $(labels_of_newest)" >>"$OUT/soak.csv"
	rss=0 anon=0 file=0 rss_max=0
}
next=$(( $(date +%s) + EVERY ))
while kill -0 "$pm" 2>/dev/null; do
	sleep 1
	sample_rss || break
	if (( $(date +%s) >= next )); then
		measure || break
		next=$((next + EVERY))
	fi
done
wait "$pm"; rc=$?
kill "${load[@]}" 2>/dev/null; wait "${load[@]}" 2>/dev/null
python3 - "$OUT/soak.csv" "$rc" $WRITERS <<'PY'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]).read().splitlines()[1:]]
half = rows[len(rows) // 2:]
def slope(col):
    n = len(half)
    if n < 2:
        return float("nan")
    mt = sum(r[0] for r in half) / n; mr = sum(r[col] for r in half) / n
    var = sum((r[0] - mt) ** 2 for r in half)
    return sum((r[0] - mt) * (r[col] - mr) for r in half) / var if var else 0.0
last = rows[-1] if rows else [0] * 10
print("soak: rc %s, %d measurements, windows %d, samples %d, lost %d, RSS %d KiB at the end "
      "(peak %d; anon %d, file %d), BPF maps %d KiB, processes tracked %d, forgotten %d, "
      "slopes after warm-up: RSS %.0f, anon %.0f KiB per 10 min"
      % (sys.argv[2], len(rows), last[3], last[4], last[5], last[1], max(r[14] if len(r) > 14 else r[1] for r in rows) if rows else 0,
         last[8], last[9], last[2], last[6], last[7], slope(1) * 600, slope(8) * 600))
# One row per profile: those where a new window was written.
for k, name in enumerate(sys.argv[3:]):
    c = 15 + 4 * k
    lc = [r for i, r in enumerate(rows) if len(r) > c + 3 and r[c] > 0 and (i == 0 or r[3] != rows[i - 1][3])]
    if lc:
        print("soak: labels: %s: %d windows with its samples, %d samples, %d labelled with its sets, "
              "%d [too many sets]; least labelled share of a window %.1f%%; %.0f sets a second"
              % (name, len(lc), sum(r[c] for r in lc), sum(r[c + 1] for r in lc), sum(r[c + 2] for r in lc),
                 100 * min(r[c + 1] / r[c] for r in lc), lc[-1][c + 3] / lc[-1][0]))
PY
