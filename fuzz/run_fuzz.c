/* run_fuzz.c - libFuzzer target for a whole run folder: folder name, nemoperf.json, log and batch output.
 *
 * Each input becomes a run folder laid out as the recipes do (experiments/<name>/<name>_<ts>/<name>/ with
 * the manifest, log-<name>_<job>_0.out and sbatch_<name>_<job>.out), is parsed with the shipped recipes and
 * reference table (np_parse_paths, and np_parse_stream as nemoperf-parse streams it), and written in every
 * format.  Besides ASan/UBSan, it checks what a reader of the output relies on: the JSON report is valid
 * JSON, every CSV record has the header's number of fields, and rows rendered ahead (as nemoperf-parse
 * streams CSV, JSON and the table) are the bytes np_report_run writes, and a manifest that cannot be trusted
 * (a field of the wrong type, a duplicate key) makes its run invalid, saying so (issue 23).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/report/report.h"
#include "nemoperf/parse/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char fuzz_root[PATH_MAX];
static struct np_recipe_set fuzz_recipes;
static struct np_ref_table fuzz_ref;

static void fuzz_cleanup(void)
{
    rmdir(fuzz_root); /* every input removes its own folders */
    np_ref_free(&fuzz_ref);
    np_recipe_set_free(&fuzz_recipes);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_root, sizeof fuzz_root, "%s/np-run-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    struct np_error err = {0};
    if (!mkdtemp(fuzz_root) || np_recipe_set_load_default(&fuzz_recipes, &err) != NP_OK ||
        np_ref_load_default(&fuzz_ref, &err) != NP_OK) {
        fprintf(stderr, "run_fuzz: cannot set up (%s): %s\n", fuzz_root, err.text[0] ? err.text : strerror(errno));
        abort();
    }
    atexit(fuzz_cleanup);
    return 0;
}

/* The next section of the input: up to "\n@@\n" or the end. */
static const char *fuzz_section(const char **p, const char *end, size_t *n)
{
    static const char sep[] = "\n@@\n";
    const char *s = *p;
    const char *q = s < end ? memmem(s, (size_t)(end - s), sep, 4) : NULL;
    *n = q ? (size_t)(q - s) : (size_t)(end - s);
    *p = q ? q + 4 : end;
    return s;
}

static void fuzz_write(const char *path, const char *s, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        abort();
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            abort();
        s += w;
        n -= (size_t)w;
    }
    close(fd);
}

/* Fields of one CSV record starting at *p (RFC 4180 quoting); *p moves past its end.  -1: malformed. */
static long fuzz_csv_record(const char **p, const char *end)
{
    const char *s = *p;
    long fields = 1;
    int quoted = 0, at_start = 1;
    while (s < end) {
        char c = *s++;
        if (quoted) {
            if (c == '"') {
                if (s < end && *s == '"')
                    s++;
                else
                    quoted = 0;
            }
            continue;
        }
        if (c == '"') {
            if (!at_start)
                return -1; /* a quote inside an unquoted field */
            quoted = 1;
            at_start = 0;
        } else if (c == ',') {
            fields++;
            at_start = 1;
        } else if (c == '\n') {
            *p = s;
            return fields;
        } else {
            at_start = 0;
        }
    }
    *p = s;
    return quoted ? -1 : fields;
}

static void fuzz_check_csv(const char *s, size_t n)
{
    const char *p = s, *end = s + n;
    long head = p < end ? fuzz_csv_record(&p, end) : 0;
    if (head <= 0 && n)
        abort();
    while (p < end) {
        long f = fuzz_csv_record(&p, end);
        if (f != head) {
            fprintf(stderr, "run_fuzz: a CSV record has %ld fields, the header %ld\n%.*s\n", f, head, (int)n, s);
            abort();
        }
    }
}

static void fuzz_check_json(const char *s, size_t n)
{
    json_error_t e;
    json_t *j = json_loadb(s, n, 0, &e);
    if (!j || !json_is_object(j) || !json_is_array(json_object_get(j, "runs"))) {
        fprintf(stderr, "run_fuzz: the JSON report does not parse: %s (line %d)\n%.*s\n", e.text, e.line, (int)n, s);
        abort();
    }
    json_decref(j);
}

/* What a reader of a report in fmt relies on. */
static void fuzz_check(enum np_format fmt, const char *s, size_t n)
{
    if (fmt == NP_FMT_JSON)
        fuzz_check_json(s, n);
    else if (fmt == NP_FMT_CSV)
        fuzz_check_csv(s, n);
}

/* The report of res in fmt, checked. */
static void fuzz_report(const struct np_parse_result *res, const struct np_parse_opts *o, enum np_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        abort();
    enum np_status st = np_report_write(m, fmt, res, o);
    if (fclose(m) != 0)
        abort();
    if (st == NP_OK)
        fuzz_check(fmt, buf, len);
    free(buf);
}

/* The streamed report, as nemoperf-parse writes it without --group (the runs as they come). */
struct fuzz_stream {
    struct np_report *rep;
    int render; /* CSV, JSON, table: rendered ahead with a slot for the efficiency, as parse.c does */
};

static enum np_status fuzz_stream_run(void *ctx, const struct np_run *run)
{
    struct fuzz_stream *fs = ctx;
    if (fs->render && np_report_renders(fs->rep)) {
        struct np_report_text t;
        enum np_status st = np_report_render(fs->rep, run, &t);
        if (st == NP_OK) {
            if (t.eff_at > t.len)
                abort();
            return np_report_put(fs->rep, t.text, t.len, t.eff_at, run->scaling_eff);
        }
        if (st != NP_E_INVALID)
            return st;
    }
    return np_report_run(fs->rep, run);
}

