#!/bin/sh
# 10-launch-runs.sh - nemoperf-launch on the real local Slurm cluster, WORKLOAD=synthetic:
# llama3.1 8b bf16 at 8 GPUs (from inside a fake job environment), the sweep 8,16,32,
# nemotron4 15b at 16 GPUs (2 nodes), profile, NCCL trace, checkpoint save then load
# from the saved path, and a STAGE_PATH with spaces, quotes, $(...) and backticks.
# Each job is waited for; folder, manifest, script and logs are checked, and
# nemoperf-parse --format json must report every run "ok".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
launch=$bindir/nemoperf-launch
parse=$bindir/nemoperf-parse
cluster=$root/tests/slurm/cluster
T=10-launch
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }

[ -x "$launch" ] && [ -x "$bindir/nemoperf-synth" ] || die "$launch or nemoperf-synth not built (make)"
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
unset RECIPE MODEL_SIZE DTYPE JOB_TOTAL_GPUS GPUS_PER_NODE GPU_TYPE TIME_LIMIT MAX_STEPS ENABLE_PROFILE \
    ENABLE_NCCLTRACE ENABLE_CHECKPOINT LOAD_CHECKPOINT_PATH PROFILE_START_STEP PROFILE_STOP_STEP HF_TOKEN \
    RUN_CONF_IMAGE NEMOPERF_FORCE_CHECKPOINT NEMOPERF_SBATCH_TIMEOUT
"$cluster" status >/dev/null 2>&1 || "$cluster" up || die "cluster up failed"
eval "$("$cluster" env)" || die "cluster env failed"

