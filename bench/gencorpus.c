/* gencorpus.c - write a synthetic tree of NeMo 2.0 pre-training logs for `make bench`.
 *
 * Lays runs out the way the seed recipes do (experiments/<exp>/<exp>_<ts>/<exp>/log-<exp>_<job>_0.out
 * plus sbatch_<exp>_<job>.out and sbatch.sh), cycling over the Llama 3.1 and Nemotron4 scale tables.
 * Each log holds realistic chatter (NeMo INFO/warnings, Python warnings, NCCL init and COLL trace lines,
 * \r-redrawn tqdm bars), 50 ProgressPrinter step lines spread through the file, the last one a few KB
 * before a short teardown epilogue.  --lean writes only a small log (no chatter, --size ignored), one
 * folder level down (experiments/<exp>/<exp>_<ts>/log-<exp>_<job>_0.out): the 1,000,000-run archive shape.
 * Standalone: cc -O2 -std=c11 -D_GNU_SOURCE -o gencorpus gencorpus.c
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- configs */

struct gen_cfg {
    const char *recipe;   /* llama3.1 | nemotron4 */
    const char *size;     /* 8b ... */
    const char *dtype;    /* bf16 | fp8 */
    int gpus, gbs, mbs, seq, tp, pp, cp, vp, layers;
    double step_s;        /* steady-state step time from the seed tables */
    double params_b;      /* parameters, billions (model summary) */
};

#define GEN_MAXCFG 64
static struct gen_cfg gen_cfgs[GEN_MAXCFG];
static int gen_ncfg;

static void gen_addcfg(const char *recipe, const char *size, const char *dtype, int gpus, int gbs, int mbs,
                       int seq, int tp, int pp, int cp, int vp, int layers, double step_s, double params_b)
{
    struct gen_cfg *c = &gen_cfgs[gen_ncfg++];
    c->recipe = recipe; c->size = size; c->dtype = dtype; c->gpus = gpus; c->gbs = gbs; c->mbs = mbs;
    c->seq = seq; c->tp = tp; c->pp = pp; c->cp = cp; c->vp = vp; c->layers = layers;
    c->step_s = step_s; c->params_b = params_b;
}

/* Seed tables 003 (Llama 3.1) and 004 (Nemotron4), H100 step times. */
static void gen_initcfgs(void)
{
    static const int l8[] = {8, 16, 32, 64, 128};
    static const double l8b[] = {12.27, 12.3, 12.32, 12.33, 12.33}, l8f[] = {9.33, 9.36, 9.43, 9.48, 9.54};
    static const int l70[] = {64, 128, 256, 512, 1024, 2048};
    static const double l70b[] = {14.66, 14.67, 14.68, 14.67, 14.65, 14.66};
    static const double l70f[] = {9.86, 9.95, 10, 10.07, 10.08, 10.15};
    static const int l405[] = {32, 64, 128, 512, 1024, 2048};
    static const int l405gbs[] = {64, 64, 128, 256, 512, 1024}, l405L[] = {8, 30, 62, 126, 126, 126};
    static const int l405pp[] = {1, 4, 4, 8, 8, 8}, l405vp[] = {1, 8, 8, 8, 8, 8};
    static const double l405b[] = {5.4, 10.1, 19.62, 19.78, 19.84, 19.87};
    static const double l405f[] = {3.53, 6.32, 12.18, 12.37, 12.42, 12.56};
    static const int n15[] = {16, 32, 64, 128, 256, 512, 1024, 2048};
    static const double n15b[] = {2.66, 2.66, 2.67, 2.67, 2.68, 2.71, 2.74, 2.78};
    static const double n15f[] = {1.98, 1.98, 1.98, 1.99, 2, 2.02, 2.03, 2.09};
    static const int n340[] = {256, 512, 1024, 2048};
    static const double n340b[] = {4.36, 4.39, 4.41, 4.43}, n340f[] = {2.93, 2.97, 3, 3.05};
    for (int d = 0; d < 2; d++) {
        const char *dt = d ? "fp8" : "bf16";
        for (int i = 0; i < 5; i++)
            gen_addcfg("llama3.1", "8b", dt, l8[i], 16 * l8[i], 1, 8192, 1, 1, 2, 1, 32, d ? l8f[i] : l8b[i], 8.03);
        for (int i = 0; i < 6; i++)
            gen_addcfg("llama3.1", "70b", dt, l70[i], 2 * l70[i], 1, 8192, 4, d ? 8 : 4, d ? 1 : 2, 5, 80,
                       d ? l70f[i] : l70b[i], 70.6);
        for (int i = 0; i < 6; i++)
            gen_addcfg("llama3.1", "405b", dt, l405[i], l405gbs[i], 1, 8192, 8, l405pp[i], 2, l405vp[i],
                       l405L[i], d ? l405f[i] : l405b[i], l405L[i] == 126 ? 405.9 : 405.9 * l405L[i] / 126);
        for (int i = 0; i < 8; i++)
            gen_addcfg("nemotron4", "15b", dt, n15[i], 4 * n15[i], 2, 4096, 2, 1, 1, 1, 32, d ? n15f[i] : n15b[i], 15.6);
        for (int i = 0; i < 4; i++)
            gen_addcfg("nemotron4", "340b", dt, n340[i], n340[i] / 4, 1, 4096, 8, 8, 1, 12, 96,
                       d ? n340f[i] : n340b[i], 341.3);
    }
}

/* ---------------------------------------------------------------- random */

static uint64_t gen_rng;

