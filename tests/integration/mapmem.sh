#!/usr/bin/env bash
# mapmem.sh — the kernel memory pmubpf's BPF maps hold (issue 11): the
# maps a recording never touches get one entry, and the hash maps BPF
# only reads on the sample path allocate as they fill on a kernel that
# allows it (6.1+), while the ones the sample's program fills stay
# preallocated; labels come through either way. The maps are read with
# bpftool while the recording runs. first_samples: no CPU's first
# sample loses a stack to the allocator's cache (mapalloc__warm).
# lru_*: the LRU maps of first sightings (seen, seen_labels) sized for
# 8 s of the recording's samples (16384..65536), all 65536 where the
# rate is not known (-c); the images maps of execs under way by the
# possible CPUs.
source "$(dirname "$0")/lib.sh"
need_root lazy_slots lazy_labels prealloc_env prealloc_labels unused_one_entry targets_sized lru_by_rate lru_unknown_rate exec_lru_by_cpus first_samples

NAMES=phase=a,phase=b,phase=c,unlabelled
LAZY=(label_slots go_slots custom_slots otel_slots unwind_files stacks0 counts0)
EAGER=(seen seen_labels)

# maps_of_recorder OUT: "NAME FLAGS MAX_ENTRIES" for each map name, of
# its newest map (the running recorder's: it made its maps last).
maps_of_recorder() {
	bpftool map show -j 2>/dev/null | python3 -c '
import json, sys
newest = {}
for m in json.load(sys.stdin):
    n = m.get("name")
    if n and (n not in newest or m["id"] > newest[n]["id"]):
        newest[n] = m
if "stacks0" not in newest:
    sys.exit("no pmubpf maps loaded")
for n, m in sorted(newest.items()):
    print(n, m.get("flags", 0), m["max_entries"])' >"$1"
}

# record NAME: labels_work 3 under `pmubpf -- ...` (start_recorder; an
# assignment before the call reaches pmubpf's environment), its maps
# read a second in, while it records. Leaves $TMP/NAME.{maps,pb.gz,
# truth,err}.
record() {
	local name=$1
	LABELS_WORK_GO=$TMP/$name.go start_recorder "$TMP/$name.err" -F 999 -o "$TMP/$name.pb.gz" -- "$B/labels_work" 3 \
		>"$TMP/$name.truth" || return 1
	labels_work_go "$TMP/$name.truth" "$TMP/$name.go"
	sleep 1
	maps_of_recorder "$TMP/$name.maps" 2>"$TMP/$name.maps.err"
	wait $RECORDER_PID
}

# flags_are MAPSFILE WANT NAMES...: every named map's BPF_F_NO_PREALLOC
# (flag 1) is WANT (1 or 0).
flags_are() {
	local f=$1 want=$2 n got
	shift 2
	[[ -s $f ]] || { echo "no maps read: $(cat "$f.err" 2>/dev/null)"; return 1; }
	for n in "$@"; do
		got=$(awk -v n="$n" '$1 == n { print $2 }' "$f")
		[[ -n $got ]] || { echo "$n: not among the recorder's maps"; return 1; }
		if (((got & 1) != want)); then
			echo "$n: flags $got, BPF_F_NO_PREALLOC wanted $want"; return 1
		fi
	done
}

# The kernel's answer, asked apart from pmubpf: 6.1 lifted the rule
# (its BPF memory allocator); a kernel before it keeps every map whole.
read -r kmaj kmin _ < <(uname -r | tr '.-' '  ')
if ((kmaj > 6 || (kmaj == 6 && kmin >= 1))); then want=1; else want=0; fi

if record lazy; then
	lazy_ok() { flags_are "$TMP/lazy.maps" $want "${LAZY[@]}" && flags_are "$TMP/lazy.maps" 0 "${EAGER[@]}"; }
	check lazy_slots lazy_ok
	label_shares lazy_labels "$TMP/lazy.pb.gz" "$TMP/lazy.truth"
else
	fail lazy_slots "pmubpf failed: $(tail -n1 "$TMP/lazy.err")"
	fail lazy_labels "pmubpf failed"
fi

# PMUBPF_MAP_PREALLOC=1: every map whole, as on an older kernel.
if PMUBPF_MAP_PREALLOC=1 record pre; then
	check prealloc_env flags_are "$TMP/pre.maps" 0 "${LAZY[@]}" "${EAGER[@]}"
	label_shares prealloc_labels "$TMP/pre.pb.gz" "$TMP/pre.truth"
else
	fail prealloc_env "pmubpf failed: $(tail -n1 "$TMP/pre.err")"
	fail prealloc_labels "pmubpf failed"
fi

