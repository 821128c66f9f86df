#!/usr/bin/python3
"""report.py — docs/benchmarks.md and docs/img/*.png from the results of
tools/bench/bench.py (build/bench/results/PART.json).

Every number in the document comes from those files; the prose is here.
The document is made of blocks between markers

    <!-- bench:NAME -->  ...  <!-- /bench:NAME -->

and only those are rewritten: anything outside them (the "## Symbolization"
section, which another part of the project writes) is kept as it is. A
block whose part has no results yet keeps its old text (or says how to
produce it). Plots are drawn with gnuplot (pngcairo). The accuracy part
lives in report_accuracy.py, the churn part in report_churn.py, the
helpers every part uses in report_common.py.

    tools/bench/report.py [--doc PATH]   (tools/bench.sh runs it; so does
                                          make bench-report; --doc: another file)
"""
import re
import sys
from pathlib import Path

from report_common import (DOC, IMG, RESULTS, disturb_rule, disturbed, f, gnuplot, load, measured_line,
                           med, pmubpf_graph, table)
from report_accuracy import accuracy_block, accuracy_headlines, accuracy_plot
from report_churn import churn_block, churn_headline

PARTS = ["overhead", "cost", "churn", "write", "accuracy", "labels"]
BLOCKS = ["intro", "summary"] + PARTS
TOOLS = ["floor", "pmubpf", "pmubpf-fp", "perf", "bpftrace"]
PLOTTED = ["floor", "pmubpf", "perf", "bpftrace"]
FOREIGN = "## Symbolization"


# --- overhead -------------------------------------------------------------

def overhead_stats(res):
    """{(workload, event, freq, tool): {...}} with slowdowns in % against
    the median of the same round's undisturbed alone runs."""
    runs = res["data"]
    clean = lambda r: not disturbed(r, res["config"]["disturbed"])
    base = {}
    for key in {(r["round"], r["workload"]) for r in runs}:
        alone = [r for r in runs if (r["round"], r["workload"]) == key and r["tool"] == "alone"]
        use = [r["elapsed_ns"] for r in alone if clean(r)] or [r["elapsed_ns"] for r in alone]
        base[key] = med(use)
    pct = {}
    for r in runs:
        if r["tool"] != "alone":
            r["pct"] = 100.0 * (r["elapsed_ns"] / base[(r["round"], r["workload"])] - 1)
            pct[(r["round"], r["workload"], r["event"], r["freq"], r["tool"])] = r
    out = {}
    for r in runs:
        if r["tool"] == "alone":
            continue
        k = (r["workload"], r["event"], r["freq"], r["tool"])
        out.setdefault(k, []).append(r)
    stats = {}
    for k, rs in out.items():
        good = [r for r in rs if clean(r)]
        fallback = not good
        use = good or rs
        above = []
        for r in use:
            fl = pct.get((r["round"], r["workload"], r["event"], r["freq"], "floor"))
            if fl is not None and (clean(fl) or fallback):
                above.append(r["pct"] - fl["pct"])
        rates = [r["samples"] / (r["record_s"] * res["config"]["threads"]) for r in use
                 if r.get("samples") is not None and r.get("record_s")]
        stats[k] = {"pct": [r["pct"] for r in use], "above": above, "rate": med(rates),
                    "tool_cpu": [r["tool_cpu_s"] for r in use if "tool_cpu_s" in r],
                    "used": len(use), "all": len(rs), "fallback": fallback,
                    "throttled": sum(1 for r in rs if r.get("throttled")),
                    "stack_errors": sum(r.get("stack_errors", 0) for r in use)}
    return stats


