/* recipe_names.c - the names RECIPE may take, for refusals: both namespaces, nearest first.
 *
 * NeMo's recipes (the recipes folder) and Megatron-Bridge's performance recipes (-mr names of rows-<container>.json)
 * are one RECIPE variable; a refusal on any path lists both and suggests the names near what was typed
 * (RECIPE=deepsek_v3 -> deepseek_v3), with the edit distance of the environment typo checker.
 */
#include "nemoperf/model/recipe_names.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/util/envcheck.h"

static void recipe_names_add(char *buf, size_t cap, const char *item)
{
    size_t len = strlen(item);
    for (const char *p = buf; (p = strstr(p, item)); p += len)
        if ((p == buf || p[-1] == ' ') && (p[len] == ',' || p[len] == '\0'))
            return;
    if (*buf)
        strncat(buf, ", ", cap - strlen(buf) - 1);
    strncat(buf, item, cap - strlen(buf) - 1);
}

/* 1 when cand is near name: within two edits (one for a short name), or name + "_" begins it (qwen3). */
static int recipe_names_near(const char *name, const char *cand)
{
    size_t n = strlen(name);
    if (!n || strcasecmp(name, cand) == 0)
        return 0;
    size_t cap = n <= 4 ? 1 : 2;
    if (np_env_distance(name, cand, cap) <= cap)
        return 1;
    return n >= 3 && strncasecmp(name, cand, n) == 0 && cand[n] == '_';
}

void np_recipe_names_hint_list(const struct np_recipe_set *nemo, const char *const *mb, const char *name, char *buf,
                               size_t cap)
{
    char near[512] = "", nemos[1024] = "", mbs[2048] = "";
    if (!cap)
        return;
    for (size_t i = 0; nemo && i < nemo->n; i++) {
        recipe_names_add(nemos, sizeof nemos, nemo->recipes[i].name);
        if (name && recipe_names_near(name, nemo->recipes[i].name))
            recipe_names_add(near, sizeof near, nemo->recipes[i].name);
    }
    for (size_t i = 0; mb && mb[i]; i++) {
        recipe_names_add(mbs, sizeof mbs, mb[i]);
        if (name && recipe_names_near(name, mb[i])) { /* beside NeMo's names, said whose it is */
            char item[160];
            snprintf(item, sizeof item, "%s%s", mb[i], nemo && nemo->n ? " (Megatron-Bridge)" : "");
            recipe_names_add(near, sizeof near, item);
        }
    }
    snprintf(buf, cap, "%s%s%sallowed: %s%s%s%s", near[0] ? "did you mean " : "", near, near[0] ? "? " : "",
             nemos[0] ? "NeMo recipes: " : "", nemos, nemos[0] && mbs[0] ? "; " : "",
             mbs[0] ? "Megatron-Bridge recipes" : "");
    strncat(buf, mbs[0] ? ": " : "", cap - strlen(buf) - 1);
    strncat(buf, mbs, cap - strlen(buf) - 1);
}

void np_recipe_names_hint(const struct np_recipe_set *nemo, const struct np_mbperf_set *mb, const char *container,
                          const char *name, char *buf, size_t cap)
{
    const char *names[256];
    size_t n = 0;
    for (size_t i = 0; mb && i < mb->n && n + 1 < sizeof names / sizeof names[0]; i++)
        if (!container || strcmp(mb->rows[i].container, container) == 0)
            names[n++] = mb->rows[i].recipe;
    names[n] = NULL;
    if (!container || !n) {
        np_recipe_names_hint_list(nemo, names, name, buf, cap);
        return;
    }
    /* "Megatron-Bridge recipes of CONTAINER=26.06: ..." */
    char tail[2560];
    np_recipe_names_hint_list(nemo, names, name, tail, sizeof tail);
    const char *at = strstr(tail, "Megatron-Bridge recipes: ");
    if (!at) {
        snprintf(buf, cap, "%s", tail);
        return;
    }
    snprintf(buf, cap, "%.*sMegatron-Bridge recipes of CONTAINER=%s: %s", (int)(at - tail), tail, container,
             at + strlen("Megatron-Bridge recipes: "));
}
