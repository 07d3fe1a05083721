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
# Superpod-class interconnects, coarse experts, low sparsity, heterogeneous hardware (its Table 3),
# stated without thresholds. This chapter computes them with the end-to-end decode model of the
# previous chapter: for each model and hardware it searches the best EP deployment (EP size,
# redundant experts, kernels, one or two micro-batches, batch) and the best AFD deployment
# ($N_A$, $N_F$ up to 16 nodes each, 2-4 micro-batches, batch) under the same SLO, and compares
# their output tokens per second per GPU. The same search answers `afd advise`.
#
# **Result.** The verdict turns on one assumption: how much of its communication each design hides
# behind compute. Under the model's defaults, each set where that design's published deployments
# put it (EP hides half of its all-to-all, AFD all of its transfers: previous chapter), the paper's
# six models on its eight GPUs give {glue:text}`n_afd` of {glue:text}`n_pairs` pairs to AFD and
# {glue:text}`n_ep` to EP, and {glue:text}`n_decisive` differ by more than the spread of the
# model's errors against published deployments (a ratio beyond {glue:text}`decisive`, the largest
# ratio of two of its errors): the designs look close. With the same overlap for both, all of it hidden as the paper assumes for each design, EP
# leads in {glue:text}`n_ep_sym` of {glue:text}`n_pairs` pairs, by a median factor of
# {glue:text}`median_sym`. The AFD default rests on a single published deployment (Step-3), so the
# model does not overturn the paper's verdict that EP keeps the lead on today's clusters; it says
# that the lead is only as large as EP's all-to-all is well hidden, which published data pins down
# for EP but hardly for AFD.

# %% tags=["parameters"]
hardware = ["h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300"]
models = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]
hw_profile = "datasheet"
slo_ms = 50.0
context = 4096
mtp = 1.0                        # accepted tokens per step (1: no MTP)
map_size = 12                    # cells per map axis
ordinary = "h800"                # 8-GPU nodes with 400 Gb/s per GPU
superpod = "gb200"               # a Superpod-class system
reference_model = "deepseek-v3"
attention_pool = "h20"           # heterogeneous pools: memory-rich attention GPUs ...
ffn_pool = "h800"                # ... with compute-rich FFN GPUs
prices = None                    # e.g. {"h800": 2.0, "h20": 1.0}: USD per GPU-hour (none published here)
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    hardware=_p.list_of(_p.text), models=_p.list_of(_p.text), hw_profile=_p.PROFILE_HW, slo_ms=_p.positive,
    context=_p.nonnegative, mtp=_p.positive, map_size=_p.integer(2, 200), ordinary=_p.text, superpod=_p.text,
    reference_model=_p.text, attention_pool=_p.text, ffn_pool=_p.text, prices=_p.price_map,
    output_dir=_p.text)
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from myst_nb import glue

from afdlib.decode.advise import DECISIVE, FLIP_FACTORS, advice_table, break_even_scale_out
from afdlib.inputs.catalog import load_hardware, load_model, model_names
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.report.figures import advice_heatmap, ratio_bandwidth_figure, ratio_maps_figure
from afdlib.report.style import save_data, save_figure, setup_style
from afdlib.inputs.specs import Budget, Precision
from afdlib.decode.sweetspot import overlap_methods, pools_table, ratio_map

setup_style()
budget = Budget(slo_s=slo_ms / 1e3, l_accept=mtp, t_gap_s=DECODE_T_GAP_S)
hws = [load_hardware(h, profile=hw_profile) for h in hardware]
ms = [load_model(m, profile="reference") for m in models]
table = pd.DataFrame(advice_table(ms, hws, budget, context))
save_data(table, "sweet_spots_advice", output_dir)
hw_slugs, model_slugs = [h.slug for h in hws], [m.slug for m in ms]   # the table's keys (files have their own)
fig = advice_heatmap(table, hw_slugs, model_slugs, DECISIVE)
save_figure(fig, "sweet_spots_advice", output_dir)
glue("fig_sweet_spots_advice", fig, display=False)
plt.close(fig)
glue("n_pairs", len(table), display=False)
glue("n_afd", int((table.recommendation == "AFD").sum()), display=False)
glue("n_ep", int((table.recommendation == "EP").sum()), display=False)
glue("n_decisive", int(table.decisive.sum()), display=False)
glue("decisive", f"{DECISIVE:g} or below {1 / DECISIVE:.2f}", display=False)
glue("tie_band", f"between {1 / DECISIVE:.2f} and {DECISIVE:g}", display=False)
from afdlib.decode.validation import validation_rows

