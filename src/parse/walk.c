/* walk.c - ordered parallel directory traversal for nemoperf-parse.
 *
 * The walk is a tree of folder nodes.  Workers take the first node of a sorted
 * depth-first order that nobody has taken, open it relative to its parent's
 * fd, list it with getdents64 (no fdopendir fstat/fcntl, no stat when d_type
 * says what an entry is), publish its subfolders and analyse its files.  An
 * emitter hands results back in depth-first order and frees each finished
 * subtree, so what is held is the folders in flight, their listings and at
 * most WALK_PENDING_MAX results waiting for an earlier folder.
 */
#include "nemoperf/parse/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define WALK_UP 4               /* a folder and its 3 parents are searched for a manifest */
#define WALK_PENDING_MAX NP_WALK_PENDING_MAX
#define WALK_DENTS (32 * 1024)  /* getdents64 buffer per worker */
#define WALK_BATCH 64           /* results handed out per emitter round */
#define WALK_RESERVE_POLL_NS 5000000L /* a reserve thread looks at the pace's cold() every 5 ms */
#define WALK_DENT_MAX 512       /* more than the largest linux_dirent64 record (19 + 256 bytes, aligned) */

struct walk_id {
    dev_t dev;
    ino_t ino;
};

/* One folder (or a file named on the command line). */
struct walk_node {
    struct walk_node *parent;  /* NULL for the top (the list of roots) */
    size_t root;               /* command-line index */
    char *path;                /* as reached; NULL for the top */
    const char *name;          /* last component, inside path */
    struct walk_id id;
    int is_root, is_file;
    int one_read;              /* a short getdents64 answer is the whole rest of the folder (see walk_one_read_fs) */
    int fd;                    /* open folder, or -1 */
    size_t fd_refs;            /* own analysis + kids not yet opened */
    char *manifest;            /* this folder's NP_MANIFEST_NAME, or NULL */
    char *above[WALK_UP - 1];  /* roots: manifests of the parent [0], grandparent [1], ... */
    struct walk_node **kids;   /* sorted by name; a finished kid is freed and NULLed */
    size_t nkids, dispatch, emitted;
    char **errs;               /* "path: message", emitted before the result */
    size_t nerrs;
    void *result;
    unsigned claimed : 1, listed : 1, done : 1, self_emitted : 1, exhausted : 1, has_result : 1;
    unsigned depth;            /* folders below its root */
};

/* Deeper folders are not walked (said as an error): every node holds its whole path and the loop
 * check looks at its ancestors, so 20,000 nested levels cost 35 s and 410 MB (issue 23); run
 * folders are a handful of levels below what is named. */
#define WALK_MAX_DEPTH 256
#define WALK_STR2(x) #x
#define WALK_STR(x) WALK_STR2(x)

struct walk_shared {
    const char *include;
    const struct np_walk_sink *sink;
    struct np_walk_counts *counts;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct walk_node top;
    size_t busy;           /* nodes being worked on */
    size_t waiting;        /* workers in pthread_cond_wait */
    size_t pending;        /* done, not yet emitted */
    int emitting, emit_again;
    int finished;          /* a worker found nothing left to do */
    enum np_status status; /* first fatal failure */
};

/* ---- helpers ---- */

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

/* Subfolders in walk order (names hold no '/'). */
static int walk_cmp_nodes(const void *a, const void *b)
{
    return walk_cmp_paths((*(struct walk_node *const *)a)->name, (*(struct walk_node *const *)b)->name);
}

int np_walk_group_cmp(const struct np_walk_group *a, const struct np_walk_group *b)
{
    if (a->root != b->root)
        return a->root < b->root ? -1 : 1;
    return walk_cmp_paths(a->dir, b->dir);
}

/* Wake waiting workers, if any (lock held): most of the time nobody waits. */
static void walk_wake(struct walk_shared *w)
{
    if (w->waiting)
        pthread_cond_broadcast(&w->cv);
}

static void walk_fail_locked(struct walk_shared *w, enum np_status st)
{
    if (w->status == NP_OK)
        w->status = st;
    pthread_cond_broadcast(&w->cv);
}

