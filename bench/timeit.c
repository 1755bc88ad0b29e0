/* timeit.c - wall-clock one command for `make bench`, without a shell or `date` in the measured span.
 *
 * usage: timeit [-p] [-l] [-o FILE] CMD [ARG...]
 * Runs CMD with stdin from /dev/null and stdout to FILE (default /dev/null), or with -p to a pipe that timeit
 * drains itself (like a terminal or `| wc`; -l also counts the lines).  Use -p for grep: GNU grep stops at the
 * first match of each file when its stdout is /dev/null, which is not what the seed's command costs.
 * Prints "SECONDS STATUS BYTES LINES MAXRSS_KB CPU_SECONDS" (monotonic clock; STATUS = exit code or 128+signal;
 * BYTES/LINES of the drained output, 0 without -p, LINES -1 without -l; MAXRSS_KB = the command's peak resident
 * memory and CPU_SECONDS its user + system time, all threads, from wait4's rusage) and exits 0, or 127 when CMD
 * cannot be started.
 * Standalone: cc -O2 -std=c11 -D_GNU_SOURCE -o timeit timeit.c
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void ti_usage(FILE *f)
{
    fprintf(f, "usage: timeit [-p] [-l] [-o FILE] CMD [ARG...]\n");
}

int main(int argc, char **argv)
{
    const char *out = "/dev/null";
    int ch, use_pipe = 0, count_lines = 0;
    while ((ch = getopt(argc, argv, "+o:plh")) != -1) {
        switch (ch) {
        case 'o': out = optarg; break;
        case 'p': use_pipe = 1; break;
        case 'l': count_lines = 1; break;
        case 'h': ti_usage(stdout); return 0;
        default: ti_usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        ti_usage(stderr);
        return 2;
    }
    int pfd[2] = {-1, -1};
    int ofd = -1;
    if (use_pipe) {
        if (pipe2(pfd, O_CLOEXEC) != 0) {
            fprintf(stderr, "timeit: pipe: %s\n", strerror(errno));
            return 127;
        }
        fcntl(pfd[0], F_SETPIPE_SZ, 1 << 20); /* fewer wake-ups; best effort */
        ofd = pfd[1];
    } else {
        ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    int ifd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (ofd < 0 || ifd < 0) {
        fprintf(stderr, "timeit: %s: %s\n", ofd < 0 ? out : "/dev/null", strerror(errno));
        return 127;
    }
    size_t cap = 1 << 20;
    char *buf = use_pipe ? malloc(cap) : NULL;
    if (use_pipe && !buf) {
        fprintf(stderr, "timeit: out of memory\n");
        return 127;
    }
    fflush(stdout);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "timeit: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        dup2(ifd, 0);
        dup2(ofd, 1);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "timeit: %s: %s\n", argv[optind], strerror(errno));
        _exit(127);
    }
    close(ofd);
    unsigned long long bytes = 0;
    long long lines = count_lines ? 0 : -1;
    if (use_pipe) {
        for (;;) {
            ssize_t n = read(pfd[0], buf, cap);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            bytes += (unsigned long long)n;
            if (count_lines)
                for (const char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
                    lines++;
        }
        close(pfd[0]);
    }
    int st;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "timeit: waitpid: %s\n", strerror(errno));
            return 127;
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(ifd);
    free(buf);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec / 1e6;
    printf("%.6f %d %llu %lld %ld %.6f\n", s, rc, bytes, lines, ru.ru_maxrss, cpu);
    return rc == 127 ? 127 : 0;
}
