/* ftprep.c - the fine-tuning part of nemoperf-setup (TASK=sft|lora): which models and pack
 * lengths, the disk they need, the weights and SQuAD downloaded with the Hub client, and the
 * one-node job per model that imports the checkpoint and packs SQuAD with NeMo's own code
 * (share/nemoperf/driver/nemoperf_ftprep.py) in the container.
 */
#include "nemoperf/setup/finetune_prep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/job/finetune.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/setup/stage.h"

const char *const np_ftprep_squad_files[] = {"plain_text/train-00000-of-00001.parquet",
                                             "plain_text/validation-00000-of-00001.parquet", NULL};

double np_ftprep_weight_bytes(const struct np_model *m)
{
    const struct np_arch *a = &m->arch;
    double h = a->hidden, attn = h * h * (2.0 + 2.0 * a->kv_groups / a->heads); /* q, o; k, v */
    double per_layer = attn + 3.0 * h * a->ffn_hidden + 2.0 * h;               /* SwiGLU, 2 norms */
    return 2.0 * (2.0 * a->vocab * h + a->layers * per_layer + h);
}

static void ftprep_human(double b, char *buf, size_t size)
{
    if (b >= 1e12)
        snprintf(buf, size, "%.2f TB", b / 1e12);
    else if (b >= 1e9)
        snprintf(buf, size, "%.1f GB", b / 1e9);
    else
        snprintf(buf, size, "%.1f MB", b / 1e6);
}

static int ftprep_listed(const char *list, const char *size)
{
    if (!list)
        return 1;
    size_t n = strlen(size);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t len = strcspn(p, ",");
        size_t t = len;
        while (t && p[t - 1] == ' ')
            t--;
        if (t == n && strncasecmp(p, size, n) == 0)
            return 1;
        p += len;
    }
    return 0;
}

static int ftprep_exists(const char *stage, const char *fmt_a, const char *b)
{
    size_t n = strlen(stage) + strlen(fmt_a) + strlen(b) + 3;
    char *p = malloc(n);
    if (!p)
        return 0;
    snprintf(p, n, "%s/%s%s", stage, fmt_a, b);
    int ok = access(p, F_OK) == 0;
    free(p);
    return ok;
}

static void ftprep_state(const char *stage, struct np_ftprep_model *fm)
{
    const char *repo = fm->model->hf_repo;
    char rel[600];
    snprintf(rel, sizeof rel, "models/%s", repo);
    fm->imported = ftprep_exists(stage, rel, "/context");
    fm->prepared = 1;
    for (size_t k = 0; k < fm->npacks; k++) {
        char *meta = np_ft_pack_metadata_path(stage, repo, fm->packs[k]);
        char *npy = np_ft_packed_path(stage, repo, "training", fm->packs[k]);
        fm->prepared &= meta && npy && access(meta, R_OK) == 0 && access(npy, R_OK) == 0;
        free(meta);
        free(npy);
    }
}

enum np_status np_ftprep_resolve(const struct np_recipe_set *set, const char *recipe, const char *sizes,
                                 enum np_task task, const char *stage, struct np_ftprep_plan *p,
                                 struct np_error *err)
{
    memset(p, 0, sizeof *p);
    p->task = task;
    p->stage = stage;
    char valid[400] = "";
    for (size_t r = 0; r < set->n; r++) {
        const struct np_recipe *rp = &set->recipes[r];
        if (recipe && strcmp(rp->name, recipe) != 0)
            continue;
        for (size_t m = 0; m < rp->nmodels; m++) {
            const struct np_model *mp = &rp->models[m];
            struct np_ftprep_model fm = {rp, mp, {0}, 0, 0, 0};
            for (size_t i = 0; i < mp->nft_rows; i++) {
                const struct np_config_row *row = &mp->ft_rows[i];
                if (row->task != task)
                    continue;
                int pack = np_row_value(row, "seq_len", row->seq_len, NULL);
                size_t k = 0;
                while (k < fm.npacks && fm.packs[k] != pack)
                    k++;
                if (k == fm.npacks && fm.npacks < sizeof fm.packs / sizeof fm.packs[0])
                    fm.packs[fm.npacks++] = pack;
            }
            if (!fm.npacks)
                continue;
            size_t n = strlen(valid);
            snprintf(valid + n, sizeof valid - n, "%s%s %s", n ? ", " : "", rp->name, mp->size);
            if (!ftprep_listed(sizes, mp->size) || p->n == sizeof p->models / sizeof p->models[0])
                continue;
            if (!mp->hf_repo || !np_hf_repo_valid(mp->hf_repo))
                return np_error_set(err, NP_E_INVALID, rp->path, 0, 0,
                                    "models.%s: fine-tuning needs the model's hf_repo (the checkpoint to import)",
                                    mp->size);
            ftprep_state(stage, &fm);
            p->models[p->n++] = fm;
        }
    }
    if (!valid[0])
        return np_error_set(err, NP_E_INVALID, "TASK", 0, 0, "TASK=%s: %s%s has no published %s rows",
                            np_task_name(task), recipe ? "RECIPE=" : "no recipe", recipe ? recipe : "",
                            np_task_name(task));
    if (!p->n)
        return np_error_set(err, NP_E_INVALID, "MODEL_SIZE", 0, 0, "MODEL_SIZE=%s: no %s rows for it; allowed: %s",
                            sizes, np_task_name(task), valid);
    p->need_bytes = np_ftprep_need(p, NULL);
    return NP_OK;
}

