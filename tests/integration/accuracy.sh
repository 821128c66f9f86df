#!/usr/bin/env bash
# accuracy.sh — pmubpf's shares against measured ground truth (issue 2):
# the serial workload (ten functions, K units each) under `-- command`,
# and ten equal threads attached with -p; every share within k binomial
# sigma of the CPU time the workload measured for itself (k: check.py,
# a 0.001 chance per check that a correct profiler fails).
source "$(dirname "$0")/lib.sh"
need_root serial_shares serial_valid threads_shares threads_valid

# Serial: ~4000 samples at 999 Hz over 4 s on one thread.
if "$PMUBPF" -F 999 -o "$TMP/serial.pb.gz" -- "$B/serial" 4 "$TMP/serial.truth" 2>"$TMP/serial.err"; then
	check serial_shares $CHECK shares "$TMP/serial.pb.gz" "$TMP/serial.truth"
	check serial_valid valid_profile "$TMP/serial.pb.gz"
else
	fail serial_shares "pmubpf failed: $(tail -n1 "$TMP/serial.err")"
	fail serial_valid "no profile"
fi

# Threads: the process starts first, its ten threads only once pmubpf
# records (-p must follow threads created after it attached).
"$B/threads" 4 "$TMP/threads.truth" "$TMP/go" late >"$TMP/threads.out" &
tpid=$!
if start_recorder "$TMP/threads.err" -F 999 -p $tpid -o "$TMP/threads.pb.gz"; then
	touch "$TMP/go"
	wait $tpid
	kill -INT $RECORDER_PID
	wait $RECORDER_PID
	check threads_shares $CHECK shares "$TMP/threads.pb.gz" "$TMP/threads.truth"
	check threads_valid valid_profile "$TMP/threads.pb.gz"
else
	fail threads_shares "pmubpf did not start: $(tail -n1 "$TMP/threads.err")"
	fail threads_valid "no profile"
fi
