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
# # Sweet spots: where AFD can beat EP, and the decision as a command
#
# The paper's third finding is a set of conditions under which AFD can beat large-scale EP:
# Superpod-class interconnects, coarse experts, low sparsity, heterogeneous hardware (the paper's Table 3),
# stated without thresholds. This chapter computes them with the end-to-end decode model of the
# previous chapter: for each model and hardware it searches the best EP deployment (EP size,
# redundant experts, kernels, one or two micro-batches, batch) and the best AFD deployment
# ($N_A$, $N_F$ up to 16 nodes each, widened where the best sits on that bound, 2-4 micro-batches,
# batch) under the same SLO, and compares
# their output tokens per second per GPU. The same search answers `afd advise`.
#
# **Result.** How much of its communication each design hides behind compute is not set per
# design: both come from one schedule, the max-plus schedule of the micro-batches' stages over
# each design's resources (previous chapter). Each verdict is a probability: the share of the
# model's uncertain assumptions ({glue:text}`assumption_list`) under which AFD gives more
# tokens/s per GPU, P(AFD better); a pair is decided when it is {glue:text}`decided`. Under the
# schedule {glue:text}`pair_grid` give {glue:text}`n_afd` of {glue:text}`n_pairs`
# pairs to AFD and {glue:text}`n_ep` to EP (the more likely design; AFD is ahead at the model's defaults
# in {glue:text}`n_ahead_defaults`, the orange cells of {numref}`sweet-spots-advice`), with P(AFD better) from
# {glue:text}`p_range`, and {glue:text}`n_decided_words`: the model's error in AFD / EP against
# published head-to-heads (one standard deviation: {glue:text}`ratio_spread`) enters every verdict
# ({glue:text}`tornado_top` move the reference pair's ratio most, {numref}`sweet-spots-tornado`), so a
# pair is decided only where AFD / EP lies below {glue:text}`band_lo` or above {glue:text}`band_hi` with
# every shared assumption known. The ratio's own rms error over those head-to-heads,
# {glue:text}`ratio_rms`, is {glue:text}`ratio_vs_designs` each design's error against its published
# deployments ({glue:text}`spreads`): what both designs share cancels in the ratio; with
# {glue:text}`n_sources` independent sources the verdict takes the ratio's error at its upper bound;
# {glue:text}`ratio_lean`.
# Two readings move the balance, in opposite
# directions. Held to the forms published deployments validate (below), AFD leads in
# {glue:text}`n_afd_val` pairs and EP in {glue:text}`n_ep_val`, with ratios of
# {glue:text}`range_val` ({glue:text}`n_decisive_val` decided). With the paper's idealisation for both
# designs, the overlap override at 1 (every two-micro-batch EP layer takes max(compute, all-to-all),
# whatever its kernels; AFD's pipeline runs at its steady state, without fill and drain), EP leads in
# {glue:text}`n_ep_sym` of {glue:text}`n_pairs` pairs, by a median factor of {glue:text}`median_sym`;
# this equal-overlap reading hides more than the schedule, which already over-predicts the
# published EP deployments whose all-to-all crosses a NIC (previous chapter).
# EP's lead is as large as its all-to-all is well hidden, and under the schedule {glue:text}`decided_reading`.
#
# The searches range wider than the validation: the best EP deployment's form (micro-batches,
# DeepEP kernels) is one that a published deployment states in {glue:text}`n_ep_validated` of the
# {glue:text}`n_pairs` pairs (best forms: {glue:text}`ep_forms` pairs). The form the EP search picks
# most, {glue:text}`ep_top_form` pairs, is {glue:text}`ep_top_validated` (in this model's schedule,
# which serialises DeepEP's normal kernels with compute, a second micro-batch hides nothing and only
# reads the weights and launches every kernel again, so one batch is their best). The best
# AFD deployment's form is validated in {glue:text}`n_afd_validated` ({doc}`decode_validation`
# lists the forms its cases state). `afd advise` names the deployments behind each answer's forms,
# or says that none is, and `--validated-only` holds both searches to the validated forms (the
# reading above; data: {download}`the validated-forms table <figures/sweet_spots_advice_validated.csv>`).

