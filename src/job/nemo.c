/* nemo.c - the real NeMo job: the in-container driver's arguments, its environment, its staging.
 *
 * Every setting NVIDIA's scripts/performance applied (25.02 for seeds 003/004,
 * 25.04 for seed 000; facts/nemo-job.md, facts/seed000.md) is decided here from
 * the recipe data and passed to share/nemoperf/driver/nemoperf_nemo.py as an
 * explicit argument; the driver only turns them into NeMo objects.
 */
#include "nemoperf/job/nemo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/job/finetune.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/job/env.h"
#include "nemoperf/util/shell.h"

/* What differs between the two generations of NVIDIA's performance scripts and is
 * not a per-recipe fact of the data files. */
struct nemo_scripts {
    const char *version;
    int samples_times_mbs;      /* num_train_samples = max_steps * gbs (* mbs) */
    int profile_start, profile_stop, profile_ranks; /* NVIDIA's own nsys window (steps) and ranks 0..n-1 */
    int fsdp_fp8_param_gather;  /* under FSDP with FP8: -1 the precision recipe's, else set to 0/1 */
};

static const struct nemo_scripts nemo_scripts_table[] = {
    /* dgxc v25.04 llama3.1/pretrain_llama31.py l.125, NeMo d2b2155 pretrain_nemotron4_*.py:
     * recipe.data.num_train_samples = max_steps * gbs * mbs; profile: dgxc v25.04 llama3.1/launch.sh
     * l.54-55 (PROFILE_START_STEP 20, PROFILE_STOP_STEP 25), pretrain_llama31.py l.226 and
     * nemotron/gsw_nemo.patch l.169 (nsys_ranks 0..7); no FSDP */
    {"25.02", 1, 20, 25, 8, -1},
    /* NeMo v2.3.1 scripts/performance/utils.py l.290-291: max_steps * gbs; profile: every
     * scripts/performance/llm/{pretrain,finetune}_*.py of the seed-000 models, e.g. pretrain_llama3_70b.py
     * l.184-185, NsysPlugin(start_step=5, end_step=6) with no ranks: rank 0 (nemo/lightning/run/plugins.py
     * l.170); FSDP + FP8: fp8_param_gather stays True (mixed_precision.py l.135) in the NeMo NVIDIA ran,
     * 7a8f1cc7bc (dgxc v25.05 llama3.1/setup.sh l.54, container 25.04.01) as in v2.3.1; v2.3.0's utils.py
     * l.352-354 forced it False, removed by e659a9beb0 before either */
    {"25.04", 0, 5, 6, 1, 1},
};

static const struct nemo_scripts *nemo_scripts_of(const struct np_recipe *r)
{
    for (size_t i = 0; r->nemo_scripts && i < sizeof nemo_scripts_table / sizeof nemo_scripts_table[0]; i++)
        if (strcmp(nemo_scripts_table[i].version, r->nemo_scripts) == 0)
            return &nemo_scripts_table[i];
    return &nemo_scripts_table[0];
}

void np_nemo_profile_defaults(const struct np_recipe *r, int *start, int *stop, int *ranks)
{
    const struct nemo_scripts *g = nemo_scripts_of(r);
    *start = g->profile_start;
    *stop = g->profile_stop;
    *ranks = g->profile_ranks;
}

/* fp8_param_gather as the driver sets it (FSDP with FP8 only): 0/1, or -1 (the recipe's). */
static int nemo_fp8_param_gather(const struct np_launch_config *c)
{
    return c->fsdp && c->fp8_recipe ? nemo_scripts_of(c->recipe)->fsdp_fp8_param_gather : -1;
}

const char *np_numa_bind_name(enum np_numa_bind b)
{
    switch (b) {
    case NP_NUMA_NVIDIA: return "nvidia";
    case NP_NUMA_TASK: return "task";
    case NP_NUMA_NONE: break;
    }
    return "none";
}

long long np_nemo_train_samples(const struct np_launch_config *c)
{
    long long n = (long long)c->max_steps * c->gbs;
    return nemo_scripts_of(c->recipe)->samples_times_mbs ? n * c->mbs : n;
}

int np_nemo_segment(const struct np_launch_config *c)
{
    /* NeMo v2.3.1 scripts/performance/utils.py l.97-103 */
    if (!c->recipe->segment || c->gpus_per_node != 4 || c->nodes <= 18)
        return 0;
    for (int s = 18; s > 0; s--)
        if (c->nodes % s == 0)
            return s;
    return 0;
}

