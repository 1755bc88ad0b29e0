/* ncclreport.c - the NCCL breakdown and diagnostics of a run in every report format (nemoperf-parse --nccl).
 *
 * Text for the table and markdown formats, CSV rows (RFC 4180) and Jansson objects that
 * nemoperf-parse puts under each run of its JSON report, from one struct np_nccl / np_diag.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "nemoperf/report/ncclreport.h"
#include "nemoperf/util/text.h"
#include "nemoperf/report/plot.h"

int np_ncclreport_any(const struct np_nccl *n)
{
    const struct np_nccl_net *net = np_nccl_net(n);
    const struct np_nccl_ckpt *ck = np_nccl_ckpt(n);
    return np_nccl_trace_lines(n) || net->version[0] || net->network[0] || net->ib[0] || net->plugin[0] ||
           net->nnodes || ck->saves || ck->loads;
}

const char *np_ncclreport_bytes(double b, char *buf, size_t size)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5) {
        b /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, b == floor(b) ? "%.0f B" : "%.2f B", b); /* 0.16 B a step: not "0 B" */
    else
        snprintf(buf, size, "%.2f %s", b, unit[u]);
    return buf;
}

static double ncclreport_per_step(uint64_t bytes, size_t steps)
{
    return steps ? (double)bytes / (double)steps : NAN;
}

static uint64_t ncclreport_total(const struct np_nccl *n)
{
    size_t nc;
    const struct np_nccl_coll *c = np_nccl_colls(n, &nc);
    uint64_t t = 0;
    for (size_t i = 0; i < nc; i++)
        t += c[i].bytes;
    return t;
}

static json_t *ncclreport_jstr(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *ncclreport_jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *np_ncclreport_json(const struct np_nccl *n, size_t steps)
{
    const struct np_nccl_net *net = np_nccl_net(n);
    const struct np_nccl_ckpt *ck = np_nccl_ckpt(n);
    char warn[1024];
    size_t nw = np_nccl_warnings(n, warn, sizeof warn);
    json_t *o = json_object(), *colls = json_array(), *warns = json_array();
    if (!o || !colls || !warns) {
        json_decref(o);
        json_decref(colls);
        json_decref(warns);
        return NULL;
    }
    if (nw) { /* the "; "-separated list back into its items */
        char *s = warn;
        for (;;) {
            char *semi = strstr(s, "; ");
            if (semi)
                *semi = '\0';
            json_array_append_new(warns, json_string(s));
            if (!semi)
                break;
            s = semi + 2;
        }
    }
    size_t nc;
    const struct np_nccl_coll *c = np_nccl_colls(n, &nc);
    for (size_t i = 0; i < nc; i++) {
        json_t *h = json_object();
        for (int b = 0; b < NP_NCCL_HIST && h; b++)
            if (c[i].hist[b]) {
                char k[16];
                snprintf(k, sizeof k, "%d", b);
                json_object_set_new(h, k, json_integer((json_int_t)c[i].hist[b]));
            }
        json_array_append_new(
            colls, json_pack("{s:i,s:s,s:I,s:I,s:I,s:o,s:I,s:I,s:I,s:o}", "nranks", c[i].nranks, "op", c[i].op,
                             "calls", (json_int_t)c[i].calls, "lines", (json_int_t)c[i].lines, "bytes",
                             (json_int_t)c[i].bytes, "bytes_per_step",
                             ncclreport_jnum(ncclreport_per_step(c[i].bytes, steps)), "min_bytes",
                             (json_int_t)c[i].min_bytes, "max_bytes", (json_int_t)c[i].max_bytes, "unknown_calls",
                             (json_int_t)c[i].unknown_calls, "histogram_log2", h ? h : json_null()));
    }
    json_object_set_new(o, "version", ncclreport_jstr(net->version));
    json_object_set_new(o, "rccl", json_boolean(net->rccl));
    json_object_set_new(o, "network", ncclreport_jstr(net->network));
    json_object_set_new(o, "ib_devices", ncclreport_jstr(net->ib));
    json_object_set_new(o, "net_plugin", ncclreport_jstr(net->plugin));
    json_object_set_new(o, "net_plugin_failed", json_boolean(net->plugin_failed));
    json_object_set_new(o, "gpu_direct_rdma", net->gdr == NP_NCCL_UNKNOWN ? json_null() : json_boolean(net->gdr));
    json_object_set_new(o, "nodes", json_integer(np_nccl_nodes(n)));
    json_object_set_new(o, "max_nranks", json_integer(net->max_nranks));
    json_object_set_new(o, "ranks_seen", json_integer((json_int_t)np_nccl_ranks_seen(n)));
    json_object_set_new(o, "global_ranks", ncclreport_jstr(np_nccl_global_ranks(n)));
    json_object_set_new(o, "trace_lines", json_integer((json_int_t)np_nccl_trace_lines(n)));
    json_object_set_new(o, "steps", json_integer((json_int_t)steps));
    json_object_set_new(o, "bytes", json_integer((json_int_t)ncclreport_total(n)));
    json_object_set_new(o, "bytes_per_step", ncclreport_jnum(ncclreport_per_step(ncclreport_total(n), steps)));
    json_object_set_new(o, "collectives", colls);
    json_object_set_new(o, "warnings", warns);
    json_object_set_new(o, "checkpoint",
                        json_pack("{s:I,s:o,s:o,s:I,s:o,s:o}", "saves", (json_int_t)ck->saves, "save_s",
                                  ncclreport_jnum(ck->saves ? ck->save_s : NAN), "save_max_s",
                                  ncclreport_jnum(ck->saves ? ck->save_max_s : NAN), "loads",
                                  (json_int_t)ck->loads, "load_s", ncclreport_jnum(ck->loads ? ck->load_s : NAN),
                                  "load_max_s", ncclreport_jnum(ck->loads ? ck->load_max_s : NAN)));
    return o;
}

/* "2^20:110 2^22:5" */
static void ncclreport_hist(char *buf, size_t size, const struct np_nccl_coll *c)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int b = 0; b < NP_NCCL_HIST; b++) {
        if (!c->hist[b])
            continue;
        int k = snprintf(buf + len, size - len, "%s2^%d:%" PRIu64, len ? " " : "", b, c->hist[b]);
        if (k < 0 || (size_t)k >= size - len)
            break;
        len += (size_t)k;
    }
}

