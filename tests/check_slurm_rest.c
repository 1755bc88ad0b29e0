/* check_slurm_rest.c - the slurmrestd backend: version table, URL, job description, replies.
 *
 * Replies recorded from the local slurmrestd 22.05, 24.11 and 26.05 (tests/data/rest/, every
 * version v0.0.38, v0.0.40 ... v0.0.45) plus malformed and unexpected ones (clear error, no
 * crash); the job description field by field for v0.0.38, v0.0.40 and v0.0.45; connect
 * failures on local sockets: nothing listening (retried) and a peer closing after accepting
 * (never retried: a request is not sent twice).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/job/kind.h"
#include "nemoperf/launch/config.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/slurm/sbatch_env.h"
#include "nemoperf/slurm/rest.h"

#include "testutil.h"

#define DATA "tests/data/rest/"

static struct np_recipe_set set;
static char stage[] = "/tmp/np-rest-XXXXXX";

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "recipes: %s", err.text);
    ck_assert(mkdtemp(stage));
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", stage);
    ck_assert(system(cmd) == 0);
    np_recipe_set_free(&set);
}

/* ---- table and URL ---- */

START_TEST(test_api_table)
{
    size_t n = 0;
    const struct np_rest_api *t = np_rest_apis(&n);
    ck_assert_uint_eq(n, 8);
    ck_assert_str_eq(t[0].version, "v0.0.45");
    ck_assert_str_eq(t[n - 1].version, "v0.0.38");
    for (size_t i = 1; i < n; i++) /* newest first */
        ck_assert_int_gt(strcmp(t[i - 1].version, t[i].version), 0);
    for (size_t i = 0; i < n; i++) {
        /* exclusivity from v0.0.39 on is "shared":["none"] ("exclusive" is unknown from v0.0.42) */
        ck_assert_int_eq(t[i].exclusive, strcmp(t[i].version, "v0.0.38") == 0 ? NP_REST_EXCL_STRING
                                                                                : NP_REST_EXCL_SHARED);
        ck_assert_int_eq(t[i].query, strcmp(t[i].version, "v0.0.42") >= 0 ? NP_REST_QUERY_STATE : NP_REST_QUERY_JOB);
        if (!t[i].tested)
            continue;
        /* a version tested against a real slurmrestd has its recorded ping */
        char path[128];
        snprintf(path, sizeof path, DATA "%s-ping.json", t[i].version);
        ck_assert_msg(access(path, R_OK) == 0, "%s: no recorded ping", path);
    }
    const struct np_rest_api *a = np_rest_api_find("v0.0.38");
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->tested, "22.05");
    ck_assert_ptr_null(np_rest_api_find("v0.0.39")->tested); /* Slurm 23.02: not available here */
    ck_assert_ptr_null(np_rest_api_find("v0.0.37"));
    ck_assert_ptr_null(np_rest_api_find(NULL));
}
END_TEST

START_TEST(test_url)
{
    struct np_rest_url u;
    struct np_error err;
    ck_assert_int_eq(np_rest_url_parse("unix:/run/slurm/rest.sock", &u, &err), NP_OK);
    ck_assert_str_eq(u.socket, "/run/slurm/rest.sock");
    ck_assert_str_eq(u.base, "http://localhost");
    ck_assert_str_eq(u.display, "unix:/run/slurm/rest.sock");
    np_rest_url_free(&u);
    ck_assert_int_eq(np_rest_url_parse("unix:///run/x.sock", &u, &err), NP_OK);
    ck_assert_str_eq(u.socket, "/run/x.sock");
    np_rest_url_free(&u);
    ck_assert_int_eq(np_rest_url_parse("http://127.0.0.1:6820/", &u, &err), NP_OK);
    ck_assert_ptr_null(u.socket);
    ck_assert_str_eq(u.base, "http://127.0.0.1:6820");
    np_rest_url_free(&u);
    ck_assert_int_eq(np_rest_url_parse("https://rest.example.org/slurm-api//", &u, &err), NP_OK);
    ck_assert_str_eq(u.base, "https://rest.example.org/slurm-api");
    np_rest_url_free(&u);
    /* credentials never appear in the display form */
    ck_assert_int_eq(np_rest_url_parse("http://alice:s3cret@h:6820", &u, &err), NP_OK);
    ck_assert_ptr_null(strstr(u.display, "s3cret"));
    ck_assert_ptr_null(strstr(u.display, "alice"));
    ck_assert_ptr_nonnull(strstr(u.display, "h:6820"));
    np_rest_url_free(&u);
    static const char *const bad[] = {"", "unix:", "unix:rel/x.sock", "ftp://h/", "h:6820", "http://h:6820/?x=1",
                                      "not a url at all", NULL};
    for (size_t i = 0; bad[i]; i++) {
        ck_assert_msg(np_rest_url_parse(bad[i], &u, &err) == NP_E_INVALID, "%s accepted", bad[i]);
        ck_assert_str_eq(err.source, "SLURMRESTD_URL");
    }
    ck_assert_int_eq(np_rest_url_parse(NULL, &u, &err), NP_E_INVALID);
}
END_TEST

START_TEST(test_time_minutes)
{
    ck_assert_int_eq(np_rest_time_minutes("30"), 30);
    ck_assert_int_eq(np_rest_time_minutes("00:30:00"), 30);
    ck_assert_int_eq(np_rest_time_minutes("00:15:00"), 15);
    ck_assert_int_eq(np_rest_time_minutes("1:30"), 2); /* M:S, seconds round up */
    ck_assert_int_eq(np_rest_time_minutes("2:00:01"), 121);
    ck_assert_int_eq(np_rest_time_minutes("1-0"), 1440);
    ck_assert_int_eq(np_rest_time_minutes("1-2:03"), 1440 + 123);
    ck_assert_int_eq(np_rest_time_minutes("1-2:03:04"), 1440 + 124);
    ck_assert_int_eq(np_rest_time_minutes("0:0:0"), -1);
    ck_assert_int_eq(np_rest_time_minutes("abc"), -1);
    ck_assert_int_eq(np_rest_time_minutes(NULL), -1);
}
END_TEST

/* ---- job description ---- */

static void resolve(const char *const *extra, struct np_launch_plan *plan)
{
    const char *e[32];
    char sp[600];
    size_t n = 0;
    snprintf(sp, sizeof sp, "STAGE_PATH=%s", stage);
    e[n++] = sp;
    e[n++] = "WORKLOAD=synthetic";
    e[n++] = "MODEL_SIZE=8b";
    e[n++] = "DTYPE=bf16";
    for (size_t i = 0; extra && extra[i]; i++)
        e[n++] = extra[i];
    e[n] = NULL;
    struct np_launch_opts o = {.now = 1700000000, .synth_path = "/usr/bin/true"};
    struct np_error err;
    ck_assert_msg(np_launch_resolve(&set, np_env_list, (void *)e, &o, plan, &err) == NP_OK, "%s", err.text);
}

static const char *const submit_env[] = {"PATH=/opt/x/bin:/usr/bin", "HF_TOKEN=hf_secret_value", "LANG=C.UTF-8",
                                         NULL};

START_TEST(test_body_v38)
{
    static const char *const extra[] = {"JOB_TOTAL_GPUS=16", "HF_TOKEN=x", "SBATCH_ACCOUNT=acct",
                                        "SBATCH_PARTITION=batch", "SBATCH_GPUS_PER_NODE=8", NULL};
    struct np_launch_plan plan;
    resolve(extra, &plan);
    const struct np_launch_config *c = &plan.jobs[0];
    json_t *body = NULL;
    struct np_error err;
    ck_assert_int_eq(np_rest_job_body(np_rest_api_find("v0.0.38"), c, "#!/bin/bash\necho hi\n", np_env_list,
                                      (void *)submit_env, &body, &err),
                     NP_OK);
    ck_assert_str_eq(json_string_value(json_object_get(body, "script")), "#!/bin/bash\necho hi\n");
    json_t *job = json_object_get(body, "job");
    ck_assert(json_is_object(job));
    ck_assert_str_eq(json_string_value(json_object_get(job, "name")), c->job_name);
    json_t *nodes = json_object_get(job, "nodes");
    ck_assert(json_is_array(nodes) && json_array_size(nodes) == 2);
    ck_assert_int_eq(json_integer_value(json_array_get(nodes, 0)), 2);
    ck_assert_int_eq(json_integer_value(json_array_get(nodes, 1)), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(job, "tasks_per_node")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(job, "tasks")), 16);
    ck_assert_str_eq(json_string_value(json_object_get(job, "exclusive")), "exclusive");
    ck_assert_int_eq(json_integer_value(json_object_get(job, "time_limit")), 30);
    ck_assert_int_eq(json_integer_value(json_object_get(job, "memory_per_node")), 0);
    ck_assert_str_eq(json_string_value(json_object_get(job, "current_working_directory")), c->experiment_dir);
    char want[1200];
    snprintf(want, sizeof want, "%s/sbatch_%s_%%j.out", c->experiment_dir, c->job_name);
    ck_assert_str_eq(json_string_value(json_object_get(job, "standard_output")), want);
    ck_assert_str_eq(json_string_value(json_object_get(job, "account")), "acct");
    ck_assert_str_eq(json_string_value(json_object_get(job, "partition")), "batch");
    ck_assert_str_eq(json_string_value(json_object_get(job, "gpus_per_node")), "8");
    ck_assert_ptr_null(json_object_get(job, "tres_per_node")); /* refused by v0.0.38 */
    ck_assert(json_is_false(json_object_get(job, "requeue"))); /* NEMOPERF_MAX_RETRIES unset: never requeued */
    ck_assert_str_eq(json_string_value(json_object_get(job, "open_mode")), "append");
    json_t *env = json_object_get(job, "environment");
    ck_assert(json_is_object(env));
    ck_assert_str_eq(json_string_value(json_object_get(env, "PATH")), "/opt/x/bin:/usr/bin");
    ck_assert_str_eq(json_string_value(json_object_get(env, "LANG")), "C.UTF-8");
    ck_assert_ptr_null(json_object_get(env, "HF_TOKEN")); /* issue 23: slurmctld keeps the environment */
    ck_assert_str_eq(json_string_value(json_object_get(env, "NEMO_HOME")), c->stage_path);
    ck_assert_ptr_null(json_object_get(env, "LD_LIBRARY_PATH"));
    ck_assert_ptr_null(json_object_get(env, "SLURM_CONF"));
    /* every variable the script exports is there */
    struct np_script_var vars[NP_SCRIPT_MAX_VARS];
    size_t nv = np_script_vars(c, vars, NP_SCRIPT_MAX_VARS);
    for (size_t i = 0; i < nv; i++)
        ck_assert_str_eq(json_string_value(json_object_get(env, vars[i].name)), vars[i].value);
    json_decref(body);
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_body_newer_and_minimal)
{
    static const char *const extra[] = {"JOB_TOTAL_GPUS=8", "TIME_LIMIT=1-00:00:30", "SBATCH_GPUS_PER_NODE=h100:8",
                                        NULL};
    struct np_launch_plan plan;
    resolve(extra, &plan);
    const struct np_launch_config *c = &plan.jobs[0];
    json_t *body = NULL;
    struct np_error err;
    static const char *const noenv[] = {NULL};
    ck_assert_int_eq(np_rest_job_body(np_rest_api_find("v0.0.40"), c, "s", np_env_list, (void *)noenv, &body, &err),
                     NP_OK);
    json_t *job = json_object_get(body, "job");
    ck_assert_ptr_null(json_object_get(job, "nodes"));
    ck_assert_ptr_null(json_object_get(job, "exclusive")); /* deprecated in v0.0.40, unknown from v0.0.42 */
    json_t *shared = json_object_get(job, "shared");
    ck_assert(json_is_array(shared) && json_array_size(shared) == 1);
    ck_assert_str_eq(json_string_value(json_array_get(shared, 0)), "none");
    ck_assert_str_eq(json_string_value(json_object_get(body, "script")), "s"); /* top level up to v0.0.40 */
    ck_assert_int_eq(json_integer_value(json_object_get(job, "minimum_nodes")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(job, "maximum_nodes")), 1);
    json_t *tl = json_object_get(job, "time_limit");
    ck_assert(json_is_object(tl));
    ck_assert(json_is_true(json_object_get(tl, "set")));
    ck_assert(json_is_false(json_object_get(tl, "infinite")));
    ck_assert_int_eq(json_integer_value(json_object_get(tl, "number")), 1441);
    ck_assert_str_eq(json_string_value(json_object_get(job, "tres_per_node")), "gres/gpu:h100:8");
    ck_assert_ptr_null(json_object_get(job, "account"));
    ck_assert_ptr_null(json_object_get(job, "partition"));
    json_t *env = json_object_get(job, "environment");
    ck_assert(json_is_array(env));
    ck_assert_str_eq(json_string_value(json_array_get(env, 0)), "PATH=/usr/local/bin:/usr/bin:/bin");
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e) {
        ck_assert(json_is_string(e));
        ck_assert_ptr_nonnull(strchr(json_string_value(e), '='));
        ck_assert(strncmp(json_string_value(e), "HF_TOKEN=", 9) != 0); /* not set: not sent */
    }
    json_decref(body);
    /* v0.0.45: the script inside the job (the top-level one is deprecated from v0.0.41) */
    ck_assert_int_eq(np_rest_job_body(np_rest_api_find("v0.0.45"), c, "s", np_env_list, (void *)noenv, &body, &err),
                     NP_OK);
    job = json_object_get(body, "job");
    ck_assert_ptr_null(json_object_get(body, "script"));
    ck_assert_str_eq(json_string_value(json_object_get(job, "script")), "s");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(job, "shared"), 0)), "none");
    ck_assert_ptr_null(json_object_get(job, "exclusive"));
    json_decref(body);
    np_launch_plan_free(&plan);
}
END_TEST

