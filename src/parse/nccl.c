/* nccl.c - the NCCL/RCCL breakdown and network facts of a log, read as a stream.
 *
 * Collective lines ("NCCL INFO AllReduce: opCount 1a sendbuff .. count N datatype D .. [nranks=N]"),
 * logged once per rank, are counted once per collective: lines with the same (communicator size,
 * collective, opCount, count, datatype) make ceil(lines / nranks) calls.  Their keys live in two
 * bounded generations (a full one is counted and dropped), so memory stays bounded on a log of
 * any length; a collective whose ranks log it further apart than a generation may count twice.
 * Init lines give the version, network, plugin, IB devices, GPU Direct RDMA and node count.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr, memmem */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__SSE2__) && !defined(NCCL_NO_SIMD)
#include <emmintrin.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NCCL_HAVE_AVX2 1
#endif
#endif

#include "nemoperf/parse/nccl.h"
#include "nemoperf/parse/scan.h"
#include "nemoperf/parse/straggler.h"
#include "nemoperf/util/fileio.h"

#define NCCL_GEN_BITS 16                 /* 65,536 keys a generation (2 x 2 MiB) */
#define NCCL_GEN_CAP (1u << NCCL_GEN_BITS)
#define NCCL_GEN_FILL (NCCL_GEN_CAP / 2) /* a generation is full at half its slots */
#define NCCL_HUGE ((size_t)2 << 20)            /* a huge page: nccl_huge_alloc */
#define NCCL_GENS (2 * NCCL_GEN_CAP * sizeof(struct nccl_key))
#define NCCL_SET_BITS 17                 /* ranks and hosts: 131,072 slots at most each, 65,536 values */
#define NCCL_SET_MIN 1024                /* a set's first slots (doubled when half full) */
#define NCCL_SET_CAP (1u << NCCL_SET_BITS)
#define NCCL_MAX_OPS 64
#define NCCL_LINE_MAX 8192               /* a longer line is cut: its start is what we read */
#define NCCL_GRANKS_MAX (1u << 20)       /* RCCL globalrank bitmap */
#define NCCL_PIDS 8192                   /* processes whose rank an init line names (4,096 kept) */
#define NCCL_SEEN 1024                   /* prefixes of collective lines already put in the rank and host sets */
#define NCCL_SEEN_WAYS 4                 /* looked for in 4 slots from their hash's */
#define NCCL_SEEN_LEN 55

struct nccl_key {
    uint64_t opcount, count;
    uint32_t nranks;  /* 0: empty slot */
    uint16_t op;
    uint16_t dtype;
    uint64_t lines;   /* 0 with nranks != 0: moved to the newer generation */
};

_Static_assert(NCCL_GENS % NCCL_HUGE == 0, "the generations fill whole huge pages");

struct nccl_pidrank {
    uint64_t pid;     /* 0: empty slot */
    int rank, nranks; /* rank -2: the process holds several ranks of its largest communicator */
};

/* The bytes before "NCCL INFO" of a collective line whose rank and host are in the sets (len 0: empty). */
struct nccl_seen {
    uint8_t len; /* its length + 1 */
    char bytes[NCCL_SEEN_LEN];
};

struct nccl_gen {
    struct nccl_key *slot;
    size_t used;
};

/* The collectives' names: an index each (the log's first NCCL_MAX_OPS - 1 names; the reader's table puts any
 * later name under "other", a slot's table of the reader threads is only full). */
struct nccl_ops {
    char name[NCCL_MAX_OPS][24];
    uint8_t len[NCCL_MAX_OPS]; /* strlen(name[i]) */
    size_t n, last; /* last: the collective of the previous line */
};

/* A hash set of non-zero values: cap slots (a power of two, NCCL_SET_MIN .. NCCL_SET_CAP), n values. */
struct nccl_set {
    uint64_t *v;
    size_t cap, n;
};

/* What the collective lines add besides their keys, whatever their order: the rank and host sets, RCCL's
 * global ranks, the lines and the largest communicator.  The reader has one; each reader thread its own,
 * merged into the reader's at the end (a union, a sum, a maximum: the same as one). */
struct nccl_local {
    struct nccl_set ranks, hosts;
    int saturated;
    uint8_t *granks; /* RCCL globalrank bitmap, allocated on first use */
    uint64_t trace_lines;
    int max_nranks;
    struct nccl_seen seen[NCCL_SEEN];
    size_t seen_turn;
};

struct nccl_pipe;

struct np_nccl {
    struct nccl_gen gen[2]; /* [0] new, [1] old */
    struct nccl_key *gens;  /* both generations' slots (they swap) */
    int gens_huge;          /* gens from nccl_huge_alloc (np_nccl_async), else calloc */
    struct nccl_key *last;  /* the key of the previous collective line (ranks log a call in a row) */
    struct np_nccl_coll *coll;
    size_t ncoll, capcoll;
    struct nccl_ops ops;
    struct nccl_local loc;
    char *granks_text;
    struct np_nccl_net net;
    struct np_nccl_ckpt ckpt;
    struct np_straggler strag; /* straggler-detector reports met on the way (straggler.c) */
    struct nccl_pidrank pids[NCCL_PIDS];
    size_t npids;
    uint64_t fed;             /* bytes fed before the current chunk */
    uint64_t line_off;        /* where the pending line starts */
    uint64_t strag_next;      /* the offset just past the last straggler line (0: none yet) */
    char line[NCCL_LINE_MAX];
    size_t linelen;
    int line_cut;
    int finished;
    const char *avail;      /* the end of the buffer the lines being read are in */
    struct nccl_pipe *pipe; /* np_nccl_async: the reader threads, NULL inline */
};

/* ---- datatypes ------------------------------------------------------------ */

/* NCCL's ncclDataType_t, the same numbering in every NCCL 2 release that logs collectives:
 *   0 int8, 1 uint8, 2 int32, 3 uint32, 4 int64, 5 uint64, 6 float16, 7 float32, 8 float64
 *     NVIDIA/nccl v2.3.5-5 src/nccl.h.in:99-108 (unchanged through v2.30.7-1 src/nccl.h.in:382-394)
 *   9 bfloat16 from 2.10: v2.10.3-1 src/nccl.h.in:113-126 (absent in v2.9.9-1)
 *   10 float8e4m3, 11 float8e5m2 from 2.24: v2.24.3-1 src/nccl.h.in:237-249 (absent in v2.23.4-1)
 * RCCL keeps the numbering (ncclFp8E4M3 = 10, ncclFp8E5M2 = 11 in its nccl.h).  NCCL 1.x numbered
 * differently (v1.3.4-1 src/nccl.h:99-108: ncclChar 0, ncclInt 1, ncclHalf 2, ncclFloat 3 ...)
 * but never logged "opCount" lines. */
static const int nccl_widths[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

static int nccl_version_code(const char *v)
{
    int ma = 0, mi = 0;
    if (sscanf(v, "%d.%d", &ma, &mi) != 2)
        return -1;
    return ma * 100 + mi;
}

int np_nccl_dtype_width(int dt, const char *version, int rccl)
{
    if (dt < 0 || dt >= (int)(sizeof nccl_widths / sizeof nccl_widths[0]))
        return 0;
    int code = version && *version ? nccl_version_code(version) : -1;
    if (code >= 0 && code < 200)
        return 0; /* NCCL 1.x: another numbering */
    if (dt == 9 && code >= 0 && code < 210)
        return 0;
    if (dt >= 10 && code >= 0 && code < 224 && !rccl)
        return 0;
    return nccl_widths[dt];
}

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t nccl_hash(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t nccl_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static enum np_status nccl_set_init(struct nccl_set *s)
{
    s->n = 0;
    s->cap = NCCL_SET_MIN;
    s->v = calloc(s->cap, sizeof *s->v);
    return s->v ? NP_OK : NP_E_NOMEM;
}

/* The slot of v in s: where it is, or the empty slot where it goes. */
static size_t nccl_set_slot(const struct nccl_set *s, uint64_t v)
{
    size_t mask = s->cap - 1, i = (size_t)nccl_mix(v) & mask;
    while (s->v[i] && s->v[i] != v)
        i = (i + 1) & mask;
    return i;
}

/* Insert v into s; 1 when new.  A set holds NCCL_SET_CAP / 2 values at most (one more is saturated: not kept);
 * it starts small and doubles when half full (a log's ranks and hosts are few: their pages stay few too, and
 * merging a thread's set reads its slots only). */
static int nccl_set_add(struct nccl_set *s, uint64_t v, int *saturated)
{
    if (!v)
        v = 1;
    size_t i = nccl_set_slot(s, v);
    if (s->v[i])
        return 0;
    if (s->n >= NCCL_SET_CAP / 2) {
        *saturated = 1;
        return 0;
    }
    if (s->n + 1 > s->cap / 2 && s->cap < NCCL_SET_CAP) {
        struct nccl_set g = {calloc(s->cap * 2, sizeof *s->v), s->cap * 2, s->n};
        if (!g.v) { /* no memory to grow: counted as saturated, not lost silently */
            *saturated = 1;
            return 0;
        }
        for (size_t k = 0; k < s->cap; k++)
            if (s->v[k])
                g.v[nccl_set_slot(&g, s->v[k])] = s->v[k];
        free(s->v);
        *s = g;
        i = nccl_set_slot(s, v);
    }
    s->v[i] = v;
    s->n++;
    return 1;
}

static const char *nccl_find(const char *s, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    if ((size_t)(end - s) < n)
        return NULL;
    return memmem(s, (size_t)(end - s), needle, n);
}

__attribute__((always_inline)) static inline const char *nccl_lit(const char *q, const char *end, const char *lit,
                                                                  size_t n);

/* 1 when s starts with word (a constant: compared a word at a time, nccl_lit). */
__attribute__((always_inline)) static inline int nccl_starts(const char *s, const char *end, const char *word)
{
    return nccl_lit(s, end, word, strlen(word)) != NULL;
}

/* The spaces of a line, 64 bytes at a time: a collective line's words are found with one vector
 * compare per 16 bytes and a bit scan per word, not a byte loop (most of the reader's time before). */
struct nccl_words {
    const char *base, *end; /* bit i of mask: base[i] is a space, or base + i is end */
    uint64_t mask;
    const char *avail;      /* >= end: the end of the readable bytes (the chunk's), read 64 at a time */
};

__attribute__((always_inline)) static inline void nccl_words_fill(struct nccl_words *w, const char *at)
{
    size_t left = (size_t)(w->end - at);
    w->base = at;
    w->mask = 0;
    size_t lim = left < 64 ? left : 64, i = 0;
#if defined(__SSE2__) && !defined(NCCL_NO_SIMD)
    const __m128i sp = _mm_set1_epi8(' ');
    if (w->avail - at >= 64) { /* the bytes past end are masked off */
        for (; i < 64; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(at + i));
            w->mask |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, sp)) << i;
        }
        if (left < 64)
            w->mask = (w->mask & (((uint64_t)1 << left) - 1)) | (uint64_t)1 << left;
        return;
    }
    for (; i + 16 <= lim; i += 16) { /* the last bytes of a line too: only its tail of < 16 bytes byte by byte */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(at + i));
        w->mask |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, sp)) << i;
    }
#endif
    for (; i < lim; i++)
        if (at[i] == ' ')
            w->mask |= (uint64_t)1 << i;
    if (left < 64)
        w->mask |= (uint64_t)1 << left;
}

/* The end of the word at q (base <= q): the next space, or end. */
__attribute__((always_inline)) static inline const char *nccl_words_end(struct nccl_words *w, const char *q)
{
    for (;;) {
        if (q >= w->end)
            return w->end;
        if (q - w->base >= 64)
            nccl_words_fill(w, q);
        uint64_t m = w->mask & (~(uint64_t)0 << (q - w->base));
        if (m)
            return w->base + __builtin_ctzll(m);
        q = w->base + 64;
    }
}

