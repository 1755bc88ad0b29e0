/* hf.c - Hugging Face Hub client on libcurl: gated-access check and resumable downloads,
 * and the shard list of a downloaded model.safetensors.index.json (setup's weights).
 *
 * One easy handle per client (connections are reused).  Every request goes
 * through hf_transfer(), which retries connection errors, 5xx and 429 with
 * bounded exponential backoff; file bodies go to "<file>.part", resumed with a
 * Range request and renamed to the final name only when complete.
 */
#include "nemoperf/setup/hf.h"
#include "nemoperf/util/curl_dyn.h"
#include "nemoperf/util/shell.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/setup/stage.h"
#include "nemoperf/util/version.h"

const struct np_hf_file_spec np_hf_model_files[] = {
    {"config.json", 1},
    {"tokenizer.json", 0},
    {"tokenizer_config.json", 0},
    {"special_tokens_map.json", 0},
    {"generation_config.json", 0},
    /* GPT-2-style tokenizers without a tokenizer.json (GPT3's nvidia/megatron-gpt2-345m): the
     * NeMo job reads the tokenizer offline from these files */
    {"vocab.json", 0},
    {"merges.txt", 0},
    {NULL, 0},
};

#define HF_MEM_MAX (4L * 1024 * 1024) /* largest in-memory answer (API JSON, error bodies) */

struct np_hf_client {
    CURL *curl;
    struct np_hf_opts o;
    char *endpoint; /* without trailing '/' */
    char errbuf[CURL_ERROR_SIZE];
    long left_ms;   /* what is left of the request's deadline: no transfer outlives it (CURLOPT_TIMEOUT_MS) */
};

/* One request's state, shared by libcurl's callbacks. */
struct hf_xfer {
    struct np_hf_client *c;
    const char *name;      /* file name for progress, NULL for API calls */
    const char *part;      /* .part path, NULL: body to memory */
    FILE *f;
    long long offset;      /* bytes already in .part when the request started */
    long long written;     /* body bytes written to f by this request */
    int started;           /* body of a 200/206 seen */
    int range_mismatch;    /* 206 starting elsewhere than offset */
    int io_error;          /* writing .part failed (errno in io_errno) */
    int io_errno;
    long long cr_start;    /* Content-Range start of the last response, -1 */
    long retry_after;      /* Retry-After seconds of the last response, -1 */
    long long clen;        /* Content-Length of the last response, -1 */
    long long linked_size; /* the Hub's X-Linked-Size (LFS files, on the redirect), -1 */
    int html;              /* the last response is text/html: a login or error page, not a file */
    char *mem;
    size_t memlen, memcap;
};

static int hf_name_char(int ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == '-';
}

