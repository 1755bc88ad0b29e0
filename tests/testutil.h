/* testutil.h - fixtures the Check suites share (tests/check_*.c link tests/testutil.c).
 *
 * Each helper fails the running test (ck_assert) rather than returning an error.
 */
#ifndef NEMOPERF_TESTUTIL_H
#define NEMOPERF_TESTUTIL_H

#include <stddef.h>

/* The whole file at path, NUL-terminated; its size in *len.  A new buffer, caller frees. */
char *np_test_read_all(const char *path, size_t *len);

#endif
