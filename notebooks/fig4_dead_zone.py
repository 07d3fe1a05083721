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
# # The HFU ceiling of AFD's FFN side, and the dead zone (the paper's Figure 4)
#
# **Result.** {glue:text}`focus_lead` ({numref}`fig4-hfu`), and from $N_F = K$ = {glue:text}`k` on
# {glue:text}`focus_tail`.
#
# ```{glue:md} result_md
# :format: myst
# ```
#
# Within one stage budget $t_B$ an FFN rank can only compute on the tokens the network brings it.
# The two grouped GEMMs do $6 B_\text{rank} H M$ FLOPs on $B_\text{rank} = BW_\text{eff} t_B / 3H$
# tokens, so $H$ and $t_B$ cancel and the HFU (hardware FLOP utilisation: FLOP/s reached over peak across
# the whole stage budget) is bounded by the **communication ceiling**
# (Appendix A)
#
# $$\text{HFU}_\text{comm} = \frac{2\, BW_\text{eff}\, M}{\text{FLOPS}},\qquad
#   BW_\text{eff} = \min\left(BW_\text{out}\max(1, K/N_F),\ BW_\text{up}\right),$$
#
# capped at 100% by compute (OFU (operator FLOP utilisation: FLOP/s reached over peak while computing) = 100%, as the paper assumes). A point counts only if it is
# feasible: the routed FP8 weights of all MoE layers fit in HBM, and one layer's weights
# ($3 G H M$ bytes) can be read within $t_B$. From $N_F \ge K$ every token reaches a node at most
# once, $BW_\text{eff} = BW_\text{out}$, and the bound sits on the floor $2 BW_\text{out} M / \text{FLOPS}$
# however many FFN nodes are added: the **dead zone**.

# %% tags=["parameters"]
hardware = ["h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300"]
models = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]
hw_profile = "paper"
model_profile = "paper"
slo_ms = 50.0              # the paper does not print its SLO; 50 ms is our default
slo_ms_alt = 100.0         # a second SLO, drawn beside it
mtp = 1.7                  # accepted tokens per step with MTP (afd --mtp)
t_gap_ms = 15.0            # fixed gap per step
gpus_per_node = None       # None: each device's own GPUs per node; a number overrides every device
n_ffn_max = 64
hbm_usable_fraction = 1.0  # share of HBM the routed weights may take (paper's reading: all of it)
ceiling_model = "deepseek-v3"  # whose communication ceiling is drawn as a red band (the model the text reads)
focus_hardware = "h800"    # the device the text reads (the first device where it is not drawn)
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    hardware=_p.list_of(_p.text), models=_p.list_of(_p.text), hw_profile=_p.PROFILE_HW,
    model_profile=_p.PROFILE_MODEL, slo_ms=_p.positive, slo_ms_alt=_p.positive, mtp=_p.positive,
    t_gap_ms=_p.nonnegative,
    gpus_per_node=_p.optional(_p.integer(1, 4096)), n_ffn_max=_p.integer(1, 100_000), hbm_usable_fraction=_p.fraction,
    ceiling_model=_p.text, focus_hardware=_p.text, output_dir=_p.text)
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.report.figures import hfu_frame, hfu_panels
from afdlib.analysis.hfu import grid_summaries, hfu_grid
from afdlib.report.style import glue_table, save_data, save_figure, setup_style
from afdlib.inputs.specs import Budget

setup_style()
hws = [load_hardware(h, profile=hw_profile) for h in hardware]
hws = [h.with_overrides(gpus_per_node=gpus_per_node) for h in hws] if gpus_per_node else hws
g_title = f"g = {hws[0].gpus_per_node}" if len({h.gpus_per_node for h in hws}) == 1 else "g per device"
ms = [load_model(m, profile=model_profile) for m in models]
n_ffn = np.arange(1, n_ffn_max + 1)
budget = Budget(slo_s=slo_ms / 1e3, l_accept=mtp, t_gap_s=t_gap_ms / 1e3)
grid = hfu_grid(ms, hws, n_ffn, budget, hbm_usable_fraction=hbm_usable_fraction)  # arrays of shape (device, model, N_F)

save_data(hfu_frame(grid, hardware, models, n_ffn), "fig4_hfu_bound", output_dir)
summ = grid_summaries(ms, hws, n_ffn, grid)
budget_alt = Budget(slo_s=slo_ms_alt / 1e3, l_accept=mtp, t_gap_s=t_gap_ms / 1e3)
grid_alt = hfu_grid(ms, hws, n_ffn, budget_alt, hbm_usable_fraction=hbm_usable_fraction)
summ_alt = grid_summaries(ms, hws, n_ffn, grid_alt)

# %% tags=["hide-input"]
fig = hfu_panels(grid, hws, ms, n_ffn, ceiling_model=models.index(ceiling_model) if ceiling_model in models else 0,
                 title=f"HFU upper bound of the AFD FFN side (SLO {slo_ms:g} ms, L_accept {mtp:g}, "
                       f"t_g {t_gap_ms:g} ms, {g_title})")
