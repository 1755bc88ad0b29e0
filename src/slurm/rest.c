/* slurm_rest.c - the slurmrestd backend: submit and follow jobs over Slurm's REST API.
 *
 * libcurl does every HTTP exchange (one easy handle per launch: one connection),
 * Jansson builds every request body and reads every reply.  The API version is
 * found by pinging rest_apis[] newest first (v0.0.45 ... v0.0.38); every version
 * difference is a column of that table.  Only connect failures are retried: no
 * request is ever sent twice.
 */
#include "nemoperf/slurm/rest.h"
#include "nemoperf/util/curl_dyn.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/slurm/sbatch_env.h"
#include "nemoperf/job/kind.h"
#include "nemoperf/slurm/timelimit.h"
#include "nemoperf/util/version.h"
#include "nemoperf/util/shell.h"

#define REST_BODY_MAX (64L * 1024 * 1024) /* refuse replies larger than this */

/* Every difference between API versions, newest first.  Each row with a release in
 * the last column runs against that real slurmrestd in tests/e2e/40-*.sh (cluster up
 * --slurm X) and has recorded replies in tests/data/rest/.  Sources (SchedMD/slurm,
 * src/plugins/data_parser/<version>/parsers.c, and src/slurmrestd/plugins/openapi/
 * slurmctld/jobs.c):
 * - exclusivity: "shared" takes the flags "none", "oversubscribe", "user", "mcs" from
 *   v0.0.39 on (slurm-23-02-8-1 v0.0.39 parsers.c:5391 JOB_SHARED); "exclusive" is
 *   deprecated from v0.0.40 (slurm-24-11-5-1 v0.0.41 parsers.c:8032 add_parse_deprec)
 *   and unknown from v0.0.42 ("Ignoring unknown field", only a warning: the job runs
 *   shared; tests/data/rest/v0.0.4x-submit-unknown-field.json).  22.05's document
 *   lists "true" for exclusive, but only "exclusive", "user" and "mcs" are accepted
 *   (tests/data/rest/v0.0.38-submit-error-400.json).
 * - ping: v0.0.38 "ping":"UP"; v0.0.39-v0.0.41 "pinged":"UP"|"DOWN"; v0.0.42-v0.0.44
 *   add "responding"; v0.0.45 keeps only "responding" (master v0.0.45 parsers.c:10213
 *   CONTROLLER_PING; tests/data/rest/v0.0.4x-ping-down.json).
 * - jobs/state?job_id=..: from v0.0.42 (replies: tests/data/rest/v0.0.4x-jobs-state.json);
 *   before it GET job/{id}.  The top-level "script" is deprecated from v0.0.41: job.script. */
static const struct np_rest_api rest_apis[] = {
#define REST_NEW NP_REST_ENV_ARRAY, NP_REST_NUM_NO_VAL, NP_REST_NODES_MINMAX, "tres_per_node", "gres/gpu:", NP_REST_EXCL_SHARED
    /* version             exclusivity etc.  script              ping                     --wait asks     tested on */
    {"v0.0.45", REST_NEW, NP_REST_SCRIPT_JOB, NP_REST_PING_RESPONDING, NP_REST_QUERY_STATE, "26.05"},
    {"v0.0.44", REST_NEW, NP_REST_SCRIPT_JOB, NP_REST_PING_RESPONDING, NP_REST_QUERY_STATE, "26.05"},
    {"v0.0.43", REST_NEW, NP_REST_SCRIPT_JOB, NP_REST_PING_RESPONDING, NP_REST_QUERY_STATE, "26.05"},
    {"v0.0.42", REST_NEW, NP_REST_SCRIPT_JOB, NP_REST_PING_RESPONDING, NP_REST_QUERY_STATE, "26.05"},
    {"v0.0.41", REST_NEW, NP_REST_SCRIPT_JOB, NP_REST_PING_PINGED, NP_REST_QUERY_JOB, "24.11"},
    {"v0.0.40", REST_NEW, NP_REST_SCRIPT_TOP, NP_REST_PING_PINGED, NP_REST_QUERY_JOB, "24.11"},
    {"v0.0.39", REST_NEW, NP_REST_SCRIPT_TOP, NP_REST_PING_PINGED, NP_REST_QUERY_JOB, NULL}, /* 23.02: not in Debian */
#undef REST_NEW
    {"v0.0.38", NP_REST_ENV_OBJECT, NP_REST_NUM_PLAIN, NP_REST_NODES_RANGE, "gpus_per_node", "", NP_REST_EXCL_STRING,
     NP_REST_SCRIPT_TOP, NP_REST_PING_PING, NP_REST_QUERY_JOB, "22.05"},
};
#define REST_NAPIS (sizeof rest_apis / sizeof rest_apis[0])

/* Variables of the submitter's environment a job gets, besides those the script
 * exports and HF_TOKEN (sbatch --export=ALL would pass all of them; slurmrestd
 * passes only what the request names).  SLURM_CONF is set by slurmd itself. */
static const char *const rest_passthrough[] = {"LANG", "LC_ALL", "TZ", "TMPDIR", "LD_LIBRARY_PATH", NULL};
#define REST_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

const struct np_rest_api *np_rest_apis(size_t *n)
{
    if (n)
        *n = REST_NAPIS;
    return rest_apis;
}

const struct np_rest_api *np_rest_api_find(const char *version)
{
    for (size_t i = 0; version && i < REST_NAPIS; i++)
        if (strcmp(rest_apis[i].version, version) == 0)
            return &rest_apis[i];
    return NULL;
}

/* ---- URL ---- */

void np_rest_url_free(struct np_rest_url *u)
{
    if (!u)
        return;
    free(u->socket);
    free(u->base);
    free(u->display);
    memset(u, 0, sizeof *u);
}

enum np_status np_rest_url_parse(const char *url, struct np_rest_url *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    if (!url || !*url)
        return np_error_set(err, NP_E_INVALID, "SLURMRESTD_URL", 0, 0,
                            "not set; SLURM_SUBMIT=rest needs unix:/path/to/rest.sock or http(s)://host:port");
    if (strncmp(url, "unix:", 5) == 0) {
        const char *p = url + 5;
        while (p[0] == '/' && p[1] == '/')
            p++; /* unix:///run/x.sock */
        if (p[0] != '/' || p[1] == '\0')
            return np_error_set(err, NP_E_INVALID, "SLURMRESTD_URL", 0, 0,
                                "%.300s: the socket path must be absolute (unix:/run/slurmrestd.sock)", url);
        out->socket = strdup(p);
        out->base = strdup("http://localhost");
        size_t dl = strlen(p) + 6;
        out->display = malloc(dl);
        if (out->display)
            snprintf(out->display, dl, "unix:%s", p);
        if (!out->socket || !out->base || !out->display) {
            np_rest_url_free(out);
            return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        }
        return NP_OK;
    }
    enum np_status lst = np_curl_load(err);
    if (lst != NP_OK)
        return lst;
    CURLU *h = curl_url();
    if (!h)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    char *scheme = NULL, *query = NULL, *full = NULL, *shown = NULL;
    enum np_status st = NP_OK;
    /* messages show the URL without user:password, so they cannot leak a password */
    if (curl_url_set(h, CURLUPART_URL, url, 0) != CURLUE_OK || curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
        st = np_error_set(err, NP_E_INVALID, "SLURMRESTD_URL", 0, 0,
                          "not a URL nemoperf can use; allowed: unix:/path/to/rest.sock, http://host:port, "
                          "https://host:port");
    } else if (curl_url_get(h, CURLUPART_QUERY, &query, 0) == CURLUE_OK && query) {
        st = np_error_set(err, NP_E_INVALID, "SLURMRESTD_URL", 0, 0, "must not carry a query string (?...)");
    } else if (curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK ||
               curl_url_get(h, CURLUPART_URL, &full, 0) != CURLUE_OK ||
               curl_url_set(h, CURLUPART_USER, NULL, 0) != CURLUE_OK ||
               curl_url_set(h, CURLUPART_PASSWORD, NULL, 0) != CURLUE_OK ||
               curl_url_get(h, CURLUPART_URL, &shown, 0) != CURLUE_OK) {
        st = np_error_set(err, NP_E_INVALID, "SLURMRESTD_URL", 0, 0, "cannot be parsed");
    } else {
        size_t n = strlen(full);
        while (n > 0 && full[n - 1] == '/')
            n--;
        out->base = strndup(full, n);
        n = strlen(shown);
        while (n > 0 && shown[n - 1] == '/')
            n--;
        out->display = strndup(shown, n);
        if (!out->base || !out->display) {
            np_rest_url_free(out);
            st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        }
    }
    curl_free(scheme);
    curl_free(query);
    curl_free(full);
    curl_free(shown);
    curl_url_cleanup(h);
    return st;
}

