/* file.h - open only regular files, read them whole, load JSON from them.
 *
 * A FIFO (or a symlink to one) named nemoperf.json or packed.npy blocks open(2) and
 * read(2) forever; a device reads forever.  These helpers open with O_NONBLOCK, check
 * the descriptor with fstat (a symlink is followed to what it names) and refuse what is
 * not a regular file, naming the path (issue 23).
 */
#ifndef NEMOPERF_FILE_H
#define NEMOPERF_FILE_H

#include <stddef.h>

#include <jansson.h>

#include "nemoperf/util/error.h"

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
