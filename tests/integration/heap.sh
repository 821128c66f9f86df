#!/usr/bin/env bash
# heap.sh — malloc's policy by kind of recording (user/lib/heap.h): a
# one-shot recording reserves its heap at once and asks for transparent
# huge pages on it (where page faults are costly, their first touches
# were a third of a short recording's CPU); PMUBPF_HEAP_DEFAULT=1 leaves
# glibc's defaults; a windowed one keeps the long-running policy (no
# huge pages: its freed blocks go back whole). Read off the running
# recorder's /proc/PID/smaps: a [heap] mapping whose VmFlags hold "hg"
# (MADV_HUGEPAGE).
source "$(dirname "$0")/lib.sh"
need_root oneshot_huge default_env windowed_plain

# heap_flags PID OUT: the VmFlags of each [heap] mapping, one line each.
heap_flags() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { heap = ($NF == "[heap]") } heap && /^VmFlags:/ { print }' \
		"/proc/$1/smaps" >"$2" 2>/dev/null
}

# record NAME ARGS...: start pmubpf -a with ARGS, read its heap's flags
# once it records, stop it. Leaves $TMP/NAME.flags.
record() {
	local name=$1
	shift
	start_recorder "$TMP/$name.err" -a "$@" -o "$TMP/$name.pb.gz" ||
		{ echo "pmubpf did not start: $(tail -n1 "$TMP/$name.err")"; return 1; }
	heap_flags $RECORDER_PID "$TMP/$name.flags"
	kill -INT $RECORDER_PID
	wait $RECORDER_PID || { echo "pmubpf failed: $(tail -n1 "$TMP/$name.err")"; return 1; }
	[[ -s $TMP/$name.flags ]] || { echo "no [heap] mapping read"; return 1; }
}

huge() { grep -qw hg "$TMP/$1.flags"; }

oneshot() {
	record one -d 30 || return 1
	huge one || { echo "one-shot: no [heap] mapping advised for huge pages:"; cat "$TMP/one.flags"; return 1; }
	[[ -s $TMP/one.pb.gz ]] || { echo "no profile written"; return 1; }
}
check oneshot_huge oneshot

default_env() {
	PMUBPF_HEAP_DEFAULT=1 record def -d 30 || return 1
	! huge def || { echo "PMUBPF_HEAP_DEFAULT=1: [heap] advised for huge pages all the same"; return 1; }
}
check default_env default_env

windowed() {
	record win --every 1 -d 30 || return 1
	! huge win || { echo "--every: [heap] advised for huge pages (the long-running policy wanted)"; return 1; }
}
check windowed_plain windowed
