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
# # Modern MoE models: hybrid attention and the AFD-vs-EP answer
#
# The paper's six models attend over their whole context in every layer (MLA, GQA, MFA), so a
# request's cache, and the attention side's work for it, grow with the context in every layer. Many
# MoE models of 2025-2026 keep full attention in a few layers only: linear attention (Gated DeltaNet)
# or Mamba-2 layers hold a constant state instead of a cache, sliding-window layers keep the last
# tokens, and DeepSeek-V4 compresses its cache. This chapter places {glue:text}`n_models` of them, each read from its
# published `config.json` ({glue:text}`model_list`), in the previous chapter's comparison: for each
# model and GPU it searches the best EP and the best AFD deployment under the same SLO and compares
# their output tokens per second per GPU, once for the model as published and once for the same model
# read as if every token-mixing layer were full attention (its own full-attention layers' heads, the
# rest of the model unchanged).
#
# **Result.** At the paper's context of {glue:text}`ctx` tokens the hybrid layers divide the cache and
# state a request holds by {glue:text}`kv_factors` against full attention everywhere, and the
# requests that fit on an attention GPU are multiplied by {glue:text}`fit_factors` (medians over the GPUs). Both designs keep that cache on the GPUs
# that run attention (EP: every GPU), so both gain or lose together: EP's tokens/s per GPU change by
# {glue:text}`ep_gains`, AFD's by {glue:text}`afd_gains` (geometric means over the
# {glue:text}`n_hw` GPUs). The answer, AFD / EP, moves by the hybrid's ratio over its
# all-full-attention reading's: {glue:text}`shifts` (geometric mean and range over the GPUs,
# {numref}`modern-moe-ratios`). Over all {glue:text}`n_pairs` model-GPU pairs hybrid attention moves
# the answer {glue:text}`direction`, by a geometric mean of {glue:text}`overall_shift`, most for
# {glue:text}`largest`; it moves toward EP in {glue:text}`n_toward_ep` pairs and changes the design
# ahead at the model's defaults in {glue:text}`n_flips` (their ratios, in both readings:
# {glue:text}`flip_range`). On {glue:text}`verdict_hw`, P(AFD better) is {glue:text}`verdicts`
# (as published, then all full attention): {glue:text}`n_decided` of {glue:text}`n_verdicts` verdicts
# decided. At {glue:text}`long_ctx` tokens, where the cache factors are {glue:text}`long_kv`, the
# shifts on {glue:text}`long_hw` are {glue:text}`long_shifts`. So hybrid attention changes how much
# each GPU serves on both designs, and {glue:text}`conclusion`.

# %% tags=["parameters"]
hardware = ["h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300"]
models = ["qwen3.5-397b-a17b", "nemotron-3-super", "mimo-v2-flash", "deepseek-v4-flash"]
hw_profile = "datasheet"
slo_ms = 50.0
context = 4096
mtp = 1.0                        # accepted tokens per step (1: no MTP)
weights = "fp8"                  # every model's experts and dense layers (the paper's precision)
reference = "h800"               # the device of the table
verdict_hardware = ["h800"]      # devices with P(AFD better) (about half a second a pair)
long_context = 131072            # a long context, read on long_hardware only
long_hardware = ["h800", "gb200"]
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(), hardware=_p.list_of(_p.text), models=_p.list_of(_p.text), hw_profile=_p.PROFILE_HW, slo_ms=_p.positive,
    context=_p.positive, mtp=_p.positive, weights=_p.text, reference=_p.text, verdict_hardware=_p.list_of(_p.text, min_len=0),
    long_context=_p.positive, long_hardware=_p.list_of(_p.text), output_dir=_p.text)
import numpy as np
import pandas as pd

from afdlib.studies.modern_study import hybrid_study
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.decision.uncertainty import DECIDED
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget, Precision
from afdlib.report.figures.modern import hybrid_heatmap
from afdlib.report.style import glue_all, glue_figure, glue_table, save_data, setup_style

setup_style()
budget = Budget(slo_s=slo_ms / 1e3, l_accept=mtp, t_gap_s=DECODE_T_GAP_S)
precision = Precision.for_weights(weights)
hws = [load_hardware(h, profile=hw_profile) for h in hardware]
ms = [load_model(m, profile="reference") for m in models]
study = hybrid_study(ms, hws, budget, context, precision, verdict_hardware=tuple(verdict_hardware))
pairs, summary = study.pairs(), study.summary()
save_data(pd.DataFrame(study.rows), "modern_moe_pairs", output_dir)
glue_figure(hybrid_heatmap(list(study.rows), pairs), "modern_moe_ratios", output_dir)
long_hws = [load_hardware(h, profile=hw_profile) for h in long_hardware]
long = hybrid_study(ms, long_hws, budget, long_context, precision)
save_data(pd.DataFrame(long.rows), "modern_moe_long_context", output_dir)
hw_name = {h.slug: h.name for h in hws + long_hws}


