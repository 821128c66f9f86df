#!/usr/bin/env bash
# hwevents.sh — hardware events sampling, against exact ground truth: run
# inside the arm64 guest of `make test-arm64` (tools/kernels/arm64.sh),
# qemu's emulated Armv8 PMU under -icount shift=0 on one CPU, where the
# cycle counter advances by one per instruction. icount
# (tests/workloads/arm64/icount.c) executes known instruction counts per
# function (1:2:3), so every cycles profile's weights are checked against
# the truth it prints (check.py weights: binomial shares, the total within
# the Poisson bound), for each way of naming the event: -c and -F,
# cycles, raw r11, the PMU's sysfs syntax (armv8_pmuv3/event=0x11/) and
# its events/ alias, a group led by cycles, more events than counters
# (multiplexed: the weights scaled back), the kernel's throttle (said),
# -p and -a. The events qemu
# does not count fail with one line. Not in tests/integration/: a machine
# without the emulated PMU and its exact clock has nothing to run it on.
source "$(dirname "$0")/../integration/lib.sh"
SUITE=hwevents
need_root pmu
if [[ -z ${PMUBPF_ICOUNT:-} || ! -x $B/icount ]]; then
	fail pmu "run by tools/kernels/arm64.sh (qemu -icount shift=0, PMUBPF_ICOUNT=1), with $B/icount built"
	exit 1
fi
if ! out=$("$B/hwcycles" 2>&1); then
	fail pmu "no cycles counter in the guest: $out"
	exit 1
fi
pass pmu
pmu=$(basename "$(ls -d /sys/bus/event_source/devices/armv8_pmuv3* | head -1)")
W=$B/icount
ROUNDS=${HW_ROUNDS:-300} # 1.2 M instructions a round

