/* slurm_cli.c - the sbatch command-line backend of np_backend (and squeue for --wait).
 *
 * Runs `sbatch --parsable <script>` (and `squeue`, once per poll for every job of a
 * launch) with fork/execve, never a shell, output captured through pipes, in its own
 * process group killed after the timeout.  Inherited SLURM_* variables are dropped
 * (SLURM_CONF kept): a launch from inside a job does not inherit its settings; the
 * user's SBATCH_* settings reach sbatch unchanged, as with the originals.
 */
#include "nemoperf/slurm/backend.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CLI_OUT_MAX 65536                 /* what a command's output starts with room for */
#define CLI_OUT_LIMIT ((size_t)64 << 20)  /* and grows to: more is an error, never a silently cut answer */

struct cli_impl {
    char *sbatch;    /* resolved path */
    char *squeue;    /* resolved path, or NULL (then query() fails) */
    int timeout_s;
    char **envp;     /* filtered; strings borrowed from the caller's envp */
};

void np_submit_result_free(struct np_submit_result *r)
{
    if (!r)
        return;
    free(r->job_id);
    free(r->cluster);
    free(r->message);
    memset(r, 0, sizeof *r);
}

void np_job_list_free(struct np_job_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->jobs[i].job_id);
        free(l->jobs[i].state);
        free(l->jobs[i].reason);
    }
    free(l->jobs);
    l->jobs = NULL;
    l->n = 0;
}

int np_job_list_add(struct np_job_list *l, const char *id, const char *state, const char *reason)
{
    struct np_job_info *j = realloc(l->jobs, (l->n + 1) * sizeof *j);
    if (!j)
        return -1;
    l->jobs = j;
    struct np_job_info *e = &l->jobs[l->n];
    e->job_id = strdup(id);
    e->state = strdup(state);
    e->reason = reason ? strdup(reason) : NULL;
    if (!e->job_id || !e->state || (reason && !e->reason)) {
        free(e->job_id);
        free(e->state);
        free(e->reason);
        return -1;
    }
    l->n++;
    return 0;
}

void np_backend_free(struct np_backend *b)
{
    if (b && b->free)
        b->free(b);
}

char *np_path_search(const char *prog, const char *path)
{
    if (!prog || !*prog)
        return NULL;
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    const char *p = path;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        size_t len = (n ? n : 1) + strlen(prog) + 2;
        char *cand = malloc(len);
        if (!cand)
            return NULL;
        snprintf(cand, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        if (!end)
            return NULL;
        p = end + 1;
    }
}

char **np_slurm_child_env(char *const *envp)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    char **out = calloc(n + 1, sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = envp[i];
        /* SBATCH_* are the user's settings: sbatch reads them as the originals' sbatch did;
         * an empty one is unset for config.c, while sbatch takes "" as a value and refuses it
         * (SBATCH_PARTITION=: "invalid partition specified") */
        if (strncmp(e, "SLURM_", 6) == 0 && strncmp(e, "SLURM_CONF=", 11) != 0)
            continue;
        if (strncmp(e, "SBATCH_", 7) == 0 && (!strchr(e, '=') || !strchr(e, '=')[1]))
            continue;
        /* no Hugging Face token: sbatch --export=ALL would hand it to slurmctld, which keeps a
         * job's environment on its disk; every job reads what ./setup staged (issue 23) */
        if (strncmp(e, "HF_TOKEN=", 9) == 0 || strncmp(e, "HUGGING_FACE_HUB_TOKEN=", 23) == 0)
            continue;
        out[k++] = envp[i];
    }
    out[k] = NULL;
    return out;
}

/* Copy s without leading/trailing white space (new string). */
static char *cli_trim(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return strndup(s, n);
}

int np_slurm_parse_parsable(const char *out, char **job_id, char **cluster)
{
    *job_id = *cluster = NULL;
    char *t = cli_trim(out ? out : "");
    if (!t)
        return -1;
    char *semi = strchr(t, ';');
    if (semi)
        *semi = '\0';
    int ok = *t != '\0';
    for (const char *p = t; *p; p++)
        ok &= isdigit((unsigned char)*p) != 0;
    if (semi)
        for (const char *p = semi + 1; *p; p++)
            ok &= isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.';
    if (ok) {
        *job_id = strdup(t);
        *cluster = semi && semi[1] ? strdup(semi + 1) : NULL;
        if (!*job_id || (semi && semi[1] && !*cluster)) {
            free(*job_id);
            free(*cluster);
            *job_id = *cluster = NULL;
            ok = 0;
        }
    }
    free(t);
    return ok ? 0 : -1;
}

