/* session.c - one nemoperf-parse invocation (report/session.h): the options a front end read, run to an
 * exit status.  The parse streamed into a report (every format without --slurm, --group, --plot or --nccl)
 * or held whole for those passes, --store into one transaction, --history and --compare over the store; what
 * goes wrong is said through diag.  The scheduler backend of --slurm is the front end's (passed in).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/flops.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/diagnose.h"
#include "nemoperf/parse/mbridge.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/parse/runs_slurm.h"
#include "nemoperf/parse/system.h"
#include "nemoperf/report/aggregate.h"
#include "nemoperf/report/history.h"
#include "nemoperf/report/ncclreport.h"
#include "nemoperf/report/plot.h"
#include "nemoperf/report/report.h"
#include "nemoperf/report/session.h"
#include "nemoperf/store/store.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/text.h"

/* Strict positive integer in [1, max]; names the option on error. */
int np_session_int(const char *opt, const char *arg, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < 1 || v > max) {
        np_errorf("%s: '%s' is not an integer between 1 and %ld", opt, arg, max);
        return 0;
    }
    *out = v;
    return 1;
}

int np_session_double(const char *opt, const char *arg, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end || !isfinite(v) || v < min || v > max) {
        np_errorf("%s: '%s' is not a number between %g and %g", opt, arg, min, max);
        return 0;
    }
    *out = v;
    return 1;
}

static int session_copy(const char *opt, const char *arg, char *dst, size_t size)
{
    if (!*arg || strlen(arg) >= size) {
        np_errorf("%s: '%s' is empty or too long (at most %zu characters)", opt, arg, size - 1);
        return 0;
    }
    strcpy(dst, arg);
    return 1;
}

/* ---- the streamed report: every format without --slurm, --group or --plot ---- */

/* The runs of the walk go to a temporary file while the scaling efficiency of their
 * configurations is summed (it needs every run of a sweep); then each run is read back, given
 * its efficiency and written: memory holds the walk's folders in flight, not the runs.  CSV, JSON
 * and table rows are formatted as the walk hands them over (beside the threads still reading logs)
 * with a slot for the efficiency: the end is then a copy (a table's, its widths and padding).  Records: 'T' a rendered row, 'R' a run.
 * Markdown shows no efficiency: its runs go to the report as they come (spill NULL). */
/* --store: every run reported goes into the store, in one transaction. */
struct session_store {
    struct np_store *s;
    struct np_store_ctx ctx;
    size_t added, updated, same;
    size_t unidentified;  /* runs left out: nothing to key them on (np_store_identified) */
    char first[1024];     /* the first of them, and why, for the note */
    struct np_error err;
    int failed;
};

static enum np_status session_store_run(struct session_store *ps, const struct np_run *r)
{
    struct np_store_rec rec;
    enum np_store_outcome oc = NP_STORE_SAME;
    if (!np_store_identified(r)) { /* stored, it would be a configuration of question marks */
        if (!ps->unidentified++)
            snprintf(ps->first, sizeof ps->first, "%s%s%s", r->dir ? r->dir : r->path ? r->path : "?",
                     r->why ? ": " : "", r->why ? r->why : "");
        return NP_OK;
    }
    enum np_status st = np_store_rec_from_run(r, &ps->ctx, &rec);
    if (st != NP_OK)
        np_error_set(&ps->err, st, "--store", 0, 0, "out of memory");
    else
        st = np_store_put(ps->s, &rec, &oc, &ps->err);
    np_store_rec_clear(&rec);
    if (st != NP_OK) {
        ps->failed = 1;
        return st;
    }
    ps->added += oc == NP_STORE_ADDED;
    ps->updated += oc == NP_STORE_UPDATED;
    ps->same += oc == NP_STORE_SAME;
    return NP_OK;
}

struct session_out {
    struct session_store *store; /* NULL: no --store */
    struct np_report *rep;
    int quiet;
    FILE *spill;
    struct np_scaling eff;
    size_t nruns, nerrors;
    size_t ncompared; /* --reference: runs with a verdict (not "not compared") */
    int bad; /* markdown: a run not ok, or FAIL/FAST */
};

struct session_row { /* after a 'T' and the row's text */
    uint32_t len;
    uint32_t eff_at;
    int64_t at;  /* np_scaling_add_at */
    double tpg;
    int32_t bad; /* a run that makes the exit status 1 */
};

static int session_run_bad(const struct np_run *r)
{
    return !np_run_status_good(r->status) || r->verdict == NP_VERDICT_FAIL || r->verdict == NP_VERDICT_FAST;
}

static enum np_status session_sink_run(void *ctx, const struct np_run *r)
{
    struct session_out *po = ctx;
    po->nruns++;
    po->ncompared += r->verdict == NP_VERDICT_PASS || r->verdict == NP_VERDICT_FAIL || r->verdict == NP_VERDICT_FAST;
    if (po->store) {
        enum np_status sst = session_store_run(po->store, r);
        if (sst != NP_OK)
            return sst;
    }
    if (!po->spill) {
        po->bad |= session_run_bad(r);
        return np_report_run(po->rep, r);
    }
    long at;
    double tpg;
    enum np_status st = np_scaling_add_at(&po->eff, r, &at, &tpg);
    if (st != NP_OK)
        return st;
    if (np_report_renders(po->rep)) {
        struct np_report_text t;
        st = np_report_render(po->rep, r, &t);
        if (st == NP_OK && t.len < UINT32_MAX) {
            struct session_row h = {(uint32_t)t.len, (uint32_t)t.eff_at, at, tpg, session_run_bad(r)};
            return putc('T', po->spill) != EOF && fwrite(&h, sizeof h, 1, po->spill) == 1 &&
                           fwrite(t.text, 1, t.len, po->spill) == t.len
                       ? NP_OK
                       : NP_E_IO;
        }
        if (st != NP_OK && st != NP_E_INVALID)
            return st;
    }
    return putc('R', po->spill) != EOF ? np_run_spill_put(po->spill, r) : NP_E_IO;
}

