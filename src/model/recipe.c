/* recipe.c - load recipes/<name>.json into typed structs and validate them.
 *
 * Every key is checked against a table of allowed keys; wrong types, missing
 * fields and broken arithmetic (TP x PP x CP x DP = GPUs, GBS = MBS x DP x GA)
 * are reported as "file: models.8b.configs[3].tp: message".  Rows the seeds
 * publish inconsistently must carry an "inconsistent" reason; the loader
 * lists them in the set's notes.
 */
#include "nemoperf/model/recipe.h"

#include "nemoperf/model/flops.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ---- */

enum np_dtype np_dtype_parse(const char *s)
{
    if (!s)
        return NP_DTYPE_NONE;
    if (strcasecmp(s, "bf16") == 0)
        return NP_DTYPE_BF16;
    if (strcasecmp(s, "fp8") == 0)
        return NP_DTYPE_FP8;
    return NP_DTYPE_NONE;
}

const char *np_dtype_name(enum np_dtype d, int upper)
{
    switch (d) {
    case NP_DTYPE_BF16: return upper ? "BF16" : "bf16";
    case NP_DTYPE_FP8: return upper ? "FP8" : "fp8";
    default: return upper ? "?" : "?";
    }
}

/* Loading context: file name and the error sink. */
struct recipe_ctx {
    const char *file;
    struct np_error *err;
};

static enum np_status recipe_fail(struct recipe_ctx *c, const char *path, const char *msg)
{
    return np_error_set(c->err, NP_E_INVALID, c->file, 0, 0, "%s: %s", path, msg);
}

/* buf = path.key (or key at top level), truncated to size. */
static void recipe_path(char *buf, size_t size, const char *path, const char *key)
{
    size_t n = 0;
    for (const char *s = path; *s && n + 1 < size; s++)
        buf[n++] = *s;
    if (*path && n + 1 < size)
        buf[n++] = '.';
    for (const char *s = key; *s && n + 1 < size; s++)
        buf[n++] = *s;
    buf[n] = '\0';
}

/* Reject keys not in the NULL-terminated allowed list. */
static enum np_status recipe_check_keys(struct recipe_ctx *c, json_t *obj, const char *path,
                                        const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, key) == 0)
                ok = 1;
        if (!ok) {
            char p[512];
            recipe_path(p, sizeof p, path, key);
            return recipe_fail(c, p, "unknown key");
        }
    }
    return NP_OK;
}


/* Get member `key` of obj.  required: missing is an error.  *out NULL when absent/null. */
static enum np_status recipe_member(struct recipe_ctx *c, json_t *obj, const char *path, const char *key,
                                    int required, json_t **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) {
        if (required) {
            char p[512];
            recipe_path(p, sizeof p, path, key);
            return recipe_fail(c, p, "missing field");
        }
        return NP_OK;
    }
    if (json_is_null(v))
        return NP_OK;
    *out = v;
    return NP_OK;
}

/* Integer field.  allow_null: JSON null (or absent when !required) gives dflt. */
static enum np_status recipe_int(struct recipe_ctx *c, json_t *obj, const char *path, const char *key,
                                 int required, int allow_null, int min, int dflt, int *out)
{
    char p[512];
    recipe_path(p, sizeof p, path, key);
    json_t *raw = json_object_get(obj, key);
    if (!raw) {
        if (required)
            return recipe_fail(c, p, "missing field");
        *out = dflt;
        return NP_OK;
    }
    if (json_is_null(raw)) {
        if (!allow_null)
            return recipe_fail(c, p, "expected integer, got null");
        *out = dflt;
        return NP_OK;
    }
    if (!json_is_integer(raw))
        return recipe_fail(c, p, "expected integer");
    json_int_t v = json_integer_value(raw);
    if (v < min || v > INT_MAX) {
        char msg[96];
        snprintf(msg, sizeof msg, "value %lld out of range (minimum %d)", (long long)v, min);
        return recipe_fail(c, p, msg);
    }
    *out = (int)v;
    return NP_OK;
}

static enum np_status recipe_str(struct recipe_ctx *c, json_t *obj, const char *path, const char *key,
                                 int required, char **out)
{
    char p[512];
    recipe_path(p, sizeof p, path, key);
    json_t *raw = json_object_get(obj, key);
    *out = NULL;
    if (!raw || json_is_null(raw)) {
        if (required)
            return recipe_fail(c, p, raw ? "expected string, got null" : "missing field");
        return NP_OK;
    }
    if (!json_is_string(raw))
        return recipe_fail(c, p, "expected string");
    if (json_string_length(raw) == 0 || strlen(json_string_value(raw)) != json_string_length(raw))
        return recipe_fail(c, p, "expected a non-empty string without NUL");
    *out = strdup(json_string_value(raw));
    if (!*out)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    return NP_OK;
}

static enum np_status recipe_bool(struct recipe_ctx *c, json_t *obj, const char *path, const char *key,
                                  int dflt, int *out)
{
    char p[512];
    recipe_path(p, sizeof p, path, key);
    json_t *raw = json_object_get(obj, key);
    if (!raw) {
        *out = dflt;
        return NP_OK;
    }
    if (!json_is_boolean(raw))
        return recipe_fail(c, p, "expected true or false");
    *out = json_is_true(raw);
    return NP_OK;
}

static enum np_status recipe_object(struct recipe_ctx *c, json_t *v, const char *path)
{
    return json_is_object(v) ? NP_OK : recipe_fail(c, path, "expected object");
}

#define TRY(x)                                                                                    \
    do {                                                                                          \
        enum np_status st_ = (x);                                                                 \
        if (st_ != NP_OK)                                                                         \
            return st_;                                                                           \
    } while (0)

/* ---- sections ---- */

