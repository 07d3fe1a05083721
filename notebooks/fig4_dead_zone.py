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
# **Result.** With 8-GPU nodes and a 400 Gb/s NIC per GPU, the network caps AFD's FFN side, and
# from $N_F = K$ on adding FFN nodes no longer helps ({numref}`fig4-hfu`): DeepSeek-V3 on H800
# peaks at {glue:text}`dsv3_h800` and sits on the dead-zone floor {glue:text}`dsv3_h800_floor`.
# How low the cap is depends on the model and on the FLOPS behind the NIC: coarse experts lift it
# (Step3 {glue:text}`step3_h800` on H800), and H20's low FLOPS keep DeepSeek-V3 at 100% up to
# $N_F$ = {glue:text}`h20_dsv3_full` and at {glue:text}`h20_dsv3_k` on its floor. Superpods
# (GB200/GB300 NVL72) have no dead zone ({glue:text}`dsv3_gb200` for DeepSeek-V3 at every
# $N_F$). One H200 node reaches {glue:text}`dsv3_h200` for DeepSeek-V3, if the SLO is at least
# {glue:text}`dsv3_h200_slo_min` ms; the maxima move with the SLO only where the weight read
# decides feasibility ({numref}`fig4-hfu-alt`).
#
# Within one stage budget $t_B$ an FFN rank can only compute on the tokens the network brings it.
# The two grouped GEMMs do $6 B_\text{rank} H M$ FLOPs on $B_\text{rank} = BW_\text{eff} t_B / 3H$
# tokens, so $H$ and $t_B$ cancel and the HFU is bounded by the **communication ceiling**
# (Appendix A)
#
# $$\text{HFU}_\text{comm} = \frac{2\, BW_\text{eff}\, M}{\text{FLOPS}},\qquad
#   BW_\text{eff} = \min\left(BW_\text{out}\max(1, K/N_F),\ BW_\text{up}\right),$$
#
# capped at 100% by compute (OFU = 100%, as the paper assumes). A point counts only if it is
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
l_accept = 1.7             # accepted tokens per step with MTP
t_gap_ms = 15.0            # fixed gap per step
gpus_per_node = 8
n_ffn_max = 64
hbm_usable_fraction = 1.0  # share of HBM the routed weights may take (paper's reading: all of it)
ceiling_model = "deepseek-v3"  # whose communication ceiling is drawn bold red
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    hardware=_p.list_of(_p.text), models=_p.list_of(_p.text), hw_profile=_p.PROFILE_HW,
    model_profile=_p.PROFILE_MODEL, slo_ms=_p.positive, slo_ms_alt=_p.positive, l_accept=_p.positive,
    t_gap_ms=_p.nonnegative,
    gpus_per_node=_p.integer(1, 4096), n_ffn_max=_p.integer(1, 100_000), hbm_usable_fraction=_p.fraction,
    ceiling_model=_p.text, output_dir=_p.text)
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from myst_nb import glue

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.report.figures import hfu_frame, hfu_panels
from afdlib.analysis.hfu import grid_summaries, hfu_grid, min_slo_for_weight_read
from afdlib.report.style import glue_table, save_data, save_figure, setup_style
from afdlib.inputs.specs import Budget

setup_style()
hws = [load_hardware(h, profile=hw_profile).with_overrides(gpus_per_node=gpus_per_node) for h in hardware]
ms = [load_model(m, profile=model_profile) for m in models]
n_ffn = np.arange(1, n_ffn_max + 1)
budget = Budget(slo_s=slo_ms / 1e3, l_accept=l_accept, t_gap_s=t_gap_ms / 1e3)
grid = hfu_grid(ms, hws, n_ffn, budget, hbm_usable_fraction=hbm_usable_fraction)  # arrays of shape (device, model, N_F)

save_data(hfu_frame(grid, hardware, models, n_ffn), "fig4_hfu_bound", output_dir)
summ = grid_summaries(ms, hws, n_ffn, grid)
budget_alt = Budget(slo_s=slo_ms_alt / 1e3, l_accept=l_accept, t_gap_s=t_gap_ms / 1e3)
grid_alt = hfu_grid(ms, hws, n_ffn, budget_alt, hbm_usable_fraction=hbm_usable_fraction)
summ_alt = grid_summaries(ms, hws, n_ffn, grid_alt)

# %% tags=["hide-input"]
fig = hfu_panels(grid, hws, ms, n_ffn, ceiling_model=models.index(ceiling_model) if ceiling_model in models else 0,
                 title=f"HFU upper bound of the AFD FFN side (SLO {slo_ms:g} ms, L_accept {l_accept:g}, "
                       f"t_g {t_gap_ms:g} ms, g = {gpus_per_node})")
