/* check_walk.c - the parallel folder walk: order, include glob, manifests, loops, errors.
 *
 * The same tree is walked with 1 and 8 threads; after sorting with
 * np_walk_group_cmp both must give the same groups in depth-first name order.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/parse/walk.h"

static char root[64];

static void touch(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("x\n", f);
    fclose(f);
}

struct collect {
    pthread_mutex_t mu;
    struct np_walk_group **g;
    size_t n;
};

static enum np_status collect_fn(void *ctx, struct np_walk_group *g)
{
    struct collect *c = ctx;
    ck_assert(g->dirfd >= 0 || g->nfiles == 1); /* folders are open during the call */
    pthread_mutex_lock(&c->mu);
    c->g = realloc(c->g, (c->n + 1) * sizeof *c->g);
    c->g[c->n++] = g;
    pthread_mutex_unlock(&c->mu);
    return NP_OK;
}

static int cmp(const void *a, const void *b)
{
    return np_walk_group_cmp(*(struct np_walk_group *const *)a, *(struct np_walk_group *const *)b);
}

static void walk(char **paths, size_t n, int threads, const char *include, struct collect *c,
                 struct np_walk_errors *e)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    memset(e, 0, sizeof *e);
    struct np_walk_counts counts;
    atomic_init(&counts.read, 0);
    atomic_init(&counts.found, 0);
    ck_assert_int_eq(np_walk_paths(paths, n, include, threads, NULL, collect_fn, c, e, &counts), NP_OK);
    ck_assert_uint_eq(atomic_load(&counts.read), atomic_load(&counts.found));
    if (c->n > 1)
        qsort(c->g, c->n, sizeof *c->g, cmp);
}

static void release(struct collect *c, struct np_walk_errors *e)
{
    for (size_t i = 0; i < c->n; i++)
        np_walk_group_free(c->g[i]);
    free(c->g);
    np_walk_errors_free(e);
    pthread_mutex_destroy(&c->mu);
}

