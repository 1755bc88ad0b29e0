#!/usr/bin/env python3
"""hfserver.py - a loopback stand-in for the Hugging Face Hub, for nemoperf-setup's tests.

Serves, on 127.0.0.1 (port 0 by default: the chosen port is printed as the first
line on stdout):
  GET /api/models/<org>/<name>              200 JSON only with "Authorization: Bearer <token>",
                                            401 without it or with a wrong token, 403 for a repo
                                            whose name contains "denied", 404 for one containing
                                            "missing"
  GET /api/models/<org>/<name>/auth-check   the Hub's access check: 200 "{}" when the files would be
                                            served, else their 401/403/404 (even for a --listed repo)
  GET /<org>/<name>/resolve/<rev>/<file>    the repo's files (same auth rules); Range: bytes=N-
                                            answers 206 (416 past the end); tokenizer.json is
                                            redirected (302) to /_lfs/... as the real Hub does
                                            for large files; generation_config.json is absent
                                            (404) for repos whose name contains "nogen"
                                            model.safetensors.index.json names two shards
                                            model-0000{1,2}-of-00002.safetensors (about 96 KB each,
                                            total_size exact); a repo whose name contains "unsharded"
                                            has one model.safetensors instead
  GET /_lfs/<org>/<name>/<file>             the redirected file, no auth (a signed CDN URL)
  GET /datasets/<org>/<name>/resolve/<rev>/<path>
                                            a data set's files (path may have folders; *.parquet
                                            bodies are deterministic, about 256 KB): public, no token
                                            needed, unless the name contains "gated" (then the model
                                            rules: 401 without/with a wrong token, 403 for "denied")
  --files DIR       a repo's files are first looked up as DIR/<org>/<name>/<file> (real JSON,
                    remote code, weight shards written by a test; <file> may have folders, and the
                    model description's "siblings" list every file there), then the built-in bodies above
  --public REPO     (repeatable) REPO answers without a token, as a non-gated repo on the Hub
                    (a wrong token is still refused, as the Hub does); its description says "gated": false
  --listed REPO     (repeatable) a gated REPO whose description (/api/models) answers without a token
                    ("gated": "manual"), its files still needing one: the other way the Hub can present a
                    gated repo to a client without HF_TOKEN
  --archives DIR    also play GitHub's codeload: GET /<owner>/<name>/tar.gz/<sha> serves the bytes of
                    DIR/<owner>/<name>/<sha>.tar.gz as they are (a test writes good, corrupted or wrong
                    archives there), no auth, Range and the faults below as for files; 404 when absent
Fault injection, by option or at run time through control requests:
  --fail-first N    GET /_ctl/fail?n=N     the next N requests answer 503 (Retry-After: 0)
  --cut-after B     GET /_ctl/cut?bytes=B&n=K   the next K file bodies stop after B bytes and the
                                            connection is dropped (Content-Length is the full size)
                    GET /_ctl/html?n=K     the next K file requests answer 200 with an HTML login page
                    GET /_ctl/short?bytes=B&n=K   the next K file bodies come without Content-Length and
                                            stop after B bytes (the client cannot tell they are cut)
                    GET /_ctl/stall?n=K[&files=1]   the next K requests (API or file; files=1: file
                                            downloads only) get no answer at all: the connection stays
                                            open and silent for an hour (a stalled Hub)
                    GET /_ctl/reset        clear faults and the request log
                    GET /_ctl/log          the request log, one JSON object a line
Each request is also appended to --log FILE as a JSON line: method, path, status, auth
("ok", "bad", "none"), range.  The token itself is never logged.  Python 3 stdlib only.
"""
import argparse
import hashlib
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

REPO_RE = r"([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)"
FILES_DIR = None
ARCHIVES_DIR = None
PUBLIC = set()
LISTED = set()


def dataset_body(repo, path):
    """Deterministic content of a data set file; None when absent."""
    if not path.endswith(".parquet") or "missing" in path:
        return None
    out, h = [], hashlib.sha256((repo + "/" + path).encode()).digest()
    for _ in range(8192):
        h = hashlib.sha256(h).digest()
        out.append(h)
    return b"PAR1" + b"".join(out) + b"PAR1"


