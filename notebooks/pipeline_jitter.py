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
# # The batch-overlap pipeline under jitter
#
# The paper argues that three micro-batches (3BO) are the fewest that keep AFD's attention and
# FFN pools busy, and that 3BO "drastically lowers the tolerance for $t_B$ fluctuations"; it
# measures neither. This chapter simulates the pipeline step by step (`afdlib.simulation.pipeline`, command
# `afd simulate`) and puts numbers on both.
#
# **Result.** With equal stages, the simulator reproduces the paper's Figure 1(b): two
# micro-batches leave every pool idle a third of the time, three close the bubble. Under jitter
# {glue:text}`ideal_peak`: with the FFN and network
# stage times varying by a coefficient of variation of 0.2, equal stages lose
# {glue:text}`ideal_loss_2` (2BO), {glue:text}`ideal_loss_3` (3BO) and {glue:text}`ideal_loss_4`
# (4BO) of their throughput; {glue:text}`ideal_more`
# ({glue:text}`ideal_thr_2`, {glue:text}`ideal_thr_3` and {glue:text}`ideal_thr_4` of the
# jitter-free 3BO's throughput).
# For the decode model's best AFD deployment of {glue:text}`model_name` on {glue:text}`hw_name`
# (its stages are nearly equal: that is what the search optimises), 3BO loses
# {glue:text}`dep_loss_3_01` at CV 0.1 and {glue:text}`dep_loss_3_02` at 0.2. Under the
# {glue:text}`slo_ms` ms SLO {glue:text}`dep_choice`; {glue:text}`dep_last`.
# Routing itself jitters the FFN stage little: the sampled straggler factors vary by
# {glue:text}`straggler_cv` from step to step after EPLB placement, and with them alone the AFD
# deployments lose at most {glue:text}`straggler_loss`. Other noise (network, kernels) costs
# more as soon as it reaches a few percent (equal-stage 3BO loses {glue:text}`ideal_loss_3_005`
# at CV {glue:text}`ideal_small_cv`), and its size in real deployments is not measured.
# {glue:text}`ep_loss_words`.

# %% tags=["parameters"]
model = "deepseek-v3"
hardware = "h800"
slo_ms = 50.0
context = 4096
t_gap_ms = 3.0                           # fixed gap per step (the decode model's default)
cvs = [0.0, 0.1, 0.2, 0.3]               # coefficients of variation of the FFN and network stages
ideal_cvs = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5]
steps = 1000                             # decode steps simulated per point
seed = 0
counts_dir = None                        # folder of raw expert-load files; None: the shared reference data
counts_file = "decode_in2000out100"
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(), model=_p.text, hardware=_p.text, slo_ms=_p.positive, context=_p.positive, t_gap_ms=_p.nonnegative,
    cvs=_p.list_of(_p.nonnegative), ideal_cvs=_p.list_of(_p.nonnegative), steps=_p.integer(10, 1_000_000),
    seed=_p.integer(0, 2**31), counts_dir=_p.optional(_p.folder), counts_file=_p.text, output_dir=_p.text)
from afdlib.errors import AfdError

if 0 not in cvs or 0.2 not in ideal_cvs or 0 not in ideal_cvs:
    raise AfdError("cvs must include 0, and ideal_cvs 0 and 0.2 (the text compares against them)")
import matplotlib.pyplot as plt
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.report.figures import bubble_timelines_figure, jitter_deployment_figure, jitter_ideal_figure
from afdlib.report.style import glue_all, glue_table, save_data, save_figure, setup_style
from afdlib.routing.provenance import routing_data
from afdlib.simulation import readings
from afdlib.simulation.studies import best_deployments, ideal_sweep, jitter_study
from afdlib.decode.step import Assumptions


setup_style()
m_ = load_model(model, profile="reference")
hw = load_hardware(hardware, profile="datasheet")
budget = Budget(slo_s=slo_ms / 1e3, l_accept=1.0, t_gap_s=t_gap_ms / 1e3)
glue("model_name", m_.name, display=False)
glue("hw_name", hw.name, display=False)
glue("slo_ms", f"{slo_ms:g}", display=False)

# %% [markdown]
# ## Figure 1(b) from the scheduler
#
# The simulator's core (`afdlib.analysis.schedule.run`) schedules every micro-batch through every layer's
# stages; each resource runs one stage at a time in program order (layer, stage, micro-batch),
# the order in which a serving engine issues its kernels. An op starts when its micro-batch's
# previous op and its resource's previous op have both ended: a max-plus recurrence, vectorised
# across steps and settings. The Figure 5 timelines use the same function. Attention, the two
# directions of the network and the FFN pool are four resources.