static double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read what is available from fd into buf (bounded); returns 0 at EOF, 1 otherwise. */
/* A command's output as it grows (squeue's answer for a user with thousands of jobs is megabytes: a cut answer
 * once hid the job a tag search looked for, so a submitted job was recorded "not submitted"). */
struct cli_buf {
    char *b;
    size_t len, cap;
    int over; /* more than CLI_OUT_LIMIT: the rest read and dropped */
};

static int cli_drain(int fd, struct cli_buf *o)
{
    char tmp[4096];
    ssize_t r = read(fd, tmp, sizeof tmp);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (r == 0)
        return 0;
    if (o->len + (size_t)r + 1 > o->cap && !o->over) {
        size_t cap = o->cap;
        while (cap < o->len + (size_t)r + 1 && cap < CLI_OUT_LIMIT)
            cap *= 2;
        char *nb = cap >= o->len + (size_t)r + 1 ? realloc(o->b, cap) : NULL;
        if (nb) {
            o->b = nb;
            o->cap = cap;
        } else {
            o->over = 1;
        }
    }
    if (o->over)
        return 1;
    memcpy(o->b + o->len, tmp, (size_t)r);
    o->len += (size_t)r;
    o->b[o->len] = '\0';
    return 1;
}

/* Run argv[0] (a resolved path) with im's environment in workdir (NULL: ours),
 * stdin from /dev/null, capturing stdout and stderr (each bounded) until it
 * exits or im->timeout_s passes (then its process group is killed).  NP_OK with
 * new strings in *out and *errout (caller frees) and the wait status in *status,
 * *timed_out set; NP_E_IO/NP_E_NOMEM (err filled) when it could not be run. */
static enum np_status cli_run(const struct cli_impl *im, char *const argv[], const char *workdir, char **outp,
                              char **errout, int *status_out, int *timed_out_out, struct np_error *err)
{
    *outp = *errout = NULL;
    *status_out = 0;
    *timed_out_out = 0;
    const char *what = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int out[2] = {-1, -1}, errp[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        int e = errno;
        if (out[0] >= 0) {
            close(out[0]);
            close(out[1]);
        }
        return np_error_set(err, NP_E_IO, what, 0, 0, "cannot create pipes: %s", strerror(e));
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(out[0]);
        close(out[1]);
        close(errp[0]);
        close(errp[1]);
        return np_error_set(err, NP_E_IO, what, 0, 0, "cannot fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(out[1], 1);
        dup2(errp[1], 2);
        if (workdir && chdir(workdir) != 0) {
            dprintf(2, "cannot change to %s: %s\n", workdir, strerror(errno));
            _exit(126);
        }
        execve(argv[0], argv, im->envp);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also in the parent: no race with kill(-pid) */
    close(out[1]);
    close(errp[1]);
    struct cli_buf ob = {malloc(CLI_OUT_MAX), 0, CLI_OUT_MAX, 0}, eb = {malloc(CLI_OUT_MAX), 0, CLI_OUT_MAX, 0};
    char *obuf = ob.b, *ebuf = eb.b;
    if (obuf)
        obuf[0] = '\0';
    if (ebuf)
        ebuf[0] = '\0';
    int oopen = 1, eopen = 1, exited = 0, status = 0, timed_out = 0;
    double deadline = cli_now() + im->timeout_s, exit_at = 0;
    while (obuf && ebuf) {
        if (!exited) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                exited = 1;
                exit_at = cli_now();
            }
        }
        if (exited && ((!oopen && !eopen) || cli_now() - exit_at > 1.0))
            break; /* done, or a leftover child holds the pipes: stop reading */
        if (!exited && cli_now() > deadline) {
            timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            exited = 1;
            break;
        }
        struct pollfd pf[2];
        int np = 0;
        if (oopen)
            pf[np++] = (struct pollfd){.fd = out[0], .events = POLLIN};
        if (eopen)
            pf[np++] = (struct pollfd){.fd = errp[0], .events = POLLIN};
        if (np == 0) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        int r = poll(pf, (nfds_t)np, 100);
        if (r < 0 && errno != EINTR)
            break;
        for (int i = 0; r > 0 && i < np; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (pf[i].fd == out[0])
                oopen = cli_drain(out[0], &ob);
            else
                eopen = cli_drain(errp[0], &eb);
            obuf = ob.b;
            ebuf = eb.b;
        }
    }
    if (!exited) { /* allocation failure above: do not leave a zombie */
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
    } else if (!timed_out && (oopen || eopen)) {
        kill(-pid, SIGKILL); /* a leftover of the child's group still holds the pipes */
    }
    close(out[0]);
    close(errp[0]);
    if (!obuf || !ebuf) {
        free(obuf);
        free(ebuf);
        return np_error_set(err, NP_E_NOMEM, what, 0, 0, "out of memory");
    }
    if (ob.over) { /* never a part of the answer read as the whole */
        free(obuf);
        free(ebuf);
        return np_error_set(err, NP_E_SLURM, what, 0, 0, "answered more than %zu MiB: not read", CLI_OUT_LIMIT >> 20);
    }
    *outp = obuf;
    *errout = ebuf;
    *status_out = status;
    *timed_out_out = timed_out;
    return NP_OK;
}

