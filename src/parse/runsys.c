/* runsys.c - a run's system in its record: the job's snapshot and GPU telemetry (parse/system.h) of the run
 * folder, read over the steady window's time where the window's step lines carry timestamps (Megatron's
 * "[2026-11-29 06:00:20] iteration ..."), else over the whole run (said).  What stands out goes into the run's
 * notes beside the step anomalies, the whole section into run->system (the reports' "system_snapshot"), and
 * energy from telemetry when the log prints none: W/GPU the mean of the window's power.draw samples,
 * J/iter/GPU = W/GPU x the window's mean step time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/parse/run.h"
#include "nemoperf/parse/system.h"
#include "nemoperf/util/fileio.h"

/* 1 when dir (the run's folder, where its log and manifest are) holds the job's system/ or telemetry/ folder. */
static int runsys_dir(const char *dir)
{
    static const char *const subs[] = {"system", "telemetry"};
    for (size_t i = 0; dir && *dir && i < 2; i++) {
        char p[4200];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, subs[i]);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) /* a folder, or a link to one (never a FIFO's open) */
            return 1;
    }
    return 0;
}

/* The timestamp at the start of the line at off of fd ("[2026-11-29 06:00:20] iteration"), NAN none. */
static double runsys_line_time(int fd, uint64_t off)
{
    char b[64];
    ssize_t n = pread(fd, b, sizeof b - 1, (off_t)off);
    if (n <= 0)
        return NAN;
    b[n] = '\0';
    size_t nl = strcspn(b, "\n");
    return np_telemetry_time(b, nl);
}

/* The steady window's time [*t0, *t1] on the log's clock: the first window step's line time less its step
 * time, the last's line time.  0 when the lines carry none. */
static int runsys_window(const struct np_run *run, const struct np_scan_result *scan, long first, long last,
                         double *t0, double *t1)
{
    const struct np_step *a = NULL, *b = NULL;
    if (!scan || first < 0 || last < first || !run->path)
        return 0;
    for (size_t i = 0; i < scan->nsteps; i++) {
        if (scan->steps[i].iteration == first && !a)
            a = &scan->steps[i];
        if (scan->steps[i].iteration == last)
            b = &scan->steps[i];
    }
    if (!a || !b)
        return 0;
    int fd = -1;
    if (np_file_open_regular(AT_FDCWD, run->path, &fd, NULL) != NP_OK)
        return 0;
    double ta = runsys_line_time(fd, a->offset), tb = runsys_line_time(fd, b->offset);
    close(fd);
    if (isnan(ta) || isnan(tb) || tb < ta)
        return 0;
    *t0 = ta - (isfinite(a->step_time_s) && a->step_time_s > 0 ? a->step_time_s : 0);
    *t1 = tb;
    return 1;
}

