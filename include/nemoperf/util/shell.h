/* shell.h - quoting for the texts nemoperf generates, and a growable text buffer.
 *
 * Three targets, three rules: POSIX sh words (single quotes), the argument of an
 * "#SBATCH --opt=ARG" line (sbatch's own tokenizer: double quotes, backslash
 * escapes, no newlines) and Slurm file-name patterns (% doubled).  All functions
 * that return char * return a new string the caller frees (NULL when out of memory
 * or, for np_sbatch_quote, when the value cannot be expressed).
 */
#ifndef NEMOPERF_SHELL_H
#define NEMOPERF_SHELL_H

#include <stddef.h>

/* Growable NUL-terminated text.  Errors are sticky: after an allocation failure
 * every append is a no-op and np_buf_steal() returns NULL. */
struct np_buf {
    char *data;   /* NUL-terminated when len > 0; may be NULL when empty */
    size_t len, cap;
    int failed;   /* 1 after an allocation failure */
};

void np_buf_init(struct np_buf *b);
/* Frees the text; NULL-safe; the buffer can be reused after np_buf_init. */
void np_buf_free(struct np_buf *b);
/* Append; return 0, or -1 when out of memory (also recorded in b->failed). */
int np_buf_append(struct np_buf *b, const char *s);
int np_buf_appendn(struct np_buf *b, const char *s, size_t n);
int np_buf_appendf(struct np_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as one single-quoted POSIX sh word ('' for the empty string). */
int np_buf_append_shq(struct np_buf *b, const char *s);
/* The same for a formatted value: the whole formatted text is one quoted word. */
int np_buf_append_shqf(struct np_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand over the text (caller frees; "" for an empty buffer) and reset b;
 * NULL (and b freed) when an append failed. */
char *np_buf_steal(struct np_buf *b);

/* s as one POSIX sh word in single quotes: a'b -> 'a'\''b'.  Any byte string
 * round-trips through sh literally; nothing inside is expanded. */
char *np_shell_quote(const char *s);

/* s as the argument of an #SBATCH line, in double quotes with " and \ escaped
 * by a backslash (sbatch's tokenizer).  NULL when s holds a newline or a
 * carriage return, which an #SBATCH line cannot carry. */
char *np_sbatch_quote(const char *s);

/* s with every % doubled, for the literal part of a Slurm file-name pattern
 * (--output): "/data/100%" -> "/data/100%%". */
char *np_slurm_pattern_escape(const char *s);

/* Free a NULL-terminated array of strings and the array; NULL-safe. */
void np_strv_free(char **v);

/* A growing NULL-terminated string vector with sticky allocation failure:
 * after a failure every push is a no-op and np_strv_steal() returns NULL. */
struct np_strv {
    char **v;
    size_t n, cap;
    int failed;
};

/* Append a copy of str / of the formatted text. */
void np_strv_push(struct np_strv *s, const char *str);
void np_strv_pushf(struct np_strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand over the vector (an empty one when nothing was pushed; caller frees with
 * np_strv_free) and reset s; NULL after a failure (everything freed). */
char **np_strv_steal(struct np_strv *s);

#endif