static enum np_status cli_submit(struct np_backend *b, const struct np_submit_request *req,
                                 struct np_submit_result *res, struct np_error *err)
{
    struct cli_impl *im = b->impl;
    memset(res, 0, sizeof *res);
    /* the tag as the job's comment: find() looks for it when the outcome is unknown */
    char *comment = NULL;
    if (req->tag && asprintf(&comment, "--comment=%s", req->tag) < 0)
        comment = NULL;
    if (req->tag && !comment) {
        res->outcome = NP_SUBMIT_REFUSED;
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    char *const argv[] = {im->sbatch, (char *)"--parsable", comment ? comment : (char *)req->script_path,
                          comment ? (char *)req->script_path : NULL, NULL};
    char *obuf = NULL, *ebuf = NULL;
    int status = 0, timed_out = 0;
    enum np_status st = cli_run(im, argv, req->workdir, &obuf, &ebuf, &status, &timed_out, err);
    free(comment);
    res->outcome = NP_SUBMIT_REFUSED; /* sbatch could not even be started */
    if (st != NP_OK)
        return st;
    res->outcome = NP_SUBMIT_ACCEPTED;
    char *msg = cli_trim(ebuf);
    free(ebuf);
    res->message = msg && *msg ? msg : NULL;
    if (msg && !*msg)
        free(msg);
    if (timed_out) {
        st = np_error_set(err, NP_E_SLURM, im->sbatch, 0, 0,
                          "no answer within %d s; killed it (is slurmctld reachable? check SLURM_CONF and `sinfo`)",
                          im->timeout_s);
        char m[CLI_OUT_MAX / 16];
        snprintf(m, sizeof m, "sbatch timed out after %d s and was killed%s%.3000s", im->timeout_s,
                 res->message ? "; it had printed: " : "", res->message ? res->message : "");
        free(res->message);
        res->message = strdup(m);
        res->outcome = NP_SUBMIT_UNKNOWN;
    } else if (WIFSIGNALED(status)) {
        st = np_error_set(err, NP_E_SLURM, im->sbatch, 0, 0, "killed by signal %d%s%s", WTERMSIG(status),
                          res->message ? ": " : "", res->message ? res->message : "");
        res->outcome = NP_SUBMIT_UNKNOWN;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        res->outcome = np_slurm_cli_ambiguous(res->message) ? NP_SUBMIT_UNKNOWN : NP_SUBMIT_REFUSED;
        st = np_error_set(err, NP_E_SLURM, im->sbatch, 0, 0, "failed (exit %d)%s%s", WEXITSTATUS(status),
                          res->message ? ": " : "", res->message ? res->message : "");
        if (!res->message) {
            char m[64];
            snprintf(m, sizeof m, "sbatch exited with status %d", WEXITSTATUS(status));
            res->message = strdup(m);
        }
    } else if (np_slurm_parse_parsable(obuf, &res->job_id, &res->cluster) != 0) {
        char *o = cli_trim(obuf);
        st = np_error_set(err, NP_E_SLURM, im->sbatch, 0, 0, "printed no job id (expected \"jobid[;cluster]\"): \"%.200s\"",
                          o ? o : "");
        free(res->message);
        struct np_error tmp;
        np_error_set(&tmp, NP_E_SLURM, "", 0, 0, "sbatch printed no job id: \"%.300s\"", o ? o : "");
        res->message = strdup(tmp.text);
        free(o);
        res->outcome = NP_SUBMIT_UNKNOWN; /* it exited 0: the job may well exist */
    }
    free(obuf);
    return st;
}

int np_slurm_parse_squeue(const char *text, struct np_job_list *out)
{
    const char *p = text ? text : "";
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, n);
        if (!line)
            return -1;
        char *bar1 = strchr(line, '|');
        char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
        if (bar1) {
            *bar1 = '\0';
            if (bar2)
                *bar2 = '\0';
            char *id = cli_trim(line), *state = cli_trim(bar1 + 1), *reason = bar2 ? cli_trim(bar2 + 1) : NULL;
            int ok = id && state && (!bar2 || reason);
            int valid = ok && *id && *state;
            for (const char *q = id; valid && *q; q++)
                valid = isdigit((unsigned char)*q) || *q == '_' || *q == '+';
            int rc = ok ? 0 : -1;
            if (valid)
                rc = np_job_list_add(out, id, state,
                                     reason && *reason && strcmp(reason, "None") != 0 ? reason : NULL);
            free(id);
            free(state);
            free(reason);
            if (rc != 0) {
                free(line);
                return -1;
            }
        }
        free(line);
        p += n;
        if (*p == '\n')
            p++;
    }
    return 0;
}

