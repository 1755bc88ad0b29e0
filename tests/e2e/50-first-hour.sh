#!/bin/sh
# 50-first-hour.sh - what a new user types, as README.md and the man pages write it, on the local cluster.
# The example lines are read from the documents themselves (README and docs/ ```sh blocks, man EXAMPLES); each one is
# run here or named below with the reason it cannot run here, and an example that is neither fails the test.
# Stand-ins, and why: site paths are replaced (/lustre/... -> a scratch STAGE_PATH, the REST URLs -> the
# local slurmrestd); WORKLOAD=synthetic is exported (no GPU, no NeMo container, no pyxis here); `./launch` in
# a scratch folder is a symbolic link to bin/nemoperf-launch (what the front door execs), so that examples
# creating ./s or ./stage do not write into the source tree.  The tools come from `make install` into a
# scratch PREFIX put first on PATH, as the docs assume.  Also: a job larger than the cluster is refused with
# the limit named and nothing created; mistyped variables; --list filters; -V/--help; the hint runs as printed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
cluster=$root/tests/slurm/cluster
T=50-first-hour
fails=0
ok() { echo "$T: ok: $*"; }
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (runs the REST example as the cluster's test user)"
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\|SLURMRESTD_URL\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
unset RECIPE MODEL_SIZE DTYPE JOB_TOTAL_GPUS GPUS_PER_NODE GPU_TYPE TIME_LIMIT MAX_STEPS ENABLE_PROFILE \
    ENABLE_NCCLTRACE ENABLE_CHECKPOINT LOAD_CHECKPOINT_PATH HF_TOKEN RUN_CONF_IMAGE NEMOPERF_SBATCH_TIMEOUT
"$cluster" status >/dev/null 2>&1 || "$cluster" up || die "cluster up failed"
eval "$("$cluster" env)" || die "cluster env failed"
TUSER=$NP_CLUSTER_USER
UNIX_URL=$SLURMRESTD_URL
unset SLURMRESTD_URL
REST_PORT=${NP_CLUSTER_REST_PORT:-6820}

W=$(mktemp -d "${TMPDIR:-/tmp}/np-$T.XXXXXX") || die mktemp
chmod 0755 "$W"
cleanup() {
    for id in $(cat "$W/jobs" 2>/dev/null); do scancel "$id" 2>/dev/null; done
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
: >"$W/jobs"
S=$W/stage
mkdir -p "$S" "$W/cwd" "$W/restcwd"
chown "$TUSER" "$W/restcwd"
ln -s "$bindir/nemoperf-launch" "$W/cwd/launch"
ln -s "$bindir/nemoperf-launch" "$W/restcwd/launch"

# ---- the installed tools on PATH -----------------------------------------------------------------
P=$W/prefix
make -s -C "$root" install PREFIX="$P" >"$W/install.log" 2>&1 || { cat "$W/install.log"; die "make install"; }
PATH=$P/bin:$PATH
export PATH STAGE_PATH="$S" WORKLOAD=synthetic MAX_STEPS=8 NEMOPERF_WAIT_MAX_DELAY=2
for t in launch parse setup; do
    v=$(nemoperf-$t -V 2>&1) && [ "$v" = "$(nemoperf-$t --version)" ] && case $v in "nemoperf-$t "[0-9]*) true ;; *) false ;; esac &&
        ok "nemoperf-$t -V: $v" || fail "nemoperf-$t -V: $v"
    nemoperf-$t --help >"$W/help" 2>&1 && grep -q "nemoperf-$t" "$W/help" && grep -q -- '--version' "$W/help" &&
        ok "nemoperf-$t --help" || fail "nemoperf-$t --help: $(head -3 "$W/help")"
    [ -f "$P/share/man/man1/nemoperf-$t.1" ] && head -1 "$P/share/man/man1/nemoperf-$t.1" | grep -q '"2026-11" "nemoperf 0.1.0"' &&
        ok "man page nemoperf-$t(1) installed, dated like the others" || fail "man page nemoperf-$t(1)"
done
(cd "$root" && ./launch -V && ./setup -V) >"$W/v" 2>&1 && [ "$(wc -l <"$W/v")" -eq 2 ] && ok "./launch -V, ./setup -V" ||
    fail "front doors -V: $(cat "$W/v")"

