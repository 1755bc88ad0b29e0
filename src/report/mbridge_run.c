/* mbridge_run.c - nemoperf-parse's Megatron-Bridge path: identify each run, analyse its log, report.
 *
 * Identity comes from the run folder's nemoperf.json ("mbridge" object), then the options; the published
 * row of that identity (newest container unless one is named) supplies what the log does not print.
 * Reports: a table, CSV, JSON (Jansson), or markdown in the layout of each run's container version.
 */
#include "nemoperf/report/mbridge_run.h"
#include "nemoperf/util/text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/recipe.h"
#include "nemoperf/report/mbridge_md.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/util/runfiles.h"

void np_mb_opts_init(struct np_mb_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dtype = NP_MB_DTYPE_NONE;
    o->first = o->last = -1;
    o->tolerance = 0.5; /* NVIDIA's 26.04.01+ tokens/s are rounded to multiples of 16: 0.5 % covers it */
}

struct mbridge_run {
    char path[PATH_MAX], log[PATH_MAX];
    struct np_mb_opts id;
    const struct np_mb_row *row;
    struct np_mb_result res;
    const char *verdict; /* NULL: not compared */
    const char *status;  /* "ok", "synthetic", "unidentified", "no-log", "incomplete" */
    int synthetic;       /* the manifest's workload is "synthetic" (nemoperf-synth wrote the log) */
};

static void mbridge_run_str(json_t *o, const char *key, char *dst, size_t cap)
{
    json_t *v = json_object_get(o, key);
    if (json_is_string(v) && !*dst)
        snprintf(dst, cap, "%s", json_string_value(v));
}

static void mbridge_run_int(json_t *o, const char *key, int *dst)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v) && *dst <= 0 && json_integer_value(v) > 0 && json_integer_value(v) < 100000000)
        *dst = (int)json_integer_value(v);
}

/* The manifest's "mbridge" object fills the identity (the options fill what it lacks afterwards). */
static void mbridge_run_manifest(const char *dir, struct np_mb_opts *id, int *synthetic)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/nemoperf.json", dir) >= (int)sizeof p)
        return;
    if (access(p, F_OK) != 0)
        return;
    json_error_t je;
    int io = 0;
    struct np_error ferr;
    /* regular files only: a FIFO named nemoperf.json would block the parse */
    json_t *root = np_file_load_json(p, 0, &je, &io, &ferr);
    if (!root) {
        if (io)
            np_warnf("%s: %s (manifest ignored)", ferr.source, ferr.text);
        else
            np_warnf("%s:%d:%d: %s (manifest ignored)", p, je.line, je.column, je.text);
        return;
    }
    json_t *fmt = json_object_get(root, "nemoperf_manifest"); /* absent, or the one format launch writes */
    if (fmt && !json_is_null(fmt) && !(json_is_integer(fmt) && json_integer_value(fmt) == NP_RUNFILE_MANIFEST_FORMAT)) {
        char *shown = json_dumps(fmt, JSON_ENCODE_ANY | JSON_COMPACT);
        np_warnf("%s: field \"nemoperf_manifest\": format %.40s, not one this nemoperf reads (%d) (manifest ignored)",
                 p, shown ? shown : "?", NP_RUNFILE_MANIFEST_FORMAT);
        free(shown);
        json_decref(root);
        return;
    }
    json_t *mb = json_object_get(root, "mbridge");
    const char *wl = json_string_value(json_object_get(root, "workload"));
    *synthetic = wl && strcmp(wl, "synthetic") == 0;
    if (json_is_object(mb)) {
        char dtype[16] = "";
        mbridge_run_str(mb, "recipe", id->recipe, sizeof id->recipe);
        mbridge_run_str(mb, "gpu_type", id->gpu, sizeof id->gpu);
        mbridge_run_str(mb, "container", id->container, sizeof id->container);
        mbridge_run_str(mb, "task", id->task, sizeof id->task);
        mbridge_run_str(mb, "dtype", dtype, sizeof dtype);
        if (*dtype && id->dtype == NP_MB_DTYPE_NONE)
            id->dtype = np_mb_dtype_parse(dtype);
        mbridge_run_int(mb, "gpus", &id->gpus);
        mbridge_run_int(mb, "gbs", &id->gbs);
        mbridge_run_int(mb, "seq_len", &id->seq_len);
    }
    json_decref(root);
}

