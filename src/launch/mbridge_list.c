/* mbridge_list.c - nemoperf-launch --list for every published Megatron-Bridge performance row (25.09 to 26.08).
 *
 * Reads share/nemoperf/megatron-bridge/rows-<container>.json (extract-recipes.py: each published run resolved
 * to its release's own config, with the rank command's arguments and whether nemoperf launches it) and lists
 * the rows of every container in one layout, with LAUNCH yes or why not, as a text table or as JSON objects
 * appended to the NeMo rows' array; filtered by container, recipe, GPU, dtype and task.
 */
#include "nemoperf/launch/mbridge_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/model/mbdtype.h"
#include "nemoperf/model/mbrows.h"
#include "nemoperf/model/recipe.h"

static const char *mbridge_list_str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int mbridge_list_set(const char *s)
{
    return s && *s;
}

static int mbridge_list_match(json_t *row, const struct np_list_filter *f)
{
    if (!f)
        return 1;
    if (mbridge_list_set(f->recipe) && strcasecmp(f->recipe, mbridge_list_str(row, "recipe")) != 0)
        return 0;
    if (mbridge_list_set(f->gpu_type) && strcasecmp(f->gpu_type, mbridge_list_str(row, "gpu_type")) != 0)
        return 0;
    if (mbridge_list_set(f->container) && strcmp(f->container, mbridge_list_str(row, "container")) != 0)
        return 0;
    if (mbridge_list_set(f->task) && strcasecmp(f->task, mbridge_list_str(row, "task")) != 0)
        return 0;
    /* -c names and the published labels alike (MXFP8 = fp8_mx); NeMo's "fp8" matches every FP8 scaling */
    if (mbridge_list_set(f->dtype)) {
        enum np_mb_dtype want = np_mb_dtype_parse(f->dtype), have = np_mb_dtype_parse(mbridge_list_str(row, "dtype"));
        if (strcasecmp(f->dtype, "fp8") == 0 ? have == NP_MB_BF16 || have == NP_MB_NVFP4 : want != have)
            return 0;
    }
    return 1;
}

/* The published value of key, "-" when none (n/a). */
static void mbridge_list_pub(json_t *row, const char *key, char *buf, size_t cap)
{
    json_t *v = json_object_get(json_object_get(row, "published"), key);
    if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, "%.0f", json_real_value(v));
    else
        snprintf(buf, cap, "-");
}

