/* mbridge.c - the srun step every Megatron-Bridge job shares (DFM's Wan recipe; MB's perf recipes).
 *
 * NVIDIA's executor (NVIDIA-NeMo/Megatron-Bridge 953aabf scripts/performance/utils/executors.py) runs one
 * task per GPU in the container, `--mpi=pmix --no-container-mount-home`, each task under
 * `bash -c 'numactl --cpunodebind=$((SLURM_LOCALID/d)) --membind=$((SLURM_LOCALID/d)) <command>'`; MB takes rank
 * and world from SLURM_PROCID/SLURM_NTASKS and the rendezvous from the node list (src/megatron/bridge/utils/
 * common_utils.py:43-92, training/initialize.py:386-391), so no torchrun.  What a task runs is the kind's:
 * mbridge_kinds below, one builder per kind in its own file.
 */
#include "nemoperf/job/mbridge.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/job/automodel.h"
#include "nemoperf/job/dfm.h"
#include "nemoperf/job/dfm_automodel.h"
#include "nemoperf/job/mbridge_perf.h"

/* One workload kind: its rank command and what else it decides.  A model's rows run the kind of its
 * mbridge.kind whose backend is the row's ("automodel" rows; NULL: the others). */
struct mbridge_kind {
    const char *name, *backend;
    int numactl;        /* bind each task to its NUMA node as the executor does */
    int torchrun;       /* one task per node running torchrun (argv), rendezvous on the first node */
    int profiler;       /* the rank command takes MB's NsysPlugin overrides (profiling.*): nsys captures the
                         * cudaProfilerApi range MB opens; else nsys over the whole run */
    const char *synth_format; /* nemoperf-synth --log-format of WORKLOAD=synthetic */
    double (*synth_step_tflops)(const struct np_launch_config *c); /* its --step-tflops (NAN: none), or NULL */
    char **(*argv)(const struct np_launch_config *c);
    json_t *(*json)(const struct np_launch_config *c);
    enum np_status (*stage)(const struct np_launch_config *c, struct np_error *err);
    char *const *(*pythonpath)(const struct np_mbridge_spec *b); /* repo names in PYTHONPATH order */
    /* NULL, or a file the job reads besides the checkouts (a new string; what: how to name it) */
    char *(*staged)(const struct np_launch_config *c, char *what, size_t n);
    /* the same for more files: the i-th (a new string; NULL with what "" past the last, NULL otherwise: no memory) */
    char *(*staged_more)(const struct np_launch_config *c, size_t i, char *what, size_t n);
    const char *(*cpus)(const struct np_launch_config *c); /* numactl's extra binding (-C ...), or NULL */
    char *(*mounts)(const struct np_launch_config *c); /* NULL, or more "<src>:<dst>[,...]" (a new string) */
    const char *(*nsys_trace)(const struct np_launch_config *c); /* nsys -t; NULL: NeMo-Run's nvtx,cuda */
    /* NULL, or what the task's shell runs first ("<command>; ", static text without single quotes) */
    const char *(*pre_cmd)(const struct np_launch_config *c);
};

static char *const *mbridge_path_names(const struct np_mbridge_spec *b) { return b->pythonpath; }

/* DFM's perf runs were torchrun in an interactive container with only NVTE_FUSED_ATTN=1 set, no numactl (DFM
 * f8c1c09 examples/megatron/recipes/wan/README_perf_test.md:8-50,105): no executor environment, no binding; one
 * srun task per node runs that torchrun (MB takes RANK/WORLD_SIZE before SLURM_PROCID: MB 953aabf
 * src/megatron/bridge/utils/common_utils.py:43-92).  DFM's AutoModel pre-training runs under torchrun, one task
 * per node, too (examples/automodel/README.md:104-141). */
static const struct mbridge_kind mbridge_kinds[] = {
    {.name = "dfm", .torchrun = 1, .profiler = 1, .synth_format = "mbridge", .argv = np_dfm_argv,
     .json = np_dfm_json, .stage = np_dfm_stage, .pythonpath = mbridge_path_names},
    {.name = "dfm", .backend = "automodel", .torchrun = 1, .synth_format = "dfm-automodel", .argv = np_dfm_am_argv,
     .json = np_dfm_am_json, .stage = np_dfm_am_stage, .pythonpath = np_dfm_am_path_names,
     .staged = np_dfm_am_staged, .mounts = np_dfm_am_mounts},
    /* NVIDIA's scripts/performance rows (rows-<container>.json): the release's own executor binding */
    {.name = "perf", .numactl = 1, .profiler = 1, .synth_format = "mbridge", .argv = np_mbridge_perf_argv,
     .json = np_mbridge_perf_json, .pythonpath = mbridge_path_names, .cpus = np_mbridge_perf_cpus,
     .synth_step_tflops = np_mbridge_perf_step_tflops, .nsys_trace = np_mbridge_perf_nsys_trace,
     .staged_more = np_mbridge_perf_staged, .pre_cmd = np_mbridge_perf_pre_cmd},
};