/* The overlap_param_gather_with_optimizer_step NVIDIA computed (NeMo utils.py
 * set_primary_perf_configs: dp > 1 and pp > 1 and vp > 1), switched off when a
 * checkpoint is saved or loaded: dgxc v25.04 llama3.1/pretrain_llama31.py l.161-163
 * (not for 8b, whose PP 1 makes it off anyway), nemotron/gsw_nemo.patch l.353-354
 * (every Nemotron size). */
static int nemo_overlap_param_gather(const struct np_launch_config *c)
{
    if (c->checkpoint || c->load_checkpoint)
        return 0;
    return c->dp > 1 && c->pp > 1 && c->vp > 1;
}

char *np_nemo_ub_resolve(const char *tmpl, enum np_dtype d)
{
    if (!tmpl)
        return NULL;
    struct np_buf b;
    np_buf_init(&b);
    const char *p = strstr(tmpl, "{dtype}");
    if (p) {
        np_buf_appendn(&b, tmpl, (size_t)(p - tmpl));
        np_buf_append(&b, np_dtype_name(d, 0));
        np_buf_append(&b, p + 7);
    } else {
        np_buf_append(&b, tmpl);
    }
    return np_buf_steal(&b);
}

/* ---- the driver's arguments ---- */

static void nemo_opt_int(struct np_strv *a, const char *opt, long long v)
{
    np_strv_push(a, opt);
    np_strv_pushf(a, "%lld", v);
}

/* An optional size: the number, or "none" (NeMo's None) when 0. */
static void nemo_opt_size(struct np_strv *a, const char *opt, int v)
{
    if (v > 0) {
        nemo_opt_int(a, opt, v);
    } else {
        np_strv_push(a, opt);
        np_strv_push(a, "none");
    }
}

/* VP as NVIDIA passed it: None when 1 (utils.py set_primary_perf_configs). */
static int nemo_vp(const struct np_launch_config *c)
{
    return c->vp > 1 ? c->vp : 0;
}

char **np_nemo_driver_args(const struct np_launch_config *c)
{
    struct np_strv a = {0};
    const struct np_model *m = c->model;
    np_strv_push(&a, "--task");
    np_strv_push(&a, np_task_name(c->task));
    np_strv_push(&a, "--factory");
    np_strv_push(&a, m->factory);
    nemo_opt_int(&a, "--nodes", c->nodes);
    nemo_opt_int(&a, "--gpus-per-node", c->gpus_per_node);
    nemo_opt_int(&a, "--max-steps", c->max_steps);
    nemo_opt_int(&a, "--tp", c->tp);
    nemo_opt_int(&a, "--pp", c->pp);
    nemo_opt_int(&a, "--cp", c->cp);
    nemo_opt_size(&a, "--vp", nemo_vp(c));
    nemo_opt_int(&a, "--ep", c->ep > 0 ? c->ep : 1);
    nemo_opt_size(&a, "--etp", c->etp);
    nemo_opt_int(&a, "--mbs", c->mbs);
    nemo_opt_int(&a, "--gbs", c->gbs);
    nemo_opt_int(&a, "--num-train-samples", np_nemo_train_samples(c));
    nemo_opt_int(&a, "--num-layers", c->layers);
    nemo_opt_int(&a, "--hidden-size", c->hidden);
    np_strv_push(&a, "--fp8");
    np_strv_push(&a, c->fp8_recipe ? c->fp8_recipe : "none");
    if (c->fsdp)
        np_strv_push(&a, "--fsdp");
    if (c->cuda_graphs)
        np_strv_push(&a, "--cuda-graphs");
    if (c->tp_comm_overlap_cfg) {
        np_strv_push(&a, "--tp-comm-overlap-cfg");
        np_strv_push(&a, c->tp_comm_overlap_cfg);
    }
    np_strv_push(&a, "--overlap-param-gather-with-optimizer-step");
    np_strv_push(&a, nemo_overlap_param_gather(c) ? "true" : "false");
    /* NeMo v2.3.1 pretrain_mixtral_8x22b.py l.84-87: etp != tp needs average_in_collective off */
    if (c->etp > 0 && c->etp != c->tp)
        np_strv_push(&a, "--no-average-in-collective");
    if (c->recipe->cross_entropy_te)
        np_strv_push(&a, "--cross-entropy-fusion-te");
    if (c->recipe->flops_callback && c->task == NP_TASK_PRETRAIN) { /* utils.py l.401: pre-training only */
        np_strv_push(&a, "--flops-callback");
        np_strv_push(&a, np_flops_conv_name(m->flops.conv == NP_FLOPS_NEMOTRON_LEGACY ? NP_FLOPS_NEMOTRON
                                                                                   : m->flops.conv));
    }
    for (char **p = c->row->model_config; p && *p; p++) {
        np_strv_push(&a, "--model-config");
        np_strv_pushf(&a, "%s=%s", *p, np_setting_value(*p));
    }
    if (c->tokenizer_dir) {
        np_strv_push(&a, "--tokenizer-hf");
        np_strv_push(&a, c->tokenizer_dir);
    } else if (m->tokenizer.null_vocab > 0) {
        nemo_opt_int(&a, "--tokenizer-null", m->tokenizer.null_vocab);
        if (m->tokenizer.on_model)
            np_strv_push(&a, "--tokenizer-on-model");
    }
    if (c->profile) {
        nemo_opt_int(&a, "--profile-start", c->profile_start);
        nemo_opt_int(&a, "--profile-stop", c->profile_stop);
        nemo_opt_int(&a, "--profile-ranks", c->profile_ranks);
    }
    if (nemo_fp8_param_gather(c) >= 0) {
        np_strv_push(&a, "--fp8-param-gather");
        np_strv_push(&a, nemo_fp8_param_gather(c) ? "true" : "false");
    }
    if (c->task != NP_TASK_PRETRAIN)
        np_ft_driver_args(c, &a);
    if (c->checkpoint)
        np_strv_push(&a, "--checkpoint-save");
    if (c->load_checkpoint) {
        np_strv_push(&a, "--checkpoint-load");
        np_strv_push(&a, c->load_checkpoint);
    }
    return np_strv_steal(&a);
}