/* Copy [s, end) trimmed into dst. */
static void nccl_copy(char *dst, size_t size, const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    size_t n = (size_t)(end - s);
    if (n >= size)
        n = size - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* 1 + the value of a digit in base 16 (0: none); '0'-'9' are base 10's too. */
static const unsigned char nccl_digit[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

__attribute__((always_inline)) static inline int nccl_u64(const char **p, const char *end, unsigned base,
                                                          uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    unsigned d;
    if (base == 16 && end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    const char *start = s;
    /* 15 digits never overflow 64 bits in base 10 or 16: no check (no division per digit either: that was
     * a third of the reader's time) */
    const char *fast = end - s > 15 ? s + 15 : end;
    while (s < fast && (d = nccl_digit[(unsigned char)*s] - 1u) < base) {
        v = v * base + d;
        s++;
    }
    for (; s < end && (d = nccl_digit[(unsigned char)*s] - 1u) < base; s++)
        if (__builtin_mul_overflow(v, (uint64_t)base, &v) || __builtin_add_overflow(v, (uint64_t)d, &v))
            return 0;
    if (s == start)
        return 0;
    *p = s;
    *out = v;
    return 1;
}

/* A decimal number at *p (< end), 8 digits a load: bytes whose xor with '0' is above 9 end it (the carries of
 * the add only reach bytes after the first such byte), the digits are combined by three multiplications (the
 * byte loop kept the value in memory: a tenth of the reader's time).  Needs 16 readable bytes from *p (avail);
 * the byte loop reads the rest: the same numbers, the same end. */
__attribute__((always_inline)) static inline int nccl_dec(const char **p, const char *end, const char *avail,
                                                          uint64_t *out)
{
    const char *s = *p;
    if (avail - s < 16 || end <= s)
        return nccl_u64(p, end, 10, out);
    unsigned d0 = (unsigned char)s[0] - '0', d1 = (unsigned char)s[1] - '0';
    if (d0 <= 9 && (d1 > 9 || end - s < 2)) { /* one digit (a datatype, a small communicator): no word */
        *p = s + 1;
        *out = d0;
        return 1;
    }
    uint64_t v = 0;
    for (int chunk = 0; chunk < 2; chunk++, s += 8) {
        uint64_t x;
        memcpy(&x, s, 8);
        uint64_t y = x ^ 0x3030303030303030ULL;
        uint64_t stop = ((y + 0x7676767676767676ULL) | y) & 0x8080808080808080ULL;
        if (end - s < 8)
            stop |= 0x80ULL << (8 * (end - s));
        unsigned nd = stop ? (unsigned)__builtin_ctzll(stop) / 8 : 8;
        if (nd) {
            static const uint64_t pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
            y <<= 8 * (8 - nd);
            y = y * 10 + (y >> 8);
            y = (((y & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
                 (((y >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
            v = v * pow10[nd] + y;
        }
        if (nd < 8) {
            if (!chunk && !nd)
                return 0;
            *p = s + nd;
            *out = v;
            return 1;
        }
    }
    return nccl_u64(p, end, 10, out); /* 16 digits or more: the loop, with its overflow checks */
}

/* ---- the reader --------------------------------------------------------------- */

/* size bytes (a multiple of NCCL_HUGE), zeroed, on 2 MiB pages where the kernel gives them (MADV_HUGEPAGE; else
 * 4 KiB pages as malloc's): the ring is written once per slot fill, and its 2,048 first-touch page faults were
 * a tenth of the reader's system time (a page fault is dear in a virtual machine). */
static void *nccl_huge_alloc(size_t size)
{
    char *m = mmap(NULL, size + NCCL_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    size_t lead = (NCCL_HUGE - (size_t)((uintptr_t)m % NCCL_HUGE)) % NCCL_HUGE;
    if (lead)
        munmap(m, lead);
    munmap(m + lead + size, NCCL_HUGE - lead);
#ifdef MADV_HUGEPAGE
    (void)madvise(m + lead, size, MADV_HUGEPAGE); /* advice: without it, ordinary pages */
#endif
    return m + lead;
}

static enum np_status nccl_local_init(struct nccl_local *l)
{
    memset(l, 0, sizeof *l);
    enum np_status st = nccl_set_init(&l->ranks);
    return st == NP_OK ? nccl_set_init(&l->hosts) : st;
}

static void nccl_local_free(struct nccl_local *l)
{
    free(l->ranks.v);
    free(l->hosts.v);
    free(l->granks);
    l->ranks.v = l->hosts.v = NULL;
    l->granks = NULL;
}

struct np_nccl *np_nccl_new(void)
{
    struct np_nccl *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    /* the generations (4 MiB) on the first collective line (nccl_add): a reader of init lines only (the report's
     * network notes, parse/run.c) never zeroes them */
    if (nccl_local_init(&n->loc) != NP_OK) {
        np_nccl_free(n);
        return NULL;
    }
    n->net.gdr = NP_NCCL_UNKNOWN;
    return n;
}

static enum np_status nccl_pipe_stop(struct np_nccl *n, int abandon);

void np_nccl_free(struct np_nccl *n)
{
    if (!n)
        return;
    (void)nccl_pipe_stop(n, 1);
    if (n->gens_huge)
        munmap(n->gens, NCCL_GENS);
    else
        free(n->gens);
    free(n->coll);
    nccl_local_free(&n->loc);
    free(n->granks_text);
    free(n);
}

/* The index of the collective named s (len bytes, cut to 23) in o; a new name takes the next index.  A full
 * table: the reader's puts a new name under "other" (its last index), a slot's answers -1. */
__attribute__((always_inline)) static inline int nccl_same(const char *x, const char *y, size_t len);

static int nccl_op_id(struct nccl_ops *o, const char *s, size_t len, int other)
{
    if (len >= sizeof o->name[0])
        len = sizeof o->name[0] - 1;
    if (o->last < o->n && o->name[o->last][len] == '\0' && nccl_same(o->name[o->last], s, len))
        return (int)o->last;
    for (size_t i = 0; i < o->n; i++)
        if (strncmp(o->name[i], s, len) == 0 && o->name[i][len] == '\0')
            return (int)(o->last = i);
    if (o->n >= NCCL_MAX_OPS - (other != 0)) {
        if (!other)
            return -1;
        if (o->n == NCCL_MAX_OPS - 1) {
            snprintf(o->name[o->n], sizeof o->name[0], "other");
            o->len[o->n++] = 5;
        }
        return (int)(o->last = NCCL_MAX_OPS - 1);
    }
    memcpy(o->name[o->n], s, len);
    o->name[o->n][len] = '\0';
    o->len[o->n] = (uint8_t)len;
    return (int)(o->last = o->n++);
}

static struct np_nccl_coll *nccl_coll(struct np_nccl *n, uint32_t nranks, int op)
{
    for (size_t i = 0; i < n->ncoll; i++)
        if (n->coll[i].nranks == (int)nranks && strcmp(n->coll[i].op, n->ops.name[op]) == 0)
            return &n->coll[i];
    if (n->ncoll == n->capcoll) {
        size_t cap = n->capcoll ? n->capcoll * 2 : 16;
        struct np_nccl_coll *nc = realloc(n->coll, cap * sizeof *nc);
        if (!nc)
            return NULL;
        n->coll = nc;
        n->capcoll = cap;
    }
    struct np_nccl_coll *c = &n->coll[n->ncoll++];
    memset(c, 0, sizeof *c);
    c->nranks = (int)nranks;
    snprintf(c->op, sizeof c->op, "%s", n->ops.name[op]);
    c->min_bytes = UINT64_MAX;
    return c;
}

static int nccl_bucket(uint64_t b)
{
    int k = 0;
    while (b > 1) {
        b >>= 1;
        k++;
    }
    return k;
}

/* Count a key's calls into its collective. */
static enum np_status nccl_count(struct np_nccl *n, const struct nccl_key *k)
{
    struct np_nccl_coll *c = nccl_coll(n, k->nranks, k->op);
    if (!c)
        return NP_E_NOMEM;
    uint64_t calls = (k->lines + k->nranks - 1) / k->nranks;
    c->calls += calls;
    c->lines += k->lines;
    int w = np_nccl_dtype_width(k->dtype, n->net.version, n->net.rccl);
    if (!w || (k->count && k->count > UINT64_MAX / (uint64_t)w)) {
        c->unknown_calls += calls;
        return NP_OK;
    }
    uint64_t size = k->count * (uint64_t)w;
    c->bytes += calls * size;
    if (size < c->min_bytes)
        c->min_bytes = size;
    if (size > c->max_bytes)
        c->max_bytes = size;
    c->hist[nccl_bucket(size)] += calls;
    return NP_OK;
}

static enum np_status nccl_flush_gen(struct np_nccl *n, struct nccl_gen *g)
{
    enum np_status st = NP_OK;
    for (size_t i = 0; i < NCCL_GEN_CAP && g->used; i++) { /* an empty one: its pages untouched */
        if (g->slot[i].nranks && g->slot[i].lines && st == NP_OK)
            st = nccl_count(n, &g->slot[i]);
        g->slot[i].nranks = 0;
    }
    g->used = 0;
    return st;
}

static size_t nccl_key_slot(const struct nccl_key *k)
{
    uint64_t h = nccl_mix(k->opcount * 0x9E3779B97F4A7C15ULL ^ k->count ^ ((uint64_t)k->nranks << 40) ^
                          ((uint64_t)k->op << 24) ^ k->dtype);
    return (size_t)h & (NCCL_GEN_CAP - 1);
}

static int nccl_key_eq(const struct nccl_key *a, const struct nccl_key *b)
{
    return a->opcount == b->opcount && a->count == b->count && a->nranks == b->nranks && a->op == b->op &&
           a->dtype == b->dtype;
}

static struct nccl_key *nccl_lookup(struct nccl_gen *g, const struct nccl_key *k, int insert)
{
    size_t i = nccl_key_slot(k);
    while (g->slot[i].nranks) {
        if (nccl_key_eq(&g->slot[i], k))
            return &g->slot[i];
        i = (i + 1) & (NCCL_GEN_CAP - 1);
    }
    if (!insert)
        return NULL;
    g->slot[i] = *k;
    g->slot[i].lines = 0;
    g->used++;
    return &g->slot[i];
}

/* lines more lines of the collective k. */
static enum np_status nccl_add(struct np_nccl *n, const struct nccl_key *k, uint64_t lines)
{
    if (!n->gens) {
        if (!(n->gens = calloc(2 * NCCL_GEN_CAP, sizeof(struct nccl_key))))
            return NP_E_NOMEM;
        n->gen[0].slot = n->gens;
        n->gen[1].slot = n->gens + NCCL_GEN_CAP;
    }
    if (n->last && nccl_key_eq(n->last, k)) {
        n->last->lines += lines;
        return NP_OK;
    }
    struct nccl_key *e = nccl_lookup(&n->gen[0], k, 0);
    if (!e) {
        uint64_t carried = 0;
        struct nccl_key *old = nccl_lookup(&n->gen[1], k, 0);
        if (old && old->lines) { /* seen in the old generation: it moves to the new one */
            carried = old->lines;
            old->lines = 0;
        }
        if (n->gen[0].used >= NCCL_GEN_FILL) { /* the new generation is full: the old one is counted */
            enum np_status st = nccl_flush_gen(n, &n->gen[1]);
            if (st != NP_OK)
                return st;
            struct nccl_gen t = n->gen[1];
            n->gen[1] = n->gen[0];
            n->gen[0] = t;
            n->last = NULL;
        }
        e = nccl_lookup(&n->gen[0], k, 1);
        e->lines = carried;
    }
    e->lines += lines;
    n->last = e; /* always in the new generation, which is only counted after a swap (that resets it) */
    return NP_OK;
}

/* ---- one line ------------------------------------------------------------------ */

/* The "host:pid:tid [dev]" prefix before "NCCL INFO" at info: the host into the host set and, for
 * a collective line (is_rank), host:pid [dev] or RCCL's globalrank into the rank set.  Ray/srun
 * labels and RCCL's timestamps before it are skipped. */
static void nccl_prefix(struct nccl_local *n, const char *line, const char *info, int is_rank, uint64_t grank,
                        int has_grank, uint64_t *pid)
{
    const char *e = info;
    while (e > line && e[-1] == ' ')
        e--;
    /* an RCCL timestamp "1558545003174220" between "[dev]" and "NCCL INFO" */
    const char *t = e;
    while (t > line && t[-1] >= '0' && t[-1] <= '9')
        t--;
    if (t < e && t > line && t[-1] == ' ' && t - 1 > line && t[-2] == ']')
        e = t - 1;
    const char *dev = NULL, *devend = NULL;
    if (e > line && e[-1] == ']') {
        const char *b = e - 1;
        while (b > line && b[-1] != '[')
            b--;
        if (b > line) {
            dev = b;
            devend = e - 1;
            e = b - 1;
            while (e > line && e[-1] == ' ')
                e--;
        }
    }
    const char *s = e;
    while (s > line && s[-1] != ' ' && s[-1] != ')' && s[-1] != ']')
        s--;
    /* s..e: "host:pid:tid" (or nothing) */
    const char *c1 = memchr(s, ':', (size_t)(e - s));
    uint64_t rank;
    if (has_grank)
        rank = nccl_mix(grank + 0x5bd1e995ULL);
    else {
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
        rank = nccl_hash(s, (size_t)((c2 ? c2 : e) - s), 0xcbf29ce484222325ULL);
        if (dev)
            rank = nccl_hash(dev, (size_t)(devend - dev), rank);
    }
    if (pid && c1) { /* "host:pid:tid": the pid */
        const char *d = c1 + 1;
        if (!nccl_u64(&d, e, 10, pid) || d >= e || *d != ':')
            *pid = 0;
    }
    if (is_rank)
        nccl_set_add(&n->ranks, rank, &n->saturated);
    if (c1 && c1 > s)
        nccl_set_add(&n->hosts, nccl_hash(s, (size_t)(c1 - s), 0x84222325cbf29ce4ULL), &n->saturated);
}

/* 1 when x and y hold the same len bytes: 8 at a time, the last 8 overlapping (no call: memcmp's was a tenth of
 * the threads' time). */
__attribute__((always_inline)) static inline int nccl_same(const char *x, const char *y, size_t len)
{
    uint64_t a, b;
    if (len < 8) {
        for (size_t i = 0; i < len; i++)
            if (x[i] != y[i])
                return 0;
        return 1;
    }
    for (size_t i = 0; i + 8 < len; i += 8) {
        memcpy(&a, x + i, 8), memcpy(&b, y + i, 8);
        if (a != b)
            return 0;
    }
    memcpy(&a, x + len - 8, 8), memcpy(&b, y + len - 8, 8);
    return a == b;
}

/* nccl_prefix of a collective line without globalrank, skipped when the same bytes before "NCCL INFO" were
 * read before: adding a rank or host to its set twice changes nothing (the ranks of a log repeat their
 * prefix on every line: reading it once each is a tenth of the reader's time saved). */
__attribute__((always_inline)) static inline void nccl_rank_prefix(struct nccl_local *n, const char *line,
                                                                   const char *info)
{
    size_t len = (size_t)(info - line);
    if (len > NCCL_SEEN_LEN) {
        nccl_prefix(n, line, info, 1, 0, 0, NULL);
        return;
    }
    uint64_t a = 0, b = 0;
    if (len >= 8) { /* constant lengths: two loads (a variable-length memcpy was a rep movsb, 15 % of the line) */
        memcpy(&a, line, 8);
        memcpy(&b, info - 8, 8);
    } else
        for (size_t i = 0; i < len; i++)
            a |= (uint64_t)(unsigned char)line[i] << (8 * i);
    size_t at = (size_t)nccl_mix(a ^ (b * 0x9E3779B97F4A7C15ULL) ^ len) & (NCCL_SEEN - NCCL_SEEN_WAYS), put = NCCL_SEEN;
    for (size_t i = at; i < at + NCCL_SEEN_WAYS; i++) {
        struct nccl_seen *e = &n->seen[i];
        if (e->len == len + 1 && nccl_same(e->bytes, line, len))
            return;
        if (!e->len && put == NCCL_SEEN)
            put = i;
    }
    nccl_prefix(n, line, info, 1, 0, 0, NULL);
    if (put == NCCL_SEEN) /* all four taken: one of them, in turn */
        put = at + (n->seen_turn++ % NCCL_SEEN_WAYS);
    n->seen[put].len = (uint8_t)(len + 1);
    memcpy(n->seen[put].bytes, line, len);
}

static void nccl_grank(struct nccl_local *n, uint64_t g)
{
    if (g >= NCCL_GRANKS_MAX)
        return;
    if (!n->granks && !(n->granks = calloc(NCCL_GRANKS_MAX / 8, 1)))
        return;
    n->granks[g / 8] |= (uint8_t)(1u << (g % 8));
}

/* The literal lit (n bytes) at q: the byte after it, or NULL. */
__attribute__((always_inline)) static inline const char *nccl_lit(const char *q, const char *end, const char *lit,
                                                                  size_t n)
{
    if ((size_t)(end - q) < n)
        return NULL;
    if (n >= 8 && n <= 16) { /* two overlapping words: no call (lit and n are constants here) */
        uint64_t a, b, c, d;
        memcpy(&a, q, 8), memcpy(&b, lit, 8), memcpy(&c, q + n - 8, 8), memcpy(&d, lit + n - 8, 8);
        return a == b && c == d ? q + n : NULL;
    }
    if (n >= 4 && n < 8) {
        uint32_t a, b, c, d;
        memcpy(&a, q, 4), memcpy(&b, lit, 4), memcpy(&c, q + n - 4, 4), memcpy(&d, lit + n - 4, 4);
        return a == b && c == d ? q + n : NULL;
    }
    return memcmp(q, lit, n) == 0 ? q + n : NULL;
}
#define NCCL_LIT(q, end, s) nccl_lit(q, end, s, sizeof s - 1)

/* A non-empty word at q: the space or end after it, or NULL. */
__attribute__((always_inline)) static inline const char *nccl_word(struct nccl_words *w, const char *q)
{
    if (!q || q >= w->end || *q == ' ')
        return NULL;
    return nccl_words_end(w, q);
}

/* The words after a collective line's opCount in the layout every NCCL 2 release prints (enqueue.cc:
 * " sendbuff P recvbuff P count N datatype D op O root R comm P [nranks=N]"), each word once and each
 * separated by one space: count, datatype and nranks into k and the byte after "]"; NULL when the line
 * differs in any way (then the key-value loop of nccl_trace reads it, to the same result on this layout). */
static const char *nccl_trace_head(struct nccl_words *w, const char *q, const char *end, struct nccl_key *k)
{
    uint64_t count, dtype, v;
    q = nccl_word(w, NCCL_LIT(q, end, " sendbuff "));
    q = q ? nccl_word(w, NCCL_LIT(q, end, " recvbuff ")) : NULL;
    if (!q || !(q = NCCL_LIT(q, end, " count ")) || !nccl_dec(&q, end, w->avail, &count))
        return NULL;
    if (!(q = NCCL_LIT(q, end, " datatype ")) || !nccl_dec(&q, end, w->avail, &dtype) || dtype >= 65535)
        return NULL;
    q = nccl_word(w, NCCL_LIT(q, end, " op "));
    q = q ? nccl_word(w, NCCL_LIT(q, end, " root ")) : NULL;
    q = q ? nccl_word(w, NCCL_LIT(q, end, " comm ")) : NULL;
    if (!q || !(q = NCCL_LIT(q, end, " [nranks=")) || !nccl_dec(&q, end, w->avail, &v) || v == 0 || v > UINT32_MAX ||
        q >= end || *q != ']' || (q + 1 < end && q[1] != ' '))
        return NULL;
    k->count = count;
    k->dtype = (uint16_t)dtype;
    k->nranks = (uint32_t)v;
    return q + 1;
}

/* 1 when [q, end) is " stream " and a word without a space, under 40 bytes (NCCL's usual tail after
 * "[nranks=N]"): one 32-byte compare, not the key-value loop (a third of the reading of such a line).  Needs 48
 * bytes readable from q (avail). */
__attribute__((always_inline)) static inline int nccl_stream_tail(const char *q, const char *end, const char *avail)
{
    if (end - q > 40 || avail - q < 48 || !NCCL_LIT(q, end, " stream "))
        return 0;
#if defined(__SSE2__) && !defined(NCCL_NO_SIMD)
    const __m128i sp = _mm_set1_epi8(' ');
    __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)(q + 8));
    __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(q + 24));
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(lo, sp)) |
                 (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(hi, sp)) << 16;
    size_t n = (size_t)(end - q - 8); /* <= 32 */
    return (n == 32 ? m : m & ((1u << n) - 1)) == 0;
#else
    return memchr(q + 8, ' ', (size_t)(end - q - 8)) == NULL;
#endif
}

/* The bytes of a collective's name: A-Z a-z 0-9 _ */
static const unsigned char nccl_ident[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
    ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
    ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['_'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
    ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1,
    ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

/* A collective line read: its key (op unset), its collective's name and RCCL's global rank. */
struct nccl_traced {
    struct nccl_key k;
    const char *opname;
    size_t oplen;
    int op;             /* the name's index in the table asked (nccl_trace_read's ops) when it is its last, else -1 */
    uint64_t grank;
    int has_grank;
};

/* "AllReduce: opCount 1a sendbuff .. count N datatype D op O root R comm C [nranks=N] stream S
 * [task T globalrank G]" from p (after "NCCL INFO ") into t; 0 when it is not such a line.  avail: the end of
 * the readable bytes (>= end).  Reads nothing but the line: the reader threads call it too. */
static int nccl_trace_read(const char *p, const char *end, const char *avail, const struct nccl_ops *ops,
                           struct nccl_traced *t)
{
    const char *colon = p;
    int op = -1;
    size_t ln;
    if (ops->last < ops->n && (ln = ops->len[ops->last]) < (size_t)(end - p) && p[ln] == ':' &&
        nccl_same(ops->name[ops->last], p, ln)) { /* the previous line's collective: its name's bytes, then ':' */
        colon = p + ln;
        op = (int)ops->last;
    } else {
        const char *lim = end - p > 24 ? p + 24 : end;
        while (colon < lim && nccl_ident[(unsigned char)*colon])
            colon++;
    }
    const char *opname = p, *opend = colon;
    const char *q;
    if (colon > p && colon < end && *colon == ':' && nccl_starts(colon, end, ": opCount "))
        q = colon + 10;
    else if (nccl_starts(p, end, "opCount ")) { /* NCCL 2.3: no collective name */
        opname = "unknown";
        opend = opname + 7;
        q = p + 8; /* (op stays -1: a name of the table is word bytes, then ':') */
    } else
        return 0;
    struct nccl_key k = {0};
    if (!nccl_u64(&q, end, 16, &k.opcount))
        return 0;
    int have_count = 0, have_dt = 0, have_nr = 0, has_grank = 0;
    uint64_t v, grank = 0;
    struct nccl_words w = {q, end, 0, avail > end ? avail : end};
    nccl_words_fill(&w, q);
    struct nccl_words hw = w; /* the head moves its copy on: the loop starts at q again when it fails */
    const char *head = nccl_trace_head(&hw, q, end, &k);
    if (head) { /* the words up to "[nranks=N]" read as the loop below would read them */
        q = head;
        w = hw;
        have_count = have_dt = have_nr = 1;
        if (nccl_stream_tail(q, end, w.avail))
            q = end; /* " stream S" and no more: nothing the loop would read */
    }
    while (q < end) { /* "key value" pairs, and "[nranks=N]" */
        while (q < end && *q == ' ')
            q++;
        if (nccl_starts(q, end, "[nranks=")) {
            q += 8;
            if (!nccl_u64(&q, end, 10, &v) || v == 0 || v > UINT32_MAX)
                return 0;
            k.nranks = (uint32_t)v;
            have_nr = 1;
            if (q < end && *q == ']')
                q++;
            continue;
        }
        const char *key = q;
        q = nccl_words_end(&w, q);
        size_t klen = (size_t)(q - key);
        while (q < end && *q == ' ')
            q++;
        const char *val = q;
        q = nccl_words_end(&w, q);
        const char *vp = val;
        if (klen < 5 || (*key != 'c' && *key != 'd' && *key != 'g'))
            continue; /* sendbuff, recvbuff, op, root, comm, stream, task: not read */
        if (klen == 5 && memcmp(key, "count", 5) == 0 && nccl_u64(&vp, q, 10, &v)) {
            k.count = v;
            have_count = 1;
        } else if (klen == 8 && memcmp(key, "datatype", 8) == 0 && nccl_u64(&vp, q, 10, &v) && v < 65535) {
            k.dtype = (uint16_t)v;
            have_dt = 1;
        } else if (klen == 10 && memcmp(key, "globalrank", 10) == 0 && nccl_u64(&vp, q, 10, &v)) {
            grank = v;
            has_grank = 1;
        }
    }
    if (!have_count || !have_dt || !have_nr)
        return 0;
    t->k = k;
    t->opname = opname;
    t->oplen = (size_t)(opend - opname);
    t->op = op;
    t->grank = grank;
    t->has_grank = has_grank;
    return 1;
}

/* What a collective line adds besides its key (into the reader's or a reader thread's own). */
__attribute__((always_inline)) static inline void nccl_trace_local(struct nccl_local *l, const char *line,
                                                                   const char *info, const struct nccl_traced *t)
{
    l->trace_lines++;
    if ((int)t->k.nranks > l->max_nranks)
        l->max_nranks = (int)t->k.nranks;
    if (t->has_grank) {
        nccl_grank(l, t->grank);
        nccl_prefix(l, line, info, 1, t->grank, 1, NULL);
    } else
        nccl_rank_prefix(l, line, info);
}

/* A collective line from p (after "NCCL INFO "), counted; 0 when it is not one. */
static int nccl_trace(struct np_nccl *n, const char *line, const char *info, const char *p, const char *end)
{
    struct nccl_traced t;
    if (!nccl_trace_read(p, end, n->avail, &n->ops, &t))
        return 0;
    t.k.op = (uint16_t)(t.op >= 0 ? t.op : nccl_op_id(&n->ops, t.opname, t.oplen, 1));
    if (nccl_add(n, &t.k, 1) != NP_OK)
        return -1;
    nccl_trace_local(&n->loc, line, info, &t);
    return 1;
}

/* The rank process pid holds in its largest communicator (the world); -2 when one process holds several
 * (one process driving many GPUs). */
static void nccl_pid_rank(struct np_nccl *n, uint64_t pid, int rank, int nranks)
{
    size_t i = (size_t)nccl_mix(pid) & (NCCL_PIDS - 1);
    for (size_t probe = 0; probe < NCCL_PIDS; probe++, i = (i + 1) & (NCCL_PIDS - 1)) {
        struct nccl_pidrank *e = &n->pids[i];
        if (e->pid == pid) {
            if (nranks > e->nranks) {
                e->rank = rank;
                e->nranks = nranks;
            } else if (nranks == e->nranks && rank != e->rank)
                e->rank = -2;
            return;
        }
        if (!e->pid) {
            if (n->npids >= NCCL_PIDS / 2)
                return; /* full: the rest stay unknown */
            *e = (struct nccl_pidrank){pid, rank, nranks};
            n->npids++;
            return;
        }
    }
}

int np_nccl_pid_rank(const struct np_nccl *n, uint64_t pid)
{
    size_t i = (size_t)nccl_mix(pid) & (NCCL_PIDS - 1);
    for (size_t probe = 0; pid && probe < NCCL_PIDS; probe++, i = (i + 1) & (NCCL_PIDS - 1)) {
        if (n->pids[i].pid == pid)
            return n->pids[i].rank;
        if (!n->pids[i].pid)
            break;
    }
    return -1;
}

/* An init line after "NCCL INFO ": network facts. */
static void nccl_init_line(struct np_nccl *n, const char *line, const char *info, const char *p, const char *end)
{
    const char *q;
    if (nccl_starts(p, end, "Using network ")) {
        nccl_copy(n->net.network, sizeof n->net.network, p + 14, end);
    } else if (nccl_starts(p, end, "NCCL version ") || nccl_starts(p, end, "RCCL version ")) {
        nccl_copy(n->net.version, sizeof n->net.version, p + 13, end);
        n->net.rccl = *p == 'R';
    } else if (nccl_starts(p, end, "NET/IB :") || nccl_starts(p, end, "NET/IB:")) {
        q = memchr(p, ':', (size_t)(end - p)) + 1;
        if (nccl_find(q, end, "No device found"))
            snprintf(n->net.ib, sizeof n->net.ib, "none");
        else if ((q = nccl_find(q, end, "Using "))) {
            const char *semi = memchr(q, ';', (size_t)(end - q));
            nccl_copy(n->net.ib, sizeof n->net.ib, q + 6, semi ? semi : end);
        }
    } else if (nccl_starts(p, end, "NET/Plugin") || nccl_starts(p, end, "Plugin Path") ||
               nccl_starts(p, end, "Loaded net plugin") || nccl_starts(p, end, "Initialized NET plugin") ||
               nccl_starts(p, end, "P2P plugin")) {
        if (nccl_starts(p, end, "NET/Plugin")) {
            const char *ret = nccl_find(p, end, "returned");
            int benign = nccl_find(p, end, "No such file or directory") != NULL;
            if ((ret && !benign) || nccl_find(p, end, "Failed") || nccl_find(p, end, "failed")) {
                n->net.plugin_failed = 1;
                nccl_copy(n->net.plugin_error, sizeof n->net.plugin_error, p, end);
            } else if ((nccl_find(p, end, "No plugin found") || nccl_find(p, end, "Could not find")) &&
                       !n->net.plugin[0])
                snprintf(n->net.plugin, sizeof n->net.plugin, "none");
            else if ((q = nccl_find(p, end, "Loaded net plugin ")))
                nccl_copy(n->net.plugin, sizeof n->net.plugin, q + 18, end);
        } else if (nccl_starts(p, end, "Plugin Path")) {
            q = memchr(p, ':', (size_t)(end - p));
            if (q)
                nccl_copy(n->net.plugin, sizeof n->net.plugin, q + 1, end);
        } else if (nccl_starts(p, end, "Loaded net plugin "))
            nccl_copy(n->net.plugin, sizeof n->net.plugin, p + 18, end);
        else if (nccl_starts(p, end, "P2P plugin ") && (!n->net.plugin[0] || !strcmp(n->net.plugin, "none")))
            nccl_copy(n->net.plugin, sizeof n->net.plugin, p + 11, end);
    } else if ((q = nccl_find(p, end, "GPU Direct RDMA "))) {
        if (nccl_starts(q + 16, end, "Disabled"))
            n->net.gdr = NP_NCCL_NO;
        else if (nccl_starts(q + 16, end, "Enabled") && n->net.gdr != NP_NCCL_NO)
            n->net.gdr = NP_NCCL_YES;
    } else if (nccl_starts(p, end, "Channel ") || nccl_starts(p, end, "Ring ")) {
        if (nccl_find(p, end, "via NET/Socket"))
            n->net.socket_channels = 1;
        if (nccl_find(p, end, "/GDRDMA") && n->net.gdr == NP_NCCL_UNKNOWN)
            n->net.gdr = NP_NCCL_YES;
    }
    /* "comm 0x.. rank R nRanks N nNodes M ..." (2.1x on) or "... nranks N ..." (older) */
    if ((q = nccl_find(p, end, " nNodes "))) {
        const char *v = q + 8;
        uint64_t x;
        if (nccl_u64(&v, end, 10, &x) && x < 1000000 && (int)x > n->net.nnodes)
            n->net.nnodes = (int)x;
    }
    if ((q = nccl_find(p, end, " nRanks ")) || (q = nccl_find(p, end, " nranks "))) {
        const char *v = q + 8;
        uint64_t x;
        if (nccl_u64(&v, end, 10, &x) && x < 100000000 && (int)x > n->loc.max_nranks)
            n->loc.max_nranks = (int)x;
    }
    uint64_t pid = 0;
    nccl_prefix(&n->loc, line, info, 0, 0, 0, &pid);
    /* "comm 0x.. rank R nranks N" (init, 2.4 on) or "... rank R nRanks N nNodes M" (2.12 on): the process's rank */
    const char *r = nccl_find(p, end, " rank ");
    uint64_t rk, nr;
    if (pid && r && (r += 6, nccl_u64(&r, end, 10, &rk)) &&
        (nccl_starts(r, end, " nranks ") || nccl_starts(r, end, " nRanks ")) && (r += 8, nccl_u64(&r, end, 10, &nr)) &&
        rk < nr && nr < 100000000)
        nccl_pid_rank(n, pid, (int)rk, (int)nr);
}

/* NeMo's "Global Checkpoint Save : ... : Save duration: 4.389s" and
 * "Global Checkpoint Load : ... : Time spent in load_checkpoint: 9.712s". */
static void nccl_ckpt_line(struct np_nccl *n, const char *p, const char *end)
{
    int save = nccl_starts(p, end, "Global Checkpoint Save");
    const char *q = nccl_find(p, end, save ? "Save duration:" : "load_checkpoint:");
    if (!q)
        return;
    q += save ? 14 : 16;
    char num[32];
    nccl_copy(num, sizeof num, q, end);
    char *e;
    double s = strtod(num, &e);
    if (e == num || !(s >= 0) || s > 1e9)
        return;
    if (save) {
        n->ckpt.saves++;
        n->ckpt.save_s += s;
        if (s > n->ckpt.save_max_s)
            n->ckpt.save_max_s = s;
    } else {
        n->ckpt.loads++;
        n->ckpt.load_s += s;
        if (s > n->ckpt.load_max_s)
            n->ckpt.load_max_s = s;
    }
}

/* A line whose first "CCL " is at c (c + 4 <= end). */
static enum np_status nccl_line_ccl(struct np_nccl *n, const char *s, const char *c, const char *end)
{
    if (c > s && (c[-1] == 'N' || c[-1] == 'R')) {
        const char *after = c + 4;
        if (nccl_starts(after, end, "INFO ")) {
            const char *p = after + 5;
            int r = nccl_trace(n, s, c - 1, p, end);
            if (r < 0)
                return NP_E_NOMEM;
            if (r == 0)
                nccl_init_line(n, s, c - 1, p, end);
            return NP_OK;
        }
        if (nccl_starts(after, end, "version ")) { /* "NCCL version 2.7.8+cuda10.2" alone on its line */
            nccl_copy(n->net.version, sizeof n->net.version, after + 8, end);
            n->net.rccl = c[-1] == 'R';
        }
    }
    return NP_OK;
}

/* ---- finding the lines to read ------------------------------------------------- */

/* 1 when a needle starts at q (q < end): "CCL " (NCCL/RCCL lines), "Global Checkpoint ", or a straggler
 * detector's (straggler.h). */
__attribute__((always_inline)) static inline int nccl_needle_at(const char *q, const char *end)
{
    switch (*q) {
    case 'C': return nccl_starts(q, end, "CCL ");
    case 'G': return nccl_starts(q, end, "Global Checkpoint ");
    case '/': case 'E': case 'R': case 'p': case 'S': return np_straggler_needle(q, end);
    default: return 0;
    }
}

#if defined(__SSE2__) && !defined(NCCL_NO_SIMD)
/* The first needle at or after p starting before end: 16 positions at a time test two bytes of each
 * needle ('C' and 'L' two apart for "CCL ", 'G' and 'k' eleven apart for "Global Checkpoint ", and
 * four apart: "/Rnk:", "Etpt(", "Rank=", "perfo", "STRAG"), so the bytes of the lines that hold none
 * are read once, at vector speed (like scan.c's prefilter); nccl_needle_at confirms. */
static const char *nccl_next(const char *p, const char *end)
{
    const __m128i c_C = _mm_set1_epi8('C'), c_L = _mm_set1_epi8('L'), c_G = _mm_set1_epi8('G'),
                  c_k = _mm_set1_epi8('k'), c_sl = _mm_set1_epi8('/'), c_co = _mm_set1_epi8(':'),
                  c_E = _mm_set1_epi8('E'), c_pa = _mm_set1_epi8('('), c_R = _mm_set1_epi8('R'),
                  c_eq = _mm_set1_epi8('='), c_p = _mm_set1_epi8('p'), c_o = _mm_set1_epi8('o'),
                  c_S = _mm_set1_epi8('S');
    while (end - p >= 32) { /* loads at p, p + 2, p + 4 and p + 11 */
        __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 2));
        __m128i v4 = _mm_loadu_si128((const __m128i *)(const void *)(p + 4));
        __m128i v11 = _mm_loadu_si128((const __m128i *)(const void *)(p + 11));
        __m128i m = _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(v0, c_C), _mm_cmpeq_epi8(v2, c_L)),
                                 _mm_and_si128(_mm_cmpeq_epi8(v0, c_G), _mm_cmpeq_epi8(v11, c_k)));
        __m128i s4 = _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(v0, c_sl), _mm_cmpeq_epi8(v4, c_co)),
                                  _mm_and_si128(_mm_cmpeq_epi8(v0, c_E), _mm_cmpeq_epi8(v4, c_pa)));
        s4 = _mm_or_si128(s4, _mm_and_si128(_mm_cmpeq_epi8(v0, c_R), _mm_cmpeq_epi8(v4, c_eq)));
        s4 = _mm_or_si128(s4, _mm_and_si128(_mm_cmpeq_epi8(v0, c_p), _mm_cmpeq_epi8(v4, c_o)));
        s4 = _mm_or_si128(s4, _mm_and_si128(_mm_cmpeq_epi8(v0, c_S), _mm_cmpeq_epi8(v4, c_G)));
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_or_si128(m, s4));
        while (mask) {
            const char *q = p + __builtin_ctz(mask);
            mask &= mask - 1;
            if (nccl_needle_at(q, end))
                return q;
        }
        p += 16;
    }
    for (; p < end; p++)
        if (nccl_needle_at(p, end))
            return p;
    return NULL;
}
#else
static const char *nccl_next(const char *p, const char *end)
{
    for (; p < end; p++)
        if (nccl_needle_at(p, end))
            return p;
    return NULL;
}
#endif

/* A line [ls, lend) whose first needle is at hit; off: the line's offset in the log. */
static enum np_status nccl_dispatch(struct np_nccl *n, const char *ls, const char *hit, const char *lend, uint64_t off)
{
    if (*hit == 'C' && hit + 4 <= lend)
        return nccl_line_ccl(n, ls, hit, lend);
    const char *c = nccl_find(hit, lend, "CCL "); /* a "CCL " after another needle: an NCCL line */
    if (c)
        return nccl_line_ccl(n, ls, c, lend);
    if (*hit == 'G') {
        nccl_ckpt_line(n, hit, lend);
    } else if (np_straggler_needle(hit, lend)) { /* a report's lines follow each other */
        np_straggler_line(&n->strag, ls, hit, lend, n->strag_next && off == n->strag_next);
        n->strag_next = off + (uint64_t)(lend - ls) + 1;
    }
    return NP_OK;
}

/* The line [s, le) of [*p, e) (le NULL: none before e, the line ends at e) as the reader takes it: from s, cut at
 * NCCL_LINE_MAX bytes (*lend); *p moves past its '\n'; marked (or NULL) set to 1 when the line has no '\n' or is
 * cut (the scanner reads such a line whatever it holds). */
__attribute__((always_inline)) static inline void nccl_line_take(const char **p, const char *e, const char *s,
                                                                 const char *le, const char **ls, const char **lend,
                                                                 int *marked)
{
    if (!le) {
        le = e;
        if (marked)
            *marked = 1;
    }
    *ls = s;
    *lend = le - s > NCCL_LINE_MAX ? s + NCCL_LINE_MAX : le;
    if (marked && *lend != le)
        *marked = 1;
    *p = le + 1;
}

/* The next line of whole lines [*p, e) holding a needle within its first NCCL_LINE_MAX bytes: its start, first
 * needle and end (cut there); *p moves past it.  0 when none is left.  marked (the reader threads; else NULL):
 * set to 0 when the line ends with a '\n' before e, is not cut and holds no mark of the step scanner's
 * (np_scan_marked: then it holds no needle of the scanner's either), else 1. */
__attribute__((always_inline)) static inline int nccl_next_line(const char **p, const char *e, const char **ls,
                                                                const char **hit, const char **lend, int *marked)
{
    while (*p < e && (*hit = nccl_next(*p, e)) != NULL) {
        const char *s = memrchr(*p, '\n', (size_t)(*hit - *p));
        s = s ? s + 1 : *p;
        const char *le = marked ? np_scan_line_end(s, e, marked) : memchr(*hit, '\n', (size_t)(e - *hit));
        nccl_line_take(p, e, s, le, ls, lend, marked);
        if (*hit < *lend)
            return 1;
    }
    return 0;
}

#ifdef NCCL_HAVE_AVX2
static int nccl_use_avx2; /* the reader threads frame lines with AVX2: set once (nccl_cpu_init), or by np_nccl_avx2 */
static pthread_once_t nccl_cpu_once = PTHREAD_ONCE_INIT;
static void nccl_cpu_init(void) { nccl_use_avx2 = __builtin_cpu_supports("avx2") != 0; }

/* The bytes nccl_line_avx2 compares with, 32 of each: set once a slot (nccl_slot_lines_avx2) and hidden from
 * the compiler there, so that its compares read them from memory (it had rebuilt in the loop each constant it
 * had no register for, three instructions each, and all of them at each line's call). */
struct nccl_avx2_k {
    __m256i C, L, G, k, sl, co, E, pa, R, eq, p, o, S, nl, ma, mb, a0, a1, b0, b1;
};

__attribute__((target("avx2"))) static void nccl_avx2_k_init(struct nccl_avx2_k *k)
{
    k->C = _mm256_set1_epi8('C'), k->L = _mm256_set1_epi8('L'), k->G = _mm256_set1_epi8('G');
    k->k = _mm256_set1_epi8('k'), k->sl = _mm256_set1_epi8('/'), k->co = _mm256_set1_epi8(':');
    k->E = _mm256_set1_epi8('E'), k->pa = _mm256_set1_epi8('('), k->R = _mm256_set1_epi8('R');
    k->eq = _mm256_set1_epi8('='), k->p = _mm256_set1_epi8('p'), k->o = _mm256_set1_epi8('o');
    k->S = _mm256_set1_epi8('S'), k->nl = _mm256_set1_epi8('\n');
    k->ma = _mm256_set1_epi8(NP_SCAN_MARK_A), k->mb = _mm256_set1_epi8(NP_SCAN_MARK_B);
    k->a0 = _mm256_set1_epi8(NP_SCAN_PAIR_A0), k->a1 = _mm256_set1_epi8(NP_SCAN_PAIR_A1);
    k->b0 = _mm256_set1_epi8(NP_SCAN_PAIR_B0), k->b1 = _mm256_set1_epi8(NP_SCAN_PAIR_B1);
}

/* The marks of the step scanner's starting at the 32 positions of v0 (v1: the bytes one further): scan.h's */
__attribute__((target("avx2"), always_inline)) static inline __m256i nccl_marks_avx2(const struct nccl_avx2_k *k,
                                                                                    __m256i v0, __m256i v1)
{
    __m256i m = _mm256_or_si256(_mm256_cmpeq_epi8(v0, k->ma), _mm256_cmpeq_epi8(v0, k->mb));
    m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(v0, k->a0), _mm256_cmpeq_epi8(v1, k->a1)));
    return _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(v0, k->b0), _mm256_cmpeq_epi8(v1, k->b1)));
}

