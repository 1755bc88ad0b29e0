/* walk.c - directory traversal for nemoperf-parse.
 *
 * Depth-first with openat() so long paths cost nothing extra; d_type avoids a
 * stat per file where the file system provides it.  Symlinked directories are
 * followed, with loop detection on the (dev, ino) chain of the current path.
 * Files are grouped by folder: a folder's files are contiguous in the output.
 */
#include "nemoperf/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct walk_frame {
    dev_t dev;
    ino_t ino;
};

struct walk_state {
    struct np_walk *w;
    const char *include;
    struct walk_frame *chain;
    size_t depth, cap;
    size_t cap_files, cap_dirs;
};

static enum np_status walk_error(struct np_walk *w, const char *path, const char *msg)
{
    char **e = realloc(w->errors, (w->nerrors + 1) * sizeof *e);
    if (!e)
        return NP_E_NOMEM;
    w->errors = e;
    size_t n = strlen(path) + strlen(msg) + 3;
    if (!(e[w->nerrors] = malloc(n)))
        return NP_E_NOMEM;
    snprintf(e[w->nerrors++], n, "%s: %s", path, msg);
    return NP_OK;
}

static enum np_status walk_add_dir(struct walk_state *s, const char *dir)
{
    struct np_walk *w = s->w;
    if (w->ndirs == s->cap_dirs) {
        size_t nc = s->cap_dirs ? s->cap_dirs * 2 : 64;
        char **d = realloc(w->dirs, nc * sizeof *d);
        if (!d)
            return NP_E_NOMEM;
        w->dirs = d;
        s->cap_dirs = nc;
    }
    if (!(w->dirs[w->ndirs] = strdup(dir)))
        return NP_E_NOMEM;
    w->ndirs++;
    return NP_OK;
}

static enum np_status walk_add_file(struct walk_state *s, char *path, size_t dir)
{
    struct np_walk *w = s->w;
    if (w->nfiles == s->cap_files) {
        size_t nc = s->cap_files ? s->cap_files * 2 : 256;
        struct np_walk_file *f = realloc(w->files, nc * sizeof *f);
        if (!f) {
            free(path);
            return NP_E_NOMEM;
        }
        w->files = f;
        s->cap_files = nc;
    }
    w->files[w->nfiles].path = path;
    w->files[w->nfiles].dir = dir;
    w->nfiles++;
    return NP_OK;
}

static char *walk_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (!p)
        return NULL;
    memcpy(p, a, la);
    size_t n = la;
    if (la && a[la - 1] != '/')
        p[n++] = '/';
    memcpy(p + n, b, lb + 1);
    return p;
}

