/* check_reconcile.c - the record side of the submission protocol (issue 13).
 *
 * Pre-sized manifests, their in-place rewrite when the atomic one cannot be made (the
 * temporary file's name is taken by a folder: the stand-in for a full disk, which the
 * e2e test 13-launch-nothing-lost.sh reproduces for real on a tmpfs), corrupt records,
 * and reconcile against a scripted backend (find() answers from a table).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nemoperf/launch/lock.h"
#include "nemoperf/launch/manifest.h"
#include "nemoperf/launch/reconcile.h"
#include "nemoperf/util/shell.h"

static char root[] = "/tmp/np-check-reconcile.XXXXXX";

static void setup(void)
{
    strcpy(root, "/tmp/np-check-reconcile.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static char *path(const char *rel)
{
    static char p[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", root, rel);
    return p[k];
}

static off_t fsize(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* A record as launch writes it before calling the backend. */
static void write_record(const char *dir, const char *state, const char *tag, const char *job_id)
{
    mkdir(dir, 0755);
    json_t *o = json_pack("{s:s,s:b,s:s?,s:s?,s:n,s:{s:s}}", "state", state, "submitted",
                          strcmp(state, NP_STATE_SUBMITTED) == 0, "tag", tag, "job_id", job_id, "error", "config",
                          "job_name", "pretrain_x_8");
    ck_assert_ptr_nonnull(o);
    struct np_error err;
    ck_assert_int_eq(np_manifest_store(dir, o, 1, NULL, &err), NP_OK);
    json_decref(o);
}

static json_t *load(const char *dir)
{
    json_t *o = NULL;
    struct np_error err;
    ck_assert_msg(np_manifest_load(dir, &o, &err) == NP_OK, "%s", err.text);
    return o;
}

START_TEST(test_presize_and_in_place)
{
    const char *d = path("job");
    write_record(d, NP_STATE_SUBMITTING, "nemoperf-t1", NULL);
    char mp[600];
    snprintf(mp, sizeof mp, "%s/nemoperf.json", d);
    off_t size = fsize(mp);
    ck_assert_int_eq(size % 4096, 0); /* up to the end of its last block */
    json_t *o = load(d);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    ck_assert_int_ge(size, (off_t)strlen(text) + NP_MANIFEST_SLACK);
    free(text);
    /* the atomic rewrite cannot be made (its temporary name is a folder): rewritten in place */
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s/.nemoperf.json.tmp.%ld", d, (long)getpid());
    ck_assert_int_eq(mkdir(tmp, 0755), 0);
    json_object_set_new(o, "state", json_string(NP_STATE_SUBMITTED));
    json_object_set_new(o, "job_id", json_string("123456789"));
    int in_place = 0;
    struct np_error err;
    ck_assert_int_eq(np_manifest_store(d, o, 0, &in_place, &err), NP_OK);
    ck_assert_int_eq(in_place, 1);
    ck_assert_int_eq(fsize(mp), size); /* no byte more than it had */
    json_t *back = load(d);
    ck_assert_str_eq(json_string_value(json_object_get(back, "job_id")), "123456789");
    ck_assert_str_eq(np_manifest_state(back), NP_STATE_SUBMITTED);
    json_decref(back);
    /* too long to fit: the error message is shortened, the job id kept */
    char *longmsg = malloc(20000);
    memset(longmsg, 'e', 19999);
    longmsg[19999] = '\0';
    json_object_set_new(o, "error", json_string(longmsg));
    free(longmsg);
    ck_assert_int_eq(np_manifest_store(d, o, 0, &in_place, &err), NP_OK);
    ck_assert_int_eq(in_place, 1);
    back = load(d);
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(back, "error"))), 200);
    ck_assert_str_eq(json_string_value(json_object_get(back, "job_id")), "123456789");
    json_decref(back);
    json_decref(o);
    rmdir(tmp);
}
END_TEST

START_TEST(test_load_errors)
{
    const char *d = path("bad");
    mkdir(d, 0755);
    json_t *o = NULL;
    struct np_error err;
    ck_assert_int_eq(np_manifest_load(d, &o, &err), NP_E_NOTFOUND);
    FILE *f = fopen(path("bad/nemoperf.json"), "w");
    fputs("{\"state\": \"submitted\",\n \"job_id\": ", f);
    fclose(f);
    ck_assert_int_eq(np_manifest_load(d, &o, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "corrupt manifest"), "%s", err.text);
    ck_assert_int_eq(err.line, 2);
    f = fopen(path("bad/nemoperf.json"), "w");
    fputs("[1]", f);
    fclose(f);
    ck_assert_int_eq(np_manifest_load(d, &o, &err), NP_E_PARSE);
    /* an older record without "state" */
    f = fopen(path("bad/nemoperf.json"), "w");
    fputs("{\"submitted\": true, \"job_id\": \"5\"}", f);
    fclose(f);
    ck_assert_int_eq(np_manifest_load(d, &o, &err), NP_OK);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_SUBMITTED);
    json_decref(o);
    /* tags are unique */
    char *a = np_manifest_new_tag(), *b = np_manifest_new_tag();
    ck_assert_str_ne(a, b);
    ck_assert_uint_eq(strlen(a), strlen("nemoperf-") + 32);
    free(a);
    free(b);
}
END_TEST

