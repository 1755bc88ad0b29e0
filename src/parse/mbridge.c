/* mbridge.c - Megatron-Bridge performance runs: published rows, logs, and their metrics.
 *
 * Reads runs.tsv/peaks.tsv (written by share/nemoperf/reference/extract-mbridge.py), the iteration and
 * rank-0 utilization lines of a Megatron-Bridge training log (PCRE2), and turns the steady window into
 * tokens/s/GPU, model TFLOP/s/GPU by Megatron-Bridge's FLOPs conventions, and MFU.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "nemoperf/parse/mbridge.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/util/fileio.h"

#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/model/flops_mbridge.h"
#include "nemoperf/model/recipe.h"

/* ---- reference data ---- */

enum mbridge_col {
    MBC_CONTAINER, MBC_TASK, MBC_RECIPE, MBC_FAMILY, MBC_MODEL, MBC_VARIANT, MBC_DTYPE, MBC_PRECISION, MBC_GPU,
    MBC_GPUS, MBC_GBS, MBC_MBS, MBC_SEQ, MBC_FSDP, MBC_TP, MBC_PP, MBC_CP, MBC_VP, MBC_EP, MBC_GA, MBC_TOK,
    MBC_TFLOPS, MBC_AS, MBC_FOOT, MBC_RELEASE, MBC_SOURCE, MBC_NCOLS
};
static const char *const mbridge_cols[MBC_NCOLS] = {
    "container", "task", "recipe", "family", "model", "variant", "dtype", "precision", "gpu_type", "gpus", "gbs",
    "mbs", "seq_len", "fsdp", "tp", "pp", "cp", "vp", "ep", "ga", "tokens_per_s_per_gpu", "model_tflops_per_gpu",
    "published_as", "footnote", "mb_release", "source"};

