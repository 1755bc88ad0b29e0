/* pip.c - install a Megatron-Bridge recipe's extra Python packages into STAGE_PATH with a one-node job.
 *
 * NVIDIA's reproduction changes the image's own environment: `python3 -m pip install --upgrade diffusers==0.35.1`,
 * then `pip install easydict imageio imageio-ffmpeg` (DFM f8c1c09 examples/megatron/recipes/wan/
 * README_perf_test.md:47-49), which keep every installed package that satisfies the requirements.  nemoperf runs
 * those two commands once, in the staged image on one node (writable: pip may uninstall what it upgrades), with
 * --prefix <stage>/pip/<recipe>-<size>.partial: pip still sees the image's packages (--target would not, and
 * would reinstall numpy, huggingface-hub, Pillow... from the index), so the prefix holds exactly what the
 * commands would have added or upgraded; the second sees the first's on PYTHONPATH.  <prefix>/site-packages
 * links to where pip put them (lib/python3.X/site-packages, or Debian's local/lib/python3.X/dist-packages); the
 * folder is renamed into place only when the job succeeded: a failed or interrupted job leaves no final folder.
 */
#include "nemoperf/setup/pip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "nemoperf/setup/stage.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"

/* What the container runs: sh -c <this> nemoperf-pip <prefix> <upgrade requirement>... -- <requirement>...
 * The first command takes the words before "--" (set -- rebuilt from them), the second the rest. */
static const char pip_script[] =
    "set -e\n"
    "p=$1\n"
    "shift\n"
    "n=0\n"
    "for a do [ \"$a\" = -- ] && break; n=$((n + 1)); done\n"
    "pip_site() { find \"$p\" -type d \\( -name site-packages -o -name dist-packages \\) | head -n 1; }\n"
    "pip_in() { python3 -m pip install --no-cache-dir --disable-pip-version-check --prefix \"$p\" \"$@\"; }\n"
    "[ \"$n\" -eq 0 ] || (i=0; for a do shift; [ \"$i\" -lt \"$n\" ] && set -- \"$@\" \"$a\"; i=$((i + 1)); done\n"
    "    pip_in --upgrade \"$@\")\n"
    "shift $((n + 1))\n"
    "s=$(pip_site)\n"
    "[ -z \"$s\" ] || export PYTHONPATH=\"$s${PYTHONPATH:+:$PYTHONPATH}\"\n"
    "[ \"$#\" -eq 0 ] || pip_in \"$@\"\n"
    "s=$(pip_site)\n"
    "if [ -n \"$s\" ]; then ln -s \"${s#\"$p\"/}\" \"$p/site-packages\"; else mkdir -p \"$p/site-packages\"; fi\n";

char **np_pip_job_argv(const char *stage, const struct np_recipe *r, const struct np_model *m,
                       const struct np_pip_job_opts *o)
{
    if (!m->mbridge || !m->mbridge->pip)
        return NULL;
    char *dir = np_mbridge_pip_dir(stage, r->name, m->size);
    struct np_strv a = {0};
    np_stage_job_head(&a, o->sbatch_prog, 0, NP_STAGE_SBATCH_TIME, "nemoperf-setup-pip", o->account, o->partition,
                      o->log_dir ? o->log_dir : stage, "setup-pip");
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "set -e\nrm -rf -- ");
    np_buf_append_shqf(&b, "%s.partial", dir ? dir : "");
    np_buf_append(&b, "\nsrun --nodes=1 --ntasks=1 --container-image=");
    np_buf_append_shq(&b, o->sqsh ? o->sqsh : "");
    np_buf_append(&b, " --container-mounts=");
    np_buf_append_shqf(&b, "%s:%s", stage, stage);
    np_buf_append(&b, " --no-container-mount-home --container-writable sh -c ");
    np_buf_append_shq(&b, pip_script);
    np_buf_append(&b, " nemoperf-pip ");
    np_buf_append_shqf(&b, "%s.partial", dir ? dir : "");
    for (char **p = m->mbridge->pip_upgrade; p && *p; p++) {
        np_buf_append(&b, " ");
        np_buf_append_shq(&b, *p);
    }
    np_buf_append(&b, " --");
    for (char **p = m->mbridge->pip; *p; p++) {
        np_buf_append(&b, " ");
        np_buf_append_shq(&b, *p);
    }
    np_buf_append(&b, "\n");
    char *script = np_buf_steal(&b);
    np_strv_pushf(&a, "--wrap=%s", script ? script : "false");
    free(script);
    free(dir);
    return np_strv_steal(&a);
}