char *np_mb_launch_list_text(json_t *rows, const struct np_list_filter *f)
{
    static const char *const keys[] = {"gpus", "tp", "pp", "cp", "vp", "ep", "mbs", "gbs", "seq_len"};
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return NULL;
    /* LAUNCH: yes, or no and the number of its reason in the list under the table (the rows of a release share
     * theirs) */
    char why[64][1024];
    size_t nwhy = 0, shown = 0, launchable = 0;
    fprintf(out, "\nMegatron-Bridge performance rows, every published container (RECIPE=<recipe> DTYPE=<dtype> "
                 "GPU_TYPE=<gpu> [CONTAINER=...] ./launch: docs/megatron-bridge.md):\n");
    fprintf(out, "%-10s %-9s %-24s %-7s %-6s %5s %3s %3s %3s %3s %3s %4s %6s %7s %-4s %-7s %s\n", "CONTAINER", "TASK",
            "RECIPE", "DTYPE", "GPU", "GPUS", "TP", "PP", "CP", "VP", "EP", "MBS", "GBS", "SEQ", "CV", "LAUNCH",
            "CONFIG");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (!mbridge_list_match(row, f))
            continue;
        char v[9][24], launch[16] = "yes", w[1024];
        for (size_t k = 0; k < 9; k++)
            mbridge_list_pub(row, keys[k], v[k], sizeof v[k]);
        json_t *res = json_object_get(row, "resolved");
        const char *cfg = mbridge_list_str(res, "function");
        if (!*cfg)
            cfg = mbridge_list_str(res, "config");
        const char *cv = mbridge_list_str(row, "config_variant");
        shown++;
        if (np_mb_launch_row_launchable(row)) {
            launchable++;
        } else {
            np_mb_row_why_not(row, w, sizeof w);
            size_t k = 0;
            while (k < nwhy && strcmp(why[k], w) != 0)
                k++;
            if (k == nwhy && nwhy < sizeof why / sizeof why[0])
                snprintf(why[nwhy++], sizeof why[0], "%s", w);
            snprintf(launch, sizeof launch, k < nwhy ? "no (%zu)" : "no", k + 1);
        }
        fprintf(out, "%-10s %-9s %-24s %-7s %-6s %5s %3s %3s %3s %3s %3s %4s %6s %7s %-4s %-7s %s\n",
                mbridge_list_str(row, "container"), mbridge_list_str(row, "task"), mbridge_list_str(row, "recipe"),
                mbridge_list_str(row, "dtype"), mbridge_list_str(row, "gpu_type"), v[0], v[1], v[2], v[3], v[4], v[5],
                v[6], v[7], v[8], *cv ? cv : "-", launch, *cfg ? cfg : "-");
    }
    /* after a blank line: the table ends there for a reader of its columns (bash completion) */
    fprintf(out, "\n%zu Megatron-Bridge rows, %zu launchable%s\n", shown, launchable,
            nwhy ? "; LAUNCH no (n): reason n below" : "");
    for (size_t k = 0; k < nwhy; k++)
        fprintf(out, "(%zu) %s\n", k + 1, why[k]);
    for (size_t k = 0; np_mb_unpublished_gpus[k]; k++) /* recipes without a published row (model/mbrows.h) */
        if (!f || !f->gpu_type || strcasecmp(f->gpu_type, np_mb_unpublished_gpus[k]) == 0)
            fprintf(out, "Not in the table: %s\n", np_mb_gpu_unpublished(np_mb_unpublished_gpus[k]));
    if (fclose(out) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int np_mb_launch_list_json(json_t *rows, const struct np_list_filter *f, json_t *into)
{
    static const char *const keys[] = {"gpus", "tp", "pp", "cp", "vp", "ep", "mbs", "gbs", "seq_len"};
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (!mbridge_list_match(row, f))
            continue;
        json_t *o = json_object();
        json_t *res = json_object_get(row, "resolved");
        json_t *cfg = json_object_get(res, "function");
        if (!cfg)
            cfg = json_object_get(res, "config");
        if (!o || json_object_set(o, "recipe", json_object_get(row, "recipe")) ||
            json_object_set(o, "container", json_object_get(row, "container")) ||
            json_object_set(o, "task", json_object_get(row, "task")) ||
            json_object_set(o, "dtype", json_object_get(row, "dtype")) ||
            json_object_set(o, "gpu", json_object_get(row, "gpu_type")) ||
            json_object_set(o, "gpn", json_object_get(row, "gpus_per_node")) ||
            json_object_set(o, "mb_release", json_object_get(row, "mb_release")) ||
            json_object_set(o, "config_variant", json_object_get(row, "config_variant")) ||
            json_object_set(o, "config", cfg ? cfg : json_null()) ||
            json_object_set(o, "source", json_object_get(row, "published_source")) ||
            json_object_set_new(o, "launchable", json_boolean(np_mb_launch_row_launchable(row))) ||
            json_object_set(o, "why_not", np_mb_launch_row_launchable(row)
                                              ? json_null()
                                              : json_object_get(json_object_get(row, "launch"), "why_not"))) {
            json_decref(o);
            return -1;
        }
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            json_t *v = json_object_get(json_object_get(row, "published"), keys[k]);
            if (json_object_set(o, keys[k], v ? v : json_null()) != 0) {
                json_decref(o);
                return -1;
            }
        }
        if (json_array_append_new(into, o) != 0)
            return -1;
    }
    return 0;
}
