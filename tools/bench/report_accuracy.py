"""report_accuracy.py — the "## Accuracy" block of docs/benchmarks.md,
its headline lines and docs/img/accuracy.png, accuracy_error.png, from
build/bench/results/accuracy.json (tools/bench/report.py calls it).

A configuration is (workload, tool, event, freq). The C workloads run
under pmubpf as shipped (timer dither on), "pmubpf --no-dither" (fixed
periods, as perf) and perf record; alias.c at a fixed period (-c, its
runs carry period_ns; freq is then 1e9 / period); the Go workloads under
pmubpf and runtime/pprof in the same run. Results from before the
--no-dither and alias configurations existed still render: what is
absent is left out.
"""
import math
import re
import statistics

from report_common import IMG, disturb_rule, disturbed, f, gnuplot, measured_line, natural, pmubpf_graph, table

WORKLOADS = [("serial", "C serial"), ("threads", "C threads"), ("alias", "C alias"),
             ("go-serial", "Go serial"), ("go-goroutines", "Go goroutines")]
TITLE = dict(WORKLOADS)
C_TOOLS = ["pmubpf", "pmubpf --no-dither", "perf"]
GO_TOOLS = [("pmubpf", "cpu-clock", 999), ("runtime/pprof", "setitimer/timer_create", 100)]
TOOL_ORDER = C_TOOLS + ["runtime/pprof"]
STYLE = {"pmubpf": "lc rgb '#d62728' pt 7", "pmubpf --no-dither": "lc rgb '#ff7f0e' pt 9",
         "perf": "lc rgb '#1f77b4' pt 5", "runtime/pprof": "lc rgb '#1f77b4' pt 5"}


def and_list(items):
    items = list(items)
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + (items[-1] if items else "")


def about(x):
    """x to two significant digits: 1579 -> 1600."""
    return int(round(x, 2 - len(str(int(x)))))


def rank(k):
    """Sort key of a configuration: workload, event, frequency, tool."""
    wl = [w for w, _ in WORKLOADS]
    return (wl.index(k[0]) if k[0] in wl else len(wl), k[2], k[3],
            TOOL_ORDER.index(k[1]) if k[1] in TOOL_ORDER else len(TOOL_ORDER))


def acc_groups(res):
    g = {}
    for r in res["data"]:
        g.setdefault((r["workload"], r["tool"], r["event"], r["freq"]), []).append(r)
    return g


def chance_over4(nfuncs):
    """Chance that some of nfuncs independent normal errors exceeds 4σ."""
    return 1 - (1 - math.erfc(4 / math.sqrt(2))) ** nfuncs


def fn_stats(runs):
    """Per function: truth %, measured %, signed error (pp), |error| in
    binomial sigmas, coefficient of variation across runs (%), and the CV
    pure binomial sampling noise would give; and a summary of the runs."""
    names = sorted(runs[0]["truth"], key=natural)
    per = {}
    for n in names:
        q, p, z, cvb = [], [], [], []
        for r in runs:
            tot, cnt = sum(r["truth"].values()), sum(r["counts"].values())
            if not tot or not cnt:
                continue
            qi, pi = r["truth"][n] / tot, r["counts"][n] / cnt
            sd = math.sqrt(qi * (1 - qi) / cnt) if 0 < qi < 1 else 1.0 / cnt
            q.append(qi)
            p.append(pi)
            z.append(abs(pi - qi) / sd)
            cvb.append(math.sqrt((1 - qi) / (cnt * qi)) if qi > 0 else float("nan"))
        mp = statistics.mean(p)
        per[n] = {"truth": 100 * statistics.mean(q), "got": 100 * mp,
                  "err": 100 * statistics.mean(pi - qi for pi, qi in zip(p, q)),
                  "abserr": 100 * statistics.mean(abs(pi - qi) for pi, qi in zip(p, q)),
                  "z": statistics.mean(z),
                  "cv": 100 * statistics.stdev(p) / mp if len(p) > 1 and mp else float("nan"),
                  "cvb": 100 * statistics.mean(cvb), "min": 100 * min(p), "max": 100 * max(p),
                  "each": [100 * pi for pi in p],
                  "errmin": 100 * min(pi - qi for pi, qi in zip(p, q)),
                  "errmax": 100 * max(pi - qi for pi, qi in zip(p, q))}
    worst = []  # per run, the largest |error| in sigmas over the functions
    for r in runs:
        tot, cnt = sum(r["truth"].values()), sum(r["counts"].values())
        if tot and cnt:
            worst.append(max(abs(r["counts"][k] / cnt - r["truth"][k] / tot) /
                             math.sqrt(max(r["truth"][k] / tot * (1 - r["truth"][k] / tot), 1e-12) / cnt)
                             for k in names))
    n = [sum(r["counts"].values()) for r in runs]
    other = [r["other"] / (r["other"] + sum(r["counts"].values())) for r in runs]
    changes = [int(m.group(1)) for r in runs if (m := re.search(r"\((\d+) changes", r.get("dither") or ""))]
    summ = {"runs": len(runs), "n": statistics.mean(n), "other": 100 * statistics.mean(other),
            "abserr": statistics.mean(v["abserr"] for v in per.values()),
            "maxerr": max(v["abserr"] for v in per.values()),
            "z": statistics.mean(v["z"] for v in per.values()),
            "maxz": max(v["z"] for v in per.values()),
            "cv": statistics.mean(v["cv"] for v in per.values()),
            "cvb": statistics.mean(v["cvb"] for v in per.values()),
            "over4": sum(1 for w in worst if w > 4),
            "period": runs[0].get("period_ns"),
            "changes": statistics.mean(changes) if changes else None}
    return per, summ