static uint64_t gen_rand(void)
{   /* splitmix64 */
    uint64_t z = (gen_rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static unsigned gen_below(unsigned n) { return n ? (unsigned)(gen_rand() % n) : 0; }
static double gen_unit(void) { return (double)(gen_rand() >> 11) * (1.0 / 9007199254740992.0); }
static double gen_gauss(void)
{   /* Irwin-Hall approximation, good enough for jitter */
    double s = 0;
    for (int i = 0; i < 6; i++) s += gen_unit();
    return (s - 3.0) * 1.41421356;
}
static uint64_t gen_ptr(void) { return 0x7f0000000000ULL | ((gen_rand() & 0xffffffffffULL) << 4); }

/* ---------------------------------------------------------------- output */

struct gen_out {
    int fd;
    char *buf;
    size_t len, cap;
    uint64_t total;      /* bytes emitted so far (flushed + buffered) */
    const char *path;
};

static void gen_die(const char *what, const char *path)
{
    fprintf(stderr, "gencorpus: %s %s: %s\n", what, path ? path : "", strerror(errno));
    exit(1);
}

static void gen_flush(struct gen_out *o)
{
    size_t off = 0;
    while (off < o->len) {
        ssize_t n = write(o->fd, o->buf + off, o->len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            gen_die("write", o->path);
        }
        off += (size_t)n;
    }
    o->len = 0;
}

static void gen_reserve(struct gen_out *o, size_t need)
{
    if (o->cap - o->len < need) gen_flush(o);
}

__attribute__((format(printf, 2, 3)))
static void gen_pf(struct gen_out *o, const char *fmt, ...)
{
    va_list ap;
    gen_reserve(o, 8192);
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= o->cap - o->len) n = (int)(o->cap - o->len - 1); /* never: lines are short */
    o->len += (size_t)n;
    o->total += (uint64_t)n;
}

static void gen_puts(struct gen_out *o, const char *s)
{
    size_t n = strlen(s);
    gen_reserve(o, n + 1);
    if (n > o->cap - o->len) { gen_flush(o); n = o->cap; } /* strings here are short */
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->total += n;
}

static void gen_open(struct gen_out *o, const char *path)
{
    o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) gen_die("cannot create", path);
    o->len = 0;
    o->total = 0;
    o->path = path;
}

static void gen_close(struct gen_out *o)
{
    gen_flush(o);
    if (close(o->fd) != 0) gen_die("close", o->path);
    o->fd = -1;
}

__attribute__((format(printf, 3, 4)))
static void gen_path(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(dst, n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= n) {
        fprintf(stderr, "gencorpus: path too long\n");
        exit(1);
    }
}

static void gen_mkdir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) gen_die("mkdir", path);
}

/* ---------------------------------------------------------------- log state */

struct gen_run {
    const struct gen_cfg *c;
    long ts;             /* unix time of the run start; advances as lines are written */
    double clock;        /* fractional seconds on top of ts */
    long jobid;
    int nodes;
    int host_base;       /* first node number */
    int pid_base;
    uint64_t comm[4];
    uint64_t stream;
    unsigned long opcount;
    char tsbuf[32];      /* cached "2025-04-11 14:46:18" */
    long ts_cached;
    int tflops_field;    /* newer builds print TFLOPS_per_GPU */
};

static const char *gen_now(struct gen_run *r)
{
    long t = r->ts + (long)r->clock;
    if (t != r->ts_cached) {
        time_t tt = (time_t)t;
        struct tm tm;
        gmtime_r(&tt, &tm);
        strftime(r->tsbuf, sizeof r->tsbuf, "%Y-%m-%d %H:%M:%S", &tm);
        r->ts_cached = t;
    }
    return r->tsbuf;
}

/* torch's "W411 14:47:02.512345" style stamp */
static void gen_torchstamp(struct gen_run *r, char *dst, size_t n)
{
    time_t tt = (time_t)(r->ts + (long)r->clock);
    struct tm tm;
    gmtime_r(&tt, &tm);
    snprintf(dst, n, "%02d%02d %02d:%02d:%02d.%06u", tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
             tm.tm_sec, gen_below(1000000));
}

static int gen_ranks_shown(const struct gen_run *r) { return r->c->gpus < 16 ? r->c->gpus : 16; }

static int gen_pick_rank(const struct gen_run *r)
{
    return (int)gen_below((unsigned)r->c->gpus);
}

/* "pool0-0123:81234:81234 [3]" */
static void gen_nccl_prefix(struct gen_out *o, struct gen_run *r, int rank)
{
    int node = rank / 8, local = rank % 8;
    int pid = r->pid_base + local * 37 + node % 5;
    gen_pf(o, "pool0-%04d:%d:%d [%d] NCCL INFO ", r->host_base + node, pid,
           gen_below(4) ? pid : pid + 200 + (int)gen_below(300), local);
}

static void gen_nemo_i(struct gen_out *o, struct gen_run *r) { gen_pf(o, "[NeMo I %s nemo_logging:393] ", gen_now(r)); }
static void gen_nemo_w(struct gen_out *o, struct gen_run *r) { gen_pf(o, "[NeMo W %s nemo_logging:405] ", gen_now(r)); }

static void gen_ranklist(struct gen_out *o, int start, int stride, int n)
{
    gen_puts(o, "[");
    for (int i = 0; i < n; i++) gen_pf(o, i ? ", %d" : "%d", start + i * stride);
    gen_puts(o, "]");
}

/* ---------------------------------------------------------------- noise lines */