static const struct mbridge_kind *mbridge_kind(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model ? c->model->mbridge : NULL;
    const char *backend = c->row && c->row->backend && strcmp(c->row->backend, "mcore") != 0 ? c->row->backend
                                                                                               : NULL;
    for (size_t i = 0; b && i < sizeof mbridge_kinds / sizeof mbridge_kinds[0]; i++)
        if (strcmp(mbridge_kinds[i].name, b->kind) == 0 &&
            (backend && mbridge_kinds[i].backend ? strcmp(backend, mbridge_kinds[i].backend) == 0
                                                 : backend == mbridge_kinds[i].backend))
            return &mbridge_kinds[i];
    return NULL;
}

const char *np_mbridge_synth_format(const struct np_launch_config *c)
{
    const struct mbridge_kind *k = mbridge_kind(c);
    return k ? k->synth_format : "mbridge";
}

double np_mbridge_synth_step_tflops(const struct np_launch_config *c)
{
    const struct mbridge_kind *k = mbridge_kind(c);
    return k && k->synth_step_tflops ? k->synth_step_tflops(c) : NAN;
}

char *np_mbridge_pythonpath(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    const struct mbridge_kind *k = mbridge_kind(c);
    char *const *names = b ? (k ? k->pythonpath(b) : b->pythonpath) : NULL;
    struct np_buf out;
    np_buf_init(&out);
    np_buf_append(&out, "");
    for (size_t i = 0; names && names[i]; i++) { /* "<repo name>" or "<repo name>/<folder in it>" */
        const char *sub = strchr(names[i], '/');
        size_t len = sub ? (size_t)(sub - names[i]) : strlen(names[i]);
        for (size_t j = 0; j < b->nrepos; j++)
            if (strlen(b->repos[j].name) == len && strncmp(b->repos[j].name, names[i], len) == 0) {
                char *d = np_mbridge_checkout_dir(c->stage_path, &b->repos[j]);
                if (!d)
                    out.failed = 1;
                else
                    np_buf_appendf(&out, "%s%s%s", i ? ":" : "", d, sub ? sub : "");
                free(d);
            }
    }
    if (b && b->pip) {
        char *d = np_mbridge_pip_dir(c->stage_path, c->recipe->name, c->model->size);
        if (!d)
            out.failed = 1;
        else /* the prefix setup installed into (setup/pip.c) */
            np_buf_appendf(&out, ":%s/site-packages", d);
        free(d);
    }
    return np_buf_steal(&out);
}

/* The checkouts the kind imports that replace the image's own copy (mbridge.repos[].replaces), mounted over
 * it: NVIDIA's reproduction deletes the image's /opt/Megatron-Bridge and /opt/Megatron-LM and clones the pinned
 * commits there (DFM f8c1c09 examples/megatron/recipes/wan/README_perf_test.md:34-42), so whatever of the image
 * points into those folders (its installed Megatron-Bridge) reads the pinned code.  Appends ",<checkout>:<folder>"
 * to b (unquoted), or nothing; then the kind's own mounts; -1 out of memory. */
static int mbridge_replace_mounts(const struct np_launch_config *c, const struct mbridge_kind *k, struct np_buf *b)
{
    const struct np_mbridge_spec *s = c->model->mbridge;
    char *const *names = k ? k->pythonpath(s) : NULL;
    for (size_t j = 0; names && j < s->nrepos; j++) {
        const struct np_mbridge_repo *r = &s->repos[j];
        size_t len = strlen(r->name), i = 0;
        while (names[i] && !(strncmp(names[i], r->name, len) == 0 && (names[i][len] == '\0' || names[i][len] == '/')))
            i++;
        if (!r->replaces || !names[i])
            continue;
        char *d = np_mbridge_checkout_dir(c->stage_path, r);
        if (!d)
            return -1;
        np_buf_appendf(b, ",%s:%s", d, r->replaces);
        free(d);
    }
    char *more = k && k->mounts ? k->mounts(c) : NULL;
    if (k && k->mounts && !more)
        return -1;
    if (more)
        np_buf_appendf(b, ",%s", more);
    free(more);
    return b->failed ? -1 : 0;
}

