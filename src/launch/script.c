/* script.c - the sbatch batch script of one job, rendered from a launch config.
 *
 * Shape (NeMo-Run's SlurmExecutor, see facts/nemo-recipes.md): #SBATCH lines,
 * exported environment, NVIDIA's vboost step (NeMo), the system snapshot step and
 * the GPU telemetry (job/system.c), one srun step running the workload (pyxis container + the recipe's command: the in-container driver with
 * its arguments from nemo.c; or nemoperf-synth), then a requeue on failure only
 * when NEMOPERF_MAX_RETRIES asks.  All
 * values are quoted: sh words with single quotes, #SBATCH arguments with sbatch's
 * double-quote rules, Slurm file-name patterns with % doubled.
 */
#include "nemoperf/launch/script.h"
#include "nemoperf/util/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/job/kind.h"
#include "nemoperf/job/nemo.h"
#include "nemoperf/job/system.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/util/shell.h"

/* ---- environment ---- */

char **np_script_env_names(const struct np_launch_config *c)
{
    struct np_script_var vars[NP_SCRIPT_MAX_VARS];
    size_t n = np_script_vars(c, vars, NP_SCRIPT_MAX_VARS);
    struct np_strv s = {0};
    for (size_t i = 0; i < n; i++)
        np_strv_push(&s, vars[i].name);
    /* never HF_TOKEN: every job reads what ./setup staged, offline, and Slurm keeps a job's
     * environment on the controller's disk (issue 23) */
    return np_strv_steal(&s);
}

/* ---- command templates ---- */

static const char *const script_scalars[] = {
    "recipe", "model_size", "dtype", "gpu_type", "factory", "hf_repo", "nodes", "gpus", "gpus_per_node",
    "tp", "pp", "cp", "ep", "dp", "vp", "mbs", "gbs", "ga", "layers", "seq_len", "hidden", "max_steps",
    "stage_path", "experiment", "job_name", "experiment_dir", "profile_start", "profile_stop", "driver", NULL};
static const char *const script_lists[] = {"driver_args", NULL};

static int script_name_in(const char *const *names, const char *s, size_t n)
{
    for (const char *const *p = names; *p; p++)
        if (strlen(*p) == n && strncmp(*p, s, n) == 0)
            return 1;
    return 0;
}

/* Value of scalar placeholder `name` (n bytes) for c into buf; returns buf or a
 * config string. */
static const char *script_scalar(const struct np_launch_config *c, const char *name, size_t n, char *buf,
                                 size_t size)
{
#define SCRIPT_IS(k) (strlen(k) == n && strncmp(k, name, n) == 0)
#define SCRIPT_INT(k, v)                                                                                          \
    if (SCRIPT_IS(k)) {                                                                                           \
        snprintf(buf, size, "%d", (v));                                                                           \
        return buf;                                                                                               \
    }
    if (SCRIPT_IS("recipe"))
        return c->recipe->name;
    if (SCRIPT_IS("model_size"))
        return c->model->size;
    if (SCRIPT_IS("dtype"))
        return np_dtype_name(c->dtype, 0);
    if (SCRIPT_IS("gpu_type"))
        return c->gpu_type;
    if (SCRIPT_IS("factory"))
        return c->model->factory;
    if (SCRIPT_IS("hf_repo"))
        return c->model->hf_repo ? c->model->hf_repo : "";
    SCRIPT_INT("nodes", c->nodes)
    SCRIPT_INT("gpus", c->gpus)
    SCRIPT_INT("gpus_per_node", c->gpus_per_node)
    SCRIPT_INT("tp", c->tp)
    SCRIPT_INT("pp", c->pp)
    SCRIPT_INT("cp", c->cp)
    SCRIPT_INT("ep", c->ep > 0 ? c->ep : 1)
    SCRIPT_INT("dp", c->dp)
    if (SCRIPT_IS("vp")) {
        if (c->vp > 0)
            snprintf(buf, size, "%d", c->vp);
        else
            snprintf(buf, size, "None");
        return buf;
    }
    SCRIPT_INT("mbs", c->mbs)
    SCRIPT_INT("gbs", c->gbs)
    SCRIPT_INT("ga", c->ga)
    SCRIPT_INT("layers", c->layers)
    SCRIPT_INT("seq_len", c->seq_len)
    SCRIPT_INT("hidden", c->hidden)
    SCRIPT_INT("max_steps", c->max_steps)
    SCRIPT_INT("profile_start", c->profile_start)
    SCRIPT_INT("profile_stop", c->profile_stop)
    if (SCRIPT_IS("stage_path"))
        return c->stage_path;
    if (SCRIPT_IS("experiment"))
        return c->experiment;
    if (SCRIPT_IS("job_name"))
        return c->job_name;
    if (SCRIPT_IS("experiment_dir"))
        return c->experiment_dir;
    if (SCRIPT_IS("driver"))
        return NP_NEMO_DRIVER;
#undef SCRIPT_INT
#undef SCRIPT_IS
    return NULL;
}

