"""Catalogue loader: the paper's values, sources, profiles, user files and bad input."""
import json

import pytest

from afdlib.inputs.catalog import Efficiency, hardware_names, load_catalog, load_hardware, load_model, model_names
from afdlib.errors import AfdError
from afdlib.inputs.hf_config import model_from_hf_config

PAPER_MODELS = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]
PAPER_HW = ["h20", "h100", "h200", "h800", "b200", "b300", "gb200", "gb300"]

# Table 5 of the paper: FP8 TFLOPS, HBM TB/s, HBM GB, scale-out GB/s (None = Superpod), scale-up GB/s
TABLE5 = {
    "h20": (296, 4.0, 96, 50, 360), "h100": (1979, 3.35, 80, 50, 360), "h200": (1979, 4.0, 141, 50, 360),
    "h800": (1979, 3.35, 80, 50, 160), "b200": (4500, 7.7, 180, 50, 720), "b300": (4500, 8.0, 270, 100, 720),
    "gb200": (4500, 7.7, 180, None, 720), "gb300": (4500, 8.0, 270, None, 720),
}
# Table 4: H, layers, dense, MoE layers, E, K, M
TABLE4 = {
    "deepseek-v3": (7168, 61, 3, 58, 256, 8, 2048), "kimi-k2": (7168, 61, 1, 60, 384, 8, 2048),
    "step3": (7168, 61, 5, 56, 48, 3, 5120), "qwen3-coder": (6144, 62, 0, 62, 160, 8, 2560),
    "ernie-4.5": (8192, 54, 3, 51, 64, 8, 3584), "glm-4.7": (5120, 92, 3, 92, 160, 8, 1536),
}


def test_catalogues_hold_the_required_entries():
    assert set(PAPER_HW) | {"a100", "mi300x", "mi355x", "ascend-910c", "tpu-v5p"} <= set(hardware_names())
    assert set(PAPER_MODELS) | {"qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b", "mixtral-8x7b",
                                "mixtral-8x22b", "llama-4-maverick", "dbrx", "minimax-m2"} <= set(model_names())


@pytest.mark.parametrize("slug", PAPER_HW)
def test_paper_profile_is_table5_in_si_units(slug):
    flops, hbm_tb, hbm_gb, out, up = TABLE5[slug]
    hw = load_hardware(slug)
    assert hw.profile == "paper" and hw.gpus_per_node == 8
    assert hw.flops == pytest.approx(flops * 1e12)
    assert hw.hbm_bytes_per_s == pytest.approx(hbm_tb * 1e12)
    assert hw.hbm_bytes == pytest.approx(hbm_gb * 1e9)
    assert hw.scale_up_bytes_per_s == pytest.approx(up * 1e9)
    # Superpod: scale-out = scale-up
    assert hw.scale_out_bytes_per_s == pytest.approx((out or up) * 1e9)
    assert hw.superpod == (out is None)


@pytest.mark.parametrize("slug", PAPER_MODELS)
def test_paper_profile_is_table4(slug):
    m = load_model(slug)
    assert (m.hidden_size, m.num_layers, m.dense_layers, m.moe_layers, m.routed_experts,
            m.experts_per_token, m.moe_intermediate_size) == TABLE4[slug]


def test_glm_reference_profile_corrects_the_printed_moe_layers():
    # 92 layers, 3 dense: 89 MoE layers; the paper prints 92
    assert load_model("glm-4.7", profile="reference").moe_layers == 89
    assert load_model("glm-4.7", profile="paper").moe_layers == 92


def test_every_value_has_a_source():
    hw, models = load_catalog("paper")
    for h in hw.values():
        for f in ("hbm_tb_per_s", "hbm_gb", "scale_up_gb_per_s", "scale_out_gb_per_s", "gpus_per_node"):
            assert h.sources.get(f), (h.slug, f)
    for m in models.values():
        for f in ("hidden_size", "moe_intermediate_size", "routed_experts", "experts_per_token", "moe_layers"):
            assert m.sources.get(f), (m.slug, f)


def test_datasheet_profile_applies_named_efficiencies():
    # H200 datasheet HBM is 4.8 TB/s (the paper prints 4.0); x 0.8 default efficiency = 3.84 TB/s
    assert load_hardware("h200", "datasheet").hbm_bytes_per_s == pytest.approx(3.84e12)
    one = Efficiency(compute=1, hbm=1, scale_up=1, scale_out=1)
    raw = load_hardware("h800", "datasheet", efficiency=one)
    assert raw.scale_up_bytes_per_s == pytest.approx(200e9) and raw.scale_out_bytes_per_s == pytest.approx(50e9)
    # 0.8 x 200 GB/s = 160 GB/s: the paper's sustained H800 NVLink figure
    assert load_hardware("h800", "datasheet").scale_up_bytes_per_s == pytest.approx(160e9)
    with pytest.raises(AfdError, match="efficiency"):
        Efficiency(hbm=1.5)


