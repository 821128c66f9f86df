#!/usr/bin/env bash
# http.sh — `pmubpf --http`, one recording answering every request: the
# server announces its port, serves a valid profile of a workload (also
# straight into `go tool pprof`) of every recorded event (?event= and
# /debug/pprof/EVENT), addresses only with nosymbol=1, overlapping
# requests all answered (no 503), each covering its own seconds; Go's
# other profiles 404 at once; bad requests get one line (400, 404, 405);
# a client that sends nothing holds up nobody and is closed; one that
# gives up is dropped; SIGTERM answers the request under way and exits 0;
# bad input fails before listening; windows due during a build are
# drained then.
source "$(dirname "$0")/lib.sh"
need_root announce index profile_valid profile_workload go_pprof_url bad_seconds not_found \
	go_profiles_404 post_405 unrecorded_event overlap_no_503 hz_refused event_param event_path \
	nosymbol head_profile slow_client slow_client_closed client_gone no_fd_leak \
	sigterm_answered sigterm_exit log_lines cli_excludes_d start_checks builds_drain_windows

# fetch METHOD URL OUT: the status on stdout; the body into OUT, the
# headers into OUT.hdr (whatever the status).
fetch() {
	python3 - "$@" <<'EOF'
import sys, urllib.request, urllib.error
method, url, out = sys.argv[1:4]
req = urllib.request.Request(url, method=method, data=b"x=1" if method == "POST" else None)
try:
    r = urllib.request.urlopen(req, timeout=60)
    status, body, hdrs = r.status, r.read(), r.headers
except urllib.error.HTTPError as e:
    status, body, hdrs = e.code, e.read(), e.headers
open(out, "wb").write(body)
open(out + ".hdr", "w").write(str(hdrs))
print(status)
EOF
}

# one_line STATUS WANT_STATUS FILE PATTERN: the answer had that status and
# a text/plain body of exactly one line matching PATTERN.
one_line() {
	local st=$1 want=$2 f=$3 pat=$4
	[[ $st == "$want" ]] || { echo "status $st, want $want: $(head -c 300 "$f")"; return 1; }
	grep -qi '^content-type: text/plain' "$f.hdr" || { echo "not text/plain: $(cat "$f.hdr")"; return 1; }
	[[ $(wc -l <"$f") -eq 1 && $(tail -c 1 "$f" | od -An -c | tr -d ' ') == '\n' ]] ||
		{ echo "body is not one line: $(cat "$f")"; return 1; }
	grep -Eq -- "$pat" "$f" || { echo "body '$(cat "$f")' does not match /$pat/"; return 1; }
}

# serve ERRFILE ARGS...: start a server on a loopback port; SRV gets its
# pid and PORT its port once it announced it (empty if it did not).
serve() {
	local err=$1 i
	shift
	"$PMUBPF" --http 127.0.0.1:0 "$@" 2>"$err" &
	SRV=$!
	for ((i = 0; i < 200; i++)); do
		grep -q 'serving pprof' "$err" 2>/dev/null && break
		kill -0 $SRV 2>/dev/null || break
		sleep 0.05
	done
	PORT=$(sed -nE 's#^pmubpf: serving pprof on http://127\.0\.0\.1:([0-9]+)/debug/pprof/$#\1#p' "$err")
}

serve "$TMP/srv.err" -F 999 -e cpu-clock -e task-clock
srv=$SRV port=$PORT
if [[ -n $port && $port -ne 0 && $(grep -c . "$TMP/srv.err") -eq 1 ]]; then
	pass announce
else
	fail announce "no announce line with a real port: $(cat "$TMP/srv.err")"
	exit 0
fi
URL=http://127.0.0.1:$port/debug/pprof
# Sockets only: the recording itself keeps files open (the symbol
# cache's objects, bounded by its fd budget).
socks() { ls -l /proc/$srv/fd | grep -c 'socket:'; }
fds0=$(socks)