int np_mbridge_tasks_per_node(const struct np_launch_config *c)
{
    const struct mbridge_kind *k = mbridge_kind(c);
    return c->workload == NP_WORKLOAD_NEMO && k && k->torchrun ? 1 : c->gpus_per_node;
}

/* Megatron-Bridge scripts/performance/utils/executors.py:182 at 067f987: 2 ranks per NUMA node on GB200, GB300 and
 * (PR #5196, 6e16ebf) VR200; 4 elsewhere. */
int np_mbridge_numa_divisor(const char *gpu_type)
{
    static const char *const two[] = {"gb200", "gb300", "vr200"};
    for (size_t i = 0; gpu_type && i < sizeof two / sizeof two[0]; i++)
        if (strcasecmp(gpu_type, two[i]) == 0)
            return 2;
    return 4;
}

/* The row's release's own divisor when its executor has one of its own (r0.2.0: 2 on GB200 only), else 2 on
 * GB200/GB300 and 4 elsewhere. */
static int mbridge_numa_divisor(const struct np_launch_config *c)
{
    return c->mb && c->mb->numa_divisor > 0 ? c->mb->numa_divisor : np_mbridge_numa_divisor(c->gpu_type);
}

int np_mbridge_segment(const struct np_launch_config *c)
{
    if (c->gpus_per_node != 4)
        return 0;
    if (c->mb && c->mb->segment_beyond_rack && c->nodes <= 18) /* v0.1/v0.2: "nodes > 18" (executors.py) */
        return 0;
    if (c->nodes <= 18)
        return c->nodes;
    for (int s = 18; s > 0; s--)
        if (c->nodes % s == 0)
            return s;
    return 0;
}

void np_mbridge_profile_args(const struct np_launch_config *c, struct np_strv *s)
{
    if (!c->profile)
        return;
    np_strv_push(s, "profiling.use_nsys_profiler=true");
    np_strv_pushf(s, "profiling.profile_step_start=%d", c->profile_start);
    np_strv_pushf(s, "profiling.profile_step_end=%d", c->profile_stop);
    np_strv_push(s, "profiling.profile_ranks=[0]");
    np_strv_push(s, "profiling.record_shapes=false");
}

char **np_mbridge_command(const struct np_launch_config *c)
{
    const struct mbridge_kind *k = mbridge_kind(c);
    char **argv = k ? k->argv(c) : NULL;
    if (!argv || !c->profile || !k->profiler) /* DFM's AutoModel loop has no profiler hook: nsys over the run */
        return argv;
    struct np_strv s = {0}; /* every kind: MB's NsysPlugin overrides after its own arguments */
    for (char **a = argv; *a; a++)
        np_strv_push(&s, *a);
    np_strv_free(argv);
    np_mbridge_profile_args(c, &s);
    return np_strv_steal(&s);
}

