#!/usr/bin/env bash
# push.sh — --push to a Pyroscope server and --otlp to an OpenTelemetry
# collector, against receivers on loopback (push_receiver.py) that keep
# what arrives: every --push POST is Pyroscope's /ingest with
# format=pprof, one series per service (the template over the samples'
# labels), one sample type named for the event without '-'; every --otlp
# POST an OTLP profiles export that protoc decodes with
# proto/otlp_profiles.proto, one resource per service; what arrives at
# each adds up to the same recording's local profiles, exactly;
# a server that answers 500 or 429 gets the profiles later, one that
# refuses (400) or is down costs the local profile nothing and its
# losses are counted and said; a slow one never holds the windows up and
# its queue stays bounded; secrets stay out of the profiles' comments;
# bad options are refused with one line.
source "$(dirname "$0")/lib.sh"
need_root series_and_totals one_type_no_dash headers_and_token pushed_valid_pprof otlp_decoded_totals \
	http_push_contiguous http_push_metrics tls_verified tls_unknown_ca_refused retries_500 \
	retry_after_429 refused_400 server_down slow_server_bounded secrets_not_in_comments bad_input

# start_rx NAME MODE [ARG]: a receiver into $TMP/NAME, its URL in RX.
start_rx() {
	local d=$TMP/$1 i
	mkdir -p "$d"
	python3 "$ROOT/tests/integration/push_receiver.py" "$d" "$d.port" "${@:2}" &
	for ((i = 0; i < 100; i++)); do
		[[ -s $d.port ]] && break
		sleep 0.05
	done
	RX=http://127.0.0.1:$(cat "$d.port")
}

# pushcheck.py: the assertions, run with the receiver's directory, the
# local profiles' directory and the recorder's stderr.
cat >"$TMP/pushcheck.py" <<'PY'
import glob, gzip, json, os, re, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/integration")
import check

def posts(rx):
    out = []
    for j in sorted(glob.glob(rx + "/*.json"), key=lambda p: int(os.path.basename(p)[:-5])):
        meta = json.load(open(j))
        meta["body"] = j[:-5] + ".body"
        out.append(meta)
    return out

def delivered(rx):
    """The POSTs answered 2xx, decoded, each once (a retried POST comes
    again: the same body, counted once)."""
    seen, out = set(), []
    for p in posts(rx):
        if p["status"] // 100 != 2:
            continue
        raw = open(p["body"], "rb").read()
        if raw in seen:
            sys.exit("the same profile was delivered twice: " + p["body"])
        seen.add(raw)
        p["prof"] = check.load(p["body"])
        out.append(p)
    return out

def local(localdir, tag):
    return [check.load(f) for f in sorted(glob.glob(localdir + "/pmubpf." + tag + ".*.pb.gz"))]

def totals(rx, localdir, event, vtype, by_comm):
    """Pushed weight of each service against the local profiles' weight
    of each comm (the default template: no containers here)."""
    pushed, want = {}, {}
    for p in delivered(rx):
        prof = p["prof"]
        if prof["sample_type"][0][0] != vtype:
            continue
        svc = p["query"]["name"][0]
        for s in prof["samples"]:
            if by_comm and s["labels"].get("comm") != svc:
                sys.exit("service %s has a sample of comm %s" % (svc, s["labels"].get("comm")))
            pushed[svc] = pushed.get(svc, 0) + s["values"][0]
    for prof in local(localdir, event):
        for s in prof["samples"]:
            c = s["labels"].get("comm", "unknown_service")
            want[c] = want.get(c, 0) + s["values"][1]
    return pushed, want

