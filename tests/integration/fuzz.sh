#!/usr/bin/env bash
# fuzz.sh — a short, bounded libFuzzer pass over the symbol readers (ELF,
# DWARF, perf maps, MiniDebugInfo: tests/fuzz/fuzz_symbols.c), from the
# seed corpus in tests/fuzz/corpus. Needs no root. Longer runs by hand:
#   make fuzz && build/fuzz/fuzz_symbols -max_total_time=600 DIR tests/fuzz/corpus
source "$(dirname "$0")/lib.sh"
FUZZ=$ROOT/build/fuzz/fuzz_symbols
if [[ ! -x $FUZZ ]]; then
	# make test-build builds it; tools/deps.sh installs libFuzzer
	# (libclang-rt-dev): missing is a broken set-up, not a SKIP.
	fail symbols_short_run "not built (make test-build builds it; needs clang's libFuzzer: tools/deps.sh)"
	exit 1
fi
mkdir -p "$TMP/new"
# New inputs go to the first (scratch) directory; the corpus stays as is.
if (cd "$TMP" && timeout 120 "$FUZZ" -runs=20000 -max_total_time=20 -rss_limit_mb=2048 \
	-artifact_prefix="$TMP/" "$TMP/new" "$ROOT/tests/fuzz/corpus") >"$TMP/fuzz.log" 2>&1; then
	pass symbols_short_run
else
	fail symbols_short_run "$(grep -m1 -E 'ERROR|SUMMARY|Timeout|deadly' "$TMP/fuzz.log" || tail -n1 "$TMP/fuzz.log")"
	tail -n 30 "$TMP/fuzz.log" | sed 's/^/    /'
	ls "$TMP"/crash-* "$TMP"/leak-* 2>/dev/null | sed 's/^/    artifact (copy it before it is removed): /'
fi
