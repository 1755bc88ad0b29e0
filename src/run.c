/* run.c - turn walked log files into analysed runs, in parallel.
 *
 * One task per folder: pick the latest restart attempt that has steps, scan
 * the other logs, identify the run (manifest, folder names, options), then
 * compute the last-step and window metrics.  Worker threads pull folders from
 * an atomic counter; results land in per-folder slots, so output order is the
 * walk's (sorted) order whatever the thread count.
 */
#include "nemoperf/run.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/diag.h"
#include "nemoperf/walk.h"

const char *np_run_status_name(enum np_run_status s)
{
    switch (s) {
    case NP_RUN_OK: return "ok";
    case NP_RUN_NO_STEPS: return "no-steps";
    case NP_RUN_INVALID: return "invalid";
    case NP_RUN_INCOMPLETE: return "incomplete";
    case NP_RUN_UNIDENTIFIED: return "unidentified";
    }
    return "?";
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
}

/* ---- patterns (compiled once) ---- */

static pcre2_code *run_re_folder;  /* pretrain_<recipe>_<size>_<dtype>_<gpus>[_nsys|_nccltrace] */
static pcre2_code *run_re_attempt; /* log-<anything>_<job>_<restart>.out */
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
    run_re_folder = run_compile("^pretrain_([a-z0-9][a-z0-9.]*)_([0-9][a-z0-9.]*)_(bf16|fp8)_([1-9][0-9]{0,6})"
                                "(?:_(nsys|nccltrace))?(?:_[0-9]+)?$");
    run_re_attempt = run_compile("^log-.*_([0-9]{1,18})_([0-9]{1,9})\\.out$");
    run_re_ok = run_re_folder && run_re_attempt;
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
    if (rc >= 5) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        run_copy(id->recipe, sizeof id->recipe, comp + ov[2], ov[3] - ov[2]);
        run_copy(id->model_size, sizeof id->model_size, comp + ov[4], ov[5] - ov[4]);
        char dt[8];
        run_copy(dt, sizeof dt, comp + ov[6], ov[7] - ov[6]);
        id->dtype = np_dtype_parse(dt);
        id->gpus = (int)strtol(comp + ov[8], NULL, 10);
        if (rc >= 6 && ov[10] != PCRE2_UNSET)
            run_copy(id->variant, sizeof id->variant, comp + ov[10], ov[11] - ov[10]);
        /* the experiment name is the component without the _<unix-ts> suffix */
        size_t exp_len = rc >= 6 && ov[10] != PCRE2_UNSET ? ov[11] : ov[9];
        run_copy(id->experiment, sizeof id->experiment, comp, exp_len);
    }
    pcre2_match_data_free(md);
    return rc >= 5;
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

static int run_json_int(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 100000000
               ? (int)json_integer_value(v)
               : 0;
}

static void run_json_str(json_t *o, const char *key, char *dst, size_t size)
{
    json_t *v = json_object_get(o, key);
    if (json_is_string(v))
        run_copy(dst, size, json_string_value(v), strlen(json_string_value(v)));
}

int np_identity_from_manifest(const char *file, struct np_identity *id)
{
    json_error_t jerr;
    json_t *root = json_load_file(file, 0, &jerr);
    if (!root)
        return 0;
    json_t *c = json_object_get(root, "config");
    if (!json_is_object(c))
        c = root;
    struct np_identity t;
    memset(&t, 0, sizeof t);
    run_json_str(c, "recipe", t.recipe, sizeof t.recipe);
    run_json_str(c, "model_size", t.model_size, sizeof t.model_size);
    run_json_str(c, "gpu_type", t.gpu_type, sizeof t.gpu_type);
    run_json_str(c, "experiment", t.experiment, sizeof t.experiment);
    char dt[16] = "";
    run_json_str(c, "dtype", dt, sizeof dt);
    t.dtype = np_dtype_parse(dt);
    t.gpus = run_json_int(c, "gpus");
    t.seq_len = run_json_int(c, "seq_len");
    t.gbs = run_json_int(c, "gbs");
    t.max_steps = run_json_int(c, "max_steps");
    if (json_is_true(json_object_get(c, "profile")))
        strcpy(t.variant, "nsys");
    else if (json_is_true(json_object_get(c, "nccltrace")))
        strcpy(t.variant, "nccltrace");
    json_decref(root);
    if (!t.recipe[0] || !t.model_size[0] || t.dtype == NP_DTYPE_NONE || t.gpus <= 0)
        return 0;
    *id = t;
    return 1;
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
    if (id->dtype == NP_DTYPE_NONE)
        id->dtype = g->dtype;
    if (!id->gpus)
        id->gpus = g->gpus;
    if (!id->seq_len)
        id->seq_len = g->seq_len;
    if (!id->gbs)
        id->gbs = g->gbs;
}