def textproto(text):
    """protoc --decode's text format as nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
        elif line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                v = v[1:-1].encode("latin-1").decode("unicode_escape").encode("latin-1").decode("utf-8")
            else:
                v = int(v)
            cur.setdefault(k, []).append(v)
    return root

def otlp_requests(rx):
    import subprocess
    out = []
    for p in posts(rx):
        if p["status"] // 100 != 2:
            continue
        r = subprocess.run(["protoc", "--proto_path=" + os.environ["ROOT"] + "/proto",
                            "--decode=pmubpf.otlp.ExportProfilesServiceRequest",
                            os.environ["ROOT"] + "/proto/otlp_profiles.proto"],
                           stdin=open(p["body"], "rb"), capture_output=True)
        if r.returncode != 0:
            sys.exit("protoc --decode failed on %s: %s" % (p["body"], r.stderr.decode()))
        p["req"] = textproto(r.stdout.decode("utf-8"))
        out.append(p)
    return out

def one(m, k, default=0):
    return m.get(k, [default])[0]

cmd, rx, localdir, err = sys.argv[1:5]
extra = sys.argv[5:]
if cmd == "totals":
    # every event: each service's weight as the local profiles' for that
    # comm, and nothing else pushed
    for event, vtype in (("cpu-clock", "cpu"), ("page-faults", "page_faults")):
        pushed, want = totals(rx, localdir, event, vtype, True)
        print(event, "pushed", sum(pushed.values()), "local", sum(want.values()),
              "services", len(pushed), "comms", len(want))
        for name in extra:
            if event == "cpu-clock" and not pushed.get(name):
                sys.exit("no %s pushed for %s (services: %s)" % (event, name, sorted(pushed)))
        if pushed != want:
            diff = {k: (pushed.get(k), want.get(k)) for k in set(pushed) | set(want)
                    if pushed.get(k) != want.get(k)}
            sys.exit("%s: pushed weights differ from the local profiles': %s" % (event, diff))
    sent = re.findall(r"push: (\d+) profiles sent", open(err).read())
    n = len(delivered(rx))
    if str(n) not in sent:
        sys.exit("stderr says %s sent, the receiver has %d" % (sent, n))
elif cmd == "types":
    for p in delivered(rx):
        q, prof = p["query"], p["prof"]
        if p["path"] != "/ingest" or q.get("format") != ["pprof"] or q.get("spyName") != ["pmubpf"]:
            sys.exit("not an /ingest of pprof: %s %s" % (p["path"], q))
        if not int(q["from"][0]) < int(q["until"][0]):
            sys.exit("from %s not before until %s" % (q["from"], q["until"]))
        if len(prof["sample_type"]) != 1 or "-" in prof["sample_type"][0][0]:
            sys.exit("sample types %s: want one, without '-'" % prof["sample_type"])
        if prof["sample_type"][0] != prof["period_type"]:
            sys.exit("sample type %s, period type %s" % (prof["sample_type"], prof["period_type"]))
        if len(prof["samples"]) > 16000:
            sys.exit("%d samples in one profile: Pyroscope refuses over 16000" % len(prof["samples"]))
        for s in prof["samples"]:
            for k, v in s["labels"].items():
                if not re.fullmatch(r"[A-Za-z0-9_]+", k) or not isinstance(v, str):
                    sys.exit("label %s=%r: want names of [A-Za-z0-9_] and strings only" % (k, v))
    print(len(delivered(rx)), "profiles, types",
          sorted({tuple(p["prof"]["sample_type"][0]) for p in delivered(rx)}))
elif cmd == "headers":
    want_tok = open(extra[0]).read().split()[0]
    for p in posts(rx):
        h = p["headers"]
        if h.get("x-scope-orgid") != "tenant1" or h.get("authorization") != "Bearer " + want_tok:
            sys.exit("headers: %s" % h)
        if h.get("content-type") != "application/octet-stream":
            sys.exit("content type %s" % h.get("content-type"))
        if gzip.decompress(open(p["body"], "rb").read())[:1] == b"":
            sys.exit("empty body")
    print(len(posts(rx)), "POSTs with the tenant and the token")
elif cmd == "otlp":
    # each request: a dictionary whose tables start with the zero value;
    # per event and service the weights as the local profiles' per comm;
    # every sample's comm its service's; mappings with build-ids carry
    # them as process.executable.build_id.gnu; stacks name functions
    pushed = {}
    reqs = otlp_requests(rx)
    for p in reqs:
        if p["path"] != "/v1development/profiles" or p["headers"].get("content-type") != "application/x-protobuf":
            sys.exit("not an OTLP profiles export: %s %s" % (p["path"], p["headers"]))
        d = p["req"]["dictionary"][0]
        st = d["string_table"]
        if st[0] != "" or any(d[t][0] != {} for t in ("mapping_table", "location_table", "function_table", "attribute_table", "stack_table")):
            sys.exit("a table's entry 0 is not the zero value")
        attrs = d["attribute_table"]
        def attr(i):
            a = attrs[i]
            v = a["value"][0]
            return st[one(a, "key_strindex")], one(v, "string_value", None) if "string_value" in v else one(v, "int_value")
        bid_key = [i for i, s_ in enumerate(st) if s_ == "process.executable.build_id.gnu"]
        with_bid = [m for m in d["mapping_table"][1:] if m.get("attribute_indices")]
        if not with_bid or any(st[one(attrs[one(m, "attribute_indices")], "key_strindex")] != "process.executable.build_id.gnu" for m in with_bid):
            sys.exit("no mapping carries process.executable.build_id.gnu")
        named = 0
        for rp in p["req"]["resource_profiles"]:
            kv = rp["resource"][0]["attributes"][0]
            if one(kv, "key", "") != "service.name":
                sys.exit("resource attribute %s" % kv)
            svc = one(kv["value"][0], "string_value", "")
            sp = rp["scope_profiles"][0]
            if one(sp["scope"][0], "name", "") != "pmubpf":
                sys.exit("scope %s" % sp["scope"])
            for prof in sp["profiles"]:
                vt = prof["sample_type"][0]
                ev = st[one(vt, "type_strindex")]
                if "-" in ev or prof["period_type"] != prof["sample_type"] or one(prof, "period") <= 0:
                    sys.exit("type %s, period type %s, period %s" % (ev, prof["period_type"], one(prof, "period")))
                for s_ in prof.get("samples", []):
                    labels = dict(attr(i) for i in s_.get("attribute_indices", []))
                    if labels.get("comm") != svc:
                        sys.exit("service %s has a sample of comm %s" % (svc, labels.get("comm")))
                    if not isinstance(labels.get("pid"), int):
                        sys.exit("pid %r: want an int attribute" % labels.get("pid"))
                    stack = d["stack_table"][one(s_, "stack_index")]
                    for li in stack.get("location_indices", []):
                        for line in d["location_table"][li].get("lines", []):
                            if st[one(d["function_table"][one(line, "function_index")], "name_strindex")]:
                                named += 1
                    key = (ev, svc)
                    pushed[key] = pushed.get(key, 0) + sum(s_["values"])
        if not named:
            sys.exit("no frame names a function")
    for event, vtype in (("cpu-clock", "cpu"), ("page-faults", "page_faults")):
        want = {}
        for prof in local(localdir, event):
            for s_ in prof["samples"]:
                c = s_["labels"].get("comm", "unknown_service")
                want[c] = want.get(c, 0) + s_["values"][1]
        got = {svc: v for (ev, svc), v in pushed.items() if ev == vtype}
        print(event, "otlp", sum(got.values()), "local", sum(want.values()), "services", len(got))
        if got != want:
            diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
            sys.exit("%s: OTLP weights differ from the local profiles': %s" % (event, diff))
    print(len(reqs), "requests decoded")
elif cmd == "contiguous":
    # --http's pushed profiles: per event, each starts where the one
    # before ended (1 ms: wall-clock conversions), and the stderr total
    # is what arrived
    by_ev = {}
    reqs = otlp_requests(rx)
    for p in reqs:
        if "resource_profiles" not in p["req"]:
            sys.exit("a request without profiles: %s" % p["body"])
        d = p["req"]["dictionary"][0]
        prof = p["req"]["resource_profiles"][0]["scope_profiles"][0]["profiles"][0]
        ev = d["string_table"][one(prof["sample_type"][0], "type_strindex")]
        by_ev.setdefault(ev, []).append((one(prof, "time_unix_nano"), one(prof, "duration_nano")))
    if sorted(by_ev) != ["cpu", "page_faults"]:
        sys.exit("events pushed: %s" % sorted(by_ev))
    for ev, spans in by_ev.items():
        spans.sort()
        if len(spans) < 3:
            sys.exit("%s: %d profiles pushed, want 3 or more" % (ev, len(spans)))
        for (t0, d0), (t1, _) in zip(spans, spans[1:]):
            if abs(t0 + d0 - t1) > 1000000:
                sys.exit("%s: a profile ends at %d, the next starts at %d" % (ev, t0 + d0, t1))
        print(ev, len(spans), "profiles, contiguous, %.2f s in all" % ((spans[-1][0] + spans[-1][1] - spans[0][0]) / 1e9))
    sent = re.findall(r"push: (\d+) profiles sent", open(err).read())
    if sent != [str(len(reqs))]:
        sys.exit("stderr says %s sent, the receiver has %d" % (sent, len(reqs)))
elif cmd == "count":
    # status N: POSTs answered N at least extra[1] times
    n = sum(1 for p in posts(rx) if p["status"] == int(extra[0]))
    print(n, "answered", extra[0])
    if n < int(extra[1]):
        sys.exit("%d POSTs answered %s, want at least %s" % (n, extra[0], extra[1]))
elif cmd == "gap":
    # the first POST after the 429s came at least extra[0] s after the last 429
    ps = posts(rx)
    last429 = max(p["time"] for p in ps if p["status"] == 429)
    after = min((p["time"] for p in ps if p["status"] == 200 and p["time"] > last429), default=None)
    print("gap", after and after - last429)
    if after is None or after - last429 < float(extra[0]):
        sys.exit("retried %s s after a 429 with Retry-After: 3" % (after and round(after - last429, 2)))
PY
export ROOT
PC="python3 $TMP/pushcheck.py"

cp "$B/serial" "$TMP/pusha"
cp "$B/serial" "$TMP/pushb"
echo "s3cr3t-token" >"$TMP/token"

# --- a server that takes everything, and a collector beside it -------------
start_rx otlp ok
OTLP=$RX
start_rx ok ok
mkdir -p "$TMP/l1"
"$TMP/pusha" 5 /dev/null & wa=$!
"$TMP/pushb" 5 /dev/null & wb=$!
if "$PMUBPF" -a --every 2 -d 5 -o "$TMP/l1/" -e cpu-clock,page-faults --push "$RX" --otlp "$OTLP" \
	--push-header 'X-Scope-OrgID: tenant1' --push-token-file "$TMP/token" 2>"$TMP/e1"; then
	check series_and_totals $PC totals "$TMP/ok" "$TMP/l1" "$TMP/e1" pusha pushb
	check one_type_no_dash $PC types "$TMP/ok" "$TMP/l1" "$TMP/e1"
	check headers_and_token $PC headers "$TMP/ok" "$TMP/l1" "$TMP/e1" "$TMP/token"
	check otlp_decoded_totals $PC otlp "$TMP/otlp" "$TMP/l1" "$TMP/e1"
	b=$(grep -l '"pusha"' "$TMP"/ok/*.json | head -1)
	check pushed_valid_pprof valid_profile "${b%.json}.body"
	check secrets_not_in_comments bash -c '! zcat "$1"/*.pb.gz | grep -a -q -e s3cr3t -e tenant1 &&
		! cat "$2"/*.body | zcat | grep -a -q -e s3cr3t -e tenant1' _ "$TMP/l1" "$TMP/ok"
else
	for n in series_and_totals one_type_no_dash headers_and_token pushed_valid_pprof otlp_decoded_totals secrets_not_in_comments; do
		fail $n "pmubpf failed: $(tail -n 1 "$TMP/e1")"
	done
fi
wait $wa $wb

# --- --http pushing too: every window once, counted in /metrics -----------
start_rx hotlp ok
mkdir -p "$TMP/l8"
"$PMUBPF" --http 127.0.0.1:0 -a --every 2 -e cpu-clock,page-faults --otlp "$RX" 2>"$TMP/e8" &
srv=$!
for ((i = 0; i < 200; i++)); do
	port=$(sed -nE 's#^pmubpf: serving pprof on http://[^ ]*:([0-9]+)/debug/pprof/$#\1#p' "$TMP/e8")
	[[ -n $port ]] && break
	sleep 0.05
done
sleep 7
curl -s "http://127.0.0.1:$port/metrics" >"$TMP/metrics8"
kill -TERM $srv
timeout 30 tail --pid=$srv -f /dev/null
wait $srv
check http_push_contiguous $PC contiguous "$TMP/hotlp" - "$TMP/e8"
check http_push_metrics bash -c "grep -Eq '^pmubpf_push_profiles_total\{dest=\"otlp\",result=\"sent\"\} [1-9]' '$TMP/metrics8' &&
	grep -q '^pmubpf_push_queue_bytes{dest=\"otlp\"} ' '$TMP/metrics8' &&
	! grep -q 'dest=\"pyroscope\"' '$TMP/metrics8' || { grep push '$TMP/metrics8'; exit 1; }"

# --- https: libcurl's TLS, the server's certificate checked ---------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
PUSH_RX_TLS="$TMP/cert.pem:$TMP/key.pem" start_rx tls ok
TLS=https://${RX#http://}
mkdir -p "$TMP/l9" "$TMP/l10"
if "$PMUBPF" -a --every 1 -d 2 -o "$TMP/l9/" -e cpu-clock,page-faults --push "$TLS" --push-ca "$TMP/cert.pem" 2>"$TMP/e9"; then
	check tls_verified $PC totals "$TMP/tls" "$TMP/l9" "$TMP/e9"
else
	fail tls_verified "pmubpf failed: $(tail -n 1 "$TMP/e9")"
fi
# The same server, its CA not given: nothing sent, each said and counted.
n0=$(ls "$TMP"/tls/*.json | wc -l)
if "$PMUBPF" -a --every 1 -d 2 -o "$TMP/l10/" -e cpu-clock --push "$TLS" 2>"$TMP/e10"; then
	check tls_unknown_ca_refused bash -c "grep -qi 'certificate' '$TMP/e10' && grep -q ' 0 profiles sent' '$TMP/e10' &&
		[[ \$(ls '$TMP'/tls/*.json | wc -l) -eq $n0 ]] || { cat '$TMP/e10'; exit 1; }"
else
	fail tls_unknown_ca_refused "pmubpf failed: $(tail -n 1 "$TMP/e10")"
fi

# --- 500, then well: every window arrives --------------------------------
start_rx f500 fail 3
mkdir -p "$TMP/l2"
"$TMP/pusha" 3 /dev/null & wa=$!
if "$PMUBPF" -a --every 1 -d 3 -o "$TMP/l2/" -e cpu-clock,page-faults --push "$RX" 2>"$TMP/e2"; then
	check retries_500 bash -c "$PC count '$TMP/f500' - - 500 3 && $PC totals '$TMP/f500' '$TMP/l2' '$TMP/e2' pusha &&
		grep -q 'answered 500; trying again' '$TMP/e2'"
else
	fail retries_500 "pmubpf failed: $(tail -n 1 "$TMP/e2")"
fi
wait $wa

# --- 429 with Retry-After: 3 (the backoff alone would wait 1 s) ---------
start_rx busy busy 2
mkdir -p "$TMP/l3"
if "$PMUBPF" -a --every 1 -d 2 -o "$TMP/l3/" -e cpu-clock,page-faults --push "$RX" 2>"$TMP/e3"; then
	check retry_after_429 bash -c "$PC gap '$TMP/busy' - - 2.9 && $PC totals '$TMP/busy' '$TMP/l3' '$TMP/e3'"
else
	fail retry_after_429 "pmubpf failed: $(tail -n 1 "$TMP/e3")"
fi

# --- 400: dropped at once, counted, said once ------------------------------
start_rx bad refuse
mkdir -p "$TMP/l4"
if "$PMUBPF" -a --every 1 -d 3 -o "$TMP/l4/" -e cpu-clock --push "$RX" 2>"$TMP/e4"; then
	n=$(ls "$TMP"/bad/*.json | wc -l)
	check refused_400 bash -c "grep -q ' $n refused' '$TMP/e4' && [[ \$(grep -c 'answered 400' '$TMP/e4') -eq 1 ]] &&
		[[ \$(ls '$TMP'/l4/*.pb.gz | wc -l) -ge 3 ]] || { echo \"$n POSTs; stderr:\"; cat '$TMP/e4'; exit 1; }"
else
	fail refused_400 "pmubpf failed: $(tail -n 1 "$TMP/e4")"
fi

# --- nobody listening: the recording is whole, the loss said --------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$TMP/l5"
t0=$(date +%s)
if "$PMUBPF" -a --every 1 -d 3 -o "$TMP/l5/" -e cpu-clock --push "http://127.0.0.1:$port" 2>"$TMP/e5"; then
	t=$(( $(date +%s) - t0 ))
	check server_down bash -c "[[ \$(ls '$TMP'/l5/*.pb.gz | wc -l) -ge 3 ]] && grep -q 'Could.*connect' '$TMP/e5' &&
		grep -Eq '0 profiles sent.*[1-9][0-9]* unsent at exit' '$TMP/e5' && (( $t <= 3 + 10 + 10 )) ||
		{ echo \"${t}s; stderr:\"; cat '$TMP/e5'; exit 1; }"
else
	fail server_down "pmubpf failed: $(tail -n 1 "$TMP/e5")"
fi

# --- a slow server: the windows keep their time, the queue its bound -------
# Many small profiles (a series per thread) against a server taking 4 s
# a POST and a 100 KiB queue.
start_rx slow slow 4
mkdir -p "$TMP/l6"
"$TMP/pusha" 8 /dev/null & wa=$!
t0=$(date +%s)
if "$PMUBPF" -a --every 1 -d 8 -o "$TMP/l6/" -e cpu-clock,page-faults,context-switches \
	--push "$RX" --push-service '{comm}-{tid}' --push-queue 0.1 2>"$TMP/e6"; then
	t=$(( $(date +%s) - t0 ))
	check slow_server_bounded bash -c "[[ \$(ls '$TMP'/l6/pmubpf.cpu-clock.*.pb.gz | wc -l) -ge 8 ]] &&
		grep -Eq 'dropped: [1-9][0-9]* from a full queue' '$TMP/e6' && (( $t <= 8 + 10 + 10 )) ||
		{ echo \"${t}s; stderr:\"; tail -5 '$TMP/e6'; exit 1; }"
else
	fail slow_server_bounded "pmubpf failed: $(tail -n 1 "$TMP/e6")"
fi
wait $wa

# --- bad options: one line, non-zero, no file -------------------------------
bad_ok=1
mkdir -p "$TMP/l7"
while IFS='|' read -r want args; do
	# shellcheck disable=SC2086
	if "$PMUBPF" $args 2>"$TMP/e7"; then
		echo "accepted: $args"; bad_ok=0
	elif [[ $(wc -l <"$TMP/e7") -ne 1 ]] || ! grep -q -- "$want" "$TMP/e7"; then
		echo "$args: $(cat "$TMP/e7")"; bad_ok=0
	fi
done <<EOF
bad --push 'ftp|-d 1 -o $TMP/l7/ --every 1 --push ftp://host
bad --otlp 'collector|-d 1 -o $TMP/l7/ --every 1 --otlp collector:4318
--otlp needs --every|-d 1 -o $TMP/l7/ --otlp http://127.0.0.1:1
--every excludes --http|--http 127.0.0.1:0 --every 2
--http excludes --keep|--http 127.0.0.1:0 --every 2 --keep 3 --push http://127.0.0.1:1
needs --every|-d 1 -o $TMP/l7/ --push http://127.0.0.1:1
need --push URL|-d 1 -o $TMP/l7/ --every 1 --push-service {comm}
without '}'|-d 1 -o $TMP/l7/ --every 1 --push http://127.0.0.1:1 --push-service {comm
bad --push-header|-d 1 -o $TMP/l7/ --every 1 --push http://127.0.0.1:1 --push-header novalue
cannot read --push-ca|-d 1 -o $TMP/l7/ --every 1 --push https://127.0.0.1:1 --push-ca $TMP/none
cannot read --push-token-file|-d 1 -o $TMP/l7/ --every 1 --push http://127.0.0.1:1 --push-token-file $TMP/none
bad --push-queue|-d 1 -o $TMP/l7/ --every 1 --push http://127.0.0.1:1 --push-queue 0
EOF
if [[ $bad_ok == 1 ]] && [[ -z $(ls "$TMP/l7") ]]; then
	pass bad_input
else
	fail bad_input "see above (files: $(ls "$TMP/l7"))"
fi
