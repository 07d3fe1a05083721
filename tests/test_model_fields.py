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
    for attention, message in (
            ("family: xyz, num_heads: 4, num_kv_heads: 2, head_dim: 16", "attention family 'xyz' unknown"),
            ("family: gqa, num_heads: 4, num_kv_heads: eight, head_dim: 16", "num_kv_heads"),
            # a family the fields contradict: the cache would be read by the family's rule, the field dropped
            ("family: gqa, num_heads: 4, num_kv_heads: 2, head_dim: 16, kv_lora_rank: 512",
             "kv_lora_rank is a field of MLA's latent attention; family 'gqa' does not use it"),
            ("family: mha, num_heads: 4, num_kv_heads: 2, head_dim: 16",
             "MHA attention has as many key-value heads as query heads")):
        p.write_text(base + f"attention: {{{attention}}}\n")
        with pytest.raises(AfdError, match=message):
            load_model(str(p))


# --- fields that change the model: read, or refused naming them; misspellings refused ---------------

def _shipped(name):
    from pathlib import Path
    return json.loads((Path(__file__).resolve().parent / "data" / "hf_configs" / name).read_text())


def test_a_misspelt_config_field_is_refused_with_the_name_it_resembles(tmp_path):
    cfg = dict(DEEPSEEK_V3)
    cfg["n_shared_expert"] = cfg.pop("n_shared_experts")          # one letter short: read as 0 shared experts
    with pytest.raises(AfdError, match="field 'n_shared_expert' is not one afd reads; did you mean 'n_shared_experts'"):
        model_from_hf_config(_config(tmp_path, cfg))
    cfg = dict(DEEPSEEK_V3, Num_NextN_Predict_Layer=1)               # case and a letter: still the same field
    cfg.pop("num_nextn_predict_layers")
    with pytest.raises(AfdError, match="did you mean 'num_nextn_predict_layers'"):
        model_from_hf_config(_config(tmp_path, cfg))
    # a field near a read one that the config also has is another field (MiMo-V2's sliding_window_size), and
    # a field near nothing looked for (routed_scaling_factor) is only listed as ignored
    m = model_from_hf_config(_config(tmp_path, dict(DEEPSEEK_V3, routed_scaling_factor=2.5)))
    assert "routed_scaling_factor" in m.sources["config_ignored"]


@pytest.mark.parametrize("field,value", [("use_double_wide_mlp", True),
                                         ("hidden_size_per_layer_input", 256), ("mtp_use_dedicated_embeddings", True)])
def test_a_field_that_changes_the_model_and_is_not_read_is_refused(tmp_path, field, value):
    with pytest.raises(AfdError, match=f"field '{field}' .* changes the model, and afd does not read it"):
        model_from_hf_config(_config(tmp_path, dict(DEEPSEEK_V3, **{field: value})))
    # at the value that changes nothing it reads, and is listed as ignored
    off = {"use_double_wide_mlp": False, "hidden_size_per_layer_input": 0,
           "mtp_use_dedicated_embeddings": False}[field]
    assert field in model_from_hf_config(_config(tmp_path, dict(DEEPSEEK_V3, **{field: off}))).sources["config_ignored"]


def test_sliding_window_fields_are_read_or_their_conflict_refused(tmp_path):
    gqa = dict(QWEN3_235B, sliding_window=4096, use_sliding_window=True)
    # Gemma 3's sliding_window_pattern k: every k-th layer global, so 94 - 94 // 6 = 79 sliding layers
    assert model_from_hf_config(_config(tmp_path, dict(gqa, sliding_window_pattern=6))).attention.local_layers == 79
    # Qwen2's max_window_layers: the first 40 layers full, the other 54 sliding
    assert model_from_hf_config(_config(tmp_path, dict(gqa, max_window_layers=40))).attention.local_layers == 54
    # disabled (Qwen3's published use_sliding_window false): no sliding layer, max_window_layers unread
    off = model_from_hf_config(_config(tmp_path, dict(QWEN3_235B, sliding_window=4096, max_window_layers=40)))
    assert off.attention.local_layers == 0
    with pytest.raises(AfdError, match="'sliding_window' \\(4096\\) and 'sliding_window_size' \\(128\\) disagree"):
        model_from_hf_config(_config(tmp_path, dict(gqa, sliding_window_size=128)))
    with pytest.raises(AfdError, match="'sliding_window' \\(4096\\) and 'attention_chunk_size' \\(8192\\)"):
        model_from_hf_config(_config(tmp_path, dict(gqa, attention_chunk_size=8192)))
    # an alias alone is the window
    alias = dict(gqa, sliding_window=None, sliding_window_size=1024)
    assert model_from_hf_config(_config(tmp_path, alias)).attention.local_window == 1024