static void script_list(const struct np_launch_config *c, const char *name, struct np_strv *out)
{
    if (strcmp(name, "driver_args") == 0) { /* the in-container driver's explicit arguments (nemo.c) */
        char **args = np_nemo_driver_args(c);
        if (!args)
            out->failed = 1;
        for (size_t i = 0; args && args[i]; i++)
            np_strv_push(out, args[i]);
        np_strv_free(args);
    }
}

/* Expand (c != NULL) or only check (c == NULL) one template element. */
static enum np_status script_expand(const struct np_launch_config *c, const char *elem, size_t idx,
                                    const char *source, struct np_strv *out, struct np_error *err)
{
    size_t len = strlen(elem);
    if (len > 2 && elem[0] == '{' && elem[len - 1] == '}' && script_name_in(script_lists, elem + 1, len - 2) &&
        !memchr(elem + 1, '{', len - 2)) {
        if (c) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(len - 2), elem + 1);
            script_list(c, name, out);
        }
        return NP_OK;
    }
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "");
    for (const char *p = elem; *p;) {
        if (p[0] == '{' && p[1] == '{') {
            np_buf_append(&b, "{");
            p += 2;
        } else if (p[0] == '}' && p[1] == '}') {
            np_buf_append(&b, "}");
            p += 2;
        } else if (*p == '}') {
            np_buf_free(&b);
            return np_error_set(err, NP_E_INVALID, source, 0, 0,
                                "command[%zu]: unmatched '}' in \"%s\" (write }} for a literal brace)", idx, elem);
        } else if (*p == '{') {
            const char *end = strchr(p + 1, '}');
            if (!end) {
                np_buf_free(&b);
                return np_error_set(err, NP_E_INVALID, source, 0, 0,
                                    "command[%zu]: unterminated placeholder in \"%s\" (write {{ for a literal brace)",
                                    idx, elem);
            }
            size_t n = (size_t)(end - p - 1);
            if (script_name_in(script_lists, p + 1, n)) {
                np_buf_free(&b);
                return np_error_set(err, NP_E_INVALID, source, 0, 0,
                                    "command[%zu]: list placeholder {%.*s} must be a whole element, not part of \"%s\"",
                                    idx, (int)n, p + 1, elem);
            }
            if (!script_name_in(script_scalars, p + 1, n)) {
                char known[600] = "";
                for (const char *const *k = script_scalars; *k; k++) {
                    strncat(known, *k, sizeof known - strlen(known) - 1);
                    strncat(known, " ", sizeof known - strlen(known) - 1);
                }
                strncat(known, "{driver_args}", sizeof known - strlen(known) - 1);
                np_buf_free(&b);
                return np_error_set(err, NP_E_INVALID, source, 0, 0,
                                    "command[%zu]: unknown placeholder {%.*s}; known: %s", idx, (int)n, p + 1, known);
            }
            if (c) {
                char val[64];
                np_buf_append(&b, script_scalar(c, p + 1, n, val, sizeof val));
            }
            p = end + 1;
        } else {
            np_buf_appendn(&b, p, 1);
            p++;
        }
    }
    char *s = np_buf_steal(&b);
    if (!s)
        return np_error_set(err, NP_E_NOMEM, source, 0, 0, "out of memory");
    if (c)
        np_strv_push(out, s);
    free(s);
    return NP_OK;
}

enum np_status np_script_check_template(char *const *tmpl, const char *source, struct np_error *err)
{
    if (!tmpl || !tmpl[0])
        return np_error_set(err, NP_E_INVALID, source, 0, 0, "command: empty command template");
    for (size_t i = 0; tmpl[i]; i++) {
        enum np_status st = script_expand(NULL, tmpl[i], i, source, NULL, err);
        if (st != NP_OK)
            return st;
    }
    return NP_OK;
}

