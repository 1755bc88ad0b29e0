/* mbridge_list.c - nemoperf-launch --list for the Megatron-Bridge performance rows (26.08, 26.06).
 *
 * Reads share/nemoperf/megatron-bridge/rows-<container>.json (extract-recipes.py: each published run resolved
 * to the release's own config, with the rank command's arguments) and lists the rows with their container,
 * as a text table or as JSON objects appended to the NeMo rows' array.
 */
#include "nemoperf/launch/mbridge_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/model/recipe.h"

/* The containers nemoperf can launch, newest first (the rows files it ships). */
static const char *const mbridge_list_containers[] = {"26.08", "26.06"};

json_t *np_mb_launch_rows(struct np_error *err)
{
    char *dir = np_data_path("megatron-bridge");
    if (!dir) {
        np_error_set(err, NP_E_NOTFOUND, "megatron-bridge", 0, 0,
                     "Megatron-Bridge data not found (set NEMOPERF_DATADIR to the folder holding megatron-bridge/)");
        return NULL;
    }
    json_t *all = json_array();
    for (size_t i = 0; all && i < sizeof mbridge_list_containers / sizeof mbridge_list_containers[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rows-%s.json", dir, mbridge_list_containers[i]);
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

static const char *mbridge_list_str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int mbridge_list_match(json_t *row, const struct np_list_filter *f)
{
    if (!f)
        return 1;
    if (f->recipe && *f->recipe && strcasecmp(f->recipe, mbridge_list_str(row, "recipe")) != 0)
        return 0;
    if (f->gpu_type && *f->gpu_type && strcasecmp(f->gpu_type, mbridge_list_str(row, "gpu_type")) != 0)
        return 0;
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

int np_mb_launch_has_recipe(json_t *rows, const char *recipe)
{
    for (size_t i = 0; recipe && i < json_array_size(rows); i++)
        if (strcasecmp(recipe, mbridge_list_str(json_array_get(rows, i), "recipe")) == 0)
            return 1;
    return 0;
}

char *np_mb_launch_list_text(json_t *rows, const struct np_list_filter *f)
{
    static const char *const keys[] = {"gpus", "tp", "pp", "cp", "vp", "ep", "mbs", "gbs", "seq_len"};
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return NULL;
    fprintf(out, "\nMegatron-Bridge performance rows (RECIPE=<recipe> DTYPE=<dtype> GPU_TYPE=<gpu> [CONTAINER=...] "
                 "./launch: docs/megatron-bridge.md):\n");
    fprintf(out, "%-10s %-9s %-24s %-7s %-6s %5s %3s %3s %3s %3s %3s %4s %6s %7s %-4s %s\n", "CONTAINER", "TASK",
            "RECIPE", "DTYPE", "GPU", "GPUS", "TP", "PP", "CP", "VP", "EP", "MBS", "GBS", "SEQ", "CV", "CONFIG");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (!mbridge_list_match(row, f))
            continue;
        char v[9][24];
        for (size_t k = 0; k < 9; k++)
            mbridge_list_pub(row, keys[k], v[k], sizeof v[k]);
        json_t *res = json_object_get(row, "resolved");
        const char *cfg = mbridge_list_str(res, "function");
        if (!*cfg)
            cfg = mbridge_list_str(res, "config");
        const char *cv = mbridge_list_str(row, "config_variant");
        fprintf(out, "%-10s %-9s %-24s %-7s %-6s %5s %3s %3s %3s %3s %3s %4s %6s %7s %-4s %s\n",
                mbridge_list_str(row, "container"), mbridge_list_str(row, "task"), mbridge_list_str(row, "recipe"),
                mbridge_list_str(row, "dtype"), mbridge_list_str(row, "gpu_type"), v[0], v[1], v[2], v[3], v[4], v[5],
                v[6], v[7], v[8], *cv ? cv : "-", *cfg ? cfg : "-");
    }
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
            json_object_set(o, "source", json_object_get(row, "published_source"))) {
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
