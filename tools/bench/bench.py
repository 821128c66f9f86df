#!/usr/bin/python3
"""bench.py — the measurements behind docs/benchmarks.md.

    tools/bench/bench.py PART...     (tools/bench.sh runs it as root)

PART is one of:
  overhead  slowdown of two workloads (cpu_work, syscall_work) under the
            floor (perf events, nothing attached), pmubpf -a (and, at 999 Hz,
            pmubpf -a --call-graph fp), perf record -a -g and bpftrace's
            profile probe, at each frequency;
            interleaved: alone, tool, alone, tool, ..., in a shuffled
            order per round; ratios against the same round's alone runs
  cost      each profiler's own CPU time, peak RSS, BPF run time per sample
            and map memory while recording system-wide for 10 s under load
  churn     process churn (tools/bench/churn_work.c: NCPU workers fork+exec
            /bin/true and /usr/bin/env true in turn) recorded for 10 s at
            999 Hz by pmubpf, pmubpf --call-graph fp and perf record -a -g
            (then perf report timed on its data), under the floor, and
            run alone; the
            tool's CPU and peak RSS, the load's processes/s, pmubpf's
            losses and process counts; rounds interleaved in a shuffled
            order; a disturbed run is repeated (BENCH_CHURN_RETRIES)
  write     build_ms/write_ms/peak RSS of a synthetic 1M-sample profile
            (tools/bench/write_bench.c)
  accuracy  shares per function against the workloads' measured truth:
            serial and threads under pmubpf (timer dither on, the
            default), pmubpf --no-dither and perf record at each
            frequency; alias (1 ms rounds) under the same three at a 1 ms
            period (-c 1000000); the Go workloads under pmubpf and
            runtime/pprof in the same run
  labels    ns per label set+restore pair; BPF ns/sample with and without
            a registered label slot

Each part writes build/bench/results/PART.json (environment, settings, raw
runs); tools/bench/report.py turns those into docs/benchmarks.md. Nothing
here judges speed: a slow machine gives slow numbers, never a failure.

Settings (environment):
  BENCH_ROUNDS=4        overhead rounds (each: every tool x frequency once)
  BENCH_RUNS=10         accuracy runs per workload, tool and frequency
  BENCH_FREQS=99,999,9999      overhead and cost frequencies (Hz)
  BENCH_ACC_FREQS=999,4999     accuracy frequencies (Hz)
  BENCH_WORK_SECS=1.5   overhead workload length alone (calibrated)
  BENCH_ACC_SECS=2      accuracy workload length
  BENCH_COST_SECS=10    cost recording length
  BENCH_CHURN_ROUNDS=3  churn rounds (each: alone and every tool once)
  BENCH_CHURN_SECS=10   churn recording length
  BENCH_CHURN_RETRIES=4 churn runs repeated because they were disturbed, at most
  BENCH_QUIET_WAIT=10   seconds to wait for an idle machine before a run
  BENCH_QUIET_BUDGET=120  seconds of such waiting in all
"""
import functools
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BB = ROOT / "build" / "bench"
BT = ROOT / "build" / "tests"
RESULTS = BB / "results"
PMUBPF = ROOT / "pmubpf"
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import check  # noqa: E402  (load() and leaf(): the tests' profile reader)


def env_int(name, default):
    return int(os.environ.get(name) or default)


def env_list(name, default):
    return [int(x) for x in (os.environ.get(name) or default).split(",") if x]


ROUNDS = env_int("BENCH_ROUNDS", 4)
RUNS = env_int("BENCH_RUNS", 10)
FREQS = env_list("BENCH_FREQS", "99,999,9999")
ACC_FREQS = env_list("BENCH_ACC_FREQS", "999,4999")
WORK_SECS = float(os.environ.get("BENCH_WORK_SECS") or 1.5)
ACC_SECS = float(os.environ.get("BENCH_ACC_SECS") or 2)
COST_SECS = float(os.environ.get("BENCH_COST_SECS") or 10)
CHURN_ROUNDS = env_int("BENCH_CHURN_ROUNDS", 3)
CHURN_SECS = float(os.environ.get("BENCH_CHURN_SECS") or 10)
CHURN_RETRIES = env_int("BENCH_CHURN_RETRIES", 4)
QUIET_WAIT = float(os.environ.get("BENCH_QUIET_WAIT") or 10)
QUIET_BUDGET = float(os.environ.get("BENCH_QUIET_BUDGET") or 120)
QUIET_BUSY = 0.10        # a machine below 10% busy is "quiet"
DISTURBED = 0.05         # a run where others used >5% of the CPUs
NCPU = len(os.sched_getaffinity(0))
TICK = os.sysconf("SC_CLK_TCK")
TMP = Path(tempfile.mkdtemp(prefix="pmubpf-bench."))
WORKLOADS = ["cpu_work", "syscall_work"]
BPFTRACE_PROG = "profile:hz:%d { @[ustack, kstack] = count(); }"


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    """subprocess.run with text output captured; raises on failure."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("check", True)
    return subprocess.run([str(c) for c in cmd], **kw)


def first_line(cmd):
    try:
        r = run(cmd, check=False)
        return ((r.stdout or r.stderr).strip().splitlines() or [""])[0]
    except OSError:
        return "not installed"


# --- system state ---------------------------------------------------------

def sysctl(name, value=None):
    path = Path("/proc/sys") / name.replace(".", "/")
    if value is not None:
        path.write_text(str(value))
    return path.read_text().strip()


# The kernel lowers perf_event_max_sample_rate when sampling interrupts
# take too long; every tool run starts from the same value (tools/bench.sh
# saved the original and restores it at exit).
MAX_RATE = int(os.environ.get("BENCH_SAVED_MAX_RATE") or sysctl("kernel.perf_event_max_sample_rate"))
if MAX_RATE < max(FREQS + ACC_FREQS):
    log("perf_event_max_sample_rate is %d (lowered earlier?): using the kernel default 100000" % MAX_RATE)
    MAX_RATE = 100000
BPF_STATS = os.environ.get("BENCH_SAVED_BPF_STATS") or sysctl("kernel.bpf_stats_enabled")


def reset_max_rate():
    sysctl("kernel.perf_event_max_sample_rate", MAX_RATE)


def throttled():
    return int(sysctl("kernel.perf_event_max_sample_rate")) < MAX_RATE


def has_pmu():
    r = run(["perf", "stat", "-e", "cycles", "-x,", "true"], check=False)
    return r.returncode == 0 and "not supported" not in r.stderr and "not counted" not in r.stderr


def stat_ticks():
    """(busy, steal) clock ticks of all CPUs from /proc/stat."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = f
    return user + nice + system + irq + softirq, steal