/* The line from p (its start, < e; e[-1] is a '\n': whole lines, so no byte past e is taken for the line's): its
 * '\n', in *hit its first needle before that (NULL: none) and in *marked whether it holds a mark of the step
 * scanner's (np_scan_line_end's answer): nccl_next's tests, the '\n's and the marks in one pass of 32 positions
 * a step, the needles' only until the first is found, then the '\n's and the marks alone (nccl_next, memrchr
 * and np_scan_line_end read the line's start twice and its rest once more).  Reads up to 44 bytes past e. */
__attribute__((target("avx2"), always_inline)) static inline const char *nccl_line_avx2(const struct nccl_avx2_k *k,
                                                                                       const char *p, const char *e,
                                                                                       const char **hit, int *marked)
{
    const char *h = NULL;
    int mk = 0;
    for (const char *q = p; q < e; q += 32) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)q);
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 1));
        unsigned nl = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, k->nl));
        unsigned mm = (unsigned)_mm256_movemask_epi8(nccl_marks_avx2(k, v0, v1));
        unsigned before = nl ? (1u << __builtin_ctz(nl)) - 1 : ~0u; /* the positions before the line's end (<= e) */
        if (!h) { /* nccl_next's pairs */
            __m256i v2 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 2));
            __m256i v4 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 4));
            __m256i v11 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 11));
            __m256i c = _mm256_or_si256(_mm256_and_si256(_mm256_cmpeq_epi8(v0, k->C), _mm256_cmpeq_epi8(v2, k->L)),
                                        _mm256_and_si256(_mm256_cmpeq_epi8(v0, k->G), _mm256_cmpeq_epi8(v11, k->k)));
            __m256i s4 = _mm256_or_si256(_mm256_and_si256(_mm256_cmpeq_epi8(v0, k->sl), _mm256_cmpeq_epi8(v4, k->co)),
                                         _mm256_and_si256(_mm256_cmpeq_epi8(v0, k->E), _mm256_cmpeq_epi8(v4, k->pa)));
            s4 = _mm256_or_si256(s4, _mm256_and_si256(_mm256_cmpeq_epi8(v0, k->R), _mm256_cmpeq_epi8(v4, k->eq)));
            s4 = _mm256_or_si256(s4, _mm256_and_si256(_mm256_cmpeq_epi8(v0, k->p), _mm256_cmpeq_epi8(v4, k->o)));
            s4 = _mm256_or_si256(s4, _mm256_and_si256(_mm256_cmpeq_epi8(v0, k->S), _mm256_cmpeq_epi8(v4, k->G)));
            for (unsigned cm = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(c, s4)) & before; cm; cm &= cm - 1)
                if (nccl_needle_at(q + __builtin_ctz(cm), e)) {
                    h = q + __builtin_ctz(cm);
                    break;
                }
        }
        if (nl) {
            *marked = mk || (mm & before) != 0;
            *hit = h;
            return q + __builtin_ctz(nl);
        }
        mk |= mm != 0;
        if (h) { /* the needle found: the rest of the line for its '\n' and marks only, those of the blocks before
                  * the last one gathered in a vector */
            __m256i acc = _mm256_setzero_si256();
            for (q += 32; q < e; q += 32) {
                v0 = _mm256_loadu_si256((const __m256i *)(const void *)q);
                v1 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 1));
                nl = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, k->nl));
                __m256i m = nccl_marks_avx2(k, v0, v1);
                if (nl) {
                    mm = (unsigned)_mm256_movemask_epi8(m) & ((1u << __builtin_ctz(nl)) - 1);
                    *marked = mk || mm || !_mm256_testz_si256(acc, acc);
                    *hit = h;
                    return q + __builtin_ctz(nl);
                }
                acc = _mm256_or_si256(acc, m);
            }
            mk |= !_mm256_testz_si256(acc, acc);
            break;
        }
    }
    *marked = mk;
    *hit = h;
    return NULL;
}
#endif

