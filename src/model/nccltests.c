/* nccltests.c - RECIPE=nccl-tests as data (model/nccltests.h): NVIDIA's nccl-tests microbenchmark recipe and
 * the plan of a fabric check (which step runs which binary on which nodes, in which round).
 *
 * Source: NVIDIA/dgxc-benchmarking 841f5466 (v26.06.01 + 1) nccl/: metadata.yaml l.29-30 (the image, nemo:26.04.01),
 * config/testset.toml l.16-26 (the common args), l.29-88 (the binaries, -d uint8 for alltoall/sendrecv, the env
 * sweeps whose first point, "env1", is taken), config/systems.toml l.4-16 (sbatch --exclusive --mem=0, srun
 * --mpi=pmix --cpu-bind=none) and the per-system blocks (--ntasks-per-node, NCCL_DEBUG=WARN, NCCL_NET=IB or
 * NCCL_IB_SL=1), config/nemofw.user.toml l.7, l.12 (/usr/local/bin/, the "_mpi" binaries).
 */
#include "nemoperf/model/nccltests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* testset.toml l.29-88: name, binary, -d, and the first value of the test's sweep_envs (the "env1" files of the
 * recipe's README); all_reduce's NCCL_NVLS_ENABLE sweep is ["0", "1"] */
static const struct np_ncclt_binary ncclt_binaries[NP_NCCLT_NBINARIES] = {
    {"all_reduce", "all_reduce_perf", "float", "NCCL_NVLS_ENABLE", "0"},
    {"all_gather", "all_gather_perf", "float", NULL, NULL},
    {"reduce_scatter", "reduce_scatter_perf", "float", NULL, NULL},
    {"alltoall", "alltoall_perf", "uint8", "NCCL_NCHANNELS_PER_NET_PEER", "1"},
    {"sendrecv", "sendrecv_perf", "uint8", "NCCL_NCHANNELS_PER_NET_PEER", "2"},
};

/* testset.toml l.16-26 ([common.sweep_args]): -t 1 -g 1 -f 2 -n 20 -w 5 -b 8 -e 16G -R 0 -c 1 (-d per binary) */
static const char *const ncclt_args[] = {"-t", "1", "-g", "1", "-f", "2", "-n", "20", "-w", "5",
                                         "-b", "8", "-e", "16G", "-R", "0", "-c", "1", NULL};

/* systems.toml: [gb300]/[gb200] --ntasks-per-node=4, NCCL_IB_SL=1; [b300]/[b200]/[h100] 8, NCCL_NET=IB */
static const struct np_ncclt_system ncclt_systems[] = {
    {"h100", 8, {{"NCCL_DEBUG", "WARN"}, {"NCCL_NET", "IB"}, {NULL, NULL}}},
    {"b200", 8, {{"NCCL_DEBUG", "WARN"}, {"NCCL_NET", "IB"}, {NULL, NULL}}},
    {"b300", 8, {{"NCCL_DEBUG", "WARN"}, {"NCCL_NET", "IB"}, {NULL, NULL}}},
    {"gb200", 4, {{"NCCL_DEBUG", "WARN"}, {"NCCL_IB_SL", "1"}, {NULL, NULL}}},
    {"gb300", 4, {{"NCCL_DEBUG", "WARN"}, {"NCCL_IB_SL", "1"}, {NULL, NULL}}},
};

const struct np_ncclt_binary *np_ncclt_binaries(size_t *n)
{
    *n = NP_NCCLT_NBINARIES;
    return ncclt_binaries;
}

int np_ncclt_binary_find(const char *name)
{
    for (int i = 0; name && i < NP_NCCLT_NBINARIES; i++)
        if (strcasecmp(name, ncclt_binaries[i].collective) == 0 || strcasecmp(name, ncclt_binaries[i].binary) == 0)
            return i;
    return -1;
}

const char *const *np_ncclt_args(void)
{
    return ncclt_args;
}

const struct np_ncclt_system *np_ncclt_systems(size_t *n)
{
    *n = sizeof ncclt_systems / sizeof ncclt_systems[0];
    return ncclt_systems;
}

