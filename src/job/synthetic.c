/* synthetic.c - the synthetic workload (nemoperf-synth): a stand-in for one NeMo training task.
 *
 * Run under srun (one task per "GPU") by `launch WORKLOAD=synthetic`.  Each rank
 * burns a calibrated, bounded amount of real CPU per step; rank 0 prints what a
 * NeMo 2.0 job prints (preamble, ProgressPrinter step lines, checkpoint save and
 * load lines, nsys and NCCL-trace markers), so launch -> Slurm -> parse can be
 * proven on a cluster before any GPU hour is spent.  No MPI: ranks meet only
 * through the checkpoint directory.  With --log-format automodel, rank 0 prints
 * instead what NeMo AutoModel's benchmark.py prints (logger lines on stderr,
 * print()s and timer blocks on stdout), one task per node standing for
 * --nproc-per-node GPUs, as torchrun's processes would.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/job/synthetic.h"
#include "nemoperf/job/dfm_automodel_log.h"
#include "nemoperf/job/mbridge_log.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/error.h"

#define SYNTH_CPU_SHARE 0.5       /* at most this fraction of the node's cores, all ranks together */
#define SYNTH_CALIBRATE_CPU_S 0.02 /* CPU time spent calibrating, per rank */
#define SYNTH_CKPT_WAIT_S 60.0    /* rank 0 waits this long for the other ranks' shards */
#define SYNTH_SHARD_BYTES 8192    /* payload of one checkpoint shard */
#define SYNTH_SHARD_MAX (1u << 20) /* larger files are not ours */
#define SYNTH_MAGIC "NPSYNTH-DISTCP"
#define SYNTH_FORMAT "nemoperf-synth-distcp"
#define SYNTH_PROFILE_MAX_STEPS 100000 /* step times kept in a profile file */
#define SYNTH_MAX_INT (1L << 20)  /* upper bound of the parallelism/batch options */
#define SYNTH_PATH (PATH_MAX + 128) /* a folder path (<= PATH_MAX) plus a file name */

/* ---- options: one table drives getopt_long, parsing and --help ---------- */

enum {
    SYNTH_O_RECIPE = 256, SYNTH_O_MODEL_SIZE, SYNTH_O_DTYPE, SYNTH_O_GPUS, SYNTH_O_TP, SYNTH_O_PP,
    SYNTH_O_CP, SYNTH_O_EP, SYNTH_O_DP, SYNTH_O_VP, SYNTH_O_MBS, SYNTH_O_GBS, SYNTH_O_GA,
    SYNTH_O_LAYERS, SYNTH_O_SEQ_LEN, SYNTH_O_HIDDEN, SYNTH_O_MAX_STEPS, SYNTH_O_STEP_SECONDS,
    SYNTH_O_PROFILE_START, SYNTH_O_PROFILE_STOP, SYNTH_O_NCCLTRACE, SYNTH_O_CKPT_SAVE,
    SYNTH_O_CKPT_LOAD, SYNTH_O_SEED, SYNTH_O_LOG_FORMAT, SYNTH_O_NPROC, SYNTH_O_WARMUP, SYNTH_O_STEP_TFLOPS,
    SYNTH_O_PEAK_TFLOPS
};

struct synth_config {
    const char *recipe, *model_size, *dtype, *ckpt_save, *ckpt_load; /* borrowed from argv */
    long gpus, tp, pp, cp, ep, dp, vp, mbs, gbs, ga, layers, seq_len, hidden; /* 0 = not given */
    long max_steps, profile_start, profile_stop, seed; /* profile_* -1 = not given */
    double step_seconds;
    int nccltrace;
    int gpus_from_env; /* gpus came from SLURM_NTASKS, not --gpus */
    int automodel;     /* --log-format automodel */
    int mbridge;       /* --log-format mbridge */
    int dfm_am;        /* --log-format dfm-automodel */
    long nproc;        /* GPUs each task stands for (torchrun --nproc-per-node) */
    long warmup_steps; /* AutoModel: iterations left out of the summary's average */
    double step_tflops, peak_tflops; /* model TFLOPs of one global step (AutoModel, MB), AutoModel's GPU peak */
};

#define SYNTH_NOFIELD ((size_t)-1)
#define SYNTH_F(x) offsetof(struct synth_config, x)

struct synth_option {
    const char *name;
    int has_arg;
    int id;
    const char *metavar;
    size_t field;   /* integer options: the long it fills; SYNTH_NOFIELD otherwise */
    long min, max;  /* integer options: accepted range */
    const char *help;
};

static const struct synth_option synth_options[] = {
    {"recipe", required_argument, SYNTH_O_RECIPE, "NAME", SYNTH_NOFIELD, 0, 0,
     "recipe name shown in the log (default: synthetic)"},
    {"model-size", required_argument, SYNTH_O_MODEL_SIZE, "S", SYNTH_NOFIELD, 0, 0,
     "model size, e.g. 8b, 70b, 8x7b; sizes the memory figures (default: 8b)"},
    {"dtype", required_argument, SYNTH_O_DTYPE, "bf16|fp8", SYNTH_NOFIELD, 0, 0,
     "training precision (default: bf16)"},
    {"gpus", required_argument, SYNTH_O_GPUS, "N", SYNTH_F(gpus), 1, SYNTH_MAX_INT,
     "GPUs of the job; must equal SLURM_NTASKS under Slurm (default: SLURM_NTASKS)"},
    {"tp", required_argument, SYNTH_O_TP, "N", SYNTH_F(tp), 1, SYNTH_MAX_INT,
     "tensor parallel size (default: 1)"},
    {"pp", required_argument, SYNTH_O_PP, "N", SYNTH_F(pp), 1, SYNTH_MAX_INT,
     "pipeline parallel size (default: 1)"},
    {"cp", required_argument, SYNTH_O_CP, "N", SYNTH_F(cp), 1, SYNTH_MAX_INT,
     "context parallel size (default: 1)"},
    {"ep", required_argument, SYNTH_O_EP, "N", SYNTH_F(ep), 1, SYNTH_MAX_INT,
     "expert parallel size; must divide GPUS (default: 1)"},
    {"dp", required_argument, SYNTH_O_DP, "N", SYNTH_F(dp), 1, SYNTH_MAX_INT,
     "data parallel size; TP*PP*CP*DP must equal GPUS (default: GPUS/(TP*PP*CP))"},
    {"vp", required_argument, SYNTH_O_VP, "N", SYNTH_F(vp), 1, SYNTH_MAX_INT,
     "virtual pipeline stages; above 1 needs PP > 1 (default: none)"},
    {"mbs", required_argument, SYNTH_O_MBS, "N", SYNTH_F(mbs), 1, SYNTH_MAX_INT,
     "micro batch size (default: 1)"},
    {"gbs", required_argument, SYNTH_O_GBS, "N", SYNTH_F(gbs), 1, SYNTH_MAX_INT,
     "global batch size; must equal MBS*DP*GA (default: MBS*DP*GA)"},
    {"ga", required_argument, SYNTH_O_GA, "N", SYNTH_F(ga), 1, SYNTH_MAX_INT,
     "gradient accumulation steps (default: GBS/(MBS*DP), else 1)"},
    {"layers", required_argument, SYNTH_O_LAYERS, "N", SYNTH_F(layers), 1, 100000,
     "transformer layers; shapes the per-step work (default: 32)"},
    {"seq-len", required_argument, SYNTH_O_SEQ_LEN, "N", SYNTH_F(seq_len), 1, 1L << 24,
     "sequence length (default: 8192)"},
    {"hidden", required_argument, SYNTH_O_HIDDEN, "N", SYNTH_F(hidden), 1, 1L << 24,
     "hidden size; shapes the per-step work (default: 4096)"},
    {"max-steps", required_argument, SYNTH_O_MAX_STEPS, "N", SYNTH_F(max_steps), 1, 10000000,
     "training steps to run (default: 50)"},
    {"step-seconds", required_argument, SYNTH_O_STEP_SECONDS, "X", SYNTH_NOFIELD, 0, 0,
     "target seconds per step, 0.01..5 (default: 0.1)"},
    {"profile-start", required_argument, SYNTH_O_PROFILE_START, "A", SYNTH_F(profile_start), 0,
     LONG_MAX, "first step of the nsys-like capture range (needs --profile-stop)"},
    {"profile-stop", required_argument, SYNTH_O_PROFILE_STOP, "B", SYNTH_F(profile_stop), 0,
     LONG_MAX, "capture stops before step B; A < B <= max steps (needs --profile-start)"},
    {"nccltrace", no_argument, SYNTH_O_NCCLTRACE, NULL, SYNTH_NOFIELD, 0, 0,
     "print NCCL INFO-like collective trace lines (rank 0)"},
    {"checkpoint-save", required_argument, SYNTH_O_CKPT_SAVE, "DIR", SYNTH_NOFIELD, 0, 0,
     "save a distributed checkpoint into DIR/<name>/ at the end"},
    {"checkpoint-load", required_argument, SYNTH_O_CKPT_LOAD, "DIR", SYNTH_NOFIELD, 0, 0,
     "load the checkpoint DIR (the parent of weights/) at the start"},
    {"seed", required_argument, SYNTH_O_SEED, "N", SYNTH_F(seed), 0, LONG_MAX,
     "seed of the loss noise and the checkpoint data (default: 1234)"},
    {"log-format", required_argument, SYNTH_O_LOG_FORMAT, "nemo|automodel|mbridge|dfm-automodel", SYNTH_NOFIELD,
     0, 0, "what the job prints: NeMo 2.0 lines, AutoModel benchmark.py's, Megatron-Bridge's or DFM's AutoModel "
     "loop (tqdm bar; default: nemo)"},
    {"nproc-per-node", required_argument, SYNTH_O_NPROC, "G", SYNTH_F(nproc), 1, 1024,
     "GPUs each task stands for (one task per node, as torchrun; default: 1)"},
    {"warmup-steps", required_argument, SYNTH_O_WARMUP, "N", SYNTH_F(warmup_steps), 0, 10000000,
     "automodel: warm-up iterations, left out of the average (default: max steps / 3)"},
    {"step-tflops", required_argument, SYNTH_O_STEP_TFLOPS, "X", SYNTH_NOFIELD, 0, 0,
     "model TFLOPs of one global step: automodel prints it as \"TFLOPs/GPU\", mbridge's rank-0 line as "
     "X / step time / GPUs (default: 0)"},
    {"peak-tflops", required_argument, SYNTH_O_PEAK_TFLOPS, "X", SYNTH_NOFIELD, 0, 0,
     "automodel: GPU peak TFLOP/s for the MFU lines (default: 989)"},
    {"help", no_argument, 'h', NULL, SYNTH_NOFIELD, 0, 0, "show this help and exit"},
};

