#!/usr/bin/env bash
# make_corpus.sh — regenerate the seed corpora, tests/fuzz/corpus/TARGET/
# (TARGET = the fuzz_TARGET.c it feeds): small valid inputs for each
# parser, from which libFuzzer mutates. Files named crash-* are inputs
# that once crashed a target (regressions, replayed by every run): this
# script leaves them alone.
set -euo pipefail
cd "$(dirname "$0")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
C=corpus
mkdir -p $C/{symbols,procmaps,perfmap,ehframe,labels,ksyms,pmu_sysfs,events,cli,http,flabels}

# symbols: one selector byte (0 ELF, 1 perf map, 2 MiniDebugInfo), then
# a tiny static ELF with DWARF and inlining, the same stripped, a perf
# map, a MiniDebugInfo xz image.
cat >"$T/s.c" <<'C'
static inline __attribute__((always_inline)) int sq(int x) { return x * x; }
__attribute__((noinline)) int f(int x) { return sq(x) + 1; }
__attribute__((noinline)) static int g(int x) { return f(x) * 3; }
void _start(void) { volatile int r = g(4); (void)r; for (;;) ; }
C
clang -O2 -g -nostdlib -static -Wl,--build-id -o "$T/s" "$T/s.c"
strip --strip-all -o "$T/s.stripped" "$T/s"
objcopy --only-keep-debug "$T/s" "$T/s.debug"
objcopy --strip-debug "$T/s.debug" "$T/mini"
xz -c "$T/mini" >"$T/mini.xz"
{ printf '\0'; cat "$T/s"; } >$C/symbols/elf_dwarf
{ printf '\0'; cat "$T/s.stripped"; } >$C/symbols/elf_stripped
PERFMAP='1000 10 jit_a
0x2000 0x20 LazyCompile:~f app.js:3
2010 8 later
'
printf '\001%s' "$PERFMAP" >$C/symbols/perfmap
{ printf '\002'; cat "$T/mini.xz"; } >$C/symbols/minidebuginfo

# perfmap: the text alone, and overlapping, reused and odd lines.
printf '%s' "$PERFMAP" >$C/perfmap/basic
printf '7f0000001000 40 a\n7f0000001000 20 b reused\n7f0000001010 100 c overlaps\nzz 10 bad\n10 0 empty\nffffffffffffffff 2 wraps\n' >$C/perfmap/overlap

# procmaps: one flag byte (bit 0: executable mappings only), the file.
MAPS='55d0c7a00000-55d0c7a21000 r-xp 00002000 08:01 1835043                    /usr/bin/cat
55d0c7c21000-55d0c7c22000 rw-p 00023000 08:01 1835043                    /usr/bin/cat
7f2a1c000000-7f2a1c021000 r-xp 00000000 00:00 0                          [vdso]
7f2a1d000000-7f2a1d100000 r-xp 00000000 fd:02 42                         /tmp/a b (deleted)
7f2a1e000000-7f2a1e001000 r-xp 00000000 00:05 1234                       /memfd:jit (deleted)
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
'
printf '\001%s' "$MAPS" >$C/procmaps/exec
printf '\000%s' "$MAPS" >$C/procmaps/all

# ehframe: 4-byte header (split, flags, page) then .eh_frame and
# .debug_frame of a small program built both ways.
cat >"$T/u.c" <<'C'
int h(int x);
__attribute__((noinline)) int h(int x) { volatile int a[8]; a[x & 7] = x; return a[0]; }
int main(int c, char **v) { (void)v; return h(c) + h(c + 1); }
C
eh_seed() { # object, name
	objcopy -O binary --only-section=.eh_frame "$1" "$T/eh" 2>/dev/null || : >"$T/eh"
	objcopy -O binary --only-section=.debug_frame "$1" "$T/dbg" 2>/dev/null || : >"$T/dbg"
	local n; n=$(stat -c %s "$T/eh")
	{ printf "\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8 & 255)))\\0\\x10"
	  cat "$T/eh" "$T/dbg"; } >"$C/ehframe/$2"
}
clang -O2 -g -o "$T/u" "$T/u.c"
eh_seed "$T/u" eh_frame
clang -O0 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$T/u0" "$T/u.c"
eh_seed "$T/u0" debug_frame
eh_seed "$T/s" static

# labels: a flag byte (misalignment), then memory: a ready version-1
# record, and a set with two labels (docs/labels-abi.md).
python3 - "$C/labels" <<'PY'
import struct, sys
d = sys.argv[1]
rec = struct.pack('<QIIqII', 0x424c465042554d50, 1, 64, -64, 1, 8)
rec += struct.pack('<IIIHHH', 0x5445534c, 152, 152 + 16 * (64 + 256), 16, 63, 255)
rec += b'\0' * (64 - len(rec))
open(d + '/record', 'wb').write(b'\0' + rec)
strs = b'route\0/api/x\0tenant\0acme\0'
recs = [(152, 5, 158, 6), (165, 6, 172, 4)]
total = 152 + len(strs)
hdr = struct.pack('<QIHHI', 0x1234, 0x5445534c, len(recs), 0, total) + b'\0' * 4
for r in recs:
    hdr += struct.pack('<HHHH', *r)
hdr += b'\0' * (152 - len(hdr))
open(d + '/set', 'wb').write(b'\0' + hdr + strs)
PY

# ksyms: core and module symbols, non-text ones, an odd line.
printf 'ffffffff81000000 T _stext\nffffffff81000100 t helper\nffffffff81000200 D data\nffffffff81000300 W weak_fn\nffffffffc0a01000 t xfs_fs_fill_super\t[xfs]\nffffffffc0a02000 T xfs_end\t[xfs]\nbad line\n' >$C/ksyms/basic
printf '0000000000000000 T _stext\n0000000000000000 t helper\n' >$C/ksyms/restricted