# -a touches no target and, without -e off-cpu, no wait: one entry each.
# A command's recording (above) filters by target: its targets map whole.
entries_of() { awk -v n="$2" '$1 == n { print $3 }' "$1"; }
if start_recorder "$TMP/a.err" -v -a -d 3 -o "$TMP/a.pb.gz"; then
	sleep 1
	maps_of_recorder "$TMP/a.maps" 2>"$TMP/a.maps.err"
	wait $RECORDER_PID
	t=$(entries_of "$TMP/a.maps" targets) o=$(entries_of "$TMP/a.maps" offcpu_waits)
	if [[ $t == 1 && $o == 1 ]]; then
		pass unused_one_entry
	else
		fail unused_one_entry "-a: targets ${t:-?} entries, offcpu_waits ${o:-?} (1 each wanted; $(cat "$TMP/a.maps.err"))"
	fi
else
	fail unused_one_entry "pmubpf did not start: $(tail -n1 "$TMP/a.err")"
fi
# seen and seen_labels: 8 s of samples at -F 999 on every CPU, a power
# of two in [16384, 65536]; with -c (no known rate) 65536.
lru_want=$(python3 -c 'import sys; n=int(sys.argv[1])*999*8; p=1
while p < n: p*=2
print(min(max(p,16384),65536))' "$(nproc)")
lru_are() { # MAPSFILE WANT
	local n got
	[[ -s $1 ]] || { echo "no maps read: $(cat "$1.err" 2>/dev/null)"; return 1; }
	for n in seen seen_labels; do
		got=$(entries_of "$1" $n)
		[[ $got == "$2" ]] || { echo "$n: ${got:-?} entries, $2 wanted"; return 1; }
	done
}
check lru_by_rate lru_are "$TMP/a.maps" "$lru_want"
# The images maps of execs under way (image_stashes, image_likes): 256
# entries per possible CPU, a power of two in [512, 4096], where -a
# takes images from BPF; one entry each where it does not.
possible=$(python3 -c 'import sys
n = 0
for r in open("/sys/devices/system/cpu/possible").read().strip().split(","):
    a, _, b = r.partition("-")
    n += int(b or a) - int(a) + 1
print(n)')
exec_want=$(python3 -c 'import sys; n=int(sys.argv[1])*256; p=1
while p < n: p*=2
print(min(max(p,512),4096))' "$possible")
grep -q "images of processes gone: sent by BPF" "$TMP/a.err" || exec_want=1
exec_lru_are() { # MAPSFILE WANT
	local n got
	[[ -s $1 ]] || { echo "no maps read"; return 1; }
	for n in image_stashes image_likes; do
		got=$(entries_of "$1" $n)
		[[ $got == "$2" ]] || { echo "$n: ${got:-?} entries, $2 wanted ($possible possible CPUs)"; return 1; }
	done
}
check exec_lru_by_cpus exec_lru_are "$TMP/a.maps" "$exec_want"
if start_recorder "$TMP/c.err" -a -c 2000000 -d 3 -o "$TMP/c.pb.gz"; then
	sleep 1
	maps_of_recorder "$TMP/c.maps" 2>"$TMP/c.maps.err"
	wait $RECORDER_PID
	check lru_unknown_rate lru_are "$TMP/c.maps" 65536
else
	fail lru_unknown_rate "pmubpf did not start: $(tail -n1 "$TMP/c.err")"
fi
t=$(entries_of "$TMP/lazy.maps" targets)
if [[ -n $t && $t -gt 1 ]]; then
	pass targets_sized
else
	fail targets_sized "-- command: targets ${t:-?} entries (more than 1 wanted)"
fi

# Each CPU's first sample inside a system call stores a new user and a
# new kernel stack in one interrupt. The kernel's allocator starts a CPU
# with one free stacks entry and refills only after the interrupt: before
# pmubpf warmed each CPU's cache, 8 of 8 such recordings lost a kernel
# stack. A busy syscall loop on every CPU, 4 short recordings, no loss.
first_lossless() {
	local n i pids=() lost=0
	n=$(nproc)
	for ((i = 0; i < n; i++)); do "$B/nofp_syscall" 600 >/dev/null & pids+=($!); done # killed below
	sleep 0.5
	for ((i = 0; i < 4; i++)); do
		"$PMUBPF" -a -F 999 -d 0.3 -o "$TMP/first$i.pb.gz" 2>"$TMP/first$i.err" >/dev/null ||
			{ kill "${pids[@]}"; echo "pmubpf failed: $(tail -n1 "$TMP/first$i.err")"; return 1; }
		grep -H 'lost:' "$TMP/first$i.err" && lost=$((lost + 1))
		"$DUMP" "$TMP/first$i.pb.gz" | grep -q '"comm":"nofp_syscall"' ||
			{ kill "${pids[@]}"; echo "recording $i: no nofp_syscall samples"; return 1; }
	done
	kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null
	((lost == 0)) || { echo "$lost of 4 recordings lost stacks"; return 1; }
}
check first_samples first_lossless
