/* config.c - resolve and validate the launch environment against the recipe data.
 *
 * The variables of the original launch.sh (plus RECIPE, GPU_TYPE, WORKLOAD) are
 * read through an accessor, checked one by one, and turned into one typed
 * np_launch_config per job of a JOB_TOTAL_GPUS sweep.  Each failure names the
 * variable, the bad value and what is allowed; nothing here writes files.
 */
#include "nemoperf/launch/config.h"

#include "nemoperf/job/automodel.h"
#include "nemoperf/job/mbridge.h"
#include "nemoperf/job/mbridge_perf.h"
#include "nemoperf/job/nccltests.h"
#include "nemoperf/launch/mbridge_config.h"
#include "nemoperf/model/layout.h"
#include "nemoperf/model/mbhf.h"
#include "nemoperf/model/recipe_names.h"
#include "nemoperf/setup/stage.h"
#include "nemoperf/slurm/sbatch_env.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/job/finetune.h"
#include "nemoperf/job/nemo.h"
#include "nemoperf/job/system.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/util/shell.h"

#define CONFIG_MAX_SWEEP 64

static long config_utf8_bad(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0 || (n == 1 && *p < 0xC2) || (n == 3 && *p > 0xF4))
            return (long)(p - (const unsigned char *)s);
        unsigned cp = n == 0 ? *p : *p & (0x3F >> n);
        for (int i = 1; i <= n; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return (long)(p - (const unsigned char *)s);
            cp = cp << 6 | (p[i] & 0x3F);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return (long)(p - (const unsigned char *)s);
        p += n + 1;
    }
    return -1;
}

/* ---- resolution context ---- */

struct config_ctx {
    np_env_fn env;
    void *env_ctx;
    struct np_error *err;
    const char *setup_cmd; /* "./setup" or the setup tool's real path, for hints */
};

/* Value of a variable; empty counts as unset. */
static const char *config_get(struct config_ctx *x, const char *name)
{
    const char *v = x->env(x->env_ctx, name);
    return v && *v ? v : NULL;
}

/* The task a row runs as: an AutoModel row's is its benchmark's (np_model_task: the PEFT rows are LoRA), whatever
 * TASK says; any other row's is its own.  Static text. */
static const char *config_task_name(const struct np_model *m, enum np_task t)
{
    return m->automodel ? np_model_task(m) : np_task_name(t);
}

