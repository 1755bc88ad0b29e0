/* scan.c - find training-step lines in NeMo / Megatron / AutoModel logs.
 *
 * A literal prefilter (one SIMD pass for all needles, memmem elsewhere) finds
 * candidate lines; only those go through PCRE2 (JIT, compiled once) for field
 * extraction.  Files are streamed in chunks (whole file) or read backwards
 * from the end (tail mode).  Only the last run's steps are kept.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nemoperf/parse/scan.h"
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
#include <strings.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__SSE2__) && !defined(SCAN_NO_SIMD)
#include <emmintrin.h>
#endif

/* The fuzz build lowers these to reach the long-line paths with small inputs. */
#ifndef SCAN_LINE_MAX
#define SCAN_LINE_MAX NP_SCAN_LINE_MAX
#endif
#ifndef SCAN_CHUNK_DEFAULT
#define SCAN_CHUNK_DEFAULT ((size_t)4 << 20)
#endif
#define SCAN_TAIL_DEFAULT ((size_t)64 << 10)
#define SCAN_TAIL_FIRST ((uint64_t)16 << 10) /* first read from the end with a step budget */
#define SCAN_WINDOW_DEFAULT 10
#define SCAN_NGEN 8 /* one slot per enum np_log_gen value (NP_GEN_AMBENCH, NP_GEN_DFMAM steps come from amlog.c) */

/* ---- patterns ---------------------------------------------------------- */

enum scan_pat {
    PAT_NEMO2_ANCHOR, /* last "Training epoch E, iteration i/n" */
    PAT_PIPE_KV,      /* "| key: value" (NeMo 2.0, Megatron-Bridge) */
    PAT_DELTA,        /* last "Step N: train_step_timing in s=X" */
    PAT_NEMO1_ANCHOR, /* last "Epoch E:" with optional " k/n [" of the bar */
    PAT_NEMO1_KV,     /* ", key=value" inside the tqdm postfix */
    PAT_MB_ANCHOR,    /* last "iteration i/ n" */
    PAT_AM_ANCHOR,    /* last "step N |" */
    PAT_AM_KV,        /* "| key value" (AutoModel) */
    PAT_MB_MEM,       /* Megatron "(after N iterations) memory (MB) |" */
    PAT_COUNT
};

/* All linear: no two adjacent sub-patterns can match the same characters. */
static const char *const scan_pat_src[PAT_COUNT] = {
    [PAT_NEMO2_ANCHOR] = "^.*\\KTraining epoch (\\d+), iteration (\\d+)/(\\d+)(?=[ \\t|]|$)",
    [PAT_PIPE_KV] = "(?:^|\\|)([^|:]*):([^|]*)", /* "^": a reporter's re-wrapped line starts with a key */
    /* NeMo's DeltaTimingCallback logs f"Step {n}: {name} in s={dt}" with name "train_step_timing in s"
     * (NVIDIA/NeMo nemo/utils/exp_manager.py:450 @8cfedd7): "in s" twice.  MLPerf's NeMo callbacks print
     * "Step 19 train_step_timing 1.93 timestamp: 1713522620986.0247" (no colon, no "in s", no '='). */
    [PAT_DELTA] = "^.*\\K\\bStep (\\d+)(?::[ \\t]*|[ \\t]+)train_step_timing(?: in s)*(?:[ \\t]*=[ \\t]*|[ \\t]+)(\\S*)",
    /* "^M" (a pasted \r) and CloudWatch's "#015" glue the bar to what came before: no word boundary there */
    /* "k/?": tqdm's total_fmt when the total is unknown (an iterable dataset), in Lightning's BAR_FORMAT "{l_bar}{bar}|
     * {n_fmt}/{total_fmt} [" (tqdm/std.py format_meter; Lightning-AI/pytorch-lightning src/lightning/pytorch/callbacks/
     * progress/tqdm_progress.py @03f57f9c) */
    [PAT_NEMO1_ANCHOR] = "^.*\\K(?:\\b|(?<=\\^M)|(?<=#015))Epoch (\\d+):(?:[^|]*\\|[^|]*\\|[ \\t]*(\\d+)/(\\d+|\\?)[ \\t]*\\[)?",
    [PAT_NEMO1_KV] = "[,\\[]([^=,\\[\\]]*)=([^,\\[\\]]*)",
    [PAT_MB_ANCHOR] = "^.*\\K\\biteration[ \\t]+(\\d+)[ \\t]*/[ \\t]*(\\d+)(?=[ \\t|]|$)",
    [PAT_AM_ANCHOR] = "^.*\\K\\bstep[ \\t]+(\\d+)[ \\t]*\\|",
    [PAT_AM_KV] = "(?:^|\\|)[ \\t]*([A-Za-z_][A-Za-z0-9_]*):?[ \\t]+([^|]*)", /* older builds: "mem: 11.66 GiB" */
    /* Megatron-LM report_memory: "[Rank 0] (after 10 iterations) memory (MB) | allocated: ... | max allocated: ...",
     * older "after 5 iterations memory (MB) | ..." (printed once, after the first logged iteration). */
    [PAT_MB_MEM] = "\\bafter[ \\t]+(\\d+)[ \\t]+iterations\\)?[ \\t]+memory \\([MG]B\\)",
};

static pcre2_code *scan_re[PAT_COUNT];
static int scan_jit[PAT_COUNT]; /* JIT-compiled: matched with pcre2_jit_match (no interpreter dispatch) */

/* The "^.*\\K" patterns find the last position where the rest R matches; R starts with this literal.
 * scan_match first tries R alone (compiled anchored, scan_re_last) at the literal's last occurrence
 * in the whole line (so \\b sees the byte before): the same match without backtracking over the
 * line; the full pattern runs only when R fails there. */
static const char *const scan_pat_last[PAT_COUNT] = {
    [PAT_NEMO2_ANCHOR] = "Training epoch ",
    [PAT_DELTA] = "Step ",
    [PAT_NEMO1_ANCHOR] = "Epoch ",
    [PAT_MB_ANCHOR] = "iteration",
    [PAT_AM_ANCHOR] = "step",
};
static pcre2_code *scan_re_last[PAT_COUNT];
static int scan_use_avx2; /* the candidate search may use AVX2 (set once) */
static locale_t scan_c_locale;
static pthread_once_t scan_once = PTHREAD_ONCE_INIT;
static enum np_status scan_init_status;
static char scan_init_msg[200];

static void scan_keys_init(void);

static void scan_init_once(void)
{
    scan_keys_init();
#if defined(__x86_64__) && defined(__GNUC__) && !defined(SCAN_NO_AVX2)
    scan_use_avx2 = __builtin_cpu_supports("avx2");
#endif
    scan_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!scan_c_locale) {
        scan_init_status = NP_E_NOMEM;
        snprintf(scan_init_msg, sizeof scan_init_msg, "cannot create the C locale");
        return;
    }
    for (int i = 0; i < PAT_COUNT; i++) {
        int code;
        PCRE2_SIZE off;
        scan_re[i] = pcre2_compile((PCRE2_SPTR)scan_pat_src[i], PCRE2_ZERO_TERMINATED,
                                   PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF, &code,
                                   &off, NULL);
        if (!scan_re[i]) {
            char msg[120];
            pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, sizeof msg);
            scan_init_status = NP_E_INTERNAL;
            snprintf(scan_init_msg, sizeof scan_init_msg, "pattern %d, offset %zu: %s", i,
                     (size_t)off, msg);
            return;
        }
#ifndef SCAN_NO_JIT
        /* Without JIT (unsupported CPU, W^X policy) pcre2_match interprets. */
        scan_jit[i] = pcre2_jit_compile(scan_re[i], PCRE2_JIT_COMPLETE) == 0;
#endif
        const char *lead = "^.*\\K";
        if (scan_pat_last[i] && strncmp(scan_pat_src[i], lead, strlen(lead)) == 0) {
            /* best effort: without it the full pattern does the work */
            scan_re_last[i] = pcre2_compile((PCRE2_SPTR)(scan_pat_src[i] + strlen(lead)), PCRE2_ZERO_TERMINATED,
                                            PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF | PCRE2_ANCHORED,
                                            &code, &off, NULL);
#ifndef SCAN_NO_JIT
            if (scan_re_last[i])
                (void)pcre2_jit_compile(scan_re_last[i], PCRE2_JIT_COMPLETE);
#endif
        }
    }
}

enum np_status np_scan_init(struct np_error *err)
{
    pthread_once(&scan_once, scan_init_once);
    if (scan_init_status != NP_OK)
        return np_error_set(err, scan_init_status, "scan", 0, 0, "cannot compile patterns: %s",
                            scan_init_msg);
    return NP_OK;
}

const char *np_log_gen_name(enum np_log_gen gen)
{
    switch (gen) {
    case NP_GEN_NEMO2: return "nemo2";
    case NP_GEN_NEMO1: return "nemo1";
    case NP_GEN_DELTA: return "delta";
    case NP_GEN_MBRIDGE: return "mbridge";
    case NP_GEN_AUTOMODEL: return "automodel";
    case NP_GEN_AMBENCH: return "automodel-bench";
    case NP_GEN_DFMAM: return "dfm-automodel";
    case NP_GEN_UNKNOWN: break;
    }
    return "unknown";
}

/* ---- numbers: strict, whole token, C locale ---------------------------- */

static int scan_isdigit(char c) { return c >= '0' && c <= '9'; }

static int scan_isword(char c)
{
    return scan_isdigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

__attribute__((always_inline)) static inline void scan_trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Decimal or scientific number, nan, inf; anything else (hex, trailing junk,
 * NUL bytes, empty) fails.  Returns 1 and sets *out on success. */
static int scan_parse_double(const char *s, size_t n, double *out)
{
    char tmp[64];
    size_t i = 0;
    if (n == 0 || n >= sizeof tmp)
        return 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    if (i < n && !scan_isdigit(s[i]) && s[i] != '.') {
        double v;
        size_t rest = n - i;
        if (rest == 3 && strncasecmp(s + i, "nan", 3) == 0)
            v = NAN;
        else if ((rest == 3 && strncasecmp(s + i, "inf", 3) == 0) ||
                 (rest == 8 && strncasecmp(s + i, "infinity", 8) == 0))
            v = INFINITY;
        else
            return 0;
        *out = s[0] == '-' ? -v : v;
        return 1;
    }
    /* One pass validates and gathers the digits.  When they fit in 2^53 and the power of ten is exact
     * (|e| <= 22), one IEEE multiply or divide rounds correctly (Clinger's fast path); else strtod.
     * fuzz/scan_fuzz.c compares every accepted number with strtod. */
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t m = 0;
    int e = 0, nd = 0, fast = 1;
    size_t digits = 0;
    for (; i < n && scan_isdigit(s[i]); i++) {
        digits++;
        if (nd == 0 && s[i] == '0')
            continue;
        if (++nd > 15)
            fast = 0;
        else
            m = m * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < n && s[i] == '.') {
        for (i++; i < n && scan_isdigit(s[i]); i++) {
            digits++;
            if (nd == 0 && s[i] == '0') {
                e--;
                continue;
            }
            if (++nd > 15) {
                fast = 0;
                continue;
            }
            m = m * 10 + (uint64_t)(s[i] - '0');
            e--;
        }
    }
    if (digits == 0)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int en = 0, eneg = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        size_t ed = 0;
        for (; i < n && scan_isdigit(s[i]); i++, ed++) {
            if (en > 1000)
                fast = 0;
            else
                en = en * 10 + (s[i] - '0');
        }
        if (ed == 0)
            return 0;
        e += eneg ? -en : en;
    }
    if (i != n)
        return 0;
    if (m == 0)
        e = 0;
    if (fast && e >= -22 && e <= 22) {
        double v = (double)m;
        v = e < 0 ? v / p10[-e] : v * p10[e];
        *out = s[0] == '-' ? -v : v;
        return 1;
    }
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    double v = strtod_l(tmp, &end, scan_c_locale);
    if (end != tmp + n)
        return 0;
    *out = v;
    return 1;
}

/* NaN and infinity as writers print them that strtod does not read whole: Lightning's progress bar pads a
 * float to 5 characters (Lightning-AI/pytorch-lightning src/lightning/pytorch/callbacks/progress/
 * tqdm_progress.py Tqdm.format_num, _PAD_SIZE = 5 @03f57f9c): "nan" -> "nan.0", "inf" -> "inf.0", "-inf" ->
 * "-inf."; MSVC's printf writes "1.#QNAN", "-1.#IND", "1.#INF" (with trailing zeros under %f: "1.#QNAN0").
 * strtod's own spellings (nan, -nan, NaN, inf, -inf, Infinity) are scan_parse_double's; "nan(1)", which no
 * writer prints, is refused. */
static int scan_parse_nonfinite(const char *s, size_t n, double *out)
{
    static const struct {
        const char *word;
        size_t len;
        double v;
    } words[] = {{"nan", 3, NAN}, {"inf", 3, INFINITY}, {"infinity", 8, INFINITY}, {"1.#qnan", 7, NAN},
                 {"1.#snan", 7, NAN}, {"1.#ind", 6, NAN}, {"1.#inf", 6, INFINITY}};
    size_t i = 0;
    if (n > 0 && (s[0] == '+' || s[0] == '-'))
        i++;
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t len = words[w].len;
        if (n - i < len || strncasecmp(s + i, words[w].word, len) != 0)
            continue;
        size_t j = i + len;
        int msvc = words[w].word[1] == '.';
        if (!msvc && j < n && s[j] == '.') /* Lightning's pad: a '.' then zeros */
            j++;
        if (!msvc && j == i + len)
            continue; /* no pad: strtod's spelling (or junk after it) */
        while (j < n && s[j] == '0')
            j++;
        if (j != n)
            continue;
        *out = s[0] == '-' ? -words[w].v : words[w].v;
        return 1;
    }
    return 0;
}

/* A value that may be a NaN or an infinity in any spelling its writer uses. */
static int scan_parse_value(const char *s, size_t n, double *out)
{
    return scan_parse_double(s, n, out) || scan_parse_nonfinite(s, n, out);
}

/* A non-negative whole count, also written as a whole float ("99.00"). */
static int scan_parse_count(const char *s, size_t n, long *out)
{
    if (n && n <= 15) { /* plain digits, the usual case: the same value without the double */
        long x = 0;
        size_t i = 0;
        while (i < n && scan_isdigit(s[i]))
            x = x * 10 + (s[i++] - '0');
        if (i == n) {
            *out = x;
            return 1;
        }
    }
    double v;
    if (!scan_parse_double(s, n, &v) || !isfinite(v) || v < 0 || v > 1e15 || v != floor(v))
        return 0;
    *out = (long)v;
    return 1;
}

