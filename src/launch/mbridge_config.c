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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/launch/mbridge_list.h"
#include "nemoperf/model/mbrows.h"
#include "nemoperf/model/recipe_names.h"
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

enum np_status np_mb_config_unlaunched(struct np_mbperf_set *mb, np_env_fn env, void *env_ctx, struct np_error *err)
{
    const char *ct = mbridge_config_get(env, env_ctx, "CONTAINER");
    if (!ct || np_mbperf_container_known(ct))
        return NP_OK;
    struct np_mbperf_set all;
    enum np_status st = np_mbperf_load_ex(NULL, ct, &all, err);
    if (st != NP_OK)
        return st;
    np_mbperf_free(mb);
    *mb = all;
    return NP_OK;
}

/* 1 when the set holds rows of container. */
static int mbridge_config_has_container(const struct np_mbperf_set *mb, const char *container)
{
    for (size_t i = 0; i < mb->n; i++)
        if (strcmp(mb->rows[i].container, container) == 0)
            return 1;
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
    const char *cv; /* CONFIG_VARIANT (-cv), NULL: any */
};

static int mbridge_config_match(const struct np_mbperf_row *r, const struct mbridge_config_want *w)
{
    return (!w->recipe || strcasecmp(r->recipe, w->recipe) == 0) &&
           (!w->container || strcmp(r->container, w->container) == 0) &&
           (!w->gpu || strcasecmp(r->gpu_type, w->gpu) == 0) && (!w->task || strcmp(r->task, w->task) == 0) &&
           (w->dtype == NP_MB_DTYPE_NONE || r->dtype == w->dtype) && (!w->gpus || r->gpus == w->gpus) &&
           (!w->cv || (r->config_variant && strcasecmp(r->config_variant, w->cv) == 0));
}

/* The ", " list of one field over the rows matching w: 'r' recipe, 'c' container, 'g' GPU, 't' task,
 * 'd' dtype, 'v' config variant (rows without one left out), 'n' GPU count (ascending). */
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
        if (!mbridge_config_match(r, w) || (field == 'v' && !r->config_variant))
            continue;
        np_mb_config_join(buf, cap, field == 'v' ? r->config_variant : field == 'r' ? r->recipe : field == 'c' ? r->container : field == 'g' ? r->gpu_type
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
    snprintf(buf, cap, "%s%s%s%s%s%s%s%s%s%s%s", w->recipe ? w->recipe : "",
             w->task && strcmp(w->task, "pretrain") ? " " : "", w->task && strcmp(w->task, "pretrain") ? w->task : "",
             w->dtype != NP_MB_DTYPE_NONE ? " " : "", w->dtype != NP_MB_DTYPE_NONE ? np_mb_dtype_name(w->dtype) : "",
             w->gpu ? " on " : "", w->gpu ? w->gpu : "", w->container ? " in CONTAINER=" : "",
             w->container ? w->container : "", w->cv ? " CONFIG_VARIANT=" : "", w->cv ? w->cv : "");
}

/* ---- CONFIG_VARIANT and the cells a launch may name (GBS, MBS, SEQ_LEN) ----
 * A published row is one config variant (Megatron-Bridge's -cv) of its release's recipe, and a container may
 * publish one request twice: 26.06 has DeepSeek V3 GB300 MXFP8 at 256 GPUs as v2 (GBS 4096, archive:112) and as
 * v1 run with -gb 15360 (archive:113).  CONFIG_VARIANT picks the row; unset, the row of the variant
 * Megatron-Bridge's own launcher takes without -cv is used and said, every row listed with its GBS.  GBS, MBS
 * and SEQ_LEN narrow the rows the same way; a value the chosen row does not publish is refused naming both. */

/* What each release's launcher runs without -cv: the variants in the order it tries them ("" is the
 * suffix-less config name).  A release not listed has no default here: its rows are listed and refused. */