/* The AutoModel-only architecture fields (all optional, see struct np_arch_extra). */
static enum np_status recipe_load_arch_extra(struct recipe_ctx *c, json_t *o, const char *path,
                                             struct np_model *m)
{
    struct np_arch_extra *x = &m->xa;
    static const struct {
        const char *key;
        size_t off;
    } ints[] = {
#define RECIPE_XA(k, f) {k, offsetof(struct np_arch_extra, f)}
        RECIPE_XA("head_dim", head_dim),
        RECIPE_XA("moe_ffn_hidden", moe_ffn_hidden),
        RECIPE_XA("shared_ffn_hidden", shared_ffn_hidden),
        RECIPE_XA("q_lora_rank", q_lora_rank),
        RECIPE_XA("kv_lora_rank", kv_lora_rank),
        RECIPE_XA("qk_nope_head_dim", qk_nope_head_dim),
        RECIPE_XA("qk_rope_head_dim", qk_rope_head_dim),
        RECIPE_XA("v_head_dim", v_head_dim),
        RECIPE_XA("sliding_window", sliding_window),
        RECIPE_XA("mamba_heads", mamba_heads),
        RECIPE_XA("mamba_head_dim", mamba_head_dim),
        RECIPE_XA("mamba_state", mamba_state),
        RECIPE_XA("mamba_groups", mamba_groups),
        RECIPE_XA("moe_latent", moe_latent),
        RECIPE_XA("text_len", text_len),
        RECIPE_XA("text_dim", text_dim),
        RECIPE_XA("crossattn_emb", crossattn_emb),
        RECIPE_XA("in_channels", in_channels),
        RECIPE_XA("out_channels", out_channels),
        RECIPE_XA("patch_t", patch_t),
        RECIPE_XA("patch_h", patch_h),
        RECIPE_XA("patch_w", patch_w),
        RECIPE_XA("freq_dim", freq_dim),
#undef RECIPE_XA
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        TRY(recipe_int(c, o, path, ints[i].key, 0, 0, 1, 0, (int *)(void *)((char *)x + ints[i].off)));
    TRY(recipe_bool(c, o, path, "qkv_bias", 0, &x->qkv_bias));
    TRY(recipe_bool(c, o, path, "tied_embeddings", 0, &x->tied_embeddings));
    TRY(recipe_str(c, o, path, "hybrid_pattern", 0, &m->pattern));
    if (m->pattern) {
        char p[512];
        recipe_path(p, sizeof p, path, "hybrid_pattern");
        for (const char *s = m->pattern; *s; s++) {
            switch (*s) {
            case 'M': x->n_mamba++; break;
            case 'E': x->n_moe++; break;
            case '*': x->n_attention++; break;
            case '-': x->n_mlp++; break;
            default: return recipe_fail(c, p, "expected only M (Mamba), E (MoE), * (attention) and - (MLP)");
            }
        }
        if ((long)strlen(m->pattern) != m->arch.layers)
            return recipe_fail(c, p, "one character per layer: its length must equal layers");
    }
    return NP_OK;
}

static enum np_status recipe_load_arch(struct recipe_ctx *c, json_t *o, const char *path, struct np_arch *a)
{
    static const char *const keys[] = {"layers", "hidden", "ffn_hidden", "heads", "kv_groups", "vocab",
                                       "experts", "top_k", "head_dim", "moe_ffn_hidden", "shared_ffn_hidden",
                                       "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                       "v_head_dim", "sliding_window", "mamba_heads", "mamba_head_dim",
                                       "mamba_state", "mamba_groups", "moe_latent", "qkv_bias",
                                       "tied_embeddings", "hybrid_pattern", "text_len", "text_dim",
                                       "crossattn_emb", "in_channels", "out_channels", "patch_t", "patch_h",
                                       "patch_w", "freq_dim", NULL};
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    TRY(recipe_int(c, o, path, "layers", 1, 0, 1, 0, &a->layers));
    TRY(recipe_int(c, o, path, "hidden", 1, 0, 1, 0, &a->hidden));
    TRY(recipe_int(c, o, path, "ffn_hidden", 1, 0, 1, 0, &a->ffn_hidden));
    TRY(recipe_int(c, o, path, "heads", 1, 0, 1, 0, &a->heads));
    TRY(recipe_int(c, o, path, "kv_groups", 1, 0, 1, 0, &a->kv_groups));
    TRY(recipe_int(c, o, path, "vocab", 0, 0, 0, 0, &a->vocab)); /* required by the text conventions */
    TRY(recipe_int(c, o, path, "experts", 0, 0, 0, 0, &a->experts));
    TRY(recipe_int(c, o, path, "top_k", 0, 0, 0, 0, &a->top_k));
    char p[512];
    if (a->heads % a->kv_groups != 0) {
        recipe_path(p, sizeof p, path, "kv_groups");
        return recipe_fail(c, p, "heads must be a multiple of kv_groups");
    }
    if ((a->experts > 0) != (a->top_k > 0) || a->top_k > a->experts) {
        recipe_path(p, sizeof p, path, "top_k");
        return recipe_fail(c, p, "top_k must be between 1 and experts for a mixture of experts, 0 otherwise");
    }
    return NP_OK;
}

static enum np_status recipe_load_flops(struct recipe_ctx *c, json_t *o, const char *path,
                                        const struct np_arch *arch, struct np_flops_spec *f)
{
    static const char *const keys[] = {"convention", "causal", "kv_groups", "note", "lora_rank", "lora_lm_head",
                                       NULL};
    char p[512];
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    char *conv = NULL;
    TRY(recipe_str(c, o, path, "convention", 1, &conv));
    const struct np_flops_family *fam = np_flops_family_named(conv); /* flops.c's table */
    free(conv);
    if (!fam) {
        char names[400], msg[480];
        np_flops_conv_names(names, sizeof names);
        snprintf(msg, sizeof msg, "unknown convention (expected %s)", names);
        recipe_path(p, sizeof p, path, "convention");
        return recipe_fail(c, p, msg);
    }
    f->conv = fam->conv;
    TRY(recipe_bool(c, o, path, "causal", 0, &f->causal));
    TRY(recipe_int(c, o, path, "kv_groups", 0, 0, 1, arch->kv_groups, &f->kv_groups));
    TRY(recipe_str(c, o, path, "note", 0, &f->note));
    TRY(recipe_int(c, o, path, "lora_rank", 0, 0, 1, 0, &f->lora_rank));
    TRY(recipe_bool(c, o, path, "lora_lm_head", 0, &f->lora_lm_head));
    if (f->lora_rank && !fam->lora) {
        recipe_path(p, sizeof p, path, "lora_rank");
        return recipe_fail(c, p, "the LoRA multiplier is AutoModel's: only with an automodel-* convention");
    }
    if (fam->needs_vocab && arch->vocab < 1) {
        recipe_path(p, sizeof p, path, "convention");
        return recipe_fail(c, p, "a language-model convention needs arch.vocab (>= 1)");
    }
    if (f->conv == NP_FLOPS_MIXTRAL && arch->top_k == 0) {
        recipe_path(p, sizeof p, path, "convention");
        return recipe_fail(c, p, "mixtral convention needs arch.experts and arch.top_k");
    }
    return NP_OK;
}

static enum np_status recipe_load_checkpoint(struct recipe_ctx *c, json_t *o, const char *path,
                                             struct np_checkpoint_info *ck)
{
    static const char *const keys[] = {"size_gb", "save_scales", "min_load_scale", NULL};
    char p[512];
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    json_t *sz;
    TRY(recipe_member(c, o, path, "size_gb", 1, &sz));
    recipe_path(p, sizeof p, path, "size_gb");
    if (!sz || !json_is_number(sz) || json_number_value(sz) <= 0)
        return recipe_fail(c, p, "expected a positive number");
    ck->size_bytes = json_number_value(sz) * 1e9;
    json_t *sc;
    TRY(recipe_member(c, o, path, "save_scales", 1, &sc));
    recipe_path(p, sizeof p, path, "save_scales");
    if (!sc || !json_is_array(sc) || json_array_size(sc) != 2 || !json_is_integer(json_array_get(sc, 0)) ||
        !json_is_integer(json_array_get(sc, 1)))
        return recipe_fail(c, p, "expected [min, max] GPU counts");
    json_int_t lo = json_integer_value(json_array_get(sc, 0)), hi = json_integer_value(json_array_get(sc, 1));
    if (lo < 1 || hi < lo || hi > INT_MAX)
        return recipe_fail(c, p, "expected 1 <= min <= max");
    ck->save_min_gpus = (int)lo;
    ck->save_max_gpus = (int)hi;
    TRY(recipe_int(c, o, path, "min_load_scale", 1, 0, 1, 0, &ck->load_min_gpus));
    ck->known = 1;
    return NP_OK;
}

/* An object of settings {"name": scalar} into a NULL-terminated vector of
 * "name\0value" strings (value: the string, or the JSON text of a number or
 * boolean); NULL when absent. */
static enum np_status recipe_settings(struct recipe_ctx *c, json_t *o, const char *path, const char *key,
                                      int string_values, char ***out)
{
    char p[512];
    recipe_path(p, sizeof p, path, key);
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return NP_OK;
    if (!json_is_object(v))
        return recipe_fail(c, p, "expected object");
    *out = calloc(json_object_size(v) + 1, sizeof **out);
    if (!*out)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    size_t n = 0;
    const char *name;
    json_t *val;
    json_object_foreach(v, name, val) {
        char pi[600];
        snprintf(pi, sizeof pi, "%s.%s", p, name);
        for (const char *s = name; *s; s++)
            if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
                return recipe_fail(c, pi, "expected a name of letters, digits and '_'");
        if (string_values ? !json_is_string(val) : !(json_is_boolean(val) || json_is_integer(val)))
            return recipe_fail(c, pi, string_values ? "expected string" : "expected true, false or an integer");
        char *text = string_values ? strdup(json_string_value(val)) : json_dumps(val, JSON_ENCODE_ANY);
        size_t nl = strlen(name);
        char *kv = text ? malloc(nl + strlen(text) + 2) : NULL;
        if (kv) {
            memcpy(kv, name, nl + 1); /* "name\0value" */
            strcpy(kv + nl + 1, text);
        }
        int newline = text && strpbrk(text, "\n\r");
        free(text);
        if (!kv)
            return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
        (*out)[n++] = kv;
        if (newline)
            return recipe_fail(c, pi, "contains a newline");
    }
    return NP_OK;
}

static enum np_status recipe_load_corrections(struct recipe_ctx *c, json_t *o, const char *path,
                                              struct np_config_row *r)
{
    static const char *const keys[] = {"field", "value", "source", "reason", NULL};
    static const char *const fields[] = {"mbs", "gbs", "ga", "vp", "seq_len", NULL};
    char p[512];
    recipe_path(p, sizeof p, path, "corrections");
    json_t *v = json_object_get(o, "corrections");
    if (!v || json_is_null(v))
        return NP_OK;
    if (!json_is_array(v) || json_array_size(v) == 0)
        return recipe_fail(c, p, "expected a non-empty array of {field, value, source, reason}");
    r->corrections = calloc(json_array_size(v), sizeof *r->corrections);
    if (!r->corrections)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        char pi[560];
        snprintf(pi, sizeof pi, "%s[%zu]", p, i);
        struct np_correction *k = &r->corrections[i];
        r->ncorrections = i + 1;
        TRY(recipe_object(c, e, pi));
        TRY(recipe_check_keys(c, e, pi, keys));
        TRY(recipe_str(c, e, pi, "field", 1, &k->field));
        TRY(recipe_int(c, e, pi, "value", 1, 0, 1, 0, &k->value));
        TRY(recipe_str(c, e, pi, "source", 1, &k->source));
        TRY(recipe_str(c, e, pi, "reason", 1, &k->reason));
        int known = 0;
        for (const char *const *f = fields; *f; f++)
            known |= strcmp(*f, k->field) == 0;
        if (!known)
            return recipe_fail(c, pi, "field: expected mbs, gbs, ga, vp or seq_len");
        for (size_t j = 0; j < i; j++)
            if (strcmp(r->corrections[j].field, k->field) == 0)
                return recipe_fail(c, pi, "field corrected twice");
    }
    return NP_OK;
}

