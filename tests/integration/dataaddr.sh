#!/usr/bin/env bash
# dataaddr.sh — --data-addr: data-address profiles (README "Data-address
# profiles"). page-faults carry the faulting address on every machine, so
# tests/workloads/datafaults.c faults known numbers of fresh pages into
# two globals (.bss), a brk heap buffer and a private file mapping, in a
# shuffled order, and writes the truth (pages per object). The data
# profile's leaf frames must name those objects in those shares (binomial
# bounds, check.py shares), with the code that touched them beneath.
source "$(dirname "$0")/lib.sh"
CHECKS="files valid shares code_beneath offsets top_answers every_files every_shares
 refused_event refused_stdout"
need_root $CHECKS

W=$TMP/w
mkdir -p "$W"
# -c 3: every third fault is sampled (about 1000 samples of the 3000
# pages), so the shares are those of a sample, not a census.
"$PMUBPF" -e page-faults -c 3 --data-addr -o "$TMP/p.pb.gz" -- "$B/datafaults" "$W" \
	>"$TMP/rec.out" 2>"$TMP/rec.err"
rc=$?
if [[ $rc -eq 0 && -s $TMP/p.pb.gz && -s $TMP/p.data.pb.gz ]] &&
	grep -q "samples .*-> $TMP/p.data.pb.gz" "$TMP/rec.err"; then
	pass files
else
	fail files "rc $rc; $(ls "$TMP"); $(tail -n1 "$TMP/rec.err")"
fi
check valid valid_profile "$TMP/p.data.pb.gz"
# Shares of the four objects among the samples that landed in any of
# them (libc's own heap pages also land in [heap]: a few, within bounds).
check shares $CHECK shares "$TMP/p.data.pb.gz" "$W/truth"
# The data frame is the leaf; the code stack that touched it is beneath.
check code_beneath $CHECK ancestors "$TMP/p.data.pb.gz" --leaf glob_a --ancestor touch

# Every glob_a page is one fault: its frame's line is the byte offset
# into glob_a, a whole page, inside the array (1200 pages).
offsets() {
	"$DUMP" "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
offs = [l["frames"][0]["line"] for s in d["samples"] for l in s["stack"][:1]
        if l["frames"] and l["frames"][0]["func"] == "glob_a"]
bad = [o for o in offs if o % 4096 or not 0 <= o < 1200 * 4096]
if len(offs) < 100 or bad or len(set(offs)) != len(offs):
    sys.exit("glob_a offsets: %d, bad %s, distinct %d" % (len(offs), bad[:5], len(set(offs))))
print("%d glob_a offsets, page-aligned, distinct, inside it" % len(offs))'
}
check offsets offsets "$TMP/p.data.pb.gz"

# go tool pprof -top answers "which object": its four hottest rows are
# the four objects.
top_answers() {
	local out
	out=$(HOME=${HOME:-/root} GOCACHE=$TMP/gocache GOFLAGS= go tool pprof -top "$1" 2>/dev/null |
		awk '/flat%/ { on = 1; next } on && NF >= 6 { print $6 }' | head -n 4 | sort | tr '\n' ' ')
	[[ $out == "$W/datafaults.dat [heap] glob_a glob_b " ]] || { echo "top rows: $out"; return 1; }
}
check top_answers top_answers "$TMP/p.data.pb.gz"

# --every: the data profiles are NAME.EVENT.data.STAMP.pb.gz beside
# NAME.EVENT.STAMP.pb.gz, and hold the same objects.
E=$TMP/every
mkdir -p "$E" "$TMP/w2"
"$PMUBPF" -e page-faults -c 3 --data-addr --every 1 --keep 5 -o "$E/" -- "$B/datafaults" "$TMP/w2" \
	>/dev/null 2>"$TMP/every.err"
datafiles=$(ls "$E" | grep -c '^pmubpf\.page-faults\.data\.[0-9]\{8\}T[0-9]\{6\}Z\.pb\.gz$')
codefiles=$(ls "$E" | grep -c '^pmubpf\.page-faults\.[0-9]\{8\}T[0-9]\{6\}Z\.pb\.gz$')
if [[ $datafiles -ge 1 && $datafiles -eq $codefiles ]]; then
	pass every_files
else
	fail every_files "$codefiles code, $datafiles data profiles: $(ls "$E" | tr '\n' ' ')"
fi
merged() { # the windows' data profiles are one recording: check each
	local f ok=0
	for f in "$E"/pmubpf.page-faults.data.*.pb.gz; do
		$CHECK shares "$f" "$TMP/w2/truth" >/dev/null 2>&1 && ok=1
	done
	[[ $ok -eq 1 ]] || { $CHECK shares "$f" "$TMP/w2/truth"; return 1; }
}
check every_shares merged

# An event whose samples carry no address: one line, before recording,
# no file.
if "$PMUBPF" -e cpu-clock --data-addr -d 0.2 -o "$TMP/no.pb.gz" 2>"$TMP/no.err"; then
	fail refused_event "exit 0"
elif [[ $(wc -l <"$TMP/no.err") -eq 1 ]] && grep -q "^pmubpf: --data-addr: event 'cpu-clock' carries no data address" "$TMP/no.err" &&
	[[ ! -e $TMP/no.pb.gz && ! -e $TMP/no.data.pb.gz ]]; then
	pass refused_event
else
	fail refused_event "$(head -n 2 "$TMP/no.err")"
fi
if "$PMUBPF" -e page-faults --data-addr -d 0.2 -o - >/dev/null 2>"$TMP/stdout.err"; then
	fail refused_stdout "exit 0"
elif [[ $(wc -l <"$TMP/stdout.err") -eq 1 ]] && grep -q -- "-o - excludes --data-addr" "$TMP/stdout.err"; then
	pass refused_stdout
else
	fail refused_stdout "$(head -n 2 "$TMP/stdout.err")"
fi
