"""Modern MoE architectures from their published config.json files (issue 20): layers by token
mixer, latent MoE, parameter counts against the model cards, the cache and state by hand, memory
and time that follow from the layers, and layout fields refused by name.

The configs in tests/data/hf_configs are verbatim copies of the published files (README there)."""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from afdlib.cli import main
from afdlib.cli.model import summary
from afdlib.errors import AfdError
from afdlib.evaluator.attention import attention_work, kv_cache_bytes, state_bytes_per_request
from afdlib.inputs.catalog import load_model
from afdlib.inputs.hf_config import model_from_hf_config
from afdlib.inputs.layers import Mixer
from afdlib.inputs.specs import Precision

DATA = Path(__file__).parent / "data" / "hf_configs"
QWEN35 = DATA / "Qwen--Qwen3.5-397B-A17B_config.json"
SUPER = DATA / "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4_config.json"
ULTRA = DATA / "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16_config.json"
MIMO = DATA / "XiaomiMiMo--MiMo-V2-Flash_config.json"
V4 = DATA / "deepseek-ai--DeepSeek-V4-Flash_config.json"
GEMMA = DATA / "google--gemma-4-26B-A4B_config.json"
KIMI = DATA / "moonshotai--Kimi-K3_config.json"
V32 = DATA / "deepseek-ai--DeepSeek-V3.2_config.json"

# (config, total, active per token) as the model cards state them; the card named with its source.
CARDS = [
    (QWEN35, 397e9, 17e9),    # Qwen/Qwen3.5-397B-A17B model card: 397B total, 17B activated (also its name)
    (SUPER, 120e9, 12e9),     # nvidia/NVIDIA-Nemotron-3-Super-120B-A12B card: 120B total, 12B active (its name)
    (ULTRA, 550e9, 55e9),     # nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B card: 550B total, 55B active (its name)
    (MIMO, 309e9, 15e9),      # XiaomiMiMo/MiMo-V2-Flash card: 309B total parameters, 15B active
    (V4, 284e9, 13e9),        # deepseek-ai/DeepSeek-V4-Flash card: 284B total, 13B activated
    (GEMMA, 26e9, 4e9),       # google/gemma-4-26B-A4B card: 26B total, 4B active (its name: 26B-A4B)
    (V32, 671e9, 37e9),       # deepseek-ai/DeepSeek-V3.2 card: 671B total, 37B activated (as V3)
]
# Kimi-K3 is read (below) but has no card number we could cite: not in CARDS (README).


@pytest.mark.parametrize("path, total, active", CARDS, ids=lambda x: getattr(x, "stem", ""))
def test_parameters_within_ten_percent_of_the_card(path, total, active):
    doc = summary(model_from_hf_config(path))
    assert doc["total_params"] == pytest.approx(total, rel=0.10)
    assert doc["active_params"] == pytest.approx(active, rel=0.10)


