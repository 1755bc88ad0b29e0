# nemoperf_nemo.py - the in-container driver of a nemoperf NeMo job (one process per srun task).
#
# nemoperf-launch copies this file into the experiment's code/ folder (mounted at
# /nemo_run/code) and every srun task runs `python /nemo_run/code/nemoperf_nemo.py ARGS`.
# The C side decided every setting (see `nemoperf-launch --print-config`, "nemo"); this
# file only turns the explicit arguments into the NeMo recipe NVIDIA's
# scripts/performance built and runs it in-process with nemo_run.run(recipe, direct=True),
# as NeMo's own CI does (NVIDIA/NeMo tests/collections/llm/llama3_pretraining.py l.141).
# Lightning's SLURMEnvironment makes the tasks one world (SLURM_PROCID, SLURM_NTASKS).
#
# Sources, by setting (facts/nemo-job.md, facts/seed000.md):
#   P  NVIDIA/NeMo scripts/performance/utils.py set_primary_perf_configs
#      (d2b2155 l.188-252 for 25.02, v2.3.1 l.234-387 for 25.04) and
#      set_exp_logging_configs (v2.3.1 l.390-427)
#   L  NVIDIA/dgxc-benchmarking v25.04 llama3.1/pretrain_llama31.py l.52-186
#   M  NVIDIA/NeMo v2.3.1 scripts/performance/llm/pretrain_<model>.py
#   F  NVIDIA/NeMo v2.3.1 scripts/performance/llm/finetune_llama3_8b.py, finetune_llama3_70b.py,
#      finetune_llama31_405b.py; nemo/collections/llm/recipes/llama3_8b.py finetune_recipe (l.249-391)
#
# Tasks (TASKS): "pretrain", and seed 000's fine-tuning "sft" / "lora" (NeMo 25.04 finetune
# recipes on SQuAD packed sequences, the data and the checkpoint prepared by ./setup).

import argparse
import sys


def _size(text):
    """An optional parallel size: an integer, or "none" (NeMo's None)."""
    return None if text == "none" else int(text)


def _bool(text):
    if text not in ("true", "false"):
        raise argparse.ArgumentTypeError("expected true or false")
    return text == "true"


def _setting(text):
    """name=value for model.config: a JSON literal (true, false, an integer)."""
    import json

    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError("expected name=value")
    return name, json.loads(value)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="nemoperf_nemo.py", allow_abbrev=False)
    p.add_argument("--task", required=True, choices=sorted(TASKS))
    p.add_argument("--factory", required=True)
    for name in ("--nodes", "--gpus-per-node", "--max-steps", "--tp", "--pp", "--cp", "--ep", "--mbs", "--gbs",
                 "--num-train-samples", "--num-layers", "--hidden-size"):
        p.add_argument(name, type=int, required=True)
    p.add_argument("--vp", type=_size, required=True)
    p.add_argument("--etp", type=_size, required=True)
    p.add_argument("--fp8", choices=("none", "delayed", "current"), required=True)
    p.add_argument("--fsdp", action="store_true")
    p.add_argument("--cuda-graphs", action="store_true")
    p.add_argument("--tp-comm-overlap-cfg")
    p.add_argument("--overlap-param-gather-with-optimizer-step", type=_bool, required=True)
    p.add_argument("--fp8-param-gather", type=_bool)
    p.add_argument("--no-average-in-collective", action="store_true")
    p.add_argument("--cross-entropy-fusion-te", action="store_true")
    p.add_argument("--flops-callback")
    p.add_argument("--model-config", type=_setting, action="append", default=[])
    tok = p.add_mutually_exclusive_group()
    tok.add_argument("--tokenizer-hf")
    tok.add_argument("--tokenizer-null", type=int)
    p.add_argument("--tokenizer-on-model", action="store_true")
    p.add_argument("--profile-start", type=int)
    p.add_argument("--profile-stop", type=int)
    p.add_argument("--profile-ranks", type=int, default=8)
    p.add_argument("--checkpoint-save", action="store_true")
    p.add_argument("--checkpoint-load")
    # fine-tuning (sft, lora)
    p.add_argument("--pack-len", type=int)
    p.add_argument("--lora-dim", type=int)
    p.add_argument("--lora-alpha", type=int)
    p.add_argument("--lora-target", action="append", default=[])
    p.add_argument("--tokenizer-model-name")
    p.add_argument("--dataset-root")
    a = p.parse_args(argv)
    finetune = a.task in ("sft", "lora")
    if finetune and not (a.pack_len and a.tokenizer_model_name and a.dataset_root):
        p.error("--task %s needs --pack-len, --tokenizer-model-name and --dataset-root" % a.task)
    if (a.task == "lora") != bool(a.lora_dim and a.lora_alpha and a.lora_target):
        p.error("--lora-dim, --lora-alpha and --lora-target go with --task lora, and only with it")
    if not finetune and (a.pack_len or a.tokenizer_model_name or a.dataset_root):
        p.error("--pack-len, --tokenizer-model-name and --dataset-root are for --task sft|lora")
    return a


