#!/usr/bin/env bash
# golabels.sh — Go's pprof labels in pmubpf's profile (issue 12): a Go
# program labels its work with pprof.Do and measures, itself, the CPU
# time under each label (tests/workloads/golabels); pmubpf's tenant=
# shares must be within k binomial sigma of that truth under
# `-- command`, -p (attached after start) and -a (the program started
# after pmubpf), with the nested label (req=1) carried into a goroutine
# started inside pprof.Do, and a set of 12 labels (past one bucket of
# Go's map) read whole. pmubpf's offsets table must agree with the
# binary's own DWARF; a Go version not in the table is refused, counted
# in the profile's comments and on stderr, and its samples kept.
source "$(dirname "$0")/lib.sh"
need_root offsets_match_dwarf command_shares command_nested command_twelve command_tags p_shares a_shares a_labelled a_second_labelled unknown_version_refused requests_per_window

NAMES=tenant=a,tenant=b,tenant=c
W=$B/golabels_work

# The table (goversion.c) against the DWARF of the Go we build with.
want=$("$B/gooffsets" "$W" 2>&1); got=$("$B/goversion_dump" "$W" 2>&1)
if [[ -n $want && $got == "$want "* ]]; then pass offsets_match_dwarf
else fail offsets_match_dwarf "DWARF says '$want', pmubpf's table '$got'"; fi

if "$PMUBPF" -F 999 -o "$TMP/cmd.pb.gz" -- "$W" 3 >"$TMP/cmd.truth" 2>"$TMP/cmd.err"; then
	check command_shares $CHECK shares "$TMP/cmd.pb.gz" "$TMP/cmd.truth" --by tag:tenant --names $NAMES
	# tenant=b's work runs in a goroutine started inside the nested
	# pprof.Do: it inherits both labels (Go's rule).
	check command_nested $CHECK expect "$TMP/cmd.pb.gz" --func main.burn --tag tenant=b --tag req=1
	# tenant=c's set has 12 labels (a two-bucket map in go1.18-1.23):
	# all of them, the last one too.
	check command_twelve $CHECK expect "$TMP/cmd.pb.gz" --func main.burn --tag tenant=c --tag k1=1 \
		--tag k11=11
	# go tool pprof -tags reads them as labels of the profile.
	tags=$(HOME=${HOME:-/root} GOCACHE=$TMP/gocache go tool pprof -tags "$TMP/cmd.pb.gz" 2>/dev/null)
	if grep -q 'tenant: Total' <<<"$tags" && grep -qE '\): a$' <<<"$tags" && grep -qE '\): 1$' <<<"$tags"
	then pass command_tags; else fail command_tags "go tool pprof -tags: $(tr '\n' ' ' <<<"$tags" | cut -c1-300)"; fi
else
	fail command_shares "pmubpf failed: $(tail -n1 "$TMP/cmd.err")"
fi

# -p: attached after start. The truth is the CPU time between SIGUSR1,
# sent once pmubpf says it is recording, and SIGUSR2, sent just before
# it is stopped: the other work on this machine changes the program's
# shares over time, so the whole run's would not be the window's.
"$W" 8 >"$TMP/p.truth" & gp=$!
sleep 0.3
if start_recorder "$TMP/p.err" -F 999 -p $gp -o "$TMP/p.pb.gz"; then
	kill -USR1 $gp
	sleep 3
	kill -USR2 $gp
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	wait $gp
	check p_shares $CHECK shares "$TMP/p.pb.gz" "$TMP/p.truth" --by tag:tenant --names $NAMES
else
	fail p_shares "pmubpf failed: $(tail -n1 "$TMP/p.err")"
	wait $gp
fi

