/* stage.c - the $STAGE_PATH layout and the atomic, idempotent container import.
 *
 * Creates the folders nemoperf expects under STAGE_PATH and runs
 * `enroot import` (locally with fork/exec, or under srun in a one-node
 * `sbatch --wait` job) into a hidden temporary file that becomes the .sqsh only
 * when the import succeeded; failures, timeouts and cancellation remove it.
 */
#include "nemoperf/setup/stage.h"

#include "nemoperf/slurm/backend.h" /* np_path_search */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/util/text.h"

extern char **environ;

#define STAGE_KILL_GRACE_MS 5000

enum np_status np_stage_check_path(const char *stage, struct np_error *err)
{
    if (!stage || !*stage)
        return np_error_set(err, NP_E_INVALID, "STAGE_PATH", 0, 0,
                            "not set: export STAGE_PATH=/absolute/path/on/a/shared/file/system");
    if (stage[0] != '/')
        return np_error_set(err, NP_E_INVALID, "STAGE_PATH", 0, 0,
                            "'%s' is not an absolute path (it must start with '/')", stage);
    if (strchr(stage, '\n') || strchr(stage, '\r'))
        return np_error_set(err, NP_E_INVALID, "STAGE_PATH", 0, 0,
                            "contains a newline, which Slurm file names cannot carry");
    return np_stage_check_value("STAGE_PATH", stage, err);
}

enum np_status np_stage_check_value(const char *name, const char *value, struct np_error *err)
{
    if (!value)
        return NP_OK;
    long at = np_text_control_at(value);
    if (at >= 0)
        return np_error_set(err, NP_E_INVALID, name, 0, 0,
                            "holds a control character (byte 0x%02x at offset %ld), which no file name, script or "
                            "image reference may carry; allowed: text without control characters; nothing created",
                            (unsigned char)value[at], at);
    size_t n = strlen(value);
    if (n >= PATH_MAX)
        return np_error_set(err, NP_E_INVALID, name, 0, 0,
                            "%zu bytes long; allowed: at most %d (PATH_MAX); nothing created", n, PATH_MAX - 1);
    for (const char *p = value; *p;) {
        size_t k = strcspn(p, "/");
        if (k > NAME_MAX)
            return np_error_set(err, NP_E_INVALID, name, 0, 0,
                                "a component of %zu bytes (at offset %ld); allowed: components of at most %d bytes "
                                "(NAME_MAX); nothing created",
                                k, (long)(p - value), NAME_MAX);
        p += k + (p[k] == '/');
    }
    return NP_OK;
}

/* mkdir one component; 1 created, 0 existed as a folder, -1 error (errno). */
static int stage_mkdir_one(const char *path)
{
    struct stat st;
    if (mkdir(path, 0755) == 0)
        return 1;
    int e = errno;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        errno = ENOTDIR;
        return -1;
    }
    errno = e;
    return -1;
}

/* mkdir -p; *created counts new folders. */
static enum np_status stage_mkdirs_count(const char *path, int *created, struct np_error *err)
{
    size_t n = strlen(path);
    char *buf = malloc(n + 1);
    if (!buf)
        return np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        if (buf[i - 1] == '/')
            continue;
        char saved = buf[i];
        buf[i] = '\0';
        int r = stage_mkdir_one(buf);
        if (r < 0) {
            enum np_status st = np_error_set(err, NP_E_IO, buf, 0, 0, "cannot create folder: %s",
                                             strerror(errno));
            free(buf);
            return st;
        }
        if (r > 0 && created)
            (*created)++;
        buf[i] = saved;
    }
    free(buf);
    return NP_OK;
}

enum np_status np_stage_mkdirs(const char *path, struct np_error *err)
{
    if (!path || !*path)
        return np_error_set(err, NP_E_INVALID, "", 0, 0, "empty folder name");
    return stage_mkdirs_count(path, NULL, err);
}

