/* check_wait.c - the --wait state machine, its polling loop and squeue parsing.
 *
 * States are fed as the scheduler words them (squeue, scontrol, slurmrestd
 * v0.0.38 strings and v0.0.40 flag lists); the loop runs against a scripted
 * backend with a fake clock, so requeues, cancellations, vanished jobs, failed
 * queries and timeouts are all exercised in milliseconds.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/slurm/backend.h"
#include "nemoperf/launch/wait.h"

START_TEST(test_state_words)
{
    static const struct {
        const char *word;
        enum np_job_state st;
    } cases[] = {
        {"PENDING", NP_JOB_PENDING},
        {"running", NP_JOB_RUNNING},
        {"COMPLETING", NP_JOB_COMPLETING},
        {"COMPLETED", NP_JOB_COMPLETED},
        {"FAILED", NP_JOB_FAILED},
        {"TIMEOUT", NP_JOB_TIMEOUT},
        {"CANCELLED", NP_JOB_CANCELLED},
        {"CANCELLED by 0", NP_JOB_CANCELLED},
        {"CANCELLED+", NP_JOB_CANCELLED},
        {"PREEMPTED", NP_JOB_PREEMPTED},
        {"REQUEUED", NP_JOB_REQUEUED},
        {"NODE_FAIL", NP_JOB_NODE_FAIL},
        {"OUT_OF_MEMORY", NP_JOB_OUT_OF_MEMORY},
        {"BOOT_FAIL", NP_JOB_BOOT_FAIL},
        {"DEADLINE", NP_JOB_DEADLINE},
        {"SUSPENDED", NP_JOB_SUSPENDED},
        {"PENDING,REQUEUED", NP_JOB_REQUEUED},  /* v0.0.40 flag lists */
        {"RUNNING,COMPLETING", NP_JOB_COMPLETING},
        {"COMPLETED,REQUEUED", NP_JOB_COMPLETED}, /* a final base state stays final */
        {"  CD", NP_JOB_COMPLETED},               /* squeue %t */
        {"PD", NP_JOB_PENDING},
        {"SPECIAL_EXIT", NP_JOB_SPECIAL_EXIT},   /* issue 13: final, not waited for forever */
        {"REVOKED", NP_JOB_REVOKED},
        {"REQUEUE_HOLD", NP_JOB_HELD},
        {"PENDING,REQUEUE_HOLD", NP_JOB_HELD},   /* v0.0.40 flag list */
        {"PENDING,SPECIAL_EXIT", NP_JOB_SPECIAL_EXIT},
        {"CONFIGURING", NP_JOB_OTHER},
        {"?", NP_JOB_OTHER},
        {"", NP_JOB_OTHER},
        {NULL, NP_JOB_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(np_job_state_parse(cases[i].word) == cases[i].st, "%s -> %s, want %s",
                      cases[i].word ? cases[i].word : "(null)", np_job_state_name(np_job_state_parse(cases[i].word)),
                      np_job_state_name(cases[i].st));
    ck_assert(!np_job_state_final(NP_JOB_PENDING));
    ck_assert(!np_job_state_final(NP_JOB_REQUEUED));
    ck_assert(!np_job_state_final(NP_JOB_OTHER));
    ck_assert(!np_job_state_final(NP_JOB_SUBMITTED));
    ck_assert(np_job_state_final(NP_JOB_COMPLETED));
    ck_assert(np_job_state_final(NP_JOB_PREEMPTED));
    ck_assert(np_job_state_final(NP_JOB_UNKNOWN));
    ck_assert(np_job_state_final(NP_JOB_SPECIAL_EXIT));
    ck_assert(np_job_state_final(NP_JOB_REVOKED));
    ck_assert(np_job_state_final(NP_JOB_HELD));
    ck_assert_str_eq(np_job_state_name(NP_JOB_HELD), "HELD");
    ck_assert_str_eq(np_job_state_name(NP_JOB_OUT_OF_MEMORY), "OUT_OF_MEMORY");
}
END_TEST

/* A list from "id:STATE id:STATE ..." */
static void obs(struct np_job_list *l, const char *spec)
{
    memset(l, 0, sizeof *l);
    char *s = strdup(spec), *save = NULL;
    for (char *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *c = strchr(t, ':');
        ck_assert(c);
        *c = '\0';
        ck_assert_int_eq(np_job_list_add(l, t, c + 1, NULL), 0);
    }
    free(s);
}

