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
# # Where sigma comes from: balancedness from routing statistics
#
# **Result.** DeepSeek-V3's routing ({glue:text}`loads`) gives each design its own balancedness, set by how many
# GPUs share the experts and how many tokens each sees. Compared like with like at the paper's
# $\lambda$ = {glue:text}`lambda_value`, at {glue:text}`afd_gpus_total` GPUs and the same tokens per
# GPU, expert imbalance costs AFD {glue:text}`afd_name` and EP{glue:text}`ep_equal` {glue:text}`like_closeness`
# (AFD {glue:text}`like_gap` points; {glue:text}`sens_range` as tokens per step vary), and
# DP (data-parallel attention) imbalance across the attention GPUs, which the data cannot measure, assumed equal for both designs,
# {glue:text}`dp_tips`. At the $\lambda$ the
# decode model itself gives, the designs stay within {glue:text}`own_max_gap` points of each other,
# and {glue:text}`own_sign`: EP's $\lambda$ alone ({glue:text}`own_lambda_ep`) gives AFD
# {glue:text}`afd_name` {glue:text}`alone_lead` points, with a DP break-even of
# {glue:text}`alone_break_even`; the AFD deployment the decode model picks, {glue:text}`own_afd`, gets
# {glue:text}`own_lead` points against {glue:text}`own_ep`, with a DP break-even of
# {glue:text}`own_break_even`. So {glue:text}`own_verdict`; at the paper's own $\lambda$ and
# deployment it is {glue:text}`like_tie`.
#
# The paper takes the balancedness $\sigma$ (mean/max per-rank load) as a given number. Here it is
# derived: first for uniform top-K routing (analytic and Monte-Carlo), then for DeepSeek-V3's routing
# statistics ({glue:text}`loads`), with experts placed in contiguous blocks (plain EP) or with redundant
# experts in the manner of DeepSeek's EPLB {cite}`eplb`, and finally fed into the penalty of the paper's Figure 6 to ask:
# **for DeepSeek-V3 on {glue:text}`hw_name`, how much does imbalance cost each design?**
#
# The measured loads are SGLang's published DeepSeek-V3 expert statistics {cite}`sglang_ep` (accumulated tokens per
# expert and layer on benchmark prompts; workload undocumented). They are read from `counts_dir`
# (by default the shared reference data; a folder you give must exist) when the file is there; otherwise
# the notebook falls back to the Zipf fits the project ships in `data/deepseek_v3_routing_fit.yaml`
# (derived by `scripts/fit_routing.py`).

