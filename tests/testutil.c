/* testutil.c - fixtures the Check suites share: reading a golden file whole.
 *
 * Linked into every build/tests/check_* binary (Makefile); a failure fails the running test.
 */
#include "testutil.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *np_test_read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}
