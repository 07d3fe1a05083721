"""Search over deployments and the AFD-or-EP advice: optimality, monotonicity, the paper's cases."""
import json
from dataclasses import replace

import numpy as np
import pytest

from afdlib.decision.advise import advise, parse_prices
from afdlib.decision.threshold import break_even_scale_out
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.cli import main
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions, ep_step
from afdlib.decode.batch import best_batch, largest_batch
from afdlib.errors import AfdError
from afdlib.decode.search import best_ep, compare
from afdlib.inputs.specs import Budget, Precision

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)


def test_bisection_agrees_with_the_batch_search(ds, h800):
    step_of = lambda r: ep_step(ds, h800, 144, r, 4096, BUDGET, redundant=32)  # noqa: E731
    n, _ = best_batch(step_of, BUDGET.slo_s)
    assert float(largest_batch(step_of, BUDGET.slo_s, ())) == n


def test_best_ep_beats_every_candidate_it_was_given(ds, h800):
    best = best_ep(ds, h800, BUDGET, 4096)
    for size, red in ((64, 0), (144, 32), (256, 0)):
        step_of = lambda r, size=size, red=red: ep_step(ds, h800, size, r, 4096, BUDGET, redundant=red)  # noqa: E731
        _, st = best_batch(step_of, BUDGET.slo_s)
        assert float(best.tokens_per_s_per_gpu) >= float(st.tokens_per_s_per_gpu) - 1e-9


def test_more_bandwidth_never_lowers_either_design(ds, h800):
    ep0, afd0 = compare(ds, h800, BUDGET, 4096)
    for field in ("scale_out_bytes_per_s", "scale_up_bytes_per_s", "hbm_bytes_per_s"):
        faster = replace(h800, **{field: 2 * getattr(h800, field)})
        ep1, afd1 = compare(ds, faster, BUDGET, 4096)
        assert float(ep1.tokens_per_s_per_gpu) >= float(ep0.tokens_per_s_per_gpu) - 1e-6, field
        assert float(afd1.tokens_per_s_per_gpu) >= float(afd0.tokens_per_s_per_gpu) - 1e-6, field


def test_more_imbalance_never_raises_throughput(ds, h800):
    rates = [compare(ds, h800, BUDGET, 4096, assumptions=Assumptions(sigma=s)) for s in (0.6, 0.8, 1.0)]
    ep = [float(r[0].tokens_per_s_per_gpu) for r in rates]
    afd = [float(r[1].tokens_per_s_per_gpu) for r in rates]
    assert ep == sorted(ep) and afd == sorted(afd)


def test_vectorised_cells_match_single_calls(ds, h800):
    factors = np.array([0.5, 1.0, 4.0])
    many = replace(h800, scale_out_bytes_per_s=h800.scale_out_bytes_per_s * factors)
    ep, afd = compare(ds, many, BUDGET, 4096, cell_shape=(3,))
    for i, f in enumerate(factors):
        one = replace(h800, scale_out_bytes_per_s=h800.scale_out_bytes_per_s * f)
        e, a = compare(ds, one, BUDGET, 4096)
        assert float(ep.tokens_per_s_per_gpu[i]) == pytest.approx(float(e.tokens_per_s_per_gpu))
        assert float(afd.tokens_per_s_per_gpu[i]) == pytest.approx(float(a.tokens_per_s_per_gpu))
    # chunked evaluation gives the same cells
    ep_c, afd_c = compare(ds, many, BUDGET, 4096, cell_shape=(3,), chunk=1)
    assert np.allclose(ep_c.tokens_per_s_per_gpu, ep.tokens_per_s_per_gpu)
    assert np.allclose(afd_c.tokens_per_s_per_gpu, afd.tokens_per_s_per_gpu)


def test_the_papers_h800_case(ds, h800):
    # Under the paper's EP model (t_B = t_a + t_f: the all-to-all entirely hidden) EP wins on H800, as
    # the paper says. Under the defaults (overlap from each design's schedule, calibrated kernels) the
    # two are even within the model's error (recorded: AFD 1.05x, not decisive; 1.01x before the kernels were refitted
    # on aiconfigurator's kernel tables too (fixed cost 5.1 us per kernel, was 2.52); 1.07x with EP half
    # hidden and AFD all, before issue 18's schedule; 1.06x before H800's HBM was read as 80 GiB).
    paper_like = advise(ds, h800, BUDGET, 4096, assumptions=Assumptions(ep_overlap=1.0), explain=False)
    assert paper_like.recommendation == "EP" and paper_like.ratio < 1
    default = advise(ds, h800, BUDGET, 4096, explain=False)
    assert default.ratio == pytest.approx(1.05, abs=0.03) and not default.decisive


