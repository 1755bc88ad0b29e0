/* check_preflight.c - launch's "can this job ever run?" limits: scontrol text, slurmrestd replies (recorded
 * v0.0.38 replies of the local cluster; the v0.0.40+ shape from Slurm's API description, untested against a
 * server here), the limit named for a job that does not fit, and the partition's nodes (sinfo, GET nodes)
 * telling a job that waits for DOWN/DRAINED nodes from one that can never run.
 * End to end on the real cluster: tests/e2e/50-first-hour.sh (refusal), 16-launch-nodes-down.sh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/launch/nodes.h"
#include "nemoperf/launch/preflight.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[65536];
    *len = fread(buf, 1, sizeof buf - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static struct np_launch_config job(int gpus, int per_node)
{
    struct np_launch_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.gpus_per_node = per_node;
    c.nodes = gpus / per_node;
    snprintf(c.job_name, sizeof c.job_name, "pretrain_llama3.1_8b_bf16_%d", gpus);
    return c;
}

START_TEST(scontrol_lines)
{
    const char *text =
        "PartitionName=debug AllowGroups=ALL Default=NO MaxNodes=2 TotalNodes=8 TRES=cpu=128,node=8,gres/gpu=64\n"
        "PartitionName=batch AllowGroups=ALL Default=YES MaxNodes=UNLIMITED Nodes=n[1-4] TotalCPUs=64 "
        "TotalNodes=4 TRES=cpu=64,mem=16000M,node=4,billing=64\n";
    struct np_partition p;
    ck_assert(np_partition_from_scontrol(text, NULL, &p));
    ck_assert_str_eq(p.name, "batch");
    ck_assert_int_eq(p.is_default, 1);
    ck_assert_int_eq(p.total_nodes, 4);
    ck_assert_int_eq(p.max_nodes_per_job, -1);
    ck_assert_int_eq(p.total_gpus, -1);
    ck_assert(np_partition_from_scontrol(text, "debug", &p));
    ck_assert_int_eq(p.total_nodes, 8);
    ck_assert_int_eq(p.max_nodes_per_job, 2);
    ck_assert_int_eq(p.total_gpus, 64);
    ck_assert(!np_partition_from_scontrol(text, "gpu", &p));
    ck_assert(!np_partition_from_scontrol("", NULL, &p));
    /* TotalNodesX= is not TotalNodes= */
    ck_assert(np_partition_from_scontrol("PartitionName=x XTotalNodes=9 TotalNodes=3\n", NULL, &p));
    ck_assert_int_eq(p.total_nodes, 3);
}
END_TEST

START_TEST(rest_v0038_recorded)
{
    size_t len;
    char *body = slurp("tests/data/rest/v0.0.38-partitions.json", &len);
    struct np_partition p;
    struct np_error err;
    ck_assert_int_eq(np_partition_from_rest(200, body, len, NULL, &p, &err), NP_OK);
    ck_assert_str_eq(p.name, "batch");
    ck_assert_int_eq(p.total_nodes, 4);
    ck_assert_int_eq(p.max_nodes_per_job, -1);
    ck_assert_int_eq(np_partition_from_rest(200, body, len, "gpu", &p, &err), NP_E_NOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.text, "gpu: no such partition (the cluster has: batch)"));
    ck_assert_int_eq(np_partition_from_rest(200, "{\"partitions\":7", 15, NULL, &p, &err), NP_E_PARSE);
    ck_assert_int_eq(np_partition_from_rest(500, "{\"errors\":[{\"description\":\"boom\"}]}", 35, NULL, &p, &err),
                     NP_E_SLURM);
    ck_assert_ptr_nonnull(strstr(err.text, "boom"));
}
END_TEST

START_TEST(rest_v0040_shape)
{
    const char *body = "{\"partitions\":[{\"name\":\"gpu\",\"partition\":{\"state\":[\"UP\"]},\"nodes\":{\"total\":16,"
                       "\"configured\":\"g[1-16]\"},\"maximums\":{\"nodes\":{\"set\":true,\"infinite\":false,"
                       "\"number\":8}},\"tres\":{\"configured\":\"cpu=2048,node=16,gres/gpu=128\"}}]}";
    struct np_partition p;
    struct np_error err;
    ck_assert_int_eq(np_partition_from_rest(200, body, strlen(body), NULL, &p, &err), NP_OK);
    ck_assert_int_eq(p.total_nodes, 16);
    ck_assert_int_eq(p.max_nodes_per_job, 8);
    ck_assert_int_eq(p.total_gpus, 128);
}
END_TEST