/* [A-Za-z0-9._-]+, not "." or "..", not starting with '.'. */
static int hf_name_valid(const char *s, size_t n)
{
    if (n == 0 || s[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!hf_name_char((unsigned char)s[i]))
            return 0;
    return 1;
}

int np_hf_repo_valid(const char *repo)
{
    if (!repo)
        return 0;
    const char *slash = strchr(repo, '/');
    if (!slash || strchr(slash + 1, '/'))
        return 0;
    return hf_name_valid(repo, (size_t)(slash - repo)) && hf_name_valid(slash + 1, strlen(slash + 1));
}

enum np_status np_hf_client_new(const struct np_hf_opts *opts, struct np_hf_client **out,
                                struct np_error *err)
{
    static const struct np_hf_opts none;
    *out = NULL;
    if (!opts)
        opts = &none;
    const char *ep = opts->endpoint && *opts->endpoint ? opts->endpoint : NP_HF_DEFAULT_ENDPOINT;
    size_t n = strlen(ep);
    int http = strncmp(ep, "http://", 7) == 0, https = strncmp(ep, "https://", 8) == 0;
    size_t host_at = https ? 8 : 7;
    int bad = !(http || https) || n <= host_at || ep[host_at] == '/';
    for (size_t i = 0; i < n && !bad; i++)
        if ((unsigned char)ep[i] <= ' ' || ep[i] == 0x7f || ep[i] == '?' || ep[i] == '#')
            bad = 1;
    if (bad)
        return np_error_set(err, NP_E_INVALID, "HF_ENDPOINT", 0, 0,
                            "'%s' is not an http:// or https:// URL (default %s)", ep, NP_HF_DEFAULT_ENDPOINT);
    if (opts->token)
        for (const char *t = opts->token; *t; t++)
            if ((unsigned char)*t < ' ' || *t == 0x7f)
                return np_error_set(err, NP_E_INVALID, "HF_TOKEN", 0, 0,
                                    "contains control characters (value not shown)");
    enum np_status lst = np_curl_load(err);
    if (lst != NP_OK)
        return lst;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return np_error_set(err, NP_E_INTERNAL, "libcurl", 0, 0, "initialisation failed");
    struct np_hf_client *c = calloc(1, sizeof *c);
    if (!c)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    c->o = *opts;
    while (n > host_at + 1 && ep[n - 1] == '/')
        n--;
    c->endpoint = strndup(ep, n);
    c->curl = curl_easy_init();
    if (!c->endpoint || !c->curl) {
        np_hf_client_free(c);
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    if (c->o.max_attempts <= 0)
        c->o.max_attempts = 5;
    if (c->o.backoff_initial_ms <= 0)
        c->o.backoff_initial_ms = 500;
    if (c->o.backoff_max_ms <= 0)
        c->o.backoff_max_ms = 8000;
    if (c->o.connect_timeout_s <= 0)
        c->o.connect_timeout_s = 20;
    if (c->o.stall_timeout_s <= 0)
        c->o.stall_timeout_s = 60;
    if (c->o.deadline_s <= 0)
        c->o.deadline_s = NP_HF_DEADLINE_DEFAULT;
    if (c->o.check_deadline_s <= 0)
        c->o.check_deadline_s = NP_HF_CHECK_DEADLINE_DEFAULT;
    *out = c;
    return NP_OK;
}

void np_hf_client_free(struct np_hf_client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->endpoint);
    free(c);
}

/* printf into a new string. */
static char *hf_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *hf_strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return s;
}

const char *np_hf_endpoint(const struct np_hf_client *c) { return c ? c->endpoint : NP_HF_DEFAULT_ENDPOINT; }

char *np_hf_model_url(const struct np_hf_client *c, const char *repo)
{
    return c && repo ? hf_strf("%s/%s", c->endpoint, repo) : NULL;
}

static size_t hf_header_cb(char *buf, size_t size, size_t nitems, void *userdata)
{
    struct hf_xfer *x = userdata;
    size_t n = size * nitems;
    if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) { /* a new response (after a redirect, 100...) */
        x->cr_start = -1;
        x->retry_after = -1;
        x->clen = -1;
        x->html = 0;
    } else if (n > 15 && strncasecmp(buf, "Content-Length:", 15) == 0) {
        x->clen = strtoll(buf + 15, NULL, 10);
    } else if (n > 14 && strncasecmp(buf, "X-Linked-Size:", 14) == 0) {
        x->linked_size = strtoll(buf + 14, NULL, 10);
    } else if (n > 13 && strncasecmp(buf, "Content-Type:", 13) == 0) {
        const char *v = buf + 13;
        while (*v == ' ' || *v == '\t')
            v++;
        x->html = strncasecmp(v, "text/html", 9) == 0;
    } else if (n > 14 && strncasecmp(buf, "Content-Range:", 14) == 0) {
        char line[128];
        snprintf(line, sizeof line, "%.*s", (int)(n - 14 < 127 ? n - 14 : 127), buf + 14);
        long long s;
        if (sscanf(line, " bytes %lld-", &s) == 1)
            x->cr_start = s;
    } else if (n > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
        char line[64];
        snprintf(line, sizeof line, "%.*s", (int)(n - 12 < 63 ? n - 12 : 63), buf + 12);
        long v;
        if (sscanf(line, " %ld", &v) == 1 && v >= 0)
            x->retry_after = v;
    }
    return n;
}

static int hf_mem_append(struct hf_xfer *x, const char *p, size_t n)
{
    if (x->memlen + n + 1 > (size_t)HF_MEM_MAX)
        return 0; /* keep what we have; an over-long answer is an error anyway */
    if (x->memlen + n + 1 > x->memcap) {
        size_t cap = x->memcap ? x->memcap : 4096;
        while (cap < x->memlen + n + 1)
            cap *= 2;
        char *m = realloc(x->mem, cap);
        if (!m)
            return -1;
        x->mem = m;
        x->memcap = cap;
    }
    memcpy(x->mem + x->memlen, p, n);
    x->memlen += n;
    x->mem[x->memlen] = '\0';
    return 0;
}

