/* manifest.h - the experiment folder of a launch job and its nemoperf.json.
 *
 * np_experiment_create() makes $STAGE_PATH/experiments/<exp>/<exp>_<ts>/<job>/
 * (and its code/ subfolder) without ever reusing an existing folder: when
 * <exp>_<ts> exists (two launches in one second) the timestamp is bumped.
 * np_manifest_write() writes <folder>/nemoperf.json atomically (temporary file
 * + rename) with Jansson.  nemoperf-parse reads config.{recipe, model_size,
 * dtype, gpu_type, gpus, seq_len, gbs} from it.  A launch through slurmrestd also
 * records "slurmrestd": {"url", "api_version"} (never a credential).
 */
#ifndef NEMOPERF_MANIFEST_H
#define NEMOPERF_MANIFEST_H

#include <sys/types.h>
#include <time.h>

#include "nemoperf/config.h"
#include "nemoperf/error.h"

#define NP_MANIFEST_NAME "nemoperf.json"
#define NP_MANIFEST_FORMAT 1

/* Everything the manifest records; all pointers borrowed for the call. */
struct np_manifest {
    const struct np_launch_config *config;
    const char *backend;      /* "cli" or "rest" */
    int submitted;            /* 1: the scheduler accepted the job */
    const char *job_id;       /* "123", or NULL */
    const char *cluster;      /* from "jobid;cluster", or NULL */
    time_t submit_time;       /* when submission was attempted */
    const char *error;        /* the scheduler's message when not submitted, or NULL */
    const char *script;       /* file name of the batch script inside the folder */
    const char *rest_url;     /* rest: SLURMRESTD_URL without credentials, else NULL */
    const char *api_version;  /* rest: "v0.0.38" once discovered, else NULL */
};

/* Create the folder of c (updating c->timestamp and c->experiment_dir when the
 * timestamp had to be bumped).  NP_E_IO with the path on failure. */
enum np_status np_experiment_create(struct np_launch_config *c, struct np_error *err);

/* Write text to dir/name atomically with the given mode. */
enum np_status np_file_write_atomic(const char *dir, const char *name, const char *text, mode_t mode,
                                    struct np_error *err);

/* The manifest as JSON (new reference, NULL when out of memory). */
json_t *np_manifest_json(const struct np_manifest *m);

/* Write <experiment_dir>/nemoperf.json atomically. */
enum np_status np_manifest_write(const struct np_manifest *m, struct np_error *err);

#endif
