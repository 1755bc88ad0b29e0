/* report.c - the four output formats of nemoperf-parse, in memory or as a stream.
 *
 * table: aligned columns; markdown: each publication's layout cell for cell (seeds 003/004 per model, seed 000
 * per system); csv: RFC 4180; json: {"runs":[...],"errors":[...]} with Jansson (a streamed run object is written
 * straight from the run, report_json_direct: the bytes json_dumpb gives of report_json_run's tree, which
 * check_report holds it to).  One function writes one run per format (report_table_cells, report_csv_run,
 * report_json_run, report_md_add), used by both; --group needs
 * all runs (np_report_write), every format streams (np_report_new/run/finish) in bounded memory (markdown holds
 * one column per configuration and lists the runs in no table from a temporary file).
 */
#include "nemoperf/report/report.h"
#include "nemoperf/report/fabric.h"
#include "nemoperf/parse/fabric_check.h"
#include "nemoperf/report/mbridge_md.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nemoperf/report/aggregate.h"

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

/* What a table shows of a run: the last run of one column (configuration), and how many ran there. */
struct report_md_col {
    const struct np_recipe *recipe; /* borrowed from the recipe set, as the run's */
    const struct np_model *model;
    const struct np_config_row *row;
    const struct np_ref_row *ref;   /* borrowed from the reference table */
    char task[sizeof ((struct np_identity *)0)->task];
    int gpus, gbs, seq_len;
    double step_time_s, ref_ratio;
    struct np_metrics m, steady;
    enum np_verdict verdict;
    char job_id[sizeof ((struct np_run *)0)->job_id];
    char *path;                     /* owned */
    size_t pathcap;
    size_t repeats;                 /* runs seen in this column */
};

struct report_group {
    const struct np_recipe *recipe;
    const struct np_model *model;
    enum np_dtype dtype;
    char gpu_type[sizeof ((struct np_identity *)0)->gpu_type];
    char system[40];            /* seed-000 layout: the system's table */
    int sysrank;                /* order of the systems as the recipe lists them */
    int synthetic;              /* runs of the synthetic CPU workload: a table of their own, said so */
    int finetune;               /* seed 000's fine-tuning layout (SFT/LoRA runs of models with such rows) */
    int dfm;                    /* DFM's layout: 1 its Megatron-Core section, 2 its AutoModel section, 0 other */
    size_t seq;                 /* order of first appearance: tables that sort alike keep it */
    struct report_md_col *cols; /* one per GPU count (and model, task), ascending; owned */
    size_t ncols, capcols;
};

/* The figure --reference compares (steady-state mean, or the last step with --verdict last). */
static const struct np_metrics *report_basis(const struct report_md_col *r, const struct np_parse_opts *o)
{
    return o->verdict_last ? &r->m : &r->steady;
}

/* Only benchmark runs fill the publications' tables; a profile, trace or checkpoint run is listed below them. */
static int report_run_in_markdown(const struct np_run *r)
{
    return r->id.kind == NP_KIND_BENCHMARK && r->model && r->id.dtype != NP_DTYPE_NONE && r->id.gpus > 0 && !isnan(r->m.tokens_per_s) &&
           (np_run_status_good(r->status) || r->status == NP_RUN_INCOMPLETE);
}

/* A fine-tuning run of a model seed 000 publishes fine-tuning rows for: its own table layout. */
static int report_finetune(const struct np_run *r)
{
    enum np_task t;
    return r->model && r->model->nft_rows > 0 && np_task_parse(r->id.task, &t) == 0 && t != NP_TASK_PRETRAIN;
}

/* DFM (a Megatron-Bridge model): 1 for a Megatron-Core row, 2 for an AutoModel-backend row; 0 otherwise. */
static int report_dfm_section(const struct np_run *r)
{
    if (!r->model || !r->model->mbridge)
        return 0;
    return r->row && r->row->backend && strcmp(r->row->backend, "automodel") == 0 ? 2 : 1;
}

/* Seed 000 publishes one table per system (its rows name a system); seeds 003/004 one per model. */
static int report_per_system(const struct np_recipe *r)
{
    for (size_t m = 0; r && m < r->nmodels; m++)
        for (size_t i = 0; i < r->models[m].nrows; i++)
            if (r->models[m].rows[i].system)
                return 1;
    return 0;
}

static void report_system_of(const struct np_run *r, char *buf, size_t size, int *rank)
{
    char up[24];
    *rank = 1 << 20;
    for (size_t i = 0; r->model && i < r->model->nrows; i++)
        if (r->id.gpu_type[0] && strcasecmp(r->model->rows[i].gpu_type, r->id.gpu_type) == 0) {
            *rank = (int)i;
            break;
        }
    if (r->id.system[0])
        snprintf(buf, size, "%s", r->id.system);
    else if (r->id.gpu_type[0]) {
        report_upper(r->id.gpu_type, up, sizeof up);
        snprintf(buf, size, "DGX-%s", up);
    } else
        snprintf(buf, size, "unknown (GPU type unknown)");
}

/* Seeds 003/004: one table per recipe, model, dtype and GPU type.  Seed 000: one per system (and dtype), all
 * its recipes' models in it. */
static int report_same_group(const struct report_group *a, const struct np_run *r, const char *system)
{
    if (a->dtype != r->id.dtype || a->synthetic != r->id.synthetic || a->finetune != report_finetune(r) ||
        a->dfm != report_dfm_section(r))
        return 0;
    if (report_per_system(r->recipe))
        return report_per_system(a->recipe) && strcmp(a->system, system) == 0;
    return a->recipe == r->recipe && a->model == r->model && strcasecmp(a->gpu_type, r->id.gpu_type) == 0;
}

static int report_cmp_groups(const void *pa, const void *pb)
{
    const struct report_group *a = pa, *b = pb;
    int sa = report_per_system(a->recipe), sb = report_per_system(b->recipe);
    if (a->finetune != b->finetune)
        return a->finetune - b->finetune; /* fine-tuning tables last, as in seed 000 */
    if (sa != sb)
        return sa - sb; /* the seeds 003/004 tables first, then the systems */
    if (a->dfm != b->dfm)
        return a->dfm - b->dfm; /* DFM: the Megatron-Core section, then the AutoModel one */
    if (sa) {
        if (a->sysrank != b->sysrank)
            return a->sysrank < b->sysrank ? -1 : 1;
        int c = strcmp(a->system, b->system);
        if (c)
            return c;
        if (a->dtype != b->dtype)
            return a->dtype < b->dtype ? -1 : 1;
        if (a->synthetic != b->synthetic)
            return a->synthetic - b->synthetic;
        return a->seq < b->seq ? -1 : a->seq > b->seq;
    }
    int c = strcmp(a->recipe->name, b->recipe->name);
    if (c)
        return c;
    size_t ma = (size_t)(a->model - a->recipe->models), mb = (size_t)(b->model - b->recipe->models);
    if (!sa && ma != mb)
        return ma < mb ? -1 : 1;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    c = strcasecmp(a->gpu_type, b->gpu_type);
    if (c)
        return c;
    return a->seq < b->seq ? -1 : a->seq > b->seq; /* a synthetic table beside a real one: first seen first */
}

/* Columns of a seed-000 system table are (model, GPU count), in the recipe's model order. */
/* Rows of a seed-000 system table: by recipe name, the recipe's model order, then GPU count. */
static int report_col_before(const struct report_group *g, const struct report_md_col *a, const struct np_run *b)
{
    if (report_per_system(g->recipe) && a->recipe != b->recipe)
        return strcmp(a->recipe->name, b->recipe->name) < 0;
    if (g->finetune && strcmp(a->task, b->id.task) != 0)
        return strcmp(a->task, b->id.task) > 0; /* SFT rows, then LoRA rows, as seed 000 */
    if (report_per_system(g->recipe) && a->model != b->model)
        return a->model < b->model;
    return a->gpus < b->id.gpus;
}

static int report_col_same(const struct report_group *g, const struct report_md_col *a, const struct np_run *b)
{
    return a->gpus == b->id.gpus && (!report_per_system(g->recipe) || a->model == b->model) &&
           (!g->finetune || strcmp(a->task, b->id.task) == 0);
}

static void report_md_verdict_cell(FILE *out, enum np_verdict v)
{
    if (v == NP_VERDICT_NOT_COMPARED || v == NP_VERDICT_NONE)
        fputs(" n/a |", out);
    else
        fprintf(out, " %s |", np_verdict_name(v));
}

/* Seeds 003/004: "Llama 3.1 8b BF16 | 8x H100 GPUs | ..." with the four published rows. */
static void report_md_model_table(FILE *out, const struct report_group *g, const struct np_parse_opts *o)
{
    char gpu[32], cell[64];
    report_upper(g->gpu_type, gpu, sizeof gpu);
    fprintf(out, "%s %s %s%s |", g->recipe->title, g->model->size, np_dtype_name(g->dtype, 1),
            g->synthetic ? " (synthetic CPU workload)" : "");
    for (size_t c = 0; c < g->ncols; c++)
        fprintf(out, " %dx %s GPUs%s |", g->cols[c].gpus, gpu, g->synthetic ? " (simulated)" : "");
    fputc('\n', out);
    for (size_t c = 0; c <= g->ncols; c++)
        fputs("---|", out);
    fputc('\n', out);
    fputs("Training step time (seconds per step) |", out);
    for (size_t c = 0; c < g->ncols; c++) {
        np_report_trim2(g->cols[c].step_time_s, cell, sizeof cell);
        fprintf(out, " %s |", cell);
    }
    fputs("\nThroughput in tokens per second |", out);
    for (size_t c = 0; c < g->ncols; c++)
        fprintf(out, " %.0f |", g->cols[c].m.tokens_per_s);
    fputs("\nModel flops utilization |", out);
    for (size_t c = 0; c < g->ncols; c++) {
        if (isnan(g->cols[c].m.mfu_percent))
            fputs(" n/a |", out);
        else
            fprintf(out, " %.2f%% |", g->cols[c].m.mfu_percent);
    }
    fputs("\nTime to train 1T tokens in days |", out);
    for (size_t c = 0; c < g->ncols; c++) {
        const struct report_md_col *r = &g->cols[c];
        /* the seeds print n/a for proxy rows: a reduced-layer model says nothing of the full one */
        if ((r->row && r->row->proxy) || isnan(r->m.days_to_train)) {
            fputs(" n/a |", out);
        } else {
            np_report_trim2(r->m.days_to_train, cell, sizeof cell);
            fprintf(out, " %s |", cell);
        }
    }
    fputc('\n', out);
    if (!o->reference)
        return;
    fprintf(out, "Steady-state throughput in tokens per second (%s) |",
            o->verdict_last ? "last step" : "window mean");
    for (size_t c = 0; c < g->ncols; c++) {
        double v = report_basis(&g->cols[c], o)->tokens_per_s;
        if (isnan(v))
            fputs(" n/a |", out);
        else
            fprintf(out, " %.0f |", v);
    }
    fputs("\nPublished throughput in tokens per second |", out);
    for (size_t c = 0; c < g->ncols; c++) {
        const struct report_md_col *r = &g->cols[c];
        if (r->ref && !isnan(r->ref->tokens_per_s))
            fprintf(out, " %.0f |", r->ref->tokens_per_s);
        else
            fputs(" n/a |", out);
    }
    fputs("\nRatio to published |", out);
    for (size_t c = 0; c < g->ncols; c++) {
        if (isnan(g->cols[c].ref_ratio))
            fputs(" n/a |", out);
        else
            fprintf(out, " %.3f |", g->cols[c].ref_ratio);
    }
    fputs("\nVerdict |", out);
    for (size_t c = 0; c < g->ncols; c++)
        report_md_verdict_cell(out, g->cols[c].verdict);
    fputc('\n', out);
}

/* Seed 000: "System: DGX-GB200", then model | #-GPUs | Tokens / sec / GPU | Model TFLOP / sec / GPU.
 * Its figures come from NVIDIA's parser, which averages the steady-state window: so do these. */
static void report_md_system_table(FILE *out, const struct report_group *g, const struct np_parse_opts *o)
{
    fprintf(out, "System: %s (%s%s)\n\n", g->system, np_dtype_name(g->dtype, 1),
            g->synthetic ? ", synthetic CPU workload" : "");
    fputs("Model | #-GPUs | Tokens / sec / GPU | Model TFLOP / sec / GPU |", out);
    if (o->reference)
        fputs(" Published tokens / sec / GPU | Ratio | Verdict |", out);
    fputs(o->reference ? "\n---|---|---|---|---|---|---|\n" : "\n---|---|---|---|\n", out);
    for (size_t c = 0; c < g->ncols; c++) {
        const struct report_md_col *r = &g->cols[c];
        const struct np_metrics *m = isnan(r->steady.tokens_per_s_per_gpu) ? &r->m : &r->steady;
        fprintf(out, "%s | %d |", r->model->label ? r->model->label : r->model->size, r->gpus);
        if (isnan(m->tokens_per_s_per_gpu))
            fputs(" n/a |", out);
        else
            fprintf(out, " %.0f |", m->tokens_per_s_per_gpu);
        if (isnan(m->model_tflops_per_gpu))
            fputs(" n/a |", out);
        else
            fprintf(out, " %.0f |", m->model_tflops_per_gpu);
        if (o->reference) {
            if (r->ref && !isnan(r->ref->tokens_per_s_per_gpu))
                fprintf(out, " %.0f |", r->ref->tokens_per_s_per_gpu);
            else
                fputs(" n/a |", out);
            if (isnan(r->ref_ratio))
                fputs(" n/a |", out);
            else
                fprintf(out, " %.3f |", r->ref_ratio);
            report_md_verdict_cell(out, r->verdict);
        }
        fputc('\n', out);
    }
}

/* A TFLOP/s cell as DFM prints it: two decimals, thousands separated by commas ("1,030.67"). */
static void report_md_dfm_tflops(FILE *out, double v)
{
    if (isnan(v)) {
        fputs("n/a|", out);
        return;
    }
    char b[48];
    snprintf(b, sizeof b, "%.2f", v);
    size_t ip = strcspn(b, ".");
    for (size_t i = 0; i < ip; i++) {
        if (i && (ip - i) % 3 == 0)
            fputc(',', out);
        fputc(b[i], out);
    }
    fprintf(out, "%s|", b + ip);
}

/* NeMo DFM's docs/performance-summary.md (f8c1c09:43-79): "## Megatron-Core Pre-Training Performance" /
 * "## NeMo Automodel Pre-Training Performance", a "#### System:" table each, the run's configuration from its
 * recipe row (the YAML's), TFLOP/s/GPU as DFM prints it; the AutoModel table adds DP. */
