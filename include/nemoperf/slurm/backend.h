/* slurm.h - submitting batch scripts to Slurm through a backend.
 *
 * A backend is a small descriptor with a submit() function, so the sbatch
 * command-line backend (slurm_cli.c) and a slurmrestd backend can be chosen at
 * run time.  The CLI backend runs sbatch with fork/execve (no shell), a
 * filtered environment (inherited SLURM_* job variables dropped, SLURM_CONF
 * kept; the user's SBATCH_* settings reach sbatch unchanged), a timeout after which sbatch and its children are killed,
 * and parses --parsable output ("jobid[;cluster]").  A backend may also report
 * the state of submitted jobs (query(), used by wait.c): squeue for the CLI
 * backend, GET /slurm/vX/jobs for slurmrestd (slurm_rest.h).
 */
#ifndef NEMOPERF_SLURM_H
#define NEMOPERF_SLURM_H

#include <stddef.h>

#include "nemoperf/util/error.h"

#define NP_SLURM_DEFAULT_TIMEOUT 60 /* seconds sbatch may take */

struct np_launch_config; /* config.h */

/* What to submit; all borrowed for the call. */
struct np_submit_request {
    const char *script_path;  /* the batch script file */
    const char *script_text;  /* its text (for backends that send it) */
    const char *workdir;      /* working directory of the job */
    const char *job_name;
    const struct np_launch_config *config; /* the resolved job (the REST backend builds its job
                                              description from it); NULL for the CLI backend */
    const char *tag;          /* unique tag the job carries as its comment (find() looks for it), or NULL */
};

/* How a submission ended. */
enum np_submit_outcome {
    NP_SUBMIT_ACCEPTED = 0, /* the scheduler answered with a job id */
    NP_SUBMIT_REFUSED,      /* the scheduler answered no (or the request never left): no job */
    NP_SUBMIT_UNKNOWN       /* no answer after the request may have reached the scheduler (timeout,
                               cut connection, killed client): the job may exist; find() tells */
};

/* Outcome; strings owned, free with np_submit_result_free. */
struct np_submit_result {
    char *job_id;    /* "123" when accepted, else NULL */
    char *cluster;   /* "local" from "123;local", or NULL */
    char *message;   /* the scheduler's diagnostics (sbatch stderr, trimmed), or NULL */
    enum np_submit_outcome outcome; /* ACCEPTED with NP_OK; REFUSED or UNKNOWN otherwise */
};

void np_submit_result_free(struct np_submit_result *r);

/* One job as the controller reports it; strings owned. */
struct np_job_info {
    char *job_id;  /* "123" */
    char *state;   /* the scheduler's word: "RUNNING", "COMPLETED", "CANCELLED" (flags after a '+') */
    char *reason;  /* pending/failure reason, or NULL */
};

/* Jobs found by a query (ids asked for but unknown to the controller are absent). */
struct np_job_list {
    struct np_job_info *jobs;
    size_t n;
};

void np_job_list_free(struct np_job_list *l);
/* Append a copy of (id, state, reason); reason may be NULL.  0 ok, -1 out of memory. */
int np_job_list_add(struct np_job_list *l, const char *id, const char *state, const char *reason);

struct np_backend {
    const char *name; /* "cli" */
    /* NP_OK with res->job_id set, or NP_E_SLURM (refused, failed, timed out) with
     * err and res->message describing it. */
    enum np_status (*submit)(struct np_backend *b, const struct np_submit_request *req,
                             struct np_submit_result *res, struct np_error *err);
    void (*free)(struct np_backend *b); /* releases impl; NULL-safe through np_backend_free */
    void *impl;
    /* The state of the jobs in ids (one request for all of them); out is reset
     * first, free with np_job_list_free.  NP_E_SLURM/NP_E_HTTP/NP_E_IO with err when
     * the controller could not be asked.  NULL when the backend cannot tell. */
    enum np_status (*query)(struct np_backend *b, char *const *ids, size_t n, struct np_job_list *out,
                            struct np_error *err);
    /* The jobs (any state the controller still knows) named job_name whose comment is
     * tag; out is reset first.  NP_OK with out->n == 0 when the controller answered and
     * has none; NP_E_SLURM/NP_E_HTTP/NP_E_IO with err when it could not be asked.  NULL
     * when the backend cannot tell. */
    enum np_status (*find)(struct np_backend *b, const char *tag, const char *job_name, struct np_job_list *out,
                           struct np_error *err);
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

/* sbatch --test-only SCRIPT: can the job ever be scheduled (nothing is submitted)?
 * NP_OK with sbatch's estimate, NP_E_INVALID when Slurm says the request cannot be
 * satisfied (node count, processors, partition, GRES, memory), NP_E_SLURM when it could
 * not tell (sbatch failed otherwise, timed out).  *message: sbatch's stderr, trimmed
 * (new string or NULL, caller frees).  b must be a CLI backend. */
enum np_status np_slurm_cli_test_only(struct np_backend *b, const char *script_path, char **message,
                                      struct np_error *err);
/* The same for a script given as text: written to a temporary file in $TMPDIR (or /tmp) for the
 * check and removed after; NP_E_IO "a temporary script in DIR: why" when it cannot be written.
 * Launch checks its jobs this way, setup its --sbatch import job. */
enum np_status np_slurm_cli_test_only_text(struct np_backend *b, const char *script, char **message,
                                           struct np_error *err);
/* `scontrol show partition -o` (one line per partition) from the installation sbatch
 * comes from: a new string in *out (caller frees).  NP_E_SLURM when it failed. */
enum np_status np_slurm_cli_partitions(struct np_backend *b, char **out, struct np_error *err);
/* The nodes of partition (NULL or "": every partition) as `sinfo -h -o NP_SLURM_SINFO_NODES` groups
 * them, one line per count|state|gres|nodes|reason: a new string in *out (caller frees); NP_E_SLURM
 * when sinfo failed (an unknown partition, too). */
#define NP_SLURM_SINFO_NODES "%D|%T|%G|%N|%E"
enum np_status np_slurm_cli_nodes(struct np_backend *b, const char *partition, char **out, struct np_error *err);

/* Absolute or relative path of prog found in the ':'-separated path (prog with
 * a '/' is taken as is); a new string (caller frees) or NULL when not found. */
char *np_path_search(const char *prog, const char *path);

/* envp without SLURM_* entries, except SLURM_CONF, nor empty SBATCH_* (the others
 * kept); a new NULL-terminated array of borrowed strings (free only the array). */
char **np_slurm_child_env(char *const *envp);

/* Parse sbatch --parsable output: "123" or "123;cluster" (surrounding white space
 * ignored).  0 ok (new strings in *job_id and *cluster, the latter may be NULL), -1 not that. */
int np_slurm_parse_parsable(const char *out, char **job_id, char **cluster);

/* Parse `squeue -h -o %i|%T|%r` lines into out (appended).  0 ok, -1 out of memory;
 * malformed lines are skipped. */
int np_slurm_parse_squeue(const char *text, struct np_job_list *out);

/* Parse `squeue -h -o %i|%T|%k` lines (id|state|comment) and append the jobs whose
 * comment is exactly tag (their reason left NULL).  0 ok, -1 out of memory. */
int np_slurm_parse_squeue_tagged(const char *text, const char *tag, struct np_job_list *out);

/* A classification of a failed sbatch's message: 1 when it says the request may have
 * reached the controller without an answer ("Socket timed out", "Zero Bytes were
 * transmitted", ...), so the job may exist; 0 when it is a refusal or a connect failure. */
int np_slurm_cli_ambiguous(const char *message);

#endif
