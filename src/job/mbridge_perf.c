/* mbridge_perf.c - Megatron-Bridge's performance recipes as NVIDIA's setup_experiment.py submits them.
 *
 * One task per GPU runs the release's entry point from the pinned checkout with the row's arguments
 * (rows-<container>.json, extract-recipes.py): v0.6.0 (26.08) `python scripts/performance/bootstrap.py`, which
 * applies the recipe's env_vars and execs run_script.py (MB 51885cf bootstrap.py:25-69); v0.5.0 (26.06)
 * `python scripts/performance/run_script.py` (MB fcbb603 setup_experiment.py:63,518,699-704).  The environment
 * is the executor's and, at v0.5.0, PerfEnvPlugin's (cited per variable below).
 */
#include "nemoperf/job/mbridge_perf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/model/flops_mbridge.h"
#include "nemoperf/util/shell.h"

/* v0.6.0 and later: bootstrap.py and the recipe's own env_vars; before: run_script.py and PerfEnvPlugin */
static int mbridge_perf_v6(const struct np_launch_config *c)
{
    return c->mb && strcmp(c->mb->release, "v0.6.0") >= 0;
}

/* NVIDIA's profile per Megatron-Bridge release (scripts/performance at the tag). */
static const struct np_mbperf_profile mbperf_profiles[] = {
    {"v0.1.0rc3", 10, 11, "nvtx,cuda", "MB v0.1.0rc3 scripts/performance/setup_experiment.py:84 (NsysPlugin(10, 11)); "
                                       "src/megatron/bridge/recipes/run_plugins.py:199 (nvtx,cuda)"},
    {"v0.1.0rc4", 10, 11, "nvtx,cuda", "MB v0.1.0rc4 scripts/performance/setup_experiment.py:84 (NsysPlugin(10, 11)); "
                                       "src/megatron/bridge/recipes/run_plugins.py:199 (nvtx,cuda)"},
    {"v0.2.0", 10, 11, "nvtx,cuda", "MB v0.2.0 scripts/performance/setup_experiment.py:104; perf_plugins.py:118"},
    {"r0.2.0-44dae92", 10, 11, "nvtx,cuda", "MB 44dae92 (r0.2.0) scripts/performance/argument_parser.py:414-417; "
                                            "perf_plugins.py:119"},
    {"v0.3.0", 10, 11, "nvtx,cuda", "MB v0.3.0 scripts/performance/argument_parser.py:538-549; perf_plugins.py:121-122 "
                                    "(no --nsys_trace: NeMo-Run's nvtx,cuda)"},
    {"r0.3.0-1f0cfc3", 10, 11, "nvtx,cuda", "MB 1f0cfc3 (r0.3.0) scripts/performance/argument_parser.py:546-557; "
                                            "perf_plugins.py:121-122 (no --nsys_trace: NeMo-Run's nvtx,cuda)"},
    {"v0.3.1", 10, 11, "nvtx,cuda", "MB v0.3.1 scripts/performance/argument_parser.py:546-557; perf_plugins.py:121-122 "
                                    "(no --nsys_trace: NeMo-Run's nvtx,cuda)"},
    {"v0.4.0", 10, 11, "cuda-sw,nvtx", "MB v0.4.0 scripts/performance/argument_parser.py:624-635; "
                                       "setup_experiment.py:416-420"},
    {"r0.3.0-1f0cfc3", 10, 11, "nvtx,cuda", "MB 1f0cfc3 scripts/performance/argument_parser.py:546-559; perf_plugins.py:120-122 "
                                            "(no --nsys_trace given: NeMo-Run's nvtx,cuda)"},
    {"r0.4.0-f171d7d", 10, 11, "cuda-sw,nvtx", "MB f171d7d (r0.4.0) scripts/performance/argument_parser.py:634-645; "
                                               "setup_experiment.py:418-422"},
    {"v0.4.1", 10, 11, "cuda-sw,nvtx", "MB v0.4.1 scripts/performance/argument_parser.py:624-635; "
                                       "setup_experiment.py:416-420"},
    {"v0.4.2", 10, 11, "cuda-sw,nvtx", "MB v0.4.2 scripts/performance/argument_parser.py:641-652; "
                                       "setup_experiment.py:434-438"},
    {"v0.5.0", 10, 11, "cuda-sw,nvtx", "MB v0.5.0 scripts/performance/argument_parser.py:728-739; "
                                       "setup_experiment.py:672-677"},
    {"r0.3.0-1f0cfc3", 10, 11, "nvtx,cuda", "MB 1f0cfc3 scripts/performance/argument_parser.py:546-559; perf_plugins.py:120-122 "
                                            "(no --nsys_trace given: NeMo-Run's nvtx,cuda)"},
    {"r0.4.0-f171d7d", 10, 11, "cuda-sw,nvtx", "MB f171d7d scripts/performance/argument_parser.py:633-647; "
                                               "setup_experiment.py:417-422"},
    {"r0.5.0-cba825f", 10, 11, "cuda-sw,nvtx", "MB cba825f (r0.5.0) scripts/performance/argument_parser.py:728-739; "
                                               "setup_experiment.py:674-679"},
    {"v0.5.1", 10, 11, "cuda-sw,nvtx", "MB v0.5.1 scripts/performance/argument_parser.py:728-739; "
                                       "setup_experiment.py:674-679"},
    {"r0.3.0-1f0cfc3", 10, 11, "nvtx,cuda", "MB 1f0cfc3 scripts/performance/argument_parser.py:546-559; perf_plugins.py:120-122 "
                                            "(no --nsys_trace given: NeMo-Run's nvtx,cuda)"},
    {"r0.4.0-f171d7d", 10, 11, "cuda-sw,nvtx", "MB f171d7d scripts/performance/argument_parser.py:633-647; "
                                               "setup_experiment.py:417-422"},
    {"r0.5.0-cba825f", 10, 11, "cuda-sw,nvtx", "MB cba825f scripts/performance/argument_parser.py:728-739; "
                                               "setup_experiment.py:674-679"},
    {"v0.6.0", 10, 11, "cuda-sw,nvtx", "MB v0.6.0 scripts/performance/argument_parser.py:759-770; "
                                       "setup_experiment.py:738-743"},
};