static void setup(void)
{
    strcpy(root, "/tmp/np-walk-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    touch("b/x.out");
    touch("b/y.out");
    touch("b/ignored.txt");
    touch("b/c/z.out");
    touch("b-x/w.out");
    touch("a/deep/er/v.out");
    touch("a/nemoperf.json");
    touch("a/deep/er/even/deeper/u.out");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *rel(const char *p)
{
    return p + strlen(root) + 1;
}

START_TEST(test_order_and_threads)
{
    char *paths[] = {root};
    struct collect c1, c8;
    struct np_walk_errors e1, e8;
    walk(paths, 1, 1, "*.out", &c1, &e1);
    walk(paths, 1, 8, "*.out", &c8, &e8);
    /* depth first, names sorted, a folder's subtree before its later siblings ("b/c" before "b-x");
     * "a" holds a launch manifest and no log: a group of its own (a run that left no log) */
    const char *want[] = {"a", "a/deep/er", "a/deep/er/even/deeper", "b", "b/c", "b-x"};
    ck_assert_uint_eq(c1.n, 6);
    ck_assert_uint_eq(c8.n, 6);
    for (size_t i = 0; i < 6; i++) {
        ck_assert_str_eq(rel(c1.g[i]->dir), want[i]);
        ck_assert_str_eq(c8.g[i]->dir, c1.g[i]->dir);
        ck_assert_uint_eq(c8.g[i]->nfiles, c1.g[i]->nfiles);
    }
    ck_assert_uint_eq(c1.g[0]->nfiles, 0);
    ck_assert_str_eq(rel(c1.g[0]->manifest), "a/nemoperf.json");
    ck_assert_uint_eq(c1.g[3]->nfiles, 2); /* b: x.out y.out, not ignored.txt */
    ck_assert_str_eq(rel(c1.g[3]->files[0]), "b/x.out");
    ck_assert_str_eq(rel(c1.g[3]->files[1]), "b/y.out");
    /* manifests: a/nemoperf.json is 2 levels above a/deep/er, 4 above a/deep/er/even/deeper (too far) */
    ck_assert_ptr_nonnull(c1.g[1]->manifest);
    ck_assert_str_eq(rel(c1.g[1]->manifest), "a/nemoperf.json");
    ck_assert_ptr_null(c1.g[2]->manifest);
    ck_assert_ptr_null(c1.g[3]->manifest);
    ck_assert_uint_eq(e1.n, 0);
    release(&c1, &e1);
    release(&c8, &e8);
}
END_TEST

START_TEST(test_include_and_file_roots)
{
    char f[256], missing[256];
    snprintf(f, sizeof f, "%s/b/ignored.txt", root);
    snprintf(missing, sizeof missing, "%s/nope", root);
    char *paths[] = {f, root, missing};
    struct collect c;
    struct np_walk_errors e;
    walk(paths, 3, 2, "*.txt", &c, &e);
    /* a file named on the command line is taken whatever its name; the glob picks the rest */
    ck_assert_uint_eq(c.n, 3); /* and "a", for its manifest */
    ck_assert_uint_eq(c.g[0]->root, 0);
    ck_assert_str_eq(c.g[0]->files[0], f);
    ck_assert_uint_eq(c.g[1]->root, 1);
    ck_assert_str_eq(rel(c.g[1]->dir), "a");
    ck_assert_uint_eq(c.g[1]->nfiles, 0);
    ck_assert_uint_eq(c.g[2]->root, 1);
    ck_assert_str_eq(rel(c.g[2]->files[0]), "b/ignored.txt");
    ck_assert_uint_eq(e.n, 1);
    ck_assert_ptr_nonnull(strstr(e.msgs[0], "nope: No such file or directory"));
    release(&c, &e);
}
END_TEST

START_TEST(test_numeric_order)
{
    /* a sweep reads in GPU-count order, not as text (16, 32, 8); equal numbers order by leading zeros */
    touch("s/pretrain_x_16/l.out");
    touch("s/pretrain_x_8/l.out");
    touch("s/pretrain_x_32/l.out");
    touch("s/pretrain_x_08/l.out");
    touch("s/pretrain_x_8a/l.out");
    char p[256];
    snprintf(p, sizeof p, "%s/s", root);
    char *paths[] = {p};
    struct collect c;
    struct np_walk_errors e;
    walk(paths, 1, 3, "*.out", &c, &e);
    const char *want[] = {"s/pretrain_x_8", "s/pretrain_x_08", "s/pretrain_x_8a", "s/pretrain_x_16", "s/pretrain_x_32"};
    ck_assert_uint_eq(c.n, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(rel(c.g[i]->dir), want[i]);
    release(&c, &e);
}
END_TEST

START_TEST(test_symlinks)
{
    char p[256], q[256];
    snprintf(p, sizeof p, "%s/b/c/up", root);
    ck_assert_int_eq(symlink("../..", p), 0); /* a loop back to the root */
    snprintf(p, sizeof p, "%s/link-to-a", root);
    snprintf(q, sizeof q, "%s/a", root);
    ck_assert_int_eq(symlink(q, p), 0); /* a real second path to a: walked */
    snprintf(p, sizeof p, "%s/dangling.out", root);
    ck_assert_int_eq(symlink("/nonexistent/x.out", p), 0);
    char *paths[] = {root};
    struct collect c;
    struct np_walk_errors e;
    walk(paths, 1, 4, "*.out", &c, &e);
    ck_assert_uint_eq(c.n, 9); /* 6 + link-to-a (its manifest) + link-to-a/deep/er + .../even/deeper */
    int loop = 0, dangling = 0;
    for (size_t i = 0; i < e.n; i++) {
        loop |= strstr(e.msgs[i], "b/c/up: symbolic link loop") != NULL;
        dangling |= strstr(e.msgs[i], "dangling.out: dangling symbolic link") != NULL;
    }
    ck_assert_msg(loop && dangling, "%zu errors", e.n);
    release(&c, &e);
}
END_TEST

/* ---- the ordered interface ---- */

struct seq {
    pthread_mutex_t mu;
    char **ev;           /* "G <dir>" or "E <msg>", in emission order */
    size_t n;
    atomic_size_t analysed, emitted, max_ahead;
    const char *slow;    /* a folder whose analysis takes 300 ms */
    pthread_t first;     /* the thread of the first analysis */
    atomic_int started, other; /* other: a second thread analysed something */
};

static enum np_status seq_group(void *ctx, struct np_walk_group *g, void **result)
{
    struct seq *q = ctx;
    pthread_mutex_lock(&q->mu);
    if (!atomic_exchange(&q->started, 1))
        q->first = pthread_self();
    else if (!pthread_equal(q->first, pthread_self()))
        atomic_store(&q->other, 1);
    pthread_mutex_unlock(&q->mu);
    if (q->slow && strcmp(rel(g->dir), q->slow) == 0)
        usleep(300 * 1000);
    size_t a = atomic_fetch_add(&q->analysed, 1) + 1, e = atomic_load(&q->emitted);
    size_t m = atomic_load(&q->max_ahead);
    while (a - e > m && !atomic_compare_exchange_weak(&q->max_ahead, &m, a - e))
        ;
    char *s = malloc(strlen(g->dir) + 3);
    sprintf(s, "G %s", rel(g->dir));
    *result = s;
    np_walk_group_free(g);
    return NP_OK;
}

static void seq_push(struct seq *q, char *s)
{
    pthread_mutex_lock(&q->mu); /* emit/error are one at a time: the lock only proves it */
    q->ev = realloc(q->ev, (q->n + 1) * sizeof *q->ev);
    q->ev[q->n++] = s;
    pthread_mutex_unlock(&q->mu);
}

static enum np_status seq_emit(void *ctx, void *result)
{
    struct seq *q = ctx;
    atomic_fetch_add(&q->emitted, 1);
    seq_push(q, result);
    return NP_OK;
}

static enum np_status seq_error(void *ctx, const char *msg)
{
    char *s = malloc(strlen(msg) + 3);
    sprintf(s, "E %s", strstr(msg, root) ? rel(msg) : msg);
    seq_push(ctx, s);
    return NP_OK;
}

static void seq_discard(void *ctx, void *result)
{
    (void)ctx;
    free(result);
}

static void seq_walk_paced(struct seq *q, int threads, const char *slow, const struct np_walk_pace *pace)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    q->slow = slow;
    char *paths[] = {root};
    struct np_walk_sink sink = {q, seq_group, seq_emit, seq_error, seq_discard, pace};
    ck_assert_int_eq(np_walk_ordered(paths, 1, "*.out", threads, &sink, NULL), NP_OK);
}

static void seq_walk(struct seq *q, int threads, const char *slow)
{
    seq_walk_paced(q, threads, slow, NULL);
}

static void seq_free(struct seq *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->ev[i]);
    free(q->ev);
    pthread_mutex_destroy(&q->mu);
}

static size_t seq_find(const struct seq *q, const char *ev)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->ev[i], ev) == 0)
            return i;
    ck_abort_msg("event '%s' not emitted", ev);
    return 0;
}

