# lib.sh — shared helpers of pmubpf's integration tests (sourced).
#
# Each test script calls pass/fail/skip once per check; tests/run.sh
# counts the PASS/FAIL/SKIP lines. Tests need root and BPF: without them
# every check of the script is skipped with the reason.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# make SANITIZE=1 test points these at build-san/ (Makefile, TEST_ENV).
PMUBPF=${PMUBPF:-$ROOT/pmubpf}
B=$ROOT/${PMUBPF_BUILD:-build}/tests
DUMP=$B/pprof_dump
CHECK="python3 $ROOT/tests/integration/check.py"
SUITE=$(basename "$0" .sh)
TMP=$(mktemp -d /tmp/pmubpf-test.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
# Uncompressed copies of debug files (user/symbols/debugcache.h) go to a
# cache of the script's own, empty at its start: a test must not depend
# on what `make run`, an earlier test or a user left in
# /var/cache/pmubpf/debug, nor add to it. A check that needs another
# (symbols.sh: one per run, or none) sets it on its command.
export PMUBPF_DEBUG_CACHE=$TMP/debug-cache
# A check's python writes its measurement to stdout and its verdict
# through sys.exit to stderr: unbuffered, they come out in that order,
# so the FAIL line (check's last line of output) is the verdict, not the
# measurement a buffered stdout flushed after it.
export PYTHONUNBUFFERED=1

pass() { echo "PASS $SUITE.$1"; }
fail() { echo "FAIL $SUITE.$1: $2"; }
skip() { echo "SKIP $SUITE.$1: $2"; }

# check NAME CMD...: PASS if CMD succeeds, else FAIL with its last line.
# PMUBPF_TEST_VERBOSE=1 prints what a passing check measured too.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
		[[ -z ${PMUBPF_TEST_VERBOSE:-} ]] || printf '%s\n' "$out" | sed 's/^/    /' | tail -n 25
	else
		fail "$name" "$(tail -n 1 <<<"$out")"
		printf '%s\n' "$out" | sed 's/^/    /' | tail -n 25
	fi
}

# need_root NAMES...: every named check FAILs unless root (a run that
# cannot test must not look green; tests/run.sh re-runs itself under
# sudo), and is skipped on a kernel without BTF (a machine that lacks it).
need_root() {
	if [[ $(id -u) -ne 0 ]]; then
		for n in "$@"; do fail "$n" "needs root (run: sudo make test)"; done
		exit 1
	elif [[ ! -r /sys/kernel/btf/vmlinux ]]; then
		for n in "$@"; do skip "$n" "kernel has no BTF"; done
		exit 0
	fi
}

# need_feature FEATURE NAMES...: every named check is skipped, and the
# script ends, where `pmubpf features` says this kernel lacks FEATURE
# (a kernel that truly lacks it: off-cpu before 5.14, several sampled
# events before 5.15; the matrix's smoke suite checks the refusal there).
# On a kernel that has it, nothing happens.
need_feature() {
	local feature=$1 n
	shift
	if "$PMUBPF" features 2>/dev/null | grep -q "^$feature	no	"; then
		for n in "$@"; do skip "$n" "this kernel lacks $feature (pmubpf features)"; done
		exit 0
	fi
}

# has_pmu: true if this machine can count hardware cycles. Asked of
# hwcycles (a bare perf_event_open), not of pmubpf, so the two can
# disagree only if pmubpf is wrong; not of perf, which a machine with a
# PMU may lack.
has_pmu() { "$B/hwcycles" >/dev/null; }

# valid_profile FILE: go tool pprof -raw reads it with no warning.
valid_profile() {
	local f=$1 out
	[[ -s $f ]] || { echo "no profile at $f"; return 1; }
	if ! command -v go >/dev/null; then
		echo "go not installed"; return 1
	fi
	out=$(HOME=${HOME:-/root} GOCACHE=$TMP/gocache GOFLAGS= go tool pprof -raw "$f" 2>&1 >/dev/null) || {
		echo "go tool pprof -raw failed: $out"; return 1; }
	if grep -qi -e warning -e error <<<"$out"; then
		echo "go tool pprof -raw warned: $out"; return 1
	fi
}

