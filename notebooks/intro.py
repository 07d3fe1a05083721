# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # AFD or large-scale EP? A reproduction of arXiv 2602.09721
#
# **The answer.** {glue:text}`r_answer`
#
# ```{glue:figure} fig_intro_pairs
# :name: intro-pairs
#
# AFD / EP output tokens per second per GPU for {glue:text}`r_pair_grid` (AFD: attention and the
# MoE experts on separate GPU pools; EP: large-scale expert parallelism) at a per-token latency SLO
# (service-level objective) of {glue:text}`r_slo`, context 4096, no MTP (multi-token prediction),
# each design's best deployment; P(AFD better) below each ratio; '?': undecided.
# ```
#
# Serving a large mixture-of-experts (MoE) model in the decode phase, you can keep **large-scale
# expert parallelism (EP)**, where every GPU runs attention for its own batch and hosts a slice of
# the experts, or split the model into an attention pool and an FFN (expert) pool:
# **attention-FFN disaggregation (AFD)**. The paper *Revealing the Challenges of Attention-FFN
# Disaggregation for Modern MoE Models and Hardware Systems* (Liu et al., Baidu, arXiv 2602.09721,
# February 2026) {cite}`liu2026afd` answers analytically when AFD can win. It published no code and
# its figure images are not available to us: every figure here is regenerated from the formulas,
# in notebooks you can re-run with your own hardware and model.
#
# **The reproduction.** Every number the paper prints that this book can recompute is reproduced, with one
# erratum in the paper's imbalance formula. With a 400 Gb/s NIC per GPU the network caps the HFU (hardware FLOP utilisation: FLOP/s reached over peak across the whole stage budget) of
# the AFD FFN side of DeepSeek-V3 ({glue:text}`r_h800_max` on H800, {glue:text}`r_h800_floor` in the
# dead zone), and Superpod-class fabrics remove the dead zone ({glue:text}`r_gb200_max` on GB200 at
# any number of FFN nodes): a bound on one side's HFU, not an end-to-end verdict ({numref}`tab-intro-verdicts`
# and {numref}`tab-intro-departures` read the Superpod end to end). Three micro-batches lose the largest share of their throughput to jitter,
# as the paper says, yet at a coefficient of variation of 0.2 they still deliver more than two
# ({glue:text}`r_thr_3` against {glue:text}`r_thr_2` of the jitter-free pipeline). Beyond the
# paper: the book's end-to-end decode model has a median error of {glue:text}`r_val_median`
# (largest {glue:text}`r_val_max`) over {glue:text}`r_val_n` published deployments; it
# over-predicts {glue:text}`r_val_ep_over` of the {glue:text}`r_val_ep` EP deployments
# ({glue:text}`r_val_ep_range`), where, if its stage times are right, its ideal schedule hides more
# of the all-to-all than the deployments appear to, under-predicts the others ({glue:text}`r_val_ep_under`), and reads {glue:text}`r_val_afd` on {glue:text}`r_val_afd_n` (chapter
# {glue:text}`ch_val`). With it come the verdicts of {numref}`intro-pairs` (P(AFD better) from
# {glue:text}`r_p_range`, decided at P {glue:text}`r_decided_rule`; {numref}`tab-intro-verdicts`;
# chapter {glue:text}`ch_sweet`); for {glue:text}`r_ref_pair`, the paper's case for EP on ordinary
# clusters, the model says {glue:text}`r_ref_verdict`. Where AFD / EP exceeds 1, with thresholds, and how likely AFD is there are
# in {numref}`tab-intro-conditions`, and every place where the
# book departs from the paper, with the reason, in {numref}`tab-intro-departures` ({glue:text}`r_n_departures` of
# {glue:text}`r_n_checked` claims checked there).

# %% tags=["parameters"]
slo_ms = 50.0          # the SLO of the HFU bound's numbers below (the paper does not print its own)
# the grid of the verdicts and bandwidth windows below (the sweet-spot chapter's): the paper's models
# on its GPUs; the first model on H800 is the reference pair (DeepSeek-V3, the paper's case for EP)
models = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]
hardware = ["h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300"]
condition_points = 6   # points per condition of the paper's Table 3 below (the sweet-spot chapter's; a test runs 3)
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(globals(), slo_ms=_p.positive, models=_p.list_of(_p.text), hardware=_p.list_of(_p.text),
                    condition_points=_p.integer(2, 50), output_dir=_p.text)