START_TEST(test_update_vanish)
{
    char *ids[] = {(char *)"10", (char *)"11"};
    char *labels[] = {(char *)"a_8", NULL};
    struct np_wait w;
    ck_assert_int_eq(np_wait_init(&w, ids, labels, 2, 100.0), NP_OK);
    ck_assert_str_eq(w.jobs[1].label, "11");
    struct np_job_list l;
    obs(&l, "10:PENDING");
    ck_assert_uint_eq(np_wait_update(&w, &l, 101), 1);
    np_job_list_free(&l);
    ck_assert_int_eq(w.jobs[1].state, NP_JOB_SUBMITTED); /* missing once: not yet unknown */
    ck_assert_int_eq(w.jobs[1].missing, 1);
    obs(&l, "10:RUNNING");
    ck_assert_uint_eq(np_wait_update(&w, &l, 102), 2);
    np_job_list_free(&l);
    ck_assert_int_eq(w.jobs[1].state, NP_JOB_UNKNOWN); /* vanished: never a success */
    ck_assert(!np_wait_done(&w));
    obs(&l, "10:COMPLETED 11:COMPLETED"); /* a final state is not left again */
    np_wait_update(&w, &l, 103);
    np_job_list_free(&l);
    ck_assert_int_eq(w.jobs[0].state, NP_JOB_COMPLETED);
    ck_assert_int_eq(w.jobs[1].state, NP_JOB_UNKNOWN);
    ck_assert(np_wait_done(&w));
    ck_assert(!np_wait_all_completed(&w));
    ck_assert_double_eq(w.jobs[0].state_since, 103);
    np_wait_free(&w);
    np_wait_free(&w);
}
END_TEST

START_TEST(test_update_requeue)
{
    char *ids[] = {(char *)"20", (char *)"21"};
    struct np_wait w;
    ck_assert_int_eq(np_wait_init(&w, ids, NULL, 2, 0), NP_OK);
    static const char *const steps[] = {
        "20:PENDING 21:PENDING", "20:RUNNING 21:RUNNING", "20:REQUEUED 21:PENDING", /* 21: requeue seen as PENDING */
        "20:PENDING 21:PENDING", "20:RUNNING 21:RUNNING", "20:COMPLETING 21:COMPLETED", "20:COMPLETED"};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct np_job_list l;
        obs(&l, steps[i]);
        np_wait_update(&w, &l, (double)i);
        np_job_list_free(&l);
    }
    ck_assert_int_eq(w.jobs[0].requeues, 1);
    ck_assert_int_eq(w.jobs[1].requeues, 1);
    ck_assert(np_wait_done(&w));
    ck_assert(np_wait_all_completed(&w));
    ck_assert_int_eq(w.polls, 7);
    np_wait_free(&w);
}
END_TEST

START_TEST(test_delay_and_progress)
{
    char *ids[] = {(char *)"30"};
    char *labels[] = {(char *)"pretrain_llama3.1_8b_bf16_8"};
    struct np_wait w;
    ck_assert_int_eq(np_wait_init(&w, ids, labels, 1, 0), NP_OK);
    w.min_delay = 1;
    w.max_delay = 4;
    ck_assert_double_eq(np_wait_next_delay(&w, 0), 1.5);
    ck_assert_double_eq(np_wait_next_delay(&w, 0), 2.25);
    ck_assert_double_eq_tol(np_wait_next_delay(&w, 0), 3.375, 1e-9);
    ck_assert_double_eq(np_wait_next_delay(&w, 0), 4);
    ck_assert_double_eq(np_wait_next_delay(&w, 0), 4);
    ck_assert_double_eq(np_wait_next_delay(&w, 1), 1); /* a change: poll soon again */
    struct np_job_list l = {0};
    ck_assert_int_eq(np_job_list_add(&l, "30", "PENDING", "Resources"), 0);
    np_wait_update(&w, &l, 5);
    np_job_list_free(&l);
    char *p = np_wait_progress(&w, 65);
    ck_assert_str_eq(p, "1 job, 0 ended, 1m05s: 30 pretrain_llama3.1_8b_bf16_8 PENDING 1m00s (Resources)");
    free(p);
    char b[32];
    np_wait_format_elapsed(3725, b, sizeof b);
    ck_assert_str_eq(b, "1h02m05s");
    np_wait_format_elapsed(-3, b, sizeof b);
    ck_assert_str_eq(b, "0s");
    np_wait_format_elapsed(NAN, b, sizeof b);
    ck_assert_str_eq(b, "0s");
    np_wait_free(&w);
}
END_TEST