# %% tags=["parameters"]
counts_dir = None                      # folder of {"logical_count": ...} files; None: the shared reference data
counts_file = "decode_in1000out1000"   # which file (decode, 1000 in / 1000 out)
experts_per_token = 8
ep_sizes = [8, 16, 32, 64, 128, 144, 256, 288]
redundant = 32                         # redundant replicas in the EPLB placement (DeepSeek uses 32)
batch_tokens = [128, 512, 2048, 8192, 32768]
trials = 3
seed = 0
layer_sample = 15                      # layers sampled per batch (evenly spaced), for speed
uniform_trials = 20
# the question at the end: DeepSeek-V3 on H800
hardware = "h800"
n_attn_afd = 8                         # AFD: Fig. 4's best N_F for DeepSeek-V3 on H800, lambda 4
n_ffn_afd = 2
ep_size = 144                          # EP: DeepSeek's decode deployment
lambda_ep = 4.0                        # EP: t_a / t_f, the paper's 4
ep_tokens_per_gpu = 92.5 * 2           # tokens per GPU per step (Fig. 3: 1850 / 20 requests x 2 with MTP)
like_ep_sizes = [64, 144]              # other EP sizes at the same tokens per GPU (the like-for-like one is AFD's GPU count)
like_trials = 6                        # sampled batches per layer for the like-with-like comparison
like_layer_step = 2                    # every second MoE layer (29 of 58), for speed
token_factors = [0.5, 1.0, 2.0, 4.0]   # tokens per step, relative to AFD's, for the sensitivity
dp_sigmas = [0.95, 0.9, 0.8]           # DP imbalance (attention side), which no data here measures
# the decode model's own lambda, at `afd advise`'s settings
hw_profile = "datasheet"
slo_ms = 50.0
context = 4096
mtp = 1.0                              # accepted tokens per step (1: no MTP)
published = ["deepseek-v3-h800-ep144-online", "deepseek-v3-h800-ep128-profile"]   # DeepSeek's own EP decode
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    counts_dir=_p.optional(_p.folder), counts_file=_p.text, experts_per_token=_p.integer(1, 4096),
    ep_sizes=_p.list_of(_p.integer(1, 65_536)), redundant=_p.integer(0, 65_536),
    batch_tokens=_p.list_of(_p.integer(1, 10_000_000)), trials=_p.integer(1, 1000),
    seed=_p.integer(0, 2**63 - 1), layer_sample=_p.integer(1, 1000), uniform_trials=_p.integer(1, 100_000),
    hardware=_p.text, n_attn_afd=_p.integer(1, 100_000), n_ffn_afd=_p.integer(1, 100_000),
    ep_size=_p.integer(1, 100_000), lambda_ep=_p.positive, ep_tokens_per_gpu=_p.positive,
    like_ep_sizes=_p.list_of(_p.integer(1, 65_536)), like_trials=_p.integer(1, 1000),
    like_layer_step=_p.integer(1, 1000), token_factors=_p.list_of(_p.positive), dp_sigmas=_p.list_of(_p.fraction),
    hw_profile=_p.PROFILE_HW, slo_ms=_p.positive, context=_p.nonnegative, mtp=_p.positive,
    published=_p.list_of(_p.text), output_dir=_p.text)
import matplotlib.pyplot as plt
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.analysis.imbalance import alpha_afd, alpha_ep
from afdlib.analysis.imbalance_cost import imbalance_cost, lambda_display, like_with_like_study
from afdlib.studies.imbalance_lambda import own_lambda_study
from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.report.figures import measured_sigma_figure, uniform_sigma_figure
from afdlib.report.routing_findings import chapter_findings
from afdlib.report.style import glue_all, glue_table, save_data, save_figure, setup_style
from afdlib.routing.balance import placement_replicas
from afdlib.routing.measured import moe_layers
from afdlib.routing.provenance import routing_data
from afdlib.routing.sweeps import longrun_balance, per_batch_balance, sample_layers, uniform_check, zipf_fit_summary, zipf_fit_table

setup_style()
counts = (data := routing_data(counts_dir, counts_file)).counts   # measured, or rebuilt from the shipped fits
glue_all(data.readings())
layers = moe_layers(counts)
n_experts = counts.shape[1]

# %% [markdown]
# ## Uniform routing: analytic against Monte-Carlo
#
# With uniform top-K routing of $T$ tokens over $E$ experts on $R$ ranks ($E/R$ experts each), a
# rank's load has mean $\mu = TK/R$ and variance $v = TK\frac{1}{R}(1-\frac{1}{R})\frac{E-K}{E-1}$.
# The expected maximum of $R$ such loads is about $\mu + z_R\sqrt{v}$, with $z_R$ the expected
# maximum of $R$ standard normals (Blom's approximation; $\sqrt{2\ln R}$ is its leading term and
# overestimates it for small $R$). The Monte-Carlo picks $K$ distinct experts per token
# ({numref}`sigma-uniform`).

# %% tags=["hide-input"]
u = uniform_check(batch_tokens, experts_per_token, n_experts, ep_sizes, uniform_trials, seed)
fig = uniform_sigma_figure(batch_tokens, u.ranks, u.analytic, u.leading, u.monte_carlo, experts_per_token)
save_figure(fig, "sigma_uniform", output_dir)
glue("fig_sigma_uniform", fig, display=False)
plt.close(fig)
gap, gap_leading = u.gap(min_load=64)
for key, value in {"n_moe_layers": int(layers.size), "n_experts_counts": int(n_experts), "u_trials": uniform_trials,
                   "u_tokens": ", ".join(str(t) for t in batch_tokens), "u_experts": n_experts,
                   "u_k": experts_per_token, "mc_gap": f"{gap:.3f}", "mc_gap_leading": f"{gap_leading:.3f}"}.items():
    glue(key, value, display=False)