static void report_md_dfm_table(FILE *out, const struct report_group *g, int heading, const struct np_parse_opts *o)
{
    if (heading)
        fprintf(out, "## %s Pre-Training Performance%s\n\n", g->dfm == 2 ? "NeMo Automodel" : "Megatron-Core",
                g->synthetic ? " (synthetic CPU workload)" : "");
    fprintf(out, "#### System: %s\n\n", g->system);
    fprintf(out, "| Model | #-GPUs | GBS | MBS | Sequence Length | FSDP |%s TP | SP | PP | CP | VP | EP | Model TFLOP / "
                 "sec / GPU |%s\n",
            g->dfm == 2 ? " DP |" : "", o->reference ? " Published | Ratio | Verdict |" : "");
    fprintf(out, "|-------|--------|-----|-----|-----------------|------|%s----|----|----|----|----|----|---------------"
                 "----------|%s\n",
            g->dfm == 2 ? "----|" : "", o->reference ? "---|---|---|" : "");
    for (size_t c = 0; c < g->ncols; c++) {
        const struct report_md_col *r = &g->cols[c];
        const struct np_config_row *w = r->row;
        const struct np_metrics *m = isnan(r->steady.model_tflops_per_gpu) ? &r->m : &r->steady;
        fprintf(out, "|%s|%d|%d|%d|%d|%d|", r->model->label ? r->model->label : r->model->size, r->gpus, r->gbs,
                w ? w->mbs : 0, r->seq_len, w ? w->fsdp : 0);
        if (g->dfm == 2)
            fprintf(out, "%d|", w ? w->dp : 0);
        fprintf(out, "%d|%d|%d|%d|%d|%d|", w ? w->tp : 0, w ? w->sp : 0, w ? w->pp : 0, w ? w->cp : 0,
                w && w->vp > 0 ? w->vp : 0, w && w->ep > 0 ? w->ep : 0);
        report_md_dfm_tflops(out, m->model_tflops_per_gpu);
        if (o->reference) {
            report_md_dfm_tflops(out, r->ref ? r->ref->model_tflops_per_gpu : NAN);
            if (isnan(r->ref_ratio))
                fputs("n/a|", out);
            else
                fprintf(out, "%.3f|", r->ref_ratio);
            fprintf(out, "%s|", r->verdict == NP_VERDICT_NOT_COMPARED || r->verdict == NP_VERDICT_NONE
                                    ? "n/a" : np_verdict_name(r->verdict));
        }
        fputc('\n', out);
    }
}

/* An integer cell of the run's configuration ("-" when unknown, "1" for VP off as seed 000 prints it). */
static void report_md_int(FILE *out, int v) { fprintf(out, v > 0 ? " %d |" : " - |", v); }

/* Seed 000's fine-tuning table of one system: Model | Task | #-GPUs | GBS | MBS | Packed Sequence Length |
 * TP | PP | VP | GA | Tokens / sec / GPU | Model TFLOP / sec / GPU (what ran: a correction shows). */
static void report_md_ft_table(FILE *out, const struct report_group *g, const struct np_parse_opts *o)
{
    fprintf(out, "Fine-tuning, System: %s (%s%s)\n\n", g->system, np_dtype_name(g->dtype, 1),
            g->synthetic ? ", synthetic CPU workload" : "");
    fputs("Model | Task | #-GPUs | GBS | MBS | Packed Sequence Length | TP | PP | VP | GA | Tokens / sec / GPU | "
          "Model TFLOP / sec / GPU |", out);
    if (o->reference)
        fputs(" Published tokens / sec / GPU | Published model TFLOP / sec / GPU | Ratio | Verdict |", out);
    fputs(o->reference ? "\n---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
                       : "\n---|---|---|---|---|---|---|---|---|---|---|---|\n", out);
    for (size_t c = 0; c < g->ncols; c++) {
        const struct report_md_col *r = &g->cols[c];
        const struct np_config_row *row = r->row;
        const struct np_metrics *m = isnan(r->steady.tokens_per_s_per_gpu) ? &r->m : &r->steady;
        fprintf(out, "%s | %s |", r->model->label ? r->model->label : r->model->size,
                strcmp(r->task, "sft") == 0 ? "SFT" : "LoRA");
        report_md_int(out, r->gpus);
        report_md_int(out, r->gbs);
        report_md_int(out, row ? np_row_value(row, "mbs", row->mbs, NULL) : 0);
        report_md_int(out, r->seq_len);
        report_md_int(out, row ? row->tp : 0);
        report_md_int(out, row ? row->pp : 0);
        report_md_int(out, row ? (np_row_value(row, "vp", row->vp, NULL) > 0 ? np_row_value(row, "vp", row->vp, NULL)
                                                                             : 1)
                               : 0);
        report_md_int(out, row ? np_row_value(row, "ga", row->ga, NULL) : 0);
        fprintf(out, isnan(m->tokens_per_s_per_gpu) ? " n/a |" : " %.0f |", m->tokens_per_s_per_gpu);
        fprintf(out, isnan(m->model_tflops_per_gpu) ? " n/a |" : " %.0f |", m->model_tflops_per_gpu);
        if (o->reference) {
            const struct np_ref_row *p = r->ref;
            fprintf(out, p && !isnan(p->tokens_per_s_per_gpu) ? " %.0f |" : " n/a |", p ? p->tokens_per_s_per_gpu : 0);
            if (p && !isnan(p->model_tflops_per_gpu))
                fprintf(out, " %.0f%s |", p->model_tflops_per_gpu, p->consistent ? "" : " (inconsistent as published)");
            else
                fputs(" n/a |", out);
            fprintf(out, isnan(r->ref_ratio) ? " n/a |" : " %.3f |", r->ref_ratio);
            report_md_verdict_cell(out, r->verdict);
        }
        fputc('\n', out);
    }
}

/* The markdown report (report_md_*, below the temporary files it uses). */
static enum np_status report_markdown(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o);

/* ---- table ---- */

/* v with `decimals` digits after the point ("%.*f"), "-" when unknown. */
/* snprintf(buf, size, "%.*f", dec, v) for 0 <= dec <= 3 and |v| < 1e9: v * 10^dec is exact in extended
 * precision (a 53-bit significand times at most 7 bits), so its rounding to a whole number is printf's (an exact
 * tie to even, as glibc rounds in the default mode).  check_report compares it with snprintf on 200,000 values. */
static int report_fixed(char *buf, size_t size, int dec, double v)
{
#if LDBL_MANT_DIG >= 64
    static const long double p10[] = {1e0L, 1e1L, 1e2L, 1e3L};
    if (size >= 32 && dec >= 0 && dec <= 3 && fabs(v) < 1e9) {
        long double sc = fabsl((long double)v * p10[dec]), fl = floorl(sc), fr = sc - fl;
        uint64_t d = (uint64_t)fl;
        if (fr > 0.5L || (fr == 0.5L && (d & 1)))
            d++;
        char t[24], *o = buf;
        int n = 0;
        for (int i = 0; i < dec; i++, d /= 10)
            t[n++] = (char)('0' + d % 10);
        if (dec)
            t[n++] = '.';
        do {
            t[n++] = (char)('0' + d % 10);
            d /= 10;
        } while (d);
        if (signbit(v))
            *o++ = '-';
        while (n)
            *o++ = t[--n];
        *o = '\0';
        return (int)(o - buf);
    }
#endif
    return snprintf(buf, size, "%.*f", dec, v);
}

static void report_num(char *buf, size_t size, int decimals, double v)
{
    if (isnan(v) || isinf(v))
        snprintf(buf, size, "-");
    else if (fabs(v) >= 1e9) /* only an implausible run gets there: keep the column narrow */
        snprintf(buf, size, "%.3g", v);
    else
        report_fixed(buf, size, decimals, v);
}

enum {
    REPORT_EXPERIMENT = 0, REPORT_KIND, REPORT_JOB, REPORT_START, REPORT_GPU, REPORT_GPUS, REPORT_DTYPE, REPORT_STEP,
    REPORT_STEP_S, REPORT_STEADY, REPORT_TOKENS, REPORT_TPG, REPORT_TFLOPS, REPORT_MFU, REPORT_DAYS, REPORT_EFF,
    REPORT_STATUS, REPORT_PUBLISHED, REPORT_RATIO, REPORT_REF, REPORT_MAXCOL
};

#define REPORT_CELL 64

static const char *const report_head[REPORT_MAXCOL] = {
    /* every figure says its basis: the last step (the seeds' rule) or the steady window (NVIDIA's parsers') */
    "EXPERIMENT", "KIND", "JOB", "START", "GPU", "GPUS", "DTYPE", "STEP", "LAST_S", "STEADY_S(MEAN+-SD)",
    "LAST_TOK/S", "LAST_TOK/S/GPU", "LAST_TFLOP/S/GPU", "LAST_MFU%", "LAST_DAYS", "STEADY_EFF%", "STATUS", "PUBLISHED",
    "RATIO", "REF"};

/* Text columns align left, numbers right. */
static int report_left(size_t col)
{
    return col == REPORT_EXPERIMENT || col == REPORT_KIND || col == REPORT_START || col == REPORT_GPU || col == REPORT_DTYPE ||
           col == REPORT_STATUS || col == REPORT_REF;
}

static void report_pad(FILE *out, size_t n)
{
    static const char sp[] = "                                                                ";
    for (; n > sizeof sp - 1; n -= sizeof sp - 1)
        fwrite(sp, 1, sizeof sp - 1, out);
    fwrite(sp, 1, n, out);
}

static void report_cell(FILE *out, size_t col, size_t width, const char *text)
{
    size_t n = strlen(text), pad = width > n ? width - n : 0; /* "%-*s" / "%*s", without printf */
    if (col)
        fputs("  ", out);
    if (!report_left(col))
        report_pad(out, pad);
    fwrite(text, 1, n, out);
    if (report_left(col))
        report_pad(out, pad);
}

/* snprintf(cell, REPORT_CELL, "%s", s) */
static void report_cell_copy(char *cell, const char *s)
{
    size_t n = strlen(s);
    if (n > REPORT_CELL - 1)
        n = REPORT_CELL - 1;
    memcpy(cell, s, n);
    cell[n] = '\0';
}

/* One run's cells (column 0, the experiment name, is printed from the run itself). */
static void report_table_cells(const struct np_run *r, const struct np_parse_opts *o, char (*row)[REPORT_CELL])
{
    row[REPORT_EXPERIMENT][0] = '\0';
    report_cell_copy(row[REPORT_KIND], np_run_kind_name(r->id.kind));
    report_cell_copy(row[REPORT_JOB], r->job_id[0] ? r->job_id : "-");
    report_cell_copy(row[REPORT_START], r->launch.submit_time[0] ? r->launch.submit_time : "-");
    /* "*": not recorded, the only GPU type the recipe is published for (said below the table) */
    snprintf(row[REPORT_GPU], REPORT_CELL, "%s%s", r->id.gpu_type[0] ? r->id.gpu_type : "?",
             r->gpu_source && strcmp(r->gpu_source, "recipe") == 0 ? "*" : "");
    if (r->id.gpus)
        snprintf(row[REPORT_GPUS], REPORT_CELL, "%d", r->id.gpus);
    else
        strcpy(row[REPORT_GPUS], "-");
    const char *prec = np_identity_precision(&r->id);
    report_cell_copy(row[REPORT_DTYPE], *prec ? prec : "-");
    if (r->step >= 0 && r->total >= 0)
        snprintf(row[REPORT_STEP], REPORT_CELL, "%ld/%ld", r->step, r->total);
    else if (r->step >= 0)
        snprintf(row[REPORT_STEP], REPORT_CELL, "%ld", r->step);
    else
        strcpy(row[REPORT_STEP], "-");
    if (isnan(r->step_time_s))
        strcpy(row[REPORT_STEP_S], "-");
    else
        snprintf(row[REPORT_STEP_S], REPORT_CELL, "%.4g", r->step_time_s);
    if (isnan(r->window.mean_s))
        strcpy(row[REPORT_STEADY], "-");
    else
        snprintf(row[REPORT_STEADY], REPORT_CELL, "%.4g+-%.2g [%ld-%ld]", r->window.mean_s, r->window.stdev_s,
                 r->window.first, r->window.last);
    report_num(row[REPORT_TOKENS], REPORT_CELL, 0, r->m.tokens_per_s);
    report_num(row[REPORT_TPG], REPORT_CELL, 1, r->m.tokens_per_s_per_gpu);
    report_num(row[REPORT_TFLOPS], REPORT_CELL, 1, r->m.model_tflops_per_gpu);
    report_num(row[REPORT_MFU], REPORT_CELL, 2, r->m.mfu_percent);
    report_num(row[REPORT_DAYS], REPORT_CELL, 2, r->m.days_to_train);
    report_num(row[REPORT_EFF], REPORT_CELL, 1, r->scaling_eff * 100.0);
    report_cell_copy(row[REPORT_STATUS], np_run_status_name(r->status));
    if (o->reference) {
        if (r->ref && !isnan(r->ref->tokens_per_s))
            snprintf(row[REPORT_PUBLISHED], REPORT_CELL, "%.0f tok/s", r->ref->tokens_per_s);
        else if (r->ref && !isnan(r->ref->tokens_per_s_per_gpu))
            snprintf(row[REPORT_PUBLISHED], REPORT_CELL, "%.0f tok/s/gpu", r->ref->tokens_per_s_per_gpu);
        else
            strcpy(row[REPORT_PUBLISHED], "-");
        report_num(row[REPORT_RATIO], REPORT_CELL, 3, r->ref_ratio);
        report_cell_copy(row[REPORT_REF], np_verdict_name(r->verdict));
    }
}

/* The family of a run compared at another tolerance than --tolerance's default (none given), or NULL. */
static const struct np_run_family *report_other_tolerance(const struct np_run *r, const struct np_parse_opts *o)
{
    return r->family && r->ref && r->verdict != NP_VERDICT_NOT_COMPARED && np_run_tolerance(r, o) != o->tolerance_pct
               ? r->family
               : NULL;
}

/* The table's last line with --reference: what was compared, at which tolerance (a family's own said). */
static void report_ref_footer(FILE *out, const struct np_parse_opts *o, const struct np_run_family *other)
{
    char tol[96] = "";
    if (other)
        snprintf(tol, sizeof tol, ", %s runs +-%g %%", other->label, other->tolerance_pct);
    fprintf(out, "reference: %s compared, tolerance +-%g %%%s (FAST: faster than published by more)\n",
            o->verdict_last ? "the last step's throughput" : "the steady-state window's mean throughput",
            o->tolerance_pct, tol);
}