/* ---- the loop against a scripted backend ---- */

struct script_backend {
    const char *const *answers; /* per poll: "id:STATE ..." or "!error" */
    size_t n, next;
    size_t asked_max;           /* most ids asked in one query */
    size_t queries;
};

static double fake_clock;
static double slept;

static double fake_now(void)
{
    return fake_clock;
}

static void fake_sleep(double s)
{
    slept += s;
    fake_clock += s;
}

static enum np_status script_query(struct np_backend *b, char *const *ids, size_t n, struct np_job_list *out,
                                   struct np_error *err)
{
    struct script_backend *sb = b->impl;
    sb->queries++;
    if (n > sb->asked_max)
        sb->asked_max = n;
    const char *a = sb->next < sb->n ? sb->answers[sb->next++] : sb->answers[sb->n - 1];
    if (a[0] == '!')
        return np_error_set(err, NP_E_HTTP, "fake", 0, 0, "%s", a + 1);
    obs(out, a);
    /* like squeue -j: only the ids asked for */
    size_t k = 0;
    for (size_t i = 0; i < out->n; i++) {
        int asked = 0;
        for (size_t j = 0; j < n; j++)
            asked |= strcmp(ids[j], out->jobs[i].job_id) == 0;
        if (asked)
            out->jobs[k++] = out->jobs[i];
        else {
            free(out->jobs[i].job_id);
            free(out->jobs[i].state);
            free(out->jobs[i].reason);
        }
    }
    out->n = k;
    return NP_OK;
}

struct progress_log {
    size_t calls, errors, changes;
};

static void log_progress(void *ctx, const struct np_wait *w, size_t changed, const struct np_error *qerr)
{
    (void)w;
    struct progress_log *p = ctx;
    p->calls++;
    p->changes += changed;
    p->errors += qerr != NULL;
}

static enum np_status run(const char *const *answers, size_t n, size_t njobs, double timeout, struct np_wait *w,
                          struct script_backend *sb, struct progress_log *pl, struct np_error *err)
{
    char *ids[] = {(char *)"1", (char *)"2", (char *)"3"};
    fake_clock = 1000;
    slept = 0;
    ck_assert_int_eq(np_wait_init(w, ids, NULL, njobs, fake_clock), NP_OK);
    *sb = (struct script_backend){.answers = answers, .n = n};
    *pl = (struct progress_log){0};
    struct np_backend b = {.name = "fake", .query = script_query, .impl = sb};
    struct np_wait_opts o = {.min_delay = 1, .max_delay = 8, .timeout = timeout, .now = fake_now,
                             .sleep = fake_sleep, .progress = log_progress, .ctx = pl};
    return np_wait_run(w, &b, &o, err);
}

START_TEST(test_run_sweep_cancelled)
{
    static const char *const a[] = {"1:PENDING 2:PENDING 3:PENDING", "1:RUNNING 2:PENDING 3:PENDING",
                                    "1:RUNNING 2:RUNNING 3:PENDING", "1:COMPLETED 2:CANCELLED 3:RUNNING",
                                    "3:RUNNING", "3:RUNNING", "3:COMPLETED"};
    struct np_wait w;
    struct script_backend sb;
    struct progress_log pl;
    struct np_error err;
    ck_assert_int_eq(run(a, 7, 3, 0, &w, &sb, &pl, &err), NP_OK);
    ck_assert_uint_eq(sb.queries, 7); /* one query per poll for the whole sweep */
    ck_assert_uint_eq(sb.asked_max, 3);
    ck_assert_int_eq(w.jobs[0].state, NP_JOB_COMPLETED);
    ck_assert_int_eq(w.jobs[1].state, NP_JOB_CANCELLED);
    ck_assert_int_eq(w.jobs[2].state, NP_JOB_COMPLETED);
    ck_assert(!np_wait_all_completed(&w));
    ck_assert_uint_eq(pl.calls, 7);
    ck_assert_uint_eq(pl.errors, 0);
    ck_assert_uint_eq(pl.changes, 3 + 1 + 1 + 3 + 1);
    /* backoff: 1 (change) ... grows while nothing changes, 1 again after a change */
    ck_assert_double_eq(slept, 1 + 1 + 1 + 1 + 1.5 + 2.25);
    np_wait_free(&w);
}
END_TEST

