#!/bin/sh
# 40-rest-tcp.sh - SLURM_SUBMIT=rest over TCP with JWT (slurmrestd rest_auth/jwt on loopback,
# token from `scontrol token`): a sweep 8,16 with --wait ending in the parse table, its jobs
# exclusive with the nodes, tasks, GPUs and time limit asked for; the token in no file and no
# output.  A bad token and a missing token: a clear authentication message, exit 1,
# the manifest marked not submitted, nothing reaches the queue.  SLURMRESTD_URL without
# SLURM_SUBMIT=rest changes nothing (sbatch is used).
. "$(dirname "$0")/40-rest-lib.inc"

eval "$("$cluster" env --tcp)" || die "cluster env --tcp failed (JWT not enabled?)"
TCP_URL=$SLURMRESTD_URL
TOKEN=$SLURM_JWT
unset SLURMRESTD_URL SLURM_JWT
ok "JWT token for $SLURM_USER from scontrol token; slurmrestd at $TCP_URL"

launch_as tcp --wait SLURM_SUBMIT=rest SLURMRESTD_URL="$TCP_URL" SLURM_JWT="$TOKEN" SLURM_USER="$SLURM_USER" \
    JOB_TOTAL_GPUS=8,16 SBATCH_GPUS_PER_NODE=8
check_waited tcp 2 && ok "sweep 8,16 through REST over TCP+JWT: 2 jobs COMPLETED, table ends the output"
for d in $(dirs_of tcp); do check_rest_manifest "$d" "$TCP_URL"; done
for id in $(ids_of tcp); do
    g=$(sed -n "s/^job $id: .*_//p" "$W/tcp.out")
    os=$(job_field "$id" OverSubscribe) nn=$(job_field "$id" NumNodes) nt=$(job_field "$id" NumTasks)
    tl=$(job_field "$id" TimeLimit) tr=$(job_field "$id" TresPerNode)
    [ "$os" = NO ] && [ "$nn" = $((g / 8)) ] && [ "$nt" = "$g" ] && [ "$tl" = 00:30:00 ] &&
        case $tr in *gpu:8*) true ;; *) false ;; esac &&
        ok "TCP+JWT job $id: exclusive, $nn node(s) x 8 tasks, gpu:8, 00:30:00" ||
        fail "TCP+JWT job $id: OverSubscribe=$os NumNodes=$nn NumTasks=$nt TimeLimit=$tl TresPerNode=$tr (want $g GPUs)"
done
grep -rqF "$TOKEN" "$S" "$W"/*.out "$W"/*.err && fail "the token was written or printed" ||
    ok "the token is in no file and no output"

# the refused launches use a time limit nothing else uses, to look for them in the queue
launch_as badtoken TIME_LIMIT=17 SLURM_SUBMIT=rest SLURMRESTD_URL="$TCP_URL" SLURM_JWT="not.a.valid-token" \
    SLURM_USER="$SLURM_USER" JOB_TOTAL_GPUS=8
[ "$rc" -eq 1 ] || fail "bad token: exit $rc, want 1"
grep -q 'authentication failed' "$W/badtoken.err" && grep -q 'SLURM_JWT' "$W/badtoken.err" &&
    ok "bad token: $(grep -m1 'authentication failed' "$W/badtoken.err" | cut -c1-200)..." ||
    fail "bad token: no clear message: $(cat "$W/badtoken.err")"
grep -q 'not.a.valid-token' "$W/badtoken.err" "$W/badtoken.out" && fail "bad token printed"
m=$(find "$S" -name nemoperf.json -newer "$W/tcp.out" | head -1)
[ -n "$m" ] && [ "$(mfield "$m" submitted)" = false ] && [ "$(mfield "$m" job_id)" = null ] &&
    grep -q '"error": ".*authentication failed' "$m" && ok "bad token: manifest marked not submitted, error recorded" ||
    fail "bad token: manifest ${m:-missing} not marked not submitted"
rm -f "$m"

launch_as notoken TIME_LIMIT=17 SLURM_SUBMIT=rest SLURMRESTD_URL="$TCP_URL" JOB_TOTAL_GPUS=8
[ "$rc" -eq 1 ] && grep -q 'HTTP 401 Unauthorized' "$W/notoken.err" &&
    ok "no token: $(grep -m1 '401' "$W/notoken.err" | sed 's/.*authentication/authentication/' | cut -c1-160)" ||
    fail "no token: exit $rc: $(cat "$W/notoken.err")"
n=$(squeue -h -t all -o '%l' | grep -c '^17:00$')
[ "$n" -eq 0 ] && ok "nothing was submitted with a bad or missing token" ||
    fail "$n job(s) with the refused launches' time limit are in the queue"

# SLURMRESTD_URL alone changes nothing: sbatch is used
launch_as urlonly SLURMRESTD_URL=unix:/nonexistent/rest.sock JOB_TOTAL_GPUS=8
d=$(dirs_of urlonly)
[ "$rc" -eq 0 ] && [ -n "$d" ] && [ "$(mfield "$d/nemoperf.json" backend)" = '"cli"' ] &&
    ok "SLURMRESTD_URL without SLURM_SUBMIT=rest: submitted with sbatch" ||
    fail "SLURMRESTD_URL alone: exit $rc $(cat "$W/urlonly.err")"
launch_as badsubmit SLURM_SUBMIT=slurmrestd JOB_TOTAL_GPUS=8
[ "$rc" -eq 2 ] && grep -q 'SLURM_SUBMIT=slurmrestd: unknown; allowed: cli (sbatch), rest (slurmrestd)' "$W/badsubmit.err" &&
    ok "SLURM_SUBMIT=slurmrestd refused (exit 2)" || fail "bad SLURM_SUBMIT: exit $rc $(cat "$W/badsubmit.err")"
launch_as nourl SLURM_SUBMIT=rest JOB_TOTAL_GPUS=8
[ "$rc" -eq 2 ] && [ -z "$(dirs_of nourl)" ] && ok "SLURM_SUBMIT=rest without SLURMRESTD_URL refused before any folder" ||
    fail "no URL: exit $rc"
finish
