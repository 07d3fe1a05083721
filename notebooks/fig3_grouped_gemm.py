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
# # The grouped-GEMM roofline on the EP side (the roofline half of the paper's Figure 3)
#
# **Result.** {glue:text}`result_lead` ({numref}`fig3-gemm`).
#
# ```{glue:md} result_md
# :format: myst
# ```
#
# Large-scale EP feeds each GPU's experts from the whole deployment's batch, so the question
# is the classic roofline of one GPU's grouped GEMMs: how many tokens does each expert get per
# step? Each local expert reads its FP8 weights ($3HM$ bytes) once and does $6nHM$ FLOPs on its
# $n$ tokens; its time is the longer of the two, and the grouped GEMM runs the experts one after
# another. The ridge, where weight read and compute take equal time, is
# $n^* = \text{FLOPS} / (2\,BW_\text{mem})$ tokens per expert.
#
# **Imbalance.** An expert below the ridge pays its full weight read however few tokens it has,
# so a skewed split lowers HFU (hardware FLOP utilisation: FLOP/s reached over peak across the whole stage budget) at the same average. The skew used here is a Zipf law over the
# GPU's local experts, $n_i \propto i^{-s}$ with a named exponent $s$ (0 = balanced). This is our
# assumption, not the paper's (its Fig. 3 is measured); the imbalance chapter derives realistic
# skews from DeepSeek-V3 routing data.

# %% tags=["parameters"]
hardware = ["h800", "h20"]
hw_profile = "paper"
experts_per_gpu = 8                 # local experts in one grouped GEMM (EP32 for DeepSeek-V3); None: the own EP deployment's (8 where none is feasible)
zipf_exponents = [0.5, 1.0, 1.5]    # skew of the imbalanced curves
ofu = 1.0                           # compute efficiency of the kernel (1.0: the roofline)
afd_model = "deepseek-v3"           # whose AFD ceiling is drawn for comparison
focus_hardware = "h800"             # the device the text reads (the first device where it is not drawn)
ep_model = "deepseek-v3"            # the model of the published EP deployment below
# DeepSeek's published decode deployment (open-infra-index day 6): EP144, 32 redundant experts,
# ~14.8k output tok/s per 8-GPU node, 20-22 tok/s per user; one MTP draft -> 2 tokens per step
ep_tokens_per_gpu_s = 14800 / 8
ep_tokens_per_user_s = 20.0
ep_tokens_per_request_step = 2.0
ep_gpus = 144
ep_redundant_experts = 32
paper_ep_hfu = 0.60                 # "about 60%" measured grouped-GEMM HFU the paper prints
slo_ms = 50.0                       # the model's own best EP deployment: per-token SLO ...
context = 4096                      # ... and context (the decode model's defaults, as afd advise)
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    hardware=_p.list_of(_p.text), hw_profile=_p.PROFILE_HW, experts_per_gpu=_p.optional(_p.integer(1, 4096)),
    zipf_exponents=_p.list_of(_p.nonnegative, 0), ofu=_p.fraction, afd_model=_p.text,
    focus_hardware=_p.text, ep_model=_p.text,
    ep_tokens_per_gpu_s=_p.positive, ep_tokens_per_user_s=_p.positive,
    ep_tokens_per_request_step=_p.positive, ep_gpus=_p.integer(1, 100_000),
    ep_redundant_experts=_p.integer(0, 100_000), paper_ep_hfu=_p.fraction, slo_ms=_p.positive, context=_p.positive,
    output_dir=_p.text)
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.evaluator.grouped_gemm import ep_tokens_per_expert, grouped_gemm_hfu, skewed_tokens
from afdlib.analysis.hfu import hfu_sweep
from afdlib.report.figures import grouped_gemm_figure
from afdlib.report.style import save_data, save_figure, setup_style
from afdlib.studies.ep_load import fig3_lead, own_ep_load
from afdlib.inputs.specs import Budget
from afdlib.decode.step import DECODE_T_GAP_S

