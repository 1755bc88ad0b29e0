/* dfm_automodel.c - DFM's AutoModel pre-training of Wan 2.1 14B: the AutoModel-backend rows of DFM's summary.
 *
 * DFM pins no performance recipe for them (facts/dfm.md).  The job runs DFM 9eaace1's own example,
 * examples/automodel/pretrain/pretrain.py (parse_args_and_load_config, TrainDiffusionRecipe), under torchrun
 * one task per node (examples/automodel/README.md:104-141), with the shipped config file (DFM's pretrain YAML,
 * 14B, mock data: share/nemoperf/dfm/conf/) and Automodel's "--a.b=c" overrides (Automodel a5f0652
 * components/config/_arg_parser.py:49-67) for the row.  Steps: see dfm_am_overrides.
 */
#include "nemoperf/job/dfm_automodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/job/automodel.h"
#include "nemoperf/job/dfm.h"
#include "nemoperf/model/layout.h"
#include "nemoperf/util/shell.h"

char *const *np_dfm_am_path_names(const struct np_mbridge_spec *b)
{
    return b->am_pythonpath;
}

/* The row's local batch size: the published MBS (1). */
static int dfm_am_lbs(const struct np_launch_config *c)
{
    return c->row && c->row->lbs > 0 ? c->row->lbs : c->mbs;
}

char *np_dfm_am_model_id(const struct np_mbridge_spec *b)
{
    char *p = NULL;
    if (!b || !b->am_hf_model || asprintf(&p, NP_DFM_AM_MODEL_ROOT "/%s", b->am_hf_model) < 0)
        return NULL;
    return p;
}

char *np_dfm_am_mounts(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    char *dir = np_stage_hf_dir(c->stage_path, b->am_hf_model), *id = np_dfm_am_model_id(b), *p = NULL;
    if (dir && id && asprintf(&p, "%s:%s", dir, id) < 0)
        p = NULL;
    free(dir);
    free(id);
    return p;
}

char **np_dfm_am_overrides(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    char *model = np_dfm_am_model_id(b);
    if (!model)
        return NULL;
    struct np_strv s = {0};
    /* NeMoAutoDiffusionPipeline.from_pretrained reads the whole Diffusers folder (DFM 9eaace1
     * dfm/src/automodel/recipes/train.py:87-99, _diffusers/auto_diffusion_pipeline.py:111-200); the id is the
     * fixed mount point, without "wan" whatever STAGE_PATH is (train.py:87-90: np_dfm_am_model_id) */
    np_strv_pushf(&s, "--model.pretrained_model_name_or_path=%s", model);
    np_strv_pushf(&s, "--step_scheduler.global_batch_size=%d", c->gbs);
    np_strv_pushf(&s, "--step_scheduler.local_batch_size=%d", dfm_am_lbs(c));
    np_strv_pushf(&s, "--fsdp.dp_size=%d", c->dp);
    /* The step bound: train.py:316-326 builds the StepScheduler without max_steps, so step_scheduler.max_steps
     * is never read; the scheduler stops at num_epochs x ceil(len(dataloader) / grad_acc_steps) (Automodel
     * a5f0652 components/training/step_scheduler.py:85-95).  One epoch of a mock data set of MAX_STEPS x GBS
     * samples, split over DP ranks by the DistributedSampler (mock_dataloader.py:173-192), is MAX_STEPS steps. */
    np_strv_push(&s, "--step_scheduler.num_epochs=1");
    np_strv_pushf(&s, "--data.dataloader.length=%lld", (long long)c->max_steps * c->gbs);
    np_strv_pushf(&s, "--checkpoint.enabled=%s", c->checkpoint ? "true" : "false");
    np_strv_pushf(&s, "--checkpoint.checkpoint_dir=%s/checkpoints", c->experiment_dir);
    free(model);
    return np_strv_steal(&s);
}

char **np_dfm_am_argv(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    if (!b || !b->am_yaml)
        return NULL;
    char *script = np_mbridge_script_path(c->stage_path, b, b->am_script);
    char **ov = script ? np_dfm_am_overrides(c) : NULL;
    if (!ov) {
        free(script);
        return NULL;
    }
    struct np_strv s = {0};
    np_strv_push(&s, "torchrun");
    np_strv_pushf(&s, "--nproc-per-node=%d", c->gpus < c->gpus_per_node ? c->gpus : c->gpus_per_node);
    np_strv_pushf(&s, "--nnodes=%d", c->nodes);
    np_strv_push(&s, "--rdzv_backend=c10d");
    np_strv_pushf(&s, NP_AUTOMODEL_RDZV_WORD ":%d", NP_DFM_AM_RDZV_PORT);
    np_strv_push(&s, script);
    np_strv_push(&s, "-c");
    np_strv_pushf(&s, "%s/code/%s", c->experiment_dir, b->am_yaml);
    for (char **o = ov; *o; o++)
        np_strv_push(&s, *o);
    np_strv_free(ov);
    free(script);
    return np_strv_steal(&s);
}