save_figure(fig, "fig4_dead_zone", output_dir)
glue("fig_hfu", fig, display=False)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_hfu
# :name: fig4-hfu
#
# The HFU upper bound of the AFD FFN side against the number of FFN nodes $N_F$, one panel per
# device, at an SLO of {glue:text}`slo` ($L_\text{accept}$ = {glue:text}`l_acc`, $t_g$ =
# {glue:text}`t_g`, {glue:text}`g_node` GPUs per node, OFU 100%, FP8 weights, routing uniform).
# Bold red: the communication ceiling of {glue:text}`ceiling_name`, capped at 100%. Crosses:
# infeasible points, marked by the rule they fail (legend).
# ```

# %% tags=["hide-input"]
fig = hfu_panels(grid_alt, hws, ms, n_ffn, ceiling_model=models.index(ceiling_model) if ceiling_model in models else 0,
                 title=f"The same at SLO {slo_ms_alt:g} ms (L_accept {l_accept:g}, t_g {t_gap_ms:g} ms, "
                       f"g = {gpus_per_node})")
save_figure(fig, "fig4_dead_zone_alt", output_dir)
glue("fig_hfu_alt", fig, display=False)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_hfu_alt
# :name: fig4-hfu-alt
#
# As {numref}`fig4-hfu` at an SLO of {glue:text}`slo_alt`. The maxima change only where the weight
# read, not the network, decides feasibility.
# ```
#
# ## Per-panel maxima
#
# The largest feasible bound of each model on each device ({numref}`tab-dead-zone-maxima`), and the
# $N_F$ where it is first reached ({numref}`tab-dead-zone-best-n`).

# %% tags=["hide-input"]
maxima = pd.DataFrame({h.slug: {x.name: (np.nan if summ[h.slug, x.slug].max_hfu is None
                                          else 100 * summ[h.slug, x.slug].max_hfu) for x in ms} for h in hws}).T
best_n = pd.DataFrame({h.slug: {x.name: summ[h.slug, x.slug].best_n_ffn for x in ms} for h in hws}).T
save_data(maxima.reset_index(names="hardware"), "fig4_maxima_percent", output_dir)
glue_table("tab_dead_zone_maxima", maxima.rename_axis("device").reset_index().style.hide(axis="index").format(
    {x.name: "{:.1f}%" for x in ms}, na_rep="infeasible"))
glue_table("tab_dead_zone_best_n", best_n.rename_axis("device").reset_index().style.hide(axis="index").format(
    na_rep="-", precision=0))

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
def pct(hw, model):
    s = summ.get((hw, model))
    return "n/a" if s is None or s.max_hfu is None else f"{100 * s.max_hfu:.1f}%"


def floor_pct(hw, model):
    s = summ.get((hw, model))
    return "n/a" if s is None else f"{100 * s.dead_zone_floor:.1f}%"


glue("slo", f"{slo_ms:g} ms", display=False)
glue("slo_alt", f"{slo_ms_alt:g} ms", display=False)
glue("l_acc", f"{l_accept:g}", display=False)
glue("t_g", f"{t_gap_ms:g} ms", display=False)
glue("g_node", gpus_per_node, display=False)
glue("ceiling_name", (ms[models.index(ceiling_model)] if ceiling_model in models else ms[0]).name, display=False)


def pct_alt(hw, model):
    s = summ_alt.get((hw, model))
    return "n/a" if s is None or s.max_hfu is None else f"{100 * s.max_hfu:.1f}%"


def bound_at(hw, model, n):
    """The bound at N_F = n (percent), feasible or not."""
    if hw not in hardware or model not in models or n > n_ffn_max:
        return "n/a"
    return f"{100 * float(grid['hfu'][hardware.index(hw), models.index(model), n - 1]):.1f}%"


def full_until(hw, model):
    """The last N_F of the leading run of points at 100%."""
    if hw not in hardware or model not in models:
        return "n/a"
    h = grid["hfu"][hardware.index(hw), models.index(model)]
    return str(int(np.argmax(h < 1 - 1e-9))) if (h < 1 - 1e-9).any() else f"{n_ffn_max}"


