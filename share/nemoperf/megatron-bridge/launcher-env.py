#!/usr/bin/env python3
"""launcher-env.py - what a release's own launcher sets for a row, by running NVIDIA's code on a stand-in NeMo-Run.

Runs in a scripts/performance tree of one Megatron-Bridge release (extract-recipes.py unpacks it with git
archive): the release's utils/executors.py slurm_executor() builds the executor and its perf_plugins.py
PerfEnvPlugin(...).setup(task, executor) adds the environment and the task's overrides, exactly as
setup_experiment.py main() wires them.  NeMo-Run, Megatron-Bridge's package and torch cannot exist here: a small
stand-in nemo_run (SlurmExecutor/Script/Plugin keeping what they are given) and stubs for every other import the
scripts make; what the functions compute is the release's own code.

Input (stdin): JSON {"rows": [{"args": [...], "gpus_per_node": N, ...}]}; output (stdout): JSON
{"rows": [{"env": {name: value}, "task_args": [...], "error": null}]}, one per input row in order.
Usage: launcher-env.py SCRIPTS_PERFORMANCE_DIR < rows.json
       launcher-env.py --main CHECKOUT_ROOT < rows.json   (releases before v0.3.0: their setup_experiment.py run as
       __main__ up to run.run(); each row also gets "rank" (entry point, script, its arguments), "pre_cmds",
       "srun_args", "segment"; the checkout root, the Slurm account/partition and NeMo-Run's log folder appear as
       @CHECKOUT@, @ACCOUNT@/@PARTITION@ and @LOG_DIR@; a row with "hf_token": true is given -hf @HF_TOKEN@)
"""
import argparse
import builtins
import dataclasses
import inspect
import json
import os
import sys
import types

sys.dont_write_bytecode = True


