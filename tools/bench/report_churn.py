"""report_churn.py — the "## Process churn" block of docs/benchmarks.md
and its headline line, from build/bench/results/churn.json
(tools/bench/report.py calls it).

Each round runs the load alone and under every tool once; a tool run
carries its own CPU and peak RSS (whole life, rusage helper), the load's
processes/s over the tool's life, and (pmubpf) the losses and process
counts of its profile comments, (perf) the CPU of perf report on the
same data.
"""
import re

from report_common import disturb_rule, disturbed, f, measured_line, med, table

TOOLS = ["alone", "floor", "pmubpf", "pmubpf-fp", "pmubpf-nofiles", "perf"]
PMUBPF_TOOLS = ["pmubpf", "pmubpf-fp", "pmubpf-nofiles"]


def spread(v, nd=1):
    """median (min–max) of v."""
    if not v:
        return "–"
    if len(v) == 1:
        return f(v[0], nd)
    return "%s (%s–%s)" % (f(med(v), nd), f(min(v), nd), f(max(v), nd))


def final_runs(res):
    """The runs that count: a disturbed run that was run again
    ("repeated") is replaced by its repeat."""
    return [r for r in res["data"] if not r.get("repeated")]


def churn_stats(res):
    """{tool: {...}}: the runs used (undisturbed ones, or all where none
    is: fallback) and, per round, the load's slowdown against the same
    round's alone run (alone rate / rate under the tool)."""
    limit = res["config"]["disturbed"]
    runs = final_runs(res)
    alone = {r["round"]: r for r in runs if r["tool"] == "alone"}
    stats = {}
    for tool in TOOLS:
        rs = [r for r in runs if r["tool"] == tool]
        if not rs:
            continue
        good = [r for r in rs if not disturbed(r, limit)]
        use = good or rs
        slow, lost, steady, by_round = [], [], [], {}
        pairs = [(r, alone.get(r["round"])) for r in rs]
        pairs = [(r, a) for r, a in pairs if a and r["procs_per_s"] > 0]
        clean = [(r, a) for r, a in pairs if not disturbed(r, limit) and not disturbed(a, limit)]
        for r, a in clean or pairs:
            slow.append(a["procs_per_s"] / r["procs_per_s"])
            if r.get("window_s") and r.get("processes") is not None:
                lost.append(r["window_s"] - r["processes"] / a["procs_per_s"])
            by_round[r["round"]] = slow[-1]
            if r.get("steady_procs_per_s") and a.get("steady_procs_per_s"):
                steady.append(a["steady_procs_per_s"] / r["steady_procs_per_s"])
        stats[tool] = {"runs": use, "all": len(rs), "fallback": not good, "slowdown": slow, "lost": lost,
                       "steady": steady,
                       "slow_fallback": bool(pairs) and not clean, "by_round": by_round}
    # Above the floor: per round, the tool's slowdown over the floor's.
    floor = stats.get("floor", {}).get("by_round", {})
    for tool, s in stats.items():
        s["above_floor"] = [v / floor[k] for k, v in s["by_round"].items() if k in floor and floor[k] > 0]
    return stats


def vals(rs, key, scale=1.0):
    return [r[key] * scale for r in rs if r.get(key) is not None]


