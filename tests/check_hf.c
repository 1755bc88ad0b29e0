/* check_hf.c - the Hugging Face client (libcurl) against tests/hfserver.py on loopback.
 *
 * The suite starts the server (python3, stdlib only) once, reads its port from
 * its first stdout line, and drives faults through its /_ctl/ requests: access
 * OK / 401 / 403 / 404, retries on 503, resume after a dropped connection, the
 * atomic rename, optional files that are absent, and the token never written.
 */
#include <check.h>
#include <curl/curl.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nemoperf/setup/automodel.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/setup/hf.h"

#define TOKEN "hf_check_token_5a1b2c3d4e"
#define REPO "meta-llama/Llama-3.1-8B"
#define TOKENIZER_SIZE 280941L

static pid_t server_pid = -1;
static int server_port;
static char server_dir[128];
static char endpoint[64];
static char tmp[256];

static void server_start(void)
{
    const char *script = getenv("NP_HFSERVER");
    if (!script)
        script = "tests/hfserver.py";
    snprintf(server_dir, sizeof server_dir, "/tmp/np-hfsrv-XXXXXX");
    if (!mkdtemp(server_dir)) {
        perror("check_hf: mkdtemp");
        exit(EXIT_FAILURE);
    }
    char logpath[256];
    snprintf(logpath, sizeof logpath, "%s/requests.log", server_dir);
    int pfd[2];
    if (pipe(pfd) != 0 || (server_pid = fork()) < 0) {
        perror("check_hf: starting the server");
        exit(EXIT_FAILURE);
    }
    if (server_pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execlp("python3", "python3", script, "--token", TOKEN, "--log", logpath, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    char line[32] = "";
    size_t n = 0;
    struct pollfd p = {pfd[0], POLLIN, 0};
    while (n < sizeof line - 1 && poll(&p, 1, 15000) > 0) {
        ssize_t r = read(pfd[0], line + n, 1);
        if (r <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    close(pfd[0]);
    server_port = atoi(line);
    if (server_port <= 0) {
        fprintf(stderr, "check_hf: %s did not print its port (python3 missing?)\n", script);
        exit(EXIT_FAILURE);
    }
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", server_port);
}

static void server_stop(void)
{
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        waitpid(server_pid, NULL, 0);
        server_pid = -1;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", server_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", server_dir);
}

struct mem {
    char *p;
    size_t n;
};

static size_t mem_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct mem *m = ud;
    size_t k = size * nmemb;
    char *q = realloc(m->p, m->n + k + 1);
    if (!q)
        return 0;
    memcpy(q + m->n, ptr, k);
    m->p = q;
    m->n += k;
    m->p[m->n] = '\0';
    return k;
}

/* GET /_ctl/<what>; returns the body (caller frees). */
static char *ctl(const char *what)
{
    char url[256];
    snprintf(url, sizeof url, "%s/_ctl/%s", endpoint, what);
    CURL *h = curl_easy_init();
    struct mem m = {calloc(1, 1), 0};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, mem_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &m);
    CURLcode cc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    ck_assert_msg(cc == CURLE_OK, "control request %s failed", what);
    return m.p;
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
    snprintf(tmp, sizeof tmp, "/tmp/np-hf-XXXXXX");
    ck_assert(mkdtemp(tmp));
    free(ctl("reset"));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

static struct np_hf_client *client(const char *token, int attempts)
{
    struct np_hf_opts o = {.endpoint = endpoint, .token = token, .max_attempts = attempts,
                           .backoff_initial_ms = 10, .backoff_max_ms = 40, .connect_timeout_s = 5};
    struct np_hf_client *c = NULL;
    struct np_error err;
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_OK);
    return c;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t r = fread(b, 1, (size_t)n, f);
    b[r] = '\0';
    fclose(f);
    if (len)
        *len = r;
    return b;
}

/* 1 when some file under dir contains needle. */
static int tree_contains(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            found = tree_contains(p, needle);
        } else if (S_ISREG(st.st_mode)) {
            size_t n;
            char *b = slurp(p, &n);
            found = b && memmem(b, n, needle, strlen(needle)) != NULL;
            free(b);
        }
    }
    closedir(d);
    return found;
}