def overhead_block(res):
    cfg, st = res["config"], overhead_stats(res)
    nruns = len(res["data"])
    excluded = sum(1 for r in res["data"] if disturbed(r, cfg["disturbed"]))
    out = ["## Overhead", "", measured_line(res), "",
           "How much longer a fixed job takes while a profiler samples the whole machine. "
           "Two workloads (tools/bench/), each %d threads (one per CPU), built with "
           "`clang -O2 -fno-omit-frame-pointer`, each reporting its own elapsed time:" % cfg["threads"],
           "",
           "- `cpu_work`: %d units of dependent integer arithmetic per thread, ten calls deep "
           "(user stacks only);" % cfg["units"]["cpu_work"],
           "- `syscall_work`: %d units of getppid() + 64-byte read of /dev/zero + 64-byte write "
           "to /dev/null, 100 rounds each (most samples in the kernel, with kernel and user "
           "stacks)." % cfg["units"]["syscall_work"],
           "",
           "Each ran about %.1f s alone (calibrated at the start), and under:" % cfg["work_secs"], "",
           "- **floor**: `tools/bench/floor` opens the same event (cpu-clock, one per CPU, "
           "frequency mode) and attaches nothing: the cost of the sampling interrupts alone;",
           "- **pmubpf**: `pmubpf -a -e EVENT -F HZ` (system-wide, its default call graph: "
           "user stacks by %s), started before the workload and stopped (SIGINT) after it. "
           "Right after attaching it snapshots every process it sees sampled (%s ms of CPU, "
           "median); the workload starts once that has settled, so the run measures "
           "recording, not start-up (the cost section has the whole-life numbers). "
           "**pmubpf CPU** is what its own process then used while the workload ran, its "
           "first sight of the workload included. **pmubpf-fp** (999 Hz only) is the same "
           "with `--call-graph fp`, walking user stacks by frame pointer as perf -g and "
           "bpftrace do;" % (
               pmubpf_graph(res["data"]),
               f(1000 * med([r["startup_cpu_s"] for r in res["data"] if "startup_cpu_s" in r]), 0)),
           "- **perf**: `perf record -e EVENT -F HZ -a -g -o /tmp/... -- WORKLOAD`;",
           "- **bpftrace**: `bpftrace -e '%s' -c WORKLOAD` (the probe fires on every CPU)."
           % (cfg["bpftrace"] % 999).replace("999", "HZ"),
           "",
           "Runs are interleaved: each round runs the workload alone, then one tool at one "
           "frequency, then alone again, and so on through every tool and frequency in a "
           "shuffled order (%d rounds, BENCH_ROUNDS). A run's slowdown is its elapsed time "
           "over the median of the same round's alone runs, minus one; the table gives its "
           "min / median / max over the rounds. **Above floor** is, per round, the tool's "
           "slowdown minus the floor's at the same frequency (median over rounds): on these "
           "VMs a timer interrupt is itself expensive (here the floor alone slows cpu_work by "
           "%s%% at %d Hz), so a profiler's own cost is the distance above the floor, not the "
           "distance above zero. "
           "**Samples/s/CPU** checks that each tool really sampled at the requested rate "
           "(perf and bpftrace: all their samples; pmubpf: the workload's own samples, since "
           "it also recorded while settling; over the workload's elapsed time)."
           % (cfg["rounds"], f(med(st.get(("cpu_work", "cpu-clock", max(cfg["freqs"]), "floor"), {"pct": []})["pct"]), 0),
              max(cfg["freqs"])), "",
           "This VM is shared, so disturbed runs are left out (%d of %d here; %s); a cell "
           "marked † had no undisturbed run and shows all of them. Single runs vary by a few "
           "percent, so differences below that are noise."
           % (excluded, nruns, disturb_rule(cfg["disturbed"])), ""]
    for ev in cfg["events"]:
        for wl in ("cpu_work", "syscall_work"):
            rows = []
            for freq in cfg["freqs"]:
                for tool in TOOLS:
                    s = st.get((wl, ev, freq, tool))
                    if not s:
                        continue
                    p = s["pct"]
                    note = (" †" if s["fallback"] else "") + \
                           (" (throttled %d×)" % s["throttled"] if s["throttled"] else "")
                    rows.append([freq, tool + note, "%s / **%s** / %s" % (f(min(p)), f(med(p)), f(max(p))),
                                 "–" if tool == "floor" else f(med(s["above"])),
                                 "–" if tool == "floor" else f(s["rate"], 0),
                                 f(1000 * med(s["tool_cpu"]), 0) if s["tool_cpu"] else "–",
                                 "%d/%d" % (s["used"], s["all"])])
            out += ["### %s, %s" % (wl, ev), "",
                    table(["Hz", "tool", "slowdown % min / median / max", "above floor (pp)",
                           "samples/s/CPU", "pmubpf CPU (ms)", "runs"], rows,
                          ["r", "l", "r", "r", "r", "r", "r"]), ""]
    errs = sum(s["stack_errors"] for k, s in st.items() if k[3] == "bpftrace")
    if errs:
        out += ["bpftrace printed \"failed to look up stack id\" %d times over these runs: "
                "`bpf_get_stackid` without BPF_F_REUSE_STACKID refuses a stack whose hash "
                "bucket is taken, so bpftrace lost those stacks (pmubpf keys stacks by a "
                "64-bit hash of their frames instead)." % errs, ""]
    out += ["![overhead vs frequency](img/overhead.png)", ""]
    return "\n".join(out), st


