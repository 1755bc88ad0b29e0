/* mbrows.h - every published Megatron-Bridge performance row as data (share/nemoperf/megatron-bridge/rows-*.json).
 *
 * Owned by src/model/mbrows.c; read by launch (--list, refusals) and setup.  Rows are Jansson objects, borrowed from
 * the array np_mb_launch_rows returns.
 */
#ifndef NEMOPERF_MODEL_MBROWS_H
#define NEMOPERF_MODEL_MBROWS_H

#include <jansson.h>
#include <stddef.h>

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

/* The reasons a row is not launched, "; "-joined into buf ("" when it is). */
void np_mb_row_why_not(json_t *row, char *buf, size_t cap);

/* GPU types Megatron-Bridge has performance recipes for that no container publishes a row of (VR200, R100):
 * NULL-terminated names, and for one of them what nemoperf knows (GPUs per node, the NUMA rule, the peak:
 * unknown), one sentence (static); NULL for any other type. */
extern const char *const np_mb_unpublished_gpus[];
const char *np_mb_gpu_unpublished(const char *gpu_type);

#endif