START_TEST(test_access_ok)
{
    struct np_hf_client *c = client(TOKEN, 3);
    struct np_error err;
    long code = 0;
    char *sha = NULL;
    ck_assert_int_eq(np_hf_check_access(c, REPO, &code, &sha, &err), NP_OK);
    ck_assert_int_eq(code, 200);
    ck_assert_ptr_nonnull(sha);
    ck_assert_int_eq((int)strlen(sha), 40);
    free(sha);
    char *log = ctl("log");
    ck_assert_int_eq(count(log, "\"path\": \"/api/models/" REPO "\", \"auth\": \"ok\""), 1);
    free(log);
    np_hf_client_free(c);
}
END_TEST

/* the Hub's auth-check (what setup asks before the import): 2xx granted; 401 without or with a wrong token,
 * 403 not granted, 404 no such repo, each with the files' messages; one request each, none retried */
START_TEST(test_auth_check)
{
    struct np_hf_client *c = client(TOKEN, 3), *none = client(NULL, 3), *bad = client("hf_wrong_secret_value", 3);
    struct np_error err;
    long code = 0;
    ck_assert_int_eq(np_hf_auth_check(c, REPO, &code, &err), NP_OK);
    ck_assert_int_eq(code, 200);
    ck_assert_int_eq(np_hf_auth_check(none, REPO, &code, &err), NP_E_HTTP);
    ck_assert_int_eq(code, 401);
    ck_assert_msg(strstr(err.text, "HF_TOKEN is not set") && strstr(err.text, "request access on"), "%s", err.text);
    ck_assert_int_eq(np_hf_auth_check(bad, REPO, &code, &err), NP_E_HTTP);
    ck_assert_msg(code == 401 && strstr(err.text, "did not accept HF_TOKEN"), "%ld %s", code, err.text);
    ck_assert(!strstr(err.text, "hf_wrong_secret_value"));
    ck_assert_int_eq(np_hf_auth_check(c, "acme/denied-model", &code, &err), NP_E_HTTP);
    ck_assert_msg(code == 403 && strstr(err.text, "HTTP 403") && strstr(err.text, "acme/denied-model"), "%s",
                  err.text);
    ck_assert_int_eq(np_hf_auth_check(c, "acme/missing-model", &code, &err), NP_E_NOTFOUND);
    ck_assert_int_eq(code, 404);
    ck_assert_int_eq(np_hf_auth_check(c, "a/../b", &code, &err), NP_E_INVALID);
    char *log = ctl("log");
    ck_assert_int_eq(count(log, "\"path\": \"/api/models/" REPO "/auth-check\""), 3);
    ck_assert_int_eq(count(log, "/auth-check\""), 5);
    ck_assert_int_eq(count(log, "\"path\": \"/api/models/" REPO "\""), 0);
    free(log);
    np_hf_client_free(c);
    np_hf_client_free(none);
    np_hf_client_free(bad);
}
END_TEST

