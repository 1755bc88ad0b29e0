# nemoperf_ftprep.py - the in-container step of `TASK=sft|lora nemoperf-setup`'s one-node job.
#
# Runs once per model inside the NeMo container (srun --container-image), with NEMO_HOME the
# staged folder, and no network: nemoperf-setup has already downloaded, with its own libcurl
# client and HF_TOKEN, the model's Hugging Face files into $NEMO_HOME/hf/<org>/<name>/ and
# SQuAD's parquet files into $NEMO_HOME/datasets/squad-parquet/plain_text/.  With NeMo's own code:
#   1. llm.import_ckpt(model=<factory>.model(), source="hf://<local folder>") into
#      $NEMO_HOME/models/<org>/<name> (NVIDIA/NeMo v2.3.1 scripts/performance/utils.py l.430-444
#      import_ckpt_experiment, run here with nemo_run.run(..., direct=True));
#   2. SQuAD as SquadDataModule writes it ({training,validation,test}.jsonl, gpt/data/squad.py
#      l.102-152) from the parquet files (datasets.load_dataset("parquet"), the same rows
#      load_dataset("squad") reads), then packed for each pack length by the data module's own
#      prepare_data (gpt/data/fine_tuning.py l.118-145 -> packed_sequence.py
#      prepare_packed_sequence_data, first_fit_shuffle) into
#      $NEMO_HOME/datasets/squad/packed/<org>--<name>/{training,validation}_<P>.npy, <P>_metadata.jsonl.
# Idempotent (what exists is kept) and atomic: everything is written under a temporary name
# next to its final place and renamed into place on success (the metadata file last, since
# the launch checks it); a failure leaves no final name behind.
import argparse
import os
import shutil
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(prog="nemoperf_ftprep.py", allow_abbrev=False)
    p.add_argument("--nemo-home", required=True)
    p.add_argument("--factory", required=True)          # llama3_8b, llama3_70b, llama31_405b
    p.add_argument("--repo", required=True)             # meta-llama/Meta-Llama-3-8B
    p.add_argument("--hf-dir", required=True)           # the files nemoperf-setup downloaded
    p.add_argument("--parquet-dir", required=True)      # .../squad-parquet/plain_text
    p.add_argument("--pack-len", type=int, action="append", required=True)
    p.add_argument("--tokenizer-model-name", required=True)  # <org>--<name> (fine_tuning.py l.350)
    p.add_argument("--tag", default=str(os.getpid()))  # temporary names: the job id
    return p.parse_args(argv)


def import_checkpoint(a):
    """llm.import_ckpt into a temporary folder, renamed to models/<org>/<name> when it completes."""
    final = os.path.join(a.nemo_home, "models", a.repo)
    if os.path.isdir(os.path.join(final, "context")):
        print("nemoperf_ftprep: checkpoint %s already imported, kept" % final, flush=True)
        return
    import nemo_run as run
    from nemo.collections import llm

    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, ".%s.importing.%s" % (os.path.basename(final), a.tag))
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        run.run(run.Partial(llm.import_ckpt, model=getattr(llm, a.factory).model(), source="hf://" + a.hf_dir,
                            output_path=tmp, overwrite=False), direct=True)
        if not os.path.isdir(os.path.join(tmp, "context")):
            raise RuntimeError("import_ckpt wrote no %s/context" % tmp)
        os.rename(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("nemoperf_ftprep: imported %s" % final, flush=True)


def packed_dir(root, a):
    return os.path.join(root, "packed", a.tokenizer_model_name)


def prepare_data(a):
    """SQuAD jsonl and the packed files of every pack length, NeMo's code, in a temporary root."""
    squad = os.path.join(a.nemo_home, "datasets", "squad")
    final_pack = packed_dir(squad, a)
    todo = [p for p in a.pack_len if not os.path.isfile(os.path.join(final_pack, "%d_metadata.jsonl" % p))]
    if not todo:
        print("nemoperf_ftprep: SQuAD packed to %s already prepared, kept" % a.pack_len, flush=True)
        return
    import datasets
    from nemo.collections.common.tokenizers.huggingface.auto_tokenizer import AutoTokenizer
    from nemo.collections.llm.gpt.data.packed_sequence import PackedSequenceSpecs
    from nemo.collections.llm.gpt.data.squad import SquadDataModule

    tmp = os.path.join(a.nemo_home, "datasets", ".squad.preparing.%s" % a.tag)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        dset = datasets.load_dataset("parquet", data_files={
            "train": os.path.join(a.parquet_dir, "train-00000-of-00001.parquet"),
            "validation": os.path.join(a.parquet_dir, "validation-00000-of-00001.parquet")})
        tokenizer = AutoTokenizer(pretrained_model_name=a.hf_dir, use_fast=True)  # the staged files
        for i, p in enumerate(todo):
            # the data module of the recipe (finetune_default.py l.63-70, llama3_8b.py l.323-327)
            dm = SquadDataModule(dataset_root=tmp, seq_length=p, tokenizer=tokenizer, micro_batch_size=1,
                                 global_batch_size=8, dataset_kwargs={"pad_to_max_length": True},
                                 packed_sequence_specs=PackedSequenceSpecs(
                                     packed_sequence_size=p, tokenizer_model_name=a.tokenizer_model_name))
            if i == 0:
                dm._preprocess_and_split_data(dset)  # squad.py l.102-152 (seed 1234, 5 % validation)
            # train_path exists: no download; packs with NeMo's own shuffle seed 1234 (FineTuningDataModule
            # seed=1234, fine_tuning.py v2.3.0 l.71, used at l.132 and l.143), as NVIDIA's runs did
            dm.prepare_data()
        os.makedirs(final_pack, exist_ok=True)
        for split in ("training", "validation", "test"):  # keep jsonl already in place
            src, dst = os.path.join(tmp, split + ".jsonl"), os.path.join(squad, split + ".jsonl")
            if not os.path.exists(dst):
                os.rename(src, dst)
        for p in todo:
            names = ["training_%d.npy" % p, "validation_%d.npy" % p, "%d_metadata.jsonl" % p]
            for name in names:  # the metadata file last
                src = os.path.join(packed_dir(tmp, a), name)
                if not os.path.isfile(src):
                    raise RuntimeError("NeMo's packing wrote no %s" % src)
                os.rename(src, os.path.join(final_pack, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("nemoperf_ftprep: SQuAD packed to %s in %s" % (todo, final_pack), flush=True)


def main(argv):
    a = parse_args(argv)
    import_checkpoint(a)
    prepare_data(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