double np_ftprep_need(const struct np_ftprep_plan *p, const double *weights_bytes)
{
    double need = 0;
    int data = 0;
    for (size_t i = 0; i < p->n; i++) {
        const struct np_ftprep_model *fm = &p->models[i];
        if (!fm->imported) {
            double w = weights_bytes && weights_bytes[i] > 0 ? weights_bytes[i] : np_ftprep_weight_bytes(fm->model);
            need += 2 * w; /* the Hub's safetensors, and the NeMo checkpoint made from them */
        }
        data |= !fm->prepared;
    }
    return need + (data ? NP_FTPREP_DATA_BYTES : 0);
}

/* A shard name of the index: a plain *.safetensors file of the repo's top folder. */
static int ftprep_shard_ok(const char *f)
{
    return *f && !strchr(f, '/') && f[0] != '.' && strstr(f, ".safetensors");
}

/* Fetch one file of repo into dir; 0 ok (or absent when optional), -1 failed (printed). */
static int ftprep_fetch(struct np_hf_client *c, const char *repo, const char *file, const char *dir, int dataset,
                        enum np_hf_fetch *what)
{
    struct np_error err = {0};
    long long bytes = 0;
    enum np_status st = dataset ? np_hf_fetch_dataset_file(c, repo, NULL, file, dir, what, &bytes, &err)
                                : np_hf_fetch_file(c, repo, NULL, file, dir, what, &bytes, &err);
    if (st != NP_OK) {
        np_error_print(&err);
        return -1;
    }
    if (*what == NP_HF_FETCHED)
        np_notef("%s: downloaded %s (%lld bytes)", repo, file, bytes);
    return 0;
}

