/* timelimit.c - is a string a Slurm time limit?  (moved from src/launch/config.c: the REST backend
 * converts TIME_LIMIT to minutes and launch validates it, with one definition of the syntax).
 */
#include "nemoperf/slurm/timelimit.h"

#include "nemoperf/util/env.h" /* np_parse_digits */

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int np_time_limit_valid(const char *s)
{
    if (!s || !*s)
        return 0;
    const char *p = s;
    long days = -1, f[3] = {0, 0, 0};
    int n = 0;
    if (strchr(s, '-')) {
        if (!np_parse_digits(&p, &days) || *p != '-')
            return 0;
        p++;
    }
    for (;;) {
        if (n == 3 || !np_parse_digits(&p, &f[n]))
            return 0;
        n++;
        if (*p == ':') {
            p++;
            continue;
        }
        if (*p)
            return 0;
        break;
    }
    long h = 0, m = 0, sec = 0;
    if (days >= 0) { /* D-H, D-H:M, D-H:M:S */
        h = f[0];
        m = n > 1 ? f[1] : 0;
        sec = n > 2 ? f[2] : 0;
        if (h >= 24 || m >= 60 || sec >= 60)
            return 0;
    } else if (n == 1) { /* M */
        m = f[0];
    } else if (n == 2) { /* M:S */
        m = f[0];
        sec = f[1];
        if (sec >= 60)
            return 0;
    } else { /* H:M:S */
        h = f[0];
        m = f[1];
        sec = f[2];
        if (m >= 60 || sec >= 60)
            return 0;
    }
    long long minutes = (long long)(days > 0 ? days : 0) * 1440 + (long long)h * 60 + m + (sec + 59) / 60;
    if (minutes > NP_TIME_LIMIT_MAX_MINUTES)
        return 0;
    return (days > 0 || h > 0 || m > 0 || sec > 0);
}

/* Byte offset of the first byte that is not valid UTF-8 in s, or -1 when it all is. */
