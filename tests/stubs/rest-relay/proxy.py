#!/usr/bin/env python3
"""Fault-injection stand-in: a relay in front of the real slurmrestd (TCP) that relays every request and its
answer (keep-alive connections, HTTP/1.1) except a submission the real slurmrestd took (POST .../job/submit: the
job exists), whose answer it replaces with a fault: what a proxy or load balancer in front of slurmrestd does when
it restarts or times out at the wrong moment.  A fault after the server acted cannot be produced on demand with
the real daemon alone.
Usage: proxy.py UPSTREAM_PORT PORTFILE LOGFILE [CODE MODE]
  without CODE: the first submission's reply is lost (the relay hangs up without it; 15-launch-nothing-lost-23.sh);
  CODE 502, 503 or 504, MODE once (the first submission) or all (every one): that gateway error is answered instead
  of the reply (18-rest-5xx.sh).
It writes its port to PORTFILE and one line per request to LOGFILE: "relayed METHOD PATH", "dropped-reply METHOD
PATH <the reply's job id>" or "answered-CODE METHOD PATH <the reply's job id>".
"""
import http.client
import http.server
import json
import os
import socketserver
import sys
import threading

UPSTREAM = int(sys.argv[1])
LOCK = threading.Lock()
CODE = int(sys.argv[4]) if len(sys.argv) > 5 else 0
MODE = sys.argv[5] if len(sys.argv) > 5 else "once"
STATE = {"faults": 0}


def log(line):
    with LOCK, open(sys.argv[3], "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: libcurl reuses the connection of the ping

    def log_message(self, *args):
        pass

    def relay(self, method):
        n = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(n) if n else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        up = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=30)
        up.request(method, self.path, body=body, headers=headers)
        r = up.getresponse()
        data = r.read()
        up.close()
        fault = False
        if method == "POST" and self.path.endswith("/job/submit"):
            with LOCK:
                fault = MODE == "all" or STATE["faults"] == 0
                STATE["faults"] += fault
        if fault:
            try:
                jid = json.loads(data).get("job_id")
            except ValueError:
                jid = None
            if not CODE:
                log("dropped-reply %s %s %s" % (method, self.path, jid))
                self.close_connection = True  # the server answered; the client hears nothing
                return
            log("answered-%d %s %s %s" % (CODE, method, self.path, jid))
            page = b"<html><body><h1>%d Bad Gateway</h1></body></html>" % CODE
            self.send_response(CODE)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        log("relayed %s %s" % (method, self.path))
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.relay("GET")

    def do_POST(self):
        self.relay("POST")

    def do_DELETE(self):
        self.relay("DELETE")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
srv.serve_forever()
