# standin.py - a small STRICT stand-in of the NeMo / NeMo-Run / Fiddle API surface the driver touches.
#
# What it is and why: the NeMo container (and a GPU, and PyPI) cannot exist here, so the driver
# share/nemoperf/driver/nemoperf_nemo.py is run against this stand-in instead, like the enroot stub of
# the setup tests.  install(version) registers fake modules in sys.modules under the real import paths
# (nemo_run, fiddle, nemo.collections.llm, nemo.lightning, ...).  Every object the driver configures is
# a Buildable whose allowed attribute names are exactly the parameters of the real class or function
# at that NeMo version; an unknown name raises AttributeError on get and on set (the real classes take
# no **kwargs here, except MegatronStrategy, whose **kwargs the stand-in deliberately refuses so a typo
# cannot pass), and every assignment is recorded so a test can assert what the driver set, not only
# the final state.  Recipe factories build what performance_mode=True builds (callbacks, the recipe's
# own checkpoint callback, TensorBoard, bf16 plugin) so that leaving a setting out is visible.
#
# Parameter names (AST of NVIDIA/NeMo at tags v2.2.1 = container 25.02, v2.3.1 = 25.04):
#   MegatronStrategy        nemo/lightning/pytorch/strategies/megatron_strategy.py (v2.2.1 l.119, v2.3.1 l.136)
#   MegatronCommOverlapCallback nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py l.61
#   MegatronMixedPrecision  nemo/lightning/pytorch/plugins/mixed_precision.py (v2.2.1 l.71, v2.3.1 l.91)
#   AutoResume              nemo/lightning/resume.py l.62;  RestoreConfig nemo/lightning/pytorch/strategies/utils.py
#   NsysCallback            nemo/lightning/pytorch/callbacks/nsys.py;  NeMoLogger nemo/lightning/nemo_logger.py
#   MockDataModule          nemo/collections/llm/gpt/data/mock.py l.33;  GPTModel .../gpt/model/base.py
#   AutoTokenizer           nemo/collections/common/tokenizers/huggingface/auto_tokenizer.py
#   get_nmt_tokenizer       nemo/collections/nlp/modules/common/tokenizer_utils.py l.145
#   FLOPsMeasurementCallback nemo/lightning/pytorch/callbacks/flops_callback.py
#   bf16_with_fp8_mixed / bf16_with_fp8_current_scaling_mixed (v2.3.1 only)
#                           nemo/collections/llm/recipes/precision/mixed_precision.py l.46-56 / l.118-136
#   userbuffers_* names     nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py
#   finetune_recipe         nemo/collections/llm/recipes/llama3_8b.py l.249-391, llama3_70b.py l.253-419,
#                           llama31_405b.py l.262-351, finetune_default.py l.35-86 (v2.3.1)
#   SquadDataModule         nemo/collections/llm/gpt/data/squad.py l.50-67
#   PackedSequenceSpecs     nemo/collections/llm/gpt/data/packed_sequence.py l.111-141
#   LoRA                    nemo/collections/llm/peft/lora.py l.404-414;  finetune nemo/collections/llm/api.py l.183
# Outside the NeMo repository: Lightning 2.4 Trainer.__init__; Megatron-Core TransformerConfig and
# DistributedDataParallelConfig, restricted to the names NVIDIA's own scripts/performance/utils.py and
# pretrain_*.py set on them (cited where used).

import sys
import types