def busy_fraction(dt=0.25):
    b0, _ = stat_ticks()
    time.sleep(dt)
    b1, _ = stat_ticks()
    return (b1 - b0) / TICK / (dt * NCPU)


quiet_budget = [QUIET_BUDGET]


def other_profilers():
    """perf_event BPF programs loaded now (by someone else: called before
    this benchmark starts a tool). Their work in every sampling interrupt
    would be charged to our workload, unseen by Window."""
    out = json.loads(run(["bpftool", "prog", "show", "-j"]).stdout or "[]")
    return sum(1 for p in out if p.get("type") == "perf_event")


def wait_quiet():
    """Wait (up to QUIET_WAIT s) until the machine is idle and no other
    profiler is attached: other people's jobs on a shared VM would
    otherwise land in the measurements. All the waiting together is
    capped at QUIET_BUDGET s, so a machine that stays busy costs minutes,
    not hours (its runs are then marked disturbed). Returns whether it got
    quiet."""
    deadline = time.time() + min(QUIET_WAIT, quiet_budget[0])
    t0 = time.time()
    try:
        while True:
            if busy_fraction() < QUIET_BUSY and not other_profilers():
                return True
            if time.time() > deadline:
                return False
            time.sleep(0.5)
    finally:
        quiet_budget[0] = max(0.0, quiet_budget[0] - (time.time() - t0))


def our_ticks():
    """CPU ticks of this process and its descendants, including children
    they have reaped (cutime/cstime), so a process that ends inside a
    window still counts."""
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            s = open("/proc/%s/stat" % d).read()
        except OSError:
            continue
        f = s[s.rindex(")") + 2:].split()
        procs[int(d)] = (int(f[1]), sum(int(x) for x in f[11:15]))
    ours, todo = set(), [os.getpid()]
    while todo:
        p = todo.pop()
        ours.add(p)
        todo.extend(c for c, (pp, _) in procs.items() if pp == p and c not in ours)
    return sum(procs[p][1] for p in ours if p in procs)


class Window:
    """How much CPU others (not this benchmark's processes) used over a
    span: /proc/stat's busy time minus ours, as a fraction of all CPUs."""

    def __enter__(self):
        self.t0, (self.b0, self.s0), self.o0 = time.time(), stat_ticks(), our_ticks()
        return self

    def __exit__(self, *exc):
        wall = time.time() - self.t0
        (b1, s1), o1 = stat_ticks(), our_ticks()
        cap = wall * NCPU
        self.foreign = max(0.0, ((b1 - self.b0) - (o1 - self.o0)) / TICK / cap)
        self.steal = (s1 - self.s0) / TICK / cap
        return False

    def disturbed(self, quiet):
        """Did others get in the way: busy (or profiling) when the run
        started, or using more than DISTURBED of the CPUs during it?"""
        return not quiet or self.foreign > DISTURBED


