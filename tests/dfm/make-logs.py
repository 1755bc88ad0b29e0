#!/usr/bin/env python3
"""make-logs.py - Megatron-Bridge logs of Wan 2.1 14B runs at NVIDIA's published speed, one run folder per row.

Stand-in: no GPU here, so the step time of each published row of share/nemoperf/reference/dfm.tsv is derived
from its TFLOP/s/GPU with NVIDIA's calibration (1.65907e11 FLOPs a video token, 37,440 tokens a sample):
    t = GBS x 37440 x 1.65907e11 / (TFLOP/s/GPU x 1e12 x GPUs)
and written as pretrain_wan.py's log would print it: the last rank's iteration lines (MB 953aabf
src/megatron/bridge/training/utils/train_utils.py:598-643) and rank 0's "Step Time" line with MB's own (wrong
for Wan) utilization figure, here 2.2 % of the published value as facts/dfm.md derives it.  Each folder holds
the manifest nemoperf-launch writes (nemoperf.json, the fields parse reads).
Usage: make-logs.py OUT_DIR [--superseded]   (--superseded: the 2025-11-19 rows instead of the newest)
"""
import csv
import os
import sys

CAL = 1.65907e11
TOKENS = 37440
here = os.path.dirname(os.path.abspath(__file__))
ref = os.path.join(here, "..", "..", "share", "nemoperf", "reference", "dfm.tsv")
out = sys.argv[1]
want_old = "--superseded" in sys.argv[2:]
rows = [r for r in csv.DictReader((l for l in open(ref) if not l.startswith("#")), delimiter="\t")]
n = 0
for r in rows:
    if (r["superseded"] != "-") != want_old:
        continue
    gpus, gbs, tf = int(r["gpus"]), int(r["gbs"]), float(r["model_tflops_per_gpu"])
    step = gbs * TOKENS * CAL / (tf * 1e12 * gpus)
    n += 1
    exp = "pretrain_wan2.1_14b_bf16_%d" % gpus
    d = os.path.join(out, "%s-%s-%s" % (r["system"], r["backend"], r["gpus"]), exp + "_17000000%02d" % n, exp)
    os.makedirs(d, exist_ok=True)
    manifest = ('{"format": 1, "state": "submitted", "submitted": true, "job_id": "%d", "workload": "nemo", '
                '"config": {"recipe": "wan2.1", "model_size": "14b", "dtype": "bf16", "gpu_type": "%s", '
                '"system": "%s", "gpus": %d, "seq_len": 37440, "gbs": %d, "max_steps": 50, "experiment": "%s"}}\n'
                % (1000 + n, r["gpu_type"], r["system"], gpus, gbs, exp))
    open(os.path.join(d, "nemoperf.json"), "w").write(manifest)
    with open(os.path.join(d, "log-%s_%d_0.out" % (exp, 1000 + n)), "w") as f:
        for i in range(1, 51):
            f.write("Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU\n" % (step, tf * 0.022))
            f.write(" [2026-03-13 10:%02d:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per "
                    "iteration (ms): %.1f | learning rate: %.6E | global batch size: %5d | lm loss: %.6E | "
                    "loss scale: %.1f | grad norm: %.3f | number of skipped iterations: %3d | number of nan "
                    "iterations: %3d |\n"
                    % (i // 4, (i * 15) % 60, i, 50, i * gbs, step * 1000.0, 5e-6, gbs, 0.12 - i * 1e-4, 1.0,
                       1.0 + (i % 7) * 0.01, 0, 0))
            if i == 1:
                f.write("[Rank %d] (after 1 iterations) memory (GB) | mem-allocated-gigabytes: 61.2 | "
                        "mem-max-allocated-gigabytes: 150.31\n" % (gpus - 1))
print(n)
