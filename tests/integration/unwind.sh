#!/usr/bin/env bash
# unwind.sh — --call-graph dwarf (issue 6): user stacks unwound in BPF
# from .eh_frame tables, on workloads built without frame pointers (and
# Debian's libc, which has none either). In >= 95% of the hot function's
# samples its caller chain must reach main (or the thread's start
# routine), every frame in between named: through qsort's internals, a
# pthread start routine, libstdc++'s std::sort, a signal trampoline, from
# inside system calls (the task's saved user registers), through JIT code
# (by frame pointer: it has no CFI), and with the program's CFI only in
# .debug_frame. Also: the
# default mode, -p attach, one table per object shared by processes,
# comments, a valid profile; and --call-graph fp still works (it cannot
# pass the ancestor checks on these binaries: shown, not asserted).
source "$(dirname "$0")/lib.sh"
need_root qsort_main thread_start sort_lambda signal_frame syscall_regs jit_by_fp \
	debug_frame default_dwarf attach_pid tables_shared comments valid fp_mode fp_walk_ends_clean
if [[ $(uname -m) != x86_64 ]]; then
	for n in qsort_main thread_start sort_lambda signal_frame syscall_regs jit_by_fp \
		debug_frame default_dwarf attach_pid tables_shared comments valid fp_mode fp_walk_ends_clean; do
		skip $n "--call-graph dwarf is implemented on x86-64 only"
	done
	exit 0
fi

# A process's first samples, before its tables are published, are walked
# by frame pointer (issue 39, counted in the profile): not the DWARF
# walker's, and those of them that missed the ancestor are left out,
# while they are under half the profile's samples (all of them: the
# tables never came). Under qemu the tables take longer: 5% of jit's
# 2 s on 6.1 missed main so; on 5.10, 143 of a run's ~2000 stacks were
# walked so, most reaching main all the same.
ANC="$CHECK ancestors --min-fraction 0.95 --first-samples-max 0.5"