/* Footer lines: consecutive runs with the same message share one line. */
static void report_table_footer(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o)
{
    for (size_t i = 0; i < res->nruns; i++)
        if (res->runs[i].gpu_source && strcmp(res->runs[i].gpu_source, "recipe") == 0) {
            fputs("*: GPU type not recorded (no manifest, no --gpu): the only one the recipe is published for\n", out);
            break;
        }
    for (size_t i = 0; i < res->nruns; i++)
        if (!np_run_status_good(res->runs[i].status) && res->runs[i].why)
            fprintf(out, "%s: %s: %s\n", np_run_status_name(res->runs[i].status), res->runs[i].path,
                    res->runs[i].why);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && !o->reference)
            break;
        for (size_t i = 0; i < res->nruns;) {
            const struct np_run *r = &res->runs[i];
            const char *msg = pass == 0 ? r->note : r->verdict == NP_VERDICT_NOT_COMPARED ? r->ref_why : NULL;
            if (!msg || !*msg) {
                i++;
                continue;
            }
            size_t j = i + 1;
            for (; j < res->nruns; j++) {
                const struct np_run *q = &res->runs[j];
                const char *m2 = pass == 0 ? q->note : q->verdict == NP_VERDICT_NOT_COMPARED ? q->ref_why : NULL;
                if (!m2 || strcmp(m2, msg) != 0)
                    break;
            }
            const char *what = pass == 0 ? "note" : "reference not compared";
            if (j - i == 1)
                fprintf(out, "%s: %s: %s\n", what, r->path, msg);
            else if (strcmp(r->id.experiment, res->runs[j - 1].id.experiment) == 0) /* repeats of one name */
                fprintf(out, "%s: %zu runs of %s: %s\n", what, j - i, r->id.experiment, msg);
            else
                fprintf(out, "%s: %zu runs (%s ... %s): %s\n", what, j - i, r->id.experiment,
                        res->runs[j - 1].id.experiment, msg);
            i = j;
        }
    }
    if (o->reference) {
        const struct np_run_family *other = NULL;
        for (size_t i = 0; i < res->nruns && !other; i++)
            other = report_other_tolerance(&res->runs[i], o);
        report_ref_footer(out, o, other);
    }
}

static void report_table_groups(FILE *out, const struct np_groups *gs)
{
    fprintf(out, "\n%-10s %-6s %-5s %-6s %-15s %5s %4s %13s %11s %12s %12s %17s %15s %16s %16s %11s\n", "RECIPE",
            "SIZE", "DTYPE", "GPU", "KIND", "GPUS", "N", "STEADY_S_MEAN", "STEADY_S_SD", "STEADY_S_MIN", "STEADY_S_MAX", "STEADY_TOK/S_MEAN",
            "STEADY_TOK/S_SD", "STEADY_TOK/S_MIN", "STEADY_TOK/S_MAX", "STEADY_EFF%");
    for (size_t k = 0; k < gs->n; k++) {
        const struct np_group *g = &gs->g[k];
        const struct np_identity *id = &g->first->id;
        char eff[32];
        report_num(eff, sizeof eff, 1, g->scaling_eff * 100.0);
        fprintf(out, "%-10s %-6s %-5s %-6s %-15s %5d %4zu %13.4g %11.2g %12.4g %12.4g %17.0f %15.0f %16.0f %16.0f %11s\n",
                id->recipe, id->model_size, np_identity_precision(id), id->gpu_type[0] ? id->gpu_type : "?",
                np_run_kind_name(id->kind), id->gpus, g->n, g->step_mean_s, g->step_stdev_s, g->step_min_s, g->step_max_s, g->tps_mean,
                g->tps_stdev, g->tps_min, g->tps_max, eff);
    }
    if (gs->left_out)
        fprintf(out, "(%zu run%s not counted in groups: status not ok, or no steady-state window)\n", gs->left_out,
                gs->left_out == 1 ? "" : "s");
}

/* The fabric checks' findings (parse/fabric_check.h): per check PASS/FAIL and the slow node or link by name. */
static void report_fabric_checks(FILE *out, const struct np_fabric_checks *c, int markdown)
{
    struct np_fabric_table *t = NULL;
    struct np_error err;
    if (np_fabric_table_load(NULL, &t, &err) != NP_OK) /* the labels only: the steps carry their expectation */
        t = NULL;
    char *text = np_fabric_checks_text(c, t, markdown);
    if (text && *text)
        fprintf(out, markdown ? "%s" : "\n%s", text);
    free(text);
    np_fabric_table_free(t);
}

static void report_fabric_findings(FILE *out, const struct np_parse_result *res)
{
    struct np_fabric_checks *c = np_fabric_checks_new();
    for (size_t i = 0; c && i < res->nruns; i++)
        if (np_fabric_checks_add(c, &res->runs[i]) != NP_OK) {
            np_fabric_checks_free(c);
            return;
        }
    if (c)
        report_fabric_checks(out, c, 0);
    np_fabric_checks_free(c);
}

static enum np_status report_table(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o,
                                   const struct np_groups *gs)
{
    size_t ncol = o->reference ? REPORT_MAXCOL : REPORT_STATUS + 1;
    size_t n = res->nruns, ntrain = 0;
    char(*cells)[REPORT_MAXCOL][REPORT_CELL] = calloc(n ? n : 1, sizeof *cells);
    struct np_fabric_rows *fabric = np_fabric_rows_new();
    if (!cells || !fabric) {
        free(cells);
        np_fabric_rows_free(fabric);
        return NP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) /* the nccl-tests steps: a table of their own after this one */
        if (np_fabric_is(&res->runs[i]) ? np_fabric_rows_add(fabric, &res->runs[i]) != NP_OK : !++ntrain) {
            free(cells);
            np_fabric_rows_free(fabric);
            return NP_E_NOMEM;
        }
    size_t width[REPORT_MAXCOL];
    for (size_t c = 0; c < ncol; c++)
        width[c] = strlen(report_head[c]);
    for (size_t i = 0; i < n; i++) {
        const struct np_run *r = &res->runs[i];
        if (np_fabric_is(r))
            continue;
        report_table_cells(r, o, cells[i]);
        if (strlen(r->id.experiment) > width[0])
            width[0] = strlen(r->id.experiment);
        for (size_t c = 1; c < ncol; c++)
            if (strlen(cells[i][c]) > width[c])
                width[c] = strlen(cells[i][c]);
    }
    if (ntrain || !np_fabric_rows_count(fabric)) {
        for (size_t c = 0; c < ncol; c++)
            report_cell(out, c, width[c], report_head[c]);
        fputc('\n', out);
    }
    for (size_t i = 0; i < n; i++) {
        if (np_fabric_is(&res->runs[i]))
            continue;
        for (size_t c = 0; c < ncol; c++)
            report_cell(out, c, width[c], c == 0 ? res->runs[i].id.experiment : cells[i][c]);
        fputc('\n', out);
    }
    free(cells);
    np_fabric_rows_table(out, fabric, ntrain > 0);
    if (np_fabric_rows_count(fabric)) /* below it, each check's slow node or link by name */
        report_fabric_findings(out, res);
    np_fabric_rows_free(fabric);
    report_table_footer(out, res, o);
    if (gs)
        report_table_groups(out, gs);
    return NP_OK;
}

/* ---- csv ---- */

/* snprintf(buf, size, "%.10g", v) byte for byte (size >= 32), without printf in the common case: a finite v
 * of 1e-4 <= |v| < 1e16 is scaled to 10 digits in extended precision, by one multiplication or division by
 * an exact power of ten (error < 1e-9 of a unit, so the rounding is the exact value's unless it lies within
 * 1e-6 of a tie: then, and for everything else, printf); from 1e10 on %g's exponent form ("7.2e+10": byte
 * counts, FLOPs per sample, tokens).  Formatting numbers was most of the time of writing a CSV or JSON run. */
static int report_g10(char *buf, size_t size, double v)
{
#if LDBL_MANT_DIG >= 64
    static const long double p10[] = {1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L,
                                      1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L};
    double a = fabs(v);
    if (size >= 32 && a >= 1e-4 && a < 1e16) {
        int e = (int)floor(log10(a)), k = 9 - e;
        if (k >= -6 && k <= 13) {
            long double sc = k >= 0 ? (long double)a * p10[k] : (long double)a / p10[-k], fl = floorl(sc),
                        fr = sc - fl;
            uint64_t d = (uint64_t)fl + (fr > 0.5L);
            if (fabsl(fr - 0.5L) > 1e-6L && d >= 1000000000u && d < 10000000000u) {
                char dig[10], *o = buf;
                for (int i = 9; i >= 0; i--, d /= 10)
                    dig[i] = (char)('0' + d % 10);
                int nd = 10;
                while (nd > 1 && dig[nd - 1] == '0')
                    nd--; /* %g drops trailing zeros */
                if (v < 0)
                    *o++ = '-';
                if (e >= 10) { /* d.ddde+XX */
                    *o++ = dig[0];
                    if (nd > 1) {
                        *o++ = '.';
                        for (int i = 1; i < nd; i++)
                            *o++ = dig[i];
                    }
                    *o++ = 'e';
                    *o++ = '+';
                    *o++ = (char)('0' + e / 10);
                    *o++ = (char)('0' + e % 10);
                } else if (e >= 0) {
                    for (int i = 0; i <= e; i++)
                        *o++ = dig[i];
                    if (nd > e + 1) {
                        *o++ = '.';
                        for (int i = e + 1; i < nd; i++)
                            *o++ = dig[i];
                    }
                } else {
                    *o++ = '0';
                    *o++ = '.';
                    for (int i = 0; i < -e - 1; i++)
                        *o++ = '0';
                    for (int i = 0; i < nd; i++)
                        *o++ = dig[i];
                }
                *o = '\0';
                return (int)(o - buf);
            }
        }
    }
#endif
    return snprintf(buf, size, "%.10g", v);
}