validation = validation_rows()
glue("max_validation_error", f"{max(r['error'] for r in validation):+.1%}", display=False)
glue("min_validation_error", f"{min(r['error'] for r in validation):+.1%}", display=False)
afd_errors = [r["error"] for r in validation if r["design"] == "afd"]
ep_errors = [r["error"] for r in validation if r["design"] == "ep"]
glue("afd_validation_error", ", ".join(f"{e:+.1%}" for e in afd_errors), display=False)
glue("ep_validation_errors", f"{min(ep_errors):+.1%} to {max(ep_errors):+.1%}", display=False)
lean = [(1 + max(afd_errors)) / (1 + e) - 1 for e in (max(ep_errors), min(ep_errors))]
glue("afd_lean", f"{lean[0]:.0%} to {lean[1]:.0%}", display=False)
glue("ratio_range", f"{table.ratio.min():.2f} to {table.ratio.max():.2f}", display=False)
symmetric = pd.DataFrame(advice_table(ms, hws, budget, context,
                                      assumptions=Assumptions(ep_overlap=1.0, afd_overlap=1.0)))
save_data(symmetric, "sweet_spots_advice_equal_overlap", output_dir)
glue("n_ep_sym", int((symmetric.recommendation == "EP").sum()), display=False)
glue("median_sym", f"{float(np.median(1 / symmetric.ratio)):.2f}", display=False)
glue("range_sym", f"{symmetric.ratio.min():.2f} to {symmetric.ratio.max():.2f}", display=False)
same = table.pivot(index="model", columns="hardware", values="ratio")
twins = [(a, b) for i, a in enumerate(hw_slugs) for b in hw_slugs[i + 1:] if np.allclose(same[a], same[b])]
glue("twins", "; ".join(f"{a} and {b}" for a, b in twins) or "none", display=False)

# %% [markdown]
# ```{glue:figure} fig_sweet_spots_advice
# :name: sweet-spots-advice
#
# AFD / EP output tokens per second per GPU, best deployment of each, SLO
# {glue:text}`slo` ms, context {glue:text}`ctx`, no MTP, datasheet hardware with the decode model's
# defaults (orange: AFD ahead; '?': within the spread of the model's errors). The ratios span
# {glue:text}`ratio_range`; with all communication hidden for both designs they span
# {glue:text}`range_sym`. Devices that give the same ratio for every model (their differences do
# not bind): {glue:text}`twins`. Data:
# {download}`sweet_spots_advice.csv <figures/sweet_spots_advice.csv>` (with each design's best
# configuration) and {download}`the equal-overlap table <figures/sweet_spots_advice_equal_overlap.csv>`.
# Every cell is `afd advise --model M --hardware H` (`--ep-overlap 1` gives the equal-overlap
# reading).
# ```

# %% tags=["hide-input"]
glue("slo", f"{slo_ms:g}", display=False)
glue("ctx", f"{context:g}", display=False)
ref = load_model(reference_model, profile="reference")
hw_o, hw_s = load_hardware(ordinary, profile=hw_profile), load_hardware(superpod, profile=hw_profile)
row = table.set_index(["model", "hardware"])
ref_key, o_key, s_key = ref.slug, hw_o.slug, hw_s.slug
glue("ref_ordinary_ratio", f"{row.loc[(ref_key, o_key), 'ratio']:.2f}", display=False)
sym_row = symmetric.set_index(["model", "hardware"])
glue("ref_ordinary_paper_like", f"{sym_row.loc[(ref_key, o_key), 'ratio']:.2f}", display=False)
half = pd.DataFrame(advice_table([ref], [hw_o], budget, context,
                                 assumptions=Assumptions(ep_overlap=0.5, afd_overlap=0.5)))