def overhead_plot(res, st):
    cfg = res["config"]
    data, plots = [], []
    for wl in ("cpu_work", "syscall_work"):
        for tool in PLOTTED:
            name = "%s_%s" % (wl, tool)
            rows = []
            for freq in cfg["freqs"]:
                s = st.get((wl, "cpu-clock", freq, tool))
                if s:
                    rows.append("%d %.3f %.3f %.3f" % (freq, med(s["pct"]), min(s["pct"]), max(s["pct"])))
            data.append("$%s << EOD\n%s\nEOD" % (name, "\n".join(rows)))
    styles = {"floor": "lc rgb '#888888' pt 1", "pmubpf": "lc rgb '#d62728' pt 7",
              "perf": "lc rgb '#1f77b4' pt 5", "bpftrace": "lc rgb '#2ca02c' pt 9"}
    for i, wl in enumerate(("cpu_work", "syscall_work")):
        plots.append("set title '%s (%d threads), cpu-clock'\n" % (wl, cfg["threads"]) +
                     "plot " + ", \\\n     ".join(
                         "$%s_%s using 1:2:3:4 with yerrorlines %s lw 2 title '%s'" % (wl, t, styles[t], t)
                         for t in PLOTTED))
    script = "\n".join(data) + """
set terminal pngcairo size 1100,450 font 'sans,10' noenhanced
set output '%s'
set multiplot layout 1,2 title 'Slowdown of a fixed job vs sampling frequency (median, min-max over rounds)'
set logscale x
set xrange [60:16000]
set xtics (99, 999, 9999)
set xlabel 'sampling frequency per CPU (Hz)'
set ylabel 'slowdown (%%)'
set key top left
set grid
""" % (IMG / "overhead.png") + "\n".join(plots) + "\nunset multiplot\n"
    gnuplot(script)


# --- cost -----------------------------------------------------------------

def cost_block(res):
    cfg = res["config"]
    out = ["## The profilers' own cost", "", measured_line(res), "",
           "Each tool recorded the whole machine for %g s at each frequency while %s kept "
           "every CPU busy (pmubpf with its default call graph: user stacks by %s). **CPU while recording** is the tool process's user + system time "
           "between 3 s after its start and 0.5 s before its end, as a share of one CPU; "
           "**total CPU** and **peak RSS** cover its whole life (start-up, recording, "
           "writing the output), from wait4() in a small helper (tools/bench/rusage.c). "
           "Neither includes what the kernel does in the sampling interrupt: that is the "
           "BPF program's time, read with `bpftool prog show -j` (run_time_ns / run_cnt) "
           "while the tool ran, with kernel.bpf_stats_enabled=1 for the run only (that "
           "switch adds two clock reads per run). perf runs no BPF: its in-kernel cost "
           "(copying each stack into the ring buffer) shows only in the overhead tables. "
           "**BPF maps** is the memory the kernel charged for the tool's maps (memlock). "
           "One run each; † marks a disturbed one (%s)." % (
               cfg["secs"], cfg["load"], pmubpf_graph(res["data"]["runs"]), disturb_rule(0.05)), ""]
    for ev in cfg["events"]:
        rows = []
        for r in res["data"]["runs"]:
            if r["event"] != ev:
                continue
            rows.append([r["freq"], r["tool"] + (" †" if disturbed(r, 0.05) else ""),
                         r["samples"] if r["samples"] is not None else "–",
                         f(100 * r["record_cpu_frac"]), f(r["cpu_s"], 2), f(r["maxrss_kb"] / 1024),
                         f(r["bpf_ns_per_run"], 0) if r["bpf_ns_per_run"] else "–",
                         f(r["bpf_map_bytes"] / 2**20) if r["bpf_map_bytes"] else "–",
                         f(r["output_bytes"] / 2**20, 2) if r["output_bytes"] is not None else "–"])
        out += ["### %s" % ev, "",
                table(["Hz", "tool", "samples", "CPU while recording (% of a CPU)", "total CPU (s)",
                       "peak RSS (MB)", "BPF ns/sample", "BPF maps (MB)", "output (MB)"],
                      rows, ["r", "l", "r", "r", "r", "r", "r", "r", "r"]), ""]
    errs = sum(r.get("stack_errors", 0) for r in res["data"]["runs"] if r["tool"] == "bpftrace")
    if errs:
        out += ["bpftrace reported %d stack-id lookups that failed (stacks lost to "
                "`bpf_get_stackid` hash collisions) over these runs." % errs, ""]
    probes = res["data"]["probes"]
    if probes:
        base = probes[0]["bpf_ns_per_run"]
        out += ["Where a sample's BPF time goes on this machine: bpftrace's profile probe at "
                "999 Hz under the same load, doing less and less (6 s each). Walking a user "
                "stack (`bpf_get_stack`/`bpf_get_stackid` with the user flag: reading the "
                "frame pointers out of user memory) is by far the most expensive step here, "
                "and both pmubpf and bpftrace take one per sample.", "",
                table(["bpftrace program", "ns/sample", "vs count only"],
                      [["`profile:hz:999 { %s }`" % p["probe"], f(p["bpf_ns_per_run"], 0),
                        "–" if i == 0 or not base else "%+.0f" % (p["bpf_ns_per_run"] - base)]
                       for i, p in enumerate(probes)], ["l", "r", "r"]), ""]
    return "\n".join(out)