def comm_overlap_callback(recipe):
    """The recipe's MegatronCommOverlapCallback config, or None (P get_comm_overlap_callback_idx)."""
    from nemo.lightning.pytorch.callbacks.megatron_comm_overlap import MegatronCommOverlapCallback

    for cb in recipe.trainer.callbacks or []:
        if cb.__fn_or_cls__ == MegatronCommOverlapCallback:
            return cb
    return None


def build_pretrain(a):
    """The recipe of NVIDIA's pretrain_<model>.py, before the settings common to every task."""
    from nemo.collections import llm

    recipe = getattr(llm, a.factory).pretrain_recipe(performance_mode=True)
    recipe.data.num_train_samples = a.num_train_samples  # one epoch (L l.125, P v2.3.1 l.290)
    recipe.model.config.num_layers = a.num_layers  # L l.145-149 (the 405b proxies)
    recipe.model.config.hidden_size = a.hidden_size
    if a.flops_callback:  # P v2.3.1 set_exp_logging_configs l.400-408
        import nemo_run as run
        from nemo.lightning.pytorch.callbacks.flops_callback import FLOPsMeasurementCallback

        recipe.trainer.callbacks.append(
            run.Config(FLOPsMeasurementCallback, model_config=recipe.model.config, data_config=recipe.data,
                       model_name=a.flops_callback))
    return recipe


def build_finetune(a):
    """The recipe of NVIDIA's finetune_<model>.py (F): the model's finetune_recipe in performance mode
    on packed SQuAD, SFT = peft_scheme "none" (F 8b l.61), the pack length as seq_length (F 8b l.64-67,
    70b l.72-78, 405b l.71: the recipe's default)."""
    from nemo.collections import llm

    scheme = "lora" if a.task == "lora" else "none"
    recipe = getattr(llm, a.factory).finetune_recipe(peft_scheme=scheme, performance_mode=True, packed_sequence=True,
                                                     seq_length=a.pack_len)
    if a.task == "lora":  # the recipe's own values (llama3_8b.py l.310-312, l.372), stated explicitly
        recipe.peft.dim = a.lora_dim
        recipe.peft.alpha = a.lora_alpha
        recipe.peft.target_modules = list(a.lora_target)
    # the packed files ./setup prepared: NEMO_HOME/datasets/squad/packed/<org>--<name>/ (fine_tuning.py l.274-312)
    recipe.data.dataset_root = a.dataset_root
    recipe.data.packed_sequence_specs.tokenizer_model_name = a.tokenizer_model_name
    recipe.optim.config.use_distributed_optimizer = True  # F 8b l.103, 70b l.144
    recipe.model.config.disable_parameter_transpose_cache = True  # F 8b l.104, 70b l.145
    return recipe


TASKS = {"pretrain": build_pretrain, "sft": build_finetune, "lora": build_finetune}


