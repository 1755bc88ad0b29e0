/* nodes.c - a partition's nodes and their states, so that launch tells a job that waits for nodes
 * to come back (DOWN, DRAINED: Slurm queues it PENDING with ReqNodeNotAvail) from one that can never
 * run (too few nodes with the GPUs it asks for).  Reads sinfo's grouped lines (CLI backend) and
 * GET nodes replies of slurmrestd (v0.0.38 and the v0.0.40+ shape); nothing here talks to Slurm.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nemoperf/launch/nodes.h"
#include "nemoperf/slurm/rest.h"

void np_nodes_free(struct np_nodes *nodes)
{
    if (nodes) {
        free(nodes->g);
        *nodes = (struct np_nodes){NULL, 0};
    }
}

long np_nodes_gres_gpus(const char *gres)
{
    long sum = -1;
    for (const char *p = gres; p && *p;) {
        size_t n = strcspn(p, ",");
        if (strncmp(p, "gpu", 3) == 0 && (p[3] == ':' || p[3] == '(' || p[3] == ',' || p[3] == '\0')) {
            const char *end = memchr(p, '(', n) ? memchr(p, '(', n) : p + n, *colon = NULL;
            for (const char *q = p; q < end; q++)
                if (*q == ':')
                    colon = q;
            char *e;
            long v = colon ? strtol(colon + 1, &e, 10) : -1;
            if (colon && e == end && v >= 0)
                sum = (sum < 0 ? 0 : sum) + v;
        }
        /* a '(' group may hold commas ("gpu:8(S:0,1)"): skip to its ')' */
        const char *open = memchr(p, '(', n), *close = open ? strchr(open, ')') : NULL;
        p = close ? close + 1 : p + n;
        p += *p == ',';
    }
    return sum;
}

/* Is a state word (sinfo's %T, or a REST state or flag) one Slurm does not start jobs on? */
static int nodes_word_unusable(const char *w, size_t n)
{
    static const char *const bad[] = {"down",    "drain",     "drained", "draining",       "fail", "failing",
                                      "future",  "inval",     "invalid", "not_responding", "unknown"};
    if (n && w[n - 1] == '*') /* sinfo: not responding */
        return 1;
    while (n && !isalnum((unsigned char)w[n - 1]) && w[n - 1] != '_') /* sinfo's ~ # ! % $ @ ^ - suffixes */
        n--;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (strlen(bad[i]) == n && strncasecmp(w, bad[i], n) == 0)
            return 1;
    return 0;
}

/* Any '+'-separated word of state unusable? */
static int nodes_state_unusable(const char *state)
{
    for (const char *p = state; *p;) {
        size_t n = strcspn(p, "+");
        if (nodes_word_unusable(p, n))
            return 1;
        p += n + (p[n] == '+');
    }
    return 0;
}

static struct np_node_group *nodes_add(struct np_nodes *out)
{
    struct np_node_group *g = realloc(out->g, (out->n + 1) * sizeof *g);
    if (!g)
        return NULL;
    out->g = g;
    memset(&g[out->n], 0, sizeof g[out->n]);
    return &g[out->n++];
}

int np_nodes_from_sinfo(const char *text, struct np_nodes *out)
{
    out->g = NULL;
    out->n = 0;
    for (const char *line = text; line && *line;) {
        size_t len = strcspn(line, "\n");
        char l[1024];
        snprintf(l, sizeof l, "%.*s", (int)(len < sizeof l ? len : sizeof l - 1), line);
        line += len + (line[len] == '\n');
        char *f[5], *s = l;
        int k = 0;
        for (; k < 4 && s; k++) {
            f[k] = s;
            s = strchr(s, '|');
            if (s)
                *s++ = '\0';
        }
        if (k < 4 || !s)
            continue;
        f[4] = s; /* the reason, last: it may hold '|' */
        char *e;
        long count = strtol(f[0], &e, 10);
        if (e == f[0] || *e || count <= 0)
            continue;
        struct np_node_group *g = nodes_add(out);
        if (!g) {
            np_nodes_free(out);
            return -1;
        }
        g->count = count;
        g->gpus = strcmp(f[2], "(null)") == 0 ? 0 : np_nodes_gres_gpus(f[2]);
        snprintf(g->state, sizeof g->state, "%s", f[1]);
        g->usable = !nodes_state_unusable(f[1]);
        snprintf(g->names, sizeof g->names, "%s", f[3]);
        snprintf(g->reason, sizeof g->reason, "%s", strcmp(f[4], "none") == 0 ? "" : f[4]);
    }
    return 0;
}

/* Append the word s to buf as "+word" (lower case), n its length so far. */
static void nodes_append_word(char *buf, size_t size, size_t *n, const char *s)
{
    if (!s || *n + 2 >= size)
        return;
    if (*n)
        buf[(*n)++] = '+';
    for (; *s && *n + 1 < size; s++)
        buf[(*n)++] = (char)tolower((unsigned char)*s);
    buf[*n] = '\0';
}

