/* dfm.c - NeMo DFM's Wan 2.1 pre-training as NVIDIA ran it for docs/performance-summary.md.
 *
 * Each node runs torchrun over pretrain_wan.py from the pinned DFM checkout (DFM 9eaace1
 * examples/megatron/recipes/wan/pretrain_wan.py:89-102 flags, 141-171 recipe -> YAML -> a.b=c overrides) with
 * --mock --training-mode pretrain and the row's perf YAML (DFM f8c1c09 README_perf_test.md:105,146-150).  The YAMLs set no train.train_iters, so
 * the recipe's 10,000 would apply (DFM 9eaace1 dfm/src/megatron/recipes/wan/wan.py): nemoperf passes MAX_STEPS,
 * and checkpoint.save=null unless ENABLE_CHECKPOINT (the recipe saves every 2,000 steps otherwise).
 */
#include "nemoperf/job/dfm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nemoperf/job/automodel.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/util/shell.h"

int np_dfm_row_automodel(const struct np_config_row *row)
{
    return row && row->backend && strcmp(row->backend, "automodel") == 0;
}

char **np_dfm_argv(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    if (!b || !c->row || !c->row->yaml)
        return NULL;
    struct np_strv s = {0};
    char *script = np_mbridge_script_path(c->stage_path, b, b->script);
    if (!script)
        return NULL;
    /* README_perf_test.md:105: NVTE_FUSED_ATTN=1 torchrun --nproc_per_node=8 <script> ...; on several nodes the
     * rendezvous is the first node's, as DFM's AutoModel example (examples/automodel/README.md:104-141) */
    np_strv_push(&s, "torchrun");
    np_strv_pushf(&s, "--nproc_per_node=%d", c->gpus < c->gpus_per_node ? c->gpus : c->gpus_per_node);
    np_strv_pushf(&s, "--nnodes=%d", c->nodes);
    np_strv_push(&s, "--rdzv_backend=c10d");
    np_strv_pushf(&s, NP_AUTOMODEL_RDZV_WORD ":%d", NP_DFM_RDZV_PORT);
    np_strv_push(&s, script);
    free(script);
    for (char **a = b->args; a && *a; a++)
        np_strv_push(&s, *a);
    np_strv_push(&s, "--config-file");
    np_strv_pushf(&s, "%s/code/%s", c->experiment_dir, c->row->yaml);
    /* Hydra-style overrides, after the YAML (pretrain_wan.py:161-165) */
    np_strv_pushf(&s, "train.train_iters=%d", c->max_steps);
    if (c->checkpoint) {
        np_strv_pushf(&s, "checkpoint.save=%s/checkpoints", c->experiment_dir);
        np_strv_pushf(&s, "checkpoint.save_interval=%d", c->max_steps);
    } else {
        np_strv_push(&s, "checkpoint.save=null");
    }
    return np_strv_steal(&s); /* job/mbridge.c appends the profiling overrides */
}

char *np_dfm_conf_path(const char *name)
{
    char *dir = name ? np_data_path("dfm") : NULL, *p = NULL;
    if (dir && asprintf(&p, "%s/conf/%s", dir, name) < 0)
        p = NULL;
    free(dir);
    return p;
}

char *np_dfm_conf_source(const struct np_config_row *row)
{
    return np_dfm_conf_path(row ? row->yaml : NULL);
}

enum np_status np_dfm_stage_conf(const struct np_launch_config *c, const char *name, struct np_error *err)
{
    char *src = np_dfm_conf_path(name);
    if (!src)
        return np_error_set(err, NP_E_NOTFOUND, name ? name : "(none)", 0, 0,
                            "the row's DFM config file was not found in share/nemoperf/dfm/conf (set "
                            "NEMOPERF_DATADIR or reinstall nemoperf)");
    char *code = NULL;
    enum np_status st = asprintf(&code, "%s/code", c->experiment_dir) < 0
                            ? np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory")
                            : np_file_copy_atomic(src, NP_JOB_STAGED_FILE_MAX, code, name, 0644, err);
    free(code);
    free(src);
    return st;
}

enum np_status np_dfm_stage(const struct np_launch_config *c, struct np_error *err)
{
    return np_dfm_stage_conf(c, c->row ? c->row->yaml : NULL, err);
}

