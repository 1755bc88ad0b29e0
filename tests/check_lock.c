/* check_lock.c - the per-experiment launch lock (src/launch/lock.c) on a real file system: a free row is
 * locked and released (its folder removed only when the lock made it), a held lock refuses a second launch
 * and is reported busy, a stale lock (owner line of this host, flock free: a launch killed here) is taken over,
 * another host's lock is only named.  The locks are real files and real flock()s in a temporary STAGE_PATH; a
 * "held" lock is one this process holds through another open file description.  Two faults are injected (this
 * test's own link() and realloc() stand in for libc's, each armed for one case and passing through otherwise):
 * the lock released by its holder between a launch's link(2) finding it and the look at it (a race too narrow to hit
 * on demand), and an allocation failure (no way to run out of memory on purpose here).
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/launch/lock.h"

static char root[] = "/tmp/np-check-lock.XXXXXX";

/* The injected faults: link() releasing the lock it found (the holder unlinks it right after our link failed with
 * EEXIST), realloc() failing its n-th call from when it is armed. */
static int race_release; /* 1: the next link() that finds a lock removes it, as its holder releasing it */
static int realloc_fail_at; /* 0: off; n: the n-th realloc() from now returns NULL (ENOMEM) */

int link(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");
    int r = real(from, to), e = errno;
    if (r != 0 && e == EEXIST && race_release) {
        race_release = 0;
        unlink(to);
    }
    errno = e;
    return r;
}

void *realloc(void *p, size_t n)
{
    static void *(*real)(void *, size_t);
    if (!real)
        real = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    if (realloc_fail_at > 0 && --realloc_fail_at == 0) {
        errno = ENOMEM;
        return NULL;
    }
    return real(p, n);
}

static void setup(void)
{
    strcpy(root, "/tmp/np-check-lock.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *lockfile(const char *exp)
{
    static char p[600];
    snprintf(p, sizeof p, "%s/experiments/.%s.lock", root, exp);
    return p;
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

static void write_owner(const char *exp, const char *host)
{
    char d[600];
    snprintf(d, sizeof d, "%s/experiments", root);
    mkdir(d, 0755);
    FILE *f = fopen(lockfile(exp), "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "host=%s pid=%ld time=0\n", host, 999999L);
    fclose(f);
}

/* a free row: locked (owner line: this host and pid), busy while held, released, the folder it made removed */
START_TEST(test_take_release)
{
    struct np_launch_lock l;
    struct np_error err = {0};
    char why[800] = "", me[256] = "", want[400];
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 0);
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_OK);
    ck_assert(l.fd >= 0);
    ck_assert_int_eq(l.made_top, 1);
    ck_assert_str_eq(l.path, lockfile("row"));
    gethostname(me, sizeof me - 1);
    snprintf(want, sizeof want, "host=%s pid=%ld ", me, (long)getpid());
    FILE *f = fopen(lockfile("row"), "r");
    char line[512] = "";
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "owner line '%s'", line);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(why, lockfile("row")));
    ck_assert_ptr_nonnull(strstr(why, want));
    ck_assert_int_eq(np_launch_lock_busy(root, "other", why, sizeof why), 0);
    np_launch_lock_release(&l);
    ck_assert(!exists(lockfile("row")));
    char d[600];
    snprintf(d, sizeof d, "%s/experiments", root);
    ck_assert(!exists(d));
    ck_assert_int_eq(l.fd, -1);
    np_launch_lock_release(&l); /* idempotent */
    np_launch_lock_release(NULL);
    /* a folder that was there stays */
    mkdir(d, 0755);
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_OK);
    ck_assert_int_eq(l.made_top, 0);
    np_launch_lock_release(&l);
    ck_assert(exists(d));
    ck_assert(!exists(lockfile("row")));
}
END_TEST

/* a held lock: a second launch is refused naming the row and the lock, and the lock is left in place */
START_TEST(test_held)
{
    struct np_launch_lock a, b;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &a, &err), NP_OK);
    ck_assert_int_eq(np_launch_lock_take(root, "row", &b, &err), NP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.text, "row is being launched now"));
    ck_assert_ptr_nonnull(strstr(err.text, lockfile("row")));
    ck_assert_ptr_null(b.path);
    ck_assert_int_eq(b.fd, -1);
    ck_assert(exists(lockfile("row")));
    /* another row is free meanwhile */
    ck_assert_int_eq(np_launch_lock_take(root, "row2", &b, &err), NP_OK);
    np_launch_lock_release(&b);
    np_launch_lock_release(&a);
    ck_assert_int_eq(np_launch_lock_take(root, "row", &b, &err), NP_OK);
    np_launch_lock_release(&b);
}
END_TEST

