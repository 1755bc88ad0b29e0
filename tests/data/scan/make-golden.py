#!/usr/bin/env python3
# make-golden.py - regenerate the scanner's golden logs (tests/check_scan.c asserts on them).
# Deterministic: run from the repo root as `python3 tests/data/scan/make-golden.py`.
import os
import random

OUT = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20250411)


def ts(sec):
    return "2025-04-11 22:%02d:%02d" % (10 + sec // 60 % 50, sec % 60)


def nccl(i):
    ops = ["AllGather", "ReduceScatter", "AllReduce", "Broadcast", "Send", "Recv"]
    return ("pool0-%d:%d:%d [%d] NCCL INFO %s: opCount %x sendbuff 0x7f2df4da%04x recvbuff 0x7fb91bc5%04x "
            "count %d datatype 7 op 0 root 0 comm 0x550aa7f9110 [nranks=8] stream 0x7fd5409d6c20"
            % (1940 + i % 70, 49900 + i % 300, 49900 + i % 300, i % 8, ops[i % 6], 29000 + i,
               i % 65536, (i * 7) % 65536, 1 << (i % 24)))


def nemo_noise(i, sec):
    pick = i % 9
    if pick == 0:
        return "[NeMo I %s nemo_logging:393] Async finalization time took 0.%03d s" % (ts(sec), rng.randint(1, 50))
    if pick == 1:
        return ("[NeMo W %s nemo_logging:405] /opt/megatron-lm/megatron/core/tensor_parallel/layers.py:%d: "
                "UserWarning: async_grad_allreduce is deprecated" % (ts(sec), 600 + i % 40))
    if pick == 2:
        return ("/usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py:83: FutureWarning: "
                "`torch.distributed._all_gather_base` is a private function and will be deprecated.")
    if pick == 3:
        return "  return func(*args, **kwargs)"
    return nccl(i)


def preamble(kind):
    lines = [
        "+ srun --container-image=nvcr.io/nvidia/nemo:25.02 python -m nemo_run.core.runners.fdl_runner",
        "[NeMo I %s nemo_logging:393] Experiments will be logged at /nemo_run/checkpoints/default" % ts(0),
        "[NeMo W %s nemo_logging:405] No version folders would be created under the log folder as "
        "'resume_if_exists' is enabled." % ts(0),
        "GPU available: True (cuda), used: True",
        "TPU available: False, using: 0 TPU cores",
        "pool0-1962:49909:49909 [0] NCCL INFO Bootstrap : Using ibp12s0:10.0.0.1<0>",
        "pool0-1962:49909:49909 [0] NCCL INFO NCCL version 2.23.4+cuda12.8",
        "[NeMo I %s nemo_logging:393] Padded vocab_size: 128256, original vocab_size: 128256, dummy tokens: 0." % ts(1),
        "  | Name   | Type     | Params | Mode ",
        "----------------------------------------",
        "0 | module | GPTModel | 8.0 B  | train",
        "[NeMo I %s nemo_logging:393] callbacks: [TimingCallback(), ProgressPrinter(log_interval=1)] "
        "# train_step_timing is reported per step" % ts(2),
        "    log_every_n_steps: 1",
    ]
    return lines


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def nemo2_line(i, n, gbs, loss, t, extra=""):
    return ("Training epoch 0, iteration %d/%d | lr: %.4g | global_batch_size: %d | global_step: %d | "
            "peak_memory_usage: %d | memory_allocated: %d | reduced_train_loss: %s | "
            "train_step_timing in s: %s | consumed_samples: %d%s"
            % (i, n, 1.499e-07 * (i + 1), gbs, i, 70833405952 - (49 - i) * 1000, 44271689728, loss, t,
               (i + 1) * gbs, extra))


def gen_nemo2():
    out = preamble("nemo2")
    k = 0
    for i in range(50):
        for _ in range(rng.randint(3, 12)):
            out.append(nemo_noise(k, 10 + i))
            k += 1
        loss = "%.4g" % (12.88 - i * 0.0188)
        t = "%.4g" % (12.39 + (0.5 if i < 3 else 0.0) + (i % 3) * 0.001)
        if i == 49:
            loss, t = "11.96", "12.39"
        out.append(nemo2_line(i, 49, 128, loss, t))
        if i in (24, 49):
            out.append("[NeMo I %s nemo_logging:393] Global Checkpoint Save : Rank: 0 : Iteration: %d : "
                       "Start time: 1744409520.123s : Save duration: 2.311s" % (ts(60 + i), i))
    out += ["`Trainer.fit` stopped: `max_steps=50` reached.",
            "[NeMo I %s nemo_logging:393] Async finalization time took 0.004 s" % ts(119),
            "pool0-1962:49909:49909 [0] NCCL INFO comm 0x550aa7f9110 rank 0 nranks 8 - Destroy COMPLETE"]
    write("nemo2.log", ("\n".join(out) + "\n").encode())


def gen_nemo2_tflops():
    out = preamble("nemo2")
    out.append("[NeMo I %s nemo_logging:393] Global Checkpoint Load : Rank : 0 : Start time : "
               "1744409500.000s : Time spent in load_checkpoint: 4.120s" % ts(5))
    for i in range(20):
        for j in range(4):
            out.append(nemo_noise(i * 4 + j, 20 + i))
        # whole floats print as ints, big ones in scientific notation
        t = "9" if i == 19 else "%.4g" % (9.31 + i * 0.001)
        tf = "1.249e+03" if i == 19 else "%.4g" % (1249.0 - i)
        loss = "1.2e+01" if i == 19 else "%.4g" % (12.0 - i * 0.01)
        out.append(nemo2_line(i, 19, 256, loss, t, " | TFLOPS_per_GPU: %s" % tf))
    write("nemo2_tflops.log", ("\n".join(out) + "\n").encode())


def gen_nemo1():
    out = b""
    for l in preamble("nemo1"):
        out += l.encode() + b"\n"
    bar_w = 10
    total = 100
    sec = 0
    for i in range(total):
        k = i + 1
        fill = k * bar_w // total
        bar = ("\u2588" * fill + " " * (bar_w - fill)).encode()
        pct = k * 100 // total
        t = "%.2f" % (11.10 + (0.7 if i == 0 else 0.0) + (i % 2) * 0.01) if i != total - 1 else "11.10"
        loss = "%.3f" % (10.5 - i * 0.04363) if i != total - 1 else "6.190"
        sec += 11
        for redraw in range(2):
            color = b"\x1b[32m" if redraw else b""
            reset = b"\x1b[0m" if redraw else b""
            line = (b"\rEpoch 0: " + (b": " if True else b"") + b"%3d%%|" % pct + color + bar + reset +
                    b"| %d/%d [%02d:%02d<%02d:%02d, %.2fs/it, v_num=0, reduced_train_loss=%s, global_step=%d.00, "
                    b"consumed_samples=%d.0, train_step_timing in s=%s]"
                    % (k, total, sec // 60, sec % 60, (total - k) * 11 // 60, (total - k) * 11 % 60, 11.39,
                       loss.encode(), i, k * 128, t.encode()))
            out += line
        if i % 25 == 24:
            out += ("\n[NeMo I %s nemo_logging:393] Global Checkpoint Save : Rank: 0 : Iteration: %d\n"
                    % (ts(sec % 3000), i)).encode()
            out += (b"\rValidation DataLoader 0: 100%|\xe2\x96\x88\xe2\x96\x88| 5/5 [00:01<00:00,  3.21it/s]\n")
    out += b"\n`Trainer.fit` stopped: `max_steps=100` reached.\n"
    write("nemo1_tqdm.log", out)


def gen_delta():
    out = preamble("delta")
    k = 0
    for i in range(30):
        for _ in range(rng.randint(2, 6)):
            out.append(nemo_noise(k, i))
            k += 1
        t = "%.4g" % (1.234 + (i % 4) * 0.001) if i != 29 else "1.234"
        out.append("[NeMo I %s nemo_logging:393] Step %d: train_step_timing in s=%s" % (ts(30 + i), i, t))
    write("delta.log", ("\n".join(out) + "\n").encode())


def gen_mbridge():
    out = [
        "using world size: 64, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 4",
        "> initializing torch distributed ...",
        "time to initialize megatron (seconds): 45.213",
        "[after megatron is initialized] datetime: 2025-10-01 11:59:00",
        "training ...",
        "[before the start of training step] datetime: 2025-10-01 11:59:30",
        " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 2012315648",
    ]
    for i in range(1, 51):
        for j in range(rng.randint(1, 4)):
            out.append(nccl(i * 5 + j))
        ms = "%.1f" % (12390.1 + (3000.0 if i == 1 else 0.0) + (i % 5) * 0.3) if i != 50 else "12390.1"
        out.append(" [2025-10-01 12:%02d:%02d] iteration %8d/%8d | consumed samples: %12d | "
                   "elapsed time per iteration (ms): %s | throughput per GPU (TFLOP/s/GPU): %.1f | "
                   "learning rate: %E | global batch size: %5d | lm loss: %E | loss scale: 1.0 | "
                   "grad norm: %.3f | number of skipped iterations: %3d | number of nan iterations: %3d |"
                   % (i // 5, i % 60, i, 50, i * 128, ms, 612.3 if i == 50 else 600.0 + i * 0.1,
                      7.496e-06 * i / 50, 128, 11.96 if i == 50 else 12.5 - i * 0.01, 0.512, 0, 0))
        if i == 10:
            out.append("[Rank 0] (after 10 iterations) memory (MB) | allocated: 41234.5 | max allocated: "
                       "61234.5 | reserved: 70000.0 | max reserved: 70000.0")
        if i == 25:
            out.append("saving checkpoint at iteration      25 to /checkpoints in torch_dist format")
    out.append("[after training is done] datetime: 2025-10-01 12:11:00")
    write("mbridge.log", ("\n".join(out) + "\n").encode())


def gen_automodel():
    out = [
        "2025-10-01 12:00:00 | INFO | nemo_automodel.components.loggers | Setting up distributed env",
        "2025-10-01 12:00:01 | INFO | root | Model: LlamaForCausalLM, params 8.03 B",
        "2025-10-01 12:00:02 | WARNING | py.warnings | UserWarning: TypedStorage is deprecated",
    ]
    for i in range(50):
        for j in range(rng.randint(1, 3)):
            out.append(nccl(i * 3 + j))
        loss = "%.4f" % (2.5 - i * 0.0077) if i != 49 else "2.1234"
        tps = (104882.31, 13110.29) if i == 49 else (100000.0 + i * 10, (100000.0 + i * 10) / 8)
        line = ("step %d | epoch 0 | loss %s | grad_norm %.4f | lr %.2e | mem %.2f GiB | tps %.2f(%.2f/gpu) | "
                "num_label_tokens 1048576" % (i, loss, 0.5123, 1e-4, 61.23 if i == 49 else 60.0, tps[0], tps[1]))
        if i % 2:
            line = "2025-10-01 12:%02d:%02d | INFO | root | " % (i // 60, i % 60) + line
        out.append(line)
    write("automodel.log", ("\n".join(out) + "\n").encode())


def gen_runs():
    out = preamble("nemo2")
    k = 0
    # run 1: crashes at iteration 29; run 2: restarts at 0 and crashes at 9; run 3: completes 0..19
    for run, last in ((1, 29), (2, 9), (3, 19)):
        out.append("[NeMo I %s nemo_logging:393] Starting run %d" % (ts(run), run))
        for i in range(last + 1):
            out.append(nemo_noise(k, i))
            k += 1
            out.append(nemo2_line(i, 19 if run == 3 else 49, 64 * run, "%.4g" % (10.0 + run), "%.4g" % (run * 1.5)))
        if run < 3:
            out.append("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    write("runs_appended.log", ("\n".join(out) + "\n").encode())


def gen_hostile():
    # CRLF endings
    lines = [nemo_noise(i, i) for i in range(5)]
    for i in range(5):
        lines.append(nemo2_line(i, 4, 32, "5.5", "%.4g" % (2.0 + i)))
    write("crlf.log", ("\r\n".join(lines) + "\r\n").encode())
    # \r only endings
    write("cr_only.log", ("\r".join(lines) + "\r").encode())
    # partial last line: the final step is being written when the file is copied
    part = "\n".join(lines) + "\n" + nemo2_line(5, 9, 32, "5.5", "1")
    part = part[:part.rindex("train_step_timing in s: 1") + len("train_step_timing in s: 1")]
    write("partial_last.log", part.encode())
    # NUL bytes, invalid UTF-8, ANSI escapes
    b = b"\x00\x00\x00" + nemo2_line(0, 9, 32, "5.5", "2.5").encode() + b"\n"           # NUL before: kept
    b += b"\xff\xfe\xc3\x28 garbage \xe2\x82\n"                                          # invalid UTF-8 line
    b += nemo2_line(1, 9, 32, "5.5", "2.5").encode().replace(b"in s: 2.5", b"in s: 2\x00.5") + b"\n"  # cut time
    b += (nemo2_line(2, 9, 32, "5.5", "2.5").encode()[:60] + b"\x00" * 40 +              # torn line
          nemo2_line(3, 9, 32, "\xe9", "3.5").encode().replace(b"\xc3\xa9", b"\xe9") + b"\n")
    b += b"\x1b[1m" + nemo2_line(4, 9, 32, "5.5", "4.5").encode().replace(b"4.5", b"\x1b[32m4.5\x1b[0m") + b"\n"
    b += nemo2_line(5, 9, 32, "nan", "5.5").encode() + b"\n"                             # NaN loss
    b += nemo2_line(6, 9, 32, "", "").encode() + b"\n"                                  # missing values
    b += nemo2_line(7, 9, 32, "5.5", "7.5").encode().replace(b"7.5 |", b"7.5\x00|") + b"\x00\n"
    write("hostile.log", b)


def gen_mbridge_wrapped():
    # mbridge.log as a terminal 80 columns wide shows it, copied from the screen: every line longer than 80 broken
    # into pieces of 80 (the first record left whole, the 30th at 101 columns); made from mbridge.log, after it
    out, n = [], 0
    for line in open(os.path.join(OUT, "mbridge.log")).read().split("\n")[:-1]:
        if " iteration " in line and "consumed samples" in line:
            n += 1
        w = 101 if n == 30 else 80
        if n == 1 or len(line) <= w:
            out.append(line)
        else:
            out.extend(line[k:k + w] for k in range(0, len(line), w))
    write("mbridge_wrapped.log", ("\n".join(out) + "\n").encode())


gen_nemo2()
gen_nemo2_tflops()
gen_nemo1()
gen_delta()
gen_mbridge()
gen_automodel()
gen_runs()
gen_hostile()
gen_mbridge_wrapped()
