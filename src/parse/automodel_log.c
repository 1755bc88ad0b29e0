/* amlog.c - read NeMo AutoModel's benchmark log (nemo_automodel/recipes/llm/benchmark.py).
 *
 * Rank 0 logs through logging (stderr, "date | LEVEL | logger | msg") and print()s the timer
 * blocks (stdout); Slurm keeps them in <name>.out and <name>.err or merges them.  The lines and
 * their format strings are benchmark.py l.152-181 (setup, LoRA), l.278-380 (iterations) and
 * l.382-427 (summary) at Automodel e45812012; NVIDIA's own regexes for the summary are
 * tests/ci_tests/scripts/collect_benchmark_artifact.py l.41-64.  Kept apart from scan.c: these
 * logs are small, multi-line per step, and split over two files.  Also the step total every
 * AutoModel recipe logs once at setup ("- Max train steps: N"), for these logs and for the
 * training-loop logs the scanner reads ("step N | epoch E | ..."), whose step lines carry none.
 */
#include "nemoperf/parse/automodel_log.h"
#include "nemoperf/util/fileio.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AMLOG_PROBE_BYTES ((size_t)64 << 10) /* tail read to recognise a log before reading it whole */
#define AMLOG_MAX_BYTES ((size_t)1 << 30)
#define AMLOG_HEAD_CHUNK ((size_t)64 << 10) /* the setup header is read from the file's start in such reads */
#define AMLOG_HEAD_MAX ((size_t)8 << 20)    /* and not sought further (it precedes the first step line) */

enum amlog_pat {
    AP_ITER, AP_MEM, AP_LOSS, AP_MAXT, AP_MFU, AP_AVG, AP_AVGMFU, AP_TOTAL, AP_TFLOPS, AP_LORA, AP_GA, AP_TIMER,
    AP_MAXSTEPS, AP_TRAINSTEP, AP_DFM_BAR, AP_DFM_GBS, AP_DFM_DP, AP_COUNT
};

static const char *const amlog_src[AP_COUNT] = {
    [AP_ITER] = "Rank 0 \\| Iteration (\\d{1,12})(?=\\s|$)",
    [AP_MEM] = "\\| Max Memory Allocated: ([0-9.eE+-]+) GB",
    [AP_LOSS] = "\\| loss=(\\S+)",
    [AP_MAXT] = "Max iter time: (\\S+) seconds",
    [AP_MFU] = "(?<!Average )\\bMFU: (\\S+)%",
    [AP_AVG] = "Average iteration time: (\\S+) seconds(?: \\((?:excluding first (\\d{1,9}) warmup iterations|all "
               "(\\d{1,9}) iterations)\\))?",
    [AP_AVGMFU] = "Average MFU: (\\S+)%",
    [AP_TOTAL] = "Total iteration time \\((\\d{1,9}) steps\\): (\\S+) seconds",
    [AP_TFLOPS] = "TFLOPs/GPU: (\\S+)",
    [AP_LORA] = "TFLOPS multiplier for PEFT: \\(2 \\+ (\\S+)\\) / 3 = (\\S+)",
    [AP_GA] = "GA steps: (\\d{1,9}), DP size: (\\d{1,9}), Local batch size: (\\d{1,9}), Global batch size: "
              "(\\d{1,9})",
    [AP_TIMER] = "^\\s+(iteration|iteration_warmup) \\.*: \\((\\S+), (\\S+)\\)",
    /* base_recipe.py _log_step_scheduler_details, l.663-679 @36044ad3: logging.info(f"- {k}: {v}") with
     * "Max train steps": step_scheduler.max_steps, after "Step scheduler:"; called by setup() of
     * train_ft.py (l.820), hence of benchmark.py too */
    [AP_MAXSTEPS] = "(?:^|[\\s|:])- Max train steps: (\\d{1,12})\\s*$",
    /* train_ft.py l.1567 @36044ad3: "step {} | epoch {} | loss {:.4f} | ..." */
    [AP_TRAINSTEP] = "(?:^|[\\s|:])step (\\d{1,12}) \\| epoch \\d",
    /* DFM 9eaace1 dfm/src/automodel/recipes/train.py:368-374: rank 0's tqdm(desc=f"Epoch {epoch + 1}/{num_epochs}")
     * over the loader, its postfix loss/avg/lr/gn (426-435); tqdm/std.py format_meter: "{desc}: {pct:3.0f}%|bar|
     * {n}/{total} [{elapsed}<{remaining}, {rate:5.2f}s/it or it/s{, postfix}]" */
    [AP_DFM_BAR] = "Epoch (\\d{1,9})/(\\d{1,9}): *\\d{1,3}%\\|[^|]{0,400}\\| *(\\d{1,12})/(\\d{1,12}) \\[[0-9:]{1,16}<"
                   "(?:[0-9:]{1,16}|\\?), *([0-9.]{1,24}|\\?)(s/it|it/s)(?:, ([^\\]]{0,2000}))?\\]",
    /* train.py:358-359 */
    [AP_DFM_GBS] = "\\[INFO\\] Global Batch size: (\\d{1,9}); Local Batch size: (\\d{1,9})",
    [AP_DFM_DP] = "\\[INFO\\] Num nodes: (\\d{1,9}); DP size: (\\d{1,9})",
};

