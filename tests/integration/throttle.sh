#!/usr/bin/env bash
# throttle.sh — samples the kernel's throttle took are said and weighed
# back. A CPU that takes more samples in a tick than
# kernel.perf_event_max_sample_rate allows stops the event until the next
# tick (the kernel lowers that rate by itself when sampling interrupts run
# long): no sample, no count, while time_running goes on. With the rate
# held at 1000/s and a cpu-clock sample every 100 us (10,000/s), nine
# tenths of the time is stopped: the profile must say so (comment and
# stderr) and scale its weights by the time it counted, so that each of
# serial's functions still weighs its measured CPU time (check.py
# weights: binomial shares, the total within the Poisson bound). At the
# default rate nothing is said.
source "$(dirname "$0")/lib.sh"
need_root timer_said timer_weights said_once default_quiet
rate_file=/proc/sys/kernel/perf_event_max_sample_rate
old=$(cat "$rate_file")
trap 'echo "$old" >"$rate_file"; kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
echo 1000 >"$rate_file"
if "$PMUBPF" -e cpu-clock -c 100000 -o "$TMP/t.pb.gz" -- "$B/serial" 2 "$TMP/t.truth" 2>"$TMP/t.err"; then
	echo "$old" >"$rate_file"
	check timer_said $CHECK expect "$TMP/t.pb.gz" --comment \
		'^throttled: the kernel stopped the counter [0-9]+ times for [0-9.]+ ms in all \(more samples a second on a CPU than kernel.perf_event_max_sample_rate=1000 allows\): no samples then; weights scaled by [0-9.]+'
	check timer_weights $CHECK weights "$TMP/t.pb.gz" "$TMP/t.truth"
	n=$(grep -c '^pmubpf: cpu-clock: throttled: the kernel stopped the counter' "$TMP/t.err")
	if [[ $n -eq 1 ]]; then pass said_once; else fail said_once "stderr says throttled $n times: $(cat "$TMP/t.err")"; fi
else
	echo "$old" >"$rate_file"
	for c in timer_said timer_weights said_once; do fail $c "pmubpf: $(tail -n 1 "$TMP/t.err")"; done
fi
# At the default rate and -F 999: no throttle, nothing said.
if "$PMUBPF" -e cpu-clock -o "$TMP/d.pb.gz" -- "$B/serial" 1 /dev/null 2>"$TMP/d.err"; then
	if grep -q throttled "$TMP/d.err"; then fail default_quiet "stderr: $(grep throttled "$TMP/d.err")"
	else check default_quiet $CHECK expect "$TMP/d.pb.gz" --no-comment '^throttled'; fi
else
	fail default_quiet "pmubpf: $(tail -n 1 "$TMP/d.err")"
fi
