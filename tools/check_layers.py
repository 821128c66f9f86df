#!/usr/bin/env python3
"""tools/check_layers.py — user/'s folders are layers; code may only use
what lies below it.

  user/LAYER/*.[ch], lowest first (LAYERS below); user/main.c on top.

Two checks, one line per violation, exit 1 if any:
  1. includes: `#include "X.h"` names a header of the same folder, or
     `LOWER/X.h` of a lower layer; never a higher one (up) or one of the
     same rank in another folder (sideways). Generated and BPF-shared
     headers (build/, bpf/) are allowed everywhere.
  2. calls (from the built objects, nm): an object may only use symbols
     defined in its own layer or lower, and the objects of one folder must
     not use each other in a circle (A calls into B and B into A, through
     any path) — split the shared part out instead.

Usage: tools/check_layers.py [BUILD_DIR]   (BUILD_DIR: build, for step 2;
       step 2 is skipped for objects not built yet)
"""
import os, re, subprocess, sys

LAYERS = ["lib", "config", "pprof", "push", "symbols", "procs", "unwind", "perf",
          "report", "record", "top", "cli",
          "http"]
RANK = {l: i for i, l in enumerate(LAYERS)}
TOP = len(LAYERS)                      # user/main.c
EXTERNAL = {"pmubpf_abi.h", "pmubpf.skel.h", "ksymnames.skel.h", "exitprobe.skel.h", "profile.pb-c.h"}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
build = sys.argv[1] if len(sys.argv) > 1 else "build"
bad = []


def layer_of(path):  # user/procs/procs.c -> "procs"; user/main.c -> None
    parts = path.split("/")
    return parts[1] if len(parts) == 3 else None


def rank(layer):
    return TOP if layer is None else RANK[layer]


sources = []
for d in sorted(os.listdir("user")):
    p = os.path.join("user", d)
    if os.path.isdir(p):
        if d not in RANK:
            bad.append(f"user/{d}/: folder is not a layer (add it to LAYERS in {__file__})")
            continue
        sources += [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith((".c", ".h"))]
    elif d.endswith((".c", ".h")):
        if d != "main.c":
            bad.append(f"user/{d}: only main.c lives at the top; put it in a layer folder")
        sources.append(p)

# 1. includes
for src in sources:
    mine = layer_of(src)
    text = open(src, encoding="utf-8", errors="replace").read()
    for m in INC.finditer(text):
        name = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        where = f"{src}:{line}: #include \"{name}\""
        if "/" not in name:
            if os.path.exists(os.path.join(os.path.dirname(src), name)) or name in EXTERNAL:
                continue
            bad.append(f"{where}: no such header here (another layer's header is named LAYER/{name})")
            continue
        if ".." in name.split("/"):
            bad.append(f"{where}: no '..' in an include: name the layer (LAYER/{os.path.basename(name)})")
            continue
        other, rest = name.split("/", 1)
        if other not in RANK or not os.path.exists(os.path.join("user", name)):
            bad.append(f"{where}: no such header")
        elif other == mine:
            bad.append(f"{where}: same folder: include it as \"{rest}\"")
        elif rank(other) > rank(mine):
            bad.append(f"{where}: points up ({mine or 'main'} is below {other})")
        elif rank(other) == rank(mine):
            bad.append(f"{where}: points sideways")

# 2. calls, from the objects
defs, uses = {}, {}
objs = [s for s in sources if s.endswith(".c")]
for src in objs:
    obj = os.path.join(build, src[:-2] + ".o")
    if not os.path.exists(obj):
        continue
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    d, u = set(), set()
    for ln in out.splitlines():
        f = ln.split()
        if len(f) == 3 and f[1] in "TDBR":
            d.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            u.add(f[1])
    defs[src], uses[src] = d, u
owner = {}
for src, d in defs.items():
    for sym in d:
        owner[sym] = src
edges = {src: {owner[s] for s in u if s in owner and owner[s] != src} for src, u in uses.items()}
for src, outs in sorted(edges.items()):
    for dst in sorted(outs):
        if rank(layer_of(dst)) > rank(layer_of(src)):
            syms = sorted(s for s in uses[src] if owner.get(s) == dst)
            bad.append(f"{src}: calls up into {dst} ({', '.join(syms[:3])})")
        elif layer_of(dst) != layer_of(src) and rank(layer_of(dst)) == rank(layer_of(src)):
            bad.append(f"{src}: calls sideways into {dst}")
# circles among the objects of one folder (Tarjan's strongly connected components)
index, low, stack, on, sccs = {}, {}, [], set(), []
def strong(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
for v in sorted(edges):
    if v not in index:
        strong(v)
for comp in sccs:
    bad.append("circle: " + " <-> ".join(comp) + " call each other: move the shared part into one of them or below")

for b in bad:
    print("check-layers: " + b)
checked = len(defs)
print(f"check-layers: {len(sources)} files, {checked} objects: "
      + ("ok" if not bad else f"{len(bad)} violation(s)"))
sys.exit(1 if bad else 0)