const struct np_mbperf_profile *np_mbridge_perf_profile(const char *release)
{
    for (size_t i = 0; release && i < sizeof mbperf_profiles / sizeof mbperf_profiles[0]; i++)
        if (strcmp(mbperf_profiles[i].release, release) == 0)
            return &mbperf_profiles[i];
    return NULL;
}

/* The releases whose executor runs print_sha.sh first (git grep print_sha at each release commit). */
static const char *const mbperf_print_sha[] = {"v0.4.2", "v0.5.0", "r0.5.0-cba825f", "v0.5.1", "v0.6.0"};

const char *np_mbridge_perf_pre_cmd(const struct np_launch_config *c)
{
    for (size_t i = 0; c->mb && i < sizeof mbperf_print_sha / sizeof mbperf_print_sha[0]; i++)
        if (strcmp(c->mb->release, mbperf_print_sha[i]) == 0)
            return "bash /opt/Megatron-Bridge/docker/common/print_sha.sh repo_status.json; ";
    return NULL;
}

/* The releases whose slurm_executor() gives srun no --container-writable (v0.1.0rc4 utils/executors.py:78-81,
 * r0.2.0 44dae92 85-88, v0.3.0 and r0.3.0 1f0cfc3 86-89; added by v0.4). */
static const char *const mbperf_not_writable[] = {"v0.1.0rc4", "r0.2.0-44dae92", "v0.3.0", "r0.3.0-1f0cfc3"};

int np_mbridge_perf_writable(const struct np_launch_config *c)
{
    for (size_t i = 0; c->mb && i < sizeof mbperf_not_writable / sizeof mbperf_not_writable[0]; i++)
        if (strcmp(c->mb->release, mbperf_not_writable[i]) == 0)
            return 0;
    return 1;
}

const char *np_mbridge_perf_nsys_trace(const struct np_launch_config *c)
{
    const struct np_mbperf_profile *p = c->mb ? np_mbridge_perf_profile(c->mb->release) : NULL;
    return p ? p->trace : "nvtx,cuda";
}

/* v0.5.0's launcher (26.06; r0.5.0's 26.06.01 shares it): the executor and PerfEnvPlugin rendered below.  The
 * rows of older releases are shown by --print-config only ("launchable": false), with no environment: their
 * launchers (perf_plugins.py, utils/executors.py) are not rendered. */
static int mbridge_perf_v5(const struct np_launch_config *c)
{
    return c->mb && (strcmp(c->mb->release, "v0.5.0") == 0 || strncmp(c->mb->release, "r0.5.0", 6) == 0);
}

/* The LoRA rows train on packed SQuAD from a converted checkpoint, as NVIDIA's reproduction passes them
 * (exemplar-performance e249aa3 llama3/finetune/launch.sh:188-200); without --data Megatron-Bridge uses its mock
 * GPT data (v0.5.0 scripts/performance/argument_parser.py:323-328, utils/overrides.py:376-386), and v0.5.0's
 * LoRA FLOPs count applies to packed SQuAD only (flop_utils.py:358-396). */
static int mbridge_perf_lora(const struct np_launch_config *c)
{
    return c->mb && c->mb->task && strcmp(c->mb->task, "lora") == 0;
}

/* <stage>/mbridge/<sub>[/<name>], a new string. */
static char *mbridge_perf_stage_path(const struct np_launch_config *c, const char *sub, const char *name)
{
    char *p = NULL;
    if (asprintf(&p, "%s/mbridge/%s%s%s", c->stage_path, sub, name ? "/" : "", name ? name : "") < 0)
        return NULL;
    return p;
}

char *np_mbridge_perf_staged(const struct np_launch_config *c, size_t i, char *what, size_t n)
{
    what[0] = '\0';
    if (!mbridge_perf_lora(c) || i > 1)
        return NULL;
    char *p = i == 0 ? mbridge_perf_stage_path(c, "checkpoints", c->mb->recipe)
                     : mbridge_perf_stage_path(c, "datasets", "rajpurkar___squad");
    if (i == 0)
        snprintf(what, n, "the Megatron-Bridge checkpoint of the LoRA row's base model (%s: ./setup converts it "
                 "as NVIDIA does: Megatron-Bridge's examples/conversion/"
                 "convert_checkpoints.py import --hf-model <model> --megatron-path <that folder> --torch-dtype "
                 "bfloat16 in the image: exemplar-performance e249aa3 llama3/finetune/download_ckpt_dataset.sh:98-109)",
                 p ? p : "");
    else
        snprintf(what, n, "the SQuAD data set the LoRA row trains on, packed (%s: ./setup makes it as NVIDIA does: "
                 "load_dataset(<rajpurkar/squad checkout>, cache_dir=<mbridge/datasets>) in the image and links "
                 "rajpurkar___squad to it: download_ckpt_dataset.sh:75-93)", p ? p : "");
    return p;
}

/* The note of share/nemoperf/megatron-bridge/notes.tsv for r and key ("-ep", "row"), copied into buf (n bytes);
 * NULL when there is none (or the file cannot be read: the notes only add to --print-config). */