START_TEST(test_access_401_no_token)
{
    struct np_hf_client *c = client(NULL, 3);
    struct np_error err;
    long code = 0;
    ck_assert_int_eq(np_hf_check_access(c, REPO, &code, NULL, &err), NP_E_HTTP);
    ck_assert_int_eq(code, 401);
    ck_assert_str_eq(err.source, REPO);
    char want[200];
    snprintf(want, sizeof want, "request access on %s/%s", endpoint, REPO);
    ck_assert_msg(strstr(err.text, want) && strstr(err.text, "HF_TOKEN is not set"), "%s", err.text);
    char *log = ctl("log");
    ck_assert_int_eq(count(log, "\"auth\": \"none\""), 1);
    free(log);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_access_401_bad_token)
{
    struct np_hf_client *c = client("hf_wrong_secret_value", 3);
    struct np_error err;
    long code = 0;
    ck_assert_int_eq(np_hf_check_access(c, REPO, &code, NULL, &err), NP_E_HTTP);
    ck_assert_int_eq(code, 401);
    ck_assert_msg(strstr(err.text, "did not accept HF_TOKEN") && strstr(err.text, "request access on"), "%s",
                  err.text);
    ck_assert(!strstr(err.text, "hf_wrong_secret_value"));
    /* no retry of a 401 */
    char *log = ctl("log");
    ck_assert_int_eq(count(log, "\"status\": 401"), 1);
    free(log);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_access_403_and_404)
{
    struct np_hf_client *c = client(TOKEN, 3);
    struct np_error err;
    long code = 0;
    ck_assert_int_eq(np_hf_check_access(c, "acme/denied-model", &code, NULL, &err), NP_E_HTTP);
    ck_assert_int_eq(code, 403);
    char want[200];
    snprintf(want, sizeof want, "request access on %s/acme/denied-model", endpoint);
    ck_assert_msg(strstr(err.text, "HTTP 403") && strstr(err.text, want) && strstr(err.text, "HF_TOKEN"), "%s",
                  err.text);
    ck_assert(!strstr(err.text, TOKEN));
    ck_assert_int_eq(np_hf_check_access(c, "acme/missing-model", &code, NULL, &err), NP_E_NOTFOUND);
    ck_assert_int_eq(code, 404);
    ck_assert_int_eq(np_hf_check_access(c, "not a repo", &code, NULL, &err), NP_E_INVALID);
    ck_assert_int_eq(np_hf_check_access(c, "a/../b", &code, NULL, &err), NP_E_INVALID);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_retry_503)
{
    struct np_hf_client *c = client(TOKEN, 4);
    struct np_error err;
    long code = 0;
    free(ctl("fail?n=2"));
    ck_assert_int_eq(np_hf_check_access(c, REPO, &code, NULL, &err), NP_OK);
    ck_assert_int_eq(code, 200);
    char *log = ctl("log");
    ck_assert_int_eq(count(log, "\"status\": 503"), 2);
    ck_assert_int_eq(count(log, "\"status\": 200"), 1);
    free(log);

    free(ctl("reset"));
    free(ctl("fail?n=10"));
    ck_assert_int_eq(np_hf_check_access(c, REPO, &code, NULL, &err), NP_E_HTTP);
    ck_assert_int_eq(code, 503);
    ck_assert_msg(strstr(err.text, "HTTP 503") && strstr(err.text, "gave up after 4 attempts"), "%s", err.text);
    log = ctl("log");
    ck_assert_int_eq(count(log, "\"status\": 503"), 4);
    free(log);

    /* a download retries too */
    free(ctl("reset"));
    free(ctl("fail?n=2"));
    enum np_hf_fetch what;
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "config.json", tmp, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_FETCHED);
    np_hf_client_free(c);
}
END_TEST

struct prog {
    int calls, done;
    long long last_have, last_total;
};

static void on_progress(void *ctx, const char *file, long long have, long long total, int done)
{
    struct prog *p = ctx;
    ck_assert_str_eq(file, REPO "/tokenizer.json");
    p->calls++;
    p->done += done;
    p->last_have = have;
    if (total > 0)
        p->last_total = total;
}

