/* mbridge_list.h - every published Megatron-Bridge performance row, for nemoperf-launch --list.
 *
 * Rows: share/nemoperf/megatron-bridge/rows-<container>.json for every published container (25.09 to 26.08),
 * newest first; each carries its container, the published values, the release's config and whether nemoperf
 * launches it ("launch": launchable, why_not).
 */
#ifndef NEMOPERF_LAUNCH_MBRIDGE_LIST_H
#define NEMOPERF_LAUNCH_MBRIDGE_LIST_H

#include <jansson.h>

#include "nemoperf/model/mbrows.h"
#include "nemoperf/model/recipe.h" /* struct np_list_filter */
#include "nemoperf/util/error.h"

/* The rows matching f (NULL: all) as a text table under a heading line, LAUNCH yes or "no (n)" with the
 * numbered reasons under it: new string, caller frees; NULL on out of memory. */
char *np_mb_launch_list_text(json_t *rows, const struct np_list_filter *f);

/* Append the rows matching f to into as --list objects (recipe, container, task, dtype, gpu, gpn, gpus,
 * tp, pp, cp, vp, ep, mbs, gbs, seq_len, mb_release, config_variant, config, source, launchable, why_not).
 * 0, -1 on failure. */
int np_mb_launch_list_json(json_t *rows, const struct np_list_filter *f, json_t *into);

#endif