/* The next record of the spill, written out; 0 at the end, -1 when the spill is unreadable. */
static int session_put_next(struct session_out *po, char **buf, size_t *cap, int *rc, enum np_status *st)
{
    int type = getc(po->spill);
    if (type == EOF)
        return ferror(po->spill) ? -1 : 0;
    if (type == 'T') {
        struct session_row h;
        if (fread(&h, sizeof h, 1, po->spill) != 1 || h.eff_at > h.len)
            return -1;
        if (h.len > *cap) {
            char *nb = realloc(*buf, h.len);
            if (!nb) {
                *st = NP_E_NOMEM;
                return 1;
            }
            *buf = nb;
            *cap = h.len;
        }
        if (fread(*buf, 1, h.len, po->spill) != h.len)
            return -1;
        if (h.bad)
            *rc = 1;
        errno = 0;
        *st = np_report_put(po->rep, *buf, h.len, h.eff_at, np_scaling_eff_at(&po->eff, (long)h.at, h.tpg));
        return 1;
    }
    struct np_run r;
    if (type != 'R' || np_run_spill_get(po->spill, &r) != 1)
        return -1;
    r.scaling_eff = np_scaling_eff(&po->eff, &r);
    if (session_run_bad(&r))
        *rc = 1;
    errno = 0;
    *st = np_report_run(po->rep, &r);
    np_run_clear(&r);
    return 1;
}

static enum np_status session_sink_error(void *ctx, const char *msg)
{
    struct session_out *po = ctx;
    po->nerrors++;
    if (!po->quiet)
        np_errorf("%s", msg);
    return np_report_error(po->rep, msg);
}

/* Nothing to report: say where it was looked for. */
static void session_none_found(const char *include, char *const *paths, size_t npaths)
{
    if (npaths == 1)
        np_errorf("no log files matching '%s' found in %s", include, paths[0]);
    else
        np_errorf("no log files matching '%s' found in %s, ... (%zu paths)", include, npaths ? paths[0] : ".",
                  npaths);
}

/* Flush and close the cleaning stream over stdout (not stdout itself); 1 when that fails. */
static int session_close_out(FILE *out, int rc)
{
    if (out == stdout)
        return rc;
    errno = 0;
    if (fclose(out) != 0 && rc == 0) {
        np_errorf("cannot write the report to standard output: %s", strerror(errno ? errno : EIO));
        return 1;
    }
    return rc;
}

/* --reference compared none of n runs: said once, exit 2 (an option that applies to no run is a usage error, never
 * a silent exit 0; each run's reason is in the report) */
static int session_reference_none(size_t n)
{
    np_errorf("--reference: none of the %zu run%s could be compared with a published row (each run's reason is in the "
              "report)", n, n == 1 ? "" : "s");
    return 2;
}

static int session_stream(FILE *out, char *const *paths, size_t npaths, const struct np_parse_opts *o,
                        const struct np_recipe_set *recipes, const struct np_ref_table *ref, enum np_format fmt,
                        int quiet, struct session_store *ps)
{
    int md = fmt == NP_FMT_MARKDOWN;
    struct session_out po = {ps, NULL, quiet, NULL, {0}, 0, 0, 0, 0};
    int e = 0;
    if (!md && !(po.spill = np_report_tmpfile()))
        e = errno ? errno : EIO;
    if (!e && (po.rep = np_report_new(out, fmt, o)))
        e = np_report_tmp_errno(po.rep); /* markdown's list of the runs in no table */
    if (e || !po.rep) { /* said before anything is read */
        if (e)
            np_errorf("cannot create a temporary file in %s: %s (TMPDIR names the folder)", np_report_tmpdir(),
                      strerror(e));
        else
            np_errorf("%s", np_strerror(NP_E_NOMEM));
        np_report_free(po.rep);
        if (po.spill)
            fclose(po.spill);
        return 1;
    }
    struct np_run_sink sink = {&po, session_sink_run, session_sink_error, NULL};
    enum np_status st = np_parse_stream(paths, npaths, o, recipes, ref, &sink, NULL);
    int spill_bad = 0, out_bad = 0; /* which I/O failed, and why (issue 13) */
    int rc = po.bad;
    if (st == NP_OK && po.spill && (fflush(po.spill) != 0 || fseek(po.spill, 0, SEEK_SET) != 0)) {
        st = NP_E_IO;
        spill_bad = 1;
        e = errno;
    }
    int got = 0;
    char *row = NULL;
    size_t rowcap = 0;
    while (st == NP_OK && po.spill && (got = session_put_next(&po, &row, &rowcap, &rc, &st)) == 1) {
        if (st == NP_E_IO) {
            out_bad = 1;
            e = errno;
        }
    }
    free(row);
    if (st == NP_OK && got < 0) {
        st = NP_E_IO;
        spill_bad = 1;
        e = errno;
    }
    if (st != NP_OK) {
        if (ps && ps->failed) /* said by the caller */
            ;
        else if (np_report_tmp_errno(po.rep)) /* markdown's list, a table's footer */
            np_errorf("cannot use a temporary file of the report in %s: %s", np_report_tmpdir(),
                      strerror(np_report_tmp_errno(po.rep)));
        else if (out_bad && e) /* a full disk, a closed pipe: said as such */
            np_errorf("cannot write the report to standard output: %s", strerror(e));
        else if (spill_bad)
            np_errorf("cannot use a temporary file of the report in %s: %s", np_report_tmpdir(),
                      e ? strerror(e) : "I/O error");
        else if (st == NP_E_IO)
            np_errorf("writing the report: %s", np_strerror(st));
        else
            np_errorf("%s", np_strerror(st));
        rc = 1;
    } else {
        if (po.nruns == 0) { /* a bad argument was said above: not "no log files" as well */
            if (po.nerrors == 0)
                session_none_found(o->include, paths, npaths);
            rc = 1;
        }
        if (po.nerrors)
            rc = 1; /* a folder or file that could not be read: the report is not the whole truth */
        if (po.nruns || fmt == NP_FMT_JSON) {
            errno = 0;
            enum np_status w = np_report_finish(po.rep);
            e = errno;
            if (w == NP_E_IO && np_report_tmp_errno(po.rep))
                np_errorf("cannot use a temporary file of the report in %s: %s", np_report_tmpdir(),
                          strerror(np_report_tmp_errno(po.rep)));
            else if (w == NP_E_IO && e)
                np_errorf("cannot write the report to standard output: %s", strerror(e));
            else if (w != NP_OK)
                np_errorf("writing the report: %s", np_strerror(w));
            if (w != NP_OK)
                rc = 1;
        }
        if (o->reference && po.nruns && !po.ncompared) { /* applies to none: never a silent exit 0 */
            rc = session_reference_none(po.nruns);
        }
    }
    np_report_free(po.rep);
    np_scaling_free(&po.eff);
    if (po.spill)
        fclose(po.spill);
    return rc;
}

