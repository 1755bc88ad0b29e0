/* env.h - reading settings from an environment: an accessor (so tests inject one) and booleans.
 *
 * Owned by src/util/env.c.
 */
#ifndef NEMOPERF_UTIL_ENV_H
#define NEMOPERF_UTIL_ENV_H

/* Environment accessor: value of `name` or NULL when unset.  An empty value
 * counts as unset (as ${VAR:-default} in the original scripts). */
typedef const char *(*np_env_fn)(void *ctx, const char *name);
/* getenv(); ctx unused. */
const char *np_env_getenv(void *ctx, const char *name);
/* ctx is a NULL-terminated array of "NAME=VALUE" strings (const char *const *). */
const char *np_env_list(void *ctx, const char *name);

/* Booleans: true/false/1/0/yes/no in any case.  0 ok, -1 not a boolean. */
int np_parse_bool(const char *s, int *out);
/* Decimal digits at *p (at most 10) into *v, *p moved past them; 1, or 0 when there are none or too
 * many. */
int np_parse_digits(const char **p, long *v);

#endif