START_TEST(test_ordered_stream)
{
    char p[256];
    snprintf(p, sizeof p, "%s/b/c/up", root);
    ck_assert_int_eq(symlink("../..", p), 0);
    snprintf(p, sizeof p, "%s/b/c/dangling.out", root);
    ck_assert_int_eq(symlink("/nonexistent/x.out", p), 0);
    struct seq q1, q4;
    seq_walk(&q1, 1, NULL);
    seq_walk(&q4, 4, NULL);
    /* handed out already in depth-first order (no sorting), the same with 1 and 4 threads;
     * a folder's read errors just before its group */
    const char *want[] = {"G a", "G a/deep/er", "G a/deep/er/even/deeper", "G b",
                          "E b/c/dangling.out: dangling symbolic link",
                          "E b/c/up: symbolic link loop (folder already being walked); skipped", "G b/c", "G b-x"};
    ck_assert_uint_eq(q1.n, sizeof want / sizeof want[0]);
    ck_assert_uint_eq(q4.n, q1.n);
    for (size_t i = 0; i < q1.n; i++) {
        ck_assert_str_eq(q1.ev[i], want[i]);
        ck_assert_str_eq(q4.ev[i], want[i]);
    }
    /* one thread: each folder is handed out as soon as it is analysed */
    ck_assert_uint_le(atomic_load(&q1.max_ahead), 1);
    seq_free(&q1);
    seq_free(&q4);
}
END_TEST