/* Digits only (from a regex group), at most 15 of them. */
static int scan_parse_digits(const char *s, size_t n, long *out)
{
    long v = 0;
    if (n == 0 || n > 15)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!scan_isdigit(s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* ---- scanner state ----------------------------------------------------- */

struct scan_join;

struct scan_state {
    struct np_step *steps; /* current (last) run */
    size_t n, cap;
    size_t runs;
    long last_iter[SCAN_NGEN]; /* last known iteration per generation in the current run */
    int ckpt_save, ckpt_load;
    struct np_step side;   /* the last side line that named no step known here (tail mode joins it later) */
    int has_side;
    char *scratch; /* ANSI-stripped copy of a line */
    size_t scratch_cap;
    pcre2_match_data *md;
    PCRE2_SIZE ov[8];      /* the last match: start, end, groups 1-3 (PCRE2_UNSET when absent) */
    unsigned skip;         /* fields (1u << enum scan_field) whose values are not stored (lean tail mode) */
    enum np_status status; /* sticky failure (allocation) */
    /* a Megatron record wrapped over several lines (scan_mb_wrapped): the bytes around the line parsed, contiguous
     * in the file (ctx_lo a line start at file offset ctx_off), the pieces before ctx_lo (back, streaming), and a
     * record whose end lies past ctx_hi, completed by the next bytes fed (rec, rec_open) */
    const char *ctx_lo, *ctx_hi;
    uint64_t ctx_off;
    int tail;              /* tail mode's one-line parser: ctx_hi is the end of the lines, no record waits */
    int more_before;       /* tail mode: the file has bytes before ctx_lo not read yet */
    int ctx_cut;           /* tail mode: a record reached ctx_lo: read more and parse the line again */
    char *back;
    size_t back_len, back_cap;
    uint64_t back_off;
    struct scan_join *rec;
    int rec_open;
};

static enum np_status scan_state_init(struct scan_state *st)
{
    memset(st, 0, sizeof *st);
    for (int g = 0; g < SCAN_NGEN; g++)
        st->last_iter[g] = -1;
    st->md = pcre2_match_data_create(8, NULL);
    return st->md ? NP_OK : NP_E_NOMEM;
}

static void scan_join_free(struct scan_join *j);

static void scan_state_free(struct scan_state *st)
{
    free(st->steps);
    free(st->scratch);
    free(st->back);
    scan_join_free(st->rec);
    pcre2_match_data_free(st->md);
    memset(st, 0, sizeof *st);
}

static void scan_step_init(struct np_step *s, enum np_log_gen gen, uint64_t offset)
{
    s->iteration = -1;
    s->total = -1;
    s->step_time_s = NAN;
    s->loss = NAN;
    s->global_batch_size = -1;
    s->peak_memory_bytes = NAN;
    s->tflops_per_gpu = NAN;
    s->consumed_samples = NAN;
    s->tokens_per_s = NAN;
    s->tokens_per_s_per_gpu = NAN;
    s->energy_j_per_gpu = NAN;
    s->power_w_per_gpu = NAN;
    s->nan_seen = 0;
    s->two_times = 0;
    s->bar_short = 0;
    s->gen = gen;
    s->offset = offset;
    s->side = 0;
}

/* A redraw of the same step: the newer line wins, the older fills its gaps. */
static void scan_step_merge(struct np_step *old, const struct np_step *s)
{
    struct np_step m = *s;
    if (m.total < 0) m.total = old->total;
    if (isnan(m.step_time_s) && !isnan(old->step_time_s)) m.step_time_s = old->step_time_s;
    if (isnan(m.loss) && !isnan(old->loss)) m.loss = old->loss;
    if (m.global_batch_size < 0) m.global_batch_size = old->global_batch_size;
    if (isnan(m.peak_memory_bytes)) m.peak_memory_bytes = old->peak_memory_bytes;
    if (isnan(m.tflops_per_gpu)) m.tflops_per_gpu = old->tflops_per_gpu;
    if (isnan(m.consumed_samples)) m.consumed_samples = old->consumed_samples;
    if (isnan(m.tokens_per_s)) m.tokens_per_s = old->tokens_per_s;
    if (isnan(m.tokens_per_s_per_gpu)) m.tokens_per_s_per_gpu = old->tokens_per_s_per_gpu;
    if (isnan(m.energy_j_per_gpu)) m.energy_j_per_gpu = old->energy_j_per_gpu;
    if (isnan(m.power_w_per_gpu)) m.power_w_per_gpu = old->power_w_per_gpu;
    m.nan_seen = s->nan_seen || old->nan_seen;
    m.two_times = isnan(s->step_time_s) ? old->two_times : s->two_times;
    m.side = s->side && old->side;
    if (s->side && !old->side) { /* a side line adds its fields; the step line stays the step */
        m.offset = old->offset;
        m.step_time_s = old->step_time_s;
    }
    *old = m;
}

/* Run bookkeeping: an iteration at or below the last one of the same
 * generation starts a new run; a repeat of the previous step collapses. */
static void scan_add_step(struct scan_state *st, const struct np_step *s)
{
    int g = (int)s->gen;
    if (st->status != NP_OK)
        return;
    if (s->side) { /* only ever joins the step it names, when that is the last one */
        struct np_step *last = st->n > 0 ? &st->steps[st->n - 1] : NULL;
        if (last && !last->side && last->gen == s->gen && last->iteration == s->iteration) {
            scan_step_merge(last, s);
        } else {
            st->side = *s;
            st->has_side = 1;
        }
        return;
    }
    if (st->n > 0 && s->iteration >= 0) {
        struct np_step *last = &st->steps[st->n - 1];
        if (last->gen == s->gen && last->iteration == s->iteration) {
            scan_step_merge(last, s);
            return;
        }
        if (st->last_iter[g] >= 0 && s->iteration <= st->last_iter[g]) {
            st->n = 0;
            st->runs++;
            for (int i = 0; i < SCAN_NGEN; i++)
                st->last_iter[i] = -1;
        }
    }
    if (st->runs == 0)
        st->runs = 1;
    if (st->n == st->cap) {
        size_t ncap = st->cap ? st->cap * 2 : 64;
        struct np_step *p = realloc(st->steps, ncap * sizeof *p);
        if (!p) {
            st->status = NP_E_NOMEM;
            return;
        }
        st->steps = p;
        st->cap = ncap;
    }
    st->steps[st->n++] = *s;
    if (s->iteration >= 0)
        st->last_iter[g] = s->iteration;
}

/* ---- field extraction -------------------------------------------------- */

enum scan_field {
    F_LOSS = 1, F_TIME_S, F_TIME_MS, F_GBS, F_GSTEP, F_PEAKMEM, F_CONSUMED, F_TFLOPS,
    F_GRADNORM, F_NANITERS, F_MEM_UNIT, F_TPS, F_PEAKMEM_ALLOC, F_MAXRES_MB, F_MAXALLOC_MB, F_MAXRES_GB,
    F_MAXALLOC_GB, F_ENERGY, F_POWER
};

/* A step number as printed: value, and the rounding step of tqdm's short form (0 = exact).  tqdm writes a
 * number as f"{n:.3g}" whenever that is shorter (tqdm.format_num): "global_step=2e+3" is 1995..2004,
 * "2.56e+5" is 255500..256499.  Lightning pads the exact form ("99.00", "5.000", "6023.0"). */
struct scan_gstep {
    long value; /* -1: none */
    long unit;  /* 10^(exponent-2) for the e-form, 0 exact */
};

struct scan_key {
    const char *name;
    size_t len;
    enum scan_field field;
};
#define SCAN_KEY(lit, f) {lit, sizeof lit - 1, f}

/* NeMo 2.0 ProgressPrinter ("key: v") and NeMo 1.0 tqdm postfix ("key=v"). */
static const struct scan_key scan_keys_nemo[] = {
    SCAN_KEY("train_step_timing in s", F_TIME_S),
    SCAN_KEY("reduced_train_loss", F_LOSS),
    SCAN_KEY("global_step", F_GSTEP),
    SCAN_KEY("global_batch_size", F_GBS),
    SCAN_KEY("consumed_samples", F_CONSUMED),
    SCAN_KEY("peak_memory_usage", F_PEAKMEM),
    SCAN_KEY("max_memory_reserved", F_PEAKMEM),       /* newer NeMo 2.0 builds */
    SCAN_KEY("max_memory_allocated", F_PEAKMEM_ALLOC), /* used when no reserved figure is printed */
    SCAN_KEY("TFLOPS_per_GPU", F_TFLOPS),
    SCAN_KEY("grad_norm", F_GRADNORM),
    {NULL, 0, 0},
};

static const struct scan_key scan_keys_mbridge[] = {
    SCAN_KEY("elapsed time per iteration (ms)", F_TIME_MS),
    SCAN_KEY("lm loss", F_LOSS),
    SCAN_KEY("consumed samples", F_CONSUMED),
    SCAN_KEY("global batch size", F_GBS),
    SCAN_KEY("throughput per GPU (TFLOP/s/GPU)", F_TFLOPS),
    SCAN_KEY("grad norm", F_GRADNORM),
    SCAN_KEY("number of nan iterations", F_NANITERS),
    /* --log-energy (NVIDIA/Megatron-LM megatron/training/training.py:3584-3588 @d98e8a6, NVIDIA-NeMo/Megatron-Bridge
     * src/megatron/bridge/training/utils/train_utils.py:1098-1102 @067f987): f"{energy:.1f}", f"{power:.1f}" */
    SCAN_KEY("energy per GPU (J/iter/GPU)", F_ENERGY),
    SCAN_KEY("power per GPU (W/GPU)", F_POWER),
    {NULL, 0, 0},
};

/* Megatron-LM report_memory, MiB (NVIDIA/Megatron-LM megatron/training/utils/common_utils.py:313-334
 * @d98e8a6), and Megatron-Bridge's, GB of 1e9 bytes (NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/
 * utils/train_utils.py:1146-1209 @067f987): the reserved high-water mark, else the allocated one. */
static const struct scan_key scan_keys_mbmem[] = {
    SCAN_KEY("max reserved", F_MAXRES_MB),
    SCAN_KEY("max allocated", F_MAXALLOC_MB),
    SCAN_KEY("mem-max-reserved-gigabytes", F_MAXRES_GB),
    SCAN_KEY("mem-max-allocated-gigabytes", F_MAXALLOC_GB),
    {NULL, 0, 0},
};

static const struct scan_key scan_keys_automodel[] = {
    SCAN_KEY("step", F_GSTEP),
    SCAN_KEY("loss", F_LOSS),
    SCAN_KEY("grad_norm", F_GRADNORM),
    SCAN_KEY("mem", F_MEM_UNIT),
    SCAN_KEY("tps", F_TPS),
    {NULL, 0, 0},
};

/* Bit n set when a key of scan_keys_nemo is n bytes long (set by np_scan_init; 0: not known). */
static _Atomic uint64_t scan_nemo_lengths;

static void scan_keys_init(void)
{
    uint64_t m = 0;
    for (const struct scan_key *k = scan_keys_nemo; k->name; k++)
        m |= k->len < 64 ? (uint64_t)1 << k->len : 0;
    atomic_store_explicit(&scan_nemo_lengths, m, memory_order_relaxed);
}

static enum scan_field scan_lookup(const struct scan_key *keys, const char *k, size_t n)
{
    scan_trim(&k, &n);
    /* most segments of a step line are keys of no table ("lr", "memory_allocated"...): their length
     * rules out most of them before any comparison */
    uint64_t lengths = keys == scan_keys_nemo ? atomic_load_explicit(&scan_nemo_lengths, memory_order_relaxed) : 0;
    if (lengths && (n >= 64 || !(lengths >> n & 1)))
        return 0;
    for (; keys->name; keys++)
        if (keys->len == n && keys->name[0] == k[0] && memcmp(keys->name, k, n) == 0)
            return keys->field;
    return 0;
}

/* "61.23 GiB" -> bytes; a missing or unknown unit fails. */
static int scan_parse_mem(const char *v, size_t n, double *out)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0}, {"TiB", 1099511627776.0},
                 {"GB", 1e9},           {"MB", 1e6},        {"B", 1.0}};
    size_t i = 0;
    while (i < n && v[i] != ' ' && v[i] != '\t')
        i++;
    const char *u = v + i;
    size_t un = n - i;
    double x;
    scan_trim(&u, &un);
    if (!scan_parse_double(v, i, &x))
        return 0;
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
        if (strlen(units[k].unit) == un && memcmp(units[k].unit, u, un) == 0) {
            *out = x * units[k].scale;
            return 1;
        }
    return 0;
}

/* "104882.31(13110.29/gpu)" or "104882.31". */
static void scan_parse_tps(struct np_step *s, const char *v, size_t n)
{
    const char *paren = memchr(v, '(', n);
    size_t head = paren ? (size_t)(paren - v) : n;
    const char *h = v;
    double x;
    scan_trim(&h, &head);
    if (scan_parse_double(h, head, &x))
        s->tokens_per_s = x;
    if (!paren)
        return;
    const char *in = paren + 1;
    size_t inn = (size_t)(v + n - in);
    if (inn < 6 || memcmp(in + inn - 5, "/gpu)", 5) != 0)
        return;
    inn -= 5;
    scan_trim(&in, &inn);
    if (scan_parse_double(in, inn, &x))
        s->tokens_per_s_per_gpu = x;
}

/* Rounding step of a count printed in e-form ("2e+3" -> 10, "2.56e+5" -> 1000), 0 when exact (a zero mantissa,
 * "0e+3", is 0 whatever the exponent: tqdm prints 0 as "0"). */
static long scan_count_unit(const char *v, size_t n)
{
    const char *e = memchr(v, 'e', n);
    if (!e)
        e = memchr(v, 'E', n);
    if (!e)
        return 0;
    const char *d = v;
    while (d < e && (*d < '1' || *d > '9'))
        d++;
    if (d == e)
        return 0;
    long x;
    const char *p = e + 1;
    size_t rest = (size_t)(v + n - p);
    if (rest && (*p == '+' || *p == '-')) {
        if (*p == '-')
            return 0; /* a negative exponent is no whole count */
        p++;
        rest--;
    }
    if (!scan_parse_digits(p, rest, &x) || x > 15)
        return 0;
    long unit = 1;
    for (long i = 2; i < x; i++)
        unit *= 10;
    return unit;
}

/* AMD's Primus prints two figures in one Megatron field, the iteration's own and a running average:
 * "elapsed time per iteration (ms): 13372.8/13364.7", "throughput per GPU (TFLOP/s/GPU): 567.6/568.0"
 * (AMD-AGI/Primus primus/backends/megatron/patches/training_log/print_rank_last_patches.py l.363-393
 * @fd1eeab, f"{elapsed_value:.1f}/{avg_elapsed_ms:.1f}").  The first is the step's: *out, when both parse. */
