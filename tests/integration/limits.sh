#!/usr/bin/env bash
# limits.sh — samples are never dropped silently: with BPF maps far too
# small for a workload of thousands of distinct stacks, every sample is
# still in the profile (as itself or as a [lost: ...] sample), the total
# and the total weight (lost samples' weights included) are exactly the
# workload's count of tracepoint hits, and comments and stderr
# say what was lost and which option to raise.
source "$(dirname "$0")/lib.sh"
need_root stacks_map_full counts_map_full roomy_all_drained

# manystacks N takes exactly N steps, each at the bottom of a random
# recursion 1-300 deep (deeper than a kept stack) and each making one
# getppid call: sampled at every hit of its tracepoint, N samples, nearly
# all distinct stacks, ten times what the 1024-entry maps hold. The count
# is exact, whatever the machine's timers do (a VM's host that holds
# interrupts off makes a timer skip periods: CPU time then predicts
# samples that were never taken). -c 1: each sample weighs 1.
N=12000
TP=(-e syscalls:sys_enter_getppid -c 1)

run() { # name expect-func comment-regex stderr-regex pmubpf-args...
	local name=$1 func=$2 re=$3 err_re=$4
	shift 4
	# One window (-d no longer than --window): nothing drains a map
	# before it fills.
	if "$PMUBPF" "${TP[@]}" -d 3600 --window 3600 -o "$TMP/$name.pb.gz" "$@" -- "$B/manystacks" $N \
		>"$TMP/$name.out" 2>"$TMP/$name.err"; then
		# Every sample, lost ones included, in the profile; each
		# [lost: ...] sample weighs its period.
		check $name $CHECK expect "$TMP/$name.pb.gz" --func "$func" --comment "$re" \
			--samples-exact $N --weight-exact $N --lost-period
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

# Maps with room for all of it: N distinct entries, drained in many
# batches (drain.c reads 1024 a call), every sample in the profile and
# nothing lost.
if "$PMUBPF" "${TP[@]}" -o "$TMP/roomy.pb.gz" --stack-map-size 65536 --counts-map-size 65536 \
	-- "$B/manystacks" $N >"$TMP/roomy.out" 2>"$TMP/roomy.err"; then
	distinct=$(sed -n 's/.*samples (\([0-9]*\) distinct).*/\1/p' "$TMP/roomy.err")
	if [[ ${distinct:-0} -gt 3000 ]]; then
		check roomy_all_drained $CHECK expect "$TMP/roomy.pb.gz" --func level0 --samples-exact $N \
			--weight-exact $N --no-comment '^lost:'
	else
		fail roomy_all_drained "only ${distinct:-no} distinct entries: not several batches"
	fi
else
	fail roomy_all_drained "pmubpf failed: $(tail -n1 "$TMP/roomy.err")"
fi
