/* check_script.c - the rendered sbatch script: content, syntax, and inert hostile values.
 *
 * Scripts are rendered from configurations resolved out of injected
 * environments.  They must carry the #SBATCH lines, exports and srun flags of
 * the originals, parse with sh -n and bash -n, never contain HF_TOKEN's value,
 * and - run for real under bash with stub srun/scontrol on PATH - pass a
 * STAGE_PATH full of spaces, quotes, $(...) and backticks through literally
 * without executing anything.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nemoperf/job/kind.h"
#include "nemoperf/launch/config.h"
#include "nemoperf/launch/manifest.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/util/shell.h"

static struct np_recipe_set set;
static char tmp[] = "/tmp/np-script-XXXXXX";
static char stage[1024];

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    ck_assert(chmod(path, mode) == 0);
}

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "recipes: %s", err.text);
    ck_assert(mkdtemp(tmp));
    snprintf(stage, sizeof stage, "%s/stage", tmp);
    ck_assert(mkdir(stage, 0755) == 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/nvidia+nemo+25.02.01.sqsh", stage);
    write_file(p, "sqsh", 0644);
    /* the tokenizer files ./setup stages for llama3.1 8b and 70b */
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "mkdir -p '%s/hf/meta-llama/Meta-Llama-3-%s'", stage, i ? "70B" : "8B");
        ck_assert(system(p) == 0);
        snprintf(p, sizeof p, "%s/hf/meta-llama/Meta-Llama-3-%s/config.json", stage, i ? "70B" : "8B");
        write_file(p, "{}", 0644);
    }
    snprintf(p, sizeof p, "%s/bin", tmp);
    ck_assert(mkdir(p, 0755) == 0);
    /* stubs: srun prints each argument and a few variables; synth is a plain file */
    snprintf(p, sizeof p, "%s/bin/srun", tmp);
    write_file(p,
               "#!/bin/sh\n"
               "{ for a in \"$@\"; do printf '<%s>\\n' \"$a\"; done\n"
               "  printf 'NEMO_HOME=<%s>\\nPROFILE_DIR=<%s>\\nPWD=<%s>\\n' \"$NEMO_HOME\" \"$NEMOPERF_PROFILE_DIR\" "
               "\"$(pwd)\"; } > \"$NP_SRUN_OUT\"\n"
               "exit \"${NP_SRUN_EXIT:-0}\"\n",
               0755);
    snprintf(p, sizeof p, "%s/bin/scontrol", tmp);
    write_file(p, "#!/bin/sh\necho \"scontrol $*\" >> \"$NP_SRUN_OUT.scontrol\"\n", 0755);
    snprintf(p, sizeof p, "%s/bin/nemoperf-synth", tmp);
    write_file(p, "#!/bin/sh\nexit 0\n", 0755);
}

static void teardown(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    ck_assert(system(cmd) == 0);
    np_recipe_set_free(&set);
}

/* Resolve env (+ STAGE_PATH=stage_override or the fixture) into plan; one job expected. */
static struct np_launch_config *resolve(const char *sp, const char *const *env, struct np_launch_plan *plan)
{
    const char *e[40];
    char spv[2048], synth[1200];
    snprintf(spv, sizeof spv, "STAGE_PATH=%s", sp ? sp : stage);
    snprintf(synth, sizeof synth, "%s/bin/nemoperf-synth", tmp);
    size_t n = 0;
    int has_dtype = 0;
    e[n++] = spv;
    for (; *env; env++) {
        has_dtype |= strncmp(*env, "DTYPE=", 6) == 0;
        e[n++] = *env;
    }
    if (!has_dtype) /* required; the tests that do not care run bf16 */
        e[n++] = "DTYPE=bf16";
    e[n] = NULL;
    struct np_launch_opts o = {.now = 1700000000, .synth_path = synth};
    struct np_error err;
    enum np_status st = np_launch_resolve(&set, np_env_list, (void *)e, &o, plan, &err);
    ck_assert_msg(st == NP_OK, "resolve: %s", err.text);
    return &plan->jobs[0];
}

static char *render(const struct np_launch_config *c)
{
    char *s = NULL;
    struct np_error err;
    ck_assert_msg(np_script_render(c, &s, &err) == NP_OK, "render: %s", err.text);
    return s;
}

/* sh -n and bash -n accept the script text. */
static void syntax_ok(const char *script)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/syntax.sh", tmp);
    write_file(path, script, 0644);
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "sh -n '%s' && bash -n '%s'", path, path);
    ck_assert_msg(system(cmd) == 0, "syntax check failed for:\n%s", script);
}

/* bash -n accepts it (the nccl-tests script is bash: arrays, mapfile; sbatch runs its #!/bin/bash) */
static void bash_ok(const char *script)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/syntax.sh", tmp);
    write_file(path, script, 0644);
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "bash -n '%s'", path);
    ck_assert_msg(system(cmd) == 0, "bash -n failed for:\n%.3000s", script);
}

#define HAS(s, x) ck_assert_msg(strstr((s), (x)) != NULL, "missing [%s] in:\n%s", (x), (s))
#define HASNT(s, x) ck_assert_msg(strstr((s), (x)) == NULL, "unexpected [%s] in:\n%s", (x), (s))

