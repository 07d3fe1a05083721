"""Budget, roofline and intensity against the paper's check values (NOTES.md sections 2-3)."""
import numpy as np
import pytest

from afdlib.analysis.budget import (fits_budget, hfu, is_ideal, no_attention_bubble, no_ffn_bubble, ofu, stage_budget, temporal_sparsity)
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.errors import AfdError
from afdlib.analysis.intensity import (effective_bandwidth, intensity_sweep, local_experts, normalised_intensity, regime, regime_borders, regime_spans, tokens_per_rank)
from afdlib.evaluator.roofline import attainable_flops, binding_bound, ridge_point

K, E, R, G_NODE = 8, 256, 3.2, 8  # DeepSeek-V3 on H800


def test_stage_budget_eq1():
    # (50 ms x 1.7 - 15 ms) / (61 layers x 3) = 70 / 183 ms = 0.38251 ms
    assert stage_budget(0.050, 61) == pytest.approx(0.070 / 183)
    # no MTP, no gap: 50 ms / 183
    assert stage_budget(0.050, 61, l_accept=1, t_gap_s=0) == pytest.approx(0.050 / 183)
    # vectorised over SLOs
    assert stage_budget(np.array([0.05, 0.1]), 61).shape == (2,)
    with pytest.raises(AfdError, match="no time left"):
        stage_budget(0.005, 61)
    with pytest.raises(AfdError):
        stage_budget(-1, 61)


def test_bubble_conditions_eqs_2_to_5():
    assert fits_budget(1, 1, 0.5, 1) and not fits_budget(1, 1.2, 0.5, 1)
    # 2 t_a >= t_f + t_c: 2 x 1 >= 1 + 0.5
    assert no_attention_bubble(1, 1, 0.5) and not no_attention_bubble(0.5, 1, 0.5)
    assert no_ffn_bubble(1, 1, 0.5) and not no_ffn_bubble(1, 0.5, 0.8)
    assert is_ideal(1, 1, 0.7, 1) and not is_ideal(1, 1, 1.2, 1) and not is_ideal(0.9, 1, 0.5, 1)


def test_metrics_hfu_is_ofu_times_temporal_sparsity():
    flops, peak, t_g, t_b = 3e12, 1e15, 4e-3, 1e-2
    assert hfu(flops, peak, t_b) == pytest.approx(ofu(flops, peak, t_g) * temporal_sparsity(t_g, t_b))
    assert hfu(flops, peak, t_b) == pytest.approx(0.3)  # 3e12 / (1e15 x 1e-2)


def test_roofline_with_communication_ceiling():
    # H800 FP8 ridge: 1979e12 / 3.35e12 = 590.7 FLOP/byte (StepFun prints 591)
    assert ridge_point(1979e12, 3.35e12) == pytest.approx(590.7, abs=0.1)
    peak, hbm, net = 1000.0, 10.0, 1.0
    assert attainable_flops(peak, 200, hbm) == 1000 and binding_bound(peak, 200, hbm) == "compute"
    assert attainable_flops(peak, 50, hbm) == 500 and binding_bound(peak, 50, hbm) == "memory"
    assert attainable_flops(peak, 200, hbm, 300, net) == 300
    assert binding_bound(peak, 200, hbm, 300, net) == "communication"
    i = np.linspace(1, 500, 50)
    assert np.all(np.diff(attainable_flops(peak, i, hbm, i, net)) >= 0)  # monotone in intensity


# NOTES.md section 3: normalised intensity, DeepSeek-V3 on H800 (discrete, continuous).
# N_F = 5 is ours, by hand: B_rank = 8/5 = 1.6, G = ceil(256/40) = 7 -> 3.2/7 = 0.457; continuous G = 6.4 -> 0.5
CHECKS = {1: (0.20, 0.20), 2: (0.40, 0.40), 3: (0.485, 0.50), 4: (0.50, 0.50), 5: (0.457, 0.50), 8: (0.50, 0.50),
          12: (0.667, 0.75), 16: (1.0, 1.0), 24: (1.0, 1.5), 32: (2.0, 2.0), 64: (2.0, 2.0)}


@pytest.mark.parametrize("n_ffn", sorted(CHECKS))
def test_intensity_check_values(n_ffn):
    discrete, continuous = CHECKS[n_ffn]
    assert normalised_intensity(n_ffn, K, E, R, G_NODE) == pytest.approx(discrete, abs=5e-4)
    assert normalised_intensity(n_ffn, K, E, R, G_NODE, continuous=True) == pytest.approx(continuous, abs=5e-4)


def test_regime_borders_and_names():
    assert regime_borders(K, E, R, G_NODE) == pytest.approx({"stable": 2.5, "scale-out-bound": 8,
                                                             "max-intensity": 32})
    names = regime(np.array([1, 2, 3, 7, 8, 31, 32, 64]), K, E, R, G_NODE)
    assert list(names) == ["scale-up-bound", "scale-up-bound", "stable", "stable", "scale-out-bound",
                           "scale-out-bound", "max-intensity", "max-intensity"]
    spans = regime_spans(64, K, E, R, G_NODE)
    assert [s[2] for s in spans] == ["scale-up-bound", "stable", "scale-out-bound", "max-intensity"]
    assert [s[0] for s in spans] == [1, 2.5, 8, 32] and spans[-1][1] == 64


def test_intensity_from_catalogue_matches_the_normalised_form():
    sweep = intensity_sweep(load_model("deepseek-v3"), load_hardware("h800"), np.arange(1, 65))
    assert sweep["local_experts"][0] == 32 and sweep["local_experts"][2] == 11  # ceil(256 / 24)
    assert sweep["intensity"][11] == pytest.approx(2 / 3)


def test_tokens_per_rank_eq9_in_tokens():
    # H800, t_B = 0.3825 ms, H = 7168: B_out = 50e9 x 3.825e-4 / (3 x 7168) = 889.4 tokens;
    # N_F = 1: fan-out 8 but scale-up caps at 160 GB/s -> 3.2 x 889.4 = 2846 tokens
    t_b = 0.070 / 183
    b_out = 50e9 * t_b / (3 * 7168)
    assert tokens_per_rank(1, 8, 50e9, 160e9, t_b, 7168) == pytest.approx(3.2 * b_out)
    assert tokens_per_rank(16, 8, 50e9, 160e9, t_b, 7168) == pytest.approx(b_out)


def test_properties():
    n = np.arange(1, 129)
    # more scale-out or scale-up bandwidth never lowers the tokens a rank receives
    for k in (1, 3, 8):
        base = effective_bandwidth(n, k, 50, 160)
        assert np.all(effective_bandwidth(n, k, 60, 160) >= base)
        assert np.all(effective_bandwidth(n, k, 50, 200) >= base)
        assert np.all(base <= 160)  # never beyond scale-up
    # dead zone: for N_F >= K the rank receives exactly B_out
    assert np.all(effective_bandwidth(n[n >= 8], 8, 50, 160) == 50)
    # local experts: whole numbers, never below 1, never more than E / g
    g = local_experts(256, n, 8)
    assert np.all(g >= 1) and np.all(g == np.round(g)) and g.max() == 32
    assert np.all(local_experts(256, n, 8, continuous=True) <= g)