_COMMON = {
    "MegatronStrategy": "tensor_model_parallel_size pipeline_model_parallel_size virtual_pipeline_model_parallel_size "
    "context_parallel_size sequence_parallel expert_model_parallel_size moe_extended_tp expert_tensor_parallel_size "
    "encoder_tensor_model_parallel_size encoder_pipeline_model_parallel_size data_sampler parallel_devices "
    "cluster_environment checkpoint_io find_unused_parameters ckpt_load_optimizer ckpt_save_optimizer ddp lazy_init "
    "pipeline_dtype use_te_rng_tracker save_ckpt_format ckpt_async_save ckpt_torch_dist_multiproc "
    "ckpt_assume_constant_structure ckpt_parallel_save ckpt_parallel_save_within_dp ckpt_parallel_load "
    "ckpt_parallel_save_optim ckpt_load_directly_on_device ckpt_load_strictness setup_optimizers "
    "init_model_parallel replace_progress_bar progress_interval restore_config",
    "MegatronCommOverlapCallback": "tp_comm_overlap tp_comm_overlap_cfg tp_comm_bootstrap_backend overlap_p2p_comm "
    "batch_p2p_comm overlap_grad_reduce overlap_param_gather overlap_param_gather_with_optimizer_step "
    "align_param_gather bucket_size defer_embedding_wgrad_compute wgrad_deferral_limit",
    "MegatronMixedPrecision": "precision params_dtype pipeline_dtype autocast_dtype autocast_enabled "
    "grad_reduce_in_fp32 fp8 fp8_margin fp8_amax_history_len fp8_amax_compute_algo fp8_wgrad "
    "fp8_dot_product_attention fp8_multi_head_attention fp16_loss_scale fp16_initial_loss_scale "
    "fp16_min_loss_scale fp16_loss_scale_window fp16_hysteresis",
    "AutoResume": "restore_config resume_from_directory resume_from_path adapter_path resume_if_exists "
    "resume_past_end resume_ignore_no_checkpoint",
    "RestoreConfig": "path adapter_path load_model_state load_optim_state load_artifacts",
    "NsysCallback": "start_step end_step ranks gen_shape",
    "NeMoLogger": "name log_dir explicit_log_dir version use_datetime_version log_local_rank_0_only "
    "log_global_rank_0_only files_to_copy update_logger_directory ckpt tensorboard wandb extra_loggers",
    "MockDataModule": "seq_length tokenizer micro_batch_size global_batch_size rampup_batch_size num_train_samples "
    "num_val_samples num_test_samples num_workers pin_memory persistent_workers create_attention_mask vocab_file "
    "merges_file",
    "AutoTokenizer": "pretrained_model_name vocab_file merges_file mask_token bos_token eos_token pad_token sep_token "
    "cls_token unk_token additional_special_tokens use_fast trust_remote_code include_special_tokens",
    "get_nmt_tokenizer": "library model_name tokenizer_model vocab_file merges_file special_tokens use_fast "
    "bpe_dropout r2l legacy delimiter trust_remote_code chat_template vocab_size",
    "GPTModel": "config optim tokenizer model_transform",
    "FLOPsMeasurementCallback": "model_config data_config model_name",
    "GarbageCollectionCallback": "gc_interval_train gc_interval_val",
    "MegatronTokenDropCallback": "moe_expert_capacity_factor moe_pad_expert_input_to_capacity",
    "ModelCheckpoint": "dirpath filename monitor verbose save_last save_top_k save_weights_only mode "
    "auto_insert_metric_name every_n_train_steps train_time_interval every_n_epochs save_on_train_epoch_end "
    "enable_version_counter save_optim_on_train_end always_save_context save_context_on_train_end",
    "TensorBoardLogger": "save_dir name version log_graph default_hp_metric prefix sub_dir",
    # Lightning 2.4.0 src/lightning/pytorch/trainer/trainer.py Trainer.__init__
    "Trainer": "accelerator strategy devices num_nodes precision logger callbacks fast_dev_run max_epochs "
    "min_epochs max_steps min_steps max_time limit_train_batches limit_val_batches limit_test_batches "
    "limit_predict_batches overfit_batches val_check_interval check_val_every_n_epoch num_sanity_val_steps "
    "log_every_n_steps enable_checkpointing enable_progress_bar enable_model_summary accumulate_grad_batches "
    "gradient_clip_val gradient_clip_algorithm deterministic benchmark inference_mode use_distributed_sampler "
    "profiler detect_anomaly barebones plugins sync_batchnorm reload_dataloaders_every_n_epochs default_root_dir",
    # Megatron-Core TransformerConfig/GPTConfig: names the recipes and NVIDIA's scripts/performance set
    "GPTConfig": "seq_length num_layers hidden_size ffn_hidden_size num_attention_heads num_query_groups "
    "enable_cuda_graph init_model_with_meta_device gradient_accumulation_fusion tp_only_amax_red "
    "recompute_granularity recompute_method recompute_num_layers cpu_offloading cpu_offloading_weights "
    "cpu_offloading_num_layers cross_entropy_loss_fusion disable_parameter_transpose_cache "
    "tp_comm_overlap_disable_qkv tp_comm_bulk_dgrad tp_comm_overlap_rs_dgrad",
    # Megatron-Core DistributedDataParallelConfig: names the recipes and utils.py l.328-346 set
    "DistributedDataParallelConfig": "check_for_nan_in_grad grad_reduce_in_fp32 overlap_grad_reduce "
    "overlap_param_gather align_param_gather use_distributed_optimizer average_in_collective "
    "data_parallel_sharding_strategy keep_fp8_transpose_cache_when_using_custom_fsdp",
    "OptimizerConfig": "optimizer lr weight_decay bf16 fp16 params_dtype use_distributed_optimizer clip_grad "
    "use_precision_aware_optimizer",
    "MegatronOptimizerModule": "config lr_scheduler",
    "pretrain": "model data trainer log resume optim",
    "finetune": "model data trainer log resume optim peft",
    "SquadDataModule": "dataset_root seq_length tokenizer micro_batch_size global_batch_size rampup_batch_size "
    "force_redownload delete_raw seed memmap_workers num_workers pin_memory persistent_workers "
    "packed_sequence_specs dataset_kwargs",
    "PackedSequenceSpecs": "packed_sequence_size tokenizer_model_name packed_train_data_path packed_val_data_path "
    "packed_metadata_path pad_cu_seqlens",
    "LoRA": "target_modules dim alpha dropout dropout_position lora_A_init_method lora_B_init_method "
    "a2a_experimental lora_dtype",
    "TimingCallback": "",
    # stand-in only: which userbuffers config a converted Config came from
    "TransformerLayerTPOverlapCfg": "ub_name",
}

