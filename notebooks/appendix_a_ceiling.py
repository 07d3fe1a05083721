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
# # The communication ceiling against expert size and bandwidth (the paper's Appendix A)
#
# **Result.** The ceiling on the FFN side's HFU (hardware FLOP utilisation: FLOP/s reached over peak across the whole stage budget) grows with the expert's intermediate size $M$ and the
# bandwidth per FLOP, and, on ordinary clusters, with the top-$K$ fan-out
# ({numref}`appendix-a-ceiling`). To reach 100% an expert needs $M \ge$
# {glue:text}`m_full_superpod` on {glue:text}`superpod_name` and $M \ge$
# {glue:text}`m_full_dead` in {glue:text}`ordinary_name`'s dead zone; {glue:text}`ref_name` ($M$ =
# {glue:text}`ref_m`) would need {glue:text}`x_scale_out` times {glue:text}`ordinary_name`'s scale-out bandwidth.
#
# When the interconnect feeds the FFN rank, every byte on the wire (1 byte FP8 dispatch + 2 bytes
# BF16 combine per hidden element) carries $6HM / 3H = 2M$ FLOPs of grouped GEMM. The FFN rank
# therefore cannot exceed
#
# $$\text{HFU}_\text{comm} = \frac{2\, BW_\text{eff}\, M}{\text{FLOPS}},$$
#
# which depends on the model through the expert's intermediate size $M$ and, through
# $BW_\text{eff} = \min(BW_\text{out} \max(1, K/N_F),\ BW_\text{up})$, through its top-$K$ as
# well: two-stage forwarding lets a token's $K / N_F$ expert copies per node share one crossing
# of scale-out, so a model with small $K$ (Step3, $K$ = 3; Llama-4-Maverick, $K$ = 1) gets less
# from it at the same $N_F$: where $K < r\,N_F$ ($r = BW_\text{up} / BW_\text{out}$) its best
# bound sits below the ordinary system's "best" curve in {numref}`appendix-a-ceiling` (left), which assumes $BW_\text{eff}$
# reaches the scale-up bandwidth (at $K = 1$, on the dead-zone curve). On the system side it
# depends on the bandwidths per FLOP. Large $M$ (coarse experts) and a Superpod-class fabric
# ($BW_\text{eff}$ = scale-up bandwidth) are what lift it.

# %% tags=["parameters"]
ordinary = "h800"                  # an ordinary cluster (8-GPU nodes, 400 Gb/s per GPU)
superpod = "gb200"                 # a Superpod-class system
hw_profile = "paper"
models = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7", "qwen3-235b-a22b",
          "gpt-oss-120b", "mixtral-8x7b", "dbrx", "minimax-m2", "llama-4-maverick"]
slo_ms = 50.0
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    ordinary=_p.text, superpod=_p.text, hw_profile=_p.PROFILE_HW, models=_p.list_of(_p.text),
    slo_ms=_p.positive, output_dir=_p.text)
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.report.figures import ceiling_figure
from afdlib.report.hfu_readings import full_hfu_words
from afdlib.analysis.hfu import (bandwidth_for_full_hfu, comm_ceiling, dead_zone_floor, grid_summaries, hfu_grid, intermediate_size_for_full_hfu)
from afdlib.report.style import glue_table, save_data, save_figure, setup_style
from afdlib.inputs.specs import Budget

setup_style()
hw_o, hw_s = (load_hardware(h, profile=hw_profile) for h in (ordinary, superpod))
ms = [load_model(m) for m in models]
n_ffn = np.arange(1, 65)
grid = hfu_grid(ms, [hw_o, hw_s], n_ffn, Budget(slo_s=slo_ms / 1e3))
summ = grid_summaries(ms, [hw_o, hw_s], n_ffn, grid)
best = np.array([[np.nan if summ[h.slug, m.slug].max_hfu is None else summ[h.slug, m.slug].max_hfu for m in ms]
                 for h in (hw_o, hw_s)])
ref = ms[0]   # the model the right panel and the text read: the first given (the reference book's: DeepSeek-V3)

# %% tags=["hide-input"]
fig = ceiling_figure(ms, best, hw_o, hw_s, ref)
save_figure(fig, "appendix_a_ceiling", output_dir)
glue("fig_ceiling", fig, display=False)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_ceiling
# :name: appendix-a-ceiling
#
# The communication ceiling $2 BW_\text{eff} M / \text{FLOPS}$ against the expert's intermediate
# size $M$ for an ordinary cluster ({glue:text}`ordinary_name`: best point and dead zone) and a
# Superpod ({glue:text}`superpod_name`), with each catalogue model's best feasible bound at an SLO
# of {glue:text}`slo_a` (OFU (operator FLOP utilisation: FLOP/s reached over peak while computing) 100%, FP8 weights, uniform routing, `paper` hardware profile); the
# numbers under the 0% line are the models' rows in {numref}`tab-ceiling-models`. Right: the dotted lines a, b, c mark the devices named in its legend.
# ```

