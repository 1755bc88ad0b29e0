/* slurm_rest.h - the slurmrestd backend of np_backend (SLURM_SUBMIT=rest).
 *
 * Talks to slurmrestd with libcurl (one CURL handle, so one connection, for all
 * requests of a launch) over a unix socket ("unix:/path/rest.sock", rest_auth/local:
 * no credentials) or TCP ("http(s)://host:port[/prefix]", rest_auth/jwt: SLURM_JWT
 * and SLURM_USER sent as X-SLURM-USER-TOKEN / X-SLURM-USER-NAME headers; the token
 * is never printed, logged, put in a URL or an error message).  The API version is
 * discovered by pinging the known versions (v0.0.45 ... v0.0.38) newest first;
 * everything that differs between versions is one row of the table in slurm_rest.c,
 * described by struct np_rest_api.  Request bodies are built and replies parsed with
 * Jansson; the builders and parsers are public for tests.
 */
#ifndef NEMOPERF_SLURM_REST_H
#define NEMOPERF_SLURM_REST_H

#include <jansson.h>
#include <stddef.h>

#include "nemoperf/job/spec.h"
#include "nemoperf/util/env.h"
#include "nemoperf/util/error.h"
#include "nemoperf/slurm/backend.h"

#define NP_REST_DEFAULT_TIMEOUT 60  /* seconds one request may take */
#define NP_REST_CONNECT_RETRIES 3   /* extra attempts after a failed connect (never after that) */

/* How one API version spells the job description and its replies. */
enum np_rest_env_form { NP_REST_ENV_OBJECT = 0, NP_REST_ENV_ARRAY };    /* {"K":"V"} or ["K=V"] */
enum np_rest_num_form { NP_REST_NUM_PLAIN = 0, NP_REST_NUM_NO_VAL };    /* 30 or {"set":true,"infinite":false,"number":30} */
enum np_rest_nodes_form { NP_REST_NODES_RANGE = 0, NP_REST_NODES_MINMAX }; /* "nodes":[2,2] or minimum_/maximum_nodes */
enum np_rest_excl_form { NP_REST_EXCL_STRING = 0, NP_REST_EXCL_SHARED };   /* "exclusive":"exclusive" or "shared":["none"] */
enum np_rest_script_form { NP_REST_SCRIPT_TOP = 0, NP_REST_SCRIPT_JOB };   /* {"script":..} or {"job":{"script":..}} */
enum np_rest_ping_form {                                                   /* how pings[] says a controller is up */
    NP_REST_PING_PING = 0,   /* "ping":"UP" */
    NP_REST_PING_PINGED,     /* "pinged":"UP" ("DOWN") */
    NP_REST_PING_RESPONDING  /* "responding":true (false) */
};
enum np_rest_query_form {                                                  /* how --wait asks for its jobs */
    NP_REST_QUERY_JOB = 0,   /* GET job/{id}, one request per job */
    NP_REST_QUERY_STATE      /* GET jobs/state?job_id=A&job_id=B (repeated parameter) */
};

struct np_rest_api {
    const char *version;              /* "v0.0.38": the path component */
    enum np_rest_env_form env;
    enum np_rest_num_form numbers;    /* time_limit, memory_per_node */
    enum np_rest_nodes_form nodes;
    const char *gpus_key;             /* SBATCH_GPUS_PER_NODE goes to this field ... */
    const char *gpus_prefix;          /* ... with this prefix: "gpus_per_node":"8" or "tres_per_node":"gres/gpu:8" */
    enum np_rest_excl_form exclusive; /* sbatch --exclusive */
    enum np_rest_script_form script;
    enum np_rest_ping_form ping;
    enum np_rest_query_form query;
    const char *tested;               /* Slurm release the tests run it against ("24.11"), or NULL */
};

/* The table, newest first; *n receives its length. */
const struct np_rest_api *np_rest_apis(size_t *n);
/* The row of "v0.0.38", or NULL. */
const struct np_rest_api *np_rest_api_find(const char *version);

/* SLURMRESTD_URL split: for "unix:/p" socket = "/p" and base = "http://localhost";
 * for http(s) socket = NULL and base = the URL without a trailing '/'.  display is
 * the URL without user:password (for messages and the manifest).  Strings owned. */
struct np_rest_url {
    char *socket;
    char *base;
    char *display;
};
enum np_status np_rest_url_parse(const char *url, struct np_rest_url *out, struct np_error *err);
void np_rest_url_free(struct np_rest_url *u);

/* Slurm time limit (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S) in minutes, seconds rounded
 * up as sbatch does; -1 when invalid. */
long np_rest_time_minutes(const char *limit);