int np_nccl_avx2(int on)
{
#ifdef NCCL_HAVE_AVX2
    pthread_once(&nccl_cpu_once, nccl_cpu_init);
    if (on >= 0)
        nccl_use_avx2 = on && __builtin_cpu_supports("avx2") != 0;
    return nccl_use_avx2;
#else
    (void)on;
    return 0;
#endif
}

/* Whole lines [p, e) (e[-1] == '\n') starting at offset off: only those holding a needle are read,
 * from the first needle on (no needle starts before it in its line), up to NCCL_LINE_MAX bytes. */
static enum np_status nccl_lines(struct np_nccl *n, const char *p, const char *e, uint64_t off)
{
    const char *base = p, *ls, *hit, *lend;
    while (nccl_next_line(&p, e, &ls, &hit, &lend, NULL)) {
        enum np_status st = nccl_dispatch(n, ls, hit, lend, off + (uint64_t)(ls - base));
        if (st != NP_OK)
            return st;
    }
    return NP_OK;
}

static enum np_status nccl_feed_inline(struct np_nccl *n, const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    enum np_status st = NP_OK;
    n->avail = n->line + NCCL_LINE_MAX;
    if (n->linelen && p < end) { /* the rest of a line begun in an earlier chunk */
        const char *nl = memchr(p, '\n', len);
        const char *stop = nl ? nl : end;
        size_t take = (size_t)(stop - p);
        if (take > NCCL_LINE_MAX - n->linelen)
            take = NCCL_LINE_MAX - n->linelen;
        memcpy(n->line + n->linelen, p, take);
        n->linelen += take;
        if (!nl) {
            n->fed += len;
            return NP_OK;
        }
        const char *hit = nccl_next(n->line, n->line + n->linelen);
        if (hit)
            st = nccl_dispatch(n, n->line, hit, n->line + n->linelen, n->line_off);
        n->linelen = 0;
        p = nl + 1;
    }
    const char *last = st == NP_OK && p < end ? memrchr(p, '\n', (size_t)(end - p)) : NULL;
    if (last) {
        n->avail = end;
        st = nccl_lines(n, p, last + 1, n->fed + (uint64_t)(p - buf));
        p = last + 1;
    }
    if (st == NP_OK && p < end) { /* a line the next chunk ends: its first NCCL_LINE_MAX bytes */
        size_t take = (size_t)(end - p) > NCCL_LINE_MAX ? NCCL_LINE_MAX : (size_t)(end - p);
        memcpy(n->line, p, take);
        n->linelen = take;
        n->line_off = n->fed + (uint64_t)(p - buf);
    }
    n->fed += len;
    return st;
}