START_TEST(test_synthetic_script)
{
    struct np_launch_plan plan;
    const char *env[] = {"WORKLOAD=synthetic", "MODEL_SIZE=15b", "DTYPE=bf16", "JOB_TOTAL_GPUS=16", "MAX_STEPS=7",
                         "SBATCH_ACCOUNT=acct", "SBATCH_PARTITION=batch", "SBATCH_GPUS_PER_NODE=8",
                         "HF_TOKEN=supersecret-token", NULL};
    struct np_launch_config *c = resolve(NULL, env, &plan);
    char *s = render(c);
    char want[8192];
    HAS(s, "#!/bin/bash\n#SBATCH --job-name=pretrain_nemotron4_15b_bf16_16\n#SBATCH --nodes=2\n"
           "#SBATCH --ntasks-per-node=8\n#SBATCH --exclusive\n#SBATCH --mem=0\n#SBATCH --open-mode=append\n"
           "#SBATCH --time=00:30:00\n");
    snprintf(want, sizeof want, "#SBATCH --output=\"%s/sbatch_pretrain_nemotron4_15b_bf16_16_%%j.out\"\n",
             c->experiment_dir);
    HAS(s, want);
    HAS(s, "#SBATCH --account=\"acct\"\n#SBATCH --partition=\"batch\"\n#SBATCH --gpus-per-node=\"8\"\n");
    HAS(s, "#SBATCH --export=ALL\n#SBATCH --no-requeue\n"); /* NeMo-Run never requeued */
    HAS(s, "export TORCH_NCCL_AVOID_RECORD_STREAMS='1'\n");
    /* Nemotron4 reads nothing from the Hub (null tokenizer): no token passed, as NVIDIA's 25.02 script */
    HASNT(s, "TRANSFORMERS_OFFLINE");
    HAS(s, "export TOKENIZERS_PARALLELISM='False'\nexport NCCL_NVLS_ENABLE='0'\nexport NVTE_FLASH_ATTN='1'\n"
           "export NVTE_FUSED_ATTN='1'\nexport NEMO_LOG_MEMORY_USAGE='1'\nexport PYTHONUNBUFFERED='1'\n"
           "export SLURM_UNBUFFEREDIO='1'\nexport CUDA_DEVICE_MAX_CONNECTIONS='1'\n" /* TP2 */
           "export NVTE_FWD_LAYERNORM_SM_MARGIN='16'\nexport NVTE_BWD_LAYERNORM_SM_MARGIN='16'\n");
    HASNT(s, "NCCL_P2P_NET_CHUNKSIZE"); /* PP1 */
    HASNT(s, "NCCL_DEBUG");
    HASNT(s, "supersecret");
    snprintf(want, sizeof want, "export NEMO_HOME='%s'\nexport HF_HOME='%s'\n", stage, stage);
    HAS(s, want);
    snprintf(want, sizeof want, "--output '%s/log-pretrain_nemotron4_15b_bf16_16_%%j_'\"${SLURM_RESTART_COUNT:-0}\"'.out'",
             c->experiment_dir);
    HAS(s, want);
    HAS(s, "'--tp' '2'");
    HAS(s, "'--gbs' '64'");
    HAS(s, "'--max-steps' '7'");
    HAS(s, "'--seq-len' '4096'");
    HASNT(s, "--container");
    HASNT(s, "--vp");
    HASNT(s, "scontrol requeue");
    HAS(s, "if [ \"${SLURM_RESTART_COUNT:-0}\" -gt 0 ]; then\n"
           "    echo \"nemoperf: requeued by Slurm, but NEMOPERF_MAX_RETRIES=0: not running again\"\n    exit 1\nfi\n");
    HASNT(s, "vboost"); /* the synthetic job has no GPUs to boost */
    syntax_ok(s);
    char **names = np_script_env_names(c);
    int has_tok = 0;
    for (char **p = names; *p; p++)
        has_tok |= strcmp(*p, "HF_TOKEN") == 0;
    ck_assert(!has_tok); /* issue 23: the job never gets the token */
    np_strv_free(names);
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_nemo_script)
{
    struct np_launch_plan plan;
    const char *env[] = {"MODEL_SIZE=70b", "DTYPE=fp8", "JOB_TOTAL_GPUS=64", "HF_TOKEN=supersecret-token",
                         "ENABLE_PROFILE=1", NULL};
    struct np_launch_config *c = resolve(NULL, env, &plan);
    char *s = render(c);
    char want[8192];
    HAS(s, "#SBATCH --nodes=8\n");
    HAS(s, "export NCCL_P2P_NET_CHUNKSIZE='2097152'\n");
    HAS(s, "export CUDA_DEVICE_MAX_CONNECTIONS='1'\n");
    snprintf(want, sizeof want, "--container-image '%s/nvidia+nemo+25.02.01.sqsh'", stage);
    HAS(s, want);
    snprintf(want, sizeof want, "--container-mounts '%s:%s,%s:/nemo_run'", stage, stage, c->experiment_dir);
    HAS(s, want);
    HAS(s, "--container-workdir /nemo_run/code");
    HAS(s, "--wait=60 --kill-on-bad-exit=1 --mpi=pmix");
    HAS(s, "--container-env=TORCH_NCCL_AVOID_RECORD_STREAMS,TRANSFORMERS_OFFLINE,HF_HUB_OFFLINE,");
    HAS(s, "export TRANSFORMERS_OFFLINE='1'\nexport HF_HUB_OFFLINE='1'\n");
    HAS(s, ",NEMO_HOME,HF_HOME \\\n");
    HASNT(s, ",HF_TOKEN");
    HASNT(s, "supersecret");
    snprintf(want, sizeof want, "nsys profile -s none -t nvtx,cuda --force-overwrite=true "
                                "--capture-range=cudaProfilerApi --capture-range-end=stop --cuda-graph-trace=node "
                                "--cuda-event-trace=false -o '%s/nsys_profile/profile_%%p'",
             c->experiment_dir);
    HAS(s, want);
    /* vboost: one task per node on the host, failures ignored */
    HAS(s, "srun --ntasks=8 --ntasks-per-node=1 --output '");
    HAS(s, "bash -c 'sudo nvidia-smi boost-slider --vboost 1' ||\n    echo \"nemoperf: vboost failed (ignored)\"\n");
    /* the driver, with the settings NVIDIA's pretrain_llama31.py applied */
    HAS(s, "'python' \\\n    '/nemo_run/code/nemoperf_nemo.py' \\\n    '--task' 'pretrain' \\\n"
           "    '--factory' 'llama3_70b' \\\n    '--nodes' '8' \\\n    '--gpus-per-node' '8' \\\n"
           "    '--max-steps' '25' \\\n    '--tp' '4' \\\n    '--pp' '8' \\\n    '--cp' '1' \\\n"
           "    '--vp' '5' \\\n");
    HAS(s, "'--gbs' '128'");
    HAS(s, "'--fp8' 'delayed'");
    HAS(s, "'--tp-comm-overlap-cfg' 'userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192'");
    HAS(s, "'--profile-start' '20' \\\n    '--profile-stop' '25' \\\n    '--profile-ranks' '8'");
    snprintf(want, sizeof want, "'--tokenizer-hf' '%s/hf/meta-llama/Meta-Llama-3-70B'", stage);
    HAS(s, want);
    HASNT(s, "--checkpoint-save");
    HASNT(s, "numactl --cpunodebind"); /* 25.02 did not bind (the snapshot step runs numactl -H) */
    HASNT(s, "--segment");
    HASNT(s, "scontrol requeue");
    HAS(s, "#SBATCH --no-requeue\n");
    HAS(s, "pretrain_llama3.1_70b_fp8_64_nsys");
    syntax_ok(s);
    free(s);
    np_launch_plan_free(&plan);

    /* NCCL trace: debug variables, 5 steps, 15 minutes; bf16 8b: VP None, no FP8 */
    const char *env2[] = {"MODEL_SIZE=8b", "ENABLE_NCCLTRACE=yes", "NEMOPERF_MAX_RETRIES=2",
                          "NEMOPERF_SRUN_MPI=none", NULL};
    c = resolve(NULL, env2, &plan);
    s = render(c);
    HAS(s, "export NCCL_DEBUG='INFO'\nexport NCCL_DEBUG_SUBSYS='COLL,P2P,NET'\n");
    HAS(s, "#SBATCH --time=00:15:00\n");
    HAS(s, "'--max-steps' '5'");
    HAS(s, "'--vp' 'none'");
    HAS(s, "'--fp8' 'none'");
    HASNT(s, "--tp-comm-overlap-cfg");
    HASNT(s, "nsys");
    HASNT(s, "--mpi=");
    /* requeue only when asked */
    HAS(s, "#SBATCH --requeue\n");
    HAS(s, "scontrol requeue \"$SLURM_JOB_ID\"");
    HAS(s, "-lt 2 ]");
    syntax_ok(s);
    free(s);
    np_launch_plan_free(&plan);

    /* seed 000, GB200: 4 GPUs per node, NVIDIA's numactl words (NEMOPERF_NUMA_BIND=nvidia), --segment beyond 18 nodes */
    snprintf(want, sizeof want, "%s/nvidia+nemo+25.04.sqsh", stage);
    write_file(want, "sqsh", 0644);
    const char *env3[] = {"RECIPE=nemotron", "MODEL_SIZE=340b", "DTYPE=fp8", "GPU_TYPE=gb200", "JOB_TOTAL_GPUS=128", NULL};
    c = resolve(NULL, env3, &plan);
    s = render(c);
    HAS(s, "#SBATCH --nodes=32\n#SBATCH --ntasks-per-node=4\n");
    HAS(s, "#SBATCH --segment=16\n");
    HAS(s, "export CUDA_DEVICE_MAX_CONNECTIONS='32'\n");
    HAS(s, "export NVTE_NORM_FWD_USE_CUDNN='1'\nexport NVTE_NORM_BWD_USE_CUDNN='1'\n");
    HAS(s, " \\\n    numactl --cpunodebind=$((SLURM_LOCALID/4)) --membind=$((SLURM_LOCALID/4)) \\\n    'python'");
    HAS(s, "'--fp8' 'current'");
    HAS(s, "'--cuda-graphs'");
    HAS(s, "'--tokenizer-null' '256000' \\\n    '--tokenizer-on-model'");
    syntax_ok(s);
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_checkpoint_args)
{
    char ck[1200], p[1300];
    snprintf(ck, sizeof ck, "%s/ck", stage);
    mkdir(ck, 0755);
    snprintf(p, sizeof p, "%s/weights", ck);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/weights/a.distcp", ck);
    write_file(p, "x", 0644);
    char lp[1300];
    snprintf(lp, sizeof lp, "LOAD_CHECKPOINT_PATH=%s", ck);
    struct np_launch_plan plan;
    const char *env[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", "JOB_TOTAL_GPUS=16", "ENABLE_CHECKPOINT=1", lp,
                         "NEMOPERF_FORCE_CHECKPOINT=1", NULL};
    struct np_launch_config *c = resolve(NULL, env, &plan);
    char *s = render(c);
    char want[8192], real[4096];
    ck_assert(realpath(ck, real));
    snprintf(want, sizeof want, "'--checkpoint-save' '%s/code/nemo_experiments/default/checkpoints'", c->experiment_dir);
    HAS(s, want);
    snprintf(want, sizeof want, "'--checkpoint-load' '%s'", real);
    HAS(s, want);
    HAS(s, "'--max-steps' '1'");
    free(s);
    np_launch_plan_free(&plan);

    const char *env2[] = {"MODEL_SIZE=8b", "JOB_TOTAL_GPUS=16", "ENABLE_CHECKPOINT=1", lp, "HF_TOKEN=t",
                          "NEMOPERF_FORCE_CHECKPOINT=1", NULL};
    c = resolve(NULL, env2, &plan);
    s = render(c);
    HAS(s, "'--checkpoint-save'");
    HAS(s, "'--overlap-param-gather-with-optimizer-step' 'false'");
    snprintf(want, sizeof want, "'--checkpoint-load' '%s'", real);
    HAS(s, want);
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

/* Run script under bash with the stubs first on PATH; return srun's record. */
static char *run_script(const char *script, const char *workdir, int srun_exit, int *status)
{
    char path[1200], out[1200], cmd[4000];
    snprintf(path, sizeof path, "%s/job.sh", tmp);
    write_file(path, script, 0755);
    snprintf(out, sizeof out, "%s/srun.out", tmp);
    unlink(out);
    char *qw = np_shell_quote(workdir);
    snprintf(cmd, sizeof cmd,
             "cd %s && PATH='%s/bin':\"$PATH\" NP_SRUN_OUT='%s' NP_SRUN_EXIT=%d SLURM_JOB_ID=77 "
             "bash '%s' > '%s/job.log' 2>&1",
             qw, tmp, out, srun_exit, path, tmp);
    free(qw);
    *status = system(cmd);
    static char buf[16384];
    FILE *f = fopen(out, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

START_TEST(test_hostile_stage_path)
{
    char hostile[1024];
    /* no '%': launch refuses it since issue 13 (Slurm reads it as a file name pattern) */
    snprintf(hostile, sizeof hostile, "%s/st a'ge \"q\" $(touch pwned) `touch pwned` ;touch pwned; 100p *", tmp);
    ck_assert(mkdir(hostile, 0755) == 0);
    struct np_launch_plan plan;
    const char *env[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", "JOB_TOTAL_GPUS=8", "MAX_STEPS=3", "ENABLE_PROFILE=1",
                         "PROFILE_START_STEP=1", "PROFILE_STOP_STEP=3", "NEMOPERF_MAX_RETRIES=3", NULL};
    struct np_launch_config *c = resolve(hostile, env, &plan);
    struct np_error err;
    ck_assert_msg(np_experiment_create(c, &err) == NP_OK, "%s", err.text);
    char *s = render(c);
    syntax_ok(s);
    /* the #SBATCH argument is one sbatch token: double quotes with \" escapes, % doubled */
    char *pat = np_slurm_pattern_escape(c->experiment_dir);
    char *q = np_sbatch_quote(pat);
    char want[8192];
    snprintf(want, sizeof want, "#SBATCH --output=%.*s/sbatch_%s_%%j.out\"\n", (int)strlen(q) - 1, q, c->job_name);
    HAS(s, want);
    free(q);
    int status;
    const char *rec = run_script(s, tmp, 0, &status);
    ck_assert_msg(rec != NULL, "srun stub did not run");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "script failed: %d", status);
    /* every argument arrived literally */
    snprintf(want, sizeof want, "<--output>\n<%s/log-%s_%%j_0.out>\n", pat, c->job_name);
    HAS(rec, want);
    snprintf(want, sizeof want, "<%s/bin/nemoperf-synth>\n", tmp);
    HAS(rec, want);
    HAS(rec, "<--profile-start>\n<1>\n<--profile-stop>\n<3>\n");
    snprintf(want, sizeof want, "NEMO_HOME=<%s>\nPROFILE_DIR=<%s/nsys_profile>\nPWD=<%s>\n", hostile,
             c->experiment_dir, c->experiment_dir);
    HAS(rec, want);
    free(pat);
    /* nothing executed: no file named pwned anywhere under tmp */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -name pwned)\"", tmp);
    ck_assert_msg(system(cmd) == 0, "a 'pwned' file was created");
    ck_assert_msg(access("pwned", F_OK) != 0, "a 'pwned' file was created in the cwd");

    /* a failing step requeues while restarts remain, not after */
    rec = run_script(s, tmp, 1, &status);
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    char scp[1300];
    snprintf(scp, sizeof scp, "%s/srun.out.scontrol", tmp);
    FILE *f = fopen(scp, "r");
    ck_assert_msg(f != NULL, "no requeue after a failed step");
    char line[200] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_str_eq(line, "scontrol requeue 77\n");
    /* an attempt Slurm requeued beyond NEMOPERF_MAX_RETRIES=3 does not run the step again */
    char *late = malloc(strlen(s) + 64);
    ck_assert_ptr_nonnull(late);
    ck_assert_int_eq(strncmp(s, "#!/bin/bash\n", 12), 0);
    sprintf(late, "#!/bin/bash\nexport SLURM_RESTART_COUNT=4\n%s", s + 12);
    rec = run_script(late, tmp, 0, &status);
    ck_assert_msg(rec == NULL, "srun ran in a fifth attempt");
    ck_assert_int_eq(WEXITSTATUS(status), 1);
    free(late);
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_file_name_and_vars)
{
    struct np_launch_plan plan;
    const char *env[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", "ENABLE_NCCLTRACE=1", NULL};
    struct np_launch_config *c = resolve(NULL, env, &plan);
    char *n = np_script_file_name(c);
    ck_assert_str_eq(n, "sbatch_pretrain_llama3.1_8b_bf16_8_nccltrace.sh");
    free(n);
    struct np_script_var v[NP_SCRIPT_MAX_VARS];
    size_t k = np_script_vars(c, v, NP_SCRIPT_MAX_VARS);
    int dbg = 0, tf = 0;
    for (size_t i = 0; i < k; i++) {
        dbg |= strcmp(v[i].name, "NCCL_DEBUG") == 0 && strcmp(v[i].value, "INFO") == 0;
        tf |= strcmp(v[i].name, "TRANSFORMERS_OFFLINE") == 0;
    }
    ck_assert(dbg);
    ck_assert(!tf); /* only with a token */
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_same_second_folders)
{
    /* two launches of the same experiment in one second: distinct folders, nothing reused */
    struct np_launch_plan a, b;
    const char *env[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", NULL};
    struct np_launch_config *ca = resolve(NULL, env, &a), *cb = resolve(NULL, env, &b);
    struct np_error err;
    ck_assert_str_eq(ca->experiment_dir, cb->experiment_dir);
    ck_assert_msg(np_experiment_create(ca, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(np_experiment_create(cb, &err) == NP_OK, "%s", err.text);
    ck_assert_str_ne(ca->experiment_dir, cb->experiment_dir);
    ck_assert_int_eq(cb->timestamp, ca->timestamp + 1);
    ck_assert_ptr_nonnull(strstr(cb->experiment_dir, "_1700000001/pretrain_llama3.1_8b_bf16_8"));
    struct stat st;
    char code[4200];
    snprintf(code, sizeof code, "%s/code", cb->experiment_dir);
    ck_assert(stat(code, &st) == 0 && S_ISDIR(st.st_mode));
    /* the manifest is written atomically and names the script */
    struct np_manifest m = {.config = cb, .backend = "cli", .submitted = 1, .job_id = "12", .submit_time = 0,
                            .script = "sbatch_x.sh"};
    ck_assert_int_eq(np_manifest_write(&m, &err), NP_OK);
    char mp[4300];
    snprintf(mp, sizeof mp, "%s/nemoperf.json", cb->experiment_dir);
    json_error_t je;
    json_t *o = json_load_file(mp, 0, &je);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(json_string_value(json_object_get(o, "job_id")), "12");
    ck_assert_str_eq(json_string_value(json_object_get(o, "submit_time")), "1970-01-01T00:00:00Z");
    ck_assert(json_is_true(json_object_get(o, "submitted")));
    ck_assert(json_is_null(json_object_get(o, "error")));
    json_t *cfg = json_object_get(o, "config");
    ck_assert_str_eq(json_string_value(json_object_get(cfg, "recipe")), "llama3.1");
    ck_assert_int_eq(json_integer_value(json_object_get(cfg, "gbs")), 128);
    ck_assert_int_eq(json_integer_value(json_object_get(cfg, "seq_len")), 8192);
    json_decref(o);
    np_launch_plan_free(&a);
    np_launch_plan_free(&b);
}
END_TEST

/* The manifest's "env_user" (issue 29): the variables the job exports that the launcher's environment set to
 * another value, with both values; the same value is not listed; a value that is not UTF-8 is recorded as null
 * and one longer than 512 bytes cut, so neither can make the manifest unwritable.  The environment is injected
 * (np_env_list): a stand-in for the user's shell, so the test does not depend on the one running it. */
START_TEST(test_manifest_env_user)
{
    struct np_launch_plan plan;
    const char *env[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", NULL};
    struct np_launch_config *c = resolve(NULL, env, &plan);
    static char longv[700];
    memset(longv, 'x', sizeof longv - 1);
    char longkv[720];
    snprintf(longkv, sizeof longkv, "NVTE_FUSED_ATTN=%s", longv);
    const char *user[] = {"NCCL_NVLS_ENABLE=1", "TOKENIZERS_PARALLELISM=False", "NVTE_FLASH_ATTN=\xff\xfe",
                          longkv, "NCCL_IB_HCA=mlx5_0", NULL};
    struct np_manifest m = {.config = c, .backend = "cli", .script = "x.sh", .env = np_env_list, .env_ctx = user};
    json_t *o = np_manifest_json(&m);
    ck_assert_ptr_nonnull(o);
    json_t *a = json_object_get(o, "env_user");
    ck_assert(json_is_array(a));
    ck_assert_int_eq(json_array_size(a), 3); /* not TOKENIZERS_PARALLELISM (same), not NCCL_IB_HCA (not exported) */
    json_t *e = json_array_get(a, 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "name")), "NCCL_NVLS_ENABLE");
    ck_assert_str_eq(json_string_value(json_object_get(e, "user")), "1");
    ck_assert_str_eq(json_string_value(json_object_get(e, "job")), "0");
    e = json_array_get(a, 1);
    ck_assert_str_eq(json_string_value(json_object_get(e, "name")), "NVTE_FLASH_ATTN");
    ck_assert(json_is_null(json_object_get(e, "user")));
    e = json_array_get(a, 2);
    ck_assert_str_eq(json_string_value(json_object_get(e, "name")), "NVTE_FUSED_ATTN");
    ck_assert_int_eq(strlen(json_string_value(json_object_get(e, "user"))), 512);
    char *dump = json_dumps(o, 0);
    ck_assert_ptr_nonnull(dump);
    free(dump);
    json_decref(o);
    /* an environment that sets none of them: an empty list, not a missing field */
    const char *none[] = {NULL};
    m.env_ctx = none;
    o = np_manifest_json(&m);
    ck_assert_int_eq(json_array_size(json_object_get(o, "env_user")), 0);
    json_decref(o);
    np_launch_plan_free(&plan);
}
END_TEST

/* RECIPE=nccl-tests: the plan of a check.  Every round's steps use disjoint nodes; bisect tests every node alone
 * and, ring, each node in two pairs (the last with the first) in at most 3 rounds, or, all, every pair once in
 * n-1 rounds (n even) or n (odd); full runs each chosen collective over all nodes, one round each. */
START_TEST(test_ncclt_plan)
{
    for (int mode = 0; mode < 2; mode++)
        for (int n = 1; n <= 13; n++) {
            struct np_ncclt_choice ch = {NP_NCCLT_BISECT, (enum np_ncclt_pairs)mode, 1u | 8u, "/usr/local/bin"};
            struct np_ncclt_plan p;
            ck_assert_int_eq(np_ncclt_plan(&ch, n, &p), NP_OK);
            int intra = 0, pairs = 0, seen[13][13] = {{0}}, per[13] = {0};
            for (int r = 0; r < p.rounds; r++) {
                int busy[13] = {0};
                for (size_t i = 0; i < p.n; i++) {
                    const struct np_ncclt_step *s = &p.steps[i];
                    if (s->round != r)
                        continue;
                    ck_assert_msg(!busy[s->node[0]], "n=%d round %d: node %d twice", n, r, s->node[0]);
                    busy[s->node[0]] = 1;
                    if (s->scope == NP_NCCLT_INTER) {
                        ck_assert_msg(!busy[s->node[1]], "n=%d round %d: node %d twice", n, r, s->node[1]);
                        busy[s->node[1]] = 1;
                        ck_assert_int_lt(s->node[0], s->node[1]);
                        if (s->binary == 0) {
                            ck_assert_msg(!seen[s->node[0]][s->node[1]]++, "n=%d: pair tested twice", n);
                            per[s->node[0]]++;
                            per[s->node[1]]++;
                            pairs++;
                        }
                    } else {
                        ck_assert_int_eq(s->scope, NP_NCCLT_INTRA);
                        intra += s->binary == 0;
                    }
                }
            }
            ck_assert_int_eq(intra, n);
            if (mode == NP_NCCLT_PAIRS_ALL) {
                ck_assert_int_eq(pairs, n * (n - 1) / 2);
                ck_assert_int_eq(p.rounds, 2 + 2 * (n < 2 ? 0 : n % 2 ? n : n - 1)); /* 2 collectives */
            } else {
                ck_assert_int_eq(pairs, n < 2 ? 0 : n == 2 ? 1 : n);
                for (int i = 0; n > 2 && i < n; i++)
                    ck_assert_int_eq(per[i], 2);
                ck_assert_int_le(p.rounds, 2 + 2 * 3);
            }
            np_ncclt_plan_free(&p);
        }
    struct np_ncclt_choice full = {NP_NCCLT_FULL, NP_NCCLT_PAIRS_RING, 31u, "/usr/local/bin"};
    struct np_ncclt_plan p;
    ck_assert_int_eq(np_ncclt_plan(&full, 4, &p), NP_OK);
    ck_assert_int_eq(p.n, 5);
    ck_assert_int_eq(p.rounds, 5);
    for (size_t i = 0; i < p.n; i++)
        ck_assert_int_eq(p.steps[i].scope, NP_NCCLT_ALL);
    np_ncclt_plan_free(&p);
    ck_assert_int_eq(np_ncclt_plan(&full, 0, &p), NP_E_INVALID);
}
END_TEST

/* RECIPE=nccl-tests FABRIC_CHECK=bisect: one job over the nodes, each step NVIDIA's binary with NVIDIA's flags
 * (dgxc-benchmarking nccl/config/testset.toml), one task per GPU, the pyxis image, the rounds run at once; the
 * manifest says kind nccl-tests and its plan; bash reads the script. */
START_TEST(test_ncclt_script)
{
    char p[1200], spv[1100];
    snprintf(p, sizeof p, "%s/nvidia+nemo+26.04.01.sqsh", stage);
    write_file(p, "sqsh", 0644);
    snprintf(spv, sizeof spv, "STAGE_PATH=%s", stage);
    const char *env[] = {spv, "RECIPE=nccl-tests", "FABRIC_CHECK=bisect", "JOB_TOTAL_GPUS=32", NULL};
    struct np_launch_opts o = {.now = 1700000000};
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_msg(np_launch_resolve(&set, np_env_list, (void *)env, &o, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.n, 1);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_str_eq(c->experiment, "nccl-tests_bisect_h100_32");
    ck_assert_int_eq(c->nodes, 4);
    char *s = render(c);
    bash_ok(s);
    HAS(s, "#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\n#SBATCH --exclusive\n#SBATCH --mem=0\n");
    HAS(s, "export NCCL_DEBUG='WARN'\nexport NCCL_NET='IB'\n");
    HAS(s, "NCCL_NVLS_ENABLE=0 srun --nodes=\"$2\" --ntasks=$(($2 * 8)) --ntasks-per-node=8 --nodelist=\"$3\" "
           "--mpi=pmix --cpu-bind=none");
    HAS(s, "--no-container-mount-home");
    HAS(s, "'/usr/local/bin/all_reduce_perf_mpi' '-t' '1' '-g' '1' '-f' '2' '-n' '20' '-w' '5' '-b' '8' '-e' '16G' "
           "'-R' '0' '-c' '1' '-d' 'float'");
    HAS(s, "ncclt_all_reduce_perf all_reduce_perf-\"${nodes[3]}\" 1 \"${nodes[3]}\" &\n");
    HAS(s, "ncclt_all_reduce_perf all_reduce_perf-\"${nodes[0]}-${nodes[3]}\" 2 \"${nodes[0]},${nodes[3]}\" &\n");
    HAS(s, "# round 3 of 3\n");
    HASNT(s, "# round 4");
    HASNT(s, "all_gather_perf"); /* bisect: all_reduce unless NCCL_TESTS says more */
    free(s);
    struct np_manifest m = {.config = c, .backend = "cli", .submitted = 1, .job_id = "7"};
    json_t *j = np_manifest_json(&m);
    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "nccl-tests");
    ck_assert_str_eq(json_string_value(json_object_get(j, "workload")), "nccl-tests");
    json_t *nt = json_object_get(j, "nccl_tests");
    ck_assert_str_eq(json_string_value(json_object_get(nt, "check")), "bisect");
    ck_assert_int_eq(json_integer_value(json_object_get(nt, "rounds")), 3);
    ck_assert_int_eq(json_array_size(json_object_get(nt, "plan")), 8);
    /* no model: the counts a training run has are null, never 0 (parse refuses a manifest with a zero count) */
    json_t *cfg = json_object_get(j, "config");
    static const char *const none[] = {"dtype", "tp", "pp", "cp", "dp", "mbs", "gbs", "ga", "layers", "seq_len",
                                       "max_steps", NULL};
    for (size_t i = 0; none[i]; i++)
        ck_assert_msg(json_is_null(json_object_get(cfg, none[i])), "config.%s is not null", none[i]);
    ck_assert_int_eq(json_integer_value(json_object_get(cfg, "gpus")), 32);
    json_decref(j);
    np_launch_plan_free(&plan);

    /* a plan past what parse reads of one check (4096 steps): refused naming the variables */
    const char *big[] = {spv, "RECIPE=nccl-tests", "FABRIC_CHECK=bisect", "FABRIC_PAIRS=all", "JOB_TOTAL_GPUS=800",
                         NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)big, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "JOB_TOTAL_GPUS=800 with FABRIC_PAIRS=all and NCCL_TESTS of 1 collective(s): 5050 "
                                   "steps in one check; allowed: at most 4096") != NULL, "%s", err.text);
    np_launch_plan_free(&plan);
    big[3] = "FABRIC_PAIRS=ring"; /* 100 nodes alone + 100 pairs */
    ck_assert_msg(np_launch_resolve(&set, np_env_list, (void *)big, &o, &plan, &err) == NP_OK, "%s", err.text);
    np_launch_plan_free(&plan);

    /* full (the default) over one node: the five binaries one after the other, alltoall and sendrecv in uint8 with
     * their env1 */
    const char *env1[] = {spv, "RECIPE=nccl-tests", "GPU_TYPE=gb200", NULL};
    ck_assert_msg(np_launch_resolve(&set, np_env_list, (void *)env1, &o, &plan, &err) == NP_OK, "%s", err.text);
    c = &plan.jobs[0];
    ck_assert_int_eq(c->gpus_per_node, 4);
    s = render(c);
    bash_ok(s);
    HAS(s, "export NCCL_IB_SL='1'\n");
    HAS(s, "NCCL_NCHANNELS_PER_NET_PEER=1 srun");
    HAS(s, "NCCL_NCHANNELS_PER_NET_PEER=2 srun");
    HAS(s, "'/usr/local/bin/sendrecv_perf_mpi' '-t' '1' '-g' '1' '-f' '2' '-n' '20' '-w' '5' '-b' '8' '-e' '16G' "
           "'-R' '0' '-c' '1' '-d' 'uint8'");
    HAS(s, "ncclt_sendrecv_perf sendrecv_perf-\"${nodes[0]}\" 1 \"${nodes[0]}\" &\n");
    HAS(s, "# round 5 of 5\n");
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

/* The system snapshot (default) and the GPU telemetry (ENABLE_GPU_METRICS) are steps of their own: the snapshot
 * before the workload's step, the telemetry beside it (srun --overlap) and stopped once it has ended with its exit
 * status kept; SNAPSHOT=false and metrics off leave neither in the script, and the workload's step is the same
 * text in all three. */
START_TEST(test_system_steps)
{
    struct np_launch_plan p0, p1, p2;
    const char *e0[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", "JOB_TOTAL_GPUS=16", "MAX_STEPS=3", NULL};
    const char *e1[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", "JOB_TOTAL_GPUS=16", "MAX_STEPS=3", "SNAPSHOT=false", NULL};
    const char *e2[] = {"WORKLOAD=synthetic", "MODEL_SIZE=8b", "JOB_TOTAL_GPUS=16", "MAX_STEPS=3",
                        "ENABLE_GPU_METRICS=yes", "NEMOPERF_GPU_METRICS_MS=250", NULL};
    struct np_launch_config *c0 = resolve(NULL, e0, &p0), *c1 = resolve(NULL, e1, &p1), *c2 = resolve(NULL, e2, &p2);
    ck_assert_int_eq(c0->snapshot, 1);
    ck_assert_int_eq(c0->gpu_metrics, 0);
    ck_assert_int_eq(c0->gpu_metrics_ms, 1000);
    char *s0 = render(c0), *s1 = render(c1), *s2 = render(c2);
    syntax_ok(s0);
    syntax_ok(s2);
    const char *snap = strstr(s0, "--job-name=nemoperf-snapshot"), *work = strstr(s0, "srun \\\n    --output ");
    ck_assert_msg(snap && work && snap < work, "no snapshot step before the workload's:\n%s", s0);
    HAS(s0, "timeout -k 5 60 srun --overlap --nodes=\"$SLURM_JOB_NUM_NODES\" --ntasks=\"$SLURM_JOB_NUM_NODES\" "
            "--ntasks-per-node=1 --kill-on-bad-exit=0 --job-name=nemoperf-snapshot");
    HAS(s0, "nvidia-smi -q -x >\"$d/nvidia-smi-q.xml\"");
    HASNT(s0, "nemoperf-gpu-metrics");
    HASNT(s1, "nemoperf-snapshot");
    HASNT(s1, "/system");
    HASNT(s1, "telemetry");
    /* the workload's step and what follows it: the same bytes with and without the snapshot */
    ck_assert_str_eq(strstr(s0, "srun \\\n    --output "), strstr(s1, "srun \\\n    --output "));
    /* telemetry: overlapping, the fields in order, the interval; stopped after the step, $rc the step's */
    HAS(s2, "srun --overlap --nodes=\"$SLURM_JOB_NUM_NODES\"");
    HAS(s2, " 250 timestamp,index,uuid,pci.bus_id,power.draw,power.limit,clocks.sm,clocks.max.sm,clocks.mem,"
            "temperature.gpu,utilization.gpu,clocks_event_reasons.active,clocks_event_reasons.hw_slowdown,"
            "clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_thermal_slowdown,"
            "clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown >/dev/null");
    const char *start = strstr(s2, "np_gpu_metrics=$!\n"), *w2 = strstr(s2, "srun \\\n    --output "),
               *rc = strstr(s2, "\nrc=$?\n"), *stop = strstr(s2, "kill \"$np_gpu_metrics\""),
               *ex = strstr(s2, "exit \"$rc\"\n");
    ck_assert_msg(start && w2 && rc && stop && ex && start < w2 && w2 < rc && rc < stop && stop < ex,
                  "telemetry not started before and stopped after the workload's step:\n%s", s2);
    /* the environment the workload gets is the same in all three */
    char *x0 = strstr(s0, "\nexport "), *x2 = strstr(s2, "\nexport ");
    size_t n0 = (size_t)(strstr(x0, "\necho ") - x0), n2 = (size_t)(strstr(x2, "\necho ") - x2);
    ck_assert_uint_eq(n0, n2);
    ck_assert_int_eq(memcmp(x0, x2, n0), 0);
    /* the manifest says what was asked */
    struct np_manifest m = {.config = c2, .backend = "cli", .submit_time = 1700000000, .script = "x.sh"};
    json_t *o = np_manifest_json(&m), *sys = json_object_get(o, "system");
    ck_assert_ptr_nonnull(sys);
    ck_assert(json_is_true(json_object_get(sys, "snapshot")));
    ck_assert(json_is_true(json_object_get(sys, "gpu_metrics")));
    ck_assert_int_eq(json_integer_value(json_object_get(sys, "interval_ms")), 250);
    json_decref(o);
    free(s0);
    free(s1);
    free(s2);
    np_launch_plan_free(&p0);
    np_launch_plan_free(&p1);
    np_launch_plan_free(&p2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("script");
    TCase *tc = tcase_create("script");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_synthetic_script);
    tcase_add_test(tc, test_nemo_script);
    tcase_add_test(tc, test_checkpoint_args);
    tcase_add_test(tc, test_hostile_stage_path);
    tcase_add_test(tc, test_file_name_and_vars);
    tcase_add_test(tc, test_same_second_folders);
    tcase_add_test(tc, test_manifest_env_user);
    tcase_add_test(tc, test_ncclt_plan);
    tcase_add_test(tc, test_ncclt_script);
    tcase_add_test(tc, test_system_steps);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
