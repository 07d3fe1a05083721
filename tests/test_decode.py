"""End-to-end decode model: operator work by hand, the evaluator, limits, DeepEP, the deployments."""
import json
from dataclasses import replace

import numpy as np
import pytest

from afdlib.evaluator.alltoall import distinct_destinations
from afdlib.evaluator.attention import attention_work, kv_cache_bytes, projection_params
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.cli import main
from afdlib.analysis.schedule import afd_moe_time
from afdlib.decode.step import Assumptions, afd_step, draft_tokens, ep_step
from afdlib.decode.batch import best_batch
from afdlib.errors import AfdError
from afdlib.analysis.hfu import hfu_sweep
from afdlib.analysis.imbalance import alpha_ep
from afdlib.evaluator.roofline import TIERS, Work, overlap, stage_time
from afdlib.inputs.specs import Budget, Precision
from afdlib.decode.validation import deepep_rows, load_deployments, validation_rows

NO_GAP = Budget(slo_s=1.0, l_accept=1.0, t_gap_s=0.0)


# ----------------------------------------------------------------------------- attention by hand

def test_mla_absorbed_decode_work_by_hand():
    m = load_model("deepseek-v3", profile="reference")
    # q: 7168 x 1536 + 1536 x 128 x 192 = 48,758,784; kv down: 7168 x 576 = 4,128,768;
    # absorbed k/v up: 2 x 128 x 128 x 512 = 16,777,216; o: 128 x 128 x 7168 = 117,440,512
    assert projection_params(m.attention, m.hidden_size)[0] == 187_105_280
    proj, core = attention_work(m, Precision(), 1, 1000, 1)
    # per token and cached position: 2 x 128 heads x (576 + 512) = 278,528 FLOPs (BF16 cache: BF16 rate)
    assert float(core.flops_bf16) == pytest.approx(278_528 * 1000) and float(core.flops_fp8) == 0
    assert float(core.hbm_bytes) == pytest.approx(1000 * 576 * 2)   # latent + rope key, BF16
    assert float(proj.flops_fp8) == pytest.approx(2 * 187_105_280)  # FP8 projections
    # two tokens per request (one MTP draft): FLOPs double, the cache is read once; an FP8 cache halves
    # the bytes but the kernel dequantizes to BF16 (FlashMLA): the FLOPs stay at the BF16 rate
    _, core2 = attention_work(m, Precision(kv_cache="fp8"), 1, 1000, 2)
    assert float(core2.flops_bf16) == pytest.approx(2 * 278_528 * 1000) and float(core2.hbm_bytes) == 576_000
    assert float(core2.flops_fp8) == 0


def test_gqa_and_mfa_work_by_hand():
    q = load_model("qwen3-235b-a22b", profile="reference")
    # q 4096 x 64 x 128 + k,v 4096 x 4 x 256 + o 64 x 128 x 4096 = 71,303,168
    assert projection_params(q.attention, q.hidden_size)[0] == 71_303_168
    _, core = attention_work(q, Precision(), 3, 100, 1)
    assert float(core.flops_bf16) == pytest.approx(3 * 100 * 2 * 64 * 256)   # 32,768 per token and position
    assert float(core.hbm_bytes) == pytest.approx(3 * 100 * 1024 * 2)        # 2 x 4 x 128 elements, BF16
    s = load_model("step3", profile="reference")
    # low-rank q 7168 x 2048 + 2048 x 64 x 256, one KV head 7168 x 512, o 64 x 256 x 7168 = 169,345,024
    assert projection_params(s.attention, s.hidden_size)[0] == 169_345_024
    _, core = attention_work(s, Precision(kv_cache="fp8"), 1, 4096, 1)
    assert float(core.hbm_bytes) == pytest.approx(4096 * 512)                # one head of 256 for K and V, FP8
    assert float(kv_cache_bytes(s, Precision(kv_cache="fp8"), 4096)) == pytest.approx(4096 * 512 * 61)


def test_local_window_layers_cap_the_cache():
    g = load_model("gpt-oss-120b", profile="reference")
    # 18 of 36 layers keep 128 tokens: at 10,000 tokens the average layer sees (10,000 + 128) / 2
    full = float(kv_cache_bytes(g.with_overrides(attention=replace(g.attention, local_layers=0, local_window=0)),
                                Precision(), 10_000))
    assert float(kv_cache_bytes(g, Precision(), 10_000)) == pytest.approx(full * 10_128 / 20_000)


