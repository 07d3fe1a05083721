"""Balancedness from routing: analytic vs Monte-Carlo, EPLB placement, measured counts, fits."""
import json

import numpy as np
import pytest

from afdlib.routing.balance import balance_report, balance_sweep, balancedness, contiguous_rank_loads, effective_balancedness, eplb_placement, expected_max_std_normal, route_tokens, uniform_balancedness
from afdlib.routing.measured import counts_from_fit, counts_or_fit, fit_zipf, load_counts, zipf_counts
from afdlib.inputs.catalog import data_dir
from afdlib.errors import AfdError
from afdlib.routing.popularity import zipf_popularity
from conftest import SHARED_DATA

DECODE = SHARED_DATA / "decode_in1000out1000.json"
needs_shared = pytest.mark.skipif(not DECODE.exists(), reason="shared reference data not present")


def test_route_tokens_counts_and_distinctness():
    rng = np.random.default_rng(0)
    c = route_tokens(1000, 8, np.ones(16), rng)
    assert c.sum() == 8000 and c.max() <= 1000  # an expert appears at most once per token
    assert np.all(route_tokens(50, 4, np.ones(4), rng) == 50)  # K = E: every token visits every expert


def test_route_tokens_matches_exact_inclusion_probabilities():
    # sampling without replacement, K = 2 of p = (5, 3, 1, 1) / 10; P(i chosen) by enumeration
    p = np.array([5, 3, 1, 1]) / 10
    exact = np.array([p[i] + sum(p[j] * p[i] / (1 - p[j]) for j in range(4) if j != i) for i in range(4)])
    got = route_tokens(200_000, 2, p, np.random.default_rng(1)) / 200_000
    assert got == pytest.approx(exact, abs=0.005)


def test_route_tokens_is_deterministic_for_a_seed():
    a = route_tokens(5000, 8, zipf_popularity(64, 1.0), np.random.default_rng(7))
    b = route_tokens(5000, 8, zipf_popularity(64, 1.0), np.random.default_rng(7))
    assert np.array_equal(a, b)


def test_monte_carlo_agrees_with_analytic():
    # tolerance 0.01 where each rank expects >= 64 token-expert pairs (T K / R)
    rng = np.random.default_rng(3)
    for t in (1024, 8192):
        draws = np.stack([route_tokens(t, 8, np.ones(256), rng) for _ in range(60)])
        for r in (8, 32, 64):
            mc = balancedness(contiguous_rank_loads(draws, r)).mean()
            assert mc == pytest.approx(float(uniform_balancedness(t, 8, 256, r)), abs=0.01), (t, r)


def test_analytic_properties():
    t = np.array([128, 1024, 8192, 65536])[:, None]
    r = np.array([2, 8, 32, 128])[None, :]
    s = uniform_balancedness(t, 8, 256, r)
    assert np.all((s > 0) & (s <= 1))
    assert np.all(np.diff(s, axis=0) > 0)   # rises with T
    assert np.all(np.diff(s, axis=1) < 0)   # falls as R grows
    assert float(uniform_balancedness(100, 8, 256, 1)) == 1.0
    # the sqrt(2 ln R) leading term overestimates the max, so it is more pessimistic
    assert np.all(uniform_balancedness(t, 8, 256, r, method="leading") <= s)
    # Blom vs the exact E[max of n standard normals]: n = 2 -> 1/sqrt(pi) = 0.5642, n = 10 -> 1.5388
    z = expected_max_std_normal(np.array([2, 10]))
    assert z[0] == pytest.approx(0.5642, abs=0.03) and z[1] == pytest.approx(1.5388, rel=0.01)
    with pytest.raises(AfdError):
        uniform_balancedness(10, 9, 8, 2)


def test_eplb_conserves_load_and_never_worsens_the_max():
    rng = np.random.default_rng(5)
    for _ in range(20):
        loads = rng.pareto(1.2, size=64) * 100 + 1
        for ranks, extra in ((8, 0), (8, 8), (16, 16), (32, 0), (64, 0), (60, 4), (48, 16)):
            pl = eplb_placement(loads, ranks, extra)
            per_rank = pl.rank_loads(loads)
            assert per_rank.sum() == pytest.approx(loads.sum())
            assert pl.replicas.sum() == 64 + extra and sum(len(s) for s in pl.slot_expert) == 64 + extra
            if 64 % ranks == 0 and (64 + extra) % ranks == 0:
                assert per_rank.max() <= contiguous_rank_loads(loads, ranks).max() + 1e-9
            if extra:  # replicas never hurt
                assert per_rank.max() <= eplb_placement(loads, ranks, 0).rank_loads(loads).max() + 1e-9