def churn_block(res):
    cfg = res["config"]
    st = churn_stats(res)
    secs, freq = cfg["secs"], cfg["freq"]
    final = final_runs(res)
    nbusy = sum(1 for r in final if disturbed(r, cfg["disturbed"]))
    nrep = len(res["data"]) - len(final)
    out = ["## Process churn", "", measured_line(res), "",
           "A loop of short-lived programs is pmubpf's worst case in userspace: every new "
           "process is snapshotted at its first sample (its executable mappings read with the "
           "PROCMAP_QUERY ioctl on /proc/PID/maps, Linux 6.11+, else as text; each mapped file "
           "the object cache does not know by the build-id the kernel gives opened through "
           "/proc/PID/map_files; the vDSO read; and with --call-graph dwarf unwind tables built "
           "for objects not seen before), and its maps are read again when the kernel reports its "
           "loader mapping libraries. The load, `tools/bench/churn_work` (clang -O2), runs "
           "%d workers (one per CPU), each fork+exec'ing %s in turn and waiting for each, like "
           "`while :; do /bin/true; /usr/bin/env true; done` (env execs true in turn: one "
           "process, two images). After %g s of load, each tool records the whole machine at "
           "%d Hz cpu-clock for %g s:" % (cfg["workers"], " and ".join("`%s`" % p for p in cfg["programs"]),
                                         cfg["lead_s"], freq, secs), "",
           "- **pmubpf**: `pmubpf -a -F %d -d %g -o FILE` (its default call graph: user stacks by %s);"
           % (freq, secs, "/".join(sorted({r.get("call_graph", "?") for r in res["data"] if r["tool"] == "pmubpf"}))
              or "dwarf"),
           "- **pmubpf-fp**: the same with `--call-graph fp`;",
           "- **pmubpf-nofiles**: the same with `PMUBPF_NO_FILE_TABLES=1`: a process's samples "
           "before its unwind slot walked by frame pointer, not by its files' tables (the way "
           "before issue 39);",
           "- **perf**: `perf record -e cpu-clock -F %d -a -g -o FILE -- sleep %g`;" % (freq, secs),
           "- **floor**: `tools/bench/floor %d cpu-clock` opens the same cpu-clock event on every "
           "CPU in frequency mode and attaches nothing: what the sampling interrupts alone cost "
           "the load on this machine (the overhead section's floor);" % freq,
           "- **alone**: no tool; the load's rate over %g s." % secs, "",
           "**CPU** (user + system) and **peak RSS** are the tool's whole life (start-up, the "
           "%g s of recording, writing its output), from wait4() in tools/bench/rusage.c. "
           "**Processes/s** is the load's own count of finished processes per second over the "
           "tool's whole life (from the load's progress lines, every 50 ms); **load slowdown** "
           "is, per round, the alone run's processes/s over the tool run's (1.25 = each "
           "process took 25%% longer); **above floor** is, per round, the tool's slowdown over "
           "the floor's in the same round (median (min–max)): what the tool costs the load "
           "beyond the timer interrupts any sampler at this rate takes. **Steady slowdown** is the load "
           "slowdown while recording only, from %g s after the tool's start to 0.5 s before its "
           "recording ends: what an always-on recorder costs between its start-up and its writes "
           "(for a 10 s recording those two weigh on the whole-life slowdown several times more "
           "than on an agent's 60 s windows). **Load lost** is, per round, the "
           "load's work the tool cost it, in seconds of the load running alone: the tool's life less "
           "the processes finished in it over the alone run's rate. Unlike the slowdown it is not "
           "diluted by a long life: a tool that lives a second longer at little cost (perf record "
           "writing its build-ids after the 10 s) shows a lower slowdown for the same loss. "
           "**CPU per process** is the tool's CPU divided by the "
           "load's processes in that time. **Wakeups/s** is the tool's voluntary context switches "
           "(wait4's ru_nvcsw, all its threads) per second of its life: each is a time it slept "
           "and was woken, taking a CPU from the load. perf record defers symbolization (and building the "
           "call graph) to `perf report`, so its record-time CPU is not the whole comparison: "
           "**perf report** is the CPU of `perf report -i FILE --stdio > /dev/null` on the same "
           "data, run once the load had stopped (so, unlike pmubpf's work, not competing with "
           "it). %d rounds (BENCH_CHURN_ROUNDS), each running alone and "
           "every tool once in a shuffled order; median (min–max) over rounds. A disturbed run "
           "is run again, up to %d times in the part (BENCH_CHURN_RETRIES; %d here); "
           "disturbed runs left after that are left out (%d of %d here; %s); a row marked † "
           "had no undisturbed run and shows all of them, a slowdown marked † also uses "
           "disturbed runs." % (secs, cfg.get("steady_from_s", 2.0), cfg["rounds"], cfg.get("retries", 0), nrep, nbusy, len(final),
                                disturb_rule(cfg["disturbed"])), ""]
    rows = []
    for tool in TOOLS:
        s = st.get(tool)
        if not s:
            continue
        rs = s["runs"]
        per_proc = [1000 * r["cpu_s"] / r["processes"] for r in rs if r.get("cpu_s") is not None and r["processes"]]
        wake = [r["vcsw"] / r["window_s"] for r in rs if r.get("vcsw") and r.get("window_s")]
        rows.append([tool + (" †" if s["fallback"] else ""),
                     spread(vals(rs, "cpu_s"), 2),
                     spread(vals(rs, "maxrss_kb", 1 / 1024)),
                     spread(vals(rs, "procs_per_s"), 0),
                     "1 (reference)" if tool == "alone" else spread(s["slowdown"], 2) + (" †" if s["slow_fallback"] else ""),
                     spread(s["above_floor"], 2) if tool not in ("alone", "floor") and s["above_floor"] else "–",
                     spread(s["steady"], 2) if tool != "alone" and s["steady"] else "–",
                     spread(s["lost"], 2) if tool != "alone" and s["lost"] else "–",
                     spread(per_proc, 2),
                     spread(wake, 0) if wake else "–",
                     f(med(vals(rs, "samples")), 0) if vals(rs, "samples") else "–",
                     spread(vals(rs, "report_cpu_s"), 2) if tool == "perf" else "–",
                     f(med(vals(rs, "output_bytes", 1 / 2**20)), 2) if vals(rs, "output_bytes") else "–",
                     "%d/%d" % (len(rs), s["all"])])
    out += [table(["tool", "CPU (s)", "peak RSS (MB)", "processes/s", "load slowdown", "above floor",
                   "steady slowdown", "load lost (s)", "CPU per process (ms)", "wakeups/s", "samples", "perf report CPU (s)",
                   "output (MB)", "runs"],
                  rows, ["l"] + ["r"] * 13), ""]
    prow = []
    for tool in PMUBPF_TOOLS:
        s = st.get(tool)
        if not s:
            continue
        rs = s["runs"]
        gone = [100.0 * r["procs_gone"] / r["procs_seen"] for r in rs if r.get("procs_seen")]
        lost = lambda k: sum(r.get(k, 0) for r in rs)
        nosample = [100.0 * r["dwarf_no_table"] / r["samples"] for r in rs
                    if r.get("call_graph") == "dwarf" and r.get("samples")]
        byfile = [100.0 * r.get("dwarf_by_file", 0) / r["samples"] for r in rs
                  if r.get("call_graph") == "dwarf" and r.get("samples")]
        nocfi = [100.0 * r.get("dwarf_no_cfi", 0) / r["samples"] for r in rs
                 if r.get("call_graph") == "dwarf" and r.get("samples")]
        prow.append([tool + (" †" if s["fallback"] else ""), spread(vals(rs, "procs_seen"), 0),
                     spread(vals(rs, "procs_gone"), 0), spread(gone),
                     spread(vals(rs, "maps_rereads"), 0), spread(vals(rs, "maps_from_reports"), 0),
                     spread(vals(rs, "procs_from_images"), 0) if vals(rs, "procs_from_images") else "–",
                     spread(vals(rs, "procs_live_from_log"), 0) if vals(rs, "procs_live_from_log") else "–",
                     spread(vals(rs, "procs_live_read"), 0) if vals(rs, "procs_live_read") else "–",
                     "%d / %d / %d / %d" % (lost("lost_samples"), lost("lost_ustacks"), lost("lost_kstacks"),
                                            lost("lost_notices")),
                     spread(nosample) if nosample else "–", spread(byfile) if byfile else "–",
                     spread(nocfi) if nocfi else "–"])
    if prow:
        out += ["What pmubpf's profiles say about the processes (their `processes:`, `lost:` and "
                "`dwarf:` comments; median (min–max) over the runs): **seen** counts the process "
                "images sampled (a process counts again after each exec), **gone** those that "
                "had exited or exec'd before pmubpf read their maps with no image to name them "
                "by; **from BPF** the images BPF sent as sampled processes ended (exit or exec: "
                "-a on Linux 6.16+, docs/architecture.md); **live from reports** those "
                "alive when read but begun while recording, their image taken from the kernel's "
                "reports with no maps read; **read from /proc** the live ones whose maps were read "
                "(begun before the recording, or first sampled inside execve or an exit); "
                "**lost** is the sum over "
                "the runs of samples lost to a full counts map, user and kernel stacks lost "
                "(stacks map full or walk failed) and process notices lost (ring buffer full); "
                "**no tables yet** is the share of samples whose user stack was walked by frame pointer "
                "because the process had no unwind slot yet and BPF could not unwind it by its files "
                "(--call-graph dwarf only); **by file** the share unwound by the tables of the files "
                "their frames are in, found from the VMA (the process's slot not published yet, or "
                "a library mapped since); **frames by fp** the share with a frame in code no table "
                "covers (a file whose table is not built yet, JIT code), that frame unwound by frame "
                "pointer.", "",
                table(["tool", "processes seen", "gone before maps read", "gone (%)", "maps re-reads",
                       "mappings from reports", "from BPF", "live from reports", "read from /proc",
                       "lost samples / user / kernel stacks / notices",
                       "no tables yet (% of samples)", "by file (%)", "frames by fp (%)"], prow,
                      ["l"] + ["r"] * 12), ""]
    brow = []
    for tool in PMUBPF_TOOLS:
        s = st.get(tool)
        rs = [r for r in (s["runs"] if s else []) if r.get("bpf_progs") and r.get("bpf_progs_s")]
        for name in sorted({n for r in rs for n in r["bpf_progs"]}):
            per_run = [r["bpf_progs"][name][0] / r["bpf_progs"][name][1] / 1000 for r in rs
                       if r["bpf_progs"].get(name, [0, 0])[1]]
            rate = [r["bpf_progs"][name][1] / r["bpf_progs_s"] for r in rs if name in r["bpf_progs"]]
            busy = [r["bpf_progs"][name][0] / 1e6 / r["bpf_progs_s"] for r in rs if name in r["bpf_progs"]]
            if rate and max(rate) > 0:
                brow.append([tool, "`%s`" % name, spread(per_run, 2) if per_run else "–", spread(rate, 0),
                             spread(busy, 1)])
        if rs:
            total = [sum(v[0] for v in r["bpf_progs"].values()) / 1e6 / r["bpf_progs_s"] for r in rs]
            brow.append([tool, "all", "–", "–", spread(total, 1)])
    if brow:
        out += ["pmubpf's BPF programs in the load's own time (`kernel.bpf_stats_enabled`, on for "
                "pmubpf's runs only, read from `bpftool prog show` half a second before the "
                "recording ends; median (min–max) over the runs): **µs per run**, **runs/s** "
                "and **ms/s**, the share of a CPU each takes (on the sampled CPU, or in the process "
                "that execs, exits or forks).", "",
                table(["tool", "program", "µs per run", "runs/s", "ms/s"], brow, ["l", "l", "r", "r", "r"]), ""]
    out += [s for s in churn_sentences(st, secs, freq, cfg["workers"]) if s] + [""]
    return "\n".join(out), st


