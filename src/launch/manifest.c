/* manifest.c - create a launch job's experiment folder and write its manifest.
 *
 * The folder layout is NeMo-Run's ($STAGE_PATH/experiments/<exp>/<exp>_<ts>/<job>/);
 * an existing folder is never reused.  nemoperf.json records the resolved configuration,
 * backend (slurmrestd URL and API version for REST), job id, submit time, the names
 * (never values) of the variables passed to the job, those of them the user had set to another
 * value (both values, never a credential's), and the scheduler's message after a failure.
 * Its "state" and "tag" carry the submission protocol (manifest.h): written pre-sized before
 * the backend runs, the outcome rewritten atomically or, on a full disk, in place.
 */
#include "nemoperf/launch/manifest.h"
#include "nemoperf/util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/job/kind.h"
#include "nemoperf/job/nccltests.h"
#include "nemoperf/job/system.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/util/shell.h"

#define MANIFEST_MAX_BUMPS 1000

static enum np_status manifest_mkdir(const char *path, int exist_ok, struct np_error *err)
{
    if (mkdir(path, 0755) == 0)
        return NP_OK;
    if (errno == EEXIST && exist_ok) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return NP_OK;
        return np_error_set(err, NP_E_IO, path, 0, 0, "exists and is not a folder");
    }
    if (errno == EEXIST)
        return NP_E_NOTFOUND; /* caller retries with another name (not an error yet) */
    return np_error_set(err, NP_E_IO, path, 0, 0, "cannot create folder: %s", strerror(errno));
}

