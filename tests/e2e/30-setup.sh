#!/bin/sh
# 30-setup.sh - bin/nemoperf-setup end to end against tests/hfserver.py on loopback
# (HF_ENDPOINT=http://127.0.0.1:PORT, real libcurl, real HTTP) and a stub `enroot`
# on PATH (enroot/pyxis cannot be installed on this machine): validation errors
# (exit 2, nothing created), --dry-run, --skip-image, the full run, idempotence,
# 401/403, retries and resume, a failing and an interrupted import, and the token
# never in STAGE_PATH, stdout/stderr, the server's log or enroot's argv/env.
. "$(dirname "$0")/hfserver-lib.inc"
# recipes/ of this tree, also for a binary built elsewhere (make sanitize)
export NEMOPERF_DATADIR="${NEMOPERF_DATADIR:-$root}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup.XXXXXX") || exit 1
trap 'hfserver_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

TOKEN=hf_e2e_secret_7f3a9c1d2b
REPO=meta-llama/Meta-Llama-3-8B

# ---- the Hugging Face stand-in --------------------------------------------------
hfserver_start "$tmp" --token "$TOKEN"

# ---- the stub enroot ---------------------------------------------------------------
mkdir -p "$tmp/stubs"
cat >"$tmp/stubs/enroot" <<'EOF'
#!/bin/sh
# stub enroot, tests only: enroot cannot be installed on this machine
echo "argv: $*" >>"$NP_STUB_LOG"
env >>"$NP_STUB_LOG.env"
[ "$1" = import ] && [ "$2" = --output ] || exit 2
[ -e "$3" ] && { echo "[ERROR] File already exists: $3" >&2; exit 1; }
case ${NP_STUB_MODE:-ok} in
ok) printf 'hsqs stub image of %s\n' "$4" >"$3" ;;
fail) printf 'hsqs-partial' >"$3"; echo "[ERROR] stub: failed halfway" >&2; exit 1 ;;
hang) printf 'hsqs-partial' >"$3"; exec sleep 300 ;;
esac
EOF
chmod 755 "$tmp/stubs/enroot"
export NP_STUB_LOG="$tmp/enroot.log"
STUBPATH=$tmp/stubs:$PATH
NOENROOT=/usr/local/bin:/usr/bin:/bin
unset RECIPE MODEL_SIZE RUN_CONF_IMAGE SBATCH_ACCOUNT SBATCH_PARTITION HF_TOKEN STAGE_PATH

# run NAME [VAR=VALUE...] -- ARGS: runs setup with HF_ENDPOINT set; sets $rc, NAME.out/.err
run() {
    name=$1
    shift
    env HF_ENDPOINT="$EP" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
}
# expect_fail NAME CODE WORD: exit CODE, stderr mentions WORD
expect_fail() {
    if [ "$rc" -ne "$2" ]; then
        fail "$1: exit $rc, want $2: $(head -3 "$tmp/$1.err")"
    elif ! grep -q -- "$3" "$tmp/$1.err"; then
        fail "$1: stderr does not mention '$3': $(head -3 "$tmp/$1.err")"
    else
        ok "$1 -> exit $2 naming $3"
    fi
}
resolve_200s() { grep -c '"path": "/\(meta-llama\|_lfs\)/.*"status": 20[06]' "$tmp/requests.log"; }

# ---- validation: exit 2, nothing created ------------------------------------------
S=$tmp/stage
run nostage PATH="$STUBPATH" HF_TOKEN="$TOKEN" "$setup"
expect_fail nostage 2 STAGE_PATH
run relstage PATH="$STUBPATH" HF_TOKEN="$TOKEN" STAGE_PATH=rel/dir "$setup"
expect_fail relstage 2 "STAGE_PATH: 'rel/dir' is not an absolute path"
run notoken PATH="$STUBPATH" STAGE_PATH="$S" "$setup"
expect_fail notoken 2 "HF_TOKEN: not set"
grep -q "request access on $EP/$REPO" "$tmp/notoken.err" && ok "missing HF_TOKEN message gives the model page" \
    || fail "missing HF_TOKEN message has no model page URL: $(cat "$tmp/notoken.err")"
