#!/usr/bin/env python3
"""make-logs.py - Megatron-Bridge logs of Wan 2.1 14B runs at NVIDIA's published speed, one run folder per row.

Stand-in: no GPU here, so the step time of each published row of share/nemoperf/reference/dfm.tsv is derived
from its TFLOP/s/GPU with NVIDIA's calibration (1.65907e11 FLOPs a video token, 37,440 tokens a sample):
    t = GBS x 37440 x 1.65907e11 / (TFLOP/s/GPU x 1e12 x GPUs)
and written as pretrain_wan.py's log would print it (the AutoModel-backend rows: as DFM's AutoModel loop
prints it, automodel_log below): the last rank's iteration lines (MB 953aabf
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
if len(sys.argv) < 2 or sys.argv[1].startswith("-"):  # "--help" is no folder to write runs into
    sys.exit(__doc__)
out = sys.argv[1]
want_old = "--superseded" in sys.argv[2:]
rows = [r for r in csv.DictReader((l for l in open(ref) if not l.startswith("#")), delimiter="\t")]


def interval(t):
    """tqdm.format_interval"""
    m, sec = divmod(int(t), 60)
    h, m = divmod(m, 60)
    return "%d:%02d:%02d" % (h, m, sec) if h else "%02d:%02d" % (m, sec)


def automodel_log(f, gpus, gbs, step):
    """DFM 9eaace1 dfm/src/automodel/recipes/train.py:358-359 (setup lines), 368-374 and 426-435 (rank 0's tqdm
    bar over the loader, one batch a step as GBS = DP x LBS here, postfix every log_every = 2 steps), as tqdm's
    format_meter prints it on a file (tqdm/std.py: 10 cells, '{:5.2f}s/it')."""
    f.write("2026-03-13 10:00:00 | INFO | root | [INFO] Global Batch size: %d; Local Batch size: 1\n" % gbs)
    f.write("2026-03-13 10:00:00 | INFO | root | [INFO] Num nodes: %d; DP size: %d\n" % (max(1, gpus // 8), gpus))
    f.write("\rEpoch 1/1:   0%%|%s| 0/50 [00:00<?, ?it/s]" % (" " * 10))
    post = ""
    for k in range(1, 51):
        frac = k / 50.0
        full, part = divmod(int(frac * 10 * 8), 8)
        bar = "\u2588" * full + (("\u258f\u258e\u258d\u258c\u258b\u258a\u2589"[part - 1] if part else " ") +
                                 " " * (9 - full) if full < 10 else "")
        f.write("\rEpoch 1/1: %3.0f%%|%s| %d/50 [%s<%s, %5.2fs/it%s]" % (frac * 100, bar, k, interval(k * step),
                                                                       interval((50 - k) * step), step, post))
        if k % 2 == 0:
            post = ", loss=%.4f, avg=%.4f, lr=5.00e-05, gn=%.2f" % (0.12 - k * 1e-4, 0.121 - k * 5e-5, 1.0 + (k % 7) * 0.01)
    f.write("\n2026-03-13 10:30:00 | INFO | root | [INFO] Epoch 1 complete. avg_loss=0.118000\n")


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
    if r["backend"] == "automodel":
        with open(os.path.join(d, "log-%s_%d_0.out" % (exp, 1000 + n)), "w", encoding="utf-8") as f:
            automodel_log(f, gpus, gbs, step)
        continue
    with open(os.path.join(d, "log-%s_%d_0.out" % (exp, 1000 + n)), "w") as f:
        for i in range(1, 51):
            f.write("Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU\n" % (step, tf * 0.022))
            # the GB300 run as with logger.log_throughput=true: MB's (wrong for Wan) figure on the iteration line
            thr = " throughput per GPU (TFLOP/s/GPU): %.1f |" % (tf * 0.022) if r["gpu_type"] == "gb300" else ""
            f.write(" [2026-03-13 10:%02d:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per "
                    "iteration (ms): %.1f |%s learning rate: %.6E | global batch size: %5d | lm loss: %.6E | "
                    "loss scale: %.1f | grad norm: %.3f | number of skipped iterations: %3d | number of nan "
                    "iterations: %3d |\n"
                    % (i // 4, (i * 15) % 60, i, 50, i * gbs, step * 1000.0, thr, 5e-6, gbs, 0.12 - i * 1e-4, 1.0,
                       1.0 + (i % 7) * 0.01, 0, 0))
            if i == 1:
                f.write("[Rank %d] (after 1 iterations) memory (GB) | mem-allocated-gigabytes: 61.2 | "
                        "mem-max-allocated-gigabytes: 150.31\n" % (gpus - 1))
print(n)