# what v2.3.1 (container 25.04) adds to the v2.2.1 (25.02) signatures
_NEW_IN_231 = {
    "MegatronStrategy": "pipeline_model_parallel_comm_backend num_layers_in_first_pipeline_stage "
    "num_layers_in_last_pipeline_stage microbatch_group_size_per_vp_stage account_for_embedding_in_pipeline_split "
    "account_for_loss_in_pipeline_split fsdp megatron_log_level use_tp_pp_dp_mapping",
    "MegatronMixedPrecision": "fp8_recipe first_last_layers_bf16 fp8_param_gather num_layers_at_start_in_bf16 "
    "num_layers_at_end_in_bf16",
    "NsysCallback": "nvtx_ranges",
    "GPTModel": "model_context_managers",
    # utils.py v2.3.1 l.312 sets it; Megatron-Core of 25.04
    "GPTConfig": "cross_entropy_fusion_impl",
}
_ONLY_IN_221 = {"MegatronMixedPrecision": "fp8_params"}

_UB_221 = """bf16_b200_h12288_tp4_mbs1_seqlen2048 bf16_b200_h16384_tp4_cp2_mbs1_seqlen8192
bf16_b200_h18432_tp8_mbs1_seqlen4096 bf16_b200_h6144_tp2_mbs1_seqlen4096 bf16_b200_h8192_tp2_mbs1_seqlen8192
bf16_h100_h12288_tp4_mbs1_seqlen2048 bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192 bf16_h100_h6144_tp2_mbs2_seqlen2048
bf16_h100_h8192_tp4_mbs1_seqlen8192 fp8_b200_h12288_tp4_mbs1_seqlen2048 fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192
fp8_b200_h8192_tp2_mbs1_seqlen8192 fp8_h100_h12288_tp4_mbs1_seqlen2048 fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192
fp8_h100_h6144_tp2_mbs2_seqlen2048 fp8_h100_h8192_tp4_mbs1_seqlen8192"""
_UB_231 = _UB_221 + """ fp8_b200_h18432_tp8_mbs1_seqlen4096 fp8_h100_h16384_tp4_mbs1_seqlen2048_lora
fp8_h100_h8192_tp2_mbs1_seqlen4096_lora"""

# recipe modules of nemo.collections.llm per version
_FACTORIES_221 = "llama3_8b llama3_70b llama31_405b nemotron4_15b nemotron4_340b gpt3_175b mixtral_8x7b"
_FACTORIES_231 = _FACTORIES_221 + " mixtral_8x22b_64k"

PARAMS = {}


class Target:
    """A stand-in class or function: only its name and its parameter names matter."""

    def __init__(self, name):
        self.__name__ = self.__qualname__ = name

    def __repr__(self):
        return "<stand-in %s>" % self.__name__


TARGETS = {}