/* ---- the reader threads --------------------------------------------------------- */

/* np_nccl_async: the feeder (np_nccl_feed's caller) copies the log into a ring of slots that end at a line's
 * end (or has it read there: np_nccl_lend); reader threads, one a core but the feeder's (two at most), each take
 * the next slot and read its lines into records (runs of one collective's lines, keyed as nccl_add keys them, and
 * the lines that need the reader's state: init, version, checkpoint and straggler lines) and into the step
 * scanner's share (the bytes but the lines without a mark of the scanner's: np_scan_marked); the slots read are
 * applied to the reader in their order, one at a time, by whichever thread finds the next one read (the others
 * go on reading): nccl_add for a run, nccl_dispatch for a line, then the scanner's share.  The feeder does the
 * same while it waits for a free slot: a thread a core, none asleep while a core is free.  The reader's state
 * changes in the order of the log's lines, as inline; what the threads add on their own (nccl_local) is merged
 * at the end.  The same result as inline. */
#define NCCL_WORKERS 2
#define NCCL_SLOTS 8
#define NCCL_SLOT_PAD 64 /* readable bytes past a slot's end: the 64-byte word masks load them */
#define NCCL_SLOT_SIZE (((size_t)1 << 20) - NCCL_SLOT_PAD) /* a slot and its pad: 1 MiB of the ring */
#define NCCL_RING (NCCL_SLOTS * (NCCL_SLOT_SIZE + NCCL_SLOT_PAD)) /* 8 MiB: four 2 MiB pages */