int np_row_published(const struct np_config_row *row, const char *field)
{
    return strcmp(field, "mbs") == 0       ? row->mbs
           : strcmp(field, "gbs") == 0     ? row->gbs
           : strcmp(field, "ga") == 0      ? row->ga
           : strcmp(field, "seq_len") == 0 ? row->seq_len
                                           : row->vp;
}

int np_row_value(const struct np_config_row *row, const char *field, int published,
                 const struct np_correction **corr)
{
    if (corr)
        *corr = NULL;
    for (size_t i = 0; row && i < row->ncorrections; i++)
        if (strcmp(row->corrections[i].field, field) == 0) {
            if (corr)
                *corr = &row->corrections[i];
            return row->corrections[i].value;
        }
    return published;
}

static enum np_status recipe_load_row(struct recipe_ctx *c, json_t *o, const char *path,
                                      const struct np_model *m, int ft, struct np_config_row *r)
{
    static const char *const keys[] = {"gpu", "system", "dtypes", "gpus", "seq_len", "layers", "tp", "pp",
                                       "cp", "ep", "dp", "vp", "mbs", "lbs", "gbs", "ga", "fsdp", "proxy",
                                       "inconsistent", "source", "note", "yaml", "gpus_per_node", "etp",
                                       "cuda_graphs", "tp_comm_overlap_cfg", "model_config", "corrections",
                                       "task", "sp", "backend", NULL};
    char p[512];
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    TRY(recipe_str(c, o, path, "gpu", 1, &r->gpu_type));
    for (char *s = r->gpu_type; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))) {
            recipe_path(p, sizeof p, path, "gpu");
            return recipe_fail(c, p, "expected a lower-case GPU type such as h100");
        }
    TRY(recipe_str(c, o, path, "system", 0, &r->system));
    json_t *dts;
    TRY(recipe_member(c, o, path, "dtypes", 1, &dts));
    recipe_path(p, sizeof p, path, "dtypes");
    if (!dts || !json_is_array(dts) || json_array_size(dts) == 0)
        return recipe_fail(c, p, "expected a non-empty array of \"bf16\"/\"fp8\"");
    size_t i;
    json_t *d;
    json_array_foreach(dts, i, d) {
        enum np_dtype dt = json_is_string(d) ? np_dtype_parse(json_string_value(d)) : NP_DTYPE_NONE;
        if (dt == NP_DTYPE_NONE || (r->dtypes & dt)) {
            char pi[560];
            snprintf(pi, sizeof pi, "%s[%zu]", p, i);
            return recipe_fail(c, pi, dt == NP_DTYPE_NONE ? "expected \"bf16\" or \"fp8\"" : "duplicate dtype");
        }
        r->dtypes |= dt;
    }
    TRY(recipe_int(c, o, path, "gpus", 1, 0, 1, 0, &r->gpus));
    TRY(recipe_int(c, o, path, "seq_len", 1, 0, 1, 0, &r->seq_len));
    TRY(recipe_int(c, o, path, "layers", 0, 0, 1, m->arch.layers, &r->layers));
    TRY(recipe_int(c, o, path, "tp", 1, 0, 1, 0, &r->tp));
    TRY(recipe_int(c, o, path, "pp", 1, 0, 1, 0, &r->pp));
    TRY(recipe_int(c, o, path, "cp", 1, 0, 1, 0, &r->cp));
    TRY(recipe_int(c, o, path, "ep", 1, 1, 1, 0, &r->ep));
    TRY(recipe_int(c, o, path, "dp", 1, 0, 1, 0, &r->dp));
    TRY(recipe_int(c, o, path, "vp", 1, 1, 1, 0, &r->vp));
    TRY(recipe_int(c, o, path, "mbs", 1, 0, 1, 0, &r->mbs));
    TRY(recipe_int(c, o, path, "lbs", 0, 0, 1, 0, &r->lbs));
    TRY(recipe_int(c, o, path, "gbs", 1, 0, 1, 0, &r->gbs));
    TRY(recipe_int(c, o, path, "ga", 1, 0, 1, 0, &r->ga));
    TRY(recipe_int(c, o, path, "fsdp", 0, 0, 0, 0, &r->fsdp));
    TRY(recipe_bool(c, o, path, "proxy", 0, &r->proxy));
    TRY(recipe_str(c, o, path, "inconsistent", 0, &r->inconsistent));
    TRY(recipe_str(c, o, path, "source", 0, &r->source));
    TRY(recipe_str(c, o, path, "note", 0, &r->note));
    TRY(recipe_str(c, o, path, "yaml", 0, &r->yaml));
    if (r->yaml && !m->automodel && !m->mbridge) {
        recipe_path(p, sizeof p, path, "yaml");
        return recipe_fail(c, p, "a YAML belongs to an AutoModel or Megatron-Bridge model (\"automodel\", \"mbridge\")");
    }
    if (r->yaml && m->mbridge && (strchr(r->yaml, '/') || strstr(r->yaml, ".."))) {
        recipe_path(p, sizeof p, path, "yaml");
        return recipe_fail(c, p, "expected a file name of share/nemoperf/dfm/conf/");
    }
    TRY(recipe_bool(c, o, path, "sp", 0, &r->sp));
    TRY(recipe_str(c, o, path, "backend", 0, &r->backend));
    if (r->backend ? !m->mbridge || (strcmp(r->backend, "mcore") != 0 && strcmp(r->backend, "automodel") != 0) ||
                         (strcmp(r->backend, "automodel") == 0 && !m->mbridge->am_script)
                   : m->mbridge && !r->yaml) {
        recipe_path(p, sizeof p, path, r->backend ? "backend" : "yaml");
        return recipe_fail(c, p, r->backend ? "expected \"mcore\" or \"automodel\" (a Megatron-Bridge model with "
                                              "mbridge.automodel)"
                                            : "a Megatron-Bridge row needs its config file (yaml)");
    }
    TRY(recipe_int(c, o, path, "gpus_per_node", 0, 0, 1, 8, &r->gpus_per_node));
    TRY(recipe_int(c, o, path, "etp", 0, 1, 1, 0, &r->etp));
    TRY(recipe_bool(c, o, path, "cuda_graphs", 0, &r->cuda_graphs));
    TRY(recipe_str(c, o, path, "tp_comm_overlap_cfg", 0, &r->tp_comm_overlap_cfg));
    TRY(recipe_settings(c, o, path, "model_config", 0, &r->model_config));
    TRY(recipe_load_corrections(c, o, path, r));
    char *task = NULL;
    enum np_status tst = recipe_str(c, o, path, "task", 0, &task);
    if (tst == NP_OK && (task ? np_task_parse(task, &r->task) != 0 || r->task == NP_TASK_PRETRAIN : ft)) {
        recipe_path(p, sizeof p, path, "task");
        tst = recipe_fail(c, p, ft ? "expected \"sft\" or \"lora\" (a fine-tuning row)"
                                   : "a pre-training row has no task (fine-tuning rows go in \"finetune\")");
    }
    free(task);
    TRY(tst);

    char msg[256];
    long long prod = (long long)r->tp * r->pp * r->cp * r->dp;
    if (prod != r->gpus) {
        recipe_path(p, sizeof p, path, "dp");
        snprintf(msg, sizeof msg, "TP x PP x CP x DP = %d x %d x %d x %d = %lld, but gpus is %d", r->tp, r->pp,
                 r->cp, r->dp, prod, r->gpus);
        return recipe_fail(c, p, msg);
    }
    if (r->gpus % r->gpus_per_node != 0 && !(m->automodel && r->gpus < r->gpus_per_node)) { /* 1-GPU LoRA */
        recipe_path(p, sizeof p, path, "gpus_per_node");
        snprintf(msg, sizeof msg, "gpus %d is not a multiple of gpus_per_node %d", r->gpus, r->gpus_per_node);
        return recipe_fail(c, p, msg);
    }
    if (r->ncorrections) { /* what ran must add up, whatever was published */
        int mbs = np_row_value(r, "mbs", r->mbs, NULL), gb = np_row_value(r, "gbs", r->gbs, NULL);
        int ga = np_row_value(r, "ga", r->ga, NULL), vp = np_row_value(r, "vp", r->vp, NULL);
        if ((long long)mbs * r->dp * ga != gb || (vp > 1 && r->pp == 1)) {
            recipe_path(p, sizeof p, path, "corrections");
            snprintf(msg, sizeof msg, "corrected MBS x DP x GA = %d x %d x %d, but corrected gbs is %d (or vp > 1 "
                     "with pp 1)", mbs, r->dp, ga, gb);
            return recipe_fail(c, p, msg);
        }
    }
    /* AutoModel publishes LBS (one step per GPU) beside the pipeline micro-batch: GBS = LBS x DP x GA. */
    int per_rank = r->lbs ? r->lbs : r->mbs;
    long long gbs = (long long)per_rank * r->dp * r->ga;
    if (gbs != r->gbs && !r->inconsistent) {
        recipe_path(p, sizeof p, path, "gbs");
        snprintf(msg, sizeof msg,
                 "%s x DP x GA = %d x %d x %d = %lld, but gbs is %d (a published row that is not self-consistent "
                 "must say why in \"inconsistent\")",
                 r->lbs ? "LBS" : "MBS", per_rank, r->dp, r->ga, gbs, r->gbs);
        return recipe_fail(c, p, msg);
    }
    if (gbs == r->gbs && r->inconsistent) {
        recipe_path(p, sizeof p, path, "inconsistent");
        return recipe_fail(c, p, "row is marked inconsistent but its arithmetic holds");
    }
    if (r->vp > 0 && r->pp == 1 && r->vp > 1) {
        recipe_path(p, sizeof p, path, "vp");
        return recipe_fail(c, p, "virtual pipeline stages need pp > 1");
    }
    return NP_OK;
}