START_TEST(test_bounded_ahead)
{
    /* 6000 more folders after a slow one: the others may run ahead of it by at most
     * NP_WALK_PENDING_MAX results (plus one per worker, plus the emitter's batch of 64 that
     * has left the walk but not yet reached seq_emit), then wait */
    char p[256];
    for (int i = 0; i < 6000; i++) {
        snprintf(p, sizeof p, "w/%04d/x.out", i);
        touch(p);
    }
    struct seq q;
    seq_walk(&q, 4, "a/deep/er");
    size_t ahead = atomic_load(&q.max_ahead);
    ck_assert_msg(ahead <= NP_WALK_PENDING_MAX + 64 + 4, "%zu results waited", ahead);
    ck_assert_uint_eq(q.n, 6 + 6000); /* "a" is a group for its manifest */
    ck_assert_str_eq(q.ev[0], "G a");
    ck_assert_str_eq(q.ev[1], "G a/deep/er");
    ck_assert_str_eq(q.ev[q.n - 1], "G w/5999");
    for (size_t i = 1; i < q.n; i++)
        ck_assert_msg(strcmp(q.ev[i - 1], q.ev[i]) < 0 || strncmp(q.ev[i], "G b-x", 5) == 0, "%s then %s",
                      q.ev[i - 1], q.ev[i]);
    (void)seq_find(&q, "G b/c");
    seq_free(&q);
}
END_TEST

/* The pace: 4 threads of which 1 works while the data is warm; the 3 reserves start once cold() says a
 * read waited.  Stand-in: cold() is a flag of the test (the real one, np_scan_cold, needs a cold page
 * cache).  While one thread sleeps 300 ms in a slow folder, 2000 others are waiting: with the reserves
 * running, another thread takes some; without, none does (and the walk still ends). */
static atomic_int pace_cold;
static int pace_cold_fn(void)
{
    return atomic_load(&pace_cold);
}

START_TEST(test_pace_reserve)
{
    char p[256];
    for (int i = 0; i < 2000; i++) {
        snprintf(p, sizeof p, "w/%04d/x.out", i);
        touch(p);
    }
    struct np_walk_pace pace = {1, pace_cold_fn};
    struct seq q;
    atomic_store(&pace_cold, 0);
    seq_walk_paced(&q, 4, "a/deep/er", &pace);
    ck_assert_uint_eq(q.n, 6 + 2000);
    ck_assert_int_eq(atomic_load(&q.other), 0);
    seq_free(&q);
    atomic_store(&pace_cold, 1);
    seq_walk_paced(&q, 4, "a/deep/er", &pace);
    ck_assert_uint_eq(q.n, 6 + 2000);
    ck_assert_int_eq(atomic_load(&q.other), 1);
    seq_free(&q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("walk");
    TCase *tc = tcase_create("walk");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120); /* 6000 folders on a loaded machine */
    tcase_add_test(tc, test_order_and_threads);
    tcase_add_test(tc, test_include_and_file_roots);
    tcase_add_test(tc, test_symlinks);
    tcase_add_test(tc, test_ordered_stream);
    tcase_add_test(tc, test_bounded_ahead);
    tcase_add_test(tc, test_numeric_order);
    tcase_add_test(tc, test_pace_reserve);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
