"""HFU upper bound and dead zone (NOTES.md section 4) and the EP grouped-GEMM roofline (Fig. 3)."""
import numpy as np
import pytest

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.errors import AfdError
from afdlib.evaluator.grouped_gemm import (ep_tokens_per_expert, grouped_gemm_hfu, ridge_tokens_per_expert, skewed_tokens)
from afdlib.inputs.specs import Budget
from afdlib.analysis.hfu import comm_ceiling, dead_zone_floor, hfu_grid, hfu_sweep
from afdlib.evaluator.grouped_gemm import expert_weight_bytes, grouped_gemm_flops
from afdlib.routing.popularity import zipf_popularity

N = np.arange(1, 65)
MODELS = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]
# Per-panel maxima (percent) printed or implied by the paper, NOTES.md section 4
PANEL_MAXIMA = {
    "h800": [33.1, 33.1, 77.6, 41.4, 58.0, 24.8],
    "b200": [36.4, 36.4, 34.1, 45.5, 63.7, 27.3],
    "gb200": [65.5, 65.5, 100, 81.9, 100, 49.2],
    "gb300": [65.5, 65.5, 100, 81.9, 100, 49.2],
}


def sweep(model, hw, **kw):
    return hfu_sweep(load_model(model), load_hardware(hw), N, **kw)


def test_deepseek_v3_on_h800():
    res, s = sweep("deepseek-v3", "h800")
    # 2 x 160 GB/s x 2048 / 1979 TFLOP/s = 0.3311; floor 2 x 50 x 2048 / 1979e3 = 0.1035
    assert s.max_hfu == pytest.approx(0.331, abs=1e-3) and s.best_n_ffn == 2
    assert s.dead_zone_floor == pytest.approx(0.103, abs=1e-3)
    assert res["limit"][0] == "hbm-capacity" and not res["feasible"][0]  # 58 x 32 x 44 MB = 81.7 GB > 80 GB
    assert res["limit"][1] == "comm-scale-up" and res["limit"][2] == "comm-scale-out"


@pytest.mark.parametrize("hw", sorted(PANEL_MAXIMA))
def test_per_panel_maxima(hw):
    got = [100 * sweep(m, hw)[1].max_hfu for m in MODELS]
    assert got == pytest.approx(PANEL_MAXIMA[hw], abs=0.051)


def test_superpod_has_no_dead_zone_and_glm_is_lower():
    for hw in ("gb200", "gb300"):
        _, dsv3 = sweep("deepseek-v3", hw)
        _, glm = sweep("glm-4.7", hw)
        assert dsv3.max_hfu == pytest.approx(0.655, abs=1e-3) == pytest.approx(dsv3.dead_zone_floor, abs=1e-3)
        assert glm.max_hfu == pytest.approx(0.492, abs=1e-3)


def test_limits_name_what_binds():
    res, _ = sweep("step3", "gb200")  # 2 x 720 x 5120 / 4500e3 = 1.64 > 1: compute bound
    assert set(res["limit"]) == {"compute"} and np.all(res["hfu"] == 1)
    res, _ = sweep("kimi-k2", "h200")  # 48 experts x 44 MB = 2.11 GB per layer / 4.0 TB/s = 0.53 ms > t_B 0.38 ms
    assert res["limit"][0] == "hbm-time" and res["feasible"][1]
    # a smaller usable HBM share makes more points infeasible, never fewer
    tight, _ = sweep("deepseek-v3", "h800", hbm_usable_fraction=0.5)
    assert tight["limit"][1] == "hbm-capacity" and tight["feasible"].sum() < res["feasible"].sum() + 64


def test_flops_and_bytes_by_hand():
    # 1000 tokens x 6 x 7168 x 2048 = 8.81e10 FLOPs; 32 experts x 3 x 7168 x 2048 bytes = 1.409 GB
    assert grouped_gemm_flops(1000, 7168, 2048) == pytest.approx(8.808e10, rel=1e-3)
    assert expert_weight_bytes(32, 7168, 2048) == pytest.approx(1.409e9, rel=1e-3)


def test_slo_changes_feasibility_not_the_ceiling():
    loose, s_loose = sweep("kimi-k2", "h200", budget=Budget(slo_s=0.100))
    assert loose["feasible"][0]  # t_B = (170 - 15) / 183 ms = 0.85 ms > 0.53 ms read
    assert np.allclose(loose["hfu"], sweep("kimi-k2", "h200")[0]["hfu"])
    assert s_loose.max_hfu >= sweep("kimi-k2", "h200")[1].max_hfu


