#!/usr/bin/env python3
"""check-markdown.py - nemoperf-parse --format markdown --reference of the make-logs.py runs against DFM's table.

Reads the parse output on stdin and share/nemoperf/reference/dfm.tsv (the newest rows, in the published
order).  Every published row must appear, in order, with the published configuration cells (GPUs, GBS, MBS,
sequence length, FSDP, [DP,] TP, SP, PP, CP, VP, EP), its TFLOP/s/GPU within 0.5 % of the published one, the
published cell beside it, and PASS.  Exit 1 naming the first difference.
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
ref = os.path.join(here, "..", "..", "share", "nemoperf", "reference", "dfm.tsv")
pub = [r for r in csv.DictReader((l for l in open(ref) if not l.startswith("#")), delimiter="\t")
       if r["superseded"] == "-"]
lines = [l for l in sys.stdin.read().splitlines() if l.startswith("|Wan 2.1 14B|")]
if len(lines) != len(pub):
    print("check-markdown: FAIL: %d table rows, %d published" % (len(lines), len(pub)))
    sys.exit(1)
worst = 0.0
for line, r in zip(lines, pub):
    cells = line.strip("|").split("|")
    cfg = [r["gpus"], r["gbs"], r["mbs"], r["seq_len"], r["fsdp"]] + ([r["dp"]] if r["backend"] == "automodel" else []) \
        + [r["tp"], r["sp"], r["pp"], r["cp"], r["vp"], r["ep"]]
    n = len(cfg)
    if cells[1:1 + n] != cfg:
        print("check-markdown: FAIL: %s %s: configuration %s, published %s" % (r["system"], r["gpus"], cells[1:1 + n], cfg))
        sys.exit(1)
    mine, shown, verdict = float(cells[1 + n].replace(",", "")), float(cells[2 + n].replace(",", "")), cells[4 + n]
    want = float(r["model_tflops_per_gpu"])
    dev = mine / want - 1
    worst = max(worst, abs(dev))
    if abs(dev) > 0.005 or shown != want or verdict != "PASS":
        print("check-markdown: FAIL: %s %s: %.2f vs published %.2f (%+.3f %%), shown %.2f, %s"
              % (r["system"], r["gpus"], mine, want, dev * 100, shown, verdict))
        sys.exit(1)
    print("check-markdown: %-10s %-9s %4s GPUs: %8.2f TFLOP/s/GPU vs %8.2f published (%+.3f %%) PASS"
          % (r["system"], r["backend"], r["gpus"], mine, want, dev * 100))
print("check-markdown: ok: %d rows in the published order, worst %.3f %%" % (len(lines), worst * 100))