# ----------------------------------------------------------------------------- evaluator

def test_stage_time_is_max_within_and_sum_across_operators():
    h = load_hardware("h800")  # paper profile: 1979 TFLOP/s, 3.35 TB/s, 160 / 50 GB/s
    a = Work(flops_fp8=1979e9, hbm_bytes=3.35e9 / 2)          # 1 ms compute, 0.5 ms memory
    b = Work(scale_out_bytes=100e6, fixed_s=1e-4)             # 2 ms scale-out + 0.1 ms fixed
    st = stage_time([a, b], h)
    assert float(st.seconds) == pytest.approx(1e-3 + 2e-3 + 1e-4)
    assert float(st.serial) == pytest.approx(1e-3 + 0.5e-3 + 2e-3 + 1e-4)
    assert TIERS[int(st.bound)] == "scale-out"
    assert float(stage_time(a, h, compute_efficiency=0.5).seconds) == pytest.approx(2e-3)
    assert overlap(3.0, 2.0, 1.0) == 3.0 and overlap(3.0, 2.0, 0.0) == 5.0 and overlap(3.0, 2.0, 0.5) == 4.0


def test_binding_tier_is_the_largest_sum_of_each_operators_longest_tier():
    h = load_hardware("h800")
    # operator a binds on compute (x ms), operator b on HBM (1.5 ms; its 0.1 ms of compute does not
    # count): the stage is compute-bound where x > 1.5, HBM-bound where x < 1.5, and a tie (x = 1.5)
    # goes to the first tier, compute
    x = np.array([2e-3, 1e-3, 1.5e-3])
    a = Work(flops_fp8=1979e12 * x, hbm_bytes=3.35e12 * 0.5e-3)
    b = Work(flops_fp8=1979e12 * 0.1e-3, hbm_bytes=3.35e12 * 1.5e-3)
    st = stage_time([a, b], h)
    assert st.seconds == pytest.approx(x + 1.5e-3)
    assert [TIERS[int(k)] for k in st.bound] == ["compute", "hbm", "compute"]


# ----------------------------------------------------------------------------- all-to-all vs DeepEP

# DeepEP low-latency kernels, H800 + CX-7, 128 tokens, top-8, hidden 7168 (shared reference 1.3):
# EP size: (dispatch us, combine us)
DEEPEP_LL = {16: (118, 195), 32: (155, 273), 64: (173, 314), 128: (192, 369), 256: (194, 360)}


def test_low_latency_all_to_all_against_deepep():
    rows = {r["ep_size"]: r for r in deepep_rows()}
    for ep, (dispatch, combine) in DEEPEP_LL.items():
        r = rows[ep]
        assert (r["dispatch_us"], r["both_us"]) == (dispatch, dispatch + combine)  # the data file is the source's
        # the model (busiest receiver, 80% of the NIC and of NVLink, 10 us per message): within 11%
        assert r["model_dispatch_us"] == pytest.approx(dispatch, rel=0.11), ep
        assert r["model_both_us"] == pytest.approx(dispatch + combine, rel=0.11), ep
    # one node (EP8): the kernels reach about 100 GB/s, the model assumes NVLink's 160: a recorded miss
    assert rows[8]["model_both_us"] / rows[8]["both_us"] - 1 == pytest.approx(-0.34, abs=0.03)


def test_distinct_destinations():
    # K = 8 experts over 2 nodes: 2 (1 - 0.5^8) = 1.992; over 1: 1; many nodes: about K
    assert float(distinct_destinations(8, 2)) == pytest.approx(1.9921875)
    assert float(distinct_destinations(8, 1)) == pytest.approx(1.0)
    assert float(distinct_destinations(8, 1e6)) == pytest.approx(8, rel=1e-4)


# ----------------------------------------------------------------------------- limits

def _lean(model):
    """No dense layers (nor their layers), no shared experts, no LM head: attention and routed experts alone."""
    return model.with_overrides(dense_layers=0, num_layers=model.moe_layers, vocab_size=0, shared_experts=0)


