/* history.h - what the results store answers: --history (stored runs, change points, a plot of
 * throughput over time) and --compare (baseline against candidate, per configuration, with verdicts).
 *
 * Both stream the store's rows: memory grows with the configurations and their throughputs (a double
 * a run), not with whole records.
 */
#ifndef NEMOPERF_REPORT_HISTORY_H
#define NEMOPERF_REPORT_HISTORY_H

#include <stdio.h>

#include "nemoperf/report/report.h"
#include "nemoperf/store/compare.h"
#include "nemoperf/store/store.h"

#define NP_MIN_EFFECT_DEFAULT 2.0 /* percent */

/* --history: the runs f selects, oldest first, as fmt, with a CHANGE column naming change points (the
 * first run of a configuration whose level differs from the runs before it by more than min_effect,
 * np_compare_runs over the runs before it against it and the next ones; with the container that changed
 * there when known).  plot (NULL: none): throughput per GPU over time per configuration, container
 * changes marked (.svg/.png/.pdf).  *nrows: runs listed. */
enum np_status np_history_write(struct np_store *s, const struct np_store_filter *f, enum np_format fmt,
                                double min_effect_pct, const char *plot, FILE *out, long long *nrows,
                                struct np_error *err);
/* --history --group: the same change points, a line per configuration with a run that counts instead of a line
 * per run (its runs, first and newest, the newest run's steady figures, its change points and the newest one):
 * one pass over the store, for a selection too large to read run by run.  *nrows: the runs counted. */
enum np_status np_history_write_group(struct np_store *s, const struct np_store_filter *f, enum np_format fmt,
                                      double min_effect_pct, const char *plot, FILE *out, long long *nrows,
                                      struct np_error *err);

/* The history plot's axes.  np_history_round_step: a round step (1, 2, 2.5 or 5 times a power of ten) near span/n.
 * np_history_time_ticks: ticks between t0 and t1 (unix seconds) at a step whose labels differ (hours "11-29 06:00"
 * within a day or two, else dates "2026-11-29"), at most max, into at[] and label[]; returns how many. */
double np_history_round_step(double span, int n);
size_t np_history_time_ticks(double t0, double t1, double *at, char (*label)[24], size_t max);

/* --compare: runs of two sides grouped by configuration. */
enum np_cmp_sidename { NP_CMP_BASE = 0, NP_CMP_CAND = 1 };
struct np_compare_set;
struct np_compare_set *np_compare_set_new(void); /* NULL: out of memory; free with np_compare_set_free */
/* What --compare judges (--metric): throughput (tokens/s/GPU, else steps/s; FASTER/SLOWER), or energy (J/token,
 * the store's and parse/run.h's; judged the same way on tokens per joule, said as J/token, LESS-ENERGY /
 * MORE-ENERGY, MORE-ENERGY counted as nslower).  Set before the first np_compare_set_add. */
enum np_cmp_metric { NP_CMP_METRIC_THROUGHPUT = 0, NP_CMP_METRIC_ENERGY };
void np_compare_set_metric(struct np_compare_set *set, enum np_cmp_metric metric);
/* The systems the two sides ran on (a run folder of each, "" none) and each difference between them in words
 * (parse/system.h np_system_diff: "driver 550.54.15 -> 560.35.03"), said after the verdicts (JSON "system").
 * Copies; -1 when out of memory. */
int np_compare_set_system(struct np_compare_set *set, const char *base_dir, const char *cand_dir);
int np_compare_set_system_diff(struct np_compare_set *set, const char *text);
/* Add one run (only runs of status ok or synthetic with a throughput count; returns 1 when counted). */
int np_compare_set_add(struct np_compare_set *set, enum np_cmp_sidename side, const struct np_store_rec *rec);
enum np_status np_compare_set_from_store(struct np_compare_set *set, enum np_cmp_sidename side, struct np_store *s,
                                         const struct np_store_filter *f, struct np_error *err);
/* 1 when the two sides hold runs of no kind in common (a benchmark set against a checkpoint or profile set:
 * never compared), with "the baseline's runs are benchmark; the candidate's checkpoint-save" into buf. */
int np_compare_set_kinds_apart(const struct np_compare_set *set, char *buf, size_t size);
/* The report: one row per configuration present on both sides (others listed as only-in).  *nslower:
 * configurations judged SLOWER.  NP_E_IO when out cannot be written, NP_E_NOMEM. */
enum np_status np_compare_write(const struct np_compare_set *set, enum np_format fmt, double min_effect_pct,
                                FILE *out, size_t *nslower, size_t *ncompared);
void np_compare_set_free(struct np_compare_set *set);

#endif
