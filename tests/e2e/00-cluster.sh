#!/bin/sh
# 00-cluster.sh - the local Slurm cluster works: a 2-node x 8-rank job with 8 GPUs per
# node runs through sbatch/srun, and slurmrestd answers and runs jobs over its unix
# socket (rest_auth/local, as the test user) and over TCP (rest_auth/jwt).
# Brings the cluster up (tests/slurm/cluster up) when needed and leaves it up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/../slurm/cluster"
API=v0.0.38
fails=0

fail() { echo "00-cluster: FAIL: $*" >&2; fails=$((fails + 1)); }
die()  { echo "00-cluster: FAIL: $*" >&2; exit 1; }
ok()   { echo "00-cluster: ok: $*"; }

[ "$(id -u)" = 0 ] || die "must run as root (the cluster runs root daemons)"
command -v curl >/dev/null 2>&1 || die "curl not installed (build-aux/deps.sh check)"

# inherited job variables would confuse sbatch when this runs inside a job
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done

"$cluster" status >/dev/null 2>&1 || "$cluster" up || die "cluster up failed"
eval "$("$cluster" env)" || die "cluster env failed"
TUSER=$NP_CLUSTER_USER
SOCK=${SLURMRESTD_URL#unix:}

W="$NP_CLUSTER_DIR/e2e/00-cluster"
rm -rf "$W"
mkdir -p "$W/root" "$W/user" || die "cannot create $W"
chown "$TUSER" "$W/user"

# wait_job ID: poll scontrol until the job is finished (60 s); prints the final state
wait_job() {
    i=0
    while [ "$i" -lt 120 ]; do
        st=$(scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case $st in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
            echo "$st"; return 0 ;;
        esac
        sleep 0.5
        i=$((i + 1))
    done
    echo "${st:-UNKNOWN}"
    return 1
}

# ---- 1. sbatch + srun: 2 nodes x 8 ranks, 8 GPUs per node -------------------------
cat >"$W/root/job.sh" <<'EOF'
#!/bin/sh
srun sh -c 'echo "rank=$SLURM_PROCID local=$SLURM_LOCALID node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES"'
EOF
jid=$(sbatch --parsable --job-name=np-e2e-00 --nodes=2 --ntasks-per-node=8 --gpus-per-node=8 \
    --chdir="$W/root" --output="$W/root/job-%j.out" "$W/root/job.sh") || die "sbatch failed"
jid=${jid%%;*}
st=$(wait_job "$jid") || fail "sbatch job $jid not finished after 60 s (state $st)"
out="$W/root/job-$jid.out"
if [ "$st" != COMPLETED ]; then
    fail "sbatch job $jid ended $st"
    scontrol show job "$jid" >&2
    [ -f "$out" ] && cat "$out" >&2
else
    nodelist=$(scontrol -o show job "$jid" | sed -n 's/.* NodeList=\([^ ]*\).*/\1/p')
    ranks=$(grep -c '^rank=' "$out")
    uniq_ranks=$(sed -n 's/^rank=\([0-9]*\) .*/\1/p' "$out" | sort -n | uniq | tr '\n' ' ')
    nodes=$(sed -n 's/.* node=\([^ ]*\) .*/\1/p' "$out" | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')
    if [ "$ranks" -eq 16 ] && [ "$uniq_ranks" = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 " ] &&
        [ "$(sed -n 's/.* local=\([0-9]*\) .*/\1/p' "$out" | sort -n | uniq -c | awk '$1 == 2' | wc -l)" -eq 8 ] &&
        [ "$(printf '%s' "$nodes" | wc -w)" -eq 2 ] &&
        printf '%s' "$nodes" | grep -Eq '^n[1-4]:8 n[1-4]:8 $'; then
        ok "sbatch job $jid: 16 ranks on $nodes(NodeList=$nodelist)"
        case $nodelist in
        "n[1-2]") ;;
        *) echo "00-cluster: note: job ran on $nodelist, not n[1-2] (cluster was busy)" ;;
        esac
    else
        fail "sbatch job $jid: expected ranks 0..15, LOCALID 0..7 twice, 8 ranks on each of 2 nodes; got ranks '$uniq_ranks' nodes '$nodes'"
        cat "$out" >&2
    fi
    # every rank sees the node's 8 (fake) GPUs
    [ "$(grep -c ' gpus=0,1,2,3,4,5,6,7$' "$out")" -eq 16 ] ||
        fail "sbatch job $jid: not every rank has CUDA_VISIBLE_DEVICES=0,...,7"
fi

# ---- 2. slurmrestd over the unix socket (rest_auth/local, as the test user) ----------
ucurl() { runuser -u "$TUSER" -- curl -sS -m 10 --unix-socket "$SOCK" "$@"; }
ping=$(ucurl "http://localhost/slurm/$API/ping")
if printf '%s' "$ping" | grep -q '"ping": *"UP"'; then ok "REST ping over unix:$SOCK as $TUSER"
else fail "REST ping over unix socket: $ping"; fi

# ---- 3. slurmrestd over TCP (rest_auth/jwt) ----------------------------------------
tcp_env=$("$cluster" env --tcp) || die "cluster env --tcp failed"
URL=$(eval "$tcp_env"; echo "$SLURMRESTD_URL")
JWT=$(eval "$tcp_env"; echo "$SLURM_JWT")
JUSER=$(eval "$tcp_env"; echo "$SLURM_USER")
tcurl() { curl -sS -m 10 -H "X-SLURM-USER-NAME: $JUSER" -H "X-SLURM-USER-TOKEN: $JWT" "$@"; }
ping=$(tcurl "$URL/slurm/$API/ping")
if printf '%s' "$ping" | grep -q '"ping": *"UP"'; then ok "REST ping over $URL with JWT for $JUSER"
else fail "REST ping over TCP: $ping"; fi
# a wrong token is refused
bad=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' -H "X-SLURM-USER-NAME: $JUSER" \
    -H "X-SLURM-USER-TOKEN: x$JWT" "$URL/slurm/$API/ping")
case $bad in 2*) fail "REST over TCP accepted a bad token (HTTP $bad)" ;; *) ok "bad JWT refused (HTTP $bad)" ;; esac