# %% tags=["parameters"]
hardware = ["h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300"]
models = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]
hw_profile = "datasheet"
slo_ms = 50.0
context = 4096
mtp = 1.0                        # accepted tokens per step (1: no MTP)
map_size = 12                    # cells per map axis
condition_points = 6             # points per condition of the paper's Table 3
ordinary = "h800"                # 8-GPU nodes with 400 Gb/s per GPU
superpod = "gb200"               # a Superpod-class system
superpod_twin = "b200"           # the same chip on 8-GPU nodes: its network is the Superpod's like-for-like baseline
reference_model = "deepseek-v3"
attention_pool = "h20"           # heterogeneous pools: memory-rich attention GPUs ...
ffn_pool = "h800"                # ... with compute-rich FFN GPUs
prices = None                    # e.g. {"h800": 2.0, "h20": 1.0}: USD per GPU-hour (none published here)
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(globals(), hardware=_p.list_of(_p.text), models=_p.list_of(_p.text), hw_profile=_p.PROFILE_HW,
                    slo_ms=_p.positive, context=_p.nonnegative, mtp=_p.positive, map_size=_p.integer(2, 200),
                    condition_points=_p.integer(2, 50),
                    ordinary=_p.text, superpod=_p.text, reference_model=_p.text, superpod_twin=_p.text,
                    attention_pool=_p.text, ffn_pool=_p.text, prices=_p.price_map, output_dir=_p.text)
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.report.computed import advice, shared
from afdlib.decode.bounds import bounds_reading
from afdlib.decision.decision import DECIDED, undecided_words
from afdlib.decision.verdict import verdict
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.decision.sweetspot import overlap_methods, pools_table
from afdlib.studies.threshold_study import bandwidth_curves, threshold_words
from afdlib.studies.sweetspot_words import afd_form_words, break_even_words, decided_words, equal_share_words, one_domain_note, duplex_words, paper_claim_words, paper_side, rests_on, top_row_clause
from afdlib.studies.sweetspot_study import (advice_summary, break_even, error_spread, heterogeneous_design,
                                           design_named, duplex_gain, maps_networks, network_words, overlap_readings, pools_named, pools_rows, property_maps, ratio_of, ratio_span, top_form, twins)
from afdlib.studies.conditions import table3_study
from afdlib.decode.validation import form_label, validation_rows
from afdlib.inputs.catalog import load_hardware, load_model, model_names
from afdlib.inputs.specs import Budget
from afdlib.report.figures import advice_heatmap, conditions_figure, ratio_bandwidth_figure, ratio_maps_figure, tornado_figure
from afdlib.peers.comparison import lean_readings
from afdlib.report.landing import verdict_glue
from afdlib.report.own_book import grid_words
from afdlib.report.style import glue_all, glue_figure, glue_table, save_data, setup_style

setup_style()
budget = Budget(slo_s=slo_ms / 1e3, l_accept=mtp, t_gap_s=DECODE_T_GAP_S)
hws = [load_hardware(h, profile=hw_profile) for h in hardware]
ms = [load_model(m, profile="reference") for m in models]
rows = advice(ms, hws, budget, context)     # computed once for this chapter and the landing page
table = pd.DataFrame(rows)
save_data(table, "sweet_spots_advice", output_dir)
fig = advice_heatmap(table, [h.slug for h in hws], [m.slug for m in ms])   # the table's keys
glue_figure(fig, "sweet_spots_advice", output_dir)
sym_rows = advice(ms, hws, budget, context, assumptions=Assumptions(ep_overlap=1.0, afd_overlap=1.0), uncertain=False)
save_data(pd.DataFrame(sym_rows), "sweet_spots_advice_equal_overlap", output_dir)
val_rows = advice(ms, hws, budget, context, validated_only=True)
save_data(pd.DataFrame(val_rows), "sweet_spots_advice_validated", output_dir)
(n, sym, val), err = (advice_summary(x) for x in (rows, sym_rows, val_rows)), error_spread(validation_rows())
top, sym_normal = top_form(rows, "ep"), sum(r.get("ep_form") == form_label("ep", 2, "normal") for r in sym_rows)
glue_all({
        "n_pairs": n.pairs, "n_decided_words": decided_words(n.decisive), "pair_grid": grid_words(models, hardware), "n_afd": n.afd, "n_ep": n.ep, "n_decisive": n.decisive, "n_ep_sym": sym.ep, "n_ahead_defaults": sum(r["ratio"] > 1 for r in rows),
        "n_afd_val": val.afd, "n_ep_val": val.ep, "n_decisive_val": val.decisive, "sym_normal": sym_normal,
        "range_val": f"{val.ratio_min:.2f} to {val.ratio_max:.2f}", "ep_top_form": f"{top[0]}, in {top[1]}",
        "ep_top_validated": "validated by a published deployment" if top[2] else "stated by no published deployment",
        "decided": f"at most {DECIDED:g} or at least {1 - DECIDED:g}", "undecided": f"between {DECIDED:g} and {1 - DECIDED:g}",
        "p_range": f"{table.p_afd.min():.2f} to {table.p_afd.max():.2f}", **verdict_glue(rows),
        "n_ep_validated": int(table.ep_validated.sum()), "n_afd_validated": int(table.afd_validated.sum()),
        "ep_forms": "; ".join(f"{f} in {k}" for f, k in table.ep_form.value_counts().items()),
        "max_validation_error": f"{err.high:+.1%}", "min_validation_error": f"{err.low:+.1%}",
        "afd_validation_error": ", ".join(f"{e:+.1%}" for e in err.afd), "afd_rests": rests_on(len(err.afd)),
        "ep_validation_errors": f"{err.ep_low:+.1%} to {err.ep_high:+.1%}", "afd_lean": f"{err.afd_lean[0]:+.0%} to {err.afd_lean[1]:+.0%}",
        "ratio_range": f"{n.ratio_min:.2f} to {n.ratio_max:.2f}", "median_sym": f"{sym.median_ep_over_afd:.2f}",
        "range_sym": f"{sym.ratio_min:.2f} to {sym.ratio_max:.2f}", "twins": "; ".join(f"{a} and {b}" for a, b in twins(rows)) or "none",
        **lean_readings()})

