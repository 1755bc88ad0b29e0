/* layout.h - where things live under $STAGE_PATH.  Owned by src/model/layout.c. */
#ifndef NEMOPERF_MODEL_LAYOUT_H
#define NEMOPERF_MODEL_LAYOUT_H

#define NP_STAGE_EXPERIMENTS "experiments"
#define NP_STAGE_HF "hf"
#define NP_STAGE_LOGS "logs"
#define NP_STAGE_MBRIDGE_HF "mbridge/hf"

/* "a/b" (a's trailing slashes dropped); a new string, NULL when out of memory. */
char *np_stage_join(const char *a, const char *b);
/* enroot's own file name for an image reference: the registry ("host#") is
 * dropped, '/' and ':' become '+', ".sqsh" appended:
 * "nvcr.io#nvidia/nemo:25.02.01" -> "nvidia+nemo+25.02.01.sqsh".
 * Returns a new string (caller frees), NULL when out of memory or image empty. */
char *np_stage_sqsh_name(const char *image);
/* "<stage>/<np_stage_sqsh_name(image)>"; new string or NULL. */
char *np_stage_sqsh_path(const char *stage, const char *image);
/* "<stage>/hf/<repo>"; new string or NULL. */
char *np_stage_hf_dir(const char *stage, const char *repo);

/* "<stage>/mbridge/hf": HF_HOME of the Megatron-Bridge jobs (./setup stages the Hub files there, launch exports
 * it); new string or NULL. */
char *np_stage_mbridge_hf_home(const char *stage);
/* huggingface_hub's cache under an HF_HOME: "<hf_home>/hub/models--<org>--<name>" (the repo's '/' -> "--");
 * its files are snapshots/<commit>/<file>, refs/<revision> holds a branch's commit.  New string or NULL. */
char *np_hf_cache_repo_dir(const char *hf_home, const char *repo);

#endif
