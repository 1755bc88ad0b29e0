/* diffusers.h - what ./setup stages for a Diffusers pipeline the job reads offline (DFM's AutoModel Wan rows).
 *
 * Owned by src/setup/diffusers.c.  The pipeline's folders from the Hub (hf.h), model_index.json last.
 */
#ifndef NEMOPERF_SETUP_DIFFUSERS_H
#define NEMOPERF_SETUP_DIFFUSERS_H

#include "nemoperf/setup/hf.h"

struct np_diffusers_staged {
    int fetched, present; /* files downloaded now / already there */
    int skipped;          /* files of the repo outside the pipeline's folders (README, images) */
    long long bytes;      /* downloaded now */
};

/* Stage repo's pipeline into dir ($STAGE_PATH/hf/<repo>): model_index.json names the components
 * ({"transformer": ["diffusers", "WanTransformer3DModel"], ...}); every file of the repo under a component's
 * folder is fetched into dir/<folder>/ (resumable .part files, hf.c), then model_index.json itself, last: its
 * presence means the folder is whole (job/dfm_automodel.c checks it).  A staged file is not fetched again.
 * *out counts what happened (may be NULL).  NP_E_HTTP when model_index.json is missing or names no component. */
enum np_status np_diffusers_stage(struct np_hf_client *c, const char *repo, const char *dir,
                                  struct np_diffusers_staged *out, struct np_error *err);

#endif