def test_ep_reduces_to_the_paper_penalty():
    # FFN compute-bound and no network or fixed costs: the step slows by exactly alpha_EP(sigma, t_a / t_f)
    m = _lean(load_model("deepseek-v3", profile="reference"))
    h = load_hardware("h800").with_overrides(scale_out_bytes_per_s=1e30, scale_up_bytes_per_s=1e30)
    # one scalar FLOP fraction for every operator (the calibrated profile's fractions move with the load)
    base = Assumptions(kernel_overhead_s=0.0, ep_overlap=1.0, sigma=1.0, kernel_profile="datasheet")
    fast = ep_step(m, h, 8, 4096, 100, NO_GAP, assumptions=base)
    for sigma in (0.7, 0.85):
        slow = ep_step(m, h, 8, 4096, 100, NO_GAP, assumptions=replace(base, sigma=sigma))
        lam = float(fast.t_attn / fast.t_ffn)
        assert float(slow.tokens_per_s_per_gpu / fast.tokens_per_s_per_gpu) == pytest.approx(
            float(alpha_ep(sigma, lam)), rel=1e-3)


def test_afd_bubbles_are_the_papers_conditions_and_ffn_hfu_stays_under_the_ceiling():
    m = _lean(load_model("deepseek-v3"))
    h = load_hardware("h800")  # paper profile
    a = Assumptions(kernel_overhead_s=0.0, sigma=1.0, matmul_efficiency=1.0)
    reqs = np.geomspace(1, 3000, 60)
    best, seen_attn, seen_ffn = 0.0, False, False
    for n_attn in (1, 2, 4, 8, 16):
        st = afd_step(m, h, h, n_attn, 1, reqs, 4096, replace(NO_GAP, micro_batches=3), assumptions=a)
        # where a pool sets the pace (its stage is the longest), it runs without bubbles exactly when the
        # paper's condition holds: Eq. 3 for attention, Eq. 4 for the FFN
        longest = np.maximum.reduce([st.t_attn, st.t_ffn, st.t_comm])
        attn_paces, ffn_paces = st.t_attn >= longest, st.t_ffn >= longest
        seen_attn, seen_ffn = seen_attn | attn_paces.any(), seen_ffn | ffn_paces.any()
        assert np.array_equal((st.afd.bubble_attn <= 1e-12)[attn_paces], st.afd.no_attention_bubble[attn_paces])
        assert np.array_equal((st.afd.bubble_ffn <= 1e-12)[ffn_paces], st.afd.no_ffn_bubble[ffn_paces])
        # the FFN GPU's FLOPs over its share of the layer never beat the paper's ceiling (N_F = 1: each
        # token crosses scale-out once and fans out over scale-up); the model lets the 1/g of copies
        # that land on the forwarding GPU itself skip scale-up, hence the factor g / (g - 1)
        pairs = reqs / 3 * n_attn * 8 / 8 * m.experts_per_token
        hfu = 6 * pairs * m.hidden_size * m.moe_intermediate_size / (h.flops * st.t_layer / 3)
        ceiling = hfu_sweep(m, h, np.array([1]))[0]["comm_ceiling"][0] * 8 / 7
        assert np.all(hfu <= min(1.0, ceiling) + 1e-9)
        best = max(best, hfu.max())
    assert seen_attn and seen_ffn
    assert best >= 0.95 * min(1.0, ceiling)  # and reaches it with enough attention nodes and requests


def test_throughput_rises_with_bandwidth_and_falls_with_context():
    m = load_model("deepseek-v3", profile="reference")
    h = load_hardware("h800", profile="datasheet")
    base = ep_step(m, h, 64, 64, 4096, NO_GAP)
    fat = ep_step(m, h.with_overrides(scale_out_bytes_per_s=4 * h.scale_out_bytes_per_s), 64, 64, 4096, NO_GAP)
    assert float(fat.tokens_per_s_per_gpu) > float(base.tokens_per_s_per_gpu)
    ctx = np.array([1024, 4096, 16384])
    assert np.all(np.diff(ep_step(m, h, 64, 64, ctx, NO_GAP).tokens_per_s_per_gpu) < 0)


def test_best_batch_is_the_largest_meeting_slo_and_memory():
    m = load_model("deepseek-v3", profile="reference")
    h = load_hardware("h800", profile="datasheet")
    b = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.003)
    step_of = lambda r: ep_step(m, h, 144, r, 4096, b, redundant=32)  # noqa: E731
    n, st = best_batch(step_of, b.slo_s)
    assert float(st.tpot_s) <= 0.05 and bool(st.fits_memory)
    nxt = step_of(np.array(n + 1.0))
    assert float(nxt.tpot_s) > 0.05 or not bool(nxt.fits_memory)
    with pytest.raises(AfdError, match="no batch"):
        best_batch(step_of, 0.001)