# %% [markdown]
# ```{glue:figure} fig_sweet_spots_advice
# :name: sweet-spots-advice
#
# AFD / EP output tokens per second per GPU, best deployment of each, SLO
# {glue:text}`slo` ms, context {glue:text}`ctx`, no MTP, datasheet hardware with the decode model's
# defaults (orange: AFD ahead at the defaults; the more likely design is P's), with P(AFD better) below each ratio ('?': undecided, P
# {glue:text}`undecided`). The ratios span
# {glue:text}`ratio_range`; with the overlap override at 1 for both designs (the equal-overlap
# reading) they span {glue:text}`range_sym`. Devices that give the same ratio for every model (their differences do
# not bind): {glue:text}`twins`. Data:
# {download}`sweet_spots_advice.csv <figures/sweet_spots_advice.csv>` (with each design's best
# configuration) and {download}`the equal-overlap table <figures/sweet_spots_advice_equal_overlap.csv>`.
# Every cell is `afd advise --model M --hardware H` (`--ep-overlap 1 --afd-overlap 1` gives the
# equal-overlap reading).
# ```

# %% tags=["hide-input"]
ref = load_model(reference_model, profile="reference")
hw_o, hw_s = load_hardware(ordinary, profile=hw_profile), load_hardware(superpod, profile=hw_profile)
half = advice([ref], [hw_o], budget, context, assumptions=Assumptions(ep_overlap=0.5, afd_overlap=0.5))
coarse = ratio_span(rows, ["step3", "ernie-4.5"], ["gb200", "gb300"])   # the paper's coarse experts on Superpods
bw_even, side = break_even(ref, hw_o, budget, context)
ref_v = verdict(ref, hw_o, budget, context)
glue_figure(tornado_figure(list(ref_v.tornado), f"{ref.name} on {hw_o.name}"), "sweet_spots_tornado", output_dir)
glue_all({
        "slo": f"{slo_ms:g}", "ctx": f"{context:g}", "ref_ordinary_half": f"{half[0]['ratio']:.2f}",
        "ref_name": ref.name, "ref_ordinary_ratio": f"{ratio_of(rows, ref.slug, hw_o.slug):.2f}", "ref_ordinary_call": ref_v.words(), "ref_ordinary_interval": "{:.2f} to {:.2f}".format(*ref_v.ratio_interval),
        "tornado_top": " and ".join(t["assumption"] for t in ref_v.tornado[:2]), "ref_why": undecided_words(ref_v, ref_v.tornado[0]["nominal"]),
        "ref_ordinary_ep_form": next(r["ep_form"] for r in rows if (r["model"], r["hardware"]) == (ref.slug, hw_o.slug)),
        "ref_ordinary_paper_like": f"{ratio_of(sym_rows, ref.slug, hw_o.slug):.2f}", "ref_superpod_ratio": f"{ratio_of(rows, ref.slug, hw_s.slug):.2f}", "coarse_superpod": f"{coarse[0]:.2f} to {coarse[1]:.2f}",
        "break_even_words": break_even_words(bw_even, side, hw_o.scale_out_bytes_per_s, "fabric" if hw_o.superpod else "NIC"),
        "equal_share_words": equal_share_words(ratio_of(sym_rows, ref.slug, hw_o.slug), half[0]["ratio"], bool(hw_o.superpod)),
        "paper_claim": paper_claim_words(bool(hw_o.superpod)),
        "duplex_gain": duplex_words(duplex_gain(ref, hw_o, budget, context))})