static pcre2_code *amlog_re[AP_COUNT];
static locale_t amlog_c_locale;
static pthread_once_t amlog_once = PTHREAD_ONCE_INIT;
static int amlog_ok;

static void amlog_init(void)
{
    amlog_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    amlog_ok = amlog_c_locale != (locale_t)0;
    for (int i = 0; i < AP_COUNT && amlog_ok; i++) {
        int ec;
        PCRE2_SIZE off;
        amlog_re[i] = pcre2_compile((PCRE2_SPTR)amlog_src[i], PCRE2_ZERO_TERMINATED, PCRE2_NEVER_UTF, &ec, &off, NULL);
        if (!amlog_re[i])
            amlog_ok = 0;
        else
            (void)pcre2_jit_compile(amlog_re[i], PCRE2_JIT_COMPLETE);
    }
}

struct amlog_state {
    struct np_scan_result *res;
    struct np_amlog_summary *sum;
    pcre2_match_data *md;
    size_t cap;
    long cur_iter;        /* last "Rank 0 | Iteration i" of this text */
    int have_maxt;        /* a "Max iter time" line was seen (the timer blocks are then ignored) */
    struct np_step *timer; /* steps from stdout's timer blocks, used when stderr is missing */
    size_t ntimer, timer_cap;
    int nomem;
};

/* Group g of the last match of pattern p in s[0..n), or 0. */
static int amlog_match(struct amlog_state *st, enum amlog_pat p, const char *s, size_t n)
{
    return pcre2_match(amlog_re[p], (PCRE2_SPTR)s, n, 0, 0, st->md, NULL) > 0;
}

static int amlog_group(struct amlog_state *st, const char *s, int g, const char **gp, size_t *gn)
{
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(st->md);
    if (ov[2 * g] == PCRE2_UNSET)
        return 0;
    *gp = s + ov[2 * g];
    *gn = ov[2 * g + 1] - ov[2 * g];
    return 1;
}

/* A whole decimal number of group g (nan/inf allowed: they mark a broken run); NAN otherwise. */
static double amlog_num(struct amlog_state *st, const char *s, int g)
{
    const char *p;
    size_t n;
    char tmp[64];
    if (!amlog_group(st, s, g, &p, &n) || n == 0 || n >= sizeof tmp)
        return NAN;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod_l(tmp, &end, amlog_c_locale);
    if (end != tmp + n || (tmp[0] == '0' && (tmp[1] == 'x' || tmp[1] == 'X')))
        return NAN;
    return v;
}

static long amlog_count(struct amlog_state *st, const char *s, int g)
{
    double v = amlog_num(st, s, g);
    return isfinite(v) && v >= 0 && v < 1e12 && v == floor(v) ? (long)v : -1;
}