def test_bf16_peak_is_exposed_with_its_source():
    h800 = load_hardware("h800")  # the paper lists FP8 only; BF16 comes from the datasheet block
    assert h800.bf16_flops == pytest.approx(989e12) and "STEP3" in h800.sources["bf16_tflops"]
    user = load_hardware("h800", "datasheet")
    assert user.bf16_flops == pytest.approx(989e12)  # compute efficiency 1.0 by default


def test_devices_without_fp8_use_bf16_and_say_so():
    a100 = load_hardware("a100")
    assert a100.profile == "datasheet" and a100.flops_dtype == "bf16" and a100.flops == pytest.approx(312e12)


def test_unknown_names_list_the_valid_choices():
    with pytest.raises(AfdError, match="unknown hardware 'h900'.*h800"):
        load_hardware("h900")
    with pytest.raises(AfdError, match="unknown model 'gpt-5'.*deepseek-v3"):
        load_model("gpt-5")


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_user_hardware_file(tmp_path):
    p = _write(tmp_path, "mine.yaml", "name: My cluster\ngpus_per_node: 4\nfp8_tflops: 1000\nhbm_tb_per_s: 2\n"
               "hbm_gb: 100\nscale_up_gb_per_s: 300\nscale_out_gb_per_s: 25\nsource: my measurements\n")
    hw = load_hardware(str(p))
    assert hw.slug == "mine" and hw.gpus_per_node == 4 and hw.bandwidth_ratio == pytest.approx(12)


@pytest.mark.parametrize("text, message", [
    ("fp8_tflops: [1, 2\n", "not valid YAML"),
    ("- a\n- b\n", "expected a mapping"),
    ("fp8_tflops: 1000\nhbm_tb_per_s: 2\nhbm_gb: 100\nscale_up_gb_per_s: 300\nsource: x\n",
     "missing field 'scale_out_gb_per_s'"),
    ("fp8_tflops: 1000\nhbm_tb_per_s: 2\nhbm_gb: 100\nscale_up_gb_per_s: 300\nscale_out_gb_per_s: -5\nsource: x\n",
     "scale_out_gb_per_s must be positive"),
    ("fp8_tflops: 1000\nhbm_tb_per_s: 2\nhbm_gb: 100\nscale_up_gb_per_s: 300\nscale_out_gb_per_s: 0\nsource: x\n",
     "must be positive"),
    ("fp8_tflops: 1000\nhbm_tb_per_s: 2\nhbm_gb: 100\nscale_up_gb_per_s: 300\nscale_out_gb_per_s: 25\n",
     "has no source"),
    ("fp8_tflops: fast\nhbm_tb_per_s: 2\nhbm_gb: 100\nscale_up_gb_per_s: 300\nscale_out_gb_per_s: 25\nsource: x\n",
     "must be a number"),
    ("fp8_tflops: 1000\nhbm_tb_per_s: 2\nhbm_gb: 100\nscale_up_gb_per_s: 300\nscale_out_gb_per_s: 25\nsource: x\n"
     "gpus_per_node: 0\n", "gpus_per_node must be an integer in 1..4096"),
])
def test_bad_hardware_files_fail_clearly(tmp_path, text, message):
    with pytest.raises(AfdError, match=message):
        load_hardware(str(_write(tmp_path, "bad.yaml", text)))


def test_missing_file():
    with pytest.raises(AfdError, match="no such file"):
        load_hardware("/nonexistent/hw.yaml")


def test_bad_model_values(tmp_path):
    base = ("hidden_size: 1024\nmoe_intermediate_size: 512\nnum_layers: 4\ndense_layers: 0\nmoe_layers: 4\n"
            "routed_experts: 8\nexperts_per_token: {k}\nsource: test\n")
    assert load_model(str(_write(tmp_path, "ok.yaml", base.format(k=2)))).experts_per_token == 2
    with pytest.raises(AfdError, match=r"TopK \(9\) exceeds the routed experts \(8\)"):
        load_model(str(_write(tmp_path, "k.yaml", base.format(k=9))))
    with pytest.raises(AfdError, match="experts_per_token must be a positive integer, got 0"):
        load_model(str(_write(tmp_path, "z.yaml", base.format(k=0))))