char *np_dfm_am_staged(const struct np_launch_config *c, char *what, size_t n)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    char *dir = np_stage_hf_dir(c->stage_path, b->am_hf_model), *p = NULL;
    if (dir && asprintf(&p, "%s/model_index.json", dir) < 0)
        p = NULL;
    snprintf(what, n, "the Hugging Face model %s (%s)", b->am_hf_model, dir ? dir : "");
    free(dir);
    return p;
}

enum np_status np_dfm_am_stage(const struct np_launch_config *c, struct np_error *err)
{
    return np_dfm_stage_conf(c, c->model->mbridge->am_yaml, err);
}

json_t *np_dfm_am_json(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    const struct np_config_row *r = c->row;
    if (!b || !r)
        return json_object();
    char yaml_src[700], row_src[300], len_src[200];
    snprintf(yaml_src, sizeof yaml_src, "share/nemoperf/dfm/conf/%s: %s", b->am_yaml, b->am_yaml_source);
    snprintf(row_src, sizeof row_src, "published row %s", r->source ? r->source : "");
    snprintf(len_src, sizeof len_src, "%s x GBS: one epoch of the mock data is that many steps (train.py:316-326 "
             "passes the StepScheduler no max_steps)", c->max_steps_explicit ? "MAX_STEPS" : "MAX_STEPS default");
    char **argv = np_dfm_am_argv(c);
    json_t *o = json_object(), *cmd = json_array();
    for (char **a = argv; cmd && a && *a; a++)
        json_array_append_new(cmd, json_string(*a));
    np_strv_free(argv);
    char *model = np_dfm_am_model_id(b), *staged = np_stage_hf_dir(c->stage_path, b->am_hf_model);
    char nodes[200], model_src[600];
    snprintf(model_src, sizeof model_src, "the folder ./setup stages from the Hub (mbridge.automodel.hf_model), %s, "
             "mounted at a fixed path: DFM 9eaace1 train.py:87-90 takes NeMoWanPipeline.from_config (random "
             "weights) when the id contains \"wan\", NeMoAutoDiffusionPipeline.from_pretrained otherwise",
             staged ? staged : "");
    free(staged);
    snprintf(nodes, sizeof nodes, "%d nodes x %d GPUs per node", c->nodes, c->gpus_per_node);
    int bad = !o || !cmd || !model;
    if (o) {
        bad |= json_object_set_new(o, "kind", json_string(b->kind));
        bad |= json_object_set_new(o, "backend", json_string("automodel"));
        bad |= json_object_set_new(o, "perf_recipe", json_string(b->am_note));
        bad |= json_object_set_new(o, "node_command", cmd ? cmd : json_null());
        cmd = NULL;
        bad |= json_object_set_new(o, "config_file", np_dfm_sourced(json_string(b->am_yaml), yaml_src));
        bad |= json_object_set_new(o, "model.pretrained_model_name_or_path",
                                   np_dfm_sourced(model ? json_string(model) : NULL, model_src));
        bad |= json_object_set_new(o, "hf_model", json_string(b->am_hf_model));
        bad |= json_object_set_new(o, "step_scheduler.global_batch_size",
                                   np_dfm_sourced(json_integer(c->gbs), row_src));
        bad |= json_object_set_new(o, "step_scheduler.local_batch_size",
                                   np_dfm_sourced(json_integer(dfm_am_lbs(c)), row_src));
        bad |= json_object_set_new(o, "fsdp.dp_size", np_dfm_sourced(json_integer(c->dp), row_src));
        bad |= json_object_set_new(o, "fsdp.tp_size/cp_size/pp_size",
                                   np_dfm_sourced(json_pack("[i,i,i]", c->tp, c->cp, c->pp), yaml_src));
        bad |= json_object_set_new(o, "step_scheduler.num_epochs", np_dfm_sourced(json_integer(1), len_src));
        bad |= json_object_set_new(o, "data.dataloader.length",
                                   np_dfm_sourced(json_integer((json_int_t)c->max_steps * c->gbs), len_src));
        bad |= json_object_set_new(o, "steps",
                                   np_dfm_sourced(json_integer(c->max_steps),
                                                  c->max_steps_explicit ? "MAX_STEPS" : "MAX_STEPS default"));
        bad |= json_object_set_new(o, "checkpoint.enabled",
                                   np_dfm_sourced(json_boolean(c->checkpoint),
                                                  c->checkpoint ? "ENABLE_CHECKPOINT" : "ENABLE_CHECKPOINT unset"));
        bad |= json_object_set_new(o, "nodes_x_gpus_per_node", np_dfm_sourced(json_string(nodes), row_src));
        bad |= json_object_set_new(o, "container", np_dfm_sourced(json_string(c->recipe->image), b->source));
        bad |= json_object_set_new(o, "launcher",
                                   json_string("srun, one task per node running torchrun --nproc-per-node=<GPUs per "
                                               "node>, rendezvous on the first node (DFM 9eaace1 "
                                               "examples/automodel/README.md:104-141)"));
    }
    json_decref(cmd);
    free(model);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
