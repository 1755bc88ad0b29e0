/* walk.h - find log files under paths, in parallel, in depth-first order, in bounded memory.
 *
 * Worker threads take folders in the order of a sorted depth-first walk (the
 * first folder not yet taken), read them with openat()+getdents64() on the fd
 * their parent holds (d_type: a file costs no stat; real subfolders take their
 * identity from the directory entry) and analyse each folder's matching files
 * themselves (a folder holding a launch manifest is a group even without
 * matching files).  Results are handed back in depth-first order as soon as every
 * folder before them is done, and freed; workers wait when too many results
 * are waiting for an earlier folder, so memory does not grow with the tree.
 * A folder already on its own ancestor chain (same dev/ino) is a symlink
 * loop: reported, skipped.  Unreadable entries are reported in order and the
 * walk goes on.  Files named on the command line are taken whatever their name.
 */
#ifndef NEMOPERF_WALK_H
#define NEMOPERF_WALK_H

#include <stdatomic.h>
#include <stddef.h>

#include "nemoperf/util/error.h"

#define NP_MANIFEST_NAME "nemoperf.json"

/* Results analysed but not yet handed out (waiting for an earlier folder) are at most this many:
 * a worker that would exceed it waits, unless it takes the folder everyone waits for. */
#define NP_WALK_PENDING_MAX 1024

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

/* The ordered walk's callbacks.  group runs on worker threads, concurrently, and
 * receives ownership of g (free with np_walk_group_free; g->dirfd is open during
 * the call only); what it stores in *result is handed to emit later.  emit and
 * error are called one at a time (on any worker thread) in the order of a
 * sorted depth-first walk: a folder's read errors, then its group's result, then
 * its subfolders.  error's msg ("path: message") is borrowed for the call.  A
 * non-OK return from any of them stops the walk. */
/* How many of the walk's threads work from the start: the others start only once cold() says the
 * data is not all in memory (a read waited for the disk, or the filesystem cannot tell).  With a warm
 * page cache, more threads than cores only take turns on them; with a cold one, a thread waiting for
 * the disk leaves its core to another. */
struct np_walk_pace {
    int active;          /* threads from the start; <= 0: all */
    int (*cold)(void);   /* NULL: never */
};

struct np_walk_sink {
    void *ctx;
    enum np_status (*group)(void *ctx, struct np_walk_group *g, void **result);
    enum np_status (*emit)(void *ctx, void *result);
    enum np_status (*error)(void *ctx, const char *msg);
    void (*discard)(void *ctx, void *result); /* a result never emitted (the walk stopped); may be NULL */
    const struct np_walk_pace *pace;          /* NULL: every thread works from the start */
};

/* Walk each path with nthreads workers (<= 0: one); include is a fnmatch(3)
 * glob on base names ("*.out").  counts may be NULL.  Only NP_E_NOMEM (or a
 * callback's failure) is fatal; read problems go to sink->error. */
enum np_status np_walk_ordered(char *const *paths, size_t npaths, const char *include, int nthreads,
                               const struct np_walk_sink *sink, struct np_walk_counts *counts);

/* The same with an unordered per-group callback: errors are collected in errs, sorted. */
enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, int nthreads,
                             const struct np_walk_pace *pace, np_walk_fn fn, void *ctx, struct np_walk_errors *errs,
                             struct np_walk_counts *counts);

/* Order of a sorted depth-first walk: by root, then path with '/' before any other byte and
 * digit runs compared as numbers (pretrain_x_8 before pretrain_x_16). */
int np_walk_group_cmp(const struct np_walk_group *a, const struct np_walk_group *b);

void np_walk_group_free(struct np_walk_group *g);
void np_walk_errors_free(struct np_walk_errors *e);

#endif
