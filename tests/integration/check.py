#!/usr/bin/env python3
"""check.py — assertions on pmubpf profiles for the integration tests.

Reads a profile through build/tests/pprof_dump (our protobuf-c decoder,
JSON out) and checks it. Exit 0 if every assertion holds, else 1 with the
reason on the last line. Subcommands:

  shares PROFILE TRUTH [--by leaf|tag:KEY] [--alpha 0.001 | --sigmas K]
      TRUTH has lines "truth NAME NANOSECONDS" (--names picks some). Each
      NAME's share of the samples attributed to any NAME (by leaf function,
      or by label: NAME is "KEY=VALUE", "unlabelled" if absent) must be
      within k binomial standard deviations of its truth share:
      |p - q| <= k * sqrt(q (1 - q) / n). k comes from the chance ALPHA
      that a correct profiler fails the check as a whole: with m names
      tested, each gets ALPHA/m (Bonferroni), k = z(1 - ALPHA/(2m)) —
      3.29 for one name, 3.59 for three, 3.89 for ten at 0.001. A flat
      k = 3 on ten names would fail a perfect profiler in ~2.7% of runs.
  expect PROFILE [--pid P] [--tid T] [--only-pid P] [--only-tid T]
                 [--func NAME]... [--kernel-frames N] [--min-samples N]
                 [--weight-near W] [--lost-period] [--only-tag K=V]...
                 [--no-comment REGEX]... [--no-kernel-frames]
                 [--no-user-frames] [--all-kernel-frames]
                 [--comment REGEX] [--sample-type T/U] [--no-functions]
                 [--tag K=V]... [--pids-at-least N]
  weights PROFILE TRUTH [--by leaf|stack|tag:KEY] [--names N,...] [--hz F]
          [--alpha 0.001]
      The weight column (values[1]) against TRUTH in its own unit: shares
      of the weight within binomial bounds, the total within Poisson
      bounds, and with --hz the sample count against CPU time x F (see
      weights() for the statistics). --by stack: a sample counts for the
      innermost NAME anywhere in its stack (e.g. the user function under
      the kernel's frames of a software event).
  exact PROFILE TRUTH [--by leaf|stack|tag:KEY] [--tolerance 0.02]
        [--also PROFILE]...
      Weights that are measured, not sampled (-e off-cpu): each NAME's
      weight (summed over PROFILE and every --also) within TOLERANCE
      (relative) of its truth.
  top PROFILE TABLE --n N [--func NAME]
      pmubpf --top N's stdout against the profile (see top()).
  ancestors PROFILE --leaf NAME --ancestor NAME [--min-fraction 0.95]
            [--user-leaf] [--kernel-only]
      Of the samples whose leaf function is --leaf, at least that fraction
      (by sample count) must have --ancestor further up the same stack,
      with every frame in between named (no bare addresses). --user-leaf:
      the leaf is the first user frame (kernel frames skipped);
      --kernel-only: only samples taken in the kernel.
"""
import argparse, json, math, os, re, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DUMP = os.path.join(ROOT, os.environ.get("PMUBPF_BUILD", "build"), "tests", "pprof_dump")