int np_ftprep_download(const struct np_ftprep_plan *p, struct np_hf_client *c,
                       int (*free_space)(const char *, double *), volatile sig_atomic_t *cancel)
{
    int failures = 0;
    double wbytes[sizeof p->models / sizeof p->models[0]] = {0};
    char **shards[sizeof p->models / sizeof p->models[0]] = {0};
    char *dirs[sizeof p->models / sizeof p->models[0]] = {0};
    /* 1. the index of every model to import: the shards and their exact size */
    for (size_t i = 0; i < p->n && !(cancel && *cancel); i++) {
        const struct np_ftprep_model *fm = &p->models[i];
        if (fm->imported)
            continue;
        const char *repo = fm->model->hf_repo;
        dirs[i] = np_stage_hf_dir(p->stage, repo);
        enum np_hf_fetch what = NP_HF_FETCHED;
        if (!dirs[i] || ftprep_fetch(c, repo, "model.safetensors.index.json", dirs[i], 0, &what) != 0) {
            failures++;
            continue;
        }
        if (what == NP_HF_ABSENT) { /* one unsharded file */
            struct np_strv v = {0};
            np_strv_push(&v, "model.safetensors");
            shards[i] = np_strv_steal(&v);
        } else {
            char *ix = malloc(strlen(dirs[i]) + 40);
            if (ix)
                sprintf(ix, "%s/model.safetensors.index.json", dirs[i]);
            struct np_error ierr; /* the message below says it for ftprep */
            double total = -1;
            if (!ix || np_hf_weight_index(ix, ftprep_shard_ok, 0, &shards[i], &total, &ierr) != NP_OK) {
                np_strv_free(shards[i]);
                shards[i] = NULL;
            }
            wbytes[i] = total != -1 ? total : 0; /* absent: 0, as np_ftprep_need expects */
            free(ix);
            if (!shards[i]) {
                np_errorf("%s: model.safetensors.index.json has no weight_map of *.safetensors files", repo);
                failures++;
            }
        }
    }
    /* 2. the space: stated, and checked before the large downloads */
    double need = np_ftprep_need(p, wbytes), avail = 0;
    char a[32], b[32];
    ftprep_human(need, b, sizeof b);
    if (!failures && (free_space ? free_space : np_stage_free_space)(p->stage, &avail) != 0) {
        np_errorf("STAGE_PATH=%s: cannot read its free space: %s", p->stage, strerror(errno));
        failures++;
    } else if (!failures && avail < need) {
        ftprep_human(avail, a, sizeof a);
        np_errorf("STAGE_PATH=%s has %s free, but TASK=%s needs %s more (Hugging Face weights, the NeMo checkpoint "
                  "made from them, SQuAD): free space or use a larger STAGE_PATH; nothing large was downloaded",
                  p->stage, a, np_task_name(p->task), b);
        failures++;
    } else if (!failures) {
        ftprep_human(avail, a, sizeof a);
        np_notef("fine-tuning needs %s more on %s (%s free)", b, p->stage, a);
    }
    /* 3. the shards, 4. SQuAD */
    for (size_t i = 0; i < p->n && !failures && !(cancel && *cancel); i++) {
        for (char **f = shards[i]; f && *f && !(cancel && *cancel); f++) {
            enum np_hf_fetch what = NP_HF_FETCHED;
            int bad = ftprep_fetch(c, p->models[i].model->hf_repo, *f, dirs[i], 0, &what) != 0;
            if (bad || what == NP_HF_ABSENT) {
                if (!bad)
                    np_errorf("%s: %s is not in the repository (HTTP 404)", p->models[i].model->hf_repo, *f);
                failures++;
                break;
            }
        }
    }
    int data = 0;
    for (size_t i = 0; i < p->n; i++)
        data |= !p->models[i].prepared;
    if (data && !failures) {
        char *dir = malloc(strlen(p->stage) + sizeof "/" NP_FT_PARQUET_DIR "/plain_text");
        if (dir)
            sprintf(dir, "%s/%s/plain_text", p->stage, NP_FT_PARQUET_DIR);
        for (const char *const *f = np_ftprep_squad_files; dir && *f && !(cancel && *cancel); f++) {
            enum np_hf_fetch what = NP_HF_FETCHED;
            int bad = ftprep_fetch(c, NP_FT_SQUAD_REPO, *f, dir, 1, &what) != 0;
            if (bad || what == NP_HF_ABSENT) {
                if (!bad)
                    np_errorf("%s: %s is not in the data set (HTTP 404)", NP_FT_SQUAD_REPO, *f);
                failures++;
                break;
            }
        }
        failures += !dir;
        free(dir);
    }
    for (size_t i = 0; i < p->n; i++) {
        np_strv_free(shards[i]);
        free(dirs[i]);
    }
    return failures + (cancel && *cancel ? 1 : 0);
}

char **np_ftprep_job_argv(const struct np_ftprep_plan *p, const struct np_ftprep_model *m,
                          const struct np_ftprep_job_opts *o)
{
    const char *repo = m->model->hf_repo;
    struct np_strv a = {0};
    /* --exclusive: the import holds the whole model in host memory */
    np_stage_job_head(&a, o->sbatch_prog, 1, NP_FTPREP_TIME, "nemoperf-setup-ftprep", o->account, o->partition,
                      o->log_dir ? o->log_dir : p->stage, "setup-ftprep");
    /* the job: NeMo's environment, offline, and the script in the container */
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "export NEMO_HOME=");
    np_buf_append_shq(&b, p->stage);
    np_buf_append(&b, " HF_HOME=");
    np_buf_append_shq(&b, p->stage);
    np_buf_append(&b, " HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1\n"
                      "srun --nodes=1 --ntasks=1 --container-image=");
    np_buf_append_shq(&b, o->sqsh);
    np_buf_append(&b, " --container-mounts=");
    np_buf_append_shqf(&b, "%s:%s", p->stage, p->stage);
    np_buf_append(&b, " --no-container-mount-home python3 ");
    np_buf_append_shqf(&b, "%s/setup/%s", p->stage, NP_FTPREP_SCRIPT);
    np_buf_append(&b, " --nemo-home ");
    np_buf_append_shq(&b, p->stage);
    np_buf_append(&b, " --factory ");
    np_buf_append_shq(&b, m->model->factory);
    np_buf_append(&b, " --repo ");
    np_buf_append_shq(&b, repo);
    np_buf_append(&b, " --hf-dir ");
    np_buf_append_shqf(&b, "%s/%s/%s", p->stage, NP_STAGE_HF, repo);
    np_buf_append(&b, " --parquet-dir ");
    np_buf_append_shqf(&b, "%s/%s/plain_text", p->stage, NP_FT_PARQUET_DIR);
    for (size_t k = 0; k < m->npacks; k++)
        np_buf_appendf(&b, " --pack-len %d", m->packs[k]);
    char *tok = np_ft_tokenizer_model_name(repo);
    np_buf_append(&b, " --tokenizer-model-name ");
    np_buf_append_shq(&b, tok ? tok : "");
    free(tok);
    np_buf_append(&b, " --tag \"$SLURM_JOB_ID\"\n");
    return np_stage_job_wrap(&a, &b);
}