int np_mbridge_render_step(const struct np_launch_config *c, const char *log_prefix, char *const *argv,
                           struct np_buf *b)
{
    if (!c->model->mbridge || !argv)
        return -1;
    const struct mbridge_kind *k = mbridge_kind(c);
    int nemo = c->workload == NP_WORKLOAD_NEMO, torchrun = nemo && k && k->torchrun;
    if (torchrun)
        np_automodel_master_addr(b);
    if (nemo) { /* the checkouts and pip folder ./setup staged, ahead of the image's own path */
        char *pp = np_mbridge_pythonpath(c);
        if (!pp)
            return -1;
        np_buf_append(b, "export PYTHONPATH=");
        np_buf_append_shq(b, pp);
        np_buf_append(b, "\"${PYTHONPATH:+:$PYTHONPATH}\"\n");
        free(pp);
    } else {
        np_buf_append(b, "# WORKLOAD=synthetic: nemoperf-synth stands in for the rank command on every task\n");
    }
    np_buf_appendf(b, "srun --ntasks-per-node=%d", np_mbridge_tasks_per_node(c));
    np_buf_append(b, " \\\n    --output ");
    np_buf_append_shq(b, log_prefix);
    np_buf_append(b, "\"${SLURM_RESTART_COUNT:-0}\"'.out'");
    if (nemo) {
        /* torchrun starts its own workers: no PMI for them */
        np_buf_append(b, torchrun ? " \\\n    --no-container-mount-home" : " \\\n    --mpi=pmix --no-container-mount-home");
        if (!c->mb || np_mbridge_perf_writable(c)) /* Megatron-Bridge before v0.4 ran without it */
            np_buf_append(b, " --container-writable");
        np_buf_append(b, " \\\n    --container-image ");
        np_buf_append_shq(b, c->image);
        np_buf_append(b, " \\\n    --container-mounts ");
        struct np_buf m;
        np_buf_init(&m);
        np_buf_appendf(&m, "%s:%s,%s:%s", c->stage_path, c->stage_path, c->experiment_dir, c->experiment_dir);
        char *mounts = mbridge_replace_mounts(c, k, &m) == 0 ? np_buf_steal(&m) : NULL;
        if (!mounts) {
            np_buf_free(&m);
            return -1;
        }
        np_buf_append_shq(b, mounts);
        free(mounts);
        np_buf_append(b, " \\\n    --container-workdir ");
        np_buf_append_shq(b, c->experiment_dir);
        np_buf_append(b, " \\\n    --container-env=PYTHONPATH");
        struct np_script_var vars[NP_SCRIPT_MAX_VARS];
        size_t nv = np_env_mbridge_vars(c, vars, NP_SCRIPT_MAX_VARS);
        for (size_t i = 0; i < nv; i++)
            np_buf_appendf(b, ",%s", vars[i].name);
        if (c->hf_token)
            np_buf_append(b, ",HF_TOKEN");
    }
    np_buf_append(b, " \\\n    --wait=60 --kill-on-bad-exit=1");
    /* the task's own shell expands SLURM_LOCALID (executors.py:126-131: bash -c '<numactl> <command>') */
    np_buf_append(b, " \\\n    bash -c '");
    if (nemo && k && k->pre_cmd && k->pre_cmd(c))
        np_buf_append(b, k->pre_cmd(c));
    if (nemo && k && k->numactl) {
        int d = mbridge_numa_divisor(c);
        np_buf_appendf(b, "exec numactl --cpunodebind=$((SLURM_LOCALID/%d)) --membind=$((SLURM_LOCALID/%d))", d, d);
        np_buf_appendf(b, "%s ", k->cpus && k->cpus(c) ? k->cpus(c) : "");
    } else {
        np_buf_append(b, "exec ");
    }
    /* NeMo-Run's nsys prefix (nemo_run/core/execution/launcher.py): MB's profiler starts and stops the
     * capture through cudaProfilerApi at profiling.profile_step_start/end */
    if (nemo && c->profile) {
        np_buf_appendf(b, "nsys profile -s none -t %s ", k && k->nsys_trace ? k->nsys_trace(c) : "nvtx,cuda");
        /* NeMo-Run's arguments, the NeMo path's too; a kind without MB's profiler: nsys over the whole run */
        np_buf_append(b, k && k->profiler ? NP_NSYS_NEMORUN_ARGS " " : "--force-overwrite=true ");
        np_buf_append(b, torchrun ? "-o \"$NEMOPERF_PROFILE_DIR\"/profile_node\"$SLURM_NODEID\" "
                                  : "-o \"$NEMOPERF_PROFILE_DIR\"/profile_rank\"$SLURM_PROCID\" ");
    }
    np_buf_append(b, "\"$@\"' mbridge");
    np_automodel_render_argv(b, argv);
    return b->failed ? -1 : 0;
}

enum np_status np_mbridge_stage(const struct np_launch_config *c, struct np_error *err)
{
    const struct mbridge_kind *k = mbridge_kind(c);
    if (!k)
        return np_error_set(err, NP_E_INVALID, c->recipe->path, 0, 0, "mbridge.kind: no builder for %s",
                            c->model->mbridge ? c->model->mbridge->kind : "(none)");
    return c->workload == NP_WORKLOAD_NEMO && k->stage ? k->stage(c, err) : NP_OK;
}