def rate(k, s):
    """How a configuration sampled: "999 Hz" or "-c 1000000"."""
    return "-c %d" % s["period"] if s.get("period") else "%d Hz" % k[3]


# --- aliasing and dither ----------------------------------------------------

def over4_list(stats, keys):
    return ", ".join("%s %d/%d" % (k[1], stats[k][1]["over4"], stats[k][1]["runs"]) for k in keys)


def by_freq(stats, wl):
    """{(event, Hz): {tool: key}} of workload wl's configurations."""
    out = {}
    for k in sorted((k for k in stats if k[0] == wl), key=rank):
        out.setdefault((k[2], k[3]), {})[k[1]] = k
    return out


def at(ev, hz):
    return "%d Hz" % hz + ("" if ev == "cpu-clock" else " (%s)" % ev)


def alias_text(stats):
    """alias.c: dithered pmubpf against a fixed period, run by run."""
    keys = by_freq(stats, "alias")
    out = []
    for (ev, hz), ks in keys.items():
        k0 = next(iter(ks.values()))
        per0, s0 = stats[k0]
        names = list(per0)
        top = names[0]
        text = ["On alias (`%s`, %d runs each) the truth was %s (mean over runs)." % (
            rate(k0, s0), s0["runs"], " / ".join("%s %s%%" % (n, f(per0[n]["truth"])) for n in names))]
        if "pmubpf" in ks:
            per, s = stats[ks["pmubpf"]]
            text.append("Dithered, **pmubpf** gave %s %s%% of the samples (%s–%s%% over runs): "
                        "mean abs. error %s pp, mean err/σ %s, %d of %d runs > 4σ%s." % (
                            top, f(per[top]["got"]), f(per[top]["min"]), f(per[top]["max"]),
                            f(s["abserr"], 2), f(s["z"], 2), s["over4"], s["runs"],
                            " (its profiles report %s period changes per run, all CPUs' timers "
                            "together)" % f(s["changes"], 0) if s["changes"] else ""))
        fixed = [t for t in ("pmubpf --no-dither", "perf") if t in ks]
        if fixed:
            text.append("With a fixed period each run locks onto some phase of the round; %s's "
                        "share per run, in %%: %s. Which phase a run locks onto is chance, so the "
                        "share jumps from run to run and its mean over runs (the summary table) "
                        "says little; shares between the extremes come from runs whose phase "
                        "moved during the run." % (top, "; ".join(
                            "**%s** %s (mean err/σ %s, %d of %d runs > 4σ)" % (
                                t, ", ".join(f(x) for x in sorted(stats[ks[t]][0][top]["each"])),
                                f(stats[ks[t]][1]["z"], 2), stats[ks[t]][1]["over4"], stats[ks[t]][1]["runs"])
                            for t in fixed)))
        out += [" ".join(text), ""]
    return out


