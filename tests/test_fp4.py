"""NVFP4 weights and the FP4 tier (issue 18 item 3): bytes, rates and refusals derived by hand.

NVFP4: a 4-bit value plus one FP8 scale per 16 values = 4.5 bits = 0.5625 bytes per weight
(shared/reference/kernels.md section 4). Dense FP4 rates, same section: B200 9, GB200 10, B300 13.1
(of 13-14), GB300 15 PFLOPS.
"""
import json

import numpy as np
import pytest

from afdlib.cli import main
from afdlib.decode.step import ep_step
from afdlib.errors import AfdError
from afdlib.evaluator.attention import attention_work
from afdlib.evaluator.dense import dense_ffn_work, gemm_work, lm_head_work, router_work, shared_experts_work
from afdlib.evaluator.grouped_gemm import expert_weight_bytes, expert_work, ridge_tokens_per_expert, routed_experts_work
from afdlib.evaluator.roofline import Work, stage_time
from afdlib.inputs.catalog import hardware_names, load_hardware, load_model
from afdlib.inputs.hf_config import model_from_hf_config
from afdlib.inputs.specs import Budget, Efficiency, Precision, matmul_tier

H, M = 7168, 2048                        # DeepSeek-V3
FP4 = Precision(weights="nvfp4")
EXPERT_NVFP4 = 24_772_608                # 3 x 7168 x 2048 x 0.5625 bytes (FP8: 44,040,192)
DENSE_PARAMS = 396_361_728               # 3 x 7168 x 18432


def test_nvfp4_bytes_by_hand():
    assert FP4.bytes("weights") == 0.5625 == 0.5 + 1 / 16
    assert expert_weight_bytes(1, H, M, FP4) == EXPERT_NVFP4 == 3 * 7168 * 2048 * 9 // 16
    # plain "fp4" is NVFP4 (one name: the weights never come without their block scales)
    assert Precision(weights="fp4") == FP4 and Precision(weights="FP4").weights == "nvfp4"
    assert [matmul_tier(t) for t in ("nvfp4", "fp4", "fp8", "int8", "bf16")] == ["fp4", "fp4", "fp8", "fp8", "bf16"]
    # everything that reads weights reads them at 0.5625 bytes: routed (1 pair on 1 expert reads it
    # with probability 1 - 1/e, plus 7168 x 3 wire bytes), shared, dense FFN
    m = load_model("deepseek-v3", profile="reference")
    assert float(routed_experts_work(m, FP4, 1.0, 1.0).hbm_bytes) == pytest.approx(
        (1 - np.exp(-1)) * EXPERT_NVFP4 + 21_504)
    assert float(shared_experts_work(m, FP4, 1.0).hbm_bytes) == EXPERT_NVFP4
    assert float(dense_ffn_work(m, FP4, 1.0).hbm_bytes) == DENSE_PARAMS * 0.5625 == 222_953_472


def test_fp4_rates_in_the_catalogue():
    want = {"b200": 9e15, "gb200": 10e15, "b300": 13.1e15, "gb300": 15e15}
    for slug in hardware_names():
        for profile in ("paper", "datasheet"):
            hw = load_hardware(slug, profile=profile)
            assert hw.fp4_flops == pytest.approx(want.get(slug)) if slug in want else hw.fp4_flops is None
            if slug in want:   # the paper's Table 5 has no FP4 column: the datasheet's, with its source
                assert "kernels.md" in hw.sources["fp4_tflops"] and hw.peak("nvfp4") == hw.fp4_flops
    assert "13-14" in load_hardware("b300").uncertain["fp4_tflops"]
    # the datasheet profile scales the FP4 rate by the compute efficiency, as the others
    assert load_hardware("b200", "datasheet", Efficiency(compute=0.5)).fp4_flops == pytest.approx(4.5e15)


def test_catalog_command_shows_fp4(capsys):
    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    assert "fp4_tflops" in out and "9000" in out and "15000" in out


def test_an_fp4_gemm_runs_at_the_fp4_rate_on_b200():
    b200 = load_hardware("b200")                                  # paper profile: 4.5 PF FP8, 7.7 TB/s
    assert float(stage_time(Work(flops_fp4=9e12), b200).seconds) == pytest.approx(1e-3)   # 9e12 / 9e15
    assert float(stage_time(Work(flops_fp8=9e12), b200).seconds) == pytest.approx(2e-3)   # 9e12 / 4.5e15
    assert float(Work(flops_fp8=1.0, flops_bf16=2.0, flops_fp4=4.0).flops) == 7.0
    # one DeepSeek-V3 expert at 1000 tokens: 6 x 1000 x 7168 x 2048 = 88,080,384,000 FLOPs / 9e15 =
    # 9.787 us, against its NVFP4 weights' read 24,772,608 / 7.7e12 = 3.217 us: compute bound
    w = expert_work(1000.0, H, M, FP4)
    assert float(w.flops_fp4) == 88_080_384_000 and float(w.flops_fp8) == 0
    st = stage_time(w, b200)
    assert float(st.seconds) == pytest.approx(9.7867e-6, rel=1e-4) and st.bound_name == "compute"
    # the ridge: 9e15 x 0.5625 / (2 x 7.7e12) = 328.7 tokens per expert
    assert ridge_tokens_per_expert(b200.peak("nvfp4"), b200.hbm_bytes_per_s, FP4) == pytest.approx(328.73, rel=1e-4)
    # the dense FFN at 1000 tokens: 2 x 396,361,728 x 1000 / 9e15 = 88.08 us (weights 28.95 us)
    assert float(stage_time(dense_ffn_work(load_model("deepseek-v3"), FP4, 1000.0), b200).seconds) == \
        pytest.approx(2 * DENSE_PARAMS * 1000 / 9e15)


