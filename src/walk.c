/* walk.c - directory traversal for nemoperf-parse.
 *
 * Depth-first with openat() and d_type, so a file costs no stat.  Symlinked
 * directories are followed, with loop detection on the (dev, ino) chain of
 * the current path.  The chain also remembers which folders hold a launch
 * manifest, so finding a run's manifest costs no system call either; the few
 * folders above each root are looked at once, with stat.
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

#define WALK_MANIFEST_UP 3 /* parents searched for a manifest */

struct walk_frame {
    dev_t dev;
    ino_t ino;
    char *manifest; /* this folder's manifest path, or NULL (owned) */
};

struct walk_state {
    const char *include;
    np_walk_fn fn;
    void *ctx;
    struct np_walk_errors *errs;
    struct walk_frame *chain;
    size_t depth, cap;
    char *above[WALK_MANIFEST_UP]; /* manifests of the root's parents: [0] = parent */
    size_t seq;
};

static enum np_status walk_error(struct walk_state *s, const char *path, const char *msg)
{
    struct np_walk_errors *e = s->errs;
    char **m = realloc(e->msgs, (e->n + 1) * sizeof *m);
    if (!m)
        return NP_E_NOMEM;
    e->msgs = m;
    size_t n = strlen(path) + strlen(msg) + 3;
    if (!(m[e->n] = malloc(n)))
        return NP_E_NOMEM;
    snprintf(m[e->n++], n, "%s: %s", path, msg);
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

struct walk_sub {
    char *name;
    ino_t ino;
};

static int walk_cmp_subs(const void *a, const void *b)
{
    return strcmp(((const struct walk_sub *)a)->name, ((const struct walk_sub *)b)->name);
}

/* Nearest manifest: the current folder, then up to WALK_MANIFEST_UP parents. */
static const char *walk_nearest_manifest(const struct walk_state *s)
{
    for (size_t up = 0; up <= WALK_MANIFEST_UP; up++) {
        if (up < s->depth) {
            if (s->chain[s->depth - 1 - up].manifest)
                return s->chain[s->depth - 1 - up].manifest;
        } else if (s->above[up - s->depth]) {
            return s->above[up - s->depth];
        }
    }
    return NULL;
}

static enum np_status walk_emit(struct walk_state *s, const char *dir, char **files, size_t nfiles,
                                const char *manifest)
{
    struct np_walk_group *g = calloc(1, sizeof *g);
    if (!g)
        return NP_E_NOMEM;
    g->seq = s->seq++;
    g->dir = strdup(dir);
    g->files = calloc(nfiles ? nfiles : 1, sizeof *g->files);
    g->manifest = manifest ? strdup(manifest) : NULL;
    if (!g->dir || !g->files || (manifest && !g->manifest)) {
        np_walk_group_free(g);
        return NP_E_NOMEM;
    }
    for (size_t i = 0; i < nfiles; i++) {
        if (!(g->files[i] = walk_join(dir, files[i]))) {
            np_walk_group_free(g);
            return NP_E_NOMEM;
        }
        g->nfiles++;
    }
    return s->fn(s->ctx, g);
}

/* Append a copy of name to a growable array. */
static int walk_push(char ***arr, size_t *n, size_t *cap, const char *name)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        char **na = realloc(*arr, nc * sizeof *na);
        if (!na)
            return 0;
        *arr = na;
        *cap = nc;
    }
    if (!((*arr)[*n] = strdup(name)))
        return 0;
    (*n)++;
    return 1;
}