@pytest.mark.parametrize("model", ["step3", "ernie-4.5"])
@pytest.mark.parametrize("hw", ["gb200", "gb300"])
def test_coarse_experts_on_superpods_keep_afd_within_a_fifth_of_ep(model, hw):
    # recorded with the datasheet kernel profile: AFD / EP 0.90 or more while EP's one micro-batch was
    # serial; with single-batch overlap in EP's search (SGLang's GB200 decode form: one micro-batch, combine
    # beside the down GEMM and the shared experts) EP's best is that form and the ratio is 0.85 (Step-3,
    # GB200), 0.87 (ERNIE-4.5, GB200), 0.90 and 0.91 (GB300): AFD stays competitive, no longer even
    adv = advise(load_model(model, profile="reference"), load_hardware(hw, profile="datasheet"), BUDGET, 4096,
                 assumptions=Assumptions(kernel_profile="datasheet"), explain=False)
    assert 0.8 <= adv.ratio < 1.0 and adv.ep["sbo"] and adv.ep["micro_batches"] == 1


def test_break_even_bandwidth_is_where_the_ratio_crosses_one(ds, h800):
    bw, _ = break_even_scale_out(ds, h800, BUDGET, 4096, Precision(), Assumptions())
    assert bw is not None and bw < h800.scale_out_bytes_per_s * 64
    ep, afd = compare(ds, replace(h800, scale_out_bytes_per_s=bw), BUDGET, 4096)
    assert float(afd.tokens_per_s_per_gpu / ep.tokens_per_s_per_gpu) == pytest.approx(1.0, abs=0.08)


def test_prices():
    assert parse_prices(["h800=2.5", "H20=1"]) == {"h800": 2.5, "h20": 1.0}
    for bad in (["h800"], ["h800=-1"], ["=2"], ["h800=x"]):
        with pytest.raises(AfdError):
            parse_prices(bad)