/* Split at tabs in place; returns the cell count (at most max). */
static size_t mbridge_split(char *line, char **cells, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (n < max) {
        cells[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static int mbridge_copy(char *dst, size_t cap, const char *src)
{
    size_t l = strlen(src);
    if (l >= cap)
        return 0;
    memcpy(dst, src, l + 1);
    return 1;
}

/* "-"/"n/a" -> 0; a non-negative integer; else -1 */
static int mbridge_int(const char *s)
{
    if (strcmp(s, "-") == 0 || strcasecmp(s, "n/a") == 0)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return (errno || *end || end == s || v < 0 || v > 100000000) ? -1 : (int)v;
}

static int mbridge_num(const char *s, double *out)
{
    if (strcmp(s, "-") == 0 || strcasecmp(s, "n/a") == 0) {
        *out = NAN;
        return 1;
    }
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return !errno && *end == '\0' && end != s && isfinite(*out) && *out >= 0;
}

/* Read a TSV with comment lines and one header; calls row() for each data line.  The header's columns
 * must include every name of want[0..nwant); map[i] = its index. */
static enum np_status mbridge_tsv(const char *path, const char *const *want, int nwant, int *map,
                                  enum np_status (*row)(void *ctx, char **cells, int line, struct np_error *err),
                                  void *ctx, struct np_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    char *line = NULL, *cells[64];
    size_t cap = 0, nhdr = 0;
    ssize_t len;
    int lineno = 0;
    enum np_status st = NP_OK;
    while (st == NP_OK && (len = np_file_next_line(f, &line, &cap, &lineno)) >= 0) {
        size_t n = mbridge_split(line, cells, 64);
        if (!nhdr) {
            for (int c = 0; c < nwant && st == NP_OK; c++) {
                map[c] = -1;
                for (size_t i = 0; i < n; i++)
                    if (strcmp(cells[i], want[c]) == 0)
                        map[c] = (int)i;
                if (map[c] < 0)
                    st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "header lacks column \"%s\"", want[c]);
            }
            nhdr = n;
            continue;
        }
        if (n != nhdr)
            st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "%zu cells, the header has %zu", n, nhdr);
        else
            st = row(ctx, cells, lineno, err);
        if (st != NP_OK && !err->source[0])
            np_error_set(err, st, path, lineno, 1, "bad line");
    }
    if (st == NP_OK && !nhdr)
        st = np_error_set(err, NP_E_PARSE, path, 0, 0, "empty file: expected a header line");
    free(line);
    fclose(f);
    return st;
}

struct mbridge_load {
    struct np_mb_ref *ref;
    const char *path;
    int map[MBC_NCOLS];
};

static enum np_status mbridge_run_row(void *vctx, char **cells, int line, struct np_error *err)
{
    struct mbridge_load *c = vctx;
    struct np_mb_row r;
    memset(&r, 0, sizeof r);
    r.line = line;
#define MB_CELL(col) cells[c->map[col]]
    struct {
        char *dst;
        size_t cap;
        int col;
    } strs[] = {
        {r.container, sizeof r.container, MBC_CONTAINER}, {r.task, sizeof r.task, MBC_TASK},
        {r.recipe, sizeof r.recipe, MBC_RECIPE},          {r.family, sizeof r.family, MBC_FAMILY},
        {r.model, sizeof r.model, MBC_MODEL},             {r.variant, sizeof r.variant, MBC_VARIANT},
        {r.precision, sizeof r.precision, MBC_PRECISION}, {r.gpu_type, sizeof r.gpu_type, MBC_GPU},
        {r.published_as, sizeof r.published_as, MBC_AS}, {r.footnote, sizeof r.footnote, MBC_FOOT},
        {r.mb_release, sizeof r.mb_release, MBC_RELEASE}, {r.source, sizeof r.source, MBC_SOURCE},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (!mbridge_copy(strs[i].dst, strs[i].cap, MB_CELL(strs[i].col)))
            return np_error_set(err, NP_E_PARSE, c->path, line, 1, "%s: \"%s\" is too long",
                                mbridge_cols[strs[i].col], MB_CELL(strs[i].col));
    r.dtype = np_mb_dtype_parse(MB_CELL(MBC_DTYPE));
    if (r.dtype == NP_MB_DTYPE_NONE)
        return np_error_set(err, NP_E_PARSE, c->path, line, 1, "dtype: \"%s\" is not a Megatron-Bridge dtype",
                            MB_CELL(MBC_DTYPE));
    int *ints[] = {&r.gpus, &r.gbs, &r.mbs, &r.seq_len, &r.fsdp, &r.tp, &r.pp, &r.cp, &r.vp, &r.ep, &r.ga};
    for (int col = MBC_GPUS; col <= MBC_GA; col++)
        if ((*ints[col - MBC_GPUS] = mbridge_int(MB_CELL(col))) < 0)
            return np_error_set(err, NP_E_PARSE, c->path, line, 1, "%s: \"%s\" is not an integer, - or n/a",
                                mbridge_cols[col], MB_CELL(col));
    if (r.gpus <= 0 || r.gbs <= 0 || r.seq_len <= 0)
        return np_error_set(err, NP_E_PARSE, c->path, line, 1, "gpus, gbs and seq_len must be positive");
    if (!mbridge_num(MB_CELL(MBC_TOK), &r.tokens_per_s_per_gpu) ||
        !mbridge_num(MB_CELL(MBC_TFLOPS), &r.model_tflops_per_gpu))
        return np_error_set(err, NP_E_PARSE, c->path, line, 1, "tokens_per_s_per_gpu/model_tflops_per_gpu: "
                                                               "not a number or -");
#undef MB_CELL
    struct np_mb_row *nr = realloc(c->ref->rows, (c->ref->n + 1) * sizeof *nr);
    if (!nr)
        return np_error_set(err, NP_E_NOMEM, c->path, line, 0, "out of memory");
    c->ref->rows = nr;
    c->ref->rows[c->ref->n++] = r;
    return NP_OK;
}

static const char *const mbridge_peak_cols[1 + NP_MB_NDTYPES] = {"gpu_type", "bf16", "fp8_cs", "fp8_mx", "fp8_sc",
                                                                 "nvfp4"};

static enum np_status mbridge_peak_row(void *vctx, char **cells, int line, struct np_error *err)
{
    struct mbridge_load *c = vctx;
    struct np_mb_ref *ref = c->ref;
    if (ref->npeaks >= sizeof ref->peak_gpu / sizeof ref->peak_gpu[0])
        return np_error_set(err, NP_E_PARSE, c->path, line, 1, "too many GPU types");
    if (!mbridge_copy(ref->peak_gpu[ref->npeaks], sizeof ref->peak_gpu[0], cells[c->map[0]]))
        return np_error_set(err, NP_E_PARSE, c->path, line, 1, "gpu_type too long");
    for (int d = 0; d < NP_MB_NDTYPES; d++) {
        double v;
        if (!mbridge_num(cells[c->map[1 + d]], &v))
            return np_error_set(err, NP_E_PARSE, c->path, line, 1, "%s: not a number or -", mbridge_peak_cols[1 + d]);
        ref->peak[ref->npeaks][d] = isnan(v) ? 0 : v;
    }
    ref->npeaks++;
    return NP_OK;
}

/* Every row as --reference reads a published row (parse/run.c np_run_verdict): tokens/s/GPU and model TFLOP/s/GPU,
 * the source cited with the container's summary and its line. */
static char mbridge_runs_file[] = "megatron-bridge/runs.tsv";

static enum np_status mbridge_published(struct np_mb_ref *ref, struct np_error *err)
{
    free(ref->published);
    ref->published = calloc(ref->n ? ref->n : 1, sizeof *ref->published);
    if (!ref->published)
        return np_error_set(err, NP_E_NOMEM, "megatron-bridge", 0, 0, "out of memory");
    for (size_t i = 0; i < ref->n; i++) {
        struct np_mb_row *r = &ref->rows[i];
        struct np_ref_row *p = &ref->published[i];
        snprintf(r->cited, sizeof r->cited, "Megatron-Bridge performance summary, %s (%s)", r->container, r->source);
        p->recipe = r->recipe;
        p->model_size = r->model;
        p->gpu_type = r->gpu_type;
        p->source = r->cited;
        p->task = r->task;
        p->note = r->footnote[0] && strcmp(r->footnote, "-") != 0 ? r->footnote : NULL;
        p->consistent = 1;
        p->gbs = r->gbs;
        p->mbs = r->mbs;
        p->tp = r->tp;
        p->pp = r->pp;
        p->vp = r->vp;
        p->ga = r->ga;
        p->dtype = r->dtype == NP_MB_BF16 ? NP_DTYPE_BF16 : NP_DTYPE_FP8;
        p->gpus = r->gpus;
        p->step_time_s = p->tokens_per_s = p->mfu_percent = p->days_1t = NAN;
        p->tokens_per_s_per_gpu = r->tokens_per_s_per_gpu > 0 ? r->tokens_per_s_per_gpu : NAN;
        p->model_tflops_per_gpu = r->model_tflops_per_gpu > 0 ? r->model_tflops_per_gpu : NAN;
        p->file = mbridge_runs_file;
        p->line = r->line;
        const char *colon = strrchr(r->source, ':');
        p->layout = r->container;
        p->layout_line = colon ? atoi(colon + 1) : 0;
        p->layout_second = strcmp(r->published_as, "second") == 0;
    }
    return NP_OK;
}

enum np_status np_mb_ref_load(const char *runs_tsv, const char *peaks_tsv, struct np_mb_ref *ref,
                              struct np_error *err)
{
    struct mbridge_load c = {.ref = ref, .path = runs_tsv};
    enum np_status st = mbridge_tsv(runs_tsv, mbridge_cols, MBC_NCOLS, c.map, mbridge_run_row, &c, err);
    if (st != NP_OK)
        return st;
    c.path = peaks_tsv;
    st = mbridge_tsv(peaks_tsv, mbridge_peak_cols, 1 + NP_MB_NDTYPES, c.map, mbridge_peak_row, &c, err);
    if (st != NP_OK)
        return st;
    return mbridge_published(ref, err);
}

enum np_status np_mb_ref_load_default(struct np_mb_ref *ref, struct np_error *err)
{
    char *refdir = np_data_path("reference"), *mbdir = np_data_path("megatron-bridge");
    enum np_status st;
    if (!refdir || !mbdir) {
        st = np_error_set(err, NP_E_NOTFOUND, "megatron-bridge", 0, 0,
                          "Megatron-Bridge data not found (set NEMOPERF_DATADIR to the folder holding reference/ "
                          "and megatron-bridge/)");
    } else {
        char runs[4096], peaks[4096];
        snprintf(runs, sizeof runs, "%s/megatron-bridge/runs.tsv", refdir);
        snprintf(peaks, sizeof peaks, "%s/peaks.tsv", mbdir);
        st = np_mb_ref_load(runs, peaks, ref, err);
    }
    free(refdir);
    free(mbdir);
    return st;
}

void np_mb_ref_free(struct np_mb_ref *ref)
{
    if (!ref)
        return;
    free(ref->rows);
    free(ref->published);
    memset(ref, 0, sizeof *ref);
}

double np_mb_peak(const struct np_mb_ref *ref, const char *gpu, enum np_mb_dtype dtype)
{
    if (!ref || !gpu || dtype < 0 || dtype >= NP_MB_NDTYPES)
        return 0;
    for (size_t i = 0; i < ref->npeaks; i++)
        if (strcasecmp(ref->peak_gpu[i], gpu) == 0)
            return ref->peak[i][dtype];
    return 0;
}

int np_mb_container_newer(const char *a, const char *b)
{
    int x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
    sscanf(a, "%d.%d.%d", &x[0], &x[1], &x[2]);
    sscanf(b, "%d.%d.%d", &y[0], &y[1], &y[2]);
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] > y[i];
    return 0;
}

const struct np_mb_row *np_mb_ref_find(const struct np_mb_ref *ref, const char *container, const char *task,
                                       const char *recipe, enum np_mb_dtype dtype, const char *gpu, int gpus,
                                       int gbs, int seq_len)
{
    const struct np_mb_row *best = NULL;
    if (!ref || !recipe || !gpu)
        return NULL;
    for (size_t i = 0; i < ref->n; i++) {
        const struct np_mb_row *r = &ref->rows[i];
        if (strcmp(r->recipe, recipe) != 0 || r->dtype != dtype || strcasecmp(r->gpu_type, gpu) != 0 ||
            r->gpus != gpus || strcmp(r->task, task ? task : "pretrain") != 0 || (gbs > 0 && r->gbs != gbs) ||
            (seq_len > 0 && r->seq_len != seq_len))
            continue;
        if (container && *container) {
            if (strcmp(r->container, container) == 0)
                return r;
        } else if (!best || np_mb_container_newer(r->container, best->container)) {
            best = r;
        }
    }
    return best;
}

int np_mb_ref_has_recipe(const struct np_mb_ref *ref, const char *recipe)
{
    for (size_t i = 0; ref && recipe && i < ref->n; i++)
        if (strcmp(ref->rows[i].recipe, recipe) == 0)
            return 1;
    return 0;
}

/* ---- the log ---- */

/* MB@v0.6.0 src/megatron/bridge/training/utils/train_utils.py: the iteration line (" iteration {:8d}/{:8d} |",
 * " elapsed time per iteration (ms): {:.1f} |", " global batch size: {:5d} |") and rank 0's
 * "Step Time : {:.2f}s GPU utilization: {:.1f}MODEL_TFLOP/s/GPU" (facts: train_utils.py:1018-1051,1088-1140). */
static const char mbridge_pat_iter[] =
    "\\biteration\\s+(\\d+)/\\s*(\\d+)\\s*\\|.*?elapsed time per iteration \\(ms\\):\\s*([0-9.]+)"
    "(?:.*?global batch size:\\s*(\\d+))?";
static const char mbridge_pat_util[] = "GPU utilization:\\s*([0-9.]+)\\s*MODEL_TFLOP/s/GPU";
static const char mbridge_pat_nan[] = "grad norm:\\s*nan\\b";

static double mbridge_group_num(const char *line, PCRE2_SIZE *ov, int g)
{
    char buf[64];
    size_t l = ov[2 * g + 1] - ov[2 * g];
    if (ov[2 * g] == PCRE2_UNSET || l == 0 || l >= sizeof buf)
        return NAN;
    memcpy(buf, line + ov[2 * g], l);
    buf[l] = '\0';
    char *end;
    double v = strtod(buf, &end);
    return *end ? NAN : v;
}

enum np_status np_mb_log_read(FILE *f, const char *name, struct np_mb_log *log, struct np_error *err)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re[3] = {
        pcre2_compile((PCRE2_SPTR)mbridge_pat_iter, PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL),
        pcre2_compile((PCRE2_SPTR)mbridge_pat_util, PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL),
        pcre2_compile((PCRE2_SPTR)mbridge_pat_nan, PCRE2_ZERO_TERMINATED, PCRE2_CASELESS, &ec, &eo, NULL)};
    pcre2_match_data *md = pcre2_match_data_create(8, NULL);
    enum np_status st = NP_OK;
    if (!re[0] || !re[1] || !re[2] || !md)
        st = np_error_set(err, NP_E_INTERNAL, name, 0, 0, "cannot compile the Megatron-Bridge log patterns");
    for (int i = 0; st == NP_OK && i < 3; i++)
        pcre2_jit_compile(re[i], PCRE2_JIT_COMPLETE);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    while (st == NP_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (pcre2_match(re[0], (PCRE2_SPTR)line, (PCRE2_SIZE)len, 0, 0, md, NULL) >= 0) {
            double it = mbridge_group_num(line, ov, 1), n = mbridge_group_num(line, ov, 2),
                   ms = mbridge_group_num(line, ov, 3), g = mbridge_group_num(line, ov, 4);
            if (isnan(it) || isnan(ms) || ms < 0)
                continue; /* not a usable iteration line: skip, as a truncated last line is */
            if (log->n == log->cap) {
                size_t nc = log->cap ? log->cap * 2 : 64;
                long *ni = realloc(log->iter, nc * sizeof *ni);
                if (ni)
                    log->iter = ni;
                double *nm = ni ? realloc(log->ms, nc * sizeof *nm) : NULL;
                if (nm)
                    log->ms = nm;
                int *ng = nm ? realloc(log->gbs, nc * sizeof *ng) : NULL;
                if (!ng) {
                    st = np_error_set(err, NP_E_NOMEM, name, lineno, 0, "out of memory");
                    break;
                }
                log->gbs = ng;
                log->cap = nc;
            }
            log->iter[log->n] = (long)it;
            log->ms[log->n] = ms;
            log->gbs[log->n] = isnan(g) ? 0 : (int)g;
            log->n++;
            if (!isnan(n))
                log->train_iters = (long)n;
            if (pcre2_match(re[2], (PCRE2_SPTR)line, (PCRE2_SIZE)len, 0, 0, md, NULL) >= 0)
                log->nan_grad = 1;
        } else if (pcre2_match(re[1], (PCRE2_SPTR)line, (PCRE2_SIZE)len, 0, 0, md, NULL) >= 0) {
            double t = mbridge_group_num(line, ov, 1);
            if (isnan(t))
                continue;
            if (log->nutil == log->ucap) {
                size_t nc = log->ucap ? log->ucap * 2 : 64;
                double *nu = realloc(log->util, nc * sizeof *nu);
                if (!nu) {
                    st = np_error_set(err, NP_E_NOMEM, name, lineno, 0, "out of memory");
                    break;
                }
                log->util = nu;
                log->ucap = nc;
            }
            log->util[log->nutil++] = t;
        }
    }
    if (st == NP_OK && ferror(f))
        st = np_error_set(err, NP_E_IO, name, lineno, 0, "read error: %s", strerror(errno));
    free(line);
    pcre2_match_data_free(md);
    for (int i = 0; i < 3; i++)
        pcre2_code_free(re[i]);
    return st;
}

