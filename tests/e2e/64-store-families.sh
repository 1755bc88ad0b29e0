#!/bin/sh
# 64-store-families.sh - the results store holds every family and every kind of run, as a user stores them:
# NeMo 2.0 runs of each kind (tests/data/parse/kinds: benchmark, profile, NCCL trace, checkpoint save and
# load, with their manifests), Megatron-Bridge runs as nemoperf launches them (nemoperf.json's "mbridge"
# object and a Megatron-Bridge-format log, written here as 62-mbridge-parse.sh does: no GPU on this machine)
# and an unidentified run.  --store, then --history (family and kind columns, kind= and family= filters,
# a selector matching nothing), --compare of Megatron-Bridge sets four a side (3 % slower, 0.2 % noise:
# SLOWER, exit 1) and across kinds (exit 2, both kinds named).  Stand-in: the logs (no GPU, no container).
set -u
P=${NP_BIN:-bin}/nemoperf-parse
T=$(mktemp -d "${TMPDIR:-/tmp}/np-store64.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "64-store-families: ok: $*"; }
bad() { echo "64-store-families: FAIL: $*"; fail=$((fail + 1)); }

# mb ROOT N SLOWDOWN SEED DATE CONTAINER [VARIANT GBS]: N DeepSeek V3 GB300 x256 MXFP8 runs, the published row's
# step time times SLOWDOWN, 0.2 % noise per step, one folder per run, logs dated DATE + run index days
mb() {
    python3 - "$@" <<'PY'
import calendar, json, os, random, sys, time
root, n, slow, seed, date, cont = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
variant = sys.argv[7] if len(sys.argv) > 7 else ""
gbs, seq, gpus, tps = (int(sys.argv[8]) if len(sys.argv) > 8 else 4096), 4096, 256, 6288.0
day = calendar.timegm(time.strptime(date, "%Y-%m-%d"))
rnd = random.Random(seed)
for k in range(n):
    d = os.path.join(root, "deepseek_v3_%s_%d_%d" % (cont, seed, k))
    os.makedirs(d)
    m = {"recipe": "deepseek_v3", "dtype": "fp8_mx", "gpu_type": "gb300", "gpus": gpus, "container": cont}
    if variant:
        m["variant"] = variant
    json.dump({"mbridge": m}, open(os.path.join(d, "nemoperf.json"), "w"))
    ms = 1000.0 * seq * gbs / (tps * gpus) * slow
    f = os.path.join(d, "log-mb_%d_0.out" % (7000 + seed * 10 + k))
    with open(f, "w") as o:
        for i in range(1, 51):
            t = ms * (1 + 0.002 * rnd.gauss(0, 1))
            o.write(" [2026-11-25 21:00:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                    "(ms): %.1f | learning rate: 1.000000E-04 | global batch size: %5d | lm loss: 1.050000E+01 | "
                    "loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | number of nan "
                    "iterations:   0 |\n" % (i % 60, i, 50, i * gbs, t, gbs))
    os.utime(f, (day + k * 86400, day + k * 86400))
PY
}
mb "$T/mbbase" 4 1.0 1 2026-11-01 26.08
mb "$T/mbslow" 4 1.0309 2 2026-11-10 26.08 # 3 % less throughput: 1 / 0.97
mb "$T/mbv1" 1 1.0 3 2026-11-20 26.06 v2 4096
mkdir -p "$T/unid/somewhere" && cp tests/data/parse/nemo2/in/*.out "$T/unid/somewhere/" 2>/dev/null ||
    printf 'Training epoch 0, iteration 9/49 | train_step_timing in s: 12.0 | global_step: 9\n' >"$T/unid/somewhere/x.out"
DB="$T/r.db"

# ---- --store: every identified run with its family and kind; the unidentified one left out, said why ----
"$P" --store --db "$DB" tests/data/parse/kinds/in "$T/mbbase" "$T/mbslow" "$T/mbv1" "$T/unid" >/dev/null 2>"$T/err"; rc=$?
grep -q 'stored 15 runs (15 added' "$T/err" && ok "--store: 6 NeMo runs of 5 kinds and 9 Megatron-Bridge runs stored" ||
    bad "--store: exit $rc: $(cat "$T/err")"
grep -q '1 unidentified run not stored (.*unid.*--recipe --size --dtype --gpus --gpu' "$T/err" &&
    ok "--store: the unidentified run is not stored, the note says why and how to identify it" ||
    bad "--store unidentified: $(cat "$T/err")"
sqlite3 "$DB" "SELECT count(*) FROM runs WHERE config LIKE '%?%'" 2>/dev/null | grep -qx 0 &&
    ok "no configuration of question marks in the store" || bad "a '?' configuration was stored"

# ---- --history: family and kind columns, kind= by run kind, family= ----
"$P" --history --db "$DB" >"$T/h" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && head -1 "$T/h" | grep -q '^ENDED  *FAMILY  *KIND  *CONFIGURATION' &&
    grep -q ' mbridge  *benchmark  *deepseek_v3 pretrain fp8_mx gb300x256 seq4096 gbs4096 26.08 ' "$T/h" &&
    grep -q ' mbridge  *benchmark  *deepseek_v3 pretrain fp8_mx gb300x256 seq4096 gbs4096 26.06 v2 ' "$T/h" &&
    grep -q ' nemo  *checkpoint-save  *llama3.1 8b' "$T/h" && ok "--history: FAMILY and KIND columns, the container and variant in the configuration" ||
    bad "--history table: exit $rc: $(cat "$T/h" "$T/err")"
"$P" --history --db "$DB" --format json family=mbridge >"$T/h.json" &&
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"]
assert len(r) == 9 and all(x["family"] == "mbridge" and x["kind"] == "benchmark" for x in r), r
assert sorted({x["container_tag"] for x in r}) == ["26.06", "26.08"], r' "$T/h.json" &&
    ok "--history family=mbridge: the 9 Megatron-Bridge runs, family and kind in JSON" || bad "--history family=: $(cat "$T/h.json")"
for k in benchmark:1 profile:2 nccl-trace:1 checkpoint-save:1 checkpoint-load:1; do
    n=$("$P" --history --db "$DB" --format csv "kind=${k%:*}" family=nemo | tail -n +2 | cut -d, -f3 | sort -u | tr '\n' ' ')
    c=$("$P" --history --db "$DB" --format csv "kind=${k%:*}" family=nemo | tail -n +2 | wc -l)
    [ "$n" = "${k%:*} " ] && [ "$c" -eq "${k#*:}" ] && ok "--history kind=${k%:*}: $c run(s) of that kind" ||
        bad "kind=${k%:*}: kinds '$n', $c runs"
done
# --group: a line per configuration that has a counted run, its family, kind, runs and newest run the listing's
"$P" --history --db "$DB" --format json >"$T/all.json" && "$P" --history --group --db "$DB" --format json >"$T/g.json" &&
    python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
g = json.load(open(sys.argv[2]))
want = {}
for r in runs:
    x = [v for v in (r["busbw_gbs"], r["steady_tokens_per_s_per_gpu"]) if v is not None and v > 0]
    if r["status"] in ("ok", "synthetic") and (x or (r["steady_step_time_s"] or 0) > 0):
        w = want.setdefault(r["config"], {"family": r["family"], "kind": r["kind"], "runs": 0, "newest": ""})
        w["runs"] += 1
        w["newest"] = max(w["newest"], r["ended"])
got = {c["config"]: {k: c[k] for k in ("family", "kind", "runs", "newest")} for c in g["configurations"]}
assert got == want, (got, want)
assert g["runs"] == sum(w["runs"] for w in want.values()) and len(want) >= 5, g
assert {w["family"] for w in want.values()} >= {"nemo", "mbridge"}, want
assert "checkpoint-save" in {w["kind"] for w in want.values()}, want' "$T/all.json" "$T/g.json" &&
    ok "--history --group: a line per configuration with a counted run, family, kind, runs and newest as listed" ||
    bad "--history --group: $(cat "$T/g.json")"
# a configuration whose only run failed (a stored run copied as failed, then removed): no line, and said so
python3 - "$DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in c.execute("PRAGMA table_info(runs)") if r[1] != "id"]
sel = ["run_key || '#failed'" if x == "run_key" else "'zz failed'" if x == "config" else "'failed'" if x == "status"
       else x for x in cols]
c.execute("INSERT INTO runs (%s) SELECT %s FROM runs LIMIT 1" % (", ".join(cols), ", ".join(sel)))
c.commit()
PY
"$P" --history --group --db "$DB" "config=zz failed" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && grep -q -- '--history --group: no run config=zz failed has a steady throughput' "$T/err" &&
    grep -q '^0 configurations, 0 runs' "$T/out" && ok "--history --group, a configuration of failed runs: no line, said" ||
    bad "--history --group, no counted run: exit $rc: $(cat "$T/out" "$T/err")"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM runs WHERE config = ?", ("zz failed",)); c.commit()' "$DB"
"$P" --history --db "$DB" recipe=lama3.1 >/dev/null 2>"$T/err"; rc=$?
grep -q -- '--history: 0 runs matched recipe=lama3.1; did you mean recipe=llama3.1?' "$T/err" &&
    ok "a selector matching nothing: '0 runs matched', the nearest value suggested" || bad "no match: exit $rc: $(cat "$T/err")"
"$P" --history --db "$DB" kind=checkpoint family=nemo >/dev/null 2>"$T/err"
grep -q 'did you mean kind=checkpoint-' "$T/err" && ok "kind=checkpoint: the nearest kind suggested" || bad "kind hint: $(cat "$T/err")"

# ---- --compare: Megatron-Bridge sets four a side; never across kinds ----
"$P" --compare --db "$DB" db:family=mbridge,container=26.08,until=2026-11-08 db:family=mbridge,container=26.08,since=2026-11-09 >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q '^deepseek_v3 pretrain fp8_mx gb300x256 seq4096 gbs4096 26.08 .* 4/4 .*SLOWER$' "$T/out" &&
    ok "--compare Megatron-Bridge db sets, 4 a side, 3 % slower: SLOWER, exit 1" || bad "--compare mbridge db: exit $rc: $(cat "$T/out" "$T/err")"
"$P" --compare --format json "$T/mbbase" "$T/mbslow" >"$T/cmp.json" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["configurations"]; assert len(c)==1 and c[0]["verdict"]=="SLOWER" and -3.3<c[0]["change_pct"]<-2.7, c' "$T/cmp.json" &&
    ok "--compare Megatron-Bridge folders: SLOWER near -3 %, exit 1" || bad "--compare mbridge folders: exit $rc: $(cat "$T/cmp.json" "$T/err")"
"$P" --compare --db "$DB" db:kind=benchmark,family=nemo db:kind=checkpoint-save >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "baseline's runs are benchmark; the candidate's checkpoint-save: runs of different kinds are never compared" "$T/err" &&
    [ ! -s "$T/out" ] && ok "--compare benchmark against checkpoint-save: exit 2 naming both kinds" || bad "--compare kinds: exit $rc: $(cat "$T/out" "$T/err")"
"$P" --compare --db "$DB" db:kind=benchmark,family=nemo db:kind=profile >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "the candidate's profile" "$T/err" && ok "--compare benchmark against profile: exit 2" || bad "--compare profile: exit $rc: $(cat "$T/err")"
k=tests/data/parse/kinds/in
"$P" --compare "$k/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1744407969" \
    "$k/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1744407972" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'benchmark; .*checkpoint-save' "$T/err" && ok "--compare of two folders of different kinds: exit 2" ||
    bad "--compare folders kinds: exit $rc: $(cat "$T/err")"
"$P" --compare --db "$DB" db:recipe=deepsek_v3 db:family=mbridge >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q -- "--compare: 0 runs matched recipe=deepsek_v3; did you mean recipe=deepseek_v3?" "$T/err" && grep -q "no configuration has runs on both sides" "$T/err" &&
    ok "--compare db side matching nothing: said, with the nearest value" || bad "--compare no match: exit $rc: $(cat "$T/err")"

# ---- paths: no doubled slash ----
HOME="$T/home/" XDG_DATA_HOME= NEMOPERF_DB= "$P" --history 2>"$T/err" >/dev/null
HOME="$T/home/" XDG_DATA_HOME= NEMOPERF_DB= "$P" --store "$T/mbv1" 2>"$T/err" >/dev/null
[ -f "$T/home/.local/share/nemoperf/results.db" ] && ! grep -q '//' "$T/err" && ok "HOME with a trailing slash: the store's path has no doubled slash" ||
    bad "home path: $(cat "$T/err")"

[ $fail -eq 0 ] && echo "64-store-families: all checks passed"
[ $fail -eq 0 ]