static enum np_status config_bad(struct config_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static enum np_status config_bad(struct config_ctx *x, const char *fmt, ...)
{
    char text[8192]; /* np_error_set elides the middle of a long message, keeping its reason */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return np_error_set(x->err, NP_E_INVALID, "", 0, 0, "%s", text);
}

/* Append item to a ", "-separated list in buf (once). */
static void config_join(char *buf, size_t size, const char *item)
{
    np_mb_config_join(buf, size, item);
}

/* Strict decimal integer in [min, max]. */
static int config_int(const char *s, long min, long max, int *out)
{
    const char *p = s;
    long v;
    if (!np_parse_digits(&p, &v) || *p || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static enum np_status config_bool(struct config_ctx *x, const char *name, int *out)
{
    const char *v = config_get(x, name);
    *out = 0;
    if (v && np_parse_bool(v, out) != 0)
        return config_bad(x, "%s=%s: not a boolean; allowed: true, false, 1, 0, yes, no (any case)", name, v);
    return NP_OK;
}

/* Integer variable with a default. */
static enum np_status config_intvar(struct config_ctx *x, const char *name, long min, long max, int dflt,
                                    int *out, int *explicit_)
{
    const char *v = config_get(x, name);
    *out = dflt;
    if (explicit_)
        *explicit_ = v != NULL;
    if (v && config_int(v, min, max, out) != 0)
        return config_bad(x, "%s=%s: not an integer in range; allowed: %ld to %ld", name, v, min, max);
    return NP_OK;
}

/* Value restricted to Slurm-name characters (accounts, partitions). */
static int config_slurm_word(const char *s)
{
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_.,:+@-", *p))
            return 0;
    return *s != '\0';
}

/* [type:]count */
static int config_gres_gpus(const char *s)
{
    const char *colon = strrchr(s, ':');
    const char *num = colon ? colon + 1 : s;
    if (colon) {
        if (colon == s)
            return 0;
        for (const char *p = s; p < colon; p++)
            if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
                return 0;
    }
    int n;
    return config_int(num, 1, 1000000, &n) == 0;
}

static void config_human(double bytes, char *buf, size_t size)
{
    static const char *const unit[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    double v = bytes;
    while (v >= 1000.0 && u < 5) {
        v /= 1000.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f bytes", bytes);
    else
        snprintf(buf, size, "%.1f %s (%.0f bytes)", v, unit[u], bytes);
}

/* A folder holding weights/ with at least one *.distcp file. */
static int config_has_distcp(const char *dir)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/weights", dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        found = n > 7 && strcmp(e->d_name + n - 7, ".distcp") == 0;
    }
    closedir(d);
    return found;
}

/* ---- recipe / model selection ---- */

static enum np_status config_pick_recipe(struct config_ctx *x, const struct np_recipe_set *set,
                                         const struct np_recipe **rp)
{
    const char *rname = config_get(x, "RECIPE"), *size = config_get(x, "MODEL_SIZE");
    char all[400] = "", sizes[400] = "", hits[400] = "";
    for (size_t i = 0; i < set->n; i++)
        config_join(all, sizeof all, set->recipes[i].name);
    for (size_t i = 0; i < set->n; i++)
        if (set->recipes[i].infer)
            for (size_t m = 0; m < set->recipes[i].nmodels; m++)
                config_join(sizes, sizeof sizes, set->recipes[i].models[m].size);
    if (rname) {
        if (!(*rp = np_recipe_find(set, rname))) { /* both namespaces named, nearest first (model/recipe_names.c) */
            struct np_mbperf_set mb;
            struct np_error ignored;
            char hint[3072];
            int have_mb = np_mbperf_load(NULL, &mb, &ignored) == NP_OK;
            np_recipe_names_hint(set, have_mb ? &mb : NULL, NULL, rname, hint, sizeof hint);
            if (have_mb)
                np_mbperf_free(&mb);
            return config_bad(x, "RECIPE=%s: unknown recipe; %s", rname, hint);
        }
        int automodel = 0; /* AutoModel benchmarks: MODEL names them, the dtype is the rows' (BF16) */
        for (size_t m = 0; m < (*rp)->nmodels; m++)
            automodel |= (*rp)->models[m].automodel != NULL;
        if (!size && automodel) {
            if (config_get(x, "MODEL"))
                return NP_OK;
            char own[1024] = "";
            for (size_t m = 0; m < (*rp)->nmodels; m++)
                config_join(own, sizeof own, (*rp)->models[m].size);
            return config_bad(x, "MODEL is not set; allowed (RECIPE=%s): %s", rname, own);
        }
        for (size_t m = 0; !size && m < (*rp)->nmodels; m++)
            if ((*rp)->models[m].mbridge) /* DFM: the recipe's default model (Wan 2.1 14B) */
                return NP_OK;
        if (!size) {
            char own[400] = "";
            for (size_t m = 0; m < (*rp)->nmodels; m++)
                config_join(own, sizeof own, (*rp)->models[m].size);
            return config_bad(x, "MODEL_SIZE is not set%s (DTYPE and MODEL_SIZE are required, as in the original "
                              "recipes); allowed: MODEL_SIZE %s (RECIPE=%s), DTYPE bf16, fp8",
                              config_get(x, "DTYPE") ? "" : " and DTYPE is not set", own, rname);
        }
        return NP_OK;
    }
    if (!size) /* the seeds: "DTYPE, MODEL_SIZE are required environment variables" */
        return config_bad(x,
                          "MODEL_SIZE is not set%s (DTYPE and MODEL_SIZE are required, as in the original recipes); "
                          "allowed: MODEL_SIZE %s (RECIPE %s), DTYPE bf16, fp8",
                          config_get(x, "DTYPE") ? "" : " and DTYPE is not set", sizes, all);
    int n = 0;
    for (size_t i = 0; i < set->n; i++)
        if (set->recipes[i].infer && np_model_find(&set->recipes[i], size)) {
            *rp = &set->recipes[i];
            config_join(hits, sizeof hits, set->recipes[i].name);
            n++;
        }
    if (n == 0)
        return config_bad(x,
                          "MODEL_SIZE=%s: unknown model size; allowed: %s (or set RECIPE to one of: %s for its "
                          "other models)",
                          size, sizes, all);
    if (n > 1)
        return config_bad(x, "MODEL_SIZE=%s: several recipes have this size (%s); set RECIPE to one of them", size,
                          hits);
    return NP_OK;
}

/* ---- the resolver ---- */

/* Settings shared by every job of the plan. */
struct config_common {
    const struct np_recipe *recipe;
    const struct np_model *model;
    enum np_dtype dtype;
    enum np_workload workload;
    enum np_task task;
    char gpu_type[32];
    int gpus_per_node;
    int max_steps, max_steps_explicit;
    char time_limit[32];
    int profile, profile_start, profile_stop, nccltrace, checkpoint, force_checkpoint, hf_token;
    int no_perfrun;             /* DISABLE_PERFRUN: a profile/trace request without its performance run */
    int preview, retries, gpn_explicit, profile_ranks;
    char srun_mpi[32];
    enum np_numa_bind numa_bind;
    int snapshot, gpu_metrics, gpu_metrics_ms; /* SNAPSHOT, ENABLE_GPU_METRICS, NEMOPERF_GPU_METRICS_MS */
    char *missing[8];           /* preview: what ./setup has not staged (owned) */
    size_t nmissing;
    const char *stage_path_raw, *load_raw, *image_raw, *account, *partition, *gres;
    char stage_path[PATH_MAX];
    char load_checkpoint[PATH_MAX];
    char image[PATH_MAX + 64];
    char tokenizer_dir[PATH_MAX + 256];
    struct np_mbperf_set *mbset;  /* Megatron-Bridge rows (owned until the plan takes them), or NULL */
    struct np_mb_choice mb;       /* the row of each scale */
    struct np_ncclt_choice ncclt; /* RECIPE=nccl-tests: the check */
};

/* What is wrong with the staged image file: NULL nothing, "" it does not exist, else what it is, with what
 * to do before and after the setup command in fix[0], fix[1] (an empty file was left by an import that did
 * not finish: ./setup removes it and imports again; it refuses anything else in its place). */
static const char *config_image_wrong(const char *path, const char *fix[2])
{
    struct stat st;
    fix[0] = "run ";
    fix[1] = " to import it again";
    if (stat(path, &st) != 0) {
        fix[0] = "check the permissions of its folder, then run ";
        fix[1] = "";
        return errno == ENOENT || errno == ENOTDIR ? "" : "cannot be read";
    }
    if (!S_ISREG(st.st_mode)) {
        fix[0] = "move it away, then run ";
        fix[1] = "";
        return "is not a regular file";
    }
    return st.st_size == 0 ? "is empty (0 bytes, left by an import that did not finish)" : NULL;
}

/* ", or use WORKLOAD=synthetic" where that would run (it emulates pre-training only; the fabric check has no
 * stand-in), else "". */
static const char *config_synth_alt(const struct config_common *c)
{
    return c->task == NP_TASK_PRETRAIN && !c->ncclt.collectives ? ", or use WORKLOAD=synthetic" : "";
}

/* Preview: note something ./setup has not staged yet (printed, and listed by --print-config). */
static enum np_status config_missing(struct config_ctx *x, struct config_common *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum np_status config_missing(struct config_ctx *x, struct config_common *c, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (c->nmissing == sizeof c->missing / sizeof c->missing[0])
        return NP_OK;
    if (!(c->missing[c->nmissing] = strdup(text)))
        return np_error_set(x->err, NP_E_NOMEM, "", 0, 0, "out of memory");
    c->nmissing++;
    np_warnf("not staged yet: %s", text);
    return NP_OK;
}

static enum np_status config_stage_path(struct config_ctx *x, struct config_common *c)
{
    const char *sp = config_get(x, "STAGE_PATH");
    if (!sp)
        return config_bad(x, "STAGE_PATH is not set: set it to the absolute path of an existing folder on storage "
                             "all nodes share (the one %s staged)", x->setup_cmd);
    if (sp[0] != '/')
        return config_bad(x, "STAGE_PATH=%s: not an absolute path; allowed: an absolute path of an existing folder",
                          sp);
    if (strpbrk(sp, "\n\r\\"))
        return config_bad(x,
                          "STAGE_PATH=%s: contains a newline, carriage return or backslash, which Slurm cannot use "
                          "in log file names; allowed: a path without them",
                          sp);
    /* sbatch undoes the %% of --output, srun does not do it the same way: a '%' in the
     * folder name loses the training log (issue 13), so it is refused */
    if (strchr(sp, '%'))
        return config_bad(x,
                          "STAGE_PATH=%s: contains '%%', which Slurm reads as a file name pattern (%%j, %%x, %%u...) "
                          "in the log paths of sbatch and srun; allowed: a path without '%%'",
                          sp);
    if (np_stage_check_value("STAGE_PATH", sp, x->err) != NP_OK) /* as ./setup: before anything is looked at */
        return NP_E_INVALID;
    size_t n = strlen(sp);
    while (n > 1 && sp[n - 1] == '/')
        n--;
    if (n >= sizeof c->stage_path - 512)
        return config_bad(x, "STAGE_PATH=%s: path too long", sp);
    memcpy(c->stage_path, sp, n);
    c->stage_path[n] = '\0';
    struct stat st;
    if (c->preview && stat(c->stage_path, &st) != 0 && errno == ENOENT)
        return config_missing(x, c, "STAGE_PATH=%s: no such folder (run %s)", sp, x->setup_cmd);
    if (stat(c->stage_path, &st) != 0) {
        int e = errno;
        if (e == ENOENT)
            return config_bad(x, "STAGE_PATH=%s: no such folder; allowed: an existing folder (create it, or run %s)",
                              sp, x->setup_cmd);
        return config_bad(x, "STAGE_PATH=%s: cannot use it: %s%s; allowed: an existing folder", sp, strerror(e),
                          e == ELOOP ? " (a symbolic link pointing back at itself)"
                          : e == ENOTDIR ? " (a part of the path is a file, not a folder)" : "");
    }
    if (!S_ISDIR(st.st_mode))
        return config_bad(x, "STAGE_PATH=%s: is a %s, not a folder; allowed: an existing folder", sp,
                          S_ISREG(st.st_mode) ? "file" : S_ISFIFO(st.st_mode) ? "FIFO" : "special file");
    if (access(c->stage_path, W_OK | X_OK) != 0)
        return config_bad(x, "STAGE_PATH=%s: folder is not writable (%s); allowed: a folder you can write to", sp,
                          strerror(errno));
    if (c->workload == NP_WORKLOAD_NEMO && strpbrk(c->stage_path, ",:"))
        return config_bad(x,
                          "STAGE_PATH=%s: contains ',' or ':', which pyxis --container-mounts cannot express; "
                          "allowed: a path without them (or WORKLOAD=synthetic)",
                          sp);
    return NP_OK;
}

/* TASK: pretrain (default) or seed 000's fine-tuning, sft / lora. */
static enum np_status config_task(struct config_ctx *x, struct config_common *c)
{
    const char *t = config_get(x, "TASK");
    if (t && np_task_parse(t, &c->task) != 0)
        return config_bad(x, "TASK=%s: unknown task; allowed: pretrain, sft, lora", t);
    if (c->task != NP_TASK_PRETRAIN && c->workload == NP_WORKLOAD_SYNTHETIC)
        return config_bad(x, "TASK=%s with WORKLOAD=synthetic: the synthetic workload emulates pre-training only; "
                             "allowed: TASK=pretrain, or WORKLOAD=nemo",
                          t);
    return NP_OK;
}

/* ", <recipe> <size>" for every model with rows of task t (for messages). */
static const char *config_task_models(const struct np_recipe_set *set, enum np_task t)
{
    static char buf[300];
    buf[0] = '\0';
    for (size_t r = 0; r < set->n; r++)
        for (size_t m = 0; m < set->recipes[r].nmodels; m++) {
            const struct np_model *mp = &set->recipes[r].models[m];
            int has = 0;
            for (size_t i = 0; i < mp->nft_rows; i++)
                has |= mp->ft_rows[i].task == t;
            if (has) {
                size_t n = strlen(buf);
                snprintf(buf + n, sizeof buf - n, "; or RECIPE=%s MODEL_SIZE=%s", set->recipes[r].name, mp->size);
            }
        }
    return buf;
}

static enum np_status config_model(struct config_ctx *x, const struct np_recipe_set *set, struct config_common *c)
{
    enum np_status st = config_pick_recipe(x, set, &c->recipe);
    if (st != NP_OK)
        return st;
    const struct np_recipe *r = c->recipe;
    const char *var = "MODEL_SIZE", *size = config_get(x, "MODEL_SIZE");
    int automodel = 0;
    for (size_t m = 0; m < r->nmodels; m++)
        automodel |= r->models[m].automodel != NULL;
    if (!size && automodel && (size = config_get(x, "MODEL")) != NULL)
        var = "MODEL"; /* AutoModel rows are named by their benchmark YAML (RECIPE=automodel MODEL=...) */
    if (!size)
        size = r->default_size;
    if (!(c->model = np_model_find(r, size))) {
        char sizes[1024] = "";
        for (size_t m = 0; m < r->nmodels; m++)
            config_join(sizes, sizeof sizes, r->models[m].size);
        return config_bad(x, "%s=%s: recipe %s has no such model; allowed: %s", var, size, r->name, sizes);
    }
    const struct np_model *m = c->model;
    const char *dt = config_get(x, "DTYPE");
    if (!dt && (m->automodel || m->mbridge)) { /* seed 001, DFM: published in BF16 only: the rows' one dtype */
        unsigned all = 0;
        for (size_t i = 0; i < m->nrows; i++)
            all |= m->rows[i].dtypes;
        dt = all == NP_DTYPE_FP8 ? "fp8" : "bf16";
    }
    if (!dt)
        return config_bad(x, "DTYPE is not set (DTYPE and MODEL_SIZE are required, as in the original recipes); "
                             "allowed: bf16, fp8");
    c->dtype = np_dtype_parse(dt);
    if (c->dtype == NP_DTYPE_NONE)
        return config_bad(x, "DTYPE=%s: unknown data type; allowed: bf16, fp8", dt);

    const char *gt = config_get(x, "GPU_TYPE");
    if (!gt)
        gt = NP_LAUNCH_DEFAULT_GPU_TYPE;
    char types[200] = "", dtypes[40] = "";
    int gpu_ok = 0;
    size_t nr;
    const struct np_config_row *rows = np_model_rows(m, c->task, &nr);
    for (size_t i = 0; i < nr; i++) {
        if (rows[i].task != c->task)
            continue;
        config_join(types, sizeof types, rows[i].gpu_type);
        if (strcasecmp(rows[i].gpu_type, gt) == 0) {
            gpu_ok = 1;
            if (rows[i].dtypes & NP_DTYPE_BF16)
                config_join(dtypes, sizeof dtypes, "bf16");
            if (rows[i].dtypes & NP_DTYPE_FP8)
                config_join(dtypes, sizeof dtypes, "fp8");
        }
    }
    if (!types[0]) /* TASK=sft|lora on a model without such rows */
        return config_bad(x, "TASK=%s: %s %s has no published %s rows; allowed: pretrain%s", np_task_name(c->task),
                          r->name, m->size, np_task_name(c->task), config_task_models(set, c->task));
    if (!gpu_ok || strlen(gt) >= sizeof c->gpu_type)
        return config_bad(x, "GPU_TYPE=%s: %s %s%s%s is not published for this GPU type; allowed: %s", gt, r->name,
                          m->size, c->task ? " " : "", c->task ? np_task_name(c->task) : "", types);
    for (size_t i = 0; gt[i]; i++)
        c->gpu_type[i] = (char)tolower((unsigned char)gt[i]);
    if (!strstr(dtypes, np_dtype_name(c->dtype, 0)))
        return config_bad(x, "DTYPE=%s: %s %s on %s is published for %s only; allowed: %s",
                          dt ? dt : np_dtype_name(c->dtype, 0), r->name, m->size, c->gpu_type, dtypes, dtypes);
    /* unset: per row, NVIDIA's GPUs per node of the system (GB200 4) */
    return config_intvar(x, "GPUS_PER_NODE", 1, 1024, 0, &c->gpus_per_node, &c->gpn_explicit);
}

/* GPUs per node of a job at a scale: GPUS_PER_NODE, else the row's. */
static int config_gpn(const struct config_common *c, const struct np_config_row *row)
{
    return c->gpn_explicit ? c->gpus_per_node : row ? row->gpus_per_node : NP_LAUNCH_DEFAULT_GPUS_PER_NODE;
}

/* Published scales of (model, gpu type, dtype), as "8, 16, 32". */
static void config_scales(const struct config_common *c, char *buf, size_t size)
{
    buf[0] = '\0';
    const struct np_model *m = c->model;
    /* rows are not sorted; emit ascending */
    int last = 0;
    size_t nr;
    const struct np_config_row *rows = np_model_rows(m, c->task, &nr);
    for (;;) {
        int next = INT_MAX;
        for (size_t i = 0; i < nr; i++)
            if (rows[i].task == c->task && (rows[i].dtypes & c->dtype) && strcmp(rows[i].gpu_type, c->gpu_type) == 0 &&
                rows[i].gpus > last && rows[i].gpus < next)
                next = rows[i].gpus;
        if (next == INT_MAX)
            break;
        char n[16];
        snprintf(n, sizeof n, "%d", next);
        config_join(buf, size, n);
        last = next;
    }
}

/* Megatron-Bridge rows: the GPU count published for the system and dtype, 0 when none. */
static int config_mbridge_gpus(const struct config_common *c)
{
    for (size_t i = 0; c->model->mbridge && i < c->model->nrows; i++)
        if (strcasecmp(c->model->rows[i].gpu_type, c->gpu_type) == 0 && (c->model->rows[i].dtypes & c->dtype))
            return c->model->rows[i].gpus;
    return 0;
}

static enum np_status config_gpu_list(struct config_ctx *x, const struct config_common *c, int *gpus, size_t *ngpus)
{
    char scales[300], deflt[40];
    config_scales(c, scales, sizeof scales);
    const char *v = config_get(x, "JOB_TOTAL_GPUS");
    *ngpus = 0;
    if (!v) {
        const struct np_recipe *r = c->recipe;
        if (c->task != NP_TASK_PRETRAIN && !strchr(scales, ',') && scales[0]) {
            gpus[(*ngpus)++] = atoi(scales); /* one published fine-tuning scale per system */
        } else if (config_mbridge_gpus(c) > 0) { /* Megatron-Bridge: the published scale of the system */
            gpus[(*ngpus)++] = config_mbridge_gpus(c);
        } else if (c->task == NP_TASK_PRETRAIN && strcasecmp(r->default_size, c->model->size) == 0 &&
                   r->default_dtype == c->dtype && np_row_find(c->model, c->gpu_type, c->dtype, r->default_gpus)) {
            gpus[(*ngpus)++] = r->default_gpus;
        } else if (!scales[0]) {
            return config_bad(x, "JOB_TOTAL_GPUS is not set and %s %s %s on %s is published at no scale", r->name,
                              c->model->size, np_dtype_name(c->dtype, 0), c->gpu_type);
        } else { /* the seeds make DTYPE and MODEL_SIZE the only required variables: the smallest published scale */
            gpus[(*ngpus)++] = atoi(scales);
            np_notef("JOB_TOTAL_GPUS not set: using %d, the smallest published scale of %s %s %s on %s (published: "
                     "%s)",
                     gpus[0], r->name, c->model->size, np_dtype_name(c->dtype, 0), c->gpu_type, scales);
        }
        snprintf(deflt, sizeof deflt, "%d (its default)", gpus[0]);
        v = deflt; /* the checks below, as for a value given */
    }
    const char *p = *ngpus ? "" : v;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *start = p;
        long n;
        if (!np_parse_digits(&p, &n) || n < 1 || n > 1000000) {
            return config_bad(x,
                              "JOB_TOTAL_GPUS=%s: not a positive integer or a comma list of them; allowed: %s "
                              "(e.g. 8 or 8,16,32)",
                              v, scales);
        }
        while (*p == ' ')
            p++;
        if (*p && *p != ',')
            return config_bad(x, "JOB_TOTAL_GPUS=%s: not a positive integer or a comma list of them; allowed: %s", v,
                              scales);
        if (*p == ',') {
            p++;
            if (!*p)
                return config_bad(x, "JOB_TOTAL_GPUS=%s: trailing comma; allowed: %s", v, scales);
        }
        for (size_t i = 0; i < *ngpus; i++)
            if (gpus[i] == n)
                return config_bad(x, "JOB_TOTAL_GPUS=%s: %ld is listed twice; allowed: each scale once", v, n);
        if (*ngpus == CONFIG_MAX_SWEEP)
            return config_bad(x, "JOB_TOTAL_GPUS=%s: more than %d scales", v, CONFIG_MAX_SWEEP);
        (void)start;
        gpus[(*ngpus)++] = (int)n;
    }
    if (*ngpus == 0)
        return config_bad(x, "JOB_TOTAL_GPUS=%s: no GPU count; allowed: %s", v, scales);
    for (size_t i = 0; i < *ngpus; i++) {
        const struct np_config_row *row = np_row_find_task(c->model, c->task, c->gpu_type, c->dtype, gpus[i]);
        /* AutoModel publishes 1-GPU LoRA rows: part of one node */
        if (gpus[i] % config_gpn(c, row) != 0 && !(c->model->automodel && gpus[i] < config_gpn(c, row))) {
            if (c->gpn_explicit && row) /* the scale is published: the culprit is GPUS_PER_NODE */
                return config_bad(x, "GPUS_PER_NODE=%d: JOB_TOTAL_GPUS=%d is not a multiple of it; allowed: a divisor "
                                     "of %d, e.g. the published row's %d (or unset)",
                                  c->gpus_per_node, gpus[i], gpus[i], row->gpus_per_node);
            return config_bad(x, "JOB_TOTAL_GPUS=%s: %d GPUs is not a multiple of GPUS_PER_NODE=%d; allowed: %s", v,
                              gpus[i], config_gpn(c, row), scales);
        }
        if (!row)
            return config_bad(x, "JOB_TOTAL_GPUS=%s: %s %s %s on %s is not published at %d GPUs; allowed: %s", v,
                              c->recipe->name, c->model->size, np_dtype_name(c->dtype, 0), c->gpu_type, gpus[i],
                              scales);
        if (row->inconsistent && !row->ncorrections)
            return config_bad(x,
                              "JOB_TOTAL_GPUS=%s: the published %s %s %s %s row at %d GPUs is inconsistent and "
                              "cannot be launched: %s",
                              v, c->recipe->name, c->model->size, np_dtype_name(c->dtype, 0), c->gpu_type, gpus[i],
                              row->inconsistent);
    }
    return NP_OK;
}

static enum np_status config_steps(struct config_ctx *x, struct config_common *c)
{
    enum np_status st;
    if ((st = config_bool(x, "ENABLE_PROFILE", &c->profile)) || (st = config_bool(x, "ENABLE_NCCLTRACE", &c->nccltrace)) ||
        (st = config_bool(x, "ENABLE_CHECKPOINT", &c->checkpoint)) ||
        (st = config_bool(x, "NEMOPERF_FORCE_CHECKPOINT", &c->force_checkpoint)) ||
        (st = config_bool(x, "DISABLE_PERFRUN", &c->no_perfrun)))
        return st;
    if (c->profile && c->nccltrace)
        return config_bad(x, "ENABLE_PROFILE=%s and ENABLE_NCCLTRACE=%s: profiling and NCCL trace cannot run in the "
                             "same job; allowed: at most one of them true",
                          config_get(x, "ENABLE_PROFILE"), config_get(x, "ENABLE_NCCLTRACE"));
    if (c->model->automodel && (c->profile || c->nccltrace))
        return config_bad(x, "%s=%s: RECIPE=%s MODEL=%s runs AutoModel's benchmark recipe, which nemoperf does not "
                             "profile or trace; allowed: false",
                          c->profile ? "ENABLE_PROFILE" : "ENABLE_NCCLTRACE",
                          config_get(x, c->profile ? "ENABLE_PROFILE" : "ENABLE_NCCLTRACE"), c->recipe->name,
                          c->model->size);
    int start0, stop0; /* NVIDIA's own window for the recipe's scripts generation, or the MB row's release */
    np_nemo_profile_defaults(c->recipe, &start0, &stop0, &c->profile_ranks);
    const struct np_mbperf_profile *mbp = c->mb.n ? np_mbridge_perf_profile(c->mb.rows[0]->release) : NULL;
    if (mbp) {
        start0 = mbp->start;
        stop0 = mbp->stop;
    }
    if ((st = config_intvar(x, "PROFILE_START_STEP", 0, 10000000, start0, &c->profile_start, NULL)) ||
        (st = config_intvar(x, "PROFILE_STOP_STEP", 1, 10000000, stop0, &c->profile_stop, NULL)) ||
        (st = config_intvar(x, "MAX_STEPS", 1, 10000000, NP_LAUNCH_DEFAULT_MAX_STEPS, &c->max_steps,
                            &c->max_steps_explicit)))
        return st;
    if (c->profile && c->profile_start >= c->profile_stop)
        return config_bad(x, "PROFILE_START_STEP=%d: must be less than PROFILE_STOP_STEP=%d; allowed: 0 to %d",
                          c->profile_start, c->profile_stop, c->profile_stop - 1);
    if (c->profile && c->mb.n && c->profile_stop > c->max_steps) /* MB rows keep -ms (NVIDIA's launcher does) */
        return config_bad(x, "PROFILE_STOP_STEP=%d: must be at most MAX_STEPS=%d (Megatron-Bridge rows run MAX_STEPS "
                             "steps when profiled, as NVIDIA's launcher keeps -ms); allowed: 1 to %d",
                          c->profile_stop, c->max_steps, c->max_steps);
    const char *tl = config_get(x, "TIME_LIMIT");
    if (tl && (!np_time_limit_valid(tl) || strlen(tl) >= sizeof c->time_limit))
        return config_bad(x,
                          "TIME_LIMIT=%s: not a Slurm time limit; allowed: MM:SS, HH:MM:SS, D-HH:MM:SS (also M, "
                          "D-HH, D-HH:MM), not zero, at most %d minutes (1491308-02:06:00)",
                          tl, NP_TIME_LIMIT_MAX_MINUTES);
    snprintf(c->time_limit, sizeof c->time_limit, "%s",
             tl ? tl : c->nccltrace ? NP_LAUNCH_NCCLTRACE_TIME_LIMIT : NP_LAUNCH_DEFAULT_TIME_LIMIT);
    return NP_OK;
}

static enum np_status config_load_path(struct config_ctx *x, struct config_common *c)
{
    const char *lp = config_get(x, "LOAD_CHECKPOINT_PATH");
    c->load_raw = lp;
    if (!lp)
        return NP_OK;
    if (c->model->automodel)
        return config_bad(x, "LOAD_CHECKPOINT_PATH=%s: AutoModel's benchmark recipe runs without checkpoints "
                             "(checkpoint.enabled: false); allowed: unset",
                          lp);
    if (c->model->mbridge)
        return config_bad(x, "LOAD_CHECKPOINT_PATH=%s: RECIPE=%s pre-trains from scratch on mock data; allowed: unset",
                          lp, c->recipe->name);
    char real[PATH_MAX], stage[PATH_MAX];
    struct stat st;
    if (!realpath(lp, real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
        return config_bad(x, "LOAD_CHECKPOINT_PATH=%s: no such folder; allowed: an existing checkpoint folder under "
                             "STAGE_PATH=%s",
                          lp, c->stage_path);
    if (!realpath(c->stage_path, stage))
        return config_bad(x, "STAGE_PATH=%s: cannot resolve (%s)", c->stage_path, strerror(errno));
    size_t n = strlen(stage);
    if (!(strcmp(stage, "/") == 0 || (strncmp(real, stage, n) == 0 && real[n] == '/')))
        return config_bad(x,
                          "LOAD_CHECKPOINT_PATH=%s: not under STAGE_PATH=%s (resolved: %s); allowed: a checkpoint "
                          "folder inside STAGE_PATH, which the job mounts",
                          lp, c->stage_path, real);
    if (strpbrk(real, "\n\r"))
        return config_bad(x, "LOAD_CHECKPOINT_PATH=%s: contains a newline", lp);
    if (!config_has_distcp(real))
        return config_bad(x,
                          "LOAD_CHECKPOINT_PATH=%s: no weights/*.distcp files in it; allowed: a saved checkpoint "
                          "folder (.../checkpoints/default--None=0.0000-epoch=0-consumed_samples=N.0)",
                          lp);
    snprintf(c->load_checkpoint, sizeof c->load_checkpoint, "%s", real);
    return NP_OK;
}

static enum np_status config_checkpoint(struct config_ctx *x, struct config_common *c, const int *gpus, size_t ngpus,
                                        const struct np_launch_opts *opts)
{
    if (!c->checkpoint)
        return NP_OK;
    const struct np_checkpoint_info *ck = &c->model->checkpoint;
    if (!ck->known)
        return config_bad(x,
                          "ENABLE_CHECKPOINT=%s: the seeds publish no checkpoint support for %s %s; allowed: "
                          "false, or a model with checkpoint data",
                          config_get(x, "ENABLE_CHECKPOINT"), c->recipe->name, c->model->size);
    double need = 0;
    for (size_t i = 0; i < ngpus; i++) {
        if (gpus[i] < ck->save_min_gpus || gpus[i] > ck->save_max_gpus)
            return config_bad(x,
                              "ENABLE_CHECKPOINT=%s: %s %s checkpoints are supported at %d to %d GPUs, not at "
                              "JOB_TOTAL_GPUS=%d; allowed: a scale in that range, or ENABLE_CHECKPOINT=false",
                              config_get(x, "ENABLE_CHECKPOINT"), c->recipe->name, c->model->size,
                              ck->save_min_gpus, ck->save_max_gpus, gpus[i]);
        need += c->workload == NP_WORKLOAD_SYNTHETIC ? NP_SYNTH_CHECKPOINT_BYTES(gpus[i]) : ck->size_bytes;
    }
    if (c->force_checkpoint || (c->preview && access(c->stage_path, F_OK) != 0))
        return NP_OK;
    double avail = 0;
    int (*fs)(const char *, double *) = opts && opts->free_space ? opts->free_space : np_stage_free_space;
    if (fs(c->stage_path, &avail) != 0)
        return config_bad(x, "STAGE_PATH=%s: cannot read free space (%s)", c->stage_path, strerror(errno));
    if (avail < need) {
        char a[64], b[64];
        config_human(avail, a, sizeof a);
        config_human(need, b, sizeof b);
        enum np_status st = config_bad(x,
                                       "ENABLE_CHECKPOINT=%s: STAGE_PATH=%s has %s free, but %s %s checkpoint%s need%s "
                                       "%s%s; free space, or set NEMOPERF_FORCE_CHECKPOINT=true to launch anyway",
                                       config_get(x, "ENABLE_CHECKPOINT"), c->stage_path, a, c->recipe->name,
                                       c->model->size, ngpus > 1 ? "s" : "", ngpus > 1 ? "" : "s", b,
                                       c->workload == NP_WORKLOAD_SYNTHETIC ? " (synthetic)" : "");
        if (!c->preview) /* --dry-run/--print-config write nothing: the real launch refuses, said here */
            return st;
        np_warnf("%s (the real launch refuses this)", x->err->text);
    }
    return NP_OK;
}

static enum np_status config_nemo(struct config_ctx *x, struct config_common *c)
{
    c->hf_token = config_get(x, "HF_TOKEN") != NULL;
    if (c->workload != NP_WORKLOAD_NEMO)
        return NP_OK;
    const char *img = config_get(x, "RUN_CONF_IMAGE");
    struct stat st;
    if (img) {
        if (np_stage_check_value("RUN_CONF_IMAGE", img, x->err) != NP_OK) /* as ./setup */
            return NP_E_INVALID;
        if (img[0] == '/' && (stat(img, &st) != 0 || !S_ISREG(st.st_mode)))
            return config_bad(x, "RUN_CONF_IMAGE=%s: no such file; allowed: an existing .sqsh file or an image "
                                 "reference such as %s",
                              img, c->recipe->image);
        if (img[0] == '.')
            return config_bad(x, "RUN_CONF_IMAGE=%s: relative path; allowed: an absolute .sqsh path or an image "
                                 "reference such as %s",
                              img, c->recipe->image);
        snprintf(c->image, sizeof c->image, "%s", img);
    } else {
        /* the name ./setup imports to (enroot's naming of the recipe's image) */
        char *sqsh = np_stage_sqsh_path(c->stage_path, c->recipe->image);
        if (!sqsh)
            return np_error_set(x->err, NP_E_NOMEM, "config", 0, 0, "out of memory");
        snprintf(c->image, sizeof c->image, "%s", sqsh);
        free(sqsh);
        const char *fix[2], *wrong = config_image_wrong(c->image, fix);
        if (wrong && c->preview) {
            enum np_status ms = config_missing(x, c, "container image %s%s%s (run %s, or set RUN_CONF_IMAGE)",
                                               c->image, *wrong ? " " : "", wrong, x->setup_cmd);
            if (ms != NP_OK)
                return ms;
        } else if (wrong && !*wrong) {
            return config_bad(x,
                              "RUN_CONF_IMAGE is not set and the staged container image %s does not exist: run "
                              "%s first (or set RUN_CONF_IMAGE%s)",
                              c->image, x->setup_cmd, config_synth_alt(c));
        } else if (wrong) {
            return config_bad(x, "RUN_CONF_IMAGE is not set and the staged container image %s %s: %s%s%s (or set "
                                 "RUN_CONF_IMAGE%s)",
                              c->image, wrong, fix[0], x->setup_cmd, fix[1], config_synth_alt(c));
        }
    }
    /* the tokenizer: files ./setup staged, read offline on the compute nodes */
    if (c->model->tokenizer.hf) {
        char *dir = np_stage_hf_dir(c->stage_path, c->model->tokenizer.hf);
        if (!dir)
            return np_error_set(x->err, NP_E_NOMEM, "config", 0, 0, "out of memory");
        snprintf(c->tokenizer_dir, sizeof c->tokenizer_dir, "%s", dir);
        free(dir);
        char cfg[sizeof c->tokenizer_dir + 16];
        snprintf(cfg, sizeof cfg, "%s/config.json", c->tokenizer_dir);
        if (access(cfg, R_OK) != 0) {
            if (c->preview)
                return config_missing(x, c, "tokenizer files of %s in %s (run %s with HF_TOKEN)",
                                      c->model->tokenizer.hf, c->tokenizer_dir, x->setup_cmd);
            return config_bad(x,
                              "the tokenizer of %s %s (%s) is not staged in %s: run %s with HF_TOKEN set (the "
                              "job reads it offline)%s",
                              c->recipe->name, c->model->size, c->model->tokenizer.hf, c->tokenizer_dir,
                              x->setup_cmd, config_synth_alt(c));
        }
    }
    /* AutoModel: the model folder ./setup staged, read offline (config.json, or the weights' index) */
    if (c->model->automodel) {
        const struct np_automodel_spec *a = c->model->automodel;
        const char *need = a->from_pretrained ? "model.safetensors.index.json" : "config.json";
        char *dir = np_stage_hf_dir(c->stage_path, c->model->hf_repo);
        char *file = NULL;
        if (!dir || asprintf(&file, "%s/%s", dir, need) < 0) {
            free(dir);
            return np_error_set(x->err, NP_E_NOMEM, "config", 0, 0, "out of memory");
        }
        enum np_status ms = NP_OK;
        if (access(file, R_OK) != 0) {
            if (c->preview)
                ms = config_missing(x, c, "%s of %s in %s (run RECIPE=%s MODEL=%s %s%s)",
                                    a->from_pretrained ? "the weights" : "config.json", c->model->hf_repo, dir,
                                    c->recipe->name, c->model->size, x->setup_cmd, a->gated ? " with HF_TOKEN" : "");
            else
                ms = config_bad(x,
                                "%s %s reads %s of %s from %s, which is not staged: run RECIPE=%s MODEL=%s %s%s (the "
                                "job reads it offline), or use WORKLOAD=synthetic",
                                c->recipe->name, c->model->size, a->from_pretrained ? "the weights" : "config.json",
                                c->model->hf_repo, dir, c->recipe->name, c->model->size, x->setup_cmd,
                                a->gated ? " with HF_TOKEN set" : "");
        }
        free(file);
        free(dir);
        if (ms != NP_OK)
            return ms;
    }
    return NP_OK;
}

/* HF_HOME of a Megatron-Bridge row ($STAGE_PATH/mbridge/hf) and the Hub files the row reads from it offline
 * (HF_HUB_OFFLINE=1; model/mbhf.h): as the NeMo tokenizer check in config_nemo, a launch refuses when one is not
 * staged, naming it and the ./setup that stages it, and a preview (--dry-run, --print-config) notes it;
 * WORKLOAD=synthetic reads none. */
static enum np_status config_mbridge_hf(struct config_ctx *x, struct config_common *c)
{
    char *home = np_stage_mbridge_hf_home(c->stage_path);
    if (!home)
        return np_error_set(x->err, NP_E_NOMEM, "config", 0, 0, "out of memory");
    snprintf(c->tokenizer_dir, sizeof c->tokenizer_dir, "%s", home);
    free(home);
    const struct np_mbperf_row *r = c->mb.rows[0];
    if (c->workload != NP_WORKLOAD_NEMO || !r)
        return NP_OK;
    char what[600], cmd[256];
    int staged = np_mbhf_staged(c->stage_path, r->container, r->recipe, r->task, what, sizeof what);
    if (staged == 1)
        return NP_OK;
    snprintf(cmd, sizeof cmd, "RECIPE=%s CONTAINER=%s%s%s %s", r->recipe, r->container,
             strcmp(r->task, "pretrain") ? " TASK=" : "", strcmp(r->task, "pretrain") ? r->task : "", x->setup_cmd);
    if (c->preview)
        return config_missing(x, c, "Hugging Face file %s in %s (run %s)", what, c->tokenizer_dir, cmd);
    if (staged == 0)
        return config_bad(x, "%s %s reads %s from %s offline (HF_HUB_OFFLINE=1), which is not staged: run %s%s",
                          r->recipe, r->container, what, c->tokenizer_dir, cmd, config_synth_alt(c));
    return config_bad(x, "%s %s: cannot check the Hugging Face files it reads offline (%s): run %s%s", r->recipe,
                      r->container, what, cmd, config_synth_alt(c));
}

static enum np_status config_mbridge_missing(void *ctx, const char *what)
{
    struct config_ctx *x = ((void **)ctx)[0];
    struct config_common *c = ((void **)ctx)[1];
    const char *ct = c->mbset ? " CONTAINER=" : "", *cv = c->mbset ? c->model->size : ""; /* MB rows: size = container */
    const struct np_mbperf_row *r = c->mbset && c->mb.n ? c->mb.rows[0] : NULL; /* its TASK, unless pretrain (setup's default) */
    const char *tk = r && r->task && strcmp(r->task, "pretrain") ? " TASK=" : "", *tv = *tk ? r->task : "";
    if (c->preview)
        return config_missing(x, c, "%s (run RECIPE=%s%s%s%s%s %s)", what, c->recipe->name, ct, cv, tk, tv,
                              x->setup_cmd);
    return config_bad(x, "%s %s runs from %s, which is not staged: run RECIPE=%s%s%s%s%s %s (the job reads it "
                         "offline), or use WORKLOAD=synthetic",
                      c->recipe->name, c->model->size, what, c->recipe->name, ct, cv, tk, tv, x->setup_cmd);
}

/* Megatron-Bridge jobs (job/mbridge.h): the rows nemoperf can run, and the checkouts ./setup staged. */
static enum np_status config_mbridge(struct config_ctx *x, struct config_common *c, const int *gpus, size_t ngpus)
{
    if (!c->model->mbridge)
        return NP_OK;
    struct np_launch_config probe;
    memset(&probe, 0, sizeof probe);
    probe.recipe = c->recipe;
    probe.model = c->model;
    probe.workload = c->workload;
    probe.stage_path = c->stage_path;
    void *ctx[2] = {x, c};
    enum np_status st = NP_OK;
    /* each row's kind (job/mbridge.c) names what it reads: the checkouts, pip folder, staged model */
    for (size_t i = 0; st == NP_OK && i < (ngpus ? ngpus : 1); i++) {
        probe.row = ngpus ? np_row_find(c->model, c->gpu_type, c->dtype, gpus[i]) : NULL;
        probe.mb = i < c->mb.n ? c->mb.rows[i] : NULL; /* a Megatron-Bridge row: what its task reads */
        st = np_mbridge_check_staged(&probe, config_mbridge_missing, ctx);
    }
    return st == NP_E_NOMEM ? np_error_set(x->err, NP_E_NOMEM, "", 0, 0, "out of memory") : st;
}

/* Fine-tuning: the checkpoint and the packed SQuAD files `TASK=sft|lora ./setup` prepares
 * (ftjob.h), read offline by the job; missing ones are refused (listed when previewing). */
static enum np_status config_ft_staged(struct config_ctx *x, struct config_common *c, const int *gpus, size_t ngpus)
{
    if (c->task == NP_TASK_PRETRAIN || c->workload != NP_WORKLOAD_NEMO || c->mbset) /* MB: its own data path */
        return NP_OK;
    if (c->load_raw) /* the recipe restores the imported checkpoint (nemo://<org>/<name>) */
        return config_bad(x, "LOAD_CHECKPOINT_PATH=%s with TASK=%s: a fine-tuning job starts from the checkpoint "
                             "TASK=%s ./setup imported; allowed: LOAD_CHECKPOINT_PATH unset",
                          c->load_raw, np_task_name(c->task), np_task_name(c->task));
    const char *repo = c->model->hf_repo;
    enum np_status st = NP_OK;
    char *dir = np_ft_model_dir(c->stage_path, repo), *ctx = NULL;
    if (dir && (ctx = malloc(strlen(dir) + 16)))
        sprintf(ctx, "%s/context", dir);
    if (!dir || !ctx)
        st = np_error_set(x->err, NP_E_NOMEM, "config", 0, 0, "out of memory");
    else if (access(ctx, F_OK) != 0)
        st = c->preview ? config_missing(x, c, "the NeMo checkpoint of %s in %s (run TASK=%s %s with HF_TOKEN)",
                                         repo, dir, np_task_name(c->task), x->setup_cmd)
                        : config_bad(x, "TASK=%s: the NeMo checkpoint of %s is not imported in %s: run TASK=%s %s "
                                        "with HF_TOKEN set first",
                                     np_task_name(c->task), repo, dir, np_task_name(c->task), x->setup_cmd);
    free(dir);
    free(ctx);
    for (size_t i = 0; st == NP_OK && i < ngpus; i++) {
        const struct np_config_row *row = np_row_find_task(c->model, c->task, c->gpu_type, c->dtype, gpus[i]);
        int pack = np_row_value(row, "seq_len", row->seq_len, NULL);
        char *npy = np_ft_packed_path(c->stage_path, repo, "training", pack);
        char *meta = np_ft_pack_metadata_path(c->stage_path, repo, pack);
        if (!npy || !meta)
            st = np_error_set(x->err, NP_E_NOMEM, "config", 0, 0, "out of memory");
        else if (access(npy, R_OK) != 0 || access(meta, R_OK) != 0)
            st = c->preview ? config_missing(x, c, "SQuAD packed to %d tokens: %s (run TASK=%s %s)", pack, npy,
                                             np_task_name(c->task), x->setup_cmd)
                            : config_bad(x, "TASK=%s: SQuAD packed to %d tokens is not prepared (%s): run TASK=%s %s "
                                            "first",
                                         np_task_name(c->task), pack, npy, np_task_name(c->task), x->setup_cmd);
        free(npy);
        free(meta);
    }
    return st;
}

/* srun --mpi of the NeMo step and the requeue budget. */
static enum np_status config_job_policy(struct config_ctx *x, struct config_common *c)
{
    enum np_status st = config_intvar(x, "NEMOPERF_MAX_RETRIES", 0, NP_LAUNCH_MAX_RETRIES_LIMIT, 0, &c->retries,
                                      NULL);
    if (st != NP_OK)
        return st;
    const char *mpi = config_get(x, "NEMOPERF_SRUN_MPI");
    if (!mpi)
        mpi = NP_LAUNCH_DEFAULT_SRUN_MPI;
    if (strcmp(mpi, "none") != 0) {
        for (const char *p = mpi; *p; p++)
            if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
                return config_bad(x, "NEMOPERF_SRUN_MPI=%s: not an MPI plugin name; allowed: pmix, pmi2, pmix_v4, "
                                     "... (srun --mpi=list), or none",
                                  mpi);
        if (strlen(mpi) >= sizeof c->srun_mpi)
            return config_bad(x, "NEMOPERF_SRUN_MPI=%s: too long", mpi);
        snprintf(c->srun_mpi, sizeof c->srun_mpi, "%s", mpi);
    }
    static const char *const binds[] = {[NP_NUMA_NVIDIA] = "nvidia", [NP_NUMA_TASK] = "task", [NP_NUMA_NONE] = "none"};
    const char *bind = config_get(x, "NEMOPERF_NUMA_BIND");
    c->numa_bind = NP_NUMA_NVIDIA;
    if (bind) {
        size_t i = 0;
        while (i < sizeof binds / sizeof binds[0] && strcmp(bind, binds[i]) != 0)
            i++;
        if (i == sizeof binds / sizeof binds[0])
            return config_bad(x, "NEMOPERF_NUMA_BIND=%s: not a binding; allowed: nvidia (every task as NVIDIA's "
                                 "runs: NUMA node $((SLURM_LOCALID/4)) expanded once by the batch shell), task (each "
                                 "task its own node), none",
                              bind);
        c->numa_bind = (enum np_numa_bind)i;
    }
    /* what the job records about its nodes (job/system.h): the snapshot unless SNAPSHOT=false */
    const char *snap = config_get(x, "SNAPSHOT");
    if ((st = config_bool(x, "SNAPSHOT", &c->snapshot)) != NP_OK)
        return st;
    if (!snap)
        c->snapshot = 1;
    if ((st = config_bool(x, "ENABLE_GPU_METRICS", &c->gpu_metrics)) != NP_OK ||
        (st = config_intvar(x, "NEMOPERF_GPU_METRICS_MS", NP_SYSTEM_METRICS_MS_MIN, NP_SYSTEM_METRICS_MS_MAX,
                            NP_SYSTEM_METRICS_MS_DEFAULT, &c->gpu_metrics_ms, NULL)) != NP_OK)
        return st;
    return NP_OK;
}

static enum np_status config_sbatch_vars(struct config_ctx *x, struct config_common *c)
{
    c->account = config_get(x, "SBATCH_ACCOUNT");
    c->partition = config_get(x, "SBATCH_PARTITION");
    c->gres = config_get(x, "SBATCH_GPUS_PER_NODE");
    if (c->account && !config_slurm_word(c->account))
        return config_bad(x, "SBATCH_ACCOUNT=%s: not a Slurm account name; allowed: letters, digits and _.,:+@-",
                          c->account);
    if (c->partition && !config_slurm_word(c->partition))
        return config_bad(x,
                          "SBATCH_PARTITION=%s: not a Slurm partition name; allowed: letters, digits and _.,:+@- "
                          "(comma list)",
                          c->partition);
    if (c->gres && !config_gres_gpus(c->gres))
        return config_bad(x, "SBATCH_GPUS_PER_NODE=%s: not a GPU count; allowed: N or TYPE:N (e.g. 8 or h100:8)",
                          c->gres);
    return NP_OK;
}

static char *config_strdup0(const char *s, int *oom)
{
    if (!s || !*s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = 1;
    return d;
}

/* ---- RECIPE=nccl-tests (model/nccltests.h) ---- */

static int config_is_ncclt(struct config_ctx *x)
{
    const char *r = config_get(x, "RECIPE");
    return r && strcasecmp(r, NP_NCCLT_RECIPE) == 0;
}

/* The fabric check's own variables given to another recipe: refused, named. */
static enum np_status config_ncclt_only(struct config_ctx *x)
{
    static const char *const own[] = {"FABRIC_CHECK", "FABRIC_PAIRS", "NCCL_TESTS", "NCCL_TESTS_PATH", NULL};
    for (size_t i = 0; own[i]; i++)
        if (config_get(x, own[i]))
            return config_bad(x, "%s=%s: only RECIPE=%s reads it; allowed: unset, or RECIPE=%s", own[i],
                              config_get(x, own[i]), NP_NCCLT_RECIPE, NP_NCCLT_RECIPE);
    return NP_OK;
}

struct config_ncclt_word {
    const char *name;
    int value;
};

/* A word of a small table (any case), its value in *out; refused naming every allowed word. */
static enum np_status config_ncclt_pick(struct config_ctx *x, const char *var, const struct config_ncclt_word *w,
                                        size_t n, int *out)
{
    const char *v = config_get(x, var);
    if (!v)
        return NP_OK;
    char allowed[200] = "";
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(v, w[i].name) == 0) {
            *out = w[i].value;
            return NP_OK;
        }
        config_join(allowed, sizeof allowed, w[i].name);
    }
    return config_bad(x, "%s=%s: unknown; allowed: %s", var, v, allowed);
}

/* RECIPE=nccl-tests: the system, the scale, the check and its collectives; the recipe data of
 * model/nccltests.c stands in for a recipe file (one model, no parallel layout). */
static enum np_status config_ncclt(struct config_ctx *x, struct config_common *c, int *gpus, size_t *ngpus,
                                   struct np_ncclt_choice *ch)
{
    static const char *const unused[] = {"MODEL_SIZE", "MODEL", "DTYPE", "CONTAINER", "CONFIG_VARIANT",
                                         "ENABLE_PROFILE", "ENABLE_NCCLTRACE", "ENABLE_CHECKPOINT",
                                         "LOAD_CHECKPOINT_PATH", "GBS", "MBS", "SEQ_LEN", NULL};
    for (size_t i = 0; unused[i]; i++)
        if (config_get(x, unused[i]))
            return config_bad(x, "%s=%s: RECIPE=%s runs NVIDIA's nccl-tests binaries, no model; allowed: unset",
                              unused[i], config_get(x, unused[i]), NP_NCCLT_RECIPE);
    if (c->workload != NP_WORKLOAD_NEMO)
        return config_bad(x, "WORKLOAD=%s with RECIPE=%s: the fabric check runs the container's nccl-tests "
                             "binaries, which have no synthetic stand-in; allowed: WORKLOAD=nemo (or unset)",
                          config_get(x, "WORKLOAD"), NP_NCCLT_RECIPE);
    if (c->task != NP_TASK_PRETRAIN)
        return config_bad(x, "TASK=%s with RECIPE=%s: allowed: unset", config_get(x, "TASK"), NP_NCCLT_RECIPE);
    c->recipe = np_ncclt_recipe();
    c->model = &c->recipe->models[0];
    c->dtype = c->recipe->default_dtype;
    size_t nsys;
    const struct np_ncclt_system *sys = np_ncclt_systems(&nsys);
    const char *gt = config_get(x, "GPU_TYPE");
    if (!gt)
        gt = NP_LAUNCH_DEFAULT_GPU_TYPE;
    const struct np_ncclt_system *s = np_ncclt_system_find(gt);
    if (!s) {
        char all[200] = "";
        for (size_t i = 0; i < nsys; i++)
            config_join(all, sizeof all, sys[i].gpu_type);
        return config_bad(x, "GPU_TYPE=%s: NVIDIA's nccl-tests recipe has no such system; allowed: %s", gt, all);
    }
    snprintf(c->gpu_type, sizeof c->gpu_type, "%s", s->gpu_type);
    enum np_status st = config_intvar(x, "GPUS_PER_NODE", 1, 1024, s->gpus_per_node, &c->gpus_per_node, NULL);
    if (st != NP_OK)
        return st;
    c->gpn_explicit = 1; /* no published rows: GPUS_PER_NODE, else the system's (NVIDIA's --ntasks-per-node) */

    static const struct config_ncclt_word checks[] = {{"full", NP_NCCLT_FULL}, {"bisect", NP_NCCLT_BISECT}};
    static const struct config_ncclt_word pairs[] = {{"ring", NP_NCCLT_PAIRS_RING}, {"all", NP_NCCLT_PAIRS_ALL}};
    int check = NP_NCCLT_FULL, pr = NP_NCCLT_PAIRS_RING;
    if ((st = config_ncclt_pick(x, "FABRIC_CHECK", checks, 2, &check)) != NP_OK ||
        (st = config_ncclt_pick(x, "FABRIC_PAIRS", pairs, 2, &pr)) != NP_OK)
        return st;
    ch->check = (enum np_ncclt_check)check;
    ch->pairs = (enum np_ncclt_pairs)pr;
    if (ch->check != NP_NCCLT_BISECT && config_get(x, "FABRIC_PAIRS"))
        return config_bad(x, "FABRIC_PAIRS=%s: only FABRIC_CHECK=bisect tests node pairs; allowed: unset, or "
                             "FABRIC_CHECK=bisect",
                          config_get(x, "FABRIC_PAIRS"));

    /* NCCL_TESTS: the collectives (bisect: all_reduce by default, full: all five) */
    size_t nb;
    const struct np_ncclt_binary *bin = np_ncclt_binaries(&nb);
    const char *list = config_get(x, "NCCL_TESTS");
    ch->collectives = ch->check == NP_NCCLT_BISECT ? 1u : (1u << nb) - 1u;
    if (list) {
        char names[200] = "", word[64];
        for (size_t i = 0; i < nb; i++)
            config_join(names, sizeof names, bin[i].collective);
        ch->collectives = 0;
        for (const char *p = list; *p;) {
            size_t n = strcspn(p, ",");
            snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word - 1 ? n : sizeof word - 1), p);
            int bi = np_ncclt_binary_find(word);
            if (bi < 0 || n >= sizeof word)
                return config_bad(x, "NCCL_TESTS=%s: '%s' is not a collective of NVIDIA's recipe; allowed: a comma "
                                     "list of %s",
                                  list, word, names);
            if ((ch->collectives >> bi) & 1u)
                return config_bad(x, "NCCL_TESTS=%s: %s is listed twice; allowed: each once", list, word);
            ch->collectives |= 1u << bi;
            p += n;
            if (*p == ',' && !*++p)
                return config_bad(x, "NCCL_TESTS=%s: trailing comma; allowed: a comma list of %s", list, names);
        }
    }
    const char *path = config_get(x, "NCCL_TESTS_PATH");
    if (!path)
        path = NP_NCCLT_DEFAULT_PATH;
    size_t pl = strlen(path);
    while (pl > 1 && path[pl - 1] == '/')
        pl--;
    if (path[0] != '/' || pl >= sizeof ch->path || strpbrk(path, "\n\r"))
        return config_bad(x, "NCCL_TESTS_PATH=%s: not an absolute folder path; allowed: the folder of the "
                             "nccl-tests binaries inside the container (%s, NVIDIA's)",
                          path, NP_NCCLT_DEFAULT_PATH);
    snprintf(ch->path, sizeof ch->path, "%.*s", (int)pl, path);

    /* JOB_TOTAL_GPUS: whole nodes, one task per GPU */
    const char *v = config_get(x, "JOB_TOTAL_GPUS");
    if (!v && ch->check == NP_NCCLT_BISECT)
        return config_bad(x, "JOB_TOTAL_GPUS is not set: FABRIC_CHECK=bisect checks the nodes of one job; allowed: "
                             "a multiple of GPUS_PER_NODE=%d over at least 2 nodes (e.g. %d for 4 nodes)",
                          c->gpus_per_node, 4 * c->gpus_per_node);
    int n = c->gpus_per_node;
    if (v && (config_int(v, 1, 1000000, &n) != 0 || n % c->gpus_per_node != 0))
        return config_bad(x, "JOB_TOTAL_GPUS=%s: RECIPE=%s runs one task per GPU on whole nodes; allowed: one "
                             "multiple of GPUS_PER_NODE=%d (%d, %d, ...)",
                          v, NP_NCCLT_RECIPE, c->gpus_per_node, c->gpus_per_node, 2 * c->gpus_per_node);
    if (n / c->gpus_per_node > NP_NCCLT_MAX_NODES)
        return config_bad(x, "JOB_TOTAL_GPUS=%s: %d nodes; allowed: at most %d nodes", v, n / c->gpus_per_node,
                          NP_NCCLT_MAX_NODES);
    if (ch->check == NP_NCCLT_BISECT && n / c->gpus_per_node < 2)
        return config_bad(x, "JOB_TOTAL_GPUS=%s: FABRIC_CHECK=bisect tests node pairs; allowed: at least 2 nodes "
                             "(%d GPUs with GPUS_PER_NODE=%d)",
                          v, 2 * c->gpus_per_node, c->gpus_per_node);
    struct np_ncclt_plan plan; /* as many steps as parse reads of one check */
    st = np_ncclt_plan(ch, n / c->gpus_per_node, &plan);
    size_t nsteps = plan.n;
    np_ncclt_plan_free(&plan);
    if (st == NP_E_NOMEM)
        return np_error_set(x->err, NP_E_NOMEM, "", 0, 0, "out of memory");
    if (st != NP_OK || nsteps > NP_NCCLT_MAX_STEPS)
        return config_bad(x, "JOB_TOTAL_GPUS=%d with FABRIC_PAIRS=%s and NCCL_TESTS of %d collective(s): %zu steps in "
                             "one check; allowed: at most %d (fewer nodes or collectives, or FABRIC_PAIRS=ring)",
                          n, np_ncclt_pairs_name(ch->pairs), __builtin_popcount(ch->collectives), nsteps,
                          NP_NCCLT_MAX_STEPS);
    gpus[0] = n;
    *ngpus = 1;
    return NP_OK;
}

enum np_status np_launch_config_set_timestamp(struct np_launch_config *c, long long ts)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/experiments/%s/%s_%lld/%s", c->stage_path, c->experiment, c->experiment, ts,
                   c->job_name);
    char *d = np_buf_steal(&b);
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/%s", d ? d : "", NP_NEMO_NSYS_DIR);
    char *nsys = np_buf_steal(&b);
    if (!d || !nsys) {
        free(d);
        free(nsys);
        return NP_E_NOMEM;
    }
    free(c->experiment_dir);
    free(c->nsys_dir);
    c->experiment_dir = d;
    c->nsys_dir = nsys;
    c->timestamp = ts;
    return NP_OK;
}