/* Open the store --db names (default: NEMOPERF_DB, then the user's data folder).  0, else the exit code
 * (said). */
static int session_open_store(const char *db, struct np_store **s)
{
    char def[1024];
    struct np_error err;
    if (!db) {
        if (np_store_default_location(def, sizeof def, &err) != NP_OK) {
            np_error_print(&err);
            return 2;
        }
        db = def;
    }
    enum np_status st = np_store_open(db, s, &err);
    if (st != NP_OK) {
        np_error_print(&err);
        return np_exit_code(st);
    }
    return 0;
}

/* The end of --store: commit when everything was stored, else leave the store as it was. */
static int session_store_end(struct session_store *ps, int rc, int quiet)
{
    if (!ps->s)
        return rc;
    if (ps->failed) {
        np_error_print(&ps->err);
        np_errorf("--store: nothing stored (the store is as it was before)");
        np_store_rollback(ps->s);
        rc = 1;
    } else if (np_store_commit(ps->s, &ps->err) != NP_OK) {
        np_error_print(&ps->err);
        np_errorf("--store: nothing stored (the store is as it was before)");
        rc = 1;
    } else if (!quiet) {
        np_notef("stored %zu run%s (%zu added, %zu updated, %zu unchanged)", ps->added + ps->updated + ps->same,
                 ps->added + ps->updated + ps->same == 1 ? "" : "s", ps->added, ps->updated, ps->same);
        if (ps->unidentified)
            np_notef("--store: %zu unidentified run%s not stored (%s%s): a run is stored under its identity; "
                     "give it one with a nemoperf.json manifest, a pretrain_<recipe>_<size>_<dtype>_<gpus> folder, "
                     "or --recipe --size --dtype --gpus --gpu (Megatron-Bridge: --recipe --dtype --gpu --gpus "
                     "--container)",
                     ps->unidentified, ps->unidentified == 1 ? "" : "s", ps->first,
                     ps->unidentified > 1 ? ", ..." : "");
    }
    np_store_close(ps->s);
    ps->s = NULL;
    return rc;
}

/* A selection of the store that matched no run: said, with the nearest stored value of the first key that no run
 * has ("recipe=lama3.1" -> recipe=llama3.1). */
static void session_none_matched(const char *opt, struct np_store *s, const struct np_store_filter *f,
                                 const char *sel)
{
    char hint[400];
    struct np_error err;
    if (np_store_nearest(s, f, hint, sizeof hint, &err) != NP_OK)
        hint[0] = '\0';
    np_notef("%s: 0 runs matched%s%s%s%s%s", opt, *sel ? " " : "", sel, *hint ? "; did you mean " : "", hint,
             *hint ? "?" : "");
}

static enum np_status session_any_row(void *ctx, const struct np_store_rec *rec)
{
    (void)rec;
    *(int *)ctx = 1;
    return NP_OK;
}

/* 1 when f selects a stored run (of any status). */
static int session_any(struct np_store *s, const struct np_store_filter *f)
{
    int any = 0;
    struct np_error err;
    return np_store_select(s, f, 0, NP_STORE_PATH, session_any_row, &any, &err) == NP_OK && any;
}