# %% [markdown]
# ```{glue:figure} fig_sigma_uniform
# :name: sigma-uniform
#
# Balancedness $\sigma$ (mean/max rank load) of uniform top-{glue:text}`u_k` routing over
# {glue:text}`u_experts` experts against the number of EP ranks $R$, for batches of $T$ =
# {glue:text}`u_tokens` tokens. Lines: Blom's approximation; dotted: its $\sqrt{2 \ln R}$
# leading term; dots: Monte-Carlo, mean of {glue:text}`u_trials` draws.
# ```
#
# Where each rank expects at least 64 token-expert pairs, analytic and Monte-Carlo agree within
# {glue:text}`mc_gap` (the $\sqrt{2\ln R}$ form: within {glue:text}`mc_gap_leading`). Even
# perfectly uniform routing costs balancedness as EP grows and batches shrink: that part of the
# imbalance no placement can remove.
#
# ## DeepSeek-V3's expert loads
#
# The data: {glue:text}`n_moe_layers` MoE layers x {glue:text}`n_experts_counts` experts, from
# {glue:text}`origin`. Long-run counts first ({numref}`tab-sigma-longrun`): experts in contiguous blocks, and
# placed by EPLB with and without redundant replicas.

# %% tags=["hide-input"]
eplb = f"eplb_plus_{redundant}"
longrun = pd.DataFrame(longrun_balance(counts, ep_sizes, redundant, max_over_mean=True))
save_data(longrun, "sigma_deepseek_longrun", output_dir)
fitted, fit_check = data.fit_check(ep_sizes, redundant, longrun)   # measured data: the shipped fits, dashed
fitted = None if fitted is None else pd.DataFrame(fitted)
glue("fit_check", fit_check, display=False)
longrun.rename(columns={
    "ep_size": "EP ranks", "contiguous": "σ, contiguous", "eplb_no_replicas": "σ, EPLB",
    eplb: f"σ, EPLB + {redundant}", "contiguous_max_over_mean": "max/mean, contiguous",
    f"{eplb}_max_over_mean": f"max/mean, EPLB + {redundant}"}
).pipe(lambda t: glue_table("tab_sigma_longrun", t.style.hide(axis="index").format(precision=3)))

# %% [markdown]
# :::{table} Long-run balancedness $\sigma$ and max/mean expert load per EP size, by placement
# :name: tab-sigma-longrun
#
# ```{glue:md} tab_sigma_longrun
# :format: myst
# ```
# :::
#
# Then per-batch: batches of $T$ tokens drawn from each layer's long-run popularity (a lower bound
# on real per-step skew: real batches are correlated), with the placement fitted to the long-run
# counts, as a static placement would be.

# %% tags=["hide-input"]
sample = sample_layers(layers, layer_sample)
per_batch = pd.DataFrame(per_batch_balance(counts, ep_sizes, redundant, batch_tokens, experts_per_token, trials, seed,
                                           sample))
save_data(per_batch, "sigma_deepseek_batches", output_dir)
fig = measured_sigma_figure(longrun, per_batch, redundant, len(sample), trials, fitted)
save_figure(fig, "sigma_deepseek", output_dir)
glue("fig_sigma_deepseek", fig, display=False)
plt.close(fig)
for key, value in {"d_layers": len(sample), "d_trials": trials, "d_redundant": redundant}.items():
    glue(key, value, display=False)

