/* system.c - the system snapshot of a run: each node's `nvidia-smi -q -x` and host.txt read from
 * <run>/system/<node>/, what differs between nodes and between two runs' systems, all in words.
 * The XML is read by a small tolerant element reader (no XML library: the tree needs a dozen leaves of
 * NVIDIA's nvsmi_device_v12.dtd), table-driven by element path; malformed input is noted, never fatal.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "nemoperf/parse/system.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/util/text.h"
#include "nemoperf/util/runfiles.h"

#define SYS_FILE_MAX (64u << 20) /* a snapshot file larger than this is not read (said) */

/* ---- notes ---------------------------------------------------------------------------------------- */

/* Copy [s, s+n) into dst (size), trimmed of blanks, control bytes replaced by '?'. */
static void sys_copy(char *dst, size_t size, const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    if (!size)
        return;
    if (n >= size)
        n = size - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    dst[n] = '\0';
}

/* ---- nvidia-smi -q -x ------------------------------------------------------------------------------- */

/* What a leaf's text sets.  Element paths are those of nvsmi_device_v12.dtd (NVIDIA, shipped with the driver
 * as /usr/share/doc/nvidia-VERSION/nvsmi_device_v12.dtd; the element names are those of real outputs, e.g.
 * influxdata/telegraf plugins/inputs/nvidia_smi/testdata/a100-sxm4-v12.xml, driver 535.54.03); v11's
 * power_readings/enforced_power_limit and ecc_errors/.../single_bit|double_bit/total are read alike. */
enum sys_kind { SK_STR, SK_INT, SK_NUM, SK_ENABLED, SK_YESNO, SK_SBE, SK_DBE };

struct sys_field {
    const char *path;   /* below <gpu> */
    enum sys_kind kind;
    size_t off, size;   /* into struct np_sys_gpu */
};

#define SF_S(p, f) {p, SK_STR, offsetof(struct np_sys_gpu, f), sizeof(((struct np_sys_gpu *)0)->f)}
#define SF(p, k, f) {p, k, offsetof(struct np_sys_gpu, f), 0}

static const struct sys_field sys_fields[] = {
    SF_S("product_name", product),
    SF_S("serial", serial),
    SF_S("uuid", uuid),
    SF_S("vbios_version", vbios),
    SF_S("pci/pci_bus_id", pci_bus_id),
    SF("minor_number", SK_INT, index),
    SF("persistence_mode", SK_ENABLED, persistence),
    SF("mig_mode/current_mig", SK_ENABLED, mig_mode),
    SF("ecc_mode/current_ecc", SK_ENABLED, ecc_mode),
    SF("pci/pci_gpu_link_info/pcie_gen/current_link_gen", SK_INT, pcie_gen),
    SF("pci/pci_gpu_link_info/pcie_gen/max_link_gen", SK_INT, pcie_max_gen),
    SF("pci/pci_gpu_link_info/link_widths/current_link_width", SK_INT, pcie_width),
    SF("pci/pci_gpu_link_info/link_widths/max_link_width", SK_INT, pcie_max_width),
    SF("remapped_rows/remapped_row_pending", SK_YESNO, remap_pending),
    SF("remapped_rows/remapped_row_failure", SK_YESNO, remap_failure),
    SF("retired_pages/pending_retirement", SK_YESNO, retired_pending),
    SF("gpu_power_readings/current_power_limit", SK_NUM, power_limit_w),   /* v12 */
    SF("power_readings/enforced_power_limit", SK_NUM, power_limit_w),      /* v11 and before */
    SF("gpu_power_readings/default_power_limit", SK_NUM, default_power_limit_w),
    SF("power_readings/default_power_limit", SK_NUM, default_power_limit_w),
    SF("max_clocks/sm_clock", SK_NUM, max_sm_mhz),
    SF("applications_clocks/graphics_clock", SK_NUM, app_sm_mhz),
    SF("ecc_errors/volatile/single_bit/total", SK_SBE, ecc_volatile_sbe),  /* v10/v11 */
    SF("ecc_errors/volatile/double_bit/total", SK_DBE, ecc_volatile_dbe),
    SF("ecc_errors/aggregate/single_bit/total", SK_SBE, ecc_aggregate_sbe),
    SF("ecc_errors/aggregate/double_bit/total", SK_DBE, ecc_aggregate_dbe),
};

static void sys_gpu_init(struct np_sys_gpu *g, int pos)
{
    memset(g, 0, sizeof *g);
    g->index = pos;
    g->power_limit_w = g->default_power_limit_w = g->max_sm_mhz = g->app_sm_mhz = NAN;
    g->persistence = g->ecc_mode = g->remap_pending = g->remap_failure = g->retired_pending = -1;
    g->mig_mode = g->nvlink_down = g->nvlink_up = -1;
    g->ecc_volatile_sbe = g->ecc_volatile_dbe = g->ecc_aggregate_sbe = g->ecc_aggregate_dbe = -1;
    g->pcie_gen = g->pcie_width = g->pcie_max_gen = g->pcie_max_width = -1;
}

/* A leading number of v ("500.00 W", "16x", "1410 MHz"); NAN when v does not start with one. */
static double sys_num(const char *v)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || errno || !isfinite(d))
        return NAN;
    return d;
}

static void sys_add(long *acc, const char *v)
{
    double d = sys_num(v);
    if (isnan(d) || d < 0 || d > 1e15)
        return;
    *acc = (*acc < 0 ? 0 : *acc) + (long)d;
}