/* --history [SEL...]: the selectors joined, the identity options as filters too. */
static int session_history(char *const *sel, size_t nsel, const struct np_parse_opts *o, const char *db,
                         enum np_format fmt, double min_effect, const char *plot)
{
    char joined[2048] = "", buf[2048];
    size_t len = 0;
    for (size_t i = 0; i < nsel; i++) {
        const char *x = strncmp(sel[i], "db:", 3) == 0 ? sel[i] + 3 : sel[i];
        int n = snprintf(joined + len, sizeof joined - len, "%s%s", len ? "," : "", x);
        if (n < 0 || (size_t)n >= sizeof joined - len) {
            np_errorf("--history: the selectors are too long");
            return 2;
        }
        len += (size_t)n;
    }
    struct np_store_filter f;
    struct np_error err;
    if (np_store_filter_parse(joined, buf, sizeof buf, &f, &err) != NP_OK) {
        np_error_print(&err);
        return 2;
    }
    char gpu[16];
    if (o->given.recipe[0])
        f.recipe = o->given.recipe;
    if (o->given.model_size[0])
        f.size = o->given.model_size;
    if (o->given.dtype != NP_DTYPE_NONE)
        f.dtype = np_dtype_name(o->given.dtype, 0);
    if (o->given.gpus)
        f.gpus = o->given.gpus;
    if (o->given.gpu_type[0]) {
        snprintf(gpu, sizeof gpu, "%s", o->given.gpu_type);
        f.gpu = gpu;
    }
    struct np_store *s = NULL;
    int rc = session_open_store(db, &s);
    if (rc)
        return rc;
    long long n = 0;
    FILE *out = np_text_out_stream(stdout, fmt == NP_FMT_JSON); /* the reports' one escaping rule */
    if (!out || (o->group ? np_history_write_group : np_history_write)(s, &f, fmt, min_effect, plot, out, &n, &err) !=
                    NP_OK) {
        if (out)
            np_error_print(&err);
        else
            np_errorf("cannot set up standard output: %s", strerror(errno));
        rc = 1;
    } else if (n == 0 && o->group && session_any(s, &f)) {
        np_notef("--history --group: no run %s%shas a steady throughput (status ok or synthetic): no line", joined,
                 *joined ? " " : "");
    } else if (n == 0) {
        session_none_matched("--history", s, &f, joined);
    }
    if (out)
        rc = session_close_out(out, rc);
    if (plot) /* cairo's and fontconfig's caches, as after the other plots (LeakSanitizer) */
        np_plot_cleanup();
    np_store_close(s);
    return rc;
}

/* --compare's systems: the first run folder of each side with a system snapshot (<dir>/system/), "" none. */
struct session_sysdirs {
    char dir[2][4096];
};

/* dir (n bytes of it) into d->dir[side] when the side has none yet and dir holds system/; 1 when taken. */
static int session_sys_take(struct session_sysdirs *d, int side, const char *dir, size_t n)
{
    char p[4200];
    struct stat st;
    if (d->dir[side][0] || n == 0 || n >= sizeof d->dir[side])
        return d->dir[side][0] != 0;
    snprintf(p, sizeof p, "%.*s/system", (int)n, dir);
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    memcpy(d->dir[side], dir, n);
    d->dir[side][n] = '\0';
    return 1;
}

/* The run folders a side of --compare looks into for a system snapshot (its oldest runs first): a bound, so a
 * selection of a million runs none of which has one costs a few stat(2) calls, not a million (make bench) */
#define SESSION_SYS_TRIES 16

struct session_sysrow {
    struct session_sysdirs *d;
    int side, tries;
};

/* A stored run's folder (its log's): stops the selection (NP_E_INVALID, not an error here) once one has system/,
 * or after SESSION_SYS_TRIES folders without. */
static enum np_status session_sys_row(void *ctx, const struct np_store_rec *rec)
{
    struct session_sysrow *r = ctx;
    const char *slash = strrchr(rec->path, '/');
    if (slash && session_sys_take(r->d, r->side, rec->path, (size_t)(slash - rec->path)))
        return NP_E_INVALID;
    return ++r->tries >= SESSION_SYS_TRIES ? NP_E_INVALID : NP_OK;
}

/* The first stored run of selector arg's side with a system snapshot (of its SESSION_SYS_TRIES oldest); nothing said
 * when none. */
static void session_sys_store(struct np_store *s, const char *arg, int side, struct session_sysdirs *d)
{
    char buf[2048];
    struct np_store_filter f;
    struct np_error err;
    if (!s || np_store_filter_parse(arg, buf, sizeof buf, &f, &err) != NP_OK)
        return;
    struct session_sysrow r = {d, side, 0};
    (void)np_store_select(s, &f, 0, NP_STORE_PATH, session_sys_row, &r, &err);
}

static void session_sys_diff(void *ctx, const char *node, const char *what)
{
    struct np_compare_set *set = ctx;
    char line[600];
    snprintf(line, sizeof line, "%s%s%s", node && *node ? node : "", node && *node ? ": " : "", what);
    if (np_compare_set_system_diff(set, line) < 0)
        np_errorf("--compare: %s", np_strerror(NP_E_NOMEM));
}

/* What differs between the two sides' systems (parse/system.h np_system_diff), into set. */
static void session_sys_compare(struct np_compare_set *set, const struct session_sysdirs *d)
{
    if (np_compare_set_system(set, d->dir[0], d->dir[1]) < 0) {
        np_errorf("--compare: %s", np_strerror(NP_E_NOMEM));
        return;
    }
    if (!d->dir[0][0] || !d->dir[1][0])
        return;
    struct np_system a, b;
    struct np_error err;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (np_system_read(d->dir[0], &a, &err) == NP_OK && np_system_read(d->dir[1], &b, &err) == NP_OK)
        np_system_diff(&a, &b, session_sys_diff, set);
    else
        np_errorf("--compare: %s", np_strerror(NP_E_NOMEM));
    np_system_free(&a);
    np_system_free(&b);
}

/* A side of --compare from the store: its runs counted as they are added (0: the selector matched none). */
struct session_side {
    struct np_compare_set *set;
    enum np_cmp_sidename side;
    long long n;
};

static enum np_status session_side_row(void *ctx, const struct np_store_rec *rec)
{
    struct session_side *sd = ctx;
    sd->n++;
    return np_compare_set_add(sd->set, sd->side, rec) < 0 ? NP_E_NOMEM : NP_OK;
}