enum np_status np_experiment_create(struct np_launch_config *c, struct np_error *err)
{
    struct np_buf b;
    enum np_status st;
    np_buf_init(&b);
    np_buf_appendf(&b, "%s/experiments", c->stage_path);
    char *top = np_buf_steal(&b);
    np_buf_appendf(&b, "%s/experiments/%s", c->stage_path, c->experiment);
    char *exp = np_buf_steal(&b);
    if (!top || !exp) {
        free(top);
        free(exp);
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    st = manifest_mkdir(top, 1, err);
    if (st == NP_OK)
        st = manifest_mkdir(exp, 1, err);
    free(top);
    free(exp);
    if (st != NP_OK)
        return st;
    long long ts = c->timestamp;
    for (int i = 0; i < MANIFEST_MAX_BUMPS; i++, ts++) {
        np_buf_appendf(&b, "%s/experiments/%s/%s_%lld", c->stage_path, c->experiment, c->experiment, ts);
        char *run = np_buf_steal(&b);
        if (!run)
            return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        st = manifest_mkdir(run, 0, err);
        free(run);
        if (st == NP_E_NOTFOUND)
            continue;
        if (st != NP_OK)
            return st;
        if (np_launch_config_set_timestamp(c, ts) != NP_OK)
            return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        if ((st = manifest_mkdir(c->experiment_dir, 0, err)) != NP_OK)
            return st == NP_E_NOTFOUND ? np_error_set(err, NP_E_IO, c->experiment_dir, 0, 0, "exists already") : st;
        np_buf_appendf(&b, "%s/code", c->experiment_dir);
        char *code = np_buf_steal(&b);
        if (!code)
            return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        st = manifest_mkdir(code, 1, err);
        free(code);
        return st;
    }
    return np_error_set(err, NP_E_IO, c->stage_path, 0, 0, "no free experiment folder name for %s after %d tries",
                        c->experiment, MANIFEST_MAX_BUMPS);
}

/* Overwrite dir/name in place with text, padded with blanks to the file's present size
 * (so no new block is needed); -1 with errno when it does not fit or cannot be written. */
static int manifest_overwrite(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    struct stat st;
    size_t len = strlen(text);
    int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : (off_t)len > st.st_size ? EFBIG : 0;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    char pad[512];
    memset(pad, ' ', sizeof pad);
    off_t off = 0, size = st.st_size;
    while (off < size) { /* text, then blanks up to the old size; the last byte a newline */
        const char *src;
        size_t n;
        if ((size_t)off < len) {
            src = text + off;
            n = len - (size_t)off;
        } else {
            src = pad;
            n = (size_t)(size - off) < sizeof pad ? (size_t)(size - off) : sizeof pad;
        }
        if (off + (off_t)n == size && n > 0 && src == pad)
            pad[n - 1] = '\n';
        ssize_t w = pwrite(fd, src, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        off += w;
    }
    if (fsync(fd) != 0) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

/* o as text with a final newline; presize: blanks up to the end of the block holding
 * NP_MANIFEST_SLACK more bytes.  A new string or NULL. */
static char *manifest_text(const json_t *o, int presize)
{
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!text)
        return NULL;
    size_t n = strlen(text), total = n + 1;
    if (presize)
        total = (n + 1 + NP_MANIFEST_SLACK + 4095) / 4096 * 4096;
    char *t2 = realloc(text, total + 1);
    if (!t2) {
        free(text);
        return NULL;
    }
    memset(t2 + n, ' ', total - n);
    t2[total - 1] = '\n';
    t2[total] = '\0';
    return t2;
}

enum np_status np_manifest_store(const char *dir, const json_t *o, int presize, int *in_place, struct np_error *err)
{
    if (in_place)
        *in_place = 0;
    char *text = manifest_text(o, presize);
    if (!text)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    enum np_status st = np_file_write_atomic(dir, NP_MANIFEST_NAME, text, 0644, err);
    free(text);
    if (st != NP_OK && st != NP_E_NOMEM) {
        /* no room for a second copy (disk full, quota): the same file, rewritten in place;
         * a long error message is shortened, then dropped, until it fits */
        static const int cuts[] = {-1, 200, 0};
        json_t *c = json_deep_copy(o);
        const char *e = json_string_value(json_object_get(c, "error"));
        char *orig = e ? strdup(e) : NULL;
        int done = 0, saved = errno;
        for (size_t i = 0; c && !done && i < sizeof cuts / sizeof cuts[0]; i++) {
            if (cuts[i] >= 0 && !orig)
                break;
            if (cuts[i] >= 0) {
                char *cut = strndup(orig, (size_t)cuts[i]);
                json_object_set_new(c, "error", cut && *cut ? json_string(cut) : json_string("(shortened away: disk full)"));
                free(cut);
            }
            char *t = manifest_text(c, 0);
            if (t && manifest_overwrite(dir, NP_MANIFEST_NAME, t) == 0)
                done = 1;
            else if (t && errno != EFBIG)
                i = sizeof cuts; /* a real write error: shorter text will not help */
            free(t);
        }
        free(orig);
        json_decref(c);
        errno = saved;
        if (done) {
            if (in_place)
                *in_place = 1;
            st = NP_OK;
        }
    }
    return st;
}

enum np_status np_manifest_load(const char *dir, json_t **out, struct np_error *err)
{
    *out = NULL;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, NP_MANIFEST_NAME) >= (int)sizeof path)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "path too long");
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return np_error_set(err, NP_E_NOTFOUND, path, 0, 0, "no manifest (not a folder made by nemoperf-launch?)");
    json_error_t je;
    int io = 0;
    struct np_error why;
    /* a FIFO named nemoperf.json would block the launch forever: regular files only (issue 23) */
    json_t *o = np_file_load_json(path, JSON_REJECT_DUPLICATES, &je, &io, &why);
    if (!o) {
        if (io)
            return np_error_set(err, NP_E_IO, path, 0, 0, "cannot read the manifest: %s", why.text);
        return np_error_set(err, NP_E_PARSE, path, je.line, je.column, "corrupt manifest: %s", je.text);
    }
    if (!json_is_object(o)) {
        json_decref(o);
        return np_error_set(err, NP_E_PARSE, path, 1, 1, "corrupt manifest: not a JSON object");
    }
    *out = o;
    return NP_OK;
}