/* One leaf: path below <gpu> (e.g. "ecc_errors/volatile/dram_uncorrectable"), text v. */
static void sys_gpu_leaf(struct np_sys_gpu *g, const char *path, const char *v)
{
    for (size_t i = 0; i < sizeof sys_fields / sizeof *sys_fields; i++) {
        const struct sys_field *f = &sys_fields[i];
        if (strcmp(f->path, path))
            continue;
        char *p = (char *)g + f->off;
        double d;
        switch (f->kind) {
        case SK_STR:
            if (strcmp(v, "N/A"))
                sys_copy(p, f->size, v, strlen(v));
            return;
        case SK_INT:
            d = sys_num(v);
            if (!isnan(d) && d >= 0 && d < 1e6)
                *(int *)p = (int)d;
            return;
        case SK_NUM:
            d = sys_num(v);
            if (!isnan(d))
                *(double *)p = d;
            return;
        case SK_ENABLED:
            *(int *)p = !strcasecmp(v, "Enabled") ? 1 : !strcasecmp(v, "Disabled") ? 0 : -1;
            return;
        case SK_YESNO:
            *(int *)p = !strcasecmp(v, "Yes") ? 1 : !strcasecmp(v, "No") ? 0 : -1;
            return;
        case SK_SBE:
        case SK_DBE:
            sys_add((long *)p, v);
            return;
        }
    }
    /* v12: ecc_errors/{volatile,aggregate}/{sram,dram}_{correctable,uncorrectable[_parity|_secded]} */
    static const char *const sides[] = {"ecc_errors/volatile/", "ecc_errors/aggregate/"};
    for (int s = 0; s < 2; s++) {
        size_t n = strlen(sides[s]);
        if (strncmp(path, sides[s], n) || strchr(path + n, '/'))
            continue;
        const char *leaf = path + n;
        if (strstr(leaf, "uncorrectable"))
            sys_add(s ? &g->ecc_aggregate_dbe : &g->ecc_volatile_dbe, v);
        else if (strstr(leaf, "_correctable"))
            sys_add(s ? &g->ecc_aggregate_sbe : &g->ecc_volatile_sbe, v);
    }
}

/* Decode the five predefined entities of [s, s+n) into out (size), trimmed. */
static void sys_xml_text(char *out, size_t size, const char *s, size_t n)
{
    char tmp[512];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < sizeof tmp; i++) {
        static const struct { const char *ent; char c; } ents[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        char c = s[i];
        if (c == '&')
            for (size_t e = 0; e < sizeof ents / sizeof *ents; e++) {
                size_t el = strlen(ents[e].ent);
                if (n - i >= el && !memcmp(s + i, ents[e].ent, el)) {
                    c = ents[e].c;
                    i += el - 1;
                    break;
                }
            }
        tmp[o++] = c;
    }
    sys_copy(out, size, tmp, o);
}

#define SYS_DEPTH 12

enum np_status np_sys_xml_read(const char *text, size_t len, struct np_sys_node *node)
{
    char stack[SYS_DEPTH][48];
    size_t depth = 0, skipped = 0; /* skipped: open elements deeper than SYS_DEPTH */
    int in_gpu = 0, bad = 0, root = 0;
    size_t gpu_depth = 0;
    const char *p = text, *end = text + len, *text_start = NULL;
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt)
            break;
        if (lt + 3 < end && !memcmp(lt, "<!--", 4)) {
            const char *q = memmem(lt + 4, (size_t)(end - lt - 4), "-->", 3);
            p = q ? q + 3 : end;
            continue;
        }
        const char *gt = memchr(lt, '>', (size_t)(end - lt));
        if (!gt) {
            bad = 1;
            break;
        }
        const char *name = lt + 1;
        if (name < gt && (*name == '?' || *name == '!')) {
            p = gt + 1;
            continue;
        }
        int closing = name < gt && *name == '/';
        if (closing)
            name++;
        size_t nl = 0;
        while (name + nl < gt && name[nl] != ' ' && name[nl] != '\t' && name[nl] != '\n' && name[nl] != '\r' &&
               name[nl] != '/')
            nl++;
        int selfclose = !closing && gt > lt + 1 && gt[-1] == '/';
        if (closing) {
            if (skipped) {
                skipped--;
            } else if (depth && strlen(stack[depth - 1]) == nl && !memcmp(stack[depth - 1], name, nl)) {
                /* a leaf: text between its start and end tags */
                if (text_start && in_gpu && depth > gpu_depth) {
                    char path[SYS_DEPTH * 49] = "", v[256];
                    size_t o = 0;
                    for (size_t i = gpu_depth; i < depth; i++)
                        o += (size_t)snprintf(path + o, sizeof path - o, "%s%s", i > gpu_depth ? "/" : "",
                                              stack[i]);
                    sys_xml_text(v, sizeof v, text_start, (size_t)(lt - text_start));
                    sys_gpu_leaf(&node->gpus[node->ngpus - 1], path, v);
                } else if (text_start && depth == 2 && root) {
                    char v[64];
                    sys_xml_text(v, sizeof v, text_start, (size_t)(lt - text_start));
                    if (!strcmp(stack[1], "driver_version"))
                        sys_copy(node->driver, sizeof node->driver, v, strlen(v));
                    else if (!strcmp(stack[1], "cuda_version"))
                        sys_copy(node->cuda, sizeof node->cuda, v, strlen(v));
                }
                depth--;
                if (in_gpu && depth < gpu_depth)
                    in_gpu = 0;
            } else {
                bad = 1; /* an end tag that closes nothing open: skip it */
            }
            text_start = NULL;
        } else if (!selfclose) {
            if (depth >= SYS_DEPTH || nl >= sizeof stack[0]) {
                skipped++;
            } else {
                memcpy(stack[depth], name, nl);
                stack[depth][nl] = '\0';
                if (depth == 0 && !strcmp(stack[0], "nvidia_smi_log"))
                    root = 1;
                if (root && depth == 1 && !strcmp(stack[1], "gpu")) {
                    struct np_sys_gpu *g = realloc(node->gpus, (node->ngpus + 1) * sizeof *g);
                    if (!g)
                        return NP_E_NOMEM;
                    node->gpus = g;
                    sys_gpu_init(&g[node->ngpus], (int)node->ngpus);
                    node->ngpus++;
                    in_gpu = 1;
                    gpu_depth = 2;
                }
                depth++;
            }
            text_start = gt + 1;
        }
        p = gt + 1;
    }
    if (!root) {
        if (np_text_notef(&node->notes, "%s: nvidia-smi -q -x output without <nvidia_smi_log>", node->name))
            return NP_E_NOMEM;
    } else if (bad || depth) {
        if (np_text_notef(&node->notes, "%s: nvidia-smi -q -x output %s (read as far as it goes)", node->name,
                     depth ? "truncated" : "malformed"))
            return NP_E_NOMEM;
    }
    return NP_OK;
}