/* 1 when <dir>/site-packages is a folder (or a link to one): the job's script ran to its end. */
static int pip_site_made(const char *dir)
{
    char *p = NULL;
    struct stat st;
    int ok = asprintf(&p, "%s/site-packages", dir) >= 0 && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return ok;
}

int np_pip_stage(const char *stage, const struct np_recipe *r, const struct np_model *m,
                 const struct np_pip_job_opts *o, int *present, char *jobid, size_t jobid_size)
{
    *present = 0;
    if (jobid_size)
        jobid[0] = '\0';
    if (!m->mbridge || !m->mbridge->pip)
        return 0;
    char *dir = np_mbridge_pip_dir(stage, r->name, m->size), *partial = NULL;
    if (!dir || asprintf(&partial, "%s.partial", dir) < 0) {
        free(dir);
        np_errorf("out of memory");
        return 1;
    }
    struct stat st;
    int rc = 0;
    char *site = np_mbridge_pip_site(stage, r->name, m->size);
    int have_site = site && stat(site, &st) == 0 && S_ISDIR(st.st_mode);
    free(site);
    if (have_site) {
        *present = 1;
        goto out;
    }
    if (stat(dir, &st) == 0) {
        np_errorf("%s holds no site-packages: an older layout (pip --target, which replaced the image's own packages "
                  "with fresh copies); remove it and run setup again to install %s %s's packages as NVIDIA does",
                  dir, r->name, m->size);
        rc = 1;
        goto out;
    }
    if (!o->sqsh || stat(o->sqsh, &st) != 0 || st.st_size == 0) {
        np_errorf("the container image %s is not staged: the pip job of %s %s runs in it (run setup without "
                  "--skip-image, or set RUN_CONF_IMAGE to a .sqsh)",
                  o->sqsh ? o->sqsh : "(none)", r->name, m->size);
        rc = 1;
        goto out;
    }
    struct np_error err = {0};
    char *parent = strdup(dir);
    char *slash = parent ? strrchr(parent, '/') : NULL;
    if (slash)
        *slash = '\0';
    enum np_status ms = parent ? np_stage_mkdirs(parent, &err) : NP_E_NOMEM;
    if (ms == NP_OK)
        ms = np_stage_mkdirs(o->log_dir ? o->log_dir : stage, &err);
    free(parent);
    if (ms != NP_OK) {
        np_error_print(&err);
        rc = 1;
        goto out;
    }
    char **argv = np_pip_job_argv(stage, r, m, o);
    if (!argv) {
        np_errorf("out of memory");
        rc = 1;
        goto out;
    }
    np_notef("submitting a one-node job to pip-install the packages of %s %s into %s", r->name, m->size, dir);
    int status = 0, stopped = 0;
    char how[64];
    enum np_status rs = np_stage_run(argv, 1, o->cancel, 0, jobid, jobid_size, &status, &stopped, &err);
    np_strv_free(argv);
    np_stage_wait_text(status, how, sizeof how);
    if (rs != NP_OK) {
        np_error_print(&err);
        rc = 1;
    } else if (stopped) {
        np_errorf("the pip job of %s %s was interrupted%s%s%s", r->name, m->size, jobid[0] ? " (job " : "", jobid,
                  jobid[0] ? " cancelled)" : "");
        rc = 1;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !pip_site_made(partial)) {
        np_errorf("the pip job%s%s of %s %s failed: sbatch %s%s (see %s/setup-pip_%s.out)", jobid[0] ? " " : "",
                  jobid, r->name, m->size, how,
                  WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ", but it made no site-packages" : "",
                  o->log_dir ? o->log_dir : stage, jobid[0] ? jobid : "<jobid>");
        rc = 1;
    } else if (rename(partial, dir) != 0) {
        np_errorf("%s: cannot rename %s into place: %s", dir, partial, strerror(errno));
        rc = 1;
    }
out:
    free(dir);
    free(partial);
    return rc;
}