enum np_status np_ncclreport_text(FILE *out, const char *label, const struct np_nccl *n, size_t steps,
                                  int markdown)
{
    const struct np_nccl_net *net = np_nccl_net(n);
    const struct np_nccl_ckpt *ck = np_nccl_ckpt(n);
    char b1[32], b2[32], b3[32], hist[512], warn[1024];
    fprintf(out, markdown ? "\n### NCCL: %s\n\n" : "\nNCCL: %s\n", label);
    fprintf(out, "%s%s %s, network %s", markdown ? "" : "  ", net->rccl ? "RCCL" : "NCCL",
            net->version[0] ? net->version : "(version not logged)", net->network[0] ? net->network : "(not logged)");
    if (net->ib[0])
        fprintf(out, ", NET/IB %s", net->ib);
    if (net->plugin[0])
        fprintf(out, ", net plugin %s%s", net->plugin, net->plugin_failed ? " (failed)" : "");
    if (net->gdr != NP_NCCL_UNKNOWN)
        fprintf(out, ", GPU Direct RDMA %s", net->gdr ? "on" : "off");
    fprintf(out, ", %d node%s, %zu rank%s seen", np_nccl_nodes(n), np_nccl_nodes(n) == 1 ? "" : "s",
            np_nccl_ranks_seen(n), np_nccl_ranks_seen(n) == 1 ? "" : "s");
    if (*np_nccl_global_ranks(n))
        fprintf(out, " (global ranks %s)", np_nccl_global_ranks(n));
    fputc('\n', out);
    size_t nw = np_nccl_warnings(n, warn, sizeof warn);
    if (nw)
        fprintf(out, markdown ? "\n**warning: %s**\n" : "  warning: %s\n", warn);
    size_t nc;
    const struct np_nccl_coll *c = np_nccl_colls(n, &nc);
    if (nc) {
        if (markdown)
            fputs("\n| ranks | collective | calls | bytes | per step | sizes | histogram (log2 bytes: calls) |\n"
                  "|---:|---|---:|---:|---:|---|---|\n",
                  out);
        else
            fprintf(out, "  %6s  %-14s %10s %12s %12s  %-23s %s\n", "RANKS", "COLLECTIVE", "CALLS", "BYTES",
                    "PER STEP", "SIZES", "HISTOGRAM (log2 bytes:calls)");
        for (size_t i = 0; i < nc; i++) {
            double ps = ncclreport_per_step(c[i].bytes, steps);
            char sizes[64];
            snprintf(sizes, sizeof sizes, "%s..%s", np_ncclreport_bytes((double)c[i].min_bytes, b2, sizeof b2),
                     np_ncclreport_bytes((double)c[i].max_bytes, b3, sizeof b3));
            ncclreport_hist(hist, sizeof hist, &c[i]);
            char psb[32];
            if (isfinite(ps))
                np_ncclreport_bytes(ps, psb, sizeof psb);
            else
                snprintf(psb, sizeof psb, "n/a");
            np_ncclreport_bytes((double)c[i].bytes, b1, sizeof b1);
            if (markdown)
                fprintf(out, "| %d | %s | %" PRIu64 " | %s | %s | %s | %s |\n", c[i].nranks, c[i].op, c[i].calls, b1,
                        psb, sizes, hist);
            else
                fprintf(out, "  %6d  %-14s %10" PRIu64 " %12s %12s  %-23s %s\n", c[i].nranks, c[i].op, c[i].calls, b1,
                        psb, sizes, hist);
            if (c[i].unknown_calls)
                fprintf(out, "%s%" PRIu64 " calls of a datatype this NCCL version does not define: no bytes counted\n",
                        markdown ? "\n" : "          ", c[i].unknown_calls);
        }
        uint64_t t = ncclreport_total(n);
        fprintf(out, "%s%" PRIu64 " trace lines, %s in all, %s per step over %zu steps\n", markdown ? "\n" : "  ",
                np_nccl_trace_lines(n), np_ncclreport_bytes((double)t, b1, sizeof b1),
                steps ? np_ncclreport_bytes((double)t / (double)steps, b2, sizeof b2) : "n/a", steps);
    }
    if (ck->saves)
        fprintf(out, "%scheckpoint saves: %" PRIu64 ", %.3f s in all, longest %.3f s\n", markdown ? "\n" : "  ",
                ck->saves, ck->save_s, ck->save_max_s);
    if (ck->loads)
        fprintf(out, "%scheckpoint loads: %" PRIu64 ", %.3f s in all, longest %.3f s\n", markdown ? "\n" : "  ",
                ck->loads, ck->load_s, ck->load_max_s);
    return ferror(out) ? NP_E_IO : NP_OK;
}