static enum np_status config_job(const struct config_common *cm, int gpus, const struct np_launch_opts *opts,
                                 struct np_launch_config *j)
{
    int oom = 0;
    const struct np_config_row *row = np_row_find_task(cm->model, cm->task, cm->gpu_type, cm->dtype, gpus);
    j->recipe = cm->recipe;
    j->task = cm->task;
    j->model = cm->model;
    for (size_t i = 0; cm->mbset && i < cm->mb.n; i++) /* a Megatron-Bridge row: its own recipe shape */
        if (cm->mb.gpus[i] == gpus) {
            j->mb = cm->mb.rows[i];
            j->recipe = &j->mb->as_recipe;
            j->model = &j->mb->model;
            row = &j->mb->cfg;
        }
    static const struct np_config_row no_row; /* nccl-tests: no published row, no parallel layout */
    if (!row && np_ncclt_is(cm->model))
        row = &no_row;
    j->row = row;
    j->ncclt = cm->ncclt;
    j->dtype = cm->dtype;
    j->workload = cm->workload;
    snprintf(j->gpu_type, sizeof j->gpu_type, "%s", cm->gpu_type);
    j->gpus = gpus;
    j->gpus_per_node = j->mb ? (cm->mb.gpus_per_node ? cm->mb.gpus_per_node : j->mb->gpus_per_node) : config_gpn(cm, row);
    j->nodes = gpus >= j->gpus_per_node ? gpus / j->gpus_per_node : 1; /* AutoModel's 1-GPU rows: part of a node */
    j->tp = row->tp;
    j->pp = row->pp;
    j->cp = row->cp;
    j->ep = row->ep;
    j->dp = row->dp;
    /* what runs: the row's corrections applied (the row keeps the published cells) */
    j->vp = np_row_value(row, "vp", row->vp, NULL);
    j->mbs = np_row_value(row, "mbs", row->mbs, NULL);
    j->gbs = np_row_value(row, "gbs", row->gbs, NULL);
    j->ga = np_row_value(row, "ga", row->ga, NULL);
    j->etp = row->etp;
    j->fsdp = row->fsdp > 0;
    j->cuda_graphs = row->cuda_graphs && !j->fsdp; /* NeMo utils.py l.315-319: off under FSDP */
    j->fp8_recipe = cm->dtype == NP_DTYPE_FP8 ? (cm->recipe->fp8_recipe ? cm->recipe->fp8_recipe : "delayed") : NULL;
    j->retries = cm->retries;
    snprintf(j->srun_mpi, sizeof j->srun_mpi, "%s", cm->srun_mpi);
    if (row->tp_comm_overlap_cfg && !(j->tp_comm_overlap_cfg = np_nemo_ub_resolve(row->tp_comm_overlap_cfg, cm->dtype)))
        oom = 1;
    j->tokenizer_dir = config_strdup0(cm->tokenizer_dir, &oom);
    if (cm->nmissing) {
        if (!(j->missing = calloc(cm->nmissing + 1, sizeof *j->missing)))
            oom = 1;
        for (size_t i = 0; j->missing && i < cm->nmissing; i++)
            j->missing[i] = config_strdup0(cm->missing[i], &oom);
    }
    j->layers = row->layers > 0 ? row->layers : j->model->arch.layers;
    j->seq_len = np_row_value(row, "seq_len", row->seq_len, NULL); /* fine-tuning: the pack length */
    j->hidden = j->model->arch.hidden;
    j->profile = cm->profile;
    j->profile_start = cm->profile_start;
    j->profile_stop = cm->profile_stop;
    j->profile_ranks = cm->profile_ranks;
    j->numa_bind = cm->numa_bind;
    j->snapshot = cm->snapshot;
    j->gpu_metrics = cm->gpu_metrics;
    j->gpu_metrics_ms = cm->gpu_metrics_ms;
    j->nccltrace = cm->nccltrace;
    j->checkpoint = cm->checkpoint;
    j->force_checkpoint = cm->force_checkpoint;
    j->checkpoint_bytes = cm->checkpoint ? (cm->workload == NP_WORKLOAD_SYNTHETIC ? NP_SYNTH_CHECKPOINT_BYTES(gpus)
                                                                                  : cm->model->checkpoint.size_bytes)
                                         : 0;
    j->max_steps_explicit = cm->max_steps_explicit;
    j->max_steps = cm->profile && !cm->mb.n ? cm->profile_stop
                   : cm->nccltrace ? NP_LAUNCH_NCCLTRACE_STEPS
                   : cm->load_checkpoint[0] ? 1
                   : cm->model->automodel && !cm->max_steps_explicit ? cm->model->automodel->max_steps
                   /* a Megatron-Bridge row whose release's parser has no -ms runs its config's length */
                   : cm->mb.n && !cm->max_steps_explicit && cm->model->mbridge ? cm->model->mbridge->train_iters_default
                                            : cm->max_steps;
    snprintf(j->time_limit, sizeof j->time_limit, "%s", cm->time_limit);
    /* a Hugging Face token only to jobs that read from the Hub (Nemotron's null tokenizer: NVIDIA passed none) */
    j->hf_token = cm->hf_token && (cm->model->automodel || cm->model->tokenizer.hf || cm->model->hf_repo);
    j->load_checkpoint = config_strdup0(cm->load_checkpoint, &oom);
    j->stage_path = config_strdup0(cm->stage_path, &oom);
    j->image = cm->workload == NP_WORKLOAD_NEMO ? config_strdup0(cm->image, &oom) : NULL;
    j->synth_path = cm->workload == NP_WORKLOAD_SYNTHETIC ? config_strdup0(opts->synth_path, &oom) : NULL;
    j->account = config_strdup0(cm->account, &oom);
    j->partition = config_strdup0(cm->partition, &oom);
    j->gres_gpus = config_strdup0(cm->gres, &oom);
    if (oom)
        return NP_E_NOMEM;
    if (np_ncclt_is(cm->model)) /* nccl-tests_<check>_<gpu type>_<gpus> */
        snprintf(j->experiment, sizeof j->experiment, "%s_%s_%s_%d", NP_NCCLT_RECIPE,
                 np_ncclt_check_name(cm->ncclt.check), cm->gpu_type, gpus);
    else if (j->mb) /* Megatron-Bridge's own naming: <task>_<recipe>_<dtype>_... (MB fcbb603 setup_experiment.py:537) */
        snprintf(j->experiment, sizeof j->experiment, "%s_%s_%s_%d", j->mb->task, j->mb->recipe,
                 np_mb_dtype_name(j->mb->dtype), gpus);
    else if (strcmp(config_task_name(cm->model, cm->task), "pretrain") == 0)
        snprintf(j->experiment, sizeof j->experiment, "pretrain_%s_%s_%s_%d", cm->recipe->name, cm->model->size,
                 np_dtype_name(cm->dtype, 0), gpus);
    else /* the parse side identifies fine-tuning runs by this name (run.c's folder pattern) */
        snprintf(j->experiment, sizeof j->experiment, "finetune_%s_%s_%s_%s_%d", cm->recipe->name,
                 cm->model->size, config_task_name(cm->model, cm->task),
                 np_dtype_name(cm->dtype, 0), gpus);
    /* Nemotron's script names the whole experiment _nsys (dgxc v25.04 nemotron/gsw_nemo.patch l.149-152,
     * seed 004: experiments/pretrain_nemotron4_15b_bf16_16_nsys/..._nsys_<ts>/..._nsys); Llama's only
     * the job (llama3.1/pretrain_llama31.py l.195, l.284: name=exp_name + "_nsys") */
    if (cm->profile && cm->recipe->profile_names_experiment)
        snprintf(j->experiment + strlen(j->experiment), sizeof j->experiment - strlen(j->experiment), "_nsys");
    snprintf(j->job_name, sizeof j->job_name, "%s%s", j->experiment,
             cm->profile && !cm->recipe->profile_names_experiment ? "_nsys" : cm->nccltrace ? "_nccltrace" : "");
    time_t now = opts && opts->now ? opts->now : time(NULL);
    return np_launch_config_set_timestamp(j, (long long)now);
}

