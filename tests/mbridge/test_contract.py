#!/usr/bin/env python3
"""test_contract.py - the Megatron-Bridge rank commands nemoperf renders use only arguments the release accepts.

Inputs: share/nemoperf/megatron-bridge/rows-<container>.json for every published container (each row's
rank-command arguments) and tests/data/contract/mbridge-<release>-args.tsv (the release's argparse list, extracted
from scripts/performance/argument_parser.py at the pinned commit by tests/data/contract/extract-mbridge-args.py;
the parser itself beside it, gzipped).  Each container's rows are checked against their own release's list, and
every row's arguments are parsed by that release's own argument_parser.py (imported from the .gz with the
modules it imports stubbed: a parse that exits is a failure).
Every flag must be an option of that release, must not be one setup_experiment.py drops as launcher-only, must take
a value when given one (and not otherwise), and a value must be one of the option's literal choices when it has
them. run_script.py parses with parse_known_args and hands the rest to Hydra-style overrides, so an unknown flag
would not be refused by Python: this test is what refuses it. A planted unknown flag and a planted launcher-only
flag must both be caught. Also: every row resolves to a release config, and the published parallelism is what the
command asks for. No stand-in: NVIDIA's parser text at the pinned commits.

The RENDERED command is checked too: every row (the ones nemoperf does not launch as well) is rendered by bin/nemoperf-launch --print-config
(its "mbridge".rank_command, what the dry-run script runs) with MAX_STEPS, ENABLE_CHECKPOINT and ENABLE_PROFILE
variations; the command must run the release's entry point (bootstrap.py at v0.6.0, run_script.py at v0.5.0) from
the pinned checkout, every flag must keep the contract, and the rest must be Hydra-style key=value overrides.
A planted unknown flag in a rendered command is caught.  --print-config's settings must be the row's published
cells (TP/PP/CP/VP/EP, GBS, MBS, sequence length, variant), except where the row says its release's parser cannot
ask for one.  Skipped (said) when bin/nemoperf-launch is not built.
The releases before v0.3.0 (25.09 v0.1.0rc4, 25.11 r0.2.0 44dae92) build the rank command in their own
setup_experiment.py; extract-recipes.py ran it (launcher-env.py --main) and kept the command ("launcher".rank): each
launchable row's rendered command must be that command word for word (checkout, account and partition filled in),
and a planted change must be caught.  The launchable rows per container must be LAUNCHABLE, in the data and in
--list --format json.
"""
import argparse
import ast
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "share", "nemoperf", "megatron-bridge")
CONTRACT = os.path.join(ROOT, "tests", "data", "contract")
CONTAINERS = ("26.08", "26.06.01", "26.06", "26.04.01", "26.04", "26.02.01", "26.02", "25.11", "25.09")


def load_args(release):
    path = os.path.join(CONTRACT, "mbridge-%s-args.tsv" % release)
    opts, header, commit = {}, None, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            if "@" in line and commit is None:
                commit = line.split("@", 1)[1].split()[0]
            continue
        cells = line.rstrip("\n").split("\t")
        if header is None:
            header = cells
            continue
        row = dict(zip(header, cells))
        for o in row["options"].split(","):
            opts[o] = row
    return opts, commit


def check_argv(argv, opts):
    """Problems with one argument vector, [] when it keeps the contract."""
    problems, i = [], 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):
            problems.append("stray value %r" % a)
            i += 1
            continue
        flag = a.split("=", 1)[0]
        row = opts.get(flag)
        if row is None:
            problems.append("unknown argument %s" % flag)
            i += 1
            continue
        if row["launcher_only"] == "yes":
            problems.append("%s is launcher-only (setup_experiment.py drops it)" % flag)
        if row["value"] == "yes":
            if "=" in a:
                value = a.split("=", 1)[1]
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
            else:
                problems.append("%s needs a value" % flag)
                break
            if row["choices"] not in ("-", "None"):
                try:
                    choices = ast.literal_eval(row["choices"])
                except (ValueError, SyntaxError):
                    choices = None
                if isinstance(choices, (list, tuple)) and value not in [str(c) for c in choices]:
                    problems.append("%s %s: not one of %s" % (flag, value, row["choices"]))
        elif "=" in a:
            problems.append("%s takes no value" % flag)
        i += 1
    return problems


HYDRA = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+=")
ENTRY = {"v0.6.0": "scripts/performance/bootstrap.py"}  # every earlier release: scripts/performance/run_script.py