# %% tags=["hide-input"]
fig = bubble_timelines_figure()
save_figure(fig, "pipeline_overlap", output_dir)
glue("fig_pipeline_overlap", fig, display=False)
plt.close(fig)
glue_all(readings.bubble_shares())

# %% [markdown]
# ```{glue:figure} fig_pipeline_overlap
# :name: pipeline-overlap
#
# One attention node, one FFN node, $t_a = t_f = t_c = t_B$ (dispatch and combine
# $t_B/2$ each way), two layers. With two micro-batches (top) each pool waits while the other
# micro-batch crosses the network, so it idles a third of the time: over 200 layers
# {glue:text}`bubble_2` for attention, the bubble the paper's Figure 1(b) describes. With three
# (bottom) one micro-batch is always in flight while the pools serve the other two, and the
# idle share falls to the fill and drain ({glue:text}`bubble_3` over 200 layers).
# ```
#
# ## What to expect before simulating
#
# One layer is a closed cycle of three stages (attention, network, FFN) with $m$ micro-batches in
# it. With constant times the cycle's period is the larger of the busiest stage's work and one
# micro-batch's round trip, $\max(m\,\max(t_a, t_f, t_c),\ t_a + t_f + t_c)$, the decode model's
# layer time (tested against the simulator for random stage times, with the paper's Eqs. 2-5 and
# MegaScale-Infer's total time as special cases). With equal stages that gives a throughput of
# $\min(1, m/3)$ micro-batches per $t_B$: 2BO has a bubble, 3BO and more have none.
#
# Jitter acts differently on each. With **2BO** every pool already idles a third of the time, so
# a late stage often lands in idle time and delays nobody; the loss is a small queueing loss
# (when one micro-batch catches up with the other). With **3BO** there is no bubble and no spare micro-batch: a
# slow stage holds up the one micro-batch the next stage needs, and the loss cannot be made up.
# With **4BO** a micro-batch usually waits in a queue before the slowest stage, a buffer that
# absorbs some variation. The extreme case has a closed form: with exponentially distributed
# stage times (CV = 1) mean-value analysis gives a throughput of $m / (m + 2)$ per $t_B$:
# {glue:text}`mva_2`, {glue:text}`mva_3` and {glue:text}`mva_4` for $m$ = 2, 3, 4, which is a
# relative loss of {glue:text}`mva_loss_2`, {glue:text}`mva_loss_3` and {glue:text}`mva_loss_4`.
# So the expectation is that the relative loss peaks at 3BO while the absolute throughput still
# rises with $m$. The simulator matches the closed form within 2% (a test), and
# {numref}`pipeline-ideal` shows {glue:text}`ideal_order` at realistic CVs.

# %% tags=["hide-input"]
glue_all(readings.mva_readings())
ideal = pd.DataFrame(ideal_sweep(ideal_cvs, (2, 3, 4), m_.moe_layers, steps, seed))
save_data(ideal, "pipeline_ideal", output_dir)
fig = jitter_ideal_figure(ideal)
save_figure(fig, "pipeline_ideal", output_dir)
glue("fig_pipeline_ideal", fig, display=False)
plt.close(fig)
glue_all(readings.ideal_readings(ideal))

# %% [markdown]
# ```{glue:figure} fig_pipeline_ideal
# :name: pipeline-ideal
#
# Equal stages ($t_a = t_f = t_c$, dispatch and combine on one lane of $t_c$ as in
# the paper's Eqs. 2-4; {numref}`pipeline-overlap`'s two directions would give the network more slack),
# {glue:text}`n_layers` MoE layers, the FFN and
# network times each multiplied per step, layer and micro-batch by an independent lognormal
# factor of mean one. (a) The loss against the same pipeline without jitter; (b) the throughput
# in micro-batches per unit time, the jitter-free 3BO being 1. At CV 0.2 the losses are
# {glue:text}`ideal_loss_2`, {glue:text}`ideal_loss_3` and {glue:text}`ideal_loss_4` for 2, 3
# and 4 micro-batches, and the throughputs {glue:text}`ideal_thr_2`, {glue:text}`ideal_thr_3` and
# {glue:text}`ideal_thr_4`.
# ```
#
# ## A deployment: the decode model's best configurations under jitter
#
# The real question is what jitter costs the deployment one would choose. For each micro-batch
# count the decode model picks its best AFD deployment under the SLO (N_A, N_F and batch), and
# its best EP deployment with one and with two micro-batches. The simulator then takes their
# per-micro-batch stage times and adds two kinds of noise:
#
# - **stragglers from routing**: the FFN stage's time is set by the busiest GPU. For every
#   deployment the factor (busiest GPU's load over the mean) is sampled from DeepSeek-V3's expert
#   loads ({glue:text}`counts_origin`) at its own tokens per micro-batch and GPU
#   count, with an EPLB-style placement. Each layer's samples are rescaled to mean one, because
#   the decode model's stage time already holds the mean; only the step-to-step spread is jitter;
# - **other noise** in the FFN and network stages (kernel timing, link contention), lognormal,
#   with a coefficient of variation that no source measures: it is the x axis of
#   {numref}`pipeline-deployments`.