struct nccl_rec {
    struct nccl_key k;      /* a run: k.op the slot's name index, k.lines its lines; k.nranks 0: a line */
    uint32_t ls, hit, lend; /* a line for the reader: offsets in the slot */
};

struct nccl_slot {
    char *buf;      /* NCCL_SLOT_SIZE + NCCL_SLOT_PAD bytes of the ring */
    size_t len;
    uint64_t base;  /* the log's offset of buf[0] */
    int open_end;   /* its last line has no newline (a line cut at NCCL_LINE_MAX, or the log's last) */
    int read;       /* read into rec by a thread, not applied yet */
    enum np_status st;
    struct nccl_rec *rec;
    size_t nrec, caprec;
    uint32_t *seg;  /* the step scanner's share (np_nccl_defer_scan): [seg[2i], seg[2i+1]) of buf, in order: the
                       lines read that hold no mark of the scanner's are left out (most of an NCCL trace) */
    size_t nseg, capseg;
    struct nccl_ops ops;
};

struct nccl_worker {
    struct nccl_pipe *pp;
    pthread_t thread;
    struct nccl_local loc;
};

struct nccl_pipe {
    struct np_nccl *n;
    struct nccl_worker worker[NCCL_WORKERS];
    size_t nthreads;
    struct nccl_local feeder;     /* what the feeder reads while it waits for a free slot */
    pthread_mutex_t mu;
    pthread_cond_t moved;         /* any change below */
    char *ring;                   /* the slots' buffers, one after the other */
    struct nccl_slot slot[NCCL_SLOTS];
    size_t head, taken, applied;  /* slots filled, taken by a thread, applied: slot head % NCCL_SLOTS is the feeder's */
    int applying;                 /* a thread applies slot applied */
    int closing, abandon;
    enum np_status status;        /* the threads' first error */
    int skipping;                 /* the feeder drops the rest of a line cut at NCCL_LINE_MAX */
    /* np_nccl_defer_scan: the log's bytes handed to scan in the log's order (but whole lines without a mark of the
     * scanner's), a slot's when it is applied, the rest of a cut line by the feeder once every slot before it is
     * applied */
    void (*scan)(void *scan_ctx, const char *bytes, size_t n, uint64_t off);
    void *scan_ctx;
};

/* Room in *v (cap elements of size bytes) for element n: doubled from 256 when full; 0 when out of memory. */
static int nccl_room(void *v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 1;
    size_t c = *cap ? *cap * 2 : 256;
    void *nv = realloc(*(void **)v, c * size);
    if (!nv)
        return 0;
    *(void **)v = nv;
    *cap = c;
    return 1;
}

static enum np_status nccl_slot_push(struct nccl_slot *s, const struct nccl_rec *r)
{
    if (!nccl_room(&s->rec, &s->caprec, s->nrec, sizeof *s->rec))
        return NP_E_NOMEM;
    s->rec[s->nrec++] = *r;
    return NP_OK;
}

/* The scanner's share of slot s goes on with its bytes [from, to) (nothing when empty: lines left out in a row). */
static enum np_status nccl_slot_seg(struct nccl_slot *s, size_t from, size_t to)
{
    if (from == to)
        return NP_OK;
    if (!nccl_room(&s->seg, &s->capseg, 2 * s->nseg + 1, sizeof *s->seg))
        return NP_E_NOMEM;
    s->seg[2 * s->nseg] = (uint32_t)from;
    s->seg[2 * s->nseg + 1] = (uint32_t)to;
    s->nseg++;
    return NP_OK;
}

/* A line of slot s [ls, lend) whose first needle is at hit, as nccl_dispatch would read it: a collective line
 * joins the runs (its ranks, hosts and lines into l), any other line is kept for the reader. */
static enum np_status nccl_slot_line(struct nccl_slot *s, struct nccl_local *l, const char *ls, const char *hit,
                                     const char *lend, const char *avail)
{
    const char *c = *hit == 'C' && hit + 4 <= lend ? hit : nccl_find(hit, lend, "CCL ");
    struct nccl_traced t;
    int op;
    if (c && c > ls && (c[-1] == 'N' || c[-1] == 'R') && nccl_starts(c + 4, lend, "INFO ") &&
        nccl_trace_read(c + 9, lend, avail, &s->ops, &t) &&
        (op = t.op >= 0 ? t.op : nccl_op_id(&s->ops, t.opname, t.oplen, 0)) >= 0) {
        t.k.op = (uint16_t)op;
        nccl_trace_local(l, ls, c - 1, &t);
        struct nccl_rec *last = s->nrec ? &s->rec[s->nrec - 1] : NULL;
        if (last && last->k.nranks && nccl_key_eq(&last->k, &t.k)) {
            last->k.lines++;
            return NP_OK;
        }
        t.k.lines = 1;
        return nccl_slot_push(s, &(struct nccl_rec){.k = t.k});
    }
    return nccl_slot_push(s, &(struct nccl_rec){.ls = (uint32_t)(ls - s->buf), .hit = (uint32_t)(hit - s->buf),
                                                .lend = (uint32_t)(lend - s->buf)});
}

/* The line [ls, lend) of slot s whose first needle is at hit (nccl_slot_line) and the scanner's share: left out
 * when the line holds no mark of the scanner's (marked 0: [ls, lend] and its '\n' are nothing for it). */
__attribute__((always_inline)) static inline enum np_status nccl_slot_take(struct nccl_slot *s, struct nccl_local *l,
                                                                           const char *ls, const char *hit,
                                                                           const char *lend, const char *avail,
                                                                           int marked, size_t *from)
{
    enum np_status st = nccl_slot_line(s, l, ls, hit, lend, avail);
    if (!marked && st == NP_OK) {
        st = nccl_slot_seg(s, *from, (size_t)(ls - s->buf));
        *from = (size_t)(lend + 1 - s->buf);
    }
    return st;
}