/* Copy the shipped script to $STAGE_PATH/setup/ (atomically). */
static int ftprep_stage_script(const char *stage)
{
    char *dir = np_data_path("driver");
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/%s", dir ? dir : ".", NP_FTPREP_SCRIPT);
    free(dir);
    FILE *f = fopen(src, "r");
    if (!f) {
        np_errorf("%s: %s (set NEMOPERF_DATADIR or reinstall nemoperf)", src, strerror(errno));
        return -1;
    }
    struct np_buf b;
    np_buf_init(&b);
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        np_buf_appendn(&b, chunk, n);
    int rerr = ferror(f);
    fclose(f);
    char *text = np_buf_steal(&b);
    snprintf(dst, sizeof dst, "%s/setup", stage);
    struct np_error err = {0};
    int rc = 0;
    if (rerr || !text) {
        np_errorf("%s: cannot read", src);
        rc = -1;
    } else if (np_stage_mkdirs(dst, &err) != NP_OK || np_file_write_atomic(dst, NP_FTPREP_SCRIPT, text, 0644, &err)) {
        np_error_print(&err);
        rc = -1;
    }
    free(text);
    return rc;
}

int np_ftprep_run(struct np_ftprep_plan *p, const struct np_ftprep_job_opts *o)
{
    int failures = 0, todo = 0;
    for (size_t i = 0; i < p->n; i++)
        todo += !p->models[i].imported || !p->models[i].prepared;
    if (!todo) {
        for (size_t i = 0; i < p->n; i++)
            printf("finetune %s %s: checkpoint and packed SQuAD already staged\n", p->models[i].recipe->name,
                   p->models[i].model->size);
        return 0;
    }
    struct stat st;
    if (!o->sqsh || stat(o->sqsh, &st) != 0 || st.st_size == 0) {
        np_errorf("the container image %s is not staged: the fine-tuning preparation job runs in it (run setup "
                  "without --skip-image, or set RUN_CONF_IMAGE to a .sqsh)",
                  o->sqsh ? o->sqsh : "(none)");
        return 1;
    }
    struct np_error err = {0};
    if (ftprep_stage_script(p->stage) != 0)
        return 1;
    if (np_stage_mkdirs(o->log_dir ? o->log_dir : p->stage, &err) != NP_OK) {
        np_error_print(&err);
        return 1;
    }
    for (size_t i = 0; i < p->n && !(o->cancel && *o->cancel); i++) {
        struct np_ftprep_model *fm = &p->models[i];
        if (fm->imported && fm->prepared) {
            printf("finetune %s %s: checkpoint and packed SQuAD already staged\n", fm->recipe->name, fm->model->size);
            continue;
        }
        char **argv = np_ftprep_job_argv(p, fm, o);
        if (!argv) {
            np_errorf("out of memory");
            failures++;
            continue;
        }
        np_notef("submitting a one-node job to import %s and pack SQuAD for %s %s", fm->model->hf_repo,
                 fm->recipe->name, fm->model->size);
        int status = 0, stopped = 0;
        char jobid[64] = "";
        enum np_status rs = np_stage_run(argv, 1, o->cancel, 0, jobid, sizeof jobid, &status, &stopped, &err);
        np_strv_free(argv);
        int was_imported = fm->imported;
        ftprep_state(p->stage, fm);
        char how[64];
        np_stage_wait_text(status, how, sizeof how);
        if (rs != NP_OK) {
            np_error_print(&err);
            failures++;
        } else if (stopped) {
            np_errorf("fine-tuning preparation of %s interrupted%s%s%s", fm->model->hf_repo, jobid[0] ? " (job " : "",
                      jobid, jobid[0] ? " cancelled)" : "");
            failures++;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fm->imported || !fm->prepared) {
            np_errorf("fine-tuning preparation job%s%s of %s failed: sbatch %s%s (see %s/setup-ftprep_%s.out)",
                      jobid[0] ? " " : "", jobid, fm->model->hf_repo, how,
                      WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ", but the checkpoint or the packed files "
                                                                      "are missing"
                                                                    : "",
                      o->log_dir ? o->log_dir : p->stage, jobid[0] ? jobid : "<jobid>");
            failures++;
        } else {
            printf("finetune %s %s: %s %s/models/%s, SQuAD packed to", fm->recipe->name, fm->model->size,
                   was_imported ? "kept" : "imported", p->stage, fm->model->hf_repo);
            for (size_t k = 0; k < fm->npacks; k++)
                printf(" %d", fm->packs[k]);
            printf(" (job %s)\n", jobid);
        }
    }
    return failures + (o->cancel && *o->cancel ? 1 : 0);
}
