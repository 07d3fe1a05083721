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
# # Where imbalance loses time, EP against AFD (the paper's Figure 5)
#
# **Result.** With balancedness $\sigma$ = {glue:text}`sigma` ({numref}`fig5-timelines`), EP keeps
# {glue:text}`ep_ep` under EP (expert-parallel) imbalance (only its FFN part stretches) and {glue:text}`ep_dp` under
# DP (data-parallel attention) imbalance (short ranks idle at the barrier, but the FFN part shrinks with their tokens). AFD,
# whose three stages each last $t_B$, keeps only $\sigma$ under either kind ({glue:text}`afd_ep`
# and {glue:text}`afd_dp`). The two are drawn at different ratios, EP at $t_a/t_f$ =
# {glue:text}`lambda_ep` and AFD at $N_A/N_F$ = {glue:text}`afd_lambda`, and AFD's loss is set by
# its whole attention nodes: under EP imbalance, were its attention pool divisible, the exact form
# would keep {glue:text}`afd_exact` at its ratio (the previous chapter compares the two at equal
# $\lambda$); under DP imbalance its batch must shrink and it keeps $\sigma$ whatever its size.
#
# Two kinds of imbalance hit a decode step. **DP imbalance**: attention ranks or nodes carry
# different batches (different KV lengths), so the slowest attention sets the pace. **EP
# imbalance**: some experts, hence some GPUs, receive more tokens, so the slowest FFN GPU sets
# the pace. The four timelines of {numref}`fig5-timelines` are scheduled by `afdlib.analysis.timeline` from stage times and
# per-node loads, not drawn by hand. Large-scale EP runs two micro-batches (DeepSeek's dual-batch
# overlap): each rank computes attention and its experts on the same GPU, and one micro-batch's
# dispatch and combine cross the network while the other computes. AFD cycles three micro-batches
# through the attention pool, the network (dispatch and combine on its two directions) and the
# FFN pool (3BO). Each stage lasts as long as its
# most loaded rank or node; grey is idle time; AFD bars carry their micro-batch number.

# %% tags=["parameters"]
sigma = 0.8          # balancedness of the imbalanced stage (mean/max)
ep_ranks = 4         # ranks drawn for EP
n_attn = 2           # AFD attention nodes drawn
n_ffn = 2            # AFD FFN nodes drawn
lambda_ep = 4.0      # EP t_a / t_f (DeepSeek's profile: about 4)
t_c_ep = 0.3         # EP dispatch + combine per micro-batch, in units of t_B (hidden by the other micro-batch)
n_layers = 2         # layers drawn
n_layers_measure = 60  # layers over which throughput is measured (fill and drain amortised)
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p

_p.check_parameters(
    globals(),
    sigma=_p.fraction, ep_ranks=_p.integer(1, 64), n_attn=_p.integer(1, 64), n_ffn=_p.integer(1, 64),
    lambda_ep=_p.positive, t_c_ep=_p.nonnegative, n_layers=_p.integer(1, 64),
    n_layers_measure=_p.integer(1, 10_000), output_dir=_p.text)
import matplotlib.pyplot as plt
import pandas as pd
from afdlib.report.readable import glue, show_chapter

from afdlib.analysis.imbalance import alpha_afd, alpha_dp_ep, alpha_ep
from afdlib.report.figures import timelines_figure
from afdlib.report.style import save_data, save_figure, setup_style
from afdlib.analysis.timeline import busy_share, imbalance_cases, relative_throughput

setup_style()
cases = imbalance_cases(sigma, lambda_ep, ep_ranks, n_attn, n_ffn, n_layers, t_c_ep)
alpha_measured = relative_throughput(imbalance_cases(sigma, lambda_ep, ep_ranks, n_attn, n_ffn, n_layers_measure,
                                                     t_c_ep))
records = [{"case": name, **b.__dict__} for name, c in cases.items() for b in c.bars]
save_data(pd.DataFrame(records), "fig5_timelines", output_dir);

# %% tags=["hide-input"]
fig = timelines_figure(cases, alpha_measured)
save_figure(fig, "fig5_timelines", output_dir)
glue("fig_timelines", fig, display=False)
plt.close(fig)

# %% tags=["hide-input"]
glue("sigma", f"{sigma:g}", display=False)
glue("n_measure", str(n_layers_measure), display=False)
for case, key in (("EP, EP imbalance", "ep_ep"), ("EP, DP imbalance", "ep_dp"), ("AFD, EP imbalance", "afd_ep"),
                  ("AFD, DP imbalance", "afd_dp")):
    glue(key, f"{alpha_measured[case]:.3f}", display=False)