class _Stub(types.ModuleType):
    """A module, class and callable at once: every attribute is another stub (megatron.bridge, torch...)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(self.__name__ + "." + name)

    def __call__(self, *a, **k):
        return _Stub(self.__name__ + "()")

    def __iter__(self):
        return iter(())

    def __mro_entries__(self, bases):
        return (object,)


class _Kept:
    """Keeps what it is given (NeMo-Run's configuration objects)."""

    def __init__(self, *args, **kwargs):
        self.args = list(args)
        self.__dict__.update(kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


class SlurmExecutor(_Kept):
    def __init__(self, *args, **kwargs):
        self.env_vars = {}
        self.setup_lines = None
        self.tunnel = _Kept(job_dir="/nemo_run")
        super().__init__(*args, **kwargs)
        self.env_vars = dict(self.env_vars or {})


class Script(_Kept):
    def __init__(self, *args, **kwargs):
        self.args = []
        self.env = {}
        super().__init__(**kwargs)
        self.args = list(kwargs.get("args") or [])


class Plugin:
    """NeMo-Run's Plugin: a dataclass base with setup(task, executor)."""

    def setup(self, task, executor):
        pass


def _nemo_run():
    run = types.ModuleType("nemo_run")
    for name in ("Partial", "Config", "GitArchivePackager", "PatternPackager", "HybridPackager", "Packager",
                 "LocalTunnel", "SSHTunnel", "DGXCloudExecutor", "LeptonExecutor", "Experiment", "LocalExecutor",
                 "KubeflowExecutor", "Executor"):
        setattr(run, name, type(name, (_Kept,), {}))
    run.SlurmExecutor, run.Script, run.Plugin = SlurmExecutor, Script, Plugin
    config = types.ModuleType("nemo_run.config")
    config.get_nemorun_home = lambda: "/nemo_run_home"
    config.set_nemorun_home = lambda *a, **k: None
    config.Config, config.Partial = run.Config, run.Partial
    run.config = config
    mods = {"nemo_run": run, "nemo_run.config": config}
    for sub in ("nemo_run.core", "nemo_run.core.execution", "nemo_run.core.execution.launcher",
                "nemo_run.core.execution.slurm", "nemo_run.core.tunnel", "nemo_run.core.packaging",
                "nemo_run.run", "nemo_run.run.plugin"):
        m = types.ModuleType(sub)
        m.SlurmTemplate = type("SlurmTemplate", (_Kept,), {})
        m.Plugin, m.Script, m.SlurmExecutor = Plugin, Script, SlurmExecutor
        mods[sub] = m
    return mods


def _install(scripts_dir):
    sys.modules.update(_nemo_run())
    sys.path.insert(0, scripts_dir)
    real = builtins.__import__

    def imp(name, globs=None, locs=None, fromlist=(), level=0):
        try:
            return real(name, globs, locs, fromlist, level)
        except ImportError:
            if level:  # a relative import inside the scripts: theirs, not a stand-in
                raise
            mod = sys.modules.get(name) or _Stub(name)
            sys.modules[name] = mod
            parts = name.split(".")
            for i in range(1, len(parts)):  # parents exist too
                sys.modules.setdefault(".".join(parts[:i]), _Stub(".".join(parts[:i])))
            return sys.modules[parts[0]] if not fromlist else mod
    builtins.__import__ = imp


def _call(fn, known):
    """fn(**known restricted to its parameters), its other parameters None unless they have defaults."""
    params = inspect.signature(fn).parameters
    kw = {}
    for name, p in params.items():
        if name in known:
            kw[name] = known[name]
        elif p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            kw[name] = None
    return fn(**kw)


def one(row, parse, executors, plugins):
    argv = ["-a", "acct", "-p", "part"] + row["args"]
    got = parse()
    parser = got if isinstance(got, argparse.ArgumentParser) else None
    if parser is not None:
        args, _ = parser.parse_known_args(argv)
    else:
        old = sys.argv
        sys.argv = ["setup_experiment.py"] + argv
        try:
            args, _ = parse()
        finally:
            sys.argv = old
    a = vars(args)
    gpn = a.get("gpus_per_node") or row["gpus_per_node"]
    known = dict(a)
    known.update({"gpu": a.get("gpu"), "account": "acct", "partition": "part", "log_dir": "/logs",
                  "nodes": -(a["num_gpus"] // -gpn), "num_gpus_per_node": gpn, "time_limit": "00:30:00",
                  "container_image": "nvcr.io/nvidia/nemo:x", "custom_mounts": [], "custom_env_vars": {},
                  "custom_srun_args": [], "custom_bash_cmds": [], "hf_token": None, "offline": a.get("offline"),
                  "additional_slurm_params": None, "wandb_key": None,
                  # NEMO_HOME left unset as a user's default leaves it (executors.py: set only when nemo_home is
                  # not DEFAULT_NEMO_CACHE_HOME)
                  "nemo_home": getattr(executors, "DEFAULT_NEMO_CACHE_HOME", None)})
    executor = _call(executors.slurm_executor, known)
    # PerfEnvPlugin's fields as setup_experiment.py main() fills them from the parsed arguments
    fields = {"tp_size": "tensor_model_parallel_size", "pp_size": "pipeline_model_parallel_size",
              "cp_size": "context_parallel_size", "ep_size": "expert_model_parallel_size", "train_task": "task",
              "gpu": "gpu", "model_family_name": "model_family_name", "model_recipe_name": "model_recipe_name",
              "compute_dtype": "compute_dtype", "config_variant": "config_variant", "enable_vboost": "enable_vboost",
              "lock_gpu_freq": "lock_gpu_freq", "moe_a2a_overlap": "moe_a2a_overlap"}
    kw = {}
    for f in dataclasses.fields(plugins.PerfEnvPlugin):
        if f.name in fields and fields[f.name] in a:
            kw[f.name] = a[fields[f.name]]
    plugin = plugins.PerfEnvPlugin(**kw)
    task = Script(path="run_script.py", args=[])
    plugin.setup(task, executor)
    return {"env": {k: str(v) for k, v in executor.env_vars.items()}, "task_args": [str(x) for x in task.args],
            "error": None}


class _Submitted(Exception):
    """run.run() reached: what setup_experiment.py would submit is captured, nothing more of the script runs."""


def _load_file_module(name, path):
    """The module name from the file at path (a Megatron-Bridge source file the scripts import from the package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


CHECKOUT, LOG_DIR = "@CHECKOUT@", "@LOG_DIR@"  # placeholders the launch replaces (job/mbridge_perf.c)
HF_TOKEN = "@HF_TOKEN@"  # never a real token: extract-recipes.py takes out what it brings (the job carries none)


def one_main(row, root, setup_path):
    """Run the release's setup_experiment.py as __main__ (its own argv handling, executor, plugins and run.Script)
    up to run.run(), which the stand-in keeps: the rank command the release builds, its environment and srun
    settings.  Releases before v0.3.0 (v0.1.0rc4, r0.2.0) build their rank command there themselves."""
    import runpy
    got = {}

    def run_run(task, executor=None, plugins=None, **kw):
        before = list(task.args)
        for p in plugins or []:
            p.setup(task, executor)
        got.update(task=task, executor=executor, before=before)
        raise _Submitted()

    def plain(v):
        if isinstance(v, str):
            return v.replace(root, CHECKOUT)
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v if v is None or isinstance(v, (int, float, bool)) else str(v)
    run = sys.modules["nemo_run"]
    run.run = run_run
    saved = set(sys.modules)
    old_argv = sys.argv
    # a row whose release asserts an HF token (Qwen3) gets a placeholder: what the token changes stays visible
    sys.argv = [setup_path, "-a", "@ACCOUNT@", "-p", "@PARTITION@"] + list(row["args"]) + (
        ["-hf", HF_TOKEN] if row.get("hf_token") else [])
    try:
        runpy.run_path(setup_path, run_name="__main__")
        raise RuntimeError("setup_experiment.py ended without run.run()")
    except _Submitted:
        pass
    finally:
        sys.argv = old_argv
        for k in set(sys.modules) - saved:  # the next row imports the release's modules afresh
            del sys.modules[k]
    task, ex = got["task"], got["executor"]
    n = len(got["before"])
    launcher = getattr(ex, "launcher", None)
    pre = ((getattr(launcher, "template_vars", None) or {}).get("pre_cmds") or "") if launcher else ""
    return {"env": {k: plain(str(v)) for k, v in ex.env_vars.items()},
            "task_args": [plain(str(x)) for x in task.args[n:]],
            "rank": {"entrypoint": task.entrypoint, "script": os.path.relpath(task.path, root),
                     "args": [plain(str(x)) for x in got["before"]], "env": plain(dict(task.env or {}))},
            "pre_cmds": plain(pre), "srun_args": plain(list(ex.srun_args or [])), "segment": ex.segment,
            "nodes": ex.nodes, "ntasks_per_node": ex.ntasks_per_node, "error": None}


def main_setup(root):
    """--main ROOT: ROOT holds the release's scripts/performance (and src/, whose run_plugins.py v0.1.0rc4's
    setup_experiment.py imports from the package)."""
    rows = json.load(sys.stdin)["rows"]
    scripts_dir = os.path.join(root, "scripts", "performance")
    _install(scripts_dir)
    sys.modules["nemo_run.config"].get_nemorun_home = lambda: LOG_DIR
    # OmegaConf (v0.1.0rc4 setup_experiment.py:94 reads the YAML's perf_matrix with it): plain YAML data keeps
    # what setup_experiment.py reads of it (get / in / item access)
    import yaml
    oc = types.ModuleType("omegaconf")
    oc.OmegaConf = type("OmegaConf", (), {"load": staticmethod(lambda p: yaml.safe_load(open(p)) or {})})
    sys.modules["omegaconf"] = oc
    plugins = os.path.join(root, "src", "megatron", "bridge", "recipes", "run_plugins.py")
    os.chdir(scripts_dir)
    out = []
    for row in rows:
        try:
            if os.path.exists(plugins):
                _load_file_module("megatron.bridge.recipes.run_plugins", plugins)
            out.append(one_main(row, root, os.path.join(scripts_dir, "setup_experiment.py")))
        except (Exception, SystemExit) as e:  # a row the release's own code refuses: said, not guessed
            msg = "%s: %s" % (type(e).__name__, e)
            out.append({"env": None, "task_args": None, "error": msg.replace(root, CHECKOUT)})
    json.dump({"rows": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


def main():
    if sys.argv[1] == "--main":
        return main_setup(os.path.realpath(sys.argv[2]))
    scripts_dir = os.path.abspath(sys.argv[1])
    rows = json.load(sys.stdin)["rows"]
    _install(scripts_dir)
    os.chdir(scripts_dir)
    import argument_parser  # noqa: E402 (the release's, beside its setup_experiment.py)
    import perf_plugins  # noqa: E402
    from utils import executors  # noqa: E402
    import importlib
    out = []
    for row in rows:
        try:
            # one setup_experiment.py process a row: module state fresh (before v0.4, slurm_executor() updates
            # the module's PERF_ENV_VARS itself, utils/executors.py)
            executors, perf_plugins = importlib.reload(executors), importlib.reload(perf_plugins)
            out.append(one(row, argument_parser.parse_cli_args, executors, perf_plugins))
        except Exception as e:  # a row the release's own code refuses: said, not guessed
            out.append({"env": None, "task_args": None, "error": "%s: %s" % (type(e).__name__, e)})
    json.dump({"rows": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