static json_t *runsys_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *runsys_int(long v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

static json_t *runsys_tri(int v) /* 1 true, 0 false, -1 unknown */
{
    return v < 0 ? json_null() : json_boolean(v);
}

static json_t *runsys_str(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static const char *const runsys_status[] = {"missing", "partial", "ok"};

struct runsys_notes {
    json_t *arr;
};

static void runsys_add(void *ctx, const char *node, const char *what)
{
    struct runsys_notes *n = ctx;
    (void)node;
    json_array_append_new(n->arr, json_string(what));
}

/* The section as JSON: nodes (each GPU), telemetry (each GPU), the window's basis, what stands out, notes. */
static json_t *runsys_json(const struct np_system *s, const char *basis)
{
    json_t *nodes = json_array(), *tele = json_array(), *out = json_array();
    for (size_t i = 0; i < s->nnodes; i++) {
        const struct np_sys_node *n = &s->nodes[i];
        json_t *gpus = json_array();
        for (size_t j = 0; j < n->ngpus; j++) {
            const struct np_sys_gpu *g = &n->gpus[j];
            json_array_append_new(
                gpus, json_pack("{s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
                                "index", g->index, "uuid", runsys_str(g->uuid), "serial", runsys_str(g->serial),
                                "product", runsys_str(g->product), "vbios", runsys_str(g->vbios), "power_limit_w",
                                runsys_num(g->power_limit_w), "default_power_limit_w",
                                runsys_num(g->default_power_limit_w), "max_sm_mhz", runsys_num(g->max_sm_mhz),
                                "app_sm_mhz", runsys_num(g->app_sm_mhz), "persistence", runsys_tri(g->persistence),
                                "ecc_mode", runsys_tri(g->ecc_mode), "ecc_volatile_sbe", runsys_int(g->ecc_volatile_sbe),
                                "ecc_volatile_dbe", runsys_int(g->ecc_volatile_dbe), "ecc_aggregate_sbe",
                                runsys_int(g->ecc_aggregate_sbe), "ecc_aggregate_dbe", runsys_int(g->ecc_aggregate_dbe),
                                "remap_pending", runsys_tri(g->remap_pending), "remap_failure",
                                runsys_tri(g->remap_failure), "retired_pending", runsys_tri(g->retired_pending),
                                "nvlink_down", runsys_int(g->nvlink_down), "mig_mode", runsys_tri(g->mig_mode),
                                "pcie", g->pcie_gen > 0 && g->pcie_width > 0
                                            ? json_pack("{s:i,s:i}", "gen", g->pcie_gen, "width", g->pcie_width)
                                            : json_null()));
        }
        json_array_append_new(
            nodes, json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "name", n->name,
                             "status", runsys_status[n->status], "snapshot_s", runsys_num(n->snapshot_s), "driver",
                             runsys_str(n->driver), "cuda", runsys_str(n->cuda), "kernel", runsys_str(n->kernel),
                             "cpu_model", runsys_str(n->cpu_model), "governor", runsys_str(n->governor),
                             "numa_nodes", runsys_int(n->numa_nodes), "image", runsys_str(n->image), "nccl",
                             runsys_str(n->nccl), "cudnn", runsys_str(n->cudnn), "transformer_engine",
                             runsys_str(n->te), "infiniband", runsys_str(n->ib), "notes", runsys_str(n->notes),
                             "gpus", gpus));
    }
    for (size_t i = 0; i < s->ntele; i++) {
        const struct np_gpu_telemetry *t = &s->tele[i];
        json_array_append_new(
            tele, json_pack("{s:s,s:i,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "node", t->node, "index", t->index,
                            "samples", (json_int_t)t->samples, "mean_power_w", runsys_num(t->mean_power_w),
                            "power_limit_w", runsys_num(t->power_limit_w), "mean_sm_mhz", runsys_num(t->mean_sm_mhz),
                            "max_sm_mhz", runsys_num(t->max_sm_mhz), "mean_temp_c", runsys_num(t->mean_temp_c),
                            "hw_slowdown", runsys_num(t->hw_slowdown), "sw_power_cap", runsys_num(t->sw_power_cap),
                            "thermal", runsys_num(t->thermal), "power_brake", runsys_num(t->power_brake)));
    }
    struct runsys_notes rn = {out};
    np_system_outliers(s, runsys_add, &rn);
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "nodes", nodes, "telemetry", tele, "telemetry_window",
                     s->telemetry ? json_string(basis) : json_null(), "stands_out", out, "notes",
                     runsys_str(s->notes));
}

void np_run_system(struct np_run *run, const struct np_scan_result *scan, long first, long last)
{
    if (!runsys_dir(run->dir))
        return;
    const char *dir = run->dir;
    double t0 = NAN, t1 = NAN;
    int aligned = runsys_window(run, scan, first, last, &t0, &t1);
    struct np_system s;
    struct np_error err = {0};
    if (np_system_read_window(dir, t0, t1, &s, &err) != NP_OK) {
        np_run_add_note(run, "system snapshot not read: out of memory");
        return;
    }
    if (aligned && s.telemetry && !s.ntele) {
        /* no sample in the window (another clock, another day): the whole run rather than nothing */
        np_system_free(&s);
        aligned = 0;
        if (np_system_read_window(dir, NAN, NAN, &s, &err) != NP_OK) {
            np_run_add_note(run, "system snapshot not read: out of memory");
            return;
        }
    }
    s.window_aligned = aligned;
    const char *basis = aligned ? "steady window" : "whole run";
    char text[4096];
    np_system_text(&s, text, sizeof text);
    if (text[0]) {
        char note[4200];
        snprintf(note, sizeof note, "system: %s", text);
        np_run_add_note(run, note);
    }
    if (s.telemetry && !aligned)
        np_run_add_note(run, "GPU telemetry over the whole run (the step lines carry no timestamps to align the "
                             "steady window by)");
    /* energy from telemetry when the log prints none */
    struct np_energy *e = &run->energy;
    double sw = 0, n = 0;
    for (size_t i = 0; i < s.ntele; i++)
        if (isfinite(s.tele[i].mean_power_w) && s.tele[i].samples) {
            sw += s.tele[i].mean_power_w * (double)s.tele[i].samples;
            n += (double)s.tele[i].samples;
        }
    double step = isfinite(run->window.mean_s) ? run->window.mean_s : run->step_time_s;
    if (!e->steps && n > 0 && isfinite(step) && step > 0) {
        e->w_per_gpu = sw / n;
        e->j_per_gpu_iter = e->w_per_gpu * step;
        e->steps = run->window.count ? run->window.count : 1;
        e->source = "telemetry";
        char what[160];
        snprintf(what, sizeof what, "GPU telemetry: the mean of %.0f power.draw samples of %zu GPUs over the %s", n,
                 s.ntele, basis);
        np_run_energy_derive(run, what);
    }
    json_t *j = runsys_json(&s, basis);
    char *t = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(j);
    free(run->system);
    run->system = t ? strdup(t) : NULL; /* the record's own (np_run_clear frees it), not Jansson's allocator's */
    json_malloc_t jm;
    json_free_t jf;
    json_get_alloc_funcs(&jm, &jf);
    if (t)
        jf(t);
    np_system_free(&s);
}
