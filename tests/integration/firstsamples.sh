#!/usr/bin/env bash
# firstsamples.sh — a process's first samples, before userspace has read
# its maps and published its unwind slot, are unwound by the tables of
# the files its pcs are in (issue 39): BPF finds each frame's VMA in the
# kernel's tree, the VMA its file, the file its table. Before, those
# samples were walked by frame pointer, and through code built without
# them the walk skipped callers: the first nap below lost nap().
#
#   command_first_nap  -e off-cpu -- nofp_first nap 30 10: every nap's
#                      stack has nap (the command's binary and libc
#                      built before the child's exec)
#   command_lib_nap    -e off-cpu -- nofp_libnap 30 10: every nap's stack
#                      reaches main through lib_nap, in a library the command links
#                      (DT_NEEDED by its run path: built before the exec)
#   pid_first_nap      -p of a process that naps once attached: the
#                      same (its maps read at start-up)
#   all_short_spins    -a, 20 processes of 20 ms each spinning in spin():
#                      spin's samples reach main in >= 99% (the binary's
#                      table built from an earlier process of it; each
#                      short one is over before its own maps are read)
#   by_file_counted    the profile says how many stacks went so, and how
#                      many files BPF knows by inode
#   overlay_command    binaries on overlayfs (a container's): BPF asks for
#                      a file it met without an entry and gets it under
#                      the inode its VMAs have (the file underneath); a
#                      command there is built ahead under that inode
#   without_it         PMUBPF_NO_FILE_TABLES=1 (the walk of before): the
#                      short processes' spin samples miss main (shown:
#                      the checks above can fail)
source "$(dirname "$0")/lib.sh"
NAMES=(command_first_nap command_lib_nap pid_first_nap all_short_spins by_file_counted overlay_command without_it)
need_root "${NAMES[@]}"
if [[ $(uname -m) != x86_64 ]]; then
	for n in "${NAMES[@]}"; do skip $n "--call-graph dwarf is implemented on x86-64 only"; done
	exit 0
fi
need_feature file-tables "${NAMES[@]}"

W=$B/nofp_first
# The naps are off-CPU time: -e off-cpu needs 5.14 (on 5.10 the two nap
# checks are skipped; the spins below are cpu-clock).
offcpu=yes
"$PMUBPF" features 2>/dev/null | grep -q '^off-cpu	no	' && offcpu=no
# Every nap's user stack: libc's syscall <- nap, all frames named. Of
# the ten naps at least eight recorded: how many waits the off-CPU event
# sees is offcpu.sh's to check (a wait whose switch out never ran the
# program, as 6.18 sometimes does, is missing there: 1 of ~20 runs on a
# busy machine), these checks are of the stacks.
NAPS="$CHECK ancestors --leaf syscall --ancestor nap --user-leaf --kernel-only --min-fraction 1.0 --min-samples 8"

command_first_nap() {
	"$PMUBPF" -v -e off-cpu -o "$TMP/cmd.pb.gz" -- "$W" nap 30 10 >/dev/null 2>"$TMP/cmd.err" ||
		{ echo "pmubpf failed: $(tail -n1 "$TMP/cmd.err")"; return 1; }
	$NAPS "$TMP/cmd.pb.gz"
}
if [[ $offcpu == yes ]]; then
	check command_first_nap command_first_nap
else
	skip command_first_nap "this kernel lacks off-cpu (pmubpf features)"
fi

command_lib_nap() {
	"$PMUBPF" -v -e off-cpu -o "$TMP/lib.pb.gz" -- "$B/nofp_libnap" 30 10 >/dev/null 2>"$TMP/lib.err" ||
		{ echo "pmubpf failed: $(tail -n1 "$TMP/lib.err")"; return 1; }
	$CHECK ancestors --leaf syscall --ancestor main --user-leaf --kernel-only --min-fraction 1.0 \
		--min-samples 8 "$TMP/lib.pb.gz"
}
if [[ $offcpu == yes ]]; then
	check command_lib_nap command_lib_nap
else
	skip command_lib_nap "this kernel lacks off-cpu (pmubpf features)"
fi

pid_first_nap() {
	local wp rc=0
	mkfifo "$TMP/go"
	"$W" nap 30 10 wait <"$TMP/go" & wp=$!
	exec 3>"$TMP/go" # the workload's read blocks until the byte below
	if ! start_recorder "$TMP/pid.err" -e off-cpu -p $wp -o "$TMP/pid.pb.gz"; then
		exec 3>&-; kill $wp; wait $wp
		echo "pmubpf did not start: $(tail -n1 "$TMP/pid.err")"; return 1
	fi
	echo >&3; exec 3>&-
	wait $wp
	wait_recorder 60 || rc=$?
	((rc == 0)) || { echo "pmubpf exited $rc: $(tail -n1 "$TMP/pid.err")"; return 1; }
	$NAPS "$TMP/pid.pb.gz"
}
if [[ $offcpu == yes ]]; then
	check pid_first_nap pid_first_nap
else
	skip pid_first_nap "this kernel lacks off-cpu (pmubpf features)"
fi