const struct np_ncclt_system *np_ncclt_system_find(const char *gpu_type)
{
    size_t n;
    const struct np_ncclt_system *s = np_ncclt_systems(&n);
    for (size_t i = 0; gpu_type && i < n; i++)
        if (strcasecmp(gpu_type, s[i].gpu_type) == 0)
            return &s[i];
    return NULL;
}

/* the recipe launch resolves RECIPE=nccl-tests to: no parallel layout, no FLOPs, the image of metadata.yaml */
static struct np_model ncclt_model = {
    .size = (char *)"nccl", /* metadata.yaml's model_size */
    .label = (char *)"nccl-tests",
};

static struct np_recipe ncclt_recipe = {
    .name = (char *)NP_NCCLT_RECIPE,
    .title = (char *)"nccl-tests",
    .path = (char *)"nccl-tests (built in: NVIDIA dgxc-benchmarking nccl/ microbenchmark recipe)",
    .source = (char *)"NVIDIA/dgxc-benchmarking 841f5466 nccl/metadata.yaml, config/testset.toml, systems.toml",
    .framework_version = (char *)"26.04.01",
    .image = (char *)"nvcr.io#nvidia/nemo:26.04.01",
    .default_size = (char *)"nccl",
    .default_dtype = NP_DTYPE_BF16,
    .models = &ncclt_model,
    .nmodels = 1,
};

const struct np_recipe *np_ncclt_recipe(void)
{
    return &ncclt_recipe;
}

int np_ncclt_is(const struct np_model *m)
{
    return m == &ncclt_model;
}

const char *np_ncclt_check_name(enum np_ncclt_check c)
{
    return c == NP_NCCLT_BISECT ? "bisect" : "full";
}

const char *np_ncclt_pairs_name(enum np_ncclt_pairs p)
{
    return p == NP_NCCLT_PAIRS_ALL ? "all" : "ring";
}