# %% [markdown]
# ## The reference cases
#
# {numref}`sweet-spots-advice` gives the ratio for every pair of the paper's models and GPUs;
# two of its cells are the reference model on the two reference devices (by default the paper's own
# cases: DeepSeek-V3 on H800 and on GB200), and {numref}`sweet-spots-maps` then moves one property
# at a time.
#
# - **{glue:text}`ref_name` on {glue:text}`ordinary_name`**: {glue:text}`paper_claim`. Under the
#   schedule the model puts AFD at {glue:text}`ref_ordinary_ratio` x EP at its defaults, and over its
#   uncertain assumptions {glue:text}`ref_ordinary_call` (the ratio {glue:text}`ref_ordinary_interval`
#   from the 10th to the 90th percentile; {numref}`sweet-spots-tornado`: {glue:text}`tornado_top` move
#   it most): {glue:text}`ref_why`. EP's best
#   deployment there: {glue:text}`ref_ordinary_ep_form`; two micro-batches would hide
#   {glue:text}`ep_2bo_hidden` of what could overlap ({numref}`tab-sweet-methods`). With the overlap override at the same share for both designs it gives
#   {glue:text}`ref_ordinary_paper_like` with all hidden (the paper's own models: $t_B = t_a + t_f$
#   for EP, the steady 3BO pipeline for AFD) and {glue:text}`ref_ordinary_half` with half hidden:
#   {glue:text}`equal_share_words`, and
#   {glue:text}`ref_ordinary_ratio` when each hides what the schedule gives it.
#   {glue:text}`break_even_words`; {glue:text}`cross_note` ({numref}`sweet-spots-ratio-bandwidth` shows
#   every crossing).
# - **Superpods with coarse experts**: the paper finds AFD competitive on GB200/GB300 with Step3 and
#   ERNIE-4.5; under the schedule the model gives ratios of {glue:text}`coarse_superpod` there: competitive,
#   not ahead.
#   {glue:text}`ref_name` on {glue:text}`superpod_name` sits at {glue:text}`ref_superpod_ratio`.
#
# ```{glue:figure} fig_sweet_spots_tornado
# :name: sweet-spots-tornado
#
# What moves the verdict for {glue:text}`ref_name` on {glue:text}`ordinary_name`: the AFD / EP
# ratio with one uncertain assumption at a time at the outer nodes of its quadrature rule (the
# percentiles written beside each bar), every other at the model's default; the searches re-run
# at each. The defaults of the gap (all of it), the usable HBM share (the model's) and the routing
# skew (none) are ends of their ranges, so their bars lie on one side of the default's line.
# {glue:text}`tornado_top` move it most.
# ```

# %% tags=["hide-input"]
maps = property_maps(ref, hw_o, hw_s, budget, context, map_size)
catalogue = [load_model(m, profile="reference") for m in model_names()]
fig = ratio_maps_figure(maps.titled(), maps.placements(catalogue))
glue_figure(fig, "sweet_spots_maps", output_dir)
save_data(pd.concat([pd.DataFrame(c) for c in maps.columns()]), "sweet_spots_maps", output_dir)
r = maps.readings()
glue_all({
        "superpod_name": hw_s.name, "ordinary_nodes": network_words(hw_o), "map_networks": maps_networks(hw_o), "map_points": f"{maps.points:,}", "map_on_bound": f"{maps.on_bound()}",
        "search_bounds": bounds_reading(rows, maps.titled().values(), {"held to validated forms": val_rows, "with equal overlap": sym_rows}),
        "model_numbers": ", ".join(f"{k + 1} {m.name}" for k, m in enumerate(catalogue)),
        "m_small": f"{r.m_small:.0f}", "m_large": f"{r.m_large:.0f}", "s_low": f"{r.s_low:.0f}", "s_high": f"{r.s_high:.0f}",
        "m_row_bw": f"{r.m_row_bw / 1e9:.0f}", "m_row_small": f"{r.m_row_small:.2f}", "m_row_large": f"{r.m_row_large:.2f}",
        "m_row_peak": f"{r.m_row_peak:.2f}", "m_row_peak_m": f"{r.m_row_peak_m:.0f}", "m_top_clause": top_row_clause(r),
        "ms_row_bw": f"{r.ms_row_bw / 1e9:.0f}", "ms_row_small": f"{r.ms_row_small:.2f}",
        "ms_row_large": f"{r.ms_row_large:.2f}", "ss_row_low": f"{r.ss_row_low:.2f}",
        "ss_row_high": f"{r.ss_row_high:.2f}", "s_row_low": f"{r.s_row_low:.2f}", "s_row_high": f"{r.s_row_high:.2f}",
        "s_side": paper_side(r.s_row_low, r.s_row_high), "m_side": paper_side(r.m_row_large, r.m_row_small), "ss_side": paper_side(r.ss_row_low, r.ss_row_high),
        "ms_side": paper_side(r.ms_row_large, r.ms_row_small),
        "ref_m_grid": f"{r.ref_m_grid:.0f}", "fabric_low": f"{r.fabric_low:.2f}", "fabric_high": f"{r.fabric_high:.2f}",
        "fabric_low_bw": f"{r.fabric_low_bw / 1e9:.0f}", "fabric_high_bw": f"{r.fabric_high_bw / 1e9:,.0f}",
        "o_low": f"{r.o_low:.2f}", "o_high": f"{r.o_high:.2f}", "o_low_bw": f"{r.o_low_bw / 1e9:.0f}",
        "o_high_bw": f"{r.o_high_bw / 1e9:.0f}", "o_peak": f"{r.o_peak:.2f}", "o_peak_bw": f"{r.o_peak_bw / 1e9:.0f}",
        "afd_gain": f"{r.afd_gain:.0%}", "ep_gain": f"{r.ep_gain:.0%}"})

