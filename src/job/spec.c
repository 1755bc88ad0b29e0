/* spec.c - names of a job's settings (the workload kind).
 *
 * The job description itself (struct np_launch_config) is data, filled by launch/config.c.
 */
#include "nemoperf/job/spec.h"

const char *np_workload_name(enum np_workload w)
{
    return w == NP_WORKLOAD_SYNTHETIC ? "synthetic" : "nemo";
}

