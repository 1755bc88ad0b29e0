/* ncclreport.h - the NCCL breakdown of a run in every report format.
 *
 * Text (table and markdown), CSV rows and a JSON object (Jansson) of what np_nccl read from a
 * run's log: network facts, warnings, per communicator size and collective the calls, bytes,
 * bytes per training step and the power-of-two size histogram, checkpoint durations.
 */
#ifndef NEMOPERF_REPORT_NCCLREPORT_H
#define NEMOPERF_REPORT_NCCLREPORT_H

#include <jansson.h>
#include <stdio.h>

#include "nemoperf/parse/diagnose.h"
#include "nemoperf/parse/nccl.h"
#include "nemoperf/report/report.h"
#include "nemoperf/util/error.h"

/* Does the log have anything to say (collectives, init lines or checkpoint lines)? */
int np_ncclreport_any(const struct np_nccl *n);

/* A new JSON object (caller owns it); steps: training steps of the log (0 unknown). NULL on no memory. */
json_t *np_ncclreport_json(const struct np_nccl *n, size_t steps);

/* The text block of one run, headed by label; markdown: a markdown table.  NP_E_IO on a write error. */
enum np_status np_ncclreport_text(FILE *out, const char *label, const struct np_nccl *n, size_t steps,
                                  int markdown);

/* CSV: the header line, then one row per collective of a run. */
enum np_status np_ncclreport_csv_header(FILE *out);
enum np_status np_ncclreport_csv(FILE *out, const char *label, const struct np_nccl *n, size_t steps);

/* The report of res (np_report_write) with the diagnostics d (one per run) of nemoperf-parse --nccl:
 * JSON: members "nccl", "anomalies", "drift" and "nsys_reports" in each run object; CSV: the runs,
 * an empty line, then the NCCL rows; table and markdown: the runs, then a block per diagnosed run. */
enum np_status np_diag_report_write(FILE *out, enum np_format fmt, const struct np_parse_result *res,
                                    const struct np_parse_opts *o, const struct np_diag *d);

/* --nccl --plot: the message size histogram of every run's collectives (summed per communicator
 * size and collective) into file (.svg, .png, .pdf). */
enum np_status np_diag_plot(const char *file, const struct np_parse_result *res, const struct np_diag *d,
                            struct np_error *err);

/* "1.50 GiB" into buf. */
const char *np_ncclreport_bytes(double bytes, char *buf, size_t size);

#endif