# %% [markdown]
# ```{glue:figure} fig_sweet_spots_maps
# :name: sweet-spots-maps
#
# AFD / EP ratio for members of {glue:text}`ref_name`'s family at the same total routed
# parameters (the paper's method; M: E and K scaled with 1 / M; E / K: K varied), over the
# network bandwidth per GPU ({glue:text}`map_networks`); black line:
# break-even; dots: the catalogue models ({glue:text}`model_numbers`) at their own expert size or
# sparsity and the device's bandwidth (their other dimensions differ from the reference, so a dot
# reads the map, not the model). The best AFD deployment sits on the search's bound of 16 nodes per
# pool in {glue:text}`map_on_bound` cells (there a larger search could raise the ratio). Each map is {glue:text}`map_points` candidate-cells, searched in
# fixed-size chunks of cells so that memory does not grow with the map. `scripts/benchmark.py`
# times it: 1.3 s on the 2-core build machine on 2026-11-30, about 10 µs per candidate-cell for the
# whole search (some 17 bisection steps of the batch), so a map of 10^8 candidate-cells would take
# about 17 minutes (an extrapolation; the time is not computed here, to keep rebuilds identical). Data: {download}`sweet_spots_maps.csv <figures/sweet_spots_maps.csv>`.
# ```
#
# Reading the maps at {glue:text}`ref_name`'s own point:
#
# - **Coarse experts** (same total and activated parameters: E and K scale with 1 / M). On
#   {glue:text}`ordinary_name` at {glue:text}`m_row_bw` GB/s the ratio goes from {glue:text}`m_row_small` at
#   M = {glue:text}`m_small` (peak {glue:text}`m_row_peak` at M = {glue:text}`m_row_peak_m`)
#   to {glue:text}`m_row_large` at M = {glue:text}`m_large`, {glue:text}`m_side` end to end{glue:text}`m_top_clause`
#   (upper left map). On {glue:text}`superpod_name` at its
#   own fabric ({glue:text}`ms_row_bw` GB/s) it goes from {glue:text}`ms_row_small` to
#   {glue:text}`ms_row_large` over the same range of M, {glue:text}`ms_side` end to end.
# - **Sparsity** (same total parameters: K varies, E and M kept): on {glue:text}`ordinary_name` the ratio goes from {glue:text}`s_row_low` at
#   E/K = {glue:text}`s_low` to {glue:text}`s_row_high` at E/K = {glue:text}`s_high`,
#   {glue:text}`s_side`; on {glue:text}`superpod_name` from
#   {glue:text}`ss_row_low` to {glue:text}`ss_row_high`, {glue:text}`ss_side`.
# - **Bandwidth** (at the grid's M = {glue:text}`ref_m_grid`): on {glue:text}`superpod_name` the fabric
#   bandwidth moves the ratio from {glue:text}`fabric_low` at {glue:text}`fabric_low_bw` GB/s to
#   {glue:text}`fabric_high` at {glue:text}`fabric_high_bw`. On {glue:text}`ordinary_nodes`:
#   {glue:text}`o_low` at {glue:text}`o_low_bw` GB/s, a peak of
#   {glue:text}`o_peak` at {glue:text}`o_peak_bw`, {glue:text}`o_high` at {glue:text}`o_high_bw`:
#   from the peak to the top of the range AFD gains {glue:text}`afd_gain` (its attention GPUs'
#   memory caps the batch) and EP {glue:text}`ep_gain`. Whether a Superpod favours AFD is read
#   like for like in {numref}`tab-sweet-table3` (one device's compute with two networks), not across these two
#   devices, whose compute and memory differ too.

# %% tags=["hide-input"]
devices = [load_hardware(h, profile=hw_profile) for h in dict.fromkeys((ordinary, "h20", "b200"))]   # each once
curves = bandwidth_curves(ref, devices, budget, context)
fig = ratio_bandwidth_figure({c.name: (c.bandwidth, c.ratio) for c in curves},
                             {c.name: (c.own_bandwidth, c.own_ratio) for c in curves})
glue_figure(fig, "sweet_spots_ratio_bandwidth", output_dir)
glue_all(threshold_words(curves, devices, hw_o.slug))

