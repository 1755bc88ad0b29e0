/* tailread.c - the floor for `make bench`: read the last N bytes of every *.out file under some folders.
 *
 * Default: walk each folder with nftw (no symlinks followed), then T threads open, fstat and pread the last
 * -b bytes (default 64 KiB) of each file and count the newlines read (so the data is used).  With -p the walk
 * itself is parallel too (T threads share a folder stack; readdir d_type, openat; no per-entry stat), which
 * is the real floor when there are many small runs.  -g GLOB reads only the files whose name matches (fnmatch,
 * default "*.out"): -g 'log-*.out' -b 32768 is what a parser of the logs' last steps must read at least.
 * Prints "files F bytes B newlines L walk_s W" on stdout.
 * Standalone: cc -O2 -std=c11 -D_GNU_SOURCE -pthread -o tailread tailread.c
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char **tr_paths;
static size_t tr_npaths, tr_cap;
static size_t tr_bytes = 65536;
static const char *tr_glob = "*.out";
static atomic_size_t tr_next;
static atomic_uint_fast64_t tr_total, tr_lines;
static atomic_int tr_errors;

static int tr_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (type != FTW_F) return 0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (fnmatch(tr_glob, base, 0) != 0) return 0;
    if (tr_npaths == tr_cap) {
        tr_cap = tr_cap ? tr_cap * 2 : 4096;
        char **p = realloc(tr_paths, tr_cap * sizeof *p);
        if (!p) { fprintf(stderr, "tailread: out of memory\n"); exit(1); }
        tr_paths = p;
    }
    tr_paths[tr_npaths] = strdup(path);
    if (!tr_paths[tr_npaths]) { fprintf(stderr, "tailread: out of memory\n"); exit(1); }
    tr_npaths++;
    return 0;
}

/* Reads the tail of an open file into buf, closes fd; counts into *total / *lines. */
static void tr_tail(int fd, const char *name, char *buf, uint64_t *total, uint64_t *lines)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fprintf(stderr, "tailread: %s: %s\n", name, strerror(errno));
        atomic_fetch_add(&tr_errors, 1);
        close(fd);
        return;
    }
    off_t want = st.st_size < (off_t)tr_bytes ? st.st_size : (off_t)tr_bytes;
    off_t off = st.st_size - want;
    size_t got = 0;
    while ((off_t)got < want) {
        ssize_t n = pread(fd, buf + got, (size_t)want - got, off + (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    *total += got;
    for (const char *p = buf, *end = buf + got; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) (*lines)++;
}

static void *tr_worker(void *arg)
{
    (void)arg;
    char *buf = malloc(tr_bytes);
    uint64_t total = 0, lines = 0;
    if (!buf) { fprintf(stderr, "tailread: out of memory\n"); exit(1); }
    for (;;) {
        size_t i = atomic_fetch_add(&tr_next, 1);
        if (i >= tr_npaths) break;
        int fd = open(tr_paths[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "tailread: %s: %s\n", tr_paths[i], strerror(errno));
            atomic_fetch_add(&tr_errors, 1);
            continue;
        }
        tr_tail(fd, tr_paths[i], buf, &total, &lines);
    }
    free(buf);
    atomic_fetch_add(&tr_total, total);
    atomic_fetch_add(&tr_lines, lines);
    return NULL;
}

/* ---- parallel walk (-p): a shared stack of open folder fds */
static int *tr_stack;
static size_t tr_depth, tr_scap;
static int tr_busy;                 /* workers holding a folder */
static pthread_mutex_t tr_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tr_cv = PTHREAD_COND_INITIALIZER;
static atomic_size_t tr_nfiles;

static void tr_push(int fd)
{   /* caller holds tr_mu */
    if (tr_depth == tr_scap) {
        tr_scap = tr_scap ? tr_scap * 2 : 1024;
        int *p = realloc(tr_stack, tr_scap * sizeof *p);
        if (!p) { fprintf(stderr, "tailread: out of memory\n"); exit(1); }
        tr_stack = p;
    }
    tr_stack[tr_depth++] = fd;
}

static void *tr_pworker(void *arg)
{
    (void)arg;
    char *buf = malloc(tr_bytes);
    uint64_t total = 0, lines = 0;
    int pend[64], npend = 0;
    if (!buf) { fprintf(stderr, "tailread: out of memory\n"); exit(1); }
    for (;;) {
        pthread_mutex_lock(&tr_mu);
        while (tr_depth == 0 && tr_busy > 0) pthread_cond_wait(&tr_cv, &tr_mu);
        if (tr_depth == 0) {     /* nothing left and nobody can add more */
            pthread_cond_broadcast(&tr_cv);
            pthread_mutex_unlock(&tr_mu);
            break;
        }
        int dfd = tr_stack[--tr_depth];
        tr_busy++;
        pthread_mutex_unlock(&tr_mu);

        DIR *d = fdopendir(dfd);
        if (!d) { close(dfd); atomic_fetch_add(&tr_errors, 1); }
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            const char *n = e->d_name;
            if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
            unsigned char t = e->d_type;
            if (t == DT_UNKNOWN) {
                struct stat st;
                if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
                t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
            }
            if (t == DT_DIR) {
                int sub = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0) { atomic_fetch_add(&tr_errors, 1); continue; }
                pend[npend++] = sub;
                if (npend == 64) {
                    pthread_mutex_lock(&tr_mu);
                    while (npend) tr_push(pend[--npend]);
                    pthread_cond_broadcast(&tr_cv);
                    pthread_mutex_unlock(&tr_mu);
                }
            } else if (t == DT_REG) {
                if (fnmatch(tr_glob, n, 0) != 0) continue;
                int fd = openat(dfd, n, O_RDONLY | O_CLOEXEC);
                if (fd < 0) { atomic_fetch_add(&tr_errors, 1); continue; }
                atomic_fetch_add(&tr_nfiles, 1);
                tr_tail(fd, n, buf, &total, &lines);
            }
        }
        if (d) closedir(d);
        pthread_mutex_lock(&tr_mu);
        while (npend) tr_push(pend[--npend]);
        tr_busy--;
        pthread_cond_broadcast(&tr_cv);
        pthread_mutex_unlock(&tr_mu);
    }
    free(buf);
    atomic_fetch_add(&tr_total, total);
    atomic_fetch_add(&tr_lines, lines);
    return NULL;
}

