#!/usr/bin/env python3
"""Fault-injection stand-in for 15-launch-nothing-lost-23.sh (issue 23 item 1): a relay in front
of the real slurmrestd (TCP) that loses one reply.

Every request is relayed to the real slurmrestd and its answer relayed back, over keep-alive
connections (HTTP/1.1), except the first POST .../job/submit: that one is relayed, the real
slurmrestd answers (the job exists), and the relay then hangs up on the client without the
answer: what a proxy or load balancer restarting at the wrong moment does.  A lost reply after the
server acted cannot be produced on demand with the real daemon alone.
Usage: proxy.py UPSTREAM_PORT PORTFILE LOGFILE  (it writes its port to PORTFILE; one line per
request to LOGFILE: "relayed METHOD PATH" or "dropped-reply METHOD PATH <the reply's job id>").
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
STATE = {"dropped": False}


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
        drop = False
        if method == "POST" and self.path.endswith("/job/submit"):
            with LOCK:
                drop = not STATE["dropped"]
                STATE["dropped"] = True
        if drop:
            try:
                jid = json.loads(data).get("job_id")
            except ValueError:
                jid = None
            log("dropped-reply %s %s %s" % (method, self.path, jid))
            self.close_connection = True  # the server answered; the client hears nothing
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