def test_eplb_replicates_the_hottest_expert():
    loads = np.array([100.0, 10, 10, 10, 10, 10, 10, 10])
    pl = eplb_placement(loads, 4, 2)
    assert pl.replicas[0] == 3  # 100 / 2 = 50 still > 10, so both spare replicas go to expert 0
    with pytest.raises(AfdError):
        eplb_placement(loads, 16, 0)  # 8 slots cannot fill 16 ranks


def test_counts_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    for text, message in (("{", "not valid JSON"), ('{"x": 1}', "logical_count"),
                          ('{"logical_count": [[1, 2], [3]]}', "equal-length"),
                          ('{"logical_count": [[1, -2]]}', "non-negative")):
        bad.write_text(text)
        with pytest.raises(AfdError, match=message):
            load_counts(bad)
    with pytest.raises(AfdError, match="no such file"):
        load_counts(tmp_path / "missing.json")


def test_balance_report_on_a_small_file(tmp_path):
    # 2 dense layers (zero) + 2 MoE layers of 8 experts; 4 ranks, contiguous blocks of 2
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"logical_count": [[0] * 8, [0] * 8, [8, 0, 1, 1, 1, 1, 1, 1], [1] * 8]}))
    rep = balance_report(load_counts(f), 4, 0)
    assert list(rep.layers) == [2, 3]
    # layer 2: blocks (8, 2, 2, 2) -> mean 3.5 / max 8 = 0.4375; layer 3 uniform -> 1
    assert rep.contiguous == pytest.approx([0.4375, 1.0])
    # packing: 8 | 1+1 | 1+1 | 1+1 ... 8 alone cannot be split without replicas -> same max
    assert rep.redundant[0] == pytest.approx(0.4375)
    # 4 replicas all go to expert 0 (8/5 = 1.6 still > 1): 12 slots, 3 per rank. Packing heaviest first:
    # the five 1.6s spread (r0 gets two), the six 1s fill r1..r3 to 1.6 + 1 + 1, the 0 goes to r0:
    # loads 3.2, 3.6, 3.6, 3.6 -> 3.5 / 3.6
    assert balance_report(load_counts(f), 4, 4).redundant[0] == pytest.approx(3.5 / 3.6)


def test_effective_balancedness_is_the_harmonic_mean():
    assert effective_balancedness([1.0, 0.5]) == pytest.approx(1 / 1.5)


@needs_shared
def test_measured_deepseek_v3_balancedness():
    # reference notes section 3.2 / 3.3: contiguous EP32 max/mean 2.52, EPLB EP32 1.071, EP32+32 1.007,
    # EP64 1.479, EP64+64 1.021, EP144+32 1.143, EP256 5.20, EP288+32 2.02
    c = load_counts(DECODE)
    checks = {(32, 0): (2.52, 1.071), (32, 32): (2.52, 1.007), (64, 0): (2.97, 1.479), (64, 64): (2.97, 1.021),
              (144, 32): (4.06, 1.143), (256, 0): (5.20, 5.20), (288, 32): (5.85, 2.02)}
    for (r, n), (cont, red) in checks.items():
        rep = balance_report(c, r, n)
        assert 1 / rep.median_contiguous == pytest.approx(cont, abs=0.01)
        assert 1 / rep.median_redundant == pytest.approx(red, abs=0.005)


@needs_shared
def test_per_batch_balancedness_is_worse_than_long_run():
    c = load_counts(DECODE)
    layers, cont, red = balance_sweep(c, [32], 32, tokens=512, trials=3, layers=[10, 30, 50])
    _, _, red_lr = balance_sweep(c, [32], 32, layers=[10, 30, 50])
    assert np.all(red[0] < red_lr[0])
    # reference: EP32 + 32, T = 512 -> max/mean about 1.17
    assert 1 / np.median(red[0]) == pytest.approx(1.17, abs=0.06)


def test_zipf_fit_recovers_its_exponent():
    for s in (0.3, 0.8, 1.5):
        fit = fit_zipf(zipf_counts(1e6, 256, s, seed=1))
        assert fit.exponent == pytest.approx(s, abs=1e-3) and fit.total_variation < 1e-3