/* {"value": v, "source": s} */
json_t *np_dfm_sourced(json_t *v, const char *source)
{
    return json_pack("{s:o, s:s}", "value", v ? v : json_null(), "source", source);
}

json_t *np_dfm_json(const struct np_launch_config *c)
{
    const struct np_mbridge_spec *b = c->model->mbridge;
    const struct np_config_row *r = c->row;
    if (!b || !r)
        return json_object();
    char yaml_src[600], row_src[300];
    snprintf(yaml_src, sizeof yaml_src, "%s (share/nemoperf/dfm/conf/%s, from %s)", r->yaml ? r->yaml : "-",
             r->yaml ? r->yaml : "-", b->conf_source ? b->conf_source : "the recipe");
    snprintf(row_src, sizeof row_src, "published row %s", r->source ? r->source : "");
    json_t *o = json_object();
    char **argv = np_dfm_argv(c);
    json_t *cmd = json_array();
    for (char **a = argv; cmd && a && *a; a++)
        json_array_append_new(cmd, json_string(*a));
    np_strv_free(argv);
    int bad = !o || !cmd;
    char iters_src[160];
    snprintf(iters_src, sizeof iters_src, "%s (the YAML sets none: the recipe's own default is %d)",
             c->max_steps_explicit ? "MAX_STEPS" : "MAX_STEPS default", b->train_iters_default);
    if (o) {
        bad |= json_object_set_new(o, "kind", json_string(b->kind));
        bad |= json_object_set_new(o, "backend", json_string(np_dfm_row_automodel(r) ? "automodel" : "mcore"));
        bad |= json_object_set_new(o, "node_command", cmd ? cmd : json_null());
        bad |= json_object_set_new(o, "launcher",
                                   json_string("srun, one task per node running torchrun --nproc_per_node=<GPUs per "
                                               "node>, no numactl, rendezvous on the first node (DFM f8c1c09 "
                                               "examples/megatron/recipes/wan/README_perf_test.md:8-19,105)"));
        bad |= json_object_set_new(o, "config_file", np_dfm_sourced(json_string(r->yaml ? r->yaml : ""), yaml_src));
        bad |= json_object_set_new(o, "train.train_iters", np_dfm_sourced(json_integer(c->max_steps), iters_src));
        bad |= json_object_set_new(o, "checkpoint.save",
                                   np_dfm_sourced(c->checkpoint ? json_string("<experiment>/checkpoints") : json_null(),
                                               c->checkpoint ? "ENABLE_CHECKPOINT" : "ENABLE_CHECKPOINT unset"));
        bad |= json_object_set_new(o, "model.tensor_model_parallel_size",
                                   np_dfm_sourced(json_integer(c->tp), yaml_src));
        bad |= json_object_set_new(o, "model.sequence_parallel", np_dfm_sourced(json_boolean(r->sp), yaml_src));
        bad |= json_object_set_new(o, "model.pipeline_model_parallel_size",
                                   np_dfm_sourced(json_integer(c->pp), yaml_src));
        bad |= json_object_set_new(o, "model.context_parallel_size", np_dfm_sourced(json_integer(c->cp), yaml_src));
        bad |= json_object_set_new(o, "ddp.use_megatron_fsdp", np_dfm_sourced(json_boolean(r->fsdp > 0), yaml_src));
        bad |= json_object_set_new(o, "train.global_batch_size", np_dfm_sourced(json_integer(c->gbs), yaml_src));
        bad |= json_object_set_new(o, "train.micro_batch_size", np_dfm_sourced(json_integer(c->mbs), yaml_src));
        bad |= json_object_set_new(o, "data_parallel_size",
                                   np_dfm_sourced(json_integer(c->dp), "derived: GPUs / (TP x PP x CP)"));
        char nodes[200];
        snprintf(nodes, sizeof nodes, "%d nodes x %d GPUs per node", c->nodes, c->gpus_per_node);
        bad |= json_object_set_new(o, "nodes_x_gpus_per_node", np_dfm_sourced(json_string(nodes), row_src));
        bad |= json_object_set_new(o, "container", np_dfm_sourced(json_string(c->recipe->image), b->source));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