enum np_status np_ncclreport_csv_header(FILE *out)
{
    fputs("run,nranks,collective,calls,lines,bytes,bytes_per_step,min_bytes,max_bytes,unknown_calls,"
          "nccl_version,network,nodes,warnings\n",
          out);
    return ferror(out) ? NP_E_IO : NP_OK;
}

enum np_status np_ncclreport_csv(FILE *out, const char *label, const struct np_nccl *n, size_t steps)
{
    const struct np_nccl_net *net = np_nccl_net(n);
    char warn[1024];
    np_nccl_warnings(n, warn, sizeof warn);
    size_t nc;
    const struct np_nccl_coll *c = np_nccl_colls(n, &nc);
    for (size_t i = 0; i < (nc ? nc : 1); i++) { /* a run without collectives: its facts in one row */
        np_text_csv_field(out, label, 0);
        if (nc) {
            double ps = ncclreport_per_step(c[i].bytes, steps);
            fprintf(out, ",%d,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", c[i].nranks, c[i].op, c[i].calls, c[i].lines,
                    c[i].bytes);
            if (isfinite(ps))
                fprintf(out, "%.1f", ps);
            fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", c[i].min_bytes, c[i].max_bytes, c[i].unknown_calls);
        } else
            fputs(",,,,,,,,,,", out);
        np_text_csv_field(out, net->version, 0);
        putc(',', out);
        np_text_csv_field(out, net->network, 0);
        fprintf(out, ",%d,", np_nccl_nodes(n));
        np_text_csv_field(out, warn, 0);
        fputs("\n", out);
    }
    return ferror(out) ? NP_E_IO : NP_OK;
}

