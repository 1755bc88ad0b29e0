/* curl_dyn.h - libcurl: slurmrestd (slurm/rest.c) and the Hugging Face Hub (setup/hf.c), opened on first use (util/dynlib.h).
 *
 * A module calling the library includes this header instead of the library's: its calls go through the
 * table, which np_curl_load fills (the entry points call it first, so that a missing library is an error of
 * their command; a call before it opens the library or exits naming it).  curl_dyn.c defines
 * NP_CURL_DYN_TABLE to see the functions' own names.
 */
#ifndef NEMOPERF_UTIL_CURL_DYN_H
#define NEMOPERF_UTIL_CURL_DYN_H

#define CURL_DISABLE_TYPECHECK /* its checks are macros named like the functions: the calls go through the table */

#include <curl/curl.h>

#include "nemoperf/util/dynlib.h"

/* libcurl.so.4: the functions nemoperf calls */
#define NP_CURL_FUNCS(X) \
    X(curl_easy_cleanup) X(curl_easy_getinfo) X(curl_easy_init) X(curl_easy_perform) X(curl_easy_reset) \
    X(curl_easy_setopt) X(curl_easy_strerror) X(curl_free) X(curl_global_init) X(curl_slist_append) \
    X(curl_slist_free_all) X(curl_url) X(curl_url_cleanup) X(curl_url_get) X(curl_url_set)
NP_DYNLIB_DECLARE(curl, NP_CURL_FUNCS)

/* Open the library (once): NP_E_NOTFOUND with the reason (which library, for what, which package) in err. */
enum np_status np_curl_load(struct np_error *err);

#ifndef NP_CURL_DYN_TABLE
#undef curl_easy_getinfo /* curl.h's "exactly three arguments" macros */
#undef curl_easy_setopt
#define curl_easy_cleanup (np_curl_fns()->curl_easy_cleanup)
#define curl_easy_getinfo (np_curl_fns()->curl_easy_getinfo)
#define curl_easy_init (np_curl_fns()->curl_easy_init)
#define curl_easy_perform (np_curl_fns()->curl_easy_perform)
#define curl_easy_reset (np_curl_fns()->curl_easy_reset)
#define curl_easy_setopt (np_curl_fns()->curl_easy_setopt)
#define curl_easy_strerror (np_curl_fns()->curl_easy_strerror)
#define curl_free (np_curl_fns()->curl_free)
#define curl_global_init (np_curl_fns()->curl_global_init)
#define curl_slist_append (np_curl_fns()->curl_slist_append)
#define curl_slist_free_all (np_curl_fns()->curl_slist_free_all)
#define curl_url (np_curl_fns()->curl_url)
#define curl_url_cleanup (np_curl_fns()->curl_url_cleanup)
#define curl_url_get (np_curl_fns()->curl_url_get)
#define curl_url_set (np_curl_fns()->curl_url_set)
#endif

#endif