/* ---- job description ---- */

long np_rest_time_minutes(const char *s)
{
    if (!s || !np_time_limit_valid(s))
        return -1;
    long days = 0, f[3] = {0, 0, 0};
    int n = 0;
    const char *p = s;
    const char *dash = strchr(s, '-');
    if (dash) {
        days = strtol(p, NULL, 10);
        p = dash + 1;
    }
    while (*p && n < 3) {
        char *end;
        f[n++] = strtol(p, &end, 10);
        p = *end == ':' ? end + 1 : end;
        if (!*end)
            break;
    }
    long h = 0, m = 0, sec = 0;
    if (dash) {
        h = f[0];
        m = n > 1 ? f[1] : 0;
        sec = n > 2 ? f[2] : 0;
    } else if (n == 1) {
        m = f[0];
    } else if (n == 2) {
        m = f[0];
        sec = f[1];
    } else {
        h = f[0];
        m = f[1];
        sec = f[2];
    }
    return days * 1440 + h * 60 + m + (sec + 59) / 60;
}

/* A number in the version's form; a new reference or NULL. */
static json_t *rest_number(const struct np_rest_api *api, json_int_t v)
{
    if (api->numbers == NP_REST_NUM_PLAIN)
        return json_integer(v);
    return json_pack("{s:b,s:b,s:I}", "set", 1, "infinite", 0, "number", v);
}

/* Add name=value to the environment (object or "K=V" array); 0 ok, -1 out of memory. */
static int rest_env_add(const struct np_rest_api *api, json_t *env, const char *name, const char *value)
{
    if (api->env == NP_REST_ENV_OBJECT)
        return json_object_set_new(env, name, json_string(value));
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s=%s", name, value);
    char *kv = np_buf_steal(&b);
    if (!kv)
        return -1;
    /* a later value of the same name replaces an earlier one, as in the object form */
    size_t nl = strlen(name) + 1, i;
    json_t *e;
    json_array_foreach(env, i, e) {
        const char *t = json_string_value(e);
        if (t && strncmp(t, kv, nl) == 0) {
            int rc = json_array_set_new(env, i, json_string(kv));
            free(kv);
            return rc;
        }
    }
    int rc = json_array_append_new(env, json_string(kv));
    free(kv);
    return rc;
}

enum np_status np_rest_job_body(const struct np_rest_api *api, const struct np_launch_config *c,
                                const char *script, np_env_fn env, void *env_ctx, json_t **out,
                                struct np_error *err)
{
    *out = NULL;
    if (!env)
        env = np_env_getenv;
    long minutes = np_rest_time_minutes(c->time_limit);
    if (minutes < 0)
        return np_error_set(err, NP_E_INVALID, "TIME_LIMIT", 0, 0, "%s: not a Slurm time limit", c->time_limit);
    char *pat = np_slurm_pattern_escape(c->experiment_dir);
    struct np_buf ob;
    np_buf_init(&ob);
    if (pat)
        np_buf_appendf(&ob, "%s/sbatch_%s_%%j.out", pat, c->job_name);
    free(pat);
    char *output = np_buf_steal(&ob);
    json_t *job = json_object(), *envj = api->env == NP_REST_ENV_OBJECT ? json_object() : json_array();
    json_t *body = json_object();
    int bad = !output || !job || !envj || !body;
    /* what the #SBATCH lines of script.c say, field by field (slurmrestd ignores them) */
    if (!bad) {
        bad |= json_object_set_new(job, "name", json_string(c->job_name));
        if (api->nodes == NP_REST_NODES_RANGE) {
            bad |= json_object_set_new(job, "nodes", json_pack("[ii]", c->nodes, c->nodes));
        } else {
            bad |= json_object_set_new(job, "minimum_nodes", json_integer(c->nodes));
            bad |= json_object_set_new(job, "maximum_nodes", json_integer(c->nodes));
        }
        bad |= json_object_set_new(job, "tasks_per_node", json_integer(c->gpus_per_node));
        bad |= json_object_set_new(job, "tasks", json_integer((json_int_t)c->nodes * c->gpus_per_node));
        if (api->exclusive == NP_REST_EXCL_SHARED)
            bad |= json_object_set_new(job, "shared", json_pack("[s]", "none"));
        else
            bad |= json_object_set_new(job, "exclusive", json_string("exclusive"));
        bad |= json_object_set_new(job, "memory_per_node", rest_number(api, 0)); /* --mem=0: all of it */
        bad |= json_object_set_new(job, "open_mode", json_string("append"));
        bad |= json_object_set_new(job, "time_limit", rest_number(api, minutes));
        bad |= json_object_set_new(job, "current_working_directory", json_string(c->experiment_dir));
        bad |= json_object_set_new(job, "standard_output", json_string(output));
        if (c->account)
            bad |= json_object_set_new(job, "account", json_string(c->account));
        if (c->partition)
            bad |= json_object_set_new(job, "partition", json_string(c->partition));
        if (c->gres_gpus) {
            struct np_buf gb;
            np_buf_init(&gb);
            np_buf_appendf(&gb, "%s%s", api->gpus_prefix, c->gres_gpus);
            char *g = np_buf_steal(&gb);
            bad |= !g || json_object_set_new(job, api->gpus_key, json_string(g));
            free(g);
        }
        bad |= json_object_set_new(job, "requeue", json_boolean(c->retries > 0)); /* NEMOPERF_MAX_RETRIES */
    }
    /* the user's other SBATCH_* settings, as sbatch would have read them */
    if (!bad) {
        enum np_status sst = np_sbatch_rest_fields(env, env_ctx, job, err);
        if (sst != NP_OK) {
            free(output);
            json_decref(job);
            json_decref(envj);
            json_decref(body);
            return sst;
        }
    }
    /* environment: always sent (the server refuses a job without it) */
    if (!bad) {
        const char *path = env(env_ctx, "PATH");
        bad |= rest_env_add(api, envj, "PATH", path ? path : REST_DEFAULT_PATH);
        for (size_t i = 0; rest_passthrough[i]; i++) {
            const char *v = env(env_ctx, rest_passthrough[i]);
            if (v)
                bad |= rest_env_add(api, envj, rest_passthrough[i], v);
        }
        struct np_script_var vars[NP_SCRIPT_MAX_VARS];
        size_t nv = np_script_vars(c, vars, NP_SCRIPT_MAX_VARS);
        for (size_t i = 0; i < nv; i++)
            bad |= rest_env_add(api, envj, vars[i].name, vars[i].value);
        bad |= json_object_set(job, "environment", envj);
        bad |= json_object_set_new(api->script == NP_REST_SCRIPT_JOB ? job : body, "script",
                                   json_string(script ? script : ""));
        bad |= json_object_set(body, "job", job);
    }
    free(output);
    json_decref(job);
    json_decref(envj);
    if (bad) {
        json_decref(body);
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    *out = body;
    return NP_OK;
}

/* ---- replies ---- */

/* The reply as one printable line of at most max bytes (control bytes -> ' '),
 * into buf. */
static void rest_snippet(const char *body, size_t len, char *buf, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; body && i < len && k + 4 < size; i++) {
        unsigned char ch = (unsigned char)body[i];
        if (ch < 0x20 || ch == 0x7f) {
            if (k > 0 && buf[k - 1] != ' ')
                buf[k++] = ' ';
        } else {
            buf[k++] = (char)ch;
        }
    }
    while (k > 0 && buf[k - 1] == ' ')
        k--;
    if (body && len > 0 && k + 4 >= size && size > 4) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = '\0';
}

