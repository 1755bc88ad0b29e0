/* family.h - recipe families as descriptors: who wrote a run's log, and how such a run is read.
 *
 * Owned by src/parse/family.c (the table) and one file per family that needs its own analysis
 * (src/parse/family_mbridge.c).  parse/run.c asks the table which family a run belongs to and hands the
 * analysis to it; report/ and store/ read struct np_run and name no family.  A new family is a file and a row.
 */
#ifndef NEMOPERF_PARSE_FAMILY_H
#define NEMOPERF_PARSE_FAMILY_H

#include "nemoperf/parse/run.h"

struct np_run_family {
    const char *name;      /* "nemo", "automodel", "dfm", "mbridge": struct np_identity's family, the store's */
    const char *label;     /* "NeMo", "NeMo AutoModel", "NeMo DFM", "Megatron-Bridge" */
    /* --reference's tolerance when none is given (percent): how closely the family's published numbers can be
     * matched (Megatron-Bridge rounds its 26.04.01+ tokens/s to multiples of 16: 0.5 %) */
    double tolerance_pct;
    /* 1 when a run of this identity (the manifest's or the options', not yet analysed) is this family's */
    int (*claims)(const struct np_identity *id, const struct np_parse_opts *o);
    /* The family's own analysis (identity completion, window, metrics, status, --reference), or NULL: the
     * recipe-driven analysis of parse/run.c (NeMo 1.0/2.0, AutoModel, DFM: the recipes folder and the
     * reference tables). */
    void (*analyse)(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o);
};

/* The family of a run's identity: the first row that claims it, else NeMo's.  Never NULL. */
const struct np_run_family *np_run_family_of(const struct np_identity *id, const struct np_parse_opts *o);
/* By name ("mbridge"); NULL when no family has it. */
const struct np_run_family *np_run_family_find(const char *name);

/* Megatron-Bridge's row (family_mbridge.c). */
extern const struct np_run_family np_family_mbridge;

#endif