#ifdef NCCL_HAVE_AVX2
/* nccl_slot_read's whole lines [buf, whole) (whole[-1] is a '\n'), framed by nccl_line_avx2. */
__attribute__((target("avx2"))) static enum np_status nccl_slot_lines_avx2(struct nccl_slot *s, struct nccl_local *l,
                                                                          const char *whole, const char *avail,
                                                                          size_t *from)
{
    struct nccl_avx2_k k;
    nccl_avx2_k_init(&k);
    __asm__("" : "+m"(k)); /* its values unknown to the compiler from here: read from memory (nccl_avx2_k) */
    enum np_status st = NP_OK;
    const char *p = s->buf, *ls, *hit, *lend;
    int marked;
    while (st == NP_OK && p < whole) { /* nccl_line_avx2 sets hit and marked */
        nccl_line_take(&p, whole, p, nccl_line_avx2(&k, p, whole, &hit, &marked), &ls, &lend, &marked);
        if (hit && hit < lend)
            st = nccl_slot_take(s, l, ls, hit, lend, avail, marked, from);
    }
    return st;
}
#endif

/* Read slot s into its records (a reader thread, l its own), the lines as nccl_lines and np_nccl_finish read
 * them: whole lines up to NCCL_LINE_MAX bytes, an open last line from its first NCCL_LINE_MAX bytes. */
static enum np_status nccl_slot_read(struct nccl_slot *s, struct nccl_local *l)
{
    s->nrec = s->nseg = 0;
    s->ops.n = s->ops.last = 0;
    const char *p = s->buf, *e = s->buf + s->len, *avail = e + NCCL_SLOT_PAD, *ls, *hit, *lend, *whole = e;
    if (s->open_end) {
        const char *nl = memrchr(s->buf, '\n', s->len);
        whole = nl ? nl + 1 : s->buf;
    }
    enum np_status st = NP_OK;
    size_t from = 0; /* where the scanner's share goes on */
    int marked;
#ifdef NCCL_HAVE_AVX2
    if (nccl_use_avx2 && whole > p && whole[-1] == '\n') {
        st = nccl_slot_lines_avx2(s, l, whole, avail, &from);
        p = whole;
    }
#endif
    while (st == NP_OK && nccl_next_line(&p, whole, &ls, &hit, &lend, &marked))
        st = nccl_slot_take(s, l, ls, hit, lend, avail, marked, &from);
    if (st == NP_OK && whole < e) {
        lend = e - whole > NCCL_LINE_MAX ? whole + NCCL_LINE_MAX : e;
        if ((hit = nccl_next(whole, lend)) != NULL)
            st = nccl_slot_line(s, l, whole, hit, lend, avail);
    }
    return st == NP_OK ? nccl_slot_seg(s, from, s->len) : st;
}

/* Apply slot s's records to the reader (in the slots' order, one thread at a time). */
static enum np_status nccl_slot_apply(struct np_nccl *n, struct nccl_slot *s)
{
    enum np_status st = NP_OK;
    n->avail = s->buf + s->len + NCCL_SLOT_PAD;
    for (size_t i = 0; i < s->nrec && st == NP_OK; i++) {
        const struct nccl_rec *r = &s->rec[i];
        if (r->k.nranks) {
            struct nccl_key k = r->k;
            const char *name = s->ops.name[r->k.op];
            k.op = (uint16_t)nccl_op_id(&n->ops, name, strlen(name), 1);
            st = nccl_add(n, &k, r->k.lines);
        } else
            st = nccl_dispatch(n, s->buf + r->ls, s->buf + r->hit, s->buf + r->lend, s->base + r->ls);
    }
    return st;
}

/* One piece of the threads' work, pp->mu held (and held again on return): apply the next slot in order if it is
 * read and nobody applies, else read the next filled slot into loc; 0 when there is neither.  The reader
 * threads loop on it; the feeder calls it instead of waiting for a free slot (two threads, not three, share two
 * cores: no thread sleeps while another waits for a core). */
static int nccl_pipe_work(struct nccl_pipe *pp, struct nccl_local *loc)
{
    struct nccl_slot *s = &pp->slot[pp->applied % NCCL_SLOTS];
    if (!pp->applying && pp->applied < pp->head && s->read) { /* the next slot in order, read: apply it */
        pp->applying = 1;
        int skip = pp->abandon || pp->status != NP_OK;
        pthread_mutex_unlock(&pp->mu);
        enum np_status st = s->st;
        if (!skip && st == NP_OK)
            st = nccl_slot_apply(pp->n, s);
        for (size_t i = 0; !skip && st == NP_OK && pp->scan && i < s->nseg; i++)
            pp->scan(pp->scan_ctx, s->buf + s->seg[2 * i], s->seg[2 * i + 1] - s->seg[2 * i], s->base + s->seg[2 * i]);
        pthread_mutex_lock(&pp->mu);
        if (st != NP_OK && pp->status == NP_OK)
            pp->status = st;
        s->len = 0;
        s->open_end = s->read = 0;
        pp->applied++;
        pp->applying = 0;
        pthread_cond_broadcast(&pp->moved);
        return 1;
    }
    if (pp->taken < pp->head) { /* the next slot filled: read it */
        s = &pp->slot[pp->taken++ % NCCL_SLOTS];
        int skip = pp->abandon || pp->status != NP_OK;
        pthread_mutex_unlock(&pp->mu);
        enum np_status st = skip ? NP_OK : nccl_slot_read(s, loc);
        pthread_mutex_lock(&pp->mu);
        s->st = st;
        s->read = 1;
        pthread_cond_broadcast(&pp->moved);
        return 1;
    }
    return 0;
}

static void *nccl_pipe_main(void *arg)
{
    struct nccl_worker *wk = arg;
    struct nccl_pipe *pp = wk->pp;
    pthread_mutex_lock(&pp->mu);
    for (;;) {
        if (nccl_pipe_work(pp, &wk->loc))
            continue;
        if (pp->closing && pp->applied == pp->head)
            break;
        pthread_cond_wait(&pp->moved, &pp->mu);
    }
    pthread_mutex_unlock(&pp->mu);
    return NULL;
}

static void nccl_pipe_free(struct nccl_pipe *pp)
{
    if (pp->ring)
        munmap(pp->ring, NCCL_RING);
    for (size_t i = 0; i < NCCL_SLOTS; i++) {
        free(pp->slot[i].rec);
        free(pp->slot[i].seg);
    }
    for (size_t i = 0; i < NCCL_WORKERS; i++)
        nccl_local_free(&pp->worker[i].loc);
    nccl_local_free(&pp->feeder);
    pthread_mutex_destroy(&pp->mu);
    pthread_cond_destroy(&pp->moved);
    free(pp);
}

enum np_status np_nccl_async(struct np_nccl *n, int threads)
{
    if (n->pipe || n->finished || n->fed)
        return NP_OK;
    struct nccl_pipe *pp = calloc(1, sizeof *pp);
    if (!pp)
        return NP_E_NOMEM;
    pthread_mutex_init(&pp->mu, NULL);
    pthread_cond_init(&pp->moved, NULL);
    int ok = (pp->ring = nccl_huge_alloc(NCCL_RING)) != NULL;
    for (size_t i = 0; i < NCCL_SLOTS && ok; i++)
        pp->slot[i].buf = pp->ring + i * (NCCL_SLOT_SIZE + NCCL_SLOT_PAD);
    for (size_t i = 0; i < NCCL_WORKERS; i++)
        ok &= nccl_local_init(&pp->worker[i].loc) == NP_OK;
    ok &= nccl_local_init(&pp->feeder) == NP_OK;
    if (!ok) {
        nccl_pipe_free(pp);
        return NP_E_NOMEM;
    }
    n->pipe = pp;
    pp->n = n;
#ifdef NCCL_HAVE_AVX2
    pthread_once(&nccl_cpu_once, nccl_cpu_init);
#endif
    struct nccl_key *gens = nccl_huge_alloc(NCCL_GENS); /* a large log fills both generations: huge pages too */
    if (gens) {
        free(n->gens);
        n->gens = n->gen[0].slot = gens;
        n->gen[1].slot = gens + NCCL_GEN_CAP;
        n->gens_huge = 1;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN); /* a thread a core, the feeder's too */
    size_t want = threads > 0 ? (size_t)threads : ncpu > 2 ? (size_t)ncpu - 1 : 1;
    if (want > NCCL_WORKERS)
        want = NCCL_WORKERS;
    for (size_t i = 0; i < want; i++) {
        pp->worker[i].pp = pp;
        if (pthread_create(&pp->worker[i].thread, NULL, nccl_pipe_main, &pp->worker[i]) != 0)
            break;
        pp->nthreads++;
    }
    if (!pp->nthreads) { /* no thread: read inline */
        n->pipe = NULL;
        nccl_pipe_free(pp);
    }
    return NP_OK;
}

/* Hand the feeder's slot to the threads and wait until the next one is free (next: no wait); the threads'
 * status. */
static enum np_status nccl_pipe_submit(struct nccl_pipe *pp, int next)
{
    pthread_mutex_lock(&pp->mu);
    pp->head++;
    pthread_cond_broadcast(&pp->moved);
    while (next && pp->head - pp->applied >= NCCL_SLOTS)
        if (!nccl_pipe_work(pp, &pp->feeder))
            pthread_cond_wait(&pp->moved, &pp->mu);
    enum np_status st = pp->status;
    pthread_mutex_unlock(&pp->mu);
    return st;
}

/* Wait until every slot handed to the threads is applied; the threads' status. */
static enum np_status nccl_pipe_drain(struct nccl_pipe *pp)
{
    pthread_mutex_lock(&pp->mu);
    while (pp->applied < pp->head && pp->status == NP_OK)
        if (!nccl_pipe_work(pp, &pp->feeder))
            pthread_cond_wait(&pp->moved, &pp->mu);
    enum np_status st = pp->status;
    pthread_mutex_unlock(&pp->mu);
    return st;
}

/* The feeder's slot is full (final: the log has ended): the threads get it up to its last newline (final: all
 * of it); the rest of its last line begins the next slot or, longer than NCCL_LINE_MAX, goes alone in a slot
 * cut there (its rest skipped: only its first NCCL_LINE_MAX bytes are read, as inline). */
static enum np_status nccl_pipe_cut(struct nccl_pipe *pp, int final)
{
    struct nccl_slot *s = &pp->slot[pp->head % NCCL_SLOTS];
    if (final) {
        if (!s->len)
            return NP_OK;
        s->open_end = s->buf[s->len - 1] != '\n';
        return nccl_pipe_submit(pp, 0);
    }
    const char *nl = memrchr(s->buf, '\n', s->len);
    size_t keep = nl ? (size_t)(nl - s->buf) + 1 : 0, rest = s->len - keep;
    /* the part of a long line no slot keeps (past its first NCCL_LINE_MAX bytes): still in this slot's buffer
     * after the slots are applied (the feeder refills it only a ring later) */
    const char *drop = s->buf + keep + NCCL_LINE_MAX;
    uint64_t drop_off = s->base + keep + NCCL_LINE_MAX;
    enum np_status st;
    if (keep) {
        s->len = keep;
        if ((st = nccl_pipe_submit(pp, 1)) != NP_OK)
            return st;
        struct nccl_slot *t = &pp->slot[pp->head % NCCL_SLOTS];
        t->base = s->base + keep;
        t->len = rest > NCCL_LINE_MAX ? NCCL_LINE_MAX : rest;
        memcpy(t->buf, s->buf + keep, t->len);
        s = t;
    }
    if (rest <= NCCL_LINE_MAX)
        return NP_OK;
    s->len = NCCL_LINE_MAX; /* a long line alone, cut */
    s->open_end = 1;
    pp->skipping = 1;
    st = nccl_pipe_submit(pp, 1);
    if (st == NP_OK && pp->scan && (st = nccl_pipe_drain(pp)) == NP_OK)
        pp->scan(pp->scan_ctx, drop, rest - NCCL_LINE_MAX, drop_off);
    return st;
}

