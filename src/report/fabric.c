/* fabric.c - the fabric check's steps as a table, a markdown section, CSV fields and a JSON member.
 *
 * A RECIPE=nccl-tests run is one run per step (parse/family_nccltests.c); its figures are not a training run's
 * (no steps, tokens or MFU), so the text and markdown reports show them in a table of their own after the
 * training table: the step, where it ran, the peak bus bandwidth, the expected one, the verdict and why.
 */
#include "nemoperf/report/fabric.h"

#include "nemoperf/parse/nccltests.h"
#include "nemoperf/util/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct fabric_row {
    char exp[160], job[32], step[48], scope[8], hosts[64], gpu[16], status[16];
    int gpus;
    double busbw, expected;
    char verdict[8], why[200];
};

struct np_fabric_rows {
    struct fabric_row *v;
    size_t n, cap;
};

struct np_fabric_rows *np_fabric_rows_new(void)
{
    return calloc(1, sizeof(struct np_fabric_rows));
}

void np_fabric_rows_free(struct np_fabric_rows *f)
{
    if (!f)
        return;
    free(f->v);
    free(f);
}

int np_fabric_is(const struct np_run *r)
{
    return r->id.kind == NP_KIND_NCCLTESTS;
}

size_t np_fabric_rows_count(const struct np_fabric_rows *f)
{
    return f ? f->n : 0;
}

/* the reason shown: the verdict's, else why the run is not ok */
static const char *fabric_why(const struct np_run *r)
{
    if (r->nccl.why[0])
        return r->nccl.why;
    return r->why ? r->why : "";
}

enum np_status np_fabric_rows_add(struct np_fabric_rows *f, const struct np_run *r)
{
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 16;
        struct fabric_row *nv = realloc(f->v, nc * sizeof *nv);
        if (!nv)
            return NP_E_NOMEM;
        f->v = nv;
        f->cap = nc;
    }
    struct fabric_row *w = &f->v[f->n++];
    memset(w, 0, sizeof *w);
    snprintf(w->exp, sizeof w->exp, "%s", r->id.experiment);
    snprintf(w->job, sizeof w->job, "%s", r->job_id[0] ? r->job_id : "-");
    snprintf(w->step, sizeof w->step, "%s", r->nccl.step[0] ? r->nccl.step : "-");
    snprintf(w->scope, sizeof w->scope, "%s", r->nccl.scope[0] ? r->nccl.scope : "-");
    snprintf(w->hosts, sizeof w->hosts, "%s", r->nccl.hosts[0] ? r->nccl.hosts : "-");
    snprintf(w->gpu, sizeof w->gpu, "%s", r->id.gpu_type[0] ? r->id.gpu_type : "?");
    snprintf(w->status, sizeof w->status, "%s", np_run_status_name(r->status));
    w->gpus = r->id.gpus;
    w->busbw = r->nccl.peak_busbw;
    w->expected = r->nccl.expected_gbs;
    snprintf(w->verdict, sizeof w->verdict, "%s", np_nccl_verdict_name((enum np_nccl_verdict)r->nccl.verdict));
    snprintf(w->why, sizeof w->why, "%s", fabric_why(r));
    return NP_OK;
}

#define FABRIC_NCOL 11
static const char *const fabric_head[FABRIC_NCOL] = {"EXPERIMENT", "JOB",         "STEP",     "SCOPE",
                                                     "HOSTS",      "GPUS",        "GPU",      "PEAK_BUSBW",
                                                     "EXPECTED",   "VERDICT",     "WHY"};

static void fabric_cells(const struct fabric_row *w, char (*c)[200])
{
    snprintf(c[0], 200, "%s", w->exp);
    snprintf(c[1], 200, "%s", w->job);
    snprintf(c[2], 200, "%s", w->step);
    snprintf(c[3], 200, "%s", w->scope);
    snprintf(c[4], 200, "%s", w->hosts);
    if (w->gpus > 0)
        snprintf(c[5], 200, "%d", w->gpus);
    else
        snprintf(c[5], 200, "-");
    snprintf(c[6], 200, "%s", w->gpu);
    if (isnan(w->busbw))
        snprintf(c[7], 200, "-");
    else
        snprintf(c[7], 200, "%.2f", w->busbw);
    if (isnan(w->expected))
        snprintf(c[8], 200, "-");
    else
        snprintf(c[8], 200, "%.2f", w->expected);
    snprintf(c[9], 200, "%s", strcmp(w->verdict, "-") == 0 && strcmp(w->status, "ok") != 0 ? w->status : w->verdict);
    snprintf(c[10], 200, "%s", w->why);
}

void np_fabric_rows_table(FILE *out, const struct np_fabric_rows *f, int after)
{
    if (!f || !f->n)
        return;
    size_t width[FABRIC_NCOL];
    for (int c = 0; c < FABRIC_NCOL; c++)
        width[c] = strlen(fabric_head[c]);
    char cells[FABRIC_NCOL][200];
    for (size_t i = 0; i < f->n; i++) {
        fabric_cells(&f->v[i], cells);
        for (int c = 0; c < FABRIC_NCOL; c++)
            if (strlen(cells[c]) > width[c])
                width[c] = strlen(cells[c]);
    }
    if (after)
        fputc('\n', out);
    fputs("Fabric check (nccl-tests): per step the peak bus bandwidth (GB/s, the best of the 3 largest sizes), the "
          "expected one (PASS at 90 %)\n",
          out);
    for (size_t i = 0; i <= f->n; i++) {
        if (i)
            fabric_cells(&f->v[i - 1], cells);
        for (int c = 0; c < FABRIC_NCOL; c++) {
            const char *t = i ? cells[c] : fabric_head[c];
            int right = c == 5 || c == 7 || c == 8;
            size_t pad = width[c] - strlen(t);
            if (c)
                fputs("  ", out);
            if (right)
                fprintf(out, "%*s", (int)pad, "");
            fputs(t, out);
            if (!right && c + 1 < FABRIC_NCOL)
                fprintf(out, "%*s", (int)pad, "");
        }
        fputc('\n', out);
    }
}

