#!/usr/bin/env python3
# test_driver.py - contract test of the in-container NeMo driver (share/nemoperf/driver/nemoperf_nemo.py).
#
# The driver cannot run for real here (no GPU, no NeMo container, no PyPI).  Instead each case asks the
# real nemoperf-launch for a job (--print-config, before ./setup, so nothing needs staging), takes the
# exact driver_args it would run, and runs the driver's main() against standin.py: a small STRICT
# stand-in of the NeMo / NeMo-Run / Fiddle API surface at the NeMo version of the job's container
# (v2.2.1 for 25.02, v2.3.1 for 25.04), built from the real signatures; unknown attribute names raise,
# and every assignment is recorded.  The test then asserts the recipe NVIDIA's scripts built.
# Run: python3 tests/driver/test_driver.py  (NP_BIN: folder of nemoperf-launch, default bin)

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# NP_DRIVER: another copy of the driver (tests/driver/mutate.py runs this test on mutants)
DRIVER = os.environ.get("NP_DRIVER") or os.path.join(ROOT, "share", "nemoperf", "driver", "nemoperf_nemo.py")
LAUNCH = os.path.join(ROOT, os.environ.get("NP_BIN", "bin"), "nemoperf-launch")
sys.path.insert(0, HERE)
import standin  # noqa: E402