W=$(mktemp -d "${TMPDIR:-/tmp}/np-launch.XXXXXX") || die "mktemp"
# cancel any job of ours still queued (a failed wait), then remove the stage
cleanup() {
    for f in "$W/jobs" "$W/jobs.first"; do
        [ -f "$f" ] && cut -f2 "$f" | while read -r id; do scancel "$id" 2>/dev/null; done
    done
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
S="$W/stage"
H="$W/st a'ge \"q\" \$(touch pwned) \`touch pwned\` ;x"
mkdir -p "$S" "$H" || die "mkdir"
JOBS="$W/jobs" # lines: name<TAB>jobid<TAB>dir
: >"$JOBS"
export WORKLOAD=synthetic MAX_STEPS=6 DTYPE=bf16

# run_launch NAME [VAR=VALUE...]: launch, record "job ID: DIR" lines under NAME
run_launch() {
    name=$1
    shift
    # --resubmit: this test launches the same job several times on purpose (issue 13 refuses that by default)
    env "$@" "$launch" --resubmit >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$name: launch exited $rc: $(cat "$W/$name.err")"
        return 1
    fi
    n=0
    while IFS= read -r line; do
        case $line in
        "job "*": "*)
            id=${line#job }
            id=${id%%:*}
            dir=${line#job *: }
            printf '%s\t%s\t%s\n' "$name" "$id" "$dir" >>"$JOBS"
            n=$((n + 1))
            ;;
        esac
    done <"$W/$name.out"
    # the hint names the parser a user can run as printed: its real path unless PATH finds it
    grep -Eq "^when the jobs? ha(s|ve) ended: ($parse|nemoperf-parse) " "$W/$name.out" ||
        fail "$name: no nemoperf-parse line in: $(cat "$W/$name.out")"
    [ "$n" -gt 0 ] || fail "$name: no 'job ID: DIR' line in: $(cat "$W/$name.out")"
    return 0
}

# wait_job ID: until a final state (at most 240 s); prints it
wait_job() {
    i=0 st=
    while [ "$i" -lt 480 ]; do
        st=$(scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case $st in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
            echo "$st"
            return 0
            ;;
        esac
        sleep 0.5
        i=$((i + 1))
    done
    echo "${st:-UNKNOWN}"
    return 1
}

# jq-free JSON field of the pretty-printed manifest: mfield FILE KEY -> raw value
mfield() { sed -n "s/^ *\"$2\": \(.*\)$/\1/p" "$1" | head -1 | sed 's/,$//'; }

# check_run NAME ID DIR: the job completed and left what a launch promises
check_run() {
    name=$1 id=$2 dir=$3
    st=$(wait_job "$id") || { fail "$name: job $id not finished after 240 s (state $st)"; return; }
    job=${dir##*/}
    man="$dir/nemoperf.json"
    if [ "$st" != COMPLETED ]; then
        fail "$name: job $id ended $st"
        cat "$dir"/sbatch_*.out "$dir"/log-*.out >&2 2>/dev/null
        return
    fi
    [ -f "$man" ] || { fail "$name: no manifest in $dir"; return; }
    [ "$(mfield "$man" submitted)" = true ] || fail "$name: manifest not submitted"
    [ "$(mfield "$man" job_id)" = "\"$id\"" ] || fail "$name: manifest job_id $(mfield "$man" job_id) != $id"
    [ "$(mfield "$man" backend)" = '"cli"' ] || fail "$name: manifest backend"
    [ "$(mfield "$man" nemoperf_manifest)" = 1 ] || fail "$name: manifest format"
    [ "$(mfield "$man" job_name)" = "\"$job\"" ] || fail "$name: manifest job_name"
    [ -x "$dir/sbatch_$job.sh" ] || fail "$name: no script sbatch_$job.sh"
    [ -s "$dir/sbatch_${job}_$id.out" ] || fail "$name: no sbatch_${job}_$id.out"
    log="$dir/log-${job}_${id}_0.out"
    [ -s "$log" ] || { fail "$name: no $log"; return; }
    steps=$(mfield "$man" max_steps)
    last=$((steps - 1))
    grep -q "^Training epoch 0, iteration $last/$last | .*global_step: $last |" "$log" ||
        fail "$name: last ProgressPrinter line (iteration $last/$last) missing in $log"
    ok "$name: job $id COMPLETED, folder, manifest, script and logs present ($job)"
}

# ---- launch everything that needs no earlier result --------------------------------------
run_launch single MODEL_SIZE=8b JOB_TOTAL_GPUS=8 STAGE_PATH="$S" HF_TOKEN=np-secret-value \
    SLURM_JOB_ID=999999 SLURM_NNODES=7 SBATCH_DELAY_BOOT=3 SLURM_CONF="$SLURM_CONF"
run_launch sweep MODEL_SIZE=8b DTYPE=bf16 JOB_TOTAL_GPUS=8,16,32 STAGE_PATH="$S"
run_launch nemotron MODEL_SIZE=15b DTYPE=fp8 JOB_TOTAL_GPUS=16 STAGE_PATH="$S"
run_launch profile MODEL_SIZE=8b JOB_TOTAL_GPUS=8 ENABLE_PROFILE=true PROFILE_START_STEP=2 PROFILE_STOP_STEP=5 STAGE_PATH="$S"
run_launch nccl MODEL_SIZE=8b JOB_TOTAL_GPUS=8 ENABLE_NCCLTRACE=yes DISABLE_PERFRUN=true STAGE_PATH="$S"
run_launch save MODEL_SIZE=8b JOB_TOTAL_GPUS=16 ENABLE_CHECKPOINT=1 STAGE_PATH="$S"
run_launch hostile MODEL_SIZE=8b JOB_TOTAL_GPUS=8 STAGE_PATH="$H"

n=$(wc -l <"$JOBS")
# a sweep of 3 printed 3 lines; the profile request 2 (its performance run beside it), the trace 1 (DISABLE_PERFRUN)
[ "$n" -eq 10 ] && ok "10 jobs submitted" || fail "expected 10 submitted jobs, got $n"
[ "$(awk -F '\t' '$1 == "profile"' "$JOBS" | wc -l)" -eq 2 ] && [ "$(awk -F '\t' '$1 == "nccl"' "$JOBS" | wc -l)" -eq 1 ] &&
    ok "ENABLE_PROFILE submitted the performance run beside it; DISABLE_PERFRUN=true left it out of the trace" ||
    fail "performance runs beside profile/trace: $(cat "$JOBS")"
while IFS="$(printf '\t')" read -r name id dir; do
    check_run "$name" "$id" "$dir"
done <"$JOBS"

# ---- per-feature checks ------------------------------------------------------------------
dir_of() { awk -F '\t' -v n="$1" -v g="$2" '$1 == n && $3 ~ ("_" g "(_nsys|_nccltrace)?$") { print $3; exit }' "$JOBS"; }
d=$(dir_of single 8)
grep -rq np-secret-value "$d" && fail "HF_TOKEN's value was written into $d" || ok "HF_TOKEN value in no file"
grep -q '"HF_TOKEN"' "$d/nemoperf.json" && fail "the manifest lists HF_TOKEN among env_passed" ||
    ok "HF_TOKEN not among env_passed: the job never gets it (issue 23)"
# issue 23: sbatch --export=ALL hands the environment to slurmctld, which keeps it in its state
# folder (StateSaveLocation/hash.N/job.ID/environment): the token must not be there
st=$(sed -n 's/^StateSaveLocation=//p' "$SLURM_CONF" 2>/dev/null)
if [ -d "$st" ]; then
    grep -rqa np-secret-value "$st" && fail "HF_TOKEN's value is in slurmctld's saved job environment ($st)" ||
        ok "HF_TOKEN's value is not in slurmctld's saved state ($st)"
else
    fail "no StateSaveLocation in $SLURM_CONF"
fi
ok "inherited SLURM_JOB_ID/SLURM_NNODES did not reach sbatch (job ran on $(sed -n 's/.* on //p' "$d"/sbatch_*.out))"
# the user's SBATCH_* settings reach sbatch unchanged, as with the originals (sbatch reads them itself)
id=$(awk -F '\t' '$1 == "single" { print $2; exit }' "$JOBS")
scontrol -o show job "$id" | grep -q 'DelayBoot=00:03:00' && ok "SBATCH_DELAY_BOOT=3 reached sbatch (job $id: DelayBoot=00:03:00)" ||
    fail "SBATCH_DELAY_BOOT did not reach sbatch: $(scontrol -o show job "$id" | grep -o 'DelayBoot=[^ ]*')"
grep -q '^#SBATCH --no-requeue$' "$d"/sbatch_*.sh && ! grep -q 'scontrol requeue' "$d"/sbatch_*.sh &&
    ok "no requeue unless NEMOPERF_MAX_RETRIES asks" || fail "the script requeues by default"
for g in 8 16 32; do
    d=$(dir_of sweep "$g")
    [ -n "$d" ] || { fail "sweep: no job at $g GPUs"; continue; }
    nodes=$((g / 8))
    grep -q "^#SBATCH --nodes=$nodes\$" "$d"/sbatch_*.sh || fail "sweep $g: script does not ask for $nodes nodes"
    [ "$g" -eq 32 ] && { grep -q ' on n\[1-4\]$' "$d"/sbatch_*.out && ok "sweep 32: ran on n[1-4]" ||
        fail "sweep 32: not on all 4 nodes: $(cat "$d"/sbatch_*.out)"; }
done
d=$(dir_of nemotron 16)
grep -q 'global_batch_size: 64 ' "$d"/log-*.out && grep -q "^#SBATCH --nodes=2\$" "$d"/sbatch_*.sh &&
    ok "nemotron4 15b x16: 2 nodes, GBS 64" || fail "nemotron4 15b x16: nodes or GBS wrong"
d=$(dir_of profile 8_nsys)
case $d in *_nsys) ok "profile folder has the _nsys suffix" ;; *) fail "profile folder $d lacks _nsys" ;; esac
# where NeMo-Run's launcher has nsys write: <job folder>/nsys_profile/ (issue 25)
ls "$d"/nsys_profile/profile_*.nsys-rep >/dev/null 2>&1 && ok "profile files written into the job's nsys_profile/" ||
    fail "no nsys_profile/profile_*.nsys-rep in $d"
[ "$(mfield "$d/nemoperf.json" max_steps)" = 5 ] || fail "profile: MAX_STEPS should be PROFILE_STOP_STEP=5"
d=$(dir_of nccl 8)
case $d in *_nccltrace) ;; *) fail "NCCL trace folder $d lacks _nccltrace" ;; esac
grep -q 'NCCL INFO' "$d"/log-*.out && grep -q '^#SBATCH --time=00:15:00$' "$d"/sbatch_*.sh &&
    [ "$(mfield "$d/nemoperf.json" max_steps)" = 5 ] && ok "NCCL trace: INFO lines, 5 steps, 00:15:00" ||
    fail "NCCL trace: lines, steps or time limit wrong"
