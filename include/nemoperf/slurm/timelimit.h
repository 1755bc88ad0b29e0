/* timelimit.h - Slurm's time-limit syntax.  Owned by src/slurm/timelimit.c. */
#ifndef NEMOPERF_SLURM_TIMELIMIT_H
#define NEMOPERF_SLURM_TIMELIMIT_H

/* Slurm time limits: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (minutes and seconds < 60,
 * hours < 24 after a day count), not all zero.  1 valid, 0 not. */
/* The longest time limit Slurm holds: its time parser returns minutes in an int
 * (SchedMD/slurm src/common/parse_time.h, time_str2mins); longer ones wrap around. */
#define NP_TIME_LIMIT_MAX_MINUTES 2147483646
int np_time_limit_valid(const char *s);

#endif