#define SYNTH_NOPTS (sizeof synth_options / sizeof synth_options[0])

/* ---- process-wide state ------------------------------------------------- */

static volatile sig_atomic_t synth_signal;

struct synth_env {
    int rank, world, local_rank, node_id, ranks_on_node;
    int under_slurm;
    char host[256];
    char job[64];  /* "<SLURM_JOB_ID>.<SLURM_STEP_ID>" or "local": ties shards to one run */
};

struct synth_work {
    int n;               /* matrices are n x n */
    int nmat;            /* distinct weight matrices (layers, capped) */
    int local_layers;    /* layers on this pipeline stage */
    uint32_t *w, *act, *tmp;
    double unit_cpu_s;   /* CPU seconds of one n x n matmul, measured */
    double cpu_budget_s; /* CPU seconds per step for this rank */
    long units;          /* matmuls per step */
    int cores, ranks_here;
    uint64_t digest;
};

struct synth_run {
    struct synth_config cfg;
    struct synth_env env;
    struct synth_work work;
    long long mem_allocated, mem_peak;
    uint64_t nccl_opcount;
    double *prof_times; /* step times inside the capture range */
    size_t prof_n;
    int profiling;
    double am_setup_s, am_warm_s, am_timed_s; /* AutoModel summary: measured seconds */
    double dfm_elapsed_s, dfm_loss_sum;       /* DFM AutoModel: the bar's elapsed time, the epoch's losses */
    char dfm_postfix[160];                    /* and the bar's postfix, kept between its refreshes */
};

static volatile uint64_t synth_sink; /* keeps the work observable */

static void synth_on_signal(int sig) { synth_signal = sig; }

/* ---- small utilities ---------------------------------------------------- */

static double synth_now(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t synth_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t synth_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* NeMo's number style: whole floats as integers, others with 4 significant digits. */
static void synth_fmt_num(char *buf, size_t size, double v)
{
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.4g", v);
}

/* "[NeMo I 2025-04-11 21:42:01 nemo_logging:393] " prefix, as NeMo's logger writes it. */
static void synth_vlog(char level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void synth_vlog(char level, const char *fmt, va_list ap)
{
    char date[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    printf("[NeMo %c %s nemo_logging:%d] ", level, date, level == 'I' ? 393 : 405);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
}

static void synth_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void synth_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    synth_vlog('I', fmt, ap);
    va_end(ap);
}

static void synth_logw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void synth_logw(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    synth_vlog('W', fmt, ap);
    va_end(ap);
}

/* Strict decimal integer: digits only (optional leading '-'), no spaces, in range. */
static int synth_parse_long(const char *s, long *out)
{
    if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int synth_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 128)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-+", s[i]))
            return 0;
    return 1;
}

/* mkdir -p; 0 or -1 with errno. */
static int synth_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* Write path atomically: temp file in the same folder, fsync, rename.  0 or -1 with errno. */
static int synth_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return -1;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
fail: {
        int e = errno;
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
}

static int synth_write_json(const char *path, json_t *obj)
{
    char *text = json_dumps(obj, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    size_t len = strlen(text);
    char *withnl = realloc(text, len + 2);
    if (!withnl) {
        free(text);
        errno = ENOMEM;
        return -1;
    }
    withnl[len] = '\n';
    withnl[len + 1] = '\0';
    int rc = synth_write_atomic(path, withnl, len + 1);
    int e = errno;
    free(withnl);
    errno = e;
    return rc;
}

/* Read a whole small file; returns a new buffer (caller frees) or NULL with errno. */
static unsigned char *synth_read_small(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = malloc(SYNTH_SHARD_MAX + 1);
    if (!buf) {
        fclose(f);
        errno = ENOMEM;
        return NULL;
    }
    size_t n = fread(buf, 1, SYNTH_SHARD_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    if (n > SYNTH_SHARD_MAX) {
        free(buf);
        errno = EFBIG;
        return NULL;
    }
    *len = n;
    return buf;
}

/* ---- environment -------------------------------------------------------- */

static enum np_status synth_env_int(const char *name, int min, int *out, int *set)
{
    const char *v = getenv(name);
    *set = 0;
    if (!v || !*v)
        return NP_OK;
    long x;
    if (synth_parse_long(v, &x) != 0 || x < min || x > INT_MAX) {
        np_errorf("environment variable %s='%s' is not an integer >= %d", name, v, min);
        return NP_E_INVALID;
    }
    *out = (int)x;
    *set = 1;
    return NP_OK;
}

/* Tasks on node `node` from a Slurm list such as "8(x2),4"; 0 when unknown. */
static int synth_tasks_on_node(const char *list, int node)
{
    if (!list || !*list)
        return 0;
    const char *p = list;
    long seen = 0;
    int first = 0;
    while (*p) {
        char *end;
        long count = strtol(p, &end, 10);
        if (end == p || count < 1)
            return first;
        long rep = 1;
        p = end;
        if (strncmp(p, "(x", 2) == 0) {
            rep = strtol(p + 2, &end, 10);
            if (end == p + 2 || *end != ')' || rep < 1)
                return first;
            p = end + 1;
        }
        if (!first)
            first = (int)(count > INT_MAX ? INT_MAX : count);
        if (node < seen + rep)
            return (int)(count > INT_MAX ? INT_MAX : count);
        seen += rep;
        if (*p == ',')
            p++;
        else if (*p)
            return first;
    }
    return first;
}

static enum np_status synth_env_read(struct synth_env *env)
{
    int set, rank_set, world_set, local_set;
    enum np_status st;
    memset(env, 0, sizeof *env);
    env->world = 1;
    if ((st = synth_env_int("SLURM_PROCID", 0, &env->rank, &rank_set)) != NP_OK ||
        (st = synth_env_int("SLURM_NTASKS", 1, &env->world, &world_set)) != NP_OK ||
        (st = synth_env_int("SLURM_LOCALID", 0, &env->local_rank, &local_set)) != NP_OK ||
        (st = synth_env_int("SLURM_NODEID", 0, &env->node_id, &set)) != NP_OK)
        return st;
    if (env->rank >= env->world) {
        np_errorf("SLURM_PROCID=%d is not below SLURM_NTASKS=%d", env->rank, env->world);
        return NP_E_INVALID;
    }
    env->under_slurm = world_set;
    if (!local_set)
        env->local_rank = env->rank;

    int per = synth_tasks_on_node(getenv("SLURM_STEP_TASKS_PER_NODE"), env->node_id);
    if (per <= 0)
        per = synth_tasks_on_node(getenv("SLURM_TASKS_PER_NODE"), env->node_id);
    if (per <= 0)
        per = synth_tasks_on_node(getenv("SLURM_NTASKS_PER_NODE"), env->node_id);
    env->ranks_on_node = per > 0 ? per : env->world;

    const char *h = getenv("SLURMD_NODENAME");
    if (h && *h) {
        snprintf(env->host, sizeof env->host, "%s", h);
    } else if (gethostname(env->host, sizeof env->host - 1) != 0) {
        snprintf(env->host, sizeof env->host, "localhost");
    }
    env->host[sizeof env->host - 1] = '\0';
    char *dot = strchr(env->host, '.');
    if (dot && dot != env->host)
        *dot = '\0';

    const char *job = getenv("SLURM_JOB_ID");
    const char *step = getenv("SLURM_STEP_ID");
    if (job && *job)
        snprintf(env->job, sizeof env->job, "%.30s.%.20s", job, step && *step ? step : "0");
    else
        snprintf(env->job, sizeof env->job, "local");
    for (char *c = env->job; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
            *c = '_';
    return NP_OK;
}

/* Processes on this machine running this program (fake multi-node clusters put
 * several "nodes" on one host); 0 when /proc is unavailable. */
static int synth_count_peers(void)
{
    char self[64], comm[64], path[320];
    FILE *f = fopen("/proc/self/comm", "r");
    if (!f)
        return 0;
    int ok = fgets(self, sizeof self, f) != NULL;
    fclose(f);
    if (!ok)
        return 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f) && strcmp(comm, self) == 0)
            n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

static int synth_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- configuration ------------------------------------------------------ */

static void synth_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [OPTION]...\n"
            "Synthetic NeMo 2.0 pre-training task: run one per GPU under srun to prove a\n"
            "cluster's plumbing (srun, nodes, log paths, checkpoint storage) without GPUs.\n"
            "Rank 0 prints NeMo-style log lines on stdout; other ranks print only errors.\n\n"
            "Options:\n",
            np_progname());
    for (size_t i = 0; i < SYNTH_NOPTS; i++) {
        const struct synth_option *o = &synth_options[i];
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->metavar ? " " : "",
                 o->metavar ? o->metavar : "");
        fprintf(out, "  %-24s %s\n", left, o->help);
    }
    fprintf(out,
            "\nEnvironment: SLURM_PROCID, SLURM_NTASKS (rank and world size, default 0 and 1),\n"
            "SLURM_LOCALID, SLURM_NODEID, SLURMD_NODENAME, SLURM_STEP_TASKS_PER_NODE,\n"
            "SLURM_JOB_ID, SLURM_STEP_ID; NEMOPERF_PROFILE_DIR (profile files, default: cwd).\n"
            "Checkpoint name: default--None=0.0000-epoch=0-consumed_samples=<STEPS*GBS>.0\n"
            "Exit status: 0 success, 1 runtime failure, 2 bad option or environment;\n"
            "SIGTERM/SIGINT end the run promptly (the signal is re-raised).\n");
}