# cpu_ticks PID: the process's user + system CPU time so far, in clock
# ticks (getconf CLK_TCK per second).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# min_samples TICKS HZ: the fewest samples a correct profiler takes of a
# process that used TICKS of CPU time while it recorded at HZ: a Poisson
# lower bound (lambda - 3.29 sqrt(lambda)), and at least 1.
min_samples() {
	awk -v t="$1" -v hz="$2" -v tck="$(getconf CLK_TCK)" \
		'BEGIN { l = t / tck * hz; m = l - 3.29 * sqrt(l); print (m < 1 ? 1 : int(m)) }'
}

# cpu_weight FILE FUNC [PID [COMM]]: the weight (values[1], ns: each
# sample's own period) of FILE's samples with FUNC in their stack, of
# process PID and command COMM only where given. The estimate of the
# CPU time spent there that does not depend on the sampling rate: the
# timer's rate is dithered 5-15% either way (timekeeper.c), so over a
# second a sample count runs some percent off CPU time x F, in either
# direction, beyond its Poisson spread.
cpu_weight() {
	python3 - "$ROOT" "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
prof = check.load(sys.argv[2])
func, pid = sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else ""
comm = sys.argv[5] if len(sys.argv) > 5 else ""
print(sum(s["values"][1] for s in prof["samples"]
          if (not pid or str(s["labels"].get("pid")) == pid)
          and (not comm or s["labels"].get("comm") == comm) and func in check.funcs(s)))
PY
}

# A CPU qemu emulates (TCG: its model name says "QEMU TCG CPU") takes
# interrupts only between translated blocks and runs its timer late:
# cpu-clock skips periods there. Measured in the kernel matrix
# (tools/kernels): a thread's samples 25% under its CPU time (6.1,
# targets.tid_only), a short process's 10% (5.10, lifecycle.live_from_log);
# a plain spin's 2%. The checks that weigh samples against CPU time are
# asserted on real CPUs (make test on the running kernel), and are SKIPs
# on an emulated one: need_real_timer NAME... says so, false there.
cpu_emulated() { grep -q "QEMU TCG CPU" /proc/cpuinfo 2>/dev/null; }
need_real_timer() {
	cpu_emulated || return 0
	local n
	for n in "$@"; do
		skip "$n" "an emulated CPU (qemu TCG: its timer skips periods): samples against CPU time are asserted on real CPUs"
	done
	return 1
}

# min_weight NS HZ: the least weight (ns) a correct profiler gives NS of
# CPU time sampled at HZ: NS less 3.29 Poisson sigma of its count, in ns
# (P sqrt(NS/P) for the period P), and at least 0.
min_weight() {
	awk -v t="$1" -v hz="$2" 'BEGIN { p = 1e9 / hz; m = t - 3.29 * sqrt(t * p); printf "%.0f\n", (m < 0 ? 0 : m) }'
}

