/* mbridge_lora.c - ./setup for a Megatron-Bridge LoRA row: the base model and SQuAD from the Hub, then one
 * one-node job that makes the SQuAD data set cache, its rajpurkar___squad link and the converted checkpoint
 * where the launch looks (np_mbridge_perf_staged), with the commands of NVIDIA's reproduction
 * (exemplar-performance e249aa3 llama3/finetune/download_ckpt_dataset.sh, cited line by line below).  The
 * checkpoint is made under a temporary name and renamed; the link is made last, so a failed job leaves neither.
 */
#include "nemoperf/setup/mbridge_lora.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nemoperf/model/layout.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/setup/stage.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"

/* The base model of each LoRA recipe and its local folder name: exemplar-performance e249aa3
 * llama3/finetune/metadata.yaml:39-45 (repos: meta-llama/Meta-Llama-3-70B as "Meta-Llama-3-70B", rajpurkar/squad
 * as "squad"); the weights' size when the index gives none is the bf16 safetensors' (141 GB). */
static const struct {
    const char *recipe, *hf_repo, *name;
    double bytes;
} mblora_models[] = {
    {"llama3_70b", "meta-llama/Meta-Llama-3-70B", "Meta-Llama-3-70B", 141.2e9},
};

#define MBLORA_SQUAD_REPO "rajpurkar/squad"
#define MBLORA_SQUAD_NAME "squad" /* the cache key load_dataset(<local folder>) uses: the folder's name */
#define MBLORA_DATA_BYTES 1073741824.0
/* the model files besides the shards (optional: "?"), the data set's (rajpurkar/squad at main) */
static const char *const mblora_model_files[] = {"config.json", "generation_config.json?", "tokenizer_config.json",
                                                 "tokenizer.json?", "special_tokens_map.json?", NULL};
static const char *const mblora_squad_files[] = {"README.md?", "plain_text/train-00000-of-00001.parquet",
                                                 "plain_text/validation-00000-of-00001.parquet", NULL};

