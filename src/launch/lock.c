/* lock.c - the per-experiment launch lock (issue 23: two launches of one row both submitted;
 * a launch killed while its sbatch ran had its record settled as "not submitted").
 *
 * The lock file is made at a private name, its owner written and its flock taken, then linked into
 * place (link(2): atomic on every file system STAGE_PATH lives on, local, NFS, Lustre), so no launch
 * ever finds it unlocked; flock() on it, inherited by sbatch, says whether anything of the launch
 * still runs on this host.  A stale lock (its flock free) is removed only by a launch holding its
 * flock, and only while it is still the file at the lock's name.
 */
#include "nemoperf/launch/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/util/shell.h"

static char *lock_path(const char *stage_path, const char *experiment)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/experiments/.%s.lock", stage_path, experiment);
    return np_buf_steal(&b);
}

/* The owner line of an existing lock ("host pid start"), "" when unreadable. */
static void lock_owner(const char *path, char *host, size_t hsize, long *pid, char *text, size_t tsize)
{
    host[0] = text[0] = '\0';
    *pid = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    char h[256];
    long p = 0;
    if (sscanf(buf, "host=%255s pid=%ld", h, &p) == 2) {
        snprintf(host, hsize, "%s", h);
        *pid = p;
    }
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(text, tsize, "%.300s", buf);
}

/* 1: held (flock busy here, or another host's: cannot be told); 0: free (stale); -1: none */
static int lock_held(const char *path, char *why, size_t size)
{
    char host[256], me[256] = "", text[320];
    long pid;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? -1 : 1; /* a lock that cannot be opened cannot be taken over */
    lock_owner(path, host, sizeof host, &pid, text, sizeof text);
    gethostname(me, sizeof me - 1);
    if (host[0] && strcmp(host, me) != 0) {
        close(fd);
        snprintf(why, size, "a launch on host %s (pid %ld) holds %s; remove it if no launch runs there", host, pid,
                 path);
        return 1;
    }
    int busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* also drops the flock just taken */
    if (busy)
        snprintf(why, size, "another launch or the sbatch it started (%s) holds %s", text[0] ? text : "owner unknown",
                 path);
    return busy;
}

/* A new lock file, already holding its owner line and its flock, at a private name beside the lock: linked into
 * place (link(2) is atomic and fails with EEXIST on local file systems, NFS and Lustre), so the lock never exists
 * unlocked for another launch to find "stale" (issue 39: an O_EXCL create followed by the flock left that window).
 * Returns the descriptor, or -1 with errno (EEXIST: a lock is there). */
static int lock_link_new(const char *path)
{
    char me[256] = "", tmp[PATH_MAX];
    gethostname(me, sizeof me - 1);
    if (snprintf(tmp, sizeof tmp, "%s.%.64s.%ld.new", path, me, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* not O_CLOEXEC: sbatch inherits it, and with it the flock, while it runs */
    unlink(tmp); /* a leftover of a launch of this pid that was killed here */
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -1;
    dprintf(fd, "host=%s pid=%ld time=%lld\n", me, (long)getpid(), (long long)time(NULL));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno != ENOLCK && errno != EOPNOTSUPP && errno != ENOSYS) {
        int e = errno; /* a file nobody else knows of: never seen */
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    int r = link(tmp, path), e = errno;
    unlink(tmp);
    if (r != 0) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The lock at path when it is stale: removed while this launch holds its flock and only when it is still the
 * file at path (two launches finding it stale at once remove it once, never the new lock of a third).  1 when
 * another launch holds it (why says who), 0 when it is gone now (removed, or replaced meanwhile: try again). */
static int lock_take_over(const char *path, char *why, size_t size)
{
    char host[256], me[256] = "", text[320];
    long pid;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0; /* released meanwhile */
        snprintf(why, size, "%s cannot be opened (%s): a lock that cannot be read cannot be taken over", path,
                 strerror(errno));
        return 1;
    }
    lock_owner(path, host, sizeof host, &pid, text, sizeof text);
    gethostname(me, sizeof me - 1);
    if (host[0] && strcmp(host, me) != 0) {
        close(fd);
        snprintf(why, size, "a launch on host %s (pid %ld) holds %s; remove it if no launch runs there", host, pid,
                 path);
        return 1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(fd);
        snprintf(why, size, "another launch or the sbatch it started (%s) holds %s", text[0] ? text : "owner unknown",
                 path);
        return 1;
    }
    struct stat a, b; /* stale, its flock ours now: removed if it is still the lock at path */
    if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
        unlink(path) != 0 && errno != ENOENT) {
        snprintf(why, size, "cannot remove a stale launch lock %s: %s", path, strerror(errno));
        close(fd);
        return 1;
    }
    close(fd);
    return 0;
}

enum np_status np_launch_lock_take(const char *stage_path, const char *experiment, struct np_launch_lock *l,
                                   struct np_error *err)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    char *top = NULL;
    struct np_buf b;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/experiments", stage_path);
    top = np_buf_steal(&b);
    char *path = lock_path(stage_path, experiment);
    if (!top || !path) {
        free(top);
        free(path);
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    if (mkdir(top, 0755) == 0)
        l->made_top = 1;
    free(top);
    for (int attempt = 0; attempt < 4; attempt++) {
        int fd = lock_link_new(path);
        if (fd >= 0) {
            l->fd = fd;
            l->path = path;
            return NP_OK;
        }
        if (errno != EEXIST) {
            int e = errno;
            np_error_set(err, NP_E_IO, path, 0, 0, "cannot create the launch lock: %s", strerror(e));
            free(path);
            return NP_E_IO;
        }
        char why[700];
        if (lock_take_over(path, why, sizeof why)) {
            np_error_set(err, NP_E_INVALID, experiment, 0, 0, "%s is being launched now: %s", experiment, why);
            free(path);
            return NP_E_INVALID;
        }
    }
    np_error_set(err, NP_E_INVALID, experiment, 0, 0, "%s is being launched now: its lock %s came back at once",
                 experiment, path);
    free(path);
    return NP_E_INVALID;
}

void np_launch_lock_release(struct np_launch_lock *l)
{
    if (!l)
        return;
    if (l->path) {
        unlink(l->path);
        if (l->made_top) { /* a refused first launch leaves no empty experiments folder */
            char *slash = strrchr(l->path, '/');
            if (slash) {
                *slash = '\0';
                rmdir(l->path);
            }
        }
    }
    if (l->fd >= 0)
        close(l->fd);
    free(l->path);
    l->path = NULL;
    l->fd = -1;
}

int np_launch_lock_busy(const char *stage_path, const char *experiment, char *why, size_t size)
{
    char *path = lock_path(stage_path, experiment);
    if (!path)
        return 0;
    int held = lock_held(path, why, size);
    free(path);
    return held == 1;
}
