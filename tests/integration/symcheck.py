#!/usr/bin/env python3
"""symcheck.py — symbolization assertions of tests/integration/symbols.sh.

Reads a profile through build/tests/pprof_dump (JSON) like check.py, and
checks what symbols.sh needs. Exit 0 if the assertion holds, else 1 with
the reason on the last line. Subcommands:

  inline PROFILE FUNC:FILE:LINE FUNC:FILE:LINE...
      Some location's lines are exactly these, innermost first (FILE is
      matched as a path suffix; LINE may be '*').
  frame PROFILE FUNC [--file SUFFIX] [--line N] [--system NAME]
        [--start-line N] [--mapping SUFFIX] [--min-samples N]
      Some frame of function FUNC with these details, in at least N
      samples (counted by the samples whose stacks hold it).
  nosym PROFILE --build-id FILE=ID...
      No location outside mapping 0 (synthetic frames) has a line; no
      mapping claims has_functions; each FILE's mapping has build-id ID.
  kernel PROFILE [--min N]
      Every kernel location (at least N) is named as /proc/kallsyms names
      its address or the address - 1 (a caller's frame holds its return
      address): one of the names at the start of the text symbol that
      covers it (aliases share a start), with the module as its file.
      BPF code ([bpf]) may be gone from kallsyms by now: left out, as
      is code past the kernel's text left unnamed that kallsyms has no
      symbol for now (gone before pmubpf asked for the names).
  layout PROFILE --lib SUBSTR [--min N]
      One layout per file across processes: the file matching SUBSTR is
      at most 4 mappings (the parts of it mapped), every location of a
      file lies inside its mapping, no two locations are at the same
      offset of the same file and build, and at least N frames are in
      files.
"""
import argparse, bisect, collections, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import load  # one reader of profiles for both checkers


def locations(prof):
    seen = {}
    for s in prof["samples"]:
        for loc in s["stack"]:
            key = (loc["mapping"], loc["addr"])
            if key not in seen:
                seen[key] = [loc, 0]
            seen[key][1] += s["values"][0]
    return seen.values()


def frame_matches(f, func, file=None, line=None):
    if f["func"] != func:
        return False
    if file and not f["file"].endswith(file):
        return False
    if line not in (None, "*") and f["line"] != int(line):
        return False
    return True


def cmd_inline(a):
    want = [w.split(":") for w in a.frames]
    got = []
    for loc, n in locations(load(a.profile)):
        fr = loc["frames"]
        if len(fr) == len(want) and all(frame_matches(f, *w) for f, w in zip(fr, want)):
            print("ok: %d samples in a location with %s" % (n, " <- ".join(a.frames)))
            return
        if len(fr) > 1:
            got.append(" <- ".join("%s:%s:%s" % (f["func"], os.path.basename(f["file"]), f["line"]) for f in fr))
    sys.exit("no location with lines %s; inlined locations: %s" % (" <- ".join(a.frames), sorted(set(got))[:8]))


def cmd_frame(a):
    prof = load(a.profile)
    maps = {m["id"]: m for m in prof["mappings"]}
    total, near = 0, set()
    for s in prof["samples"]:
        hit = False
        for loc in s["stack"]:
            mfile = maps.get(loc["mapping"], {}).get("file", "")
            for f in loc["frames"]:
                if f["func"] != a.func:
                    if a.func.split("(")[0].split("::")[-1] in f["func"]:
                        near.add(json.dumps(f))
                    continue
                ok = frame_matches(f, a.func, a.file, a.line)
                ok = ok and (a.system is None or f.get("system_name") == a.system)
                ok = ok and (a.start_line is None or f.get("start_line") == a.start_line)
                ok = ok and (a.mapping is None or mfile.endswith(a.mapping))
                if ok:
                    hit = True
                else:
                    near.add(json.dumps(dict(f, mapping=mfile)))
        total += s["values"][0] if hit else 0
    if total < a.min_samples:
        sys.exit("function %s (%s) in %d samples < %d; similar frames: %s" % (
            a.func, vars(a), total, a.min_samples, sorted(near)[:6]))
    print("ok: %s in %d samples" % (a.func, total))


def cmd_nosym(a):
    prof = load(a.profile)
    errs = []
    for loc, n in locations(prof):
        if loc["mapping"] != 0 and loc["frames"]:
            errs.append("location %#x has lines %s" % (loc["addr"], loc["frames"]))
            break
    for m in prof["mappings"]:
        if m["has_functions"]:
            errs.append("mapping %s has_functions" % m["file"])
    for fb in a.build_id or []:
        f, bid = fb.rsplit("=", 1)
        ms = [m for m in prof["mappings"] if m["file"] == f]
        if not ms:
            errs.append("no mapping of %s" % f)
        elif any(m["build_id"] != bid for m in ms):
            errs.append("%s: build-id %s, want %s" % (f, ms[0]["build_id"], bid))
    if errs:
        sys.exit("; ".join(errs))
    print("ok: addresses only, %d mappings" % len(prof["mappings"]))


