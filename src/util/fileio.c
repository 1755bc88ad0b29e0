/* fileio.c - files written whole or not at all; read only when they are regular files.
 *
 * A temporary file beside the target, fsync'd, renamed into place, the folder fsync'd: a reader sees
 * the old file or the new one, never a part (moved from src/launch/manifest.c: the job's driver, the
 * fine-tuning preparation and the manifest all write this way).  Reading opens with O_NONBLOCK and
 * refuses what fstat says is not a regular file; a file is read, not mapped (issue 23).
 */
#include "nemoperf/util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum np_status np_file_write_atomic(const char *dir, const char *name, const char *text, mode_t mode,
                                    struct np_error *err)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
        snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid()) >= (int)sizeof tmp)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "path too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return np_error_set(err, NP_E_IO, tmp, 0, 0, "cannot create: %s", strerror(errno));
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return np_error_set(err, NP_E_IO, tmp, 0, 0, "write failed: %s", strerror(e));
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return np_error_set(err, NP_E_IO, tmp, 0, 0, "write failed: %s", strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot rename %s into place: %s", tmp, strerror(e));
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the rename itself made durable */
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return NP_OK;
}

/* ---- reading: regular files only (O_NONBLOCK + fstat), read not mapped ---- */

static const char *fileio_kind(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

enum np_status np_file_open_regular(int dirfd, const char *path, int *out, struct np_error *err)
{
    *out = -1;
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        np_error_set(err, NP_E_IO, path, 0, 0, "cannot open: %s", strerror(e));
        errno = e; /* a caller may take a missing file for none (ENOENT) */
        return NP_E_IO;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot read: %s", strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return np_error_set(err, NP_E_INVALID, path, 0, 0, "not a regular file (%s): not read",
                            fileio_kind(sb.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *out = fd;
    return NP_OK;
}

enum np_status np_file_read_all(const char *path, size_t max, unsigned char **out, size_t *len,
                                struct np_error *err)
{
    *out = NULL;
    *len = 0;
    int fd;
    enum np_status st = np_file_open_regular(AT_FDCWD, path, &fd, err);
    if (st != NP_OK)
        return st;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size < 0) {
        close(fd);
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot read: %s", strerror(errno));
    }
    if ((unsigned long long)sb.st_size > max) {
        close(fd);
        return np_error_set(err, NP_E_INVALID, path, 0, 0, "too large (%lld bytes; at most %zu read)",
                            (long long)sb.st_size, max);
    }
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    unsigned char *b = malloc(cap);
    if (!b) {
        close(fd);
        return np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
    }
    while (n < cap - 1) { /* the size fstat gave: a file that grows meanwhile is read to it */
        ssize_t r = read(fd, b + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            close(fd);
            return np_error_set(err, NP_E_IO, path, 0, 0, "cannot read: %s", strerror(e));
        }
        if (r == 0) /* shorter than it was: what is there */
            break;
        n += (size_t)r;
    }
    close(fd);
    b[n] = '\0';
    *out = b;
    *len = n;
    return NP_OK;
}

json_t *np_file_load_json(const char *path, size_t flags, json_error_t *je, int *io, struct np_error *err)
{
    *io = 0;
    int fd;
    if (np_file_open_regular(AT_FDCWD, path, &fd, err) != NP_OK) {
        *io = 1;
        return NULL;
    }
    json_t *j = json_loadfd(fd, flags, je);
    close(fd);
    return j;
}

enum np_status np_file_copy_atomic(const char *src, size_t max, const char *dir, const char *name, mode_t mode,
                                   struct np_error *err)
{
    unsigned char *text = NULL;
    size_t len = 0;
    enum np_status st = np_file_read_all(src, max, &text, &len, err);
    if (st != NP_OK)
        return st;
    if (memchr(text, '\0', len))
        st = np_error_set(err, NP_E_INVALID, src, 0, 0, "holds a NUL byte: not a text file");
    else if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        st = np_error_set(err, NP_E_IO, dir, 0, 0, "%s", strerror(errno));
    else
        st = np_file_write_atomic(dir, name, (const char *)text, mode, err);
    free(text);
    return st;
}

ssize_t np_file_next_line(FILE *f, char **line, size_t *cap, int *lineno)
{
    ssize_t len;
    while ((len = getline(line, cap, f)) >= 0) {
        (*lineno)++;
        while (len > 0 && ((*line)[len - 1] == '\n' || (*line)[len - 1] == '\r'))
            (*line)[--len] = '\0';
        if (len > 0 && (*line)[0] != '#')
            return len;
    }
    return -1;
}
