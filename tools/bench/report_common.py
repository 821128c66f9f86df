"""report_common.py — what tools/bench/report.py and its part modules
(report_accuracy.py) share: where results and documents live, loading a
part's results, number formatting, Markdown tables, gnuplot."""
import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "build" / "bench" / "results"
DOC = ROOT / "docs" / "benchmarks.md"
IMG = ROOT / "docs" / "img"


def load(part):
    try:
        return json.loads((RESULTS / (part + ".json")).read_text())
    except (OSError, ValueError):
        return None


def pmubpf_graph(runs):
    """How pmubpf walked user stacks in these runs ("dwarf", "fp")."""
    modes = sorted({r["call_graph"] for r in runs if r.get("tool") == "pmubpf" and r.get("call_graph")})
    return "/".join(modes) or "fp"


def disturb_rule(limit):
    return ("*disturbed* means: the run started while the machine was busy or another "
            "profiler's BPF program was attached (the benchmark waits for neither to be "
            "the case, within a time budget), or other processes used more than %d%% of "
            "the CPUs during it" % (100 * limit))


def disturbed(run, limit):
    """Others got in the way of this run (bench.py decides; older results
    only have the CPU share others used)."""
    return run.get("disturbed", run.get("foreign", 0) > limit)


def med(v):
    return statistics.median(v) if v else float("nan")


def f(x, nd=1):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return "%.*f" % (nd, x)


def table(head, rows, align=None):
    align = align or ["l"] + ["r"] * (len(head) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def measured_line(res):
    e = res["env"]
    return "*Measured %s on pmubpf %s%s, kernel %s (`make bench-%s`).*" % (
        e["date"], e["commit"], " (with uncommitted changes)" if e["dirty"] else "",
        e["kernel"], res["part"])


def natural(name):
    m = re.search(r"(\d+)$", name)
    return (name[: m.start()] if m else name, int(m.group(1)) if m else 0)


def gnuplot(script):
    IMG.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode:
        sys.exit("report.py: gnuplot failed: " + r.stderr.strip()[-500:])
