/* envcheck.h - environment variables that look like nemoperf's but are not (MODLE_SIZE=8b).
 *
 * One table of every variable the tools and the test/demo scripts read (src/util/envcheck.c).
 * A name not in it is suspect when it is within edit distance 2 of a known name (letters
 * compared without case; a swap of two neighbours counts 2), when it means one (its words, CKPT read as
 * CHECKPOINT and PROFILING as PROFILE, are all words of one known name, a feature's word among them:
 * ENABLE_PROFILING, NCCL_TRACE, LOAD_CKPT_PATH), or starts with a known prefix (NEMOPERF_, NP_CLUSTER_).  Add a new variable to the table when a tool starts reading it:
 * tests/check_envcheck.c fails when the sources read one the table does not hold.
 */
#ifndef NEMOPERF_ENVCHECK_H
#define NEMOPERF_ENVCHECK_H

#include <stddef.h>

/* NULL-terminated table of the known names (static): the tools' and the scripts'. */
const char *const *np_env_known(void);

/* NULL-terminated tables (static): the settings the tools read (a part of np_env_known), and what they read
 * that a user does not set (HOME, PATH, TMPDIR, Slurm's SLURM_PROCID ... in a job), never suspect. */
const char *const *np_env_tools(void);
const char *const *np_env_ambient(void);

/* 1 when name is a known variable. */
int np_env_is_known(const char *name);

/* Edit distance (insert, delete, substitute; case-insensitive), capped at cap + 1. */
size_t np_env_distance(const char *a, const char *b, size_t cap);

/* The known name the suspect name most likely meant (static string), or NULL when name is
 * known or does not look like a nemoperf variable.  *prefix_only is set when it was
 * suspect only for its prefix (the suggestion may then be far from it). */
const char *np_env_suggest(const char *name, int *prefix_only);

/* Every suspect entry of envp ("NAME=value"), one message per line:
 * "MODLE_SIZE=8b: not a nemoperf variable; did you mean MODEL_SIZE?" (the value is not
 * repeated for names that look like secrets).  A new string (caller frees), or NULL when
 * nothing is suspect (or out of memory). */
char *np_env_check(char *const *envp);

/* 1 when a variable of this name may hold a credential (its name holds TOK other than in TOKENIZER,
 * JWT, KEY, PASS, SECRET or CREDENTIAL, upper case): its value is never printed, logged or recorded. */
int np_env_secret_name(const char *name);

struct option;
/* The long option (without "--", borrowed from longopts) within edit distance 2 of arg ("--stpes",
 * "--dryrun=x": the part before '='), or NULL. */
const char *np_opt_suggest(const char *arg, const struct option *longopts);
/* Say on stderr (np_errorf) that arg is no option, with np_opt_suggest's suggestion when there is one. */
void np_opt_unknown(const char *arg, const struct option *longopts);

#endif
