/* nccltests.c - the nccl-tests workload kind (job/nccltests.h): the batch script of a fabric check.
 *
 * Each step runs one of NVIDIA's nccl-tests binaries from the container with the flags and environment of
 * NVIDIA's microbenchmark recipe (model/nccltests.c cites it): srun --mpi=pmix --cpu-bind=none, one task per
 * GPU, pyxis --container-image ... --no-container-mount-home.  The steps of one round run at the same time on
 * disjoint nodes; the job writes which step ran on which hosts to nccl-tests/steps.json before the first one.
 */
#include "nemoperf/job/nccltests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int np_ncclt_matches(const struct np_model *m)
{
    return np_ncclt_is(m);
}

int np_ncclt_tasks_per_node(const struct np_launch_config *c)
{
    return c->gpus_per_node;
}

int np_ncclt_segment(const struct np_launch_config *c)
{
    (void)c;
    return 0;
}

static int ncclt_first(const struct np_launch_config *c)
{
    for (int b = 0; b < NP_NCCLT_NBINARIES; b++)
        if ((c->ncclt.collectives >> b) & 1u)
            return b;
    return 0;
}

/* <path>/<binary>_mpi and NVIDIA's flags, -d the binary's */
static void ncclt_argv(const struct np_launch_config *c, int bi, struct np_strv *s)
{
    size_t n;
    const struct np_ncclt_binary *b = np_ncclt_binaries(&n);
    np_strv_pushf(s, "%s/%s%s", c->ncclt.path[0] ? c->ncclt.path : NP_NCCLT_DEFAULT_PATH, b[bi].binary,
                  NP_NCCLT_SUFFIX);
    for (const char *const *a = np_ncclt_args(); *a; a++)
        np_strv_push(s, *a);
    np_strv_push(s, "-d");
    np_strv_push(s, b[bi].dtype);
}

char **np_ncclt_command(const struct np_launch_config *c)
{
    struct np_strv s = {0};
    ncclt_argv(c, ncclt_first(c), &s);
    return np_strv_steal(&s);
}

size_t np_ncclt_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap)
{
    size_t n = 0;
    const struct np_ncclt_system *sys = np_ncclt_system_find(c->gpu_type);
    for (size_t i = 0; sys && i < 3 && sys->env[i][0] && n < cap; i++) {
        vars[n].name = sys->env[i][0];
        vars[n].value = sys->env[i][1];
        n++;
    }
    return n;
}

/* ---- the script ---- */

/* "${nodes[i]}" words of a step: its host list for --nodelist, its name suffix */
static void ncclt_step_hosts(const struct np_ncclt_step *s, int nnodes, struct np_buf *list, struct np_buf *name)
{
    if (s->scope == NP_NCCLT_ALL) {
        np_buf_append(list, "\"$SLURM_JOB_NODELIST\"");
        np_buf_append(name, "all");
        (void)nnodes;
    } else if (s->scope == NP_NCCLT_INTER) {
        np_buf_appendf(list, "\"${nodes[%d]},${nodes[%d]}\"", s->node[0], s->node[1]);
        np_buf_appendf(name, "\"${nodes[%d]}-${nodes[%d]}\"", s->node[0], s->node[1]);
    } else {
        np_buf_appendf(list, "\"${nodes[%d]}\"", s->node[0]);
        np_buf_appendf(name, "\"${nodes[%d]}\"", s->node[0]);
    }
}