/* Decimal digits of x (buf holds >= 21 bytes); returns the length. */
static int report_lld(char *buf, long long x)
{
    char t[20];
    int n = 0, o = 0;
    unsigned long long u = x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x;
    do {
        t[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        buf[o++] = '-';
    while (n)
        buf[o++] = t[--n];
    buf[o] = '\0';
    return o;
}

/* snprintf "%.0f" of a finite v byte for byte: whole numbers below 2^53 directly (not -0). */
static int report_f0(char *buf, size_t size, double v)
{
    if (size >= 24 && v == floor(v) && fabs(v) < 9007199254740992.0 && !(v == 0 && signbit(v)))
        return report_lld(buf, (long long)v);
    return snprintf(buf, size, "%.0f", v);
}

static void report_csv_num(FILE *out, double v, int integer)
{
    char buf[400]; /* %.0f of 1e308 */
    fputc(',', out);
    if (isnan(v) || isinf(v))
        return;
    int n = integer ? report_f0(buf, sizeof buf, v) : report_g10(buf, sizeof buf, v);
    if (n > 0 && (size_t)n < sizeof buf)
        fwrite(buf, 1, (size_t)n, out);
}

static void report_csv_head(FILE *out, const struct np_parse_opts *o)
{
    fputs("path,experiment,recipe,model_size,dtype,gpus,gpu_type,seq_len,global_batch_size,step,steps_seen,"
          "complete,last_step_time_s,window_first,window_last,window_count,window_mean_s,window_median_s,"
          "window_stdev_s,window_min_s,window_max_s,last_tokens_per_s,last_tokens_per_s_per_gpu,model_flops_per_sample,"
          "last_model_tflops_per_gpu,last_mfu_percent,train_tokens,last_days_to_train,peak_memory_bytes,loss,status",
          out);
    fputs(",reason,note,job_id,start_time,gpu_type_source,system,workload,kind,family,container,config_variant,"
          "window_rule,steady_tokens_per_s,"
          "steady_tokens_per_s_per_gpu,steady_model_tflops_per_gpu,steady_mfu_percent,steady_days_to_train,scaling_efficiency,"
          "energy_w_per_gpu,energy_j_per_gpu_iter,energy_j_per_token,energy_tokens_per_kwh,energy_mwh_to_train"
          NP_FABRIC_CSV_HEAD,
          out);
    if (o->reference)
        fputs(",reference_tokens_per_s,reference_tokens_per_s_per_gpu,reference_step_time_s,reference_ratio,"
              "reference_result,reference_basis,reference_reason",
              out);
    fputc('\n', out);
}

/* eff_at: NULL, or where the scaling efficiency's field (its comma) starts, from ftello(out) */
static void report_csv_run(FILE *out, const struct np_run *r, const struct np_parse_opts *o, off_t *eff_at)
{
    np_text_csv_field(out, r->path, 0);
    fputc(',', out);
    np_text_csv_field(out, r->id.experiment, 0);
    fputc(',', out);
    np_text_csv_field(out, r->id.recipe, 0);
    fputc(',', out);
    np_text_csv_field(out, r->id.model_size, 0);
    fputc(',', out);
    fputs(np_identity_precision(&r->id), out);
    report_csv_num(out, r->id.gpus ? r->id.gpus : NAN, 1);
    fputc(',', out);
    np_text_csv_field(out, r->id.gpu_type, 0);
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
    fprintf(out, ",%s,", np_run_status_name(r->status));
    np_text_csv_field(out, r->why, 0);
    fputc(',', out);
    np_text_csv_field(out, r->note, 0);
    fputc(',', out);
    np_text_csv_field(out, r->job_id, 0);
    fputc(',', out);
    np_text_csv_field(out, r->launch.submit_time, 0);
    fputc(',', out);
    np_text_csv_field(out, r->gpu_source, 0);
    fputc(',', out);
    np_text_csv_field(out, r->id.system, 0);
    fprintf(out, ",%s,%s,", r->id.synthetic ? "synthetic" : np_fabric_is(r) ? "nccl-tests" : r->launch.present ? "nemo" : "",
            np_run_kind_name(r->id.kind));
    np_text_csv_field(out, r->id.family, 0);
    fputc(',', out);
    np_text_csv_field(out, r->id.container, 0);
    fputc(',', out);
    np_text_csv_field(out, r->id.config_variant, 0);
    fputc(',', out);
    np_text_csv_field(out, r->window.rule, 0);
    report_csv_num(out, r->steady.tokens_per_s, 0);
    report_csv_num(out, r->steady.tokens_per_s_per_gpu, 0);
    report_csv_num(out, r->steady.model_tflops_per_gpu, 0);
    report_csv_num(out, r->steady.mfu_percent, 0);
    report_csv_num(out, r->steady.days_to_train, 0);
    if (eff_at)
        *eff_at = ftello(out);
    report_csv_num(out, r->scaling_eff, 0);
    report_csv_num(out, r->energy.w_per_gpu, 0);
    report_csv_num(out, r->energy.j_per_gpu_iter, 0);
    report_csv_num(out, r->energy.j_per_token, 0);
    report_csv_num(out, r->energy.tokens_per_kwh, 0);
    report_csv_num(out, r->energy.mwh_to_train, 0);
    np_fabric_csv(out, r); /* an nccl-tests step's figures (report/fabric.c), empty fields for other runs */
    if (o->reference) {
        report_csv_num(out, r->ref ? r->ref->tokens_per_s : NAN, 0);
        report_csv_num(out, r->ref ? r->ref->tokens_per_s_per_gpu : NAN, 0);
        report_csv_num(out, r->ref ? r->ref->step_time_s : NAN, 0);
        report_csv_num(out, r->ref_ratio, 0);
        fprintf(out, ",%s,%s,", r->verdict == NP_VERDICT_NOT_COMPARED ? "" : np_verdict_name(r->verdict),
                o->verdict_last ? "last" : "steady");
        np_text_csv_field(out, r->verdict == NP_VERDICT_NOT_COMPARED ? r->ref_why : NULL, 0);
    }
    fputc('\n', out);
}

static void report_csv_groups(FILE *out, const struct np_groups *gs)
{
    fputs("recipe,model_size,dtype,gpu_type,kind,gpus,global_batch_size,n,step_mean_s,step_stdev_s,step_min_s,"
          "step_max_s,tokens_per_s_mean,tokens_per_s_stdev,tokens_per_s_min,tokens_per_s_max,scaling_efficiency\n",
          out);
    for (size_t k = 0; k < gs->n; k++) {
        const struct np_group *g = &gs->g[k];
        const struct np_identity *id = &g->first->id;
        np_text_csv_field(out, id->recipe, 0);
        fputc(',', out);
        np_text_csv_field(out, id->model_size, 0);
        fprintf(out, ",%s,", np_identity_precision(id));
        np_text_csv_field(out, id->gpu_type, 0);
        fprintf(out, ",%s", np_run_kind_name(id->kind));
        report_csv_num(out, id->gpus, 1);
        report_csv_num(out, id->gbs ? id->gbs : NAN, 1);
        report_csv_num(out, (double)g->n, 1);
        report_csv_num(out, g->step_mean_s, 0);
        report_csv_num(out, g->step_stdev_s, 0);
        report_csv_num(out, g->step_min_s, 0);
        report_csv_num(out, g->step_max_s, 0);
        report_csv_num(out, g->tps_mean, 0);
        report_csv_num(out, g->tps_stdev, 0);
        report_csv_num(out, g->tps_min, 0);
        report_csv_num(out, g->tps_max, 0);
        report_csv_num(out, g->scaling_eff, 0);
        fputc('\n', out);
    }
}

static enum np_status report_csv(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o,
                                 const struct np_groups *gs)
{
    if (gs) { /* --group: the groups are the table */
        report_csv_groups(out, gs);
        return NP_OK;
    }
    report_csv_head(out, o);
    for (size_t i = 0; i < res->nruns; i++)
        report_csv_run(out, &res->runs[i], o, NULL);
    return NP_OK;
}

/* ---- json ---- */

/* 1 when v is a whole number a double holds exactly (below 2^53): a byte count is written as an integer */
static int report_exact_count(double v)
{
    return isfinite(v) && v >= 0 && v < 9007199254740992.0 && v == floor(v);
}

static json_t *report_jnum(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *report_jint(long long v, int known)
{
    return known ? json_integer(v) : json_null();
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates), 0 if invalid. */
static size_t report_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        n = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        n = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

/* A JSON string of s; bytes that are not UTF-8 (a file name may hold any byte) become the
 * text "\xNN" (and a backslash "\\"... only then, so valid names are kept as they are). */
static json_t *report_jtext(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t len = strlen(s);
    char *buf = malloc(len * 4 + 1);
    if (!buf)
        return NULL;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = report_utf8_len(p);
        if (n) {
            memcpy(buf + o, p, n);
            o += n;
            p += n;
        } else {
            o += (size_t)sprintf(buf + o, "\\x%02X", *p);
            p++;
        }
    }
    buf[o] = '\0';
    j = json_string(buf);
    free(buf);
    return j;
}

static json_t *report_jstr(const char *s)
{
    return s && *s ? report_jtext(s) : json_null();
}

static json_t *report_jmetrics(const struct np_metrics *m)
{
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "tokens_per_s", report_jnum(m->tokens_per_s), "tokens_per_s_per_gpu",
                     report_jnum(m->tokens_per_s_per_gpu), "model_tflops_per_gpu",
                     report_jnum(m->model_tflops_per_gpu), "mfu_percent", report_jnum(m->mfu_percent),
                     "days_to_train", report_jnum(m->days_to_train));
}

static json_t *report_json_run(const struct np_run *r, const struct np_parse_opts *o)
{
    json_t *w = json_pack("{s:o,s:o,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "first",
                          report_jint(r->window.first, r->window.first >= 0), "last",
                          report_jint(r->window.last, r->window.last >= 0), "count", (json_int_t)r->window.count,
                          "requested", (json_int_t)r->window.requested, "rule", report_jstr(r->window.rule),
                          "mean_s", report_jnum(r->window.mean_s), "median_s", report_jnum(r->window.median_s),
                          "stdev_s", report_jnum(r->window.stdev_s), "min_s", report_jnum(r->window.min_s),
                          "max_s", report_jnum(r->window.max_s));
    json_t *j = json_object();
    json_t *steady = report_jmetrics(&r->steady);
    json_t *path = report_jtext(r->path);
    if (!j || !w || !steady || !path) {
        json_decref(j);
        json_decref(w);
        json_decref(steady);
        json_decref(path);
        return NULL;
    }
    json_object_set_new(j, "path", path);
    json_object_set_new(j, "experiment", report_jstr(r->id.experiment));
    json_object_set_new(j, "recipe", report_jstr(r->id.recipe));
    json_object_set_new(j, "model_size", report_jstr(r->id.model_size));
    json_object_set_new(j, "dtype", report_jstr(np_identity_precision(&r->id)));
    json_object_set_new(j, "gpus", report_jint(r->id.gpus, r->id.gpus > 0));
    json_object_set_new(j, "gpu_type", report_jstr(r->id.gpu_type));
    json_object_set_new(j, "gpu_type_source", report_jstr(r->gpu_source));
    json_object_set_new(j, "system", report_jstr(r->id.system));
    json_object_set_new(j, "workload", r->id.synthetic ? json_string("synthetic") : json_null());
    json_object_set_new(j, "kind", json_string(np_run_kind_name(r->id.kind)));
    json_object_set_new(j, "family", report_jstr(r->id.family));
    json_object_set_new(j, "container", report_jstr(r->id.container));
    json_object_set_new(j, "config_variant", report_jstr(r->id.config_variant));
    json_object_set_new(j, "job_id", report_jstr(r->job_id));
    json_object_set_new(j, "start_time", report_jstr(r->launch.submit_time));
    json_object_set_new(j, "seq_len", report_jint(r->id.seq_len, r->id.seq_len > 0));
    json_object_set_new(j, "global_batch_size", report_jint(r->id.gbs, r->id.gbs > 0));
    json_object_set_new(j, "identified_by", report_jstr(r->id_source));
    json_object_set_new(j, "log_format", r->steps_seen == 0 ? json_null() : json_string(np_log_gen_name(r->gen)));
    json_object_set_new(j, "attempts", json_integer((json_int_t)r->attempts));
    json_object_set_new(j, "step", report_jint(r->step, r->step >= 0));
    json_object_set_new(j, "final_step", report_jint(r->total, r->total >= 0));
    json_object_set_new(j, "steps_seen", json_integer((json_int_t)r->steps_seen));
    json_object_set_new(j, "complete", r->complete < 0 ? json_null() : json_boolean(r->complete));
    json_object_set_new(j, "last_step_time_s", report_jnum(r->step_time_s));
    json_object_set_new(j, "window", w);
    json_object_set_new(j, "last_tokens_per_s", report_jnum(r->m.tokens_per_s));
    json_object_set_new(j, "last_tokens_per_s_per_gpu", report_jnum(r->m.tokens_per_s_per_gpu));
    json_object_set_new(j, "model_flops_per_sample", report_jnum(r->flops_per_sample));
    json_object_set_new(j, "last_model_tflops_per_gpu", report_jnum(r->m.model_tflops_per_gpu));
    json_object_set_new(j, "logged_tflops_per_gpu", report_jnum(r->logged_tflops_per_gpu));
    json_object_set_new(j, "logged_tflops_basis", isnan(r->logged_tflops_per_gpu) ? json_null()
                                                  : json_string(r->logged_steady ? "steady" : "last"));
    json_object_set_new(j, "last_mfu_percent", report_jnum(r->m.mfu_percent));
    json_object_set_new(j, "train_tokens", report_jnum(r->train_tokens));
    json_object_set_new(j, "last_days_to_train", report_jnum(r->m.days_to_train));
    json_object_set_new(j, "steady", steady);
    json_object_set_new(j, "scaling_efficiency", report_jnum(r->scaling_eff));
    json_object_set_new(j, "energy", !r->energy.steps ? json_null()
                                     : json_pack("{s:o,s:o,s:o,s:o,s:o,s:I,s:o}", "w_per_gpu",
                                                 report_jnum(r->energy.w_per_gpu), "j_per_gpu_iter",
                                                 report_jnum(r->energy.j_per_gpu_iter), "j_per_token",
                                                 report_jnum(r->energy.j_per_token), "tokens_per_kwh",
                                                 report_jnum(r->energy.tokens_per_kwh), "mwh_to_train",
                                                 report_jnum(r->energy.mwh_to_train), "steps",
                                                 (json_int_t)r->energy.steps, "source",
                                                 r->energy.source ? json_string(r->energy.source) : json_null()));
    json_object_set_new(j, "nccl_tests", np_fabric_json(r)); /* report/fabric.c: an nccl-tests step, else null */
    /* the job's system snapshot and telemetry (parse/runsys.c), kept as compact JSON in the record */
    json_t *sys = r->system ? json_loads(r->system, 0, NULL) : NULL;
    json_object_set_new(j, "system_snapshot", sys ? sys : json_null());
    /* a byte count: an integer, exact (issue 23: 62442450944 printed as 6.244245094e10) */
    json_object_set_new(j, "peak_memory_bytes", report_exact_count(r->peak_memory_bytes)
                                                    ? json_integer((json_int_t)r->peak_memory_bytes)
                                                    : report_jnum(r->peak_memory_bytes));
    json_object_set_new(j, "loss", report_jnum(r->loss));
    json_object_set_new(j, "checkpoint_saved", json_boolean(r->checkpoint_saved));
    json_object_set_new(j, "checkpoint_loaded", json_boolean(r->checkpoint_loaded));
    json_object_set_new(j, "status", json_string(np_run_status_name(r->status)));
    json_object_set_new(j, "reason", report_jstr(r->why));
    json_object_set_new(j, "note", report_jstr(r->note));
    if (o->reference) {
        json_t *ref = json_object();
        if (r->ref) {
            json_object_set_new(ref, "source", report_jstr(r->ref->source));
            json_object_set_new(ref, "step_time_s", report_jnum(r->ref->step_time_s));
            json_object_set_new(ref, "tokens_per_s", report_jnum(r->ref->tokens_per_s));
            json_object_set_new(ref, "tokens_per_s_per_gpu", report_jnum(r->ref->tokens_per_s_per_gpu));
            json_object_set_new(ref, "mfu_percent", report_jnum(r->ref->mfu_percent));
            json_object_set_new(ref, "days_1t", report_jnum(r->ref->days_1t));
            json_object_set_new(ref, "model_tflops_per_gpu", report_jnum(r->ref->model_tflops_per_gpu));
        }
        json_object_set_new(ref, "basis", json_string(o->verdict_last ? "last" : "steady"));
        json_object_set_new(ref, "ratio", report_jnum(r->ref_ratio));
        json_object_set_new(ref, "tolerance_percent", json_real(np_run_tolerance(r, o)));
        json_object_set_new(ref, "result", r->verdict == NP_VERDICT_NOT_COMPARED ? json_null()
                                                                                  : json_string(np_verdict_name(r->verdict)));
        json_object_set_new(ref, "reason", r->verdict == NP_VERDICT_NOT_COMPARED ? report_jstr(r->ref_why) : json_null());
        json_object_set_new(j, "reference", ref);
    }
    return j;
}

static json_t *report_json_groups(const struct np_groups *gs)
{
    json_t *a = json_array();
    for (size_t k = 0; a && k < gs->n; k++) {
        const struct np_group *g = &gs->g[k];
        const struct np_identity *id = &g->first->id;
        json_t *o = json_object();
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
        json_object_set_new(o, "recipe", report_jstr(id->recipe));
        json_object_set_new(o, "model_size", report_jstr(id->model_size));
        json_object_set_new(o, "dtype", json_string(np_identity_precision(id)));
        json_object_set_new(o, "gpu_type", report_jstr(id->gpu_type));
        json_object_set_new(o, "kind", json_string(np_run_kind_name(id->kind)));
        json_object_set_new(o, "gpus", json_integer(id->gpus));
        json_object_set_new(o, "global_batch_size", report_jint(id->gbs, id->gbs > 0));
        json_object_set_new(o, "n", json_integer((json_int_t)g->n));
        json_object_set_new(o, "steady_step_time_s", json_pack("{s:o,s:o,s:o,s:o}", "mean", report_jnum(g->step_mean_s),
                                                         "stdev", report_jnum(g->step_stdev_s), "min",
                                                         report_jnum(g->step_min_s), "max", report_jnum(g->step_max_s)));
        json_object_set_new(o, "steady_tokens_per_s", json_pack("{s:o,s:o,s:o,s:o}", "mean", report_jnum(g->tps_mean),
                                                          "stdev", report_jnum(g->tps_stdev), "min",
                                                          report_jnum(g->tps_min), "max", report_jnum(g->tps_max)));
        json_object_set_new(o, "scaling_efficiency", report_jnum(g->scaling_eff));
    }
    return a;
}

static enum np_status report_json(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o,
                                  const struct np_groups *gs)
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
        json_array_append_new(errs, report_jtext(res->errors[i]));
    if (gs) {
        json_t *g = report_json_groups(gs);
        if (!g || json_object_set_new(root, "groups", g) != 0) {
            json_decref(root);
            return NP_E_NOMEM;
        }
    }
    if (json_object_set_new(root, "schema_version", json_integer(NP_REPORT_SCHEMA)) != 0) {
        json_decref(root);
        return NP_E_NOMEM;
    }
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', out);
    json_decref(root);
    return rc == 0 ? NP_OK : NP_E_IO;
}