# ---- the examples of the documents ---------------------------------------------------------------
# README.md and docs/*.md: lines of ```sh blocks; man pages: lines between .nf and .fi of EXAMPLES, troff escapes removed;
# continuation lines joined.  One example per line of $W/examples, prefixed by its source.
# the README and every page of docs/ (a page added later is read too: its examples run here or fail the test)
for d in "$root/README.md" "$root"/docs/*.md; do
    awk -v f="${d#"$root"/}" '/^```sh/{b=1;next} /^```/{b=0} b{print f "\t" $0}' "$d"
done >"$W/raw"
for m in launch parse setup; do
    awk -v f="nemoperf-$m.1" '/^\.SH EXAMPLES/{e=1} /^\.SH / && !/EXAMPLES/{e=0} e&&/^\.nf/{b=1;next} /^\.fi/{b=0} e&&b{print f "\t" $0}' \
        "$root/share/man/man1/nemoperf-$m.1" | sed 's/\\-/-/g; s/\\\\/\\/g; s/\t\\&/\t/' >>"$W/raw"
done
awk -F'\t' '{ line = $2; if (cont != "") { line = cont " " line; sub(/^[ ]+/, "", $2) }
    if (line ~ /\\$/) { sub(/[ ]*\\$/, "", line); cont = line; src = $1; next }
    cont = ""; print $1 "\t" line }' "$W/raw" | sed 's/\t  */\t/' >"$W/examples"
n=$(wc -l <"$W/examples")
[ "$n" -ge 20 ] && ok "$n example lines read from README.md, docs/ and the man pages" || fail "only $n example lines found"

# the README's first command is on its first screen (issue 24: within its first 40 lines), and it is one run here
first=$(awk '/^```sh/{b=1;next} b&&NF{print NR "\t" $0; exit}' "$root/README.md")
[ -n "$first" ] && [ "${first%%$(printf '\t')*}" -le 40 ] && grep -qF "README.md$(printf '\t')${first#*$(printf '\t')}" "$W/examples" &&
    ok "the README's first command, line ${first%%$(printf '\t')*}: ${first#*$(printf '\t')}" ||
    fail "the README's first command is not within its first 40 lines: '$first'"

site() { # the site's paths -> this machine's
    sed -e "s#/lustre/myproject/nemo#$S#g; s#/lustre/stage#$S#g; s#/lustre/me/nemo#$S#g" \
        -e "s#unix:/run/slurmrestd/rest.sock#$UNIX_URL#g; s#https://slurm.example.org:6820#http://127.0.0.1:$REST_PORT#g"
}
# run_ex NAME CWD LINE: the example in sh, stdout/stderr/rc in $W/NAME.*
run_ex() {
    (cd "$2" && sh -c "$3") >"$W/$1.out" 2>"$W/$1.err"
    echo $? >"$W/$1.rc"
    # "job N: folder" on stdout, or on stderr with --format json (stdout is its JSON document then)
    cat "$W/$1.out" "$W/$1.err" | sed -n 's/^job \([0-9][0-9]*\): .*/\1/p' >>"$W/jobs"
}
wait_jobs() {
    ids=$(tr '\n' ',' <"$W/jobs" | sed 's/,$//')
    [ -n "$ids" ] || return 0
    wj=0   # not i: the examples' loop counts with i
    while [ $wj -lt 240 ] && squeue -h -j "$ids" -t PENDING,RUNNING,COMPLETING,CONFIGURING 2>/dev/null | grep -q .; do
        sleep 1; wj=$((wj + 1))
    done
}
# expect NAME RC GREP: the example ended with RC and its output (stdout+stderr) holds GREP
expect() {
    rc=$(cat "$W/$1.rc")
    case " $2 " in *" $rc "*)
        if [ -z "$3" ] || cat "$W/$1.out" "$W/$1.err" | grep -q -- "$3"; then ok "$1: exit $rc${3:+, '$3'}"; return; fi ;;
    esac
    fail "$1: exit $rc (want $2${3:+, '$3'}): $(head -c 600 "$W/$1.err") $(head -c 300 "$W/$1.out")"
}

