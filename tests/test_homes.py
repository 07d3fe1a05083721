"""The one home of each formula written once (issue 17): hand-derived values and precision properties.

Expert weights: ``expert_weight_bytes`` (3 H M bytes per expert at FP8); bytes a token puts on the wire:
``token_wire_bytes`` (H (b_dispatch + b_combine)); everything else that needs them calls these.
"""
import numpy as np
import pytest

from afdlib.analysis.hfu import (bandwidth_for_full_hfu, comm_ceiling, dead_zone_floor, flops_per_wire_byte, hfu_sweep,
                                 intermediate_size_for_full_hfu, min_slo_for_weight_read)
from afdlib.analysis.imbalance_cost import like_with_like
from afdlib.analysis.intensity import (arithmetic_intensity, forwarding_fan, intensity_sweep, normalised_intensity,
                                       tokens_deliverable, tokens_per_rank)
from afdlib.evaluator.alltoall import afd_transfer_work, ep_all_to_all_work, token_wire_bytes
from afdlib.evaluator.dense import dense_ffn_work, ffn_params, shared_experts_work
from afdlib.evaluator.grouped_gemm import (expert_weight_bytes, expert_work, grouped_gemm_hfu, ridge_tokens_per_expert,
                                           routed_experts_work)
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import DTYPE_BYTES, Budget, Precision
from afdlib.routing.balance import effective_balancedness

H, M = 7168, 2048                       # DeepSeek-V3
PER_EXPERT_FP8 = 44_040_192             # 3 x 7168 x 2048 bytes
PER_TOKEN_WIRE = 21_504                 # 7168 x (1 FP8 dispatch + 2 BF16 combine) bytes
BF16_WIRE = Precision(dispatch="bf16", combine="bf16")   # 4 bytes per hidden element
N = np.arange(1, 65)


def test_expert_weight_bytes_by_hand():
    assert ffn_params(H, M) == PER_EXPERT_FP8 == 3 * 7168 * 2048
    assert expert_weight_bytes(1, H, M) == PER_EXPERT_FP8
    assert expert_weight_bytes(32, H, M) == 1_409_286_144                     # 32 x 44,040,192
    assert expert_weight_bytes(1, H, M, Precision(weights="bf16")) == 88_080_384
    assert expert_weight_bytes(1, H, M, Precision(weights="fp4")) == 24_772_608           # NVFP4: x 0.5625
    # arrays broadcast; a fractional count (expected active experts) scales linearly
    assert expert_weight_bytes(np.array([0.5, 2.0]), H, M) == pytest.approx([22_020_096, 88_080_384])


@pytest.mark.parametrize("dtype", sorted(DTYPE_BYTES))
def test_expert_weight_bytes_scale_with_the_weights_bytes(dtype):
    p = Precision(weights=dtype)
    assert expert_weight_bytes(3, H, M, p) == pytest.approx(3 * PER_EXPERT_FP8 * DTYPE_BYTES[dtype])
    # the wire's or the cache's data types do not enter
    assert expert_weight_bytes(3, H, M, Precision(weights=dtype, dispatch="bf16", kv_cache="fp8")) == \
        expert_weight_bytes(3, H, M, p)


