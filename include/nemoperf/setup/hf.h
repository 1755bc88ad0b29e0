/* hf.h - a small Hugging Face Hub client (libcurl): gated-access check and file download.
 *
 * GET <endpoint>/api/models/<repo> checks that the token may read a gated repo;
 * GET <endpoint>/<repo>/resolve/<rev>/<file> downloads one file into a folder
 * through "<file>.part" (resumed with a Range request, renamed when complete).
 * Transient failures (connection errors, 5xx, 429) are retried with bounded
 * exponential backoff.  The token is borrowed, sent only as libcurl's bearer
 * credential (never in a URL, argv, file or message; libcurl does not forward
 * it to another host on a redirect), and verbose output stays off.
 */
#ifndef NEMOPERF_HF_H
#define NEMOPERF_HF_H

#include <signal.h>

#include "nemoperf/util/error.h"

#define NP_HF_DEFAULT_ENDPOINT "https://huggingface.co"
#define NP_HF_DEADLINE_DEFAULT 1800L      /* s: one file's download, retries included */
#define NP_HF_CHECK_DEADLINE_DEFAULT 120L /* s: one access check (or listing), retries included */
#define NP_HF_DEFAULT_REVISION "main"

/* The files nemoperf-setup fetches for a model; `required` ones must exist. */
struct np_hf_file_spec {
    const char *name;
    int required;
};
/* Borrowed, static; terminated by a {NULL, 0} entry. */
extern const struct np_hf_file_spec np_hf_model_files[];

/* Progress of one download: have/total bytes (total -1 when unknown); done is 1
 * on the last call for a file.  Called from inside libcurl's transfer loop. */
typedef void (*np_hf_progress_fn)(void *ctx, const char *file, long long have, long long total, int done);

struct np_hf_opts {
    const char *endpoint;       /* NULL or "": NP_HF_DEFAULT_ENDPOINT; http:// or https:// */
    const char *token;          /* borrowed; NULL or "": no Authorization header */
    int max_attempts;           /* per request, 0: 5 */
    long backoff_initial_ms;    /* first retry delay, doubled each time; 0: 500 */
    long backoff_max_ms;        /* cap of the delay (also of Retry-After); 0: 8000 */
    long connect_timeout_s;     /* 0: 20 */
    long stall_timeout_s;       /* abort a transfer below 1 byte/s for this long; 0: 60 */
    long deadline_s;            /* a download's whole time, its retries included (NEMOPERF_HF_DEADLINE); 0: 1800 */
    long check_deadline_s;      /* an API request's (the access check, a listing), retries included
                                 * (NEMOPERF_HF_CHECK_DEADLINE); 0: 120 */
    np_hf_progress_fn progress; /* NULL: none */
    void *progress_ctx;
    volatile sig_atomic_t *cancel; /* non-zero: abort the transfer (NP_E_IO); may be NULL */
};

struct np_hf_client;

/* New client (caller frees with np_hf_client_free).  Copies opts and the
 * endpoint; the token stays borrowed and must outlive the client.
 * NP_E_INVALID for an endpoint that is not http(s)://host..., NP_E_NOMEM. */
enum np_status np_hf_client_new(const struct np_hf_opts *opts, struct np_hf_client **out,
                                struct np_error *err);
void np_hf_client_free(struct np_hf_client *c);

/* 1 when repo looks like "org/name" with [A-Za-z0-9._-] parts, else 0. */
int np_hf_repo_valid(const char *repo);

/* The endpoint without trailing '/'; borrowed, valid until the client is freed. */
const char *np_hf_endpoint(const struct np_hf_client *c);

/* Model page URL "<endpoint>/<repo>"; new string or NULL. */
char *np_hf_model_url(const struct np_hf_client *c, const char *repo);

/* GET <endpoint>/api/models/<repo>.  NP_OK on 200 (a JSON object naming the
 * repo); NP_E_HTTP for 401/403 with a message telling to request access on the
 * model page (its URL) and to check HF_TOKEN; NP_E_NOTFOUND for 404; NP_E_HTTP
 * or NP_E_IO after the retries.  *http_code (may be NULL) gets the last status
 * (0 when no response).  *sha (may be NULL) gets the revision the Hub reports
 * as a new string, or NULL. */