def test_which_gemms_take_the_fp4_tier():
    m = load_model("deepseek-v3", profile="reference")
    fp4 = [routed_experts_work(m, FP4, 64.0, 4.0), shared_experts_work(m, FP4, 8.0), dense_ffn_work(m, FP4, 8.0)]
    assert all(float(w.flops_fp4) > 0 and float(w.flops_fp8) == 0 for w in fp4)
    # the router (BF16), the LM head (its own type, BF16), the attention projections (FP8) and core do not
    proj, core = attention_work(m, FP4, 8.0, 4096.0)
    others = [router_work(m, 8.0), lm_head_work(m, FP4, 8.0), proj, core]
    assert all(float(w.flops_fp4) == 0 for w in others)
    # W4A4 needs NVFP4 operands on both sides: an FP4 attention type puts the projections there too
    assert float(attention_work(m, Precision(attention="nvfp4"), 8.0, 4096.0)[0].flops_fp4) > 0
    assert float(gemm_work(100, 2, "nvfp4").flops_fp4) == 400 and float(gemm_work(100, 2, "nvfp4").hbm_bytes) == 56.25


def test_nvfp4_is_refused_without_fp4_tensor_cores(ds, h800):
    with pytest.raises(AfdError) as e:
        ep_step(ds, h800, 64, 64.0, 4096.0, Budget(), FP4)
    assert "'h800' has no FP4 tensor cores" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(AfdError):
        h800.peak("fp4")
    # FP8 work never asks for an FP4 rate
    assert float(stage_time(Work(flops_fp8=1.0, flops_fp4=0.0), h800).seconds) > 0


def test_nvfp4_refused_by_the_command_in_one_line(capsys):
    argv = ["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "64",
            "--weights", "fp4"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("afd: error:") and "no FP4 tensor cores" in err and err.count("\n") == 1


def test_nvfp4_on_b200_in_the_decode_step(ds):
    b200 = load_hardware("b200", profile="datasheet")
    fp8, fp4 = (ep_step(ds, b200, 64, 128.0, 4096.0, Budget(), p) for p in (Precision(), FP4))
    # weights per GPU: 58 MoE layers x (4 routed + 1 shared) experts x (44,040,192 - 24,772,608) bytes
    # + 3 dense layers x 396,361,728 x (1 - 0.5625) = 5,587,599,360 + 520,224,768
    saved = float(fp8.memory[0].weights_bytes) - float(fp4.memory[0].weights_bytes)
    assert saved == pytest.approx(58 * 5 * (44_040_192 - EXPERT_NVFP4) + 3 * DENSE_PARAMS * 0.4375)
    assert float(fp4.t_ffn) < float(fp8.t_ffn) and float(fp4.step_s) < float(fp8.step_s)


def test_the_default_precision_never_reads_the_fp4_rate(ds):
    # FP8 results do not depend on the device's FP4 rate (the 16 baseline outputs are unchanged too)
    b200 = load_hardware("b200", profile="datasheet")
    other = b200.with_overrides(fp4_flops=1.0)
    a, b = (ep_step(ds, hw, 64, np.array([16.0, 128.0]), 4096.0, Budget()) for hw in (b200, other))
    assert np.array_equal(a.step_s, b.step_s) and np.array_equal(a.t_ffn, b.t_ffn)


# ----------------------------------------------------------------------------- configs that declare NVFP4

DEEPSEEK_V3 = {"hidden_size": 7168, "num_hidden_layers": 61, "first_k_dense_replace": 3, "n_routed_experts": 256,
               "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "intermediate_size": 18432,
               "n_shared_experts": 1, "vocab_size": 129280, "num_nextn_predict_layers": 1,
               "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
               "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}
MODELOPT = {"quant_method": "modelopt", "quant_algo": "NVFP4"}
COMPRESSED = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
              "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}
COMPRESSED_GROUP_ONLY = {"quant_method": "compressed-tensors",
                         "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16},
                                                       "targets": ["Linear"]}}}


def _config(tmp_path, quant):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**DEEPSEEK_V3, **({} if quant is None else {"quantization_config": quant})}))
    return p


