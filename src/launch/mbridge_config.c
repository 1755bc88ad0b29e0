/* mbridge_config.c - resolve RECIPE/CONTAINER/DTYPE/GPU_TYPE/TASK/JOB_TOTAL_GPUS to Megatron-Bridge rows.
 *
 * The Megatron-Bridge performance rows (rows-26.08.json, rows-26.06.json) are addressed by Megatron-Bridge's own
 * names (-mr recipe, -c dtype, -g GPU), in their own namespace: NeMo's recipes keep theirs, and a name both
 * know (none today) is Megatron-Bridge's only with CONTAINER set.  Defaults are said on stderr; a bad value is
 * refused naming the variable and listing the values that exist for what was already chosen.
 */
#include "nemoperf/launch/mbridge_config.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/util/diag.h"

static const char *mbridge_config_get(np_env_fn env, void *ctx, const char *name)
{
    const char *v = env(ctx, name);
    return v && *v ? v : NULL;
}

/* RECIPE, with MODEL_SIZE appended when given ("qwen3" + "30b_a3b"), lower case, into buf. */
static int mbridge_config_name(np_env_fn env, void *ctx, char *buf, size_t cap)
{
    const char *r = mbridge_config_get(env, ctx, "RECIPE"), *s = mbridge_config_get(env, ctx, "MODEL_SIZE");
    if (!r)
        return 0;
    int n = s ? snprintf(buf, cap, "%s_%s", r, s) : snprintf(buf, cap, "%s", r);
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return n > 0 && (size_t)n < cap;
}

int np_mb_config_wanted(const struct np_recipe_set *set, np_env_fn env, void *env_ctx, struct np_mbperf_set *mb,
                        struct np_error *err)
{
    const char *rname = mbridge_config_get(env, env_ctx, "RECIPE");
    int container = mbridge_config_get(env, env_ctx, "CONTAINER") != NULL;
    if (!container && (!rname || np_recipe_find(set, rname)))
        return 0; /* NeMo's recipes keep their names; only an unknown RECIPE is looked up below */
    if (np_mbperf_load(NULL, mb, err) != NP_OK)
        return container ? -1 : 0;
    char name[160];
    if (container || (mbridge_config_name(env, env_ctx, name, sizeof name) && np_mbperf_has_recipe(mb, name, NULL)) ||
        np_mbperf_has_recipe(mb, rname, NULL))
        return 1;
    np_mbperf_free(mb);
    return 0;
}

void np_mb_config_join(char *buf, size_t cap, const char *item)
{
    size_t len = strlen(item);
    for (const char *p = buf; (p = strstr(p, item)); p += len)
        if ((p == buf || p[-1] == ' ') && (p[len] == ',' || p[len] == '\0'))
            return;
    if (*buf)
        strncat(buf, ", ", cap - strlen(buf) - 1);
    strncat(buf, item, cap - strlen(buf) - 1);
}

/* What a row must match so far (NULL / NONE / 0: anything). */
struct mbridge_config_want {
    const char *recipe, *container, *gpu;
    const char *task;
    enum np_mb_dtype dtype;
    int gpus;
};

static int mbridge_config_match(const struct np_mbperf_row *r, const struct mbridge_config_want *w)
{
    return (!w->recipe || strcasecmp(r->recipe, w->recipe) == 0) &&
           (!w->container || strcmp(r->container, w->container) == 0) &&
           (!w->gpu || strcasecmp(r->gpu_type, w->gpu) == 0) && (!w->task || strcmp(r->task, w->task) == 0) &&
           (w->dtype == NP_MB_DTYPE_NONE || r->dtype == w->dtype) && (!w->gpus || r->gpus == w->gpus);
}

/* The ", " list of one field over the rows matching w: 'r' recipe, 'c' container, 'g' GPU, 't' task,
 * 'd' dtype, 'n' GPU count (ascending). */
static void mbridge_config_list(const struct np_mbperf_set *mb, const struct mbridge_config_want *w, char field,
                                char *buf, size_t cap)
{
    buf[0] = '\0';
    if (field == 'n') {
        for (int last = 0;;) {
            int next = INT_MAX;
            for (size_t i = 0; i < mb->n; i++)
                if (mbridge_config_match(&mb->rows[i], w) && mb->rows[i].gpus > last && mb->rows[i].gpus < next)
                    next = mb->rows[i].gpus;
            if (next == INT_MAX)
                return;
            char t[16];
            snprintf(t, sizeof t, "%d", next);
            np_mb_config_join(buf, cap, t);
            last = next;
        }
    }
    for (size_t i = 0; i < mb->n; i++) {
        const struct np_mbperf_row *r = &mb->rows[i];
        if (!mbridge_config_match(r, w))
            continue;
        np_mb_config_join(buf, cap, field == 'r' ? r->recipe : field == 'c' ? r->container : field == 'g' ? r->gpu_type
                                      : field == 't' ? r->task : np_mb_dtype_name(r->dtype));
    }
}