/* ---- statistics ---- */

static int run_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run_window(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o)
{
    struct np_window_stats *w = &run->window;
    w->first = w->last = -1;
    w->count = 0;
    w->mean_s = w->median_s = w->stdev_s = w->min_s = w->max_s = NAN;
    if (!scan->nsteps)
        return;
    double *v = malloc(scan->nsteps * sizeof *v);
    if (!v)
        return;
    size_t n = 0, from = 0, to = scan->nsteps;
    if (o->steps_first >= 0) {
        for (size_t i = 0; i < scan->nsteps; i++) {
            long it = scan->steps[i].iteration;
            if (it >= o->steps_first && it <= o->steps_last && isfinite(scan->steps[i].step_time_s)) {
                if (w->first < 0)
                    w->first = it;
                w->last = it;
                v[n++] = scan->steps[i].step_time_s;
            }
        }
    } else {
        size_t want = o->window ? o->window : 10;
        w->requested = want;
        from = scan->nsteps > want ? scan->nsteps - want : 0;
        for (size_t i = from; i < to; i++)
            if (isfinite(scan->steps[i].step_time_s)) {
                if (n == 0)
                    w->first = scan->steps[i].iteration;
                w->last = scan->steps[i].iteration;
                v[n++] = scan->steps[i].step_time_s;
            }
    }
    w->count = n;
    if (n) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += v[i];
        w->mean_s = sum / n;
        double ss = 0;
        for (size_t i = 0; i < n; i++)
            ss += (v[i] - w->mean_s) * (v[i] - w->mean_s);
        w->stdev_s = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
        qsort(v, n, sizeof *v, run_cmp_double);
        w->min_s = v[0];
        w->max_s = v[n - 1];
        w->median_s = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    free(v);
}

static void run_set_why(struct np_run *run, const char *why)
{
    free(run->why);
    run->why = why ? strdup(why) : NULL;
}