/* the step's "nodes" JSON array as printf arguments: a format and its words */
static void ncclt_step_json(const struct np_launch_config *c, const struct np_ncclt_step *s, struct np_buf *b,
                            int last)
{
    size_t n;
    const struct np_ncclt_binary *bin = np_ncclt_binaries(&n);
    const char *bn = bin[s->binary].binary;
    if (s->scope == NP_NCCLT_ALL) {
        np_buf_appendf(b, "    printf '    {\"name\": \"%s-all\", \"binary\": \"%s\", \"collective\": \"%s\", "
                          "\"nodes\": [%%s], \"gpus_per_node\": %d, \"scope\": \"all\", \"round\": %d, "
                          "\"file\": \"" NP_NCCLT_OUT_DIR "/%s-all.out\"}%s\\n' \"$ncclt_all\"\n",
                       bn, bn, bin[s->binary].collective, c->gpus_per_node, s->round + 1, bn, last ? "" : ",");
        return;
    }
    int inter = s->scope == NP_NCCLT_INTER;
    np_buf_appendf(b, "    printf '    {\"name\": \"%s-%%s\", \"binary\": \"%s\", \"collective\": \"%s\", "
                      "\"nodes\": [%s], \"gpus_per_node\": %d, \"scope\": \"%s\", \"round\": %d, "
                      "\"file\": \"" NP_NCCLT_OUT_DIR "/%s-%%s.out\"}%s\\n' ",
                   bn, bn, bin[s->binary].collective, inter ? "\"%s\", \"%s\"" : "\"%s\"", c->gpus_per_node,
                   inter ? "inter" : "intra", s->round + 1, bn, last ? "" : ",");
    if (inter)
        np_buf_appendf(b, "\"${nodes[%d]}-${nodes[%d]}\" \"${nodes[%d]}\" \"${nodes[%d]}\" \"${nodes[%d]}-${nodes[%d]}\"\n",
                       s->node[0], s->node[1], s->node[0], s->node[1], s->node[0], s->node[1]);
    else
        np_buf_appendf(b, "\"${nodes[%d]}\" \"${nodes[%d]}\" \"${nodes[%d]}\"\n", s->node[0], s->node[0], s->node[0]);
}