static int synth_usage_error(int quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int synth_usage_error(int quiet, const char *fmt, ...)
{
    if (!quiet) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        np_errorf("%s", msg);
        np_errorf("try '%s --help'", np_progname());
    }
    return 2;
}

static const struct synth_option *synth_option_by_id(int id)
{
    for (size_t i = 0; i < SYNTH_NOPTS; i++)
        if (synth_options[i].id == id)
            return &synth_options[i];
    return NULL;
}

/* a*b, saturating at LONG_MAX. */
static long synth_mul(long a, long b)
{
    if (a > 0 && b > LONG_MAX / a)
        return LONG_MAX;
    return a * b;
}

/* Parse argv into cfg.  Returns -1 to go on, else an exit code (0 after --help).
 * Only rank 0 (quiet == 0) prints usage errors, so a 32-rank job says it once. */
static int synth_parse_args(int argc, char **argv, struct synth_config *cfg, int quiet)
{
    static struct option longopts[SYNTH_NOPTS + 1];
    for (size_t i = 0; i < SYNTH_NOPTS; i++) {
        longopts[i].name = synth_options[i].name;
        longopts[i].has_arg = synth_options[i].has_arg;
        longopts[i].flag = NULL;
        longopts[i].val = synth_options[i].id;
    }
    memset(&longopts[SYNTH_NOPTS], 0, sizeof longopts[SYNTH_NOPTS]);

    memset(cfg, 0, sizeof *cfg);
    cfg->recipe = "synthetic";
    cfg->model_size = "8b";
    cfg->dtype = "bf16";
    cfg->max_steps = 50;
    cfg->step_seconds = 0.1;
    cfg->profile_start = cfg->profile_stop = -1;
    cfg->seed = 1234;
    cfg->nproc = 1;
    cfg->warmup_steps = -1;
    cfg->peak_tflops = 989;

    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        const struct synth_option *o = synth_option_by_id(c);
        if (c == '?') {
            if (optopt > 0 && optopt < 256)
                return synth_usage_error(quiet, "unknown option '-%c'", optopt);
            if (optopt >= 256)
                return synth_usage_error(quiet, "option '%s' takes no value", argv[optind - 1]);
            return synth_usage_error(quiet, "unknown or ambiguous option '%s'", argv[optind - 1]);
        }
        if (c == ':')
            return synth_usage_error(quiet, "option '%s' needs a value", argv[optind - 1]);
        if (c == 'h') {
            synth_usage(stdout);
            return 0;
        }
        if (!o)
            return synth_usage_error(quiet, "internal: option %d not in table", c);
        if (o->field != SYNTH_NOFIELD) {
            long v;
            if (synth_parse_long(optarg, &v) != 0 || v < o->min || v > o->max) {
                if (o->max == LONG_MAX)
                    return synth_usage_error(quiet, "--%s '%s': expected an integer >= %ld",
                                             o->name, optarg, o->min);
                return synth_usage_error(quiet, "--%s '%s': expected an integer in %ld..%ld",
                                         o->name, optarg, o->min, o->max);
            }
            *(long *)(void *)((char *)cfg + o->field) = v;
            continue;
        }
        switch (c) {
        case SYNTH_O_RECIPE:
        case SYNTH_O_MODEL_SIZE:
            if (!synth_name_ok(optarg))
                return synth_usage_error(quiet,
                                         "--%s '%s': expected 1-128 characters of A-Z a-z 0-9 . _ - +",
                                         o->name, optarg);
            if (c == SYNTH_O_RECIPE)
                cfg->recipe = optarg;
            else
                cfg->model_size = optarg;
            break;
        case SYNTH_O_DTYPE:
            if (strcmp(optarg, "bf16") != 0 && strcmp(optarg, "fp8") != 0)
                return synth_usage_error(quiet, "--dtype '%s': expected bf16 or fp8", optarg);
            cfg->dtype = optarg;
            break;
        case SYNTH_O_STEP_SECONDS: {
            char *end;
            errno = 0;
            double v = strtod(optarg, &end);
            if (errno || end == optarg || *end || !isfinite(v) || v < 0.01 || v > 5.0 ||
                isspace((unsigned char)optarg[0]))
                return synth_usage_error(quiet, "--step-seconds '%s': expected a number in 0.01..5",
                                         optarg);
            cfg->step_seconds = v;
            break;
        }
        case SYNTH_O_NCCLTRACE: cfg->nccltrace = 1; break;
        case SYNTH_O_LOG_FORMAT:
            if (strcmp(optarg, "nemo") != 0 && strcmp(optarg, "automodel") != 0 && strcmp(optarg, "mbridge") != 0 &&
                strcmp(optarg, "dfm-automodel") != 0)
                return synth_usage_error(quiet, "--log-format '%s': expected nemo, automodel, mbridge or "
                                                "dfm-automodel", optarg);
            cfg->automodel = strcmp(optarg, "automodel") == 0;
            cfg->mbridge = strcmp(optarg, "mbridge") == 0;
            cfg->dfm_am = strcmp(optarg, "dfm-automodel") == 0;
            break;
        case SYNTH_O_STEP_TFLOPS:
        case SYNTH_O_PEAK_TFLOPS: {
            char *end;
            errno = 0;
            double v = strtod(optarg, &end);
            if (errno || end == optarg || *end || !isfinite(v) || v < 0 || v > 1e12 ||
                isspace((unsigned char)optarg[0]) || (c == SYNTH_O_PEAK_TFLOPS && v == 0))
                return synth_usage_error(quiet, "--%s '%s': expected a %s number", o->name, optarg,
                                         c == SYNTH_O_PEAK_TFLOPS ? "positive" : "non-negative");
            if (c == SYNTH_O_STEP_TFLOPS)
                cfg->step_tflops = v;
            else
                cfg->peak_tflops = v;
            break;
        }
        case SYNTH_O_CKPT_SAVE:
        case SYNTH_O_CKPT_LOAD:
            if (!*optarg || strlen(optarg) > PATH_MAX - 256)
                return synth_usage_error(quiet, "--%s '%s': expected a directory path of at most %d bytes",
                                         o->name, optarg, PATH_MAX - 256);
            if (c == SYNTH_O_CKPT_SAVE)
                cfg->ckpt_save = optarg;
            else
                cfg->ckpt_load = optarg;
            break;
        default:
            return synth_usage_error(quiet, "internal: option --%s not handled", o->name);
        }
    }
    if (optind < argc)
        return synth_usage_error(quiet, "unexpected argument '%s'", argv[optind]);
    return -1;
}

/* Fill defaults and check the options against each other and the environment. */
static int synth_config_finish(struct synth_config *cfg, const struct synth_env *env, int quiet)
{
    int dp_given = cfg->dp != 0;
    if (!cfg->tp) cfg->tp = 1;
    if (!cfg->pp) cfg->pp = 1;
    if (!cfg->cp) cfg->cp = 1;
    if (!cfg->ep) cfg->ep = 1;
    if (!cfg->mbs) cfg->mbs = 1;
    if (!cfg->layers) cfg->layers = 32;
    if (!cfg->seq_len) cfg->seq_len = 8192;
    if (!cfg->hidden) cfg->hidden = 4096;
    long model = synth_mul(synth_mul(cfg->tp, cfg->pp), cfg->cp);

    long tasks_gpus = synth_mul(env->world, cfg->nproc);
    if (cfg->gpus && env->under_slurm && cfg->gpus != tasks_gpus)
        return synth_usage_error(quiet, "--gpus %ld does not match SLURM_NTASKS=%d x --nproc-per-node %ld (tasks srun "
                                        "started)",
                                 cfg->gpus, env->world, cfg->nproc);
    if (!cfg->gpus) {
        if (env->under_slurm) {
            cfg->gpus = tasks_gpus;
            cfg->gpus_from_env = 1;
        } else {
            cfg->gpus = dp_given ? synth_mul(model, cfg->dp) : model;
        }
    }
    const char *gname = cfg->gpus_from_env ? "SLURM_NTASKS" : "--gpus";
    if (dp_given) {
        long prod = synth_mul(model, cfg->dp);
        if (prod != cfg->gpus)
            return synth_usage_error(quiet,
                                     "--tp %ld x --pp %ld x --cp %ld x --dp %ld = %ld, but %s is %ld",
                                     cfg->tp, cfg->pp, cfg->cp, cfg->dp, prod, gname, cfg->gpus);
    } else {
        if (cfg->gpus % model != 0)
            return synth_usage_error(quiet, "%s %ld is not a multiple of TP*PP*CP = %ld (--tp %ld --pp %ld --cp %ld)",
                                     gname, cfg->gpus, model, cfg->tp, cfg->pp, cfg->cp);
        cfg->dp = cfg->gpus / model;
    }
    if (cfg->ep > cfg->gpus || cfg->gpus % cfg->ep != 0)
        return synth_usage_error(quiet, "--ep %ld does not divide %s %ld", cfg->ep, gname, cfg->gpus);
    if (cfg->vp > 1 && cfg->pp < 2)
        return synth_usage_error(quiet, "--vp %ld needs --pp above 1 (it is %ld)", cfg->vp, cfg->pp);

    long per_step = synth_mul(cfg->mbs, cfg->dp);
    if (cfg->gbs && cfg->ga) {
        long prod = synth_mul(per_step, cfg->ga);
        if (prod != cfg->gbs)
            return synth_usage_error(quiet, "--gbs %ld does not equal MBS*DP*GA = %ld*%ld*%ld = %ld",
                                     cfg->gbs, cfg->mbs, cfg->dp, cfg->ga, prod);
    } else if (cfg->gbs) {
        if (cfg->gbs % per_step != 0)
            return synth_usage_error(quiet, "--gbs %ld is not a multiple of MBS*DP = %ld*%ld = %ld",
                                     cfg->gbs, cfg->mbs, cfg->dp, per_step);
        cfg->ga = cfg->gbs / per_step;
    } else {
        if (!cfg->ga)
            cfg->ga = 1;
        cfg->gbs = synth_mul(per_step, cfg->ga);
        if (cfg->gbs > SYNTH_MAX_INT)
            return synth_usage_error(quiet, "global batch size MBS*DP*GA = %ld is too large (--mbs, --ga)",
                                     cfg->gbs);
    }

    if (cfg->warmup_steps < 0)
        cfg->warmup_steps = cfg->max_steps / 3;
    if (cfg->automodel && cfg->warmup_steps >= cfg->max_steps)
        return synth_usage_error(quiet, "--warmup-steps %ld must be below --max-steps %ld", cfg->warmup_steps,
                                 cfg->max_steps);
    if (cfg->automodel && (cfg->nccltrace || cfg->profile_start >= 0 || cfg->ckpt_save || cfg->ckpt_load))
        return synth_usage_error(quiet, "--log-format automodel: the AutoModel benchmark has no profile, NCCL trace "
                                        "or checkpoint variants here");
    if ((cfg->profile_start >= 0) != (cfg->profile_stop >= 0))
        return synth_usage_error(quiet, "--profile-start and --profile-stop go together (got only %s %ld)",
                                 cfg->profile_start >= 0 ? "--profile-start" : "--profile-stop",
                                 cfg->profile_start >= 0 ? cfg->profile_start : cfg->profile_stop);
    if (cfg->profile_start >= 0) {
        if (cfg->profile_start >= cfg->profile_stop)
            return synth_usage_error(quiet, "--profile-start %ld must be below --profile-stop %ld",
                                     cfg->profile_start, cfg->profile_stop);
        if (cfg->profile_stop > cfg->max_steps)
            return synth_usage_error(quiet, "--profile-stop %ld is beyond --max-steps %ld",
                                     cfg->profile_stop, cfg->max_steps);
    }
    return -1;
}