static struct np_step *amlog_push(struct amlog_state *st, struct np_step **arr, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        struct np_step *p = realloc(*arr, nc * sizeof *p);
        if (!p) {
            st->nomem = 1;
            return NULL;
        }
        *arr = p;
        *cap = nc;
    }
    struct np_step *s = &(*arr)[(*n)++];
    s->iteration = s->total = s->global_batch_size = -1;
    s->step_time_s = s->loss = s->peak_memory_bytes = s->tflops_per_gpu = NAN;
    s->consumed_samples = s->tokens_per_s = s->tokens_per_s_per_gpu = NAN;
    s->energy_j_per_gpu = s->power_w_per_gpu = NAN;
    s->nan_seen = s->two_times = s->side = s->bar_short = 0;
    s->gen = NP_GEN_AMBENCH;
    s->offset = 0;
    return s;
}

/* The step of iteration it: the last one when it matches, a new one after it, a new run when the
 * iterations go backwards (a restart appended to the same file: only the last run is kept). */
static struct np_step *amlog_step(struct amlog_state *st, long it, uint64_t off)
{
    struct np_scan_result *r = st->res;
    if (r->nsteps && r->steps[r->nsteps - 1].iteration == it)
        return &r->steps[r->nsteps - 1];
    if (r->nsteps && it < r->steps[r->nsteps - 1].iteration) {
        r->nsteps = 0;
        r->runs++;
    }
    if (r->runs == 0)
        r->runs = 1;
    struct np_step *s = amlog_push(st, &r->steps, &r->nsteps, &st->cap);
    if (s) {
        s->iteration = it;
        s->offset = off;
    }
    return s;
}

/* One state of DFM's AutoModel bar: n loader batches of total in epoch E of NE.  A step is ga batches (GBS /
 * (LBS x DP), from train.py:358-359; 1 when not logged: both published rows have GBS = DP x LBS), so only the
 * states that end a step count: iteration (E-1) x total/ga + n/ga - 1, its time ga x tqdm's seconds a batch
 * (smoothed: an exponential average of the recent batches, tqdm's default smoothing 0.3). */
static void amlog_dfm_bar(struct amlog_state *st, const char *s, uint64_t off)
{
    struct np_amlog_summary *sum = st->sum;
    long e = amlog_count(st, s, 1), ne = amlog_count(st, s, 2);
    long k = amlog_count(st, s, 3), total = amlog_count(st, s, 4);
    long ga = sum->gbs > 0 && sum->lbs > 0 && sum->dp > 0 && sum->gbs % (sum->lbs * sum->dp) == 0
                  ? sum->gbs / (sum->lbs * sum->dp) : 1;
    sum->seen = 1;
    if (e < 1 || ne < e || k < 1 || total < k || k % ga != 0)
        return;
    long per = (total + ga - 1) / ga, it = (e - 1) * per + k / ga - 1;
    struct np_step *step = amlog_step(st, it, off);
    if (!step)
        return;
    step->gen = NP_GEN_DFMAM;
    step->total = ne * per - 1;
    const char *g;
    size_t gn;
    double rate = amlog_num(st, s, 5);
    if (isfinite(rate) && rate > 0 && amlog_group(st, s, 6, &g, &gn))
        step->step_time_s = (double)ga * (g[0] == 's' ? rate : 1.0 / rate);
    if (amlog_group(st, s, 7, &g, &gn)) { /* "loss=0.1234, avg=..." */
        const char *l = gn >= 5 && memcmp(g, "loss=", 5) == 0 ? g : memmem(g, gn, ", loss=", 7);
        if (l) {
            l += l == g ? 5 : 7;
            size_t ln = 0;
            while (l + ln < g + gn && l[ln] != ',' && ln < 60)
                ln++;
            char tmp[64];
            memcpy(tmp, l, ln);
            tmp[ln] = '\0';
            char *end;
            double v = strtod_l(tmp, &end, amlog_c_locale);
            if (ln && end == tmp + ln) {
                step->loss = v;
                if (!isfinite(v))
                    step->nan_seen = 1;
            }
        }
    }
}

