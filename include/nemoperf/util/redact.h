/* redact.h - the one redactor of connection strings: every message that can carry one (a results store's
 * location, libpq's and SQLite's messages about it) passes through np_redact before it is shown.
 * Owned by src/util/redact.c. */
#ifndef NEMOPERF_UTIL_REDACT_H
#define NEMOPERF_UTIL_REDACT_H

#include <stddef.h>

/* text into out (size bytes, always NUL-terminated when size > 0) with "***" for:
 *  - a URI's password ("scheme://user:PASSWORD@"; the userinfo taken up to the last '@' before a blank or a
 *    quote, so a password holding '/', '?', '@' or '[' is masked whole, the URI valid or not);
 *  - a value of any key ending in "password" ("password=x", "sslpassword = 'a b'", "?password=x&...");
 *  - with conninfo (the connection string the text may be about, or NULL): each password the conninfo holds
 *    by the two rules above, raw and percent-decoded, wherever it appears in text, and every double-quoted
 *    token of text that is part of one or holds one (what libpq quotes of a string it could not parse,
 *    e.g. invalid integer value "PA" for a port cut from the password "PA/SS").
 * text NULL is "". */
void np_redact(const char *text, const char *conninfo, char *out, size_t size);

#endif