save_figure(fig, "fig4_dead_zone", output_dir)
glue("fig_hfu", fig, display=False)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_hfu
# :name: fig4-hfu
#
# The HFU upper bound of the AFD FFN side against the number of FFN nodes $N_F$, one panel per
# device, at an SLO of {glue:text}`slo` ($L_\text{accept}$ = {glue:text}`l_acc`, $t_g$ =
# {glue:text}`t_g`, {glue:text}`g_node`, OFU 100%, FP8 weights, routing uniform).
# Wide red band: the communication ceiling of {glue:text}`ceiling_name`, capped at 100%; a model's line on it is
# drawn over it, and dashed where it lies on another model's line (the colours alternate). Crosses:
# infeasible points, marked by the rule they fail (legend).
# ```

# %% [markdown]
# ## Per-panel maxima
#
# The largest feasible bound of each model on each device ({numref}`tab-dead-zone-maxima`), and the
# $N_F$ where it is first reached ({numref}`tab-dead-zone-best-n`).

# %% tags=["hide-input"]
maxima = pd.DataFrame({h.slug: {x.name: (np.nan if summ[h.slug, x.slug].max_hfu is None
                                          else 100 * summ[h.slug, x.slug].max_hfu) for x in ms} for h in hws}).T
best_n = pd.DataFrame({h.slug: {x.name: summ[h.slug, x.slug].best_n_ffn for x in ms} for h in hws}).T
save_data(maxima.reset_index(names="hardware"), "fig4_maxima_percent", output_dir)
named = {h.slug: h.name for h in hws}   # the tables name each device from its data, not its file
glue_table("tab_dead_zone_maxima", maxima.rename(index=named).rename_axis("device").reset_index().style.hide(
    axis="index").format({x.name: "{:.1f}%" for x in ms}, na_rep="infeasible"))
glue_table("tab_dead_zone_best_n", best_n.rename(index=named).rename_axis("device").reset_index().style.hide(
    axis="index").format(na_rep="-", precision=0))

# %% [markdown]
# :::{table} The largest feasible bound of each model on each device at {glue:text}`slo` (percent of peak FP8 FLOPS)
# :name: tab-dead-zone-maxima
#
# ```{glue:md} tab_dead_zone_maxima
# :format: myst
# ```
# :::
#
# :::{table} The $N_F$ at which each maximum is first reached
# :name: tab-dead-zone-best-n
#
# ```{glue:md} tab_dead_zone_best_n
# :format: myst
# ```
# :::

# %% tags=["hide-input"]
from afdlib.report.hfu_readings import Panels, as_markdown, dead_zone_readings
from afdlib.report.style import glue_all

panels = Panels(hws, ms, n_ffn, grid, summ, summ_alt, catalogue=[*hardware, *models])
i, j = hardware.index(focus_hardware) if focus_hardware in hardware else 0, models.index(ceiling_model) if ceiling_model in models else 0
glue_all(as_markdown(dead_zone_readings(panels, hws[i].slug, ms[j].slug, budget, slo_ms, slo_ms_alt, gpus_per_node,
                                        arguments=(models[j], hardware[i]))))

# %% [markdown]
# ## Reading
#
# With an SLO of {glue:text}`slo` ({glue:text}`focus_model`: $t_B$ = {glue:text}`t_b_us` µs per layer and
# stage):
#
# ```{glue:md} reading_md
# :format: myst
# ```
#
# ## What the paper does not pin down, and the rule used here
#
# The paper prints the assumptions (L_accept = 1.7, $t_g$ = 15 ms, all layers equal, 8 GPUs per
# node, OFU = 100%) but not the SLO; it is a parameter here ({glue:text}`slo` by default,
# and the maxima at {glue:text}`slo_alt` read beside it in the bullets above: they depend on it only where
# the weight read decides feasibility, so a second figure would repeat the first). This figure takes {glue:text}`g_node`. Its feasibility rule is not
# printed either. The rule used is: routed FP8 weights per GPU (MoE layers x $3 G H M$) within HBM
# (parameter `hbm_usable_fraction`, 1.0), and the weight read of one layer within $t_B$.
#
# ```{glue:md} panels_md
# :format: myst
# ```
#
# Memory is counted in 10^9 bytes throughout; {glue:text}`capacities`.
#
# ```{glue:md} h800_memory_md
# :format: myst
# ```
#
# ## Limitations
#
# - An **upper bound**: OFU 100% (every FLOP the network feeds runs at peak), all layers equal,
#   routing uniform. Kernel efficiency (the grouped-GEMM chapter) and skew (the imbalance
#   chapters) only lower it.
# - It sees the **FFN side alone**: whether the attention side can produce the tokens, and what
#   the whole deployment delivers per GPU, is the end-to-end chapters' question.
# - The **feasibility rule** is this book's reading (above), and the SLO is a parameter{glue:text}`unchecked`.
#
# Data: {download}`fig4_hfu_bound.csv <figures/fig4_hfu_bound.csv>`,
# {download}`fig4_maxima_percent.csv <figures/fig4_maxima_percent.csv>`. Re-run:
# {glue:md}`rerun_md`.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("fig4_dead_zone")
