#!/usr/bin/env bash
# http.sh — `pmubpf --http`: the server announces its port, serves a valid
# profile of a workload (also straight into `go tool pprof`), answers bad
# requests with one line (400, 404, 405), one recording at a time (503),
# a client that sends nothing holds up nobody, one that gives up frees
# the recording slot, SIGTERM ends the recording
# under way (still answered) and the server (exit 0, no temp directory
# left), and bad input fails before listening.
source "$(dirname "$0")/lib.sh"
need_root announce index profile_valid profile_workload go_pprof_url bad_seconds not_found \
	post_405 hw_cycles busy_503 slow_client slow_client_408 hz_param event_param head_profile \
	client_gone no_fd_leak sigterm_answered sigterm_exit sigterm_no_tmp log_lines cli_excludes_d start_checks \
	drip_client_408 conn_limit header_limit pid_exits pid_gone_500

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
# a body of exactly one line matching PATTERN.
one_line() {
	local st=$1 want=$2 f=$3 pat=$4
	[[ $st == "$want" ]] || { echo "status $st, want $want: $(head -c 300 "$f")"; return 1; }
	[[ $(wc -l <"$f") -eq 1 && $(tail -c 1 "$f" | od -An -c | tr -d ' ') == '\n' ]] ||
		{ echo "body is not one line: $(cat "$f")"; return 1; }
	grep -Eq -- "$pat" "$f" || { echo "body '$(cat "$f")' does not match /$pat/"; return 1; }
}

mkdir -p "$TMP/srvtmp"
TMPDIR=$TMP/srvtmp "$PMUBPF" --http 127.0.0.1:0 -F 999 2>"$TMP/srv.err" &
srv=$!
for ((i = 0; i < 100; i++)); do
	grep -q 'serving pprof' "$TMP/srv.err" 2>/dev/null && break
	kill -0 $srv 2>/dev/null || break
	sleep 0.05
done
port=$(sed -nE 's#^pmubpf: serving pprof on http://127\.0\.0\.1:([0-9]+)/debug/pprof/$#\1#p' "$TMP/srv.err")
if [[ -n $port && $port -ne 0 && $(grep -c . "$TMP/srv.err") -eq 1 ]]; then
	pass announce
else
	fail announce "no announce line with a real port: $(cat "$TMP/srv.err")"
	exit 0
fi
URL=http://127.0.0.1:$port/debug/pprof
fds0=$(ls /proc/$srv/fd | wc -l)

st=$(fetch GET "$URL/" "$TMP/index")
if [[ $st == 200 ]] && grep -q '/debug/pprof/profile?seconds=N' "$TMP/index"; then pass index
else fail index "status $st: $(head -c 200 "$TMP/index")"; fi

# A client that connects and sends nothing: answered 408 after the read
# timeout (5 s), and meanwhile nobody waits for it (checked below).
python3 - "$port" >"$TMP/slow.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(15)
t0, data = time.time(), b""
while True:
    d = s.recv(4096)
    if not d:
        break
    data += d
print("%.1f %s" % (time.time() - t0, data.split(b"\r\n")[0].decode()))
EOF
slow=$!
# A client that keeps sending, one header byte every 0.4 s: the 5 s are
# for the whole request, so it is answered 408 too (not kept forever).
python3 - "$port" >"$TMP/drip.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(0.4)
t0, data = time.time(), b""
req = b"GET /debug/pprof/ HTTP/1.1\r\nX-Drip: " + b"a" * 100
for b in req:
    if time.time() - t0 > 15:
        break
    try:
        s.send(bytes([b]))
        d = s.recv(4096)
        if not d:
            break
        data += d
        break
    except socket.timeout:
        continue
    except OSError:
        break
s.settimeout(5)
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        data += d
except OSError:
    pass
print("%.1f %s" % (time.time() - t0, data.split(b"\r\n")[0].decode()))
EOF
drip=$!
sleep 0.2
t0=$(date +%s%N)
st=$(fetch GET "$URL/" "$TMP/index2")
ms=$((($(date +%s%N) - t0) / 1000000))
if [[ $st == 200 && $ms -lt 2000 ]]; then pass slow_client
else fail slow_client "index took $ms ms (status $st) while a client held a connection"; fi

