/* mbridge_list.h - every published Megatron-Bridge performance row, for nemoperf-launch --list.
 *
 * Rows: share/nemoperf/megatron-bridge/rows-<container>.json for every published container (25.09 to 26.08),
 * newest first; each carries its container, the published values, the release's config and whether nemoperf
 * launches it ("launch": launchable, why_not).
 */
#ifndef NEMOPERF_LAUNCH_MBRIDGE_LIST_H
#define NEMOPERF_LAUNCH_MBRIDGE_LIST_H

#include <jansson.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/util/error.h"

/* Every row of every published container: a new array (caller json_decref), or NULL with err set. */
json_t *np_mb_launch_rows(struct np_error *err);

/* 1 when recipe (any case) is one of the rows' -mr names. */
int np_mb_launch_has_recipe(json_t *rows, const char *recipe);

/* 1 when nemoperf launches the row (its "launch".launchable). */
int np_mb_launch_row_launchable(json_t *row);

/* When container has published rows and none is launched: a new sentence saying so and the first row's reason
 * (caller frees); else NULL. */
char *np_mb_container_why_not(json_t *rows, const char *container);

/* The rows matching f (NULL: all) as a text table under a heading line, LAUNCH yes or "no (n)" with the
 * numbered reasons under it: new string, caller frees; NULL on out of memory. */
char *np_mb_launch_list_text(json_t *rows, const struct np_list_filter *f);

/* Append the rows matching f to into as --list objects (recipe, container, task, dtype, gpu, gpn, gpus,
 * tp, pp, cp, vp, ep, mbs, gbs, seq_len, mb_release, config_variant, config, source, launchable, why_not).
 * 0, -1 on failure. */
int np_mb_launch_list_json(json_t *rows, const struct np_list_filter *f, json_t *into);

#endif