static double tr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    int ch, par = 0;
    while ((ch = getopt(argc, argv, "j:b:g:ph")) != -1) {
        switch (ch) {
        case 'g': tr_glob = optarg; break;
        case 'j': jobs = strtol(optarg, NULL, 10); break;
        case 'p': par = 1; break;
        case 'b': tr_bytes = (size_t)strtoul(optarg, NULL, 10); break;
        case 'h':
        default:
            fprintf(ch == 'h' ? stdout : stderr, "usage: tailread [-p] [-j THREADS] [-b BYTES] [-g GLOB] DIR...\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    if (optind >= argc || tr_bytes == 0) {
        fprintf(stderr, "usage: tailread [-p] [-j THREADS] [-b BYTES] [-g GLOB] DIR...\n");
        return 2;
    }
    if (jobs < 1) jobs = 1;
    if (jobs > 256) jobs = 256;
    double t0 = tr_now(), walk;
    void *(*fn)(void *) = tr_worker;
    if (par) {
        for (int i = optind; i < argc; i++) {
            int fd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd < 0) {
                fprintf(stderr, "tailread: %s: %s\n", argv[i], strerror(errno));
                return 1;
            }
            tr_push(fd);
        }
        fn = tr_pworker;
    } else {
        for (int i = optind; i < argc; i++) {
            if (nftw(argv[i], tr_visit, 64, FTW_PHYS) != 0) {
                fprintf(stderr, "tailread: %s: %s\n", argv[i], strerror(errno));
                return 1;
            }
        }
    }
    walk = tr_now() - t0;
    pthread_t th[256];
    for (long t = 1; t < jobs; t++)
        if (pthread_create(&th[t], NULL, fn, NULL) != 0) { jobs = t; break; }
    fn(NULL);
    for (long t = 1; t < jobs; t++) pthread_join(th[t], NULL);
    if (par) walk = tr_now() - t0;  /* walk and reads overlap: report the whole span */
    printf("files %zu bytes %llu newlines %llu %s %.6f\n", par ? atomic_load(&tr_nfiles) : tr_npaths,
           (unsigned long long)atomic_load(&tr_total), (unsigned long long)atomic_load(&tr_lines),
           par ? "walk+read_s" : "walk_s", walk);
    for (size_t i = 0; i < tr_npaths; i++) free(tr_paths[i]);
    free(tr_paths);
    return atomic_load(&tr_errors) ? 1 : 0;
}