# %% [markdown]
# ```{glue:figure} fig_sigma_deepseek
# :name: sigma-deepseek
#
# Balancedness of DeepSeek-V3's expert loads ({glue:text}`origin`) against the number of EP ranks.
# Left: the long-run counts, median over MoE layers, with experts in contiguous blocks, placed by
# EPLB without replicas, and with {glue:text}`d_redundant` redundant replicas. Right: batches of $T$ tokens drawn from each layer's long-run popularity, EPLB with
# replicas, median over {glue:text}`d_layers` layers x {glue:text}`d_trials` batches (the
# like-with-like section below uses more of both).
# ```
#
# The shipped Zipf fits as a stand-in ({numref}`sigma-deepseek`):
# {glue:text}`fit_check`
#
# EPLB's replicas matter once each GPU holds only a few experts: at EP32 packing alone nearly
# balances the long-run load, from EP64 on only replicas do. The dips at 128 and 256 ranks are
# slot counts that do not divide evenly (256 + 32 = 288 slots): DeepSeek's EPLB requires equal
# slots per GPU, this re-implementation allows unequal ones and shows what they cost.
#
# ## A fitted skew
#
# A Zipf law over the sorted expert shares, fitted per layer (least squares), summarises each
# layer by one exponent $s$; total variation is the share of load the fit puts on the wrong ranks.

# %% tags=["hide-input"]
fit_table = data.fit_layers() or zipf_fit_table(counts, layers)   # the fits' data: as shipped, against the shipped measured
save_data(pd.DataFrame(fit_table), "sigma_zipf_fit", output_dir)
summary = pd.DataFrame(zipf_fit_summary(fit_table))   # rows: exponent, total variation, max/mean measured, fitted
median = summary["median"]
for key, value in {"s_median": f"{median[0]:.2f}", "s_range": f"{summary['min'][0]:.2f}-{summary['max'][0]:.2f}",
                   "tv_median": f"{median[1]:.3f}", "mm_measured": f"{median[2]:.2f}",
                   "mm_fitted": f"{median[3]:.2f}"}.items():
    glue(key, value, display=False)
glue_table("tab_sigma_zipf", summary.style.hide(axis="index").format(precision=3))

# %% [markdown]
# :::{table} The Zipf fits over the MoE layers: exponent, total variation, max/mean measured and fitted
# :name: tab-sigma-zipf
#
# ```{glue:md} tab_sigma_zipf
# :format: myst
# ```
# :::
#
# In {numref}`tab-sigma-zipf`, the median exponent is $s$ = {glue:text}`s_median` (range {glue:text}`s_range`), with a median
# total variation of {glue:text}`tv_median`. The fit overstates the hottest expert (median
# max/mean {glue:text}`mm_fitted` fitted against {glue:text}`mm_measured` measured): real loads
# have a flatter head and a heavier middle than a power law. Use the measured histogram when you
# have one; the fit is a stand-in.
#
# ## What imbalance costs each design
#
# DeepSeek-V3 on {glue:text}`hw_name`: each design sees its own batch per layer step. EP spreads the deployment's whole step over
# `ep_size` GPUs; AFD's FFN pool of $N_F \times g$ GPUs receives what the scale-out network delivers
# in $t_B$ (Eq. 9). Both place their experts the same way: statically, by EPLB fitted to the long-run
# counts, with the same number of redundant replicas ({glue:text}`d_redundant`, and at least one
# expert per GPU). Replicas are a placement choice open to either design, not a property of one, and
# AFD's FFN GPUs, which hold no attention weights or KV cache, have the more room for them; the paper
# takes $\sigma$ as given and prescribes no placement. A step runs its layers in sequence, so its
# $\sigma$ is the harmonic mean over layers.

# %% tags=["hide-input"]
afd, ep = imbalance_cost(counts, load_model("deepseek-v3"), load_hardware(hardware), n_attn_afd, n_ffn_afd, ep_size,
                         redundant, lambda_ep, ep_tokens_per_gpu, trials=trials, seed=seed, layers=sample)