/* The newest *.out or *.log of a folder into log; 0 if none. */
static int mbridge_run_find_log(const char *dir, char *log, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    time_t best = 0;
    int found = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || (strcmp(e->d_name + l - 4, ".out") != 0 && strcmp(e->d_name + l - 4, ".log") != 0))
            continue;
        char p[PATH_MAX];
        struct stat sb;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p || stat(p, &sb) != 0 ||
            !S_ISREG(sb.st_mode))
            continue;
        if (!found || sb.st_mtime > best) {
            snprintf(log, cap, "%s", p);
            best = sb.st_mtime;
            found = 1;
        }
    }
    closedir(d);
    return found;
}

/* Fill a's blanks from b. */
static void mbridge_run_fill(struct np_mb_opts *a, const struct np_mb_opts *b)
{
    if (!*a->recipe)
        snprintf(a->recipe, sizeof a->recipe, "%s", b->recipe);
    if (!*a->gpu)
        snprintf(a->gpu, sizeof a->gpu, "%s", b->gpu);
    if (!*a->container)
        snprintf(a->container, sizeof a->container, "%s", b->container);
    if (!*a->task)
        snprintf(a->task, sizeof a->task, "%s", b->task);
    if (a->dtype == NP_MB_DTYPE_NONE)
        a->dtype = b->dtype;
    if (a->gpus <= 0)
        a->gpus = b->gpus;
    if (a->gbs <= 0)
        a->gbs = b->gbs;
    if (a->seq_len <= 0)
        a->seq_len = b->seq_len;
}

