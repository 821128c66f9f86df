#!/usr/bin/env bash
# fuzz.sh — a short, bounded libFuzzer pass over every parser of outside
# input (tests/fuzz/fuzz_TARGET.c, built by make test-build / make fuzz):
# each target first replays its whole corpus, tests/fuzz/corpus/TARGET/
# (the seeds, and crash-* inputs that once crashed it: regressions), then
# mutates for a few seconds (about 40 s in all). Needs no root. New inputs
# go to a scratch directory; the corpus stays as is. Longer runs:
#   make fuzz && tools/fuzz.sh 600
source "$(dirname "$0")/lib.sh"
FUZZ=$ROOT/${PMUBPF_BUILD:-build}/fuzz
CORPUS=$ROOT/tests/fuzz/corpus
targets=()
for f in "$ROOT"/tests/fuzz/fuzz_*.c; do
	t=${f##*/fuzz_}
	targets+=("${t%.c}")
done
secs=$((40 / ${#targets[@]}))
((secs > 0)) || secs=1
for t in "${targets[@]}"; do
	if [[ ! -x $FUZZ/fuzz_$t ]]; then
		fail "$t" "$FUZZ/fuzz_$t not built (make fuzz)"
		continue
	fi
	if [[ ! -d $CORPUS/$t ]] || [[ -z $(ls -A "$CORPUS/$t") ]]; then
		fail "$t" "no seed corpus in $CORPUS/$t"
		continue
	fi
	mkdir -p "$TMP/$t"
	# TMPDIR: the fake sysfs trees some targets make go where lib.sh
	# cleans up, even after a crash.
	if (cd "$TMP" && TMPDIR=$TMP timeout $((secs + 60)) "$FUZZ/fuzz_$t" -max_total_time=$secs \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$TMP/$t-" \
		"$TMP/$t" "$CORPUS/$t") >"$TMP/$t.log" 2>&1; then
		pass "$t"
	else
		fail "$t" "$(grep -m1 -E 'ERROR|SUMMARY|Timeout|deadly|runtime error' "$TMP/$t.log" || tail -n1 "$TMP/$t.log")"
		tail -n 30 "$TMP/$t.log" | sed 's/^/    /'
		for a in "$TMP/$t"-*; do
			[[ -f $a ]] || continue
			mkdir -p "$FUZZ/artifacts"
			cp "$a" "$FUZZ/artifacts/"
			echo "    artifact: $FUZZ/artifacts/${a##*/} (once fixed, add it to tests/fuzz/corpus/$t/ as crash-NAME)"
		done
	fi
done
