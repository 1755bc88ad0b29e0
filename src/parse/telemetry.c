/* telemetry.c - GPU telemetry of a run: each node's `nvidia-smi --query-gpu=... --format=csv[,nounits] -lms N`
 * file read by its own header, reduced per GPU over a time window (the steady window where the log's
 * timestamps give one): mean power, SM clock against the GPU's maximum, temperature, and the share of the
 * samples under each clock event (throttle) reason.
 *
 * The format is nvidia-smi's (`nvidia-smi --help-query-gpu`): a header "timestamp, index, power.draw [W], ..."
 * (the unit in brackets, kept with nounits), fields separated by ", ", "[N/A]" and "[Not Supported]" for what a
 * GPU cannot say, the reasons as "Active"/"Not Active" and clocks_event_reasons.active as a hex bitmask whose
 * bits are NVML's (nvml.h nvmlClocksEventReason*: SwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown 0x20,
 * HwThermalSlowdown 0x40, HwPowerBrakeSlowdown 0x80); drivers before 535 name them clocks_throttle_reasons.*.
 * A real file of this shape: utkuozdemir/nvidia_gpu_exporter internal/exporter/testdata/query.txt (32a1cf4).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
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

#define TELE_FILE_MAX (1024u << 20) /* a day of 8 GPUs at 100 ms is ~600 MB */
#define TELE_GPUS 1024              /* GPUs kept per file */
#define TELE_COLS 128

enum tele_col {
    TC_NONE = 0, TC_TIME, TC_INDEX, TC_UUID, TC_BUS, TC_POWER, TC_PLIMIT, TC_SM, TC_MAXSM, TC_TEMP, TC_UTIL,
    TC_ACTIVE, TC_HW, TC_CAP, TC_HWTH, TC_SWTH, TC_BRAKE
};

/* Field names of --help-query-gpu, after clocks_throttle_reasons. is read as clocks_event_reasons. */
static const struct { const char *name; enum tele_col col; } tele_names[] = {
    {"timestamp", TC_TIME},
    {"index", TC_INDEX},
    {"uuid", TC_UUID},
    {"gpu_uuid", TC_UUID},
    {"pci.bus_id", TC_BUS},
    {"gpu_bus_id", TC_BUS},
    {"power.draw", TC_POWER},
    {"power.draw.average", TC_POWER},
    {"power.draw.instant", TC_POWER},
    {"power.limit", TC_PLIMIT},
    {"enforced.power.limit", TC_PLIMIT},
    {"clocks.sm", TC_SM},
    {"clocks.current.sm", TC_SM},
    {"clocks.max.sm", TC_MAXSM},
    {"clocks.max.sm_clock", TC_MAXSM},
    {"temperature.gpu", TC_TEMP},
    {"utilization.gpu", TC_UTIL},
    {"clocks_event_reasons.active", TC_ACTIVE},
    {"clocks_event_reasons.hw_slowdown", TC_HW},
    {"clocks_event_reasons.sw_power_cap", TC_CAP},
    {"clocks_event_reasons.hw_thermal_slowdown", TC_HWTH},
    {"clocks_event_reasons.sw_thermal_slowdown", TC_SWTH},
    {"clocks_event_reasons.hw_power_brake_slowdown", TC_BRAKE},
};

/* The reasons and their NVML bits, in the order of struct tele_acc's counters. */
static const struct { enum tele_col col; unsigned long bits; } tele_reasons[] = {
    {TC_HW, 0x8}, {TC_CAP, 0x4}, {TC_HWTH, 0x40}, {TC_SWTH, 0x20}, {TC_BRAKE, 0x80},
};
#define TELE_NREASONS (sizeof tele_reasons / sizeof *tele_reasons)

struct tele_acc {
    char key[64];                /* index, else uuid, else bus id */
    int index;
    char uuid[64];
    size_t samples;
    double sp, maxp, plimit, ss, maxsm, st, su;
    size_t np, ns, nt, nu;
    size_t r_on[TELE_NREASONS], r_known[TELE_NREASONS];
    size_t th_on, th_known;      /* hw or sw thermal */
    double t_first, t_last;
};

/* Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil). */
static long tele_days(long y, long m, long d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

double np_telemetry_time(const char *s, size_t len)
{
    char b[48];
    while (len && (*s == ' ' || *s == '[' || *s == '\t'))
        s++, len--;
    if (len < 19)
        return NAN;
    if (len >= sizeof b)
        len = sizeof b - 1;
    memcpy(b, s, len);
    b[len] = '\0';
    int y, mo, d, h, mi, n = 0;
    double sec;
    char s1, s2, sep;
    if (sscanf(b, "%4d%c%2d%c%2d%c%2d:%2d:%lf%n", &y, &s1, &mo, &s2, &d, &sep, &h, &mi, &sec, &n) != 9 ||
        !((s1 == '/' && s2 == '/') || (s1 == '-' && s2 == '-')) || (sep != ' ' && sep != 'T') || mo < 1 ||
        mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || !(sec >= 0 && sec < 61))
        return NAN;
    return (double)tele_days(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
}

/* A number at the start of a field ("612.34 W", "1980 MHz", "87 %", "612.34"); NAN for "[N/A]" and the like. */
static double tele_num(const char *v)
{
    if (!*v || *v == '[' || !strncasecmp(v, "N/A", 3))
        return NAN;
    char *end;
    double d = strtod(v, &end);
    return end == v || !isfinite(d) ? NAN : d;
}

/* A reason field: 1 "Active", 0 "Not Active", -1 unknown. */
static int tele_active(const char *v)
{
    if (!strcasecmp(v, "Active"))
        return 1;
    if (!strcasecmp(v, "Not Active"))
        return 0;
    return -1;
}

/* Split line (NUL-terminated, modified) at commas into f (trimmed); returns the count (at most max). */
static size_t tele_split(char *line, char **f, size_t max)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        size_t l = strlen(p);
        while (l && (p[l - 1] == ' ' || p[l - 1] == '\t' || p[l - 1] == '\r'))
            p[--l] = '\0';
        if (n < max)
            f[n] = p;
        n++;
        if (!c)
            break;
        p = c + 1;
    }
    return n;
}

static enum tele_col tele_col_of(const char *h)
{
    char name[96];
    size_t l = strcspn(h, " [");
    if (l >= sizeof name)
        return TC_NONE;
    memcpy(name, h, l);
    name[l] = '\0';
    static const char old[] = "clocks_throttle_reasons.";
    if (!strncmp(name, old, sizeof old - 1)) {
        char tmp[96];
        snprintf(tmp, sizeof tmp, "clocks_event_reasons.%s", name + sizeof old - 1);
        snprintf(name, sizeof name, "%s", tmp);
    }
    for (size_t i = 0; i < sizeof tele_names / sizeof *tele_names; i++)
        if (!strcmp(name, tele_names[i].name))
            return tele_names[i].col;
    return TC_NONE;
}

static void tele_acc_init(struct tele_acc *a)
{
    memset(a, 0, sizeof *a);
    a->index = -1;
    a->maxp = a->plimit = a->maxsm = a->t_first = a->t_last = NAN;
}

/* One sample's value of a numeric column (NAN: none) into a GPU's sums, means and peaks: both readers' one rule. */
static void tele_acc_add(struct tele_acc *a, enum tele_col col, double d)
{
    if (isnan(d))
        return;
    switch (col) {
    case TC_POWER:
        a->sp += d, a->np++;
        if (isnan(a->maxp) || d > a->maxp)
            a->maxp = d;
        break;
    case TC_PLIMIT:
        a->plimit = d;
        break;
    case TC_SM:
        a->ss += d, a->ns++;
        break;
    case TC_MAXSM:
        a->maxsm = d;
        break;
    case TC_TEMP:
        a->st += d, a->nt++;
        break;
    case TC_UTIL:
        a->su += d, a->nu++;
        break;
    default:
        break;
    }
}