class DriverContract(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="np-driver-")
        # a saved checkpoint for LOAD_CHECKPOINT_PATH (the stage itself is otherwise unstaged)
        cls.stage = os.path.join(cls.tmp, "stage")
        cls.ck = os.path.join(cls.stage, "ck", "default--None=0.0000-epoch=0-consumed_samples=12800.0")
        os.makedirs(os.path.join(cls.ck, "weights"))
        open(os.path.join(cls.ck, "weights", "__0_0.distcp"), "w").close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def job(self, **env):
        """The "nemo" object nemoperf-launch --print-config resolves for env."""
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("SLURM_", "SBATCH_")) and k not in ("WORKLOAD", "RECIPE", "NEMOPERF_DATADIR")}
        e.update({"STAGE_PATH": self.stage, "NEMOPERF_FORCE_CHECKPOINT": "1"})
        e.update(env)
        p = subprocess.run([LAUNCH, "--print-config"], env=e, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        c = json.loads(p.stdout)
        if isinstance(c, list):  # a profile or trace request also plans the performance run: the first is the request
            self.assertEqual(len(c), 2, "the requested job and its performance run")
            self.assertFalse(c[1]["profile"] or c[1]["nccltrace"])
            c = c[0]
        return c["nemo"]

    def run_driver(self, nemo):
        """Run the driver's main() on the job's arguments against the stand-in of its container."""
        standin.install({"25.02": "2.2.1", "25.04": "2.3.1"}[nemo["scripts"]])
        spec = importlib.util.spec_from_file_location("nemoperf_nemo_under_test", DRIVER)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        self.assertEqual(mod.main(nemo["driver_args"]), 0)
        self.assertEqual(len(standin.RUNS), 1)
        recipe, kw = standin.RUNS[0]
        self.assertTrue(kw["direct"], "nemo_run.run(recipe, direct=True)")
        return recipe

    @staticmethod
    def callback(recipe, name):
        found = [c for c in recipe.trainer.callbacks if c.__fn_or_cls__.__name__ == name]
        return found[0] if found else None

    def common(self, r, nodes, gpn, steps):
        t = r.trainer
        self.assertEqual(t.was_set("num_nodes"), nodes)
        self.assertEqual(t.was_set("devices"), gpn)
        self.assertEqual(t.was_set("max_steps"), steps)
        self.assertEqual(t.was_set("val_check_interval"), steps)
        self.assertEqual(t.was_set("limit_val_batches"), 0)
        self.assertEqual(t.was_set("log_every_n_steps"), 1)
        self.assertIs(t.was_set("logger"), False)
        self.assertIsNone(r.log.was_set("tensorboard"))
        self.assertIsNone(r.log.was_set("ckpt"))  # log.ckpt None in every job

    # ---- the rows ----

    def test_llama31_70b_fp8(self):
        n = self.job(MODEL_SIZE="70b", DTYPE="fp8", JOB_TOTAL_GPUS="64")
        r = self.run_driver(n)
        self.common(r, 8, 8, 50)
        s = r.trainer.strategy
        self.assertEqual((s.was_set("tensor_model_parallel_size"), s.was_set("pipeline_model_parallel_size"),
                          s.was_set("context_parallel_size"), s.was_set("virtual_pipeline_model_parallel_size")),
                         (4, 8, 1, 5))
        self.assertIs(s.was_set("sequence_parallel"), True)
        # delayed-scaling FP8 (25.02: bf16_with_fp8_mixed, then grad_reduce_in_fp32 False)
        p = r.trainer.was_set("plugins")
        self.assertEqual((p.fp8, p.fp8_amax_history_len, p.fp8_amax_compute_algo), ("hybrid", 1024, "max"))
        self.assertIs(p.was_set("grad_reduce_in_fp32"), False)
        # the FP8 H100 userbuffers config, not the recipe's bf16 one
        cb = self.callback(r, "MegatronCommOverlapCallback")
        self.assertEqual(cb.was_set("tp_comm_overlap_cfg").ub_name, "userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192")
        self.assertIs(cb.was_set("overlap_param_gather_with_optimizer_step"), True)  # dp 2, pp 8, vp 5
        tok = r.data.was_set("tokenizer")
        self.assertEqual(tok.__fn_or_cls__.__name__, "AutoTokenizer")
        self.assertEqual(tok.pretrained_model_name, os.path.join(self.stage, "hf/meta-llama/Meta-Llama-3-70B"))
        self.assertEqual(r.data.was_set("num_train_samples"), 50 * 128 * 1)
        self.assertIs(r.trainer.was_set("enable_checkpointing"), False)

    def test_nemotron4_340b(self):
        n = self.job(MODEL_SIZE="340b", DTYPE="bf16", JOB_TOTAL_GPUS="256")
        r = self.run_driver(n)
        self.common(r, 32, 8, 50)
        self.assertEqual(r.trainer.strategy.was_set("virtual_pipeline_model_parallel_size"), 12)
        tok = r.data.was_set("tokenizer")
        self.assertEqual(tok.__fn_or_cls__.__name__, "get_nmt_tokenizer")
        self.assertEqual((tok.library, tok.model_name, tok.vocab_size), ("null", "NullTokenizer", 256000))
        self.assertIs(r.model.was_set("tokenizer"), tok)
        self.assertNotIn("plugins", [k for k, _ in r.trainer.assigned])  # BF16: the recipe's precision

    def test_llama3_70b_gb200_fsdp(self):
        n = self.job(RECIPE="llama3", MODEL_SIZE="70b", DTYPE="fp8", GPU_TYPE="gb200", JOB_TOTAL_GPUS="64")
        r = self.run_driver(n)
        self.common(r, 16, 4, 50)  # 4 GPUs per node on GB200
        s = r.trainer.strategy
        self.assertEqual(s.was_set("fsdp"), "megatron")
        self.assertEqual(s.ddp.was_set("data_parallel_sharding_strategy"), "optim_grads_params")
        self.assertIs(s.ddp.was_set("average_in_collective"), False)
        self.assertIs(s.ddp.was_set("keep_fp8_transpose_cache_when_using_custom_fsdp"), False)
        self.assertIs(r.model.config.was_set("init_model_with_meta_device"), True)
        self.assertIs(r.model.config.was_set("gradient_accumulation_fusion"), False)
        self.assertIs(self.callback(r, "MegatronCommOverlapCallback").was_set("defer_embedding_wgrad_compute"), False)
        self.assertIs(r.model.config.was_set("enable_cuda_graph"), False)  # off under FSDP
        self.assertIsNone(s.was_set("virtual_pipeline_model_parallel_size"))  # VP 1 -> None
        p = r.trainer.was_set("plugins")
        self.assertEqual(p.fp8_recipe, "tensorwise")
        # FP8 params gathered under FSDP, as the NeMo NVIDIA ran left it (7a8f1cc7bc / v2.3.1; v2.3.0 forced False)
        self.assertIs(p.was_set("fp8_param_gather"), True)
        self.assertIs(n["fp8_param_gather"], True)
        self.assertEqual(n["numactl"], "nvidia")  # the binding NVIDIA's runs had (GB200: node 0 either way)

    def test_fp8_param_gather_only_under_fsdp(self):
        n = self.job(RECIPE="llama3", MODEL_SIZE="70b", DTYPE="fp8", GPU_TYPE="h100", JOB_TOTAL_GPUS="64")
        r = self.run_driver(n)
        self.assertIsNone(n["fp8_param_gather"])
        self.assertNotIn("fp8_param_gather", [k for k, _ in r.trainer.was_set("plugins").assigned])

    def test_fsdp_with_tp_turns_tp_overlap_off(self):
        # no published row has FSDP with TP > 1; NVIDIA's utils.py l.337-346 turns TP overlap off then
        n = self.job(RECIPE="llama3", MODEL_SIZE="70b", DTYPE="fp8", GPU_TYPE="gb200", JOB_TOTAL_GPUS="64")
        args = list(n["driver_args"])
        args[args.index("--tp") + 1] = "2"
        r = self.run_driver(dict(n, driver_args=args))
        self.assertIs(self.callback(r, "MegatronCommOverlapCallback").was_set("tp_comm_overlap"), False)

    def test_llama31_405b_proxy_layers(self):
        n = self.job(MODEL_SIZE="405b", DTYPE="fp8", JOB_TOTAL_GPUS="32")
        r = self.run_driver(n)
        self.common(r, 4, 8, 50)
        self.assertEqual(r.model.config.was_set("num_layers"), 8)  # the 32-GPU proxy
        self.assertEqual(r.model.config.was_set("hidden_size"), 16384)
        self.assertIsNone(r.trainer.strategy.was_set("virtual_pipeline_model_parallel_size"))
        self.assertEqual(self.callback(r, "MegatronCommOverlapCallback").was_set("tp_comm_overlap_cfg").ub_name,
                         "userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192")

    def test_gpt3_b200_current_scaling(self):
        n = self.job(RECIPE="gpt3", MODEL_SIZE="175b", DTYPE="fp8", GPU_TYPE="b200", JOB_TOTAL_GPUS="512")
        r = self.run_driver(n)
        self.common(r, 64, 8, 50)
        p = r.trainer.was_set("plugins")
        self.assertEqual((p.fp8, p.fp8_recipe), ("hybrid", "tensorwise"))  # current scaling
        self.assertIs(p.was_set("first_last_layers_bf16"), False)
        self.assertIs(p.was_set("grad_reduce_in_fp32"), False)
        # the B200 CSV row has CUDA graphs off; set explicitly, as set_primary_perf_configs does
        self.assertIs(r.model.config.was_set("enable_cuda_graph"), False)
        self.assertIs(r.trainer.strategy.was_set("use_te_rng_tracker"), False)
        self.assertIs(r.model.config.was_set("tp_only_amax_red"), True)
        self.assertEqual(r.model.config.was_set("cross_entropy_fusion_impl"), "te")
        self.assertEqual(self.callback(r, "MegatronCommOverlapCallback").was_set("tp_comm_overlap_cfg").ub_name,
                         "userbuffers_fp8_b200_h12288_tp4_mbs1_seqlen2048")
        self.assertEqual(r.data.was_set("num_train_samples"), 50 * 2048)  # 25.04: max_steps * gbs
        flops = self.callback(r, "FLOPsMeasurementCallback")
        self.assertEqual(flops.model_name, "gpt3")

    def test_gpt3_gb200_cuda_graphs(self):
        n = self.job(RECIPE="gpt3", MODEL_SIZE="175b", DTYPE="fp8", GPU_TYPE="gb200", JOB_TOTAL_GPUS="128")
        r = self.run_driver(n)
        self.common(r, 32, 4, 50)
        self.assertIs(r.model.config.was_set("enable_cuda_graph"), True)
        self.assertIs(r.trainer.strategy.was_set("use_te_rng_tracker"), True)

    def test_mixtral_8x22b_h100(self):
        n = self.job(RECIPE="mixtral", MODEL_SIZE="8x22b", DTYPE="fp8", JOB_TOTAL_GPUS="256")
        r = self.run_driver(n)
        self.common(r, 32, 8, 50)
        s = r.trainer.strategy
        self.assertEqual(s.was_set("expert_tensor_parallel_size"), 1)
        self.assertEqual(s.was_set("expert_model_parallel_size"), 8)
        self.assertEqual(r.data.was_set("micro_batch_size"), 1)
        self.assertEqual(r.data.was_set("global_batch_size"), 256)
        self.assertIs(s.ddp.was_set("average_in_collective"), False)  # ETP 1 != TP 4
        self.assertIsNone(self.callback(r, "GarbageCollectionCallback"))  # the 64k recipe has none

    # ---- fine-tuning (seed 000; NVIDIA v2.3.1 scripts/performance/llm/finetune_*.py) ----

    def finetune_common(self, r, task, pack, gbs, cuda_graphs, hf):
        """What every fine-tuning row sets, whatever its k: packed SQuAD of the pack length, the
        settings of finetune_*.py and set_primary_perf_configs, no FLOPs callback (PEFT refuses it)."""
        self.assertEqual(r.__fn_or_cls__.__name__, "finetune")
        self.assertEqual(r.data.__fn_or_cls__.__name__, "SquadDataModule")
        specs = r.data.packed_sequence_specs
        self.assertEqual(specs.packed_sequence_size, pack)
        self.assertEqual((r.data.seq_length, r.model.config.seq_length), (pack, pack))
        self.assertEqual(r.data.dataset_kwargs, {"pad_to_max_length": True})
        self.assertIs(specs.was_set("pad_cu_seqlens"), cuda_graphs)  # pad_cu_seqlens = cuda_graphs
        self.assertEqual(specs.was_set("tokenizer_model_name"), hf.replace("/", "--"))
        self.assertEqual(r.data.was_set("dataset_root"), os.path.join(self.stage, "datasets/squad"))
        self.assertEqual(r.data.was_set("global_batch_size"), gbs)
        self.assertEqual(r.data.was_set("micro_batch_size"), 1)
        self.assertNotIn("num_train_samples", [k for k, _ in r.data.assigned])
        self.assertEqual(r.resume.restore_config.path, "nemo://" + hf)  # ./setup's import
        self.assertIs(r.optim.config.was_set("use_distributed_optimizer"), True)
        self.assertIs(r.model.config.was_set("disable_parameter_transpose_cache"), True)
        self.assertIs(r.model.config.was_set("enable_cuda_graph"), cuda_graphs)
        self.assertEqual(r.model.config.was_set("cross_entropy_fusion_impl"), "te")
        p = r.trainer.was_set("plugins")
        self.assertEqual(p.fp8_recipe, "tensorwise")
        self.assertIs(p.was_set("grad_reduce_in_fp32"), False)
        self.assertIsNone(self.callback(r, "FLOPsMeasurementCallback"))
        gc = self.callback(r, "GarbageCollectionCallback")
        self.assertEqual((gc.gc_interval_train, gc.gc_interval_val), (100, 100))
        self.assertIsNone(self.callback(r, "NsysCallback"))
        self.assertEqual(("peft" in r._values), task == "lora")

    def test_sft_llama3_8b_gb200(self):
        n = self.job(RECIPE="llama3", MODEL_SIZE="8b", DTYPE="fp8", GPU_TYPE="gb200", TASK="sft")
        r = self.run_driver(n)
        self.common(r, 2, 4, 50)
        self.finetune_common(r, "sft", 16384, 8, True, "meta-llama/Meta-Llama-3-8B")
        self.assertEqual(r.trainer.strategy.was_set("tensor_model_parallel_size"), 1)
        self.assertIsNone(r.trainer.strategy.was_set("virtual_pipeline_model_parallel_size"))
        cb = self.callback(r, "MegatronCommOverlapCallback")
        self.assertNotIn("tp_comm_overlap_cfg", [k for k, _ in cb.assigned])  # SFT: the recipe's overlap

    def test_lora_llama31_405b_h100_userbuffers(self):
        n = self.job(RECIPE="llama3", MODEL_SIZE="405b", DTYPE="fp8", GPU_TYPE="h100", TASK="lora")
        r = self.run_driver(n)
        self.common(r, 4, 8, 50)
        self.finetune_common(r, "lora", 2048, 32, False, "meta-llama/Llama-3.1-405B")
        lora = r.peft
        self.assertEqual(lora.__fn_or_cls__.__name__, "LoRA")
        self.assertEqual((lora.was_set("dim"), lora.was_set("alpha")), (16, 32))
        self.assertEqual(lora.was_set("target_modules"), ["linear_qkv"])
        s = r.trainer.strategy
        self.assertEqual((s.was_set("tensor_model_parallel_size"), s.was_set("pipeline_model_parallel_size"),
                          s.was_set("virtual_pipeline_model_parallel_size")), (4, 8, 8))
        # FP8 LoRA with TP > 1: the LoRA userbuffers config, TP overlap on, qkv overlap off, rs-dgrad overlap
        cb = self.callback(r, "MegatronCommOverlapCallback")
        self.assertEqual(cb.was_set("tp_comm_overlap_cfg").ub_name, "userbuffers_fp8_h100_h16384_tp4_mbs1_seqlen2048_lora")
        self.assertIs(cb.was_set("tp_comm_overlap"), True)
        c = r.model.config
        self.assertEqual((c.was_set("tp_comm_overlap_disable_qkv"), c.was_set("tp_comm_bulk_dgrad"),
                          c.was_set("tp_comm_overlap_rs_dgrad")), (True, False, True))

    def test_lora_llama3_70b_gb200_as_nvidia_ran(self):
        # published 4096 / GBS 32; NVIDIA's GB200 script packs 2048 with GBS 64 (the row's corrections)
        n = self.job(RECIPE="llama3", MODEL_SIZE="70b", DTYPE="fp8", GPU_TYPE="gb200", TASK="lora")
        r = self.run_driver(n)
        self.common(r, 2, 4, 50)
        self.finetune_common(r, "lora", 2048, 64, True, "meta-llama/Meta-Llama-3-70B")
        self.assertEqual((r.peft.was_set("dim"), r.peft.was_set("alpha")), (16, 32))
        cb = self.callback(r, "MegatronCommOverlapCallback")
        self.assertNotIn("tp_comm_overlap_cfg", [k for k, _ in cb.assigned])  # TP 1: no userbuffers
        self.assertNotIn("tp_comm_overlap", [k for k, _ in cb.assigned])

    def test_lora_llama3_8b_h100(self):
        n = self.job(RECIPE="llama3", MODEL_SIZE="8b", DTYPE="fp8", GPU_TYPE="h100", TASK="lora")
        r = self.run_driver(n)
        self.common(r, 1, 8, 50)
        self.finetune_common(r, "lora", 4096, 32, False, "meta-llama/Meta-Llama-3-8B")
        self.assertEqual((r.peft.was_set("dim"), r.peft.was_set("alpha")), (8, 16))

    def test_finetune_profile(self):
        n = self.job(RECIPE="llama3", MODEL_SIZE="70b", DTYPE="fp8", GPU_TYPE="h100", TASK="sft",
                     ENABLE_PROFILE="true")
        r = self.run_driver(n)
        self.common(r, 4, 8, 6)
        nsys = self.callback(r, "NsysCallback")
        # NVIDIA's own for 25.04: finetune_llama3_70b.py v2.3.1 NsysPlugin(start_step=5, end_step=6), rank 0
        self.assertEqual((nsys.start_step, nsys.end_step, nsys.ranks), (5, 6, [0]))
        self.assertEqual(n["nsys_output"], "nsys_profile/profile_%p.nsys-rep")

    # ---- the flags ----

    def test_profile(self):
        n = self.job(MODEL_SIZE="8b", DTYPE="bf16", JOB_TOTAL_GPUS="8", ENABLE_PROFILE="true")
        r = self.run_driver(n)
        self.common(r, 1, 8, 25)
        nsys = self.callback(r, "NsysCallback")
        self.assertIsNotNone(nsys, "NsysCallback in trainer.callbacks")
        self.assertEqual((nsys.start_step, nsys.end_step, nsys.ranks), (20, 25, list(range(8))))

    def test_checkpoint_save(self):
        n = self.job(MODEL_SIZE="8b", DTYPE="bf16", JOB_TOTAL_GPUS="16", ENABLE_CHECKPOINT="1")
        r = self.run_driver(n)
        self.common(r, 2, 8, 50)  # log.ckpt None: Lightning's default ModelCheckpoint, the seeds' path
        self.assertIs(r.trainer.was_set("enable_checkpointing"), True)
        self.assertIs(self.callback(r, "MegatronCommOverlapCallback").was_set(
            "overlap_param_gather_with_optimizer_step"), False)

    def test_checkpoint_load(self):
        n = self.job(MODEL_SIZE="8b", DTYPE="bf16", JOB_TOTAL_GPUS="16", LOAD_CHECKPOINT_PATH=self.ck)
        r = self.run_driver(n)
        self.common(r, 2, 8, 1)  # exactly one more step
        res = r.was_set("resume")
        self.assertEqual(res.__fn_or_cls__.__name__, "AutoResume")
        self.assertEqual((res.resume_if_exists, res.resume_ignore_no_checkpoint), (True, False))
        rc = res.restore_config
        self.assertEqual(rc.__fn_or_cls__.__name__, "RestoreConfig")
        self.assertEqual((rc.path, rc.load_model_state, rc.load_optim_state, rc.load_artifacts),
                         (os.path.realpath(self.ck), True, True, False))

    # ---- the stand-in itself ----

    def test_standin_is_strict(self):
        standin.install("2.2.1")
        import nemo_run as run
        from nemo.collections import llm
        r = llm.llama3_8b.pretrain_recipe(performance_mode=True)
        with self.assertRaises(AttributeError):
            r.trainer.strategy.virtual_pipeline_parallel_size = 2  # typo
        with self.assertRaises(AttributeError):
            r.trainer.strategy.fsdp = "megatron"  # no FSDP in NeMo 2.2.1's MegatronStrategy
        with self.assertRaises(AttributeError):
            run.Config(standin._T("NsysCallback"), start_step=1, end_step=2, nvtx_ranges=True)  # 2.3.1 only
        with self.assertRaises(ImportError):
            from nemo.collections.llm.recipes.precision.mixed_precision import (  # noqa: F401
                bf16_with_fp8_current_scaling_mixed)


if __name__ == "__main__":
    if not os.access(LAUNCH, os.X_OK):
        sys.exit("test_driver.py: %s not built (make)" % LAUNCH)
    unittest.main(verbosity=1)