static const struct {
    const char *release;
    const char *order[4];
    const char *source;
} mbridge_config_cv_default[] = {
#define MBRIDGE_CONFIG_V2_FIRST {"v2", "v1", "", NULL}
    {"v0.3.0", MBRIDGE_CONFIG_V2_FIRST, "scripts/performance/argument_parser.py:694-700, utils/utils.py:95-126"},
    {"v0.3.1", MBRIDGE_CONFIG_V2_FIRST, "scripts/performance/argument_parser.py:702-708, utils/utils.py:95-126"},
    {"v0.4.0", MBRIDGE_CONFIG_V2_FIRST, "scripts/performance/argument_parser.py:794-800, utils/utils.py:95-126"},
    {"v0.4.1", MBRIDGE_CONFIG_V2_FIRST, "scripts/performance/argument_parser.py:794-800, utils/utils.py:95-126"},
    {"v0.5.0", MBRIDGE_CONFIG_V2_FIRST, "scripts/performance/argument_parser.py:904-910, utils/utils.py:100-131"},
    {"v0.5.1", MBRIDGE_CONFIG_V2_FIRST, "scripts/performance/argument_parser.py:904-910, utils/utils.py:100-131"},
    /* "Omit to use the suffix-less canonical recipe" */
    {"v0.6.0", {"", NULL}, "scripts/performance/argument_parser.py:941-949"},
#undef MBRIDGE_CONFIG_V2_FIRST
};

/* The cells a launch may name, each a published value of the row. */
static const struct {
    const char *var;
    size_t off; /* int in struct np_mbperf_row */
} mbridge_config_cells[] = {
    {"GBS", offsetof(struct np_mbperf_row, gbs)},
    {"MBS", offsetof(struct np_mbperf_row, mbs)},
    {"SEQ_LEN", offsetof(struct np_mbperf_row, seq_len)},
};

static int mbridge_config_cell(const struct np_mbperf_row *r, size_t i)
{
    int v;
    memcpy(&v, (const char *)r + mbridge_config_cells[i].off, sizeof v);
    return v;
}

/* "v1 (GBS 15360, archive:113), v2 (GBS 4096, ...)": the rows of cand, for messages */
static void mbridge_config_rows_said(const struct np_mbperf_row *const *cand, size_t n, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char t[300];
        snprintf(t, sizeof t, "%s%s (GBS %d, MBS %d, %s)", i ? ", " : "",
                 cand[i]->config_variant ? cand[i]->config_variant : "no -cv", cand[i]->gbs, cand[i]->mbs,
                 cand[i]->published_source);
        strncat(buf, t, cap - strlen(buf) - 1);
    }
}

/* CONFIG_VARIANT, checked against the rows matching *w (the recipe, task, GPU type and dtype chosen, the
 * container when set) and put into w->cv, lower case (buf holds it). */
static enum np_status mbridge_config_variant_want(const struct np_mbperf_set *mb, np_env_fn env, void *env_ctx,
                                                  struct mbridge_config_want *w, char *buf, size_t cap,
                                                  struct np_error *err)
{
    const char *cv = mbridge_config_get(env, env_ctx, "CONFIG_VARIANT");
    if (!cv)
        return NP_OK;
    snprintf(buf, cap, "%s", cv);
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    char list[512], what[300];
    mbridge_config_list(mb, w, 'v', list, sizeof list);
    mbridge_config_what(w, what, sizeof what);
    struct mbridge_config_want with = *w;
    with.cv = buf;
    char have[16];
    mbridge_config_list(mb, &with, 'c', have, sizeof have);
    if (!have[0] && !list[0])
        return mbridge_config_bad(err, "CONFIG_VARIANT=%s: %s is published without a config variant (its rows run "
                                       "the release's suffix-less recipe, no -cv); allowed: unset", cv, what);
    if (!have[0])
        return mbridge_config_bad(err, "CONFIG_VARIANT=%s: %s is published for config variants %s only; allowed: %s",
                                  cv, what, list, list);
    w->cv = buf;
    return NP_OK;
}

/* The row of w at w->gpus: the one published, else the one the cells (GBS, ...) and CONFIG_VARIANT leave,
 * else the release's default variant (said); then every cell set is checked against it. */