enum np_status np_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                               const struct np_parse_opts *opts)
{
    struct np_groups groups = {0};
    const struct np_groups *gs = NULL;
    if (opts->group && fmt != NP_FMT_MARKDOWN) {
        if (np_groups_build(res, &groups) != NP_OK)
            return NP_E_NOMEM;
        gs = &groups;
    }
    enum np_status st;
    switch (fmt) {
    case NP_FMT_MARKDOWN: st = report_markdown(out, res, opts); break;
    case NP_FMT_CSV: st = report_csv(out, res, opts, gs); break;
    case NP_FMT_JSON: st = report_json(out, res, opts, gs); break;
    default: st = report_table(out, res, opts, gs); break;
    }
    np_groups_free(&groups);
    if (st == NP_OK && (fflush(out) != 0 || ferror(out)))
        st = NP_E_IO;
    return st;
}

/* ---- the stream (table, csv, json) ---- */

/* Held-back text: memory first, a temporary file beyond REPORT_SPILL_MEM (or from the start, when the
 * caller made one: markdown's list of the runs in no table). */
#define REPORT_SPILL_MEM ((size_t)1 << 20)

struct report_spill {
    char *buf;
    size_t len, cap;
    FILE *tmp;
    int failed;
    int err; /* with failed: errno of the temporary file that could not be made, written or read; 0: memory */
};

const char *np_report_tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

FILE *np_report_tmpfile(void)
{
    const char *dir = np_report_tmpdir();
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) { /* no O_TMPFILE there */
        char *name = NULL;
        if (asprintf(&name, "%s/nemoperf-XXXXXX", dir) < 0)
            return NULL;
        fd = mkostemp(name, O_CLOEXEC);
        if (fd >= 0)
            unlink(name);
        free(name);
    }
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w+");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

static void report_spill_fail(struct report_spill *s, int err)
{
    s->failed = 1;
    s->err = err;
}

static void report_spill_add(struct report_spill *s, const char *text, size_t n)
{
    if (s->failed)
        return;
    if (!s->tmp && s->len + n > REPORT_SPILL_MEM)
        s->tmp = np_report_tmpfile(); /* NULL: no temporary file, kept in memory rather than lost */
    if (s->tmp) {
        errno = 0;
        if (fwrite(text, 1, n, s->tmp) != n)
            report_spill_fail(s, errno ? errno : EIO);
        return;
    }
    if (s->len + n > s->cap) {
        size_t nc = s->cap ? s->cap : 4096;
        while (nc < s->len + n)
            nc *= 2;
        char *b = realloc(s->buf, nc);
        if (!b) {
            report_spill_fail(s, 0);
            return;
        }
        s->buf = b;
        s->cap = nc;
    }
    memcpy(s->buf + s->len, text, n);
    s->len += n;
}

static void report_spill_printf(struct report_spill *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_spill_printf(struct report_spill *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0) {
        report_spill_fail(s, 0);
        return;
    }
    report_spill_add(s, text, (size_t)n);
    free(text);
}

/* Everything written to the temporary file is on disk and it reads from the start: NP_E_IO (err set), NP_E_NOMEM
 * when something could not be held. */
static enum np_status report_spill_ready(struct report_spill *s)
{
    if (!s->failed && s->tmp && (fflush(s->tmp) != 0 || fseek(s->tmp, 0, SEEK_SET) != 0))
        report_spill_fail(s, errno ? errno : EIO);
    return !s->failed ? NP_OK : s->err ? NP_E_IO : NP_E_NOMEM;
}