class Buildable:
    """run.Config / run.Partial: strict attributes, every assignment recorded."""

    def __init__(self, fn_or_cls, **kwargs):
        object.__setattr__(self, "__fn_or_cls__", fn_or_cls)
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "assigned", [])  # (name, value) in order
        for k, v in kwargs.items():
            self._check(k)
            self._values[k] = v

    def _check(self, name):
        allowed = PARAMS[self.__fn_or_cls__.__name__]
        if name not in allowed:
            raise AttributeError("%s has no parameter %r (stand-in of NeMo %s)" % (self.__fn_or_cls__.__name__, name,
                                                                                  VERSION))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._check(name)
        if name not in self._values:
            raise AttributeError("%s.%s was never set: the stand-in does not know the real default"
                                 % (self.__fn_or_cls__.__name__, name))
        return self._values[name]

    def __setattr__(self, name, value):
        self._check(name)
        self._values[name] = value
        self.assigned.append((name, value))

    def was_set(self, name):
        """The last value the driver assigned to name, or KeyError when it never did."""
        for k, v in reversed(self.assigned):
            if k == name:
                return v
        raise KeyError("%s.%s was not assigned" % (self.__fn_or_cls__.__name__, name))


class Config(Buildable):
    pass


class Partial(Buildable):
    pass


RUNS = []  # (recipe, kwargs) of every nemo_run.run call


def _run(fn_or_script, name="", executor=None, plugins=None, direct=False, detach=False, dryrun=False, log_level="INFO"):
    # NeMo-Run run/api.py run(): direct=True builds and calls in-process
    RUNS.append((fn_or_script, {"direct": direct, "executor": executor}))


def _cast(new_type, buildable):
    # fiddle.cast: same target and arguments, other Buildable type
    out = new_type(buildable.__fn_or_cls__, **buildable._values)
    return out


class _UbCfg:
    """A userbuffers dataclass instance (TransformerLayerTPOverlapCfg) of userbuffers.py."""

    def __init__(self, name):
        self.name = name


def _convert_dataclasses_to_configs(obj):
    # the real one turns the dataclass into a Config of its class; the stand-in keeps only which one it was
    assert isinstance(obj, _UbCfg), "expected a userbuffers config, got %r" % (obj,)
    return Config(_T("TransformerLayerTPOverlapCfg"), ub_name=obj.name)


def _T(name):
    if name not in TARGETS:
        TARGETS[name] = Target(name)
    return TARGETS[name]


def _precision(**kw):
    return Config(_T("MegatronMixedPrecision"), precision="bf16-mixed", params_dtype="bf16", pipeline_dtype="bf16",
                  autocast_enabled=False, grad_reduce_in_fp32=True, **kw)


def _bf16_with_fp8_mixed():
    # mixed_precision.py: delayed scaling, fp8 'hybrid', margin 0, amax history 1024, 'max'
    cfg = _precision(fp8="hybrid", fp8_margin=0, fp8_amax_history_len=1024, fp8_amax_compute_algo="max")
    cfg._values["fp8_params" if VERSION == "2.2.1" else "fp8_param_gather"] = True
    if VERSION != "2.2.1":
        cfg._values["fp8_recipe"] = "delayed"
    return cfg


def _bf16_with_fp8_current_scaling_mixed():
    # v2.3.1 mixed_precision.py l.118-136
    return _precision(fp8="hybrid", fp8_recipe="tensorwise", fp8_param_gather=True, first_last_layers_bf16=True,
                      num_layers_at_start_in_bf16=1, num_layers_at_end_in_bf16=1)


def _recipe_factory(factory):
    big = factory not in ("llama3_8b", "nemotron4_15b", "mixtral_8x7b")

    def pretrain_recipe(dir=None, name="default", num_nodes=1, num_gpus_per_node=8, performance_mode=False):
        assert performance_mode is True, "NVIDIA's scripts build the performance-mode recipe"
        callbacks = [Config(_T("MegatronCommOverlapCallback"), tp_comm_overlap=big,
                            defer_embedding_wgrad_compute=big, wgrad_deferral_limit=22 if big else -1)]
        if factory != "mixtral_8x22b_64k":
            callbacks.append(Config(_T("GarbageCollectionCallback"), gc_interval_train=100, gc_interval_val=100))
        if factory.startswith("mixtral"):
            callbacks.append(Config(_T("MegatronTokenDropCallback")))
        strategy = Config(_T("MegatronStrategy"), tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
                          virtual_pipeline_model_parallel_size=None, context_parallel_size=1,
                          sequence_parallel=False, expert_model_parallel_size=1,
                          ddp=Config(_T("DistributedDataParallelConfig"), grad_reduce_in_fp32=True,
                                     average_in_collective=True))
        trainer = Config(_T("Trainer"), accelerator="gpu", strategy=strategy, devices=num_gpus_per_node,
                         num_nodes=num_nodes, max_steps=1168251, callbacks=callbacks, plugins=_precision(),
                         limit_val_batches=32, log_every_n_steps=10, val_check_interval=2000)
        log = Config(_T("NeMoLogger"), name=name,
                     ckpt=Config(_T("ModelCheckpoint"), save_last=True, save_top_k=10, train_time_interval="0:15:0"),
                     tensorboard=Config(_T("TensorBoardLogger"), save_dir="tb_logs"))
        model = Config(_T("GPTModel"), config=Config(_T("GPTConfig"), seq_length=8192, enable_cuda_graph=False))
        data = Config(_T("MockDataModule"), seq_length=8192, micro_batch_size=1, global_batch_size=512)
        return Partial(_T("pretrain"), model=model, trainer=trainer, log=log, data=data,
                       resume=Config(_T("AutoResume"), resume_if_exists=True, resume_ignore_no_checkpoint=True),
                       optim=Config(_T("MegatronOptimizerModule"), config=Config(_T("OptimizerConfig"))))

    return pretrain_recipe


