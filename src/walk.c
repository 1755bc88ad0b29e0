/* walk.c - parallel directory traversal for nemoperf-parse.
 *
 * Worker threads pop folders from a shared stack, read them with openat() and
 * d_type (no stat per file; real subfolders take their identity from
 * readdir's inode), push the subfolders and hand the folder's matching files
 * to the callback themselves.  Symlinked folders are followed with loop
 * detection on each folder's own ancestor chain, which travels with it, as do
 * the manifests of its nearest ancestors; the folders above a root are
 * looked at once, with stat.
 */
#include "nemoperf/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WALK_UP 4 /* a folder and its 3 parents are searched for a manifest */

struct walk_id {
    dev_t dev;
    ino_t ino;
};

/* A folder to read.  chain[0..depth) are its ancestors and itself. */
struct walk_item {
    size_t root;
    char *path;
    struct walk_id *chain;
    size_t depth;
    char *manifest[WALK_UP - 1]; /* manifests of the parent [0], grandparent [1], ... (owned) */
    int fd;                      /* open folder, or -1: open path */
};

struct walk_shared {
    const char *include;
    np_walk_fn fn;
    void *ctx;
    struct np_walk_errors *errs;
    struct np_walk_counts *counts;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct walk_item **stack;
    size_t n, cap;
    size_t busy;          /* items being read by workers */
    enum np_status status; /* first fatal failure */
};

static void walk_item_free(struct walk_item *it)
{
    if (!it)
        return;
    if (it->fd >= 0)
        close(it->fd);
    free(it->path);
    free(it->chain);
    for (size_t i = 0; i < WALK_UP - 1; i++)
        free(it->manifest[i]);
    free(it);
}