/* Everything held, in order, to out. */
static enum np_status report_spill_write(struct report_spill *s, FILE *out)
{
    enum np_status st = report_spill_ready(s);
    if (st != NP_OK)
        return st;
    if (s->len && fwrite(s->buf, 1, s->len, out) != s->len)
        return NP_E_IO;
    if (s->tmp) {
        char b[65536];
        size_t n;
        while ((n = fread(b, 1, sizeof b, s->tmp)) > 0)
            if (fwrite(b, 1, n, out) != n)
                return NP_E_IO;
        if (ferror(s->tmp)) {
            report_spill_fail(s, errno ? errno : EIO);
            return NP_E_IO;
        }
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

/* Consecutive runs with the same message share one footer line (report_table_footer's rule). */
struct report_streak {
    char *msg, *path;
    char first[sizeof ((struct np_identity *)0)->experiment], last[sizeof ((struct np_identity *)0)->experiment];
    size_t n;
};

static void report_streak_end(struct report_streak *k, struct report_spill *s, const char *what)
{
    if (k->msg) {
        if (k->n == 1)
            report_spill_printf(s, "%s: %s: %s\n", what, k->path, k->msg);
        else if (strcmp(k->first, k->last) == 0) /* repeats of one name */
            report_spill_printf(s, "%s: %zu runs of %s: %s\n", what, k->n, k->first, k->msg);
        else
            report_spill_printf(s, "%s: %zu runs (%s ... %s): %s\n", what, k->n, k->first, k->last, k->msg);
    }
    free(k->msg);
    free(k->path);
    memset(k, 0, sizeof *k);
}

static void report_streak_add(struct report_streak *k, struct report_spill *s, const char *what,
                              const struct np_run *r, const char *msg)
{
    if (k->msg && msg && *msg && strcmp(k->msg, msg) == 0) {
        k->n++;
        snprintf(k->last, sizeof k->last, "%s", r->id.experiment);
        return;
    }
    report_streak_end(k, s, what);
    if (!msg || !*msg)
        return;
    k->msg = strdup(msg);
    k->path = strdup(r->path);
    if (!k->msg || !k->path) {
        report_spill_fail(s, 0);
        free(k->msg);
        free(k->path);
        k->msg = k->path = NULL;
        return;
    }
    k->n = 1;
    snprintf(k->first, sizeof k->first, "%s", r->id.experiment);
    snprintf(k->last, sizeof k->last, "%s", r->id.experiment);
}

/* ---- markdown, run by run ----
 * What the tables need of the runs is held per column (report_md_col: the last run of each configuration and
 * how many ran there), so memory grows with the number of configurations, not of runs; the runs in no table
 * (and the incomplete ones) are listed after the tables, in the runs' order, from `list`.  Nothing is written
 * before every run is in: the tables' order (report_cmp_groups) and columns are known only then. */
/* A run on a row published in a layout of its own (np_ref_row.layout: Megatron-Bridge's summaries). */
struct report_md_laid {
    const char *layout;         /* the container, borrowed from the published rows */
    int synthetic;
    struct np_mb_measured m;
};

struct report_md {
    struct report_group *g; /* owned */
    size_t ng, capg;
    struct report_md_laid *laid; /* owned; one per run: a few numbers each */
    size_t nlaid, caplaid;
    struct report_spill list;
    int listed;
    struct report_spill sys;  /* "- `path`: what stands out in the system the run ran on" (runsys.c's findings) */
    int sys_listed;
    struct np_fabric_rows *fabric; /* the nccl-tests steps: a section of their own (report/fabric.c) */
    struct np_fabric_checks *checks; /* the same, for naming the slow node or link (parse/fabric_check.h) */
};

static void report_md_free(struct report_md *md)
{
    np_fabric_rows_free(md->fabric);
    np_fabric_checks_free(md->checks);
    for (size_t k = 0; k < md->ng; k++) {
        for (size_t c = 0; c < md->g[k].ncols; c++)
            free(md->g[k].cols[c].path);
        free(md->g[k].cols);
    }
    free(md->g);
    free(md->laid);
    report_spill_free(&md->list);
    report_spill_free(&md->sys);
    memset(md, 0, sizeof *md);
}

/* The column shows r from now on (the same configuration again: the later run, a newer timestamp folder). */
static int report_md_col_set(struct report_md_col *c, const struct np_run *r)
{
    const char *path = r->path ? r->path : "";
    size_t n = strlen(path) + 1;
    if (n > c->pathcap) {
        char *p = realloc(c->path, n);
        if (!p)
            return -1;
        c->path = p;
        c->pathcap = n;
    }
    memcpy(c->path, path, n);
    c->recipe = r->recipe;
    c->model = r->model;
    c->row = r->row;
    c->ref = r->ref;
    snprintf(c->task, sizeof c->task, "%s", r->id.task);
    c->gpus = r->id.gpus;
    c->gbs = r->id.gbs;
    c->seq_len = r->id.seq_len;
    c->step_time_s = r->step_time_s;
    c->ref_ratio = r->ref_ratio;
    c->m = r->m;
    c->steady = r->steady;
    c->verdict = r->verdict;
    snprintf(c->job_id, sizeof c->job_id, "%s", r->job_id);
    return 0;
}

/* r into its table: its group found or made (in order of first appearance), its column found (same GPU count,
 * model, task) or inserted in order. */
static enum np_status report_md_table_add(struct report_md *md, const struct np_run *r)
{
    char system[40] = "";
    int rank = 0;
    if (report_per_system(r->recipe))
        report_system_of(r, system, sizeof system, &rank);
    size_t k = 0;
    while (k < md->ng && !report_same_group(&md->g[k], r, system))
        k++;
    if (k == md->ng) {
        if (md->ng == md->capg) {
            size_t nc = md->capg ? md->capg * 2 : 8;
            struct report_group *a = realloc(md->g, nc * sizeof *a);
            if (!a)
                return NP_E_NOMEM;
            md->g = a;
            md->capg = nc;
        }
        struct report_group *g = &md->g[k];
        memset(g, 0, sizeof *g);
        g->recipe = r->recipe;
        g->model = r->model;
        g->dtype = r->id.dtype;
        snprintf(g->gpu_type, sizeof g->gpu_type, "%s", r->id.gpu_type);
        g->sysrank = rank;
        g->synthetic = r->id.synthetic;
        g->finetune = report_finetune(r);
        g->dfm = report_dfm_section(r);
        g->seq = k;
        snprintf(g->system, sizeof g->system, "%s", system);
        md->ng++;
    }
    struct report_group *g = &md->g[k];
    size_t c = 0;
    while (c < g->ncols && report_col_before(g, &g->cols[c], r))
        c++;
    if (c < g->ncols && report_col_same(g, &g->cols[c], r)) {
        g->cols[c].repeats++; /* said below the table */
        return report_md_col_set(&g->cols[c], r) == 0 ? NP_OK : NP_E_NOMEM;
    }
    if (g->ncols == g->capcols) {
        size_t nc = g->capcols ? g->capcols * 2 : 8;
        struct report_md_col *a = realloc(g->cols, nc * sizeof *a);
        if (!a)
            return NP_E_NOMEM;
        g->cols = a;
        g->capcols = nc;
    }
    struct report_md_col col = {0};
    if (report_md_col_set(&col, r) != 0)
        return NP_E_NOMEM;
    col.repeats = 1;
    memmove(&g->cols[c + 1], &g->cols[c], (g->ncols - c) * sizeof *g->cols);
    g->cols[c] = col;
    g->ncols++;
    return NP_OK;
}

static enum np_status report_spill_status(const struct report_spill *s)
{
    return !s->failed ? NP_OK : s->err ? NP_E_IO : NP_E_NOMEM;
}

/* A benchmark run on a row of its own layout: its figures as the publication shows them (tokens/s/GPU of the
 * steady window; Megatron-Bridge's own rank-0 TFLOP/s/GPU, which llmb averages, else the formula's). */
static int report_md_laid_of(const struct np_run *r, struct report_md_laid *l)
{
    const struct np_ref_row *p = r->layout_row;
    if (!p || !p->layout || r->id.kind != NP_KIND_BENCHMARK || isnan(r->steady.tokens_per_s_per_gpu) ||
        !(np_run_status_good(r->status) || r->status == NP_RUN_INCOMPLETE))
        return 0;
    l->layout = p->layout;
    l->synthetic = r->id.synthetic;
    l->m.line = p->layout_line;
    l->m.second = p->layout_second;
    l->m.tokens_per_s_per_gpu = r->steady.tokens_per_s_per_gpu;
    /* a synthetic run's rank 0 prints what --step-tflops made it print: no GPU figure */
    l->m.tflops_per_gpu = r->id.synthetic                   ? NAN
                          : !isnan(r->logged_tflops_per_gpu) ? r->logged_tflops_per_gpu
                                                             : r->steady.model_tflops_per_gpu;
    return 1;
}

static enum np_status report_md_add(struct report_md *md, const struct np_run *r)
{
    if (np_fabric_is(r)) { /* the fabric check's section; a step that did not run is listed too */
        if (!md->fabric && !(md->fabric = np_fabric_rows_new()))
            return NP_E_NOMEM;
        enum np_status fst = np_fabric_rows_add(md->fabric, r);
        if (fst == NP_OK && ((!md->checks && !(md->checks = np_fabric_checks_new())) ||
                             np_fabric_checks_add(md->checks, r) != NP_OK))
            fst = NP_E_NOMEM;
        if (fst != NP_OK || np_run_status_good(r->status))
            return fst;
    }
    struct report_md_laid laid;
    int in_table = report_run_in_markdown(r);
    if (!in_table && report_md_laid_of(r, &laid)) {
        if (md->nlaid == md->caplaid) {
            size_t nc = md->caplaid ? md->caplaid * 2 : 16;
            struct report_md_laid *a = realloc(md->laid, nc * sizeof *a);
            if (!a)
                return NP_E_NOMEM;
            md->laid = a;
            md->caplaid = nc;
        }
        md->laid[md->nlaid++] = laid;
        in_table = 1;
    } else if (in_table) {
        enum np_status st = report_md_table_add(md, r);
        if (st != NP_OK)
            return st;
    }
    /* the system the run ran on: what stands out and what was missing, in words (the JSON's system_snapshot) */
    json_t *sys = r->system ? json_loads(r->system, 0, NULL) : NULL;
    if (sys) {
        json_t *v;
        size_t i;
        const char *sep = "";
        report_spill_printf(&md->sys, "- `%s`: ", r->path);
        json_array_foreach(json_object_get(sys, "stands_out"), i, v) {
            report_spill_printf(&md->sys, "%s%s", sep, json_string_value(v) ? json_string_value(v) : "");
            sep = "; ";
        }
        const char *notes = json_string_value(json_object_get(sys, "notes"));
        if (notes)
            report_spill_printf(&md->sys, "%s%s", sep, notes);
        else if (!*sep)
            report_spill_printf(&md->sys, "nothing stands out");
        const char *win = json_string_value(json_object_get(sys, "telemetry_window"));
        report_spill_printf(&md->sys, "%s\n", win ? (!strcmp(win, "whole run") ? " (GPU telemetry over the whole run)"
                                                                             : " (GPU telemetry over the steady window)")
                                                 : "");
        md->sys_listed = 1;
        json_decref(sys);
    }
    /* every run is accounted for: those not in a table (and the incomplete ones) are listed */
    if (!in_table || r->status == NP_RUN_INCOMPLETE) {
        report_spill_printf(&md->list, "- `%s`: %s%s%s%s%s\n", r->path,
                            r->id.kind != NP_KIND_BENCHMARK ? np_run_kind_name(r->id.kind) : "",
                            r->id.kind != NP_KIND_BENCHMARK ? " run, " : "", np_run_status_name(r->status),
                            r->why ? ": " : "", r->why ? r->why : "");
        md->listed = 1;
    }
    enum np_status sst = report_spill_status(&md->sys);
    return sst != NP_OK ? sst : report_spill_status(&md->list);
}

/* The runs on rows of their own layout: one table per layout (container) in the order the runs name them, the
 * runs of the synthetic workload in tables of their own, said so. */
static enum np_status report_md_laid_write(struct report_md *md, FILE *out)
{
    if (!md->nlaid)
        return NP_OK;
    char *refdir = np_data_path("reference");
    if (!refdir) {
        np_errorf("reference folder not found (set NEMOPERF_DATADIR)");
        return NP_E_NOTFOUND;
    }
    struct np_mb_measured *m = malloc(md->nlaid * sizeof *m);
    enum np_status st = m ? NP_OK : NP_E_NOMEM;
    int tables = (int)md->ng;
    for (size_t i = 0; st == NP_OK && i < md->nlaid; i++) {
        const struct report_md_laid *a = &md->laid[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = md->laid[j].synthetic == a->synthetic && strcmp(md->laid[j].layout, a->layout) == 0;
        if (seen)
            continue;
        size_t nm = 0;
        for (size_t j = i; j < md->nlaid; j++)
            if (md->laid[j].synthetic == a->synthetic && strcmp(md->laid[j].layout, a->layout) == 0)
                m[nm++] = md->laid[j].m;
        char layout[4096];
        snprintf(layout, sizeof layout, "%s/megatron-bridge/%s.tsv", refdir, a->layout);
        if (tables++)
            fputc('\n', out);
        if (a->synthetic)
            fputs("Synthetic CPU workload (nemoperf-synth stood in for the GPU job): the figures below are not GPU "
                  "measurements.\n\n", out);
        struct np_error err;
        memset(&err, 0, sizeof err);
        st = np_mb_md_render(out, layout, a->layout, m, nm, 0, &err);
        if (st != NP_OK)
            np_error_print(&err);
    }
    free(m);
    free(refdir);
    return st;
}

/* The tables in the publications' order, each with its repeats, then the list. */
static enum np_status report_md_write(struct report_md *md, FILE *out, const struct np_parse_opts *o)
{
    enum np_status st = report_spill_ready(&md->list); /* a failing temporary file: nothing written */
    if (st == NP_OK)
        st = report_spill_ready(&md->sys);
    if (st != NP_OK)
        return st;
    if (md->ng > 1)
        qsort(md->g, md->ng, sizeof *md->g, report_cmp_groups);
    for (size_t k = 0; k < md->ng; k++) {
        const struct report_group *g = &md->g[k];
        if (k)
            fputc('\n', out);
        if (g->finetune)
            report_md_ft_table(out, g, o);
        else if (g->dfm)
            report_md_dfm_table(out, g, !k || md->g[k - 1].dfm != g->dfm || md->g[k - 1].synthetic != g->synthetic, o);
        else if (report_per_system(g->recipe))
            report_md_system_table(out, g, o);
        else
            report_md_model_table(out, g, o);
        for (size_t c = 0; c < g->ncols; c++)
            if (g->cols[c].repeats > 1)
                fprintf(out, "\n%zu runs at %d GPUs: the table shows the last (%s%s); --group aggregates them.\n",
                        g->cols[c].repeats, g->cols[c].gpus, g->cols[c].job_id[0] ? "job " : "",
                        g->cols[c].job_id[0] ? g->cols[c].job_id : g->cols[c].path);
    }
    if (st == NP_OK)
        st = report_md_laid_write(md, out);
    np_fabric_rows_markdown(out, md->fabric, md->ng || md->nlaid);
    if (md->checks) /* each check's slow node or link by name, below its section */
        report_fabric_checks(out, md->checks, 1);
    if (md->sys_listed && st == NP_OK) {
        fputs(md->ng || md->nlaid || md->fabric ? "\nThe systems the runs ran on:\n\n" : "The systems the runs ran on:\n\n",
              out);
        st = report_spill_write(&md->sys, out);
    }
    if (md->listed && st == NP_OK) {
        fputs(md->ng || md->nlaid || md->fabric ? "\nRuns not in the tables or not ok:\n\n"
                                                : "Runs not in the tables or not ok:\n\n",
              out);
        st = report_spill_write(&md->list, out);
    }
    return st;
}

static enum np_status report_markdown(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o)
{
    struct report_md md = {0};
    enum np_status st = NP_OK;
    for (size_t i = 0; i < res->nruns && st == NP_OK; i++)
        st = report_md_add(&md, &res->runs[i]);
    if (st == NP_OK)
        st = report_md_write(&md, out, o);
    report_md_free(&md);
    return st;
}

/* A run object is built and dumped in one arena, reused from run to run: no malloc/free per key
 * and value.  Jansson's allocator (json_set_alloc_funcs, set once before any worker runs) takes
 * from the arena of the calling thread while one is active and falls back to malloc (a full
 * arena, other threads reading manifests); free ignores arena memory. */
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

/* One table row held until the widths are fixed. */
struct report_row {
    char exp[sizeof ((struct np_identity *)0)->experiment];
    char cell[REPORT_MAXCOL][REPORT_CELL];
};

struct np_report {
    FILE *out;
    enum np_format fmt;
    const struct np_parse_opts *o;
    size_t nruns, nerrors;
    enum np_status status; /* sticky */
    const char *member_key, *member_value; /* json: np_report_json_member */
    /* table */
    struct report_row *rows; /* the first NP_REPORT_TABLE_ROWS rows, until the widths are fixed */
    size_t nrows, ncol;
    size_t width[REPORT_MAXCOL];
    int widths_fixed, gpu_star;
    const struct np_run_family *other_tol; /* a family compared at its own tolerance (report_other_tolerance) */
    struct report_spill why, notes, refs; /* footer parts (json: `why` holds the errors) */
    struct report_streak note_k, ref_k;
    struct np_fabric_rows *fabric; /* table, markdown: the nccl-tests steps, shown after the training table */
    struct np_fabric_checks *checks; /* table: the same steps, for naming the slow node or link below them */
    size_t ntrain;                 /* table: the runs of the training table */
    /* markdown */
    struct report_md md;
    /* json */
    char *jbuf;
    size_t jcap;
    struct report_arena arena;
    /* rows rendered ahead (np_report_render): CSV through a memory stream */
    FILE *ms;
    char *ms_buf;
    size_t ms_size;
};

struct np_report *np_report_new(FILE *out, enum np_format fmt, const struct np_parse_opts *opts)
{
    struct np_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->out = out;
    r->fmt = fmt;
    r->o = opts;
    if (fmt == NP_FMT_MARKDOWN) { /* the list of runs in no table goes to a temporary file from the start */
        if (!(r->md.list.tmp = np_report_tmpfile())) {
            report_spill_fail(&r->md.list, errno ? errno : EIO);
            r->status = NP_E_IO;
        }
        return r;
    }
    r->ncol = opts->reference ? REPORT_MAXCOL : REPORT_STATUS + 1;
    for (size_t c = 0; c < r->ncol; c++)
        r->width[c] = strlen(report_head[c]);
    if (fmt == NP_FMT_JSON) /* before any worker thread runs: Jansson's allocator is process-wide */
        pthread_once(&report_alloc_once, report_alloc_init);
    return r;
}

static void report_table_line(FILE *out, const struct report_row *row, const size_t *width, size_t ncol)
{
    for (size_t c = 0; c < ncol; c++)
        report_cell(out, c, width[c], c == 0 ? row->exp : row->cell[c]);
    fputc('\n', out);
}

/* Widths from the rows held so far: header and held rows out; later rows go straight out. */
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

/* What the footer says of run r (report_table_footer's lines, gathered as the runs come). */
static enum np_status report_table_account(struct np_report *rep, const struct np_run *r)
{
    if (r->gpu_source && strcmp(r->gpu_source, "recipe") == 0)
        rep->gpu_star = 1;
    if (!np_run_status_good(r->status) && r->why)
        report_spill_printf(&rep->why, "%s: %s: %s\n", np_run_status_name(r->status), r->path, r->why);
    report_streak_add(&rep->note_k, &rep->notes, "note", r, r->note);
    if (rep->o->reference)
        report_streak_add(&rep->ref_k, &rep->refs, "reference not compared", r,
                          r->verdict == NP_VERDICT_NOT_COMPARED ? r->ref_why : NULL);
    enum np_status sst = report_spill_status(&rep->why);
    if (sst == NP_OK)
        sst = report_spill_status(&rep->notes);
    if (sst == NP_OK)
        sst = report_spill_status(&rep->refs);
    return sst;
}

/* One row out: held until the widths are fixed (the first NP_REPORT_TABLE_ROWS rows), then written. */
static enum np_status report_table_row(struct np_report *rep, const struct report_row *row)
{
    if (rep->widths_fixed) {
        report_table_line(rep->out, row, rep->width, rep->ncol);
        return NP_OK;
    }
    if (!rep->rows && !(rep->rows = malloc(NP_REPORT_TABLE_ROWS * sizeof *rep->rows)))
        return NP_E_NOMEM;
    if (strlen(row->exp) > rep->width[0])
        rep->width[0] = strlen(row->exp);
    for (size_t c = 1; c < rep->ncol; c++)
        if (strlen(row->cell[c]) > rep->width[c])
            rep->width[c] = strlen(row->cell[c]);
    rep->rows[rep->nrows++] = *row;
    if (rep->nrows == NP_REPORT_TABLE_ROWS)
        report_table_fix(rep);
    return NP_OK;
}

/* Run r's row, and its share of the footer. */
static enum np_status report_table_prepare(struct np_report *rep, const struct np_run *r, struct report_row *row)
{
    report_table_cells(r, rep->o, row->cell);
    snprintf(row->exp, sizeof row->exp, "%s", r->id.experiment);
    return report_table_account(rep, r);
}

static enum np_status report_table_stream(struct np_report *rep, const struct np_run *r)
{
    if (np_fabric_is(r)) { /* its own table (report/fabric.c), after this one; the footer's share here */
        if (!rep->fabric && !(rep->fabric = np_fabric_rows_new()))
            return NP_E_NOMEM;
        if ((!rep->checks && !(rep->checks = np_fabric_checks_new())) || np_fabric_checks_add(rep->checks, r) != NP_OK)
            return NP_E_NOMEM; /* and the slow node or link by name below it (parse/fabric_check.h) */
        enum np_status fst = report_table_account(rep, r);
        return fst != NP_OK ? fst : np_fabric_rows_add(rep->fabric, r);
    }
    rep->ntrain++;
    struct report_row row;
    enum np_status st = report_table_prepare(rep, r, &row);
    return st != NP_OK ? st : report_table_row(rep, &row);
}

/* A table row rendered ahead (np_report_render): its cells, each ended by a NUL, the efficiency's empty;
 * eff_at is where that one is.  The footer's share of the run is taken at once (runs are rendered in order). */
static enum np_status report_table_render(struct np_report *rep, const struct np_run *r, struct np_report_text *t)
{
    if (np_fabric_is(r))
        return NP_E_INVALID; /* the fabric table's: np_report_run takes it */
    rep->ntrain++;
    struct report_row row;
    enum np_status st = report_table_prepare(rep, r, &row);
    if (st != NP_OK)
        return st;
    size_t need = sizeof row;
    if (rep->jcap < need) {
        char *nb = realloc(rep->jbuf, need);
        if (!nb)
            return NP_E_NOMEM;
        rep->jbuf = nb;
        rep->jcap = need;
    }
    size_t len = 0;
    for (size_t c = 0; c < rep->ncol; c++) {
        const char *cell = c == 0 ? row.exp : c == REPORT_EFF ? "" : row.cell[c];
        size_t n = strlen(cell) + 1;
        if (c == REPORT_EFF)
            t->eff_at = len;
        memcpy(rep->jbuf + len, cell, n);
        len += n;
    }
    t->text = rep->jbuf;
    t->len = len;
    return NP_OK;
}

/* A row of report_table_render back, with the efficiency eff in its cell. */
static enum np_status report_table_put(struct np_report *rep, const char *text, size_t len, size_t eff_at, double eff)
{
    struct report_row row;
    size_t at = 0;
    for (size_t c = 0; c < rep->ncol; c++) {
        const char *nul = at < len ? memchr(text + at, '\0', len - at) : NULL;
        size_t n = nul ? (size_t)(nul - (text + at)) : 0;
        char *cell = c == 0 ? row.exp : row.cell[c];
        size_t cap = c == 0 ? sizeof row.exp : REPORT_CELL;
        if (!nul || n >= cap || (c == REPORT_EFF && (at != eff_at || n != 0)))
            return NP_E_INVALID;
        memcpy(cell, text + at, n + 1);
        at += n + 1;
    }
    if (at != len)
        return NP_E_INVALID;
    report_num(row.cell[REPORT_EFF], REPORT_CELL, 1, eff * 100.0);
    return report_table_row(rep, &row);
}

/* The run object is dumped inside a {"runs":[...]} of its own, so that Jansson indents it as deep
 * as the envelope holds it, and cut out of that text. */
#define REPORT_JSON_HEAD "{\n  \"runs\": [\n    "
#define REPORT_JSON_TAIL "\n  ]\n}"

/* A JSON text under construction (report_jw_*, report_jd_*): what json_dumpb(JSON_INDENT(2) |
 * JSON_REAL_PRECISION(10)) writes, byte for byte (jansson 2.14 src/dump.c do_dump, dump_string; src/strconv.c
 * jsonp_dtostr), without its per-value callbacks and printf.  Strings reach it as UTF-8 (ASCII, or checked by
 * json_string: report_jd_text).  fail = 1: out of memory or a number report_g10 cannot write. */
struct report_jw {
    char *buf;
    size_t len, cap;
    int fail;
    const char *mark_key; /* NULL, or a key whose first value's offset goes to mark */
    size_t mark;
};

static void report_jw_put(struct report_jw *w, const char *s, size_t n)
{
    if (w->fail)
        return;
    if (w->cap - w->len < n) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap - w->len < n)
            cap *= 2;
        char *nb = realloc(w->buf, cap);
        if (!nb) {
            w->fail = 1;
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void report_jw_indent(struct report_jw *w, int depth)
{
    static const char sp[] = "\n                                ";
    size_t n = 1 + 2 * (size_t)depth;
    if (n > sizeof sp - 1) {
        w->fail = 1;
        return;
    }
    report_jw_put(w, sp, n);
}

static void report_jw_string(struct report_jw *w, const char *s, size_t n)
{
    size_t from = 0;
    report_jw_put(w, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        report_jw_put(w, s + from, i - from);
        char esc[8];
        const char *t = esc;
        size_t tl = 2;
        switch (c) {
        case '\\': t = "\\\\"; break;
        case '"': t = "\\\""; break;
        case '\b': t = "\\b"; break;
        case '\f': t = "\\f"; break;
        case '\n': t = "\\n"; break;
        case '\r': t = "\\r"; break;
        case '\t': t = "\\t"; break;
        default: tl = (size_t)snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c); break;
        }
        report_jw_put(w, t, tl);
        from = i + 1;
    }
    report_jw_put(w, s + from, n - from);
    report_jw_put(w, "\"", 1);
}

/* jsonp_dtostr(precision 10): "%.10g", ".0" when neither '.' nor 'e', exponent without '+' and leading zeros. */
static void report_jw_real(struct report_jw *w, double v)
{
    char b[40];
    int n = report_g10(b, sizeof b, v);
    if (n <= 0 || (size_t)n + 3 >= sizeof b) {
        w->fail = 1;
        return;
    }
    size_t len = (size_t)n;
    char *e = memchr(b, 'e', len);
    if (!e && !memchr(b, '.', len)) {
        memcpy(b + len, ".0", 3);
        len += 2;
    }
    if (e) {
        char *start = e + 1, *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - b) + 1);
            len -= (size_t)(end - start);
        }
    }
    report_jw_put(w, b, len);
}