static void script_synth_argv(const struct np_launch_config *c, struct np_strv *s)
{
    np_strv_push(s, c->synth_path);
    np_strv_push(s, "--recipe");
    np_strv_push(s, c->recipe->name);
    np_strv_push(s, "--model-size");
    np_strv_push(s, c->model->size);
    np_strv_push(s, "--dtype");
    np_strv_push(s, np_dtype_name(c->dtype, 0));
#define SCRIPT_OPT(o, v)                                                                                          \
    do {                                                                                                          \
        np_strv_push(s, o);                                                                                   \
        np_strv_pushf(s, "%d", (v));                                                                          \
    } while (0)
    SCRIPT_OPT("--gpus", c->gpus);
    SCRIPT_OPT("--tp", c->tp);
    SCRIPT_OPT("--pp", c->pp);
    SCRIPT_OPT("--cp", c->cp);
    if (c->ep > 0)
        SCRIPT_OPT("--ep", c->ep);
    SCRIPT_OPT("--dp", c->dp);
    if (c->vp > 0)
        SCRIPT_OPT("--vp", c->vp);
    const struct np_job_kind *k = np_job_kind_of(c);
    SCRIPT_OPT("--mbs", k->synth_mbs ? k->synth_mbs(c) : c->mbs);
    SCRIPT_OPT("--gbs", c->gbs);
    SCRIPT_OPT("--ga", c->ga);
    if (c->layers > 0) /* Megatron-Bridge rows carry no architecture: nemoperf-synth's defaults */
        SCRIPT_OPT("--layers", c->layers);
    SCRIPT_OPT("--seq-len", c->seq_len);
    if (c->hidden > 0)
        SCRIPT_OPT("--hidden", c->hidden);
    SCRIPT_OPT("--max-steps", c->max_steps);
    if (c->profile) {
        SCRIPT_OPT("--profile-start", c->profile_start);
        SCRIPT_OPT("--profile-stop", c->profile_stop);
    }
    if (k->synth_args) /* the kind's log format (job/kind.c) */
        k->synth_args(c, s);
#undef SCRIPT_OPT
    if (c->nccltrace)
        np_strv_push(s, "--nccltrace");
    if (c->checkpoint) {
        np_strv_push(s, "--checkpoint-save");
        np_strv_pushf(s, "%s/code/nemo_experiments/default/checkpoints", c->experiment_dir);
    }
    if (c->load_checkpoint) {
        np_strv_push(s, "--checkpoint-load");
        np_strv_push(s, c->load_checkpoint);
    }
}

enum np_status np_script_command(const struct np_launch_config *c, char ***argv, struct np_error *err)
{
    struct np_strv s = {0};
    *argv = NULL;
    const struct np_job_kind *k = np_job_kind_of(c);
    if (c->workload == NP_WORKLOAD_SYNTHETIC) {
        script_synth_argv(c, &s);
    } else if (k->command) { /* the kind's rank command (job/kind.c) */
        *argv = k->command(c);
        if (!*argv)
            return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory (or no rank command for this row)");
        return NP_OK;
    } else {
        if (!c->recipe->command) {
            np_strv_free(s.v);
            return np_error_set(err, NP_E_INVALID, c->recipe->path, 0, 0,
                                "command: recipe %s has no command template for WORKLOAD=nemo", c->recipe->name);
        }
        for (size_t i = 0; c->recipe->command[i]; i++) {
            enum np_status st = script_expand(c, c->recipe->command[i], i, c->recipe->path, &s, err);
            if (st != NP_OK) {
                np_strv_free(s.v);
                return st;
            }
        }
    }
    *argv = np_strv_steal(&s);
    if (!*argv)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    return NP_OK;
}

/* ---- the script ---- */

char *np_script_file_name(const struct np_launch_config *c)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "sbatch_%s.sh", c->job_name);
    return np_buf_steal(&b);
}

/* "#SBATCH --opt=<sbatch-quoted value>\n" */
static void script_sbatch_line(struct np_buf *b, const char *opt, const char *value)
{
    char *q = np_sbatch_quote(value);
    if (!q) {
        b->failed = 1; /* config validation refuses newlines; never reached */
        return;
    }
    np_buf_appendf(b, "#SBATCH --%s=%s\n", opt, q);
    free(q);
}

/* One srun word per line, continued with a backslash. */
static void script_word(struct np_buf *b, const char *w)
{
    np_buf_append(b, " \\\n    ");
    np_buf_append_shq(b, w);
}

enum np_status np_script_render(const struct np_launch_config *c, char **out, struct np_error *err)
{
    *out = NULL;
    char **cmd = NULL;
    enum np_status st = np_script_command(c, &cmd, err);
    if (st != NP_OK)
        return st;
    char *pat = np_slurm_pattern_escape(c->experiment_dir);
    struct np_buf b;
    np_buf_init(&b);
    if (!pat)
        b.failed = 1;

