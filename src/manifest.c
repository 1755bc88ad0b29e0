/* manifest.c - create a launch job's experiment folder and write its manifest.
 *
 * The folder layout is NeMo-Run's ($STAGE_PATH/experiments/<exp>/<exp>_<ts>/<job>/);
 * an existing folder is never reused.  nemoperf.json records the resolved configuration,
 * backend (slurmrestd URL and API version for REST), job id, submit time, the names
 * (never values) of the variables passed to the job, and the scheduler's message after a failure.
 */
#include "nemoperf/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/script.h"
#include "nemoperf/shell.h"

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

enum np_status np_file_write_atomic(const char *dir, const char *name, const char *text, mode_t mode,
                                    struct np_error *err)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
        snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid()) >= (int)sizeof tmp)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "path too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return np_error_set(err, NP_E_IO, tmp, 0, 0, "cannot create: %s", strerror(errno));
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return np_error_set(err, NP_E_IO, tmp, 0, 0, "write failed: %s", strerror(e));
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return np_error_set(err, NP_E_IO, tmp, 0, 0, "write failed: %s", strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot rename %s into place: %s", tmp, strerror(e));
    }
    return NP_OK;
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
        bad |= json_object_set_new(o, "workload", json_string(np_workload_name(m->config->workload)));
        bad |= json_object_set_new(o, "backend", json_string(m->backend ? m->backend : "cli"));
        bad |= json_object_set_new(o, "submitted", json_boolean(m->submitted));
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
    char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!text)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    size_t n = strlen(text);
    char *t2 = realloc(text, n + 2);
    if (!t2) {
        free(text);
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    t2[n] = '\n';
    t2[n + 1] = '\0';
    enum np_status st = np_file_write_atomic(m->config->experiment_dir, NP_MANIFEST_NAME, t2, 0644, err);
    free(t2);
    return st;
}