enum np_status np_launch_resolve(const struct np_recipe_set *set, np_env_fn env, void *env_ctx,
                                 const struct np_launch_opts *opts, struct np_launch_plan *out,
                                 struct np_error *err)
{
    static const struct np_launch_opts no_opts;
    struct np_error local;
    struct config_ctx x = {env ? env : np_env_getenv, env_ctx, err ? err : &local,
                           opts && opts->setup_cmd ? opts->setup_cmd : "./setup"};
    memset(out, 0, sizeof *out);
    if (!opts)
        opts = &no_opts;
    struct config_common *c = calloc(1, sizeof *c);
    if (!c)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    c->preview = opts->preview;
    int gpus[CONFIG_MAX_SWEEP];
    size_t ngpus = 0;
    enum np_status st = NP_OK;

    /* every value goes into JSON and the script: text only (nothing written otherwise) */
    static const char *const names[] = {
        "WORKLOAD", "STAGE_PATH", "RECIPE", "MODEL_SIZE", "DTYPE", "JOB_TOTAL_GPUS", "GPUS_PER_NODE", "GPU_TYPE",
        "TIME_LIMIT", "MAX_STEPS", "ENABLE_PROFILE", "PROFILE_START_STEP", "PROFILE_STOP_STEP", "ENABLE_NCCLTRACE",
        "ENABLE_CHECKPOINT", "NEMOPERF_FORCE_CHECKPOINT", "LOAD_CHECKPOINT_PATH", "RUN_CONF_IMAGE", "SBATCH_ACCOUNT",
        "SBATCH_PARTITION", "SBATCH_GPUS_PER_NODE", "HF_TOKEN", "NEMOPERF_NUMA_BIND", "CONTAINER", "CONFIG_VARIANT",
        "GBS", "MBS", "SEQ_LEN", "REPEATS", "FABRIC_CHECK", "FABRIC_PAIRS", "NCCL_TESTS", "NCCL_TESTS_PATH", NULL};
    for (size_t i = 0; names[i] && st == NP_OK; i++) {
        const char *v = config_get(&x, names[i]);
        long at = v ? config_utf8_bad(v) : -1;
        if (at >= 0) /* the value itself is not printed: it is not text (and may be a token) */
            st = np_error_set(x.err, NP_E_INVALID, "", 0, 0,
                              "%s: not valid UTF-8 (byte 0x%02x at offset %ld of %zu); allowed: UTF-8 text (a path "
                              "in another encoding cannot be written to the JSON manifest); nothing written",
                              names[i], (unsigned char)v[at], at, strlen(v));
    }
    if (st == NP_OK) /* the SBATCH_* Slurm reads as names: too long or with control bytes, never accepted */
        st = np_sbatch_env_check(x.env, x.env_ctx, x.err);
    if (st != NP_OK) {
        free(c);
        return st;
    }