START_TEST(test_fetch_redirect_and_present)
{
    struct prog pr = {0};
    struct np_hf_opts o = {.endpoint = endpoint, .token = TOKEN, .progress = on_progress, .progress_ctx = &pr};
    struct np_hf_client *c = NULL;
    struct np_error err;
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_OK);
    char dir[400], final[500];
    snprintf(dir, sizeof dir, "%s/hf/%s", tmp, REPO);
    snprintf(final, sizeof final, "%s/tokenizer.json", dir);
    enum np_hf_fetch what;
    long long bytes = 0;
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, &bytes, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_FETCHED);
    ck_assert_int_eq(bytes, TOKENIZER_SIZE);
    ck_assert_int_eq(file_size(final), TOKENIZER_SIZE);
    ck_assert_int_eq(pr.done, 1);
    ck_assert_int_eq(pr.last_have, TOKENIZER_SIZE);
    ck_assert_int_eq(pr.last_total, TOKENIZER_SIZE);
    char *log = ctl("log");
    ck_assert_int_eq(count(log, "\"status\": 302"), 1);
    ck_assert_int_eq(count(log, "/_lfs/" REPO "/tokenizer.json"), 1);
    free(log);
    /* present: no request at all */
    free(ctl("reset"));
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, &bytes, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_PRESENT);
    ck_assert_int_eq(bytes, TOKENIZER_SIZE);
    log = ctl("log");
    ck_assert_str_eq(log, "");
    free(log);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_resume_after_cut)
{
    struct np_hf_client *c = client(TOKEN, 3);
    struct np_error err;
    enum np_hf_fetch what;
    char ref[400], dir[400], final[500], reff[500];
    snprintf(ref, sizeof ref, "%s/ref", tmp);
    snprintf(dir, sizeof dir, "%s/cut", tmp);
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", ref, &what, NULL, &err), NP_OK);
    free(ctl("reset"));
    free(ctl("cut?bytes=100000&n=1"));
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_FETCHED);
    char *log = ctl("log");
    ck_assert_msg(count(log, "\"cut\": 100000") == 1, "%s", log);
    ck_assert_msg(count(log, "\"range\": \"bytes=100000-\", \"status\": 206") == 1, "%s", log);
    free(log);
    snprintf(final, sizeof final, "%s/tokenizer.json", dir);
    snprintf(reff, sizeof reff, "%s/tokenizer.json", ref);
    size_t n1, n2;
    char *a = slurp(final, &n1), *b = slurp(reff, &n2);
    ck_assert_int_eq((long)n1, TOKENIZER_SIZE);
    ck_assert_int_eq((long)n2, TOKENIZER_SIZE);
    ck_assert(memcmp(a, b, n1) == 0);
    free(a);
    free(b);
    snprintf(final, sizeof final, "%s/tokenizer.json.part", dir);
    ck_assert_int_eq(access(final, F_OK), -1);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_atomic_no_partial_under_final_name)
{
    struct np_hf_client *c = client(TOKEN, 1);
    struct np_error err;
    enum np_hf_fetch what = NP_HF_FETCHED;
    char dir[400], final[500], part[500];
    snprintf(dir, sizeof dir, "%s/atomic", tmp);
    snprintf(final, sizeof final, "%s/tokenizer.json", dir);
    snprintf(part, sizeof part, "%s/tokenizer.json.part", dir);
    free(ctl("cut?bytes=5000&n=1"));
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_E_IO);
    ck_assert_msg(strstr(err.text, "gave up after 1 attempt"), "%s", err.text);
    ck_assert_int_eq(access(final, F_OK), -1);
    ck_assert_int_eq(file_size(part), 5000);
    /* the next run resumes the .part */
    free(ctl("reset"));
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(file_size(final), TOKENIZER_SIZE);
    ck_assert_int_eq(access(part, F_OK), -1);
    char *log = ctl("log");
    ck_assert_msg(count(log, "\"range\": \"bytes=5000-\", \"status\": 206") == 1, "%s", log);
    free(log);
    /* a stale .part longer than the file (416) starts over */
    unlink(final);
    FILE *f = fopen(part, "w");
    for (long i = 0; i < TOKENIZER_SIZE + 10; i++)
        fputc('x', f);
    fclose(f);
    np_hf_client_free(c);
    c = client(TOKEN, 3);
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(file_size(final), TOKENIZER_SIZE);
    size_t n;
    char *b = slurp(final, &n);
    ck_assert(b[0] == '{');
    free(b);
    np_hf_client_free(c);
}
END_TEST

static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Issue 23: an HTML login page answered 200, and a body cut without a Content-Length, never become
 * the final file; a rerun downloads it properly; a broken file an earlier run kept is replaced. */