/* a stale lock (this host's, flock free: its launch was killed) is not busy and is taken over */
START_TEST(test_stale)
{
    char me[256] = "", why[800] = "";
    gethostname(me, sizeof me - 1);
    write_owner("row", me);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 0);
    struct np_launch_lock l;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_OK);
    char line[512] = "";
    FILE *f = fopen(lockfile("row"), "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_ptr_null(strstr(line, "pid=999999")); /* the new owner's line, not the stale one's */
    np_launch_lock_release(&l);
    /* a stale lock with no owner line at all is stale too */
    write_owner("row", "");
    FILE *g = fopen(lockfile("row"), "w");
    fclose(g);
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_OK);
    np_launch_lock_release(&l);
    /* this host's lock whose flock is held (by another open file: sbatch inheriting it) is not stale */
    write_owner("row", me);
    int fd = open(lockfile("row"), O_RDONLY);
    ck_assert(fd >= 0);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(why, "pid=999999"));
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_E_INVALID);
    ck_assert(exists(lockfile("row")));
    close(fd);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 0);
}
END_TEST

/* another host's lock cannot be told stale: named, never taken over */
START_TEST(test_other_host)
{
    write_owner("row", "node-elsewhere-17");
    char why[800] = "";
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(why, "host node-elsewhere-17 (pid 999999)"));
    struct np_launch_lock l;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.text, "node-elsewhere-17"));
    ck_assert(exists(lockfile("row")));
}
END_TEST

/* the lock cannot be made (STAGE_PATH's experiments is a file): an I/O error naming the lock */
START_TEST(test_cannot_make)
{
    char d[600];
    snprintf(d, sizeof d, "%s/experiments", root);
    FILE *f = fopen(d, "w");
    fclose(f);
    struct np_launch_lock l;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_E_IO);
    ck_assert_ptr_nonnull(strstr(err.text, "cannot create the launch lock"));
    ck_assert_ptr_null(l.path);
}
END_TEST

/* a lock that cannot be opened (a symbolic link at its name: the lock is never followed) is never taken over:
 * refused at once naming why, not retried as if it had been released */
START_TEST(test_unopenable)
{
    char d[600];
    snprintf(d, sizeof d, "%s/experiments", root);
    mkdir(d, 0755);
    ck_assert_int_eq(symlink("/nonexistent-target", lockfile("row")), 0);
    char why[800] = "";
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 1);
    struct np_launch_lock l;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "cannot be opened") != NULL, "%s", err.text);
    ck_assert(exists(lockfile("row")));
}
END_TEST

/* a stale-looking race: the lock a launch's link() ran into is released by its holder before the launch looks at
 * it (open() finds nothing): the launch tries again and takes the lock, never refused as "cannot be opened" */
START_TEST(test_released_meanwhile)
{
    struct np_launch_lock a, b;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &a, &err), NP_OK);
    race_release = 1;
    ck_assert_msg(np_launch_lock_take(root, "row", &b, &err) == NP_OK, "refused: %s", err.text);
    ck_assert_int_eq(race_release, 0); /* the race did happen */
    ck_assert(exists(lockfile("row")));
    np_launch_lock_release(&b);
    free(a.path); /* not released: its file is gone (the race), its path now b's */
    close(a.fd);
}
END_TEST

/* out of memory while the lock's paths are made (the first or the second allocation): NP_E_NOMEM, nothing left
 * behind (no lock, no temporary file, no folder), and the next take works */
START_TEST(test_out_of_memory)
{
    for (int k = 1; k <= 2; k++) {
        struct np_launch_lock l;
        struct np_error err = {0};
        realloc_fail_at = k;
        enum np_status st = np_launch_lock_take(root, "row", &l, &err);
        realloc_fail_at = 0;
        ck_assert_msg(st == NP_E_NOMEM, "allocation %d failing: status %d: %s", k, (int)st, err.text);
        ck_assert_ptr_nonnull(strstr(err.text, "out of memory"));
        ck_assert_ptr_null(l.path);
        ck_assert_int_eq(l.fd, -1);
        char d[600];
        snprintf(d, sizeof d, "%s/experiments", root);
        ck_assert(!exists(d));
    }
    struct np_launch_lock l;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_OK);
    np_launch_lock_release(&l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lock");
    TCase *tc = tcase_create("lock");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_take_release);
    tcase_add_test(tc, test_held);
    tcase_add_test(tc, test_stale);
    tcase_add_test(tc, test_other_host);
    tcase_add_test(tc, test_cannot_make);
    tcase_add_test(tc, test_unopenable);
    tcase_add_test(tc, test_released_meanwhile);
    tcase_add_test(tc, test_out_of_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