# A 1-second profile of a workload.
"$B/serial" 3 /dev/null & w=$!
sleep 0.3
st=$(fetch GET "$URL/profile?seconds=1" "$TMP/p1.pb.gz")
if [[ $st == 200 ]] && grep -qi '^content-type: application/octet-stream' "$TMP/p1.pb.gz.hdr" &&
	grep -qi '^content-disposition: attachment; filename="profile.pb.gz"' "$TMP/p1.pb.gz.hdr"; then
	check profile_valid valid_profile "$TMP/p1.pb.gz"
	check profile_workload $CHECK expect "$TMP/p1.pb.gz" --pid $w --func f10 --func main \
		--comment '^pmubpf: .*--http.*; GET /debug/pprof/profile\?seconds=1 from 127\.0\.0\.1:'
else
	fail profile_valid "status $st: $(cat "$TMP/p1.pb.gz.hdr")"
	fail profile_workload "no profile"
fi

wait $w

# go tool pprof fetching the URL itself.
mkdir -p "$TMP/gohome" "$TMP/pprof"
"$B/serial" 3 /dev/null & w=$!
if out=$(cd "$TMP" && HOME=$TMP/gohome GOCACHE=$TMP/gocache GOFLAGS= PPROF_TMPDIR=$TMP/pprof \
	go tool pprof -raw "$URL/profile?seconds=1" 2>"$TMP/go.err") &&
	grep -q '^PeriodType: cpu nanoseconds' <<<"$out" && grep -q 'f10' <<<"$out" &&
	! grep -qi -e warning -e error "$TMP/go.err"; then
	pass go_pprof_url
else
	fail go_pprof_url "$(grep -c f10 <<<"$out") f10 lines; $(tail -n 3 "$TMP/go.err")"
fi
kill $w 2>/dev/null; wait $w

st=$(fetch GET "$URL/profile?seconds=abc" "$TMP/bad")
check bad_seconds one_line "$st" 400 "$TMP/bad" "^bad duration 'seconds=abc': want seconds from 1 to 3600"
st=$(fetch GET "http://127.0.0.1:$port/nope" "$TMP/nope")
check not_found one_line "$st" 404 "$TMP/nope" "not found"
st=$(fetch POST "$URL/profile" "$TMP/post")
if one_line "$st" 405 "$TMP/post" "GET or HEAD" >/dev/null && grep -qi '^allow: GET, HEAD' "$TMP/post.hdr"; then
	pass post_405
else
	fail post_405 "status $st: $(cat "$TMP/post" "$TMP/post.hdr")"
fi

# cycles: the command line's own message without a PMU, samples with one.
st=$(fetch GET "$URL/profile?seconds=1&event=cycles" "$TMP/cyc")
if has_pmu; then
	if [[ $st == 200 ]]; then check hw_cycles $CHECK expect "$TMP/cyc" --min-samples 10
	else fail hw_cycles "status $st: $(cat "$TMP/cyc")"; fi
else
	"$PMUBPF" -e cycles -d 0.1 -o "$TMP/cli.pb.gz" 2>"$TMP/cli.err"
	if one_line "$st" 400 "$TMP/cyc" "^event 'cycles': not supported on this machine" >"$TMP/cyc.why" &&
		[[ "pmubpf: $(cat "$TMP/cyc")" == "$(cat "$TMP/cli.err")" ]]; then
		pass hw_cycles
	else
		fail hw_cycles "$(cat "$TMP/cyc.why") / body '$(cat "$TMP/cyc")' vs CLI '$(cat "$TMP/cli.err")'"
	fi
fi

# One recording at a time: a second request during a 2-second one.
fetch GET "$URL/profile?seconds=2" "$TMP/long" >"$TMP/long.st" &
lp=$!
sleep 0.7
st=$(fetch GET "$URL/profile?seconds=1" "$TMP/busy")
wait $lp
if one_line "$st" 503 "$TMP/busy" "one at a time" >/dev/null && grep -qi '^retry-after: [0-9]' "$TMP/busy.hdr" &&
	[[ $(cat "$TMP/long.st") == 200 ]]; then
	pass busy_503
else
	fail busy_503 "second request: $st $(cat "$TMP/busy"); first: $(cat "$TMP/long.st")"
fi

# Parameters: a rate (999 Hz would give ~1000 samples of the one busy CPU)
# and an event.
"$B/serial" 2 /dev/null & w=$!
st=$(fetch GET "$URL/profile?seconds=1&hz=99" "$TMP/hz.pb.gz")
if [[ $st == 200 ]]; then check hz_param $CHECK expect "$TMP/hz.pb.gz" --pid $w --min-samples 20 --max-samples 300 \
	--comment '^sampling: 99 Hz'
