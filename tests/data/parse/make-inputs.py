#!/usr/bin/env python3
# make-inputs.py - write the input trees of the golden cases of issue 9 (identity, plausibility, steady state,
# every launched run, repeats, sweeps, seed-000 markdown).  Deterministic; run from the repo root:
#   python3 tests/data/parse/make-inputs.py
# Stand-ins: these are NeMo 2.0 ProgressPrinter logs and nemoperf-launch manifests written by hand (no GPU
# here); the step times are chosen from the published tables so the expected verdicts follow from arithmetic
# stated beside each case.
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def log(path, times, gbs, final=None, tail=""):
    """A NeMo 2.0 log with one step line per time (iterations 0..n-1 of `final`)."""
    n = len(times)
    final = n - 1 if final is None else final
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("[NeMo I 2025-04-11 14:46:18 nemo_logging:393] Experiments will be logged at /nemo_run/code\n")
        for i, t in enumerate(times):
            f.write("Training epoch 0, iteration %d/%d | lr: 7.496e-06 | global_batch_size: %d | global_step: %d | "
                    "peak_memory_usage: 70833405952 | memory_allocated: 44271689728 | reduced_train_loss: 11.96 | "
                    "train_step_timing in s: %s | consumed_samples: %d\n" % (i, final, gbs, i, t, (i + 1) * gbs))
        f.write(tail)


def steady(t, n=50, warm=3):
    """n steps: warm-up steps at 3x, then t."""
    return ["%.4g" % (3 * t)] * warm + ["%.4g" % t] * (n - warm)


def manifest(d, cfg, submitted=True, job="1001", error=None, workload="nemo", when="2026-11-22T10:00:00Z",
             name=None, extra=None):
    os.makedirs(d, exist_ok=True)
    c = {"recipe": cfg[0], "model_size": cfg[1], "dtype": cfg[2], "gpu_type": cfg[3], "gpus": cfg[4],
         "seq_len": cfg[5], "gbs": cfg[6], "max_steps": 50, "experiment": "pretrain_%s_%s_%s_%d" % (cfg[:3] + cfg[4:5]),
         "workload": workload}
    if name:
        c["experiment"] = name
    if len(cfg) > 7:
        c["system"] = cfg[7]
    c.update(extra or {})
    m = {"nemoperf_manifest": 1, "version": "test", "config": c, "workload": workload, "backend": "cli",
         "submitted": submitted, "job_id": job if submitted else None, "cluster": None, "submit_time": when,
         "error": error, "script": "sbatch_%s.sh" % c["experiment"]}
    with open(os.path.join(d, "nemoperf.json"), "w") as f:
        json.dump(m, f, indent=2)
        f.write("\n")


def case(name, args, rc=None):
    d = os.path.join(HERE, name)
    shutil.rmtree(os.path.join(d, "in"), ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "args"), "w") as f:
        f.write("\n".join(args) + "\n")
    return os.path.join(d, "in")


def exp(root, name, ts, job=None):
    return os.path.join(root, name, "%s_%d" % (name, ts), name)


# GB200 logs, no manifest, no --gpu: llama3 (seed 000) is published for GB200, B200 and H100, so the GPU is
# not assumed.  Step 3.96 s = 8192 x 128 / (33099 tok/s/GPU x 8): the GB200 figure.
root = case("gb200-no-identity", ["--reference", "in"])
e = exp(root, "pretrain_llama3_8b_fp8_8", 1744407969)
log(os.path.join(e, "log-pretrain_llama3_8b_fp8_8_2001_0.out"), steady(3.96), 128)
# the same logs with --gpu gb200: compared, PASS (ratio 33097 / 33099)
case("gb200-with-gpu", ["--reference", "--gpu", "gb200", "../gb200-no-identity/in"])
# --gpus 64 on a folder that says 8: an error, not ignored
case("option-contradicts-folder", ["--gpus", "64", "../gb200-no-identity/in"])

# MFU > 100 %: llama3.1 8b bf16 on 8 H100 at 2.0 s per step is 6x the published 12.27 s (MFU 384 %);
# a manifest whose seq_len is 99,999,999 makes the FLOPs of a 12.27 s step impossible too.
root = case("implausible-mfu", ["--reference", "in"])
log(os.path.join(exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969), "log-pretrain_llama3.1_8b_bf16_8_3001_0.out"),
    steady(2.0), 128)
