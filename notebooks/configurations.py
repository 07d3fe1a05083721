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
# # Configurations: the models and the hardware (the paper's Tables 4 and 5)
#
# **Result.** The catalogue reproduces the paper's Tables 4 and 5 and extends them to
# {glue:text}`n_models` models and {glue:text}`n_hardware` devices, every value with its source.
# The paper's six models span expert granularity $H/M$ from {glue:text}`coarsest_paper_hm` to
# {glue:text}`finest_hm` and sparsity $E/K$ from {glue:text}`densest_ek` to
# {glue:text}`sparsest_paper_ek` ({numref}`models-scatter`), the two properties the paper's
# decision framework turns on.
#
# Tables 4 and 5 of the paper (Appendix B), generated from the project's catalogues
# (`data/models.yaml`, `data/hardware.yaml`), where every value cites its source. The paper's
# values are the defaults of every figure (`profile = "paper"`); the datasheet profile turns
# vendor numbers into sustained figures with named efficiency factors.

# %% tags=["parameters"]
hw_profile = "paper"       # "paper" (the paper's Table 5) or "datasheet" (spec x efficiency)
model_profile = "paper"    # "paper" (the paper's Table 4) or "reference" (Hugging Face configs)
paper_models = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]
paper_hardware = ["h20", "h100", "h200", "h800", "b200", "b300", "gb200", "gb300"]
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    hw_profile=_p.PROFILE_HW, model_profile=_p.PROFILE_MODEL, paper_models=_p.list_of(_p.text),
    paper_hardware=_p.list_of(_p.text), output_dir=_p.text)
import matplotlib.pyplot as plt
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.inputs.catalog import hardware_names, hardware_row, load_hardware, load_model, model_names, model_row
from afdlib.report.figures import models_scatter
from afdlib.report.style import glue_table, save_data, save_figure, setup_style
from afdlib.report.tables import hardware_display, models_display

setup_style()
models = [load_model(s, profile=model_profile) for s in model_names()]
hardware = [load_hardware(s, profile=hw_profile) for s in hardware_names()]
model_table = pd.DataFrame([model_row(m) for m in models])
hw_table = pd.DataFrame([hardware_row(h) for h in hardware])
save_data(model_table, "table4_models", output_dir)
save_data(hw_table, "table5_hardware", output_dir);

# %% [markdown]
# ## The paper's Table 4: models
#
# {numref}`tab-config-models`: H is the hidden size, M one routed expert's intermediate size, E the
# routed experts and K the experts each token visits (top-K); the slug names the model on the command line. The first six rows are the paper's; the others come from the
# reference configurations. GLM-4.7 is printed in the paper with 92 MoE layers next to 3 dense
# layers out of 92; 89 is consistent, and the `reference` profile uses it.

# %% tags=["hide-input"]
model_table["in paper"] = model_table["slug"].isin(paper_models)
glue_table("tab_config_models", models_display(model_table.sort_values(["in paper", "slug"], ascending=[False, True])
                                               ).style.hide(axis="index"))   # fits the page: related columns merged

# %% [markdown]
# :::{table} The models: the paper's Table 4 and the reference configurations
# :name: tab-config-models
#
# ```{glue:md} tab_config_models
# :format: myst
# ```
# :::

# %% [markdown]
# ## The paper's Table 5: hardware
#
# {numref}`tab-config-hardware`, per GPU, per direction, sustained. Rows without a paper value use the datasheet profile
# (the profile in the device cell, after its slug; "Superpod" after its GPUs per node). "Superpod" systems (GB200/GB300 NVL72, CloudMatrix384, TPU pods) have
# scale-out bandwidth equal to scale-up: the fast fabric spans the AFD nodes. One unit for
# memory: GB = 10^9 bytes. The paper profile keeps the paper's Table 5 capacities as printed (H800: 80);
# the datasheet profile converts each vendor's figure from the unit the vendor states (A100,
# H100 and H800 carry 80 GiB = 85.9 GB; TPU v5p 95 GiB = 102.0 GB). FP4 is the dense NVFP4 rate of
# the devices whose tensor cores take NVFP4 (NVIDIA Blackwell; the paper's Table 5 has no FP4 column, so every
# profile takes the datasheet's), "-" elsewhere: NVFP4 weights (`--weights fp4`) are refused there.
# The MI355X has FP4 units too, but for MXFP4, and the catalogue's sources give no rate for it.

