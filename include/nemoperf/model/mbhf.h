/* mbhf.h - the Hugging Face Hub files each Megatron-Bridge row reads offline (share/nemoperf/megatron-bridge/
 * hf-files.tsv), and whether they are in an HF_HOME's cache.
 *
 * Owned by src/model/mbhf.c.  ./setup stages the files (setup/mbridge_hf.h), launch checks them here before
 * it submits (the job runs with HF_HUB_OFFLINE=1: a missing file fails on the GPUs, not on the login node).
 * Everything in a set is owned by the set; np_mbhf_free releases it.
 */
#ifndef NEMOPERF_MODEL_MBHF_H
#define NEMOPERF_MODEL_MBHF_H

#include <stddef.h>

#include "nemoperf/util/error.h"

struct np_mbhf_file {
    char *name;   /* "config.json" */
    int required; /* 0: "?" in the data, a 404 is fine */
};

struct np_mbhf_entry {
    char *container, *release, *recipe, *task; /* "26.08", "v0.6.0", "qwen3_30b_a3b", "pretrain" */
    char *use;                                 /* "config" (AutoBridge/AutoConfig) or "tokenizer" */
    char *repo, *revision;                     /* "Qwen/Qwen3-30B-A3B", "main" or a 40-hex commit */
    char *source;                              /* Megatron-Bridge file:lines at the release */
    struct np_mbhf_file *files;
    size_t nfiles;
    int auto_map;                              /* also the modules config.json's auto_map names */
    int line;                                  /* in the data file */
};

struct np_mbhf_set {
    struct np_mbhf_entry *v; /* in file order: newest container first */
    size_t n;
    char *path;              /* the file read */
};

/* Read hf-files.tsv from dir (NULL: np_data_path("megatron-bridge")).  NP_E_PARSE at file:line naming the field
 * on bad data (an empty set then, no free needed); NP_E_IO when absent. */
enum np_status np_mbhf_load(const char *dir, struct np_mbhf_set *out, struct np_error *err);
void np_mbhf_free(struct np_mbhf_set *s);

/* 1 when e says its row reads nothing from the Hub (use "none", repo/revision/files "-": the recipe's model and
 * tokenizer are built without it, the source says where). */
int np_mbhf_none(const struct np_mbhf_entry *e);
/* 1 when e is of recipe, and of container / task where those are not NULL. */
int np_mbhf_matches(const struct np_mbhf_entry *e, const char *container, const char *recipe, const char *task);
/* Number of rows of (container, recipe, task) (NULL container / task: any). */
size_t np_mbhf_count(const struct np_mbhf_set *s, const char *container, const char *recipe, const char *task);
/* The newest container with rows for recipe, or NULL (borrowed from the set). */
const char *np_mbhf_newest_container(const struct np_mbhf_set *s, const char *recipe);

/* The commit whose snapshot holds e's files under hf_home: a 40-hex revision itself, else the content of
 * refs/<revision>.  0 with commit[41] filled, -1 when not staged. */
int np_mbhf_commit(const char *hf_home, const struct np_mbhf_entry *e, char commit[41]);

/* 1 when s is a plain file name of a repo: [A-Za-z0-9._-], no leading dot, at most 200 bytes. */
int np_hf_plain_name(const char *s);

/* Python module files a config.json's auto_map names ("configuration_x.Class" -> "configuration_x.py"; code of
 * another repo, "org/name--module.Class", is skipped): *mods a new NULL-terminated vector (np_strv_free), maybe
 * empty.  NP_E_IO / NP_E_PARSE naming config_path; NP_E_PARSE "auto_map.<key>: ..." for a name that is not a
 * plain file of the repo. */
enum np_status np_hf_auto_map_modules(const char *config_path, char ***mods, struct np_error *err);

/* Offline check of the rows of (container, recipe, task) (task NULL: every task): 0 when every required file,
 * and every auto_map module, is in hf_home's cache; 1 with "repo@revision: file" of the first missing one in
 * what (cap bytes); -1 when no row matches. */
int np_mbhf_missing(const struct np_mbhf_set *s, const char *container, const char *recipe, const char *task,
                    const char *hf_home, char *what, size_t cap);

/* Launch's check, in one call: loads the data, looks in np_stage_mbridge_hf_home(stage).  1 when every file of
 * (container, recipe, task) is staged; 0 with "repo@revision: file" in missing; -1 with the reason in missing
 * (no data, no such row, out of memory). */
int np_mbhf_staged(const char *stage, const char *container, const char *recipe, const char *task, char *missing,
                   size_t cap);

#endif