/* ---- every run's diagnostics with the report ---------------------------------- */

static json_t *ncclreport_anomaly_json(const struct np_diag *g)
{
    const struct np_anomaly *a = &g->anomaly;
    json_t *sp = json_array();
    for (size_t i = 0; sp && i < a->nspikes && i < NP_ANOMALY_LIST; i++)
        json_array_append_new(sp, json_pack("{s:I,s:f}", "iteration", (json_int_t)a->spike_iter[i], "step_time_s",
                                            a->spike_s[i]));
    char text[1024];
    np_anomaly_text(a, text, sizeof text);
    return json_pack("{s:I,s:o,s:I,s:o,s:o,s:o,s:b,s:o,s:b,s:o}", "steps", (json_int_t)a->steps, "median_s",
                     ncclreport_jnum(a->median_s), "spikes", (json_int_t)a->nspikes, "spike_steps",
                     sp ? sp : json_null(), "period", a->period > 0 ? json_integer(a->period) : json_null(),
                     "trend_pct", ncclreport_jnum(a->trend_pct), "trend", a->trend, "warmup_end",
                     a->warmup_end >= 0 ? json_integer(a->warmup_end) : json_null(), "window_in_warmup",
                     a->window_in_warmup, "text", ncclreport_jstr(text));
}

static json_t *ncclreport_drift_json(const struct np_drift *dr)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < dr->n; i++)
        json_array_append_new(a, json_pack("{s:s,s:o,s:s}", "what", dr->item[i].what, "published",
                                           ncclreport_jstr(dr->item[i].published), "run", dr->item[i].run));
    return a ? a : json_null();
}

static json_t *ncclreport_ranks_json(const struct np_straggler_rank *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_pack("{s:i,s:o,s:o}", "rank", v[i].rank, "value", ncclreport_jnum(v[i].value),
                                           "node", v[i].node[0] ? ncclreport_jstr(v[i].node) : json_null()));
    return a ? a : json_null();
}

/* The straggler-detector reports (straggler.h), null when the log has none. */
static json_t *ncclreport_straggler_json(const struct np_diag *g)
{
    const struct np_straggler *s = np_nccl_stragglers(g->nccl);
    if (!s->mg_reports && !s->nv_reports && !s->nv_warning[0])
        return json_null();
    char text[1400];
    np_straggler_text(s, g->gpus_per_node, text, sizeof text);
    json_t *o = json_pack("{s:o,s:o,s:o}", "text", ncclreport_jstr(text), "megatron", json_null(), "nemo", json_null());
    if (o && s->mg_reports) {
        int gpn = g->gpus_per_node;
        json_object_set_new(
            o, "megatron",
            json_pack("{s:I,s:i,s:o,s:o,s:i,s:o,s:o,s:o,s:o,s:o}", "reports", (json_int_t)s->mg_reports, "slowest_rank",
                      s->mx_rtt_rank, "slowest_node", gpn > 0 ? json_integer(s->mx_rtt_rank / gpn) : json_null(),
                      "slowest_ms", ncclreport_jnum(s->mx_rtt_ms), "fastest_rank", s->mn_rtt_rank, "fastest_ms",
                      ncclreport_jnum(s->mn_rtt_ms), "lowest_etpt_rank",
                      s->mn_etpt_rank >= 0 ? json_integer(s->mn_etpt_rank) : json_null(), "lowest_etpt_tf",
                      s->mn_etpt_rank >= 0 ? ncclreport_jnum(s->mn_etpt) : json_null(), "highest_etpt_tf",
                      s->mx_etpt_rank >= 0 ? ncclreport_jnum(s->mx_etpt) : json_null(), "lowest_etpt_ranks",
                      ncclreport_ranks_json(s->bottom, s->nbottom)));
    }
    if (o && (s->nv_reports || s->nv_warning[0]))
        json_object_set_new(o, "nemo",
                            json_pack("{s:I,s:o,s:o,s:o}", "reports", (json_int_t)s->nv_reports, "worst",
                                      ncclreport_ranks_json(s->worst, s->nworst), "ranks",
                                      s->nv_total ? json_integer(s->nv_total) : json_null(), "warning",
                                      s->nv_warning[0] ? ncclreport_jstr(s->nv_warning) : json_null()));
    return o ? o : json_null();
}

