/* report.h - print analysed runs as an aligned table, the seeds' markdown, CSV or JSON.
 *
 * Reports are written as a stream: np_report_run() writes (or, for what needs
 * every run, keeps in bounded form) one run at a time, so memory does not grow
 * with the number of runs.  One per-run emitter per format: a new per-run
 * column goes there.  The table's column widths come from its first
 * NP_REPORT_TABLE_ROWS rows (a later, wider cell widens its own row only).
 * The markdown layout is exactly the seeds' (one table per recipe+size+dtype,
 * "Llama 3.1 8b BF16 | 8x H100 GPUs | ..." with the four published rows and
 * their rounding): it keeps one run per (table, GPU count), the latest.
 * JSON is written with Jansson one run object at a time inside the
 * {"runs":[...],"errors":[...]} envelope; unknown numbers are null.
 */
#ifndef NEMOPERF_REPORT_H
#define NEMOPERF_REPORT_H

#include <stdio.h>

#include "nemoperf/run.h"

enum np_format { NP_FMT_TABLE = 0, NP_FMT_MARKDOWN, NP_FMT_CSV, NP_FMT_JSON };

/* "table", "markdown" (or "md"), "csv", "json"; -1 when unknown. */
int np_format_parse(const char *s);

#define NP_REPORT_TABLE_ROWS 1000

struct np_report;

/* Starts a report on out (borrowed until np_report_free); opts is borrowed too.
 * Returns a new report, caller frees with np_report_free; NULL when out of memory. */
struct np_report *np_report_new(FILE *out, enum np_format fmt, const struct np_parse_opts *opts);

/* One run, in output order (run is borrowed for the call).  NP_E_IO when writing failed. */
enum np_status np_report_run(struct np_report *rep, const struct np_run *run);

/* One read error ("path: message", borrowed); JSON lists them in "errors", other formats ignore them. */
enum np_status np_report_error(struct np_report *rep, const char *msg);

/* Writes what was held back (table widths of a short table, the markdown tables, the
 * JSON envelope's end) and flushes.  NP_E_IO when writing failed. */
enum np_status np_report_finish(struct np_report *rep);

/* NULL-safe. */
void np_report_free(struct np_report *rep);

/* Write res to out (np_report_new, one np_report_run per run, the errors, np_report_finish).  with_reference adds the reference columns/object.
 * Returns NP_E_IO when writing failed (e.g. a closed pipe), NP_E_NOMEM. */
enum np_status np_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                               const struct np_parse_opts *opts);

/* Seed-style number formatting, exposed for tests: "%.2f" with trailing zeros
 * (and a trailing dot) removed: 12.30 -> "12.3", 34.00 -> "34". */
void np_report_trim2(double v, char *buf, size_t size);

#endif