/* One side of --compare: a folder of runs (parsed now) or db:SEL (the store). */
static int session_compare_side(struct np_compare_set *set, enum np_cmp_sidename side, char *arg,
                              const struct np_parse_opts *o0, const struct np_recipe_set *recipes,
                              const struct np_ref_table *ref, const char *db, struct np_store **s, int quiet,
                              struct session_sysdirs *sys)
{
    struct np_error err;
    if (strncmp(arg, "db:", 3) == 0) {
        char buf[2048];
        struct np_store_filter f;
        if (np_store_filter_parse(arg, buf, sizeof buf, &f, &err) != NP_OK) {
            np_error_print(&err);
            return 2;
        }
        int rc = *s ? 0 : session_open_store(db, s);
        if (rc)
            return rc;
        struct session_side sd = {set, side, 0};
        if (np_store_select(*s, &f, 1, NP_STORE_STATS, session_side_row, &sd, &err) != NP_OK) {
            np_error_print(&err);
            return 1;
        }
        if (sd.n == 0) /* said; the comparison then says that no configuration is on both sides (exit 1) */
            session_none_matched("--compare", *s, &f, arg + 3);
        session_sys_store(*s, arg, side, sys);
        return 0;
    }
    struct np_parse_opts o = *o0;
    o.keep_samples = 1;
    struct np_parse_result res;
    char *paths[] = {arg, NULL};
    if (np_parse_paths(paths, 1, &o, recipes, ref, &res) != NP_OK) {
        np_errorf("--compare: %s: %s", arg, np_strerror(NP_E_NOMEM));
        return 1;
    }
    int rc = 0;
    if (!quiet)
        for (size_t i = 0; i < res.nerrors; i++)
            np_errorf("%s", res.errors[i]);
    if (res.nruns == 0) {
        np_errorf("--compare: no runs found under %s", arg);
        rc = 1;
    }
    for (size_t i = 0; i < res.nruns && !rc; i++) {
        if (res.runs[i].dir)
            session_sys_take(sys, side, res.runs[i].dir, strlen(res.runs[i].dir));
        struct np_store_rec rec;
        if (np_store_rec_from_run(&res.runs[i], NULL, &rec) != NP_OK || np_compare_set_add(set, side, &rec) < 0) {
            np_errorf("--compare: %s", np_strerror(NP_E_NOMEM));
            rc = 1;
        }
        np_store_rec_clear(&rec);
    }
    np_parse_result_free(&res);
    return rc;
}

/* Both sides from the store: one pass over it (np_store_select_sides), each run added to the sides it is on. */
struct session_both {
    struct np_compare_set *set;
    long long n[2];
    int nomem;
};

static enum np_status session_both_row(void *ctx, const struct np_store_rec *rec, unsigned sides)
{
    struct session_both *b = ctx;
    for (int k = 0; k < 2; k++)
        if (sides & (1u << k)) {
            b->n[k]++;
            if (np_compare_set_add(b->set, k ? NP_CMP_CAND : NP_CMP_BASE, rec) < 0)
                return NP_E_NOMEM;
        }
    return NP_OK;
}

static int session_compare_store(struct np_compare_set *set, char *const *sides, const char *db, struct np_store **s)
{
    char buf[2][2048];
    struct np_store_filter f[2];
    struct np_error err;
    for (int k = 0; k < 2; k++)
        if (np_store_filter_parse(sides[k], buf[k], sizeof buf[k], &f[k], &err) != NP_OK) {
            np_error_print(&err);
            return 2;
        }
    int rc = session_open_store(db, s);
    if (rc)
        return rc;
    struct session_both b = {set, {0, 0}, 0};
    if (np_store_select_sides(*s, &f[0], &f[1], session_both_row, &b, &err) != NP_OK) {
        np_error_print(&err);
        return 1;
    }
    for (int k = 0; k < 2; k++)
        if (b.n[k] == 0) /* said; the comparison then says that no configuration is on both sides (exit 1) */
            session_none_matched("--compare", *s, &f[k], sides[k] + 3);
    return 0;
}

static int session_compare(char *const *sides, const struct np_parse_opts *o, const struct np_recipe_set *recipes,
                         const struct np_ref_table *ref, const char *db, enum np_format fmt, double min_effect,
                         int quiet, int energy)
{
    struct np_compare_set *set = np_compare_set_new();
    struct np_store *s = NULL;
    if (!set) {
        np_errorf("%s", np_strerror(NP_E_NOMEM));
        return 1;
    }
    np_compare_set_metric(set, energy ? NP_CMP_METRIC_ENERGY : NP_CMP_METRIC_THROUGHPUT);
    int both = strncmp(sides[0], "db:", 3) == 0 && strncmp(sides[1], "db:", 3) == 0; /* one pass over the store */
    struct session_sysdirs *sys = calloc(1, sizeof *sys);
    if (!sys) {
        np_compare_set_free(set);
        np_errorf("%s", np_strerror(NP_E_NOMEM));
        return 1;
    }
    int rc = both ? session_compare_store(set, sides, db, &s)
                  : session_compare_side(set, NP_CMP_BASE, sides[0], o, recipes, ref, db, &s, quiet, sys);
    if (!rc && !both)
        rc = session_compare_side(set, NP_CMP_CAND, sides[1], o, recipes, ref, db, &s, quiet, sys);
    for (int k = 0; !rc && both && k < 2; k++)
        session_sys_store(s, sides[k], k, sys);
    if (!rc) /* what differs between the systems the two sides ran on (beside each verdict's likely causes) */
        session_sys_compare(set, sys);
    free(sys);
    char kinds[200];
    if (!rc && np_compare_set_kinds_apart(set, kinds, sizeof kinds)) {
        np_errorf("--compare: %s: runs of different kinds are never compared (a profile, trace or checkpoint run "
                  "does other work than a benchmark); select one kind on both sides (db:kind=benchmark)",
                  kinds);
        rc = 2;
    }
    if (!rc) {
        size_t nslower = 0, ncompared = 0;
        errno = 0;
        FILE *out = np_text_out_stream(stdout, fmt == NP_FMT_JSON); /* the reports' one escaping rule */
        enum np_status w = out ? np_compare_write(set, fmt, min_effect, out, &nslower, &ncompared) : NP_E_IO;
        if (out && session_close_out(out, 0))
            w = NP_E_IO;
        if (w != NP_OK) {
            np_errorf("cannot write the comparison: %s", errno ? strerror(errno) : np_strerror(w));
            rc = 1;
        } else if (!ncompared) {
            np_errorf("--compare: no configuration has runs on both sides (runs of status ok or synthetic count%s)",
                      energy ? "; --metric energy: runs whose log or telemetry gives their energy" : "");
            rc = 1;
        } else if (nslower) {
            rc = 1;
        }
    }
    np_store_close(s);
    np_compare_set_free(set);
    return rc;
}

