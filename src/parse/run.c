/* run.c - turn walked log files into analysed runs, in parallel.
 *
 * One task per folder: pick the latest restart attempt that has steps, scan
 * the other logs, identify the run (manifest, folder names, options), then
 * compute the last-step and window metrics.  Worker threads pull folders from
 * an atomic counter; results land in per-folder slots, so output order is the
 * walk's (sorted) order whatever the thread count.
 */
#include "nemoperf/parse/run.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/util/runfiles.h"

#include "nemoperf/model/flops_finetune.h"
#include "nemoperf/model/model_flops.h"
#include "nemoperf/parse/npy.h"
#include "nemoperf/parse/nccl.h"
#include "nemoperf/parse/nccltests.h"
#include "nemoperf/model/mbdtype.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/parse/automodel_log.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/parse/runstate.h"
#include "nemoperf/parse/walk.h"

const char *np_run_status_name(enum np_run_status s)
{
    switch (s) {
    case NP_RUN_OK: return "ok";
    case NP_RUN_NO_STEPS: return "no-steps";
    case NP_RUN_INVALID: return "invalid";
    case NP_RUN_INCOMPLETE: return "incomplete";
    case NP_RUN_UNIDENTIFIED: return "unidentified";
    case NP_RUN_IMPLAUSIBLE: return "implausible";
    case NP_RUN_SYNTHETIC: return "synthetic";
    case NP_RUN_NOT_SUBMITTED: return "not-submitted";
    case NP_RUN_PENDING: return "pending";
    case NP_RUN_RUNNING: return "running";
    case NP_RUN_FAILED: return "failed";
    case NP_RUN_NO_LOG: return "no-log";
    }
    return "?";
}

int np_run_status_good(enum np_run_status s)
{
    return s == NP_RUN_OK || s == NP_RUN_SYNTHETIC;
}

const char *np_verdict_name(enum np_verdict v)
{
    switch (v) {
    case NP_VERDICT_PASS: return "PASS";
    case NP_VERDICT_FAIL: return "FAIL";
    case NP_VERDICT_FAST: return "FAST";
    case NP_VERDICT_NOT_COMPARED: return "n/a";
    case NP_VERDICT_NONE: break;
    }
    return "-";
}

const char *np_run_kind_name(enum np_run_kind k)
{
    switch (k) {
    case NP_KIND_BENCHMARK: return "benchmark";
    case NP_KIND_PROFILE: return "profile";
    case NP_KIND_NCCLTRACE: return "nccl-trace";
    case NP_KIND_CKPT_LOAD: return "checkpoint-load";
    case NP_KIND_CKPT_SAVE: return "checkpoint-save";
    case NP_KIND_NCCLTESTS: return "nccl-tests";
    }
    return "?";
}

const char *np_run_kind_why(enum np_run_kind k)
{
    switch (k) {
    case NP_KIND_BENCHMARK: break;
    case NP_KIND_PROFILE:
        return "profile run (nsys capture adds overhead; the seeds: profiling results are not valid for "
               "comparison): never compared with a published number";
    case NP_KIND_NCCLTRACE:
        return "NCCL-trace run (a few steps, warm-up included, tracing on): never compared with a published number";
    case NP_KIND_CKPT_LOAD:
        return "checkpoint-load run (restores a checkpoint, runs one step): never compared with a published number";
    case NP_KIND_CKPT_SAVE:
        return "checkpoint-save run (writes a checkpoint): never compared with a published number";
    case NP_KIND_NCCLTESTS:
        return "nccl-tests run (a fabric check): judged against the expected bus bandwidth, not a training row";
    }
    return "";
}

void np_parse_opts_init(struct np_parse_opts *o)
{
    memset(o, 0, sizeof *o);
    o->include = "*.out";
    o->window = 10;
    o->steps_first = o->steps_last = -1;
    o->train_tokens = 1e12;
    o->tolerance_pct = 5.0;
    o->progress_after = 1.0;
    o->net_head = 1;
}

/* ---- patterns (compiled once) ---- */

/* pretrain_<recipe>_<size>_<dtype>_<gpus>[_nsys|_nccltrace], finetune_<recipe>_<size>_<task>_<dtype>_<gpus>[...] */
static pcre2_code *run_re_folder;
static pcre2_code *run_re_attempt; /* log-<anything>_<job>_<restart>.out */
static pcre2_code *run_re_sbatch;  /* sbatch_<anything>_<job>.out */
static pthread_once_t run_once = PTHREAD_ONCE_INIT;
static int run_re_ok;

static pcre2_code *run_compile(const char *pat)
{
    int ec;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
    if (re)
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter if JIT is unavailable */
    return re;
}

static void run_init_patterns(void)
{
    run_re_folder = run_compile("^(pretrain|finetune)_([a-z0-9][a-z0-9.]*)_([0-9][a-z0-9.]*)_(?:(sft|lora)_)?"
                                "(bf16|fp8)_([1-9][0-9]{0,6})(?:_(nsys|nccltrace))?(?:_[0-9]+)?$");
    run_re_attempt = run_compile("^log-.*_([0-9]{1,18})_([0-9]{1,9})\\.out$");
    run_re_sbatch = run_compile("^sbatch_.*_([0-9]{1,18})\\.out$");
    run_re_ok = run_re_folder && run_re_attempt && run_re_sbatch;
}

static void run_copy(char *dst, size_t size, const char *src, size_t len)
{
    if (len >= size)
        len = size - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Match one path component against the folder pattern. */
static int run_match_component(const char *comp, size_t len, struct np_identity *id)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(run_re_folder, NULL);
    if (!md)
        return 0;
    int rc = pcre2_match(run_re_folder, (PCRE2_SPTR)comp, len, 0, 0, md, NULL);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    /* groups: 1 pretrain|finetune, 2 recipe, 3 size, 4 task, 5 dtype, 6 gpus, 7 variant */
    int finetune = rc >= 7 && comp[ov[2]] == 'f';
    int has_task = rc >= 7 && ov[8] != PCRE2_UNSET;
    int ok = rc >= 7 && finetune == has_task; /* a task after finetune_ only */
    if (ok) {
        run_copy(id->recipe, sizeof id->recipe, comp + ov[4], ov[5] - ov[4]);
        run_copy(id->model_size, sizeof id->model_size, comp + ov[6], ov[7] - ov[6]);
        if (has_task)
            run_copy(id->task, sizeof id->task, comp + ov[8], ov[9] - ov[8]);
        else
            snprintf(id->task, sizeof id->task, "pretrain");
        char dt[8];
        run_copy(dt, sizeof dt, comp + ov[10], ov[11] - ov[10]);
        id->dtype = np_dtype_parse(dt);
        id->gpus = (int)strtol(comp + ov[12], NULL, 10);
        int variant = rc >= 8 && ov[14] != PCRE2_UNSET;
        if (variant) {
            run_copy(id->variant, sizeof id->variant, comp + ov[14], ov[15] - ov[14]);
            id->kind = id->variant[1] == 's' ? NP_KIND_PROFILE : NP_KIND_NCCLTRACE; /* nsys | nccltrace */
        }
        /* the experiment name is the component without the _<unix-ts> suffix */
        run_copy(id->experiment, sizeof id->experiment, comp, variant ? ov[15] : ov[13]);
    }
    pcre2_match_data_free(md);
    return ok;
}

int np_identity_from_path(const char *path, struct np_identity *id)
{
    pthread_once(&run_once, run_init_patterns);
    if (!run_re_ok || !path)
        return 0;
    /* innermost matching folder component wins (the run folder itself) */
    const char *end = path + strlen(path);
    while (end > path) {
        const char *start = end;
        while (start > path && start[-1] != '/')
            start--;
        if (end > start && run_match_component(start, (size_t)(end - start), id))
            return 1;
        end = start > path ? start - 1 : path;
    }
    return 0;
}

/* A manifest that cannot be trusted (issue 23): the first field of the wrong type, a duplicate
 * key, a file that cannot be read; the run is then invalid, naming it, instead of silently
 * losing its identity.  Absent and null fields are fine (older formats, optional settings). */
struct run_mcheck {
    char *bad;
    size_t size;
};

static void run_mbad(struct run_mcheck *k, const char *where, const char *key, const char *what, const char *want)
{
    if (!k->bad[0])
        snprintf(k->bad, k->size, "field \"%s%s\": %s%s%s", where, key, what, want[0] ? ", not " : "", want);
}

static const char *run_json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int run_json_int(json_t *o, const char *key, const char *where, struct run_mcheck *k)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 100000000)
        return (int)json_integer_value(v);
    if (json_is_integer(v))
        run_mbad(k, where, key, json_integer_value(v) <= 0 ? "zero or negative" : "implausibly large", "a positive count");
    else
        run_mbad(k, where, key, run_json_kind(v), "a positive integer");
    return 0;
}

static void run_json_str(json_t *o, const char *key, char *dst, size_t size, const char *where, struct run_mcheck *k)
{
    json_t *v = json_object_get(o, key);
    if (json_is_string(v))
        run_copy(dst, size, json_string_value(v), strlen(json_string_value(v)));
    else if (v && !json_is_null(v))
        run_mbad(k, where, key, run_json_kind(v), "a string");
}

static int run_json_bool(json_t *o, const char *key, const char *where, struct run_mcheck *k)
{
    json_t *v = json_object_get(o, key);
    if (v && !json_is_boolean(v) && !json_is_null(v))
        run_mbad(k, where, key, run_json_kind(v), "true or false");
    return json_is_true(v);
}