/* The user's SBATCH_* settings: mapped to job fields, or refused by name (sbatch_env.c). */
START_TEST(test_sbatch_env_fields)
{
    struct np_launch_plan plan;
    resolve(NULL, &plan);
    const struct np_launch_config *c = &plan.jobs[0];
    json_t *body = NULL;
    struct np_error err;
    static const char *const mapped[] = {"PATH=/usr/bin", "SBATCH_QOS=high", "SBATCH_RESERVATION=resv1",
                                         "SBATCH_CONSTRAINT=ib&nvl", "SBATCH_WCKEY=proj", "SBATCH_TIMEOUTX=", NULL};
    ck_assert_int_eq(np_rest_job_body(np_rest_api_find("v0.0.38"), c, "s", np_env_list, (void *)mapped, &body, &err),
                     NP_OK);
    json_t *job = json_object_get(body, "job");
    ck_assert_str_eq(json_string_value(json_object_get(job, "qos")), "high");
    ck_assert_str_eq(json_string_value(json_object_get(job, "reservation")), "resv1");
    ck_assert_str_eq(json_string_value(json_object_get(job, "constraints")), "ib&nvl");
    ck_assert_str_eq(json_string_value(json_object_get(job, "wckey")), "proj");
    json_decref(body);
    /* no REST field: refused with its name, nothing built */
    static const char *const unmapped[] = {"PATH=/usr/bin", "SBATCH_QOS=high", "SBATCH_SIGNAL=B:USR1@60", NULL};
    body = NULL;
    ck_assert_int_eq(np_rest_job_body(np_rest_api_find("v0.0.38"), c, "s", np_env_list, (void *)unmapped, &body,
                                      &err),
                     NP_E_INVALID);
    ck_assert_ptr_null(body);
    ck_assert_msg(strstr(err.text, "SBATCH_SIGNAL is set") && strstr(err.text, "SLURM_SUBMIT=cli") &&
                      strstr(err.text, "SBATCH_QOS"),
                  "%s", err.text);
    ck_assert_int_eq(np_sbatch_rest_check(np_env_list, (void *)unmapped, &err), NP_E_INVALID);
    ck_assert_int_eq(np_sbatch_rest_check(np_env_list, (void *)mapped, &err), NP_OK);
    ck_assert_str_eq(np_sbatch_rest_field("SBATCH_ACCOUNT"), ""); /* config.c's own field */
    ck_assert_ptr_null(np_sbatch_rest_field("SBATCH_EXCLUDE")); /* sbatch itself reads no such variable */
    np_launch_plan_free(&plan);
}
END_TEST

/* The checks of every backend: Slurm's 1024-byte limit on names (measured: 1025 refused), control bytes. */
START_TEST(test_sbatch_env_check)
{
    struct np_error err;
    char at_limit[13 + 1024 + 1], over[11 + 1025 + 1];
    memcpy(at_limit, "SBATCH_WCKEY=", 13);
    memset(at_limit + 13, 'w', 1024);
    at_limit[13 + 1024] = '\0';
    memcpy(over, "SBATCH_QOS=", 11);
    memset(over + 11, 'q', 1025);
    over[11 + 1025] = '\0';
    const char *ok[] = {"PATH=/usr/bin", at_limit, "SBATCH_COMMENT=a\tb", "SBATCH_ACCOUNT=", NULL};
    ck_assert_int_eq(np_sbatch_env_check(np_env_list, (void *)ok, &err), NP_OK);
    const char *too_long[] = {"PATH=/usr/bin", over, NULL};
    ck_assert_int_eq(np_sbatch_env_check(np_env_list, (void *)too_long, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "SBATCH_QOS: 1025 bytes long; Slurm refuses more than 1024"), "%s", err.text);
    const char *control[] = {"SBATCH_ACCOUNT=proj\nx", NULL};
    ck_assert_int_eq(np_sbatch_env_check(np_env_list, (void *)control, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "SBATCH_ACCOUNT: holds a control character (byte 0x0a at offset 4)"), "%s",
                  err.text);
}
END_TEST

/* ---- replies ---- */

/* A recorded reply of tests/data/rest/ (record.sh): body and HTTP status. */
static char *recorded(const char *version, const char *name, long *http, size_t *len)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s-%s.http", version, name);
    size_t hl;
    char *h = np_test_read_all(path, &hl);
    *http = strtol(h, NULL, 10);
    free(h);
    ck_assert_msg(*http >= 200 && *http < 600, "%s", path);
    snprintf(path, sizeof path, DATA "%s-%s.json", version, name);
    return np_test_read_all(path, len);
}

static const char *const recorded_versions[] = {"v0.0.45", "v0.0.44", "v0.0.43", "v0.0.42", "v0.0.41", "v0.0.40",
                                                NULL};

/* Every version of 24.11 and 26.05: ping UP and DOWN in its own form, submit (a job
 * id; a field it does not know: the job exists but the setting is reported dropped),
 * environment missing (refused), the state of our job and of an unknown job. */
START_TEST(test_recorded_versions)
{
    for (size_t v = 0; recorded_versions[v]; v++) {
        const char *ver = recorded_versions[v];
        const struct np_rest_api *api = np_rest_api_find(ver);
        ck_assert_ptr_nonnull(api);
        long http;
        size_t n;
        struct np_error err;
        char *b = recorded(ver, "ping", &http, &n);
        ck_assert_msg(np_rest_parse_ping(api, http, b, n, &err) == NP_OK, "%s: %s", ver, err.text);
        free(b);
        b = recorded(ver, "ping-down", &http, &n);
        ck_assert_int_eq(http, 200);
        ck_assert_msg(np_rest_parse_ping(api, http, b, n, &err) == NP_E_SLURM, "%s: DOWN taken as up", ver);
        ck_assert_msg(strstr(err.text, "no slurmctld is UP"), "%s: %s", ver, err.text);
        if (api->ping == NP_REST_PING_RESPONDING && !strstr(b, "\"pinged\"")) /* v0.0.45 says why */
            ck_assert_msg(strstr(err.text, "UP: Unable to contact slurm controller"), "%s: %s", ver, err.text);
        free(b);

        struct np_rest_submit_reply r;
        b = recorded(ver, "submit-ok", &http, &n);
        ck_assert_msg(np_rest_parse_submit(http, b, n, &r, &err) == NP_OK, "%s: %s", ver, err.text);
        ck_assert_ptr_nonnull(r.job_id);
        char ours[32];
        snprintf(ours, sizeof ours, "%s", r.job_id);
        ck_assert_ptr_null(r.notes);
        ck_assert_ptr_null(r.dropped);
        np_rest_submit_reply_free(&r);
        free(b);
        b = recorded(ver, "submit-unknown-field", &http, &n);
        ck_assert_int_eq(np_rest_parse_submit(http, b, n, &r, &err), NP_OK);
        ck_assert_ptr_nonnull(r.job_id);
        ck_assert_msg(r.dropped && strcmp(r.dropped, "job/nemoperf_no_such_field") == 0, "%s: dropped %s", ver,
                      r.dropped ? r.dropped : "(none)");
        ck_assert_msg(r.notes && strstr(r.notes, "Ignoring unknown field \"nemoperf_no_such_field\""), "%s", ver);
        np_rest_submit_reply_free(&r);
        free(b);
        b = recorded(ver, "submit-partition-down", &http, &n);
        ck_assert_int_eq(np_rest_parse_submit(http, b, n, &r, &err), NP_OK);
        ck_assert_ptr_nonnull(r.job_id);
        np_rest_submit_reply_free(&r);
        free(b);
        b = recorded(ver, "submit-error-noenv", &http, &n);
        ck_assert_int_ge(http, 400);
        ck_assert_int_eq(np_rest_parse_submit(http, b, n, &r, &err), NP_E_SLURM);
        ck_assert_ptr_null(r.job_id);
        /* 26.05: 422 "Environment is missing in job" (2127); 24.11: 500, reported as 2019 */
        ck_assert_msg(strstr(err.text, "Batch job submission failed: ") &&
                          (strstr(err.text, "Environment is missing in job (code 2127)") ||
                           strstr(err.text, "I/O error writing script/environment to file (code 2019)")),
                      "%s: %s", ver, err.text);
        free(b);

        /* our job's state; the unknown job is absent, not an error */
        char *ids[] = {ours, (char *)"999999"};
        struct np_job_list l;
        int state = api->query == NP_REST_QUERY_STATE;
        b = recorded(ver, state ? "jobs-state" : "job", &http, &n);
        ck_assert_msg(np_rest_parse_jobs(http, b, n, ids, 2, &l, &err) == NP_OK, "%s: %s", ver, err.text);
        ck_assert_uint_eq(l.n, 1);
        ck_assert_str_eq(l.jobs[0].job_id, ours);
        ck_assert_msg(strcmp(l.jobs[0].state, "RUNNING") == 0 || strcmp(l.jobs[0].state, "PENDING") == 0, "%s: %s",
                      ver, l.jobs[0].state);
        np_job_list_free(&l);
        free(b);
        b = recorded(ver, state ? "jobs-state-unknown" : "job-unknown", &http, &n);
        ck_assert_int_eq(http, state ? 200 : 404);
        ck_assert_msg(np_rest_parse_jobs(http, b, n, ids + 1, 1, &l, &err) == NP_OK, "%s: %s", ver, err.text);
        ck_assert_uint_eq(l.n, 0);
        free(b);
    }
    /* an HTTP error whose reply lists no error and no job (a proxy's 400 or 500 with an empty JSON body) is an
     * error, never "the scheduler knows none of these jobs" (reconcile would record them as not submitted) */
    static const long codes[] = {400, 500};
    for (size_t k = 0; k < 2; k++) {
        char *one[] = {(char *)"4242"};
        struct np_job_list l;
        struct np_error err;
        const char body[] = "{\"jobs\":[],\"errors\":[],\"warnings\":[]}";
        ck_assert_int_eq(np_rest_parse_jobs(codes[k], body, sizeof body - 1, one, 1, &l, &err), NP_E_SLURM);
        ck_assert_msg(strstr(err.text, "HTTP") != NULL, "%s", err.text);
        np_job_list_free(&l);
    }
}
END_TEST

