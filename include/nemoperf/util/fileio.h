/* fileio.h - files written whole or not at all, and read only when they are regular files (a FIFO
 * named like a manifest must not hang a tool, issue 23).  Owned by src/util/fileio.c. */
#ifndef NEMOPERF_UTIL_FILEIO_H
#define NEMOPERF_UTIL_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "nemoperf/util/error.h"

/* Write text to dir/name atomically with the given mode (a temporary file renamed into place, both
 * fsync'd).  NP_E_IO naming the path on failure; nothing is left behind. */
enum np_status np_file_write_atomic(const char *dir, const char *name, const char *text, mode_t mode,
                                    struct np_error *err);

/* Open path (relative to dirfd, AT_FDCWD for the cwd) read-only when it is a regular
 * file, into *fd (blocking again).  NP_OK, or *fd = -1 and NP_E_IO (cannot open: errno's
 * text) or NP_E_INVALID ("not a regular file (a FIFO)") with err filled. */
enum np_status np_file_open_regular(int dirfd, const char *path, int *fd, struct np_error *err);

/* The whole regular file at path into *out (a new buffer, NUL-terminated, caller frees),
 * its length in *len; at most max bytes (a longer file is NP_E_INVALID).  A file that
 * shrinks while it is read yields what was there (never a signal, unlike a mapping). */
enum np_status np_file_read_all(const char *path, size_t max, unsigned char **out, size_t *len,
                                struct np_error *err);

/* json_loadfd of the regular file at path with flags (JSON_REJECT_DUPLICATES ...).
 * Returns a new reference, or NULL: then *io is 1 when the file could not be opened or
 * is not a regular file (err says why), 0 when it is not JSON (je says where). */
json_t *np_file_load_json(const char *path, size_t flags, json_error_t *je, int *io, struct np_error *err);

#endif