static int scan_first_of_two(const char *v, size_t n, double *out)
{
    const char *slash = memchr(v, '/', n);
    if (!slash)
        return 0;
    const char *a = v, *b = slash + 1;
    size_t an = (size_t)(slash - v), bn = n - an - 1;
    double second;
    scan_trim(&a, &an);
    scan_trim(&b, &bn);
    return scan_parse_value(b, bn, &second) && scan_parse_value(a, an, out);
}

/* Store one field; returns 1 when its value parsed. */
static int scan_set_field(struct np_step *s, enum scan_field f, const char *v, size_t n, struct scan_gstep *gstep)
{
    double x;
    long c;
    scan_trim(&v, &n);
    switch (f) {
    case F_LOSS:
    case F_TIME_S:
    case F_TIME_MS:
    case F_GRADNORM:
        if (!scan_parse_value(v, n, &x)) {
            if (f != F_TIME_MS || !scan_first_of_two(v, n, &x))
                return 0;
            s->two_times = 1;
        }
        if (!isfinite(x))
            s->nan_seen = 1;
        if (f == F_LOSS)
            s->loss = x;
        else if (f == F_TIME_S)
            s->step_time_s = x;
        else if (f == F_TIME_MS)
            s->step_time_s = x / 1000.0;
        return 1;
    case F_PEAKMEM:
    case F_PEAKMEM_ALLOC:
    case F_MAXRES_MB:
    case F_MAXALLOC_MB:
    case F_MAXRES_GB:
    case F_MAXALLOC_GB:
    case F_CONSUMED:
    case F_TFLOPS:
    case F_ENERGY:
    case F_POWER:
        if (!scan_parse_double(v, n, &x) && (f != F_TFLOPS || !scan_first_of_two(v, n, &x)))
            return 0;
        if (f == F_MAXRES_MB || f == F_MAXALLOC_MB)
            x *= 1048576.0; /* report_memory divides by 1024 * 1024 */
        else if (f == F_MAXRES_GB || f == F_MAXALLOC_GB)
            x *= 1e9;
        if (f == F_PEAKMEM || f == F_MAXRES_MB || f == F_MAXRES_GB)
            s->peak_memory_bytes = x;
        else if (f == F_PEAKMEM_ALLOC || f == F_MAXALLOC_MB || f == F_MAXALLOC_GB) {
            if (isnan(s->peak_memory_bytes))
                s->peak_memory_bytes = x;
        }
        else if (f == F_CONSUMED)
            s->consumed_samples = x;
        else if (f == F_ENERGY)
            s->energy_j_per_gpu = x;
        else if (f == F_POWER)
            s->power_w_per_gpu = x;
        else
            s->tflops_per_gpu = x;
        return 1;
    case F_NANITERS:
    case F_GBS:
    case F_GSTEP:
        if (!scan_parse_count(v, n, &c))
            return 0;
        if (f == F_NANITERS && c > 0)
            s->nan_seen = 1;
        else if (f == F_GBS)
            s->global_batch_size = c;
        else if (f == F_GSTEP) {
            gstep->value = c;
            gstep->unit = scan_count_unit(v, n);
        }
        return 1;
    case F_MEM_UNIT:
        if (!scan_parse_mem(v, n, &x))
            return 0;
        s->peak_memory_bytes = x;
        return 1;
    case F_TPS:
        scan_parse_tps(s, v, n);
        return !isnan(s->tokens_per_s);
    }
    return 0;
}

/* 1 when scan_parse_double cannot make a NaN or an infinity of v: only digits, '.', signs and an exponent
 * of at most two digits (or too long to parse at all). */
static int scan_surely_finite(const char *v, size_t n)
{
    scan_trim(&v, &n);
    if (n >= 64)
        return 1; /* scan_parse_double refuses it */
    size_t i = 0;
    while (i < n && (scan_isdigit(v[i]) || v[i] == '.' || v[i] == '+' || v[i] == '-'))
        i++;
    if (i == n)
        return 1;
    if (v[i] != 'e' && v[i] != 'E')
        return 0;
    i++;
    if (i < n && (v[i] == '+' || v[i] == '-'))
        i++;
    size_t d = i;
    while (i < n && scan_isdigit(v[i]))
        i++;
    return i == n && i - d <= 2;
}

/* scan_set_field unless f is one of the fields to skip (lean mode: 1u << f in skip; the field the line is
 * recognised by is never skipped).  A skipped loss or grad norm is still parsed when it could be a NaN or an
 * infinity: the NaN flag stays exact. */
static int scan_set_field_lean(struct np_step *s, enum scan_field f, const char *v, size_t n,
                               struct scan_gstep *gstep, unsigned skip, enum scan_field want)
{
    if (!(skip >> f & 1u) || f == want)
        return scan_set_field(s, f, v, n, gstep);
    if ((f == F_LOSS || f == F_GRADNORM) && !scan_surely_finite(v, n)) {
        struct np_step scratch;
        scan_step_init(&scratch, NP_GEN_UNKNOWN, 0);
        scan_set_field(&scratch, f, v, n, gstep);
        s->nan_seen |= scratch.nan_seen;
    }
    return 0;
}

/* Copy the match data's first 4 pairs to st->ov (the hand-written matchers below fill it directly). */
static int scan_took(struct scan_state *st, int rc)
{
    if (rc <= 0)
        return 0;
    memcpy(st->ov, pcre2_get_ovector_pointer(st->md), sizeof st->ov);
    return 1;
}

static int scan_match_at(struct scan_state *st, enum scan_pat p, const char *s, size_t n, size_t off)
{
    int rc = scan_jit[p] ? pcre2_jit_match(scan_re[p], (PCRE2_SPTR)s, n, off, 0, st->md, NULL)
                         : pcre2_match(scan_re[p], (PCRE2_SPTR)s, n, off, 0, st->md, NULL);
    return scan_took(st, rc);
}

/* Last occurrence of lit (length ln) in s[0..n), or NULL. */
static const char *scan_memrmem(const char *s, size_t n, const char *lit, size_t ln)
{
    if (n < ln)
        return NULL;
    for (const char *p = s + n - ln;; p--) {
        p = memrchr(s, lit[0], (size_t)(p - s) + 1);
        if (!p)
            return NULL;
        if (memcmp(p, lit, ln) == 0)
            return p;
        if (p == s)
            return NULL;
    }
}

/* PCRE2 only (the reference the fast paths below must agree with; fuzz/scan_fuzz.c compares them). */
static int scan_match_pcre(struct scan_state *st, enum scan_pat p, const char *s, size_t n, size_t off)
{
    if (scan_re_last[p] && off == 0) {
        size_t ln = strlen(scan_pat_last[p]);
        const char *q = scan_memrmem(s, n, scan_pat_last[p], ln);
        if (!q)
            return 0; /* every match holds the literal */
        if (scan_took(st, pcre2_match(scan_re_last[p], (PCRE2_SPTR)s, n, (size_t)(q - s), 0, st->md, NULL)))
            return 1; /* the last literal starts the last match: the full pattern's answer */
    }
    return scan_match_at(st, p, s, n, off);
}

static void scan_ov_set(struct scan_state *st, size_t m0, size_t m1, size_t k0, size_t k1, size_t v0, size_t v1)
{
    st->ov[0] = m0, st->ov[1] = m1, st->ov[2] = k0, st->ov[3] = k1, st->ov[4] = v0, st->ov[5] = v1;
    st->ov[6] = st->ov[7] = PCRE2_UNSET;
}

/* PAT_PIPE_KV "(?:^|\\|)([^|:]*):([^|]*)" by hand: the leftmost match at or after off (the only
 * backtracking choice, ^ before '|' at 0, fails at once when s[0] is '|').  The step line's ten pairs
 * cost ten JIT calls otherwise, the largest share of default mode's time. */
static int scan_kv_pipe(struct scan_state *st, const char *s, size_t n, size_t off)
{
    size_t p = off;
    while (p < n) {
        size_t k;
        if (s[p] == '|') {
            k = p + 1;
        } else if (p == 0) {
            k = 0;
        } else {
            const char *bar = memchr(s + p, '|', n - p);
            if (!bar)
                return 0;
            p = (size_t)(bar - s);
            continue;
        }
        /* the key runs to the first ':' before the next '|'; the value from there to that '|' */
        const char *bar = memchr(s + k, '|', n - k);
        size_t e = bar ? (size_t)(bar - s) : n;
        const char *colon = memchr(s + k, ':', e - k);
        if (colon) {
            size_t q = (size_t)(colon - s);
            scan_ov_set(st, p, e, k, q, q + 1, e);
            return 1;
        }
        if (!bar)
            return 0; /* no '|' left: no later start */
        p = e; /* the '|' that ended the key starts the next try */
    }
    return 0;
}

static int scan_nemo1_stop(char c) { return c == ',' || c == '[' || c == ']'; }

/* PAT_NEMO1_KV "[,\\[]([^=,\\[\\]]*)=([^,\\[\\]]*)" by hand (no backtracking choice). */
static int scan_kv_nemo1(struct scan_state *st, const char *s, size_t n, size_t off)
{
    for (size_t p = off; p < n; p++) {
        if (s[p] != ',' && s[p] != '[')
            continue;
        size_t q = p + 1;
        while (q < n && s[q] != '=' && !scan_nemo1_stop(s[q]))
            q++;
        if (q < n && s[q] == '=') {
            size_t e = q + 1;
            while (e < n && !scan_nemo1_stop(s[e]))
                e++;
            scan_ov_set(st, p, e, p + 1, q, q + 1, e);
            return 1;
        }
        p = q - 1; /* q stopped on ',', '[', ']' or the end: the next try starts there */
    }
    return 0;
}

static size_t scan_digits_at(const char *s, size_t n, size_t i)
{
    while (i < n && scan_isdigit(s[i]))
        i++;
    return i;
}

/* PAT_NEMO2_ANCHOR's tail "Training epoch (\\d+), iteration (\\d+)/(\\d+)(?=[ \\t|]|$)" anchored at q
 * (greedy digits never give back: the byte after each run must be a non-digit). */
static int scan_nemo2_at(struct scan_state *st, const char *s, size_t n, size_t q)
{
    static const char lit[] = "Training epoch ", mid[] = ", iteration ";
    size_t a = q + sizeof lit - 1, ae, b, be, c, ce;
    if (a > n || memcmp(s + q, lit, sizeof lit - 1) != 0)
        return 0;
    if ((ae = scan_digits_at(s, n, a)) == a || n - ae < sizeof mid - 1 || memcmp(s + ae, mid, sizeof mid - 1) != 0)
        return 0;
    b = ae + sizeof mid - 1;
    if ((be = scan_digits_at(s, n, b)) == b || be >= n || s[be] != '/')
        return 0;
    c = be + 1;
    if ((ce = scan_digits_at(s, n, c)) == c || (ce < n && s[ce] != ' ' && s[ce] != '\t' && s[ce] != '|'))
        return 0;
    st->ov[0] = q, st->ov[1] = ce, st->ov[2] = a, st->ov[3] = ae, st->ov[4] = b, st->ov[5] = be;
    st->ov[6] = c, st->ov[7] = ce;
    return 1;
}

/* Hand-written matchers for the hot patterns, PCRE2 for the rest and whenever a fast one cannot decide. */
static int scan_match(struct scan_state *st, enum scan_pat p, const char *s, size_t n, size_t off)
{
    switch (p) {
    case PAT_PIPE_KV: return scan_kv_pipe(st, s, n, off);
    case PAT_NEMO1_KV: return scan_kv_nemo1(st, s, n, off);
    case PAT_NEMO2_ANCHOR:
        if (off == 0) {
            const char *q = scan_memrmem(s, n, scan_pat_last[p], strlen(scan_pat_last[p]));
            if (!q)
                return 0;
            if (scan_nemo2_at(st, s, n, (size_t)(q - s)))
                return 1;
            return scan_match_at(st, p, s, n, off);
        }
        break;
    default: break;
    }
    return scan_match_pcre(st, p, s, n, off);
}

/* Group g of the last match as (ptr, len); 0 when it did not take part. */
static int scan_group(struct scan_state *st, const char *s, int g, const char **gp, size_t *gn)
{
    const PCRE2_SIZE *ov = st->ov;
    if (ov[2 * g] == PCRE2_UNSET)
        return 0;
    *gp = s + ov[2 * g];
    *gn = ov[2 * g + 1] - ov[2 * g];
    return 1;
}

static long scan_group_digits(struct scan_state *st, const char *s, int g)
{
    const char *p;
    size_t n;
    long v;
    if (!scan_group(st, s, g, &p, &n) || !scan_parse_digits(p, n, &v))
        return -1;
    return v;
}

/* PAT_PIPE_KV's pairs without the match bookkeeping: the '|'-separated segments of s[0..n), each
 * split at its first ':' (segments without one hold no pair), as scan_kv_pipe finds them one by one.
 * The NeMo 2.0 step line is parsed here; it is most of default mode's parsing. */
struct scan_seg {
    const struct scan_key *keys;
    struct np_step *step;
    struct scan_gstep *gstep;
    enum scan_field want;
    unsigned skip;
    int found;
};

/* Segment s[p, e) with its first ':' at q (q == e: none). */
static void scan_seg_pair(struct scan_seg *g, const char *s, size_t p, size_t q, size_t e)
{
    if (q >= e)
        return;
    enum scan_field f = scan_lookup(g->keys, s + p, q - p);
    if (f && scan_set_field_lean(g->step, f, s + q + 1, e - q - 1, g->gstep, g->skip, g->want) && f == g->want)
        g->found = 1;
}

static int scan_pairs_pipe(const struct scan_key *keys, const char *s, size_t n, struct np_step *step,
                           struct scan_gstep *gstep, enum scan_field want, unsigned skip)
{
    struct scan_seg g = {keys, step, gstep, want, skip, 0};
    size_t p = 0, q = SIZE_MAX, i = 0; /* the segment's start, its first ':' */
#if defined(__SSE2__) && !defined(SCAN_NO_SIMD)
    /* the separators of 16 bytes at a time (a segment is ~25 bytes: two memchr calls each cost more) */
    const __m128i c_bar = _mm_set1_epi8('|'), c_col = _mm_set1_epi8(':');
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, c_bar), _mm_cmpeq_epi8(v, c_col)));
        while (m) {
            size_t j = i + (size_t)__builtin_ctz(m);
            m &= m - 1;
            if (s[j] == '|') {
                scan_seg_pair(&g, s, p, q < j ? q : j, j);
                p = j + 1;
                q = SIZE_MAX;
            } else if (q == SIZE_MAX) {
                q = j;
            }
        }
    }