/* Array jobs: jobs/state lists the tasks of an array asked for as "7_2" (never taken
 * for job 7); job/{id} of an array gives its records with numeric ids and times in the
 * {set,infinite,number} form. */
START_TEST(test_recorded_arrays)
{
    long http;
    size_t n;
    struct np_error err;
    struct np_job_list l;
    char *b = recorded("v0.0.45", "jobs-state", &http, &n);
    json_t *j = json_loads(b, 0, NULL);
    size_t i;
    json_t *e;
    int tasks = 0;
    json_array_foreach(json_object_get(j, "jobs"), i, e) {
        const char *id = json_string_value(json_object_get(e, "job_id"));
        ck_assert_ptr_nonnull(id);
        if (!strchr(id, '_'))
            continue;
        tasks++;
        char base[32];
        snprintf(base, sizeof base, "%.*s", (int)strcspn(id, "_"), id);
        char *ids[] = {base};
        ck_assert_int_eq(np_rest_parse_jobs(http, b, n, ids, 1, &l, &err), NP_OK);
        ck_assert_uint_eq(l.n, 0);
    }
    ck_assert_int_ge(tasks, 2);
    json_decref(j);
    free(b);
    b = recorded("v0.0.40", "job-array", &http, &n);
    j = json_loads(b, 0, NULL);
    json_t *first = json_array_get(json_object_get(j, "jobs"), 0);
    ck_assert(json_is_object(json_object_get(first, "array_job_id"))); /* {set,infinite,number} */
    ck_assert(json_is_object(json_object_get(first, "time_limit")));
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(first, "job_id")));
    char *ids[] = {id};
    ck_assert_int_eq(np_rest_parse_jobs(http, b, n, ids, 1, &l, &err), NP_OK);
    ck_assert_uint_ge(l.n, 1);
    ck_assert_str_eq(l.jobs[0].job_id, id);
    ck_assert_str_eq(l.jobs[0].state, json_string_value(json_array_get(json_object_get(first, "job_state"), 0)));
    np_job_list_free(&l);
    json_decref(j);
    free(b);
}
END_TEST

/* Recorded jobs replies with a tag put in as the comment (the recordings carry none):
 * v0.0.38's string form, v0.0.41's {"job": ...} object form; the job's name must agree
 * when both are known; other jobs, and a reply without "jobs", are not taken. */
