"""The sigma chapter's sweeps and comparisons (afdlib.routing.sweeps, afdlib.analysis.imbalance_cost):
hand-computed placements, exact Zipf loads, and the like-with-like study's bookkeeping."""
import numpy as np
import pytest

from afdlib.analysis.imbalance import alpha_dp_ep
from afdlib.analysis.imbalance_cost import alpha_plateau, dp_break_even, dp_tip_words, like_with_like_study
from afdlib.errors import AfdError
from afdlib.routing.balance import uniform_balancedness
from afdlib.routing.measured import zipf_counts
from afdlib.routing.sweeps import (
    longrun_balance, per_batch_balance, replicas_for, sample_layers, uniform_check, zipf_fit_summary, zipf_fit_table,
)


def test_uniform_check_against_the_analytic_form():
    u = uniform_check([4096, 16384], 2, 16, [2, 3, 4, 16], trials=30, seed=1)
    assert list(u.ranks) == [2, 4, 16]                      # 3 does not divide 16 experts
    assert u.analytic == pytest.approx(uniform_balancedness(np.array([[4096], [16384]]), 2, 16, np.array([[2, 4, 16]])))
    assert (u.leading <= u.analytic + 1e-12).all()          # sqrt(2 ln R) overestimates the maximum
    # mu = T K / R: 4096 x 2 / 16 = 512 pairs per rank
    assert u.mean_load[0, 2] == 512
    gap, gap_leading = u.gap()
    assert gap < 0.01 and gap_leading >= gap                 # thousands of pairs per rank: Blom is close
    assert all(np.isnan(u.gap(min_load=1e9)))                # no cell that large
    again = uniform_check([4096, 16384], 2, 16, [2, 3, 4, 16], trials=30, seed=1)
    assert np.array_equal(again.monte_carlo, u.monte_carlo)  # seeded
    with pytest.raises(AfdError, match="no EP size in \\[3, 5\\] divides the 16 experts"):
        uniform_check([64], 2, 16, [3, 5], trials=1)


def test_replicas_for():
    # E = 256 + 32 replicas = 288 slots: up to 288 ranks keep 32, beyond it one slot per rank
    assert replicas_for([144, 288, 320], 256, 32) == [32, 32, 64]
    assert replicas_for([8], 4, 0) == [4]


def test_longrun_balance_by_hand():
    # layer 0: loads 6, 2, 1, 1 on 2 ranks. Contiguous: 8 | 2, mean 5 -> sigma 0.625. EPLB packing
    # (2 slots per rank, heaviest first onto the lighter open rank): 6 | 2, then 1 -> rank 1 (3, full),
    # 1 -> rank 0: 7 | 3 -> 5 / 7. Layer 1 is uniform: 1. Median of two layers: their mean.
    counts = np.array([[6.0, 2, 1, 1], [5, 5, 5, 5]])
    t = longrun_balance(counts, [1, 2], 0, max_over_mean=True)
    assert list(t["ep_size"]) == [1, 2]
    assert t["contiguous"] == pytest.approx([1, (0.625 + 1) / 2])
    assert t["eplb_no_replicas"] == pytest.approx([1, (5 / 7 + 1) / 2])
    assert t["eplb_plus_0"] == pytest.approx(t["eplb_no_replicas"])
    assert t["contiguous_max_over_mean"] == pytest.approx(1 / t["contiguous"])
    assert "eplb_plus_0_max_over_mean" in t and "contiguous_max_over_mean" not in longrun_balance(counts, [2], 0)


def test_sample_layers_and_per_batch_balance():
    layers = np.arange(3, 61)                                # DeepSeek-V3's 58 MoE layers
    s = sample_layers(layers, 15)
    assert s.size == 15 and s[0] == 3 and s[-1] == 60 and (np.diff(s) > 0).all()
    assert list(sample_layers(layers[:4], 15)) == [3, 4, 5, 6]
    counts = np.vstack([zipf_counts(1e6, 32, 0.5, seed=k) for k in range(3)])
    rows = per_batch_balance(counts, [1, 4, 8], 4, [256, 1024], 8, 2, 0, [0, 2])
    assert [(r["tokens"], r["ep_size"]) for r in rows] == [(t, e) for t in (256, 1024) for e in (1, 4, 8)]
    for r in rows:
        assert 0 < r["contiguous"] <= 1 and 0 < r["eplb_plus_4"] <= 1
        if r["ep_size"] == 1:
            assert r["contiguous"] == r["eplb_plus_4"] == 1  # one rank holds everything


def test_zipf_fit_table_recovers_exact_zipf_loads():
    counts = np.vstack([np.zeros(64), zipf_counts(1e6, 64, 0.3, seed=None), zipf_counts(1e6, 64, 0.7, seed=3)])
    t = zipf_fit_table(counts, [1, 2])
    assert list(t["layer"]) == [1, 2]
    assert t["zipf_exponent"] == pytest.approx([0.3, 0.7], abs=1e-3)
    assert t["total_variation"] == pytest.approx([0, 0], abs=1e-3)
    assert t["max_over_mean_measured"] == pytest.approx(t["max_over_mean_fitted"], rel=1e-2)
    s = zipf_fit_summary(t)
    assert s["quantity"][0] == "Zipf exponent s"
    assert (s["median"][0], s["min"][0], s["max"][0]) == pytest.approx((0.5, 0.3, 0.7), abs=1e-3)