d=$(dir_of save 16)
ck=$(ls -d "$d"/code/nemo_experiments/default/checkpoints/*/ 2>/dev/null | head -1)
ck=${ck%/}
if [ -n "$ck" ] && ls "$ck"/weights/*.distcp >/dev/null 2>&1 && grep -q 'Global Checkpoint Save' "$d"/log-*.out; then
    ok "checkpoint saved: ${ck##*/}"
else
    fail "no checkpoint with weights/*.distcp under $d/code/nemo_experiments/default/checkpoints"
fi
d=$(dir_of hostile 8)
case $d in "$H"/*) ok "hostile STAGE_PATH used literally" ;; *) fail "hostile run folder $d not under the literal STAGE_PATH" ;; esac
if [ -n "$(find "$W" -name pwned)" ] || [ -e pwned ] || [ -e "$HOME/pwned" ]; then
    fail "a 'pwned' file exists: something in the hostile STAGE_PATH was executed"
else
    ok "nothing in the hostile STAGE_PATH was executed"
fi

# ---- load the saved checkpoint ----------------------------------------------------------
if [ -n "$ck" ]; then
    : >"$JOBS.load"
    mv "$JOBS" "$JOBS.first"
    : >"$JOBS"
    run_launch load MODEL_SIZE=8b JOB_TOTAL_GPUS=16 LOAD_CHECKPOINT_PATH="$ck" STAGE_PATH="$S"
    while IFS="$(printf '\t')" read -r name id dir; do
        check_run "$name" "$id" "$dir"
        grep -q 'Global Checkpoint Load' "$dir"/log-*.out && [ "$(mfield "$dir/nemoperf.json" max_steps)" = 1 ] &&
            ok "checkpoint loaded from the saved path, 1 step" || fail "load run: no 'Global Checkpoint Load' or not 1 step"
    done <"$JOBS"
    cat "$JOBS" >>"$JOBS.first"
    mv "$JOBS.first" "$JOBS"
fi

# ---- nemoperf-parse on every run folder ---------------------------------------------------
if [ -x "$parse" ]; then
    set --
    while IFS="$(printf '\t')" read -r name id dir; do set -- "$@" "$dir"; done <"$JOBS"
    "$parse" --format json "$@" >"$W/parse.json" 2>"$W/parse.err"
    rc=$?
    # the runs' own status (a run's "system" nodes have a status of their own): read as JSON
    runs=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["runs"]))' "$W/parse.json" 2>/dev/null || echo 0)
    oks=$(python3 -c 'import json,sys; print(sum(r["status"] == "synthetic" for r in json.load(open(sys.argv[1]))["runs"]))' \
        "$W/parse.json" 2>/dev/null || echo 0) # WORKLOAD=synthetic: complete runs, no GPU figures
    if [ "$rc" -eq 0 ] && [ "$runs" -eq "$#" ] && [ "$oks" -eq "$#" ]; then
        ok "nemoperf-parse: $oks of $# runs complete (synthetic)"
    else
        fail "nemoperf-parse exit $rc, $oks synthetic of $runs runs (want $#): $(grep -A1 '"status"' "$W/parse.json" | grep -v '"synthetic"' | head -10) $(head -5 "$W/parse.err")"
    fi
else
    fail "$parse not built"
fi

# ---- issue 24: a run's kind in every format.  The benchmark run (single) and its profile, NCCL-trace,
# checkpoint-save and checkpoint-load siblings, real jobs of the synthetic workload (stand-in for NeMo on
# GPUs, which cannot run here): each format names the kind, --reference compares none but a benchmark (the
# others say why, naming their kind), markdown tables hold the benchmark only, --group keeps the kinds apart.
if [ -x "$parse" ]; then
    set --
    : >"$W/kinds.want"
    while IFS="$(printf '\t')" read -r name id dir; do
        case $name:$dir in
        single:*) k=benchmark ;; profile:*_nsys) k=profile ;; profile:*) k=benchmark ;; nccl:*) k=nccl-trace ;;
        save:*) k=checkpoint-save ;; load:*) k=checkpoint-load ;; *) continue ;;
        esac
        set -- "$@" "$dir"
        printf '%s\t%s\n' "$dir" "$k" >>"$W/kinds.want"
    done <"$JOBS"
    [ "$#" -eq 6 ] || fail "kinds: want the 6 runs single, profile (and its performance run), nccl, save, load; have $#"
    "$parse" --format csv --reference "$@" >"$W/kinds.csv" 2>"$W/kinds.err"
    rc=$?
    # folder<TAB>kind<TAB>reference_reason, the runs matched to the folders by prefix (CSV read by python3's csv)
    got=$(python3 -c 'import csv, sys
want = [l.split("\t")[0] for l in open(sys.argv[1]).read().splitlines()]
for r in csv.DictReader(open(sys.argv[2])):
    for d in want:
        if r["path"].startswith(d + "/"):
            print("\t".join((d, r["kind"], r["reference_reason"])))' "$W/kinds.want" "$W/kinds.csv" | sort)
    # synthetic runs, checkpoint and profile runs: none is compared with a published row, which --reference says (exit 2)
    if [ "$rc" -eq 2 ] && grep -q "^nemoperf-parse: --reference: none of the [0-9]* runs could be compared" "$W/kinds.err" &&
        [ "$(printf '%s\n' "$got" | cut -f1,2)" = "$(sort "$W/kinds.want")" ]; then
        ok "kinds: CSV names each run's kind (benchmark, profile, nccl-trace, checkpoint-save, checkpoint-load); none compared: exit 2"
    else
        fail "kinds: CSV exit $rc, kinds: $got, want: $(cat "$W/kinds.want") $(head -3 "$W/kinds.err")"
    fi
    bad=$(printf '%s\n' "$got" | awk -F '\t' '$2 != "benchmark" && index($3, $2 " run") != 1 && !($2 == "nccl-trace" && index($3, "NCCL-trace run") == 1)')
    [ -z "$bad" ] && ok "kinds: --reference says of each non-benchmark run that its kind is never compared" ||
        fail "kinds: a non-benchmark run's reference reason does not name its kind: $bad"
    "$parse" --format json "$@" >"$W/kinds.json" 2>/dev/null
    for k in benchmark profile nccl-trace checkpoint-save checkpoint-load; do
        grep -q "\"kind\": \"$k\"" "$W/kinds.json" || fail "kinds: JSON has no run of kind $k"
    done
    "$parse" "$@" >"$W/kinds.table" 2>/dev/null
    [ "$(sed -n '1s/^EXPERIMENT *KIND .*/y/p' "$W/kinds.table")" = y ] &&
        [ "$(awk 'NR > 1 && $2 ~ /^(benchmark|profile|nccl-trace|checkpoint-save|checkpoint-load)$/ { n[$2]++ } END { print length(n) }' "$W/kinds.table")" = 5 ] &&
        ok "kinds: the table's KIND column shows all five" || fail "kinds: table: $(cat "$W/kinds.table")"
    "$parse" --format markdown "$@" >"$W/kinds.md" 2>/dev/null
    nlist=$(grep -cE '^- `.*`: (profile|nccl-trace|checkpoint-save|checkpoint-load) run, ' "$W/kinds.md")
    [ "$nlist" -eq 4 ] && ok "kinds: markdown lists the 4 non-benchmark runs below its table" ||
        fail "kinds: markdown lists $nlist non-benchmark runs (want 4): $(cat "$W/kinds.md")"
    "$parse" --group "$@" >"$W/kinds.group" 2>/dev/null
    ng=$(sed -n '/^RECIPE .* KIND /,$p' "$W/kinds.group" | awk 'NR > 1 && $5 ~ /^(benchmark|profile|nccl-trace|checkpoint-save|checkpoint-load)$/ { n[$5]++ } END { print length(n) }')
    [ "$ng" = 5 ] && ok "kinds: --group keeps the five kinds in five groups" ||
        fail "kinds: --group has $ng kinds: $(cat "$W/kinds.group")"