# the results store of every example (--store, --wait --store): a scratch one, never root's ~/.local/share
export NEMOPERF_DB="$W/results.db"
i=0
parse_later=
while IFS="$(printf '\t')" read -r src ex; do
    i=$((i + 1))
    name=ex$i
    line=$(printf '%s\n' "$ex" | site)
    echo "$T: [$src] $ex" >>"$W/ran"
    case $ex in
    "make check"*) echo "$T: skipped: [$src] $ex (this test is part of it)"; continue ;;
    mkdir*)
        # where the REST examples run too: as root here, as the test user in its own folder
        run_ex $name "$W/cwd" "$line"; expect $name 0 ""
        runuser -u "$TUSER" -- sh -c "cd '$W/restcwd' && $line" || fail "$name as $TUSER"
        continue ;;
    *./setup*) echo "$T: skipped: [$src] $ex (needs enroot and Hugging Face; 30-setup*.sh cover ./setup with a stub enroot and a loopback hub)"; continue ;;
    *TASK=sft*|*TASK=lora*)
        # fine-tuning is the NeMo job only (WORKLOAD=synthetic emulates pre-training): its preview works before
        # ./setup; a launch refuses what TASK=... ./setup has not staged (31-setup-finetune.sh stages it)
        case $ex in
        *--print-config*) run_ex $name "$W/cwd" "WORKLOAD=nemo $line"; expect $name 0 '"finetune": {' ;;
        *--list*) run_ex $name "$W/cwd" "$line"; expect $name 0 "^RECIPE  *SIZE  *TASK" ;;
        *) run_ex $name "$W/cwd" "WORKLOAD=nemo $line"; expect $name 2 "not staged\|not imported\|does not exist" ;;
        esac
        continue ;;
    *"nemoperf-parse --steps 35-44 --format json experiments/pretrain_llama3.1_70b_fp8_64"*)
        echo "$T: skipped: [$src] $ex (a 64-GPU run cannot exist on this 32-GPU cluster)"; continue ;;
    *"nemoperf-parse --gpu gb200 --reference logs/"*)
        echo "$T: skipped: [$src] $ex (GB200 logs cannot exist here; tests/data/parse/gb200-* parse such logs)"; continue ;;
    "export \$(scontrol token)"*) jwt_line=$line; continue ;;   # run with the next line, in the same shell
    "export "*) run_ex $name "$W/cwd" "$line"; expect $name 0 ""; continue ;;
    "make demo"*)
        # into this test's folder, never the user's demo folder (NEMOPERF_DEMO_STAGE, /tmp/nemoperf-demo)
        run_ex $name "$root" "NEMOPERF_DEMO_STAGE='$W/demo' $line"
        expect $name 0 "sweep-llama3.1-8b-bf16.png"
        png=$(grep '\.png$' "$W/$name.out" | tail -1)
        [ -s "$png" ] && [ "$(head -c 8 "$png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] &&
            ok "make demo printed its plot, a PNG: $png" || fail "make demo plot '$png'"
        continue ;;
    *nemoperf-parse*|*"nemoperf\-parse"*) parse_later="$parse_later $i"; continue ;;
    esac
    case $ex in
    *SLURM_SUBMIT=rest*unix:*)
        # rest_auth/local: as root the jobs would run as the socket's owner; refused before anything is written
        run_ex ${name}root "$W/cwd" "$line"
        expect ${name}root 2 "the jobs would run as $TUSER"
        runuser -u "$TUSER" -- env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp MAX_STEPS=8 \
            NEMOPERF_WAIT_MAX_DELAY=2 sh -c "cd '$W/restcwd' && $line" >"$W/$name.out" 2>"$W/$name.err"
        echo $? >"$W/$name.rc"
        expect $name 0 "COMPLETED" ;;
    *SLURM_SUBMIT=rest*)
        run_ex $name "$W/cwd" "${jwt_line:-true}