int np_slurm_cli_ambiguous(const char *message)
{
    /* Slurm's words (slurm_strerror) for a request sent without a reply seen */
    static const char *const words[] = {"Socket timed out", "Zero Bytes were transmitted",
                                        "Communication send failure", "Communication receive failure",
                                        "Connection reset", "Broken pipe", NULL};
    for (size_t i = 0; message && words[i]; i++)
        if (strstr(message, words[i]))
            return 1;
    return 0;
}

int np_slurm_parse_squeue_tagged(const char *text, const char *tag, struct np_job_list *out)
{
    struct np_job_list all = {0};
    if (np_slurm_parse_squeue(text, &all) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < all.n; i++)
        if (tag && all.jobs[i].reason && strcmp(all.jobs[i].reason, tag) == 0)
            rc = np_job_list_add(out, all.jobs[i].job_id, all.jobs[i].state, NULL);
    np_job_list_free(&all);
    return rc;
}

/* Run squeue (argv: "-o %i|%T|%r" by ids when tag is NULL, "%i|%T|%k" with tag) and read its lines into out:
 * every job, or those whose comment is tag.  By ids, an id unknown to the controller ("Invalid job id
 * specified", exit 1) is absent, not an error.  On error out is emptied. */
static enum np_status cli_squeue(const struct cli_impl *im, char *const argv[], const char *tag,
                                 struct np_job_list *out, struct np_error *err)
{
    char *obuf = NULL, *ebuf = NULL;
    int status = 0, timed_out = 0;
    enum np_status st = cli_run(im, argv, NULL, &obuf, &ebuf, &status, &timed_out, err);
    if (st != NP_OK)
        return st;
    char *msg = cli_trim(ebuf);
    if (timed_out) {
        st = np_error_set(err, NP_E_SLURM, im->squeue, 0, 0, "no answer within %d s; killed it", im->timeout_s);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (!(!tag && WIFEXITED(status) && msg && strstr(msg, "Invalid job id")))
            st = np_error_set(err, NP_E_SLURM, im->squeue, 0, 0, "failed (exit %d)%s%.300s",
                              WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg && *msg ? ": " : "", msg ? msg : "");
    } else if ((tag ? np_slurm_parse_squeue_tagged(obuf, tag, out) : np_slurm_parse_squeue(obuf, out)) != 0) {
        st = np_error_set(err, NP_E_NOMEM, im->squeue, 0, 0, "out of memory");
    }
    if (st != NP_OK)
        np_job_list_free(out);
    free(msg);
    free(obuf);
    free(ebuf);
    return st;
}

/* squeue -h -t all -j ID,ID,... -o %i|%T|%r: one process for every job of a launch. */
static enum np_status cli_query(struct np_backend *b, char *const *ids, size_t n, struct np_job_list *out,
                                struct np_error *err)
{
    struct cli_impl *im = b->impl;
    memset(out, 0, sizeof *out);
    if (n == 0)
        return NP_OK;
    if (!im->squeue)
        return np_error_set(err, NP_E_INVALID, "squeue", 0, 0,
                            "not found next to sbatch or on PATH; cannot follow the jobs (install the Slurm client tools)");
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(ids[i]) + 1;
    char *list = malloc(len);
    if (!list)
        return np_error_set(err, NP_E_NOMEM, "squeue", 0, 0, "out of memory");
    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(list, ",");
        strcat(list, ids[i]);
    }
    char *const argv[] = {im->squeue, (char *)"-h", (char *)"-t", (char *)"all", (char *)"-j", list,
                          (char *)"-o", (char *)"%i|%T|%r", NULL};
    enum np_status st = cli_squeue(im, argv, NULL, out, err);
    free(list);
    return st;
}