/* Parameters from "8b", "70b", "8x7b", "340m"; 8e9 when the text says nothing. */
static double synth_model_params(const char *s)
{
    char *end;
    double mult = 1.0, v = strtod(s, &end);
    if (end == s || !isfinite(v) || v <= 0)
        return 8e9;
    if (*end == 'x' || *end == 'X') {
        mult = v;
        const char *p = end + 1;
        v = strtod(p, &end);
        if (end == p || !isfinite(v) || v <= 0)
            return 8e9;
    }
    double unit = (*end == 'm' || *end == 'M') ? 1e6 : (*end == 't' || *end == 'T') ? 1e12 : 1e9;
    return mult * v * unit;
}

/* GPU memory a real run of this shape would report: bf16 weights and grads,
 * distributed fp32 optimizer state, activations with selective recompute. */
static void synth_memory(struct synth_run *run)
{
    const struct synth_config *c = &run->cfg;
    double per_rank = synth_model_params(c->model_size) / (double)(c->tp * c->pp) / (double)c->ep;
    double states = per_rank * (2.0 + 2.0 + 12.0 / (double)c->dp);
    double local_layers = ceil((double)c->layers / (double)c->pp);
    double act = (double)c->mbs * ((double)c->seq_len / (double)c->cp) * (double)c->hidden *
                 local_layers * 10.0 / (double)c->tp;
    if (strcmp(c->dtype, "fp8") == 0)
        act *= 0.8;
    run->mem_allocated = (long long)states;
    run->mem_peak = (long long)(states + act + 1073741824.0);
}

/* ---- work: calibrated integer matmuls ----------------------------------- */

static void synth_work_unit(struct synth_work *wk, int layer)
{
    int n = wk->n;
    const uint32_t *a = wk->w + (size_t)(layer % wk->nmat) * (size_t)n * (size_t)n;
    memset(wk->tmp, 0, (size_t)n * (size_t)n * sizeof *wk->tmp);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            uint32_t aik = a[i * n + k];
            const uint32_t *b = wk->act + (size_t)k * (size_t)n;
            uint32_t *out = wk->tmp + (size_t)i * (size_t)n;
            for (int j = 0; j < n; j++)
                out[j] += aik * b[j];
        }
    for (int i = 0; i < n * n; i++)
        wk->act[i] = wk->tmp[i] ^ (wk->tmp[i] >> 15);
    wk->digest = wk->digest * 31 + wk->act[(size_t)layer % ((size_t)n * (size_t)n)];
}

static void synth_work_budget(struct synth_work *wk, double step_seconds)
{
    int share_of = wk->ranks_here > wk->cores ? wk->ranks_here : wk->cores;
    wk->cpu_budget_s = step_seconds * SYNTH_CPU_SHARE * (double)wk->cores / (double)share_of;
    double units = wk->cpu_budget_s / wk->unit_cpu_s;
    wk->units = units < 1.0 ? 1 : units > 1e9 ? 1000000000L : (long)units;
}

static enum np_status synth_work_init(struct synth_run *run)
{
    struct synth_work *wk = &run->work;
    const struct synth_config *c = &run->cfg;
    long n = c->hidden / 64;
    wk->n = (int)(n < 16 ? 16 : n > 96 ? 96 : n);
    long ll = (c->layers + c->pp - 1) / c->pp;
    wk->local_layers = (int)ll;
    wk->nmat = (int)(ll < 8 ? ll : 8);
    size_t nn = (size_t)wk->n * (size_t)wk->n;
    wk->w = malloc((size_t)wk->nmat * nn * sizeof *wk->w);
    wk->act = malloc(nn * sizeof *wk->act);
    wk->tmp = malloc(nn * sizeof *wk->tmp);
    if (!wk->w || !wk->act || !wk->tmp)
        return NP_E_NOMEM;
    uint64_t s = (uint64_t)c->seed * 1000003u + (uint64_t)run->env.rank;
    for (size_t i = 0; i < (size_t)wk->nmat * nn; i++)
        wk->w[i] = (uint32_t)synth_splitmix(&s);
    for (size_t i = 0; i < nn; i++)
        wk->act[i] = (uint32_t)synth_splitmix(&s);

    /* Calibrate on CPU time, so that ranks starting together on a busy node
     * still measure the cost of the work, not their share of the cores. */
    double c0 = synth_now(CLOCK_THREAD_CPUTIME_ID), w0 = synth_now(CLOCK_MONOTONIC);
    long units = 0;
    double cpu = 0;
    while (!synth_signal) {
        synth_work_unit(wk, (int)(units % wk->local_layers));
        units++;
        cpu = synth_now(CLOCK_THREAD_CPUTIME_ID) - c0;
        if ((cpu >= SYNTH_CALIBRATE_CPU_S && units >= 4) || synth_now(CLOCK_MONOTONIC) - w0 > 3.0)
            break;
    }
    wk->unit_cpu_s = cpu > 0 && units > 0 ? cpu / (double)units : 1e-4;
    if (wk->unit_cpu_s < 1e-7)
        wk->unit_cpu_s = 1e-7;
    wk->cores = synth_cores();
    int peers = synth_count_peers();
    wk->ranks_here = run->env.ranks_on_node > peers ? run->env.ranks_on_node : peers;
    if (wk->ranks_here < 1)
        wk->ranks_here = 1;
    synth_work_budget(wk, c->step_seconds);
    return NP_OK;
}

static void synth_work_free(struct synth_work *wk)
{
    free(wk->w);
    free(wk->act);
    free(wk->tmp);
    wk->w = wk->act = wk->tmp = NULL;
}

/* ---- NCCL-trace-like lines ---------------------------------------------- */

static void synth_nccl_line(struct synth_run *run, const char *op, uint64_t comm, int nranks,
                            unsigned long long count, int datatype, int root, int recv_nil)
{
    uint64_t base = 0x7f0000000000ULL + ((comm & 0xffff) << 24);
    uint64_t op_no = run->nccl_opcount++;
    int pid = (int)getpid();
    if (recv_nil)
        printf("%s:%d:%d [%d] NCCL INFO %s: opCount %" PRIx64 " sendbuff 0x%" PRIx64
               " recvbuff (nil) count %llu datatype %d op 0 root %d comm 0x%" PRIx64
               " [nranks=%d] stream 0x%" PRIx64 "\n",
               run->env.host, pid, pid, run->env.local_rank % 8, op, op_no, base + 0x200000 * (op_no % 8),
               count, datatype, root, comm, nranks, comm + 0x1000);
    else
        printf("%s:%d:%d [%d] NCCL INFO %s: opCount %" PRIx64 " sendbuff 0x%" PRIx64
               " recvbuff 0x%" PRIx64 " count %llu datatype %d op 0 root %d comm 0x%" PRIx64
               " [nranks=%d] stream 0x%" PRIx64 "\n",
               run->env.host, pid, pid, run->env.local_rank % 8, op, op_no, base + 0x200000 * (op_no % 8),
               base + 0x100000 + 0x200000 * (op_no % 8), count, datatype, root, comm, nranks,
               comm + 0x1000);
}