run noenroot PATH="$NOENROOT" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup"
expect_fail noenroot 2 "enroot: not found on PATH"
grep -q -- --skip-image "$tmp/noenroot.err" && ok "missing enroot message suggests --skip-image" \
    || fail "missing enroot message does not suggest --skip-image"
# --dry-run shows the plan: what only a real ./setup needs (enroot, HF_TOKEN) is a warning there (issue 24)
run drynoenroot PATH="$NOENROOT" STAGE_PATH="$S" "$setup" --dry-run
[ "$rc" -eq 0 ] && grep -q "warning: enroot: not found on PATH" "$tmp/drynoenroot.err" &&
    grep -q "warning: HF_TOKEN: not set" "$tmp/drynoenroot.err" && grep -q "^enroot import " "$tmp/drynoenroot.out" &&
    ok "--dry-run without enroot and HF_TOKEN: exit 0, the plan, two warnings" ||
    fail "--dry-run without enroot: exit $rc: $(cat "$tmp/drynoenroot.err")"
run badrecipe PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" RECIPE=nope "$setup"
expect_fail badrecipe 2 "RECIPE=nope: unknown recipe; allowed: NeMo recipes: "
run badsize PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" MODEL_SIZE=9b "$setup"
expect_fail badsize 2 "MODEL_SIZE: '9b'"
env HF_ENDPOINT=ftp://example.org PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup" \
    >"$tmp/badep.out" 2>"$tmp/badep.err"
rc=$?
expect_fail badep 2 "HF_ENDPOINT: 'ftp://example.org'"
run badimage PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" RUN_CONF_IMAGE=/nonexistent/x.sqsh "$setup"
expect_fail badimage 2 "RUN_CONF_IMAGE: '/nonexistent/x.sqsh'"
# as launch refuses them (issue 23, item 10), before anything is created or downloaded: a RUN_CONF_IMAGE
# with a newline or an ESC, a 100 KB (or 256-byte) STAGE_PATH component, 100 KB SBATCH_* with --sbatch
nreqs() { cat "$tmp/requests.log" 2>/dev/null | wc -l; }
nreq=$(nreqs)
run nlimage PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" RUN_CONF_IMAGE="$(printf 'nvcr.io/nvidia/nemo:25.02\nx')" "$setup"
expect_fail nlimage 2 "RUN_CONF_IMAGE: holds a control character (byte 0x0a at offset 25)"
run escimage PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" RUN_CONF_IMAGE="$(printf '/x/\033[2J.sqsh')" "$setup" --dry-run
expect_fail escimage 2 "RUN_CONF_IMAGE: holds a control character (byte 0x1b at offset 3)"
big=$(head -c 100000 /dev/zero | tr '\0' a)
run bigcomp PATH="$STUBPATH" STAGE_PATH="$S/$big/x" HF_TOKEN="$TOKEN" "$setup"
expect_fail bigcomp 2 "STAGE_PATH: [0-9]* bytes long; allowed: at most"
run longcomp PATH="$STUBPATH" STAGE_PATH="$S/$(head -c 256 /dev/zero | tr '\0' b)/x" HF_TOKEN="$TOKEN" "$setup"
expect_fail longcomp 2 "STAGE_PATH: a component of 256 bytes"
for v in SBATCH_ACCOUNT SBATCH_QOS SBATCH_WCKEY; do
    run "big$v" PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$v=$big" "$setup" --sbatch
    expect_fail "big$v" 2 "$v: 100000 bytes long; Slurm refuses more than 1024"
done
[ "$(nreqs)" -eq "$nreq" ] && ok "refused before any request to the hub" ||
    fail "requests made before a refusal: $(tail -3 "$tmp/requests.log")"