def test_output_gates_count_their_weights(tmp_path):
    from afdlib.inputs.layers import parameter_counts
    qwen = _shipped("Qwen--Qwen3.5-397B-A17B_config.json")
    with_gate = parameter_counts(model_from_hf_config(_config(tmp_path, qwen)))[0]
    qwen["text_config"]["attn_output_gate"] = False
    without = parameter_counts(model_from_hf_config(_config(tmp_path, qwen)))[0]
    # 15 full-attention layers (60, every 4th) x hidden 4096 x 32 heads x head_dim 256
    assert with_gate - without == 15 * 4096 * 32 * 256
    kimi = _shipped("moonshotai--Kimi-K3_config.json")
    kimi_cfg = kimi.get("text_config", kimi)
    gated = parameter_counts(model_from_hf_config(_config(tmp_path, kimi)))[0]
    kimi_cfg["mla_use_output_gate"] = False
    plain = parameter_counts(model_from_hf_config(_config(tmp_path, kimi)))[0]
    # 24 MLA layers x hidden 7168 x 96 heads x value width 128
    assert gated - plain == 24 * 7168 * 96 * 128


def test_declared_weights_fields_are_read_not_listed_as_ignored():
    from pathlib import Path
    m = model_from_hf_config(Path(__file__).resolve().parent / "data" / "hf_configs" /
                             "deepseek-ai--DeepSeek-V4-Flash_config.json")
    assert m.weights_dtype == "mxfp4"
    ignored = m.sources["config_ignored"].split(", ")
    assert "quantization_config" not in ignored and "expert_dtype" not in ignored


def test_minimax_and_step_names_for_the_shared_dense_and_mtp_sizes_are_read(tmp_path):
    base = dict(DEEPSEEK_V3)
    for k in ("n_shared_experts", "intermediate_size", "num_nextn_predict_layers"):
        base.pop(k)
    # MiniMax-M3: dense_intermediate_size is the dense layers' FFN, its intermediate_size the expert's
    m = model_from_hf_config(_config(tmp_path, dict(base, dense_intermediate_size=12288, intermediate_size=2048,
                                                    shared_intermediate_size=4096, num_mtp_modules=3,
                                                    mtp_transformer_layers=2, use_mtp=True)))
    assert (m.dense_intermediate_size, m.shared_expert_intermediate_size, m.shared_experts) == (12288, 4096, 1)
    assert m.mtp_layers == 6                                          # 3 modules of 2 layers each
    assert model_from_hf_config(_config(tmp_path, dict(base, num_mtp_modules=3, use_mtp=False))).mtp_layers == 0
    # Step-3.7's share_expert_dim; MiniMax-M2's shared_intermediate_size 0: no shared expert
    assert model_from_hf_config(_config(tmp_path, dict(base, share_expert_dim=1280))).shared_expert_intermediate_size == 1280
    assert model_from_hf_config(_config(tmp_path, dict(base, shared_intermediate_size=0))).shared_experts == 0


def test_two_names_of_one_moe_quantity_that_disagree_are_refused(tmp_path):
    # gpt-oss gives experts_per_token and num_experts_per_tok, equal: read
    assert model_from_hf_config(_config(tmp_path, dict(DEEPSEEK_V3, experts_per_token=8))).experts_per_token == 8
    with pytest.raises(AfdError, match="'num_experts_per_tok' \\(8\\) and 'experts_per_token' \\(4\\) both give the "
                                       "experts per token, and disagree"):
        model_from_hf_config(_config(tmp_path, dict(DEEPSEEK_V3, experts_per_token=4)))
    # Qwen3's intermediate_size (the dense FFN, 12288) beside moe_intermediate_size (1536) is no clash
    assert model_from_hf_config(_config(tmp_path, QWEN3_235B)).moe_intermediate_size == 1536


def test_block_sparse_attention_is_refused_and_shared_indexers_read(tmp_path):
    with pytest.raises(AfdError, match="field 'sparse_attention_config' makes the attention block-sparse"):
        model_from_hf_config(_config(tmp_path, dict(QWEN3_235B, sparse_attention_config={"use_sparse_attention": True})))
    with pytest.raises(AfdError, match="field 'use_sparse_attention' \\(True\\) changes the model"):
        model_from_hf_config(_config(tmp_path, dict(QWEN3_235B, use_sparse_attention=True)))
    from afdlib.inputs.layers import core_flops_per_token, model_mixers
    dsa = dict(DEEPSEEK_V3, index_topk=2048, index_n_heads=64, index_head_dim=128)
    plain = model_mixers(model_from_hf_config(_config(tmp_path, dsa)))
    types = ["full"] * 3 + ["full", "shared", "shared", "shared"] * 14 + ["full", "shared"]    # 61 layers, 18 full
    shared = model_mixers(model_from_hf_config(_config(tmp_path, dict(dsa, indexer_types=types))))
    assert [(g.layers, g.index_heads) for g in shared] == [(18, 64), (43, 0)]
    # the shared layers skip the indexer: 43 x 2 x 64 x 128 FLOPs per cached token less at 10,000 tokens
    total = lambda gs: sum(g.layers * float(core_flops_per_token(g, 1e4, 576, 512)) for g in gs)  # noqa: E731
    assert total(plain) - total(shared) == pytest.approx(43 * 2 * 64 * 128 * 1e4)
    with pytest.raises(AfdError, match="field 'indexer_types' must list 'full' or 'shared'"):
        model_from_hf_config(_config(tmp_path, dict(dsa, indexer_types=["shared"] * 61)))