glue("ep_ep_formula", f"{float(alpha_ep(sigma, lambda_ep)):.3f}", display=False)
glue("ep_dp_formula", f"{float(alpha_dp_ep(sigma, lambda_ep)):.3f}", display=False)
glue("afd_ep_shrunk", f"{float(alpha_afd(sigma, n_attn, n_ffn).alpha):.3f}", display=False)
for name, key in (("AFD, DP imbalance", "afd_dp_ffn_busy"), ("AFD, balanced", "afd_bal_ffn_busy")):
    glue(key, f"{busy_share(cases[name].bars, 'FFN', cases[name].makespan):.0%}", display=False)
glue("lambda_ep", f"{lambda_ep:g}", display=False)
glue("t_c_ep_v", f"{t_c_ep:g}", display=False)
glue("afd_lambda", f"{n_attn / n_ffn:g}", display=False)
glue("afd_exact", f"{sigma * (n_attn + n_ffn) / (sigma * n_attn + n_ffn):.3f}", display=False)   # Figure 6's exact form
glue("n_attn", str(n_attn), display=False)
glue("n_ffn_v", str(n_ffn), display=False)
glue("ep_ranks_v", str(ep_ranks), display=False)

# %% [markdown]
# ```{glue:figure} fig_timelines
# :name: fig5-timelines
#
# Two layers of a decode step under EP imbalance and DP imbalance ($\sigma$ = {glue:text}`sigma`),
# for EP ({glue:text}`ep_ranks_v` ranks, two micro-batches, $t_a/t_f$ = {glue:text}`lambda_ep`)
# and AFD ({glue:text}`n_attn` attention and {glue:text}`n_ffn_v` FFN nodes, three micro-batches,
# every stage $t_B$ long), scheduled by `afdlib.analysis.timeline`. Grey: idle time; AFD bars carry their
# micro-batch number; the throughput in each panel's title is measured over
# {glue:text}`n_measure` layers.
# ```
#
# ## Reading
#
# Throughput is measured on the same schedules run for {glue:text}`n_measure` layers (tokens
# processed over time, relative to the balanced schedule), with $\sigma$ = {glue:text}`sigma`:
#
# - **EP, EP imbalance.** Only the FFN part ($1/(\lambda+1)$ of the step, $\lambda$ =
#   {glue:text}`lambda_ep`) stretches: {glue:text}`ep_ep`, which is the formula's
#   $\alpha_\text{EP}$ = {glue:text}`ep_ep_formula`.
# - **EP, DP imbalance.** The short ranks idle at the barrier, but the FFN part only carries
#   $\sigma$ of the tokens, so the step shortens: {glue:text}`ep_dp`, the regrown-batch form
#   $\sigma(\lambda+1)/(\lambda+\sigma)$ = {glue:text}`ep_dp_formula`.
# - **AFD, EP imbalance.** The FFN stage is one of three stages each $t_B$ long, so the slowest FFN
#   GPU stretches every cycle and attention waits: {glue:text}`afd_ep`, that is $\sigma$. Shrinking
#   attention to whole nodes (the paper's Figure 6, previous chapter) gives {glue:text}`afd_ep_shrunk` with $N_A$ =
#   {glue:text}`n_attn`: too few nodes to resize finely.
# - **AFD, DP imbalance.** The stage budget is fixed, the batch must shrink: {glue:text}`afd_dp`
#   ($\alpha_\text{AFD} = \sigma$). In the drawn schedule the FFN pool is busy
#   {glue:text}`afd_dp_ffn_busy` of the time against {glue:text}`afd_bal_ffn_busy` when balanced.
#
# The drawn pipeline is only two layers deep, so its fill and drain show; the throughputs come
# from the deeper run.
#
# ## Limitations
#
# - Stage times are constant and the imbalance fixed: one $\sigma$ for every layer and step. The
#   pipeline chapter draws them at random; the sigma chapter measures them.
# - EP's all-to-all is hidden behind the other micro-batch whenever it is shorter
#   (`t_c_ep` = {glue:text}`t_c_ep_v` $t_B$); a longer one would make EP lose time too.
#
# Data:
# {download}`fig5_timelines.csv <figures/fig5_timelines.csv>`.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
show_chapter("fig5_timelines")
