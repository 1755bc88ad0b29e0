#!/usr/bin/env python3
"""run-seeds.py - seed inputs for fuzz/run_fuzz.c from the golden parse cases (tests/data/parse/*/in).

Every folder holding a log or a nemoperf.json becomes one input: an options byte, then the folder name,
the manifest, the log and the batch output, separated by "\\n@@\\n" (the layout run_fuzz.c reads).
Usage: python3 fuzz/run-seeds.py OUTDIR
"""
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
n = 0
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
        data = bytes([opts]) + name + b"\n@@\n" + man + b"\n@@\n" + log + b"\n@@\n" + sout
        with open(os.path.join(out, "seed-%04d" % n), "wb") as f:
            f.write(data)
        n += 1
print("run-seeds.py: %d seeds in %s" % (n, out), file=sys.stderr)