static void amlog_line(struct amlog_state *st, const char *s, size_t n, uint64_t off)
{
    struct np_amlog_summary *sum = st->sum;
    const char *g;
    size_t gn;
    if (memmem(s, n, "Rank 0 | Iteration ", 19) && amlog_match(st, AP_ITER, s, n)) {
        long it = amlog_count(st, s, 1);
        if (it < 0)
            return;
        st->cur_iter = it;
        sum->seen = 1;
        struct np_step *step = amlog_step(st, it, off);
        if (!step)
            return;
        if (amlog_match(st, AP_MEM, s, n))
            step->peak_memory_bytes = amlog_num(st, s, 1) * 1073741824.0; /* "/ 1024**3 ... GB" */
        if (amlog_match(st, AP_LOSS, s, n)) {
            step->loss = amlog_num(st, s, 1);
            if (amlog_group(st, s, 1, &g, &gn) && !isfinite(step->loss))
                step->nan_seen = 1;
        }
        return;
    }
    if (memmem(s, n, "Max iter time: ", 15) && amlog_match(st, AP_MAXT, s, n)) {
        double t = amlog_num(st, s, 1);
        st->have_maxt = 1;
        sum->seen = 1;
        if (st->cur_iter < 0)
            return; /* a time without its iteration line: not attributable */
        struct np_step *step = amlog_step(st, st->cur_iter, off);
        if (step) {
            step->step_time_s = t;
            if (!isfinite(t) && !isnan(t))
                step->nan_seen = 1;
        }
        return;
    }
    if (memmem(s, n, "Average iteration time: ", 24) && amlog_match(st, AP_AVG, s, n)) {
        sum->seen = 1;
        sum->avg_step_time_s = amlog_num(st, s, 1);
        long w = amlog_count(st, s, 2);
        if (w >= 0)
            sum->warmup_steps = w;
        else if (amlog_count(st, s, 3) >= 0)
            sum->warmup_steps = 0;
        return;
    }
    if (memmem(s, n, "Average MFU: ", 13) && amlog_match(st, AP_AVGMFU, s, n)) {
        sum->avg_mfu_percent = amlog_num(st, s, 1);
        return;
    }
    if (memmem(s, n, "MFU: ", 5) && amlog_match(st, AP_MFU, s, n))
        return; /* per-iteration MFU: the run's own is recomputed from the step time */
    if (memmem(s, n, "Total iteration time (", 22) && amlog_match(st, AP_TOTAL, s, n)) {
        sum->timed_steps = amlog_count(st, s, 1);
        return;
    }
    if (memmem(s, n, "TFLOPS multiplier for PEFT: ", 28) && amlog_match(st, AP_LORA, s, n)) {
        sum->lora_multiplier = amlog_num(st, s, 2);
        return;
    }
    if (memmem(s, n, "TFLOPs/GPU: ", 12) && amlog_match(st, AP_TFLOPS, s, n)) {
        sum->step_tflops = amlog_num(st, s, 1);
        sum->seen = 1;
        return;
    }
    if (memmem(s, n, "GA steps: ", 10) && amlog_match(st, AP_GA, s, n)) {
        sum->ga = amlog_count(st, s, 1);
        sum->dp = amlog_count(st, s, 2);
        sum->lbs = amlog_count(st, s, 3);
        sum->gbs = amlog_count(st, s, 4);
        return;
    }
    if (memmem(s, n, "Epoch ", 6) && (memmem(s, n, "s/it", 4) || memmem(s, n, "it/s", 4)) &&
        amlog_match(st, AP_DFM_BAR, s, n)) {
        amlog_dfm_bar(st, s, off);
        return;
    }
    if (memmem(s, n, "] Global Batch size: ", 21) && amlog_match(st, AP_DFM_GBS, s, n)) {
        sum->gbs = amlog_count(st, s, 1);
        sum->lbs = amlog_count(st, s, 2);
        return;
    }
    if (memmem(s, n, "] Num nodes: ", 13) && amlog_match(st, AP_DFM_DP, s, n)) {
        sum->dp = amlog_count(st, s, 2);
        return;
    }
    if (memmem(s, n, "- Max train steps: ", 19) && amlog_match(st, AP_MAXSTEPS, s, n)) {
        sum->max_train_steps = amlog_count(st, s, 1);
        return;
    }
    if (memmem(s, n, "iteration", 9) && amlog_match(st, AP_TIMER, s, n)) {
        /* Timers.log: "(min, max) time across ranks (ms):" whose values are seconds (normalizer 1000 / 1000) */
        struct np_step *step = amlog_push(st, &st->timer, &st->ntimer, &st->timer_cap);
        if (step) {
            step->iteration = (long)st->ntimer - 1;
            step->step_time_s = amlog_num(st, s, 3);
            step->offset = off;
        }
    }
}