# %% tags=["hide-input"]
glue("n_layers", m_.moe_layers, display=False)
counts = (routing := routing_data(counts_dir, counts_file)).counts
glue("counts_origin", routing.origin, display=False)
popularity = readings.layer_sample(counts, 15)       # 15 layers, for speed
deployments = (best_deployments(m_, hw, budget, context, "afd", (2, 3, 4))
               + best_deployments(m_, hw, budget, context, "ep", (1, 2)))
study = pd.DataFrame(jitter_study(m_, hw, budget, context, deployments, cvs, popularity, steps, seed))
save_data(study, "pipeline_deployments", output_dir)
fig = jitter_deployment_figure(study)
save_figure(fig, "pipeline_deployments", output_dir)
glue("fig_pipeline_deployments", fig, display=False)
plt.close(fig)
glue_all(readings.deployment_readings(study) | {"slo_edge": readings.slo_edge_words(study, slo_ms)})
glue_all(readings.deployment_headlines(study, same := readings.same_shape_tpot(m_, budget, context, deployments)))
glue_all(same)
glue_all(readings.ep_model_readings(m_, budget, context, study, deployments))
glue_all(readings.validation_ep_readings())

# %% [markdown]
# ```{glue:figure} fig_pipeline_deployments
# :name: pipeline-deployments
#
# The best deployments of {glue:text}`model_name` on {glue:text}`hw_name` at
# {glue:text}`slo_ms` ms, {glue:text}`n_steps` simulated steps per point. (a) The loss at the
# deployment's own batch; (b) tokens per second per GPU (all GPUs) at the largest batch whose
# mean TPOT (time per output token) still meets the SLO with that jitter. The simulator and the decode model schedule
# EP's micro-batches alike (without jitter their EP TPOTs differ by at most
# {glue:text}`ep_sim_gap`; the decode model hides {glue:text}`ep_hidden_2` of the two-batch
# deployment's all-to-all), so EP's absolute figures stand beside AFD's; whether deployments hide
# that much is the validation chapter's question (it finds {glue:text}`val_ep_over` of its
# {glue:text}`val_ep_n` EP cases over-predicted, errors {glue:text}`val_ep_range`).
# {numref}`tab-pipeline-deployments` gives the numbers.
# ```

# %% tags=["hide-input"]
glue("n_steps", f"{steps:,}", display=False)
glue_table("tab_pipeline_deployments", readings.deployment_table(study).style.hide(axis="index"))