glue("ref_ordinary_half", f"{half.ratio.iloc[0]:.2f}", display=False)
glue("ref_superpod_ratio", f"{row.loc[(ref_key, s_key), 'ratio']:.2f}", display=False)
coarse = table[table.model.isin(["step3", "ernie-4.5"]) & table.hardware.isin(["gb200", "gb300"])]
glue("coarse_superpod", f"{coarse.ratio.min():.2f} to {coarse.ratio.max():.2f}", display=False)
bw_even, flip_ratio = break_even_scale_out(ref, hw_o, budget, context, Precision(), Assumptions())
glue("ref_break_even", "none in range" if bw_even is None else f"{bw_even / 1e9:.0f}", display=False)
if bw_even is None:
    glue("break_even_side", "AFD never ahead in the range searched" if (flip_ratio <= 1).all() else
         "AFD ahead throughout the range searched", display=False)
else:   # which side of this crossing AFD leads on: the ratio at the next bandwidth searched above it
    grid = hw_o.scale_out_bytes_per_s * FLIP_FACTORS
    next_up = flip_ratio[grid > bw_even]
    glue("break_even_side", f"the ratio above 1 just {'above' if next_up.size and next_up[0] > 1 else 'below'} it",
         display=False)
glue("ordinary_bw", f"{hw_o.scale_out_bytes_per_s / 1e9:.0f}", display=False)

# %% [markdown]
# ## The paper's own cases
#
# {numref}`sweet-spots-advice` gives the ratio for every pair of the paper's models and GPUs;
# two of its cells are the paper's own cases, and {numref}`sweet-spots-maps` then moves one
# property at a time.
#
# - **DeepSeek-V3 on H800**: the paper says EP keeps the lead on ordinary clusters. The model puts
#   AFD at {glue:text}`ref_ordinary_ratio` x EP, a close call; with both designs hiding all their
#   communication (the paper's own models: $t_B = t_a + t_f$ for EP, the 3BO pipeline for AFD) it
#   gives {glue:text}`ref_ordinary_paper_like`, and with both hiding half
#   {glue:text}`ref_ordinary_half`: EP ahead, as the paper says, whenever the two are treated alike.
#   Under the defaults `afd advise` finds the ratio crossing 1 nearest today's NIC at
#   {glue:text}`ref_break_even` GB/s per GPU ({glue:text}`break_even_side`; sustained, now
#   {glue:text}`ordinary_bw`); {glue:text}`cross_note` ({numref}`sweet-spots-ratio-bandwidth` shows
#   every crossing).
# - **Superpods with coarse experts**: the paper finds AFD competitive on GB200/GB300 with Step3 and
#   ERNIE-4.5; the model's defaults give ratios of {glue:text}`coarse_superpod` there: competitive,
#   not ahead.
#   DeepSeek-V3 on {glue:text}`superpod_name` sits at {glue:text}`ref_superpod_ratio`.

# %% tags=["hide-input"]
glue("superpod_name", hw_s.name, display=False)
bw_o = np.geomspace(12.5e9, 800e9, map_size) * 0.8
bw_s = np.geomspace(100e9, 3600e9, map_size) * 0.8
sizes = np.geomspace(512, 16384, map_size)
sparsity = np.geomspace(4, 128, map_size)
maps = {}
for title, hw, bw, axis, values in (
        (f"{hw_o.name}, 8-GPU nodes: scale-out x M", hw_o, bw_o, "moe_intermediate_size", sizes),
        (f"{hw_o.name}, 8-GPU nodes: scale-out x E/K", hw_o, bw_o, "sparsity", sparsity),
        (f"{hw_s.name}: fabric x M", hw_s, bw_s, "moe_intermediate_size", sizes),
        (f"{hw_s.name}: fabric x E/K", hw_s, bw_s, "sparsity", sparsity)):
    maps[title] = ratio_map(ref, hw, budget, context, bw, values, axis)