/* Megatron-Bridge's published runs and peaks for its family of runs (parse/family_mbridge.c) into *mb (free
 * with np_mb_ref_free): not installed, its runs are unidentified (said per run); an unknown --container is a
 * usage error.  0, else 2 (said). */
static int session_mbridge_data(struct np_parse_opts *o, struct np_mb_ref *mb)
{
    struct np_error err;
    if (np_mb_ref_load_default(mb, &err) != NP_OK) {
        if (o->given.container[0] || o->given.precision[0]) {
            np_error_print(&err);
            return 2;
        }
        return 0;
    }
    o->mbref = mb;
    int known = !o->given.container[0];
    for (size_t i = 0; !known && i < mb->n; i++)
        known = strcmp(mb->rows[i].container, o->given.container) == 0;
    if (!known) {
        np_errorf("--container: %s has no published Megatron-Bridge table (25.09 to %s)", o->given.container,
                  mb->n ? mb->rows[0].container : "?");
        return 2;
    }
    return 0;
}

void np_session_init(struct np_session *s)
{
    memset(s, 0, sizeof *s);
    np_parse_opts_init(&s->opts);
    s->fmt = NP_FMT_TABLE;
    s->min_effect = NP_MIN_EFFECT_DEFAULT;
}

/* The identity options: their names and what each writes (one row each). */
enum session_given_kind { SG_TEXT, SG_INT, SG_DTYPE, SG_CONTAINER, SG_GPU, SG_TASK };
struct session_given {
    const char *name, *label; /* the option; how a message names it */
    enum session_given_kind kind;
    size_t off, size; /* in struct np_identity: a text's buffer, an int */
    long max;
};
#define SG_AT(f) offsetof(struct np_identity, f), sizeof(((struct np_identity *)0)->f)
static const struct session_given session_given_table[] = {
    {"recipe", "--recipe", SG_TEXT, SG_AT(recipe), 0},
    {"size", "--size/--model", SG_TEXT, SG_AT(model_size), 0},
    {"model", "--size/--model", SG_TEXT, SG_AT(model_size), 0}, /* AutoModel: the benchmark YAML's base name */
    {"system", "--system", SG_TEXT, SG_AT(system), 0},
    {"gpus", "--gpus", SG_INT, SG_AT(gpus), 10000000},
    {"seq-len", "--seq-len", SG_INT, SG_AT(seq_len), 100000000},
    {"gbs", "--gbs", SG_INT, SG_AT(gbs), 100000000},
    {"dtype", "--dtype", SG_DTYPE, 0, 0, 0},
    {"container", "--container", SG_CONTAINER, SG_AT(container), 0},
    {"gpu", "--gpu", SG_GPU, SG_AT(gpu_type), 0},
    {"task", "--task", SG_TASK, SG_AT(task), 0},
};

int np_session_given(struct np_session *s, const char *name, const char *arg)
{
    struct np_identity *g = &s->opts.given;
    const struct session_given *t = NULL;
    for (size_t i = 0; !t && i < sizeof session_given_table / sizeof *session_given_table; i++)
        if (strcmp(session_given_table[i].name, name) == 0)
            t = &session_given_table[i];
    if (!t)
        return -1;
    char *field = (char *)g + t->off;
    long l;
    switch (t->kind) {
    case SG_TEXT: return session_copy(t->label, arg, field, t->size);
    case SG_INT:
        if (!np_session_int(t->label, arg, t->max, &l))
            return 0;
        *(int *)(void *)field = (int)l;
        return 1;
    case SG_DTYPE:
        /* Megatron-Bridge's -c names and the published labels (fp8_mx, MXFP8, NVFP4, ...) as well */
        g->dtype = np_dtype_parse(arg);
        if (g->dtype == NP_DTYPE_NONE && np_mb_dtype_parse(arg) != NP_MB_DTYPE_NONE) {
            enum np_mb_dtype md = np_mb_dtype_parse(arg); /* Megatron-Bridge's: its family's runs */
            snprintf(g->precision, sizeof g->precision, "%s", np_mb_dtype_name(md));
            g->dtype = md == NP_MB_BF16 ? NP_DTYPE_BF16 : NP_DTYPE_FP8;
        }
        if (g->dtype == NP_DTYPE_NONE) {
            np_errorf("--dtype: '%s' is not bf16, fp8, fp8_cs, fp8_mx, fp8_sc or nvfp4 (or BF16, FP8, FP8-CS, "
                      "MXFP8, FP8-MX, NVFP4)", arg);
            return 0;
        }
        return 1;
    case SG_CONTAINER:
        if (!session_copy(t->label, arg, field, t->size))
            return 0;
        if (strspn(arg, "0123456789.") != strlen(arg) || !np_mb_container_newer(arg, "0.0")) {
            np_errorf("--container: '%s' is not a container version such as 26.08 or 26.06.01", arg);
            return 0;
        }
        return 1;
    case SG_GPU: {
        if (np_gpu_peak_tflops(arg, NP_DTYPE_BF16) <= 0) {
            char list[128] = "";
            for (const char *const *gt = np_gpu_types(); *gt; gt++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "", *gt);
            np_errorf("--gpu: '%s' is not a known GPU type (%s)", arg, list);
            return 0;
        }
        size_t i = 0;
        for (; arg[i] && i + 1 < t->size; i++)
            field[i] = (char)((arg[i] >= 'A' && arg[i] <= 'Z') ? arg[i] + 32 : arg[i]);
        field[i] = '\0';
        return 1;
    }
    case SG_TASK: {
        enum np_task tk;
        if (np_task_parse(arg, &tk) != 0) {
            np_errorf("--task %s: expected pretrain, sft or lora", arg);
            return 0;
        }
        snprintf(field, t->size, "%s", np_task_name(tk));
        return 1;
    }
    }
    return 0;
}