static void synth_nccl_init(struct synth_run *run)
{
    int pid = (int)getpid();
    const struct synth_env *e = &run->env;
    printf("%s:%d:%d [%d] NCCL INFO NCCL version synthetic (nemoperf-synth; no GPU, no network)\n",
           e->host, pid, pid, e->local_rank % 8);
    /* the network NCCL would choose here (no InfiniBand, no net plugin): the lines NCCL 2.26
     * prints then (NVIDIA/nccl issue #447 and tinygrad/open-gpu-kernel-modules issue #45 show them) */
    printf("%s:%d:%d [%d] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.\n"
           "%s:%d:%d [%d] NCCL INFO NET/IB : No device found.\n"
           "%s:%d:%d [%d] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
           "%s:%d:%d [%d] NCCL INFO Using network Socket\n",
           e->host, pid, pid, e->local_rank % 8, e->host, pid, pid, e->local_rank % 8, e->host, pid, pid,
           e->local_rank % 8, e->host, pid, pid, e->local_rank % 8);
    printf("%s:%d:%d [%d] NCCL INFO comm 0x%" PRIx64 " rank %d nRanks %d nNodes %d localRanks %d"
           " localRank %d MNNVL 0\n",
           e->host, pid, pid, e->local_rank % 8, (uint64_t)0x55d0c0a00000ULL, e->rank, e->world,
           (e->world + e->ranks_on_node - 1) / e->ranks_on_node, e->ranks_on_node, e->local_rank);
    printf("%s:%d:%d [%d] NCCL INFO comm 0x%" PRIx64 " rank %d nranks %d cudaDev %d nvmlDev %d"
           " busId 0 commId 0x%016" PRIx64 " - Init COMPLETE\n",
           e->host, pid, pid, e->local_rank % 8, (uint64_t)0x55d0c0a00000ULL, e->rank, e->world,
           e->local_rank % 8, e->local_rank % 8, (uint64_t)((uint64_t)run->cfg.seed * 0x9e3779b97f4a7c15ULL));
    fflush(stdout);
}

/* A handful of collectives per step, the ones Megatron issues for this layout:
 * TP all-reduces, PP/CP point-to-point, DP reduce-scatter/all-gather of the
 * distributed optimizer, and the loss all-reduce. */
static void synth_nccl_step(struct synth_run *run)
{
    const struct synth_config *c = &run->cfg;
    double params = synth_model_params(c->model_size) / (double)(c->tp * c->pp);
    unsigned long long act = (unsigned long long)c->mbs * (unsigned long long)(c->seq_len / c->cp) *
                             (unsigned long long)c->hidden;
    unsigned long long shard = (unsigned long long)(params / (double)c->dp);
    const uint64_t comm_tp = 0x55d0c0b00000ULL, comm_pp = 0x55d0c0c00000ULL,
                   comm_cp = 0x55d0c0d00000ULL, comm_dp = 0x55d0c0e00000ULL;
    if (c->tp > 1)
        synth_nccl_line(run, "AllReduce", comm_tp, (int)c->tp, act / (unsigned long long)c->tp, 9, 0, 0);
    if (c->cp > 1) {
        synth_nccl_line(run, "Send", comm_cp, 2, act / 2, 9, 1, 1);
        synth_nccl_line(run, "Recv", comm_cp, 2, act / 2, 9, 1, 0);
    }
    if (c->pp > 1) {
        synth_nccl_line(run, "Send", comm_pp, 2, act, 9, 1, 1);
        synth_nccl_line(run, "Recv", comm_pp, 2, act, 9, 1, 0);
    }
    synth_nccl_line(run, "ReduceScatter", comm_dp, (int)c->dp, shard, 9, 0, 0);
    synth_nccl_line(run, "AllGather", comm_dp, (int)c->dp, shard, 9, 0, 0);
    synth_nccl_line(run, "AllReduce", comm_dp, (int)c->dp, 1, 7, 0, 0);
}

/* ---- profile ------------------------------------------------------------ */

static enum np_status synth_profile_write(struct synth_run *run, char *path, size_t pathsize)
{
    const char *dir = getenv("NEMOPERF_PROFILE_DIR");
    if (!dir || !*dir)
        dir = ".";
    if (synth_mkdirs(dir) != 0) {
        np_errorf("rank %d: profile directory %s: %s", run->env.rank, dir, strerror(errno));
        return NP_E_IO;
    }
    if (snprintf(path, pathsize, "%s/profile_%ld.nsys-rep", dir, (long)getpid()) >= (int)pathsize) {
        np_errorf("rank %d: profile directory path too long: %s", run->env.rank, dir);
        return NP_E_IO;
    }
    const struct synth_config *c = &run->cfg;
    json_t *steps = json_array();
    for (size_t i = 0; i < run->prof_n; i++)
        json_array_append_new(steps, json_pack("{s:I,s:f}", "step", (json_int_t)(c->profile_start + (long)i),
                                               "time_s", run->prof_times[i]));
    char digest[32];
    snprintf(digest, sizeof digest, "%016" PRIx64, run->work.digest);
    json_t *obj = json_pack("{s:s,s:s,s:i,s:i,s:i,s:s,s:s,s:I,s:I,s:I,s:o,s:s}",
                            "format", "nemoperf-synth profile (stand-in for an nsys report)",
                            "tool", "nemoperf-synth", "rank", run->env.rank, "local_rank",
                            run->env.local_rank, "world_size", run->env.world, "node", run->env.host,
                            "recipe", c->recipe, "pid", (json_int_t)getpid(), "capture_start_step",
                            (json_int_t)c->profile_start, "capture_stop_step", (json_int_t)c->profile_stop,
                            "steps", steps, "work_digest", digest);
    if (!obj) {
        np_errorf("rank %d: out of memory building the profile", run->env.rank);
        return NP_E_NOMEM;
    }
    int rc = synth_write_json(path, obj);
    int e = errno;
    json_decref(obj);
    if (rc != 0) {
        np_errorf("rank %d: writing %s: %s", run->env.rank, path, strerror(e));
        return NP_E_IO;
    }
    return NP_OK;
}

static enum np_status synth_profile_stop(struct synth_run *run)
{
    run->profiling = 0;
    if (run->env.rank == 0)
        printf("nsys: capture range stopped at step %ld\n", run->cfg.profile_stop);
    enum np_status st = NP_OK;
    char path[PATH_MAX];
    if (run->env.local_rank < 8) {
        st = synth_profile_write(run, path, sizeof path);
        if (st == NP_OK && run->env.rank == 0)
            printf("nsys: generated %s\n", path);
    }
    fflush(stdout);
    return st;
}

/* ---- checkpoints -------------------------------------------------------- */

struct synth_shard {
    int rank, world;
    long seed, iteration;
    char job[64];
    size_t bytes;
    uint64_t sum;
};

/* Build shard `rank`: a header line and deterministic bytes.  Returns a new
 * buffer (caller frees) or NULL. */
static unsigned char *synth_shard_build(const struct synth_run *run, size_t *len, uint64_t *sum)
{
    const struct synth_config *c = &run->cfg;
    unsigned char data[SYNTH_SHARD_BYTES];
    uint64_t s = (uint64_t)c->seed ^ ((uint64_t)run->env.rank * 0xd1b54a32d192ed03ULL) ^
                 ((uint64_t)c->max_steps << 32);
    for (size_t i = 0; i < sizeof data; i += 8) {
        uint64_t v = synth_splitmix(&s);
        memcpy(data + i, &v, 8);
    }
    *sum = synth_fnv1a(data, sizeof data);
    char head[256];
    int hn = snprintf(head, sizeof head,
                      SYNTH_MAGIC " 1 rank=%d world=%d seed=%ld iteration=%ld job=%s bytes=%zu fnv1a64=%016" PRIx64 "\n",
                      run->env.rank, run->env.world, c->seed, c->max_steps, run->env.job, sizeof data, *sum);
    unsigned char *buf = malloc((size_t)hn + sizeof data);
    if (!buf)
        return NULL;
    memcpy(buf, head, (size_t)hn);
    memcpy(buf + hn, data, sizeof data);
    *len = (size_t)hn + sizeof data;
    return buf;
}

/* Read and verify one shard file.  0 ok; -1 with why filled (errno ENOENT when missing). */
static int synth_shard_read(const char *path, struct synth_shard *sh, char *why, size_t whysize)
{
    size_t len;
    unsigned char *buf = synth_read_small(path, &len);
    if (!buf) {
        int e = errno;
        snprintf(why, whysize, "%s", e == EFBIG ? "too large to be a nemoperf-synth shard" : strerror(e));
        errno = e;
        return -1;
    }
    errno = 0;
    unsigned char *nl = memchr(buf, '\n', len < 256 ? len : 256);
    char head[257];
    int ok = 0;
    if (nl) {
        memcpy(head, buf, (size_t)(nl - buf));
        head[nl - buf] = '\0';
        char magic[32], sumhex[32];
        int version;
        memset(sh, 0, sizeof *sh);
        if (sscanf(head, "%31s %d rank=%d world=%d seed=%ld iteration=%ld job=%63s bytes=%zu fnv1a64=%31s",
                   magic, &version, &sh->rank, &sh->world, &sh->seed, &sh->iteration, sh->job, &sh->bytes,
                   sumhex) == 9 &&
            strcmp(magic, SYNTH_MAGIC) == 0 && version == 1 && strlen(sumhex) == 16) {
            char *end;
            sh->sum = strtoull(sumhex, &end, 16);
            ok = *end == '\0';
        }
    }
    if (!ok) {
        snprintf(why, whysize, "bad header (not a nemoperf-synth shard)");
        free(buf);
        return -1;
    }
    size_t off = (size_t)(nl - buf) + 1;
    if (len - off != sh->bytes) {
        snprintf(why, whysize, "truncated or padded: %zu data bytes, header says %zu", len - off, sh->bytes);
        free(buf);
        return -1;
    }
    uint64_t got = synth_fnv1a(buf + off, sh->bytes);
    free(buf);
    if (got != sh->sum) {
        snprintf(why, whysize, "checksum mismatch: data fnv1a64 %016" PRIx64 ", header %016" PRIx64, got,
                 sh->sum);
        return -1;
    }
    return 0;
}

static json_t *synth_config_json(const struct synth_config *c)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}",
                          "recipe", c->recipe, "model_size", c->model_size, "dtype", c->dtype,
                          "gpus", (json_int_t)c->gpus, "tp", (json_int_t)c->tp, "pp", (json_int_t)c->pp,
                          "cp", (json_int_t)c->cp, "ep", (json_int_t)c->ep, "dp", (json_int_t)c->dp,
                          "mbs", (json_int_t)c->mbs, "gbs", (json_int_t)c->gbs, "ga", (json_int_t)c->ga,
                          "layers", (json_int_t)c->layers, "seq_len", (json_int_t)c->seq_len,
                          "hidden", (json_int_t)c->hidden, "step_seconds", c->step_seconds);
    if (o)
        json_object_set_new(o, "vp", c->vp ? json_integer(c->vp) : json_null());
    return o;
}