/* ---- host.txt --------------------------------------------------------------------------------------- */

/* The first line of [s, e) starting (after blanks) with key, its value after key into out. */
static int sys_line_value(const char *s, const char *e, const char *key, char *out, size_t size)
{
    size_t kl = strlen(key);
    for (const char *l = s; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        const char *b = l;
        while (b < le && (*b == ' ' || *b == '\t'))
            b++;
        if ((size_t)(le - b) >= kl && !strncasecmp(b, key, kl)) {
            sys_copy(out, size, b + kl, (size_t)(le - b - kl));
            return 1;
        }
        l = nl ? nl + 1 : e;
    }
    return 0;
}

/* `nvidia-smi nvlink -s`: "GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)" then "\t Link 0: 26.562 GB/s" or
 * "\t Link 3: <inactive>" per link. */
static void sys_host_nvlink(struct np_sys_node *node, const char *s, const char *e)
{
    long gpu = -1;
    for (const char *l = s; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        char line[256];
        sys_copy(line, sizeof line, l, (size_t)(le - l));
        if (!strncmp(line, "GPU ", 4)) {
            gpu = strtol(line + 4, NULL, 10);
        } else if (!strncmp(line, "Link ", 5) && gpu >= 0) {
            for (size_t i = 0; i < node->ngpus; i++) {
                struct np_sys_gpu *g = &node->gpus[i];
                if (g->index != gpu)
                    continue;
                int down = strstr(line, "inactive") || strstr(line, "Inactive") || strstr(line, "down") ||
                           strstr(line, "Down");
                if (g->nvlink_down < 0)
                    g->nvlink_down = 0;
                if (g->nvlink_up < 0)
                    g->nvlink_up = 0;
                if (down)
                    g->nvlink_down++;
                else if (strstr(line, "GB/s"))
                    g->nvlink_up++;
            }
        }
        l = nl ? nl + 1 : e;
    }
}

/* ibstat: "CA 'mlx5_0'", "\t\tState: Active", "\t\tRate: 400" -> "mlx5_0 Active 400". */
static void sys_host_ib(struct np_sys_node *node, const char *s, const char *e)
{
    char ca[64] = "", state[32] = "";
    size_t o = strlen(node->ib);
    for (const char *l = s; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        char line[160];
        sys_copy(line, sizeof line, l, (size_t)(le - l));
        if (!strncmp(line, "CA '", 4)) {
            sys_copy(ca, sizeof ca, line + 4, strcspn(line + 4, "'"));
            state[0] = '\0';
        } else if (!strncmp(line, "State:", 6)) {
            sys_copy(state, sizeof state, line + 6, strlen(line + 6));
        } else if (!strncmp(line, "Rate:", 5) && ca[0] && o + 1 < sizeof node->ib) {
            char rate[16];
            sys_copy(rate, sizeof rate, line + 5, strlen(line + 5));
            int w = snprintf(node->ib + o, sizeof node->ib - o, "%s%s %s %s", o ? "; " : "", ca, state, rate);
            if (w > 0)
                o = (size_t)w + o < sizeof node->ib ? o + (size_t)w : sizeof node->ib - 1;
            ca[0] = '\0';
        }
        l = nl ? nl + 1 : e;
    }
}

/* KEY=VALUE or "KEY: VALUE" lines naming the versions and the image the job reports. */
static void sys_host_versions(struct np_sys_node *node, const char *s, const char *e)
{
    static const struct { const char *key; size_t off, size; } keys[] = {
        {"NCCL_VERSION", offsetof(struct np_sys_node, nccl), sizeof node->nccl},
        {"NCCL", offsetof(struct np_sys_node, nccl), sizeof node->nccl},
        {"CUDNN_VERSION", offsetof(struct np_sys_node, cudnn), sizeof node->cudnn},
        {"cuDNN", offsetof(struct np_sys_node, cudnn), sizeof node->cudnn},
        {"TRANSFORMER_ENGINE_VERSION", offsetof(struct np_sys_node, te), sizeof node->te},
        {"Transformer Engine", offsetof(struct np_sys_node, te), sizeof node->te},
        {"TE", offsetof(struct np_sys_node, te), sizeof node->te},
        {"CUDA_VERSION", offsetof(struct np_sys_node, cuda_runtime), sizeof node->cuda_runtime},
        {"CUDA", offsetof(struct np_sys_node, cuda_runtime), sizeof node->cuda_runtime},
        {"IMAGE", offsetof(struct np_sys_node, image), sizeof node->image},
        {"image", offsetof(struct np_sys_node, image), sizeof node->image},
        {"CONTAINER_IMAGE", offsetof(struct np_sys_node, image), sizeof node->image},
        {"SLURM_CONTAINER_IMAGE", offsetof(struct np_sys_node, image), sizeof node->image},
        {"digest", offsetof(struct np_sys_node, image), sizeof node->image},
    };
    for (const char *l = s; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        char line[320];
        sys_copy(line, sizeof line, l, (size_t)(le - l));
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            size_t kl = strlen(keys[k].key);
            if (strncasecmp(line, keys[k].key, kl) || (line[kl] != '=' && line[kl] != ':' && line[kl] != ' '))
                continue;
            const char *v = line + kl;
            while (*v == '=' || *v == ':' || *v == ' ')
                v++;
            char *dst = (char *)node + keys[k].off;
            if (*v && !dst[0])
                sys_copy(dst, keys[k].size, v, strlen(v));
            else if (*v && keys[k].off == offsetof(struct np_sys_node, image) && strstr(v, "sha256:") &&
                     !strstr(dst, "sha256:")) {
                size_t dl = strlen(dst);
                snprintf(dst + dl, keys[k].size - dl, " %s", v);
            }
            break;
        }
        l = nl ? nl + 1 : e;
    }
}