START_TEST(test_bad_bodies_never_final)
{
    struct np_hf_client *c = client(TOKEN, 1);
    struct np_error err;
    enum np_hf_fetch what;
    char dir[400], final[500], part[500];
    snprintf(dir, sizeof dir, "%s/badbody", tmp);
    snprintf(final, sizeof final, "%s/config.json", dir);
    snprintf(part, sizeof part, "%s/config.json.part", dir);
    free(ctl("reset"));
    free(ctl("html?n=1"));
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "config.json", dir, &what, NULL, &err), NP_E_HTTP);
    ck_assert_msg(strstr(err.text, "HTML page"), "%s", err.text);
    ck_assert_int_eq(access(final, F_OK), -1);
    ck_assert_int_eq(access(part, F_OK), -1);
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "config.json", dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_FETCHED);
    /* tokenizer.json cut at 1000 bytes, no Content-Length: not valid JSON, not kept */
    snprintf(final, sizeof final, "%s/tokenizer.json", dir);
    free(ctl("short?bytes=1000&n=1"));
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "not valid JSON"), "%s", err.text);
    ck_assert_int_eq(access(final, F_OK), -1);
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(file_size(final), TOKENIZER_SIZE);
    /* an HTML page an earlier version kept as tokenizer.json: replaced at the next run */
    put_text(final, "<!DOCTYPE html><html>Log in</html>");
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_FETCHED);
    ck_assert_int_eq(file_size(final), TOKENIZER_SIZE);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_absent_optional_and_denied_file)
{
    struct np_hf_client *c = client(TOKEN, 3);
    struct np_error err;
    enum np_hf_fetch what = NP_HF_FETCHED;
    char dir[400], p[500];
    snprintf(dir, sizeof dir, "%s/nogen", tmp);
    ck_assert_int_eq(np_hf_fetch_file(c, "acme/nogen-model", NULL, "generation_config.json", dir, &what, NULL, &err),
                     NP_OK);
    ck_assert_int_eq(what, NP_HF_ABSENT);
    snprintf(p, sizeof p, "%s/generation_config.json", dir);
    ck_assert_int_eq(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/generation_config.json.part", dir);
    ck_assert_int_eq(access(p, F_OK), -1);
    /* empty file */
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "empty.txt", dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_FETCHED);
    snprintf(p, sizeof p, "%s/empty.txt", dir);
    ck_assert_int_eq(file_size(p), 0);
    /* a file of a denied repo: access message, nothing written */
    ck_assert_int_eq(np_hf_fetch_file(c, "acme/denied-model", NULL, "config.json", dir, &what, NULL, &err),
                     NP_E_HTTP);
    ck_assert_ptr_nonnull(strstr(err.text, "HTTP 403"));
    snprintf(p, sizeof p, "%s/config.json", dir);
    ck_assert_int_eq(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/config.json.part", dir);
    ck_assert_int_eq(access(p, F_OK), -1);
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "../etc", dir, &what, NULL, &err), NP_E_INVALID);
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_token_never_written)
{
    struct np_hf_client *c = client(TOKEN, 2);
    struct np_error err;
    enum np_hf_fetch what;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/hf/%s", tmp, REPO);
    for (const struct np_hf_file_spec *f = np_hf_model_files; f->name; f++) {
        ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, f->name, dir, &what, NULL, &err), NP_OK);
        /* the loopback Hub serves a Llama repository: no GPT-2 vocab.json/merges.txt (optional) */
        ck_assert(what == NP_HF_FETCHED || (!f->required && what == NP_HF_ABSENT));
    }
    free(ctl("cut?bytes=777&n=1"));
    snprintf(dir, sizeof dir, "%s/partial", tmp);
    np_hf_client_free(c);
    c = client(TOKEN, 1);
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", dir, &what, NULL, &err), NP_E_IO);
    ck_assert(!strstr(err.text, TOKEN));
    ck_assert_int_eq(np_hf_check_access(c, "acme/denied-model", NULL, NULL, &err), NP_E_HTTP);
    ck_assert(!strstr(err.text, TOKEN));
    ck_assert_msg(!tree_contains(tmp, TOKEN), "the token was written under %s", tmp);
    ck_assert_msg(!tree_contains(server_dir, TOKEN), "the token reached the server's log");
    np_hf_client_free(c);
}
END_TEST