static int walk_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walk directory fd (owned, closed here) reached as `path`. */
static enum np_status walk_dir(struct walk_state *s, int fd, const char *path, const struct stat *st)
{
    for (size_t i = 0; i < s->depth; i++)
        if (s->chain[i].dev == st->st_dev && s->chain[i].ino == st->st_ino) {
            close(fd);
            return walk_error(s->w, path, "symbolic link loop (folder already being walked); skipped");
        }
    if (s->depth == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 32;
        struct walk_frame *c = realloc(s->chain, nc * sizeof *c);
        if (!c) {
            close(fd);
            return NP_E_NOMEM;
        }
        s->chain = c;
        s->cap = nc;
    }
    s->chain[s->depth].dev = st->st_dev;
    s->chain[s->depth].ino = st->st_ino;
    s->depth++;

    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        s->depth--;
        return walk_error(s->w, path, strerror(errno));
    }
    /* Read all names first (sorted output, and no fd held open per level while recursing deep). */
    char **files = NULL, **subdirs = NULL;
    size_t nf = 0, nd = 0, cf = 0, cd = 0;
    enum np_status rc = NP_OK;
    struct dirent *e;
    errno = 0;
    while (rc == NP_OK && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
            continue;
        int type = e->d_type;
        if (type == DT_UNKNOWN || type == DT_LNK) {
            struct stat est;
            if (fstatat(dirfd(d), nm, &est, 0) != 0) {
                char *p = walk_join(path, nm);
                rc = p ? walk_error(s->w, p, type == DT_LNK ? "dangling symbolic link" : strerror(errno))
                       : NP_E_NOMEM;
                free(p);
                continue;
            }
            type = S_ISDIR(est.st_mode) ? DT_DIR : S_ISREG(est.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        char ***arr = NULL;
        size_t *n = NULL, *c = NULL;
        if (type == DT_DIR) {
            arr = &subdirs, n = &nd, c = &cd;
        } else if (type == DT_REG && fnmatch(s->include, nm, 0) == 0) {
            arr = &files, n = &nf, c = &cf;
        } else {
            continue;
        }
        if (*n == *c) {
            size_t nc = *c ? *c * 2 : 16;
            char **na = realloc(*arr, nc * sizeof *na);
            if (!na) {
                rc = NP_E_NOMEM;
                break;
            }
            *arr = na;
            *c = nc;
        }
        if (!((*arr)[*n] = strdup(nm))) {
            rc = NP_E_NOMEM;
            break;
        }
        (*n)++;
    }
    if (rc == NP_OK && errno != 0 && !e)
        rc = walk_error(s->w, path, strerror(errno));
    int dfd = dirfd(d);
    if (rc == NP_OK && nf) {
        qsort(files, nf, sizeof *files, walk_cmp_names);
        rc = walk_add_dir(s, path);
        size_t di = s->w->ndirs - 1;
        for (size_t i = 0; rc == NP_OK && i < nf; i++) {
            char *p = walk_join(path, files[i]);
            rc = p ? walk_add_file(s, p, di) : NP_E_NOMEM;
        }
    }
    if (nd)
        qsort(subdirs, nd, sizeof *subdirs, walk_cmp_names);
    for (size_t i = 0; rc == NP_OK && i < nd; i++) {
        char *p = walk_join(path, subdirs[i]);
        if (!p) {
            rc = NP_E_NOMEM;
            break;
        }
        int sfd = openat(dfd, subdirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat sst;
        if (sfd < 0) {
            rc = walk_error(s->w, p, strerror(errno));
        } else if (fstat(sfd, &sst) != 0) {
            rc = walk_error(s->w, p, strerror(errno));
            close(sfd);
        } else {
            rc = walk_dir(s, sfd, p, &sst);
        }
        free(p);
    }
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    for (size_t i = 0; i < nd; i++)
        free(subdirs[i]);
    free(files);
    free(subdirs);
    closedir(d);
    s->depth--;
    return rc;
}

static char *walk_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, struct np_walk *w)
{
    struct walk_state s = {w, include ? include : "*.out", NULL, 0, 0, w->nfiles, w->ndirs};
    enum np_status rc = NP_OK;
    for (size_t i = 0; rc == NP_OK && i < npaths; i++) {
        const char *p = paths[i];
        struct stat st;
        if (stat(p, &st) != 0) {
            rc = walk_error(w, p, strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd < 0) {
                rc = walk_error(w, p, strerror(errno));
                continue;
            }
            rc = walk_dir(&s, fd, p, &st);
        } else if (S_ISREG(st.st_mode)) {
            char *dir = walk_dirname(p), *copy = strdup(p);
            if (!dir || !copy) {
                free(dir);
                free(copy);
                rc = NP_E_NOMEM;
                break;
            }
            /* a file next to the previous one given on the command line joins its group */
            if (!(w->ndirs && w->nfiles && w->files[w->nfiles - 1].dir == w->ndirs - 1 &&
                  strcmp(w->dirs[w->ndirs - 1], dir) == 0))
                rc = walk_add_dir(&s, dir);
            free(dir);
            if (rc == NP_OK)
                rc = walk_add_file(&s, copy, w->ndirs - 1);
            else
                free(copy);
        } else {
            rc = walk_error(w, p, "not a regular file or folder");
        }
    }
    free(s.chain);
    return rc;
}

void np_walk_free(struct np_walk *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nfiles; i++)
        free(w->files[i].path);
    for (size_t i = 0; i < w->ndirs; i++)
        free(w->dirs[i]);
    for (size_t i = 0; i < w->nerrors; i++)
        free(w->errors[i]);
    free(w->files);
    free(w->dirs);
    free(w->errors);
    memset(w, 0, sizeof *w);
}