def test_callers_of_expert_weight_bytes():
    m = load_model("deepseek-v3")
    # one expert's read is paid in full by a busy expert, not at all by an idle one
    w = expert_work(np.array([0.0, 5.0]), H, M)
    assert np.asarray(w.hbm_bytes).tolist() == [0.0, PER_EXPERT_FP8]
    # routed experts at decode: 1 pair on 1 local expert reads it with probability 1 - 1/e
    # (0.63212 x 44,040,192) and moves the pair's activations in and out (21,504)
    work = routed_experts_work(m, Precision(), 1.0, 1.0)
    assert float(work.hbm_bytes) == pytest.approx((1 - np.exp(-1)) * PER_EXPERT_FP8 + PER_TOKEN_WIRE)
    # the shared expert (M = 2048) and a dense layer (I = 18432: 3 x 7168 x 18432 = 396,361,728)
    assert float(shared_experts_work(m, Precision(), 1.0).hbm_bytes) == PER_EXPERT_FP8
    assert float(dense_ffn_work(m, Precision(), 1.0).hbm_bytes) == 396_361_728
    # FFN rank at N_F = 1 on H800: 32 experts x 58 layers x 44,040,192 bytes = 81.7 GB; BF16 weights:
    # twice the bytes, so twice the read time in the minimum SLO (after the fixed gap)
    hw = load_hardware("h800")
    res, _ = hfu_sweep(m, hw, N)
    assert res["weight_bytes_per_gpu"][0] == 32 * 58 * PER_EXPERT_FP8
    bf16, _ = hfu_sweep(m, hw, N, precision=Precision(weights="bf16"))
    assert np.array_equal(bf16["weight_bytes_per_gpu"], 2 * res["weight_bytes_per_gpu"])
    b = Budget()
    slo, slo_bf16 = (float(min_slo_for_weight_read(m, hw, 1, b, p)) for p in (Precision(), Precision(weights="bf16")))
    assert slo_bf16 * b.l_accept - b.t_gap_s == pytest.approx(2 * (slo * b.l_accept - b.t_gap_s))
    # the ridge: FLOPS b_w / (2 BW), 1979e12 / 6.7e12 = 295.4 tokens per expert at FP8, twice at BF16
    assert ridge_tokens_per_expert(1979e12, 3.35e12, Precision(weights="bf16")) == pytest.approx(2 * 295.373, rel=1e-5)


def test_token_wire_bytes_by_hand():
    assert token_wire_bytes(1, H) == PER_TOKEN_WIRE
    assert token_wire_bytes(1, H, BF16_WIRE) == 28_672                          # 7168 x 4
    assert token_wire_bytes(1, H, Precision(dispatch="fp8", combine="fp8")) == 14_336
    assert token_wire_bytes(np.array([2.0, 0.5]), H) == pytest.approx([43_008, 10_752])


@pytest.mark.parametrize("dispatch", ["fp8", "bf16", "fp32"])
@pytest.mark.parametrize("combine", ["fp8", "bf16"])
def test_bytes_per_token_scale_with_the_precision(dispatch, combine):
    p = Precision(dispatch=dispatch, combine=combine)
    scale = (DTYPE_BYTES[dispatch] + DTYPE_BYTES[combine]) / 3.0          # against the paper's 3 bytes
    assert token_wire_bytes(5, H, p) == pytest.approx(5 * PER_TOKEN_WIRE * scale)
    # every user follows: tokens a link delivers (inversely), all-to-all bytes (linearly)
    t_b = 0.070 / 183
    assert tokens_deliverable(50e9, t_b, H, p) == pytest.approx(tokens_deliverable(50e9, t_b, H) / scale)
    assert tokens_per_rank(N, 8, 50e9, 160e9, t_b, H, p) == pytest.approx(tokens_per_rank(N, 8, 50e9, 160e9, t_b, H)
                                                                          / scale)
    m, hw = load_model("deepseek-v3"), load_hardware("h800")
    base, other = (ep_all_to_all_work(m, q, hw, 128.0, 64) for q in (Precision(), p))
    assert float(other.scale_out_bytes) == pytest.approx(scale * float(base.scale_out_bytes))
    assert float(other.scale_up_bytes) == pytest.approx(scale * float(base.scale_up_bytes))
    (a0, f0), (a1, f1) = (afd_transfer_work(m, q, hw, hw, 64.0, 2, 2, False) for q in (Precision(), p))
    assert float(a1.scale_out_bytes) == pytest.approx(scale * float(a0.scale_out_bytes))
    assert float(f1.scale_up_bytes) == pytest.approx(scale * float(f0.scale_up_bytes))
    # the HFU ceiling: FLOPs per wire byte 6 M / w (2 M at the paper's 3 bytes)
    assert flops_per_wire_byte(M, p) == pytest.approx(2 * M / scale)
    assert comm_ceiling(N, 8, 50e9, 160e9, M, 1979e12, precision=p) == pytest.approx(
        comm_ceiling(N, 8, 50e9, 160e9, M, 1979e12) / scale)
    assert dead_zone_floor(50e9, M, 1979e12, precision=p) == pytest.approx(dead_zone_floor(50e9, M, 1979e12) / scale)
    assert intermediate_size_for_full_hfu(50e9, 1979e12, p) == pytest.approx(scale * 1979e12 / (2 * 50e9))
    assert bandwidth_for_full_hfu(M, 1979e12, p) == pytest.approx(scale * 1979e12 / (2 * M))