# kv_bytes_per_token (BF16, all layers) and state bytes per request, by hand:
KV_BY_HAND = {
    # linear attention (Gated DeltaNet): 15 full GQA layers x 2 (K, V) x 2 KV heads x 256 x 2 bytes; the 45 linear
    # layers keep 64 value heads x 128 x 128 FP32 (mamba_ssm_dtype) + conv (2 x 16 x 128 + 64 x 128) x 3 x 2 bytes
    QWEN35: (15 * 2 * 2 * 256 * 2, 45 * (64 * 128 * 128 * 4 + (2 * 16 * 128 + 64 * 128) * 3 * 2)),
    # Mamba-2: 8 attention layers x 2 x 2 x 128 x 2; 40 Mamba layers x (128 heads x 64 x 128 state FP32
    # + conv (8192 + 2 x 8 groups x 128) x 3 x 2)
    SUPER: (8 * 2 * 2 * 128 * 2, 40 * (128 * 64 * 128 * 4 + (8192 + 2 * 8 * 128) * 3 * 2)),
    # sliding window: 9 full layers x 4 KV heads x (192 + 128) x 2; the 39 window layers hold no per-token growth
    MIMO: (9 * 4 * (192 + 128) * 2, 0),
    # compressed: 21 ratio-4 layers x (512 + 128 indexer) / 4 + 20 ratio-128 layers x 512 / 128, x 2 bytes
    V4: ((21 * (512 + 128) / 4 + 20 * 512 / 128) * 2, 0),
    # full layers of their own heads, keys = values: 5 x 2 global KV heads x 512 x 2
    GEMMA: (5 * 2 * 512 * 2, 0),
    # sparse attention (DSA): 61 MLA layers x (512 latent + 64 rope + 128 indexer key) x 2, the indexer's keys
    # kept for every token though each query attends to 2,048 of them
    V32: (61 * (512 + 64 + 128) * 2, 0),
    # Kimi Delta Attention + MLA: 24 MLA layers x 576 x 2; 69 KDA layers x (96 x 128 x 128 FP32 + 3 x 96 x 128 x 3 x 2)
    KIMI: (24 * 576 * 2, 69 * (96 * 128 * 128 * 4 + 3 * 96 * 128 * 3 * 2)),
}


@pytest.mark.parametrize("path", list(KV_BY_HAND), ids=lambda p: p.stem)
def test_kv_bytes_per_token_and_state_by_hand(path):
    doc = summary(model_from_hf_config(path))
    kv, state = KV_BY_HAND[path]
    assert doc["kv_bytes_per_token"] == kv
    assert doc["state_bytes_per_request"] == state


def test_layers_by_kind_as_the_configs_give_them():
    layers = {p: summary(model_from_hf_config(p))["layers"] for p in (QWEN35, SUPER, MIMO, V4, GEMMA, KIMI)}
    assert layers[QWEN35]["mixer"] == {"linear": 45, "attention": 15} and layers[QWEN35]["ffn"] == {"moe": 60}
    assert layers[SUPER]["mixer"] == {"mamba": 40, "attention": 8, "none": 40}
    assert layers[SUPER]["ffn"] == {"moe": 40, "none": 48}
    assert layers[MIMO]["mixer"] == {"attention": 9, "window": 39} and layers[MIMO]["ffn"] == {"moe": 47, "dense": 1}
    assert layers[V4]["mixer"] == {"window": 2, "compressed": 41}
    assert layers[GEMMA]["mixer"] == {"window": 25, "attention": 5}
    assert layers[KIMI]["mixer"] == {"linear": 69, "attention": 24}
    # DSA: the cache read stops growing with the context at the 2,048 selected entries; the indexer's keys do not
    v32, p = model_from_hf_config(V32), Precision()
    read = [float(attention_work(v32, p, 1, c)[1].hbm_bytes) for c in (10_000, 20_000)]
    assert read[1] - read[0] == pytest.approx(10_000 * 128 * 2 * 61 / 61, rel=1e-9)
    # MiMo's window layers keep their own 8 KV heads over 128 tokens: 39 x 8 x 320 x 128 x 2 bytes per request
    assert summary(model_from_hf_config(MIMO))["window_bytes_per_request"] == 39 * 8 * 320 * 128 * 2


def test_latent_moe_relu2_and_weight_formats():
    nemotron = model_from_hf_config(SUPER)
    assert (nemotron.moe_latent_size, nemotron.ffn_matrices, nemotron.routed_width) == (1024, 2, 1024)
    assert nemotron.weights_dtype == "nvfp4"          # from the hf_quant_config.json beside it
    assert model_from_hf_config(V4).weights_dtype == "mxfp4"    # expert_dtype fp4
    assert model_from_hf_config(MIMO).weights_dtype == "fp8"    # quant_method fp8, 128 x 128 blocks
    assert model_from_hf_config(KIMI).weights_dtype == "mxfp4"  # compressed-tensors mxfp4-pack-quantized
    assert model_from_hf_config(KIMI).moe_latent_size == 3584   # routed_expert_hidden_size
    # the routed experts' weights: 512 experts x 2 matrices x latent 1024 x 2688 per layer (not 3 x 4096 x 2688)
    from afdlib.evaluator.grouped_gemm import expert_weight_bytes
    b = expert_weight_bytes(512, nemotron.routed_width, nemotron.moe_intermediate_size, Precision(weights="bf16"),
                            nemotron.ffn_matrices)
    assert b == 512 * 2 * 1024 * 2688 * 2