st=$(fetch GET "$URL/" "$TMP/index")
if [[ $st == 200 ]] && grep -q '/debug/pprof/profile?seconds=N' "$TMP/index" &&
	grep -q '^/debug/pprof/task-clock?seconds=N' "$TMP/index"; then pass index
else fail index "status $st: $(head -c 300 "$TMP/index")"; fi

# A client that connects and sends nothing: closed after the idle
# timeout (10 s), and meanwhile nobody waits for it (checked below).
python3 - "$port" >"$TMP/slow.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(20)
t0, data = time.time(), b""
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        data += d
except OSError as e:
    print("error", e)
print("%.1f closed, %d bytes" % (time.time() - t0, len(data)))
EOF
slow=$!
sleep 0.2
t0=$(date +%s%N)
st=$(fetch GET "$URL/" "$TMP/index2")
ms=$((($(date +%s%N) - t0) / 1000000))
# Answered while the silent client still held its connection (it
# writes slow.out when closed, after the 10 s idle timeout): a server
# that waited for it could not have answered before. Not a time limit:
# python alone takes seconds to start on a loaded CI machine.
if [[ $st == 200 && ! -s $TMP/slow.out ]]; then pass slow_client
else fail slow_client "index took $ms ms (status $st); the silent client: $(cat "$TMP/slow.out")"; fi

# A 1-second profile of a workload, which runs on through go tool
# pprof's own request below (the first build names every process on
# the machine: it can take seconds on a busy one) and is stopped after.
"$B/serial" 30 /dev/null & w=$!
sleep 0.3
st=$(fetch GET "$URL/profile?seconds=1" "$TMP/p1.pb.gz")
if [[ $st == 200 ]] && grep -qi '^content-type: application/octet-stream' "$TMP/p1.pb.gz.hdr" &&
	grep -qi '^content-disposition: attachment; filename="profile.pb.gz"' "$TMP/p1.pb.gz.hdr"; then
	check profile_valid valid_profile "$TMP/p1.pb.gz"
	check profile_workload $CHECK expect "$TMP/p1.pb.gz" --pid $w --func f10 --func main \
		--comment '^pmubpf: .*--http.*; GET /debug/pprof/profile\?seconds=1 from 127\.0\.0\.1:' \
		--comment '^event: cpu-clock '
else
	fail profile_valid "status $st: $(head -c 300 "$TMP/p1.pb.gz")"
	fail profile_workload "no profile"
fi

# go tool pprof fetching the URL itself.
mkdir -p "$TMP/gohome" "$TMP/pprof"
if out=$(cd "$TMP" && HOME=$TMP/gohome GOCACHE=$TMP/gocache GOFLAGS= PPROF_TMPDIR=$TMP/pprof \
	go tool pprof -raw "$URL/profile?seconds=1" 2>"$TMP/go.err") &&
	grep -q '^PeriodType: cpu nanoseconds' <<<"$out" && grep -q 'f10' <<<"$out" &&
	! grep -qi -e warning -e error "$TMP/go.err"; then
	pass go_pprof_url
else
	fail go_pprof_url "$(grep -c f10 <<<"$out") f10 lines; $(tail -n 3 "$TMP/go.err")"
fi
kill $w; wait $w 2>/dev/null