/* squeue -h -t all --me -o %i|%T|%k: this user's jobs, kept when their comment is tag.  Not by
 * name: SBATCH_JOB_NAME (or a user's scontrol update) renames a job, its tag stays (issue 23). */
static enum np_status cli_find(struct np_backend *b, const char *tag, const char *job_name, struct np_job_list *out,
                               struct np_error *err)
{
    struct cli_impl *im = b->impl;
    memset(out, 0, sizeof *out);
    if (!im->squeue)
        return np_error_set(err, NP_E_INVALID, "squeue", 0, 0,
                            "not found next to sbatch or on PATH; cannot look for the job (install the Slurm client "
                            "tools)");
    (void)job_name;
    char *const argv[] = {im->squeue, (char *)"-h", (char *)"-t", (char *)"all", (char *)"--me", (char *)"-o",
                          (char *)"%i|%T|%k", NULL};
    return cli_squeue(im, argv, tag, out, err);
}

/* A Slurm client program from sbatch's folder (the same installation), else PATH; new string or NULL. */
static char *cli_sibling(const struct cli_impl *im, const char *prog)
{
    const char *slash = strrchr(im->sbatch, '/');
    if (slash) {
        size_t dl = (size_t)(slash - im->sbatch), n = dl + strlen(prog) + 2;
        char *cand = malloc(n);
        if (cand) {
            snprintf(cand, n, "%.*s/%s", (int)dl, im->sbatch, prog);
            if (access(cand, X_OK) == 0)
                return cand;
            free(cand);
        }
    }
    return np_path_search(prog, getenv("PATH"));
}

enum np_status np_slurm_cli_test_only(struct np_backend *b, const char *script_path, char **message,
                                      struct np_error *err)
{
    /* what sbatch/slurmctld say when a request can never be satisfied (slurm_errno.h texts) */
    static const char *const never[] = {"Requested node configuration is not available",
                                        "Node count specification invalid",
                                        "More processors requested than permitted",
                                        "Requested partition configuration not available",
                                        "Invalid partition name specified",
                                        "Invalid generic resource (gres) specification",
                                        "Invalid Trackable RESource (TRES) specification",
                                        "Memory required by task is not available",
                                        "Requested time limit is invalid",
                                        /* the user's SBATCH_* settings Slurm can never accept (issue 23) */
                                        "Invalid feature specification",
                                        "Invalid account or account/partition combination specified",
                                        "Invalid qos specification",
                                        "Invalid wckey specification",
                                        NULL};
    struct cli_impl *im = b->impl;
    *message = NULL;
    char *const argv[] = {im->sbatch, (char *)"--test-only", (char *)script_path, NULL};
    char *obuf = NULL, *ebuf = NULL;
    int status = 0, timed_out = 0;
    enum np_status st = cli_run(im, argv, NULL, &obuf, &ebuf, &status, &timed_out, err);
    if (st != NP_OK)
        return NP_E_SLURM;
    char *msg = cli_trim(ebuf);
    free(obuf);
    free(ebuf);
    if (timed_out) {
        free(msg);
        return np_error_set(err, NP_E_SLURM, im->sbatch, 0, 0, "--test-only: no answer within %d s", im->timeout_s);
    }
    *message = msg;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return NP_OK;
    for (size_t i = 0; msg && never[i]; i++)
        if (strstr(msg, never[i]))
            return np_error_set(err, NP_E_INVALID, im->sbatch, 0, 0, "--test-only: %s", never[i]);
    return np_error_set(err, NP_E_SLURM, im->sbatch, 0, 0, "--test-only failed: %.300s", msg ? msg : "no message");
}

