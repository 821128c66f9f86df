#!/usr/bin/env bash
# symbolize_bench.sh — `make bench-symbolize`: symbolize 100k random
# addresses in the biggest large shared library found on this system
# (libLLVM / libclang-cpp; symbol tables only, Debian strips their DWARF)
# and in pmubpf itself (-O2 -g: DWARF, inline frames), with pmubpf's
# symbolizer, eu-addr2line and GNU addr2line (tools/bench/symbolize_bench.c),
# then write the "## Symbolization" section of docs/benchmarks.md (only
# that section: the rest of the file belongs to the other benchmarks).
set -euo pipefail
cd "$(dirname "$0")/../.."
BENCH=build/tools/symbolize_bench
N=${SYMBENCH_N:-100000}
DOC=docs/benchmarks.md

lib=""
best=0
for f in /usr/lib/*/libLLVM*.so* /usr/lib/*/libclang-cpp.so* /usr/lib/llvm-*/lib/libclang-cpp.so* /usr/lib/llvm-*/lib/libLLVM*.so*; do
	[[ -e $f ]] || continue
	real=$(readlink -f "$f")
	size=$(stat -c %s "$real")
	if ((size > best)); then best=$size lib=$real; fi
done
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for target in ${lib:+"$lib"} "$PWD/pmubpf"; do
	echo "symbolize_bench: $target, $N addresses" >&2
	"$BENCH" "$target" "$N" | tee -a "$rows"
done

section=$(mktemp)
{
	echo "## Symbolization"
	echo
	echo "\`make bench-symbolize\` ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r)): $N random"
	echo "addresses inside each file's executable segments, symbolized by pmubpf's"
	echo "symbolizer (tools/bench/symbolize_bench.c: elfsym + debuginfo + dwarf +"
	echo "demangling, inline frames included), by \`eu-addr2line -f -i -C\` and by"
	echo "\`addr2line -f -i -C\` (binutils), each in its own process; time is wall"
	echo "clock, RSS the process's peak (wait4)."
	echo
	echo "| file | tool | seconds | addresses/s | peak RSS MiB | named |"
	echo "| --- | --- | ---: | ---: | ---: | ---: |"
	cat "$rows"
	echo
	echo "Notes: ${lib:-no large library found}$([[ -n $lib ]] && echo " is $((best / 1048576)) MiB with only .dynsym (Debian strips its")"
	[[ -n $lib ]] && echo "DWARF and .symtab): \"named\" differs because pmubpf names an address only if a"
	[[ -n $lib ]] && echo "symbol's [start, start+size) covers it, while addr2line takes the nearest lower"
	[[ -n $lib ]] && echo "symbol whatever its size (so it names internal functions after exported ones)."
	echo "pmubpf's numbers are one process doing the whole job, tables built lazily on"
	echo "first lookup (symbols sorted once, binary search; DWARF unit and function"
	echo "ranges sorted per unit on first use)."
	echo
} >"$section"

python3 tools/bench/doc_section.py "$DOC" "$section" 'Symbolization'
echo "symbolize_bench: wrote the Symbolization section of $DOC" >&2