/* ---- --print-config ---- */

json_t *np_nemo_json(const struct np_launch_config *c)
{
    json_t *o = json_object(), *tok = json_object(), *env = json_object(), *args = json_array();
    int bad = !o || !tok || !env || !args;
    const struct np_model *m = c->model;
#define NEMO_SET(obj, k, v) bad |= json_object_set_new(obj, k, v)
#define NEMO_OPT(v) ((v) > 0 ? json_integer(v) : json_null())
    if (!bad) {
        NEMO_SET(o, "container", json_string(c->recipe->image));
        NEMO_SET(o, "scripts", c->recipe->nemo_scripts ? json_string(c->recipe->nemo_scripts) : json_null());
        NEMO_SET(o, "factory", json_string(m->factory));
        NEMO_SET(o, "gpus_per_node", json_integer(c->gpus_per_node));
        NEMO_SET(o, "nodes", json_integer(c->nodes));
        NEMO_SET(o, "tp", json_integer(c->tp));
        NEMO_SET(o, "pp", json_integer(c->pp));
        NEMO_SET(o, "cp", json_integer(c->cp));
        NEMO_SET(o, "vp", NEMO_OPT(nemo_vp(c)));
        NEMO_SET(o, "ep", json_integer(c->ep > 0 ? c->ep : 1));
        NEMO_SET(o, "etp", NEMO_OPT(c->etp));
        NEMO_SET(o, "mbs", json_integer(c->mbs));
        NEMO_SET(o, "gbs", json_integer(c->gbs));
        NEMO_SET(o, "fsdp", json_boolean(c->fsdp));
        NEMO_SET(o, "cuda_graphs", json_boolean(c->cuda_graphs));
        NEMO_SET(o, "fp8_recipe", c->fp8_recipe ? json_string(c->fp8_recipe) : json_null());
        NEMO_SET(o, "tp_comm_overlap_cfg", c->tp_comm_overlap_cfg ? json_string(c->tp_comm_overlap_cfg) : json_null());
        if (m->tokenizer.hf) {
            NEMO_SET(tok, "hf", json_string(m->tokenizer.hf));
            NEMO_SET(tok, "path", c->tokenizer_dir ? json_string(c->tokenizer_dir) : json_null());
        } else if (m->tokenizer.null_vocab > 0) {
            NEMO_SET(tok, "null_vocab_size", json_integer(m->tokenizer.null_vocab));
            NEMO_SET(tok, "on_model", json_boolean(m->tokenizer.on_model));
        }
        NEMO_SET(o, "tokenizer", json_object_size(tok) ? json_incref(tok) : json_null());
        NEMO_SET(o, "token_drop", json_boolean(m->token_drop));
        NEMO_SET(o, "gc_interval", NEMO_OPT(m->gc_interval));
        NEMO_SET(o, "fp8_param_gather", nemo_fp8_param_gather(c) >= 0 ? json_boolean(nemo_fp8_param_gather(c))
                                                                      : json_null());
        /* which binding ran (NEMOPERF_NUMA_BIND): null when the recipe runs no numactl */
        NEMO_SET(o, "numactl", c->recipe->numactl ? json_string(np_numa_bind_name(c->numa_bind)) : json_null());
        NEMO_SET(o, "profile_ranks", c->profile ? json_integer(c->profile_ranks) : json_null());
        NEMO_SET(o, "nsys_output", c->profile ? json_string(NP_NEMO_NSYS_DIR "/profile_%p.nsys-rep") : json_null());
        NEMO_SET(o, "segment", NEMO_OPT(np_nemo_segment(c)));
        NEMO_SET(o, "srun_mpi", c->srun_mpi[0] ? json_string(c->srun_mpi) : json_null());
        NEMO_SET(o, "retries", json_integer(c->retries));
        struct np_script_var vars[NP_SCRIPT_MAX_VARS];
        size_t nv = np_env_nemo_vars(c, vars, NP_SCRIPT_MAX_VARS);
        for (size_t i = 0; i < nv; i++)
            NEMO_SET(env, vars[i].name, json_string(vars[i].value));
        NEMO_SET(o, "env", json_incref(env));
        char **argv = np_nemo_driver_args(c);
        bad |= !argv;
        for (size_t i = 0; argv && argv[i]; i++)
            bad |= json_array_append_new(args, json_string(argv[i]));
        np_strv_free(argv);
        NEMO_SET(o, "driver", json_string(NP_NEMO_CODE_DIR "/" NP_NEMO_DRIVER));
        NEMO_SET(o, "driver_args", json_incref(args));
        json_t *corr = json_array();
        bad |= !corr;
        for (size_t i = 0; corr && i < c->row->ncorrections; i++) {
            const struct np_correction *k = &c->row->corrections[i];
            int pub = np_row_published(c->row, k->field);
            bad |= json_array_append_new(corr, json_pack("{s:s,s:o,s:i,s:s,s:s}", "field", k->field, "published",
                                                         pub > 0 ? json_integer(pub) : json_null(), "value",
                                                         k->value, "source", k->source, "reason", k->reason));
        }
        NEMO_SET(o, "corrections", corr ? corr : json_null());
        json_t *miss = json_array();
        bad |= !miss;
        for (char **p = c->missing; miss && p && *p; p++)
            bad |= json_array_append_new(miss, json_string(*p));
        NEMO_SET(o, "missing", miss ? miss : json_null());
    }
#undef NEMO_SET
#undef NEMO_OPT
    json_decref(tok);
    json_decref(env);
    json_decref(args);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- staging the driver ---- */

char *np_nemo_driver_source(void)
{
    char *dir = np_data_path("driver");
    if (!dir)
        return NULL;
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/%s", dir, NP_NEMO_DRIVER);
    free(dir);
    char *p = np_buf_steal(&b);
    if (p && access(p, R_OK) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

/* <dir>/<name>, created unless it exists; *out (when not NULL) gets the path (caller frees). */
static enum np_status nemo_mkdir_in(const char *dir, const char *name, char **out, struct np_error *err)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/%s", dir, name);
    char *path = np_buf_steal(&b);
    enum np_status st = NP_OK;
    if (!path)
        st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    else if (mkdir(path, 0755) != 0 && errno != EEXIST)
        st = np_error_set(err, NP_E_IO, path, 0, 0, "%s", strerror(errno));
    if (out && st == NP_OK)
        *out = path;
    else
        free(path);
    return st;
}

enum np_status np_nemo_stage_driver(const struct np_launch_config *c, struct np_error *err)
{
    char *src = np_nemo_driver_source();
    if (!src)
        return np_error_set(err, NP_E_NOTFOUND, NP_NEMO_DRIVER, 0, 0,
                            "the NeMo driver was not found in share/nemoperf/driver (set NEMOPERF_DATADIR or "
                            "reinstall nemoperf)");
    char *code = NULL;
    enum np_status st = nemo_mkdir_in(c->experiment_dir, "code", &code, err);
    if (st == NP_OK)
        st = np_file_copy_atomic(src, NP_JOB_STAGED_FILE_MAX, code, NP_NEMO_DRIVER, 0644, err);
    free(code);
    free(src);
    if (st == NP_OK && c->profile) /* nsys writes into it (NeMo-Run fb550a3 core/execution/base.py l.164-165) */
        st = nemo_mkdir_in(c->experiment_dir, NP_NEMO_NSYS_DIR, NULL, err);
    return st;
}