/* Walk directory fd (owned, closed here) reached as `path`. */
static enum np_status walk_dir(struct walk_state *s, int fd, const char *path, const struct stat *st)
{
    for (size_t i = 0; i < s->depth; i++)
        if (s->chain[i].dev == st->st_dev && s->chain[i].ino == st->st_ino) {
            close(fd);
            return walk_error(s, path, "symbolic link loop (folder already being walked); skipped");
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
    struct walk_frame *fr = &s->chain[s->depth++];
    fr->dev = st->st_dev;
    fr->ino = st->st_ino;
    fr->manifest = NULL;

    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        s->depth--;
        return walk_error(s, path, strerror(errno));
    }
    char **files = NULL, **subdirs = NULL;
    ino_t *subino = NULL; /* d_ino of real subfolders, 0 for symlinked ones (they need a stat) */
    size_t nf = 0, nd = 0, cf = 0, cd = 0;
    enum np_status rc = NP_OK;
    struct dirent *e;
    errno = 0;
    while (rc == NP_OK && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
            continue;
        int type = e->d_type;
        ino_t dino = type == DT_DIR ? e->d_ino : 0;
        if (type == DT_UNKNOWN || type == DT_LNK) {
            struct stat est;
            if (fstatat(dirfd(d), nm, &est, 0) != 0) {
                char *p = walk_join(path, nm);
                rc = p ? walk_error(s, p, type == DT_LNK ? "dangling symbolic link" : strerror(errno)) : NP_E_NOMEM;
                free(p);
                errno = 0;
                continue;
            }
            type = S_ISDIR(est.st_mode) ? DT_DIR : S_ISREG(est.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        if (type == DT_DIR) {
            size_t oldcap = cd;
            if (!walk_push(&subdirs, &nd, &cd, nm)) {
                rc = NP_E_NOMEM;
            } else if (cd != oldcap || !subino) {
                ino_t *ni = realloc(subino, cd * sizeof *ni);
                if (!ni)
                    rc = NP_E_NOMEM;
                else
                    subino = ni;
            }
            if (rc == NP_OK)
                subino[nd - 1] = dino;
        } else if (type == DT_REG) {
            if (strcmp(nm, NP_MANIFEST_NAME) == 0 && !fr->manifest && !(fr->manifest = walk_join(path, nm)))
                rc = NP_E_NOMEM;
            if (rc == NP_OK && fnmatch(s->include, nm, 0) == 0 && !walk_push(&files, &nf, &cf, nm))
                rc = NP_E_NOMEM;
        }
        errno = 0;
    }
    if (rc == NP_OK && errno != 0)
        rc = walk_error(s, path, strerror(errno));
    int dfd = dirfd(d);
    if (rc == NP_OK && nf) {
        qsort(files, nf, sizeof *files, walk_cmp_names);
        rc = walk_emit(s, path, files, nf, walk_nearest_manifest(s));
    }
    /* sort subfolders by name, keeping each one's inode beside it */
    struct walk_sub *subs = nd ? malloc(nd * sizeof *subs) : NULL;
    if (nd && !subs)
        rc = NP_E_NOMEM;
    for (size_t i = 0; subs && i < nd; i++) {
        subs[i].name = subdirs[i];
        subs[i].ino = subino[i];
    }
    if (subs) {
        qsort(subs, nd, sizeof *subs, walk_cmp_subs);
        for (size_t i = 0; i < nd; i++) {
            subdirs[i] = subs[i].name;
            subino[i] = subs[i].ino;
        }
        free(subs);
    }
    for (size_t i = 0; rc == NP_OK && i < nd; i++) {
        char *p = walk_join(path, subdirs[i]);
        if (!p) {
            rc = NP_E_NOMEM;
            break;
        }
        int sfd = openat(dfd, subdirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat sst;
        if (sfd >= 0 && subino[i]) {
            /* a real subfolder cannot close a loop; its identity for the chain comes from readdir,
             * which saves a stat per folder */
            sst.st_dev = st->st_dev;
            sst.st_ino = subino[i];
            rc = walk_dir(s, sfd, p, &sst);
        } else if (sfd < 0) {
            rc = walk_error(s, p, strerror(errno));
        } else if (fstat(sfd, &sst) != 0) {
            rc = walk_error(s, p, strerror(errno));
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
    free(subino);
    closedir(d);
    s->depth--;
    free(s->chain[s->depth].manifest);
    return rc;
}

/* dirname of path, as a new string */
static char *walk_dirname(const char *path)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    while (len > 0 && path[len - 1] != '/')
        len--;
    while (len > 1 && path[len - 1] == '/')
        len--;
    if (len == 0)
        return strdup(".");
    return strndup(path, len);
}

/* Manifests in the folders above a root (which the walk itself does not read). */
static enum np_status walk_scan_above(struct walk_state *s, const char *root)
{
    for (size_t i = 0; i < WALK_MANIFEST_UP; i++) {
        free(s->above[i]);
        s->above[i] = NULL;
    }
    char real[4096];
    if (!realpath(root, real))
        return NP_OK;
    for (size_t up = 0; up < WALK_MANIFEST_UP && strcmp(real, "/") != 0; up++) {
        char *slash = strrchr(real, '/');
        if (!slash)
            break;
        if (slash == real)
            slash[1] = '\0';
        else
            *slash = '\0';
        char *m = walk_join(real, NP_MANIFEST_NAME);
        if (!m)
            return NP_E_NOMEM;
        struct stat st;
        if (stat(m, &st) == 0 && S_ISREG(st.st_mode))
            s->above[up] = m;
        else
            free(m);
    }
    return NP_OK;
}

enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, np_walk_fn fn, void *ctx,
                             struct np_walk_errors *errs)
{
    struct walk_state s;
    memset(&s, 0, sizeof s);
    s.include = include ? include : "*.out";
    s.fn = fn;
    s.ctx = ctx;
    s.errs = errs;
    enum np_status rc = NP_OK;
    for (size_t i = 0; rc == NP_OK && i < npaths; i++) {
        const char *p = paths[i];
        struct stat st;
        if (stat(p, &st) != 0) {
            rc = walk_error(&s, p, strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd < 0) {
                rc = walk_error(&s, p, strerror(errno));
                continue;
            }
            rc = walk_scan_above(&s, p);
            if (rc == NP_OK)
                rc = walk_dir(&s, fd, p, &st);
            else
                close(fd);
        } else if (S_ISREG(st.st_mode)) {
            /* a file given by name: its own group; manifest in its folder or up to 3 parents */
            char *dir = walk_dirname(p);
            if (!dir)
                return NP_E_NOMEM;
            rc = walk_scan_above(&s, p); /* above[0] is the file's own folder */
            const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
            char *one[] = {(char *)base};
            if (rc == NP_OK) {
                const char *m = NULL;
                for (size_t up = 0; up < WALK_MANIFEST_UP && !m; up++)
                    m = s.above[up];
                rc = walk_emit(&s, dir, one, 1, m);
            }
            free(dir);
        } else {
            rc = walk_error(&s, p, "not a regular file or folder");
        }
    }
    for (size_t i = 0; i < WALK_MANIFEST_UP; i++)
        free(s.above[i]);
    free(s.chain);
    return rc;
}

void np_walk_group_free(struct np_walk_group *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nfiles; i++)
        free(g->files[i]);
    free(g->files);
    free(g->dir);
    free(g->manifest);
    free(g);
}

void np_walk_errors_free(struct np_walk_errors *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        free(e->msgs[i]);
    free(e->msgs);
    e->msgs = NULL;
    e->n = 0;
}