def serial_text(stats):
    """The serial workload's fixed cycle: did it lock, with and without dither?"""
    keys = by_freq(stats, "serial")
    if not any("pmubpf --no-dither" in ks for ks in keys.values()):
        return []
    lines, over = [], {}
    for (ev, hz), ks in keys.items():
        lines.append("at %s, runs > 4σ: %s (mean err/σ %s)" % (
            at(ev, hz), over4_list(stats, ks.values()),
            ", ".join("%s %s" % (t, f(stats[k][1]["z"], 2)) for t, k in ks.items())))
        for t, k in ks.items():
            over[t] = over.get(t, 0) + stats[k][1]["over4"]
    text = "On C serial, %s." % "; ".join(lines)
    d, nd, perf = over.get("pmubpf", 0), over.get("pmubpf --no-dither", 0), over.get("perf", 0)
    zs = [(stats[ks["pmubpf"]][1]["z"], stats[ks["pmubpf --no-dither"]][1]["z"])
          for ks in keys.values() if "pmubpf" in ks and "pmubpf --no-dither" in ks]
    alike = all(abs(a - b) <= 0.2 * max(a, b) for a, b in zs)
    if d == 0 and nd == 0:
        text += (" In these runs its cycle locked onto pmubpf's timer neither with dither nor "
                 "without, so serial shows nothing for the dither to fix%s%s."
                 % (" and the two score alike" if alike else "",
                    "; perf, whose timer is fixed too, locked in %d run%s" % (perf, "s" if perf > 1 else "")
                    if perf else ""))
    elif nd > d:
        text += (" Without dither pmubpf locked in %d run%s, with it in %d." % (nd, "s" if nd > 1 else "", d))
    else:
        text += (" Dither did not reduce the lock-ups here (%d with it, %d without)." % (d, nd))
    return [text, ""]


def threads_text(stats):
    """What dither costs where nothing aliases: threads."""
    keys = by_freq(stats, "threads")
    pairs = [(ev, hz, ks) for (ev, hz), ks in keys.items() if "pmubpf" in ks and "pmubpf --no-dither" in ks]
    if not pairs:
        return []
    zs = [(stats[ks["pmubpf"]][1]["z"], stats[ks["pmubpf --no-dither"]][1]["z"]) for _, _, ks in pairs]
    bias = max(abs(v["err"]) for _, _, ks in pairs for v in stats[ks["pmubpf"]][0].values())
    nums = "; ".join("at %s, mean err/σ %s dithered against %s without (perf %s), mean abs. error %s "
                     "against %s pp" % (
                         at(ev, hz), f(stats[ks["pmubpf"]][1]["z"], 2), f(stats[ks["pmubpf --no-dither"]][1]["z"], 2),
                         f(stats[ks["perf"]][1]["z"], 2) if "perf" in ks else "–",
                         f(stats[ks["pmubpf"]][1]["abserr"], 2), f(stats[ks["pmubpf --no-dither"]][1]["abserr"], 2))
                     for ev, hz, ks in pairs)
    if all(d > 1.5 * nd for d, nd in zs):
        text = ("What dither costs shows where nothing aliases. On C threads a fixed period samples "
                "each CPU's time evenly (systematic sampling), which follows the scheduler's split "
                "very closely; a dithered one varies each CPU's rate by up to 15%% from segment to "
                "segment, so a thread's count also depends on which segments it happened to run in. "
                "The errors have no visible direction (per thread, the mean signed error over runs "
                "is at most %s pp either way: the per-function tables) but spread wider: %s. %s"
                % (f(bias, 2), nums, "That is still well below the 0.8 that independent random "
                   "samples would score." if max(d for d, _ in zs) < 0.6 else ""))
    else:
        text = ("Where nothing aliases, on C threads, dither costs no measurable accuracy here: %s." % nums)
    go = stats.get(("go-goroutines", "pmubpf", "cpu-clock", 999))
    if go:
        text += (" The Go runs use pmubpf's default, dithered (Go goroutines: mean err/σ %s, mean abs. "
                 "error %s pp)." % (f(go[1]["z"], 2), f(go[1]["abserr"], 2)))
    return [text, ""]