static const char *mbridge_perf_note(const struct np_mbperf_row *r, const char *key, char *buf, size_t n)
{
    char *dir = np_data_path("megatron-bridge"), *path = NULL;
    FILE *f = dir && asprintf(&path, "%s/notes.tsv", dir) >= 0 ? fopen(path, "r") : NULL;
    free(dir);
    free(path);
    const char *found = NULL;
    char line[2048];
    while (f && !found && fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *save = NULL, *col[5];
        size_t k = 0;
        for (char *t = strtok_r(line, "\t", &save); t && k < 5; t = strtok_r(NULL, "\t", &save))
            col[k++] = t;
        if (k == 5 && strcmp(col[0], r->container) == 0 && strcmp(col[1], r->recipe) == 0 &&
            (strcmp(col[2], "*") == 0 || strcmp(col[2], r->gpu_type) == 0) && strcmp(col[3], key) == 0) {
            snprintf(buf, n, "%s", col[4]);
            found = buf;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* --print-config's "data": what the row trains on, with its source. */
static json_t *mbridge_perf_data_json(const struct np_launch_config *c)
{
    static const char mock[] = "no --data: Megatron-Bridge's mock data (argument_parser.py's default, v0.5.0 "
                               "scripts/performance/argument_parser.py:323-328)";
    if (!mbridge_perf_lora(c))
        return json_pack("{s:s, s:s}", "value", "mock", "source",
                         c->mb->task && strcmp(c->mb->task, "sft") == 0
                             ? "no --data: Megatron-Bridge's mock data (v0.5.0 scripts/performance/"
                               "argument_parser.py:323-328). No NVIDIA source names the data set of the SFT rows: "
                               "exemplar-performance e249aa3 reproduces only the LoRA rows (llama3/finetune/"
                               "launch.sh:188-200), and the performance summary does not say"
                             : mock);
    char *ck = mbridge_perf_stage_path(c, "checkpoints", c->mb->recipe), *ds = mbridge_perf_stage_path(c, "datasets",
                                                                                                         NULL);
    json_t *j = ck && ds ? json_pack("{s:s, s:s, s:s, s:s}", "value", "squad_packed", "dataset_root", ds,
                                     "pretrained_checkpoint", ck, "source",
                                     "exemplar-performance e249aa3 llama3/finetune/launch.sh:188-200 (NVIDIA's "
                                     "reproduction of these rows; the published LoRA numbers are packed-SQuAD numbers: "
                                     "v0.5.0 flop_utils.py:358-396)")
                         : NULL;
    free(ck);
    free(ds);
    return j;
}

/* A release nemoperf has no rendering of its own for, launched with the environment and task overrides its own
 * launcher code gives the row (v0.4.2 for 26.04.01, r0.4.0 f171d7d for 26.04, r0.3.0 1f0cfc3 for 26.02.01:
 * rows-<container>.json "launcher",
 * extract-recipes.py EVALUATED); its executor is v0.5.0's (numactl, --segment, srun flags: slurm_executor() the
 * same but for PERF_ENV_VARS, print_sha.sh from v0.4.2 on, and f171d7d's unconditional B300 -C), its rank command
 * run_script.py with setup_experiment.py's argv (v0.4.2 setup_experiment.py:471-476, f171d7d 455-460). */
static int mbridge_perf_evaluated(const struct np_launch_config *c)
{
    return c->mb && c->mb->launcher_env && c->mb->launchable && !mbridge_perf_v5(c) && !mbridge_perf_v6(c);
}

/* A word of a release-built rank command with its placeholders filled (a new string, NULL out of memory):
 * @CHECKOUT@ the pinned checkout, @ACCOUNT@/@PARTITION@ the job's SBATCH_ACCOUNT/SBATCH_PARTITION, which
 * run_script.py only parses (r0.2.0's parser requires both); unset, "dummy", what v0.1.0rc4's own launcher passes
 * (setup_experiment.py:153). */
static char *mbridge_perf_placeholders(const struct np_launch_config *c, const char *w, const char *checkout)
{
    static const char *const names[] = {"@CHECKOUT@", "@ACCOUNT@", "@PARTITION@"};
    const char *vals[] = {checkout, c->account && *c->account ? c->account : "dummy",
                          c->partition && *c->partition ? c->partition : "dummy"};
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "");
    while (*w) {
        size_t i = 0;
        while (i < 3 && strncmp(w, names[i], strlen(names[i])) != 0)
            i++;
        if (i < 3) {
            np_buf_append(&b, vals[i]);
            w += strlen(names[i]);
        } else {
            np_buf_appendf(&b, "%c", *w++);
        }
    }
    return np_buf_steal(&b);
}

char **np_mbridge_perf_argv(const struct np_launch_config *c)
{
    const struct np_mbperf_row *r = c->mb;
    if (!r || !c->stage_path)
        return NULL;
    struct np_strv s = {0};
    char *dir = np_mbridge_checkout_dir(c->stage_path, &r->repo);
    if (!dir)
        return NULL;
    np_strv_push(&s, "python");
    np_strv_pushf(&s, "%s/%s", dir, r->rank_script && r->rank_args ? r->rank_script : np_mbperf_entry(r->release));
    /* before v0.3.0 the rank command is the one the release's setup_experiment.py builds ("launcher".rank) */
    for (char **a = r->rank_args ? r->rank_args : r->args; a && *a; a++) {
        if (r->rank_args && strchr(*a, '@')) {
            char *w = mbridge_perf_placeholders(c, *a, dir);
            if (!w)
                s.failed = 1;
            else
                np_strv_push(&s, w);
            free(w);
            continue;
        }
        np_strv_push(&s, *a);
        if ((strcmp(*a, "-ms") == 0 || strcmp(*a, "--max_steps") == 0) && a[1]) { /* MAX_STEPS (default 50) */
            np_strv_pushf(&s, "%d", c->max_steps);
            a++;
        } else if ((strcmp(*a, "-gn") == 0 || strcmp(*a, "--gpus_per_node") == 0) && a[1]) { /* GPUS_PER_NODE */
            np_strv_pushf(&s, "%d", c->gpus_per_node);
            a++;
        }
    }
    free(dir);
    /* run_script.py: --save_dir/--save_interval enable checkpointing (v0.5.0 run_script.py:180-198, v0.6.0
     * 308-326); the older parsers have neither */
    if (c->checkpoint && (mbridge_perf_v5(c) || mbridge_perf_v6(c))) {
        np_strv_push(&s, "--save_dir");
        np_strv_pushf(&s, "%s/checkpoints", c->experiment_dir);
        np_strv_push(&s, "--save_interval");
        np_strv_pushf(&s, "%d", c->max_steps);
    }
    if (mbridge_perf_lora(c)) { /* exemplar-performance e249aa3 llama3/finetune/launch.sh:197-200 */
        char *ck = mbridge_perf_stage_path(c, "checkpoints", c->mb->recipe);
        char *ds = mbridge_perf_stage_path(c, "datasets", NULL);
        if (ck && ds) {
            np_strv_push(&s, "--pretrained_checkpoint");
            np_strv_push(&s, ck);
            np_strv_push(&s, "--data");
            np_strv_push(&s, "squad_packed");
            np_strv_push(&s, "--dataset_root");
            np_strv_push(&s, ds);
        } else {
            s.failed = 1;
        }
        free(ck);
        free(ds);
    }
    for (char **a = mbridge_perf_evaluated(c) ? c->mb->launcher_args : NULL; a && *a; a++)
        np_strv_push(&s, *a); /* the release's PerfEnvPlugin's task overrides (manual GC) */
    /* no -ms in the release's parser (v0.1.0rc4): its YAML sets train.train_iters (100), which run_script.py's
     * Hydra-style overrides change (run_script.py:147-150); only an explicit MAX_STEPS does */
    if (r->train_iters > 0 && c->max_steps_explicit)
        np_strv_pushf(&s, "train.train_iters=%d", c->max_steps);
    if (mbridge_perf_v5(c)) { /* PerfEnvPlugin's manual GC overrides (v0.5.0 perf_plugins.py:194-199,226-228,
                                * 399-422); v0.6.0 run_script.py:63-64 sets them itself */
        np_strv_push(&s, "train.manual_gc=true");
        np_strv_push(&s, "train.manual_gc_interval=100");
    }
    return np_strv_steal(&s);
}

/* An ordered name -> value map with where each value came from (Python dict semantics: a set keeps the
 * position of an existing name). */
#define MBRIDGE_PERF_MAX_VARS 48

struct mbridge_perf_env {
    struct {
        const char *name, *value;
    } v[MBRIDGE_PERF_MAX_VARS];
    const char *origin[MBRIDGE_PERF_MAX_VARS];
    size_t n;
};

static void mbridge_perf_set(struct mbridge_perf_env *e, const char *name, const char *value, const char *origin)
{
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->v[i].name, name) == 0) {
            e->v[i].value = value;
            e->origin[i] = origin;
            return;
        }
    if (e->n < MBRIDGE_PERF_MAX_VARS) {
        e->v[e->n].name = name;
        e->v[e->n].value = value;
        e->origin[e->n++] = origin;
    }
}