START_TEST(test_run_query_failures)
{
    /* two failures in a row are survived */
    static const char *const a[] = {"1:RUNNING", "!connection refused", "!connection refused", "1:COMPLETED"};
    struct np_wait w;
    struct script_backend sb;
    struct progress_log pl;
    struct np_error err;
    ck_assert_int_eq(run(a, 4, 1, 0, &w, &sb, &pl, &err), NP_OK);
    ck_assert(np_wait_all_completed(&w));
    ck_assert_uint_eq(pl.errors, 2);
    np_wait_free(&w);
    /* NP_WAIT_MAX_QUERY_FAILURES in a row are not */
    static const char *const b[] = {"1:RUNNING", "!slurmrestd is gone"};
    ck_assert_int_eq(run(b, 2, 1, 0, &w, &sb, &pl, &err), NP_E_HTTP);
    ck_assert_uint_eq(sb.queries, 1 + NP_WAIT_MAX_QUERY_FAILURES);
    ck_assert_msg(strstr(err.text, "job queries in a row failed; last: slurmrestd is gone"), "%s", err.text);
    ck_assert_int_eq(w.jobs[0].state, NP_JOB_RUNNING);
    np_wait_free(&w);
}
END_TEST

START_TEST(test_run_vanish_and_timeout)
{
    static const char *const a[] = {"1:RUNNING", ""};
    struct np_wait w;
    struct script_backend sb;
    struct progress_log pl;
    struct np_error err;
    ck_assert_int_eq(run(a, 2, 1, 0, &w, &sb, &pl, &err), NP_OK);
    ck_assert_int_eq(w.jobs[0].state, NP_JOB_UNKNOWN);
    ck_assert_uint_eq(sb.queries, 1 + NP_WAIT_VANISH_POLLS);
    np_wait_free(&w);
    static const char *const b[] = {"1:PENDING"};
    ck_assert_int_eq(run(b, 1, 1, 60, &w, &sb, &pl, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "still running after 1m"), "%s", err.text);
    ck_assert_int_eq(w.jobs[0].state, NP_JOB_PENDING);
    np_wait_free(&w);
    /* a backend that cannot tell job states */
    ck_assert_int_eq(np_wait_init(&w, (char *[]){(char *)"1"}, NULL, 1, 0), NP_OK);
    struct np_backend nob = {.name = "none"};
    ck_assert_int_eq(np_wait_run(&w, &nob, NULL, &err), NP_E_INVALID);
    np_wait_free(&w);
}
END_TEST

START_TEST(test_run_held_ends)
{
    /* a job held after a requeue (or in SPECIAL_EXIT) ends the wait instead of polling forever */
    static const char *const a[] = {"1:RUNNING 2:RUNNING", "1:REQUEUE_HOLD 2:RUNNING", "1:REQUEUE_HOLD 2:SPECIAL_EXIT"};
    struct np_wait w;
    struct script_backend sb;
    struct progress_log pl;
    struct np_error err;
    ck_assert_int_eq(run(a, 3, 2, 0, &w, &sb, &pl, &err), NP_OK);
    ck_assert_uint_eq(sb.queries, 3);
    ck_assert_int_eq(w.jobs[0].state, NP_JOB_HELD);
    ck_assert_int_eq(w.jobs[1].state, NP_JOB_SPECIAL_EXIT);
    np_wait_free(&w);
}
END_TEST

