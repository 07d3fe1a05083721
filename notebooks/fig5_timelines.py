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
# # Figure 5: where imbalance loses time, EP against AFD
#
# Two kinds of imbalance hit a decode step. **DP imbalance**: attention ranks or nodes carry
# different batches (different KV lengths), so the slowest attention sets the pace. **EP
# imbalance**: some experts, hence some GPUs, receive more tokens, so the slowest FFN GPU sets
# the pace. The four timelines below are scheduled by `afdlib.timeline` from stage times and
# per-node loads, not drawn by hand: large-scale EP runs attention then experts on every rank with
# an all-to-all barrier after each; AFD cycles three micro-batches through the attention pool, the
# network and the FFN pool (3BO). Grey is idle time.

# %% tags=["parameters"]
sigma = 0.8          # balancedness of the imbalanced stage (mean/max)
ep_ranks = 4         # ranks drawn for EP
n_attn = 2           # AFD attention nodes drawn
n_ffn = 2            # AFD FFN nodes drawn
lambda_ep = 4.0      # EP t_a / t_f (DeepSeek's profile: about 4)
n_layers = 2         # layers drawn
n_layers_measure = 60  # layers over which throughput is measured (fill and drain amortised)
output_dir = "figures"

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from myst_nb import glue

from afdlib.imbalance import alpha_afd, alpha_dp_ep, alpha_ep
from afdlib.plotting import save_data, save_figure, setup_style
from afdlib.timeline import afd_timeline, busy_share, ep_timeline, loads_with_balancedness

setup_style()
t_a_ep, t_f_ep = lambda_ep / (lambda_ep + 1), 1 / (lambda_ep + 1)   # EP: t_B = t_a + t_f = 1
ones_ep, ones_a, ones_f = np.ones(ep_ranks), np.ones(n_attn), np.ones(n_ffn)
straggler_ep = loads_with_balancedness(ep_ranks, sigma)


def schedules(layers):
    """Each case: (timeline, share of the balanced batch's tokens it processes)."""
    return {
        "EP, balanced": (ep_timeline(t_a_ep, t_f_ep, ones_ep, ones_ep, layers), 1.0),
        # DP imbalance: one rank's attention is the straggler; the batch holds sigma of the tokens
        "EP, DP imbalance": (ep_timeline(t_a_ep, t_f_ep, straggler_ep, sigma * ones_ep, layers), sigma),
        # EP imbalance: one rank's experts get 1/sigma of the mean load
        "EP, EP imbalance": (ep_timeline(t_a_ep, t_f_ep, ones_ep, straggler_ep / sigma, layers), 1.0),
        "AFD, balanced": (afd_timeline(1, 1, 1, ones_a, ones_f, layers), 1.0),
        "AFD, DP imbalance": (afd_timeline(1, 1, 1, loads_with_balancedness(n_attn, sigma), sigma * ones_f, layers),
                              sigma),
        "AFD, EP imbalance": (afd_timeline(1, 1, 1, ones_a, loads_with_balancedness(n_ffn, sigma) / sigma, layers),
                              1.0),
    }


def throughput(cases, case):
    """Tokens per unit time relative to the balanced schedule of the same design."""
    (_, end), share = cases[case]
    (_, base), _ = cases[case.split(",")[0] + ", balanced"]
    return share * base / end


cases = schedules(n_layers)
measured = schedules(n_layers_measure)
alpha_measured = {c: throughput(measured, c) for c in measured}
colours = {"attention": "#2c7fb8", "dispatch": "#fdae61", "combine": "#d7191c", "ffn": "#1a9641", "idle": "#eeeeee"}
records = [{"case": c, **b.__dict__} for c, ((bars, _), _) in cases.items() for b in bars]
save_data(pd.DataFrame(records), "fig5_timelines", output_dir)

# %%
shown = [c for c in cases if "balanced" not in c]
fig, axes = plt.subplots(2, 2, figsize=(12, 6.5), squeeze=False)
for ax, case in zip(axes.flat, shown):
    (bars, end), _ = cases[case]
    lanes = sorted({b.lane for b in bars}, key=lambda s: (s.startswith("FFN"), s == "network", s))
    y = {lane: i for i, lane in enumerate(lanes)}
    for b in bars:
        ax.barh(y[b.lane], b.duration, left=b.start, color=colours[b.stage], edgecolor="white", height=0.8,
                hatch="//" if b.stage == "idle" else None)
        if case.startswith("AFD") and b.stage in ("attention", "ffn") and b.duration > 0.3:
            ax.text(b.start + b.duration / 2, y[b.lane], str(b.microbatch), ha="center", va="center", fontsize=7,
                    color="white")
    ax.set_yticks(range(len(lanes)), lanes, fontsize=8)
    ax.invert_yaxis()
    ax.set_title(f"{case}: throughput {alpha_measured[case]:.3f} of balanced", fontsize=10)
    ax.set_xlabel("time (units of t_B)")
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
fig.legend(handles, list(colours), loc="lower center", ncol=5, fontsize=8, bbox_to_anchor=(0.5, -0.03))
fig.tight_layout()
save_figure(fig, "fig5_timelines", output_dir)
plt.show()

# %%
glue("sigma", f"{sigma:g}", display=False)
glue("n_measure", str(n_layers_measure), display=False)
for case, key in (("EP, EP imbalance", "ep_ep"), ("EP, DP imbalance", "ep_dp"), ("AFD, EP imbalance", "afd_ep"),
                  ("AFD, DP imbalance", "afd_dp")):
    glue(key, f"{alpha_measured[case]:.3f}", display=False)
glue("ep_ep_formula", f"{float(alpha_ep(sigma, lambda_ep)):.3f}", display=False)
glue("ep_dp_formula", f"{float(alpha_dp_ep(sigma, lambda_ep)):.3f}", display=False)
glue("afd_ep_shrunk", f"{float(alpha_afd(sigma, n_attn, n_ffn).alpha):.3f}", display=False)
glue("afd_dp_ffn_busy", f"{busy_share(cases['AFD, DP imbalance'][0][0], 'FFN', cases['AFD, DP imbalance'][0][1]):.0%}",
     display=False)
glue("afd_bal_ffn_busy", f"{busy_share(cases['AFD, balanced'][0][0], 'FFN', cases['AFD, balanced'][0][1]):.0%}",
     display=False)
glue("lambda_ep", f"{lambda_ep:g}", display=False)
glue("n_attn", str(n_attn), display=False)

# %% [markdown]
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
#   attention to whole nodes (Figure 6) gives {glue:text}`afd_ep_shrunk` with $N_A$ =
#   {glue:text}`n_attn`: too few nodes to resize finely.
# - **AFD, DP imbalance.** The stage budget is fixed, the batch must shrink: {glue:text}`afd_dp`
#   ($\alpha_\text{AFD} = \sigma$). In the drawn schedule the FFN pool is busy
#   {glue:text}`afd_dp_ffn_busy` of the time against {glue:text}`afd_bal_ffn_busy` when balanced.
#
# The drawn pipeline is only two layers deep, so its fill and drain show; the throughputs come
# from the deeper run. Data:
# {download}`fig5_timelines.csv <figures/fig5_timelines.csv>`.
