/* submit.c - the submission protocol of a launch: record, submit, record; --reconcile.
 *
 * Everything that can be refused is refused before the first folder exists (scripts render, the
 * backend opens, preflight, no earlier job of the same row queued); then each job gets its folder and
 * a "submitting" record with a unique tag before the backend runs, and its outcome is recorded before
 * the next one starts, with SIGINT/SIGTERM/SIGHUP deferred meanwhile (moved from src/cmd/launch.c).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/job/kind.h"
#include "nemoperf/launch/lock.h"
#include "nemoperf/launch/manifest.h"
#include "nemoperf/launch/preflight.h"
#include "nemoperf/launch/reconcile.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/launch/submit.h"
#include "nemoperf/launch/wait.h"
#include "nemoperf/slurm/rest.h"
#include "nemoperf/slurm/sbatch_env.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"

/* Signals that stop a launch: deferred while a submission runs (sbatch runs in its own
 * process group, so a terminal's Ctrl-C reaches only us), acted on once its outcome is
 * recorded. */
static const int submit_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define SUBMIT_NSIGS (sizeof submit_sigs / sizeof submit_sigs[0])
static volatile sig_atomic_t submit_signal;

static void submit_on_signal(int sig)
{
    if (!submit_signal)
        submit_signal = sig;
}

/* old: SUBMIT_NSIGS + 1 entries (the last for SIGPIPE, ignored meanwhile: a closed
 * stdout must not kill a launch between a job's submission and its record). */
static void submit_defer_signals(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = submit_on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < SUBMIT_NSIGS; i++)
        sigaction(submit_sigs[i], &sa, &old[i]);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &old[SUBMIT_NSIGS]);
}

static void submit_restore_signals(const struct sigaction *old)
{
    for (size_t i = 0; i < SUBMIT_NSIGS; i++)
        sigaction(submit_sigs[i], &old[i], NULL);
    sigaction(SIGPIPE, &old[SUBMIT_NSIGS], NULL);
}

/* What became of one submission. */
struct submit_outcome {
    enum np_submit_outcome outcome;
    char *job_id; /* owned, or NULL */
    int started;  /* the backend was called (a folder and record exist) */
};

/* Submit one job: folder, script, record "submitting" with a tag (pre-sized), backend,
 * then the outcome: the job id printed at once, then recorded (atomically, or in place on
 * a full disk, or on stderr when even that fails). */