char *np_rest_list_text(const json_t *body, const char *key)
{
    const json_t *errs = json_is_object(body) && key ? json_object_get(body, key) : NULL;
    if (!json_is_array(errs) || json_array_size(errs) == 0)
        return NULL;
    struct np_buf b;
    np_buf_init(&b);
    size_t i;
    const json_t *e;
    int any = 0;
    json_array_foreach(errs, i, e) {
        const char *desc = NULL, *what = NULL;
        json_int_t code = 0;
        int has_code = 0;
        if (json_is_string(e)) {
            desc = json_string_value(e);
        } else if (json_is_object(e)) {
            desc = json_string_value(json_object_get(e, "description"));
            what = json_string_value(json_object_get(e, "error"));
            const json_t *c = json_object_get(e, "error_number");
            if (!json_is_integer(c))
                c = json_object_get(e, "error_code");
            if (json_is_integer(c)) {
                code = json_integer_value(c);
                has_code = code != 0 && code != -1;
            }
        }
        if (desc && !*desc)
            desc = NULL;
        if (what && (!*what || (desc && strcmp(what, "Unspecified error") == 0)))
            what = NULL;
        if (!desc && !what && !has_code)
            continue;
        np_buf_append(&b, any ? "; " : "");
        if (desc)
            np_buf_appendf(&b, "%.300s", desc);
        if (what)
            np_buf_appendf(&b, "%s%.300s", desc ? ": " : "", what);
        if (has_code)
            np_buf_appendf(&b, "%s(code %lld)", desc || what ? " " : "", (long long)code);
        any = 1;
    }
    if (!any) { /* entries, but none with a readable text: still reported */
        size_t n = json_array_size(errs), kl = strlen(key);
        np_buf_appendf(&b, "the reply lists %zu %.*s without a readable text", n,
                       (int)(n == 1 && kl > 1 && key[kl - 1] == 's' ? kl - 1 : kl), key);
    }
    return np_buf_steal(&b);
}

char *np_rest_errors_text(const json_t *body)
{
    return np_rest_list_text(body, "errors");
}

/* Decode body as a JSON object; NULL (err set, naming the HTTP status and the start
 * of the body) when it is not. */
static json_t *rest_decode(long http, const char *body, size_t len, const char *what, struct np_error *err)
{
    json_error_t je;
    json_t *j = body && len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (json_is_object(j))
        return j;
    char snip[200];
    rest_snippet(body, len, snip, sizeof snip);
    if (j)
        np_error_set(err, http >= 400 ? NP_E_SLURM : NP_E_PARSE, what, 0, 0,
                     "HTTP %ld: the reply is JSON but not an object: %s", http, snip);
    else if (!len)
        np_error_set(err, http >= 400 ? NP_E_SLURM : NP_E_PARSE, what, 0, 0, "HTTP %ld with an empty reply", http);
    else if (http >= 400)
        np_error_set(err, NP_E_SLURM, what, 0, 0, "HTTP %ld: %s", http, snip);
    else
        np_error_set(err, NP_E_PARSE, what, 0, 0, "HTTP %ld: the reply is not JSON (%s at byte %d): %s", http, je.text,
                     je.position, snip);
    json_decref(j);
    return NULL;
}

/* HTTP >= 400 or a non-empty errors[]: NP_E_SLURM with the server's text. */
static enum np_status rest_check_errors(long http, const json_t *j, const char *what, struct np_error *err)
{
    char *t = np_rest_errors_text(j);
    enum np_status st = NP_OK;
    if (t || http >= 400)
        st = np_error_set(err, NP_E_SLURM, what, 0, 0, "HTTP %ld: %s", http, t ? t : "(no error text in the reply)");
    free(t);
    return st;
}

/* Does one pings[] entry say its controller is up, in the form of the version? */
static int rest_ping_up(const struct np_rest_api *api, const json_t *p)
{
    const char *ping = json_string_value(json_object_get(p, "ping"));
    const char *pinged = json_string_value(json_object_get(p, "pinged"));
    const json_t *resp = json_object_get(p, "responding");
    if (!api) /* form unknown: any of them, and an entry with none of them counts as up */
        return (ping && strcmp(ping, "UP") == 0) || (pinged && strcmp(pinged, "UP") == 0) || json_is_true(resp) ||
               (!ping && !pinged && !resp);
    switch (api->ping) {
    case NP_REST_PING_PING:
        return ping && strcmp(ping, "UP") == 0;
    case NP_REST_PING_PINGED:
        return pinged && strcmp(pinged, "UP") == 0;
    case NP_REST_PING_RESPONDING:
        return json_is_true(resp);
    }
    return 0;
}

enum np_status np_rest_parse_ping(const struct np_rest_api *api, long http, const char *body, size_t len,
                                  struct np_error *err)
{
    json_t *j = rest_decode(http, body, len, "ping", err);
    if (!j)
        return http >= 400 ? NP_E_SLURM : NP_E_PARSE;
    enum np_status st = rest_check_errors(http, j, "ping", err);
    const json_t *pings = json_object_get(j, "pings");
    if (st == NP_OK && !json_is_array(pings))
        st = np_error_set(err, NP_E_PARSE, "ping", 0, 0, "HTTP %ld: no \"pings\" array in the reply", http);
    if (st == NP_OK) {
        size_t i, up = 0, n = json_array_size(pings);
        const json_t *p;
        const char *why = NULL;
        json_array_foreach(pings, i, p) {
            if (rest_ping_up(api, p))
                up++;
            else if (!why) /* v0.0.45 says why in "status" */
                why = json_string_value(json_object_get(p, "status"));
        }
        if (n > 0 && up == 0)
            st = np_error_set(err, NP_E_SLURM, "ping", 0, 0, "slurmrestd answers, but no slurmctld is UP%s%.200s",
                              why ? ": " : "", why ? why : "");
    }
    json_decref(j);
    return st;
}

