#!/usr/bin/env python3
"""tools/bpf_check.py OBJECT [PROGRAM...] — what every verifier of the
supported kernels (5.10 to the newest) asks of a BPF object, checked in
the object itself, so that a change that would break an older kernel
fails here, on any machine, before a kernel matrix run.

  1. The stack: for each program, the deepest chain of calls (bpf-to-bpf
     calls and the callbacks it names, as the verifier counts them) needs
     at most 512 bytes, each frame rounded up to 32. Verifiers without
     private stacks (before 6.13, and 6.13+ where a program does not get
     one) refuse more: "combined stack size of N calls is M. Too large".
  2. For the programs named (those every recording loads): no bpf_loop
     callback named (a kernel before 5.13 refuses the program: "number
     of funcs in func_info doesn't match number of subprogs", whatever
     the branches say), and no fetching atomic (BPF_FETCH: fetch-add,
     xchg, cmpxchg; before 5.12 "BPF_STX uses reserved fields").

Prints one line per violation and exits 1 if any; with -v, each program's
deepest chain. Reads `llvm-objdump -dr` (the instructions' raw bytes give
the call kinds; the relocations, the targets in other sections).
"""
import re
import subprocess
import sys

STACK_MAX = 512
INSN = re.compile(r'^\s*(\d+):\s+((?:[0-9a-f]{2} )+[0-9a-f]{2})\t(.*)$')
LABEL = re.compile(r'^([0-9a-f]+) <([\w.]+)>:')
RELO = re.compile(r'^\s+([0-9a-f]+):\s+(R_BPF_\w+)\s+([\w.]+)')
SECTION = re.compile(r'^Disassembly of section (\S+):')
STACK = re.compile(r'r10 - (\d+)\)')


def parse(obj):
    out = subprocess.run(["llvm-objdump", "-dr", obj], check=True, capture_output=True,
                         text=True).stdout
    sec = None
    funcs = {}      # name -> {sec, start, stack, insns: [(idx, bytes, text, relo)]}
    by_pos = {}     # (sec, insn index) -> function name at that index
    cur = None
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            sec, cur = m.group(1), None
            continue
        m = LABEL.match(line)
        if m:
            name = m.group(2)
            if not name.startswith("LBB"):
                cur = funcs[name] = {"sec": sec, "start": int(m.group(1), 16) // 8,
                                     "stack": 0, "insns": []}
                by_pos[(sec, cur["start"])] = name
            continue
        m = RELO.match(line)
        if m and cur and cur["insns"]:
            cur["insns"][-1][3] = (m.group(2), m.group(3))
            continue
        m = INSN.match(line)
        if m and cur is not None:
            raw = bytes(int(b, 16) for b in m.group(2).split())
            cur["insns"].append([int(m.group(1)), raw, m.group(3), None])
            for off in STACK.findall(m.group(3)):
                cur["stack"] = max(cur["stack"], int(off))
    return funcs, by_pos


def edges(name, funcs, by_pos):
    """(callee, kind) for each bpf-to-bpf call and each function named
    by an ld_imm64 (a callback), and the fetching atomics."""
    f = funcs[name]
    calls, atomics = [], []
    for idx, raw, text, relo in f["insns"]:
        op, regs = raw[0], raw[1]
        src = regs >> 4
        imm = int.from_bytes(raw[4:8], "little", signed=True)
        if op == 0x85 and src == 1:  # BPF_CALL, BPF_PSEUDO_CALL
            if relo:  # into another section: the symbol (+ imm + 1 insns)
                sym = relo[1]
                if sym in funcs:
                    calls.append((sym, "call"))
                else:
                    calls.append((by_pos.get((sym, imm + 1)), "call"))
            else:
                calls.append((by_pos.get((f["sec"], idx + 1 + imm)), "call"))
        elif op == 0x18 and relo and relo[0] == "R_BPF_64_64":
            sym = relo[1]
            if sym in funcs:
                calls.append((sym, "callback"))
            elif sym.startswith(".text"):
                target = by_pos.get((sym, imm // 8))
                if target:
                    calls.append((target, "callback"))
        elif op in (0xc3, 0xdb) and imm & 0x01:  # BPF_STX|BPF_ATOMIC|W/DW, BPF_FETCH
            atomics.append(text.strip())
    return [(c, k) for c, k in calls if c], atomics


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    obj, core = args[0], set(args[1:])
    funcs, by_pos = parse(obj)
    graph = {n: edges(n, funcs, by_pos) for n in funcs}
    progs = [n for n, f in funcs.items() if f["sec"] not in (".text",) and
             not f["sec"].startswith(".")]
    bad = []
    for want in sorted(core - set(progs)):
        bad.append(f"{want}: no such program in {obj}")

    def deepest(n, seen):
        frame = (max(funcs[n]["stack"], 1) + 31) // 32 * 32
        best = (0, [])
        for c, _ in graph[n][0]:
            if c in seen or c not in funcs:
                continue
            d = deepest(c, seen | {c})
            if d[0] > best[0]:
                best = d
        return frame + best[0], [f"{n}({frame})"] + best[1]

    def reach(n, seen):
        for c, _ in graph[n][0]:
            if c not in seen:
                seen.add(c)
                reach(c, seen)
        return seen

    for p in sorted(progs):
        total, chain = deepest(p, {p})
        if verbose:
            print(f"{p}: {total} bytes: {' -> '.join(chain)}")
        if total > STACK_MAX:
            bad.append(f"{p}: combined stack of {len(chain)} calls is {total} > {STACK_MAX}: "
                       f"{' -> '.join(chain)}")
        if p not in core:
            continue
        for f in sorted(reach(p, {p})):
            for c, kind in graph[f][0]:
                if kind == "callback":
                    bad.append(f"{p}: names the callback {c} (in {f}): refused before 5.13")
            for a in graph[f][1]:
                bad.append(f"{p}: fetching atomic in {f} ({a}): refused before 5.12")
    for b in dict.fromkeys(bad):  # once each, in order
        print(f"bpf_check: {b}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