static enum np_status mbridge_config_row(const struct np_mbperf_set *mb, np_env_fn env, void *env_ctx,
                                         const struct mbridge_config_want *w, const struct np_mbperf_row **out,
                                         struct np_error *err)
{
    enum { MAXC = 16 };
    const struct np_mbperf_row *cand[MAXC], *left[MAXC];
    size_t n = 0, nl = 0;
    for (size_t k = 0; k < mb->n && n < MAXC; k++)
        if (mbridge_config_match(&mb->rows[k], w))
            cand[n++] = &mb->rows[k];
    *out = NULL;
    if (n == 0)
        return NP_OK; /* the caller says which scales exist */
    char what[300], rows[2048];
    mbridge_config_what(w, what, sizeof what);
    mbridge_config_rows_said(cand, n, rows, sizeof rows);
    /* the cells set: keep the rows publishing every one of them */
    for (size_t i = 0; i < n; i++) {
        int keep = 1;
        for (size_t c = 0; c < sizeof mbridge_config_cells / sizeof mbridge_config_cells[0]; c++) {
            const char *v = mbridge_config_get(env, env_ctx, mbridge_config_cells[c].var);
            keep &= !v || atol(v) == mbridge_config_cell(cand[i], c);
        }
        if (keep)
            left[nl++] = cand[i];
    }
    for (size_t c = 0; nl == 0 && c < sizeof mbridge_config_cells / sizeof mbridge_config_cells[0]; c++) {
        const char *var = mbridge_config_cells[c].var, *v = mbridge_config_get(env, env_ctx, var);
        const char *p = v;
        long x = 0;
        if (v && (!np_parse_digits(&p, &x) || *p || x < 1))
            return mbridge_config_bad(err, "%s=%s: not a positive integer; allowed: a value %s at %d GPUs publishes "
                                           "(%s), or unset", var, v, what, w->gpus, rows);
        char pubs[200] = "";
        for (size_t i = 0; v && i < n; i++) {
            char t[16];
            snprintf(t, sizeof t, "%d", mbridge_config_cell(cand[i], c));
            np_mb_config_join(pubs, sizeof pubs, t);
        }
        int hit = 0;
        for (size_t i = 0; v && i < n; i++)
            hit |= x == mbridge_config_cell(cand[i], c);
        if (v && !hit)
            return mbridge_config_bad(err, "%s=%s: %s at %d GPUs is published with %s %s, not %s (rows: %s); nemoperf "
                                           "launches a published row as published; allowed: %s, or unset",
                                      var, v, what, w->gpus, var, pubs, v, rows, pubs);
    }
    if (nl == 0) /* each cell exists in some row, not together */
        return mbridge_config_bad(err, "GBS/MBS/SEQ_LEN: no row of %s at %d GPUs publishes those values together; "
                                       "allowed: the values of one row: %s", what, w->gpus, rows);
    if (nl == 1) {
        *out = left[0];
        return NP_OK;
    }
    /* several rows and nothing chose: the release's own default (-cv unset) */
    for (size_t d = 0; d < sizeof mbridge_config_cv_default / sizeof mbridge_config_cv_default[0]; d++) {
        if (strcmp(mbridge_config_cv_default[d].release, left[0]->release) != 0)
            continue;
        for (const char *const *o = mbridge_config_cv_default[d].order; *o && !*out; o++)
            for (size_t i = 0; i < nl && !*out; i++)
                if (strcmp(left[i]->config_variant ? left[i]->config_variant : "", *o) == 0)
                    *out = left[i];
        if (*out) {
            mbridge_config_rows_said(left, nl, rows, sizeof rows);
            np_notef("CONFIG_VARIANT not set: %s at %d GPUs is published as %s; using %s (GBS %d), what "
                     "Megatron-Bridge %s runs without -cv (%s); set CONFIG_VARIANT (or GBS) to choose",
                     what, w->gpus, rows, (*out)->config_variant ? (*out)->config_variant : "no -cv", (*out)->gbs,
                     left[0]->release, mbridge_config_cv_default[d].source);
            return NP_OK;
        }
    }
    mbridge_config_rows_said(left, nl, rows, sizeof rows);
    return mbridge_config_bad(err, "CONFIG_VARIANT is not set and %s at %d GPUs is published as several rows: %s; "
                                   "allowed: CONFIG_VARIANT (or GBS) naming one", what, w->gpus, rows);
}

enum np_status np_mb_config_not_mb(np_env_fn env, void *env_ctx, struct np_error *err)
{
    static const char *const vars[] = {"CONFIG_VARIANT", "GBS", "MBS", "SEQ_LEN", NULL};
    for (size_t i = 0; vars[i]; i++) {
        const char *v = mbridge_config_get(env, env_ctx, vars[i]);
        if (v)
            return mbridge_config_bad(err, "%s=%s: chooses among Megatron-Bridge rows only, and RECIPE=%s is not one "
                                           "(NeMo recipes launch their --list row as it is); allowed: unset, or a "
                                           "Megatron-Bridge RECIPE (nemoperf-launch --list)", vars[i], v,
                                      mbridge_config_get(env, env_ctx, "RECIPE") ? mbridge_config_get(env, env_ctx, "RECIPE") : "(unset)");
    }
    return NP_OK;
}

/* Why a container Megatron-Bridge publishes is not launched (its rows file's first reason), into buf; "" when
 * the container is not a published one. */
static void mbridge_config_unlaunched(const char *container, char *buf, size_t cap)
{
    struct np_error e;
    json_t *rows = np_mb_launch_rows(&e);
    char *why = rows ? np_mb_container_why_not(rows, container) : NULL;
    snprintf(buf, cap, "%s", why ? why : "");
    free(why);
    json_decref(rows);
}