#endif
    for (; i < n; i++) {
        if (s[i] == '|') {
            scan_seg_pair(&g, s, p, q < i ? q : i, i);
            p = i + 1;
            q = SIZE_MAX;
        } else if (s[i] == ':' && q == SIZE_MAX) {
            q = i;
        }
    }
    scan_seg_pair(&g, s, p, q < n ? q : n, n);
    return g.found;
}

/* Walk every key/value match of pattern p over s[0..n), storing the fields of
 * the table's keys; returns 1 when the key `want` had a valid value. */
static int scan_pairs(struct scan_state *st, enum scan_pat p, const struct scan_key *keys,
                      const char *s, size_t n, struct np_step *step, struct scan_gstep *gstep,
                      enum scan_field want)
{
    if (p == PAT_PIPE_KV)
        return scan_pairs_pipe(keys, s, n, step, gstep, want, st->skip);
    size_t off = 0;
    int found = 0;
    while (off < n && scan_match(st, p, s, n, off)) {
        const PCRE2_SIZE *ov = st->ov;
        const char *k, *v;
        size_t kn, vn;
        if (scan_group(st, s, 1, &k, &kn) && scan_group(st, s, 2, &v, &vn)) {
            enum scan_field f = scan_lookup(keys, k, kn);
            if (f && scan_set_field_lean(step, f, v, vn, gstep, st->skip, want) && f == want)
                found = 1;
        }
        off = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
    }
    return found;
}

/* memmem for a short needle in one line: memchr to the needle's first byte, memcmp to confirm
 * (glibc's memmem builds a shift table on every call, most of the cost on a 300-byte line). */
static const char *scan_find_in_line(const char *s, size_t n, const char *needle, size_t nl)
{
    const char *p = s, *end = s + n;
    while ((size_t)(end - p) >= nl && (p = memchr(p, needle[0], (size_t)(end - p) - nl + 1)) != NULL) {
        if (memcmp(p + 1, needle + 1, nl - 1) == 0)
            return p;
        p++;
    }
    return NULL;
}

static const char *scan_memmem(const char *s, size_t n, const char *needle)
{
    return scan_find_in_line(s, n, needle, strlen(needle));
}

/* After "train_step_timing in s": ':' = NeMo 2.0, '=' = tqdm, 0 = neither. */
static char scan_timing_style(const char *s, size_t n)
{
    static const char key[] = "train_step_timing in s";
    const size_t kl = sizeof key - 1;
    char style = 0;
    const char *p = s, *end = s + n;
    while ((p = scan_find_in_line(p, (size_t)(end - p), key, kl)) != NULL) {
        const char *q = p + kl;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (q < end && (*q == ':' || *q == '='))
            style = *q;
        p += kl;
    }
    return style;
}

static void scan_line_nemo2(struct scan_state *st, const char *s, size_t n, uint64_t off)
{
    struct np_step step;
    struct scan_gstep gstep = {-1, 0};
    size_t from = 0;
    int anchored = 0;
    long it = -1, last = -1;
    scan_step_init(&step, NP_GEN_NEMO2, off);
    if (scan_match(st, PAT_NEMO2_ANCHOR, s, n, 0)) {
        it = scan_group_digits(st, s, 2);
        last = scan_group_digits(st, s, 3);
        from = st->ov[0];
        anchored = 1;
    }
    int has_time = scan_pairs(st, PAT_PIPE_KV, scan_keys_nemo, s + from, n - from, &step, &gstep,
                              F_TIME_S);
    if (!anchored && !has_time)
        return; /* "train_step_timing in s:" outside a step line */
    /* ProgressPrinter prints f"iteration {n-1}/{self.total-1}" with n the step within the epoch and total =
     * trainer.max_steps when set (NVIDIA/NeMo nemo/lightning/pytorch/callbacks/progress_printer.py:114-140
     * @8cfedd7): "i" restarts every epoch, global_step does not, and the "n" is the run's last global step.
     * Without max_steps the "n" is per epoch: a global step beyond it says so, and then no total is known. */
    step.iteration = gstep.value >= 0 ? gstep.value : it;
    step.total = last >= 0 && step.iteration <= last ? last : -1;
    scan_add_step(st, &step);
}

/* NeMo 1.0 tqdm bar "Epoch E: : p%|bar| k/n [elapsed<left, key=value, ...]".  NeMo's bars count optimizer
 * steps of the epoch and reset to n = trainer.max_steps every epoch (NVIDIA/NeMo nlp_overrides.py:1808-1849
 * CustomProgressBar, progress_bar.py:19-48 MegatronProgressBar @8cfedd7), so in epoch 0 the bar's k-1 is the
 * global step just done and n-1 the last one, whatever the postfix says: the postfix lags the bar (it is
 * refreshed with the metrics logged for an earlier step) and tqdm rounds its numbers (scan_gstep). */
static void scan_line_nemo1(struct scan_state *st, const char *s, size_t n, uint64_t off, int need_time)
{
    struct np_step step;
    struct scan_gstep g = {-1, 0};
    long epoch = -1, k = -1, barn = -1, it = -1;
    size_t from = 0;
    scan_step_init(&step, NP_GEN_NEMO1, off);
    if (scan_match(st, PAT_NEMO1_ANCHOR, s, n, 0)) {
        epoch = scan_group_digits(st, s, 1);
        k = scan_group_digits(st, s, 2);
        barn = scan_group_digits(st, s, 3);
        from = st->ov[0];
    } else if (!need_time) {
        return; /* "global_step=" outside a progress bar */
    }
    int has_time = scan_pairs(st, PAT_NEMO1_KV, scan_keys_nemo, s + from, n - from, &step, &g, F_TIME_S);
    if (need_time && !has_time && g.value < 0)
        return;
    long lo = g.value - g.unit / 2, hi = g.value + g.unit / 2; /* what the printed global_step can be */
    /* The bar's k is a batch count, the postfix's global_step the optimizer step: Lightning's bar counts
     * every batch (TQDMProgressBar.on_train_batch_end: n = batch_idx + 1, Lightning-AI/pytorch-lightning
     * src/lightning/pytorch/callbacks/progress/tqdm_progress.py @03f57f9c), micro-batches under gradient
     * accumulation ("81/43800" at global_step=4), and Lightning < 1.6's main bar adds the validation
     * batches to the same count.  So global_step is the step; the bar's k-1 stands for it only where the
     * two agree within the postfix's lag (refreshed with an earlier step's metrics: the bar up to two
     * ahead) and tqdm's rounding, and where the postfix has no global_step. */
    int bar_is_step = k >= 1 && epoch == 0 && (g.value < 0 || (k - 1 >= lo - 1 && k - 1 <= hi + 2));
    if (k >= 1 && g.value < 0) {
        it = k - 1;
    } else if (bar_is_step) {
        it = k - 1;
    } else if (g.value >= 0 && g.unit == 0) {
        it = g.value;
    } else if (g.value >= 0) {
        long prev = st->last_iter[NP_GEN_NEMO1];
        it = prev >= 0 && prev + 1 >= lo && prev + 1 <= hi ? prev + 1 : g.value;
    }
    if (it < 0 && !has_time)
        return;
    step.iteration = it;
    /* n of a bar that counts more than steps (it ran ahead of global_step) is no step total; one that
     * restarted on a resume (behind global_step) still counts to max_steps */
    int bar_counts_steps = bar_is_step || k < 1 || k - 1 < it || epoch != 0;
    if (barn >= 1 && k >= 0 && k <= barn && it <= barn - 1 && bar_counts_steps)
        step.total = barn - 1;
    else if (barn >= 1 && k >= 0 && k < barn)
        step.bar_short = 1; /* "81/43800": n counts batches, not steps; the epoch stopped short of it */
    scan_add_step(st, &step);
}

static int scan_line_delta(struct scan_state *st, const char *s, size_t n, uint64_t off)
{
    struct np_step step;
    const char *v;
    size_t vn;
    if (!scan_match(st, PAT_DELTA, s, n, 0))
        return 0;
    scan_step_init(&step, NP_GEN_DELTA, off);
    step.iteration = scan_group_digits(st, s, 1);
    if (scan_group(st, s, 2, &v, &vn)) {
        struct scan_gstep unused = {-1, 0};
        scan_set_field(&step, F_TIME_S, v, vn, &unused);
    }
    scan_add_step(st, &step);
    return 1;
}

/* A Megatron step record s[0..n) whose "iteration i/ n" the last match (PAT_MB_ANCHOR) found: its fields from
 * there on.  off: the file offset of the line the anchor starts. */
static void scan_mb_step(struct scan_state *st, const char *s, size_t n, uint64_t off)
{
    struct np_step step;
    struct scan_gstep gstep = {-1, 0};
    long i = scan_group_digits(st, s, 1), t = scan_group_digits(st, s, 2);
    size_t from = st->ov[0];
    scan_step_init(&step, NP_GEN_MBRIDGE, off);
    /* Megatron counts from 1: "iteration 50/50" is index 49 of 0..49. */
    step.iteration = i >= 1 ? i - 1 : -1;
    step.total = t >= 1 ? t - 1 : -1;
    scan_pairs(st, PAT_PIPE_KV, scan_keys_mbridge, s + from, n - from, &step, &gstep, F_TIME_MS);
    scan_add_step(st, &step);
}

static void scan_mb_wrapped(struct scan_state *st, const char *s, size_t n, uint64_t off, int anchored);

/* 1 when s[0..n) ends (blanks aside) with '|': Megatron ends every record so ("... nan iterations:   0 |"). */
static int scan_ends_bar(const char *s, size_t n)
{
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n && s[n - 1] == '|';
}

/* A line holding "elapsed time per iteration": a whole record is read at once; one a terminal wrapped over several
 * lines (no "iteration i/ n" in this one, or no closing '|') is joined to its other lines first (scan_mb_wrapped),
 * and a record without its iteration number is no step: its time is never a step's without it. */
static void scan_line_mbridge(struct scan_state *st, const char *s, size_t n, uint64_t off)
{
    int anchored = scan_match(st, PAT_MB_ANCHOR, s, n, 0);
    if (anchored && scan_ends_bar(s, n)) {
        scan_mb_step(st, s, n, off);
        return;
    }
    if (st->ctx_lo && s >= st->ctx_lo && s + n < st->ctx_hi)
        scan_mb_wrapped(st, s, n, off, anchored);
    else if (anchored) /* an ANSI-stripped copy: the line alone */
        scan_mb_step(st, s, n, off);
}

/* Megatron-LM's memory report names the iteration it follows ("after 10 iterations" = index 9): a side
 * line that lends its peak memory to that step and is never a step of its own. */
static void scan_line_mbmem(struct scan_state *st, const char *s, size_t n, uint64_t off)
{
    struct np_step step;
    struct scan_gstep unused = {-1, 0};
    if (!scan_match(st, PAT_MB_MEM, s, n, 0))
        return;
    long after = scan_group_digits(st, s, 1);
    size_t from = st->ov[1];
    if (after < 1)
        return;
    scan_step_init(&step, NP_GEN_MBRIDGE, off);
    step.iteration = after - 1;
    step.side = 1;
    scan_pairs(st, PAT_PIPE_KV, scan_keys_mbmem, s + from, n - from, &step, &unused, 0);
    if (!isnan(step.peak_memory_bytes))
        scan_add_step(st, &step);
}

static void scan_line_automodel(struct scan_state *st, const char *s, size_t n, uint64_t off)
{
    struct np_step step;
    struct scan_gstep gstep = {-1, 0};
    size_t from = 0;
    int anchored = 0;
    scan_step_init(&step, NP_GEN_AUTOMODEL, off);
    if (scan_match(st, PAT_AM_ANCHOR, s, n, 0)) {
        from = st->ov[0];
        anchored = 1;
    }
    int has_tps = scan_pairs(st, PAT_AM_KV, scan_keys_automodel, s + from, n - from, &step, &gstep,
                             F_TPS);
    if (!anchored && !has_tps)
        return;
    step.iteration = gstep.value;
    scan_add_step(st, &step);
}

/* ---- candidate search over complete lines ------------------------------ */

/* The literal needles.  Each names two of its bytes that are rare in logs
 * (pos1, pos2); the SSE2 prefilter tests both at every position of a 16-byte
 * block for all needles at once, so the data is read once, not once per
 * needle, and memcmp confirms the few candidates. */
static const struct scan_needle {
    const char *text;
    unsigned char len, pos1, pos2;
} scan_needles[] = {
    {"train_step_timing", 17, 9, 16},           /* 'p' ... 'g' */
    {"global_step:", 12, 3, 11},                /* 'b' ... ':': NeMo 2.0 step lines (before their timing, if any) */
    {"elapsed time per iteration", 26, 3, 13},  /* 'p' ... 'p' */
    {"| tps ", 6, 0, 3},                        /* '|' ... 'p' */
    {"Global Checkpoint ", 18, 0, 11},          /* 'G' ... 'k' */
    {"global_step=", 12, 0, 11},                /* 'g' ... '=': NeMo 1.0 bars without train_step_timing */
    {" memory (MB) |", 14, 9, 13},              /* 'M' ... '|': Megatron-LM memory report */
    {" memory (GB) |", 14, 9, 13},              /* 'G' ... '|': Megatron-Bridge memory report */
};
#define SCAN_NNEEDLE (sizeof scan_needles / sizeof scan_needles[0])
#define SCAN_NEEDLE_TIMING 0u
#define SCAN_NEEDLE_GSTEP2 1u
#define SCAN_NEEDLE_MBRIDGE 2u
#define SCAN_NEEDLE_TPS 3u
#define SCAN_NEEDLE_CKPT 4u
#define SCAN_NEEDLE_GSTEP 5u
#define SCAN_NEEDLE_MBMEM 6u
#define SCAN_NEEDLE_MBMEM_GB 7u
#define SCAN_NEEDLE_ALL ((1u << SCAN_NNEEDLE) - 1)

/* Where the search stands; next[] caches memmem results (portable path). */
struct scan_finder {
    const char *next[SCAN_NNEEDLE];
    int primed;
};

/* First occurrence of an active needle at or after p whose start is < end. */
static const char *scan_find_portable(struct scan_finder *f, const char *p, const char *end,
                                      unsigned active)
{
    const char *best = NULL;
    for (size_t k = 0; k < SCAN_NNEEDLE; k++) {
        if (!(active & (1u << k)))
            continue;
        if (!f->primed || (f->next[k] && f->next[k] < p))
            f->next[k] = memmem(p, (size_t)(end - p), scan_needles[k].text, scan_needles[k].len);
        if (f->next[k] && (!best || f->next[k] < best))
            best = f->next[k];
    }
    f->primed = 1;
    return best;
}

/* Index of the active needle starting at q, or -1. */
static int scan_find_at(const char *q, const char *end, unsigned active)
{
    for (size_t k = 0; k < SCAN_NNEEDLE; k++) {
        const struct scan_needle *nd = &scan_needles[k];
        if ((active & (1u << k)) && (size_t)(end - q) >= nd->len && q[0] == nd->text[0] &&
            memcmp(q, nd->text, nd->len) == 0)
            return (int)k;
    }
    return -1;
}