/* A backend whose find() answers from fields below. */
static const char *find_answer; /* "id:STATE" lines for the tag "nemoperf-found", or "!" to fail */
static int find_calls;
static const char *find_settles; /* a folder whose record the launch settles (submitted, job 99) while find() runs */

static enum np_status fake_find(struct np_backend *b, const char *tag, const char *job_name, struct np_job_list *out,
                                struct np_error *err)
{
    (void)b;
    find_calls++;
    memset(out, 0, sizeof *out);
    if (find_settles) {
        write_record(find_settles, NP_STATE_SUBMITTED, tag, "99");
        find_settles = NULL;
    }
    ck_assert_str_eq(job_name, "pretrain_x_8");
    if (find_answer[0] == '!')
        return np_error_set(err, NP_E_SLURM, "squeue", 0, 0, "Socket timed out on send/recv operation");
    for (const char *p = find_answer; strcmp(tag, "nemoperf-found") == 0 && *p;) { /* "id:STATE[,id:STATE...]" */
        char id[16], st[32];
        ck_assert_int_eq(sscanf(p, "%15[^:]:%31[^,]", id, st), 2);
        np_job_list_add(out, id, st, NULL);
        p += strcspn(p, ",");
        p += *p == ',';
    }
    return NP_OK;
}

START_TEST(test_reconcile_dir)
{
    struct np_backend be = {.name = "fake", .find = fake_find};
    struct np_reconcile r;
    /* unknown, the scheduler has it */
    const char *d1 = path("a");
    write_record(d1, NP_STATE_UNKNOWN, "nemoperf-found", NULL);
    find_answer = "42:PENDING";
    ck_assert_int_eq(np_reconcile_dir(&be, d1, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.job_id, "42");
    ck_assert_str_eq(r.job_state, "PENDING");
    ck_assert_msg(strstr(r.message, "was unknown; the scheduler has job 42 (PENDING) carrying tag nemoperf-found"),
                  "%s", r.message);
    np_reconcile_free(&r);
    json_t *o = load(d1);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_SUBMITTED);
    ck_assert(json_is_true(json_object_get(o, "submitted")));
    ck_assert_str_eq(json_string_value(json_object_get(o, "job_id")), "42");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "reconciled"), "was")), "unknown");
    json_decref(o);
    /* the tag on several jobs (never seen; a resubmission by hand with the same comment): the lowest job id, the
     * others named as there too */
    const char *d1b = path("a2");
    write_record(d1b, NP_STATE_UNKNOWN, "nemoperf-found", NULL);
    find_answer = "1000:RUNNING,998:PENDING,1001:PENDING";
    ck_assert_int_eq(np_reconcile_dir(&be, d1b, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.job_id, "998");
    ck_assert_msg(strstr(r.message, "job 998 (PENDING)") && strstr(r.message, "and more jobs with it"), "%s",
                  r.message);
    np_reconcile_free(&r);
    find_answer = "42:PENDING";
    /* settled now: a second run asks nobody */
    find_calls = 0;
    ck_assert_int_eq(np_reconcile_dir(&be, d1, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_RECORDED);
    ck_assert_int_eq(find_calls, 0);
    np_reconcile_free(&r);

    /* submitting (the launch died), no such job: not submitted */
    const char *d2 = path("b");
    write_record(d2, NP_STATE_SUBMITTING, "nemoperf-other", NULL);
    find_answer = "";
    ck_assert_int_eq(np_reconcile_dir(&be, d2, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_ABSENT);
    np_reconcile_free(&r);
    o = load(d2);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_NOT_SUBMITTED);
    ck_assert(json_is_null(json_object_get(o, "job_id")));
    json_decref(o);

    /* the scheduler cannot be asked: unchanged */
    const char *d3 = path("c");
    write_record(d3, NP_STATE_UNKNOWN, "nemoperf-found", NULL);
    find_answer = "!";
    ck_assert_int_eq(np_reconcile_dir(&be, d3, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_UNREACHABLE);
    ck_assert_msg(strstr(r.message, "still unknown: cannot ask the scheduler: squeue: Socket timed out"), "%s",
                  r.message);
    np_reconcile_free(&r);
    o = load(d3);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_UNKNOWN);
    json_decref(o);
    /* ... but the job's own output file in the folder says it ran */
    FILE *f = fopen(path("c/sbatch_pretrain_x_8_77.out"), "w");
    fclose(f);
    f = fopen(path("c/sbatch_pretrain_x_8_7x.out"), "w"); /* not an id */
    fclose(f);
    ck_assert_int_eq(np_reconcile_dir(&be, d3, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.job_id, "77");
    np_reconcile_free(&r);

    /* no backend at all, no evidence: unchanged */
    const char *d4 = path("d");
    write_record(d4, NP_STATE_UNKNOWN, "nemoperf-found", NULL);
    ck_assert_int_eq(np_reconcile_dir(NULL, d4, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_UNREACHABLE);
    np_reconcile_free(&r);
    /* no manifest */
    ck_assert_int_eq(np_reconcile_dir(&be, root, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FAILED);
    np_reconcile_free(&r);
}
END_TEST

/* A record is settled only when nothing of its launch can still submit it: its launch alive here (a process named
 * nemoperf-launch: a forked child of this test renamed so, standing in for it), or gone while the sbatch it started
 * still holds the experiment's lock; and a record its launch settles while reconcile asks the scheduler is left as
 * the launch wrote it (the scripted find() writes it then). */
START_TEST(test_still_submitting)
{
    struct np_backend be = {.name = "fake", .find = fake_find};
    struct np_reconcile r;
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t kid = fork();
    ck_assert_int_ge(kid, 0);
    if (kid == 0) {
        prctl(PR_SET_NAME, "nemoperf-launch");
        close(go[0]);
        close(go[1]); /* renamed: the parent may look */
        pause();
        _exit(0);
    }
    close(go[1]);
    char c;
    ck_assert_int_eq(read(go[0], &c, 1), 0);
    close(go[0]);
    const char *d = path("live");
    mkdir(d, 0755);
    json_t *o = json_pack("{s:s,s:b,s:s,s:n,s:n,s:{s:s},s:{s:s,s:I}}", "state", NP_STATE_SUBMITTING, "submitted", 0,
                          "tag", "nemoperf-found", "job_id", "error", "config", "job_name", "pretrain_x_8", "launcher",
                          "host", me, "pid", (json_int_t)kid);
    struct np_error err;
    ck_assert_int_eq(np_manifest_store(d, o, 1, NULL, &err), NP_OK);
    json_decref(o);
    find_answer = "";
    find_calls = 0;
    ck_assert_int_eq(np_reconcile_dir(&be, d, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_UNREACHABLE);
    ck_assert_msg(strstr(r.message, "still submitting: nemoperf-launch (pid"), "%s", r.message);
    ck_assert_int_eq(find_calls, 0);
    np_reconcile_free(&r);
    kill(kid, SIGKILL);
    ck_assert_int_eq(waitpid(kid, NULL, 0), kid);
    o = load(d);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_SUBMITTING);
    json_decref(o);

    /* the launch gone, its sbatch still running: it holds the experiment's lock */
    const char *stage = path("stage");
    mkdir(stage, 0755);
    const char *d2 = path("held");
    mkdir(d2, 0755);
    o = json_pack("{s:s,s:b,s:s,s:n,s:n,s:{s:s,s:s,s:s}}", "state", NP_STATE_SUBMITTING, "submitted", 0, "tag",
                  "nemoperf-found", "job_id", "error", "config", "job_name", "pretrain_x_8", "stage_path", stage,
                  "experiment", "pretrain_x_8");
    ck_assert_int_eq(np_manifest_store(d2, o, 1, NULL, &err), NP_OK);
    json_decref(o);
    struct np_launch_lock l;
    ck_assert_int_eq(np_launch_lock_take(stage, "pretrain_x_8", &l, &err), NP_OK);
    ck_assert_int_eq(np_reconcile_dir(&be, d2, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_UNREACHABLE);
    ck_assert_msg(strstr(r.message, "still submitting: its launch is gone but") && strstr(r.message, "reconcile again"),
                  "%s", r.message);
    np_reconcile_free(&r);
    np_launch_lock_release(&l); /* sbatch ended: now it is settled */
    ck_assert_int_eq(np_reconcile_dir(&be, d2, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_ABSENT);
    np_reconcile_free(&r);

    /* settled by its launch while the scheduler was asked: left as the launch wrote it */
    const char *d3 = path("meanwhile");
    write_record(d3, NP_STATE_UNKNOWN, "nemoperf-found", NULL);
    find_settles = d3;
    ck_assert_int_eq(np_reconcile_dir(&be, d3, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FAILED);
    ck_assert_msg(strstr(r.message, "settled meanwhile by its launch"), "%s", r.message);
    np_reconcile_free(&r);
    o = load(d3);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_SUBMITTED);
    ck_assert_str_eq(json_string_value(json_object_get(o, "job_id")), "99");
    json_decref(o);
}
END_TEST

START_TEST(test_collect)
{
    mkdir(path("s"), 0755);
    mkdir(path("s/experiments"), 0755);
    mkdir(path("s/experiments/e"), 0755);
    mkdir(path("s/experiments/e/e_1"), 0755);
    write_record(path("s/experiments/e/e_1/j2"), NP_STATE_SUBMITTED, "t", "2");
    write_record(path("s/experiments/e/e_1/j1"), NP_STATE_SUBMITTED, "t", "1");
    char **v = NULL;
    struct np_error err;
    char *args[] = {path("s")};
    ck_assert_int_eq(np_reconcile_collect(args, 1, &v, &err), NP_OK);
    ck_assert_ptr_nonnull(v[0]);
    ck_assert_ptr_nonnull(strstr(v[0], "/e_1/j1"));
    ck_assert_ptr_nonnull(strstr(v[1], "/e_1/j2"));
    ck_assert_ptr_null(v[2]);
    np_strv_free(v);
    char *bad[] = {path("s/experiments/e/e_1/j1/nemoperf.json")};
    ck_assert_int_eq(np_reconcile_collect(bad, 1, &v, &err), NP_E_NOTFOUND);
    ck_assert_msg(strstr(err.text, "not a folder"), "%s", err.text);
    mkdir(path("empty"), 0755);
    char *empty[] = {path("empty")};
    ck_assert_int_eq(np_reconcile_collect(empty, 1, &v, &err), NP_E_NOTFOUND);
}
END_TEST

/* A backend whose query() answers "id:STATE" pairs from query_answer, or fails ("!": unreachable). */
static const char *query_answer;
static int query_calls;

static enum np_status fake_query(struct np_backend *b, char *const *ids, size_t n, struct np_job_list *out,
                                 struct np_error *err)
{
    (void)b;
    (void)ids;
    (void)n;
    query_calls++;
    memset(out, 0, sizeof *out);
    if (query_answer[0] == '!')
        return np_error_set(err, NP_E_SLURM, "squeue", 0, 0, "Unable to contact slurm controller");
    char id[16], st[32];
    for (const char *p = query_answer; sscanf(p, "%15[^:]:%31s", id, st) == 2;) {
        np_job_list_add(out, id, st, NULL);
        p = strchr(p, ' ');
        if (!p)
            break;
        p++;
    }
    return NP_OK;
}

static int kept_has(struct np_reconcile *r, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].job_id && strcmp(r[i].job_id, id) == 0)
            return 1;
    return 0;
}

/* --skip-existing and a second launch: which recorded jobs of a row still count. A job the scheduler says
 * runs, or that it cannot be asked about (unreachable), is kept (a rerun must not queue it again); a finished,
 * a vanished and a never-submitted one are not. */
START_TEST(test_existing)
{
    struct np_backend be = {.name = "fake", .find = fake_find, .query = fake_query};
    mkdir(path("s"), 0755);
    mkdir(path("s/experiments"), 0755);
    mkdir(path("s/experiments/e"), 0755);
    const char *runs[] = {"e_1", "e_2", "e_3", "e_4", "e_5"};
    for (int i = 0; i < 5; i++) {
        char d[64];
        snprintf(d, sizeof d, "s/experiments/e/%s", runs[i]);
        mkdir(path(d), 0755);
    }
    write_record(path("s/experiments/e/e_1/pretrain_x_8"), NP_STATE_SUBMITTED, "t1", "11");
    write_record(path("s/experiments/e/e_2/pretrain_x_8"), NP_STATE_SUBMITTED, "t2", "12");
    write_record(path("s/experiments/e/e_3/pretrain_x_8"), NP_STATE_SUBMITTED, "t3", "13");
    write_record(path("s/experiments/e/e_4/pretrain_x_8"), NP_STATE_NOT_SUBMITTED, "t4", NULL);
    write_record(path("s/experiments/e/e_5/pretrain_x_8"), NP_STATE_SUBMITTED, "t5", "15");
    struct np_reconcile *r = NULL;
    size_t n = 9;
    struct np_error err;
    find_answer = "";
    query_answer = "11:RUNNING 12:COMPLETED 15:PENDING";
    query_calls = 0;
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq(query_calls, 1);
    ck_assert_int_eq((int)n, 2);
    ck_assert(kept_has(r, n, "11") && kept_has(r, n, "15"));
    for (size_t i = 0; i < n; i++)
        np_reconcile_free(&r[i]);
    free(r);
    /* the scheduler unreachable: every submitted job counts, saying why */
    query_answer = "!";
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 4);
    ck_assert(kept_has(r, n, "11") && kept_has(r, n, "12") && kept_has(r, n, "13") && kept_has(r, n, "15"));
    ck_assert_msg(strstr(r[0].message, "cannot ask the scheduler whether it still runs: Unable to contact"),
                  "%s", r[0].message);
    for (size_t i = 0; i < n; i++)
        np_reconcile_free(&r[i]);
    free(r);
    /* an unknown record whose tag cannot be looked up counts too (the job may exist) */
    write_record(path("s/experiments/e/e_4/pretrain_x_8"), NP_STATE_UNKNOWN, "t4", NULL);
    find_answer = "!";
    query_answer = "11:RUNNING";
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 2);
    ck_assert(kept_has(r, n, "11"));
    int unreachable = 0;
    for (size_t i = 0; i < n; i++) {
        unreachable += r[i].outcome == NP_RECONCILE_UNREACHABLE;
        np_reconcile_free(&r[i]);
    }
    free(r);
    ck_assert_int_eq(unreachable, 1);
    /* nothing recorded under another row */
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "other", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 0);
    ck_assert_ptr_null(r);
}
END_TEST

/* the walk below a folder: job folders at any of the levels allowed, sorted, none below a job folder */
START_TEST(test_collect_depth)
{
    mkdir(path("w"), 0755);
    mkdir(path("w/a"), 0755);
    mkdir(path("w/a/b"), 0755);
    write_record(path("w/a/b/j"), NP_STATE_SUBMITTED, "t", "3");
    write_record(path("w/a/b/j/inner"), NP_STATE_SUBMITTED, "t", "4");
    write_record(path("w/z"), NP_STATE_SUBMITTED, "t", "5");
    char **v = NULL;
    struct np_error err;
    char *args[] = {path("w"), path("w/z")};
    ck_assert_int_eq(np_reconcile_collect(args, 2, &v, &err), NP_OK);
    ck_assert_ptr_nonnull(strstr(v[0], "/w/a/b/j"));
    ck_assert_ptr_nonnull(strstr(v[1], "/w/z"));
    ck_assert_ptr_nonnull(strstr(v[2], "/w/z"));
    ck_assert_ptr_null(v[3]);
    np_strv_free(v);
    /* the walk goes 4 folder levels down, no further: a record at the 4th level is found, one at the 5th is not
     * (a STAGE_PATH's experiments/<exp>/<exp>_<time>/<exp> is 3; an unbounded walk would read a whole disk) */
    mkdir(path("d"), 0755);
    mkdir(path("d/1"), 0755);
    mkdir(path("d/1/2"), 0755);
    mkdir(path("d/1/2/3"), 0755);
    write_record(path("d/1/2/3/4"), NP_STATE_SUBMITTED, "t", "6");
    char *deep[] = {path("d")};
    ck_assert_int_eq(np_reconcile_collect(deep, 1, &v, &err), NP_OK);
    ck_assert_ptr_nonnull(strstr(v[0], "/d/1/2/3/4"));
    ck_assert_ptr_null(v[1]);
    np_strv_free(v);
    /* the same record one level further down */
    ck_assert_int_eq(rename(path("d/1/2/3/4"), path("d/1/2/3/x")), 0);
    ck_assert_int_eq(mkdir(path("d/1/2/3/4"), 0755), 0);
    ck_assert_int_eq(rename(path("d/1/2/3/x"), path("d/1/2/3/4/5")), 0);
    deep[0] = path("d");
    ck_assert_int_eq(np_reconcile_collect(deep, 1, &v, &err), NP_E_NOTFOUND);
    ck_assert_msg(strstr(err.text, "in the 4 folder levels below it"), "%s", err.text);
    ck_assert_ptr_null(v);
}
END_TEST

static void touch(const char *rel)
{
    FILE *f = fopen(path(rel), "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
}

/* The job's own output file as evidence (the scheduler no longer lists the job, or cannot be asked): the lowest id
 * among sbatch_<job_name>_<id>.out, shorter ids lower (99 before 100), same lengths by their digits (107 before
 * 120); names that only look like it (another job name sharing the prefix, no id, not .out, an id of 21 digits)
 * are not evidence; an id of 20 digits is.  And what the settled record keeps: the submission's error moved under
 * "reconciled", the top-level error the settling reason when no job was found. */
START_TEST(test_output_evidence)
{
    struct np_backend be = {.name = "fake", .find = fake_find};
    struct np_reconcile r;
    char d[512];
    snprintf(d, sizeof d, "%s", path("o1")); /* path() reuses 8 buffers */
    write_record(d, NP_STATE_UNKNOWN, "nemoperf-other", NULL);
    touch("o1/sbatch_pretrain_x_8_120.out");
    touch("o1/sbatch_pretrain_x_8_107.out");
    touch("o1/sbatch_pretrain_x_8x1.out");    /* job name pretrain_x_8x... : not this job */
    touch("o1/sbatch_pretrain_x_8_1.err");    /* not the output */
    touch("o1/sbatch_pretrain_x_8_.out");     /* no id */
    touch("o1/sbatch_pretrain_x_8_3.outx");   /* not .out */
    touch("o1/sbatch_pretrain_x_9_2.out");    /* another job */
    find_answer = ""; /* the scheduler answers: it lists no job with the tag */
    ck_assert_int_eq(np_reconcile_dir(&be, d, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.job_id, "107");
    ck_assert_str_eq(r.state, NP_STATE_SUBMITTED);
    ck_assert_ptr_null(r.job_state);
    ck_assert_str_eq(r.message, "was unknown; the job's output file sbatch_pretrain_x_8_107.out is in the folder "
                                "(the scheduler no longer lists it)");
    np_reconcile_free(&r);
    json_t *o = load(d);
    ck_assert_str_eq(json_string_value(json_object_get(o, "job_id")), "107");
    ck_assert(json_is_true(json_object_get(o, "submitted")));
    ck_assert(json_is_null(json_object_get(o, "error")));
    json_decref(o);

    /* shorter is lower: 99 before 100..119, whatever order the folder lists them in (among 21 files the 99 is
     * rarely the first read: a choice that kept the first id's length would pick one of 3 digits) */
    char d2[512];
    snprintf(d2, sizeof d2, "%s", path("o2"));
    write_record(d2, NP_STATE_SUBMITTING, "nemoperf-other", NULL);
    for (int id = 100; id < 120; id++) {
        char rel[64];
        snprintf(rel, sizeof rel, "o2/sbatch_pretrain_x_8_%d.out", id);
        touch(rel);
        if (id == 110)
            touch("o2/sbatch_pretrain_x_8_99.out");
    }
    ck_assert_int_eq(np_reconcile_dir(&be, d2, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.job_id, "99");
    np_reconcile_free(&r);

    /* an id of 21 digits is no job id: not submitted; one of 20 digits is */
    char d3[512];
    snprintf(d3, sizeof d3, "%s", path("o3"));
    write_record(d3, NP_STATE_UNKNOWN, "nemoperf-other", NULL);
    touch("o3/sbatch_pretrain_x_8_123456789012345678901.out");
    ck_assert_int_eq(np_reconcile_dir(&be, d3, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_ABSENT);
    ck_assert_ptr_null(r.job_id);
    ck_assert_str_eq(r.state, NP_STATE_NOT_SUBMITTED);
    ck_assert_str_eq(r.message, "was unknown; no job carrying tag nemoperf-other is known to the scheduler and the "
                                "folder has no output of one: not submitted");
    np_reconcile_free(&r);
    o = load(d3);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_NOT_SUBMITTED);
    ck_assert(json_is_false(json_object_get(o, "submitted")));
    ck_assert(json_is_null(json_object_get(o, "job_id")));
    ck_assert_str_eq(json_string_value(json_object_get(o, "error")),
                     "no job carrying tag nemoperf-other is known to the scheduler and the folder has no output of "
                     "one: not submitted");
    json_decref(o);
    char d4[512];
    snprintf(d4, sizeof d4, "%s", path("o4"));
    write_record(d4, NP_STATE_UNKNOWN, "nemoperf-other", NULL);
    touch("o4/sbatch_pretrain_x_8_12345678901234567890.out");
    ck_assert_int_eq(np_reconcile_dir(&be, d4, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.job_id, "12345678901234567890");
    np_reconcile_free(&r);

    /* the submission's own error is kept under "reconciled" when a job is found (the top-level one cleared) */
    char d5[512];
    snprintf(d5, sizeof d5, "%s", path("o5"));
    mkdir(d5, 0755);
    o = json_pack("{s:s,s:b,s:s,s:n,s:s,s:{s:s},s:{s:s,s:i}}", "state", NP_STATE_UNKNOWN, "submitted", 0, "tag",
                  "nemoperf-found", "job_id", "error", "slurmrestd: HTTP 502", "config", "job_name", "pretrain_x_8",
                  "launcher", "host", "elsewhere", "pid", 1);
    struct np_error err;
    ck_assert_int_eq(np_manifest_store(d5, o, 1, NULL, &err), NP_OK);
    json_decref(o);
    find_answer = "1002:RUNNING,1000:PENDING,1001:PENDING"; /* same lengths: the lowest by its digits */
    ck_assert_int_eq(np_reconcile_dir(&be, d5, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.job_id, "1000");
    ck_assert_str_eq(r.job_state, "PENDING");
    np_reconcile_free(&r);
    o = load(d5);
    ck_assert(json_is_null(json_object_get(o, "error")));
    ck_assert_ptr_null(json_object_get(o, "launcher"));
    json_t *rec = json_object_get(o, "reconciled");
    ck_assert_str_eq(json_string_value(json_object_get(rec, "error")), "slurmrestd: HTTP 502");
    ck_assert_str_eq(json_string_value(json_object_get(rec, "was")), NP_STATE_UNKNOWN);
    ck_assert_str_eq(json_string_value(json_object_get(rec, "how")),
                     "the scheduler has job 1000 (PENDING) carrying tag nemoperf-found (and more jobs with it: see "
                     "squeue)");
    json_decref(o);
    /* settled already: said so with its state and id, or its state alone */
    ck_assert_int_eq(np_reconcile_dir(&be, d5, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_RECORDED);
    ck_assert_str_eq(r.message, "recorded already: submitted, job 1000");
    np_reconcile_free(&r);
    ck_assert_int_eq(np_reconcile_dir(&be, d3, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_RECORDED);
    ck_assert_str_eq(r.message, "recorded already: not_submitted");
    np_reconcile_free(&r);
}
END_TEST

/* Nobody to ask: a record without a tag, a backend without find(), none at all: left as it is, saying why; the job's
 * output file still settles it (the scheduler "could not be asked").  A job found while its launch settled the
 * record meanwhile: the record is left as the launch wrote it, and the id found is still handed back. */
START_TEST(test_nobody_to_ask)
{
    struct np_backend be = {.name = "fake", .find = fake_find};
    struct np_backend nofind = {.name = "fake"};
    struct np_reconcile r;
    char d[512];
    snprintf(d, sizeof d, "%s", path("n1"));
    write_record(d, NP_STATE_UNKNOWN, NULL, NULL);
    find_calls = 0;
    ck_assert_int_eq(np_reconcile_dir(&be, d, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_UNREACHABLE);
    ck_assert_str_eq(r.message, "still unknown: cannot ask the scheduler: the record has no tag to look for");
    ck_assert_int_eq(find_calls, 0);
    np_reconcile_free(&r);
    char d2[512];
    snprintf(d2, sizeof d2, "%s", path("n2"));
    write_record(d2, NP_STATE_SUBMITTING, "nemoperf-found", NULL);
    ck_assert_int_eq(np_reconcile_dir(&nofind, d2, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_UNREACHABLE);
    ck_assert_str_eq(r.message, "still submitting: cannot ask the scheduler: no scheduler to ask");
    np_reconcile_free(&r);
    json_t *o = load(d2);
    ck_assert_str_eq(np_manifest_state(o), NP_STATE_SUBMITTING);
    json_decref(o);
    touch("n2/sbatch_pretrain_x_8_31.out");
    ck_assert_int_eq(np_reconcile_dir(NULL, d2, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FOUND);
    ck_assert_str_eq(r.message, "was submitting; the job's output file sbatch_pretrain_x_8_31.out is in the folder "
                                "(the scheduler could not be asked)");
    np_reconcile_free(&r);

    char d3[512];
    snprintf(d3, sizeof d3, "%s", path("n3"));
    write_record(d3, NP_STATE_UNKNOWN, "nemoperf-found", NULL);
    find_answer = "42:PENDING";
    find_settles = d3;
    ck_assert_int_eq(np_reconcile_dir(&be, d3, &r), NP_OK);
    ck_assert_int_eq(r.outcome, NP_RECONCILE_FAILED);
    ck_assert_str_eq(r.job_id, "42");
    const char *want = "the scheduler has job 42 (PENDING) carrying tag nemoperf-found; but the record could not be "
                       "rewritten: ";
    ck_assert_msg(strncmp(r.message, want, strlen(want)) == 0 && strstr(r.message, "settled meanwhile"), "%s",
                  r.message);
    np_reconcile_free(&r);
    o = load(d3);
    ck_assert_str_eq(json_string_value(json_object_get(o, "job_id")), "99");
    json_decref(o);
}
END_TEST

/* Which earlier records still count when the scheduler cannot say: with no backend (or one that cannot query) every
 * recorded job counts; a record that cannot be read counts (it may name a job); a job found by reconcile keeps the
 * scheduler's word for it when the query that follows fails. */
START_TEST(test_existing_cannot_tell)
{
    struct np_backend be = {.name = "fake", .find = fake_find, .query = fake_query};
    struct np_backend noquery = {.name = "fake", .find = fake_find};
    mkdir(path("s"), 0755);
    mkdir(path("s/experiments"), 0755);
    mkdir(path("s/experiments/e"), 0755);
    mkdir(path("s/experiments/e/e_1"), 0755);
    mkdir(path("s/experiments/e/e_2"), 0755);
    mkdir(path("s/experiments/e/e_3"), 0755);
    mkdir(path("s/experiments/e/.e_4"), 0755);
    write_record(path("s/experiments/e/e_1/pretrain_x_8"), NP_STATE_SUBMITTED, "t1", "11");
    write_record(path("s/experiments/e/e_2/pretrain_x_8"), NP_STATE_NOT_SUBMITTED, "t2", NULL);
    write_record(path("s/experiments/e/.e_4/pretrain_x_8"), NP_STATE_SUBMITTED, "t4", "14"); /* hidden: not a run */
    struct np_reconcile *r = NULL;
    size_t n = 9;
    struct np_error err;
    ck_assert_int_eq(np_reconcile_existing(NULL, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 1);
    ck_assert_str_eq(r[0].job_id, "11");
    np_reconcile_free(&r[0]);
    free(r);
    ck_assert_int_eq(np_reconcile_existing(&noquery, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 1);
    ck_assert_str_eq(r[0].job_id, "11");
    np_reconcile_free(&r[0]);
    free(r);
    /* a record that cannot be read */
    mkdir(path("s/experiments/e/e_3/pretrain_x_8"), 0755);
    FILE *f = fopen(path("s/experiments/e/e_3/pretrain_x_8/nemoperf.json"), "w");
    fputs("{\"state\": ", f);
    fclose(f);
    query_answer = "11:COMPLETED";
    query_calls = 0;
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq(query_calls, 1);
    ck_assert_int_eq((int)n, 1);
    ck_assert_int_eq(r[0].outcome, NP_RECONCILE_FAILED);
    ck_assert_ptr_nonnull(strstr(r[0].dir, "/e_3/pretrain_x_8"));
    np_reconcile_free(&r[0]);
    free(r);
    /* found by reconcile (PENDING), then the query fails: kept with the word find() gave */
    write_record(path("s/experiments/e/e_3/pretrain_x_8"), NP_STATE_UNKNOWN, "nemoperf-found", NULL);
    find_answer = "42:PENDING";
    query_answer = "!";
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 2);
    ck_assert_str_eq(r[0].job_id, "11");
    ck_assert_str_eq(r[0].message, "job 11: cannot ask the scheduler whether it still runs: Unable to contact slurm "
                                   "controller");
    ck_assert_str_eq(r[1].job_id, "42");
    ck_assert_str_eq(r[1].job_state, "PENDING");
    ck_assert_str_eq(r[1].message, "was unknown; the scheduler has job 42 (PENDING) carrying tag nemoperf-found");
    for (size_t i = 0; i < n; i++)
        np_reconcile_free(&r[i]);
    free(r);
    /* the query answers: a job ended (FAILED, CANCELLED, TIMEOUT) no longer counts, a PENDING one does */
    query_answer = "11:CANCELLED 42:TIMEOUT";
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 0);
    ck_assert_ptr_null(r);
    query_answer = "11:FAILED 42:RUNNING";
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq((int)n, 1);
    ck_assert_str_eq(r[0].job_id, "42");
    ck_assert_str_eq(r[0].job_state, "RUNNING");
    np_reconcile_free(&r[0]);
    free(r);
}
END_TEST

/* The walk below a folder takes only real folders: not a symbolic link to one (it may lead anywhere, or back up),
 * not a hidden one, not a file; a path that does not exist is named with why; and a record that says submitted
 * without a job id names no job that could still run */
START_TEST(test_collect_only_folders)
{
    mkdir(path("v"), 0755);
    mkdir(path("v/a"), 0755);
    write_record(path("v/a/j"), NP_STATE_SUBMITTED, "t", "3");
    mkdir(path("elsewhere"), 0755);
    write_record(path("elsewhere/j"), NP_STATE_SUBMITTED, "t", "4");
    ck_assert_int_eq(symlink(path("elsewhere"), path("v/link")), 0);
    mkdir(path("v/.hidden"), 0755);
    write_record(path("v/.hidden/j"), NP_STATE_SUBMITTED, "t", "5");
    FILE *f = fopen(path("v/file"), "w");
    fclose(f);
    char **v = NULL;
    struct np_error err;
    char *args[] = {path("v")};
    ck_assert_int_eq(np_reconcile_collect(args, 1, &v, &err), NP_OK);
    ck_assert_ptr_nonnull(v[0]);
    ck_assert_str_eq(v[0], path("v/a/j"));
    ck_assert_ptr_null(v[1]);
    np_strv_free(v);
    /* the link given itself is followed: the user named it */
    char *link[] = {path("v/link")};
    ck_assert_int_eq(np_reconcile_collect(link, 1, &v, &err), NP_OK);
    ck_assert_str_eq(v[0], path("v/link/j"));
    np_strv_free(v);
    char *gone[] = {path("v/a/j"), path("nonexistent")};
    ck_assert_int_eq(np_reconcile_collect(gone, 2, &v, &err), NP_E_NOTFOUND);
    ck_assert_str_eq(err.source, path("nonexistent"));
    ck_assert_str_eq(err.text, "No such file or directory");
    ck_assert_ptr_null(v);

    /* a job that was cancelled at once (a setting slurmrestd dropped): not_submitted with its id kept; it does not
     * count, even when the scheduler cannot be asked about the others */
    {
        struct np_backend be2 = {.name = "fake", .find = fake_find, .query = fake_query};
        mkdir(path("c"), 0755);
        mkdir(path("c/experiments"), 0755);
        mkdir(path("c/experiments/e"), 0755);
        mkdir(path("c/experiments/e/e_1"), 0755);
        mkdir(path("c/experiments/e/e_2"), 0755);
        write_record(path("c/experiments/e/e_1/pretrain_x_8"), NP_STATE_SUBMITTED, "t1", "11");
        write_record(path("c/experiments/e/e_2/pretrain_x_8"), NP_STATE_NOT_SUBMITTED, "t2", "12");
        struct np_reconcile *rc = NULL;
        size_t nc = 9;
        query_answer = "!";
        ck_assert_int_eq(np_reconcile_existing(&be2, path("c"), "e", "pretrain_x_8", &rc, &nc, &err), NP_OK);
        ck_assert_uint_eq(nc, 1);
        ck_assert_str_eq(rc[0].job_id, "11");
        np_reconcile_free(&rc[0]);
        free(rc);
    }
    /* submitted, no job id: nothing to ask about, not counted */
    struct np_backend be = {.name = "fake", .find = fake_find, .query = fake_query};
    mkdir(path("s"), 0755);
    mkdir(path("s/experiments"), 0755);
    mkdir(path("s/experiments/e"), 0755);
    mkdir(path("s/experiments/e/e_1"), 0755);
    write_record(path("s/experiments/e/e_1/pretrain_x_8"), NP_STATE_SUBMITTED, "t1", NULL);
    struct np_reconcile *r = NULL;
    size_t n = 9;
    query_answer = "!";
    query_calls = 0;
    ck_assert_int_eq(np_reconcile_existing(&be, path("s"), "e", "pretrain_x_8", &r, &n, &err), NP_OK);
    ck_assert_int_eq(query_calls, 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reconcile");
    TCase *t = tcase_create("reconcile");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_presize_and_in_place);
    tcase_add_test(t, test_load_errors);
    tcase_add_test(t, test_reconcile_dir);
    tcase_add_test(t, test_collect);
    tcase_add_test(t, test_existing);
    tcase_add_test(t, test_collect_depth);
    tcase_add_test(t, test_still_submitting);
    tcase_add_test(t, test_output_evidence);
    tcase_add_test(t, test_nobody_to_ask);
    tcase_add_test(t, test_existing_cannot_tell);
    tcase_add_test(t, test_collect_only_folders);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
