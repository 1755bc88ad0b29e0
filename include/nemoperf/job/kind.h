/* kind.h - the workload kinds behind one interface: what a job runs and how its srun step looks.
 *
 * Owned by src/job/kind.c: one descriptor per kind (Megatron-Bridge, NeMo AutoModel, NeMo), picked from the
 * model's recipe data.  launch/script.c renders every job through it, job/env.c takes the kind's
 * environment and launch/submit.c its staging.  A new kind is a file beside the others plus a row in
 * kind.c's table (docs/architecture.md, "How to grow").
 */
#ifndef NEMOPERF_JOB_KIND_H
#define NEMOPERF_JOB_KIND_H

#include <stddef.h>

#include "nemoperf/job/env.h"
#include "nemoperf/job/spec.h"
#include "nemoperf/util/error.h"
#include "nemoperf/util/shell.h"

struct np_job_kind {
    const char *name;
    /* 1 when this kind runs m's rows (the table is tried in order; the last row takes everything) */
    int (*matches)(const struct np_model *m);
    /* WORKLOAD=nemo: the rank command, a new NULL-terminated vector (NULL: out of memory); NULL hook: the
     * recipe's own command template (launch/script.c expands it) */
    char **(*command)(const struct np_launch_config *c);
    /* srun tasks per node: one per GPU, or one per node where a launcher (torchrun) starts the GPUs */
    int (*tasks_per_node)(const struct np_launch_config *c);
    /* sbatch --segment for WORKLOAD=nemo, 0 = none */
    int (*segment)(const struct np_launch_config *c);
    /* the kind's own srun step (both workloads), 0 or -1; NULL hook: script.c's NeMo-Run-shaped step */
    int (*render_step)(const struct np_launch_config *c, const char *log_prefix, char *const *argv,
                       struct np_buf *b);
    /* micro-batch size nemoperf-synth stands in with, and the log-format options it appends; NULL: none */
    int (*synth_mbs)(const struct np_launch_config *c);
    void (*synth_args)(const struct np_launch_config *c, struct np_strv *s);
    /* the exported environment, in script order (at most cap; the count) */
    size_t (*vars)(const struct np_launch_config *c, struct np_script_var *vars, size_t cap);
    /* what the job reads from its experiment folder, written before submission; NULL: nothing */
    enum np_status (*stage)(const struct np_launch_config *c, struct np_error *err);
};

/* The variables the script exports for c (its kind's list), in script order; returns the count
 * (at most cap).  One list for the script (launch/script.c) and the slurmrestd job body (slurm/rest.c). */
size_t np_script_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap);

/* The kind of c's model (never NULL). */
const struct np_job_kind *np_job_kind_of(const struct np_launch_config *c);

#endif