START_TEST(test_update_held_reason)
{
    /* what Slurm 22.05 shows after `scontrol requeuehold`: PENDING with a held reason */
    struct np_wait w;
    ck_assert_int_eq(np_wait_init(&w, (char *[]){(char *)"5", (char *)"6"}, NULL, 2, 0), NP_OK);
    struct np_job_list l = {0};
    np_job_list_add(&l, "5", "PENDING", "job requeued in held state");
    np_job_list_add(&l, "6", "PENDING", "Priority");
    ck_assert_uint_eq(np_wait_update(&w, &l, 1), 2);
    ck_assert_int_eq(w.jobs[0].state, NP_JOB_HELD);
    ck_assert_int_eq(w.jobs[1].state, NP_JOB_PENDING);
    np_job_list_free(&l);
    np_job_list_add(&l, "6", "PENDING", "JobHeldUser"); /* slurmrestd's state_reason */
    np_wait_update(&w, &l, 2);
    ck_assert_int_eq(w.jobs[1].state, NP_JOB_HELD);
    ck_assert(np_wait_done(&w));
    np_job_list_free(&l);
    np_wait_free(&w);
    ck_assert(!np_job_reason_held(NULL));
    ck_assert(!np_job_reason_held("Resources"));
}
END_TEST

START_TEST(test_default_timeout)
{
    double l[] = {1800, 900, 0};
    ck_assert_double_eq(np_wait_default_timeout(l, 3), 2 * 2700 + NP_WAIT_QUEUE_ALLOWANCE);
    ck_assert_double_eq(np_wait_default_timeout(NULL, 0), NP_WAIT_QUEUE_ALLOWANCE);
}
END_TEST

START_TEST(test_squeue_tagged)
{
    struct np_job_list l = {0};
    /* id|state|comment: only the exact tag counts (a comment may hold '|') */
    ck_assert_int_eq(np_slurm_parse_squeue_tagged("7|PENDING|nemoperf-ab\n8|RUNNING|nemoperf-abc\n"
                                                  "9|COMPLETED|x|nemoperf-ab\n10|RUNNING|\n11|FAILED|nemoperf-ab",
                                                  "nemoperf-ab", &l),
                     0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.jobs[0].job_id, "7");
    ck_assert_str_eq(l.jobs[1].job_id, "11");
    ck_assert_str_eq(l.jobs[1].state, "FAILED");
    np_job_list_free(&l);
    ck_assert_int_eq(np_slurm_parse_squeue_tagged("7|PENDING|nemoperf-ab", NULL, &l), 0);
    ck_assert_uint_eq(l.n, 0);
    /* sbatch failures that may have reached the controller vs refusals */
    ck_assert(np_slurm_cli_ambiguous("sbatch: error: Batch job submission failed: Socket timed out on send/recv operation"));
    ck_assert(np_slurm_cli_ambiguous("Zero Bytes were transmitted or received"));
    ck_assert(np_slurm_cli_ambiguous("sbatch: error: Batch job submission failed: Communication send failure"));
    ck_assert(np_slurm_cli_ambiguous("sbatch: error: Batch job submission failed: Communication receive failure"));
    ck_assert(np_slurm_cli_ambiguous("sbatch: error: slurm_receive_msg: Connection reset by peer"));
    ck_assert(np_slurm_cli_ambiguous("sbatch: error: slurm_send_node_msg: Broken pipe"));
    ck_assert(!np_slurm_cli_ambiguous(""));
    ck_assert(!np_slurm_cli_ambiguous("sbatch: error: Batch job submission failed: Invalid account"));
    ck_assert(!np_slurm_cli_ambiguous("sbatch: error: Unable to contact slurm controller (connect failure)"));
    ck_assert(!np_slurm_cli_ambiguous(NULL));
}
END_TEST

/* find() by tag reads squeue's whole answer: a user with thousands of jobs gets megabytes, and the answer was cut
 * at 64 KiB, so a job the tag search looked for was "not known" and its record settled "not submitted" (a lost
 * record, then a duplicate).  Stand-in: an squeue script printing 4,000 other jobs (about 210 KB, past the old cut;
 * 120,000 outran the test's timeout under AddressSanitizer) before the one tagged, since the real controller of this
 * machine holds a few hundred. */
