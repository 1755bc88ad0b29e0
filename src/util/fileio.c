/* fileio.c - files written whole or not at all.
 *
 * A temporary file beside the target, fsync'd, renamed into place, the folder fsync'd: a reader sees
 * the old file or the new one, never a part (moved from src/launch/manifest.c: the job's driver, the
 * fine-tuning preparation and the manifest all write this way).
 */
#include "nemoperf/util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
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