$line"
        expect $name 2 "partition batch has 4 nodes in total" ;;
    *RECIPE=nccl-tests*)
        # the fabric check runs the container's nccl-tests binaries (no synthetic stand-in): its plan previews
        # before ./setup, a launch refuses the image ./setup has not staged (65-nccl-tests.sh runs the check itself
        # with stand-in binaries)
        case $ex in
        *--dry-run*) run_ex $name "$W/cwd" "unset WORKLOAD; $line"; expect $name 0 '#SBATCH --nodes=' ;;
        *) run_ex $name "$W/cwd" "unset WORKLOAD; $line"; expect $name 2 "container image .* does not exist" ;;
        esac ;;
    # --dry-run and --print-config show the configuration (before ./setup too); only a submission is
    # checked against the partition
    *--dry-run*) run_ex $name "$W/cwd" "$line"; expect $name 0 "#SBATCH --nodes=" ;;
    *--print-config*)
        run_ex $name "$W/cwd" "$line"; expect $name 0 '"tp"'
        python3 -m json.tool <"$W/$name.out" >/dev/null && ok "$name: --print-config is JSON" || fail "$name: not JSON" ;;
    *JOB_TOTAL_GPUS=64*)
        run_ex $name "$W/cwd" "$line"
        expect $name 2 "can never run: needs 8 nodes (64 GPUs, 8 per node) but partition batch has 4 nodes in total" ;;
    *GPU_TYPE=gb200*JOB_TOTAL_GPUS=32*./launch)   # GB200 nodes have 4 GPUs: 8 of them, on a 4-node cluster
        run_ex $name "$W/cwd" "$line"
        expect $name 2 "can never run: needs 8 nodes (32 GPUs, 4 per node) but partition batch has 4 nodes in total" ;;
    *"./launch --wait --store"*)   # followed to the end, then stored (NEMOPERF_DB: this test's store)
        run_ex $name "$W/cwd" "$line"
        expect $name 0 "^job [0-9]* COMPLETED"
        grep -q "stored 1 run" "$W/$name.err" && [ -s "$NEMOPERF_DB" ] && ok "$name: stored into NEMOPERF_DB" ||
            fail "$name: not stored: $(tail -3 "$W/$name.err")" ;;
    *--list*--format\ json*)
        run_ex $name "$W/cwd" "$line"; expect $name 0 '"recipe"'
        want=$(printf '%s\n' "$ex" | sed -n 's/.*--recipe \([^ ]*\).*/\1/p')
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r and all(x["recipe"]==sys.argv[2] and x["gpu"]=="h100" and x["system"] != "-" for x in r)' \
            "$W/$name.out" "$want" && ok "$name: JSON rows all $want on h100" || fail "$name: JSON filter" ;;
    # NeMo's table heads RECIPE, Megatron-Bridge's (--container, its dtypes) CONTAINER
    *--list*) run_ex $name "$W/cwd" "$line"; expect $name 0 "^RECIPE\|^CONTAINER  *TASK  *RECIPE" ;;
    *mkdir*) run_ex $name "$W/cwd" "$line"; expect $name 0 "" ;;
    *"./launch --runs"*--format\ json*)   # the runs launched so far, as JSON, with the scheduler's states
        run_ex $name "$W/cwd" "$line"; expect $name 0 '"job_id"' ;;
    *"./launch --runs"*)
        run_ex $name "$W/cwd" "$line"; expect $name 0 "JOB_ID  *SLURM_STATE" ;;
    *"./launch --reconcile"*)   # the records of the launches above are settled already
        run_ex $name "$W/cwd" "$line"; expect $name 0 ": recorded already: submitted, job [0-9]" ;;
    *./launch*--wait*)   # the launch waits for its jobs (REPEATS, --format json): their ends are what it says
        wait_jobs
        run_ex $name "$W/cwd" "$line"
        expect $name 0 "job [0-9][0-9]* .*COMPLETED" ;;
    *./launch*)
        # an earlier example's job of the same configuration still queued or running would be refused, as it
        # should ("not submitting a job twice"): a reader runs the examples one after the other, so does this test
        wait_jobs
        run_ex $name "$W/cwd" "$line"
        # the parser beside the program that ran (here bin/, not the installed copy PATH finds)
        expect $name 0 "^when the jobs\{0,1\} ha[sv]e\{0,1\} ended: \(nemoperf-parse\|$bindir/nemoperf-parse\) " ;;
    *) fail "[$src] example not covered by this test: $ex" ;;
    esac
done <"$W/examples"