fi

# ---- WORKLOAD=nemo: it cannot train here (no pyxis, no GPU, no NeMo container), but its
# submission stages the driver, the vboost step's failure is ignored, and the failed job
# is not requeued (NEMOPERF_MAX_RETRIES unset). The "image" is a placeholder file.
echo placeholder >"$W/fake.sqsh"
if env WORKLOAD=nemo MODEL_SIZE=15b DTYPE=fp8 JOB_TOTAL_GPUS=16 STAGE_PATH="$S" RUN_CONF_IMAGE="$W/fake.sqsh" \
    "$launch" >"$W/nemo.out" 2>"$W/nemo.err"; then
    id=$(sed -n 's/^job \([0-9]*\): .*/\1/p' "$W/nemo.out" | head -1)
    dir=$(sed -n 's/^job [0-9]*: //p' "$W/nemo.out" | head -1)
    cmp -s "$root/share/nemoperf/driver/nemoperf_nemo.py" "$dir/code/nemoperf_nemo.py" &&
        ok "WORKLOAD=nemo: the driver was copied to $dir/code/" || fail "WORKLOAD=nemo: no driver in $dir/code/"
    st=$(wait_job "$id")
    [ "$st" = FAILED ] && ok "WORKLOAD=nemo without pyxis: job $id FAILED" || fail "WORKLOAD=nemo job $id ended $st"
    grep -q 'nemoperf: vboost failed (ignored)' "$dir"/sbatch_*.out && ok "the vboost step failed and was ignored" ||
        fail "no ignored vboost failure in $(cat "$dir"/sbatch_*.out)"
    [ "$(scontrol -o show job "$id" | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p')" = 0 ] && ! ls "$dir"/log-*_1.out >/dev/null 2>&1 &&
        ok "the failed job was not requeued" || fail "the failed NeMo job was requeued"
else
    fail "WORKLOAD=nemo launch exited non-zero: $(cat "$W/nemo.err")"
fi

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all checks passed"
