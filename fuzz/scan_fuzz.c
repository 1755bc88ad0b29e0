/* scan_fuzz.c - libFuzzer target for the log scanner (src/parse/scan.c).
 *
 * Includes src/parse/scan.c itself to reach its static helpers.  Each input is
 * scanned as a buffer, as a file read in small chunks (must agree exactly),
 * in tail mode (must end on the same step), and the SIMD candidate search and
 * the number parser are cross-checked against memmem and strtod.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../src/parse/scan.c"

#include <stdio.h>
#include <sys/mman.h>

/* The tail and the whole file may disagree on a step's number only where the line gives it inexactly: a
 * tqdm-rounded global_step ("2e+3" is 1995..2004) without a readable bar, which a scan refines from the step
 * before it (prev + 1 within the rounding), and the tail sees fewer steps before it (or other runs) than the
 * whole file.  Then both numbers lie within the rounding of what the line says on its own (at most 1 % for
 * tqdm's 3 significant digits). */
static void fuzz_inexact_identity(const char *buf, size_t size, const struct np_step *t, const struct np_step *r)
{
    struct np_scan_result alone;
    if (t->offset > size || np_scan_buffer(buf + t->offset, size - t->offset, 0, &alone, NULL) != NP_OK)
        abort();
    long own = alone.nsteps ? alone.steps[0].iteration : -2;
    np_scan_result_free(&alone);
    long unit = own / 100 + 1;
    if (own < 0 || labs(t->iteration - own) > unit || labs(r->iteration - own) > unit)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void fuzz_same_step(const struct np_step *a, const struct np_step *b)
{
    if (a->iteration != b->iteration || a->total != b->total ||
        !fuzz_same_double(a->step_time_s, b->step_time_s) || !fuzz_same_double(a->loss, b->loss) ||
        a->global_batch_size != b->global_batch_size ||
        !fuzz_same_double(a->peak_memory_bytes, b->peak_memory_bytes) ||
        !fuzz_same_double(a->tflops_per_gpu, b->tflops_per_gpu) ||
        !fuzz_same_double(a->consumed_samples, b->consumed_samples) ||
        !fuzz_same_double(a->tokens_per_s, b->tokens_per_s) ||
        !fuzz_same_double(a->tokens_per_s_per_gpu, b->tokens_per_s_per_gpu) ||
        a->nan_seen != b->nan_seen || a->two_times != b->two_times || a->gen != b->gen || a->offset != b->offset ||
        !fuzz_same_double(a->energy_j_per_gpu, b->energy_j_per_gpu) ||
        !fuzz_same_double(a->power_w_per_gpu, b->power_w_per_gpu) || a->bar_short != b->bar_short)
        abort();
}

/* The newest value a reader of "the last known loss / batch size / peak memory / TFLOPS" takes (run.c). */
static void fuzz_newest(const struct np_scan_result *r, double *loss, long *gbs, double *peak, double *tflops)
{
    *loss = *peak = *tflops = NAN;
    *gbs = -1;
    for (size_t i = r->nsteps; i-- > 0;) {
        const struct np_step *s = &r->steps[i];
        if (isnan(*loss))
            *loss = s->loss;
        if (isnan(*peak))
            *peak = s->peak_memory_bytes;
        if (isnan(*tflops))
            *tflops = s->tflops_per_gpu;
        if (*gbs <= 0 && s->global_batch_size > 0)
            *gbs = s->global_batch_size;
    }
}
/* Lean mode (l) against the same scan without it (t): the same steps, the last one whole, the older ones
 * with the same identity, time and NaN flag, and the same newest known values (np_scan_opts.lean). */
static void fuzz_lean(const struct np_scan_result *t, const struct np_scan_result *l)
{
    if (t->nsteps != l->nsteps || t->runs != l->runs || t->truncated_start != l->truncated_start ||
        t->saw_checkpoint_save != l->saw_checkpoint_save || t->saw_checkpoint_load != l->saw_checkpoint_load ||
        t->bytes_read != l->bytes_read)
        abort();
    for (size_t i = 0; i < t->nsteps; i++) {
        const struct np_step *a = &t->steps[i], *b = &l->steps[i];
        if (i + 1 == t->nsteps)
            fuzz_same_step(a, b);
        else if (a->iteration != b->iteration || a->total != b->total ||
                 !fuzz_same_double(a->step_time_s, b->step_time_s) || a->nan_seen != b->nan_seen ||
                 a->gen != b->gen || a->offset != b->offset)
            abort();
    }
    double la, lb, pa, pb, fa, fb;
    long ga, gb;
    fuzz_newest(t, &la, &ga, &pa, &fa);
    fuzz_newest(l, &lb, &gb, &pb, &fb);
    if (!fuzz_same_double(la, lb) || ga != gb || !fuzz_same_double(pa, pb) || !fuzz_same_double(fa, fb))
        abort();
}
/* What every result must satisfy, whatever the input. */
static void fuzz_invariants(const struct np_scan_result *r, const uint8_t *data, size_t size,
                            uint64_t base)
{
    long last[SCAN_NGEN] = {-1, -1, -1, -1, -1, -1};
    if ((r->nsteps > 0) != (r->runs > 0) || (r->nsteps && !r->steps))
        abort();
    for (size_t i = 0; i < r->nsteps; i++) {
        const struct np_step *s = &r->steps[i];
        if (s->offset < base || s->offset - base >= size || s->gen <= NP_GEN_UNKNOWN ||
            s->gen > NP_GEN_AUTOMODEL)
            abort();
        size_t off = (size_t)(s->offset - base);
        if (off > 0 && data[off - 1] != '\n' && data[off - 1] != '\r')
            abort(); /* a step starts a line */
        if (i > 0 && s->offset <= r->steps[i - 1].offset)
            abort();
        if (s->iteration >= 0) {
            if (s->iteration <= last[s->gen])
                abort(); /* inside one run, iterations of a generation only grow */
            last[s->gen] = s->iteration;
        }
        if (s->iteration < -1 || s->total < -1 || s->global_batch_size < -1)
            abort();
    }
}

/* The SIMD searches and the portable memmem search find the same hits. */
static void fuzz_finders(const char *buf, size_t len, unsigned active)
{
    struct scan_finder f = {{NULL}, 0};
    const char *end = buf + len, *p = buf;
    for (;;) {
        const char *a = scan_find(&f, p, end, active);
        const char *b = scan_find_portable(&(struct scan_finder){{NULL}, 0}, p, end, active);
        if (a != b)
            abort();
#if defined(__SSE2__) && !defined(SCAN_NO_SIMD)
        if (scan_find_sse2(p, end, active) != b)
            abort();
#endif
#ifdef SCAN_HAVE_AVX2
        if (scan_use_avx2 && scan_find_avx2(p, end, active) != b)
            abort();
#endif
        if (!a)
            break;
        p = a + 1;
    }
}

/* The hand-written matchers (scan_match) and PCRE2 (scan_match_pcre) find the same matches and groups,
 * walked the way scan_pairs walks them. */
static void fuzz_matchers(const char *buf, size_t len)
{
    static const enum scan_pat pats[] = {PAT_PIPE_KV, PAT_NEMO1_KV, PAT_NEMO2_ANCHOR};
    struct scan_state a, b;
    if (scan_state_init(&a) != NP_OK || scan_state_init(&b) != NP_OK)
        abort();
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        size_t off = 0;
        while (off < len) {
            int ra = scan_match(&a, pats[k], buf, len, off), rb = scan_match_pcre(&b, pats[k], buf, len, off);
            if (ra != rb || (ra && memcmp(a.ov, b.ov, (pats[k] == PAT_NEMO2_ANCHOR ? 8 : 6) * sizeof a.ov[0])))
                abort();
            if (!ra || pats[k] == PAT_NEMO2_ANCHOR)
                break;
            off = a.ov[1] > a.ov[0] ? a.ov[1] : a.ov[0] + 1;
        }
    }
    scan_state_free(&a);
    scan_state_free(&b);
}

