/* report.c - the four output formats of nemoperf-parse.
 *
 * table: aligned columns for a terminal; markdown: the seeds' published
 * layout, cell for cell; csv: one header row, RFC 4180 quoting; json: the
 * documented {"runs":[...],"errors":[...]} shape built with Jansson.
 */
#include "nemoperf/report.h"

#include <jansson.h>
#include <math.h>
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

static enum np_status report_markdown(FILE *out, const struct np_parse_result *res)
{
    struct report_group *g = calloc(res->nruns ? res->nruns : 1, sizeof *g);
    if (!g)
        return NP_E_NOMEM;
    size_t ng = 0;
    enum np_status st = NP_OK;
    for (size_t i = 0; i < res->nruns && st == NP_OK; i++) {
        const struct np_run *r = &res->runs[i];
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
            g[k].cols = calloc(res->nruns, sizeof *g[k].cols);
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

/* Text columns (name, dtype, status, result) align left, numbers right. */
static void report_cell(FILE *out, size_t col, size_t width, const char *text)
{
    int left = col == 0 || col == 2 || col == 10 || col == 13;
    if (col)
        fputs("  ", out);
    if (left)
        fprintf(out, "%-*s", (int)width, text);
    else
        fprintf(out, "%*s", (int)width, text);
}

static enum np_status report_table(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o)
{
    static const char *const head[REPORT_MAXCOL] = {"EXPERIMENT", "GPUS", "DTYPE", "STEP", "STEP_S", "TOKENS/S",
                                                    "TOK/S/GPU", "TFLOP/S/GPU", "MFU%", "DAYS", "STATUS",
                                                    "PUBLISHED", "RATIO", "REF"};
    size_t ncol = o->reference ? 14 : 11;
    size_t n = res->nruns;
    char(*cells)[REPORT_MAXCOL][48] = calloc(n ? n : 1, sizeof *cells);
    if (!cells)
        return NP_E_NOMEM;
    size_t width[REPORT_MAXCOL];
    for (size_t c = 0; c < ncol; c++)
        width[c] = strlen(head[c]);
    for (size_t i = 0; i < n; i++) {
        const struct np_run *r = &res->runs[i];
        char(*row)[48] = cells[i];
        /* column 0 is the experiment name, printed from the run itself */
        row[0][0] = '\0';
        if (r->id.gpus)
            snprintf(row[1], 48, "%d", r->id.gpus);
        else
            strcpy(row[1], "-");
        snprintf(row[2], 48, "%s", r->id.dtype ? np_dtype_name(r->id.dtype, 0) : "-");
        if (r->step >= 0 && r->total >= 0)
            snprintf(row[3], 48, "%ld/%ld", r->step, r->total);
        else if (r->step >= 0)
            snprintf(row[3], 48, "%ld", r->step);
        else
            strcpy(row[3], "-");
        if (isnan(r->step_time_s))
            strcpy(row[4], "-");
        else
            snprintf(row[4], 48, "%.4g", r->step_time_s);
        report_num(row[5], 48, 0, r->m.tokens_per_s);
        report_num(row[6], 48, 1, r->m.tokens_per_s_per_gpu);
        report_num(row[7], 48, 1, r->m.model_tflops_per_gpu);
        report_num(row[8], 48, 2, r->m.mfu_percent);
        report_num(row[9], 48, 2, r->m.days_to_train);
        snprintf(row[10], 48, "%s", np_run_status_name(r->status));
        if (o->reference) {
            if (r->ref && !isnan(r->ref->tokens_per_s))
                snprintf(row[11], 48, "%.0f tok/s", r->ref->tokens_per_s);
            else if (r->ref && !isnan(r->ref->tokens_per_s_per_gpu))
                snprintf(row[11], 48, "%.0f tok/s/gpu", r->ref->tokens_per_s_per_gpu);
            else
                strcpy(row[11], "-");
            report_num(row[12], 48, 3, r->ref_ratio);
            snprintf(row[13], 48, "%s", isnan(r->ref_ratio) ? "-" : r->ref_pass ? "PASS" : "FAIL");
        }
        if (strlen(r->id.experiment) > width[0])
            width[0] = strlen(r->id.experiment);
        for (size_t c = 1; c < ncol; c++)
            if (strlen(row[c]) > width[c])
                width[c] = strlen(row[c]);
    }
    for (size_t c = 0; c < ncol; c++)
        report_cell(out, c, width[c], head[c]);
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < ncol; c++)
            report_cell(out, c, width[c], c == 0 ? res->runs[i].id.experiment : cells[i][c]);
        fputc('\n', out);
    }
    free(cells);
    for (size_t i = 0; i < n; i++)
        if (res->runs[i].status != NP_RUN_OK && res->runs[i].why)
            fprintf(out, "%s: %s: %s\n", np_run_status_name(res->runs[i].status), res->runs[i].path,
                    res->runs[i].why);
    return NP_OK;
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

static enum np_status report_csv(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o)
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
    for (size_t i = 0; i < res->nruns; i++) {
        const struct np_run *r = &res->runs[i];
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
    return NP_OK;
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

static enum np_status report_json(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o)
{
    json_t *runs = json_array(), *errs = json_array();
    json_t *root = json_pack("{s:o,s:o}", "runs", runs, "errors", errs);
    if (!root)
        return NP_E_NOMEM;
    for (size_t i = 0; i < res->nruns; i++) {
        json_t *j = report_json_run(&res->runs[i], o);
        if (!j || json_array_append_new(runs, j) != 0) {
            json_decref(root);
            return NP_E_NOMEM;
        }
    }
    for (size_t i = 0; i < res->nerrors; i++)
        json_array_append_new(errs, json_string(res->errors[i]));
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', out);
    json_decref(root);
    return rc == 0 ? NP_OK : NP_E_IO;
}

enum np_status np_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                               const struct np_parse_opts *opts)
{
    enum np_status st;
    switch (fmt) {
    case NP_FMT_MARKDOWN: st = report_markdown(out, res); break;
    case NP_FMT_CSV: st = report_csv(out, res, opts); break;
    case NP_FMT_JSON: st = report_json(out, res, opts); break;
    default: st = report_table(out, res, opts); break;
    }
    if (st == NP_OK && (fflush(out) != 0 || ferror(out)))
        st = NP_E_IO;
    return st;
}
