"""Imbalance at the model's own lambda (afdlib.studies.imbalance_lambda, LikeWithLikeStudy.at_lambda):
lambda of a deployment by hand, and the DP break-even against lambda."""
import numpy as np
import pytest

from afdlib.analysis.imbalance import alpha_afd, alpha_ep
from afdlib.analysis.imbalance_cost import break_even_text, dp_break_even, dp_tip_words, like_with_like_study
from afdlib.decode.deployment import AFDDeployment, EPDeployment, decode_step
from afdlib.studies.imbalance_lambda import (
    EP_FORM, deployment_lambda, model_lambdas, own_lambda_study, published_lambdas)
from afdlib.decode.search import best_afd
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.errors import AfdError
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.routing.measured import zipf_counts

ONE_STEP = Budget(slo_s=1.0, l_accept=1.0, t_gap_s=0.0)
ROOFLINE = Assumptions(kernel_profile="roofline")


def test_ep_lambda_by_hand():
    # DeepSeek-V3 on H800 (paper profile: 1979 TFLOP/s FP8, 989 BF16, 3.35 TB/s) at the roofline, EP32
    # without replicas, one micro-batch of 64 requests at context 4096, sigma 1. Per operator the
    # slower of compute and HBM, summed:
    # attention  projections: 187,105,280 FP8 weights + 64 x 7168 x 2 x 2 activations = 188,940,288 B
    #              -> 56.400 us (compute 2 x 187,105,280 x 64 / 1979e12 = 12.1 us)
    #            core: 64 x 4096 x 576 x 2 B = 301,989,888 B -> 90.146 us (compute 278,528 x 4096 x 64
    #              / 989e12 = 73.8 us)
    #            router: 7168 x 256 BF16 = 3,670,016 B -> 1.096 us
    #            t_a = 147.642 us
    # FFN        routed: 8 local experts (256 / 32), 512 pairs reach all 8 (8 (1 - e^-64)):
    #              8 x 3 x 7168 x 2048 B + 512 x 7168 x 3 wire bytes = 363,331,584 B -> 108.457 us
    #              (compute 6 x 512 x 7168 x 2048 / 1979e12 = 22.8 us)
    #            shared: 3 x 7168 x 2048 = 44,040,192 B -> 13.146 us
    #            t_f = 121.603 us
    # lambda = 147.642 / 121.603 = 1.2141
    m, h = load_model("deepseek-v3", profile="reference"), load_hardware("h800")
    lam = deployment_lambda(m, EPDeployment(h, 32, 0, 1, "low-latency", 64), 4096, ONE_STEP, assumptions=ROOFLINE)
    assert lam.t_attn_s == pytest.approx(147.642e-6, rel=1e-4)
    assert lam.t_ffn_s == pytest.approx(121.603e-6, rel=1e-4)
    assert lam.lam == pytest.approx(1.2141, rel=1e-4) and lam.work_ratio == lam.lam
    assert (lam.label, lam.gpus, lam.requests, lam.tokens) == ("EP32+0", 32, 64, 64 * 32)


def test_lambda_is_taken_without_imbalance():
    # the decode model's own sigma (uniform routing) would stretch t_f; lambda is the balanced ratio
    m, h = load_model("deepseek-v3", profile="reference"), load_hardware("h800")
    d = EPDeployment(h, 32, 0, 1, "low-latency", 64)
    skewed = decode_step(m, d, 4096, ONE_STEP, assumptions=ROOFLINE)
    lam = deployment_lambda(m, d, 4096, ONE_STEP, assumptions=ROOFLINE)
    assert float(skewed.sigma) < 1 and float(skewed.t_attn / skewed.t_ffn) < lam.lam


def test_afd_lambda_is_n_a_over_n_f_and_its_work_ratio_the_pools():
    m, h = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    d = AFDDeployment.of(h, 6, 3, micro_batches=3, requests=120)
    lam = deployment_lambda(m, d, 4096, ONE_STEP)
    st = decode_step(m, d, 4096, ONE_STEP, assumptions=Assumptions(sigma=1.0))
    assert lam.lam == 2.0 and lam.label == "6A3F" and lam.gpus == 72
    # 48 attention GPUs x t_a against 24 FFN GPUs x t_f, one micro-batch
    assert lam.work_ratio == pytest.approx(48 * float(st.t_attn) / (24 * float(st.t_ffn)))
    assert lam.tokens == 120 // 3 * 48               # one micro-batch of the attention pool's requests


