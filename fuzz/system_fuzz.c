/* system_fuzz.c - libFuzzer target for the readers of a job's system snapshot and telemetry: nvidia-smi -q -x,
 * host.txt's sections, nvidia-smi --query-gpu CSV (parse/system.h).
 *
 * The first byte picks the reader (0 the XML, 1 host.txt, 2 the CSV, 3 all three on thirds of the input, then
 * what stands out and the text, 4 dcgmi dmon's output); the rest is its input.  Besides ASan/UBSan it checks what callers rely on:
 * shares are fractions, every record has samples, the text is a NUL-terminated string of its buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/system.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_tele_sane(const struct np_gpu_telemetry *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double sh[] = {t[i].hw_slowdown, t[i].sw_power_cap, t[i].thermal, t[i].power_brake};
        for (size_t k = 0; k < sizeof sh / sizeof *sh; k++)
            if (!isnan(sh[k]) && (sh[k] < 0 || sh[k] > 1))
                abort();
        if (!t[i].samples)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0] % 5;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    struct np_system sys;
    memset(&sys, 0, sizeof sys);
    struct np_sys_node node;
    memset(&node, 0, sizeof node);
    strcpy(node.name, "f1");
    size_t a = sel == 3 ? n / 3 : n, b = sel == 3 ? n / 3 : 0;
    if (sel == 0 || sel == 3)
        (void)np_sys_xml_read(in, a, &node);
    if (sel == 1 || sel == 3)
        (void)np_sys_host_read(in + (sel == 3 ? a : 0), sel == 3 ? b : n, &node);
    if (sel == 2 || sel == 3) {
        size_t off = sel == 3 ? a + b : 0;
        (void)np_telemetry_read(in + off, n - off, "f1", NAN, NAN, &sys.tele, &sys.ntele, &sys.notes);
        fuzz_tele_sane(sys.tele, sys.ntele);
    }
    if (sel == 3) {
        sys.nodes = malloc(sizeof node);
        if (sys.nodes) {
            sys.nodes[0] = node;
            sys.nnodes = 1;
            memset(&node, 0, sizeof node);
            char buf[512];
            np_system_text(&sys, buf, sizeof buf);
            if (strnlen(buf, sizeof buf) == sizeof buf)
                abort();
            struct np_system other;
            memset(&other, 0, sizeof other);
            (void)np_system_diff(&sys, &other, NULL, NULL); /* an empty side: no difference, no call */
        }
    }
    if (sel == 4) { /* dcgmi dmon output */
        (void)np_telemetry_read_dcgm(in, n, "f1", &sys.tele, &sys.ntele, &sys.notes);
        fuzz_tele_sane(sys.tele, sys.ntele);
    }
    np_sys_node_free(&node);
    np_system_free(&sys);
    return 0;
}