_p.require_items("hardware", hardware, ["h800", "gb200"], "the landing page's ordinary and Superpod devices")
import numpy as np
import pandas as pd

from afdlib.peers.aiconfigurator import comparison_rows
from afdlib.report.book import chapter_numbers
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.evaluator.grouped_gemm import grouped_gemm_hfu, skewed_tokens
from afdlib.analysis.hfu import hfu_sweep
from afdlib.analysis.imbalance import alpha_afd, alpha_afd_as_printed
from afdlib.analysis.intensity import regime_borders
from afdlib.simulation.studies import ideal_sweep
from afdlib.inputs.specs import Budget
from afdlib.decode.validation import validation_rows
from afdlib.decision.advise import advice_table
from afdlib.report.computed import advice, shared
from afdlib.decision.uncertainty import DECIDED, assumption_words, ratio_spread_words
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.decision.sweetspot import pools_table
from afdlib.studies.sweetspot_study import advice_summary, pools_rows, verdict_table
from afdlib.studies.conditions import table3_study
from afdlib.studies.validation_readings import counted
from afdlib.report.landing import (bandwidth_windows, condition_table_rows, departure_table, landing_note, pairing_readings, probability_thresholds, recommendation_words)
from afdlib.report.figures import advice_heatmap
from afdlib.report.style import glue_all, glue_figure, glue_table, save_data
from afdlib.routing.provenance import routing_data

from afdlib.report.own_book import PAPER_MODELS, grid_words   # the paper's grid (its models' printed layers)

