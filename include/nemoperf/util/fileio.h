/* fileio.h - files written whole or not at all.  Owned by src/util/fileio.c. */
#ifndef NEMOPERF_UTIL_FILEIO_H
#define NEMOPERF_UTIL_FILEIO_H

#include <sys/types.h>

#include "nemoperf/util/error.h"

/* Write text to dir/name atomically with the given mode (a temporary file renamed into place, both
 * fsync'd).  NP_E_IO naming the path on failure; nothing is left behind. */
enum np_status np_file_write_atomic(const char *dir, const char *name, const char *text, mode_t mode,
                                    struct np_error *err);

#endif