/* The POST body of job/submit for c: {"job":{...},"script":script}.  env gives the
 * submitter's variables (PATH, HF_TOKEN, ...; see slurm_rest.c for the list).
 * A new reference in *out.  NP_E_INVALID (bad time limit), NP_E_NOMEM. */
enum np_status np_rest_job_body(const struct np_rest_api *api, const struct np_launch_config *c,
                                const char *script, np_env_fn env, void *env_ctx, json_t **out,
                                struct np_error *err);

/* The server's errors[] (key "errors") or warnings[] (key "warnings") as one line
 * ("text; text (code 2000)"), a new string; NULL when there are none (or body is not
 * an object). */
char *np_rest_errors_text(const json_t *body);
char *np_rest_list_text(const json_t *body, const char *key);

/* What a job/submit reply says.  Strings owned; np_rest_submit_reply_free. */
struct np_rest_submit_reply {
    char *job_id;   /* set: the job exists (whatever else the reply says) */
    char *notes;    /* warnings[] (and errors[] beside a job id) as one line, or NULL */
    char *dropped;  /* fields of the request the server ignored ("job/exclusive, ..."), or NULL:
                       the job exists but without a setting nemoperf asked for */
};
void np_rest_submit_reply_free(struct np_rest_submit_reply *r);

/* The slurm API versions an OpenAPI document (GET /openapi/v3) lists, newest first,
 * as "v0.0.47, v0.0.46"; a new string, or NULL when it lists none. */
char *np_rest_openapi_versions(const char *body, size_t len);

/* Parse replies.  http is the status, body/len the raw reply (any bytes).  On
 * failure err names what was wrong with the server's own text; never crashes on
 * malformed JSON or unexpected types. */
/* api: the version's ping form (NULL: any); a controller that is not up is NP_E_SLURM. */
enum np_status np_rest_parse_ping(const struct np_rest_api *api, long http, const char *body, size_t len,
                                  struct np_error *err);
/* NP_OK when the reply carries a job id (out->job_id set, even beside errors[]: the job
 * exists); otherwise the server's reason in err.  out is reset first. */
enum np_status np_rest_parse_submit(long http, const char *body, size_t len, struct np_rest_submit_reply *out,
                                    struct np_error *err);
/* Jobs of ids found in a GET jobs, job/{id} or jobs/state reply, appended to out
 * (reset first).  A job the controller does not know (HTTP 404, or only error 2017
 * "Invalid job id") is absent from out, not an error. */
enum np_status np_rest_parse_jobs(long http, const char *body, size_t len, char *const *ids, size_t n,
                                  struct np_job_list *out, struct np_error *err);
/* Jobs of a GET jobs reply whose "comment" is tag (and "name" job_name, when both are
 * known), appended to out (reset first). */
enum np_status np_rest_parse_tagged(long http, const char *body, size_t len, const char *tag, const char *job_name,
                                    struct np_job_list *out, struct np_error *err);

struct np_slurm_rest_opts {
    const char *url;     /* SLURMRESTD_URL (required) */
    const char *token;   /* SLURM_JWT or NULL: no authentication headers */
    const char *user;    /* SLURM_USER; NULL: the current user (only sent with a token) */
    int timeout_s;       /* per request; 0: NP_REST_DEFAULT_TIMEOUT */
    int connect_retries; /* 0: NP_REST_CONNECT_RETRIES; -1: none */
    np_env_fn env;       /* the submitter's environment for jobs; NULL: getenv */
    void *env_ctx;
};

/* Set up the backend (nothing is sent yet; the version is discovered by the first
 * request).  NP_E_INVALID for a bad URL, NP_E_NOMEM. */
enum np_status np_slurm_rest_backend(struct np_backend *b, const struct np_slurm_rest_opts *o,
                                     struct np_error *err);
/* Connect and discover the API version now (submit does it when needed).
 * NP_E_HTTP (cannot connect, no known version), NP_E_SLURM (refused, e.g. bad token). */
enum np_status np_slurm_rest_connect(struct np_backend *b, struct np_error *err);
/* Borrowed strings, valid while b lives: the URL without credentials, and the API
 * version in use ("v0.0.38") or NULL before discovery succeeded. */
const char *np_slurm_rest_url(const struct np_backend *b);
const char *np_slurm_rest_api(const struct np_backend *b);
/* GET /slurm/<version>/<what> (e.g. "partitions"), connecting first when needed: NP_OK
 * with the HTTP status in *http and the reply in *body (a new string, caller frees;
 * *len its length); NP_E_HTTP/NP_E_SLURM with err when it could not be asked. */
enum np_status np_slurm_rest_get(struct np_backend *b, const char *what, long *http, char **body, size_t *len,
                                 struct np_error *err);
/* Requests sent and TCP/unix connections opened so far (for the benchmark). */
void np_slurm_rest_stats(const struct np_backend *b, long *requests, long *connections);

#endif