enum np_status np_mbridge_check_staged(const struct np_launch_config *c, np_mbridge_missing_fn missing, void *ctx)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    if (!b || c->workload != NP_WORKLOAD_NEMO)
        return NP_OK;
    enum np_status st = NP_OK;
    struct stat sb;
    const struct mbridge_kind *k = mbridge_kind(c);
    if (k && k->staged) { /* what the kind reads besides the checkouts (DFM AutoModel: the Hub model) */
        char what[1200];
        char *p = k->staged(c, what, sizeof what);
        if (!p)
            return NP_E_NOMEM;
        if (stat(p, &sb) != 0)
            st = missing(ctx, what);
        free(p);
    }
    for (size_t i = 0; st == NP_OK && k && k->staged_more; i++) { /* the perf kind's LoRA rows: data, checkpoint */
        char what[1600] = "";
        char *p = k->staged_more(c, i, what, sizeof what);
        if (!p && !what[0])
            break;
        if (!p)
            return NP_E_NOMEM;
        if (stat(p, &sb) != 0)
            st = missing(ctx, what);
        free(p);
    }
    for (size_t i = 0; st == NP_OK && i <= b->nrepos; i++) {
        char *d = i < b->nrepos ? np_mbridge_checkout_dir(c->stage_path, &b->repos[i])
                  : b->pip      ? np_mbridge_pip_site(c->stage_path, c->recipe->name, c->model->size)
                                : NULL;
        if (!d && (i < b->nrepos || b->pip))
            return NP_E_NOMEM;
        if (d && (stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
            char what[1200];
            if (i < b->nrepos)
                snprintf(what, sizeof what, "%s at %s (%s)", b->repos[i].github, b->repos[i].commit, d);
            else
                snprintf(what, sizeof what, "the pip packages of %s %s (%s)", c->recipe->name, c->model->size, d);
            st = missing(ctx, what);
        }
        free(d);
    }
    return st;
}

json_t *np_mbridge_json(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    const struct mbridge_kind *k = mbridge_kind(c);
    json_t *o = k && k->json ? k->json(c) : json_object();
    if (!o || !b)
        return o;
    int bad = 0;
    json_t *repos = json_array();
    for (size_t i = 0; repos && i < b->nrepos; i++) {
        char *d = c->stage_path ? np_mbridge_checkout_dir(c->stage_path, &b->repos[i]) : NULL;
        bad |= json_array_append_new(repos, json_pack("{s:s, s:s, s:s, s:s?, s:s?}", "name", b->repos[i].name,
                                                      "github", b->repos[i].github, "commit", b->repos[i].commit,
                                                      "staged_at", d, "replaces", b->repos[i].replaces));
        free(d);
    }
    bad |= json_object_set_new(o, "repos", repos ? repos : json_null());
    bad |= json_object_set_new(o, "source", json_string(b->source));
    char *pp = c->stage_path ? np_mbridge_pythonpath(c) : NULL;
    bad |= json_object_set_new(o, "pythonpath", pp ? json_string(pp) : json_null());
    free(pp);
    json_t *pip = json_array();
    for (char **p = b->pip; pip && p && *p; p++)
        bad |= json_array_append_new(pip, json_string(*p));
    bad |= json_object_set_new(o, "pip", pip ? pip : json_null());
    json_t *up = json_array();
    for (char **p = b->pip_upgrade; up && p && *p; p++)
        bad |= json_array_append_new(up, json_string(*p));
    bad |= json_object_set_new(o, "pip_upgrade", up ? up : json_null());
    json_t *env = json_object();
    struct np_script_var vars[NP_SCRIPT_MAX_VARS];
    size_t nv = np_env_mbridge_vars(c, vars, NP_SCRIPT_MAX_VARS);
    for (size_t i = 0; env && i < nv; i++)
        bad |= json_object_set_new(env, vars[i].name, json_string(vars[i].value));
    bad |= json_object_set_new(o, "env", env ? env : json_null());
    bad |= json_object_set_new(o, "env_source",
                               json_string(b->executor_env ? "MB 953aabf scripts/performance/utils/executors.py:39-47"
                                           : b->env_source ? b->env_source : "the recipe"));
    if (c->profile && k && k->profiler) { /* what nsys runs with, and NVIDIA's steps at the row's release */
        const struct np_mbperf_profile *p = c->mb ? np_mbridge_perf_profile(c->mb->release) : NULL;
        bad |= json_object_set_new(
            o, "nsys",
            json_pack("{s:s, s:s, s:i, s:i, s:s, s:s}", "trace", k->nsys_trace ? k->nsys_trace(c) : "nvtx,cuda", "args",
                      NP_NSYS_NEMORUN_ARGS, "profile_step_start", c->profile_start, "profile_step_end",
                      c->profile_stop, "source",
                      p ? p->source : "NeMo-Run's default trace (v0.10.0 nemo_run/core/execution/launcher.py:32-41)",
                      "args_source", "NeMo-Run v0.10.0 nemo_run/core/execution/launcher.py:32-41"));
    }
    if (k && k->numactl)
        bad |= json_object_set_new(o, "numactl_divisor", json_integer(mbridge_numa_divisor(c)));
    if (!json_object_get(o, "launcher")) /* the kind's own, else one task per GPU */
        bad |= json_object_set_new(o, "launcher",
                               json_string("srun, one task per GPU (rank/world from SLURM_PROCID/SLURM_NTASKS: MB "
                                           "953aabf src/megatron/bridge/utils/common_utils.py:43-92)"));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