    const char *wl = config_get(&x, "WORKLOAD");
    if (!wl || strcasecmp(wl, "nemo") == 0)
        c->workload = NP_WORKLOAD_NEMO;
    else if (strcasecmp(wl, "synthetic") == 0)
        c->workload = NP_WORKLOAD_SYNTHETIC;
    else
        st = config_bad(&x, "WORKLOAD=%s: unknown workload; allowed: nemo, synthetic", wl);

    if (st == NP_OK)
        st = config_task(&x, c);
    if (st == NP_OK)
        st = config_stage_path(&x, c);
    int mbwant = 0, ncclt = st == NP_OK && config_is_ncclt(&x);
    if (ncclt) /* NVIDIA's nccl-tests binaries: no recipe file, no model (model/nccltests.c) */
        st = config_ncclt(&x, c, gpus, &ngpus, &c->ncclt);
    else if (st == NP_OK)
        st = config_ncclt_only(&x);
    if (st == NP_OK && !ncclt) {
        struct np_mbperf_set mbs;
        mbwant = np_mb_config_wanted(set, x.env, x.env_ctx, &mbs, x.err);
        if (mbwant > 0 && opts->config_only && np_mb_config_unlaunched(&mbs, x.env, x.env_ctx, x.err) != NP_OK)
            mbwant = -1; /* --print-config of a published container nemoperf does not launch: its rows too */
        if (mbwant < 0)
            st = NP_E_INVALID;
        else if (mbwant && !(c->mbset = malloc(sizeof *c->mbset))) {
            np_mbperf_free(&mbs);
            st = np_error_set(x.err, NP_E_NOMEM, "", 0, 0, "out of memory");
        } else if (mbwant) {
            *c->mbset = mbs;
        }
    }
    if (st == NP_OK && mbwant) { /* a Megatron-Bridge row (launch/mbridge_config.c) */
        st = np_mb_config_pick(c->mbset, x.env, x.env_ctx, c->task, &c->mb, x.err);
        for (size_t i = 0; st == NP_OK && !opts->config_only && i < c->mb.n; i++)
            if (!c->mb.rows[i]->launchable) /* a row of a launched container nemoperf cannot run as NVIDIA did */
                st = np_error_set(x.err, NP_E_INVALID, "", 0, 0, "%s %s on %s x%d in CONTAINER=%s: not launched by "
                                  "nemoperf: %s (--print-config shows the row)", c->mb.rows[i]->recipe,
                                  np_mb_dtype_name(c->mb.rows[i]->dtype), c->mb.rows[i]->gpu_type,
                                  c->mb.rows[i]->gpus, c->mb.rows[i]->container,
                                  c->mb.rows[i]->why_not ? c->mb.rows[i]->why_not : "-");
        if (st == NP_OK) {
            const struct np_mbperf_row *r0 = c->mb.rows[0];
            c->recipe = &r0->as_recipe;
            c->model = &r0->model;
            c->dtype = r0->as_recipe.default_dtype;
            snprintf(c->gpu_type, sizeof c->gpu_type, "%s", r0->gpu_type);
            c->gpus_per_node = c->mb.gpus_per_node;
            c->gpn_explicit = c->mb.gpus_per_node > 0;
            ngpus = c->mb.n;
            memcpy(gpus, c->mb.gpus, ngpus * sizeof gpus[0]);
        }
    } else if (st == NP_OK && !ncclt) {
        st = config_model(&x, set, c);
        if (st == NP_OK)
            st = np_mb_config_not_mb(x.env, x.env_ctx, x.err);
        if (st == NP_OK)
            st = config_gpu_list(&x, c, gpus, &ngpus);
    }
    if (st == NP_OK)
        st = config_steps(&x, c);
    if (st == NP_OK)
        st = config_load_path(&x, c);
    if (st == NP_OK)
        st = config_checkpoint(&x, c, gpus, ngpus, opts);
    if (st == NP_OK)
        st = config_nemo(&x, c);
    if (st == NP_OK && c->mbset) /* the Hugging Face files a Megatron-Bridge row reads offline (HF_HOME) */
        st = config_mbridge_hf(&x, c);
    if (st == NP_OK)
        st = config_ft_staged(&x, c, gpus, ngpus);
    if (st == NP_OK)
        st = config_sbatch_vars(&x, c);
    if (st == NP_OK)
        st = config_job_policy(&x, c);
    if (st == NP_OK) /* N identical jobs of each row, one configuration (submit.c) */
        st = config_intvar(&x, "REPEATS", 1, NP_LAUNCH_MAX_REPEATS, 1, &out->repeats, NULL);
    if (st == NP_OK && c->recipe->command)
        st = np_script_check_template(c->recipe->command, c->recipe->path, x.err);
    if (st == NP_OK)
        st = config_mbridge(&x, c, gpus, ngpus);
    if (st == NP_OK && c->workload == NP_WORKLOAD_NEMO && !c->recipe->command && !c->model->automodel &&
        !c->model->mbridge && !ncclt)
        st = np_error_set(x.err, NP_E_INVALID, c->recipe->path, 0, 0,
                          "command: recipe %s has no command template, so WORKLOAD=nemo cannot run it; allowed: "
                          "WORKLOAD=synthetic",
                          c->recipe->name);
    if (st == NP_OK && c->workload == NP_WORKLOAD_SYNTHETIC) {
        if (!opts->synth_path)
            st = config_bad(&x, "WORKLOAD=synthetic: nemoperf-synth was not found next to nemoperf-launch; build "
                                "it (make) or install nemoperf");
        else if (access(opts->synth_path, X_OK) != 0)
            st = config_bad(&x, "WORKLOAD=synthetic: %s is not an executable file (%s); build it (make)",
                            opts->synth_path, strerror(errno));
        else if (strpbrk(opts->synth_path, "\n\r"))
            st = config_bad(&x, "WORKLOAD=synthetic: the path of nemoperf-synth contains a newline");
    }
    if (st == NP_OK && c->max_steps_explicit && ((c->profile && !c->mb.n) || c->nccltrace || c->load_checkpoint[0]))
        np_warnf("MAX_STEPS=%d is overridden: %s", c->max_steps,
                 c->profile ? "ENABLE_PROFILE runs PROFILE_STOP_STEP steps"
                 : c->nccltrace ? "ENABLE_NCCLTRACE runs 5 steps"
                                : "LOAD_CHECKPOINT_PATH runs 1 step");

