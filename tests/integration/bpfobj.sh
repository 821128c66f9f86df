#!/usr/bin/env bash
# bpfobj.sh — what every verifier from 5.10 to the newest asks of the BPF
# objects, checked in the objects themselves (tools/bpf_check.py), on
# any machine: the kernel matrix (tests/integration/kernels.sh) proves
# the same by loading them, but only on the kernels it boots.
#   fits_all_verifiers: pmubpf's objects (x86-64 and arm64): every
#     program's deepest call chain within 512 bytes of stack; the
#     programs every recording loads name no bpf_loop callback and hold
#     no fetching atomic.
#   check_bites: on programs of its own, each made to break one rule, the
#     checker fails with that rule's line (and passes their clean twin).
#   layers_one_way: bpf/'s files include and use one way (tools/bpf_layers.py:
#     nothing uses what a file including it defines; no include cycle),
#     and the checker fails a tree of its own where two headers do.
# Needs clang and llvm-objdump (tools/deps.sh), no root.
source "$(dirname "$0")/lib.sh"

CORE=(on_sample on_tracepoint on_exec on_fork on_exit on_free)

out=""
for o in "$ROOT/${PMUBPF_BUILD:-build}/pmubpf.bpf.o" "$ROOT/${PMUBPF_BUILD:-build}/pmubpf.arm64.bpf.o"; do
	if [[ ! -f $o ]]; then
		out+="missing $o (make test-build)"$'\n'
		continue
	fi
	out+=$(python3 "$ROOT/tools/bpf_check.py" "$o" "${CORE[@]}" 2>&1) || out+=$'\n'"(exit $?)"
done
if [[ -z ${out//$'\n'/} ]]; then
	pass fits_all_verifiers
else
	fail fits_all_verifiers "$(head -n 1 <<<"$out")"
	printf '%s\n' "$out" | sed 's/^/    /' | head -n 10
fi

# Programs of our own: deep (a chain of frames over 512 bytes), loop (a
# bpf_loop callback), fetch (a fetch-add whose old value is used), and
# clean, which breaks none. BROKEN=name builds that one broken.
cat >"$TMP/rules.bpf.c" <<'SRC'
typedef unsigned long long u64;
typedef unsigned int u32;
#define SEC(n) __attribute__((section(n), used))
#define NOINLINE __attribute__((noinline))
static long (*bpf_loop)(u32, void *, void *, u64) = (void *)181;
static long (*bpf_probe_read_kernel)(void *, u32, const void *) = (void *)113;
u32 counter;
char LICENSE[] SEC("license") = "GPL";

NOINLINE int leaf(u64 a)
{
	volatile char buf[DEPTH];
	bpf_probe_read_kernel((void *)buf, sizeof(buf), (void *)a);
	return buf[3];
}
NOINLINE int mid(u64 a)
{
	volatile char buf[DEPTH];
	bpf_probe_read_kernel((void *)buf, sizeof(buf), (void *)a);
	return leaf(a) + buf[1];
}
static long step(u32 i, void *ctx) { return 0; }

SEC("perf_event") int prog(void *ctx)
{
	volatile char buf[DEPTH];
	int r;
	bpf_probe_read_kernel((void *)buf, sizeof(buf), ctx);
	r = mid((u64)ctx) + buf[2];
#ifdef LOOP
	bpf_loop(4, step, 0, 0);
#endif
#ifdef FETCH
	r += __sync_fetch_and_add(&counter, 1);
#else
	__sync_fetch_and_add(&counter, 1);
#endif
	return r;
}
SRC
# build NAME FLAGS...: the object for NAME, "" if clang failed.
build() {
	local name=$1
	shift
	clang -O2 -target bpf -mcpu=v3 -c "$TMP/rules.bpf.c" -o "$TMP/$name.o" "$@" 2>"$TMP/$name.err" &&
		echo "$TMP/$name.o"
}
# verdict OBJ: the checker's first line and exit status.
verdict() {
	local o rc
	o=$(python3 "$ROOT/tools/bpf_check.py" "$1" prog 2>&1); rc=$?
	echo "$rc $(head -n 1 <<<"$o")"
}
bites=""
clean=$(build clean -DDEPTH=64) || bites+="clean did not build: $(head -n 1 "$TMP/clean.err"); "
deep=$(build deep -DDEPTH=200) || bites+="deep did not build; "
loop=$(build loop -DDEPTH=64 -DLOOP) || bites+="loop did not build; "
fetch=$(build fetch -DDEPTH=64 -DFETCH) || bites+="fetch did not build; "
if [[ -z $bites ]]; then
	v=$(verdict "$clean"); [[ $v == "0 " ]] || bites+="clean: '$v', want a pass; "
	v=$(verdict "$deep"); [[ $v == "1 bpf_check: prog: combined stack of 3 calls is 672 > 512"* ]] ||
		bites+="deep: '$v', want the stack line; "
	v=$(verdict "$loop"); [[ $v == "1 bpf_check: prog: names the callback step"* ]] ||
		bites+="loop: '$v', want the callback line; "
	v=$(verdict "$fetch"); [[ $v == "1 bpf_check: prog: fetching atomic"* ]] ||
		bites+="fetch: '$v', want the atomic line; "
fi
if [[ -z $bites ]]; then
	pass check_bites
else
	fail check_bites "$bites"
fi


# bpf/ itself, then a tree of two headers that use each other.
lay=$(python3 "$ROOT/tools/bpf_layers.py" --direct "$ROOT/bpf" 2>&1); rc=$?
mkdir -p "$TMP/lay"
cat >"$TMP/lay/low.bpf.h" <<'SRC'
#ifndef LOW
#define LOW
static int low_helper(int x) { return high_table[x]; }
#endif
SRC
cat >"$TMP/lay/high.bpf.h" <<'SRC'
#ifndef HIGH
#define HIGH
int high_table[4];
#include "low.bpf.h"
static int high_use(void) { return low_helper(1); }
#endif
SRC
bad=$(python3 "$ROOT/tools/bpf_layers.py" "$TMP/lay" 2>&1); brc=$?
if [[ $rc -ne 0 ]]; then
	fail layers_one_way "bpf/: $(head -n 1 <<<"$lay")"
elif [[ $brc -eq 0 ]] || ! grep -q 'uses high_table' <<<"$bad"; then
	fail layers_one_way "a header using its includer's definition passed: $(head -n 1 <<<"$bad")"
else
	pass layers_one_way
fi