/* A model's "finetune" block: {source, lora: {dim, alpha, targets}, configs: [rows with
 * "task": "sft"|"lora" and seq_len = the packed sequence length]}. */
static enum np_status recipe_load_finetune(struct recipe_ctx *c, json_t *o, const char *path, struct np_model *m)
{
    static const char *const keys[] = {"source", "lora", "configs", NULL};
    static const char *const lkeys[] = {"dim", "alpha", "targets", NULL};
    char p[512];
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    TRY(recipe_str(c, o, path, "source", 1, &m->ft_source));
    json_t *v;
    TRY(recipe_member(c, o, path, "lora", 0, &v));
    if (v) {
        recipe_path(p, sizeof p, path, "lora");
        TRY(recipe_object(c, v, p));
        TRY(recipe_check_keys(c, v, p, lkeys));
        TRY(recipe_int(c, v, p, "dim", 1, 0, 1, 0, &m->lora.dim));
        TRY(recipe_int(c, v, p, "alpha", 1, 0, 1, 0, &m->lora.alpha));
        json_t *t = json_object_get(v, "targets");
        char pt[560];
        snprintf(pt, sizeof pt, "%s.targets", p);
        if (!t || !json_is_array(t) || json_array_size(t) == 0)
            return recipe_fail(c, pt, "expected a non-empty array of module names (e.g. \"linear_qkv\")");
        if (!(m->lora.targets = calloc(json_array_size(t) + 1, sizeof *m->lora.targets)))
            return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
        size_t i;
        json_t *e;
        json_array_foreach(t, i, e) {
            const char *s = json_is_string(e) ? json_string_value(e) : NULL;
            int ok = s && *s;
            for (const char *q = s; ok && *q; q++)
                ok = (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_';
            if (!ok)
                return recipe_fail(c, pt, "expected module names of lower-case letters, digits and '_'");
            if (!(m->lora.targets[i] = strdup(s)))
                return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
        }
    }
    json_t *rows;
    TRY(recipe_member(c, o, path, "configs", 1, &rows));
    recipe_path(p, sizeof p, path, "configs");
    if (!rows || !json_is_array(rows) || json_array_size(rows) == 0)
        return recipe_fail(c, p, "expected a non-empty array of fine-tuning configs");
    if (!(m->ft_rows = calloc(json_array_size(rows), sizeof *m->ft_rows)))
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        char pi[560];
        snprintf(pi, sizeof pi, "%s[%zu]", p, i);
        m->nft_rows = i + 1;
        TRY(recipe_load_row(c, row, pi, m, 1, &m->ft_rows[i]));
        const struct np_config_row *b = &m->ft_rows[i];
        if (b->task == NP_TASK_LORA && m->lora.dim == 0)
            return recipe_fail(c, pi, "a LoRA row needs the block's \"lora\" (dim, alpha, targets)");
        for (size_t j = 0; j < i; j++) {
            const struct np_config_row *a = &m->ft_rows[j];
            if (a->task == b->task && a->gpus == b->gpus && (a->dtypes & b->dtypes) &&
                strcmp(a->gpu_type, b->gpu_type) == 0) {
                char msg[160];
                snprintf(msg, sizeof msg, "duplicate key: %s %s x%d already defined at configs[%zu]",
                         np_task_name(b->task), b->gpu_type, b->gpus, j);
                return recipe_fail(c, pi, msg);
            }
        }
    }
    return NP_OK;
}

static enum np_status recipe_load_automodel(struct recipe_ctx *c, json_t *o, const char *path, struct np_model *m)
{
    static const char *const keys[] = {"yaml", "load", "trust_remote_code", "gated", "warmup_steps", "max_steps",
                                       NULL};
    char p[512];
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    struct np_automodel_spec *a = calloc(1, sizeof *a);
    if (!a)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    m->automodel = a;
    TRY(recipe_str(c, o, path, "yaml", 1, &a->yaml));
    recipe_path(p, sizeof p, path, "yaml");
    if (a->yaml[0] == '/' || strstr(a->yaml, "..") || strlen(a->yaml) < 6 ||
        strcmp(a->yaml + strlen(a->yaml) - 5, ".yaml") != 0)
        return recipe_fail(c, p, "expected a .yaml path relative to examples/llm_benchmark/");
    char *load = NULL;
    TRY(recipe_str(c, o, path, "load", 1, &load));
    a->from_pretrained = strcmp(load, "from_pretrained") == 0;
    int ok = a->from_pretrained || strcmp(load, "from_config") == 0;
    free(load);
    if (!ok) {
        recipe_path(p, sizeof p, path, "load");
        return recipe_fail(c, p, "expected \"from_config\" (config.json only) or \"from_pretrained\" (weights)");
    }
    TRY(recipe_bool(c, o, path, "trust_remote_code", 0, &a->trust_remote_code));
    TRY(recipe_bool(c, o, path, "gated", 0, &a->gated));
    TRY(recipe_int(c, o, path, "warmup_steps", 1, 0, 0, 0, &a->warmup_steps));
    TRY(recipe_int(c, o, path, "max_steps", 1, 0, 1, 0, &a->max_steps));
    if (a->warmup_steps >= a->max_steps) {
        recipe_path(p, sizeof p, path, "warmup_steps");
        return recipe_fail(c, p, "must be below max_steps (the summary averages the steps after the warm-up)");
    }
    return NP_OK;
}

static void recipe_strv_free(char **v);

/* A NULL-terminated copy of a JSON array of non-empty strings without newlines (absent: *out = NULL). */
static enum np_status recipe_strings(struct recipe_ctx *c, json_t *o, const char *path, const char *key,
                                     int required, char ***out)
{
    char p[512];
    recipe_path(p, sizeof p, path, key);
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v && !required)
        return NP_OK;
    if (!v || !json_is_array(v) || json_array_size(v) == 0)
        return recipe_fail(c, p, "expected a non-empty array of strings");
    if (!(*out = calloc(json_array_size(v) + 1, sizeof **out)))
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        const char *str = json_is_string(e) ? json_string_value(e) : NULL;
        if (!str || !*str || strpbrk(str, "\n\r")) {
            char pi[560];
            snprintf(pi, sizeof pi, "%s[%zu]", p, i);
            return recipe_fail(c, pi, "expected a non-empty string without newlines");
        }
        if (!((*out)[i] = strdup(str)))
            return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    }
    return NP_OK;
}

