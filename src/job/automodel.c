/* workload_automodel.c - the NeMo AutoModel benchmark workload: what a seed-001 job runs.
 *
 * One srun task per node runs torchrun, which runs nemo_automodel/recipes/llm/benchmark.py with
 * -c examples/llm_benchmark/<yaml> from /opt/Automodel (Automodel docs/guides/llm/large-moe-
 * finetune.md l.108-125, slurm.sub l.80-94), never the `automodel` CLI (inside torchrun it runs
 * the training loop, not the benchmark: components/launcher/interactive.py l.88-93).  The
 * overrides (components/config/_arg_parser.py l.20-76) pin the published row's batch sizes and
 * warm-up (the facts: after e45812012 some YAMLs changed their batch sizes), and point the
 * model at the folder ./setup staged.
 */
#include "nemoperf/job/automodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/job/spec.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/model/layout.h"

const char *np_automodel_yaml(const struct np_model *m, const struct np_config_row *row)
{
    if (row && row->yaml)
        return row->yaml;
    return m && m->automodel ? m->automodel->yaml : NULL;
}

int np_automodel_warmup(const struct np_launch_config *c)
{
    const struct np_automodel_spec *a = c->model->automodel;
    if (!a)
        return 0;
    return a->warmup_steps < c->max_steps ? a->warmup_steps : c->max_steps / 3;
}

char **np_automodel_overrides(const struct np_model *m, const struct np_config_row *row, int max_steps, int warmup,
                              const char *model_path)
{
    if (!m || !m->automodel || !row)
        return NULL;
    const struct np_automodel_spec *a = m->automodel;
    char **v = calloc(12, sizeof *v);
    if (!v)
        return NULL;
    int n = 0, oom = 0;
#define AM_ARG(...)                                                                                                \
    do {                                                                                                           \
        if (asprintf(&v[n], __VA_ARGS__) < 0) {                                                                    \
            v[n] = NULL;                                                                                           \
            oom = 1;                                                                                               \
        } else {                                                                                                   \
            n++;                                                                                                   \
        }                                                                                                          \
    } while (0)
    AM_ARG("--step_scheduler.global_batch_size=%d", row->gbs);
    AM_ARG("--step_scheduler.local_batch_size=%d", row->lbs > 0 ? row->lbs : row->mbs);
    AM_ARG("--step_scheduler.max_steps=%d", max_steps > 0 ? max_steps : a->max_steps);
    AM_ARG("--benchmark.warmup_steps=%d", max_steps > 0 ? warmup : a->warmup_steps);
    /* TP/PP/CP/EP and the sequence length are the YAML's (they match the table at e45812012) */
    /* from_config reads config.json (and remote code) from here; from_pretrained the weights */
    AM_ARG("--model.%spretrained_model_name_or_path=%s", a->from_pretrained ? "" : "config.",
           model_path ? model_path : m->hf_repo);
#undef AM_ARG
    if (oom) {
        np_strv_free(v);
        return NULL;
    }
    return v;
}