static int synth_join(char *out, size_t size, const char *a, const char *b)
{
    return snprintf(out, size, "%s/%s", a, b) < (int)size ? 0 : -1;
}

static enum np_status synth_ckpt_save(struct synth_run *run)
{
    const struct synth_config *c = &run->cfg;
    const struct synth_env *e = &run->env;
    double wall0 = synth_now(CLOCK_REALTIME), t0 = synth_now(CLOCK_MONOTONIC);
    char name[128], cdir[PATH_MAX], wdir[PATH_MAX], path[SYNTH_PATH], meta[SYNTH_PATH];
    snprintf(name, sizeof name, "default--None=0.0000-epoch=0-consumed_samples=%lld.0",
             (long long)c->max_steps * (long long)c->gbs);
    if (synth_join(cdir, sizeof cdir, c->ckpt_save, name) || synth_join(wdir, sizeof wdir, cdir, "weights") ||
        synth_join(meta, sizeof meta, wdir, ".metadata")) {
        np_errorf("rank %d: checkpoint path too long: %s", e->rank, c->ckpt_save);
        return NP_E_IO;
    }
    if (synth_mkdirs(wdir) != 0) {
        np_errorf("rank %d: checkpoint save: creating %s: %s", e->rank, wdir, strerror(errno));
        return NP_E_IO;
    }
    if (e->rank == 0 && unlink(meta) != 0 && errno != ENOENT) {
        np_errorf("rank 0: checkpoint save: removing stale %s: %s", meta, strerror(errno));
        return NP_E_IO;
    }
    size_t len;
    uint64_t sum;
    unsigned char *buf = synth_shard_build(run, &len, &sum);
    if (!buf)
        return NP_E_NOMEM;
    snprintf(path, sizeof path, "%s/__%d_0.distcp", wdir, e->rank);
    int rc = synth_write_atomic(path, buf, len);
    int err = errno;
    free(buf);
    if (rc != 0) {
        np_errorf("rank %d: checkpoint save: writing %s: %s", e->rank, path, strerror(err));
        return NP_E_IO;
    }
    if (e->rank != 0)
        return NP_OK;

    /* Rank 0: context, backend description, then wait for every shard and seal with .metadata. */
    char ctx[PATH_MAX];
    if (synth_join(ctx, sizeof ctx, cdir, "context") || synth_mkdirs(ctx) != 0) {
        np_errorf("rank 0: checkpoint save: creating %s/context: %s", cdir, strerror(errno));
        return NP_E_IO;
    }
    json_t *io = json_pack("{s:s,s:o}", "format", SYNTH_FORMAT, "config", synth_config_json(c));
    snprintf(path, sizeof path, "%s/io.json", ctx);
    rc = io ? synth_write_json(path, io) : -1;
    err = io ? errno : ENOMEM;
    json_decref(io);
    if (rc != 0) {
        np_errorf("rank 0: checkpoint save: writing %s: %s", path, strerror(err));
        return NP_E_IO;
    }
    json_t *backend = json_pack("{s:s,s:i,s:s,s:i}", "sharded_backend", "torch_dist",
                                "sharded_backend_version", 1, "common_backend", "torch",
                                "common_backend_version", 1);
    snprintf(path, sizeof path, "%s/metadata.json", wdir);
    rc = backend ? synth_write_json(path, backend) : -1;
    err = backend ? errno : ENOMEM;
    json_decref(backend);
    if (rc != 0) {
        np_errorf("rank 0: checkpoint save: writing %s: %s", path, strerror(err));
        return NP_E_IO;
    }