catalogue = [load_model(m, profile="reference") for m in model_names()]
placements = {t: {m.name: ((m.moe_intermediate_size if rm.axis == "moe_intermediate_size" else m.sparsity),
                           (hw_o if "8-GPU" in t else hw_s).scale_out_bytes_per_s) for m in catalogue}
              for t, rm in maps.items()}
fig = ratio_maps_figure(maps, placements)
save_figure(fig, "sweet_spots_maps", output_dir)
glue("fig_sweet_spots_maps", fig, display=False)
plt.close(fig)
save_data(pd.concat([pd.DataFrame({"map": t, "bandwidth_gb_per_s": np.repeat(rm.bandwidth / 1e9, rm.values.size),
                                   rm.axis: np.tile(rm.values, rm.bandwidth.size), "ratio": rm.ratio.ravel(),
                                   "ep": rm.ep.ravel(), "afd": rm.afd.ravel()}) for t, rm in maps.items()]),
          "sweet_spots_maps", output_dir)
glue("map_points", f"{max(r.points for r in maps.values()):,}", display=False)
glue("model_numbers", ", ".join(f"{k + 1} {m.name}" for k, m in enumerate(catalogue)), display=False)
m_o = maps[f"{hw_o.name}, 8-GPU nodes: scale-out x M"]
i_now = m_o.row(hw_o.scale_out_bytes_per_s)
glue("m_row_bw", f"{m_o.bandwidth[i_now] / 1e9:.0f}", display=False)
row_o = m_o.ratio[i_now]
glue("m_row_small", f"{row_o[0]:.2f}", display=False)
glue("m_row_large", f"{row_o[-1]:.2f}", display=False)
glue("m_row_peak", f"{np.nanmax(row_o):.2f}", display=False)
glue("m_row_peak_m", f"{m_o.values[int(np.nanargmax(row_o))]:.0f}", display=False)
glue("m_small", f"{m_o.values[0]:.0f}", display=False)
glue("m_top_bw", f"{m_o.bandwidth[-1] / 1e9:.0f}", display=False)
glue("m_top_small", f"{m_o.ratio[-1, 0]:.2f}", display=False)
glue("m_top_large", f"{m_o.ratio[-1, -1]:.2f}", display=False)
glue("m_large", f"{m_o.values[-1]:.0f}", display=False)
m_s_map = maps[f"{hw_s.name}: fabric x M"]
i_s = m_s_map.row(hw_s.scale_out_bytes_per_s)
glue("ms_row_bw", f"{m_s_map.bandwidth[i_s] / 1e9:.0f}", display=False)
glue("ms_row_small", f"{m_s_map.ratio[i_s, 0]:.2f}", display=False)
glue("ms_row_large", f"{m_s_map.ratio[i_s, -1]:.2f}", display=False)
s_s_map = maps[f"{hw_s.name}: fabric x E/K"]
glue("ss_row_low", f"{s_s_map.ratio[i_s, 0]:.2f}", display=False)
glue("ss_row_high", f"{s_s_map.ratio[i_s, -1]:.2f}", display=False)
s_o = maps[f"{hw_o.name}, 8-GPU nodes: scale-out x E/K"]
glue("s_row_low", f"{s_o.ratio[i_now, 0]:.2f}", display=False)
glue("s_row_high", f"{s_o.ratio[i_now, -1]:.2f}", display=False)
glue("s_low", f"{s_o.values[0]:.0f}", display=False)
glue("s_high", f"{s_o.values[-1]:.0f}", display=False)
j_ref = m_s_map.column(ref.moe_intermediate_size)
glue("fabric_low", f"{m_s_map.ratio[0, j_ref]:.2f}", display=False)
glue("fabric_high", f"{m_s_map.ratio[-1, j_ref]:.2f}", display=False)
glue("fabric_low_bw", f"{m_s_map.bandwidth[0] / 1e9:.0f}", display=False)
glue("fabric_high_bw", f"{m_s_map.bandwidth[-1] / 1e9:,.0f}", display=False)
col = m_o.ratio[:, j_ref]
glue("o_peak", f"{np.nanmax(col):.2f}", display=False)
glue("o_peak_bw", f"{m_o.bandwidth[int(np.nanargmax(col))] / 1e9:.0f}", display=False)
glue("ref_m_grid", f"{m_o.values[j_ref]:.0f}", display=False)
glue("o_low", f"{m_o.ratio[0, j_ref]:.2f}", display=False)
peak = int(np.nanargmax(col))
glue("afd_gain", f"{m_o.afd[-1, j_ref] / m_o.afd[peak, j_ref] - 1:.0%}", display=False)
glue("ep_gain", f"{m_o.ep[-1, j_ref] / m_o.ep[peak, j_ref] - 1:.0%}", display=False)
glue("superpod_over_ordinary", f"{float(np.median(same[s_key] / same[o_key])):.2f}", display=False)
glue("o_high", f"{m_o.ratio[-1, j_ref]:.2f}", display=False)
glue("o_low_bw", f"{m_o.bandwidth[0] / 1e9:.0f}", display=False)
glue("o_high_bw", f"{m_o.bandwidth[-1] / 1e9:.0f}", display=False)