static void walk_fail(struct walk_shared *w, enum np_status st)
{
    pthread_mutex_lock(&w->mu);
    if (w->status == NP_OK)
        w->status = st;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void walk_error(struct walk_shared *w, const char *path, const char *msg)
{
    size_t n = strlen(path) + strlen(msg) + 3;
    char *m = malloc(n);
    if (!m) {
        walk_fail(w, NP_E_NOMEM);
        return;
    }
    snprintf(m, n, "%s: %s", path, msg);
    pthread_mutex_lock(&w->mu);
    char **a = realloc(w->errs->msgs, (w->errs->n + 1) * sizeof *a);
    if (a) {
        w->errs->msgs = a;
        a[w->errs->n++] = m;
        m = NULL;
    } else if (w->status == NP_OK) {
        w->status = NP_E_NOMEM;
    }
    pthread_mutex_unlock(&w->mu);
    free(m);
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

/* Path order: '/' sorts before every other byte, so a folder's subtree comes before its later
 * siblings; digit runs compare as numbers, so a sweep reads pretrain_..._8, _16, _32 (numbers
 * equal but for leading zeros are ordered by them, last, to keep the order total). */
static int walk_cmp_paths(const char *a, const char *b)
{
    int tie = 0;
    for (;;) {
        unsigned ca = (unsigned char)*a, cb = (unsigned char)*b;
        if (ca >= '0' && ca <= '9' && cb >= '0' && cb <= '9') {
            const char *za = a, *zb = b;
            while (*za == '0')
                za++;
            while (*zb == '0')
                zb++;
            size_t la = 0, lb = 0;
            while (za[la] >= '0' && za[la] <= '9')
                la++;
            while (zb[lb] >= '0' && zb[lb] <= '9')
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = memcmp(za, zb, la);
            if (c)
                return c < 0 ? -1 : 1;
            if (!tie && za - a != zb - b)
                tie = za - a < zb - b ? -1 : 1;
            a = za + la;
            b = zb + lb;
            continue;
        }
        if (ca == cb) {
            if (!ca)
                return tie;
            a++;
            b++;
            continue;
        }
        ca = ca == '/' ? 1 : ca == 0 ? 0 : ca + 1;
        cb = cb == '/' ? 1 : cb == 0 ? 0 : cb + 1;
        return ca < cb ? -1 : 1;
    }
}

static int walk_cmp_names(const void *a, const void *b)
{
    return walk_cmp_paths(*(char *const *)a, *(char *const *)b);
}

int np_walk_group_cmp(const struct np_walk_group *a, const struct np_walk_group *b)
{
    if (a->root != b->root)
        return a->root < b->root ? -1 : 1;
    return walk_cmp_paths(a->dir, b->dir);
}

static void walk_push_item(struct walk_shared *w, struct walk_item *it)
{
    pthread_mutex_lock(&w->mu);
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 256;
        struct walk_item **s = realloc(w->stack, nc * sizeof *s);
        if (!s) {
            if (w->status == NP_OK)
                w->status = NP_E_NOMEM;
            pthread_mutex_unlock(&w->mu);
            walk_item_free(it);
            return;
        }
        w->stack = s;
        w->cap = nc;
    }
    w->stack[w->n++] = it;
    if (w->counts)
        atomic_fetch_add(&w->counts->found, 1);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Append a copy of name to a growable array. */
static int walk_push_name(char ***arr, size_t *n, size_t *cap, const char *name)
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

static enum np_status walk_emit(struct walk_shared *w, size_t root, const char *dir, int dirfd, char **names,
                                size_t n, const char *manifest)
{
    struct np_walk_group *g = calloc(1, sizeof *g);
    if (!g)
        return NP_E_NOMEM;
    g->root = root;
    g->dirfd = dirfd;
    g->dir = strdup(dir);
    g->files = calloc(n ? n : 1, sizeof *g->files);
    g->manifest = manifest ? strdup(manifest) : NULL;
    if (!g->dir || !g->files || (manifest && !g->manifest)) {
        np_walk_group_free(g);
        return NP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(g->files[i] = walk_join(dir, names[i]))) {
            np_walk_group_free(g);
            return NP_E_NOMEM;
        }
        g->nfiles++;
    }
    return w->fn(w->ctx, g);
}

/* A child item of `it` for subfolder `name` (fd open); its manifests are filled by the caller. */
static struct walk_item *walk_child(const struct walk_item *it, const char *name, int fd, struct walk_id id)
{
    struct walk_item *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = -1;
    c->root = it->root;
    c->path = walk_join(it->path, name);
    c->chain = malloc((it->depth + 1) * sizeof *c->chain);
    if (!c->path || !c->chain) {
        walk_item_free(c);
        return NULL;
    }
    memcpy(c->chain, it->chain, it->depth * sizeof *c->chain);
    c->chain[it->depth] = id;
    c->depth = it->depth + 1;
    c->fd = fd;
    return c;
}

static int walk_cmp_items(const void *a, const void *b)
{
    return walk_cmp_paths((*(struct walk_item *const *)a)->path, (*(struct walk_item *const *)b)->path);
}

/* Read one folder: emit its files, queue its subfolders. */
static enum np_status walk_read(struct walk_shared *w, struct walk_item *it)
{
    int fd = it->fd >= 0 ? it->fd : open(it->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    it->fd = -1;
    if (fd < 0) {
        walk_error(w, it->path, strerror(errno));
        return NP_OK;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        walk_error(w, it->path, strerror(errno));
        close(fd);
        return NP_OK;
    }
    const struct walk_id self = it->chain[it->depth - 1];
    char **files = NULL, *mine = NULL;
    size_t nf = 0, cf = 0;
    enum np_status rc = NP_OK;
    struct dirent *e;
    struct walk_item **kids = NULL;
    size_t nk = 0, ck = 0;
    errno = 0;
    while (rc == NP_OK && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
            continue;
        int type = e->d_type;
        struct walk_id id = {self.dev, e->d_ino}; /* a real subfolder: identity from readdir */
        if (type == DT_UNKNOWN || type == DT_LNK) {
            struct stat st;
            if (fstatat(dirfd(d), nm, &st, 0) != 0) {
                char *p = walk_join(it->path, nm);
                if (!p)
                    rc = NP_E_NOMEM;
                else
                    walk_error(w, p, type == DT_LNK ? "dangling symbolic link" : strerror(errno));
                free(p);
                errno = 0;
                continue;
            }
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
            id.dev = st.st_dev;
            id.ino = st.st_ino;
        }
        if (type == DT_DIR) {
            int loop = 0;
            for (size_t i = 0; i < it->depth; i++)
                if (it->chain[i].dev == id.dev && it->chain[i].ino == id.ino)
                    loop = 1;
            char *p = loop ? walk_join(it->path, nm) : NULL;
            if (loop) {
                if (p)
                    walk_error(w, p, "symbolic link loop (folder already being walked); skipped");
                free(p);
                errno = 0;
                continue;
            }
            int sfd = openat(dirfd(d), nm, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (sfd < 0) {
                p = walk_join(it->path, nm);
                if (p)
                    walk_error(w, p, strerror(errno));
                free(p);
                errno = 0;
                continue;
            }
            if (nk == ck) {
                size_t nc = ck ? ck * 2 : 16;
                struct walk_item **nkids = realloc(kids, nc * sizeof *nkids);
                if (!nkids) {
                    close(sfd);
                    rc = NP_E_NOMEM;
                    break;
                }
                kids = nkids;
                ck = nc;
            }
            /* the kids' ancestor manifests are known only after the whole listing: filled below */
            struct walk_item *c = walk_child(it, nm, sfd, id);
            if (!c) {
                close(sfd);
                rc = NP_E_NOMEM;
                break;
            }
            kids[nk++] = c;
        } else if (type == DT_REG) {
            if (strcmp(nm, NP_MANIFEST_NAME) == 0 && !mine && !(mine = walk_join(it->path, nm)))
                rc = NP_E_NOMEM;
            if (rc == NP_OK && fnmatch(w->include, nm, 0) == 0 && !walk_push_name(&files, &nf, &cf, nm))
                rc = NP_E_NOMEM;
        }
        errno = 0;
    }
    if (rc == NP_OK && errno != 0)
        walk_error(w, it->path, strerror(errno));
    /* a kid's parent is this folder: its manifests are this one's, shifted by one */
    for (size_t k = 0; rc == NP_OK && k < nk; k++) {
        struct walk_item *c = kids[k];
        const char *src[WALK_UP - 1] = {mine};
        for (size_t i = 1; i < WALK_UP - 1; i++)
            src[i] = it->manifest[i - 1];
        for (size_t i = 0; rc == NP_OK && i < WALK_UP - 1; i++)
            if (src[i] && !(c->manifest[i] = strdup(src[i])))
                rc = NP_E_NOMEM;
    }
    /* push in reverse name order: the stack then pops them in name order */
    if (nk > 1)
        qsort(kids, nk, sizeof *kids, walk_cmp_items);
    for (size_t k = nk; k-- > 0;) {
        if (rc == NP_OK)
            walk_push_item(w, kids[k]);
        else
            walk_item_free(kids[k]);
    }
    free(kids);
    /* a folder with a launch manifest is a run even without logs (not submitted, pending, failed) */
    if (rc == NP_OK && (nf || mine)) {
        if (nf > 1)
            qsort(files, nf, sizeof *files, walk_cmp_names);
        const char *m = mine;
        for (size_t i = 0; !m && i < WALK_UP - 1; i++)
            m = it->manifest[i];
        rc = walk_emit(w, it->root, it->path, dirfd(d), files, nf, m);
    }
    closedir(d);
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    free(mine);
    return rc;
}

static void *walk_worker(void *arg)
{
    struct walk_shared *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->n == 0 && w->busy > 0 && w->status == NP_OK)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->n == 0 || w->status != NP_OK)
            break;
        struct walk_item *it = w->stack[--w->n];
        w->busy++;
        pthread_mutex_unlock(&w->mu);
        enum np_status st = walk_read(w, it);
        walk_item_free(it);
        if (w->counts)
            atomic_fetch_add(&w->counts->read, 1);
        pthread_mutex_lock(&w->mu);
        w->busy--;
        if (st != NP_OK && w->status == NP_OK)
            w->status = st;
        if (w->n == 0 && w->busy == 0)
            pthread_cond_broadcast(&w->cv); /* nothing left: everyone leaves */
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

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

/* Manifests in `start` (when self) and the folders above it, up to WALK_UP - 1 of them, into m[]. */
static enum np_status walk_scan_above(const char *start, char **m, size_t nm)
{
    char real[4096];
    if (!realpath(start, real))
        return NP_OK;
    for (size_t up = 0; up < nm && strcmp(real, "/") != 0; up++) {
        char *slash = strrchr(real, '/');
        if (!slash)
            break;
        if (slash == real)
            slash[1] = '\0';
        else
            *slash = '\0';
        char *f = walk_join(real, NP_MANIFEST_NAME);
        if (!f)
            return NP_E_NOMEM;
        struct stat st;
        if (stat(f, &st) == 0 && S_ISREG(st.st_mode))
            m[up] = f;
        else
            free(f);
    }
    return NP_OK;
}

enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, int nthreads, np_walk_fn fn,
                             void *ctx, struct np_walk_errors *errs, struct np_walk_counts *counts)
{
    struct walk_shared w;
    memset(&w, 0, sizeof w);
    w.include = include ? include : "*.out";
    w.fn = fn;
    w.ctx = ctx;
    w.errs = errs;
    w.counts = counts;
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    enum np_status rc = NP_OK;
    /* roots: files are handed over at once, folders go on the stack (last root pushed first) */
    struct walk_item **roots = calloc(npaths ? npaths : 1, sizeof *roots);
    if (!roots)
        rc = NP_E_NOMEM;
    for (size_t i = 0; rc == NP_OK && i < npaths; i++) {
        const char *p = paths[i];
        struct stat st;
        if (stat(p, &st) != 0) {
            walk_error(&w, p, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            struct walk_item *it = calloc(1, sizeof *it);
            if (!it || !(it->path = strdup(p)) || !(it->chain = malloc(sizeof *it->chain))) {
                if (it)
                    it->fd = -1;
                walk_item_free(it);
                rc = NP_E_NOMEM;
                break;
            }
            it->fd = -1;
            it->root = i;
            it->chain[0].dev = st.st_dev;
            it->chain[0].ino = st.st_ino;
            it->depth = 1;
            rc = walk_scan_above(p, it->manifest, WALK_UP - 1);
            roots[i] = it;
        } else if (S_ISREG(st.st_mode)) {
            /* a file given by name: its own group; manifest in its folder or up to 2 parents */
            char *m[WALK_UP - 1] = {NULL};
            char *dir = walk_dirname(p);
            rc = dir ? walk_scan_above(p, m, WALK_UP - 1) : NP_E_NOMEM;
            const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
            char *one[] = {(char *)base};
            const char *man = NULL;
            for (size_t up = 0; up < WALK_UP - 1 && !man; up++)
                man = m[up];
            if (rc == NP_OK)
                rc = walk_emit(&w, i, dir, -1, one, 1, man);
            for (size_t up = 0; up < WALK_UP - 1; up++)
                free(m[up]);
            free(dir);
        } else {
            walk_error(&w, p, "not a regular file or folder");
        }
    }
    for (size_t i = npaths; i-- > 0;)
        if (roots && roots[i]) {
            if (rc == NP_OK)
                walk_push_item(&w, roots[i]);
            else
                walk_item_free(roots[i]);
        }
    free(roots);
    if (rc == NP_OK) {
        int nt = nthreads > 0 ? nthreads : 1;
        if (nt > 64)
            nt = 64;
        pthread_t tids[64];
        int started = 0;
        for (int t = 1; t < nt; t++)
            if (pthread_create(&tids[started], NULL, walk_worker, &w) == 0)
                started++;
        walk_worker(&w); /* the calling thread works too */
        for (int t = 0; t < started; t++)
            pthread_join(tids[t], NULL);
        rc = w.status;
    }
    for (size_t i = 0; i < w.n; i++)
        walk_item_free(w.stack[i]);
    free(w.stack);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    if (errs->n > 1)
        qsort(errs->msgs, errs->n, sizeof *errs->msgs, walk_cmp_names);
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