answer = pd.DataFrame([afd.__dict__, ep.__dict__])
save_data(answer, "sigma_cost", output_dir)
for key, value in (cost_readings := {
        "afd_tokens": f"{afd.tokens_per_step:,}", "ep_tokens": f"{ep.tokens_per_step:,}", "afd_expert_gpus": afd.gpus, "ep_expert_gpus": ep.gpus,
        "sigma_afd": f"{afd.sigma:.3f}", "alpha_afd": f"{afd.alpha:.3f}", "loss_afd": f"{1 - afd.alpha:.1%}",
        "sigma_ep": f"{ep.sigma:.3f}", "alpha_ep": f"{ep.alpha:.3f}", "loss_ep": f"{1 - ep.alpha:.1%}",
        "verdict": "less than" if afd.alpha > ep.alpha else "more than", "hw_name": load_hardware(hardware).name,
        "consequence": "AFD ahead" if afd.alpha > ep.alpha else "EP ahead",
        "ep_slots_per_gpu": f"{(n_experts + placement_replicas(ep_size, n_experts, redundant)) / ep_size:.2g}",
        "afd_slots_per_gpu": f"{(n_experts + placement_replicas(afd.gpus, n_experts, redundant)) / afd.gpus:.3g}",
        "alpha_afd_at_ep_sigma": f"{float(alpha_afd(ep.sigma, n_attn_afd, n_ffn_afd).alpha):.3f}",
        "alpha_ep_at_ep_sigma": f"{float(alpha_ep(ep.sigma, n_attn_afd / n_ffn_afd)):.3f}"}).items():
    glue(key, value, display=False)
answer.rename(columns={"gpus": "GPUs holding experts", "tokens_per_step": "tokens per layer step", "sigma": "σ (step)",
                       "alpha": "α (throughput kept)", "rounding": "attention rounding"}).pipe(
    lambda t: glue_table("tab_sigma_cost", t.style.hide(axis="index").format(precision=3)))

# %% [markdown]
# :::{table} What imbalance costs each design, at each design's own deployment
# :name: tab-sigma-cost
#
# ```{glue:md} tab_sigma_cost
# :format: myst
# ```
# :::
#
# From {glue:text}`origin` ({numref}`tab-sigma-cost`): AFD's FFN pool sees {glue:text}`afd_tokens` tokens per layer step
# and keeps $\sigma$ = {glue:text}`sigma_afd`; EP sees {glue:text}`ep_tokens` tokens over far more
# GPUs and keeps $\sigma$ = {glue:text}`sigma_ep`. Through the penalty of the paper's Figure 6,
# imbalance costs **AFD {glue:text}`loss_afd`** of its throughput ($\alpha$ =
# {glue:text}`alpha_afd`) and **EP {glue:text}`loss_ep`** ($\alpha$ = {glue:text}`alpha_ep`).
# Here AFD loses {glue:text}`verdict` EP. The paper's comparison (its Figure 6) holds at *equal*
# $\sigma$: at EP's $\sigma$ = {glue:text}`sigma_ep` AFD would keep {glue:text}`alpha_afd_at_ep_sigma`
# against EP's {glue:text}`alpha_ep_at_ep_sigma` at the same $\lambda$ ({glue:text}`lambda_value`). But the
# two designs do not see the same $\sigma$: AFD's few FFN GPUs hold {glue:text}`afd_slots_per_gpu` expert slots each and
# average their skew away, while EP spreads {glue:text}`ep_slots_per_gpu` expert slots per GPU over a
# large deployment, where even replicas leave stragglers. And these two deployments differ in
# size ({glue:text}`afd_expert_gpus` FFN GPUs against {glue:text}`ep_expert_gpus` GPUs) and in tokens per GPU, so this comparison ({glue:text}`consequence`)
# does not say which design suffers less from imbalance: the next section compares like with like.
# Re-run with your own recorder dump, from the repository root:
# `.venv/bin/papermill notebooks/sigma_from_routing.ipynb /tmp/sigma.ipynb -p counts_dir my_dumps -p counts_file run1 -p output_dir /tmp/sigma`,
# or `.venv/bin/afd balance --counts my_dumps/run1.json --ranks 144 --redundant 32 --tokens 26640`.
#
# ## Like with like: the same GPUs and the same tokens per GPU
#
# AFD {glue:text}`afd_name` uses {glue:text}`afd_gpus_total` GPUs and moves {glue:text}`afd_tokens`
# tokens per layer step. Below, every design sees the same sampled batches: EP{glue:text}`ep_equal`
# at the same GPU count and tokens per GPU, and other EP sizes at the same tokens per GPU;
# {glue:text}`like_trials` batches per layer on {glue:text}`like_layers` MoE layers, the step's
# $\sigma$ the harmonic mean over layers, the range the 10th-90th percentile over trials.

