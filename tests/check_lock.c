/* check_lock.c - the per-experiment launch lock (src/launch/lock.c) on a real file system: a free row is
 * locked and released (its folder removed only when the lock made it), a held lock refuses a second launch
 * and is reported busy, a stale lock (owner line of this host, flock free: a launch killed here) is taken over,
 * another host's lock is only named.  The locks are real files and real flock()s in a temporary STAGE_PATH; a
 * "held" lock is one this process holds through another open file description.  Faults are injected (this test's
 * own link(), realloc(), flock(), unlink() and lstat() stand in for libc's, each armed for one case and passing
 * through otherwise): the lock released by its holder between a launch's link(2) finding it and the look at it, or
 * replaced by a second launch's between the open() and the look (races too narrow to hit on demand), a lock coming
 * back at every look, a file system without flock, a stale lock that cannot be removed (the tests run as root, whom
 * permissions do not stop), and an allocation failure (no way to run out of memory on purpose here).
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
static int link_phantom;     /* 1: every link() fails with EEXIST, linking nothing (below) */
static int link_calls;       /* link() calls counted while link_phantom is armed */

int link(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");
    if (link_phantom) {
        link_calls++;
        errno = EEXIST;
        return -1;
    }
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

/* More injected faults for the cases below: link() answering EEXIST for a lock that is not there (a lock that keeps
 * coming back the moment it is looked at), flock() failing with a chosen errno (a file system without flock: NFS
 * without its lock manager), unlink() of the lock failing (a folder the launch may not write), and lstat() of the
 * lock finding another file there (a second launch took the stale lock over between this one's open() and its
 * look).  Each is armed by its case and passes through otherwise. */
static int flock_errno;      /* 0: off; else every flock() fails with it */
static int unlink_lock_errno; /* 0: off; else unlink() of a *.lock fails with it (ENOENT: removes it first) */
static int lstat_swap_fd = -1; /* >= 0: the next lstat() of a *.lock first renames a new lock over it, held by this */

static int is_lock(const char *p)
{
    size_t n = strlen(p);
    return n > 5 && strcmp(p + n - 5, ".lock") == 0;
}

int flock(int fd, int op)
{
    static int (*real)(int, int);
    if (!real)
        real = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
    if (flock_errno) {
        errno = flock_errno;
        return -1;
    }
    return real(fd, op);
}

int unlink(const char *p)
{
    static int (*real)(const char *);
    if (!real)
        real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    if (unlink_lock_errno && is_lock(p)) {
        int e = unlink_lock_errno;
        unlink_lock_errno = 0;
        if (e == ENOENT)
            real(p);
        errno = e;
        return -1;
    }
    return real(p);
}

int lstat(const char *restrict p, struct stat *restrict st)
{
    static int (*real)(const char *restrict, struct stat *restrict);
    if (!real)
        real = (int (*)(const char *restrict, struct stat *restrict))dlsym(RTLD_NEXT, "lstat");
    if (lstat_swap_fd >= 0 && is_lock(p)) {
        char tmp[700];
        snprintf(tmp, sizeof tmp, "%s.other", p);
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0644);
        ck_assert(fd >= 0);
        char me[256] = "";
        gethostname(me, sizeof me - 1);
        ck_assert(dprintf(fd, "host=%s pid=4242 time=1\n", me) > 0); /* this host's, held: a live launch */
        ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
        ck_assert_int_eq(rename(tmp, p), 0);
        lstat_swap_fd = -1 - fd; /* fired: -1 - fd keeps the descriptor for the case to close */
    }
    return real(p, st);
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

/* an owner nobody can name: an empty lock file held (its launch died before writing it, its sbatch still runs) is
 * busy, named "owner unknown"; free, it is stale (busy 0, taken over).  An owner line that is not host=... pid=...
 * names no other host: this host's, its first line shown as it is */
START_TEST(test_owner_unknown)
{
    char d[600], why[800] = "";
    snprintf(d, sizeof d, "%s/experiments", root);
    mkdir(d, 0755);
    FILE *f = fopen(lockfile("row"), "w");
    fclose(f);
    int fd = open(lockfile("row"), O_RDONLY);
    ck_assert(fd >= 0);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    char want[800];
    snprintf(want, sizeof want, "another launch or the sbatch it started (owner unknown) holds %s", lockfile("row"));
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 1);
    ck_assert_str_eq(why, want);
    struct np_launch_lock l;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_E_INVALID);
    char want2[900];
    snprintf(want2, sizeof want2, "row is being launched now: %s", want);
    ck_assert_str_eq(err.text, want2);
    close(fd);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 0);
    /* an owner line of no known shape, held: shown as it is */
    f = fopen(lockfile("row"), "w");
    fputs("written by hand\nsecond line\n", f);
    fclose(f);
    fd = open(lockfile("row"), O_RDONLY);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 1);
    snprintf(want, sizeof want, "another launch or the sbatch it started (written by hand) holds %s", lockfile("row"));
    ck_assert_str_eq(why, want);
    close(fd);
    /* a host= without its pid= is no owner line either (not another host's lock): shown as it is */
    f = fopen(lockfile("row"), "w");
    fputs("host=node-elsewhere-17\n", f);
    fclose(f);
    fd = open(lockfile("row"), O_RDONLY);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 1);
    snprintf(want, sizeof want, "another launch or the sbatch it started (host=node-elsewhere-17) holds %s",
             lockfile("row"));
    ck_assert_str_eq(why, want);
    close(fd);
    ck_assert_int_eq(np_launch_lock_busy(root, "row", why, sizeof why), 0);
    ck_assert_int_eq(np_launch_lock_take(root, "row", &l, &err), NP_OK);
    np_launch_lock_release(&l);
    ck_assert(!exists(lockfile("row")));
}
END_TEST