def load(path):
    r = subprocess.run([DUMP, path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("pprof_dump failed: " + r.stderr.strip())
    return json.loads(r.stdout)


def leaf(s):
    # The leaf location's real (outermost, not inlined) function: a
    # location lists its inlined functions innermost first.
    for loc in s["stack"]:
        if loc["frames"]:
            return loc["frames"][-1]["func"]
        return "0x%x" % loc["addr"]
    return None


def funcs(s):
    return [f["func"] for loc in s["stack"] for f in loc["frames"]]


def read_truth(args):
    """The workload's "truth NAME VALUE" lines (only --names, if given)."""
    truth = {}
    for line in open(args.truth):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "truth":
            if args.names and parts[1] not in args.names.split(","):
                continue
            truth[parts[1]] = int(parts[2])
    if not truth:
        sys.exit("no truth lines in " + args.truth)
    return truth


def shares(args):
    prof = load(args.profile)
    truth = read_truth(args)
    counts = {k: 0 for k in truth}
    within = set(args.within or [])
    for s in prof["samples"]:
        if within and not within & set(funcs(s)):
            continue  # outside the units the truth timed
        if args.by == "leaf":
            key = leaf(s)
        else:
            tag = args.by[4:]
            v = s["labels"].get(tag)
            key = "unlabelled" if v is None else "%s=%s" % (tag, v)
        if key in counts:
            counts[key] += s["values"][0]
    n = sum(counts.values())
    total = sum(truth.values())
    if n < 100:
        sys.exit("only %d samples attributed to %s" % (n, ", ".join(truth)))
    k_sig = args.sigmas
    if k_sig is None:
        k_sig = statistics.NormalDist().inv_cdf(1 - args.alpha / (2 * len(truth)))
    bad = []
    print("%-10s %8s %8s %8s %6s" % ("name", "truth%", "got%", "samples", "sigmas"))
    for k in sorted(truth, key=lambda x: (len(x), x)):
        q = truth[k] / total
        p = counts[k] / n
        sd = math.sqrt(q * (1 - q) / n) if 0 < q < 1 else 1.0 / n
        z = abs(p - q) / sd
        print("%-10s %8.2f %8.2f %8d %6.2f" % (k, 100 * q, 100 * p, counts[k], z))
        if z > k_sig:
            bad.append("%s: %.2f%% vs truth %.2f%% (%.1f sigma)" % (k, 100 * p, 100 * q, z))
    if bad:
        sys.exit("outside %.2f sigma with n=%d: %s" % (k_sig, n, "; ".join(bad)))
    print("all %d shares within %.2f sigma (n=%d)" % (len(truth), k_sig, n))


def attribute(prof, truth, by):
    """Per truth NAME: [samples, weight, sum of squared weights] of the
    samples attributed to it. A profile sample aggregates c samples of
    total weight W; each counts as c of weight W/c (their own periods are
    not kept), so the squares' sum is W^2/c."""
    got = {k: [0, 0, 0.0] for k in truth}
    for s in prof["samples"]:
        if by == "leaf":
            key = leaf(s)
        elif by == "stack":  # the innermost truth NAME anywhere in the stack
            key = next((f for f in funcs(s) if f in got), None)
        else:
            v = s["labels"].get(by[4:])
            key = "unlabelled" if v is None else "%s=%s" % (by[4:], v)
        if key in got:
            c, w = s["values"][0], s["values"][1]
            got[key][0] += c
            got[key][1] += w
            got[key][2] += w * w / c if c else 0.0
    return got


def weights(args):
    """The weight column (values[1]: ns for timers, events for counters)
    against measured ground truth, and the sample count against the rate.

    TRUTH lines are "truth NAME AMOUNT" in the weight's unit (ns of CPU
    time, faults, ...). Checked, each at ALPHA/m (Bonferroni over the m
    checks):
      - shares: each NAME's share of the weight within k binomial sigma
        of its truth share, n the weighted samples' effective number
        (sum w)^2 / sum w^2: samples of unequal periods (counters in
        frequency mode, dithered timers) carry less information than
        as many equal ones, so the plain count would make sigma too small;
      - total: the attributed weight W against the truth total T. The
        samples are at most Poisson-dispersed around lambda = T / P (P the
        mean period, W / samples): a timer's count over T of CPU time
        varies less than a Poisson count, a counter's residual is under
        one period. So |W - T| <= k * P * sqrt(lambda);
      - --exact-periods K (counters whose truth is an exact count: the
        instructions of code under qemu -icount): |W - T| <= K * P. A
        counter overflowing every P leaves each function's weight within
        a period of its count, so K of a few (the functions, the
        multiplexed rotations' edges) is the bound, far tighter than the
        Poisson one: a scaling off by 10% fails it;
      - --hz F (timers): the sample count N against lambda = T * F / 1e9,
        |N - lambda| <= k * sqrt(lambda): samples are taken at the rate
        asked, and each carries its own period (not just the count).
    The truth includes what sampling itself costs the task (the interrupt
    and the BPF program run on its CPU time, and no sample can land in
    them): the weight runs ~1% low at 999 Hz, well inside these bounds at
    the tests' few thousand samples."""
    prof = load(args.profile)
    truth = read_truth(args)
    got = attribute(prof, truth, args.by)
    n = sum(v[0] for v in got.values())
    w = sum(v[1] for v in got.values())
    t = sum(truth.values())
    if n < args.min_samples:
        sys.exit("only %d samples attributed to %s" % (n, ", ".join(truth)))
    m = (len(truth) if len(truth) > 1 else 0) + 1 + (1 if args.hz else 0)
    k = statistics.NormalDist().inv_cdf(1 - args.alpha / (2 * m))
    bad = []
    unit = "/".join(prof["sample_type"][1])
    sq = sum(v[2] for v in got.values())
    n_eff = w * w / sq if sq > 0 else n
    if len(truth) > 1:
        print("%-12s %8s %8s %8s %14s %6s  (effective samples %.0f of %d)"
              % ("name", "truth%", "got%", "samples", "weight", "sigmas", n_eff, n))
        for name in sorted(truth, key=lambda x: (len(x), x)):
            q = truth[name] / t
            pw = got[name][1] / w if w else 0.0
            sd = math.sqrt(q * (1 - q) / n_eff) if 0 < q < 1 else 1.0 / n_eff
            z = abs(pw - q) / sd
            print("%-12s %8.2f %8.2f %8d %14d %6.2f" % (name, 100 * q, 100 * pw, got[name][0], got[name][1], z))
            if z > k:
                bad.append("%s: %.2f%% of the weight vs truth %.2f%% (%.1f sigma)" % (name, 100 * pw, 100 * q, z))
    if w <= 0:
        sys.exit("total weight %d of %d samples: the weight column is empty" % (w, n))
    period = w / n
    lam = t / period
    z = abs(w - t) / (period * math.sqrt(lam))
    print("total weight %d %s vs truth %d (%+.2f%%, %.2f sigma; %d samples, mean period %.1f)"
          % (w, unit, t, 100.0 * (w - t) / t, z, n, period))
    if z > k:
        bad.append("total weight %d vs truth %d: %+.2f%% (%.1f sigma)" % (w, t, 100.0 * (w - t) / t, z))
    if args.exact_periods is not None:
        within = args.exact_periods * period
        print("total weight within %.1f periods of the exact count (%+.2f periods)" % (args.exact_periods, (w - t) / period))
        if abs(w - t) > within:
            bad.append("total weight %d vs exact count %d: %+.1f periods, more than %g" % (w, t, (w - t) / period, args.exact_periods))
    if args.hz:
        lam = t * args.hz / 1e9
        z = abs(n - lam) / math.sqrt(lam)
        print("samples %d vs %.0f expected at %g Hz (%+.2f%%, %.2f sigma)" % (n, lam, args.hz, 100.0 * (n - lam) / lam, z))
        if z > k:
            bad.append("%d samples vs %.0f at %g Hz: %+.2f%% (%.1f sigma)" % (n, lam, args.hz, 100.0 * (n - lam) / lam, z))
    if bad:
        sys.exit("outside %.2f sigma: %s" % (k, "; ".join(bad)))
    print("weights within %.2f sigma (%d checks)" % (k, m))


def exact(args):
    """Measured weights (no sampling error): each NAME's weight within
    args.tolerance of its truth, relative."""
    prof = load(args.profile)
    truth = read_truth(args)
    got = attribute(prof, truth, args.by)
    for extra in args.also or []:  # more windows of the same recording
        for k, v in attribute(load(extra), truth, args.by).items():
            got[k][0] += v[0]
            got[k][1] += v[1]
    unit = "/".join(prof["sample_type"][1])
    bad = []
    print("%-14s %14s %14s %8s %7s" % ("name", "truth", "weight", "samples", "error"))
    for name in sorted(truth):
        t, w = truth[name], got[name][1]
        err = (w - t) / t if t else float("inf")
        print("%-14s %14d %14d %8d %+6.2f%%" % (name, t, w, got[name][0], 100 * err))
        if abs(err) > args.tolerance:
            bad.append("%s: %d %s vs truth %d (%+.2f%%)" % (name, w, unit, t, 100 * err))
    if bad:
        sys.exit("outside %.1f%%: %s" % (100 * args.tolerance, "; ".join(bad)))
    print("all %d weights within %.1f%% of the truth" % (len(truth), 100 * args.tolerance))


def expect(args):
    prof = load(args.profile)
    samples = prof["samples"]
    errs = []
    total = sum(s["values"][0] for s in samples)
    if total < args.min_samples:
        errs.append("%d samples < %d" % (total, args.min_samples))
    if args.samples_near is not None:
        # Poisson bound (a timer's count over some CPU time varies less).
        lam = args.samples_near
        k = statistics.NormalDist().inv_cdf(1 - args.alpha / 2)
        z = abs(total - lam) / math.sqrt(lam) if lam > 0 else float("inf")
        if z > k:
            errs.append("%d samples, want %g: %.1f sigma > %.2f" % (total, lam, z, k))
    if args.samples_exact is not None and total != args.samples_exact:
        errs.append("%d samples, want exactly %d (%+d)" % (total, args.samples_exact, total - args.samples_exact))
    weight = sum(s["values"][1] for s in samples)
    if args.weight_exact is not None and weight != args.weight_exact:
        errs.append("total weight %d, want exactly %d (%+d)" % (weight, args.weight_exact, weight - args.weight_exact))
    if args.weight_near is not None:
        # Poisson bound, as in weights(): lambda = T / P, P the mean period.
        t = args.weight_near
        k = statistics.NormalDist().inv_cdf(1 - args.alpha / 2)
        if weight <= 0 or total <= 0:
            errs.append("total weight %d of %d samples" % (weight, total))
        else:
            period = weight / total
            z = abs(weight - t) / (period * math.sqrt(t / period))
            if z > k:
                errs.append("total weight %d vs %g: %+.2f%% (%.1f sigma > %.2f)"
                            % (weight, t, 100.0 * (weight - t) / t, z, k))
    if args.lost_period:
        # A timer's samples all weigh its nominal period, lost ones too.
        for s in samples:
            name = leaf(s) or ""
            if name.startswith("[lost") and s["values"][1] != s["values"][0] * prof["period"]:
                errs.append("%s: %d samples weigh %d, want %d x period %d"
                            % (name, s["values"][0], s["values"][1], s["values"][0], prof["period"]))
    if args.max_samples is not None and total > args.max_samples:
        errs.append("%d samples > %d" % (total, args.max_samples))
    pids = {s["labels"].get("pid") for s in samples}
    tids = {s["labels"].get("tid") for s in samples}
    if args.pid is not None and args.pid not in pids:
        errs.append("no sample of pid %d (pids %s)" % (args.pid, sorted(p for p in pids if p is not None)[:20]))
    if args.tid is not None and args.tid not in tids:
        errs.append("no sample of tid %d" % args.tid)
    if args.no_pid is not None and args.no_pid in pids:
        errs.append("samples of pid %d" % args.no_pid)
    if args.only_pid is not None and pids - {args.only_pid}:
        errs.append("samples of other pids: %s" % sorted(pids - {args.only_pid})[:10])
    if args.only_tid is not None and tids - {args.only_tid}:
        errs.append("samples of other tids: %s" % sorted(tids - {args.only_tid})[:10])
    if args.pids_at_least and len(pids) < args.pids_at_least:
        errs.append("%d pids < %d" % (len(pids), args.pids_at_least))
    scope = [s for s in samples if args.pid is None or s["labels"].get("pid") == args.pid]
    allf = set()
    for s in scope:
        allf.update(funcs(s))
    for f in args.func or []:
        if f not in allf:
            errs.append("function %s not in any stack%s" % (f, " of pid %d" % args.pid if args.pid else ""))
    if args.kernel_frames:
        kmaps = {m["id"] for m in prof["mappings"] if m["file"] == "[kernel.kallsyms]"}
        knamed = set()
        for s in samples:
            for loc in s["stack"]:
                if loc["mapping"] in kmaps and loc["frames"]:
                    knamed.add(loc["frames"][0]["func"])
        if len(knamed) < args.kernel_frames:
            errs.append("%d named kernel functions < %d" % (len(knamed), args.kernel_frames))
    if args.comment:
        if not any(re.search(args.comment, c) for c in prof["comments"]):
            errs.append("no comment matches /%s/: %s" % (args.comment, prof["comments"]))
    if args.sample_type:
        got = "/".join(prof["sample_type"][1])
        if got != args.sample_type or prof["sample_type"][0] != ["samples", "count"]:
            errs.append("sample_type %s, want samples/count + %s" % (prof["sample_type"], args.sample_type))
    if args.no_functions:
        if allf:
            errs.append("profile has function names: %s" % sorted(allf)[:5])
    kmaps = {m["id"] for m in prof["mappings"] if m["file"] == "[kernel.kallsyms]"}
    def sides(s):  # (has a kernel location, has a user location)
        return (any(l["mapping"] in kmaps for l in s["stack"]),
                any(l["mapping"] and l["mapping"] not in kmaps for l in s["stack"]))
    if args.no_kernel_frames:
        n = sum(s["values"][0] for s in samples if sides(s)[0])
        if n:
            errs.append("%d samples with kernel frames" % n)
    if args.no_user_frames:
        n = sum(s["values"][0] for s in samples if sides(s)[1])
        if n:
            errs.append("%d samples with user frames" % n)
    if args.all_kernel_frames:
        n = sum(s["values"][0] for s in samples if not sides(s)[0])
        if n:
            errs.append("%d samples without kernel frames" % n)
    for kv in args.only_tag or []:
        k, v = kv.split("=", 1)
        other = {str(s["labels"].get(k)) for s in scope} - {v}
        if other:
            errs.append("samples%s tagged %s=%s, want only %s" % (
                " of pid %d" % args.pid if args.pid else "", k, sorted(other)[:5], v))
    for r in args.no_comment or []:
        hit = [c for c in prof["comments"] if re.search(r, c)]
        if hit:
            errs.append("comment matches /%s/: %s" % (r, hit))
    for kv in args.tag or []:
        k, v = kv.split("=", 1)
        if not any(str(s["labels"].get(k)) == v for s in samples):
            errs.append("no sample tagged %s" % kv)
    if errs:
        sys.exit("; ".join(errs))
    print("ok: %d samples, %d pids" % (total, len(pids)))


def requests(args):
    """A program labelling each request, recorded in windows (issue 40):
    over PROFILES, the samples of comm COMM, those carrying label KEY,
    those labelled [too many sets] (none allowed), and the sets other
    writers' comment says were read (at least a quarter over the
    per-process cap: else the run showed nothing); KEY on at least
    --min-labelled of COMM's samples."""
    n = lab = over = sets = 0
    for f in args.profiles:
        p = load(f)
        for s in p["samples"]:
            if s["labels"].get("comm") != args.comm:
                continue
            n += s["values"][0]
            lab += s["values"][0] * (args.key in s["labels"])
            over += s["values"][0] * (s["labels"].get("pmubpf_labels") == "[too many sets]")
        for c in p["comments"]:
            m = re.search(r"labels from other writers: .* sets (\d+) read", c)
            if m:
                sets = max(sets, int(m.group(1)))
    print("%d profiles: %d samples of %s, %d with %s, %d [too many sets]; %d sets read"
          % (len(args.profiles), n, args.comm, lab, args.key, over, sets))
    if over:
        sys.exit("%d samples labelled [too many sets]" % over)
    if sets < 1.25 * 16384:
        sys.exit("only %d sets read: fewer than the cap and a quarter, nothing shown" % sets)
    if lab < args.min_labelled * n:
        sys.exit("under %.0f%% of %s's samples carry %s" % (100 * args.min_labelled, args.comm, args.key))


def ancestors(args):
    prof = load(args.profile)
    kmaps = {m["id"] for m in prof["mappings"] if m["file"] == "[kernel.kallsyms]"}
    total = good = 0
    bad = {}
    for s in prof["samples"]:
        names = []  # one per frame, None for an unsymbolized location
        stack = s["stack"]
        nk = 0
        while nk < len(stack) and stack[nk]["mapping"] in kmaps:
            nk += 1
        if args.kernel_only and not nk:
            continue
        if args.comm and s["labels"].get("comm") != args.comm:
            continue
        for loc in stack[nk if args.user_leaf else 0:]:
            if loc["frames"]:
                names.extend(None if f["func"] in ("", "??") or f["func"].startswith("0x")
                             else f["func"] for f in loc["frames"])
            else:
                names.append(None)
        if not names or names[0] != args.leaf:
            continue
        n = s["values"][0]
        total += n
        if args.ancestor in names[1:]:
            between = names[1:names.index(args.ancestor, 1)]
            if all(between):
                good += n
                continue
        key = " <- ".join(x or "??" for x in names[:12])
        bad[key] = bad.get(key, 0) + n
    if total < args.min_samples:
        sys.exit("only %d samples with leaf %s" % (total, args.leaf))
    first = 0
    if args.first_samples_max is not None:
        # Stacks walked by frame pointer before the process had tables
        # (the profile's comment counts them, whatever their leaf): the
        # walker under test never saw them. At most the failed ones are
        # left out, and only while few.
        for c in prof["comments"]:
            m = re.match(r"dwarf: (\d+) user stacks walked by frame pointer instead: the process had no unwind tables yet", c)
            first += int(m.group(1)) if m else 0
        every = sum(s["values"][0] for s in prof["samples"])
        if first > args.first_samples_max * every:
            sys.exit("%d stacks walked before the process had tables, over %.0f%% of the profile's %d: "
                     "the tables came late" % (first, 100 * args.first_samples_max, every))
        first = min(first, total - good)
    frac = good / (total - first) if total > first else 1.0
    print("%s -> %s: %d of %d samples (%.2f%%)%s" % (args.leaf, args.ancestor, good, total - first, 100 * frac,
          ", %d left out: walked before the process had tables" % first if first else ""))
    if frac < args.min_fraction:
        for k, v in sorted(bad.items(), key=lambda kv: -kv[1])[:5]:
            print("  %5d  %s" % (v, k))
        sys.exit("%s is an ancestor of %s in %.2f%% of its samples < %.2f%%"
                 % (args.ancestor, args.leaf, 100 * frac, 100 * args.min_fraction))


def top(args):
    """pmubpf --top N's table (its stdout, in TABLE) against the profile:
    the total, each row's flat weight (the innermost function of each
    sample's leaf location, as the profile has it), flat%, the order, and
    that no function left out of the table is hotter than its last row."""
    prof = load(args.profile)
    text = open(args.table).read().splitlines()
    hdr = [i for i, l in enumerate(text) if l.startswith("Top ")]
    if len(hdr) != 1:
        sys.exit("want one 'Top N functions' header, got %d in %r" % (len(hdr), text[:5]))
    # pprof's units: "7.93s", "255.26ms", "350us", "12ns"; counts "1.20M",
    # "3.40k", "17": two decimals, so a printed value is exact to half a
    # unit of its last digit.
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "": 1}
    def val(t):
        mm = re.match(r"^(-?[\d.]+)(ns|us|ms|s|k|M|G|T|)$", t)
        if not mm:
            sys.exit("bad value %r in the table" % t)
        return float(mm.group(1)) * scale[mm.group(2)], 0.005 * scale[mm.group(2)] + 0.5
    m = re.match(r"Top (\d+) functions for (\S+) \((\S+); 100% = (\S+)\):$", text[hdr[0]])
    if not m:
        sys.exit("bad header: %r" % text[hdr[0]])
    n, event, vtype = int(m.group(1)), m.group(2), m.group(3)
    total, total_tol = val(m.group(4))
    rows = []
    for l in text[hdr[0] + 2:]:
        r = re.match(r"\s*(\S+)\s+([\d.]+)%\s+(\S+)\s+([\d.]+)%  (.+)$", l)
        if not r:
            break
        (f, ftol), (c, ctol) = val(r.group(1)), val(r.group(3))
        rows.append((f, float(r.group(2)), c, float(r.group(4)), r.group(5), ftol, ctol))
    errs = []
    if n != args.n:
        errs.append("header says top %d, asked %d" % (n, args.n))
    want_type = prof["sample_type"][1][0]
    if vtype != want_type:
        errs.append("value type %s, profile's %s" % (vtype, want_type))
    ptotal = sum(s["values"][1] for s in prof["samples"])
    if abs(total - ptotal) > total_tol:
        errs.append("table total %g, profile's %d" % (total, ptotal))
    files = {m_["id"]: m_["file"] for m_ in prof["mappings"]}
    def name_of(loc):
        if loc["frames"]:
            return loc["frames"][0]["func"]
        if files.get(loc["mapping"]):
            return "[%s]" % os.path.basename(files[loc["mapping"]])
        return "0x%x" % loc["addr"]
    flat = {}
    for s in prof["samples"]:
        for i, loc in enumerate(s["stack"]):
            name = name_of(loc)
            flat[name] = flat.get(name, 0) + (s["values"][1] if i == 0 else 0)
    if len(rows) != min(n, len(flat)):
        errs.append("%d rows, want %d" % (len(rows), min(n, len(flat))))
    for i, (f, fp, c, cp, name, ftol, ctol) in enumerate(rows):
        if name not in flat or abs(flat[name] - f) > ftol:
            errs.append("%s: flat %g, profile %s" % (name, f, flat.get(name)))
        if ptotal and name in flat and abs(fp - 100.0 * flat[name] / ptotal) > 0.006:
            errs.append("%s: flat%% %.2f, want %.2f" % (name, fp, 100.0 * flat[name] / ptotal))
        if not f - ftol <= c + ctol and c - ctol <= total + total_tol:
            errs.append("%s: cum %g not within [flat %g, total %g]" % (name, c, f, total))
        if i and f > rows[i - 1][0] + ftol:
            errs.append("rows not sorted by flat: %s after %s" % (name, rows[i - 1][4]))
    if rows:
        shown = {r[4] for r in rows}
        hotter = [k for k, v in flat.items() if k not in shown and v > rows[-1][0] + rows[-1][5]]
        if hotter:
            errs.append("left out of the table but hotter than its last row: %s" % hotter[:5])
    if args.func and args.func not in [r[4] for r in rows]:
        errs.append("%s not in the table" % args.func)
    if errs:
        sys.exit("; ".join(errs))
    print("top %d of %s: %d rows agree with the profile (total %g, %s)" % (n, event, len(rows), total, vtype))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("shares")
    a.add_argument("profile")
    a.add_argument("truth")
    a.add_argument("--by", default="leaf")
    a.add_argument("--sigmas", type=float, default=None)
    a.add_argument("--alpha", type=float, default=0.001)
    a.add_argument("--names", help="comma-separated truth names to use")
    a.add_argument("--within", action="append",
                   help="FUNC: only samples with FUNC in their stack (the units the truth timed)")
    a.set_defaults(fn=shares)
    e = sub.add_parser("expect")
    e.add_argument("profile")
    e.add_argument("--pid", type=int)
    e.add_argument("--tid", type=int)
    e.add_argument("--only-pid", type=int)
    e.add_argument("--no-pid", type=int)
    e.add_argument("--only-tid", type=int)
    e.add_argument("--pids-at-least", type=int, default=0)
    e.add_argument("--func", action="append")
    e.add_argument("--kernel-frames", type=int, default=0)
    e.add_argument("--min-samples", type=int, default=1)
    e.add_argument("--max-samples", type=int)
    e.add_argument("--samples-near", type=float, help="total samples expected (incl. lost; Poisson bounds)")
    e.add_argument("--weight-near", type=float, help="total weight expected (incl. lost; Poisson bounds)")
    e.add_argument("--samples-exact", type=int, help="total samples expected exactly (incl. lost)")
    e.add_argument("--weight-exact", type=int, help="total weight expected exactly (incl. lost)")
    e.add_argument("--alpha", type=float, default=0.001)
    e.add_argument("--lost-period", action="store_true",
                   help="every [lost: ...] sample weighs count x the profile's period (fixed periods)")
    e.add_argument("--comment")
    e.add_argument("--sample-type")
    e.add_argument("--no-functions", action="store_true")
    e.add_argument("--tag", action="append")
    e.add_argument("--only-tag", action="append", help="K=V: every sample (of --pid) has it")
    e.add_argument("--no-comment", action="append", help="no comment matches REGEX")
    e.add_argument("--no-kernel-frames", action="store_true")
    e.add_argument("--no-user-frames", action="store_true")
    e.add_argument("--all-kernel-frames", action="store_true", help="every sample has a kernel frame")
    e.set_defaults(fn=expect)
    w = sub.add_parser("weights")
    w.add_argument("profile")
    w.add_argument("truth")
    w.add_argument("--by", default="leaf")
    w.add_argument("--alpha", type=float, default=0.001)
    w.add_argument("--names", help="comma-separated truth names to use")
    w.add_argument("--hz", type=float, help="sampling rate: check the sample count too")
    w.add_argument("--exact-periods", type=float, help="the truth is an exact count: the total within this many periods")
    w.add_argument("--min-samples", type=int, default=100)
    w.set_defaults(fn=weights)
    x = sub.add_parser("exact")
    x.add_argument("profile")
    x.add_argument("truth")
    x.add_argument("--by", default="stack")
    x.add_argument("--names", help="comma-separated truth names to use")
    x.add_argument("--tolerance", type=float, default=0.02)
    x.add_argument("--also", action="append", help="another profile whose weights add up (--every windows)")
    x.set_defaults(fn=exact)
    t = sub.add_parser("top")
    t.add_argument("profile")
    t.add_argument("table", help="pmubpf --top N's stdout")
    t.add_argument("--n", type=int, required=True)
    t.add_argument("--func", help="must be one of the rows")
    t.set_defaults(fn=top)
    r = sub.add_parser("requests")
    r.add_argument("comm")
    r.add_argument("key")
    r.add_argument("profiles", nargs="+")
    r.add_argument("--min-labelled", type=float, default=0.95)
    r.set_defaults(fn=requests)
    n = sub.add_parser("ancestors")
    n.add_argument("profile")
    n.add_argument("--leaf", required=True)
    n.add_argument("--ancestor", required=True)
    n.add_argument("--min-fraction", type=float, default=0.95)
    n.add_argument("--min-samples", type=int, default=100)
    n.add_argument("--user-leaf", action="store_true")
    n.add_argument("--kernel-only", action="store_true")
    n.add_argument("--comm", help="only the samples of processes with this comm")
    n.add_argument("--first-samples-max", type=float, default=None,
                   help="leave out the stacks pmubpf says it walked by frame pointer for want of "
                        "the process's tables (its first samples: issue 39), while they are at most "
                        "this share of the profile's samples (more: a FAIL, the tables came late)")
    n.set_defaults(fn=ancestors)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