def apply_parallelism(recipe, a):
    """P: trainer size, batch sizes, TP/PP/CP/VP/EP/ETP, sequence parallel, param-gather overlap."""
    recipe.trainer.num_nodes = a.nodes
    recipe.trainer.devices = a.gpus_per_node
    recipe.trainer.max_steps = a.max_steps
    recipe.trainer.val_check_interval = a.max_steps
    recipe.trainer.limit_val_batches = 0
    recipe.trainer.log_every_n_steps = 1
    recipe.data.micro_batch_size = a.mbs
    recipe.data.global_batch_size = a.gbs
    s = recipe.trainer.strategy
    s.tensor_model_parallel_size = a.tp
    s.pipeline_model_parallel_size = a.pp
    s.context_parallel_size = a.cp
    s.virtual_pipeline_model_parallel_size = a.vp
    s.expert_model_parallel_size = a.ep
    s.expert_tensor_parallel_size = a.etp
    s.sequence_parallel = a.tp > 1
    if a.no_average_in_collective:  # M pretrain_mixtral_8x22b.py l.84-87 (ETP != TP)
        s.ddp.average_in_collective = False
    cb = comm_overlap_callback(recipe)
    if cb is not None:
        cb.overlap_param_gather_with_optimizer_step = a.overlap_param_gather_with_optimizer_step


def apply_performance(recipe, a):
    """Precision, TP-overlap config, CUDA graphs, FSDP, tokenizer, model.config extras."""
    import nemo_run as run

    if a.fp8 != "none":
        from nemo.collections.llm.recipes.precision import mixed_precision as mp

        if a.fp8 == "delayed":  # 25.02 (L l.129-131)
            recipe.trainer.plugins = mp.bf16_with_fp8_mixed()
        else:  # 25.04 -fr cs (P v2.3.1 l.364-375)
            recipe.trainer.plugins = mp.bf16_with_fp8_current_scaling_mixed()
            recipe.trainer.plugins.first_last_layers_bf16 = False
        recipe.trainer.plugins.grad_reduce_in_fp32 = False
    if a.tp_comm_overlap_cfg:  # L l.133-140, M: the dtype- and system-specific userbuffers config
        import fiddle as fdl
        import fiddle._src.experimental.dataclasses as fdl_dc
        from nemo.collections.llm.recipes.tp_overlap_configs import userbuffers

        cb = comm_overlap_callback(recipe)
        assert cb is not None, "MegatronCommOverlapCallback missing. Required for performance."  # as NVIDIA's
        cfg = getattr(userbuffers, a.tp_comm_overlap_cfg)
        cb.tp_comm_overlap_cfg = fdl.cast(run.Config, fdl_dc.convert_dataclasses_to_configs(cfg))
    if a.cross_entropy_fusion_te:  # P v2.3.1 l.312
        recipe.model.config.cross_entropy_fusion_impl = "te"
    recipe.model.config.enable_cuda_graph = a.cuda_graphs
    recipe.trainer.strategy.use_te_rng_tracker = a.cuda_graphs
    if a.fsdp:  # P v2.3.1 l.328-346 (GB200 Llama3 70B)
        recipe.model.config.init_model_with_meta_device = True
        recipe.trainer.strategy.fsdp = "megatron"
        ddp = recipe.trainer.strategy.ddp
        ddp.data_parallel_sharding_strategy = "optim_grads_params"
        ddp.average_in_collective = False
        ddp.keep_fp8_transpose_cache_when_using_custom_fsdp = False
        recipe.model.config.gradient_accumulation_fusion = False
        if a.fp8_param_gather is not None:  # 25.04 FP8: the precision recipe's True, as NVIDIA's NeMo left it
            # (7a8f1cc7bc / v2.3.1; v2.3.0's utils.py l.352-354 forced it False under FSDP)
            recipe.trainer.plugins.fp8_param_gather = a.fp8_param_gather
        cb = comm_overlap_callback(recipe)
        if cb is not None and cb.defer_embedding_wgrad_compute:
            cb.defer_embedding_wgrad_compute = False
            if a.tp > 1:
                cb.tp_comm_overlap = False
    for name, value in a.model_config:  # e.g. GPT3 tp_only_amax_red (M pretrain_gpt3_175b.py l.118)
        setattr(recipe.model.config, name, value)
    if a.tokenizer_hf:  # P hf_tokenizer(): AutoTokenizer, here from the folder ./setup staged
        from nemo.collections.common.tokenizers.huggingface.auto_tokenizer import AutoTokenizer

        recipe.data.tokenizer = run.Config(AutoTokenizer, pretrained_model_name=a.tokenizer_hf, use_fast=True)
    elif a.tokenizer_null:  # M pretrain_nemotron4_*.py: NullTokenizer, no download
        from nemo.collections.nlp.modules.common.tokenizer_utils import get_nmt_tokenizer

        recipe.data.tokenizer = run.Config(get_nmt_tokenizer, library="null", model_name="NullTokenizer",
                                           vocab_size=a.tokenizer_null)
        if a.tokenizer_on_model:  # 340b
            recipe.model.tokenizer = recipe.data.tokenizer