static json_t *ncclreport_nsys_json(char *const *v)
{
    json_t *a = json_array();
    for (; a && v && *v; v++)
        json_array_append_new(a, json_string(*v));
    return a ? a : json_null();
}

/* The rank of each .nsys-rep file's process (null unknown), in nsys_reports' order. */
static json_t *ncclreport_nsys_ranks_json(const struct np_diag *g)
{
    json_t *a = json_array();
    for (size_t i = 0; a && g->nsys && g->nsys[i]; i++)
        json_array_append_new(a, g->nsys_rank && g->nsys_rank[i] >= 0 ? json_integer(g->nsys_rank[i]) : json_null());
    return a ? a : json_null();
}

static enum np_status ncclreport_json_all(FILE *out, const struct np_parse_result *res, const struct np_parse_opts *o,
                                          const struct np_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return NP_E_NOMEM;
    enum np_status st = np_report_write(mem, NP_FMT_JSON, res, o);
    if (fclose(mem) != 0 && st == NP_OK)
        st = NP_E_NOMEM;
    json_t *root = st == NP_OK ? json_loadb(text, len, 0, NULL) : NULL;
    free(text);
    if (st != NP_OK)
        return st;
    json_t *runs = json_object_get(root, "runs");
    if (!root || json_array_size(runs) != res->nruns) {
        json_decref(root);
        return NP_E_INTERNAL;
    }
    for (size_t i = 0; i < res->nruns; i++) {
        json_t *r = json_array_get(runs, i);
        const struct np_diag *g = &d[i];
        json_object_set_new(r, "nccl", g->nccl ? np_ncclreport_json(g->nccl, g->steps) : json_null());
        json_object_set_new(r, "anomalies", g->nccl ? ncclreport_anomaly_json(g) : json_null());
        json_object_set_new(r, "drift", ncclreport_drift_json(&g->drift));
        json_object_set_new(r, "nsys_reports", ncclreport_nsys_json(g->nsys));
        json_object_set_new(r, "nsys_report_ranks", ncclreport_nsys_ranks_json(g));
        json_object_set_new(r, "stragglers", g->nccl ? ncclreport_straggler_json(g) : json_null());
        if (g->error[0])
            json_object_set_new(r, "diagnostics_error", json_string(g->error));
    }
    errno = 0;
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (rc != 0 || fputc('\n', out) == EOF)
        return NP_E_IO;
    return NP_OK;
}

static const char *ncclreport_label(const struct np_run *r)
{
    return r->path ? r->path : r->dir ? r->dir : "(run)";
}