/* A job id given as a number or as a string of digits; a new string or NULL. */
static char *rest_job_id(const json_t *v)
{
    char buf[32];
    if (json_is_integer(v) && json_integer_value(v) > 0) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        return strdup(buf);
    }
    const char *s = json_string_value(v);
    if (!s || !*s || strlen(s) > 20)
        return NULL;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return NULL;
    return strdup(s);
}

void np_rest_submit_reply_free(struct np_rest_submit_reply *r)
{
    if (!r)
        return;
    free(r->job_id);
    free(r->notes);
    free(r->dropped);
    memset(r, 0, sizeof *r);
}

/* The request fields warnings[] says were ignored ("Ignoring unknown field "x" ...",
 * source "#/job/x/"), as "job/x, job/y"; a new string or NULL. */
static char *rest_dropped(const json_t *j)
{
    const json_t *w = json_object_get(j, "warnings");
    size_t i;
    const json_t *e;
    struct np_buf b;
    np_buf_init(&b);
    json_array_foreach(w, i, e) {
        const char *d = json_string_value(json_is_object(e) ? json_object_get(e, "description") : e);
        if (!d || (!strstr(d, "Ignoring") && !strstr(d, "ignored") && !strstr(d, "nknown field")))
            continue;
        const char *src = json_string_value(json_object_get(e, "source"));
        size_t n = src ? strlen(src) : 0;
        if (src && strncmp(src, "#/", 2) == 0) {
            src += 2;
            n -= 2;
        }
        while (n > 0 && src[n - 1] == '/')
            n--;
        if (n > 0)
            np_buf_appendf(&b, "%s%.*s", b.len ? ", " : "", (int)(n > 100 ? 100 : n), src);
        else
            np_buf_appendf(&b, "%s\"%.200s\"", b.len ? ", " : "", d);
    }
    char *t = np_buf_steal(&b);
    if (t && !*t) {
        free(t);
        t = NULL;
    }
    return t;
}

enum np_status np_rest_parse_submit(long http, const char *body, size_t len, struct np_rest_submit_reply *out,
                                    struct np_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *j = rest_decode(http, body, len, "job/submit", err);
    if (!j)
        return http >= 400 ? NP_E_SLURM : NP_E_PARSE;
    const json_t *id = json_object_get(j, "job_id");
    if (!id) /* v0.0.39-v0.0.41 also nest it in "result" */
        id = json_object_get(json_object_get(j, "result"), "job_id");
    out->job_id = rest_job_id(id);
    enum np_status st = NP_OK;
    if (out->job_id) {
        /* the job exists: whatever else the reply says is told, not a refusal
         * (24.11 can answer a job id beside errors[]) */
        char *w = np_rest_list_text(j, "warnings"), *e = np_rest_errors_text(j);
        if (w || e) {
            struct np_buf b;
            np_buf_init(&b);
            np_buf_appendf(&b, "%s%s%s%s", w ? w : "", w && e ? "; " : "", e ? "errors: " : "", e ? e : "");
            out->notes = np_buf_steal(&b);
        }
        free(w);
        free(e);
        out->dropped = rest_dropped(j);
    } else {
        st = rest_check_errors(http, j, "job/submit", err);
        if (st == NP_OK)
            st = np_error_set(err, NP_E_PARSE, "job/submit", 0, 0,
                              "HTTP %ld: the reply has no usable \"job_id\" (got %s)", http,
                              !id ? "none" : json_is_string(id) ? "a non-numeric string"
                                           : json_is_integer(id) ? "a number <= 0" : "another type");
    }
    json_decref(j);
    return st;
}

/* job_state as one word list: "RUNNING" or ["PENDING","REQUEUED"] -> "PENDING,REQUEUED". */
static char *rest_state_text(const json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (!json_is_array(v))
        return NULL;
    struct np_buf b;
    np_buf_init(&b);
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) {
        if (json_is_string(e))
            np_buf_appendf(&b, "%s%s", b.len ? "," : "", json_string_value(e));
    }
    char *t = np_buf_steal(&b);
    if (t && !*t) {
        free(t);
        return NULL;
    }
    return t;
}

/* A reply about a job the controller does not know: HTTP 404 (24.11+) or errors[]
 * holding only 2017 "Invalid job id specified" (22.05 answers 500), and no job. */
static int rest_unknown_job(long http, const json_t *j)
{
    if (json_array_size(json_object_get(j, "jobs")) > 0)
        return 0;
    const json_t *errs = json_object_get(j, "errors");
    size_t i, n2017 = 0;
    const json_t *e;
    json_array_foreach(errs, i, e) {
        if (json_integer_value(json_object_get(e, "error_number")) == 2017)
            n2017++;
    }
    if (n2017 > 0 && n2017 == json_array_size(errs))
        return 1;
    return http == 404 && json_array_size(errs) == 0;
}

/* Which jobs of a reply's "jobs" array a parser keeps, and how it reads them. */
struct rest_pick {
    int by_id;            /* 1: the jobs of ids (jobs, job/{id}, jobs/state); 0: by comment */
    char *const *ids;     /* by_id: the wanted ids */
    size_t n;
    const char *tag;      /* by comment: the tag (a job's name can change, its tag cannot) */
};

/* 1 when element e (job id id) is one p keeps. */
static int rest_pick_keeps(const struct rest_pick *p, const json_t *e, const char *id)
{
    if (p->by_id) {
        for (size_t k = 0; k < p->n; k++)
            if (strcmp(p->ids[k], id) == 0)
                return 1;
        return 0;
    }
    /* "comment": a string up to v0.0.40, {"job","administrator","system"} from v0.0.41 */
    const json_t *cj = json_object_get(e, "comment");
    const char *c = json_is_object(cj) ? json_string_value(json_object_get(cj, "job")) : json_string_value(cj);
    /* the tag alone: SBATCH_JOB_NAME renames a job, its tag stays (issue 23) */
    return c && p->tag && strcmp(c, p->tag) == 0;
}

/* The jobs p keeps of a reply holding a "jobs" array, appended to out (reset first),
 * each with its state ("?" when unreadable: still reported) and, by id, its reason.
 * By id, a job the controller does not know (rest_unknown_job) is an empty list. */
static enum np_status rest_parse_job_array(long http, const char *body, size_t len, const struct rest_pick *p,
                                           struct np_job_list *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *j = rest_decode(http, body, len, "jobs", err);
    if (!j)
        return http >= 400 ? NP_E_SLURM : NP_E_PARSE;
    if (p->by_id && rest_unknown_job(http, j)) {
        json_decref(j);
        return NP_OK;
    }
    enum np_status st = rest_check_errors(http, j, "jobs", err);
    const json_t *jobs = json_object_get(j, "jobs");
    if (st == NP_OK && !json_is_array(jobs))
        st = np_error_set(err, NP_E_PARSE, "jobs", 0, 0, "HTTP %ld: no \"jobs\" array in the reply", http);
    size_t i;
    const json_t *e;
    if (st == NP_OK) {
        json_array_foreach(jobs, i, e) {
            /* an array task of jobs/state is "7_2": never one of ours (nemoperf submits no arrays) */
            char *id = rest_job_id(json_object_get(e, "job_id"));
            if (!id || !rest_pick_keeps(p, e, id)) {
                free(id);
                continue;
            }
            const json_t *sv = json_object_get(e, "job_state"); /* jobs, job/{id} */
            if (!sv && p->by_id)
                sv = json_object_get(e, "state"); /* jobs/state (v0.0.42+) */
            char *state = rest_state_text(sv);
            const char *reason = p->by_id ? json_string_value(json_object_get(e, "state_reason")) : NULL;
            if (reason && (!*reason || strcmp(reason, "None") == 0))
                reason = NULL;
            int rc = np_job_list_add(out, id, state ? state : "?", reason);
            free(id);
            free(state);
            if (rc != 0) {
                st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
                break;
            }
        }
    }
    if (st != NP_OK)
        np_job_list_free(out);
    json_decref(j);
    return st;
}

