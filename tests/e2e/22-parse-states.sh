#!/bin/sh
# 22-parse-states.sh - nemoperf-parse --slurm on the real local cluster: launched runs that have no log yet are
# reported as the scheduler sees them, through either backend (squeue; slurmrestd over its unix socket).
# Real jobs: one held (PENDING), one sleeping (RUNNING), one cancelled (CANCELLED -> failed).  Stand-in: the
# manifests are written here (what nemoperf-launch writes, reduced to the fields parse reads) so the jobs can be
# plain `sbatch --wrap` sleeps that never write a log.
. "$(dirname "$0")/40-rest-lib.inc"
parse=$bindir/nemoperf-parse

sub() { # sub NAME [sbatch options...]: a job of the test user that sleeps, no output file
    n=$1
    shift
    id=$(runuser -u "$TUSER" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -N1 -J "np-$n" -o /dev/null "$@" \
        --wrap 'sleep 120') || die "sbatch $n failed"
    id=${id%%;*}
    echo "job $id: $n" >>"$JOBS"
    d="$W/runs/$n/pretrain_llama3.1_8b_bf16_8"
    mkdir -p "$d"
    printf '{"nemoperf_manifest": 1, "config": {"recipe": "llama3.1", "model_size": "8b", "dtype": "bf16",\n' >"$d/nemoperf.json"
    printf ' "gpu_type": "h100", "gpus": 8, "experiment": "%s"}, "workload": "nemo", "submitted": true,\n' "$n" >>"$d/nemoperf.json"
    printf ' "job_id": "%s", "submit_time": "2026-11-22T10:00:00Z", "error": null}\n' "$id" >>"$d/nemoperf.json"
    echo "$id"
}
held=$(sub held --hold)
running=$(sub running)
cancelled=$(sub cancelled --hold)
wait_state "$running" RUNNING 60 || fail "job $running never ran"
scancel "$cancelled"
wait_state "$cancelled" CANCELLED 30 || fail "job $cancelled not CANCELLED"
chmod -R a+rX "$W/runs"

check() { # check LABEL FILE: the three statuses in the table, exit 1
    f=$2
    grep -q "^held .* pending *$" "$f" && grep -q "^pending: .*held.*Slurm: PENDING" "$f" &&
        grep -q "^running .* running *$" "$f" && grep -q "^running: .*Slurm: RUNNING" "$f" &&
        grep -q "^cancelled .* failed *$" "$f" && grep -q "^failed: .*Slurm: CANCELLED" "$f" &&
        [ "$(cat "$f.rc")" = 1 ] && ok "$1: pending, running, failed from the scheduler, exit 1" ||
        fail "$1: exit $(cat "$f.rc"): $(cat "$f") $(cat "$f.err")"
}
# without --slurm: no log, and the hint
"$parse" --no-progress "$W/runs" >"$W/plain" 2>&1
echo $? >"$W/plain.rc"
[ "$(grep -c ' no-log *$' "$W/plain")" -eq 3 ] && grep -q -- '--slurm asks the scheduler' "$W/plain" &&
    [ "$(cat "$W/plain.rc")" = 1 ] && ok "without --slurm: 3 no-log runs, exit 1" || fail "plain: $(cat "$W/plain")"

# the sbatch backend (squeue)
runuser -u "$TUSER" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$parse" --no-progress --slurm "$W/runs" \
    >"$W/cli" 2>"$W/cli.err"
echo $? >"$W/cli.rc"
check "squeue" "$W/cli"

# slurmrestd on its unix socket (rest_auth/local: as the test user)
runuser -u "$TUSER" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" SLURM_SUBMIT=rest SLURMRESTD_URL="$UNIX_URL" \
    "$parse" --no-progress --slurm "$W/runs" >"$W/rest" 2>"$W/rest.err"
echo $? >"$W/rest.rc"
check "slurmrestd" "$W/rest"

# a scheduler that cannot be asked is an error, not a silent no-log
runuser -u "$TUSER" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" SLURM_SUBMIT=rest SLURMRESTD_URL=unix:/nonexistent.sock \
    "$parse" --no-progress --slurm "$W/runs" >"$W/down" 2>"$W/down.err"
rc=$?
[ "$rc" = 1 ] && grep -q -- '--slurm: cannot ask the scheduler' "$W/down.err" && ok "scheduler unreachable: exit 1 + message" ||
    fail "unreachable: rc=$rc $(cat "$W/down.err")"
[ -n "${NP_SHOW:-}" ] && cat "$W/cli" "$W/rest"
finish
