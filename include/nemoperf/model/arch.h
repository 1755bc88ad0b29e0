/* arch.h - what a model is, as the FLOPs formulas read it: precisions, tasks, FLOPs conventions,
 * architecture numbers.
 *
 * Plain data, no functions: recipe.h (which loads them from the recipe files) and flops.h (which
 * computes with them) both include it, so neither needs the other's header.
 */
#ifndef NEMOPERF_MODEL_ARCH_H
#define NEMOPERF_MODEL_ARCH_H

enum np_dtype { NP_DTYPE_NONE = 0, NP_DTYPE_BF16 = 1, NP_DTYPE_FP8 = 2 };

/* What a row runs: pre-training, or seed 000's fine-tuning (SQuAD, packed sequences). */
enum np_task { NP_TASK_PRETRAIN = 0, NP_TASK_SFT, NP_TASK_LORA };

/* FLOPs conventions (see flops.h for the formulas; each is a row of flops.c's family table). */
enum np_flops_conv {
    NP_FLOPS_LLAMA3 = 0,      /* NeMo flops_formulas llama3: 18F/h (SwiGLU, 3 matrices) */
    NP_FLOPS_NEMOTRON,        /* NeMo flops_formulas nemotron: 12F/h (squared ReLU, 2 matrices) */
    NP_FLOPS_NEMOTRON_LEGACY, /* seed 004's printed formula: S(24Lh^2 + 12LhS + 48Lh^2 + 6Vh) */
    NP_FLOPS_MIXTRAL,         /* llama3 with 18kF/h for top-k experts */
    NP_FLOPS_GPT3,            /* (24Sh^2 + 4S^2h)3L + 6ShV */
    /* NeMo AutoModel's flops_utils.py families (seed 001), see flops_automodel.c */
    NP_FLOPS_AM_LLAMA,        /* llama2_flops */
    NP_FLOPS_AM_QWEN3,        /* qwen3_flops (Qwen2, Qwen3, Qwen3-MoE) */
    NP_FLOPS_AM_DEEPSEEKV3,   /* deepseekv3_flops (DeepSeek V3, Kimi K2): MLA + MoE */
    NP_FLOPS_AM_GPTOSS,       /* gpt_oss_flops: alternating sliding-window layers, MoE */
    NP_FLOPS_AM_NEMOTRONH,    /* nemotronh_flops: hybrid Mamba / attention / MoE */
    NP_FLOPS_DIT_WAN          /* Wan 2.1 DiT (NeMo DFM), per video token: flops_dit.c */
};

struct np_arch {
    int layers, hidden, ffn_hidden, heads, kv_groups, vocab;
    int experts, top_k; /* 0 for dense models */
};

/* What the AutoModel families need beyond struct np_arch (HF config.json names in
 * brackets); 0 = absent.  Kept apart from np_arch so that its users stay unchanged. */
struct np_arch_extra {
    int head_dim;                       /* [head_dim] */
    int moe_ffn_hidden;                 /* [moe_intermediate_size] */
    int shared_ffn_hidden;              /* [moe_shared_expert_intermediate_size] (Nemotron-H) */
    int q_lora_rank, kv_lora_rank;      /* MLA */
    int qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    int sliding_window;                 /* [sliding_window] (GPT-OSS, every odd layer) */
    int mamba_heads, mamba_head_dim, mamba_state, mamba_groups; /* Nemotron-H */
    int moe_latent;                     /* [moe_latent_size] */
    int n_mamba, n_moe, n_attention, n_mlp; /* counted from hybrid_override_pattern */
    int qkv_bias;                       /* q/k/v projections carry biases (Qwen2) */
    int tied_embeddings;                /* lm_head shares the embedding */
    /* video DiT (dit-wan): text context, latent channels, patch and timestep sizes (DFM wan_provider.py) */
    int text_len, text_dim, crossattn_emb, in_channels, out_channels, patch_t, patch_h, patch_w, freq_dim;
};

struct np_flops_spec {
    enum np_flops_conv conv;
    int causal;         /* 1: attention-score term halved (causal mask) */
    int kv_groups;      /* value used in the formula (may differ from arch: 405b G=16) */
    char *note;         /* why an override exists, or NULL */
    int lora_rank;      /* > 0: LoRA on every linear layer, TFLOPs x (2 + lora/frozen)/3 (AutoModel) */
    int lora_lm_head;   /* the LoRA adapters include lm_head (match_all_linear) */
};

#endif