d = exp(root, "pretrain_llama3.1_8b_bf16_16", 1744407970)
manifest(d, ("llama3.1", "8b", "bf16", "h100", 16, 99999999, 256), job="3002")
log(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_16_3002_0.out"), steady(12.3), 256)

# a step time of 1e-300 s
root = case("implausible-tiny-step", ["in"])
log(os.path.join(exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969), "log-pretrain_llama3.1_8b_bf16_8_3101_0.out"),
    steady(12.27)[:-1] + ["1e-300"], 128)

# a steady run at the published 12.27 s whose last step took 18.4 s: the steady-state mean passes,
# --verdict last fails (12.27 / 18.4 = 0.667)
root = case("slow-last-step", ["--reference", "in"])
log(os.path.join(exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969), "log-pretrain_llama3.1_8b_bf16_8_4001_0.out"),
    steady(12.27)[:-1] + ["18.4"], 128)
case("slow-last-step-verdict-last", ["--reference", "--verdict", "last", "../slow-last-step/in"])

# faster than published: 11.0 s against 12.27 s is 11.5 % faster (MFU 69.7 %, plausible): FAST, exit 1
root = case("faster-than-published", ["--reference", "in"])
log(os.path.join(exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969), "log-pretrain_llama3.1_8b_bf16_8_5001_0.out"),
    steady(11.0), 128)

# launched runs without a usable log: each status the logs alone can tell (pending/running need --slurm: e2e)
root = case("manifest-only", ["in"])
c8 = ("llama3.1", "8b", "bf16", "h100", 8, 8192, 128)
manifest(exp(root, "a-not-submitted", 1), c8, name="a-not-submitted", submitted=False,
         error="sbatch: error: invalid partition specified: gpu")
manifest(exp(root, "b-no-log", 2), c8, name="b-no-log", job="6002")
d = exp(root, "c-nccl", 3)
manifest(d, c8, name="c-nccl", job="6003")
log(os.path.join(d, "log-c-nccl_6003_0.out"), [], 128, final=49, tail=(
    "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout\n"
    "Traceback (most recent call last):\n  File \"/opt/NeMo/nemo/collections/llm/api.py\", line 150, in train\n"
    "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/"
    "NCCLUtils.hpp:275, unhandled system error, NCCL version 2.21.5\n"
    "srun: error: node-1: task 3: Exited with exit code 1\n"))
d = exp(root, "d-oom", 4)
manifest(d, c8, name="d-oom", job="6004")
log(os.path.join(d, "log-d-oom_6004_0.out"), [], 128, final=49, tail=(
    "Traceback (most recent call last):\n  File \"/opt/megatron-lm/megatron/core/pipeline_parallel/schedules.py\"\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.11 GiB of which 1.02 GiB is free.\n"))
d = exp(root, "e-python", 5)
manifest(d, c8, name="e-python", job="6005")
log(os.path.join(d, "log-e-python_6005_0.out"), [], 128, final=49, tail=(
    "Traceback (most recent call last):\n  File \"/nemo_run/code/nemoperf_job.py\", line 12, in <module>\n"
    "ModuleNotFoundError: No module named 'nemo_run'\n"))
d = exp(root, "f-timeout", 6)
manifest(d, c8, name="f-timeout", job="6006")
log(os.path.join(d, "log-f-timeout_6006_0.out"), steady(12.27)[:20], 128, final=49)
with open(os.path.join(d, "sbatch_f-timeout_6006.out"), "w") as f:
    f.write("slurmstepd: error: *** JOB 6006 ON node-1 CANCELLED AT 2026-11-22T10:30:01 DUE TO TIME LIMIT ***\n")
# a submission whose outcome launch could not learn (a timed-out sbatch): not "not-submitted", the job may exist
d = exp(root, "h-unknown", 8)
manifest(d, c8, name="h-unknown", submitted=False, error="sbatch timed out after 60 s")
with open(os.path.join(d, "nemoperf.json")) as f:
    m = json.load(f)