# --- write ----------------------------------------------------------------

def write_block(res):
    rows = []
    for mode in ("symbolized", "raw"):
        rs = [r for r in res["data"] if r["mode"] == mode]
        if not rs:
            continue
        rng = lambda k, d=1.0: "%s (%s–%s)" % (f(med([r[k] / d for r in rs]), 0),
                                               f(min(r[k] / d for r in rs), 0), f(max(r[k] / d for r in rs), 0))
        cpu = [r["build_cpu_ms"] + r["write_cpu_ms"] for r in rs if "build_cpu_ms" in r]
        rows.append([mode, rng("build_ms"), rng("write_ms"),
                     f(med([r["build_ms"] + r["write_ms"] for r in rs]), 0),
                     f(med(cpu), 0) if cpu else "–",
                     f(med([r["rss_before_kb"] for r in rs]) / 1024),
                     f(max(r["peak_rss_kb"] for r in rs) / 1024),
                     f(med([r["file_bytes"] for r in rs]) / 2**20, 2),
                     "%d" % med([r["locations"] for r in rs]),
                     "%d" % med([r["user_unknown"] for r in rs])])
    r0 = res["data"][0]
    out = ["## Writing a profile", "", measured_line(res), "",
           "What pmubpf does once a recording stops, timed on **synthetic** data by "
           "`tools/bench/write_bench` (linked with build/libpmubpf.a): %d samples "
           "aggregated over %d distinct stacks (%d frames in all: %d–%d user frames each, "
           "%d–%d kernel frames for half of them, drawn with a power-law skew from pools of "
           "%d user and %d kernel addresses), each added as report.c adds a counts "
           "entry (frames symbolized through symbolize.h, labels pid, tid, comm), then "
           "`pprof__write` (encode, gzip, fsync, rename). The stacks are made up but the "
           "symbol tables are real: user addresses lie in write_bench's own executable "
           "mappings (its libraries, mostly stripped Debian builds, hence the unnamed "
           "frames) and are resolved through a snapshot of its own process, kernel "
           "addresses in [_stext, _etext) through /proc/kallsyms. **raw** skips naming "
           "the frames. Three runs each, median (min–max); total CPU is the process's CPU "
           "time over both phases (what a busy machine does not inflate); RSS before is the input data, "
           "kernel symbols and process snapshot already in memory, peak is VmHWM."
           % (r0["samples"], r0["stacks"], r0["frames"], r0["user_depth"][0], r0["user_depth"][1],
              r0["kernel_depth"][0], r0["kernel_depth"][1], r0["user_pool"], r0["kernel_pool"]), "",
           table(["mode", "build + symbolize (ms)", "encode + write (ms)", "total (ms)", "total CPU (ms)",
                  "RSS before (MB)", "peak RSS (MB)", "file (MB)", "locations", "unnamed user locations"],
                 rows, ["l"] + ["r"] * 9), ""]
    return "\n".join(out)


