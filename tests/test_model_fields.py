"""Attention, vocabulary, dense/shared FFN sizes and MTP layers: catalogue and config.json."""
import json

import pytest

from afdlib.inputs.catalog import load_model, model_names
from afdlib.errors import AfdError
from afdlib.inputs.hf_config import model_from_hf_config

# KV-cache elements per token over all layers (reference data, section 2.3), and the layer count
KV_TOTAL = {
    "deepseek-v3": (35136, 61), "kimi-k2": (35136, 61), "qwen3-235b-a22b": (96256, 94),
    "qwen3-coder": (126976, 62), "mixtral-8x7b": (65536, 32), "step3": (31232, 61),
    "glm-4.7": (188416, 92), "dbrx": (81920, 40),
}
KV_PER_LAYER = {"deepseek-v3": 576, "kimi-k2": 576, "qwen3-235b-a22b": 1024, "qwen3-coder": 2048,
                "mixtral-8x7b": 2048, "step3": 512, "glm-4.7": 2048, "dbrx": 2048}

DEEPSEEK_V3 = {  # the fields of deepseek-ai/DeepSeek-V3's config.json this test needs
    "hidden_size": 7168, "num_hidden_layers": 61, "first_k_dense_replace": 3, "n_routed_experts": 256,
    "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "intermediate_size": 18432, "n_shared_experts": 1,
    "num_attention_heads": 128, "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
    "num_nextn_predict_layers": 1,
}
QWEN3_235B = {
    "hidden_size": 4096, "num_hidden_layers": 94, "num_experts": 128, "num_experts_per_tok": 8,
    "moe_intermediate_size": 1536, "intermediate_size": 12288, "decoder_sparse_step": 1, "mlp_only_layers": [],
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
    "sliding_window": None, "use_sliding_window": False,
}


def _config(tmp_path, cfg, name="config.json"):
    p = tmp_path / name
    p.write_text(json.dumps(cfg))
    return p


@pytest.mark.parametrize("profile", ["paper", "reference"])
def test_every_catalogue_model_has_an_attention_block_with_a_source(profile):
    for slug in model_names():
        m = load_model(slug, profile=profile)
        assert m.attention is not None, slug
        assert m.sources.get("attention") and m.vocab_size > 0, slug
        if m.dense_layers and slug not in ("step3", "ernie-4.5"):  # those two: not in the reference data
            assert m.dense_intermediate_size > 0, slug


@pytest.mark.parametrize("slug", sorted(KV_PER_LAYER))
def test_kv_elements_per_token_match_the_reference_totals(slug):
    total, layers = KV_TOTAL[slug]
    m = load_model(slug, profile="reference")
    assert m.num_layers == layers
    assert m.attention.kv_elements_per_token == total // layers == KV_PER_LAYER[slug]


def test_catalogue_values_of_the_new_fields():
    ds = load_model("deepseek-v3")
    assert (ds.attention.family, ds.attention.head_dim, ds.attention.q_lora_rank, ds.mtp_layers) == ("mla", 192, 1536, 1)
    assert (ds.dense_intermediate_size, ds.shared_size, ds.vocab_size) == (18432, 2048, 129280)
    assert load_model("glm-4.7").shared_size == 1536 and load_model("llama-4-maverick").shared_size == 8192
    oss = load_model("gpt-oss-120b").attention
    assert (oss.local_window, oss.local_layers) == (128, 18)
    llama = load_model("llama-4-maverick").attention
    assert (llama.local_window, llama.local_layers) == (8192, 36)
    step3 = load_model("step3")
    assert step3.attention.family == "mfa" and "vocab_size" in step3.uncertain


def test_hf_config_mla(tmp_path):
    m = model_from_hf_config(_config(tmp_path, DEEPSEEK_V3))
    a = m.attention
    assert (a.family, a.num_heads, a.head_dim, a.v_head_dim, a.q_lora_rank) == ("mla", 128, 192, 128, 1536)
    assert a.kv_elements_per_token == 576
    assert (m.vocab_size, m.mtp_layers, m.dense_intermediate_size) == (129280, 1, 18432)
    assert m.sources["attention"] and m.sources["vocab_size"]
    lite = model_from_hf_config(_config(tmp_path, {**DEEPSEEK_V3, "q_lora_rank": None}, "lite.json"))
    assert lite.attention.q_lora_rank == 0


