/* report.c - the four output formats of nemoperf-parse, written as a stream.
 *
 * table: aligned columns for a terminal (widths from the first rows);
 * markdown: the seeds' published layout, cell for cell, from one kept run per
 * column; csv: one header row, RFC 4180 quoting; json: the documented
 * {"runs":[...],"errors":[...]} shape, each run object built with Jansson,
 * written and freed before the next.  Each format has one per-run emitter.
 */
#include "nemoperf/report.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int np_format_parse(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "table") == 0)
        return NP_FMT_TABLE;
    if (strcmp(s, "markdown") == 0 || strcmp(s, "md") == 0)
        return NP_FMT_MARKDOWN;
    if (strcmp(s, "csv") == 0)
        return NP_FMT_CSV;
    if (strcmp(s, "json") == 0)
        return NP_FMT_JSON;
    return -1;
}

void np_report_trim2(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.2f", v);
    char *dot = strchr(buf, '.');
    if (!dot)
        return;
    char *end = buf + strlen(buf);
    while (end > dot + 1 && end[-1] == '0')
        *--end = '\0';
    if (end == dot + 1)
        *dot = '\0';
}

static void report_upper(const char *s, char *buf, size_t size)
{
    size_t i = 0;
    for (; s[i] && i + 1 < size; i++)
        buf[i] = (s[i] >= 'a' && s[i] <= 'z') ? (char)(s[i] - 32) : s[i];
    buf[i] = '\0';
}

/* ---- markdown ---- */

struct report_group {
    const struct np_recipe *recipe;
    const struct np_model *model;
    enum np_dtype dtype;
    const char *gpu_type;
    const struct np_run **cols; /* one run per GPU count, ascending */
    size_t ncols;
};

static int report_run_in_markdown(const struct np_run *r)
{
    return r->model && r->id.dtype != NP_DTYPE_NONE && r->id.gpus > 0 && !isnan(r->m.tokens_per_s) &&
           (r->status == NP_RUN_OK || r->status == NP_RUN_INCOMPLETE);
}


static int report_cmp_group(const struct report_group *a, const struct np_run *r)
{
    return a->recipe == r->recipe && a->model == r->model && a->dtype == r->id.dtype &&
           strcasecmp(a->gpu_type, r->id.gpu_type) == 0;
}

static int report_cmp_groups(const void *pa, const void *pb)
{
    const struct report_group *a = pa, *b = pb;
    int c = strcmp(a->recipe->name, b->recipe->name);
    if (c)
        return c;
    size_t ma = (size_t)(a->model - a->recipe->models), mb = (size_t)(b->model - b->recipe->models);
    if (ma != mb)
        return ma < mb ? -1 : 1;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    return strcasecmp(a->gpu_type, b->gpu_type);
}