START_TEST(test_bad_options_and_connection_refused)
{
    struct np_hf_client *c = NULL;
    struct np_error err;
    struct np_hf_opts o = {.endpoint = "ftp://example.org"};
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_E_INVALID);
    ck_assert_str_eq(err.source, "HF_ENDPOINT");
    ck_assert_ptr_null(c);
    o.endpoint = "http://";
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_E_INVALID);
    o.endpoint = "http://x y";
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_E_INVALID);
    o.endpoint = NULL;
    o.token = "hf_abc\r\nX-Injected: 1";
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_E_INVALID);
    ck_assert_str_eq(err.source, "HF_TOKEN");
    ck_assert(!strstr(err.text, "hf_abc"));
    o.token = NULL;
    o.endpoint = "https://huggingface.co///";
    ck_assert_int_eq(np_hf_client_new(&o, &c, &err), NP_OK);
    char *u = np_hf_model_url(c, REPO);
    ck_assert_str_eq(u, "https://huggingface.co/" REPO);
    free(u);
    np_hf_client_free(c);

    /* nothing listens on port 1: retried, then NP_E_IO */
    struct np_hf_opts r = {.endpoint = "http://127.0.0.1:1", .token = TOKEN, .max_attempts = 2,
                           .backoff_initial_ms = 10, .connect_timeout_s = 2};
    ck_assert_int_eq(np_hf_client_new(&r, &c, &err), NP_OK);
    ck_assert_int_eq(np_hf_check_access(c, REPO, NULL, NULL, &err), NP_E_IO);
    ck_assert_msg(strstr(err.text, "gave up after 2 attempts"), "%s", err.text);
    np_hf_client_free(c);

    /* cancellation */
    volatile sig_atomic_t cancel = 1;
    struct np_hf_opts k = {.endpoint = endpoint, .token = TOKEN, .cancel = &cancel};
    ck_assert_int_eq(np_hf_client_new(&k, &c, &err), NP_OK);
    enum np_hf_fetch what;
    ck_assert_int_eq(np_hf_fetch_file(c, REPO, NULL, "tokenizer.json", tmp, &what, NULL, &err), NP_E_IO);
    ck_assert_ptr_nonnull(strstr(err.text, "interrupted"));
    char p[400];
    snprintf(p, sizeof p, "%s/tokenizer.json", tmp);
    ck_assert_int_eq(access(p, F_OK), -1);
    np_hf_client_free(c);
}
END_TEST

/* Data set files (SQuAD for fine-tuning): public without a token, a folder in the
 * path, resumed after a cut, stored under the last part of the name; a gated data
 * set's 401/403 name the data set's page; a ".." part is refused before any request. */
START_TEST(test_dataset_files)
{
    struct np_hf_client *c = client(NULL, 3);
    struct np_error err;
    enum np_hf_fetch what;
    long long bytes = 0;
    char dir[400], final[500], ref[400], reff[500];
    snprintf(ref, sizeof ref, "%s/ref", tmp);
    snprintf(dir, sizeof dir, "%s/datasets/squad", tmp);
    const char *file = "plain_text/train-00000-of-00001.parquet";
    ck_assert_msg(np_hf_fetch_dataset_file(c, "rajpurkar/squad", NULL, file, ref, &what, &bytes, &err) == NP_OK, "%s",
                  err.text);
    ck_assert_int_eq(what, NP_HF_FETCHED);
    ck_assert_int_eq(bytes, 4 + 8192 * 32 + 4);
    free(ctl("reset"));
    free(ctl("cut?bytes=70000&n=1"));
    ck_assert_int_eq(np_hf_fetch_dataset_file(c, "rajpurkar/squad", NULL, file, dir, &what, &bytes, &err), NP_OK);
    char *log = ctl("log");
    ck_assert_msg(count(log, "/datasets/rajpurkar/squad/resolve/main/plain_text/train-00000-of-00001.parquet") == 2,
                  "%s", log);
    ck_assert_msg(count(log, "\"range\": \"bytes=70000-\", \"status\": 206") == 1, "%s", log);
    ck_assert_msg(count(log, "\"auth\": \"none\"") == 2, "%s", log);
    free(log);
    snprintf(final, sizeof final, "%s/train-00000-of-00001.parquet", dir);
    snprintf(reff, sizeof reff, "%s/train-00000-of-00001.parquet", ref);
    size_t n1, n2;
    char *a = slurp(final, &n1), *b = slurp(reff, &n2);
    ck_assert(a && b && n1 == n2 && memcmp(a, b, n1) == 0);
    free(a);
    free(b);
    ck_assert_int_eq(np_hf_fetch_dataset_file(c, "rajpurkar/squad", NULL, file, dir, &what, NULL, &err), NP_OK);
    ck_assert_int_eq(what, NP_HF_PRESENT);
    /* absent file: nothing written */
    ck_assert_int_eq(np_hf_fetch_dataset_file(c, "rajpurkar/squad", NULL, "plain_text/missing.parquet", dir, &what,
                                              NULL, &err),
                     NP_OK);
    ck_assert_int_eq(what, NP_HF_ABSENT);
    /* path checks before any request */
    free(ctl("reset"));
    ck_assert_int_eq(np_hf_fetch_dataset_file(c, "rajpurkar/squad", NULL, "plain_text/../x.parquet", dir, &what,
                                              NULL, &err),
                     NP_E_INVALID);
    ck_assert_int_eq(np_hf_fetch_dataset_file(c, "rajpurkar/squad", NULL, "/x.parquet", dir, &what, NULL, &err),
                     NP_E_INVALID);
    log = ctl("log");
    ck_assert_str_eq(log, "");
    free(log);
    /* gated data set */
    ck_assert_int_eq(np_hf_fetch_dataset_file(c, "acme/gated-set", NULL, "a/b.parquet", dir, &what, NULL, &err),
                     NP_E_HTTP);
    ck_assert_msg(strstr(err.text, "HTTP 401") && strstr(err.text, "/datasets/acme/gated-set") &&
                      strstr(err.text, "data set"),
                  "%s", err.text);
    np_hf_client_free(c);
    c = client(TOKEN, 3);
    ck_assert_int_eq(np_hf_fetch_dataset_file(c, "acme/gated-denied-set", NULL, "a/b.parquet", dir, &what, NULL, &err),
                     NP_E_HTTP);
    ck_assert_msg(strstr(err.text, "HTTP 403") && strstr(err.text, "/datasets/acme/gated-denied-set"), "%s",
                  err.text);
    snprintf(final, sizeof final, "%s/b.parquet", dir);
    ck_assert_int_eq(access(final, F_OK), -1);
    np_hf_client_free(c);
}
END_TEST