const char *np_ncclt_scope_name(enum np_ncclt_scope s)
{
    static const char *const names[] = {[NP_NCCLT_INTRA] = "intra", [NP_NCCLT_INTER] = "inter", [NP_NCCLT_ALL] = "all"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* ---- the plan ---- */

static int ncclt_push(struct np_ncclt_plan *p, size_t *cap, int round, int binary, enum np_ncclt_scope scope, int a,
                      int b)
{
    if (p->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        void *ns = realloc(p->steps, nc * sizeof *p->steps);
        if (!ns)
            return -1;
        p->steps = ns;
        *cap = nc;
    }
    p->steps[p->n++] = (struct np_ncclt_step){round, binary, scope, {a, b}};
    if (round + 1 > p->rounds)
        p->rounds = round + 1;
    return 0;
}

/* The pairs to test, in order: ring i-(i+1) (the last with the first when there are more than two), or every
 * pair by the circle method (round r of an even count m: (r, m-1) and ((r+k) mod (m-1), (r-k) mod (m-1)); an odd
 * count gets a resting node m-1, its pairs skipped).  *pr (may be NULL) gets each pair's round in the all mode. */
static size_t ncclt_pairs(enum np_ncclt_pairs mode, int n, int (*pairs)[3])
{
    size_t k = 0;
    if (n < 2)
        return 0;
    if (mode == NP_NCCLT_PAIRS_RING) {
        for (int i = 0; i < (n == 2 ? 1 : n); i++) {
            int j = (i + 1) % n;
            pairs[k][0] = i < j ? i : j;
            pairs[k][1] = i < j ? j : i;
            pairs[k][2] = -1; /* rounds: greedy below */
            k++;
        }
        return k;
    }
    int m = n + (n & 1);
    for (int r = 0; r < m - 1; r++) {
        int cand[2] = {r, m - 1};
        if (cand[1] < n) {
            pairs[k][0] = cand[0] < cand[1] ? cand[0] : cand[1];
            pairs[k][1] = cand[0] < cand[1] ? cand[1] : cand[0];
            pairs[k][2] = r;
            k++;
        }
        for (int j = 1; j < m / 2; j++) {
            int a = (r + j) % (m - 1), b = ((r - j) % (m - 1) + (m - 1)) % (m - 1);
            pairs[k][0] = a < b ? a : b;
            pairs[k][1] = a < b ? b : a;
            pairs[k][2] = r;
            k++;
        }
    }
    return k;
}

enum np_status np_ncclt_plan(const struct np_ncclt_choice *ch, int nnodes, struct np_ncclt_plan *out)
{
    memset(out, 0, sizeof *out);
    if (nnodes < 1 || nnodes > NP_NCCLT_MAX_NODES || !ch->collectives)
        return NP_E_INVALID;
    size_t cap = 0;
    int round = 0;
    if (ch->check == NP_NCCLT_FULL) { /* each collective over every node, one after the other */
        for (int b = 0; b < NP_NCCLT_NBINARIES; b++)
            if ((ch->collectives >> b) & 1u) {
                if (ncclt_push(out, &cap, round++, b, nnodes == 1 ? NP_NCCLT_INTRA : NP_NCCLT_ALL, 0, -1) != 0)
                    goto oom;
            }
        return NP_OK;
    }
    /* bisect: every node alone (all at once, one collective after the other) */
    for (int b = 0; b < NP_NCCLT_NBINARIES; b++) {
        if (!((ch->collectives >> b) & 1u))
            continue;
        for (int i = 0; i < nnodes; i++)
            if (ncclt_push(out, &cap, round, b, NP_NCCLT_INTRA, i, -1) != 0)
                goto oom;
        round++;
    }
    size_t maxpairs = (size_t)nnodes * (size_t)(nnodes + 1) / 2 + 1;
    int (*pairs)[3] = malloc(maxpairs * sizeof *pairs);
    int *busy = calloc((size_t)nnodes * (size_t)nnodes + 1, sizeof *busy); /* busy[r * n + node] */
    if (!pairs || !busy) {
        free(pairs);
        free(busy);
        goto oom;
    }
    size_t np = ncclt_pairs(ch->pairs, nnodes, pairs);
    int prounds = 0;
    for (size_t k = 0; k < np; k++) { /* ring: the first round where both nodes are free */
        int r = pairs[k][2];
        if (r < 0)
            for (r = 0; busy[r * nnodes + pairs[k][0]] || busy[r * nnodes + pairs[k][1]]; r++)
                ;
        busy[r * nnodes + pairs[k][0]] = busy[r * nnodes + pairs[k][1]] = 1;
        pairs[k][2] = r;
        if (r + 1 > prounds)
            prounds = r + 1;
    }
    for (int b = 0; b < NP_NCCLT_NBINARIES; b++) {
        if (!((ch->collectives >> b) & 1u))
            continue;
        for (int r = 0; r < prounds; r++)
            for (size_t k = 0; k < np; k++)
                if (pairs[k][2] == r && ncclt_push(out, &cap, round + r, b, NP_NCCLT_INTER, pairs[k][0], pairs[k][1]) != 0) {
                    free(pairs);
                    free(busy);
                    goto oom;
                }
        round += prounds;
    }
    free(pairs);
    free(busy);
    return NP_OK;
oom:
    np_ncclt_plan_free(out);
    return NP_E_NOMEM;
}

void np_ncclt_plan_free(struct np_ncclt_plan *p)
{
    if (!p)
        return;
    free(p->steps);
    memset(p, 0, sizeof *p);
}

void np_ncclt_step_label(const struct np_ncclt_step *s, char *buf, size_t size)
{
    const char *bin = (unsigned)s->binary < NP_NCCLT_NBINARIES ? ncclt_binaries[s->binary].binary : "?";
    if (s->scope == NP_NCCLT_ALL)
        snprintf(buf, size, "%s-all", bin);
    else if (s->scope == NP_NCCLT_INTER)
        snprintf(buf, size, "%s-node%d-node%d", bin, s->node[0] + 1, s->node[1] + 1);
    else
        snprintf(buf, size, "%s-node%d", bin, s->node[0] + 1);
}