/* The accumulated GPUs as records appended to *out. */
static enum np_status tele_emit(const struct tele_acc *acc, size_t nacc, const char *node,
                                struct np_gpu_telemetry **out, size_t *n)
{
    enum np_status st = NP_OK;
    if (nacc) {
        struct np_gpu_telemetry *o = realloc(*out, (*n + nacc) * sizeof *o);
        if (!o) {
            st = NP_E_NOMEM;
        } else {
            *out = o;
            for (size_t i = 0; i < nacc; i++) {
                const struct tele_acc *a = &acc[i];
                struct np_gpu_telemetry *t = &o[(*n)++];
                memset(t, 0, sizeof *t);
                snprintf(t->node, sizeof t->node, "%s", node);
                t->index = a->index;
                snprintf(t->uuid, sizeof t->uuid, "%s", a->uuid);
                t->samples = a->samples;
                t->mean_power_w = a->np ? a->sp / (double)a->np : NAN;
                t->max_power_w = a->maxp;
                t->power_limit_w = a->plimit;
                t->mean_sm_mhz = a->ns ? a->ss / (double)a->ns : NAN;
                t->max_sm_mhz = a->maxsm;
                t->mean_temp_c = a->nt ? a->st / (double)a->nt : NAN;
                t->mean_util_pct = a->nu ? a->su / (double)a->nu : NAN;
                t->hw_slowdown = a->r_known[0] ? (double)a->r_on[0] / (double)a->r_known[0] : NAN;
                t->sw_power_cap = a->r_known[1] ? (double)a->r_on[1] / (double)a->r_known[1] : NAN;
                t->thermal = a->th_known ? (double)a->th_on / (double)a->th_known : NAN;
                t->power_brake = a->r_known[4] ? (double)a->r_on[4] / (double)a->r_known[4] : NAN;
                t->t_first = a->t_first;
                t->t_last = a->t_last;
            }
        }
    }
    return st;
}