static char *mblora_path(const char *a, const char *b)
{
    char *p = NULL;
    return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

static void mblora_state(struct np_mblora *p)
{
    struct stat st;
    p->have_ckpt = stat(p->ckpt, &st) == 0 && S_ISDIR(st.st_mode);
    p->have_data = stat(p->link, &st) == 0 && S_ISDIR(st.st_mode); /* the link and what it names */
}

int np_mblora_plan(const char *stage, const struct np_mbperf_row *row, struct np_mblora *p)
{
    memset(p, 0, sizeof *p);
    if (!row->task || strcmp(row->task, "lora") != 0)
        return 0;
    size_t i = 0;
    while (i < sizeof mblora_models / sizeof mblora_models[0] && strcmp(mblora_models[i].recipe, row->recipe) != 0)
        i++;
    if (i == sizeof mblora_models / sizeof mblora_models[0]) {
        np_errorf("%s %s lora: no base model known for its checkpoint conversion (NVIDIA's reproduction names "
                  "only llama3_70b's); nothing was created", row->container, row->recipe);
        return -1;
    }
    p->stage = stage;
    p->recipe = row->recipe;
    p->hf_repo = mblora_models[i].hf_repo;
    p->weight_bytes = mblora_models[i].bytes;
    char *mb = mblora_path(stage, "mbridge"), *repos = mb ? mblora_path(mb, "repos") : NULL,
         *cks = mb ? mblora_path(mb, "checkpoints") : NULL;
    p->model_dir = repos ? mblora_path(repos, mblora_models[i].name) : NULL;
    p->squad_dir = repos ? mblora_path(repos, MBLORA_SQUAD_NAME) : NULL;
    p->datasets = mb ? mblora_path(mb, "datasets") : NULL;
    p->link = p->datasets ? mblora_path(p->datasets, "rajpurkar___squad") : NULL;
    p->ckpt = cks ? mblora_path(cks, row->recipe) : NULL;
    if (cks && asprintf(&p->ckpt_tmp, "%s/.%s.converting", cks, row->recipe) < 0)
        p->ckpt_tmp = NULL;
    p->checkout = np_mbridge_checkout_dir(stage, &row->repo);
    free(mb);
    free(repos);
    free(cks);
    if (!p->model_dir || !p->squad_dir || !p->datasets || !p->link || !p->ckpt || !p->ckpt_tmp || !p->checkout) {
        np_mblora_free(p);
        np_errorf("out of memory");
        return -1;
    }
    mblora_state(p);
    return 1;
}

void np_mblora_free(struct np_mblora *p)
{
    free(p->model_dir);
    free(p->squad_dir);
    free(p->datasets);
    free(p->link);
    free(p->ckpt);
    free(p->ckpt_tmp);
    free(p->checkout);
    memset(p, 0, sizeof *p);
}

/* The GPU: the reproduction's setup task runs with requires_gpus: true (metadata.yaml:67-70). */
#define MBLORA_GPUS "--gpus-per-node=1"

int np_mblora_check_slurm(const struct np_mblora *p, const struct np_ftprep_job_opts *o, int dry_run)
{
    (void)p;
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "#!/bin/sh\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --exclusive\n#SBATCH " MBLORA_GPUS
                      "\n#SBATCH --time=" NP_MBLORA_TIME "\n");
    if (o->account)
        np_buf_appendf(&b, "#SBATCH --account=%s\n", o->account);
    if (o->partition)
        np_buf_appendf(&b, "#SBATCH --partition=%s\n", o->partition);
    np_buf_append(&b, "true\n");
    char *script = np_buf_steal(&b);
    struct np_backend be;
    struct np_error err = {0};
    struct np_slurm_cli_opts so = {.sbatch = o->sbatch_prog};
    int rc = 0;
    if (!script || np_slurm_cli_backend(&be, &so, &err) != NP_OK) {
        free(script);
        return 0; /* no sbatch: the check of the tools says so */
    }
    char *msg = NULL;
    enum np_status st = np_slurm_cli_test_only_text(&be, script, &msg, &err);
    free(msg);
    free(script);
    np_backend_free(&be);
    if (st == NP_E_INVALID) {
        if (dry_run)
            np_warnf("the LoRA row's checkpoint conversion needs one node with a GPU%s%s, and Slurm says it can never "
                     "run (sbatch %s); --dry-run goes on, ./setup would stop here",
                     o->partition ? " in partition " : "", o->partition ? o->partition : "", err.text);
        else {
            np_errorf("the LoRA row's checkpoint conversion and SQuAD cache need a one-node job with a GPU (" MBLORA_GPUS
                      ", as NVIDIA's setup task: requires_gpus, exemplar-performance llama3/finetune/metadata.yaml:"
                      "67-70)%s%s, and Slurm says it can never run: sbatch %s; set SBATCH_PARTITION to a partition "
                      "with GPU nodes; nothing was created or downloaded",
                      o->partition ? " in partition " : "", o->partition ? o->partition : "", err.text);
            rc = 2;
        }
    } else if (st != NP_OK) {
        np_warnf("cannot check that the LoRA staging job can run (%s); going on", err.text);
    }
    return rc;
}

/* srun of one container step, as the reproduction runs it (download_ckpt_dataset.sh:76-82, 99-105) */
static void mblora_srun(struct np_buf *b, const struct np_mblora *p, const struct np_ftprep_job_opts *o)
{
    np_buf_append(b, "srun --nodes=1 --ntasks=1 --container-image=");
    np_buf_append_shq(b, o->sqsh ? o->sqsh : "");
    np_buf_append(b, " --container-mounts=");
    np_buf_append_shqf(b, "%s:%s", p->stage, p->stage);
    np_buf_append(b, " --container-writable --no-container-mount-home python3");
}