def test_properties_over_the_whole_grid():
    models = [load_model(m) for m in MODELS]
    hws = [load_hardware(h) for h in ("h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300")]
    g = hfu_grid(models, hws, N)
    assert g["hfu"].shape == (8, 6, 64)
    assert np.all(g["hfu"] <= 1) and np.all(g["hfu"] <= g["comm_ceiling"] + 1e-12)
    # dead zone: for N_F >= K the bound equals the floor whatever N_F (non-Superpod too)
    for i, h in enumerate(hws):
        for j, m in enumerate(models):
            tail = g["hfu"][i, j, N >= m.experts_per_token]
            floor = dead_zone_floor(h.scale_out_bytes_per_s, m.moe_intermediate_size, h.flops)
            assert np.allclose(tail, floor)
    # more bandwidth never lowers the bound
    faster = [h.with_overrides(scale_out_bytes_per_s=2 * h.scale_out_bytes_per_s,
                               scale_up_bytes_per_s=2 * h.scale_up_bytes_per_s) for h in hws]
    assert np.all(hfu_grid(models, faster, N)["hfu"] >= g["hfu"])
    more_out = [h.with_overrides(scale_out_bytes_per_s=1.5 * h.scale_out_bytes_per_s) for h in hws]
    assert np.all(hfu_grid(models, more_out, N)["hfu"] >= g["hfu"] - 1e-15)
    # bandwidth only: the ceiling is linear in BW_eff and in M
    assert comm_ceiling(16, 8, 100, 160, 2048, 1e3) == pytest.approx(2 * comm_ceiling(16, 8, 50, 160, 2048, 1e3))


def test_ridge_and_balanced_grouped_gemm():
    # H800: 1979e12 / (2 x 3.35e12) = 295.4 tokens per expert; H20: 296e12 / 8e12 = 37
    assert ridge_tokens_per_expert(1979e12, 3.35e12) == pytest.approx(295.37, abs=0.01)
    assert ridge_tokens_per_expert(296e12, 4.0e12) == pytest.approx(37.0)
    n = np.array([10.0, 100.0, 295.37, 1000.0])
    hfu = grouped_gemm_hfu(np.repeat(n[:, None], 8, axis=1), load_hardware("h800"))  # 1979e12, 3.35e12
    assert hfu == pytest.approx(np.minimum(1, n / 295.37), rel=1e-4)


def test_skew_lowers_hfu_at_the_same_average():
    mean = np.geomspace(1, 5000, 60)
    curves = grouped_gemm_hfu(skewed_tokens(mean[None, :], 8, np.array([0, 0.5, 1, 1.5])[:, None]),
                              load_hardware("h800"))
    assert np.all(np.diff(curves, axis=0) <= 1e-12)  # more skew, never higher
    assert np.all((curves >= 0) & (curves <= 1 + 1e-12))
    assert skewed_tokens(100, 8, 1.2).sum() == pytest.approx(800)  # the mean is kept
    dev = load_hardware("h800").with_overrides(flops=1e15, hbm_bytes_per_s=1e12)
    assert grouped_gemm_hfu(np.zeros(4), dev) == 0
    with pytest.raises(AfdError):
        grouped_gemm_hfu(np.array([-1.0, 2.0]), dev)


def test_zipf_popularity():
    assert zipf_popularity(4, 0) == pytest.approx([0.25] * 4)
    p = zipf_popularity(8, 1.0)  # 1 / H_8 = 1 / 2.7179 = 0.3679
    assert p.sum() == pytest.approx(1) and p[0] == pytest.approx(0.3679, abs=1e-4)
    with pytest.raises(AfdError):
        zipf_popularity(4, -1)


def test_ep_tokens_per_expert_from_deepseek_figures():
    # 1850 tok/s per GPU / 20 tok/s per user = 92.5 requests; x 2 tokens x 144 GPUs x 8 / 288 = 740
    assert ep_tokens_per_expert(1850, 20, 2, 144, 8, 288) == pytest.approx(740)


def test_full_hfu_inverses():
    from afdlib.analysis.hfu import bandwidth_for_full_hfu, intermediate_size_for_full_hfu
    # H800: 1979e12 / (2 x 160e9) = 6184 ; DeepSeek-V3 M = 2048 needs 1979e12 / 4096 = 483 GB/s
    assert intermediate_size_for_full_hfu(160e9, 1979e12) == pytest.approx(6184.4, abs=0.1)
    assert bandwidth_for_full_hfu(2048, 1979e12) == pytest.approx(483.2e9, rel=1e-3)
    assert comm_ceiling(1, 1, 483.154e9, 483.154e9, 2048, 1979e12) == pytest.approx(1, abs=1e-4)


def test_no_feasible_point_gives_none():
    # a 10 GB device cannot hold DeepSeek-V3's routed experts at any N_F <= 4
    tiny = load_hardware("h800").with_overrides(hbm_bytes=10e9)
    res, s = hfu_sweep(load_model("deepseek-v3"), tiny, np.arange(1, 5))
    assert not res["feasible"].any() and s.max_hfu is None and s.best_n_ffn is None
    assert s.dead_zone_floor == pytest.approx(0.1035, abs=1e-4)