static void mbridge_perf_del(struct mbridge_perf_env *e, const char *name)
{
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->v[i].name, name) == 0) {
            memmove(&e->v[i], &e->v[i + 1], (e->n - i - 1) * sizeof e->v[0]);
            memmove(&e->origin[i], &e->origin[i + 1], (e->n - i - 1) * sizeof e->origin[0]);
            e->n--;
            return;
        }
}

static const char *mbridge_perf_get(const struct mbridge_perf_env *e, const char *name)
{
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->v[i].name, name) == 0)
            return e->v[i].value;
    return NULL;
}

/* str(n) for the EP sizes PerfEnvPlugin prints (at most 72: perf_plugins.py:380) */
static const char *mbridge_perf_num(int n)
{
    static const char *const nums[] = {
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18",
        "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32", "33", "34", "35", "36",
        "37", "38", "39", "40", "41", "42", "43", "44", "45", "46", "47", "48", "49", "50", "51", "52", "53", "54",
        "55", "56", "57", "58", "59", "60", "61", "62", "63", "64", "65", "66", "67", "68", "69", "70", "71", "72",
    };
    return n >= 0 && (size_t)n < sizeof nums / sizeof nums[0] ? nums[n] : "72";
}

#define MBP5 "MB fcbb603 scripts/performance/"
#define MBP6 "MB 51885cf scripts/performance/"

/* What the release's launcher set for the row that its tag lacks (rows-<container>.json "plugin_env", written by
 * extract-recipes.py's PLUGIN_ENV with the commit and file:lines): 26.06's B300 rows were added on r0.5.0 after
 * 4cfb04a set NCCL_IGNORE_CPU_AFFINITY=1 for B300 (MB v0.5.1 scripts/performance/perf_plugins.py:353-354).  The
 * strings live in the row's JSON, which the set keeps. */
static void mbridge_perf_env_after_tag(const struct np_mbperf_row *r, struct mbridge_perf_env *e)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(r->json, "plugin_env"), i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *value = json_string_value(json_object_get(v, "value"));
        const char *source = json_string_value(json_object_get(v, "source"));
        if (name && value)
            mbridge_perf_set(e, name, value, source ? source : "rows-<container>.json plugin_env");
    }
}