char **np_mblora_job_argv(const struct np_mblora *p, const struct np_ftprep_job_opts *o)
{
    struct np_strv a = {0};
    /* --exclusive: the conversion holds the whole model in host memory */
    np_stage_job_head(&a, o->sbatch_prog, 1, NP_MBLORA_TIME, "nemoperf-setup-lora", o->account, o->partition,
                      o->log_dir ? o->log_dir : p->stage, "setup-lora");
    np_strv_push(&a, MBLORA_GPUS);
    struct np_buf b;
    np_buf_init(&b);
    /* download_ckpt_dataset.sh:28, 38, 44-50: offline, HF_HOME the jobs' (the launch's), HF_DATASETS_CACHE the
     * data set root */
    char *hf_home = np_stage_mbridge_hf_home(p->stage);
    np_buf_append(&b, "set -eu\nexport OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "
                      "HF_DATASETS_OFFLINE=1 HF_HOME=");
    np_buf_append_shq(&b, hf_home ? hf_home : p->stage);
    free(hf_home);
    np_buf_append(&b, " HF_DATASETS_CACHE=");
    np_buf_append_shq(&b, p->datasets);
    np_buf_append(&b, "\nmkdir -p ");
    np_buf_append_shq(&b, p->datasets);
    np_buf_append(&b, "\n");
    if (!p->have_data) {
        /* :75-84 the cache, :86-93 the canonical key linked to it (made as a temporary link, renamed) */
        mblora_srun(&b, p, o);
        np_buf_append(&b, " -c 'import sys; from datasets import load_dataset; load_dataset(sys.argv[1], "
                          "cache_dir=sys.argv[2])' ");
        np_buf_append_shq(&b, p->squad_dir);
        np_buf_append(&b, " ");
        np_buf_append_shq(&b, p->datasets);
        np_buf_append(&b, "\nln -sfn " MBLORA_SQUAD_NAME " ");
        np_buf_append_shqf(&b, "%s/.rajpurkar___squad.linking", p->datasets);
        np_buf_append(&b, "\nmv -Tf ");
        np_buf_append_shqf(&b, "%s/.rajpurkar___squad.linking", p->datasets);
        np_buf_append(&b, " ");
        np_buf_append_shq(&b, p->link);
        np_buf_append(&b, "\n");
    }
    if (!p->have_ckpt) {
        /* :95-109 in the checkout, under a temporary name renamed when whole */
        np_buf_append(&b, "tmp=");
        np_buf_append_shq(&b, p->ckpt_tmp);
        np_buf_append(&b, "\nrm -rf \"$tmp\"\ntrap 'rm -rf \"$tmp\"' EXIT\ncd ");
        np_buf_append_shq(&b, p->checkout);
        np_buf_append(&b, "\n");
        mblora_srun(&b, p, o);
        np_buf_append(&b, " ");
        np_buf_append_shqf(&b, "%s/examples/conversion/convert_checkpoints.py", p->checkout);
        np_buf_append(&b, " import --hf-model ");
        np_buf_append_shq(&b, p->model_dir);
        np_buf_append(&b, " --megatron-path ");
        np_buf_append_shq(&b, p->ckpt_tmp);
        np_buf_append(&b, " --torch-dtype bfloat16\nmv -T \"$tmp\" ");
        np_buf_append_shq(&b, p->ckpt);
        np_buf_append(&b, "\n");
    }
    return np_stage_job_wrap(&a, &b);
}

void np_mblora_dry_run(const struct np_mblora *p, const struct np_ftprep_job_opts *o, const char *endpoint, FILE *out)
{
    if (p->have_ckpt && p->have_data) {
        fprintf(out, "# lora %s: checkpoint and SQuAD already staged\n", p->recipe);
        return;
    }
    fprintf(out, "# lora %s: the Hub files below, then one one-node job (the free space is checked first)\n",
            p->recipe);
    if (!p->have_ckpt)
        fprintf(out, "GET %s/%s/resolve/main/{model.safetensors.index.json,config.json,...} -> %s/ (then each shard "
                     "the index names)\n", endpoint, p->hf_repo, p->model_dir);
    if (!p->have_data)
        fprintf(out, "GET %s/datasets/%s/resolve/main/plain_text/*.parquet -> %s/plain_text/\n", endpoint,
                MBLORA_SQUAD_REPO, p->squad_dir);
    char **argv = np_mblora_job_argv(p, o);
    for (char **w = argv; w && *w; w++) {
        char *q = np_shell_quote(*w);
        fprintf(out, "%s%s", w == argv ? "" : " ", q ? q : "");
        free(q);
    }
    fprintf(out, "\n");
    np_strv_free(argv);
}