run badopt "$setup" --bogus
expect_fail badopt 2 "bogus"
[ -e "$S" ] && fail "a validation failure created $S" || ok "validation failures create nothing"
for f in "$tmp"/*.out; do
    [ "$f" = "$tmp/drynoenroot.out" ] && continue # the plan of the --dry-run above
    [ -s "$f" ] && fail "validation error printed on stdout: $f"
done
[ -s "$NP_STUB_LOG" ] && fail "enroot ran during validation failures"

# ---- --dry-run ------------------------------------------------------------------------
run dry PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup" --dry-run
if [ "$rc" -ne 0 ]; then
    fail "--dry-run exited $rc: $(head -3 "$tmp/dry.err")"
else
    grep -q "/enroot import --output $S/.nvidia+nemo+25.02.01.sqsh.importing.HOST.PID 'docker://nvcr.io#nvidia/nemo:25.02.01'\$" \
        "$tmp/dry.out" && ok "--dry-run shows the enroot import" || fail "--dry-run plan lacks the import: $(cat "$tmp/dry.out")"
    grep -q "^GET $EP/api/models/$REPO\$" "$tmp/dry.out" && ok "--dry-run shows the access check" \
        || fail "--dry-run plan lacks the access check"
    grep -q "^GET $EP/$REPO/resolve/main/tokenizer.json -> $S/hf/$REPO/tokenizer.json" "$tmp/dry.out" \
        && ok "--dry-run shows the downloads" || fail "--dry-run plan lacks the downloads"
fi
[ -e "$S" ] && fail "--dry-run created $S" || ok "--dry-run creates nothing"
[ -s "$tmp/requests.log" ] && fail "--dry-run made HTTP requests"
[ -s "$NP_STUB_LOG" ] && fail "--dry-run ran enroot"

# ---- --skip-image, one model, without enroot --------------------------------------------
run skip PATH="$NOENROOT" STAGE_PATH="$S" HF_TOKEN="$TOKEN" MODEL_SIZE=8b "$setup" --skip-image
if [ "$rc" -ne 0 ]; then
    fail "--skip-image exited $rc: $(head -3 "$tmp/skip.err")"
else
    ok "--skip-image without enroot exits 0"
fi
for d in experiments hf; do [ -d "$S/$d" ] || fail "$S/$d was not created"; done
for f in config.json tokenizer.json tokenizer_config.json special_tokens_map.json generation_config.json; do
    [ -s "$S/hf/$REPO/$f" ] || fail "$S/hf/$REPO/$f missing"
done
[ "$(wc -c <"$S/hf/$REPO/tokenizer.json")" -eq 280941 ] && ok "tokenizer.json complete (280941 bytes)" \
    || fail "tokenizer.json has the wrong size"
[ -e "$S/hf/meta-llama/Meta-Llama-3-70B" ] && fail "MODEL_SIZE=8b also fetched the 70b files"
ls "$S"/*.sqsh >/dev/null 2>&1 && fail "--skip-image imported an image"
grep -q "^hf  *$REPO -> $S/hf/$REPO (downloaded 5," "$tmp/skip.out" && ok "summary line on stdout" \
    || fail "no summary line: $(cat "$tmp/skip.out")"

# ---- a model that is not gated needs no token ---------------------------------------------
run nemotron PATH="$NOENROOT" STAGE_PATH="$tmp/stage15" MODEL_SIZE=15b "$setup" --skip-image
[ "$rc" -eq 0 ] && [ -d "$tmp/stage15/experiments" ] && ok "MODEL_SIZE=15b (not gated) needs no HF_TOKEN" \
    || fail "MODEL_SIZE=15b without HF_TOKEN exited $rc: $(head -2 "$tmp/nemotron.err")"

# ---- the full run, with retries and a dropped connection -----------------------------------
ctl "fail?n=2"
ctl "cut?bytes=60000&n=1"
run full PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup"
if [ "$rc" -ne 0 ]; then
    fail "full run exited $rc: $(head -5 "$tmp/full.err")"
else
    ok "full run exits 0"
fi
SQSH=$S/nvidia+nemo+25.02.01.sqsh
grep -q 'hsqs stub image of docker://nvcr.io#nvidia/nemo:25.02.01' "$SQSH" 2>/dev/null && ok "image imported to $SQSH" \
    || fail "$SQSH missing or wrong"
[ "$(grep -c '^argv: ' "$NP_STUB_LOG")" -eq 1 ] && ok "enroot ran once for the two recipes' shared image" \
    || fail "enroot ran $(grep -c '^argv: ' "$NP_STUB_LOG") times"
ls -a "$S" | grep -q importing && fail "a temporary import file was left"
for r in meta-llama/Meta-Llama-3-70B meta-llama/Llama-3.1-405B; do
    [ -s "$S/hf/$r/config.json" ] && [ -s "$S/hf/$r/tokenizer.json" ] || fail "$r files missing"
done
grep -q 'HTTP 503; retrying' "$tmp/full.err" && ok "503 answers were retried" || fail "no retry after 503"
grep -q 'bytes=60000-' "$tmp/requests.log" && ok "the cut download resumed with a Range request" \
    || fail "no Range request after the dropped connection"
find "$S" -name '*.part' | grep -q . && fail ".part files left: $(find "$S" -name '*.part')"
for r in meta-llama/Meta-Llama-3-70B meta-llama/Llama-3.1-405B; do
    [ "$(wc -c <"$S/hf/$r/tokenizer.json")" -eq 280941 ] || fail "$r/tokenizer.json incomplete"
done

# ---- idempotence: the second run downloads and imports nothing ----------------------------
before=$(resolve_200s)
run again PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup"
after=$(resolve_200s)
[ "$rc" -eq 0 ] && ok "second run exits 0" || fail "second run exited $rc: $(head -3 "$tmp/again.err")"
[ "$before" -eq "$after" ] && ok "second run downloads nothing" || fail "second run downloaded $((after - before)) files"
[ "$(grep -c '^argv: ' "$NP_STUB_LOG")" -eq 1 ] && ok "second run does not import again" || fail "second run ran enroot"
grep -q "^image  *$SQSH (already staged)" "$tmp/again.out" && ok "second run reports the image as already staged" \
    || fail "second run summary: $(cat "$tmp/again.out")"
run again2 PATH="$NOENROOT" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup"
[ "$rc" -eq 0 ] && ok "a staged image needs no enroot" || fail "re-run without enroot exited $rc: $(head -2 "$tmp/again2.err")"
cp "$SQSH" "$tmp/given.sqsh"
run given PATH="$NOENROOT" STAGE_PATH="$tmp/stage-given" RUN_CONF_IMAGE="$tmp/given.sqsh" HF_TOKEN="$TOKEN" "$setup"
[ "$rc" -eq 0 ] && grep -q "RUN_CONF_IMAGE, not imported" "$tmp/given.out" && ! ls "$tmp/stage-given"/*.sqsh >/dev/null 2>&1 \
    && ok "RUN_CONF_IMAGE=<existing .sqsh> skips the import" || fail "RUN_CONF_IMAGE run exited $rc: $(head -2 "$tmp/given.err")"

# ---- an import that did not finish left a 0-byte image: setup imports it again, never "already staged" ------
: >"$SQSH"
imports=$(grep -c '^argv: ' "$NP_STUB_LOG")
run emptydry PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup" --dry-run
[ "$rc" -eq 0 ] && grep -q "enroot import --output $S/.nvidia+nemo+25.02.01.sqsh.importing.HOST.PID" "$tmp/emptydry.out" &&
    ! grep -q '# keep the existing' "$tmp/emptydry.out" && ok "0-byte image: --dry-run plans the import again" ||
    fail "0-byte image: --dry-run exit $rc: $(cat "$tmp/emptydry.out" "$tmp/emptydry.err")"
run empty PATH="$STUBPATH" STAGE_PATH="$S" HF_TOKEN="$TOKEN" "$setup"
[ "$rc" -eq 0 ] && [ "$(grep -c '^argv: ' "$NP_STUB_LOG")" -eq $((imports + 1)) ] &&
    grep -q "^image  *$SQSH (imported)" "$tmp/empty.out" && grep -q 'hsqs stub image of' "$SQSH" &&
    grep -q "$SQSH: removed an empty file left by an earlier failure" "$tmp/empty.err" &&
    ok "0-byte image: setup removes it and imports again" ||
    fail "0-byte image: exit $rc: $(cat "$tmp/empty.out" "$tmp/empty.err")"

# ---- 401 (bad token) and 403 (no access) --------------------------------------------------
run bad401 PATH="$NOENROOT" STAGE_PATH="$tmp/stage401" HF_TOKEN=hf_wrong_0000 MODEL_SIZE=8b "$setup" --skip-image
expect_fail bad401 2 "did not accept HF_TOKEN" # checked before anything is created (36-setup-hf-access.sh)
[ -e "$tmp/stage401" ] && fail "STAGE_PATH was created before the 401"
grep -q "request access on $EP/$REPO" "$tmp/bad401.err" && ok "401 message gives the model page" \
    || fail "401 message lacks the model page"
grep -q hf_wrong_0000 "$tmp/bad401.err" "$tmp/bad401.out" && fail "the bad token was echoed"
[ -e "$tmp/stage401/hf/$REPO/config.json" ] && fail "files were written after a 401"
mkdir -p "$tmp/data/recipes"
sed 's#"meta-llama/Meta-Llama-3-8B"#"acme/denied-model"#' "$root/recipes/llama3.1.json" >"$tmp/data/recipes/llama3.1.json"
run bad403 PATH="$NOENROOT" NEMOPERF_DATADIR="$tmp/data" STAGE_PATH="$tmp/stage403" HF_TOKEN="$TOKEN" MODEL_SIZE=8b \
    "$setup" --skip-image
expect_fail bad403 2 "HTTP 403"
grep -q "request access on $EP/acme/denied-model" "$tmp/bad403.err" && ok "403 message gives the model page" \
    || fail "403 message lacks the model page: $(cat "$tmp/bad403.err")"

# ---- a failing import and an interrupted one ------------------------------------------------
run failimp PATH="$STUBPATH" NP_STUB_MODE=fail STAGE_PATH="$tmp/stagef" HF_TOKEN="$TOKEN" "$setup" --skip-hf
expect_fail failimp 1 "enroot import of nvcr.io#nvidia/nemo:25.02.01 failed"
ls -a "$tmp/stagef" | grep -q 'sqsh' && fail "a failed import left $(ls -a "$tmp/stagef" | grep sqsh)" \
    || ok "a failed import leaves no .sqsh and no temporary file"

env HF_ENDPOINT="$EP" PATH="$STUBPATH" NP_STUB_MODE=hang STAGE_PATH="$tmp/stageh" HF_TOKEN="$TOKEN" "$setup" --skip-hf \
    >"$tmp/hang.out" 2>"$tmp/hang.err" &
pid=$!
i=0
while ! ls -a "$tmp/stageh" 2>/dev/null | grep -q importing && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ls -a "$tmp/stageh" 2>/dev/null | grep -q importing && ok "the import writes a temporary name first" \
    || fail "no temporary import file appeared"
kill -TERM "$pid"
{ wait "$pid"; } 2>/dev/null
rc=$?
[ "$rc" -eq 143 ] && ok "SIGTERM during the import: killed by SIGTERM (143)" || fail "SIGTERM: exit $rc, want 143"
ls -a "$tmp/stageh" | grep -q sqsh && fail "an interrupted import left $(ls -a "$tmp/stageh" | grep sqsh)" \
    || ok "an interrupted import leaves nothing that looks finished"
grep -q 'interrupted' "$tmp/hang.err" && ok "the interruption is reported" || fail "no 'interrupted' message"
sleep 0.2
for p in $(pgrep -x sleep 2>/dev/null); do
    # a sleep started by our stub carries our NP_STUB_LOG in its environment
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "NP_STUB_LOG=$NP_STUB_LOG" \
        && fail "the stub's child process $p survived the interruption"
done

# ---- the token appears nowhere -----------------------------------------------------------------
for d in "$S" "$tmp/stage401" "$tmp/stage403" "$tmp/stagef" "$tmp/stageh"; do
    [ -e "$d" ] && grep -rq -- "$TOKEN" "$d" && fail "the token is in a file under $d"
done
for f in "$tmp"/*.out "$tmp"/*.err "$tmp/requests.log" "$NP_STUB_LOG"; do
    grep -q -- "$TOKEN" "$f" && fail "the token is in $f"
done
grep -q '^HF_TOKEN=' "$NP_STUB_LOG.env" && fail "HF_TOKEN reached enroot's environment"
grep -q '"auth": "ok"' "$tmp/requests.log" && ok "the token was sent (as a bearer header)" || fail "the token never reached the server"
[ "$fails" -eq 0 ] && ok "the token is in no file, output, log, argv or child environment"

if [ "$fails" -ne 0 ]; then
    echo "30-setup: $fails check(s) failed"
    exit 1
fi
echo "30-setup: all checks passed"
