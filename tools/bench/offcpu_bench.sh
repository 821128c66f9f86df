#!/usr/bin/env bash
# offcpu_bench.sh — `make bench-offcpu` (also run by `make bench`): what
# -e off-cpu costs under a context-switch storm. `perf bench sched pipe`
# (two tasks ping-ponging over pipes: every round trip is a handful of
# context switches) runs bare, under `pmubpf -a -e off-cpu` (dwarf and fp
# call graphs) and under libbpf-tools' offcputime (bcc's tool in C, the
# reference), each round in turn. Per tool: the benchmark's median time
# and slowdown against bare, the tracer's own CPU time during the
# benchmark (userspace: /proc/PID/stat), and its BPF programs' run time
# per run (kernel.bpf_stats_enabled, the programs' fdinfo), which the switching tasks
# pay. Writes the "## Off-CPU time" section of docs/benchmarks.md (only
# that section). Benchmarks never fail on speed.
#
#   BENCH_OFFCPU_LOOPS=200000  BENCH_OFFCPU_ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/../.."
LOOPS=${BENCH_OFFCPU_LOOPS:-200000}
ROUNDS=${BENCH_OFFCPU_ROUNDS:-3}
DOC=docs/benchmarks.md
PMUBPF=$PWD/pmubpf
OFFCPUTIME=/usr/sbin/offcputime

if [[ $(id -u) -ne 0 ]]; then
	echo "offcpu_bench: needs root (BPF): run 'sudo make bench-offcpu'" >&2
	exit 1
fi
for t in perf "$OFFCPUTIME" "$PMUBPF"; do
	command -v "$t" >/dev/null || { echo "offcpu_bench: $t not found: run 'sudo tools/deps.sh --bench' and make" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/pmubpf-offcpu-bench.XXXXXX)
bpf_stats=$(sysctl -n kernel.bpf_stats_enabled)
TOOL_PID=
cleanup() {
	[[ -n $TOOL_PID ]] && kill -INT "$TOOL_PID" 2>/dev/null && wait "$TOOL_PID" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$bpf_stats"
	rm -rf "$TMP"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# wait_for FILE REGEX PID: until the tool says it is tracing.
wait_for() {
	for ((i = 0; i < 400; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { echo "offcpu_bench: tool died: $(tail -n2 "$1")" >&2; return 1; }
		sleep 0.05
	done
	echo "offcpu_bench: tool never started: $(tail -n2 "$1")" >&2
	return 1
}

# BPF run time and runs of PID's programs so far: "NS RUNS", from the
# fdinfo of its program fds (bpftool here cannot tell whose they are).
bpf_runs() {
	python3 - "$1" <<'EOF2'
import glob, sys
seen, ns, runs = set(), 0, 0
for fi in glob.glob("/proc/%s/fdinfo/*" % sys.argv[1]):
    try:
        kv = dict(l.split(":", 1) for l in open(fi) if ":" in l)
    except OSError:
        continue
    pid = kv.get("prog_id", "").strip()
    if pid and "run_time_ns" in kv and pid not in seen:
        seen.add(pid)
        ns += int(kv["run_time_ns"]); runs += int(kv["run_cnt"])
print(ns, runs)
EOF2
}

# one TOOL: prints "TOOL SECONDS TRACER_CPU_S BPF_NS BPF_RUNS"
one() {
	local tool=$1 log=$TMP/$1.log secs t0 t1 b0 b1
	TOOL_PID=
	case $tool in
	bare) ;;
	pmubpf) "$PMUBPF" -v -a -e off-cpu -o "$TMP/p.pb.gz" 2>"$log" & TOOL_PID=$! ;;
	pmubpf-fp) "$PMUBPF" -v -a -e off-cpu --call-graph fp -o "$TMP/p.pb.gz" 2>"$log" & TOOL_PID=$! ;;
	offcputime) "$OFFCPUTIME" >"$log" 2>&1 & TOOL_PID=$! ;;
	esac
	if [[ $tool == pmubpf* ]]; then
		wait_for "$log" '^pmubpf: recording' $TOOL_PID
	elif [[ $tool == offcputime ]]; then
		# It says nothing when ready: wait for its programs to run.
		for ((i = 0; i < 400; i++)); do
			read -r _ r0 < <(bpf_runs $TOOL_PID)
			((r0 > 0)) && break
			sleep 0.05
		done
	fi
	if [[ -n $TOOL_PID ]]; then
		sleep 1 # past its start-up work (pmubpf reads kallsyms in a thread)
		t0=$(ticks $TOOL_PID)
		read -r b0 r0 < <(bpf_runs $TOOL_PID)
	fi
	secs=$(perf bench sched pipe -l "$LOOPS" 2>&1 | awk '/Total time/ { print $3 }')
	if [[ -n $TOOL_PID ]]; then
		t1=$(ticks $TOOL_PID)
		read -r b1 r1 < <(bpf_runs $TOOL_PID)
		kill -INT $TOOL_PID
		wait $TOOL_PID || true
		TOOL_PID=
		echo "$tool $secs $(awk -v a="$t0" -v b="$t1" -v h="$(getconf CLK_TCK)" 'BEGIN { print (b - a) / h }') $((b1 - b0)) $((r1 - r0))"
	else
		echo "$tool $secs 0 0 0"
	fi
}

