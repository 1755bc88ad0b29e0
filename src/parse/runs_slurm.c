/* runs_slurm.c - the scheduler's word on runs without a final log.
 *
 * The Slurm query goes through the same backend descriptor launch uses (squeue or slurmrestd),
 * once for all runs (moved from runstate.c, which reads a log's last error and is read by run.c).
 */
#include "nemoperf/parse/runs_slurm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/slurm/jobstate.h"

static int runs_slurm_ask(const struct np_run *r)
{
    return r->launch.submitted && r->launch.job_id[0] &&
           (r->status == NP_RUN_NO_LOG || r->status == NP_RUN_NO_STEPS || r->status == NP_RUN_INCOMPLETE ||
            r->status == NP_RUN_FAILED);
}

static void runs_slurm_why(struct np_run *r, const char *fmt_state, const char *state, const char *reason)
{
    char buf[600];
    const char *old = r->why && r->status != NP_RUN_NO_LOG && r->status != NP_RUN_NO_STEPS ? r->why : NULL;
    int have_reason = reason && *reason && strcmp(reason, "None") != 0;
    snprintf(buf, sizeof buf, "%s%s" "%s%s%s" "%s%s", old ? old : "", old ? "; " : "", fmt_state, state,
             have_reason ? " (" : "", have_reason ? reason : "", have_reason ? ")" : "");
    char *n = strdup(buf);
    if (n) {
        free(r->why);
        r->why = n;
    }
}

enum np_status np_runs_ask_slurm(struct np_parse_result *res, struct np_backend *b, struct np_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < res->nruns; i++)
        n += runs_slurm_ask(&res->runs[i]);
    if (n == 0 || !b || !b->query)
        return NP_OK;
    char **ids = calloc(n, sizeof *ids);
    if (!ids)
        return NP_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < res->nruns; i++)
        if (runs_slurm_ask(&res->runs[i]))
            ids[k++] = res->runs[i].launch.job_id;
    struct np_job_list jobs = {0};
    enum np_status st = b->query(b, ids, n, &jobs, err);
    free(ids);
    if (st != NP_OK)
        return st;
    for (size_t i = 0; i < res->nruns; i++) {
        struct np_run *r = &res->runs[i];
        if (!runs_slurm_ask(r))
            continue;
        const struct np_job_info *j = NULL;
        for (size_t q = 0; q < jobs.n && !j; q++)
            if (jobs.jobs[q].job_id && strcmp(jobs.jobs[q].job_id, r->launch.job_id) == 0)
                j = &jobs.jobs[q];
        if (!j) {
            if (r->status == NP_RUN_NO_LOG)
                runs_slurm_why(r, "", "unknown to the scheduler (finished long ago, or another cluster)", NULL);
            continue;
        }
        enum np_job_state s = np_job_state_parse(j->state);
        const char *word = np_job_state_name(s);
        switch (s) {
        case NP_JOB_PENDING:
        case NP_JOB_REQUEUED:
        case NP_JOB_SUBMITTED:
            runs_slurm_why(r, "Slurm: ", word, j->reason);
            r->status = NP_RUN_PENDING;
            break;
        case NP_JOB_RUNNING:
        case NP_JOB_COMPLETING:
        case NP_JOB_SUSPENDED:
        case NP_JOB_OTHER:
            runs_slurm_why(r, "Slurm: ", word, j->reason);
            r->status = NP_RUN_RUNNING;
            break;
        case NP_JOB_COMPLETED:
            runs_slurm_why(r, "Slurm: ", word, j->reason);
            break;
        default: /* FAILED, TIMEOUT, CANCELLED, ...: final and not a success */
            runs_slurm_why(r, "Slurm: ", word, j->reason);
            if (r->status != NP_RUN_INCOMPLETE)
                r->status = NP_RUN_FAILED;
            break;
        }
    }
    np_job_list_free(&jobs);
    return NP_OK;
}
