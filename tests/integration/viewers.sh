#!/usr/bin/env bash
# viewers.sh — what people read profiles with (issue 14): folded stacks
# for FlameGraph/inferno (--format folded, -o NAME.folded) carry every
# sample's weight, rooted by process, in the format flamegraph.pl parses;
# a program's labels named like pmubpf's own (pid, tid, comm, pmubpf_*)
# are renamed, so `go tool pprof -tags` totals are the profile's total,
# not twice it.
source "$(dirname "$0")/lib.sh"

# A bad --format: one line, exit 2, no file (no BPF needed).
out=$("$PMUBPF" --format svg -d 0.1 -o "$TMP/bad.folded" 2>&1 >/dev/null); rc=$?
if [[ $rc -ne 2 || $(grep -c . <<<"$out") -ne 1 ]] || ! grep -q "bad --format 'svg'" <<<"$out"; then
	fail bad_format "want exit 2 and one line naming --format, got $rc: $out"
elif [[ -e $TMP/bad.folded ]]; then
	fail bad_format "a file was left at $TMP/bad.folded"
else
	pass bad_format
fi

need_root folded_format folded_weights folded_rooted folded_per_event reserved_tags reserved_renamed

# check_folded FILE ERRFILE PERIOD [ROOT LEAF CALLER...]: every line is
# "STACK WEIGHT" as flamegraph.pl parses it, stacks distinct and sorted,
# no empty frame; the weights sum to the samples stderr reported times
# the fixed period (nothing dropped); stacks ending in LEAF start at ROOT
# and pass through each CALLER in order.
check_folded() {
	python3 - "$@" <<'PY'
import re, sys
path, err, period = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = sys.argv[4:]
text = open(path).read()
if not text.endswith("\n"):
    sys.exit("no newline at the end of the file")
pat = re.compile(r"^(.*)\s+?(\d+(?:\.\d*)?)$")  # flamegraph.pl's own
stacks, total = [], 0
for n, line in enumerate(text.split("\n")[:-1], 1):
    m = pat.match(line)
    if not m:
        sys.exit("line %d is not 'STACK WEIGHT': %r" % (n, line))
    if any(f == "" for f in m.group(1).split(";")):
        sys.exit("line %d has an empty frame: %r" % (n, line))
    stacks.append(m.group(1).split(";"))
    total += int(m.group(2))
joined = [";".join(s) for s in stacks]
if joined != sorted(set(joined)):
    sys.exit("stacks are not distinct and sorted")
samples = [int(x) for x in re.findall(r": (\d+) samples \(", open(err).read())]
if len(samples) != 1 or total != samples[0] * period:
    sys.exit("weights sum to %d, stderr said %s samples of %d" % (total, samples, period))
print("%d stacks, %d samples" % (len(stacks), total // period))
if want:
    root, leaf, callers = want[0], want[1], want[2:]
    hits = [s for s in stacks if s[-1] == leaf]
    if not hits:
        sys.exit("no stack ends in " + leaf)
    for s in hits:
        it = iter(s[1:])
        if s[0] != root or not all(c in it for c in callers):
            sys.exit("stack %s: want root %s, then %s" % (";".join(s), root, callers))
PY
}

# -o NAME.folded: folded stacks; -c and --no-dither fix every weight at
# the period, so their sum is exact.
P=1000000
if "$PMUBPF" -c $P --no-dither -o "$TMP/d.folded" -- "$B/demo" 1 >/dev/null 2>"$TMP/d.err"; then
	check folded_format check_folded "$TMP/d.folded" "$TMP/d.err" $P
	check folded_rooted check_folded "$TMP/d.folded" "$TMP/d.err" $P demo hash_payload main handle_request
	# A whole-system recording: every process its own root.
	if "$PMUBPF" -a -c $P --no-dither -d 1 --format folded -o "$TMP/a.out" 2>"$TMP/a.err" &&
	   check_folded "$TMP/a.out" "$TMP/a.err" $P >"$TMP/a.check" 2>&1; then
		pass folded_weights
	else
		fail folded_weights "$(tail -n1 "$TMP/a.err" "$TMP/a.check" 2>/dev/null | tail -n1)"
	fi
else
	fail folded_format "pmubpf failed: $(tail -n1 "$TMP/d.err")"
fi

# Several events: one folded file each, named like pprof files. A busy
# program beside them: on an idle machine 0.3 s may take only idle
# samples (left out), and an event's file would be empty.
"$B/serial" 1 /dev/null & spin=$!
if "$PMUBPF" -e cpu-clock,task-clock -d 0.3 -o "$TMP/m.folded" 2>"$TMP/m.err"; then
	wait $spin
	if [[ -s $TMP/m.cpu-clock.folded && -s $TMP/m.task-clock.folded && ! -e $TMP/m.folded ]]; then
		pass folded_per_event
	else
		fail folded_per_event "files: $(cd "$TMP" && ls m.* | tr '\n' ' ')"
	fi
else
	fail folded_per_event "pmubpf failed: $(tail -n1 "$TMP/m.err")"
fi

# Labels named pid, tid, comm, pmubpf_labels: renamed pmubpf_app_*, so
# pmubpf's own keys have one value per sample and -tags totals are the
# profile's.
if "$PMUBPF" -c $P --no-dither -o "$TMP/r.pb.gz" -- "$B/labels_reserved" 1 2>"$TMP/r.err"; then
	check reserved_renamed $CHECK expect "$TMP/r.pb.gz" --func reserved_work \
		--tag pmubpf_app_pid=app-pid --tag pmubpf_app_tid=app-tid \
		--tag pmubpf_app_comm=app-comm --tag pmubpf_app_pmubpf_labels=app-own \
		--tag tenant=t1 --tag comm=labels_reserved
	if command -v go >/dev/null; then
		check reserved_tags python3 - "$TMP/r.pb.gz" "$TMP/r.err" $P "$TMP" <<'PY'
import re, subprocess, sys, os
prof, err, period, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
n = int(re.search(r": (\d+) samples \(", open(err).read()).group(1))
env = dict(os.environ, HOME=os.environ.get("HOME", "/root"), GOCACHE=tmp + "/gocache")
out = subprocess.run(["go", "tool", "pprof", "-tags", "-unit=ns", prof], env=env,
                     capture_output=True, text=True).stdout
totals = dict(re.findall(r"^\s*(\S+): Total (\d+)", out, re.M))
for key in ("pid", "tid", "comm"):
    if int(totals.get(key, -1)) != n * period:
        sys.exit("-tags total of %s is %s, the profile's is %d\n%s" % (key, totals.get(key), n * period, out))
print(totals)
PY
	else
		fail reserved_tags "go not installed (tools/deps.sh installs golang-go)"
	fi
else
	fail reserved_renamed "pmubpf failed: $(tail -n1 "$TMP/r.err")"
fi