/* One file: 0 fetched or present (or absent and optional), -1 failed (said). */
static int mblora_fetch(struct np_hf_client *c, const char *repo, int dataset, const char *spec, const char *dir)
{
    char file[256];
    size_t n = strcspn(spec, "?");
    snprintf(file, sizeof file, "%.*s", (int)n, spec);
    int optional = spec[n] == '?';
    const char *slash = strrchr(file, '/');
    char *dest = slash ? NULL : strdup(dir);
    if (slash && asprintf(&dest, "%s/%.*s", dir, (int)(slash - file), file) < 0)
        dest = NULL;
    if (!dest) {
        np_errorf("out of memory");
        return -1;
    }
    struct np_error err = {0};
    enum np_hf_fetch what = NP_HF_FETCHED;
    long long bytes = 0;
    enum np_status st = dataset ? np_hf_fetch_dataset_file(c, repo, NULL, file, dest, &what, &bytes, &err)
                                : np_hf_fetch_file(c, repo, NULL, file, dest, &what, &bytes, &err);
    free(dest);
    if (st != NP_OK) {
        np_error_print(&err);
        return -1;
    }
    if (what == NP_HF_ABSENT && !optional) {
        np_errorf("%s: %s is not in the %s (HTTP 404)", repo, file, dataset ? "data set" : "repository");
        return -1;
    }
    if (what == NP_HF_FETCHED)
        np_notef("%s: downloaded %s (%lld bytes)", repo, file, bytes);
    return 0;
}

static int mblora_shard_ok(const char *f)
{
    return *f && !strchr(f, '/') && f[0] != '.' && strstr(f, ".safetensors");
}

static void mblora_human(double b, char *buf, size_t size)
{
    snprintf(buf, size, b >= 1e9 ? "%.1f GB" : "%.1f MB", b >= 1e9 ? b / 1e9 : b / 1e6);
}

/* The downloads: 0 or the number of failures (said). */
static int mblora_download(struct np_mblora *p, struct np_hf_client *c, volatile sig_atomic_t *cancel)
{
    char **shards = NULL;
    struct np_error err = {0};
    if (!p->have_ckpt) {
        if (np_stage_mkdirs(p->model_dir, &err) != NP_OK) {
            np_error_print(&err);
            return 1;
        }
        if (mblora_fetch(c, p->hf_repo, 0, "model.safetensors.index.json?", p->model_dir) != 0)
            return 1;
        char *ix = mblora_path(p->model_dir, "model.safetensors.index.json");
        double total = -1;
        if (ix && access(ix, R_OK) != 0) { /* one unsharded file */
            struct np_strv v = {0};
            np_strv_push(&v, "model.safetensors");
            shards = np_strv_steal(&v);
        } else if (!ix || np_hf_weight_index(ix, mblora_shard_ok, 0, &shards, &total, &err) != NP_OK) {
            np_errorf("%s: model.safetensors.index.json has no weight_map of *.safetensors files", p->hf_repo);
            free(ix);
            return 1;
        }
        free(ix);
        if (total > 0)
            p->weight_bytes = total;
    }
    /* the space: the Hub's weights and the checkpoint converted from them (bf16 both), SQuAD and its cache */
    double need = (p->have_ckpt ? 0 : 2 * p->weight_bytes) + (p->have_data ? 0 : MBLORA_DATA_BYTES), avail = 0;
    char a[32], b[32];
    mblora_human(need, b, sizeof b);
    int failures = 0;
    if (np_stage_free_space(p->stage, &avail) != 0) {
        np_errorf("STAGE_PATH=%s: cannot read its free space: %s", p->stage, strerror(errno));
        failures++;
    } else if (avail < need) {
        mblora_human(avail, a, sizeof a);
        np_errorf("STAGE_PATH=%s has %s free, but the LoRA row needs %s more (the Hugging Face weights of %s, the "
                  "Megatron-Bridge checkpoint converted from them, SQuAD): free space or use a larger STAGE_PATH; "
                  "no weights were downloaded", p->stage, a, p->hf_repo, b);
        failures++;
    } else {
        mblora_human(avail, a, sizeof a);
        np_notef("the LoRA row needs %s more on %s (%s free)", b, p->stage, a);
    }
    for (const char *const *f = mblora_model_files; !failures && !p->have_ckpt && *f && !(cancel && *cancel); f++)
        failures += mblora_fetch(c, p->hf_repo, 0, *f, p->model_dir) != 0;
    for (char **f = shards; !failures && f && *f && !(cancel && *cancel); f++)
        failures += mblora_fetch(c, p->hf_repo, 0, *f, p->model_dir) != 0;
    np_strv_free(shards);
    if (!failures && !p->have_data && np_stage_mkdirs(p->squad_dir, &err) != NP_OK) {
        np_error_print(&err);
        failures++;
    }
    for (const char *const *f = mblora_squad_files; !failures && !p->have_data && *f && !(cancel && *cancel); f++)
        failures += mblora_fetch(c, MBLORA_SQUAD_REPO, 1, *f, p->squad_dir) != 0;
    return failures + (cancel && *cancel ? 1 : 0);
}