# %% [markdown]
# ```{glue:figure} fig_sweet_spots_maps
# :name: sweet-spots-maps
#
# AFD / EP ratio for {glue:text}`ref_name`'s shape with one property changed, over the
# network bandwidth per GPU (8-GPU nodes: the NIC; Superpod: the whole fabric); black line:
# break-even; dots: the catalogue models ({glue:text}`model_numbers`) at their own expert size or
# sparsity and the device's bandwidth (their other dimensions differ from the reference, so a dot
# reads the map, not the model). Each map is {glue:text}`map_points` candidate-cells, searched in
# fixed-size chunks of cells so that memory does not grow with the map. `scripts/benchmark.py`
# times it: 1.3 s on the 2-core build machine on 2026-11-30, about 10 µs per candidate-cell for the
# whole search (some 17 bisection steps of the batch), so a map of 10^8 candidate-cells would take
# about 17 minutes (an extrapolation; the time is not computed here, to keep rebuilds identical). Data: {download}`sweet_spots_maps.csv <figures/sweet_spots_maps.csv>`.
# ```
#
# Reading the maps at {glue:text}`ref_name`'s own point:
#
# - **Coarse experts** do not help AFD uniformly. On {glue:text}`ordinary_name` at
#   {glue:text}`m_row_bw` GB/s the ratio goes from {glue:text}`m_row_small` at
#   M = {glue:text}`m_small` to a peak of {glue:text}`m_row_peak` at M = {glue:text}`m_row_peak_m`
#   and back to {glue:text}`m_row_large` at M = {glue:text}`m_large`; at {glue:text}`m_top_bw` GB/s
#   it goes from {glue:text}`m_top_small` to {glue:text}`m_top_large` (upper left map). On {glue:text}`superpod_name` at its
#   own fabric ({glue:text}`ms_row_bw` GB/s) it goes from {glue:text}`ms_row_small` to
#   {glue:text}`ms_row_large` over the same range of M: there larger experts hurt AFD.
# - **Sparsity**: on {glue:text}`ordinary_name` the ratio goes from {glue:text}`s_row_low` at
#   E/K = {glue:text}`s_low` to {glue:text}`s_row_high` at E/K = {glue:text}`s_high`, against the
#   paper (sparser models favour AFD here); on {glue:text}`superpod_name` from
#   {glue:text}`ss_row_low` to {glue:text}`ss_row_high`, with the paper.
# - **Bandwidth** (at the grid's M = {glue:text}`ref_m_grid`): on the Superpod more fabric
#   bandwidth helps AFD, from {glue:text}`fabric_low` at {glue:text}`fabric_low_bw` GB/s to
#   {glue:text}`fabric_high` at {glue:text}`fabric_high_bw`, without putting it ahead. On 8-GPU
#   nodes the ratio is not monotone: {glue:text}`o_low` at {glue:text}`o_low_bw` GB/s, a peak of
#   {glue:text}`o_peak` at {glue:text}`o_peak_bw`, {glue:text}`o_high` at {glue:text}`o_high_bw`:
#   from the peak to the top of the range AFD gains {glue:text}`afd_gain` (its attention GPUs'
#   memory caps the batch) and EP {glue:text}`ep_gain`. The paper compares AFD's FFN HFU
#   with EP's grouped-GEMM HFU; end to end both designs use the network, and in this model the
#   Superpod does not favour AFD over an 8-GPU cluster: the median ratio over the six models is
#   {glue:text}`superpod_over_ordinary` times the {glue:text}`ordinary_name` one.