static void recipe_mbridge_free(struct np_mbridge_spec *b)
{
    if (!b)
        return;
    free(b->kind);
    free(b->source);
    free(b->script);
    recipe_strv_free(b->args);
    free(b->conf_source);
    for (size_t i = 0; i < b->nrepos; i++) {
        free(b->repos[i].name);
        free(b->repos[i].github);
        free(b->repos[i].commit);
        free(b->repos[i].replaces);
    }
    free(b->repos);
    recipe_strv_free(b->pythonpath);
    recipe_strv_free(b->pip);
    recipe_strv_free(b->pip_upgrade);
    recipe_strv_free(b->env);
    free(b->env_source);
    free(b->am_script);
    free(b->am_yaml);
    free(b->am_yaml_source);
    recipe_strv_free(b->am_pythonpath);
    free(b->am_hf_model);
    free(b->am_note);
    free(b);
}

/* The pinned checkouts: [{name, github, commit}], names unique, commits full. */
static enum np_status recipe_load_repos(struct recipe_ctx *c, json_t *o, const char *path,
                                        struct np_mbridge_spec *b)
{
    static const char *const keys[] = {"name", "github", "commit", "replaces", NULL};
    char p[512];
    recipe_path(p, sizeof p, path, "repos");
    json_t *v = json_object_get(o, "repos");
    if (!v || !json_is_array(v) || json_array_size(v) == 0)
        return recipe_fail(c, p, "expected a non-empty array of {name, github, commit}");
    if (!(b->repos = calloc(json_array_size(v), sizeof *b->repos)))
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        char pi[560];
        snprintf(pi, sizeof pi, "%s[%zu]", p, i);
        struct np_mbridge_repo *r = &b->repos[i];
        b->nrepos = i + 1;
        TRY(recipe_object(c, e, pi));
        TRY(recipe_check_keys(c, e, pi, keys));
        TRY(recipe_str(c, e, pi, "name", 1, &r->name));
        TRY(recipe_str(c, e, pi, "github", 1, &r->github));
        TRY(recipe_str(c, e, pi, "commit", 1, &r->commit));
        int ok = 1;
        for (const char *s = r->name; *s; s++)
            ok &= (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                  *s == '_';
        if (!ok)
            return recipe_fail(c, pi, "name: expected letters, digits, '-' and '_'");
        const char *slash = strchr(r->github, '/');
        ok = slash && slash > r->github && slash[1] && !strchr(slash + 1, '/') && !strstr(r->github, "..");
        for (const char *s = r->github; ok && *s; s++)
            ok = (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                 *s == '_' || *s == '.' || *s == '/';
        if (!ok)
            return recipe_fail(c, pi, "github: expected owner/name");
        ok = strlen(r->commit) == 40;
        for (const char *s = r->commit; ok && *s; s++)
            ok = (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f');
        if (!ok)
            return recipe_fail(c, pi, "commit: expected 40 lower-case hex digits");
        for (size_t j = 0; j < i; j++)
            if (strcmp(b->repos[j].name, r->name) == 0)
                return recipe_fail(c, pi, "name: duplicate");
        TRY(recipe_str(c, e, pi, "replaces", 0, &r->replaces));
        if (r->replaces && (r->replaces[0] != '/' || strstr(r->replaces, "..") || strpbrk(r->replaces, ",: \t\n'")))
            return recipe_fail(c, pi, "replaces: expected an absolute folder of the image (no '..', ',', ':' or "
                                      "blanks: it is a --container-mounts target)");
    }
    return NP_OK;
}

/* Every name of names (the value of path + ".pythonpath") names one of b's repos, or a folder in one:
 * "<repo name>" or "<repo name>/<folder>" (Megatron-Bridge's package lives under src/). */
static enum np_status recipe_repo_names(struct recipe_ctx *c, const char *path, const struct np_mbridge_spec *b,
                                        char **names)
{
    for (size_t i = 0; names && names[i]; i++) {
        const char *sub = strchr(names[i], '/');
        size_t len = sub ? (size_t)(sub - names[i]) : strlen(names[i]), j = 0;
        while (j < b->nrepos && (strlen(b->repos[j].name) != len || strncmp(b->repos[j].name, names[i], len) != 0))
            j++;
        if (j == b->nrepos || (sub && (!sub[1] || strstr(sub, "..") || strpbrk(sub, ":'\n")))) {
            char pi[560];
            snprintf(pi, sizeof pi, "%s.pythonpath[%zu]", path, i);
            return recipe_fail(c, pi, "not the name of one of repos, or <name>/<folder in it>");
        }
    }
    return NP_OK;
}

static enum np_status recipe_load_mbridge(struct recipe_ctx *c, json_t *o, const char *path, struct np_model *m)
{
    static const char *const keys[] = {"kind", "source", "script", "args", "conf_source", "repos", "pythonpath",
                                       "pip", "pip_upgrade", "env", "env_source", "train_iters_default", "executor_env",
                                       "automodel", NULL};
    static const char *const akeys[] = {"script", "yaml", "yaml_source", "hf_model", "pythonpath", "note", NULL};
    char p[512];
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    struct np_mbridge_spec *b = calloc(1, sizeof *b);
    if (!b)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    m->mbridge = b;
    TRY(recipe_str(c, o, path, "kind", 1, &b->kind));
    if (strcmp(b->kind, "dfm") != 0) {
        recipe_path(p, sizeof p, path, "kind");
        return recipe_fail(c, p, "expected \"dfm\" (the rank-command builders of src/job/mbridge.c)");
    }
    TRY(recipe_str(c, o, path, "source", 1, &b->source));
    TRY(recipe_str(c, o, path, "script", 1, &b->script));
    TRY(recipe_strings(c, o, path, "args", 0, &b->args));
    TRY(recipe_str(c, o, path, "conf_source", 0, &b->conf_source));
    TRY(recipe_load_repos(c, o, path, b));
    TRY(recipe_strings(c, o, path, "pythonpath", 1, &b->pythonpath));
    TRY(recipe_repo_names(c, path, b, b->pythonpath));
    const char *slash = strchr(b->script, '/');
    size_t k = 0;
    while (slash && k < b->nrepos && strncmp(b->repos[k].name, b->script, (size_t)(slash - b->script)) != 0)
        k++;
    if (!slash || k == b->nrepos || strstr(b->script, "..")) {
        recipe_path(p, sizeof p, path, "script");
        return recipe_fail(c, p, "expected <repo name>/<path in that checkout>");
    }
    TRY(recipe_strings(c, o, path, "pip", 0, &b->pip));
    TRY(recipe_strings(c, o, path, "pip_upgrade", 0, &b->pip_upgrade));
    if (b->pip_upgrade && !b->pip) {
        recipe_path(p, sizeof p, path, "pip");
        return recipe_fail(c, p, "missing field (pip_upgrade is installed before pip's packages)");
    }
    TRY(recipe_settings(c, o, path, "env", 1, &b->env));
    TRY(recipe_str(c, o, path, "env_source", !!b->env, &b->env_source));
    TRY(recipe_int(c, o, path, "train_iters_default", 1, 0, 1, 0, &b->train_iters_default));
    TRY(recipe_bool(c, o, path, "executor_env", 0, &b->executor_env));
    json_t *a;
    TRY(recipe_member(c, o, path, "automodel", 0, &a));
    if (a) {
        recipe_path(p, sizeof p, path, "automodel");
        TRY(recipe_object(c, a, p));
        TRY(recipe_check_keys(c, a, p, akeys));
        TRY(recipe_str(c, a, p, "script", 1, &b->am_script));
        TRY(recipe_str(c, a, p, "yaml", 1, &b->am_yaml));
        if (strchr(b->am_yaml, '/') || strstr(b->am_yaml, "..")) {
            char py[560];
            recipe_path(py, sizeof py, p, "yaml");
            return recipe_fail(c, py, "expected a file name of share/nemoperf/dfm/conf/");
        }
        TRY(recipe_str(c, a, p, "yaml_source", 1, &b->am_yaml_source));
        TRY(recipe_str(c, a, p, "hf_model", 1, &b->am_hf_model));
        if (strstr(b->am_hf_model, "wan")) { /* the job's model id is <fixed root>/<hf_model> (job/dfm_automodel.h) */
            char ph[560];
            recipe_path(ph, sizeof ph, p, "hf_model");
            return recipe_fail(c, ph, "contains \"wan\": DFM 9eaace1 train.py:87-90 would build the pipeline from "
                                      "its config (random weights) instead of loading it");
        }
        TRY(recipe_strings(c, a, p, "pythonpath", 1, &b->am_pythonpath));
        TRY(recipe_repo_names(c, p, b, b->am_pythonpath));
        TRY(recipe_str(c, a, p, "note", 1, &b->am_note));
    }
    return NP_OK;
}

static enum np_status recipe_load_model(struct recipe_ctx *c, const char *size, json_t *o, const char *path,
                                        struct np_model *m)
{
    static const char *const keys[] = {"label", "factory", "hf_repo", "automodel", "arch", "flops",
                                       "checkpoint", "configs", "tokenizer", "env", "token_drop", "gc_interval",
                                       "finetune", "mbridge", NULL};
    char p[512];
    TRY(recipe_object(c, o, path));
    TRY(recipe_check_keys(c, o, path, keys));
    for (const char *s = size; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' || *s == '_')) {
            return recipe_fail(c, path, "model keys are lower case letters, digits, dots and underscores (e.g. "
                                        "\"8b\", \"8x7b\", \"qwen3_moe_30b_te_deepep\")");
        }
    m->size = strdup(size);
    if (!m->size)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    TRY(recipe_str(c, o, path, "label", 1, &m->label));
    json_t *v;
    TRY(recipe_member(c, o, path, "automodel", 0, &v));
    if (v) {
        recipe_path(p, sizeof p, path, "automodel");
        TRY(recipe_load_automodel(c, v, p, m));
    }
    TRY(recipe_member(c, o, path, "mbridge", 0, &v));
    if (v) {
        recipe_path(p, sizeof p, path, "mbridge");
        TRY(recipe_load_mbridge(c, v, p, m));
    }
    TRY(recipe_str(c, o, path, "factory", !m->automodel && !m->mbridge, &m->factory));
    TRY(recipe_str(c, o, path, "hf_repo", 0, &m->hf_repo));
    if (m->automodel && !m->hf_repo) {
        recipe_path(p, sizeof p, path, "hf_repo");
        return recipe_fail(c, p, "an AutoModel benchmark needs the Hugging Face repo of its model");
    }
    TRY(recipe_member(c, o, path, "tokenizer", 0, &v));
    if (v) {
        static const char *const tkeys[] = {"hf", "null_vocab_size", "on_model", NULL};
        recipe_path(p, sizeof p, path, "tokenizer");
        TRY(recipe_object(c, v, p));
        TRY(recipe_check_keys(c, v, p, tkeys));
        TRY(recipe_str(c, v, p, "hf", 0, &m->tokenizer.hf));
        TRY(recipe_int(c, v, p, "null_vocab_size", 0, 1, 1, 0, &m->tokenizer.null_vocab));
        TRY(recipe_bool(c, v, p, "on_model", 0, &m->tokenizer.on_model));
        if (!m->tokenizer.hf == !m->tokenizer.null_vocab)
            return recipe_fail(c, p, "expected exactly one of hf (a Hugging Face id) and null_vocab_size");
        if (m->tokenizer.hf && (!m->hf_repo || strcmp(m->hf_repo, m->tokenizer.hf) != 0))
            return recipe_fail(c, p, "hf must equal the model's hf_repo (the files ./setup stages)");
    }
    TRY(recipe_settings(c, o, path, "env", 1, &m->env));
    TRY(recipe_bool(c, o, path, "token_drop", 0, &m->token_drop));
    TRY(recipe_int(c, o, path, "gc_interval", 0, 1, 0, 0, &m->gc_interval));
    TRY(recipe_member(c, o, path, "arch", 1, &v));
    recipe_path(p, sizeof p, path, "arch");
    if (!v)
        return recipe_fail(c, p, "expected object");
    TRY(recipe_load_arch(c, v, p, &m->arch));
    TRY(recipe_load_arch_extra(c, v, p, m));
    TRY(recipe_member(c, o, path, "flops", 1, &v));
    recipe_path(p, sizeof p, path, "flops");
    if (!v)
        return recipe_fail(c, p, "expected object");
    TRY(recipe_load_flops(c, v, p, &m->arch, &m->flops));
    const struct np_flops_family *fam = np_flops_family(m->flops.conv);
    if (fam && fam->missing) {
        const char *missing = fam->missing(m->flops.conv, &m->arch, &m->xa, m->pattern);
        if (missing) {
            char msg[160];
            snprintf(msg, sizeof msg, "the %s convention needs arch.%s", np_flops_conv_name(m->flops.conv), missing);
            return recipe_fail(c, p, msg);
        }
        if (m->flops.lora_rank && m->arch.experts > 0)
            return recipe_fail(c, p, "lora_rank: the LoRA multiplier counts dense-decoder parameters only");
    }
    TRY(recipe_member(c, o, path, "checkpoint", 0, &v));
    if (v) {
        recipe_path(p, sizeof p, path, "checkpoint");
        TRY(recipe_load_checkpoint(c, v, p, &m->checkpoint));
    }
    json_t *rows;
    TRY(recipe_member(c, o, path, "configs", 1, &rows));
    recipe_path(p, sizeof p, path, "configs");
    if (!rows || !json_is_array(rows) || json_array_size(rows) == 0)
        return recipe_fail(c, p, "expected a non-empty array of parallel configs");
    m->rows = calloc(json_array_size(rows), sizeof *m->rows);
    if (!m->rows)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        char pi[560];
        snprintf(pi, sizeof pi, "%s[%zu]", p, i);
        m->nrows = i + 1;
        TRY(recipe_load_row(c, row, pi, m, 0, &m->rows[i]));
        for (size_t j = 0; j < i; j++) {
            const struct np_config_row *a = &m->rows[j], *b = &m->rows[i];
            if (a->gpus == b->gpus && (a->dtypes & b->dtypes) && strcmp(a->gpu_type, b->gpu_type) == 0) {
                char msg[160];
                snprintf(msg, sizeof msg, "duplicate key: %s x%d already defined at configs[%zu]", b->gpu_type,
                         b->gpus, j);
                return recipe_fail(c, pi, msg);
            }
        }
    }
    TRY(recipe_member(c, o, path, "finetune", 0, &v));
    if (v) {
        recipe_path(p, sizeof p, path, "finetune");
        TRY(recipe_load_finetune(c, v, p, m));
    }
    return NP_OK;
}

static enum np_status recipe_load_json(struct recipe_ctx *c, json_t *root, struct np_recipe *r)
{
    static const char *const keys[] = {"schema", "recipe", "title", "source", "infer", "container",
                                       "defaults", "command", "models", "nemo", NULL};
    static const char *const nkeys[] = {"scripts", "source", "fp8_recipe", "numactl", "segment",
                                        "cross_entropy_fusion_te", "flops_callback", "cuda_device_max_connections",
                                        "profile_names_experiment", NULL};
    static const char *const ckeys[] = {"framework_version", "image", NULL};
    static const char *const dkeys[] = {"model_size", "dtype", "gpus", NULL};
    if (!json_is_object(root))
        return recipe_fail(c, "(top level)", "expected object");
    TRY(recipe_check_keys(c, root, "", keys));
    int schema;
    TRY(recipe_int(c, root, "", "schema", 1, 0, 1, 0, &schema));
    if (schema != 1)
        return recipe_fail(c, "schema", "unsupported schema version (this nemoperf reads 1)");
    TRY(recipe_str(c, root, "", "recipe", 1, &r->name));
    for (const char *s = r->name; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.'))
            return recipe_fail(c, "recipe", "expected lower case letters, digits and dots (it is part of folder names)");
    TRY(recipe_str(c, root, "", "title", 1, &r->title));
    TRY(recipe_str(c, root, "", "source", 1, &r->source));
    TRY(recipe_bool(c, root, "", "infer", 0, &r->infer));

    json_t *cont;
    TRY(recipe_member(c, root, "", "container", 1, &cont));
    if (!cont)
        return recipe_fail(c, "container", "expected object");
    TRY(recipe_object(c, cont, "container"));
    TRY(recipe_check_keys(c, cont, "container", ckeys));
    TRY(recipe_str(c, cont, "container", "framework_version", 1, &r->framework_version));
    TRY(recipe_str(c, cont, "container", "image", 1, &r->image));

    json_t *nemo;
    TRY(recipe_member(c, root, "", "nemo", 0, &nemo));
    if (nemo) {
        TRY(recipe_object(c, nemo, "nemo"));
        TRY(recipe_check_keys(c, nemo, "nemo", nkeys));
        TRY(recipe_str(c, nemo, "nemo", "scripts", 1, &r->nemo_scripts));
        TRY(recipe_str(c, nemo, "nemo", "source", 1, &r->nemo_source));
        TRY(recipe_str(c, nemo, "nemo", "fp8_recipe", 1, &r->fp8_recipe));
        if (strcmp(r->fp8_recipe, "delayed") != 0 && strcmp(r->fp8_recipe, "current") != 0)
            return recipe_fail(c, "nemo.fp8_recipe", "expected \"delayed\" or \"current\"");
        TRY(recipe_bool(c, nemo, "nemo", "numactl", 0, &r->numactl));
        TRY(recipe_bool(c, nemo, "nemo", "segment", 0, &r->segment));
        TRY(recipe_bool(c, nemo, "nemo", "cross_entropy_fusion_te", 0, &r->cross_entropy_te));
        TRY(recipe_bool(c, nemo, "nemo", "flops_callback", 0, &r->flops_callback));
        TRY(recipe_bool(c, nemo, "nemo", "profile_names_experiment", 0, &r->profile_names_experiment));
        TRY(recipe_settings(c, nemo, "nemo", "cuda_device_max_connections", 0, &r->max_connections));
    }

    json_t *cmd;
    TRY(recipe_member(c, root, "", "command", 0, &cmd));
    if (cmd) {
        if (!json_is_array(cmd) || json_array_size(cmd) == 0)
            return recipe_fail(c, "command", "expected a non-empty array of strings");
        r->command = calloc(json_array_size(cmd) + 1, sizeof *r->command);
        if (!r->command)
            return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
        size_t i;
        json_t *a;
        json_array_foreach(cmd, i, a) {
            char pi[64];
            snprintf(pi, sizeof pi, "command[%zu]", i);
            if (!json_is_string(a))
                return recipe_fail(c, pi, "expected string");
            r->command[i] = strdup(json_string_value(a));
            if (!r->command[i])
                return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
        }
    }

    json_t *models;
    TRY(recipe_member(c, root, "", "models", 1, &models));
    if (!models || !json_is_object(models) || json_object_size(models) == 0)
        return recipe_fail(c, "models", "expected a non-empty object keyed by model size");
    r->models = calloc(json_object_size(models), sizeof *r->models);
    if (!r->models)
        return np_error_set(c->err, NP_E_NOMEM, c->file, 0, 0, "out of memory");
    const char *size;
    json_t *mo;
    json_object_foreach(models, size, mo) {
        char p[512];
        snprintf(p, sizeof p, "models.%s", size);
        struct np_model *m = &r->models[r->nmodels++];
        TRY(recipe_load_model(c, size, mo, p, m));
    }

    json_t *defs;
    TRY(recipe_member(c, root, "", "defaults", 1, &defs));
    if (!defs)
        return recipe_fail(c, "defaults", "expected object");
    TRY(recipe_object(c, defs, "defaults"));
    TRY(recipe_check_keys(c, defs, "defaults", dkeys));
    TRY(recipe_str(c, defs, "defaults", "model_size", 1, &r->default_size));
    char *dts = NULL;
    TRY(recipe_str(c, defs, "defaults", "dtype", 1, &dts));
    r->default_dtype = np_dtype_parse(dts);
    free(dts);
    if (r->default_dtype == NP_DTYPE_NONE)
        return recipe_fail(c, "defaults.dtype", "expected \"bf16\" or \"fp8\"");
    TRY(recipe_int(c, defs, "defaults", "gpus", 1, 0, 1, 0, &r->default_gpus));
    const struct np_model *dm = np_model_find(r, r->default_size);
    if (!dm)
        return recipe_fail(c, "defaults.model_size", "not one of the models");
    int found = 0;
    for (size_t i = 0; i < dm->nrows; i++)
        if (dm->rows[i].gpus == r->default_gpus && (dm->rows[i].dtypes & r->default_dtype))
            found = 1;
    if (!found)
        return recipe_fail(c, "defaults.gpus", "no config row of the default model has this GPU count and dtype");
    return NP_OK;
}

enum np_status np_recipe_load_file(const char *path, struct np_recipe *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        /* Jansson reports an unreadable file with line -1. */
        if (jerr.line < 1) {
            return np_error_set(err, NP_E_IO, path, 0, 0, "%s", jerr.text);
        }
        return np_error_set(err, NP_E_PARSE, path, jerr.line, jerr.column, "%s", jerr.text);
    }
    struct recipe_ctx c = {path, err};
    out->path = strdup(path);
    enum np_status st = out->path ? recipe_load_json(&c, root, out) : NP_E_NOMEM;
    json_decref(root);
    if (st != NP_OK) {
        if (st == NP_E_NOMEM)
            np_error_set(err, st, path, 0, 0, "out of memory");
        np_recipe_free(out);
    }
    return st;
}

static void recipe_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void recipe_rows_free(struct np_config_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct np_config_row *r = &rows[i];
        free(r->gpu_type);
        free(r->system);
        free(r->inconsistent);
        free(r->source);
        free(r->note);
        free(r->tp_comm_overlap_cfg);
        recipe_strv_free(r->model_config);
        for (size_t k = 0; k < r->ncorrections; k++) {
            free(r->corrections[k].field);
            free(r->corrections[k].source);
            free(r->corrections[k].reason);
        }
        free(r->corrections);
        free(r->yaml);
        free(r->backend);
    }
    free(rows);
}