char *np_automodel_list_text(const struct np_recipe_set *set, const struct np_list_filter *filter)
{
    struct np_buf b;
    np_buf_init(&b);
    int any = 0;
    for (size_t r = 0; set && r < set->n; r++)
        for (size_t m = 0; m < set->recipes[r].nmodels; m++) {
            const struct np_model *mp = &set->recipes[r].models[m];
            if (!mp->automodel || (filter && filter->recipe && *filter->recipe &&
                                   strcasecmp(filter->recipe, set->recipes[r].name) != 0))
                continue;
            for (size_t i = 0; i < mp->nrows; i++) {
                const struct np_config_row *row = &mp->rows[i];
                if (filter && filter->gpu_type && *filter->gpu_type && strcasecmp(filter->gpu_type, row->gpu_type) != 0)
                    continue;
                /* BF16 pre-training rows of no Megatron-Bridge container */
                if (filter && ((filter->container && *filter->container) ||
                               (filter->dtype && *filter->dtype && strcasecmp(filter->dtype, "bf16") != 0) ||
                               (filter->task && *filter->task && strcasecmp(filter->task, np_model_task(mp)) != 0)))
                    continue;
                if (!any) /* a title line ending in ':', then a table whose columns are named by its header */
                    np_buf_appendf(&b, "\nAutoModel benchmarks (RECIPE=%s MODEL=<MODEL> JOB_TOTAL_GPUS=<GPUS>; %s):\n"
                                       "%-9s %-51s %-5s %5s %-5s %5s %5s %3s %3s %2s %2s %2s %3s  %-15s %s\n",
                                   set->recipes[r].name, set->recipes[r].image, "RECIPE", "MODEL", "DTYPE", "GPUS",
                                   "GPU", "NODES", "GBS", "LBS", "GA", "TP", "PP", "CP", "EP", "LOAD",
                                   "YAML(examples/llm_benchmark/)");
                any = 1;
                char ep[16];
                snprintf(ep, sizeof ep, row->ep > 0 ? "%d" : "-", row->ep);
                np_buf_appendf(&b, "%-9s %-51s %-5s %5d %-5s %5d %5d %3d %3d %2d %2d %2d %3s  %-15s %s\n",
                               set->recipes[r].name, mp->size, row->dtypes & NP_DTYPE_FP8 ? "fp8" : "bf16", row->gpus,
                               row->gpu_type, row->gpus >= 8 ? row->gpus / 8 : 1, row->gbs,
                               row->lbs > 0 ? row->lbs : row->mbs,
                               row->ga, row->tp, row->pp, row->cp, ep,
                               mp->automodel->from_pretrained ? "from_pretrained" : "from_config",
                               np_automodel_yaml(mp, row));
            }
        }
    if (!any)
        np_buf_append(&b, "");
    return np_buf_steal(&b);
}

/* " \\\n    'word'" */
static void automodel_word(struct np_buf *b, const char *w)
{
    np_buf_append(b, " \\\n    ");
    np_buf_append_shq(b, w);
}

json_t *np_automodel_json(const struct np_launch_config *c)
{
    const struct np_automodel_spec *a = c->model->automodel;
    char *dir = np_stage_hf_dir(c->stage_path, c->model->hf_repo);
    json_t *o = a && dir ? json_pack("{s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:i, s:i, s:s}", "yaml",
                                     np_automodel_yaml(c->model, c->row), "workdir", NP_AUTOMODEL_WORKDIR,
                                     "hf_repo", c->model->hf_repo, "load",
                                     a->from_pretrained ? "from_pretrained" : "from_config", "trust_remote_code",
                                     a->trust_remote_code, "warmup_steps", np_automodel_warmup(c), "lbs",
                                     c->row && c->row->lbs > 0 ? c->row->lbs : c->mbs, "nproc_per_node",
                                     np_automodel_nproc(c), "rdzv_port", NP_AUTOMODEL_RDZV_PORT, "model_path", dir)
                           : NULL;
    free(dir);
    return o;
}

int np_automodel_nproc(const struct np_launch_config *c)
{
    return c->gpus < c->gpus_per_node ? c->gpus : c->gpus_per_node;
}

#define AUTOMODEL_RDZV_WORD NP_AUTOMODEL_RDZV_WORD

