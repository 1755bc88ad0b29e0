/* report.h - print analysed runs as an aligned table, the seeds' markdown, CSV or JSON.
 *
 * The markdown layout is exactly the seeds' (one table per recipe+size+dtype,
 * "Llama 3.1 8b BF16 | 8x H100 GPUs | ..." with the four published rows and
 * their rounding).  JSON is written with Jansson; unknown numbers are null.
 */
#ifndef NEMOPERF_REPORT_H
#define NEMOPERF_REPORT_H

#include <stdio.h>

#include "nemoperf/parse/run.h"

enum np_format { NP_FMT_TABLE = 0, NP_FMT_MARKDOWN, NP_FMT_CSV, NP_FMT_JSON };

/* The JSON report's "schema_version" (share/nemoperf/schema/report.schema.json): 2 is one envelope ("runs",
 * "errors", "groups", "nccl") and one key set for every family. */
#define NP_REPORT_SCHEMA 3

/* "table", "markdown" (or "md"), "csv", "json"; -1 when unknown. */
int np_format_parse(const char *s);

/* ---- streaming: memory does not grow with the number of runs ----
 * The table takes its column widths from its first NP_REPORT_TABLE_ROWS rows (a later, wider
 * cell widens its own row); its footer lines are held (spilled to a temporary file past 1 MiB)
 * and written after the rows.  JSON writes each run object as it comes (Jansson, one object at a
 * time), then the errors.  Markdown holds one column per configuration (the last run of it and a
 * count: memory grows with the configurations, not the runs), lists the runs in no table in a
 * temporary file, and writes everything at np_report_finish (the tables' order needs every run).
 * Temporary files are unlinked at creation, in np_report_tmpdir().  --group needs every run:
 * np_report_write. */
#define NP_REPORT_TABLE_ROWS 1000

struct np_report;

/* A report on out (borrowed until np_report_free; so is opts).  Returns a new report, caller frees
 * with np_report_free; NULL when out of memory.  Markdown: when its temporary file cannot be made,
 * np_report_tmp_errno says why and every call returns NP_E_IO. */
struct np_report *np_report_new(FILE *out, enum np_format fmt, const struct np_parse_opts *opts);

/* Where the report's temporary files go: $TMPDIR, else /tmp (borrowed, static or the environment's).
 * (glibc's tmpfile() ignores TMPDIR.) */
const char *np_report_tmpdir(void);

/* A new temporary file in np_report_tmpdir(), unlinked at once (O_TMPFILE, else mkstemp and unlink),
 * open "w+"; caller fcloses.  NULL with errno set when none can be made. */
FILE *np_report_tmpfile(void);

/* After NP_E_IO: the errno of the temporary file that could not be made, written or read; 0 when the
 * failure was not a temporary file's (then it was out's).  NULL-safe. */
int np_report_tmp_errno(const struct np_report *rep);

/* One run, in output order (borrowed for the call).  NP_E_IO when writing failed. */
enum np_status np_report_run(struct np_report *rep, const struct np_run *run);

/* One read error ("path: message", borrowed): JSON lists it in "errors"; the others ignore it. */
enum np_status np_report_error(struct np_report *rep, const char *msg);

/* JSON: one member more at the end of the envelope, "key": value (JSON text; both borrowed until
 * np_report_finish): a mixed tree's Megatron-Bridge runs.  The other formats ignore it. */
void np_report_json_member(struct np_report *rep, const char *key, const char *value);

/* What was held back (a short table's rows, the footer, the JSON envelope's end, markdown's tables
 * and list), then a flush. */
enum np_status np_report_finish(struct np_report *rep);

/* Rows rendered ahead (CSV, JSON and the table, np_report_renders): np_report_render formats run's row
 * as np_report_run would, but with its scaling efficiency left out (it needs every run of the sweep),
 * into t (text borrowed from rep until the next call; eff_at: where the efficiency goes); one call at
 * a time, in the runs' order (a table row's footer lines are taken then).  np_report_put writes such a
 * row with the efficiency filled in.  NP_E_INVALID: a row the renderer cannot leave a slot in (write
 * the run with np_report_run instead). */
struct np_report_text {
    const char *text;
    size_t len, eff_at;
};
int np_report_renders(const struct np_report *rep);
enum np_status np_report_render(struct np_report *rep, const struct np_run *run, struct np_report_text *t);
enum np_status np_report_put(struct np_report *rep, const char *text, size_t len, size_t eff_at, double eff);

/* NULL-safe; what was not finished is dropped. */
void np_report_free(struct np_report *rep);

/* Write res to out.  with_reference adds the reference columns/object.
 * Returns NP_E_IO when writing failed (e.g. a closed pipe), NP_E_NOMEM. */
enum np_status np_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                               const struct np_parse_opts *opts);

/* Seed-style number formatting, exposed for tests: "%.2f" with trailing zeros
 * (and a trailing dot) removed: 12.30 -> "12.3", 34.00 -> "34". */
void np_report_trim2(double v, char *buf, size_t size);

#endif
