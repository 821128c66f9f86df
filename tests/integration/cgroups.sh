#!/usr/bin/env bash
# cgroups.sh — every sample carries its process's cgroup and what the
# cgroup's name says (container_id, pod_uid, systemd_unit: issue 38),
# named from BPF's cgroup v2 id at the process's first sample, or from
# /proc/PID/cgroup where the v2 id says nothing (the v1 hierarchies).
# The cgroups are made here, named as the runtimes name theirs; the truth
# is which process was put where.
source "$(dirname "$0")/lib.sh"
need_root v2_container_labelled v2_short_lived_labelled v1_container_labelled others_unlabelled \
	container_filter cgroup_filter_descendants filter_bad_input podman_container

ID=5e1f9c0d2b3a4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6
ID1=6f2a0d1e3c4b5a6f7e8d9c0b1a2f3e4d5c6b7a8998a7b6c5d4e3f2a1b0c9d8e7
POD=1c9d8e7f-6a5b-4c3d-2e1f-0a9b8c7d6e5f # bash has UID
POD_=${POD//-/_}

# mount point of the first cgroup2 (or v1 HIERARCHY) mount, "" if none
cgroup_mount() { # cgroup2 | HIERARCHY
	if [[ $1 == cgroup2 ]]; then
		awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo
	else
		awk -v h="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") break;
			if ($(i + 1) == "cgroup" && ("," $(i + 3) ",") ~ ("," h ",")) { print $5; exit } }' /proc/self/mountinfo
	fi
}

V2=$(cgroup_mount cgroup2)
# A pod's slice with a container's scope in it, as containerd's systemd
# driver names them (the names carry the truth).
PODCG=$V2/pmubpf-test-kubepods-pod$POD_.slice
CG=$PODCG/cri-containerd-$ID.scope
made=()
# Its processes are gone (waited for) by then: empty, each goes.
trap 'kill $(jobs -p) 2>/dev/null; wait; for d in "${made[@]}"; do rmdir "$d" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# run CGROUP_DIR CMD...: CMD in that cgroup (a shell that moves itself
# there, then execs), in the background
run_in() {
	local dir=$1
	shift
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$dir" "$@" &
}

# PROFILE PID KEY...: "KEY=VALUE ..." of each sample of PID, one line
# each; not its first images' (the shell's fork and run_in's sh,
# sampled before it moved)
labels_of() {
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
pid, keys = sys.argv[1], sys.argv[2:]
for s in d["samples"]:
    if str(s["labels"].get("pid")) == pid and s["labels"].get("comm") not in ("bash", "sh"):
        print(" ".join("%s=%s" % (k, s["labels"].get(k, "")) for k in keys))' "$2" "${@:3}"
}

# all_labelled FILE WANT NAME: every line of FILE is WANT, and there
# are 20 at least
all_labelled() {
	local n bad
	n=$(wc -l <"$1")
	bad=$(grep -vxF -- "$2" "$1" | sort | uniq -c | sort -rn | head -3)
	echo "$n samples of $3; not '$2': ${bad:-none}"
	((n >= 20)) || { echo "too few samples of $3 (want 20)"; return 1; }
	[[ -z $bad ]]
}

if [[ -z $V2 ]] || ! mkdir -p "$CG" 2>/dev/null; then
	for n in v2_container_labelled v2_short_lived_labelled others_unlabelled; do
		skip $n "no cgroup v2 mount to make a cgroup in${V2:+ ($V2 refuses mkdir)}"
	done