/* A line without its CR ending, and of a redrawn line ("a\rb") its last segment, the one shown. */
static void amlog_visible(const char **s, size_t *n)
{
    if (*n && (*s)[*n - 1] == '\r')
        (*n)--;
    const char *cr = memrchr(*s, '\r', *n);
    if (cr) {
        *n -= (size_t)(cr + 1 - *s);
        *s = cr + 1;
    }
}

static void amlog_text(struct amlog_state *st, const char *text, size_t len)
{
    st->cur_iter = -1;
    size_t pos = 0;
    while (pos < len && !st->nomem) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (!nl)
            break; /* an unterminated last line may still be written: ignored, as the scanner does */
        size_t n = end - pos;
        const char *s = text + pos;
        if (memchr(s, '\r', n) && memmem(s, n, "Epoch ", 6)) {
            /* a tqdm bar redrawn on one line: every state is a step (DFM's AutoModel loop) */
            for (const char *p = s, *e = s + n; p < e && !st->nomem;) {
                const char *cr = memchr(p, '\r', (size_t)(e - p));
                size_t sn = (size_t)((cr ? cr : e) - p);
                if (sn)
                    amlog_line(st, p, sn, pos + (size_t)(p - s));
                p = cr ? cr + 1 : e;
            }
        } else {
            amlog_visible(&s, &n);
            amlog_line(st, s, n, pos);
        }
        pos = end + 1;
    }
}

static void amlog_summary_init(struct np_amlog_summary *sum)
{
    memset(&sum->companion, 0, sizeof sum->companion);
    sum->companion_status = NP_OK;
    sum->avg_step_time_s = sum->avg_mfu_percent = sum->step_tflops = sum->lora_multiplier = NAN;
    sum->warmup_steps = sum->timed_steps = sum->gbs = sum->lbs = sum->ga = sum->dp = sum->max_train_steps = -1;
    sum->seen = 0;
}

enum np_status np_amlog_buffers(const char *out_text, size_t out_len, const char *err_text, size_t err_len,
                                struct np_scan_result *out, struct np_amlog_summary *sum, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    amlog_summary_init(sum);
    pthread_once(&amlog_once, amlog_init);
    if (!amlog_ok)
        return np_error_set(err, NP_E_INTERNAL, "amlog", 0, 0, "cannot compile the AutoModel log patterns");
    struct amlog_state st;
    memset(&st, 0, sizeof st);
    st.res = out;
    st.sum = sum;
    st.md = pcre2_match_data_create(8, NULL);
    if (!st.md)
        return np_error_set(err, NP_E_NOMEM, "amlog", 0, 0, "out of memory");
    if (err_text)
        amlog_text(&st, err_text, err_len);
    if (out_text)
        amlog_text(&st, out_text, out_len);
    if (!st.have_maxt && st.ntimer && !st.nomem) {
        /* stdout alone: the timer blocks give the per-iteration times */
        free(out->steps);
        out->steps = st.timer;
        out->nsteps = st.ntimer;
        out->runs = 1;
        st.timer = NULL;
        sum->seen = 1;
    }
    free(st.timer);
    pcre2_match_data_free(st.md);
    if (st.nomem) {
        np_scan_result_free(out);
        return np_error_set(err, NP_E_NOMEM, "amlog", 0, 0, "out of memory");
    }
    if (!sum->seen)
        np_scan_result_free(out);
    /* benchmark.py runs `for i in range(steps)` (l.245 @e45812012), steps = max_steps: the last is N-1 */
    for (size_t i = 0; sum->max_train_steps > 0 && i < out->nsteps; i++)
        if (out->steps[i].total < 0)
            out->steps[i].total = sum->max_train_steps - 1;
    out->bytes_read = out_len + err_len;
    out->file_size = out->bytes_read;
    return NP_OK;
}