/* The log's next len bytes, buf[0] at its offset at. */
static enum np_status nccl_pipe_feed(struct nccl_pipe *pp, const char *buf, size_t len, uint64_t at)
{
    while (len) {
        struct nccl_slot *s = &pp->slot[pp->head % NCCL_SLOTS];
        if (pp->skipping) {
            const char *nl = memchr(buf, '\n', len);
            size_t k = nl ? (size_t)(nl - buf) + 1 : len;
            if (pp->scan) { /* the rest of a cut line, which no slot holds: scanned here, after the slots before it */
                enum np_status st = nccl_pipe_drain(pp);
                if (st != NP_OK)
                    return st;
                pp->scan(pp->scan_ctx, buf, k, at);
            }
            at += k;
            buf += k;
            len -= k;
            if (nl) {
                pp->skipping = 0;
                s->base = at;
            }
            continue;
        }
        size_t take = NCCL_SLOT_SIZE - s->len;
        if (take > len)
            take = len;
        if (buf != s->buf + s->len) /* not read where np_nccl_lend lent (or moved by a skip): copied */
            memmove(s->buf + s->len, buf, take);
        s->len += take;
        at += take;
        buf += take;
        len -= take;
        if (s->len == NCCL_SLOT_SIZE) {
            enum np_status st = nccl_pipe_cut(pp, 0);
            if (st != NP_OK)
                return st;
        }
    }
    return NP_OK;
}

/* The threads' sets and counts into the reader's. */
static enum np_status nccl_local_merge(struct nccl_local *into, const struct nccl_local *from)
{
    for (size_t i = 0; i < from->ranks.cap && from->ranks.n; i++)
        if (from->ranks.v[i])
            nccl_set_add(&into->ranks, from->ranks.v[i], &into->saturated);
    for (size_t i = 0; i < from->hosts.cap && from->hosts.n; i++)
        if (from->hosts.v[i])
            nccl_set_add(&into->hosts, from->hosts.v[i], &into->saturated);
    into->saturated |= from->saturated;
    into->trace_lines += from->trace_lines;
    if (from->max_nranks > into->max_nranks)
        into->max_nranks = from->max_nranks;
    if (from->granks) {
        if (!into->granks && !(into->granks = calloc(NCCL_GRANKS_MAX / 8, 1)))
            return NP_E_NOMEM;
        for (size_t i = 0; i < NCCL_GRANKS_MAX / 8; i++)
            into->granks[i] |= from->granks[i];
    }
    return NP_OK;
}

/* The end of the threads: the feeder's last slot read first (abandon: every slot skipped); the threads'
 * status. */
static enum np_status nccl_pipe_stop(struct np_nccl *n, int abandon)
{
    struct nccl_pipe *pp = n->pipe;
    if (!pp)
        return NP_OK;
    enum np_status st = abandon ? NP_OK : nccl_pipe_cut(pp, 1);
    if (st == NP_OK && !abandon)
        st = nccl_pipe_drain(pp); /* the feeder helps with the last slots */
    pthread_mutex_lock(&pp->mu);
    pp->closing = 1;
    pp->abandon |= abandon;
    pthread_cond_broadcast(&pp->moved);
    pthread_mutex_unlock(&pp->mu);
    for (size_t i = 0; i < pp->nthreads; i++)
        pthread_join(pp->worker[i].thread, NULL);
    if (st == NP_OK)
        st = pp->status;
    for (size_t i = 0; i < pp->nthreads && st == NP_OK && !abandon; i++)
        st = nccl_local_merge(&n->loc, &pp->worker[i].loc);
    if (st == NP_OK && !abandon)
        st = nccl_local_merge(&n->loc, &pp->feeder);
    n->pipe = NULL;
    nccl_pipe_free(pp);
    return st;
}

enum np_status np_nccl_defer_scan(struct np_nccl *n, void (*scan)(void *scan_ctx, const char *bytes, size_t len,
                                                                  uint64_t off),
                                  void *scan_ctx)
{
    if (!n->pipe || n->fed)
        return NP_E_USAGE;
    n->pipe->scan = scan;
    n->pipe->scan_ctx = scan_ctx;
    return NP_OK;
}

char *np_nccl_lend(struct np_nccl *n, size_t *room)
{
    struct nccl_pipe *pp = n->pipe;
    if (!pp)
        return NULL;
    struct nccl_slot *s = &pp->slot[pp->head % NCCL_SLOTS];
    *room = NCCL_SLOT_SIZE - s->len; /* > 0: a full slot is cut at once */
    return s->buf + s->len;
}

enum np_status np_nccl_feed(struct np_nccl *n, const char *buf, size_t len)
{
    if (!n->pipe)
        return nccl_feed_inline(n, buf, len);
    n->fed += len;
    return nccl_pipe_feed(n->pipe, buf, len, n->fed - len);
}

static int nccl_coll_cmp(const void *a, const void *b)
{
    const struct np_nccl_coll *x = a, *y = b;
    if (x->nranks != y->nranks)
        return x->nranks < y->nranks ? -1 : 1;
    return strcmp(x->op, y->op);
}

/* "0-3,8,12-15" of the globalrank bitmap. */
static enum np_status nccl_granks_text(struct np_nccl *n)
{
    const uint8_t *gr = n->loc.granks;
    if (!gr)
        return NP_OK;
    size_t cap = 256, len = 0;
    char *t = malloc(cap);
    if (!t)
        return NP_E_NOMEM;
    t[0] = '\0';
    for (uint64_t g = 0; g < NCCL_GRANKS_MAX; g++) {
        if (!(gr[g / 8] & (1u << (g % 8))))
            continue;
        uint64_t h = g;
        while (h + 1 < NCCL_GRANKS_MAX && (gr[(h + 1) / 8] & (1u << ((h + 1) % 8))))
            h++;
        if (len + 48 > cap) {
            char *nt = realloc(t, cap *= 2);
            if (!nt) {
                free(t);
                return NP_E_NOMEM;
            }
            t = nt;
        }
        len += (size_t)(h > g ? snprintf(t + len, cap - len, "%s%llu-%llu", len ? "," : "", (unsigned long long)g,
                                         (unsigned long long)h)
                              : snprintf(t + len, cap - len, "%s%llu", len ? "," : "", (unsigned long long)g));
        g = h;
    }
    n->granks_text = t;
    return NP_OK;
}

enum np_status np_nccl_finish(struct np_nccl *n)
{
    if (n->finished)
        return NP_OK;
    enum np_status st = nccl_pipe_stop(n, 0);
    n->finished = 1;
    n->avail = n->line + NCCL_LINE_MAX;
    if (st == NP_OK && n->linelen) {
        const char *hit = nccl_next(n->line, n->line + n->linelen);
        if (hit)
            st = nccl_dispatch(n, n->line, hit, n->line + n->linelen, n->line_off);
        n->linelen = 0;
    }
    n->last = NULL;
    n->net.max_nranks = n->loc.max_nranks;
    if (st == NP_OK)
        st = nccl_flush_gen(n, &n->gen[1]);
    if (st == NP_OK)
        st = nccl_flush_gen(n, &n->gen[0]);
    if (st == NP_OK)
        st = nccl_granks_text(n);
    for (size_t i = 0; i < n->ncoll; i++)
        if (n->coll[i].min_bytes == UINT64_MAX)
            n->coll[i].min_bytes = 0;
    if (n->ncoll)
        qsort(n->coll, n->ncoll, sizeof *n->coll, nccl_coll_cmp);
    return st;
}

enum np_status np_nccl_read_path(struct np_nccl *n, const char *path, struct np_error *err)
{
    int fd;
    enum np_status ost = np_file_open_regular(AT_FDCWD, path, &fd, err); /* a FIFO: refused, never waited on */
    if (ost != NP_OK)
        return ost;
#ifdef POSIX_FADV_SEQUENTIAL
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    enum { NCCL_CHUNK = 1 << 20 };
    char *buf = malloc(NCCL_CHUNK);
    if (!buf) {
        close(fd);
        return np_error_set(err, NP_E_NOMEM, path, 0, 0, "%s", np_strerror(NP_E_NOMEM));
    }
    enum np_status st = NP_OK;
    for (;;) {
        ssize_t got = read(fd, buf, NCCL_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            st = np_error_set(err, NP_E_IO, path, 0, 0, "cannot read: %s", strerror(errno));
            break;
        }
        if (got == 0)
            break;
        if ((st = np_nccl_feed(n, buf, (size_t)got)) != NP_OK) {
            np_error_set(err, st, path, 0, 0, "%s", np_strerror(st));
            break;
        }
    }
    free(buf);
    close(fd);
    if (st == NP_OK && (st = np_nccl_finish(n)) != NP_OK)
        np_error_set(err, st, path, 0, 0, "%s", np_strerror(st));
    return st;
}

const struct np_nccl_coll *np_nccl_colls(const struct np_nccl *n, size_t *count)
{
    *count = n->ncoll;
    return n->coll;
}

const struct np_nccl_net *np_nccl_net(const struct np_nccl *n) { return &n->net; }
const struct np_nccl_ckpt *np_nccl_ckpt(const struct np_nccl *n) { return &n->ckpt; }
const struct np_straggler *np_nccl_stragglers(const struct np_nccl *n) { return &n->strag; }
uint64_t np_nccl_trace_lines(const struct np_nccl *n) { return n->loc.trace_lines; }
size_t np_nccl_ranks_seen(const struct np_nccl *n) { return n->loc.ranks.n; }
size_t np_nccl_nodes_seen(const struct np_nccl *n) { return n->loc.hosts.n; }
int np_nccl_saturated(const struct np_nccl *n) { return n->loc.saturated; }
const char *np_nccl_global_ranks(const struct np_nccl *n) { return n->granks_text ? n->granks_text : ""; }

int np_nccl_nodes(const struct np_nccl *n)
{
    return n->net.nnodes > 0 ? n->net.nnodes : (int)n->loc.hosts.n;
}

size_t np_nccl_warnings(const struct np_nccl *n, char *buf, size_t size)
{
    size_t count = 0, len = 0;
    if (size)
        buf[0] = '\0';
    int nodes = np_nccl_nodes(n);
    char w[3][320];
    if (nodes > 1 && (strcmp(n->net.network, "Socket") == 0 || (!n->net.network[0] && n->net.socket_channels)))
        snprintf(w[count++], sizeof w[0],
                 "NCCL uses TCP sockets between %d nodes (\"Using network Socket\"%s): collectives are many times "
                 "slower than over IB/RoCE (check the net plugin, NCCL_IB_HCA, NCCL_NET)",
                 nodes, strcmp(n->net.ib, "none") == 0 ? ", NET/IB: no device found" : "");
    if (n->net.gdr == NP_NCCL_NO)
        snprintf(w[count++], sizeof w[0],
                 "NCCL: GPU Direct RDMA disabled%s (nvidia-peermem / dma-buf?): inter-node traffic goes "
                 "through host memory", n->net.ib[0] && strcmp(n->net.ib, "none") ? " on the IB devices" : "");
    if (n->net.plugin_failed)
        snprintf(w[count++], sizeof w[0], "NCCL net plugin failed to load: %s", n->net.plugin_error);
    for (size_t i = 0; i < count && size; i++) {
        int k = snprintf(buf + len, size - len, "%s%s", i ? "; " : "", w[i]);
        if (k < 0 || (size_t)k >= size - len)
            break;
        len += (size_t)k;
    }
    return count;
}
