/* wait.c - follow the jobs of one launch until every one has ended.
 *
 * The scheduler's words become enum np_job_state (src/slurm/jobstate.c), one
 * query answer moves every job on (np_wait_update), a job missing from the
 * controller for a few polls in a row is UNKNOWN, and np_wait_run() polls with
 * backoff.  Progress is reported through a callback; this file never prints.
 */
#include "nemoperf/launch/wait.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "nemoperf/util/shell.h"

static char *wait_strdup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

enum np_status np_wait_init(struct np_wait *w, char *const *ids, char *const *labels, size_t n, double now)
{
    memset(w, 0, sizeof *w);
    w->jobs = calloc(n ? n : 1, sizeof *w->jobs);
    if (!w->jobs)
        return NP_E_NOMEM;
    w->n = n;
    w->start = now;
    w->min_delay = NP_WAIT_MIN_DELAY;
    w->max_delay = NP_WAIT_MAX_DELAY;
    w->delay = w->min_delay;
    for (size_t i = 0; i < n; i++) {
        w->jobs[i].job_id = strdup(ids[i]);
        w->jobs[i].label = strdup(labels && labels[i] ? labels[i] : ids[i]);
        w->jobs[i].state = NP_JOB_SUBMITTED;
        w->jobs[i].state_since = now;
        if (!w->jobs[i].job_id || !w->jobs[i].label) {
            np_wait_free(w);
            return NP_E_NOMEM;
        }
    }
    return NP_OK;
}

void np_wait_free(struct np_wait *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++) {
        free(w->jobs[i].job_id);
        free(w->jobs[i].label);
        free(w->jobs[i].raw_state);
        free(w->jobs[i].reason);
    }
    free(w->jobs);
    memset(w, 0, sizeof *w);
}

/* Replace *dst with a copy of src when they differ (a failed copy keeps the old text). */
static void wait_set_text(char **dst, const char *src)
{
    if ((!*dst && !src) || (*dst && src && strcmp(*dst, src) == 0))
        return;
    char *c = wait_strdup_or_null(src);
    if (src && !c)
        return;
    free(*dst);
    *dst = c;
}

size_t np_wait_update(struct np_wait *w, const struct np_job_list *obs, double now)
{
    size_t changed = 0;
    w->polls++;
    for (size_t i = 0; i < w->n; i++) {
        struct np_wait_job *j = &w->jobs[i];
        if (np_job_state_final(j->state))
            continue;
        const struct np_job_info *o = NULL;
        for (size_t k = 0; obs && k < obs->n && !o; k++)
            if (obs->jobs[k].job_id && strcmp(obs->jobs[k].job_id, j->job_id) == 0)
                o = &obs->jobs[k];
        enum np_job_state next = j->state;
        if (!o) {
            if (++j->missing >= NP_WAIT_VANISH_POLLS)
                next = NP_JOB_UNKNOWN;
        } else {
            j->missing = 0;
            next = np_job_state_parse(o->state);
            /* Slurm shows a job held after a requeue as PENDING with a held reason: it will
             * not run until released, so waiting for it would never end */
            if ((next == NP_JOB_PENDING || next == NP_JOB_REQUEUED) && np_job_reason_held(o->reason))
                next = NP_JOB_HELD;
            wait_set_text(&j->raw_state, o->state);
            wait_set_text(&j->reason, o->reason);
            if (next == NP_JOB_RUNNING || next == NP_JOB_COMPLETING)
                j->ran = 1;
            /* back in the queue after running, or marked requeued: one more attempt */
            if (next != j->state &&
                (next == NP_JOB_REQUEUED || (next == NP_JOB_PENDING && j->ran && j->state != NP_JOB_REQUEUED)))
                j->requeues++;
            if (next == NP_JOB_PENDING || next == NP_JOB_REQUEUED)
                j->ran = 0;
        }
        if (next != j->state) {
            j->state = next;
            j->state_since = now;
            changed++;
        }
    }
    return changed;
}

int np_wait_done(const struct np_wait *w)
{
    for (size_t i = 0; i < w->n; i++)
        if (!np_job_state_final(w->jobs[i].state))
            return 0;
    return 1;
}

int np_wait_all_completed(const struct np_wait *w)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->jobs[i].state != NP_JOB_COMPLETED)
            return 0;
    return 1;
}

double np_wait_next_delay(struct np_wait *w, size_t changed)
{
    double d = changed ? w->min_delay : w->delay * 1.5;
    if (d < w->min_delay)
        d = w->min_delay;
    if (d > w->max_delay)
        d = w->max_delay;
    w->delay = d;
    return d;
}

