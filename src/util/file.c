/* file.c - open only regular files; read them whole; load JSON from them.
 *
 * Manifests, packed .npy files and logs are named by folders anyone may write: a FIFO in
 * their place must not hang a tool, a file truncated while it is read must not kill it
 * (SIGBUS through a mapping).  Open with O_NONBLOCK, fstat, then blocking reads (issue 23).
 */
#include "nemoperf/util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_kind(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

enum np_status np_file_open_regular(int dirfd, const char *path, int *out, struct np_error *err)
{
    *out = -1;
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot read: %s", strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return np_error_set(err, NP_E_INVALID, path, 0, 0, "not a regular file (%s): not read",
                            file_kind(sb.st_mode));
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
