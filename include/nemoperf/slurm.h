/* slurm.h - submitting batch scripts to Slurm through a backend.
 *
 * A backend is a small descriptor with a submit() function, so the sbatch
 * command-line backend (slurm_cli.c) and a slurmrestd backend can be chosen at
 * run time.  The CLI backend runs sbatch with fork/execve (no shell), a
 * filtered environment (inherited SLURM_* and SBATCH_* job variables dropped,
 * SLURM_CONF kept), a timeout after which sbatch and its children are killed,
 * and parses --parsable output ("jobid[;cluster]").
 */
#ifndef NEMOPERF_SLURM_H
#define NEMOPERF_SLURM_H

#include "nemoperf/error.h"

#define NP_SLURM_DEFAULT_TIMEOUT 60 /* seconds sbatch may take */

/* What to submit; all borrowed for the call. */
struct np_submit_request {
    const char *script_path;  /* the batch script file */
    const char *script_text;  /* its text (for backends that send it) */
    const char *workdir;      /* working directory of the job */
    const char *job_name;
};

/* Outcome; strings owned, free with np_submit_result_free. */
struct np_submit_result {
    char *job_id;    /* "123" when accepted, else NULL */
    char *cluster;   /* "local" from "123;local", or NULL */
    char *message;   /* the scheduler's diagnostics (sbatch stderr, trimmed), or NULL */
};

void np_submit_result_free(struct np_submit_result *r);

struct np_backend {
    const char *name; /* "cli" */
    /* NP_OK with res->job_id set, or NP_E_SLURM (refused, failed, timed out) with
     * err and res->message describing it. */
    enum np_status (*submit)(struct np_backend *b, const struct np_submit_request *req,
                             struct np_submit_result *res, struct np_error *err);
    void (*free)(struct np_backend *b); /* releases impl; NULL-safe through np_backend_free */
    void *impl;
};

void np_backend_free(struct np_backend *b);

struct np_slurm_cli_opts {
    const char *sbatch;      /* program name or path; NULL: "sbatch" looked up on PATH */
    const char *path;        /* PATH to search; NULL: getenv("PATH") */
    int timeout_s;           /* 0: NP_SLURM_DEFAULT_TIMEOUT */
    char *const *envp;       /* environment to filter for sbatch; NULL: environ */
};

/* Set up the sbatch backend.  NP_E_INVALID when sbatch cannot be found or is
 * not executable (err names it and the PATH searched), NP_E_NOMEM. */
enum np_status np_slurm_cli_backend(struct np_backend *b, const struct np_slurm_cli_opts *o, struct np_error *err);

/* Absolute or relative path of prog found in the ':'-separated path (prog with
 * a '/' is taken as is); a new string (caller frees) or NULL when not found. */
char *np_path_search(const char *prog, const char *path);

/* envp without SLURM_* and SBATCH_* entries, except SLURM_CONF; a new
 * NULL-terminated array of borrowed strings (free only the array). */
char **np_slurm_child_env(char *const *envp);

/* Parse sbatch --parsable output: "123" or "123;cluster" (surrounding white space
 * ignored).  0 ok (new strings in *job_id and *cluster, the latter may be NULL), -1 not that. */
int np_slurm_parse_parsable(const char *out, char **job_id, char **cluster);

#endif