    /* A profile or NCCL-trace request also submits the performance run of each scale, as NVIDIA's Llama 3.1
     * launcher did unless DISABLE_PERFRUN=true (dgxc-benchmarking v25.04 llama3.1/launch.sh l.48, 66;
     * pretrain_llama31.py l.272-293), so a profile never stands for a benchmark.  Beside a profile NVIDIA's
     * ran MAX_STEPS=PROFILE_STOP_STEP steps (launch.sh l.71, llama31_utils.py l.507): 25 steps have no window
     * of NVIDIA's parser (iterations 11-44 of 50), so this one runs MAX_STEPS (50), as a benchmark launch. */
    struct config_common *perf = NULL;
    if (st == NP_OK && (c->profile || c->nccltrace) && !c->no_perfrun) {
        if (!(perf = malloc(sizeof *perf)))
            st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        else {
            *perf = *c;
            perf->nmissing = 0; /* c owns them */
            perf->profile = perf->nccltrace = 0;
            if (c->nccltrace && !config_get(&x, "TIME_LIMIT"))
                snprintf(perf->time_limit, sizeof perf->time_limit, "%s", NP_LAUNCH_DEFAULT_TIME_LIMIT);
        }
    }
    if (st == NP_OK) {
        size_t njobs = perf ? 2 * ngpus : ngpus;
        out->jobs = calloc(njobs, sizeof *out->jobs);
        if (!out->jobs)
            st = NP_E_NOMEM;
        /* the requested jobs first, one per scale, then their performance runs */
        for (size_t i = 0; st == NP_OK && i < njobs; i++) {
            out->n = i + 1;
            st = config_job(i < ngpus ? c : perf, gpus[i % ngpus], opts, &out->jobs[i]);
        }
        if (st == NP_E_NOMEM)
            np_error_set(err, st, "", 0, 0, "out of memory");
    }
    for (size_t i = 0; i < c->nmissing; i++)
        free(c->missing[i]);
    if (c->mbset && out->jobs) /* the jobs point into the rows: the plan owns them */
        out->mb = c->mbset;
    else if (c->mbset) {
        np_mbperf_free(c->mbset);
        free(c->mbset);
    }
    free(perf);
    free(c);
    return st;
}