void np_wait_format_elapsed(double seconds, char *buf, size_t size)
{
    if (!(seconds >= 0) || seconds > 1e9)
        seconds = 0;
    long s = (long)seconds;
    if (s >= 3600)
        snprintf(buf, size, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
    else if (s >= 60)
        snprintf(buf, size, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, size, "%lds", s);
}

char *np_wait_progress(const struct np_wait *w, double now)
{
    struct np_buf b;
    np_buf_init(&b);
    char el[32];
    np_wait_format_elapsed(now - w->start, el, sizeof el);
    size_t done = 0;
    for (size_t i = 0; i < w->n; i++)
        done += np_job_state_final(w->jobs[i].state) != 0;
    np_buf_appendf(&b, "%zu job%s, %zu ended, %s:", w->n, w->n == 1 ? "" : "s", done, el);
    for (size_t i = 0; i < w->n; i++) {
        const struct np_wait_job *j = &w->jobs[i];
        np_wait_format_elapsed(now - j->state_since, el, sizeof el);
        np_buf_appendf(&b, "%s %s %s %s %s", i ? " |" : "", j->job_id, j->label, np_job_state_name(j->state), el);
        if (j->state == NP_JOB_OTHER && j->raw_state)
            np_buf_appendf(&b, " [%.40s]", j->raw_state);
        if (j->reason && (j->state == NP_JOB_PENDING || j->state == NP_JOB_REQUEUED || np_job_state_final(j->state)))
            np_buf_appendf(&b, " (%.60s)", j->reason);
        if (j->requeues)
            np_buf_appendf(&b, " requeued x%d", j->requeues);
    }
    return np_buf_steal(&b);
}

double np_wait_default_timeout(const double *limits, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += limits[i] > 0 ? limits[i] : 0;
    return 2 * sum + NP_WAIT_QUEUE_ALLOWANCE;
}

static double wait_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_sleep(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

enum np_status np_wait_run(struct np_wait *w, struct np_backend *b, const struct np_wait_opts *opts,
                           struct np_error *err)
{
    static const struct np_wait_opts none;
    if (!opts)
        opts = &none;
    if (!b || !b->query)
        return np_error_set(err, NP_E_INVALID, b && b->name ? b->name : "backend", 0, 0,
                            "cannot report job states; cannot wait");
    double (*now)(void) = opts->now ? opts->now : wait_now;
    void (*sleep_fn)(double) = opts->sleep ? opts->sleep : wait_sleep;
    if (opts->min_delay > 0)
        w->min_delay = opts->min_delay;
    if (opts->max_delay > 0)
        w->max_delay = opts->max_delay > w->min_delay ? opts->max_delay : w->min_delay;
    w->delay = w->min_delay;
    char **ids = calloc(w->n + 1, sizeof *ids);
    if (!ids)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    enum np_status result = NP_OK;
    while (!np_wait_done(w)) {
        size_t n = 0;
        for (size_t i = 0; i < w->n; i++)
            if (!np_job_state_final(w->jobs[i].state))
                ids[n++] = w->jobs[i].job_id;
        struct np_job_list obs = {0};
        struct np_error qerr = {{0}, 0, 0, {0}};
        enum np_status st = b->query(b, ids, n, &obs, &qerr);
        double t = now();
        size_t changed = 0;
        if (st == NP_OK) {
            w->query_failures = 0;
            changed = np_wait_update(w, &obs, t);
            np_job_list_free(&obs);
            if (opts->progress)
                opts->progress(opts->ctx, w, changed, NULL);
        } else {
            w->query_failures++;
            if (opts->progress)
                opts->progress(opts->ctx, w, 0, &qerr);
            if (st == NP_E_NOMEM || st == NP_E_INVALID || w->query_failures >= NP_WAIT_MAX_QUERY_FAILURES) {
                if (err)
                    *err = qerr;
                result = st;
                if (st != NP_E_NOMEM && st != NP_E_INVALID)
                    np_error_set(err, st, qerr.source, 0, 0, "%d job queries in a row failed; last: %s",
                                 w->query_failures, qerr.text);
                break;
            }
        }
        if (np_wait_done(w))
            break;
        if (opts->timeout > 0 && t - w->start >= opts->timeout) {
            char el[32];
            np_wait_format_elapsed(t - w->start, el, sizeof el);
            result = np_error_set(err, NP_E_SLURM, "wait", 0, 0, "jobs still running after %s; stopped waiting "
                                  "(they keep running)", el);
            break;
        }
        sleep_fn(np_wait_next_delay(w, changed));
    }
    free(ids);
    return result;
}
