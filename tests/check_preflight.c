/* check_preflight.c - launch's "can this job ever run?" limits: scontrol text, slurmrestd replies
 * (a recorded v0.0.38 reply of the local cluster, and the v0.0.40+ shape from Slurm's API
 * description, untested against a server here), and the limit named for a job that does not fit.
 * The end-to-end refusal on the real cluster is in tests/e2e/50-first-hour.sh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    Suite *s = suite_create("preflight");
    TCase *tc = tcase_create("preflight");
    tcase_add_test(tc, scontrol_lines);
    tcase_add_test(tc, rest_v0038_recorded);
    tcase_add_test(tc, rest_v0040_shape);
    tcase_add_test(tc, misfit_names_the_limit);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
