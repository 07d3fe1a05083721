"""The paper's Table 3 conditions like for like (afdlib.studies.conditions, afdlib.decision.sweetspot's
families): the synthetic families keep the total parameters, and each reading's direction."""
import numpy as np
import pytest

from afdlib.studies.conditions import (
    Condition, Point, hetero_sentence, interconnect_condition, parameters_constant, shape_condition, with_interconnect,
)
from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.decision.sweetspot import best_afd_open, family, routed_parameters, with_shape
from afdlib.errors import AfdError
from afdlib.evaluator.kernels import architecture
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
DS = load_model("deepseek-v3", profile="reference")       # H 7168, 58 MoE layers, E 256, K 8, M 2048


def test_routed_parameters_by_hand():
    # 3 x 7168 x 2048 = 44,040,192 per expert and layer; x 256 experts x 58 layers; x 8 activated x 58
    assert routed_parameters(DS) == (653_908_770_816, 20_434_649_088)


def test_granularity_family_keeps_total_and_activated_parameters():
    fine = with_shape(DS, "moe_intermediate_size", 512)      # K = 8 x 2048 / 512 = 32, E = 32 x 32 = 1024
    coarse = with_shape(DS, "moe_intermediate_size", 16384)  # K = 1, E = 32
    assert (fine.routed_experts, fine.experts_per_token, fine.moe_intermediate_size) == (1024, 32, 512)
    assert (coarse.routed_experts, coarse.experts_per_token, coarse.moe_intermediate_size) == (32, 1, 16384)
    odd = with_shape(DS, "moe_intermediate_size", 3000)      # K = round(5.46) = 5, E = 160, M = 524288 / 160
    assert (odd.routed_experts, odd.experts_per_token, odd.moe_intermediate_size) == (160, 5, 3276.8)
    for m in (fine, coarse, odd):
        assert routed_parameters(m) == pytest.approx(routed_parameters(DS), rel=1e-12)
        assert m.sparsity == 32 and m.shared_size == 2048          # E / K and the shared expert kept
    assert parameters_constant(DS, "moe_intermediate_size", np.geomspace(512, 16384, 12)) == pytest.approx((0, 0))


def test_granularity_rounds_e_where_e_over_k_is_not_whole():
    m = DS.with_overrides(routed_experts=10, experts_per_token=3)      # E / K = 3.33
    half = with_shape(m, "moe_intermediate_size", 1024)               # K = 6, E = round(20) = 20, M = 20480 / 20
    assert (half.routed_experts, half.experts_per_token, half.moe_intermediate_size) == (20, 6, 1024)
    split = with_shape(m, "moe_intermediate_size", 2048 / 1.5)        # K = round(4.5) = 4, E = round(13.3) = 13
    total, active = routed_parameters(split)
    assert total == pytest.approx(routed_parameters(m)[0])           # E x M = 10 x 2048 exactly
    # activated 4 x 20480 / 13 against 3 x 2048: within the rounding of E (2.6% here)
    assert active / routed_parameters(m)[1] == pytest.approx(4 * 20480 / 13 / 6144)


def test_sparsity_family_keeps_experts_and_varies_k():
    dense = with_shape(DS, "sparsity", 4)       # K = 256 / 4 = 64
    sparse = with_shape(DS, "sparsity", 128)    # K = 2
    assert (dense.experts_per_token, sparse.experts_per_token) == (64, 2)
    assert with_shape(DS, "sparsity", 1000).experts_per_token == 1       # at least one expert per token
    assert with_shape(DS, "sparsity", 0.5).experts_per_token == 256      # at most all of them
    for m in (dense, sparse):
        assert (m.routed_experts, m.moe_intermediate_size) == (256, 2048)
        assert routed_parameters(m)[0] == routed_parameters(DS)[0]
    # activated parameters change with K: 64 / 8 - 1 = 7 at E/K = 4
    assert parameters_constant(DS, "sparsity", [4, 32, 128]) == pytest.approx((0, 7))
    assert [m.sparsity for m in family(DS, "sparsity", [128, 4, 4.01])] == [4, 128]   # sorted, one per member
    with pytest.raises(AfdError, match="unknown map axis"):
        with_shape(DS, "heads", 4)