enum np_status np_sys_host_read(const char *text, size_t len, struct np_sys_node *node)
{
    const char *end = text + len, *p = text;
    size_t sections = 0;
    while (p < end) {
        /* the next "### " at a line start */
        const char *h = p;
        while (h < end && !((h == text || h[-1] == '\n') && end - h >= 4 && !memcmp(h, "### ", 4))) {
            const char *nl = memchr(h, '\n', (size_t)(end - h));
            h = nl ? nl + 1 : end;
        }
        if (h >= end)
            break;
        const char *hl = memchr(h, '\n', (size_t)(end - h));
        const char *body = hl ? hl + 1 : end;
        char cmd[160];
        sys_copy(cmd, sizeof cmd, h + 4, (size_t)((hl ? hl : end) - h - 4));
        const char *b = body;
        while (b < end && !((b == text || b[-1] == '\n') && end - b >= 4 && !memcmp(b, "### ", 4))) {
            const char *nl = memchr(b, '\n', (size_t)(end - b));
            b = nl ? nl + 1 : end;
        }
        sections++;
        if (!strncmp(cmd, "uname", 5)) {
            char line[256], *save = NULL;
            sys_copy(line, sizeof line, body, (size_t)(b - body));
            line[strcspn(line, "\n")] = '\0';
            char *t1 = strtok_r(line, " ", &save), *t2 = t1 ? strtok_r(NULL, " ", &save) : NULL;
            char *t3 = t2 ? strtok_r(NULL, " ", &save) : NULL;
            if (t3 && cmd[5] != ' ') /* "uname -r" alone prints the release */
                sys_copy(node->kernel, sizeof node->kernel, t3, strlen(t3));
            else if (t1 && !strcmp(cmd, "uname -r"))
                sys_copy(node->kernel, sizeof node->kernel, t1, strlen(t1));
            else if (t3)
                sys_copy(node->kernel, sizeof node->kernel, t3, strlen(t3));
        } else if (!strncmp(cmd, "lscpu", 5)) {
            sys_line_value(body, b, "Model name:", node->cpu_model, sizeof node->cpu_model);
        } else if (strstr(cmd, "governor")) {
            char v[64];
            sys_copy(v, sizeof v, body, (size_t)(b - body));
            v[strcspn(v, " \t\n")] = '\0';
            sys_copy(node->governor, sizeof node->governor, v, strlen(v));
        } else if (!strncmp(cmd, "numactl", 7)) {
            char v[64];
            if (sys_line_value(body, b, "available:", v, sizeof v))
                node->numa_nodes = atoi(v);
        } else if (strstr(cmd, "nvlink") && strstr(cmd, "-s")) {
            sys_host_nvlink(node, body, b);
        } else if (!strncmp(cmd, "ibstat", 6)) {
            sys_host_ib(node, body, b);
        } else {
            sys_host_versions(node, body, b);
        }
        p = b;
    }
    if (!sections && np_text_notef(&node->notes, "%s: host.txt has no \"### <command>\" section", node->name))
        return NP_E_NOMEM;
    return NP_OK;
}

void np_sys_node_free(struct np_sys_node *node)
{
    if (!node)
        return;
    free(node->gpus);
    free(node->notes);
    memset(node, 0, sizeof *node);
}

/* ---- the run folder --------------------------------------------------------------------------------- */

static void sys_node_init(struct np_sys_node *n, const char *name)
{
    memset(n, 0, sizeof *n);
    sys_copy(n->name, sizeof n->name, name, strlen(name));
    n->snapshot_s = NAN;
    n->numa_nodes = -1;
}

/* Read dir/name whole into *buf (NULL when absent: *missing 1; unreadable: a note). */
static enum np_status sys_slurp(const char *dir, const char *name, char **buf, size_t *len, int *missing,
                                char **notes, const char *node)
{
    char path[4096];
    *buf = NULL;
    *len = 0;
    *missing = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    if (lstat(path, &st) != 0) {
        *missing = 1;
        return NP_OK;
    }
    struct np_error err = {0};
    unsigned char *b = NULL;
    enum np_status s = np_file_read_all(path, SYS_FILE_MAX, &b, len, &err);
    if (s == NP_E_NOMEM)
        return s;
    if (s != NP_OK) {
        *missing = 1;
        return np_text_notef(notes, "%s: %s not read (%s)", node, name, err.text) ? NP_E_NOMEM : NP_OK;
    }
    *buf = (char *)b;
    return NP_OK;
}

