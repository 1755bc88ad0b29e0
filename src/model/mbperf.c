/* mbperf.c - load Megatron-Bridge's launchable performance rows (rows-<container>.json) as recipe data.
 *
 * extract-recipes.py resolved every published run of every container (26.08 v0.6.0, 26.06 v0.5.0, ... 25.09) to its release's own
 * config and wrote the rank command's arguments; this reads those files with Jansson into typed rows and gives
 * each row the recipe/model/row/spec shape the launch pipeline reads (job/mbridge.c renders its srun step, the
 * "perf" kind in job/mbridge_perf.c its rank command and environment).
 */
#include "nemoperf/model/mbperf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const np_mbperf_containers[] = {"26.08", "26.06.01", "26.06", "26.04.01", "26.04", "26.02.01", "26.02",
                                            "25.11", "25.09"};
const size_t np_mbperf_ncontainers = sizeof np_mbperf_containers / sizeof np_mbperf_containers[0];
const char *const np_mbperf_published[] = {"26.08", "26.06.01", "26.06", "26.04.01", "26.04",
                                           "26.02.01", "26.02", "25.11", "25.09"};
const size_t np_mbperf_npublished = sizeof np_mbperf_published / sizeof np_mbperf_published[0];

#define MBPERF_OWNED 24

/* Every string a row's recipe shape needs beyond the row's own fields: freed with the row. */
struct mbperf_owned {
    char *s[MBPERF_OWNED];
    size_t n;
};

int np_mbperf_container_known(const char *container)
{
    for (size_t i = 0; container && i < np_mbperf_ncontainers; i++)
        if (strcmp(container, np_mbperf_containers[i]) == 0)
            return 1;
    return 0;
}

const char *np_mbperf_entry(const char *release)
{
    /* v0.6.0 runs bootstrap.py, which applies the recipe's env_vars and execs run_script.py (bootstrap.py:25-69);
     * v0.5.0 runs run_script.py itself */
    return release && strcmp(release, "v0.6.0") >= 0 ? "scripts/performance/bootstrap.py"
                                                     : "scripts/performance/run_script.py";
}

static char *mbperf_str(json_t *o, const char *key, int *bad)
{
    const char *s = json_string_value(json_object_get(o, key));
    char *d = s ? strdup(s) : NULL;
    if (!d)
        *bad = 1;
    return d;
}

static char *mbperf_str_opt(json_t *o, const char *key, int *bad)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return NULL;
    return mbperf_str(o, key, bad);
}

static int mbperf_int(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 100000000
               ? (int)json_integer_value(v) : 0;
}

/* A JSON scalar as text ("32", "expandable_segments:True"); NULL for anything else. */
static char *mbperf_scalar(json_t *v)
{
    char *t = NULL;
    if (json_is_string(v))
        t = strdup(json_string_value(v));
    else if (json_is_integer(v) && asprintf(&t, "%lld", (long long)json_integer_value(v)) < 0)
        t = NULL;
    else if (json_is_boolean(v)) /* Python's str(True) */
        t = strdup(json_is_true(v) ? "True" : "False");
    return t;
}

static char **mbperf_env(json_t *env, int *bad)
{
    if (!json_is_object(env) || json_object_size(env) == 0)
        return NULL;
    char **out = calloc(json_object_size(env) + 1, sizeof *out);
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v)
    {
        if (json_is_null(v)) /* an expression extract-recipes.py did not evaluate: bootstrap.py sets it in the task */
            continue;
        char *val = mbperf_scalar(v);
        char *e = val && out ? malloc(strlen(k) + strlen(val) + 2) : NULL;
        if (!e) {
            *bad = 1;
            free(val);
            break;
        }
        strcpy(e, k);
        strcpy(e + strlen(k) + 1, val);
        free(val);
        out[n++] = e;
    }
    if (!out)
        *bad = 1;
    return out;
}

/* A JSON array of strings as a NULL-terminated vector (NULL when a is not an array). */
static char **mbperf_strv(json_t *a, int *bad)
{
    if (!json_is_array(a))
        return NULL;
    char **v = calloc(json_array_size(a) + 1, sizeof *v);
    for (size_t i = 0; v && i < json_array_size(a); i++)
        if (!json_is_string(json_array_get(a, i)) || !(v[i] = strdup(json_string_value(json_array_get(a, i)))))
            *bad = 1;
    if (!v)
        *bad = 1;
    return v;
}