    /* #SBATCH block: options first, nothing executable before them */
    np_buf_append(&b, "#!/bin/bash\n");
    np_buf_appendf(&b, "#SBATCH --job-name=%s\n", c->job_name);
    np_buf_appendf(&b, "#SBATCH --nodes=%d\n", c->nodes);
    const struct np_job_kind *k = np_job_kind_of(c); /* one task per GPU, or per node under torchrun */
    np_buf_appendf(&b, "#SBATCH --ntasks-per-node=%d\n", k->tasks_per_node(c));
    np_buf_append(&b, "#SBATCH --exclusive\n#SBATCH --mem=0\n#SBATCH --open-mode=append\n");
    np_buf_appendf(&b, "#SBATCH --time=%s\n", c->time_limit);
    if (pat) {
        char *o = NULL;
        if (asprintf(&o, "%s/sbatch_%s_%%j.out", pat, c->job_name) >= 0)
            script_sbatch_line(&b, "output", o);
        else
            b.failed = 1;
        free(o);
    }
    if (c->account)
        script_sbatch_line(&b, "account", c->account);
    if (c->partition)
        script_sbatch_line(&b, "partition", c->partition);
    if (c->gres_gpus)
        script_sbatch_line(&b, "gpus-per-node", c->gres_gpus);
    /* NVL72 systems: MB's executor segments every job, NeMo's GB200 jobs beyond one rack */
    if (c->workload == NP_WORKLOAD_NEMO && k->segment(c) > 0)
        np_buf_appendf(&b, "#SBATCH --segment=%d\n", k->segment(c));
    /* NeMo-Run never requeued (TORCHX_MAX_RETRIES=0): only when NEMOPERF_MAX_RETRIES asks */
    np_buf_append(&b, c->retries > 0 ? "#SBATCH --export=ALL\n#SBATCH --requeue\n"
                                     : "#SBATCH --export=ALL\n#SBATCH --no-requeue\n");

    np_buf_appendf(&b,
                   "\n# Generated by nemoperf-launch %s: %s, %s workload, %d GPUs on %d node(s).\n"
                   "# Every value is quoted; HF_TOKEN never reaches the job (it reads what ./setup staged).\n\n",
                   NP_VERSION, c->job_name, np_workload_name(c->workload), c->gpus, c->nodes);
    np_buf_append(&b, "cd -- ");
    np_buf_append_shq(&b, c->experiment_dir);
    np_buf_append(&b, " || exit 1\n\n");

    struct np_script_var vars[NP_SCRIPT_MAX_VARS];
    size_t nv = np_script_vars(c, vars, NP_SCRIPT_MAX_VARS);
    for (size_t i = 0; i < nv; i++) {
        np_buf_appendf(&b, "export %s=", vars[i].name);
        np_buf_append_shq(&b, vars[i].value);
        np_buf_append(&b, "\n");
    }