/* The file name of a runfiles.h path ("system/NODE/host.txt" -> "host.txt"). */
static const char *sys_leaf(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static enum np_status sys_node_read(const char *dir, struct np_sys_node *n)
{
    char *buf;
    size_t len;
    int miss_xml, miss_host, miss_status;
    enum np_status s = sys_slurp(dir, sys_leaf(NP_RUNFILE_SYS_STATUS), &buf, &len, &miss_status, &n->notes, n->name);
    if (s)
        return s;
    if (buf) {
        sys_copy(n->status_line, sizeof n->status_line, buf, strcspn(buf, "\n"));
        if (!strncmp(n->status_line, "ok ", 3))
            n->snapshot_s = sys_num(n->status_line + 3);
        free(buf);
    }
    if ((s = sys_slurp(dir, sys_leaf(NP_RUNFILE_SYS_XML), &buf, &len, &miss_xml, &n->notes, n->name)))
        return s;
    if (buf) {
        s = np_sys_xml_read(buf, len, n);
        free(buf);
        if (s)
            return s;
    }
    if ((s = sys_slurp(dir, sys_leaf(NP_RUNFILE_SYS_HOST), &buf, &len, &miss_host, &n->notes, n->name)))
        return s;
    if (buf) {
        s = np_sys_host_read(buf, len, n);
        free(buf);
        if (s)
            return s;
    }
    int said_missing = !strncmp(n->status_line, "missing", 7);
    if (miss_xml || !n->ngpus)
        n->status = miss_host ? NP_SYS_MISSING : NP_SYS_PARTIAL;
    else
        n->status = miss_host || (n->status_line[0] && strncmp(n->status_line, "ok", 2)) || n->notes
                        ? NP_SYS_PARTIAL
                        : NP_SYS_OK;
    if (said_missing && !n->ngpus)
        n->status = miss_host ? NP_SYS_MISSING : NP_SYS_PARTIAL;
    if (n->status_line[0] && strncmp(n->status_line, "ok", 2)) {
        if (np_text_notef(&n->notes, "%s: %s", n->name, n->status_line))
            return NP_E_NOMEM;
    } else if (miss_xml && !said_missing) {
        if (np_text_notef(&n->notes, "%s: no %s", n->name, sys_leaf(NP_RUNFILE_SYS_XML)))
            return NP_E_NOMEM;
    }
    return NP_OK;
}

static int sys_node_cmp(const void *a, const void *b)
{
    return strcmp(((const struct np_sys_node *)a)->name, ((const struct np_sys_node *)b)->name);
}

static int sys_name_ok(const char *name)
{
    return name[0] && name[0] != '.' && strlen(name) < NP_SYS_NAME;
}

enum np_status np_system_read_window(const char *run_dir, double t0, double t1, struct np_system *sys,
                                     struct np_error *err)
{
    memset(sys, 0, sizeof *sys);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/system", run_dir);
    DIR *d = opendir(dir);
    enum np_status s = NP_OK;
    if (d) {
        sys->snapshot = 1;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!sys_name_ok(de->d_name))
                continue;
            char nd[4096 + NP_SYS_NAME + 2];
            struct stat st;
            snprintf(nd, sizeof nd, "%s/%s", dir, de->d_name);
            if (lstat(nd, &st) || !S_ISDIR(st.st_mode))
                continue;
            if (sys->nnodes >= 100000)
                break;
            struct np_sys_node *nn = realloc(sys->nodes, (sys->nnodes + 1) * sizeof *nn);
            if (!nn) {
                s = NP_E_NOMEM;
                break;
            }
            sys->nodes = nn;
            sys_node_init(&nn[sys->nnodes], de->d_name);
            sys->nnodes++;
            if ((s = sys_node_read(nd, &nn[sys->nnodes - 1])))
                break;
        }
        closedir(d);
        if (!s && sys->nnodes)
            qsort(sys->nodes, sys->nnodes, sizeof *sys->nodes, sys_node_cmp);
    }
    if (!s)
        s = np_telemetry_read_dir(run_dir, t0, t1, sys);
    /* what the telemetry file does not say, its snapshot does: the GPU's maximum SM clock, its power limit */
    for (size_t i = 0; !s && i < sys->ntele; i++) {
        struct np_gpu_telemetry *t = &sys->tele[i];
        for (size_t j = 0; j < sys->nnodes; j++) {
            const struct np_sys_node *n = &sys->nodes[j];
            if (strcmp(n->name, t->node))
                continue;
            for (size_t k = 0; k < n->ngpus; k++)
                if (n->gpus[k].index == t->index) {
                    if (isnan(t->max_sm_mhz))
                        t->max_sm_mhz = n->gpus[k].max_sm_mhz;
                    if (isnan(t->power_limit_w))
                        t->power_limit_w = n->gpus[k].power_limit_w;
                }
        }
    }
    size_t gpus = 0;
    for (size_t i = 0; i < sys->nnodes; i++)
        gpus += sys->nodes[i].ngpus;
    if (!s && !gpus) /* no folder, or the job found no nvidia-smi on any node: its notes say which */
        s = np_text_notef(&sys->notes, "no system snapshot") ? NP_E_NOMEM : NP_OK;
    if (s) {
        np_system_free(sys);
        return np_error_set(err, s, run_dir, 0, 0, "out of memory reading the system snapshot");
    }
    return NP_OK;
}

enum np_status np_system_read(const char *run_dir, struct np_system *sys, struct np_error *err)
{
    return np_system_read_window(run_dir, NAN, NAN, sys, err);
}

void np_system_free(struct np_system *sys)
{
    if (!sys)
        return;
    for (size_t i = 0; i < sys->nnodes; i++)
        np_sys_node_free(&sys->nodes[i]);
    free(sys->nodes);
    free(sys->tele);
    free(sys->notes);
    memset(sys, 0, sizeof *sys);
}

/* ---- what differs ----------------------------------------------------------------------------------- */

/* The most common of n strings (ties: the first met); "" when none is set. */
static const char *sys_mode_str(const char *const *v, size_t n)
{
    const char *best = "";
    size_t bc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i][0])
            continue;
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += !strcmp(v[i], v[j]);
        if (c > bc)
            bc = c, best = v[i];
    }
    return best;
}

/* The most common of n numbers (NAN skipped; equal within 0.5); NAN when none. */
static double sys_mode_num(const double *v, size_t n)
{
    double best = NAN;
    size_t bc = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += !isnan(v[j]) && fabs(v[i] - v[j]) < 0.5;
        if (c > bc)
            bc = c, best = v[i];
    }
    return best;
}

enum sys_what { SW_DRIVER, SW_CUDA, SW_KERNEL, SW_IMAGE, SW_NCCL, SW_PRODUCT, SW_POWER, SW_MAXSM, SW_APPSM };

