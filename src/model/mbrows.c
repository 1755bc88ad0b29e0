/* mbrows.c - every published Megatron-Bridge performance row as data: the rows files of every container.
 *
 * Reads share/nemoperf/megatron-bridge/rows-<container>.json (extract-recipes.py: each published run resolved to its
 * release's own config, with the rank command's arguments and whether nemoperf launches it).  Model data, read by
 * launch (--list, the launch's refusals) and setup (what a container's rows need) alike.
 */
#include "nemoperf/model/mbrows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/model/recipe.h"

static const char *mbrows_str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Every container version Megatron-Bridge publishes rows of, newest first (a rows file each). */
static const char *const mbrows_containers[] = {"26.08", "26.06.01", "26.06", "26.04.01", "26.04",
                                                      "26.02.01", "26.02", "25.11", "25.09"};

json_t *np_mb_launch_rows(struct np_error *err)
{
    char *dir = np_data_path("megatron-bridge");
    if (!dir) {
        np_error_set(err, NP_E_NOTFOUND, "megatron-bridge", 0, 0,
                     "Megatron-Bridge data not found (set NEMOPERF_DATADIR to the folder holding megatron-bridge/)");
        return NULL;
    }
    json_t *all = json_array();
    for (size_t i = 0; all && i < sizeof mbrows_containers / sizeof mbrows_containers[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rows-%s.json", dir, mbrows_containers[i]);
        json_error_t je;
        json_t *doc = json_load_file(path, 0, &je);
        json_t *rows = json_object_get(doc, "rows");
        if (!json_is_array(rows)) {
            np_error_set(err, NP_E_PARSE, path, doc ? 0 : je.line, doc ? 0 : je.column, "%s",
                         doc ? "no \"rows\" array" : je.text);
            json_decref(doc);
            json_decref(all);
            all = NULL;
            break;
        }
        json_array_extend(all, rows);
        json_decref(doc);
    }
    free(dir);
    return all;
}

int np_mb_launch_row_launchable(json_t *row)
{
    return json_is_true(json_object_get(json_object_get(row, "launch"), "launchable"));
}

/* The reasons a row is not launched, "; "-joined into buf ("" when it is). */
void np_mb_row_why_not(json_t *row, char *buf, size_t cap)
{
    size_t i;
    json_t *w;
    buf[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(row, "launch"), "why_not"), i, w)
    {
        const char *t = json_string_value(w);
        if (t)
            snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", *buf ? "; " : "", t);
    }
}

char *np_mb_container_why_not(json_t *rows, const char *container)
{
    size_t i, n = 0, launch = 0;
    json_t *row;
    char why[1024] = "";
    json_array_foreach(rows, i, row)
    {
        if (strcmp(mbrows_str(row, "container"), container ? container : "") != 0)
            continue;
        n++;
        if (np_mb_launch_row_launchable(row))
            launch++;
        else if (!*why)
            np_mb_row_why_not(row, why, sizeof why);
    }
    char *out = NULL;
    if (n && !launch && asprintf(&out, "Megatron-Bridge publishes %zu rows of %s, none launched by nemoperf: %s "
                                       "(--list --container %s shows each row and why)",
                                 n, container, *why ? why : "-", container) < 0)
        out = NULL;
    return out;
}

int np_mb_launch_has_recipe(json_t *rows, const char *recipe)
{
    for (size_t i = 0; recipe && i < json_array_size(rows); i++)
        if (strcasecmp(recipe, mbrows_str(json_array_get(rows, i), "recipe")) == 0)
            return 1;
    return 0;
}

/* Megatron-Bridge 067f987 (after PR #5196 "port r0.5.0 VR200 performance configs", 6e16ebf): recipes under
 * src/megatron/bridge/perf_recipes/{deepseek,gpt_oss,kimi,llama}/vr200/ and llama/r100/; GPUs per node from
 * scripts/performance/argument_parser.py:30-38 (NUM_GPUS_PER_NODE_MAP); the NUMA rule from
 * scripts/performance/utils/executors.py:182-183 (numactl SLURM_LOCALID/2 on gb200, gb300 and, since #5196, vr200;
 * /4 elsewhere).  No performance summary publishes a row of either, and the peak tables nemoperf cites
 * (peaks.tsv: exemplar-performance, dgxc-benchmarking) have no figure for them. */
const char *const np_mb_unpublished_gpus[] = {"vr200", "r100", NULL};

static const char *const mbrows_unpublished_text[] = {
    "vr200: Megatron-Bridge has performance recipes for it (perf_recipes/{deepseek,gpt_oss,kimi,llama}/vr200/) and "
    "its launcher runs 4 GPUs per node, 2 ranks per NUMA node (numactl --cpunodebind=$((SLURM_LOCALID/2))), but no "
    "container publishes a vr200 row, so nemoperf launches none; its peak TFLOP/s: unknown (no source nemoperf "
    "cites gives one), so no MFU",
    "r100: Megatron-Bridge has performance recipes for it (perf_recipes/llama/r100/) and its launcher runs 1 GPU per "
    "node (NUMA node $((SLURM_LOCALID/4)) = 0), but no container publishes an r100 row, so nemoperf launches none; "
    "its peak TFLOP/s: unknown (no source nemoperf cites gives one), so no MFU",
};

const char *np_mb_gpu_unpublished(const char *gpu_type)
{
    for (size_t i = 0; gpu_type && np_mb_unpublished_gpus[i]; i++)
        if (strcasecmp(np_mb_unpublished_gpus[i], gpu_type) == 0)
            return mbrows_unpublished_text[i];
    return NULL;
}