/* Attach "path: msg" to node n (n is owned by the calling worker until it is marked done). */
static int walk_node_error(struct walk_node *n, const char *path, const char *name, const char *msg)
{
    char *p = name ? walk_join(path, name) : NULL;
    const char *shown = name ? p : path;
    if (!shown)
        return 0;
    size_t len = strlen(shown) + strlen(msg) + 3;
    char *m = malloc(len);
    char **a = m ? realloc(n->errs, (n->nerrs + 1) * sizeof *a) : NULL;
    if (!a) {
        free(m);
        free(p);
        return 0;
    }
    snprintf(m, len, "%s: %s", shown, msg);
    n->errs = a;
    a[n->nerrs++] = m;
    free(p);
    return 1;
}

static struct walk_node *walk_node_new(struct walk_node *parent, size_t root, char *path)
{
    struct walk_node *n = calloc(1, sizeof *n);
    if (!n) {
        free(path);
        return NULL;
    }
    n->parent = parent;
    n->root = root;
    n->path = path;
    const char *s = path ? strrchr(path, '/') : NULL;
    n->name = s && s[1] ? s + 1 : path;
    n->fd = -1;
    return n;
}

/* Frees n and whatever is left below it (after a failure; results are discarded). */
static void walk_node_free(struct walk_shared *w, struct walk_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nkids; i++)
        walk_node_free(w, n->kids[i]);
    free(n->kids);
    if (n->fd >= 0)
        close(n->fd);
    for (size_t i = 0; i < n->nerrs; i++)
        free(n->errs[i]);
    free(n->errs);
    if (n->has_result && w->sink->discard)
        w->sink->discard(w->sink->ctx, n->result);
    free(n->manifest);
    for (size_t i = 0; i < WALK_UP - 1; i++)
        free(n->above[i]);
    free(n->path);
    free(n);
}

/* Drop one reference to n's fd (lock held). */
static void walk_fd_unref(struct walk_node *n)
{
    if (n->fd_refs && --n->fd_refs == 0 && n->fd >= 0) {
        close(n->fd);
        n->fd = -1;
    }
}

/* Nearest manifest: n's own, its parent's, ... up to WALK_UP folders; above a root, the root's list. */
static const char *walk_manifest(const struct walk_node *n)
{
    for (size_t up = 0; n && n->path && up < WALK_UP; up++) {
        if (n->manifest)
            return n->manifest;
        if (n->is_root) {
            for (size_t i = 0; up + 1 + i < WALK_UP; i++)
                if (n->above[i])
                    return n->above[i];
            return NULL;
        }
        n = n->parent;
    }
    return NULL;
}

/* ---- choosing work (lock held) ---- */

/* The first node of the depth-first order nobody has taken, below n. */
static struct walk_node *walk_find(struct walk_node *n)
{
    if (!n->claimed)
        return n;
    if (!n->listed || n->exhausted)
        return NULL;
    for (size_t i = n->dispatch; i < n->nkids; i++) {
        struct walk_node *k = n->kids[i];
        if (!k || k->exhausted) {
            if (i == n->dispatch)
                n->dispatch++;
            continue;
        }
        struct walk_node *r = walk_find(k);
        if (r)
            return r;
    }
    if (n->dispatch == n->nkids)
        n->exhausted = 1;
    return NULL;
}

/* The first node whose result has not been handed out yet (the one the emitter waits for). */
static struct walk_node *walk_blocker(struct walk_node *n)
{
    while (n) {
        if (!n->self_emitted)
            return n;
        if (n->emitted >= n->nkids)
            return NULL;
        n = n->kids[n->emitted];
    }
    return NULL;
}

/* ---- emitting in order ---- */

struct walk_out {
    char **errs;
    size_t nerrs;
    void *result;
    int has_result;
};

/* Collect up to `cap` ready entries in depth-first order; free finished subtrees.
 * Returns 1 when n is finished (everything below handed out). */