#if defined(__SSE2__) && !defined(SCAN_NO_SIMD)
#include <emmintrin.h>
#define SCAN_SIMD_REACH 32 /* 16-byte loads at offsets up to 16 */

/* Bit i set when a needle's two test bytes sit at p + i (p[0..32) readable). */
static unsigned scan_sse2_mask(const char *p)
{
    const __m128i c_bar = _mm_set1_epi8('|'), c_p = _mm_set1_epi8('p'),
                  c_g = _mm_set1_epi8('g'), c_G = _mm_set1_epi8('G'),
                  c_k = _mm_set1_epi8('k'), c_eq = _mm_set1_epi8('='),
                  c_M = _mm_set1_epi8('M'), c_b = _mm_set1_epi8('b'), c_col = _mm_set1_epi8(':');
    __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 3));
    __m128i v9 = _mm_loadu_si128((const __m128i *)(const void *)(p + 9));
    __m128i v11 = _mm_loadu_si128((const __m128i *)(const void *)(p + 11));
    __m128i v13 = _mm_loadu_si128((const __m128i *)(const void *)(p + 13));
    __m128i v16 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    __m128i p3 = _mm_cmpeq_epi8(v3, c_p);
    __m128i m = _mm_and_si128(_mm_cmpeq_epi8(v9, c_p), _mm_cmpeq_epi8(v16, c_g));
    m = _mm_or_si128(m, _mm_and_si128(p3, _mm_cmpeq_epi8(v13, c_p)));
    m = _mm_or_si128(m, _mm_and_si128(p3, _mm_cmpeq_epi8(v0, c_bar)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(v0, c_G), _mm_cmpeq_epi8(v11, c_k)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(v0, c_g), _mm_cmpeq_epi8(v11, c_eq)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(v3, c_b), _mm_cmpeq_epi8(v11, c_col)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_or_si128(_mm_cmpeq_epi8(v9, c_M), _mm_cmpeq_epi8(v9, c_G)),
                                      _mm_cmpeq_epi8(v13, c_bar)));
    return (unsigned)_mm_movemask_epi8(m);
}

static const char *scan_find_sse2(const char *p, const char *end, unsigned active)
{
    while (end - p >= SCAN_SIMD_REACH) {
        unsigned mask = scan_sse2_mask(p);
        while (mask) {
            const char *q = p + __builtin_ctz(mask);
            mask &= mask - 1;
            if (scan_find_at(q, end, active) >= 0)
                return q;
        }
        p += 16;
    }
    if (p < end) {
        /* the last < 32 bytes: the same test on a zero-padded copy (NUL is none of the test bytes), not
         * scan_find_at at every position (that was most of the cost of scanning a 300-byte step line) */
        char pad[SCAN_SIMD_REACH + 16] = {0};
        size_t left = (size_t)(end - p);
        memcpy(pad, p, left);
        for (size_t b = 0; b < left; b += 16) {
            unsigned mask = scan_sse2_mask(pad + b);
            while (mask) {
                size_t i = b + (size_t)__builtin_ctz(mask);
                mask &= mask - 1;
                if (i < left && scan_find_at(p + i, end, active) >= 0)
                    return p + i;
            }
        }
    }
    return NULL;
}
#endif

#if defined(__SSE2__) && !defined(SCAN_NO_SIMD) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SCAN_HAVE_AVX2 1
#define SCAN_AVX2_REACH 48 /* 32-byte loads at offsets up to 16 */

/* The same test as scan_find_sse2, 32 positions at a time (chosen at run time). */
__attribute__((target("avx2"))) static const char *scan_find_avx2(const char *p, const char *end,
                                                                    unsigned active)
{
    const __m256i c_bar = _mm256_set1_epi8('|'), c_p = _mm256_set1_epi8('p'),
                  c_g = _mm256_set1_epi8('g'), c_G = _mm256_set1_epi8('G'),
                  c_k = _mm256_set1_epi8('k'), c_eq = _mm256_set1_epi8('='),
                  c_M = _mm256_set1_epi8('M'), c_b = _mm256_set1_epi8('b'), c_col = _mm256_set1_epi8(':');
    while (end - p >= SCAN_AVX2_REACH) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
        __m256i v3 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 3));
        __m256i v9 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 9));
        __m256i v11 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 11));
        __m256i v13 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 13));
        __m256i v16 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 16));
        __m256i p3 = _mm256_cmpeq_epi8(v3, c_p);
        __m256i m = _mm256_and_si256(_mm256_cmpeq_epi8(v9, c_p), _mm256_cmpeq_epi8(v16, c_g));
        m = _mm256_or_si256(m, _mm256_and_si256(p3, _mm256_cmpeq_epi8(v13, c_p)));
        m = _mm256_or_si256(m, _mm256_and_si256(p3, _mm256_cmpeq_epi8(v0, c_bar)));
        m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(v0, c_G), _mm256_cmpeq_epi8(v11, c_k)));
        m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(v0, c_g), _mm256_cmpeq_epi8(v11, c_eq)));
        m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(v3, c_b), _mm256_cmpeq_epi8(v11, c_col)));
        m = _mm256_or_si256(m, _mm256_and_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v9, c_M),
                                                                 _mm256_cmpeq_epi8(v9, c_G)),
                                                _mm256_cmpeq_epi8(v13, c_bar)));
        unsigned mask = (unsigned)_mm256_movemask_epi8(m);
        while (mask) {
            const char *q = p + __builtin_ctz(mask);
            mask &= mask - 1;
            if (scan_find_at(q, end, active) >= 0)
                return q;
        }
        p += 32;
    }
    return scan_find_sse2(p, end, active);
}
#endif

static const char *scan_find(struct scan_finder *f, const char *p, const char *end, unsigned active)
{
#if defined(__SSE2__) && !defined(SCAN_NO_SIMD)
    (void)f;
    (void)scan_find_portable; /* kept for other CPUs and the fuzz cross-check */
#ifdef SCAN_HAVE_AVX2
    if (scan_use_avx2)
        return scan_find_avx2(p, end, active);
#endif
    return scan_find_sse2(p, end, active);
#else
    (void)scan_use_avx2;
    return scan_find_portable(f, p, end, active);
#endif
}

/* Bit k set when needle k occurs in s[0..n). */
static unsigned scan_needles_in(const char *s, size_t n)
{
    struct scan_finder f = {{NULL}, 0};
    const char *p = s, *end = s + n, *q;
    unsigned found = 0;
    while (found != SCAN_NEEDLE_ALL && (q = scan_find(&f, p, end, SCAN_NEEDLE_ALL & ~found))) {
        found |= 1u << scan_find_at(q, end, SCAN_NEEDLE_ALL & ~found);
        p = q + 1;
    }
    return found;
}

/* ---- Megatron records wrapped over several lines --------------------------------------------------------------
 * A terminal (or a paste from one) breaks a long Megatron record into pieces of its width: the iteration number in
 * one piece, "elapsed time per iteration" in another, the loss in a third.  The candidate line (the needle's) is
 * joined to the pieces before it back to the previous record's closing '|', and to the pieces after it up to its
 * own closing '|'; a piece holding a needle (a line the scanner reads on its own) ends either walk before it, an
 * empty piece ends neither.  The joined text is read as one line when it holds "iteration i/ n" before the end of
 * the candidate line's piece, else not at all.  The joins see the same pieces whatever the reads' sizes: the pieces
 * before a read's first byte are kept (back), a record still open at its last byte takes the next read's first
 * pieces (rec_open), and tail mode reads further back when a record reaches the first byte it has (ctx_cut). */
#define SCAN_JOIN_BACK 16      /* pieces before the candidate line */
#define SCAN_JOIN_PIECES 32    /* pieces of a record */
#define SCAN_JOIN_BYTES 8192   /* bytes of a record (half of them before the candidate line) */

struct scan_join {
    char *buf;                      /* the pieces joined, terminators left out */
    size_t len, cap;
    size_t np;                      /* pieces */
    size_t pos[SCAN_JOIN_PIECES];   /* piece i starts at buf + pos[i] ... */
    uint64_t off[SCAN_JOIN_PIECES]; /* ... and at file offset off[i] */
    size_t fend;                    /* the end of the candidate line's piece: the anchor is looked for before it */
    int done;                       /* no piece is added any more */
    uint64_t end_off;               /* rec_open: the file offset the next bytes must start at */
};

static void scan_join_free(struct scan_join *j)
{
    if (j)
        free(j->buf);
    free(j);
}

static int scan_join_add(struct scan_state *st, struct scan_join *j, const char *p, size_t n, uint64_t off)
{
    if (j->len + n > j->cap) {
        size_t cap = j->cap ? j->cap : 1024;
        while (cap < j->len + n)
            cap *= 2;
        char *b = realloc(j->buf, cap);
        if (!b) {
            st->status = NP_E_NOMEM;
            return 0;
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, p, n);
    j->pos[j->np] = j->len;
    j->off[j->np++] = off;
    j->len += n;
    return 1;
}

/* The piece ending just before p (a piece start, p > lo): [*ps, *pe); "\r\n" is one terminator. */
static void scan_piece_before(const char *lo, const char *p, const char **ps, const char **pe)
{
    const char *e = p - 1;
    if (*e == '\n' && e > lo && e[-1] == '\r')
        e--;
    else if (*e != '\n' && *e != '\r')
        e = p;
    const char *b = e;
    while (b > lo && b[-1] != '\n' && b[-1] != '\r')
        b--;
    *ps = b;
    *pe = e;
}

/* 1 when piece [ps, ps + pn) ends a backward walk that took ng pieces of bytes bytes so far. */
static int scan_back_stops(const char *ps, size_t pn, size_t ng, size_t bytes)
{
    return pn && (pn > SCAN_LINE_MAX || scan_ends_bar(ps, pn) || ng == SCAN_JOIN_BACK ||
                  bytes + pn > SCAN_JOIN_BYTES / 2 || scan_needles_in(ps, pn));
}

/* The pieces of [p, hi) after p (a piece's terminator, or a piece start when first) while the record is open:
 * appended to j.  Returns where it stopped (hi: the bytes ran out, the record still open unless j->done). */
static const char *scan_join_forward(struct scan_state *st, struct scan_join *j, const char *p, const char *hi,
                                     uint64_t poff, int first)
{
    while (!j->done && p < hi) {
        const char *q = p;
        if (!first && *q == '\r' && q + 1 < hi && q[1] == '\n')
            q += 2;
        else if (!first && (*q == '\r' || *q == '\n'))
            q++;
        first = 0;
        const char *t = q;
        while (t < hi && *t != '\n' && *t != '\r')
            t++;
        if (t == hi)
            return hi; /* whole lines only: q == hi */
        size_t n = (size_t)(t - q);
        /* a line over SCAN_LINE_MAX stops it: a stream may skip such a line (scan_bytes), a buffer holds it */
        if (n && (n > SCAN_LINE_MAX || j->np == SCAN_JOIN_PIECES || j->len + n > SCAN_JOIN_BYTES ||
                  scan_needles_in(q, n))) {
            j->done = 1;
            return p;
        }
        if (n && !scan_join_add(st, j, q, n, poff + (uint64_t)(q - p)))
            return hi;
        if (n && scan_ends_bar(q, n))
            j->done = 1;
        poff += (uint64_t)(t - p);
        p = t;
    }
    return p;
}

/* The record joined: its last "iteration i/ n" before the end of the candidate line, and the step from there. */
static void scan_join_parse(struct scan_state *st, struct scan_join *j)
{
    if (st->status != NP_OK || !j->np || !scan_match(st, PAT_MB_ANCHOR, j->buf, j->fend, 0))
        return; /* no iteration number: not a step at all */
    size_t i = j->np - 1;
    while (i > 0 && j->pos[i] > st->ov[0])
        i--;
    scan_mb_step(st, j->buf, j->len, j->off[i]);
}

/* The candidate line s[0..n) at file offset off, inside [ctx_lo, ctx_hi): see above. */
static void scan_mb_wrapped(struct scan_state *st, const char *s, size_t n, uint64_t off, int anchored)
{
    if (!st->rec && !(st->rec = calloc(1, sizeof *st->rec))) {
        st->status = NP_E_NOMEM;
        return;
    }
    struct scan_join *j = st->rec;
    j->len = j->np = 0;
    j->done = 0;
    if (!anchored) { /* back to the previous record's '|': in this read, then in the pieces kept before it */
        const char *got[SCAN_JOIN_BACK], *gote[SCAN_JOIN_BACK];
        uint64_t gotoff[SCAN_JOIN_BACK];
        size_t ng = 0, bytes = 0;
        const char *lo = st->ctx_lo, *p = s;
        uint64_t lo_off = st->ctx_off;
        int in_back = 0;
        for (;;) {
            if (p == lo) {
                if (!in_back && st->back_len && st->back_off + st->back_len == st->ctx_off) {
                    lo = st->back;
                    p = st->back + st->back_len;
                    lo_off = st->back_off;
                    in_back = 1;
                    continue;
                }
                if (!in_back && st->more_before) {
                    st->ctx_cut = 1; /* tail mode: the record may go on in bytes not read yet */
                    return;
                }
                break;
            }
            const char *ps, *pe;
            scan_piece_before(lo, p, &ps, &pe);
            size_t pn = (size_t)(pe - ps);
            if (scan_back_stops(ps, pn, ng, bytes))
                break;
            if (pn) {
                got[ng] = ps;
                gote[ng] = pe;
                gotoff[ng++] = lo_off + (uint64_t)(ps - lo);
                bytes += pn;
            }
            p = ps;
        }
        while (ng-- > 0)
            if (!scan_join_add(st, j, got[ng], (size_t)(gote[ng] - got[ng]), gotoff[ng]))
                return;
    }
    if (!scan_join_add(st, j, s, n, off))
        return;
    j->fend = j->len;
    j->done = scan_ends_bar(s, n);
    const char *stop = scan_join_forward(st, j, s + n, st->ctx_hi, off + n, 0);
    if (stop == st->ctx_hi && !j->done && !st->tail) {
        /* streaming: the record goes on in the next bytes fed (scan_join_more), or ends with them */
        j->end_off = st->ctx_off + (uint64_t)(st->ctx_hi - st->ctx_lo);
        st->rec_open = 1;
        return;
    }
    scan_join_parse(st, j);
}

/* Streaming, the start of the next bytes fed (buf[0..len) at file offset base, whole lines): the open record takes
 * its pieces from them, or ends (a gap in the bytes, or the end of the log: buf NULL). */
static void scan_join_more(struct scan_state *st, const char *buf, size_t len, uint64_t base)
{
    if (!st->rec_open)
        return;
    struct scan_join *j = st->rec;
    if (buf && len && base == j->end_off) {
        const char *stop = scan_join_forward(st, j, buf, buf + len, base, 1);
        if (!j->done && stop == buf + len) {
            j->end_off = base + len;
            return;
        }
    }
    st->rec_open = 0;
    scan_join_parse(st, j);
}

/* Streaming, after buf[0..len) (whole lines at file offset base) was fed: keep the pieces a wrapped record after
 * it may need (those a backward walk from its end takes, with those kept before it). */
static void scan_back_keep(struct scan_state *st, const char *buf, size_t len, uint64_t base)
{
    const char *p = buf + len;
    size_t ng = 0, bytes = 0;
    int stopped = 0;
    while (p > buf) {
        const char *ps, *pe;
        scan_piece_before(buf, p, &ps, &pe);
        size_t pn = (size_t)(pe - ps);
        if ((stopped = scan_back_stops(ps, pn, ng, bytes)))
            break;
        ng += pn != 0;
        bytes += pn;
        p = ps;
    }
    size_t keep_old = 0; /* bytes of the old pieces kept in front */
    if (!stopped && st->back_len && st->back_off + st->back_len == base) {
        const char *q = st->back + st->back_len;
        while (q > st->back) {
            const char *ps, *pe;
            scan_piece_before(st->back, q, &ps, &pe);
            size_t pn = (size_t)(pe - ps);
            if (scan_back_stops(ps, pn, ng, bytes))
                break;
            ng += pn != 0;
            bytes += pn;
            q = ps;
        }
        keep_old = (size_t)(st->back + st->back_len - q);
    }
    size_t add = (size_t)(buf + len - p), need = keep_old + add;
    if (need > st->back_cap) {
        char *b = realloc(st->back, need);
        if (!b) {
            st->status = NP_E_NOMEM;
            return;
        }
        st->back = b;
        st->back_cap = need;
    }
    if (keep_old)
        memmove(st->back, st->back + st->back_len - keep_old, keep_old);
    if (add)
        memcpy(st->back + keep_old, p, add);
    st->back_off = base + (uint64_t)(p - buf) - keep_old;
    st->back_len = need;
}

/* ---- the marks (scan.h np_scan_marked): a line without one holds no needle ---- */

static inline int scan_mark_at(const char *s, size_t i, size_t n)
{
    char c = s[i], d = i + 1 < n ? s[i + 1] : '\0';
    return c == NP_SCAN_MARK_A || c == NP_SCAN_MARK_B || (c == NP_SCAN_PAIR_A0 && d == NP_SCAN_PAIR_A1) ||
           (c == NP_SCAN_PAIR_B0 && d == NP_SCAN_PAIR_B1);
}

int np_scan_marked(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (scan_mark_at(s, i, n))
            return 1;
    return 0;
}

int np_scan_avx2(int on)
{
    pthread_once(&scan_once, scan_init_once);
#if defined(__x86_64__) && defined(__GNUC__) && !defined(SCAN_NO_AVX2)
    if (on >= 0)
        scan_use_avx2 = on && __builtin_cpu_supports("avx2") != 0;
#else
    (void)on;
#endif
    return scan_use_avx2 != 0;
}

int np_scan_needles_marked(void)
{
    for (size_t k = 0; k < SCAN_NNEEDLE; k++)
        if (!np_scan_marked(scan_needles[k].text, scan_needles[k].len))
            return 0;
    return 1;
}

#ifdef SCAN_HAVE_AVX2
/* np_scan_line_end 32 positions a step: the '\n's, and the marks (a byte, or a byte and the next: a load at +1) */
__attribute__((target("avx2"))) static const char *scan_line_end_avx2(const char *p, const char *e, int *marked)
{
    const __m256i c_nl = _mm256_set1_epi8('\n'), c_a = _mm256_set1_epi8(NP_SCAN_MARK_A),
                  c_b = _mm256_set1_epi8(NP_SCAN_MARK_B), c_a0 = _mm256_set1_epi8(NP_SCAN_PAIR_A0),
                  c_a1 = _mm256_set1_epi8(NP_SCAN_PAIR_A1), c_b0 = _mm256_set1_epi8(NP_SCAN_PAIR_B0),
                  c_b1 = _mm256_set1_epi8(NP_SCAN_PAIR_B1);
    int mk = 0;
    for (; p < e; p += 32) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 1));
        unsigned nl = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, c_nl));
        __m256i m = _mm256_or_si256(_mm256_cmpeq_epi8(v0, c_a), _mm256_cmpeq_epi8(v0, c_b));
        m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(v0, c_a0), _mm256_cmpeq_epi8(v1, c_a1)));
        m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(v0, c_b0), _mm256_cmpeq_epi8(v1, c_b1)));
        unsigned mm = (unsigned)_mm256_movemask_epi8(m);
        if (e - p < 32) { /* the bytes past e: neither */
            unsigned lim = (1u << (e - p)) - 1;
            nl &= lim;
            mm &= lim;
        }
        if (nl) {
            unsigned at = (unsigned)__builtin_ctz(nl);
            *marked = mk || (mm & ((1u << at) - 1)) != 0;
            return p + at;
        }
        mk |= mm != 0;
    }
    *marked = mk;
    return NULL;
}
#endif