static char *tagged_body(const char *body, size_t n, size_t which, const char *tag, int object)
{
    json_t *j = json_loadb(body, n, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *e = json_array_get(json_object_get(j, "jobs"), which);
    ck_assert_ptr_nonnull(e);
    json_object_set_new(e, "comment", object ? json_pack("{s:s,s:s,s:s}", "job", tag, "administrator", "", "system",
                                                         "")
                                             : json_string(tag));
    char *out = json_dumps(j, 0);
    json_decref(j);
    return out;
}

START_TEST(test_recorded_tagged)
{
    struct np_error err;
    struct np_job_list l;
    size_t n;
    char *b = np_test_read_all(DATA "v0.0.38-jobs.json", &n);
    char *t = tagged_body(b, n, 2, "np-tag-1", 0);
    ck_assert_int_eq(np_rest_parse_tagged(200, t, strlen(t), "np-tag-1", NULL, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.jobs[0].job_id, "54");
    ck_assert_str_eq(l.jobs[0].state, "FAILED");
    ck_assert_ptr_null(l.jobs[0].reason); /* NonZeroExitCode is in the reply, not asked for here */
    np_job_list_free(&l);
    ck_assert_int_eq(np_rest_parse_tagged(200, t, strlen(t), "np-tag-1", "nemoperf-setup", &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    np_job_list_free(&l);
    /* another name, the same tag: the job (SBATCH_JOB_NAME renamed it; issue 23) */
    ck_assert_int_eq(np_rest_parse_tagged(200, t, strlen(t), "np-tag-1", "other-name", &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    np_job_list_free(&l);
    ck_assert_int_eq(np_rest_parse_tagged(200, t, strlen(t), "np-tag-2", NULL, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_int_eq(np_rest_parse_tagged(200, t, strlen(t), NULL, NULL, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    free(t);
    free(b);

    long http;
    b = recorded("v0.0.41", "job", &http, &n);
    t = tagged_body(b, n, 0, "np-tag-41", 1);
    ck_assert_int_eq(np_rest_parse_tagged(http, t, strlen(t), "np-tag-41", "np-record", &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.jobs[0].job_id, "15");
    ck_assert_str_eq(l.jobs[0].state, "RUNNING");
    np_job_list_free(&l);
    free(t);
    free(b);
    /* the unknown job's reply is an error here (no job asked for by id), and no "jobs" array neither */
    b = recorded("v0.0.41", "job-unknown", &http, &n);
    ck_assert_int_ne(np_rest_parse_tagged(http, b, n, "np-tag-41", NULL, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    free(b);
    static const char nojobs[] = "{\"meta\": {}, \"errors\": []}";
    ck_assert_int_eq(np_rest_parse_tagged(200, nojobs, strlen(nojobs), "x", NULL, &l, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "no \"jobs\" array"), "%s", err.text);
}
END_TEST

/* Warnings that are not a dropped setting: said, the job recorded; a job id beside
 * errors[]: the job exists. */
START_TEST(test_recorded_warnings)
{
    long http;
    size_t n;
    struct np_error err;
    struct np_rest_submit_reply r;
    char *b = recorded("v0.0.40", "submit-plain-number", &http, &n);
    ck_assert_int_eq(np_rest_parse_submit(http, b, n, &r, &err), NP_OK);
    ck_assert_ptr_nonnull(r.job_id);
    ck_assert_ptr_null(r.dropped);
    ck_assert_msg(r.notes && strstr(r.notes, "Expected OpenAPI type=object"), "%s", r.notes ? r.notes : "(none)");
    np_rest_submit_reply_free(&r);
    free(b);
    /* v0.0.41-submit-id-and-errors.json is v0.0.41-submit-ok.json with an errors[] entry added by
     * hand, as jobs.c adds one beside the job id (see tests/data/rest/README) */
    b = recorded("v0.0.41", "submit-id-and-errors", &http, &n);
    ck_assert_int_eq(np_rest_parse_submit(http, b, n, &r, &err), NP_OK);
    ck_assert_ptr_nonnull(r.job_id);
    ck_assert_msg(r.notes && strstr(r.notes, "errors: Unexpected failure (code 5000)"), "%s", r.notes ? r.notes : "");
    np_rest_submit_reply_free(&r);
    free(b);
}
END_TEST

START_TEST(test_openapi_versions)
{
    size_t n;
    char *b = np_test_read_all(DATA "slurm-24.11-openapi-paths.json", &n);
    char *v = np_rest_openapi_versions(b, n);
    ck_assert_str_eq(v, "v0.0.42, v0.0.41, v0.0.40");
    free(v);
    free(b);
    const char *doc = "{\"paths\":{\"/slurm/v0.0.9/ping\":{},\"/slurm/v0.0.47/jobs\":{},\"/slurmdb/v0.0.46/x\":{},"
                      "\"/slurm/v0.0.47/ping\":{},\"/slurm/vx/y\":{},\"/slurm/v0.0.100/ping\":{}}}";
    v = np_rest_openapi_versions(doc, strlen(doc));
    ck_assert_str_eq(v, "v0.0.100, v0.0.47, v0.0.9");
    free(v);
    ck_assert_ptr_null(np_rest_openapi_versions("{}", 2));
    ck_assert_ptr_null(np_rest_openapi_versions("not json", 8));
    ck_assert_ptr_null(np_rest_openapi_versions(NULL, 0));
}
END_TEST

START_TEST(test_recorded_ping)
{
    size_t n;
    struct np_error err;
    char *b = np_test_read_all(DATA "v0.0.38-ping.json", &n);
    const struct np_rest_api *v38 = np_rest_api_find("v0.0.38");
    ck_assert_int_eq(np_rest_parse_ping(v38, 200, b, n, &err), NP_OK);
    free(b);
    b = np_test_read_all(DATA "v0.0.41-ping-404.txt", &n);
    ck_assert_int_eq(np_rest_parse_ping(np_rest_api_find("v0.0.41"), 404, b, n, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "HTTP 404: Unable find requested URL"), "%s", err.text);
    free(b);
    b = np_test_read_all(DATA "v0.0.38-ping-badtoken.json", &n);
    ck_assert_int_eq(np_rest_parse_ping(v38, 500, b, n, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "slurmctld config is unable to load"), "%s", err.text);
    free(b);
    b = np_test_read_all(DATA "v0.0.38-ping-noauth-401.txt", &n);
    ck_assert_int_eq(np_rest_parse_ping(v38, 401, b, n, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "HTTP 401: Authentication failure"), "%s", err.text);
    free(b);
    /* 22.05 with slurmctld stopped: HTTP 500 and an error (recorded) */
    b = np_test_read_all(DATA "v0.0.38-ping-down.json", &n);
    ck_assert_int_eq(np_rest_parse_ping(v38, 500, b, n, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "HTTP 500: slurmctld config is unable to load"), "%s", err.text);
    free(b);
    const char *down = "{\"errors\":[],\"pings\":[{\"hostname\":\"a\",\"ping\":\"DOWN\"}]}";
    ck_assert_int_eq(np_rest_parse_ping(v38, 200, down, strlen(down), &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "no slurmctld is UP"), "%s", err.text);
    const char *newer = "{\"pings\":[{\"hostname\":\"a\",\"responding\":true}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(NULL, 200, newer, strlen(newer), &err), NP_OK);
    /* the version's own form: an entry without it is not up */
    ck_assert_int_eq(np_rest_parse_ping(v38, 200, newer, strlen(newer), &err), NP_E_SLURM);
    const char *nopings = "{\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(v38, 200, nopings, strlen(nopings), &err), NP_E_PARSE);
}
END_TEST

START_TEST(test_recorded_submit)
{
    size_t n;
    struct np_error err;
    struct np_rest_submit_reply r;
    char *b = np_test_read_all(DATA "v0.0.38-submit-ok.json", &n);
    ck_assert_int_eq(np_rest_parse_submit(200, b, n, &r, &err), NP_OK);
    ck_assert_str_eq(r.job_id, "86");
    ck_assert_ptr_null(r.notes);
    np_rest_submit_reply_free(&r);
    np_rest_submit_reply_free(&r); /* twice is harmless */
    np_rest_submit_reply_free(NULL);
    free(b);
    static const struct {
        const char *file;
        long http;
        const char *pieces[3];
    } bad[] = {
        {"v0.0.38-submit-error-400.json", 400,
         {"HTTP 400: Invalid exclusive specification", "Unable to process key \"exclusive\"",
          "Failure during parsing (code 9001)"}},
        {"v0.0.38-submit-error-partition.json", 500, {"HTTP 500: Invalid partition name specified (code 2000)"}},
        {"v0.0.38-submit-error-noenv.json", 400, {"environment must be set (code 2127)"}},
        {"v0.0.38-submit-error-unknown-key.json", 400, {"Unknown key \"tres_per_node\""}},
        {"v0.0.38-submit-error-badjson.json", 400, {"HTTP 400: Unable to parse query."}},
        {"v0.0.38-submit-badtoken.json", 500, {"Zero Bytes were transmitted or received (code 5005)"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, DATA "%s", bad[i].file);
        b = np_test_read_all(path, &n);
        ck_assert_int_eq(np_rest_parse_submit(bad[i].http, b, n, &r, &err), NP_E_SLURM);
        ck_assert_ptr_null(r.job_id);
        for (size_t k = 0; k < 3 && bad[i].pieces[k]; k++)
            ck_assert_msg(strstr(err.text, bad[i].pieces[k]), "%s: want \"%s\" in \"%s\"", bad[i].file,
                          bad[i].pieces[k], err.text);
        free(b);
    }
    /* errors[] in a 200 reply is a refusal too */
    const char *e200 = "{\"errors\":[{\"error\":\"Job violates accounting/QOS policy\",\"error_code\":2050}],"
                       "\"job_id\":0}";
    ck_assert_int_eq(np_rest_parse_submit(200, e200, strlen(e200), &r, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "HTTP 200: Job violates accounting/QOS policy (code 2050)"), "%s", err.text);
}
END_TEST

START_TEST(test_malformed_submit)
{
    static const struct {
        const char *body;
        size_t len; /* 0: strlen */
        long http;
        enum np_status st;
        const char *piece;
    } cases[] = {
        {"", 0, 200, NP_E_PARSE, "empty reply"},
        {"{", 0, 200, NP_E_PARSE, "not JSON"},
        {"{\"job_id\": 5,", 0, 200, NP_E_PARSE, "not JSON"},
        {"[1,2,3]", 0, 200, NP_E_PARSE, "not an object"},
        {"null", 0, 200, NP_E_PARSE, "not JSON"}, /* jansson refuses a bare null without JSON_DECODE_ANY */
        {"\"job\"", 0, 200, NP_E_PARSE, "not JSON"},
        {"{}", 0, 200, NP_E_PARSE, "no usable \"job_id\" (got none)"},
        {"{\"job_id\":\"abc\"}", 0, 200, NP_E_PARSE, "non-numeric string"},
        {"{\"job_id\":-4}", 0, 200, NP_E_PARSE, "a number <= 0"},
        {"{\"job_id\":1.5}", 0, 200, NP_E_PARSE, "another type"},
        {"{\"job_id\":{\"a\":1}}", 0, 200, NP_E_PARSE, "another type"},
        {"{\"job_id\":[7]}", 0, 200, NP_E_PARSE, "another type"},
        {"{\"job_id\":7,\"job_id\":8}", 0, 200, NP_E_PARSE, "duplicate"},
        {"{\"errors\":\"oops\"}", 0, 200, NP_E_PARSE, "no usable"},        /* errors of the wrong type: ignored */
        {"{\"errors\":[1,null,{}],\"job_id\":0}", 0, 200, NP_E_SLURM, "3 errors without a readable text"},
        {"{\"errors\":[{\"description\":5,\"error\":[]}]}", 0, 200, NP_E_SLURM, "1 error without a readable"},
        {"{\"errors\":[\"plain text error\"]}", 0, 500, NP_E_SLURM, "HTTP 500: plain text error"},
        {"<html><body>502 Bad Gateway</body></html>", 0, 502, NP_E_SLURM, "HTTP 502: <html><body>502 Bad"},
        {"{\"job_id\":\x00 5}", 13, 200, NP_E_PARSE, "not JSON"},
        {"\xff\xfe\x01garbage", 0, 200, NP_E_PARSE, "not JSON"},
        {"{}", 0, 503, NP_E_SLURM, "HTTP 503: (no error text in the reply)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct np_error err;
        struct np_rest_submit_reply r;
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].body);
        enum np_status st = np_rest_parse_submit(cases[i].http, cases[i].body, len, &r, &err);
        ck_assert_msg(st == cases[i].st, "case %zu: status %d, want %d (%s)", i, st, cases[i].st, err.text);
        ck_assert_ptr_null(r.job_id);
        ck_assert_msg(strstr(err.text, cases[i].piece), "case %zu: want \"%s\" in \"%s\"", i, cases[i].piece, err.text);
    }
    /* a nested document far deeper than any reply: refused by the parser, no crash */
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 1);
    ck_assert(deep);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    struct np_error err;
    struct np_rest_submit_reply r;
    ck_assert_int_eq(np_rest_parse_submit(200, deep, 2 * depth, &r, &err), NP_E_PARSE);
    free(deep);
    ck_assert_int_eq(np_rest_parse_submit(200, NULL, 0, &r, &err), NP_E_PARSE);
    /* a job id beside unreadable errors: the job exists, the errors are told */
    const char *odd = "{\"errors\":[1,null,{}],\"job_id\":3,\"warnings\":[{\"description\":\"w\"}]}";
    ck_assert_int_eq(np_rest_parse_submit(500, odd, strlen(odd), &r, &err), NP_OK);
    ck_assert_str_eq(r.job_id, "3");
    ck_assert_str_eq(r.notes, "w; errors: the reply lists 3 errors without a readable text");
    ck_assert_ptr_null(r.dropped);
    np_rest_submit_reply_free(&r);
}
END_TEST

START_TEST(test_recorded_jobs)
{
    size_t n;
    struct np_error err;
    struct np_job_list l;
    char *b = np_test_read_all(DATA "v0.0.38-jobs.json", &n);
    char *ids[] = {(char *)"5", (char *)"12", (char *)"54", (char *)"999"};
    ck_assert_int_eq(np_rest_parse_jobs(200, b, n, ids, 4, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 3);
    const char *want[][2] = {{"5", "COMPLETED"}, {"12", "CANCELLED"}, {"54", "FAILED"}};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_str_eq(l.jobs[i].job_id, want[i][0]);
        ck_assert_str_eq(l.jobs[i].state, want[i][1]);
    }
    np_job_list_free(&l);
    /* only the jobs asked for */
    ck_assert_int_eq(np_rest_parse_jobs(200, b, n, ids + 1, 1, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.jobs[0].job_id, "12");
    np_job_list_free(&l);
    free(b);
    /* an unknown job (22.05: HTTP 500 with error 2017) is absent, not an error */
    b = np_test_read_all(DATA "v0.0.38-job-unknown.json", &n);
    ck_assert_int_eq(np_rest_parse_jobs(500, b, n, ids + 3, 1, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    free(b);
    /* other errors beside 2017 are errors */
    const char *mixed = "{\"jobs\":[],\"errors\":[{\"error_number\":2017},{\"error\":\"boom\",\"error_number\":1}]}";
    ck_assert_int_eq(np_rest_parse_jobs(500, mixed, strlen(mixed), ids, 1, &l, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "boom (code 1)"), "%s", err.text);
}
END_TEST

START_TEST(test_tagged_jobs)
{
    /* issue 13: the job carrying a launch's tag as its comment; a string up to v0.0.40, an
     * object {"job": ...} from v0.0.41 (Slurm's OpenAPI job "comment") */
    struct np_error err;
    struct np_job_list l;
    const char *t = "{\"jobs\":[{\"job_id\":7,\"name\":\"a\",\"job_state\":\"PENDING\",\"comment\":\"nemoperf-x\"},"
                    "{\"job_id\":8,\"name\":\"a\",\"job_state\":\"RUNNING\",\"comment\":\"nemoperf-y\"},"
                    "{\"job_id\":9,\"name\":\"b\",\"job_state\":\"RUNNING\",\"comment\":\"nemoperf-x\"},"
                    "{\"job_id\":10,\"name\":\"a\",\"job_state\":[\"COMPLETED\"],"
                    "\"comment\":{\"job\":\"nemoperf-x\",\"administrator\":\"\"}},"
                    "{\"job_id\":11,\"name\":\"a\",\"job_state\":\"RUNNING\"}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_tagged(200, t, strlen(t), "nemoperf-x", "a", &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 3); /* 9 has another name (SBATCH_JOB_NAME), the same tag: kept (issue 23) */
    ck_assert_str_eq(l.jobs[0].job_id, "7");
    ck_assert_str_eq(l.jobs[1].job_id, "9");
    ck_assert_str_eq(l.jobs[2].job_id, "10");
    ck_assert_str_eq(l.jobs[2].state, "COMPLETED");
    np_job_list_free(&l);
    ck_assert_int_eq(np_rest_parse_tagged(200, t, strlen(t), "nemoperf-z", "a", &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_int_eq(np_rest_parse_tagged(200, "{}", 2, "nemoperf-x", "a", &l, &err), NP_E_PARSE);
    ck_assert_int_eq(np_rest_parse_tagged(500, "x", 1, "nemoperf-x", "a", &l, &err), NP_E_SLURM);
}
END_TEST

START_TEST(test_malformed_jobs)
{
    char *ids[] = {(char *)"7", (char *)"8"};
    struct np_error err;
    struct np_job_list l;
    /* newer versions: job_state is a list of flags */
    const char *arr = "{\"jobs\":[{\"job_id\":7,\"job_state\":[\"PENDING\",\"REQUEUED\"],\"state_reason\":\"BeginTime\"},"
                      "{\"job_id\":\"8\",\"job_state\":\"RUNNING\",\"state_reason\":\"None\"}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_jobs(200, arr, strlen(arr), ids, 2, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.jobs[0].state, "PENDING,REQUEUED");
    ck_assert_str_eq(l.jobs[0].reason, "BeginTime");
    ck_assert_str_eq(l.jobs[1].state, "RUNNING");
    ck_assert_ptr_null(l.jobs[1].reason);
    np_job_list_free(&l);
    /* unexpected types: a state that is not text is reported as "?", bad ids and entries are skipped */
    const char *odd = "{\"jobs\":[{\"job_id\":7,\"job_state\":5},{\"job_id\":\"x\"},3,null,{\"job_state\":\"RUNNING\"},"
                      "{\"job_id\":8,\"job_state\":[1,{}]}]}";
    ck_assert_int_eq(np_rest_parse_jobs(200, odd, strlen(odd), ids, 2, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.jobs[0].state, "?");
    ck_assert_str_eq(l.jobs[1].state, "?");
    np_job_list_free(&l);
    static const char *const bad[] = {"{\"jobs\":{}}", "{\"jobs\":\"none\"}", "{}", "{\"jobs\":[", "[]", NULL};
    for (size_t i = 0; bad[i]; i++) {
        ck_assert_int_eq(np_rest_parse_jobs(200, bad[i], strlen(bad[i]), ids, 2, &l, &err), NP_E_PARSE);
        ck_assert_uint_eq(l.n, 0);
        ck_assert(err.text[0]);
    }
}
END_TEST

/* ---- the backend without a server ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static enum np_status submit_to(const char *url, const char *token, int retries, struct np_submit_result *res,
                                struct np_error *err)
{
    static const char *const extra[] = {"JOB_TOTAL_GPUS=8", NULL};
    struct np_launch_plan plan;
    resolve(extra, &plan);
    struct np_slurm_rest_opts o = {.url = url, .token = token, .user = "alice", .connect_retries = retries,
                                   .timeout_s = 5, .env = np_env_list, .env_ctx = (void *)submit_env};
    struct np_backend be;
    ck_assert_int_eq(np_slurm_rest_backend(&be, &o, err), NP_OK);
    ck_assert_str_eq(be.name, "rest");
    ck_assert_ptr_nonnull(be.query);
    ck_assert_ptr_null(np_slurm_rest_api(&be));
    struct np_submit_request req = {.script_path = "x", .script_text = "#!/bin/bash\n", .workdir = stage,
                                    .job_name = "j", .config = &plan.jobs[0], .tag = "np-tag-check"};
    enum np_status st = be.submit(&be, &req, res, err);
    if (st == NP_E_INVALID) /* no version found */
        ck_assert_ptr_null(np_slurm_rest_api(&be));
    np_backend_free(&be);
    np_launch_plan_free(&plan);
    return st;
}

START_TEST(test_no_server)
{
    struct np_submit_result res;
    struct np_error err;
    char sock[600];
    snprintf(sock, sizeof sock, "unix:%s/missing.sock", stage);
    ck_assert_int_eq(submit_to(sock, "SECRET-TOKEN-123", -1, &res, &err), NP_E_HTTP);
    ck_assert_msg(strstr(err.text, "missing.sock does not exist"), "%s", err.text);
    ck_assert_ptr_nonnull(res.message);
    ck_assert_ptr_null(res.job_id);
    ck_assert_ptr_null(strstr(err.text, "SECRET"));
    ck_assert_ptr_null(strstr(res.message, "SECRET"));
    np_submit_result_free(&res);

    /* a socket file nobody listens on: refused, retried with bounded backoff (0.25 + 0.5 s) */
    char path[64]; /* fits sun_path */
    snprintf(path, sizeof path, "%s/dead.sock", stage);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    close(fd);
    snprintf(sock, sizeof sock, "unix:%s", path);
    double t0 = now_s();
    ck_assert_int_eq(submit_to(sock, NULL, 2, &res, &err), NP_E_HTTP);
    double took = now_s() - t0;
    ck_assert_msg(took >= 0.7 && took < 5, "two retries took %.2f s", took);
    np_submit_result_free(&res);
    /* retries unset (0): the default 3 (0.25 + 0.5 + 1 s), not none */
    t0 = now_s();
    ck_assert_int_eq(submit_to(sock, NULL, 0, &res, &err), NP_E_HTTP);
    took = now_s() - t0;
    ck_assert_msg(took >= 1.7 && took < 8, "the default retries took %.2f s", took);
    ck_assert_msg(strstr(err.text, "cannot connect to slurmrestd") && strstr(err.text, "is slurmrestd running?"),
                  "%s", err.text);
    np_submit_result_free(&res);
}
END_TEST

/* A peer that accepts connections and closes them at once, counting them in a pipe. */
START_TEST(test_never_resent)
{
    char path[64]; /* fits sun_path */
    snprintf(path, sizeof path, "%s/closer.sock", stage);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(fd, 8), 0);
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c < 0)
                _exit(0);
            char buf[4096];
            (void)!read(c, buf, sizeof buf); /* the request arrived ... */
            (void)!write(pfd[1], "x", 1);    /* counted before the close: the parent may kill us once it sees it */
            close(c);                        /* ... and the connection drops without an answer */
        }
    }
    close(fd);
    close(pfd[1]);
    char sock[80];
    snprintf(sock, sizeof sock, "unix:%s", path);
    struct np_submit_result res;
    struct np_error err;
    ck_assert_int_eq(submit_to(sock, "SECRET-TOKEN-123", 3, &res, &err), NP_E_HTTP);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    char buf[16];
    ssize_t got = read(pfd[0], buf, sizeof buf);
    close(pfd[0]);
    ck_assert_int_eq(got, 1); /* one connection: not retried after the request may have been sent */
    ck_assert_msg(strstr(err.text, "GET /slurm/v0.0.45/ping"), "%s", err.text);
    ck_assert_ptr_null(strstr(err.text, "SECRET"));
    np_submit_result_free(&res);
}
END_TEST

/* ---- a scripted server (fault injection: replies real slurmrestd does not give on demand) ---- */

static const char *canned_token; /* SLURM_JWT of canned_run's requests, user alice (NULL: none) */
static const char *canned_find;  /* canned_run without a submission or ids: find() this tag */

struct canned {
    const char *request; /* "GET /slurm/v0.0.45/ping" */
    int status;
    const char *body;
};

/* Serve each connection's requests from the table (404 otherwise); every request line
 * is written to the pipe fd log, one per line. */
static void canned_serve(int lfd, const struct canned *c, int log)
{
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            _exit(0);
        /* a process per connection: the submission comes on a connection of its own while the
         * ping's stays open (issue 23); it ends when the client closes */
        pid_t child = fork();
        if (child != 0) {
            close(fd);
            continue;
        }
        close(lfd);
        char buf[65536];
        size_t got = 0;
        for (;;) { /* requests on this connection */
            char *end;
            while (!(end = memmem(buf, got, "\r\n\r\n", 4))) {
                ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
                if (r <= 0)
                    goto next;
                got += (size_t)r;
            }
            buf[got] = '\0';
            size_t head = (size_t)(end + 4 - buf), clen = 0;
            char *cl = strcasestr(buf, "Content-Length:");
            if (cl && cl < end)
                clen = strtoul(cl + 15, NULL, 10);
            while (got < head + clen) {
                ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
                if (r <= 0)
                    goto next;
                got += (size_t)r;
            }
            char line[256];
            snprintf(line, sizeof line, "%.*s", (int)strcspn(buf, "\r"), buf);
            char *sp = strrchr(line, ' '); /* drop " HTTP/1.1" */
            if (sp)
                *sp = '\0';
            (void)!write(log, line, strlen(line));
            (void)!write(log, "\n", 1);
            /* the job's comment in a submission's body: the tag the query by tag looks for (reconcile) */
            const char *cm = strstr(buf + head, "\"comment\":\"");
            if (cm) {
                char ct[128];
                snprintf(ct, sizeof ct, "comment %.*s\n", (int)strcspn(cm + 11, "\""), cm + 11);
                (void)!write(log, ct, strlen(ct));
            }
            int status = 404;
            const char *body = "not found";
            for (size_t i = 0; c[i].request; i++)
                if (strcmp(c[i].request, line) == 0) {
                    status = c[i].status;
                    body = c[i].body;
                }
            if (status == 0) /* the server acted, its reply is lost: hang up */
                goto next;
            char out[256];
            size_t blen = strlen(body);
            int n = snprintf(out, sizeof out, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                             "Content-Length: %zu\r\n\r\n", status, blen);
            (void)!write(fd, out, (size_t)n);
            for (size_t off = 0; off < blen;) { /* a body of any size (the 64 MiB limit's cases) */
                ssize_t w = write(fd, body + off, blen - off);
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
            memmove(buf, buf + head + clen, got - head - clen);
            got -= head + clen;
        }
    next:
        close(fd);
        _exit(0);
    }
}

/* Against a canned server: submit one job (res) or, with ids, ask for their states
 * (out); the requests it saw in log (caller frees). */
static enum np_status canned_run(const struct canned *c, struct np_submit_result *res, char *const *ids, size_t n,
                                 struct np_job_list *out, struct np_error *err, char **log)
{
    char path[64];
    snprintf(path, sizeof path, "%s/canned.sock", stage);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(lfd, 8), 0);
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        canned_serve(lfd, c, pfd[1]);
    }
    close(lfd);
    close(pfd[1]);
    char url[80];
    snprintf(url, sizeof url, "unix:%s", path);
    enum np_status st;
    if (res) {
        st = submit_to(url, canned_token, -1, res, err);
    } else {
        struct np_slurm_rest_opts o = {
            .url = url, .token = canned_token, .user = "alice", .connect_retries = -1, .timeout_s = 5};
        struct np_backend be;
        ck_assert_int_eq(np_slurm_rest_backend(&be, &o, err), NP_OK);
        st = canned_find ? be.find(&be, canned_find, "j", out, err) : be.query(&be, ids, n, out, err);
        np_backend_free(&be);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    char *b = calloc(1, 4096);
    ck_assert(b);
    ck_assert_int_ge(read(pfd[0], b, 4095), 0);
    close(pfd[0]);
    unlink(path);
    *log = b;
    return st;
}

/* A setting the server ignored (only a warning, as v0.0.42+ does with "exclusive"): an
 * error, the job (which exists) cancelled, its id kept. */
/* A 5xx to the submission, with or without a token, came after the request was sent: the outcome is unknown (the
 * query by tag settles it), never a refusal; only 401/403 is one.  The tree before took any 5xx with a token for
 * an authentication refusal ("marked not submitted"), so a job slurmrestd had accepted was recorded nowhere. */
START_TEST(test_server_error_unknown)
{
    static const int codes[] = {500, 502, 503, 504, 401, 403};
    for (int tok = 0; tok < 2; tok++)
        for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
            struct canned c[] = {
                {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"responding\":true}],\"errors\":[]}"},
                {"POST /slurm/v0.0.45/job/submit", codes[i], "<html>bad gateway</html>"},
                {NULL, 0, NULL}};
            struct np_submit_result res;
            struct np_error err;
            char *log = NULL;
            canned_token = tok ? "eyJhbGciOi.token" : NULL;
            ck_assert_int_eq(canned_run(c, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
            canned_token = NULL;
            int refused = codes[i] == 401 || codes[i] == 403;
            ck_assert_msg(res.outcome == (refused ? NP_SUBMIT_REFUSED : NP_SUBMIT_UNKNOWN), "HTTP %d, token %d: outcome %d",
                          codes[i], tok, (int)res.outcome);
            ck_assert_msg(refused || strstr(err.text, "may or may not have been submitted"), "HTTP %d: %s", codes[i],
                          err.text);
            ck_assert_msg(!refused || strstr(err.text, codes[i] == 401 ? "Unauthorized" : "Forbidden"), "HTTP %d: %s",
                          codes[i], err.text); /* said as the authentication refusal it is */
            np_submit_result_free(&res);
            free(log);
        }
}
END_TEST

/* Replies that are not slurmrestd's (a proxy's page, a cut body): a ping that cannot be read is a parse error
 * (exit 2: the URL is not slurmrestd's), a ping saying no slurmctld is UP a Slurm error (exit 1); a submission
 * answered 200 with a body that cannot be read may have queued the job: unknown, a Slurm error, said so. */
START_TEST(test_garbled_replies)
{
    static const struct canned page[] = {{"GET /slurm/v0.0.45/ping", 200, "<html>maintenance</html>"},
                                         {NULL, 0, NULL}};
    static const struct canned down[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"pinged\":\"DOWN\",\"responding\":false}],"
                                        "\"errors\":[]}"},
        {NULL, 0, NULL}};
    static const struct canned cut[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"responding\":true}],\"errors\":[]}"},
        {"POST /slurm/v0.0.45/job/submit", 200, "{\"job_id\":7"},
        {NULL, 0, NULL}};
    struct np_submit_result res;
    struct np_error err;
    char *log = NULL;
    ck_assert_int_eq(canned_run(page, &res, NULL, 0, NULL, &err, &log), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "GET /slurm/v0.0.45/ping"), "%s", err.text);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED); /* nothing was sent */
    np_submit_result_free(&res);
    free(log);
    ck_assert_int_eq(canned_run(down, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "no slurmctld is UP"), "%s", err.text);
    np_submit_result_free(&res);
    free(log);
    ck_assert_int_eq(canned_run(cut, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    ck_assert_msg(strstr(err.text, "may or may not have been submitted"), "%s", err.text);
    np_submit_result_free(&res);
    free(log);
}
END_TEST

/* A reply is read up to 64 MiB (a user's whole job list on a busy cluster), one byte more is refused, never cut and
 * read as the whole: a ping padded with white space to exactly the limit, then to one byte over. */
START_TEST(test_reply_limit)
{
    static const char ping[] = "{\"pings\":[{\"hostname\":\"h\",\"responding\":true}],\"errors\":[]}";
    const size_t limit = 64UL * 1024 * 1024;
    char *big = malloc(limit + 2);
    ck_assert_ptr_nonnull(big);
    for (int over = 0; over < 2; over++) {
        memcpy(big, ping, sizeof ping - 1);
        memset(big + sizeof ping - 1, ' ', limit + (size_t)over - (sizeof ping - 1));
        big[limit + (size_t)over] = '\0';
        struct canned c[] = {{"GET /slurm/v0.0.45/ping", 200, big},
                             {"POST /slurm/v0.0.45/job/submit", 200, "{\"job_id\":71,\"errors\":[],\"warnings\":[]}"},
                             {NULL, 0, NULL}};
        struct np_submit_result res;
        struct np_error err;
        char *log = NULL;
        enum np_status st = canned_run(c, &res, NULL, 0, NULL, &err, &log);
        if (!over) {
            ck_assert_msg(st == NP_OK, "a reply of exactly 64 MiB: %s", err.text);
            ck_assert_str_eq(res.job_id, "71");
        } else {
            ck_assert_int_eq(st, NP_E_HTTP);
            ck_assert_msg(strstr(err.text, "GET /slurm/v0.0.45/ping: the reply is larger than 64 MiB: not read"), "%s",
                          err.text);
            ck_assert_ptr_null(res.job_id);
            ck_assert_msg(!strstr(log, "POST"), "submitted after a reply it could not read: %s", log);
        }
        np_submit_result_free(&res);
        free(log);
    }
    free(big);
}
END_TEST

START_TEST(test_dropped_setting)
{
    static const struct canned c[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"responding\":true}],\"errors\":[]}"},
        {"POST /slurm/v0.0.45/job/submit", 200,
         "{\"job_id\":77,\"errors\":[],\"warnings\":[{\"description\":\"Ignoring unknown field \\\"shared\\\" of "
         "type list in DATA_PARSER_JOB_DESC_MSG\",\"source\":\"#/job/shared/\"}]}"},
        {"DELETE /slurm/v0.0.45/job/77", 200, "{\"status\":[],\"errors\":[],\"warnings\":[]}"},
        {NULL, 0, NULL}};
    struct np_submit_result res;
    struct np_error err;
    char *log = NULL;
    ck_assert_int_eq(canned_run(c, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(res.job_id, "77");
    ck_assert_msg(strstr(err.text, "accepted job 77 but ignored job/shared") && strstr(err.text, "the job was cancelled"),
                  "%s", err.text);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED); /* cancelled: recorded as what it is, not "accepted" */
    ck_assert_ptr_nonnull(res.message);
    ck_assert_msg(strstr(log, "POST /slurm/v0.0.45/job/submit\ncomment np-tag-check\nDELETE /slurm/v0.0.45/job/77\n"),
                  "%s", log); /* the tag as the job's comment: what rest_find and reconcile look for */
    np_submit_result_free(&res);
    free(log);
    /* the cancel refused: the job runs, so it is accepted (its id recorded) */
    static const struct canned k[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"responding\":true}],\"errors\":[]}"},
        {"POST /slurm/v0.0.45/job/submit", 200,
         "{\"job_id\":79,\"errors\":[],\"warnings\":[{\"description\":\"Ignoring unknown field \\\"shared\\\" of "
         "type list in DATA_PARSER_JOB_DESC_MSG\",\"source\":\"#/job/shared/\"}]}"},
        {"DELETE /slurm/v0.0.45/job/79", 500, "{\"errors\":[{\"error\":\"no\"}]}"},
        {NULL, 0, NULL}};
    ck_assert_int_eq(canned_run(k, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(res.job_id, "79");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_ACCEPTED);
    ck_assert_msg(strstr(err.text, "could not be cancelled"), "%s", err.text);
    np_submit_result_free(&res);
    free(log);
    /* the cancel answered by an HTTP error whose body lists no error (a proxy's 403, an empty errors[]): not
     * cancelled either, the job runs */
    static const struct canned q[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"responding\":true}],\"errors\":[]}"},
        {"POST /slurm/v0.0.45/job/submit", 200,
         "{\"job_id\":80,\"errors\":[],\"warnings\":[{\"description\":\"Ignoring unknown field \\\"shared\\\" of "
         "type list in DATA_PARSER_JOB_DESC_MSG\",\"source\":\"#/job/shared/\"}]}"},
        {"DELETE /slurm/v0.0.45/job/80", 403, "{\"errors\":[],\"warnings\":[]}"},
        {NULL, 0, NULL}};
    ck_assert_int_eq(canned_run(q, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(res.job_id, "80");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_ACCEPTED);
    ck_assert_msg(strstr(err.text, "could not be cancelled"), "%s", err.text);
    np_submit_result_free(&res);
    free(log);
    /* a warning that is not a dropped setting: the job is simply submitted */
    static const struct canned w[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"POST /slurm/v0.0.45/job/submit", 200,
         "{\"job_id\":78,\"errors\":[],\"warnings\":[{\"description\":\"something to know\"}]}"},
        {NULL, 0, NULL}};
    ck_assert_int_eq(canned_run(w, &res, NULL, 0, NULL, &err, &log), NP_OK);
    ck_assert_str_eq(res.job_id, "78");
    ck_assert_ptr_null(strstr(log, "DELETE"));
    np_submit_result_free(&res);
    free(log);
}
END_TEST

/* Issue 23: the reply to a submission is lost (the connection closes after the server took
 * it).  libcurl re-sends a request when a reused connection dies before any reply byte; the
 * submission must go once only (its own connection), its outcome unknown. */
START_TEST(test_lost_reply_not_resent)
{
    static const struct canned c[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"responding\":true}],\"errors\":[]}"},
        {"POST /slurm/v0.0.45/job/submit", 0, ""},
        {NULL, 0, NULL}};
    struct np_submit_result res;
    struct np_error err;
    char *log = NULL;
    ck_assert_int_eq(canned_run(c, &res, NULL, 0, NULL, &err, &log), NP_E_HTTP);
    ck_assert_str_eq(log, "GET /slurm/v0.0.45/ping\nPOST /slurm/v0.0.45/job/submit\ncomment np-tag-check\n");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    ck_assert_ptr_null(res.job_id);
    ck_assert_msg(strstr(err.text, "may or may not have been submitted"), "%s", err.text);
    np_submit_result_free(&res);
    free(log);
}
END_TEST

/* --wait asks only for its own jobs: jobs/state with the repeated job_id parameter
 * (v0.0.42+), job/{id} per job before; never GET jobs (the whole queue). */
START_TEST(test_query_own_jobs)
{
    static const struct canned c45[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"GET /slurm/v0.0.45/jobs/state?job_id=5&job_id=6", 200,
         "{\"jobs\":[{\"job_id\":\"5\",\"state\":[\"RUNNING\"]},{\"job_id\":\"6\",\"state\":[\"PENDING\"]}],"
         "\"errors\":[]}"},
        {NULL, 0, NULL}};
    static const struct canned c41[] = {
        {"GET /slurm/v0.0.41/ping", 200, "{\"pings\":[{\"pinged\":\"UP\"}]}"},
        {"GET /slurm/v0.0.41/job/5", 200, "{\"jobs\":[{\"job_id\":5,\"job_state\":[\"COMPLETED\"]}]}"},
        {"GET /slurm/v0.0.41/job/6", 404,
         "{\"jobs\":[],\"errors\":[{\"error_number\":2017,\"error\":\"Invalid job id specified\"}]}"},
        {NULL, 0, NULL}};
    char *ids[] = {(char *)"5", (char *)"6"};
    struct np_job_list l;
    struct np_error err;
    char *log = NULL;
    ck_assert_int_eq(canned_run(c45, NULL, ids, 2, &l, &err, &log), NP_OK);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.jobs[1].state, "PENDING");
    ck_assert_str_eq(log, "GET /slurm/v0.0.45/ping\nGET /slurm/v0.0.45/jobs/state?job_id=5&job_id=6\n");
    np_job_list_free(&l);
    free(log);
    ck_assert_int_eq(canned_run(c41, NULL, ids, 2, &l, &err, &log), NP_OK);
    ck_assert_uint_eq(l.n, 1); /* 6 is unknown: absent */
    ck_assert_str_eq(l.jobs[0].state, "COMPLETED");
    ck_assert_msg(strstr(log, "GET /slurm/v0.0.41/job/5\nGET /slurm/v0.0.41/job/6\n") && !strstr(log, "/jobs"), "%s",
                  log);
    np_job_list_free(&l);
    free(log);
    char *bad[] = {(char *)"5&x=1"};
    ck_assert_int_eq(canned_run(c45, NULL, bad, 1, &l, &err, &log), NP_E_INVALID);
    ck_assert_ptr_null(strstr(log, "jobs/state"));
    free(log);
}
END_TEST

/* No known version served: the message names what is served and how to enable one. */
START_TEST(test_unknown_versions)
{
    static const struct canned c[] = {
        {"GET /openapi/v3", 200, "{\"paths\":{\"/slurm/v0.0.47/ping\":{},\"/slurm/v0.0.46/ping\":{}}}"},
        {NULL, 0, NULL}};
    struct np_submit_result res;
    struct np_error err;
    char *log = NULL;
    ck_assert_int_eq(canned_run(c, &res, NULL, 0, NULL, &err, &log), NP_E_INVALID); /* definite: bad input, refused before any folder (issue 23) */
    ck_assert_msg(strstr(err.text, "v0.0.45, v0.0.44, v0.0.43, v0.0.42, v0.0.41, v0.0.40, v0.0.39, v0.0.38 all "
                                   "answered 404); it serves v0.0.47, v0.0.46;") &&
                      strstr(err.text, "-d data_parser/v0.0.45"),
                  "%s", err.text);
    ck_assert_ptr_null(res.job_id);
    ck_assert_ptr_null(strstr(log, "POST"));
    np_submit_result_free(&res);
    free(log);
}
END_TEST

START_TEST(test_backend_refusals)
{
    struct np_backend be;
    struct np_error err;
    struct np_slurm_rest_opts o = {.url = "ftp://x"};
    ck_assert_int_eq(np_slurm_rest_backend(&be, &o, &err), NP_E_INVALID);
    o = (struct np_slurm_rest_opts){.url = "http://h:1", .token = "a b"};
    ck_assert_int_eq(np_slurm_rest_backend(&be, &o, &err), NP_E_INVALID);
    ck_assert_str_eq(err.source, "SLURM_JWT");
    ck_assert_ptr_null(strstr(err.text, "a b"));
    o = (struct np_slurm_rest_opts){.url = "http://u:pw@h:6820/", .token = "tok"};
    ck_assert_int_eq(np_slurm_rest_backend(&be, &o, &err), NP_OK);
    ck_assert_str_eq(np_slurm_rest_url(&be), "http://h:6820");
    long rq = -1, cn = -1;
    np_slurm_rest_stats(&be, &rq, &cn);
    ck_assert_int_eq(rq, 0);
    ck_assert_int_eq(cn, 0);
    struct np_job_list l;
    ck_assert_int_eq(be.query(&be, NULL, 0, &l, &err), NP_OK); /* nothing asked: nothing sent */
    np_backend_free(&be);
    np_backend_free(&be); /* twice is harmless */
}
END_TEST

/* find() over REST, as reconcile asks it: GET jobs once after the ping, kept the jobs whose comment is the tag (a
 * string up to v0.0.40, {"job": ...} after); a reply it cannot read, or a refusal, is an error naming the request,
 * never "no such job" (reconcile would record a queued job as not submitted). */
START_TEST(test_find_by_tag)
{
    static const struct canned c45[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"GET /slurm/v0.0.45/jobs", 200,
         "{\"jobs\":[{\"job_id\":7,\"job_state\":[\"PENDING\"],\"comment\":{\"job\":\"nemoperf-x\"}},"
         "{\"job_id\":8,\"job_state\":[\"RUNNING\"],\"comment\":{\"job\":\"nemoperf-xy\"}},"
         "{\"job_id\":9,\"job_state\":[\"RUNNING\"],\"comment\":{\"job\":\"nemoperf-x\"}}],\"errors\":[]}"},
        {NULL, 0, NULL}};
    struct np_job_list l;
    struct np_error err;
    char *log = NULL;
    canned_find = "nemoperf-x";
    ck_assert_int_eq(canned_run(c45, NULL, NULL, 0, &l, &err, &log), NP_OK);
    ck_assert_str_eq(log, "GET /slurm/v0.0.45/ping\nGET /slurm/v0.0.45/jobs\n");
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.jobs[0].job_id, "7");
    ck_assert_str_eq(l.jobs[0].state, "PENDING");
    ck_assert_str_eq(l.jobs[1].job_id, "9");
    np_job_list_free(&l);
    free(log);
    canned_find = "nemoperf-none";
    ck_assert_int_eq(canned_run(c45, NULL, NULL, 0, &l, &err, &log), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    free(log);
    static const struct canned down[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"GET /slurm/v0.0.45/jobs", 500,
         "{\"jobs\":[],\"errors\":[{\"error_number\":1007,\"error\":\"Unable to contact slurm controller\"}]}"},
        {NULL, 0, NULL}};
    canned_find = "nemoperf-x";
    ck_assert_int_eq(canned_run(down, NULL, NULL, 0, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text, "GET /slurm/v0.0.45/jobs: HTTP 500: Unable to contact slurm controller (code 1007)");
    ck_assert_uint_eq(l.n, 0);
    free(log);
    static const struct canned no[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"GET /slurm/v0.0.45/jobs", 401, "{\"errors\":[{\"error\":\"Authentication failure\"}]}"},
        {NULL, 0, NULL}};
    ck_assert_int_eq(canned_run(no, NULL, NULL, 0, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/jobs: authentication failed (HTTP 401 Unauthorized: Authentication failure); "
                     "with rest_auth/local run as the user slurmrestd runs as, or set SLURM_JWT and SLURM_USER");
    free(log);
    /* with a token, a 5xx saying the token was not taken is the authentication failure it is */
    static const struct canned stale[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"GET /slurm/v0.0.45/jobs", 500,
         "{\"jobs\":[],\"errors\":[{\"error_number\":5005,\"error\":\"Zero Bytes were transmitted or received\"}]}"},
        {NULL, 0, NULL}};
    canned_token = "eyJhbGciOi.token";
    ck_assert_int_eq(canned_run(stale, NULL, NULL, 0, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/jobs: authentication failed: the controller rejected the request made with SL"
                     "URM_JWT for user alice (HTTP 500: Zero Bytes were transmitted or received (code 5005)); the toke"
                     "n is probably expired, signed with another key or issued for another user (get one with `scontro"
                     "l token`)");
    free(log);
    ck_assert_int_eq(canned_run(down, NULL, NULL, 0, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text, "GET /slurm/v0.0.45/jobs: HTTP 500: Unable to contact slurm controller (code 1007)");
    free(log);
    canned_find = NULL;
    /* query() the same: 403, and a token's 5xx */
    char *ids[] = {(char *)"5"};
    static const struct canned q[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"GET /slurm/v0.0.45/jobs/state?job_id=5", 403, "{\"errors\":[{\"error\":\"Forbidden\"}]}"},
        {NULL, 0, NULL}};
    ck_assert_int_eq(canned_run(q, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/jobs/state?job_id=5: authentication failed (HTTP 403 Forbidden: Forbidden); S"
                     "LURM_JWT or SLURM_USER was not accepted (get a token with `scontrol token`)");
    free(log);
    canned_token = NULL;
    ck_assert_int_eq(canned_run(q, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/jobs/state?job_id=5: authentication failed (HTTP 403 Forbidden: Forbidden); w"
                     "ith rest_auth/local run as the user slurmrestd runs as, or set SLURM_JWT and SLURM_USER");
    free(log);
    static const struct canned q5[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}]}"},
        {"GET /slurm/v0.0.45/jobs/state?job_id=5", 502, "<html>bad gateway</html>"},
        {NULL, 0, NULL}};
    ck_assert_int_eq(canned_run(q5, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text, "GET /slurm/v0.0.45/jobs/state?job_id=5: HTTP 502: <html>bad gateway</html>");
    free(log);
}
END_TEST

/* The ping refused: what to do about it depends on how the request was made (a token; a local socket; TCP without
 * one), and a token whose ping answers "DOWN" may be the token's fault: said so, naming the user */
START_TEST(test_ping_refused)
{
    static const struct canned p401[] = {{"GET /slurm/v0.0.45/ping", 401, "{\"errors\":[]}"}, {NULL, 0, NULL}};
    static const struct canned p500[] = {{"GET /slurm/v0.0.45/ping", 500, "{\"errors\":[{\"error\":\"unable to load "
                                                                         "the token\"}]}"},
                                         {NULL, 0, NULL}};
    static const struct canned pdown[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"hostname\":\"h\",\"pinged\":\"DOWN\",\"responding\":false}],"
                                        "\"errors\":[]}"},
        {NULL, 0, NULL}};
    char *ids[] = {(char *)"5"};
    struct np_job_list l;
    struct np_error err;
    char *log = NULL;
    ck_assert_int_eq(canned_run(p401, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/ping: authentication failed (HTTP 401 Unauthorized: (no error text in the rep"
                     "ly)); with rest_auth/local run as the user slurmrestd runs as, or set SLURM_JWT and SLURM_USER");
    free(log);
    canned_token = "eyJhbGciOi.token";
    ck_assert_int_eq(canned_run(p401, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/ping: authentication failed (HTTP 401 Unauthorized: (no error text in the rep"
                     "ly)); SLURM_JWT or SLURM_USER was not accepted (get a token with `scontrol token`)");
    free(log);
    ck_assert_int_eq(canned_run(p500, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/ping: authentication failed: the controller rejected the request made with SL"
                     "URM_JWT for user alice (HTTP 500: unable to load the token); the token is probably expired, sign"
                     "ed with another key or issued for another user (get one with `scontrol token`)");
    free(log);
    ck_assert_int_eq(canned_run(pdown, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "GET /slurm/v0.0.45/ping: slurmrestd answers, but no slurmctld is UP: slurmctld answered no ping "
                     "made with SLURM_JWT for user alice; either authentication failed (the token is expired, signed w"
                     "ith another key or issued for another user: get one with `scontrol token`) or slurmctld is down");
    free(log);
    /* a 5xx with a token whose only sign is its error number (5005) */
    static const struct canned p5005[] = {
        {"GET /slurm/v0.0.45/ping", 503, "{\"errors\":[{\"error_number\":5005,\"error\":\"Unexpected message\"}]}"},
        {NULL, 0, NULL}};
    ck_assert_int_eq(canned_run(p5005, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_ptr_nonnull(strstr(err.text, "GET /slurm/v0.0.45/ping: authentication failed: the controller rejected"));
    free(log);
    canned_token = NULL;
    /* no token: a DOWN ping is slurmctld down, nothing about a token */
    ck_assert_int_eq(canned_run(pdown, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text, "GET /slurm/v0.0.45/ping: slurmrestd answers, but no slurmctld is UP");
    free(log);
    ck_assert_int_eq(canned_run(p500, NULL, ids, 1, &l, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(err.text, "GET /slurm/v0.0.45/ping: HTTP 500: unable to load the token");
    free(log);
}
END_TEST

/* A submission's reply read field by field: the settings it says it dropped (each warning naming one: "Ignoring",
 * "ignored", "nknown field"; by its source without "#/" and trailing '/', or quoted when it has none), the id where
 * v0.0.39-v0.0.41 nest it, and what a reply without a usable id got instead */
START_TEST(test_submit_reply_fields)
{
    struct np_rest_submit_reply r;
    struct np_error err;
    const char *w = "{\"job_id\":\"91\",\"errors\":[],\"warnings\":["
                    "{\"description\":\"Field \\\"x\\\" ignored\",\"source\":\"#/job/x/\"},"
                    "{\"description\":\"Ignoring unknown field \\\"y\\\"\",\"source\":\"job/y\"},"
                    "{\"description\":\"Unknown field \\\"z\\\"\"},"
                    "{\"description\":\"something to know\",\"source\":\"#/job/w/\"},"
                    "{\"description\":\"Ignoring v\",\"source\":\"/\"},\"Ignoring a plain string\"]}";
    ck_assert_int_eq(np_rest_parse_submit(200, w, strlen(w), &r, &err), NP_OK);
    ck_assert_str_eq(r.job_id, "91");
    ck_assert_str_eq(r.dropped, "job/x, job/y, \"Unknown field \"z\"\", \"Ignoring v\", \"Ignoring a plain string\"");
    np_rest_submit_reply_free(&r);
    const char *nested = "{\"result\":{\"job_id\":90},\"errors\":[{\"error\":\"late\"}],\"warnings\":[]}";
    ck_assert_int_eq(np_rest_parse_submit(200, nested, strlen(nested), &r, &err), NP_OK);
    ck_assert_str_eq(r.job_id, "90");
    ck_assert_ptr_null(r.dropped);
    ck_assert_str_eq(r.notes, "errors: late");
    np_rest_submit_reply_free(&r);
    static const struct {
        const char *body, *got;
    } noid[] = {{"{\"errors\":[]}", "none"},
                {"{\"job_id\":\"abc\",\"errors\":[]}", "a non-numeric string"},
                {"{\"job_id\":0,\"errors\":[]}", "a number <= 0"},
                {"{\"job_id\":-3,\"errors\":[]}", "a number <= 0"},
                {"{\"job_id\":1.5,\"errors\":[]}", "another type"}};
    for (size_t i = 0; i < sizeof noid / sizeof *noid; i++) {
        ck_assert_int_eq(np_rest_parse_submit(200, noid[i].body, strlen(noid[i].body), &r, &err), NP_E_PARSE);
        char want[200];
        snprintf(want, sizeof want, "HTTP 200: the reply has no usable \"job_id\" (got %s)", noid[i].got);
        ck_assert_str_eq(err.text, want);
        ck_assert_ptr_null(r.job_id);
    }
}
END_TEST

/* Pings: up when any controller answers UP in the version's form; none up is a Slurm error saying why (v0.0.45's
 * "status"); no pings at all is not "none up"; an unknown form takes any of the forms, and an entry with none */
START_TEST(test_ping_forms)
{
    size_t n = 0;
    const struct np_rest_api *t = np_rest_apis(&n);
    const struct np_rest_api *v45 = &t[0], *v38 = &t[n - 1];
    struct np_error err;
    const char *one = "{\"pings\":[{\"responding\":false,\"status\":\"timed out\"},{\"responding\":true}],"
                      "\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, one, strlen(one), &err), NP_OK);
    const char *none = "{\"pings\":[{\"responding\":false},{\"responding\":false,\"status\":\"timed out\"},"
                       "{\"responding\":false,\"status\":\"refused\"}],\"errors\":[]}"; /* the first reason said */
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, none, strlen(none), &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "slurmrestd answers, but no slurmctld is UP: timed out");
    const char *empty = "{\"pings\":[],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, empty, strlen(empty), &err), NP_OK);
    const char *noarr = "{\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, noarr, strlen(noarr), &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "HTTP 200: no \"pings\" array in the reply");
    /* v0.0.38 reads "ping": "UP"; its words in another version's field do not count */
    const char *p38 = "{\"pings\":[{\"ping\":\"UP\"}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(v38, 200, p38, strlen(p38), &err), NP_OK);
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, p38, strlen(p38), &err), NP_E_SLURM);
    const char *d38 = "{\"pings\":[{\"ping\":\"DOWN\",\"responding\":true}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(v38, 200, d38, strlen(d38), &err), NP_E_SLURM);
    static const char *const upany[] = {"{\"pings\":[{\"ping\":\"UP\"}]}", "{\"pings\":[{\"pinged\":\"UP\"}]}",
                                        "{\"pings\":[{\"responding\":true}]}", "{\"pings\":[{\"hostname\":\"h\"}]}"};
    for (size_t i = 0; i < 4; i++)
        ck_assert_msg(np_rest_parse_ping(NULL, 200, upany[i], strlen(upany[i]), &err) == NP_OK, "%s: %s", upany[i],
                      err.text);
    static const char *const downany[] = {"{\"pings\":[{\"ping\":\"DOWN\"}]}", "{\"pings\":[{\"pinged\":\"DOWN\"}]}",
                                          "{\"pings\":[{\"responding\":false}]}"};
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(np_rest_parse_ping(NULL, 200, downany[i], strlen(downany[i]), &err) == NP_E_SLURM, "%s",
                      downany[i]);
}
END_TEST

/* A submission answered with a 4xx other than 401/403 (a bad request, too many requests) was refused: no job, not
 * "may or may not"; a dropped setting whose cancel answers 200 but lists an error was not cancelled: the job runs */
START_TEST(test_submit_4xx_and_cancel_error)
{
    static const int codes[] = {400, 404, 429};
    for (size_t i = 0; i < 3; i++) {
        struct canned c[] = {
            {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}],\"errors\":[]}"},
            {"POST /slurm/v0.0.45/job/submit", codes[i],
             "{\"errors\":[{\"error\":\"Invalid partition name specified\",\"error_number\":2000}]}"},
            {NULL, 0, NULL}};
        struct np_submit_result res;
        struct np_error err;
        char *log = NULL;
        ck_assert_int_eq(canned_run(c, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
        ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED);
        char want[300];
        snprintf(want, sizeof want, "POST /slurm/v0.0.45/job/submit: slurmrestd refused the job: HTTP %d: Invalid "
                 "partition name specified (code 2000)", codes[i]);
        ck_assert_str_eq(err.text, want);
        ck_assert_str_eq(res.message, want);
        np_submit_result_free(&res);
        free(log);
    }
    static const struct canned k[] = {
        {"GET /slurm/v0.0.45/ping", 200, "{\"pings\":[{\"responding\":true}],\"errors\":[]}"},
        {"POST /slurm/v0.0.45/job/submit", 200,
         "{\"job_id\":81,\"errors\":[],\"warnings\":[{\"description\":\"Ignoring unknown field \\\"shared\\\"\","
         "\"source\":\"#/job/shared/\"}]}"},
        {"DELETE /slurm/v0.0.45/job/81", 200,
         "{\"errors\":[{\"error\":\"Job/step already completing or completed\"}]}"},
        {NULL, 0, NULL}};
    struct np_submit_result res;
    struct np_error err;
    char *log = NULL;
    ck_assert_int_eq(canned_run(k, &res, NULL, 0, NULL, &err, &log), NP_E_SLURM);
    ck_assert_str_eq(res.job_id, "81");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_ACCEPTED);
    ck_assert_str_eq(err.text, "slurmrestd (v0.0.45) accepted job 81 but ignored job/shared (Ignoring unknown field "
                               "\"shared\"); it could not be cancelled: cancel it with `scancel` before launching "
                               "again");
    ck_assert_str_eq(res.message, err.text);
    np_submit_result_free(&res);
    free(log);
}
END_TEST

/* slurmrestd's errors[]/warnings[] as one line, each entry as Slurm words it: a string; an object's description,
 * then its error (left out when empty, or "Unspecified error" beside a description), then its number (error_number,
 * else error_code; 0 and -1 are none); entries with none of them skipped; only such entries: said so, counted
 * (singular for one); no array or an empty one: nothing */
START_TEST(test_list_text_forms)
{
    static const struct {
        const char *body, *want;
    } cases[] = {
        {"{\"errors\":[\"plain\",{\"description\":\"d\",\"error\":\"e\",\"error_number\":7}]}", "plain; d: e (code 7)"},
        {"{\"errors\":[{\"description\":\"d\",\"error\":\"Unspecified error\",\"error_number\":-1}]}", "d"},
        {"{\"errors\":[{\"error\":\"Unspecified error\"}]}", "Unspecified error"},
        {"{\"errors\":[{\"description\":\"\",\"error\":\"e\",\"error_code\":9}]}", "e (code 9)"},
        {"{\"errors\":[{\"error\":\"\",\"error_number\":0,\"error_code\":12}]}", "the reply lists 1 error without a "
                                                                             "readable text"},
        {"{\"errors\":[{\"error_code\":12}]}", "(code 12)"},
        {"{\"errors\":[{},{\"error\":\"\"},{\"error_number\":-1}]}", "the reply lists 3 errors without a readable "
                                                                      "text"},
        {"{\"errors\":[{},\"x\"]}", "x"},
        {"{\"errors\":[{\"description\":\"d\",\"error_number\":3}]}", "d (code 3)"},
        {"{\"errors\":[{\"error\":\"e\",\"error_number\":-5}]}", "e (code -5)"},
        {"{\"errors\":[{\"error\":\"e\",\"error_number\":\"x\",\"error_code\":4}]}", "e (code 4)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *j = json_loads(cases[i].body, 0, NULL);
        ck_assert_ptr_nonnull(j);
        char *t = np_rest_errors_text(j);
        ck_assert_msg(t && strcmp(t, cases[i].want) == 0, "%s: [%s], want [%s]", cases[i].body, t ? t : "(null)",
                      cases[i].want);
        free(t);
        json_decref(j);
    }
    json_t *w = json_loads("{\"warnings\":[{}]}", 0, NULL);
    char *t = np_rest_list_text(w, "warnings");
    ck_assert_str_eq(t, "the reply lists 1 warning without a readable text");
    free(t);
    ck_assert_ptr_null(np_rest_errors_text(w));
    json_decref(w);
    json_t *e = json_loads("{\"errors\":[]}", 0, NULL);
    ck_assert_ptr_null(np_rest_errors_text(e));
    json_decref(e);
    ck_assert_ptr_null(np_rest_errors_text(NULL));
}
END_TEST

/* query() takes job ids only (digits, 1 to 20 of them): anything else refused before a request is made, naming it */
START_TEST(test_query_ids_checked)
{
    struct np_slurm_rest_opts o = {.url = "unix:/nonexistent/np-rest.sock", .connect_retries = -1, .timeout_s = 2};
    struct np_backend be;
    struct np_error err;
    ck_assert_int_eq(np_slurm_rest_backend(&be, &o, &err), NP_OK);
    static const char *const bad[] = {"", "12a", "-5", "123456789012345678901", " 5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *ids[] = {(char *)"7", (char *)bad[i]};
        struct np_job_list l;
        ck_assert_int_eq(be.query(&be, ids, 2, &l, &err), NP_E_INVALID);
        char want[80];
        snprintf(want, sizeof want, "%s: not a job id", bad[i]);
        ck_assert_str_eq(err.text, want);
        ck_assert_uint_eq(l.n, 0);
    }
    long rq = -1, cn = -1;
    np_slurm_rest_stats(&be, &rq, &cn);
    ck_assert_int_eq(rq, 0); /* nothing sent */
    char *ok[] = {(char *)"12345678901234567890"}; /* 20 digits: a job id; then no server to ask */
    struct np_job_list l;
    ck_assert_int_ne(be.query(&be, ok, 1, &l, &err), NP_E_INVALID);
    np_backend_free(&be);
}
END_TEST

/* "No such job" is said only when the reply says only that (no job, and no error but 2017, or a bare 404): a 404
 * naming another error, or one still listing the job, is an error (a query reading it as "ended" would let --wait
 * and reconcile give up on a job that runs); an empty reason is none; find() reads "job_state" only (jobs/state's
 * "state" is not GET jobs' field) */
START_TEST(test_unknown_job_only_when_said)
{
    char *ids[] = {(char *)"5"};
    struct np_job_list l;
    struct np_error err;
    const char *other =
        "{\"jobs\":[],\"errors\":[{\"error\":\"Unable to contact slurm controller\",\"error_number\":1007}]}";
    ck_assert_int_eq(np_rest_parse_jobs(404, other, strlen(other), ids, 1, &l, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "HTTP 404: Unable to contact slurm controller (code 1007)");
    const char *still = "{\"jobs\":[{\"job_id\":5,\"job_state\":[\"RUNNING\"]}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_jobs(404, still, strlen(still), ids, 1, &l, &err), NP_E_SLURM);
    const char *both = "{\"jobs\":[{\"job_id\":5,\"job_state\":[\"RUNNING\"]}],"
                       "\"errors\":[{\"error\":\"Invalid job id specified\",\"error_number\":2017}]}";
    ck_assert_int_eq(np_rest_parse_jobs(200, both, strlen(both), ids, 1, &l, &err), NP_E_SLURM);
    const char *bare = "{\"jobs\":[],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_jobs(404, bare, strlen(bare), ids, 1, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    const char *reason = "{\"jobs\":[{\"job_id\":5,\"job_state\":[\"PENDING\"],\"state_reason\":\"\"}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_jobs(200, reason, strlen(reason), ids, 1, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_ptr_null(l.jobs[0].reason);
    np_job_list_free(&l);
    const char *tagged = "{\"jobs\":[{\"job_id\":7,\"state\":[\"RUNNING\"],\"comment\":\"nemoperf-t\"}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_tagged(200, tagged, strlen(tagged), "nemoperf-t", "j", &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.jobs[0].state, "?");
    np_job_list_free(&l);
}
END_TEST

/* A reply that is not a JSON object, said with the start of the reply as one line: control bytes as one space,
 * at most 196 bytes then "..." (never cut silently); JSON that is not an object; an empty reply; a key twice (two
 * answers in one: refused); an HTTP error a Slurm error, a 2xx a parse error */
START_TEST(test_reply_not_an_object)
{
    size_t n = 0;
    const struct np_rest_api *v45 = &np_rest_apis(&n)[0];
    struct np_error err;
    const char *html = "<html>\r\n\tbad  gateway\x7f\n</html>\n";
    ck_assert_int_eq(np_rest_parse_ping(v45, 502, html, strlen(html), &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "HTTP 502: <html> bad  gateway </html>");
    char longb[301];
    memset(longb, 'a', 300);
    longb[300] = '\0';
    ck_assert_int_eq(np_rest_parse_ping(v45, 502, longb, 300, &err), NP_E_SLURM);
    char want[300];
    snprintf(want, sizeof want, "HTTP 502: %.196s...", longb);
    ck_assert_str_eq(err.text, want);
    ck_assert_int_eq(np_rest_parse_ping(v45, 502, longb, 195, &err), NP_E_SLURM);
    snprintf(want, sizeof want, "HTTP 502: %.195s", longb);
    ck_assert_str_eq(err.text, want);
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, "[1]", 3, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "HTTP 200: the reply is JSON but not an object: [1]");
    ck_assert_int_eq(np_rest_parse_ping(v45, 500, "[1]", 3, &err), NP_E_SLURM);
    ck_assert_int_eq(np_rest_parse_ping(v45, 500, "", 0, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "HTTP 500 with an empty reply");
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, "", 0, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "HTTP 200 with an empty reply");
    const char *twice = "{\"pings\":[{\"responding\":false}],\"pings\":[{\"responding\":true}]}";
    ck_assert_int_eq(np_rest_parse_ping(v45, 200, twice, strlen(twice), &err), NP_E_PARSE);
    ck_assert_msg(strncmp(err.text, "HTTP 200: the reply is not JSON (duplicate object key", 52) == 0, "%s", err.text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("slurm_rest");
    TCase *t = tcase_create("rest");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 30);
    tcase_add_test(t, test_api_table);
    tcase_add_test(t, test_url);
    tcase_add_test(t, test_time_minutes);
    tcase_add_test(t, test_body_v38);
    tcase_add_test(t, test_body_newer_and_minimal);
    tcase_add_test(t, test_sbatch_env_fields);
    tcase_add_test(t, test_sbatch_env_check);
    tcase_add_test(t, test_recorded_ping);
    tcase_add_test(t, test_recorded_submit);
    tcase_add_test(t, test_malformed_submit);
    tcase_add_test(t, test_recorded_jobs);
    tcase_add_test(t, test_malformed_jobs);
    tcase_add_test(t, test_tagged_jobs);
    tcase_add_test(t, test_recorded_versions);
    tcase_add_test(t, test_recorded_arrays);
    tcase_add_test(t, test_recorded_tagged);
    tcase_add_test(t, test_recorded_warnings);
    tcase_add_test(t, test_openapi_versions);
    tcase_add_test(t, test_no_server);
    tcase_add_test(t, test_never_resent);
    tcase_add_test(t, test_backend_refusals);
    tcase_add_test(t, test_dropped_setting);
    tcase_add_test(t, test_server_error_unknown);
    tcase_add_test(t, test_garbled_replies);
    tcase_add_test(t, test_reply_limit);
    tcase_add_test(t, test_lost_reply_not_resent);
    tcase_add_test(t, test_unknown_versions);
    tcase_add_test(t, test_query_own_jobs);
    tcase_add_test(t, test_find_by_tag);
    tcase_add_test(t, test_ping_refused);
    tcase_add_test(t, test_submit_reply_fields);
    tcase_add_test(t, test_ping_forms);
    tcase_add_test(t, test_submit_4xx_and_cancel_error);
    tcase_add_test(t, test_list_text_forms);
    tcase_add_test(t, test_query_ids_checked);
    tcase_add_test(t, test_unknown_job_only_when_said);
    tcase_add_test(t, test_reply_not_an_object);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
