/* walk.h - find log files under paths, in parallel, following directory symlinks safely.
 *
 * Worker threads share a stack of folders to read (openat/fdopendir, d_type:
 * a file costs no stat).  A folder already on its own ancestor chain (same
 * dev/ino) is a symlink loop: reported, skipped.  Unreadable entries are
 * reported and the walk goes on.  Files named on the command line are taken
 * whatever their name.  Each folder's matching files are handed, as one group,
 * to a callback that runs on the worker thread that read the folder (a folder
 * holding a launch manifest is a group even without matching files); groups
 * carry a sort key (np_walk_group_cmp) that restores the order of a sorted
 * depth-first walk whatever the thread count.
 */
#ifndef NEMOPERF_WALK_H
#define NEMOPERF_WALK_H

#include <stdatomic.h>
#include <stddef.h>

#include "nemoperf/error.h"

#define NP_MANIFEST_NAME "nemoperf.json"

/* One folder's matching files. */
struct np_walk_group {
    size_t root;        /* index of the command-line path it came from */
    char *dir;          /* "root/sub" as reached */
    char **files;       /* full paths, sorted */
    size_t nfiles;
    char *manifest;     /* nearest NP_MANIFEST_NAME in the folder or up to 3 parents, or NULL */
    int dirfd;          /* the folder, open during the callback only (files open relative to it), or -1 */
};

/* Receives ownership of g (free with np_walk_group_free).  Called from worker
 * threads, concurrently.  A non-OK return stops the walk. */
typedef enum np_status (*np_walk_fn)(void *ctx, struct np_walk_group *g);

struct np_walk_errors {
    char **msgs;        /* "path: message", owned, sorted */
    size_t n;
};

/* Folders read and folders found so far, readable while the walk runs (progress). */
struct np_walk_counts {
    atomic_size_t read, found;
};

/* Walk each path with nthreads workers (<= 0: one); include is a fnmatch(3)
 * glob on base names ("*.out").  counts may be NULL.  Only NP_E_NOMEM (or the
 * callback's failure) is fatal; read problems land in errs. */
enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, int nthreads, np_walk_fn fn,
                             void *ctx, struct np_walk_errors *errs, struct np_walk_counts *counts);

/* Order of a sorted depth-first walk: by root, then path with '/' before any other byte and
 * digit runs compared as numbers (pretrain_x_8 before pretrain_x_16). */
int np_walk_group_cmp(const struct np_walk_group *a, const struct np_walk_group *b);

void np_walk_group_free(struct np_walk_group *g);
void np_walk_errors_free(struct np_walk_errors *e);

#endif
