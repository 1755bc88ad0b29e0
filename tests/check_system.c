/* check_system.c - the system snapshot of a run: nvidia-smi -q -x (v12 and v11 layouts), host.txt's sections,
 * what differs between nodes, GPU health, a missing nvidia-smi, two systems' differences, hostile XML.
 * Stand-ins: tests/data/system/ (made by its make.py in the real formats, cited there; no GPU exists here).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/system.h"
#include "testutil.h"

#define D "tests/data/system/"

static void node_of(const char *path, struct np_sys_node *n, const char *name)
{
    size_t len;
    char *t = np_test_read_all(path, &len);
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    ck_assert_int_eq(np_sys_xml_read(t, len, n), NP_OK);
    free(t);
}

START_TEST(test_xml_v12)
{
    struct np_sys_node n;
    node_of(D "run4/system/n2/nvidia-smi-q.xml", &n, "n2");
    ck_assert_str_eq(n.driver, "550.54.15");
    ck_assert_str_eq(n.cuda, "12.4");
    ck_assert_uint_eq(n.ngpus, 8);
    const struct np_sys_gpu *g = &n.gpus[5];
    ck_assert_int_eq(g->index, 5);
    ck_assert_str_eq(g->product, "NVIDIA H100 80GB HBM3");
    ck_assert_str_eq(g->pci_bus_id, "00000000:68:00.0");
    ck_assert_str_eq(g->vbios, "96.00.99.00.01");
    ck_assert_str_eq(g->serial, "1652423000205");
    ck_assert_ptr_nonnull(strstr(g->uuid, "GPU-"));
    ck_assert_double_eq(g->power_limit_w, 500.0); /* current_power_limit, not the default */
    ck_assert_double_eq(g->default_power_limit_w, 700.0);
    ck_assert_double_eq(g->max_sm_mhz, 1980.0);
    ck_assert_double_eq(g->app_sm_mhz, 1980.0);
    ck_assert_int_eq(g->persistence, 1);
    ck_assert_int_eq(g->ecc_mode, 1);
    ck_assert_int_eq(g->ecc_volatile_sbe, 0);
    ck_assert_int_eq(g->ecc_aggregate_dbe, 0);
    ck_assert_int_eq(g->remap_pending, 0);
    ck_assert_int_eq(g->remap_failure, 0);
    ck_assert_int_eq(g->retired_pending, 0);
    ck_assert_int_eq(g->mig_mode, 0);
    ck_assert_int_eq(g->pcie_gen, 5);
    ck_assert_int_eq(g->pcie_width, 16);
    ck_assert_int_eq(g->pcie_max_width, 16);
    ck_assert_int_eq(g->nvlink_down, -1); /* host.txt not read */
    ck_assert_ptr_null(n.notes);
    np_sys_node_free(&n);
}
END_TEST

START_TEST(test_xml_v11)
{
    struct np_sys_node n;
    node_of(D "v11.xml", &n, "a1");
    ck_assert_str_eq(n.driver, "470.199.02");
    ck_assert_uint_eq(n.ngpus, 1);
    ck_assert_double_eq(n.gpus[0].power_limit_w, 400.0); /* power_readings/enforced_power_limit */
    ck_assert_double_eq(n.gpus[0].max_sm_mhz, 1410.0);
    ck_assert_int_eq(n.gpus[0].ecc_volatile_sbe, 3); /* single_bit/total, not summed with its parts */
    ck_assert_int_eq(n.gpus[0].ecc_volatile_dbe, 0);
    ck_assert_int_eq(n.gpus[0].ecc_aggregate_sbe, 5);
    ck_assert_int_eq(n.gpus[0].ecc_aggregate_dbe, 1);
    np_sys_node_free(&n);
}
END_TEST

