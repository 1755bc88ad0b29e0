/* report.h - print analysed runs as an aligned table, the seeds' markdown, CSV or JSON.
 *
 * The markdown layout is exactly the seeds' (one table per recipe+size+dtype,
 * "Llama 3.1 8b BF16 | 8x H100 GPUs | ..." with the four published rows and
 * their rounding).  JSON is written with Jansson; unknown numbers are null.
 */
#ifndef NEMOPERF_REPORT_H
#define NEMOPERF_REPORT_H

#include <stdio.h>

#include "nemoperf/run.h"

enum np_format { NP_FMT_TABLE = 0, NP_FMT_MARKDOWN, NP_FMT_CSV, NP_FMT_JSON };

/* "table", "markdown" (or "md"), "csv", "json"; -1 when unknown. */
int np_format_parse(const char *s);

/* Write res to out.  with_reference adds the reference columns/object.
 * Returns NP_E_IO when writing failed (e.g. a closed pipe), NP_E_NOMEM. */
enum np_status np_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                               const struct np_parse_opts *opts);

/* Seed-style number formatting, exposed for tests: "%.2f" with trailing zeros
 * (and a trailing dot) removed: 12.30 -> "12.3", 34.00 -> "34". */
void np_report_trim2(double v, char *buf, size_t size);

#endif