static int walk_collect(struct walk_shared *w, struct walk_node *n, struct walk_out *out, size_t *nout, size_t cap)
{
    if (!n->self_emitted) {
        if (!n->done || *nout >= cap)
            return 0;
        out[*nout].errs = n->errs;
        out[*nout].nerrs = n->nerrs;
        out[*nout].result = n->result;
        out[*nout].has_result = n->has_result;
        (*nout)++;
        n->errs = NULL;
        n->nerrs = 0;
        n->has_result = 0;
        n->result = NULL;
        n->self_emitted = 1;
        w->pending--;
    }
    while (n->emitted < n->nkids) {
        struct walk_node *k = n->kids[n->emitted];
        if (k) {
            if (!walk_collect(w, k, out, nout, cap))
                return 0;
            walk_node_free(w, k);
            n->kids[n->emitted] = NULL;
        }
        n->emitted++;
    }
    if (n->nkids) {
        free(n->kids);
        n->kids = NULL;
        n->nkids = n->dispatch = n->emitted = 0;
    }
    return 1;
}

/* Hand out everything that is ready (lock held on entry and exit; released while calling back). */
static void walk_emit(struct walk_shared *w)
{
    if (w->emitting) {
        w->emit_again = 1;
        return;
    }
    w->emitting = 1;
    struct walk_out out[WALK_BATCH];
    for (;;) {
        w->emit_again = 0;
        size_t nout = 0;
        if (w->status == NP_OK)
            walk_collect(w, &w->top, out, &nout, WALK_BATCH);
        if (nout == 0 && !w->emit_again)
            break;
        walk_wake(w); /* pending went down */
        pthread_mutex_unlock(&w->mu);
        enum np_status st = NP_OK;
        for (size_t i = 0; i < nout; i++) {
            for (size_t e = 0; e < out[i].nerrs; e++) {
                if (st == NP_OK)
                    st = w->sink->error(w->sink->ctx, out[i].errs[e]);
                free(out[i].errs[e]);
            }
            free(out[i].errs);
            if (out[i].has_result) {
                if (st == NP_OK)
                    st = w->sink->emit(w->sink->ctx, out[i].result);
                else if (w->sink->discard)
                    w->sink->discard(w->sink->ctx, out[i].result);
            }
        }
        pthread_mutex_lock(&w->mu);
        if (st != NP_OK)
            walk_fail_locked(w, st);
    }
    w->emitting = 0;
}

/* ---- reading one folder (no lock) ---- */

struct walk_names {
    char **v;
    size_t n, cap;
};

static int walk_names_push(struct walk_names *a, const char *name)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 16;
        char **na = realloc(a->v, nc * sizeof *na);
        if (!na)
            return 0;
        a->v = na;
        a->cap = nc;
    }
    if (!(a->v[a->n] = strdup(name)))
        return 0;
    a->n++;
    return 1;
}

static int walk_is_loop(const struct walk_node *n, struct walk_id id)
{
    for (; n && n->path; n = n->parent)
        if (n->id.dev == id.dev && n->id.ino == id.ino)
            return 1;
    return 0;
}