static void config_job_free(struct np_launch_config *j)
{
    free(j->load_checkpoint);
    free(j->stage_path);
    free(j->image);
    free(j->synth_path);
    free(j->account);
    free(j->partition);
    free(j->gres_gpus);
    free(j->experiment_dir);
    free(j->nsys_dir);
    free(j->tp_comm_overlap_cfg);
    free(j->tokenizer_dir);
    np_strv_free(j->missing);
    memset(j, 0, sizeof *j);
}

void np_launch_plan_free(struct np_launch_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        config_job_free(&p->jobs[i]);
    free(p->jobs);
    np_mbperf_free(p->mb);
    free(p->mb);
    memset(p, 0, sizeof *p);
}

/* ---- JSON ---- */

json_t *np_launch_config_json(const struct np_launch_config *c)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
#define CONFIG_SET(k, v) bad |= json_object_set_new(o, k, v)
#define CONFIG_STR(s) ((s) ? json_string(s) : json_null())
#define CONFIG_OPTINT(v) ((v) > 0 ? json_integer(v) : json_null())
    int model = !np_ncclt_is(c->model); /* nccl-tests: no model, no layout, no steps: null, never a zero count */
#define CONFIG_MINT(v) (model ? json_integer(v) : json_null())
    CONFIG_SET("recipe", json_string(c->recipe->name));
    CONFIG_SET("model_size", json_string(c->model->size));
    CONFIG_SET("dtype", model ? json_string(c->mb ? np_mb_dtype_name(c->mb->dtype) : np_dtype_name(c->dtype, 0))
                              : json_null());
    CONFIG_SET("gpu_type", json_string(c->gpu_type));
    /* the system the row was published for (seed 000), so parse never assumes it */
    CONFIG_SET("system", CONFIG_STR(c->row ? c->row->system : NULL));
    CONFIG_SET("gpus", json_integer(c->gpus));
    CONFIG_SET("gpus_per_node", json_integer(c->gpus_per_node));
    CONFIG_SET("nodes", json_integer(c->nodes));
    CONFIG_SET("tp", CONFIG_MINT(c->tp));
    CONFIG_SET("pp", CONFIG_MINT(c->pp));
    CONFIG_SET("cp", CONFIG_MINT(c->cp));
    CONFIG_SET("ep", CONFIG_OPTINT(c->ep));
    CONFIG_SET("dp", CONFIG_MINT(c->dp));
    CONFIG_SET("vp", CONFIG_OPTINT(c->vp));
    CONFIG_SET("mbs", CONFIG_MINT(c->mbs));
    CONFIG_SET("gbs", CONFIG_MINT(c->gbs));
    CONFIG_SET("ga", CONFIG_MINT(c->ga));
    CONFIG_SET("layers", CONFIG_MINT(c->layers));
    CONFIG_SET("seq_len", CONFIG_MINT(c->seq_len));
    CONFIG_SET("max_steps", CONFIG_MINT(c->max_steps));
    CONFIG_SET("time_limit", json_string(c->time_limit));
    CONFIG_SET("experiment", json_string(c->experiment));
    CONFIG_SET("job_name", json_string(c->job_name));
    CONFIG_SET("experiment_dir", CONFIG_STR(c->experiment_dir));
    CONFIG_SET("timestamp", json_integer(c->timestamp));
    CONFIG_SET("profile", json_boolean(c->profile));
    CONFIG_SET("profile_start", c->profile ? json_integer(c->profile_start) : json_null());
    CONFIG_SET("profile_stop", c->profile ? json_integer(c->profile_stop) : json_null());
    CONFIG_SET("nccltrace", json_boolean(c->nccltrace));
    CONFIG_SET("checkpoint", json_boolean(c->checkpoint));
    CONFIG_SET("checkpoint_bytes", c->checkpoint ? json_real(c->checkpoint_bytes) : json_null());
    CONFIG_SET("load_checkpoint", CONFIG_STR(c->load_checkpoint));
    CONFIG_SET("workload", json_string(np_workload_name(c->workload)));
    CONFIG_SET("stage_path", CONFIG_STR(c->stage_path));
    CONFIG_SET("image", CONFIG_STR(c->image));
    CONFIG_SET("account", CONFIG_STR(c->account));
    CONFIG_SET("partition", CONFIG_STR(c->partition));
    if (c->model->automodel)
        CONFIG_SET("automodel", np_automodel_json(c));
    else if (c->model->mbridge)
        CONFIG_SET("mbridge", np_mbridge_json(c));
    else if (np_ncclt_is(c->model))
        CONFIG_SET("nccl_tests", np_ncclt_json(c));
    else
        CONFIG_SET("nemo", np_nemo_json(c));
    CONFIG_SET("task", json_string(config_task_name(c->model, c->task)));
    CONFIG_SET("pack_len", c->task != NP_TASK_PRETRAIN ? json_integer(c->seq_len) : json_null());
    CONFIG_SET("finetune", c->mb ? json_null() : np_ft_json(c)); /* MB rows: their release config */
