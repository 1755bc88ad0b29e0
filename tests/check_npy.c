/* check_npy.c - the packed-sequence .npy reader (src/parse/npy.c) against files written
 * by real NumPy (Debian's python3-numpy: np.save as NeMo calls it, and pickle
 * protocols 2, 4 and 5 under a .npy header), a committed file whose statistics
 * were worked out by hand, and hostile inputs: every truncation, flipped bytes,
 * a numeric array, and a pickle naming os.system (read as a name, never called).
 * No stand-in: the files come from NumPy itself (tests/data/npy/make.py).
 */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/parse/npy.h"

static char dir[] = "/tmp/np-npy.XXXXXX";

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s tests/data/npy/make.py %s", py, dir);
    ck_assert_msg(system(cmd) == 0, "%s failed: NumPy missing? (make deps installs python3-numpy)", cmd);
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    strcpy(dir, "/tmp/np-npy.XXXXXX");
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)n + 1);
    ck_assert(b && fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Two packs: ids 0..9 split at 4 (4 + 6 tokens), 7 tokens in one sequence. */
START_TEST(test_hand_worked_file)
{
    struct np_pack_stats s;
    struct np_error err;
    ck_assert_msg(np_npy_pack_stats("tests/data/npy/hand.npy", 0, &s, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(s.packs, 2);
    ck_assert_uint_eq(s.sequences, 3);
    ck_assert_double_eq(s.tokens, 17);
    ck_assert_double_eq(s.sum_sq, 4 * 4 + 6 * 6 + 7 * 7);
    ck_assert_int_eq(s.max_tokens, 10);
    double t, q;
    np_pack_means(&s, &t, &q); /* EOS excluded: (3 + 5 + 6) / 2, (9 + 25 + 36) / 2 */
    ck_assert_double_eq(t, 7);
    ck_assert_double_eq(q, 35);
    ck_assert_int_eq(np_npy_pack_stats("tests/data/npy/hand.npy", 2, &s, &err), NP_OK);
    ck_assert_uint_eq(s.packs, 2);
    ck_assert_int_eq(np_npy_pack_stats("tests/data/npy/hand.npy", 3, &s, &err), NP_OK); /* no whole batch */
    ck_assert_uint_eq(s.packs, 0);
    ck_assert_uint_eq(s.dropped, 2);
}
END_TEST

/* Every file NumPy wrote agrees with the statistics Python computed. */
START_TEST(test_numpy_files)
{
    char path[600];
    snprintf(path, sizeof path, "%s/expected.tsv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char name[64];
    int gbs, n = 0;
    size_t packs, seqs;
    double tokens, sq;
    while (fscanf(f, "%63s %d %zu %zu %lf %lf", name, &gbs, &packs, &seqs, &tokens, &sq) == 6) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        struct np_pack_stats s;
        struct np_error err;
        ck_assert_msg(np_npy_pack_stats(path, gbs, &s, &err) == NP_OK, "%s: %s", name, err.text);
        ck_assert_msg(s.packs == packs && s.sequences == seqs, "%s gbs %d: %zu packs %zu seqs, want %zu %zu", name,
                      gbs, s.packs, s.sequences, packs, seqs);
        ck_assert_double_eq(s.tokens, tokens);
        ck_assert_double_eq(s.sum_sq, sq);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 6);
}
END_TEST

START_TEST(test_not_packed)
{
    char path[600];
    struct np_pack_stats s;
    struct np_error err;
    snprintf(path, sizeof path, "%s/numeric.npy", dir);
    ck_assert_int_eq(np_npy_pack_stats(path, 0, &s, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "'<i8'") && strstr(err.text, "object array"), "%s", err.text);
    ck_assert_int_eq(np_npy_pack_stats("tests/data/npy/make.py", 0, &s, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "magic"), "%s", err.text);
    ck_assert_int_eq(np_npy_pack_stats("/nonexistent/x.npy", 0, &s, &err), NP_E_IO);
    ck_assert_int_eq(np_npy_pack_stats("tests/data", 0, &s, &err), NP_E_INVALID);
    /* pickle of os.system("touch ...") under an object-array header: a name, never called */
    static const unsigned char evil[] = "\x93NUMPY\x01\x00\x10\x00{'descr': '|O'}\n"
                                        "\x80\x03" "cos\nsystem\nq\x00X\x0e\x00\x00\x00touch /tmp/pwnq\x01\x85R.";
    ck_assert_int_eq(np_npy_pack_stats_mem(evil, sizeof evil - 1, "evil", 0, &s, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "not hold a NumPy array"), "%s", err.text);
    ck_assert_int_eq(access("/tmp/pwn", F_OK), -1);
}
END_TEST

/* Every prefix of a real file is an error with a message, never a crash or a result. */
START_TEST(test_truncations_and_flips)
{
    char path[600];
    snprintf(path, sizeof path, "%s/proto4.npy", dir);
    size_t len;
    unsigned char *b = slurp(path, &len);
    struct np_pack_stats s;
    struct np_error err;
    for (size_t n = 0; n < len; n++) {
        err.text[0] = '\0';
        ck_assert_msg(np_npy_pack_stats_mem(b, n, "cut", 0, &s, &err) != NP_OK, "prefix %zu accepted", n);
        ck_assert_msg(err.text[0], "prefix %zu: no message", n);
    }
    unsigned seed = 12345;
    for (int i = 0; i < 20000; i++) {
        unsigned char *c = malloc(len);
        memcpy(c, b, len);
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            c[(seed >> 8) % len] ^= (unsigned char)(seed >> 3);
        }
        (void)np_npy_pack_stats_mem(c, len, "flipped", 0, &s, &err); /* ASan/UBSan watch this */
        free(c);
    }
    free(b);
}
END_TEST

/* Issue 23: a packed file truncated while it is read.  A mapping of it kills the reader with
 * SIGBUS (the pages past the new end are gone); a read sees a shorter file: an error or,
 * when it was whole at the time, the right statistics, never a signal.  A thread cuts the
 * file to one page and writes it back, over and over, while it is read. */
struct npy_cutter {
    const char *path;
    const unsigned char *data;
    size_t len;
    volatile int stop;
};

static void *npy_cut_loop(void *arg)
{
    struct npy_cutter *c = arg;
    int fd = open(c->path, O_WRONLY);
    if (fd < 0)
        return NULL;
    while (!c->stop) {
        if (ftruncate(fd, 4096) != 0)
            break;
        usleep(200);
        if (pwrite(fd, c->data, c->len, 0) != (ssize_t)c->len)
            break;
        usleep(200);
    }
    close(fd);
    return NULL;
}

START_TEST(test_truncated_while_read)
{
    char src[600], path[600];
    snprintf(src, sizeof src, "%s/big.npy", dir);
    snprintf(path, sizeof path, "%s/cut.npy", dir);
    size_t len;
    unsigned char *data = slurp(src, &len);
    ck_assert_uint_gt(len, 1 << 20);
    FILE *f = fopen(path, "wb");
    ck_assert(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
    struct np_pack_stats whole;
    struct np_error err;
    ck_assert_int_eq(np_npy_pack_stats(path, 0, &whole, &err), NP_OK);
    struct npy_cutter c = {.path = path, .data = data, .len = len};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, npy_cut_loop, &c), 0);
    int ok = 0, refused = 0;
    for (int i = 0; i < 300; i++) {
        struct np_pack_stats s;
        if (np_npy_pack_stats(path, 0, &s, &err) == NP_OK) {
            ck_assert_uint_eq(s.packs, whole.packs);
            ck_assert_double_eq(s.tokens, whole.tokens);
            ok++;
        } else {
            ck_assert(err.text[0]);
            refused++;
        }
    }
    c.stop = 1;
    pthread_join(t, NULL);
    free(data);
    ck_assert_int_eq(ok + refused, 300);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_hand_worked_file);
    tcase_add_test(tc, test_numpy_files);
    tcase_add_test(tc, test_not_packed);
    tcase_add_test(tc, test_truncations_and_flips);
    tcase_add_test(tc, test_truncated_while_read);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
