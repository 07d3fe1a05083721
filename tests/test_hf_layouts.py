"""Per-layer layouts of Hugging Face config.json files: read as the families' own code reads them,
refused (one line naming the field) where unknown, malformed or contradictory."""
import json

import pytest

from afdlib.errors import AfdError
from afdlib.inputs.hf_config import model_from_hf_config

BASE = {"hidden_size": 64, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
        "intermediate_size": 128, "num_attention_heads": 4}
# the Mamba-2 blocks' shape, given where a layout field could place Mamba blocks (a config with Mamba
# fields and no such layout is refused: tests/test_mixers.py)
MAMBA = {"mamba_num_heads": 4, "mamba_head_dim": 16, "ssm_state_size": 16, "n_groups": 1}
BLOCK_LAYOUTS = ("hybrid_override_pattern", "layers_block_type", "layer_types")

# M Mamba, E MoE, * attention, - MLP:   M E M * E M E - M E M * E - M E   (16 layers)
# E at 1, 4, 6, 9, 12, 15 -> 6 MoE;  - at 7, 13 -> 2 dense;  M x 6 and * x 2 have no FFN
PATTERN = "MEM*EME-MEM*E-ME"


def _read(tmp_path, **fields):
    p = tmp_path / "config.json"
    mamba = MAMBA if any(isinstance(fields.get(k), (str, list)) and ("M" in fields[k] or "mamba" in fields[k])
                         for k in BLOCK_LAYOUTS) else {}
    p.write_text(json.dumps({**BASE, **mamba, **fields}))
    return model_from_hf_config(p)


def _layers(m):
    return m.num_layers, m.moe_layers, m.dense_layers


def _refused(tmp_path, *names, **fields):
    with pytest.raises(AfdError) as e:
        _read(tmp_path, **fields)
    message = str(e.value)
    assert "\n" not in message and "config.json" in message, message
    for name in names:
        assert f"'{name}'" in message, message
    return message


def test_nemotron_pattern_counts_moe_and_dense_layers(tmp_path):
    m = _read(tmp_path, num_hidden_layers=16, hybrid_override_pattern=PATTERN)
    assert _layers(m) == (16, 6, 2) and m.dense_intermediate_size == 128
    # Nemotron-3 Nano's shape: 52 layers, 23 of them MoE (the old reader said 52)
    nano = _read(tmp_path, num_hidden_layers=52, hybrid_override_pattern="ME" * 23 + "*" * 6)
    assert _layers(nano) == (52, 23, 0)


def test_pattern_alone_gives_the_layer_count(tmp_path):
    assert _layers(_read(tmp_path, hybrid_override_pattern=PATTERN)) == (16, 6, 2)


def test_block_list_form_of_the_pattern(tmp_path):
    names = {"M": "mamba", "E": "moe", "*": "attention", "-": "mlp"}
    blocks = [names[c] for c in PATTERN]
    assert _layers(_read(tmp_path, layers_block_type=blocks)) == (16, 6, 2)
    # Nemotron-H saved by recent transformers: its layer_types holds these blocks
    assert _layers(_read(tmp_path, layer_types=blocks, num_hidden_layers=16)) == (16, 6, 2)
    _refused(tmp_path, "hybrid_override_pattern", "layers_block_type",
             hybrid_override_pattern=PATTERN, layers_block_type=blocks[::-1])
    _refused(tmp_path, "layers_block_type", layers_block_type=["mamba", "moe", "xyz"])


def test_pattern_contradicting_num_hidden_layers_is_refused(tmp_path):
    _refused(tmp_path, "num_hidden_layers", "hybrid_override_pattern", num_hidden_layers=52,
             hybrid_override_pattern=PATTERN)


@pytest.mark.parametrize("pattern", ["MEX*", "ME E", "", 5, None, ["M", "E"]])
def test_unknown_or_malformed_pattern_is_refused(tmp_path, pattern):
    _refused(tmp_path, "hybrid_override_pattern", hybrid_override_pattern=pattern)