/* 26.06: v0.5.0's executor (utils/executors.py) and PerfEnvPlugin.setup (perf_plugins.py:495-578). */
static void mbridge_perf_env_v5(const struct np_launch_config *c, struct mbridge_perf_env *e)
{
    const struct np_mbperf_row *r = c->mb;
    static const char *const base[][2] = {
        {"TORCH_NCCL_AVOID_RECORD_STREAMS", "1"}, {"TRANSFORMERS_OFFLINE", "1"},     {"TOKENIZERS_PARALLELISM", "False"},
        {"NCCL_NVLS_ENABLE", "0"},                {"NVTE_NORM_FWD_USE_CUDNN", "1"},  {"NVTE_NORM_BWD_USE_CUDNN", "1"},
        {"TORCH_NCCL_HIGH_PRIORITY", "1"},        {"HF_HUB_OFFLINE", "0"},
        {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}, {"NCCL_GRAPH_REGISTER", "0"},
    };
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        mbridge_perf_set(e, base[i][0], base[i][1], MBP5 "utils/executors.py:39-50 PERF_ENV_VARS");
    if (strcmp(c->gpu_type, "gb200") == 0) {
        mbridge_perf_set(e, "NCCL_NET_GDR_LEVEL", "PHB", MBP5 "utils/executors.py:110-112 (GB200)");
        mbridge_perf_set(e, "NCCL_NET_GDR_C2C", "1", MBP5 "utils/executors.py:110-112 (GB200)");
    }
    mbridge_perf_set(e, "HF_HUB_OFFLINE", "1", MBP5 "utils/executors.py:120-122 (--offline)");
    /* PerfEnvPlugin: the row's TP/CP/EP are the ones passed (-tp ... when overridden) or the config's */
    int sm100 = strcmp(c->gpu_type, "h100") != 0; /* b300 b200 gb200 gb300: perf_plugins.py:524 */
    const char *flex = r->flex_backend;
    int deepep = flex && (strcmp(flex, "deepep") == 0 || strcmp(flex, "hybridep") == 0);
    const char *conn = sm100 || deepep ? "32" : (c->tp > 1 || c->cp > 1) && !r->moe_a2a_overlap ? "1" : "8";
    mbridge_perf_set(e, "CUDA_DEVICE_MAX_CONNECTIONS", conn, MBP5 "perf_plugins.py:250-281,517-525");
    const char *margin = deepep ? "20" : "16";
    mbridge_perf_set(e, "NVTE_FWD_LAYERNORM_SM_MARGIN", margin, MBP5 "perf_plugins.py:353-362,527-531");
    mbridge_perf_set(e, "NVTE_BWD_LAYERNORM_SM_MARGIN", margin, MBP5 "perf_plugins.py:353-362,527-531");
    if (flex && strcmp(flex, "hybridep") == 0) {
        int nvl8 = strcmp(c->gpu_type, "h100") == 0 || strcmp(c->gpu_type, "b200") == 0 ||
                   strcmp(c->gpu_type, "b300") == 0;
        int ep = c->ep > 0 ? c->ep : 1;
        const char *src = MBP5 "perf_plugins.py:364-386 (HybridEP)";
        mbridge_perf_set(e, "NVLINK_DOMAIN_SIZE", nvl8 ? "8" : "72", src);
        mbridge_perf_set(e, "USE_MNNVL", nvl8 ? "0" : "1", src);
        mbridge_perf_set(e, "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN",
                         mbridge_perf_num(nvl8 && ep > 8 ? 8 : ep), src);
        mbridge_perf_set(e, "NUM_OF_TOKENS_PER_CHUNK_COMBINE_API", "128", src);
    }
    int llama = strcmp(r->family, "llama") == 0;
    if (c->pp > 1 && (((strcmp(r->recipe, "llama3_70b") == 0 || strcmp(r->recipe, "llama31_405b") == 0) &&
                       c->task == NP_TASK_PRETRAIN) ||
                      (llama && c->task == NP_TASK_SFT)))
        mbridge_perf_set(e, "NCCL_P2P_NET_CHUNKSIZE", "2097152", MBP5 "perf_plugins.py:388-397,542-549");
    /* _set_model_specific_environment_variables (perf_plugins.py:283-351) */
    const char *ms = MBP5 "perf_plugins.py:283-351 (model-specific)";
    if (strcmp(r->family, "deepseek") == 0)
        mbridge_perf_set(e, "NVTE_ALLOW_NONDETERMINISTIC_ALGO", "0", ms);
    if (r->cuda_graph_full_iteration) {
        mbridge_perf_set(e, "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,graph_capture_record_stream_reuse:True",
                         ms);
        mbridge_perf_set(e, "TORCH_NCCL_AVOID_RECORD_STREAMS", "0", ms);
    }
    if (r->cutedsl_fused_grouped_mlp)
        mbridge_perf_set(e, "NVTE_CUTEDSL_FUSED_GROUPED_MLP", "1", ms);
    if (r->cutedsl_fused_grouped_mlp && r->moe_a2a_overlap)
        mbridge_perf_set(e, "CUDNNFE_CLUSTER_OVERLAP_MARGIN", "8", ms);
    if (r->nccl_ub || (llama && r->use_megatron_fsdp)) {
        mbridge_perf_del(e, "PYTORCH_CUDA_ALLOC_CONF");
        mbridge_perf_del(e, "NCCL_GRAPH_REGISTER");
    }
    int keep_cudnn_ln = 0;
    const char *dt = np_mb_dtype_name(r->dtype);
    if (strcmp(c->gpu_type, "h100") == 0 && strcmp(r->recipe, "llama3_8b") == 0 && c->task == NP_TASK_PRETRAIN &&
        strcmp(dt, "fp8_cs") == 0) {
        mbridge_perf_set(e, "NCCL_CTA_POLICY", "1", ms);
        keep_cudnn_ln = 1;
    }
    if (strcmp(c->gpu_type, "gb200") == 0 || strcmp(c->gpu_type, "gb300") == 0) {
        if (strcmp(r->recipe, "llama3_70b") == 0 && c->task == NP_TASK_PRETRAIN &&
            (strcmp(dt, "bf16") == 0 || strcmp(dt, "fp8_cs") == 0))
            keep_cudnn_ln = 1;
        if (strcmp(r->recipe, "llama31_405b") == 0 && c->task == NP_TASK_PRETRAIN && strcmp(dt, "fp8_cs") == 0)
            keep_cudnn_ln = 1;
        if ((strcmp(r->family, "deepseek") == 0 || strcmp(r->family, "kimi") == 0) && strcmp(dt, "fp8_mx") == 0)
            keep_cudnn_ln = 1;
        if (strcmp(r->family, "gpt_oss") == 0 && strcmp(r->recipe, "gpt_oss_20b") == 0 && c->task == NP_TASK_PRETRAIN)
            keep_cudnn_ln = 1;
    }
    if ((llama && c->task == NP_TASK_SFT) || strcmp(r->recipe, "nemotron_3_nano") == 0)
        keep_cudnn_ln = 1;
    if (!keep_cudnn_ln) {
        mbridge_perf_del(e, "NVTE_NORM_FWD_USE_CUDNN");
        mbridge_perf_del(e, "NVTE_NORM_BWD_USE_CUDNN");
    }
    if (r->dtype == NP_MB_NVFP4)
        mbridge_perf_set(e, "NVTE_USE_FAST_MATH", "1", MBP5 "perf_plugins.py:572-574 (nvfp4)");
    mbridge_perf_env_after_tag(r, e);
}

