/* stage.h - the $STAGE_PATH layout and the container import of nemoperf-setup.
 *
 * Layout (NEMO_HOME and HF_HOME are $STAGE_PATH itself, as in the original
 * launch.sh):
 *   $STAGE_PATH/<image>.sqsh         the container, e.g. nvidia+nemo+25.02.01.sqsh
 *   $STAGE_PATH/experiments/         one folder per launched experiment
 *   $STAGE_PATH/hf/<org>/<name>/     tokenizer and config files of gated models
 *   $STAGE_PATH/logs/                output of the --sbatch import job (only then)
 * The import runs `enroot import --output <tmp> docker://<image>` (fork/exec, no
 * shell) or the same under `srun` inside a one-node `sbatch --wait` job, into a
 * hidden temporary name in the same folder that is renamed on success and
 * removed on failure, timeout or cancellation.  Nothing here prints except
 * through diag.h notes; nothing exits.
 */
#ifndef NEMOPERF_STAGE_H
#define NEMOPERF_STAGE_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "nemoperf/model/layout.h" /* NP_STAGE_*, np_stage_sqsh_path, np_stage_hf_dir */
#include "nemoperf/util/error.h"

/* Time limit of the --sbatch import job, as the original setup.sh. */
#define NP_STAGE_SBATCH_TIME "01:00:00"

/* STAGE_PATH must be set, non-empty and absolute, and pass np_stage_check_value.  NP_E_INVALID
 * with a message naming STAGE_PATH otherwise. */
enum np_status np_stage_check_path(const char *stage, struct np_error *err);

/* A path or image reference the variable `name` gives (STAGE_PATH, RUN_CONF_IMAGE), checked before
 * anything is created, by setup and launch alike: no control byte (newline, ESC, ...), no component
 * longer than NAME_MAX, at most PATH_MAX - 1 bytes in all.  NP_E_INVALID naming `name`. */
enum np_status np_stage_check_value(const char *name, const char *value, struct np_error *err);

/* mkdir -p path (each missing component with mode 0755).  NP_E_IO naming the
 * component that could not be created (or that is not a directory). */
enum np_status np_stage_mkdirs(const char *path, struct np_error *err);

/* Create $stage, $stage/experiments and $stage/hf.  *created (may be NULL)
 * is set to the number of folders that did not exist before. */
enum np_status np_stage_make_layout(const char *stage, int *created, struct np_error *err);


/* Bytes an unprivileged user may still write on path's file system (statvfs
 * f_bavail * f_frsize) into *bytes: 0, or -1 (errno) when it cannot be read. */
int np_stage_free_space(const char *path, double *bytes);


struct np_import_opts {
    const char *enroot;       /* enroot program; NULL: "enroot" from PATH */
    int sbatch;               /* 1: run inside a one-node job (sbatch --wait, srun enroot import) */
    const char *sbatch_prog;  /* sbatch program; NULL: "sbatch" from PATH (scancel beside it) */
    const char *account;      /* SBATCH_ACCOUNT or NULL */
    const char *partition;    /* SBATCH_PARTITION or NULL */
    const char *log_dir;      /* --sbatch: folder of the job's output file (created); NULL: sqsh's folder */
    unsigned timeout_s;       /* 0: none; else the import is stopped and fails after that long */
    volatile sig_atomic_t *cancel; /* non-zero: stop the import, clean up, NP_E_IO; may be NULL */
};

enum np_import_outcome { NP_IMPORT_IMPORTED = 0, NP_IMPORT_KEPT };

/* Run argv[0] (an absolute path) in its own process group with stdin from /dev/null, stdout to
 * stderr (sbatch: stdout read for the job id of --parsable, copied to jobid), without
 * HF_TOKEN / HUGGING_FACE_HUB_TOKEN in its environment (sbatch: nor an enclosing
 * allocation's SLURM_* / SRUN_* except SLURM_CONF, nor empty SBATCH_*; the user's other
 * SBATCH_* reach sbatch, as with launch).  Waits; *wstatus gets waitpid's status.  On *cancel or after
 * timeout_s (0: none) the group is stopped (SIGTERM, then SIGKILL), a submitted job is
 * scancelled, and *stopped is 1 (cancelled) or 2 (timed out), else 0.  NP_E_IO when it
 * cannot be started, NP_E_NOMEM. */
enum np_status np_stage_run(char **argv, int sbatch, volatile sig_atomic_t *cancel, unsigned timeout_s, char *jobid,
                            size_t jobid_size, int *wstatus, int *stopped, struct np_error *err);
/* "exited with status N" / "was killed by signal N" / "could not be run (exit 127)". */
void np_stage_wait_text(int status, char *buf, size_t size);

struct np_strv;
/* Append the head of a one-node setup job to a: sbatch (sbatch_prog, else PATH's) --wait --parsable --nodes=1
 * --ntasks=1 [--exclusive] --time=<time> --job-name=<job_name> [--account=] [--partition=]
 * --output=/--error=<log_dir>/<log>_%j.out (log_dir pattern-escaped).  The import, the fine-tuning
 * preparation and the pip job share it; a->failed on failure. */
void np_stage_job_head(struct np_strv *a, const char *sbatch_prog, int exclusive, const char *time,
                       const char *job_name, const char *account, const char *partition, const char *log_dir,
                       const char *log);
struct np_buf;
/* End a setup job's sbatch argv begun by np_stage_job_head: the job's script, b's text, as --wrap=<script>
 * (b is emptied).  Returns a's array (new strings, free with np_strv_free; a is emptied), NULL when out of
 * memory (in a or b).  The import and the fine-tuning preparation share it. */
char **np_stage_job_wrap(struct np_strv *a, struct np_buf *b);

/* The command np_stage_import runs for image into the file out_path, as a
 * NULL-terminated argv (new strings; free with np_strv_free from shell.h).
 * With o->sbatch the job's script is the --wrap argument.  NULL when out of
 * memory or when a needed program is not found (then, with --sbatch, argv[0]
 * is still "sbatch" so dry runs can print it). */
char **np_stage_import_argv(const char *image, const char *out_path, const struct np_import_opts *o);

/* Import image into sqsh (absolute path).  An existing non-empty sqsh is kept
 * (*outcome = NP_IMPORT_KEPT, no process started).  Otherwise stale temporary
 * files of earlier interrupted imports from this host are removed, the import
 * runs into "<dir>/.<name>.importing.<host>.<pid>" and that file is renamed to
 * sqsh when the command exits 0 having written a non-empty file.  The child
 * runs in its own process group with stdout sent to stderr and without HF_TOKEN
 * / HUGGING_FACE_HUB_TOKEN in its environment (and, for sbatch, in
 * np_stage_run's environment).
 * NP_E_NOTFOUND when the program is missing (message names it), NP_E_IO when
 * the import fails, times out or is cancelled (the temporary file is gone). */
enum np_status np_stage_import(const char *image, const char *sqsh, const struct np_import_opts *o,
                               enum np_import_outcome *outcome, struct np_error *err);

#endif
