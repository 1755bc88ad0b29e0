/* family_mbridge.c - Megatron-Bridge's performance runs as a family of struct np_run.
 *
 * Identity: the manifest's "mbridge" object (recipe, -c dtype, GPU type, GPUs, container, GBS, sequence, task,
 * -cv variant), then the options; the published row of that identity (the newest container unless one is named)
 * supplies what the log does not print.  Window: NVIDIA's llmb parser's iterations 35-44 (parse/mbridge.h);
 * FLOPs: Megatron-Bridge's own formulas (model/flops_mbridge.c); peaks: share/nemoperf/megatron-bridge/peaks.tsv.
 */
#include "nemoperf/parse/family.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/parse/mbridge.h"
#include "nemoperf/util/fileio.h"

static int mbridge_claims(const struct np_identity *id, const struct np_parse_opts *o)
{
    if (strcmp(id->family, "mbridge") == 0)
        return 1;
    if (id->family[0] || id->model_size[0]) /* another family's manifest, or a NeMo size: not a -mr name */
        return 0;
    /* a -mr name, a -c dtype only Megatron-Bridge has or --container without a recipe, from the options */
    return (id->recipe[0] && np_mb_ref_has_recipe(o->mbref, id->recipe)) ||
           (id->precision[0] && np_mb_dtype_parse(id->precision) != NP_MB_DTYPE_NONE) ||
           (id->container[0] && !id->recipe[0]);
}

/* Status and reason together. */
static void mbridge_status(struct np_run *run, enum np_run_status st, const char *why)
{
    run->status = st;
    np_run_set_why(run, why);
}