/* 26.08: v0.6.0's executor exports only OFFLINE_BENCHMARK_ENV_VARS (utils/executors.py:87-91,146-165); the
 * recipe's env_vars are set by bootstrap.py in the task (os.environ.setdefault, bootstrap.py:43-50). */
static void mbridge_perf_env_v6(const struct np_launch_config *c, struct mbridge_perf_env *e)
{
    mbridge_perf_set(e, "TRANSFORMERS_OFFLINE", "1", MBP6 "utils/executors.py:87-91 OFFLINE_BENCHMARK_ENV_VARS");
    mbridge_perf_set(e, "TOKENIZERS_PARALLELISM", "False", MBP6 "utils/executors.py:87-91 OFFLINE_BENCHMARK_ENV_VARS");
    mbridge_perf_set(e, "HF_HUB_OFFLINE", "0", MBP6 "utils/executors.py:87-91 OFFLINE_BENCHMARK_ENV_VARS");
    if (strcmp(c->gpu_type, "gb200") == 0) {
        mbridge_perf_set(e, "NCCL_NET_GDR_LEVEL", "PHB", MBP6 "utils/executors.py:151-153 (GB200)");
        mbridge_perf_set(e, "NCCL_NET_GDR_C2C", "1", MBP6 "utils/executors.py:151-153 (GB200)");
    }
    mbridge_perf_set(e, "HF_HUB_OFFLINE", "1", MBP6 "utils/executors.py:161-163 (--offline)");
}

size_t np_mbridge_perf_env(const struct np_launch_config *c, const char **names, const char **values,
                           const char **origins, size_t cap)
{
    struct mbridge_perf_env e = {.n = 0};
    if (!c->mb)
        return 0;
    if (mbridge_perf_v6(c))
        mbridge_perf_env_v6(c, &e);
    else if (mbridge_perf_v5(c))
        mbridge_perf_env_v5(c, &e);
    else if (mbridge_perf_evaluated(c))
        for (char **v = c->mb->launcher_env; *v; v++)
            /* NEMORUN_HOME: the launcher's log folder (v0.1/v0.2 utils/executors.py), the experiment folder here */
            mbridge_perf_set(&e, *v, strcmp(*v + strlen(*v) + 1, "@LOG_DIR@") == 0 && c->experiment_dir
                                         ? c->experiment_dir : *v + strlen(*v) + 1, c->mb->launcher_source);
    /* nemoperf's: the staged Hugging Face files (read offline), unbuffered output, NCCL trace, profile folder */
    if (c->tokenizer_dir && !mbridge_perf_get(&e, "HF_HOME"))
        mbridge_perf_set(&e, "HF_HOME", c->tokenizer_dir, "nemoperf: the Hugging Face files ./setup staged");
    mbridge_perf_set(&e, "PYTHONUNBUFFERED", "1", "nemoperf: unbuffered log lines");
    if (c->nccltrace) {
        mbridge_perf_set(&e, "NCCL_DEBUG", "INFO", "nemoperf: ENABLE_NCCLTRACE");
        mbridge_perf_set(&e, "NCCL_DEBUG_SUBSYS", "COLL,P2P,NET", "nemoperf: ENABLE_NCCLTRACE");
    }
    if (c->profile)
        mbridge_perf_set(&e, "NEMOPERF_PROFILE_DIR", c->experiment_dir, "nemoperf: ENABLE_PROFILE (nsys -o)");
    size_t n = e.n < cap ? e.n : cap;
    for (size_t i = 0; i < n; i++) {
        names[i] = e.v[i].name;
        values[i] = e.v[i].value;
        if (origins)
            origins[i] = e.origin[i];
    }
    return n;
}

const char *np_mbridge_perf_cpus(const struct np_launch_config *c)
{
    const struct np_mbperf_row *r = c->mb;
    /* v0.4.2's rules are v0.5.0's but for Llama pre-training, which no 26.04.01 B300 row is
     * (v0.4.2 setup_experiment.py:288-301) */
    if (!r || strcmp(c->gpu_type, "b300") != 0 || !(mbridge_perf_v5(c) || mbridge_perf_v6(c) || mbridge_perf_evaluated(c)))
        return NULL;
    /* no enable_pct_binding yet: -C on every B300 job (r0.4.0 f171d7d utils/executors.py:135-138, v0.3.0 and
     * r0.3.0 1f0cfc3 128-129) */
    static const char *const always[] = {"r0.4.0-f171d7d", "r0.3.0-1f0cfc3", "v0.3.0"};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        if (strcmp(r->release, always[i]) == 0)
            return " -C $((SLURM_LOCALID * 16)),$((SLURM_LOCALID * 16 + 1))";
    /* enable_pct_binding (default True, argument_parser.py) turned off for these rows: v0.5.0
     * setup_experiment.py:483-499, v0.6.0 564-581 (which adds Kimi) */
    const char *dt = np_mb_dtype_name(r->dtype);
    int pretrain = c->task == NP_TASK_PRETRAIN;
    if ((strcmp(r->family, "nemotronh") == 0 && strcmp(r->recipe, "nemotron_3_super") == 0 && strcmp(dt, "bf16") == 0) ||
        (strcmp(r->family, "deepseek") == 0 && strcmp(r->recipe, "deepseek_v3") == 0 &&
         !(r->config_variant && strcmp(r->config_variant, "large_scale") == 0)) ||
        (strcmp(r->family, "llama") == 0 && pretrain) ||
        (mbridge_perf_v6(c) && strcmp(r->family, "kimi") == 0 && pretrain))
        return NULL;
    /* executors.py: v0.5.0 143-144, v0.6.0 184-185 */
    return " -C $((SLURM_LOCALID * 16)),$((SLURM_LOCALID * 16 + 1))";
}