else fail hz_param "status $st: $(cat "$TMP/hz.pb.gz")"; fi
st=$(fetch GET "$URL/profile?seconds=1&event=task%2Dclock" "$TMP/ev.pb.gz")
if [[ $st == 200 ]]; then check event_param $CHECK expect "$TMP/ev.pb.gz" --comment '^event: task-clock '
else fail event_param "status $st: $(cat "$TMP/ev.pb.gz")"; fi
wait $w
t0=$(date +%s%N)
st=$(fetch HEAD "$URL/profile?seconds=30" "$TMP/head")
ms=$((($(date +%s%N) - t0) / 1000000))
if [[ $st == 200 && ! -s $TMP/head && $ms -lt 2000 ]]; then pass head_profile
else fail head_profile "status $st in $ms ms, body $(wc -c <"$TMP/head") bytes"; fi

wait $slow
if grep -Eq '^[5-9]\.[0-9] HTTP/1\.0 408 ' "$TMP/slow.out"; then pass slow_client_408
else fail slow_client_408 "$(cat "$TMP/slow.out")"; fi
wait $drip
if grep -Eq '^[5-9]\.[0-9] HTTP/1\.[01] 408 ' "$TMP/drip.out"; then pass drip_client_408
else fail drip_client_408 "a client sending a byte every 0.4 s: $(cat "$TMP/drip.out")"; fi

# Limits, seen from a client: 16 connections (the 16th is served while 15
# others sit idle; a 17th is not; once they go, requests are served
# again), and 8 KiB of request line + headers (7 KiB served, 9 KiB a 4xx).
python3 - "$port" >"$TMP/limits.out" 2>&1 <<'EOF'
import socket, sys, time
port = int(sys.argv[1])

def get(extra=b""):
    """The status of GET /debug/pprof/ on a new connection (0: none)."""
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        c.sendall(b"GET /debug/pprof/ HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n")
        data = b""
        while True:
            d = c.recv(65536)
            if not d:
                break
            data += d
        c.close()
        line = data.split(b"\r\n")[0].split()
        return int(line[1]) if len(line) > 1 else 0
    except OSError:
        return 0

idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(15)]
time.sleep(0.3)
sixteenth = get()
idle.append(socket.create_connection(("127.0.0.1", port)))
time.sleep(0.3)
seventeenth = get()
for c in idle:
    c.close()
after = 0
for _ in range(30):
    after = get()
    if after == 200:
        break
    time.sleep(0.1)
pad7 = get(b"X-Pad: " + b"a" * 7000 + b"\r\n")
pad9 = get(b"X-Pad: " + b"a" * 9000 + b"\r\n")
print("16th %d 17th %d after %d headers-7k %d headers-9k %d" % (sixteenth, seventeenth, after, pad7, pad9))
EOF
read -r _ c16 _ c17 _ cafter _ h7 _ h9 <"$TMP/limits.out"
if [[ $c16 == 200 && $c17 != 200 && $cafter == 200 ]]; then pass conn_limit
else fail conn_limit "statuses: $(cat "$TMP/limits.out") (want 16th 200, 17th not 200, after 200)"; fi
if [[ $h7 == 200 && $h9 == 4[0-9][0-9] ]]; then pass header_limit
else fail header_limit "statuses: $(cat "$TMP/limits.out") (want 7 KiB of headers 200, 9 KiB 4xx)"; fi

# A client that gives up (go tool pprof on Ctrl-C) frees the slot: its
# recording ends, and the next request records.
python3 - "$port" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /debug/pprof/profile?seconds=30 HTTP/1.1\r\nHost: x\r\n\r\n")
time.sleep(0.5)
s.close()
EOF
for ((i = 0; i < 50; i++)); do
	st=$(fetch HEAD "$URL/profile" "$TMP/gone")
	[[ $st == 503 ]] || break
	sleep 0.1
done
if [[ $st == 200 && $i -lt 30 ]]; then pass client_gone
else fail client_gone "still $st after $((i / 10)).$((i % 10)) s"; fi

# Seven recordings and the limit tests later: as many fds as before
# (lingering closes done).
sleep 1.2
fds1=$(ls /proc/$srv/fd | wc -l)
if [[ $fds1 -eq $fds0 ]]; then pass no_fd_leak
else fail no_fd_leak "$fds0 fds at start, $fds1 now: $(ls -l /proc/$srv/fd | tail -n +2)"; fi