def _all_full(m):
    """The same model read as every layer full attention (no states)."""
    return replace(m, mixers=(Mixer("attention", m.num_layers, m.attention),))


def test_qwen35_holds_four_times_the_requests_of_all_full_attention_less_its_state():
    m = model_from_hf_config(QWEN35)
    p = Precision()
    for context in (4096, 32768, 131072):
        hybrid = kv_cache_bytes(m, p, context)
        full = kv_cache_bytes(_all_full(m), p, context)
        # 60 full layers against 15: exactly 4x the cache, once the constant state is set aside
        assert full / (hybrid - state_bytes_per_request(m)) == pytest.approx(4.0, rel=1e-12)
    # in the decode model's memory check: the same batch needs the cache it holds, nothing more
    from afdlib.decode.step import Assumptions, ep_step
    from afdlib.inputs.catalog import load_hardware
    from afdlib.inputs.specs import Budget
    hw = load_hardware("b200")
    for x in (m, _all_full(m)):
        st = ep_step(x, hw, 64, 16, 32768, Budget(), p, Assumptions())
        cache = float(st.memory_bytes) - float(st.memory[0].weights_bytes)
        assert cache == pytest.approx(16 * float(kv_cache_bytes(x, p, 32768)), rel=1e-9)
    # requests that fit beside the weights: ~4x (less the state) at long context
    room = 100e9
    fit = [room / float(kv_cache_bytes(x, p, 131072)) for x in (m, _all_full(m))]
    assert 3.0 < fit[0] / fit[1] < 4.0


def test_attention_stage_follows_the_layers():
    """Linear layers read their state, not a cache: the hybrid's attention work grows 4x slower with
    the context than the all-full model's; Mamba layers likewise."""
    p = Precision()
    for path in (QWEN35, SUPER):
        m = model_from_hf_config(path)
        grow = [attention_work(x, p, 1, 131072)[1].hbm_bytes - attention_work(x, p, 1, 4096)[1].hbm_bytes
                for x in (m, _all_full(m))]
        full_layers = sum(g.layers for g in m.mixers if g.kind == "attention")
        assert grow[0] / grow[1] == pytest.approx(full_layers / m.num_layers, rel=1e-9)
    # a window layer's cache read stops growing at its window
    mimo = model_from_hf_config(MIMO)
    core = [attention_work(mimo, p, 1, c)[1].hbm_bytes for c in (1000, 2000)]
    per_token_full_layers = 9 * 4 * 320 * p.bytes("kv_cache") / (mimo.moe_layers + mimo.dense_layers)
    assert core[1] - core[0] == pytest.approx(1000 * per_token_full_layers, rel=1e-9)


def test_nemotron_ultra_decodes_at_a_sane_rate():
    """The issue's symptom: 3,092B routed parameters and 20 tokens/s per GPU on EP32; with the latent
    MoE and the Mamba layers the model holds its 550B and decodes at a rate of its 55B active."""
    from afdlib.decode.step import Assumptions, ep_step
    from afdlib.inputs.catalog import load_hardware
    from afdlib.inputs.specs import Budget
    m = model_from_hf_config(ULTRA)
    assert summary(m)["total_params"] < 600e9
    st = ep_step(m, load_hardware("gb200"), 32, 64, 4096, Budget(), Precision(), Assumptions())
    assert bool(st.fits_memory) and float(st.tokens_per_s_per_gpu) > 200