static void recipe_model_free(struct np_model *m)
{
    free(m->size);
    free(m->label);
    free(m->factory);
    free(m->hf_repo);
    free(m->flops.note);
    free(m->pattern);
    recipe_rows_free(m->rows, m->nrows);
    recipe_rows_free(m->ft_rows, m->nft_rows);
    recipe_strv_free(m->lora.targets);
    free(m->ft_source);
    free(m->tokenizer.hf);
    recipe_strv_free(m->env);
    if (m->automodel)
        free(m->automodel->yaml);
    free(m->automodel);
    recipe_mbridge_free(m->mbridge);
}

void np_recipe_free(struct np_recipe *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->title);
    free(r->path);
    free(r->source);
    free(r->framework_version);
    free(r->image);
    free(r->default_size);
    free(r->nemo_scripts);
    free(r->nemo_source);
    free(r->fp8_recipe);
    recipe_strv_free(r->max_connections);
    if (r->command)
        for (char **a = r->command; *a; a++)
            free(*a);
    free(r->command);
    for (size_t i = 0; i < r->nmodels; i++)
        recipe_model_free(&r->models[i]);
    free(r->models);
    memset(r, 0, sizeof *r);
}

void np_recipe_set_free(struct np_recipe_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        np_recipe_free(&s->recipes[i]);
    free(s->recipes);
    for (size_t i = 0; i < s->nnotes; i++)
        free(s->notes[i]);
    free(s->notes);
    memset(s, 0, sizeof *s);
}