# the parse examples, once the jobs they read have ended (in STAGE_PATH: they name experiments/); the results
# store's examples use a scratch store (not root's ~/.local/share)
wait_jobs
first=$(find "$S/experiments" -name 'log-*.out' | head -1)
[ -n "$first" ] && cp "$first" "$S/my.log"   # the man page's my.log: a real run's log
cp -R "$S/experiments" "$S/old-runs" && cp -R "$S/experiments" "$S/new-runs"   # docs/history.md's two folders
for k in $parse_later; do
    ex=$(sed -n "${k}p" "$W/examples" | cut -f2-)
    line=$(printf '%s\n' "$ex" | site)
    run_ex ex$k "$S" "$line"
    case $ex in
    *--history*--group*)   # a line per configuration of the runs --store stored just before
        expect ex$k 0 "^CONFIGURATION  *FAMILY  *KIND  *RUNS  *FIRST  *NEWEST" ;;
    *--history*)   # the runs --store stored just before, listed; the plot over time drawn
        expect ex$k 0 "^ENDED  *FAMILY  *KIND  *CONFIGURATION"
        f=$(printf '%s\n' "$ex" | sed -n 's/.*--plot \([^ ]*\).*/\1/p')
        [ -z "$f" ] || { [ -s "$S/$f" ] && ok "ex$k: $f drawn" || fail "ex$k: no $f"; } ;;
    *--compare*--format\ json*)   # the same runs on both sides: nothing slower (exit 0), JSON
        expect ex$k 0 ""
        python3 -m json.tool <"$W/ex$k.out" >/dev/null && ok "ex$k: --compare --format json is JSON" || fail "ex$k: not JSON" ;;
    *--compare*)   # every run here has the same container: nothing is on both sides, which is said (exit 1)
        expect ex$k "0 1" "^CONFIGURATION" ;;
    *--plot*)
        case $ex in *--reference*) want="2" ;; *) want="0 1" ;; esac # synthetic runs here: none compared (exit 2)
        expect ex$k "$want" "EXPERIMENT\|Llama 3.1"
        f=$(printf '%s\n' "$ex" | sed -n 's/.*--plot \([^ ]*\).*/\1/p')
        [ -s "$S/$f" ] && ok "ex$k: $f drawn" || fail "ex$k: no $f" ;;
    *--format\ json*) expect ex$k 0 '"runs"' ;;
    *--reference*) expect ex$k 2 "REF\|Llama 3.1" ;;  # synthetic runs here: none compared, said, exit 2
    # a synthetic run's log without its manifest, named an 8-GPU H100 run by options: physically impossible
    *my.log*) expect ex$k 1 "implausible" ;;
    *) expect ex$k 0 "ok\|synthetic\|Llama 3.1" ;;
    esac
done

# ---- a job larger than the cluster: refused, the limit named, nothing created, nothing queued ------
before=$(find "$W/cwd" "$S" | wc -l)
(cd "$W/cwd" && DTYPE=bf16 MODEL_SIZE=8b JOB_TOTAL_GPUS=8,64 ./launch) >"$W/big.out" 2>"$W/big.err"
rc=$?
[ $rc -eq 2 ] && grep -q "JOB_TOTAL_GPUS: 64: job pretrain_llama3.1_8b_bf16_64 can never run: needs 8 nodes" "$W/big.err" &&
    ok "sweep 8,64: refused (exit 2) naming the 4-node limit" || fail "sweep 8,64: exit $rc: $(cat "$W/big.err")"
[ "$(find "$W/cwd" "$S" | wc -l)" -eq "$before" ] && [ ! -s "$W/big.out" ] && ok "sweep 8,64: nothing created, no job" ||
    fail "sweep 8,64 wrote something: $(cat "$W/big.out")"
squeue -h -n pretrain_llama3.1_8b_bf16_64,pretrain_llama3.1_8b_bf16_8 -t all 2>/dev/null | grep -q . &&
    squeue -h -o '%j %V' -t all | grep -q "bf16_64" && fail "a 64-GPU job reached the queue" || ok "no 64-GPU job in squeue"
# through slurmrestd, as the test user: the partition's limits from GET partitions
runuser -u "$TUSER" -- env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp SLURM_SUBMIT=rest SLURMRESTD_URL="$UNIX_URL" \
    STAGE_PATH="$W/restcwd" WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 JOB_TOTAL_GPUS=64 "$bindir/nemoperf-launch" \
    >"$W/restbig.out" 2>"$W/restbig.err"
rc=$?
[ $rc -eq 2 ] && grep -q "partition batch has 4 nodes in total" "$W/restbig.err" && [ ! -e "$W/restcwd/experiments/pretrain_llama3.1_8b_bf16_64" ] &&
    ok "REST: 64 GPUs refused from the partition's limits" || fail "REST 64: exit $rc: $(cat "$W/restbig.err")"

# ---- mistyped variables: a suggestion, exit 2, nothing written ------------------------------------
before=$(find "$S" | wc -l)
(cd "$W/cwd" && MODLE_SIZE=8b DTYPE=bf16 JOB_TOTAL_GPUS=8 ./launch) >"$W/typo.out" 2>"$W/typo.err"
rc=$?
[ $rc -eq 2 ] && grep -q "MODLE_SIZE=8b: not a nemoperf variable; did you mean MODEL_SIZE?" "$W/typo.err" &&
    [ "$(find "$S" | wc -l)" -eq "$before" ] && ok "MODLE_SIZE=8b: did you mean MODEL_SIZE? (exit 2, nothing written)" ||
    fail "typo: exit $rc: $(cat "$W/typo.err")"