def test_catalogue_models_are_unchanged_by_the_layers():
    """A catalogue model (one attention) reads as its one kind of layer, with the cache it always had."""
    m = load_model("deepseek-v3", profile="reference")
    doc = summary(m)
    assert doc["layers"]["mixer"] == {"attention": 61} and doc["state_bytes_per_request"] == 0
    assert doc["kv_bytes_per_token"] == 61 * 576 * 2
    assert float(kv_cache_bytes(m, Precision(), 1000)) == 61 * 576 * 2 * 1000


def test_unknown_layout_field_exits_2_naming_it(tmp_path, capsys):
    cfg = json.loads(QWEN35.read_text())
    cfg["text_config"]["attention_layer_pattern"] = ["global", "local"] * 30
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert main(["model", "--model", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'attention_layer_pattern'" in err
    with pytest.raises(AfdError, match="'num_kv_shared_layers'"):
        cfg["text_config"].pop("attention_layer_pattern")
        cfg["text_config"]["num_kv_shared_layers"] = 10
        path.write_text(json.dumps(cfg))
        model_from_hf_config(path)


def test_names_come_from_the_config_or_its_file_never_a_shared_folder(tmp_path):
    assert model_from_hf_config(QWEN35).name == "Qwen/Qwen3.5-397B-A17B"     # the file's name, org--model_config
    cfg = json.loads(QWEN35.read_text())
    shared = tmp_path / "hfconfigs"
    shared.mkdir()
    (shared / "config.json").write_text(json.dumps(cfg))
    name = model_from_hf_config(shared / "config.json").name
    assert "hfconfigs" not in name and name.startswith("qwen3_5_moe_text L60 H4096 E512 K10")
    own = tmp_path / "Qwen3.5-397B-A17B"
    own.mkdir()
    (own / "config.json").write_text(json.dumps(cfg))
    (own / "tokenizer_config.json").write_text("{}")
    assert model_from_hf_config(own / "config.json").name == "Qwen3.5-397B-A17B"
    cache = tmp_path / "models--Qwen--Qwen3.5-397B-A17B" / "snapshots" / "abc123"
    cache.mkdir(parents=True)
    (cache / "config.json").write_text(json.dumps(cfg))
    assert model_from_hf_config(cache / "config.json").name == "Qwen/Qwen3.5-397B-A17B"
    (shared / "config.json").write_text(json.dumps({**cfg, "_name_or_path": "my-org/my-qwen"}))
    assert model_from_hf_config(shared / "config.json").name == "my-org/my-qwen"


def test_afd_model_prints_what_it_understood(capsys):
    assert main(["model", "--model", str(SUPER), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4" and doc["weights"] == "nvfp4"
    assert {"hybrid_override_pattern", "mamba_num_heads", "moe_latent_size"} <= set(doc["fields_read"])
    assert main(["model", "--model", "deepseek-v3"]) == 0
    assert "671.0B total" in capsys.readouterr().out
    assert np.isfinite(doc["total_params"])


def test_hybrid_catalogue_entries_read_their_shipped_configs():
    """data/models_hybrid.yaml: each entry is its published config (data/hf_configs), named by the entry;
    not (yet) among the models the book and advise --all iterate over."""
    from afdlib.inputs.catalog import hybrid_model_names, model_names
    cards = {"qwen3.5-397b-a17b": (397e9, 17e9), "nemotron-3-super": (120e9, 12e9), "mimo-v2-flash": (309e9, 15e9),
             "deepseek-v4-flash": (284e9, 13e9)}                      # the cards, as in CARDS above
    assert hybrid_model_names() == sorted(cards) and not set(cards) & set(model_names())
    for slug, (total, active) in cards.items():
        m = load_model(slug)
        doc = summary(m)
        assert doc["slug"] == slug and m.hf_id and all(m.sources.values())
        assert doc["total_params"] == pytest.approx(total, rel=0.10)
        assert doc["active_params"] == pytest.approx(active, rel=0.10)
    assert load_model("nemotron-3-super").weights_dtype == "fp8"     # its hf_quant_config.json: FP8


def test_hfu_analysis_counts_the_ffn_blocks_as_stages():
    """Eq. 1's N_layers for a Nemotron-H layout is its 40 FFN blocks, not its 88 blocks; stacked with
    catalogue models, each keeps its own latent width and stage count."""
    from afdlib.analysis.hfu import hfu_bound, hfu_grid, stage_layers
    from afdlib.inputs.catalog import load_hardware
    nemotron, v3 = model_from_hf_config(SUPER), load_model("deepseek-v3")
    assert stage_layers(nemotron) == 40 and stage_layers(v3) == 61
    hw = load_hardware("gb200")
    grid = hfu_grid([v3, nemotron], [hw], [1, 2, 4])
    for i, m in enumerate((v3, nemotron)):
        alone = hfu_bound(np.array([1.0, 2.0, 4.0]), m, hw)
        np.testing.assert_allclose(grid["hfu"][0, i], alone["hfu"], rtol=1e-12)
        np.testing.assert_allclose(grid["t_b"][0, i], np.broadcast_to(alone["t_b"], (3,)), rtol=1e-12)


def _published_configs():
    """Every config.json aiconfigurator ships (where its package is installed: the optional extra), or
    those in $AFD_HF_CONFIGS."""
    import importlib.util
    import os
    folder = os.environ.get("AFD_HF_CONFIGS")
    if not folder:
        spec = importlib.util.find_spec("aiconfigurator_core")
        if spec is None or not spec.submodule_search_locations:
            return []
        folder = Path(list(spec.submodule_search_locations)[0]) / "model_configs"
    return sorted(p for p in Path(folder).glob("*config.json") if not p.name.endswith("hf_quant_config.json"))


@pytest.mark.skipif(not _published_configs(), reason="no published configs here (aiconfigurator not installed)")
def test_every_published_config_reads_or_is_refused_in_one_line():
    """Configs this project does not ship: each reads (a MoE model, its parameters finite) or is refused in
    one line (dense models); none crashes."""
    read = 0
    for path in _published_configs():
        try:
            doc = summary(model_from_hf_config(path))
        except AfdError as e:
            assert "\n" not in str(e)
            continue
        read += 1
        assert 0 < doc["active_params"] < doc["total_params"] and doc["kv_bytes_per_token"] >= 0, path.name
    assert read > 0


QWEN3_NEXT = {"model_type": "qwen3_next", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 16,
              "num_key_value_heads": 2, "head_dim": 256, "intermediate_size": 5120, "moe_intermediate_size": 512,
              "shared_expert_intermediate_size": 512, "num_experts": 512, "num_experts_per_tok": 10,
              "vocab_size": 151936, "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
              "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
              "linear_value_head_dim": 128, "decoder_sparse_step": 1, "mlp_only_layers": []}


def test_qwen3_next_interval_places_its_linear_layers(tmp_path):
    """Qwen3-Next's published config gives no layer_types, only full_attention_interval (its code: layer
    i is full attention when (i + 1) % 4 == 0). 48 layers -> 12 full + 36 linear; BF16 KV per token:
    12 layers x 2 KV heads x 256 x (K + V) x 2 B = 24,576 B (all 48 read as full: 98,304)."""
    p = tmp_path / "config.json"
    p.write_text(json.dumps(QWEN3_NEXT))
    doc = summary(model_from_hf_config(p))
    assert doc["kv_bytes_per_token"] == 12 * 2 * 256 * 2 * 2
    assert doc["layers"]["mixer"] == {"attention": 12, "linear": 36}


@pytest.mark.parametrize("drop, add, field", [
    (("full_attention_interval",), {}, "linear_conv_kernel_dim"),            # linear fields, no layout
    (("full_attention_interval",) + tuple(k for k in QWEN3_NEXT if k.startswith("linear_")),
     {"attn_layer_period": 8, "attn_layer_offset": 4}, "attn_layer_period"),  # Jamba's interleave
    (("full_attention_interval",) + tuple(k for k in QWEN3_NEXT if k.startswith("linear_")),
     {"attn_type_list": [0, 1] * 24}, "attn_type_list"),                      # MiniMax-01's lightning layers
])
def test_a_hybrid_whose_layers_are_not_placed_is_refused(tmp_path, capsys, drop, add, field):
    """Read as all full attention, these would be modelled wrongly without a word: one line, exit 2."""
    cfg = {**{k: v for k, v in QWEN3_NEXT.items() if k not in drop}, **add}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    assert main(["model", "--model", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"'{field}'" in err, err


def test_an_attn_type_list_of_full_attention_only_is_read(tmp_path, capsys):
    """MiniMax-M2's configs list attn_type_list as 1 (softmax attention) for each of their layers: read
    as all full attention, the same model as without the field; a 0 (lightning attention) anywhere,
    or a list of the wrong length, is still refused naming the field."""
    base = {k: v for k, v in QWEN3_NEXT.items() if k != "full_attention_interval" and not k.startswith("linear_")}
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(base))
    full = tmp_path / "full.json"
    full.write_text(json.dumps({**base, "attn_type_list": [1] * base["num_hidden_layers"]}))
    a, b = summary(model_from_hf_config(plain)), summary(model_from_hf_config(full))
    assert a == {**b, **{k: a[k] for k in a if k in ("slug", "name", "source", "fields_ignored", "fields_read")}}
    assert "attn_type_list" in b["fields_read"]
    assert b["layers"]["mixer"] == {"attention": base["num_hidden_layers"]}
    for bad in ([1] * (base["num_hidden_layers"] - 1) + [0], [1] * (base["num_hidden_layers"] - 1)):
        p = tmp_path / "bad.json"
        p.write_text(json.dumps({**base, "attn_type_list": bad}))
        assert main(["model", "--model", str(p)]) == 2
        assert "'attn_type_list'" in capsys.readouterr().err


def test_a_tied_model_holds_one_embedding_matrix():
    """Gemma-4 ties its embedding and LM head (tie_word_embeddings): the dense side's weights hold
    vocab x hidden once (BF16: 2 B each), not an embedding plus an LM head (2 + 2 B)."""
    from afdlib.decode.weights import dense_side_bytes as _weights_dense_side
    m = model_from_hf_config(GEMMA)
    assert m.tied_embeddings
    untied = replace(m, tied_embeddings=False)
    saved = _weights_dense_side(untied, Precision()) - _weights_dense_side(m, Precision())
    assert saved == pytest.approx(m.vocab_size * m.hidden_size * 2.0)


def test_active_parameters_leave_out_the_input_embedding():
    """DeepSeek-V3: 671.0B total and 36.6B active including the 0.9B LM head (tenstorrent/tt-metal
    README_WEIGHTS, shared/reference/hardware-models-routing.md), so without its 0.9B input embedding
    (129,280 x 7,168 = 0.927B, a row lookup per token). Tied, the one matrix is the head: active the
    same, total one matrix less."""
    from afdlib.inputs.catalog import load_model
    from afdlib.inputs.layers import parameter_counts
    m = load_model("deepseek-v3", profile="reference")
    total, active = parameter_counts(m)
    assert total / 1e9 == pytest.approx(671.0, abs=0.1) and active / 1e9 == pytest.approx(36.6, abs=0.1)
    tied_total, tied_active = parameter_counts(replace(m, tied_embeddings=True))
    assert tied_active == pytest.approx(active) and total - tied_total == pytest.approx(129280 * 7168)
