/* jobstate.c - the scheduler's job-state words as enum np_job_state.
 *
 * squeue's and slurmrestd's words (and squeue's compact codes) to one enum, which states are final,
 * and which pending reasons mean "held" (moved from src/launch/wait.c: the parser's run states and
 * launch's --wait both read them).
 */
#include "nemoperf/slurm/jobstate.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    enum np_job_state state;
} jobstate_words[] = {
    {"PENDING", NP_JOB_PENDING},     {"RUNNING", NP_JOB_RUNNING},
    {"COMPLETING", NP_JOB_COMPLETING}, {"REQUEUED", NP_JOB_REQUEUED},
    {"REQUEUE_FED", NP_JOB_REQUEUED}, {"REQUEUE_HOLD", NP_JOB_HELD},
    {"SPECIAL_EXIT", NP_JOB_SPECIAL_EXIT}, {"REVOKED", NP_JOB_REVOKED},
    {"SE", NP_JOB_SPECIAL_EXIT},     {"RV", NP_JOB_REVOKED},          {"RH", NP_JOB_HELD},
    {"SUSPENDED", NP_JOB_SUSPENDED}, {"COMPLETED", NP_JOB_COMPLETED},
    {"FAILED", NP_JOB_FAILED},       {"TIMEOUT", NP_JOB_TIMEOUT},
    {"CANCELLED", NP_JOB_CANCELLED}, {"PREEMPTED", NP_JOB_PREEMPTED},
    {"NODE_FAIL", NP_JOB_NODE_FAIL}, {"OUT_OF_MEMORY", NP_JOB_OUT_OF_MEMORY},
    {"BOOT_FAIL", NP_JOB_BOOT_FAIL}, {"DEADLINE", NP_JOB_DEADLINE},
    /* squeue's compact codes (%t), accepted for robustness */
    {"PD", NP_JOB_PENDING},          {"R", NP_JOB_RUNNING},
    {"CG", NP_JOB_COMPLETING},       {"CD", NP_JOB_COMPLETED},
    {"F", NP_JOB_FAILED},            {"TO", NP_JOB_TIMEOUT},
    {"CA", NP_JOB_CANCELLED},        {"PR", NP_JOB_PREEMPTED},
    {"NF", NP_JOB_NODE_FAIL},        {"OOM", NP_JOB_OUT_OF_MEMORY},
    {"RQ", NP_JOB_REQUEUED},         {"S", NP_JOB_SUSPENDED},
};

const char *np_job_state_name(enum np_job_state s)
{
    switch (s) {
    case NP_JOB_SUBMITTED: return "SUBMITTED";
    case NP_JOB_PENDING: return "PENDING";
    case NP_JOB_RUNNING: return "RUNNING";
    case NP_JOB_COMPLETING: return "COMPLETING";
    case NP_JOB_REQUEUED: return "REQUEUED";
    case NP_JOB_SUSPENDED: return "SUSPENDED";
    case NP_JOB_OTHER: return "OTHER";
    case NP_JOB_COMPLETED: return "COMPLETED";
    case NP_JOB_FAILED: return "FAILED";
    case NP_JOB_TIMEOUT: return "TIMEOUT";
    case NP_JOB_CANCELLED: return "CANCELLED";
    case NP_JOB_PREEMPTED: return "PREEMPTED";
    case NP_JOB_NODE_FAIL: return "NODE_FAIL";
    case NP_JOB_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case NP_JOB_BOOT_FAIL: return "BOOT_FAIL";
    case NP_JOB_DEADLINE: return "DEADLINE";
    case NP_JOB_SPECIAL_EXIT: return "SPECIAL_EXIT";
    case NP_JOB_REVOKED: return "REVOKED";
    case NP_JOB_HELD: return "HELD";
    case NP_JOB_UNKNOWN: return "UNKNOWN";
    }
    return "UNKNOWN";
}

int np_job_state_final(enum np_job_state s)
{
    return s >= NP_JOB_COMPLETED;
}

/* The state of one word (length n), or -1. */
static int wait_word(const char *w, size_t n)
{
    for (size_t i = 0; i < sizeof jobstate_words / sizeof jobstate_words[0]; i++)
        if (strlen(jobstate_words[i].name) == n && strncasecmp(jobstate_words[i].name, w, n) == 0)
            return (int)jobstate_words[i].state;
    return -1;
}

enum np_job_state np_job_state_parse(const char *s)
{
    if (!s)
        return NP_JOB_OTHER;
    while (isspace((unsigned char)*s))
        s++;
    /* "CANCELLED by 0", "COMPLETED+", "PENDING,REQUEUED": the base state comes first;
     * a REQUEUED, COMPLETING, REQUEUE_HOLD, SPECIAL_EXIT or REVOKED flag after it says more */
    enum np_job_state base = NP_JOB_OTHER;
    int first = 1;
    while (*s) {
        size_t n = 0;
        while (s[n] && (isalnum((unsigned char)s[n]) || s[n] == '_'))
            n++;
        if (n == 0) {
            s++;
            continue;
        }
        int st = wait_word(s, n);
        if (first) {
            if (st < 0)
                return NP_JOB_OTHER;
            base = (enum np_job_state)st;
            first = 0;
        } else if ((st == NP_JOB_REQUEUED || st == NP_JOB_COMPLETING || st == NP_JOB_HELD || st == NP_JOB_SPECIAL_EXIT ||
                    st == NP_JOB_REVOKED) &&
                   !np_job_state_final(base)) {
            base = (enum np_job_state)st;
        }
        if (strncasecmp(s, "CANCELLED", n) == 0 && n == 9)
            break; /* "CANCELLED by 0": the rest is a uid */
        s += n;
    }
    return base;
}

int np_job_reason_held(const char *reason)
{
    /* squeue's %r after `scontrol requeuehold` (Slurm 22.05, seen on the test cluster:
     * "job requeued in held state"), and the reason codes of a held job (slurmrestd's
     * state_reason, squeue's %r for `scontrol hold`) */
    static const char *const held[] = {"requeued in held state", "JobHeldUser", "JobHeldAdmin", NULL};
    for (size_t i = 0; reason && held[i]; i++)
        if (strstr(reason, held[i]))
            return 1;
    return 0;
}

