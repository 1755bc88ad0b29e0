/* walk.h - find log files under paths, following directory symlinks safely.
 *
 * Directories are read with openat/fdopendir; a directory already on the
 * current descent path (same dev/ino) is a symlink loop: reported, skipped.
 * Unreadable entries are reported and the walk goes on.  Files named on the
 * command line are taken whatever their name.
 */
#ifndef NEMOPERF_WALK_H
#define NEMOPERF_WALK_H

#include <stddef.h>

#include "nemoperf/error.h"

struct np_walk_file {
    char *path;   /* owned; as reached ("root/sub/file.out") */
    size_t dir;   /* index into np_walk.dirs of the folder holding it */
};

struct np_walk {
    struct np_walk_file *files;
    size_t nfiles;
    char **dirs;      /* folder of each file group ("root/sub"), owned */
    size_t ndirs;
    char **errors;    /* "path: message", owned */
    size_t nerrors;
};

/* Walk each path; include is a fnmatch(3) glob on the base name ("*.out").
 * Appends to w.  Only NP_E_NOMEM is fatal; everything else lands in errors. */
enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, struct np_walk *w);

void np_walk_free(struct np_walk *w);

#endif