enum np_status np_slurm_cli_test_only_text(struct np_backend *b, const char *script, char **message,
                                           struct np_error *err)
{
    *message = NULL;
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/nemoperf-test-only.XXXXXX", tmpdir);
    int fd = mkstemp(path);
    size_t n = strlen(script);
    int ok = fd >= 0 && write(fd, script, n) == (ssize_t)n;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (!ok) {
        if (fd >= 0)
            unlink(path);
        return np_error_set(err, NP_E_IO, "", 0, 0, "a temporary script in %s: %s", tmpdir, strerror(e));
    }
    enum np_status st = np_slurm_cli_test_only(b, path, message, err);
    unlink(path);
    return st;
}

/* The standard output of a Slurm client program (argv[0] its name, found beside sbatch) that must exit 0:
 * a new string in *out (caller frees); NP_E_SLURM named by what when it failed. */
static enum np_status cli_client_text(struct np_backend *b, char **argv, const char *what, char **out,
                                      struct np_error *err)
{
    struct cli_impl *im = b->impl;
    *out = NULL;
    char *prog = cli_sibling(im, argv[0]);
    if (!prog)
        return np_error_set(err, NP_E_SLURM, argv[0], 0, 0, "not found next to sbatch or on PATH");
    argv[0] = prog;
    char *obuf = NULL, *ebuf = NULL;
    int status = 0, timed_out = 0;
    enum np_status st = cli_run(im, argv, NULL, &obuf, &ebuf, &status, &timed_out, err);
    free(prog);
    free(ebuf);
    if (st == NP_OK && (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
        st = np_error_set(err, NP_E_SLURM, what, 0, 0, "failed");
    if (st != NP_OK) {
        free(obuf);
        return NP_E_SLURM;
    }
    *out = obuf;
    return NP_OK;
}

enum np_status np_slurm_cli_partitions(struct np_backend *b, char **out, struct np_error *err)
{
    char *argv[] = {(char *)"scontrol", (char *)"show", (char *)"partition", (char *)"-o", NULL};
    return cli_client_text(b, argv, "scontrol show partition", out, err);
}

enum np_status np_slurm_cli_nodes(struct np_backend *b, const char *partition, char **out, struct np_error *err)
{
    char *argv[] = {(char *)"sinfo", (char *)"-h", (char *)"-o", (char *)NP_SLURM_SINFO_NODES, (char *)"-p",
                    (char *)partition, NULL};
    if (!partition || !*partition)
        argv[4] = NULL;
    return cli_client_text(b, argv, "sinfo", out, err);
}

static void cli_free(struct np_backend *b)
{
    struct cli_impl *im = b->impl;
    if (im) {
        free(im->sbatch);
        free(im->squeue);
        free(im->envp);
        free(im);
    }
    b->impl = NULL;
}

enum np_status np_slurm_cli_backend(struct np_backend *b, const struct np_slurm_cli_opts *o, struct np_error *err)
{
    static const struct np_slurm_cli_opts none;
    if (!o)
        o = &none;
    memset(b, 0, sizeof *b);
    const char *prog = o->sbatch ? o->sbatch : "sbatch";
    const char *path = o->path ? o->path : getenv("PATH");
    struct cli_impl *im = calloc(1, sizeof *im);
    if (!im)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    im->sbatch = np_path_search(prog, path);
    if (!im->sbatch) {
        free(im);
        return np_error_set(err, NP_E_INVALID, "", 0, 0,
                            "%s: not found on PATH=%s; install the Slurm client tools (sbatch) or add their folder "
                            "to PATH",
                            prog, path ? path : "(unset)");
    }
    /* squeue from sbatch's folder first (the same Slurm installation), else PATH */
    char *slash = strrchr(im->sbatch, '/');
    if (slash) {
        size_t dl = (size_t)(slash - im->sbatch);
        char *cand = malloc(dl + sizeof "/squeue");
        if (cand) {
            snprintf(cand, dl + sizeof "/squeue", "%.*s/squeue", (int)dl, im->sbatch);
            if (access(cand, X_OK) == 0)
                im->squeue = cand;
            else
                free(cand);
        }
    }
    if (!im->squeue)
        im->squeue = np_path_search("squeue", path);
    im->timeout_s = o->timeout_s > 0 ? o->timeout_s : NP_SLURM_DEFAULT_TIMEOUT;
    im->envp = np_slurm_child_env(o->envp ? o->envp : environ);
    if (!im->envp) {
        free(im->sbatch);
        free(im->squeue);
        free(im);
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    b->name = "cli";
    b->submit = cli_submit;
    b->free = cli_free;
    b->query = cli_query;
    b->find = cli_find;
    b->impl = im;
    return NP_OK;
}
