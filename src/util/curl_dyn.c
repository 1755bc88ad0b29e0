/* curl_dyn.c - the table of libcurl and its loader (curl_dyn.h, util/dynlib.h). */
#define NP_CURL_DYN_TABLE
#include "nemoperf/util/curl_dyn.h"

#include <dlfcn.h>

NP_DYNLIB_DEFINE(curl, NP_CURL_FUNCS, "libcurl.so.4", "libcurl4", "HTTP (slurmrestd, the Hugging Face Hub)")

enum np_status np_curl_load(struct np_error *err)
{
    return np_dynlib_load(&np_curl_lib, err);
}
