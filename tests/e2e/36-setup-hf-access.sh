#!/bin/sh
# 36-setup-hf-access.sh - ./setup checks Hugging Face access to every Hub repo it will fetch from BEFORE the
# container import and before anything is created: a gated repo answering 401 (wrong token) or 403 (no access),
# a Megatron-Bridge row whose Hub repo is gated while HF_TOKEN is unset (also one whose description the Hub shows
# without a token, as the real Hub does), a Diffusers pipeline (not gated) that is not on the Hub (404), and a Hub that does not answer (not reported as a denial); a Hub that stalls: the access check and a download give up at
# their deadline (NEMOPERF_HF_CHECK_DEADLINE, NEMOPERF_HF_DEADLINE), which the message names.  Each refusal: the exit code, the
# message naming the repo and what to do, the stub enroot never called, STAGE_PATH left empty, no file or
# archive request.  The check is one request per repo, the Hub's auth-check (GET /api/models/<repo>/auth-check).
# The normal path still stages image, checkout and Hub files in one run, with one check per repo (the NeMo
# tokenizer step does not ask again); --dry-run stays offline and says so; --skip-hf skips the check.
# Stand-ins, and why: tests/hfserver.py on loopback plays the Hub and GitHub's codeload (no internet here;
# --listed plays a gated repo whose description the Hub shows without a token); a stub enroot on PATH logs
# its calls and writes the image (enroot cannot be installed here; the import itself is 30-setup.sh's).
# Verified to fail on the code before this check (main 7508ae9): exit 1 after the layout and the import.
. "$(dirname "$0")/hfserver-lib.inc"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup-acc.XXXXXX") || exit 1
trap 'hfserver_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
TOKEN=hf_acc_secret_5eed1e55
unset NEMOPERF_DATADIR RECIPE MODEL MODEL_SIZE RUN_CONF_IMAGE HF_TOKEN STAGE_PATH CONTAINER TASK DTYPE GPU_TYPE SBATCH_ACCOUNT \
    SBATCH_PARTITION

mb_archives "$tmp/arch"
hfserver_start "$tmp" --token "$TOKEN" --archives "$tmp/arch" --listed meta-llama/Meta-Llama-3.1-405B
mkdir -p "$tmp/stubs"
cat >"$tmp/stubs/enroot" <<'EOF'
#!/bin/sh
# stub enroot, tests only: enroot cannot be installed on this machine; every call is logged
echo "argv: $*" >>"$NP_STUB_LOG"
[ "$1" = import ] && [ "$2" = --output ] || exit 2
printf 'hsqs stub image of %s\n' "$4" >"$3"
EOF
chmod 755 "$tmp/stubs/enroot"
export NP_STUB_LOG="$tmp/enroot.log"
# a recipe whose tokenizer repo the stand-in answers 403 (no access for this account)
mkdir -p "$tmp/data/recipes"
sed 's#"meta-llama/Meta-Llama-3-8B"#"acme/denied-model"#' "$root/recipes/llama3.1.json" >"$tmp/data/recipes/llama3.1.json"

# run NAME VAR=VALUE... -- ./setup (no skip option) with the stub enroot, a new empty STAGE_PATH, the stand-in;
# $rc, NAME.out/.err, $S the stage; the enroot and request logs start empty
run() {
    name=$1
    shift
    S=$tmp/$name.stage
    mkdir -p "$S"
    : >"$NP_STUB_LOG"
    : >"$tmp/requests.log"
    env PATH="$tmp/stubs:$PATH" HF_ENDPOINT="$EP" NEMOPERF_ARCHIVE_ENDPOINT="$EP" STAGE_PATH="$S" "$@" "$setup" \
        ${OPTS:-} >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
}
# refused NAME CODE: exit CODE, no enroot call, STAGE_PATH still empty, no file/archive request
refused() {
    [ "$rc" -eq "$2" ] && [ ! -s "$NP_STUB_LOG" ] && [ -z "$(ls -A "$S")" ] &&
        ! grep -q '/resolve/\|/tar.gz/' "$tmp/requests.log"
}

# ---- NeMo recipe, gated tokenizer repo: 401 for a wrong token -----------------------------------------------------
run t401 HF_TOKEN=hf_wrong_0000 MODEL_SIZE=8b
refused t401 2 && grep -q 'meta-llama/Meta-Llama-3-8B: access denied (HTTP 401): the Hub did not accept HF_TOKEN' "$tmp/t401.err" &&
    grep -q "request access on $EP/meta-llama/Meta-Llama-3-8B" "$tmp/t401.err" &&
    grep -q 'checked before the container import: nothing was created' "$tmp/t401.err" &&
    ok "wrong HF_TOKEN: exit 2 before the import (enroot not called, STAGE_PATH empty), repo, page and HF_TOKEN named" ||
    fail "401 (rc $rc): $(cat "$tmp/t401.err" "$NP_STUB_LOG"; ls -A "$S")"
grep -q hf_wrong_0000 "$tmp/t401.err" "$tmp/t401.out" && fail "the wrong token was echoed"

