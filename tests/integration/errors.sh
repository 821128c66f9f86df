#!/usr/bin/env bash
# errors.sh — bad input and machines that cannot do what is asked: one
# line on stderr, a non-zero exit, and no output file. Hardware events
# give the clear error where there is no PMU, and samples where there is.
source "$(dirname "$0")/lib.sh"

# expect_error NAME PATTERN ARGS...: pmubpf ARGS fails with exactly one
# stderr line matching PATTERN and writes no profile.
expect_error() {
	local name=$1 pat=$2 out rc lines
	shift 2
	rm -rf "$TMP"/out*
	# LIMIT: seconds before the run is killed (exit 124, no stderr line).
	out=$(${LIMIT:+timeout "$LIMIT"} "$PMUBPF" -o "$TMP/out.pb.gz" "$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$out" | grep -c .)
	if [[ $rc -eq 0 ]]; then fail "$name" "exit 0 for: $*"
	elif [[ $lines -ne 1 ]]; then fail "$name" "want one stderr line, got $lines: $out"
	elif ! grep -Eq -- "$pat" <<<"$out"; then fail "$name" "stderr '$out' does not match /$pat/"
	elif ls "$TMP"/out* >/dev/null 2>&1; then fail "$name" "output file left: $(ls "$TMP"/out*)"
	else pass "$name"; fi
}

expect_error unknown_event "unknown event 'cache-mises' \(did you mean 'cache-misses'" -e cache-mises -d 0.1
expect_error bad_modifier "modifier" -e cycles:x -d 0.1
expect_error bad_freq "bad frequency" -F 0 -d 0.1
expect_error bad_freq_text "bad frequency" -F fast -d 0.1
expect_error bad_period "bad period" -c -5 -d 0.1
expect_error freq_and_period "exclude each other" -c 1000 -F 99 -d 0.1
expect_error bad_duration "bad duration" -d -1
expect_error unknown_option "unknown option" --frobnicate
expect_error no_stacks "no stack" --no-user --no-kernel -d 0.1
expect_error bad_cpu_list "bad CPU list" -C 3-1 -d 0.1
expect_error missing_dir "cannot write '/nonexistent/dir/p.pb.gz': no directory '/nonexistent/dir'" -o /nonexistent/dir/p.pb.gz -d 0.1
# --every into a directory that is not there, or not one: the directory
# is named (not a window's file, stamped 1970: no window exists yet),
# and it is checked before the recording: a 10-minute one given 60 s.
LIMIT=60 expect_error every_missing_dir "^pmubpf: cannot write into directory '$TMP/out.d/': no such directory\$" \
	--every 2 -d 600 -o "$TMP/out.d/"
LIMIT=60 expect_error every_missing_dir_prefix "^pmubpf: cannot write into directory '$TMP/out.d': no such directory\$" \
	--every 2 -d 600 -o "$TMP/out.d/p.pb.gz"
LIMIT=60 expect_error every_not_dir "^pmubpf: cannot write into directory '/etc/passwd/': Not a directory\$" \
	--every 2 -d 600 -o /etc/passwd/
# Quoted input with a newline (found by tests/fuzz/fuzz_cli.c) stays one line.
expect_error newline_in_event "unknown event 'cache\?misses'" -e $'cache\nmisses' -d 0.1

if [[ $(id -u) -ne 0 ]]; then
	for n in no_such_pid no_such_tid offline_cpu bad_command not_root hw_cycles hw_cache_misses hw_raw hw_precise; do
		fail $n "needs root (run: sudo make test)"
	done
	exit 1
fi
expect_error no_such_pid "no such process: 999999" -p 999999 -d 0.1
expect_error no_such_tid "no such thread: 999999" -t 999999 -d 0.1
expect_error offline_cpu "CPU 4000 is not online" -C 4000 -d 0.1
expect_error bad_command "cannot run 'no-such-command-xyz'" -- no-such-command-xyz

# Not root: nobody cannot load BPF.
if command -v setpriv >/dev/null; then
	out=$(cd "$TMP" && setpriv --reuid=65534 --regid=65534 --clear-groups "$PMUBPF" -o /tmp/pmubpf-nobody-$$.pb.gz -d 0.2 2>&1); rc=$?
	if [[ $rc -ne 0 && $(grep -c . <<<"$out") -eq 1 ]] && grep -q "permission denied: run as root" <<<"$out" &&
		[[ ! -e /tmp/pmubpf-nobody-$$.pb.gz ]]; then
		pass not_root
	else
		fail not_root "exit $rc, stderr: $out"
	fi
else
	fail not_root "setpriv not installed (util-linux; tools/deps.sh installs it)"
fi

# Hardware events: the clear error without a PMU, samples with one.
hw() { # name event
	local name=$1 ev=$2
	if has_pmu; then
		"$B/serial" 2 /dev/null & local w=$!
		if "$PMUBPF" -e "$ev" -a -d 1 -o "$TMP/hw.pb.gz" 2>"$TMP/hw.err"; then
			check "$name" $CHECK expect "$TMP/hw.pb.gz" --min-samples 10
		else
			fail "$name" "$(tail -n1 "$TMP/hw.err")"
		fi
		wait $w
	else
		expect_error "$name" "event '$ev': not supported on this machine \(no hardware PMU.*try -e cpu-clock" -e "$ev" -d 0.5
	fi
}
hw hw_cycles cycles
hw hw_cache_misses cache-misses
hw hw_llc LLC-load-misses
hw hw_raw r003c
hw hw_precise cycles:pp