# %% tags=["hide-input"]
like_layers = layers[::like_layer_step]
like = like_with_like_study(counts, experts_per_token, n_attn_afd, n_ffn_afd, load_hardware(hardware).gpus_per_node,
                            like_ep_sizes, redundant, lambda_ep, afd.tokens_per_step, like_trials, seed, like_layers)
like_table = pd.DataFrame(like.rows())
save_data(like_table, "sigma_like_with_like", output_dir)
glue_all(like.readings())   # leads are taken between the alphas as printed
glue_table("tab_sigma_like", like_table.style.hide(axis="index"))

# %% [markdown]
# :::{table} Step balancedness $\sigma$ and the share of throughput kept, $\alpha$, at the same tokens per GPU
# :name: tab-sigma-like
#
# ```{glue:md} tab_sigma_like
# :format: myst
# ```
# :::
#
# {numref}`tab-sigma-like` gives medians over trials, 10th-90th percentiles in brackets, with the spread of single
# layers' $\sigma$. At the
# same {glue:text}`afd_gpus_total` GPUs and the same tokens per GPU, AFD keeps
# {glue:text}`like_alpha_afd` and EP{glue:text}`ep_equal` {glue:text}`like_alpha_ep`
# ({glue:text}`like_gap` points for AFD), {glue:text}`like_although`: EP's penalty only stretches its FFN
# part ($\lambda$ = {glue:text}`lambda_value`), and AFD's is set by whole attention nodes,
# {glue:text}`afd_flat`. Other sizes at the same tokens per
# GPU: {glue:text}`like_others`.

