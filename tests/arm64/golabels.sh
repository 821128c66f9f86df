#!/usr/bin/env bash
# golabels.sh (arm64) — Go's pprof labels read on arm64, where Go keeps
# its g in register x28, not in TLS (labels.bpf.h go_g_base): the
# offsets pmubpf's table has for the arm64 binary agree with its DWARF,
# and a recording of the Go workload (tests/workloads/golabels, built
# GOARCH=arm64) has its work labelled: tenant=a/b/c on main.burn, the
# nested req=1 carried into the goroutine started inside pprof.Do, all
# twelve labels of tenant=c's set, and nearly every sample of the work
# labelled. The shares against the program's own CPU times are checked
# on x86-64 (tests/integration/golabels.sh): under TCG the guest's timer
# skips periods unevenly. Run by tools/kernels/arm64.sh in the arm64
# guest (ARM64_SUITES).
source "$(dirname "$0")/../integration/lib.sh"
SUITE=golabels
need_root offsets_match_dwarf labelled nested twelve
W=$B/golabels_work
[[ -x $W ]] || { fail offsets_match_dwarf "$W not built (make arm64)"; exit 1; }
want=$("$B/gooffsets" "$W" 2>&1); got=$("$B/goversion_dump" "$W" 2>&1)
if [[ -n $want && $got == "$want "* ]]; then pass offsets_match_dwarf
else fail offsets_match_dwarf "DWARF says '$want', pmubpf's table '$got'"; fi
if "$PMUBPF" -F 499 -o "$TMP/cmd.pb.gz" -- "$W" 3 >"$TMP/cmd.truth" 2>"$TMP/cmd.err"; then
	labelled() {
		python3 - "$ROOT" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
work = [s for s in p["samples"]
        if any(f["func"] == "main.burn" for loc in s["stack"] for f in loc["frames"])]
n = sum(s["values"][0] for s in work)
got = {}
for s in work:
    t = s["labels"].get("tenant")
    got[t] = got.get(t, 0) + s["values"][0]
lab = n - got.get(None, 0)
print("samples under main.burn by tenant:", got)
if n < 100 or lab < 0.95 * n or not all(got.get(t) for t in "abc"):
    sys.exit("%d of %d samples under main.burn labelled (want 95%%, each tenant): %s" % (lab, n, got))
PY
	}
	check labelled labelled "$TMP/cmd.pb.gz"
	check nested $CHECK expect "$TMP/cmd.pb.gz" --func main.burn --tag tenant=b --tag req=1
	check twelve $CHECK expect "$TMP/cmd.pb.gz" --func main.burn --tag tenant=c --tag k1=1 --tag k11=11
else
	for c in labelled nested twelve; do fail $c "pmubpf failed: $(tail -n1 "$TMP/cmd.err")"; done
fi