enum np_status np_rest_parse_jobs(long http, const char *body, size_t len, char *const *ids, size_t n,
                                  struct np_job_list *out, struct np_error *err)
{
    struct rest_pick p = {.by_id = 1, .ids = ids, .n = n};
    return rest_parse_job_array(http, body, len, &p, out, err);
}

/* Compare "v0.0.41" and "v0.0.45" by their numbers (qsort, newest first). */
static int rest_version_cmp(const void *a, const void *b)
{
    unsigned x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
    sscanf(*(const char *const *)a, "v%u.%u.%u", &x[0], &x[1], &x[2]);
    sscanf(*(const char *const *)b, "v%u.%u.%u", &y[0], &y[1], &y[2]);
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? 1 : -1;
    return 0;
}

char *np_rest_openapi_versions(const char *body, size_t len)
{
    json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    const json_t *paths = json_object_get(j, "paths");
    char *found[32];
    size_t nf = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)paths, key, v) {
        if (strncmp(key, "/slurm/v", 8) != 0)
            continue;
        size_t n = strcspn(key + 7, "/");
        if (n < 2 || n > 15 || strspn(key + 8, "0123456789.") != n - 1)
            continue;
        int seen = 0;
        for (size_t i = 0; i < nf && !seen; i++)
            seen = strlen(found[i]) == n && strncmp(found[i], key + 7, n) == 0;
        if (!seen && nf < sizeof found / sizeof found[0]) {
            found[nf] = strndup(key + 7, n);
            if (found[nf])
                nf++;
        }
    }
    json_decref(j);
    qsort(found, nf, sizeof found[0], rest_version_cmp);
    struct np_buf b;
    np_buf_init(&b);
    for (size_t i = 0; i < nf; i++) {
        np_buf_appendf(&b, "%s%s", i ? ", " : "", found[i]);
        free(found[i]);
    }
    char *t = np_buf_steal(&b);
    if (t && !*t) {
        free(t);
        t = NULL;
    }
    return t;
}

/* ---- the backend ---- */

struct rest_impl {
    CURL *curl;                 /* one handle: its connection is reused */
    struct curl_slist *headers; /* Accept, Content-Type, X-SLURM-USER-NAME/-TOKEN */
    struct np_rest_url url;
    char *user;                 /* sent user name, or NULL */
    int have_token;
    const struct np_rest_api *api;
    int timeout_s, retries;
    np_env_fn env;
    void *env_ctx;
    long requests, connections;
    char errbuf[CURL_ERROR_SIZE];
    struct np_buf resp;
};

static size_t rest_write_cb(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct np_buf *b = userdata;
    size_t n = size * nmemb;
    if ((long)(b->len + n) > REST_BODY_MAX || np_buf_appendn(b, data, n) != 0)
        return 0; /* curl reports a write error */
    return n;
}

static void rest_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Explain a connect failure: the socket file is missing, refused, not permitted ... */
static void rest_connect_error(struct rest_impl *im, CURLcode cc, long os_errno, struct np_error *err)
{
    const char *why = im->errbuf[0] ? im->errbuf : curl_easy_strerror(cc);
    if (im->url.socket) {
        struct stat st;
        if (stat(im->url.socket, &st) != 0)
            np_error_set(err, NP_E_HTTP, im->url.display, 0, 0,
                         "cannot connect to slurmrestd: the socket %s does not exist (%s); is slurmrestd running? "
                         "check SLURMRESTD_URL", im->url.socket, strerror(errno));
        else if (!S_ISSOCK(st.st_mode))
            np_error_set(err, NP_E_HTTP, im->url.display, 0, 0, "cannot connect to slurmrestd: %s is not a socket",
                         im->url.socket);
        else
            np_error_set(err, NP_E_HTTP, im->url.display, 0, 0,
                         "cannot connect to slurmrestd: %s; is slurmrestd running?",
                         os_errno ? strerror((int)os_errno) : why);
        return;
    }
    np_error_set(err, NP_E_HTTP, im->url.display, 0, 0, "cannot connect to slurmrestd: %s%s%s; is slurmrestd running?",
                 os_errno == ECONNREFUSED ? "connection refused" : why, os_errno == ECONNREFUSED ? " " : "",
                 os_errno == ECONNREFUSED ? "(nothing listens there)" : "");
}

/* One exchange; the reply in im->resp (NUL-terminated), its status in *http.
 * Connect failures (the request certainly did not leave) are retried with
 * backoff; anything after that is not.  sent (may be NULL) is set to 1 when the
 * request may have reached the server.  A request with sent (a submission: not
 * idempotent) goes over a connection of its own that is closed after it (issue 23):
 * libcurl re-sends a request, POST included, on a new connection when a reused one
 * closes before any reply byte (Curl_retry_request, lib/transfer.c: "Connection died,
 * retrying a fresh connect", up to 5 times; CURLOPT_FORBID_RETRY_ON_REUSE turns that off
 * from 8.16.0 only).  A fresh connection is never "reused", so a lost reply is an
 * error here (CURLE_GOT_NOTHING / CURLE_RECV_ERROR), outcome unknown, never a second job. */
static enum np_status rest_request(struct rest_impl *im, const char *method, const char *path, const char *body,
                                   long *http, int *sent, struct np_error *err)
{
    *http = 0;
    if (sent)
        *sent = 0;
    struct np_buf u;
    np_buf_init(&u);
    np_buf_appendf(&u, "%s%s", im->url.base, path);
    char *url = np_buf_steal(&u);
    if (!url)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    CURL *h = im->curl;
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, strcmp(method, "POST") == 0 ? NULL : method);
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") == 0 ? NULL : method);
    }
    long once = sent != NULL;
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, once);
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, once);
#if LIBCURL_VERSION_NUM >= 0x081000 /* an enum value, not a macro */
    curl_easy_setopt(h, CURLOPT_FORBID_RETRY_ON_REUSE, once);
