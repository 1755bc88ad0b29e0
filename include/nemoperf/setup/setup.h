/* setup.h - the setup pipeline behind nemoperf-setup: validate, plan, stage $STAGE_PATH.
 *
 * Owned by src/setup/setup.c.  Reads its settings from the environment (STAGE_PATH, HF_TOKEN, TASK,
 * RECIPE, MODEL_SIZE, MODEL, RUN_CONF_IMAGE, HF_ENDPOINT, SBATCH_*): see nemoperf-setup(1).
 */
#ifndef NEMOPERF_SETUP_SETUP_H
#define NEMOPERF_SETUP_SETUP_H

#include <stdio.h>

#include "nemoperf/util/error.h"

struct np_setup_opts {
    int sbatch;     /* import the container inside a one-node job */
    int skip_image; /* do not import the container */
    int skip_hf;    /* no Hugging Face access check nor downloads */
    int skip_pip;   /* no pip job (a Megatron-Bridge recipe's extra packages, setup/pip.h) */
    int dry_run;    /* print the plan; create, import and download nothing */
    int quiet;      /* no progress on stderr */
    FILE *out;      /* the plan (dry run) and one result line per step ("stage/image/hf ..."); NULL: stdout */
};

/* Validate everything first (NP_E_INVALID: nothing created, said on stderr), then stage.  NP_OK when
 * every step succeeded; NP_E_IO when one failed (said).  SIGINT/SIGTERM/SIGHUP are trapped while it
 * stages: *signal_out is then the signal (0 otherwise), for the caller to re-raise. */
enum np_status np_setup_run(const struct np_setup_opts *o, int *signal_out);

#endif
