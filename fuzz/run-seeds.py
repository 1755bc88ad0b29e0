#!/usr/bin/env python3
"""run-seeds.py - seed inputs for the fuzz targets from the test data.

run: fuzz/run_fuzz.c, from the golden parse cases (tests/data/parse/*/in): every folder holding a log or a
nemoperf.json becomes one input: an options byte, then the folder name, the manifest, the log and the batch
output, separated by "\\n@@\\n" (the layout run_fuzz.c reads).
input: fuzz/input_fuzz.c, a selector byte and the input: tests/data/npy, the slurmrestd replies of
tests/data/rest for each parser and API version, sbatch/squeue output, URLs and time limits.
system: fuzz/system_fuzz.c, a selector byte (0 XML, 1 host.txt, 2 CSV, 3 all, 4 dcgmi dmon) and each file of tests/data/system.
Usage: python3 fuzz/run-seeds.py run|input|system OUTDIR
"""
import os
import sys

kind, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
n = 0


def put(data):
    global n
    with open(os.path.join(out, "seed-%04d" % n), "wb") as f:
        f.write(data)
    n += 1


if kind == "system":
    for top, dirs, files in sorted(os.walk("tests/data/system")):
        dirs.sort()
        for name in sorted(files):
            sel = {".xml": 0, ".txt": 1, ".csv": 2, ".dcgm": 4}.get(os.path.splitext(name)[1])
            if sel is None:
                continue
            with open(os.path.join(top, name), "rb") as f:
                data = f.read(262143)
            put(bytes([sel]) + data)
            put(bytes([3]) + data)
    print("run-seeds.py: %d seeds in %s" % (n, out), file=sys.stderr)
    sys.exit(0)
if kind == "input":
    for name in sorted(os.listdir("tests/data/npy")):
        with open(os.path.join("tests/data/npy", name), "rb") as f:
            data = f.read()
        put(bytes([0]) + data)
        put(bytes([4 << 3]) + data)
    for name in sorted(os.listdir("tests/data/rest")):
        with open(os.path.join("tests/data/rest", name), "rb") as f:
            data = f.read()
        sel = {"ping": 3, "ping.json": 3, "submit": 4, "jobs": 5, "job": 5, "jobs.json": 5, "job.json": 5}.get(name.split("-")[1], 7) if "-" in name else 7
        put(bytes([sel | 8]) + data)
    for sel, text in ((1, b"1453225;cluster\n"), (1, b"sbatch: error: Socket timed out on send/recv operation"),
                      (2, b"42|RUNNING|None\n43|PENDING|Priority\n44|COMPLETED|nemoperf-0123456789abcdef\n"),
                      (6, b"http://localhost:6820/"), (6, b"unix:/run/slurmrestd.sock"), (7, b"1-02:03:04")):
        put(bytes([sel]) + text)
    print("run-seeds.py: %d seeds in %s" % (n, out), file=sys.stderr)
    sys.exit(0)
for top, dirs, files in sorted(os.walk("tests/data/parse")):
    dirs.sort()
    logs = sorted(f for f in files if f.endswith(".out") and not f.startswith("sbatch_"))
    sb = sorted(f for f in files if f.startswith("sbatch_"))
    if not logs and "nemoperf.json" not in files:
        continue
    def read(name, limit=65536):
        with open(os.path.join(top, name), "rb") as f:
            data = f.read()
        return data[-limit:]  # the tail: what the parser reads first
    man = read("nemoperf.json") if "nemoperf.json" in files else b""
    log = read(logs[0]) if logs else b""
    sout = read(sb[0], 4096) if sb else b""
    name = os.path.basename(top).encode()
    for opts in (0x00, 0x01, 0x43):  # plain; --reference; --reference --verdict last --group
        put(bytes([opts]) + name + b"\n@@\n" + man + b"\n@@\n" + log + b"\n@@\n" + sout)
print("run-seeds.py: %d seeds in %s" % (n, out), file=sys.stderr)
