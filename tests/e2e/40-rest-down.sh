#!/bin/sh
# 40-rest-down.sh - slurmrestd stopped.  Runs a private slurmrestd (rest_auth/local, as the
# cluster's test user, on a socket in the scratch folder) so the shared daemons of the cluster
# are never disturbed: a launch through it works, then it is stopped and a launch gives a
# clear connection error after bounded retries (exit 1, the manifest marked not submitted with
# that error), then it is started again and a launch with --wait works again.  On 24.11 and
# 26.05 the private slurmrestd serves only older API versions (-d data_parser/...): the two
# launches run v0.0.41 and v0.0.40 (24.11), v0.0.43 and v0.0.42 (26.05) against the real
# daemons (ping form, job/{id} or jobs/state, script placement).
. "$(dirname "$0")/40-rest-lib.inc"

R="$W/rest"
mkdir -p "$R" && chown "$TUSER" "$R" || die "mkdir $R"
SOCK="$R/rest.sock"
rest_pid=
case $SLURM_V in
22.05) API1=v0.0.38 API2=v0.0.38 ;;
24.11) API1=v0.0.41 API2=v0.0.40 ;;
*) API1=v0.0.43 API2=v0.0.42 ;;
esac
rest_bin=$(PATH="$CPATH:/usr/sbin:/sbin" command -v slurmrestd) || die "slurmrestd not found"
# 24.11/26.05: the wrappers run the chroot's clients with client.conf (the image's plugins)
CONF=$SLURM_CONF
[ -f "$NP_CLUSTER_DIR/client.conf" ] && [ "$SLURM_V" != 22.05 ] && CONF=$NP_CLUSTER_DIR/client.conf
start_rest() { # API: the only version it serves (23.02+: -d data_parser/API)
    rm -f "$SOCK"
    dp=
    [ "$SLURM_V" = 22.05 ] || dp="-d data_parser/$1"
    # shellcheck disable=SC2086
    runuser -u "$TUSER" -- env SLURM_CONF="$CONF" "$rest_bin" -f "$CONF" -s "$NP_CLUSTER_REST_PLUGINS" \
        $dp -a rest_auth/local "unix:$SOCK" </dev/null >>"$W/slurmrestd.log" 2>&1 &
    rest_pid=$!
    i=0
    while [ "$i" -lt 40 ]; do
        [ -S "$SOCK" ] && return 0
        sleep 0.25
        i=$((i + 1))
    done
    cat "$W/slurmrestd.log" >&2
    die "private slurmrestd did not start"
}
stop_rest() {
    [ -n "$rest_pid" ] || return 0
    # runuser's child is slurmrestd: stop it (only that pid); runuser reaps it and exits
    for p in $(ps -o pid= --ppid "$rest_pid" 2>/dev/null); do kill "$p" 2>/dev/null; done
    i=0
    while kill -0 "$rest_pid" 2>/dev/null && [ "$i" -lt 40 ]; do sleep 0.25; i=$((i + 1)); done
    kill "$rest_pid" 2>/dev/null
    wait "$rest_pid" 2>/dev/null
    rest_pid=
}
cleanup_extra=stop_rest

start_rest "$API1"
launch_as up1 SLURM_SUBMIT=rest SLURMRESTD_URL="unix:$SOCK" JOB_TOTAL_GPUS=8
[ "$rc" -eq 0 ] && [ -n "$(ids_of up1)" ] && ok "private slurmrestd ($API1): job $(ids_of up1) submitted" ||
    fail "private slurmrestd: exit $rc $(cat "$W/up1.err")"
d=$(dirs_of up1)
[ -n "$d" ] && check_rest_manifest "$d" "unix:$SOCK" "$API1"
id=$(ids_of up1)
[ -n "$id" ] && [ "$(job_field "$id" OverSubscribe)" = NO ] && ok "$API1: job $id exclusive (OverSubscribe=NO)" ||
    fail "$API1: job $id OverSubscribe=$(job_field "$id" OverSubscribe)"

stop_rest
sleep 0.5
t0=$(date +%s)
launch_as down SLURM_SUBMIT=rest SLURMRESTD_URL="unix:$SOCK" JOB_TOTAL_GPUS=8,16
t1=$(date +%s)
[ "$rc" -eq 1 ] || fail "slurmrestd stopped: exit $rc, want 1"
[ -z "$(ids_of down)" ] || fail "slurmrestd stopped: a job id was printed"
grep -q 'cannot connect to slurmrestd' "$W/down.err" && grep -q 'is slurmrestd running' "$W/down.err" &&
    ok "slurmrestd stopped: $(grep -m1 'cannot connect' "$W/down.err" | sed 's/.*cannot/cannot/' | cut -c1-150)" ||
    fail "slurmrestd stopped: no clear message: $(cat "$W/down.err")"
[ $((t1 - t0)) -lt 20 ] && ok "bounded retries: 2 jobs refused in $((t1 - t0)) s" || fail "took $((t1 - t0)) s"
n=0
for m in $(find "$S" -name nemoperf.json -newer "$W/up1.out"); do
    [ "$(mfield "$m" submitted)" = false ] && [ "$(mfield "$m" job_id)" = null ] &&
        grep -q '"error": "cannot connect to slurmrestd' "$m" && grep -q '"api_version": null' "$m" && n=$((n + 1))
done
[ "$n" -eq 2 ] && ok "both manifests marked not submitted, with the connection error" ||
    fail "$n of 2 manifests marked not submitted"

start_rest "$API2"
launch_as up2 --wait SLURM_SUBMIT=rest SLURMRESTD_URL="unix:$SOCK" JOB_TOTAL_GPUS=8
check_waited up2 1 && ok "slurmrestd restarted ($API2): a launch with --wait works again"
d=$(dirs_of up2)
[ -n "$d" ] && check_rest_manifest "$d" "unix:$SOCK" "$API2"
id=$(ids_of up2)
[ -n "$id" ] && [ "$(job_field "$id" OverSubscribe)" = NO ] && ok "$API2: job $id exclusive (OverSubscribe=NO)" ||
    fail "$API2: job $id OverSubscribe=$(job_field "$id" OverSubscribe)"
finish