/* The words of a REST node's "state" (a string or an array) and "state_flags", joined by '+'. */
static void nodes_rest_state(const json_t *node, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    const json_t *parts[] = {json_object_get(node, "state"), json_object_get(node, "state_flags")};
    for (size_t i = 0; i < 2; i++) {
        nodes_append_word(buf, size, &n, json_string_value(parts[i]));
        size_t k;
        const json_t *w;
        json_array_foreach(parts[i], k, w) nodes_append_word(buf, size, &n, json_string_value(w));
    }
}

static int nodes_in_partition(const json_t *node, const char *partition)
{
    if (!partition || !*partition)
        return 1;
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(node, "partitions"), i, p) {
        if (json_is_string(p) && strcmp(json_string_value(p), partition) == 0)
            return 1;
    }
    return 0;
}

enum np_status np_nodes_from_rest(long http, const char *body, size_t len, const char *partition,
                                  struct np_nodes *out, struct np_error *err)
{
    out->g = NULL;
    out->n = 0;
    json_error_t je;
    json_t *j = body && len ? json_loadb(body, len, 0, &je) : NULL;
    const json_t *nodes = json_object_get(j, "nodes");
    if (http >= 400 || !json_is_array(nodes)) {
        char *t = np_rest_errors_text(j);
        enum np_status st = http >= 400 ? NP_E_SLURM : NP_E_PARSE;
        np_error_set(err, st, "GET nodes", 0, 0, "HTTP %ld: %s", http, t ? t : "no \"nodes\" array in the reply");
        free(t);
        json_decref(j);
        return st;
    }
    size_t i;
    const json_t *node;
    json_array_foreach(nodes, i, node) {
        const char *name = json_string_value(json_object_get(node, "name"));
        if (!name || !nodes_in_partition(node, partition))
            continue;
        struct np_node_group *g = nodes_add(out);
        if (!g) {
            np_nodes_free(out);
            json_decref(j);
            return np_error_set(err, NP_E_NOMEM, "GET nodes", 0, 0, "out of memory");
        }
        const char *gres = json_string_value(json_object_get(node, "gres"));
        const char *reason = json_string_value(json_object_get(node, "reason"));
        g->count = 1;
        g->gpus = gres && *gres ? np_nodes_gres_gpus(gres) : 0;
        nodes_rest_state(node, g->state, sizeof g->state);
        g->usable = !nodes_state_unusable(g->state);
        snprintf(g->names, sizeof g->names, "%s", name);
        snprintf(g->reason, sizeof g->reason, "%s", reason ? reason : "");
    }
    json_decref(j);
    return NP_OK;
}

enum np_nodes_fit np_nodes_fit(const struct np_nodes *nodes, const char *partition,
                               const struct np_launch_config *c, char *buf, size_t size)
{
    const char *colon = c->gres_gpus ? strrchr(c->gres_gpus, ':') : NULL;
    long per = c->gres_gpus ? strtol(colon ? colon + 1 : c->gres_gpus, NULL, 10) : 0, configured = 0, up = 0,
         most = -1;
    for (size_t i = 0; i < nodes->n; i++) {
        const struct np_node_group *g = &nodes->g[i];
        if (g->gpus > most)
            most = g->gpus;
        if (per > 0 && g->gpus >= 0 && g->gpus < per)
            continue;
        configured += g->count;
        up += g->usable ? g->count : 0;
    }
    if (nodes->n == 0 || up >= c->nodes) /* nothing known, or the nodes' state is not why */
        return NP_NODES_FIT;
    if (configured < c->nodes) {
        if (per > 0)
            snprintf(buf, size,
                     "needs %d nodes with %ld GPUs each (SBATCH_GPUS_PER_NODE=%s) but partition %s has %ld such "
                     "node%s (at most %ld GPUs per node)",
                     c->nodes, per, c->gres_gpus, partition, configured, configured == 1 ? "" : "s", most);
        else
            snprintf(buf, size, "needs %d nodes but partition %s has %ld", c->nodes, partition, configured);
        return NP_NODES_NEVER;
    }
    int n = snprintf(buf, size, "needs %d nodes but only %ld of partition %s's %ld %s up; ", c->nodes, up, partition,
                     configured, up == 1 ? "is" : "are");
    for (size_t i = 0, listed = 0; i < nodes->n && n >= 0 && (size_t)n < size; i++) {
        const struct np_node_group *g = &nodes->g[i];
        if (g->usable || (per > 0 && g->gpus >= 0 && g->gpus < per))
            continue;
        n += snprintf(buf + n, size - (size_t)n, "%s%s %s%s%s%s", listed++ ? ", " : "", g->names, g->state,
                      *g->reason ? " (reason: " : "", g->reason, *g->reason ? ")" : "");
    }
    return NP_NODES_UNAVAILABLE;
}