/* "<a>/<b>" as a new string. */
enum np_status np_stage_make_layout(const char *stage, int *created, struct np_error *err)
{
    enum np_status st = np_stage_check_path(stage, err);
    if (st != NP_OK)
        return st;
    int n = 0;
    const char *subs[] = {NP_STAGE_EXPERIMENTS, NP_STAGE_HF};
    st = stage_mkdirs_count(stage, &n, err);
    for (size_t i = 0; st == NP_OK && i < sizeof subs / sizeof subs[0]; i++) {
        char *p = np_stage_join(stage, subs[i]);
        if (!p)
            return np_error_set(err, NP_E_NOMEM, stage, 0, 0, "out of memory");
        st = stage_mkdirs_count(p, &n, err);
        free(p);
    }
    if (created)
        *created = n;
    return st;
}

int np_stage_free_space(const char *path, double *bytes)
{
    struct statvfs sv;
    if (statvfs(path, &sv) != 0)
        return -1;
    *bytes = (double)sv.f_bavail * (double)sv.f_frsize;
    return 0;
}

static int stage_is_exec(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}


static char *stage_docker_uri(const char *image)
{
    if (strncmp(image, "docker://", 9) == 0)
        return strdup(image);
    size_t n = strlen(image);
    char *s = malloc(n + 10);
    if (s)
        snprintf(s, n + 10, "docker://%s", image);
    return s;
}

void np_stage_job_head(struct np_strv *a, const char *sbatch_prog, int exclusive, const char *time,
                       const char *job_name, const char *account, const char *partition, const char *log_dir,
                       const char *log)
{
    char *prog = np_path_search(sbatch_prog ? sbatch_prog : "sbatch", getenv("PATH"));
    np_strv_push(a, prog ? prog : (sbatch_prog ? sbatch_prog : "sbatch"));
    free(prog);
    np_strv_push(a, "--wait");
    np_strv_push(a, "--parsable");
    np_strv_push(a, "--nodes=1");
    np_strv_push(a, "--ntasks=1");
    if (exclusive)
        np_strv_push(a, "--exclusive");
    np_strv_pushf(a, "--time=%s", time);
    np_strv_pushf(a, "--job-name=%s", job_name);
    if (account)
        np_strv_pushf(a, "--account=%s", account);
    if (partition)
        np_strv_pushf(a, "--partition=%s", partition);
    /* --error too: a user's SBATCH_ERROR would otherwise move the job's errors away from the log the
     * failure message names */
    char *esc = np_slurm_pattern_escape(log_dir);
    if (!esc)
        a->failed = 1;
    np_strv_pushf(a, "--output=%s/%s_%%j.out", esc ? esc : "", log);
    np_strv_pushf(a, "--error=%s/%s_%%j.out", esc ? esc : "", log);
    free(esc);
}

char **np_stage_job_wrap(struct np_strv *a, struct np_buf *b)
{
    char *script = np_buf_steal(b);
    if (script)
        np_strv_pushf(a, "--wrap=%s", script);
    else
        a->failed = 1;
    free(script);
    return np_strv_steal(a);
}

char **np_stage_import_argv(const char *image, const char *out_path, const struct np_import_opts *o)
{
    static const struct np_import_opts none;
    if (!o)
        o = &none;
    struct np_strv a = {0};
    char *uri = stage_docker_uri(image);
    if (!uri)
        return NULL;
    if (!o->sbatch) {
        char *prog = np_path_search(o->enroot ? o->enroot : "enroot", getenv("PATH"));
        np_strv_push(&a, prog ? prog : (o->enroot ? o->enroot : "enroot"));
        free(prog);
        np_strv_push(&a, "import");
        np_strv_push(&a, "--output");
        np_strv_push(&a, out_path);
        np_strv_push(&a, uri);
        free(uri);
        return np_strv_steal(&a);
    }
    /* output file: <log_dir or sqsh folder>/setup-import_%j.out (a Slurm pattern) */
    char *dir = NULL;
    if (o->log_dir) {
        dir = strdup(o->log_dir);
    } else {
        dir = strdup(out_path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
    }
    if (!dir)
        a.failed = 1;
    np_stage_job_head(&a, o->sbatch_prog, 0, NP_STAGE_SBATCH_TIME, "nemoperf-setup", o->account, o->partition,
                      dir ? dir : "", "setup-import");
    free(dir);
    /* the job's script: srun enroot import --output '<tmp>' 'docker://<image>' */
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "srun --nodes=1 --ntasks=1 ");
    np_buf_append_shq(&b, o->enroot ? o->enroot : "enroot");
    np_buf_append(&b, " import --output ");
    np_buf_append_shq(&b, out_path);
    np_buf_append(&b, " ");
    np_buf_append_shq(&b, uri);
    free(uri);
    return np_stage_job_wrap(&a, &b);
}