def test_hf_config_gqa(tmp_path):
    m = model_from_hf_config(_config(tmp_path, QWEN3_235B))
    a = m.attention
    assert (a.family, a.num_heads, a.num_kv_heads, a.head_dim, a.local_window) == ("gqa", 64, 4, 128, 0)
    assert a.kv_elements_per_token == 1024
    assert (m.vocab_size, m.mtp_layers, m.dense_intermediate_size) == (151936, 0, 0)


def test_hf_config_other_families(tmp_path):
    # Mixtral: no head_dim (H / heads), MHA when the KV head count equals the query heads
    mixtral = {"hidden_size": 4096, "num_hidden_layers": 32, "num_local_experts": 8, "num_experts_per_tok": 2,
               "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8}
    assert model_from_hf_config(_config(tmp_path, mixtral)).attention.kv_elements_per_token == 2048
    mha = model_from_hf_config(_config(tmp_path, {**mixtral, "num_key_value_heads": 32}, "mha.json")).attention
    assert mha.family == "mha"
    # gpt-oss: sliding window on the layers typed sliding_attention
    oss = {"hidden_size": 2880, "num_hidden_layers": 4, "num_local_experts": 128, "num_experts_per_tok": 4,
           "intermediate_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
           "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * 2}
    a = model_from_hf_config(_config(tmp_path, oss, "oss.json")).attention
    assert (a.local_window, a.local_layers) == (128, 2)
    # DBRX: KV heads in attn_config
    dbrx = {"d_model": 6144, "n_layers": 40, "n_heads": 48, "vocab_size": 100352, "attn_config": {"kv_n_heads": 8},
            "ffn_config": {"moe_num_experts": 16, "moe_top_k": 4, "ffn_hidden_size": 10752}}
    assert model_from_hf_config(_config(tmp_path, dbrx, "dbrx.json")).attention.kv_elements_per_token == 2048
    # Llama 4 (text_config): chunked attention on 3 of 4 layers, dense FFN in intermediate_size_mlp
    llama = {"text_config": {"hidden_size": 5120, "num_hidden_layers": 48, "num_local_experts": 128,
                             "num_experts_per_tok": 1, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
                             "interleave_moe_layer_step": 2, "num_attention_heads": 40, "num_key_value_heads": 8,
                             "head_dim": 128, "attention_chunk_size": 8192, "vocab_size": 202048}}
    m = model_from_hf_config(_config(tmp_path, llama, "llama.json"))
    assert (m.attention.local_window, m.attention.local_layers) == (8192, 36)
    assert (m.dense_intermediate_size, m.vocab_size) == (16384, 202048)


def test_hf_config_without_heads_has_no_attention(tmp_path):
    cfg = {k: v for k, v in QWEN3_235B.items() if k not in ("num_attention_heads", "num_key_value_heads")}
    assert model_from_hf_config(_config(tmp_path, cfg)).attention is None


@pytest.mark.parametrize("field, value", [("num_key_value_heads", "eight"), ("vocab_size", 1.5),
                                          ("sliding_window", "big"), ("layer_types", "sliding_attention"),
                                          ("first_k_dense_replace", "three")])
def test_hf_config_wrong_types_name_the_field(tmp_path, field, value):
    p = _config(tmp_path, {**QWEN3_235B, "sliding_window": 128, "use_sliding_window": True, field: value})
    with pytest.raises(AfdError, match=field):
        model_from_hf_config(p)


def test_yaml_with_an_unknown_attention_family_is_refused(tmp_path):
    base = ("name: Tiny\nhidden_size: 64\nmoe_intermediate_size: 32\nnum_layers: 2\ndense_layers: 0\n"
            "moe_layers: 2\nrouted_experts: 4\nexperts_per_token: 2\nsource: test\n")
    p = tmp_path / "tiny.yaml"
    p.write_text(base + "attention: {family: gqa, num_heads: 4, num_kv_heads: 2, head_dim: 16}\n")
    assert load_model(str(p)).attention.kv_elements_per_token == 64
    p.write_text(base + "attention: {family: xyz, num_heads: 4, num_kv_heads: 2, head_dim: 16}\n")
    with pytest.raises(AfdError, match="attention family 'xyz' unknown"):
        load_model(str(p))
    p.write_text(base + "attention: {family: gqa, num_heads: 4, num_kv_heads: eight, head_dim: 16}\n")
    with pytest.raises(AfdError, match="num_kv_heads"):
        load_model(str(p))