static const struct sys_attr {
    enum sys_what what;
    const char *label;
    const char *unit;   /* numbers: " W", " MHz" */
    int per_gpu;
} sys_attrs[] = {
    {SW_DRIVER, "driver", NULL, 0},        {SW_CUDA, "CUDA", NULL, 0},
    {SW_KERNEL, "kernel", NULL, 0},        {SW_IMAGE, "image", NULL, 0},
    {SW_NCCL, "NCCL", NULL, 0},            {SW_PRODUCT, "GPU", NULL, 1},
    {SW_POWER, "power limit", " W", 1},    {SW_MAXSM, "max SM clock", " MHz", 1},
    {SW_APPSM, "application SM clock", " MHz", 1},
};

static const char *sys_node_str(const struct np_sys_node *n, enum sys_what w)
{
    switch (w) {
    case SW_DRIVER: return n->driver;
    case SW_CUDA: return n->cuda;
    case SW_KERNEL: return n->kernel;
    case SW_IMAGE: return n->image;
    case SW_NCCL: return n->nccl;
    default: return "";
    }
}

static double sys_gpu_num(const struct np_sys_gpu *g, enum sys_what w)
{
    return w == SW_POWER ? g->power_limit_w : w == SW_MAXSM ? g->max_sm_mhz : w == SW_APPSM ? g->app_sm_mhz : NAN;
}

/* The common value of attribute at over the nodes (nodes with a snapshot) into out. */
static void sys_common(const struct np_system *s, const struct sys_attr *at, char *out, size_t size)
{
    out[0] = '\0';
    if (!s || !s->nnodes)
        return;
    size_t ng = 0;
    for (size_t i = 0; i < s->nnodes; i++)
        ng += s->nodes[i].ngpus;
    if (!at->per_gpu) {
        const char **v = calloc(s->nnodes, sizeof *v);
        if (!v)
            return;
        for (size_t i = 0; i < s->nnodes; i++)
            v[i] = sys_node_str(&s->nodes[i], at->what);
        snprintf(out, size, "%s", sys_mode_str(v, s->nnodes));
        free(v);
    } else if (at->what == SW_PRODUCT) {
        const char **v = calloc(ng + 1, sizeof *v);
        if (!v)
            return;
        size_t k = 0;
        for (size_t i = 0; i < s->nnodes; i++)
            for (size_t j = 0; j < s->nodes[i].ngpus; j++)
                v[k++] = s->nodes[i].gpus[j].product;
        snprintf(out, size, "%s", sys_mode_str(v, k));
        free(v);
    } else {
        double *v = calloc(ng + 1, sizeof *v);
        if (!v)
            return;
        size_t k = 0;
        for (size_t i = 0; i < s->nnodes; i++)
            for (size_t j = 0; j < s->nodes[i].ngpus; j++)
                v[k++] = sys_gpu_num(&s->nodes[i].gpus[j], at->what);
        double m = sys_mode_num(v, k);
        if (!isnan(m))
            snprintf(out, size, "%.0f%s", m, at->unit);
        free(v);
    }
}

/* Telemetry means over every GPU of s: power, SM clock, HW slowdown share; NAN when none. */
static void sys_tele_means(const struct np_system *s, double *power, double *sm, double *hw)
{
    double sp = 0, ss = 0, sh = 0;
    size_t np = 0, ns = 0, nh = 0;
    for (size_t i = 0; s && i < s->ntele; i++) {
        const struct np_gpu_telemetry *t = &s->tele[i];
        if (!isnan(t->mean_power_w))
            sp += t->mean_power_w, np++;
        if (!isnan(t->mean_sm_mhz))
            ss += t->mean_sm_mhz, ns++;
        if (!isnan(t->hw_slowdown))
            sh += t->hw_slowdown, nh++;
    }
    *power = np ? sp / (double)np : NAN;
    *sm = ns ? ss / (double)ns : NAN;
    *hw = nh ? sh / (double)nh : NAN;
}

size_t np_system_diff(const struct np_system *a, const struct np_system *b, np_system_diff_fn fn, void *ctx)
{
    size_t count = 0;
    char what[640];
    for (size_t i = 0; i < sizeof sys_attrs / sizeof *sys_attrs; i++) {
        char va[256], vb[256];
        sys_common(a, &sys_attrs[i], va, sizeof va);
        sys_common(b, &sys_attrs[i], vb, sizeof vb);
        if (!va[0] || !vb[0] || !strcmp(va, vb))
            continue;
        snprintf(what, sizeof what, "%s %s -> %s", sys_attrs[i].label, va, vb);
        fn(ctx, "", what);
        count++;
    }
    double pa, sa, ha, pb, sb, hb;
    sys_tele_means(a, &pa, &sa, &ha);
    sys_tele_means(b, &pb, &sb, &hb);
    if (!isnan(pa) && !isnan(pb) && pa > 0 && fabs(pb / pa - 1) >= 0.02) {
        snprintf(what, sizeof what, "mean power %.0f -> %.0f W/GPU (%+.1f %%)", pa, pb, (pb / pa - 1) * 100);
        fn(ctx, "", what), count++;
    }
    if (!isnan(sa) && !isnan(sb) && sa > 0 && fabs(sb / sa - 1) >= 0.02) {
        snprintf(what, sizeof what, "mean SM clock %.0f -> %.0f MHz (%+.1f %%)", sa, sb, (sb / sa - 1) * 100);
        fn(ctx, "", what), count++;
    }
    if (!isnan(ha) && !isnan(hb) && fabs(hb - ha) >= 0.01) {
        snprintf(what, sizeof what, "HW slowdown %.0f %% -> %.0f %% of the samples", ha * 100, hb * 100);
        fn(ctx, "", what), count++;
    }
    return count;
}

