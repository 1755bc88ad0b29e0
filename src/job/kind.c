/* kind.c - the table of workload kinds (job/kind.h): which module builds the rank command, the srun
 * step, the environment and the staged files of a job.
 *
 * Rows are tried in order: nccl-tests (job/nccltests.c), Megatron-Bridge (job/mbridge.c, its own table of
 * builders: DFM, ...), NeMo AutoModel (job/automodel.c), then NeMo with the recipe's command template
 * (job/nemo.c).
 */
#include "nemoperf/job/kind.h"

#include <math.h>

#include "nemoperf/job/automodel.h"
#include "nemoperf/job/mbridge.h"
#include "nemoperf/job/nccltests.h"
#include "nemoperf/job/nemo.h"
#include "nemoperf/model/model_flops.h"

static int kind_is_mbridge(const struct np_model *m)
{
    return m->mbridge != NULL;
}

static int kind_is_automodel(const struct np_model *m)
{
    return m->automodel != NULL;
}

static int kind_any(const struct np_model *m)
{
    (void)m;
    return 1;
}

static int kind_per_gpu(const struct np_launch_config *c)
{
    return c->gpus_per_node;
}

static int kind_per_node(const struct np_launch_config *c)
{
    (void)c;
    return 1; /* torchrun starts the node's GPUs */
}

static void kind_synth_mbridge(const struct np_launch_config *c, struct np_strv *s)
{
    /* the log lines of the row's builder: Megatron-Bridge's (job/mbridge_log.c), DFM's AutoModel loop's */
    np_strv_push(s, "--log-format");
    np_strv_push(s, np_mbridge_synth_format(c));
    /* rank 0's MODEL_TFLOP/s/GPU from the step's model FLOPs, as docs/megatron-bridge.md says (Synthetic) */
    double tf = np_mbridge_synth_step_tflops(c);
    if (!isnan(tf)) {
        np_strv_push(s, "--step-tflops");
        np_strv_pushf(s, "%.6f", tf);
    }
}

/* AutoModel: GBS = LBS x DP x GA, each task stands for a node's GPUs (torchrun --nproc-per-node) */
static int kind_synth_mbs_automodel(const struct np_launch_config *c)
{
    return c->row && c->row->lbs > 0 ? c->row->lbs : c->mbs;
}

static void kind_synth_automodel(const struct np_launch_config *c, struct np_strv *s)
{
    np_strv_push(s, "--log-format");
    np_strv_push(s, "automodel");
    np_strv_push(s, "--nproc-per-node");
    np_strv_pushf(s, "%d", np_automodel_nproc(c));
    np_strv_push(s, "--warmup-steps");
    np_strv_pushf(s, "%d", np_automodel_warmup(c));
    np_strv_push(s, "--step-tflops");
    np_strv_pushf(s, "%.6f", c->row ? c->gbs * np_model_flops_row(c->model, c->row, c->seq_len) / 1e12 : 0.0);
}

/* the NeMo in-container driver, /nemo_run/code/<driver> (both NeMo kinds, WORKLOAD=nemo) */
static enum np_status kind_stage_nemo(const struct np_launch_config *c, struct np_error *err)
{
    return c->workload == NP_WORKLOAD_NEMO ? np_nemo_stage_driver(c, err) : NP_OK;
}

static const struct np_job_kind kind_table[] = {
    {"nccl-tests", np_ncclt_matches, np_ncclt_command, np_ncclt_tasks_per_node, np_ncclt_segment,
     np_ncclt_render_step, NULL, NULL, np_ncclt_vars, NULL},
    {"mbridge", kind_is_mbridge, np_mbridge_command, np_mbridge_tasks_per_node, np_mbridge_segment,
     np_mbridge_render_step, NULL, kind_synth_mbridge, np_env_mbridge_vars, np_mbridge_stage},
    {"automodel", kind_is_automodel, np_automodel_command, kind_per_node, np_nemo_segment,
     np_automodel_render_step, kind_synth_mbs_automodel, kind_synth_automodel, np_env_nemo_vars, kind_stage_nemo},
    {"nemo", kind_any, NULL, kind_per_gpu, np_nemo_segment, NULL, NULL, NULL, np_env_nemo_vars, kind_stage_nemo},
};

const struct np_job_kind *np_job_kind_of(const struct np_launch_config *c)
{
    size_t n = sizeof kind_table / sizeof kind_table[0];
    for (size_t i = 0; i + 1 < n; i++)
        if (kind_table[i].matches(c->model))
            return &kind_table[i];
    return &kind_table[n - 1];
}

size_t np_script_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap)
{
    return np_job_kind_of(c)->vars(c, vars, cap);
}
