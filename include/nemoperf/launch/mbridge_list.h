/* mbridge_list.h - the launchable Megatron-Bridge performance rows, for nemoperf-launch --list.
 *
 * Rows: share/nemoperf/megatron-bridge/rows-<container>.json for the containers nemoperf launches (26.08,
 * 26.06), newest first; each carries its container, the published values and the release's config.
 */
#ifndef NEMOPERF_LAUNCH_MBRIDGE_LIST_H
#define NEMOPERF_LAUNCH_MBRIDGE_LIST_H

#include <jansson.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/util/error.h"

/* Every row of every launchable container: a new array (caller json_decref), or NULL with err set. */
json_t *np_mb_launch_rows(struct np_error *err);

/* 1 when recipe (any case) is one of the rows' -mr names. */
int np_mb_launch_has_recipe(json_t *rows, const char *recipe);

/* The rows matching f (NULL: all) as a text table under a heading line: new string, caller frees; NULL on
 * out of memory. */
char *np_mb_launch_list_text(json_t *rows, const struct np_list_filter *f);

/* Append the rows matching f to into as --list objects (recipe, container, task, dtype, gpu, gpn, gpus,
 * tp, pp, cp, vp, ep, mbs, gbs, seq_len, mb_release, config_variant, config, source).  0, -1 on failure. */
int np_mb_launch_list_json(json_t *rows, const struct np_list_filter *f, json_t *into);

#endif
