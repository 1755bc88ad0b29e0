/* aggregate.h - passes over all runs of a parse: weak-scaling efficiency and --group.
 *
 * Both need every run of a configuration, so they run once the parse is complete,
 * apart from the per-run report (which can stream).  A configuration is (recipe, model
 * size, dtype, GPU type, sequence length, kind, synthetic); a group adds the GPU
 * count and global batch size.  Only runs with status ok or synthetic are counted.
 */
#ifndef NEMOPERF_AGGREGATE_H
#define NEMOPERF_AGGREGATE_H

#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/parse/run.h"

/* Repeats of one configuration at one scale. */
struct np_group {
    const struct np_run *first;   /* borrowed: the identity of the group, valid while the result lives */
    size_t n;                     /* runs counted */
    /* of the runs' steady-state mean step times and steady-state throughputs (tokens/s) */
    double step_mean_s, step_stdev_s, step_min_s, step_max_s;
    double tps_mean, tps_stdev, tps_min, tps_max;
    double scaling_eff;           /* mean tokens/s/GPU over the smallest scale's; NAN without a sweep */
};

struct np_groups {
    struct np_group *g;           /* owned, in the order of their first run */
    size_t n;
    size_t left_out;              /* runs not counted (status not ok/synthetic, or no steady-state figure) */
};

/* Set run->scaling_eff for every counted run of a configuration seen at two scales or more:
 * its steady tokens/s/GPU over the mean of the smallest scale's runs. */
void np_runs_scaling_efficiency(struct np_parse_result *res);

/* The same efficiency from a stream of runs, in memory that grows with the number of
 * configurations only: add every run (np_scaling_add), then ask for each (np_scaling_eff). */
struct np_scaling_cfg;
struct np_scaling {
    struct np_scaling_cfg *c;     /* owned */
    size_t n, cap;
};
enum np_status np_scaling_add(struct np_scaling *s, const struct np_run *r);
double np_scaling_eff(const struct np_scaling *s, const struct np_run *r);
/* The same for a run that is not kept: np_scaling_add_at also says where r counts (*at, -1: nowhere)
 * and its tokens/s/GPU (*tpg); np_scaling_eff_at answers from those two. */
enum np_status np_scaling_add_at(struct np_scaling *s, const struct np_run *r, long *at, double *tpg);
double np_scaling_eff_at(const struct np_scaling *s, long at, double tpg);
void np_scaling_free(struct np_scaling *s);

/* Build the groups of res.  NP_E_NOMEM. */
enum np_status np_groups_build(const struct np_parse_result *res, struct np_groups *out);
void np_groups_free(struct np_groups *g);

#endif
