#!/usr/bin/env bash
# images.sh — the images of processes gone before pmubpf read their maps
# (issue 11). A -a recording takes them from BPF, walked as each sampled
# image ends (bpf/images.bpf.h: the exit, or the exec that replaces it)
# where the kernel has all that needs (6.16); else, and with
# PMUBPF_MMAP_REPORTS=1, from the kernel's mmap reports. Short-lived
# processes are named either way; the BPF way also names the samples an
# execve takes before its old image goes, follows a path across a mount
# point and through a 200-byte name, names them for a recorder inside
# a chroot, and says which mappings it could not name (a path deeper
# than it walks), and spares the /proc reads of
# processes that end within their first 10 ms (images_wait_spares_reads).
# cadence_doubles: the loop's cadence (session.c session_cadence) is
# 20 ms while 200+ new process images a second are sampled, in BPF's wake too,
# and 10 ms on a quiet machine.
source "$(dirname "$0")/lib.sh"
need_root short_lived_named short_lived_named_reports short_lived_images images_seen_dropped exec_inside_named \
	images_mount_path images_too_deep images_chroot images_wait_spares_reads images_like_parent cadence_doubles

# Which way pmubpf took: -v says (session_open.c). The mmap reports'
# way is a SKIP only where the kernel lacks what BPF needs: the VMA
# iterator (6.7) or sched_prepare_exec (6.10) in its BTF, or an exit
# tracepoint that comes before the address space goes (pmubpf's probe
# says so); anywhere else it is a FAIL of the images' checks.
BPF_WHY=
bpf_images() {
	grep -q "images of processes gone: sent by BPF" "$1" && return 0
	if ! grep -qa bpf_iter_task_vma_new /sys/kernel/btf/vmlinux ||
		! grep -qa btf_trace_sched_prepare_exec /sys/kernel/btf/vmlinux; then
		BPF_WHY="this kernel's BTF lacks the VMA iterator (6.7) or sched_prepare_exec (6.10): the mmap reports' way is tested"
	elif grep -q "releases an exiting process's memory before its exit tracepoint" "$1"; then
		BPF_WHY="this kernel releases an exiting process's memory before its exit tracepoint (before 6.16): the mmap reports' way is tested"
	else
		BPF_WHY=
	fi
	return 1
}
# SKIP with the kernel's reason, or FAIL: pmubpf should have sent images.
no_bpf_images() { # name err
	if [[ -n $BPF_WHY ]]; then skip "$1" "$BPF_WHY"
	else fail "$1" "the kernel has what BPF needs, yet pmubpf took the mmap reports: $(grep -o 'images of processes gone.*' "$2" | head -n1)"; fi
}