def shard_body(repo, name):
    """Deterministic bytes of a weights file (about 96 KB)."""
    out, h = [], hashlib.sha256((repo + "/" + name).encode()).digest()
    for _ in range(3072):
        h = hashlib.sha256(h).digest()
        out.append(h)
    return b"".join(out)


SHARDS = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]


def tree_files(repo):
    """Every file under --files DIR/<org>/<name>/, as relative paths (a Diffusers pipeline's subfolders)."""
    import os
    top = os.path.join(FILES_DIR, repo) if FILES_DIR and ".." not in repo else None
    if not top or not os.path.isdir(top):
        return []
    return [os.path.relpath(os.path.join(d, f), top).replace(os.sep, "/")
            for d, _, fs in os.walk(top) for f in fs]


def file_body(repo, name):
    """Deterministic content of <repo>/<name>; tokenizer.json is large (about 300 KB)."""
    if FILES_DIR and ".." not in repo and ".." not in name:
        import os
        p = os.path.join(FILES_DIR, repo, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                return f.read()
    if name == "model.safetensors.index.json":
        if "unsharded" in repo:
            return None
        wm = {"model.embed_tokens.weight": SHARDS[0], "model.layers.0.mlp.up_proj.weight": SHARDS[0],
              "model.norm.weight": SHARDS[1], "lm_head.weight": SHARDS[1]}
        total = sum(len(shard_body(repo, n)) for n in SHARDS)
        return json.dumps({"metadata": {"total_size": total}, "weight_map": wm}, indent=2).encode() + b"\n"
    if name in SHARDS and "unsharded" not in repo:
        return shard_body(repo, name)
    if name == "model.safetensors" and "unsharded" in repo:
        return shard_body(repo, name)
    if name == "tokenizer.json":
        lines = []
        for i in range(6000):
            h = hashlib.sha256(("%s:%d" % (repo, i)).encode()).hexdigest()
            lines.append('    "tok%05d_%s": %d' % (i, h[:24], i))
        return ('{\n  "version": "1.0",\n  "model": {"vocab": {\n' + ",\n".join(lines) + "\n  }}\n}\n").encode()
    if name == "config.json":
        return json.dumps({"_name_or_path": repo, "architectures": ["LlamaForCausalLM"],
                           "hidden_size": 4096, "num_hidden_layers": 32, "vocab_size": 128256},
                          indent=2).encode() + b"\n"
    if name == "tokenizer_config.json":
        return json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 131072},
                          indent=2).encode() + b"\n"
    if name == "special_tokens_map.json":
        return json.dumps({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"}).encode() + b"\n"
    if name == "generation_config.json":
        if "nogen" in repo:
            return None
        return json.dumps({"bos_token_id": 128000, "eos_token_id": 128001}).encode() + b"\n"
    if name == "empty.txt":
        return b""
    return None


class State:
    def __init__(self, token, fail_first, cut_after, cut_count, log_path):
        self.lock = threading.Lock()
        self.token = token
        self.fail = fail_first
        self.cut_bytes = cut_after
        self.cut_n = cut_count if cut_after >= 0 else 0
        self.html_n = 0
        self.short_bytes = 0
        self.short_n = 0
        self.stall_n = 0
        self.stall_files = False
        self.log = []
        self.log_path = log_path

    def record(self, entry):
        with self.lock:
            self.log.append(entry)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    server_version = "hfserver/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the JSON log is the record
        pass

    def _auth(self):
        h = self.headers.get("Authorization")
        if h is None:
            return "none"
        st = self.server.state
        return "ok" if h == "Bearer " + st.token else "bad"

    def _send(self, code, body=b"", ctype="application/json", extra=None, log=None):
        if log is not None:  # logged first: a client that has its answer finds it in the log
            log["status"] = code
            self.server.state.record(log)
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, code, msg, log, extra=None):
        self._send(code, json.dumps({"error": msg}).encode(), extra=extra, log=log)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        st = self.server.state
        url = urlsplit(self.path)
        path = url.path
        auth = self._auth()
        log = {"method": self.command, "path": path, "auth": auth, "range": self.headers.get("Range")}
        if path.startswith("/_ctl/"):
            return self._control(path[6:], parse_qs(url.query))
        with st.lock:
            stalling = st.stall_n > 0 and (not st.stall_files or "/resolve/" in path)
            if stalling:
                st.stall_n -= 1
        if stalling:  # a Hub that takes the request and never answers
            log["status"] = "stalled"
            st.record(log)
            time.sleep(3600)
            return
        with st.lock:
            failing = st.fail > 0
            if failing:
                st.fail -= 1
        if failing:
            return self._error(503, "Service Unavailable (injected)", log, {"Retry-After": "0"})

        m = re.fullmatch(r"/api/models/" + REPO_RE + r"/auth-check", path)
        if m:  # the Hub's access check (huggingface_hub HfApi.auth_check): the files' rules, an empty body
            code = self._access(m.group(1), auth)
            return self._deny(code, m.group(1), log) if code != 200 else self._send(200, b"{}", log=log)

        m = re.fullmatch(r"/api/models/" + REPO_RE, path)
        if m:
            repo = m.group(1)
            code = 200 if repo in LISTED and auth == "none" else self._access(repo, auth)
            if code != 200:
                return self._deny(code, repo, log)
            body = json.dumps({"id": repo, "modelId": repo, "gated": False if repo in PUBLIC else "manual",
                               "sha": hashlib.sha1(repo.encode()).hexdigest(),
                               "siblings": [{"rfilename": n} for n in sorted(set(
                                            [n for n in ("config.json", "tokenizer.json", "tokenizer_config.json",
                                                         "special_tokens_map.json", "generation_config.json")
                                             if file_body(repo, n) is not None] + tree_files(repo)))]}).encode()
            return self._send(200, body, log=log)

        m = re.fullmatch(r"/" + REPO_RE + r"/resolve/([A-Za-z0-9._-]+)/((?:[A-Za-z0-9_-][A-Za-z0-9._-]*/)*"
                         r"[A-Za-z0-9._-]+)", path)
        if m:
            repo, name = m.group(1), m.group(3)
            code = self._access(repo, auth)
            if code != 200:
                return self._deny(code, repo, log)
            if file_body(repo, name) is None:
                return self._error(404, "Entry not found", log, {"X-Error-Code": "EntryNotFound"})
            if name == "tokenizer.json":
                self._send(302, b"", extra={"Location": "/_lfs/%s/%s" % (repo, name)}, log=log)
                return None
            return self._file(repo, name, log)

        m = re.fullmatch(r"/datasets/" + REPO_RE + r"/resolve/([A-Za-z0-9._-]+)/([A-Za-z0-9._/-]+)", path)
        if m:
            repo, name = m.group(1), m.group(3)
            code = self._access(repo, auth) if "gated" in repo else (404 if "missing" in repo else 200)
            if code != 200:
                return self._deny(code, repo, log)
            body = dataset_body(repo, name)
            if body is None or ".." in name.split("/"):
                return self._error(404, "Entry not found", log, {"X-Error-Code": "EntryNotFound"})
            return self._file(repo, name, log, body)

        m = re.fullmatch(r"/" + REPO_RE + r"/tar\.gz/([0-9a-f]{40})", path)
        if m and ARCHIVES_DIR:
            try:
                with open("%s/%s/%s.tar.gz" % (ARCHIVES_DIR, m.group(1), m.group(2)), "rb") as f:
                    body = f.read()
            except OSError:
                return self._error(404, "Not Found", log)
            return self._file(m.group(1), m.group(2), log, body)

        m = re.fullmatch(r"/_lfs/" + REPO_RE + r"/([A-Za-z0-9._-]+)", path)
        if m and file_body(m.group(1), m.group(2)) is not None:
            return self._file(m.group(1), m.group(2), log)
        return self._error(404, "Not Found", log)

    def _access(self, repo, auth):
        if "missing" in repo:
            return 404
        if repo in PUBLIC and auth != "bad":
            return 200
        if auth != "ok":
            return 401
        if "denied" in repo:
            return 403
        return 200

    def _deny(self, code, repo, log):
        if code == 404:
            return self._error(404, "Repository not found", log, {"X-Error-Code": "RepoNotFound"})
        if code == 401:
            return self._error(401, "Access to model %s is restricted. Please log in." % repo, log,
                               {"X-Error-Code": "GatedRepo"})
        return self._error(403, "Access to model %s is restricted and you are not in the authorized list."
                           % repo, log, {"X-Error-Code": "GatedRepo"})

    def _file(self, repo, name, log, body=None):
        st = self.server.state
        if body is None:
            body = file_body(repo, name)
        start = 0
        rng = self.headers.get("Range")
        code = 200
        extra = {"Accept-Ranges": "bytes", "ETag": '"%s"' % hashlib.sha1(body).hexdigest()}
        if rng:
            m = re.fullmatch(r"bytes=(\d+)-", rng.strip())
            if not m:
                return self._error(400, "unsupported Range", log)
            start = int(m.group(1))
            if start >= len(body):
                return self._error(416, "Range Not Satisfiable", log,
                                   {"Content-Range": "bytes */%d" % len(body)})
            code = 206
            extra["Content-Range"] = "bytes %d-%d/%d" % (start, len(body) - 1, len(body))
        part = body[start:]
        with st.lock:
            html = st.html_n > 0
            if html:
                st.html_n -= 1
            short = not html and st.short_n > 0 and len(part) > st.short_bytes
            if short:
                st.short_n -= 1
        if html:  # a captive portal or SSO proxy: 200, a login page instead of the file
            log["html"] = True
            return self._send(200, b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head>"
                              b"<body><form>Log in</form></body></html>\n", ctype="text/html; charset=utf-8",
                              log=log)
        if short:  # no Content-Length, connection closed early: the client cannot tell the body is cut
            log["status"] = code
            log["short"] = st.short_bytes
            st.record(log)
            self.send_response(code)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(part[:st.short_bytes])
            self.wfile.flush()
            self.close_connection = True
            return None
        with st.lock:
            cut = st.cut_n > 0 and len(part) > st.cut_bytes
            if cut:
                st.cut_n -= 1
                cut_at = st.cut_bytes
        if not cut:
            return self._send(code, part, ctype="application/octet-stream", extra=extra, log=log)
        log["status"] = code
        log["cut"] = cut_at
        st.record(log)
        self.send_response(code)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(part)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(part[:cut_at])
        self.wfile.flush()
        self.close_connection = True
        try:
            import socket
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return None

    def _control(self, what, q):
        st = self.server.state
        n = int(q.get("n", ["1"])[0])
        if what == "fail":
            with st.lock:
                st.fail = n
        elif what == "cut":
            with st.lock:
                st.cut_bytes = int(q.get("bytes", ["1000"])[0])
                st.cut_n = n
        elif what == "html":
            with st.lock:
                st.html_n = n
        elif what == "short":
            with st.lock:
                st.short_bytes = int(q.get("bytes", ["1000"])[0])
                st.short_n = n
        elif what == "stall":
            with st.lock:
                st.stall_n = n
                st.stall_files = q.get("files", ["0"])[0] == "1"
        elif what == "reset":
            with st.lock:
                st.stall_n = 0
                st.fail = 0
                st.cut_n = 0
                st.html_n = 0
                st.short_n = 0
                st.log = []
        elif what == "log":
            with st.lock:
                text = "".join(json.dumps(e) + "\n" for e in st.log)
            return self._send(200, text.encode(), ctype="application/x-ndjson")
        else:
            return self._send(404, b'{"error": "unknown control"}')
        return self._send(200, b'{"ok": true}')


def main():
    ap = argparse.ArgumentParser(description="loopback Hugging Face Hub stand-in for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--token", default="hf_test_token_0123456789")
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--cut-after", type=int, default=-1)
    ap.add_argument("--cut-count", type=int, default=1)
    ap.add_argument("--log", default=None)
    ap.add_argument("--files", default=None)
    ap.add_argument("--public", action="append", default=[])
    ap.add_argument("--listed", action="append", default=[])
    ap.add_argument("--archives", default=None)
    a = ap.parse_args()
    global FILES_DIR, ARCHIVES_DIR
    FILES_DIR = a.files
    ARCHIVES_DIR = a.archives
    PUBLIC.update(a.public)
    LISTED.update(a.listed)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.state = State(a.token, a.fail_first, a.cut_after, a.cut_count, a.log)
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