START_TEST(misfit_names_the_limit)
{
    struct np_partition p = {.name = "batch", .total_nodes = 4, .max_nodes_per_job = -1, .total_gpus = -1};
    char buf[400];
    struct np_launch_config c = job(32, 8);
    ck_assert_ptr_null(np_partition_misfit(&p, &c, buf, sizeof buf));
    c = job(64, 8);
    const char *why = np_partition_misfit(&p, &c, buf, sizeof buf);
    ck_assert_ptr_nonnull(why);
    ck_assert_str_eq(why, "needs 8 nodes (64 GPUs, 8 per node) but partition batch has 4 nodes in total");
    p.total_nodes = 16;
    p.max_nodes_per_job = 2;
    c = job(32, 8);
    ck_assert_ptr_nonnull(strstr(np_partition_misfit(&p, &c, buf, sizeof buf), "at most 2 per job (MaxNodes)"));
    p.max_nodes_per_job = -1;
    p.total_gpus = 16;
    c.gres_gpus = (char *)"h100:8";
    ck_assert_ptr_nonnull(strstr(np_partition_misfit(&p, &c, buf, sizeof buf), "needs 32 GPUs"));
    c = job(16, 8);
    c.gres_gpus = (char *)"8";
    ck_assert_ptr_null(np_partition_misfit(&p, &c, buf, sizeof buf));
}
END_TEST

/* sinfo -h -o NP_SLURM_SINFO_NODES of the local cluster with n1-n2 drained and n3 down (recorded) */
static const char sinfo_text[] = "2|drained|gpu:8|n[1-2]|maint\n1|idle|gpu:8|n4|none\n1|down|gpu:8|n3|power supply\n";

START_TEST(nodes_sinfo_states)
{
    struct np_nodes nodes;
    ck_assert_int_eq(np_nodes_from_sinfo(sinfo_text, &nodes), 0);
    ck_assert_uint_eq(nodes.n, 3);
    ck_assert_int_eq(nodes.g[0].count, 2);
    ck_assert_int_eq(nodes.g[0].gpus, 8);
    ck_assert_int_eq(nodes.g[0].usable, 0);
    ck_assert_str_eq(nodes.g[0].names, "n[1-2]");
    ck_assert_str_eq(nodes.g[0].reason, "maint");
    ck_assert_int_eq(nodes.g[1].usable, 1);
    ck_assert_str_eq(nodes.g[1].reason, "");
    ck_assert_int_eq(nodes.g[2].usable, 0);
    ck_assert_str_eq(nodes.g[2].reason, "power supply");
    np_nodes_free(&nodes);
    /* suffixes: not responding is unusable, powered off (~) is not; a reason may hold '|'; junk skipped */
    ck_assert_int_eq(np_nodes_from_sinfo("1|idle*|gpu:8|a1|x\n1|idle~|(null)|a2|a | b\nnot a line\n0|idle|x|y|z\n",
                                         &nodes), 0);
    ck_assert_uint_eq(nodes.n, 2);
    ck_assert_int_eq(nodes.g[0].usable, 0);
    ck_assert_int_eq(nodes.g[1].usable, 1);
    ck_assert_int_eq(nodes.g[1].gpus, 0);
    ck_assert_str_eq(nodes.g[1].reason, "a | b");
    np_nodes_free(&nodes);
    np_nodes_free(NULL);
}
END_TEST

START_TEST(nodes_gres)
{
    ck_assert_int_eq(np_nodes_gres_gpus("gpu:8"), 8);
    ck_assert_int_eq(np_nodes_gres_gpus("gpu:h100:8(S:0-1)"), 8);
    ck_assert_int_eq(np_nodes_gres_gpus("gpu:a100:4(S:0,1),gpu:t4:2,shard:16"), 6);
    ck_assert_int_eq(np_nodes_gres_gpus("shard:4"), -1);
    ck_assert_int_eq(np_nodes_gres_gpus("gpux:4"), -1);
    ck_assert_int_eq(np_nodes_gres_gpus(""), -1);
    ck_assert_int_eq(np_nodes_gres_gpus(NULL), -1);
}
END_TEST

START_TEST(nodes_fit_tells_waiting_from_never)
{
    struct np_nodes nodes;
    char buf[600];
    ck_assert_int_eq(np_nodes_from_sinfo(sinfo_text, &nodes), 0);
    struct np_launch_config c = job(8, 8);
    ck_assert_int_eq(np_nodes_fit(&nodes, "batch", &c, buf, sizeof buf), NP_NODES_FIT);
    c = job(32, 8);
    ck_assert_int_eq(np_nodes_fit(&nodes, "batch", &c, buf, sizeof buf), NP_NODES_UNAVAILABLE);
    ck_assert_str_eq(buf, "needs 4 nodes but only 1 of partition batch's 4 is up; n[1-2] drained (reason: maint), "
                          "n3 down (reason: power supply)");
    c.gres_gpus = (char *)"h100:16";
    ck_assert_int_eq(np_nodes_fit(&nodes, "batch", &c, buf, sizeof buf), NP_NODES_NEVER);
    ck_assert_str_eq(buf, "needs 4 nodes with 16 GPUs each (SBATCH_GPUS_PER_NODE=h100:16) but partition batch has 0 "
                          "such nodes (at most 8 GPUs per node)");
    c.gres_gpus = (char *)"8";
    ck_assert_int_eq(np_nodes_fit(&nodes, "batch", &c, buf, sizeof buf), NP_NODES_UNAVAILABLE);
    np_nodes_free(&nodes);
    /* nothing known: no verdict */
    ck_assert_int_eq(np_nodes_fit(&nodes, "batch", &c, buf, sizeof buf), NP_NODES_FIT);
}
END_TEST