def test_model_lambdas_take_the_search_s_afd_and_ep_on_as_many_gpus():
    m, h = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
    afd, ep = model_lambdas(m, h, budget, 4096, 32)
    best = best_afd(m, h, h, budget, 4096, domain_forms=()).deployment   # the paper's AFD form: one domain
    assert afd.label == best.label and afd.requests == int(best.requests)
    assert ep.gpus == afd.gpus and (ep.deployment.micro_batches, ep.deployment.kernels) == EP_FORM
    assert ep.deployment.redundant == 32 and ep.label == f"EP{afd.gpus}+32"
    with pytest.raises(AfdError, match="no AFD deployment"):
        model_lambdas(m, h, Budget(slo_s=1e-4, l_accept=1.0, t_gap_s=DECODE_T_GAP_S), 4096, 32)


def test_published_lambdas():
    (online,) = published_lambdas(["deepseek-v3-h800-ep144-online"])
    assert online.label == "EP144+32" and online.requests == 88      # its published batch
    with pytest.raises(AfdError, match="unknown published deployment.*nope"):
        published_lambdas(["nope"])


def test_the_dp_break_even_rises_with_lambda():
    # s*(lam) = a_EP (lam + 1) / a_AFD - lam with a_EP = (lam + 1) / (lam + c), c = 1 / sigma_EP:
    # d s* / d lam = [1 - ((c - 1) / (lam + c))^2] / a_AFD - 1, so s* rises wherever
    # a_AFD <= 1 - ((c - 1) / (lam + c))^2; for lam >= 1 that holds whenever
    # a_AFD <= 1 - ((1 - sigma) / (1 + sigma))^2 (the worst case, lam = 1)
    rng = np.random.default_rng(0)
    lams = np.linspace(1.0, 6.0, 201)
    for _ in range(300):
        sigma = rng.uniform(0.5, 1.0)
        a_afd = rng.uniform(0.5, 1 - ((1 - sigma) / (1 + sigma)) ** 2)
        even = [dp_break_even(a_afd, float(alpha_ep(sigma, lam)), lam) for lam in lams]
        assert np.all(np.diff(even) >= -1e-12), (sigma, a_afd)
    # outside the condition it can fall: sigma_EP 0.5, a_AFD 0.99: 4 / (3 x 0.99) - 1 = 0.3468 at
    # lam 1, 9 / (4 x 0.99) - 2 = 0.2727 at lam 2
    assert dp_break_even(0.99, float(alpha_ep(0.5, 1.0)), 1.0) == pytest.approx(0.3468, abs=1e-4)
    assert dp_break_even(0.99, float(alpha_ep(0.5, 2.0)), 2.0) == pytest.approx(0.2727, abs=1e-4)


def _study(lam=4.0):
    counts = np.stack([zipf_counts(1e6, 64, s, seed=i) for i, s in enumerate((0.3, 0.5, 0.7))])
    return like_with_like_study(counts, 4, 4, 2, 4, [24], 8, lam, 1200, 4, 0, np.arange(3))


def test_at_lambda_moves_ep_alone_and_the_break_even_rises():
    base = _study(4.0)
    assert np.array_equal(base.at_lambda(4.0).first.alpha, base.first.alpha)     # the same lambda: unchanged
    rows = [base.at_lambda(lam).lambda_row("") for lam in (1.0, 1.5, 2.0, 3.0, 4.0, 5.0)]
    assert len({r["AFD alpha"] for r in rows}) == 1                              # AFD's alpha: its nodes
    assert all(r["AFD lambda"] == 2.0 for r in rows)
    ep = [r["EP alpha"] for r in rows]
    assert ep == sorted(ep) and ep[0] < ep[-1]                                   # EP's FFN share falls with lambda
    even = [r["DP break-even"] for r in rows]
    assert even == sorted(even)
    r = rows[2]
    assert r["AFD lead (points)"] == round(100 * (r["AFD alpha"] - r["EP alpha"]), 1)
    assert r["DP break-even"] == pytest.approx(min(r["EP alpha"] * 3 / r["AFD alpha"] - 2, 1.0))
    # the alphas are those of the forms at the sampled sigmas (medians over trials)
    run = base.at_lambda(2.0).first
    assert np.median(run.alpha[1]) == pytest.approx(float(np.median(alpha_ep(run.sigma[1], 2.0))))
    assert np.median(run.alpha[0]) == pytest.approx(float(np.median(alpha_afd(run.sigma[0], 4, 2).alpha)))