def test_mtp_drafts():
    assert draft_tokens(1.0) == 0 and draft_tokens(1.7) == 1 and draft_tokens(2.0) == 1 and draft_tokens(2.4) == 2
    m = load_model("deepseek-v3", profile="reference")
    h = load_hardware("h800", profile="datasheet")
    one = ep_step(m, h, 144, 64, 4096, NO_GAP)
    mtp = ep_step(m, h, 144, 64, 4096, replace(NO_GAP, l_accept=1.8))
    # verification work is counted: 1.8 tokens per step cost more than one step, so the gain is < 1.8x
    assert 1.0 < float(mtp.tokens_per_s_per_gpu / one.tokens_per_s_per_gpu) < 1.8


# ----------------------------------------------------------------------------- published deployments

# error recorded in the validation chapter (predicted / published - 1), default assumptions (calibrated
# kernels, overlap from the schedule), at the batch each source gives (Step-3: 6,144 requests over 16
# attention GPUs = 384 per attention GPU). Before issue 18 (datasheet kernels, EP half hidden, AFD all):
# 0.170, -0.062, 0.039, 0.211, -0.104 and Step-3 0.272 at its SLO batch (tests/test_kernels.py keeps them)
RECORDED_ERROR = {
    # issue 18 item 2: kernels refitted on DeepGEMM/FlashMLA and aiconfigurator's kernel tables (fixed
    # cost 5.1 us per kernel, was 2.52; Blackwell GEMM HBM fraction 0.74): was 0.375, 0.159, 0.284,
    # 0.308, -0.0485, 0.068 (0.227 at the SLO batch)
    "deepseek-v3-h800-ep144-online": 0.254,
    # issue 28: the profile's step verifies one MTP draft at LMSYS's 60% acceptance (was 0.042 at one
    # token per step); the model's step at 1.6 tokens, 87.2 ms, is the 87.3 ms a reading of the profile gives
    "deepseek-v3-h800-ep128-profile": 0.010,
    "deepseek-v3-h100-ep72-sglang": 0.237,
    # issue 28: the GB200 cases re-read as their sources state them (part I: two-batch overlap disabled,
    # one micro-batch; part II: one micro-batch with combine beside the down GEMM and the shared experts,
    # single-batch overlap): were -0.080 and -0.322 with two micro-batches assumed
    "deepseek-v3-gb200-ep48-sglang-june": 0.120,
    "deepseek-v3-gb200-ep48-sglang-september": -0.060,
    # issue 28: SGLang/Ant Group's H20 tiers, single-batch overlap, FP8 attention compute and cache, MTP
    # (without SBO and FP8 attention compute: -0.25, -0.31, -0.27)
    "deepseek-r1-h20-ep16-ant-base": 0.072,
    "deepseek-r1-h20-ep16-ant-pro": -0.048,
    "deepseek-r1-h20-ep16-ant-max": -0.076,
    "step3-h800-2a2f": -0.016,   # 0.055 at the 477 requests its SLO and HBM allow (the second column)
    # issue 28: xDeepServe's pair on CloudMatrix384, per Ascend die (half a 910C: 376 TFLOPS BF16, INT8 at
    # twice that, 1.6 TB/s, 64 GB), INT8 weights, MTP 1.9. Colocated: the model's all-to-all is 143 us per
    # layer where the paper measures 234 + 312 us on average (its calls' maximum up to 10x their minimum):
    # the step is 74 ms against 93. AFD: 3 domains x 2 micro-batches, 96 requests per attention die
    "deepseek-r1-cloudmatrix384-xdeepserve-colocated": 0.278,
    "deepseek-r1-cloudmatrix384-xdeepserve-afd": 0.180,
}
ABOVE_BAND = {"deepseek-r1-h20-ep16-ant-pro", "deepseek-r1-h20-ep16-ant-max"}
"""EP cases at a published batch whose published figure lies above even the all-hidden reading (the
model is slow there for reasons other than the overlap: recorded, not hidden)."""
BELOW_BAND = {"deepseek-r1-cloudmatrix384-xdeepserve-colocated"}
"""EP cases at a published batch whose published figure lies below even the serial reading (one batch,
nothing hidden: the band is a point): xDeepServe's measured all-to-all is 3.8x the model's, stragglers
included (recorded, not hidden)."""
STEP3 = "step3-h800-2a2f"