void np_run_analyse(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o,
                    const struct np_recipe_set *recipes, const struct np_ref_table *ref)
{
    struct np_identity *id = &run->id;
    if (!id->gpu_type[0])
        snprintf(id->gpu_type, sizeof id->gpu_type, "h100"); /* what the recipes target */
    run->recipe = np_recipe_find(recipes, id->recipe);
    run->model = run->recipe ? np_model_find(run->recipe, id->model_size) : NULL;
    run->row = run->model ? np_row_find(run->model, id->gpu_type, id->dtype, id->gpus) : NULL;
    run->step = run->total = -1;
    run->complete = -1;
    run->step_time_s = run->flops_per_sample = run->peak_memory_bytes = run->loss = NAN;
    run->logged_tflops_per_gpu = run->ref_ratio = NAN;
    run->train_tokens = o->train_tokens;
    np_metrics_from_step(NAN, 0, 0, 0, NAN, 0, 0, &run->m);
    run->steps_seen = scan ? scan->nsteps : 0;
    run->runs_in_file = scan ? scan->runs : 0;
    run->window.first = run->window.last = -1;
    run->window.mean_s = run->window.median_s = run->window.stdev_s = run->window.min_s = run->window.max_s = NAN;
    if (!scan || scan->nsteps == 0) {
        run->status = NP_RUN_NO_STEPS;
        run_set_why(run, "no training-step line in the logs");
        return;
    }
    run->checkpoint_saved = scan->saw_checkpoint_save;
    run->checkpoint_loaded = scan->saw_checkpoint_load;
    const struct np_step *last = &scan->steps[scan->nsteps - 1];
    run->gen = last->gen;
    run->step = last->iteration;
    run->total = last->total;
    if (run->total < 0 && id->max_steps > 0)
        run->total = id->max_steps - 1;
    if (run->total >= 0 && run->step >= 0)
        run->complete = run->step >= run->total;
    /* last known values, newest first */
    int nan_seen = 0;
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
    run_window(run, scan, o);
    size_t from = scan->nsteps > run->window.count ? scan->nsteps - run->window.count : 0;
    for (size_t i = from; i < scan->nsteps; i++)
        if (scan->steps[i].nan_seen)
            nan_seen = 1;
    /* GBS: the log line wins over the manifest/recipe */
    int gbs = gbs_logged > 0 && gbs_logged < 100000000 ? (int)gbs_logged : id->gbs;
    if (gbs <= 0 && run->row)
        gbs = run->row->gbs;
    id->gbs = gbs > 0 ? gbs : 0;
    if (!id->seq_len && run->row)
        id->seq_len = run->row->seq_len;
    if (!id->seq_len && run->model && run->model->nrows)
        id->seq_len = run->model->rows[0].seq_len;
    run->step_time_s = last->step_time_s;
    if (isnan(run->step_time_s) && last->tokens_per_s > 0 && id->seq_len && id->gbs)
        run->step_time_s = (double)id->seq_len * id->gbs / last->tokens_per_s;
    if (run->model)
        run->flops_per_sample = np_model_flops_row(run->model, run->row, id->seq_len);
    run->peak_tflops = np_gpu_peak_tflops(id->gpu_type, id->dtype);
    np_metrics_from_step(run->step_time_s, id->seq_len, id->gbs, id->gpus, run->flops_per_sample,
                         run->peak_tflops, o->train_tokens, &run->m);
    if (isnan(run->m.tokens_per_s) && last->tokens_per_s > 0) { /* AutoModel without seq/GBS */
        run->m.tokens_per_s = last->tokens_per_s;
        if (o->train_tokens > 0)
            run->m.days_to_train = o->train_tokens / last->tokens_per_s / 86400.0;
        if (id->gpus > 0)
            run->m.tokens_per_s_per_gpu = last->tokens_per_s / id->gpus;
        else if (last->tokens_per_s_per_gpu > 0)
            run->m.tokens_per_s_per_gpu = last->tokens_per_s_per_gpu;
    }

    if (nan_seen || (!isnan(last->step_time_s) && !isfinite(last->step_time_s)) ||
        (!isnan(run->step_time_s) && run->step_time_s <= 0)) {
        run->status = NP_RUN_INVALID;
        run_set_why(run, "NaN or infinite loss, grad norm or step time");
    } else if (!run->model || id->dtype == NP_DTYPE_NONE || id->gpus <= 0) {
        run->status = NP_RUN_UNIDENTIFIED;
        char why[256];
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
        run_set_why(run, why);
    } else if (run->complete == 0) {
        run->status = NP_RUN_INCOMPLETE;
        char why[96];
        snprintf(why, sizeof why, "stopped at iteration %ld of %ld", run->step, run->total);
        run_set_why(run, why);
    } else if (isnan(run->step_time_s) && run->window.count == 0 && run->gen == NP_GEN_NEMO1) {
        run->status = NP_RUN_INVALID;
        char why[160];
        snprintf(why, sizeof why, "NeMo 1.0 progress bar without train_step_timing (timing callback off): "
                                  "last step %ld, no step time", run->step);
        run_set_why(run, why);
    } else if (isnan(run->step_time_s)) {
        run->status = NP_RUN_INVALID;
        run_set_why(run, "no step time in the last step line");
    } else {
        run->status = NP_RUN_OK;
    }

    if (o->reference && ref && run->model) {
        run->ref = np_ref_find(ref, id->recipe, id->model_size, id->dtype, id->gpu_type, id->gpus);
        if (run->ref && !isnan(run->m.tokens_per_s)) {
            double pub = run->ref->tokens_per_s;
            double mine = run->m.tokens_per_s;
            if (isnan(pub) && !isnan(run->ref->tokens_per_s_per_gpu)) {
                pub = run->ref->tokens_per_s_per_gpu;
                mine = run->m.tokens_per_s_per_gpu;
            }
            if (!isnan(pub) && pub > 0 && !isnan(mine)) {
                run->ref_ratio = mine / pub;
                run->ref_pass = run->ref_ratio >= 1.0 - o->tolerance_pct / 100.0;
            }
        }
    }
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
};

/* One parse: options, the sink, totals (updated by the emitter, one call at a time). */
struct run_job {
    pthread_mutex_t mu;
    pthread_cond_t pcv;   /* progress: everything finished */
    int finished;
    struct np_walk_counts counts;
    const struct np_parse_opts *o;
    const struct np_recipe_set *recipes;
    const struct np_ref_table *ref;
    const struct np_run_sink *sink;
    struct np_parse_stats stats;
};