    np_buf_append(&b, "\necho \"nemoperf: job ${SLURM_JOB_ID:-?} restart ${SLURM_RESTART_COUNT:-0} on "
                      "${SLURM_JOB_NODELIST:-?}\"\n");
    /* Slurm may still requeue (node failure; slurmrestd 22.05 ignores "requeue": false):
     * an attempt beyond what the user allowed does not run again */
    np_buf_appendf(&b,
                   "if [ \"${SLURM_RESTART_COUNT:-0}\" -gt %d ]; then\n"
                   "    echo \"nemoperf: requeued by Slurm, but NEMOPERF_MAX_RETRIES=%d: not running again\"\n"
                   "    exit 1\n"
                   "fi\n",
                   c->retries, c->retries);
    if (k->render_step) { /* the kind's own step (AutoModel: torchrun per node; Megatron-Bridge: numactl per GPU) */
        np_system_render_start(c, &b); /* the system snapshot and telemetry first (job/system.h) */
        char *prefix = NULL;
        if (!pat || asprintf(&prefix, "%s/log-%s_%%j_", pat, c->job_name) < 0 ||
            k->render_step(c, prefix, cmd, &b) != 0)
            b.failed = 1;
        free(prefix);
        goto requeue;
    }
    if (c->workload == NP_WORKLOAD_NEMO && pat) {
        /* PerfEnvPlugin's vboost step: one task per node on the host, failures ignored */
        np_buf_appendf(&b, "srun --ntasks=%d --ntasks-per-node=1 --output ", c->nodes);
        np_buf_append_shqf(&b, "%s/vboost.out", pat);
        np_buf_append(&b, " --error ");
        np_buf_append_shqf(&b, "%s/vboost.err", pat);
        np_buf_append(&b, " bash -c 'sudo nvidia-smi boost-slider --vboost 1' ||\n"
                          "    echo \"nemoperf: vboost failed (ignored)\"\n");
    }
    np_system_render_start(c, &b); /* after vboost: the clocks the workload runs with */
    np_buf_append(&b, "srun");
    /* the srun log: literal folder (pattern-escaped, quoted), srun's %j, and the
     * restart count expanded by the job's shell (the one unquoted expansion) */
    np_buf_append(&b, " \\\n    --output ");
    if (pat) {
        np_buf_append_shqf(&b, "%s/log-%s_%%j_", pat, c->job_name);
    }
    np_buf_append(&b, "\"${SLURM_RESTART_COUNT:-0}\"'.out'");
    if (c->workload == NP_WORKLOAD_NEMO) {
        np_buf_append(&b, " \\\n    --container-image ");
        np_buf_append_shq(&b, c->image);
        np_buf_append(&b, " \\\n    --container-mounts ");
        np_buf_append_shqf(&b, "%s:%s,%s:/nemo_run", c->stage_path, c->stage_path, c->experiment_dir);
        np_buf_append(&b, " \\\n    --container-workdir /nemo_run/code");
    }
    np_buf_append(&b, " \\\n    --wait=60 --kill-on-bad-exit=1");
    if (c->workload == NP_WORKLOAD_NEMO) {
        if (c->srun_mpi[0])
            np_buf_appendf(&b, " --mpi=%s", c->srun_mpi);
        np_buf_append(&b, " \\\n    --container-env=");
        char **names = np_script_env_names(c);
        if (!names)
            b.failed = 1;
        for (size_t i = 0; names && names[i]; i++)
            np_buf_appendf(&b, "%s%s", i ? "," : "", names[i]);
        np_strv_free(names);
    }
    /* NeMo v2.3.1 scripts/performance/utils.py l.82-85 (config.h, enum np_numa_bind): NVIDIA's words
     * unquoted, expanded once by this batch shell as NeMo-Run's script did; or each task's own node */
    if (c->workload == NP_WORKLOAD_NEMO && c->recipe->numactl && c->numa_bind == NP_NUMA_NVIDIA)
        np_buf_append(&b, " \\\n    numactl --cpunodebind=$((SLURM_LOCALID/4)) --membind=$((SLURM_LOCALID/4))");
    else if (c->workload == NP_WORKLOAD_NEMO && c->recipe->numactl && c->numa_bind == NP_NUMA_TASK)
        np_buf_append(&b, " \\\n    bash -c 'exec numactl --cpunodebind=$((SLURM_LOCALID/4)) "
                          "--membind=$((SLURM_LOCALID/4)) \"$@\"' numactl");
    /* nsys prefix (NeMo workload); -o is nsys's own pattern (%p = pid), not Slurm's */
    if (c->workload == NP_WORKLOAD_NEMO && c->profile) {
        np_buf_append(&b, " \\\n    nsys profile -s none -t nvtx,cuda " NP_NSYS_NEMORUN_ARGS " -o ");
        np_buf_append_shqf(&b, "%s/profile_%%p", c->nsys_dir);
    }
    /* one line per word, an option and its value together */
    for (size_t i = 0; cmd[i]; i++) {
        script_word(&b, cmd[i]);
        if (cmd[i][0] == '-' && !strchr(cmd[i], '=') && cmd[i + 1] && cmd[i + 1][0] != '-') {
            np_buf_append(&b, " ");
            np_buf_append_shq(&b, cmd[++i]);
        }
    }
requeue:
    np_buf_append(&b, "\nrc=$?\n");
    np_system_render_stop(c, &b);
    if (c->retries > 0)
        np_buf_appendf(&b,
                       "if [ \"$rc\" -ne 0 ] && [ \"${SLURM_RESTART_COUNT:-0}\" -lt %d ]; then\n"
                       "    echo \"nemoperf: step failed (exit $rc); requeueing job ${SLURM_JOB_ID:-?} "
                       "(restart $((${SLURM_RESTART_COUNT:-0} + 1)) of %d)\"\n"
                       "    scontrol requeue \"$SLURM_JOB_ID\" && exit 0\n"
                       "fi\n",
                       c->retries, c->retries);
    np_buf_append(&b, "exit \"$rc\"\n");
    free(pat);
    np_strv_free(cmd);
    *out = np_buf_steal(&b);
    if (!*out)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    return NP_OK;
}