# truth NAME [--exact K] PMUBPF-OPTIONS...: record icount, check each
# event's profile against its truth: the shares (binomial) and the total
# (Poisson bound), and with --exact the total within K periods of the
# count (check.py weights --exact-periods): the truth is exact here.
truth() {
	local name=$1 f exact=()
	shift
	if [[ $1 == --exact ]]; then
		exact=(--exact-periods "$2")
		shift 2
	fi
	if ! "$PMUBPF" "$@" -o "$TMP/$name.pb.gz" -- "$W" "$ROUNDS" >"$TMP/$name.truth" 2>"$TMP/$name.err"; then
		fail "$name" "pmubpf $*: $(tail -n 1 "$TMP/$name.err")"
		return
	fi
	local files=("$TMP/$name".*pb.gz)
	[[ -e ${files[0]} ]] || { fail "$name" "no profile written"; return; }
	for f in "${files[@]}"; do
		# shellcheck disable=SC2086
		local tag=${f#"$TMP/$name"}
		check "$name${tag%.pb.gz}" $CHECK weights "$f" "$TMP/$name.truth" --by leaf "${exact[@]}"
	done
}

# -c: every 10^6 cycles; -F: the kernel picks the period.
# Exact to a period per function (three) with -c; -F's periods change as
# the kernel retunes them, a few more.
truth cycles_c --exact 3 -e cycles:u -c 1000000
truth cycles_F --exact 6 -e cycles:u -F 500
# With the kernel's cycles too (the truth is the user's: kernel samples
# land on the kernel's leaves, not on spin_*; the shares still hold).
truth cycles_kernel -e cycles -c 1000000
truth raw --exact 3 -e r11:u -c 1000000
truth sysfs_event --exact 3 -e "$pmu/event=0x11/u" -c 1000000
truth sysfs_alias --exact 3 -e "$pmu/cpu_cycles/u" -c 1000000
# A group: the leader samples; the member counts, weighted at each of
# the leader's samples by its count since the one before.
truth group --exact 3 -e "{cycles:u,r11:u}" -c 1000000
# Eight cycles events on seven counters (six and the cycle counter):
# the kernel rotates them; each profile's weights are scaled by
# time_enabled/time_running back to the whole: within a period per
# function, one per rotation's edge at either end of the run, and the
# unevenness of the slots (the workload's rate is the same in every one):
# seen up to 5.4 periods off, so 12. Unscaled, they come out 12.5% (45
# periods) short.
evs=cycles:u,cpu-cycles:u,r11:u,r0011:u,$pmu/event=0x11/u,$pmu/cpu_cycles/u,$pmu/event=0x011/u,r00011:u
truth multiplexed --exact 12 -e "$evs" -c 1000000
mux_said() {
	local n
	n=$(grep -Ec '^pmubpf: [^ ]+: multiplexed: the counter ran [0-9.]+% of the time it was enabled; weights scaled by [0-9.]+$' "$TMP/multiplexed.err")
	[[ $n -eq 8 ]] || { echo "stderr says multiplexed for $n of 8 events"; return 1; }
}
check multiplexed_said mux_said

# The kernel's throttle on a hardware counter: at most 250 samples a
# second (one a tick: Debian's arm64 HZ is 250), asked for 10,000 (-c
# 100000 at one cycle a nanosecond): the counter is stopped after each
# tick's first sample. Said (profile and stderr); the samples that came,
# one a tick, keep the shares (binomial; twice the rounds, for enough).
rate_file=/proc/sys/kernel/perf_event_max_sample_rate
old_rate=$(cat "$rate_file")
echo 250 >"$rate_file"
if "$PMUBPF" -e cycles:u -c 100000 -o "$TMP/th.pb.gz" -- "$W" $((2 * ROUNDS)) >"$TMP/th.truth" 2>"$TMP/th.err"; then
	echo "$old_rate" >"$rate_file"
	check throttled $CHECK shares "$TMP/th.pb.gz" "$TMP/th.truth"
	throttle_said() {
		grep -Eq '^pmubpf: cycles:u: throttled: the kernel stopped the counter [0-9]+ times for [0-9.]+ ms of the [0-9.]+ ms it ran' "$TMP/th.err" ||
			{ echo "stderr does not say throttled: $(cat "$TMP/th.err")"; return 1; }
		$CHECK expect "$TMP/th.pb.gz" --comment '^throttled: the kernel stopped the counter'
	}
	check throttled_said throttle_said
else
	echo "$old_rate" >"$rate_file"
	fail throttled "pmubpf: $(tail -n 1 "$TMP/th.err")"
fi

# -p and -a: icount runs until killed; the shares are 1:2:3.
printf 'truth spin_a 1\ntruth spin_b 2\ntruth spin_c 3\n' >"$TMP/ratio"
"$W" -w >"$TMP/pid" &
wpid=$!
for _ in $(seq 50); do [[ -s $TMP/pid ]] && break; sleep 0.1; done
for mode in p a; do
	if [[ $mode == p ]]; then target=(-p "$wpid"); else target=(-a); fi
	if "$PMUBPF" -e cycles:u -c 1000000 "${target[@]}" -d 2 -o "$TMP/$mode.pb.gz" 2>"$TMP/$mode.err"; then
		check "target_$mode" $CHECK shares "$TMP/$mode.pb.gz" "$TMP/ratio"
	else
		fail "target_$mode" "pmubpf -${mode}: $(tail -n 1 "$TMP/$mode.err")"
	fi
done
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null

# What the emulated PMU lacks: one line naming the way out.
for ev in cache-misses branch-misses LLC-load-misses; do
	out=$("$PMUBPF" -e "$ev" -d 0.5 -o "$TMP/none.pb.gz" 2>&1)
	rc=$?
	if [[ $rc -ne 0 && $(grep -c . <<<"$out") -eq 1 && ! -e $TMP/none.pb.gz ]] &&
		grep -q "^pmubpf: event '$ev': not counted by this machine's PMU: 'pmubpf list' shows the events it has$" <<<"$out"; then
		pass "absent_$ev"
	else
		fail "absent_$ev" "exit $rc: $out"
	fi
done
# pmubpf list: cycles and the PMU's own cycles alias open, cache-misses not.
list=$("$PMUBPF" list 2>&1)
listed() {
	grep -Eq "^  cycles \| cpu-cycles +hardware +available$" <<<"$list" || { echo "cycles not available"; return 1; }
	grep -Eq "^  cache-misses +hardware +not counted by this machine's PMU" <<<"$list" || { echo "cache-misses not refused"; return 1; }
	grep -Eq "^  $pmu/cpu_cycles/ .*available$" <<<"$list" || { echo "$pmu/cpu_cycles/ not listed available"; grep "$pmu" <<<"$list" | head -3; return 1; }
}
check list listed
