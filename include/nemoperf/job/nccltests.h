/* nccltests.h - the nccl-tests workload kind (RECIPE=nccl-tests): NVIDIA's nccl-tests binaries from the
 * container, one task per GPU, as the steps of a fabric check (model/nccltests.h plans them).
 *
 * Owned by src/job/nccltests.c; a row of job/kind.c's table.  The batch script resolves the allocation's host
 * names, writes <run>/nccl-tests/steps.json (which step ran which binary on which hosts, before any runs) and
 * runs each round's steps at once, each step's output in <run>/nccl-tests/<step>.out, unmodified.
 */
#ifndef NEMOPERF_JOB_NCCLTESTS_H
#define NEMOPERF_JOB_NCCLTESTS_H

#include <jansson.h>
#include <stddef.h>

#include "nemoperf/job/env.h"
#include "nemoperf/job/spec.h"
#include "nemoperf/util/shell.h"

/* 1 when m is RECIPE=nccl-tests' model (the kind table's matcher). */
int np_ncclt_matches(const struct np_model *m);
/* The first step's command (binary and NVIDIA's flags), a new NULL-terminated vector; NULL: no memory. */
char **np_ncclt_command(const struct np_launch_config *c);
/* One task per GPU (NVIDIA's --ntasks-per-node). */
int np_ncclt_tasks_per_node(const struct np_launch_config *c);
/* No sbatch --segment (NVIDIA's recipe asks none). */
int np_ncclt_segment(const struct np_launch_config *c);
/* The steps of the check, rendered into b after the script's preamble: 0, or -1 (no memory). */
int np_ncclt_render_step(const struct np_launch_config *c, const char *log_prefix, char *const *argv,
                         struct np_buf *b);
/* The exported environment: the system's NCCL settings (NCCL_DEBUG=WARN, ...). */
size_t np_ncclt_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap);
/* The manifest's "nccl_tests" object (check, pairs, collectives, path, rounds, the plan by node position,
 * steps_file); a new reference, NULL when out of memory. */
json_t *np_ncclt_json(const struct np_launch_config *c);
/* The plan as text for --dry-run: one line per round, nodes by position.  A new string, caller frees. */
char *np_ncclt_plan_text(const struct np_launch_config *c);

#endif