def test_alpha_plateau_of_whole_attention_nodes():
    # N_A = 8, N_F = 2, c = 10 / 8: for sigma in [7/8, 35/36] seven whole nodes keep
    # 1.25 x 7 / 9 = 35/36 = 0.97222; above that the partly idle eighth node wins (alpha = sigma)
    low, high = alpha_plateau(35 / 36, 8, 2)
    assert low == pytest.approx(0.875) and high == pytest.approx(0.9722)
    assert alpha_plateau(0.5, 8, 2) is None


def test_dp_break_even():
    # a_AFD s = a_EP s (lambda + 1) / (lambda + s): s = 0.88 x 5 / 0.9 - 4 = 0.8889
    s = dp_break_even(0.9, 0.88, 4.0)
    assert s == pytest.approx(0.88 * 5 / 0.9 - 4)
    assert 0.9 * s == pytest.approx(0.88 * float(alpha_dp_ep(s, 4.0)))
    assert dp_break_even(0.85, 0.9, 4.0) == 1.0              # EP ahead at any DP balancedness
    # in words: a break-even below 1 is a threshold; at 1 (an own-pair book's H200) there is none to cross
    assert dp_tip_words(s) == ("tips the balance to EP below a DP balancedness of 0.889", "0.889")
    tips, alone = dp_tip_words(dp_break_even(0.85, 0.9, 4.0))
    assert tips == "leaves EP ahead at any DP balancedness" and "1.000" not in alone
    assert alone == "1 (EP keeps more at any DP balancedness)"     # reads in "from 1 (...) to 0.942", unlike "none"


@pytest.fixture(scope="module")
def study():
    counts = np.vstack([zipf_counts(1e6, 64, 0.6, seed=k) for k in range(4)])
    # AFD 2A + 1F of 4 GPUs: 12 GPUs moving 600 tokens, 50 per GPU; EP12 and EP4 at 50 per GPU
    return like_with_like_study(counts, 4, 2, 1, 4, [12, 4], 8, 3.0, 600, 4, 0, [0, 1, 3])


def test_like_with_like_study_tables(study):
    assert study.equal == 12 and study.afd_gpus == 12
    assert study.runs[12].tokens == 600 and study.runs[4].tokens == 200
    rows = study.rows()
    assert [r["design"] for r in rows] == ["AFD 2A1F + 8 redundant", "EP12 + 8 redundant", "EP4 + 8 redundant"]
    assert [r["GPUs"] for r in rows] == [12, 12, 4]
    med = study.medians()
    a_afd, a_ep = study.printed_alphas()
    assert a_afd == round(med["alpha_afd"], 3) and a_ep == round(med["alpha_ep"], 3)
    assert rows[0]["alpha (10-90%)"].startswith(f"{med['alpha_afd']:.3f} (")
    assert study.others() == [(4, round(float(np.median(study.runs[4].alpha[1])), 3))]


def test_like_with_like_study_sensitivity_and_dp(study):
    sens = study.token_sensitivity(600, [1.0, 0.5], trials=2)
    assert [r["tokens per step"] for r in sens] == [600, 300]
    med = study.medians()
    assert sens[0]["AFD alpha"] == med["alpha_afd"] and sens[0]["EP12 sigma"] == med["sigma_ep"]   # the run reused
    dp = study.dp_rows([1.0, 0.8])
    a_afd, a_ep = study.printed_alphas()
    assert dp[0] == {"DP sigma": 1.0, "AFD alpha": a_afd, "EP12 alpha": a_ep}          # no DP imbalance
    assert dp[1]["AFD alpha"] == pytest.approx(0.8 * a_afd)
    assert dp[1]["EP12 alpha"] == pytest.approx(a_ep * 0.8 * 4 / 3.8)
    # leads between values rounded to three decimals: 0.9126 -> 0.913, 0.9004 -> 0.900; 0.8 - 0.7996 -> 0.800 - 0.800
    lead = study.printed_lead({"AFD alpha": [0.9126, 0.8], "EP12 alpha": [0.9004, 0.7996]})
    assert lead == pytest.approx((0.0, 0.013))
    # the like-for-like size is AFD's own GPU count, (N_A + N_F) g = (1 + 1) x 2 = 4, whatever is given
    alone = like_with_like_study(np.ones((1, 8)), 2, 1, 1, 2, [], 0, 1.0, 10, 1, 0, [0])
    assert alone.equal == 4 and list(alone.runs) == [4]
    assert list(like_with_like_study(np.ones((1, 8)), 2, 1, 1, 2, [8, 4], 0, 1.0, 10, 1, 0, [0]).runs) == [4, 8]


def test_one_replica_rule_for_both_designs():
    from afdlib.analysis.imbalance_cost import like_with_like
    from afdlib.routing.balance import placement_replicas
    # the given count, and at least one expert per GPU: 16 GPUs, 256 experts, 32 given -> 32; 300 GPUs -> 44
    assert [placement_replicas(g, 256, 32) for g in (16, 144, 288, 300)] == [32, 32, 32, 44]
    assert placement_replicas(8, 64, 0) == 0 and placement_replicas(80, 64, 0) == 16
    # AFD's FFN pool of 4 GPUs (1 node of 4) and EP4 see the same batches: with one placement rule
    # their balancedness is the same, layer by layer (AFD's alpha then differs only by its form)
    counts = np.vstack([zipf_counts(1e6, 64, 0.6, seed=k) for k in range(3)])
    c = like_with_like(counts, 4, 2, 1, 4, [4], 8, 3.0, 400, trials=3, seed=1)
    assert c.designs == ["AFD 2A1F + 8 redundant", "EP4 + 8 redundant"]
    assert np.array_equal(c.layer_sigma[0], c.layer_sigma[1])