static void run_slot_error(struct run_slot *s, const struct np_error *err)
{
    char buf[1200];
    np_error_format(err, buf, sizeof buf);
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

static void run_identify(struct np_run *run, const char *manifest, const struct np_parse_opts *o)
{
    if (manifest && np_identity_from_manifest(manifest, &run->id))
        run->id_source = "manifest";
    else if (np_identity_from_path(run->path, &run->id))
        run->id_source = "folder";
    else if (o->given.recipe[0] || o->given.gpus)
        run->id_source = "options";
    run_identity_fill(&run->id, &o->given);
    if (!run->id.experiment[0]) {
        const char *b = run_basename(run->dir);
        run_copy(run->id.experiment, sizeof run->id.experiment, b, strlen(b));
    }
}

/* Scan one log into a new run of the slot when it has steps (or always, with force). */
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
    if (np_scan_fileat(dfd, name, path, so, &res, &err) != NP_OK) {
        run_slot_error(slot, &err);
    } else {
        slot->bytes += res.bytes_read;
        if (res.nsteps) {
            struct np_run *run = run_slot_add(slot, path, slot->g->dir);
            if (run) {
                run->attempts = attempts;
                run_identify(run, slot->g->manifest, j->o);
                np_run_analyse(run, &res, j->o, j->recipes, j->ref);
            }
            found = 1;
        }
    }
    np_scan_result_free(&res);
    return found;
}

static void run_group(struct run_job *j, struct run_slot *slot)
{
    const struct np_walk_group *g = slot->g;
    struct np_scan_opts so = {0};
    so.all_steps = j->o->all_steps || j->o->steps_first >= 0;
    /* Default mode reads each log's tail only: enough for the last step (the seeds' rule) and for
     * as many of the last N steps as the tail holds.  --window N insists on N steps. */
    so.window = j->o->window_strict && j->o->window ? j->o->window : 1;
    so.keep = j->o->window ? j->o->window : 10; /* tail mode parses only the steps the window can use */

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
    if (slot->n == 0) {
        const char *path = natt ? g->files[att[0].file] : g->dir;
        struct np_run *run = run_slot_add(slot, path, g->dir);
        if (run) {
            run->attempts = natt;
            run_identify(run, g->manifest, j->o);
            np_run_analyse(run, NULL, j->o, j->recipes, j->ref);
        }
    }
    free(att);
    free(is_att);
}

static double run_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run_slot_free(struct run_slot *slot)
{
    if (!slot)
        return;
    for (size_t i = 0; i < slot->n; i++) {
        free(slot->runs[i].path);
        free(slot->runs[i].dir);
        free(slot->runs[i].why);
    }
    for (size_t i = 0; i < slot->nerrors; i++)
        free(slot->errors[i]);
    free(slot->runs);
    free(slot->errors);
    np_walk_group_free(slot->g);
    free(slot);
}

/* Walk callback, on a walk thread: analyse the folder now, keep the result for its turn. */
static enum np_status run_folder(void *ctx, struct np_walk_group *g, void **result)
{
    struct run_job *j = ctx;
    struct run_slot *slot = calloc(1, sizeof *slot);
    if (!slot) {
        np_walk_group_free(g);
        return NP_E_NOMEM;
    }
    slot->g = g;
    run_group(j, slot);
    g->dirfd = -1; /* open only during this call */
    if (slot->nomem) {
        run_slot_free(slot);
        return NP_E_NOMEM;
    }
    *result = slot;
    return NP_OK;
}

/* The folder's turn: its read errors, then its runs, to the sink; then freed. */
static enum np_status run_emit(void *ctx, void *result)
{
    struct run_job *j = ctx;
    struct run_slot *slot = result;
    enum np_status st = NP_OK;
    for (size_t i = 0; st == NP_OK && i < slot->nerrors; i++, j->stats.errors++)
        st = j->sink->error(j->sink->ctx, slot->errors[i]);
    for (size_t i = 0; st == NP_OK && i < slot->n; i++, j->stats.runs++)
        st = j->sink->run(j->sink->ctx, &slot->runs[i]);
    j->stats.files += slot->files;
    j->stats.bytes_read += slot->bytes;
    run_slot_free(slot);
    return st;
}

