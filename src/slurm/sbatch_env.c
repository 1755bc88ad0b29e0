/* sbatch_env.c - SBATCH_* input variables: checked for every backend, mapped to slurmrestd
 * job fields or refused by name.
 *
 * sbatch reads the variables itself; the values Slurm reads as names are checked here first
 * (length, control bytes) by launch and setup alike.  For slurmrestd each variable is one row
 * of sbatch_env_map (field names shared by the job descriptions of API v0.0.38 to v0.0.41).
 */
#include "nemoperf/slurm/sbatch_env.h"

#include <string.h>

#include "nemoperf/util/text.h"

extern char **environ;

static const struct {
    const char *name;  /* sbatch input variable (sbatch(1), INPUT ENVIRONMENT VARIABLES) */
    const char *field; /* REST job field; "" = set by config.c from the validated value */
} sbatch_env_map[] = {
    {"SBATCH_ACCOUNT", ""},
    {"SBATCH_PARTITION", ""},
    {"SBATCH_GPUS_PER_NODE", ""},
    {"SBATCH_QOS", "qos"},
    {"SBATCH_RESERVATION", "reservation"},
    {"SBATCH_CONSTRAINT", "constraints"},
    {"SBATCH_WCKEY", "wckey"},
};
#define SBATCH_NMAP (sizeof sbatch_env_map / sizeof sbatch_env_map[0])

const char *np_sbatch_rest_field(const char *name)
{
    for (size_t i = 0; name && i < SBATCH_NMAP; i++)
        if (strcmp(sbatch_env_map[i].name, name) == 0)
            return sbatch_env_map[i].field;
    return NULL;
}

/* The SBATCH_* input variables Slurm reads as names, and the longest value it accepts: slurmctld
 * answers a longer one with "Pathname of a file, directory or other parameter too long" (measured
 * with sbatch --test-only on Slurm 22.05.8: 1024 bytes pass, 1025 are refused, for each of these;
 * SBATCH_COMMENT is not limited there).  Refused up front, a definite refusal leaves no folder
 * behind (issue 23, item 10). */
static const char *const sbatch_env_names[] = {"SBATCH_ACCOUNT",    "SBATCH_PARTITION", "SBATCH_QOS",
                                               "SBATCH_RESERVATION", "SBATCH_CONSTRAINT", "SBATCH_WCKEY",
                                               "SBATCH_JOB_NAME"};
#define SBATCH_NAME_MAX 1024

enum np_status np_sbatch_env_check(np_env_fn env, void *ctx, struct np_error *err)
{
    if (!env)
        env = np_env_getenv;
    for (size_t i = 0; i < sizeof sbatch_env_names / sizeof sbatch_env_names[0]; i++) {
        const char *name = sbatch_env_names[i], *v = env(ctx, name);
        if (!v || !*v)
            continue;
        size_t n = strlen(v);
        if (n > SBATCH_NAME_MAX)
            return np_error_set(err, NP_E_INVALID, "", 0, 0,
                                "%s: %zu bytes long; Slurm refuses more than %d (\"parameter too long\"); allowed: "
                                "a name of at most %d bytes; nothing written",
                                name, n, SBATCH_NAME_MAX, SBATCH_NAME_MAX);
        long at = np_text_control_at(v);
        if (at >= 0)
            return np_error_set(err, NP_E_INVALID, "", 0, 0,
                                "%s: holds a control character (byte 0x%02x at offset %ld); allowed: a name "
                                "without control characters; nothing written",
                                name, (unsigned char)v[at], at);
    }
    return NP_OK;
}

/* The environment to enumerate: the injected list, or the process's. */
static char *const *sbatch_envp(np_env_fn env, void *ctx)
{
    return env == np_env_list ? (char *const *)ctx : environ;
}

/* Walk every non-empty SBATCH_* of the environment; job NULL only checks. */
static enum np_status sbatch_walk(np_env_fn env, void *ctx, json_t *job, struct np_error *err)
{
    if (!env)
        env = np_env_getenv;
    for (char *const *e = sbatch_envp(env, ctx); e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "SBATCH_", 7) != 0 || !eq || !eq[1])
            continue;
        char name[128];
        size_t n = (size_t)(eq - *e);
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, *e, n);
        name[n] = '\0';
        const char *field = np_sbatch_rest_field(name);
        if (!field) {
            char known[400] = "";
            for (size_t i = 0; i < SBATCH_NMAP; i++) {
                strncat(known, sbatch_env_map[i].name, sizeof known - strlen(known) - 1);
                strncat(known, i + 1 < SBATCH_NMAP ? ", " : "", sizeof known - strlen(known) - 1);
            }
            return np_error_set(err, NP_E_INVALID, "", 0, 0,
                                "%s is set, but slurmrestd has no job field for it (sbatch would have honoured "
                                "it); unset it or submit with SLURM_SUBMIT=cli; allowed with SLURM_SUBMIT=rest: %s",
                                name, known);
        }
        if (job && *field && json_object_set_new(job, field, json_string(eq + 1)) != 0)
            return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    }
    return NP_OK;
}

enum np_status np_sbatch_rest_check(np_env_fn env, void *ctx, struct np_error *err)
{
    return sbatch_walk(env, ctx, NULL, err);
}

enum np_status np_sbatch_rest_fields(np_env_fn env, void *ctx, json_t *job, struct np_error *err)
{
    return sbatch_walk(env, ctx, job, err);
}
