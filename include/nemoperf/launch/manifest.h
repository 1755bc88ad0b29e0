/* manifest.h - the experiment folder of a launch job and its nemoperf.json.
 *
 * np_experiment_create() makes $STAGE_PATH/experiments/<exp>/<exp>_<ts>/<job>/
 * (and its code/ subfolder) without ever reusing an existing folder: when
 * <exp>_<ts> exists (two launches in one second) the timestamp is bumped.
 * np_manifest_write() writes <folder>/nemoperf.json atomically (temporary file
 * + rename) with Jansson.  nemoperf-parse reads config.{recipe, model_size,
 * dtype, gpu_type, gpus, seq_len, gbs} from it.  A launch through slurmrestd also
 * records "slurmrestd": {"url", "api_version"} (never a credential).
 *
 * Submission protocol (nothing lost): the manifest says "state": "submitting" with a
 * unique "tag" (the job's comment) before the backend is called, written pre-sized
 * (padded to the end of its last block, at least NP_MANIFEST_SLACK bytes spare), so the
 * outcome can be recorded in place without free space when the atomic rewrite fails
 * (disk full).  States: submitting, submitted, not_submitted, unknown (the request
 * may have reached the scheduler: reconcile.h finds the job by its tag).
 */
#ifndef NEMOPERF_MANIFEST_H
#define NEMOPERF_MANIFEST_H

#include <sys/types.h>
#include <time.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/util/error.h"
#include "nemoperf/util/fileio.h" /* np_file_write_atomic */
#include "nemoperf/util/runfiles.h"

#define NP_MANIFEST_NAME "nemoperf.json"
#define NP_MANIFEST_FORMAT NP_RUNFILE_MANIFEST_FORMAT /* util/runfiles.h: the readers refuse any other */
#define NP_MANIFEST_SLACK 512 /* spare bytes of a pre-sized manifest */

/* "state" values */
#define NP_STATE_SUBMITTING "submitting"       /* the backend is (or was, when a launch died) being called */
#define NP_STATE_SUBMITTED "submitted"         /* the scheduler accepted it; job_id set */
#define NP_STATE_NOT_SUBMITTED "not_submitted" /* refused, or no job carries the tag */
#define NP_STATE_UNKNOWN "unknown"             /* no answer after sending: reconcile */

/* Everything the manifest records; all pointers borrowed for the call. */
struct np_manifest {
    const struct np_launch_config *config;
    const char *backend;      /* "cli" or "rest" */
    int submitted;            /* 1: the scheduler accepted the job (used when state is NULL) */
    const char *state;        /* NP_STATE_*, or NULL: submitted ? "submitted" : "not_submitted" */
    const char *tag;          /* the unique tag the job carries as its comment, or NULL */
    int presize;              /* 1: pad the file (NP_MANIFEST_SLACK) for a later in-place rewrite */
    const char *job_id;       /* "123", or NULL */
    const char *cluster;      /* from "jobid;cluster", or NULL */
    time_t submit_time;       /* when submission was attempted */
    const char *error;        /* the scheduler's message when not submitted, or NULL */
    const char *script;       /* file name of the batch script inside the folder */
    const char *rest_url;     /* rest: SLURMRESTD_URL without credentials, else NULL */
    const char *api_version;  /* rest: "v0.0.38" once discovered, else NULL */
    int repeat, repeats;      /* REPEATS=N: this is job repeat (1..N) of N identical ones ("repeat"), N > 1 */
    np_env_fn env;            /* the launcher's environment ("env_user"), NULL: getenv */
    void *env_ctx;
};

/* Create the folder of c (updating c->timestamp and c->experiment_dir when the
 * timestamp had to be bumped).  NP_E_IO with the path on failure. */
enum np_status np_experiment_create(struct np_launch_config *c, struct np_error *err);

/* The manifest as JSON (new reference, NULL when out of memory). */
json_t *np_manifest_json(const struct np_manifest *m);

/* Write <experiment_dir>/nemoperf.json: atomically, or, when that fails (no space for
 * the second copy), rewritten in place within the size the file already has (a long
 * "error" is shortened to fit).  *in_place (may be NULL) says which. */
enum np_status np_manifest_write(const struct np_manifest *m, struct np_error *err);
enum np_status np_manifest_store(const char *dir, const json_t *o, int presize, int *in_place, struct np_error *err);

/* Read <dir>/nemoperf.json: a new reference in *out.  NP_E_NOTFOUND when absent,
 * NP_E_PARSE (with line:column) when it is not a JSON object, NP_E_IO otherwise. */
enum np_status np_manifest_load(const char *dir, json_t **out, struct np_error *err);

/* The "state" of a loaded manifest; an older one without it from "submitted". */
const char *np_manifest_state(const json_t *o);

/* 1 when the launch that wrote a "submitting" record ("launcher": host and pid) is
 * still running on this host: its outcome is still coming, leave the record alone. */
int np_manifest_launcher_alive(const json_t *o);

/* A new unique tag "nemoperf-<32 hex>" (caller frees), NULL when out of memory. */
char *np_manifest_new_tag(void);

#endif