char **np_automodel_command(const struct np_launch_config *c)
{
    const char *yaml = np_automodel_yaml(c->model, c->row);
    char *dir = np_stage_hf_dir(c->stage_path, c->model->hf_repo);
    char **ov = dir && yaml ? np_automodel_overrides(c->model, c->row, c->max_steps, np_automodel_warmup(c), dir)
                            : NULL;
    free(dir);
    size_t n = 0;
    while (ov && ov[n])
        n++;
    char **v = ov ? calloc(n + 9, sizeof *v) : NULL;
    int k = 0, oom = !v;
    if (v) {
        oom |= asprintf(&v[k++], "torchrun") < 0;
        oom |= asprintf(&v[k++], "--nproc-per-node=%d", np_automodel_nproc(c)) < 0;
        oom |= asprintf(&v[k++], "--nnodes=%d", c->nodes) < 0;
        oom |= asprintf(&v[k++], "--rdzv_backend=c10d") < 0;
        oom |= asprintf(&v[k++], AUTOMODEL_RDZV_WORD ":%d", NP_AUTOMODEL_RDZV_PORT) < 0;
        oom |= asprintf(&v[k++], "nemo_automodel/recipes/llm/benchmark.py") < 0;
        oom |= asprintf(&v[k++], "-c") < 0;
        oom |= asprintf(&v[k++], "examples/llm_benchmark/%s", yaml) < 0;
        for (size_t i = 0; i < n; i++, k++)
            v[k] = ov[i]; /* moved */
        free(ov);
        ov = NULL;
    }
    np_strv_free(ov);
    if (oom) {
        np_strv_free(v);
        return NULL;
    }
    return v;
}

int np_automodel_render_step(const struct np_launch_config *c, const char *log_prefix, char *const *argv,
                             struct np_buf *b)
{
    const struct np_model *m = c->model;
    const char *yaml = np_automodel_yaml(m, c->row);
    if (!m->automodel || !yaml || !c->row || !argv)
        return -1;
    np_automodel_master_addr(b);
    if (c->workload == NP_WORKLOAD_SYNTHETIC)
        np_buf_appendf(b, "# WORKLOAD=synthetic: nemoperf-synth stands in for torchrun --nproc-per-node %d --nnodes %d "
                          "... benchmark.py -c examples/llm_benchmark/%s\n",
                       np_automodel_nproc(c), c->nodes, yaml);
    np_buf_append(b, "srun --ntasks-per-node=1");
    /* stdout and stderr apart, as slurm.sub does; nemoperf-parse reads both */
    np_buf_append(b, " \\\n    --output ");
    np_buf_append_shqf(b, "%s", log_prefix);
    np_buf_append(b, "\"${SLURM_RESTART_COUNT:-0}\"'.out' \\\n    --error ");
    np_buf_append_shqf(b, "%s", log_prefix);
    np_buf_append(b, "\"${SLURM_RESTART_COUNT:-0}\"'.err'");
    if (c->workload == NP_WORKLOAD_NEMO) {
        np_buf_append(b, " \\\n    --container-image ");
        np_buf_append_shq(b, c->image);
        np_buf_append(b, " \\\n    --container-mounts ");
        np_buf_append_shqf(b, "%s:%s,%s:%s", c->stage_path, c->stage_path, c->experiment_dir, c->experiment_dir);
        np_buf_append(b, " \\\n    --container-workdir " NP_AUTOMODEL_WORKDIR);
    }
    np_buf_append(b, " \\\n    --wait=60 --kill-on-bad-exit=1");
    /* torchrun (or the synthetic stand-in in its place) */
    np_automodel_render_argv(b, argv);
    return b->failed ? -1 : 0;
}

void np_automodel_master_addr(struct np_buf *b)
{
    /* torchrun's rendezvous host: the first node of the allocation (slurm.sub l.80-94) */
    np_buf_append(b, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
                     "export MASTER_ADDR\n");
}

void np_automodel_render_argv(struct np_buf *b, char *const *argv)
{
    /* one line per word, an option with its value; the rendezvous word with $MASTER_ADDR left to the shell */
    for (size_t i = 0; argv[i]; i++) {
        const char *w = argv[i];
        if (strncmp(w, AUTOMODEL_RDZV_WORD ":", sizeof AUTOMODEL_RDZV_WORD) == 0) {
            np_buf_append(b, " \\\n    --rdzv_endpoint=\"$MASTER_ADDR\"");
            np_buf_append_shq(b, w + sizeof AUTOMODEL_RDZV_WORD - 1);
            continue;
        }
        automodel_word(b, w);
        if (w[0] == '-' && !strchr(w, '=') && argv[i + 1] && argv[i + 1][0] != '-') {
            np_buf_append(b, " ");
            np_buf_append_shq(b, argv[++i]);
        }
    }
}