/* a lock that comes back each time it is looked at: 4 tries, then refused naming it (never a loop without end) */
START_TEST(test_came_back)
{
    struct np_launch_lock l;
    struct np_error err = {0};
    link_phantom = 1;
    link_calls = 0;
    enum np_status st = np_launch_lock_take(root, "row", &l, &err);
    link_phantom = 0;
    ck_assert_int_eq(st, NP_E_INVALID);
    ck_assert_int_eq(link_calls, 4);
    char want[900];
    snprintf(want, sizeof want, "row is being launched now: its lock %s came back at once", lockfile("row"));
    ck_assert_str_eq(err.text, want);
    ck_assert_ptr_null(l.path);
    ck_assert_int_eq(l.fd, -1);
    ck_assert(!exists(lockfile("row")));
}
END_TEST

/* a file system without flock (ENOLCK, EOPNOTSUPP, ENOSYS): the lock is still made by link(); any other flock error
 * refuses the launch as an I/O error, leaving no temporary file */
START_TEST(test_no_flock)
{
    int ok[] = {ENOLCK, EOPNOTSUPP, ENOSYS};
    for (int i = 0; i < 3; i++) {
        struct np_launch_lock l;
        struct np_error err = {0};
        flock_errno = ok[i];
        enum np_status st = np_launch_lock_take(root, "row", &l, &err);
        flock_errno = 0;
        ck_assert_msg(st == NP_OK, "flock errno %d: %s", ok[i], err.text);
        ck_assert(exists(lockfile("row")));
        np_launch_lock_release(&l);
    }
    struct np_launch_lock l;
    struct np_error err = {0};
    flock_errno = EIO;
    enum np_status st = np_launch_lock_take(root, "row", &l, &err);
    flock_errno = 0;
    ck_assert_int_eq(st, NP_E_IO);
    ck_assert_str_eq(err.text, "cannot create the launch lock: Input/output error");
    ck_assert(!exists(lockfile("row")));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -A '%s/experiments' | grep -q .", root);
    ck_assert_int_ne(system(cmd), 0); /* no .new left behind */
}
END_TEST

/* a stale lock that cannot be removed: refused naming it and why, the lock left; one removed by someone else
 * meanwhile (ENOENT): taken */
START_TEST(test_stale_unremovable)
{
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    write_owner("row", me);
    struct np_launch_lock l;
    struct np_error err = {0};
    unlink_lock_errno = EACCES;
    enum np_status st = np_launch_lock_take(root, "row", &l, &err);
    unlink_lock_errno = 0;
    ck_assert_int_eq(st, NP_E_INVALID);
    char want[900];
    snprintf(want, sizeof want, "row is being launched now: cannot remove a stale launch lock %s: Permission denied",
             lockfile("row"));
    ck_assert_str_eq(err.text, want);
    ck_assert(exists(lockfile("row")));
    unlink_lock_errno = ENOENT;
    st = np_launch_lock_take(root, "row", &l, &err);
    unlink_lock_errno = 0;
    ck_assert_msg(st == NP_OK, "%s", err.text);
    np_launch_lock_release(&l);
}
END_TEST

/* a stale lock replaced by a second launch's between this launch's open() and its look (another inode at the name
 * now): the new lock is not removed; this launch tries again and finds it held */
START_TEST(test_stale_replaced)
{
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    write_owner("row", me);
    struct np_launch_lock l;
    struct np_error err = {0};
    lstat_swap_fd = 0;
    enum np_status st = np_launch_lock_take(root, "row", &l, &err);
    ck_assert_int_lt(lstat_swap_fd, -1); /* fired */
    int fd = -1 - lstat_swap_fd;
    lstat_swap_fd = -1;
    ck_assert_int_eq(st, NP_E_INVALID);
    char want[900];
    snprintf(want, sizeof want, "row is being launched now: another launch or the sbatch it started (host=%s pid=4242 "
             "time=1) holds %s", me, lockfile("row"));
    ck_assert_str_eq(err.text, want);
    FILE *f = fopen(lockfile("row"), "r");
    char line[300] = "";
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    char line_want[300];
    snprintf(line_want, sizeof line_want, "host=%s pid=4242 time=1\n", me);
    ck_assert_str_eq(line, line_want);
    close(fd);
}
END_TEST

/* a lock whose temporary name would not fit a path: refused as an I/O error naming why, nothing left behind */
START_TEST(test_name_too_long)
{
    char exp[4200];
    memset(exp, 'x', 4100);
    exp[4100] = '\0';
    struct np_launch_lock l;
    struct np_error err = {0};
    ck_assert_int_eq(np_launch_lock_take(root, exp, &l, &err), NP_E_IO);
    ck_assert_str_eq(err.text, "cannot create the launch lock: File name too long");
    ck_assert_ptr_null(l.path);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -A '%s/experiments' | grep -q .", root);
    ck_assert_int_ne(system(cmd), 0);
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
    tcase_add_test(tc, test_owner_unknown);
    tcase_add_test(tc, test_came_back);
    tcase_add_test(tc, test_no_flock);
    tcase_add_test(tc, test_stale_unremovable);
    tcase_add_test(tc, test_stale_replaced);
    tcase_add_test(tc, test_name_too_long);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