# -a: the Go program started after pmubpf. pmubpf reads a process at
# its first sample; the samples before that read are unlabelled (the Go
# offsets are not known yet), and the read competes with the program
# for the CPUs (changing its shares for a while). So the program burns
# 50 ms, unlabelled, to be read, and its work starts 2 s later: every
# sample of the work is labelled (a_labelled), and the truth, the whole
# work's, is the labelled samples' (a_shares).
# Every sample under main.work of process $3 in profile $2 labelled, and
# at least $4 of them.
work_labelled() {
	python3 - "$ROOT" "$1" "$2" "$3" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p, pid, least = check.load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
work = [s for s in p["samples"] if s["labels"].get("pid") == pid and
        any(f["func"] == "main.work" for loc in s["stack"] for f in loc["frames"])]
n = sum(s["values"][0] for s in work)
lab = sum(s["values"][0] for s in work if "tenant" in s["labels"])
if n < least or lab < 0.99 * n:
    sys.exit("%d of %d samples under main.work labelled: want >= %d, 99%%" % (lab, n, least))
print("%d of %d samples under main.work labelled" % (lab, n))
PY
}

if start_recorder "$TMP/a.err" -a -F 999 -o "$TMP/a.pb.gz"; then
	"$W" 3 2 >"$TMP/a.truth" & gp=$!
	wait $gp
	# A second process of the same program: the loader knows the
	# binary's Go version from the first (kept by its object), and
	# must still tell BPF where this one keeps its labels.
	"$W" 1 1 >/dev/null & gp2=$!
	wait $gp2
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	check a_shares $CHECK shares "$TMP/a.pb.gz" "$TMP/a.truth" --by tag:tenant --names $NAMES
	check a_labelled work_labelled "$TMP/a.pb.gz" $gp 300
	check a_second_labelled work_labelled "$TMP/a.pb.gz" $gp2 100
else
	fail a_shares "pmubpf did not start: $(tail -n1 "$TMP/a.err")"
	fail a_labelled "pmubpf did not start"
	fail a_second_labelled "pmubpf did not start"
fi

# A Go pmubpf does not know (the buildinfo's version rewritten to
# go1.99.8, same length): refused, counted, said; samples kept unlabelled.
python3 - "$W" "$TMP/go199" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
i = b.index(b"\xff Go buildinf:")
j = b.index(b"go1.", i)
v = b[j:j + 8]
b = b[:j] + b"go1.99" + b[j + 6:]
open(sys.argv[2], "wb").write(b)
PY
chmod +x "$TMP/go199"
if "$PMUBPF" -F 999 -o "$TMP/u.pb.gz" -- "$TMP/go199" 1 >/dev/null 2>"$TMP/u.err"; then
	check unknown_version_refused python3 - "$ROOT" "$TMP/u.pb.gz" "$TMP/u.err" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
err = open(sys.argv[3]).read()
want = "Go 0 read, 1 unknown version: go1.99.8"
if not any(want in c for c in p["comments"]):
    sys.exit("no comment saying %r: %s" % (want, p["comments"]))
if want not in err:
    sys.exit("stderr does not say %r" % want)
n = sum(s["values"][0] for s in p["samples"])
lab = sum(s["values"][0] for s in p["samples"] if "tenant" in s["labels"])
if n < 300 or lab:
    sys.exit("%d samples, %d labelled: want >= 300 kept, none labelled" % (n, lab))
print("refused, counted; %d samples kept unlabelled" % n)
PY
else
	fail unknown_version_refused "pmubpf failed: $(tail -n1 "$TMP/u.err")"
fi

# A server labelling each request with pprof.Do (golabels_work requests:
# {req, trace_id} around ~25 us of work, a new Go label set each time),
# recorded in 2 s windows at 4999 Hz for 6 s: ~27000 sets sampled, more
# than the per-process cap (16384) in all, ~9000 a window (each with its
# union). None [too many sets]; a trace_id on 80% and more of its
# samples (the rest: the loop's own work between requests, outside
# pprof.Do). Sets were kept for the whole recording: [too many sets]
# from the cap on (issue 40).
mkdir -p "$TMP/req"
if "$PMUBPF" -F 4999 --every 2 -o "$TMP/req/" -- "$W" requests 6 >"$TMP/req.out" 2>"$TMP/req.err"; then
	check requests_per_window $CHECK requests golabels_work trace_id "$TMP"/req/*.pb.gz --min-labelled 0.8
else
	fail requests_per_window "pmubpf failed: $(tail -n1 "$TMP/req.err")"
fi