def test_advise_command(capsys):
    assert main(["advise", "--model", "step3", "--hardware", "h800", "--price-per-gpu-hour", "h800=2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["recommendation"] in ("AFD", "EP") and doc["reasons"]
    assert {"tokens_per_s_per_gpu", "ep_size", "batch_per_gpu"} <= set(doc["ep"])
    assert {"tokens_per_s_per_gpu", "n_attn", "n_ffn", "micro_batches"} <= set(doc["afd"])
    # cost per million tokens: price / 3600 / rate x 1e6
    assert doc["cost"]["ep_usd_per_million_tokens"] == pytest.approx(2 / 3600 / doc["ep"]["tokens_per_s_per_gpu"] * 1e6)
    assert doc["ratio"] == pytest.approx(doc["afd"]["tokens_per_s_per_gpu"] / doc["ep"]["tokens_per_s_per_gpu"])


@pytest.mark.parametrize("args, message", [
    (["--model", "deepseek-v3"], "give --model and --hardware"),
    (["--model", "nope", "--hardware", "h800"], "unknown model"),
    (["--model", "deepseek-v3", "--hardware", "h800", "--attn-hardware", "h20", "--price-per-gpu-hour", "h800=2"],
     "no price for h20"),
    (["--model", "deepseek-v3", "--hardware", "h800", "--slo-ms", "1"], "neither EP nor AFD"),
])
def test_advise_bad_input(capsys, args, message):
    assert main(["advise", *args]) == 2
    assert message in capsys.readouterr().err


def test_placement_skew_from_counts():
    from afdlib.routing.balance import placement_skew
    rng = np.random.default_rng(0)
    uniform = placement_skew(np.full((3, 16), 100.0))
    assert np.allclose(uniform(np.array([2, 4, 8]), 0), 1.0)         # equal loads: perfectly balanced
    skewed = placement_skew(rng.zipf(1.5, size=(4, 16)).astype(float))
    s0, s8 = float(skewed(8, 0)), float(skewed(8, 8))
    assert 0 < s0 <= 1 and s8 >= s0                                  # replicas never hurt the placement


def test_advise_with_counts(tmp_path, capsys):
    f = tmp_path / "counts.json"
    f.write_text(json.dumps({"logical_count": [[0.0] * 256] + [[float(1 + (i % 7)) for i in range(256)]] * 2}))
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800", "--counts", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ep"]["sigma"] < 1 and doc["afd"]["sigma"] < 1
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800", "--counts", str(f), "--sigma", "0.9"]) == 2
    assert "not both" in capsys.readouterr().err


def test_overlap_what_ifs_vary_both_designs_alike(ds, h800):
    # DeepSeek-V3 on H800: AFD slightly ahead of EP's best by the schedule at the defaults (ratio above 1),
    # EP the more likely design once the communication jitter is in the verdict (was AFD, P 0.51, before);
    # AFD again (P 0.61) once its search takes attention domains (issue 28: 2 domains x 2 micro-batches,
    # ratio 1.07) and the ratio's spread rests on three head-to-heads (0.19, was 0.27 on two).
    # The advice sweeps the same share for both designs, EP's alone (two micro-batches, low-latency
    # kernels) and AFD's alone
    from afdlib.decision.overlap_whatif import FLIP_OVERLAPS, WHAT_IFS
    adv = advise(ds, h800, BUDGET, 4096)
    assert adv.recommendation == "AFD" and adv.ratio > 1 and 0.55 < adv.p_afd < 0.7
    w = adv.overlap_what_ifs
    assert set(w) == set(WHAT_IFS) and adv.to_json()["overlap_what_ifs"] is w
    both, ep, afd = (np.array(w[k]["ratios"]) for k in ("both", "ep", "afd"))
    # AFD's alone, by an independent path: the whole advice under the AFD override (EP untouched)
    for k in (0, 5, 10):
        under = advise(ds, h800, BUDGET, 4096, assumptions=Assumptions(afd_overlap=FLIP_OVERLAPS[k]), explain=False)
        assert afd[k] == pytest.approx(under.ratio, rel=1e-9)
    # each design gains from hiding more: EP's alone lowers the ratio, AFD's raises it
    assert np.all(np.diff(ep) <= 1e-12) and np.all(np.diff(afd) >= -1e-12)
    # the ends: nothing hidden, EP's two batches are serial, no faster than its best by the schedule
    # (ratio at least the advice's); all hidden is each design's bound, no slower than its schedule
    assert ep[0] >= adv.ratio * (1 - 1e-9) and ep[-1] <= adv.ratio * (1 + 1e-9)
    assert afd[-1] >= adv.ratio * (1 - 1e-9)
    # the same share for both is both variations at once: AFD(s) / EP(s) = afd(s) x ep(s) / verdict
    assert np.allclose(both, afd * ep / adv.ratio, rtol=1e-9)
    # EP's alone crosses once, where the two-batch form overtakes; the deployment then is that form
    h = w["ep"]["flips_at"]
    assert len(h) == 1 and 0 < h[0] < 1
    assert np.all(ep[FLIP_OVERLAPS < h[0]] > 1) and np.all(ep[FLIP_OVERLAPS > h[0]] < 1)
    assert [(s["design"], s["from"], s["to"]) for s in w["ep"]["leads"]] == [("AFD", 0.0, h[0]), ("EP", h[0], 1.0)]
    assert w["ep"]["deployment"]["form"] == "EP, 2 micro-batches, low-latency kernels"
    # the text names each what-if and the other design as scheduled
    lines = [r for r in adv.reasons if r.startswith("overlap what-if")]
    assert [r.split(":")[0] for r in lines] == [f"overlap what-if, {WHAT_IFS['both']} (EP's on two micro-batches with "
                                                "low-latency kernels, its other forms as scheduled; AFD's on every form)",
                                                "overlap what-if, " + WHAT_IFS["ep"].format(afd="as scheduled"),
                                                "overlap what-if, " + WHAT_IFS["afd"].format(ep="as scheduled")]
    assert f"from {h[0]:.0%} to 100%" in lines[1]


def test_lead_stretches_by_hand():
    from afdlib.decision.overlap_whatif import crossings, leads, leads_text
    x = np.array([0.0, 0.5, 1.0])
    # 0.5 -> 1.5: crosses 1 halfway, at 0.25; 1.5 -> 0.5: again at 0.75
    r = np.array([0.5, 1.5, 0.5])
    assert np.allclose(crossings(x, r), [0.25, 0.75])
    assert [(s["design"], s["from"], s["to"]) for s in leads(x, r)] == [("EP", 0.0, 0.25), ("AFD", 0.25, 0.75),
                                                                       ("EP", 0.75, 1.0)]
    assert leads_text(leads(x, r)) == "EP leads from 0% to 25%, AFD from 25% to 75%, EP from 75% to 100%"
    assert leads_text(leads(x, np.array([1.2, 1.1, 1.3]))) == "AFD leads at every share from 0% to 100%"
    assert crossings(x, np.array([2.0, 1.5, 1.1])).size == 0
    # a crossing just short of 100% keeps its stretch visible: 0.996 reads 99.6%, not '100% to 100%'
    assert leads_text([{"design": "EP", "from": 0.0, "to": 0.996}, {"design": "AFD", "from": 0.996, "to": 1.0}]) == \
        "EP leads from 0.0% to 99.6%, AFD from 99.6% to 100.0%"
    # EP with no feasible deployment at a share: the ratio is infinite, None in the JSON
    from afdlib.decision.overlap_whatif import json_ratios
    assert json_ratios(np.array([1.5, np.inf])) == [1.5, None]


def test_advice_carries_the_probability_and_follows_it():
    """Without prices the recommendation is the more likely design: AFD exactly when P(AFD better)
    > 1/2; the JSON carries p_afd, the ratio's 10th-90th percentile around the median, and the words."""
    from afdlib.decision.advise import advise
    from afdlib.decode.step import DECODE_T_GAP_S
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget
    adv = advise(load_model("deepseek-v3"), load_hardware("h800"), Budget(slo_s=0.05, l_accept=1.0,
                 t_gap_s=DECODE_T_GAP_S), 4096, explain=False)
    doc = adv.to_json()
    assert 0 <= doc["p_afd"] <= 1 and doc["recommendation"] == ("AFD" if doc["p_afd"] > 0.5 else "EP")
    lo, hi = doc["ratio_interval"]
    assert lo < doc["uncertainty"]["ratio_median"] < hi
    assert doc["verdict"].startswith(doc["recommendation"]) and f"{doc['p_afd']:.2f}" in doc["verdict"]
    assert doc["decisive"] == (doc["p_afd"] <= 0.1 or doc["p_afd"] >= 0.9)


def test_p_afd_where_one_design_is_infeasible():
    """Only AFD feasible (no EP ratio): certain, 1; only EP (ratio 0): 0; both, no verdict computed: None."""
    from afdlib.decision.advise import Advice
    assert Advice("AFD", None, True, {}, {}, []).p_afd == 1.0
    assert Advice("EP", 0.0, True, {}, {}, []).p_afd == 0.0
    assert Advice("EP", 0.9, False, {}, {}, []).p_afd is None
    assert Advice("EP", 0.9, False, {}, {}, []).words() == "EP"


def test_advices_on_devices_searched_together_are_advise_pair_by_pair():
    """`afd advise --all` and the advice table search a model's devices of one structure together
    (afdlib.decision.advise.advices): every answer is the pair's own advise (without the reasons)."""
    import json

    from afdlib.decision.advise import advices, advise
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget
    model, budget = load_model("kimi-k2", profile="reference"), Budget(slo_s=0.05)
    hws = [load_hardware(h, profile="datasheet") for h in ("h800", "gb200", "h200")]   # H800 and H200 together
    together = advices(model, hws, budget, 4096)
    for h, adv in zip(hws, together):
        alone = advise(model, h, budget, 4096, explain=False)
        assert json.dumps(adv.to_json(), sort_keys=True) == json.dumps(alone.to_json(), sort_keys=True), h.slug
    # a pair that cannot be answered is its own error, naming its own device (FP4 weights on Hopper), and
    # the others are still answered
    fp4 = advices(model, hws, budget, 4096, precision=Precision.for_weights("nvfp4"))
    assert isinstance(fp4[0], AfdError) and "'h800'" in str(fp4[0])
    assert isinstance(fp4[2], AfdError) and "'h200'" in str(fp4[2])
    assert not isinstance(fp4[1], AfdError) and fp4[1].ratio > 0