def dither_text(cfg, stats):
    """The "### Aliasing and timer dither" subsection: what a fixed timer
    period does to the workloads that run in step with it, and what
    pmubpf's timer dither changes; every number from stats."""
    out = ["### Aliasing and timer dither", "",
           "**Runs > 4σ** counts runs in which some function's share was more than 4σ off: "
           "far more than sampling noise allows (were the samples independent draws, about 1 "
           "run in %d would do it by chance with ten functions). Where it happens it is "
           "aliasing: a timer with a fixed period that runs in step with a loop sees the same "
           "few phases of it for a whole run. The serial workloads call f1..f10 in a fixed "
           "cycle (for C, serial.c's default is a fresh random order per round; the "
           "benchmark sets PMUBPF_SERIAL_FIXED=1 to keep the seed's cycle), so whether a run "
           "locks depends on how fast that run's loop happens to go, and it comes and goes "
           "from run to run; threads has no cycle to lock onto (the scheduler interleaves "
           "the threads). **alias** is built to lock: "
           "its rounds follow the wall clock, so a timer firing every %g ms on "
           "its CPU hits the same phase of every round. pmubpf's timer dither "
           "(user/timekeeper.c, docs/architecture.md) re-draws each CPU's cpu-clock period "
           "every 50–150 ms, 5–15%% off nominal, restarting the timer at a new phase, so no "
           "phase lasts; `--no-dither` keeps the period fixed, as perf does."
           % (about(1 / chance_over4(10)),
              cfg.get("alias_period_ns", 1000000) / 1e6), ""]
    out += alias_text(stats) + serial_text(stats) + threads_text(stats)
    return out


# --- the block ----------------------------------------------------------------