def test_moe_layer_freq_list(tmp_path):  # MiMo-V2-Flash: the first layer dense
    assert _layers(_read(tmp_path, num_hidden_layers=48, moe_layer_freq=[0] + [1] * 47)) == (48, 47, 1)


def test_moe_layer_freq_list_of_wrong_length_or_entries_is_refused(tmp_path):
    assert "47 entries for 48 layers" in _refused(tmp_path, "moe_layer_freq", num_hidden_layers=48,
                                                  moe_layer_freq=[1] * 47)
    _refused(tmp_path, "moe_layer_freq", num_hidden_layers=3, moe_layer_freq=[0, 1, 2])
    _refused(tmp_path, "moe_layer_freq", num_hidden_layers=3, moe_layer_freq=[0, 1, "1"])


def test_moe_layer_freq_integer_with_first_k_dense_replace(tmp_path):
    # DeepSeek-V2 rule: MoE where i >= first_k and i % freq == 0: layers 2, 4, 6, 8 of 10
    assert _layers(_read(tmp_path, num_hidden_layers=10, first_k_dense_replace=1, moe_layer_freq=2)) == (10, 4, 6)
    # DeepSeek-V3 as published: freq 1, first 3 dense
    assert _layers(_read(tmp_path, num_hidden_layers=61, first_k_dense_replace=3, moe_layer_freq=1)) == (61, 58, 3)


def test_qwen_mlp_only_layers_and_sparse_step(tmp_path):
    assert _layers(_read(tmp_path, num_hidden_layers=10, mlp_only_layers=[0, 5])) == (10, 8, 2)
    # MoE where (i + 1) % 2 == 0: layers 1, 3, 5, 7, 9
    assert _layers(_read(tmp_path, num_hidden_layers=10, decoder_sparse_step=2)) == (10, 5, 5)
    # both (Qwen2-MoE's rule): 3 and 7 remain of 1, 3, 5, 7, 9
    assert _layers(_read(tmp_path, num_hidden_layers=10, decoder_sparse_step=2,
                         mlp_only_layers=[1, 5, 9])) == (10, 2, 8)
    assert _layers(_read(tmp_path, num_hidden_layers=10, mlp_only_layers=None)) == (10, 10, 0)


def test_other_families_rules(tmp_path):
    # ERNIE: MoE from the start index to the end index (-1: the last layer), every interval-th
    assert _layers(_read(tmp_path, num_hidden_layers=54, moe_layer_start_index=3)) == (54, 51, 3)
    assert _layers(_read(tmp_path, num_hidden_layers=10, moe_layer_start_index=1, moe_layer_end_index=-1,
                         moe_layer_interval=1)) == (10, 9, 1)
    assert _layers(_read(tmp_path, num_hidden_layers=10, moe_layer_start_index=1, moe_layer_end_index=7)) == (10, 7, 3)
    # Llama 4: every 2nd layer, or the explicit list that transformers writes beside it
    assert _layers(_read(tmp_path, num_hidden_layers=48, interleave_moe_layer_step=2)) == (48, 24, 24)
    assert _layers(_read(tmp_path, num_hidden_layers=48, interleave_moe_layer_step=2,
                         moe_layers=list(range(1, 48, 2)))) == (48, 24, 24)
    # Step-3: comma-separated MoE layer indices; Jamba: i % period == offset
    assert _layers(_read(tmp_path, num_hidden_layers=8, moe_layers_enum="2,3,4,5,6")) == (8, 5, 3)
    assert _layers(_read(tmp_path, num_hidden_layers=8, expert_layer_period=2, expert_layer_offset=1)) == (8, 4, 4)
    # mlp_layer_types (transformers' own per-layer list); MTP layers at the end of a list are dropped
    assert _layers(_read(tmp_path, num_hidden_layers=4, num_nextn_predict_layers=1,
                         mlp_layer_types=["dense", "sparse", "sparse", "sparse", "sparse"])) == (4, 3, 1)