int np_ncclt_render_step(const struct np_launch_config *c, const char *log_prefix, char *const *argv,
                         struct np_buf *b)
{
    (void)log_prefix;
    (void)argv;
    struct np_ncclt_plan plan;
    if (np_ncclt_plan(&c->ncclt, c->nodes, &plan) != NP_OK)
        return -1;
    size_t nb;
    const struct np_ncclt_binary *bin = np_ncclt_binaries(&nb);
    char *pat = np_slurm_pattern_escape(c->experiment_dir);
    if (!pat) {
        np_ncclt_plan_free(&plan);
        return -1;
    }
    np_buf_appendf(b,
                   "\n# nccl-tests, FABRIC_CHECK=%s%s%s: %zu steps in %d rounds over %d nodes, %d tasks (GPUs) a node.\n"
                   "# Flags and environment of NVIDIA's microbenchmark recipe (dgxc-benchmarking nccl/config/\n"
                   "# testset.toml, systems.toml): srun --mpi=pmix --cpu-bind=none, pyxis --no-container-mount-home.\n",
                   np_ncclt_check_name(c->ncclt.check), c->ncclt.check == NP_NCCLT_BISECT ? ", pairs " : "",
                   c->ncclt.check == NP_NCCLT_BISECT ? np_ncclt_pairs_name(c->ncclt.pairs) : "", plan.n, plan.rounds,
                   c->nodes, c->gpus_per_node);
    char *text = np_ncclt_plan_text(c); /* the plan, as --dry-run shows it */
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : line + strlen(line)) {
        nl = strchr(line, '\n');
        np_buf_appendf(b, "# %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
    }
    if (!text)
        b->failed = 1;
    free(text);
    /* the hosts of the allocation, in Slurm's order: the plan's node positions */
    np_buf_appendf(b,
                   "mapfile -t nodes < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n"
                   "if [ \"${#nodes[@]}\" -ne %d ]; then\n"
                   "    echo \"nemoperf: nccl-tests: %d nodes planned, the allocation has ${#nodes[@]} "
                   "($SLURM_JOB_NODELIST)\"\n"
                   "    exit 1\n"
                   "fi\n"
                   "for h in \"${nodes[@]}\"; do\n"
                   "    case $h in *[!A-Za-z0-9._-]*|'') echo \"nemoperf: nccl-tests: host name '$h' cannot name a "
                   "file\"; exit 1 ;; esac\n"
                   "done\n"
                   "mkdir -p " NP_NCCLT_OUT_DIR " || exit 1\n",
                   c->nodes, c->nodes);
    /* steps.json: written before the first step, so a run cut short still says what was planned */
    np_buf_append(b, "ncclt_all=$(printf '\"%s\", ' \"${nodes[@]}\")\nncclt_all=${ncclt_all%, }\n{\n");
    np_buf_appendf(b, "    printf '{\"check\": \"%s\", \"pairs\": \"%s\", \"gpu_type\": \"%s\", \"gpus_per_node\": %d, "
                      "\"nodes\": [%%s], \"steps\": [\\n' \"$ncclt_all\"\n",
                   np_ncclt_check_name(c->ncclt.check), np_ncclt_pairs_name(c->ncclt.pairs), c->gpu_type,
                   c->gpus_per_node);
    for (size_t i = 0; i < plan.n; i++)
        ncclt_step_json(c, &plan.steps[i], b, i + 1 == plan.n);
    np_buf_append(b, "    printf ']}\\n'\n} >" NP_NCCLT_STEPS_FILE ".tmp && mv -f " NP_NCCLT_STEPS_FILE ".tmp "
                     NP_NCCLT_STEPS_FILE " || exit 1\n");

    /* one step: NAME NODES HOSTLIST BINARY-INDEX; the binary's env1 and the system's NCCL settings reach it */
    np_buf_append(b, "ncclt_dir=");
    np_buf_append_shqf(b, "%s/" NP_NCCLT_OUT_DIR, pat);
    np_buf_append(b, "\nncclt_rc=0\n");
    for (size_t k = 0; k < nb; k++) {
        if (!((c->ncclt.collectives >> k) & 1u))
            continue;
        np_buf_appendf(b, "ncclt_%s() { # NAME NODES HOSTLIST\n    ncclt_t0=$(date +%%s)\n    ", bin[k].binary);
        if (bin[k].env_name)
            np_buf_appendf(b, "%s=%s ", bin[k].env_name, bin[k].env_value);
        /* --ntasks too: the job's SLURM_NTASKS (all nodes) would otherwise be the step's */
        np_buf_appendf(b, "srun --nodes=\"$2\" --ntasks=$(($2 * %d)) --ntasks-per-node=%d --nodelist=\"$3\"",
                       c->gpus_per_node, c->gpus_per_node);
        if (c->srun_mpi[0])
            np_buf_appendf(b, " --mpi=%s", c->srun_mpi);
        np_buf_append(b, " --cpu-bind=none \\\n        --output \"$ncclt_dir/$1.out\"");
        np_buf_append(b, " \\\n        --container-image ");
        np_buf_append_shq(b, c->image ? c->image : "");
        np_buf_append(b, " --no-container-mount-home \\\n        --container-mounts ");
        np_buf_append_shqf(b, "%s:%s", c->experiment_dir, c->experiment_dir);
        np_buf_append(b, " \\\n        --container-env=");
        struct np_script_var vars[NP_SCRIPT_MAX_VARS];
        size_t nv = np_ncclt_vars(c, vars, NP_SCRIPT_MAX_VARS);
        for (size_t i = 0; i < nv; i++)
            np_buf_appendf(b, "%s%s", i ? "," : "", vars[i].name);
        if (bin[k].env_name)
            np_buf_appendf(b, "%s%s", nv ? "," : "", bin[k].env_name);
        np_buf_append(b, " \\\n        --wait=60 --kill-on-bad-exit=1 \\\n       ");
        struct np_strv s = {0};
        ncclt_argv(c, (int)k, &s);
        char **w = np_strv_steal(&s);
        if (!w) {
            free(pat);
            np_ncclt_plan_free(&plan);
            return -1;
        }
        for (size_t i = 0; w[i]; i++) {
            np_buf_append(b, " ");
            np_buf_append_shq(b, w[i]);
        }
        np_strv_free(w);
        np_buf_append(b, "\n    ncclt_st=$?\n    echo \"nemoperf: nccl-tests step $1 exit $ncclt_st (started $ncclt_t0, "
                         "$(($(date +%s) - ncclt_t0)) s)\"\n"
                         "    return \"$ncclt_st\"\n}\n");
    }
    /* the rounds: the steps of each at once (disjoint nodes), then wait for all of them */
    for (int r = 0; r < plan.rounds; r++) {
        np_buf_appendf(b, "# round %d of %d\nncclt_pids=()\n", r + 1, plan.rounds);
        for (size_t i = 0; i < plan.n; i++) {
            const struct np_ncclt_step *s = &plan.steps[i];
            if (s->round != r)
                continue;
            struct np_buf list, name;
            np_buf_init(&list);
            np_buf_init(&name);
            ncclt_step_hosts(s, c->nodes, &list, &name);
            char *l = np_buf_steal(&list), *nm = np_buf_steal(&name);
            if (l && nm)
                np_buf_appendf(b, "ncclt_%s %s-%s %d %s &\nncclt_pids+=($!)\n", bin[s->binary].binary,
                               bin[s->binary].binary, nm, s->scope == NP_NCCLT_INTRA ? 1 : s->scope == NP_NCCLT_INTER ? 2 : c->nodes, l);
            else
                b->failed = 1;
            free(l);
            free(nm);
        }
        np_buf_append(b, "for p in \"${ncclt_pids[@]}\"; do wait \"$p\" || ncclt_rc=1; done\n");
    }
    np_buf_append(b, "(exit \"$ncclt_rc\")");
    free(pat);
    np_ncclt_plan_free(&plan);
    return 0;
}