int np_manifest_launcher_alive(const json_t *o)
{
    const json_t *l = json_object_get(o, "launcher");
    const char *host = json_string_value(json_object_get(l, "host"));
    json_int_t pid = json_integer_value(json_object_get(l, "pid"));
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    if (!host || strcmp(host, me) != 0 || pid <= 1 || pid > INT_MAX || (pid_t)pid == getpid())
        return 0;
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%lld/comm", (long long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(comm, sizeof comm, f) != NULL;
    fclose(f);
    return ok && strncmp(comm, "nemoperf-launch", 15) == 0;
}

const char *np_manifest_state(const json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "state"));
    if (s)
        return s;
    return json_is_true(json_object_get(o, "submitted")) ? NP_STATE_SUBMITTED : NP_STATE_NOT_SUBMITTED;
}

char *np_manifest_new_tag(void)
{
    unsigned char r[16];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got < sizeof r) { /* no getrandom: time, pid and a counter are unique enough on one host */
        static unsigned counter;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long v[2] = {(unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec,
                                   ((unsigned long long)getpid() << 32) | counter++};
        memcpy(r, v, sizeof r);
    }
    char *t = malloc(sizeof "nemoperf-" + 2 * sizeof r);
    if (!t)
        return NULL;
    strcpy(t, "nemoperf-");
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(t + 9 + 2 * i, 3, "%02x", r[i]);
    return t;
}

/* "env_user": the variables the job exports that the launcher's environment also sets, to another
 * value: [{"name", "user", "job"}] ("job": what the batch script exports, over the user's value, so
 * the job runs with it).  A name that may hold a credential is recorded without either value. */