def test_with_interconnect_changes_the_network_only():
    gb200, b200 = (load_hardware(h, profile="datasheet") for h in ("gb200", "b200"))
    hgx = with_interconnect(gb200, b200)
    assert (hgx.flops, hgx.hbm_bytes_per_s, hgx.hbm_bytes) == (gb200.flops, gb200.hbm_bytes_per_s, gb200.hbm_bytes)
    assert (hgx.superpod, hgx.scale_up_domain, hgx.scale_out_bytes_per_s, hgx.inter_domain_bytes_per_s) == (
        False, 8, b200.scale_out_bytes_per_s, None)
    assert hgx.scale_out_latency_s == b200.scale_out_latency_s
    assert architecture(hgx) == architecture(gb200) == "blackwell"   # the chip's kernels, not the default's


def _cond(ratio, equal, sign, bound=16, on=False):
    pts = tuple(Point(x, r, e, bound, on) for x, r, e in zip([1.0, 2.0, 4.0], ratio, equal))
    return Condition("coarse experts", "X", "M", pts, sign, (0.3, 0.6))


def test_condition_directions_and_sentences():
    up = _cond([0.8, 0.9, 1.1], [0.7, 0.8, 0.9], +1)
    assert up.agrees() and up.agrees(True)
    assert up.sentence().startswith("agrees with the paper on X (the ratio moves toward AFD): 0.80 at M = 1 to 1.10 at 4 "
                                    "(P(AFD better) 0.30 to 0.60)")
    overlap = _cond([1.1, 1.0, 0.9], [0.7, 0.8, 0.9], +1)          # falls under the schedule, rises with equal overlap
    assert not overlap.agrees() and overlap.agrees(True)
    assert "departs on X (the ratio moves toward EP), because of the overlap the schedule gives each design" in \
        overlap.sentence()
    both = _cond([1.1, 1.0, 0.9], [1.0, 0.9, 0.8], +1)
    assert "whatever the overlap" in both.sentence()
    sparse = _cond([1.2, 1.0, 0.9], [1.0, 0.9, 0.8], -1)           # smaller x favours AFD: falling agrees
    assert sparse.agrees()
    bound = _cond([0.8, 0.9, 1.1], [0.7, 0.8, 0.9], +1, bound=64, on=True)
    assert "extended to 64 nodes per pool; its best still sits on that bound" in bound.sentence()
    # 0.972 -> 0.969 prints 0.97 to 0.97: level, not "the ratio moves toward AFD"
    level = _cond([0.972, 0.95, 0.969], [0.9, 0.9, 0.9], -1)
    assert level.sentence().startswith("is level on X at two decimals (the ratio does not move either way)")


def test_hetero_sentence_names_the_window_or_why_not():
    h20, h800 = (load_hardware(h, profile="datasheet") for h in ("h20", "h800"))
    pools = [{"design": "EP on h20", "tokens/s per GPU": 400.0, "h20 GPU-h/Mtok": 0.5, "h800 GPU-h/Mtok": 0.0},
             {"design": "EP on h800", "tokens/s per GPU": 2400.0, "h20 GPU-h/Mtok": 0.0, "h800 GPU-h/Mtok": 0.1},
             {"design": "AFD 4A (h20) 1F (h800)", "tokens/s per GPU": 500.0, "h20 GPU-h/Mtok": 0.2,
              "h800 GPU-h/Mtok": 0.09}]
    # cheaper than EP on h800 when 0.2 p + 0.09 < 0.1 (p < 0.05), than EP on h20 when > 0.09 / 0.3: never both;
    # EP on H20 gives 400 / 2400 = 0.17 of H800's rate, near their FLOP/s ratio 296 / 1979 = 0.15
    s = hetero_sentence(pools, h20, h800)
    assert s.startswith("NVIDIA H20 attention + NVIDIA H800 SXM FFN departs, because decode is bound by compute")
    assert "gives 0.17 times" in s and "FLOP/s ratio 0.15" in s
    # 0.17 is within 25% of 0.15: compute-bound; at 0.12 against the FLOP/s ratio 0.06 (a factor 2) it is not "near"
    pools[0]["tokens/s per GPU"] = 0.34 * 2400
    assert "near their FLOP/s ratio" not in hetero_sentence(pools, h20, h800)
    pools[0]["tokens/s per GPU"] = 400.0
    pools[2]["h800 GPU-h/Mtok"] = 0.05                 # now 1/6 < p < 1/4
    assert "agrees with the paper" in hetero_sentence(pools, h20, h800)