/* a markdown cell: '|' and newlines would break the row */
static void fabric_md_cell(FILE *out, const char *s)
{
    fputc(' ', out);
    for (; *s; s++)
        fputs(*s == '|' ? "\\|" : *s == '\n' ? " " : (char[2]){*s, 0}, out);
    fputs(" |", out);
}

void np_fabric_rows_markdown(FILE *out, const struct np_fabric_rows *f, int after)
{
    if (!f || !f->n)
        return;
    fputs(after ? "\n## Fabric check (nccl-tests)\n\n" : "## Fabric check (nccl-tests)\n\n", out);
    fputs("Peak bus bandwidth: the best busbw of the three largest message sizes; PASS at 90 % of the expected "
          "(see docs/fabric.md).\n\n",
          out);
    fputs("|", out);
    for (int c = 0; c < FABRIC_NCOL; c++)
        fabric_md_cell(out, fabric_head[c]);
    fputs("\n|", out);
    for (int c = 0; c < FABRIC_NCOL; c++)
        fputs(c == 5 || c == 7 || c == 8 ? "---:|" : "---|", out);
    fputc('\n', out);
    char cells[FABRIC_NCOL][200];
    for (size_t i = 0; i < f->n; i++) {
        fabric_cells(&f->v[i], cells);
        fputs("|", out);
        for (int c = 0; c < FABRIC_NCOL; c++)
            fabric_md_cell(out, cells[c]);
        fputc('\n', out);
    }
}

static json_t *fabric_jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *np_fabric_json(const struct np_run *r)
{
    if (!np_fabric_is(r))
        return json_null();
    const struct np_run_nccl *n = &r->nccl;
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    bad |= json_object_set_new(o, "step", n->step[0] ? json_string(n->step) : json_null());
    bad |= json_object_set_new(o, "collective", n->collective[0] ? json_string(n->collective) : json_null());
    bad |= json_object_set_new(o, "scope", n->scope[0] ? json_string(n->scope) : json_null());
    bad |= json_object_set_new(o, "hosts", n->hosts[0] ? json_string(n->hosts) : json_null());
    bad |= json_object_set_new(o, "ranks", n->nranks > 0 ? json_integer(n->nranks) : json_null());
    bad |= json_object_set_new(o, "peak_busbw_gbs", fabric_jnum(n->peak_busbw));
    bad |= json_object_set_new(o, "peak_busbw_size_bytes", n->peak_size > 0 ? json_integer(n->peak_size) : json_null());
    bad |= json_object_set_new(o, "avg_busbw_gbs", fabric_jnum(n->avg_busbw));
    bad |= json_object_set_new(o, "expected_busbw_gbs", fabric_jnum(n->expected_gbs));
    bad |= json_object_set_new(o, "wrong", json_integer(n->wrong));
    bad |= json_object_set_new(o, "out_of_bounds", n->out_of_bounds >= 0 ? json_integer(n->out_of_bounds) : json_null());
    bad |= json_object_set_new(o, "verdict", n->verdict == NP_NCCL_NONE ? json_null()
                                              : json_string(np_nccl_verdict_name((enum np_nccl_verdict)n->verdict)));
    bad |= json_object_set_new(o, "why", fabric_why(r)[0] ? json_string(fabric_why(r)) : json_null());
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static void fabric_csv_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, ",%.10g", v);
    else
        fputc(',', out);
}

void np_fabric_csv(FILE *out, const struct np_run *r)
{
    if (!np_fabric_is(r)) {
        fputs(",,,,,,,,,,,,,", out);
        return;
    }
    const struct np_run_nccl *n = &r->nccl;
    fputc(',', out);
    np_text_csv_field(out, n->step, 0);
    fputc(',', out);
    np_text_csv_field(out, n->collective, 0);
    fputc(',', out);
    np_text_csv_field(out, n->scope, 0);
    fputc(',', out);
    np_text_csv_field(out, n->hosts, 0);
    if (n->nranks > 0)
        fprintf(out, ",%d", n->nranks);
    else
        fputc(',', out);
    fabric_csv_num(out, n->peak_busbw);
    if (n->peak_size > 0)
        fprintf(out, ",%lld", n->peak_size);
    else
        fputc(',', out);
    fabric_csv_num(out, n->avg_busbw);
    fabric_csv_num(out, n->expected_gbs);
    fprintf(out, ",%lld", n->wrong);
    if (n->out_of_bounds >= 0)
        fprintf(out, ",%d", n->out_of_bounds);
    else
        fputc(',', out);
    fprintf(out, ",%s,", n->verdict == NP_NCCL_NONE ? "" : np_nccl_verdict_name((enum np_nccl_verdict)n->verdict));
    np_text_csv_field(out, fabric_why(r), 0);
}