else
	made+=("$CG" "$PODCG")
	if start_recorder "$TMP/v2.err" -a -F 499 -o "$TMP/v2.pb.gz"; then
		run_in "$CG" "$B/demo" 1.5 >/dev/null
		inside=$!
		"$B/demo" 1.5 >/dev/null &
		outside=$!
		# Short-lived processes in the cgroup: most gone before pmubpf
		# reads them, named by BPF's id all the same.
		run_in "$CG" sh -c 'for i in $(seq 60); do "$1" 0.005 - /bin/true; done' sh "$B/exec_work"
		short=$!
		wait $inside $outside $short
		kill -INT $RECORDER_PID; wait $RECORDER_PID
		want="cgroup=/pmubpf-test-kubepods-pod$POD_.slice/cri-containerd-$ID.scope container_id=$ID pod_uid=$POD"
		labels_of "$TMP/v2.pb.gz" $inside cgroup container_id pod_uid >"$TMP/inside"
		check v2_container_labelled all_labelled "$TMP/inside" "$want" "demo in the container's cgroup"
		$DUMP "$TMP/v2.pb.gz" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for s in d["samples"]:
    if s["labels"].get("comm") == "exec_work":
        print(" ".join("%s=%s" % (k, s["labels"].get(k, "")) for k in ("cgroup", "container_id", "pod_uid")))' >"$TMP/short"
		check v2_short_lived_labelled all_labelled "$TMP/short" "$want" "60 short-lived exec_work in it"
		labels_of "$TMP/v2.pb.gz" $outside container_id pod_uid >"$TMP/outside"
		check others_unlabelled all_labelled "$TMP/outside" "container_id= pod_uid=" "demo outside it"
	else
		fail v2_container_labelled "pmubpf did not start: $(tail -n1 "$TMP/v2.err")"
		fail v2_short_lived_labelled "pmubpf did not start"
		fail others_unlabelled "pmubpf did not start"
	fi
fi

# pids_of PROFILE: the pids with samples, and their sample counts
pids_of() {
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = {}
for s in d["samples"]:
    c[s["labels"].get("pid")] = c.get(s["labels"].get("pid"), 0) + s["values"][0]
print(" ".join("%s:%d" % kv for kv in sorted(c.items())))'
}
# only_pid PROFILE PID OTHER: PID has 20 samples or more, OTHER none, and
# no other pid any (the recording's only tasks are PID's)
only_pid() {
	local got
	got=$(pids_of "$1")
	echo "samples by pid: $got (want only $2; $3 is outside)"
	python3 -c '
import sys
got = dict(kv.split(":") for kv in sys.argv[1].split())
want, other = sys.argv[2], sys.argv[3]
if int(got.get(want, 0)) < 20:
    sys.exit("too few samples of %s (want 20)" % want)
if set(got) - {want}:
    sys.exit("samples of tasks outside the cgroup: %s" % sorted(set(got) - {want}))' "$got" "$2" "$3"
}

# The filters: only the tasks of the container's cgroup (--container,
# by its id), or of the pod's and so of the container under it
# (--cgroup, a path as the cgroup label shows it).
if [[ -n $V2 && -d $CG ]]; then
	for f in container_filter cgroup_filter_descendants; do
		if [[ $f == container_filter ]]; then opt=(--container "${ID:0:16}")
		else opt=(--cgroup "/pmubpf-test-kubepods-pod$POD_.slice"); fi
		# the recorder first: under qemu its start outlasts a short run
		if start_recorder "$TMP/$f.err" "${opt[@]}" -F 499 -o "$TMP/$f.pb.gz"; then
			run_in "$CG" "$B/demo" 1.5 >/dev/null
			inside=$!
			"$B/demo" 1.5 >/dev/null &
			outside=$!
			wait $inside $outside
			kill -INT $RECORDER_PID; wait $RECORDER_PID
			check $f only_pid "$TMP/$f.pb.gz" $inside $outside
		else
			fail $f "pmubpf ${opt[*]} did not start: $(tail -n1 "$TMP/$f.err")"
		fi
	done
else
	skip container_filter "no cgroup v2 mount to make a cgroup in"
	skip cgroup_filter_descendants "no cgroup v2 mount to make a cgroup in"
fi

# Bad filters: one line each, exit 2, no profile.
bad_filter() {
	local out=$TMP/bad.pb.gz rc lines
	rm -f "$out"
	"$PMUBPF" "$@" -d 1 -o "$out" >/dev/null 2>"$TMP/bad.err"
	rc=$?
	lines=$(wc -l <"$TMP/bad.err")
	echo "pmubpf $*: exit $rc, $lines line(s): $(head -c 200 "$TMP/bad.err")"
	[[ $rc -ne 0 && $lines -eq 1 && ! -e $out ]]
}
filters_refused() {
	bad_filter --container 12ab || return 1
	bad_filter --container ffffffffffffffffffffff || return 1
	bad_filter --cgroup /pmubpf-no-such-cgroup || return 1
	bad_filter --cgroup /proc || return 1
	bad_filter --cgroup / -p $$ || return 1
}
check filter_bad_input filters_refused