def accuracy_block(res):
    cfg, g = res["config"], acc_groups(res)
    # Runs during which other processes used more than the overhead
    # part's limit of the CPUs are kept apart: contention changes what a
    # per-CPU timer sees, so they get their own summary rows.
    limit = cfg.get("disturbed", 0.05)
    stats, contended, fallback = {}, {}, set()
    for k, v in g.items():
        quiet = [r for r in v if not disturbed(r, limit)]
        busy = [r for r in v if disturbed(r, limit)]
        stats[k] = fn_stats(quiet or v)
        if not quiet:
            fallback.add(k)
        elif busy:
            contended[k] = fn_stats(busy)
    ctools = [t for t in C_TOOLS if any(k[1] == t and k[0] in ("serial", "threads", "alias") for k in stats)]
    what = {"pmubpf": "`pmubpf -F HZ -o P -- WORKLOAD` (call graph: %s; timer dither on, its "
                      "default)" % pmubpf_graph(res["data"]),
            "pmubpf --no-dither": "`pmubpf -F HZ --no-dither -o P -- WORKLOAD` (fixed timer period)",
            "perf": "`perf record -F HZ -g -o P -- WORKLOAD`"}
    has_alias = any(k[0] == "alias" for k in stats)
    period = cfg.get("alias_period_ns", 1000000)
    out = ["## Accuracy", "", measured_line(res), "",
           "Shares of CPU time per function against ground truth the workloads measure "
           "themselves (each function's or thread's time on a CPU from its task-clock counter, tests/workloads/taskclock.h; before 2026-11-26, CLOCK_THREAD_CPUTIME_ID), "
           "as in the Go proposal for hardware-counter profiling (golang/go#36821, tables "
           "1–4). **serial**: ten functions f1..f10 where fK does K units (shares about "
           "K/55), one thread, called in a fixed cycle; **threads**: ten threads t1..t10 "
           "spinning on %d CPUs (the scheduler decides their shares, the truth records "
           "them)%s. Each ran %g s, %d times per configuration, under %s%s. A sample counts "
           "for the function that is its leaf frame (pmubpf: tests' check.py reading the "
           "profile; perf: `perf report --no-children --sort sym -F sample,sym`); shares are "
           "among the samples in the workload's functions (**outside** is the rest: clock "
           "reads, loop control, start-up)." % (
               res["env"]["cpus"],
               "; **alias** (tests/workloads/alias.c): one thread pinned to a CPU running rounds "
               "of exactly %g ms of wall-clock time on a fixed schedule, the first 70%% in hot_a, "
               "the rest in hot_b (see *Aliasing and timer dither* below)" % (period / 1e6)
               if has_alias else "",
               cfg["secs"], cfg["runs"],
               and_list(what[t] for t in ctools),
               (", the order rotating from run to run; alias at `-c %d` in place of `-F HZ` "
                "(perf: `perf record -c %d -e cpu-clock -g`)" % (period, period)) if has_alias
               else " (alternating which goes first)"), "",
           "Per function and configuration: **error** is the measured share minus the truth "
           "share (percentage points, mean over runs, signed); **err/σ** is the error's size "
           "in units of the binomial standard deviation σ = sqrt(q(1-q)/n) of that run's n "
           "samples, averaged over runs (the integration tests allow 3): a profiler whose "
           "samples were independent random draws would score about 0.8, the mean absolute "
           "value of a standard normal; a periodic timer samples more evenly than that "
           "(systematic sampling), so lower is possible. **CV** is the coefficient of "
           "variation of the measured share across runs, next to the CV that binomial noise "
           "alone would give. In the summary, **mean abs. error** is |measured − truth| "
           "averaged over runs and then over the functions, **worst function** the largest "
           "of those per-function means; likewise for err/σ.", ""]
    rows = []
    for k in sorted(stats, key=rank):
        for cond, st in (("quiet" if k not in fallback else "all †", stats), ("contended", contended)):
            if k not in st:
                continue
            s = st[k][1]
            rows.append([TITLE.get(k[0], k[0]), k[1], k[2], k[3] if not s["period"] else "%d (`-c %d`)" % (k[3], s["period"]),
                         cond, s["runs"], f(s["n"], 0), f(s["other"]),
                         f(s["abserr"], 2), f(s["maxerr"], 2), f(s["z"], 2), f(s["maxz"], 2),
                         s["over4"], f(s["cv"]), f(s["cvb"])])
    nbusy = sum(1 for r in res["data"] if disturbed(r, limit))
    out += ["### Summary", "",
            "*Runs* says which runs a row summarizes: **quiet** ones and, in their own rows, "
            "**contended** ones, disturbed by other processes (%d of %d runs here; %s); † marks "
            "a configuration with no quiet run. Per-function tables use the quiet runs."
            % (nbusy, len(res["data"]), disturb_rule(limit)), "",
            table(["workload", "tool", "event", "Hz", "runs", "count", "samples/run", "outside %",
                   "mean abs. error (pp)", "worst function (pp)", "mean err/σ", "worst function err/σ",
                   "runs > 4σ", "mean CV %", "binomial CV %"], rows, ["l", "l", "l", "r", "l"] + ["r"] * 10), ""]
    out += dither_text(cfg, stats)

    def per_fn(title, wl, ev, freq, tools):
        keys = [(wl, t, e or ev, fr or freq) for t, e, fr in tools]
        keys = [k for k in keys if k in stats]
        if not keys:
            return []
        names = list(stats[keys[0]][0])
        head = ["function", "truth %"]
        for k in keys:
            head += ["%s %%" % k[1], "error", "err/σ", "CV %"]
        rows = []
        for n in names:
            row = [n, f(stats[keys[0]][0][n]["truth"], 2)]
            for k in keys:
                v = stats[k][0][n]
                row += [f(v["got"], 2), "%+.2f" % v["err"], f(v["z"], 2), f(v["cv"])]
            rows.append(row)
        rates = dict.fromkeys(rate(k, stats[k][1]) for k in keys)
        return ["#### %s, %s" % (title, "/".join(rates)), "", table(head, rows), ""]

    out += ["### Per function", "",
            "C workloads under %s at each frequency (alias at its period); the Go workloads "
            "(tools/bench/gowork: the proposal's serial.go and goroutine.go, each goroutine "
            "locked to its own thread so its thread CPU time is its truth, GOMAXPROCS=%d) "
            "under pmubpf -F 999 and Go's own runtime/pprof CPU profiler (100 Hz) *in the "
            "same run*, so both are scored against the same truth." % (
                and_list(ctools), cfg["go_gomaxprocs"]), ""]
    ct = [(t, None, None) for t in C_TOOLS]
    for ev in cfg["events"]:
        for freq in cfg["freqs"]:
            out += per_fn("C serial", "serial", ev, freq, ct)
            out += per_fn("C threads", "threads", ev, freq, ct)
    alias = sorted({k[3] for k in stats if k[0] == "alias"})
    for freq in alias:
        out += per_fn("C alias", "alias", "cpu-clock", freq, ct)
    out += per_fn("Go serial", "go-serial", None, None, GO_TOOLS)
    out += per_fn("Go goroutines", "go-goroutines", None, None, GO_TOOLS)
    out += ["![expected vs measured share per function](img/accuracy.png)", "",
            "The same runs as errors, which shows what the shares hide where the truth itself "
            "moves from run to run (threads, goroutines: the scheduler's split differs each "
            "time, and a profiler that follows it exactly has a wide min–max of shares but "
            "not of errors):", "",
            "![measured minus truth per function](img/accuracy_error.png)", ""]
    return "\n".join(out), stats