/* The window's step times (s) in log order into run->samples (opts->keep_samples) and its statistics. */
static void mbridge_window(struct np_run *run, const struct np_mb_log *log, const struct np_mb_result *res,
                           const struct np_parse_opts *o, const char *rule)
{
    struct np_window_stats *w = &run->window;
    double *v = malloc((log->n ? log->n : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < log->n; i++)
        if (log->iter[i] >= res->first && log->iter[i] <= res->last)
            v[n++] = log->ms[i] / 1000.0;
    w->first = n ? res->first : -1;
    w->last = n ? res->last : -1;
    w->rule = rule;
    free(run->samples);
    run->samples = NULL;
    if (n && o->keep_samples && (run->samples = malloc(n * sizeof *run->samples)))
        memcpy(run->samples, v, n * sizeof *v);
    np_window_stats_of(w, v, n);
    free(v);
}

static void mbridge_analyse(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o)
{
    struct np_identity *id = &run->id;
    const struct np_mb_ref *ref = o->mbref;
    if (!id->precision[0] && id->dtype != NP_DTYPE_NONE) /* --dtype bf16|fp8: Megatron-Bridge's bf16|fp8_cs */
        snprintf(id->precision, sizeof id->precision, "%s", id->dtype == NP_DTYPE_BF16 ? "bf16" : "fp8_cs");
    enum np_mb_dtype dt = np_mb_dtype_parse(id->precision);
    if (dt != NP_MB_DTYPE_NONE) {
        snprintf(id->precision, sizeof id->precision, "%s", np_mb_dtype_name(dt));
        id->dtype = dt == NP_MB_BF16 ? NP_DTYPE_BF16 : NP_DTYPE_FP8;
    }
    if (!id->task[0])
        snprintf(id->task, sizeof id->task, "pretrain");
    char why[320];
    if (!scan || scan->nsteps == 0) {
        mbridge_status(run, NP_RUN_NO_STEPS, "no training-step line in the logs");
        if (o->reference)
            np_run_verdict(run, o, NULL);
        return;
    }
    if (!ref) {
        mbridge_status(run, NP_RUN_UNIDENTIFIED, "Megatron-Bridge data not found (set NEMOPERF_DATADIR to the "
                                                 "folder holding reference/ and megatron-bridge/)");
        return;
    }
    if (!id->recipe[0] || dt == NP_MB_DTYPE_NONE || !id->gpu_type[0] || id->gpus <= 0) {
        snprintf(why, sizeof why, "a Megatron-Bridge run needs its recipe, dtype, GPU type and GPU count (the "
                                  "manifest, else --recipe --dtype --gpu --gpus)%s",
                 id->recipe[0] && !np_mb_ref_has_recipe(ref, id->recipe) ? ": no published row has this recipe" : "");
        mbridge_status(run, NP_RUN_UNIDENTIFIED, why);
        if (o->reference)
            np_run_verdict(run, o, "run is unidentified: not compared");
        return;
    }
    /* the whole log: the window's iteration lines and rank 0's figures paired with them (llmb's reading) */
    struct np_mb_log log;
    memset(&log, 0, sizeof log);
    struct np_error err;
    memset(&err, 0, sizeof err);
    int fd = -1;
    FILE *f = np_file_open_regular(AT_FDCWD, run->path, &fd, &err) == NP_OK ? fdopen(fd, "r") : NULL;
    if (!f && fd >= 0) { /* a FIFO put there after the listing is refused by the open, never waited on */
        snprintf(err.text, sizeof err.text, "%s", strerror(errno));
        close(fd);
    }
    enum np_status st = f ? np_mb_log_read(f, run->path, &log, &err) : NP_E_IO;
    if (f)
        fclose(f);
    if (st != NP_OK) {
        snprintf(why, sizeof why, "cannot read the log: %.200s", err.text);
        mbridge_status(run, NP_RUN_INVALID, why);
        np_mb_log_free(&log);
        return;
    }
    /* a run identified without its GBS (options, a manifest without it) is the row of the GBS its log prints: a
     * container may publish one model at two GBS (26.06 DeepSeek V3 GB300: v1 15360, v2 4096) */
    int find_gbs = id->gbs > 0 ? id->gbs : log.n && log.gbs[log.n - 1] > 0 ? log.gbs[log.n - 1] : 0;
    const struct np_mb_row *row = np_mb_ref_find(ref, id->container, id->task, id->recipe, dt, id->gpu_type,
                                                 id->gpus, find_gbs, id->seq_len);
    if (!row && find_gbs != id->gbs) /* no row at the log's GBS: the row of the identity (the GBS said below) */
        row = np_mb_ref_find(ref, id->container, id->task, id->recipe, dt, id->gpu_type, id->gpus, id->gbs,
                             id->seq_len);
    const char *variant = "-", *release = "";
    int tp = 1;
    if (row) {
        snprintf(id->container, sizeof id->container, "%s", row->container);
        if (id->gbs <= 0)
            id->gbs = row->gbs;
        if (id->seq_len <= 0)
            id->seq_len = row->seq_len;
        if (!id->config_variant[0] && row->variant[0] && strcmp(row->variant, "-") != 0)
            snprintf(id->config_variant, sizeof id->config_variant, "%.15s", row->variant);
        variant = row->variant;
        release = row->mb_release;
        tp = row->tp > 0 ? row->tp : 1;
        run->layout_row = &ref->published[row - ref->rows];
        if (!id->synthetic) /* a stand-in's speed is never compared with NVIDIA's (np_run_verdict says so) */
            run->ref = run->layout_row;
    } else {
        for (size_t i = 0; i < ref->n; i++) /* the release of the named container */
            if (strcmp(ref->rows[i].container, id->container) == 0)
                release = ref->rows[i].mb_release;
    }
    long first = -1, last = -1;
    const char *rule = "iterations 35-44 of 50 (NVIDIA's llmb parser)";
    if (o->steps_first >= 0) {
        first = o->steps_first;
        last = o->steps_last;
        rule = "--steps";
    } else if (o->window_strict && log.n) {
        last = log.iter[log.n - 1];
        first = last - (long)o->window + 1;
        rule = "--window";
    } else if (log.n && log.iter[log.n - 1] < NP_MB_WINDOW_LAST) {
        rule = "last 10 iterations (the run ends before iteration 44)";
    }
    struct np_mb_result res;
    int rc = np_mb_analyse(&log, ref, id->recipe, id->task, variant, release, dt, id->gpu_type, id->gpus, id->gbs,
                           id->seq_len, tp, first, last, &res);
    mbridge_window(run, &log, &res, o, rule);
    if (res.gbs > 0 && id->gbs <= 0)
        id->gbs = res.gbs;
    /* the last step (the seeds' rule) and the window (NVIDIA's), one formula: Megatron-Bridge's FLOPs per token */
    double last_s = log.n ? log.ms[log.n - 1] / 1000.0 : NAN;
    run->step_time_s = last_s;
    run->flops_per_sample = isnan(res.flops_per_token) ? NAN : res.flops_per_token * id->seq_len;
    run->peak_tflops = np_mb_peak(ref, id->gpu_type, dt);
    run->logged_tflops_per_gpu = res.logged_tflops_per_gpu;
    run->logged_steady = 1;
    double flops = id->synthetic ? NAN : run->flops_per_sample, peak = id->synthetic ? 0 : run->peak_tflops;
    double tokens = id->synthetic ? 0 : o->train_tokens;
    np_metrics_from_step(last_s, id->seq_len, id->gbs, id->gpus, flops, peak, tokens, &run->m);
    np_metrics_from_step(res.step_s, id->seq_len, id->gbs, id->gpus, flops, peak, tokens, &run->steady);
    if (!id->synthetic && isnan(res.model_tflops_per_gpu) && !isnan(res.mfu_percent)) {
        /* no formula for the family: Megatron-Bridge's own logged figure, as llmb reports it */
        run->steady.model_tflops_per_gpu = res.logged_tflops_per_gpu;
        run->steady.mfu_percent = res.mfu_percent;
    }
    /* the scan counts Megatron's iteration i as i - 1 */
    np_run_energy(run, scan, run->window.first >= 0 ? run->window.first - 1 : -1, run->window.last - 1);
    np_run_system(run, scan, run->window.first >= 0 ? run->window.first - 1 : -1, run->window.last - 1);
    if (!isnan(res.tflops_disagreement) && fabs(res.tflops_disagreement) > 0.015) {
        snprintf(why, sizeof why, "rank 0 logs %.1f TFLOP/s/GPU, Megatron-Bridge's formula gives %.1f",
                 res.logged_tflops_per_gpu, res.model_tflops_per_gpu);
        np_run_add_note(run, why);
    }
    if (isnan(res.model_tflops_per_gpu) && res.why_flops)
        np_run_add_note(run, res.why_flops);
    if (id->synthetic)
        np_run_add_note(run, "synthetic workload: nemoperf-synth stood in for the rank command; no GPU MFU, "
                             "TFLOP/s or time to train");
    if (!row)
        np_run_add_note(run, "no published row for this run");
    if (!run->gpu_source)
        run->gpu_source = "option";
    if (run->conflict[0])
        mbridge_status(run, NP_RUN_INVALID, run->conflict);
    else if (log.nan_grad)
        mbridge_status(run, NP_RUN_INVALID, "grad norm: nan in the log (llmb refuses such runs)");
    else if (res.gbs > 0 && id->gbs > 0 && res.gbs != id->gbs) {
        snprintf(why, sizeof why, "the log prints global batch size %d, the run is identified with %d", res.gbs,
                 id->gbs);
        mbridge_status(run, NP_RUN_INVALID, why);
    } else if (run->complete == 0 && log.n) {
        snprintf(why, sizeof why, "stopped at iteration %ld of %ld", log.iter[log.n - 1], log.train_iters);
        mbridge_status(run, NP_RUN_INCOMPLETE, why);
    } else if (rc != 0) {
        mbridge_status(run, NP_RUN_INVALID, res.problem[0] ? res.problem : "no usable steady-state window");
    } else if (!id->synthetic && !isnan(run->steady.mfu_percent) && run->steady.mfu_percent > 100) {
        snprintf(why, sizeof why, "implausible: MFU %.1f %% (a step faster than the model's FLOPs allow)",
                 run->steady.mfu_percent);
        mbridge_status(run, NP_RUN_IMPLAUSIBLE, why);
    } else {
        run->status = id->synthetic ? NP_RUN_SYNTHETIC : NP_RUN_OK;
    }
    np_mb_log_free(&log);
    if (o->reference)
        np_run_verdict(run, o, NULL);
}

const struct np_run_family np_family_mbridge = {
    "mbridge", "Megatron-Bridge",
    0.5, /* NVIDIA's 26.04.01+ tokens/s are rounded to multiples of 16: 0.5 % covers it */
    mbridge_claims, mbridge_analyse};