#endif
    enum np_status st = NP_OK;
    double delay = 0.25;
    for (int attempt = 0;; attempt++) {
        np_buf_free(&im->resp);
        np_buf_init(&im->resp);
        im->errbuf[0] = '\0';
        CURLcode cc = curl_easy_perform(h);
        im->requests++;
        long nconn = 0, os_errno = 0;
        curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &nconn);
        im->connections += nconn;
        if (cc == CURLE_OK) {
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, http);
            if (sent)
                *sent = 1;
            if (im->resp.failed)
                st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
            break;
        }
        curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
        int not_sent = cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
                       cc == CURLE_COULDNT_RESOLVE_PROXY;
        if (not_sent && attempt < im->retries) {
            rest_sleep(delay);
            delay = delay * 2 > 2.0 ? 2.0 : delay * 2;
            continue;
        }
        if (not_sent) {
            rest_connect_error(im, cc, os_errno, err);
            st = NP_E_HTTP;
        } else {
            if (sent)
                *sent = 1;
            char big[64];
            snprintf(big, sizeof big, "the reply is larger than %ld MiB: not read", REST_BODY_MAX >> 20);
            st = np_error_set(err, NP_E_HTTP, im->url.display, 0, 0, "%s %s: %s", method, path,
                              cc == CURLE_WRITE_ERROR && !im->resp.failed ? big /* rest_write_cb's limit */
                              : im->errbuf[0]                            ? im->errbuf
                                                                         : curl_easy_strerror(cc));
        }
        break;
    }
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
    free(url);
    return st;
}

/* Turn a refused request into the clearest message: 401/403 (missing or refused
 * credentials), and a token the controller rejected, which 22.05 reports as a
 * server error after the controller closed the connection. */
static enum np_status rest_refused(struct rest_impl *im, long http, const struct np_error *why, const char *what,
                                   struct np_error *err)
{
    /* why->text starts "HTTP <code>: " (rest_decode / rest_check_errors); say it once */
    const char *text = why->text;
    if (strncmp(text, "HTTP ", 5) == 0 && strstr(text, ": "))
        text = strstr(text, ": ") + 2;
    if (http == 401 || http == 403)
        return np_error_set(err, NP_E_SLURM, im->url.display, 0, 0,
                            "%s: authentication failed (HTTP %ld %s: %s); %s", what, http,
                            http == 401 ? "Unauthorized" : "Forbidden", text,
                            im->have_token ? "SLURM_JWT or SLURM_USER was not accepted (get a token with "
                                             "`scontrol token`)"
                            : im->url.socket ? "with rest_auth/local run as the user slurmrestd runs as, or set "
                                               "SLURM_JWT and SLURM_USER"
                                             : "set SLURM_JWT (from `scontrol token`) and SLURM_USER");
    if (im->have_token && http >= 500 &&
        (strstr(why->text, "unable to load") || strstr(why->text, "Zero Bytes") || strstr(why->text, "(code 5005)") ||
         strstr(why->text, "authentication") || strstr(why->text, "Authentication")))
        return np_error_set(err, NP_E_SLURM, im->url.display, 0, 0,
                            "%s: authentication failed: the controller rejected the request made with SLURM_JWT for "
                            "user %s (HTTP %ld: %s); the token is probably expired, signed with another key or "
                            "issued for another user (get one with `scontrol token`)",
                            what, im->user ? im->user : "?", http, text);
    return np_error_set(err, NP_E_SLURM, im->url.display, 0, 0, "%s: %s", what, why->text);
}

enum np_status np_slurm_rest_connect(struct np_backend *b, struct np_error *err)
{
    struct rest_impl *im = b->impl;
    if (im->api)
        return NP_OK;
    struct np_buf tried;
    np_buf_init(&tried);
    for (size_t i = 0; i < REST_NAPIS; i++) {
        char path[64];
        snprintf(path, sizeof path, "/slurm/%s/ping", rest_apis[i].version);
        long http = 0;
        enum np_status st = rest_request(im, "GET", path, NULL, &http, NULL, err);
        if (st != NP_OK) {
            np_buf_free(&tried);
            return st;
        }
        if (http == 404) { /* this version is not served */
            np_buf_appendf(&tried, "%s%s", tried.len ? ", " : "", rest_apis[i].version);
            continue;
        }
        struct np_error why;
        st = np_rest_parse_ping(&rest_apis[i], http, im->resp.data, im->resp.len, &why);
        if (st != NP_OK) {
            np_buf_free(&tried);
            char what[80];
            snprintf(what, sizeof what, "GET /slurm/%s/ping", rest_apis[i].version);
            if (http == 401 || http == 403 || (im->have_token && http >= 500))
                return rest_refused(im, http, &why, what, err);
            if (im->have_token && http == 200 && strstr(why.text, "no slurmctld is UP"))
                /* 24.11+: a token the controller refuses makes its ping fail: "DOWN" */
                return np_error_set(err, NP_E_SLURM, im->url.display, 0, 0,
                                    "%s: %s: slurmctld answered no ping made with SLURM_JWT for user %s; either "
                                    "authentication failed (the token is expired, signed with another key or "
                                    "issued for another user: get one with `scontrol token`) or slurmctld is down",
                                    what, why.text, im->user ? im->user : "?");
            return np_error_set(err, st == NP_E_PARSE ? NP_E_PARSE : NP_E_SLURM, im->url.display, 0, 0, "%s: %s",
                                what, why.text);
        }
        im->api = &rest_apis[i];
        np_buf_free(&tried);
        return NP_OK;
    }
    char *t = np_buf_steal(&tried);
    /* which versions does it serve?  Its OpenAPI document lists their paths */
    long http = 0;
    char *served = NULL;
    struct np_error ignored;
    if (rest_request(im, "GET", "/openapi/v3", NULL, &http, NULL, &ignored) == NP_OK && http == 200)
        served = np_rest_openapi_versions(im->resp.data, im->resp.len);
    /* a definite answer, not a failure to connect: bad input (exit 2), refused before any
     * folder is made (issue 23) */
    np_error_set(err, NP_E_INVALID, im->url.display, 0, 0,
                 "slurmrestd serves none of the API versions nemoperf knows (%s all answered 404); it serves %s; "
                 "start slurmrestd with a version nemoperf knows enabled: -d data_parser/%s (Slurm 23.02 and "
                 "newer; -d list shows what it has) or -s openapi/v0.0.38 (Slurm 22.05)",
                 t ? t : "?", served ? served : "no slurm API version its /openapi/v3 document names",
                 rest_apis[0].version);
    free(served);
    free(t);
    return NP_E_INVALID;
}

/* The job exists but without a setting nemoperf asked for (say exclusivity): an
 * error.  The job is cancelled so that it does not run as it was not meant to; its
 * id stays in res (the manifest records it) either way. */
static enum np_status rest_dropped_setting(struct rest_impl *im, struct np_submit_result *res, const char *dropped,
                                           const char *notes, struct np_error *err)
{
    char path[96];
    snprintf(path, sizeof path, "/slurm/%s/job/%s", im->api->version, res->job_id);
    long http = 0;
    struct np_error why;
    enum np_status st = rest_request(im, "DELETE", path, NULL, &http, NULL, &why);
    json_t *j = st == NP_OK ? json_loadb(im->resp.data, im->resp.len, 0, NULL) : NULL;
    char *e = np_rest_errors_text(j);
    int cancelled = st == NP_OK && http == 200 && !e;
    json_decref(j);
    /* the job exists either way: its id is recorded; a job not cancelled runs (issue 13) */
    res->outcome = cancelled ? NP_SUBMIT_REFUSED : NP_SUBMIT_ACCEPTED;
    np_error_set(err, NP_E_SLURM, im->url.display, 0, 0,
                 "slurmrestd (%s) accepted job %s but ignored %s (%s); %s", im->api->version, res->job_id, dropped,
                 notes ? notes : "", cancelled ? "the job was cancelled"
                 : "it could not be cancelled: cancel it with `scancel` before launching again");
    free(e);
    free(res->message);
    res->message = strdup(err ? err->text : "setting dropped");
    return NP_E_SLURM;
}

