"""The modern-MoE study: the all-full-attention counterfactual, the requests that fit, and the study's
rows (afdlib.studies.modern_study)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from afdlib.studies.modern_study import (all_full_attention, hybrid_study, layer_counts, mixer_bytes_per_step,
                                        requests_that_fit)
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.errors import AfdError
from afdlib.evaluator.attention import kv_cache_bytes, state_bytes_per_request
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.layers import parameter_counts
from afdlib.inputs.specs import Budget, Precision

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)

# BF16 cache bytes per token with every token-mixing layer full attention, by hand from each config.json:
# layers x KV heads x (key + value head dim) x 2 bytes (DeepSeek-V4: one shared key-value head of 512)
FULL_KV_PER_TOKEN = {
    "qwen3.5-397b-a17b": 60 * 2 * (256 + 256) * 2,    # 122,880: 60 layers, 2 KV heads of 256
    "nemotron-3-super": 48 * 2 * (128 + 128) * 2,     # 49,152: its 40 Mamba + 8 attention blocks (40 MoE blocks: none)
    "mimo-v2-flash": 48 * 4 * (192 + 128) * 2,        # 122,880: the full layers' 4 KV heads, K 192, V 128
    "deepseek-v4-flash": 43 * 1 * 512 * 2,            # 44,032: one shared K=V head of 512, no window or compression
}


@pytest.mark.parametrize("slug", sorted(FULL_KV_PER_TOKEN))
def test_all_full_attention_caches_every_layer(slug):
    m = load_model(slug)
    full = all_full_attention(m)
    for ctx in (1, 4096, 131072):
        assert float(kv_cache_bytes(full, Precision(), ctx)) == pytest.approx(FULL_KV_PER_TOKEN[slug] * ctx)
    assert state_bytes_per_request(full) == 0.0
    # the rest of the model is kept: layers, FFN blocks, experts, vocabulary
    for f in ("num_layers", "moe_layers", "dense_layers", "routed_experts", "experts_per_token", "hidden_size",
              "moe_intermediate_size", "moe_latent_size", "ffn_matrices", "vocab_size"):
        assert getattr(full, f) == getattr(m, f), f
    assert full.name == f"{m.name}, all full attention" and full.slug == f"{slug}-all-full"
    assert {g.kind for g in full.mixers} <= {"attention", "none"}
    assert sum(g.layers for g in full.mixers) == m.num_layers


def test_all_full_attention_keeps_mixerless_blocks_and_the_layers_own_heads():
    nemo = all_full_attention(load_model("nemotron-3-super"))
    assert {g.kind: g.layers for g in nemo.mixers} == {"attention": 48, "none": 40}
    qwen, q_full = load_model("qwen3.5-397b-a17b"), all_full_attention(load_model("qwen3.5-397b-a17b"))
    own = next(g for g in qwen.mixers if g.kind == "attention")
    assert q_full.mixers[0].gate_params == own.gate_params > 0       # Qwen3.5's gated attention output
    v4 = all_full_attention(load_model("deepseek-v4-flash")).mixers[0]
    assert v4.shared_kv and v4.o_lora_rank == 1024 and v4.window == v4.compress_ratio == v4.index_topk == 0


def test_all_full_attention_of_a_full_attention_model_changes_nothing():
    m = load_model("deepseek-v3", profile="reference")
    full = all_full_attention(m)
    assert full.attention == m.attention and not full.mixers
    assert float(kv_cache_bytes(full, Precision(), 4096)) == float(kv_cache_bytes(m, Precision(), 4096))
    assert parameter_counts(full) == parameter_counts(m)


def test_all_full_attention_needs_an_attention_layer():
    from dataclasses import replace
    m = load_model("nemotron-3-super")
    with pytest.raises(AfdError, match="no attention layer"):
        all_full_attention(replace(m, mixers=tuple(g for g in m.mixers if g.attention is None)))


def test_requests_that_fit_fill_the_usable_memory():
    hw = load_hardware("h800", profile="datasheet")
    m = load_model("qwen3.5-397b-a17b")
    n = requests_that_fit(m, hw, 4096)
    kv = float(kv_cache_bytes(m, Precision(), 4096))
    from afdlib.decode.step import afd_step
    pool = afd_step(m, hw, hw, 1, 1, n, 4096, BUDGET).memory[0]
    weights = float(np.asarray(pool.weights_bytes).reshape(-1)[0])
    assert weights + n * kv <= 0.9 * hw.hbm_bytes < weights + (n + 1) * kv
    for k, fits in ((n, True), (n + 1, False)):    # the step's own memory check on the attention GPU agrees
        assert (float(afd_step(m, hw, hw, 1, 1, k, 4096, BUDGET).afd.attn_memory_bytes) <= pool.capacity_bytes) == fits
    # a smaller usable share holds fewer
    assert requests_that_fit(m, hw, 4096, assumptions=Assumptions(hbm_usable_fraction=0.5)) < n


def test_more_requests_fit_when_linear_layers_replace_full_ones():
    """Qwen3.5: 45 of 60 layers are linear attention. With the 15 full layers' cache 15 / 60 of the all-full
    one, the requests that fit grow toward 4x as the context grows and the constant state weighs less."""
    hw = load_hardware("h800", profile="datasheet")
    m = load_model("qwen3.5-397b-a17b")
    full = all_full_attention(m)
    growth = [requests_that_fit(m, hw, c) / requests_that_fit(full, hw, c) for c in (4096, 32768, 131072)]
    assert 1 < growth[0] < growth[1] < growth[2] <= 4.0      # whole requests: 210 / 137, 55 / 17, 15 / 4 on H800
    assert growth[2] > 3.5
    # the cache alone (states aside) is a quarter of the all-full one, at any context
    state = state_bytes_per_request(m)
    for c in (4096, 131072):
        assert (float(kv_cache_bytes(m, Precision(), c)) - state) * 4 == pytest.approx(
            float(kv_cache_bytes(full, Precision(), c)))


def test_a_mamba_state_costs_more_per_step_than_a_short_cache():
    """Nemotron-3-Super's 40 Mamba-2 layers keep 128 heads x 64 x 128 FP32 state (4,194,304 bytes each, and
    a BF16 convolution state of (8,192 + 2 x 8 x 128) x 3 x 2 = 61,440 bytes), read and written every step:
    2 x 40 x 4,255,744 = 340.5 MB, against 40 x 1,024 x 4,096 = 167.8 MB of full-attention cache read at
    4,096 tokens; the 8 attention layers read 8 x 1,024 x 4,096 = 33.6 MB in both readings."""
    m = load_model("nemotron-3-super")
    assert mixer_bytes_per_step(m, 4096) == pytest.approx(2 * 40 * 4_255_744 + 8 * 1024 * 4096)
    assert mixer_bytes_per_step(all_full_attention(m), 4096) == pytest.approx(48 * 1024 * 4096)
    assert layer_counts(m) == "40 mamba, 8 attention"


@pytest.fixture(scope="module")
def study():
    hws = [load_hardware(h, profile="datasheet") for h in ("h800", "gb200")]
    return hybrid_study([load_model("mimo-v2-flash")], hws, BUDGET, 4096, verdict_hardware=("h800",))


def test_hybrid_study_rows(study):
    rows = {(r["reading"], r["hardware"]): r for r in study.rows}
    assert len(rows) == 4
    for r in rows.values():
        assert r["ratio"] == pytest.approx(r["afd"] / r["ep"])
        assert r["ep"] > 0 and r["afd"] > 0 and r["fit"] > 0
    # P(AFD better) and its interval only on the device asked for
    assert np.isfinite(rows[("hybrid", "h800")]["p_afd"]) and np.isnan(rows[("hybrid", "gb200")]["p_afd"])
    assert rows[("hybrid", "h800")]["ratio_lo"] < rows[("hybrid", "h800")]["ratio_hi"]
    # MiMo-V2-Flash: 39 of 48 layers keep a 128-token window: at 4,096 tokens the all-full cache is
    # 48 x 2,560 / (9 x 2,560 + 39 x 8 x 320 x 2 x 128 / 4,096) = 4.197x the hybrid's
    assert rows[("all full", "h800")]["kv_mb"] / rows[("hybrid", "h800")]["kv_mb"] == pytest.approx(
        48 * 2560 / (9 * 2560 + 39 * 8 * 320 * 2 * 128 / 4096))
    pairs = {p["hardware"]: p for p in study.pairs()}
    assert pairs["h800"]["shift"] == pytest.approx(rows[("hybrid", "h800")]["ratio"] / rows[("all full", "h800")]["ratio"])
    (s,) = study.summary()
    assert s["devices"] == 2 and s["shift_min"] <= s["shift"] <= s["shift_max"]
    assert s["fit_factor"] > 3      # the windowed cache holds about 4x the requests
    (t,) = study.table("h800")
    assert t["token mixers"] == "39 window, 9 attention" and t["AFD / EP"].count(" / ") == 1
    with pytest.raises(AfdError, match="not in the study"):
        study.table("b200")


def test_the_study_s_ratio_is_afd_advise_s(study):
    """The chapter's cell is what `afd advise --model M --hardware H --weights fp8` says."""
    out = subprocess.run([sys.executable, "-m", "afdlib.cli", "advise", "--model", "mimo-v2-flash", "--hardware",
                          "gb200", "--weights", "fp8", "--json"], capture_output=True, text=True, check=True).stdout
    row = next(r for r in study.rows if (r["reading"], r["hardware"]) == ("hybrid", "gb200"))
    assert json.loads(out)["ratio"] == pytest.approx(row["ratio"], rel=1e-9)


