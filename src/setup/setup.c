/* setup.c - the setup pipeline: validate the environment, plan, then stage $STAGE_PATH once before ./launch.
 *
 * Everything is checked before anything is created (NP_E_INVALID, nothing written), last the Hub's access to
 * every repo it will fetch from (setup_access); then the layout, the container import (stage.h), the Hugging
 * Face files (hf.h), for a Megatron-Bridge LoRA row its checkpoint and SQuAD (mbridge_lora.h), and for
 * TASK=sft|lora, the fine-tuning preparation (finetune_prep.h).  SIGINT/SIGTERM/
 * SIGHUP stop it between steps (moved from src/cmd/setup.c; the result lines "stage/image/hf ..." go to the
 * caller's stream).
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/setup/automodel.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/job/finetune.h"
#include "nemoperf/job/mbridge_perf.h"
#include "nemoperf/setup/finetune_prep.h"
#include "nemoperf/setup/archive.h"
#include "nemoperf/setup/diffusers.h"
#include "nemoperf/model/mbrows.h"
#include "nemoperf/model/mbperf.h"
#include "nemoperf/model/nccltests.h"
#include "nemoperf/model/recipe_names.h"
#include "nemoperf/setup/hf.h"
#include "nemoperf/setup/mbridge_hf.h"
#include "nemoperf/setup/mbridge_lora.h"
#include "nemoperf/setup/pip.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/slurm/sbatch_env.h"
#include "nemoperf/setup/stage.h"
#include "nemoperf/setup/setup.h"

extern char **environ;


/* Something a real ./setup needs is missing (a tool, HF_TOKEN): an error (exit 2), or with --dry-run a warning (the plan is still shown). */
static void setup_missing_tool(int dry_run, int *rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setup_missing_tool(int dry_run, int *rc, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (dry_run) {
        np_warnf("%s; --dry-run goes on, ./setup would stop here", text);
        return;
    }
    np_errorf("%s", text);
    *rc = 2;
}

static FILE *setup_out; /* the result lines' stream, for the run in progress (np_setup_run) */


static volatile sig_atomic_t setup_signal;

static void setup_on_signal(int sig) { setup_signal = sig; }

static void setup_trap_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = setup_on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: waits return early */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Value of an environment variable; empty counts as unset. */
static const char *setup_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* One container to stage. */
struct setup_image {
    const char *image;     /* reference to import (borrowed) */
    char *sqsh;            /* target file */
    char recipes[256];     /* recipe names using it */
    int use_existing;      /* RUN_CONF_IMAGE names an existing file: nothing to import */
    int present;           /* sqsh already exists, non-empty */
};

/* One gated repo to check and fetch. */
struct setup_repo {
    const char *repo;      /* borrowed from the recipe set */
    const struct np_model *am; /* an AutoModel benchmark model of this repo (weights preferred), or NULL */
    int diffusers;         /* a public Diffusers pipeline a Megatron-Bridge kind reads (setup/diffusers.h) */
    char *dir;             /* $STAGE_PATH/hf/<repo> */
    char models[256];      /* "llama3.1 8b, ..." */
};

/* One pinned source checkout (Megatron-Bridge recipes, setup/archive.h). */
struct setup_source {
    const struct np_mbridge_repo *repo; /* borrowed from the recipe set */
    char *dir;             /* $STAGE_PATH/src/<name>-<commit> */
    char *url;             /* the archive */
};

/* One recipe model whose extra pip packages a one-node job installs (setup/pip.h). */
struct setup_pip {
    const struct np_recipe *r;
    const struct np_model *m;
    char *sqsh;            /* the image the job runs in */
};

struct setup_plan {
    const char *stage;
    struct setup_pip pips[8];
    size_t npips;
    struct setup_source sources[16];
    size_t nsources;
    struct setup_image images[16];
    size_t nimages;
    struct setup_repo repos[64];
    size_t nrepos;
    int need_enroot, need_sbatch;
    struct np_mbperf_set mb;   /* Megatron-Bridge performance rows (RECIPE=deepseek_v3 ...): sources point into it */
    const struct np_mbperf_row *mbhf; /* the row whose Hub files go into its jobs' HF_HOME (in mb), or NULL */
    struct np_mblora lora;     /* a LoRA row's base model, SQuAD and the job making its inputs (have_lora) */
    int have_lora;
    char *lora_sqsh;           /* the image that job runs in */
};

static void setup_plan_free(struct setup_plan *p)
{
    for (size_t i = 0; i < p->nimages; i++)
        free(p->images[i].sqsh);
    for (size_t i = 0; i < p->nrepos; i++)
        free(p->repos[i].dir);
    for (size_t i = 0; i < p->nsources; i++) {
        free(p->sources[i].dir);
        free(p->sources[i].url);
    }
    for (size_t i = 0; i < p->npips; i++)
        free(p->pips[i].sqsh);
    if (p->have_lora)
        np_mblora_free(&p->lora);
    free(p->lora_sqsh);
    np_mbperf_free(&p->mb);
}

static void setup_append_name(char *dst, size_t size, const char *name)
{
    size_t n = strlen(dst);
    snprintf(dst + n, size - n, "%s%s", n ? ", " : "", name);
}

static int setup_size_listed(const char *list, const char *size)
{
    if (!list)
        return 1;
    size_t n = strlen(size);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        while (len && p[len - 1] == ' ')
            len--;
        if (len == n && strncasecmp(p, size, n) == 0)
            return 1;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

/* The container image of recipe r (RUN_CONF_IMAGE when set) into the plan, once, r's name appended to its
 * recipes.  0, -1 when the plan is full (skipped), else an exit code (2 bad RUN_CONF_IMAGE, 1 out of memory). */
static int setup_add_image(struct setup_plan *p, const char *stage, const char *run_image, const struct np_recipe *r)
{
    const char *image = run_image ? run_image : r->image;
    size_t k;
    for (k = 0; k < p->nimages && strcmp(p->images[k].image, image) != 0; k++)
        ;
    if (k == p->nimages) {
        if (p->nimages == sizeof p->images / sizeof p->images[0])
            return -1;
        struct setup_image *im = &p->images[p->nimages++];
        im->image = image;
        im->recipes[0] = '\0';
        if (run_image && run_image[0] == '/') {
            struct stat st;
            if (stat(run_image, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
                np_errorf("RUN_CONF_IMAGE: '%s' is not an existing, non-empty .sqsh file (unset it to "
                          "import %s into $STAGE_PATH)", run_image, r->image);
                return 2;
            }
            im->use_existing = 1;
            im->sqsh = strdup(run_image);
        } else {
            im->sqsh = np_stage_sqsh_path(stage, image);
            if (!im->sqsh) {
                np_errorf("RUN_CONF_IMAGE: '%s' is not an image reference", image);
                return 2;
            }
        }
        if (!im->sqsh)
            return 1;
        struct stat st;
        im->present = im->use_existing ||
                      (stat(im->sqsh, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0);
    }
    setup_append_name(p->images[k].recipes, sizeof p->images[k].recipes, r->name);
    return 0;
}

/* RECIPE (+ MODEL_SIZE) of Megatron-Bridge's performance rows, lower case, into buf; 0 when RECIPE is unset. */
static int setup_mb_name(char *buf, size_t cap)
{
    const char *r = setup_env("RECIPE"), *s = setup_env("MODEL_SIZE");
    if (!r)
        return 0;
    snprintf(buf, cap, s ? "%s_%s" : "%s", r, s);
    for (char *q = buf; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    return 1;
}

/* A Megatron-Bridge performance row (CONTAINER set, or a RECIPE no NeMo recipe has but a row has): the
 * container image of the row's version, the Megatron-Bridge checkout at the release commit and the Hugging
 * Face files the row reads offline (hf-files.tsv, setup/mbridge_hf.h), with CONTAINER / DTYPE / GPU_TYPE /
 * TASK narrowing the rows as launch does.  Exit code, 0, or -1 when this is not a Megatron-Bridge request
 * (the caller goes on with the NeMo recipes). */
static int setup_resolve_mb(const char *stage, int skip_image, int skip_hf, struct setup_plan *p)
{
    const char *ct = setup_env("CONTAINER"), *dt = setup_env("DTYPE"), *gt = setup_env("GPU_TYPE");
    const char *task = setup_env("TASK") ? setup_env("TASK") : "pretrain";
    struct np_error err;
    if (np_mbperf_load(NULL, &p->mb, &err) != NP_OK) {
        if (!ct)
            return -1;
        np_error_print(&err);
        return 1;
    }
    char name[160], list[1024] = "";
    int named = setup_mb_name(name, sizeof name);
    if (!ct && (!named || !np_mbperf_has_recipe(&p->mb, name, NULL)))
        return -1;
    for (size_t i = 0; i < p->mb.n; i++)
        if (!setup_size_listed(list, p->mb.rows[i].recipe) && (!ct || strcmp(p->mb.rows[i].container, ct) == 0))
            setup_append_name(list, sizeof list, p->mb.rows[i].recipe);
    if (ct && !np_mbperf_container_known(ct)) {
        char cts[200] = "";
        for (size_t i = 0; i < np_mbperf_ncontainers; i++)
            setup_append_name(cts, sizeof cts, np_mbperf_containers[i]);
        struct np_error rerr;
        json_t *rows = np_mb_launch_rows(&rerr);
        char *why = rows ? np_mb_container_why_not(rows, ct) : NULL;
        np_errorf("CONTAINER=%s: no launchable Megatron-Bridge rows for this container version%s%s; allowed: %s", ct,
                  why ? ": " : "", why ? why : "", cts);
        free(why);
        json_decref(rows);
        return 2;
    }
    if (!named || !np_mbperf_has_recipe(&p->mb, name, ct)) { /* with CONTAINER set, only its rows' names */
        char hint[3072];
        np_recipe_names_hint(NULL, &p->mb, ct, named ? name : NULL, hint, sizeof hint);
        np_errorf("RECIPE%s%s: not a Megatron-Bridge performance recipe%s%s; %s", named ? "=" : " is not set",
                  named ? name : "", ct ? " of CONTAINER=" : "", ct ? ct : "", hint);
        return 2;
    }
    enum np_mb_dtype d = dt ? np_mb_dtype_parse(dt) : NP_MB_DTYPE_NONE;
    const struct np_mbperf_row *row = NULL;
    const char *cv = setup_env("CONFIG_VARIANT"); /* as the launch: the container that has the variant */
    char cts[64] = "", gpus[128] = "", dts[128] = "", cvs[128] = "";
    for (size_t i = 0; i < p->mb.n; i++) { /* rows are newest container first: the first match is the default */
        const struct np_mbperf_row *r = &p->mb.rows[i];
        if (strcasecmp(r->recipe, name) != 0 || strcasecmp(r->task, task) != 0)
            continue;
        if (!setup_size_listed(cts, r->container))
            setup_append_name(cts, sizeof cts, r->container);
        if (ct && strcmp(r->container, ct) != 0)
            continue;
        if (!setup_size_listed(gpus, r->gpu_type))
            setup_append_name(gpus, sizeof gpus, r->gpu_type);
        if (gt && strcasecmp(r->gpu_type, gt) != 0)
            continue;
        if (!setup_size_listed(dts, np_mb_dtype_name(r->dtype)))
            setup_append_name(dts, sizeof dts, np_mb_dtype_name(r->dtype));
        if (dt && r->dtype != d)
            continue;
        if (r->config_variant && !setup_size_listed(cvs, r->config_variant))
            setup_append_name(cvs, sizeof cvs, r->config_variant);
        if (cv && !(r->config_variant && strcasecmp(r->config_variant, cv) == 0))
            continue;
        if (!row)
            row = r;
    }
    if (!row && cv && (!dt || strstr(dts, np_mb_dtype_name(d)))) {
        np_errorf("CONFIG_VARIANT=%s: %s has no published row with it%s; allowed: %s", cv, name,
                  ct ? " in this container" : "", cvs[0] ? cvs : "unset (its rows run without -cv)");
        return 2;
    }
    if (!row) {
        const char *var = !cts[0] ? "TASK" : !gpus[0] ? "CONTAINER" : gt && !dts[0] ? "GPU_TYPE" : "DTYPE";
        const char *val = setup_env(var) ? setup_env(var) : task;
        np_errorf("%s=%s: %s has no published row with it%s; allowed: %s", var, val, name,
                  ct ? " in this container" : "",
                  !cts[0] ? "pretrain (or sft, lora for llama3_70b in 26.06)" : !gpus[0] ? cts : gt && !dts[0] ? gpus
                                                                                                    : dts);
        return 2;
    }
    if (!ct)
        np_notef("CONTAINER not set: staging %s, the newest container version with %s%s%s%s%s%s%s (published in: %s)",
                 row->container, name, dt ? " " : "", dt ? np_mb_dtype_name(d) : "", gt ? " on " : "", gt ? gt : "",
                 cv ? " CONFIG_VARIANT=" : "", cv ? cv : "", cts);
    p->sources[0].repo = &row->repo;
    p->sources[0].dir = np_mbridge_checkout_dir(stage, &row->repo);
    p->sources[0].url = np_archive_url(setup_env("NEMOPERF_ARCHIVE_ENDPOINT"), &row->repo);
    p->nsources = 1;
    if (!p->sources[0].dir || !p->sources[0].url)
        return 1;
    char why[512];
    if (!skip_hf && np_mbhf_staged(stage, row->container, row->recipe, row->task, why, sizeof why) < 0) {
        np_errorf("%s %s %s: the Hugging Face files it reads are not known (%s); nothing was created", row->container,
                  row->recipe, row->task, why);
        return 1;
    }
    p->mbhf = skip_hf ? NULL : row;
    /* a LoRA row: setup makes its checkpoint and data (setup/mbridge_lora.h), unless --skip-hf leaves the Hub out */
    int lr = skip_hf ? 0 : np_mblora_plan(stage, row, &p->lora);
    if (lr < 0)
        return 1;
    p->have_lora = lr;
    struct np_launch_config lc; /* what the row reads that setup does not make (the LoRA rows' data, checkpoint) */
    memset(&lc, 0, sizeof lc);
    lc.mb = row;
    lc.stage_path = strdup(stage);
    for (size_t i = 0; lc.stage_path; i++) {
        char what[1600] = "";
        char *f = np_mbridge_perf_staged(&lc, i, what, sizeof what);
        struct stat sb;
        if (!f && !what[0])
            break;
        if (f && stat(f, &sb) != 0 && !p->have_lora)
            np_warnf("not staged (--skip-hf leaves it out): %s; the launch refuses the row until it is there", what);
        free(f);
    }
    free(lc.stage_path);
    int irc = skip_image ? 0 : setup_add_image(p, stage, setup_env("RUN_CONF_IMAGE"), &row->as_recipe);
    if (irc <= 0 && p->have_lora) { /* the image the row runs in (the one staged above, or already there) */
        const char *ri = setup_env("RUN_CONF_IMAGE");
        p->lora_sqsh = ri && ri[0] == '/' ? strdup(ri) : np_stage_sqsh_path(stage, ri ? ri : row->as_recipe.image);
        if (!p->lora_sqsh)
            return 1;
    }
    return irc > 0 ? irc : 0;
}

/* Resolve RECIPE / MODEL_SIZE / RUN_CONF_IMAGE into a plan.  Exit code or 0. */
static int setup_resolve(const struct np_recipe_set *set, const char *stage, int skip_image, int skip_hf,
                         int skip_pip, struct setup_plan *p)
{
    const char *recipe = setup_env("RECIPE"), *sizes = setup_env("MODEL_SIZE");
    const struct np_recipe *chosen = recipe ? np_recipe_find(set, recipe) : NULL;
    for (size_t m = 0; !sizes && chosen && m < chosen->nmodels; m++)
        if (chosen->models[m].automodel) /* RECIPE=automodel: rows are named by their benchmark YAML */
            sizes = setup_env("MODEL");
    const char *run_image = setup_env("RUN_CONF_IMAGE");
    char known[512] = "";
    for (size_t i = 0; i < set->n; i++)
        setup_append_name(known, sizeof known, set->recipes[i].name);
    if (recipe && strcasecmp(recipe, NP_NCCLT_RECIPE) == 0) { /* the fabric check: the image is all it reads */
        if (sizes || setup_env("CONTAINER")) {
            np_errorf("%s=%s: RECIPE=%s runs NVIDIA's nccl-tests binaries from its container image, no model; "
                      "allowed: unset", sizes ? "MODEL_SIZE" : "CONTAINER", sizes ? sizes : setup_env("CONTAINER"),
                      NP_NCCLT_RECIPE);
            return 2;
        }
        return skip_image ? 0 : setup_add_image(p, stage, run_image, np_ncclt_recipe()) > 0 ? 1 : 0;
    }
    if (setup_env("CONTAINER") || (recipe && !np_recipe_find(set, recipe))) { /* Megatron-Bridge's rows */
        int mrc = setup_resolve_mb(stage, skip_image, skip_hf, p);
        if (mrc >= 0)
            return mrc;
    }
    if (recipe && !np_recipe_find(set, recipe)) { /* both namespaces named, nearest first (model/recipe_names.c) */
        struct np_mbperf_set mb;
        struct np_error ignored;
        char hint[3072];
        int have_mb = np_mbperf_load(NULL, &mb, &ignored) == NP_OK;
        np_recipe_names_hint(set, have_mb ? &mb : NULL, NULL, recipe, hint, sizeof hint);
        if (have_mb)
            np_mbperf_free(&mb);
        np_errorf("RECIPE=%s: unknown recipe; %s", recipe, hint);
        return 2;
    }
    /* every listed size must exist in a candidate recipe */
    if (sizes) {
        char *copy = strdup(sizes);
        if (!copy)
            return 1;
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ')
                tok++;
            int found = 0;
            char valid[512] = "";
            for (size_t i = 0; i < set->n; i++) {
                const struct np_recipe *r = &set->recipes[i];
                if (recipe ? strcmp(r->name, recipe) != 0 : !r->infer)
                    continue;
                for (size_t m = 0; m < r->nmodels; m++) {
                    char item[96];
                    snprintf(item, sizeof item, "%s%s%s", recipe ? "" : r->name, recipe ? "" : " ",
                             r->models[m].size);
                    setup_append_name(valid, sizeof valid, item);
                    if (strcasecmp(r->models[m].size, tok) == 0)
                        found = 1;
                }
            }
            if (!found) {
                np_errorf("MODEL_SIZE: '%s' is not a model size of %s%s (valid: %s)", tok,
                          recipe ? "recipe " : "the default recipes", recipe ? recipe : "", valid);
                free(copy);
                return 2;
            }
        }
        free(copy);
    }
    for (size_t i = 0; i < set->n; i++) {
        const struct np_recipe *r = &set->recipes[i];
        if (recipe ? strcmp(r->name, recipe) != 0 : !r->infer)
            continue;
        int any = 0;
        for (size_t m = 0; m < r->nmodels; m++) {
            const struct np_model *mod = &r->models[m];
            if (!setup_size_listed(sizes, mod->size))
                continue;
            any = 1;
            for (size_t j = 0; mod->mbridge && j < mod->mbridge->nrepos; j++) { /* the pinned checkouts */
                const struct np_mbridge_repo *src = &mod->mbridge->repos[j];
                size_t k = 0;
                while (k < p->nsources && strcmp(p->sources[k].repo->commit, src->commit) != 0)
                    k++;
                if (k < p->nsources || k == sizeof p->sources / sizeof p->sources[0])
                    continue;
                p->sources[k].repo = src;
                p->sources[k].dir = np_mbridge_checkout_dir(stage, src);
                p->sources[k].url = np_archive_url(setup_env("NEMOPERF_ARCHIVE_ENDPOINT"), src);
                p->nsources++;
                if (!p->sources[k].dir || !p->sources[k].url)
                    return 1;
            }
            if (mod->mbridge && mod->mbridge->pip && !skip_pip && p->npips < sizeof p->pips / sizeof p->pips[0]) {
                struct setup_pip *pp = &p->pips[p->npips++];
                pp->r = r;
                pp->m = mod;
                pp->sqsh = run_image && run_image[0] == '/' ? strdup(run_image) : np_stage_sqsh_path(stage, r->image);
                if (!pp->sqsh)
                    return 1;
            }
            if (mod->mbridge && mod->mbridge->am_hf_model && !skip_hf) { /* DFM's AutoModel rows: the pipeline */
                const char *hr = mod->mbridge->am_hf_model;
                size_t d = 0;
                while (d < p->nrepos && strcmp(p->repos[d].repo, hr) != 0)
                    d++;
                if (d == p->nrepos && d < sizeof p->repos / sizeof p->repos[0]) {
                    if (!np_hf_repo_valid(hr)) {
                        np_errorf("%s: models.%s.mbridge.automodel.hf_model: '%s' is not a Hugging Face repo id",
                                  r->path, mod->size, hr);
                        return 2;
                    }
                    p->repos[d] = (struct setup_repo){.repo = hr, .diffusers = 1, .dir = np_stage_hf_dir(stage, hr)};
                    snprintf(p->repos[d].models, sizeof p->repos[d].models, "%s %s (AutoModel rows)", r->name,
                             mod->size);
                    p->nrepos++;
                    if (!p->repos[d].dir)
                        return 1;
                }
            }
            if (!mod->hf_repo || skip_hf)
                continue;
            size_t k;
            for (k = 0; k < p->nrepos && strcmp(p->repos[k].repo, mod->hf_repo) != 0; k++)
                ;
            if (k == p->nrepos) {
                if (p->nrepos == sizeof p->repos / sizeof p->repos[0])
                    continue;
                if (!np_hf_repo_valid(mod->hf_repo)) {
                    np_errorf("%s: models.%s.hf_repo: '%s' is not a Hugging Face repo id", r->path, mod->size,
                              mod->hf_repo);
                    return 2;
                }
                p->repos[k].repo = mod->hf_repo;
                p->repos[k].am = NULL;
                p->repos[k].diffusers = 0;
                p->repos[k].dir = np_stage_hf_dir(stage, mod->hf_repo);
                p->repos[k].models[0] = '\0';
                p->nrepos++;
                if (!p->repos[k].dir)
                    return 1;
            }
            if (mod->automodel && (!p->repos[k].am || mod->automodel->from_pretrained))
                p->repos[k].am = mod;
            char item[96];
            snprintf(item, sizeof item, "%s %s", r->name, mod->size);
            setup_append_name(p->repos[k].models, sizeof p->repos[k].models, item);
        }
        if (!any || skip_image)
            continue;
        int irc = setup_add_image(p, stage, run_image, r);
        if (irc > 0)
            return irc;
    }
    return 0;
}

/* Progress of a download on a terminal: one redrawn line, at most 5 times a second. */
struct setup_progress {
    long long last_ms;
    int shown;
};

static long long setup_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The seconds of a deadline variable (NEMOPERF_HF_DEADLINE ...) into *out: 0 when unset or empty (the default),
 * else 1 to 86400; -1 (said) when it is anything else. */
static int setup_seconds(const char *name, long *out)
{
    const char *v = getenv(name);
    *out = 0;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || end == v || n < 1 || n > 86400) {
        np_errorf("%s=%s: not a number of seconds; allowed: 1 to 86400", name, v);
        return -1;
    }
    *out = n;
    return 0;
}

static void setup_progress_cb(void *ctx, const char *file, long long have, long long total, int done)
{
    struct setup_progress *sp = ctx;
    long long now = setup_now_ms();
    if (!done && now - sp->last_ms < 200)
        return;
    sp->last_ms = now;
    if (done) {
        if (sp->shown)
            fprintf(stderr, "\r\033[K");
        sp->shown = 0;
        return;
    }
    if (total > 0)
        fprintf(stderr, "\r\033[K%s: %.1f of %.1f KiB (%d%%)", file, have / 1024.0, total / 1024.0,
                (int)(100.0 * (double)have / (double)total));
    else
        fprintf(stderr, "\r\033[K%s: %.1f KiB", file, have / 1024.0);
    fflush(stderr);
    sp->shown = 1;
}

/* Print s as one sh word: bare when it holds only safe characters, else quoted. */
static void setup_print_word(const char *s)
{
    int safe = *s != '\0';
    for (const char *p = s; *p && safe; p++)
        safe = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", *p) != NULL;
    if (safe) {
        fputs(s, setup_out);
        return;
    }
    char *q = np_shell_quote(s);
    fputs(q ? q : "?", setup_out);
    free(q);
}

/* Print a command as one sh line. */
static void setup_print_argv(char **argv)
{
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            fputc(' ', setup_out);
        setup_print_word(argv[i]);
    }
    fputc('\n', setup_out);
}

static void setup_print_quoted(const char *prefix, const char *s, const char *suffix)
{
    fputs(prefix, setup_out);
    setup_print_word(s);
    fputs(suffix, setup_out);
}

static void setup_dry_run(const struct setup_plan *p, const struct np_import_opts *io, const char *endpoint,
                          int have_token)
{
    fprintf(setup_out, "# nemoperf-setup plan (dry run: nothing is created, imported or downloaded)\n");
    setup_print_quoted("mkdir -p ", p->stage, "");
    char buf[8192];
    snprintf(buf, sizeof buf, "%s/%s", p->stage, NP_STAGE_EXPERIMENTS);
    setup_print_quoted(" ", buf, "");
    snprintf(buf, sizeof buf, "%s/%s", p->stage, NP_STAGE_HF);
    setup_print_quoted(" ", buf, "\n");
    for (size_t i = 0; i < p->nimages; i++) {
        const struct setup_image *im = &p->images[i];
        fprintf(setup_out, "# container %s (recipes: %s)\n", im->image, im->recipes);
        if (im->use_existing) {
            fprintf(setup_out, "# RUN_CONF_IMAGE names an existing image: no import\n");
            continue;
        }
        if (im->present) {
            fprintf(setup_out, "# keep the existing %s\n", im->sqsh);
            continue;
        }
        const char *slash = strrchr(im->sqsh, '/');
        snprintf(buf, sizeof buf, "%.*s/.%s.importing.HOST.PID", (int)(slash - im->sqsh), im->sqsh, slash + 1);
        char **argv = np_stage_import_argv(im->image, buf, io);
        if (argv) {
            setup_print_argv(argv);
            np_strv_free(argv);
        }
        setup_print_quoted("mv ", buf, "");
        setup_print_quoted(" ", im->sqsh, "\n");
    }
    for (size_t i = 0; i < p->nsources; i++) {
        const struct setup_source *s = &p->sources[i];
        if (access(s->dir, F_OK) == 0) {
            fprintf(setup_out, "# keep the existing checkout %s\n", s->dir);
            continue;
        }
        fprintf(setup_out, "# %s at %s: archive checked (gzip/tar whole, top folder named by the commit), unpacked "
                           "beside the target, renamed into place\n", s->repo->github, s->repo->commit);
        fprintf(setup_out, "GET %s -> %s/src/.%s-%s.tar.gz (.part resumed)\n", s->url, p->stage, s->repo->name,
                s->repo->commit);
        setup_print_quoted("mv <unpacked> ", s->dir, "\n");
    }
    for (size_t i = 0; i < p->nrepos; i++) {
        const struct setup_repo *r = &p->repos[i];
        if (r->diffusers) {
            fprintf(setup_out, "# Hugging Face %s (Diffusers pipeline, not gated; models: %s)\n", r->repo,
                    r->models);
            fprintf(setup_out, "GET %s/api/models/%s (its file list)\n", endpoint, r->repo);
            fprintf(setup_out, "GET model_index.json, then every file under the folders of the components it "
                               "names (.part files resumed), model_index.json renamed into place last -> %s/\n",
                    r->dir);
            continue;
        }
        if (r->am) {
            const struct np_automodel_spec *a = r->am->automodel;
            fprintf(setup_out, "# Hugging Face %s (%s; models: %s%s)\n", r->repo, a->gated ? "gated" : "not gated", r->models,
                   a->gated ? (have_token ? "; Authorization: Bearer <HF_TOKEN, not shown>" : "; HF_TOKEN MISSING")
                            : "");
            fprintf(setup_out, "GET %s/api/models/%s\n", endpoint, r->repo);
            fprintf(setup_out, "GET %s/%s/resolve/%s/config.json -> %s/config.json\n", endpoint, r->repo, NP_HF_DEFAULT_REVISION,
                   r->dir);
            if (a->trust_remote_code)
                fprintf(setup_out, "GET the Python modules config.json's auto_map names (trust_remote_code) -> %s/\n", r->dir);
            if (a->from_pretrained)
                fprintf(setup_out, "GET model.safetensors.index.json, then every shard it lists (from_pretrained: the weights; "
                       "free space checked against its total_size first, .part files resumed) -> %s/\n",
                       r->dir);
            continue;
        }
        fprintf(setup_out, "# Hugging Face %s (gated; models: %s; Authorization: Bearer <HF_TOKEN%s>)\n", r->repo, r->models,
               have_token ? ", not shown" : " MISSING");
        fprintf(setup_out, "GET %s/api/models/%s\n", endpoint, r->repo);
        for (const struct np_hf_file_spec *f = np_hf_model_files; f->name; f++)
            fprintf(setup_out, "GET %s/%s/resolve/%s/%s -> %s/%s%s\n", endpoint, r->repo, NP_HF_DEFAULT_REVISION, f->name,
                   r->dir, f->name, f->required ? "" : " (optional)");
    }
}

/* Import every image; number of failures. */
static int setup_images(struct setup_plan *p, const struct np_import_opts *io)
{
    int failures = 0;
    for (size_t i = 0; i < p->nimages && !setup_signal; i++) {
        struct setup_image *im = &p->images[i];
        if (im->use_existing) {
            np_notef("container: using RUN_CONF_IMAGE %s (no import)", im->sqsh);
            fprintf(setup_out, "image    %s (RUN_CONF_IMAGE, not imported)\n", im->sqsh);
            continue;
        }
        struct np_error err = {0};
        enum np_import_outcome out;
        enum np_status st = np_stage_import(im->image, im->sqsh, io, &out, &err);
        if (st != NP_OK) {
            np_error_print(&err);
            failures++;
            continue;
        }
        if (out == NP_IMPORT_KEPT)
            np_notef("container: %s already staged, kept", im->sqsh);
        else
            np_notef("container: imported %s", im->sqsh);
        fprintf(setup_out, "image    %s (%s)\n", im->sqsh, out == NP_IMPORT_KEPT ? "already staged" : "imported");
    }
    return failures;
}

/* Fetch the files of every repo of the plan (access was checked before the import: setup_access); number of
 * failures. */
static int setup_hf(struct setup_plan *p, struct np_hf_client *c)
{
    int failures = 0;
    for (size_t i = 0; i < p->nrepos && !setup_signal; i++) {
        struct setup_repo *r = &p->repos[i];
        struct np_error err = {0};
        enum np_status st;
        if (r->diffusers) {
            struct np_diffusers_staged sd;
            st = np_diffusers_stage(c, r->repo, r->dir, &sd, &err);
            if (st != NP_OK) {
                np_error_print(&err);
                failures++;
            }
            fprintf(setup_out, "hf       %s -> %s (Diffusers pipeline: downloaded %d, already staged %d, outside the "
                               "pipeline %d%s)\n", r->repo, r->dir, sd.fetched, sd.present, sd.skipped,
                    st != NP_OK ? ", FAILED" : "");
            continue;
        }
        if (r->am) {
            struct np_automodel_staged sd;
            st = np_automodel_stage(c, r->am, r->dir, NULL, &sd, &err);
            if (st != NP_OK) {
                np_error_print(&err);
                failures++;
            }
            fprintf(setup_out, "hf       %s -> %s (%s: downloaded %d, already staged %d, not in repo %d; %d remote-code "
                   "module(s), %d weight shard(s)%s)\n",
                   r->repo, r->dir, r->am->automodel->from_pretrained ? "from_pretrained" : "from_config", sd.fetched,
                   sd.present, sd.absent, sd.code_files, sd.shards, st != NP_OK ? ", FAILED" : "");
            continue;
        }
        int fetched = 0, present = 0, absent = 0, bad = 0;
        for (const struct np_hf_file_spec *f = np_hf_model_files; f->name && !setup_signal; f++) {
            enum np_hf_fetch what;
            long long bytes = 0;
            st = np_hf_fetch_file(c, r->repo, NULL, f->name, r->dir, &what, &bytes, &err);
            if (st != NP_OK) {
                np_error_print(&err);
                bad++;
                if (err.text[0] && strstr(err.text, "access denied"))
                    break;
                continue;
            }
            switch (what) {
            case NP_HF_FETCHED:
                fetched++;
                np_notef("%s: downloaded %s (%lld bytes)", r->repo, f->name, bytes);
                break;
            case NP_HF_PRESENT:
                present++;
                break;
            case NP_HF_ABSENT:
                if (f->required) {
                    np_errorf("%s: %s is not in the repository (HTTP 404) but is required", r->repo, f->name);
                    bad++;
                } else {
                    absent++;
                    np_notef("%s: %s is not in the repository (HTTP 404); optional, skipped", r->repo, f->name);
                }
                break;
            }
        }
        if (bad)
            failures++;
        fprintf(setup_out, "hf       %s -> %s (downloaded %d, already staged %d, not in repo %d%s)\n", r->repo, r->dir, fetched,
               present, absent, bad ? ", FAILED" : "");
    }
    return failures;
}

/* Stage every pinned checkout; number of failures. */
static int setup_sources(struct setup_plan *p, struct np_hf_client *c)
{
    int failures = 0;
    for (size_t i = 0; i < p->nsources && !setup_signal; i++) {
        struct setup_source *s = &p->sources[i];
        struct np_error err = {0};
        enum np_archive_outcome out;
        long long bytes = 0;
        enum np_status st = np_archive_stage(c, setup_env("NEMOPERF_ARCHIVE_ENDPOINT"), p->stage, s->repo, NULL, &out,
                                             &bytes, &err);
        if (st != NP_OK) {
            np_error_print(&err);
            failures++;
            fprintf(setup_out, "source   %s@%s -> %s (FAILED)\n", s->repo->github, s->repo->commit, s->dir);
            continue;
        }
        if (out == NP_ARCHIVE_STAGED)
            np_notef("%s: staged %s at %s (%lld-byte archive)", s->repo->name, s->repo->github, s->repo->commit, bytes);
        fprintf(setup_out, "source   %s@%s -> %s (%s)\n", s->repo->github, s->repo->commit, s->dir,
                out == NP_ARCHIVE_STAGED ? "downloaded" : "already staged");
    }
    return failures;
}

/* TASK: for sft/lora, the models to prepare (printing the disk they need), RECIPE
 * defaulting to the recipe of the fine-tuning rows.  Exit code or 0. */
static int setup_task(const struct np_recipe_set *set, const char *stage, int skip_hf, enum np_task *task,
                      struct np_ftprep_plan *ftp)
{
    const char *t = setup_env("TASK");
    if (t && np_task_parse(t, task) != 0) {
        np_errorf("TASK=%s: unknown task; allowed: pretrain, sft, lora", t);
        return 2;
    }
    if (*task == NP_TASK_PRETRAIN)
        return 0;
    if (skip_hf) {
        np_errorf("TASK=%s with --skip-hf: fine-tuning needs the model's weights from Hugging Face; drop --skip-hf",
                  t);
        return 2;
    }
    if (strpbrk(stage, ":,")) {
        np_errorf("STAGE_PATH=%s: TASK=%s mounts it into the container with pyxis --container-mounts, which cannot "
                  "take a path with ':' or ','; allowed: a path without them", stage, t);
        return 2;
    }
    struct np_error err = {0};
    if (np_ftprep_resolve(set, setup_env("RECIPE"), setup_env("MODEL_SIZE"), *task, stage, ftp, &err) != NP_OK) {
        np_error_print(&err);
        return 2;
    }
    if (!setup_env("RECIPE")) /* the image and tokenizer steps stage the same recipe */
        setenv("RECIPE", ftp->models[0].recipe->name, 1);
    if (!setup_env("MODEL_SIZE")) {
        char sizes[128] = "";
        for (size_t i = 0; i < ftp->n; i++)
            setup_append_name(sizes, sizeof sizes, ftp->models[i].model->size);
        setenv("MODEL_SIZE", sizes, 1);
    }
    char need[32];
    double b = ftp->need_bytes;
    if (b >= 1e12)
        snprintf(need, sizeof need, "%.2f TB", b / 1e12);
    else
        snprintf(need, sizeof need, "%.1f GB", b / 1e9);
    np_notef("TASK=%s needs about %s more on STAGE_PATH (bf16 weights downloaded, the NeMo checkpoint imported "
             "from them, SQuAD); checked against the free space before the weights are downloaded",
             np_task_name(*task), need);
    return 0;
}

static void setup_dry_run_ft(const struct np_ftprep_plan *ftp, const struct setup_plan *p,
                             const struct np_import_opts *io, const char *endpoint)
{
    fprintf(setup_out, "# TASK=%s: about %.1f GB more on %s; the weights and SQuAD from the Hub, then one job per model\n",
           np_task_name(ftp->task), ftp->need_bytes / 1e9, p->stage);
    int data = 0;
    for (size_t i = 0; i < ftp->n; i++) {
        const struct np_ftprep_model *m = &ftp->models[i];
        data |= !m->prepared;
        if (!m->imported)
            fprintf(setup_out, "GET %s/%s/resolve/%s/model.safetensors.index.json -> %s/%s/%s/ (then each shard it names; "
                   "the free space is checked first)\n",
                   endpoint, m->model->hf_repo, NP_HF_DEFAULT_REVISION, p->stage, NP_STAGE_HF, m->model->hf_repo);
    }
    for (const char *const *f = np_ftprep_squad_files; data && *f; f++)
        fprintf(setup_out, "GET %s/datasets/%s/resolve/%s/%s -> %s/%s/plain_text/\n", endpoint, NP_FT_SQUAD_REPO, NP_FT_SQUAD_REV, *f,
               p->stage, NP_FT_PARQUET_DIR);
    struct np_ftprep_job_opts fo = {p->nimages ? p->images[0].sqsh : NULL, NULL, io->account, io->partition,
                                    io->log_dir, NULL};
    for (size_t i = 0; i < ftp->n; i++) {
        const struct np_ftprep_model *m = &ftp->models[i];
        if (m->imported && m->prepared) {
            fprintf(setup_out, "# %s %s: checkpoint and packed SQuAD already staged\n", m->recipe->name, m->model->size);
            continue;
        }
        char **argv = np_ftprep_job_argv(ftp, m, &fo);
        if (argv) {
            setup_print_argv(argv);
            np_strv_free(argv);
        }
    }
}

/* --sbatch: the import job's request through sbatch --test-only, as launch checks its jobs (the user's
 * SBATCH_* reach it): 2 when Slurm says it can never run (said; a warning under --dry-run), else 0. */
static int setup_sbatch_check(const struct np_import_opts *io, int dry_run)
{
    char script[3000]; /* account and partition: at most 1024 bytes each (np_sbatch_env_check) */
    snprintf(script, sizeof script,
             "#!/bin/sh\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --time=" NP_STAGE_SBATCH_TIME
             "\n#SBATCH --job-name=nemoperf-setup\n%s%s%s%s%s%strue\n",
             io->account ? "#SBATCH --account=" : "", io->account ? io->account : "", io->account ? "\n" : "",
             io->partition ? "#SBATCH --partition=" : "", io->partition ? io->partition : "",
             io->partition ? "\n" : "");
    struct np_backend be;
    struct np_error err;
    struct np_slurm_cli_opts o = {.sbatch = io->sbatch_prog};
    if (np_slurm_cli_backend(&be, &o, &err) != NP_OK)
        return 0; /* no sbatch: the check of the tools says so */
    char *msg = NULL;
    enum np_status st = np_slurm_cli_test_only_text(&be, script, &msg, &err);
    free(msg);
    np_backend_free(&be);
    if (st == NP_E_INVALID) {
        if (dry_run) {
            np_warnf("--sbatch: Slurm can never run the import job (sbatch %s; the SBATCH_* settings reach it); "
                     "--dry-run goes on, ./setup would stop here",
                     err.text);
            return 0;
        }
        np_errorf("--sbatch: Slurm can never run the import job (sbatch %s; the SBATCH_* settings reach it: correct "
                  "or unset the one at fault); nothing was created or downloaded",
                  err.text);
        return 2;
    }
    if (st != NP_OK)
        np_warnf("--sbatch: cannot check that the import job can run (%s); going on", err.text);
    return 0;
}

/* The Hub repos whose access ./setup checks before anything is created: every repo of the plan, gated or not
 * (a gated one may be refused; any may be misnamed or gone: a 404 after a long import was the last step to
 * fail), and every repo of the Megatron-Bridge row's hf-files.tsv rows (the data does not say which are gated:
 * the Hub's auth-check does).  Up to cap names into names, borrowed from p and mb (loaded here when p->mbhf; the
 * caller frees it); their number, or -1 when the row's data cannot be read. */
static int setup_access_repos(const struct setup_plan *p, struct np_mbhf_set *mb, const char **names, int cap)
{
    int n = 0;
    for (size_t i = 0; i < p->nrepos && n < cap; i++) {
        int seen = 0;
        for (int k = 0; k < n && !seen; k++)
            seen = strcmp(names[k], p->repos[i].repo) == 0;
        if (!seen)
            names[n++] = p->repos[i].repo;
    }
    struct np_error err = {0};
    if (!p->mbhf)
        return n;
    if (np_mbhf_load(NULL, mb, &err) != NP_OK) {
        np_error_print(&err);
        return -1;
    }
    for (size_t i = 0; i < mb->n && n < cap; i++) {
        const struct np_mbhf_entry *e = &mb->v[i];
        int seen = !np_mbhf_matches(e, p->mbhf->container, p->mbhf->recipe, p->mbhf->task) || np_mbhf_none(e);
        for (int k = 0; k < n && !seen; k++)
            seen = strcmp(names[k], e->repo) == 0;
        if (!seen)
            names[n++] = e->repo;
    }
    return n;
}

/* Before the container import and before anything is created: one request per repo of setup_access_repos,
 * the Hub's auth-check (hf.h; setup_hf then stages without asking again).  Denied
 * (401/403: hf.c's message naming the page and HF_TOKEN) or not found (404): exit 2; no answer (network, 5xx):
 * exit 1, said as such, never as a denial.  --dry-run stays offline: the plan says the check was not made. */
static int setup_access(const struct setup_plan *p, struct np_hf_client *c, int dry_run)
{
    const char *names[96];
    struct np_mbhf_set mb = {0};
    int n = setup_access_repos(p, &mb, names, (int)(sizeof names / sizeof names[0]));
    int rc = n < 0 ? 1 : 0;
    char list[1024] = "";
    for (int i = 0; i < n; i++)
        setup_append_name(list, sizeof list, names[i]);
    if (dry_run && n > 0)
        fprintf(setup_out, "# Hugging Face access to %s: not checked (--dry-run makes no request); ./setup checks "
                           "it before the container import and stops when it is denied\n", list);
    for (int i = 0; !dry_run && rc != 1 && i < n; i++) {
        struct np_error err = {0};
        long code = 0;
        enum np_status st = np_hf_auth_check(c, names[i], &code, &err);
        if (st == NP_OK) {
            np_notef("%s: access granted", names[i]);
        } else if (code == 401 || code == 403 || st == NP_E_NOTFOUND || st == NP_E_INVALID) {
            np_error_print(&err);
            rc = 2;
        } else {
            np_errorf("%s: cannot check Hugging Face access: %s; no usable answer from %s (not a denial of "
                      "access): nothing was created and no container import was started; run again when it "
                      "answers (HF_ENDPOINT), or stage the rest with --skip-hf",
                      names[i], err.text, np_hf_endpoint(c));
            rc = 1;
        }
    }
    if (rc == 2)
        np_errorf("Hugging Face access is checked before the container import: nothing was created and no "
                  "import was started");
    np_mbhf_free(&mb);
    return rc;
}

/* The run of np_setup_run as an exit code (0 staged, 1 a step failed, 2 bad environment); *sig_out
 * is the signal that interrupted it, or 0. */
static int setup_body(const struct np_setup_opts *o, int *sig_out)
{
    int sbatch = o->sbatch, skip_image = o->skip_image, skip_hf = o->skip_hf, dry_run = o->dry_run,
        quiet = o->quiet;
    /* ---- validation: nothing is created before this block passes ---- */
    char *typos = np_env_check(environ);
    if (typos) {
        for (char *line = strtok(typos, "\n"); line; line = strtok(NULL, "\n"))
            np_errorf("%s", line);
        np_errorf("nothing was created; correct or unset what is named above");
        free(typos);
        return 2;
    }
    struct np_error err = {0};
    /* the SBATCH_* reach the import, pip and fine-tuning jobs' sbatch: launch's checks, before any download */
    if (np_sbatch_env_check(NULL, NULL, &err) != NP_OK) {
        np_error_print(&err);
        return 2;
    }
    const char *stage = getenv("STAGE_PATH");
    if (np_stage_check_path(stage, &err) != NP_OK ||
        np_stage_check_value("RUN_CONF_IMAGE", setup_env("RUN_CONF_IMAGE"), &err) != NP_OK) { /* as launch */
        np_error_print(&err);
        return 2;
    }
    char *stage_c = strdup(stage); /* without trailing slashes */
    if (!stage_c)
        return 1;
    for (size_t n = strlen(stage_c); n > 1 && stage_c[n - 1] == '/'; n--)
        stage_c[n - 1] = '\0';
    const char *token = setup_env("HF_TOKEN");
    const char *endpoint = setup_env("HF_ENDPOINT");

    struct np_recipe_set set;
    if (np_recipe_set_load_default(&set, &err) != NP_OK) {
        np_error_print(&err);
        free(stage_c);
        np_recipe_set_free(&set);
        return 1;
    }
    /* TASK=sft|lora: the fine-tuning models (ftprep.h); RECIPE defaults to theirs */
    enum np_task task = NP_TASK_PRETRAIN;
    struct np_ftprep_plan ftp;
    memset(&ftp, 0, sizeof ftp);
    int mbrow = setup_env("CONTAINER") || (setup_env("RECIPE") && !np_recipe_find(&set, setup_env("RECIPE")));
    int rc = mbrow ? 0 : setup_task(&set, stage_c, skip_hf, &task, &ftp); /* MB rows: their own TASK (resolve) */
    struct setup_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.stage = stage_c;
    if (rc == 0)
        rc = setup_resolve(&set, stage_c, skip_image, skip_hf, o->skip_pip, &plan);

    struct setup_progress prog = {0, 0};
    struct np_hf_opts ho = {.endpoint = endpoint, .token = token, .cancel = &setup_signal};
    if (setup_seconds("NEMOPERF_HF_DEADLINE", &ho.deadline_s) || setup_seconds("NEMOPERF_HF_CHECK_DEADLINE",
                                                                                 &ho.check_deadline_s))
        rc = 2;
    if (!quiet && isatty(STDERR_FILENO)) {
        ho.progress = setup_progress_cb;
        ho.progress_ctx = &prog;
    }
    struct np_hf_client *client = NULL;
    if (rc == 0 && np_hf_client_new(&ho, &client, &err) != NP_OK) {
        np_error_print(&err);
        rc = 2;
    }
    size_t ngated = 0;
    for (size_t i = 0; i < plan.nrepos; i++)
        ngated += !plan.repos[i].diffusers && (!plan.repos[i].am || plan.repos[i].am->automodel->gated);
    if (rc == 0 && ngated && !token) {
        char repos[512] = "";
        for (size_t i = 0; i < plan.nrepos; i++)
            if (!plan.repos[i].diffusers && (!plan.repos[i].am || plan.repos[i].am->automodel->gated))
                setup_append_name(repos, sizeof repos, plan.repos[i].repo);
        size_t g = 0;
        while (g + 1 < plan.nrepos &&
               (plan.repos[g].diffusers || (plan.repos[g].am && !plan.repos[g].am->automodel->gated)))
            g++;
        char *url = np_hf_model_url(client, plan.repos[g].repo);
        setup_missing_tool(dry_run, &rc,
                           "HF_TOKEN: not set, and %s %s gated on Hugging Face: request access on %s, create a "
                           "read token and export HF_TOKEN=<token> (or stage without the tokenizer files: --skip-hf)",
                           repos, ngated > 1 ? "are" : "is", url ? url : "the model page");
        free(url);
    }
    struct np_import_opts io = {.sbatch = sbatch, .account = setup_env("SBATCH_ACCOUNT"),
                                .partition = setup_env("SBATCH_PARTITION"), .cancel = &setup_signal};
    char logs[4096];
    snprintf(logs, sizeof logs, "%s/%s", stage_c, NP_STAGE_LOGS);
    io.log_dir = logs;
    int to_import = 0;
    for (size_t i = 0; i < plan.nimages; i++)
        to_import += !plan.images[i].present;
    if (rc == 0 && to_import) {
        const char *tool = sbatch ? "sbatch" : "enroot";
        char *found = np_path_search(tool, getenv("PATH"));
        if (!found) {
            if (sbatch)
                setup_missing_tool(dry_run, &rc,
                                   "sbatch: not found on PATH: --sbatch submits the import as a Slurm job (install "
                                   "the Slurm client, or import locally without --sbatch, or use --skip-image)");
            else
                setup_missing_tool(dry_run, &rc,
                                   "enroot: not found on PATH: it imports the container %s (install enroot from "
                                   "https://github.com/NVIDIA/enroot, run the import on a compute node with "
                                   "--sbatch, or use --skip-image to stage the rest)",
                                   plan.images[0].image);
        }
        free(found);
    }
    if (rc == 0 && plan.npips) {
        char *found = np_path_search("sbatch", getenv("PATH"));
        if (!found) {
            np_errorf("sbatch: not found on PATH: RECIPE=%s pip-installs its packages in a one-node Slurm job "
                      "(install the Slurm client, or stage the rest with --skip-pip)", plan.pips[0].r->name);
            rc = 2;
        }
        free(found);
    }
    if (rc == 0 && task != NP_TASK_PRETRAIN) {
        char *found = np_path_search("sbatch", getenv("PATH"));
        if (!found) {
            setup_missing_tool(dry_run, &rc,
                               "sbatch: not found on PATH: TASK=%s prepares the checkpoint and the data in a "
                               "one-node Slurm job (install the Slurm client)",
                               np_task_name(task));
        }
        free(found);
    }
    /* before anything is created or downloaded: what Slurm can never accept (SBATCH_CONSTRAINT="a'b"), as launch */
    if (rc == 0 && sbatch && to_import)
        rc = setup_sbatch_check(&io, dry_run);
    /* a LoRA row's job: sbatch, and a node with a GPU Slurm can give it (before anything is created) */
    struct np_ftprep_job_opts lo = {plan.lora_sqsh, NULL, io.account, io.partition, logs, &setup_signal};
    if (rc == 0 && plan.have_lora && !(plan.lora.have_ckpt && plan.lora.have_data)) {
        char *found = np_path_search("sbatch", getenv("PATH"));
        if (!found)
            setup_missing_tool(dry_run, &rc,
                               "sbatch: not found on PATH: the LoRA row's checkpoint conversion and SQuAD cache run "
                               "in a one-node Slurm job (install the Slurm client, or stage the rest with --skip-hf)");
        else
            rc = np_mblora_check_slurm(&plan.lora, &lo, dry_run);
        free(found);
    }
    /* last, as it asks the Hub: access to every repo setup fetches from, before the long import */
    if (rc == 0 && !dry_run)
        rc = setup_access(&plan, client, 0);
    if (rc != 0 || dry_run) {
        if (rc == 0)
            setup_dry_run(&plan, &io, np_hf_endpoint(client),
                          token != NULL);
        if (rc == 0)
            rc = setup_access(&plan, client, 1);
        for (size_t i = 0; rc == 0 && i < plan.npips; i++) {
            struct np_pip_job_opts po = {plan.pips[i].sqsh, NULL, io.account, io.partition, logs, NULL};
            char **argv = np_pip_job_argv(stage_c, plan.pips[i].r, plan.pips[i].m, &po);
            fprintf(setup_out, "# pip packages of %s %s (one-node job in %s; renamed into place when it succeeds)\n",
                    plan.pips[i].r->name, plan.pips[i].m->size, plan.pips[i].sqsh);
            if (argv)
                setup_print_argv(argv);
            np_strv_free(argv);
        }
        if (rc == 0 && task != NP_TASK_PRETRAIN)
            setup_dry_run_ft(&ftp, &plan, &io, np_hf_endpoint(client));
        if (rc == 0 && plan.mbhf)
            rc = np_mbhf_setup(stage_c, plan.mbhf->recipe, plan.mbhf->container, plan.mbhf->task, client, 1, setup_out);
        if (rc == 0 && plan.have_lora)
            np_mblora_dry_run(&plan.lora, &lo, np_hf_endpoint(client), setup_out);
        if (rc == 0 && np_stream_check(setup_out, setup_out == stdout ? "standard output" : "the plan's stream"))
            rc = 1;
        np_hf_client_free(client);
        setup_plan_free(&plan);
        np_recipe_set_free(&set);
        free(stage_c);
        return rc;
    }

    /* ---- staging ---- */
    setup_trap_signals();
    int failures = 0, created = 0;
    if (np_stage_make_layout(stage_c, &created, &err) != NP_OK) {
        np_error_print(&err);
        failures++;
    } else {
        if (created)
            np_notef("created the layout under %s (%d new folder%s)", stage_c, created, created == 1 ? "" : "s");
        fprintf(setup_out, "stage    %s (experiments/, hf/)\n", stage_c);
        failures += setup_images(&plan, &io);
        if (plan.nsources) { /* no HF_TOKEN to another server */
            struct np_hf_opts ao = ho;
            ao.token = NULL;
            ao.endpoint = NULL;
            struct np_hf_client *ac = NULL;
            if (np_hf_client_new(&ao, &ac, &err) != NP_OK) {
                np_error_print(&err);
                failures++;
            } else {
                failures += setup_sources(&plan, ac);
            }
            np_hf_client_free(ac);
        }
        failures += setup_hf(&plan, client);
        if (plan.mbhf && !setup_signal) /* the Hub files of the Megatron-Bridge row, into its jobs' HF_HOME */
            failures += np_mbhf_setup(stage_c, plan.mbhf->recipe, plan.mbhf->container, plan.mbhf->task, client, 0,
                                      setup_out) != 0;
        for (size_t i = 0; i < plan.npips && !failures && !setup_signal; i++) {
            struct np_pip_job_opts po = {plan.pips[i].sqsh, NULL, io.account, io.partition, logs, &setup_signal};
            int present = 0;
            char jobid[64];
            int bad = np_pip_stage(stage_c, plan.pips[i].r, plan.pips[i].m, &po, &present, jobid, sizeof jobid);
            failures += bad;
            if (!bad)
                fprintf(setup_out, "pip      %s %s (%s%s)\n", plan.pips[i].r->name, plan.pips[i].m->size,
                        present ? "already staged" : "installed by job ", present ? "" : jobid);
        }
        if (plan.have_lora && !failures && !setup_signal) /* after the image, the checkout and the Hub files */
            failures += np_mblora_stage(&plan.lora, client, &lo, setup_out) != 0;
        if (task != NP_TASK_PRETRAIN && !failures && !setup_signal) {
            failures += np_ftprep_download(&ftp, client, NULL, &setup_signal);
            struct np_ftprep_job_opts fo = {plan.nimages ? plan.images[0].sqsh : NULL, NULL, io.account,
                                            io.partition, logs, &setup_signal};
            if (!failures && !setup_signal)
                failures += np_ftprep_run(&ftp, &fo);
        }
    }
    np_hf_client_free(client);
    setup_plan_free(&plan);
    np_recipe_set_free(&set);
    free(stage_c);
    if (np_stream_check(setup_out, setup_out == stdout ? "standard output" : "the results' stream"))
        failures++;
    if (setup_signal) {
        *sig_out = setup_signal;
        np_errorf("interrupted by signal %d; nothing half-done was left under a final name", *sig_out);
        return 1;
    }
    if (failures) {
        np_errorf("%d step%s failed; fix the cause and run again (what is staged is kept)", failures,
                  failures == 1 ? "" : "s");
        return 1;
    }
    return 0;
}

enum np_status np_setup_run(const struct np_setup_opts *o, int *signal_out)
{
    int sig = 0;
    setup_out = o->out ? o->out : stdout;
    int rc = setup_body(o, &sig);
    if (signal_out)
        *signal_out = sig;
    return rc == 0 ? NP_OK : rc == 2 ? NP_E_INVALID : NP_E_IO;
}