/* List folder n (n->fd open): kids into n->kids (sorted), matching files into files. */
static enum np_status walk_list(struct walk_shared *w, struct walk_node *n, char *dents, struct walk_names *files)
{
    struct walk_node **kids = NULL;
    size_t nk = 0, ck = 0;
    for (;;) {
        ssize_t got = getdents64(n->fd, dents, WALK_DENTS);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (!walk_node_error(n, n->path, NULL, strerror(errno)))
                goto nomem;
            break;
        }
        if (got == 0)
            break;
        /* the EOF call is skipped only where the filesystem fills the buffer whenever it can */
        int last = n->one_read && (size_t)got <= WALK_DENTS - WALK_DENT_MAX;
        for (ssize_t off = 0; off < got;) {
            const struct dirent64 *e = (const struct dirent64 *)(dents + off);
            off += e->d_reclen;
            const char *nm = e->d_name;
            if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
                continue;
            int type = e->d_type;
            struct walk_id id = {n->id.dev, e->d_ino}; /* a real subfolder: identity from the entry */
            if (type == DT_UNKNOWN || type == DT_LNK) {
                struct stat st;
                if (fstatat(n->fd, nm, &st, 0) != 0) {
                    if (!walk_node_error(n, n->path, nm, type == DT_LNK ? "dangling symbolic link" : strerror(errno)))
                        goto nomem;
                    continue;
                }
                type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
                id.dev = st.st_dev;
                id.ino = st.st_ino;
            }
            /* a nemoperf.json that is a FIFO, a device or a folder too: the run reader refuses it,
             * naming it, rather than the run silently having no manifest (issue 23) */
            if (!n->manifest && strcmp(nm, NP_MANIFEST_NAME) == 0 && !(n->manifest = walk_join(n->path, nm)))
                goto nomem;
            if (type == DT_DIR) {
                if (n->depth + 1 > WALK_MAX_DEPTH) {
                    if (!walk_node_error(n, n->path, nm, "nested more than " WALK_STR(WALK_MAX_DEPTH)
                                                         " folders deep; not walked"))
                        goto nomem;
                    continue;
                }
                if (walk_is_loop(n, id)) {
                    if (!walk_node_error(n, n->path, nm, "symbolic link loop (folder already being walked); skipped"))
                        goto nomem;
                    continue;
                }
                if (nk == ck) {
                    size_t nc = ck ? ck * 2 : 16;
                    struct walk_node **nkids = realloc(kids, nc * sizeof *nkids);
                    if (!nkids)
                        goto nomem;
                    kids = nkids;
                    ck = nc;
                }
                struct walk_node *k = walk_node_new(n, n->root, walk_join(n->path, nm));
                if (!k || !k->path) {
                    free(k);
                    goto nomem;
                }
                k->id = id;
                k->depth = n->depth + 1;
                k->one_read = n->one_read && e->d_type == DT_DIR; /* not through a symbolic link */
                kids[nk++] = k;
            } else {
                if (type == DT_REG && fnmatch(w->include, nm, 0) == 0 && !walk_names_push(files, nm))
                    goto nomem;
            }
        }
        if (last)
            break;
    }
    if (nk > 1)
        qsort(kids, nk, sizeof *kids, walk_cmp_nodes);
    if (files->n > 1)
        qsort(files->v, files->n, sizeof *files->v, walk_cmp_names);
    n->kids = kids;
    n->nkids = nk;
    return NP_OK;
nomem:
    for (size_t i = 0; i < nk; i++) {
        free(kids[i]->path);
        free(kids[i]);
    }
    free(kids);
    return NP_E_NOMEM;
}