def test_fitted_fallback_when_raw_files_are_absent(tmp_path):
    fit = data_dir() / "deepseek_v3_routing_fit.yaml"
    counts, origin = counts_or_fit(tmp_path, "decode_in1000out1000", fit)
    assert "Zipf fits" in origin and counts.shape == (61, 256) and np.all(counts[:3] == 0)
    rep = balance_report(counts, 32, 32)
    assert 0.95 < rep.median_redundant <= 1  # replicas balance the stand-in as they do the real data
    with pytest.raises(AfdError):
        counts_from_fit(fit, "no_such_file")


def test_imbalance_cost_sizes_each_design_batch():
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.analysis.imbalance_cost import imbalance_cost
    counts = zipf_counts(1e7, 256, 0.45, seed=2)[None, :]
    afd, ep = imbalance_cost(counts, load_model("deepseek-v3"), load_hardware("h800"), 8, 2, 32, 32, 4.0, 185.0,
                             trials=2)
    # AFD batch: B_rank at N_F = 2 is 3.2 x B_out = 3.2 x 50e9 x t_B / (3 x 7168) = 2846 pairs per GPU;
    # x 16 GPUs / 8 = 5692 tokens.  EP: 185 x 32 = 5920 tokens
    assert afd.gpus == 16 and afd.tokens_per_step == pytest.approx(5692, abs=1)
    assert ep.tokens_per_step == 5920
    # one replica rule: both placements get the 32 given (16 and 32 GPUs, both under 256 experts)
    assert (afd.design, ep.design) == ("AFD 8A2F + 32 redundant", "EP32 + 32 redundant")
    for c in (afd, ep):
        assert 0 < c.sigma <= 1 and 0 < c.alpha <= 1


def _scan_placement(x, ranks, redundant):
    """The placement rule by direct scanning (the specification eplb_placement's heaps implement)."""
    e = x.size
    replicas = np.ones(e, dtype=np.int64)
    for _ in range(redundant):
        replicas[np.argmax(x / replicas)] += 1
    item_expert = np.repeat(np.arange(e), replicas)
    item_load = (x / replicas)[item_expert]
    slots = e + redundant
    capacity = np.full(ranks, slots // ranks)
    capacity[: slots % ranks] += 1
    used, weight = np.zeros(ranks, dtype=np.int64), np.zeros(ranks)
    members = [[] for _ in range(ranks)]
    for i in np.argsort(-item_load, kind="stable"):
        open_ = used < capacity
        r = int(np.flatnonzero(open_)[np.argmin(weight[open_])])
        members[r].append(int(item_expert[i]))
        used[r] += 1
        weight[r] += item_load[i]
    return replicas, members


def test_eplb_placement_matches_the_scanning_rule_and_rank_loads_the_sums():
    from afdlib.routing.balance import eplb_placement
    rng = np.random.default_rng(11)
    for trial in range(12):
        x = (rng.zipf(1.4, 256) if trial % 2 else rng.integers(0, 4, 256)).astype(float)  # ties included
        for ranks, redundant in ((8, 0), (16, 32), (144, 32), (72, 32), (288, 32)):
            p = eplb_placement(x, ranks, redundant)
            replicas, members = _scan_placement(x, ranks, redundant)
            assert p.replicas.tolist() == replicas.tolist()
            assert [m.tolist() for m in p.slot_expert] == members
            batch = rng.random((2, 256)) * 50
            by_sum = np.stack([(batch / replicas)[..., m].sum(axis=-1) for m in members], axis=-1)
            assert p.rank_loads(batch) == pytest.approx(by_sum, rel=1e-12)
    assert eplb_placement(x, 16, 32) is eplb_placement(x.copy(), 16, 32)      # fitted once
    with pytest.raises(ValueError):
        eplb_placement(x, 16, 32).replicas[0] = 5                              # shared: read-only


def test_alias_table_reproduces_the_distribution():
    from afdlib.routing.balance import alias_table
    rng = np.random.default_rng(5)
    for p in (np.ones(7), rng.random(50), np.array([5, 3, 1, 1, 0.0]), zipf_popularity(256, 1.2)):
        prob, alias = alias_table(p)
        n = p.size
        implied = prob / n
        np.add.at(implied, alias, (1 - prob) / n)
        assert implied == pytest.approx(p / p.sum(), abs=1e-12)