static const char *const gen_colls[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Send", "Recv"};

static void gen_line_coll(struct gen_out *o, struct gen_run *r)
{
    int rank = gen_pick_rank(r);
    unsigned k = gen_below(100);
    int ci = k < 30 ? 0 : k < 55 ? 1 : k < 80 ? 2 : k < 84 ? 3 : k < 92 ? 4 : 5;
    int p2p = ci >= 4;
    int nranks = p2p ? 2 : (int[]){r->c->gpus, r->c->tp, r->c->cp * 2, r->c->gpus / (r->c->tp * r->c->pp)}[gen_below(4)];
    if (nranks < 2) nranks = 2;
    unsigned long count = (unsigned long)1 << (8 + gen_below(18));
    if (gen_below(3) == 0) count += gen_below(4096);
    gen_nccl_prefix(o, r, rank);
    gen_pf(o, "%s: opCount %lx sendbuff 0x%llx recvbuff 0x%llx count %lu datatype %d op %d root %d comm 0x%llx "
              "[nranks=%d] stream 0x%llx\n",
           gen_colls[ci], r->opcount++, (unsigned long long)gen_ptr(), (unsigned long long)gen_ptr(), count,
           (int)(ci == 0 ? 7 : gen_below(3) ? 7 : 9), 0,
           p2p ? (int)gen_below((unsigned)r->c->gpus) : 0, (unsigned long long)r->comm[gen_below(4)], nranks,
           (unsigned long long)r->stream);
    r->clock += 0.0004;
}

static void gen_line_ncclinit(struct gen_out *o, struct gen_run *r)
{
    int rank = gen_pick_rank(r);
    int ch = (int)gen_below(32);
    gen_nccl_prefix(o, r, rank);
    switch (gen_below(10)) {
    case 0:
        gen_pf(o, "Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read\n", ch, rank, rank % 8,
               (rank + 1) % r->c->gpus, (rank + 1) % 8);
        break;
    case 1:
        gen_pf(o, "Channel %02d/1 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA\n", ch, rank, rank % 8,
               (rank + 8) % r->c->gpus, rank % 8, (int)gen_below(8));
        break;
    case 2:
        gen_pf(o, "Channel %02d/1 : %d[%d] -> %d[%d] [receive] via NET/IB/%d/GDRDMA\n", ch,
               (rank + r->c->gpus - 8) % r->c->gpus, rank % 8, rank, rank % 8, (int)gen_below(8));
        break;
    case 3:
        gen_pf(o, "Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d\n", (rank + 1) % r->c->gpus, rank,
               rank ? rank - 1 : -1, (rank + 2) % r->c->gpus, rank, rank > 1 ? rank - 2 : -1);
        break;
    case 4:
        gen_pf(o, "ncclCommInitRank comm 0x%llx rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%llx - Init START\n",
               (unsigned long long)gen_ptr(), rank, r->c->gpus, rank % 8, rank % 8, 0x18 + (rank % 8) * 0x20,
               (unsigned long long)gen_rand());
        break;
    case 5:
        gen_pf(o, "ncclCommInitRank comm 0x%llx rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%llx localSize 8 - Init COMPLETE\n",
               (unsigned long long)gen_ptr(), rank, r->c->gpus, rank % 8, rank % 8, 0x18 + (rank % 8) * 0x20,
               (unsigned long long)gen_rand());
        break;
    case 6:
        gen_pf(o, "Init timings - ncclCommInitRank: rank %d nranks %d total %.2f (kernels %.2f, alloc %.2f, bootstrap %.2f, allgathers %.2f, topo %.2f, graphs %.2f, connections %.2f, rest %.2f)\n",
               rank, r->c->gpus, 0.3 + gen_unit(), 0.1 + gen_unit() / 5, gen_unit() / 50, gen_unit() / 10,
               gen_unit() / 20, gen_unit() / 5, gen_unit() / 50, gen_unit() / 10, gen_unit() / 50);
        break;
    case 7:
        gen_pf(o, "Connected all %s\n", gen_below(2) ? "rings" : "trees");
        break;
    case 8:
        gen_pf(o, "threadThresholds 8/8/64 | %d/8/64 | 512 | 512\n", 8 * r->c->gpus);
        break;
    default:
        gen_pf(o, "%d coll channels, %d collnet channels, 0 nvls channels, %d p2p channels, %d p2p channels per peer\n",
               32, 0, 32, r->c->gpus > 8 ? 4 : 2);
        break;
    }
}

static void gen_line_info(struct gen_out *o, struct gen_run *r)
{
    gen_nemo_i(o, r);
    switch (gen_below(9)) {
    case 0: gen_pf(o, "Async finalization time took %.3f s\n", 0.001 + gen_unit() / 100); break;
    case 1: gen_puts(o, "Setting up ModelTransform for stage: TrainerFn.FITTING\n"); break;
    case 2: gen_puts(o, "Found model_transform attribute on pl_module\n"); break;
    case 3:
        gen_pf(o, "Set model_transform to: <function _call_counter.<locals>.wrapper at 0x%llx>\n",
               (unsigned long long)gen_ptr());
        break;
    case 4: {
        int dp = r->c->gpus / (r->c->tp * r->c->pp * r->c->cp);
        gen_pf(o, "num_microbatches_calculator: ConstantNumMicroBatchesCalculator with %d microbatches\n",
               r->c->gbs / (r->c->mbs * (dp > 0 ? dp : 1)));
        break;
    }
    case 5:
        gen_pf(o, "Using FlashAttention (FA2) backend for dot product attention (rank %d)\n", gen_pick_rank(r));
        break;
    case 6:
        gen_pf(o, "Enabling MCore FSDP: False, TP communication overlap: True (rank %d)\n", gen_pick_rank(r));
        break;
    case 7:
        gen_pf(o, "Loaded %d samples from the mock dataset index in %.3f seconds\n", r->c->gbs * 50, gen_unit());
        break;
    default:
        gen_pf(o, "Timer 'forward-backward' (rank %d): %.3f ms\n", gen_pick_rank(r),
               1000 * r->c->step_s * (0.9 + gen_unit() / 5));
        break;
    }
}

static void gen_line_warn(struct gen_out *o, struct gen_run *r)
{
    gen_nemo_w(o, r);
    switch (gen_below(4)) {
    case 0:
        gen_puts(o, "/usr/local/lib/python3.12/dist-packages/megatron/core/tensor_parallel/layers.py:606: UserWarning: "
                    "async_grad_allreduce is deprecated, not in use anymore and will be fully removed with 0.10.0. "
                    "Please use allreduce_dgrad instead.\n      warnings.warn(\n    \n");
        break;
    case 1:
        gen_puts(o, "Could not copy Trainer's 'max_steps' to LR scheduler's 'max_steps'. If you are not using an LR "
                    "scheduler, this warning can safely be ignored.\n");
        break;
    case 2:
        gen_pf(o, "/usr/local/lib/python3.12/dist-packages/torch/autograd/graph.py:825: UserWarning: c10d::broadcast_: "
                  "an autograd kernel was not registered to the Autograd key(s) but we are trying to backprop through it. "
                  "(Triggered internally at /opt/pytorch/pytorch/torch/csrc/autograd/autograd_not_implemented_fallback.cpp:%d.)\n"
                  "      return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n    \n",
               60 + (int)gen_below(10));
        break;
    default:
        gen_puts(o, "The number of process groups created is large; consider NCCL_COMM_BLOCKING=0 to speed up "
                    "initialization.\n");
        break;
    }
}

static void gen_line_pywarn(struct gen_out *o, struct gen_run *r)
{
    (void)r;
    switch (gen_below(3)) {
    case 0:
        gen_puts(o, "/usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py:83: FutureWarning: "
                    "`torch.distributed._all_gather_base` is a private function and will be deprecated. Please use "
                    "`torch.distributed.all_gather_into_tensor` instead.\n  return func(*args, **kwargs)\n");
        break;
    case 1:
        gen_puts(o, "/usr/local/lib/python3.12/dist-packages/transformer_engine/pytorch/module/base.py:631: UserWarning: "
                    "To guarantee overlapping TP and SP collectives with the backwardGEMMs, set environment variable "
                    "CUDA_DEVICE_MAX_CONNECTIONS = 1\n  warnings.warn(\n");
        break;
    default:
        gen_puts(o, "/usr/local/lib/python3.12/dist-packages/torch/utils/checkpoint.py:87: UserWarning: None of the "
                    "inputs have requires_grad=True. Gradients will be None\n  warnings.warn(\n");
        break;
    }
}

static void gen_line_torch(struct gen_out *o, struct gen_run *r)
{
    char st[32];
    int rank = gen_pick_rank(r);
    gen_torchstamp(r, st, sizeof st);
    gen_pf(o, "[rank%d]:[W%s ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank %d]  using GPU %d to perform "
              "barrier as devices used by this process are currently unknown. This can potentially cause a hang if "
              "this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a particular "
              "device, or call init_process_group() with a device_id.\n",
           rank, st, rank, rank % 8);
}

/* A tqdm bar redrawn with \r, newline only at the end. */
static void gen_bar(struct gen_out *o, struct gen_run *r)
{
    static const char *const descs[] = {"Loading distributed checkpoint", "Building mock dataset index",
                                        "Fetching 9 files", "Materializing param buffers"};
    const char *d = descs[gen_below(4)];
    int n = 4 + (int)gen_below(28);
    double rate = 0.5 + gen_unit() * 20;
    for (int i = 0; i <= n; i++) {
        int pct = i * 100 / n, fill = i * 10 / n, el = (int)(i / rate), left = (int)((n - i) / rate);
        gen_pf(o, "\r%s: %3d%%|", d, pct);
        for (int b = 0; b < 10; b++) gen_puts(o, b < fill ? "\xe2\x96\x88" : " ");
        if (i == 0)
            gen_pf(o, "| %d/%d [00:00<?, ?it/s]", i, n);
        else
            gen_pf(o, "| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s]", i, n, el / 60, el % 60, left / 60, left % 60,
                   rate * (0.9 + gen_unit() / 5));
    }
    gen_puts(o, "\n");
    r->clock += n / rate;
}

static void gen_noise_line(struct gen_out *o, struct gen_run *r, int init_heavy)
{
    unsigned k = gen_below(1000);
    if (init_heavy) {
        if (k < 450) gen_line_ncclinit(o, r);
        else if (k < 850) gen_line_coll(o, r);
        else if (k < 930) gen_line_info(o, r);
        else if (k < 960) gen_line_warn(o, r);
        else if (k < 985) gen_line_pywarn(o, r);
        else if (k < 997) gen_line_torch(o, r);
        else gen_bar(o, r);
        return;
    }
    if (k < 760) gen_line_coll(o, r);
    else if (k < 860) gen_line_ncclinit(o, r);
    else if (k < 920) gen_line_info(o, r);
    else if (k < 950) gen_line_warn(o, r);
    else if (k < 980) gen_line_pywarn(o, r);
    else if (k < 997) gen_line_torch(o, r);
    else gen_bar(o, r);
}

static void gen_noise_until(struct gen_out *o, struct gen_run *r, uint64_t target, int init_heavy)
{
    while (o->total < target) gen_noise_line(o, r, init_heavy);
}

/* ---------------------------------------------------------------- log sections */

static void gen_preamble(struct gen_out *o, struct gen_run *r, const char *exp)
{
    const struct gen_cfg *c = r->c;
    int shown = gen_ranks_shown(r);
    int dp = c->gpus / (c->tp * c->pp * c->cp);
    if (dp < 1) dp = 1;

    for (int i = 0; i < shown; i++)
        gen_puts(o, "WARNING: Logging before flag parsing goes to stderr.\n");
    gen_nemo_i(o, r);
    gen_puts(o, "Experiments will be logged at /nemo_run/code/nemo_experiments/default\n");
    gen_nemo_w(o, r);
    gen_puts(o, "\"update_logger_directory\" is True. Overwriting tensorboard logger \"save_dir\" to "
                "/nemo_run/code/nemo_experiments/tb_logs\n");
    gen_nemo_w(o, r);
    gen_puts(o, "The Trainer already contains a ModelCheckpoint callback. This will be overwritten.\n");
    gen_puts(o, "GPU available: True (cuda), used: True\nTPU available: False, using: 0 TPU cores\n"
                "HPU available: False, using: 0 HPUs\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has data parallel group : ");
    gen_ranklist(o, 0, c->tp * c->pp * c->cp, dp < 32 ? dp : 32);
    gen_puts(o, "\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has combined group of data parallel and context parallel : ");
    gen_ranklist(o, 0, c->tp, dp * c->cp < 32 ? dp * c->cp : 32);
    gen_puts(o, "\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Ranks 0 has data parallel rank: 0\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has context parallel group: ");
    gen_ranklist(o, 0, c->tp, c->cp);
    gen_puts(o, "\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Ranks 0 has context parallel rank: 0\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has model parallel group: ");
    gen_ranklist(o, 0, 1, c->tp * c->pp < 64 ? c->tp * c->pp : 64);
    gen_puts(o, "\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has tensor model parallel group: ");
    gen_ranklist(o, 0, 1, c->tp);
    gen_puts(o, "\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has tensor model parallel rank: 0\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has pipeline model parallel group: ");
    gen_ranklist(o, 0, c->gpus / c->pp, c->pp);
    gen_puts(o, "\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has embedding group: ");
    gen_ranklist(o, 0, c->gpus / c->pp * (c->pp - 1), c->pp > 1 ? 2 : 1);
    gen_puts(o, "\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has pipeline model parallel rank 0\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Rank 0 has embedding rank: 0\n");
    r->clock += 2.5;
    for (int i = 0; i < shown; i++)
        gen_pf(o, "Initializing distributed: GLOBAL_RANK: %d, MEMBER: %d/%d\n", i, i + 1, c->gpus);
    gen_puts(o, "----------------------------------------------------------------------------------------------------\n");
    gen_pf(o, "distributed_backend=nccl\nAll distributed processes registered. Starting with %d processes\n", c->gpus);
    gen_puts(o, "----------------------------------------------------------------------------------------------------\n\n");
    gen_nccl_prefix(o, r, 0);
    gen_pf(o, "Bootstrap : Using ib0:10.%d.%d.%d<0>\n", (int)gen_below(250), (int)gen_below(250), (int)gen_below(250));
    gen_nccl_prefix(o, r, 0);
    gen_puts(o, "cudaDriverVersion 12080\n");
    gen_nccl_prefix(o, r, 0);
    gen_puts(o, "NCCL version 2.25.1+cuda12.8\n");
    for (int i = 0; i < shown; i++) {
        gen_nccl_prefix(o, r, i);
        gen_puts(o, "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB "
                    "[5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB ib0:10.0.0.1<0>\n");
        gen_nccl_prefix(o, r, i);
        gen_puts(o, "Using network IB\n");
        gen_nccl_prefix(o, r, i);
        gen_pf(o, "Setting affinity for GPU %d to ffff,ffffffff,00000000,0000ffff,ffffffff\n", i % 8);
    }
    gen_nccl_prefix(o, r, 0);
    gen_pf(o, "comm 0x%llx rank 0 nRanks %d nNodes %d localRanks 8 localRank 0 MNNVL 0\n",
           (unsigned long long)r->comm[0], c->gpus, r->nodes);
    gen_nccl_prefix(o, r, 0);
    gen_puts(o, "Channel 00/32 :    0   1   2   3   4   5   6   7\n");
    gen_nccl_prefix(o, r, 0);
    gen_puts(o, "P2P Chunksize set to 131072\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Padded vocab_size: %d, original vocab_size: %d, dummy tokens: 0.\n",
           c->recipe[0] == 'l' ? 128256 : 256000, c->recipe[0] == 'l' ? 128256 : 256000);
    gen_nemo_i(o, r);
    gen_pf(o, "Copying Trainer's 'max_steps' (%d) to LR scheduler's 'max_steps'.\n", 50);
    gen_pf(o, "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]\n");
    gen_nemo_i(o, r);
    gen_pf(o, " > number of parameters on (tensor, pipeline) model parallel rank (0 ,0): %.0f\n",
           c->params_b * 1e9 / (c->tp * c->pp));
    gen_nemo_i(o, r);
    gen_puts(o, "Setting up optimizers\n");
    gen_nemo_i(o, r);
    gen_pf(o, "Optimizer config = OptimizerConfig(optimizer='adam', lr=0.0003, min_lr=None, decoupled_lr=None, "
              "decoupled_min_lr=None, weight_decay=0.1, fp16=False, bf16=True, params_dtype=torch.float32, "
              "use_precision_aware_optimizer=False, main_grads_dtype=torch.float32, main_params_dtype=torch.float32, "
              "exp_avg_dtype=torch.float32, exp_avg_sq_dtype=torch.float32, loss_scale=None, initial_loss_scale=4294967296, "
              "min_loss_scale=1.0, loss_scale_window=1000, hysteresis=2, adam_beta1=0.9, adam_beta2=0.95, adam_eps=1e-05, "
              "sgd_momentum=0.9, use_distributed_optimizer=True, overlap_param_gather_with_optimizer_step=False, "
              "clip_grad=1.0, log_num_zeros_in_grad=False, barrier_with_L1_time=False, timers=None, config_logger_dir='')\n");
    gen_pf(o, "\n  | Name   | Type     | Params | Mode \n--------------------------------------------\n"
              "0 | module | GPTModel | %.1f B  | train\n--------------------------------------------\n"
              "%.1f B     Trainable params\n0         Non-trainable params\n%.1f B     Total params\n"
              "%.3f Total estimated model params size (MB)\n%d         Modules in train mode\n0         Modules in eval mode\n",
           c->params_b / (c->tp * c->pp), c->params_b / (c->tp * c->pp), c->params_b / (c->tp * c->pp),
           c->params_b * 4000.0 / (c->tp * c->pp), 300 + c->layers * 9);
    gen_nemo_w(o, r);
    gen_pf(o, "Recipe %s: MockDataModule uses synthetic data; throughput numbers are for benchmarking only.\n", exp);
    gen_bar(o, r);
    r->clock += 20;
}

/* "Whole floats print as ints, others with 4 significant digits". */
static void gen_num(char *dst, size_t n, double v)
{
    if (v == (double)(long long)v && v < 1e15) snprintf(dst, n, "%lld", (long long)v);
    else snprintf(dst, n, "%.4g", v);
}

static void gen_step(struct gen_out *o, struct gen_run *r, int i, int steps, double *loss)
{
    const struct gen_cfg *c = r->c;
    double t = c->step_s * (1 + 0.004 * gen_gauss());
    if (i == 0) t *= 3.0 + gen_unit() * 2;
    else if (i < 4) t *= 1.0 + 0.15 / i;
    double lr = (c->recipe[0] == 'l' ? 3e-4 : 1.8e-4) * (i + 1) / 2001.0;
    *loss -= 0.02 + 0.01 * gen_unit();
    if (*loss < 1) *loss = 1;
    double peak = 6.4e10 + (double)gen_below(800) * 1e7 + (double)gen_below(9999999), alloc = peak * (0.55 + 0.05 * gen_unit());
    char lrs[32], ls[32], ts[32], tf[64] = "";
    snprintf(lrs, sizeof lrs, "%.4g", lr);
    gen_num(ls, sizeof ls, *loss);
    gen_num(ts, sizeof ts, t);
    if (r->tflops_field) {
        char v[32];
        gen_num(v, sizeof v, (double)c->gbs * 6 * c->params_b * 1e9 * c->seq / t / c->gpus / 1e12);
        snprintf(tf, sizeof tf, " | TFLOPS_per_GPU: %s", v);
    }
    gen_pf(o, "Training epoch 0, iteration %d/%d | lr: %s | global_batch_size: %d | global_step: %d | "
              "peak_memory_usage: %.0f | memory_allocated: %.0f | reduced_train_loss: %s | "
              "train_step_timing in s: %s%s | consumed_samples: %lld\n",
           i, steps - 1, lrs, c->gbs, i, peak, alloc, ls, ts, tf, (long long)(i + 1) * c->gbs);
    r->clock += t;
}

static void gen_epilogue(struct gen_out *o, struct gen_run *r, int steps)
{
    char st[32];
    gen_nemo_i(o, r);
    gen_pf(o, "Async finalization time took %.3f s\n", 0.001 + gen_unit() / 100);
    gen_pf(o, "`Trainer.fit` stopped: `max_steps=%d` reached.\n", steps);
    int shown = gen_ranks_shown(r) < 8 ? gen_ranks_shown(r) : 8;
    for (int i = 0; i < shown; i++) {
        gen_nccl_prefix(o, r, i);
        gen_pf(o, "comm 0x%llx rank %d nranks %d cudaDev %d busId %x000 - Destroy COMPLETE\n",
               (unsigned long long)r->comm[0], i, r->c->gpus, i, 0x18 + i * 0x20);
    }
    r->clock += 3;
    for (int i = 0; i < shown; i++) {
        gen_torchstamp(r, st, sizeof st);
        gen_pf(o, "[rank%d]:[W%s ProcessGroupNCCL.cpp:1496] Warning: WARNING: destroy_process_group() was not called "
                  "before program exit, which can leak resources. For more info, please see "
                  "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())\n", i, st);
    }
}

/* ---------------------------------------------------------------- files */

static void gen_write_log(const char *path, struct gen_run *r, const char *exp, uint64_t target, int steps,
                          struct gen_out *o)
{
    gen_open(o, path);
    gen_preamble(o, r, exp);
    /* estimated fixed parts still to come */
    uint64_t step_est = (uint64_t)steps * (r->tflops_field ? 310 : 285);
    uint64_t tail_noise = 256 + gen_below(1792);
    uint64_t epi_est = 700 + 300 * (uint64_t)(gen_ranks_shown(r) < 8 ? gen_ranks_shown(r) : 8);
    uint64_t fixed = o->total + step_est + tail_noise + epi_est;
    uint64_t noise = target > fixed ? target - fixed : 0;
    /* 15 % of the noise is communicator setup before step 0, the rest between steps */
    uint64_t pre = noise * 15 / 100;
    gen_noise_until(o, r, o->total + pre, 1);
    uint64_t between = noise - pre;
    double w[1024], wsum = 0;
    int ns = steps < 1024 ? steps : 1024;
    for (int i = 0; i < ns; i++) { w[i] = 0.7 + 0.6 * gen_unit(); wsum += w[i]; }
    uint64_t base = o->total, stepbytes = 0;
    double acc = 0;
    double loss = (r->c->recipe[0] == 'l' ? 12.95 : 13.8) + 0.05 * gen_gauss();
    for (int i = 0; i < steps; i++) {
        if (i < ns) acc += w[i];
        /* cumulative noise targets; step lines are accounted separately */
        gen_noise_until(o, r, base + stepbytes + (uint64_t)((double)between * (acc / wsum)), 0);
        uint64_t before = o->total;
        gen_step(o, r, i, steps, &loss);
        stepbytes += o->total - before;
    }
    gen_noise_until(o, r, o->total + tail_noise, 0);
    gen_epilogue(o, r, steps);
    gen_close(o);
}

/* --lean: a small log (a few lines of preamble, the step lines, the end line). */
static void gen_write_small_log(const char *path, struct gen_run *r, int steps, struct gen_out *o)
{
    gen_open(o, path);
    gen_puts(o, "GPU available: True (cuda), used: True\nTPU available: False, using: 0 TPU cores\n");
    gen_nemo_i(o, r);
    gen_puts(o, "Experiments will be logged at /nemo_run/code/nemo_experiments/default\n");
    double loss = (r->c->recipe[0] == 'l' ? 12.95 : 13.8) + 0.05 * gen_gauss();
    for (int i = 0; i < steps; i++)
        gen_step(o, r, i, steps, &loss);
    gen_pf(o, "`Trainer.fit` stopped: `max_steps=%d` reached.\n", steps);
    gen_close(o);
}

static void gen_write_sbatch_out(const char *path, struct gen_run *r, struct gen_out *o)
{
    gen_open(o, path);
    gen_pf(o, "Attempting to set vboost on %d node(s)\nvboost slider set to 1\n", r->nodes);
    gen_pf(o, "pyxis: importing docker image: /lustre/fsw/stage/nvidia+nemo+25.02.01.sqsh\n");
    gen_pf(o, "pyxis: imported docker image: /lustre/fsw/stage/nvidia+nemo+25.02.01.sqsh\n");
    gen_pf(o, "srun: Step created for StepId=%ld.1\n", r->jobid);
    gen_close(o);
}

static void gen_write_sbatch_sh(const char *path, struct gen_run *r, const char *exp, const char *jobdir,
                                struct gen_out *o)
{
    const struct gen_cfg *c = r->c;
    gen_open(o, path);
    gen_pf(o, "#!/bin/bash\n#SBATCH --account=benchacct\n#SBATCH --partition=batch\n#SBATCH --job-name=%s\n"
              "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=8\n#SBATCH --exclusive\n#SBATCH --mem=0\n"
              "#SBATCH --open-mode=append\n#SBATCH --time=00:30:00\n#SBATCH --output=%s/sbatch_%s_%%j.out\n\n",
           exp, r->nodes, jobdir, exp);
    gen_pf(o, "export TORCH_NCCL_AVOID_RECORD_STREAMS=1\nexport TOKENIZERS_PARALLELISM=False\nexport NCCL_NVLS_ENABLE=0\n"
              "export NVTE_FLASH_ATTN=1\nexport NVTE_FUSED_ATTN=1\nexport NEMO_LOG_MEMORY_USAGE=1\n"
              "export PYTHONUNBUFFERED=1\nexport SLURM_UNBUFFEREDIO=1\n%s%s\n",
           c->tp > 1 || c->cp > 1 ? "export CUDA_DEVICE_MAX_CONNECTIONS=1\n" : "",
           c->pp > 1 ? "export NCCL_P2P_NET_CHUNKSIZE=2097152\n" : "");
    gen_pf(o, "srun --ntasks=%d bash -c 'sudo nvidia-smi boost-slider --vboost 1'\n\n", r->nodes);
    gen_pf(o, "srun --output %s/log-%s_%%j_${SLURM_RESTART_COUNT:-0}.out --container-image "
              "/lustre/fsw/stage/nvidia+nemo+25.02.01.sqsh --container-mounts /lustre/fsw/stage:/lustre/fsw/stage,%s:/nemo_run "
              "--container-workdir /nemo_run/code --wait=60 --kill-on-bad-exit=1 --mpi=pmix "
              "python -m nemo_run.core.runners.fdl_runner -n %s /nemo_run/configs/%s_fn_or_script\n",
           jobdir, exp, jobdir, exp, exp);
    gen_close(o);
}

/* ---------------------------------------------------------------- main */

struct gen_args {
    const char *out;
    long runs;
    uint64_t size;
    uint64_t seed;
    int steps;
    int jobs;
    int lean;
};

static void gen_run_one(const struct gen_args *a, long idx, struct gen_out *o)
{
    const struct gen_cfg *c = &gen_cfgs[idx % gen_ncfg];
    struct gen_run r;
    memset(&r, 0, sizeof r);
    gen_rng = a->seed * 0x100000001b3ULL + (uint64_t)idx * 0x9e3779b97f4a7c15ULL + 1;
    for (int i = 0; i < 4; i++) gen_rand();
    r.c = c;
    r.ts = 1744380000L + idx * 1800L + (long)gen_below(900);
    r.ts_cached = -1;
    r.jobid = 1400000L + idx * 3 + (long)gen_below(3);
    r.nodes = c->gpus / 8 ? c->gpus / 8 : 1;
    r.host_base = 1 + (int)gen_below(2000);
    r.pid_base = 1000 + (int)gen_below(90000);
    for (int i = 0; i < 4; i++) r.comm[i] = 0x55000000000ULL | (gen_rand() & 0xffffffff0ULL);
    r.stream = gen_ptr();
    r.opcount = 1;
    r.tflops_field = gen_below(4) == 0;

    char exp[128], p1[4096], p2[4096], p3[4096], file[4608];
    gen_path(exp, sizeof exp, "pretrain_%s_%s_%s_%d", c->recipe, c->size, c->dtype, c->gpus);
    gen_path(p1, sizeof p1, "%s/experiments/%s", a->out, exp);
    gen_mkdir(p1);
    gen_path(p2, sizeof p2, "%s/%s_%ld", p1, exp, r.ts);
    gen_mkdir(p2);
    if (a->lean) { /* the log alone, in its own timestamped folder */
        gen_path(file, sizeof file, "%s/log-%s_%ld_0.out", p2, exp, r.jobid);
        gen_write_small_log(file, &r, a->steps, o);
        return;
    }
    gen_path(p3, sizeof p3, "%s/%s", p2, exp);
    gen_mkdir(p3);

    double f = 0.9 + 0.2 * gen_unit();
    uint64_t target = (uint64_t)((double)a->size * f);
    gen_path(file, sizeof file, "%s/log-%s_%ld_0.out", p3, exp, r.jobid);
    gen_write_log(file, &r, exp, target, a->steps, o);
    gen_path(file, sizeof file, "%s/sbatch_%s_%ld.out", p3, exp, r.jobid);
    gen_write_sbatch_out(file, &r, o);
    /* the script names the job folder as it was on the cluster, not where this tree is written */
    gen_path(p1, sizeof p1, "/lustre/fsw/stage/experiments/%s/%s_%ld/%s", exp, exp, r.ts, exp);
    gen_path(file, sizeof file, "%s/sbatch.sh", p3);
    gen_write_sbatch_sh(file, &r, exp, p1, o);
}

static void gen_usage(FILE *f)
{
    fprintf(f, "usage: gencorpus --out DIR --runs N --size BYTES [--seed S] [--steps 50] [--jobs J] [--lean]\n"
               "Writes N synthetic NeMo runs under DIR/experiments; each log is BYTES +-10%%.\n"
               "--lean: only a small log (steps, no chatter; BYTES ignored) in experiments/<exp>/<exp>_<ts>/.\n"
               "BYTES accepts K/M/G suffixes (powers of 1000).\n");
}

static uint64_t gen_parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) return 0;
    switch (*end) {
    case 'k': case 'K': v *= 1e3; end++; break;
    case 'm': case 'M': v *= 1e6; end++; break;
    case 'g': case 'G': v *= 1e9; end++; break;
    default: break;
    }
    if (*end) return 0;
    return (uint64_t)v;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},   {"runs", required_argument, NULL, 'n'},
        {"size", required_argument, NULL, 's'},  {"seed", required_argument, NULL, 'S'},
        {"steps", required_argument, NULL, 't'}, {"jobs", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {"lean", no_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    struct gen_args a = {NULL, 0, 0, 1, 50, 0, 0};
    int ch;
    while ((ch = getopt_long(argc, argv, "o:n:s:S:t:j:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'o': a.out = optarg; break;
        case 'n': a.runs = strtol(optarg, NULL, 10); break;
        case 's': a.size = gen_parse_size(optarg); break;
        case 'S': a.seed = strtoull(optarg, NULL, 10); break;
        case 't': a.steps = atoi(optarg); break;
        case 'j': a.jobs = atoi(optarg); break;
        case 'L': a.lean = 1; break;
        case 'h': gen_usage(stdout); return 0;
        default: gen_usage(stderr); return 2;
        }
    }
    if (!a.out || a.runs <= 0 || a.size == 0 || a.steps < 1 || a.steps > 100000 || optind != argc) {
        gen_usage(stderr);
        return 2;
    }
    if (a.jobs <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        a.jobs = n > 0 ? (int)n : 1;
    }
    if (a.jobs > a.runs) a.jobs = (int)a.runs;
    gen_initcfgs();

    char top[4096];
    gen_mkdir(a.out);
    gen_path(top, sizeof top, "%s/experiments", a.out);
    gen_mkdir(top);

    for (int j = 0; j < a.jobs; j++) {
        pid_t pid = a.jobs == 1 ? 0 : fork();
        if (pid < 0) gen_die("fork", NULL);
        if (pid == 0) {
            struct gen_out o = {-1, NULL, 0, 1u << 20, 0, NULL};
            o.buf = malloc(o.cap);
            if (!o.buf) { fprintf(stderr, "gencorpus: out of memory\n"); _exit(1); }
            for (long i = j; i < a.runs; i += a.jobs) gen_run_one(&a, i, &o);
            free(o.buf);
            if (a.jobs == 1) return 0;
            _exit(0);
        }
    }
    int rc = 0, st;
    while (wait(&st) > 0)
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = 1;
    return rc;
}