# the HF id each recipe resumes from (nemo_resume: RestoreConfig(path="nemo://<id>"))
_FT_HF = {"llama3_8b": "meta-llama/Meta-Llama-3-8B", "llama3_70b": "meta-llama/Meta-Llama-3-70B",
          "llama31_405b": "meta-llama/Llama-3.1-405B"}


def _finetune_factory(factory):
    """finetune_recipe of llama3_8b / llama3_70b / llama31_405b as v2.3.1 builds it."""
    lora_dim = 8 if factory == "llama3_8b" else 16  # 8b l.311-312; 70b l.322-323; 405b l.326-327

    def finetune_recipe(dir=None, name="default", num_nodes=None, num_gpus_per_node=8, peft_scheme="lora",
                        seq_length=None, packed_sequence=None, performance_mode=False):
        assert performance_mode is True, "NVIDIA's scripts build the performance-mode recipe"
        if packed_sequence is None:
            packed_sequence = performance_mode
        if seq_length is None:
            seq_length = 2048 if factory == "llama31_405b" else (4096 if packed_sequence else 2048)
        strategy = Config(_T("MegatronStrategy"), tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
                          virtual_pipeline_model_parallel_size=None, context_parallel_size=1,
                          sequence_parallel=False)
        trainer = Config(_T("Trainer"), accelerator="gpu", strategy=strategy, devices=num_gpus_per_node,
                         num_nodes=num_nodes or 1, max_steps=1000, callbacks=[], plugins=_precision(),
                         limit_val_batches=None, log_every_n_steps=1, val_check_interval=30)
        data = Config(_T("SquadDataModule"), seq_length=2048, global_batch_size=8, micro_batch_size=1,
                      packed_sequence_specs=Config(_T("PackedSequenceSpecs"), packed_sequence_size=2048))
        log = Config(_T("NeMoLogger"), name=name,
                     ckpt=Config(_T("ModelCheckpoint"), save_last=True, save_top_k=1),
                     tensorboard=Config(_T("TensorBoardLogger"), save_dir="tb_logs"))
        model = Config(_T("GPTModel"), config=Config(_T("GPTConfig"), enable_cuda_graph=False))
        optim = Config(_T("MegatronOptimizerModule"), config=Config(_T("OptimizerConfig"), lr=1e-4,
                                                                    use_distributed_optimizer=True))
        resume = Config(_T("AutoResume"), restore_config=Config(_T("RestoreConfig"), path="nemo://" + _FT_HF[factory]))
        recipe = Partial(_T("finetune"), model=model, trainer=trainer, data=data, log=log, optim=optim, resume=resume)
        if peft_scheme is None or peft_scheme.lower() == "none":
            strategy._values["tensor_model_parallel_size"] = 2
        elif peft_scheme.lower() == "lora":
            recipe._values["peft"] = Config(_T("LoRA"), dim=lora_dim, alpha=2 * lora_dim)
            optim.config._values["use_distributed_optimizer"] = False
            model.config._values["cross_entropy_loss_fusion"] = False
        else:
            raise ValueError("Unrecognized peft scheme: %s" % peft_scheme)
        model.config._values["seq_length"] = seq_length
        data._values["seq_length"] = seq_length
        if packed_sequence:
            data._values["dataset_kwargs"] = {"pad_to_max_length": True}
            data._values["packed_sequence_specs"] = Config(_T("PackedSequenceSpecs"), packed_sequence_size=seq_length)
        # finetune_performance_optimizations
        big = factory != "llama3_8b"
        sft = peft_scheme is None or peft_scheme.lower() == "none"
        if sft:
            strategy._values["ddp"] = Config(_T("DistributedDataParallelConfig"), check_for_nan_in_grad=True,
                                             grad_reduce_in_fp32=False, overlap_grad_reduce=True,
                                             overlap_param_gather=True, average_in_collective=True)
        else:
            recipe.peft._values["target_modules"] = ["linear_qkv"]
        trainer.plugins._values["grad_reduce_in_fp32"] = False
        trainer.callbacks.append(Config(_T("MegatronCommOverlapCallback"), tp_comm_overlap=big and sft,
                                        defer_embedding_wgrad_compute=big and sft,
                                        wgrad_deferral_limit=22 if big and sft else -1))
        trainer.callbacks.append(Config(_T("TimingCallback")))
        trainer.callbacks.append(Config(_T("GarbageCollectionCallback"), gc_interval_train=100, gc_interval_val=100))
        optim.config._values["use_precision_aware_optimizer"] = False
        return recipe

    return finetune_recipe