int np_manifest_read(const char *file, struct np_identity *id, struct np_launch_info *li)
{
    json_error_t jerr;
    struct np_error ferr;
    int io = 0;
    char badbuf[sizeof li->bad] = "";
    struct run_mcheck k = {li ? li->bad : badbuf, li ? sizeof li->bad : sizeof badbuf};
    if (li)
        memset(li, 0, sizeof *li);
    /* regular files only (a FIFO would block the parse); a repeated key is not "the last wins" */
    json_t *root = np_file_load_json(file, JSON_REJECT_DUPLICATES, &jerr, &io, &ferr);
    if (!root) {
        if (io)
            snprintf(k.bad, k.size, "%.200s", ferr.text);
        else if (json_error_code(&jerr) == json_error_duplicate_key)
            snprintf(k.bad, k.size, "line %d: %.160s", jerr.line, jerr.text);
        if (li && k.bad[0])
            li->present = 1;
        return 0;
    }
    /* its format: absent (a hand-written manifest, the oldest launches) or the one launch writes; any other
     * (999, 2, "1", -1) is a manifest this nemoperf cannot read: the run invalid, the version named */
    json_t *fmt = json_object_get(root, "nemoperf_manifest");
    if (fmt && !json_is_null(fmt) && !(json_is_integer(fmt) && json_integer_value(fmt) == NP_RUNFILE_MANIFEST_FORMAT)) {
        char *shown = json_dumps(fmt, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(k.bad, k.size, "field \"nemoperf_manifest\": format %.40s, not one this nemoperf reads (%d)",
                 shown ? shown : "?", NP_RUNFILE_MANIFEST_FORMAT);
        free(shown);
    }
    /* a Megatron-Bridge performance run (launch/manifest.c writes "mbridge"): its identity is that object's
     * (parse/family_mbridge.c reads the run) */
    json_t *mbo = json_object_get(root, "mbridge");
    if (mbo && !json_is_object(mbo) && !json_is_null(mbo))
        run_mbad(&k, "", "mbridge", run_json_kind(mbo), "an object");
    int foreign = json_is_object(mbo);
    json_t *c = json_object_get(root, "config");
    const char *cw = "config.";
    if (c && !json_is_object(c))
        run_mbad(&k, "", "config", run_json_kind(c), "an object");
    if (!json_is_object(c)) {
        c = root;
        cw = "";
    }
    struct np_identity t;
    memset(&t, 0, sizeof t);
    run_json_str(c, "recipe", t.recipe, sizeof t.recipe, cw, &k);
    run_json_str(c, "model_size", t.model_size, sizeof t.model_size, cw, &k);
    run_json_str(c, "gpu_type", t.gpu_type, sizeof t.gpu_type, cw, &k);
    run_json_str(c, "system", t.system, sizeof t.system, cw, &k);
    run_json_str(c, "experiment", t.experiment, sizeof t.experiment, cw, &k);
    run_json_str(c, "task", t.task, sizeof t.task, cw, &k);
    json_t *ft = json_object_get(c, "finetune");
    if (ft && !json_is_object(ft) && !json_is_null(ft))
        run_mbad(&k, cw, "finetune", run_json_kind(ft), "an object");
    run_json_str(ft, "packed_train", t.packed_train, sizeof t.packed_train, "config.finetune.", &k);
    for (char *q = t.gpu_type; *q; q++)
        *q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
    char dt[16] = "", wl[32] = "";
    run_json_str(c, "dtype", dt, sizeof dt, cw, &k);
    t.dtype = np_dtype_parse(dt);
    if (dt[0] && t.dtype == NP_DTYPE_NONE && !foreign) /* Megatron-Bridge's are its own: "mbridge" below */
        run_mbad(&k, cw, "dtype", "not a data type nemoperf knows", "");
    t.gpus = run_json_int(c, "gpus", cw, &k);
    t.seq_len = run_json_int(c, "seq_len", cw, &k);
    t.gbs = run_json_int(c, "gbs", cw, &k);
    t.max_steps = run_json_int(c, "max_steps", cw, &k);
    json_t *load = json_object_get(c, "load_checkpoint");
    int ckpt_save = run_json_bool(c, "checkpoint", cw, &k);
    if (run_json_bool(c, "profile", cw, &k)) {
        strcpy(t.variant, "nsys");
        t.kind = NP_KIND_PROFILE;
    } else if (run_json_bool(c, "nccltrace", cw, &k)) {
        strcpy(t.variant, "nccltrace");
        t.kind = NP_KIND_NCCLTRACE;
    } else if (json_is_string(load) && json_string_length(load) > 0)
        t.kind = NP_KIND_CKPT_LOAD;
    else if (ckpt_save)
        t.kind = NP_KIND_CKPT_SAVE;
    run_json_str(root, "workload", wl, sizeof wl, "", &k);
    if (!wl[0])
        run_json_str(c, "workload", wl, sizeof wl, cw, &k);
    t.synthetic = strcmp(wl, "synthetic") == 0;
    /* an nccl-tests run (launch writes "workload": "nccl-tests" and an "nccl_tests" object): its steps are read
     * from the job's steps file (parse/family_nccltests.c); no model, no data type */
    json_t *nto = json_object_get(root, "nccl_tests");
    if (nto && !json_is_object(nto) && !json_is_null(nto))
        run_mbad(&k, "", "nccl_tests", run_json_kind(nto), "an object");
    int ncclt = !foreign && (json_is_object(nto) || strcmp(wl, NP_NCCLT_FAMILY) == 0);
    if (ncclt) {
        snprintf(t.family, sizeof t.family, "%s", NP_NCCLT_FAMILY);
        if (!t.recipe[0])
            snprintf(t.recipe, sizeof t.recipe, "%s", NP_NCCLT_FAMILY);
        t.kind = NP_KIND_NCCLTESTS;
        t.synthetic = 0;
    }
    if (foreign) {
        char prec[16] = "";
        struct np_identity m;
        memset(&m, 0, sizeof m);
        run_json_str(mbo, "recipe", m.recipe, sizeof m.recipe, "mbridge.", &k);
        run_json_str(mbo, "gpu_type", m.gpu_type, sizeof m.gpu_type, "mbridge.", &k);
        run_json_str(mbo, "container", m.container, sizeof m.container, "mbridge.", &k);
        run_json_str(mbo, "task", m.task, sizeof m.task, "mbridge.", &k);
        run_json_str(mbo, "variant", m.config_variant, sizeof m.config_variant, "mbridge.", &k);
        run_json_str(mbo, "dtype", prec, sizeof prec, "mbridge.", &k);
        enum np_mb_dtype md = np_mb_dtype_parse(prec);
        if (prec[0] && md == NP_MB_DTYPE_NONE)
            run_mbad(&k, "mbridge.", "dtype", "not a Megatron-Bridge compute dtype", "");
        else if (prec[0])
            snprintf(t.precision, sizeof t.precision, "%s", np_mb_dtype_name(md));
        t.dtype = md == NP_MB_DTYPE_NONE ? NP_DTYPE_NONE : md == NP_MB_BF16 ? NP_DTYPE_BF16 : NP_DTYPE_FP8;
        for (char *q = m.gpu_type; *q; q++)
            *q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
        memcpy(t.recipe, m.recipe, sizeof t.recipe);
        memcpy(t.gpu_type, m.gpu_type, sizeof t.gpu_type);
        memcpy(t.container, m.container, sizeof t.container);
        memcpy(t.config_variant, m.config_variant, sizeof t.config_variant);
        if (m.task[0])
            memcpy(t.task, m.task, sizeof t.task);
        t.model_size[0] = '\0'; /* Megatron-Bridge's -mr names the model and its size */
        int g = run_json_int(mbo, "gpus", "mbridge.", &k);
        if (g)
            t.gpus = g;
        if ((g = run_json_int(mbo, "gbs", "mbridge.", &k)))
            t.gbs = g;
        if ((g = run_json_int(mbo, "seq_len", "mbridge.", &k)))
            t.seq_len = g;
        strcpy(t.family, "mbridge");
    }
    struct np_launch_info scratch;
    struct np_launch_info *l = li ? li : &scratch;
    l->present = 1;
    if (foreign)
        strcpy(l->foreign, "mbridge");
    run_json_str(root, "state", l->state, sizeof l->state, "", &k);
    /* "submitted": true (format 1), or "state": "submitted" (a later launch protocol) */
    l->submitted = run_json_bool(root, "submitted", "", &k) || strcmp(l->state, "submitted") == 0;
    json_t *jid = json_object_get(root, "job_id");
    if (json_is_integer(jid))
        snprintf(l->job_id, sizeof l->job_id, "%lld", (long long)json_integer_value(jid));
    else
        run_json_str(root, "job_id", l->job_id, sizeof l->job_id, "", &k);
    run_json_str(root, "submit_time", l->submit_time, sizeof l->submit_time, "", &k);
    run_json_str(root, "error", l->error, sizeof l->error, "", &k);
    l->gbs = t.gbs;
    l->max_steps = t.max_steps;
    json_decref(root);
    if (k.bad[0]) { /* nothing of it is used: not its identity, not its job id */
        char keep[sizeof l->bad];
        memcpy(keep, k.bad, sizeof keep);
        memset(l, 0, sizeof *l);
        l->present = 1;
        memcpy(l->bad, keep, sizeof l->bad);
        if (foreign)
            strcpy(l->foreign, "mbridge");
        return 0;
    }
    if (ncclt && t.recipe[0]) { /* the steps name the rest */
        *id = t;
        return 1;
    }
    if (!t.recipe[0] || (!t.model_size[0] && !foreign) || t.dtype == NP_DTYPE_NONE || t.gpus <= 0)
        return 0;
    *id = t;
    return 1;
}

int np_identity_from_manifest(const char *file, struct np_identity *id)
{
    return np_manifest_read(file, id, NULL);
}

/* Fill unknown fields of id from the given options. */
static void run_identity_fill(struct np_identity *id, const struct np_identity *g)
{
    if (!id->recipe[0])
        memcpy(id->recipe, g->recipe, sizeof id->recipe);
    if (!id->model_size[0])
        memcpy(id->model_size, g->model_size, sizeof id->model_size);
    if (!id->gpu_type[0])
        memcpy(id->gpu_type, g->gpu_type, sizeof id->gpu_type);
    if (!id->system[0])
        memcpy(id->system, g->system, sizeof id->system);
    if (id->dtype == NP_DTYPE_NONE)
        id->dtype = g->dtype;
    if (!id->gpus)
        id->gpus = g->gpus;
    if (!id->seq_len)
        id->seq_len = g->seq_len;
    if (!id->gbs)
        id->gbs = g->gbs;
    if (!id->task[0])
        memcpy(id->task, g->task, sizeof id->task);
    if (!id->precision[0])
        memcpy(id->precision, g->precision, sizeof id->precision);
    if (!id->container[0])
        memcpy(id->container, g->container, sizeof id->container);
    if (!id->config_variant[0])
        memcpy(id->config_variant, g->config_variant, sizeof id->config_variant);
}

/* An option that says otherwise than the manifest / folder name: the message, or "" when none. */
static void run_identity_conflict(const struct np_identity *id, const struct np_identity *g, const char *src,
                                  char *msg, size_t size)
{
    msg[0] = '\0';
    if (g->recipe[0] && id->recipe[0] && strcmp(g->recipe, id->recipe) != 0)
        snprintf(msg, size, "--recipe %s contradicts the %s (%s)", g->recipe, src, id->recipe);
    else if (g->model_size[0] && id->model_size[0] && strcasecmp(g->model_size, id->model_size) != 0)
        snprintf(msg, size, "--size %s contradicts the %s (%s)", g->model_size, src, id->model_size);
    else if (g->precision[0] && id->precision[0] && strcmp(g->precision, id->precision) != 0)
        snprintf(msg, size, "--dtype %s contradicts the %s (%s)", g->precision, src, id->precision);
    else if (g->dtype && id->dtype && g->dtype != id->dtype)
        snprintf(msg, size, "--dtype %s contradicts the %s (%s)", np_dtype_name(g->dtype, 0), src,
                 np_dtype_name(id->dtype, 0));
    else if (g->gpus && id->gpus && g->gpus != id->gpus)
        snprintf(msg, size, "--gpus %d contradicts the %s (%d GPUs)", g->gpus, src, id->gpus);
    else if (g->gpu_type[0] && id->gpu_type[0] && strcasecmp(g->gpu_type, id->gpu_type) != 0)
        snprintf(msg, size, "--gpu %s contradicts the %s (%s)", g->gpu_type, src, id->gpu_type);
    else if (g->system[0] && id->system[0] && strcasecmp(g->system, id->system) != 0)
        snprintf(msg, size, "--system %s contradicts the %s (%s)", g->system, src, id->system);
    else if (g->seq_len && id->seq_len && g->seq_len != id->seq_len)
        snprintf(msg, size, "--seq-len %d contradicts the %s (%d)", g->seq_len, src, id->seq_len);
    else if (g->gbs && id->gbs && g->gbs != id->gbs)
        snprintf(msg, size, "--gbs %d contradicts the %s (%d)", g->gbs, src, id->gbs);
    else if (g->task[0] && id->task[0] && strcmp(g->task, id->task) != 0)
        snprintf(msg, size, "--task %s contradicts the %s (%s)", g->task, src, id->task);
}

/* The one GPU type every published row of the recipe is for, when the publication names no
 * system or the same one for every row (seeds 003/004: "h100"; seed 001: DGX-H100 only);
 * NULL when it covers several (seed 000). */
static const char *run_recipe_only_gpu(const struct np_recipe *r)
{
    const char *only = NULL, *system = NULL;
    int first = 1;
    for (size_t m = 0; r && m < r->nmodels; m++)
        for (size_t i = 0; i < r->models[m].nrows; i++) {
            const struct np_config_row *row = &r->models[m].rows[i];
            /* one GPU type, and one system or none (seed 001: every row on DGX-H100) */
            if (!first && ((only && strcasecmp(only, row->gpu_type) != 0) || !system != !row->system ||
                           (system && strcmp(system, row->system) != 0)))
                return NULL;
            only = row->gpu_type;
            system = row->system;
            first = 0;
        }
    return only;
}

/* ---- statistics ---- */

static int run_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Ascending; a window is a few dozen finite times: insertion sort, not qsort's merge sort and its calls. */
static void run_sort_doubles(double *v, size_t n)
{
    if (n > 64) {
        qsort(v, n, sizeof *v, run_cmp_double);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* NVIDIA's parser (dgxc-benchmarking v25.05 common/parse_train_timing.sh, see
 * ../shared/facts/seed000.md "Log line") averages iterations 11-44 of a 50-step run. */
#define RUN_NV_STEPS 50
#define RUN_NV_FIRST 11
#define RUN_NV_LAST 44

/* A step time no run has (more than a year) or a window whose mean or spread overflows: the
 * log is corrupt, not a slow run (issue 23: 1e308 s printed as "inf+-inf", status ok). */
#define RUN_STEP_MAX_S (365.0 * 86400)

static int run_times_out_of_range(const struct np_run *run, char *why, size_t size)
{
    const struct np_window_stats *w = &run->window;
    double t = !isnan(run->step_time_s) && run->step_time_s > RUN_STEP_MAX_S ? run->step_time_s
               : w->count && w->max_s > RUN_STEP_MAX_S                   ? w->max_s
                                                                          : NAN;
    if (!isnan(t)) {
        snprintf(why, size, "step time %.6g s is out of range (more than a year): the log is corrupt", t);
        return 1;
    }
    if (w->count && (!isfinite(w->mean_s) || !isfinite(w->stdev_s))) {
        snprintf(why, size, "the steady-state window's step times cannot be averaged (overflow)");
        return 1;
    }
    return 0;
}

void np_window_stats_of(struct np_window_stats *w, double *v, size_t n)
{
    w->count = n;
    w->mean_s = w->median_s = w->stdev_s = w->min_s = w->max_s = NAN;
    if (!n)
        return;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    w->mean_s = sum / n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - w->mean_s) * (v[i] - w->mean_s);
    w->stdev_s = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    if (w->stdev_s < 1e-9 * fabs(w->mean_s))
        w->stdev_s = 0.0; /* equal times: rounding noise of the mean, not spread */
    run_sort_doubles(v, n);
    w->min_s = v[0];
    w->max_s = v[n - 1];
    w->median_s = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void run_window(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o)
{
    struct np_window_stats *w = &run->window;
    w->first = w->last = -1;
    w->count = 0;
    w->requested = 0;
    w->rule = NULL;
    w->mean_s = w->median_s = w->stdev_s = w->min_s = w->max_s = NAN;
    if (!scan->nsteps)
        return;
    double *v = malloc(scan->nsteps * sizeof *v);
    if (!v)
        return;
    size_t n = 0;
    long lo = -1, hi = -1;
    if (o->steps_first >= 0) {
        lo = o->steps_first;
        hi = o->steps_last;
        w->rule = "--steps";
    } else if (!o->window_strict && run->bench_summary) {
        lo = run->bench_warmup; /* AutoModel's summary averages every iteration after its warm-up */
        hi = LONG_MAX;
        w->rule = "iterations after the warm-up (AutoModel's summary)";
    } else if (!o->window_strict && run->total == RUN_NV_STEPS - 1) {
        lo = RUN_NV_FIRST;
        hi = RUN_NV_LAST;
        w->rule = "iterations 11-44 of 50 (NVIDIA's parser)";
    }
    if (lo >= 0) {
        for (size_t i = 0; i < scan->nsteps; i++) {
            long it = scan->steps[i].iteration;
            if (it >= lo && it <= hi && isfinite(scan->steps[i].step_time_s)) {
                if (w->first < 0)
                    w->first = it;
                w->last = it;
                v[n++] = scan->steps[i].step_time_s;
            }
        }
    }
    if (lo >= 0 && n == 0 && o->steps_first < 0) /* none of 11-44 in the part read: the last steps found */
        lo = -1;
    if (lo < 0) {
        size_t want = o->window ? o->window : 10;
        int cut = scan->truncated_start;
        w->requested = want;
        w->rule = o->window_strict                     ? "--window"
                  : run->total == RUN_NV_STEPS - 1 && cut ? "last 10 steps (iterations 11-44 are before the part "
                                                            "of the log read: --all-steps reads them)"
                  : run->total == RUN_NV_STEPS - 1 ? "last 10 steps (the log has none of iterations 11-44)"
                                                   : "last 10 steps";
        size_t from = scan->nsteps > want ? scan->nsteps - want : 0;
        for (size_t i = from; i < scan->nsteps; i++) /* a step without its number is no window's step */
            if (isfinite(scan->steps[i].step_time_s) && scan->steps[i].iteration >= 0) {
                if (n == 0)
                    w->first = scan->steps[i].iteration;
                w->last = scan->steps[i].iteration;
                v[n++] = scan->steps[i].step_time_s;
            }
    }
    free(run->samples);
    run->samples = NULL;
    if (n && o->keep_samples && (run->samples = malloc(n * sizeof *run->samples)))
        memcpy(run->samples, v, n * sizeof *v); /* before the sort: the order of the steps */
    np_window_stats_of(w, v, n);
    free(v);
}

void np_run_set_why(struct np_run *run, const char *why)
{
    free(run->why);
    run->why = why ? strdup(why) : NULL;
}

/* Add a note after those already there. */
void np_run_add_note(struct np_run *run, const char *note)
{
    char *n = NULL;
    if (run->note && asprintf(&n, "%s; %s", run->note, note) < 0)
        n = NULL;
    else if (!run->note)
        n = strdup(note);
    if (n) {
        free(run->note);
        run->note = n;
    }
}

/* The fastest peak any known GPU has for dtype (the plausibility floor when the GPU is unknown). */
static double run_max_peak(enum np_dtype dtype, const char **which)
{
    double best = 0;
    for (const char *const *g = np_gpu_types(); *g; g++) {
        double p = np_gpu_peak_tflops(*g, dtype);
        if (p > best) {
            best = p;
            *which = *g;
        }
    }
    return best;
}

/* MFU above 100 %, or a step faster than the model's FLOPs allow on the peak: why, else 0. */
static int run_implausible(const struct np_run *run, char *why, size_t size)
{
    const struct np_identity *id = &run->id;
    double fastest = run->step_time_s;
    if (!isnan(run->window.min_s) && (isnan(fastest) || run->window.min_s < fastest))
        fastest = run->window.min_s;
    if (isnan(fastest) || !(run->flops_per_sample > 0) || id->gbs <= 0 || id->gpus <= 0)
        return 0;
    const char *gpu = id->gpu_type;
    double peak = run->peak_tflops;
    if (!(peak > 0))
        peak = run_max_peak(id->dtype ? id->dtype : NP_DTYPE_FP8, &gpu);
    if (!(peak > 0))
        return 0;
    /* the least time one step can take: GBS x FLOPs per sample over every GPU at its peak */
    double floor_s = id->gbs * run->flops_per_sample / (id->gpus * peak * 1e12);
    if (fastest >= floor_s)
        return 0;
    double mfu = 100.0 * floor_s / fastest;
    char m[48];
    if (isfinite(mfu) && mfu < 1e9)
        snprintf(m, sizeof m, "%.0f %%", mfu);
    else
        snprintf(m, sizeof m, "more than 1e9 %%");
    char up[16];
    size_t i = 0;
    for (; gpu[i] && i + 1 < sizeof up; i++)
        up[i] = (char)(gpu[i] >= 'a' && gpu[i] <= 'z' ? gpu[i] - 32 : gpu[i]);
    up[i] = '\0';
    snprintf(why, size, "step time %.4g s is below the %.4g s the model's FLOPs need on %d %s%s at %.0f TFLOP/s "
             "(MFU %s)", fastest, floor_s, id->gpus, up, run->peak_tflops > 0 ? "" : " (the fastest GPU known)",
             peak, m);
    return 1;
}

/* ---- fine-tuning FLOPs ---- */

static struct np_pack_table run_packs;
static int run_packs_ok;
static pthread_once_t run_packs_once = PTHREAD_ONCE_INIT;

static void run_packs_load(void) { run_packs_ok = np_pack_table_load_default(&run_packs, NULL) == NP_OK; }

/* FLOPs of one packed sequence (flops.h np_finetune_flops_per_pack): the pack statistics
 * measured from the packed training file the job read when it is at hand (as
 * Megatron-Bridge's calculate_avg_seqlen does, whole global batches only), else those of
 * share/nemoperf/packs/squad.tsv for the pack length.  NAN (with a note) when neither. */
static double run_finetune_flops(struct np_run *run, enum np_task task)
{
    const struct np_identity *id = &run->id;
    double tokens = NAN, sum_sq = NAN;
    char note[sizeof id->packed_train + sizeof ((struct np_error *)0)->text + 64] = "";
    if (id->packed_train[0]) {
        struct np_pack_stats ps = {0};
        struct np_error e;
        e.text[0] = '\0';
        if (np_npy_pack_stats(id->packed_train, id->gbs, &ps, &e) == NP_OK && ps.packs > 0) {
            np_pack_means(&ps, &tokens, &sum_sq);
            run->pack_source = "measured";
        } else {
            snprintf(note, sizeof note, "packed data %s not read (%s): pack statistics from the table",
                     id->packed_train, ps.packs == 0 && !e.text[0] ? "no whole global batch" : e.text);
        }
    }
    if (isnan(tokens)) {
        pthread_once(&run_packs_once, run_packs_load);
        const struct np_pack_ref *pr = run_packs_ok ? np_pack_table_find(&run_packs, id->seq_len) : NULL;
        if (pr) {
            tokens = pr->tokens_per_pack;
            sum_sq = pr->sum_sq_per_pack;
            run->pack_source = "table";
        } else {
            snprintf(note, sizeof note, "no pack statistics for packs of %d tokens (neither the packed .npy nor "
                     "share/nemoperf/packs/squad.tsv): no fine-tuning FLOPs, no MFU", id->seq_len);
        }
    }
    if (note[0])
        np_run_add_note(run, note);
    if (isnan(tokens))
        return NAN;
    return np_finetune_flops_per_pack(&run->model->arch, run->model->flops.kv_groups,
                                      task == NP_TASK_LORA ? 2.0 / 3.0 : 1.0, tokens, sum_sq);
}

/* --reference: compare the steady-state mean (or, --verdict last, the last step) with the
 * published throughput; two-sided. */
/* --reference for the recipe-driven families: the published row of the run's identity, then the verdict. */
static void run_reference(struct np_run *run, const struct np_parse_opts *o, const struct np_ref_table *ref)
{
    struct np_identity *id = &run->id;
    if (ref && run->model && run->gpu_source && !id->synthetic)
        run->ref = np_ref_find_task(ref, id->task[0] && strcmp(id->task, "pretrain") != 0 ? id->task
                                                                                           : np_model_task(run->model),
                                    id->recipe, id->model_size, id->dtype,
                                    id->gpu_type, id->gpus);
    np_run_verdict(run, o, !run->gpu_source ? "GPU type unknown (no manifest, no --gpu): not compared" : NULL);
}

void np_run_verdict(struct np_run *run, const struct np_parse_opts *o, const char *why_not)
{
    struct np_identity *id = &run->id;
    run->verdict = NP_VERDICT_NOT_COMPARED;
    run->ref_ratio = NAN;
    const struct np_metrics *mm = o->verdict_last ? &run->m : &run->steady;
    const char *why = NULL;
    char buf[256];
    if (id->kind != NP_KIND_BENCHMARK) /* first: what the run was for, whatever ran it */
        why = np_run_kind_why(id->kind);
    else if (id->synthetic)
        why = "synthetic workload (CPU work standing in for a GPU job): nothing published to compare";
    else if (why_not)
        why = why_not;
    else if (!run->ref) {
        const char *prec = np_identity_precision(id);
        snprintf(buf, sizeof buf, "nothing published for %s%s%s %s on %d %s", id->recipe[0] ? id->recipe : "?",
                 id->model_size[0] || !id->precision[0] ? " " : "",
                 id->model_size[0] ? id->model_size : id->precision[0] ? "" : "?", prec[0] ? prec : "?", id->gpus,
                 id->gpu_type);
        why = buf;
    } else if (!np_run_status_good(run->status)) {
        snprintf(buf, sizeof buf, "run is %s: not compared", np_run_status_name(run->status));
        why = buf;
    }
    if (!why) {
        double pub = run->ref->tokens_per_s, mine = mm->tokens_per_s;
        if (isnan(pub) && !isnan(run->ref->tokens_per_s_per_gpu)) {
            pub = run->ref->tokens_per_s_per_gpu;
            mine = mm->tokens_per_s_per_gpu;
        } else if (isnan(pub) && !isnan(run->ref->model_tflops_per_gpu)) { /* DFM publishes TFLOP/s/GPU only */
            pub = run->ref->model_tflops_per_gpu;
            mine = mm->model_tflops_per_gpu;
        }
        if (isnan(pub) || !(pub > 0) || isnan(mine))
            why = o->verdict_last ? "no throughput for the last step" : "no steady-state throughput (empty window)";
        else {
            run->ref_ratio = mine / pub;
            double tol = np_run_tolerance(run, o) / 100.0;
            run->verdict = run->ref_ratio < 1.0 - tol   ? NP_VERDICT_FAIL
                           : run->ref_ratio > 1.0 + tol ? NP_VERDICT_FAST
                                                        : NP_VERDICT_PASS;
        }
    }
    if (why)
        snprintf(run->ref_why, sizeof run->ref_why, "%s", why);
}

double np_run_tolerance(const struct np_run *run, const struct np_parse_opts *o)
{
    return o->tolerance_given || !run->family ? o->tolerance_pct : run->family->tolerance_pct;
}

void np_run_energy(struct np_run *run, const struct np_scan_result *scan, long first, long last)
{
    struct np_energy *e = &run->energy;
    for (int pass = 0; pass < 2 && scan && !e->steps; pass++) { /* the window's steps, else every step */
        double j = 0, w = 0;
        size_t nj = 0, nw = 0;
        for (size_t i = 0; i < scan->nsteps; i++) {
            const struct np_step *s = &scan->steps[i];
            if (!pass && (s->iteration < first || s->iteration > last || first < 0))
                continue;
            if (isfinite(s->energy_j_per_gpu) && s->energy_j_per_gpu >= 0) {
                j += s->energy_j_per_gpu;
                nj++;
            }
            if (isfinite(s->power_w_per_gpu) && s->power_w_per_gpu >= 0) {
                w += s->power_w_per_gpu;
                nw++;
            }
        }
        e->j_per_gpu_iter = nj ? j / nj : NAN;
        e->w_per_gpu = nw ? w / nw : NAN;
        e->steps = nj > nw ? nj : nw;
    }
    if (!e->steps)
        return;
    e->source = "log";
    char what[64];
    snprintf(what, sizeof what, "the log's --log-energy, %zu steps", e->steps);
    np_run_energy_derive(run, what);
}

void np_run_energy_derive(struct np_run *run, const char *what)
{
    struct np_energy *e = &run->energy;
    const struct np_identity *id = &run->id;
    if (!isnan(e->j_per_gpu_iter) && id->gpus > 0 && id->seq_len > 0 && id->gbs > 0) {
        e->j_per_token = e->j_per_gpu_iter * id->gpus / ((double)id->seq_len * id->gbs);
        e->tokens_per_kwh = e->j_per_token > 0 ? 3.6e6 / e->j_per_token : NAN;
        e->mwh_to_train = run->train_tokens > 0 ? e->j_per_token * run->train_tokens / 3.6e9 : NAN;
    }
    char note[300];
    snprintf(note, sizeof note, "energy (%s): %.1f W/GPU, %.1f J/iter/GPU", what, e->w_per_gpu, e->j_per_gpu_iter);
    if (!isnan(e->j_per_token))
        snprintf(note + strlen(note), sizeof note - strlen(note), ", %.4g J/token, %.4g tokens/kWh, %.4g MWh for %.3g tokens",
                 e->j_per_token, e->tokens_per_kwh, e->mwh_to_train, run->train_tokens);
    np_run_add_note(run, note);
}

const char *np_identity_precision(const struct np_identity *id)
{
    return id->precision[0] ? id->precision : id->dtype != NP_DTYPE_NONE ? np_dtype_name(id->dtype, 0) : "";
}

/* The one dtype every row of m is published in, or NP_DTYPE_NONE. */
static enum np_dtype run_single_dtype(const struct np_model *m)
{
    unsigned all = 0;
    for (size_t i = 0; i < m->nrows; i++)
        all |= m->rows[i].dtypes;
    return all == NP_DTYPE_BF16 || all == NP_DTYPE_FP8 ? (enum np_dtype)all : NP_DTYPE_NONE;
}

/* 1 when the run's step lines (NeMo 2.0 ProgressPrinter, NeMo 1.0 bar) carry no step time at all: the
 * timing callback was off.  The steps, loss, batch size and completeness are still read. */
static int run_untimed(const struct np_run *run, const struct np_scan_result *scan)
{
    if (!isnan(run->step_time_s) || run->window.count > 0 || (run->gen != NP_GEN_NEMO1 && run->gen != NP_GEN_NEMO2))
        return 0;
    for (size_t i = 0; i < scan->nsteps; i++)
        if (!isnan(scan->steps[i].step_time_s))
            return 0;
    return 1;
}

void np_run_analyse_start(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o)
{
    run->step = run->total = -1;
    run->complete = -1;
    run->step_time_s = run->flops_per_sample = run->peak_memory_bytes = run->loss = NAN;
    run->logged_tflops_per_gpu = run->ref_ratio = run->scaling_eff = run->logged_mfu_percent = NAN;
    run->train_tokens = o->train_tokens;
    np_metrics_from_step(NAN, 0, 0, 0, NAN, 0, 0, &run->m);
    run->steady = run->m;
    run->steps_seen = scan ? scan->nsteps : 0;
    run->runs_in_file = scan ? scan->runs : 0;
    run->window.first = run->window.last = -1;
    run->window.mean_s = run->window.median_s = run->window.stdev_s = run->window.min_s = run->window.max_s = NAN;
    run->energy.w_per_gpu = run->energy.j_per_gpu_iter = run->energy.j_per_token = NAN;
    run->energy.tokens_per_kwh = run->energy.mwh_to_train = NAN;
    run->energy.steps = 0;
    if (!run->job_id[0] && run->launch.job_id[0])
        snprintf(run->job_id, sizeof run->job_id, "%s", run->launch.job_id);
    if (!scan || scan->nsteps == 0)
        return;
    run->checkpoint_saved = scan->saw_checkpoint_save;
    run->checkpoint_loaded = scan->saw_checkpoint_load;
    const struct np_step *last = &scan->steps[scan->nsteps - 1];
    run->gen = last->gen;
    run->step = last->iteration;
    run->total = last->total;
    if (run->total < 0 && run->id.max_steps > 0)
        run->total = run->id.max_steps - 1;
    if (run->total < 0 && scan->max_steps_reached > 0) /* Lightning: "`max_steps=N` reached" */
        run->total = scan->max_steps_reached - 1;
    if (run->total >= 0 && run->step >= 0)
        run->complete = run->step >= run->total;
    if (scan->max_steps_reached > 0 && run->step >= 0)
        run->complete = 1; /* the trainer says it stopped at max_steps, whatever the bar last drew */
    else if (run->complete < 0 && last->bar_short)
        run->complete = 0; /* "81/43800" and no stop message: the run ended before its epoch did */
}

void np_run_analyse(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o,
                    const struct np_recipe_set *recipes, const struct np_ref_table *ref)
{
    struct np_identity *id = &run->id;
    np_run_analyse_start(run, scan, o);
    run->family = np_run_family_of(id, o);
    snprintf(id->family, sizeof id->family, "%s", run->family->name);
    if (run->family->analyse) { /* a family with its own reader of identity, window and published table */
        run->family->analyse(run, scan, o);
        return;
    }
    run->recipe = np_recipe_find(recipes, id->recipe);
    if (!run->recipe) /* not identified: no family is named for it (its descriptor still reads it) */
        id->family[0] = '\0';
    run->model = run->recipe ? np_model_find(run->recipe, id->model_size) : NULL;
    if (id->dtype == NP_DTYPE_NONE && run->model) /* a model published in one precision only */
        id->dtype = run_single_dtype(run->model);
    if (!run->gpu_source && id->gpu_type[0])
        run->gpu_source = run->id_source && strcmp(run->id_source, "manifest") == 0 ? "manifest" : "option";
    if (!id->gpu_type[0]) {
        const char *only = run_recipe_only_gpu(run->recipe);
        if (only) { /* seeds 003/004 publish for H100 only: that is what the recipe means */
            snprintf(id->gpu_type, sizeof id->gpu_type, "%s", only);
            run->gpu_source = "recipe";
        }
    }
    enum np_task task = NP_TASK_PRETRAIN;
    if (id->task[0] && np_task_parse(id->task, &task) != 0)
        task = NP_TASK_PRETRAIN;
    run->row = run->model && id->gpu_type[0] ? np_row_find_task(run->model, task, id->gpu_type, id->dtype, id->gpus)
                                             : NULL;
    if (run->row && !id->system[0] && run->row->system)
        snprintf(id->system, sizeof id->system, "%s", run->row->system);
    if (!scan || scan->nsteps == 0) {
        run->status = NP_RUN_NO_STEPS;
        np_run_set_why(run, "no training-step line in the logs");
        if (o->reference)
            run_reference(run, o, NULL);
        return;
    }
    const struct np_step *last = &scan->steps[scan->nsteps - 1];
    /* last known values, newest first */
    int nan_seen = last->nan_seen;
    long gbs_logged = -1;
    for (size_t i = scan->nsteps; i-- > 0;) {
        const struct np_step *s = &scan->steps[i];
        if (isnan(run->peak_memory_bytes) && !isnan(s->peak_memory_bytes))
            run->peak_memory_bytes = s->peak_memory_bytes;
        if (isnan(run->loss) && !isnan(s->loss))
            run->loss = s->loss;
        if (isnan(run->logged_tflops_per_gpu) && !isnan(s->tflops_per_gpu))
            run->logged_tflops_per_gpu = s->tflops_per_gpu;
        if (gbs_logged < 0 && s->global_batch_size > 0)
            gbs_logged = s->global_batch_size;
    }
    /* the manifest against the log: the log says what ran (its values are used), the disagreement is said */
    if (run->launch.present && !run->launch.bad[0]) {
        char note[200];
        if (run->launch.gbs > 0 && gbs_logged > 0 && gbs_logged != run->launch.gbs) {
            snprintf(note, sizeof note, "the manifest's GBS %d contradicts the log's %ld (the log's is used)",
                     run->launch.gbs, gbs_logged);
            np_run_add_note(run, note);
        }
        if (run->launch.max_steps > 0 && last->total >= 0 && last->total + 1 != run->launch.max_steps) {
            snprintf(note, sizeof note, "the manifest's max_steps %d contradicts the log's %ld steps (the log's are "
                     "used)", run->launch.max_steps, last->total + 1);
            np_run_add_note(run, note);
        }
    }
    run_window(run, scan, o);
    for (size_t i = 0; i < scan->nsteps; i++)
        if (scan->steps[i].nan_seen && scan->steps[i].iteration >= run->window.first &&
            scan->steps[i].iteration <= run->window.last)
            nan_seen = 1;
    /* GBS: the log line wins over the manifest/recipe */
    int gbs = gbs_logged > 0 && gbs_logged < 100000000 ? (int)gbs_logged : id->gbs;
    if (gbs <= 0 && run->row) /* what NVIDIA ran: a correction of the published cell wins */
        gbs = np_row_value(run->row, "gbs", run->row->gbs, NULL);
    id->gbs = gbs > 0 ? gbs : 0;
    if (!id->seq_len && run->row) /* fine-tuning: the pack length */
        id->seq_len = np_row_value(run->row, "seq_len", run->row->seq_len, NULL);
    if (!id->seq_len && run->model && run->model->nrows)
        id->seq_len = run->model->rows[0].seq_len;
    /* the time of a line without its step number is no step's: not shown beside a step it cannot name */
    run->step_time_s = last->iteration >= 0 ? last->step_time_s : NAN;
    if (isnan(run->step_time_s) && last->iteration >= 0 && last->tokens_per_s > 0 && id->seq_len && id->gbs)
        run->step_time_s = (double)id->seq_len * id->gbs / last->tokens_per_s;
    if (run->model && task != NP_TASK_PRETRAIN)
        run->flops_per_sample = run_finetune_flops(run, task);
    else if (run->model)
        run->flops_per_sample = np_model_flops_row(run->model, run->row, id->seq_len);
    run->peak_tflops = np_gpu_peak_tflops(id->gpu_type, id->dtype);
    /* the synthetic workload does CPU work: no GPU FLOPs, MFU or time to train mean anything */
    double flops = id->synthetic ? NAN : run->flops_per_sample, peak = id->synthetic ? 0 : run->peak_tflops;
    double tokens = id->synthetic ? 0 : o->train_tokens;
    np_metrics_from_step(run->step_time_s, id->seq_len, id->gbs, id->gpus, flops, peak, tokens, &run->m);
    np_metrics_from_step(run->window.mean_s, id->seq_len, id->gbs, id->gpus, flops, peak, tokens, &run->steady);
    if (isnan(run->m.tokens_per_s) && last->iteration >= 0 && last->tokens_per_s > 0) { /* AutoModel without seq/GBS */
        run->m.tokens_per_s = last->tokens_per_s;
        if (tokens > 0)
            run->m.days_to_train = tokens / last->tokens_per_s / 86400.0;
        if (id->gpus > 0)
            run->m.tokens_per_s_per_gpu = last->tokens_per_s / id->gpus;
        else if (last->tokens_per_s_per_gpu > 0)
            run->m.tokens_per_s_per_gpu = last->tokens_per_s_per_gpu;
    }
    np_run_energy(run, scan, run->window.first, run->window.last);
    /* after the log's energy: telemetry's stands in when the log prints none */
    np_run_system(run, scan, run->window.first, run->window.last);
    if (run->model && run->model->flops.conv == NP_FLOPS_DIT_WAN && !isnan(run->logged_tflops_per_gpu)) {
        char mb[200];
        snprintf(mb, sizeof mb, "Megatron-Bridge's logged TFLOP/s/GPU (%.1f) is its LLM formula, wrong for Wan at the "
                                "pinned MB: ignored (docs/dfm.md)", run->logged_tflops_per_gpu);
        np_run_add_note(run, mb);
        run->logged_tflops_per_gpu = NAN;
    }
    if (id->synthetic)
        np_run_add_note(run, "synthetic workload: CPU work standing in for the GPU job; no GPU MFU, TFLOP/s or "
                          "time to train");
    else if (!run->gpu_source && run->model)
        np_run_add_note(run, "GPU type unknown (no manifest, the folder name carries none, no --gpu; the recipe is "
                          "published for several GPU types): no MFU, no --reference comparison");

    char why[320];
    if (run->window.rule && strncmp(run->window.rule, "iterations 11-44", 16) == 0 &&
        run->window.count < RUN_NV_LAST - RUN_NV_FIRST + 1) {
        /* the tail read holds only part of NVIDIA's window: say so, the mean is of fewer steps */
        snprintf(why, sizeof why, "steady-state window holds %zu of NVIDIA's %d steps (iterations %ld-%ld; %s)",
                 run->window.count, RUN_NV_LAST - RUN_NV_FIRST + 1, run->window.first, run->window.last,
                 scan->truncated_start ? "the others are before the part of the log read: --all-steps reads them"
                                       : "the log has no others");
        np_run_add_note(run, why);
    }
    if (last->two_times && !isnan(last->step_time_s))
        np_run_add_note(run, "step time: the first of the two times of \"elapsed time per iteration (ms): A/B\" "
                          "(AMD Primus: A the step's own, B a running average)");
    if (run->conflict[0]) {
        run->status = NP_RUN_INVALID;
        np_run_set_why(run, run->conflict);
    } else if (nan_seen || (!isnan(last->step_time_s) && !isfinite(last->step_time_s)) ||
               (!isnan(run->step_time_s) && run->step_time_s <= 0)) {
        run->status = NP_RUN_INVALID;
        np_run_set_why(run, "NaN or infinite loss, grad norm or step time");
    } else if (run_times_out_of_range(run, why, sizeof why)) { /* 1e308 s: "inf+-inf", ok (issue 23) */
        run->status = NP_RUN_INVALID;
        np_run_set_why(run, why);
    } else if (last->iteration < 0) { /* "iteration -1/49": no step to count from (issue 23) */
        run->status = NP_RUN_INVALID;
        np_run_set_why(run, "the last step line has no valid iteration number: its step time is not used");
    } else if (!run->model || id->dtype == NP_DTYPE_NONE || id->gpus <= 0) {
        run->status = NP_RUN_UNIDENTIFIED;
        if (id->recipe[0] && !run->recipe)
            snprintf(why, sizeof why, "unknown recipe \"%s\"", id->recipe);
        else if (run->recipe && !run->model)
            snprintf(why, sizeof why, "recipe %s has no model size \"%s\"", id->recipe, id->model_size);
        else if (!run->model)
            snprintf(why, sizeof why, "no manifest, no pretrain_<recipe>_<size>_<dtype>_<gpus> folder, "
                                      "no --recipe/--size options");
        else if (id->dtype == NP_DTYPE_NONE)
            snprintf(why, sizeof why, "dtype unknown (--dtype)");
        else
            snprintf(why, sizeof why, "GPU count unknown (--gpus)");
        np_run_set_why(run, why);
    } else if (!id->synthetic && run_implausible(run, why, sizeof why)) {
        run->status = NP_RUN_IMPLAUSIBLE;
        np_run_set_why(run, why);
    } else if (run->complete == 0) {
        run->status = NP_RUN_INCOMPLETE;
        snprintf(why, sizeof why, "stopped at iteration %ld of %ld%s", run->step, run->total,
                 run_untimed(run, scan) ? "; its step lines carry no train_step_timing (timing callback off): no "
                                          "step time" : "");
        np_run_set_why(run, why);
    } else if (run_untimed(run, scan)) {
        run->status = NP_RUN_INVALID;
        snprintf(why, sizeof why, "%s without train_step_timing (timing callback off): %zu steps, last step %ld, "
                 "no step time", run->gen == NP_GEN_NEMO1 ? "NeMo 1.0 progress bar" : "NeMo 2.0 step lines",
                 scan->nsteps, run->step);
        np_run_set_why(run, why);
    } else if (isnan(run->step_time_s)) {
        run->status = NP_RUN_INVALID;
        np_run_set_why(run, "no step time in the last step line");
    } else {
        run->status = id->synthetic ? NP_RUN_SYNTHETIC : NP_RUN_OK;
    }
    if (o->reference)
        run_reference(run, o, ref);
}

/* ---- one folder ---- */

struct run_attempt {
    size_t file;          /* index into the group's files */
    unsigned long long job;
    unsigned long restart;
};

static int run_cmp_attempt(const void *a, const void *b)
{
    const struct run_attempt *x = a, *y = b;
    if (x->job != y->job)
        return x->job < y->job ? 1 : -1; /* newest job first */
    if (x->restart != y->restart)
        return x->restart < y->restart ? 1 : -1;
    return 0;
}

/* A walked folder and what came of it. */
struct run_slot {
    struct np_walk_group *g;
    struct np_run *runs;
    size_t n;
    char **errors;
    size_t nerrors;
    size_t files;
    unsigned long long bytes;
    int nomem;
    /* the folder's manifest, read once for all its runs (g->manifest) */
    int mread, mfrom;
    struct np_identity mid;
    struct np_launch_info mli;
    int foreign; /* route_foreign and the manifest names another reader's run: nothing read here */
};

/* The folders analysed so far (walk threads append), sorted at the end. */
struct run_job {
    pthread_mutex_t mu;
    pthread_cond_t pcv;   /* progress: everything finished */
    int finished;
    struct run_slot **slots;
    size_t nslots, cap;
    struct np_walk_counts counts;
    const struct np_parse_opts *o;
    const struct np_recipe_set *recipes;
    const struct np_ref_table *ref;
    /* np_parse_stream: the sink, and a folder holding only a manifest with the folders below it,
     * held until it is known whether a subfolder's logs use that manifest (run_drop_parent_manifests) */
    const struct np_run_sink *sink;
    struct run_slot **held;
    size_t nheld, capheld;
    struct np_parse_stats stats;
    char last_foreign[PATH_MAX]; /* the last foreign run folder handed on */
};

static void run_slot_text(struct run_slot *s, const char *buf);

static void run_slot_error(struct run_slot *s, const struct np_error *err)
{
    char buf[1200];
    np_error_format(err, buf, sizeof buf);
    run_slot_text(s, buf);
}

/* An option that contradicts the manifest or folder name is an error of the parse too. */
static void run_slot_conflict(struct run_slot *s, const struct np_run *run)
{
    if (!run->conflict[0])
        return;
    char buf[1400];
    snprintf(buf, sizeof buf, "%s: %s", run->path, run->conflict);
    run_slot_text(s, buf);
}

static void run_slot_text(struct run_slot *s, const char *buf)
{
    char **e = realloc(s->errors, (s->nerrors + 1) * sizeof *e);
    if (!e || !(e[s->nerrors] = strdup(buf))) {
        if (e)
            s->errors = e;
        s->nomem = 1;
        return;
    }
    s->errors = e;
    s->nerrors++;
}

static struct np_run *run_slot_add(struct run_slot *s, const char *path, const char *dir)
{
    struct np_run *r = realloc(s->runs, (s->n + 1) * sizeof *r);
    if (!r) {
        s->nomem = 1;
        return NULL;
    }
    s->runs = r;
    struct np_run *run = &r[s->n];
    memset(run, 0, sizeof *run);
    run->path = strdup(path);
    run->dir = strdup(dir);
    if (!run->path || !run->dir) {
        free(run->path);
        free(run->dir);
        s->nomem = 1;
        return NULL;
    }
    s->n++;
    return run;
}

static const char *run_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The manifest and the run folder's name (pretrain_<recipe>_<size>_<dtype>_<gpus>) disagree:
 * one of them was edited or copied; the message, or "" when they agree. */
static void run_manifest_vs_folder(const struct np_identity *m, const struct np_identity *f, char *msg, size_t size)
{
    msg[0] = '\0';
    if (f->gpus && m->gpus != f->gpus)
        snprintf(msg, size, "nemoperf.json says %d GPUs, the folder name %d", m->gpus, f->gpus);
    else if (f->recipe[0] && strcmp(m->recipe, f->recipe) != 0)
        snprintf(msg, size, "nemoperf.json says recipe %s, the folder name %s", m->recipe, f->recipe);
    else if (f->model_size[0] && strcasecmp(m->model_size, f->model_size) != 0)
        snprintf(msg, size, "nemoperf.json says model size %s, the folder name %s", m->model_size, f->model_size);
    else if (f->dtype && m->dtype != f->dtype)
        snprintf(msg, size, "nemoperf.json says %s, the folder name %s", np_dtype_name(m->dtype, 0),
                 np_dtype_name(f->dtype, 0));
}

/* The folder's manifest, read on first use (a folder's logs share it). */
static void run_slot_manifest(struct run_slot *s)
{
    if (s->mread)
        return;
    s->mread = 1;
    if (s->g->manifest)
        s->mfrom = np_manifest_read(s->g->manifest, &s->mid, &s->mli);
}

static void run_identify(struct np_run *run, struct run_slot *slot, const struct np_parse_opts *o)
{
    const char *src = NULL;
    const char *manifest = slot->g->manifest;
    run_slot_manifest(slot);
    struct np_identity mid = slot->mid;
    run->launch = slot->mli;
    int from_manifest = manifest && slot->mfrom;
    struct np_identity fid;
    memset(&fid, 0, sizeof fid);
    if (manifest && run->launch.bad[0]) {
        /* a manifest that cannot be trusted: the run is invalid, whatever else identifies it */
        snprintf(run->conflict, sizeof run->conflict, "nemoperf.json cannot be trusted: %.160s", run->launch.bad);
        run->id_source = "manifest";
    } else if (from_manifest) {
        run->id = mid;
        run->id_source = "manifest";
        src = "manifest";
        if (np_identity_from_path(run->path, &fid))
            run_manifest_vs_folder(&mid, &fid, run->conflict, sizeof run->conflict);
    } else if (np_identity_from_path(run->path, &run->id)) {
        run->id_source = "folder";
        src = "folder name";
    } else if (o->given.recipe[0] || o->given.gpus) {
        run->id_source = "options";
    }
    if (src && !run->conflict[0])
        run_identity_conflict(&run->id, &o->given, src, run->conflict, sizeof run->conflict);
    if (run->id.gpu_type[0])
        run->gpu_source = "manifest";
    else if (o->given.gpu_type[0])
        run->gpu_source = "option";
    run_identity_fill(&run->id, &o->given);
    if (!run->id.experiment[0]) {
        const char *b = run_basename(run->dir);
        size_t len = strlen(b);
        if (!len || strcmp(b, ".") == 0 || strcmp(b, "..") == 0) { /* a log given in the current folder: its name */
            b = run_basename(run->path);
            const char *dot = strrchr(b, '.');
            len = dot && dot > b ? (size_t)(dot - b) : strlen(b);
        }
        run_copy(run->id.experiment, sizeof run->id.experiment, b, len);
    }
}

/* The job id in a log's name: log-<exp>_<job>_<restart>.out or sbatch_<exp>_<job>.out. */
static void run_job_from_name(struct np_run *run, const char *path)
{
    const char *b = run_basename(path);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(run_re_attempt, NULL);
    if (!md)
        return;
    if (pcre2_match(run_re_attempt, (PCRE2_SPTR)b, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 3 ||
        pcre2_match(run_re_sbatch, (PCRE2_SPTR)b, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 2) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        run_copy(run->job_id, sizeof run->job_id, b + ov[2], ov[3] - ov[2]);
    }
    pcre2_match_data_free(md);
}

static int run_add_log_error(struct np_run *run, struct run_slot *slot, int replace);

/* A run that stopped before its last step: failed when its logs say why (a Slurm kill, OOM, NCCL); else, when
 * launch submitted it, the log may end there because the job is still at it, which --slurm can tell. */
static void run_incomplete_end(struct np_run *run, struct run_slot *slot)
{
    if (run->status != NP_RUN_INCOMPLETE)
        return;
    if (run_add_log_error(run, slot, 0))
        run->status = NP_RUN_FAILED;
    else if (run->launch.submitted && run->why) {
        char why[320];
        snprintf(why, sizeof why, "%s (or still running: --slurm asks the scheduler)", run->why);
        np_run_set_why(run, why);
    }
}

/* ---- AutoModel benchmark logs (amlog.c): read when the scanner finds no NeMo step line ---- */

/* The summary's average is seed 001's "Time per Global Step": the run's step time and its steady
 * state (the window shows the iterations it averages).  The setup line's TFLOPs are the whole step
 * on all GPUs. */
static void run_apply_amlog(struct np_run *run, const struct np_amlog_summary *s, const struct np_parse_opts *o,
                            const struct np_ref_table *ref)
{
    struct np_identity *id = &run->id;
    if (s->avg_mfu_percent >= 0)
        run->logged_mfu_percent = s->avg_mfu_percent;
    if (!(s->avg_step_time_s > 0) || !isfinite(s->avg_step_time_s) || run->status == NP_RUN_INVALID ||
        run->status == NP_RUN_NO_STEPS)
        return;
    double flops = id->synthetic ? NAN : run->flops_per_sample, peak = id->synthetic ? 0 : run->peak_tflops;
    double tokens = id->synthetic ? 0 : o->train_tokens;
    run->step_time_s = s->avg_step_time_s;
    np_metrics_from_step(run->step_time_s, id->seq_len, id->gbs, id->gpus, flops, peak, tokens, &run->m);
    run->steady = run->m;
    np_run_add_note(run, "this AutoModel log prints only its summary: the LAST_ figures are its average over the "
                         "window (the 'Time per Global Step' of NVIDIA's AutoModel table), not one step");
    if (s->step_tflops > 0 && id->gpus > 0 && !id->synthetic) {
        run->logged_tflops_per_gpu = s->step_tflops / id->gpus / s->avg_step_time_s;
        run->logged_steady = 1;
    }
    if (o->reference)
        run_reference(run, o, ref);
}

/* A new run of the slot for path (attempts: the folder's restart logs), identified (run_identify), its job id
 * from the log's name when that left none and from_name; NULL when out of memory (slot->nomem). */
static struct np_run *run_slot_new_run(struct run_job *j, struct run_slot *slot, const char *path, size_t attempts,
                                       int from_name)
{
    struct np_run *run = run_slot_add(slot, path, slot->g->dir);
    if (run) {
        run->attempts = attempts;
        run_identify(run, slot, j->o);
        if (!run->launch.job_id[0] && from_name)
            run_job_from_name(run, path);
    }
    return run;
}

static int run_scan_automodel(struct run_job *j, struct run_slot *slot, const char *path, size_t attempts)
{
    struct np_scan_result res;
    struct np_amlog_summary sum;
    struct np_error err;
    if (np_amlog_read(path, &res, &sum, &err) != NP_OK) {
        run_slot_error(slot, &err);
        return 0;
    }
    if (sum.companion_status != NP_OK)
        run_slot_error(slot, &sum.companion); /* the run is still read from its stdout file */
    int found = 0;
    if (sum.seen) {
        slot->bytes += res.bytes_read;
        struct np_run *run = run_slot_new_run(j, slot, path, attempts, 1);
        if (run) {
            if (sum.warmup_steps >= 0 && sum.timed_steps > 0) /* the summary names the last iteration */
                run->id.max_steps = (int)(sum.warmup_steps + sum.timed_steps);
            run->bench_summary = sum.warmup_steps >= 0;
            run->bench_warmup = sum.warmup_steps;
            for (size_t i = 0; sum.gbs > 0 && i < res.nsteps; i++)
                res.steps[i].global_batch_size = sum.gbs;
            np_run_analyse(run, &res, j->o, j->recipes, j->ref);
            run_apply_amlog(run, &sum, j->o, j->ref);
            run_slot_conflict(slot, run);
            run_incomplete_end(run, slot);
        }
        found = res.nsteps > 0;
    }
    np_scan_result_free(&res);
    return found;
}

/* Scan one log into a new run of the slot when it has steps (or always, with force). */
/* NCCL's network fallbacks in every report, not only --nccl's: the init lines of the log's first RUN_NET_HEAD bytes
 * (NCCL prints them at its first communicator, each rank) that say the network (RUN_NET_KEYS) read by the NCCL
 * reader, its warnings (a multi-node run on sockets, GPU Direct RDMA off, a net plugin that failed to load) into
 * the run's notes and run->net_warnings.  Every one is about traffic between nodes: a run on one node (GPUs at most
 * its row's GPUs per node, else 8) is not read; nor more than the first RUN_NET_LINES of NCCL's lines (each rank says
 * its network at its init; a node count older NCCLs give only by their hosts may be missed: --nccl reads it all).
 * Off with --nccl (opts->net_head 0), which reads the whole log. */
#define RUN_NET_HEAD ((size_t)64 << 10)
#define RUN_NET_LINES 256
#define RUN_NET_AFTER 32

/* A line (after "NCCL INFO ") that says the network: what nccl.c's init-line reader takes for the warnings,
 * found by its start, not searched for. */
static int run_net_line(const char *l, size_t n)
{
#define RUN_STARTS(lit) (n >= sizeof lit - 1 && memcmp(l, lit, sizeof lit - 1) == 0)
    if (RUN_STARTS("Using network ") || RUN_STARTS("NET/") || RUN_STARTS("comm ") || RUN_STARTS("ncclCommInitRank"))
        return 1;
    return (RUN_STARTS("Channel ") || RUN_STARTS("Ring ")) && memmem(l, n, "via NET/Socket", 14);
#undef RUN_STARTS
}

/* memmem(p, n, lit, len) found by memchr of lit[k] (a byte rare in logs): glibc's memmem costs a few instructions a
 * byte, and a multi-node log's 64 KiB head is searched to its end when its NCCL lines end early. */
static const char *run_find(const char *p, size_t n, const char *lit, size_t len, size_t k)
{
    if (n < len)
        return NULL;
    for (const char *q = p + k, *last = p + (n - len) + k; q <= last; q++) {
        if (!(q = memchr(q, lit[k], (size_t)(last - q) + 1)))
            return NULL;
        if (memcmp(q - k, lit, len) == 0)
            return q - k;
    }
    return NULL;
}
#define RUN_FIND(p, n, lit, k) run_find(p, n, lit, sizeof lit - 1, k)

/* fd: the log, still open from its scan (np_scan_opts.keep_open): its head is read from it, nothing opened again. */
static void run_net_head(struct np_run *run, int fd, const struct np_parse_opts *o)
{
    int per_node = run->row && run->row->gpus_per_node > 0 ? run->row->gpus_per_node : 8;
    if (!o->net_head || fd < 0 || (run->id.gpus > 0 && run->id.gpus <= per_node))
        return;
    char *buf = malloc(2 * RUN_NET_HEAD);
    ssize_t k = buf ? pread(fd, buf, RUN_NET_HEAD, 0) : -1;
    size_t n = k > 0 ? (size_t)k : 0, m = 0;
    char *net = buf ? buf + RUN_NET_HEAD : NULL; /* the network's lines, whole */
    /* the first RUN_NET_LINES of NCCL's lines (each rank prints its network at its init); a network other than
     * sockets: RUN_NET_AFTER more (its GDR and plugin lines come with it), no node count needed */
    size_t lines = 0, stop = RUN_NET_LINES;
    for (const char *p = buf, *end = buf + n, *hit;
         p && lines++ < stop && (hit = RUN_FIND(p, (size_t)(end - p), "NCCL INFO ", 3));) {
        const char *ls = hit > p ? memrchr(p, '\n', (size_t)(hit - p)) : NULL, *le = memchr(hit, '\n', (size_t)(end - hit));
        ls = ls ? ls + 1 : p;
        if (!le)
            break; /* a line cut by the head's end */
        if (stop == RUN_NET_LINES && le - hit > 24 && memcmp(hit + 10, "Using network ", 14) == 0 &&
            memcmp(hit + 24, "Socket", le - hit - 24 < 6 ? (size_t)(le - hit - 24) : 6) != 0)
            stop = lines + RUN_NET_AFTER;
        if (run_net_line(hit + 10, (size_t)(le - hit - 10))) {
            memcpy(net + m, ls, (size_t)(le - ls) + 1);
            m += (size_t)(le - ls) + 1;
        }
        p = le + 1;
    }
    /* every warning needs one of these in the network's lines (a socket network or channel, GDR disabled, a plugin's
     * line): without them the reader (200 KiB to set up) is not asked */
    int suspect = m && (RUN_FIND(net, m, "Socket", 0) || RUN_FIND(net, m, "RDMA Disabled", 0) ||
                        RUN_FIND(net, m, "NET/Plugin", 4));
    struct np_nccl *nc = suspect ? np_nccl_new() : NULL;
    if (nc && np_nccl_feed(nc, net, m) == NP_OK && np_nccl_finish(nc) == NP_OK) {
        char w[1024];
        size_t count = np_nccl_warnings(nc, w, sizeof w);
        if (count) {
            run->net_warnings = (int)count;
            np_run_add_note(run, w);
        }
    }
    np_nccl_free(nc);
    free(buf);
}

static int run_scan_one(struct run_job *j, struct run_slot *slot, const char *path, const struct np_scan_opts *so,
                        size_t attempts)
{
    struct np_scan_result res;
    struct np_error err;
    memset(&res, 0, sizeof res);
    slot->files++;
    int found = 0;
    /* open relative to the folder the walk holds open: no path walk per file */
    int dfd = slot->g->dirfd >= 0 ? slot->g->dirfd : AT_FDCWD;
    const char *name = dfd == AT_FDCWD ? path : run_basename(path);
    struct np_scan_opts sok = *so;
    sok.keep_open = j->o->net_head; /* run_net_head reads the head through it */
    if (np_scan_fileat(dfd, name, path, &sok, &res, &err) != NP_OK) {
        run_slot_error(slot, &err);
    } else {
        slot->bytes += res.bytes_read;
        if (res.nsteps) {
            struct np_run *run = run_slot_new_run(j, slot, path, attempts, 1);
            if (run) {
                if (slot->g->manifest && !run->launch.present) {
                    char note[1200];
                    snprintf(note, sizeof note, "%s is not a JSON manifest nemoperf can read: identity from the "
                             "folder name or options", slot->g->manifest);
                    np_run_add_note(run, note);
                }
                np_amlog_header_total(dfd, name, &res); /* AutoModel: the step total of the setup header */
                np_scan_stop_message(dfd, name, &res);  /* Lightning: "`max_steps=N` reached" */
                np_run_analyse(run, &res, j->o, j->recipes, j->ref);
                run_net_head(run, res.fd, j->o);
                /* not "no manifest" when there is one nemoperf cannot read (issue 13) */
                if (run->status == NP_RUN_UNIDENTIFIED && slot->g->manifest && !run->launch.present &&
                    run->why && strncmp(run->why, "no manifest, ", 13) == 0) {
                    char why[400];
                    snprintf(why, sizeof why, "its nemoperf.json is not a JSON manifest nemoperf can read, %s",
                             run->why + 13);
                    np_run_set_why(run, why);
                }
                run_slot_conflict(slot, run);
                /* stopped early and the logs say why (a Slurm kill, OOM, NCCL): it failed */
                run_incomplete_end(run, slot);
            }
            found = 1;
        } else {
            found = run_scan_automodel(j, slot, path, attempts);
        }
        if (res.fd >= 0)
            close(res.fd);
    }
    np_scan_result_free(&res);
    return found;
}

/* The last error of the folder's logs (newest attempt first; a Slurm message anywhere wins)
 * into why, after what it says already (append) or instead of it.  1 when one was found. */
static int run_add_log_error(struct np_run *run, struct run_slot *slot, int replace)
{
    const struct np_walk_group *g = slot->g;
    char best[300] = "", msg[300];
    enum np_log_error kind = NP_LOGERR_NONE;
    int dfd = g->dirfd >= 0 ? g->dirfd : AT_FDCWD;
    for (size_t f = g->nfiles; f-- > 0;) { /* names sort by job and attempt: the newest last */
        const char *name = dfd == AT_FDCWD ? g->files[f] : run_basename(g->files[f]);
        enum np_log_error k = np_log_last_error_at(dfd, name, msg, sizeof msg);
        if (k == NP_LOGERR_SLURM || (k != NP_LOGERR_NONE && kind == NP_LOGERR_NONE)) {
            if (kind == NP_LOGERR_SLURM)
                continue;
            kind = k;
            memcpy(best, msg, sizeof best);
        }
    }
    if (kind == NP_LOGERR_NONE)
        return 0;
    char buf[700];
    if (replace || !run->why)
        snprintf(buf, sizeof buf, "%s", best);
    else
        snprintf(buf, sizeof buf, "%s; %s", run->why, best);
    np_run_set_why(run, buf);
    return 1;
}

/* A folder without steps: what launch recorded, what the logs end with. */
static void run_no_steps(struct np_run *run, struct run_slot *slot)
{
    const struct np_launch_info *li = &run->launch;
    char why[400];
    int unsure = li->present && !li->submitted &&
                 (strcmp(li->state, "submitting") == 0 || strcmp(li->state, "unknown") == 0);
    if (li->bad[0]) { /* nothing it says is believed: not "not submitted" either (issue 23) */
        run->status = NP_RUN_INVALID;
        np_run_set_why(run, run->conflict);
        return;
    }
    if (li->present && !li->submitted && !unsure) {
        run->status = NP_RUN_NOT_SUBMITTED;
        snprintf(why, sizeof why, "launch did not get the job accepted%s%s%s%s", li->state[0] ? " (state " : "",
                 li->state, li->state[0] ? ")" : "", li->error[0] ? ": " : "");
        size_t l = strlen(why);
        snprintf(why + l, sizeof why - l, "%s", li->error);
        np_run_set_why(run, why);
        return;
    }
    if (slot->g->nfiles && run_add_log_error(run, slot, 1)) {
        run->status = NP_RUN_FAILED;
        return;
    }
    if (slot->g->nfiles && slot->nerrors > 0) { /* not "no steps" when logs were unreadable (issue 13) */
        snprintf(why, sizeof why, "%zu log%s could not be read (see the error%s above); no training-step line in the "
                 "others", slot->nerrors, slot->nerrors == 1 ? "" : "s", slot->nerrors == 1 ? "" : "s");
        np_run_set_why(run, why);
        return;
    }
    if (slot->g->nfiles)
        return; /* logs without steps and without an error: no-steps */
    run->status = NP_RUN_NO_LOG;
    if (unsure)
        snprintf(why, sizeof why, "launch recorded the submission as \"%s\"%s%s: the job may exist, no log found",
                 li->state, li->error[0] ? ": " : "", li->error);
    else if (li->present)
        snprintf(why, sizeof why, "job %s submitted%s%s, no log found (--slurm asks the scheduler)",
                 li->job_id[0] ? li->job_id : "?", li->submit_time[0] ? " at " : "", li->submit_time);
    else if (slot->g->manifest)
        snprintf(why, sizeof why, "%s is not a JSON manifest nemoperf can read; no log found", slot->g->manifest);
    else
        snprintf(why, sizeof why, "no log found");
    np_run_set_why(run, why);
}

/* An nccl-tests run (its manifest names the workload): one run per step of the job's steps file, made in the run
 * folder (the manifest's own); the folders below it (nccl-tests/) hold the outputs those runs read and make none. */
static void run_group_nccltests(struct run_job *j, struct run_slot *slot)
{
    const struct np_walk_group *g = slot->g;
    size_t dl = strlen(g->manifest) - strlen(run_basename(g->manifest));
    if (dl)
        dl--; /* the manifest's folder, without its '/' */
    if (strlen(g->dir) != dl || strncmp(g->dir, g->manifest, dl) != 0)
        return;
    struct np_ncclt_steps steps;
    struct np_error err = {0};
    enum np_status st = np_ncclt_steps_read(g->manifest, &steps, &err);
    if (st != NP_OK || steps.n == 0) { /* no step yet: the run folder is one run, launch's record says why */
        if (st != NP_OK && st != NP_E_NOTFOUND)
            run_slot_error(slot, &err);
        struct np_run *run = run_slot_new_run(j, slot, g->dir, 0, 0);
        if (run) {
            np_run_analyse(run, NULL, j->o, j->recipes, j->ref);
            run_no_steps(run, slot);
            if (run->status == NP_RUN_NO_STEPS || (run->status == NP_RUN_NO_LOG && st == NP_E_NOTFOUND)) {
                char why[600];
                snprintf(why, sizeof why, "nccl-tests: %.500s", err.text[0] ? err.text : "no step listed");
                np_run_set_why(run, why);
            }
        }
        np_ncclt_steps_free(&steps);
        return;
    }
    for (size_t i = 0; i < steps.n && !slot->nomem; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", g->dir, steps.v[i].file) >= (int)sizeof path)
            continue;
        struct np_run *run = run_slot_new_run(j, slot, path, 0, 0);
        if (!run)
            break;
        np_ncclt_run_step(run, &steps.v[i], steps.gpu_type);
        np_run_analyse(run, NULL, j->o, j->recipes, j->ref);
        slot->files++;
    }
    np_ncclt_steps_free(&steps);
}

/* Logs without steps and without a manifest: those that are nccl-tests outputs (a result table read,
 * parse/nccltests.h) are fabric steps of their own, named by their file (a user's own nccl-tests runs). */
static void run_group_bare_nccltests(struct run_job *j, struct run_slot *slot)
{
    const struct np_walk_group *g = slot->g;
    for (size_t f = 0; f < g->nfiles && !slot->nomem; f++) {
        /* first a look at the head: a table's header says "busbw", its footer "Avg bus bandwidth" or "Out of
         * bounds values" (every version); rows alone do not make a file nccl-tests' */
        char head[65536];
        int fd;
        struct np_error err;
        if (np_file_open_regular(AT_FDCWD, g->files[f], &fd, &err) != NP_OK)
            continue;
        ssize_t got = read(fd, head, sizeof head);
        close(fd);
        if (got <= 0 || (!memmem(head, (size_t)got, "busbw", 5) && !memmem(head, (size_t)got, "Avg bus bandwidth", 17) &&
                         !memmem(head, (size_t)got, "Out of bounds values", 20)))
            continue;
        struct np_nccl_result r;
        if (np_nccltests_read(g->files[f], &r, &err) != NP_OK || r.nrows == 0) {
            np_nccl_result_free(&r);
            continue;
        }
        struct np_ncclt_step_info s;
        memset(&s, 0, sizeof s);
        const char *b = run_basename(g->files[f]);
        size_t bl = strlen(b);
        if (bl > 4 && strcmp(b + bl - 4, ".out") == 0)
            bl -= 4;
        snprintf(s.name, sizeof s.name, "%.*s", (int)(bl < sizeof s.name ? bl : sizeof s.name - 1), b);
        /* the collective: the output's "Collective test starting: all_reduce_perf", else the file's name */
        const char *c = r.collective[0] ? r.collective : s.name;
        const char *perf = strstr(c, "_perf");
        snprintf(s.collective, sizeof s.collective, "%.*s", perf ? (int)(perf - c) : 0, c);
        snprintf(s.scope, sizeof s.scope, "%s", r.nhosts > 1 ? "inter" : r.nhosts == 1 ? "intra" : "all");
        snprintf(s.file, sizeof s.file, "%s", b);
        s.nnodes = r.nhosts;
        s.gpus_per_node = r.nhosts > 0 && r.nranks % r.nhosts == 0 ? r.nranks / r.nhosts : 0;
        np_nccl_result_free(&r);
        struct np_run *run = run_slot_new_run(j, slot, g->files[f], 0, 1);
        if (!run)
            break;
        np_ncclt_run_step(run, &s, NULL);
        np_run_analyse(run, NULL, j->o, j->recipes, j->ref);
    }
}

static void run_group(struct run_job *j, struct run_slot *slot)
{
    const struct np_walk_group *g = slot->g;
    if (g->manifest) {
        run_slot_manifest(slot);
        if (slot->mfrom && slot->mid.kind == NP_KIND_NCCLTESTS) {
            run_group_nccltests(j, slot);
            return;
        }
    }
    /* a run another reader owns (a Megatron-Bridge manifest): handed on unread, decided here in the one walk
     * (a walk of its own before every parse doubled the cost of a tree of small runs: issue 22's bench) */
    if (j->o->route_foreign && g->manifest) {
        run_slot_manifest(slot);
        if (slot->mli.foreign[0]) {
            slot->foreign = 1;
            return;
        }
    }
    struct np_scan_opts so = {0};
    so.all_steps = j->o->all_steps || j->o->steps_first >= 0;
    /* Default mode reads each log's tail only: enough for the last step (the seeds' rule) and for
     * as many of the last N steps as the tail holds.  --window N insists on N steps. */
    so.window = j->o->window_strict && j->o->window ? j->o->window : 1;
    /* tail mode parses only the steps the window can use: NVIDIA's 11-44 of 50 needs the last 39 */
    so.keep = j->o->window_strict && j->o->window ? j->o->window : 40;
    so.lean = 1; /* of the steps before the last, np_run_analyse reads the times, the NaN flags and the newest
                    known loss, batch size, peak memory and TFLOPS: what lean mode keeps */

    struct run_attempt *att = malloc((g->nfiles ? g->nfiles : 1) * sizeof *att);
    char *is_att = calloc(g->nfiles ? g->nfiles : 1, 1);
    if (!att || !is_att) {
        free(att);
        free(is_att);
        slot->nomem = 1;
        return;
    }
    size_t natt = 0;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(run_re_attempt, NULL);
    for (size_t f = 0; md && f < g->nfiles; f++) {
        const char *b = run_basename(g->files[f]);
        if (pcre2_match(run_re_attempt, (PCRE2_SPTR)b, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 3) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            att[natt].file = f;
            att[natt].job = strtoull(b + ov[2], NULL, 10);
            att[natt].restart = strtoul(b + ov[4], NULL, 10);
            is_att[f] = 1;
            natt++;
        }
    }
    pcre2_match_data_free(md);
    qsort(att, natt, sizeof *att, run_cmp_attempt);

    /* restart attempts: the newest one that has steps */
    int have_run = 0;
    for (size_t a = 0; a < natt && !have_run; a++)
        have_run = run_scan_one(j, slot, g->files[att[a].file], &so, natt);
    /* every other log of the folder is a run of its own when it has steps, except the batch
     * script's own output (sbatch_<exp>_<job>.out) beside a srun log that has them: the job's
     * steps are in the srun log, and reading its companion would cost a file per run */
    for (size_t f = 0; f < g->nfiles; f++)
        if (!is_att[f] && !(have_run && strncmp(run_basename(g->files[f]), "sbatch_", 7) == 0))
            run_scan_one(j, slot, g->files[f], &so, 0);
    if (slot->n == 0 && !g->manifest && g->nfiles)
        run_group_bare_nccltests(j, slot);
    if (slot->n == 0) {
        const char *path = natt ? g->files[att[0].file] : g->nfiles ? g->files[0] : g->dir;
        struct np_run *run = run_slot_new_run(j, slot, path, natt, g->nfiles > 0);
        if (run) {
            np_run_analyse(run, NULL, j->o, j->recipes, j->ref);
            run_no_steps(run, slot);
            run_slot_conflict(slot, run);
        }
    }
    free(att);
    free(is_att);
}

/* Twice the cores by default: a worker waiting in the kernel (a folder or log not in the page
 * cache, a lock holder the scheduler put aside on a busy machine) leaves its core to another;
 * measured on a 20 000-run tree under load 19: 0.90 s with 4 threads vs 1.04 s with 2. */
/* Threads: -j, else twice the online CPUs of which only one per CPU works while the logs are in the
 * page cache (more would only take turns on the cores: measured on bench shape b, 0.61 s with 2 threads
 * vs 0.73 s with 4 on 2 cores); the others start at the first read that waits for the disk, where a
 * thread blocked in the kernel leaves its core to another (shape b under load: 0.90 s with 4 vs 1.04 s). */
static int run_threads(const struct np_parse_opts *o, struct np_walk_pace *pace)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = ncpu > 0 ? (int)(ncpu > 32 ? 32 : ncpu) : 1;
    pace->active = o->jobs > 0 ? 0 : cores;
    pace->cold = np_scan_cold;
    return o->jobs > 0 ? o->jobs : 2 * cores;
}

static double run_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run_slot_clear(struct run_slot *slot)
{
    for (size_t i = 0; i < slot->n; i++) {
        np_run_clear(&slot->runs[i]);
    }
    slot->n = 0;
    slot->foreign = 0;
}

static void run_slot_destroy(struct run_slot *slot)
{
    if (!slot)
        return;
    run_slot_clear(slot);
    for (size_t i = 0; i < slot->nerrors; i++)
        free(slot->errors[i]);
    free(slot->runs);
    free(slot->errors);
    np_walk_group_free(slot->g);
    free(slot);
}

/* A new slot holding g (taken: freed on failure) with its folder analysed (run_group); NULL: out of memory. */
static struct run_slot *run_slot_new(struct run_job *j, struct np_walk_group *g)
{
    struct run_slot *slot = calloc(1, sizeof *slot);
    if (!slot) {
        np_walk_group_free(g);
        return NULL;
    }
    slot->g = g;
    run_group(j, slot);
    g->dirfd = -1; /* open only during this call */
    return slot;
}

/* Walk callback, on a walk thread: analyse the folder now, keep the result. */
static enum np_status run_folder(void *ctx, struct np_walk_group *g)
{
    struct run_job *j = ctx;
    struct run_slot *slot = run_slot_new(j, g);
    if (!slot)
        return NP_E_NOMEM;
    pthread_mutex_lock(&j->mu);
    if (j->nslots == j->cap) {
        size_t nc = j->cap ? j->cap * 2 : 256;
        struct run_slot **ns = realloc(j->slots, nc * sizeof *ns);
        if (!ns) {
            pthread_mutex_unlock(&j->mu);
            run_slot_destroy(slot);
            return NP_E_NOMEM;
        }
        j->slots = ns;
        j->cap = nc;
    }
    j->slots[j->nslots++] = slot;
    pthread_mutex_unlock(&j->mu);
    return NP_OK;
}

static int run_cmp_slots(const void *a, const void *b)
{
    return np_walk_group_cmp((*(struct run_slot *const *)a)->g, (*(struct run_slot *const *)b)->g);
}

static enum np_status run_add_error(struct np_parse_result *res, const char *msg)
{
    char **e = realloc(res->errors, (res->nerrors + 1) * sizeof *e);
    if (!e)
        return NP_E_NOMEM;
    res->errors = e;
    if (!(e[res->nerrors] = strdup(msg)))
        return NP_E_NOMEM;
    res->nerrors++;
    return NP_OK;
}

/* Progress line on stderr while workers run (only when asked, only after 1 s). */
static void *run_progress(void *arg)
{
    struct run_job *j = arg;
    double t0 = run_now();
    int shown = 0;
    pthread_mutex_lock(&j->mu);
    while (!j->finished) {
        if (run_now() - t0 >= j->o->progress_after) {
            fprintf(stderr, "\r%s: %zu/%zu folders", np_progname(), atomic_load(&j->counts.read),
                    atomic_load(&j->counts.found));
            shown = 1;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&j->pcv, &j->mu, &ts);
    }
    pthread_mutex_unlock(&j->mu);
    if (shown)
        fprintf(stderr, "\r\033[K");
    return NULL;
}

/* The walk is over: tell run_progress, and wait for its thread prog (NULL: it was not started). */
static void run_progress_stop(struct run_job *j, const pthread_t *prog)
{
    pthread_mutex_lock(&j->mu);
    j->finished = 1;
    pthread_cond_broadcast(&j->pcv);
    pthread_mutex_unlock(&j->mu);
    if (prog)
        pthread_join(*prog, NULL);
}

/* A foreign slot's run folder (its manifest's folder) into dir, unless it is last's (a run's subfolders
 * share its manifest: one entry per manifest); 1 when new, with last updated. */
static int run_foreign_dir(const struct run_slot *slot, char *last, size_t cap)
{
    const char *m = slot->g->manifest;
    const char *slash = strrchr(m, '/');
    size_t len = slash && slash != m ? (size_t)(slash - m) : 1; /* "/nemoperf.json": "/" */
    if (len >= cap)
        len = cap - 1;
    if (strncmp(last, slash ? m : ".", len) == 0 && last[len] == '\0')
        return 0;
    memcpy(last, slash ? m : ".", len);
    last[len] = '\0';
    return 1;
}

/* A folder with a manifest and no log whose manifest is the one a subfolder's logs use
 * (a manifest above the logs) is not a run of its own.  Its subfolders follow it in the
 * sorted order. */
static void run_drop_parent_manifests(struct run_job *j)
{
    for (size_t i = 0; i < j->nslots; i++) {
        const struct np_walk_group *g = j->slots[i]->g;
        if (g->nfiles || !g->manifest)
            continue;
        size_t dl = strlen(g->dir);
        for (size_t k = i + 1; k < j->nslots; k++) {
            const struct np_walk_group *h = j->slots[k]->g;
            if (h->root != g->root || strncmp(h->dir, g->dir, dl) != 0 || h->dir[dl] != '/')
                break;
            if (h->nfiles && h->manifest && strcmp(h->manifest, g->manifest) == 0) {
                run_slot_clear(j->slots[i]);
                break;
            }
        }
    }
}

/* The patterns, the scanner and a job shared by both ways of parsing (collected and streamed). */
static enum np_status run_job_init(struct run_job *job, const struct np_parse_opts *o,
                                   const struct np_recipe_set *recipes, const struct np_ref_table *ref)
{
    pthread_once(&run_once, run_init_patterns);
    struct np_error err;
    if (!run_re_ok || np_scan_init(&err) != NP_OK)
        return NP_E_INTERNAL;
    memset(job, 0, sizeof *job);
    pthread_mutex_init(&job->mu, NULL);
    pthread_cond_init(&job->pcv, NULL);
    atomic_init(&job->counts.read, 0);
    atomic_init(&job->counts.found, 0);
    job->o = o;
    job->recipes = recipes;
    job->ref = ref;
    return NP_OK;
}

enum np_status np_parse_paths(char *const *paths, size_t npaths, const struct np_parse_opts *o,
                              const struct np_recipe_set *recipes, const struct np_ref_table *ref,
                              struct np_parse_result *res)
{
    memset(res, 0, sizeof *res);
    struct run_job job;
    if (run_job_init(&job, o, recipes, ref) != NP_OK)
        return NP_E_INTERNAL;

    struct np_walk_pace pace;
    int nthreads = run_threads(o, &pace);
    pthread_t prog;
    int prog_started = o->progress && pthread_create(&prog, NULL, run_progress, &job) == 0;

    struct np_walk_errors werr = {0};
    enum np_status st =
        np_walk_paths(paths, npaths, o->include, nthreads, &pace, run_folder, &job, &werr, &job.counts);
    run_progress_stop(&job, prog_started ? &prog : NULL);
    if (job.nslots > 1)
        qsort(job.slots, job.nslots, sizeof *job.slots, run_cmp_slots);
    run_drop_parent_manifests(&job);

    int nomem = st == NP_E_NOMEM;
    for (size_t i = 0; !nomem && i < werr.n; i++)
        nomem = run_add_error(res, werr.msgs[i]) != NP_OK;
    np_walk_errors_free(&werr);
    /* gather in walk order */
    size_t total = 0;
    for (size_t g = 0; g < job.nslots; g++) {
        total += job.slots[g]->n;
        nomem |= job.slots[g]->nomem;
    }
    res->runs = calloc(total ? total : 1, sizeof *res->runs);
    if (!res->runs)
        nomem = 1;
    for (size_t g = 0; g < job.nslots; g++) {
        struct run_slot *slot = job.slots[g];
        for (size_t i = 0; i < slot->n; i++) {
            if (res->runs) {
                res->runs[res->nruns++] = slot->runs[i];
            } else {
                np_run_clear(&slot->runs[i]);
            }
        }
        for (size_t i = 0; i < slot->nerrors; i++) {
            if (!nomem && run_add_error(res, slot->errors[i]) != NP_OK)
                nomem = 1;
            free(slot->errors[i]);
        }
        if (slot->foreign && !nomem && run_foreign_dir(slot, job.last_foreign, sizeof job.last_foreign)) {
            char **nf = realloc(res->foreign, (res->nforeign + 1) * sizeof *nf);
            if (nf)
                res->foreign = nf;
            if (!nf || !(nf[res->nforeign] = strdup(job.last_foreign)))
                nomem = 1;
            else
                res->nforeign++;
        }
        res->files += slot->files;
        res->bytes_read += slot->bytes;
        free(slot->runs);
        free(slot->errors);
        np_walk_group_free(slot->g);
        free(slot);
    }
    free(job.slots);
    pthread_mutex_destroy(&job.mu);
    pthread_cond_destroy(&job.pcv);
    if (nomem)
        return NP_E_NOMEM;
    return st == NP_OK ? NP_OK : st;
}

/* ---- streaming ---- */

#define RUN_HELD_MAX 4096 /* a manifest-only folder's subtree held for its decision, at most */

/* Walk callback (np_walk_ordered), on a worker thread: analyse the folder, keep it for its turn. */
static enum np_status run_stream_folder(void *ctx, struct np_walk_group *g, void **result)
{
    struct run_job *j = ctx;
    struct run_slot *slot = run_slot_new(j, g);
    if (!slot)
        return NP_E_NOMEM;
    if (slot->nomem) {
        run_slot_destroy(slot);
        return NP_E_NOMEM;
    }
    *result = slot;
    return NP_OK;
}

/* A folder's errors, then its runs, to the sink; the slot is freed. */
static enum np_status run_stream_out(struct run_job *j, struct run_slot *slot)
{
    enum np_status st = NP_OK;
    for (size_t i = 0; st == NP_OK && i < slot->nerrors; i++, j->stats.errors++)
        st = j->sink->error(j->sink->ctx, slot->errors[i]);
    for (size_t i = 0; st == NP_OK && i < slot->n; i++, j->stats.runs++)
        st = j->sink->run(j->sink->ctx, &slot->runs[i]);
    if (st == NP_OK && slot->foreign && run_foreign_dir(slot, j->last_foreign, sizeof j->last_foreign))
        st = j->sink->foreign ? j->sink->foreign(j->sink->ctx, slot->mli.foreign, j->last_foreign) : NP_E_INTERNAL;
    j->stats.files += slot->files;
    j->stats.bytes_read += slot->bytes;
    run_slot_destroy(slot);
    return st;
}

/* The held folders out, after the manifest rule of np_parse_paths (run_drop_parent_manifests). */
static enum np_status run_stream_flush(struct run_job *j)
{
    struct run_slot **s = j->slots;
    size_t n = j->nslots;
    j->slots = j->held;
    j->nslots = j->nheld;
    run_drop_parent_manifests(j);
    j->slots = s;
    j->nslots = n;
    enum np_status st = NP_OK;
    for (size_t i = 0; i < j->nheld; i++) {
        if (st == NP_OK)
            st = run_stream_out(j, j->held[i]);
        else
            run_slot_destroy(j->held[i]);
    }
    j->nheld = 0;
    return st;
}

/* The ordered walk's emitter: one folder at a time, in depth-first order. */
static enum np_status run_stream_emit(void *ctx, void *result)
{
    struct run_job *j = ctx;
    struct run_slot *slot = result;
    enum np_status st = NP_OK;
    if (j->nheld) {
        const struct np_walk_group *g = j->held[0]->g, *h = slot->g;
        size_t dl = strlen(g->dir);
        int below = h->root == g->root && strncmp(h->dir, g->dir, dl) == 0 && h->dir[dl] == '/';
        if (!below || j->nheld >= RUN_HELD_MAX)
            st = run_stream_flush(j);
        else
            goto hold;
    }
    if (st != NP_OK || slot->g->nfiles || !slot->g->manifest) {
        if (st == NP_OK)
            return run_stream_out(j, slot);
        run_slot_destroy(slot);
        return st;
    }
hold:
    if (j->nheld == j->capheld) {
        size_t nc = j->capheld ? j->capheld * 2 : 16;
        struct run_slot **a = realloc(j->held, nc * sizeof *a);
        if (!a) {
            run_slot_destroy(slot);
            return NP_E_NOMEM;
        }
        j->held = a;
        j->capheld = nc;
    }
    j->held[j->nheld++] = slot;
    return NP_OK;
}

static enum np_status run_stream_error(void *ctx, const char *msg)
{
    struct run_job *j = ctx;
    j->stats.errors++;
    return j->sink->error(j->sink->ctx, msg);
}

static void run_stream_discard(void *ctx, void *result)
{
    (void)ctx;
    run_slot_destroy(result);
}

enum np_status np_parse_stream(char *const *paths, size_t npaths, const struct np_parse_opts *o,
                               const struct np_recipe_set *recipes, const struct np_ref_table *ref,
                               const struct np_run_sink *sink, struct np_parse_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    struct run_job job;
    if (run_job_init(&job, o, recipes, ref) != NP_OK)
        return NP_E_INTERNAL;
    job.sink = sink;
    pthread_t prog;
    int prog_started = o->progress && pthread_create(&prog, NULL, run_progress, &job) == 0;
    struct np_walk_pace pace;
    int nthreads = run_threads(o, &pace);
    struct np_walk_sink ws = {&job, run_stream_folder, run_stream_emit, run_stream_error, run_stream_discard, &pace};
    enum np_status st = np_walk_ordered(paths, npaths, o->include, nthreads, &ws, &job.counts);
    if (st == NP_OK)
        st = run_stream_flush(&job);
    for (size_t i = 0; i < job.nheld; i++)
        run_slot_destroy(job.held[i]);
    free(job.held);
    run_progress_stop(&job, prog_started ? &prog : NULL);
    pthread_mutex_destroy(&job.mu);
    pthread_cond_destroy(&job.pcv);
    if (stats)
        *stats = job.stats;
    return st;
}

void np_parse_result_free(struct np_parse_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->nruns; i++) {
        np_run_clear(&res->runs[i]);
    }
    free(res->runs);
    for (size_t i = 0; i < res->nerrors; i++)
        free(res->errors[i]);
    free(res->errors);
    for (size_t i = 0; i < res->nforeign; i++)
        free(res->foreign[i]);
    free(res->foreign);
    memset(res, 0, sizeof *res);
}

/* ---- spilled runs ---- */

static int run_spill_str(FILE *f, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
    return fwrite(&n, sizeof n, 1, f) == 1 && (!s || fwrite(s, 1, n, f) == n);
}

/* The struct's bytes as (literal length, literals, zero count) pairs over 8-byte words, after the
 * length of it all: most of a run is the unused tail of fixed-size text fields, so a million runs
 * take ~0.4 GB of temporary file, not 1.5; one write and one read per run (stdio calls per pair were
 * most of the time of reading the runs back). */
#define RUN_SPILL_MAX (2 * sizeof(struct np_run) + 64) /* a pair per 16 bytes at worst: 1.5 times the struct */

static int run_zero8(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x == 0;
}

static int run_spill_bytes(FILE *f, const unsigned char *p, size_t n)
{
    unsigned char out[RUN_SPILL_MAX];
    size_t o = 4, i = 0;
    while (i < n) {
        size_t lit = i;
        while (lit + 8 <= n && !run_zero8(p + lit))
            lit += 8;
        if (lit + 8 > n)
            lit = n; /* the last bytes: literal */
        size_t zeros = lit;
        while (zeros + 8 <= n && run_zero8(p + zeros))
            zeros += 8;
        uint32_t hdr[2] = {(uint32_t)(lit - i), (uint32_t)(zeros - lit)};
        memcpy(out + o, hdr, sizeof hdr);
        memcpy(out + o + sizeof hdr, p + i, lit - i);
        o += sizeof hdr + (lit - i);
        i = zeros;
    }
    uint32_t total = (uint32_t)(o - 4);
    memcpy(out, &total, 4);
    return fwrite(out, 1, o, f) == o;
}

static int run_unspill_bytes(FILE *f, unsigned char *p, size_t n)
{
    unsigned char in[RUN_SPILL_MAX];
    uint32_t total;
    if (fread(&total, sizeof total, 1, f) != 1 || total > sizeof in || fread(in, 1, total, f) != total)
        return 0;
    size_t i = 0, k = 0;
    while (i < n) {
        uint32_t hdr[2];
        if (total - k < sizeof hdr)
            return 0;
        memcpy(hdr, in + k, sizeof hdr);
        k += sizeof hdr;
        if (hdr[0] > n - i || hdr[1] > n - i - hdr[0] || hdr[0] > total - k || (!hdr[0] && !hdr[1]))
            return 0;
        memcpy(p + i, in + k, hdr[0]);
        k += hdr[0];
        memset(p + i + hdr[0], 0, hdr[1]);
        i += (size_t)hdr[0] + hdr[1];
    }
    return k == total;
}

enum np_status np_run_spill_put(FILE *f, const struct np_run *run)
{
    if (!run_spill_bytes(f, (const unsigned char *)run, sizeof *run) || !run_spill_str(f, run->path) ||
        !run_spill_str(f, run->dir) || !run_spill_str(f, run->why) || !run_spill_str(f, run->note) ||
        !run_spill_str(f, run->system))
        return NP_E_IO;
    return NP_OK;
}

/* 1 with *out a new string or NULL, 0 on failure. */
static int run_spill_getstr(FILE *f, char **out)
{
    uint32_t n;
    *out = NULL;
    if (fread(&n, sizeof n, 1, f) != 1)
        return 0;
    if (n == UINT32_MAX)
        return 1;
    if (!(*out = malloc((size_t)n + 1)))
        return 0;
    if (fread(*out, 1, n, f) != n) {
        free(*out);
        *out = NULL;
        return 0;
    }
    (*out)[n] = '\0';
    return 1;
}

int np_run_spill_get(FILE *f, struct np_run *run)
{
    int c = getc(f);
    if (c == EOF)
        return ferror(f) ? -1 : 0;
    ungetc(c, f);
    if (!run_unspill_bytes(f, (unsigned char *)run, sizeof *run))
        return -1;
    run->path = run->dir = run->why = run->note = run->system = NULL;
    run->samples = NULL; /* not carried by the spill */
    if (!run_spill_getstr(f, &run->path) || !run_spill_getstr(f, &run->dir) || !run_spill_getstr(f, &run->why) ||
        !run_spill_getstr(f, &run->note) || !run_spill_getstr(f, &run->system)) {
        np_run_clear(run);
        return -1;
    }
    return 1;
}

void np_run_clear(struct np_run *run)
{
    if (!run)
        return;
    free(run->path);
    free(run->dir);
    free(run->why);
    free(run->note);
    free(run->system);
    free(run->samples);
    run->path = run->dir = run->why = run->note = run->system = NULL;
    run->samples = NULL;
}