static json_t *manifest_env_user(const struct np_manifest *m)
{
    np_env_fn env = m->env ? m->env : np_env_getenv;
    struct np_script_var vars[NP_SCRIPT_MAX_VARS];
    size_t n = np_script_vars(m->config, vars, NP_SCRIPT_MAX_VARS);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        const char *u = env(m->env_ctx, vars[i].name);
        if (!u || !vars[i].value || strcmp(u, vars[i].value) == 0)
            continue;
        json_t *o = json_pack("{s:s}", "name", vars[i].name);
        int bad = !o;
        if (!bad && np_env_secret_name(vars[i].name)) {
            bad = json_object_set_new(o, "secret", json_true());
        } else if (!bad) {
            size_t len = strlen(u);
            if (len > 512) /* a long value is cut, on a character boundary */
                for (len = 512; len && ((unsigned char)u[len] & 0xC0) == 0x80; len--)
                    ;
            json_t *uv = json_stringn(u, len), *jv = json_string(vars[i].value); /* NULL: not UTF-8 */
            bad = json_object_set_new(o, "user", uv ? uv : json_null()) ||
                  json_object_set_new(o, "job", jv ? jv : json_null());
        }
        if (bad)
            json_decref(o);
        if (bad || json_array_append_new(a, o) != 0) { /* append frees o when it fails */
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *np_manifest_json(const struct np_manifest *m)
{
    json_t *cfg = np_launch_config_json(m->config);
    char **names = np_script_env_names(m->config);
    json_t *env = json_array();
    json_t *o = json_object();
    int bad = !cfg || !names || !env || !o;
    for (size_t i = 0; !bad && names[i]; i++)
        bad |= json_array_append_new(env, json_string(names[i]));
    np_strv_free(names);
    char when[32] = "";
    struct tm tm;
    if (gmtime_r(&m->submit_time, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!bad) {
        bad |= json_object_set_new(o, "nemoperf_manifest", json_integer(NP_MANIFEST_FORMAT));
        bad |= json_object_set_new(o, "version", json_string(NP_VERSION));
        bad |= json_object_set_new(o, "config", cfg);
        cfg = NULL;
        const struct np_mbperf_row *mb = m->config->mb;
        if (mb) /* what nemoperf-parse identifies a Megatron-Bridge run by (parse/run.c np_manifest_read) */
            bad |= json_object_set_new(o, "mbridge",
                                       json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:i, s:s}", "recipe", mb->recipe,
                                                 "dtype", np_mb_dtype_name(mb->dtype), "gpu_type", mb->gpu_type,
                                                 "gpus", m->config->gpus, "container", mb->container, "gbs",
                                                 m->config->gbs, "seq_len", mb->seq_len, "task", mb->task));
        /* what the job records about its nodes (job/system.h; parse/system.h reads it) */
        bad |= json_object_set_new(o, "system", np_system_json(m->config));
        if (np_ncclt_is(m->config->model)) { /* nccl-tests runs (job/nccltests.h): the check, its plan, where the
                                               * job lists the steps it ran on which hosts */
            bad |= json_object_set_new(o, "workload", json_string(NP_NCCLT_RECIPE));
            bad |= json_object_set_new(o, "kind", json_string(NP_NCCLT_RECIPE));
            json_t *nt = np_ncclt_json(m->config);
            bad |= !nt || json_object_set_new(o, "nccl_tests", nt);
        } else {
            bad |= json_object_set_new(o, "workload", json_string(np_workload_name(m->config->workload)));
        }
        bad |= json_object_set_new(o, "backend", json_string(m->backend ? m->backend : "cli"));
        if (m->repeats > 1) /* REPEATS=N: which of the N identical jobs (the config is the same for all) */
            bad |= json_object_set_new(o, "repeat", json_pack("{s:i,s:i}", "index", m->repeat, "of", m->repeats));
        const char *state = m->state ? m->state : m->submitted ? NP_STATE_SUBMITTED : NP_STATE_NOT_SUBMITTED;
        bad |= json_object_set_new(o, "state", json_string(state));
        bad |= json_object_set_new(o, "submitted", json_boolean(strcmp(state, NP_STATE_SUBMITTED) == 0));
        bad |= json_object_set_new(o, "tag", m->tag ? json_string(m->tag) : json_null());
        if (strcmp(state, NP_STATE_SUBMITTING) == 0) { /* who is submitting: reconcile leaves a live launch alone */
            char host[256] = "";
            gethostname(host, sizeof host - 1);
            bad |= json_object_set_new(o, "launcher", json_pack("{s:s,s:I}", "host", host, "pid", (json_int_t)getpid()));
        }
        bad |= json_object_set_new(o, "job_id", m->job_id ? json_string(m->job_id) : json_null());
        bad |= json_object_set_new(o, "cluster", m->cluster ? json_string(m->cluster) : json_null());
        if (m->rest_url) /* the URL only: credentials never reach the manifest */
            bad |= json_object_set_new(o, "slurmrestd",
                                       json_pack("{s:s,s:o}", "url", m->rest_url, "api_version",
                                                 m->api_version ? json_string(m->api_version) : json_null()));
        bad |= json_object_set_new(o, "submit_time", json_string(when));
        bad |= json_object_set_new(o, "error", m->error ? json_string(m->error) : json_null());
        bad |= json_object_set_new(o, "env_passed", env);
        env = NULL;
        json_t *eu = manifest_env_user(m);
        bad |= !eu || json_object_set_new(o, "env_user", eu);
        bad |= json_object_set_new(o, "script", m->script ? json_string(m->script) : json_null());
    }
    json_decref(cfg);
    json_decref(env);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

enum np_status np_manifest_write(const struct np_manifest *m, struct np_error *err)
{
    json_t *o = np_manifest_json(m);
    if (!o)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    enum np_status st = np_manifest_store(m->config->experiment_dir, o, m->presize, NULL, err);
    json_decref(o);
    return st;
}