@pytest.mark.parametrize("field, value", [("tie_word_embeddings", "no"), ("use_sliding_window", "false"),
                                          ("use_mtp", 0.0), ("tie_word_embeddings", [True])])
def test_a_true_false_field_given_as_anything_else_is_refused(tmp_path, field, value):
    # Python reads the text "no" as true: a tied LM head would drop the head's 129280 x 7168 weights unseen
    cfg = {**QWEN3_235B, field: value} if field == "use_sliding_window" else {**DEEPSEEK_V3, field: value}
    with pytest.raises(AfdError, match=f"field '{field}' must be true or false"):
        model_from_hf_config(_config(tmp_path, cfg))
    assert model_from_hf_config(_config(tmp_path, {**DEEPSEEK_V3, "tie_word_embeddings": False})).tied_embeddings is False


@pytest.mark.parametrize("rank", [0, -512])
def test_an_mla_latent_rank_that_is_not_positive_is_refused(tmp_path, rank):
    # kv_lora_rank 0 would read DeepSeek-V3 as 128-head MHA: 128 x 192 x 2 elements per token per layer, not 576
    with pytest.raises(AfdError, match="'kv_lora_rank' must be a positive latent rank"):
        model_from_hf_config(_config(tmp_path, {**DEEPSEEK_V3, "kv_lora_rank": rank}))
    # null beside MLA's other fields read it as 128-head MHA without a word (a probe of issue 32); null with
    # them gone is a model without MLA
    with pytest.raises(AfdError, match="'kv_lora_rank' is null beside MLA's 'qk_nope_head_dim', 'q_lora_rank'"):
        model_from_hf_config(_config(tmp_path, {**DEEPSEEK_V3, "kv_lora_rank": None}))
    plain = {k: v for k, v in DEEPSEEK_V3.items() if k not in ("qk_nope_head_dim", "q_lora_rank", "qk_rope_head_dim",
                                                                "v_head_dim")}
    assert model_from_hf_config(_config(tmp_path, {**plain, "kv_lora_rank": None})).attention.family == "mha"


def test_a_quantization_config_in_a_format_not_read_is_said_not_called_undeclared(tmp_path, capsys):
    # it read "fp8 (default: none declared)" although the config declares 3-bit weights of another method
    from afdlib.cli import main
    path = _config(tmp_path, {**DEEPSEEK_V3, "quantization_config": {"quant_method": "weird_method", "bits": 3}})
    assert main(["model", "--model", str(path), "--json"]) == 0
    weights = json.loads(capsys.readouterr().out)["weights"]
    assert weights.startswith("fp8 (default: quantization_config (quant_method 'weird_method', bits 3) declares")
    known = _config(tmp_path, {**DEEPSEEK_V3, "quantization_config": {"quant_method": "fp8"}}, "fp8.json")
    assert model_from_hf_config(known).weights_dtype == "fp8" and "weights_unread" not in model_from_hf_config(known).sources