/* Whatever scan_parse_double accepts, strtod reads whole to the same value; what only the writers'
 * other spellings (scan_parse_nonfinite: "nan.0", "1.#QNAN") make a number is a NaN or an infinity. */
static void fuzz_number(const char *s, size_t n)
{
    double v;
    char tmp[80];
    if (n < sizeof tmp && !scan_parse_double(s, n, &v) && scan_parse_nonfinite(s, n, &v) && isfinite(v))
        abort();
    if (n >= sizeof tmp || !scan_parse_double(s, n, &v))
        return;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    double w = strtod(tmp, &end);
    if (end != tmp + n || !fuzz_same_double(v, w))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    struct np_scan_result r, f, t;
    if (np_scan_buffer(buf, size, 0, &r, NULL) != NP_OK)
        abort();
    fuzz_invariants(&r, data, size, 0);

    /* the same bytes as a file read in small chunks: identical result */
    int fd = memfd_create("scan_fuzz", MFD_CLOEXEC);
    if (fd >= 0) {
        size_t off = 0;
        while (off < size) {
            ssize_t w = write(fd, buf + off, size - off);
            if (w <= 0)
                abort();
            off += (size_t)w;
        }
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        size_t chunk = size ? 1 + (size_t)data[0] * 13 % 2048 : 1;
        struct np_scan_opts o = {.all_steps = 1, .read_chunk = chunk};
        if (np_scan_file(path, &o, &f, NULL) != NP_OK || f.nsteps != r.nsteps || f.runs != r.runs ||
            f.saw_checkpoint_save != r.saw_checkpoint_save ||
            f.saw_checkpoint_load != r.saw_checkpoint_load || f.bytes_read != size)
            abort();
        for (size_t i = 0; i < r.nsteps; i++)
            fuzz_same_step(&r.steps[i], &f.steps[i]);
        np_scan_result_free(&f);

        /* tail mode: whatever it finds ends on the file's last step line */
        /* half of the inputs also use the step budget of nemoperf-parse's default mode */
        struct np_scan_opts to = {.window = size > 1 ? 1 + data[1] % 8 : 1,
                                  .tail_bytes = size > 2 ? 1 + (size_t)data[2] * 7 : 1,
                                  .read_chunk = chunk,
                                  .keep = size > 3 && (data[3] & 1) ? 1 + data[3] % 12 : 0};
        if (np_scan_file(path, &to, &t, NULL) != NP_OK)
            abort();
        fuzz_invariants(&t, data, size, 0);
        if (t.nsteps && (!r.nsteps || t.steps[t.nsteps - 1].offset != r.steps[r.nsteps - 1].offset))
            abort();
        if (t.nsteps && t.steps[t.nsteps - 1].iteration != r.steps[r.nsteps - 1].iteration)
            fuzz_inexact_identity(buf, size, &t.steps[t.nsteps - 1], &r.steps[r.nsteps - 1]);
        if (t.nsteps == 0 && r.nsteps && !t.truncated_start)
            abort(); /* read it all and found nothing? */
        if (to.keep) { /* nemoperf-parse's default mode parses the older steps lean */
            struct np_scan_result l;
            to.lean = 1;
            if (np_scan_file(path, &to, &l, NULL) != NP_OK)
                abort();
            fuzz_lean(&t, &l);
            np_scan_result_free(&l);
        }
        np_scan_result_free(&t);
        close(fd);
    }
    np_scan_result_free(&r);

    /* a tail buffer: the first (cut) line is dropped */
    if (size > 1) {
        size_t cut = data[0] % size;
        if (np_scan_buffer(buf + cut, size - cut, 1 + cut, &r, NULL) != NP_OK)
            abort();
        fuzz_invariants(&r, data + cut, size - cut, 1 + cut);
        np_scan_result_free(&r);
    }

    fuzz_finders(buf, size, size ? (data[size - 1] & SCAN_NEEDLE_ALL) | 1u : SCAN_NEEDLE_ALL);
    fuzz_matchers(buf, size);
    if (np_scan_init(NULL) == NP_OK) {
        fuzz_number(buf, size < 70 ? size : 70);
        for (size_t i = 0; i + 1 < size && i < 4096; i++)
            if (data[i] == ':' || data[i] == '=')
                fuzz_number(buf + i + 1, size - i - 1 < 30 ? size - i - 1 : 30);
    }
    return 0;
}