enum np_status np_mb_config_pick(const struct np_mbperf_set *mb, np_env_fn env, void *env_ctx, enum np_task task,
                                 struct np_mb_choice *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    struct mbridge_config_want w = {NULL, NULL, NULL, NULL, NP_MB_DTYPE_NONE, 0, NULL};
    char list[2048], what[300], name[160], gpu[32], newest[16];
    /* CONTAINER: a version nemoperf launches */
    const char *ct = mbridge_config_get(env, env_ctx, "CONTAINER");
    if (ct && !mbridge_config_has_container(mb, ct)) {
        mbridge_config_list(mb, &w, 'c', list, sizeof list);
        char why[2048];
        mbridge_config_unlaunched(ct, why, sizeof why);
        return mbridge_config_bad(err, "CONTAINER=%s: no launchable Megatron-Bridge rows for this container version%s%s"
                                       "; allowed: %s", ct, *why ? ": " : "", why, list);
    }
    w.container = ct;
    /* RECIPE (+ MODEL_SIZE): Megatron-Bridge's -mr name */
    if (!mbridge_config_name(env, env_ctx, name, sizeof name)) {
        mbridge_config_list(mb, &w, 'r', list, sizeof list);
        return mbridge_config_bad(err, "RECIPE is not set; allowed (Megatron-Bridge recipes%s%s): %s",
                                  ct ? " of CONTAINER=" : "", ct ? ct : "", list);
    }
    w.recipe = name;
    if (!np_mbperf_has_recipe(mb, name, ct)) { /* with CONTAINER set, only its rows' names */
        np_recipe_names_hint(NULL, mb, ct, name, list, sizeof list);
        return mbridge_config_bad(err, "RECIPE=%s%s%s: not a Megatron-Bridge performance recipe%s%s; %s",
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
        mbridge_config_what(&(struct mbridge_config_want){name, ct, NULL, w.task, NP_MB_DTYPE_NONE, 0, NULL}, what,
                            sizeof what);
        const char *un = np_mb_gpu_unpublished(gpu); /* VR200, R100: what is known, and that the peak is not */
        return mbridge_config_bad(err, "GPU_TYPE=%s: %s is not published for this GPU type%s%s%s; allowed: %s", gt, what,
                                  un ? " (" : "", un ? un : "", un ? ")" : "", list);
    }
    /* DTYPE: -c names, the published labels as aliases; unset: the only dtype published, else refused */
    const char *dt = mbridge_config_get(env, env_ctx, "DTYPE");
    mbridge_config_list(mb, &w, 'd', list, sizeof list);
    if (!dt && strchr(list, ','))
        return mbridge_config_bad(err, "DTYPE is not set and %s on %s is published in several dtypes; allowed: %s",
                                  name, gpu, list);
    w.dtype = np_mb_dtype_parse(dt ? dt : list);
    /* fp8_sc: only 25.09's DeepSeek V3 H100 row (its --print-config; that container is not launched) */
    if (dt && (w.dtype == NP_MB_DTYPE_NONE || (w.dtype == NP_MB_FP8_SC && !strstr(list, "fp8_sc"))))
        return mbridge_config_bad(err, "DTYPE=%s: not a Megatron-Bridge dtype nemoperf launches; allowed: bf16, "
                                       "fp8_cs, fp8_mx, nvfp4 (or the published labels BF16, FP8, FP8-CS, MXFP8, "
                                       "NVFP4)%s%s",
                                  dt, list[0] ? "; published for this recipe and GPU: " : "", list);
    if (!dt)
        np_notef("DTYPE not set: using %s, the only dtype %s on %s is published in", list, name, gpu);
    char have[200];
    mbridge_config_list(mb, &w, 'd', have, sizeof have);
    if (!have[0]) {
        mbridge_config_what(&(struct mbridge_config_want){name, ct, gpu, w.task, NP_MB_DTYPE_NONE, 0, NULL}, what, sizeof what);
        return mbridge_config_bad(err, "DTYPE=%s: %s is published for %s only; allowed: %s", dt, what, list, list);
    }
    char cv[32];
    enum np_status vst = mbridge_config_variant_want(mb, env, env_ctx, &w, cv, sizeof cv, err);
    if (vst != NP_OK)
        return vst;
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
        enum np_status rst = mbridge_config_row(mb, env, env_ctx, &w, &out->rows[i], err);
        if (rst != NP_OK)
            return rst;
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