#undef CONFIG_SET
#undef CONFIG_STR
#undef CONFIG_OPTINT
#undef CONFIG_MINT
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- --list ---- */

#define CONFIG_LIST_COLS 19

/* The NOTE column: corrections (published->run, first source), else inconsistency or proxy. */
static void config_list_note(const struct np_config_row *row, char *buf, size_t size)
{
    buf[0] = '\0';
    if (row->ncorrections) {
        struct np_buf b;
        np_buf_init(&b);
        np_buf_append(&b, "corrected: ");
        for (size_t k = 0; k < row->ncorrections; k++) {
            const struct np_correction *cr = &row->corrections[k];
            int pub = np_row_published(row, cr->field);
            char p[16];
            snprintf(p, sizeof p, pub > 0 ? "%d" : "NA", pub);
            np_buf_appendf(&b, "%s%s %s->%d", k ? ", " : "", cr->field, p, cr->value);
        }
        np_buf_appendf(&b, " (%s: %s)", row->corrections[0].reason, row->corrections[0].source);
        char *t = np_buf_steal(&b);
        snprintf(buf, size, "%s", t ? t : "corrected");
        free(t);
    } else if (row->inconsistent) {
        snprintf(buf, size, "INCONSISTENT, not launchable: %s", row->inconsistent);
    } else if (row->proxy) {
        snprintf(buf, size, "proxy (reduced layers)");
    }
}

char *np_launch_list_text(const struct np_recipe_set *set) { return np_launch_list(set, NULL, 0); }

/* A --list cell as JSON: digits -> integer, "NA" or "" -> null, else the string. */
static json_t *config_list_cell(const char *cell)
{
    if (!cell || !*cell || strcmp(cell, "NA") == 0 || strcmp(cell, "-") == 0) /* "-": none (the table's dash) */
        return json_null();
    size_t i = 0;
    while (cell[i] >= '0' && cell[i] <= '9')
        i++;
    if (!cell[i] && i < 15)
        return json_integer(strtoll(cell, NULL, 10));
    return json_string(cell);
}

static char *config_list_json(const char *const *head, int ncols, char *(*rows)[CONFIG_LIST_COLS], size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        json_t *o = json_object();
        for (int k = 0; o && k < ncols; k++) {
            char key[32];
            size_t j = 0;
            for (; head[k][j] && j + 1 < sizeof key; j++)
                key[j] = (char)tolower((unsigned char)head[k][j]);
            key[j] = '\0';
            if (json_object_set_new(o, key, config_list_cell(rows[i][k])) != 0) {
                json_decref(o);
                o = NULL;
            }
        }
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    char *t = arr ? json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(arr);
    if (!t)
        return NULL;
    size_t len = strlen(t);
    char *out = realloc(t, len + 2);
    if (!out) {
        free(t);
        return NULL;
    }
    memcpy(out + len, "\n", 2);
    return out;
}

static int config_list_match(const struct np_list_filter *f, const struct np_recipe *rp, const struct np_model *mp,
                             const struct np_config_row *row)
{
    if (!f)
        return 1;
    if (f->recipe && *f->recipe && strcasecmp(f->recipe, rp->name) != 0)
        return 0;
    if (f->gpu_type && *f->gpu_type && strcasecmp(f->gpu_type, row->gpu_type) != 0)
        return 0;
    if (f->container && *f->container) /* NeMo's rows have no Megatron-Bridge container */
        return 0;
    if (f->task && *f->task && strcasecmp(f->task, config_task_name(mp, row->task)) != 0)
        return 0;
    return 1;
}

char *np_launch_list(const struct np_recipe_set *set, const struct np_list_filter *filter, int json)
{
    static const char *const head[CONFIG_LIST_COLS] = {"RECIPE", "SIZE", "TASK", "DTYPE", "GPUS", "GPU",
                                                       "SYSTEM", "GPN", "TP", "PP", "CP", "EP", "DP", "VP",
                                                       "MBS", "GBS", "GA", "LAYERS", "NOTE"};
    size_t cap = 64, n = 0;
    char *(*rows)[CONFIG_LIST_COLS] = malloc(cap * sizeof *rows);
    int oom = !rows;
    size_t width[CONFIG_LIST_COLS] = {0};
    for (int k = 0; k < CONFIG_LIST_COLS; k++)
        width[k] = strlen(head[k]);
    for (size_t r = 0; !oom && r < set->n; r++) {
        const struct np_recipe *rp = &set->recipes[r];
        for (size_t m = 0; !oom && m < rp->nmodels; m++) {
            const struct np_model *mp = &rp->models[m];
            /* the pre-training rows, then the fine-tuning rows (TASK sft/lora, note: pack length); AutoModel
             * rows: their own text table below (its model names are long), in the JSON array */
            for (size_t i = 0; !oom && (!mp->automodel || json) && i < mp->nrows + mp->nft_rows; i++) {
                const struct np_config_row *row = i < mp->nrows ? &mp->rows[i] : &mp->ft_rows[i - mp->nrows];
                if (!config_list_match(filter, rp, mp, row))
                    continue;
                for (int d = NP_DTYPE_BF16; !oom && d <= NP_DTYPE_FP8; d <<= 1) {
                    if (!(row->dtypes & (unsigned)d) ||
                        (filter && filter->dtype && *filter->dtype && (int)np_dtype_parse(filter->dtype) != d))
                        continue;
                    if (n == cap) {
                        void *nr = realloc(rows, 2 * cap * sizeof *rows);
                        if (!nr) {
                            oom = 1;
                            break;
                        }
                        rows = nr;
                        cap *= 2;
                    }
                    char v[CONFIG_LIST_COLS][640];
                    snprintf(v[0], sizeof v[0], "%s", rp->name);
                    snprintf(v[1], sizeof v[1], "%s", mp->size);
                    snprintf(v[2], sizeof v[2], "%s", config_task_name(mp, row->task));
                    snprintf(v[3], sizeof v[3], "%s", np_dtype_name((enum np_dtype)d, 0));
                    snprintf(v[4], sizeof v[4], "%d", row->gpus);
                    snprintf(v[5], sizeof v[5], "%s", row->gpu_type);
                    snprintf(v[6], sizeof v[6], "%s", row->system ? row->system : "-");
                    snprintf(v[7], sizeof v[7], "%d", row->gpus_per_node);
                    snprintf(v[8], sizeof v[8], "%d", row->tp);
                    snprintf(v[9], sizeof v[9], "%d", row->pp);
                    snprintf(v[10], sizeof v[10], "%d", row->cp);
                    snprintf(v[11], sizeof v[11], row->ep > 0 ? "%d" : "NA", row->ep);
                    snprintf(v[12], sizeof v[12], "%d", row->dp);
                    snprintf(v[13], sizeof v[13], row->vp > 0 ? "%d" : "NA", row->vp);
                    snprintf(v[14], sizeof v[14], "%d", row->mbs);
                    snprintf(v[15], sizeof v[15], "%d", row->gbs);
                    snprintf(v[16], sizeof v[16], "%d", row->ga);
                    snprintf(v[17], sizeof v[17], "%d", row->layers > 0 ? row->layers : mp->arch.layers);
                    config_list_note(row, v[18], sizeof v[18]);
                    if (row->task != NP_TASK_PRETRAIN) { /* the pack length leads the note */
                        char t[sizeof v[18]];
                        int w = snprintf(t, 32, "packed %d", row->seq_len);
                        if (v[18][0] && w > 0)
                            snprintf(t + w, sizeof t - (size_t)w, "; %.580s", v[18]);
                        memcpy(v[18], t, sizeof t);
                    }
                    if (mp->automodel)
                        snprintf(v[18], sizeof v[18], "AutoModel benchmark: LBS %d, examples/llm_benchmark/%s (%s)",
                                 row->lbs, np_automodel_yaml(mp, row),
                                 mp->automodel->from_pretrained ? "from_pretrained" : "from_config");
                    for (int k = 0; k < CONFIG_LIST_COLS; k++) {
                        rows[n][k] = strdup(v[k]);
                        if (!rows[n][k])
                            oom = 1;
                        else if (k < CONFIG_LIST_COLS - 1 && strlen(v[k]) > width[k])
                            width[k] = strlen(v[k]);
                    }
                    n++;
                }
            }
        }
    }
    if (json) {
        char *t = oom ? NULL : config_list_json(head, CONFIG_LIST_COLS, rows, n);
        for (size_t i = 0; rows && i < n; i++)
            for (int k = 0; k < CONFIG_LIST_COLS; k++)
                free(rows[i][k]);
        free(rows);
        return t;
    }
    struct np_buf b;
    np_buf_init(&b);
    if (oom)
        b.failed = 1;
    char *am = np_automodel_list_text(set, filter);
    if (!am)
        b.failed = 1;
    /* no empty table above the AutoModel one, nor for a listing of a Megatron-Bridge container's rows */
    int bare = n == 0 && ((am && *am) || (filter && filter->container && *filter->container));
    for (size_t i = 0; i <= n && !bare; i++) {
        struct np_buf line;
        np_buf_init(&line);
        for (int k = 0; k < CONFIG_LIST_COLS; k++) {
            const char *cell = i == 0 ? head[k] : rows[i - 1][k];
            if (!cell)
                cell = "";
            if (k == CONFIG_LIST_COLS - 1)
                np_buf_append(&line, cell);
            else
                np_buf_appendf(&line, "%-*s  ", (int)width[k], cell);
        }
        char *l = np_buf_steal(&line);
        if (!l) {
            b.failed = 1;
        } else {
            size_t len = strlen(l);
            while (len > 0 && l[len - 1] == ' ')
                l[--len] = '\0';
            np_buf_append(&b, l);
            np_buf_append(&b, "\n");
        }
        free(l);
    }
    if (am)
        np_buf_append(&b, n || !*am ? am : am + 1); /* its leading blank line separates it from the table above */
    free(am);
    for (size_t i = 0; rows && i < n; i++)
        for (int k = 0; k < CONFIG_LIST_COLS; k++)
            free(rows[i][k]);
    free(rows);
    return np_buf_steal(&b);
}