/* pread exactly n bytes at off into buf; returns the count read (short when the file shrank) or -1. */
static ssize_t amlog_pread(int fd, char *buf, size_t n, size_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Read a whole file (at most AMLOG_MAX_BYTES) when its tail holds an AutoModel benchmark line;
 * *text NULL when it does not.  A missing companion file is not an error (*text NULL). */
static enum np_status amlog_load(const char *path, int must_exist, char **text, size_t *len, struct np_error *err)
{
    static const char *const marks[] = {"Rank 0 | Iteration ", "Max iter time: ", "Average iteration time: ",
                                        "TFLOPs/GPU: ", "time across ranks (ms):", "s/it", "it/s"};
    *text = NULL;
    *len = 0;
    int fd;
    enum np_status ost = np_file_open_regular(AT_FDCWD, path, &fd, err); /* a FIFO: refused, never waited on */
    if (ost != NP_OK)
        return ost == NP_E_IO && !must_exist && errno == ENOENT ? NP_OK : ost;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size > AMLOG_MAX_BYTES) {
        close(fd);
        return NP_OK; /* not a log this reader takes */
    }
    size_t size = (size_t)sb.st_size, from = size > AMLOG_PROBE_BYTES ? size - AMLOG_PROBE_BYTES : 0;
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
    }
    ssize_t tail = amlog_pread(fd, buf + from, size - from, from);
    int hit = 0;
    for (size_t k = 0; tail > 0 && k < sizeof marks / sizeof marks[0] && !hit; k++)
        hit = memmem(buf + from, (size_t)tail, marks[k], strlen(marks[k])) != NULL;
    ssize_t head = hit && from ? amlog_pread(fd, buf, from, 0) : 0;
    int e = errno;
    close(fd);
    if (tail < 0 || head < 0) {
        free(buf);
        return np_error_set(err, NP_E_IO, path, 0, 0, "read error: %s", strerror(e));
    }
    if (!hit || (size_t)head < from) { /* not such a log, or it shrank under us: nothing to say */
        free(buf);
        return NP_OK;
    }
    *len = from + (size_t)tail;
    buf[*len] = '\0';
    *text = buf;
    return NP_OK;
}

enum np_status np_amlog_read(const char *path, struct np_scan_result *out, struct np_amlog_summary *sum,
                             struct np_error *err)
{
    memset(out, 0, sizeof *out);
    amlog_summary_init(sum);
    char *o = NULL, *e = NULL;
    size_t on = 0, en = 0;
    enum np_status st = amlog_load(path, 1, &o, &on, err);
    size_t pl = strlen(path);
    if (st == NP_OK && pl > 4 && strcmp(path + pl - 4, ".out") == 0) {
        char *ep = strdup(path);
        if (!ep) {
            free(o);
            return np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
        }
        memcpy(ep + pl - 4, ".err", 4);
        struct np_error cerr;
        memset(&cerr, 0, sizeof cerr);
        enum np_status cst = amlog_load(ep, 0, &e, &en, &cerr);
        if (cst != NP_OK) {
            if (cst == NP_E_NOMEM) {
                st = np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
            } else {
                e = NULL; /* read the stdout file alone, and say why */
                en = 0;
            }
        }
        free(ep);
        if (st == NP_OK && (o || e))
            st = np_amlog_buffers(o, on, e, en, out, sum, err);
        sum->companion = cerr;
        sum->companion_status = cst;
        free(o);
        free(e);
        return st;
    }
    if (st == NP_OK && o)
        st = np_amlog_buffers(o, on, NULL, 0, out, sum, err);
    free(o);
    free(e);
    return st;
}