def distinct(r):
    """Distinct keys in pmubpf's profile, from its summary line."""
    if r.get("distinct"):
        return r["distinct"]
    m = re.search(r"\((\d+) distinct\)", " ".join(r.get("stderr_tail") or []))
    return int(m.group(1)) if m else None


def churn_sentences(st, secs, freq, workers):
    """One or two sentences from the numbers."""
    def cpu(t):
        return med(vals(st[t]["runs"], "cpu_s")) if t in st else None

    p, fp, perf = cpu("pmubpf"), cpu("pmubpf-fp"), cpu("perf")
    out = []
    if p is not None and perf is not None:
        rep = med(vals(st["perf"]["runs"], "report_cpu_s"))
        alone = med(vals(st["alone"]["runs"], "procs_per_s")) if "alone" in st else None
        out.append("Under this churn pmubpf used %s s of CPU for a %s-s recording (median; %s s with "
                   "--call-graph fp), %s× perf record's %s s, or %s× perf record and perf report "
                   "together (%s s)%s." % (
                       f(p, 2), "%g" % secs,
                       f(fp, 2) if fp is not None else "–", f(p / perf, 1) if perf else "–", f(perf, 2),
                       f(p / (perf + rep), 1) if perf + rep else "–", f(perf + rep, 2),
                       "" if alone is None else "; the load ran %s processes/s alone, %s under pmubpf "
                       "and %s under perf (median load slowdown %s and %s%s)" % (
                           f(alone, 0), f(med(vals(st["pmubpf"]["runs"], "procs_per_s")), 0),
                           f(med(vals(st["perf"]["runs"], "procs_per_s")), 0),
                           f(med(st["pmubpf"]["slowdown"]), 2), f(med(st["perf"]["slowdown"]), 2),
                           "; %s and %s above the floor, whose sampling interrupts alone slowed it %s" % (
                               f(med(st["pmubpf"]["above_floor"]), 2), f(med(st["perf"]["above_floor"]), 2),
                               f(med(st["floor"]["slowdown"]), 2))
                           if st["pmubpf"]["above_floor"] and st["perf"]["above_floor"] else "")))
    if "pmubpf" in st:
        rs = st["pmubpf"]["runs"]
        gone = [100.0 * r["procs_gone"] / r["procs_seen"] for r in rs if r.get("procs_seen")]
        lost = [100.0 * r["lost_samples"] / (r["samples"] + r["lost_samples"]) for r in rs
                if r.get("samples") is not None and r.get("lost_samples") is not None]
        other = sum(r.get(k, 0) for r in rs for k in ("lost_ustacks", "lost_kstacks", "lost_notices"))
        if gone:
            text = "pmubpf read the maps of all but %s%% of the process images it saw (median)" % f(med(gone))
            if any(lost):
                fp_lost = [100.0 * r["lost_samples"] / (r["samples"] + r["lost_samples"])
                           for r in st.get("pmubpf-fp", {"runs": []})["runs"] if r.get("samples") is not None]
                dist = [distinct(r) for r in rs if distinct(r)]
                text += (" and lost %s%% of its samples (%s–%s%%; --call-graph fp: %s%%) to a full counts "
                         "map%s: under churn nearly every sample is a new (process, thread, stack) key. "
                         "It lost %s stacks or notices." % (
                             f(med(lost)), f(min(lost)), f(max(lost)), f(med(fp_lost)) if fp_lost else "–",
                             " (%d distinct keys kept, the size pmubpf chose for %g s at %d Hz on %d CPUs; "
                             "--counts-map-size sets it)" % (max(dist), secs, freq, workers) if dist else "",
                             "no" if not other else "%d" % other))
            else:
                text += " and lost %s over %d runs." % (
                    "nothing (no samples, stacks or notices)" if not other
                    else "%d stacks or notices in all" % other, len(rs))
            out.append(text)
    if "pmubpf" in st and "pmubpf-nofiles" in st:
        def share(t, k):
            v = [100.0 * r.get(k, 0) / r["samples"] for r in st[t]["runs"]
                 if r.get("call_graph") == "dwarf" and r.get("samples")]
            return med(v) if v else None
        nf, wf = share("pmubpf-nofiles", "dwarf_no_table"), share("pmubpf", "dwarf_no_table")
        if nf is not None and wf is not None:
            out.append("A process's first samples: without its files' tables %s%% of the samples were "
                       "walked by frame pointer for want of the process's slot; with them %s%% (%s%% "
                       "unwound by file, %s%% with a frame in code no table covered), for %s s of CPU "
                       "against %s s and a load slowdown of %s against %s (medians, same rounds)." % (
                           f(nf), f(wf), f(share("pmubpf", "dwarf_by_file")), f(share("pmubpf", "dwarf_no_cfi")),
                           f(med(vals(st["pmubpf"]["runs"], "cpu_s")), 2),
                           f(med(vals(st["pmubpf-nofiles"]["runs"], "cpu_s")), 2),
                           f(med(st["pmubpf"]["slowdown"]), 2), f(med(st["pmubpf-nofiles"]["slowdown"]), 2)))
    return [" ".join(out)]