int np_mblora_stage(struct np_mblora *p, struct np_hf_client *c, const struct np_ftprep_job_opts *o, FILE *out)
{
    mblora_state(p);
    if (p->have_ckpt && p->have_data) {
        fprintf(out, "lora     %s: checkpoint %s and SQuAD %s already staged\n", p->recipe, p->ckpt, p->link);
        return 0;
    }
    struct stat st;
    if (!o->sqsh || stat(o->sqsh, &st) != 0 || st.st_size == 0) {
        np_errorf("the container image %s is not staged: the LoRA row's checkpoint conversion and SQuAD cache run "
                  "in it (run setup without --skip-image, or set RUN_CONF_IMAGE to a .sqsh)",
                  o->sqsh ? o->sqsh : "(none)");
        return 1;
    }
    char conv[4200];
    snprintf(conv, sizeof conv, "%s/examples/conversion/convert_checkpoints.py", p->checkout);
    if (!p->have_ckpt && access(conv, R_OK) != 0) {
        np_errorf("%s: not staged (the Megatron-Bridge checkout of the row converts the checkpoint); run setup "
                  "again for it", conv);
        return 1;
    }
    int failures = mblora_download(p, c, o->cancel);
    if (failures || (o->cancel && *o->cancel))
        return failures ? failures : 1;
    struct np_error err = {0};
    if (np_stage_mkdirs(o->log_dir ? o->log_dir : p->stage, &err) != NP_OK) {
        np_error_print(&err);
        return 1;
    }
    char **argv = np_mblora_job_argv(p, o);
    if (!argv) {
        np_errorf("out of memory");
        return 1;
    }
    np_notef("submitting a one-node job to %s%s%s for %s lora", p->have_data ? "" : "cache SQuAD",
             !p->have_data && !p->have_ckpt ? " and " : "", p->have_ckpt ? "" : "convert the checkpoint", p->recipe);
    int status = 0, stopped = 0;
    char jobid[64] = "";
    enum np_status rs = np_stage_run(argv, 1, o->cancel, 0, jobid, sizeof jobid, &status, &stopped, &err);
    np_strv_free(argv);
    mblora_state(p);
    char how[64];
    np_stage_wait_text(status, how, sizeof how);
    if (rs != NP_OK) {
        np_error_print(&err);
        return 1;
    }
    if (stopped) {
        np_errorf("the LoRA staging job%s%s was interrupted (cancelled)", jobid[0] ? " " : "", jobid);
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !p->have_ckpt || !p->have_data) {
        np_errorf("the LoRA staging job%s%s failed: sbatch %s%s; %s%s%s (see %s/setup-lora_%s.out)", jobid[0] ? " " : "",
                  jobid, how, WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ", but its results are missing" : "",
                  p->have_data ? "" : "no SQuAD cache", !p->have_data && !p->have_ckpt ? ", " : "",
                  p->have_ckpt ? "" : "no checkpoint", o->log_dir ? o->log_dir : p->stage, jobid[0] ? jobid : "<jobid>");
        return 1;
    }
    fprintf(out, "lora     %s: checkpoint %s, SQuAD %s (job %s)\n", p->recipe, p->ckpt, p->link, jobid);
    return 0;
}