/* Every pass after the options are checked and the Megatron-Bridge rows loaded: the exit status. */
/* 1 when --reference compared none of res's runs (every verdict "not compared") */
static int session_none_compared(const struct np_parse_result *res)
{
    for (size_t i = 0; i < res->nruns; i++)
        if (res->runs[i].verdict == NP_VERDICT_PASS || res->runs[i].verdict == NP_VERDICT_FAIL ||
            res->runs[i].verdict == NP_VERDICT_FAST)
            return 0;
    return 1;
}

/* 1 when --nccl found nothing to read in any run: no NCCL lines, no step lines */
static int session_none_diagnosed(const struct np_diag *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (d[i].nccl || d[i].steps)
            return 0;
    return 1;
}

static int session_parse(struct np_session *s, char *const *paths, size_t npaths)
{
    struct np_parse_opts *o = &s->opts;
    enum np_format fmt = s->fmt;
    int quiet = s->quiet, store = s->store, slurm = s->slurm, nccl = s->nccl, strict = s->strict;
    const char *plot = s->plot, *db = s->db;
    struct np_backend *be = NULL;
    if (slurm) { /* a bad scheduler setting is a usage error, found before anything is read */
        int brc = s->backend ? s->backend(s->backend_ctx, &be) : 2;
        if (brc)
            return brc;
    }
    struct np_error err;
    struct np_recipe_set recipes;
    if (np_recipe_set_load_default(&recipes, &err) != NP_OK) {
        np_error_print(&err);
        return 1;
    }
    struct np_ref_table ref = {0};
    if (o->reference && np_ref_load_default(&ref, &err) != NP_OK) {
        np_error_print(&err);
        np_recipe_set_free(&recipes);
        return 1;
    }
    if (s->compare) {
        int rc = session_compare(s->args, o, &recipes, &ref, db, fmt, s->min_effect, quiet, s->energy);
        np_ref_free(&ref);
        np_recipe_set_free(&recipes);
        return rc;
    }
    struct session_store ps;
    memset(&ps, 0, sizeof ps);
    ps.ctx.cluster = s->cluster;
    if (store) {
        int orc = session_open_store(db, &ps.s);
        if (!orc && np_store_begin(ps.s, &ps.err) != NP_OK) {
            np_error_print(&ps.err);
            orc = 1;
        }
        if (orc) {
            np_store_close(ps.s);
            np_ref_free(&ref);
            np_recipe_set_free(&recipes);
            return orc;
        }
        o->keep_samples = 1;
    }
    /* a pipe or file gets large writes; a terminal sees output as it comes */
    static char obuf[1 << 18];
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    /* one rule for every format: a control byte of a folder name or log line never reaches the terminal or a
     * file raw ('?' in the table, markdown and CSV; its \u escape in JSON: util/text.c) */
    FILE *out = np_text_out_stream(stdout, fmt == NP_FMT_JSON);
    if (!out) {
        np_errorf("cannot set up standard output: %s", strerror(errno));
        np_ref_free(&ref);
        np_recipe_set_free(&recipes);
        return 1;
    }
    if (!slurm && !o->group && !plot && !nccl) {
        int rc = session_stream(out, paths, npaths, o, &recipes, &ref, fmt, quiet, store ? &ps : NULL);
        rc = session_store_end(&ps, rc, quiet);
        rc = session_close_out(out, rc);
        np_ref_free(&ref);
        np_recipe_set_free(&recipes);
        return rc;
    }
    /* --slurm, --group, --plot and --nccl work on every run at once (memory grows with the runs) */
    struct np_parse_result res;
    enum np_status st = np_parse_paths(paths, npaths, o, &recipes, &ref, &res);
    int rc = 0;
    if (st != NP_OK) {
        np_errorf("%s", np_strerror(st));
        rc = 1;
    } else {
        if (!quiet)
            for (size_t i = 0; i < res.nerrors; i++)
                np_errorf("%s", res.errors[i]);
        if (res.nruns == 0) { /* a bad argument was said above: not "no log files" as well */
            if (res.nerrors == 0)
                session_none_found(o->include, paths, npaths);
            rc = 1;
        }
        if (res.nerrors)
            rc = 1; /* a folder or file that could not be read: the report is not the whole truth */
        if (slurm) {
            enum np_status qs = np_runs_ask_slurm(&res, be, &err);
            if (qs != NP_OK) {
                np_errorf("--slurm: cannot ask the scheduler: %s: %s", err.source, err.text);
                rc = 1;
            }
        }
        np_runs_scaling_efficiency(&res);
        for (size_t i = 0; store && i < res.nruns; i++)
            if (session_store_run(&ps, &res.runs[i]) != NP_OK)
                break;
        for (size_t i = 0; i < res.nruns; i++)
            if (!np_run_status_good(res.runs[i].status) || res.runs[i].verdict == NP_VERDICT_FAIL ||
                res.runs[i].verdict == NP_VERDICT_FAST)
                rc = 1;
        struct np_diag *diags = NULL;
        if (nccl && res.nruns) { /* before the report: the findings go into the runs' notes */
            enum np_status ds = np_diag_runs(&res, &diags);
            if (ds != NP_OK) {
                np_errorf("--nccl: %s", np_strerror(ds));
                rc = 1;
            }
            for (size_t i = 0; diags && i < res.nruns; i++) {
                if (diags[i].error[0] && !quiet)
                    np_errorf("--nccl: %s", diags[i].error);
                if (strict && diags[i].nnet_warnings)
                    rc = 1;
            }
        }
        if (res.nruns || fmt == NP_FMT_JSON) {
            errno = 0;
            enum np_status w = diags ? np_diag_report_write(out, (enum np_format)fmt, &res, o, diags)
                                     : np_report_write(out, (enum np_format)fmt, &res, o);
            int e = errno;
            if (w == NP_E_IO && e) /* a full disk, a closed pipe: said as such */
                np_errorf("cannot write the report to standard output: %s", strerror(e));
            else if (w != NP_OK)
                np_errorf("writing the report: %s", np_strerror(w));
            if (w != NP_OK)
                rc = 1;
        }
        /* an option that applies to none of the runs is a usage error, never a silent exit 0: each run's reason
         * is in the report above */
        if (o->reference && res.nruns && session_none_compared(&res)) {
            rc = session_reference_none(res.nruns);
        }
        if (diags && res.nruns && session_none_diagnosed(diags, res.nruns)) {
            np_errorf("--nccl: no run has a log with training steps or NCCL lines to diagnose");
            rc = 2;
        }
        if (plot && res.nruns) {
            struct np_error perr;
            enum np_status pst = diags ? np_diag_plot(plot, &res, diags, &perr)
                                       : np_plot_write(plot, &res, o->reference ? &ref : NULL, NULL, &perr);
            if (pst != NP_OK) {
                np_error_print(&perr);
                /* an option that applies to none of the runs is a usage error, never a silent exit 0 */
                rc = pst == NP_E_NOTFOUND ? 2 : 1;
            }
            np_plot_cleanup();
        }
        np_diag_free(diags, res.nruns);
    }
    rc = session_store_end(&ps, rc, quiet);
    np_parse_result_free(&res);
    np_ref_free(&ref);
    np_recipe_set_free(&recipes);
    return session_close_out(out, rc);
}

