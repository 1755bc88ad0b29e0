/* dynlib.h - the libraries only some commands need (plots: cairo; the PostgreSQL store: libpq; HTTP: libcurl),
 * opened on their first use, not at every start of every tool.
 *
 * Linked, they and what they pull in (X11, Kerberos, LDAP, TLS, SSH: 45 shared objects) were loaded by every
 * nemoperf-parse and nemoperf-launch: about 23 ms of a 37 ms parse of one run on this project's machine, for
 * libraries a plain parse never calls.  Each such library has a module holding its table of functions (one
 * pointer each, the library's own prototypes: cairo_dyn, pg_dyn, curl_dyn) and a header that sends the
 * library's calls in the modules using it through the table; the first call opens the library.  A tool that
 * cannot open it says which library, for what, and which Debian package has it.  Tests still link the real
 * libraries (they call them directly), and the table then resolves to the same functions.
 */
#ifndef NEMOPERF_UTIL_DYNLIB_H
#define NEMOPERF_UTIL_DYNLIB_H

#include "nemoperf/util/error.h"

struct np_dynlib {
    const char *soname;                   /* "libcairo.so.2" */
    const char *package;                  /* the Debian package that has it: "libcairo2" */
    const char *use;                      /* what needs it: "plots (--plot)" */
    const char *(*bind)(void *handle);    /* fills the library's table: NULL, or the first symbol not found */
    int ok;                               /* the table is filled (read with acquire) */
    int tried;                            /* opening failed: error says why */
    char error[512];
};

#define NP_DYNLIB_INIT(soname, package, use, bind) {(soname), (package), (use), (bind), 0, 0, ""}

/* Open the library and fill its table, once (thread-safe); NP_E_NOTFOUND with the reason in err when it
 * cannot be opened or lacks a function. */
enum np_status np_dynlib_load(struct np_dynlib *lib, struct np_error *err);

/* The table is filled, or the reason is printed and the tool exits with status 2 (a call that no entry point
 * loaded for: the last resort, never the way a command reports a missing library). */
void np_dynlib_need(struct np_dynlib *lib);

/* 1 when the table is filled. */
static inline int np_dynlib_ready(const struct np_dynlib *lib)
{
    return __atomic_load_n(&lib->ok, __ATOMIC_ACQUIRE);
}

/* The table of a library's functions (FUNCS(X) lists them: X(f) for each), its np_dynlib and the accessor
 * np_<name>_fns() the calls go through (it opens the library on the first call, or exits naming it). */
#define NP_DYNLIB_FIELD_(f) __typeof__(f) *f;
#define NP_DYNLIB_DECLARE(name, FUNCS)                                                                  \
    struct np_##name##_fns {                                                                            \
        FUNCS(NP_DYNLIB_FIELD_)                                                                         \
    };                                                                                                  \
    extern struct np_##name##_fns np_##name##_table;                                                    \
    extern struct np_dynlib np_##name##_lib;                                                            \
    static inline const struct np_##name##_fns *np_##name##_fns(void)                                   \
    {                                                                                                   \
        if (!np_dynlib_ready(&np_##name##_lib))                                                         \
            np_dynlib_need(&np_##name##_lib);                                                           \
        return &np_##name##_table;                                                                      \
    }

/* In the module owning the table (with <dlfcn.h>, and the library's own names, not the calls' redirects): the
 * table, its binder (dlsym of each function) and its np_dynlib. */
#define NP_DYNLIB_BIND_(f)                                                                              \
    if (!(np_dynlib_table_->f = (__typeof__(np_dynlib_table_->f))dlsym(handle, #f)))                   \
        return #f;
#define NP_DYNLIB_DEFINE(name, FUNCS, soname, package, use)                                             \
    struct np_##name##_fns np_##name##_table;                                                           \
    static const char *name##_bind(void *handle)                                                        \
    {                                                                                                   \
        struct np_##name##_fns *np_dynlib_table_ = &np_##name##_table;                                  \
        FUNCS(NP_DYNLIB_BIND_)                                                                          \
        return NULL;                                                                                    \
    }                                                                                                   \
    struct np_dynlib np_##name##_lib = NP_DYNLIB_INIT(soname, package, use, name##_bind);

#endif