/* ---- the setup header of a training-loop log ---- */

/* From the start of fd: the header's N (*max_steps) and the step of the first training-step line
 * (*first), each -1 when not found; the reading stops at that first step line (the header precedes
 * it) or after AMLOG_HEAD_MAX bytes.  Returns the bytes read. */
static size_t amlog_head(int fd, long *max_steps, long *first)
{
    *max_steps = *first = -1;
    struct amlog_state st;
    memset(&st, 0, sizeof st);
    st.md = pcre2_match_data_create(4, NULL);
    char *buf = malloc(2 * AMLOG_HEAD_CHUNK);
    size_t len = 0, pos = 0, total = 0;
    int eof = 0, skipping = 0; /* skipping: inside a line longer than the buffer (never the header) */
    while (st.md && buf && *first < 0) {
        char *nl = pos < len ? memchr(buf + pos, '\n', len - pos) : NULL;
        if (!nl) {
            if (eof || total >= AMLOG_HEAD_MAX)
                break;
            if (pos == 0 && len == 2 * AMLOG_HEAD_CHUNK) { /* no end of line in the whole buffer */
                skipping = 1;
                len = 0;
            }
            memmove(buf, buf + pos, len - pos);
            len -= pos;
            pos = 0;
            size_t want = 2 * AMLOG_HEAD_CHUNK - len < AMLOG_HEAD_CHUNK ? 2 * AMLOG_HEAD_CHUNK - len : AMLOG_HEAD_CHUNK;
            ssize_t r = amlog_pread(fd, buf + len, want, total);
            if (r <= 0)
                break;
            eof = (size_t)r < want;
            len += (size_t)r;
            total += (size_t)r;
            continue;
        }
        const char *s = buf + pos;
        size_t n = (size_t)(nl - s);
        pos += n + 1;
        if (skipping) {
            skipping = 0;
            continue;
        }
        amlog_visible(&s, &n);
        if (memmem(s, n, "- Max train steps: ", 19) && amlog_match(&st, AP_MAXSTEPS, s, n))
            *max_steps = amlog_count(&st, s, 1);
        else if (memmem(s, n, " | epoch ", 9) && amlog_match(&st, AP_TRAINSTEP, s, n))
            *first = amlog_count(&st, s, 1);
    }
    free(buf);
    pcre2_match_data_free(st.md);
    return total;
}

void np_amlog_header_total(int dirfd, const char *name, struct np_scan_result *res)
{
    if (!res || !res->nsteps || res->steps[res->nsteps - 1].gen != NP_GEN_AUTOMODEL ||
        res->steps[res->nsteps - 1].total >= 0)
        return;
    pthread_once(&amlog_once, amlog_init);
    int fd = -1;
    struct np_error ferr;
    if (!amlog_ok || np_file_open_regular(dirfd, name, &fd, &ferr) != NP_OK)
        return; /* the scan read it a moment ago: a run without its total is what is left */
    long n = -1, first = -1;
    res->bytes_read += amlog_head(fd, &n, &first);
    close(fd);
    if (n <= 0)
        return;
    /* The step printed is step_scheduler.step: counted before the step ran until Automodel ebd03b025
     * ("step scheduler switch to zero based indexing", 2025-10-13), so a fresh run printed 1..N;
     * since then after it (step_scheduler.py l.188-212 @36044ad3), 0..N-1.  The first step line
     * after the header says which: "step 1" then (a fresh run starts at 0 now). */
    long total = first == 1 ? n : n - 1;
    for (size_t i = 0; i < res->nsteps; i++)
        if (res->steps[i].gen == NP_GEN_AUTOMODEL && res->steps[i].total < 0)
            res->steps[i].total = total;
}
