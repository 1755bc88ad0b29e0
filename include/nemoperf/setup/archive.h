/* archive.h - pinned source checkouts staged from GitHub's commit archives (RECIPE=wan2.1 ./setup).
 *
 * <base>/<owner>/<name>/tar.gz/<commit> (base: NEMOPERF_ARCHIVE_ENDPOINT or https://codeload.github.com) is
 * downloaded with libcurl through the Hugging Face client's transfer (retries, resumed .part, renamed when
 * whole), checked (gzip and tar read it whole; one top folder "<name>-<commit>", GitHub's naming of that commit),
 * unpacked into a temporary folder beside the target and renamed to <stage>/src/<name>-<commit> in one step.
 */
#ifndef NEMOPERF_SETUP_ARCHIVE_H
#define NEMOPERF_SETUP_ARCHIVE_H

#include "nemoperf/model/recipe.h"
#include "nemoperf/setup/hf.h"
#include "nemoperf/util/error.h"

#define NP_ARCHIVE_DEFAULT_ENDPOINT "https://codeload.github.com"

enum np_archive_outcome { NP_ARCHIVE_STAGED = 0, NP_ARCHIVE_PRESENT };

/* The archive URL of repo at its commit under base (NULL: the default).  New string, caller frees. */
char *np_archive_url(const char *base, const struct np_mbridge_repo *repo);

/* Stage repo under <stage>/src (created).  A checkout already there (with its .nemoperf-commit marker) is kept
 * (NP_ARCHIVE_PRESENT, no request).  An interrupted download resumes from its .part; an archive that does not
 * unpack whole, or whose top folder is not the commit's, is deleted (the next run downloads it again) and
 * refused (NP_E_PARSE naming it); nothing half-unpacked is left at the target.  tar: the tar program's path
 * (NULL: "tar" from PATH).  *bytes (may be NULL): the archive's size when downloaded. */
enum np_status np_archive_stage(struct np_hf_client *c, const char *base, const char *stage,
                                const struct np_mbridge_repo *repo, const char *tar, enum np_archive_outcome *outcome,
                                long long *bytes, struct np_error *err);

#endif
