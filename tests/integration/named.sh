#!/usr/bin/env bash
# named.sh — the CPU model's named PMU events through libpfm4
# (user/config/pfm.c): `-e MEM_LOAD_RETIRED.L3_MISS` gives one clear line
# where there is no PMU and samples where there is one; an unknown name
# keeps the usual "unknown event" line; `pmubpf list` shows a model's
# named events with their descriptions, or says in one line that there
# are none. LIBPFM_FORCE_PMU picks the model whose tables libpfm4 uses.
source "$(dirname "$0")/lib.sh"

need_root no_pmu_line samples unknown_name bad_umask list_model list_none help

# expect_error NAME PATTERN ARGS...: one stderr line matching PATTERN, a
# non-zero exit, no profile written.
expect_error() {
	local name=$1 pat=$2 out rc lines
	shift 2
	rm -f "$TMP"/out*
	out=$("$PMUBPF" -o "$TMP/out.pb.gz" "$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$out" | grep -c .)
	if [[ $rc -eq 0 ]]; then fail "$name" "exit 0 for: $*"
	elif [[ $lines -ne 1 ]]; then fail "$name" "want one stderr line, got $lines: $out"
	elif ! grep -Eq -- "$pat" <<<"$out"; then fail "$name" "stderr '$out' does not match /$pat/"
	elif ls "$TMP"/out* >/dev/null 2>&1; then fail "$name" "output file left: $(ls "$TMP"/out*)"
	else pass "$name"; fi
}

if has_pmu; then
	# The host's own tables: the first named event that opens here.
	ev=$("$PMUBPF" list 2>/dev/null | awk '$2 == "named" && $3 == "available" { print $1; exit }')
	if [[ -z $ev ]]; then
		fail no_pmu_line "this machine has a PMU but pmubpf list shows no available named event"
		fail samples "no available named event"
	else
		pass no_pmu_line
		"$B/serial" 2 /dev/null & w=$!
		if "$PMUBPF" -e "$ev" -a -d 1 -o "$TMP/named.pb.gz" 2>"$TMP/named.err"; then
			check samples $CHECK expect "$TMP/named.pb.gz" --min-samples 10
		else
			fail samples "-e $ev: $(tail -n1 "$TMP/named.err")"
		fi
		wait $w
	fi
else
	# Skylake's tables, so that the event exists whatever this CPU is.
	LIBPFM_FORCE_PMU=skl expect_error no_pmu_line \
		"^pmubpf: event 'MEM_LOAD_RETIRED.L3_MISS:pp': not supported on this machine \(no hardware PMU.*try -e cpu-clock$" \
		-e MEM_LOAD_RETIRED.L3_MISS:pp -d 0.5
	echo "SKIP $SUITE.samples: no hardware PMU on this machine"
fi

LIBPFM_FORCE_PMU=skl expect_error unknown_name \
	"^pmubpf: unknown event 'NO_SUCH_EVENT.ANY' \(not a named event of Intel Skylake \(skl\) either; see 'pmubpf list'\)$" \
	-e NO_SUCH_EVENT.ANY -d 0.5
LIBPFM_FORCE_PMU=skl expect_error bad_umask \
	"^pmubpf: event 'MEM_LOAD_RETIRED.NOPE': .*\(libpfm4, Intel Skylake \(skl\); 'pmubpf list MEM_LOAD_RETIRED' shows its unit masks\)$" \
	-e MEM_LOAD_RETIRED.NOPE -d 0.5

# A model's named events, each with its description on the next line.
out=$(LIBPFM_FORCE_PMU=skl "$PMUBPF" list L3_MISS 2>&1); rc=$?
if [[ $rc -ne 0 ]]; then
	fail list_model "pmubpf list L3_MISS exited $rc: $out"
elif ! grep -q '^Named events of Intel Skylake (skl)' <<<"$out"; then
	fail list_model "no 'Named events of Intel Skylake (skl)' header: $out"
elif ! grep -A1 -E '^  MEM_LOAD_RETIRED\.L3_MISS +named ' <<<"$out" | tail -n1 | grep -q '^      [A-Z].*L3'; then
	fail list_model "no MEM_LOAD_RETIRED.L3_MISS line followed by its description: $out"
else
	pass list_model
fi

# A model libpfm4 has no tables for: one line, and the rest of the list.
out=$(LIBPFM_FORCE_PMU=no_such_model "$PMUBPF" list 2>&1); rc=$?
if [[ $rc -ne 0 ]]; then
	fail list_none "pmubpf list exited $rc"
elif [[ $(grep -ci 'named' <<<"$out") -ne 2 ]] ||  # the line, and the modifiers' note
	! grep -q '^Named events: none here: libpfm4 has no event tables for this CPU' <<<"$out" ||
	! grep -q '^  cpu-clock ' <<<"$out"; then
	fail list_none "want one 'Named events: none here' line beside the other events: $(grep -i named <<<"$out")"
else
	pass list_none
fi

out=$("$PMUBPF" --help 2>&1)
if grep -q 'MEM_LOAD_RETIRED.L3_MISS' <<<"$out" && grep -q 'LIBPFM_FORCE_PMU' <<<"$out"; then
	pass help
else
	fail help "--help does not describe named events (MEM_LOAD_RETIRED.L3_MISS, LIBPFM_FORCE_PMU)"
fi