enum np_status np_diag_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                                    const struct np_parse_opts *o, const struct np_diag *d)
{
    if (fmt == NP_FMT_JSON)
        return ncclreport_json_all(out, res, o, d);
    enum np_status st = np_report_write(out, fmt, res, o);
    if (st != NP_OK)
        return st;
    if (fmt == NP_FMT_CSV) {
        fputc('\n', out);
        st = np_ncclreport_csv_header(out);
        for (size_t i = 0; st == NP_OK && i < res->nruns; i++)
            if (d[i].nccl && np_ncclreport_any(d[i].nccl))
                st = np_ncclreport_csv(out, ncclreport_label(&res->runs[i]), d[i].nccl, d[i].steps);
        return st;
    }
    int md = fmt == NP_FMT_MARKDOWN;
    for (size_t i = 0; st == NP_OK && i < res->nruns; i++) {
        const struct np_diag *g = &d[i];
        const char *label = ncclreport_label(&res->runs[i]);
        if (g->error[0])
            fprintf(out, md ? "\n### %s\n\ndiagnostics: %s\n" : "\n%s\n  diagnostics: %s\n", label, g->error);
        if (g->nccl && np_ncclreport_any(g->nccl))
            st = np_ncclreport_text(out, label, g->nccl, g->steps, md);
        char text[1400];
        if (g->nanomalies) {
            np_anomaly_text(&g->anomaly, text, sizeof text);
            fprintf(out, md ? "\n**steps** (%s): %s\n" : "\nsteps: %s\n  %s\n", label, text);
        }
        if (g->drift.n) {
            fprintf(out, md ? "\n**differs from the published row** (%s):\n\n| setting | published | this run |\n"
                              "|---|---|---|\n"
                            : "\ndiffers from the published row: %s\n",
                    label);
            for (size_t k = 0; k < g->drift.n; k++)
                fprintf(out, md ? "| %s | %s | %s |\n" : "  %-14s %-40s published: %s\n", g->drift.item[k].what,
                        md ? (g->drift.item[k].published[0] ? g->drift.item[k].published : "-") : g->drift.item[k].run,
                        md ? g->drift.item[k].run : (g->drift.item[k].published[0] ? g->drift.item[k].published : "-"));
        }
        if (g->nsys && g->nsys[0]) {
            fprintf(out, md ? "\n**Nsight reports** (%s):" : "\nNsight reports: %s\n ", label);
            for (size_t k = 0; g->nsys[k]; k++)
                if (g->nsys_rank && g->nsys_rank[k] >= 0)
                    fprintf(out, " %s (rank %d)", g->nsys[k], g->nsys_rank[k]);
                else
                    fprintf(out, " %s", g->nsys[k]);
            fputc('\n', out);
        }
    }
    return st == NP_OK && ferror(out) ? NP_E_IO : st;
}

enum np_status np_diag_plot(const char *file, const struct np_parse_result *res, const struct np_diag *d,
                            struct np_error *err)
{
    enum { NCCLREPORT_SERIES = 32 };
    struct {
        int nranks;
        char op[24];
        uint64_t hist[NP_NCCL_HIST];
    } *acc = calloc(NCCLREPORT_SERIES, sizeof *acc);
    struct np_plot_hist ser[NCCLREPORT_SERIES];
    if (!acc)
        return np_error_set(err, NP_E_NOMEM, file, 0, 0, "out of memory");
    size_t n = 0, runs = 0;
    for (size_t i = 0; i < res->nruns; i++) {
        size_t nc;
        const struct np_nccl_coll *c = d[i].nccl ? np_nccl_colls(d[i].nccl, &nc) : NULL;
        runs += c && nc;
        for (size_t k = 0; c && k < nc; k++) {
            size_t j = 0;
            while (j < n && !(acc[j].nranks == c[k].nranks && strcmp(acc[j].op, c[k].op) == 0))
                j++;
            if (j == n) {
                if (n == NCCLREPORT_SERIES)
                    continue; /* more than the legend can tell apart */
                acc[n].nranks = c[k].nranks;
                snprintf(acc[n].op, sizeof acc[n].op, "%s", c[k].op);
                n++;
            }
            for (int b = 0; b < NP_NCCL_HIST; b++)
                acc[j].hist[b] += c[k].hist[b];
        }
    }
    for (size_t j = 0; j < n; j++) {
        snprintf(ser[j].label, sizeof ser[j].label, "%s, %d ranks", acc[j].op, acc[j].nranks);
        ser[j].counts = acc[j].hist;
    }
    char title[96];
    snprintf(title, sizeof title, "NCCL message sizes (%zu run%s)", runs, runs == 1 ? "" : "s");
    enum np_status st = np_plot_hist_write(file, title, ser, n, NP_NCCL_HIST, err);
    free(acc);
    return st;
}