def check_rendered(cmd, opts, release, commit):
    """Problems with one rendered rank command (python <entry> <flags> <overrides>)."""
    if len(cmd) < 2 or cmd[0] != "python":
        return ["not a python command: %r" % cmd[:2]]
    want = "/src/Megatron-Bridge-%s/%s" % (commit, ENTRY.get(release, "scripts/performance/run_script.py"))
    problems = [] if cmd[1].endswith(want) else ["entry point %s, expected ...%s" % (cmd[1], want)]
    flags = [a for a in cmd[2:] if not HYDRA.match(a)]
    return problems + check_argv(flags, opts)


def render(row, stage, extra):
    """The row's rank command as nemoperf-launch --print-config renders it, or None when not built."""
    tool = os.path.join(ROOT, os.environ.get("NP_BIN") or "bin", "nemoperf-launch")  # make sanitize: build-san/bin
    if not os.access(tool, os.X_OK):
        return None
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "STAGE_PATH": stage,
           "RECIPE": row["recipe"], "DTYPE": row["dtype"], "GPU_TYPE": row["gpu_type"], "CONTAINER": row["container"],
           "JOB_TOTAL_GPUS": str(row["gpus"]), "TASK": row["task"]}
    if row.get("config_variant"):  # a request published twice (26.06 DeepSeek V3 GB300) is told apart by -cv
        env["CONFIG_VARIANT"] = row["config_variant"]
    env.update(extra)
    p = subprocess.run([tool, "--print-config"], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return ["RENDER FAILED", p.stderr.strip()]
    doc = json.loads(p.stdout)
    doc = doc[0] if isinstance(doc, list) else doc
    LAST_CONFIG[:] = [doc["mbridge"], doc]
    return doc["mbridge"]["rank_command"]


LAST_CONFIG = []  # the "mbridge" object of the last render (print_config_cells reads it), then the whole document
# launchable rows per container, as --list counts them: 25.09 and 25.11 run the rank command their release's own
# setup_experiment.py builds; the rest of each container is refused with its reason (25.11 DeepSeek V3 without MTP;
# 25.09 values its parser cannot ask for)
LAUNCHABLE = {"26.08": 18, "26.06.01": 14, "26.06": 41, "26.04.01": 47, "26.04": 44, "26.02.01": 36, "26.02": 33,
              "25.11": 28, "25.09": 23}


def list_counts():
    """{container: launchable rows} of bin/nemoperf-launch --list --format json, or None when not built."""
    tool = os.path.join(ROOT, os.environ.get("NP_BIN") or "bin", "nemoperf-launch")
    if not os.access(tool, os.X_OK):
        return None
    p = subprocess.run([tool, "--list", "--format", "json"], capture_output=True, text=True,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    out = {}
    for r in json.loads(p.stdout):
        if "mb_release" in r:
            out[r["container"]] = out.get(r["container"], 0) + (1 if r["launchable"] else 0)
    return out
CELLS = {"tp": "model.tensor_model_parallel_size", "pp": "model.pipeline_model_parallel_size",
         "cp": "model.context_parallel_size", "vp": "model.virtual_pipeline_model_parallel_size",
         "ep": "model.expert_model_parallel_size", "gbs": "train.global_batch_size", "mbs": "train.micro_batch_size"}


def release_built(row, cmd, doc):
    """Problems of a rendered command against the rank command the release's own setup_experiment.py builds
    (releases before v0.3.0: "launcher".rank, launcher-env.py --main), its placeholders filled: the checkout,
    and the account/partition run_script.py only parses (unset here: "dummy", v0.1.0rc4's own)."""
    rank = row["launcher"]["rank"]
    ck = cmd[1][:-len("/" + rank["script"])] if cmd[1].endswith("/" + rank["script"]) else None
    if ck is None:
        return ["entry point %s, the release builds %s" % (cmd[1], rank["script"])]
    want = [a.replace("@CHECKOUT@", ck).replace("@ACCOUNT@", "dummy").replace("@PARTITION@", "dummy")
            for a in rank["args"]] + row["launcher"]["task_args"]
    out = [] if cmd[2:] == want else ["rank command %s, the release builds %s" % (cmd[2:], want)]
    if row["launcher"]["env"].get("NEMORUN_HOME") == "@LOG_DIR@" and \
            doc["mbridge"]["env_origin"].get("NEMORUN_HOME", {}).get("value") != doc["experiment_dir"]:
        out.append("NEMORUN_HOME is not the experiment folder")
    return out


def print_config_cells(row, mb):
    """Problems of --print-config's "mbridge" against the published cells of its row: parallelism, GBS, MBS,
    sequence length, variant, container and whether it launches."""
    out = []
    for k, path in CELLS.items():
        want, have = row["published"][k], mb["settings"][path]["value"]
        have = None if have == "None" else have  # -vp None: no interleaving (v0.3.0+ parsers)
        if k == "vp" and want == 1 and have is None:
            continue
        if k in ("vp", "ep") and want is None and have in (None, 1):
            continue
        if want != have and "the release's parser has no" not in " ".join(row["launch"]["why_not"] or []):
            out.append("--print-config %s %s, published %s" % (path, have, want))
    if mb["seq_len"] != row["published"]["seq_len"]:
        out.append("--print-config seq_len %s, published %s" % (mb["seq_len"], row["published"]["seq_len"]))
    if mb["variant"] != row["variant"] or mb["config_variant"] != row["config_variant"]:
        out.append("--print-config variant %s/-cv %s, row %s/%s" % (mb["variant"], mb["config_variant"],
                                                                     row["variant"], row["config_variant"]))
    # NVIDIA's own launcher code run for the row (extract-recipes.py: launcher-env.py) and nemoperf's rendering of
    # it agree: the environment (less nemoperf's own variables, plus the row's post-tag plugin_env) and the task
    # overrides (PerfEnvPlugin's manual GC)
    lr = row.get("launcher")
    if lr and row["launch"]["launchable"]:
        want = dict(lr["env"])
        want.update({e["name"]: e["value"] for e in row.get("plugin_env") or []})
        have = {k: v["value"] for k, v in mb["env_origin"].items()
                if k not in ("HF_HOME", "PYTHONUNBUFFERED") and not k.startswith(("NEMOPERF_", "NCCL_DEBUG"))}
        for k in [k for k, v in want.items() if v == "@LOG_DIR@" and k in have]:
            want[k] = have[k]  # NeMo-Run's log folder: the experiment folder (release_built checks which)
        if have != want:
            out.append("environment differs from the release's own launcher: %s" % {
                k: (have.get(k), want.get(k)) for k in set(have) | set(want) if have.get(k) != want.get(k)})
        hydra = [a for a in mb["rank_command"] if HYDRA.match(a)]
        if hydra != lr["task_args"]:
            out.append("task overrides %s, the release's launcher gives %s" % (hydra, lr["task_args"]))
    if mb["container"] != row["container"] or mb["launchable"] != row["launch"]["launchable"]:
        out.append("--print-config container %s launchable %s, row %s %s" % (
            mb["container"], mb["launchable"], row["container"], row["launch"]["launchable"]))
    return out


class _Stub(types.ModuleType):
    """A module whose every attribute is another stub (and callable): what argument_parser.py imports beside
    argparse (nemo_run, megatron.bridge, the scripts' utils) is not needed to build and run the parser."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(self.__name__ + "." + name)

    def __call__(self, *a, **k):
        return _Stub(self.__name__ + "()")

    def __iter__(self):
        return iter(())


_PARSERS = {}
CHECKPOINTS = ("v0.5.0", "r0.5.0-cba825f", "v0.6.0")  # run_script.py's --save_dir/--save_interval
# rows whose args are setup_experiment.py's (25.09, 25.11: their rank command is built by the release and not
# rendered, the row says so): parsed with the Slurm account and partition a user gives setup_experiment.py
LAUNCHER_ONLY_ARGS = {"setup_experiment": ["-a", "account", "-p", "partition"]}


def own_parse(release, argv):
    """None when the release's own argument_parser.py parses argv as the rank command's run_script.py does (no
    Slurm account or partition: the rank command carries none), else the parser's complaint.  The parser is built
    from the .gz beside the args list."""
    if release not in _PARSERS:
        text = gzip.open(os.path.join(CONTRACT, "mbridge-%s-argument_parser.py.gz" % release), "rt",
                         encoding="utf-8").read()
        saved = dict(sys.modules)
        real_import = __import__

        def imp(name, globs=None, locs=None, fromlist=(), level=0):
            try:
                return real_import(name, globs, locs, fromlist, level)
            except ImportError:
                mod = _Stub(name)
                sys.modules[name] = mod
                return mod
        mod = types.ModuleType("mbridge_parser_" + re.sub(r"\W", "_", release))
        mod.__dict__["__builtins__"] = dict(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__),
                                            __import__=imp)
        try:
            exec(compile(text, "mbridge-%s-argument_parser.py" % release, "exec"), mod.__dict__)
        finally:
            for k in [k for k in sys.modules if k not in saved]:
                del sys.modules[k]
        _PARSERS[release] = mod.parse_cli_args
    import contextlib
    import io
    err = io.StringIO()
    old = sys.argv
    sys.argv = ["run_script.py"] + list(argv)
    try:
        with contextlib.redirect_stderr(err):
            got = _PARSERS[release]()  # v0.3.0+: the parser; before: parse_known_args()'s (args, rest)
            if isinstance(got, argparse.ArgumentParser):
                got = got.parse_known_args()
        rest = [a for a in got[1] if not HYDRA.match(a)]  # run_script.py's key=value overrides
        return "not taken by the parser: %s" % " ".join(rest) if rest else None
    except SystemExit:
        return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else "exit"
    finally:
        sys.argv = old


def main():
    failures, nrows, nparsed, planted = [], 0, 0, {}
    stage = tempfile.mkdtemp(prefix="np-contract-")
    nrendered = nbuilt = 0
    for c in CONTAINERS:
        doc = json.load(open(os.path.join(DATA, "rows-%s.json" % c), encoding="utf-8"))
        opts, commit = load_args(doc["release"])
        if commit != doc["commit"]:
            failures.append("%s: rows from %s, argument list from %s" % (c, doc["commit"], commit))
        for r in doc["rows"]:
            nrows += 1
            where = "%s %s %s %s %s %dgpu" % (c, r["task"], r["recipe"], r["gpu_type"], r["dtype"], r["gpus"])
            if r["resolved"] is None:
                failures.append("%s: no release config: %s" % (where, r["problems"]))
                continue
            for p in check_argv(r["args"], opts):
                failures.append("%s: %s" % (where, p))
            # the command asks for the published parallelism: resolved value or explicit override
            vals = dict(r["resolved"]["values"])
            flags = {"-tp": "tp", "-pp": "pp", "-cp": "cp", "-vp": "vp", "-ep": "ep", "-gb": "gbs", "-mb": "mbs"}
            for flag, k in flags.items():
                if flag in r["args"]:
                    v = r["args"][r["args"].index(flag) + 1]
                    vals[k] = None if v == "None" else int(v)
            cant = " ".join(r["launch"]["why_not"] or [])
            for flag, k in flags.items():
                want = r["published"][k]
                if k == "vp" and want == 1 and vals.get(k) is None:
                    continue  # VP 1: no interleaving, the config's None
                if want is not None and vals.get(k) != want and "the release's parser has no %s" % flag not in cant:
                    failures.append("%s: %s published %s, command gives %s" % (where, k, want, vals.get(k)))
        # the release's own parser takes every row's arguments
        for r in doc["rows"]:
            if r["resolved"] is not None:
                err = own_parse(doc["release"], r["args"] + LAUNCHER_ONLY_ARGS.get(r.get("args_are"), []))
                if err:
                    failures.append("%s %s %s %s %s %dgpu: %s's argument_parser.py: %s"
                                    % (c, r["task"], r["recipe"], r["gpu_type"], r["dtype"], r["gpus"],
                                       doc["release"], err))
                nparsed += 1
        if own_parse(doc["release"], doc["rows"][0]["args"] + ["-ng"]) is None:
            failures.append("%s: the release's parser took an -ng without its value" % c)
        # the rendered commands: every row (--print-config shows the rows nemoperf does not launch too), plain,
        # with MAX_STEPS/checkpoint, with a profile; each parsed by the release's own parser
        for r in (r for r in doc["rows"] if r["resolved"] is not None):
            for extra in ({}, {"MAX_STEPS": "30", "ENABLE_CHECKPOINT": "true"}, {"ENABLE_PROFILE": "true"}):
                cmd = render(r, stage, extra)
                if cmd is None:
                    break
                if "ENABLE_CHECKPOINT" in extra and r["mb_release"] not in CHECKPOINTS:
                    # before v0.5.0 run_script.py has no checkpoint flags: the checkpoint run is refused
                    if not (cmd and cmd[0] == "RENDER FAILED" and "ENABLE_CHECKPOINT" in cmd[1]):
                        failures.append("%s %s: ENABLE_CHECKPOINT not refused at %s" % (c, r["recipe"], r["mb_release"]))
                    continue
                where = "%s %s %s %s %s %dgpu %s" % (c, r["task"], r["recipe"], r["gpu_type"], r["dtype"], r["gpus"],
                                                     extra or "")
                if cmd and cmd[0] == "RENDER FAILED":
                    failures.append("%s: %s" % (where, cmd[1]))
                    continue
                nrendered += 1
                if not extra:
                    for p in print_config_cells(r, LAST_CONFIG[0]):
                        failures.append("%s: %s" % (where, p))
                    if (r.get("launcher") or {}).get("rank") and r["launch"]["launchable"]:
                        nbuilt += 1
                        for p in release_built(r, cmd, LAST_CONFIG[1]):
                            failures.append("%s: %s" % (where, p))
                        if not release_built(r, cmd + ["-ng", "1"], LAST_CONFIG[1]):
                            failures.append("%s: a planted change of the release-built command was not caught" % where)
                    if r.get("launcher") and r["launch"]["launchable"] and not planted.get(c):
                        planted[c] = 1  # a planted change of the release's environment is caught
                        bent = json.loads(json.dumps(r))
                        bent["launcher"]["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] = "7"
                        if not any("environment differs" in p for p in print_config_cells(bent, LAST_CONFIG[0])):
                            failures.append("%s: a planted launcher environment change was not caught" % where)
                for p in check_rendered(cmd, opts, doc["release"], doc["commit"]):
                    failures.append("%s (rendered): %s" % (where, p))
                err = own_parse(doc["release"], [a for a in cmd[2:] if not HYDRA.match(a)] +
                                LAUNCHER_ONLY_ARGS.get(r.get("args_are"), []))
                if err:
                    failures.append("%s (rendered): %s's argument_parser.py: %s" % (where, doc["release"], err))
                cv = cmd[cmd.index("-cv") + 1] if "-cv" in cmd else None
                if cv != r.get("config_variant"):
                    failures.append("%s: -cv %s rendered, the row is %s" % (where, cv, r.get("config_variant")))
                gb = cmd[cmd.index("-gb") + 1] if "-gb" in cmd else None
                if gb != (str(r["overrides"]["-gb"]) if "-gb" in r["overrides"] else None):
                    failures.append("%s: -gb %s rendered, the row's override is %s" % (where, gb, r["overrides"].get("-gb")))
                if "MAX_STEPS" in extra and "-ms" in r["args"] and cmd[cmd.index("-ms") + 1] != "30":
                    failures.append("%s: -ms is not MAX_STEPS" % where)
                if "MAX_STEPS" in extra and (r["resolved"].get("train_iters") or {}).get("value") and \
                        "train.train_iters=30" not in cmd:  # no -ms in the parser: the YAML's length overridden
                    failures.append("%s: MAX_STEPS is not train.train_iters" % where)
                if cmd:
                    if not check_rendered(cmd + ["--no_such_flag", "1"], opts, doc["release"], doc["commit"]):
                        failures.append("%s: a planted unknown argument in the rendered command was not caught" % where)
        # planted: an unknown flag and a launcher-only flag are refused
        good = doc["rows"][0]["args"]
        if not check_argv(good + ["--no_such_flag", "1"], opts):
            failures.append("%s: a planted unknown argument was not caught" % c)
        if any(o["launcher_only"] == "yes" for o in opts.values()) and \
                not check_argv(good + ["--additional_slurm_params", "x=y"], opts):
            failures.append("%s: a planted launcher-only argument was not caught" % c)
        if not check_argv(good + ["-c", "fp4"], opts) and opts["-c"]["choices"] not in ("-", "None"):
            failures.append("%s: a value outside -c's choices was not caught" % c)
    counts = list_counts()
    for c in CONTAINERS:
        doc = json.load(open(os.path.join(DATA, "rows-%s.json" % c), encoding="utf-8"))
        n = sum(1 for r in doc["rows"] if r["launch"]["launchable"])
        if n != LAUNCHABLE[c] or (counts is not None and counts.get(c) != n):
            failures.append("%s: %d launchable rows (--list %s), expected %d" % (c, n, counts and counts.get(c),
                                                                                   LAUNCHABLE[c]))
    if nrendered and nbuilt != LAUNCHABLE["25.09"] + LAUNCHABLE["25.11"]:
        failures.append("%d rendered commands checked against the release-built ones, expected %d"
                        % (nbuilt, LAUNCHABLE["25.09"] + LAUNCHABLE["25.11"]))
    for f in failures:
        print("FAIL: " + f)
    print("mbridge contract: %d rows of %s, %d parsed by their release's parser, %d rendered commands%s (%d the "
          "release's own setup_experiment.py builds, word for word), %d failures"
          % (nrows, "+".join(CONTAINERS), nparsed, nrendered, "" if nrendered else " (%s/nemoperf-launch not built: skipped)" % (os.environ.get("NP_BIN") or "bin"),
             nbuilt, len(failures)))
    os.rmdir(stage) if not os.listdir(stage) else None
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