/* ---- the run object written straight from the run: json_dumpb's text of report_json_run's tree ----
 * Building the tree (a hashed object, a value a key) and walking it was four fifths of the cost of a JSON run
 * (callgrind, shape (b): 95,000 instructions a run); check_report test_json_direct_is_the_tree compares this
 * writer with Jansson's dump of report_json_run, byte for byte, on random runs. */

/* A member's key at depth: ",", the indent, the key (quoted: "\"key\": ", a literal: the keys need no escape),
 * ": "; the mark goes after the first mark_key's ": ". */
static void report_jd_key(struct report_jw *w, int depth, int *n, const char *quoted, size_t ql, const char *key)
{
    static const char sp[] = ",\n                                ";
    size_t ind = 3 + 2 * (size_t)depth; /* "\n" and the indent of depth + 1 */
    if (ind + 1 > sizeof sp - 1) {
        w->fail = 1;
        return;
    }
    if ((*n)++)
        report_jw_put(w, sp, ind + 1);
    else
        report_jw_put(w, sp + 1, ind);
    report_jw_put(w, quoted, ql);
    if (w->mark_key && key[0] == w->mark_key[0] && strcmp(key, w->mark_key) == 0) {
        w->mark = w->len;
        w->mark_key = NULL;
    }
}
#define REPORT_JD_KEY(w, d, n, k) report_jd_key(w, d, n, "\"" k "\": ", sizeof k + 3, k)

static void report_jd_close(struct report_jw *w, int depth, int n)
{
    if (n)
        report_jw_indent(w, depth);
    report_jw_put(w, "}", 1);
}

static void report_jd_num(struct report_jw *w, double v) /* report_jnum */
{
    if (isnan(v) || isinf(v))
        report_jw_put(w, "null", 4);
    else
        report_jw_real(w, v);
}

static void report_jd_int(struct report_jw *w, long long v, int known) /* report_jint */
{
    char b[24];
    if (known)
        report_jw_put(w, b, (size_t)report_lld(b, v));
    else
        report_jw_put(w, "null", 4);
}

static void report_jd_bool(struct report_jw *w, int v)
{
    report_jw_put(w, v ? "true" : "false", v ? 4 : 5);
}

/* report_jtext: ASCII as it is; anything else through Jansson's own check (report_jtext), as the tree has it. */
static void report_jd_text(struct report_jw *w, const char *s)
{
    size_t n = 0;
    while (s[n] && (unsigned char)s[n] < 0x80)
        n++;
    if (!s[n]) {
        report_jw_string(w, s, n);
        return;
    }
    json_t *j = report_jtext(s);
    if (!j) {
        w->fail = 1;
        return;
    }
    report_jw_string(w, json_string_value(j), json_string_length(j));
    json_decref(j);
}

static void report_jd_str(struct report_jw *w, const char *s) /* report_jstr */
{
    if (s && *s)
        report_jd_text(w, s);
    else
        report_jw_put(w, "null", 4);
}

/* A member: its key, then its value as report_jd_<kind> writes it. */
#define REPORT_JD_NUM(w, d, n, k, v) (REPORT_JD_KEY(w, d, n, k), report_jd_num(w, v))
#define REPORT_JD_STR(w, d, n, k, v) (REPORT_JD_KEY(w, d, n, k), report_jd_str(w, v))
#define REPORT_JD_TEXT(w, d, n, k, v) (REPORT_JD_KEY(w, d, n, k), report_jd_text(w, v))
#define REPORT_JD_INT(w, d, n, k, v, known) (REPORT_JD_KEY(w, d, n, k), report_jd_int(w, v, known))
#define REPORT_JD_BOOL(w, d, n, k, v) (REPORT_JD_KEY(w, d, n, k), report_jd_bool(w, v))

static void report_jd_metrics(struct report_jw *w, int depth, const struct np_metrics *m) /* report_jmetrics */
{
    int n = 0;
    report_jw_put(w, "{", 1);
    REPORT_JD_NUM(w, depth, &n, "tokens_per_s", m->tokens_per_s);
    REPORT_JD_NUM(w, depth, &n, "tokens_per_s_per_gpu", m->tokens_per_s_per_gpu);
    REPORT_JD_NUM(w, depth, &n, "model_tflops_per_gpu", m->model_tflops_per_gpu);
    REPORT_JD_NUM(w, depth, &n, "mfu_percent", m->mfu_percent);
    REPORT_JD_NUM(w, depth, &n, "days_to_train", m->days_to_train);
    report_jd_close(w, depth, n);
}

/* The system snapshot's JSON text (compact, from parse/runsys.c) as Jansson dumps it at depth: loaded, dumped
 * alone and indented by depth (a dump's newlines are only between members: strings escape theirs); null when
 * there is none or it does not load (as report_json_run's tree has it). */
static void report_jd_system(struct report_jw *w, int depth, const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    char *d = v ? json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(v);
    if (!d) {
        if (v)
            w->fail = 1; /* out of memory */
        report_jw_put(w, "null", 4);
        return;
    }
    for (const char *p = d, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl) {
            report_jw_put(w, p, strlen(p));
            break;
        }
        report_jw_put(w, p, (size_t)(nl - p));
        const char *q = nl + 1;
        size_t sp = strspn(q, " ");
        report_jw_indent(w, depth + (int)(sp / 2));
        nl = q + sp - 1;
    }
    json_malloc_t jm;
    json_free_t jf;
    json_get_alloc_funcs(&jm, &jf); /* Jansson's allocator (the report's arena while a run is written) */
    jf(d);
}

/* What json_dumpb(JSON_INDENT(2) | JSON_REAL_PRECISION(10)) writes of report_json_run(r, o) held at depth,
 * member for member in its order. */
static void report_json_direct(struct report_jw *w, const struct np_run *r, const struct np_parse_opts *o, int depth)
{
    int n = 0, d = depth + 1;
    report_jw_put(w, "{", 1);
    REPORT_JD_TEXT(w, depth, &n, "path", r->path);
    REPORT_JD_STR(w, depth, &n, "experiment", r->id.experiment);
    REPORT_JD_STR(w, depth, &n, "recipe", r->id.recipe);
    REPORT_JD_STR(w, depth, &n, "model_size", r->id.model_size);
    REPORT_JD_STR(w, depth, &n, "dtype", np_identity_precision(&r->id));
    REPORT_JD_INT(w, depth, &n, "gpus", r->id.gpus, r->id.gpus > 0);
    REPORT_JD_STR(w, depth, &n, "gpu_type", r->id.gpu_type);
    REPORT_JD_STR(w, depth, &n, "gpu_type_source", r->gpu_source);
    REPORT_JD_STR(w, depth, &n, "system", r->id.system);
    REPORT_JD_STR(w, depth, &n, "workload", r->id.synthetic ? "synthetic" : NULL);
    REPORT_JD_STR(w, depth, &n, "kind", np_run_kind_name(r->id.kind));
    REPORT_JD_STR(w, depth, &n, "family", r->id.family);
    REPORT_JD_STR(w, depth, &n, "container", r->id.container);
    REPORT_JD_STR(w, depth, &n, "config_variant", r->id.config_variant);
    REPORT_JD_STR(w, depth, &n, "job_id", r->job_id);
    REPORT_JD_STR(w, depth, &n, "start_time", r->launch.submit_time);
    REPORT_JD_INT(w, depth, &n, "seq_len", r->id.seq_len, r->id.seq_len > 0);
    REPORT_JD_INT(w, depth, &n, "global_batch_size", r->id.gbs, r->id.gbs > 0);
    REPORT_JD_STR(w, depth, &n, "identified_by", r->id_source);
    REPORT_JD_STR(w, depth, &n, "log_format", r->steps_seen ? np_log_gen_name(r->gen) : NULL);
    REPORT_JD_INT(w, depth, &n, "attempts", (long long)r->attempts, 1);
    REPORT_JD_INT(w, depth, &n, "step", r->step, r->step >= 0);
    REPORT_JD_INT(w, depth, &n, "final_step", r->total, r->total >= 0);
    REPORT_JD_INT(w, depth, &n, "steps_seen", (long long)r->steps_seen, 1);
    REPORT_JD_KEY(w, depth, &n, "complete");
    if (r->complete < 0)
        report_jw_put(w, "null", 4);
    else
        report_jd_bool(w, r->complete);
    REPORT_JD_NUM(w, depth, &n, "last_step_time_s", r->step_time_s);
    REPORT_JD_KEY(w, depth, &n, "window");
    {
        int m = 0;
        report_jw_put(w, "{", 1);
        REPORT_JD_INT(w, d, &m, "first", r->window.first, r->window.first >= 0);
        REPORT_JD_INT(w, d, &m, "last", r->window.last, r->window.last >= 0);
        REPORT_JD_INT(w, d, &m, "count", (long long)r->window.count, 1);
        REPORT_JD_INT(w, d, &m, "requested", (long long)r->window.requested, 1);
        REPORT_JD_STR(w, d, &m, "rule", r->window.rule);
        REPORT_JD_NUM(w, d, &m, "mean_s", r->window.mean_s);
        REPORT_JD_NUM(w, d, &m, "median_s", r->window.median_s);
        REPORT_JD_NUM(w, d, &m, "stdev_s", r->window.stdev_s);
        REPORT_JD_NUM(w, d, &m, "min_s", r->window.min_s);
        REPORT_JD_NUM(w, d, &m, "max_s", r->window.max_s);
        report_jd_close(w, d, m);
    }
    REPORT_JD_NUM(w, depth, &n, "last_tokens_per_s", r->m.tokens_per_s);
    REPORT_JD_NUM(w, depth, &n, "last_tokens_per_s_per_gpu", r->m.tokens_per_s_per_gpu);
    REPORT_JD_NUM(w, depth, &n, "model_flops_per_sample", r->flops_per_sample);
    REPORT_JD_NUM(w, depth, &n, "last_model_tflops_per_gpu", r->m.model_tflops_per_gpu);
    REPORT_JD_NUM(w, depth, &n, "logged_tflops_per_gpu", r->logged_tflops_per_gpu);
    REPORT_JD_STR(w, depth, &n, "logged_tflops_basis",
                  isnan(r->logged_tflops_per_gpu) ? NULL : r->logged_steady ? "steady" : "last");
    REPORT_JD_NUM(w, depth, &n, "last_mfu_percent", r->m.mfu_percent);
    REPORT_JD_NUM(w, depth, &n, "train_tokens", r->train_tokens);
    REPORT_JD_NUM(w, depth, &n, "last_days_to_train", r->m.days_to_train);
    REPORT_JD_KEY(w, depth, &n, "steady");
    report_jd_metrics(w, d, &r->steady);
    REPORT_JD_NUM(w, depth, &n, "scaling_efficiency", r->scaling_eff);
    REPORT_JD_KEY(w, depth, &n, "energy");
    if (!r->energy.steps)
        report_jw_put(w, "null", 4);
    else {
        int m = 0;
        report_jw_put(w, "{", 1);
        REPORT_JD_NUM(w, d, &m, "w_per_gpu", r->energy.w_per_gpu);
        REPORT_JD_NUM(w, d, &m, "j_per_gpu_iter", r->energy.j_per_gpu_iter);
        REPORT_JD_NUM(w, d, &m, "j_per_token", r->energy.j_per_token);
        REPORT_JD_NUM(w, d, &m, "tokens_per_kwh", r->energy.tokens_per_kwh);
        REPORT_JD_NUM(w, d, &m, "mwh_to_train", r->energy.mwh_to_train);
        REPORT_JD_INT(w, d, &m, "steps", (long long)r->energy.steps, 1);
        REPORT_JD_STR(w, d, &m, "source", r->energy.source);
        report_jd_close(w, d, m);
    }
    REPORT_JD_KEY(w, depth, &n, "nccl_tests");
    if (np_fabric_is(r))
        w->fail = 1; /* a fabric check step: Jansson's dump (report_json_run), its object is report/fabric.c's */
    else
        report_jw_put(w, "null", 4);
    REPORT_JD_KEY(w, depth, &n, "system_snapshot");
    report_jd_system(w, d, r->system);
    if (report_exact_count(r->peak_memory_bytes))
        REPORT_JD_INT(w, depth, &n, "peak_memory_bytes", (long long)r->peak_memory_bytes, 1);
    else
        REPORT_JD_NUM(w, depth, &n, "peak_memory_bytes", r->peak_memory_bytes);
    REPORT_JD_NUM(w, depth, &n, "loss", r->loss);
    REPORT_JD_BOOL(w, depth, &n, "checkpoint_saved", r->checkpoint_saved);
    REPORT_JD_BOOL(w, depth, &n, "checkpoint_loaded", r->checkpoint_loaded);
    REPORT_JD_TEXT(w, depth, &n, "status", np_run_status_name(r->status));
    REPORT_JD_STR(w, depth, &n, "reason", r->why);
    REPORT_JD_STR(w, depth, &n, "note", r->note);
    if (o->reference) {
        int m = 0;
        REPORT_JD_KEY(w, depth, &n, "reference");
        report_jw_put(w, "{", 1);
        if (r->ref) {
            REPORT_JD_STR(w, d, &m, "source", r->ref->source);
            REPORT_JD_NUM(w, d, &m, "step_time_s", r->ref->step_time_s);
            REPORT_JD_NUM(w, d, &m, "tokens_per_s", r->ref->tokens_per_s);
            REPORT_JD_NUM(w, d, &m, "tokens_per_s_per_gpu", r->ref->tokens_per_s_per_gpu);
            REPORT_JD_NUM(w, d, &m, "mfu_percent", r->ref->mfu_percent);
            REPORT_JD_NUM(w, d, &m, "days_1t", r->ref->days_1t);
            REPORT_JD_NUM(w, d, &m, "model_tflops_per_gpu", r->ref->model_tflops_per_gpu);
        }
        REPORT_JD_TEXT(w, d, &m, "basis", o->verdict_last ? "last" : "steady");
        REPORT_JD_NUM(w, d, &m, "ratio", r->ref_ratio);
        if (isfinite(o->tolerance_pct)) /* json_real refuses NaN and infinity: the tree has no such member */
            REPORT_JD_NUM(w, d, &m, "tolerance_percent", np_run_tolerance(r, o));
        int compared = r->verdict != NP_VERDICT_NOT_COMPARED;
        REPORT_JD_STR(w, d, &m, "result", compared ? np_verdict_name(r->verdict) : NULL);
        REPORT_JD_STR(w, d, &m, "reason", compared ? NULL : r->ref_why);
        report_jd_close(w, d, m);
    }
    report_jd_close(w, depth, n);
}

