/* recipe_names.h - the names RECIPE may take, NeMo's and Megatron-Bridge's, for messages with a did-you-mean.
 *
 * Owned by src/model/recipe_names.c; used by every path that refuses a RECIPE (launch/config.c,
 * launch/mbridge_config.c, setup/setup.c), so each one names both namespaces the same way.
 */
#ifndef NEMOPERF_MODEL_RECIPE_NAMES_H
#define NEMOPERF_MODEL_RECIPE_NAMES_H

#include <stddef.h>

#include "nemoperf/model/mbperf.h"
#include "nemoperf/model/recipe.h"

/* Into buf (cap bytes, always terminated): "did you mean deepseek_v3 (Megatron-Bridge)? " when names of either
 * set are near name (two edits, one for a name of four letters or fewer, or name + "_" begins them),
 * then "allowed: NeMo recipes: a, b; Megatron-Bridge recipes: c, d".  container (NULL: any) narrows the
 * Megatron-Bridge names; nemo or mb may be NULL (that namespace left out). */
void np_recipe_names_hint(const struct np_recipe_set *nemo, const struct np_mbperf_set *mb, const char *container,
                          const char *name, char *buf, size_t cap);

/* The same with the Megatron-Bridge names as a NULL-terminated list (repeats said once; NULL: none), for a path
 * that holds more rows than the launchable ones (launch --list: every published container). */
void np_recipe_names_hint_list(const struct np_recipe_set *nemo, const char *const *mb, const char *name, char *buf,
                               size_t cap);

#endif