glue("h20_dsv3_full", full_until("h20", "deepseek-v3"), display=False)
glue("h20_dsv3_k", bound_at("h20", "deepseek-v3", 8), display=False)
glue("h20_glm_k", bound_at("h20", "glm-4.7", 8), display=False)
glue("step3_b200", pct("b200", "step3"), display=False)
glue("kimi_h200", pct("h200", "kimi-k2"), display=False)
glue("kimi_h200_alt", pct_alt("h200", "kimi-k2"), display=False)
glue("dsv3_h200", pct("h200", "deepseek-v3"), display=False)
if "h200" in hardware and "deepseek-v3" in models:
    slo_min = float(min_slo_for_weight_read(ms[models.index("deepseek-v3")], hws[hardware.index("h200")], 1, budget))
    glue("dsv3_h200_slo_min", f"{slo_min * 1e3:.0f}", display=False)
else:
    glue("dsv3_h200_slo_min", "n/a", display=False)
def _pct_or_none(v):
    return None if v is None else round(100 * v, 1)


changed = [(h.slug, x.name) for h in hws for x in ms
           if _pct_or_none(summ[h.slug, x.slug].max_hfu) != _pct_or_none(summ_alt[h.slug, x.slug].max_hfu)]
glue("n_changed", len(changed), display=False)
glue("n_maxima", len(hws) * len(ms), display=False)
glue("changed_where", ", ".join(sorted({c[0].upper() for c in changed})) or "none", display=False)
glue("dsv3_h800", pct("h800", "deepseek-v3"), display=False)
glue("dsv3_h800_n", str(summ.get(("h800", "deepseek-v3")).best_n_ffn) if ("h800", "deepseek-v3") in summ else "n/a",
     display=False)
glue("dsv3_h800_floor", floor_pct("h800", "deepseek-v3"), display=False)
glue("dsv3_gb200", pct("gb200", "deepseek-v3"), display=False)
above_ep = [h.name.replace("NVIDIA ", "") for h in hws if "deepseek-v3" in models
            and (summ[h.slug, "deepseek-v3"].max_hfu or 0) > 0.60]
glue("dsv3_above_ep", ", ".join(above_ep) or "no device", display=False)
from afdlib.analysis.hfu import failed_rules

if "h800" in hardware and "deepseek-v3" in models:
    names = {"hbm-capacity": f"the HBM capacity ({hws[hardware.index('h800')].hbm_bytes / 1e9:g} GB)",
             "hbm-time": "the weight read within the stage budget"}
    f1 = failed_rules(grid["fails"][hardware.index("h800"), models.index("deepseek-v3"), 0])
    glue("dsv3_h800_fails", " and ".join(names[x] for x in f1) or "no rule", display=False)
else:
    glue("dsv3_h800_fails", "n/a", display=False)
glue("kimi_gb300", pct("gb300", "kimi-k2"), display=False)
glue("glm_gb200", pct("gb200", "glm-4.7"), display=False)
glue("step3_h800", pct("h800", "step3"), display=False)
glue("dsv3_b200", pct("b200", "deepseek-v3"), display=False)
glue("dsv3_b200_floor", floor_pct("b200", "deepseek-v3"), display=False)
glue("t_b_us", f"{1e6 * float(grid['t_b'][0, models.index('deepseek-v3') if 'deepseek-v3' in models else 0, 0]):.0f}",
     display=False)

