/* dynlib.c - open a library on its first use (dynlib.h): dlopen by soname, the module's bind fills its table
 * with dlsym; once per process, under one lock. */
#include "nemoperf/util/dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

enum np_status np_dynlib_load(struct np_dynlib *lib, struct np_error *err)
{
    if (np_dynlib_ready(lib))
        return NP_OK;
    pthread_mutex_lock(&dynlib_lock);
    if (!lib->ok && !lib->tried) {
        /* RTLD_NOW: a function missing shows here, not at a call halfway through a command */
        void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
        const char *missing = NULL;
        if (!h) {
            const char *why = dlerror();
            snprintf(lib->error, sizeof lib->error, "cannot load %s (%s), needed for %s: install the Debian package %s",
                     lib->soname, why ? why : "not found", lib->use, lib->package);
        } else if ((missing = lib->bind(h)) != NULL) {
            snprintf(lib->error, sizeof lib->error, "%s has no %s, needed for %s: the Debian package %s is too old",
                     lib->soname, missing, lib->use, lib->package);
            dlclose(h);
        } else
            __atomic_store_n(&lib->ok, 1, __ATOMIC_RELEASE); /* the handle stays open for the process */
        lib->tried = !lib->ok;
    }
    pthread_mutex_unlock(&dynlib_lock);
    if (np_dynlib_ready(lib))
        return NP_OK;
    return np_error_set(err, NP_E_NOTFOUND, lib->soname, 0, 0, "%s", lib->error);
}

void np_dynlib_need(struct np_dynlib *lib)
{
    struct np_error err = {0};
    if (np_dynlib_load(lib, &err) == NP_OK)
        return;
    fprintf(stderr, "nemoperf: %s\n", lib->error);
    exit(2);
}
