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
                 [--comment REGEX] [--sample-type T/U] [--no-functions]
                 [--tag K=V]... [--pids-at-least N]
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


def shares(args):
    prof = load(args.profile)
    truth = {}
    for line in open(args.truth):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "truth":
            if args.names and parts[1] not in args.names.split(","):
                continue
            truth[parts[1]] = int(parts[2])
    if not truth:
        sys.exit("no truth lines in " + args.truth)
    counts = {k: 0 for k in truth}
    for s in prof["samples"]:
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


def expect(args):
    prof = load(args.profile)
    samples = prof["samples"]
    errs = []
    total = sum(s["values"][0] for s in samples)
    if total < args.min_samples:
        errs.append("%d samples < %d" % (total, args.min_samples))
    if args.samples_near is not None:
        lo, hi = args.samples_near * (1 - args.tolerance), args.samples_near * (1 + args.tolerance)
        if not lo <= total <= hi:
            errs.append("%d samples, want %g +- %g%%" % (total, args.samples_near, 100 * args.tolerance))
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
    for kv in args.tag or []:
        k, v = kv.split("=", 1)
        if not any(str(s["labels"].get(k)) == v for s in samples):
            errs.append("no sample tagged %s" % kv)
    if errs:
        sys.exit("; ".join(errs))
    print("ok: %d samples, %d pids" % (total, len(pids)))


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
    frac = good / total
    print("%s -> %s: %d of %d samples (%.2f%%)" % (args.leaf, args.ancestor, good, total, 100 * frac))
    if frac < args.min_fraction:
        for k, v in sorted(bad.items(), key=lambda kv: -kv[1])[:5]:
            print("  %5d  %s" % (v, k))
        sys.exit("%s is an ancestor of %s in %.2f%% of its samples < %.2f%%"
                 % (args.ancestor, args.leaf, 100 * frac, 100 * args.min_fraction))


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
    e.add_argument("--samples-near", type=float, help="total samples expected (incl. lost)")
    e.add_argument("--tolerance", type=float, default=0.05)
    e.add_argument("--comment")
    e.add_argument("--sample-type")
    e.add_argument("--no-functions", action="store_true")
    e.add_argument("--tag", action="append")
    e.set_defaults(fn=expect)
    n = sub.add_parser("ancestors")
    n.add_argument("profile")
    n.add_argument("--leaf", required=True)
    n.add_argument("--ancestor", required=True)
    n.add_argument("--min-fraction", type=float, default=0.95)
    n.add_argument("--min-samples", type=int, default=100)
    n.add_argument("--user-leaf", action="store_true")
    n.add_argument("--kernel-only", action="store_true")
    n.set_defaults(fn=ancestors)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