def test_validation_table_does_not_drift():
    rows = {r["case"]: r for r in validation_rows()}
    assert set(rows) == set(RECORDED_ERROR)
    for case, err in RECORDED_ERROR.items():
        assert rows[case]["error"] == pytest.approx(err, abs=0.01), case
        assert rows[case]["fits_memory"], case
    errors = np.abs([r["error"] for r in rows.values()])
    # issue 18 interim: with the overlap derived from the schedule (EP hides 78-99% of what could
    # overlap, not an assumed 50%) EP is over-predicted until the kernels are calibrated (was 0.20, 0.35)
    assert np.median(errors) <= 0.30 and errors.max() <= 0.45
    # EP at a published batch: the published figure lies between the serial (nothing hidden) and
    # overlapped readings (not so for GB200, whose batch is assumed), except where it lies above both
    outside = {r["case"] for r in rows.values() if r["design"] == "ep" and r["batch_from"] in ("published", "derived")
               and not r["band_low"] <= r["published"] <= r["band_high"]}
    assert outside == ABOVE_BAND | BELOW_BAND
    assert all(rows[c]["published"] > rows[c]["band_high"] for c in ABOVE_BAND)
    assert all(rows[c]["published"] < rows[c]["band_low"] for c in BELOW_BAND)


def _rate(case, st):
    """Tokens/s per GPU of a case's step, from its step time (AFD: the attention GPUs' tokens over both pools)."""
    f, served = case.facts, float(st.requests) * float(case.facts["l_accept"]) / float(st.step_s)
    if case.design == "ep":
        return served
    g_a, g_f = (load_hardware(f[k], profile="datasheet").gpus_per_node for k in ("attn_hardware", "ffn_hardware"))
    return served * f["n_attn"] * g_a / (f["n_attn"] * g_a + f["n_ffn"] * g_f)


def test_every_case_of_either_design_has_a_band_around_its_schedule():
    # one footing: EP's band is its ep_overlap override at 0 and 1, AFD's its afd_overlap override;
    # the schedule's own prediction lies inside for every case, and no band is a point except where
    # nothing can hide (one micro-batch without single-batch overlap: the serial sum)
    from afdlib.decode.validation import OVERLAP_OVERRIDE, predict
    cases = load_deployments()
    rows = validation_rows(cases)
    assert {r["design"] for r in rows} == {"ep", "afd"}
    for r in rows:
        assert r["band_low"] < r["predicted"] * (1 + 1e-9) and r["predicted"] < r["band_high"] * (1 + 1e-9), r["case"]
        case = cases[r["case"]]
        serial = case.design == "ep" and r["micro_batches"] == 1 and not case.facts.get("sbo")
        assert (r["band_high"] == pytest.approx(r["band_low"], rel=1e-12)) if serial else \
            (r["band_high"] > 1.01 * r["band_low"]), r["case"]
        for share, end in ((0.0, "band_low"), (1.0, "band_high")):
            st = predict(case, Assumptions(**{OVERLAP_OVERRIDE[case.design]: share}))
            t_a, t_f, t_c, m = float(st.t_attn), float(st.t_ffn), float(st.t_comm), st.micro_batches
            if case.design == "ep":   # Step times are of both micro-batches: compute t_a + t_f, all-to-all t_c
                layer = max(t_a + t_f, t_c) if share and not serial else t_a + t_f + t_c
            else:                     # per micro-batch: 1 the pipeline's steady state, 0 no transfer beside
                # compute, with the schedule's fill and drain over the L layers
                # (D attention domains: the FFN serves D m micro-batches, each domain runs m)
                d, n = case.facts.get("domains", 1), load_model(case.facts["model"]).moe_layers
                ideal = max(m * t_a, d * m * t_f, m * t_c, t_a + t_f + t_c)
                fill = float(afd_moe_time(t_a, t_f, t_c, m, n, domains=d)[0]) - n * ideal
                layer = ideal if share else max(m * t_a, d * m * t_f, t_a + t_f) + m * t_c + fill / n
            assert float(st.t_layer) == pytest.approx(layer, rel=1e-9), (r["case"], share)
            assert r[end] == pytest.approx(_rate(case, st), rel=1e-9), (r["case"], end)