static char *mbperf_own(struct mbperf_owned *o, const char *s, int *bad)
{
    char *d = s ? strdup(s) : NULL;
    if (!d || o->n == MBPERF_OWNED) {
        free(d);
        *bad = 1;
        return NULL;
    }
    return o->s[o->n++] = d;
}

/* The recipe/model/row/spec view of r (job/mbridge.c, launch/config.c read a job through it). */
static void mbperf_shape(struct np_mbperf_row *r, const char *path, struct mbperf_owned *own, int *bad)
{
    char buf[512];
    struct np_recipe *rc = &r->as_recipe;
    struct np_model *m = &r->model;
    struct np_config_row *cf = &r->cfg;
    struct np_mbridge_spec *sp = &r->spec;
    rc->name = r->recipe;
    rc->title = r->recipe;
    rc->path = mbperf_own(own, path, bad);
    snprintf(buf, sizeof buf, "Megatron-Bridge %s performance recipe (rows-%s.json)", r->release, r->container);
    rc->source = mbperf_own(own, buf, bad);
    rc->framework_version = r->container;
    snprintf(buf, sizeof buf, "nvcr.io#nvidia/nemo:%s", r->container); /* the container of the row's version */
    rc->image = mbperf_own(own, buf, bad);
    rc->default_size = r->container;
    rc->default_dtype = r->dtype == NP_MB_BF16 ? NP_DTYPE_BF16 : NP_DTYPE_FP8;
    rc->default_gpus = r->gpus;
    rc->models = m;
    rc->nmodels = 1;
    m->size = r->container;
    m->label = r->container;
    m->mbridge = sp;
    m->rows = cf;
    m->nrows = 1;
    /* run_script.py saves with --save_dir/--save_interval at any scale; the size is not published (0: unbudgeted).
     * Before v0.5.0 only run_recipe.py reads --save_dir (v0.4.2 run_recipe.py:77-78): no checkpoint run there */
    m->checkpoint.known = strcmp(r->release, "v0.5.0") >= 0 || strncmp(r->release, "r0.5.0", 6) == 0;
    m->checkpoint.save_min_gpus = m->checkpoint.load_min_gpus = 1;
    m->checkpoint.save_max_gpus = 1000000;
    cf->gpu_type = r->gpu_type;
    cf->dtypes = (unsigned)rc->default_dtype;
    cf->gpus = r->gpus;
    cf->seq_len = r->seq_len;
    cf->tp = r->tp > 0 ? r->tp : 1;
    cf->pp = r->pp > 0 ? r->pp : 1;
    cf->cp = r->cp > 0 ? r->cp : 1;
    cf->ep = r->ep;
    cf->vp = r->vp;
    cf->mbs = r->mbs > 0 ? r->mbs : 1;
    cf->gbs = r->gbs;
    cf->dp = r->gpus / (cf->tp * cf->pp * cf->cp) > 0 ? r->gpus / (cf->tp * cf->pp * cf->cp) : 1;
    cf->ga = cf->gbs / (cf->mbs * cf->dp) > 0 ? cf->gbs / (cf->mbs * cf->dp) : 1;
    cf->gpus_per_node = r->gpus_per_node;
    cf->source = r->published_source;
    cf->task = strcmp(r->task, "sft") == 0 ? NP_TASK_SFT : strcmp(r->task, "lora") == 0 ? NP_TASK_LORA
                                                                                         : NP_TASK_PRETRAIN;
    sp->kind = mbperf_own(own, "perf", bad);
    snprintf(buf, sizeof buf, "NVIDIA-NeMo/Megatron-Bridge %s (%s)", r->release, r->commit);
    sp->source = mbperf_own(own, buf, bad);
    snprintf(buf, sizeof buf, "Megatron-Bridge/%s", np_mbperf_entry(r->release));
    sp->script = mbperf_own(own, buf, bad);
    r->repo.name = mbperf_own(own, "Megatron-Bridge", bad);
    r->repo.github = mbperf_own(own, "NVIDIA-NeMo/Megatron-Bridge", bad);
    r->repo.commit = r->commit;
    sp->repos = &r->repo;
    sp->nrepos = 1;
    /* the rank command's PYTHONPATH: the scripts folder, and at v0.6.0 the checkout's src ahead of the image's
     * (v0.6.0 setup_experiment.py:149-168; v0.5.0 setup_experiment.py:699-704 puts only the scripts folder) */
    r->pythonpath[0] = mbperf_own(own, "Megatron-Bridge/scripts/performance", bad);
    if (strcmp(r->release, "v0.6.0") >= 0)
        r->pythonpath[1] = mbperf_own(own, "Megatron-Bridge/src", bad);
    sp->pythonpath = r->pythonpath;
    /* -ms 50 on the command (NVIDIA's llmb runs 50); v0.1.0rc4's parser has no -ms: its YAML's train_iters */
    sp->train_iters_default = r->train_iters > 0 ? r->train_iters : 50;
    snprintf(buf, sizeof buf, "Megatron-Bridge %s (job/mbridge_perf.c)", r->release);
    sp->env_source = mbperf_own(own, buf, bad);
}