enum np_status np_telemetry_read(const char *text, size_t len, const char *node, double t0, double t1,
                                 struct np_gpu_telemetry **out, size_t *n, char **notes)
{
    enum tele_col cols[TELE_COLS];
    size_t ncols = 0, bad = 0, outside = 0, untimed = 0;
    int have_reason_col[TELE_NREASONS] = {0}, have_col[TC_BRAKE + 1] = {0};
    struct tele_acc *acc = NULL;
    size_t nacc = 0;
    char *line = NULL;
    size_t cap = 0;
    enum np_status st = NP_OK;
    int header = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = (size_t)((nl ? nl : end) - p);
        p = nl ? nl + 1 : end;
        if (ll + 1 > cap) {
            char *b = realloc(line, ll + 1);
            if (!b) {
                st = NP_E_NOMEM;
                break;
            }
            line = b;
            cap = ll + 1;
        }
        memcpy(line, p - ll - (nl ? 1 : 0), ll);
        line[ll] = '\0';
        char *f[TELE_COLS];
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '\r' || *s == '#')
            continue;
        /* a header (the first, or nvidia-smi restarted): it names at least one known field */
        if (!strncmp(s, "timestamp", 9) || !strncmp(s, "index", 5) || !strncmp(s, "uuid", 4) ||
            !strncmp(s, "power.draw", 10) || !strncmp(s, "pci.bus_id", 10) || !strncmp(s, "name", 4)) {
            size_t k = tele_split(s, f, TELE_COLS);
            ncols = k < TELE_COLS ? k : TELE_COLS;
            memset(have_col, 0, sizeof have_col);
            for (size_t i = 0; i < ncols; i++) {
                cols[i] = tele_col_of(f[i]);
                have_col[cols[i]] = 1;
            }
            for (size_t r = 0; r < TELE_NREASONS; r++)
                have_reason_col[r] = have_col[tele_reasons[r].col];
            header = 1;
            continue;
        }
        if (!header) {
            bad++;
            continue;
        }
        size_t k = tele_split(s, f, TELE_COLS);
        if (k != ncols) {
            bad++;
            continue;
        }
        double ts = NAN;
        char key[64] = "";
        int index = -1;
        const char *uuid = "";
        for (size_t i = 0; i < ncols; i++) {
            if (cols[i] == TC_TIME)
                ts = np_telemetry_time(f[i], strlen(f[i]));
            else if (cols[i] == TC_INDEX) {
                double d = tele_num(f[i]);
                if (!isnan(d) && d >= 0 && d < 1e6)
                    index = (int)d;
            } else if (cols[i] == TC_UUID)
                uuid = f[i];
        }
        if (!isnan(t0) || !isnan(t1)) {
            if (isnan(ts)) {
                untimed++;
                continue;
            }
            if ((!isnan(t0) && ts < t0) || (!isnan(t1) && ts > t1)) {
                outside++;
                continue;
            }
        }
        if (index >= 0)
            snprintf(key, sizeof key, "%d", index);
        else if (*uuid)
            snprintf(key, sizeof key, "%.63s", uuid);
        else
            for (size_t i = 0; i < ncols; i++)
                if (cols[i] == TC_BUS)
                    snprintf(key, sizeof key, "%.63s", f[i]);
        struct tele_acc *a = NULL;
        for (size_t i = 0; i < nacc; i++)
            if (!strcmp(acc[i].key, key)) {
                a = &acc[i];
                break;
            }
        if (!a) {
            if (nacc >= TELE_GPUS) {
                bad++;
                continue;
            }
            struct tele_acc *na = realloc(acc, (nacc + 1) * sizeof *na);
            if (!na) {
                st = NP_E_NOMEM;
                break;
            }
            acc = na;
            a = &acc[nacc++];
            tele_acc_init(a);
            snprintf(a->key, sizeof a->key, "%s", key);
            a->index = index >= 0 ? index : (int)(nacc - 1);
            snprintf(a->uuid, sizeof a->uuid, "%.63s", uuid);
        }
        a->samples++;
        if (!isnan(ts)) {
            if (isnan(a->t_first) || ts < a->t_first)
                a->t_first = ts;
            if (isnan(a->t_last) || ts > a->t_last)
                a->t_last = ts;
        }
        int on[TELE_NREASONS];
        for (size_t r = 0; r < TELE_NREASONS; r++)
            on[r] = -1;
        for (size_t i = 0; i < ncols; i++) {
            switch (cols[i]) {
            case TC_POWER:
            case TC_PLIMIT:
            case TC_SM:
            case TC_MAXSM:
            case TC_TEMP:
            case TC_UTIL:
                tele_acc_add(a, cols[i], tele_num(f[i]));
                break;
            case TC_ACTIVE: {
                char *e;
                unsigned long bits = strtoul(f[i], &e, 16);
                if (e == f[i] || *e)
                    break;
                for (size_t r = 0; r < TELE_NREASONS; r++)
                    if (!have_reason_col[r])
                        on[r] = (bits & tele_reasons[r].bits) != 0;
                break;
            }
            default:
                for (size_t r = 0; r < TELE_NREASONS; r++)
                    if (cols[i] == tele_reasons[r].col)
                        on[r] = tele_active(f[i]);
                break;
            }
        }
        for (size_t r = 0; r < TELE_NREASONS; r++)
            if (on[r] >= 0)
                a->r_known[r]++, a->r_on[r] += (size_t)on[r];
        /* thermal: hw or sw thermal slowdown (indexes 2 and 3) */
        if (on[2] >= 0 || on[3] >= 0)
            a->th_known++, a->th_on += on[2] == 1 || on[3] == 1;
    }
    free(line);
    if (!st)
        st = tele_emit(acc, nacc, node, out, n);
    free(acc);
    if (!st && !header && len && np_text_notef(notes, "%s: telemetry without nvidia-smi's CSV header (not read)", node))
        st = NP_E_NOMEM;
    if (!st && bad && header && np_text_notef(notes, "%s: %zu telemetry line%s not read", node, bad, bad == 1 ? "" : "s"))
        st = NP_E_NOMEM;
    if (!st && untimed && np_text_notef(notes, "%s: %zu telemetry sample%s without a timestamp left out of the window",
                                    node, untimed, untimed == 1 ? "" : "s"))
        st = NP_E_NOMEM;
    (void)outside;
    return st;
}

