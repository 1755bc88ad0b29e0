/* walk.h - find log files under paths, following directory symlinks safely.
 *
 * Directories are read with openat/fdopendir; a directory already on the
 * current descent path (same dev/ino) is a symlink loop: reported, skipped.
 * Unreadable entries are reported and the walk goes on.  Files named on the
 * command line are taken whatever their name.  Each folder's matching files
 * are handed to a callback as one group as soon as the folder has been read,
 * so consumers can work while the walk goes on.
 */
#ifndef NEMOPERF_WALK_H
#define NEMOPERF_WALK_H

#include <stddef.h>

#include "nemoperf/error.h"

#define NP_MANIFEST_NAME "nemoperf.json"

/* One folder's matching files. */
struct np_walk_group {
    size_t seq;         /* 0, 1, 2... in walk order (folders sorted by name, depth first) */
    char *dir;          /* "root/sub" as reached */
    char **files;       /* full paths, sorted */
    size_t nfiles;
    char *manifest;     /* nearest NP_MANIFEST_NAME in the folder or up to 3 parents, or NULL */
};

/* Receives ownership of g (free with np_walk_group_free).  A non-OK return stops the walk. */
typedef enum np_status (*np_walk_fn)(void *ctx, struct np_walk_group *g);

struct np_walk_errors {
    char **msgs;        /* "path: message", owned */
    size_t n;
};

/* Walk each path; include is a fnmatch(3) glob on the base name ("*.out").
 * Only NP_E_NOMEM (or the callback's failure) is fatal; read problems land in errs. */
enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, np_walk_fn fn, void *ctx,
                             struct np_walk_errors *errs);

void np_walk_group_free(struct np_walk_group *g);
void np_walk_errors_free(struct np_walk_errors *e);

#endif