int np_session_run(struct np_session *s)
{
    struct np_parse_opts *o = &s->opts;
    int compare = s->compare, history = s->history;
    if (o->group && s->fmt == NP_FMT_MARKDOWN && !history) {
        np_errorf("--group: not with --format markdown (the published tables show one run per column)");
        return 2;
    }
    if (s->store + history + compare > 1) {
        np_errorf("--store, --history and --compare: one at a time");
        return 2;
    }
    if (s->energy && !compare) {
        np_errorf("--metric: applies to --compare only");
        return 2;
    }
    if (compare && s->nargs != 2) {
        np_errorf("--compare: expected BASELINE CANDIDATE (each a folder of runs or db:SELECTOR), got %zu argument%s",
                  s->nargs, s->nargs == 1 ? "" : "s");
        return 2;
    }
    if ((compare && (s->plot || o->group || s->slurm || s->nccl)) || (history && (s->slurm || s->nccl))) {
        np_errorf(compare ? "--compare: not with --plot, --group, --slurm or --nccl" : "--history: not with --slurm or --nccl");
        return 2;
    }
    if (history)
        return session_history(s->args, s->nargs, o, s->db, s->fmt, s->min_effect, s->plot);
    o->progress = !s->no_progress && isatty(STDERR_FILENO);
    const char *after = getenv("NEMOPERF_PROGRESS_AFTER"); /* seconds; tests set 0 */
    if (after && *after) {
        char *end;
        double v = strtod(after, &end);
        if (*end || !(v >= 0) || v > 3600) {
            np_errorf("NEMOPERF_PROGRESS_AFTER=%s: expected seconds between 0 and 3600", after);
            return 2;
        }
        o->progress_after = v;
    }
    const char *plot = s->plot;
    if (plot) { /* a folder the picture cannot be written into: said before any report is printed */
        const char *slash = strrchr(plot, '/');
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - plot) + (slash == plot) : 1, slash ? plot : ".");
        if (access(dir, W_OK | X_OK) != 0) {
            np_errorf("--plot %s: cannot write into %s: %s", plot, dir, strerror(errno));
            return 2;
        }
    }
    char *dot[] = {(char *)".", NULL};
    char *const *paths = s->nargs ? s->args : dot;
    size_t npaths = s->nargs ? s->nargs : 1;
    struct np_mb_ref mb;
    memset(&mb, 0, sizeof mb);
    int rc = session_mbridge_data(o, &mb);
    if (rc == 0)
        rc = session_parse(s, paths, npaths);
    o->mbref = NULL;
    np_mb_ref_free(&mb);
    return rc;
}
