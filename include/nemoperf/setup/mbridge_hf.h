/* mbridge_hf.h - ./setup's staging of the Hugging Face files a Megatron-Bridge row reads offline.
 *
 * Owned by src/setup/mbridge_hf.c.  The files of model/mbhf.h's rows go into huggingface_hub's cache layout under
 * the jobs' HF_HOME (np_stage_mbridge_hf_home): hub/models--org--name/snapshots/<commit>/<file>, refs/<branch>,
 * each through hf.c's np_hf_fetch_file (".part", resumed, renamed when whole).
 */
#ifndef NEMOPERF_SETUP_MBRIDGE_HF_H
#define NEMOPERF_SETUP_MBRIDGE_HF_H

#include <stdio.h>

#include "nemoperf/model/mbhf.h"
#include "nemoperf/setup/hf.h"

struct np_mbhf_staged {
    int repos;                      /* rows staged */
    int fetched, present, absent;   /* files: downloaded now, already there, optional and not in the repo */
};

/* Stage the rows of (container, recipe, task) (task NULL: every task of the recipe) into hf_home.  A branch
 * revision ("main") is resolved to the commit the Hub reports (np_hf_check_access) and refs/<branch> is written
 * (through a temporary file, renamed) only after every required file of the row is in the snapshot, so a cut run
 * leaves no ref to a partial snapshot.  NP_E_NOTFOUND when no row matches or a required file is not in the repo;
 * hf.c's errors otherwise (access denied names the repo's page and HF_TOKEN). */
enum np_status np_mbhf_stage(struct np_hf_client *c, const struct np_mbhf_set *s, const char *container,
                             const char *recipe, const char *task, const char *hf_home, struct np_mbhf_staged *out,
                             struct np_error *err);

/* ./setup for a Megatron-Bridge row (RECIPE one of hf-files.tsv's recipes): container (NULL: the newest that has
 * the recipe) and task (NULL: all of the recipe's) validated against the data (exit 2 naming CONTAINER / TASK,
 * nothing created), then every row's files staged into np_stage_mbridge_hf_home(stage), one summary line each on
 * out, through c (borrowed: setup's client; setup checked the access before the import);
 * dry_run prints what would be fetched (no request).  setup.c calls it with the row it resolved, in the same
 * run as the row's image and Megatron-Bridge checkout (after them; --skip-hf leaves it out).
 * Returns the exit code (0, 1 a download failed, 2 bad input). */
int np_mbhf_setup(const char *stage, const char *recipe, const char *container, const char *task,
                  struct np_hf_client *c, int dry_run, FILE *out);

#endif