const char *np_scan_line_end(const char *p, const char *e, int *marked)
{
#ifdef SCAN_HAVE_AVX2
    if (scan_use_avx2)
        return scan_line_end_avx2(p, e, marked);
#endif
    int mk = 0; /* without AVX2 (x86-64 CPUs before 2013, other CPUs): memchr, then the marks a byte at a time */
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    const char *le = nl ? nl : e;
    for (const char *q = p; q < le && !mk; q++) /* the byte after the line may pair too, as above */
        mk = scan_mark_at(q, 0, 2);
    *marked = mk;
    return nl;
}

/* Copy s without ANSI escapes (CSI "ESC [ params inter final", two-byte ESC x). */
static int scan_strip_ansi(struct scan_state *st, const char **s, size_t *n)
{
    const unsigned char *in = (const unsigned char *)*s;
    size_t len = *n, o = 0;
    if (st->scratch_cap < len) {
        size_t cap = len < 256 ? 256 : len;
        char *p = realloc(st->scratch, cap);
        if (!p) {
            st->status = NP_E_NOMEM;
            return 0;
        }
        st->scratch = p;
        st->scratch_cap = cap;
    }
    for (size_t i = 0; i < len;) {
        if (in[i] != 0x1b) {
            st->scratch[o++] = (char)in[i++];
            continue;
        }
        i++;
        if (i < len && in[i] == '[') {
            i++;
            while (i < len && in[i] >= 0x30 && in[i] <= 0x3f)
                i++;
            while (i < len && in[i] >= 0x20 && in[i] <= 0x2f)
                i++;
            if (i < len && in[i] >= 0x40 && in[i] <= 0x7e)
                i++;
        } else if (i < len && in[i] >= 0x40 && in[i] <= 0x5f) {
            i++;
        }
    }
    *s = st->scratch;
    *n = o;
    return 1;
}

static void scan_checkpoint(struct scan_state *st, const char *s, size_t n)
{
    static const char key[] = "Global Checkpoint ";
    const size_t kl = sizeof key - 1;
    const char *p = s, *end = s + n;
    while ((p = scan_find_in_line(p, (size_t)(end - p), key, kl)) != NULL) {
        p += kl;
        if ((size_t)(end - p) < 4 || (end - p > 4 && (scan_isword(p[4]))))
            continue; /* "Saver", "Loading": not the NeMo message */
        if (memcmp(p, "Save", 4) == 0)
            st->ckpt_save = 1;
        else if (memcmp(p, "Load", 4) == 0)
            st->ckpt_load = 1;
    }
}

/* One complete candidate line (terminator excluded).  hit: where the finder met the line's first
 * needle (no needle starts before it), or SCAN_HIT_UNKNOWN; the needles are then looked for only
 * from there, and so is the timing key (a step line's is near its end). */
#define SCAN_HIT_UNKNOWN ((size_t)-1)
static void scan_line(struct scan_state *st, const char *s, size_t n, uint64_t off, size_t hit)
{
    if (n > SCAN_LINE_MAX || st->status != NP_OK)
        return;
    if (memchr(s, 0x1b, n)) {
        if (!scan_strip_ansi(st, &s, &n))
            return;
        hit = SCAN_HIT_UNKNOWN;
    }
    unsigned has;
    int lazy = 0; /* the needles after the first are looked for only when needed */
    if (hit < n) {
        int k = scan_find_at(s + hit, s + n, SCAN_NEEDLE_ALL);
        if (k == (int)SCAN_NEEDLE_GSTEP2 && !scan_memmem(s, n, "Step ")) {
            /* a NeMo 2.0 ProgressPrinter line, timed or not (global_step comes before the timing): what the
             * timing needle's ':' style leads to, without looking for the other needles */
            if (scan_find_in_line(s + hit + 1, n - hit - 1, "Global Checkpoint ", 18))
                scan_checkpoint(st, s, n);
            scan_line_nemo2(st, s, n, off);
            return;
        }
        if (k == (int)SCAN_NEEDLE_TIMING) {
            /* a step line: of the other needles only the checkpoint message matters, unless the line
             * turns out no timing line after all */
            has = 1u << k;
            if (scan_find_in_line(s + hit + 1, n - hit - 1, "Global Checkpoint ", 18))
                has |= 1u << SCAN_NEEDLE_CKPT;
            lazy = 1;
        } else {
            has = (k >= 0 ? 1u << k : 0) | scan_needles_in(s + hit + 1, n - hit - 1);
        }
    } else {
        has = scan_needles_in(s, n);
        hit = 0;
    }
    if (has & (1u << SCAN_NEEDLE_CKPT))
        scan_checkpoint(st, s, n);
    if (has & (1u << SCAN_NEEDLE_TIMING)) {
        if (scan_memmem(s, n, "Step ") && scan_line_delta(st, s, n, off))
            return;
        switch (scan_timing_style(s + hit, n - hit)) {
        case ':': scan_line_nemo2(st, s, n, off); return;
        case '=': scan_line_nemo1(st, s, n, off, 1); return;
        default: break;
        }
        if (lazy)
            has |= scan_needles_in(s + hit + 1, n - hit - 1);
    } else if (has & (1u << SCAN_NEEDLE_GSTEP)) {
        scan_line_nemo1(st, s, n, off, 0); /* a bar without the timing callback: the step, no time */
        return;
    }
    if (has & (1u << SCAN_NEEDLE_MBRIDGE))
        scan_line_mbridge(st, s, n, off);
    else if (has & (1u << SCAN_NEEDLE_TPS))
        scan_line_automodel(st, s, n, off);
    else if (has & ((1u << SCAN_NEEDLE_MBMEM) | (1u << SCAN_NEEDLE_MBMEM_GB)))
        scan_line_mbmem(st, s, n, off);
    else if (has & (1u << SCAN_NEEDLE_GSTEP2))
        scan_line_nemo2(st, s, n, off); /* ProgressPrinter without the timing callback: the step, no time */
}

/* A candidate line, the needle that made it one (scan_find_at's index) and where it starts in the line. */
typedef void (*scan_line_fn)(struct scan_state *st, const char *s, size_t n, uint64_t off, unsigned needle,
                             size_t hit, void *ctx);

/* The default line handler: parse the candidate line now. */
static void scan_line_now(struct scan_state *st, const char *s, size_t n, uint64_t off, unsigned needle,
                          size_t hit, void *ctx)
{
    (void)ctx;
    (void)needle;
    scan_line(st, s, n, off, hit);
}

static void scan_feed_with(struct scan_state *st, const char *buf, size_t len, uint64_t base, scan_line_fn fn,
                           void *ctx);

/* buf[0..len) holds whole lines (len == 0 or buf[len-1] is '\n' or '\r'), the file's bytes after those fed before
 * (streaming: a wrapped record may span two feeds; scan_feed_end after the last). */
static void scan_feed(struct scan_state *st, const char *buf, size_t len, uint64_t base)
{
    if (!len)
        return;
    scan_join_more(st, buf, len, base);
    st->ctx_lo = buf;
    st->ctx_hi = buf + len;
    st->ctx_off = base;
    scan_feed_with(st, buf, len, base, scan_line_now, NULL);
    st->ctx_lo = st->ctx_hi = NULL;
    if (st->status == NP_OK)
        scan_back_keep(st, buf, len, base);
}

/* The end of the bytes fed: a wrapped record still open is read as it stands. */
static void scan_feed_end(struct scan_state *st)
{
    scan_join_more(st, NULL, 0, 0);
}

/* Find the candidate lines of buf (those holding a needle) and hand each to fn. */
static void scan_feed_with(struct scan_state *st, const char *buf, size_t len, uint64_t base, scan_line_fn fn,
                           void *ctx)
{
    const char *end = buf + len, *pos = buf;
    const char *nl = NULL; /* cached next '\n' (end = none) */
    struct scan_finder finder = {{NULL}, 0};
    unsigned active = SCAN_NEEDLE_ALL;
    const char *hit;
    while (st->status == NP_OK && (hit = scan_find(&finder, pos, end, active)) != NULL) {
        const char *ls = memrchr(pos, '\n', (size_t)(hit - pos));
        ls = ls ? ls + 1 : pos;
        const char *lr = memrchr(ls, '\r', (size_t)(hit - ls));
        ls = lr ? lr + 1 : ls;
        if (!nl || nl < hit) {
            nl = memchr(hit, '\n', (size_t)(end - hit));
            if (!nl)
                nl = end;
        }
        /* a '\r' ends the line too: looked for up to the '\n' only (a log without one was searched to its
         * end for every chunk, a tenth of the scan of an NCCL trace) */
        const char *cr = memchr(hit, '\r', (size_t)(nl - hit));
        const char *le = cr ? cr : nl;
        if (le == end)
            break; /* cannot happen: buf ends with a terminator */
        fn(st, ls, (size_t)(le - ls), base + (uint64_t)(ls - buf), (unsigned)scan_find_at(hit, end, active),
           (size_t)(hit - ls), ctx);
        if (st->ckpt_save && st->ckpt_load)
            active &= ~(1u << SCAN_NEEDLE_CKPT);
        pos = le + 1;
    }
}

/* Index just past the first terminator, or 0 when there is none. */
static size_t scan_after_first_term(const char *buf, size_t len)
{
    const char *nl = memchr(buf, '\n', len);
    size_t lim = nl ? (size_t)(nl - buf) : len;
    const char *cr = memchr(buf, '\r', lim);
    const char *t = cr ? cr : nl;
    return t ? (size_t)(t - buf) + 1 : 0;
}