/* `dcgmi dmon -e 155,100,101,150,203,112 -d N` (the job's fields): a header "#Entity POWER SMCLK MMCLK TMPTR
 * GPUTL DVCCTR", a units line "ID W MHZ MHZ C ...", then "GPU 0  640.5  1980  2619  62  99  0" per GPU and sample,
 * whitespace-aligned, the header again every few dozen lines.  The columns are DCGM's short names (NVIDIA/DCGM
 * dcgmlib/src/dcgm_fields.cpp at 0fb6699, DcgmFieldsPopulateFieldTableWithFormatting: 155 POWER, 100 SMCLK,
 * 150 TMPTR, 203 GPUTL, 112 DVCCTR, the clock event reasons as NVML's bitmask in decimal); "N/A" where a GPU has
 * none.  Its lines carry no time: the whole run, said.  Same records as np_telemetry_read. */
enum np_status np_telemetry_read_dcgm(const char *text, size_t len, const char *node, struct np_gpu_telemetry **out,
                                      size_t *n, char **notes)
{
    enum tele_col cols[TELE_COLS];
    size_t ncols = 0, bad = 0;
    int header = 0;
    struct tele_acc *acc = NULL;
    size_t nacc = 0;
    enum np_status st = NP_OK;
    static const struct { const char *name; enum tele_col col; } names[] = {
        {"POWER", TC_POWER}, {"SMCLK", TC_SM}, {"TMPTR", TC_TEMP}, {"GPUTL", TC_UTIL}, {"DVCCTR", TC_ACTIVE},
    };
    for (const char *p = text, *end = text + len; p < end && st == NP_OK;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = (size_t)((nl ? nl : end) - p);
        char line[1024];
        const char *src = p;
        p = nl ? nl + 1 : end;
        if (ll >= sizeof line) {
            bad++;
            continue;
        }
        memcpy(line, src, ll);
        line[ll] = '\0';
        char *save = NULL, *tok[TELE_COLS + 2];
        size_t k = 0;
        for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save))
            if (k < TELE_COLS + 2)
                tok[k++] = t;
        if (!k || !strcmp(tok[0], "ID"))
            continue;
        if (!strcmp(tok[0], "#Entity")) {
            ncols = k - 1;
            for (size_t i = 0; i < ncols; i++) {
                cols[i] = TC_NONE;
                for (size_t j = 0; j < sizeof names / sizeof *names; j++)
                    if (!strcmp(tok[i + 1], names[j].name))
                        cols[i] = names[j].col;
            }
            header = 1;
            continue;
        }
        char *e;
        long gpu = k >= 2 ? strtol(tok[1], &e, 10) : -1;
        if (!header || strcmp(tok[0], "GPU") || k != ncols + 2 || gpu < 0 || gpu >= 1000000 || *e) {
            bad++;
            continue;
        }
        struct tele_acc *a = NULL;
        for (size_t i = 0; i < nacc; i++)
            if (acc[i].index == (int)gpu)
                a = &acc[i];
        if (!a) {
            if (nacc >= TELE_GPUS) {
                bad++;
                continue;
            }
            struct tele_acc *na = realloc(acc, (nacc + 1) * sizeof *na);
            if (!na) {
                st = NP_E_NOMEM;
                break;
            }
            acc = na;
            a = &acc[nacc++];
            tele_acc_init(a);
            a->index = (int)gpu;
        }
        a->samples++;
        for (size_t i = 0; i < ncols; i++) {
            const char *v = tok[i + 2];
            switch (cols[i]) {
            case TC_POWER:
            case TC_SM:
            case TC_TEMP:
            case TC_UTIL:
                tele_acc_add(a, cols[i], tele_num(v));
                break;
            case TC_ACTIVE: {
                unsigned long bits = strtoul(v, &e, 0);
                if (e == v || *e)
                    break;
                for (size_t r = 0; r < TELE_NREASONS; r++)
                    a->r_known[r]++, a->r_on[r] += (bits & tele_reasons[r].bits) != 0;
                a->th_known++, a->th_on += (bits & 0x60) != 0;
                break;
            }
            default:
                break;
            }
        }
    }
    if (!st)
        st = tele_emit(acc, nacc, node, out, n);
    free(acc);
    if (!st && !header && len && np_text_notef(notes, "%s: dcgmi dmon output without its #Entity header (not read)", node))
        st = NP_E_NOMEM;
    if (!st && bad && header && np_text_notef(notes, "%s: %zu dcgmi dmon line%s not read", node, bad, bad == 1 ? "" : "s"))
        st = NP_E_NOMEM;
    return st;
}