static double sys_median(double *v, size_t n)
{
    /* insertion sort: GPUs of one run, a few thousand at most */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return !n ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whether telemetry t stands out against the median GPU's SM clock med and power-cap share medcap: its SM clock
 * below 90 % of med, or a share of HW slowdown, thermal or power-brake slowdown of at least 5 % (never normal under
 * load), or a power-cap share 25 points above the median's (or any with a slow clock).  Fills desc with
 * "SM clock 1410 of 1980 MHz (median GPU 1980 MHz), HW slowdown 38 % of the window"; 0 when it does not. */
static int sys_tele_stands_out(const struct np_gpu_telemetry *t, double med, double medcap, int many, char *desc,
                               size_t size)
{
    static const struct { size_t off; const char *name; } reasons[] = {
        {offsetof(struct np_gpu_telemetry, hw_slowdown), "HW slowdown"},
        {offsetof(struct np_gpu_telemetry, thermal), "thermal slowdown"},
        {offsetof(struct np_gpu_telemetry, power_brake), "HW power brake"},
        {offsetof(struct np_gpu_telemetry, sw_power_cap), "SW power cap"},
    };
    int slow = many && !isnan(med) && !isnan(t->mean_sm_mhz) && t->mean_sm_mhz < 0.9 * med;
    char why[320] = "";
    size_t o = 0;
    for (size_t r = 0; r < sizeof reasons / sizeof *reasons; r++) {
        double sh = *(const double *)((const char *)t + reasons[r].off);
        if (isnan(sh) || sh < 0.05)
            continue;
        if (reasons[r].off == offsetof(struct np_gpu_telemetry, sw_power_cap) &&
            !(slow || (!isnan(medcap) && sh >= medcap + 0.25)))
            continue;
        o += (size_t)snprintf(why + o, sizeof why - o, ", %s %.0f %% of the window", reasons[r].name, sh * 100);
        if (o >= sizeof why)
            o = sizeof why - 1;
    }
    if (!slow && !why[0])
        return 0;
    char clock[160] = "";
    if (!isnan(t->mean_sm_mhz) && !isnan(t->max_sm_mhz))
        snprintf(clock, sizeof clock, "SM clock %.0f of %.0f MHz", t->mean_sm_mhz, t->max_sm_mhz);
    else if (!isnan(t->mean_sm_mhz))
        snprintf(clock, sizeof clock, "SM clock %.0f MHz", t->mean_sm_mhz);
    if (slow)
        snprintf(clock + strlen(clock), sizeof clock - strlen(clock), " (median GPU %.0f MHz)", med);
    snprintf(desc, size, "%s%s", clock, clock[0] ? why : why + (why[0] ? 2 : 0));
    return 1;
}

/* The GPUs whose telemetry stands out (sys_tele_stands_out), a node once when all its GPUs do. */
static size_t sys_tele_outliers(const struct np_system *s, np_system_diff_fn fn, void *ctx)
{
    if (!s->ntele)
        return 0;
    double *v = malloc(s->ntele * sizeof *v), *w = malloc(s->ntele * sizeof *w);
    size_t n = 0, m = 0, count = 0;
    if (!v || !w) {
        free(v);
        free(w);
        return 0;
    }
    for (size_t i = 0; i < s->ntele; i++) {
        if (!isnan(s->tele[i].mean_sm_mhz))
            v[n++] = s->tele[i].mean_sm_mhz;
        if (!isnan(s->tele[i].sw_power_cap))
            w[m++] = s->tele[i].sw_power_cap;
    }
    double med = sys_median(v, n), medcap = sys_median(w, m);
    free(v);
    free(w);
    int many = s->ntele > 1;
    char desc[512], what[700];
    for (size_t a = 0, b; a < s->ntele; a = b) { /* tele is sorted by node: [a, b) is one node's */
        size_t out = 0;
        for (b = a; b < s->ntele && !strcmp(s->tele[b].node, s->tele[a].node); b++)
            out += (size_t)sys_tele_stands_out(&s->tele[b], med, medcap, many, desc, sizeof desc);
        if (out == b - a && out > 1 && b - a < s->ntele) { /* the whole node (not the whole run) */
            struct np_gpu_telemetry agg = s->tele[a];
            double *fields[] = {&agg.mean_sm_mhz, &agg.max_sm_mhz, &agg.mean_power_w, &agg.hw_slowdown,
                                &agg.sw_power_cap, &agg.thermal, &agg.power_brake};
            for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
                size_t off = (size_t)((char *)fields[f] - (char *)&agg);
                double sum = 0;
                size_t k = 0;
                for (size_t i = a; i < b; i++) {
                    double x = *(const double *)((const char *)&s->tele[i] + off);
                    if (!isnan(x))
                        sum += x, k++;
                }
                *fields[f] = k ? sum / (double)k : NAN;
            }
            sys_tele_stands_out(&agg, med, medcap, many, desc, sizeof desc);
            snprintf(what, sizeof what, "%s: %s on its %zu GPUs, %.0f W/GPU — likely straggler", agg.node, desc,
                     b - a, agg.mean_power_w);
            if (isnan(agg.mean_power_w))
                snprintf(what, sizeof what, "%s: %s on its %zu GPUs — likely straggler", agg.node, desc, b - a);
            fn(ctx, agg.node, what);
            count++;
            continue;
        }
        for (size_t i = a; i < b; i++) {
            const struct np_gpu_telemetry *t = &s->tele[i];
            if (!sys_tele_stands_out(t, med, medcap, many, desc, sizeof desc))
                continue;
            snprintf(what, sizeof what, "%s GPU %d: %s — likely straggler", t->node, t->index, desc);
            fn(ctx, t->node, what);
            count++;
        }
    }
    return count;
}

/* Nodes whose value of a node attribute differs from the others'. */
static size_t sys_node_outliers(const struct np_system *s, const struct sys_attr *at, np_system_diff_fn fn,
                                void *ctx)
{
    char common[256], what[1024];
    size_t count = 0;
    sys_common(s, at, common, sizeof common);
    if (!common[0] || s->nnodes < 2)
        return 0;
    for (size_t i = 0; i < s->nnodes; i++) {
        const char *v = sys_node_str(&s->nodes[i], at->what);
        if (!v[0] || !strcmp(v, common))
            continue;
        snprintf(what, sizeof what, "%s: %s %s (the others %s)", s->nodes[i].name, at->label, v, common);
        fn(ctx, s->nodes[i].name, what);
        count++;
    }
    return count;
}