# Hugging Face config.json files of four families (fields as published; only the MoE ones kept)
HF = {
    "deepseek": ({"hidden_size": 7168, "num_hidden_layers": 61, "first_k_dense_replace": 3, "n_routed_experts": 256,
                  "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "intermediate_size": 18432,
                  "n_shared_experts": 1}, (7168, 58, 256, 8, 2048, 1)),
    "qwen": ({"hidden_size": 4096, "num_hidden_layers": 94, "num_experts": 128, "num_experts_per_tok": 8,
              "moe_intermediate_size": 1536, "intermediate_size": 12288, "decoder_sparse_step": 1,
              "mlp_only_layers": []}, (4096, 94, 128, 8, 1536, 0)),
    "mixtral": ({"hidden_size": 4096, "num_hidden_layers": 32, "num_local_experts": 8, "num_experts_per_tok": 2,
                 "intermediate_size": 14336}, (4096, 32, 8, 2, 14336, 0)),
    "dbrx": ({"d_model": 6144, "n_layers": 40, "ffn_config": {"moe_num_experts": 16, "moe_top_k": 4,
                                                               "ffn_hidden_size": 10752}}, (6144, 40, 16, 4, 10752, 0)),
    "llama4": ({"text_config": {"hidden_size": 5120, "num_hidden_layers": 48, "num_local_experts": 128,
                                "num_experts_per_tok": 1, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
                                "interleave_moe_layer_step": 2}}, (5120, 24, 128, 1, 8192, 1)),
}


@pytest.mark.parametrize("family", sorted(HF))
def test_hf_config_families(tmp_path, family):
    cfg, (h, moe_layers, e, k, m_, shared) = HF[family]
    p = _write(tmp_path, "config.json", json.dumps(cfg))
    m = load_model(str(p))
    assert (m.hidden_size, m.moe_layers, m.routed_experts, m.experts_per_token, m.moe_intermediate_size,
            m.shared_experts) == (h, moe_layers, e, k, m_, shared)


def test_hf_config_errors_name_the_missing_field(tmp_path):
    dense = _write(tmp_path, "config.json", json.dumps({"hidden_size": 4096, "num_hidden_layers": 32,
                                                          "intermediate_size": 11008}))
    with pytest.raises(AfdError, match="no field for routed_experts.*n_routed_experts.*num_local_experts"):
        model_from_hf_config(dense)
    broken = _write(tmp_path, "broken.json", "{not json")
    with pytest.raises(AfdError, match="not valid JSON"):
        load_model(str(broken))
    too_many = _write(tmp_path, "k.json", json.dumps({"hidden_size": 64, "num_hidden_layers": 2, "num_experts": 4,
                                                        "num_experts_per_tok": 8, "moe_intermediate_size": 32}))
    with pytest.raises(AfdError, match="TopK"):
        load_model(str(too_many))


def test_a_device_file_is_checked_whole_whichever_profile_is_asked(tmp_path):
    # the paper block's negative bandwidth was read only with --hw-profile paper, and a misspelt name under
    # sources: left that field's source the default, unsaid
    import pytest
    from afdlib.errors import AfdError
    from afdlib.inputs.catalog import load_hardware
    block = "  fp8_tflops: 1979\n  hbm_tb_per_s: {hbm}\n  hbm_gb: 80\n  scale_up_gb_per_s: 160\n  scale_out_gb_per_s: 50\n"
    def write(hbm=3.35, extra=""):
        path = tmp_path / "mine.yaml"
        path.write_text("name: Mine\ngpus_per_node: 8\npaper:\n" + block.format(hbm=hbm) + "  source: a test\n"
                        "datasheet:\n" + block.format(hbm=3.35) + "  source: a test\n" + extra)
        return str(path)
    # the datasheet profile at the default HBM efficiency, 0.8
    assert load_hardware(write(), profile="datasheet").hbm_bytes_per_s == pytest.approx(3.35e12 * 0.8)
    with pytest.raises(AfdError, match=r"\(paper\): hbm_tb_per_s must be positive, got -3.35"):
        load_hardware(write(hbm=-3.35), profile="datasheet")
    for key in ("sources", "uncertain"):
        with pytest.raises(AfdError, match=rf"\(datasheet\) {key}: unknown field 'hbm_gbb' \(did you mean 'hbm_gb'\?\)"):
            load_hardware(write(extra=f"  {key}:\n    hbm_gbb: a typo\n"), profile="datasheet")
