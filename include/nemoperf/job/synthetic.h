/* synthetic.h - the synthetic workload: what nemoperf-synth runs as one srun task.
 *
 * Owned by src/job/synthetic.c.  A stand-in for a NeMo / AutoModel training task on machines
 * without GPUs: calibrated CPU work per step and the log lines the real job prints.
 */
#ifndef NEMOPERF_JOB_SYNTHETIC_H
#define NEMOPERF_JOB_SYNTHETIC_H

/* Run one synthetic task configured by argv and the Slurm environment; returns the process
 * exit status (0 ok, 1 runtime failure, 2 usage).  May re-raise a terminating signal. */
int np_synth_main(int argc, char **argv);

#endif