static enum np_status submit_one(struct np_backend *be, struct np_launch_config *c, int repeat, int repeats,
                                 struct submit_outcome *o, FILE *out)
{
    memset(o, 0, sizeof *o);
    o->outcome = NP_SUBMIT_REFUSED;
    struct np_error err;
    enum np_status st = np_experiment_create(c, &err);
    const struct np_job_kind *kind = np_job_kind_of(c);
    if (st == NP_OK && kind->stage) /* what the job reads from <experiment>/code (job/kind.c) */
        st = kind->stage(c, &err);
    if (st != NP_OK) {
        np_error_print(&err);
        return st;
    }
    char *script = NULL, *name = np_script_file_name(c), *tag = np_manifest_new_tag();
    if (!name || !tag) {
        free(name);
        free(tag);
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    if ((st = np_script_render(c, &script, &err)) != NP_OK ||
        (st = np_file_write_atomic(c->experiment_dir, name, script, 0755, &err)) != NP_OK) {
        np_error_print(&err);
        free(script);
        free(name);
        free(tag);
        return st;
    }
    struct np_manifest m = {.config = c, .backend = be->name, .submit_time = time(NULL), .script = name,
                            .rest_url = np_slurm_rest_url(be), .api_version = np_slurm_rest_api(be),
                            .state = NP_STATE_SUBMITTING, .tag = tag, .presize = 1, .repeat = repeat,
                            .repeats = repeats};
    if ((st = np_manifest_write(&m, &err)) != NP_OK) {
        np_error_print(&err);
        np_errorf("%s: not submitted (no record could be written first): %s", c->job_name, c->experiment_dir);
        free(script);
        free(name);
        free(tag);
        return st;
    }
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", c->experiment_dir, name);
    struct np_submit_request req = {path, script, c->experiment_dir, c->job_name, c, tag};
    struct np_submit_result res;
    o->started = 1;
    st = be->submit(be, &req, &res, &err);
    /* not NP_OK but accepted with an id: a job that runs although something went wrong
     * (slurmrestd dropped a setting and the job could not be cancelled): recorded submitted */
    o->outcome = st == NP_OK || (res.outcome == NP_SUBMIT_ACCEPTED && res.job_id) ? NP_SUBMIT_ACCEPTED
                 : res.outcome == NP_SUBMIT_ACCEPTED ? NP_SUBMIT_REFUSED : res.outcome;
    if (o->outcome == NP_SUBMIT_ACCEPTED && res.job_id) { /* said at once, before anything can fail */
        fprintf(out, "job %s: %s\n", res.job_id, c->experiment_dir);
        fflush(out);
    }
    m.state = o->outcome == NP_SUBMIT_ACCEPTED ? NP_STATE_SUBMITTED
              : o->outcome == NP_SUBMIT_UNKNOWN ? NP_STATE_UNKNOWN : NP_STATE_NOT_SUBMITTED;
    m.presize = 0;
    m.job_id = res.job_id;
    m.cluster = res.cluster;
    m.api_version = np_slurm_rest_api(be);
    m.error = st == NP_OK ? NULL : (res.message ? res.message : err.text);
    struct np_error merr;
    enum np_status mst = np_manifest_write(&m, &merr);
    if (o->outcome == NP_SUBMIT_ACCEPTED && st != NP_OK) {
        np_errorf("%s: %s%s%s", c->job_name, err.source, err.source[0] ? ": " : "", err.text);
    } else if (o->outcome == NP_SUBMIT_REFUSED) {
        np_errorf("%s: submission failed: %s%s%s", c->job_name, err.source, err.source[0] ? ": " : "", err.text);
        np_errorf("%s: folder kept, marked not submitted: %s", c->job_name, c->experiment_dir);
    } else if (o->outcome == NP_SUBMIT_UNKNOWN) {
        np_errorf("%s: submission outcome unknown: %s%s%s", c->job_name, err.source, err.source[0] ? ": " : "",
                  err.text);
        np_errorf("%s: the job may or may not exist; recorded as unknown in %s; `nemoperf-launch --reconcile %s` "
                  "asks Slurm for the job carrying tag %s and records it", c->job_name, c->experiment_dir,
                  c->experiment_dir, tag);
    }
    if (mst != NP_OK) {
        np_error_print(&merr);
        if (o->outcome == NP_SUBMIT_ACCEPTED)
            np_errorf("job %s IS SUBMITTED but its record could not be written: folder %s, tag %s; once there is "
                      "room, record it with: nemoperf-launch --reconcile %s", res.job_id ? res.job_id : "?",
                      c->experiment_dir, tag, c->experiment_dir);
        else if (o->outcome == NP_SUBMIT_UNKNOWN)
            np_errorf("%s: the record still says \"submitting\" (tag %s); settle it with: nemoperf-launch "
                      "--reconcile %s", c->job_name, tag, c->experiment_dir);
    }
    if (o->outcome == NP_SUBMIT_ACCEPTED)
        o->job_id = res.job_id ? strdup(res.job_id) : NULL;
    np_submit_result_free(&res);
    free(script);
    free(name);
    free(tag);
    if (o->outcome == NP_SUBMIT_ACCEPTED)
        return st != NP_OK ? st : mst;
    return st != NP_OK ? st : NP_E_SLURM;
}

/* A positive number of seconds from the environment (name=value), or def; -1 when bad. */
double np_launch_env_seconds(const char *name, double def, double max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    double d = strtod(v, &end);
    if (*end || !(d > 0) || d > max) {
        np_errorf("%s=%s: not a number of seconds; allowed: more than 0, at most %g", name, v, max);
        return -1;
    }
    return d;
}

/* NEMOPERF_SBATCH_TIMEOUT in seconds (default NP_SLURM_DEFAULT_TIMEOUT); -1 when bad (said). */
int np_launch_sbatch_timeout(void)
{
    const char *tv = getenv("NEMOPERF_SBATCH_TIMEOUT");
    if (!tv || !*tv)
        return NP_SLURM_DEFAULT_TIMEOUT;
    char *end;
    long t = strtol(tv, &end, 10);
    if (*end || t < 1 || t > 3600) {
        np_errorf("NEMOPERF_SBATCH_TIMEOUT=%s: not a number of seconds; allowed: 1 to 3600", tv);
        return -1;
    }
    return (int)t;
}

/* Print err and return its status. */
static enum np_status submit_fail(enum np_status st, const struct np_error *err)
{
    np_error_print(err);
    return st;
}

enum np_status np_launch_backend_open(struct np_backend *be, int timeout)
{
    struct np_error err;
    const char *how = getenv("SLURM_SUBMIT");
    enum np_status st;
    if (!how || !*how || strcmp(how, "cli") == 0) {
        struct np_slurm_cli_opts o = {.timeout_s = timeout};
        st = np_slurm_cli_backend(be, &o, &err);
    } else if (strcmp(how, "rest") == 0) {
        const char *url = getenv("SLURMRESTD_URL");
        if (!url || !*url) {
            np_errorf("SLURM_SUBMIT=rest needs SLURMRESTD_URL (unix:/path/to/rest.sock or http(s)://host:port)");
            return NP_E_USAGE;
        }
        if ((st = np_sbatch_rest_check(np_env_getenv, NULL, &err)) != NP_OK) /* before any folder exists */
            return submit_fail(st, &err);
        const char *tok = getenv("SLURM_JWT");
        struct np_slurm_rest_opts o = {.url = url, .token = tok && *tok ? tok : NULL, .user = getenv("SLURM_USER"),
                                       .timeout_s = timeout};
        st = np_slurm_rest_backend(be, &o, &err);
    } else {
        np_errorf("SLURM_SUBMIT=%s: unknown; allowed: cli (sbatch), rest (slurmrestd)", how);
        return NP_E_USAGE;
    }
    if (st != NP_OK)
        return submit_fail(st, &err);
    return NP_OK;
}

/* ---- --dry-run: what the real launch would refuse, as a warning (sbatch --test-only; nothing is submitted).
 * Only where sbatch is at hand: a dry run works before ./setup and off the cluster, and stays quiet there. */
void np_launch_preview_check(const struct np_launch_plan *plan, const char *launch_cmd)
{
    const char *how = getenv("SLURM_SUBMIT");
    char *sbatch = np_path_search("sbatch", getenv("PATH"));
    int timeout = sbatch && (!how || !*how || strcmp(how, "cli") == 0) ? np_launch_sbatch_timeout() : -1;
    free(sbatch);
    struct np_backend be;
    if (timeout < 0 || np_launch_backend_open(&be, timeout) != NP_OK)
        return;
    struct np_preflight_opts po = {.launch_cmd = launch_cmd, .preview = 1};
    struct np_error err;
    if (np_launch_preflight(&be, plan, &po, &err) != NP_OK)
        np_warnf("the real launch would refuse this: %s%s%s (--dry-run prints the scripts all the same)", err.source,
                 err.source[0] ? ": " : "", err.text);
    np_backend_free(&be);
}

/* ---- checks before anything is written (preflight.c): each job can ever run where it is
 * sent; through slurmrestd, the jobs' user can write the experiment folders. */
static enum np_status submit_preflight(struct np_backend *be, const struct np_launch_plan *plan,
                                       const char *launch_cmd)
{
    struct np_preflight_opts po = {0};
    struct np_rest_url u = {0};
    const char *url = getenv("SLURMRESTD_URL"), *tok = getenv("SLURM_JWT");
    if (strcmp(be->name, "cli") != 0 && url && np_rest_url_parse(url, &u, NULL) == NP_OK)
        po.rest_socket = u.socket;
    po.rest_token = tok && *tok;
    po.rest_user = getenv("SLURM_USER");
    po.launch_cmd = launch_cmd;
    struct np_error err;
    enum np_status st = np_launch_preflight(be, plan, &po, &err);
    np_rest_url_free(&u);
    if (st != NP_OK)
        return submit_fail(st, &err);
    return NP_OK;
}

/* Refuse (or skip) the jobs of plan an earlier launch has queued or running, or whose
 * earlier record cannot be settled.  Sets skip[i]: how many of row i's `copies` identical jobs
 * (REPEATS) an earlier launch has live, so --skip-existing submits only the rest. */
static enum np_status submit_check_rerun(struct np_backend *be, const struct np_launch_plan *plan,
                                         enum np_launch_rerun how, long copies, int *skip)
{
    if (how == NP_LAUNCH_RERUN_RESUBMIT)
        return NP_OK;
    int refuse = 0;
    size_t nskip = 0;
    for (size_t i = 0; i < plan->n; i++) {
        const struct np_launch_config *c = &plan->jobs[i];
        struct np_reconcile *ex = NULL;
        size_t nex = 0;
        struct np_error err;
        enum np_status st = np_reconcile_existing(be, c->stage_path, c->experiment, c->job_name, &ex, &nex, &err);
        if (st != NP_OK)
            return submit_fail(st, &err);
        for (size_t k = 0; k < nex; k++) {
            const struct np_reconcile *x = &ex[k];
            if (x->job_id && x->job_state)
                np_errorf("%s: job %s (%s) of an earlier launch exists: %s", c->job_name, x->job_id, x->job_state,
                          x->dir);
            else if (x->job_id) /* Slurm could not be asked: it may still be queued */
                np_errorf("%s: job %s of an earlier launch may still be queued: %s (%s)", c->job_name, x->job_id,
                          x->dir, x->message ? x->message : "?");
            else
                np_errorf("%s: an earlier launch's record is unsettled (%s): %s: %s", c->job_name,
                          x->state ? x->state : "?", x->dir, x->message ? x->message : "");
        }
        if (nex) {
            skip[i] = how == NP_LAUNCH_RERUN_SKIP ? (int)((long)nex < copies ? (long)nex : copies) : 0;
            nskip += (size_t)skip[i];
            refuse |= how == NP_LAUNCH_RERUN_REFUSE;
        }
        for (size_t k = 0; k < nex; k++)
            np_reconcile_free(&ex[k]);
        free(ex);
    }
    if (refuse) {
        np_errorf("not submitting a job twice: nothing written, nothing submitted; --skip-existing submits only "
                  "the others, --resubmit submits every job again, --reconcile FOLDER settles an unsettled record");
        return NP_E_INVALID;
    }
    if (nskip)
        np_notef("skipping %zu job%s an earlier launch has queued or running (--skip-existing)", nskip,
                 nskip == 1 ? "" : "s");
    return NP_OK;
}

static void submit_unlock(struct np_launch_lock *locks, size_t n)
{
    for (size_t i = 0; locks && i < n; i++)
        np_launch_lock_release(&locks[i]);
    free(locks);
}

void np_launch_submitted_free(struct np_launch_submitted *s)
{
    if (!s)
        return;
    np_strv_free(s->ids);
    np_strv_free(s->dirs);
    np_strv_free(s->labels);
    free(s->limits);
    if (s->end_states)
        for (size_t i = 0; i < s->n; i++)
            free(s->end_states[i]);
    free(s->end_states);
    for (size_t i = 0; s->tried && i < s->ntried; i++)
        free(s->tried[i].dir);
    free(s->tried);
    if (s->have_be)
        np_backend_free(&s->be);
    memset(s, 0, sizeof *s);
}

enum np_status np_launch_submit(struct np_launch_plan *plan, const struct np_launch_submit_opts *o,
                                struct np_launch_submitted *out)
{
    memset(out, 0, sizeof *out);
    enum np_launch_rerun rerun = o->rerun;
    int wait = o->wait;
    /* everything that can be refused is refused before the first folder exists */
    int timeout = np_launch_sbatch_timeout();
    if (timeout < 0)
        return NP_E_INVALID;
    /* REPEATS=N (config.c): N identical jobs of every row, each its own folder and record, one
     * configuration.  NEMOPERF_BENCH_COPIES (undocumented, bench/submit.sh only): the same, to time
     * N submissions of one launch, without the check for earlier jobs */
    long copies = plan->repeats > 1 ? plan->repeats : 1;
    const char *cv = getenv("NEMOPERF_BENCH_COPIES");
    if (cv && *cv) {
        char *end;
        copies = strtol(cv, &end, 10);
        if (*end || copies < 1 || copies > 256) {
            np_errorf("NEMOPERF_BENCH_COPIES=%s: allowed: 1 to 256", cv);
            return NP_E_INVALID;
        }
        rerun = NP_LAUNCH_RERUN_RESUBMIT; /* copies are the point */
    }
    if (wait && (np_launch_env_seconds("NEMOPERF_WAIT_MAX_DELAY", 1, 3600) < 0 ||
                 np_launch_env_seconds("NEMOPERF_WAIT_TIMEOUT", 1, 365 * 86400.0) < 0))
        return NP_E_INVALID;
    struct np_error err;
    for (size_t i = 0; i < plan->n; i++) {
        char *script = NULL;
        enum np_status st = np_script_render(&plan->jobs[i], &script, &err);
        free(script);
        if (st != NP_OK)
            return submit_fail(st, &err);
    }
    struct np_backend *be = &out->be;
    enum np_status rst = np_launch_backend_open(be, timeout);
    if (rst != NP_OK)
        return rst;
    out->have_be = 1;
    if ((rst = submit_preflight(be, plan, o->launch_cmd)) != NP_OK) {
        np_launch_submitted_free(out);
        return rst;
    }
    int *skip = calloc(2 * (plan->n ? plan->n : 1), sizeof *skip), *tried = skip + plan->n;
    if (!skip) {
        np_launch_submitted_free(out);
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    /* one launch at a time per experiment, held from the check for earlier jobs to the last
     * submission (and by the sbatch it starts: np_launch_lock_take); --resubmit launches at
     * once on purpose and takes what it can */
    struct np_launch_lock *locks = calloc(plan->n ? plan->n : 1, sizeof *locks);
    if (!locks) {
        free(skip);
        np_launch_submitted_free(out);
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    for (size_t i = 0; i < plan->n; i++)
        locks[i].fd = -1;
    for (size_t i = 0; i < plan->n && rst == NP_OK; i++) {
        int dup = 0;
        for (size_t k = 0; k < i; k++)
            dup |= strcmp(plan->jobs[k].experiment, plan->jobs[i].experiment) == 0 &&
                   strcmp(plan->jobs[k].stage_path, plan->jobs[i].stage_path) == 0;
        if (dup)
            continue;
        enum np_status ls = np_launch_lock_take(plan->jobs[i].stage_path, plan->jobs[i].experiment, &locks[i], &err);
        if (ls != NP_OK && rerun != NP_LAUNCH_RERUN_RESUBMIT) {
            np_error_print(&err);
            np_errorf("not submitting a job twice: nothing written, nothing submitted");
            rst = ls;
        }
    }
    if (rst == NP_OK)
        rst = submit_check_rerun(be, plan, rerun, copies, skip);
    if (rst != NP_OK) {
        submit_unlock(locks, plan->n);
        free(skip);
        np_launch_submitted_free(out);
        return rst;
    }

    size_t cap = plan->n * (size_t)copies, nsub = 0, nunk = 0, ntried = 0;
    char **ids = calloc(cap + 1, sizeof *ids), **dirs = calloc(cap + 1, sizeof *dirs);
    char **labels = calloc(cap + 1, sizeof *labels), **unk = calloc(cap + 1, sizeof *unk);
    double *limits = calloc(cap + 1, sizeof *limits);
    out->tried = calloc(cap + 1, sizeof *out->tried);
    out->ids = ids;
    out->dirs = dirs;
    out->labels = labels;
    out->limits = limits;
    if (!ids || !dirs || !labels || !unk || !limits || !out->tried) {
        free(unk);
        free(skip);
        np_launch_submitted_free(out);
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    int failed = 0;
    /* the hint names the parser a user can run as printed */
    struct np_buf parse;
    np_buf_init(&parse);
    np_buf_append(&parse, o->parse_cmd ? o->parse_cmd : "nemoperf-parse");
    size_t parse_len0 = parse.len;
    struct sigaction oldsa[SUBMIT_NSIGS + 1];
    submit_signal = 0;
    submit_defer_signals(oldsa);
    for (size_t i = 0; i < plan->n && !submit_signal; i++) {
        struct np_launch_config *c = &plan->jobs[i];
        for (long k = skip[i]; k < copies && !submit_signal; k++) {
            struct submit_outcome so;
            enum np_status st = submit_one(be, c, (int)k + 1, plan->repeats, &so, o->out);
            ntried++;
            tried[i]++;
            if (st != NP_OK && (so.outcome != NP_SUBMIT_UNKNOWN || !wait))
                failed = 1; /* past validation every failure is a runtime one; --wait settles unknowns first */
            struct np_launch_attempt *at = so.started ? &out->tried[out->ntried] : NULL;
            if (at) { /* what --format json lists: every submission on record */
                *at = (struct np_launch_attempt){.job = i, .repeat = (int)k + 1, .dir = strdup(c->experiment_dir),
                                                 .sub = -1,
                                                 .state = so.outcome == NP_SUBMIT_ACCEPTED  ? NP_STATE_SUBMITTED
                                                          : so.outcome == NP_SUBMIT_UNKNOWN ? NP_STATE_UNKNOWN
                                                                                            : NP_STATE_NOT_SUBMITTED};
                out->ntried++;
                if (!at->dir)
                    failed = 1;
                if (so.outcome == NP_SUBMIT_ACCEPTED && so.job_id)
                    at->sub = (long)nsub;
            }
            if (so.outcome == NP_SUBMIT_REFUSED)
                continue;
            np_buf_append(&parse, " ");
            np_buf_append_shq(&parse, c->experiment_dir);
            if (so.outcome == NP_SUBMIT_UNKNOWN) {
                if (!(unk[nunk++] = strdup(c->experiment_dir)))
                    failed = 1;
                continue;
            }
            if (so.job_id) {
                ids[nsub] = so.job_id;
                dirs[nsub] = strdup(c->experiment_dir);
                labels[nsub] = strdup(c->job_name);
                long minutes = np_rest_time_minutes(c->time_limit);
                limits[nsub] = minutes > 0 ? minutes * 60.0 : 0;
                if (!dirs[nsub] || !labels[nsub])
                    failed = 1;
                nsub++;
            }
        }
    }
    submit_unlock(locks, plan->n); /* every submission has ended: its sbatch too */
    submit_restore_signals(oldsa);
    int sig = submit_signal;
    if (sig) {
        struct np_buf left;
        np_buf_init(&left);
        for (size_t i = 0; i < plan->n; i++) {
            long rest = copies - skip[i] - tried[i];
            if (rest > 0 && copies > 1)
                np_buf_appendf(&left, "%s%s (%ld of REPEATS=%ld)", left.len ? ", " : "", plan->jobs[i].job_name,
                               rest, copies);
            else if (rest > 0)
                np_buf_appendf(&left, "%s%s", left.len ? ", " : "", plan->jobs[i].job_name);
        }
        char *l = np_buf_steal(&left);
        np_errorf("stopped by %s after %zu submission%s (each recorded in its folder, see above)%s%s; a second launch "
                  "with the same settings and --skip-existing submits the rest",
                  strsignal(sig), ntried, ntried == 1 ? "" : "s", l && *l ? "; not submitted: " : "", l ? l : "");
        free(l);
    }
    char *cmd = np_buf_steal(&parse);
    if (!wait && !sig && cmd && strlen(cmd) > parse_len0)
        fprintf(o->out, "when %s: %s\n", cap > 1 ? "the jobs have ended" : "the job has ended", cmd);
    free(cmd);
    if (copies > 1 && np_slurm_rest_url(be)) {
        long requests = 0, conns = 0;
        np_slurm_rest_stats(be, &requests, &conns);
        np_notef("slurmrestd: %ld requests over %ld connection(s)", requests, conns);
    }
    /* unknown outcomes: --wait asks Slurm for the tagged jobs (again while it does not answer,
     * as a wait polls) and follows the ones found */
    double delay = NP_WAIT_MIN_DELAY;
    for (size_t u = 0; wait && !sig && u < nunk; u++) {
        struct np_reconcile r;
        if (np_reconcile_dir(be, unk[u], &r) != NP_OK) {
            failed = 1;
            continue;
        }
        for (int tries = 1; r.outcome == NP_RECONCILE_UNREACHABLE && tries < NP_WAIT_MAX_QUERY_FAILURES; tries++) {
            np_warnf("%s: %s; asking again in %.0f s", r.dir, r.message ? r.message : "?", delay);
            struct timespec ts = {(time_t)delay, 0};
            nanosleep(&ts, NULL);
            delay = delay * 2 > NP_WAIT_MAX_DELAY ? NP_WAIT_MAX_DELAY : delay * 2;
            np_reconcile_free(&r);
            if (np_reconcile_dir(be, unk[u], &r) != NP_OK)
                break;
        }
        if (r.outcome == NP_RECONCILE_FOUND && r.job_id) {
            np_notef("%s: %s", r.dir, r.message);
            fprintf(o->out, "job %s: %s\n", r.job_id, r.dir);
            for (size_t t = 0; t < out->ntried; t++) /* settled: queued after all */
                if (out->tried[t].dir && strcmp(out->tried[t].dir, unk[u]) == 0) {
                    out->tried[t].state = NP_STATE_SUBMITTED;
                    out->tried[t].sub = (long)nsub;
                }
            ids[nsub] = r.job_id;
            r.job_id = NULL;
            dirs[nsub] = strdup(r.dir);
            labels[nsub] = r.job_name ? strdup(r.job_name) : strdup(r.dir);
            for (size_t i = 0; i < plan->n; i++) /* its time limit counts for the default wait limit */
                if (r.job_name && strcmp(plan->jobs[i].job_name, r.job_name) == 0) {
                    long minutes = np_rest_time_minutes(plan->jobs[i].time_limit);
                    limits[nsub] = minutes > 0 ? minutes * 60.0 : 0;
                }
            nsub++;
        } else {
            np_errorf("%s: %s", r.dir, r.message ? r.message : "?");
            failed = 1;
        }
        np_reconcile_free(&r);
    }
    np_strv_free(unk);
    free(skip);
    out->n = nsub;
    out->failed = failed;
    out->signal = sig;
    return NP_OK;
}

/* --reconcile FOLDER...: settle every record found at or below the folders. */
enum np_status np_launch_reconcile_paths(char *const *paths, size_t n, FILE *out)
{
    struct np_error err;
    char **dirs = NULL;
    enum np_status st = np_reconcile_collect(paths, n, &dirs, &err);
    if (st != NP_OK)
        return submit_fail(st == NP_E_NOTFOUND ? NP_E_USAGE : st, &err);
    size_t nd = 0;
    while (dirs[nd])
        nd++;
    int timeout = np_launch_sbatch_timeout();
    if (timeout < 0) {
        np_strv_free(dirs);
        return NP_E_INVALID;
    }
    struct np_backend be;
    if ((st = np_launch_backend_open(&be, timeout)) != NP_OK) {
        np_strv_free(dirs);
        return st;
    }
    int rc = 0; /* 1: a record is left unsettled (said) */
    struct np_reconcile *r = calloc(nd ? nd : 1, sizeof *r);
    if (!r || np_reconcile_dirs(&be, dirs, nd, r) != NP_OK) {
        np_errorf("out of memory");
        rc = 1;
    }
    for (size_t i = 0; r && rc == 0 && i < nd; i++) {
        const struct np_reconcile *x = &r[i];
        switch (x->outcome) {
        case NP_RECONCILE_FOUND:
            fprintf(out, "job %s: %s: recorded (%s)\n", x->job_id, x->dir, x->message);
            break;
        case NP_RECONCILE_RECORDED:
            fprintf(out, "%s: %s\n", x->dir, x->message);
            break;
        case NP_RECONCILE_ABSENT:
            fprintf(out, "%s: recorded not submitted (%s)\n", x->dir, x->message);
            break;
        case NP_RECONCILE_UNREACHABLE:
            np_errorf("%s: %s; run --reconcile again when Slurm answers", x->dir, x->message);
            rc = 1;
            break;
        case NP_RECONCILE_FAILED:
            np_errorf("%s: %s", x->dir, x->message);
            if (x->job_id)
                np_errorf("%s: its job is %s: record it when the disk has room", x->dir, x->job_id);
            rc = 1;
            break;
        }
    }
    for (size_t i = 0; r && i < nd; i++)
        np_reconcile_free(&r[i]);
    free(r);
    np_strv_free(dirs);
    np_backend_free(&be);
    return rc ? NP_E_SLURM : NP_OK;
}
