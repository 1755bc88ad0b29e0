/* preflight.h - launch's last checks before anything is written: can each job ever run?
 *
 * CLI backend: `sbatch --test-only` of each rendered script (nothing is submitted), and when
 * Slurm says no, `scontrol show partition` names the limit.  REST backend: the partition's
 * node and GPU limits from GET /slurm/<v>/partitions, and the user the jobs will run as
 * must be able to write the experiment folders this process creates.
 */
#ifndef NEMOPERF_PREFLIGHT_H
#define NEMOPERF_PREFLIGHT_H

#include <stddef.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/util/error.h"
#include "nemoperf/slurm/backend.h"

/* What a partition allows; -1 where unknown or unlimited. */
struct np_partition {
    char name[64];
    int is_default;
    long total_nodes;
    long max_nodes_per_job;
    long total_gpus;   /* gres/gpu in the partition's TRES */
};

/* From `scontrol show partition -o` text: the partition called name (NULL or "": the
 * default one, or the only one).  1 found, 0 not. */
int np_partition_from_scontrol(const char *text, const char *name, struct np_partition *out);

/* From a GET partitions reply (v0.0.38/39: total_nodes, maximum_nodes_per_job, tres string;
 * v0.0.40/41: nodes.total, maximums.nodes, tres.configured).  NP_E_NOTFOUND when the
 * partition is not there (err lists the ones that are), NP_E_PARSE/NP_E_SLURM for a bad reply. */
enum np_status np_partition_from_rest(long http, const char *body, size_t len, const char *name,
                                      struct np_partition *out, struct np_error *err);

/* NULL when c fits p; else buf holding the limit it exceeds ("needs 8 nodes; partition batch
 * has 4 nodes in total"), returned. */
const char *np_partition_misfit(const struct np_partition *p, const struct np_launch_config *c, char *buf,
                                size_t size);

struct np_preflight_opts {
    const char *rest_socket; /* REST over a unix socket: its path (its owner runs the jobs), else NULL */
    const char *rest_user;   /* REST with a token: SLURM_USER (NULL: the current user) */
    int rest_token;          /* a token is sent */
    const char *launch_cmd;  /* how messages name this launcher; NULL: "./launch" */
    int preview;             /* --dry-run: say nothing of what cannot be told (nothing is submitted) */
};

/* Check every job of plan against be (a "cli" or "rest" backend).  NP_OK when every job can
 * run (or it could not be told: a warning is printed); NP_E_INVALID with err naming the job and
 * the limit, or the user who cannot write the folders. */
enum np_status np_launch_preflight(struct np_backend *be, const struct np_launch_plan *plan,
                                   const struct np_preflight_opts *o, struct np_error *err);

#endif