m["state"] = "unknown"
with open(os.path.join(d, "nemoperf.json"), "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
# a manifest that is not JSON (cut short): said, not taken for "no manifest"
d = exp(root, "i-corrupt", 9)
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "nemoperf.json"), "w") as f:
    f.write('{"nemoperf_manifest": 1, "config": {"recipe": "llama3.1", ')
d = exp(root, "g-cancelled", 7)
manifest(d, c8, name="g-cancelled", job="6007")
with open(os.path.join(d, "sbatch_g-cancelled_6007.out"), "w") as f:
    f.write("slurmstepd: error: *** JOB 6007 ON node-1 CANCELLED AT 2026-11-22T10:05:00 ***\n")

# synthetic: the manifest says WORKLOAD=synthetic; CPU steps of 0.05 s would be MFU 24,000 % on an H100
root = case("synthetic", ["--reference", "in"])
d = exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969)
manifest(d, c8, job="7001", workload="synthetic")
log(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_8_7001_0.out"), steady(0.05, 30), 128)

# three repeats of one configuration, grouped: 12.2, 12.3, 12.4 s
root = case("repeats-grouped", ["--group", "in"])
for k, t in enumerate([12.2, 12.3, 12.4]):
    d = exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969 + k)
    manifest(d, c8, job=str(8001 + k), when="2026-11-22T1%d:00:00Z" % k)
    log(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_8_%d_0.out" % (8001 + k)), steady(t), 128)

# a weak-scaling sweep at 8, 16, 32 and 128 GPUs (GBS 16 per GPU): sorted by GPU count, efficiency against 8.
# Step times: seed 003's 12.27, 12.3, 12.32 and a made-up slower 13.5 at 128.
root = case("sweep-efficiency", ["in"])
for g, t in [(128, 13.5), (16, 12.3), (32, 12.32), (8, 12.27)]:
    n = "pretrain_llama3.1_8b_bf16_%d" % g
    log(os.path.join(exp(root, n, 1744407969), "log-%s_%d_0.out" % (n, 9000 + g)), steady(t), 16 * g)

# seed-000 markdown with --reference: llama3 8b on GB200 and H100, nemotron 15b on B200 (7.5 % slow: FAIL) and
# GB200 (manifests name the GPU and system); one table per system, as the publication
root = case("seed000-markdown", ["--format", "markdown", "--reference", "in"])
for cfg, tpg, job in [(("llama3", "8b", "fp8", "gb200", 8, 8192, 128, "DGX-GB200"), 33099, "9101"),
                      (("llama3", "8b", "fp8", "h100", 8, 8192, 128, "DGX-H100"), 14202, "9102"),
                      (("nemotron", "15b", "fp8", "b200", 64, 4096, 256, "DGX-B200"), 15000, "9103"),
                      (("nemotron", "15b", "fp8", "gb200", 64, 4096, 256, "DGX-GB200"), 17809, "9104")]:
    n = "pretrain_%s_%s_%s_%d" % (cfg[0], cfg[1], cfg[2], cfg[4])
    d = exp(root, n + "_" + cfg[3], 1744407969)
    manifest(d, cfg, job=job)
    t = cfg[5] * cfg[6] / (tpg * cfg[4])
    log(os.path.join(d, "log-%s_%s_0.out" % (n, job)), steady(float("%.4g" % t)), cfg[6])

# unreadable inputs: a missing folder and a symbolic link loop beside a good run -> exit 1, listed in errors
root = case("unreadable", ["--format", "json", "in/good", "in/missing-folder", "in/loop"])
log(os.path.join(exp(os.path.join(root, "good"), "pretrain_llama3.1_8b_bf16_8", 1744407969),
                 "log-pretrain_llama3.1_8b_bf16_8_9201_0.out"), steady(12.27), 128)
os.makedirs(os.path.join(root, "loop"), exist_ok=True)
os.symlink(".", os.path.join(root, "loop", "back"))  # a folder that is its own child

# NVIDIA's window from the tail only: 50 steps, the last ten 8 KiB apart (chatter), so the default read holds
# iterations 44-49 only: the window says it holds 1 of 34 steps; --all-steps reads all 34
root = case("steady-window-partial", ["in"])
d = exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969)
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_8_9301_0.out"), "w") as f:
    for i in range(50):
        f.write("Training epoch 0, iteration %d/49 | global_batch_size: 128 | global_step: %d | reduced_train_loss: "
                "9.1 | train_step_timing in s: %s | consumed_samples: %d\n" % (i, i, "36.9" if i < 3 else "12.3",
                                                                            (i + 1) * 128))
        f.write(("[NeMo W 2025-04-11 14:46:19 nemo_logging:405] " + "chatter " * 24 + "\n") * (40 if i >= 40 else 1))