/* Write text to dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static int shard_any(const char *name)
{
    return name != NULL;
}

static int space_none(const char *path, double *bytes)
{
    (void)path;
    *bytes = 1000;
    return 0;
}

/* An AutoModel from_pretrained model's weights index, read from disk (every file is
 * already there: no request): the shards it names (unique), its total size, and the
 * refusals of a bad index, each with the shards read before it (np_automodel_stage,
 * stage_automodel.c, over np_hf_weight_index). */
START_TEST(test_weight_index_automodel)
{
    struct np_automodel_spec spec = {.from_pretrained = 1};
    char repo[] = "acme/weights", size[] = "1b";
    struct np_model m = {.size = size};
    m.hf_repo = repo;
    m.automodel = &spec;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/hf", tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    static const char *const small[] = {"config.json", "generation_config.json", "tokenizer.json",
                                        "tokenizer_config.json", "special_tokens_map.json",
                                        "model-1.safetensors", "model-2.safetensors", NULL};
    for (size_t i = 0; small[i]; i++)
        put(dir, small[i], "{}\n");
    struct np_hf_client *c = client(TOKEN, 1);
    struct np_automodel_staged sd;
    struct np_error err;
    /* shard 1 named twice: staged once; total_size read */
    put(dir, "model.safetensors.index.json",
        "{\"metadata\": {\"total_size\": 6}, \"weight_map\": {\"a\": \"model-1.safetensors\", "
        "\"b\": \"model-2.safetensors\", \"c\": \"model-1.safetensors\"}}");
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, NULL, &sd, &err), NP_OK);
    ck_assert_int_eq(sd.shards, 2);
    ck_assert_int_eq(sd.present, 8);
    ck_assert(sd.weights_total == 6);
    /* no total_size: -1, nothing to check */
    put(dir, "model.safetensors.index.json", "{\"weight_map\": {\"a\": \"model-1.safetensors\"}}");
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, NULL, &sd, &err), NP_OK);
    ck_assert(sd.weights_total == -1);
    ck_assert_int_eq(sd.shards, 1);
    /* a total larger than what is there, and no room: refused naming the sizes */
    put(dir, "model.safetensors.index.json",
        "{\"metadata\": {\"total_size\": 5e9}, \"weight_map\": {\"a\": \"model-1.safetensors\"}}");
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, space_none, &sd, &err), NP_E_IO);
    ck_assert_msg(strstr(err.text, "acme/weights: the weights need 5.0 GB more (5.0 GB in all, 1 shards)"), "%s",
                  err.text);
    /* a shard with a path, after a good one: refused by key, the good one counted */
    put(dir, "model.safetensors.index.json",
        "{\"weight_map\": {\"a\": \"model-1.safetensors\", \"b\": \"../x.safetensors\"}}");
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, NULL, &sd, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "weight_map.b: expected a shard file name"), "%s", err.text);
    ck_assert_int_eq(sd.shards, 1);
    put(dir, "model.safetensors.index.json", "{\"weight_map\": {\"a\": 7}}");
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, NULL, &sd, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "weight_map.a: expected a shard file name"), "%s", err.text);
    put(dir, "model.safetensors.index.json", "{\"weight_map\": {}}");
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, NULL, &sd, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "weight_map: expected a non-empty object"), "%s", err.text);
    ck_assert_int_eq(sd.shards, 0);
    /* a cut index (not JSON) staged by an earlier run is downloaded again (issue 23: reruns repair) ... */
    put(dir, "model.safetensors.index.json", "{\"weight_map\": [\n");
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, NULL, &sd, &err), NP_OK);
    char *rlog = ctl("log");
    ck_assert_msg(count(rlog, "model.safetensors.index.json\", \"auth\": \"ok\", \"range\": null, \"status\": 200") == 1,
                  "%s", rlog);
    free(rlog);
    free(ctl("reset"));
    /* ... and read, it is refused with its position */
    put(tmp, "cut.index.json", "{\"weight_map\": [\n");
    char cut[600], **shards = NULL;
    double total = 0;
    snprintf(cut, sizeof cut, "%s/cut.index.json", tmp);
    ck_assert_int_eq(np_hf_weight_index(cut, shard_any, 512, &shards, &total, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.source, "cut.index.json") && err.line == 2, "%s:%d: %s", err.source, err.line, err.text);
    /* more than 512 distinct shards: refused at the 513th, 512 counted */
    char *big = malloc(600 * 40 + 64);
    ck_assert_ptr_nonnull(big);
    size_t n = (size_t)sprintf(big, "{\"weight_map\": {");
    for (int i = 0; i < 600; i++)
        n += (size_t)sprintf(big + n, "%s\"k%d\": \"s%d.safetensors\"", i ? ", " : "", i, i);
    strcpy(big + n, "}}");
    put(dir, "model.safetensors.index.json", big);
    free(big);
    ck_assert_int_eq(np_automodel_stage(c, &m, dir, NULL, &sd, &err), NP_E_NOMEM);
    ck_assert_msg(strstr(err.text, "more than 512 shards"), "%s", err.text);
    ck_assert_int_eq(sd.shards, 512);
    char *log = ctl("log");
    ck_assert_msg(count(log, "\"method\"") == 0, "a request was made: %s", log);
    free(log);
    np_hf_client_free(c);
}
END_TEST

int main(void)
{
    np_set_quiet(1);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    server_start();
    Suite *s = suite_create("hf");
    TCase *tc = tcase_create("hf");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_access_ok);
    tcase_add_test(tc, test_auth_check);
    tcase_add_test(tc, test_access_401_no_token);
    tcase_add_test(tc, test_access_401_bad_token);
    tcase_add_test(tc, test_access_403_and_404);
    tcase_add_test(tc, test_retry_503);
    tcase_add_test(tc, test_fetch_redirect_and_present);
    tcase_add_test(tc, test_resume_after_cut);
    tcase_add_test(tc, test_atomic_no_partial_under_final_name);
    tcase_add_test(tc, test_absent_optional_and_denied_file);
    tcase_add_test(tc, test_bad_bodies_never_final);
    tcase_add_test(tc, test_token_never_written);
    tcase_add_test(tc, test_bad_options_and_connection_refused);
    tcase_add_test(tc, test_dataset_files);
    tcase_add_test(tc, test_weight_index_automodel);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    server_stop();
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
