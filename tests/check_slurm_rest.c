/* check_slurm_rest.c - the slurmrestd backend: version table, URL, job description, replies.
 *
 * Replies recorded from the local slurmrestd 22.05 (tests/data/rest/) plus malformed and
 * unexpected ones (clear error, no crash); the job description field by field for v0.0.38
 * and v0.0.40; connect failures on local sockets: nothing listening (retried) and a peer
 * closing after accepting (never retried: a request is not sent twice).
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

#include "nemoperf/config.h"
#include "nemoperf/script.h"
#include "nemoperf/sbatch_env.h"
#include "nemoperf/slurm_rest.h"

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

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    ck_assert(b);
    ck_assert_int_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* ---- table and URL ---- */

START_TEST(test_api_table)
{
    size_t n = 0;
    const struct np_rest_api *t = np_rest_apis(&n);
    ck_assert_uint_ge(n, 4);
    ck_assert_str_eq(t[0].version, "v0.0.41");
    ck_assert_str_eq(t[n - 1].version, "v0.0.38");
    for (size_t i = 1; i < n; i++) /* newest first */
        ck_assert_int_gt(strcmp(t[i - 1].version, t[i].version), 0);
    const struct np_rest_api *a = np_rest_api_find("v0.0.38");
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->tested, 1);
    ck_assert_str_eq(a->exclusive, "exclusive");
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
    ck_assert_str_eq(json_string_value(json_object_get(env, "HF_TOKEN")), "hf_secret_value");
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

/* ---- replies ---- */

START_TEST(test_recorded_ping)
{
    size_t n;
    struct np_error err;
    char *b = slurp(DATA "v0.0.38-ping.json", &n);
    ck_assert_int_eq(np_rest_parse_ping(200, b, n, &err), NP_OK);
    free(b);
    b = slurp(DATA "v0.0.41-ping-404.txt", &n);
    ck_assert_int_eq(np_rest_parse_ping(404, b, n, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "HTTP 404: Unable find requested URL"), "%s", err.text);
    free(b);
    b = slurp(DATA "v0.0.38-ping-badtoken.json", &n);
    ck_assert_int_eq(np_rest_parse_ping(500, b, n, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "slurmctld config is unable to load"), "%s", err.text);
    free(b);
    b = slurp(DATA "v0.0.38-ping-noauth-401.txt", &n);
    ck_assert_int_eq(np_rest_parse_ping(401, b, n, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "HTTP 401: Authentication failure"), "%s", err.text);
    free(b);
    const char *down = "{\"errors\":[],\"pings\":[{\"hostname\":\"a\",\"ping\":\"DOWN\"}]}";
    ck_assert_int_eq(np_rest_parse_ping(200, down, strlen(down), &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "no slurmctld is UP"), "%s", err.text);
    const char *newer = "{\"pings\":[{\"hostname\":\"a\",\"responding\":true}],\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(200, newer, strlen(newer), &err), NP_OK);
    const char *nopings = "{\"errors\":[]}";
    ck_assert_int_eq(np_rest_parse_ping(200, nopings, strlen(nopings), &err), NP_E_PARSE);
}
END_TEST

START_TEST(test_recorded_submit)
{
    size_t n;
    struct np_error err;
    char *id = NULL;
    char *b = slurp(DATA "v0.0.38-submit-ok.json", &n);
    ck_assert_int_eq(np_rest_parse_submit(200, b, n, &id, &err), NP_OK);
    ck_assert_str_eq(id, "86");
    free(id);
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
        b = slurp(path, &n);
        id = (char *)"x";
        ck_assert_int_eq(np_rest_parse_submit(bad[i].http, b, n, &id, &err), NP_E_SLURM);
        ck_assert_ptr_null(id);
        for (size_t k = 0; k < 3 && bad[i].pieces[k]; k++)
            ck_assert_msg(strstr(err.text, bad[i].pieces[k]), "%s: want \"%s\" in \"%s\"", bad[i].file,
                          bad[i].pieces[k], err.text);
        free(b);
    }
    /* errors[] in a 200 reply is a refusal too */
    const char *e200 = "{\"errors\":[{\"error\":\"Job violates accounting/QOS policy\",\"error_code\":2050}],"
                       "\"job_id\":0}";
    ck_assert_int_eq(np_rest_parse_submit(200, e200, strlen(e200), &id, &err), NP_E_SLURM);
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
        {"{\"errors\":[1,null,{}],\"job_id\":3}", 0, 200, NP_E_SLURM, "3 errors without a readable text"},
        {"{\"errors\":[{\"description\":5,\"error\":[]}],\"job_id\":3}", 0, 200, NP_E_SLURM, "without a readable"},
        {"{\"errors\":[\"plain text error\"]}", 0, 500, NP_E_SLURM, "HTTP 500: plain text error"},
        {"<html><body>502 Bad Gateway</body></html>", 0, 502, NP_E_SLURM, "HTTP 502: <html><body>502 Bad"},
        {"{\"job_id\":\x00 5}", 13, 200, NP_E_PARSE, "not JSON"},
        {"\xff\xfe\x01garbage", 0, 200, NP_E_PARSE, "not JSON"},
        {"{}", 0, 503, NP_E_SLURM, "HTTP 503: (no error text in the reply)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct np_error err;
        char *id = NULL;
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].body);
        enum np_status st = np_rest_parse_submit(cases[i].http, cases[i].body, len, &id, &err);
        ck_assert_msg(st == cases[i].st, "case %zu: status %d, want %d (%s)", i, st, cases[i].st, err.text);
        ck_assert_ptr_null(id);
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
    char *id = NULL;
    ck_assert_int_eq(np_rest_parse_submit(200, deep, 2 * depth, &id, &err), NP_E_PARSE);
    free(deep);
    ck_assert_int_eq(np_rest_parse_submit(200, NULL, 0, &id, &err), NP_E_PARSE);
}
END_TEST

START_TEST(test_recorded_jobs)
{
    size_t n;
    struct np_error err;
    struct np_job_list l;
    char *b = slurp(DATA "v0.0.38-jobs.json", &n);
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
    b = slurp(DATA "v0.0.38-job-unknown.json", &n);
    ck_assert_int_eq(np_rest_parse_jobs(500, b, n, ids, 1, &l, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "Unable to find JobId=999999: Invalid job id specified (code 2017)"), "%s",
                  err.text);
    ck_assert_uint_eq(l.n, 0);
    free(b);
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
                                    .job_name = "j", .config = &plan.jobs[0]};
    enum np_status st = be.submit(&be, &req, res, err);
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
            close(c);                        /* ... and the connection drops without an answer */
            (void)!write(pfd[1], "x", 1);
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
    ck_assert_msg(strstr(err.text, "GET /slurm/v0.0.41/ping"), "%s", err.text);
    ck_assert_ptr_null(strstr(err.text, "SECRET"));
    np_submit_result_free(&res);
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
    tcase_add_test(t, test_recorded_ping);
    tcase_add_test(t, test_recorded_submit);
    tcase_add_test(t, test_malformed_submit);
    tcase_add_test(t, test_recorded_jobs);
    tcase_add_test(t, test_malformed_jobs);
    tcase_add_test(t, test_no_server);
    tcase_add_test(t, test_never_resent);
    tcase_add_test(t, test_backend_refusals);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