@pytest.mark.parametrize("field, value", [
    ("first_k_dense_replace", "three"), ("first_k_dense_replace", None), ("first_k_dense_replace", -1),
    ("first_k_dense_replace", 1.5), ("decoder_sparse_step", "x"), ("decoder_sparse_step", 0),
    ("decoder_sparse_step", -2), ("decoder_sparse_step", None), ("interleave_moe_layer_step", 0),
    ("moe_layer_freq", 0), ("moe_layer_freq", "every"), ("moe_layer_start_index", "3"),
    ("moe_layer_end_index", -5), ("mlp_only_layers", 5), ("mlp_only_layers", [10]), ("mlp_only_layers", [-1]),
    ("mlp_only_layers", ["a"]), ("mlp_only_layers", [True]), ("moe_layers", [0, 99]), ("moe_layers_enum", "1,x"),
    ("mlp_layer_types", ["dense"] * 9 + ["sparse-ish"]), ("layer_types", ["full_attention"] * 9),
    ("layer_types", "sliding_attention"), ("expert_layer_offset", 3), ("num_hidden_layers", 0),
    ("num_hidden_layers", 10**12), ("hidden_size", float("nan")), ("hidden_size", float("inf")),
])
def test_malformed_layout_fields_are_refused_naming_them(tmp_path, field, value):
    _refused(tmp_path, field, **{"num_hidden_layers": 10, field: value})


@pytest.mark.parametrize("fields, names", [
    ({"hybrid_override_pattern": PATTERN, "first_k_dense_replace": 2},
     ("hybrid_override_pattern", "first_k_dense_replace")),
    ({"num_hidden_layers": 48, "moe_layer_freq": [0] + [1] * 47, "first_k_dense_replace": 3},
     ("moe_layer_freq", "first_k_dense_replace")),
    ({"num_hidden_layers": 4, "moe_layer_freq": [0, 1, 1, 1], "mlp_layer_types": ["dense", "dense", "sparse", "sparse"]},
     ("moe_layer_freq", "mlp_layer_types")),
    ({"num_hidden_layers": 48, "interleave_moe_layer_step": 2, "moe_layers": list(range(48))},
     ("moe_layers", "interleave_moe_layer_step")),
    ({"num_hidden_layers": 10, "first_k_dense_replace": 10}, ("first_k_dense_replace",)),
])
def test_contradictions_and_empty_layouts_are_refused_naming_the_fields(tmp_path, fields, names):
    _refused(tmp_path, *names, **fields)


def test_consistent_fields_together_are_accepted(tmp_path):
    # rules that rule out none of the listed MoE layers agree with the list
    m = _read(tmp_path, num_hidden_layers=48, moe_layer_freq=[0] + [1] * 47, first_k_dense_replace=1,
              decoder_sparse_step=1, mlp_only_layers=[])
    assert _layers(m) == (48, 47, 1)
    m = _read(tmp_path, hybrid_override_pattern=PATTERN, first_k_dense_replace=0, moe_layer_freq=1)
    assert _layers(m) == (16, 6, 2)


def test_layer_types_stay_attention_only(tmp_path):
    m = _read(tmp_path, num_hidden_layers=4, num_attention_heads=4, sliding_window=8,
              layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"])
    assert _layers(m) == (4, 4, 0) and (m.attention.local_window, m.attention.local_layers) == (8, 2)
    # linear attention needs its heads, and beside it only full attention is handled
    _refused(tmp_path, "linear_num_value_heads", num_hidden_layers=2, layer_types=["linear_attention", "full_attention"])
    _refused(tmp_path, "layer_types", num_hidden_layers=2, linear_num_value_heads=2, linear_num_key_heads=2,
             linear_value_head_dim=8, linear_key_head_dim=8, layer_types=["linear_attention", "sliding_attention"])
    # with the MTP layer at its end (Step-3.7 writes them so): the MTP entry is not counted
    m = _read(tmp_path, num_hidden_layers=2, num_attention_heads=4, sliding_window=8, num_nextn_predict_layers=1,
              layer_types=["sliding_attention", "full_attention", "sliding_attention"])
    assert _layers(m) == (2, 2, 0) and m.attention.local_layers == 1