static enum np_status rest_submit(struct np_backend *b, const struct np_submit_request *req,
                                  struct np_submit_result *res, struct np_error *err)
{
    struct rest_impl *im = b->impl;
    memset(res, 0, sizeof *res);
    enum np_status st = NP_OK;
    if (!req->config)
        st = np_error_set(err, NP_E_INTERNAL, "slurmrestd", 0, 0, "no job configuration to describe");
    if (st == NP_OK)
        st = np_slurm_rest_connect(b, err);
    json_t *body = NULL;
    if (st == NP_OK)
        st = np_rest_job_body(im->api, req->config, req->script_text, im->env, im->env_ctx, &body, err);
    /* the tag as the job's comment (every API version has "comment"): rest_find looks for it */
    if (st == NP_OK && req->tag && json_object_set_new(json_object_get(body, "job"), "comment", json_string(req->tag)))
        st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (st == NP_OK && !text)
        st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    res->outcome = NP_SUBMIT_REFUSED;
    if (st != NP_OK) {
        free(text);
        res->message = strdup(err ? err->text : "submission failed");
        return st;
    }
    char path[64];
    snprintf(path, sizeof path, "/slurm/%s/job/submit", im->api->version);
    long http = 0;
    int sent = 0;
    st = rest_request(im, "POST", path, text, &http, &sent, err);
    /* the body holds no token (never HF_TOKEN: issue 23); wiped before freeing all the same */
    memset(text, 0, strlen(text));
    free(text);
    if (st != NP_OK) {
        if (sent) { /* a timeout or broken connection after sending: it may have been accepted */
            np_error_set(err, st, err ? err->source : "", 0, 0, "%s; the job may or may not have been "
                         "submitted", err ? err->text : "");
            res->outcome = NP_SUBMIT_UNKNOWN;
        }
        res->message = strdup(err ? err->text : "submission failed");
        return st;
    }
    struct np_error why;
    struct np_rest_submit_reply reply;
    st = np_rest_parse_submit(http, im->resp.data, im->resp.len, &reply, &why);
    if (st == NP_OK) {
        res->job_id = reply.job_id;
        reply.job_id = NULL;
        if (reply.dropped)
            st = rest_dropped_setting(im, res, reply.dropped, reply.notes, err);
        else if (reply.notes)
            np_warnf("job %s: slurmrestd (%s) says: %s", res->job_id, im->api->version, reply.notes);
    }
    np_rest_submit_reply_free(&reply);
    if (st != NP_OK && !res->job_id) {
        char what[80];
        snprintf(what, sizeof what, "POST %s", path);
        /* only 401/403 is a refusal before acceptance; a 5xx came after the request was sent (a proxy's 502/504,
         * a restarting slurmrestd, 22.05's answer to a token it rejects): the job may exist, and the query by
         * tag settles it, as for a lost reply (issue 39: a 5xx with a token was taken for a refusal, so a job
         * slurmrestd had accepted was recorded nowhere and --skip-existing submitted it again) */
        int refused = http == 401 || http == 403, unknown = !refused && (http < 400 || http >= 500);
        if (refused || (im->have_token && http >= 500))
            st = rest_refused(im, http, &why, what, err);
        else
            st = np_error_set(err, st == NP_E_PARSE ? NP_E_PARSE : NP_E_SLURM, im->url.display, 0, 0,
                              "%s: slurmrestd refused the job: %s", what, why.text);
        if (st == NP_E_PARSE)
            st = NP_E_SLURM;
        if (unknown && err)
            np_error_set(err, st, err->source, 0, 0, "%s; the job may or may not have been submitted", err->text);
        res->message = strdup(err ? err->text : why.text);
        if (unknown)
            res->outcome = NP_SUBMIT_UNKNOWN;
    } else if (st == NP_OK) {
        res->outcome = NP_SUBMIT_ACCEPTED;
    } /* else: a job without a setting it was asked for: rest_dropped_setting recorded what became of it
       * (cancelled: refused; still there: accepted), never overwritten here */
    return st;
}

enum np_status np_rest_parse_tagged(long http, const char *body, size_t len, const char *tag, const char *job_name,
                                    struct np_job_list *out, struct np_error *err)
{
    (void)job_name;
    struct rest_pick p = {.by_id = 0, .tag = tag};
    return rest_parse_job_array(http, body, len, &p, out, err);
}

/* GET /slurm/vX/jobs, kept: the jobs whose comment is the tag. */
static enum np_status rest_find(struct np_backend *b, const char *tag, const char *job_name, struct np_job_list *out,
                                struct np_error *err)
{
    struct rest_impl *im = b->impl;
    memset(out, 0, sizeof *out);
    enum np_status st = np_slurm_rest_connect(b, err);
    if (st != NP_OK)
        return st;
    char path[64];
    snprintf(path, sizeof path, "/slurm/%s/jobs", im->api->version);
    long http = 0;
    if ((st = rest_request(im, "GET", path, NULL, &http, NULL, err)) != NP_OK)
        return st;
    struct np_error why;
    st = np_rest_parse_tagged(http, im->resp.data, im->resp.len, tag, job_name, out, &why);
    if (st != NP_OK) {
        char what[80];
        snprintf(what, sizeof what, "GET %s", path);
        if (http == 401 || http == 403 || (im->have_token && http >= 500))
            return rest_refused(im, http, &why, what, err);
        return np_error_set(err, st == NP_E_NOMEM ? NP_E_NOMEM : NP_E_SLURM, im->url.display, 0, 0, "%s: %s", what,
                            why.text);
    }
    return NP_OK;
}

/* One GET of job states; its jobs appended to out. */
static enum np_status rest_query_one(struct rest_impl *im, const char *path, char *const *ids, size_t n,
                                     struct np_job_list *out, struct np_error *err)
{
    long http = 0;
    enum np_status st = rest_request(im, "GET", path, NULL, &http, NULL, err);
    if (st != NP_OK)
        return st;
    struct np_error why;
    struct np_job_list got;
    st = np_rest_parse_jobs(http, im->resp.data, im->resp.len, ids, n, &got, &why);
    if (st != NP_OK) {
        char what[80];
        snprintf(what, sizeof what, "GET %.70s", path);
        if (http == 401 || http == 403 || (im->have_token && http >= 500))
            return rest_refused(im, http, &why, what, err);
        return np_error_set(err, st == NP_E_NOMEM ? NP_E_NOMEM : NP_E_SLURM, im->url.display, 0, 0, "%s: %s", what,
                            why.text);
    }
    for (size_t i = 0; i < got.n && st == NP_OK; i++)
        if (np_job_list_add(out, got.jobs[i].job_id, got.jobs[i].state, got.jobs[i].reason) != 0)
            st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    np_job_list_free(&got);
    return st;
}

#define REST_STATE_IDS 64 /* job ids per jobs/state request (keeps the URL short) */

/* Only the jobs asked for: GET jobs/state?job_id=A&job_id=B (v0.0.42+; the
 * parameter is repeated, a comma list is refused) in groups, or GET job/{id} for
 * each job on older versions.  Never GET jobs (every job of the cluster). */