/* GPUs whose number differs from the common one: a whole node said once, else each GPU. */
static size_t sys_gpu_outliers(const struct np_system *s, const struct sys_attr *at, np_system_diff_fn fn,
                               void *ctx)
{
    char common[64], what[512];
    size_t count = 0;
    sys_common(s, at, common, sizeof common);
    if (!common[0])
        return 0;
    double c = sys_num(common);
    for (size_t i = 0; i < s->nnodes; i++) {
        const struct np_sys_node *n = &s->nodes[i];
        size_t off = 0, known = 0;
        double first = NAN;
        int same = 1;
        for (size_t j = 0; j < n->ngpus; j++) {
            double v = sys_gpu_num(&n->gpus[j], at->what);
            if (isnan(v))
                continue;
            known++;
            if (fabs(v - c) >= 0.5) {
                if (!off)
                    first = v;
                else if (fabs(v - first) >= 0.5)
                    same = 0;
                off++;
            }
        }
        if (!off)
            continue;
        if (off == known && same) {
            snprintf(what, sizeof what, "%s: %s %.0f%s on its %zu GPUs (the others %s)", n->name, at->label, first,
                     at->unit, off, common);
            fn(ctx, n->name, what);
            count++;
            continue;
        }
        for (size_t j = 0; j < n->ngpus; j++) {
            double v = sys_gpu_num(&n->gpus[j], at->what);
            if (isnan(v) || fabs(v - c) < 0.5)
                continue;
            snprintf(what, sizeof what, "%s GPU %d: %s %.0f%s (the others %s)", n->name, n->gpus[j].index,
                     at->label, v, at->unit, common);
            fn(ctx, n->name, what);
            count++;
        }
    }
    return count;
}

/* Health of each GPU: ECC errors, remaps, retirements, NVLink down, a narrowed PCIe link, MIG. */
static size_t sys_health(const struct np_system *s, np_system_diff_fn fn, void *ctx)
{
    size_t count = 0;
    char what[512];
    for (size_t i = 0; i < s->nnodes; i++) {
        const struct np_sys_node *n = &s->nodes[i];
        for (size_t j = 0; j < n->ngpus; j++) {
            const struct np_sys_gpu *g = &n->gpus[j];
            char h[400] = "";
            size_t o = 0;
#define SYS_H(...)                                                                                                 \
    do {                                                                                                           \
        if (o < sizeof h)                                                                                          \
            o += (size_t)snprintf(h + o, sizeof h - o, "%s", o ? ", " : "");                                       \
        if (o < sizeof h)                                                                                          \
            o += (size_t)snprintf(h + o, sizeof h - o, __VA_ARGS__);                                               \
    } while (0)
            if (g->ecc_volatile_dbe > 0)
                SYS_H("%ld uncorrectable ECC errors since boot", g->ecc_volatile_dbe);
            else if (g->ecc_aggregate_dbe > 0)
                SYS_H("%ld uncorrectable ECC errors (lifetime)", g->ecc_aggregate_dbe);
            if (g->ecc_volatile_sbe > 0)
                SYS_H("%ld correctable ECC errors since boot", g->ecc_volatile_sbe);
            if (g->remap_pending == 1)
                SYS_H("a row remap pending (needs a GPU reset)");
            if (g->remap_failure == 1)
                SYS_H("a row remap failed");
            if (g->retired_pending == 1)
                SYS_H("a page retirement pending");
            if (g->nvlink_down > 0)
                SYS_H("%d NVLink link%s down", g->nvlink_down, g->nvlink_down == 1 ? "" : "s");
            if (g->pcie_width > 0 && g->pcie_max_width > 0 && g->pcie_width < g->pcie_max_width)
                SYS_H("PCIe link x%d of x%d", g->pcie_width, g->pcie_max_width);
            if (g->mig_mode == 1)
                SYS_H("MIG enabled");
#undef SYS_H
            if (!h[0])
                continue;
            snprintf(what, sizeof what, "%s GPU %d: %s", n->name, g->index, h);
            fn(ctx, n->name, what);
            count++;
        }
    }
    return count;
}

size_t np_system_outliers(const struct np_system *sys, np_system_diff_fn fn, void *ctx)
{
    size_t count = 0;
    for (size_t i = 0; i < sizeof sys_attrs / sizeof *sys_attrs; i++) {
        const struct sys_attr *at = &sys_attrs[i];
        if (at->what == SW_PRODUCT)
            continue;
        count += at->per_gpu ? sys_gpu_outliers(sys, at, fn, ctx) : sys_node_outliers(sys, at, fn, ctx);
    }
    count += sys_health(sys, fn, ctx);
    count += sys_tele_outliers(sys, fn, ctx);
    return count;
}

struct sys_buf {
    char *buf;
    size_t size, len;
};

static void sys_text_add(void *ctx, const char *node, const char *what)
{
    struct sys_buf *b = ctx;
    (void)node;
    if (b->len + 1 >= b->size)
        return;
    int w = snprintf(b->buf + b->len, b->size - b->len, "%s%s", b->len ? "; " : "", what);
    if (w > 0)
        b->len = b->len + (size_t)w < b->size ? b->len + (size_t)w : b->size - 1;
}

void np_system_text(const struct np_system *sys, char *buf, size_t size)
{
    if (!size)
        return;
    buf[0] = '\0';
    struct sys_buf b = {buf, size, 0};
    np_system_outliers(sys, sys_text_add, &b);
    if (sys->notes)
        sys_text_add(&b, "", sys->notes);
    for (size_t i = 0; i < sys->nnodes; i++)
        if (sys->nodes[i].notes)
            sys_text_add(&b, sys->nodes[i].name, sys->nodes[i].notes);
}