static void mbperf_row_free(struct np_mbperf_row *r)
{
    free(r->container);
    free(r->release);
    free(r->commit);
    free(r->task);
    free(r->family);
    free(r->recipe);
    free(r->gpu_type);
    free(r->published_source);
    free(r->variant);
    free(r->config);
    free(r->config_source);
    free(r->config_variant);
    free(r->flex_backend);
    free(r->why_not);
    free(r->launcher_source);
    for (char **e = r->launcher_env; e && *e; e++)
        free(*e);
    free(r->launcher_env);
    for (char **a = r->launcher_args; a && *a; a++)
        free(*a);
    free(r->launcher_args);
    for (char **a = r->args; a && *a; a++)
        free(*a);
    free(r->args);
    free(r->rank_script);
    for (char **a = r->rank_args; a && *a; a++)
        free(*a);
    free(r->rank_args);
    for (char **e = r->env; e && *e; e++)
        free(*e);
    free(r->env);
    json_decref(r->json);
    struct mbperf_owned *own = r->owned;
    for (size_t i = 0; own && i < own->n; i++)
        free(own->s[i]);
    free(own);
}

/* One row object into r; NP_OK, or an error naming the field. */
static enum np_status mbperf_row(json_t *o, const char *path, size_t idx, struct np_mbperf_row *r, struct np_error *err)
{
    int bad = 0;
    memset(r, 0, sizeof *r);
    r->json = json_incref(o);
    r->container = mbperf_str(o, "container", &bad);
    r->release = mbperf_str(o, "mb_release", &bad);
    r->commit = mbperf_str(o, "mb_commit", &bad);
    r->task = mbperf_str(o, "task", &bad);
    r->family = mbperf_str(o, "family", &bad);
    r->recipe = mbperf_str(o, "recipe", &bad);
    r->gpu_type = mbperf_str(o, "gpu_type", &bad);
    r->published_source = mbperf_str(o, "published_source", &bad);
    r->variant = mbperf_str(o, "variant", &bad);
    r->config_variant = mbperf_str_opt(o, "config_variant", &bad);
    char dt[16] = "";
    const char *d = json_string_value(json_object_get(o, "dtype"));
    snprintf(dt, sizeof dt, "%s", d ? d : "");
    r->dtype = np_mb_dtype_parse(dt);
    r->gpus = mbperf_int(o, "gpus");
    r->gpus_per_node = mbperf_int(o, "gpus_per_node");
    json_t *pub = json_object_get(o, "published");
    r->seq_len = mbperf_int(pub, "seq_len");
    r->tp = mbperf_int(pub, "tp");
    r->pp = mbperf_int(pub, "pp");
    r->cp = mbperf_int(pub, "cp");
    r->vp = mbperf_int(pub, "vp");
    r->ep = mbperf_int(pub, "ep");
    r->gbs = mbperf_int(pub, "gbs");
    r->mbs = mbperf_int(pub, "mbs");
    json_t *res = json_object_get(o, "resolved");
    if (!bad && json_is_object(res)) {
        r->config = mbperf_str_opt(res, json_object_get(res, "function") ? "function" : "config", &bad);
        r->config_source = mbperf_str_opt(res, "source", &bad);
        r->env = mbperf_env(json_object_get(res, "env"), &bad);
        json_t *f = json_object_get(res, "perf_env_fields");
        r->flex_backend = mbperf_str_opt(f, "moe_flex_dispatcher_backend", &bad);
        r->moe_a2a_overlap = json_is_true(json_object_get(f, "moe_a2a_overlap"));
        r->cutedsl_fused_grouped_mlp = json_is_true(json_object_get(f, "cutedsl_fused_grouped_mlp"));
        r->nccl_ub = json_is_true(json_object_get(f, "nccl_ub"));
        r->use_megatron_fsdp = json_is_true(json_object_get(f, "use_megatron_fsdp"));
        const char *impl = json_string_value(json_object_get(f, "cuda_graph_impl"));
        json_t *scope = json_object_get(f, "cuda_graph_scope");
        int scope_full = json_is_string(scope) && strstr(json_string_value(scope), "full_iteration");
        for (size_t i = 0; json_is_array(scope) && i < json_array_size(scope); i++)
            scope_full |= json_is_string(json_array_get(scope, i)) &&
                          strcmp(json_string_value(json_array_get(scope, i)), "full_iteration") == 0;
        r->cuda_graph_full_iteration =
            impl && (strcmp(impl, "full_iteration") == 0 || (strcmp(impl, "local") == 0 && scope_full));
    }
    json_t *lr = json_object_get(o, "launcher");
    if (!bad && json_is_object(lr)) {
        r->launcher_env = mbperf_env(json_object_get(lr, "env"), &bad);
        r->launcher_source = mbperf_str_opt(lr, "source", &bad);
        if (!bad)
            r->launcher_args = mbperf_strv(json_object_get(lr, "task_args"), &bad);
        json_t *rank = json_object_get(lr, "rank");
        if (!bad && json_is_object(rank)) {
            r->rank_script = mbperf_str(rank, "script", &bad);
            r->rank_args = mbperf_strv(json_object_get(rank, "args"), &bad);
            if (!r->rank_args)
                bad = 1;
        }
        /* "numactl --cpunodebind=$((SLURM_LOCALID/N)) ..." (utils/executors.py of the release) */
        const char *pre = json_string_value(json_object_get(lr, "pre_cmds"));
        const char *div = pre ? strstr(pre, "SLURM_LOCALID/") : NULL;
        if (div)
            r->numa_divisor = atoi(div + strlen("SLURM_LOCALID/"));
        /* v0.1.0rc4/r0.2.0 utils/executors.py: "if num_gpus_per_node == 4 and nodes > 18" */
        r->segment_beyond_rack = json_is_true(json_object_get(lr, "segment_beyond_rack"));
    }
    r->train_iters = mbperf_int(json_object_get(res, "train_iters"), "value");
    json_t *launch = json_object_get(o, "launch");
    r->launchable = !launch || json_is_true(json_object_get(launch, "launchable"));
    for (size_t i = 0; !bad && i < json_array_size(json_object_get(launch, "why_not")); i++) {
        const char *w = json_string_value(json_array_get(json_object_get(launch, "why_not"), i));
        char *t = NULL;
        if (w && asprintf(&t, "%s%s%s", r->why_not ? r->why_not : "", r->why_not ? "; " : "", w) < 0)
            bad = 1;
        else if (t) {
            free(r->why_not);
            r->why_not = t;
        }
    }
    json_t *args = json_object_get(o, "args");
    if (!bad && json_is_array(args) && json_array_size(args) > 0) {
        r->args = calloc(json_array_size(args) + 1, sizeof *r->args);
        for (size_t i = 0; r->args && i < json_array_size(args); i++)
            if (!json_is_string(json_array_get(args, i)) ||
                !(r->args[i] = strdup(json_string_value(json_array_get(args, i)))))
                bad = 1;
        if (!r->args)
            bad = 1;
    }
    const char *missing = bad ? NULL
                          : !r->container ? "container" : !r->release ? "mb_release" : !r->commit ? "mb_commit"
                          : strlen(r->commit) != 40 ? "mb_commit (40 hex digits)" : !r->task ? "task"
                          : !r->recipe ? "recipe" : !r->gpu_type ? "gpu_type" : r->dtype == NP_MB_DTYPE_NONE ? "dtype"
                          : r->gpus <= 0 ? "gpus" : r->gpus_per_node <= 0 ? "gpus_per_node" : r->gbs <= 0 ? "published.gbs"
                          : !r->published_source ? "published_source" : !r->args ? "args (a non-empty array of strings)"
                          : !r->family ? "family" : !r->variant ? "variant" : NULL;
    if (bad || missing) {
        mbperf_row_free(r);
        memset(r, 0, sizeof *r);
        return np_error_set(err, bad && !missing ? NP_E_NOMEM : NP_E_PARSE, path, 0, 0, "rows[%zu].%s: %s", idx,
                            missing ? missing : "", missing ? "missing or invalid" : "out of memory");
    }
    return NP_OK;
}