# start_recorder ERRFILE ARGS...: run pmubpf -v ARGS in the background
# and wait until it says it is recording (120 s: a hung recorder's bound
# only; a kernel under qemu takes seconds to verify and attach). Sets
# RECORDER_PID.
start_recorder() {
	local err=$1 i
	shift
	"$PMUBPF" -v "$@" 2>"$err" &
	RECORDER_PID=$!
	for ((i = 0; i < 2400; i++)); do
		grep -q '^pmubpf: recording' "$err" 2>/dev/null && return 0
		kill -0 $RECORDER_PID 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# wait_recorder SECS: wait for $RECORDER_PID to end on its own (a -p
# recording ends with its targets); its exit status, or 124 once SECS
# have passed (a hung recording's bound only), when it is stopped.
wait_recorder() {
	local i
	for ((i = 0; i < $1 * 20; i++)); do
		kill -0 $RECORDER_PID 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 $RECORDER_PID 2>/dev/null; then
		kill -INT $RECORDER_PID; wait $RECORDER_PID
		return 124
	fi
	wait $RECORDER_PID
}

# recorder_map NAME PID: the id of the BPF map NAME that process PID (a
# recorder) holds, from its fds' fdinfo: never another recorder's map of
# the same name (a second pmubpf may run on this machine). False if none.
recorder_map() {
	local ids
	ids=$(cat /proc/"$2"/fdinfo/* 2>/dev/null | awk '$1 == "map_id:" { print $2 }' | sort -u)
	[[ -n $ids ]] || return 1
	bpftool map show -j 2>/dev/null | python3 -c '
import json, sys
ids = set(sys.argv[2].split())
for m in json.load(sys.stdin):
    if m.get("name") == sys.argv[1] and str(m.get("id")) in ids:
        print(m["id"])
        sys.exit(0)
sys.exit(1)' "$1" "$ids"
}

# wait_map_key MAP RECORDER PID: wait until the recorder RECORDER's BPF
# map MAP holds the 4-byte key PID. False if either process ends first,
# or after 120 s (a recorder that stuck: a bound for a hung test only,
# no speed is assumed under it).
wait_map_key() {
	local map=$1 rec=$2 pid=$3 id= key i
	key=$(printf '%02x %02x %02x %02x' $((pid & 255)) $((pid >> 8 & 255)) $((pid >> 16 & 255)) $((pid >> 24 & 255)))
	for ((i = 0; i < 2400; i++)); do
		[[ -n $id ]] || id=$(recorder_map "$map" "$rec")
		[[ -n $id ]] && bpftool map lookup id "$id" key hex $key >/dev/null 2>&1 && return 0
		kill -0 "$rec" 2>/dev/null && kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# wait_label_slot RECORDER PID: wait until the recorder RECORDER has
# given BPF process PID's label slot (its label_slots map holds PID): from
# then on PID's samples carry its labels. Under -a that is the process's
# first read, after its first samples: a wait in wall time that a busy
# machine stretches (from ~15 ms to more than a 0.5 s workload lasted: a
# test of labels starts its labelled work after this, not after a sleep).
wait_label_slot() { wait_map_key label_slots "$@"; }

# wait_unwind_slot RECORDER PID: wait until the recorder (--call-graph
# dwarf, the default on x86-64) has read process PID's maps and given BPF
# its unwind tables (unwind_pids holds PID): from then on the process can
# end, or its binary go, and its samples still be named.
wait_unwind_slot() { wait_map_key unwind_pids "$@"; }

# labels_work_go TRUTH GO: once labels_work (run with LABELS_WORK_GO=GO,
# its stdout into TRUTH) has said its pid and the recorder
# ($RECORDER_PID) has its label slot, make GO: its labelled work starts
# only once its samples can carry labels (read at its first sample, a
# wait in wall time that qemu stretches to seconds of a 3 s run). GO is
# made in any case; false if the slot did not come.
labels_work_go() {
	local pid= i rc=0
	for ((i = 0; i < 2400; i++)); do # 120 s: a hung test's bound only
		pid=$(sed -n 's/^labels_work pid=\([0-9]*\) .*/\1/p' "$1" 2>/dev/null)
		[[ -n $pid ]] && break
		kill -0 $RECORDER_PID 2>/dev/null || break
		sleep 0.05
	done
	[[ -n $pid ]] && wait_label_slot $RECORDER_PID $pid || rc=1
	touch "$2"
	return $rc
}
# The units labels_work times (its truth): shares are of their samples.
LABELS_UNITS="--within work_a --within work_b --within work_c --within worker_a --within worker_none"

# units_labelled PROFILE: every sample inside one of labels_work's
# labelled units (work_a, work_b, work_c, worker_a run under a set,
# always) carries a phase, but for label reads the profile counts as lost.
units_labelled() {
	$DUMP "$1" | python3 -c '
import json, re, sys
d = json.load(sys.stdin)
lost = sum(int(m.group(1)) for c in d.get("comments", []) for m in [re.match(r"lost: (\d+) label reads", c)] if m)
n = bare = 0
for s in d["samples"]:
    funcs = {fr["func"] for f in s["stack"] for fr in f["frames"]}
    if not funcs & {"work_a", "work_b", "work_c", "worker_a"}:
        continue
    n += s["values"][0]
    bare += 0 if "phase" in s["labels"] else s["values"][0]
print("%d samples in labelled units, %d without a phase, %d label reads lost" % (n, bare, lost))
if n < 100:
    sys.exit("too few samples to tell (want 100)")
if bare > lost:
    sys.exit("%d samples in labelled units without their label (%d lost reads)" % (bare, lost))
'
}

labels_emulated() {
	echo "an emulated CPU (qemu TCG): every unit's sample labelled; shares are asserted on real CPUs"
	units_labelled "$1"
}
# label_shares NAME PROFILE TRUTH: labels_work's phase shares within its
# units against the CPU time it measured (binomial sigma), on a real
# CPU; on one qemu emulates, whose late interrupts move samples from the
# code around a unit into it (phase=c, after a set's new and set, 12.5%
# for a truth of 9.8% on 5.10), every unit's sample labelled instead
# (units_labelled), and it says so.
label_shares() {
	if cpu_emulated; then
		check "$1" labels_emulated "$2"
	else
		check "$1" $CHECK shares "$2" "$3" --by tag:phase --names phase=a,phase=b,phase=c,unlabelled $LABELS_UNITS
	fi
}

# slow_debuginfod: a debuginfod on a loopback port that answers each
# query after 0.4 s, with a 404: what makes a profile's build long in
# production, here on demand. Sets DINFOD_URL and DINFOD_LOG (one line
# per query; the EXIT trap stops the server), and starts a stripped
# copy of the demo for SECONDS (default 4) so that at least one sampled
# object is asked for.
slow_debuginfod() {
	local secs=${1:-4} i
	cat >"$TMP/slowdinfod.py" <<'EOF'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(0.4)
        with open(sys.argv[2], "a") as f:
            f.write(self.path + "\n")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write("%d\n" % s.server_address[1])
s.serve_forever()
EOF
	DINFOD_LOG=$TMP/dinfod.log
	python3 "$TMP/slowdinfod.py" "$TMP/dinfod.port" "$DINFOD_LOG" &
	for ((i = 0; i < 100; i++)); do [[ -s $TMP/dinfod.port ]] && break; sleep 0.05; done
	DINFOD_URL=http://127.0.0.1:$(cat "$TMP/dinfod.port")
	strip --strip-debug -o "$TMP/demo_stripped" "$B/demo"
	"$TMP/demo_stripped" "$secs" >/dev/null &
}

# dinfod_queries: how many queries slow_debuginfod answered.
dinfod_queries() {
	local n
	n=$(grep -c debuginfo "$DINFOD_LOG" 2>/dev/null)
	echo "${n:-0}"
}

# leader_exit_tally PROFILE [PID]: tests/workloads/leader_exit.c's samples
# (of PID only, if given) as "LEADER LEADER_LABELLED WORKER WORKER_LABELLED
# HEIR HEIR_LABELLED FP": the samples with leader_spin / worker_spin /
# heir_spin in their stack and, of those, the ones labelled thread=leader
# / thread=worker / thread=heir; FP, the profile's user stacks walked by
# frame pointer for want of unwind tables (its "dwarf: N ..." comment).
leader_exit_tally() {
	python3 - "$ROOT" "$1" "${2:-}" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
prof = check.load(sys.argv[2])
pid = sys.argv[3]
t = {"leader": [0, 0], "worker": [0, 0], "heir": [0, 0]}
for s in prof["samples"]:
    if pid and str(s["labels"].get("pid")) != pid:
        continue
    f = check.funcs(s)
    if "wait_after" in f: # waiting for the test, not spinning (leader_exit.c)
        continue
    for who, c in t.items():
        if who + "_spin" in f:
            c[0] += s["values"][0]
            c[1] += s["values"][0] if s["labels"].get("thread") == who else 0
fp = 0
for c in prof["comments"]:
    m = re.match(r"dwarf: (\d+) user stacks walked by frame pointer instead", c)
    fp += int(m.group(1)) if m else 0
print(*t["leader"], *t["worker"], *t["heir"], fp)
PY
}