/* Length of the prefix made of whole lines (0 when there is no terminator). */
static size_t scan_whole_lines(const char *buf, size_t len)
{
    const char *nl = memrchr(buf, '\n', len);
    size_t from = nl ? (size_t)(nl - buf) + 1 : 0;
    const char *cr = memrchr(buf + from, '\r', len - from);
    if (cr)
        return (size_t)(cr - buf) + 1;
    return nl ? from : 0;
}

/* Candidate lines of a tail buffer, remembered for parsing from the end. */
struct scan_span {
    const char *s;
    size_t n, hit;
    uint64_t off;
};
struct scan_spans {
    struct scan_span *v;
    size_t count, cap;
    int nomem;
};

static void scan_line_remember(struct scan_state *st, const char *s, size_t n, uint64_t off, unsigned needle,
                               size_t hit, void *ctx)
{
    struct scan_spans *sp = ctx;
    /* the flags cover every byte read (as scan_line's would); the line may still hold a step */
    if (n <= SCAN_LINE_MAX &&
        (needle == SCAN_NEEDLE_CKPT || scan_find_in_line(s + hit, n - hit, "Global Checkpoint ", 18)))
        scan_checkpoint(st, s, n);
    if (sp->count == sp->cap) {
        size_t nc = sp->cap ? sp->cap * 2 : 128;
        struct scan_span *a = realloc(sp->v, nc * sizeof *a);
        if (!a) {
            sp->nomem = 1;
            return;
        }
        sp->v = a;
        sp->cap = nc;
    }
    sp->v[sp->count++] = (struct scan_span){s, n, hit, off};
}

/* Tail mode, parsing from the end: the steps found so far (newest first) and where the parse stands. */
struct scan_back {
    struct scan_state one; /* parses one line at a time */
    struct np_step *rev;   /* newest first; keep + 1 of them */
    size_t nrev, distinct, keep;
    struct np_step side;   /* a side line met (from the end) before the step line it names */
    int has_side;
    int done;              /* keep distinct steps known, or an earlier run's step met */
    int lean;              /* np_scan_opts.lean */
    unsigned have;         /* lean: fields (1u << enum scan_field) some step met so far (a later one) has */
    uint64_t redo;         /* a wrapped record reached the first byte read: the next region ends here (else 0) */
};

static enum np_status scan_back_init(struct scan_back *b, size_t keep, int lean)
{
    memset(b, 0, sizeof *b);
    b->keep = keep;
    b->lean = lean;
    if (scan_state_init(&b->one) != NP_OK || !(b->rev = malloc((keep + 1) * sizeof *b->rev))) {
        scan_state_free(&b->one);
        free(b->rev);
        b->rev = NULL;
        return NP_E_NOMEM;
    }
    b->one.tail = 1;
    return NP_OK;
}

static void scan_back_free(struct scan_back *b)
{
    scan_state_free(&b->one);
    free(b->rev);
    b->rev = NULL;
}

#define SCAN_F(f) (1u << (f))
#define SCAN_F_PEAK                                                                                             \
    (SCAN_F(F_PEAKMEM) | SCAN_F(F_PEAKMEM_ALLOC) | SCAN_F(F_MAXRES_MB) | SCAN_F(F_MAXALLOC_MB) |               \
     SCAN_F(F_MAXRES_GB) | SCAN_F(F_MAXALLOC_GB) | SCAN_F(F_MEM_UNIT))

/* Lean mode: what a line older than the last step need not store (np_scan_opts.lean): the consumed samples and the
 * grad norm always (its NaN flag is kept), loss, batch size, peak memory and TFLOPS once a later step has them.  Energy
 * and power are kept: the report averages them over the steady window (parse/run.c np_run_energy). */
static unsigned scan_back_skip(const struct scan_back *b)
{
    if (!b->lean || b->nrev == 0)
        return 0;
    unsigned skip = SCAN_F(F_CONSUMED) | SCAN_F(F_GRADNORM);
    if (b->have & SCAN_F(F_LOSS))
        skip |= SCAN_F(F_LOSS);
    if (b->have & SCAN_F(F_GBS))
        skip |= SCAN_F(F_GBS);
    if (b->have & SCAN_F(F_TFLOPS))
        skip |= SCAN_F(F_TFLOPS);
    if (b->have & SCAN_F_PEAK)
        skip |= SCAN_F_PEAK;
    return skip;
}

/* The fields of s a reader of "the newest known value" takes (run.c: loss, peak memory, TFLOPS; a batch size > 0). */
static unsigned scan_back_has(const struct np_step *s)
{
    return (isnan(s->loss) ? 0 : SCAN_F(F_LOSS)) | (s->global_batch_size > 0 ? SCAN_F(F_GBS) : 0) |
           (isnan(s->tflops_per_gpu) ? 0 : SCAN_F(F_TFLOPS)) | (isnan(s->peak_memory_bytes) ? 0 : SCAN_F_PEAK);
}

/* One candidate line into `one`, alone (its own run bookkeeping). */
static void scan_back_line(struct scan_state *one, const struct scan_span *sp, unsigned skip)
{
    one->n = 0;
    one->has_side = 0;
    for (int g = 0; g < SCAN_NGEN; g++)
        one->last_iter[g] = -1;
    one->skip = skip;
    one->ctx_cut = 0;
    scan_line(one, sp->s, sp->n, sp->off, sp->hit);
}

/* Parse the candidate lines of sp from the last to the first, until the budget is met. */
static void scan_back_lines(struct scan_state *st, struct scan_back *b, const struct scan_spans *sp)
{
    struct scan_state *one = &b->one;
    for (size_t i = sp->count; i-- > 0 && !b->done;) {
        unsigned skip = scan_back_skip(b);
        scan_back_line(one, &sp->v[i], skip);
        if (skip && one->status == NP_OK && one->n && one->steps[one->n - 1].gen == b->rev[0].gen &&
            one->steps[one->n - 1].iteration == b->rev[0].iteration && b->nrev == 1)
            scan_back_line(one, &sp->v[i], 0); /* a redraw of the last step: it is parsed whole */
        if (one->status != NP_OK) {
            st->status = one->status;
            return;
        }
        if (one->ctx_cut) { /* a wrapped record goes on before this region: parsed again with the next one */
            b->redo = sp->v[i].off + sp->v[i].n + 1;
            return;
        }
        if (one->has_side) {
            b->side = one->side;
            b->has_side = 1;
        }
        if (one->n == 0)
            continue;
        struct np_step *s = &one->steps[one->n - 1];
        if (b->has_side && b->side.gen == s->gen && b->side.iteration == s->iteration)
            scan_step_merge(s, &b->side);
        b->has_side = 0;
        b->have |= scan_back_has(s);
        struct np_step *later = b->nrev ? &b->rev[b->nrev - 1] : NULL;
        if (later && later->gen == s->gen && s->iteration >= 0 && later->iteration >= 0) {
            if (s->iteration == later->iteration) {
                /* a redraw of the same step: the later line wins, this one fills its gaps */
                struct np_step m = *s;
                scan_step_merge(&m, later);
                *later = m;
                continue;
            }
            if (s->iteration > later->iteration) {
                b->rev[b->nrev++] = *s; /* an earlier run: kept so that the bookkeeping sees the boundary */
                b->done = 1;
                return;
            }
        }
        b->rev[b->nrev++] = *s;
        if (++b->distinct >= b->keep)
            b->done = 1;
    }
}

/* Replay the steps found in file order through the usual run bookkeeping. */
static void scan_back_finish(struct scan_state *st, struct scan_back *b)
{
    for (size_t j = b->nrev; j-- > 0;)
        scan_add_step(st, &b->rev[j]);
}

/* Whole lines of buf[0..len) (len == 0 or ending with a terminator), at file offset base: find the
 * candidate lines (cheap: one SIMD pass), then parse them from the end. */
static void scan_back_region(struct scan_state *st, struct scan_back *b, const char *buf, size_t len, uint64_t base)
{
    struct scan_spans sp = {0};
    scan_feed_with(st, buf, len, base, scan_line_remember, &sp);
    if (sp.nomem)
        st->status = NP_E_NOMEM;
    else
        scan_back_lines(st, b, &sp);
    free(sp.v);
}

static void scan_result_take(struct scan_state *st, struct np_scan_result *out)
{
    out->steps = st->steps;
    out->nsteps = st->n;
    out->runs = st->runs;
    out->saw_checkpoint_save = st->ckpt_save;
    out->saw_checkpoint_load = st->ckpt_load;
    st->steps = NULL;
    st->n = st->cap = 0;
    if (out->nsteps == 0) {
        free(out->steps);
        out->steps = NULL;
    }
}

enum np_status np_scan_buffer(const char *buf, size_t len, uint64_t base_offset,
                              struct np_scan_result *out, struct np_error *err)
{
    struct scan_state st;
    enum np_status rc;
    if (!out)
        return np_error_set(err, NP_E_USAGE, "scan", 0, 0, "no result to fill");
    memset(out, 0, sizeof *out);
    if ((rc = np_scan_init(err)) != NP_OK)
        return rc;
    if (!buf && len)
        return np_error_set(err, NP_E_USAGE, "scan", 0, 0, "NULL buffer");
    if (scan_state_init(&st) != NP_OK) {
        scan_state_free(&st);
        return np_error_set(err, NP_E_NOMEM, "scan", 0, 0, "out of memory");
    }
    size_t start = 0;
    if (base_offset > 0 && len > 0) {
        start = scan_after_first_term(buf, len);
        if (start == 0)
            start = len;
    }
    size_t whole = len > start ? scan_whole_lines(buf + start, len - start) : 0;
    if (whole)
        scan_feed(&st, buf + start, whole, base_offset + start);
    scan_feed_end(&st);
    if (st.status != NP_OK) {
        scan_state_free(&st);
        return np_error_set(err, st.status, "scan", 0, 0, "out of memory");
    }
    scan_result_take(&st, out);
    out->bytes_read = len;
    out->file_size = base_offset + len;
    scan_state_free(&st);
    return NP_OK;
}

/* ---- files ------------------------------------------------------------- */

struct scan_file {
    int fd;
    const char *path;
    int seekable;
    uint64_t size;
    uint64_t bytes_read;
    size_t chunk;
    enum np_status (*sink)(void *sink_ctx, const char *bytes, size_t n); /* np_scan_opts.sink (all_steps) */
    char *(*sink_buf)(void *sink_ctx, size_t *room);                     /* np_scan_opts.sink_buf */
    enum np_status (*sink_defer)(void *sink_ctx, void (*scan)(void *, const char *, size_t, uint64_t),
                                 void *scan_ctx);                        /* np_scan_opts.sink_defer */
    void *sink_ctx;
};

/* Set once a read had to wait for the disk (or the filesystem cannot say): see np_scan_cold. */
static atomic_int scan_cold_seen;

int np_scan_cold(void)
{
    return atomic_load_explicit(&scan_cold_seen, memory_order_relaxed);
}

/* pread(2) that notes a cold read: while none was seen, RWF_NOWAIT asks for what the page cache
 * holds, at the price of one system call as before; when it cannot answer from memory (EAGAIN,
 * or EOPNOTSUPP on a filesystem that cannot tell) the read is noted and done as usual. */
static ssize_t scan_pread(int fd, void *buf, size_t n, uint64_t off)
{
    if (!atomic_load_explicit(&scan_cold_seen, memory_order_relaxed)) {
        struct iovec v = {buf, n};
        ssize_t r = preadv2(fd, &v, 1, (off_t)off, RWF_NOWAIT);
        if (r >= 0 || errno == EINTR)
            return r;
        atomic_store_explicit(&scan_cold_seen, 1, memory_order_relaxed); /* EAGAIN, EOPNOTSUPP, EINVAL, ... */
    }
    return pread(fd, buf, n, (off_t)off);
}

/* One read of f at off (a stream is read where it stands), EINTR retried; -1 with errno set. */
static ssize_t scan_read(struct scan_file *f, void *buf, size_t n, uint64_t off)
{
    ssize_t r;
    do
        r = f->seekable ? scan_pread(f->fd, buf, n, off) : read(f->fd, buf, n);
    while (r < 0 && errno == EINTR);
    return r;
}

static enum np_status scan_io_error(struct np_error *err, const char *path, const char *what, int e)
{
    char buf[128];
    const char *msg = strerror_r(e, buf, sizeof buf);
    return np_error_set(err, NP_E_IO, path, 0, 0, "%s: %s", what, msg);
}

/* A line cut by the end of the bytes read so far, kept until its end is read (scan_range). */
struct scan_carry {
    char *buf;
    size_t len, cap;
    uint64_t off;  /* the file's offset of buf[0] */
    int dropping;  /* skip to the next terminator: a cut first line, or a line over SCAN_LINE_MAX */
};

/* Append n bytes to the carried line (0: out of memory). */
static int scan_carry_add(struct scan_carry *c, const char *p, size_t n)
{
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n)
            cap *= 2;
        char *b = realloc(c->buf, cap);
        if (!b)
            return 0;
        c->buf = b;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, p, n);
    c->len += n;
    return 1;
}

/* The next n bytes of the file, p[0] at offset off, scanned where they are: the carried line completed and
 * scanned from the carry, the whole lines after it in place, the cut last line carried (a line over
 * SCAN_LINE_MAX is skipped: never a step line).  The same lines as one buffer holding the whole file. */
static void scan_bytes(struct scan_state *st, struct scan_carry *c, const char *p, size_t n, uint64_t off)
{
    if (c->dropping || c->len) {
        size_t a = scan_after_first_term(p, n); /* just past the end of the dropped or carried line */
        if (!a) { /* it goes on */
            if (c->len && c->len + n > SCAN_LINE_MAX) { /* longer than a step line can be */
                c->len = 0;
                c->dropping = 1;
            } else if (c->len && !scan_carry_add(c, p, n))
                st->status = NP_E_NOMEM;
            return;
        }
        if (c->len && c->len + a - 1 <= SCAN_LINE_MAX) {
            if (!scan_carry_add(c, p, a)) {
                st->status = NP_E_NOMEM;
                return;
            }
            scan_feed(st, c->buf, c->len, c->off);
        }
        c->len = 0;
        c->dropping = 0;
        p += a;
        n -= a;
        off += a;
    }
    size_t whole = scan_whole_lines(p, n);
    if (whole)
        scan_feed(st, p, whole, off);
    if (n - whole > SCAN_LINE_MAX)
        c->dropping = 1;
    else if (n > whole) {
        c->off = off + whole;
        if (!scan_carry_add(c, p + whole, n - whole))
            st->status = NP_E_NOMEM;
    }
}

/* What the sink calls with the bytes it was handed (np_scan_opts.sink_defer). */
struct scan_deferred {
    struct scan_state *st;
    struct scan_carry *c;
};