def kallsyms_text():
    """(sorted starts, start -> ({names}, module)) of kallsyms' text."""
    by = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in "tTwW":
                continue
            a = int(p[0], 16)
            mod = p[3].strip("[]") if len(p) > 3 else ""
            by.setdefault(a, (set(), mod))[0].add(p[2])
    if not by or max(by) == 0:
        sys.exit("/proc/kallsyms gives no addresses (not root? kptr_restrict?)")
    return sorted(by), by


def cmd_kernel(a):
    prof = load(a.profile)
    starts, by = kallsyms_text()
    kmaps = {m["id"] for m in prof["mappings"] if m["file"] == "[kernel.kallsyms]"}
    # The end of the kernel's own text: past it, module and BPF code only.
    core_end = max(a for a in starts if not by[a][1])
    n, errs = 0, []
    for loc, _ in locations(prof):
        if loc["mapping"] not in kmaps:
            continue
        f = loc["frames"][0] if loc["frames"] else {"func": "", "file": ""}
        if f["file"] == "[bpf]":
            continue
        # Left unnamed past the kernel's text, where kallsyms now has no
        # module or BPF symbol below it either: code gone (a BPF program
        # unloaded) before pmubpf asked for the names, as [bpf] above.
        i = bisect.bisect_right(starts, loc["addr"]) - 1
        if (f["func"].startswith("[kernel.kallsyms]+0x") and loc["addr"] > core_end and
                i >= 0 and starts[i] == core_end):
            continue
        n += 1
        ok = False
        for addr in (loc["addr"], loc["addr"] - 1):
            i = bisect.bisect_right(starts, addr) - 1
            if i >= 0:
                names, mod = by[starts[i]]
                ok = ok or (f["func"] in names and f["file"] == ("[%s]" % mod if mod else ""))
        if not ok:
            i = bisect.bisect_right(starts, loc["addr"]) - 1
            errs.append("0x%x is %r (%s), kallsyms: %s" % (loc["addr"], f["func"], f["file"],
                                                          sorted(by[starts[i]][0]) if i >= 0 else "none"))
    if errs:
        sys.exit("%d of %d kernel locations misnamed: %s" % (len(errs), n, "; ".join(errs[:4])))
    if n < a.min:
        sys.exit("only %d kernel locations (want %d)" % (n, a.min))
    print("ok: %d kernel locations named as kallsyms names them" % n)


def cmd_layout(a):
    prof = load(a.profile)
    maps = {m["id"]: m for m in prof["mappings"]}
    libs = collections.Counter((m["file"], m["build_id"]) for m in maps.values()
                               if m["file"].startswith("/") and a.lib in m["file"])
    if not libs:
        sys.exit("no mapping of %s in the profile" % a.lib)
    if max(libs.values()) > 4:
        sys.exit("%s is %d mappings (one per process?)" % (a.lib, max(libs.values())))
    seen, n = {}, 0
    for s in prof["samples"]:
        for loc in s["stack"]:
            m = maps.get(loc["mapping"])
            if not m or not m["file"].startswith("/"):
                continue
            if not m["start"] <= loc["addr"] < m["limit"]:
                sys.exit("location %#x outside its mapping [%#x, %#x) of %s" %
                         (loc["addr"], m["start"], m["limit"], m["file"]))
            key = (m["file"], m["build_id"], loc["addr"] - m["start"] + m["offset"])
            n += 1
            if seen.setdefault(key, (loc["mapping"], loc["addr"])) != (loc["mapping"], loc["addr"]):
                sys.exit("two locations at %s+%#x" % (key[0], key[2]))
    if n < a.min:
        sys.exit("only %d frames in files (want %d)" % (n, a.min))
    print("ok: %d mappings, %d locations in files, %d frames" % (len(maps), len(seen), n))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("inline")
    p.add_argument("profile")
    p.add_argument("frames", nargs="+")
    p.set_defaults(fn=cmd_inline)
    p = sub.add_parser("frame")
    p.add_argument("profile")
    p.add_argument("func")
    p.add_argument("--file")
    p.add_argument("--line", type=int)
    p.add_argument("--system")
    p.add_argument("--start-line", type=int)
    p.add_argument("--mapping")
    p.add_argument("--min-samples", type=int, default=1)
    p.set_defaults(fn=cmd_frame)
    p = sub.add_parser("nosym")
    p.add_argument("profile")
    p.add_argument("--build-id", action="append")
    p.set_defaults(fn=cmd_nosym)
    p = sub.add_parser("layout")
    p.add_argument("profile")
    p.add_argument("--lib", required=True)
    p.add_argument("--min", type=int, default=1)
    p.set_defaults(fn=cmd_layout)
    p = sub.add_parser("kernel")
    p.add_argument("profile")
    p.add_argument("--min", type=int, default=1)
    p.set_defaults(fn=cmd_kernel)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