static int recipe_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static enum np_status recipe_add_note(struct np_recipe_set *s, const char *fmt_file, const char *size,
                                      size_t idx, const struct np_config_row *row)
{
    char **n = realloc(s->notes, (s->nnotes + 2) * sizeof *n);
    if (!n)
        return NP_E_NOMEM;
    s->notes = n;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s: models.%s.configs[%zu] (%s x%d): published row is inconsistent: %s", fmt_file,
             size, idx, row->gpu_type, row->gpus, row->inconsistent);
    s->notes[s->nnotes] = strdup(buf);
    if (!s->notes[s->nnotes])
        return NP_E_NOMEM;
    s->notes[++s->nnotes] = NULL;
    return NP_OK;
}

enum np_status np_recipe_set_load_dir(const char *dir, struct np_recipe_set *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "cannot open recipe folder: %s", strerror(errno));
    char **names = NULL;
    size_t nn = 0, cap = 0;
    enum np_status st = NP_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || e->d_name[0] == '.' || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = realloc(names, cap * sizeof *nv);
            if (!nv) {
                st = NP_E_NOMEM;
                break;
            }
            names = nv;
        }
        if (!(names[nn] = malloc(strlen(dir) + len + 2))) {
            st = NP_E_NOMEM;
            break;
        }
        sprintf(names[nn++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (st == NP_OK && nn == 0)
        st = np_error_set(err, NP_E_NOTFOUND, dir, 0, 0, "no recipe files (*.json) in this folder");
    if (st == NP_OK) {
        qsort(names, nn, sizeof *names, recipe_cmp_str);
        out->recipes = calloc(nn, sizeof *out->recipes);
        if (!out->recipes)
            st = NP_E_NOMEM;
    }
    for (size_t i = 0; st == NP_OK && i < nn; i++) {
        st = np_recipe_load_file(names[i], &out->recipes[i], err);
        if (st != NP_OK)
            break;
        out->n = i + 1;
        const struct np_recipe *r = &out->recipes[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(out->recipes[j].name, r->name) == 0) {
                st = np_error_set(err, NP_E_INVALID, names[i], 0, 0, "recipe: \"%s\" is already defined in %s",
                                  r->name, out->recipes[j].path);
                break;
            }
        for (size_t m = 0; st == NP_OK && m < r->nmodels; m++)
            for (size_t k = 0; st == NP_OK && k < r->models[m].nrows; k++)
                if (r->models[m].rows[k].inconsistent)
                    st = recipe_add_note(out, names[i], r->models[m].size, k, &r->models[m].rows[k]);
    }
    if (st == NP_E_NOMEM)
        np_error_set(err, st, dir, 0, 0, "out of memory");
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (st != NP_OK)
        np_recipe_set_free(out);
    return st;
}

enum np_status np_recipe_set_load_default(struct np_recipe_set *out, struct np_error *err)
{
    char *dir = np_data_path("recipes");
    if (!dir) {
        memset(out, 0, sizeof *out);
        const char *env = getenv("NEMOPERF_DATADIR");
        if (env && *env) { /* the user named a folder: a bad value, said as such (exit 2) */
            struct stat sb;
            int e = stat(env, &sb) != 0 ? errno : 0;
            return np_error_set(err, NP_E_INVALID, "", 0, 0,
                                "NEMOPERF_DATADIR=%s: %s; allowed: the folder holding recipes/ (and reference/), "
                                "e.g. <prefix>/share/nemoperf, or unset",
                                env, e ? strerror(e) : !S_ISDIR(sb.st_mode) ? "not a folder" : "has no recipes/ folder");
        }
        return np_error_set(err, NP_E_NOTFOUND, "recipes", 0, 0,
                            "recipe folder not found (set NEMOPERF_DATADIR to the folder holding recipes/)");
    }
    enum np_status st = np_recipe_set_load_dir(dir, out, err);
    free(dir);
    return st;
}

const struct np_recipe *np_recipe_find(const struct np_recipe_set *s, const char *name)
{
    if (!s || !name)
        return NULL;
    for (size_t i = 0; i < s->n; i++)
        if (strcasecmp(s->recipes[i].name, name) == 0)
            return &s->recipes[i];
    return NULL;
}

const struct np_model *np_model_find(const struct np_recipe *r, const char *size)
{
    if (!r || !size)
        return NULL;
    for (size_t i = 0; i < r->nmodels; i++)
        if (strcasecmp(r->models[i].size, size) == 0)
            return &r->models[i];
    return NULL;
}

const struct np_config_row *np_row_find(const struct np_model *m, const char *gpu_type, enum np_dtype dtype,
                                        int gpus)
{
    if (!m || !gpu_type)
        return NULL;
    for (size_t i = 0; i < m->nrows; i++) {
        const struct np_config_row *r = &m->rows[i];
        if (r->gpus == gpus && (r->dtypes & dtype) && strcasecmp(r->gpu_type, gpu_type) == 0)
            return r;
    }
    return NULL;
}

const struct np_config_row *np_row_find_task(const struct np_model *m, enum np_task t, const char *gpu_type,
                                             enum np_dtype dtype, int gpus)
{
    if (t == NP_TASK_PRETRAIN)
        return np_row_find(m, gpu_type, dtype, gpus);
    if (!m || !gpu_type)
        return NULL;
    for (size_t i = 0; i < m->nft_rows; i++) {
        const struct np_config_row *r = &m->ft_rows[i];
        if (r->task == t && r->gpus == gpus && (r->dtypes & dtype) && strcasecmp(r->gpu_type, gpu_type) == 0)
            return r;
    }
    return NULL;
}

const struct np_config_row *np_model_rows(const struct np_model *m, enum np_task t, size_t *n)
{
    *n = t == NP_TASK_PRETRAIN ? m->nrows : m->nft_rows;
    return t == NP_TASK_PRETRAIN ? m->rows : m->ft_rows;
}

static const char *const recipe_task_names[] = {"pretrain", "sft", "lora"};

int np_task_parse(const char *s, enum np_task *out)
{
    for (int i = 0; s && i < 3; i++)
        if (strcasecmp(s, recipe_task_names[i]) == 0) {
            *out = (enum np_task)i;
            return 0;
        }
    return -1;
}

const char *np_task_name(enum np_task t)
{
    return (unsigned)t < 3 ? recipe_task_names[t] : "pretrain";
}

const char *np_model_task(const struct np_model *m)
{
    return m && m->flops.lora_rank > 0 ? "lora" : "pretrain";
}

struct np_arch np_row_arch(const struct np_model *m, const struct np_config_row *row)
{
    struct np_arch a = m->arch;
    if (row && row->layers > 0)
        a.layers = row->layers;
    return a;
}

/* ---- data folder lookup ---- */

static int recipe_is_dir(const char *p)
{
    DIR *d = opendir(p);
    if (!d)
        return 0;
    closedir(d);
    return 1;
}

static char *recipe_try(const char *base, const char *mid, const char *sub)
{
    size_t n = strlen(base) + strlen(mid) + strlen(sub) + 3;
    char *p = malloc(n);
    if (!p)
        return NULL;
    snprintf(p, n, "%s%s/%s", base, mid, sub);
    if (recipe_is_dir(p))
        return p;
    free(p);
    return NULL;
}

char *np_mbridge_checkout_dir(const char *stage_path, const struct np_mbridge_repo *repo)
{
    char *p = NULL;
    if (asprintf(&p, "%s/src/%s-%s", stage_path, repo->name, repo->commit) < 0)
        return NULL;
    return p;
}

char *np_mbridge_script_path(const char *stage_path, const struct np_mbridge_spec *b, const char *script)
{
    const char *slash = script ? strchr(script, '/') : NULL;
    for (size_t i = 0; slash && i < b->nrepos; i++)
        if (strlen(b->repos[i].name) == (size_t)(slash - script) &&
            strncmp(b->repos[i].name, script, (size_t)(slash - script)) == 0) {
            char *d = np_mbridge_checkout_dir(stage_path, &b->repos[i]), *p = NULL;
            if (d && asprintf(&p, "%s%s", d, slash) < 0)
                p = NULL;
            free(d);
            return p;
        }
    return NULL;
}

char *np_mbridge_pip_dir(const char *stage_path, const char *recipe, const char *size)
{
    char *p = NULL;
    if (asprintf(&p, "%s/pip/%s-%s", stage_path, recipe, size) < 0)
        return NULL;
    return p;
}

char *np_mbridge_pip_site(const char *stage_path, const char *recipe, const char *size)
{
    char *p = NULL;
    if (asprintf(&p, "%s/pip/%s-%s/site-packages", stage_path, recipe, size) < 0)
        return NULL;
    return p;
}

char *np_data_path(const char *sub)
{
    const char *env = getenv("NEMOPERF_DATADIR");
    char *p;
    if (env && *env)
        return recipe_try(env, "", sub);
    /* Installed: <prefix>/bin/tool -> <prefix>/share/nemoperf/<sub>.  Source tree:
     * bin/tool or build/tests/check_x -> recipes/ and share/nemoperf/reference/. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0'; /* the executable's folder */
        for (int up = 0; slash && up < 2; up++) {
            slash = strrchr(exe, '/');
            if (!slash)
                break;
            *slash = '\0'; /* its parent, then the grandparent */
            if ((p = recipe_try(exe, "/share/nemoperf", sub)) || (p = recipe_try(exe, "", sub)))
                return p;
        }
    }
#ifdef NP_DATADIR
    if ((p = recipe_try(NP_DATADIR, "", sub)))
        return p;
#endif
    return NULL;
}
