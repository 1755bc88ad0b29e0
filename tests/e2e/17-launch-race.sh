#!/bin/sh
# 17-launch-race.sh - two and eight launches of one row started at once, many times over, with sbatch and with
# slurmrestd, on the local cluster: every trial must leave exactly one job at the controller (counted by
# squeue under the trial's own STAGE_PATH, whatever any launch said) and one record of it.
# Trials: NP_RACE_TRIALS per case (default 90: a race hit in 5 % of trials is caught with 99 % probability,
# 0.95^90 < 0.01).  Stand-ins: sbatch-slow's wrapper around the real sbatch adds --hold (the jobs stay queued and
# never run) and sleeps NP_STUB_PRE before submitting, so the first launch holds the lock while the others
# reach it; tests/stubs/slow-flock (LD_PRELOAD) makes a launch wait 100 ms before it locks a file it opened for
# writing and 50 ms before each mkdir, as a loaded login node on a slow file system may (the window a lock made
# then locked leaves open, too narrow to hit otherwise); the slurmrestd jobs are cancelled once counted.
T=17-launch-race
. "$(dirname "$0")/nothing-lost-lib.inc"
TUSER=${NP_CLUSTER_USER:-nemoperf-test}
W=$(mktemp -d "${TMPDIR:-/tmp}/np-race.XXXXXX") || die "mktemp"
chmod 0755 "$W"
RESV=np-race-$$
cleanup() {
    ids=$(squeue -h -t all -o '%i|%Z' 2>/dev/null | awk -F'|' -v w="$W/" 'index($2, w) == 1 { print $1 }')
    [ -n "$ids" ] && scancel $ids 2>/dev/null
    i=0 # the cancelled jobs hold the reservation for a moment
    while scontrol show ReservationName="$RESV" >/dev/null 2>&1 && [ $i -lt 40 ]; do
        env -u SLURM_JWT scontrol delete ReservationName="$RESV" >/dev/null 2>&1 || sleep 0.5 # as root, not the token's user
        i=$((i + 1))
    done
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=3 JOB_TOTAL_GPUS=8
slow_sbatch
cc -shared -fPIC -O2 -o "$W/slowflock.so" "$root/tests/stubs/slow-flock/slowflock.c" -ldl || die "cannot build the flock shim"
# an AddressSanitizer build (make sanitize) wants its runtime first in the preload list
asan=$(ldd "$launch" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*libasan[^ ]*\) .*/\1/p' | head -1)
PRELOAD="${asan:+$asan }$W/slowflock.so"
# ... and the preload reaches sbatch and the shells under the launch, uninstrumented: no leak report of theirs
[ -n "$asan" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
chmod 0755 "$W/slowflock.so"
export NP_SLOW_FLOCK_MS=${NP_SLOW_FLOCK_MS:-100} NP_SLOW_MKDIR_MS=${NP_SLOW_MKDIR_MS:-50}
TRIALS=${NP_RACE_TRIALS:-90}
UNIX_URL=$SLURMRESTD_URL
rest=0
[ "$(id -u)" -eq 0 ] && id "$TUSER" >/dev/null 2>&1 && command -v runuser >/dev/null && rest=1
[ "$rest" = 1 ] && { scontrol create ReservationName="$RESV" StartTime=now+7days Duration=60 Nodes=ALL \
    Users="$TUSER" Flags=IGNORE_JOBS,OVERLAP >/dev/null || die "cannot make the reservation $RESV"; }

# one_trial BACKEND K DIR: K launches of one row at once into DIR; prints the number of jobs queued from DIR,
# the number of launches that exited 0 and the number of records, then cancels them
one_trial() {
    mkdir -p "$3" && chmod 0777 "$3"
    i=0 pids=
    while [ "$i" -lt "$2" ]; do
        if [ "$1" = cli ]; then
            LD_PRELOAD="$PRELOAD" PATH=$SPATH STAGE_PATH=$3 NP_STUB_PRE=0.15 "$launch" >"$3/.out$i" 2>&1 &
        else
            runuser -u "$TUSER" -- env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp STAGE_PATH="$3" \
                WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=3 JOB_TOTAL_GPUS=8 SLURM_SUBMIT=rest \
                SLURMRESTD_URL="$UNIX_URL" SBATCH_RESERVATION="$RESV" LD_PRELOAD="$PRELOAD" NP_SLOW_FLOCK_MS=$NP_SLOW_FLOCK_MS NP_SLOW_MKDIR_MS=$NP_SLOW_MKDIR_MS \
                "$launch" >"$3/.out$i" 2>&1 &
        fi
        pids="$pids $!"
        i=$((i + 1))
    done
    zero=0
    for p in $pids; do
        wait "$p" && zero=$((zero + 1))
    done
    ids=$(squeue -h -t all -o '%i|%Z' | awk -F'|' -v w="$3/" 'index($2, w) == 1 { print $1 }')
    [ -n "$ids" ] && scancel $ids 2>/dev/null
    echo "$(printf '%s\n' $ids | grep -c .) $zero $(find "$3" -name nemoperf.json | grep -c .)"
}

# run_case BACKEND K PARALLEL: TRIALS trials, PARALLEL of them at a time (each its own STAGE_PATH)
run_case() {
    t0=$(date +%s)
    n=0 dup=0 none=0
    : >"$W/res-$1-$2"
    while [ "$n" -lt "$TRIALS" ]; do
        j=0
        while [ "$j" -lt "$3" ] && [ "$n" -lt "$TRIALS" ]; do
            ( r=$(one_trial "$1" "$2" "$W/$1-$2-$n"); echo "$n $r" >>"$W/res-$1-$2" ) &
            j=$((j + 1)) n=$((n + 1))
        done
        wait
    done
    [ "$(grep -c . "$W/res-$1-$2")" -eq "$TRIALS" ] || fail "$2 launches ($1): $(grep -c . "$W/res-$1-$2") results of $TRIALS trials"
    bad=$(awk '$2 != 1 || $3 != 1 || $4 != 1' "$W/res-$1-$2")
    dup=$(awk '$2 > 1' "$W/res-$1-$2" | grep -c .)
    t=$(($(date +%s) - t0))
    if [ -z "$bad" ]; then
        ok "$2 launches of one row at once ($1): $n trials, each exactly 1 job at the controller, 1 launch exit 0, 1 record (${t} s)"
    else
        fail "$2 launches of one row at once ($1): $n trials, $dup with more than one job at the controller (${t} s); trial jobs exit-0 records: $(printf '%s\n' "$bad" | head -5 | tr '\n' ';')"
        first=$(printf '%s\n' "$bad" | head -1 | cut -d' ' -f1)
        cat "$W/$1-$2-$first"/.out* | head -8 >&2
    fi
}

run_case cli 2 15
run_case cli 8 8
if [ "$rest" = 1 ]; then
    run_case rest 2 15
    run_case rest 8 8
else
    echo "$T: skip: slurmrestd (needs root and the cluster's user $TUSER)"
fi
if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all passed"