# rec NAME ARGS... -- WORKLOAD ARGS: record, PASS/FAIL later by checks;
# rec_ok NAME: that recording exited 0 (else says how, and fails).
rec() {
	local name=$1
	shift
	"$PMUBPF" -v -F 999 -o "$TMP/$name.pb.gz" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
rec_ok() {
	local rc
	rc=$(cat "$TMP/$1.rc" 2>/dev/null)
	[[ $rc == 0 ]] || { echo "pmubpf exited ${rc:-?}: $(tail -n1 "$TMP/$1.err" 2>/dev/null)"; return 1; }
}

ancestors() { # check NAME PROFILE LEAF ANCESTOR [flags]
	local name=$1 prof=$2 leaf=$3 anc=$4
	shift 4
	if [[ -f $TMP/$name.rc ]] && ! out=$(rec_ok "$name"); then
		fail "$name" "$out"
	elif [[ -s $prof ]]; then
		check "$name" $ANC "$prof" --leaf "$leaf" --ancestor "$anc" "$@"
	else
		fail "$name" "no profile: $(tail -n1 "$TMP/${name}.err" 2>/dev/null)"
	fi
}

rec qsort_main --call-graph dwarf -- "$B/nofp_qsort" 3
ancestors qsort_main "$TMP/qsort_main.pb.gz" hot_compare main

rec thread_start --call-graph dwarf -- "$B/nofp_thread" 3
ancestors thread_start "$TMP/thread_start.pb.gz" thread_compare thread_main

rec sort_lambda --call-graph dwarf -- "$B/nofp_sort" 3
ancestors sort_lambda "$TMP/sort_lambda.pb.gz" sort_key main

rec signal_frame --call-graph dwarf -- "$B/nofp_signal" 3
ancestors signal_frame "$TMP/signal_frame.pb.gz" signal_work main

rec syscall_regs --call-graph dwarf -- "$B/nofp_syscall" 3
ancestors syscall_regs "$TMP/syscall_regs.pb.gz" syscall main --user-leaf --kernel-only

# JIT code (anonymous executable memory, no CFI, frame pointers kept):
# walked by frame pointer there, counted, and on to main.
rec jit_by_fp --call-graph dwarf -- "$B/jit" 2
jit_by_fp() {
	rec_ok jit_by_fp || return 1
	$ANC "$TMP/jit_by_fp.pb.gz" --leaf jitted_hot_loop --ancestor main || return 1
	$CHECK expect "$TMP/jit_by_fp.pb.gz" --comment 'frame pointer: no CFI covers the pc'
}
check jit_by_fp jit_by_fp

# The program's CFI only in .debug_frame (no unwind tables asked for).
if clang -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
	"$ROOT/tests/workloads/nofp_qsort.c" -o "$TMP/dbgframe_qsort" 2>"$TMP/cc.err"; then
	rec debug_frame --call-graph dwarf -- "$TMP/dbgframe_qsort" 2
	ancestors debug_frame "$TMP/debug_frame.pb.gz" hot_compare main
else
	fail debug_frame "cannot compile: $(tail -n1 "$TMP/cc.err")"
fi

# The default (no --call-graph) is dwarf on x86-64.
if [[ $(uname -m) == x86_64 ]]; then
	rec default_dwarf -- "$B/nofp_qsort" 2
	default_dwarf() {
		rec_ok default_dwarf || return 1
		$CHECK expect "$TMP/default_dwarf.pb.gz" --comment '^call graph: dwarf' || return 1
		$ANC "$TMP/default_dwarf.pb.gz" --leaf hot_compare --ancestor main
	}
	check default_dwarf default_dwarf
else
	skip default_dwarf "dwarf is the default on x86-64 only"
fi

# -p: a process already running (its maps read at first sight, mid-run).
"$B/nofp_qsort" 600 >/dev/null & # killed below
qpid=$!
sleep 0.5
if start_recorder "$TMP/attach_pid.err" --call-graph dwarf -F 999 -p $qpid -d 3 -o "$TMP/attach_pid.pb.gz"; then
	wait $RECORDER_PID
	echo $? >"$TMP/attach_pid.rc"
	ancestors attach_pid "$TMP/attach_pid.pb.gz" hot_compare main
else
	fail attach_pid "pmubpf did not start: $(tail -n1 "$TMP/attach_pid.err")"
fi
kill $qpid 2>/dev/null
wait $qpid 2>/dev/null

# Two processes of one program: libc's table is built once (by build-id).
rec tables_shared --call-graph dwarf -- sh -c "'$B/nofp_qsort' 2 & '$B/nofp_qsort' 2; wait"
tables_shared() {
	local n
	rec_ok tables_shared || return 1
	n=$(grep -c 'unwind: libc.so.6:' "$TMP/tables_shared.err")
	[[ $n -eq 1 ]] || { echo "libc's table built $n times"; return 1; }
	$CHECK expect "$TMP/tables_shared.pb.gz" --pids-at-least 2 \
		--comment '^unwind tables: [0-9]+ objects, [0-9]+ rows \([0-9]+ KiB of'
}
check tables_shared tables_shared

# Comments: mode, tables and memory; -v prints the summary too.
comments() {
	$CHECK expect "$TMP/qsort_main.pb.gz" --comment '^call graph: dwarf' || return 1
	$CHECK expect "$TMP/qsort_main.pb.gz" --comment '^unwind tables: .* KiB of BPF maps' || return 1
	grep -q '^pmubpf: unwind tables: ' "$TMP/qsort_main.err" || { echo "no -v summary"; return 1; }
}
check comments comments
check valid valid_profile "$TMP/sort_lambda.pb.gz"

# fp mode: recorded, labelled, hot function present; its (poor) ancestor
# share on frame-pointer-less code is printed for comparison.
rec fp_mode --call-graph fp -- "$B/nofp_qsort" 2
fp_mode() {
	local out
	rec_ok fp_mode || return 1
	$CHECK expect "$TMP/fp_mode.pb.gz" --func hot_compare --comment '^call graph: fp' || return 1
	# Its status, not head's: at least --min-samples of hot_compare.
	out=$($CHECK ancestors "$TMP/fp_mode.pb.gz" --leaf hot_compare --ancestor main --min-fraction 0 2>&1) ||
		{ echo "$out"; return 1; }
	head -n1 <<<"$out"
}
check fp_mode fp_mode

# The walk by frame pointer (--call-graph fp, and a process's first
# samples under dwarf) ends at the chain's end without reading it: the
# kernel's walk (bpf_get_stack) reads the frame record at rbp 0 and takes
# a page fault there, in every sample (7 of a sample's 9 us of BPF time
# in this PVM guest). The faults the kernel takes in the sampled task,
# counted by perf over 1 s of a 999 Hz recording of serial.c (frame
# pointers throughout: its hot chain reaches main), must be few where
# the samples are many; its samples still reach main.
fp_walk_ends_clean() {
	local wp faults rc=0
	"$B/serial" 600 /dev/null & wp=$! # killed below
	if ! start_recorder "$TMP/fpclean.err" --call-graph fp -F 999 -p $wp -d 2.5 -o "$TMP/fpclean.pb.gz"; then
		kill $wp; wait $wp
		echo "pmubpf did not start: $(tail -n1 "$TMP/fpclean.err")"; return 1
	fi
	faults=$(perf stat -x, -e exceptions:page_fault_kernel -p $wp -- sleep 1 2>&1 | awk -F, '/page_fault_kernel/ { print $1 }')
	wait $RECORDER_PID || rc=$?
	kill $wp 2>/dev/null; wait $wp 2>/dev/null
	((rc == 0)) || { echo "pmubpf exited $rc: $(tail -n1 "$TMP/fpclean.err")"; return 1; }
	$ANC "$TMP/fpclean.pb.gz" --leaf work --ancestor main || return 1
	echo "kernel page faults in the sampled task over 1 s: ${faults:-?}"
	[[ $faults =~ ^[0-9]+$ ]] || { echo "perf stat gave no count"; return 1; }
	((faults < 100)) || { echo "want under 100 (~1000 samples): the walk reads past the chain's end"; return 1; }
}
if [[ -d /sys/kernel/tracing/events/exceptions/page_fault_kernel ]]; then
	check fp_walk_ends_clean fp_walk_ends_clean
else
	skip fp_walk_ends_clean "the kernel has no exceptions:page_fault_kernel tracepoint (x86 page fault tracing)"
fi
