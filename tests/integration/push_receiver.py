#!/usr/bin/env python3
"""push_receiver.py — a server on loopback that --push posts to
(tests/integration/push.sh). Each POST is kept as DIR/N.body (the body as
sent) and DIR/N.json (method, path, query, headers, and what it answered).

Usage: push_receiver.py DIR PORTFILE [MODE [ARG]]
  ok            200 to everything (the default)
  fail N        500 to the first N POSTs, then 200
  busy N        429 with Retry-After: 3 to the first N, then 200
  slow S        sleeps S seconds before each 200
  refuse        400 to everything
The port it listens on (127.0.0.1, chosen by the kernel) goes to PORTFILE
once it accepts. PUSH_RX_TLS=CERT:KEY in the environment: HTTPS with that
certificate.
"""
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

out, portfile = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "ok"
arg = float(sys.argv[4]) if len(sys.argv) > 4 else 0
lock = threading.Lock()
seen = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with lock:
            seen[0] += 1
            i = seen[0]
        status, extra = 200, {}
        if mode == "fail" and i <= arg:
            status = 500
        elif mode == "busy" and i <= arg:
            status, extra = 429, {"Retry-After": "3"}
        elif mode == "refuse":
            status = 400
        elif mode == "slow":
            time.sleep(arg)
        u = urllib.parse.urlsplit(self.path)
        with open(os.path.join(out, "%d.body" % i), "wb") as f:
            f.write(body)
        with open(os.path.join(out, "%d.json" % i), "w") as f:
            json.dump({"method": "POST", "path": u.path,
                       "query": urllib.parse.parse_qs(u.query),
                       "headers": {k.lower(): v for k, v in self.headers.items()},
                       "status": status, "time": time.time()}, f)
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if os.environ.get("PUSH_RX_TLS"):
    import ssl
    cert, key = os.environ["PUSH_RX_TLS"].split(":")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
