/* ftjob.c - the fine-tuning job of a launch (TASK=sft|lora): where NeMo's code finds the
 * imported checkpoint and the packed SQuAD data under NEMO_HOME, and the driver
 * arguments that turn NeMo's finetune_recipe into what NVIDIA's v2.3.1
 * scripts/performance/llm/finetune_llama3_*.py ran.
 */
#include "nemoperf/job/finetune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/model/recipe.h"

/* "<stage>/<mid>/<tail>" as a new string, NULL when out of memory. */
static char *ftjob_path(const char *stage, const char *mid, const char *tail)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/%s/%s", stage, mid, tail);
    return np_buf_steal(&b);
}

char *np_ft_model_dir(const char *stage, const char *hf_repo)
{
    return stage && hf_repo ? ftjob_path(stage, "models", hf_repo) : NULL;
}

char *np_ft_tokenizer_model_name(const char *hf_repo)
{
    if (!hf_repo)
        return NULL;
    struct np_buf b; /* fine_tuning.py l.350: name.replace("/", "--") */
    np_buf_init(&b);
    np_buf_append(&b, "");
    for (const char *p = hf_repo; *p; p++)
        np_buf_append(&b, *p == '/' ? "--" : (char[2]){*p, '\0'});
    return np_buf_steal(&b);
}

static char *ftjob_pack_file(const char *stage, const char *hf_repo, const char *file)
{
    char *tok = np_ft_tokenizer_model_name(hf_repo);
    char *rel = NULL;
    if (tok) {
        struct np_buf b;
        np_buf_init(&b);
        np_buf_appendf(&b, "%s/%s", tok, file);
        rel = np_buf_steal(&b);
    }
    char *p = stage && rel ? ftjob_path(stage, NP_FT_SQUAD_DIR "/packed", rel) : NULL;
    free(rel);
    free(tok);
    return p;
}

char *np_ft_packed_path(const char *stage, const char *hf_repo, const char *split, int pack_len)
{
    char file[64];
    snprintf(file, sizeof file, "%s_%d.npy", split, pack_len); /* fine_tuning.py l.301, l.312 */
    return ftjob_pack_file(stage, hf_repo, file);
}

char *np_ft_pack_metadata_path(const char *stage, const char *hf_repo, int pack_len)
{
    char file[64];
    snprintf(file, sizeof file, "%d_metadata.jsonl", pack_len); /* fine_tuning.py l.290 */
    return ftjob_pack_file(stage, hf_repo, file);
}

void np_ft_driver_args(const struct np_launch_config *c, struct np_strv *a)
{
    const struct np_model *m = c->model;
    np_strv_push(a, "--pack-len");
    np_strv_pushf(a, "%d", c->seq_len);
    if (c->task == NP_TASK_LORA) {
        np_strv_push(a, "--lora-dim");
        np_strv_pushf(a, "%d", m->lora.dim);
        np_strv_push(a, "--lora-alpha");
        np_strv_pushf(a, "%d", m->lora.alpha);
        for (char **t = m->lora.targets; t && *t; t++) {
            np_strv_push(a, "--lora-target");
            np_strv_push(a, *t);
        }
    }
    char *tok = np_ft_tokenizer_model_name(m->hf_repo);
    np_strv_push(a, "--tokenizer-model-name");
    np_strv_push(a, tok ? tok : "");
    free(tok);
    /* NEMO_HOME is the stage path inside the job as outside (the same mount) */
    np_strv_push(a, "--dataset-root");
    np_strv_pushf(a, "%s/%s", c->stage_path, NP_FT_SQUAD_DIR);
}

json_t *np_ft_json(const struct np_launch_config *c)
{
    if (c->task == NP_TASK_PRETRAIN)
        return json_null();
    const struct np_model *m = c->model;
    char *model_dir = np_ft_model_dir(c->stage_path, m->hf_repo);
    char *train = np_ft_packed_path(c->stage_path, m->hf_repo, "training", c->seq_len);
    char *val = np_ft_packed_path(c->stage_path, m->hf_repo, "validation", c->seq_len);
    char *meta = np_ft_pack_metadata_path(c->stage_path, m->hf_repo, c->seq_len);
    json_t *o = NULL;
    if (model_dir && train && val && meta) {
        json_t *lora = json_null();
        if (c->task == NP_TASK_LORA) {
            json_t *t = json_array();
            for (char **p = m->lora.targets; t && p && *p; p++)
                json_array_append_new(t, json_string(*p));
            lora = t ? json_pack("{s:i,s:i,s:o}", "dim", m->lora.dim, "alpha", m->lora.alpha, "targets", t) : NULL;
        }
        o = lora ? json_pack("{s:s,s:s,s:i,s:o,s:s,s:s,s:s,s:s,s:s}", "task", np_task_name(c->task), "peft_scheme",
                             c->task == NP_TASK_LORA ? "lora" : "none", "pack_len", c->seq_len, "lora", lora,
                             "dataset", "squad", "checkpoint", model_dir, "packed_train", train, "packed_validation",
                             val, "pack_metadata", meta)
                 : NULL;
    }
    free(model_dir);
    free(train);
    free(val);
    free(meta);
    return o;
}