def test_hfu_bound_follows_the_wire():
    # DeepSeek-V3 on H800, comm-bound at every N_F: 4 bytes a hidden element on the wire in place of
    # 3 deliver 3/4 of the tokens, so 3/4 of the FLOPs and of the bound (0.3311 -> 0.2483 at N_F = 2)
    m, hw = load_model("deepseek-v3"), load_hardware("h800")
    base, s0 = hfu_sweep(m, hw, N)
    wide, s1 = hfu_sweep(m, hw, N, precision=BF16_WIRE)
    assert set(base["limit"][1:]) <= {"comm-scale-up", "comm-scale-out"}
    assert wide["tokens_per_rank"] == pytest.approx(0.75 * base["tokens_per_rank"])
    assert wide["hfu"] == pytest.approx(0.75 * base["hfu"])
    assert s1.max_hfu == pytest.approx(0.2483, abs=1e-4) and s1.dead_zone_floor == pytest.approx(0.75 * s0.dead_zone_floor)


def test_intensity_follows_the_precision_paper_by_default():
    m, hw = load_model("deepseek-v3"), load_hardware("h800")
    paper = intensity_sweep(m, hw, N)
    # Figure 2's numbers: 2 x min(max(1, 8/N_F), 3.2) / G, e.g. N_F = 1: 2 x 3.2 / 32 = 0.2
    assert paper["intensity"][0] == pytest.approx(0.2) and paper["intensity"][7] == pytest.approx(2 / 4)
    for key in ("intensity", "intensity_continuous"):
        # the wire's bytes cancel in the normalised form (B_out = 1 token) ...
        assert np.array_equal(intensity_sweep(m, hw, N, BF16_WIRE)[key], paper[key])
        # ... the weights' do not: FLOP per weight byte halves at BF16
        assert intensity_sweep(m, hw, N, Precision(weights="bf16"))[key] == pytest.approx(paper[key] / 2)
    assert arithmetic_intensity(100.0, 4) == 50.0
    assert normalised_intensity(2, 8, 256, 3.2, 8) == pytest.approx(2 * 3.2 / 16)


def test_forwarding_fan():
    # max(1, K / N_F): K = 8 copies over 2 nodes -> 4 per node; 16 nodes -> 1
    assert forwarding_fan(np.array([1, 2, 8, 16]), 8).tolist() == [8.0, 4.0, 1.0, 1.0]


def test_grouped_gemm_hfu_follows_the_weights():
    # below the ridge the HFU is n / ridge; BF16 weights double the ridge, halve the HFU
    hw = load_hardware("h800")
    n = np.full((1, 8), 100.0)
    assert grouped_gemm_hfu(n, hw, Precision(weights="bf16")) == pytest.approx(grouped_gemm_hfu(n, hw) / 2)


def test_effective_balancedness_over_an_axis():
    s = np.array([[1.0, 0.5], [0.5, 0.5]])
    # harmonic means 1 / mean(1, 2) = 2/3 and 0.5
    assert effective_balancedness(s, axis=1) == pytest.approx([2 / 3, 0.5])
    assert effective_balancedness(s[0]) == pytest.approx(2 / 3) and isinstance(effective_balancedness(s[0]), float)
    counts = np.random.default_rng(0).integers(1, 100, size=(3, 16)).astype(float)
    c = like_with_like(counts, 2, 1, 1, 2, [4], 0, 1.0, 64, trials=2)
    assert c.sigma == pytest.approx(1.0 / np.mean(1.0 / c.layer_sigma, axis=2))
