/* nemo.h - the real NeMo job of a launch: what NVIDIA's scripts/performance ran, as
 * explicit arguments for the in-container driver (share/nemoperf/driver/).
 *
 * The C side decides every setting up front from the recipe data and the
 * resolved launch config; the driver (Python, because NeMo is configured in
 * Python) only translates the arguments into NeMo objects.  This module makes
 * those arguments, the NeMo part of the job environment, the "nemo" object of
 * --print-config, and copies the driver into the experiment's code/ folder.
 */
#ifndef NEMOPERF_NEMO_H
#define NEMOPERF_NEMO_H

#include <jansson.h>
#include <stddef.h>

#include "nemoperf/job/env.h" /* np_nemo_max_connections */
#include "nemoperf/job/spec.h"
#include "nemoperf/util/error.h"

#define NP_NEMO_DRIVER "nemoperf_nemo.py"    /* file name under share/nemoperf/driver/ and <exp>/code/ */
#define NP_NEMO_CODE_DIR "/nemo_run/code"     /* where <exp>/code is mounted in the container */
/* nsys's folder in the job's folder, as NeMo-Run's launcher names it (NeMo-Run fb550a3
 * core/execution/launcher.py l.15-16, l.28-40: <job dir>/nsys_profile/profile_%p.nsys-rep) */
#define NP_NEMO_NSYS_DIR "nsys_profile"

/* NVIDIA's own profile window and ranks for the recipe's scripts generation: 25.02 steps
 * 20-25 on ranks 0-7 (dgxc v25.04), 25.04 steps 5-6 on rank 0 (NeMo v2.3.1 scripts/performance).
 * *ranks: NsysCallback ranks 0..*ranks-1. */
void np_nemo_profile_defaults(const struct np_recipe *r, int *start, int *stop, int *ranks);

/* "nvidia", "task", "none" (NEMOPERF_NUMA_BIND); static. */
const char *np_numa_bind_name(enum np_numa_bind b);

/* A userbuffers config name with "{dtype}" replaced by bf16/fp8; a new string
 * (caller frees), NULL for a NULL template or out of memory. */
char *np_nemo_ub_resolve(const char *tmpl, enum np_dtype d);

/* The driver's argument list for c (without "python" and the driver path): a new
 * NULL-terminated array (np_strv_free), NULL when out of memory. */
char **np_nemo_driver_args(const struct np_launch_config *c);


/* Samples of one epoch NVIDIA gave MockDataModule for max_steps (num_train_samples). */
long long np_nemo_train_samples(const struct np_launch_config *c);

/* sbatch --segment for c: the largest divisor of the node count not above 18 when
 * the recipe asks for it, nodes > 18 and 4 GPUs per node (GB200); 0 otherwise. */
int np_nemo_segment(const struct np_launch_config *c);

/* The "nemo" object of --print-config; a new reference, NULL when out of memory. */
json_t *np_nemo_json(const struct np_launch_config *c);

/* Path of the driver shipped with nemoperf (share/nemoperf/driver/<NP_NEMO_DRIVER>);
 * a new string (caller frees) or NULL when not found. */
char *np_nemo_driver_source(void);

/* Copy the driver into <experiment_dir>/code/ (created if needed), atomically.
 * NP_E_NOTFOUND when the driver is not installed, NP_E_IO, NP_E_NOMEM. */
enum np_status np_nemo_stage_driver(const struct np_launch_config *c, struct np_error *err);

#endif