static enum np_status walk_group(struct walk_shared *w, struct walk_node *n, const char *dir, int dirfd,
                                 char **names, size_t nnames, const char *manifest, void **result, int *has)
{
    struct np_walk_group *g = calloc(1, sizeof *g);
    if (!g)
        return NP_E_NOMEM;
    g->root = n->root;
    g->dirfd = dirfd;
    g->dir = strdup(dir);
    g->files = calloc(nnames ? nnames : 1, sizeof *g->files);
    g->manifest = manifest ? strdup(manifest) : NULL;
    if (!g->dir || !g->files || (manifest && !g->manifest)) {
        np_walk_group_free(g);
        return NP_E_NOMEM;
    }
    for (size_t i = 0; i < nnames; i++) {
        if (!(g->files[i] = walk_join(dir, names[i]))) {
            np_walk_group_free(g);
            return NP_E_NOMEM;
        }
        g->nfiles++;
    }
    *result = NULL;
    enum np_status st = w->sink->group(w->sink->ctx, g, result);
    *has = st == NP_OK;
    return st;
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

/* Node n is listed: its kids may be taken (lock held).  analysing: n's files are still to be
 * read through n->fd, which then stays open for that too. */
static void walk_publish(struct walk_shared *w, struct walk_node *n, int analysing)
{
    struct walk_node *p = n->parent;
    if (p && p->path)
        walk_fd_unref(p); /* n is open: the parent's fd is no longer needed for it */
    n->fd_refs = n->fd >= 0 ? (size_t)analysing + n->nkids : 0; /* each kid's openat */
    if (n->fd >= 0 && n->fd_refs == 0) {
        close(n->fd);
        n->fd = -1;
    }
    n->listed = 1;
    if (w->counts)
        atomic_fetch_add(&w->counts->found, n->nkids);
    if (n->nkids)
        walk_wake(w); /* new work */
}

/* Work on one claimed node: open, list, publish the kids, analyse the files. */
static enum np_status walk_work(struct walk_shared *w, struct walk_node *n, char *dents)
{
    struct walk_names files = {0};
    enum np_status st = NP_OK;
    void *result = NULL;
    int has = 0;
    if (n->is_file) {
        char *dir = walk_dirname(n->path);
        const char *base = strrchr(n->path, '/') ? strrchr(n->path, '/') + 1 : n->path;
        char *one[] = {(char *)base};
        const char *man = NULL;
        for (size_t up = 0; up < WALK_UP - 1 && !man; up++)
            man = n->above[up];
        st = dir ? walk_group(w, n, dir, -1, one, 1, man, &result, &has) : NP_E_NOMEM;
        free(dir);
        pthread_mutex_lock(&w->mu);
        n->listed = 1;
    } else {
        /* open relative to the parent's fd (kept open for this), or by path for a root */
        struct walk_node *p = n->parent;
        int fd = p && p->fd >= 0 ? openat(p->fd, n->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                 : open(n->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int oerr = errno;
        if (fd < 0) {
            if (!walk_node_error(n, n->path, NULL, strerror(oerr)))
                st = NP_E_NOMEM;
        } else {
            n->fd = fd;
            st = walk_list(w, n, dents, &files);
        }
        /* Publish the subfolders before analysing the files, so that other workers can start on
         * them; a folder without subfolders or without files is published and finished under
         * one lock (fewer lock round trips: most folders are one or the other). */
        /* a folder with a launch manifest is a run even without logs (not submitted, pending, failed) */
        int group = st == NP_OK && (files.n || n->manifest);
        int early = n->nkids && group;
        if (early) {
            pthread_mutex_lock(&w->mu);
            walk_publish(w, n, 1);
            pthread_mutex_unlock(&w->mu);
        }
        if (group)
            st = walk_group(w, n, n->path, n->fd, files.v, files.n, walk_manifest(n), &result, &has);
        pthread_mutex_lock(&w->mu);
        if (!early)
            walk_publish(w, n, 0);
        else if (n->fd >= 0)
            walk_fd_unref(n); /* the analysis is over */
    }
    for (size_t i = 0; i < files.n; i++)
        free(files.v[i]);
    free(files.v);
    if (n->nerrs > 1)
        qsort(n->errs, n->nerrs, sizeof *n->errs, walk_cmp_names);
    if (w->counts && !n->is_file)
        atomic_fetch_add(&w->counts->read, 1);
    n->result = result;
    n->has_result = has;
    n->done = 1;
    w->pending++;
    if (st != NP_OK)
        walk_fail_locked(w, st);
    return st; /* lock held */
}

/* A reserve thread (see np_walk_pace) waits until the data turns out cold or the walk ends (lock held);
 * 1 when it is to work. */
static int walk_reserve_wait(struct walk_shared *w)
{
    const struct np_walk_pace *pace = w->sink->pace;
    while (w->status == NP_OK && !w->top.exhausted && !w->finished) {
        if (pace->cold && pace->cold())
            return 1;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += WALK_RESERVE_POLL_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    return 0;
}

struct walk_thread {
    struct walk_shared *w;
    int reserve; /* starts only when the data is cold */
};

static void *walk_worker(void *arg)
{
    struct walk_thread *t = arg;
    struct walk_shared *w = t->w;
    pthread_mutex_lock(&w->mu);
    if (t->reserve && !walk_reserve_wait(w)) {
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    pthread_mutex_unlock(&w->mu);
    char *dents = malloc(WALK_DENTS);
    pthread_mutex_lock(&w->mu);
    if (!dents)
        walk_fail_locked(w, NP_E_NOMEM);
    for (;;) {
        if (w->status != NP_OK)
            break;
        struct walk_node *n = walk_find(&w->top);
        if (n && w->pending >= WALK_PENDING_MAX && n != walk_blocker(&w->top))
            n = NULL; /* too much waiting for an earlier folder: only that folder may be taken */
        if (!n) {
            struct walk_node *b = walk_blocker(&w->top);
            if (b && b->done && !w->emitting) {
                walk_emit(w); /* e.g. roots that are only an error */
                continue;
            }
            if (w->busy == 0 && w->top.exhausted)
                break;
            if (w->busy == 0 && !walk_find(&w->top)) {
                w->top.exhausted = 1;
                break;
            }
            w->waiting++;
            pthread_cond_wait(&w->cv, &w->mu);
            w->waiting--;
            continue;
        }
        n->claimed = 1;
        w->busy++;
        pthread_mutex_unlock(&w->mu);
        walk_work(w, n, dents); /* returns with the lock held */
        w->busy--;
        walk_emit(w);
        if (w->busy == 0)
            walk_wake(w); /* maybe the end */
    }
    w->finished = 1; /* a worker leaves only when there is nothing left to take: reserves need not start */
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    free(dents);
    return NULL;
}

/* Filesystems whose getdents64 fills the buffer until the folder's end or until the
 * next entry does not fit (ext4_readdir/ext4_dx_readdir, xfs_readdir, btrfs_real_readdir,
 * dcache_readdir/offset_readdir): an answer with room left for one more entry is the last
 * one, and the call that would return 0 can be skipped.  Network and FUSE filesystems
 * may answer short: they always get the EOF call. */
static int walk_one_read_fs(int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return 0;
    switch ((unsigned long)sf.f_type) {
    case 0xEF53UL:     /* ext2/3/4 */
    case 0x58465342UL: /* xfs */
    case 0x9123683EUL: /* btrfs */
    case 0x01021994UL: /* tmpfs */
        return 1;
    }
    return 0;
}

/* 1 when some mount point lies below the folder `real` (/proc/self/mountinfo): then a
 * subfolder may be on another filesystem, which d_type does not tell. */
static int walk_mounts_below(const char *real)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return 1;
    size_t rl = strlen(real);
    char line[8192];
    int below = 0;
    while (!below && fgets(line, sizeof line, f)) {
        /* "id parent maj:min root mountpoint ..." */
        char *p = line;
        for (int field = 0; field < 4 && p; field++) {
            p = strchr(p, ' ');
            if (p)
                p++;
        }
        if (!p)
            continue;
        char *end = strchr(p, ' ');
        if (end)
            *end = '\0';
        /* the kernel writes space, tab, newline and backslash as \ooo */
        char *d = p;
        for (const char *c = p; *c; c++) {
            if (c[0] == '\\' && c[1] >= '0' && c[1] <= '3' && c[2] >= '0' && c[2] <= '7' && c[3] >= '0' && c[3] <= '7') {
                *d++ = (char)((c[1] - '0') * 64 + (c[2] - '0') * 8 + (c[3] - '0'));
                c += 3;
            } else {
                *d++ = *c;
            }
        }
        *d = '\0';
        if (strcmp(real, "/") == 0 ? strcmp(p, "/") != 0
                                   : strncmp(p, real, rl) == 0 && p[rl] == '/')
            below = 1;
    }
    fclose(f);
    return below;
}

/* Manifests in the folders above `start`, up to WALK_UP - 1 of them, into m[]. */
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
        struct stat st; /* whatever it is: the run reader refuses what is not a regular file, naming it */
        if (lstat(f, &st) == 0)
            m[up] = f;
        else
            free(f);
    }
    return NP_OK;
}

enum np_status np_walk_ordered(char *const *paths, size_t npaths, const char *include, int nthreads,
                               const struct np_walk_sink *sink, struct np_walk_counts *counts)
{
    struct walk_shared w;
    memset(&w, 0, sizeof w);
    w.include = include ? include : "*.out";
    w.sink = sink;
    w.counts = counts;
    /* Every worker takes the lock a few times a folder for short critical sections: a mutex that spins
     * briefly before it sleeps (glibc's adaptive type) walks make bench's 40,000-folder shape b in half the
     * wall time of a plain one (0.33 -> 0.16 s with no file to read; ~5,900 -> ~1,400 context switches). */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
#ifdef __GLIBC__
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(&w.mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_cond_init(&w.cv, NULL);
    w.top.fd = -1;
    w.top.claimed = w.top.listed = w.top.done = w.top.self_emitted = 1;
    enum np_status rc = NP_OK;
    w.top.kids = calloc(npaths ? npaths : 1, sizeof *w.top.kids);
    if (!w.top.kids)
        rc = NP_E_NOMEM;
    /* roots, in command-line order: folders are listed by workers, files are groups of their own */
    for (size_t i = 0; rc == NP_OK && i < npaths; i++) {
        const char *p = paths[i];
        char *copy = strdup(p);
        struct walk_node *n = copy ? walk_node_new(&w.top, i, copy) : NULL;
        if (!n) {
            rc = NP_E_NOMEM;
            break;
        }
        n->is_root = 1;
        w.top.kids[w.top.nkids++] = n;
        struct stat st;
        if (stat(p, &st) != 0) {
            if (!walk_node_error(n, p, NULL, strerror(errno)))
                rc = NP_E_NOMEM;
            n->claimed = n->listed = n->done = 1;
            w.pending++;
        } else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
            n->is_file = S_ISREG(st.st_mode);
            n->id.dev = st.st_dev;
            n->id.ino = st.st_ino;
            rc = walk_scan_above(p, n->above, WALK_UP - 1);
            if (counts && !n->is_file)
                atomic_fetch_add(&counts->found, 1);
            if (!n->is_file) {
                char real[4096];
                int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                n->one_read = fd >= 0 && walk_one_read_fs(fd) && realpath(p, real) && !walk_mounts_below(real);
                if (fd >= 0)
                    close(fd);
            }
        } else {
            if (!walk_node_error(n, p, NULL, "not a regular file or folder"))
                rc = NP_E_NOMEM;
            n->claimed = n->listed = n->done = 1;
            w.pending++;
        }
    }
    if (rc == NP_OK) {
        int nt = nthreads > 0 ? nthreads : 1;
        if (nt > 64)
            nt = 64;
        pthread_t tids[64];
        struct walk_thread th[64];
        int started = 0;
        int active = sink->pace && sink->pace->active > 0 ? sink->pace->active : nt;
        for (int t = 1; t < nt; t++) {
            th[t].w = &w;
            th[t].reserve = t >= active;
            if (pthread_create(&tids[started], NULL, walk_worker, &th[t]) == 0)
                started++;
        }
        th[0].w = &w;
        th[0].reserve = 0;
        walk_worker(&th[0]); /* the calling thread works too */
        for (int t = 0; t < started; t++)
            pthread_join(tids[t], NULL);
        pthread_mutex_lock(&w.mu);
        walk_emit(&w); /* roots that were only errors */
        pthread_mutex_unlock(&w.mu);
        rc = w.status;
    }
    for (size_t i = 0; i < w.top.nkids; i++)
        walk_node_free(&w, w.top.kids[i]);
    free(w.top.kids);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    return rc;
}

/* ---- the unordered interface, on top of the ordered one ---- */

struct walk_compat {
    np_walk_fn fn;
    void *ctx;
    struct np_walk_errors *errs;
};

static enum np_status walk_compat_group(void *ctx, struct np_walk_group *g, void **result)
{
    struct walk_compat *c = ctx;
    *result = NULL;
    return c->fn(c->ctx, g);
}

static enum np_status walk_compat_emit(void *ctx, void *result)
{
    (void)ctx;
    (void)result;
    return NP_OK;
}

static enum np_status walk_compat_error(void *ctx, const char *msg)
{
    struct walk_compat *c = ctx;
    char *m = strdup(msg);
    char **a = m ? realloc(c->errs->msgs, (c->errs->n + 1) * sizeof *a) : NULL;
    if (!a) {
        free(m);
        return NP_E_NOMEM;
    }
    c->errs->msgs = a;
    a[c->errs->n++] = m;
    return NP_OK;
}

enum np_status np_walk_paths(char *const *paths, size_t npaths, const char *include, int nthreads,
                             const struct np_walk_pace *pace, np_walk_fn fn, void *ctx, struct np_walk_errors *errs,
                             struct np_walk_counts *counts)
{
    struct walk_compat c = {fn, ctx, errs};
    struct np_walk_sink sink = {&c, walk_compat_group, walk_compat_emit, walk_compat_error, NULL, pace};
    enum np_status rc = np_walk_ordered(paths, npaths, include, nthreads, &sink, counts);
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