# %% tags=["hide-input"]
glue("ref_name", ref.name, display=False)
curves, current, crossings = {}, {}, {}
sweep = np.geomspace(12.5e9, 800e9, 2 * map_size) * 0.8
for name in dict.fromkeys((ordinary, "h20", "b200")):   # each device once (the pair may be one of them)
    hw = load_hardware(name, profile=hw_profile)
    rm = ratio_map(ref, hw, budget, context, sweep, [ref.moe_intermediate_size], "moe_intermediate_size")
    curves[hw.name] = (rm.bandwidth, rm.ratio[:, 0])
    now = advice_table([ref], [hw], budget, context)[0]["ratio"]
    current[hw.name] = (hw.scale_out_bytes_per_s, now)
    above = rm.ratio[:, 0] > 1
    cross = rm.bandwidth[1:][above[1:] != above[:-1]]
    crossings[hw.name] = ("never" if cross.size == 0 else
                          ", ".join(f"{c / 1e9:.0f}" for c in cross) + " GB/s")
    if hw.slug == hw_o.slug:
        glue("cross_note", f"on the grid drawn the ratio crosses 1 {cross.size} times, so no single bandwidth "
             "separates the designs" if cross.size > 1 else "on the grid drawn this is the only crossing",
             display=False)
fig = ratio_bandwidth_figure(curves, current)
save_figure(fig, "sweet_spots_ratio_bandwidth", output_dir)
glue("fig_sweet_spots_ratio_bandwidth", fig, display=False)
plt.close(fig)
glue("crossings", "; ".join(f"{k}: {v}" for k, v in crossings.items()), display=False)

# %% [markdown]
# ```{glue:figure} fig_sweet_spots_ratio_bandwidth
# :name: sweet-spots-ratio-bandwidth
#
# The decision as a threshold. {glue:text}`ref_name` on three 8-GPU devices, AFD / EP
# ratio against the NIC bandwidth per GPU (stars: each device as it is). The ratio crosses 1 (the
# answer flips) at: {glue:text}`crossings` (first grid point past each crossing). Several
# crossings mean the ratio wanders around 1 over that range: there the designs are even within
# the model's resolution, not alternately ahead. The threshold
# moves with the device (its compute, memory and NVLink set how much network each design can use),
# so a fixed rule of thumb would mislead; `afd advise` computes the crossing for the pair at hand.
# ```
#
# ## Heterogeneous pools

# %% tags=["hide-input"]
attn_hw, ffn_hw = (load_hardware(h, profile=hw_profile) for h in (attention_pool, ffn_pool))
pools = pools_table(ref, [(attn_hw, ffn_hw), (ffn_hw, attn_hw), (ffn_hw, ffn_hw), (attn_hw, attn_hw)], budget,
                    context, prices=prices)
pools_frame = pd.DataFrame([{"design": r["design"], "tokens/s per GPU": r["tokens_per_s_per_gpu"],
                             **{f"{k} GPU-h/Mtok": r["gpu_hours_per_mtok"].get(k, 0.0)
                                for k in (attn_hw.slug, ffn_hw.slug)},
                             "GPU-h/Mtok": r["total_gpu_hours_per_mtok"],
                             **({"USD/Mtok": r["usd_per_mtok"]} if prices else {})} for r in pools])
