/* env.c - reading settings from an environment: getenv or an injected list, and booleans.
 *
 * An empty value counts as unset, as ${VAR:-default} in the original launch scripts (moved from
 * src/launch/config.c: the Slurm backends read the submitter's environment the same way).
 */
#include "nemoperf/util/env.h"

#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <strings.h>

const char *np_env_getenv(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

const char *np_env_list(void *ctx, const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = ctx; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

int np_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "1", "yes"}, *const no[] = {"false", "0", "no"};
    for (size_t i = 0; s && i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* Decimal digits at *p (at most 7) into *v. */

int np_parse_digits(const char **p, long *v)
{
    long x = 0;
    int n = 0;
    while (isdigit((unsigned char)**p)) {
        if (++n > 10) /* MAX_STEPS up to 10000000 and minute counts up to Slurm's bound fit */
            return 0;
        x = x * 10 + (**p - '0');
        (*p)++;
    }
    *v = x;
    return n > 0;
}