static enum np_status report_markdown(FILE *out, const struct np_run *runs, size_t nruns)
{
    struct report_group *g = calloc(nruns ? nruns : 1, sizeof *g);
    if (!g)
        return NP_E_NOMEM;
    size_t ng = 0;
    enum np_status st = NP_OK;
    for (size_t i = 0; i < nruns && st == NP_OK; i++) {
        const struct np_run *r = &runs[i];
        if (!report_run_in_markdown(r))
            continue;
        size_t k = 0;
        while (k < ng && !report_cmp_group(&g[k], r))
            k++;
        if (k == ng) {
            g[k].recipe = r->recipe;
            g[k].model = r->model;
            g[k].dtype = r->id.dtype;
            g[k].gpu_type = r->id.gpu_type;
            g[k].cols = calloc(nruns, sizeof *g[k].cols);
            if (!g[k].cols) {
                st = NP_E_NOMEM;
                break;
            }
            ng++;
        }
        /* insert by GPU count; the same count again: the later run (newer timestamp folder) wins */
        size_t c = 0;
        while (c < g[k].ncols && g[k].cols[c]->id.gpus < r->id.gpus)
            c++;
        if (c < g[k].ncols && g[k].cols[c]->id.gpus == r->id.gpus) {
            g[k].cols[c] = r;
            continue;
        }
        memmove(&g[k].cols[c + 1], &g[k].cols[c], (g[k].ncols - c) * sizeof *g[k].cols);
        g[k].cols[c] = r;
        g[k].ncols++;
    }
    if (st == NP_OK)
        qsort(g, ng, sizeof *g, report_cmp_groups);
    for (size_t k = 0; k < ng && st == NP_OK; k++) {
        char gpu[32], cell[64];
        report_upper(g[k].gpu_type, gpu, sizeof gpu);
        if (k)
            fputc('\n', out);
        fprintf(out, "%s %s %s |", g[k].recipe->title, g[k].model->size, np_dtype_name(g[k].dtype, 1));
        for (size_t c = 0; c < g[k].ncols; c++)
            fprintf(out, " %dx %s GPUs |", g[k].cols[c]->id.gpus, gpu);
        fputc('\n', out);
        for (size_t c = 0; c <= g[k].ncols; c++)
            fputs("---|", out);
        fputc('\n', out);
        fputs("Training step time (seconds per step) |", out);
        for (size_t c = 0; c < g[k].ncols; c++) {
            np_report_trim2(g[k].cols[c]->step_time_s, cell, sizeof cell);
            fprintf(out, " %s |", cell);
        }
        fputs("\nThroughput in tokens per second |", out);
        for (size_t c = 0; c < g[k].ncols; c++)
            fprintf(out, " %.0f |", g[k].cols[c]->m.tokens_per_s);
        fputs("\nModel flops utilization |", out);
        for (size_t c = 0; c < g[k].ncols; c++) {
            if (isnan(g[k].cols[c]->m.mfu_percent))
                fputs(" n/a |", out);
            else
                fprintf(out, " %.2f%% |", g[k].cols[c]->m.mfu_percent);
        }
        fputs("\nTime to train 1T tokens in days |", out);
        for (size_t c = 0; c < g[k].ncols; c++) {
            const struct np_run *r = g[k].cols[c];
            /* the seeds print n/a for proxy rows: a reduced-layer model says nothing of the full one */
            if ((r->row && r->row->proxy) || isnan(r->m.days_to_train)) {
                fputs(" n/a |", out);
            } else {
                np_report_trim2(r->m.days_to_train, cell, sizeof cell);
                fprintf(out, " %s |", cell);
            }
        }
        fputc('\n', out);
    }
    for (size_t k = 0; k < ng; k++)
        free(g[k].cols);
    free(g);
    return st;
}

/* ---- held-back text: memory first, a temporary file beyond REPORT_SPILL_MEM ---- */

#define REPORT_SPILL_MEM ((size_t)1 << 20)

struct report_spill {
    char *buf;
    size_t len, cap;
    FILE *tmp;
    int failed;
};

static void report_spill_add(struct report_spill *s, const char *text, size_t n)
{
    if (s->failed)
        return;
    if (!s->tmp && s->len + n > REPORT_SPILL_MEM && !(s->tmp = tmpfile()))
        s->tmp = NULL; /* no temporary file: keep it in memory rather than lose it */
    if (s->tmp) {
        if (fwrite(text, 1, n, s->tmp) != n)
            s->failed = 1;
        return;
    }
    if (s->len + n > s->cap) {
        size_t nc = s->cap ? s->cap : 4096;
        while (nc < s->len + n)
            nc *= 2;
        char *b = realloc(s->buf, nc);
        if (!b) {
            s->failed = 1;
            return;
        }
        s->buf = b;
        s->cap = nc;
    }
    memcpy(s->buf + s->len, text, n);
    s->len += n;
}

/* Everything held, in order, to out. */
static enum np_status report_spill_write(struct report_spill *s, FILE *out)
{
    if (s->failed)
        return NP_E_NOMEM;
    if (s->len && fwrite(s->buf, 1, s->len, out) != s->len)
        return NP_E_IO;
    if (s->tmp) {
        char b[65536];
        size_t n;
        rewind(s->tmp);
        while ((n = fread(b, 1, sizeof b, s->tmp)) > 0)
            if (fwrite(b, 1, n, out) != n)
                return NP_E_IO;
        if (ferror(s->tmp))
            return NP_E_IO;
    }
    return NP_OK;
}

static void report_spill_free(struct report_spill *s)
{
    free(s->buf);
    if (s->tmp)
        fclose(s->tmp);
    memset(s, 0, sizeof *s);
}

/* ---- table ---- */