# %% tags=["hide-input"]
table = pd.DataFrame({"model": [m.name for m in ms], "M": [m.moe_intermediate_size for m in ms],
                      f"best_{ordinary}": best[0], f"best_{superpod}": best[1],
                      f"floor_{ordinary}": [float(dead_zone_floor(hw_o.scale_out_bytes_per_s, m.moe_intermediate_size,
                                                                  hw_o.flops)) for m in ms]})
save_data(table, "appendix_a_models", output_dir)
shown = table.rename(columns={"M": "expert size M", "K": "top-K", f"best_{ordinary}": f"best HFU, {hw_o.name}",
                              f"best_{superpod}": f"best HFU, {hw_s.name}",
                              f"floor_{ordinary}": f"dead-zone floor, {hw_o.name}"})
shown.insert(2, "top-K", [m.experts_per_token for m in ms])
shown.insert(0, "#", range(1, len(ms) + 1))          # the numbers that label the models in the figure
glue_table("tab_ceiling_models", shown.style.format({c: "{:.1%}" for c in shown.columns[4:]}, na_rep="infeasible").hide(
    axis="index"))

# %% [markdown]
# :::{table} Each model's best feasible bound over $N_F$ = 1..64 and its dead-zone floor (percent of peak FP8 FLOPS; "infeasible": no $N_F$ passes the feasibility rule of the previous chapters)
# :name: tab-ceiling-models
#
# ```{glue:md} tab_ceiling_models
# :format: myst
# ```
# :::

# %% tags=["hide-input"]
m_full = {k: float(intermediate_size_for_full_hfu(bw, hw.flops)) for k, hw, bw in (
    ("superpod", hw_s, hw_s.scale_up_bytes_per_s), ("ordinary", hw_o, hw_o.scale_up_bytes_per_s),
    ("dead", hw_o, hw_o.scale_out_bytes_per_s))}
for k, v in m_full.items():
    glue(f"m_full_{k}", f"{v:.0f}", display=False)
need = float(bandwidth_for_full_hfu(ref.moe_intermediate_size, hw_o.flops))
glue("bw_full_dsv3", f"{need / 1e9:.0f}", display=False)
glue("superpod_name", hw_s.name, display=False)
glue("ref_name", ref.name, display=False)
glue("ref_m", f"{ref.moe_intermediate_size}", display=False)
glue("x_scale_up", f"{need / hw_o.scale_up_bytes_per_s:.1f}", display=False)
glue("x_scale_out", f"{need / hw_o.scale_out_bytes_per_s:.1f}", display=False)
glue("ordinary_tflops", f"{hw_o.flops / 1e12:.0f}", display=False)
full_best = [m.name for m in ms if comm_ceiling(1, m.experts_per_token, hw_o.scale_out_bytes_per_s,
                                                 hw_o.scale_up_bytes_per_s, m.moe_intermediate_size, hw_o.flops) >= 1]
full_dead = [m.name for m in ms if m.moe_intermediate_size >= m_full["dead"]]
for key, words in zip(("full_best", "full_dead"), full_hfu_words([m.name for m in ms], full_best, full_dead)):
    glue(key, words, display=False)
glue("ordinary_name", hw_o.name, display=False)
glue("slo_a", f"{slo_ms:g} ms", display=False)

# %% [markdown]
# ## Reading
#
# To reach 100% the expert must satisfy $M \ge \text{FLOPS} / (2 BW_\text{eff})$: $M \ge$
# {glue:text}`m_full_superpod` on {glue:text}`superpod_name`, $M \ge$ {glue:text}`m_full_ordinary`
# on {glue:text}`ordinary_name` at its best point, and $M \ge$ {glue:text}`m_full_dead` in its dead
# zone. {glue:text}`full_best` on {glue:text}`ordinary_name` at one FFN
# node, where the fan-out $K/N_F$ is largest (network alone: HBM may still rule the point out),
# and {glue:text}`full_dead` in its dead zone. Turned around:
# {glue:text}`ref_name`'s experts ($M$ = {glue:text}`ref_m`) would need {glue:text}`bw_full_dsv3` GB/s per GPU, one
# direction, on a {glue:text}`ordinary_tflops` TFLOP/s GPU: {glue:text}`x_scale_up` times
# {glue:text}`ordinary_name`'s scale-up and {glue:text}`x_scale_out` times its scale-out bandwidth.
# Coarse experts and Superpod fabrics are the two levers; the paper's decision framework
# (Section 4) rests on exactly this ratio.
#
# ## Limitations
#
# - The ceiling counts only the bytes of dispatch and combine and the FLOPs of the two grouped
#   GEMMs: shared experts, gating and the attention side are outside it.
# - $BW_\text{eff}$ takes every token to cross to $\min(K, N_F)$ FFN nodes (the paper's rule).
#   Under uniform routing a token's $K$ experts touch fewer distinct nodes on average, so each
#   crossing carries more expert copies and the ceiling is higher; the paper's rule is the
#   conservative one (the decode model's default, `afd_destinations = "expected"`, is not).
# - Bandwidths are sustained values of the `paper` profile; a measured all-to-all efficiency
#   scales every curve down by the same factor.
#
# Data: {download}`appendix_a_models.csv <figures/appendix_a_models.csv>`.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("appendix_a_ceiling")