def test_overlap_variations_set_both_designs_at_the_same_share():
    # the sensitivity table's overlap rows are the band's ends, for EP and AFD cases alike
    from afdlib.decode.validation import OVERLAP_ALL, OVERLAP_NONE, SENSITIVITY, sensitivity_rows
    cases = load_deployments()
    overlap = [v for v in SENSITIVITY if v[0] in (OVERLAP_NONE, OVERLAP_ALL)]
    assert [v[2] for v in overlap] == [{"ep_overlap": 0.0, "afd_overlap": 0.0}, {"ep_overlap": 1.0, "afd_overlap": 1.0}]
    assert not [v for v in SENSITIVITY if v not in overlap and {"ep_overlap", "afd_overlap"} & set(v[2])]
    band = {r["case"]: r for r in validation_rows(cases)}
    for r in sensitivity_rows(cases, variations=overlap):
        end = "band_low" if r["variation"] == OVERLAP_NONE else "band_high"
        assert r["predicted"] == pytest.approx(band[r["case"]][end], rel=1e-12), (r["case"], end)


def test_step3_is_evaluated_at_its_published_batch_and_at_the_slo_batch():
    rows = {r["case"]: r for r in validation_rows()}
    s3 = rows[STEP3]
    # Step-3 report sec. 7.3: 6,144 requests in three micro-batches of 2,048 over 2A = 16 attention GPUs
    assert s3["batch_per_gpu"] == 6144 / 16 == 3 * 2048 / 16 == 384
    assert s3["batch_from"] == "published" and s3["micro_batches"] == 3
    assert "6,144" in s3["batch_quote"] and "2,048" in s3["batch_quote"] and "16 attention GPUs" in s3["batch_quote"]
    # the second column: the largest batch meeting its 50 ms SLO and fitting in HBM, as before
    assert s3["batch_slo"] > s3["batch_per_gpu"] and s3["error_slo"] == pytest.approx(0.055, abs=0.01)   # 0.227 before the kernel refit
    assert s3["predicted_slo"] > s3["predicted"]   # throughput grows with the batch
    # cases without an SLO have no second column
    cases = load_deployments()
    assert all(np.isnan(r["predicted_slo"]) == (cases[c].facts.get("slo_ms") is None) for c, r in rows.items())


def test_every_batch_says_where_it_comes_from():
    from afdlib.decode.validation import BATCH_FROM
    rows = {r["case"]: r for r in validation_rows()}
    for slug, case in load_deployments().items():
        origin = case.facts["batch_from"]
        assert origin in BATCH_FROM, slug
        if origin in ("published", "derived"):   # the source's sentence is quoted
            assert len(rows[slug]["batch_quote"]) > 20, slug
        if origin == "assumed":
            assert "batch_per_gpu" in case.assumptions, slug
    # the sources as the file cites them: DeepSeek's profile states its batch, the online service's
    # is 14,800 tokens/s per node / 8 GPUs / 21 tokens/s per user = 88, the GB200 posts give none
    assert rows["deepseek-v3-h800-ep128-profile"]["batch_from"] == "published"
    assert "128 requests per GPU" in rows["deepseek-v3-h800-ep128-profile"]["batch_quote"]
    assert rows["deepseek-v3-h800-ep144-online"]["batch_from"] == "derived"
    assert rows["deepseek-v3-h800-ep144-online"]["batch_per_gpu"] == round(14_800 / 8 / 21)
    assert {rows[c]["batch_from"] for c in rows if "gb200" in c} == {"assumed"}


def _case_file(tmp_path, **changes):
    import yaml

    from afdlib.inputs.catalog import data_dir
    doc = yaml.safe_load((data_dir() / "deployments.yaml").read_text())
    entry = doc["deployments"][STEP3]
    for k, v in changes.items():
        if v is None:
            entry.pop(k, None)
        else:
            entry[k] = v
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump({"deployments": {STEP3: entry}}))
    return path