/* v with `decimals` digits after the point ("%.*f"), "-" when unknown. */
static void report_num(char *buf, size_t size, int decimals, double v)
{
    if (isnan(v) || isinf(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.*f", decimals, v);
}

#define REPORT_MAXCOL 14
#define REPORT_CELL 48

static const char *const report_head[REPORT_MAXCOL] = {"EXPERIMENT", "GPUS", "DTYPE", "STEP", "STEP_S",
                                                       "TOKENS/S", "TOK/S/GPU", "TFLOP/S/GPU", "MFU%", "DAYS",
                                                       "STATUS", "PUBLISHED", "RATIO", "REF"};

/* One table row: column 0 is the experiment name (up to 159 bytes), the others short cells. */
struct report_row {
    char exp[sizeof ((struct np_identity *)0)->experiment];
    char cell[REPORT_MAXCOL][REPORT_CELL];
};

/* Text columns (name, dtype, status, result) align left, numbers right. */
static void report_cell(FILE *out, size_t col, size_t width, const char *text)
{
    static const char spaces[] = "                                ";
    int left = col == 0 || col == 2 || col == 10 || col == 13;
    size_t len = strlen(text), pad = len < width ? width - len : 0;
    if (col)
        fputs("  ", out);
    if (left)
        fwrite(text, 1, len, out);
    for (size_t n; pad; pad -= n) {
        n = pad < sizeof spaces - 1 ? pad : sizeof spaces - 1;
        fwrite(spaces, 1, n, out);
    }
    if (!left)
        fwrite(text, 1, len, out);
}

/* The per-run emitter of the table: one row of cells. */
static void report_table_cells(const struct np_run *r, const struct np_parse_opts *o, struct report_row *row)
{
    snprintf(row->exp, sizeof row->exp, "%s", r->id.experiment);
    char(*c)[REPORT_CELL] = row->cell;
    c[0][0] = '\0';
    if (r->id.gpus)
        snprintf(c[1], REPORT_CELL, "%d", r->id.gpus);
    else
        strcpy(c[1], "-");
    snprintf(c[2], REPORT_CELL, "%s", r->id.dtype ? np_dtype_name(r->id.dtype, 0) : "-");
    if (r->step >= 0 && r->total >= 0)
        snprintf(c[3], REPORT_CELL, "%ld/%ld", r->step, r->total);
    else if (r->step >= 0)
        snprintf(c[3], REPORT_CELL, "%ld", r->step);
    else
        strcpy(c[3], "-");
    if (isnan(r->step_time_s))
        strcpy(c[4], "-");
    else
        snprintf(c[4], REPORT_CELL, "%.4g", r->step_time_s);
    report_num(c[5], REPORT_CELL, 0, r->m.tokens_per_s);
    report_num(c[6], REPORT_CELL, 1, r->m.tokens_per_s_per_gpu);
    report_num(c[7], REPORT_CELL, 1, r->m.model_tflops_per_gpu);
    report_num(c[8], REPORT_CELL, 2, r->m.mfu_percent);
    report_num(c[9], REPORT_CELL, 2, r->m.days_to_train);
    snprintf(c[10], REPORT_CELL, "%s", np_run_status_name(r->status));
    if (o->reference) {
        if (r->ref && !isnan(r->ref->tokens_per_s))
            snprintf(c[11], REPORT_CELL, "%.0f tok/s", r->ref->tokens_per_s);
        else if (r->ref && !isnan(r->ref->tokens_per_s_per_gpu))
            snprintf(c[11], REPORT_CELL, "%.0f tok/s/gpu", r->ref->tokens_per_s_per_gpu);
        else
            strcpy(c[11], "-");
        report_num(c[12], REPORT_CELL, 3, r->ref_ratio);
        snprintf(c[13], REPORT_CELL, "%s", isnan(r->ref_ratio) ? "-" : r->ref_pass ? "PASS" : "FAIL");
    }
}

static void report_table_line(FILE *out, const struct report_row *row, const size_t *width, size_t ncol)
{
    for (size_t c = 0; c < ncol; c++)
        report_cell(out, c, width[c], c == 0 ? row->exp : row->cell[c]);
    fputc('\n', out);
}

/* ---- csv ---- */

static void report_csv_str(FILE *out, const char *s)
{
    if (!s)
        s = "";
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void report_csv_num(FILE *out, double v, int integer)
{
    fputc(',', out);
    if (isnan(v) || isinf(v))
        return;
    if (integer)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.10g", v);
}

static void report_csv_header(FILE *out, const struct np_parse_opts *o)
{
    fputs("path,experiment,recipe,model_size,dtype,gpus,gpu_type,seq_len,global_batch_size,step,steps_seen,"
          "complete,step_time_s,window_first,window_last,window_count,window_mean_s,window_median_s,"
          "window_stdev_s,window_min_s,window_max_s,tokens_per_s,tokens_per_s_per_gpu,model_flops_per_sample,"
          "model_tflops_per_gpu,mfu_percent,train_tokens,days_to_train,peak_memory_bytes,loss,status",
          out);
    if (o->reference)
        fputs(",reference_tokens_per_s,reference_tokens_per_s_per_gpu,reference_step_time_s,reference_ratio,"
              "reference_result",
              out);
    fputc('\n', out);
}

/* The per-run emitter of CSV: one row. */
static void report_csv_row(FILE *out, const struct np_run *r, const struct np_parse_opts *o)
{
    report_csv_str(out, r->path);
    fputc(',', out);
    report_csv_str(out, r->id.experiment);
    fputc(',', out);
    report_csv_str(out, r->id.recipe);
    fputc(',', out);
    report_csv_str(out, r->id.model_size);
    fputc(',', out);
    fputs(r->id.dtype ? np_dtype_name(r->id.dtype, 0) : "", out);
    report_csv_num(out, r->id.gpus ? r->id.gpus : NAN, 1);
    fputc(',', out);
    report_csv_str(out, r->id.gpu_type);
    report_csv_num(out, r->id.seq_len ? r->id.seq_len : NAN, 1);
    report_csv_num(out, r->id.gbs ? r->id.gbs : NAN, 1);
    report_csv_num(out, r->step >= 0 ? (double)r->step : NAN, 1);
    report_csv_num(out, (double)r->steps_seen, 1);
    fprintf(out, ",%s", r->complete < 0 ? "" : r->complete ? "true" : "false");
    report_csv_num(out, r->step_time_s, 0);
    report_csv_num(out, r->window.first >= 0 ? (double)r->window.first : NAN, 1);
    report_csv_num(out, r->window.last >= 0 ? (double)r->window.last : NAN, 1);
    report_csv_num(out, (double)r->window.count, 1);
    report_csv_num(out, r->window.mean_s, 0);
    report_csv_num(out, r->window.median_s, 0);
    report_csv_num(out, r->window.stdev_s, 0);
    report_csv_num(out, r->window.min_s, 0);
    report_csv_num(out, r->window.max_s, 0);
    report_csv_num(out, r->m.tokens_per_s, 0);
    report_csv_num(out, r->m.tokens_per_s_per_gpu, 0);
    report_csv_num(out, r->flops_per_sample, 0);
    report_csv_num(out, r->m.model_tflops_per_gpu, 0);
    report_csv_num(out, r->m.mfu_percent, 0);
    report_csv_num(out, r->train_tokens, 0);
    report_csv_num(out, r->m.days_to_train, 0);
    report_csv_num(out, r->peak_memory_bytes, 1);
    report_csv_num(out, r->loss, 0);
    fprintf(out, ",%s", np_run_status_name(r->status));
    if (o->reference) {
        report_csv_num(out, r->ref ? r->ref->tokens_per_s : NAN, 0);
        report_csv_num(out, r->ref ? r->ref->tokens_per_s_per_gpu : NAN, 0);
        report_csv_num(out, r->ref ? r->ref->step_time_s : NAN, 0);
        report_csv_num(out, r->ref_ratio, 0);
        fprintf(out, ",%s", isnan(r->ref_ratio) ? "" : r->ref_pass ? "PASS" : "FAIL");
    }
    fputc('\n', out);
}
/* ---- json ---- */

static json_t *report_jnum(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *report_jint(long long v, int known)
{
    return known ? json_integer(v) : json_null();
}

static json_t *report_jstr(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *report_json_run(const struct np_run *r, const struct np_parse_opts *o)
{
    json_t *w = json_pack("{s:o,s:o,s:I,s:I,s:o,s:o,s:o,s:o,s:o}", "first",
                          report_jint(r->window.first, r->window.first >= 0), "last",
                          report_jint(r->window.last, r->window.last >= 0), "count", (json_int_t)r->window.count,
                          "requested", (json_int_t)r->window.requested,
                          "mean_s", report_jnum(r->window.mean_s), "median_s", report_jnum(r->window.median_s),
                          "stdev_s", report_jnum(r->window.stdev_s), "min_s", report_jnum(r->window.min_s),
                          "max_s", report_jnum(r->window.max_s));
    json_t *j = json_object();
    if (!j || !w) {
        json_decref(j);
        json_decref(w);
        return NULL;
    }
    json_object_set_new(j, "path", json_string(r->path));
    json_object_set_new(j, "experiment", report_jstr(r->id.experiment));
    json_object_set_new(j, "recipe", report_jstr(r->id.recipe));
    json_object_set_new(j, "model_size", report_jstr(r->id.model_size));
    json_object_set_new(j, "dtype", r->id.dtype ? json_string(np_dtype_name(r->id.dtype, 0)) : json_null());
    json_object_set_new(j, "gpus", report_jint(r->id.gpus, r->id.gpus > 0));
    json_object_set_new(j, "gpu_type", report_jstr(r->id.gpu_type));
    json_object_set_new(j, "seq_len", report_jint(r->id.seq_len, r->id.seq_len > 0));
    json_object_set_new(j, "global_batch_size", report_jint(r->id.gbs, r->id.gbs > 0));
    json_object_set_new(j, "identified_by", report_jstr(r->id_source));
    json_object_set_new(j, "log_format", r->status == NP_RUN_NO_STEPS ? json_null() : json_string(np_log_gen_name(r->gen)));
    json_object_set_new(j, "attempts", json_integer((json_int_t)r->attempts));
    json_object_set_new(j, "step", report_jint(r->step, r->step >= 0));
    json_object_set_new(j, "final_step", report_jint(r->total, r->total >= 0));
    json_object_set_new(j, "steps_seen", json_integer((json_int_t)r->steps_seen));
    json_object_set_new(j, "complete", r->complete < 0 ? json_null() : json_boolean(r->complete));
    json_object_set_new(j, "step_time_s", report_jnum(r->step_time_s));
    json_object_set_new(j, "window", w);
    json_object_set_new(j, "tokens_per_s", report_jnum(r->m.tokens_per_s));
    json_object_set_new(j, "tokens_per_s_per_gpu", report_jnum(r->m.tokens_per_s_per_gpu));
    json_object_set_new(j, "model_flops_per_sample", report_jnum(r->flops_per_sample));
    json_object_set_new(j, "model_tflops_per_gpu", report_jnum(r->m.model_tflops_per_gpu));
    json_object_set_new(j, "logged_tflops_per_gpu", report_jnum(r->logged_tflops_per_gpu));
    json_object_set_new(j, "mfu_percent", report_jnum(r->m.mfu_percent));
    json_object_set_new(j, "train_tokens", report_jnum(r->train_tokens));
    json_object_set_new(j, "days_to_train", report_jnum(r->m.days_to_train));
    json_object_set_new(j, "peak_memory_bytes", report_jnum(r->peak_memory_bytes));
    json_object_set_new(j, "loss", report_jnum(r->loss));
    json_object_set_new(j, "checkpoint_saved", json_boolean(r->checkpoint_saved));
    json_object_set_new(j, "checkpoint_loaded", json_boolean(r->checkpoint_loaded));
    json_object_set_new(j, "status", json_string(np_run_status_name(r->status)));
    json_object_set_new(j, "reason", report_jstr(r->why));
    if (o->reference) {
        json_t *ref = json_null();
        if (r->ref) {
            ref = json_object();
            json_object_set_new(ref, "source", report_jstr(r->ref->source));
            json_object_set_new(ref, "step_time_s", report_jnum(r->ref->step_time_s));
            json_object_set_new(ref, "tokens_per_s", report_jnum(r->ref->tokens_per_s));
            json_object_set_new(ref, "tokens_per_s_per_gpu", report_jnum(r->ref->tokens_per_s_per_gpu));
            json_object_set_new(ref, "mfu_percent", report_jnum(r->ref->mfu_percent));
            json_object_set_new(ref, "days_1t", report_jnum(r->ref->days_1t));
            json_object_set_new(ref, "model_tflops_per_gpu", report_jnum(r->ref->model_tflops_per_gpu));
            json_object_set_new(ref, "ratio", report_jnum(r->ref_ratio));
            json_object_set_new(ref, "tolerance_percent", json_real(o->tolerance_pct));
            json_object_set_new(ref, "result", isnan(r->ref_ratio) ? json_null()
                                                                   : json_string(r->ref_pass ? "PASS" : "FAIL"));
        }
        json_object_set_new(j, "reference", ref);
    }
    return j;
}

#define REPORT_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(10))

/* A run object's text, in a buffer reused from run to run. */
struct report_jout {
    char *buf;
    size_t cap;
};

/* A run object is built and dumped in one arena, reused from run to run: no malloc/free per
 * key and value.  Jansson's allocator (json_set_alloc_funcs, set once before any worker runs)
 * takes from the arena of the calling thread while one is active and falls back to malloc
 * (a full arena, other threads reading manifests); free ignores arena memory. */
#define REPORT_ARENA ((size_t)64 << 10)

struct report_arena {
    char *buf;
    size_t used;
};

static _Thread_local struct report_arena *report_arena_cur;
static pthread_once_t report_alloc_once = PTHREAD_ONCE_INIT;

static void *report_jmalloc(size_t n)
{
    struct report_arena *a = report_arena_cur;
    if (a) {
        size_t need = (n + 15) & ~(size_t)15;
        if (need >= n && need <= REPORT_ARENA - a->used) {
            void *p = a->buf + a->used;
            a->used += need;
            return p;
        }
    }
    return malloc(n);
}

static void report_jfree(void *p)
{
    struct report_arena *a = report_arena_cur;
    if (a && (uintptr_t)p >= (uintptr_t)a->buf && (uintptr_t)p < (uintptr_t)a->buf + REPORT_ARENA)
        return;
    free(p);
}

static void report_alloc_init(void)
{
    json_set_alloc_funcs(report_jmalloc, report_jfree);
}

/* ---- the stream ---- */

struct np_report {
    FILE *out;
    enum np_format fmt;
    const struct np_parse_opts *o;
    size_t nruns, nerrors;
    enum np_status status;  /* sticky */
    /* table */
    struct report_row *rows; /* the first NP_REPORT_TABLE_ROWS rows, until the widths are fixed */
    size_t nrows, ncol;
    size_t width[REPORT_MAXCOL];
    int widths_fixed;
    struct report_spill why; /* table: "status: path: reason" lines, printed after the rows; json: errors */
    struct report_jout json; /* json: one run object's text (json_dumpb) */
    struct report_arena arena; /* json: one run object's memory */
    /* markdown: one run per (table, GPU count), strings not owned */
    struct np_run *md;
    size_t nmd, capmd;
};

struct np_report *np_report_new(FILE *out, enum np_format fmt, const struct np_parse_opts *opts)
{
    struct np_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->out = out;
    r->fmt = fmt;
    r->o = opts;
    r->ncol = opts->reference ? 14 : 11;
    if (fmt == NP_FMT_JSON) /* before any worker thread runs: Jansson's allocator is process-wide */
        pthread_once(&report_alloc_once, report_alloc_init);
    for (size_t c = 0; c < r->ncol; c++)
        r->width[c] = strlen(report_head[c]);
    return r;
}

static void report_table_widen(struct np_report *rep, const struct report_row *row)
{
    if (strlen(row->exp) > rep->width[0])
        rep->width[0] = strlen(row->exp);
    for (size_t c = 1; c < rep->ncol; c++)
        if (strlen(row->cell[c]) > rep->width[c])
            rep->width[c] = strlen(row->cell[c]);
}

/* Widths from the rows held so far: header and held rows out, later rows go straight out. */
static void report_table_fix(struct np_report *rep)
{
    if (rep->widths_fixed)
        return;
    for (size_t c = 0; c < rep->ncol; c++)
        report_cell(rep->out, c, rep->width[c], report_head[c]);
    fputc('\n', rep->out);
    for (size_t i = 0; i < rep->nrows; i++)
        report_table_line(rep->out, &rep->rows[i], rep->width, rep->ncol);
    free(rep->rows);
    rep->rows = NULL;
    rep->nrows = 0;
    rep->widths_fixed = 1;
}

static enum np_status report_table_run(struct np_report *rep, const struct np_run *r)
{
    struct report_row row;
    report_table_cells(r, rep->o, &row);
    if (r->status != NP_RUN_OK && r->why) {
        char line[8192];
        int n = snprintf(line, sizeof line, "%s: %s: %s\n", np_run_status_name(r->status), r->path, r->why);
        if (n >= (int)sizeof line) {
            /* a very long path: held whole all the same */
            size_t len = strlen(np_run_status_name(r->status)) + strlen(r->path) + strlen(r->why) + 6;
            char *big = malloc(len);
            if (!big)
                return NP_E_NOMEM;
            snprintf(big, len, "%s: %s: %s\n", np_run_status_name(r->status), r->path, r->why);
            report_spill_add(&rep->why, big, strlen(big));
            free(big);
        } else if (n > 0) {
            report_spill_add(&rep->why, line, (size_t)n);
        }
    }
    if (rep->widths_fixed) {
        size_t width[REPORT_MAXCOL];
        memcpy(width, rep->width, sizeof width);
        report_table_line(rep->out, &row, width, rep->ncol);
        return NP_OK;
    }
    if (!rep->rows && !(rep->rows = malloc(NP_REPORT_TABLE_ROWS * sizeof *rep->rows)))
        return NP_E_NOMEM;
    report_table_widen(rep, &row);
    rep->rows[rep->nrows++] = row;
    if (rep->nrows == NP_REPORT_TABLE_ROWS)
        report_table_fix(rep);
    return NP_OK;
}

static int report_md_same(const struct np_run *a, const struct np_run *b)
{
    return a->recipe == b->recipe && a->model == b->model && a->id.dtype == b->id.dtype &&
           a->id.gpus == b->id.gpus && strcasecmp(a->id.gpu_type, b->id.gpu_type) == 0;
}

/* Markdown keeps one run per (table, GPU count): the later one wins, as in the published tables. */
static enum np_status report_md_run(struct np_report *rep, const struct np_run *r)
{
    if (!report_run_in_markdown(r))
        return NP_OK;
    struct np_run keep = *r;
    keep.path = keep.dir = keep.why = NULL; /* not printed, not owned */
    for (size_t i = 0; i < rep->nmd; i++)
        if (report_md_same(&rep->md[i], r)) {
            rep->md[i] = keep;
            return NP_OK;
        }
    if (rep->nmd == rep->capmd) {
        size_t nc = rep->capmd ? rep->capmd * 2 : 16;
        struct np_run *m = realloc(rep->md, nc * sizeof *m);
        if (!m)
            return NP_E_NOMEM;
        rep->md = m;
        rep->capmd = nc;
    }
    rep->md[rep->nmd++] = keep;
    return NP_OK;
}

/* The run object is dumped inside a {"runs":[...]} of its own, so that Jansson indents it as
 * deep as the envelope will hold it, and the object's lines are cut out of that text. */
#define REPORT_JSON_HEAD "{\n  \"runs\": [\n    "
#define REPORT_JSON_TAIL "\n  ]\n}"

static enum np_status report_json_run_text(struct np_report *rep, const struct np_run *r)
{
    json_t *j = report_json_run(r, rep->o);
    json_t *wrap = j ? json_pack("{s:[o]}", "runs", j) : NULL;
    if (!wrap)
        return NP_E_NOMEM;
    struct report_jout *b = &rep->json;
    size_t need = json_dumpb(wrap, b->buf, b->cap, REPORT_JSON_FLAGS);
    if (need > b->cap) {
        char *nb = realloc(b->buf, need);
        if (nb) {
            b->buf = nb;
            b->cap = need;
            need = json_dumpb(wrap, b->buf, b->cap, REPORT_JSON_FLAGS);
        } else {
            need = 0;
        }
    }
    json_decref(wrap);
    const size_t hl = sizeof REPORT_JSON_HEAD - 1, tl = sizeof REPORT_JSON_TAIL - 1;
    if (need < hl + tl || memcmp(b->buf, REPORT_JSON_HEAD, hl) != 0 ||
        memcmp(b->buf + need - tl, REPORT_JSON_TAIL, tl) != 0)
        return NP_E_NOMEM; /* json_dumpb failed (memory) */
    if (rep->nruns)
        fputs(",\n    ", rep->out);
    else
        fputs(REPORT_JSON_HEAD, rep->out);
    size_t len = need - hl - tl;
    return fwrite(b->buf + hl, 1, len, rep->out) == len ? NP_OK : NP_E_IO;
}

static enum np_status report_json_run_out(struct np_report *rep, const struct np_run *r)
{
    if (!rep->arena.buf && !(rep->arena.buf = malloc(REPORT_ARENA)))
        return NP_E_NOMEM;
    rep->arena.used = 0;
    report_arena_cur = &rep->arena;
    enum np_status st = report_json_run_text(rep, r);
    report_arena_cur = NULL;
    return st;
}

enum np_status np_report_run(struct np_report *rep, const struct np_run *run)
{
    if (rep->status != NP_OK)
        return rep->status;
    enum np_status st = NP_OK;
    flockfile(rep->out); /* one lock per run, not per character */
    switch (rep->fmt) {
    case NP_FMT_MARKDOWN: st = report_md_run(rep, run); break;
    case NP_FMT_CSV:
        if (rep->nruns == 0)
            report_csv_header(rep->out, rep->o);
        report_csv_row(rep->out, run, rep->o);
        break;
    case NP_FMT_JSON: st = report_json_run_out(rep, run); break;
    default: st = report_table_run(rep, run); break;
    }
    funlockfile(rep->out);
    rep->nruns++;
    if (st == NP_OK && ferror(rep->out))
        st = NP_E_IO;
    rep->status = st;
    return st;
}

enum np_status np_report_error(struct np_report *rep, const char *msg)
{
    if (rep->fmt != NP_FMT_JSON || rep->status != NP_OK)
        return rep->status;
    json_t *s = json_string(msg);
    if (!s) { /* a path that is not UTF-8: kept, each byte above ASCII shown as '?' */
        char *ascii = strdup(msg);
        if (ascii)
            for (char *c = ascii; *c; c++)
                if ((unsigned char)*c >= 0x80)
                    *c = '?';
        s = ascii ? json_string(ascii) : NULL;
        free(ascii);
    }
    char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    if (!text)
        return rep->status = NP_E_NOMEM;
    report_spill_add(&rep->why, rep->nerrors ? ",\n    " : "\n    ", rep->nerrors ? 6 : 5);
    report_spill_add(&rep->why, text, strlen(text));
    free(text);
    rep->nerrors++;
    return NP_OK;
}

enum np_status np_report_finish(struct np_report *rep)
{
    enum np_status st = rep->status;
    FILE *out = rep->out;
    if (st == NP_OK) {
        switch (rep->fmt) {
        case NP_FMT_MARKDOWN: st = report_markdown(out, rep->md, rep->nmd); break;
        case NP_FMT_CSV:
            if (rep->nruns == 0)
                report_csv_header(out, rep->o);
            break;
        case NP_FMT_JSON:
            fputs(rep->nruns ? "\n  ],\n  \"errors\": [" : "{\n  \"runs\": [],\n  \"errors\": [", out);
            st = report_spill_write(&rep->why, out);
            fputs(rep->nerrors ? "\n  ]\n}\n" : "]\n}\n", out);
            break;
        default:
            report_table_fix(rep);
            st = report_spill_write(&rep->why, out);
            break;
        }
    }
    if (st == NP_OK && (fflush(out) != 0 || ferror(out)))
        st = NP_E_IO;
    rep->status = st == NP_OK ? rep->status : st;
    return st;
}

void np_report_free(struct np_report *rep)
{
    if (!rep)
        return;
    free(rep->rows);
    free(rep->md);
    free(rep->json.buf);
    free(rep->arena.buf);
    report_spill_free(&rep->why);
    free(rep);
}

enum np_status np_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                               const struct np_parse_opts *opts)
{
    struct np_report *rep = np_report_new(out, fmt, opts);
    if (!rep)
        return NP_E_NOMEM;
    enum np_status st = NP_OK;
    for (size_t i = 0; st == NP_OK && i < res->nruns; i++)
        st = np_report_run(rep, &res->runs[i]);
    for (size_t i = 0; st == NP_OK && i < res->nerrors; i++)
        st = np_report_error(rep, res->errors[i]);
    if (st == NP_OK)
        st = np_report_finish(rep);
    np_report_free(rep);
    return st;
}
