/* slowflock.c - fault-injection stand-in for tests/e2e/17-launch-race.sh (LD_PRELOAD): flock() on a descriptor
 * opened for writing waits NP_SLOW_FLOCK_MS milliseconds first, mkdir() NP_SLOW_MKDIR_MS.  It stands for a launch
 * descheduled between making its lock file and locking it on a loaded login node with a slow file system: the
 * window two launches of one row once both went through, too narrow to hit on demand otherwise (0 duplicates in
 * 240 trials here without it).  Read-only descriptors (a launch testing someone else's lock) are not slowed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

static void slow(const char *var)
{
    const char *ms = getenv(var);
    long m = ms ? strtol(ms, NULL, 10) : 0;
    struct timespec ts = {m / 1000, (m % 1000) * 1000000L};
    if (m > 0)
        nanosleep(&ts, NULL);
}

int flock(int fd, int op)
{
    static int (*real)(int, int);
    if (!real)
        real = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1 && (fl & O_ACCMODE) != O_RDONLY)
        slow("NP_SLOW_FLOCK_MS");
    return real(fd, op);
}

/* mkdir waits NP_SLOW_MKDIR_MS first: a slow file system, so that the time from a launch's lock to its experiment
 * folder (what a second launch's check for an earlier job sees) is long enough to matter */
int mkdir(const char *path, mode_t mode)
{
    static int (*real)(const char *, mode_t);
    if (!real)
        real = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
    slow("NP_SLOW_MKDIR_MS");
    return real(path, mode);
}