static void scan_deferred_bytes(void *ctx, const char *p, size_t n, uint64_t off)
{
    struct scan_deferred *d = ctx;
    if (d->st->status == NP_OK)
        scan_bytes(d->st, d->c, p, n, off);
}

/* Stream bytes [from, to) of the file through the scanner in chunks; when from > 0 the first (cut) line is
 * skipped.  Lines longer than the maximum are skipped whole; a final segment without terminator is ignored.
 * The chunks are read into the sink's memory when it lends some (np_scan_opts.sink_buf: the NCCL reader's
 * slots, no copy), else into a buffer of the scan's own. */
static enum np_status scan_range(struct scan_file *f, uint64_t from, uint64_t to,
                                 struct scan_state *st, struct np_error *err)
{
    size_t readsz = f->chunk;
    if (f->seekable && to - from < readsz)
        readsz = (size_t)(to - from) + 1;
    char *own = NULL; /* allocated when the sink lends nothing */
    struct scan_carry c = {NULL, 0, 0, 0, from > 0};
    uint64_t fpos = from;
    enum np_status rc = NP_OK;
    /* the sink scans the bytes it is handed, in order, on its own threads: ended by sink(NULL, 0) below */
    struct scan_deferred dfr = {st, &c};
    int deferred = f->sink_defer && from == 0 && /* set only with a sink */
                   f->sink_defer(f->sink_ctx, scan_deferred_bytes, &dfr) == NP_OK;
    while (!f->seekable || fpos < to) {
        size_t want = readsz, room = 0;
        char *buf = f->sink_buf ? f->sink_buf(f->sink_ctx, &room) : NULL;
        if (buf && room) {
            if (want > room)
                want = room;
        } else if (!(buf = own ? own : (own = malloc(readsz)))) {
            rc = np_error_set(err, NP_E_NOMEM, f->path, 0, 0, "out of memory");
            break;
        }
        if (f->seekable && want > to - fpos)
            want = (size_t)(to - fpos);
        ssize_t r = scan_read(f, buf, want, fpos);
        if (r < 0) {
            rc = scan_io_error(err, f->path, "read error", errno);
            break;
        }
        if (r == 0)
            break; /* the file shrank, or end of a stream */
        f->bytes_read += (uint64_t)r;
        if (!deferred)
            scan_bytes(st, &c, buf, (size_t)r, fpos); /* before the sink: it may move the bytes it lent */
        fpos += (uint64_t)r;
        if (st->status != NP_OK) {
            rc = np_error_set(err, st->status, f->path, 0, 0, "out of memory");
            break;
        }
        if (f->sink) {
            enum np_status ss = f->sink(f->sink_ctx, buf, (size_t)r);
            if (ss != NP_OK) {
                rc = np_error_set(err, ss, f->path, 0, 0, "%s", np_strerror(ss));
                break;
            }
        }
    }
    if (deferred) { /* every byte handed over scanned when it returns (also after an error: c is ours) */
        enum np_status ss = f->sink(f->sink_ctx, NULL, 0);
        if (rc == NP_OK && ss != NP_OK)
            rc = np_error_set(err, ss, f->path, 0, 0, "%s", np_strerror(ss));
        if (rc == NP_OK && st->status != NP_OK)
            rc = np_error_set(err, st->status, f->path, 0, 0, "out of memory");
    }
    scan_feed_end(st);
    if (rc == NP_OK && st->status != NP_OK)
        rc = np_error_set(err, st->status, f->path, 0, 0, "out of memory");
    free(c.buf);
    free(own);
    return rc;
}

#define SCAN_TAIL_BUFFER_MAX ((uint64_t)64 << 20) /* larger tails go through scan_range */

/* Tail mode with a step budget: read backwards from the end in chunks, never below byte lo, parsing
 * the candidate lines of each chunk from the last one, until `keep` steps of the last run are known
 * (or a step of an earlier run is met).  The first chunk is SCAN_TAIL_FIRST; the next ones are sized
 * from the bytes per step seen so far, so a 50-step log is read down to its step 11 in two reads,
 * not whole.  *from is set to the lowest byte read (0: the whole file).  A cut first line is dropped;
 * so is an unterminated last line. */
static enum np_status scan_tail_back(struct scan_file *f, uint64_t lo, struct scan_state *st, size_t keep,
                                     int lean, uint64_t *from, struct np_error *err)
{
    uint64_t size = f->size, have = size, line_lo = size, lines_end = size, step = SCAN_TAIL_FIRST;
    size_t cap = (size_t)(size - lo);
    char *buf = malloc(cap ? cap : 1); /* buf[i] is the file's byte lo + i */
    struct scan_back b;
    if (!buf || scan_back_init(&b, keep, lean) != NP_OK) {
        free(buf);
        return np_error_set(err, NP_E_NOMEM, f->path, 0, 0, "out of memory");
    }
    enum np_status rc = NP_OK;
    int first = 1;
    while (have > lo && !b.done && st->status == NP_OK) {
        uint64_t next = have - lo > step ? have - step : lo;
        size_t want = (size_t)(have - next), got = 0;
        while (got < want) {
            ssize_t r = scan_read(f, buf + (next - lo) + got, want - got, next + got);
            if (r < 0) {
                rc = scan_io_error(err, f->path, "read error", errno);
                break;
            }
            if (r == 0)
                break; /* the file shrank */
            got += (size_t)r;
        }
        f->bytes_read += got;
        if (rc != NP_OK || got < want)
            break; /* a shrunk file: what was parsed stands, the rest is not there any more */
        have = next;
        if (first) { /* the end of the last whole line */
            size_t whole = scan_whole_lines(buf + (have - lo), (size_t)(size - have));
            if (whole == 0 && have > lo) { /* the unterminated last line is all that was read */
                step *= 2;
                continue;
            }
            lines_end = line_lo = have + whole;
            first = 0;
        }
        uint64_t rs = 0; /* the first line start of the chunk (its first line may be cut) */
        if (have > 0) {
            size_t a = scan_after_first_term(buf + (have - lo), (size_t)(line_lo - have));
            if (a == 0) { /* no terminator yet: one long line */
                step *= 2;
                continue;
            }
            rs = have + a;
        }
        if (rs < line_lo) {
            b.one.ctx_lo = buf + (rs - lo); /* what a wrapped Megatron record may join: the lines read */
            b.one.ctx_hi = buf + (lines_end - lo);
            b.one.ctx_off = rs;
            b.one.more_before = have > lo;
            b.redo = 0;
            scan_back_region(st, &b, buf + (rs - lo), (size_t)(line_lo - rs), rs);
        }
        line_lo = b.redo > rs && b.redo <= line_lo ? b.redo : rs;
        /* the next chunk: what the missing steps need at the density seen so far, with a margin */
        if (b.distinct > 0 && b.distinct < keep) {
            uint64_t per = (lines_end - b.rev[b.nrev - 1].offset) / b.distinct + 1;
            step = (uint64_t)(keep - b.distinct) * per * 9 / 8 + 2048;
        } else {
            step *= 2;
        }
    }
    if (st->status == NP_OK)
        scan_back_finish(st, &b);
    scan_back_free(&b);
    free(buf);
    *from = have;
    if (rc == NP_OK && st->status != NP_OK)
        rc = np_error_set(err, st->status, f->path, 0, 0, "out of memory");
    return rc;
}

enum np_status np_scan_file(const char *path, const struct np_scan_opts *opts,
                            struct np_scan_result *out, struct np_error *err)
{
    return np_scan_fileat(AT_FDCWD, path, path, opts, out, err);
}

enum np_status np_scan_fileat(int dirfd, const char *name, const char *path, const struct np_scan_opts *opts,
                              struct np_scan_result *out, struct np_error *err)
{
    struct np_scan_opts o = {.window = SCAN_WINDOW_DEFAULT, .tail_bytes = SCAN_TAIL_DEFAULT, .read_chunk = SCAN_CHUNK_DEFAULT};
    struct scan_file f;
    struct scan_state st;
    struct stat sb;
    enum np_status rc;
    if (!out)
        return np_error_set(err, NP_E_USAGE, "scan", 0, 0, "no result to fill");
    memset(out, 0, sizeof *out);
    out->fd = -1;
    if (!name || !path)
        return np_error_set(err, NP_E_USAGE, "scan", 0, 0, "no path");
    if ((rc = np_scan_init(err)) != NP_OK)
        return rc;
    if (opts) {
        o.all_steps = opts->all_steps;
        if (opts->window)
            o.window = opts->window;
        if (opts->tail_bytes)
            o.tail_bytes = opts->tail_bytes;
        if (opts->read_chunk)
            o.read_chunk = opts->read_chunk;
        o.keep = opts->keep;
        o.keep_open = opts->keep_open;
        o.lean = opts->lean;
        o.streams = opts->streams;
        o.sink = opts->sink;
        o.sink_buf = opts->sink_buf;
        o.sink_defer = opts->sink_defer;
        o.sink_ctx = opts->sink_ctx;
    }
    memset(&f, 0, sizeof f);
    f.path = path;
    f.chunk = o.read_chunk;
    if (o.streams) {
        f.fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
        if (f.fd < 0)
            return scan_io_error(err, path, "cannot open", errno);
    } else if ((rc = np_file_open_regular(dirfd, name, &f.fd, err)) != NP_OK) { /* a FIFO: refused, not waited on */
        if (err)
            snprintf(err->source, sizeof err->source, "%s", path);
        return NP_E_IO; /* unreadable here, whatever it is (scan.h) */
    }
    if (fstat(f.fd, &sb) != 0) {
        rc = scan_io_error(err, path, "cannot stat", errno);
        close(f.fd);
        return rc;
    }
    if (S_ISDIR(sb.st_mode)) {
        close(f.fd);
        return scan_io_error(err, path, "cannot read", EISDIR);
    }
    f.seekable = S_ISREG(sb.st_mode);
    f.size = f.seekable ? (uint64_t)sb.st_size : 0;
    if (scan_state_init(&st) != NP_OK) {
        scan_state_free(&st);
        close(f.fd);
        return np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
    }

    uint64_t from = 0;
    if (o.all_steps) {
        f.sink = o.sink;
        f.sink_buf = o.sink ? o.sink_buf : NULL;
        f.sink_defer = o.sink ? o.sink_defer : NULL;
        f.sink_ctx = o.sink_ctx;
    }
    if (o.all_steps || !f.seekable) {
        if (f.seekable)
            (void)posix_fadvise(f.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        rc = scan_range(&f, 0, f.size, &st, err);
    } else {
        /* With a step budget the tail is read backwards in chunks until the budget is met (bytes not
         * read are the main cost of a scan over thousands of logs), at most tail_bytes unless the
         * window needs more. */
        uint64_t want = o.tail_bytes;
        for (;;) {
            uint64_t start = f.size > want ? f.size - want : 0;
            /* One byte early: if it is a terminator the first line is whole. */
            from = start > 0 ? start - 1 : 0;
            if (o.keep && f.size - from <= SCAN_TAIL_BUFFER_MAX)
                rc = scan_tail_back(&f, from, &st, o.keep < o.window ? o.window : o.keep, o.lean, &from, err);
            else
                rc = scan_range(&f, from, f.size, &st, err);
            if (rc != NP_OK || from == 0 || st.runs >= 2)
                break;
            if (st.n >= o.window && (!o.keep || st.n >= o.keep || want >= o.tail_bytes))
                break;
            scan_state_free(&st);
            if (scan_state_init(&st) != NP_OK) {
                rc = np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
                break;
            }
            want = want > f.size / 2 ? f.size : want * 2;
        }
    }
    if (rc != NP_OK || !o.keep_open)
        close(f.fd);
    if (rc != NP_OK) {
        scan_state_free(&st);
        return rc;
    }
    scan_result_take(&st, out);
    out->fd = o.keep_open ? f.fd : -1;
    scan_state_free(&st);
    out->truncated_start = from > 0;
    out->bytes_read = f.bytes_read;
    out->file_size = f.seekable ? f.size : f.bytes_read;
    return NP_OK;
}

/* ---- Lightning's stop message ----------------------------------------- */

#define SCAN_STOP_TAIL ((uint64_t)64 << 10)

/* N of the last "`max_steps=N` reached" in s[0..n), else 0.  Lightning's fit loop: rank_zero_info(f"`Trainer.fit`
 * stopped: `max_steps={self.max_steps!r}` reached.") (Lightning-AI/pytorch-lightning src/lightning/pytorch/loops/
 * fit_loop.py, FitLoop.done @03f57f9c); a bar redrawn with '\r' may glue it to the end of its last line. */
static long scan_stop_in(const char *s, size_t n)
{
    static const char lit[] = "`max_steps=", tail[] = "` reached";
    for (size_t len = n; len > 0;) {
        const char *q = scan_memrmem(s, len, lit, sizeof lit - 1);
        if (!q)
            return 0;
        size_t d = (size_t)(q - s) + sizeof lit - 1, e = scan_digits_at(s, n, d);
        long v;
        if (e > d && n - e >= sizeof tail - 1 && memcmp(s + e, tail, sizeof tail - 1) == 0 &&
            scan_parse_digits(s + d, e - d, &v) && v > 0)
            return v;
        len = (size_t)(q - s);
    }
    return 0;
}

void np_scan_stop_message(int dirfd, const char *name, struct np_scan_result *res)
{
    if (!res || !res->nsteps || res->steps[res->nsteps - 1].total >= 0 || !name)
        return;
    int fd;
    struct np_error ferr;
    if (np_file_open_regular(dirfd, name, &fd, &ferr) != NP_OK) /* a FIFO: refused, not waited on */
        return; /* the scan read it a moment ago: the run without a stop message is what is left */
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0) {
        close(fd);
        return;
    }
    /* after the step before the last (the last step's line may be a redraw after the message), or in the last
     * 64 KiB when the run has one step and the file one run */
    const struct np_step *last = &res->steps[res->nsteps - 1];
    uint64_t size = (uint64_t)sb.st_size, from = size > SCAN_STOP_TAIL ? size - SCAN_STOP_TAIL : 0;
    uint64_t after = res->nsteps > 1 ? res->steps[res->nsteps - 2].offset : res->runs > 1 ? last->offset : 0;
    if (from < after)
        from = after;
    size_t want = from < size ? (size_t)(size - from) : 0, got = 0;
    char *buf = want ? malloc(want) : NULL;
    while (buf && got < want) {
        ssize_t r = pread(fd, buf + got, want - got, (off_t)(from + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    res->bytes_read += got;
    long n = buf ? scan_stop_in(buf, got) : 0;
    free(buf);
    if (n > 0 && (last->iteration < 0 || last->iteration <= n - 1))
        res->max_steps_reached = n;
}

void np_scan_result_free(struct np_scan_result *res)
{
    if (!res)
        return;
    free(res->steps);
    memset(res, 0, sizeof *res);
}