def test_deployments_file_cites_sources(tmp_path):
    for case in load_deployments().values():
        assert case.sources and "published" in case.sources
    bad = tmp_path / "d.yaml"
    bad.write_text("deployments:\n  x: {design: ep, model: deepseek-v3}\n")
    with pytest.raises(AfdError, match="missing"):
        load_deployments(bad)
    assert set(load_deployments(_case_file(tmp_path))) == {STEP3}   # the copy itself loads
    with pytest.raises(AfdError, match="batch_from must be one of"):
        load_deployments(_case_file(tmp_path, batch_from="reported"))
    with pytest.raises(AfdError, match="quotes .*batch_per_gpu"):
        load_deployments(_case_file(tmp_path, quotes={"micro_batches": "three micro-batches"}))
    with pytest.raises(AfdError, match="needs batch_per_gpu: null"):
        load_deployments(_case_file(tmp_path, batch_from="SLO and memory"))
    with pytest.raises(AfdError, match="micro_batches must be quoted .* or listed under assumptions"):
        load_deployments(_case_file(tmp_path, quotes={"batch_per_gpu": "6,144 over 16 attention GPUs"}))


def test_forms_map_to_the_deployments_that_validate_them():
    from afdlib.decode.validation import form_of, form_stated, validated_by, validated_forms
    cases = load_deployments()
    # DeepSeek's EP144: two micro-batches (dual-batch overlap) and DeepEP's low-latency kernels, as quoted
    assert "deepseek-v3-h800-ep144-online" in validated_by("ep", 2, "low-latency")
    assert validated_by("afd", 3) == (STEP3,)
    # a form no case states is not validated: one batch with normal kernels, AFD with 2 or 4 micro-batches
    stated = {form_of(c) for c in cases.values() if form_stated(c)}
    assert (("ep", 1, "normal") in stated) == bool(validated_by("ep", 1, "normal"))
    assert validated_by("ep", 1, "normal") == () and validated_by("afd", 2) == validated_by("afd", 4) == ()
    # a case whose form is assumed (SGLang's GB200 runs) validates nothing; SGLang's H100 run, whose two
    # micro-batches and low-latency kernels the post states (re-read for issue 28), validates its form
    validating = {s for slugs in validated_forms().values() for s in slugs}
    assert not any("gb200" in s and "sglang" in s for s in validating)
    assert "deepseek-v3-h100-ep72-sglang" in validated_by("ep", 2, "low-latency")
    assert set(validated_forms()) == stated


def test_validated_only_holds_the_search_to_validated_forms(ds, h800):
    from afdlib.decode.search import best_afd, best_ep
    budget = Budget(slo_s=0.05)
    free, held = best_ep(ds, h800, budget, 4096), best_ep(ds, h800, budget, 4096, validated_only=True)
    assert (held.deployment.micro_batches, held.deployment.kernels) == (2, "low-latency")
    assert free.tokens_per_s_per_gpu >= held.tokens_per_s_per_gpu   # a superset of candidates
    afd = best_afd(ds, h800, h800, budget, 4096, validated_only=True, max_nodes=4)
    assert afd.deployment.micro_batches == 3
    with pytest.raises(AfdError, match="no EP form searched here is validated"):
        best_ep(ds, h800, budget, 4096, micro_batches=(1,), modes=("normal",), validated_only=True)
    # one micro-batch is validated only with single-batch overlap (SGLang/Ant Group's H20 cases)
    one = best_ep(ds, h800, budget, 4096, micro_batches=(1,), validated_only=True).deployment
    assert (one.micro_batches, one.kernels, bool(one.sbo)) == (1, "low-latency", True)


def test_advise_names_the_deployments_behind_each_form(capsys):
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for design in ("ep", "afd"):
        d = doc[design]
        assert isinstance(d["validated_by"], list) and d["form"].startswith(design.upper())
        assert bool(d["validated_by"]) != ("not_validated" in d)
        assert any(r.startswith(d["form"] + ":") for r in doc["reasons"])
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800", "--json", "--validated-only"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ep"]["validated_by"] and doc["afd"]["validated_by"]
    assert (doc["ep"]["micro_batches"], doc["ep"]["kernels"]) == (2, "low-latency")


# ----------------------------------------------------------------------------- command