enum np_status np_mbperf_load(const char *dir, struct np_mbperf_set *out, struct np_error *err)
{
    return np_mbperf_load_ex(dir, NULL, out, err);
}

/* Whether container is one of the published ones with a rows file (rows-<container>.json). */
static int mbperf_published(const char *container)
{
    for (size_t i = 0; container && i < np_mbperf_npublished; i++)
        if (strcmp(container, np_mbperf_published[i]) == 0)
            return 1;
    return 0;
}

enum np_status np_mbperf_load_ex(const char *dir, const char *extra, struct np_mbperf_set *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    char *own_dir = dir ? NULL : np_data_path("megatron-bridge");
    if (!dir && !own_dir)
        return np_error_set(err, NP_E_NOTFOUND, "megatron-bridge", 0, 0,
                            "Megatron-Bridge data not found (set NEMOPERF_DATADIR to the folder holding "
                            "megatron-bridge/)");
    const char *d = dir ? dir : own_dir;
    /* the launched containers, then extra (a published container nemoperf does not launch: --print-config) */
    const char *names[16];
    size_t nnames = 0;
    for (size_t i = 0; i < np_mbperf_ncontainers && nnames < 15; i++)
        names[nnames++] = np_mbperf_containers[i];
    if (extra && mbperf_published(extra) && !np_mbperf_container_known(extra))
        names[nnames++] = extra;
    json_t *docs[16] = {0};
    size_t total = 0;
    enum np_status st = NP_OK;
    char path[4096];
    for (size_t i = 0; st == NP_OK && i < nnames; i++) {
        snprintf(path, sizeof path, "%s/rows-%s.json", d, names[i]);
        json_error_t je;
        docs[i] = json_load_file(path, 0, &je);
        json_t *rows = json_object_get(docs[i], "rows");
        if (!docs[i])
            st = np_error_set(err, NP_E_PARSE, path, je.line, je.column, "%s", je.text);
        else if (!json_is_array(rows))
            st = np_error_set(err, NP_E_PARSE, path, 0, 0, "rows: missing or not an array");
        else
            total += json_array_size(rows);
    }
    if (st == NP_OK && !(out->rows = calloc(total ? total : 1, sizeof *out->rows)))
        st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    for (size_t i = 0; st == NP_OK && i < nnames; i++) {
        snprintf(path, sizeof path, "%s/rows-%s.json", d, names[i]);
        json_t *rows = json_object_get(docs[i], "rows");
        for (size_t k = 0; st == NP_OK && k < json_array_size(rows); k++) {
            struct np_mbperf_row *r = &out->rows[out->n];
            if ((st = mbperf_row(json_array_get(rows, k), path, k, r, err)) != NP_OK)
                break;
            out->n++;
            if (strcmp(r->container, names[i]) != 0) {
                st = np_error_set(err, NP_E_PARSE, path, 0, 0, "rows[%zu].container: \"%s\", expected \"%s\"", k,
                                  r->container, names[i]);
                break;
            }
            int bad = 0;
            struct mbperf_owned *own = calloc(1, sizeof *own);
            if (own) {
                mbperf_shape(r, path, own, &bad);
                r->owned = own;
            }
            if (!own || bad)
                st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        }
    }
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        json_decref(docs[i]);
    free(own_dir);
    if (st != NP_OK)
        np_mbperf_free(out);
    return st;
}

void np_mbperf_free(struct np_mbperf_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        mbperf_row_free(&s->rows[i]);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

int np_mbperf_has_recipe(const struct np_mbperf_set *s, const char *name, const char *container)
{
    for (size_t i = 0; s && name && i < s->n; i++)
        if (strcasecmp(s->rows[i].recipe, name) == 0 && (!container || strcmp(s->rows[i].container, container) == 0))
            return 1;
    return 0;
}
