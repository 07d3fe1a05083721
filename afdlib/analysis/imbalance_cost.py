"""What measured expert imbalance costs AFD and EP: sigma from routing data, through the penalty.

Each design sees its own batch per layer step and spreads it over its own GPUs:

* AFD: the FFN pool of N_F x g GPUs receives what the network delivers within t_B (Eq. 9):
  ``tokens_per_rank * N_F g / K`` tokens.
* EP: ``tokens_per_gpu * R`` tokens over R GPUs.

Both place their experts the same way: statically, by EPLB-style replication and packing fitted
to the long-run counts, with the same number of redundant replicas,
:func:`afdlib.routing.balance.placement_replicas` (``redundant``, and at least GPUs - E so that every
GPU holds an expert). The count is a placement choice open to both designs, not a property of
either: replicas take expert slots on the GPUs that hold experts, and AFD's FFN GPUs (no attention
weights, no KV cache) have more room for them than EP's GPUs, so the same count does not favour AFD
by memory. The paper takes sigma as given (equal for both designs in its Figure 6) and prescribes no
placement, so a count per design would be a default chosen per design.

A step runs its layers in sequence, so the step's sigma is the harmonic mean over layers
(:func:`afdlib.routing.balance.effective_balancedness`); alpha then follows Section 3.3.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from afdlib.analysis.hfu import hfu_sweep
from afdlib.analysis.imbalance import alpha_afd, alpha_dp_afd, alpha_dp_ep, alpha_ep
from afdlib.inputs.specs import Budget
from afdlib.routing.balance import (balance_sweep, balancedness, effective_balancedness, eplb_placement,
                                    placement_replicas, route_tokens)
from afdlib.routing.measured import moe_layers


@dataclass(frozen=True)
class DesignCost:
    design: str
    gpus: int
    tokens_per_step: int
    sigma: float
    alpha: float
    rounding: str


def imbalance_cost(counts: ArrayLike, model, hardware, n_attn: int, n_ffn: int, ep_size: int, redundant: int,
                   lambda_ep: float, ep_tokens_per_gpu: float, trials: int = 3, seed: int = 0,
                   layers: ArrayLike | None = None, budget: Budget = Budget()) -> tuple[DesignCost, DesignCost]:
    """(AFD, EP) costs of the expert imbalance in ``counts`` (layers x E), for one model and device.

    ``redundant``: replicas of both designs' placements (:func:`afdlib.routing.balance.placement_replicas`);
    ``budget`` goes to :func:`afdlib.analysis.hfu.hfu_sweep` to size AFD's batch.
    """
    counts = np.asarray(counts, dtype=float)
    k, e = model.experts_per_token, counts.shape[1]
    res, _ = hfu_sweep(model, hardware, np.array([n_ffn]), budget)
    afd_gpus = n_ffn * hardware.gpus_per_node
    afd_tokens = int(round(float(res["tokens_per_rank"][0]) * afd_gpus / k))
    ep_tokens = int(round(ep_tokens_per_gpu * ep_size))
    red_afd, red_ep = placement_replicas(afd_gpus, e, redundant), placement_replicas(ep_size, e, redundant)
    common = dict(experts_per_token=k, trials=trials, seed=seed, layers=layers)
    _, _, by_layer_afd = balance_sweep(counts, [afd_gpus], red_afd, tokens=afd_tokens, **common)
    _, _, by_layer_ep = balance_sweep(counts, [ep_size], red_ep, tokens=ep_tokens, **common)
    s_afd, s_ep = effective_balancedness(by_layer_afd[0]), effective_balancedness(by_layer_ep[0])
    a_afd = alpha_afd(s_afd, n_attn, n_ffn)
    return (DesignCost(f"AFD {n_attn}A{n_ffn}F + {red_afd} redundant", afd_gpus, afd_tokens, s_afd,
                       float(a_afd.alpha), str(a_afd.rounding)),
            DesignCost(f"EP{ep_size} + {red_ep} redundant", ep_size, ep_tokens, s_ep,
                       float(alpha_ep(s_ep, lambda_ep)), "-"))


@dataclass(frozen=True)
class Comparison:
    """Per design (rows of ``designs``) and trial: the step's sigma (harmonic mean over layers)
    and alpha; and per design the per-layer sigmas of every trial (``layer_sigma``, design x
    trial x layer)."""

    designs: list
    gpus: np.ndarray
    sigma: np.ndarray          # (design, trial)
    alpha: np.ndarray          # (design, trial)
    layer_sigma: np.ndarray    # (design, trial, layer)
    tokens: int


def like_with_like(counts: ArrayLike, experts_per_token: int, n_attn: int, n_ffn: int, gpus_per_node: int,
                   ep_sizes: list[int], redundant: int, lambda_ep: float, tokens: int, trials: int = 8,
                   seed: int = 0, layers: ArrayLike | None = None, dp_sigma: float | None = None) -> Comparison:
    """Imbalance of AFD (N_A + N_F nodes) against EP deployments, every design seeing the same
    batches of ``tokens`` tokens (one layer step), sampled ``trials`` times per layer from the
    measured loads: at equal tokens per GPU when an EP size equals AFD's GPU count.

    Every placement, AFD's FFN pool (N_F g GPUs) and each EP size, is EPLB's with the same
    :func:`afdlib.routing.balance.placement_replicas` of ``redundant`` (module docstring). Alpha: the whole-node AFD form
    (:func:`afdlib.analysis.imbalance.alpha_afd`) and EP's (:func:`afdlib.analysis.imbalance.alpha_ep`, ``lambda_ep``).
    ``dp_sigma``: DP imbalance on the attention side too (AFD then keeps at most dp_sigma,
    Figure 5; EP the regrown-batch form), multiplied in."""
    c = np.asarray(counts, dtype=float)
    idx = moe_layers(c) if layers is None else np.asarray(layers, dtype=int)
    e = c.shape[1]
    ffn_gpus = n_ffn * gpus_per_node
    designs = [(f"AFD {n_attn}A{n_ffn}F", ffn_gpus)] + [(f"EP{r}", r) for r in ep_sizes]
    designs = [(f"{name} + {placement_replicas(ranks, e, redundant)} redundant", ranks,
                placement_replicas(ranks, e, redundant)) for name, ranks in designs]
    rng = np.random.default_rng(seed)
    layer_sigma = np.empty((len(designs), trials, idx.size))
    for j, layer in enumerate(idx):
        batches = np.stack([route_tokens(int(tokens), experts_per_token, c[layer], rng) for _ in range(trials)])
        for d, (_, ranks, red) in enumerate(designs):
            layer_sigma[d, :, j] = balancedness(eplb_placement(c[layer], ranks, red).rank_loads(batches))
    sigma = effective_balancedness(layer_sigma, axis=2)          # the step: layers in sequence
    alpha = np.empty_like(sigma)
    alpha[0] = alpha_afd(sigma[0], n_attn, n_ffn).alpha
    alpha[1:] = alpha_ep(sigma[1:], lambda_ep)
    if dp_sigma is not None:
        alpha[0] *= alpha_dp_afd(dp_sigma)                        # AFD: the stage budget is fixed
        alpha[1:] *= alpha_dp_ep(dp_sigma, lambda_ep)
    gpus = np.array([n_attn * gpus_per_node + ffn_gpus] + list(ep_sizes))
    return Comparison([d[0] for d in designs], gpus, sigma, alpha, layer_sigma, int(tokens))


def alpha_plateau(alpha: float, n_attn: int, n_ffn: int, low: float = 0.80, points: int = 2001
                  ) -> tuple[float, float] | None:
    """The range of sigma in [``low``, 1] (a grid of ``points``) over which AFD keeps ``alpha``
    (within 1e-9): whole attention nodes pin alpha_AFD on plateaus (Section 3.3). None if it never does."""
    grid = np.linspace(low, 1.0, points)
    flat = grid[np.isclose(alpha_afd(grid, n_attn, n_ffn).alpha, alpha, rtol=0, atol=1e-9)]
    return (float(flat.min()), float(flat.max())) if flat.size else None


def dp_break_even(alpha_afd_value: float, alpha_ep_value: float, lambda_ep: float) -> float:
    """The DP balancedness s below which EP keeps more than AFD, both scaled by the DP forms
    (AFD x s, :func:`afdlib.analysis.imbalance.alpha_dp_afd`; EP x s (lambda + 1) / (lambda + s),
    :func:`afdlib.analysis.imbalance.alpha_dp_ep`): a_AFD s = a_EP s (lambda + 1) / (lambda + s) gives
    s = a_EP (lambda + 1) / a_AFD - lambda; at most 1 (above 1 EP keeps more at any s)."""
    return min(alpha_ep_value * (lambda_ep + 1) / alpha_afd_value - lambda_ep, 1.0)


def dp_tip_words(break_even: float) -> tuple[str, str]:
    """A :func:`dp_break_even` in words: what DP imbalance does to the comparison ("tips the balance to EP
    below a DP balancedness of 0.964"; at 1, "leaves EP ahead at any DP balancedness") and the break-even
    alone (:func:`break_even_text`)."""
    if break_even < 1:
        return f"tips the balance to EP below a DP balancedness of {break_even:.3f}", break_even_text(break_even)
    return "leaves EP ahead at any DP balancedness", break_even_text(break_even)


def break_even_text(value: float) -> str:
    """A DP break-even as printed: three decimals, or where it is 1 (EP keeps more at any DP
    balancedness, :func:`dp_break_even`) saying so, a number that reads in "from 1 (...) to 0.942"."""
    return f"{value:.3f}" if value < 1 else "1 (EP keeps more at any DP balancedness)"


LAMBDA_ROW_FORMAT = {"AFD lambda": "{:.3g}", "EP lambda": "{:.2f}", "tokens per step": "{:,}", "AFD sigma": "{:.3f}",
                     "EP sigma": "{:.3f}", "AFD alpha": "{:.3f}", "EP alpha": "{:.3f}", "AFD lead (points)": "{:+.1f}",
                     "DP break-even": "{:.3f}"}
"""How the book prints :meth:`LikeWithLikeStudy.lambda_row` (a pandas Styler format)."""


def lambda_display(rows):
    """:meth:`LikeWithLikeStudy.lambda_row` rows as the book's table shows them: each design with its lambda
    in one cell ("8A2F (λ 4)", "EP80 (λ 4.00)"), AFD's and EP's sigma and alpha paired ("0.973 / 0.878"),
    the numbers formatted as :data:`LAMBDA_ROW_FORMAT`: eight columns instead of twelve, so that the
    table fits the page; the data file keeps every column. Returns a DataFrame of text."""
    import pandas as pd
    t = pd.DataFrame(rows)
    f = {k: fmt.format for k, fmt in LAMBDA_ROW_FORMAT.items()}
    return pd.DataFrame({
        "λ from": t["lambda from"],
        "AFD (λ)": [f"{a} (λ {f['AFD lambda'](x)})" for a, x in zip(t["AFD"], t["AFD lambda"])],
        "EP (λ)": [f"{e} (λ {f['EP lambda'](x)})" for e, x in zip(t["EP"], t["EP lambda"])],
        "tokens per step": t["tokens per step"].map(f["tokens per step"]),
        "σ AFD / EP": [f"{f['AFD sigma'](a)} / {f['EP sigma'](e)}" for a, e in zip(t["AFD sigma"], t["EP sigma"])],
        "α AFD / EP": [f"{f['AFD alpha'](a)} / {f['EP alpha'](e)}" for a, e in zip(t["AFD alpha"], t["EP alpha"])],
        "AFD lead (points)": t["AFD lead (points)"].map(f["AFD lead (points)"]),
        "DP break-even": t["DP break-even"].map(f["DP break-even"])})


def _spread(x) -> str:
    """Median and 10th-90th percentile, as printed: '0.912 (0.900-0.930)'."""
    return f"{np.median(x):.3f} ({np.percentile(x, 10):.3f}-{np.percentile(x, 90):.3f})"


@dataclass(frozen=True)
class LikeWithLikeStudy:
    """AFD N_A + N_F against EP at AFD's tokens per GPU (:func:`like_with_like`), for several EP sizes:
    ``runs[R]`` holds AFD (design 0) and EP R (design 1) on the same batches; the first EP size is
    the one compared like with like (AFD's GPU count). The setup is kept to rerun at other batches."""

    counts: np.ndarray
    experts_per_token: int
    n_attn: int
    n_ffn: int
    gpus_per_node: int
    redundant: int
    lambda_ep: float
    seed: int
    layers: np.ndarray
    runs: dict

    @property
    def equal(self) -> int:
        return next(iter(self.runs))

    @property
    def first(self) -> Comparison:
        return self.runs[self.equal]

    @property
    def afd_gpus(self) -> int:
        """AFD's GPUs, (N_A + N_F) g."""
        return int(self.first.gpus[0])

    def medians(self) -> dict[str, float]:
        """Medians over trials of the first run's step sigma and alpha (keys sigma_afd, sigma_ep,
        alpha_afd, alpha_ep), unrounded."""
        f = self.first
        return {f"{q}_{d}": float(np.median(getattr(f, q)[i]))
                for q in ("sigma", "alpha") for i, d in ((0, "afd"), (1, "ep"))}

    def printed_alphas(self) -> tuple[float, float]:
        """Median alpha of AFD and of the equal EP, rounded to the three decimals printed (leads are
        taken between the printed values, so that a reader's subtraction agrees)."""
        return round(float(np.median(self.first.alpha[0])), 3), round(float(np.median(self.first.alpha[1])), 3)

    def others(self) -> list[tuple[int, float]]:
        """The other EP sizes and their median alpha, rounded as printed."""
        return [(r, round(float(np.median(self.runs[r].alpha[1])), 3)) for r in list(self.runs)[1:]]

    def rows(self) -> list[dict]:
        """The table: AFD, then each EP size, with the step's sigma and alpha (median, 10th-90th
        percentile over trials) and the 10th-90th percentile of single layers' sigma."""
        def row(run, d):
            return {"design": run.designs[d], "GPUs": int(run.gpus[d]), "tokens per step": run.tokens,
                    "sigma (10-90%)": _spread(run.sigma[d]), "layers' sigma 10-90%":
                    f"{np.percentile(run.layer_sigma[d], 10):.3f}-{np.percentile(run.layer_sigma[d], 90):.3f}",
                    "alpha (10-90%)": _spread(run.alpha[d])}
        return [row(self.first, 0)] + [row(run, 1) for run in self.runs.values()]

    def token_sensitivity(self, afd_tokens: int, factors: list[float], trials: int) -> list[dict]:
        """Median sigma and alpha of AFD and the equal EP with AFD's tokens per step scaled by each
        factor; a factor that gives the first run's tokens reuses that run, the others draw ``trials``
        batches per layer."""
        rows = []
        for f in factors:
            tok = int(round(afd_tokens * f))
            run = self.first if tok == self.first.tokens else like_with_like(
                self.counts, self.experts_per_token, self.n_attn, self.n_ffn, self.gpus_per_node, [self.equal],
                self.redundant, self.lambda_ep, tok, trials, self.seed, self.layers)
            rows.append({"tokens per step": tok, "AFD sigma": float(np.median(run.sigma[0])),
                         f"EP{self.equal} sigma": float(np.median(run.sigma[1])),
                         "AFD alpha": float(np.median(run.alpha[0])),
                         f"EP{self.equal} alpha": float(np.median(run.alpha[1]))})
        return rows

    def dp_rows(self, dp_sigmas: list[float]) -> list[dict]:
        """The printed alphas (:meth:`printed_alphas`) with DP imbalance on the attention side too."""
        a_afd, a_ep = self.printed_alphas()
        return [{"DP sigma": d, "AFD alpha": a_afd * float(alpha_dp_afd(d)),
                 f"EP{self.equal} alpha": a_ep * float(alpha_dp_ep(d, self.lambda_ep))} for d in dp_sigmas]

    def at_lambda(self, lambda_ep: float) -> LikeWithLikeStudy:
        """The same sampled batches with EP's alpha at another ``lambda_ep`` (AFD's, set by its nodes, kept)."""
        runs = {r: replace(run, alpha=np.concatenate([run.alpha[:1], alpha_ep(run.sigma[1:], lambda_ep)]))
                for r, run in self.runs.items()}
        return replace(self, lambda_ep=float(lambda_ep), runs=runs)

    def lambda_row(self, setting: str) -> dict:
        """The chapter's row for one lambda: AFD N_A N_F and its lambda N_A / N_F, the equal EP and its
        lambda, the medians of sigma, the printed alphas, AFD's lead (points, between the printed
        alphas) and the DP break-even (:func:`dp_break_even`)."""
        a_afd, a_ep = self.printed_alphas()
        med = self.medians()
        return {"lambda from": setting, "AFD": f"{self.n_attn}A{self.n_ffn}F", "AFD lambda": self.n_attn / self.n_ffn,
                "EP": f"EP{self.equal}", "EP lambda": self.lambda_ep, "tokens per step": self.first.tokens,
                "AFD sigma": med["sigma_afd"], "EP sigma": med["sigma_ep"], "AFD alpha": a_afd, "EP alpha": a_ep,
                "AFD lead (points)": round(100 * (a_afd - a_ep), 1),
                "DP break-even": dp_break_even(a_afd, a_ep, self.lambda_ep)}

    def readings(self) -> dict[str, object]:
        """The like-with-like numbers as the chapter prints them (glue keys): the designs, GPUs, trials
        and layers, the medians of sigma and alpha, AFD's lead, the other EP sizes and the range of
        sigma over which whole attention nodes pin AFD's alpha (:func:`alpha_plateau`)."""
        a_afd, a_eq = self.printed_alphas()
        med = self.medians()
        flat = alpha_plateau(med["alpha_afd"], self.n_attn, self.n_ffn)
        return {"afd_name": f"{self.n_attn}A{self.n_ffn}F", "afd_gpus_total": self.afd_gpus, "ep_equal": self.equal,
                "like_trials": int(self.first.sigma.shape[1]), "like_layers": int(self.layers.size),
                "like_alpha_afd": f"{a_afd:.3f}", "like_alpha_ep": f"{a_eq:.3f}",
                "like_sigma_afd": f"{med['sigma_afd']:.3f}", "like_sigma_ep": f"{med['sigma_ep']:.3f}",
                "like_gap": f"{100 * (a_afd - a_eq):+.1f}", **closeness_words(100 * (a_afd - a_eq)),
                "like_although": sigma_contrast(med["sigma_afd"], med["sigma_ep"]),
                "like_others": "; ".join(f"EP{r} {ae:.3f}" for r, ae in self.others()) + f" (AFD {a_afd:.3f})",
                "afd_flat": (f"which pin its α for any σ from {flat[0]:.3f} to {flat[1]:.3f}" if flat else
                             "which at this size leave no range of σ where its α stays put"),
                "lambda_value": f"{self.lambda_ep:g}",
                "dp_break_even": f"{dp_break_even(a_afd, a_eq, self.lambda_ep):.3f}",
                **dict(zip(("dp_tips", "dp_break_even_words"), dp_tip_words(dp_break_even(a_afd, a_eq, self.lambda_ep)))),
                "ep_sizes_others": ", ".join(f"EP{r} {100 * (a_afd - ae):+.1f}" for r, ae in self.others())}

    def printed_lead(self, table) -> tuple[float, float]:
        """Smallest and largest lead of AFD in alpha over a table (columns by name: a DataFrame or a
        dict of columns) of :meth:`token_sensitivity` or :meth:`dp_rows` rows, between the values
        rounded to three decimals."""
        lead = (np.round(np.asarray(table["AFD alpha"], dtype=float), 3)
                - np.round(np.asarray(table[f"EP{self.equal} alpha"], dtype=float), 3))
        return float(lead.min()), float(lead.max())


def like_with_like_study(counts: ArrayLike, experts_per_token: int, n_attn: int, n_ffn: int, gpus_per_node: int,
                         ep_sizes: list[int], redundant: int, lambda_ep: float, afd_tokens: int, trials: int,
                         seed: int, layers: ArrayLike) -> LikeWithLikeStudy:
    """:func:`like_with_like` for each EP size R at AFD's tokens per GPU: ``afd_tokens`` per step over
    its (N_A + N_F) g GPUs, so R x afd_tokens / ((N_A + N_F) g) tokens per step (rounded). The first
    size is the one compared like with like, AFD's own GPU count (N_A + N_F) g, derived here; then
    ``ep_sizes``, the others (a size equal to AFD's count is not run twice)."""
    equal = (n_attn + n_ffn) * gpus_per_node
    tokens_per_gpu = afd_tokens / equal
    sizes = [equal] + [int(r) for r in dict.fromkeys(ep_sizes) if int(r) != equal]
    runs = {r: like_with_like(counts, experts_per_token, n_attn, n_ffn, gpus_per_node, [r], redundant, lambda_ep,
                              int(round(tokens_per_gpu * r)), trials, seed, layers) for r in sizes}
    return LikeWithLikeStudy(np.asarray(counts, dtype=float), experts_per_token, n_attn, n_ffn, gpus_per_node,
                             redundant, lambda_ep, seed, np.asarray(layers), runs)


def closeness_words(gap_points: float, tie: float = 1.0) -> dict[str, str]:
    """AFD's lead in alpha (points) in words: ``like_closeness`` ("within a point of each other" or
    "2.3 points apart") and ``like_tie`` ("a near-tie" or which design keeps how much more), a lead of at
    most ``tie`` points being a near-tie."""
    g = abs(gap_points)
    if g <= tie:
        return {"like_closeness": "within a point of each other", "like_tie": "a near-tie"}
    return {"like_closeness": f"{g:.1f} points apart",
            "like_tie": f"no tie: {'AFD' if gap_points > 0 else 'EP'} keeps {g:.1f} points more"}


def sigma_contrast(sigma_afd: float, sigma_ep: float) -> str:
    """How AFD's step balancedness compares with EP's, worded for the clause after the alphas ("far"
    only beyond 0.05, a twentieth of the whole range)."""
    if sigma_afd > sigma_ep + 0.05:
        return f"although AFD's σ ({sigma_afd:.3f}) is far higher than EP's ({sigma_ep:.3f})"
    if sigma_afd > sigma_ep:
        return f"although AFD's σ ({sigma_afd:.3f}) is a little higher than EP's ({sigma_ep:.3f})"
    return f"with AFD's σ ({sigma_afd:.3f}) no higher than EP's ({sigma_ep:.3f})"