void np_mb_log_free(struct np_mb_log *log)
{
    if (!log)
        return;
    free(log->iter);
    free(log->ms);
    free(log->gbs);
    free(log->util);
    memset(log, 0, sizeof *log);
}

int np_mb_analyse(const struct np_mb_log *log, const struct np_mb_ref *ref, const char *recipe, const char *task,
                  const char *variant, const char *mb_release, enum np_mb_dtype dtype, const char *gpu, int gpus,
                  int gbs, int seq_len, int tp, long first, long last, struct np_mb_result *r)
{
    memset(r, 0, sizeof *r);
    r->flops_per_token = r->model_tflops_per_gpu = r->logged_tflops_per_gpu = NAN;
    r->tflops_disagreement = r->mfu_percent = r->tokens_per_s_per_gpu = r->step_s = NAN;
    if (!log || log->n == 0) {
        snprintf(r->problem, sizeof r->problem, "no iteration lines");
        return -1;
    }
    long lastit = log->iter[log->n - 1];
    if (first < 0 || last < 0) {
        /* llmb: 35-44 when the run got past 44; a shorter run: its last 10 iterations */
        first = NP_MB_WINDOW_FIRST;
        last = NP_MB_WINDOW_LAST;
        if (lastit < last) {
            last = lastit;
            first = lastit > 10 ? lastit - 9 : 1;
        }
    }
    r->first = first;
    r->last = last;
    double sum = 0, usum = 0;
    size_t nu = 0;
    int loggbs = 0;
    for (size_t i = 0; i < log->n; i++) {
        if (log->iter[i] < first || log->iter[i] > last)
            continue;
        sum += log->ms[i];
        r->steps++;
        if (log->gbs[i] > 0)
            loggbs = log->gbs[i];
        if (i < log->nutil) { /* rank 0 prints one figure per iteration line: paired by position (llmb) */
            usum += log->util[i];
            nu++;
        }
    }
    long want = last - first + 1;
    if (r->steps == 0 || (long)r->steps < want) {
        snprintf(r->problem, sizeof r->problem, "window %ld-%ld: %zu of %ld iterations in the log (last %ld)", first,
                 last, r->steps, want, lastit);
        if (r->steps == 0)
            return -1;
    }
    r->gbs = loggbs;
    if (gbs <= 0)
        gbs = loggbs;
    if (gbs <= 0 || seq_len <= 0 || gpus <= 0) {
        snprintf(r->problem, sizeof r->problem, "GBS, sequence length and GPU count are needed for tokens/s");
        return -1;
    }
    r->step_s = sum / (double)r->steps / 1000.0;
    double tokens = (double)seq_len * gbs;
    r->tokens_per_s_per_gpu = tokens / (r->step_s * gpus);
    r->flops_per_token = np_mbf_flops_per_token(recipe, task, variant, np_mbf_conv_of_release(mb_release), seq_len,
                                                tp, &r->why_flops);
    if (!isnan(r->flops_per_token))
        r->model_tflops_per_gpu = r->flops_per_token * r->tokens_per_s_per_gpu / 1e12;
    if (nu)
        r->logged_tflops_per_gpu = usum / (double)nu;
    if (!isnan(r->model_tflops_per_gpu) && !isnan(r->logged_tflops_per_gpu) && r->model_tflops_per_gpu > 0)
        r->tflops_disagreement = r->logged_tflops_per_gpu / r->model_tflops_per_gpu - 1;
    double shown = !isnan(r->model_tflops_per_gpu) ? r->model_tflops_per_gpu : r->logged_tflops_per_gpu;
    double peak = np_mb_peak(ref, gpu, dtype);
    if (peak > 0 && !isnan(shown))
        r->mfu_percent = 100.0 * shown / peak;
    return r->problem[0] ? -1 : 0;
}