# A real container: podman runs an image made here from a tarball (the
# static container_spin alone; no registry is reachable), with runc (crun
# refuses a host with cgroups in hybrid mode). Recorded by --container
# with the short id podman prints: every sample is the container's, with
# its whole id, and its function is named from the image's file (another
# mount namespace). The limits are set below the machine's hard ones: a
# runtime raising its own to the defaults is refused on some machines.
# A store of the test's own (vfs: it works over overlayfs, as in the
# kernels' guests), so nothing of the machine's is touched.
PODMAN=(podman --root "$TMP/podman/root" --runroot "$TMP/podman/run" --storage-driver vfs)
podman_run() { # NAME SECONDS: the container's id, or nothing
	"${PODMAN[@]}" --runtime runc run -d --name "$1" --network none --ulimit nofile=1024:1024 \
		--ulimit nproc=4096:4096 localhost/pmubpf-test:spin /spin "$2" 2>"$TMP/podman.err"
}
container_labelled() { # PROFILE ID
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
cid = sys.argv[1]
files = {m["id"]: m["file"] for m in d["mappings"]}
n = own = named = 0
for s in d["samples"]:
    v = s["values"][0]
    n += v
    own += v * (s["labels"].get("container_id") == cid and ("libpod-" + cid) in s["labels"].get("cgroup", ""))
    named += v * any(fr["func"] == "container_spin" for f in s["stack"] if files.get(f.get("mapping")) != "[kernel.kallsyms]"
                 for fr in f["frames"])
print("%d samples; %d with container_id %s...; %d in container_spin" % (n, own, cid[:12], named))
if n < 20:
    sys.exit("too few samples (want 20)")
if own < n:
    sys.exit("%d samples not labelled as the container (or not its cgroup)" % (n - own))
if named < 0.9 * n:
    sys.exit("container_spin named in under 90%% of the samples")' "$2"
}
mkdir -p "$TMP/image"
cp "$B/container_spin" "$TMP/image/spin"
if ! tar -C "$TMP/image" -c . | "${PODMAN[@]}" import - localhost/pmubpf-test:spin >"$TMP/import.out" 2>&1; then
	skip podman_container "podman cannot import an image on this machine: $(tail -n1 "$TMP/import.out")"
else
	name=pmubpf-test-$$
	cid=$(podman_run $name 60) # removed (killed) once recorded: under qemu the start is slow
	if [[ ${#cid} -ne 64 ]]; then # podman's own failure: no container runs here
		skip podman_container "podman cannot run a container on this machine: $(tail -n1 "$TMP/podman.err")"
	elif start_recorder "$TMP/podman.rec.err" --container "${cid:0:12}" -F 499 -d 1.5 -o "$TMP/podman.pb.gz"; then
		wait $RECORDER_PID
		check podman_container container_labelled "$TMP/podman.pb.gz" "$cid"
	else
		fail podman_container "pmubpf --container ${cid:0:12} did not start: $(tail -n1 "$TMP/podman.rec.err")"
	fi
	"${PODMAN[@]}" rm -f -t 0 $name >/dev/null 2>&1
	"${PODMAN[@]}" rmi -f localhost/pmubpf-test:spin >/dev/null 2>&1
fi

# v1: docker's cgroupfs driver puts a container in /docker/ID of every
# controller; v2's id is then its root's, and /proc/PID/cgroup says.
V1=$(cgroup_mount pids)
[[ -n $V1 ]] || V1=$(cgroup_mount memory)
if [[ -z $V1 ]]; then
	skip v1_container_labelled "no cgroup v1 hierarchy on this machine (pids or memory)"
elif ! mkdir -p "$V1/pmubpf-test-docker/$ID1" 2>/dev/null; then
	skip v1_container_labelled "the v1 hierarchy at $V1 refuses mkdir"
else
	made+=("$V1/pmubpf-test-docker/$ID1" "$V1/pmubpf-test-docker")
	run_in "$V1/pmubpf-test-docker/$ID1" "$B/demo" 3 >/dev/null
	v1pid=$!
	if start_recorder "$TMP/v1.err" -p $v1pid -F 499 -o "$TMP/v1.pb.gz"; then
		wait $v1pid
		wait $RECORDER_PID
		labels_of "$TMP/v1.pb.gz" $v1pid cgroup container_id >"$TMP/v1"
		check v1_container_labelled all_labelled "$TMP/v1" "cgroup=/pmubpf-test-docker/$ID1 container_id=$ID1" \
			"demo in a v1 container's cgroup"
	else
		fail v1_container_labelled "pmubpf did not start: $(tail -n1 "$TMP/v1.err")"
	fi
fi