START_TEST(test_host)
{
    struct np_sys_node n;
    node_of(D "run4/system/n1/nvidia-smi-q.xml", &n, "n1");
    size_t len;
    char *t = np_test_read_all(D "health/system/h1/host.txt", &len);
    ck_assert_int_eq(np_sys_host_read(t, len, &n), NP_OK);
    free(t);
    ck_assert_str_eq(n.kernel, "5.15.0-105-generic");
    ck_assert_str_eq(n.cpu_model, "Intel(R) Xeon(R) Platinum 8480CL");
    ck_assert_str_eq(n.governor, "performance");
    ck_assert_int_eq(n.numa_nodes, 2);
    ck_assert_str_eq(n.ib, "mlx5_0 Active 400; mlx5_1 Active 400");
    ck_assert_str_eq(n.nccl, "2.27.3");
    ck_assert_str_eq(n.cudnn, "9.10.2.21");
    ck_assert_str_eq(n.te, "2.5.0");
    ck_assert_str_eq(n.cuda_runtime, "12.9.1.010");
    ck_assert_ptr_nonnull(strstr(n.image, "nvcr.io/nvidia/nemo:25.09"));
    ck_assert_ptr_nonnull(strstr(n.image, "sha256:3f8a0b6c"));
    ck_assert_int_eq(n.gpus[0].nvlink_up, 18);
    ck_assert_int_eq(n.gpus[0].nvlink_down, 0);
    ck_assert_int_eq(n.gpus[6].nvlink_down, 2);
    ck_assert_int_eq(n.gpus[6].nvlink_up, 16);
    np_sys_node_free(&n);
    /* no section at all: said */
    memset(&n, 0, sizeof n);
    snprintf(n.name, sizeof n.name, "x");
    ck_assert_int_eq(np_sys_host_read("just text\n", 10, &n), NP_OK);
    ck_assert_ptr_nonnull(n.notes);
    ck_assert_ptr_nonnull(strstr(n.notes, "x: host.txt has no"));
    np_sys_node_free(&n);
}
END_TEST

static char *text_of(const char *dir)
{
    struct np_system s;
    struct np_error e = {0};
    ck_assert_int_eq(np_system_read(dir, &s, &e), NP_OK);
    char *buf = malloc(8192);
    ck_assert_ptr_nonnull(buf);
    np_system_text(&s, buf, 8192);
    np_system_free(&s);
    return buf;
}

START_TEST(test_run4_outliers)
{
    struct np_system s;
    struct np_error e = {0};
    ck_assert_int_eq(np_system_read(D "run4", &s, &e), NP_OK);
    ck_assert_uint_eq(s.nnodes, 4);
    ck_assert_str_eq(s.nodes[0].name, "n1");
    ck_assert_int_eq(s.nodes[0].status, NP_SYS_OK);
    ck_assert_double_eq(s.nodes[0].snapshot_s, 2.4);
    ck_assert_int_eq(s.snapshot, 1);
    ck_assert_int_eq(s.telemetry, 1);
    ck_assert_uint_eq(s.ntele, 32);
    np_system_free(&s);
    char *t = text_of(D "run4");
    ck_assert_msg(strstr(t, "n4: driver 535.161.08 (the others 550.54.15)"), "%s", t);
    ck_assert_msg(strstr(t, "n2: power limit 500 W on its 8 GPUs (the others 700 W)"), "%s", t);
    ck_assert_msg(strstr(t, "n2: SM clock 1755 of 1980 MHz (median GPU 1980 MHz), SW power cap 100 % of the window "
                            "on its 8 GPUs, 496 W/GPU — likely straggler"), "%s", t);
    ck_assert_msg(strstr(t, "n3 GPU 5: SM clock 1733 of 1980 MHz (median GPU 1980 MHz), HW slowdown 43 % of the window "
                            "— likely straggler"), "%s", t);
    ck_assert_msg(!strstr(t, "n1"), "n1 stands out in nothing: %s", t);
    ck_assert_msg(!strstr(t, "no system snapshot"), "%s", t);
    free(t);
}
END_TEST

START_TEST(test_health)
{
    char *t = text_of(D "health");
    ck_assert_msg(strstr(t, "h1 GPU 1: 2 uncorrectable ECC errors since boot, 12 correctable ECC errors since boot"),
                  "%s", t);
    ck_assert_msg(strstr(t, "h1 GPU 2: a row remap pending (needs a GPU reset)"), "%s", t);
    ck_assert_msg(strstr(t, "h1 GPU 3: a row remap failed, a page retirement pending"), "%s", t);
    ck_assert_msg(strstr(t, "h1 GPU 4: MIG enabled"), "%s", t);
    ck_assert_msg(strstr(t, "h1 GPU 6: 2 NVLink links down"), "%s", t);
    ck_assert_msg(!strstr(t, "GPU 0") && !strstr(t, "GPU 7"), "%s", t);
    free(t);
}
END_TEST

START_TEST(test_missing)
{
    char *t = text_of(D "missing");
    ck_assert_str_eq(t, "no system snapshot; m1: missing nvidia-smi");
    free(t);
    t = text_of(D "no-such-run");
    ck_assert_str_eq(t, "no system snapshot");
    free(t);
    struct np_system s;
    ck_assert_int_eq(np_system_read(D "missing", &s, NULL), NP_OK);
    ck_assert_int_eq(s.nodes[0].status, NP_SYS_PARTIAL); /* host.txt without the XML */
    ck_assert_str_eq(s.nodes[0].kernel, "6.8.0-45-generic");
    np_system_free(&s);
}
END_TEST