static int tele_cmp(const void *x, const void *y)
{
    const struct np_gpu_telemetry *a = x, *b = y;
    int c = strcmp(a->node, b->node);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

enum np_status np_telemetry_read_dir(const char *run_dir, double t0, double t1, struct np_system *sys)
{
    char dir[4096];
    const char *leaf = strchr(NP_RUNFILE_TELEMETRY, '/');
    snprintf(dir, sizeof dir, "%s/%.*s", run_dir, (int)(leaf - NP_RUNFILE_TELEMETRY), NP_RUNFILE_TELEMETRY);
    DIR *d = opendir(dir);
    if (!d)
        return NP_OK;
    enum np_status st = NP_OK;
    struct dirent *de;
    while (!st && (de = readdir(d))) {
        size_t l = strlen(de->d_name);
        int csv = l > 4 && !strcmp(de->d_name + l - 4, ".csv");
        int dcgm = l > 5 && !strcmp(de->d_name + l - 5, ".dcgm");
        if (de->d_name[0] == '.' || (!csv && !dcgm) || l >= NP_SYS_NAME + 5)
            continue;
        char node[NP_SYS_NAME];
        snprintf(node, sizeof node, "%.*s", (int)(l - (csv ? 4 : 5)), de->d_name);
        char path[4096 + NP_SYS_NAME + 8];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct np_error err = {0};
        unsigned char *buf = NULL;
        size_t len = 0;
        enum np_status s = np_file_read_all(path, TELE_FILE_MAX, &buf, &len, &err);
        if (s == NP_E_NOMEM) {
            st = s;
            break;
        }
        if (s != NP_OK) {
            if (np_text_notef(&sys->notes, "%s: telemetry not read (%s)", node, err.text))
                st = NP_E_NOMEM;
            continue;
        }
        size_t before = sys->ntele;
        if (dcgm) { /* no time on its lines: the whole run, said when a window was asked for */
            st = np_telemetry_read_dcgm((const char *)buf, len, node, &sys->tele, &sys->ntele, &sys->notes);
            if (!st && (!isnan(t0) || !isnan(t1)) &&
                np_text_notef(&sys->notes, "%s: dcgmi dmon samples carry no time: over the whole run", node))
                st = NP_E_NOMEM;
        } else {
            st = np_telemetry_read((const char *)buf, len, node, t0, t1, &sys->tele, &sys->ntele, &sys->notes);
        }
        free(buf);
        if (!st && sys->ntele == before && len &&
            np_text_notef(&sys->notes, "%s: no telemetry sample%s", node, isnan(t0) && isnan(t1) ? "" : " in the window"))
            st = NP_E_NOMEM;
        sys->telemetry = 1;
    }
    closedir(d);
    if (!st && sys->ntele)
        qsort(sys->tele, sys->ntele, sizeof *sys->tele, tele_cmp);
    return st;
}