# %% [markdown]
# ```{glue:figure} fig_sweet_spots_ratio_bandwidth
# :name: sweet-spots-ratio-bandwidth
#
# The decision as a threshold. {glue:text}`ref_name` on {glue:text}`curve_devices`, AFD / EP
# ratio against the network bandwidth per GPU (stars: each device as it is). The ratio crosses 1 (the
# answer flips) at: {glue:text}`crossings` (sustained, interpolated on the bandwidths `afd advise`
# searches for its break-even, the same grid and rule as its threshold above). Several
# crossings mean the ratio wanders around 1 over that range: there the designs are even within
# the model's resolution, not alternately ahead. The threshold
# moves with the device (its compute, memory and NVLink set how much network each design can use),
# so a fixed rule of thumb would mislead; `afd advise` computes the crossing for the pair at hand.
# ```
#
# ## Heterogeneous pools

# %% tags=["hide-input"]
attn_hw, ffn_hw = (load_hardware(h, profile=hw_profile) for h in (attention_pool, ffn_pool))
pools = shared(pools_table, ref, [(attn_hw, ffn_hw), (ffn_hw, attn_hw), (ffn_hw, ffn_hw), (attn_hw, attn_hw)], budget,
                    context, prices=prices)
pool_rows = pools_rows(pools, [attn_hw.slug, ffn_hw.slug], priced=bool(prices))
save_data(pools_frame := pd.DataFrame(pool_rows), "sweet_spots_pools", output_dir)
glue("hetero_design", design_named(heterogeneous_design(pools, attn_hw.slug, ffn_hw.slug), [attn_hw, ffn_hw]), display=False)
shown = pd.DataFrame(pools_named(pool_rows, [attn_hw, ffn_hw]))    # the devices' names; slugs stay the data's keys
glue_table("tab_sweet_pools", shown.style.hide(axis="index").format(
    {c: "{:,.0f}" if c == "tokens/s per GPU" else "{:.3f}" for c in shown.columns if c != "design"}))

# %% [markdown]
# :::{table} {glue:text}`ref_name` with memory-rich attention GPUs ({glue:text}`attn_pool`) and compute-rich FFN GPUs ({glue:text}`ffn_pool_name`), beside the homogeneous designs
# :name: tab-sweet-pools
#
# ```{glue:md} tab_sweet_pools
# :format: myst
# ```
# :::
#
# In {numref}`tab-sweet-pools`, GPU-hours per
# million output tokens are split by device, so any price list turns them into cost (the
# `prices` parameter does it here, and `afd advise --price-per-gpu-hour` does it per pair). No
# prices are published with this book, but the GPU-hours bound them ({numref}`tab-sweet-table3`): with the
# heterogeneous design {glue:text}`hetero_design`, {glue:text}`t3_hetero`.
#
# ## The paper's Table 2: batch-overlap methods, computed

# %% tags=["hide-input"]
method_rows = overlap_methods(ref, hw_o, budget, context)
methods = pd.DataFrame(method_rows)
save_data(methods, "sweet_spots_overlap_methods", output_dir)
o = overlap_readings(method_rows)
hidden = {r["method"]: r["note"].split()[0] for r in method_rows[::-1] if r["design"] == "EP" and r["note"]}  # first 2BO
glue_all({"attn_pool": attn_hw.name, "ffn_pool_name": ffn_hw.name, "ep_2bo_change": f"{o.ep_2bo_change:+.0%}",
          "afd_3bo_words": afd_form_words(o) + "." + one_domain_note(rows, ref.slug, hw_o.slug, method_rows),
          "ep_2bo_gain": f"{o.ep_2bo_gain:+.0%}", "ep_best": o.ep_best, "ep_best_words": o.ep_best_words(), "ep_2bo_hidden": hidden["2BO"], "ep_sbo_hidden": hidden["SBO"]})
methods.rename(columns={"tokens_per_s_per_gpu": "tokens/s per GPU", "batch_per_gpu": "requests per GPU"}).pipe(lambda t: glue_table(
    "tab_sweet_methods", t.style.hide(axis="index").format({"tokens/s per GPU": "{:,.0f}", "requests per GPU": "{:.0f}"})))

# %% [markdown]
# :::{table} The best deployment of {glue:text}`ref_name` on {glue:text}`ordinary_name` under each batch-overlap method
# :name: tab-sweet-methods
#
# ```{glue:md} tab_sweet_methods
# :format: myst
# ```
# :::
#
# In {numref}`tab-sweet-methods`, NBO: one batch, nothing overlapped. SBO: one batch with single-batch
# overlap as the schedule runs it (low-latency kernels; dispatch beside the shared experts, combine
# beside the down GEMM), hiding {glue:text}`ep_sbo_hidden` of what could overlap. 2BO: two
# micro-batches (EP as its schedule runs them, and with all of the all-to-all hidden). 3BO, 4BO:
# AFD's pipeline as its schedule runs it. For AFD, {glue:text}`afd_3bo_words` For EP, two
# micro-batches as scheduled (overlapping {glue:text}`ep_2bo_hidden` of what could overlap) change
# the throughput by {glue:text}`ep_2bo_change` against one plain batch (the second micro-batch reads
# the weights and launches the kernels again, against the share of the all-to-all it hides), and by
# {glue:text}`ep_2bo_gain` with all hidden (a what-if that also lets the normal kernels overlap,
# which the schedule does not); {glue:text}`ep_best_words`, where the EP search picks {glue:text}`ref_ordinary_ep_form`. Every row but
# the all-hidden one comes from the same schedule.
#
# ## The paper's Table 3, like for like