# --- labels ---------------------------------------------------------------

def labels_block(res):
    m, runs, cfg = res["data"]["micro"], res["data"]["bpf"], res["config"]
    desc = {"plain": "no header (no record registered)",
            "unset": "header, record registered, no set current",
            "set": "header, a set current around every unit"}
    rows, limit = [], cfg.get("disturbed", 0.05)
    nbusy = sum(1 for r in runs if disturbed(r, limit))
    for config in ("stacks", "no user stacks"):
        per = {}
        for r in runs:
            if r.get("config", "stacks") == config and r["ns_per_run"]:
                per.setdefault(r["variant"], []).append(r)
        for k, v in per.items():  # leave out disturbed runs, unless all are
            per[k] = [r for r in v if not disturbed(r, limit)] or v
        ns = {k: med([r["ns_per_run"] for r in v]) for k, v in per.items()}
        lo = {k: min(r["ns_per_run"] for r in v) for k, v in per.items()}
        for k in ("plain", "unset", "set"):
            if k not in per:
                continue
            v = per[k]
            rows.append([config, k, desc[k], f(ns[k], 0),
                         "%s / %s" % (f(lo[k], 0), f(max(r["ns_per_run"] for r in v), 0)),
                         "–" if k == "plain" or "plain" not in ns else
                         "%+.0f / %+.0f" % (ns[k] - ns["plain"], lo[k] - lo["plain"]),
                         "%d / %d" % (sum(r["labelled"] for r in v), sum(r["samples"] for r in v))])
    goal = "meets" if m["labels_pair_ns"] <= 5 else "misses"
    out = ["## Labels", "", measured_line(res), "",
           "What `include/pmubpf/labels.h` costs a labelled program, and what reading the "
           "label costs pmubpf per sample.", "",
           "**Switching labels** (`tools/bench/labels_bench`, clang -O2): a tight loop of "
           "`prev = pmubpf_labels_set(s); pmubpf_labels_set(prev);`, %d iterations, best of "
           "%d, against the same two stores into a plain volatile `__thread` pointer and "
           "against the empty loop. The goal was at most 5 ns per set+restore pair: this "
           "%s it." % (cfg["micro_iterations"], cfg["micro_repeats"], goal), "",
           table(["loop", "ns per iteration", "minus empty loop"],
                 [["set + restore (labels.h)", f(m["labels_pair_ns"], 2), f(m["labels_pair_ns"] - m["empty_ns"], 2)],
                  ["two plain TLS stores", f(m["tls_pair_ns"], 2), f(m["tls_pair_ns"] - m["empty_ns"], 2)],
                  ["empty loop", f(m["empty_ns"], 2), "–"]], ["l", "r", "r"]), "",
           "**Per sample in BPF**: `tools/bench/label_load` (one thread per CPU spinning "
           "%g s) under `pmubpf -F %d -- ...`, on_sample's run_time_ns / run_cnt from "
           "bpftool with kernel.bpf_stats_enabled=1; three builds of the same loop, each "
           "with pmubpf's defaults (*stacks*) and with `--no-user` (*no user stacks*: "
           "without the user stack walk, which dominates a sample here, the label path "
           "stands out); %d interleaved runs each (median; min / max). The difference "
           "to *plain* is what the label path adds: a lookup of the process's label slot, "
           "reading the thread's TLS word and the set's id from user memory, and a lookup "
           "of the (process, id) pair already announced. Differences within the min–max "
           "spread are noise; the minimum, the least disturbed run, is the steadier guide. Disturbed runs are left out unless a row has no other (%d of "
           "%d; %s)." % (cfg["load_secs"], cfg["freq"], cfg.get("reps", 3), nbusy, len(runs),
                          disturb_rule(limit)), "",
           table(["pmubpf", "variant", "what BPF finds", "ns/sample", "min / max", "vs plain (median / min)",
                  "labelled / samples"], rows, ["l", "l", "l", "r", "r", "r", "r"]), ""]
    return "\n".join(out)