# %% [markdown]
# :::{table} The best deployments under jitter, per deployment and CV
# :name: tab-pipeline-deployments
#
# ```{glue:md} tab_pipeline_deployments
# :format: myst
# ```
# :::
#
# {numref}`tab-pipeline-deployments` gives each deployment with its micro-batches (µb) and its batch per
# (attention) GPU, the per-micro-batch stage times,
# the mean TPOT with and without jitter, its 99th percentile, the loss at that batch, the
# bubbles, and the largest batch within the SLO with its tokens/s per GPU. The simulator adds the
# pipeline's fill and drain (about one micro-batch's round trip) to the decode model's step, so
# a deployment at the SLO's edge can exceed it even without jitter: {glue:text}`slo_edge`.
#
# Reading:
#
# - **{glue:text}`dep_fragile`** At the same batch the best 3BO deployment
#   loses {glue:text}`dep_loss_3_01`, {glue:text}`dep_loss_3_02` and {glue:text}`dep_loss_3_03`
#   at CV 0.1, 0.2 and 0.3, against {glue:text}`dep_loss_2_01`, {glue:text}`dep_loss_2_02` and
#   {glue:text}`dep_loss_2_03` for the best 2BO deployment and {glue:text}`dep_loss_4_01`,
#   {glue:text}`dep_loss_4_02` and {glue:text}`dep_loss_4_03` for the best 4BO one.{glue:text}`dep_fragile_why`
#   The 3BO deployment's mean TPOT rises from {glue:text}`dep_tpot_3_00` ms to
#   {glue:text}`dep_tpot_3_02` ms at CV 0.2 and {glue:text}`dep_tpot_3_03` ms at 0.3 (SLO
#   {glue:text}`slo_ms` ms).
# - **{glue:text}`dep_most`** Within the SLO, 3BO keeps
#   {glue:text}`dep_slo_3_00`, {glue:text}`dep_slo_3_01`, {glue:text}`dep_slo_3_02` and
#   {glue:text}`dep_slo_3_03` tokens/s per GPU at CV 0, 0.1, 0.2 and 0.3 ({glue:text}`dep_batch_3`), against
#   {glue:text}`dep_slo_2_00` to {glue:text}`dep_slo_2_03` for 2BO and {glue:text}`dep_slo_4_00`
#   to {glue:text}`dep_slo_4_03` for 4BO; {glue:text}`dep_choice`. {glue:text}`dep_4`.
# - **{glue:text}`ep_robust`** With one batch nothing overlaps and the step is a sum of
#   stage times: mean-one noise leaves the mean unchanged (loss {glue:text}`ep_loss_1`).
#   {glue:text}`ep_slack` (Its absolute figures in
#   {numref}`tab-pipeline-deployments` are the simulator's; without jitter they are within {glue:text}`ep_sim_gap` of the
#   decode model's, which runs the same schedule.)
#
# ## Varying context lengths
#
# Attention reads every request's KV cache, so a micro-batch's attention time follows the sum of
# its requests' cached lengths. With lengths varying independently the sum varies far less than
# one request: at a CV of {glue:text}`ctx_cv` per request (about what an exponential length
# distribution gives) and the best 3BO deployment's {glue:text}`ctx_requests` requests per
# micro-batch, the attention stage's CV is at most {glue:text}`ctx_attn_cv`, and the simulated
# loss from it alone is {glue:text}`ctx_loss`. Slow drift of the mix (long-context sessions
# arriving together) is a correlated change, outside this model (Limitations).

# %% tags=["hide-input"]
glue_all(readings.context_readings(m_, study, steps, seed))

# %% [markdown]
# ## 3BO's extra kernels and the fixed gap

# %% tags=["hide-input"]
glue_all(readings.kernel_readings(m_, study, deployments, Assumptions().kernels.fixed_s * 1e6))

# %% [markdown]
# Each micro-batch launches the attention side's kernels once per layer: {glue:text}`k_attn` for
# {glue:text}`model_name`'s attention and router in the decode model. Going from two micro-batches to three adds
# {glue:text}`n_all_layers` × {glue:text}`k_attn` launches per step: at the calibrated kernel profile's
# {glue:text}`kernel_fit_us` µs per kernel {glue:text}`extra_kernels_fit` ms
# ({glue:text}`extra_kernels_fit_share` of the paper's $t_g$ = 15 ms), at
# {glue:text}`kernel_what_if_us` µs (the aiconfigurator chapter's what-if, not a measurement)
# {glue:text}`extra_kernels_what_if` ms ({glue:text}`extra_kernels_what_if_share`). The
# decode model and the simulator charge this cost in the stage times, not in $t_g$. The paper's
# budget holds $t_g$ = 15 ms fixed whatever $N_{BO}$: if that figure was measured with two
# micro-batches, its 3BO budget is optimistic by that much.
#
# MegaScale-Infer's rule {cite}`megascale_infer` for enough micro-batches, $m \ge 2(1 + T_c/T_f)$ with $T_c$ each way,
# asks for {glue:text}`ms_rule` at the best 3BO deployment ({glue:text}`cfg3`). Read with the
# paper's one-lane $t_c$ it would ask for {glue:text}`ms_rule_one_lane`: the two papers count the
# network differently.
#
# ## Limitations
#
# - The noise is independent across steps, layers and micro-batches; correlated slowdowns (a
#   slow link for many layers, a long-context request in every layer) would cost more, and a
#   CV for real deployments is not published: the chapter shows a range.
# - Program order is a choice: an engine that reorders work on a shared resource could recover
#   some of the loss. On AFD's routes each resource has one stage, so the order is first come
#   first served anyway.
# - The routing stragglers use an EPLB-style placement fitted to the same loads (an oracle), so
#   they are a lower bound on routing jitter; DP (data-parallel) imbalance across attention nodes is not
#   modelled here (the imbalance chapters treat it).
# - The decode model's stage times carry its own assumptions (the validation chapter); the
#   simulator adds the pipeline, not a second model of the kernels.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("pipeline_jitter")