static enum np_status fuzz_stream_error(void *ctx, const char *msg)
{
    struct fuzz_stream *fs = ctx;
    return np_report_error(fs->rep, msg);
}

/* The streamed report's text (NULL when the parse or the report failed). */
static char *fuzz_stream(char *const *paths, const struct np_parse_opts *o, enum np_format fmt, int render, size_t *n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        abort();
    struct fuzz_stream fs = {np_report_new(m, fmt, o), render};
    if (!fs.rep)
        abort();
    struct np_run_sink sink = {&fs, fuzz_stream_run, fuzz_stream_error};
    enum np_status st = np_parse_stream(paths, 1, o, &fuzz_recipes, o->reference ? &fuzz_ref : NULL, &sink, NULL);
    if (st == NP_OK)
        st = np_report_finish(fs.rep);
    np_report_free(fs.rep);
    if (fclose(m) != 0)
        abort();
    if (st != NP_OK) {
        free(buf);
        return NULL;
    }
    fuzz_check(fmt, buf, len);
    *n = len;
    return buf;
}

/* Rows rendered ahead and put back must be the bytes np_report_run writes. */
static void fuzz_stream_both(char *const *paths, const struct np_parse_opts *o, enum np_format fmt)
{
    size_t na = 0, nb = 0;
    char *a = fuzz_stream(paths, o, fmt, 1, &na), *b = fuzz_stream(paths, o, fmt, 0, &nb);
    if (a && b && (na != nb || memcmp(a, b, na) != 0)) {
        fprintf(stderr, "run_fuzz: format %d rendered ahead differs from np_report_run:\n%.*s\n----\n%.*s\n", (int)fmt,
                (int)na, a, (int)nb, b);
        abort();
    }
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned bits = data[0];
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    size_t nn, nm, nl, ns;
    const char *name = fuzz_section(&p, end, &nn);
    const char *man = fuzz_section(&p, end, &nm);
    const char *log = fuzz_section(&p, end, &nl);
    const char *sout = fuzz_section(&p, end, &ns);

    /* the folder name: any bytes but '/' and NUL, at most 120 of them, not "." or ".." */
    char fname[128];
    size_t k = 0;
    for (size_t i = 0; i < nn && k < 120; i++)
        fname[k++] = name[i] == '/' || name[i] == '\0' ? '_' : name[i];
    fname[k] = '\0';
    if (k == 0 || strcmp(fname, ".") == 0 || strcmp(fname, "..") == 0)
        strcpy(fname, "run");

    char d1[PATH_MAX], d2[PATH_MAX], d3[PATH_MAX], fm[PATH_MAX], fl[PATH_MAX], fs[PATH_MAX];
    snprintf(d1, sizeof d1, "%s/%s", fuzz_root, fname);
    snprintf(d2, sizeof d2, "%s/%s_1776314609", d1, fname);
    snprintf(d3, sizeof d3, "%s/%s", d2, fname);
    snprintf(fm, sizeof fm, "%s/nemoperf.json", (bits & 0x80) ? d2 : d3);
    snprintf(fl, sizeof fl, "%s/log-%s_1453225_0.out", d3, fname);
    snprintf(fs, sizeof fs, "%s/sbatch_%s_1453225.out", d3, fname);
    if (mkdir(d1, 0755) != 0 || mkdir(d2, 0755) != 0 || mkdir(d3, 0755) != 0)
        abort();
    if (nm)
        fuzz_write(fm, man, nm);
    if (nl || !nm)
        fuzz_write(fl, log, nl);
    if (ns)
        fuzz_write(fs, sout, ns);

    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    o.reference = bits & 1;
    o.verdict_last = (bits >> 1) & 1;
    o.all_steps = (bits >> 2) & 1;
    switch ((bits >> 3) & 3) {
    case 1: o.window = 3; o.window_strict = 1; break;
    case 2: o.steps_first = 5; o.steps_last = 8; break;
    case 3: o.window = 10; o.window_strict = 1; break;
    default: break;
    }
    if (bits & 0x20) { /* options of an identity the folder or manifest may contradict */
        strcpy(o.given.gpu_type, "b200");
        o.given.gpus = 8;
        o.given.seq_len = 8192;
    }
    o.group = (bits >> 6) & 1;

    char *paths[] = {fuzz_root};
    struct np_parse_result res;
    if (np_parse_paths(paths, 1, &o, &fuzz_recipes, o.reference ? &fuzz_ref : NULL, &res) != NP_OK)
        abort();
    for (size_t i = 0; i < res.nruns; i++) { /* issue 23: an untrusted manifest never passes silently */
        const struct np_run *r = &res.runs[i];
        if (r->launch.bad[0] && (r->status != NP_RUN_INVALID || !r->why || !strstr(r->why, "cannot be trusted"))) {
            fprintf(stderr, "run_fuzz: untrusted manifest (%s) but status %s: %s\n", r->launch.bad,
                    np_run_status_name(r->status), r->why ? r->why : "(no why)");
            abort();
        }
    }
    for (int f = NP_FMT_TABLE; f <= NP_FMT_JSON; f++)
        fuzz_report(&res, &o, (enum np_format)f);
    np_parse_result_free(&res);
    if (!o.group) { /* the streamed report (--group needs every run first) */
        size_t n;
        fuzz_stream_both(paths, &o, NP_FMT_JSON);
        fuzz_stream_both(paths, &o, NP_FMT_CSV);
        fuzz_stream_both(paths, &o, NP_FMT_TABLE);
        free(fuzz_stream(paths, &o, NP_FMT_MARKDOWN, 0, &n));
    }

    unlink(fm);
    unlink(fl);
    unlink(fs);
    if (rmdir(d3) != 0 || rmdir(d2) != 0 || rmdir(d1) != 0)
        abort();
    return 0;
}