static enum np_status mbridge_config_bad(struct np_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static enum np_status mbridge_config_bad(struct np_error *err, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return np_error_set(err, NP_E_INVALID, "", 0, 0, "%s", text);
}

/* "deepseek_v3 fp8_mx on gb300 (26.08)" for messages */
static void mbridge_config_what(const struct mbridge_config_want *w, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s%s%s%s%s%s%s", w->recipe ? w->recipe : "", w->task && strcmp(w->task, "pretrain") ? " " : "",
             w->task && strcmp(w->task, "pretrain") ? w->task : "", w->dtype != NP_MB_DTYPE_NONE ? " " : "",
             w->dtype != NP_MB_DTYPE_NONE ? np_mb_dtype_name(w->dtype) : "", w->gpu ? " on " : "", w->gpu ? w->gpu : "",
             w->container ? " in CONTAINER=" : "", w->container ? w->container : "");
}

enum np_status np_mb_config_pick(const struct np_mbperf_set *mb, np_env_fn env, void *env_ctx, enum np_task task,
                                 struct np_mb_choice *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    struct mbridge_config_want w = {NULL, NULL, NULL, NULL, NP_MB_DTYPE_NONE, 0};
    char list[2048], what[300], name[160], gpu[32], newest[16];
    /* CONTAINER: a version nemoperf launches */
    const char *ct = mbridge_config_get(env, env_ctx, "CONTAINER");
    if (ct && !np_mbperf_container_known(ct)) {
        mbridge_config_list(mb, &w, 'c', list, sizeof list);
        return mbridge_config_bad(err, "CONTAINER=%s: no launchable Megatron-Bridge rows for this container version; "
                                       "allowed: %s", ct, list);
    }
    w.container = ct;
    /* RECIPE (+ MODEL_SIZE): Megatron-Bridge's -mr name */
    if (!mbridge_config_name(env, env_ctx, name, sizeof name)) {
        mbridge_config_list(mb, &w, 'r', list, sizeof list);
        return mbridge_config_bad(err, "RECIPE is not set; allowed (Megatron-Bridge recipes%s%s): %s",
                                  ct ? " of CONTAINER=" : "", ct ? ct : "", list);
    }
    w.recipe = name;
    if (!np_mbperf_has_recipe(mb, name, ct)) {
        struct mbridge_config_want any = w;
        any.recipe = NULL;
        mbridge_config_list(mb, &any, 'r', list, sizeof list);
        return mbridge_config_bad(err, "RECIPE=%s%s%s: not a Megatron-Bridge performance recipe%s%s; allowed: %s",
                                  mbridge_config_get(env, env_ctx, "RECIPE"),
                                  mbridge_config_get(env, env_ctx, "MODEL_SIZE") ? " MODEL_SIZE=" : "",
                                  mbridge_config_get(env, env_ctx, "MODEL_SIZE") ? mbridge_config_get(env, env_ctx, "MODEL_SIZE") : "",
                                  ct ? " of CONTAINER=" : "", ct ? ct : "", list);
    }
    /* TASK: pretrain, or the 26.06 Llama 3 70B sft / lora rows */
    w.task = task == NP_TASK_SFT ? "sft" : task == NP_TASK_LORA ? "lora" : "pretrain";
    mbridge_config_list(mb, &w, 't', list, sizeof list);
    if (!strstr(list, w.task)) {
        struct mbridge_config_want any = w;
        any.task = NULL;
        mbridge_config_list(mb, &any, 't', list, sizeof list);
        return mbridge_config_bad(err, "TASK=%s: %s%s%s has no published %s rows; allowed: %s", w.task, name,
                                  ct ? " in CONTAINER=" : "", ct ? ct : "", w.task, list);
    }
    /* GPU_TYPE: Megatron-Bridge's -g; unset: the one GPU type the rows have, else refused with the list */
    const char *gt = mbridge_config_get(env, env_ctx, "GPU_TYPE");
    mbridge_config_list(mb, &w, 'g', list, sizeof list);
    if (!gt && strchr(list, ','))
        return mbridge_config_bad(err, "GPU_TYPE is not set and %s is published on several GPU types; allowed: %s",
                                  name, list);
    snprintf(gpu, sizeof gpu, "%.31s", gt ? gt : list);
    for (char *p = gpu; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    w.gpu = gpu;
    if (!gt)
        np_notef("GPU_TYPE not set: using %s, the only GPU type %s is published on", gpu, name);
    mbridge_config_list(mb, &w, 'g', what, sizeof what);
    if (!what[0]) {
        mbridge_config_what(&(struct mbridge_config_want){name, ct, NULL, w.task, NP_MB_DTYPE_NONE, 0}, what,
                            sizeof what);
        return mbridge_config_bad(err, "GPU_TYPE=%s: %s is not published for this GPU type; allowed: %s", gt, what,
                                  list);
    }
    /* DTYPE: -c names, the published labels as aliases; unset: the only dtype published, else refused */
    const char *dt = mbridge_config_get(env, env_ctx, "DTYPE");
    mbridge_config_list(mb, &w, 'd', list, sizeof list);
    if (!dt && strchr(list, ','))
        return mbridge_config_bad(err, "DTYPE is not set and %s on %s is published in several dtypes; allowed: %s",
                                  name, gpu, list);
    w.dtype = np_mb_dtype_parse(dt ? dt : list);
    if (dt && (w.dtype == NP_MB_DTYPE_NONE || w.dtype == NP_MB_FP8_SC))
        return mbridge_config_bad(err, "DTYPE=%s: not a Megatron-Bridge dtype nemoperf launches; allowed: bf16, "
                                       "fp8_cs, fp8_mx, nvfp4 (or the published labels BF16, FP8, FP8-CS, MXFP8, "
                                       "NVFP4)%s%s",
                                  dt, list[0] ? "; published for this recipe and GPU: " : "", list);
    if (!dt)
        np_notef("DTYPE not set: using %s, the only dtype %s on %s is published in", list, name, gpu);
    char have[200];
    mbridge_config_list(mb, &w, 'd', have, sizeof have);
    if (!have[0]) {
        mbridge_config_what(&(struct mbridge_config_want){name, ct, gpu, w.task, NP_MB_DTYPE_NONE, 0}, what, sizeof what);
        return mbridge_config_bad(err, "DTYPE=%s: %s is published for %s only; allowed: %s", dt, what, list, list);
    }
    /* CONTAINER unset: the newest version that has the row */
    if (!ct) {
        mbridge_config_list(mb, &w, 'c', list, sizeof list);
        snprintf(newest, sizeof newest, "%.*s", (int)strcspn(list, ","), list);
        mbridge_config_what(&w, what, sizeof what);
        w.container = newest;
        np_notef("CONTAINER not set: using %s, the newest container version with %s (published in: %s)", newest,
                 what, list);
    }
    /* JOB_TOTAL_GPUS: published scales; unset: the smallest */
    mbridge_config_list(mb, &w, 'n', list, sizeof list);
    mbridge_config_what(&w, what, sizeof what);
    const char *v = mbridge_config_get(env, env_ctx, "JOB_TOTAL_GPUS");
    if (!v) {
        out->gpus[out->n++] = atoi(list);
        np_notef("JOB_TOTAL_GPUS not set: using %d, the smallest published scale of %s (published: %s)", out->gpus[0],
                 what, list);
    }
    for (const char *p = v ? v : ""; *p;) {
        long n;
        while (*p == ' ')
            p++;
        if (!np_parse_digits(&p, &n) || n < 1 || n > 1000000 || (*p && *p != ',' && *p != ' '))
            return mbridge_config_bad(err, "JOB_TOTAL_GPUS=%s: not a positive integer or a comma list of them; "
                                           "allowed: %s", v, list);
        while (*p == ' ')
            p++;
        if (*p == ',' && !*++p)
            return mbridge_config_bad(err, "JOB_TOTAL_GPUS=%s: trailing comma; allowed: %s", v, list);
        for (size_t i = 0; i < out->n; i++)
            if (out->gpus[i] == n)
                return mbridge_config_bad(err, "JOB_TOTAL_GPUS=%s: %ld is listed twice; allowed: each scale once", v, n);
        if (out->n == NP_MB_CONFIG_MAX)
            return mbridge_config_bad(err, "JOB_TOTAL_GPUS=%s: more than %d scales", v, NP_MB_CONFIG_MAX);
        out->gpus[out->n++] = (int)n;
    }
    if (out->n == 0)
        return mbridge_config_bad(err, "JOB_TOTAL_GPUS=%s: no GPU count; allowed: %s", v ? v : "", list);
    const char *gpn = mbridge_config_get(env, env_ctx, "GPUS_PER_NODE");
    if (gpn) {
        const char *p = gpn;
        long n;
        if (!np_parse_digits(&p, &n) || *p || n < 1 || n > 1024)
            return mbridge_config_bad(err, "GPUS_PER_NODE=%s: not an integer in range; allowed: 1 to 1024", gpn);
        out->gpus_per_node = (int)n;
    }
    for (size_t i = 0; i < out->n; i++) {
        w.gpus = out->gpus[i];
        for (size_t k = 0; k < mb->n && !out->rows[i]; k++) /* the first of a container's rows at that scale */
            if (mbridge_config_match(&mb->rows[k], &w))
                out->rows[i] = &mb->rows[k];
        if (!out->rows[i])
            return mbridge_config_bad(err, "JOB_TOTAL_GPUS=%s: %s is not published at %d GPUs; allowed: %s",
                                      v ? v : "", what, out->gpus[i], list);
        int per = out->gpus_per_node ? out->gpus_per_node : out->rows[i]->gpus_per_node;
        if (out->gpus[i] % per != 0)
            return mbridge_config_bad(err, "GPUS_PER_NODE=%d: JOB_TOTAL_GPUS=%d is not a multiple of it; allowed: a "
                                           "divisor of %d, e.g. the published row's %d (or unset)",
                                      per, out->gpus[i], out->gpus[i], out->rows[i]->gpus_per_node);
    }
    return NP_OK;
}