# %% tags=["hide-input"]
hw_table["in paper"] = hw_table["slug"].isin(paper_hardware)
glue_table("tab_config_hardware", hardware_display(hw_table.sort_values(["in paper", "slug"], ascending=[False, True])
                                                   ).style.hide(axis="index"))   # no needless decimals: 4500, not 4500.00

# %% [markdown]
# :::{table} The hardware: the paper's Table 5 and the datasheet profiles
# :name: tab-config-hardware
#
# ```{glue:md} tab_config_hardware
# :format: myst
# ```
# :::

# %% [markdown]
# ## Expert granularity against sparsity
#
# The paper's decision framework (Section 4) favours AFD for coarse experts (small H/M) and low
# sparsity (small E/K): both raise the tokens each expert sees per byte of weights.

# %% tags=["hide-input"]
fig = models_scatter(model_table, paper_models)
save_figure(fig, "models_granularity_sparsity", output_dir)
glue("fig_models", fig, display=False)
plt.close(fig)

# %% tags=["hide-input"]
coarse = model_table.loc[model_table["granularity_h_over_m"].idxmin()]
sparse = model_table.loc[model_table["sparsity_e_over_k"].idxmax()]
glue("coarsest_model", coarse["name"], display=False)
glue("coarsest_hm", f"{coarse['granularity_h_over_m']:.2f}", display=False)
glue("sparsest_model", sparse["name"], display=False)
glue("sparsest_ek", f"{sparse['sparsity_e_over_k']:.0f}", display=False)
glue("n_models", len(model_table), display=False)
glue("n_hardware", len(hw_table), display=False)
paper_rows = model_table[model_table["slug"].isin(paper_models)]
glue("finest_hm", f"{paper_rows['granularity_h_over_m'].max():.2f}", display=False)
glue("densest_ek", f"{paper_rows['sparsity_e_over_k'].min():.0f}", display=False)
glue("sparsest_paper_ek", f"{paper_rows['sparsity_e_over_k'].max():.0f}", display=False)
glue("coarsest_paper_hm", f"{paper_rows['granularity_h_over_m'].min():.2f}", display=False)

# %% [markdown]
# ```{glue:figure} fig_models
# :name: models-scatter
#
# The catalogue's models by expert granularity $H/M$ (hidden size over one expert's intermediate
# size) and sparsity $E/K$ (routed experts over experts per token); the paper's six are labelled.
# Down and left: coarser, less sparse experts, which see more tokens per byte of weights.
# ```

# %% [markdown]
# The catalogue holds {glue:text}`n_models` models and {glue:text}`n_hardware` devices. The
# coarsest experts belong to {glue:text}`coarsest_model` (H/M = {glue:text}`coarsest_hm`); the
# sparsest model is {glue:text}`sparsest_model` (E/K = {glue:text}`sparsest_ek`).
#
# ## Limitations
#
# - The `paper` profile keeps the paper's printed values, including its sustained bandwidths; the
#   `datasheet` profile derives them from vendor figures with named efficiency factors, which are
#   this book's assumptions.
# - Values marked unverified in `data/models.yaml` (e.g. Step-3's vocabulary) matter only to the
#   end-to-end model, not to the paper's figures.
#
# Data: {download}`table4_models.csv <figures/table4_models.csv>`,
# {download}`table5_hardware.csv <figures/table5_hardware.csv>`.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("configurations")