# spins NAME [ENV...]: -a while nofp_first warms until the recorder has
# read it (its binary's table built: its unwind slot published), then 20
# processes spin 20 ms each, one after another.
spins() {
	local name=$1 i rc=0 wp
	shift
	(($#)) && export "$@" # in the check's subshell only
	start_recorder "$TMP/$name.err" -a -F 999 -o "$TMP/$name.pb.gz" ||
		{ echo "pmubpf did not start: $(tail -n1 "$TMP/$name.err")"; return 1; }
	"$W" warm 120000 & wp=$!
	if ! wait_unwind_slot $RECORDER_PID $wp; then
		kill $wp $RECORDER_PID; wait $wp $RECORDER_PID
		echo "the recorder never read nofp_first: $(tail -n1 "$TMP/$name.err")"; return 1
	fi
	kill $wp; wait $wp
	for ((i = 0; i < 20; i++)); do "$W" spin 20; done
	kill -INT $RECORDER_PID
	wait $RECORDER_PID || rc=$?
	((rc == 0)) || { echo "pmubpf exited $rc: $(tail -n1 "$TMP/$name.err")"; return 1; }
}

SPINS="$CHECK ancestors --leaf spin --ancestor main --min-samples 100"
all_short_spins() {
	spins spins || return 1
	$SPINS --min-fraction 0.99 "$TMP/spins.pb.gz"
}
check all_short_spins all_short_spins

by_file_counted() {
	[[ -s $TMP/spins.pb.gz ]] || { echo "no profile from all_short_spins"; return 1; }
	$CHECK expect "$TMP/spins.pb.gz" \
		--comment '^dwarf: [1-9][0-9]* user stacks unwound by the tables of the files mapped' || return 1
	$CHECK expect "$TMP/spins.pb.gz" \
		--comment 'unwind tables: .* [1-9][0-9]* files found by inode \(0 left out, [1-9][0-9]* built before their first process;'
}
check by_file_counted by_file_counted

# A container's binary: on overlayfs, a VMA's file is the one underneath,
# which /proc/PID/maps (since 6.8) and stat() of the overlay's path do
# not name. BPF asks for the file it met (NOTICE_UFILE) and the loader
# writes its entry under the identity BPF read. Two links to one binary
# (one inode): `first` naps once, 300 ms (BPF meets the file and asks;
# the answer reads `first`'s maps while it sleeps: a process gone before
# has its file asked for again by the next), then every nap of `second`
# must reach main, its first one (before its slot) included.
overlay_command() {
	local d=$TMP/ovl rc=0
	# Its layers on a tmpfs of their own: an overlay cannot be another's
	# upper layer (the kernels' matrix runs in an overlay).
	mkdir -p "$d" && mount -t tmpfs tmpfs "$d" || { echo "cannot mount a tmpfs"; return 1; }
	mkdir -p "$d/lower" "$d/upper" "$d/work" "$d/merged"
	cp "$W" "$d/lower/first" && ln "$d/lower/first" "$d/lower/second" || { umount -l "$d"; return 1; }
	mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" ||
		{ umount -l "$d"; echo "cannot mount an overlay"; return 1; }
	"$PMUBPF" -v -e off-cpu -o "$TMP/ovl.pb.gz" -- \
		sh -c "'$d/merged/first' nap 300 1 && '$d/merged/second' nap 30 10" \
		>/dev/null 2>"$TMP/ovl.err" || rc=$?
	((rc == 0)) || { umount -l "$d/merged" "$d"; echo "pmubpf exited $rc: $(tail -n1 "$TMP/ovl.err")"; return 1; }
	# The command itself on the overlay, built ahead: under the identity
	# BPF reads of it (uw_file_key), so its first nap is whole too.
	rc=0
	"$PMUBPF" -v -e off-cpu -o "$TMP/ovl2.pb.gz" -- "$d/merged/first" nap 30 10 >/dev/null 2>"$TMP/ovl2.err" ||
		rc=$?
	umount -l "$d/merged" "$d"
	((rc == 0)) || { echo "pmubpf exited $rc: $(tail -n1 "$TMP/ovl2.err")"; return 1; }
	$CHECK expect "$TMP/ovl.pb.gz" \
		--comment 'unwind tables: .* files found by inode \(0 left out, [0-9]+ built before their first process; [0-9]+ asked for by BPF, [0-9]+ answered\)' || return 1
	$CHECK ancestors "$TMP/ovl.pb.gz" --comm second --leaf syscall --ancestor main --user-leaf --kernel-only \
		--min-fraction 1.0 --min-samples 8 || return 1
	$CHECK ancestors "$TMP/ovl2.pb.gz" --leaf syscall --ancestor main --user-leaf --kernel-only \
		--min-fraction 1.0 --min-samples 8
}
if [[ $offcpu == yes ]]; then
	check overlay_command overlay_command
else
	skip overlay_command "this kernel lacks off-cpu (pmubpf features)"
fi

# The walk of before: a short process's samples before its slot are
# walked by frame pointer, and from spin that walk does not reach main.
# Under qemu's TCG a process's start-up (ld.so) outlasts pmubpf's read of
# it, and its spin samples all come after its slot: nothing to show.
without_it() {
	local out
	spins before PMUBPF_NO_FILE_TABLES=1 || return 1
	if out=$($SPINS --min-fraction 0.99 "$TMP/before.pb.gz" 2>&1); then
		echo "spin reached main without file tables too: $out"
		return 1
	fi
	$CHECK expect "$TMP/before.pb.gz" --comment '^dwarf: [1-9][0-9]* user stacks walked by frame pointer instead' || return 1
	grep -m1 'spin -> main' <<<"$out"
}
if cpu_emulated; then
	skip without_it "emulated CPU (qemu TCG): a process's start-up outlasts pmubpf's read of it, so no spin sample comes before its slot"
else
	check without_it without_it
fi