def churn_headline(st, cfg):
    if not all(t in st for t in ("pmubpf", "perf", "alone")):
        return None
    c = lambda t, k: med(vals(st[t]["runs"], k))
    lost = [100.0 * r["lost_samples"] / (r["samples"] + r["lost_samples"]) for r in st["pmubpf"]["runs"]
            if r.get("samples") is not None and r.get("lost_samples") is not None]
    return ("Process churn (%d workers fork+exec'ing /bin/true, /usr/bin/env true; %g s at %d Hz): "
            "pmubpf %s s CPU, %s MB peak RSS, load slowdown %s%s; pmubpf-fp %s s; perf record %s s "
            "(+ %s s perf report), %s MB, load slowdown %s; the load alone: %s processes/s%s." % (
                cfg["workers"], cfg["secs"], cfg["freq"], f(c("pmubpf", "cpu_s"), 2),
                f(c("pmubpf", "maxrss_kb") / 1024), f(med(st["pmubpf"]["slowdown"]), 2),
                ", %s%% of samples lost (counts map full)" % f(med(lost)) if lost and any(lost) else "",
                f(c("pmubpf-fp", "cpu_s"), 2) if "pmubpf-fp" in st else "–",
                f(c("perf", "cpu_s"), 2), f(c("perf", "report_cpu_s"), 2), f(c("perf", "maxrss_kb") / 1024),
                f(med(st["perf"]["slowdown"]), 2), f(c("alone", "procs_per_s"), 0),
                "; above the sampling floor (%s): pmubpf %s, perf %s" % (
                    f(med(st["floor"]["slowdown"]), 2), f(med(st["pmubpf"]["above_floor"]), 2),
                    f(med(st["perf"]["above_floor"]), 2))
                if st["pmubpf"]["above_floor"] and st["perf"]["above_floor"] else ""))