static enum np_status run_walk_error(void *ctx, const char *msg)
{
    struct run_job *j = ctx;
    j->stats.errors++;
    return j->sink->error(j->sink->ctx, msg);
}

static void run_discard(void *ctx, void *result)
{
    (void)ctx;
    run_slot_free(result);
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

enum np_status np_parse_stream(char *const *paths, size_t npaths, const struct np_parse_opts *o,
                               const struct np_recipe_set *recipes, const struct np_ref_table *ref,
                               const struct np_run_sink *sink, struct np_parse_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    pthread_once(&run_once, run_init_patterns);
    struct np_error err;
    if (!run_re_ok || np_scan_init(&err) != NP_OK)
        return NP_E_INTERNAL;
    struct run_job job;
    memset(&job, 0, sizeof job);
    pthread_mutex_init(&job.mu, NULL);
    pthread_cond_init(&job.pcv, NULL);
    atomic_init(&job.counts.read, 0);
    atomic_init(&job.counts.found, 0);
    job.o = o;
    job.recipes = recipes;
    job.ref = ref;
    job.sink = sink;

    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    /* twice the cores by default: a worker waiting in the kernel (a folder or log not in the
     * page cache, a lock holder the scheduler put aside on a busy machine) leaves its core to
     * another; measured on shape b under load 19: 0.90 s with 4 threads vs 1.04 s with 2 */
    int nthreads = o->jobs > 0 ? o->jobs : (ncpu > 0 ? 2 * (int)ncpu : 2);
    pthread_t prog;
    int prog_started = o->progress && pthread_create(&prog, NULL, run_progress, &job) == 0;

    struct np_walk_sink ws = {&job, run_folder, run_emit, run_walk_error, run_discard};
    enum np_status st = np_walk_ordered(paths, npaths, o->include, nthreads, &ws, &job.counts);
    pthread_mutex_lock(&job.mu);
    job.finished = 1;
    pthread_cond_broadcast(&job.pcv);
    pthread_mutex_unlock(&job.mu);
    if (prog_started)
        pthread_join(prog, NULL);
    pthread_mutex_destroy(&job.mu);
    pthread_cond_destroy(&job.pcv);
    if (stats)
        *stats = job.stats;
    return st;
}

/* ---- everything in memory ---- */

static enum np_status run_collect_run(void *ctx, const struct np_run *run)
{
    struct np_parse_result *res = ctx;
    struct np_run *r = realloc(res->runs, (res->nruns + 1) * sizeof *r);
    if (!r)
        return NP_E_NOMEM;
    res->runs = r;
    struct np_run *c = &r[res->nruns];
    *c = *run;
    c->path = strdup(run->path);
    c->dir = strdup(run->dir);
    c->why = run->why ? strdup(run->why) : NULL;
    if (!c->path || !c->dir || (run->why && !c->why)) {
        free(c->path);
        free(c->dir);
        free(c->why);
        return NP_E_NOMEM;
    }
    res->nruns++;
    return NP_OK;
}

static enum np_status run_collect_error(void *ctx, const char *msg)
{
    struct np_parse_result *res = ctx;
    char **e = realloc(res->errors, (res->nerrors + 1) * sizeof *e);
    if (!e)
        return NP_E_NOMEM;
    res->errors = e;
    if (!(e[res->nerrors] = strdup(msg)))
        return NP_E_NOMEM;
    res->nerrors++;
    return NP_OK;
}

enum np_status np_parse_paths(char *const *paths, size_t npaths, const struct np_parse_opts *o,
                              const struct np_recipe_set *recipes, const struct np_ref_table *ref,
                              struct np_parse_result *res)
{
    memset(res, 0, sizeof *res);
    struct np_run_sink sink = {res, run_collect_run, run_collect_error};
    struct np_parse_stats stats;
    enum np_status st = np_parse_stream(paths, npaths, o, recipes, ref, &sink, &stats);
    res->files = stats.files;
    res->bytes_read = stats.bytes_read;
    return st;
}

void np_parse_result_free(struct np_parse_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->nruns; i++) {
        free(res->runs[i].path);
        free(res->runs[i].dir);
        free(res->runs[i].why);
    }
    free(res->runs);
    for (size_t i = 0; i < res->nerrors; i++)
        free(res->errors[i]);
    free(res->errors);
    memset(res, 0, sizeof *res);
}
