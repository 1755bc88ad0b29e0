/* runstate.c - the last error of a log.
 *
 * Reads only the end of a log (64 KiB): failures are printed last.  Lines are matched with
 * fixed strings for the well-known messages and one PCRE2 pattern for Python's exception
 * line.  The scheduler's word on runs without a final log: runs_slurm.c.
 */
#include "nemoperf/parse/runstate.h"
#include "nemoperf/util/fileio.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fcntl.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUNSTATE_TAIL 65536

static pcre2_code *runstate_re_python; /* "[rank: ]pkg.Name(Error|Exception|Interrupt)[: text]" */
static pthread_once_t runstate_once = PTHREAD_ONCE_INIT;

static void runstate_init(void)
{
    int ec;
    PCRE2_SIZE off;
    runstate_re_python =
        pcre2_compile((PCRE2_SPTR) "^(?:[0-9]{1,6}: )?(?:[A-Za-z_][A-Za-z0-9_]*\\.)*[A-Za-z_][A-Za-z0-9_]*"
                                   "(?:Error|Exception|Interrupt)(?::|$)",
                      PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
}

static const char *runstate_find(const char *s, size_t n, const char *needle)
{
    return memmem(s, n, needle, strlen(needle));
}

/* Kind of one line, NONE when it is not an error line. */
static enum np_log_error runstate_kind(const char *s, size_t n, pcre2_match_data *md, const char **label)
{
    if (runstate_find(s, n, "CUDA out of memory") || runstate_find(s, n, "OutOfMemoryError")) {
        *label = "CUDA out of memory";
        return NP_LOGERR_OOM;
    }
    if (runstate_find(s, n, "NCCL error") || runstate_find(s, n, "ncclSystemError") ||
        runstate_find(s, n, "ncclInternalError") || runstate_find(s, n, "ncclUnhandledCudaError") ||
        runstate_find(s, n, "ncclRemoteError") || runstate_find(s, n, "ncclInvalidUsage")) {
        *label = "NCCL error";
        return NP_LOGERR_NCCL;
    }
    if ((runstate_find(s, n, "*** JOB ") || runstate_find(s, n, "*** STEP ")) &&
        runstate_find(s, n, " CANCELLED AT ")) {
        *label = runstate_find(s, n, "DUE TO TIME LIMIT") ? "Slurm TIMEOUT" : "Slurm CANCELLED";
        return NP_LOGERR_SLURM;
    }
    if (md && runstate_re_python &&
        pcre2_match(runstate_re_python, (PCRE2_SPTR)s, n, 0, 0, md, NULL) >= 1) {
        *label = "Python exception";
        return NP_LOGERR_PYTHON;
    }
    return NP_LOGERR_NONE;
}

static void runstate_put(const char *label, const char *s, size_t n, char *out, size_t size)
{
    while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    int w = snprintf(out, size, "%s: ", label);
    size_t o = w < 0 ? 0 : (size_t)w < size ? (size_t)w : size - 1; /* no room after the label: the label only */
    const size_t max = 200; /* bytes of the line kept */
    for (size_t i = 0; i < n && i < max && o + 4 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    if (n > max && o + 4 < size) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o < size ? o : size - 1] = '\0';
}

enum np_log_error np_log_last_error_buf(const char *buf, size_t len, char *out, size_t size)
{
    pthread_once(&runstate_once, runstate_init);
    pcre2_match_data *md =
        runstate_re_python ? pcre2_match_data_create_from_pattern(runstate_re_python, NULL) : NULL;
    const char *slurm = NULL, *other = NULL, *slabel = NULL, *olabel = NULL;
    size_t slen = 0, olen = 0;
    enum np_log_error okind = NP_LOGERR_NONE;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - buf) : len;
        /* tqdm and srun redraw with \r: the part after the last \r is what shows */
        size_t st = i;
        for (size_t k = i; k < e; k++)
            if (buf[k] == '\r' && k + 1 < e)
                st = k + 1;
        const char *label = NULL;
        enum np_log_error k = runstate_kind(buf + st, e - st, md, &label);
        if (k == NP_LOGERR_SLURM) {
            slurm = buf + st;
            slen = e - st;
            slabel = label;
        } else if (k != NP_LOGERR_NONE) {
            other = buf + st;
            olen = e - st;
            olabel = label;
            okind = k;
        }
        i = e + 1;
    }
    pcre2_match_data_free(md);
    if (size)
        out[0] = '\0';
    if (slurm) {
        runstate_put(slabel, slurm, slen, out, size);
        return NP_LOGERR_SLURM;
    }
    if (other)
        runstate_put(olabel, other, olen, out, size);
    return okind;
}

enum np_log_error np_log_last_error_at(int dirfd, const char *name, char *out, size_t size)
{
    if (size)
        out[0] = '\0';
    int fd;
    struct np_error ferr;
    if (np_file_open_regular(dirfd, name, &fd, &ferr) != NP_OK)
        return NP_LOGERR_NONE;
    struct stat sb;
    enum np_log_error k = NP_LOGERR_NONE;
    char *buf = NULL;
    if (fstat(fd, &sb) == 0 && (buf = malloc(RUNSTATE_TAIL))) {
        off_t from = sb.st_size > RUNSTATE_TAIL ? sb.st_size - RUNSTATE_TAIL : 0;
        ssize_t got = pread(fd, buf, RUNSTATE_TAIL, from);
        if (got > 0) {
            size_t skip = 0;
            if (from > 0) { /* the first line is cut: skip it */
                const char *nl = memchr(buf, '\n', (size_t)got);
                skip = nl ? (size_t)(nl - buf) + 1 : (size_t)got;
            }
            k = np_log_last_error_buf(buf + skip, (size_t)got - skip, out, size);
        }
    }
    free(buf);
    close(fd);
    return k;
}

/* Runs whose logs are not final: the scheduler may know more. */