def test_on_bound_and_the_open_search():
    h20, h800 = (load_hardware(h, profile="datasheet") for h in ("h20", "h800"))
    best, n, still = best_afd_open(DS, h20, h800, BUDGET, 4096)
    # H20 attention feeding H800 FFN nodes needs more than 16 attention nodes: the search widens past
    # them (afdlib.decode.bounds) and the best is inside what it searched, not on the cap
    assert n > 16 and not still and 16 < float(best.deployment.attention.nodes) < n


def test_readings_directions_on_the_reference_model():
    h800, gb200, b200 = (load_hardware(h, profile="datasheet") for h in ("h800", "gb200", "b200"))
    sparse = shape_condition(DS, h800, "sparsity", [4, 128], BUDGET, 4096, verdicts=False)
    assert list(sparse.x) == [4, 128] and sparse.paper_sign == -1
    assert sparse.ratios()[0] > sparse.ratios()[-1]    # lower sparsity favours AFD on H800, as the paper says
    coarse = shape_condition(DS, h800, "moe_intermediate_size", [512, 16384], BUDGET, 4096, verdicts=False)
    # under the schedule the finest experts favour AFD (EP's all-to-all grows with K = 32), with equal
    # overlap the coarsest: the reading turns on the overlap
    assert not coarse.agrees() and coarse.agrees(True)
    ic = interconnect_condition(DS, gb200, b200, BUDGET, 4096, points=2, verdicts=False)
    assert len(ic.points) == 3 and ic.x[0] == pytest.approx(b200.scale_out_bytes_per_s / 1e9)
    assert ic.ratios(True)[1] > ic.ratios(True)[0]     # equal overlap: a faster NIC helps AFD more than EP


def test_table3_rows_read_the_superpod_gain_by_hand():
    from afdlib.studies.conditions import Table3
    up = _cond([0.8, 0.9, 1.1], [0.7, 0.8, 0.9], +1)
    gain = {"per_model": {"A": (1.2, 1.3), "B": (0.9, 1.1), "C": (0.95, 1.05)}, "nodes": 8, "median": 0.95,
            "median_equal": 1.1}
    t = Table3((up,), up, up, gain, [], ("h1", "h2"))
    rows = t.rows()
    # median 0.95 < 1 under the schedule, 1.1 with equal overlap: the overlap decides
    assert rows[3]["reading"] == ("over the 3 models, departs, because of the overlap the schedule gives each design "
                                  "(with equal overlap it agrees): the Superpod over the same device with 8-GPU nodes, "
                                  "median 0.95 (equal overlap 1.10); AFD gains on it for 1 (A)")
    assert [r["reading"] for r in rows[4:]] == ["h1", "h2"]
    # the node size is the twin's own: 4-GPU nodes read as such
    assert "same device with 4-GPU nodes" in Table3((up,), up, up, gain | {"nodes": 4}, [], ("h1", "h2")).rows()[3]["reading"]


def test_a_larger_scale_up_domain_favours_afd():
    from afdlib.studies.conditions import domain_condition
    gb200 = load_hardware("gb200", profile="datasheet")
    c = domain_condition(DS, gb200, BUDGET, 4096, domains=(16, 144), verdicts=False)
    assert list(c.x) == [16, 144] and c.agrees() and c.agrees(True)


def test_a_decided_end_is_called_decided():
    """P(AFD better) 0.91 at one end and 0.05 at the other: both ends are decided (rule: <= 0.1, >= 0.9)."""
    from dataclasses import replace
    c = replace(_cond([1.2, 1.0, 0.9], [1.0, 0.9, 0.8], -1), p_ends=(0.91, 0.05))
    # beside the P it reads (the schedule's), not after the equal-overlap ratios
    assert "(P(AFD better) 0.91 to 0.05; decided for EP at 0.05; decided for AFD at 0.91); with equal overlap" in c.sentence()
    assert "decided" not in _cond([0.8, 0.9, 1.1], [0.7, 0.8, 0.9], +1).sentence()