/* The run's JSON object as the envelope holds it, into rep->jbuf (*text, *len); with mark_key, where
 * that key's value starts (*mark).  0: out of memory (or a number the writer cannot write). */
static int report_json_text(struct np_report *rep, const struct np_run *r, const char *mark_key, const char **text,
                            size_t *len, size_t *mark)
{
    if (!rep->arena.buf && !(rep->arena.buf = malloc(REPORT_ARENA)))
        return 0;
    rep->arena.used = 0;
    report_arena_cur = &rep->arena; /* for report_jd_text's rare Jansson strings */
    struct report_jw w = {rep->jbuf, 0, rep->jcap, 0, mark_key, SIZE_MAX};
    report_json_direct(&w, r, rep->o, 2); /* the depth the envelope holds a run at */
    report_arena_cur = NULL;
    rep->jbuf = w.buf;
    rep->jcap = w.cap;
    *text = w.buf;
    *len = w.len;
    *mark = w.mark;
    return !w.fail && (!mark_key || w.mark != SIZE_MAX);
}

static enum np_status report_json_stream(struct np_report *rep, const struct np_run *r)
{
    const char *text;
    size_t len, mark;
    if (!report_json_text(rep, r, NULL, &text, &len, &mark)) {
        /* the writer failed: Jansson's own dump, cut out of an envelope of its own */
        if (!rep->arena.buf)
            return NP_E_NOMEM;
        json_t *j = report_json_run(r, rep->o);
        json_t *wrap = j ? json_pack("{s:[o]}", "runs", j) : NULL;
        size_t need = wrap ? json_dumpb(wrap, NULL, 0, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : 0;
        char *d = need ? malloc(need) : NULL;
        if (d)
            need = json_dumpb(wrap, d, need, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        json_decref(wrap);
        const size_t hl = sizeof REPORT_JSON_HEAD - 1, tl = sizeof REPORT_JSON_TAIL - 1;
        if (!d || need < hl + tl || memcmp(d, REPORT_JSON_HEAD, hl) != 0 ||
            memcmp(d + need - tl, REPORT_JSON_TAIL, tl) != 0) {
            free(d);
            return NP_E_NOMEM; /* json_dumpb failed: memory */
        }
        fputs(rep->nruns ? ",\n    " : REPORT_JSON_HEAD, rep->out);
        len = need - hl - tl;
        enum np_status st = fwrite(d + hl, 1, len, rep->out) == len ? NP_OK : NP_E_IO;
        free(d);
        return st;
    }
    fputs(rep->nruns ? ",\n    " : REPORT_JSON_HEAD, rep->out);
    return fwrite(text, 1, len, rep->out) == len ? NP_OK : NP_E_IO;
}

enum np_status np_report_run(struct np_report *rep, const struct np_run *run)
{
    if (rep->status != NP_OK)
        return rep->status;
    enum np_status st = NP_OK;
    flockfile(rep->out); /* one lock per run, not per character */
    if (!rep->other_tol)
        rep->other_tol = report_other_tolerance(run, rep->o);
    switch (rep->fmt) {
    case NP_FMT_CSV:
        if (rep->nruns == 0)
            report_csv_head(rep->out, rep->o);
        report_csv_run(rep->out, run, rep->o, NULL);
        break;
    case NP_FMT_JSON: st = report_json_stream(rep, run); break;
    case NP_FMT_MARKDOWN: st = report_md_add(&rep->md, run); break;
    default: st = report_table_stream(rep, run); break;
    }
    funlockfile(rep->out);
    rep->nruns++;
    if (st == NP_OK && ferror(rep->out))
        st = NP_E_IO;
    return rep->status = st;
}

enum np_status np_report_error(struct np_report *rep, const char *msg)
{
    if (rep->fmt != NP_FMT_JSON || rep->status != NP_OK)
        return rep->status;
    json_t *s = report_jtext(msg);
    char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    if (!text)
        return rep->status = NP_E_NOMEM;
    report_spill_add(&rep->why, rep->nerrors ? ",\n    " : "\n    ", rep->nerrors ? 6 : 5);
    report_spill_add(&rep->why, text, strlen(text));
    free(text);
    rep->nerrors++;
    return rep->why.failed ? (rep->status = NP_E_NOMEM) : NP_OK;
}

void np_report_json_member(struct np_report *rep, const char *key, const char *value)
{
    rep->member_key = key;
    rep->member_value = value;
}

enum np_status np_report_finish(struct np_report *rep)
{
    enum np_status st = rep->status;
    FILE *out = rep->out;
    if (st == NP_OK) {
        switch (rep->fmt) {
        case NP_FMT_CSV:
            if (rep->nruns == 0)
                report_csv_head(out, rep->o);
            break;
        case NP_FMT_JSON:
            fputs(rep->nruns ? "\n  ],\n  \"errors\": [" : "{\n  \"runs\": [],\n  \"errors\": [", out);
            st = report_spill_write(&rep->why, out);
            fputs(rep->nerrors ? "\n  ]" : "]", out);
            if (rep->member_key)
                fprintf(out, ",\n  \"%s\": %s", rep->member_key, rep->member_value);
            fprintf(out, ",\n  \"schema_version\": %d\n}\n", NP_REPORT_SCHEMA);
            break;
        case NP_FMT_MARKDOWN: st = report_md_write(&rep->md, out, rep->o); break;
        default:
            if (rep->ntrain || !np_fabric_rows_count(rep->fabric))
                report_table_fix(rep);
            np_fabric_rows_table(out, rep->fabric, rep->ntrain > 0);
            if (rep->checks)
                report_fabric_checks(out, rep->checks, 0);
            report_streak_end(&rep->note_k, &rep->notes, "note");
            report_streak_end(&rep->ref_k, &rep->refs, "reference not compared");
            if (rep->gpu_star)
                fputs("*: GPU type not recorded (no manifest, no --gpu): the only one the recipe is published for\n",
                      out);
            st = report_spill_write(&rep->why, out);
            if (st == NP_OK)
                st = report_spill_write(&rep->notes, out);
            if (st == NP_OK)
                st = report_spill_write(&rep->refs, out);
            if (st == NP_OK && rep->o->reference)
                report_ref_footer(out, rep->o, rep->other_tol);
            break;
        }
    }
    if (st == NP_OK && (fflush(out) != 0 || ferror(out)))
        st = NP_E_IO;
    if (st != NP_OK)
        rep->status = st;
    return st;
}

/* ---- rows rendered ahead, on the walk's emitting thread ---- */

int np_report_renders(const struct np_report *rep)
{
    return rep && (rep->fmt == NP_FMT_CSV || rep->fmt == NP_FMT_JSON || rep->fmt == NP_FMT_TABLE);
}

enum np_status np_report_render(struct np_report *rep, const struct np_run *run, struct np_report_text *t)
{
    struct np_run r = *run;
    r.scaling_eff = NAN; /* its slot: "" in CSV, null in JSON */
    t->text = NULL;
    t->len = t->eff_at = 0;
    if (rep->fmt == NP_FMT_JSON) {
        const char *text;
        size_t len, mark;
        if (!report_json_text(rep, &r, "scaling_efficiency", &text, &len, &mark))
            return rep->arena.buf ? NP_E_INVALID : NP_E_NOMEM;
        t->text = text;
        t->len = len;
        t->eff_at = mark;
        return NP_OK;
    }
    if (rep->fmt == NP_FMT_TABLE)
        return report_table_render(rep, run, t);
    if (rep->fmt != NP_FMT_CSV)
        return NP_E_INVALID;
    if (!rep->ms) {
        if (!(rep->ms = open_memstream(&rep->ms_buf, &rep->ms_size)))
            return NP_E_NOMEM;
        __fsetlocking(rep->ms, FSETLOCKING_BYCALLER); /* one caller at a time: no lock per fputc */
    }
    off_t at = -1;
    if (fseeko(rep->ms, 0, SEEK_SET) != 0)
        return NP_E_NOMEM;
    report_csv_run(rep->ms, &r, rep->o, &at);
    off_t len = ftello(rep->ms);
    if (fflush(rep->ms) != 0 || ferror(rep->ms) || len < 0 || at < 0 || at >= len)
        return NP_E_NOMEM;
    t->text = rep->ms_buf;
    t->len = (size_t)len;
    t->eff_at = (size_t)at;
    return NP_OK;
}

/* A CSV or JSON row of np_report_render out, its efficiency in the slot (output locked by the caller). */
static enum np_status report_slot_put(struct np_report *rep, const char *text, size_t len, size_t eff_at, double eff)
{
    /* the slot holds what NaN gave: JSON "null", CSV the field's comma */
    size_t slot = rep->fmt == NP_FMT_JSON ? 4 : 1;
    if (eff_at > len || len - eff_at < slot || (rep->fmt != NP_FMT_JSON && rep->fmt != NP_FMT_CSV))
        return NP_E_INVALID;
    FILE *out = rep->out;
    if (rep->fmt == NP_FMT_CSV) {
        if (rep->nruns == 0)
            report_csv_head(out, rep->o);
        fwrite(text, 1, eff_at, out);
        report_csv_num(out, eff, 0);
    } else {
        fputs(rep->nruns ? ",\n    " : REPORT_JSON_HEAD, out);
        fwrite(text, 1, eff_at, out);
        if (isnan(eff) || isinf(eff)) {
            fputs("null", out);
        } else {
            /* in the renderer's buffer (rows are rendered during the walk, put after it), unless text is in it */
            int own = rep->jbuf && text >= rep->jbuf && text < rep->jbuf + rep->jcap;
            struct report_jw w = {own ? NULL : rep->jbuf, 0, own ? 0 : rep->jcap, 0, NULL, 0};
            report_jw_real(&w, eff);
            if (w.fail)
                fputs("null", out);
            else
                fwrite(w.buf, 1, w.len, out);
            if (own) {
                free(w.buf);
            } else {
                rep->jbuf = w.buf;
                rep->jcap = w.cap;
            }
        }
    }
    fwrite(text + eff_at + slot, 1, len - eff_at - slot, out);
    return NP_OK;
}

enum np_status np_report_put(struct np_report *rep, const char *text, size_t len, size_t eff_at, double eff)
{
    if (rep->status != NP_OK)
        return rep->status;
    flockfile(rep->out);
    enum np_status st = rep->fmt == NP_FMT_TABLE ? report_table_put(rep, text, len, eff_at, eff)
                                                 : report_slot_put(rep, text, len, eff_at, eff);
    funlockfile(rep->out);
    if (st != NP_E_INVALID) /* a row refused before anything was written is not counted */
        rep->nruns++;
    if (st == NP_OK && ferror(rep->out))
        st = NP_E_IO;
    return rep->status = st;
}

void np_report_free(struct np_report *rep)
{
    if (!rep)
        return;
    if (rep->ms)
        fclose(rep->ms);
    free(rep->ms_buf);
    free(rep->rows);
    free(rep->jbuf);
    free(rep->arena.buf);
    np_fabric_rows_free(rep->fabric);
    np_fabric_checks_free(rep->checks);
    report_streak_end(&rep->note_k, &rep->notes, "note"); /* frees; text already written or dropped */
    report_streak_end(&rep->ref_k, &rep->refs, "reference not compared");
    report_spill_free(&rep->why);
    report_spill_free(&rep->notes);
    report_spill_free(&rep->refs);
    report_md_free(&rep->md);
    free(rep);
}

int np_report_tmp_errno(const struct np_report *rep)
{
    if (!rep)
        return 0;
    const struct report_spill *s[] = {&rep->md.list, &rep->why, &rep->notes, &rep->refs};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        if (s[i]->failed && s[i]->err)
            return s[i]->err;
    return 0;
}