def proc_cpu(pid):
    """user + system seconds of a live process (all its threads)."""
    s = open("/proc/%d/stat" % pid).read()
    f = s[s.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / TICK


def bpf_fds(pid):
    """{prog_id: prog_type} and {map_id: memlock bytes} of the BPF
    programs and maps process pid holds, from /proc/PID/fdinfo (this
    bpftool cannot list owners: it was built without pid support)."""
    progs, maps = {}, {}
    fdinfo = Path("/proc/%d/fdinfo" % pid)
    for fd in fdinfo.iterdir():
        try:
            info = dict(l.split(":", 1) for l in fd.read_text().splitlines() if ":" in l)
        except OSError:
            continue
        if "prog_type" in info:
            progs[int(info["prog_id"])] = int(info["prog_type"])
        elif "map_id" in info:
            maps[int(info["map_id"])] = int(info["memlock"])
    return progs, maps


def bpf_sample_stats(pid):
    """(run_time_ns, run_cnt, name) of pid's busiest perf_event program
    (bpftrace also has one for its interval probe), as `bpftool prog show
    -j` reports them."""
    best = (0, 0, None)
    for prog_id, ptype in bpf_fds(pid)[0].items():
        if ptype != 7:  # BPF_PROG_TYPE_PERF_EVENT
            continue
        p = json.loads(run(["bpftool", "prog", "show", "id", prog_id, "-j"]).stdout)
        if p.get("run_cnt", 0) >= best[1]:
            best = (p.get("run_time_ns", 0), p.get("run_cnt", 0), p.get("name"))
    return best


def bpf_prog_stats(pid):
    """{name: [run_time_ns, run_cnt]} of every BPF program process pid
    holds (kernel.bpf_stats_enabled must be on)."""
    out = {}
    for prog_id in bpf_fds(pid)[0]:
        p = json.loads(run(["bpftool", "prog", "show", "id", prog_id, "-j"], check=False).stdout or "{}")
        if p.get("name"):
            out[p["name"]] = [p.get("run_time_ns", 0), p.get("run_cnt", 0)]
    return out


def wait_for(path, text, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError("%s exited %s: %s" % (proc.args[0], proc.returncode,
                                                     path.read_text(errors="replace")[-500:]))
        time.sleep(0.02)
    raise RuntimeError("%s not ready after %d s" % (proc.args[0], timeout))


def stop(proc, sig=signal.SIGINT, timeout=120):
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pmubpf_samples(stderr):
    """Samples pmubpf took, from its summary lines (kept + idle left out)."""
    m, idle = re.search(r": (\d+) samples", stderr), re.search(r"(\d+) idle samples", stderr)
    return (int(m.group(1)) if m else 0) + (int(idle.group(1)) if idle else 0)


def call_graph(comments):
    """pmubpf's user-stack mode (fp, dwarf), from its profile's comments
    (or pprof_dump's whole JSON text)."""
    m = re.search(r"call graph: (\w+)", comments)
    return m.group(1) if m else "fp"


def perf_samples(stderr):
    m = re.search(r"\((\d+) samples\)", stderr)
    return int(m.group(1)) if m else None


def bpftrace_samples(output):
    """Sum of the counts bpftrace printed for its @[ustack, kstack] map."""
    return sum(int(x) for x in re.findall(r"\]: (\d+)$", output.read_text(), re.M))


def settle(pid, timeout=5.0):
    """Wait until process pid has used no CPU for 0.2 s (clock ticks are
    10 ms); returns the CPU seconds it had used by then."""
    deadline, last, quiet_for = time.time() + timeout, proc_cpu(pid), 0
    while time.time() < deadline and quiet_for < 2:
        time.sleep(0.1)
        now = proc_cpu(pid)
        quiet_for = quiet_for + 1 if now == last else 0
        last = now
    return last


def environment():
    cpuinfo = open("/proc/cpuinfo").read()
    model = re.search(r"model name\s*:\s*(.*)", cpuinfo)
    mem = re.search(r"MemTotal:\s*(\d+)", open("/proc/meminfo").read())
    git = lambda *a: run(["git", "-C", ROOT] + list(a), check=False).stdout.strip()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": model.group(1) if model else "unknown",
        "cpus": NCPU,
        "memory_gib": round(int(mem.group(1)) / 2**20, 1) if mem else None,
        "hypervisor": " hypervisor" in cpuinfo,
        "kernel": os.uname().release,
        "kernel_build": os.uname().version,
        "os": "Debian " + Path("/etc/debian_version").read_text().strip(),
        "pmu": has_pmu(),
        "tools": {
            "pmubpf": first_line([PMUBPF, "--version"]),
            "perf": first_line(["perf", "--version"]),
            "bpftrace": first_line(["bpftrace", "--version"]),
            "bpftool": " / ".join(run(["bpftool", "version"], check=False).stdout.splitlines()[:2]),
            "go": first_line(["go", "version"]),
            "clang": first_line(["clang", "--version"]),
            "gcc": first_line(["gcc", "--version"]),
            "gnuplot": first_line(["gnuplot", "--version"]),
            "python": first_line(["/usr/bin/python3", "--version"]),
            "libbpf-dev": first_line(["dpkg-query", "-W", "-f=${Version}", "libbpf-dev"]),
        },
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no", "--", "user", "bpf", "include")),
        "sysctl": {
            "kernel.perf_event_max_sample_rate": MAX_RATE,
            "kernel.perf_cpu_time_max_percent": int(sysctl("kernel.perf_cpu_time_max_percent")),
            "net.core.bpf_jit_enable": int(sysctl("net.core.bpf_jit_enable")),
        },
    }


PART_START = [time.time()]


def save(part, config, data):
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {"part": part, "env": environment(), "seconds": round(time.time() - PART_START[0]),
           "config": config, "data": data}
    tmp = RESULTS / (part + ".json.tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n")
    tmp.rename(RESULTS / (part + ".json"))
    log("%s: results in %s" % (part, RESULTS / (part + ".json")))


def events():
    return ["cpu-clock"] + (["cycles"] if has_pmu() else [])


# --- overhead -------------------------------------------------------------

def work_cmd(wl, units, threads=NCPU):
    return [str(BB / wl), str(threads), str(units), str(TMP / "work.out")]


def work_result():
    f = (TMP / "work.out").read_text().split()
    return dict(zip(f[0::2], (int(x) for x in f[1::2])))


@functools.lru_cache(maxsize=None)
def calibrate(wl):
    """Units for WORK_SECS of elapsed time alone (once per run of bench.py)."""
    run(work_cmd(wl, 100))
    guess = max(1, int(100 * WORK_SECS * 1e9 / work_result()["elapsed_ns"]))
    times = []
    for _ in range(3):
        wait_quiet()
        run(work_cmd(wl, guess))
        times.append(work_result()["elapsed_ns"])
    return max(1, int(guess * WORK_SECS * 1e9 / statistics.median(times)))


def measure(tool, event, freq, wl, units):
    """One overhead run: the workload alone or under a tool."""
    quiet = wait_quiet()
    reset_max_rate()
    (TMP / "work.out").unlink(missing_ok=True)
    wcmd = work_cmd(wl, units)
    rec = {"tool": tool, "event": event, "freq": freq, "workload": wl, "quiet": quiet}
    samples = None
    if tool == "alone":
        with Window() as w:
            run(wcmd)
    elif tool == "floor":
        p = subprocess.Popen([str(BB / "floor"), str(freq), event], stdout=subprocess.PIPE, text=True)
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("floor did not start")
        with Window() as w:
            run(wcmd)
        stop(p, signal.SIGTERM)
    elif tool in ("pmubpf", "pmubpf-fp"):
        err = TMP / "pmubpf.err"
        extra = ["--call-graph", "fp"] if tool == "pmubpf-fp" else []
        with open(err, "w") as ef:
            p = subprocess.Popen([str(PMUBPF), "-a", "-e", event, "-F", str(freq), "-v",
                                  "-o", str(TMP / "o.pb.gz")] + extra, stdout=subprocess.DEVNULL, stderr=ef)
        wait_for(err, "pmubpf: recording", p)
        # Right after attaching, pmubpf snapshots every process it sees
        # sampled (this runner among them); let that finish, so the run
        # measures recording, not start-up (which the cost part covers).
        rec["startup_cpu_s"] = settle(p.pid)
        cpu0 = proc_cpu(p.pid)
        with Window() as w:
            run(wcmd)
        rec["tool_cpu_s"] = proc_cpu(p.pid) - cpu0  # its own process, while the workload ran
        stop(p)
        # pmubpf recorded well before the workload (while settling, on an
        # idle machine): the sampling rate is the workload's own samples
        # over the workload's time
        prof = check.load(str(TMP / "o.pb.gz"))
        samples = sum(s["values"][0] for s in prof["samples"] if s["labels"].get("comm") == wl)
        rec["call_graph"] = call_graph(" ".join(prof["comments"]))
    elif tool == "perf":
        with Window() as w:
            r = run(["perf", "record", "-e", event, "-F", freq, "-a", "-g", "-o", TMP / "perf.data", "--"] + wcmd)
        samples = perf_samples(r.stderr)
    elif tool == "bpftrace":
        with Window() as w:
            r = run(["bpftrace", "-o", TMP / "bt.out", "-e", BPFTRACE_PROG % freq, "-c", " ".join(wcmd)])
        samples = bpftrace_samples(TMP / "bt.out")
        rec["stack_errors"] = r.stderr.count("failed to look up stack id")
    res = work_result()
    rec.update(elapsed_ns=res["elapsed_ns"], cpu_ns=res["cpu_ns"], foreign=round(w.foreign, 4),
               disturbed=w.disturbed(quiet),
               steal=round(w.steal, 4), throttled=tool != "alone" and throttled())
    if samples is not None:
        rec["samples"] = samples
        rec["record_s"] = res["elapsed_ns"] / 1e9
    return rec


def overhead():
    evs = events()
    units = {wl: calibrate(wl) for wl in WORKLOADS}
    log("overhead: units %s for %.1f s alone; %d rounds" % (units, WORK_SECS, ROUNDS))
    configs = [(t, e, f) for e in evs for f in FREQS for t in ("floor", "pmubpf", "perf", "bpftrace")
               if t != "bpftrace" or e == "cpu-clock"]
    # pmubpf walking user stacks by frame pointer, as perf -g and bpftrace
    # do (its default on x86-64 is dwarf): at 999 Hz only, to save time
    configs += [("pmubpf-fp", e, 999) for e in evs if 999 in FREQS]
    runs = []
    for r in range(ROUNDS):
        for wl in WORKLOADS:
            order = configs[:]
            random.Random("%d/%s" % (r, wl)).shuffle(order)
            seq = [("alone", None, None)]
            for c in order:
                seq += [c, ("alone", None, None)]
            for tool, ev, freq in seq:
                rec = measure(tool, ev, freq, wl, units[wl])
                rec["round"] = r
                runs.append(rec)
                log("overhead %d/%d %s %s%s: %.3f s%s" % (
                    r + 1, ROUNDS, wl, tool, " %s %d Hz" % (ev, freq) if ev else "",
                    rec["elapsed_ns"] / 1e9, " (others used %.0f%%)" % (100 * rec["foreign"])
                    if rec["disturbed"] else ""))
    save("overhead", {"rounds": ROUNDS, "freqs": FREQS, "events": evs, "units": units,
                      "work_secs": WORK_SECS, "threads": NCPU, "disturbed": DISTURBED,
                      "bpftrace": BPFTRACE_PROG}, runs)


# --- cost -----------------------------------------------------------------

def cost():
    evs = events()
    units = {wl: calibrate(wl) for wl in WORKLOADS}
    runs = []
    for ev in evs:
        for freq in FREQS:
            for tool in ("pmubpf", "perf", "bpftrace"):
                if tool == "bpftrace" and ev != "cpu-clock":
                    continue
                runs.append(cost_run(tool, ev, freq, units))
                r = runs[-1]
                log("cost %s %s %d Hz: %.2f s CPU, %d MB peak RSS, %s ns/sample" % (
                    tool, ev, freq, r["cpu_s"], r["maxrss_kb"] // 1024,
                    "%.0f" % r["bpf_ns_per_run"] if r.get("bpf_ns_per_run") else "-"))
    # What a BPF program costs per sample on this machine, piece by
    # piece: bpftrace's profile probe doing less and less.
    probes = []
    for what in PROBE_PARTS:
        r = cost_run("bpftrace", "cpu-clock", 999, units, secs=6,
                     prog="profile:hz:%d { " + what + " }")
        probes.append({"probe": what, "bpf_ns_per_run": r["bpf_ns_per_run"], "bpf_run_cnt": r["bpf_run_cnt"]})
        log("cost: bpftrace { %s }: %s ns/run" % (what, f"{r['bpf_ns_per_run']:.0f}" if r["bpf_ns_per_run"] else "-"))
    save("cost", {"secs": COST_SECS, "freqs": FREQS, "events": evs,
                  "load": "cpu_work with %d thread(s) + syscall_work with %d thread(s)"
                  % ((NCPU + 1) // 2, NCPU // 2)}, {"runs": runs, "probes": probes})


PROBE_PARTS = ["@ = count();", "@[kstack] = count();", "@[ustack] = count();", "@[ustack, kstack] = count();"]


def cost_run(tool, event, freq, units, secs=COST_SECS, prog=BPFTRACE_PROG):
    """One tool recording system-wide for secs while both workloads keep
    every CPU busy; the tool runs under the rusage helper."""
    quiet = wait_quiet()
    reset_max_rate()
    long_units = {wl: int(u * (secs + 8) / WORK_SECS) for wl, u in units.items()}
    load = [subprocess.Popen([str(BB / "cpu_work"), str((NCPU + 1) // 2), str(long_units["cpu_work"]), "/dev/null"])]
    if NCPU // 2:
        load.append(subprocess.Popen([str(BB / "syscall_work"), str(NCPU // 2),
                                      str(long_units["syscall_work"]), "/dev/null"]))
    out = TMP / ("cost." + tool)
    if tool == "pmubpf":
        cmd = [PMUBPF, "-a", "-e", event, "-F", freq, "-d", secs, "-o", out]
    elif tool == "perf":
        cmd = ["perf", "record", "-e", event, "-F", freq, "-a", "-g", "-o", out, "--", "sleep", secs]
    else:
        cmd = ["bpftrace", "-o", out, "-e", (prog % freq) + " interval:s:%d { exit(); }" % secs]
    sysctl("kernel.bpf_stats_enabled", 1)
    with open(TMP / "cost.err", "w") as err, Window() as w:
        t0 = time.time()
        helper = subprocess.Popen([str(BB / "rusage"), str(TMP / "rusage")] + [str(c) for c in cmd],
                                  stdout=subprocess.DEVNULL, stderr=err)
        time.sleep(3)
        pid = int(Path("/proc/%d/task/%d/children" % (helper.pid, helper.pid)).read_text().split()[0])
        cpu_a = proc_cpu(pid)
        time.sleep(max(0.0, t0 + secs - 0.5 - time.time()))
        cpu_b, t_b = proc_cpu(pid), time.time()
        run_ns, run_cnt, prog_name = bpf_sample_stats(pid)
        map_bytes = sum(bpf_fds(pid)[1].values())
        helper.wait()
    sysctl("kernel.bpf_stats_enabled", BPF_STATS)
    for l in load:
        l.kill()
        l.wait()
    f = (TMP / "rusage").read_text().split()
    ru = dict(zip(f[0::2], (float(x) for x in f[1::2])))
    text = (TMP / "cost.err").read_text(errors="replace")
    if tool == "bpftrace":
        samples = bpftrace_samples(out)
    else:
        samples = (pmubpf_samples if tool == "pmubpf" else perf_samples)(text)
    graph = call_graph(run([BT / "pprof_dump", out]).stdout) if tool == "pmubpf" else "fp"
    lost = "failed to look up stack id"
    return {"tool": tool, "event": event, "freq": freq, "quiet": quiet, "foreign": round(w.foreign, 4),
            "disturbed": w.disturbed(quiet),
            "status": int(ru["status"]), "cpu_s": ru["user_s"] + ru["sys_s"], "maxrss_kb": int(ru["maxrss_kb"]),
            "record_cpu_frac": (cpu_b - cpu_a) / (t_b - t0 - 3),
            "bpf_run_time_ns": run_ns, "bpf_run_cnt": run_cnt, "bpf_prog": prog_name,
            "bpf_ns_per_run": run_ns / run_cnt if run_cnt else None,
            "bpf_map_bytes": map_bytes, "samples": samples,
            "output_bytes": out.stat().st_size if out.exists() else None,
            "throttled": throttled(), "stack_errors": text.count(lost), "call_graph": graph,
            "stderr_tail": [l for l in text.splitlines() if lost not in l][-5:]}


# --- churn ----------------------------------------------------------------

# Who records the churn: pmubpf with its defaults, pmubpf walking user
# stacks by frame pointer, pmubpf without its files' tables (a process's
# first samples by frame pointer: PMUBPF_NO_FILE_TABLES, the way before
# issue 39), perf record -a -g; "alone" runs the load with
# no tool, for the churn rate without profiling; "floor" opens the same
# cpu-clock events and attaches nothing (tools/bench/floor.c), for what
# the sampling interrupts alone cost the load on this machine.
CHURN_TOOLS = ["alone", "floor", "pmubpf", "pmubpf-fp", "pmubpf-nofiles", "perf"]
CHURN_FREQ = 999
CHURN_LEAD = 1.0   # seconds the load runs before the tool starts
# The steady state: from this long after the tool's start to 0.5 s
# before its recording ends (start-up and writing left out).
CHURN_STEADY_FROM = 2.0


def churn_progress(path):
    """[(monotonic s, processes finished)] and the final line of
    churn_work's OUT."""
    points, final = [], {}
    for line in path.read_text().splitlines():
        f = line.split()
        if f[:1] == ["t_ns"]:
            points.append((int(f[1]) / 1e9, int(f[3])))
        elif f[:1] == ["elapsed_ns"]:
            final = dict(zip(f[0::2], (int(x) for x in f[1::2])))
    return points, final


def churn_at(points, t):
    """Processes finished by monotonic time t, interpolated between the
    load's 50 ms progress lines."""
    for (t0, n0), (t1, n1) in zip(points, points[1:]):
        if t0 <= t <= t1:
            return n0 + (n1 - n0) * (t - t0) / (t1 - t0) if t1 > t0 else n1
    return points[-1][1] if points and t > points[-1][0] else (points[0][1] if points else 0)


def pmubpf_churn_stats(comments):
    """Losses and process counts from pmubpf's profile comments."""
    text = "\n".join(comments)
    out = {"call_graph": call_graph(text)}
    m = re.search(r"processes: (\d+) seen, (\d+) gone before their maps were read, (\d+) mapped files "
                  r"unreadable, (\d+) maps re-reads, (\d+) mappings from (?:mmap reports|BPF's images)"
                  r"(?:, (\d+) images put together from mmap reports)?"
                  r"(?:[^,]*, (\d+) live ones from mmap reports)?"
                  r"(?:[^,]*, (\d+) live ones read from /proc \((\d+) of them)?", text)
    if m:
        out.update(zip(("procs_seen", "procs_gone", "files_unreadable", "maps_rereads", "maps_from_reports",
                        "procs_from_log", "procs_live_from_log", "procs_live_read", "procs_live_read_moving"),
                       (int(x or 0) for x in m.groups())))
    m = re.search(r"images: sent by BPF[^:]*: (\d+) mappings, (\d+) images of processes gone", text)
    if m:
        out["procs_from_images"] = int(m.group(2))
    m = re.search(r"(\d+) first sampled with no address space left", text)
    if m:
        out["procs_nomm"] = int(m.group(1))
    for key, what in (("lost_samples", "samples"), ("lost_ustacks", "user stacks"),
                      ("lost_kstacks", "kernel stacks"), ("lost_notices", "process/label notices")):
        m = re.search(r"lost: (\d+) %s:" % re.escape(what), text)
        out[key] = int(m.group(1)) if m else 0
    m = re.search(r"dwarf: (\d+) user stacks walked by frame pointer instead", text)
    out["dwarf_no_table"] = int(m.group(1)) if m else 0
    m = re.search(r"dwarf: (\d+) user stacks unwound by the tables of the files", text)
    out["dwarf_by_file"] = int(m.group(1)) if m else 0
    m = re.search(r"dwarf: (\d+) user stacks have frames unwound by frame pointer: no CFI", text)
    out["dwarf_no_cfi"] = int(m.group(1)) if m else 0
    m = re.search(r"unwind tables: .*?(\d+) processes,", text)
    if m:
        out["unwind_procs"] = int(m.group(1))
    return out


def rusage_result(path):
    f = path.read_text().split()
    return dict(zip(f[0::2], (float(x) for x in f[1::2])))


def churn_run(tool, secs):
    """One run: the churn load on every CPU; after CHURN_LEAD s, tool
    records the whole machine for secs under the rusage helper (alone:
    nothing, for secs). The load's rate is taken over the tool's whole
    life (start-up, recording, writing), from the load's own progress
    lines."""
    quiet = wait_quiet()
    reset_max_rate()
    prog = TMP / "churn.progress"
    out = TMP / ("churn." + tool)
    out.unlink(missing_ok=True)
    rec = {"tool": tool, "freq": CHURN_FREQ, "quiet": quiet}
    env = dict(os.environ)
    if tool == "pmubpf-nofiles":
        env["PMUBPF_NO_FILE_TABLES"] = "1"
    if tool.startswith("pmubpf"):
        cmd = [PMUBPF, "-a", "-e", "cpu-clock", "-F", CHURN_FREQ, "-d", "%g" % secs, "-o", out] + \
              (["--call-graph", "fp"] if tool == "pmubpf-fp" else [])
    elif tool == "perf":
        cmd = ["perf", "record", "-e", "cpu-clock", "-F", CHURN_FREQ, "-a", "-g", "-o", out, "--", "sleep", "%g" % secs]
    with open(TMP / "churn.err", "w") as err, Window() as w:
        load = subprocess.Popen([str(BB / "churn_work"), "%g" % (secs + 600), str(NCPU), str(prog)])
        time.sleep(CHURN_LEAD)
        t_a = time.monotonic()
        if tool == "alone":
            time.sleep(secs)
        elif tool == "floor":
            fl = subprocess.Popen([str(BB / "floor"), str(CHURN_FREQ), "cpu-clock"], stdout=subprocess.PIPE,
                                  text=True)
            if fl.stdout.readline().strip() != "ready":
                raise RuntimeError("floor did not start")
            time.sleep(secs)
            stop(fl, signal.SIGTERM)
        else:
            # pmubpf's BPF programs' own time, read while it records:
            # bpf_stats on for its runs only (two clock reads per program
            # run, ~13000 runs/s under this load: ~0.03% of the machine).
            stats = tool.startswith("pmubpf")
            if stats:
                sysctl("kernel.bpf_stats_enabled", 1)
            helper = subprocess.Popen([str(BB / "rusage"), str(TMP / "rusage")] + [str(c) for c in cmd],
                                      stdout=subprocess.DEVNULL, stderr=err, env=env)
            try:
                if stats:
                    time.sleep(max(0.0, secs - 0.5))
                    kids = Path("/proc/%d/task/%d/children" % (helper.pid, helper.pid)).read_text().split()
                    if kids:
                        rec["bpf_progs"] = bpf_prog_stats(int(kids[0]))
                        rec["bpf_progs_s"] = round(time.monotonic() - t_a, 3)
                helper.wait(secs + 60)
            except subprocess.TimeoutExpired:  # stopped (SIGINT), still measured
                stop(helper)
            finally:
                if stats:
                    sysctl("kernel.bpf_stats_enabled", BPF_STATS)
        t_b = time.monotonic()
        load.send_signal(signal.SIGTERM)
        load.wait()
    points, final = churn_progress(prog)
    n = churn_at(points, t_b) - churn_at(points, t_a)
    s_a, s_b = t_a + CHURN_STEADY_FROM, t_a + secs - 0.5
    if s_b > s_a:
        rec["steady_procs_per_s"] = (churn_at(points, s_b) - churn_at(points, s_a)) / (s_b - s_a)
    rec.update(window_s=round(t_b - t_a, 3), processes=round(n), procs_per_s=n / (t_b - t_a),
               load_failed=final.get("failed"), foreign=round(w.foreign, 4), disturbed=w.disturbed(quiet),
               steal=round(w.steal, 4), throttled=tool != "alone" and throttled())
    if tool in ("alone", "floor"):
        return rec
    ru = rusage_result(TMP / "rusage")
    text = (TMP / "churn.err").read_text(errors="replace")
    rec.update(status=int(ru["status"]), cpu_s=ru["user_s"] + ru["sys_s"], user_s=ru["user_s"],
               sys_s=ru["sys_s"], maxrss_kb=int(ru["maxrss_kb"]), vcsw=int(ru.get("vcsw", 0)),
               output_bytes=out.stat().st_size if out.exists() else None,
               stderr_tail=text.splitlines()[-6:])
    if rec["status"]:
        raise RuntimeError("%s exited %d: %s" % (tool, rec["status"], text[-500:]))
    if tool == "perf":
        rec["samples"] = perf_samples(text)
        m = re.search(r"lost (\d+) chunks", text)
        rec["lost_chunks"] = int(m.group(1)) if m else 0
        # perf record defers symbolization (and most of the rest) to perf
        # report: time that too, on the same data, after the load stopped
        t0 = time.monotonic()
        rep = run([BB / "rusage", TMP / "rusage", "sh", "-c",
                   'exec perf report -i "$0" --stdio > /dev/null 2>&1', out], check=False)
        ru = rusage_result(TMP / "rusage")
        rec.update(report_status=rep.returncode, report_wall_s=round(time.monotonic() - t0, 3),
                   report_cpu_s=ru["user_s"] + ru["sys_s"], report_maxrss_kb=int(ru["maxrss_kb"]))
    else:
        rec["samples"] = pmubpf_samples(text)
        m = re.search(r"\((\d+) distinct\)", text)
        rec["distinct"] = int(m.group(1)) if m else None
        rec.update(pmubpf_churn_stats(check.load(str(out))["comments"]))
    return rec


def churn():
    secs = CHURN_SECS
    runs, retries = [], [CHURN_RETRIES]
    for r in range(CHURN_ROUNDS):
        order = CHURN_TOOLS[:]
        random.Random("churn/%d" % r).shuffle(order)
        for tool in order:
            while True:
                rec = churn_run(tool, secs)
                rec["round"] = r
                runs.append(rec)
                log("churn %d/%d %s: %.0f processes/s%s%s" % (
                    r + 1, CHURN_ROUNDS, tool, rec["procs_per_s"],
                    ", %.2f s CPU, %d MB peak RSS%s" % (
                        rec["cpu_s"], rec["maxrss_kb"] // 1024,
                        "; perf report %.2f s CPU" % rec["report_cpu_s"] if "report_cpu_s" in rec else "")
                    if "cpu_s" in rec else "",
                    " (others used %.0f%%)" % (100 * rec["foreign"]) if rec["disturbed"] else ""))
                # A disturbed run is run again while the part's retries
                # last; the disturbed one stays in the results, marked.
                if not rec["disturbed"] or retries[0] <= 0:
                    break
                retries[0] -= 1
                rec["repeated"] = True
                log("churn: disturbed, again (%d repeats left)" % retries[0])
    save("churn", {"rounds": CHURN_ROUNDS, "secs": secs, "freq": CHURN_FREQ, "event": "cpu-clock",
                   "tools": CHURN_TOOLS, "workers": NCPU, "lead_s": CHURN_LEAD,
                   "steady_from_s": CHURN_STEADY_FROM, "retries": CHURN_RETRIES,
                   "programs": ["/bin/true", "/usr/bin/env true"], "disturbed": DISTURBED}, runs)


# --- write ----------------------------------------------------------------

def write():
    runs = []
    for rep in range(3):
        for mode in ("symbolized", "raw"):
            out = TMP / "write.pb.gz"
            r = run([BB / "write_bench", "--seed", rep, "-o", out] + (["--raw"] if mode == "raw" else []))
            rec = json.loads(r.stdout)
            run([BT / "pprof_dump", out], stdout=subprocess.DEVNULL, capture_output=False)  # readable
            rec["rep"] = rep
            runs.append(rec)
            log("write %s: build %.0f ms, write %.0f ms, peak RSS %d MB" % (
                mode, rec["build_ms"], rec["write_ms"], rec["peak_rss_kb"] // 1024))
    save("write", {"samples": runs[0]["samples"], "stacks": runs[0]["stacks"]}, runs)


# --- accuracy -------------------------------------------------------------

def read_truth(path):
    truth = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0] == "truth":
            truth[f[1]] = int(f[2])
    return truth


def leaf_counts(profile, names):
    """Samples per truth name by leaf function, and the rest, of a profile
    as check.load reads it."""
    counts, other = {n: 0 for n in names}, 0
    for s in profile["samples"]:
        k = check.leaf(s)
        if k in counts:
            counts[k] += s["values"][0]
        else:
            other += s["values"][0]
    return counts, other


def perf_leaf_counts(data, names):
    r = run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "sym",
             "-F", "sample,sym", "-g", "none", "-q"])
    counts, other = {n: 0 for n in names}, 0
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+\[.\]\s+(\S+)", line)
        if not m:
            continue
        if m.group(2) in counts:
            counts[m.group(2)] += int(m.group(1))
        else:
            other += int(m.group(1))
    return counts, other


def acc_run(tool, event, freq, wl, period=None):
    """One C accuracy run: wl under tool ("pmubpf", "pmubpf --no-dither"
    or "perf") at freq Hz, or every period ns (-c) where period is given
    (the alias workload, which also takes the period as its own round)."""
    quiet = wait_quiet()
    reset_max_rate()
    truth_f = TMP / "truth"
    truth_f.unlink(missing_ok=True)
    wcmd = [str(BT / wl), str(ACC_SECS), str(truth_f)] + ([str(period)] if wl == "alias" else [])
    rate = ["-c", period] if period else ["-F", freq]
    os.environ["PMUBPF_SERIAL_FIXED"] = "1"  # the seed's fixed f1..f10 cycle (see serial.c)
    with Window() as w:
        if tool.startswith("pmubpf"):
            prof = TMP / "acc.pb.gz"
            run([PMUBPF, "-e", event] + rate + tool.split()[1:] + ["-o", prof, "--"] + wcmd)
        else:
            prof = TMP / "acc.perf.data"
            run(["perf", "record", "-e", event] + rate + ["-g", "-o", prof, "--"] + wcmd)
    truth = read_truth(truth_f)
    dither = None
    if tool.startswith("pmubpf"):
        p = check.load(str(prof))
        (counts, other), graph = leaf_counts(p, truth), call_graph(" ".join(p["comments"]))
        dither = next((c for c in p["comments"] if c.startswith("dither:")), None)
    else:
        (counts, other), graph = perf_leaf_counts(prof, truth), "fp"
    rec = {"workload": wl, "tool": tool, "event": event, "freq": round(1e9 / period) if period else freq,
           "truth": truth, "call_graph": graph, "counts": counts, "other": other, "quiet": quiet,
           "foreign": round(w.foreign, 4), "disturbed": w.disturbed(quiet), "throttled": throttled()}
    if period:
        rec["period_ns"] = period
    if dither:
        rec["dither"] = dither  # pmubpf's profile comment: periods re-drawn (how often) or off
    return rec


def go_run(variant):
    """One Go run: pmubpf -F 999 and runtime/pprof (100 Hz) on the same
    execution; two records with the same truth."""
    quiet = wait_quiet()
    reset_max_rate()
    truth_f, prof, goprof = TMP / "go.truth", TMP / "go.pb.gz", TMP / "go.cpu.pb.gz"
    with Window() as w:
        run([PMUBPF, "-F", 999, "-o", prof, "--", BB / "gowork", variant, ACC_SECS, truth_f, goprof])
    truth = read_truth(truth_f)
    recs = []
    for tool, path, freq in (("pmubpf", prof, 999), ("runtime/pprof", goprof, 100)):
        p = check.load(str(path))
        counts, other = leaf_counts(p, truth)
        recs.append({"workload": "go-" + variant, "tool": tool, "event": "cpu-clock" if tool == "pmubpf"
                     else "setitimer/timer_create", "freq": freq, "truth": truth, "counts": counts,
                     "call_graph": call_graph(" ".join(p["comments"])) if tool == "pmubpf" else None,
                     "other": other, "quiet": quiet, "foreign": round(w.foreign, 4),
                     "disturbed": w.disturbed(quiet)})
    return recs


# The C workloads run under each of these; pmubpf dithers its timer
# periods by default (user/timekeeper.c), --no-dither keeps them fixed as
# perf does. Which goes first rotates from run to run.
ACC_TOOLS = ["pmubpf", "pmubpf --no-dither", "perf"]
ALIAS_PERIOD_NS = 1000000  # alias.c's round, and the timer period it aliases with


def accuracy():
    evs = events()
    runs = []
    for i in range(RUNS):
        tools = ACC_TOOLS[i % len(ACC_TOOLS):] + ACC_TOOLS[:i % len(ACC_TOOLS)]
        for ev in evs:
            for freq in ACC_FREQS:
                for wl in ("serial", "threads"):
                    for tool in tools:
                        rec = acc_run(tool, ev, freq, wl)
                        rec["run"] = i
                        runs.append(rec)
        # alias.c: 1 ms rounds on a fixed wall-clock schedule, sampled
        # every 1 ms of cpu-clock (-c), the case a fixed timer gets wrong
        for tool in tools:
            rec = acc_run(tool, "cpu-clock", None, "alias", period=ALIAS_PERIOD_NS)
            rec["run"] = i
            runs.append(rec)
        for variant in ("serial", "goroutines"):
            for rec in go_run(variant):
                rec["run"] = i
                runs.append(rec)
        log("accuracy: run %d/%d done" % (i + 1, RUNS))
    save("accuracy", {"runs": RUNS, "freqs": ACC_FREQS, "events": evs, "secs": ACC_SECS,
                      "tools": ACC_TOOLS, "alias_period_ns": ALIAS_PERIOD_NS,
                      "go_gomaxprocs": NCPU, "disturbed": DISTURBED}, runs)


# --- labels ---------------------------------------------------------------

def labels():
    wait_quiet()
    r = run([BB / "labels_bench"])
    micro = {k: float(v) for k, v in (l.split() for l in r.stdout.splitlines())}
    log("labels: set+restore %.2f ns, plain TLS pair %.2f ns" % (micro["labels_pair_ns"], micro["tls_pair_ns"]))
    secs = 3.0
    variants = {"plain": [BB / "label_load_plain", secs],
                "unset": [BB / "label_load", secs, "unset"],
                "set": [BB / "label_load", secs, "set"]}
    # With stacks, a user stack walk dominates each sample; without it
    # (--no-user; the kernel side of a sample taken in user mode is empty)
    # what is left is mostly the label path.
    configs = {"stacks": [], "no user stacks": ["--no-user"]}
    runs = []
    for rep in range(LABEL_REPS):
        for (name, cmd), (config, flags) in ((v, c) for c in configs.items() for v in variants.items()):
            quiet = wait_quiet()
            reset_max_rate()
            prof = TMP / "labels.pb.gz"
            sysctl("kernel.bpf_stats_enabled", 1)
            with Window() as w:
                t0 = time.time()
                p = subprocess.Popen([str(c) for c in [PMUBPF, "-F", 999, "-o", prof] + flags + ["--"] + cmd],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(max(0.0, t0 + secs - 0.3 - time.time()))
                run_ns, run_cnt, _ = bpf_sample_stats(p.pid)
                if p.wait():
                    raise RuntimeError("pmubpf %s failed (exit %d)" % (" ".join(flags), p.returncode))
            sysctl("kernel.bpf_stats_enabled", BPF_STATS)
            samples = check.load(str(prof))["samples"]
            labelled = sum(s["values"][0] for s in samples if "worker" in s["labels"])
            runs.append({"variant": name, "config": config, "rep": rep, "quiet": quiet,
                         "foreign": round(w.foreign, 4), "disturbed": w.disturbed(quiet), "run_time_ns": run_ns,
                         "run_cnt": run_cnt, "ns_per_run": run_ns / run_cnt if run_cnt else None,
                         "samples": sum(s["values"][0] for s in samples), "labelled": labelled})
            log("labels %s, %s: %.0f ns/sample, %d of %d samples labelled" % (
                name, config, runs[-1]["ns_per_run"] or 0, labelled, runs[-1]["samples"]))
    save("labels", {"micro_iterations": int(micro["iterations"]), "micro_repeats": int(micro["repeats"]),
                    "load_secs": secs, "freq": 999, "reps": LABEL_REPS, "disturbed": DISTURBED},
         {"micro": micro, "bpf": runs})


LABEL_REPS = 5


PARTS = {"overhead": overhead, "cost": cost, "churn": churn, "write": write, "accuracy": accuracy, "labels": labels}


def main():
    parts = sys.argv[1:] or list(PARTS)
    bad = [p for p in parts if p not in PARTS]
    if bad:
        sys.exit("bench.py: unknown part %s (parts: %s)" % (", ".join(bad), " ".join(PARTS)))
    try:
        for part in parts:
            PART_START[0] = time.time()
            log("%s: starting" % part)
            PARTS[part]()
            log("%s: %.0f s" % (part, time.time() - PART_START[0]))
    finally:
        subprocess.run(["rm", "-rf", str(TMP)])


if __name__ == "__main__":
    main()
