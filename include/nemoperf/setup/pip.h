/* pip.h - the Python packages a Megatron-Bridge recipe adds (DFM's Wan: diffusers==0.35.1 upgraded, easydict,
 * imageio, imageio-ffmpeg added), installed by a one-node job in the staged container as NVIDIA's commands would
 * change the image's own environment, into the prefix <stage>/pip/<recipe>-<size>, so the compute nodes of the
 * benchmark need no network (job/mbridge.c puts <prefix>/site-packages on PYTHONPATH).
 */
#ifndef NEMOPERF_SETUP_PIP_H
#define NEMOPERF_SETUP_PIP_H

#include <signal.h>

#include "nemoperf/model/recipe.h"

struct np_pip_job_opts {
    const char *sqsh;              /* the staged container image */
    const char *sbatch_prog;       /* NULL: "sbatch" from PATH */
    const char *account, *partition; /* SBATCH_ACCOUNT / SBATCH_PARTITION or NULL */
    const char *log_dir;           /* the job's output file: <log_dir>/setup-pip_%j.out */
    volatile sig_atomic_t *cancel; /* non-zero: stop (the job is cancelled); may be NULL */
};

/* sbatch --wait --parsable --nodes=1 --ntasks=1 ... --wrap '<rm the .partial folder; srun in the writable
 * container: python3 -m pip install --prefix <dir>.partial --upgrade <pip_upgrade>, then --prefix <dir>.partial
 * <pip> with the first's packages on PYTHONPATH; <dir>.partial/site-packages links to where pip put them>'.
 * New vector (np_strv_free). */
char **np_pip_job_argv(const char *stage, const struct np_recipe *r, const struct np_model *m,
                       const struct np_pip_job_opts *o);

/* Install m's pip packages unless <stage>/pip/<recipe>-<size>/site-packages exists: the job, then the .partial
 * folder renamed into place when the job exits 0 having made its site-packages.  A folder of the older layout
 * (pip --target, no site-packages) is refused, named.  0 staged or present (*present set; jobid gets
 * the job's id), 1 failed (said through diag; nothing at the final name). */
int np_pip_stage(const char *stage, const struct np_recipe *r, const struct np_model *m,
                 const struct np_pip_job_opts *o, int *present, char *jobid, size_t jobid_size);

#endif
