/* script.h - render the sbatch batch script of one launch job.
 *
 * The script carries the #SBATCH lines, the environment the original recipes
 * exported, the srun step (pyxis container + the recipe's command template, which
 * runs the in-container driver, for WORKLOAD=nemo; nemoperf-synth for
 * WORKLOAD=synthetic) and, when NEMOPERF_MAX_RETRIES > 0, a requeue on failure.  Every interpolated value is quoted (see shell.h); the
 * one deliberate expansion is ${SLURM_RESTART_COUNT:-0} in the srun log name.
 */
#ifndef NEMOPERF_SCRIPT_H
#define NEMOPERF_SCRIPT_H

#include <stddef.h>

#include "nemoperf/job/spec.h"
#include "nemoperf/util/error.h"
#include "nemoperf/job/env.h" /* np_script_vars: the job's environment */

/* Names of every variable that reaches the job: the exported ones plus HF_TOKEN
 * when set (passed by sbatch --export=ALL, never written).  New NULL-terminated
 * array (free with np_strv_free), NULL when out of memory. */
char **np_script_env_names(const struct np_launch_config *c);

/* Check a command template (NULL-terminated; source names it in messages, e.g.
 * "recipes/llama3.1.json"): every {placeholder} must be known, list
 * placeholders must stand alone in their element, braces must pair ({{ and }}
 * are literal braces).  NP_E_INVALID with "source: command[i]: ..." */
enum np_status np_script_check_template(char *const *tmpl, const char *source, struct np_error *err);

/* The workload's argv for c: nemoperf-synth and its options, or the recipe's
 * command template with placeholders substituted ({driver_args}: nemo.h).  New NULL-terminated array
 * in *argv (np_strv_free).  NP_E_INVALID for a bad template, NP_E_NOMEM. */
enum np_status np_script_command(const struct np_launch_config *c, char ***argv, struct np_error *err);

/* The batch script for c; a new string in *out (caller frees). */
enum np_status np_script_render(const struct np_launch_config *c, char **out, struct np_error *err);

/* File name of the script inside the experiment folder: "sbatch_<job_name>.sh".
 * Returns a new string, NULL when out of memory. */
char *np_script_file_name(const struct np_launch_config *c);

#endif