# %% tags=["hide-input"]
glue("ordinary_name", hw_o.name, display=False)
t3s = shared(table3_study, ref, ms, hw_o, hw_s, load_hardware(superpod_twin, profile=hw_profile), pool_rows, attn_hw, ffn_hw,
                   budget, context, size=condition_points)
fig = conditions_figure(t3s.panels(), {design_named(r["design"], [attn_hw, ffn_hw]): (r[f"{attn_hw.slug} GPU-h/Mtok"], r[f"{ffn_hw.slug} GPU-h/Mtok"])
                                       for r in pool_rows}, f"price ratio {attn_hw.name} / {ffn_hw.name}", ffn_hw.name)
glue_figure(fig, "sweet_spots_conditions", output_dir)
save_data(t3 := pd.DataFrame(t3s.rows()), "sweet_spots_table3", output_dir)
glue_all(t3s.glue() | {"twin_name": t3s.interconnect.device,
                        "twin_nodes": f"{t3s.gain['nodes']}-GPU nodes"})
glue_table("tab_sweet_table3", t3.style.hide(axis="index"))

# %% [markdown]
# :::{table} Each of the paper's favourable conditions varied alone, with both designs searched at every point on the same device, SLO and schedule
# :name: tab-sweet-table3
#
# ```{glue:md} tab_sweet_table3
# :format: myst
# ```
# :::
#
# In {numref}`tab-sweet-table3` and {numref}`sweet-spots-conditions`, ratios are AFD / EP tokens/s per GPU, above 1
# favours AFD; P(AFD better) is given at the two ends. Expert
# granularity and sparsity vary on {glue:text}`ref_name`'s family at the same total routed
# parameters, the paper's method: coarser experts merge experts (E and K scale with 1 / M, so the
# activated parameters and E / K stay too); lower sparsity activates more of the same experts (K
# grows; E and M kept). The Superpod condition keeps one chip's compute and memory
# ({glue:text}`twin_name`) and gives it two networks: {glue:text}`twin_nodes` with its board's NIC, swept up
# to its NVLink bandwidth, and its Superpod fabric; then the fabric alone, over the GPUs its
# scale-up domain spans (AFD's copies leaving a domain cross the inter-domain network once per
# expert: the model forwards them in two stages only between ordinary nodes, an assumption that costs AFD on
# small domains). Every point is read under the schedule and
# with the overlap override at 1 for both designs (equal overlap); the AFD search is extended past
# 16 nodes per pool wherever its best sits on that bound.
#
# - **Coarse experts**: {glue:text}`t3_coarse_ordinary`; {glue:text}`t3_coarse_superpod`.
# - **Lower sparsity**: {glue:text}`t3_sparse_ordinary`; {glue:text}`t3_sparse_superpod`.
# - **Superpod**: {glue:text}`t3_superpod`; {glue:text}`t3_domain`; {glue:text}`t3_superpod_models`.
# - **Heterogeneous pools** ({numref}`tab-sweet-pools`; right panel: cost per token against the price ratio):
#   {glue:text}`t3_hetero`; {glue:text}`t3_hetero_reverse`.
#
# Where a reading departs, the assumption named decides it: how much communication each design
# hides (the schedule against the paper's equal overlap), or the balance of FLOP/s and HBM of the
# devices paired.
#
# ```{glue:figure} fig_sweet_spots_conditions
# :name: sweet-spots-conditions
#
# The paper's conditions one at a time for {glue:text}`ref_name`: AFD / EP under the schedule
# (solid) and with equal overlap (dashed), P(AFD better) at the ends; the Superpod panel's last
# point is the device as it is (its fabric), the others its compute on {glue:text}`twin_nodes`; the domain
# panel keeps the fabric and varies the GPUs it spans. Last panel: the
# cost of each design of {numref}`tab-sweet-pools` per million tokens, in GPU-hours of the FFN-pool device, against
# the price ratio of the two devices (where lines cross, the cheaper design changes). Data:
# {download}`sweet_spots_table3.csv <figures/sweet_spots_table3.csv>`.
# ```
#
# ## A decision flow
#
# 1. Run `.venv/bin/afd advise --model M --hardware H` from the repository root (add `--attn-hardware` for separate pools,
#    `--price-per-gpu-hour` for cost). It searches both designs and prints the ratio.
# 2. If the verdict is undecided (P(AFD better) {glue:text}`undecided`), the designs tie on this
#    measure: decide on what the model leaves out (operational cost, failure domains, the jitter
#    tolerance of a 3-stage pipeline), or narrow the assumption that moves the ratio most (the
#    command names the two widest of its tornado, and `--json` holds all of them).
# 3. Otherwise read the reasons: the binding limit of each design, the AFD FFN side's regime and
#    ceiling on its HFU (hardware FLOP utilisation: FLOP/s reached over peak across the whole stage budget), and the break-even points the command computes (the shares of hidden
#    communication at which the answer flips, the same share for both designs and each design's
#    alone, and the bandwidth at which it flips). Those are the thresholds; they
#    are computed for the pair at hand because, as {numref}`sweet-spots-ratio-bandwidth` shows, they move with the hardware.
#
# ## Limitations
#
# - The comparison is only as good as the decode model: its errors against published deployments
#   run from {glue:text}`min_validation_error` to {glue:text}`max_validation_error` (each design's
#   own; a verdict takes the ratio's error against {glue:text}`n_head_to_heads` published head-to-heads
#   instead), and the AFD side rests on {glue:text}`afd_rests` {glue:text}`afd_validation_error`:
#   AFD's own spread, for its absolute tokens/s, is all cases'.
#   Were AFD's predictions generally that far off against EP's ({glue:text}`ep_validation_errors`),
#   every ratio here would be off by {glue:text}`afd_lean` (above zero: too favourable to AFD).
# - The schedule serialises DeepEP's normal kernels with all compute (they hold SMs), while AFD's
#   transfers run on a resource of their own. DeepEP gives the normal kernels only some of the SMs
#   (`Buffer.set_num_sms`), so part of their time could overlap compute: this simplification is
#   against EP, in the form its search picks most. It favours AFD.
# - P(AFD better) takes the ratio's error at its upper confidence bound ({glue:text}`ratio_spread`;
#   leaving out one source in turn, the rms is {glue:text}`ratio_loso`), and adds the shared
#   assumptions' quadrature to it although the head-to-heads' errors already hold part of them: both
#   make it err toward undecided. The routing skew carries the
#   only measured routing (DeepSeek-V3's per-layer Zipf exponents) to every model's experts. The EP spread
#   includes a GB200 case whose batch is assumed (the previous chapter). Against
#   NVIDIA aiconfigurator's composition of the same kernel measurements, each design in the form
#   the tool models, our TPOT (time per output token) is a median {glue:text}`aic_ep_median` of the tool's for EP and
#   {glue:text}`aic_afd_median` for AFD ({doc}`aiconfigurator_comparison`): the model leans
#   {glue:text}`aic_lean` against the tool. A ratio near 1 here is not a verdict.
# - Both designs' overlap comes from one ideal schedule: a stage starts as soon as its input and its
#   resource are free, and communication does not slow the compute beside it. `--ep-overlap` and
#   `--afd-overlap` override it per design as what-ifs (the equal-overlap reading above shows how
#   far the verdicts move; an override also lets EP's normal kernels overlap, which the schedule
#   does not, and the equal-overlap search picks two micro-batches with normal kernels in
#   {glue:text}`sym_normal` pairs). Whether AFD's transfers cross the NIC once
#   per FFN node (the paper's two-stage forwarding) decides others.
# - Smaller asymmetries, found by an independent recomputation:
#   AFD's dispatch and combine share one link as in the paper's Eq. 2, although they run in
#   opposite directions (AFD alone at 1.5 times its network bandwidth, which carrying
#   them at once would amount to, {glue:text}`duplex_gain` for {glue:text}`ref_name` on
#   {glue:text}`ordinary_name`; EP's two micro-batches, whose dispatch and combine also run in
#   opposite directions, are not re-searched the same way); AFD's dense layers
#   run in three micro-batches on the attention pool with nothing to overlap (favours EP, a few
#   percent).
# - The search starts from up to 16 attention and 16 FFN nodes and EP over up to 64 nodes, and widens
#   them where a best sits on that bound, {glue:text}`search_bounds`. The EP sizes listed in
#   `afdlib.decode.search` leave out some that place one expert per GPU (EP160 for a
#   model of 160 experts, as Qwen3-Coder and GLM-4.7): an independent search of the paper's pairs
#   over every node count up to 64 found a better EP deployment in a few and lowered their ratios a
#   little; imbalance is uniform routing's per-step floor unless `--sigma` is given.
# - The maps change one property of {glue:text}`ref_name` at a time; a real model changes several.
#   {doc}`modern_moe` places four models with hybrid attention, whose layers change the attention side's cost per request, in the same comparison.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("sweet_spots")