/* Open .part for a 200 (truncate) or 206 (append) answer.  0 or -1. */
static int hf_open_part(struct hf_xfer *x, long code)
{
    x->f = fopen(x->part, code == 206 ? "ab" : "wb");
    if (!x->f) {
        x->io_error = 1;
        x->io_errno = errno;
        return -1;
    }
    if (code != 206)
        x->offset = 0;
    return 0;
}

static size_t hf_write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct hf_xfer *x = userdata;
    size_t n = size * nmemb;
    long code = 0;
    curl_easy_getinfo(x->c->curl, CURLINFO_RESPONSE_CODE, &code);
    int body_ok = code == 200 || code == 206;
    if (!x->part || !body_ok) {
        if (hf_mem_append(x, ptr, n) < 0)
            return 0;
        return n;
    }
    if (!x->started) {
        x->started = 1;
        if (code == 206 && x->cr_start != x->offset) {
            x->range_mismatch = 1;
            return 0;
        }
        if (hf_open_part(x, code) < 0)
            return 0;
    }
    if (n && fwrite(ptr, 1, n, x->f) != n) {
        x->io_error = 1;
        x->io_errno = errno;
        return 0;
    }
    x->written += (long long)n;
    return n;
}

static int hf_xferinfo_cb(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                          curl_off_t ulnow)
{
    (void)ultotal;
    (void)ulnow;
    struct hf_xfer *x = userdata;
    if (x->c->o.cancel && *x->c->o.cancel)
        return 1;
    if (x->name && x->started && x->c->o.progress)
        x->c->o.progress(x->c->o.progress_ctx, x->name, x->offset + (long long)dlnow,
                         dltotal > 0 ? x->offset + (long long)dltotal : -1, 0);
    return 0;
}

/* One request.  Returns the curl code; *code the final HTTP status (0: none). */
static CURLcode hf_perform(struct np_hf_client *c, const char *url, struct hf_xfer *x, long *code)
{
    CURL *h = c->curl;
    curl_easy_reset(h);
    c->errbuf[0] = '\0';
    char ua[64];
    snprintf(ua, sizeof ua, "nemoperf/%s", NP_VERSION);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_VERBOSE, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, 0L); /* no token to another host on redirect */
    curl_easy_setopt(h, CURLOPT_USERAGENT, ua);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, c->o.connect_timeout_s);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->o.stall_timeout_s);
    if (c->left_ms > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->left_ms);
    if (c->o.token && *c->o.token) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, c->o.token);
    }
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, hf_header_cb);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, hf_write_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, hf_xferinfo_cb);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    char range[48];
    if (x->part && x->offset > 0) {
        snprintf(range, sizeof range, "%lld-", x->offset);
        curl_easy_setopt(h, CURLOPT_RANGE, range);
    }
    CURLcode cc = curl_easy_perform(h);
    *code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
    /* the token string is libcurl's copy: clear it from the handle now */
    curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, NULL);
    return cc;
}