# ---- 403: the account was not granted the gated repo ------------------------------------------------------------
run t403 NEMOPERF_DATADIR="$tmp/data" HF_TOKEN="$TOKEN" MODEL_SIZE=8b
refused t403 2 && grep -q 'acme/denied-model: access denied (HTTP 403): this account has no access' "$tmp/t403.err" &&
    grep -q "request access on $EP/acme/denied-model" "$tmp/t403.err" &&
    ok "no access (403): exit 2 before the import, nothing created, the page to request access named" ||
    fail "403 (rc $rc): $(cat "$tmp/t403.err" "$NP_STUB_LOG"; ls -A "$S")"

# ---- Megatron-Bridge row, gated Hub repo, HF_TOKEN unset (the upfront HF_TOKEN check covers NeMo repos only) ------
run mb401 RECIPE=llama3_70b TASK=sft
refused mb401 2 && grep -q 'meta-llama/Meta-Llama-3-70B: access denied (HTTP 401): the model is gated and HF_TOKEN is not set' "$tmp/mb401.err" &&
    ok "Megatron-Bridge llama3_70b sft, no HF_TOKEN: exit 2 before the import and the checkout, HF_TOKEN named" ||
    fail "MB 401 (rc $rc): $(cat "$tmp/mb401.err" "$NP_STUB_LOG"; ls -A "$S")"
# the same for a repo the Hub describes to anyone ("gated": "manual", --listed) while its files need a token:
# the description is not the check, the auth-check is
run mbgated RECIPE=llama31_405b CONTAINER=26.06
refused mbgated 2 && grep -q 'meta-llama/Meta-Llama-3.1-405B: access denied (HTTP 401): the model is gated and HF_TOKEN is not set' "$tmp/mbgated.err" &&
    grep -q "request access on $EP/meta-llama/Meta-Llama-3.1-405B" "$tmp/mbgated.err" &&
    [ "$(grep -c '"/api/models/meta-llama/Meta-Llama-3.1-405B/auth-check"' "$tmp/requests.log")" -eq 1 ] &&
    [ "$(wc -l <"$tmp/requests.log")" -eq 1 ] &&
    ok "Megatron-Bridge llama31_405b, described to anyone, no HF_TOKEN: exit 2 before the import, one request" ||
    fail "MB gated (rc $rc): $(cat "$tmp/mbgated.err" "$NP_STUB_LOG"; ls -A "$S")"

# ---- a repo that is not gated but not there (a misnamed or removed Diffusers pipeline): 404 before the import too -
mkdir -p "$tmp/wan/recipes"
sed 's#"Wan-AI/Wan2.1-T2V-14B-Diffusers"#"Wan-AI/Wan2.1-missing-Diffusers"#' "$root/recipes/wan2.1.json" >"$tmp/wan/recipes/wan2.1.json"
run wan404 NEMOPERF_DATADIR="$tmp/wan" RECIPE=wan2.1
refused wan404 2 && grep -q 'Wan-AI/Wan2.1-missing-Diffusers: no such model' "$tmp/wan404.err" &&
    grep -q 'checked before the container import: nothing was created' "$tmp/wan404.err" &&
    [ "$(grep -c '"/api/models/Wan-AI/Wan2.1-missing-Diffusers/auth-check"' "$tmp/requests.log")" -eq 1 ] &&
    ok "a Diffusers pipeline repo that is not there (not gated): exit 2 before the import, nothing created" ||
    fail "wan 404 (rc $rc): $(cat "$tmp/wan404.err" "$NP_STUB_LOG"; ls -A "$S")"

# ---- no answer from the Hub: said as such, not as a denial -------------------------------------------------------
EP0=$EP
EP=http://127.0.0.1:1 # nothing listens there
run down HF_TOKEN="$TOKEN" MODEL_SIZE=8b
EP=$EP0
[ "$rc" -eq 1 ] && [ ! -s "$NP_STUB_LOG" ] && [ -z "$(ls -A "$S")" ] &&
    grep -q 'meta-llama/Meta-Llama-3-8B: cannot check Hugging Face access: .*gave up after 5 attempts); no usable answer from http://127.0.0.1:1 (not a denial' "$tmp/down.err" &&
    ! grep -q 'access denied' "$tmp/down.err" &&
    ok "Hub unreachable: exit 1 before the import, the network failure said, no 'access denied'" ||
    fail "unreachable Hub (rc $rc): $(cat "$tmp/down.err")"

# ---- a stalled Hub: the access check and a download give up at their deadline, which they name ------------------
# (before: 5 attempts x 60 s of stall timeout per request, ~5 min per file, 307 s for an access check)
ctl "stall?n=100"
t0=$(date +%s)
run stallcheck HF_TOKEN="$TOKEN" MODEL_SIZE=8b NEMOPERF_HF_CHECK_DEADLINE=3
t=$(($(date +%s) - t0))
[ "$rc" -eq 1 ] && [ "$t" -le 10 ] && [ ! -s "$NP_STUB_LOG" ] &&
    grep -q 'meta-llama/Meta-Llama-3-8B: cannot check Hugging Face access: .*the deadline of an access check is 3 s, NEMOPERF_HF_CHECK_DEADLINE' "$tmp/stallcheck.err" &&
    ok "stalled Hub, NEMOPERF_HF_CHECK_DEADLINE=3: the access check gave up in ${t} s (exit 1), the deadline and its variable named" ||
    fail "stalled access check (rc $rc, ${t} s): $(cat "$tmp/stallcheck.err")"