VERSION = None


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    m.__path__ = []  # a package, so submodules import
    sys.modules[name] = m
    return m


def install(version):
    """Register the stand-in of NeMo `version` ("2.2.1" for 25.02, "2.3.1" for 25.04)."""
    global VERSION
    assert version in ("2.2.1", "2.3.1")
    VERSION = version
    for k in list(sys.modules):
        if k.split(".")[0] in ("nemo", "nemo_run", "fiddle"):
            del sys.modules[k]
    PARAMS.clear()
    for k, v in _COMMON.items():
        PARAMS[k] = set(v.split())
    extra = _NEW_IN_231 if version == "2.3.1" else _ONLY_IN_221
    for k, v in extra.items():
        PARAMS[k] |= set(v.split())
    RUNS.clear()
    _module("nemo_run", Config=Config, Partial=Partial, run=_run)
    _module("fiddle", cast=_cast)
    _module("fiddle._src")
    _module("fiddle._src.experimental")
    _module("fiddle._src.experimental.dataclasses", convert_dataclasses_to_configs=_convert_dataclasses_to_configs)
    _module("nemo")
    _module("nemo.collections")
    factories = (_FACTORIES_231 if version == "2.3.1" else _FACTORIES_221).split()
    llm = _module("nemo.collections.llm")
    for f in factories:
        extra = {"finetune_recipe": _finetune_factory(f)} if f in _FT_HF else {}
        setattr(llm, f, _module("nemo.collections.llm.recipes." + f, pretrain_recipe=_recipe_factory(f), **extra))
    _module("nemo.collections.llm.recipes")
    prec = {"bf16_with_fp8_mixed": _bf16_with_fp8_mixed}
    if version == "2.3.1":
        prec["bf16_with_fp8_current_scaling_mixed"] = _bf16_with_fp8_current_scaling_mixed
    _module("nemo.collections.llm.recipes.precision")
    _module("nemo.collections.llm.recipes.precision.mixed_precision", **prec)
    _module("nemo.collections.llm.recipes.tp_overlap_configs")
    ub = {"userbuffers_" + n: _UbCfg("userbuffers_" + n) for n in
          (_UB_231 if version == "2.3.1" else _UB_221).split()}
    _module("nemo.collections.llm.recipes.tp_overlap_configs.userbuffers", **ub)
    _module("nemo.lightning", AutoResume=_T("AutoResume"), RestoreConfig=_T("RestoreConfig"))
    _module("nemo.lightning.pytorch")
    _module("nemo.lightning.pytorch.callbacks", NsysCallback=_T("NsysCallback"))
    _module("nemo.lightning.pytorch.callbacks.megatron_comm_overlap",
            MegatronCommOverlapCallback=_T("MegatronCommOverlapCallback"))
    _module("nemo.lightning.pytorch.callbacks.flops_callback", FLOPsMeasurementCallback=_T("FLOPsMeasurementCallback"))
    _module("nemo.collections.common")
    _module("nemo.collections.common.tokenizers")
    _module("nemo.collections.common.tokenizers.huggingface")
    _module("nemo.collections.common.tokenizers.huggingface.auto_tokenizer", AutoTokenizer=_T("AutoTokenizer"))
    _module("nemo.collections.nlp")
    _module("nemo.collections.nlp.modules")
    _module("nemo.collections.nlp.modules.common")
    _module("nemo.collections.nlp.modules.common.tokenizer_utils", get_nmt_tokenizer=_T("get_nmt_tokenizer"))
