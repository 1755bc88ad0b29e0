/* automodel.h - what ./setup stages for an AutoModel benchmark model, from the Hub.
 *
 * Owned by src/setup/automodel.c.
 */
#ifndef NEMOPERF_SETUP_AUTOMODEL_H
#define NEMOPERF_SETUP_AUTOMODEL_H

#include "nemoperf/model/recipe.h"
#include "nemoperf/setup/hf.h"
#include "nemoperf/util/error.h"

struct np_automodel_staged {
    int fetched, present, absent; /* files downloaded now / already there / optional and not in the repo */
    int code_files;               /* remote-code modules named by config.json's auto_map */
    int shards;                   /* weight shards (from_pretrained) */
    double bytes;                 /* downloaded now */
    double weights_total;         /* the index's metadata.total_size, or -1 / 0 */
};

/* Stage model m's files from the Hub into dir ($STAGE_PATH/hf/<repo>): config.json and, with
 * trust_remote_code, the modules its auto_map names; for from_pretrained models also the
 * safetensors index and every shard, after checking that free_space(dir) (NULL: statvfs) holds
 * what is missing (NP_E_IO naming the sizes otherwise; nothing is deleted).  Re-running resumes
 * (.part files) and skips what is complete.  Errors from hf.c pass through. */
enum np_status np_automodel_stage(struct np_hf_client *c, const struct np_model *m, const char *dir,
                                  int (*free_space)(const char *path, double *bytes),
                                  struct np_automodel_staged *out, struct np_error *err);

#endif