st=$(fetch GET "$URL/profile?seconds=abc" "$TMP/bad")
check bad_seconds one_line "$st" 400 "$TMP/bad" "^bad duration 'seconds=abc': want seconds from 1 to 3600"
st=$(fetch GET "http://127.0.0.1:$port/nope" "$TMP/nope")
check not_found one_line "$st" 404 "$TMP/nope" "not found"
# Parca and Alloy ask for Go's runtime profiles by default: 404 with one
# line, each at once (under 4 s: not after the 5 s asked for).
if out=$(python3 - "$URL" <<'EOF'
import sys, time, urllib.request, urllib.error
bad = []
for p in ("allocs", "block", "goroutine", "mutex", "heap", "threadcreate"):
    t0 = time.time()
    try:
        r = urllib.request.urlopen(sys.argv[1] + "/" + p + "?seconds=5", timeout=10)
        st, body, ct = r.status, r.read(), r.headers["Content-Type"]
    except urllib.error.HTTPError as e:
        st, body, ct = e.code, e.read(), e.headers["Content-Type"]
    dt = time.time() - t0
    if st != 404 or not ct.startswith("text/plain") or body.count(b"\n") != 1 or dt > 4:
        bad.append("%s: %d %s %r in %.2f s" % (p, st, ct, body, dt))
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
); then pass go_profiles_404; else fail go_profiles_404 "$out"; fi
st=$(fetch POST "$URL/profile" "$TMP/post")
if one_line "$st" 405 "$TMP/post" "GET or HEAD" >/dev/null && grep -qi '^allow: GET, HEAD' "$TMP/post.hdr"; then
	pass post_405
else
	fail post_405 "status $st: $(cat "$TMP/post" "$TMP/post.hdr")"
fi
st=$(fetch GET "$URL/profile?seconds=1&event=cycles" "$TMP/cyc")
check unrecorded_event one_line "$st" 400 "$TMP/cyc" "^event 'cycles' is not recorded by this server \(it records cpu-clock, task-clock;"
st=$(fetch GET "$URL/profile?seconds=1&hz=99" "$TMP/hz")
check hz_refused one_line "$st" 400 "$TMP/hz" "^hz= is not taken"