/* {"value": v, "source": s} */
static json_t *mbridge_perf_sourced(json_t *v, const char *source)
{
    return json_pack("{s:o, s:s}", "value", v ? v : json_null(), "source", source ? source : "");
}

json_t *np_mbridge_perf_json(const struct np_launch_config *c)
{
    const struct np_mbperf_row *r = c->mb;
    if (!r)
        return json_object();
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    char pub_src[300], cfg_src[600], rel_src[200];
    snprintf(pub_src, sizeof pub_src, "published row, NVIDIA-NeMo/Megatron-Bridge 067f987 %s", r->published_source);
    snprintf(cfg_src, sizeof cfg_src, "%s (%s at %s)", r->config ? r->config : "-",
             r->config_source ? r->config_source : "-", r->release);
    snprintf(rel_src, sizeof rel_src, "NVIDIA-NeMo/Megatron-Bridge %s %s (docs/megatron-bridge.md: container -> release)",
             r->release, r->commit);
    /* the identity nemoperf-parse reads from the manifest (parse/run.c np_manifest_read, parse/family_mbridge.c) */
    bad |= json_object_set_new(o, "recipe", json_string(r->recipe));
    bad |= json_object_set_new(o, "dtype", json_string(np_mb_dtype_name(r->dtype)));
    bad |= json_object_set_new(o, "gpu_type", json_string(r->gpu_type));
    bad |= json_object_set_new(o, "gpus", json_integer(c->gpus));
    bad |= json_object_set_new(o, "container", json_string(r->container));
    bad |= json_object_set_new(o, "gbs", json_integer(c->gbs));
    bad |= json_object_set_new(o, "seq_len", r->seq_len > 0 ? json_integer(r->seq_len) : json_null());
    bad |= json_object_set_new(o, "task", json_string(r->task));
    bad |= json_object_set_new(o, "data", mbridge_perf_data_json(c));
    bad |= json_object_set_new(o, "kind", json_string("perf"));
    bad |= json_object_set_new(o, "family", json_string(r->family));
    bad |= json_object_set_new(o, "variant", json_string(r->variant));
    bad |= json_object_set_new(o, "release", mbridge_perf_sourced(json_string(r->release), rel_src));
    bad |= json_object_set_new(o, "commit", json_string(r->commit));
    bad |= json_object_set_new(o, "published_source", json_string(pub_src));
    bad |= json_object_set_new(o, "config", mbridge_perf_sourced(json_string(r->config ? r->config : ""), cfg_src));
    bad |= json_object_set_new(o, "config_variant", r->config_variant ? json_string(r->config_variant) : json_null());
    /* a row of a container nemoperf does not launch: shown, never submitted (rows-<container>.json "launch") */
    bad |= json_object_set_new(o, "launchable", json_boolean(r->launchable));
    bad |= json_object_set_new(o, "why_not", r->why_not ? json_string(r->why_not) : json_null());
    char row_note[900];
    const char *rn = mbridge_perf_note(r, "row", row_note, sizeof row_note);
    bad |= json_object_set_new(o, "note", rn ? json_string(rn) : json_null());
    /* the settings that decide the row: what the command asks for, with where each value comes from */
    json_t *res = json_object_get(r->json, "resolved"), *vals = json_object_get(res, "values");
    json_t *ovr = json_object_get(r->json, "overrides");
    static const struct {
        const char *key, *flag, *cfg;
    } knobs[] = {
        {"tp", "-tp", "model.tensor_model_parallel_size"},   {"pp", "-pp", "model.pipeline_model_parallel_size"},
        {"cp", "-cp", "model.context_parallel_size"},        {"vp", "-vp", "model.virtual_pipeline_model_parallel_size"},
        {"ep", "-ep", "model.expert_model_parallel_size"},   {"gbs", "-gb", "train.global_batch_size"},
        {"mbs", "-mb", "train.micro_batch_size"},
    };
    json_t *set = json_object();
    for (size_t i = 0; set && i < sizeof knobs / sizeof knobs[0]; i++) {
        json_t *pv = json_object_get(json_object_get(r->json, "published"), knobs[i].key);
        json_t *ov = json_object_get(ovr, knobs[i].flag);
        char src[2400], note[900];
        if (ov && mbridge_perf_note(r, knobs[i].flag, note, sizeof note))
            snprintf(src, sizeof src, "%s on the command: the published value (%s); %s", knobs[i].flag, pub_src, note);
        else if (ov)
            snprintf(src, sizeof src, "%s on the command: the published value (%s), which the release config %s "
                     "leaves to its base recipe or does not have", knobs[i].flag, pub_src, cfg_src);
        else
            snprintf(src, sizeof src, "%s, = %s", cfg_src, pub_src);
        json_t *v = ov ? ov : json_object_get(vals, knobs[i].key);
        bad |= json_object_set_new(set, knobs[i].cfg, json_pack("{s:O?, s:O?, s:s}", "value", v ? v : json_null(),
                                                                "published", pv ? pv : json_null(), "source", src));
    }
    char ms_src[200];
    int has_ms = 0;
    for (char **a = r->args; a && *a; a++)
        has_ms |= strcmp(*a, "-ms") == 0;
    snprintf(ms_src, sizeof ms_src, "%s (-ms on the command; NVIDIA's llmb runs 50: EXP llama3.1/pretrain/"
             "megatron_bridge/launch.sh)", c->max_steps_explicit ? "MAX_STEPS" : "MAX_STEPS default");
    char ti_src[400];
    json_t *ti = json_object_get(json_object_get(json_object_get(r->json, "resolved"), "train_iters"), "source");
    const char *tis = json_is_string(ti) ? json_string_value(ti) : "-";
    if (c->max_steps_explicit)
        snprintf(ti_src, sizeof ti_src, "MAX_STEPS (train.train_iters=%d on the command: the release's parser has "
                 "no -ms; its config: %s)", c->max_steps, tis);
    else
        snprintf(ti_src, sizeof ti_src, "the release config's own (%s; its parser has no -ms)", tis);
    bad |= json_object_set_new(set, "train.train_iters",
                               has_ms             ? mbridge_perf_sourced(json_integer(c->max_steps), ms_src)
                               : r->train_iters > 0 ? mbridge_perf_sourced(json_integer(c->max_steps), ti_src)
                                                  : mbridge_perf_sourced(json_null(), "the release's own: its parser has no -ms"));
    bad |= json_object_set_new(set, "seq_length",
                               mbridge_perf_sourced(r->seq_len > 0 ? json_integer(r->seq_len) : json_null(),
                                                    "the release recipe's own (no -sl on the command); published "
                                                    "column shown"));
    bad |= json_object_set_new(o, "settings", set ? set : json_null());
    bad |= json_object_set_new(o, "resolved", json_deep_copy(res ? res : json_null()));
    bad |= json_object_set_new(o, "published", json_deep_copy(json_object_get(r->json, "published")));
    char **argv = np_mbridge_perf_argv(c);
    json_t *cmd = json_array();
    for (char **a = argv; cmd && a && *a; a++)
        bad |= json_array_append_new(cmd, json_string(*a));
    np_strv_free(argv);
    bad |= json_object_set_new(o, "rank_command", cmd ? cmd : json_null());
    char entry_src[200];
    snprintf(entry_src, sizeof entry_src, "%s",
             mbridge_perf_v6(c)   ? MBP6 "setup_experiment.py:67,591 (bootstrap.py; PYTHONPATH 149-168)"
             : mbridge_perf_v5(c) ? MBP5 "setup_experiment.py:63,518,699-704 (run_script.py; PYTHONPATH the scripts folder)"
             : r->rank_args && mbridge_perf_evaluated(c)
                 ? "the rank command the release's setup_experiment.py builds (launcher-env.py --main ran it up to "
                   "run.run(): v0.1.0rc4 setup_experiment.py:142-159, r0.2.0 44dae92 :130-149)"
             : mbridge_perf_evaluated(c) ? "the release's setup_experiment.py run.Script (v0.4.2 :471-476, f171d7d "
                                           ":455-460): run_script.py, its argv; PYTHONPATH the scripts folder"
                                  : "the release's scripts/performance/run_script.py (its launcher is not rendered: "
                                    "see why_not)");
    bad |= json_object_set_new(o, "entry_point", mbridge_perf_sourced(json_string(np_mbperf_entry(r->release)),
                                                                      entry_src));
    const char *names[MBRIDGE_PERF_MAX_VARS], *values[MBRIDGE_PERF_MAX_VARS], *origins[MBRIDGE_PERF_MAX_VARS];
    size_t nv = np_mbridge_perf_env(c, names, values, origins, MBRIDGE_PERF_MAX_VARS);
    json_t *env = json_object();
    for (size_t i = 0; env && i < nv; i++)
        bad |= json_object_set_new(env, names[i], mbridge_perf_sourced(json_string(values[i]), origins[i]));
    bad |= json_object_set_new(o, "env_origin", env ? env : json_null());
    if (mbridge_perf_v6(c)) { /* set by bootstrap.py in each task, unless the process already has the name */
        json_t *renv = json_object();
        for (char **e = r->env; renv && e && *e; e++)
            bad |= json_object_set_new(renv, *e, json_string(np_setting_value(*e)));
        bad |= json_object_set_new(o, "recipe_env", renv ? renv : json_null());
        char rsrc[900];
        snprintf(rsrc, sizeof rsrc, "%s cfg.env_vars (COMMON_PERF_ENV_VARS: src/megatron/bridge/perf_recipes/"
                 "environment.py), applied by bootstrap.py:43-50 (os.environ.setdefault)", cfg_src);
        bad |= json_object_set_new(o, "recipe_env_source", json_string(rsrc));
    }
    const char *cpus = np_mbridge_perf_cpus(c);
    bad |= json_object_set_new(o, "numactl_cpus", mbridge_perf_sourced(cpus ? json_string(cpus) : json_null(),
                                                                       mbridge_perf_v6(c)
                                                                           ? MBP6 "utils/executors.py:182-186; "
                                                                                  "setup_experiment.py:564-581"
                                                                           : MBP5 "utils/executors.py:141-145; "
                                                                                  "setup_experiment.py:483-499"));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* nemoperf-synth prints rank 0's MODEL_TFLOP/s/GPU as Megatron-Bridge does, from the FLOPs of one global batch
 * (MB@v0.6.0 training/utils/train_utils.py: num_floating_point_operations over the batch); the parse counts
 * the same with np_mbf_flops_per_token over the published row's sequence length, TP and variant
 * (parse/family_mbridge.c), so the synthetic run's cross-check agrees. */
double np_mbridge_perf_step_tflops(const struct np_launch_config *c)
{
    const struct np_mbperf_row *r = c->mb;
    if (!r || c->gbs <= 0)
        return NAN;
    int seq = r->seq_len > 0 ? r->seq_len : c->seq_len;
    double per_token = np_mbf_flops_per_token(r->recipe, r->task, r->variant, np_mbf_conv_of_release(r->release),
                                              seq, r->tp > 0 ? r->tp : 1, NULL);
    return isnan(per_token) ? NAN : per_token * seq * (double)c->gbs / 1e12;
}