# %% [markdown]
# ## Reading
#
# With an SLO of {glue:text}`slo` (DeepSeek-V3: $t_B$ = {glue:text}`t_b_us` µs per layer and
# stage):
#
# - **DeepSeek-V3 on H800** cannot pass {glue:text}`dsv3_h800`, reached at $N_F$ =
#   {glue:text}`dsv3_h800_n` (at one node the point fails {glue:text}`dsv3_h800_fails`). From $N_F = K = 8$
#   the bound is pinned to the dead-zone floor {glue:text}`dsv3_h800_floor`: adding FFN nodes
#   never helps. The paper prints 33.1% and 10.3%.
# - **B200** raises scale-up but keeps 400 Gb/s per GPU: DeepSeek-V3 peaks at
#   {glue:text}`dsv3_b200` at one node and falls to {glue:text}`dsv3_b200_floor`: more FLOPS
#   behind the same NIC lowers the floor.
# - **Superpod** systems (GB200/GB300 NVL72: scale-out = scale-up = 720 GB/s) have no dead
#   zone: {glue:text}`dsv3_gb200` for DeepSeek-V3, {glue:text}`kimi_gb300` for Kimi-K2, and
#   {glue:text}`glm_gb200` for GLM-4.7, whose finer experts ($M$ = 1536) carry fewer FLOPs per
#   byte on the wire. The paper prints 65.5%, 65.5% and 49.2%.
# - **Coarse experts lift the ceiling where the same bandwidth feeds them**: Step3 ($M$ = 5120,
#   $K$ = 3) reaches {glue:text}`step3_h800` on H800. Not everywhere: with $K$ = 3 a token brings
#   fewer expert copies per node to share one crossing of scale-out, so on B200, whose NIC binds
#   from one node on, Step3 reaches {glue:text}`step3_b200` against DeepSeek-V3's
#   {glue:text}`dsv3_b200` (Appendix A).
# - **H20 is compute-bound only while the fan-out lasts**: DeepSeek-V3 stays at 100% up to
#   $N_F$ = {glue:text}`h20_dsv3_full`; from $N_F = K = 8$ its bound is the dead-zone floor,
#   {glue:text}`h20_dsv3_k` (GLM-4.7: {glue:text}`h20_glm_k`). H20's low FLOPS make that floor
#   high, not absent.
# - **One H200 node**: its 141 GB hold all of DeepSeek-V3's
#   routed experts at $N_F$ = 1, where the FFN pool is fed over NVLink, so the bound reaches
#   {glue:text}`dsv3_h200`, above the ~60% EP measures on H800 (the grouped-GEMM chapter; DeepSeek-V3's
#   bound passes 60% on {glue:text}`dsv3_above_ep` in this figure). That point needs the
#   weight read to fit in $t_B$, an SLO of at least {glue:text}`dsv3_h200_slo_min` ms; from
#   $N_F$ = 2 the low ceiling of ordinary clusters applies as on H800. A one-node FFN pool also
#   limits the attention side it can serve, which this bound does not see (the end-to-end
#   chapters do).
# - **The SLO matters where the weight read decides feasibility**: at {glue:text}`slo` and
#   {glue:text}`slo_alt` the maxima that change (to 0.1%) are {glue:text}`n_changed` of
#   {glue:text}`n_maxima`, on {glue:text}`changed_where`; Kimi-K2 on H200 goes from {glue:text}`kimi_h200` to
#   {glue:text}`kimi_h200_alt`, and DeepSeek-V3's {glue:text}`dsv3_h200` on H200 holds only
#   above the {glue:text}`dsv3_h200_slo_min` ms found above.
#
# ## What the paper does not pin down, and the rule used here
#
# The paper prints the assumptions (L_accept = 1.7, $t_g$ = 15 ms, all layers equal, 8 GPUs per
# node, OFU = 100%) but not the SLO; it is a parameter here (50 ms by default, 100 ms drawn
# beside it; the maxima depend on it only where the weight read decides feasibility). Its feasibility rule is not printed
# either. The rule used is: routed FP8 weights per GPU (MoE layers x $3 G H M$) within HBM
# (parameter `hbm_usable_fraction`, 1.0), and the weight read of one layer within $t_B$. That rule
# reproduces every number the text prints for the **H800, B200, GB200 and GB300** panels. The
# **H20, H100 and H200** panels cannot be checked from the text: the paper only says DeepSeek-V3
# and Kimi-K2 are "HBM-limited" on Hopper at 1-2 nodes. Under our rule they are at one node on
# H100 and H800 (80 GB), and Kimi-K2 also on H20 (capacity) and H200 (read time); the H20 panel
# is compute-bound at small $N_F$ (296 TFLOP/s against 50 GB/s per GPU) and floored from
# $N_F = K$, and the H100/H200 panels use the paper's 360 GB/s scale-up. Read those three panels
# as this book's reading, not the paper's. Memory is counted in 10^9 bytes throughout; this
# figure uses the paper's Table 5 capacities as printed (H800: 80 GB). The physical 80 GiB of an
# H800 (85.9 GB, the datasheet profile's figure) would hold DeepSeek-V3's 81.7 GB of routed
# weights at $N_F$ = 1, but that point still fails the weight read within $t_B$, so no maximum
# here changes.
#
# ## Limitations
#
# - An **upper bound**: OFU 100% (every FLOP the network feeds runs at peak), all layers equal,
#   routing uniform. Kernel efficiency (the grouped-GEMM chapter) and skew (the imbalance
#   chapters) only lower it.
# - It sees the **FFN side alone**: whether the attention side can produce the tokens, and what
#   the whole deployment delivers per GPU, is the end-to-end chapters' question.
# - The **feasibility rule** is this book's reading (above), and the SLO is a parameter; the
#   H20, H100 and H200 panels cannot be checked against the paper's text.
#
# Data: {download}`fig4_hfu_bound.csv <figures/fig4_hfu_bound.csv>`,
# {download}`fig4_maxima_percent.csv <figures/fig4_maxima_percent.csv>`. Re-run:
# `afd hfu --model deepseek-v3 --hardware h800 --slo-ms 100`.