# --- intro and summary ----------------------------------------------------

def duration(res):
    s = res.get("seconds")
    return "%d min %02d s" % divmod(s, 60) if s else "time not recorded"


def intro_block(results):
    newest = max(results.values(), key=lambda r: r["env"]["date"])
    e = newest["env"]
    rows = [["machine", "%s, %d CPUs, %s GiB%s" % (e["cpu"], e["cpus"], e["memory_gib"],
                                                     ", virtual machine" if e["hypervisor"] else "")],
            ["hardware PMU", "yes" if e["pmu"] else "no (`perf stat -e cycles true`: not supported)"],
            ["kernel", "%s (%s)" % (e["kernel"], e["kernel_build"])],
            ["OS", e["os"]]]
    rows += [[k, "`%s`" % v] for k, v in e["tools"].items()]
    rows += [[k, str(v)] for k, v in e["sysctl"].items()]
    parts = ", ".join("%s %s (%s)" % (p, results[p]["env"]["date"], duration(results[p]))
                      for p in BLOCKS if p in results)
    timed = [r["seconds"] for r in results.values() if r.get("seconds")]
    took = "%s here, on %d CPUs" % (duration({"seconds": sum(timed)}), e["cpus"]) \
        if len(timed) == len(PARTS) else "about 25 minutes on 2 CPUs"
    out = ["*Generated by `make bench` (tools/bench.sh → tools/bench/bench.py → "
           "tools/bench/report.py) from build/bench/results/*.json; do not edit the text "
           "between `bench:` markers, edit report.py. Parts measured: %s.*" % parts, "",
           "Run everything with `sudo make bench` (%s), or one part " % took +
           "with `sudo make bench-overhead` (bench-cost, bench-churn, bench-write, "
           "bench-accuracy, bench-labels); `make bench-report` rewrites this file from the last results. "
           "Repetitions: BENCH_ROUNDS (overhead, default 4), BENCH_RUNS (accuracy, default "
           "10), BENCH_CHURN_ROUNDS (churn, default 3); see tools/bench.sh. Benchmarks are not tests: they never fail on speed.", "",
           "Machine and tool versions (of the most recent part; each section names its own "
           "date and commit):", "", table(["", ""], rows, ["l", "l"]), ""]
    if not e["pmu"]:
        out += ["**No hardware PMU here.** Everything below samples the software cpu-clock "
                "event. The cycles rows (pmubpf and perf with `-e cycles`, and the cycles "
                "floor) are absent: `make bench` adds them by itself on a machine where "
                "`perf stat -e cycles true` counts.", ""]
    return "\n".join(out)


def summary_block(results, ov, acc, churn=None):
    out = ["## Headline numbers", ""]
    items = []
    if ov:
        for wl in ("cpu_work", "syscall_work"):
            parts = []
            for tool in ("pmubpf", "pmubpf-fp", "perf", "bpftrace"):
                s = ov.get((wl, "cpu-clock", 999, tool))
                if s:
                    parts.append("%s %s%% (%s pp above floor)" % (tool, f(med(s["pct"])), f(med(s["above"]))))
            fl = ov.get((wl, "cpu-clock", 999, "floor"))
            if parts and fl:
                items.append("Overhead at 999 Hz on %s, median slowdown: floor %s%%; %s." % (
                    wl, f(med(fl["pct"])), "; ".join(parts)))
        top = max(results["overhead"]["config"]["freqs"])
        parts = []
        for tool in ("pmubpf", "perf", "bpftrace"):
            a = [ov.get((wl, "cpu-clock", top, tool)) for wl in ("cpu_work", "syscall_work")]
            if all(a):
                parts.append("%s %s / %s" % (tool, f(med(a[0]["above"])), f(med(a[1]["above"]))))
        if parts:
            items.append("At %d Hz, above the floor (cpu_work / syscall_work, pp): %s." % (top, "; ".join(parts)))
    if "cost" in results:
        c = {(r["tool"], r["freq"]): r for r in results["cost"]["data"]["runs"] if r["event"] == "cpu-clock"}
        p, b = c.get(("pmubpf", 999)), c.get(("bpftrace", 999))
        if p:
            items.append("BPF time per sample at 999 Hz: pmubpf %s ns%s; pmubpf's own process used "
                         "%s%% of a CPU while recording, %s MB peak RSS." % (
                             f(p["bpf_ns_per_run"], 0),
                             " (bpftrace's profile probe: %s ns)" % f(b["bpf_ns_per_run"], 0) if b and b["bpf_ns_per_run"] else "",
                             f(100 * p["record_cpu_frac"]), f(p["maxrss_kb"] / 1024)))
    if churn:
        items.append(churn_headline(churn, results["churn"]["config"]))
    if "write" in results:
        rs = [r for r in results["write"]["data"] if r["mode"] == "symbolized"]
        if rs:
            items.append("Writing %d samples over %d stacks (synthetic): %s ms to build and "
                         "symbolize + %s ms to encode and write, %s MB peak RSS." % (
                             rs[0]["samples"], rs[0]["stacks"], f(med([r["build_ms"] for r in rs]), 0),
                             f(med([r["write_ms"] for r in rs]), 0), f(max(r["peak_rss_kb"] for r in rs) / 1024)))
    if acc:
        items += accuracy_headlines(acc)
    if "labels" in results:
        m = results["labels"]["data"]["micro"]
        items.append("Labels: %s ns per set+restore pair (two plain TLS stores: %s ns)." % (
            f(m["labels_pair_ns"], 2), f(m["tls_pair_ns"], 2)))
    out += ["- " + i for i in items if i] or ["Nothing measured yet: run `sudo make bench`."]
    return "\n".join(out) + "\n"


