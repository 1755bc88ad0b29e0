/* fileio.h - files written whole or not at all, and read only when they are regular files (a FIFO
 * named like a manifest must not hang a tool, issue 23).  Owned by src/util/fileio.c. */
#ifndef NEMOPERF_UTIL_FILEIO_H
#define NEMOPERF_UTIL_FILEIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "nemoperf/util/error.h"

/* Write text to dir/name atomically with the given mode (a temporary file renamed into place, both
 * fsync'd).  NP_E_IO naming the path on failure; nothing is left behind. */
enum np_status np_file_write_atomic(const char *dir, const char *name, const char *text, mode_t mode,
                                    struct np_error *err);

/* Open path (relative to dirfd, AT_FDCWD for the cwd) read-only when it is a regular
 * file, into *fd (blocking again).  NP_OK, or *fd = -1 and NP_E_IO (cannot open: errno's
 * text; errno kept) or NP_E_INVALID ("not a regular file (a FIFO)") with err filled.  The one way
 * nemoperf opens a file of a run folder (runfiles.h names them). */
enum np_status np_file_open_regular(int dirfd, const char *path, int *fd, struct np_error *err);

/* The whole regular file at path into *out (a new buffer, NUL-terminated, caller frees),
 * its length in *len; at most max bytes (a longer file is NP_E_INVALID).  A file that
 * shrinks while it is read yields what was there (never a signal, unlike a mapping). */
enum np_status np_file_read_all(const char *path, size_t max, unsigned char **out, size_t *len,
                                struct np_error *err);

/* Copy the regular text file src (at most max bytes) to dir/name atomically with mode, making dir (0755)
 * when it does not exist: what a job reads from its experiment folder (the NeMo driver, a DFM config).
 * NP_OK, or the error naming src or dir; nothing half-written. */
enum np_status np_file_copy_atomic(const char *src, size_t max, const char *dir, const char *name, mode_t mode,
                                   struct np_error *err);

/* The next line of f that is neither empty nor a '#' comment, its line ending (\n or \r\n) removed, into
 * *line (getline's buffer and *cap: the caller frees *line); *lineno counts every line read.  Returns its
 * length, or -1 at the end of f or on a read error (ferror(f) tells them apart).  The data tables'
 * reader (reference TSVs, Megatron-Bridge tables). */
ssize_t np_file_next_line(FILE *f, char **line, size_t *cap, int *lineno);

/* json_loadfd of the regular file at path with flags (JSON_REJECT_DUPLICATES ...).
 * Returns a new reference, or NULL: then *io is 1 when the file could not be opened or
 * is not a regular file (err says why), 0 when it is not JSON (je says where). */
json_t *np_file_load_json(const char *path, size_t flags, json_error_t *je, int *io, struct np_error *err);

#endif