# Overlapping requests: all answered, each with its own seconds. A 4 s
# one, then a 1 s one inside it, then a 4 s one starting before the
# first ends. Each starts once the server says (its gauge of requests
# under way) that the one before has begun, not after a fixed sleep: on
# a loaded host a client took 2.9 s to start, after the first had
# nearly ended, and the requests did not overlap.
# wait_active N: until N profile requests are under way (at most 30 s).
wait_active() {
	local i n
	for ((i = 0; i < 300; i++)); do
		n=$(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^pmubpf_profile_requests_active //p')
		[[ ${n:-0} -ge $1 ]] && return 0
		sleep 0.1
	done
	return 1
}
"$B/serial" 12 /dev/null & w=$!
fetch GET "$URL/profile?seconds=4" "$TMP/o1.pb.gz" >"$TMP/o1.st" &
o1=$!
wait_active 1
fetch GET "$URL/task-clock?seconds=1" "$TMP/o2.pb.gz" >"$TMP/o2.st" &
o2=$!
wait_active 2
st=$(fetch GET "$URL/profile?seconds=4&event=task-clock" "$TMP/o3.pb.gz")
wait $o1 $o2
echo "$st" >"$TMP/o3.st"
kill $w 2>/dev/null; wait $w
if [[ $(cat "$TMP/o1.st" "$TMP/o2.st" "$TMP/o3.st" | tr '\n' ' ') == "200 200 200 " ]] &&
	out=$(python3 - "$DUMP" "$TMP" <<'EOF'
import json, subprocess, sys
dump, tmp = sys.argv[1:3]
ps = [json.loads(subprocess.run([dump, "%s/%s.pb.gz" % (tmp, f)], capture_output=True, text=True).stdout)
      for f in ("o1", "o2", "o3")]
span = [(p["time_nanos"] / 1e9, p["duration_nanos"] / 1e9) for p in ps]
(a, la), (b, lb), (c, lc) = span
ok = abs(la - 4) < 1 and abs(lb - 1) < 1 and abs(lc - 4) < 1 and a < b < a + la and a < c < a + la < c + lc
print("spans (start, length): %s" % [(round(x - a, 3), round(y, 3)) for x, y in span])
sys.exit(0 if ok else 1)
EOF
	); then
	pass overlap_no_503
else
	fail overlap_no_503 "statuses $(cat "$TMP/o1.st" "$TMP/o2.st" "$TMP/o3.st" | tr '\n' ' '); ${out:-}"
fi
check event_param $CHECK expect "$TMP/o3.pb.gz" --comment '^event: task-clock ' --func f10
check event_path $CHECK expect "$TMP/o2.pb.gz" --comment '^event: task-clock ' \
	--comment 'GET /debug/pprof/task-clock\?seconds=1 from'

# nosymbol=1: addresses and build-ids only, for this request alone.
"$B/serial" 6 /dev/null & w=$!
fetch GET "$URL/profile?seconds=1&nosymbol=1" "$TMP/nosym.pb.gz" >"$TMP/nosym.st" &
ns=$!
st=$(fetch GET "$URL/profile?seconds=1" "$TMP/sym.pb.gz")
wait $ns
kill $w 2>/dev/null; wait $w
BID=$(readelf -n "$B/serial" | sed -n 's/.*Build ID: //p')
if [[ $(cat "$TMP/nosym.st") == 200 && $st == 200 ]] &&
	out=$(python3 "$ROOT/tests/integration/symcheck.py" nosym "$TMP/nosym.pb.gz" --build-id "$B/serial=$BID" 2>&1) &&
	out=$($CHECK expect "$TMP/sym.pb.gz" --func f10 2>&1); then
	pass nosymbol
else
	fail nosymbol "statuses $(cat "$TMP/nosym.st") $st: $(tail -n 1 <<<"$out")"
fi

t0=$(date +%s%N)
st=$(fetch HEAD "$URL/profile?seconds=30" "$TMP/head")
ms=$((($(date +%s%N) - t0) / 1000000))
# Well before the 30 s a GET would take (not a time limit on a fast answer).
if [[ $st == 200 && ! -s $TMP/head && $ms -lt 15000 ]] && grep -qi '^content-type: application/octet-stream' "$TMP/head.hdr"; then
	pass head_profile
else fail head_profile "status $st in $ms ms, body $(wc -c <"$TMP/head") bytes"; fi

wait $slow
if grep -Eq '^(9|1[0-4])\.[0-9] closed, 0 bytes' "$TMP/slow.out"; then pass slow_client_closed
else fail slow_client_closed "$(cat "$TMP/slow.out")"; fi

# A client that gives up (a scraper at its timeout): its request is
# dropped within a second, not built at its deadline.
python3 - "$port" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /debug/pprof/profile?seconds=30 HTTP/1.1\r\nHost: x\r\n\r\n")
time.sleep(0.5)
s.close()
EOF
# Within 5 s here (not a time limit on the server: a bound far below
# the 30 s it would take if it were built at its deadline).
for ((i = 0; i < 50; i++)); do
	grep -q 'seconds=30 -> client gone$' "$TMP/srv.err" && break
	sleep 0.1
done
if [[ $i -lt 50 ]]; then pass client_gone
else fail client_gone "no 'client gone' line within 5 s: $(tail -n 2 "$TMP/srv.err")"; fi

# All those requests later: as many sockets as before.
sleep 0.5
fds1=$(socks)
if [[ $fds1 -eq $fds0 ]]; then pass no_fd_leak
else fail no_fd_leak "$fds0 sockets at start, $fds1 now: $(ls -l /proc/$srv/fd | grep socket)"; fi

# SIGTERM during a 30-second request: it is answered with what was
# recorded, then the server exits 0.
fetch GET "$URL/profile?seconds=30" "$TMP/term.pb.gz" >"$TMP/term.st" &
tp=$!
wait_active 1
kill -TERM $srv
timeout 20 tail --pid=$srv -f /dev/null
wait $srv; rc=$?
wait $tp
if [[ $(cat "$TMP/term.st") == 200 ]]; then check sigterm_answered valid_profile "$TMP/term.pb.gz"
else fail sigterm_answered "status $(cat "$TMP/term.st"): $(head -c 200 "$TMP/term.pb.gz")"; fi
if [[ $rc -eq 0 ]]; then pass sigterm_exit; else fail sigterm_exit "exit $rc"; fi
# The log: the announce line, then one line per request and nothing else
# (no per-profile summary, no --top table).
if [[ $(grep -c 'serving pprof' "$TMP/srv.err") -eq 1 &&
	$(grep -Evc '^pmubpf: (serving pprof on |127\.0\.0\.1:[0-9]+: .* -> [0-9a-z])' "$TMP/srv.err") -eq 0 ]] &&
	grep -q 'GET /debug/pprof/profile?seconds=1 -> 200, [1-9][0-9]* samples$' "$TMP/srv.err"; then
	pass log_lines
else
	fail log_lines "want the announce and one line per request: $(sed 's/^/ | /' "$TMP/srv.err")"
fi

# Command-line mistakes: one line, exit 2; bad input fails before
# listening: one line, exit 1, no announce.
out=$("$PMUBPF" --http :0 -d 1 2>&1); rc=$?
if [[ $rc -eq 2 && $(grep -c . <<<"$out") -eq 1 ]] && grep -q -- '--http excludes -d' <<<"$out"; then
	pass cli_excludes_d
else
	fail cli_excludes_d "exit $rc: $out"
fi
bad=""
for args in "-p 999999" "-e cache-mises" "-C 4000"; do
	out=$(timeout 10 "$PMUBPF" --http 127.0.0.1:0 $args 2>&1); rc=$?
	if [[ $rc -eq 0 || $rc -eq 124 || $(grep -c . <<<"$out") -ne 1 ]] || grep -q serving <<<"$out"; then
		bad+="[$args: exit $rc: $out] "
	fi
done
if ! has_pmu; then
	out=$(timeout 10 "$PMUBPF" --http 127.0.0.1:0 -e cycles 2>&1); rc=$?
	[[ $rc -eq 1 && $(grep -c . <<<"$out") -eq 1 ]] && grep -q 'not supported on this machine' <<<"$out" ||
		bad+="[-e cycles: exit $rc: $out] "
fi
if [[ -z $bad ]]; then pass start_checks; else fail start_checks "$bad"; fi

# Windows shorter than a build: a window that comes due while a profile
# is being built is drained then (the metric counts them), and the
# answers are still whole profiles. The builds are made long by a slow
# debuginfod (lib.sh), as a slow one makes them in production; the
# check fails unless it was asked.
slow_debuginfod 4
DEBUGINFOD_URLS=$DINFOD_URL DEBUGINFOD_CACHE_PATH=$TMP/dcache \
	serve "$TMP/bw.err" -a -F 999 --window 0.1
bsrv=$SRV bport=$PORT
bad=""
if [[ -n $bport ]]; then
	fetchers=()
	for i in 1 2 3; do
		fetch GET "http://127.0.0.1:$bport/debug/pprof/profile?seconds=1" "$TMP/bw$i.pb.gz" >"$TMP/bw$i.st" &
		fetchers+=($!)
		sleep 0.3
	done
	wait "${fetchers[@]}"
	for i in 1 2 3; do
		[[ $(cat "$TMP/bw$i.st") == 200 ]] && valid_profile "$TMP/bw$i.pb.gz" >/dev/null || bad+="[request $i: $(cat "$TMP/bw$i.st")] "
	done
	fetch GET "http://127.0.0.1:$bport/metrics" "$TMP/bw.metrics" >/dev/null
	n=$(sed -n 's/^pmubpf_windows_during_builds_total //p' "$TMP/bw.metrics")
	q=$(dinfod_queries)
	[[ $q -ge 1 ]] || bad+="[debuginfod never asked: no build was slowed] "
	[[ ${n:-0} -ge 1 ]] || bad+="[no window drained during a build: ${n:-none}; debuginfod asked $q times] "
else
	bad="[no server: $(cat "$TMP/bw.err")]"
fi
kill -TERM $bsrv 2>/dev/null; wait $bsrv 2>/dev/null
if [[ -z $bad ]]; then pass builds_drain_windows; else fail builds_drain_windows "$bad"; fi