START_TEST(nodes_rest_v0038_recorded)
{
    size_t len;
    char *body = slurp("tests/data/rest/v0.0.38-nodes-drained.json", &len);
    struct np_nodes nodes;
    struct np_error err;
    ck_assert_int_eq(np_nodes_from_rest(200, body, len, "batch", &nodes, &err), NP_OK);
    ck_assert_uint_eq(nodes.n, 4);
    ck_assert_str_eq(nodes.g[0].state, "idle+drain");
    ck_assert_int_eq(nodes.g[0].usable, 0);
    ck_assert_str_eq(nodes.g[2].state, "down");
    ck_assert_int_eq(nodes.g[2].usable, 0);
    ck_assert_int_eq(nodes.g[3].usable, 1);
    ck_assert_int_eq(nodes.g[3].gpus, 8);
    char buf[600];
    struct np_launch_config c = job(16, 8);
    ck_assert_int_eq(np_nodes_fit(&nodes, "batch", &c, buf, sizeof buf), NP_NODES_UNAVAILABLE);
    ck_assert_str_eq(buf, "needs 2 nodes but only 1 of partition batch's 4 is up; n1 idle+drain (reason: maint), "
                          "n2 idle+drain (reason: maint), n3 down (reason: power supply)");
    np_nodes_free(&nodes);
    ck_assert_int_eq(np_nodes_from_rest(200, body, len, "gpu", &nodes, &err), NP_OK);
    ck_assert_uint_eq(nodes.n, 0);
    static const struct {
        long http;
        const char *body, *says;
        enum np_status want;
    } bad[] = {{200, "{\"nodes\":7}", "no \"nodes\" array", NP_E_PARSE},
               {200, "", "no \"nodes\" array", NP_E_PARSE},
               {500, "{\"errors\":[{\"description\":\"boom\"}]}", "HTTP 500: boom", NP_E_SLURM}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(np_nodes_from_rest(bad[i].http, bad[i].body, strlen(bad[i].body), NULL, &nodes, &err),
                         bad[i].want);
        ck_assert_ptr_nonnull(strstr(err.text, bad[i].says));
        ck_assert_uint_eq(nodes.n, 0);
    }
}
END_TEST

/* v0.0.40+ shape (state an array), from Slurm's API description; untested against a server here */
START_TEST(nodes_rest_v0040_shape)
{
    const char *body = "{\"nodes\":[{\"name\":\"g1\",\"state\":[\"IDLE\",\"DRAIN\"],\"reason\":\"bad HCA\","
                       "\"gres\":\"gpu:h100:8(S:0-1)\",\"partitions\":[\"gpu\"]},{\"name\":\"g2\",\"state\":[\"MIXED\"],"
                       "\"reason\":\"\",\"gres\":\"gpu:h100:8(S:0-1)\",\"partitions\":[\"gpu\",\"all\"]}]}";
    struct np_nodes nodes;
    struct np_error err;
    ck_assert_int_eq(np_nodes_from_rest(200, body, strlen(body), "gpu", &nodes, &err), NP_OK);
    ck_assert_uint_eq(nodes.n, 2);
    ck_assert_str_eq(nodes.g[0].state, "idle+drain");
    ck_assert_int_eq(nodes.g[0].usable, 0);
    ck_assert_int_eq(nodes.g[0].gpus, 8);
    ck_assert_int_eq(nodes.g[1].usable, 1);
    np_nodes_free(&nodes);
    ck_assert_int_eq(np_nodes_from_rest(200, body, strlen(body), "all", &nodes, &err), NP_OK);
    ck_assert_uint_eq(nodes.n, 1);
    ck_assert_str_eq(nodes.g[0].names, "g2");
    np_nodes_free(&nodes);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("preflight");
    TCase *tc = tcase_create("preflight");
    tcase_add_test(tc, scontrol_lines);
    tcase_add_test(tc, rest_v0038_recorded);
    tcase_add_test(tc, rest_v0040_shape);
    tcase_add_test(tc, misfit_names_the_limit);
    tcase_add_test(tc, nodes_sinfo_states);
    tcase_add_test(tc, nodes_gres);
    tcase_add_test(tc, nodes_fit_tells_waiting_from_never);
    tcase_add_test(tc, nodes_rest_v0038_recorded);
    tcase_add_test(tc, nodes_rest_v0040_shape);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