# Short-lived processes: 300 of ~3 ms each, each exec'ing /bin/true at
# its end, under -a. pmubpf reads new processes on its own cadence (BPF
# wakes it at most every 10 ms), by when these are gone or running
# /bin/true. Every sample of the exec_work image must be named: its
# innermost user frame in a known mapping. Truth is 100%; the bound is
# issue 11's 99%. Named after the right image: every user frame in a
# file exec_work maps (itself, libc, libm, ld.so, the vDSO; not /bin/true's,
# nor the shell's), and the samples in its 3 ms spin weigh at least half
# the CPU time the spins measured (EXEC_WORK_TRUTH). Half, not a Poisson
# bound: each 3 ms burst starts on a CPU that idled, and a CPU here
# takes no timer samples while idle and starts its period anew on
# waking, so short bursts weigh ~10% under their CPU time (902 ms for
# 1007); named after the wrong image, the spin has none. ("A quarter of
# the samples" assumed a machine's speed: under qemu the exec and
# dynamic loading take 30 times the spin.) Samples inside execve past its
# point of no return are left out here (exec_inside_named has them):
# the comm is the new image's already, the user registers still the
# old image's.
short_named() { # PROFILE TRUTH
	local cpu
	cpu=$(awk '$2 == "before_exec" { t += $3 } END { printf "%.0f\n", t }' "$2")
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
files = {m["id"]: m["file"] for m in d["mappings"]}
own = ("exec_work", "libc.so", "libm.so", "ld-linux", "[vdso]")
n = named = spin = spin_w = 0
foreign = set()
why = {}
for s in d["samples"]:
    if s["labels"].get("comm") != "exec_work":
        continue
    kern = [f for f in s["stack"] if files.get(f.get("mapping")) == "[kernel.kallsyms]"]
    if any(fr["func"] == "bprm_execve" for f in kern for fr in f["frames"]):
        continue
    user = [f for f in s["stack"] if files.get(f.get("mapping")) != "[kernel.kallsyms]"]
    if not user:
        continue
    n += 1
    if user[0].get("mapping") in files:
        named += 1
    else: # what the unnamed were doing, for the failure message
        k = kern[0]["frames"][0]["func"] if kern and kern[0]["frames"] else "(no kernel frame)"
        why[k] = why.get(k, 0) + 1
    if any(fr["func"] == "before_exec" for f in user for fr in f["frames"]):
        spin += 1
        spin_w += s["values"][1]
    foreign |= {files[f["mapping"]] for f in user if f.get("mapping") in files
                and not files[f["mapping"]].rsplit("/", 1)[-1].startswith(own)}
if n < 200:
    sys.exit("%d samples of exec_work images: too few to tell (want 200)" % n)
print("%d samples of exec_work images: %d named (%.1f%%), %d in before_exec" % (n, named, 100.0 * named / n, spin))
if named < 0.99 * n:
    sys.exit("under 99%% named; the unnamed by their kernel leaf: %s" %
             ", ".join("%s %d" % kv for kv in sorted(why.items(), key=lambda kv: -kv[1])[:5]))
if foreign:
    sys.exit("frames in files exec_work does not map (named after the wrong image): %s" % sorted(foreign))
want, cpu = int(sys.argv[1]), int(sys.argv[2])
print("before_exec: %d ms of samples, want %d+ (half) of %d ms of CPU" % (spin_w // 1000000, want // 1000000, cpu // 1000000))
if spin_w < want or not cpu or not spin:
    sys.exit("too few samples in before_exec for its CPU time: named after the wrong image?")
' "$(spin_want "$cpu")" "$cpu"
}
# Half the spins' CPU time, on a real CPU; on one qemu emulates nothing
# (its timer restarts late on waking: 40% of the CPU time on 5.10), the
# frames in files exec_work does not map left to tell a wrong image.
spin_want() {
	if cpu_emulated; then echo 0; else echo $(($1 / 2)); fi
}

# Samples taken inside the execve of /bin/true by exec_work processes
# that exec at once (300, no spin), most not sampled before: their user
# leaf is exec_work's call of execve (libc's). BPF kept the image of each
# exec of a process not sampled yet (image_stash) for them. Truth is all
# named; at least 80% (seen here: 92-98%; without the stash 7%, with the
# mmap reports 51%: the log's image can already be the new one's).
exec_inside() { # FILE [COMMS]
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
comms = sys.argv[1].split(",")
files = {m["id"]: m["file"] for m in d["mappings"]}
n = named = 0
for s in d["samples"]:
    if s["labels"].get("comm") not in comms:
        continue
    kern = [f for f in s["stack"] if files.get(f.get("mapping")) == "[kernel.kallsyms]"]
    if not any(fr["func"] == "bprm_execve" for f in kern for fr in f["frames"]):
        continue
    user = [f for f in s["stack"] if files.get(f.get("mapping")) != "[kernel.kallsyms]"]
    if not user:
        continue
    n += 1
    fr = user[0]["frames"]
    named += user[0].get("mapping") in files and bool(fr) and not fr[0]["func"].startswith("[unknown")
if n < 15:
    sys.exit("%d samples inside execve with a user stack: too few to tell (want 15)" % n)
print("%d samples inside execve: %d with their user leaf named (%.1f%%)" % (n, named, 100.0 * named / n))
if named < 0.8 * n:
    sys.exit("under 80% named")
' "${2:-exec_work,true}"
}

# A fork child that execs before its first sample is in a copy of its
# parent's image: BPF sends "its parent's" (NOTICE_LIKE) in place of a
# walk of the copy. fork_exec's LIKE_CHILDREN children (fork, then at
# once execve of /bin/true) each free a copy of LIKE_MIB MiB of page
# table entries past the exec's point of no return. The truth, per
# child (fork_exec prints their pids), from the profile (every sample
# is in it): a child sampled inside its execve freeing the old image
# (exit_mmap under bprm_execve: after sched_prepare_exec on every
# kernel that sends images from BPF, exec_mmap's mmput before 7.x,
# setup_new_exec's since, where the comm is already the new one's) and
# never before that point (a sample as fork_exec elsewhere; those as
# true after the exec do not count) had its first sample past the
# point, so BPF must have named it by
# its parent's image: the comment's count must reach the number of such
# children, and there must be 5 of them to tell (seen: 35 of 40 here at
# 333 Hz; under qemu most children are also sampled before the point,
# in the exec's path walks over 9p and their copy-on-write faults: 0 of
# 10 on sid at 999 Hz, hence 333 Hz and a larger copy). Without
# NOTICE_LIKE: 0 named, 35 due. Their user leaf (the execve call in the
# parent's libc) is named in at least 80% of their samples inside
# execve (seen: 97%; with the parent's maps not taken, about half).
LIKE_CHILDREN=40
LIKE_MIB=512
like_parent() { # PROFILE CHILDREN (fork_exec's output)
	local c k
	c=$($DUMP "$1" | grep -o '"images: [^"]*"') || { echo "no images: comment"; return 1; }
	k=$(sed -n "s/.*(\([0-9]*\) of them their parent's.*/\1/p" <<<"$c")
	echo "$c"
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
children = {int(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("child ")}
named = int(sys.argv[2] or 0)
files = {m["id"]: m["file"] for m in d["mappings"]}
past, before = set(), set() # children sampled past their point of no return, before it
for s in d["samples"]:
    pid = int(s["labels"].get("pid", 0))
    if pid not in children:
        continue
    kern = {fr["func"] for f in s["stack"] if files.get(f.get("mapping")) == "[kernel.kallsyms]"
            for fr in f["frames"]}
    if "exit_mmap" in kern and "bprm_execve" in kern:
        past.add(pid)
    elif s["labels"].get("comm") == "fork_exec":
        before.add(pid)
want = len(past - before)
print("%d of %d children sampled, %d first past their exec point of no return; %d named by the parent image"
      % (len(past | before), len(children), want, named))
if len(children) < 5:
    sys.exit("fork_exec said %d children (want 5 or more)" % len(children))
if want < 5:
    sys.exit("too few children first sampled past that point to tell (want 5)")
if named < want:
    sys.exit("%d children must have been named by their parent image, %d were" % (want, named))
' "$2" "$k" || return 1
	exec_inside "$1" fork_exec,true
}

# The images comment: N images of processes gone (at least $2), and no
# mapping without a path; or, $3 = unnamed, at least 20 of those.
images_said() {
	local c
	c=$($DUMP "$1" | grep -o '"images: [^"]*"') || { echo "no images: comment"; return 1; }
	local n u
	n=$(sed -n 's/.* \([0-9]*\) images of processes gone.*/\1/p' <<<"$c")
	u=$(sed -n 's/.* \([0-9]*\) mappings without a path.*/\1/p' <<<"$c")
	((${n:-0} >= $2)) || { echo "${n:-no} images of processes gone, want >= $2: $c"; return 1; }
	if [[ ${3:-} == unnamed ]]; then
		((${u:-0} >= 20)) || { echo "${u:-no} mappings without a path, want >= 20: $c"; return 1; }
	else
		((${u:-1} == 0)) || { echo "$u mappings without a path: $c"; return 1; }
	fi
	echo "$c"
}

# With images from BPF a process's first read waits 10 ms for BPF's
# image at its end (procs.h: PROCS_IMAGE_WAIT_NS): the 300 exec_work
# processes of ~3 ms end within it and are never read from /proc. Seen
# here: 3 of 462 processes read (this shell and the like); read at
# once, 165 of 482.
# Where the processes outlived the wait (each one's turn in the loop less
# a /bin/true's, measured: ~9 ms here), that is not what this shows: a
# SKIP with the time, not a FAIL.
wait_spared() {
	local c s l
	c=$($DUMP "$1" | grep -o '"processes: [^"]*"') || { echo "no processes: comment"; return 1; }
	s=$(sed -n 's/.*processes: \([0-9]*\) seen.*/\1/p' <<<"$c")
	l=$(sed -n 's/.* \([0-9]*\) live ones read from \/proc.*/\1/p' <<<"$c")
	echo "$l of $s processes read from /proc"
	((${s:-0} >= 300)) || { echo "too few processes seen: $c"; return 1; }
	((${l:-999} * 20 <= s)) || { echo "over 5% read from /proc: $c"; return 1; }
}

# Samples of comm $2 in before_exec (weighing at least half the CPU time
# TRUTH $4 says the spins took, as short_named), and a mapping of file $3.
mapped_named() {
	local cpu
	cpu=$(awk '$2 == "before_exec" { t += $3 } END { printf "%.0f\n", t }' "$4")
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
comm, path = sys.argv[1], sys.argv[2]
files = {m["file"] for m in d["mappings"]}
n = sum(s["values"][0] for s in d["samples"] if s["labels"].get("comm") == comm)
spin = sum(s["values"][1] for s in d["samples"] if s["labels"].get("comm") == comm and
           any(fr["func"] == "before_exec" for f in s["stack"] for fr in f["frames"]))
want, cpu = int(sys.argv[3]), int(sys.argv[4])
print("%d samples of %s, %d ms in before_exec (want %d+ of %d ms of CPU); %s mapped: %s" %
      (n, comm, spin // 1000000, want // 1000000, cpu // 1000000, path, path in files))
if path not in files:
    sys.exit("no mapping of " + path)
if n < 20 or spin < want or not cpu or not spin:
    sys.exit("want 20 samples, and in before_exec as many as its CPU time (short_named)")
' "$2" "$3" "$(spin_want "$cpu")" "$cpu"
}

# The generations BPF keeps marked ended, in the recorder's `seen` map:
# each is dropped once its task is freed (on_free), or the LRU
# would fill with the churn's dead and evict live processes.
ended_entries() {
	bpftool map dump name seen -j 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for e in d if e.get("formatted", {}).get("value", {}).get("ended") == 1), len(d))'
}
seen_dropped() { # FILE: "ENDED ALL" while 300 processes came and went
	local ended all
	read -r ended all <"$1"
	[[ -n $all ]] || { echo "could not read the seen map"; return 1; }
	echo "$ended ended generations of $all entries"
	((ended <= 20)) || { echo "ended generations kept: want <= 20 (the processes exiting now)"; return 1; }
}

for way in bpf reports; do
	name=short_lived_named
	if [[ $way == reports ]]; then name=short_lived_named_reports; export PMUBPF_MMAP_REPORTS=1
	else unset PMUBPF_MMAP_REPORTS; fi
	if start_recorder "$TMP/short.$way.err" -a -F 999 -o "$TMP/short.$way.pb.gz"; then
		: >"$TMP/short.$way.truth"
		t0=$(date +%s%N)
		for ((i = 0; i < 300; i++)); do
			EXEC_WORK_TRUTH=$TMP/short.$way.truth "$B/exec_work" 0.003 - /bin/true
		done
		if [[ $way == bpf ]]; then # each one's life: its turn less a /bin/true's
			t1=$(date +%s%N)
			for ((i = 0; i < 100; i++)); do /bin/true; done
			echo $((((t1 - t0) / 300 - ($(date +%s%N) - t1) / 100) / 1000000)) >"$TMP/short.life_ms"
		fi
		[[ $way == bpf ]] && ended_entries >"$TMP/seen.bpf"
		kill -INT $RECORDER_PID; wait $RECORDER_PID
		check $name short_named "$TMP/short.$way.pb.gz" "$TMP/short.$way.truth"
	else
		fail $name "pmubpf did not start: $(tail -n1 "$TMP/short.$way.err")"
	fi
done
unset PMUBPF_MMAP_REPORTS
if bpf_images "$TMP/short.bpf.err"; then
	check short_lived_images images_said "$TMP/short.bpf.pb.gz" 100
	check images_seen_dropped seen_dropped "$TMP/seen.bpf"
	life=$(cat "$TMP/short.life_ms" 2>/dev/null)
	if ((${life:-0} > 10)); then
		skip images_wait_spares_reads "exec_work's processes lived ${life} ms each on this machine (exec, dynamic loading, a 3 ms spin): longer than the 10 ms wait that spares their reads"
	else
		check images_wait_spares_reads wait_spared "$TMP/short.bpf.pb.gz"
	fi
	if start_recorder "$TMP/inside.err" -a -F 999 -o "$TMP/inside.pb.gz"; then
		for ((i = 0; i < 300; i++)); do "$B/exec_work" 0 - /bin/true; done
		kill -INT $RECORDER_PID; wait $RECORDER_PID
		check exec_inside_named exec_inside "$TMP/inside.pb.gz"
	else
		fail exec_inside_named "pmubpf did not start: $(tail -n1 "$TMP/inside.err")"
	fi
	# Fork children first sampled inside their exec, past its point of
	# no return, are named by their parent's image. Churn alone gives
	# few such children where the machine is slow (under qemu, most are
	# sampled between fork and exec: 1 in 840 on sid's 7.2), so
	# fork_exec makes the window long by construction: each child's exec
	# frees its copy of LIKE_MIB of page table entries there, and the
	# child runs no code of its own before its execve.
	if start_recorder "$TMP/like.err" -a -F 333 -o "$TMP/like.pb.gz"; then
		"$B/fork_exec" $LIKE_MIB $LIKE_CHILDREN /bin/true >"$TMP/like.out" 2>&1 &
		fpid=$!
		wait $fpid
		rc=$?
		kill -INT $RECORDER_PID; wait $RECORDER_PID
		if ((rc)); then fail images_like_parent "fork_exec failed: $(tail -n1 "$TMP/like.out")"
		else check images_like_parent like_parent "$TMP/like.pb.gz" "$TMP/like.out"; fi
	else
		fail images_like_parent "pmubpf did not start: $(tail -n1 "$TMP/like.err")"
	fi
else
	no_bpf_images short_lived_images "$TMP/short.bpf.err"
	no_bpf_images images_seen_dropped "$TMP/short.bpf.err"
	no_bpf_images images_wait_spares_reads "$TMP/short.bpf.err"
	no_bpf_images exec_inside_named "$TMP/short.bpf.err"
	no_bpf_images images_like_parent "$TMP/short.bpf.err"
fi

# A program on a file system mounted under $TMP, in a directory with a
# 200-byte name: its path crosses a mount point and holds a name longer
# than a short buffer. 40 runs of ~3 ms, gone before they are read:
# named through the path BPF rebuilt (the binary opened by it).
mnt=$TMP/mnt
mkdir -p "$mnt"
if bpf_images "$TMP/short.bpf.err" && mount -t tmpfs pmubpf-test "$mnt"; then
	long=$mnt/$(printf 'd%.0s' {1..200})/bin
	mkdir -p "$long" && cp "$B/exec_work" "$long/mnt_work"
	deep=$mnt/$(printf 'x/%.0s' {1..30})
	mkdir -p "$deep" && cp "$B/exec_work" "$deep/deep_work"
	if start_recorder "$TMP/mnt.err" -a -F 999 -o "$TMP/mnt.pb.gz"; then
		: >"$TMP/mnt.truth"
		for ((i = 0; i < 40; i++)); do EXEC_WORK_TRUTH=$TMP/mnt.truth "$long/mnt_work" 0.003 - /bin/true; done
		for ((i = 0; i < 40; i++)); do "$deep/deep_work" 0.003 - /bin/true; done
		kill -INT $RECORDER_PID; wait $RECORDER_PID
		check images_mount_path mapped_named "$TMP/mnt.pb.gz" mnt_work "$long/mnt_work" "$TMP/mnt.truth"
		# 30 directories deep: more names than BPF walks (24). Not
		# named, and said: the comment counts its mappings.
		check images_too_deep images_said "$TMP/mnt.pb.gz" 40 unnamed
	else
		fail images_mount_path "pmubpf did not start: $(tail -n1 "$TMP/mnt.err")"
		fail images_too_deep "pmubpf did not start"
	fi
	# The same runs and their recorder inside a chroot (the tree bound
	# at $TMP/croot, in a mount namespace of this test's own, gone with
	# it): BPF's path from the namespace's root (.../croot/...) is no
	# file to the recorder there, the path from the process's own root
	# is (bpf/images.bpf.h: PMUBPF_MAP_F_ROOT). The kernels' matrix
	# runs every suite so (tools/kernels/init.sh); before, every image
	# there was "mapped files unreadable".
	mkdir -p "$TMP/croot"
	: >"$TMP/chroot.truth"
	cat >"$TMP/chroot.sh" <<-EOF
		"$PMUBPF" -v -a -F 999 -o "$TMP/chroot.pb.gz" 2>"$TMP/chroot.err" & r=\$!
		for ((i = 0; i < 2400; i++)); do
			grep -q '^pmubpf: recording' "$TMP/chroot.err" 2>/dev/null && break
			kill -0 \$r 2>/dev/null || exit 1
			sleep 0.05
		done
		for ((i = 0; i < 40; i++)); do EXEC_WORK_TRUTH=$TMP/chroot.truth "$long/mnt_work" 0.003 - /bin/true; done
		kill -INT \$r; wait \$r
	EOF
	if unshare -m --propagation private bash -c \
		'mount --rbind / "$1" && chroot "$1" /bin/bash "$2"' - "$TMP/croot" "$TMP/chroot.sh"; then
		check images_chroot mapped_named "$TMP/chroot.pb.gz" mnt_work "$long/mnt_work" "$TMP/chroot.truth"
	else
		fail images_chroot "the recording in a chroot failed: $(tail -n1 "$TMP/chroot.err" 2>/dev/null)"
	fi
	umount "$mnt"
elif bpf_images "$TMP/short.bpf.err"; then
	fail images_mount_path "mounting a tmpfs on $mnt failed"
	fail images_too_deep "mounting a tmpfs on $mnt failed"
	fail images_chroot "mounting a tmpfs on $mnt failed"
else
	no_bpf_images images_mount_path "$TMP/short.bpf.err"
	no_bpf_images images_too_deep "$TMP/short.bpf.err"
	no_bpf_images images_chroot "$TMP/short.bpf.err"
fi

# The cadence: BPF's notice_wake_ns (its .bss, read with bpftool while
# the recording runs) and -v's count of seconds at 20 ms, beside the
# churn load (~150 processes/s here) and on a quiet machine.
notice_wake() { # the running recorder's BPF notice_wake_ns
	local id
	# Its own map (by its fds): the newest of the name was once another
	# recorder's, being freed ("get map by id: No such file").
	id=$(recorder_map pmubpf_b.bss $RECORDER_PID) || return 1
	bpftool map dump id "$id" -j | python3 -c '
import json, sys
d = json.load(sys.stdin)
if not isinstance(d, list) or not d:
    sys.exit("bpftool: %s" % d)
for kv in d[0]["formatted"]["value"][".bss"]:
    if "notice_wake_ns" in kv: print(kv["notice_wake_ns"])'
}
cadence() { # NAME LOAD...: a 6 s -a recording beside LOAD; "WAKE_NS CHURN_S"
	local name=$1 wake
	shift
	"$@" >/dev/null 2>&1 &
	local load=$!
	sleep 0.5
	# Started without start_recorder, whose polling (grep, sleep every
	# 50 ms) would be a small churn of its own.
	"$PMUBPF" -v -a -F 999 -d 6 -o "$TMP/$name.pb.gz" 2>"$TMP/$name.err" &
	RECORDER_PID=$!
	# Its 6 s count from "recording" (a slow start, as under qemu, takes
	# seconds of its own): looked for twice a second.
	local i
	for ((i = 0; i < 240; i++)); do # 120 s: a hung recorder's bound only
		grep -q '^pmubpf: recording' "$TMP/$name.err" 2>/dev/null && break
		kill -0 $RECORDER_PID 2>/dev/null || break
		sleep 0.5
	done
	sleep 3
	kill -0 $RECORDER_PID 2>/dev/null || { kill $load; return 1; }
	wake=$(notice_wake)
	wait $RECORDER_PID
	kill $load 2>/dev/null; wait $load 2>/dev/null
	echo "${wake:-?} $(sed -n 's/^pmubpf: loop: \([0-9]*\) s at the churn cadence.*/\1/p' "$TMP/$name.err")"
}
# The churn load's rate, measured (its end line): under 100 processes/s
# (200 images: each runs env, which execs true) the machine cannot make
# the 200 new images a second the churn cadence is for (TCG under qemu
# makes ~30); the check is then a SKIP with the rate, not a FAIL.
churn_rate() {
	awk '$1 == "elapsed_ns" && $2 > 0 { printf "%d\n", $4 / ($2 / 1e9) }' "$TMP/cad.progress" 2>/dev/null
}
cadence_ok() {
	local churn quiet
	churn=$(cadence cad_churn "$ROOT/${PMUBPF_BUILD:-build}/bench/churn_work" 600 2 "$TMP/cad.progress") ||
		{ echo "pmubpf did not start: $(tail -n1 "$TMP/cad_churn.err")"; return 1; }
	quiet=$(cadence cad_quiet sleep 600) || { echo "pmubpf did not start: $(tail -n1 "$TMP/cad_quiet.err")"; return 1; }
	read -r cw cs <<<"$churn"
	read -r qw qs <<<"$quiet"
	echo "churn: notice_wake_ns $cw, $cs s at 20 ms ($(churn_rate) processes/s); quiet: $qw, $qs s"
	[[ $cw == 20000000 && ${cs:-0} -ge 2 && ($qw == 0 || $qw == 10000000) && $qs == 0 ]]
}
cadence_checked() {
	local out rc
	out=$(cadence_ok 2>&1); rc=$?
	CHURN_RATE=$(churn_rate)
	if ((rc != 0 && ${CHURN_RATE:-0} < 100)); then
		skip cadence_doubles "the churn load made ${CHURN_RATE:-?} processes/s on this machine (the churn cadence is for 200+ new images/s): $(tail -n1 <<<"$out")"
	elif ((rc == 0)); then
		pass cadence_doubles
	else
		fail cadence_doubles "$(tail -n1 <<<"$out")"
	fi
}
cadence_checked