budget = Budget(slo_s=slo_ms / 1e3)
ds, kimi, glm = (load_model(m) for m in ("deepseek-v3", "kimi-k2", "glm-4.7"))
h800, gb200 = load_hardware("h800"), load_hardware("gb200")
s_h800 = hfu_sweep(ds, h800, np.arange(1, 65), budget)[1]
s_gb200 = {m.slug: hfu_sweep(m, gb200, np.arange(1, 65), budget)[1] for m in (ds, kimi, glm)}
borders = regime_borders(ds.experts_per_token, ds.routed_experts, h800.bandwidth_ratio, h800.gpus_per_node)
roof_740 = float(grouped_gemm_hfu(skewed_tokens(np.array(740.0), 8, np.array([0.0])), h800)[0])
# one grouped-GEMM call: two micro-batches, and MTP's two tokens per request or not
per_call = np.array([740.0 / 4, 740.0 / 2])
# (skew, call): balanced and the Figure 3 chapter's Zipf s = 1 over the 8 local experts
roof_call = grouped_gemm_hfu(skewed_tokens(per_call, 8, np.array([0.0, 1.0])[:, None]), h800)
penalty, printed = alpha_afd(0.8, 8, 2), float(alpha_afd_as_printed(1.0, 8, 2))
# the pipeline chapter's equal-stage study at its defaults (its MoE layers, 1000 steps, seed 0): the same numbers
ideal = pd.DataFrame(ideal_sweep([0.0, 0.2], (2, 3, 4), ds.moe_layers, 1000, 0)).set_index(["micro_batches", "cv"])
val = pd.DataFrame(validation_rows())
ep_val, afd_val = val[val.design == "ep"], val[val.design == "afd"]
ep_over = ep_val[ep_val.error > 0]
# the sweet-spot chapter's grid at its defaults: the paper's six models on its eight GPUs, context 4096, no MTP
sweet, sweet_budget = [load_model(m, profile="reference") for m in models], Budget(slo_s=slo_ms / 1e3, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
# computed once for this page and the sweet-spot chapter (afdlib.report.computed)
pairs = advice(sweet, sweet_hw := [load_hardware(h, profile="datasheet") for h in hardware], sweet_budget, 4096)
adv = advice_summary(pairs)
aic = pd.DataFrame(comparison_rows())


pct = "{:.1%}".format


glue_all({
        "r_h800_max": pct(s_h800.max_hfu), "r_h800_floor": pct(s_h800.dead_zone_floor),
        "r_gb200_max": pct(s_gb200["deepseek-v3"].max_hfu), "r_val_median": f"{val.error.abs().median():.1%}",
        "r_val_max": f"{val.error.abs().max():.1%}",
        "r_val_ep_over": len(ep_over), "r_val_ep": len(ep_val), "r_val_n": len(val),
        "r_val_ep_range": f"{ep_over.error.min():+.0%} to {ep_over.error.max():+.0%}",
        "r_val_ep_under": ", ".join(f"{e:+.0%}" for e in ep_val[ep_val.error <= 0].error) or "none",
        "r_val_afd": ", ".join(f"{e:+.1%}" for e in afd_val.error),
        "r_val_afd_n": "the " + counted(len(afd_val), "AFD deployment"), "r_pairs": adv.pairs, "r_afd": adv.afd,
        "r_ep": adv.ep, "r_ratio_range": f"{adv.ratio_min:.2f} to {adv.ratio_max:.2f}",
        "r_decided": f"{adv.decisive} of them", "r_decided_rule": f"at most {DECIDED:g} or at least {1 - DECIDED:g}",
        "r_p_range": f"{np.nanmin([r['p_afd'] for r in pairs]):.2f} to {np.nanmax([r['p_afd'] for r in pairs]):.2f}"})
loss = {m: ideal.throughput_loss[(m, 0.2)] for m in (2, 3, 4)}
glue_all({"r_thr_2": f"{ideal.throughput[(2, 0.2)]:.2f}", "r_thr_3": f"{ideal.throughput[(3, 0.2)]:.2f}", "r_raw":
          landing_note((routing := routing_data()).measured), "r_routing": routing.readings()["routing"]})
results = pd.DataFrame([
    {"claim": "Regime borders of tokens per FFN rank, DeepSeek-V3 on H800 (Fig. 2)", "paper": "N_F = 2.5, 8, 32",
     "this book": ", ".join(f"{v:g}" for v in borders.values()), "status": "reproduced",
     "chapter": "fig2_intensity"},
    {"claim": "HFU ceiling of the AFD FFN side, DeepSeek-V3 on H800 (Fig. 4)", "paper": "33.1%",
     "this book": pct(s_h800.max_hfu), "status": "reproduced", "chapter": "fig4_dead_zone"},
    {"claim": "Its dead-zone floor (N_F >= K)", "paper": "10.3%", "this book": pct(s_h800.dead_zone_floor),
     "status": "reproduced", "chapter": "fig4_dead_zone"},
    {"claim": "GB200: DeepSeek-V3 / Kimi-K2 / GLM-4.7", "paper": "65.5% / 65.5% / 49.2%",
     "this book": " / ".join(pct(s_gb200[m.slug].max_hfu) for m in (ds, kimi, glm)), "status": "reproduced",
     "chapter": "fig4_dead_zone"},
    {"claim": "EP's grouped GEMMs reach about 60% HFU at 740 tokens per expert (Fig. 3)", "paper": "~60% (measured)",
     "this book": f"roofline {pct(roof_740)} at 740 per step; per GEMM call {pct(roof_call[1, 1])}-"
                  f"{pct(roof_call[0, 1])} at {per_call[1]:.0f} tokens (MTP), {pct(roof_call[1, 0])}-"
                  f"{pct(roof_call[0, 0])} at {per_call[0]:.0f} (no MTP); Zipf s = 1 to balanced",
     "status": "beyond the paper",
     "chapter": "fig3_grouped_gemm"},
    {"claim": "AFD's imbalance penalty, sigma 0.8, 8A2F (Section 3.3)", "paper": f"printed form: {printed:.1f} at sigma = 1",
     "this book": f"{float(penalty.alpha):.4f} ({penalty.rounding}); 1 at sigma = 1", "status": "deviates (erratum)",
     "chapter": "fig6_penalty"},
    {"claim": "3BO lowers the tolerance to t_B fluctuations (Section 2)", "paper": "stated, not measured",
     "this book": f"loss at CV 0.2: {pct(loss[2])} / {pct(loss[3])} / {pct(loss[4])} (2/3/4BO)",
     "status": "beyond the paper", "chapter": "pipeline_jitter"},
    {"claim": "Imbalance penalises AFD more than EP (Fig. 5-6)", "paper": "at equal sigma",
     "this book": f"{routing.loads}, each design at its own sigma, compared at the same GPUs and tokens per "
                  "GPU; DP imbalance assumed", "status": "beyond the paper", "chapter": "sigma_from_routing"},
    {"claim": "End-to-end decode against published deployments", "paper": "-",
     "this book": f"median error {val.error.abs().median():.1%}, largest {val.error.abs().max():.1%} ({len(val)} cases); "
                  f"EP over-predicted in {len(ep_over)} of {len(ep_val)} ({ep_over.error.min():+.0%} to "
                  f"{ep_over.error.max():+.0%}; under: {', '.join(f'{e:+.0%}' for e in ep_val[ep_val.error <= 0].error)}), AFD {', '.join(f'{e:+.1%}' for e in afd_val.error)}",
     "status": "beyond the paper", "chapter": "decode_validation"},
    {"claim": "Where AFD can beat EP end to end (Section 4, the paper's Table 3)",
     "paper": "conditions, no thresholds; EP keeps the HFU lead on ordinary clusters",
     "this book": f"AFD / EP {adv.ratio_min:.2f} to {adv.ratio_max:.2f} over {adv.pairs} pairs (AFD ahead in "
                  f"{adv.afd}, EP in {adv.ep} as the more likely design); {adv.decisive} decided",
     "status": "beyond the paper", "chapter": "sweet_spots"},
    {"claim": "How afd advise decides", "paper": "-",
     "this book": f"P(AFD better) over {assumption_words()} (the ratio's error: {ratio_spread_words()}); decided at {DECIDED:g} or "
                  f"{1 - DECIDED:g}",
     "status": "beyond the paper", "chapter": "sweet_spots"},
    {"claim": "Against NVIDIA aiconfigurator (TPOT, time per output token: ours / its)", "paper": "-",
     "this book": f"EP {aic[aic.design == 'ep'].ratio_tpot_ms.median():.2f}, AFD "
                  f"{aic[aic.design == 'afd'].ratio_tpot_ms.median():.2f} (medians, {len(aic)} settings)",
     "status": "beyond the paper", "chapter": "aiconfigurator_comparison"},
])
save_data(results, "intro_results", output_dir)
chapters = chapter_numbers()
glue_all({"ch_sweet": chapters["sweet_spots"], "ch_val": chapters["decode_validation"]})
shown = results.assign(chapter=[f"{{doc}}`{chapters[c]} <{c}>`" for c in results.chapter])
glue_table("tab_intro_results", shown.style.hide(axis="index"))

# %% [markdown]
# :::{table} The paper's claims and this book's numbers (computed when the book is built; SLO {glue:text}`r_slo` where the paper leaves it open)
# :name: tab-intro-results
#
# ```{glue:md} tab_intro_results
# :format: myst
# ```
# :::
#
# In {numref}`tab-intro-results`, *reproduced*: the book's number equals the
# paper's; *deviates*: it does not, with the reason in the chapter; *beyond the paper*: a
# question the paper does not measure.

# %% tags=["hide-input"]
grid = grid_words(models, hardware)
glue_all({"r_slo": f"{slo_ms:g} ms", "r_printed": f"{printed:.1f}", "r_pair_grid": grid,
          "r_answer": recommendation_words(pairs, grid)})
glue_figure(advice_heatmap(pd.DataFrame(pairs), [h.slug for h in sweet_hw], [m.slug for m in sweet]), "intro_pairs", output_dir)
glue_table("tab_intro_verdicts", verdict_table(pairs, sweet, sweet_hw).T.map(lambda c: c.replace(" ", "\u00a0").replace("\u00a0(", " (")).rename_axis(
    "device").reset_index().style.hide(axis="index"))   # a row per device, a column per model: fits the page, a cell broken only before its parenthesis

# %% [markdown]
# :::{table} EP or AFD for {glue:text}`r_pair_grid`
# :name: tab-intro-verdicts
#
# ```{glue:md} tab_intro_verdicts
# :format: myst
# ```
# :::
#
# Each cell of {numref}`tab-intro-verdicts` (a row per device, a column per model) gives the more likely design,
# AFD / EP output tokens per second per GPU at the model's defaults, and in parentheses the probability
# that the design named gives more of them than the other under a {glue:text}`r_slo` SLO (context
# 4096, no MTP, each design's best deployment), over the model's uncertain assumptions; '?':
# undecided (P between the decision thresholds). The conditions behind
# these verdicts are in chapter {glue:text}`ch_sweet`.
#
# ## Where AFD comes out ahead, and how likely

# %% tags=["hide-input"]
hw_o, hw_s, hw_attn = (load_hardware(h, profile="datasheet") for h in ("h800", "gb200", "h20"))
ref = sweet[0]                                  # DeepSeek-V3, the reference model of the sweet-spot chapter
windows = bandwidth_windows(sweet, [hw_o, hw_s], sweet_budget, 4096)
thr = probability_thresholds(ref, hw_o, sweet_budget, 4096)
pool_rows = pools_rows(shared(pools_table, ref, [(hw_attn, hw_o), (hw_o, hw_attn), (hw_o, hw_o), (hw_attn, hw_attn)],
                                   sweet_budget, 4096), [hw_attn.slug, hw_o.slug], priced=False)
pairings = pairing_readings(pool_rows, hw_attn, hw_o)
conditions = pd.DataFrame(condition_table_rows(windows, [p[:2] for p in pairings]))
save_data(conditions, "intro_conditions", output_dir)
glue_all({"r_ref_name": ref.name, "r_ordinary": hw_o.name, "r_thresholds": thr.words(), "r_ref_now": f"{thr.at_own:.2f}",
          "r_ordinary_bw": f"{hw_o.scale_out_bytes_per_s / 1e9:.0f}", "r_grid": thr.grid_words(),
          "r_grid_step": f"{thr.bandwidth.size} bandwidths a factor {thr.bandwidth[1] / thr.bandwidth[0]:.2f} apart"})
glue_table("tab_intro_conditions", conditions.style.hide(axis="index"))

# %% [markdown]
# :::{table} Where AFD gives more output tokens per second per GPU than EP, and where it costs less per token
# :name: tab-intro-conditions
#
# ```{glue:md} tab_intro_conditions
# :format: myst
# ```
# :::
#
# {numref}`tab-intro-conditions` compares each design's best deployment (at the settings of
# {numref}`tab-intro-verdicts`) along the network bandwidth per GPU of the ordinary and the
# Superpod device (the NIC between an ordinary device's nodes, the whole fabric on a Superpod; sustained; the range
# `afd advise` searches for its break-even, {glue:text}`r_grid_step`, edges interpolated between them;
# near 1 a finer grid can split a stretch, chapter {glue:text}`ch_sweet`'s threshold figure), and,
# for the heterogeneous pools of {glue:text}`r_ref_name`, the price windows in which AFD costs less per
# output token than EP on either device alone.
#
# A ratio above 1 is not yet a win: for {glue:text}`r_ref_name` on {glue:text}`r_ordinary` (sustained
# NIC now {glue:text}`r_ordinary_bw` GB/s per GPU, P(AFD better) {glue:text}`r_ref_now` there), over the
# model's uncertain assumptions, {glue:text}`r_thresholds` (over {glue:text}`r_grid`).
#
# ## Where the book departs from the paper

# %% tags=["hide-input"]
sym = advice_table([ref], [hw_o], sweet_budget, 4096, assumptions=Assumptions(ep_overlap=1.0, afd_overlap=1.0), uncertain=False)
t3 = shared(table3_study, ref, sweet, hw_o, hw_s, load_hardware("b200", profile="datasheet"), pool_rows, hw_attn, hw_o,
                 sweet_budget, 4096, size=condition_points)   # the sweet-spot chapter's table of the paper's Table 3, its defaults
departures = departure_table(pairs, sym, t3, ref, hw_o, PAPER_MODELS)
save_data(departures, "intro_departures", output_dir)
glue_all({"r_n_departures": int(departures.departs.sum()), "r_n_checked": len(departures), "r_agree": "; ".join(
    departures.claim[~departures.departs]) or "none", "r_ref_pair": f"{ref.name} on {hw_o.name}",
    "r_ref_verdict": departures["this book"][0]})
shown_dep = departures[departures.departs].drop(columns="departs")
glue_table("tab_intro_departures", shown_dep.assign(chapter=[f"{{doc}}`{chapters[c]} <{c}>`" for c in shown_dep.chapter]).style.hide(
    axis="index"))

# %% [markdown]
# :::{table} Every claim of the paper where this book's number or method differs from it, and why
# :name: tab-intro-departures
#
# ```{glue:md} tab_intro_departures
# :format: myst
# ```
# :::
#
# {numref}`tab-intro-departures` is computed when the book is built (a claim whose reading agrees with the paper in a
# build drops out of the table: in this one, {glue:text}`r_agree`); the chapter holds the evidence. The paper's
# Table 3 conditions are the readings of {numref}`tab-sweet-table3` (each condition
# varied alone, both designs on one footing).

# %% [markdown]
# ## The chapters, in the order of the argument
#
# 1. **Setting**: {doc}`configurations` (the models and the hardware, with sources) and
#    {doc}`../notation`.
# 2. **The dead zone**: how many tokens an FFN rank can receive ({doc}`fig2_intensity`), the HFU
#    ceiling it implies ({doc}`fig4_dead_zone`), EP's grouped GEMMs for contrast
#    ({doc}`fig3_grouped_gemm`), and the ceiling against expert size and bandwidth
#    ({doc}`appendix_a_ceiling`).
# 3. **Imbalance**: the penalty with the erratum ({doc}`fig6_penalty`), where it comes from
#    ({doc}`fig5_timelines`), the pipeline under jitter ({doc}`pipeline_jitter`), and $\sigma$
#    from {glue:text}`r_routing`, compared like with like ({doc}`sigma_from_routing`).
# 4. **End to end**: the decode model against published deployments ({doc}`decode_validation`),
#    where AFD can win and the decision as a command ({doc}`sweet_spots`), and the same settings
#    through NVIDIA's aiconfigurator ({doc}`aiconfigurator_comparison`).
#
# **The erratum.** The paper's AFD penalty uses the constant $c = \lambda + 1$; with it a balanced
# load ($\sigma = 1$) would keep {glue:text}`r_printed` times its throughput for 8A2F, not 1. The
# book uses $c = (N_A + N_F) / N_A$ ({doc}`fig6_penalty`).
#
# **Caveats of the book's own findings.** The decode model's {glue:text}`r_val_n` validation cases were all named
# when it was built, and the sources' words behind their batches are as recorded, not yet re-read;
# its schedule over-predicts EP where the all-to-all crosses a NIC; the AFD side rests on one
# published deployment; the jitter magnitudes of real
# deployments are not published, so the pipeline chapter shows a range; and the routing data
# ({glue:text}`r_routing`) come from SGLang's published DeepSeek-V3 expert counts on benchmark
# prompts (the sigma and pipeline chapters each use one of its decode workloads), with no DP
# imbalance in them; {glue:text}`r_raw` ("Which findings need the raw files").
#
# ## Get it and re-run it
#
# ```bash
# git clone <this repository> && cd afd-roofline
# ./run book   # creates .venv, runs every notebook, builds _build/html
# ./run test   # the test suite
# # AFD or EP for a pair, with the reasons:
# .venv/bin/afd advise --model deepseek-v3 --hardware h800
# # this book for your own pair:
# .venv/bin/afd book --hardware my.yaml --model config.json --out mybook
# ```
#
# Every chapter's first code cell holds its parameters: `.venv/bin/papermill
# notebooks/fig2_intensity.ipynb out.ipynb -p hardware b200 -p model kimi-k2`. A hardware file is
# one YAML mapping (`name`, `gpus_per_node`, `fp8_tflops`, `hbm_tb_per_s`, `hbm_gb`,
# `scale_up_gb_per_s`, `scale_out_gb_per_s` or `superpod`, `source`); a model is any Hugging Face
# `config.json` of a MoE model. The catalogues (`data/hardware.yaml`, `data/models.yaml`) cite a
# source for every value; the `paper` profile reproduces the paper's Tables 4 and 5, the
# `datasheet` profile turns vendor numbers into sustained ones with named efficiency factors.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
from afdlib.report.readable import show_chapter
show_chapter("intro")
