/* env.c - the variables a job's batch script exports, in script order.
 *
 * NVIDIA's: NeMo-Run's defaults and the PerfEnvPlugin of scripts/performance (cited below); ours:
 * offline Hugging Face access (the tokenizer is staged), NEMO_HOME/HF_HOME, NCCL trace switches
 * (moved from src/launch/script.c: the REST backend and the NeMo driver read the same list).
 */
#include "nemoperf/job/env.h"

#include "nemoperf/job/mbridge_perf.h"

#include <string.h>
#include <strings.h>

const char *np_nemo_max_connections(const struct np_launch_config *c)
{
    if (c->tp <= 1 && c->cp <= 1)
        return NULL;
    size_t n = strlen(c->gpu_type);
    for (char **p = c->recipe->max_connections; p && *p; p++)
        if (strlen(*p) == n && strcmp(*p, c->gpu_type) == 0)
            return np_setting_value(*p);
    return "1"; /* PerfEnvPlugin without gpu_sm100_or_newer */
}

/* A Megatron-Bridge job (job/mbridge.h): NVIDIA's executor PERF_ENV_VARS when the recipe asks for them
 * ("executor_env"), the recipe's env, then the switches. */
size_t np_env_mbridge_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap)
{
    size_t n = 0;
    if (c->mb) { /* a performance row: the release's executor and plugins (job/mbridge_perf.c) */
        const char *names[NP_SCRIPT_MAX_VARS], *values[NP_SCRIPT_MAX_VARS];
        n = np_mbridge_perf_env(c, names, values, NULL, cap < NP_SCRIPT_MAX_VARS ? cap : NP_SCRIPT_MAX_VARS);
        for (size_t i = 0; i < n; i++) {
            vars[i].name = names[i];
            vars[i].value = values[i];
        }
        return n;
    }
#define ENV_MB(k_, v_)                                                                                            \
    do {                                                                                                          \
        if (n < cap) {                                                                                            \
            vars[n].name = (k_);                                                                                  \
            vars[n].value = (v_);                                                                                 \
            n++;                                                                                                  \
        }                                                                                                         \
    } while (0)
    if (c->model->mbridge->executor_env) { /* MB 953aabf scripts/performance/utils/executors.py:39-47, GB200 102-104 */
        ENV_MB("TORCH_NCCL_AVOID_RECORD_STREAMS", "1");
        ENV_MB("TRANSFORMERS_OFFLINE", "1");
        ENV_MB("TOKENIZERS_PARALLELISM", "False");
        ENV_MB("NCCL_NVLS_ENABLE", "0");
        ENV_MB("NVTE_NORM_FWD_USE_CUDNN", "1");
        ENV_MB("NVTE_NORM_BWD_USE_CUDNN", "1");
        ENV_MB("TORCH_NCCL_HIGH_PRIORITY", "1");
        ENV_MB("HF_HUB_OFFLINE", "0");
        if (strcasecmp(c->gpu_type, "gb200") == 0) {
            ENV_MB("NCCL_NET_GDR_LEVEL", "PHB");
            ENV_MB("NCCL_NET_GDR_C2C", "1");
        }
    }
    for (char **e = c->model->mbridge ? c->model->mbridge->env : NULL; e && *e; e++)
        ENV_MB(*e, np_setting_value(*e));
    ENV_MB("PYTHONUNBUFFERED", "1");
    if (c->nccltrace) { /* NCCL's own per-collective lines, as the NeMo workload's trace */
        ENV_MB("NCCL_DEBUG", "INFO");
        ENV_MB("NCCL_DEBUG_SUBSYS", "COLL,P2P,NET");
    }
    if (c->profile) /* nsys -o (below) or nemoperf-synth's profile */
        ENV_MB("NEMOPERF_PROFILE_DIR", c->experiment_dir);
#undef ENV_MB
    return n;
}

size_t np_env_nemo_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap)
{
    size_t n = 0;
#define SCRIPT_VAR(k, v)                                                                                          \
    do {                                                                                                          \
        if (n < cap) {                                                                                            \
            vars[n].name = (k);                                                                                   \
            vars[n].value = (v);                                                                                  \
            n++;                                                                                                  \
        }                                                                                                         \
    } while (0)
    SCRIPT_VAR("TORCH_NCCL_AVOID_RECORD_STREAMS", "1");
    if (c->workload == NP_WORKLOAD_NEMO) { /* the tokenizer is staged: no network on the compute nodes */
        SCRIPT_VAR("TRANSFORMERS_OFFLINE", "1");
        SCRIPT_VAR("HF_HUB_OFFLINE", "1");
    } else if (c->hf_token) {
        SCRIPT_VAR("TRANSFORMERS_OFFLINE", "0");
    }
    SCRIPT_VAR("TOKENIZERS_PARALLELISM", "False");
    SCRIPT_VAR("NCCL_NVLS_ENABLE", "0");
    SCRIPT_VAR("NVTE_FLASH_ATTN", "1");
    SCRIPT_VAR("NVTE_FUSED_ATTN", "1");
    SCRIPT_VAR("NEMO_LOG_MEMORY_USAGE", "1");
    SCRIPT_VAR("PYTHONUNBUFFERED", "1");
    SCRIPT_VAR("SLURM_UNBUFFEREDIO", "1");
    /* PerfEnvPlugin (NeMo v2.2.1 / v2.3.1 nemo/lightning/run/plugins.py) */
    if (np_nemo_max_connections(c))
        SCRIPT_VAR("CUDA_DEVICE_MAX_CONNECTIONS", np_nemo_max_connections(c));
    SCRIPT_VAR("NVTE_FWD_LAYERNORM_SM_MARGIN", "16");
    SCRIPT_VAR("NVTE_BWD_LAYERNORM_SM_MARGIN", "16");
    if (c->pp > 1)
        SCRIPT_VAR("NCCL_P2P_NET_CHUNKSIZE", "2097152");
    /* per model, pre-training only: NVTE_NORM_*_USE_CUDNN (405B, 340B) come from the pre-training scripts'
     * custom_env_vars (NeMo v2.3.1 scripts/performance/llm/pretrain_llama31_405b.py l.171-174); the
     * fine-tuning ones pass none (finetune_llama31_405b.py l.192, v2.3.0 l.186: custom_env_vars={}) */
    for (char **e = c->task == NP_TASK_PRETRAIN ? c->model->env : NULL; e && *e; e++)
        SCRIPT_VAR(*e, np_setting_value(*e));
    if (c->nccltrace) {
        SCRIPT_VAR("NCCL_DEBUG", "INFO");
        SCRIPT_VAR("NCCL_DEBUG_SUBSYS", "COLL,P2P,NET");
    }
    SCRIPT_VAR("NEMO_HOME", c->stage_path);
    SCRIPT_VAR("HF_HOME", c->stage_path);
    if (c->workload == NP_WORKLOAD_SYNTHETIC && c->profile) /* where nsys writes in the NeMo job */
        SCRIPT_VAR("NEMOPERF_PROFILE_DIR", c->nsys_dir);
#undef SCRIPT_VAR
    return n;
}
