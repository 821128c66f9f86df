#!/usr/bin/env bash
# limits.sh — samples are never dropped silently: with BPF maps far too
# small for a workload of thousands of distinct stacks, every sample is
# still in the profile (as itself or as a [lost: ...] sample), the total
# and the total weight (lost samples' weights included) match the
# workload's CPU time (x frequency), and comments and stderr
# say what was lost and which option to raise.
source "$(dirname "$0")/lib.sh"
need_root stacks_map_full counts_map_full roomy_all_drained

run() { # name expect-func comment-regex stderr-regex pmubpf-args...
	local name=$1 func=$2 re=$3 err_re=$4
	shift 4
	# manystacks runs for 2 s of CPU time (not wall time): at 4999 Hz
	# ~10000 samples, nearly all distinct stacks, ten times what the
	# 1024-entry maps hold, however loaded the machine. One window
	# (-d no longer than --window): nothing drains a map before it fills.
	if "$PMUBPF" -F 4999 -d 3600 --window 3600 -o "$TMP/$name.pb.gz" "$@" -- "$B/manystacks" 2 \
		>"$TMP/$name.out" 2>"$TMP/$name.err"; then
		local ns want
		ns=$(awk '$1 == "cpu_ns" { print $2 }' "$TMP/$name.out")
		want=$(awk -v n="$ns" 'BEGIN { print n / 200040 }') # 4999 Hz period
		# Samples and weights, lost ones included, against the CPU time;
		# each [lost: ...] sample weighs the timer's period (its own).
		check $name $CHECK expect "$TMP/$name.pb.gz" --func "$func" --comment "$re" --samples-near "$want" \
			--weight-near "$ns" --lost-period
		if grep -Eq "$err_re" "$TMP/$name.err"; then pass ${name}_stderr
		else fail ${name}_stderr "stderr does not report it: $(cat "$TMP/$name.err")"; fi
	else
		fail $name "pmubpf failed: $(tail -n1 "$TMP/$name.err")"
	fi
}
run stacks_map_full "[lost: user stack (stacks map full)]" '^lost: [0-9]+ user stacks: .*--stack-map-size 1024' \
	'[1-9][0-9]* user .* stacks' --stack-map-size 1024 --counts-map-size 65536
run counts_map_full "[lost: counts map full]" '^lost: [0-9]+ samples: counts map full .*--counts-map-size 1024' \
	'lost: [1-9][0-9]* samples: counts map full' --stack-map-size 65536 --counts-map-size 1024

# Maps with room for all of it: ~10000 distinct entries, drained in many
# batches (drain.c reads 1024 a call), every sample in the profile and
# nothing lost.
if "$PMUBPF" -F 4999 -o "$TMP/roomy.pb.gz" --stack-map-size 65536 --counts-map-size 65536 \
	-- "$B/manystacks" 2 >"$TMP/roomy.out" 2>"$TMP/roomy.err"; then
	ns=$(awk '$1 == "cpu_ns" { print $2 }' "$TMP/roomy.out")
	want=$(awk -v n="$ns" 'BEGIN { print n / 200040 }')
	distinct=$(sed -n 's/.*samples (\([0-9]*\) distinct).*/\1/p' "$TMP/roomy.err")
	if [[ ${distinct:-0} -gt 3000 ]]; then
		check roomy_all_drained $CHECK expect "$TMP/roomy.pb.gz" --func level0 --samples-near "$want" \
			--weight-near "$ns" --no-comment '^lost:'
	else
		fail roomy_all_drained "only ${distinct:-no} distinct entries: not several batches"
	fi
else
	fail roomy_all_drained "pmubpf failed: $(tail -n1 "$TMP/roomy.err")"
fi