# --- document -------------------------------------------------------------

def splice(doc, blocks):
    """Replace each block's text between its markers; a block not in doc
    goes after the previous block (or, with none, after the title)."""
    for i, name in enumerate(BLOCKS):
        begin, end = "<!-- bench:%s -->" % name, "<!-- /bench:%s -->" % name
        new = blocks.get(name)
        if begin in doc and end in doc:
            if new is None:
                continue
            a, b = doc.index(begin) + len(begin), doc.index(end)
            old, kept = doc[a:b], ""
            if FOREIGN in old:  # someone else's section strayed inside: keep it, after
                kept = "\n\n" + old[old.index(FOREIGN):].strip() + "\n"
            doc = doc[:a] + "\n" + new.strip() + "\n" + doc[b:b + len(end)] + kept + doc[b + len(end):]
            continue
        text = "%s\n%s\n%s\n" % (begin, (new or "Not measured yet: run `sudo make bench-%s`." % name).strip(), end)
        prev = ["<!-- /bench:%s -->" % p for p in BLOCKS[:i] if "<!-- /bench:%s -->" % p in doc]
        if prev:
            at = doc.index(prev[-1]) + len(prev[-1])
            doc = doc[:at] + "\n\n" + text.rstrip("\n") + doc[at:]
        else:
            m = re.match(r"# .*\n+", doc)
            at = m.end() if m else 0
            doc = doc[:at] + text + "\n" + doc[at:]
    return doc


def main():
    results = {p: r for p in PARTS if (r := load(p))}
    if not results:
        sys.exit("report.py: no results in %s: run `sudo make bench` first" % RESULTS)
    blocks = {"intro": intro_block(results)}
    ov = acc = churn = None
    if "overhead" in results:
        blocks["overhead"], ov = overhead_block(results["overhead"])
        overhead_plot(results["overhead"], ov)
    if "cost" in results:
        blocks["cost"] = cost_block(results["cost"])
    if "churn" in results:
        blocks["churn"], churn = churn_block(results["churn"])
    if "write" in results:
        blocks["write"] = write_block(results["write"])
    if "accuracy" in results:
        blocks["accuracy"], acc = accuracy_block(results["accuracy"])
        accuracy_plot(results["accuracy"], acc)
    if "labels" in results:
        blocks["labels"] = labels_block(results["labels"])
    blocks["summary"] = summary_block(results, ov, acc, churn)
    path = Path(sys.argv[2]) if sys.argv[1:2] == ["--doc"] else DOC
    doc = path.read_text() if path.exists() else "# pmubpf benchmarks\n\n"
    doc = splice(doc, blocks)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(doc)
    tmp.rename(path)
    print("report: wrote %s (%s)" % (path, ", ".join(sorted(results))))


if __name__ == "__main__":
    main()
