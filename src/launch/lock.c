/* lock.c - the per-experiment launch lock (issue 23: two launches of one row both submitted;
 * a launch killed while its sbatch ran had its record settled as "not submitted").
 *
 * O_EXCL creation makes the lock on every file system STAGE_PATH lives on (local, NFSv3+,
 * Lustre); flock() on the same file, inherited by sbatch, says whether anything of the
 * launch still runs on this host.  Stale locks (their flock free) are taken over.
 */
#include "nemoperf/launch/lock.h"

#include <errno.h>
#include <fcntl.h>
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
    for (int attempt = 0; attempt < 2; attempt++) {
        /* not O_CLOEXEC: sbatch inherits it, and with it the flock, while it runs */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd >= 0) {
            char me[256] = "";
            gethostname(me, sizeof me - 1);
            dprintf(fd, "host=%s pid=%ld time=%lld\n", me, (long)getpid(), (long long)time(NULL));
            if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno != ENOLCK && errno != EOPNOTSUPP && errno != ENOSYS) {
                /* someone took the new file's flock between our create and now: never seen */
                int e = errno;
                close(fd);
                free(path);
                return np_error_set(err, NP_E_IO, experiment, 0, 0, "cannot lock the launch lock: %s", strerror(e));
            }
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
        int held = lock_held(path, why, sizeof why);
        if (held == 1) {
            np_error_set(err, NP_E_INVALID, experiment, 0, 0, "%s is being launched now: %s", experiment, why);
            free(path);
            return NP_E_INVALID;
        }
        if (held == 0 && unlink(path) != 0 && errno != ENOENT) { /* stale: its launch and sbatch are gone */
            int e = errno;
            np_error_set(err, NP_E_IO, path, 0, 0, "cannot remove a stale launch lock: %s", strerror(e));
            free(path);
            return NP_E_IO;
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