def test_throughput_command(capsys):
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144",
                 "--redundant", "32", "--context", "4989", "--batch-per-gpu", "88", "--mtp", "1.875", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"tokens_per_s_per_gpu", "tpot_ms", "batch_per_gpu", "breakdown"}
    assert doc["batch_per_gpu"] == 88
    assert doc["tokens_per_s_per_gpu"] == pytest.approx(1850 * (1 + RECORDED_ERROR["deepseek-v3-h800-ep144-online"]),
                                                        rel=0.01)
    assert {"attention_us", "ffn_us", "comm_us", "bound", "hidden_share"} <= set(doc["breakdown"])
    assert 0 < doc["breakdown"]["hidden_share"] <= 1   # two micro-batches, low-latency kernels: some hides
    assert main(["throughput", "--model", "step3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
                 "--n-ffn", "2", "--kv-cache", "fp8", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["gpus"] == 32 and doc["tpot_ms"] <= 50


@pytest.mark.parametrize("args, message", [
    (["--design", "ep"], "needs --ep-size"),
    (["--design", "ep", "--ep-size", "300"], "exceeds the routed"),
    (["--design", "afd", "--n-attn", "2"], "needs --n-attn and --n-ffn"),
    (["--design", "ep", "--ep-size", "8", "--batch-per-gpu", "100000"], "do not fit in memory"),
    (["--design", "ep", "--ep-size", "8", "--kv-cache", "fp7"], "unknown data type"),
    (["--design", "ep", "--ep-size", "8", "--slo-ms", "0.01"], "no batch"),
])
def test_throughput_bad_input(capsys, args, message):
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", *args]) == 2
    assert message in capsys.readouterr().err


def test_throughput_refuses_a_model_without_attention(tmp_path, capsys):
    f = tmp_path / "m.yaml"
    f.write_text("hidden_size: 1024\nmoe_intermediate_size: 512\nnum_layers: 4\ndense_layers: 0\nmoe_layers: 4\n"
                 "routed_experts: 8\nexperts_per_token: 2\nsource: test\n")
    assert main(["throughput", "--model", str(f), "--hardware", "h800", "--design", "ep", "--ep-size", "8"]) == 2
    assert "no attention description" in capsys.readouterr().err


def test_memory_errors_name_the_pool(capsys):
    # DeepSeek-V3's routed experts on one FFN node: 32 experts x 44 MB x 58 layers + shared = 84 GB > 72 GB usable
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "afd", "--n-attn", "1",
                 "--n-ffn", "1"]) == 2
    assert "FFN GPU's weights need" in capsys.readouterr().err


def test_stage_times_in_one_unit_for_both_designs():
    """EP's fields hold a layer's times over its m micro-batches, AFD's one micro-batch's:
    per_micro_batch divides EP's by m, per_layer multiplies AFD's by m, and the two agree: per_layer
    = m x per_micro_batch for either design."""
    from afdlib.decode.step import afd_step, ep_step
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget
    model, hw, budget = load_model("deepseek-v3"), load_hardware("h800"), Budget(slo_s=1.0)
    ep = ep_step(model, hw, 64, 128, 4096, budget, micro_batches=2)
    afd = afd_step(model, hw, hw, 2, 2, 128, 4096, budget, micro_batches=3)
    assert ep.per_micro_batch()[0] == pytest.approx(float(ep.t_attn) / 2)
    assert ep.per_layer()[0] == pytest.approx(float(ep.t_attn))
    assert afd.per_micro_batch()[1] == pytest.approx(float(afd.t_ffn))
    assert afd.per_layer()[1] == pytest.approx(3 * float(afd.t_ffn))
    for st in (ep, afd):
        for one, whole in zip(st.per_micro_batch(), st.per_layer()):
            assert whole == pytest.approx(st.micro_batches * one)


def test_measured_skew_gets_the_spare_slots_of_either_design():
    """One replica rule: a placement uses the slots the memory check charges beyond E. EP48 with 32
    redundant experts holds ceil(288 / 48) = 6 slots per GPU, 288 - 256 = 32 spare; AFD's FFN pool of
    6 nodes x 8 = 48 GPUs also holds ceil(256 / 48) = 6 per GPU, 32 spare (it used to get none)."""
    from afdlib.decode.step import afd_step, ep_step
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget
    seen = []

    def skew(ranks, redundant=0):
        seen.append((float(np.asarray(ranks)), float(np.asarray(redundant))))
        return np.ones_like(np.asarray(ranks, dtype=float))
    model, hw, budget = load_model("deepseek-v3"), load_hardware("h800"), Budget(slo_s=1.0)
    a = Assumptions(skew=skew)
    ep_step(model, hw, 48, 64, 4096, budget, assumptions=a, redundant=32)
    afd_step(model, hw, hw, 4, 6, 64, 4096, budget, assumptions=a)
    assert set(seen) == {(48.0, 32.0)}