/* 1 when the environment entry e ("NAME=value") must not reach the child. */
static int stage_env_dropped(const char *e, int sbatch)
{
    static const char *const secret[] = {"HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN=", "HF_HUB_TOKEN=", NULL};
    for (size_t i = 0; secret[i]; i++)
        if (strncmp(e, secret[i], strlen(secret[i])) == 0)
            return 1;
    if (sbatch) {
        /* the user's SBATCH_* reach sbatch as with launch (slurm_cli.c); the options of
         * np_stage_import_argv and np_ftprep_job_argv win over them (sbatch's precedence).
         * An empty one means unset here (setup_env), while sbatch takes "" as a value and
         * refuses it (SBATCH_PARTITION=: "invalid partition specified"). */
        if (strncmp(e, "SBATCH_", 7) == 0) {
            const char *eq = strchr(e, '=');
            return !eq || !eq[1];
        }
        if (strncmp(e, "SLURM_CONF=", 11) == 0)
            return 0;
        /* an enclosing allocation's variables would size or place the new job */
        if (strncmp(e, "SLURM_", 6) == 0 || strncmp(e, "SRUN_", 5) == 0)
            return 1;
    }
    return 0;
}

/* The child's environment: borrowed strings of environ, new array (caller frees). */
static char **stage_child_env(int sbatch)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **v = malloc((n + 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (!stage_env_dropped(*e, sbatch))
            v[k++] = *e;
    v[k] = NULL;
    return v;
}

static long long stage_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Remove "<dir>/.<name>.importing.<host>.<pid>" files left by dead imports of this host. */
static void stage_remove_stale(const char *dir, const char *name, const char *host)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t plen = strlen(name) + 12;
    char *prefix = malloc(plen + 1);
    if (!prefix) {
        closedir(d);
        return;
    }
    snprintf(prefix, plen + 1, ".%s.importing.", name);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, prefix, plen) != 0)
            continue;
        const char *rest = de->d_name + plen;
        const char *dot = strrchr(rest, '.');
        if (!dot || (size_t)(dot - rest) != strlen(host) || strncmp(rest, host, strlen(host)) != 0)
            continue;
        char *end;
        long pid = strtol(dot + 1, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* still running (or not ours to judge) */
        char *p = np_stage_join(dir, de->d_name);
        if (p && unlink(p) == 0)
            np_notef("removed %s left by an interrupted import", p);
        free(p);
    }
    free(prefix);
    closedir(d);
}

/* Start argv with environment envp in its own process group, stdout to
 * out_fd (or stderr when -1).  Returns the pid or -1 (errno). */
static pid_t stage_spawn(char **argv, char **envp, int out_fd, int close_fd)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (close_fd >= 0)
        close(close_fd);
    int fd = open("/dev/null", O_RDONLY);
    if (fd >= 0 && fd != 0) {
        dup2(fd, 0);
        close(fd);
    }
    dup2(out_fd >= 0 ? out_fd : 2, 1);
    if (out_fd > 2)
        close(out_fd);
    execve(argv[0], argv, envp);
    _exit(127);
}

/* Stop the child's process group: SIGTERM, then SIGKILL after the grace period. */
static int stage_stop(pid_t pid)
{
    int status = 0;
    kill(-pid, SIGTERM);
    kill(pid, SIGTERM);
    long long until = stage_now_ms() + STAGE_KILL_GRACE_MS;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        if (stage_now_ms() > until) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL); /* stragglers of the group (sleep, curl...) */
    return status;
}