/* ---- what --dry-run and the manifest say ---- */

json_t *np_ncclt_json(const struct np_launch_config *c)
{
    struct np_ncclt_plan plan;
    if (np_ncclt_plan(&c->ncclt, c->nodes, &plan) != NP_OK)
        return NULL;
    size_t nb;
    const struct np_ncclt_binary *bin = np_ncclt_binaries(&nb);
    json_t *colls = json_array(), *steps = json_array();
    int bad = !colls || !steps;
    for (size_t k = 0; !bad && k < nb; k++)
        if ((c->ncclt.collectives >> k) & 1u)
            bad |= json_array_append_new(colls, json_string(bin[k].collective));
    for (size_t i = 0; !bad && i < plan.n; i++) {
        const struct np_ncclt_step *s = &plan.steps[i];
        char label[96];
        np_ncclt_step_label(s, label, sizeof label);
        json_t *nodes = s->scope == NP_NCCLT_ALL     ? json_null()
                        : s->scope == NP_NCCLT_INTER ? json_pack("[i,i]", s->node[0] + 1, s->node[1] + 1)
                                                     : json_pack("[i]", s->node[0] + 1);
        json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:o}", "round", s->round + 1, "step", label, "binary",
                              bin[s->binary].binary, "scope", np_ncclt_scope_name(s->scope), "node_positions",
                              nodes ? nodes : json_null());
        bad |= !o || json_array_append_new(steps, o);
    }
    json_t *args = json_array();
    for (const char *const *a = np_ncclt_args(); args && *a; a++)
        bad |= json_array_append_new(args, json_string(*a));
    json_t *o = bad || !args ? NULL
                             : json_pack("{s:s,s:s,s:o,s:s,s:s,s:o,s:i,s:o,s:s,s:s}", "check",
                                         np_ncclt_check_name(c->ncclt.check), "pairs",
                                         np_ncclt_pairs_name(c->ncclt.pairs), "collectives", colls, "path",
                                         c->ncclt.path, "binary_suffix", NP_NCCLT_SUFFIX, "args", args, "rounds",
                                         plan.rounds, "plan", steps, "steps_file", NP_NCCLT_STEPS_FILE, "source",
                                         np_ncclt_recipe()->source);
    if (!o) {
        json_decref(colls);
        json_decref(steps);
        json_decref(args);
    }
    np_ncclt_plan_free(&plan);
    return o;
}

char *np_ncclt_plan_text(const struct np_launch_config *c)
{
    struct np_ncclt_plan plan;
    if (np_ncclt_plan(&c->ncclt, c->nodes, &plan) != NP_OK)
        return NULL;
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "nccl-tests FABRIC_CHECK=%s over %d node(s) x %d GPUs, one job, %zu steps in %d round(s)%s%s%s:\n",
                   np_ncclt_check_name(c->ncclt.check), c->nodes, c->gpus_per_node, plan.n, plan.rounds,
                   c->ncclt.check == NP_NCCLT_BISECT ? " (pairs: " : "",
                   c->ncclt.check == NP_NCCLT_BISECT ? np_ncclt_pairs_name(c->ncclt.pairs) : "",
                   c->ncclt.check == NP_NCCLT_BISECT ? ")" : "");
    for (int r = 0; r < plan.rounds; r++) {
        const char *what = "";
        np_buf_appendf(&b, "  round %d:", r + 1);
        for (size_t i = 0; i < plan.n; i++) {
            if (plan.steps[i].round != r)
                continue;
            const struct np_ncclt_step *s = &plan.steps[i];
            what = s->scope == NP_NCCLT_INTRA && c->ncclt.check == NP_NCCLT_BISECT ? "each node alone"
                   : s->scope == NP_NCCLT_INTER                                   ? "node pairs at once"
                                                                                  : "";
            char label[96];
            np_ncclt_step_label(s, label, sizeof label);
            np_buf_appendf(&b, " %s", label);
        }
        np_buf_appendf(&b, "%s%s%s\n", *what ? " (" : "", what, *what ? ")" : "");
    }
    np_buf_append(&b, "  (nodeN: the N-th host of the allocation; the job names each step's file by host name, "
                      "nccl-tests/<binary>-<host>[-<host>].out, listed in nccl-tests/steps.json)\n");
    np_ncclt_plan_free(&plan);
    return np_buf_steal(&b);
}