def test_hybrid_catalogue_sources_name_the_shipped_files():
    """Where a hybrid catalogue model's config and weight format come from reads the same on every machine."""
    for slug in FULL_KV_PER_TOKEN:
        m = load_model(slug)
        assert m.sources["config"].startswith("data/hf_configs/")
        assert all("/hf_configs/" not in v or v.startswith(("data/hf_configs/", "declared")) or "data/hf_configs/" in v
                   for v in m.sources.values())
    assert load_model("nemotron-3-super").sources["weights_dtype"] == (
        "data/hf_configs/nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8_hf_quant_config.json (quantization_config)")


def test_fp4_experts_on_hopper_are_refused_in_one_line_naming_weights():
    """DeepSeek-V4-Flash's config declares MXFP4 experts: on H800 (no FP4 tensor cores) `afd advise` exits 2
    with one line that names --weights; `--weights fp8` reads it as the chapter does."""
    base = [sys.executable, "-m", "afdlib.cli", "advise", "--model", "deepseek-v4-flash", "--hardware", "h800", "--json"]
    out = subprocess.run(base, capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1
    assert out.stderr.startswith("afd: error:") and "--weights fp8" in out.stderr
    doc = json.loads(subprocess.run(base + ["--weights", "fp8"], capture_output=True, text=True, check=True).stdout)
    assert doc["weights"] == {"dtype": "fp8", "from": "--weights"} and doc["ratio"] > 0
