#!/bin/sh
# submit.sh - time 32 submissions of one launch through slurmrestd (one libcurl handle, so one
# connection for every request) against 32 sbatch runs, on the local test cluster; median of
# REPS runs (default 3) each; prints both medians and the ratio.  Run from the repo root as
# root (`make bench`); starts the cluster when it is not up (and stops it again afterwards).
#
# Both sides run the same nemoperf-launch: a sweep JOB_TOTAL_GPUS=8,16 with the hidden bench
# knob NEMOPERF_BENCH_COPIES=16 (each job submitted 16 times, each copy in its own folder) =
# 32 jobs, with SLURM_SUBMIT=rest (unix socket) or SLURM_SUBMIT=cli.  Folder creation, script
# rendering and manifests are the same work on both sides and included in the times; the jobs
# are cancelled right after each run.
set -u
REPS=${REPS:-3}
COPIES=16
cluster=tests/slurm/cluster
launch=$(pwd)/bin/nemoperf-launch
[ -x "$launch" ] || { echo "submit.sh: build first (make)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "submit.sh: run as root (uses the local test cluster)" >&2; exit 1; }
started=0
if ! "$cluster" status >/dev/null 2>&1; then
    "$cluster" up || { echo "submit.sh: cluster up failed" >&2; exit 1; }
    started=1
fi
eval "$("$cluster" env)"
W=$(mktemp -d "${TMPDIR:-/tmp}/np-bench-submit.XXXXXX") || exit 1
chmod 0755 "$W"
mkdir "$W/stage" && chown "$NP_CLUSTER_USER" "$W/stage"
cleanup() {
    rm -rf "$W"
    [ "$started" = 1 ] && "$cluster" down
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# one_run cli|rest: prints the milliseconds 32 submissions took
one_run() {
    t0=$(now_ms)
    runuser -u "$NP_CLUSTER_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin SLURM_CONF="$SLURM_CONF" \
        WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 JOB_TOTAL_GPUS=8,16 MAX_STEPS=6 STAGE_PATH="$W/stage" \
        NEMOPERF_BENCH_COPIES=$COPIES SLURM_SUBMIT="$1" SLURMRESTD_URL="$SLURMRESTD_URL" \
        "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    t1=$(now_ms)
    n=$(grep -c '^job [0-9]*: ' "$W/out")
    # shellcheck disable=SC2046
    scancel $(sed -n 's/^job \([0-9]*\): .*/\1/p' "$W/out") 2>/dev/null
    if [ "$rc" -ne 0 ] || [ "$n" -ne $((2 * COPIES)) ]; then
        echo "submit.sh: $1 run failed (exit $rc, $n jobs): $(tail -3 "$W/err")" >&2
        exit 1
    fi
    [ "$1" = rest ] && sed -n 's/.*slurmrestd: \(.*\)/\1/p' "$W/err" >"$W/stats"
    rm -rf "$W/stage/experiments"
    echo $((t1 - t0))
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

: >"$W/cli"
: >"$W/rest"
i=0
while [ "$i" -lt "$REPS" ]; do
    one_run rest >>"$W/rest" || exit 1
    one_run cli >>"$W/cli" || exit 1
    sleep 1 # let the cancelled jobs clear
    i=$((i + 1))
done
r=$(median <"$W/rest")
c=$(median <"$W/cli")
echo "submit 32 jobs (one launch, sweep 8,16 x $COPIES), median of $REPS:"
echo "  slurmrestd (unix socket, one handle):    ${r} ms   runs: $(tr '\n' ' ' <"$W/rest")"
echo "  sbatch x32:                             ${c} ms   runs: $(tr '\n' ' ' <"$W/cli")"
echo "  slurmrestd side: $(cat "$W/stats" 2>/dev/null) (version discovery pings the newest"
echo "  versions first; slurmrestd closes the connection after each 404, the submissions share one)"
awk -v r="$r" -v c="$c" 'BEGIN { if (r > 0) printf "  ratio sbatch/rest: %.2fx (%s)\n", c / r, (c >= r ? "REST not slower" : "REST SLOWER") }'
