# sitecustomize.py - a stand-in of the NeMo container's Python for nemoperf_ftprep.py, tests only.
#
# What it is and why: the in-container step of `TASK=sft|lora nemoperf-setup`'s one-node job runs
# share/nemoperf/driver/nemoperf_ftprep.py inside the NeMo container (pyxis), which cannot exist
# here (no container runtime, no NeMo, no PyPI).  tests/e2e/31-setup-finetune.sh puts this folder
# on PYTHONPATH of the job step (its stub srun drops the --container-* flags), so Python imports
# this file first and it registers stand-ins of the modules the script uses, under their real
# names: nemo_run (Config/Partial/run(direct=True)/build), nemo.collections.llm (import_ckpt and
# the llama3_8b / llama3_70b / llama31_405b model() factories), SquadDataModule,
# PackedSequenceSpecs, AutoTokenizer, datasets.load_dataset("parquet").  They check their inputs
# as NeMo would need them (the staged Hugging Face folder with every shard of its index, the
# parquet files, no network) and write files where NeMo writes them (import_ckpt: output_path/
# context, weights; SquadDataModule: {training,validation,test}.jsonl, packed/<tok>/...).
# NP_STANDIN_FAIL=import|pack makes that step fail halfway; every call is logged to NP_STANDIN_LOG.
import json
import os
import sys
import types


def _log(msg):
    path = os.environ.get("NP_STANDIN_LOG")
    if path:
        with open(path, "a") as f:
            f.write("%s host=%s job=%s step=%s\n" % (msg, os.environ.get("SLURMD_NODENAME", "?"),
                                                    os.environ.get("SLURM_JOB_ID", "none"),
                                                    os.environ.get("SLURM_STEP_ID", "none")))


def _mod(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    m.__path__ = []
    sys.modules[name] = m
    return m


class Config:
    def __init__(self, fn, **kw):
        self.fn, self.kw = fn, kw


class Partial(Config):
    pass


def build(cfg):
    if isinstance(cfg, Config):
        return cfg.fn(**{k: build(v) for k, v in cfg.kw.items()})
    return cfg


def run(partial, direct=False, **_):
    assert direct, "the script runs the partial in-process (direct=True)"
    return build(partial)


class LlamaModel:
    def __init__(self, name):
        self.name = name


def _factory(name):
    return _mod("nemo.collections.llm.recipes." + name, model=lambda: Config(LlamaModel, name=name))


def import_ckpt(model, source, output_path=None, overwrite=False):
    assert isinstance(model, LlamaModel), model
    assert source.startswith("hf://"), source
    src = source[len("hf://"):]
    index = json.load(open(os.path.join(src, "model.safetensors.index.json")))
    for shard in set(index["weight_map"].values()):
        assert os.path.getsize(os.path.join(src, shard)) > 0, shard
    assert os.path.isfile(os.path.join(src, "config.json"))
    assert os.environ.get("HF_HUB_OFFLINE") == "1", "the job runs offline"
    os.makedirs(os.path.join(output_path, "weights"))
    with open(os.path.join(output_path, "weights", "__0_0.distcp"), "w") as f:
        f.write("stand-in weights of %s\n" % model.name)
    if os.environ.get("NP_STANDIN_FAIL") == "import":
        raise RuntimeError("stand-in: import failed halfway")
    os.makedirs(os.path.join(output_path, "context"))
    with open(os.path.join(output_path, "context", "model.yaml"), "w") as f:
        f.write("model: %s\nsource: %s\n" % (model.name, source))
    _log("import_ckpt %s %s -> %s" % (model.name, source, output_path))
    return output_path


class AutoTokenizer:
    def __init__(self, pretrained_model_name, use_fast=True):
        assert os.path.isfile(os.path.join(pretrained_model_name, "config.json")), pretrained_model_name
        self.name = pretrained_model_name


class PackedSequenceSpecs:
    def __init__(self, packed_sequence_size=-1, tokenizer_model_name=None, pad_cu_seqlens=False):
        self.packed_sequence_size, self.tokenizer_model_name = packed_sequence_size, tokenizer_model_name


class _Split(list):
    def train_test_split(self, test_size, seed):
        k = max(1, int(len(self) * test_size))
        return {"train": _Split(self[k:]), "test": _Split(self[:k])}


def load_dataset(kind, data_files=None, **_):
    assert kind == "parquet", kind
    out = {}
    for split, path in data_files.items():
        with open(path, "rb") as f:
            assert f.read(4) == b"PAR1", path
        out[split] = _Split({"context": "c%d" % i, "question": "q%d" % i, "answers": {"text": ["a%d" % i]}}
                            for i in range(40))
    return out


class SquadDataModule:
    def __init__(self, dataset_root, seq_length, tokenizer, micro_batch_size, global_batch_size,
                 packed_sequence_specs, dataset_kwargs):
        assert isinstance(tokenizer, AutoTokenizer)
        assert packed_sequence_specs.packed_sequence_size == seq_length
        self.root, self.specs = dataset_root, packed_sequence_specs

    def _preprocess_and_split_data(self, dset):
        sp = dset["train"].train_test_split(test_size=0.05, seed=1234)
        for name, rows in (("training", sp["train"]), ("validation", sp["test"]), ("test", dset["validation"])):
            with open(os.path.join(self.root, name + ".jsonl"), "w") as f:
                for r in rows:
                    f.write(json.dumps({"input": "Context: %s Question: %s Answer:" % (r["context"], r["question"]),
                                        "output": r["answers"]["text"][0]}) + "\n")

    def prepare_data(self):
        assert os.path.isfile(os.path.join(self.root, "training.jsonl")), "would download: no network"
        p = self.specs.packed_sequence_size
        d = os.path.join(self.root, "packed", self.specs.tokenizer_model_name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "training_%d.npy" % p), "wb") as f:
            f.write(b"\x93NUMPY stand-in %d\n" % p)
        if os.environ.get("NP_STANDIN_FAIL") == "pack":
            raise RuntimeError("stand-in: packing failed halfway")
        with open(os.path.join(d, "validation_%d.npy" % p), "wb") as f:
            f.write(b"\x93NUMPY stand-in %d\n" % p)
        with open(os.path.join(d, "%d_metadata.jsonl" % p), "w") as f:
            f.write(json.dumps({"max_samples_per_bin": 3, "dataset_max_seqlen": p}) + "\n")
        _log("packed %d into %s" % (p, d))


_mod("nemo_run", Config=Config, Partial=Partial, run=run, build=build)
_mod("datasets", load_dataset=load_dataset)
_mod("nemo")
_mod("nemo.collections")
_llm = _mod("nemo.collections.llm", import_ckpt=import_ckpt)
for _n in ("llama3_8b", "llama3_70b", "llama31_405b"):
    setattr(_llm, _n, _factory(_n))
_mod("nemo.collections.llm.recipes")
_mod("nemo.collections.llm.gpt")
_mod("nemo.collections.llm.gpt.data")
_mod("nemo.collections.llm.gpt.data.squad", SquadDataModule=SquadDataModule)
_mod("nemo.collections.llm.gpt.data.packed_sequence", PackedSequenceSpecs=PackedSequenceSpecs)
_mod("nemo.collections.common")
_mod("nemo.collections.common.tokenizers")
_mod("nemo.collections.common.tokenizers.huggingface")
_mod("nemo.collections.common.tokenizers.huggingface.auto_tokenizer", AutoTokenizer=AutoTokenizer)
