/* family.h - the rows of the family table (struct np_run_family, parse/run.h) that live in files of their own.
 *
 * Owned by src/parse/family.c (the table) and one file per family that needs its own analysis
 * (src/parse/family_mbridge.c).  parse/run.c asks the table (np_run_family_of) which family a run belongs to and
 * hands the analysis to it; report/ and store/ read struct np_run and name no family.  A new family is a file
 * and a row.
 */
#ifndef NEMOPERF_PARSE_FAMILY_H
#define NEMOPERF_PARSE_FAMILY_H

#include "nemoperf/parse/run.h"

/* Megatron-Bridge's row (family_mbridge.c). */
extern const struct np_run_family np_family_mbridge;

/* nccl-tests' row (family_nccltests.c): a run folder whose manifest says "workload": "nccl-tests" is one run
 * per step of the job's steps file (parse/run.h: np_ncclt_steps_read), each judged against the expected bus
 * bandwidth (model/fabric.h). */
extern const struct np_run_family np_family_nccltests;

#endif
