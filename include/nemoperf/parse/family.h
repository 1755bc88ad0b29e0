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

#endif
