#!/usr/bin/env bash
# lifecycle.sh — processes that go away, and recordings that are stopped:
# a process that exits and whose binary is deleted mid-recording is still
# named; SIGINT and SIGTERM stop a recording and leave a valid profile; a
# program that execs mid-recording is named after each image.
source "$(dirname "$0")/lib.sh"
need_root deleted_binary sigint_valid sigterm_valid exec_new_image dlopen_late dlopen_late_exited

# The victim: a private copy of serial, deleted while it runs, gone
# before pmubpf writes.
cp "$B/serial" "$TMP/victim"
if start_recorder "$TMP/del.err" -a -F 999 -o "$TMP/del.pb.gz"; then
	"$TMP/victim" 1 /dev/null & vpid=$!
	sleep 0.3
	rm -f "$TMP/victim"
	wait $vpid
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	check deleted_binary $CHECK expect "$TMP/del.pb.gz" --pid $vpid --func f10 --func main
else
	fail deleted_binary "pmubpf did not start: $(tail -n1 "$TMP/del.err")"
fi

for sig in INT TERM; do
	name=sig${sig,,}_valid
	"$B/serial" 3 /dev/null & w=$!
	if start_recorder "$TMP/$sig.err" -a -F 999 -o "$TMP/$sig.pb.gz"; then
		sleep 1
		kill -$sig $RECORDER_PID
		wait $RECORDER_PID; rc=$?
		if [[ $rc -ne 0 ]]; then
			fail $name "exit status $rc after SIG$sig"
		else
			check $name valid_profile "$TMP/$sig.pb.gz"
		fi
		if ls "$TMP"/$sig.pb.gz.tmp* >/dev/null 2>&1; then
			fail ${name}_no_tmp "temporary file left behind"
		else
			pass ${name}_no_tmp
		fi
	else
		fail $name "pmubpf did not start: $(tail -n1 "$TMP/$sig.err")"
	fi
	kill $w 2>/dev/null; wait $w 2>/dev/null
done

# exec: the shell runs serial for a second, then execs demo in the same
# process. Both images must be named in that one pid.
if "$PMUBPF" -F 999 -o "$TMP/exec.pb.gz" -- sh -c "'$B/serial' 1 /dev/null; exec '$B/demo' 1 >/dev/null" 2>"$TMP/exec.err"; then
	check exec_new_image $CHECK expect "$TMP/exec.pb.gz" --func f10 --func handle_request
else
	fail exec_new_image "pmubpf failed: $(tail -n1 "$TMP/exec.err")"
fi

# dlopen: a library mapped half a second after the process's first
# sample, which then exits before pmubpf writes: still named (the kernel's
# mmap report makes pmubpf read the maps while the library is there).
if "$PMUBPF" -F 999 -o "$TMP/dl.pb.gz" -- "$B/dlopen_work" "$B/libhotlib.so" 0.5 0.5 2>"$TMP/dl.err"; then
	check dlopen_late $CHECK expect "$TMP/dl.pb.gz" --func hotlib_spin --func main
else
	fail dlopen_late "pmubpf failed: $(tail -n1 "$TMP/dl.err")"
fi
# The same under -a, recorder started first, process long gone at the end.
if start_recorder "$TMP/dla.err" -a -F 999 -o "$TMP/dla.pb.gz"; then
	"$B/dlopen_work" "$B/libhotlib.so" 0.4 0.4 & dp=$!
	wait $dp
	sleep 0.5
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	check dlopen_late_exited $CHECK expect "$TMP/dla.pb.gz" --pid $dp --func hotlib_spin
else
	fail dlopen_late_exited "pmubpf did not start: $(tail -n1 "$TMP/dla.err")"
fi
