#!/usr/bin/env bash
# customlabels.sh — labels of the custom-labels ABI v1 (Polar Signals)
# from a shared library reached through TLS descriptors (issue 12): a C
# program labels phases of its own thread's CPU time in one set it
# changes in place (tests/workloads/customlabels); pmubpf's phase= shares
# must be within k binomial sigma of its truth under `-- command` and -p;
# the ABI's rules hold (an absent key is no label, the first of two
# labels with one key wins); with our header's set on the same thread the
# sample has both, ours winning the clash; a writer claiming another ABI
# version is refused, counted and said.
source "$(dirname "$0")/lib.sh"
need_root command_shares abi_rules p_shares union_ours_win version_refused unreadable_counted

NAMES=phase=a,phase=b,phase=c
W=$B/customlabels_work

if "$PMUBPF" -F 999 -o "$TMP/cmd.pb.gz" -- "$W" 3 >"$TMP/cmd.truth" 2>"$TMP/cmd.err"; then
	check command_shares $CHECK shares "$TMP/cmd.pb.gz" "$TMP/cmd.truth" --by tag:phase --names $NAMES
	check abi_rules python3 - "$ROOT" "$TMP/cmd.pb.gz" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
n = bad = 0
for s in p["samples"]:
    l = s["labels"]
    if "phase" not in l:
        continue
    n += s["values"][0]
    # lib=custom comes first in the set; lib=dup after it must lose,
    # and the label with an absent key (value "ignored") is none.
    if l.get("lib") != "custom" or "ignored" in l.values():
        bad += s["values"][0]
if n < 300 or bad:
    sys.exit("%d phase samples, %d break the ABI's rules (lib=dup, an absent key read)" % (n, bad))
print("%d phase samples, all lib=custom" % n)
PY
else
	fail command_shares "pmubpf failed: $(tail -n1 "$TMP/cmd.err")"
fi

# -p: the phases are fixed amounts of the thread's CPU time, so any
# window of whole rounds has the run's shares, whatever the load.
"$W" 6 >"$TMP/p.truth" & cp=$!
sleep 0.3
if "$PMUBPF" -F 999 -p $cp -d 3 -o "$TMP/p.pb.gz" 2>"$TMP/p.err"; then
	wait $cp
	check p_shares $CHECK shares "$TMP/p.pb.gz" "$TMP/p.truth" --by tag:phase --names $NAMES
else
	fail p_shares "pmubpf failed: $(tail -n1 "$TMP/p.err")"
	wait $cp
fi

# Our header's set too (lib=ours, src=header): the union, ours winning.
if "$PMUBPF" -F 999 -o "$TMP/u.pb.gz" -- "$W" 2 union >"$TMP/u.truth" 2>"$TMP/u.err"; then
	check union_ours_win python3 - "$ROOT" "$TMP/u.pb.gz" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
n = bad = 0
for s in p["samples"]:
    l = s["labels"]
    if "phase" not in l:
        continue
    n += s["values"][0]
    if l.get("lib") != "ours" or l.get("src") != "header":
        bad += s["values"][0]
if n < 300 or bad:
    sys.exit("%d phase samples, %d without lib=ours and src=header" % (n, bad))
print("%d samples with both writers' labels, lib=ours" % n)
PY
else
	fail union_ours_win "pmubpf failed: $(tail -n1 "$TMP/u.err")"
fi

# A writer whose custom_labels_abi_version is not 1: nothing in the ABI
# applies; refused, counted in the comments and on stderr.
if CUSTOMLABELS_TEST_ABI_VERSION=2 "$PMUBPF" -F 999 -o "$TMP/v.pb.gz" -- "$W" 1 >/dev/null 2>"$TMP/v.err"; then
	check version_refused python3 - "$ROOT" "$TMP/v.pb.gz" "$TMP/v.err" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
want = "custom-labels 0 read, 1 refused"
if not any(want in c for c in p["comments"]) or want not in open(sys.argv[3]).read():
    sys.exit("neither the comments nor stderr say %r" % want)
n = sum(s["values"][0] for s in p["samples"])
lab = sum(s["values"][0] for s in p["samples"] if "phase" in s["labels"])
if n < 300 or lab:
    sys.exit("%d samples, %d labelled: want >= 300, none labelled" % (n, lab))
print("refused; %d samples kept unlabelled" % n)
PY
else
	fail version_refused "pmubpf failed: $(tail -n1 "$TMP/v.err")"
fi

# A set one of whose strings is unreadable (a value on an unmapped page):
# its samples keep no label of it, and are counted, in the comments and
# on stderr; the samples themselves stay.
if CL_TEST_UNREADABLE=1 "$PMUBPF" -F 999 -o "$TMP/f.pb.gz" -- "$W" 1 >/dev/null 2>"$TMP/f.err"; then
	check unreadable_counted python3 - "$ROOT" "$TMP/f.pb.gz" "$TMP/f.err" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
err = open(sys.argv[3]).read()
pat = r"lost: (\d+) labels from other writers \(Go, custom-labels, OpenTelemetry\): their memory unreadable"
lost = 0
for c in p["comments"]:
    m = re.search(pat, c)
    if m:
        if m.group(0) not in err:
            sys.exit("not on stderr: " + m.group(0))
        lost = int(m.group(1))
n = sum(s["values"][0] for s in p["samples"])
lab = sum(s["values"][0] for s in p["samples"] if "phase" in s["labels"] or "bad" in s["labels"])
if n < 300 or lab or lost < n // 2:
    sys.exit("%d samples, %d labelled, %d counted unreadable: want >= 300, none labelled, "
             "at least half counted" % (n, lab, lost))
print("%d samples, %d counted unreadable, none labelled" % (n, lost))
PY
else
	fail unreadable_counted "pmubpf failed: $(tail -n1 "$TMP/f.err")"
fi