case("steady-window-all-steps", ["--all-steps", "../steady-window-partial/in"])

# seed 003's layout with --reference (the sweep above: 128 GPUs at 13.5 s against the published 12.33 s fails)
case("seed003-markdown-reference", ["--format", "markdown", "--reference", "../sweep-efficiency/in"])
# the same groups as CSV (mean 12.3, sample stdev 0.1, min 12.2, max 12.4) and in JSON ("groups")
case("repeats-grouped-csv", ["--group", "--format", "csv", "../repeats-grouped/in"])

# an incomplete run at the published speed (30 of 50 steps, no error in its log) is not compared: no REF PASS
root = case("incomplete-not-compared", ["--reference", "in"])
log(os.path.join(exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969), "log-pretrain_llama3.1_8b_bf16_8_9401_0.out"),
    steady(12.27)[:30], 128, final=49)
# --gpu b200 on runs whose manifest records h100: an error, not a relabelling
case("option-contradicts-manifest", ["--gpu", "b200", "../synthetic/in"])

# issue 24: a run's kind.  Five runs of one row (llama3.1 8b bf16 on 8 H100, published 12.27 s per step), as
# launch records them: the benchmark at 12.27 s (PASS); ENABLE_PROFILE at 13.6 s for 25 steps (nsys overhead:
# 0.90x, a FAIL if it were compared); ENABLE_NCCLTRACE, 5 steps with warm-up; ENABLE_CHECKPOINT at 12.27 s;
# LOAD_CHECKPOINT_PATH, 1 step of 33 s; and a folder ..._nsys without a manifest.  --reference compares the
# benchmark only (exit 0), markdown shows it alone in the table, --group keeps the kinds apart.
root = case("kinds", ["--reference", "in"])
for k, (kind, extra, times) in enumerate([
        ("benchmark", {}, steady(12.27)),
        ("profile", {"profile": True, "profile_start": 20, "profile_stop": 25, "max_steps": 25}, steady(13.6, 25)),
        ("nccltrace", {"nccltrace": True, "max_steps": 5}, steady(12.3, 5)),
        ("ckpt-save", {"checkpoint": True, "checkpoint_bytes": 1.6e11}, steady(12.27)),
        ("ckpt-load", {"load_checkpoint": "/stage/ckpt/default--None=0.0000-epoch=0-consumed_samples=6400.0",
                       "max_steps": 1}, ["33.0"])]):
    d = exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969 + k)
    manifest(d, c8, job=str(9501 + k), when="2026-11-22T1%d:00:00Z" % k, extra=extra)
    log(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_8_%d_0.out" % (9501 + k)), times, 128)
d = exp(root, "pretrain_llama3.1_8b_bf16_8_nsys", 1744407990)
log(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_8_nsys_9510_0.out"), steady(13.6, 25), 128)
case("kinds-markdown", ["--format", "markdown", "--reference", "../kinds/in"])
case("kinds-group", ["--group", "../kinds/in"])
case("kinds-csv", ["--format", "csv", "../kinds/in"])
case("kinds-json", ["--format", "json", "../kinds/in"])

# issue 24: a launched run whose log ends before its last step, without an error: stopped, or still running
# (without --slurm nothing tells which; the message says so)
root = case("incomplete-launched", ["in"])
d = exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969)
manifest(d, c8, job="9601")
log(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_8_9601_0.out"), steady(12.27)[:9], 128, final=49)

# issue 24: three repeats of one synthetic configuration share their note: "3 runs of <name>", not "<name> ... <name>"
root = case("synthetic-repeats", ["in"])
for k in range(3):
    d = exp(root, "pretrain_llama3.1_8b_bf16_8", 1744407969 + k)
    manifest(d, c8, job=str(9701 + k), workload="synthetic")
    log(os.path.join(d, "log-pretrain_llama3.1_8b_bf16_8_%d_0.out" % (9701 + k)), steady(0.05, 30), 128)
