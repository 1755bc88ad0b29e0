/* archive.c - stage a pinned source checkout from GitHub's archive of one commit (DFM, Megatron-Bridge,
 * Megatron-LM for RECIPE=wan2.1), so compute nodes need no network and no git.
 *
 * Download through the Hugging Face client's transfer (hf.c: retries with backoff, .part resumed with a Range
 * request, renamed when whole); check by unpacking it whole with tar into a temporary folder beside the target
 * (a truncated or corrupted gzip fails there) and by its one top folder "<name>-<commit>" (how GitHub names a
 * commit's archive); then one rename() puts the checkout in place with a .nemoperf-commit marker.
 */
#include "nemoperf/setup/archive.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nemoperf/setup/stage.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/util/shell.h"

#define ARCHIVE_MARKER ".nemoperf-commit"

char *np_archive_url(const char *base, const struct np_mbridge_repo *repo)
{
    const char *b = base && *base ? base : NP_ARCHIVE_DEFAULT_ENDPOINT;
    size_t n = strlen(b);
    while (n > 0 && b[n - 1] == '/')
        n--;
    char *u = NULL;
    if (asprintf(&u, "%.*s/%s/tar.gz/%s", (int)n, b, repo->github, repo->commit) < 0)
        return NULL;
    return u;
}

static int archive_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Remove a folder tree we made (best effort: a leftover temporary folder is harmless, never a target). */
static void archive_rmtree(const char *dir)
{
    nftw(dir, archive_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1 when dir holds the marker naming commit. */
static int archive_present(const char *dir, const char *commit)
{
    char *m = NULL, buf[64] = "";
    if (asprintf(&m, "%s/" ARCHIVE_MARKER, dir) < 0)
        return 0;
    FILE *f = fopen(m, "r");
    free(m);
    if (!f)
        return 0;
    int ok = fgets(buf, sizeof buf, f) && strncmp(buf, commit, 40) == 0;
    fclose(f);
    return ok;
}

/* The one entry of dir: a new string, or NULL when it holds none or several. */
static char *archive_only_entry(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *one = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n++ == 0)
            one = strdup(e->d_name);
    }
    closedir(d);
    if (n != 1) {
        free(one);
        return NULL;
    }
    return one;
}

/* Unpack archive into tmp with tar; 0, or -1 with why. */
static int archive_untar(const char *tar, const char *archive, const char *tmp, char *why, size_t size)
{
    char *prog = np_path_search(tar ? tar : "tar", getenv("PATH"));
    if (!prog) {
        snprintf(why, size, "tar: not found on PATH");
        return -1;
    }
    char *argv[] = {prog, (char *)"-xzf", (char *)archive, (char *)"-C", (char *)tmp, (char *)"--no-same-owner",
                    NULL};
    int ws = 0, stopped = 0;
    struct np_error err;
    enum np_status st = np_stage_run(argv, 0, NULL, 0, NULL, 0, &ws, &stopped, &err);
    free(prog);
    if (st != NP_OK) {
        snprintf(why, size, "%.300s", err.text);
        return -1;
    }
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        char t[96];
        np_stage_wait_text(ws, t, sizeof t);
        snprintf(why, size, "tar %s", t);
        return -1;
    }
    return 0;
}

enum np_status np_archive_stage(struct np_hf_client *c, const char *base, const char *stage,
                                const struct np_mbridge_repo *repo, const char *tar, enum np_archive_outcome *outcome,
                                long long *bytes, struct np_error *err)
{
    *outcome = NP_ARCHIVE_PRESENT;
    if (bytes)
        *bytes = 0;
    char *dest = np_mbridge_checkout_dir(stage, repo), *src = NULL, *archive = NULL, *tmp = NULL, *url = NULL;
    char *top = NULL, *from = NULL, *label = NULL;
    enum np_status st = NP_OK;
    const char *name = strchr(repo->github, '/') + 1; /* the loader checked owner/name */
    if (!dest || asprintf(&src, "%s/src", stage) < 0 ||
        asprintf(&archive, "%s/.%s-%s.tar.gz", src, repo->name, repo->commit) < 0 ||
        asprintf(&tmp, "%s/.%s-%s.unpack.XXXXXX", src, repo->name, repo->commit) < 0 ||
        asprintf(&label, "%s@%.12s", repo->github, repo->commit) < 0 || !(url = np_archive_url(base, repo))) {
        st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        goto out;
    }
    struct stat sb;
    if (stat(dest, &sb) == 0) {
        if (S_ISDIR(sb.st_mode) && archive_present(dest, repo->commit))
            goto out;
        st = np_error_set(err, NP_E_INVALID, dest, 0, 0,
                          "exists but is not %s staged by nemoperf (no %s naming the commit): move it away",
                          label, ARCHIVE_MARKER);
        goto out;
    }
    if ((st = np_stage_mkdirs(src, err)) != NP_OK)
        goto out;
    enum np_hf_fetch what;
    if ((st = np_hf_fetch_url(c, url, label, archive, &what, bytes, err)) != NP_OK)
        goto out;
    if (what == NP_HF_ABSENT) {
        st = np_error_set(err, NP_E_NOTFOUND, label, 0, 0, "no archive at %s (HTTP 404): is the commit public?", url);
        goto out;
    }
    if (!mkdtemp(tmp)) {
        st = np_error_set(err, NP_E_IO, tmp, 0, 0, "cannot create: %s", strerror(errno));
        goto out;
    }
    char why[400] = "", want[300];
    snprintf(want, sizeof want, "%s-%s", name, repo->commit);
    if (archive_untar(tar, archive, tmp, why, sizeof why) == 0 && !(top = archive_only_entry(tmp)))
        snprintf(why, sizeof why, "expected one top folder %s", want);
    else if (top && strcmp(top, want) != 0)
        snprintf(why, sizeof why, "its top folder is %s, not %s (another commit?)", top, want);
    if (why[0]) { /* not that commit's archive, or not whole: gone, so that the next run downloads it anew */
        unlink(archive);
        archive_rmtree(tmp);
        st = np_error_set(err, NP_E_PARSE, label, 0, 0,
                          "the archive from %s is corrupt or not the commit's (%s): deleted; run setup again", url,
                          why);
        goto out;
    }
    FILE *f = NULL;
    int bad = asprintf(&from, "%s/%s/" ARCHIVE_MARKER, tmp, top) < 0 || !(f = fopen(from, "w"));
    if (!bad) {
        bad = fprintf(f, "%s %s\n", repo->commit, repo->github) < 0;
        bad |= fclose(f) != 0;
    }
    if (bad) {
        st = np_error_set(err, NP_E_IO, from ? from : tmp, 0, 0, "cannot write the marker: %s", strerror(errno));
        archive_rmtree(tmp);
        goto out;
    }
    free(from);
    from = NULL;
    if (asprintf(&from, "%s/%s", tmp, top) < 0 || rename(from, dest) != 0) {
        st = np_error_set(err, NP_E_IO, dest, 0, 0, "cannot rename %s into place: %s", from ? from : tmp,
                          strerror(errno));
        archive_rmtree(tmp);
        goto out;
    }
    rmdir(tmp);
    unlink(archive);
    *outcome = NP_ARCHIVE_STAGED;
out:
    free(dest);
    free(src);
    free(archive);
    free(tmp);
    free(url);
    free(top);
    free(from);
    free(label);
    return st;
}
