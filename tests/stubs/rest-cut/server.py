#!/usr/bin/env python3
"""Fault-injection stand-in for 13-launch-nothing-lost.sh: a slurmrestd that cuts the connection.

It answers GET /slurm/v0.0.38/ping with a reply recorded from the real slurmrestd
(tests/data/rest/v0.0.38-ping.json), reads POST .../job/submit completely and then closes the
connection without a reply (what a crashing or restarted slurmrestd does), and answers
GET .../jobs with an empty job list.  A cut connection after the request was sent cannot be
produced on demand with the real daemon.  Usage: server.py PORTFILE (it writes its port there).
"""
import http.server
import os
import socketserver
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PING = open(os.path.join(HERE, "..", "..", "data", "rest", "v0.0.38-ping.json"), "rb").read()
EMPTY = b'{"meta": {}, "errors": [], "jobs": []}'


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/slurm/v0.0.38/ping":  # the version of the recorded reply only
            self.reply(PING)
        elif self.path == "/slurm/v0.0.38/jobs":
            self.reply(EMPTY)
        else:
            self.send_error(404)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)  # the whole request arrived ...
        self.close_connection = True  # ... and no answer comes back


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