START_TEST(test_find_long_answer)
{
    char dir[256], p[300];
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/check_wait_%d", t && *t ? t : "/tmp", (int)getpid());
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(p, sizeof p, "%s/sbatch", dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\nexit 1\n", f);
    fclose(f);
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/squeue", dir);
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\nawk 'BEGIN { for (i = 1; i <= 4000; i++) printf \"%d|CANCELLED|nemoperf-%032d\\n\", i, i; "
          "print \"4001|PENDING|nemoperf-thetag\" }'\n", f); /* 210 KB: beyond the old 64 KiB cut */
    fclose(f);
    chmod(p, 0755);
    struct np_backend b;
    struct np_error err;
    struct np_slurm_cli_opts o = {.path = dir, .timeout_s = 60};
    ck_assert_int_eq(np_slurm_cli_backend(&b, &o, &err), NP_OK);
    struct np_job_list l = {0};
    ck_assert_int_eq(b.find(&b, "nemoperf-thetag", NULL, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.jobs[0].job_id, "4001");
    np_job_list_free(&l);
    np_backend_free(&b);
    unlink(p);
    snprintf(p, sizeof p, "%s/sbatch", dir);
    unlink(p);
    rmdir(dir);
}
END_TEST

/* squeue by ids: a job the controller no longer knows ("Invalid job id specified", exit 1: every id of the list
 * purged) is absent, not a failed query (the wait loop counts it vanished); any other failure is one, and so is
 * that answer to a search by tag (no ids asked). Stand-in: a squeue script printing Slurm's words. */
START_TEST(test_query_invalid_id)
{
    char dir[256], p[300];
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/check_wait_q%d", t && *t ? t : "/tmp", (int)getpid());
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(p, sizeof p, "%s/sbatch", dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\nexit 1\n", f);
    fclose(f);
    chmod(p, 0755);
    static const char *const answers[] = {"echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1",
                                          "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1"};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/squeue", dir);
        f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "#!/bin/sh\n%s\n", answers[k]);
        fclose(f);
        chmod(p, 0755);
        struct np_backend b;
        struct np_error err;
        struct np_slurm_cli_opts o = {.path = dir, .timeout_s = 10};
        ck_assert_int_eq(np_slurm_cli_backend(&b, &o, &err), NP_OK);
        char *ids[] = {(char *)"41", (char *)"42"};
        struct np_job_list l = {0};
        enum np_status st = b.query(&b, ids, 2, &l, &err);
        if (k == 0) {
            ck_assert_msg(st == NP_OK, "%s", err.text);
            ck_assert_uint_eq(l.n, 0);
        } else {
            ck_assert_int_eq(st, NP_E_SLURM);
            ck_assert_msg(strstr(err.text, "failed (exit 1): slurm_load_jobs error: Unable to contact"), "%s", err.text);
        }
        np_job_list_free(&l);
        ck_assert_int_eq(b.find(&b, "nemoperf-thetag", NULL, &l, &err), NP_E_SLURM);
        np_job_list_free(&l);
        np_backend_free(&b);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/sbatch", dir);
    unlink(p);
    rmdir(dir);
}
END_TEST

START_TEST(test_squeue_lines)
{
    struct np_job_list l = {0};
    ck_assert_int_eq(np_slurm_parse_squeue("83|COMPLETED|None\n 88|RUNNING|Resources \n\nnot a line\n|X|\n"
                                           "90|CANCELLED by 0|\n91_3|PENDING|BeginTime",
                                           &l),
                     0);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_str_eq(l.jobs[0].job_id, "83");
    ck_assert_ptr_null(l.jobs[0].reason);
    ck_assert_str_eq(l.jobs[1].job_id, "88");
    ck_assert_str_eq(l.jobs[1].reason, "Resources");
    ck_assert_int_eq(np_job_state_parse(l.jobs[2].state), NP_JOB_CANCELLED);
    ck_assert_str_eq(l.jobs[3].job_id, "91_3");
    np_job_list_free(&l);
    ck_assert_int_eq(np_slurm_parse_squeue("", &l), 0);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_int_eq(np_slurm_parse_squeue(NULL, &l), 0);
    np_job_list_free(&l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wait");
    TCase *t = tcase_create("wait");
    tcase_add_test(t, test_state_words);
    tcase_add_test(t, test_update_vanish);
    tcase_add_test(t, test_update_requeue);
    tcase_add_test(t, test_delay_and_progress);
    tcase_add_test(t, test_run_sweep_cancelled);
    tcase_add_test(t, test_run_query_failures);
    tcase_add_test(t, test_run_vanish_and_timeout);
    tcase_add_test(t, test_squeue_lines);
    tcase_add_test(t, test_run_held_ends);
    tcase_add_test(t, test_default_timeout);
    tcase_add_test(t, test_update_held_reason);
    tcase_add_test(t, test_squeue_tagged);
    tcase_add_test(t, test_find_long_answer);
    tcase_add_test(t, test_query_invalid_id);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
