/* check_ftprep.c - the downloads of `TASK=sft|lora nemoperf-setup` against tests/hfserver.py on
 * loopback (the Hub stand-in: gated models, data set files, Range requests, fault injection):
 * which models and pack lengths, the disk estimate, the weights (index + shards) and SQuAD's
 * parquet files staged atomically, resumed after a dropped connection, 401/403 refused with
 * nothing under a final name, and a STAGE_PATH without the space refused before the shards.
 */
#include <check.h>
#include <curl/curl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/job/finetune.h"
#include "nemoperf/setup/finetune_prep.h"
#include "nemoperf/setup/hf.h"

#define TOKEN "hf_ftprep_token_9e8d7c6b5a"
#define SHARD_SIZE (3072L * 32)

static pid_t server_pid = -1;
static char server_dir[128], endpoint[64], stage[256];
static struct np_recipe_set set;

static void server_start(void)
{
    snprintf(server_dir, sizeof server_dir, "/tmp/np-ftsrv-XXXXXX");
    ck_assert(mkdtemp(server_dir));
    char logpath[256];
    snprintf(logpath, sizeof logpath, "%s/requests.log", server_dir);
    int pfd[2];
    ck_assert(pipe(pfd) == 0 && (server_pid = fork()) >= 0);
    if (server_pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execlp("python3", "python3", "tests/hfserver.py", "--token", TOKEN, "--log", logpath, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    char line[32] = "";
    size_t n = 0;
    struct pollfd p = {pfd[0], POLLIN, 0};
    while (n < sizeof line - 1 && poll(&p, 1, 15000) > 0 && read(pfd[0], line + n, 1) == 1 && line[n] != '\n')
        n++;
    line[n] = '\0';
    close(pfd[0]);
    ck_assert_msg(atoi(line) > 0, "tests/hfserver.py did not print its port (python3 missing?)");
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", atoi(line));
}

static size_t sink(char *ptr, size_t size, size_t nmemb, void *ud)
{
    FILE *f = ud;
    return fwrite(ptr, size, nmemb, f);
}

/* GET /_ctl/<what>; the body (caller frees). */
static char *ctl(const char *what)
{
    char url[256], *buf = NULL;
    size_t len = 0;
    snprintf(url, sizeof url, "%s/_ctl/%s", endpoint, what);
    FILE *f = open_memstream(&buf, &len);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
    CURLcode cc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    fclose(f);
    ck_assert_msg(cc == CURLE_OK, "control request %s failed", what);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void setup(void)
{
    server_start();
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "%s", err.text);
    np_set_quiet(1);
}

static void teardown(void)
{
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        waitpid(server_pid, NULL, 0);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", server_dir);
    ck_assert(system(cmd) == 0);
    np_recipe_set_free(&set);
}

static void each_setup(void)
{
    snprintf(stage, sizeof stage, "/tmp/np-ftprep-XXXXXX");
    ck_assert(mkdtemp(stage));
    free(ctl("reset"));
}

static void each_teardown(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", stage);
    ck_assert(system(cmd) == 0);
}

static struct np_hf_client *client(const char *token, int attempts)
{
    struct np_hf_opts o = {.endpoint = endpoint, .token = token, .max_attempts = attempts,
                           .backoff_initial_ms = 1, .backoff_max_ms = 5};
    struct np_hf_client *c = NULL;
    struct np_error err;
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_OK);
    return c;
}

static long fsize(const char *dir, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static int plenty(const char *path, double *bytes)
{
    (void)path;
    *bytes = 1e15;
    return 0;
}

static int little(const char *path, double *bytes)
{
    (void)path;
    *bytes = 150000; /* less than the two shards (2 x 96 KiB) and their checkpoint */
    return 0;
}

START_TEST(test_resolve_and_estimate)
{
    struct np_ftprep_plan p;
    struct np_error err;
    ck_assert_int_eq(np_ftprep_resolve(&set, NULL, NULL, NP_TASK_LORA, stage, &p, &err), NP_OK);
    ck_assert_uint_eq(p.n, 3);
    /* Meta's parameter counts: 8.03e9, 70.6e9, 405.9e9 (bf16: 2 bytes each), within 0.5 % */
    static const double params[] = {8.03e9, 70.6e9, 405.9e9};
    for (size_t i = 0; i < 3; i++) {
        double w = np_ftprep_weight_bytes(p.models[i].model);
        ck_assert_msg(w > 2 * params[i] * 0.995 && w < 2 * params[i] * 1.005, "%s: %.4g", p.models[i].model->size, w);
        ck_assert(!p.models[i].imported && !p.models[i].prepared);
    }
    /* the pack lengths the rows run: 8B 16384 (B200/GB200) and 4096 (H100); 70B 2048 (GB200) and 4096;
     * 405B 2048 */
    ck_assert_uint_eq(p.models[0].npacks, 2);
    ck_assert_int_eq(p.models[0].packs[0] + p.models[0].packs[1], 16384 + 4096);
    ck_assert_int_eq(p.models[1].packs[0] + p.models[1].packs[1], 2048 + 4096);
    ck_assert_uint_eq(p.models[2].npacks, 1);
    ck_assert_int_eq(p.models[2].packs[0], 2048);
    double w = 0;
    for (size_t i = 0; i < 3; i++)
        w += np_ftprep_weight_bytes(p.models[i].model);
    ck_assert(p.need_bytes == 2 * w + NP_FTPREP_DATA_BYTES); /* 405B alone: ~1.6 TB */
    ck_assert_int_eq(np_ftprep_resolve(&set, "llama3", "405b", NP_TASK_SFT, stage, &p, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "MODEL_SIZE=405b") && strstr(err.text, "llama3 8b, llama3 70b"), "%s", err.text);
    ck_assert_int_eq(np_ftprep_resolve(&set, "gpt3", NULL, NP_TASK_SFT, stage, &p, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "TASK=sft") && strstr(err.text, "RECIPE=gpt3"), "%s", err.text);
    ck_assert_int_eq(np_ftprep_resolve(&set, "llama3", "8B", NP_TASK_SFT, stage, &p, &err), NP_OK);
    ck_assert_uint_eq(p.n, 1);
}
END_TEST

START_TEST(test_download_and_again)
{
    struct np_ftprep_plan p;
    struct np_error err;
    ck_assert_int_eq(np_ftprep_resolve(&set, "llama3", "8b", NP_TASK_SFT, stage, &p, &err), NP_OK);
    struct np_hf_client *c = client(TOKEN, 2);
    ck_assert_int_eq(np_ftprep_download(&p, c, plenty, NULL), 0);
    char hf[400], sq[400];
    snprintf(hf, sizeof hf, "%s/hf/meta-llama/Meta-Llama-3-8B", stage);
    snprintf(sq, sizeof sq, "%s/%s/plain_text", stage, NP_FT_PARQUET_DIR);
    ck_assert_int_gt(fsize(hf, "model.safetensors.index.json"), 100);
    ck_assert_int_eq(fsize(hf, "model-00001-of-00002.safetensors"), SHARD_SIZE);
    ck_assert_int_eq(fsize(hf, "model-00002-of-00002.safetensors"), SHARD_SIZE);
    ck_assert_int_gt(fsize(sq, "train-00000-of-00001.parquet"), 200000);
    ck_assert_int_gt(fsize(sq, "validation-00000-of-00001.parquet"), 200000);
    char *log = ctl("log");
    ck_assert_msg(count(log, "/datasets/rajpurkar/squad/resolve/main/plain_text/train-00000-of-00001.parquet") == 1,
                  "%s", log);
    ck_assert_int_eq(count(log, "\"path\": \"/meta-llama/"), 3); /* index, 2 shards */
    ck_assert_int_eq(count(log, "\"auth\": \"none\"") + count(log, "\"auth\": \"bad\""), 0);
    ck_assert_ptr_null(strstr(log, TOKEN));
    free(log);
    /* again: everything is there (the index read from disk for the sizes): no request at all */
    free(ctl("reset"));
    ck_assert_int_eq(np_ftprep_download(&p, c, plenty, NULL), 0);
    log = ctl("log");
    ck_assert_msg(count(log, "\"method\"") == 0, "%s", log);
    free(log);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_resume_after_cut)
{
    struct np_ftprep_plan p;
    struct np_error err;
    ck_assert_int_eq(np_ftprep_resolve(&set, "llama3", "8b", NP_TASK_LORA, stage, &p, &err), NP_OK);
    struct np_hf_client *c = client(TOKEN, 1); /* no retry inside the client: the cut fails the run */
    free(ctl("cut?bytes=40000&n=1"));
    ck_assert_int_eq(np_ftprep_download(&p, c, plenty, NULL), 1);
    char hf[400];
    snprintf(hf, sizeof hf, "%s/hf/meta-llama/Meta-Llama-3-8B", stage);
    /* the index is whole (shorter than the cut); the first shard was cut: no final name, a .part */
    ck_assert_int_gt(fsize(hf, "model.safetensors.index.json"), 100);
    ck_assert_int_eq(fsize(hf, "model-00001-of-00002.safetensors"), -1);
    ck_assert_int_eq(fsize(hf, "model-00001-of-00002.safetensors.part"), 40000);
    ck_assert_int_eq(fsize(hf, "model-00002-of-00002.safetensors"), -1);
    free(ctl("reset"));
    ck_assert_int_eq(np_ftprep_download(&p, c, plenty, NULL), 0);
    char *log = ctl("log");
    ck_assert_msg(count(log, "\"range\": \"bytes=40000-\", \"status\": 206") == 1, "%s", log);
    free(log);
    ck_assert_int_eq(fsize(hf, "model-00001-of-00002.safetensors"), SHARD_SIZE);
    ck_assert_int_eq(fsize(hf, "model-00001-of-00002.safetensors.part"), -1);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_not_enough_space)
{
    struct np_ftprep_plan p;
    struct np_error err;
    ck_assert_int_eq(np_ftprep_resolve(&set, "llama3", "8b", NP_TASK_LORA, stage, &p, &err), NP_OK);
    struct np_hf_client *c = client(TOKEN, 2);
    ck_assert_int_eq(np_ftprep_download(&p, c, little, NULL), 1);
    char hf[400];
    snprintf(hf, sizeof hf, "%s/hf/meta-llama/Meta-Llama-3-8B", stage);
    ck_assert_int_gt(fsize(hf, "model.safetensors.index.json"), 100); /* read for the exact size */
    ck_assert_int_eq(fsize(hf, "model-00001-of-00002.safetensors"), -1);
    ck_assert_int_eq(fsize(hf, "model-00001-of-00002.safetensors.part"), -1);
    char *log = ctl("log");
    ck_assert_msg(count(log, ".safetensors\"") == 0 && count(log, "/datasets/") == 0, "%s", log);
    free(log);
    np_hf_client_free(c);
}
END_TEST

/* The index is read from disk when it is there (no request): ftprep takes as a shard any
 * *.safetensors name of the top folder (a long one too) and refuses the index otherwise, before
 * any space check or download; one shard named twice is fetched once. */
static void put_index(const char *hf, const char *text)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && printf '%%s' '%s' >'%s/model.safetensors.index.json'", hf, text, hf);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_index_rules)
{
    struct np_ftprep_plan p;
    struct np_error err;
    ck_assert_int_eq(np_ftprep_resolve(&set, "llama3", "8b", NP_TASK_SFT, stage, &p, &err), NP_OK);
    struct np_hf_client *c = client(TOKEN, 1);
    char hf[400];
    snprintf(hf, sizeof hf, "%s/hf/meta-llama/Meta-Llama-3-8B", stage);
    static const char *const bad[] = {
        "{\"weight_map\": {\"a\": \"model-1.safetensors\", \"b\": \"sub/model-2.safetensors\"}}",
        "{\"weight_map\": {\"a\": \"model-1.bin\"}}",
        "{\"weight_map\": {\"a\": \".model-1.safetensors\"}}",
        "{\"weight_map\": {\"a\": 1}}",
        "{\"weight_map\": {}}",
        "{\"metadata\": {\"total_size\": 10}}",
        /* not "{\"weight_map\": [": an index that is not JSON is downloaded again (issue 23; check_hf) */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_index(hf, bad[i]);
        ck_assert_msg(np_ftprep_download(&p, c, plenty, NULL) == 1, "accepted: %s", bad[i]);
    }
    char *log = ctl("log");
    ck_assert_msg(count(log, "\"method\"") == 0, "a request after a bad index: %s", log);
    free(log);
    /* a name longer than AutoModel's staging takes (over 200 characters): asked for, once (404 here) */
    char name[260], idx[700];
    memset(name, 'w', 220);
    strcpy(name + 220, ".safetensors");
    snprintf(idx, sizeof idx, "{\"weight_map\": {\"a\": \"%s\", \"b\": \"%s\"}}", name, name);
    put_index(hf, idx);
    ck_assert_int_eq(np_ftprep_download(&p, c, plenty, NULL), 1);
    log = ctl("log");
    ck_assert_msg(count(log, name) == 1, "%s", log);
    ck_assert_msg(count(log, "/datasets/") == 0, "%s", log);
    free(log);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_401_403)
{
    struct np_ftprep_plan p;
    struct np_error err;
    ck_assert_int_eq(np_ftprep_resolve(&set, "llama3", "8b", NP_TASK_SFT, stage, &p, &err), NP_OK);
    struct np_hf_client *c = client("hf_wrong", 2);
    ck_assert_int_eq(np_ftprep_download(&p, c, plenty, NULL), 1);
    np_hf_client_free(c);
    char *log = ctl("log");
    ck_assert_msg(count(log, "\"status\": 401") == 1 && count(log, "\"method\"") == 1, "%s", log);
    free(log);
    /* a repo the token may not read (the server answers 403 for names with "denied") */
    struct np_model m = *p.models[0].model;
    m.hf_repo = (char *)"meta-llama/denied-Llama";
    p.models[0].model = &m;
    free(ctl("reset"));
    c = client(TOKEN, 2);
    ck_assert_int_eq(np_ftprep_download(&p, c, plenty, NULL), 1);
    np_hf_client_free(c);
    log = ctl("log");
    ck_assert_msg(count(log, "\"status\": 403") == 1, "%s", log);
    free(log);
    /* nothing under a final name */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -type f)\"", stage);
    ck_assert_msg(system(cmd) == 0, "files left in %s", stage);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ftprep");
    TCase *tc = tcase_create("ftprep");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_checked_fixture(tc, each_setup, each_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_resolve_and_estimate);
    tcase_add_test(tc, test_download_and_again);
    tcase_add_test(tc, test_resume_after_cut);
    tcase_add_test(tc, test_not_enough_space);
    tcase_add_test(tc, test_index_rules);
    tcase_add_test(tc, test_401_403);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* one server for the suite */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