def test_a_list_where_one_number_is_read_takes_its_first_entry_and_says_so(tmp_path, capsys):
    # ERNIE-4.5-VL gives some sizes as [text, vision] pairs: the text model's (first) value is read, and
    # afd model says which lists were read that way (a list kept silently would hide the vision value)
    from afdlib.cli import main
    path = _config(tmp_path, {**DEEPSEEK_V3, "moe_intermediate_size": [2048, 1024], "n_routed_experts": [256]})
    m = model_from_hf_config(path)
    assert (m.moe_intermediate_size, m.routed_experts) == (2048, 256)
    assert main(["model", "--model", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lists_read_by_first_entry"] == [
        "moe_intermediate_size [2048, 1024]", "n_routed_experts [256]"]
    assert main(["model", "--model", str(path)]) == 0
    assert "lists read      by their first entry (the text model's): moe_intermediate_size [2048, 1024]" \
        in capsys.readouterr().out
    plain = _config(tmp_path, DEEPSEEK_V3, "plain.json")
    assert main(["model", "--model", str(plain), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lists_read_by_first_entry"] == []


def test_a_list_of_per_layer_values_or_an_empty_list_where_one_number_is_read_is_refused(tmp_path):
    # 48 key-value head counts for 48 layers are per-layer values (read as the first, 4, the cache was 8x
    # too small); an empty list has no first entry (it was read as absent: MHA)
    for value, count in (([4] + [32] * 60, 61), ([], 0)):
        with pytest.raises(AfdError, match=f"field 'num_key_value_heads' is a list of {count} values where one number"):
            model_from_hf_config(_config(tmp_path, {**DEEPSEEK_V3, "num_key_value_heads": value}))


def test_layer_types_and_a_full_attention_interval_that_disagree_are_refused(tmp_path):
    # Qwen3.5 gives both: every 4th layer full in layer_types, and full_attention_interval 4; an interval of
    # 2 beside the same list used to lose silently (30/30 read as 15/45)
    types = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(48)]
    cfg = {**QWEN3_235B, "num_hidden_layers": 48, "layer_types": types, "linear_num_key_heads": 16,
           "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
           "linear_conv_kernel_dim": 4}
    agree = model_from_hf_config(_config(tmp_path, {**cfg, "full_attention_interval": 4}))
    assert {g.kind: g.layers for g in agree.mixers} == {"linear": 36, "attention": 12}
    with pytest.raises(AfdError, match="'layer_types' and 'full_attention_interval' \\(2\\) place the full-attention"):
        model_from_hf_config(_config(tmp_path, {**cfg, "full_attention_interval": 2}, "two.json"))


def test_a_one_attention_model_with_fewer_ffn_blocks_than_layers_is_refused(tmp_path):
    # 48 layers of which 40 MoE and 0 dense: the 8 others had their attention time dropped (the step charges
    # attention with each FFN block), giving the 40-layer model's throughput
    import yaml
    doc = {"name": "Mini", "hidden_size": 4096, "moe_intermediate_size": 1536, "num_layers": 48, "dense_layers": 0,
           "moe_layers": 40, "routed_experts": 128, "experts_per_token": 8, "shared_experts": 0, "vocab_size": 151936,
           "attention": {"family": "gqa", "num_heads": 32, "num_kv_heads": 4, "head_dim": 128}, "source": "test"}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(AfdError, match=r"moe_layers \(40\) \+ dense_layers \(0\) fall short of num_layers \(48\)"):
        load_model(str(path))
    path.write_text(yaml.safe_dump({**doc, "dense_layers": 8}))
    assert load_model(str(path)).num_layers == 48


def test_afd_model_says_when_no_lm_head_is_modelled_and_when_the_dense_ffn_width_is_assumed(tmp_path, capsys):
    # no vocab_size read as "the embedding is tied to the LM head, counted once" (there is none), and the
    # dense FFN's width of K x M + shared went unsaid in afd model and afd throughput
    import yaml

    from afdlib.cli import main
    doc = {"name": "Mini", "hidden_size": 4096, "moe_intermediate_size": 1536, "num_layers": 48, "dense_layers": 8,
           "moe_layers": 40, "routed_experts": 128, "experts_per_token": 8, "shared_experts": 0,
           "attention": {"family": "gqa", "num_heads": 32, "num_kv_heads": 4, "head_dim": 128}, "source": "test"}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["model", "--model", str(path)]) == 0
    out = capsys.readouterr().out
    assert "(no vocab_size given: no embedding or LM head modelled)" in out
    assert "dense FFN       width 12,288 assumed: K x M" in out          # 8 x 1536 + 0 shared
    assert main(["throughput", "--model", str(path), "--hardware", "h800", "--design", "ep", "--ep-size", "16",
                 "--json"]) == 0
    sources = json.loads(capsys.readouterr().out)["floor"]["sources"]
    assert sources["lm_head"].startswith("none: the model gives no vocab_size")
    assert "width assumed K x M" in sources["dense_layers"]
    path.write_text(yaml.safe_dump({**doc, "vocab_size": 1000, "dense_intermediate_size": 9000}))
    assert main(["model", "--model", str(path), "--json"]) == 0
    given = json.loads(capsys.readouterr().out)
    assert (given["dense_intermediate_size"], given["dense_intermediate_size_assumed"]) == (9000, False)


def test_a_rope_width_in_a_gqa_block_of_a_model_file_is_refused(tmp_path):
    # it was dropped: the output was byte-identical to the file without it (MLA alone reads it)
    import yaml
    doc = {"name": "Mini", "hidden_size": 4096, "moe_intermediate_size": 1536, "num_layers": 40, "dense_layers": 0,
           "moe_layers": 40, "routed_experts": 128, "experts_per_token": 8, "source": "test",
           "attention": {"family": "gqa", "num_heads": 32, "num_kv_heads": 4, "head_dim": 128, "qk_rope_head_dim": 64}}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(AfdError, match="attention.qk_rope_head_dim is MLA's decoupled RoPE width; a gqa block"):
        load_model(str(path))