rows=$TMP/rows
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
for ((r = 1; r <= ROUNDS; r++)); do
	for tool in bare pmubpf pmubpf-fp offcputime; do
		echo "offcpu_bench: round $r/$ROUNDS: $tool" >&2
		echo "$r $(one $tool)" | tee -a "$rows" >&2
	done
done

section=$TMP/section
python3 - "$rows" "$LOOPS" "$ROUNDS" "$(date -u +%Y-%m-%d)" "$(nproc)" "$(uname -r)" "$LOAD0" "$(cut -d' ' -f1 /proc/loadavg)" >"$section" <<'PY'
import statistics, sys
rows, loops, rounds, day, ncpu, kernel, load0, load1 = sys.argv[1:]
by, bare_of = {}, {}
for line in open(rows):
    rnd, tool, secs, cpu, ns, runs = line.split()
    if tool == "bare":
        bare_of[rnd] = float(secs)
    # the slowdown against the same round's bare run: the machine's load
    # drifts between rounds more than within one
    by.setdefault(tool, []).append((float(secs), float(cpu), int(ns), int(runs),
                                    float(secs) / bare_of[rnd] - 1))
med = lambda xs: statistics.median(xs)
names = {"bare": "bare", "pmubpf": "`pmubpf -a -e off-cpu` (dwarf)",
         "pmubpf-fp": "`pmubpf -a -e off-cpu --call-graph fp`", "offcputime": "libbpf-tools `offcputime`"}
print("## Off-CPU time\n")
print("`make bench-offcpu` (%s, %s CPUs, %s): `perf bench sched pipe -l %s` (two" % (day, ncpu, kernel, loops))
print("tasks ping-pong over pipes: a context-switch storm), %s rounds, tools in turn" % rounds)
print("each round; medians. Slowdown: the median over rounds of the benchmark's time")
print("against the same round's bare run. Tracer CPU:")
print("the tracer process's own user + system time during the benchmark. BPF: its")
print("programs' run time per run (kernel.bpf_stats_enabled), paid by the switching")
print("tasks: on_switch runs at every context switch on every CPU, both ends of a")
print("target's wait (walking both stacks at the start, storing them at the end).")
print("Load average (1 min) before and after: %s, %s: on a machine busy with other" % (load0, load1))
print("work the seconds say little (the tools' runs land in different moments of it)")
print("and BPF ns/run, measured per program, is the steadier figure.\n")
print("| tracer | seconds | slowdown | tracer CPU s | BPF ns/run | BPF runs |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for tool in ["bare", "pmubpf", "pmubpf-fp", "offcputime"]:
    rs = by.get(tool)
    if not rs:
        continue
    s = med([r[0] for r in rs])
    cpu = med([r[1] for r in rs])
    ns = sum(r[2] for r in rs); runs = sum(r[3] for r in rs)
    per = "%.0f" % (ns / runs) if runs else "-"
    print("| %s | %.3f | %s | %s | %s | %s |" % (
        names[tool], s, "-" if tool == "bare" else "%+.0f%%" % (100 * med([r[4] for r in rs])),
        "-" if tool == "bare" else "%.2f" % cpu, per, "-" if tool == "bare" else "%d" % (runs // len(rs))))
print()
print("What differs: offcputime keys its map by (pid, stack ids) with the kernel's")
print("STACK_TRACE maps (bpf_get_stackid, frame-pointer user stacks) and prints at")
print("the end; pmubpf keeps each wait's frames (2 KiB) in a hash map from switch-out")
print("to switch-in, hashes them into its own stacks map, unwinds user stacks from")
print(".eh_frame in BPF by default, and reads the thread's label set. Both count")
print("preempted time (offcputime's default --state).")
print()
PY
python3 tools/bench/doc_section.py "$DOC" "$section" 'Off-CPU time'
cat "$section"
echo "offcpu_bench: wrote the Off-CPU time section of $DOC" >&2