def per_model(rows, key, fmt):
    return ", ".join(f"{fmt.format(r[key])} ({r['model_name']})" for r in rows)


verdicts = [p for p in pairs if np.isfinite(p["p_afd"])]
shift_all = np.exp(np.mean(np.log([p["shift"] for p in pairs])))
slower = [s for s in summary if min(s["ep_gain"], s["afd_gain"]) < 0.99]
shift_ext = [f(p["shift"] for p in pairs + long.pairs()) for f in (min, max)]
states = {m.name: mx.state_dtype.upper() for m in ms for mx in m.mixers if mx.kind in ("linear", "mamba")}
declared = [f"{m.name}'s checkpoint declares {m.weights_dtype.upper()} experts" for m in ms
            if m.weights_dtype and m.weights_dtype != weights]
largest = max(summary, key=lambda s: abs(np.log(s["shift"])))
flipped = [p["ratio"] for p in pairs if (p["ratio"] > 1) != (p["ratio_full"] > 1)] + [
    p["ratio_full"] for p in pairs if (p["ratio"] > 1) != (p["ratio_full"] > 1)]
glue_all({
    "model_list": ", ".join(m.name for m in ms), "ctx": f"{context:,.0f}", "slo": f"{slo_ms:g}", "n_hw": len(hws),
    "kv_factors": per_model(summary, "kv_factor", "{:.2f}"), "fit_factors": per_model(summary, "fit_factor", "{:.2f}"),
    "ep_gains": per_model(summary, "ep_gain", "{:.2f}x"), "afd_gains": per_model(summary, "afd_gain", "{:.2f}x"),
    "shifts": "; ".join(f"{s['shift']:.2f} for {s['model_name']} ({s['shift_min']:.2f} to {s['shift_max']:.2f})"
                        for s in summary),
    "n_pairs": len(pairs), "n_toward_ep": sum(s["toward_ep"] for s in summary), "n_flips": sum(s["flips"] for s in summary),
    "direction": "toward EP" if shift_all < 1 else "toward AFD", "overall_shift": f"{shift_all:.3f}",
    "largest": f"{largest['model_name']}, {largest['shift']:.2f} ({'toward EP' if largest['shift'] < 1 else 'toward AFD'})",
    "flip_range": f"{min(flipped):.2f} to {max(flipped):.2f}" if flipped else "none",
    "n_less": sum(1 < s["kv_factor"] > max(s["ep_gain"], s["afd_gain"]) for s in summary), "n_models": len(summary),
    "n_shrink": sum(s["kv_factor"] > 1 for s in summary), "usable": f"{Assumptions().hbm_usable_fraction:.0%}",
    "states": "; ".join(f"{t} for {n}" for n, t in states.items()) or "none of these models has one",
    "declared": ("; " + "; ".join(declared) + ", which afd advise uses where the device has that rate and refuses "
                 "elsewhere (its weights option reads it as here)") if declared else "",
    "mtp_words": "no MTP" if mtp == 1 else f"MTP at {mtp:g} accepted tokens per step",
    "mtp_limit": ("No MTP, although several of these models ship MTP layers" if mtp == 1 else
                  f"MTP at {mtp:g} accepted tokens per step for every model, whatever its own MTP layers"),
    "hw_words": f"{hw_profile} hardware",
    "verdict_hw": ", ".join(hw_name[h] for h in verdict_hardware) or "no device (none asked for)",
    "verdicts": "; ".join(f"{p['p_afd']:.2f} and {p['p_afd_full']:.2f} for {p['model_name']}" for p in verdicts) or "not computed",
    "n_verdicts": 2 * len(verdicts), "decided": f"at most {DECIDED:g} or at least {1 - DECIDED:g}",
    "n_decided": sum((p <= DECIDED or p >= 1 - DECIDED) for v in verdicts for p in (v["p_afd"], v["p_afd_full"])),
    "conclusion": f"moves the answer, AFD / EP, by factors of {shift_ext[0]:.2f} to {shift_ext[1]:.2f} (both contexts)",
    "long_ctx": f"{long_context:,.0f}", "long_hw": " and ".join(hw_name[h] for h in long_hardware),
    "long_shifts": "; ".join(" and ".join(f"{p['shift']:.2f}" for p in long.pairs() if p["model"] == m.slug)
                             + f" for {m.name}" for m in ms),
    "long_kv": per_model(long.summary(), "kv_factor", "{:.1f}"),
    "slower": ("none" if not slower else "; ".join(
        f"{s['model_name']} (its mixers move {1 / s['step_factor']:.2f}x the bytes full attention would)"
        for s in slower)),
    "step_factors": per_model(summary, "step_factor", "{:.2f}"), "ref_name": hw_name[reference],
    "weights_words": f"{weights.upper()} experts and dense layers", "weights_arg": weights})