# SIGTERM during a 30-second recording: that one is answered with its
# profile, then the server exits 0 and leaves nothing in its TMPDIR.
fetch GET "$URL/profile?seconds=30" "$TMP/term.pb.gz" >"$TMP/term.st" &
tp=$!
sleep 1
kill -TERM $srv
timeout 20 tail --pid=$srv -f /dev/null
wait $srv; rc=$?
wait $tp
if [[ $(cat "$TMP/term.st") == 200 ]]; then check sigterm_answered valid_profile "$TMP/term.pb.gz"
else fail sigterm_answered "status $(cat "$TMP/term.st"): $(head -c 200 "$TMP/term.pb.gz")"; fi
if [[ $rc -eq 0 ]]; then pass sigterm_exit; else fail sigterm_exit "exit $rc"; fi
if [[ -z $(ls -A "$TMP/srvtmp") ]]; then pass sigterm_no_tmp
else fail sigterm_no_tmp "left behind: $(ls -A "$TMP/srvtmp")"; fi
# The log: the announce line, then one line per request and nothing else
# (no per-profile summary, no --top table).
if [[ $(grep -c 'serving pprof' "$TMP/srv.err") -eq 1 &&
	$(grep -Evc '^pmubpf: (serving pprof on |127\.0\.0\.1:[0-9]+: .* -> [0-9a-z])' "$TMP/srv.err") -eq 0 ]] &&
	grep -q 'GET /debug/pprof/profile?seconds=1 -> 200, [1-9][0-9]* samples$' "$TMP/srv.err" &&
	grep -q 'seconds=30 -> client gone, [0-9]* samples not sent$' "$TMP/srv.err"; then
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

# -p: a target that exits ends the recording under way (a 30-second
# request is answered once it is gone, with its samples); later requests
# get 500 'no such process'.
# threads.c waits for its go file, then runs 2 s: touched once the
# recording is under way (-v says so), so that it sees the threads run.
"$B/threads" 2 "$TMP/ptruth" "$TMP/pgo" >/dev/null & w=$!
"$PMUBPF" -v --http 127.0.0.1:0 -F 999 -p $w 2>"$TMP/srvp.err" &
srvp=$!
for ((i = 0; i < 100; i++)); do
	grep -q 'serving pprof' "$TMP/srvp.err" 2>/dev/null && break
	kill -0 $srvp 2>/dev/null || break
	sleep 0.05
done
pport=$(sed -nE 's#^pmubpf: serving pprof on http://127\.0\.0\.1:([0-9]+)/debug/pprof/$#\1#p' "$TMP/srvp.err")
if [[ -n $pport ]]; then
	t0=$(date +%s)
	fetch GET "http://127.0.0.1:$pport/debug/pprof/profile?seconds=30" "$TMP/pexit.pb.gz" >"$TMP/pexit.st" &
	fp=$!
	for ((i = 0; i < 400; i++)); do
		grep -q '^pmubpf: recording' "$TMP/srvp.err" && break
		sleep 0.05
	done
	touch "$TMP/pgo"
	wait $fp
	st=$(cat "$TMP/pexit.st")
	secs=$(($(date +%s) - t0))
	wait $w
	if [[ $st == 200 && $secs -lt 25 ]]; then
		# The whole run was recorded: its threads' CPU time is the truth.
		pid_exits() {
			$CHECK expect "$TMP/pexit.pb.gz" --only-pid $w --func t3 || return 1
			$CHECK weights "$TMP/pexit.pb.gz" "$TMP/ptruth" --hz 999
		}
		check pid_exits pid_exits
	else
		fail pid_exits "status $st after $secs s (want 200 once the target exits, ~2 s)$([[ $st == 200 ]] || echo ": $(head -c 200 "$TMP/pexit.pb.gz")")"
	fi
	st=$(fetch GET "http://127.0.0.1:$pport/debug/pprof/profile?seconds=1" "$TMP/pgone")
	check pid_gone_500 one_line "$st" 500 "$TMP/pgone" "no such process"
else
	fail pid_exits "server did not start: $(cat "$TMP/srvp.err")"
	fail pid_gone_500 "server did not start"
	touch "$TMP/pgo"; wait $w
fi
kill -TERM $srvp 2>/dev/null
wait $srvp