static int hf_transient(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

/* Sleep ms milliseconds, waking early on cancellation.  0, or -1 when cancelled. */
static int hf_sleep(struct np_hf_client *c, long ms)
{
    while (ms > 0) {
        if (c->o.cancel && *c->o.cancel)
            return -1;
        long step = ms < 100 ? ms : 100;
        struct timespec ts = {step / 1000, (step % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
    return c->o.cancel && *c->o.cancel ? -1 : 0;
}

/* The 401/403 message: what to do, where. */
static enum np_status hf_access_error(struct np_hf_client *c, const char *kind, const char *repo, long code,
                                      struct np_error *err)
{
    /* kind: "" for a model, "datasets/" for a data set (its page is under /datasets/) */
    const char *noun = *kind ? "data set" : "model";
    int have_token = c->o.token && *c->o.token;
    if (code == 401 && !have_token)
        return np_error_set(err, NP_E_HTTP, repo, 0, 0,
                            "access denied (HTTP 401): the %s is gated and HF_TOKEN is not set; "
                            "request access on %s/%s%s and export HF_TOKEN (a read token from %s/settings/tokens)",
                            noun, c->endpoint, kind, repo, c->endpoint);
    if (code == 401)
        return np_error_set(err, NP_E_HTTP, repo, 0, 0,
                            "access denied (HTTP 401): the Hub did not accept HF_TOKEN; check HF_TOKEN "
                            "(a read token from %s/settings/tokens) and request access on %s/%s%s",
                            c->endpoint, c->endpoint, kind, repo);
    return np_error_set(err, NP_E_HTTP, repo, 0, 0,
                        "access denied (HTTP 403): this account has no access to the gated %s; "
                        "request access on %s/%s%s (the page's access form) and check that HF_TOKEN "
                        "belongs to the account that was granted access",
                        noun, c->endpoint, kind, repo);
}

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
static long hf_elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* Run the request at url with retries.  For downloads (x->part set) the
 * .part file is resumed on each attempt.  Returns NP_OK when a final answer
 * (any status not retried) arrived: *code holds it, x->mem its body for non
 * 2xx or API calls.  Errors name `what`. */
static enum np_status hf_transfer(struct np_hf_client *c, const char *url, const char *what,
                                  struct hf_xfer *x, long *code, struct np_error *err)
{
    char reason[CURL_ERROR_SIZE + 64] = "";
    /* an overall deadline: a stalled Hub costs at most this, whatever the attempts and their stall timeouts */
    long limit_s = x->part ? c->o.deadline_s : c->o.check_deadline_s;
    const char *limit_var = x->part ? "NEMOPERF_HF_DEADLINE" : "NEMOPERF_HF_CHECK_DEADLINE";
    const char *limit_what = x->part ? "a file's download" : "an access check";
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int attempt = 1;; attempt++) {
        c->left_ms = limit_s * 1000 - hf_elapsed_ms(&t0);
        if (c->left_ms <= 0)
            c->left_ms = 1;
        x->offset = 0;
        x->written = 0;
        x->started = 0;
        x->range_mismatch = 0;
        x->io_error = 0;
        x->cr_start = -1;
        x->retry_after = -1;
        x->clen = -1;
        x->linked_size = -1;
        x->html = 0;
        x->memlen = 0;
        if (x->mem)
            x->mem[0] = '\0';
        struct stat st;
        if (x->part && stat(x->part, &st) == 0 && S_ISREG(st.st_mode))
            x->offset = (long long)st.st_size;
        CURLcode cc = hf_perform(c, url, x, code);
        if (x->f) {
            int bad = fflush(x->f) != 0 || fsync(fileno(x->f)) != 0;
            if (fclose(x->f) != 0 || bad) {
                x->io_error = 1;
                x->io_errno = errno;
            }
            x->f = NULL;
        }
        if (x->name && x->started && c->o.progress)
            c->o.progress(c->o.progress_ctx, x->name, x->offset + x->written, -1, 1);
        if (c->o.cancel && *c->o.cancel)
            return np_error_set(err, NP_E_IO, what, 0, 0, "interrupted%s",
                                x->part ? " (the partial download is kept and resumed next time)" : "");
        if (x->io_error)
            return np_error_set(err, NP_E_IO, x->part, 0, 0, "cannot write: %s", strerror(x->io_errno));
        int retry = 0;
        if (x->range_mismatch) {
            unlink(x->part);
            snprintf(reason, sizeof reason, "the server resumed at the wrong offset");
            retry = 1;
        } else if (cc != CURLE_OK) {
            if (!hf_transient(cc))
                return np_error_set(err, NP_E_IO, what, 0, 0, "%s", c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
            snprintf(reason, sizeof reason, "%s", c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
            retry = 1;
        } else if (*code == 416 && x->part) {
            unlink(x->part); /* the .part does not match the file any more: start over */
            snprintf(reason, sizeof reason, "HTTP 416 for the partial download; starting over");
            retry = 1;
        } else if (*code >= 500 || *code == 429 || *code == 408) {
            snprintf(reason, sizeof reason, "HTTP %ld", *code);
            retry = 1;
        }
        if (!retry)
            return NP_OK;
        if (hf_elapsed_ms(&t0) >= limit_s * 1000)
            return np_error_set(err, *code >= 400 && cc == CURLE_OK ? NP_E_HTTP : NP_E_IO, what, 0, 0,
                                "%s (gave up after %d attempt%s in %ld s: the deadline of %s is %ld s, %s)", reason,
                                attempt, attempt == 1 ? "" : "s", hf_elapsed_ms(&t0) / 1000, limit_what, limit_s,
                                limit_var);
        if (attempt >= c->o.max_attempts)
            return np_error_set(err, *code >= 400 && cc == CURLE_OK ? NP_E_HTTP : NP_E_IO, what, 0, 0,
                                "%s (gave up after %d attempt%s)", reason, attempt, attempt == 1 ? "" : "s");
        long delay = c->o.backoff_initial_ms;
        for (int i = 1; i < attempt && delay < c->o.backoff_max_ms; i++)
            delay *= 2;
        if (x->retry_after >= 0 && cc == CURLE_OK)
            delay = x->retry_after * 1000 > delay ? x->retry_after * 1000 : delay;
        if (delay > c->o.backoff_max_ms)
            delay = c->o.backoff_max_ms;
        if (delay > limit_s * 1000 - hf_elapsed_ms(&t0))
            delay = limit_s * 1000 - hf_elapsed_ms(&t0) > 0 ? limit_s * 1000 - hf_elapsed_ms(&t0) : 0;
        char when[32];
        if (delay < 1000)
            snprintf(when, sizeof when, "%ld ms", delay);
        else
            snprintf(when, sizeof when, "%.1f s", delay / 1000.0);
        np_warnf("%s: %s; retrying in %s (attempt %d of %d; %ld s left of the %ld s deadline of %s, %s)", what,
                 reason, when, attempt + 1, c->o.max_attempts, (limit_s * 1000 - hf_elapsed_ms(&t0)) / 1000, limit_s,
                 limit_what, limit_var);
        if (hf_sleep(c, delay) < 0)
            return np_error_set(err, NP_E_IO, what, 0, 0, "interrupted");
    }
}

/* GET <endpoint>/api/models/<repo><tail>: NP_OK on 2xx, the body in x->mem and the URL in *url (both for the
 * caller to free, also on errors); 401/403 the access messages, 404 NP_E_NOTFOUND, other codes NP_E_HTTP. */
static enum np_status hf_api_get(struct np_hf_client *c, const char *repo, const char *tail, long *http_code,
                                 struct hf_xfer *x, char **url, struct np_error *err)
{
    *url = NULL;
    if (http_code)
        *http_code = 0;
    if (!np_hf_repo_valid(repo))
        return np_error_set(err, NP_E_INVALID, repo ? repo : "", 0, 0,
                            "not a Hugging Face repo id (org/name)");
    if (!(*url = hf_strf("%s/api/models/%s%s", c->endpoint, repo, tail)))
        return np_error_set(err, NP_E_NOMEM, repo, 0, 0, "out of memory");
    long code = 0;
    enum np_status st = hf_transfer(c, *url, repo, x, &code, err);
    if (http_code)
        *http_code = code;
    if (st != NP_OK)
        return st;
    if (code == 401 || code == 403)
        return hf_access_error(c, "", repo, code, err);
    if (code == 404)
        return np_error_set(err, NP_E_NOTFOUND, repo, 0, 0,
                            "no such model on %s (HTTP 404; a gated model also answers 404 to some "
                            "tokens: check the name and HF_TOKEN)", c->endpoint);
    if (code < 200 || code > 299)
        return np_error_set(err, NP_E_HTTP, repo, 0, 0, "unexpected answer HTTP %ld from %s", code, *url);
    return NP_OK;
}

/* GET <endpoint>/api/models/<repo>: *info the model description (a new reference) on NP_OK. */
static enum np_status hf_model_info(struct np_hf_client *c, const char *repo, long *http_code, json_t **info,
                                    struct np_error *err)
{
    *info = NULL;
    struct hf_xfer x = {.c = c};
    char *url;
    enum np_status st = hf_api_get(c, repo, "", http_code, &x, &url, err);
    if (st == NP_OK) {
        json_error_t je;
        json_t *j = x.mem ? json_loadb(x.mem, x.memlen, 0, &je) : NULL;
        const char *id = json_string_value(json_object_get(j, "id"));
        if (!id)
            id = json_string_value(json_object_get(j, "modelId"));
        if (!json_is_object(j) || !id)
            st = np_error_set(err, NP_E_HTTP, repo, 0, 0, "%s did not answer with a model description", url);
        else if (strcasecmp(id, repo) != 0)
            st = np_error_set(err, NP_E_HTTP, repo, 0, 0, "%s describes another model ('%s')", url, id);
        if (st == NP_OK)
            *info = j;
        else
            json_decref(j);
    }
    free(x.mem);
    free(url);
    return st;
}

enum np_status np_hf_check_access(struct np_hf_client *c, const char *repo, long *http_code, char **sha,
                                  struct np_error *err)
{
    if (sha)
        *sha = NULL;
    json_t *j;
    enum np_status st = hf_model_info(c, repo, http_code, &j, err);
    const char *s = st == NP_OK && sha ? json_string_value(json_object_get(j, "sha")) : NULL;
    if (s && !(*sha = strdup(s)))
        st = np_error_set(err, NP_E_NOMEM, repo, 0, 0, "out of memory");
    json_decref(j);
    return st;
}

enum np_status np_hf_auth_check(struct np_hf_client *c, const char *repo, long *http_code, struct np_error *err)
{
    struct hf_xfer x = {.c = c};
    char *url;
    enum np_status st = hf_api_get(c, repo, "/auth-check", http_code, &x, &url, err);
    free(x.mem);
    free(url);
    return st;
}

/* 1 when path is one or more valid names joined by '/' (no "." or ".." parts). */
static int hf_path_valid(const char *path)
{
    const char *p = path;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (!hf_name_valid(p, n) || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        if (!slash)
            return 1;
        p = slash + 1;
    }
}

/* GET url into final through part (resumed, renamed when whole); a present final is left alone.  kind and repo
 * name a Hugging Face repo for the 401/403 message, or are NULL (another server). */
/* 1 when a .json file does not parse or any file starts as an HTML page: a login or error page
 * saved under the file's name, or a cut download. */
static int hf_bad_file(const char *path, const char *base)
{
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".json") == 0) {
        json_error_t je;
        json_t *j = json_load_file(path, 0, &je);
        json_decref(j);
        if (!j)
            return 1;
    }
    char head[64] = "";
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    const char *h = head;
    while (*h == ' ' || *h == '\t' || *h == '\r' || *h == '\n')
        h++;
    return strncasecmp(h, "<!doctype html", 14) == 0 || strncasecmp(h, "<html", 5) == 0;
}

/* Before the rename (issue 23): an HTML answer, a body shorter or longer than its Content-Length
 * or the Hub's X-Linked-Size, or JSON that does not parse never becomes the final file.  A short
 * .part is kept (resumed next time); anything else is removed. */
static enum np_status hf_verify(const struct hf_xfer *x, long code, const char *part, const char *base,
                                const char *label, struct np_error *err)
{
    struct stat sb;
    long long have = stat(part, &sb) == 0 ? (long long)sb.st_size : -1;
    long long want = x->linked_size >= 0                    ? x->linked_size
                     : x->clen >= 0 && code == 200          ? x->clen
                     : x->clen >= 0 && code == 206          ? x->offset + x->clen
                                                            : -1;
    if (x->html) {
        unlink(part);
        return np_error_set(err, NP_E_HTTP, label, 0, 0, "the server answered an HTML page (Content-Type text/html), "
                            "not the file: a login or error page? (HF_ENDPOINT, a proxy); nothing kept");
    }
    if (want >= 0 && have != want) {
        if (have > want)
            unlink(part);
        return np_error_set(err, NP_E_IO, label, 0, 0, "got %lld of %lld bytes%s", have, want,
                            have < want ? "; the partial download is kept and resumed next time" : "; nothing kept");
    }
    if (hf_bad_file(part, base)) {
        unlink(part);
        return np_error_set(err, NP_E_PARSE, label, 0, 0, "the download is not valid %s (cut short, or an error "
                            "page); nothing kept", strstr(base, ".json") ? "JSON" : "(an HTML page)");
    }
    return NP_OK;
}

static enum np_status hf_fetch_url(struct np_hf_client *c, const char *kind, const char *repo, const char *url,
                                   const char *label, const char *final, const char *part, enum np_hf_fetch *what,
                                   long long *bytes, struct np_error *err)
{
    enum np_status st = NP_OK;
    struct stat sb;
    const char *base = strrchr(final, '/') ? strrchr(final, '/') + 1 : final;
    if (stat(final, &sb) == 0 && S_ISREG(sb.st_mode) && hf_bad_file(final, base)) {
        /* an earlier run kept a broken file (before issue 23): fetched again */
        np_warnf("%s: the staged %s is not a valid file (an HTML page or cut JSON); downloading it again", label,
                 final);
        unlink(final);
    }
    if (stat(final, &sb) == 0 && S_ISREG(sb.st_mode)) {
        if (what)
            *what = NP_HF_PRESENT;
        if (bytes)
            *bytes = (long long)sb.st_size;
        goto out;
    }
    struct hf_xfer x = {.c = c, .name = label, .part = part};
    long code = 0;
    st = hf_transfer(c, url, label, &x, &code, err);
    free(x.mem);
    if (st != NP_OK)
        goto out;
    if ((code == 401 || code == 403) && repo) {
        st = hf_access_error(c, kind, repo, code, err);
    } else if (code == 404) {
        unlink(part); /* a stale prefix of a file that is gone */
    } else if (code != 200 && code != 206) {
        st = np_error_set(err, NP_E_HTTP, label, 0, 0, "unexpected answer HTTP %ld from %s", code, url);
    } else {
        if (!x.started) { /* an empty body: no write callback ran */
            FILE *f = fopen(part, code == 206 ? "ab" : "wb");
            if (!f || fclose(f) != 0) {
                st = np_error_set(err, NP_E_IO, part, 0, 0, "cannot write: %s", strerror(errno));
                goto out;
            }
        }
        if ((st = hf_verify(&x, code, part, base, label, err)) != NP_OK)
            goto out;
        if (rename(part, final) != 0) {
            st = np_error_set(err, NP_E_IO, final, 0, 0, "cannot rename %s: %s", part, strerror(errno));
            goto out;
        }
        if (what)
            *what = NP_HF_FETCHED;
        if (bytes && stat(final, &sb) == 0)
            *bytes = (long long)sb.st_size;
    }
out:
    return st;
}

enum np_status np_hf_fetch_url(struct np_hf_client *c, const char *url, const char *label, const char *final,
                               enum np_hf_fetch *what, long long *bytes, struct np_error *err)
{
    if (what)
        *what = NP_HF_ABSENT;
    if (bytes)
        *bytes = 0;
    char *part = hf_strf("%s.part", final);
    if (!part)
        return np_error_set(err, NP_E_NOMEM, label, 0, 0, "out of memory");
    enum np_status st = hf_fetch_url(c, NULL, NULL, url, label, final, part, what, bytes, err);
    free(part);
    return st;
}

/* One file of a model (kind "") or data set (kind "datasets/") into
 * dest_dir/<last part of file>. */
static enum np_status hf_fetch(struct np_hf_client *c, const char *kind, const char *repo, const char *revision,
                               const char *file, const char *dest_dir, enum np_hf_fetch *what, long long *bytes,
                               struct np_error *err)
{
    if (what)
        *what = NP_HF_ABSENT;
    if (bytes)
        *bytes = 0;
    if (!revision)
        revision = NP_HF_DEFAULT_REVISION;
    if (!np_hf_repo_valid(repo))
        return np_error_set(err, NP_E_INVALID, repo ? repo : "", 0, 0, "not a Hugging Face repo id (org/name)");
    if (!file || !(*kind ? hf_path_valid(file) : hf_name_valid(file, strlen(file))) ||
        !hf_name_valid(revision, strlen(revision)))
        return np_error_set(err, NP_E_INVALID, repo, 0, 0, "bad file name or revision");
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    enum np_status st = np_stage_mkdirs(dest_dir, err);
    if (st != NP_OK)
        return st;
    char *final = hf_strf("%s/%s", dest_dir, base);
    char *part = hf_strf("%s/%s.part", dest_dir, base);
    char *url = hf_strf("%s/%s%s/resolve/%s/%s", c->endpoint, kind, repo, revision, file);
    char *label = hf_strf("%s/%s", repo, file);
    if (!final || !part || !url || !label) {
        st = np_error_set(err, NP_E_NOMEM, repo, 0, 0, "out of memory");
        goto out;
    }
    st = hf_fetch_url(c, kind, repo, url, label, final, part, what, bytes, err);
out:
    free(final);
    free(part);
    free(url);
    free(label);
    return st;
}

enum np_status np_hf_fetch_file(struct np_hf_client *c, const char *repo, const char *revision,
                                const char *file, const char *dest_dir, enum np_hf_fetch *what,
                                long long *bytes, struct np_error *err)
{
    return hf_fetch(c, "", repo, revision, file, dest_dir, what, bytes, err);
}

enum np_status np_hf_fetch_dataset_file(struct np_hf_client *c, const char *repo, const char *revision,
                                        const char *file, const char *dest_dir, enum np_hf_fetch *what,
                                        long long *bytes, struct np_error *err)
{
    return hf_fetch(c, "datasets/", repo, revision, file, dest_dir, what, bytes, err);
}

enum np_status np_hf_weight_index(const char *path, int (*shard_ok)(const char *name), size_t max, char ***shards,
                                  double *total_size, struct np_error *err)
{
    *shards = NULL;
    *total_size = -1;
    json_error_t je;
    json_t *idx = json_load_file(path, 0, &je);
    if (!idx)
        return np_error_set(err, NP_E_PARSE, path, je.line, je.column, "%s", je.text);
    json_t *ts = json_object_get(json_object_get(idx, "metadata"), "total_size");
    *total_size = json_is_number(ts) ? json_number_value(ts) : -1;
    json_t *map = json_object_get(idx, "weight_map");
    enum np_status st = NP_OK;
    if (!json_is_object(map) || json_object_size(map) == 0)
        st = np_error_set(err, NP_E_PARSE, path, 0, 0, "weight_map: expected a non-empty object");
    struct np_strv v = {0};
    const char *key;
    json_t *val;
    json_object_foreach(map, key, val) {
        if (st != NP_OK)
            break;
        const char *f = json_string_value(val);
        if (!f || !shard_ok(f)) {
            st = np_error_set(err, NP_E_PARSE, path, 0, 0, "weight_map.%s: expected a shard file name", key);
            break;
        }
        int seen = 0;
        for (size_t i = 0; i < v.n && !seen; i++)
            seen = strcmp(v.v[i], f) == 0;
        if (seen)
            continue;
        if (max && v.n == max) {
            st = np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory (or more than %zu shards)", max);
            break;
        }
        np_strv_push(&v, f);
        if (v.failed) {
            st = max ? np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory (or more than %zu shards)", max)
                     : np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
            break;
        }
    }
    json_decref(idx);
    *shards = np_strv_steal(&v);
    if (st == NP_OK && !*shards)
        st = np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
    return st;
}

enum np_status np_hf_list_files(struct np_hf_client *c, const char *repo, char ***files, struct np_error *err)
{
    *files = NULL;
    json_t *j;
    enum np_status st = hf_model_info(c, repo, NULL, &j, err);
    if (st != NP_OK)
        return st;
    json_t *sib = json_object_get(j, "siblings"), *e;
    size_t i;
    struct np_strv v = {0};
    if (!json_is_array(sib))
        st = np_error_set(err, NP_E_HTTP, repo, 0, 0, "the model description lists no files (\"siblings\")");
    json_array_foreach(sib, i, e) {
        const char *f = json_string_value(json_object_get(e, "rfilename"));
        if (st != NP_OK)
            break;
        if (!f || !hf_path_valid(f))
            st = np_error_set(err, NP_E_HTTP, repo, 0, 0, "siblings[%zu].rfilename: expected a relative file path", i);
        else
            np_strv_push(&v, f);
    }
    json_decref(j);
    if (st == NP_OK && !(*files = np_strv_steal(&v)))
        st = np_error_set(err, NP_E_NOMEM, repo, 0, 0, "out of memory");
    if (st != NP_OK)
        np_strv_free(np_strv_steal(&v));
    return st;
}