p=NEMOPERF   # spelled in two parts so that the test of envcheck's table does not take the typo for a real name
(cd "$W/cwd" && env "${p}_WAIT_TIMOUT=5" ./launch --dry-run) >/dev/null 2>"$W/typo2.err"
rc=$?
[ $rc -eq 2 ] && grep -q "did you mean NEMOPERF_WAIT_TIMEOUT" "$W/typo2.err" && ok "${p}_WAIT_TIMOUT: suggestion" ||
    fail "prefix typo: exit $rc $(cat "$W/typo2.err")"
HF_TOKNE=hf_secretvalue nemoperf-setup --dry-run >/dev/null 2>"$W/typo3.err"
rc=$?
[ $rc -eq 2 ] && grep -q "HF_TOKNE: not a nemoperf variable; did you mean HF_TOKEN?" "$W/typo3.err" &&
    ! grep -q secretvalue "$W/typo3.err" && ok "setup: HF_TOKNE suggested, its value not printed" || fail "setup typo: $(cat "$W/typo3.err")"

# ---- --list filters ----------------------------------------------------------------------------------
nemoperf-launch --list --recipe llama3.1 --gpu H100 >"$W/l1" && awk 'NR>1 && ($1 != "llama3.1") {bad=1} END {exit bad || NR < 2}' "$W/l1" &&
    ok "--list --recipe llama3.1 --gpu H100: only llama3.1 rows ($(($(wc -l <"$W/l1") - 1)))" || fail "--list filter: $(head -3 "$W/l1")"
nemoperf-launch --list --recipe nope >/dev/null 2>"$W/l2"; rc=$?
[ $rc -eq 2 ] && grep -q "'nope' is not a recipe" "$W/l2" && ok "--list --recipe nope: exit 2" || fail "--recipe nope: $rc $(cat "$W/l2")"
nemoperf-launch --list --format xml >/dev/null 2>&1; [ $? -eq 2 ] && ok "--list --format xml: exit 2" || fail "--format xml"
nemoperf-launch --recipe llama3.1 >/dev/null 2>&1; [ $? -eq 2 ] && ok "--recipe without --list: exit 2" || fail "--recipe alone"

# ---- the hint runs as printed (make alone: the real path; installed: the name) -------------------------
(cd "$W/cwd" && env PATH=/usr/bin:/bin DTYPE=bf16 MODEL_SIZE=8b JOB_TOTAL_GPUS=8 ./launch) >"$W/hint.out" 2>"$W/hint.err"
sed -n 's/^job \([0-9][0-9]*\): .*/\1/p' "$W/hint.out" >>"$W/jobs"
cmd=$(sed -n 's/^when the job has ended: //p' "$W/hint.out")
case $cmd in "$bindir/nemoperf-parse "*|"$(cd "$bindir" && pwd -P)/nemoperf-parse "*) ok "hint names the real parser: ${cmd%% *}" ;;
    *) fail "hint without PATH: '$cmd'" ;; esac
wait_jobs
(env PATH=/usr/bin:/bin sh -c "$cmd") >"$W/hintrun.out" 2>&1 && grep -q ' synthetic *$' "$W/hintrun.out" &&
    ok "the hint, run as printed, parses the (synthetic) run" || fail "hint run: $(cat "$W/hintrun.out")"

# the setup hint too: the program it names exists and runs (-V) as printed (--dry-run works before ./setup:
# the missing image is a warning naming setup)
mkdir "$W/nosqsh"
(cd "$W/cwd" && env PATH=/usr/bin:/bin WORKLOAD=nemo STAGE_PATH="$W/nosqsh" MODEL_SIZE=15b DTYPE=fp8 ./launch --dry-run) \
    >/dev/null 2>"$W/sh.err"
scmd=$(sed -n -e 's/.*does not exist: run \(.*\) first (or set RUN_CONF_IMAGE.*/\1/p' \
    -e 's/.*not staged yet: container image .* (run \(.*\), or set RUN_CONF_IMAGE)$/\1/p' "$W/sh.err")
[ -n "$scmd" ] && (env PATH=/usr/bin:/bin sh -c "$scmd -V") 2>&1 | grep -q '^nemoperf-setup ' &&
    ok "the setup hint runs as printed: $scmd" || fail "setup hint '$scmd': $(cat "$W/sh.err")"

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all checks passed"