# %% tags=["hide-input"]
sens_trials = max(2, like_trials // 2)   # the other factors: the like-with-like run's layers and seed, half its trials (for speed)
sens = pd.DataFrame(like.token_sensitivity(afd.tokens_per_step, token_factors, sens_trials))   # factor 1: the like-with-like run
save_data(sens, "sigma_like_tokens", output_dir)
dp = pd.DataFrame(like.dp_rows(dp_sigmas))
save_data(dp, "sigma_like_dp", output_dir)
lead, dp_lead = like.printed_lead(sens), like.printed_lead(dp)
glue_all(lead_readings := {"sens_range": f"{100 * lead[0]:+.1f} to {100 * lead[1]:+.1f}", "dp_list": ", ".join(
    f"{d:g}" for d in dp_sigmas), "dp_lead": f"{100 * dp_lead[0]:+.1f} to {100 * dp_lead[1]:+.1f}"})
glue_table("tab_sigma_tokens", sens.style.hide(axis="index").format(
    {"tokens per step": "{:,.0f}", **{c: "{:.3f}" for c in sens.columns[1:]}}))

# %% [markdown]
# :::{table} Expert imbalance alone, AFD's tokens per step scaled by {glue:text}`factors_list`
# :name: tab-sigma-tokens
#
# ```{glue:md} tab_sigma_tokens
# :format: myst
# ```
# :::
#
# In {numref}`tab-sigma-tokens` (EP at the same GPU count; medians over the layers of {numref}`tab-sigma-like`, its run at factor 1 and
# {glue:text}`sens_trials_v` batches per layer at the others): AFD's lead in $\alpha$ runs
# {glue:text}`sens_range` points.

# %% tags=["hide-input"]
glue("factors_list", ", ".join(f"{f:g}" for f in token_factors), display=False)
glue("sens_trials_v", sens_trials, display=False)
glue_table("tab_sigma_dp", dp.style.hide(axis="index").format("{:.3f}"))

# %% [markdown]
# :::{table} What DP imbalance on the attention side adds, at AFD's tokens per step
# :name: tab-sigma-dp
#
# ```{glue:md} tab_sigma_dp
# :format: myst
# ```
# :::
#
# In {numref}`tab-sigma-dp`, AFD keeps at
# most the DP $\sigma$ (its stage budget is fixed, the paper's Figure 5) while EP regrows the batch into the
# freed FFN time. At DP $\sigma$ = {glue:text}`dp_list` AFD's lead becomes {glue:text}`dp_lead`
# points.
#
# ## At the decode model's own $\lambda$
#
# {numref}`tab-sigma-like`, {numref}`tab-sigma-tokens` and {numref}`tab-sigma-dp` take the paper's $\lambda$ = {glue:text}`lambda_value` for both designs (AFD
# {glue:text}`afd_name`'s $N_A/N_F$, EP's $t_a/t_f$). Both are one quantity: a step's attention
# work against its FFN work, in GPU-seconds (AFD sizes its pools so that $t_a = t_f$). The decode
# model gives its own, from its stage times without imbalance (the penalty stretches the FFN by
# $1/\sigma$ itself), for DeepSeek-V3 on {glue:text}`hw_name` at `afd advise`'s settings ({glue:text}`own_settings`).
# The AFD deployment its search picks in the paper's form (one attention pool, no data-parallel
# domains, whose balance $\lambda$ is) is {glue:text}`own_afd`: $\lambda$ = $N_A/N_F$ =
# {glue:text}`own_lambda_afd` (its work ratio $N_A t_a / (N_F t_f)$: {glue:text}`own_work_ratio`).
# EP on the same {glue:text}`own_gpus` GPUs, in DeepSeek's form (two micro-batches, low-latency
# kernels) at its largest batch within the SLO, has $t_a/t_f$ = {glue:text}`own_lambda_ep`;
# DeepSeek's published decode deployments, at their own batches: {glue:text}`own_published`.
# {numref}`tab-sigma-lambda` repeats {numref}`tab-sigma-like` at each $\lambda$: with the paper's AFD and only EP's $\lambda$ changed,
# then with the decode model's AFD deployment and its micro-batch of {glue:text}`own_tokens` tokens.

# %% tags=["hide-input"]
budget = Budget(slo_s=slo_ms / 1e3, l_accept=mtp, t_gap_s=DECODE_T_GAP_S)   # `afd advise`'s
own = own_lambda_study(counts, load_model("deepseek-v3", profile="reference"),
                       load_hardware(hardware, profile=hw_profile), budget, context, redundant, published,
                       like_trials, seed, like_layers)
lam_table = pd.DataFrame(own.rows(like))
save_data(lam_table, "sigma_like_lambda", output_dir)
glue_all(own.readings(like))
glue_table("tab_sigma_lambda", lambda_display(lam_table).style.hide(axis="index"))   # eight columns: fits the page
glue_table("tab_sigma_raw", chapter_findings({**cost_readings, **like.readings(), **lead_readings, **own.readings(
    like)}, data, redundant, output_dir).style.hide(axis="index"))   # the findings as printed, beside the raw files'

# %% [markdown]
# :::{table} Expert imbalance like with like at the paper's $\lambda$ and at the decode model's
# :name: tab-sigma-lambda
#
# ```{glue:md} tab_sigma_lambda
# :format: myst
# ```
# :::
#
# {numref}`tab-sigma-lambda` gives medians over trials (AFD's lead between the alphas as printed; the DP break-even as in {numref}`tab-sigma-dp`,
# 1 where EP keeps more at any DP balancedness). EP's $\lambda$ alone, from
# {glue:text}`lambda_value` to {glue:text}`own_lambda_ep`, moves AFD {glue:text}`afd_name`'s lead
# from {glue:text}`like_gap` to {glue:text}`alone_lead` points and the DP break-even from
# {glue:text}`dp_break_even_words` to {glue:text}`alone_break_even`: a lower $\lambda$ gives EP's FFN,
# which imbalance stretches, more of its step, while AFD's $\alpha$ is set by whole attention nodes.
# The decode model's own AFD deployment, {glue:text}`own_afd`, spreads {glue:text}`own_tokens`
# tokens per step (against {glue:text}`afd_tokens`) over {glue:text}`own_ffn_gpus` FFN GPUs: its
# $\sigma$ is {glue:text}`own_sigma_afd`, its whole attention nodes keep $\alpha$ =
# {glue:text}`own_alpha_afd`, and {glue:text}`own_ep` keeps {glue:text}`own_alpha_ep`: AFD
# {glue:text}`own_lead` points, DP break-even: {glue:text}`own_break_even`. With EP's $\lambda$
# anywhere in {glue:text}`own_lam_range` (the values above), AFD's lead runs
# {glue:text}`own_lead_range` points (DP break-even {glue:text}`own_be_range`).
#
# **What the numbers support.** At AFD's own size and tokens per GPU, expert imbalance
# ({glue:text}`loads`) costs the two designs within a few points of each other. At the paper's $\lambda$ it is
# {glue:text}`like_tie`: AFD {glue:text}`like_gap` points against EP{glue:text}`ep_equal`, {glue:text}`sens_range`
# across tokens per step; against other EP sizes at the same tokens per GPU, AFD's lead is
# {glue:text}`ep_sizes_others` points: it grows with EP's size (more ranks to balance), not with a
# difference between the designs at equal size. AFD's high $\sigma$ buys it little because its
# $\alpha$ is pinned by whole attention nodes. At the decode model's $\lambda$ ({numref}`tab-sigma-lambda`) the
# designs stay within {glue:text}`own_max_gap` points, and {glue:text}`own_sign`: AFD
# {glue:text}`afd_name` {glue:text}`alone_lead`, AFD {glue:text}`own_afd` {glue:text}`own_lead`. So
# expert imbalance alone moves the comparison by a few points at most, and
# {glue:text}`own_verdict`. DP imbalance, which this data cannot measure, assumed the same for
# both designs, moves it by the DP break-even of the two forms (EP keeps more below it):
# {glue:text}`dp_break_even_words` at the paper's $\lambda$, {glue:text}`alone_break_even` for AFD
# {glue:text}`afd_name` at EP's own $\lambda$, and for AFD {glue:text}`own_afd`:
# {glue:text}`own_break_even`.
#
# ## Which findings need the raw files
#
# The raw expert-load files are not redistributed: a clone runs this chapter on the shipped fits, which
# keep each layer's skew but not its whole histogram, and per-batch balancedness depends on the whole
# histogram. {glue:text}`raw_note`
#
# :::{table} This build's findings against the chapter's on the raw files (recorded in `data/`)
# :name: tab-sigma-raw
#
# ```{glue:md} tab_sigma_raw
# :format: myst
# ```
# :::
#
# {numref}`tab-sigma-raw` lists every headline number of this chapter; the differences are this build's
# value minus the recorded one.
#
# ## Limitations
#
# - One workload: SGLang's published counts on benchmark prompts. Another workload, language or
#   model changes the per-layer skew; re-run with your own counts (above).
# - Per-step batches are drawn independently from long-run popularity: real batches are correlated
#   (a long prompt repeats its routing), so per-step $\sigma$ here is an upper bound.
# - DP imbalance is not in the data: {numref}`tab-sigma-dp` assumes a DP balancedness, the same for both designs.
# - The placement is static, fitted to the long-run counts; placements re-balanced online are not
#   modelled.
# - The $\lambda$ of {numref}`tab-sigma-lambda` is the decode model's at one setting (above): another SLO, context or
#   hardware profile picks another AFD deployment and batch, and the comparison moves with them.
#
# Data: {download}`sigma_deepseek_longrun.csv <figures/sigma_deepseek_longrun.csv>`,
# {download}`sigma_deepseek_batches.csv <figures/sigma_deepseek_batches.csv>`,
# {download}`sigma_zipf_fit.csv <figures/sigma_zipf_fit.csv>`, {download}`sigma_cost.csv <figures/sigma_cost.csv>`,
# {download}`sigma_like_with_like.csv <figures/sigma_like_with_like.csv>`,
# {download}`sigma_like_lambda.csv <figures/sigma_like_lambda.csv>`,
# {download}`sigma_findings.json <figures/sigma_findings.json>`.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("sigma_from_routing")