struct diffs {
    char text[2048];
    size_t n;
};

static void diff_add(void *ctx, const char *node, const char *what)
{
    struct diffs *d = ctx;
    (void)node;
    size_t l = strlen(d->text);
    snprintf(d->text + l, sizeof d->text - l, "%s%s", l ? "; " : "", what);
    d->n++;
}

START_TEST(test_diff)
{
    struct np_system a, b;
    ck_assert_int_eq(np_system_read(D "run4", &a, NULL), NP_OK);
    ck_assert_int_eq(np_system_read(D "run4", &b, NULL), NP_OK);
    struct diffs d = {"", 0};
    ck_assert_uint_eq(np_system_diff(&a, &b, diff_add, &d), 0);
    for (size_t i = 0; i < b.nnodes; i++) {
        snprintf(b.nodes[i].driver, sizeof b.nodes[i].driver, "560.28.03");
        for (size_t j = 0; j < b.nodes[i].ngpus; j++)
            b.nodes[i].gpus[j].power_limit_w = 600;
    }
    for (size_t i = 0; i < b.ntele; i++)
        b.tele[i].mean_power_w *= 1.05;
    ck_assert_uint_eq(np_system_diff(&a, &b, diff_add, &d), 3);
    ck_assert_msg(strstr(d.text, "driver 550.54.15 -> 560.28.03"), "%s", d.text);
    ck_assert_msg(strstr(d.text, "power limit 700 W -> 600 W"), "%s", d.text);
    ck_assert_msg(strstr(d.text, "mean power 616 -> 646 W/GPU (+5.0 %)"), "%s", d.text);
    np_system_free(&a);
    np_system_free(&b);
}
END_TEST

/* Cut, nested, unterminated and binary XML: read as far as it goes, said, never a crash. */
START_TEST(test_hostile_xml)
{
    size_t len;
    char *t = np_test_read_all(D "run4/system/n1/nvidia-smi-q.xml", &len);
    for (size_t cut = 0; cut < len; cut += 997) {
        struct np_sys_node n;
        memset(&n, 0, sizeof n);
        snprintf(n.name, sizeof n.name, "c");
        ck_assert_int_eq(np_sys_xml_read(t, cut, &n), NP_OK);
        if (cut > 200)
            ck_assert_msg(n.notes && strstr(n.notes, "truncated"), "cut %zu: %s", cut, n.notes ? n.notes : "");
        np_sys_node_free(&n);
    }
    free(t);
    static const char *const bad[] = {
        "<nvidia_smi_log><gpu><product_name>A</product_name></gpu></nvidia_smi_log>",
        "<nvidia_smi_log><gpu></x></y><product_name>&amp;&lt;&#1;&</product_name><!-- never closed",
        "<nvidia_smi_log><gpu><power_readings><enforced_power_limit>1e999 W</enforced_power_limit>"
        "<minor_number>-5</minor_number><remapped_rows><remapped_row_pending>Maybe</remapped_row_pending>",
        "<<<<>>>></////>",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct np_sys_node n;
        memset(&n, 0, sizeof n);
        ck_assert_int_eq(np_sys_xml_read(bad[i], strlen(bad[i]), &n), NP_OK);
        np_sys_node_free(&n);
    }
    /* 100,000 nested elements and a 10 MB name */
    size_t big = 100000 * 3 + 32;
    char *deep = malloc(big + 10000000);
    ck_assert_ptr_nonnull(deep);
    size_t o = (size_t)sprintf(deep, "<nvidia_smi_log><gpu>");
    for (int i = 0; i < 100000; i++)
        memcpy(deep + o, "<a>", 3), o += 3;
    deep[o++] = '<';
    memset(deep + o, 'x', 10000000 - 2);
    o += 10000000 - 2;
    struct np_sys_node n;
    memset(&n, 0, sizeof n);
    ck_assert_int_eq(np_sys_xml_read(deep, o, &n), NP_OK);
    ck_assert_uint_eq(n.ngpus, 1);
    np_sys_node_free(&n);
    free(deep);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("system");
    TCase *tc = tcase_create("system");
    tcase_add_test(tc, test_xml_v12);
    tcase_add_test(tc, test_xml_v11);
    tcase_add_test(tc, test_host);
    tcase_add_test(tc, test_run4_outliers);
    tcase_add_test(tc, test_health);
    tcase_add_test(tc, test_missing);
    tcase_add_test(tc, test_diff);
    tcase_add_test(tc, test_hostile_xml);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