    uint64_t *sums = calloc((size_t)e->world, sizeof *sums);
    char *have = calloc((size_t)e->world, 1);
    if (!sums || !have) {
        free(sums);
        free(have);
        return NP_E_NOMEM;
    }
    int missing = e->world, first_missing = 0;
    char why[256] = "not written yet";
    for (;;) {
        for (int r = 0; r < e->world; r++) {
            if (have[r])
                continue;
            struct synth_shard sh;
            snprintf(path, sizeof path, "%s/__%d_0.distcp", wdir, r);
            char w[256];
            if (synth_shard_read(path, &sh, w, sizeof w) != 0) {
                if (errno != ENOENT)
                    snprintf(why, sizeof why, "%s", w);
                continue;
            }
            if (sh.rank != r || sh.world != e->world || sh.seed != c->seed ||
                sh.iteration != c->max_steps || strcmp(sh.job, e->job) != 0) {
                snprintf(why, sizeof why, "left by another run (rank %d world %d seed %ld iteration %ld job %s)",
                         sh.rank, sh.world, sh.seed, sh.iteration, sh.job);
                continue;
            }
            have[r] = 1;
            sums[r] = sh.sum;
            missing--;
        }
        if (!missing || synth_signal || synth_now(CLOCK_MONOTONIC) - t0 > SYNTH_CKPT_WAIT_S)
            break;
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    if (missing) {
        for (first_missing = 0; first_missing < e->world && have[first_missing]; first_missing++)
            ;
        free(sums);
        free(have);
        if (synth_signal)
            return NP_OK; /* the caller reports the signal */
        np_errorf("rank 0: checkpoint save: %d of %d shards missing after %.0f s; first: %s/__%d_0.distcp (%s)",
                  missing, e->world, SYNTH_CKPT_WAIT_S, wdir, first_missing, why);
        return NP_E_IO;
    }

    json_t *shards = json_array();
    for (int r = 0; r < e->world; r++) {
        char file[64], hex[32];
        snprintf(file, sizeof file, "__%d_0.distcp", r);
        snprintf(hex, sizeof hex, "%016" PRIx64, sums[r]);
        json_array_append_new(shards, json_pack("{s:i,s:s,s:I,s:s}", "rank", r, "file", file, "bytes",
                                                (json_int_t)SYNTH_SHARD_BYTES, "fnv1a64", hex));
    }
    free(sums);
    free(have);
    json_t *md = json_pack("{s:s,s:i,s:i,s:I,s:I,s:I,s:s,s:o,s:o}", "format", SYNTH_FORMAT, "version", 1,
                           "world_size", e->world, "iteration", (json_int_t)c->max_steps, "consumed_samples",
                           (json_int_t)((long long)c->max_steps * c->gbs), "seed", (json_int_t)c->seed,
                           "job", e->job, "shards", shards, "config", synth_config_json(c));
    rc = md ? synth_write_json(meta, md) : -1;
    err = md ? errno : ENOMEM;
    json_decref(md);
    if (rc != 0) {
        np_errorf("rank 0: checkpoint save: writing %s: %s", meta, strerror(err));
        return NP_E_IO;
    }
    synth_log("Global Checkpoint Save : Rank: 0 : Iteration: %ld : Start time: %.3fs : Save duration: %.3fs",
              c->max_steps, wall0, synth_now(CLOCK_MONOTONIC) - t0);
    return NP_OK;
}

static enum np_status synth_ckpt_load(struct synth_run *run)
{
    const char *dir = run->cfg.ckpt_load;
    const struct synth_env *e = &run->env;
    double wall0 = synth_now(CLOCK_REALTIME), t0 = synth_now(CLOCK_MONOTONIC);
    char wdir[PATH_MAX], meta[SYNTH_PATH], path[SYNTH_PATH], why[256];
    struct stat st;
    if (synth_join(wdir, sizeof wdir, dir, "weights") || synth_join(meta, sizeof meta, wdir, ".metadata")) {
        np_errorf("rank %d: checkpoint path too long: %s", e->rank, dir);
        return NP_E_IO;
    }
    int found = stat(wdir, &st) == 0;
    if (!found || !S_ISDIR(st.st_mode)) {
        const char *what = found ? "not a directory" : strerror(errno);
        np_errorf("rank %d: checkpoint load: %s: %s (DIR must be a checkpoint folder holding weights/)",
                  e->rank, wdir, what);
        return NP_E_IO;
    }
    json_error_t jerr;
    json_t *md = json_load_file(meta, 0, &jerr);
    if (!md) {
        np_errorf("rank %d: checkpoint load: %s:%d:%d: %s", e->rank, meta, jerr.line, jerr.column, jerr.text);
        return NP_E_IO;
    }
    json_int_t world = 0;
    const char *format = NULL;
    json_t *shards = NULL;
    if (json_unpack_ex(md, &jerr, 0, "{s:s,s:I,s:o}", "format", &format, "world_size", &world, "shards",
                       &shards) != 0 ||
        strcmp(format, SYNTH_FORMAT) != 0 || world < 1 || !json_is_array(shards) ||
        json_array_size(shards) != (size_t)world) {
        np_errorf("rank %d: checkpoint load: %s: not a complete nemoperf-synth checkpoint description%s%s",
                  e->rank, meta, format ? "" : ": ", format ? "" : jerr.text);
        json_decref(md);
        return NP_E_IO;
    }
    int r = e->rank % (int)world;
    const char *file = NULL, *hex = NULL;
    if (json_unpack(json_array_get(shards, (size_t)r), "{s:s,s:s}", "file", &file, "fnv1a64", &hex) != 0) {
        np_errorf("rank %d: checkpoint load: %s: shard entry %d is malformed", e->rank, meta, r);
        json_decref(md);
        return NP_E_IO;
    }
    char expect_file[64];
    snprintf(expect_file, sizeof expect_file, "__%d_0.distcp", r);
    if (strcmp(file, expect_file) != 0) {
        np_errorf("rank %d: checkpoint load: %s: shard entry %d names '%s', expected '%s'", e->rank, meta, r,
                  file, expect_file);
        json_decref(md);
        return NP_E_IO;
    }
    char *end;
    uint64_t want = strtoull(hex, &end, 16);
    int hex_ok = *hex && *end == '\0';
    json_decref(md);
    if (!hex_ok) {
        np_errorf("rank %d: checkpoint load: %s: shard entry %d has a bad checksum field", e->rank, meta, r);
        return NP_E_IO;
    }
    snprintf(path, sizeof path, "%s/%s", wdir, expect_file);
    struct synth_shard sh;
    if (synth_shard_read(path, &sh, why, sizeof why) != 0) {
        np_errorf("rank %d: checkpoint load: %s: %s", e->rank, path, why);
        return NP_E_IO;
    }
    if (sh.rank != r || sh.world != (int)world) {
        np_errorf("rank %d: checkpoint load: %s: header says rank %d of %d, expected rank %d of %lld", e->rank,
                  path, sh.rank, sh.world, r, (long long)world);
        return NP_E_IO;
    }
    if (sh.sum != want) {
        np_errorf("rank %d: checkpoint load: %s: checksum %016" PRIx64 " does not match %016" PRIx64
                  " recorded in %s",
                  e->rank, path, sh.sum, want, meta);
        return NP_E_IO;
    }
    if (e->rank == 0)
        synth_log("Global Checkpoint Load : Rank : 0 : Start time : %.3fs : Time spent in load_checkpoint: %.3fs",
                  wall0, synth_now(CLOCK_MONOTONIC) - t0);
    return NP_OK;
}

/* ---- the run ------------------------------------------------------------ */

static void synth_preamble(const struct synth_run *run)
{
    const struct synth_config *c = &run->cfg;
    const struct synth_env *e = &run->env;
    const struct synth_work *w = &run->work;
    char vp[32];
    if (c->vp)
        snprintf(vp, sizeof vp, "%ld", c->vp);
    else
        snprintf(vp, sizeof vp, "None");
    synth_log("nemoperf-synth: synthetic NeMo 2.0 pre-training task (CPU only, no GPU work)");
    synth_log("Recipe: %s, model size: %s, dtype: %s, seed: %ld", c->recipe, c->model_size, c->dtype, c->seed);
    synth_log("World size: %d ranks (GPUs: %ld), rank 0 on node %s (node id %d), %d ranks on this node",
              e->world, c->gpus, e->host, e->node_id, e->ranks_on_node);
    synth_log("Parallelism: TP=%ld PP=%ld CP=%ld EP=%ld DP=%ld VP=%s", c->tp, c->pp, c->cp, c->ep, c->dp, vp);
    synth_log("Batch: GBS=%ld MBS=%ld GA=%ld, seq length: %ld, layers: %ld, hidden: %ld", c->gbs, c->mbs, c->ga,
              c->seq_len, c->layers, c->hidden);
    synth_log("Steps: max_steps=%ld, target step time: %g s", c->max_steps, c->step_seconds);
    synth_log("Work: %dx%d matmul kernel over %d local layers, %.1f us CPU each, %ld per step"
              " (%.1f ms CPU budget per rank; %d cores, %d ranks here)",
              w->n, w->n, w->local_layers, w->unit_cpu_s * 1e6, w->units, w->cpu_budget_s * 1e3, w->cores,
              w->ranks_here);
}

static void synth_step_line(const struct synth_run *run, long i, double step_s)
{
    const struct synth_config *c = &run->cfg;
    uint64_t s = (uint64_t)c->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    double noise = (double)(synth_splitmix(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    double loss = 12.0 - 2.5 * (1.0 - exp(-(double)i / 25.0)) + 0.02 * noise;
    double lr = 3e-4 * (double)(i + 1) / 2000.0;
    long long peak = i == 0 ? run->mem_allocated + (run->mem_peak - run->mem_allocated) * 9 / 10 : run->mem_peak;
    char lr_s[32], loss_s[32], t_s[32];
    synth_fmt_num(lr_s, sizeof lr_s, lr);
    synth_fmt_num(loss_s, sizeof loss_s, loss);
    synth_fmt_num(t_s, sizeof t_s, step_s);
    printf("Training epoch 0, iteration %ld/%ld | lr: %s | global_batch_size: %ld | global_step: %ld"
           " | peak_memory_usage: %lld | memory_allocated: %lld | reduced_train_loss: %s"
           " | train_step_timing in s: %s | consumed_samples: %lld\n",
           i, c->max_steps - 1, lr_s, c->gbs, i, peak, run->mem_allocated, loss_s, t_s,
           (long long)(i + 1) * (long long)c->gbs);
    fflush(stdout);
}

/* ---- DFM's AutoModel loop (job/dfm_automodel_log.c) ---------------------- */

/* Append bar to b (what rank 0 printed before it, or nothing), write b to stderr at once and flush, as tqdm
 * does; b is consumed. */
static void synth_dfm_am_bar(struct np_buf *b, const struct np_dfm_am_bar *bar)
{
    np_dfm_am_log_bar(b, bar);
    char *text = np_buf_steal(b);
    if (text)
        fputs(text, stderr);
    free(text);
    fflush(stderr);
}

/* Rank 0's tqdm bar to stderr after each loader batch (one batch a step: GBS = DP x LBS), the postfix set every
 * log_every = 2 steps (the shipped YAML) and kept, as tqdm keeps it (DFM 9eaace1 train.py:413-435). */
static void synth_dfm_am_step(struct synth_run *run, long i, double step_s)
{
    const struct synth_config *c = &run->cfg;
    uint64_t s = (uint64_t)c->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    double noise = (double)(synth_splitmix(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    double loss = 0.12 - 0.02 * (1.0 - exp(-(double)i / 25.0)) + 0.002 * noise;
    run->dfm_elapsed_s += step_s;
    run->dfm_loss_sum += loss;
    if ((i + 1) % 2 == 0)
        snprintf(run->dfm_postfix, sizeof run->dfm_postfix, "loss=%.4f, avg=%.4f, lr=%.2e, gn=%.2f", loss,
                 run->dfm_loss_sum / (double)(i + 1), 5e-5, 1.0 + 0.1 * noise);
    struct np_buf b;
    np_buf_init(&b);
    struct np_dfm_am_bar bar = {.epoch = 1, .nepochs = 1, .n = i + 1, .total = c->max_steps,
                                .elapsed_s = run->dfm_elapsed_s, .step_s = step_s, .postfix = run->dfm_postfix};
    synth_dfm_am_bar(&b, &bar);
}

/* ---- Megatron-Bridge's training_log (job/mbridge_log.c) ------------------ */

/* Rank 0: "Step Time : ..."; the last rank: the iteration line, and after the first one the memory report
 * (MB 953aabf train_utils.py:574-653).  MB counts iterations from 1.  Rank 0's figure is what MB prints for
 * the step's model FLOPs (--step-tflops: num_floating_point_operations of one global batch, the launch
 * computes it from the row) over the step time and the world size (facts section 3: interval FLOPs /
 * interval time / world / 1e12); 0.0 without --step-tflops. */
static void synth_mb_step(const struct synth_run *run, long i, double step_s)
{
    const struct synth_config *c = &run->cfg;
    int last = run->env.rank == run->env.world - 1;
    if (run->env.rank != 0 && !last)
        return;
    struct np_buf b;
    np_buf_init(&b);
    if (run->env.rank == 0)
        np_mbridge_log_step_time(&b, step_s,
                                 c->step_tflops > 0 && step_s > 0 ? c->step_tflops / step_s / (double)c->gpus : 0.0);
    if (last) {
        uint64_t s = (uint64_t)c->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
        double noise = (double)(synth_splitmix(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        struct np_mbridge_iter it = {
            .when = time(NULL), .iteration = i + 1, .train_iters = c->max_steps,
            .consumed_samples = (long long)(i + 1) * c->gbs, .elapsed_ms = step_s * 1000.0, .tflops = -1,
            .lr = 5e-6, .gbs = (int)c->gbs, .loss = 0.12 - 0.02 * (1.0 - exp(-(double)i / 25.0)) + 0.002 * noise,
            .loss_scale = 1.0, .grad_norm = 1.0 + 0.1 * noise, .skipped = 0, .nan = 0};
        np_mbridge_log_iteration(&b, &it);
        if (i == 0)
            np_mbridge_log_memory(&b, run->env.rank, 1, (double)run->mem_allocated / 1e9,
                                  (double)run->mem_peak / 1e9);
    }
    char *text = np_buf_steal(&b);
    if (text)
        fputs(text, stdout);
    free(text);
    fflush(stdout);
}

/* ---- AutoModel benchmark.py's rank-0 output (Automodel e45812012) -------- */

/* logger.info(): "YYYY-mm-dd HH:MM:SS | INFO | __main__ | msg" on stderr (components/loggers/log_utils.py
 * l.79-84; benchmark.py runs as __main__). */
static void synth_am_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void synth_am_log(const char *fmt, ...)
{
    char date[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(stderr, "%s | INFO | __main__ | ", date);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* Timers.log on stdout: "(min, max) time across ranks (ms):" with seconds (timers.py l.393-410). */
static void synth_am_timer(const char *name, double min_s, double max_s)
{
    char label[64];
    snprintf(label, sizeof label, "%s ", name);
    printf("    %s", label);
    for (size_t k = strlen(label); k < 48; k++)
        putchar('.');
    printf(": (%.2f, %.2f)\n", min_s, max_s);
}

/* benchmark.py setup() l.146-190 and run_benchmark() l.228-236 */
static void synth_am_setup(const struct synth_run *run, double setup_s)
{
    const struct synth_config *c = &run->cfg;
    synth_am_log("Using batch_size=%ld from step_scheduler.local_batch_size", c->mbs);
    synth_am_log("TFLOPs/GPU: %.6f", c->step_tflops);
    printf("(min, max) time across ranks (ms):\n");
    synth_am_timer("setup", setup_s, setup_s);
    synth_am_log("Running %ld iterations with %ld warmup steps", c->max_steps, c->warmup_steps);
    synth_am_log("GA steps: %ld, DP size: %ld, Local batch size: %ld, Global batch size: %ld", c->ga, c->dp,
                 c->mbs, c->gbs);
    fflush(stdout);
}

static double synth_am_mfu(const struct synth_config *c, double t)
{
    return t > 0 ? c->step_tflops / (double)c->gpus / t / c->peak_tflops * 100.0 : 0.0;
}

/* One iteration's lines after its work (l.326-380); "Rank 0 | Iteration i" comes before it. */
static void synth_am_step(const struct synth_run *run, long i, double step_s)
{
    const struct synth_config *c = &run->cfg;
    uint64_t s = (uint64_t)c->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    double noise = (double)(synth_splitmix(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    double loss = 12.0 - 0.5 * (1.0 - exp(-(double)i / 10.0)) + 0.02 * noise;
    long long tokens = (long long)c->gbs * (c->seq_len - 1);
    printf("num_label_tokens=%lld | loss=%.4f\n", tokens, loss);
    fflush(stdout);
    synth_am_log("Rank 0 | Iteration %ld | num_label_tokens=%lld | Max Memory Allocated: %.2f GB | loss=%.4f", i, tokens,
                 (double)run->mem_peak / 1073741824.0, loss);
    synth_am_log("Max iter time: %.6f seconds", step_s);
    synth_am_log("MFU: %.6f%%", synth_am_mfu(c, step_s));
    printf("(min, max) time across ranks (ms):\n");
    synth_am_timer(i < c->warmup_steps ? "iteration_warmup" : "iteration", step_s, step_s);
    synth_am_timer("optimizer", step_s * 0.01, step_s * 0.01);
    for (long g = 0; g < c->ga && g < 64; g++) {
        char name[48];
        snprintf(name, sizeof name, "forward_backward_%ld", g);
        synth_am_timer(name, step_s * 0.99 / (double)c->ga, step_s * 0.99 / (double)c->ga);
    }
    fflush(stdout);
}

/* _log_benchmark_summary() l.382-427 */
static void synth_am_summary(const struct synth_run *run, double setup_s, double warm_s, double timed_s)
{
    const struct synth_config *c = &run->cfg;
    long timed = c->max_steps - c->warmup_steps;
    char rule[61];
    memset(rule, '=', 60);
    rule[60] = '\0';
    synth_am_log("%s", rule);
    synth_am_log("Benchmarking Summary");
    synth_am_log("%s", rule);
    synth_am_log("Total setup time: %.2f seconds", setup_s);
    synth_am_log("Total warmup time (%ld steps): %.2f seconds", c->warmup_steps, warm_s);
    synth_am_log("Total iteration time (%ld steps): %.2f seconds", timed, timed_s);
    double avg = timed_s / (double)timed;
    char tail[80];
    snprintf(tail, sizeof tail, " (excluding first %ld warmup iterations)", c->warmup_steps);
    synth_am_log("Average iteration time: %.3f seconds%s", avg, tail);
    synth_am_log("Average MFU: %.6f%%%s", synth_am_mfu(c, avg), tail);
    synth_am_log("%s\n", rule);
}

/* Sleep until the absolute CLOCK_MONOTONIC time t, unless a signal arrives. */
static void synth_sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (!synth_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Returns NP_OK, an error, or NP_OK with synth_signal set when interrupted. */
static enum np_status synth_train(struct synth_run *run, long *done)
{
    const struct synth_config *c = &run->cfg;
    struct synth_work *w = &run->work;
    int rank0 = run->env.rank == 0;
    long recount = (long)(2.0 / c->step_seconds);
    double total = 0;
    *done = 0;
    for (long i = 0; i < c->max_steps && !synth_signal; i++) {
        if (c->profile_start == i) {
            run->profiling = 1;
            if (rank0) {
                printf("nsys: capture range started at step %ld\n", i);
                fflush(stdout);
            }
        }
        if (run->profiling && c->profile_stop == i) {
            enum np_status st = synth_profile_stop(run);
            if (st != NP_OK)
                return st;
        }
        if (i > 0 && recount > 0 && i % recount == 0) {
            int peers = synth_count_peers();
            w->ranks_here = run->env.ranks_on_node > peers ? run->env.ranks_on_node : peers;
            synth_work_budget(w, c->step_seconds);
        }
        if (rank0 && c->automodel)
            synth_am_log("Rank 0 | Iteration %ld", i);
        double t0 = synth_now(CLOCK_MONOTONIC);
        for (long u = 0; u < w->units && !synth_signal; u++)
            synth_work_unit(w, (int)(u % w->local_layers));
        synth_sleep_until(t0 + c->step_seconds);
        if (synth_signal)
            break;
        double dt = synth_now(CLOCK_MONOTONIC) - t0;
        total += dt;
        if (run->profiling && run->prof_n < SYNTH_PROFILE_MAX_STEPS)
            run->prof_times[run->prof_n++] = dt;
        if (i < c->warmup_steps)
            run->am_warm_s += dt;
        else
            run->am_timed_s += dt;
        if (c->mbridge) {
            if (rank0 && c->nccltrace)
                synth_nccl_step(run);
            synth_mb_step(run, i, dt);
        } else if (rank0 && c->automodel) {
            synth_am_step(run, i, dt);
        } else if (rank0 && c->dfm_am) {
            synth_dfm_am_step(run, i, dt);
        } else if (rank0) {
            if (c->nccltrace)
                synth_nccl_step(run);
            synth_step_line(run, i, dt);
        }
        *done = i + 1;
    }
    synth_sink = w->digest;
    if (!synth_signal && run->profiling) {
        enum np_status st = synth_profile_stop(run);
        if (st != NP_OK)
            return st;
    }
    if (!synth_signal && rank0 && c->mbridge) {
        synth_log("nemoperf-synth: %ld steps in %.3f s, mean step time %.4g s", *done, total,
                  *done ? total / (double)*done : 0.0);
    } else if (!synth_signal && rank0 && c->automodel) {
        synth_am_summary(run, run->am_setup_s, run->am_warm_s, run->am_timed_s);
    } else if (!synth_signal && rank0 && c->dfm_am) { /* the bar closes; train.py:440-451 */
        fputc('\n', stderr);
        fflush(stderr);
        synth_log("[INFO] Epoch 1 complete. avg_loss=%.6f", *done ? run->dfm_loss_sum / (double)*done : 0.0);
        synth_log("[INFO] Training complete!");
    } else if (!synth_signal && rank0) {
        printf("`Trainer.fit` stopped: `max_steps=%ld` reached.\n", c->max_steps);
        synth_log("nemoperf-synth: %ld steps in %.3f s, mean step time %.4g s", *done, total,
                  *done ? total / (double)*done : 0.0);
    }
    return NP_OK;
}

int np_synth_main(int argc, char **argv)
{
    np_set_progname(argv[0]);
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct synth_run run;
    memset(&run, 0, sizeof run);
    enum np_status st = synth_env_read(&run.env);
    int quiet = st == NP_OK && run.env.rank != 0;
    int rc = synth_parse_args(argc, argv, &run.cfg, quiet);
    if (rc >= 0)
        return rc;
    if (st != NP_OK)
        return np_exit_code(st);
    rc = synth_config_finish(&run.cfg, &run.env, quiet);
    if (rc >= 0)
        return rc;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = synth_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    const struct synth_config *c = &run.cfg;
    int rank0 = run.env.rank == 0;
    if (c->profile_start >= 0) {
        long n = c->profile_stop - c->profile_start;
        run.prof_times = malloc((size_t)(n < SYNTH_PROFILE_MAX_STEPS ? n : SYNTH_PROFILE_MAX_STEPS) *
                                sizeof *run.prof_times);
        if (!run.prof_times) {
            np_errorf("rank %d: %s", run.env.rank, np_strerror(NP_E_NOMEM));
            return 1;
        }
    }
    double t_start = synth_now(CLOCK_MONOTONIC);
    synth_memory(&run);
    st = synth_work_init(&run);
    if (st != NP_OK) {
        np_errorf("rank %d: %s", run.env.rank, np_strerror(st));
        synth_work_free(&run.work);
        free(run.prof_times);
        return np_exit_code(st);
    }
    if (rank0 && !synth_signal && c->automodel) {
        run.am_setup_s = synth_now(CLOCK_MONOTONIC) - t_start;
        synth_am_setup(&run, run.am_setup_s);
    } else if (rank0 && !synth_signal && c->dfm_am) {
        struct np_buf b;
        np_buf_init(&b);
        np_dfm_am_log_setup(&b, time(NULL), (int)c->gbs, (int)c->mbs, run.env.world / (run.env.ranks_on_node > 0 ?
                                                                              run.env.ranks_on_node : 1),
                            (int)c->dp);
        struct np_dfm_am_bar bar = {.epoch = 1, .nepochs = 1, .n = 0, .total = c->max_steps};
        synth_dfm_am_bar(&b, &bar);
    } else if (rank0 && !synth_signal && c->mbridge) {
        synth_log("nemoperf-synth: synthetic Megatron-Bridge training (CPU only, no GPU work): %s %s, %d ranks",
                  c->recipe, c->model_size, run.env.world);
        if (c->nccltrace)
            synth_nccl_init(&run);
    } else if (rank0 && !synth_signal) {
        synth_preamble(&run);
        if (c->nccltrace)
            synth_nccl_init(&run);
    }

    long done = 0;
    if (!synth_signal && c->ckpt_load)
        st = synth_ckpt_load(&run);
    if (st == NP_OK && !synth_signal)
        st = synth_train(&run, &done);
    if (st == NP_OK && !synth_signal && c->ckpt_save)
        st = synth_ckpt_save(&run);
    synth_work_free(&run.work);
    free(run.prof_times);

    if (synth_signal) {
        int sig = synth_signal;
        if (rank0) {
            synth_logw("nemoperf-synth: received %s after %ld of %ld steps, terminating",
                       sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal", done, c->max_steps);
        }
        fflush(stdout);
        signal(sig, SIG_DFL);
        raise(sig);
        return 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        np_errorf("rank %d: writing standard output: %s", run.env.rank, strerror(errno));
        return 1;
    }
    return np_exit_code(st);
}