@pytest.mark.parametrize("quant, declared", [
    (MODELOPT, "nvfp4"), (COMPRESSED, "nvfp4"), (COMPRESSED_GROUP_ONLY, "nvfp4"),
    ({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}, "fp8"),   # DeepSeek-V3's own
    ({"quant_method": "mxfp4"}, "mxfp4"), (None, None),
    # Kimi-K2.5's routed experts: compressed-tensors, 4-bit symmetric integers in groups of 32, weight-only
    ({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": {
        "input_activations": None, "weights": {"num_bits": 4, "type": "int", "group_size": 32, "symmetric": True}}}},
     "int4"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128}, "int4")])
def test_config_reader_takes_nvfp4_from_quantization_config(tmp_path, quant, declared):
    m = model_from_hf_config(_config(tmp_path, quant))
    assert m.weights_dtype == declared
    assert ("weights_dtype" in m.sources) == (declared is not None)


def test_int4_weights_are_weight_only():
    # 4 bits + one BF16 scale per 32 = 4.5 bits = 0.5625 bytes; W4A16: the GEMM at the BF16 rate; the
    # attention projections stay BF16 (Kimi-K2.5 leaves self_attn unquantized)
    from afdlib.inputs.specs import Precision, dtype_bytes, matmul_tier
    assert dtype_bytes("int4") == 0.5625 and matmul_tier("int4") == "bf16" and matmul_tier("int8") == "fp8"
    assert Precision.for_weights("int4").attention == "bf16"


def test_a_malformed_quantization_config_is_refused(tmp_path):
    with pytest.raises(AfdError, match="'quantization_config' must be an object"):
        model_from_hf_config(_config(tmp_path, "nvfp4"))


def test_the_command_uses_the_declared_weights_and_says_so(tmp_path, capsys):
    cfg = str(_config(tmp_path, MODELOPT))
    common = ["--hardware", "b200", "--design", "ep", "--ep-size", "64", "--batch-per-gpu", "64", "--json"]

    def run(*argv):
        assert main(["throughput", *argv, *common]) == 0
        return json.loads(capsys.readouterr().out)

    declared, given, catalogue = run("--model", cfg), run("--model", "deepseek-v3", "--weights", "nvfp4"), \
        run("--model", "deepseek-v3")
    assert declared["weights"]["dtype"] == "nvfp4" and "quantization_config" in declared["weights"]["from"]
    assert given["weights"] == {"dtype": "nvfp4", "from": "--weights"}
    assert catalogue["weights"] == {"dtype": "fp8", "from": "default"}
    # the config is DeepSeek-V3: declared NVFP4 gives what --weights nvfp4 gives the catalogue model
    assert declared["step_ms"] == pytest.approx(given["step_ms"]) and declared["step_ms"] < catalogue["step_ms"]
    assert run("--model", cfg, "--weights", "fp8")["step_ms"] == pytest.approx(catalogue["step_ms"])
    # and the same config is refused on a device without FP4, naming it
    assert main(["throughput", "--model", cfg, *common[:1], "h800", *common[2:]]) == 2
    assert "'h800' has no FP4" in capsys.readouterr().err


def test_precision_of_the_command():
    import argparse

    from afdlib.cli.options import precision_of
    args = argparse.Namespace(weights=None, attention_dtype=None, kv_cache="bf16")
    declared = load_model("deepseek-v3").with_overrides(weights_dtype="nvfp4")
    assert precision_of(args, load_model("deepseek-v3")) == (Precision(), "default")
    p, origin = precision_of(args, declared)
    # NVFP4 covers the experts and dense FFN layers; the attention projections stay FP8
    assert (p.weights, p.attention, origin) == ("nvfp4", "fp8", "declared by the model")
    args.weights, args.attention_dtype = "bf16", None
    assert precision_of(args, declared) == (Precision(weights="bf16", attention="bf16"), "--weights")
    args.weights, args.attention_dtype = "fp4", "nvfp4"
    assert precision_of(args, None)[0] == Precision(weights="nvfp4", attention="nvfp4")


def test_a_yaml_model_may_declare_its_weights(tmp_path):
    entry = {"name": "tiny", "hidden_size": 64, "moe_intermediate_size": 32, "num_layers": 2, "dense_layers": 0,
             "moe_layers": 2, "routed_experts": 8, "experts_per_token": 2, "source": "test"}
    p = tmp_path / "tiny.yaml"
    p.write_text(json.dumps({"tiny": {**entry, "weights_dtype": "NVFP4"}}))    # JSON is YAML
    m = load_model(str(p))
    assert m.weights_dtype == "nvfp4" and m.sources["weights_dtype"] == "test"
    p.write_text(json.dumps({"tiny": {**entry, "weights_dtype": "fp3"}}))
    with pytest.raises(AfdError, match="weights_dtype: unknown data type 'fp3'"):
        load_model(str(p))


def test_advise_reports_the_weights(capsys):
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "b200", "--weights", "fp4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["weights"] == {"dtype": "nvfp4", "from": "--weights"} and doc["ep"]["feasible"]
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800", "--weights", "fp4"]) == 2
    assert "no FP4 tensor cores" in capsys.readouterr().err