setup_style()
hws = [load_hardware(h, profile=hw_profile) for h in hardware]
model, deployed = load_model(afd_model), load_model(ep_model)
tokens = np.geomspace(1, 8192, 400)
exponents = np.array([0.0, *zipf_exponents])
ep_tokens = ep_tokens_per_expert(ep_tokens_per_gpu_s, ep_tokens_per_user_s, ep_tokens_per_request_step, ep_gpus,
                                 deployed.experts_per_token, deployed.routed_experts + ep_redundant_experts)
focus = hws[hardware.index(focus_hardware) if focus_hardware in hardware else 0]
own = own_ep_load(model, focus, Budget(slo_s=slo_ms / 1e3, l_accept=1.0, t_gap_s=DECODE_T_GAP_S), context)
experts_per_gpu = experts_per_gpu or own["own_local"] or 8
counts = skewed_tokens(tokens[None, :], experts_per_gpu, exponents[:, None])       # (exponent, tokens, expert)
curves = {h.slug: grouped_gemm_hfu(counts, h, ofu=ofu) for h in hws}
afd = {h.slug: hfu_sweep(model, h, np.arange(1, 65))[1].max_hfu for h in hws}
frame = pd.concat([pd.DataFrame({"hardware": h, "zipf_exponent": s, "tokens_per_expert": tokens, "hfu": curves[h][k]})
                   for h in curves for k, s in enumerate(exponents)])
save_data(frame, "fig3_grouped_gemm", output_dir);

# %% tags=["hide-input"]
fig = grouped_gemm_figure(tokens, curves, exponents, hws, ep_tokens, afd, paper_ep_hfu, experts_per_gpu, ofu, model.name,
                          (focus.slug, own["own_tokens"]))
save_figure(fig, "fig3_grouped_gemm", output_dir)
glue("fig_gemm", fig, display=False)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_gemm
# :name: fig3-gemm
#
# Roofline HFU of one GPU's grouped GEMMs against tokens per expert, FP8 weights
# ({glue:text}`experts_per_gpu` local experts, OFU (operator FLOP utilisation: FLOP/s reached over peak while computing) {glue:text}`ofu_v`), balanced and with Zipf skew
# over the local experts (one line per exponent $s$). Marked: {glue:text}`marked`. This is the
# roofline half of the paper's Figure 3, whose measured half is not reproduced.
# ```

# %% tags=["hide-input"]
from afdlib.report.hfu_readings import as_markdown, grouped_gemm_readings
from afdlib.report.style import glue_all

readings = grouped_gemm_readings(
    hws, focus.slug, afd, model, deployed, ep_tokens, experts_per_gpu,
    exponents, ofu, paper_ep_hfu, ep_tokens_per_request_step, ep_gpus, deployed.routed_experts + ep_redundant_experts,
    tuple(filter(None, [own["own_mark"]])))
glue_all(as_markdown({"own_md": own["own_md"], "result_lead": fig3_lead(readings, own, model, deployed)} | readings))

# %% [markdown]
# ## Reading
#
# The ridge sits at {glue:text}`ridges`. {glue:text}`ep_model`'s published decode deployment
# {cite}`deepseek_infra` gives about {glue:text}`ep_tokens` tokens per expert per step (requests per GPU x
# {glue:text}`tokens_per_step` tokens per step with MTP x {glue:text}`ep_gpus` GPUs x {glue:text}`ep_k` experts
# per token / {glue:text}`physical` physical experts), the paper's 740. There the roofline allows
# {glue:text}`allows`.
#
# ```{glue:md} own_md
# :format: myst
# ```
#
# ```{glue:md} measured_md
# :format: myst
# ```
#
# ```{glue:md} low_ridge_md
# :format: myst
# ```
#
# ## Limitations
#
# - A **roofline**: tile quantisation, launch and synchronisation costs are not modelled; the
#   decode-model chapter applies a measured matmul efficiency instead.
# - The **skew** is an assumed Zipf law over one GPU's local experts; the imbalance chapters
#   measure it from DeepSeek-V3's routing and find it per layer and per step.
# - The tokens per expert come from one published deployment and the decode model's own best EP
#   deployment of the chapter's model; the sweep shows any other load.
#
# Data: {download}`fig3_grouped_gemm.csv <figures/fig3_grouped_gemm.csv>`.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("fig3_grouped_gemm")