table = pd.DataFrame(study.table(reference)).set_index("model").T   # a row per quantity: fits the page
glue_table("tab_modern_models", table.rename_axis("published / all full").reset_index().style.hide(axis="index"))

# %% [markdown]
# ```{glue:figure} fig_modern_moe_ratios
# :name: modern-moe-ratios
#
# Top: AFD / EP output tokens per second per GPU, best deployment of each, SLO {glue:text}`slo` ms,
# context {glue:text}`ctx`, {glue:text}`mtp_words`, {glue:text}`hw_words`, for each model as published and read as all
# full attention (orange: AFD ahead), with P(AFD better) below the ratio on {glue:text}`verdict_hw`
# ('?': undecided, P between the bounds that decide); elsewhere the ratio at the model's defaults
# alone. Bottom: the hybrid's ratio over its all-full-attention reading's (purple, below 1: the hybrid
# layers move the answer toward EP). Every cell is `afd advise --model M --hardware H --weights`
# {glue:text}`weights_arg` for the published model. Data: {download}`modern_moe_pairs.csv <figures/modern_moe_pairs.csv>`.
# ```
#
# ## What the hybrid layers change
#
# :::{table} The {glue:text}`n_models` models on {glue:text}`ref_name`, each cell as published / read as all full attention, at context {glue:text}`ctx`
# :name: tab-modern-models
#
# ```{glue:md} tab_modern_models
# :format: myst
# ```
# :::
#
# {numref}`tab-modern-models` gives, per model (a column each), its token mixers (`afd model --model M` lists them
# with the config fields read), its parameters, the cache and constant state one request holds
# (BF16 cache; recurrent states in the type the config declares: {glue:text}`states`),
# the bytes the mixers read and write per request and decode step, the requests of that context that
# fit on one attention GPU beside its weights ({glue:text}`usable` of its HBM), and each design's best tokens/s per
# GPU. Against full attention everywhere, the hybrid layers divide the cache by
# {glue:text}`kv_factors` at this context, the requests that fit by {glue:text}`fit_factors` (median
# over the GPUs), and the mixers' bytes per request and step by {glue:text}`step_factors`. In
# {glue:text}`n_less` of the {glue:text}`n_shrink` models whose cache shrinks both designs gain less
# than the cache shrinks: a decode step's attention side costs the bytes its mixers move, and a constant state is
# read and written every step whatever the context, while a short context's cache is small. Models a
# design serves more slowly as published than with full attention everywhere (by more than 1%, over
# the GPUs): {glue:text}`slower`.
#
# Why the ratio moves much less than each design's tokens/s: the cache sits on the GPUs that run attention in both designs, so a
# smaller one lets both run larger batches at the same SLO, and the FFN side's gain from larger
# batches goes to both. The ratio moves only where the two designs' best deployments shift
# differently (their sizes, their kernels, the memory EP's experts leave for the cache).
#
# ## Limitations
#
# - The linear-attention and Mamba-2 layers are costed as the library's layer model states
#   (`afdlib.inputs.layers`): the state read and written once per step in HBM, timed like attention.
#   A kernel that kept the state on chip across steps, or in BF16, would cut those layers' bytes.
# - No published deployment of these models is in the validation: the decode model is checked on
#   full-attention models (DeepSeek-V3, Step-3, {doc}`decode_validation`); here its layer costs are
#   extrapolated to other layers.
# - Every model runs with {glue:text}`weights_words`, as the paper's models do{glue:text}`declared`.
# - The all-full-attention reading changes the mixers' weights as well as the cache (a linear
#   layer's projections become attention's), so it is a counterfactual of the whole layer, not of the
#   cache alone. P(AFD better) is computed on {glue:text}`verdict_hw` only (it re-runs both searches
#   at every setting of the shared assumptions); the other cells are ratios at the model's defaults, which decide nothing
#   (a pair is decided when P(AFD better) is {glue:text}`decided`).
# - {glue:text}`mtp_limit`; two contexts only (a hybrid's cache
#   grows more slowly with the context than full attention's, so its factors grow with it).

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
from afdlib.report.readable import show_chapter
show_chapter("modern_moe")