save_data(pools_frame, "sweet_spots_pools", output_dir)
hetero = pools_frame[pools_frame.design.str.contains(f"\\({attn_hw.slug}\\).*\\({ffn_hw.slug}\\)")]
glue("hetero_design", hetero.design.iloc[0] if len(hetero) else "none", display=False)
pools_frame.style.hide(axis="index").format({c: "{:,.0f}" if c == "tokens/s per GPU" else "{:.3f}"
                                             for c in pools_frame.columns if c != "design"})

# %% [markdown]
# Table 1: {glue:text}`ref_name` with memory-rich attention GPUs ({glue:text}`attn_pool`) and
# compute-rich FFN GPUs ({glue:text}`ffn_pool_name`), beside the homogeneous designs. GPU-hours per
# million output tokens are split by device, so any price list turns them into cost (the
# `prices` parameter does it here, and `afd advise --price-per-gpu-hour` does it per pair). No
# prices are published with this book: which pool is cheaper depends on them.
#
# ## The paper's Table 2: batch-overlap methods, computed

# %% tags=["hide-input"]
glue("attn_pool", attn_hw.name, display=False)
glue("ffn_pool_name", ffn_hw.name, display=False)
methods = pd.DataFrame(overlap_methods(ref, hw_o, budget, context))
save_data(methods, "sweet_spots_overlap_methods", output_dir)
rate = {(r.method, r.design, r.note.split(" ")[0] if r.note else ""): r.tokens_per_s_per_gpu for r in methods.itertuples()}
ep_rates = methods[methods.design == "EP"].tokens_per_s_per_gpu.to_numpy()
afd_rates = dict(zip(methods[methods.design == "AFD"].method, methods[methods.design == "AFD"].tokens_per_s_per_gpu))
glue("afd_3_over_2", f"{afd_rates['3BO'] / afd_rates['2BO']:.2f}x", display=False)
glue("afd_3_over_4", f"{afd_rates['3BO'] / afd_rates['4BO']:.2f}x", display=False)
glue("ep_2bo_loss", f"{1 - ep_rates[2] / ep_rates[0]:.0%}", display=False)
glue("ep_2bo_gain", f"{ep_rates[3] / ep_rates[0] - 1:.0%}", display=False)
methods.rename(columns={"tokens_per_s_per_gpu": "tokens/s per GPU", "batch_per_gpu": "requests per GPU"}).style.hide(
    axis="index").format({"tokens/s per GPU": "{:,.0f}", "requests per GPU": "{:.0f}"})

# %% [markdown]
# Table 2: the best deployment of {glue:text}`ref_name` on {glue:text}`ordinary_name` under each
# batch-overlap method. NBO: one batch, nothing overlapped. SBO: one batch whose all-to-all
# overlaps the shared experts only. 2BO: two micro-batches (EP, at the model's default share of
# the all-to-all hidden and with all of it hidden). 3BO, 4BO: AFD's pipeline, its transfers all
# hidden (the AFD default). For AFD, three micro-batches beat two ({glue:text}`afd_3_over_2`) and
# four ({glue:text}`afd_3_over_4`), as the paper's choice of 3BO implies. For EP, two
# micro-batches at the default half hidden lose {glue:text}`ep_2bo_loss` against one plain batch
# (the second micro-batch reads the weights and launches the kernels again) and gain
# {glue:text}`ep_2bo_gain` with all hidden; the best EP method at the default is SBO. Note the
# asymmetry: the AFD rows hide everything, the default EP row half.
#
# ## The paper's Table 3, with numbers

