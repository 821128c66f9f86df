#!/usr/bin/env bash
# make_corpus.sh — regenerate tests/fuzz/corpus/ (small seeds, each with
# fuzz_symbols' one-byte selector first): a tiny static ELF with DWARF
# and inlining, the same stripped, a perf map, a MiniDebugInfo xz image.
set -euo pipefail
cd "$(dirname "$0")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
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
{ printf '\0'; cat "$T/s"; } >corpus/elf_dwarf
{ printf '\0'; cat "$T/s.stripped"; } >corpus/elf_stripped
printf '\001%s' '1000 10 jit_a
0x2000 0x20 LazyCompile:~f app.js:3
2010 8 later
' >corpus/perfmap
{ printf '\002'; cat "$T/mini.xz"; } >corpus/minidebuginfo
ls -l corpus