def apply_finetune(recipe, a):
    """P l.320-325: packed cu_seqlens padded when CUDA graphs are on; F 70b l.120-139, 405b l.113-132:
    FP8 LoRA with TP > 1 turns TP overlap on with the LoRA userbuffers config (the --model-config
    tp_comm_overlap_disable_qkv / tp_comm_bulk_dgrad / tp_comm_overlap_rs_dgrad come with it)."""
    if a.task not in ("sft", "lora"):
        return
    recipe.data.packed_sequence_specs.pad_cu_seqlens = a.cuda_graphs
    if a.task == "lora" and a.tp_comm_overlap_cfg:
        cb = comm_overlap_callback(recipe)
        cb.tp_comm_overlap = True


def apply_logging_and_checkpoints(recipe, a):
    """P: no TensorBoard, no logger, log.ckpt None; L l.154-176: checkpoint save and load."""
    import nemo_run as run

    recipe.log.tensorboard = None
    recipe.trainer.logger = False
    # None leaves Lightning's default ModelCheckpoint when checkpointing is on: the seeds'
    # code/nemo_experiments/default/checkpoints/default--None=...-consumed_samples=N/weights/*.distcp
    recipe.log.ckpt = None
    recipe.trainer.enable_checkpointing = a.checkpoint_save
    if a.checkpoint_load:
        # model and optimizer only, not the loop state: max_steps 1 trains one more step
        import nemo.lightning as nl

        recipe.resume = run.Config(
            nl.AutoResume,
            resume_if_exists=True,
            resume_ignore_no_checkpoint=False,
            restore_config=run.Config(nl.RestoreConfig, path=a.checkpoint_load, load_model_state=True,
                                      load_optim_state=True, load_artifacts=False),
        )


def apply_profile(recipe, a):
    """NsysPlugin.setup (NeMo nemo/lightning/run/plugins.py): the callback that opens nsys's
    cudaProfilerApi capture range; the nsys prefix itself is on the srun line.  Window and ranks as the C
    side decided (NVIDIA's own: 20-25 on ranks 0-7 for 25.02, 5-6 on rank 0 for 25.04)."""
    if a.profile_start is None:
        return
    import nemo_run as run
    from nemo.lightning.pytorch.callbacks import NsysCallback

    recipe.trainer.callbacks.append(
        run.Config(NsysCallback, start_step=a.profile_start, end_step=a.profile_stop,
                   ranks=list(range(a.profile_ranks))))


def build(argv):
    a = parse_args(argv)
    recipe = TASKS[a.task](a)
    apply_parallelism(recipe, a)
    apply_performance(recipe, a)
    apply_finetune(recipe, a)
    apply_logging_and_checkpoints(recipe, a)
    apply_profile(recipe, a)
    return recipe


def main(argv):
    import nemo_run as run

    recipe = build(argv)
    run.run(recipe, direct=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