enum np_status np_hf_check_access(struct np_hf_client *c, const char *repo, long *http_code,
                                  char **sha, struct np_error *err);
/* GET <endpoint>/api/models/<repo>/auth-check: may this token (or none) download the repo's files?  The Hub
 * describes a gated repo (np_hf_check_access) to anyone, but answers this 401 (no or wrong token) or 403 (not
 * granted) as it does the files (huggingface_hub's HfApi.auth_check).  NP_OK on 2xx; errors as
 * np_hf_check_access (the same 401/403 messages); *http_code (may be NULL) the last status, 0 when none. */
enum np_status np_hf_auth_check(struct np_hf_client *c, const char *repo, long *http_code, struct np_error *err);

/* The files of repo (GET <endpoint>/api/models/<repo>, its "siblings"' rfilename, relative paths that may name
 * subfolders): *files a new NULL-terminated vector (np_strv_free).  Errors as np_hf_check_access; NP_E_HTTP
 * when the description lists no files or a name is no plain relative path. */
enum np_status np_hf_list_files(struct np_hf_client *c, const char *repo, char ***files, struct np_error *err);

enum np_hf_fetch {
    NP_HF_FETCHED = 0,  /* downloaded now (possibly resuming a .part) */
    NP_HF_PRESENT,      /* dest_dir/<file> existed: no request made */
    NP_HF_ABSENT        /* the repo has no such file (404); nothing written */
};

/* Download <file> of repo at revision (NULL: "main") into dest_dir/<file>
 * (dest_dir is created).  *what tells which case happened; *bytes (may be
 * NULL) the size of the final file.  On failure the final name does not
 * exist and dest_dir/<file>.part may hold a resumable prefix.
 * NP_E_HTTP (401/403 as np_hf_check_access, other codes after retries),
 * NP_E_IO (local files, connection errors after retries, cancellation). */
enum np_status np_hf_fetch_file(struct np_hf_client *c, const char *repo, const char *revision,
                                const char *file, const char *dest_dir, enum np_hf_fetch *what,
                                long long *bytes, struct np_error *err);

/* The same for a data set's file: GET <endpoint>/datasets/<repo>/resolve/<rev>/<file>,
 * where file may name a subfolder ("plain_text/train-00000-of-00001.parquet");
 * it is stored as dest_dir/<its last part>.  Errors as np_hf_fetch_file, 401/403
 * naming the data set's page. */
enum np_status np_hf_fetch_dataset_file(struct np_hf_client *c, const char *repo, const char *revision,
                                        const char *file, const char *dest_dir, enum np_hf_fetch *what,
                                        long long *bytes, struct np_error *err);

/* GET url (any http(s) server: the client's endpoint is not used; no Authorization header unless the client
 * has a token) into final through final.part, resumed with a Range request and renamed only when whole.  A
 * present final is left alone (NP_HF_PRESENT); 404 gives NP_HF_ABSENT; other codes NP_E_HTTP naming label. */
enum np_status np_hf_fetch_url(struct np_hf_client *c, const char *url, const char *label, const char *final,
                               enum np_hf_fetch *what, long long *bytes, struct np_error *err);

/* The shard files a downloaded model.safetensors.index.json (at path) names: *shards a
 * new NULL-terminated vector (np_strv_free from shell.h), unique, in weight_map order;
 * *total_size its metadata.total_size, -1 when absent.  Each shard name must pass
 * shard_ok; more than max distinct shards (0: no limit) is refused.  NP_E_PARSE at the
 * JSON's position, or "weight_map: expected a non-empty object", or "weight_map.<key>:
 * expected a shard file name"; NP_E_NOMEM "out of memory (or more than <max> shards)".
 * On error *shards still holds the shards read before it (or NULL): free it too. */
enum np_status np_hf_weight_index(const char *path, int (*shard_ok)(const char *name), size_t max, char ***shards,
                                  double *total_size, struct np_error *err);

#endif