/* scancel <jobid>, found beside sbatch or on PATH; best effort. */
static void stage_scancel(const char *sbatch, const char *jobid)
{
    char *prog = NULL;
    const char *slash = strrchr(sbatch, '/');
    if (slash) {
        size_t n = (size_t)(slash - sbatch);
        prog = malloc(n + sizeof "/scancel");
        if (prog)
            snprintf(prog, n + sizeof "/scancel", "%.*s/scancel", (int)n, sbatch);
        if (prog && !stage_is_exec(prog)) {
            free(prog);
            prog = NULL;
        }
    }
    if (!prog)
        prog = np_path_search("scancel", getenv("PATH"));
    if (!prog)
        return;
    char *argv[] = {prog, (char *)jobid, NULL};
    char **envp = stage_child_env(1);
    pid_t pid = envp ? stage_spawn(argv, envp, -1, -1) : -1;
    if (pid > 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    free(envp);
    free(prog);
}

enum np_status np_stage_run(char **argv, int sbatch, volatile sig_atomic_t *cancel, unsigned timeout_s, char *jobid,
                            size_t jobid_size, int *wstatus, int *stopped, struct np_error *err)
{
    char **envp = stage_child_env(sbatch);
    if (!envp)
        return np_error_set(err, NP_E_NOMEM, argv[0], 0, 0, "out of memory");
    const char *tool = argv[0];

    int pfd[2] = {-1, -1};
    if (sbatch && pipe(pfd) != 0) {
        free(envp);
        return np_error_set(err, NP_E_IO, tool, 0, 0, "pipe: %s", strerror(errno));
    }
    pid_t pid = stage_spawn(argv, envp, pfd[1], pfd[0]);
    int spawn_errno = errno;
    if (pfd[1] >= 0)
        close(pfd[1]);
    free(envp);
    if (pid < 0) {
        if (pfd[0] >= 0)
            close(pfd[0]);
        return np_error_set(err, NP_E_IO, argv[0], 0, 0, "cannot start: %s", strerror(spawn_errno));
    }
    setpgid(pid, pid); /* also from the parent: no race with an early kill(-pid) */

    char out[256] = "";
    size_t outlen = 0;
    int status = 0;
    *stopped = 0; /* 1 cancelled, 2 timed out */
    long long start = stage_now_ms();
    for (;;) {
        if (pfd[0] >= 0) {
            struct pollfd p = {pfd[0], POLLIN, 0};
            if (poll(&p, 1, 100) > 0) {
                char chunk[256];
                ssize_t r = read(pfd[0], chunk, sizeof chunk);
                if (r > 0) {
                    size_t k = (size_t)r < sizeof out - 1 - outlen ? (size_t)r : sizeof out - 1 - outlen;
                    memcpy(out + outlen, chunk, k);
                    outlen += k;
                    out[outlen] = '\0';
                } else if (r == 0) {
                    close(pfd[0]);
                    pfd[0] = -1;
                }
            }
        } else {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            status = 0x7f00;
            break;
        }
        if (cancel && *cancel)
            *stopped = 1;
        else if (timeout_s && stage_now_ms() - start > (long long)timeout_s * 1000)
            *stopped = 2;
        if (*stopped) {
            char id[64] = "";
            sscanf(out, "%63[0-9]", id);
            status = stage_stop(pid);
            if (sbatch && id[0])
                stage_scancel(argv[0], id);
            break;
        }
    }
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (jobid && jobid_size) { /* sbatch --parsable: "<id>[;cluster]" */
        size_t k = 0;
        for (; k + 1 < jobid_size && out[k] >= '0' && out[k] <= '9'; k++)
            jobid[k] = out[k];
        jobid[k] = '\0';
    }
    *wstatus = status;
    return NP_OK;
}

void np_stage_wait_text(int status, char *buf, size_t size)
{
    if (WIFSIGNALED(status))
        snprintf(buf, size, "was killed by signal %d", WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(buf, size, "could not be run (exit 127)");
    else
        snprintf(buf, size, "exited with status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

enum np_status np_stage_import(const char *image, const char *sqsh, const struct np_import_opts *o,
                               enum np_import_outcome *outcome, struct np_error *err)
{
    static const struct np_import_opts none;
    if (!o)
        o = &none;
    if (outcome)
        *outcome = NP_IMPORT_IMPORTED;
    if (!image || !*image)
        return np_error_set(err, NP_E_INVALID, "", 0, 0, "no container image to import");
    if (!sqsh || sqsh[0] != '/')
        return np_error_set(err, NP_E_INVALID, sqsh ? sqsh : "", 0, 0, "the .sqsh path must be absolute");

    struct stat st;
    if (stat(sqsh, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return np_error_set(err, NP_E_IO, sqsh, 0, 0, "exists and is not a regular file");
        if (st.st_size > 0) {
            if (outcome)
                *outcome = NP_IMPORT_KEPT;
            return NP_OK;
        }
        if (unlink(sqsh) != 0)
            return np_error_set(err, NP_E_IO, sqsh, 0, 0, "cannot remove the empty file: %s",
                                strerror(errno));
        np_notef("%s: removed an empty file left by an earlier failure", sqsh);
    }

    const char *tool = o->sbatch ? (o->sbatch_prog ? o->sbatch_prog : "sbatch")
                                 : (o->enroot ? o->enroot : "enroot");
    char *prog = np_path_search(tool, getenv("PATH"));
    if (!prog)
        return np_error_set(err, NP_E_NOTFOUND, tool, 0, 0,
                            o->sbatch ? "not found on PATH: --sbatch needs Slurm's sbatch"
                                      : "not found on PATH: enroot is needed to import %s "
                                        "(install enroot, import on a compute node with --sbatch, "
                                        "or skip the image with --skip-image)",
                            image);
    free(prog);

    /* temporary name in the same folder */
    const char *slash = strrchr(sqsh, '/');
    size_t dlen = slash == sqsh ? 1 : (size_t)(slash - sqsh);
    char dir[4096], host[256] = "localhost", tmp[4608];
    if (dlen >= sizeof dir)
        return np_error_set(err, NP_E_INVALID, sqsh, 0, 0, "path too long");
    memcpy(dir, sqsh, dlen);
    dir[dlen] = '\0';
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    for (char *h = host; *h; h++)
        if (*h == '/')
            *h = '_';
    const char *name = slash + 1;
    snprintf(tmp, sizeof tmp, "%s%s.%s.importing.%s.%ld", dir, dlen == 1 ? "" : "/", name, host,
             (long)getpid());
    enum np_status rst = np_stage_mkdirs(dir, err);
    if (rst != NP_OK)
        return rst;
    stage_remove_stale(dir, name, host);
    unlink(tmp);

    if (o->sbatch) {
        rst = np_stage_mkdirs(o->log_dir ? o->log_dir : dir, err);
        if (rst != NP_OK)
            return rst;
    }
    char **argv = np_stage_import_argv(image, tmp, o);
    if (!argv)
        return np_error_set(err, NP_E_NOMEM, sqsh, 0, 0, "out of memory");
    if (o->sbatch)
        np_notef("submitting a one-node job to import %s into %s", image, sqsh);
    else
        np_notef("importing %s into %s", image, sqsh);
    int status = 0, stopped = 0;
    char jobid[64] = "";
    rst = np_stage_run(argv, o->sbatch, o->cancel, o->timeout_s, jobid, sizeof jobid, &status, &stopped, err);
    if (rst != NP_OK) {
        np_strv_free(argv);
        return rst;
    }
    if (stopped) {
        unlink(tmp);
        rst = np_error_set(err, NP_E_IO, sqsh, 0, 0, "import %s%s%s%s; the temporary file was removed",
                           stopped == 1 ? "interrupted" : "timed out", jobid[0] ? " (job " : "",
                           jobid, jobid[0] ? " cancelled)" : "");
        np_strv_free(argv);
        return rst;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        unlink(tmp);
        char how[64];
        np_stage_wait_text(status, how, sizeof how);
        if (o->sbatch)
            rst = np_error_set(err, NP_E_IO, sqsh, 0, 0,
                               "import job%s%s failed: sbatch %s (see %s/setup-import_%s.out)",
                               jobid[0] ? " " : "", jobid, how, o->log_dir ? o->log_dir : dir,
                               jobid[0] ? jobid : "<jobid>");
        else
            rst = np_error_set(err, NP_E_IO, sqsh, 0, 0, "enroot import of %s failed: %s %s", image,
                               argv[0], how);
        np_strv_free(argv);
        return rst;
    }
    np_strv_free(argv);
    if (stat(tmp, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        unlink(tmp);
        return np_error_set(err, NP_E_IO, sqsh, 0, 0,
                            "the import reported success but wrote no image (%s missing or empty)", tmp);
    }
    if (rename(tmp, sqsh) != 0) {
        int e = errno;
        unlink(tmp);
        return np_error_set(err, NP_E_IO, sqsh, 0, 0, "cannot rename the imported image: %s", strerror(e));
    }
    return NP_OK;
}