def test_own_lambda_study_rows_and_readings():
    counts = np.stack([zipf_counts(1e6, 256, s, seed=i) for i, s in enumerate((0.3, 0.5))])
    m, h = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
    own = own_lambda_study(counts, m, h, budget, 4096, 32, ["deepseek-v3-h800-ep128-profile"], 2, 0, np.arange(2))
    reference = like_with_like_study(counts, 8, 8, 2, 8, [80], 32, 4.0, 5692, 2, 0, np.arange(2))
    rows = own.rows(reference)
    assert [r["EP lambda"] for r in rows] == [4.0, own.ep.lam, own.ep.lam, own.published[0].lam]
    assert rows[1]["AFD"] == "8A2F" and rows[2]["AFD"] == own.afd.label == rows[3]["AFD"]
    assert rows[2]["tokens per step"] == own.afd.tokens and rows[2]["EP"] == f"EP{own.afd.gpus}"
    g = own.readings(reference)
    assert g["own_lead"] == f"{rows[2]['AFD lead (points)']:+.1f}"
    assert g["alone_lead"] == f"{rows[1]['AFD lead (points)']:+.1f}"
    assert g["own_max_gap"] == f"{max(abs(r['AFD lead (points)']) for r in rows):.1f}"


def test_break_even_text():
    assert break_even_text(0.9331) == "0.933"
    # never "a DP break-even of none": 1, the table's own convention, with what it means
    assert break_even_text(1.0) == "1 (EP keeps more at any DP balancedness)"
    # one wording for the break-even wherever it is printed: the chapter's "from X to Y" reads with it
    assert dp_tip_words(1.0)[1] == break_even_text(1.0) and dp_tip_words(0.9644)[1] == "0.964"


def test_the_lambda_table_is_shown_in_eight_columns_with_every_number():
    from afdlib.analysis.imbalance_cost import lambda_display
    row = {"lambda from": "the paper (4)", "AFD": "8A2F", "AFD lambda": 4.0, "EP": "EP80", "EP lambda": 4.0,
           "tokens per step": 7115, "AFD sigma": 0.9731, "EP sigma": 0.8779, "AFD alpha": 0.973, "EP alpha": 0.9725,
           "AFD lead (points)": 0.1, "DP break-even": 0.9951}
    shown = lambda_display([row])
    assert len(shown.columns) == 8
    assert shown.iloc[0].tolist() == ["the paper (4)", "8A2F (λ 4)", "EP80 (λ 4.00)", "7,115", "0.973 / 0.878",
                                      "0.973 / 0.973", "+0.1", "0.995"]


def test_closeness_and_sigma_contrast_follow_the_numbers():
    from afdlib.analysis.imbalance_cost import closeness_words, sigma_contrast
    assert closeness_words(-0.4) == {"like_closeness": "within a point of each other", "like_tie": "a near-tie"}
    assert closeness_words(2.34) == {"like_closeness": "2.3 points apart", "like_tie": "no tie: AFD keeps 2.3 points more"}
    assert closeness_words(-1.5)["like_tie"] == "no tie: EP keeps 1.5 points more"
    assert sigma_contrast(0.984, 0.876).startswith("although AFD's σ (0.984) is far higher")
    assert sigma_contrast(0.90, 0.89).startswith("although AFD's σ (0.900) is a little higher")
    assert sigma_contrast(0.92, 0.89).startswith("although AFD's σ (0.920) is a little higher")   # 0.03: not far
    assert sigma_contrast(0.85, 0.89) == "with AFD's σ (0.850) no higher than EP's (0.890)"