static enum np_status rest_query(struct np_backend *b, char *const *ids, size_t n, struct np_job_list *out,
                                 struct np_error *err)
{
    struct rest_impl *im = b->impl;
    memset(out, 0, sizeof *out);
    if (n == 0)
        return NP_OK;
    for (size_t i = 0; i < n; i++)
        if (!ids[i] || !*ids[i] || strlen(ids[i]) > 20 || strspn(ids[i], "0123456789") != strlen(ids[i]))
            return np_error_set(err, NP_E_INVALID, "slurmrestd", 0, 0, "%.40s: not a job id", ids[i] ? ids[i] : "");
    enum np_status st = np_slurm_rest_connect(b, err);
    for (size_t i = 0; st == NP_OK && i < n;) {
        struct np_buf p;
        np_buf_init(&p);
        size_t k = i;
        if (im->api->query == NP_REST_QUERY_STATE) {
            np_buf_appendf(&p, "/slurm/%s/jobs/state", im->api->version);
            for (; k < n && k - i < REST_STATE_IDS; k++)
                np_buf_appendf(&p, "%cjob_id=%s", k == i ? '?' : '&', ids[k]);
        } else {
            np_buf_appendf(&p, "/slurm/%s/job/%s", im->api->version, ids[k++]);
        }
        char *path = np_buf_steal(&p);
        st = path ? rest_query_one(im, path, ids + i, k - i, out, err)
                  : np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        free(path);
        i = k;
    }
    if (st != NP_OK)
        np_job_list_free(out);
    return st;
}

enum np_status np_slurm_rest_get(struct np_backend *b, const char *what, long *http, char **body, size_t *len,
                                 struct np_error *err)
{
    struct rest_impl *im = b->impl;
    *body = NULL;
    *len = 0;
    enum np_status st = np_slurm_rest_connect(b, err);
    if (st != NP_OK)
        return st;
    char path[128];
    snprintf(path, sizeof path, "/slurm/%s/%s", im->api->version, what);
    if ((st = rest_request(im, "GET", path, NULL, http, NULL, err)) != NP_OK)
        return st;
    *body = malloc(im->resp.len + 1);
    if (!*body)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    if (im->resp.len)
        memcpy(*body, im->resp.data, im->resp.len);
    (*body)[im->resp.len] = '\0';
    *len = im->resp.len;
    return NP_OK;
}

static void rest_free(struct np_backend *b)
{
    struct rest_impl *im = b->impl;
    if (im) {
        if (im->curl)
            curl_easy_cleanup(im->curl);
        for (struct curl_slist *s = im->headers; s; s = s->next)
            if (s->data)
                memset(s->data, 0, strlen(s->data)); /* the token header */
        curl_slist_free_all(im->headers);
        np_rest_url_free(&im->url);
        free(im->user);
        np_buf_free(&im->resp);
        free(im);
    }
    b->impl = NULL;
}

/* The current user's name, a new string, or NULL. */
static char *rest_current_user(void)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) == 0 && res && res->pw_name)
        return strdup(res->pw_name);
    const char *u = getenv("USER");
    return u && *u ? strdup(u) : NULL;
}

/* Append "Name: value" to the header list; 0 ok, -1 out of memory. */
static int rest_header(struct curl_slist **list, const char *name, const char *value)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s: %s", name, value);
    char *h = np_buf_steal(&b);
    if (!h)
        return -1;
    struct curl_slist *n = curl_slist_append(*list, h);
    memset(h, 0, strlen(h));
    free(h);
    if (!n)
        return -1;
    *list = n;
    return 0;
}

enum np_status np_slurm_rest_backend(struct np_backend *b, const struct np_slurm_rest_opts *o, struct np_error *err)
{
    memset(b, 0, sizeof *b);
    if (!o)
        return np_error_set(err, NP_E_INVALID, "SLURMRESTD_URL", 0, 0, "not set");
    if (o->token) {
        for (const char *p = o->token; *p; p++)
            if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
                return np_error_set(err, NP_E_INVALID, "SLURM_JWT", 0, 0,
                                    "holds white space or control characters (its value is not shown)");
    }
    if (o->user)
        for (const char *p = o->user; *p; p++)
            if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
                return np_error_set(err, NP_E_INVALID, "SLURM_USER", 0, 0, "%.100s: not a user name", o->user);
    enum np_status lst = np_curl_load(err);
    if (lst != NP_OK)
        return lst;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return np_error_set(err, NP_E_HTTP, "libcurl", 0, 0, "cannot initialise");
    struct rest_impl *im = calloc(1, sizeof *im);
    if (!im)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    b->impl = im;
    b->free = rest_free;
    enum np_status st = np_rest_url_parse(o->url, &im->url, err);
    if (st != NP_OK) {
        rest_free(b);
        return st;
    }
    im->timeout_s = o->timeout_s > 0 ? o->timeout_s : NP_REST_DEFAULT_TIMEOUT;
    im->retries = o->connect_retries < 0 ? 0 : o->connect_retries > 0 ? o->connect_retries : NP_REST_CONNECT_RETRIES;
    im->env = o->env ? o->env : np_env_getenv;
    im->env_ctx = o->env_ctx;
    im->have_token = o->token && *o->token;
    np_buf_init(&im->resp);
    int bad = rest_header(&im->headers, "Accept", "application/json") ||
              rest_header(&im->headers, "Content-Type", "application/json");
    if (!bad && im->have_token) {
        im->user = o->user && *o->user ? strdup(o->user) : rest_current_user();
        if (!im->user) {
            rest_free(b);
            return np_error_set(err, NP_E_INVALID, "SLURM_USER", 0, 0,
                                "not set and the current user has no name; set SLURM_USER");
        }
        bad = rest_header(&im->headers, "X-SLURM-USER-NAME", im->user) ||
              rest_header(&im->headers, "X-SLURM-USER-TOKEN", o->token);
    }
    im->curl = bad ? NULL : curl_easy_init();
    if (!im->curl) {
        rest_free(b);
        return np_error_set(err, NP_E_NOMEM, "libcurl", 0, 0, "cannot create a handle (out of memory?)");
    }
    CURL *h = im->curl;
    curl_easy_setopt(h, CURLOPT_VERBOSE, 0L); /* never: it would print the token header */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* a redirect would carry the token elsewhere */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, im->headers);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, im->errbuf);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)im->timeout_s);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "nemoperf/" NP_VERSION);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, rest_write_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &im->resp);
    if (im->url.socket)
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, im->url.socket);
    b->name = "rest";
    b->submit = rest_submit;
    b->query = rest_query;
    b->find = rest_find;
    return NP_OK;
}

const char *np_slurm_rest_url(const struct np_backend *b)
{
    const struct rest_impl *im = b && b->submit == rest_submit ? b->impl : NULL;
    return im ? im->url.display : NULL;
}

const char *np_slurm_rest_api(const struct np_backend *b)
{
    const struct rest_impl *im = b && b->submit == rest_submit ? b->impl : NULL;
    return im && im->api ? im->api->version : NULL;
}

void np_slurm_rest_stats(const struct np_backend *b, long *requests, long *connections)
{
    const struct rest_impl *im = b && b->submit == rest_submit ? b->impl : NULL;
    if (requests)
        *requests = im ? im->requests : 0;
    if (connections)
        *connections = im ? im->connections : 0;
}