def accuracy_headlines(stats):
    """The summary's accuracy lines, one per workload."""
    items = []
    for wl, title in WORKLOADS:
        parts = []
        for k in sorted((k for k in stats if k[0] == wl), key=lambda k: (rank(k)[3], k[3])):
            if k[2] in ("cpu-clock", "setitimer/timer_create"):
                s = stats[k][1]
                parts.append("%s %s: mean abs. error %s pp, mean err/σ %s, CV %s%%, %d/%d runs > 4σ" % (
                    k[1], rate(k, s), f(s["abserr"], 2), f(s["z"], 2), f(s["cv"]), s["over4"], s["runs"]))
        if parts:
            items.append("Accuracy, %s: %s." % (title, "; ".join(parts)))
    return items


def accuracy_plot(res, stats):
    """docs/img/accuracy.png (shares: truth vs measured) and
    accuracy_error.png (measured minus truth, per run): the C workloads at
    999 Hz, alias at its period, the Go workloads."""
    c999 = [(t, "cpu-clock", 999) for t in C_TOOLS]
    alias = sorted({k[3] for k in stats if k[0] == "alias"})
    panels = [("serial", "C serial (serial.c), 999 Hz", c999),
              ("threads", "C threads (threads.c), 999 Hz", c999)]
    if alias:
        s = stats[next(k for k in stats if k[0] == "alias" and k[3] == alias[0])][1]
        panels.append(("alias", "C alias (alias.c), %s" % rate(("alias", None, None, alias[0]), s),
                       [(t, "cpu-clock", alias[0]) for t in C_TOOLS]))
    panels += [("go-serial", "Go serial", GO_TOOLS), ("go-goroutines", "Go goroutines", GO_TOOLS)]
    for error in (False, True):
        data, plots = [], []
        for i, (wl, title, tools) in enumerate(panels):
            keys = [(wl,) + t for t in tools if (wl,) + t in stats]
            if not keys:
                continue
            names = list(stats[keys[0]][0])
            data.append("$truth%d << EOD\n%s\nEOD" % (i, "\n".join(
                "%d %.3f" % (j + 1, 0 if error else stats[keys[0]][0][n]["truth"]) for j, n in enumerate(names))))
            series = ["$truth%d using 1:2 with linespoints lc rgb 'black' pt 6 lw 1.5 title 'truth'" % i]
            for t, k in enumerate(keys):
                off = 0.3 * (t / (len(keys) - 1) - 0.5) if len(keys) > 1 else 0
                v = stats[k][0]
                cols = ("err", "errmin", "errmax") if error else ("got", "min", "max")
                data.append("$d%d_%d << EOD\n%s\nEOD" % (i, t, "\n".join(
                    "%.2f %.3f %.3f %.3f" % ((j + 1 + off,) + tuple(v[n][c] for c in cols))
                    for j, n in enumerate(names))))
                series.append("$d%d_%d using 1:2:3:4 with yerrorbars %s ps 0.8 title '%s%s'"
                              % (i, t, STYLE.get(k[1], "lc rgb '#2ca02c' pt 7"), k[1],
                                 "" if stats[k][1]["period"] else " (%d Hz)" % k[3]))
            xt = ", ".join("'%s' %d" % (n.split(".")[-1], j + 1) for j, n in enumerate(names))
            plots.append("set title '%s'\nset xrange [0.4:%g]\nset xtics (%s)\nplot %s" % (
                title, len(names) + 0.6, xt, ", \\\n     ".join(series)))
        name, what, yset = (("accuracy_error.png", "Measured minus truth per function, percentage points",
                             "set yrange [*:*]\nset ylabel 'error (pp)'") if error else
                            ("accuracy.png", "Share of CPU time per function: truth vs profilers",
                             "set yrange [0:*]\nset ylabel 'share (%)'"))
        rows = (len(plots) + 1) // 2
        script = "\n".join(data) + """
set terminal pngcairo size 1100,%d font 'sans,10' noenhanced
set output '%s'
set multiplot layout %d,2 title '%s (mean, min-max over runs)'
%s
set key below horizontal
set grid
""" % (430 * rows, IMG / name, rows, what, yset) + "\n".join(plots) + "\nunset multiplot\n"
        gnuplot(script)
