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
# # How many tokens can an FFN rank receive? (the paper's Figure 2)
#
# **Result.** {glue:text}`result_words` ({numref}`fig2-intensity`).
#
# Under AFD every routed token crosses the network twice per layer: FP8 dispatch (1 byte per
# hidden element) and BF16 combine (2 bytes). Within the stage budget $t_B$ a link of
# bandwidth $BW_x$ therefore delivers $B_x = BW_x t_B / 3H$ tokens. With two-stage forwarding a
# token crosses scale-out once per destination node and fans out to $K/N_F$ GPUs inside it, so
# one FFN rank receives (Eq. 9)
#
# $$B_\text{rank} = \min\left(B_\text{out} \max(1, K/N_F),\ B_\text{up}\right),$$
#
# and its grouped GEMMs run at arithmetic intensity (Eq. 10, FP8 weights)
# $I = 2 B_\text{rank} / G$ with $G = \lceil E / (N_F g) \rceil$ local experts.

# %% tags=["parameters"]
model = "deepseek-v3"      # catalogue slug or path to a config.json
hardware = "h800"          # catalogue slug or path to a hardware .yaml
hw_profile = "paper"
model_profile = "paper"
n_ffn_max = 64             # sweep N_F from 1 to n_ffn_max FFN nodes
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    model=_p.text, hardware=_p.text, hw_profile=_p.PROFILE_HW, model_profile=_p.PROFILE_MODEL,
    n_ffn_max=_p.integer(1, 100_000), output_dir=_p.text)
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.report.figures import intensity_figure
from afdlib.analysis.intensity import intensity_sweep
from afdlib.report.intensity_words import result_words, runs_line
from afdlib.report.style import glue_table, save_data, save_figure, setup_style

setup_style()
m = load_model(model, profile=model_profile)
hw = load_hardware(hardware, profile=hw_profile)
K, E, r, g = m.experts_per_token, m.routed_experts, hw.bandwidth_ratio, hw.gpus_per_node
sweep = pd.DataFrame(intensity_sweep(m, hw, np.arange(1, n_ffn_max + 1)))
save_data(sweep, "fig2_intensity", output_dir)
sweep.head(12).rename(columns={
    "n_ffn": "FFN nodes N_F", "local_experts": "experts per GPU G", "intensity": "intensity I (B_out = 1)",
    "intensity_continuous": "I with continuous G", "regime": "regime"}).pipe(
    lambda t: glue_table("tab_intensity_sweep", t.style.hide(axis="index").format(precision=3)))

# %% tags=["hide-input"]
fig = intensity_figure(sweep, m, hw, n_ffn_max)
save_figure(fig, "fig2_intensity", output_dir)
glue("fig_intensity", fig, display=False)
plt.close(fig)

# %% tags=["hide-input"]
glue("model_name", m.name, display=False)
glue("hw_name", hw.name, display=False)
glue("ratio_r", f"{r:.2f}", display=False)
glue("result_words", result_words(sweep, m.name, hw.name, K, r), display=False)
glue("runs_line", runs_line(sweep, r), display=False)

# %% [markdown]
# ```{glue:figure} fig_intensity
# :name: fig2-intensity
#
# Arithmetic intensity of one FFN rank against the number of FFN nodes $N_F$, normalised to
# $B_\text{out}$ = 1 token (Eqs. 9-10; two-stage forwarding, FP8 weights, $g$ GPUs per node).
# Dots: whole experts per GPU, $G = \lceil E/(N_F g) \rceil$; dashed: the continuous
# $G = E/(N_F g)$. Shading: the regimes the sweep enters. The shape does not depend on the SLO or $t_B$,
# which only scale $B_\text{out}$. The first points are in {numref}`tab-intensity-sweep`.
# ```
#
# :::{table} The first points of the sweep: experts per GPU and intensity per FFN node count ($B_\text{out}$ = 1)
# :name: tab-intensity-sweep
#
# ```{glue:md} tab_intensity_sweep
# :format: myst
# ```
# :::
#
# ## Reading
#
# For {glue:text}`model_name` on {glue:text}`hw_name` ($r = BW_\text{up}/BW_\text{out}$ =
# {glue:text}`ratio_r`) the sweep's whole node counts pass through {glue:text}`runs_line`. The four
# regimes, where they occur:
#
# 1. **Scale-up bound.** Scale-up caps $B_\text{rank}$ while the experts per GPU fall with $N_F$,
#    so intensity rises ($K/N_F > r$).
# 2. **Stable** ($1 \le K/N_F \le r$). Each extra node splits the same scale-out traffic: $B_\text{rank}$ and $G$ both fall
#    as $1/N_F$ and intensity stays flat (the discrete curve dips where $E/(N_F g)$ is not a whole
#    number).
# 3. **Scale-out bound, the dead zone.** From $N_F = K$ a token reaches each node at most once:
#    $B_\text{rank} = B_\text{out}$, the FLOPs per rank stop growing, and only the shrinking $G$
#    lifts intensity. This is where the bound on the HFU (hardware FLOP utilisation: FLOP/s reached over peak across the whole stage budget) of the next
#    chapter is pinned to the scale-out network, whatever is added.
# 4. **Maximum intensity.** One expert per GPU ($G$ = 1, which takes precedence): more nodes only add
#    replicas.
#
# ## Limitations
#
# - Token counts are the network's capacity within $t_B$, not a batch a scheduler forms: the
#   attention side must also produce them (the next chapter, on the HFU ceiling, adds its limits).
# - Routing is taken as uniform and every token to fan out to $\max(1, K/N_F)$ GPUs per node; skew
#   (chapter *Where sigma comes from*) and the exact destination count (Appendix A) move the borders.
# - Scale-up and scale-out bandwidths are sustained values of the `paper` profile; the regimes
#   depend on their ratio $r$ only.
#
# Re-run with another system, from the repository root:
# `.venv/bin/papermill notebooks/fig2_intensity.ipynb /tmp/fig2.ipynb -p hardware b200 -p output_dir /tmp/fig2`,
# or `.venv/bin/afd intensity --model deepseek-v3 --hardware b200`. Data:
# {download}`fig2_intensity.csv <figures/fig2_intensity.csv>`.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("fig2_intensity")