static void mbridge_run_one(const char *path, const struct np_mb_opts *o, const struct np_mb_ref *ref,
                            struct mbridge_run *run)
{
    memset(run, 0, sizeof *run);
    snprintf(run->path, sizeof run->path, "%s", path);
    np_mb_opts_init(&run->id);
    run->res.tokens_per_s_per_gpu = run->res.model_tflops_per_gpu = run->res.logged_tflops_per_gpu = NAN;
    run->res.mfu_percent = run->res.tflops_disagreement = run->res.step_s = NAN;
    struct stat sb;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    if (stat(path, &sb) != 0) {
        run->status = "no-log";
        snprintf(run->res.problem, sizeof run->res.problem, "%.150s", strerror(errno));
    } else if (S_ISDIR(sb.st_mode)) {
        if (!mbridge_run_find_log(path, run->log, sizeof run->log))
            run->status = "no-log";
    } else {
        snprintf(run->log, sizeof run->log, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
    }
    mbridge_run_manifest(dir, &run->id, &run->synthetic);
    mbridge_run_fill(&run->id, o);
    if (!*run->id.task)
        snprintf(run->id.task, sizeof run->id.task, "pretrain");
    if (run->status)
        return;
    if (!*run->id.recipe || run->id.dtype == NP_MB_DTYPE_NONE || !*run->id.gpu || run->id.gpus <= 0) {
        run->status = "unidentified";
        snprintf(run->res.problem, sizeof run->res.problem,
                 "recipe, dtype, GPU type and GPU count are needed (--recipe --dtype --gpu --gpus, or the manifest)");
        return;
    }
    run->row = np_mb_ref_find(ref, run->id.container, run->id.task, run->id.recipe, run->id.dtype, run->id.gpu,
                              run->id.gpus, run->id.gbs, run->id.seq_len);
    const char *variant = "-", *release = "";
    int tp = 1;
    if (run->row) {
        snprintf(run->id.container, sizeof run->id.container, "%s", run->row->container);
        if (run->id.gbs <= 0)
            run->id.gbs = run->row->gbs;
        if (run->id.seq_len <= 0)
            run->id.seq_len = run->row->seq_len;
        variant = run->row->variant;
        release = run->row->mb_release;
        tp = run->row->tp > 0 ? run->row->tp : 1;
    } else {
        for (size_t i = 0; ref && i < ref->n; i++) /* the release of the named container */
            if (strcmp(ref->rows[i].container, run->id.container) == 0)
                release = ref->rows[i].mb_release;
    }
    int fd;
    struct np_error oerr;
    FILE *f = np_file_open_regular(AT_FDCWD, run->log, &fd, &oerr) == NP_OK ? fdopen(fd, "r") : NULL;
    if (!f) { /* a FIFO put there after the listing: refused, never waited on */
        if (fd >= 0)
            close(fd);
        run->status = "no-log";
        snprintf(run->res.problem, sizeof run->res.problem, "cannot open the log: %.150s",
                 fd >= 0 ? strerror(errno) : oerr.text);
        return;
    }
    struct np_mb_log log;
    memset(&log, 0, sizeof log);
    struct np_error err;
    memset(&err, 0, sizeof err);
    enum np_status st = np_mb_log_read(f, run->log, &log, &err);
    fclose(f);
    if (st != NP_OK) {
        run->status = "no-log";
        snprintf(run->res.problem, sizeof run->res.problem, "%.190s", err.text);
        np_mb_log_free(&log);
        return;
    }
    long first = o->first, last = o->last;
    if (o->window > 0 && log.n) {
        last = log.iter[log.n - 1];
        first = last - o->window + 1;
    }
    int rc = np_mb_analyse(&log, ref, run->id.recipe, run->id.task, variant, release, run->id.dtype, run->id.gpu,
                           run->id.gpus, run->id.gbs, run->id.seq_len, tp, first, last, &run->res);
    if (rc == 0 && log.nan_grad)
        snprintf(run->res.problem, sizeof run->res.problem, "grad norm: nan in the log (llmb refuses such runs)");
    else if (rc == 0 && run->res.gbs > 0 && run->res.gbs != run->id.gbs)
        snprintf(run->res.problem, sizeof run->res.problem,
                 "the log prints global batch size %d, the run is identified with %d", run->res.gbs, run->id.gbs);
    else if (rc == 0 && run->res.mfu_percent > 100 && !run->synthetic) /* a stand-in's step time means nothing */
        snprintf(run->res.problem, sizeof run->res.problem, "implausible: MFU %.1f %% (a step faster than the "
                 "model's FLOPs allow)", run->res.mfu_percent);
    np_mb_log_free(&log);
    run->status = rc == 0 && !run->res.problem[0] ? "ok" : "incomplete";
    if (run->synthetic && strcmp(run->status, "ok") == 0) /* a stand-in's speed: identified, never compared */
        run->status = "synthetic";
    else if (o->reference && run->row && !isnan(run->res.tokens_per_s_per_gpu)) {
        double rel = run->res.tokens_per_s_per_gpu / run->row->tokens_per_s_per_gpu - 1;
        run->verdict = fabs(rel) * 100 <= o->tolerance ? "PASS" : rel < 0 ? "FAIL" : "FAST";
    }
}

static const char *const mbridge_run_cols[] = {
    "path", "status", "container", "recipe", "dtype", "gpu", "gpus", "gbs", "seq_len", "window", "step_s",
    "tokens_per_s_per_gpu", "model_tflops_per_gpu", "logged_tflops_per_gpu", "tflops_disagreement_percent",
    "mfu_percent", "ref_tokens_per_s_per_gpu", "ref_model_tflops_per_gpu", "verdict", "note"};
#define MBR_NCOLS (sizeof mbridge_run_cols / sizeof mbridge_run_cols[0])

static void mbridge_run_fmt(char *b, size_t cap, double v, int dec)
{
    if (isnan(v))
        snprintf(b, cap, "-");
    else
        snprintf(b, cap, "%.*f", dec, v);
}

/* Append one note to cell (PATH_MAX bytes), "; " between notes; *at is the length so far. */
__attribute__((format(printf, 3, 4))) static void mbridge_run_note(char *cell, size_t *at, const char *fmt, ...)
{
    if (*at + 3 >= PATH_MAX)
        return;
    if (*at) {
        memcpy(cell + *at, "; ", 3);
        *at += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cell + *at, PATH_MAX - *at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n < PATH_MAX - *at ? (size_t)n : PATH_MAX - *at - 1;
}

/* The report's cells of one run, as text. */
static void mbridge_run_cells(const struct mbridge_run *r, char cells[][PATH_MAX])
{
    const struct np_mb_result *x = &r->res;
    snprintf(cells[0], PATH_MAX, "%s", r->path);
    snprintf(cells[1], PATH_MAX, "%s", r->status);
    snprintf(cells[2], PATH_MAX, "%s", *r->id.container ? r->id.container : "-");
    snprintf(cells[3], PATH_MAX, "%s", *r->id.recipe ? r->id.recipe : "-");
    snprintf(cells[4], PATH_MAX, "%s", r->id.dtype != NP_MB_DTYPE_NONE ? np_mb_dtype_name(r->id.dtype) : "-");
    snprintf(cells[5], PATH_MAX, "%s", *r->id.gpu ? r->id.gpu : "-");
    snprintf(cells[6], PATH_MAX, "%d", r->id.gpus);
    snprintf(cells[7], PATH_MAX, "%d", r->id.gbs);
    snprintf(cells[8], PATH_MAX, "%d", r->id.seq_len);
    if (x->steps)
        snprintf(cells[9], PATH_MAX, "%ld-%ld", x->first, x->last);
    else
        snprintf(cells[9], PATH_MAX, "-");
    mbridge_run_fmt(cells[10], PATH_MAX, x->step_s, 3);
    mbridge_run_fmt(cells[11], PATH_MAX, x->tokens_per_s_per_gpu, 1);
    mbridge_run_fmt(cells[12], PATH_MAX, x->model_tflops_per_gpu, 1);
    mbridge_run_fmt(cells[13], PATH_MAX, x->logged_tflops_per_gpu, 1);
    mbridge_run_fmt(cells[14], PATH_MAX, 100 * x->tflops_disagreement, 2);
    mbridge_run_fmt(cells[15], PATH_MAX, x->mfu_percent, 2);
    mbridge_run_fmt(cells[16], PATH_MAX, r->row ? r->row->tokens_per_s_per_gpu : NAN, 0);
    mbridge_run_fmt(cells[17], PATH_MAX, r->row ? r->row->model_tflops_per_gpu : NAN, 0);
    snprintf(cells[18], PATH_MAX, "%s", r->verdict ? r->verdict : "-");
    /* every note that applies, joined: a problem never hides the cross-check's disagreement */
    size_t at = 0;
    cells[19][0] = '\0';
    if (x->problem[0])
        mbridge_run_note(cells[19], &at, "%s", x->problem);
    if (!isnan(x->tflops_disagreement) && fabs(x->tflops_disagreement) > 0.015)
        mbridge_run_note(cells[19], &at, "rank 0 logs %.1f TFLOP/s/GPU, Megatron-Bridge's formula gives %.1f",
                         x->logged_tflops_per_gpu, x->model_tflops_per_gpu);
    if (isnan(x->model_tflops_per_gpu) && x->why_flops)
        mbridge_run_note(cells[19], &at, "%s", x->why_flops);
    if (r->synthetic && r->row)
        mbridge_run_note(cells[19], &at, "synthetic: nemoperf-synth stood in for the rank command (not compared)");
    if (!r->row && !strcmp(r->status, "ok"))
        mbridge_run_note(cells[19], &at, "no published row for this run");
    if (!at)
        snprintf(cells[19], PATH_MAX, "-");
}

static int mbridge_run_markdown(struct mbridge_run *runs, size_t n, FILE *out)
{
    char *refdir = np_data_path("reference");
    int rc = 0;
    if (!refdir) {
        np_errorf("reference folder not found (set NEMOPERF_DATADIR)");
        return 1;
    }
    /* one table per container, in the order the runs name them */
    for (size_t i = 0; i < n; i++) {
        if (!runs[i].row)
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = runs[j].row && strcmp(runs[j].row->container, runs[i].row->container) == 0;
        if (seen)
            continue;
        struct np_mb_measured *m = calloc(n, sizeof *m);
        size_t nm = 0;
        for (size_t j = 0; m && j < n; j++) {
            const struct np_mb_row *r = runs[j].row;
            if (!r || strcmp(r->container, runs[i].row->container) != 0 || isnan(runs[j].res.tokens_per_s_per_gpu))
                continue;
            const char *colon = strrchr(r->source, ':');
            m[nm].line = colon ? atoi(colon + 1) : 0;
            m[nm].second = strcmp(r->published_as, "second") == 0;
            m[nm].tokens_per_s_per_gpu = runs[j].res.tokens_per_s_per_gpu;
            /* NVIDIA's column is Megatron-Bridge's own rank-0 figure (llmb averages it); the formula's when the
             * log has none */
            m[nm].tflops_per_gpu = !isnan(runs[j].res.logged_tflops_per_gpu) ? runs[j].res.logged_tflops_per_gpu
                                                                              : runs[j].res.model_tflops_per_gpu;
            nm++;
        }
        char layout[PATH_MAX];
        snprintf(layout, sizeof layout, "%s/megatron-bridge/%s.tsv", refdir, runs[i].row->container);
        struct np_error err;
        memset(&err, 0, sizeof err);
        if (!m || (i && fputc('\n', out) == EOF) ||
            np_mb_md_render(out, layout, runs[i].row->container, m, nm, 0, &err) != NP_OK) {
            if (m)
                np_error_print(&err);
            else
                np_errorf("%s", np_strerror(NP_E_NOMEM));
            rc = 1;
        }
        free(m);
    }
    int header = 0;
    for (size_t i = 0; i < n; i++)
        if (!runs[i].row) {
            if (!header++)
                fputs("\nRuns in no published row:\n\n", out);
            char cells[MBR_NCOLS][PATH_MAX];
            mbridge_run_cells(&runs[i], cells);
            fprintf(out, "- %s: %s %s %s x %s, %s tokens/s/GPU, %s (%s)\n", cells[0], cells[3], cells[4], cells[5],
                    cells[6], cells[11], cells[1], cells[19]);
        }
    free(refdir);
    return rc;
}

/* Run paths: a file, a folder with a log, or (recursively, in name order) the folders below one without. */
static int mbridge_run_expand(const char *path, char ***list, size_t *n, size_t *cap, int depth)
{
    struct stat sb;
    char log[PATH_MAX];
    if (depth < 16 && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && !mbridge_run_find_log(path, log, sizeof log)) {
        struct dirent **ents;
        int k = scandir(path, &ents, NULL, alphasort);
        int ok = 1;
        for (int i = 0; i < k; i++) {
            char sub[PATH_MAX];
            if (ok && ents[i]->d_name[0] != '.' &&
                snprintf(sub, sizeof sub, "%s/%s", path, ents[i]->d_name) < (int)sizeof sub &&
                stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode))
                ok = mbridge_run_expand(sub, list, n, cap, depth + 1);
            free(ents[i]);
        }
        free(ents);
        if (k >= 0)
            return ok;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        char **nl = realloc(*list, nc * sizeof *nl);
        if (!nl)
            return 0;
        *list = nl;
        *cap = nc;
    }
    return ((*list)[(*n)++] = strdup(path)) != NULL;
}

int np_mb_parse_paths(char *const *argpaths, size_t nargs, const struct np_mb_opts *o, const struct np_mb_ref *ref,
                      enum np_format fmt, FILE *out)
{
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int ok = 1;
    for (size_t i = 0; ok && i < nargs; i++)
        ok = mbridge_run_expand(argpaths[i], &paths, &n, &cap, 0);
    struct mbridge_run *runs = ok ? calloc(n ? n : 1, sizeof *runs) : NULL;
    if (!runs) {
        np_errorf("%s", np_strerror(NP_E_NOMEM));
        for (size_t i = 0; i < n; i++)
            free(paths[i]);
        free(paths);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        mbridge_run_one(paths[i], o, ref, &runs[i]);
        if (strcmp(runs[i].status, "ok") != 0 && strcmp(runs[i].status, "synthetic") != 0) {
            np_errorf("%s: %s%s%s", paths[i], runs[i].status, runs[i].res.problem[0] ? ": " : "",
                      runs[i].res.problem);
            rc = 1;
        } else if (runs[i].verdict && strcmp(runs[i].verdict, "PASS") != 0) {
            rc = 1;
        }
    }
    static char cells[MBR_NCOLS][PATH_MAX];
    if (fmt == NP_FMT_MARKDOWN) {
        if (mbridge_run_markdown(runs, n, out))
            rc = 1;
    } else if (fmt == NP_FMT_JSON) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n; i++) {
            mbridge_run_cells(&runs[i], cells);
            json_t *obj = json_object();
            for (size_t c = 0; obj && c < MBR_NCOLS; c++) {
                char *end;
                double v = strtod(cells[c], &end);
                int numeric = c >= 6 && c != 9 && c != 18 && c != 19 && *cells[c] && !*end;
                json_t *val = strcmp(cells[c], "-") == 0 ? json_null()
                              : !numeric                 ? json_string(cells[c])
                              : c <= 8                   ? json_integer((json_int_t)v)
                                                         : json_real(v);
                json_object_set_new(obj, mbridge_run_cols[c], val);
            }
            json_array_append_new(arr, obj);
        }
        if (!arr || json_dumpf(arr, out, JSON_INDENT(1)) != 0 || fputc('\n', out) == EOF)
            rc = 1;
        json_decref(arr);
    } else {
        const char *sep = fmt == NP_FMT_CSV ? "," : "\t";
        for (size_t c = 0; c < MBR_NCOLS; c++)
            fprintf(out, "%s%s", c ? sep : "", mbridge_run_cols[c]);
        fputc('\n', out);
        for (size_t i = 0; i < n; i++) {
            mbridge_run_cells(&runs[i], cells);
            for (size_t c = 0; c < MBR_NCOLS; c++) {
                if (c)
                    fputs(sep, out);
                if (fmt == NP_FMT_CSV)
                    np_text_csv_field(out, cells[c], 0);
                else
                    fputs(cells[c], out);
            }
            fputc('\n', out);
        }
    }
    free(runs);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return rc;
}
