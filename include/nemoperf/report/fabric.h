/* fabric.h - the fabric check's own table: the nccl-tests steps of the runs reported (kind nccl-tests).
 *
 * Owned by src/report/fabric.c.  report.c hands each nccl-tests run to np_fabric_rows_add instead of the
 * training table and prints the rows after it (text table, markdown section); CSV and JSON carry the same
 * figures per run (np_fabric_json).  Ownership: np_fabric_rows_new returns a new collector, freed by
 * np_fabric_rows_free (NULL-safe); rows copy what they show.
 */
#ifndef NEMOPERF_REPORT_FABRIC_H
#define NEMOPERF_REPORT_FABRIC_H

#include <jansson.h>
#include <stdio.h>

#include "nemoperf/parse/run.h"

struct np_fabric_rows;

struct np_fabric_rows *np_fabric_rows_new(void);
void np_fabric_rows_free(struct np_fabric_rows *f);
/* 1 when r is a fabric check step (reported here, not in the training table). */
int np_fabric_is(const struct np_run *r);
/* Copy r's row; NP_E_NOMEM. */
enum np_status np_fabric_rows_add(struct np_fabric_rows *f, const struct np_run *r);
size_t np_fabric_rows_count(const struct np_fabric_rows *f);
/* The rows as a text table (a blank line and a title first when `after` is 1: a table came before). */
void np_fabric_rows_table(FILE *out, const struct np_fabric_rows *f, int after);
/* The rows as a markdown section ("## Fabric check (nccl-tests)"). */
void np_fabric_rows_markdown(FILE *out, const struct np_fabric_rows *f, int after);
/* A run's "nccl_tests" JSON member: an object for a fabric check step, JSON null for any other run; a new
 * reference (NULL: out of memory). */
json_t *np_fabric_json(const struct np_run *r);
/* Its CSV fields (NP_FABRIC_CSV_HEAD's), each preceded by a comma; empty for any other run. */
void np_fabric_csv(FILE *out, const struct np_run *r);
#define NP_FABRIC_CSV_HEAD                                                                                          \
    ",nccl_step,nccl_collective,nccl_scope,nccl_hosts,nccl_ranks,peak_busbw_gbs,peak_busbw_size_bytes,"              \
    "avg_busbw_gbs,expected_busbw_gbs,nccl_wrong,nccl_out_of_bounds,fabric_verdict,fabric_why"

#endif