# pmu_sysfs: lines: body, type, format/a, format/b, format/c, events/x,
# events/y (a PMU "f").
printf 'f/a=0x3c,b=1,c=5/\n4\nconfig:0-7\nconfig:8-15\nconfig1:0-3,8-11\na=0x2e,b=0x41\nx,c=2\n' >$C/pmu_sysfs/terms
printf 'f/x,config2=7/\n9\nconfig:0-63\nconfig:63\nconfig2:1\na=1\ny\n' >$C/pmu_sysfs/alias

# events: one -e argument each.
printf 'cycles:pp,cpu/event=0x3c,umask=0x0/u,cache-misses' >$C/events/list
printf 'L1-dcache-load-misses:k,r01c2,cpu/cache-misses/,odd/split=0xff,wide=1/,cpu-clock' >$C/events/mixed
printf 'cache-mises' >$C/events/misspelt

# cli: arguments separated by NUL bytes (argv after "pmubpf").
printf -- '-e\0cycles:pp,cpu-clock\0-F\0999\0-p\0001,2\0-C\0000-1\0-d\0005\0-o\0x.pb.gz' >$C/cli/record
printf -- '-a\0--call-graph\0dwarf\0--top\00010\0-v\0-v\0--debuginfo-dir\0/tmp\0--\0sleep\0001' >$C/cli/command
printf -- '--http\0127.0.0.1:6060\0-e\0task-clock\0-c\0001000000\0--no-dither' >$C/cli/http
printf 'list' >$C/cli/list

# http: requests as received.
printf 'GET /debug/pprof/profile?seconds=5&event=cpu-clock&hz=99 HTTP/1.1\r\nHost: x\r\n\r\n' >$C/http/profile
printf 'GET /debug/pprof/profile?event=cpu%%2Fevent%%3D0x3c%%2F&seconds=2.5+ HTTP/1.0\n\n' >$C/http/escaped
printf 'HEAD / HTTP/1.1\r\n\r\n' >$C/http/head
# flabels: 0 + a Go binary's .go.buildinfo section (Debian's Go); 1 + a
# foreign set's notice as BPF fills it (two pairs, a duplicate key, an
# empty key, a cut value).
cat >"$T/gv.go" <<'GO'
package main

func main() {}
GO
(cd "$T" && GO111MODULE=off GOFLAGS= go build -o gv gv.go)
objcopy -O binary --only-section=.go.buildinfo "$T/gv" "$T/bi"
{ printf '\0'; cat "$T/bi"; } >$C/flabels/buildinfo_go
cat >"$T/fl.c" <<'C'
#include <stdio.h>
#include <string.h>
typedef unsigned int __u32;
typedef unsigned long long __u64;
#include "pmubpf_abi.h"
static void pair(struct pmubpf_flabel *p, const char *k, const char *v, unsigned vlen)
{
	p->flags = PMUBPF_FLABEL_PRESENT;
	p->klen = strlen(k);
	p->vlen = vlen;
	strcpy(p->key, k);
	strcpy(p->val, v);
}
int main(void)
{
	static struct pmubpf_flabel_notice n;
	n.hdr.kind = 3;
	n.hdr.label = 0x1234;
	n.source = PMUBPF_LSRC_GO;
	n.nslots = 5;
	n.total = 5;
	pair(&n.pairs[0], "tenant", "blue", 4);
	pair(&n.pairs[1], "endpoint", "/api", 4);
	pair(&n.pairs[2], "tenant", "red", 3);
	pair(&n.pairs[3], "", "empty", 5);
	pair(&n.pairs[4], "long", "cut", 1000);
	putchar(1);
	fwrite(&n, sizeof(n), 1, stdout);
	return 0;
}
C
clang -I ../../bpf -o "$T/fl" "$T/fl.c"
"$T/fl" >$C/flabels/notice
# 2 + an OpenTelemetry record (ids, a key twice, an unknown index, a cut
# entry); 3 + a process context payload (ProcessContext: a resource, the
# threadlocal schema and key map under extra_attributes).
python3 - $C/flabels <<'PY'
import struct, sys
d = sys.argv[1]
attrs = b"".join(bytes([k, len(v)]) + v for k, v in
                 [(0, b"/stale"), (1, b"a"), (0, b"/a"), (7, b"x")]) + bytes([2, 9]) + b"cut"
rec = bytes.fromhex("0af7651916cd43dd8448eb211c80319c" "b7ad6b7169203331") + \
    struct.pack("<BBH", 1, 1, len(attrs)) + attrs
open(d + "/otel_record", "wb").write(b"\2" + rec)
def varint(v):
    out = b""
    while True:
        c = v & 0x7f
        v >>= 7
        out += bytes([c | (0x80 if v else 0)])
        if not v:
            return out
def field(n, b):
    return varint(n << 3 | 2) + varint(len(b)) + b
def kv(k, any_):
    return field(1, k) + field(2, any_)
keys = b"".join(field(1, field(1, k)) for k in [b"http.route", b"phase", b"user.id"])
pl = field(1, field(1, kv(b"service.name", field(1, b"svc")))) + \
    field(2, kv(b"threadlocal.schema_version", field(1, b"tlsdesc_v1_dev"))) + \
    field(2, kv(b"threadlocal.attribute_key_map", field(5, keys)))
open(d + "/otel_payload", "wb").write(b"\3" + pl)
PY

ls -l $C/*