ctl reset
ctl "stall?n=100&files=1"
t0=$(date +%s)
run stallfile HF_TOKEN="$TOKEN" MODEL_SIZE=8b NEMOPERF_HF_DEADLINE=3
t=$(($(date +%s) - t0))
nf=$(grep -c "in [0-9]* s: the deadline of a file's download is 3 s, NEMOPERF_HF_DEADLINE)" "$tmp/stallfile.err")
[ "$rc" -eq 1 ] && [ "$nf" -ge 1 ] && [ "$t" -le $((3 * nf + 6)) ] &&
    ok "stalled downloads, NEMOPERF_HF_DEADLINE=3: $nf files gave up at their deadline, ${t} s in all (exit 1), the deadline and its variable named" ||
    fail "stalled download (rc $rc, ${t} s): $(tail -5 "$tmp/stallfile.err")"
ctl reset
run baddeadline HF_TOKEN="$TOKEN" MODEL_SIZE=8b NEMOPERF_HF_DEADLINE=soon
refused baddeadline 2 && grep -q 'NEMOPERF_HF_DEADLINE=soon: not a number of seconds; allowed: 1 to 86400' "$tmp/baddeadline.err" &&
    ok "NEMOPERF_HF_DEADLINE=soon: exit 2 before anything, named" || fail "bad deadline (rc $rc): $(cat "$tmp/baddeadline.err")"

# ---- the normal path: one run stages everything, each repo's access asked once ------------------------------------
run full HF_TOKEN="$TOKEN" RECIPE=llama3_70b TASK=sft
L=$S/mbridge/hf/hub/models--meta-llama--Meta-Llama-3-70B
[ "$rc" -eq 0 ] && grep -q '^argv: import' "$NP_STUB_LOG" && [ -s "$S/nvidia+nemo+26.06.sqsh" ] &&
    [ -f "$S/src/Megatron-Bridge-$V5/scripts/performance/run_script.py" ] &&
    [ -s "$L/snapshots/$(cat "$L/refs/main" 2>/dev/null)/config.json" ] &&
    ok "access granted: image, Megatron-Bridge checkout and Hub files in one run" ||
    fail "full MB run (rc $rc): $(cat "$tmp/full.out" "$tmp/full.err")"
n=$(grep -c '"/api/models/meta-llama/Meta-Llama-3-70B/auth-check"' "$tmp/requests.log")
[ "$n" -eq 1 ] && ok "Meta-Llama-3-70B's access checked once" || fail "Meta-Llama-3-70B's access checked $n times"
run fullnemo HF_TOKEN="$TOKEN" MODEL_SIZE=8b
n=$(grep -c '"/api/models/meta-llama/Meta-Llama-3-8B\(/auth-check\)\{0,1\}"' "$tmp/requests.log")
[ "$rc" -eq 0 ] && [ -s "$S/nvidia+nemo+25.02.01.sqsh" ] && [ -s "$S/hf/meta-llama/Meta-Llama-3-8B/config.json" ] &&
    [ "$n" -eq 1 ] && ok "NeMo llama3.1 8b: image and tokenizer files in one run, access asked once (not again by the tokenizer step)" ||
    fail "full NeMo run (rc $rc, $n access requests): $(cat "$tmp/fullnemo.err")"

# ---- --dry-run stays offline and says so; --skip-hf skips the check ---------------------------------------------
OPTS=--dry-run run dry HF_TOKEN="$TOKEN" RECIPE=llama3_70b TASK=sft
[ "$rc" -eq 0 ] && [ ! -s "$tmp/requests.log" ] && [ -z "$(ls -A "$S")" ] &&
    grep -q '^# Hugging Face access to meta-llama/Meta-Llama-3-70B: not checked (--dry-run makes no request)' "$tmp/dry.out" &&
    ok "--dry-run: no request, the plan says access was not checked" || fail "dry run (rc $rc): $(cat "$tmp/dry.out" "$tmp/dry.err")"
OPTS=--skip-hf run skip RECIPE=llama3_70b TASK=sft
[ "$rc" -eq 0 ] && ! grep -q '/api/models/' "$tmp/requests.log" && grep -q '^argv: import' "$NP_STUB_LOG" &&
    ok "--skip-hf, no HF_TOKEN: no access check, the import runs" || fail "--skip-hf (rc $rc): $(cat "$tmp/skip.err")"

grep -rq "$TOKEN" "$tmp"/*.out "$tmp"/*.err "$tmp"/*.stage && fail "the token was written somewhere" ||
    ok "the token is in no staged file or output"
echo "36-setup-hf-access: $fails failure(s)"
[ "$fails" -eq 0 ]