# ---- 4. submit through REST, see the job complete --------------------------------
# rest_submit CURLFN BASEURL TAG: submits a 2-task job, waits for it via GET /job/{id}
rest_submit() {
    fn=$1 base=$2 tag=$3
    # shellcheck disable=SC2016
    body=$(printf '{"job":{"name":"np-e2e-00-%s","nodes":1,"tasks":2,"current_working_directory":"%s","standard_output":"%s/%s-%%j.out","environment":{"PATH":"/usr/bin:/bin"}},"script":"#!/bin/sh\\necho rest-%s user=$(id -un)\\nsrun sh -c '"'"'echo rank=$SLURM_PROCID'"'"'\\n"}' \
        "$tag" "$W/user" "$W/user" "$tag" "$tag")
    resp=$($fn -X POST -H 'Content-Type: application/json' --data-binary "$body" "$base/slurm/$API/job/submit")
    rid=$(printf '%s' "$resp" | tr -d '\n' | sed -n 's/.*"job_id": *\([0-9][0-9]*\).*/\1/p')
    if [ -z "$rid" ]; then fail "REST submit ($tag): $resp"; return; fi
    i=0 st=
    while [ "$i" -lt 120 ]; do
        st=$($fn "$base/slurm/$API/job/$rid" | tr -d '\n' | sed -n 's/.*"job_state": *"\([A-Z_]*\)".*/\1/p')
        case $st in PENDING | RUNNING | CONFIGURING | COMPLETING | "") ;; *) break ;; esac
        sleep 0.5
        i=$((i + 1))
    done
    f="$W/user/$tag-$rid.out"
    if [ "$st" = COMPLETED ] && grep -qx "rest-$tag user=$TUSER" "$f" 2>/dev/null &&
        [ "$(grep -c '^rank=' "$f")" -eq 2 ]; then
        ok "REST job $rid ($tag) COMPLETED as $TUSER"
    else
        fail "REST job $rid ($tag): state '$st', output:"
        cat "$f" >&2 2>/dev/null
        scontrol show job "$rid" >&2
    fi
}
rest_submit ucurl http://localhost unix
rest_submit tcurl "$URL" tcp

if [ "$fails" -gt 0 ]; then
    echo "00-cluster: $fails check(s) failed; logs in $NP_CLUSTER_DIR/log" >&2
    exit 1
fi
echo "00-cluster: all checks passed (cluster left up)"