# %% tags=["hide-input"]
glue("ordinary_name", hw_o.name, display=False)
by_hw = table.pivot(index="model", columns="hardware", values="ratio")
t3 = pd.DataFrame([
    {"condition (paper)": "Superpod-class interconnect",
     "evidence in the model": f"ratio on {hw_s.name} / on {hw_o.name}, median over the models: "
                              f"{float(np.median(by_hw[s_key] / by_hw[o_key])):.2f} (against the paper)"},
    {"condition (paper)": "coarse experts (large M)",
     "evidence in the model": f"{ref.name} shape on {hw_o.name}: {m_o.ratio[i_now, 0]:.2f} at M = {m_o.values[0]:.0f}, "
                              f"peak {np.nanmax(m_o.ratio[i_now]):.2f}, {m_o.ratio[i_now, -1]:.2f} at M = "
                              f"{m_o.values[-1]:.0f}; on {hw_s.name}: {m_s_map.ratio[i_s, 0]:.2f} to "
                              f"{m_s_map.ratio[i_s, -1]:.2f} (mixed)"},
    {"condition (paper)": "lower sparsity (small E/K)",
     "evidence in the model": f"{ref.name} shape on {hw_o.name}: {s_o.ratio[i_now, 0]:.2f} at E/K = {s_o.values[0]:.0f}, "
                              f"{s_o.ratio[i_now, -1]:.2f} at E/K = {s_o.values[-1]:.0f} (against); on {hw_s.name}: "
                              f"{s_s_map.ratio[i_s, 0]:.2f} to {s_s_map.ratio[i_s, -1]:.2f} (with the paper)"},
    {"condition (paper)": "heterogeneous hardware",
     "evidence in the model": "; ".join(f"{d}: {h:.3f} GPU-h per Mtok" for d, h in
                                        zip(pools_frame.design, pools_frame["GPU-h/Mtok"]))},
])
save_data(t3, "sweet_spots_table3", output_dir)
t3.style.hide(axis="index")

# %% [markdown]
# Table 3: each of the paper's favourable conditions and the number behind it in this model
# (ratios are AFD / EP tokens/s per GPU; above 1 favours AFD).
#
# ## A decision flow
#
# 1. Run `afd advise --model M --hardware H` (add `--attn-hardware` for separate pools,
#    `--price-per-gpu-hour` for cost). It searches both designs and prints the ratio.
# 2. If the ratio lies within the spread of the model's errors ({glue:text}`tie_band`), the designs tie on this
#    measure: decide on what the model leaves out (operational cost, failure domains, the jitter
#    tolerance of a 3-stage pipeline).
# 3. Otherwise read the reasons: the binding limit of each design, the AFD FFN side's regime and
#    HFU ceiling, and the two break-even points the command computes (the share of EP's all-to-all
#    that must hide, and the bandwidth at which the answer flips). Those are the thresholds; they
#    are computed for the pair at hand because, as {numref}`sweet-spots-ratio-bandwidth` shows, they move with the hardware.
#
# ## Limitations
#
# - The comparison is only as good as the decode model: its errors against published deployments
#   run from {glue:text}`min_validation_error` to {glue:text}`max_validation_error` (the threshold
#   for a decisive verdict, {glue:text}`decisive`, is the largest ratio of two of them), and the
#   AFD side rests on one published deployment, over-predicted by {glue:text}`afd_validation_error`.
#   Were AFD's predictions generally that high against EP's ({glue:text}`ep_validation_errors`),
#   every ratio here would lean toward AFD by {glue:text}`afd_lean`.
# - The overlap asymmetry decides most verdicts: EP hides half of its all-to-all by default, AFD all
#   of its transfers (`--ep-overlap`, `--afd-overlap`). Whether AFD's transfers cross the NIC once
#   per FFN node (the paper's two-stage forwarding) decides others.
# - Smaller asymmetries, found by an independent recomputation: the EP search does not combine one
#   batch with shared-expert overlap (SBO, Table 2) although it beats one plain batch (favours AFD);
#   AFD's dispatch and combine share one link as in the paper's Eq. 2, although they run in
#   opposite directions (favours EP, about 10% on {glue:text}`ordinary_name`); AFD's dense layers
#   run in three micro-batches on the attention pool with nothing to overlap (favours EP, a few
#   percent).
# - The search covers up to 16 attention and 16 FFN nodes and the EP sizes listed in
#   `afdlib.decode.search`; imbalance is uniform routing's per-step floor unless `--sigma` is given.
# - The maps change one property of {glue:text}`ref_name` at a time; a real model changes several.
