#!/bin/sh
# demo.sh - `make demo`: a local Slurm cluster, a synthetic Llama 3.1 8b BF16 sweep at 8, 16 and 32 GPUs
# launched exactly as a user would (./launch), then nemoperf-parse's markdown table of the three runs
# and its plot (throughput per GPU and MFU against GPU count), whose path is printed.
# The cluster (munge, slurmctld, 4 slurmd, slurmrestd) stays up; `tests/slurm/cluster down` stops it.
set -eu
cd "$(dirname "$0")/.."
STAGE=${NEMOPERF_DEMO_STAGE:-/tmp/nemoperf-demo}
STEPS=${NEMOPERF_DEMO_STEPS:-30}

echo "== local Slurm cluster (tests/slurm/cluster up)"
tests/slurm/cluster up
eval "$(tests/slurm/cluster env)"
sinfo

mkdir -p "$STAGE"
echo
echo "== STAGE_PATH=$STAGE WORKLOAD=synthetic DTYPE=bf16 MODEL_SIZE=8b JOB_TOTAL_GPUS=8,16,32 MAX_STEPS=$STEPS ./launch"
out=$(STAGE_PATH=$STAGE WORKLOAD=synthetic DTYPE=bf16 MODEL_SIZE=8b JOB_TOTAL_GPUS=8,16,32 MAX_STEPS=$STEPS ./launch)
printf '%s\n' "$out"
jobs=$(printf '%s\n' "$out" | sed -n 's/^job \([0-9][0-9]*\): .*/\1/p')
dirs=$(printf '%s\n' "$out" | sed -n 's/^job [0-9][0-9]*: //p')
[ -n "$jobs" ] || { echo "demo: launch printed no job id" >&2; exit 1; }

echo
printf '== waiting for jobs %s' "$(echo $jobs)"
deadline=$(( $(date +%s) + ${NEMOPERF_DEMO_TIMEOUT:-600} ))
while :; do
    live=$(squeue -h -j "$(echo $jobs | tr ' ' ',')" -o %T 2>/dev/null | grep -cvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT)$' || true)
    [ "$live" -eq 0 ] && break
    [ "$(date +%s)" -lt "$deadline" ] || { echo; echo "demo: jobs still running after the timeout" >&2; exit 1; }
    printf '.'
    sleep 2
done
echo
for j in $jobs; do scontrol show job "$j" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sed "s/^/job $j: /"; done

echo
echo "== bin/nemoperf-parse --format markdown (the published layout; the manifests say WORKLOAD=synthetic: CPU work"
echo "   standing in for the GPU job, so step time and tokens/s are measured, GPU MFU and time to train are n/a)"
plot=$(cd "$STAGE" && pwd)/sweep-llama3.1-8b-bf16.png
# shellcheck disable=SC2086
printf '%s\n' "$dirs" | tr '\n' '\0' | xargs -0 bin/nemoperf-parse --format markdown --plot "$plot"
echo
echo "== the sweep as a picture (throughput per GPU and MFU against GPU count, perfect weak scaling dashed):"
echo "$plot"
echo
echo "== bin/nemoperf-parse --reference (NVIDIA's published H100 figures are for the real workload)"
printf '%s\n' "$dirs" | tr '\n' '\0' | xargs -0 bin/nemoperf-parse --reference | grep '^reference not compared' \
    || { echo "demo: --reference compared synthetic runs" >&2; exit 1; }
echo
echo "The cluster is still up: eval \"\$(tests/slurm/cluster env)\" to use it, tests/slurm/cluster down to stop it."
