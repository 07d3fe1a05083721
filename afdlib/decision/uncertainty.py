"""P(AFD beats EP): the decode model's uncertain assumptions propagated, one footing for both designs.

A verdict compares two predictions, each with an error. Instead of a band around 1, each uncertain
assumption gets a distribution from its source (:func:`uncertainties`), and the answer is the
probability that AFD gives more output tokens per second per GPU than EP under the SLO (``p_afd``),
with the 10th-90th percentile of the AFD / EP ratio.

**Every assumption of the decode model that can move AFD / EP** (:class:`afdlib.decode.step.Assumptions`,
the hardware and kernel catalogues), how it enters, its distribution and its source. Factors are
centred on the model's default, 1; a share u runs from the default (0 for the usable HBM and the
skew, 1 for the gap) to the other end its source gives.

===========================  ==================  ==========================================================
assumption (:data:`NAMES`)   how it enters       distribution, source
===========================  ==================  ==========================================================
compute kernels              quadrature, 3 nodes lognormal factor on every FLOP and HBM rate; sigma the calibrated
                                                 GEMM curve's rms log residual over its kernel measurements
                                                 (``data/kernel_efficiency.yaml``); holds the kernel profile
                                                 and ``matmul_efficiency``
networks                     quadrature, 3 nodes lognormal factor on every scale-up, scale-out and
                                                 inter-domain rate; sigma the rms log deviation of the
                                                 all-to-all model from DeepEP's low-latency times across the
                                                 NIC (EP16-EP256, :func:`afdlib.decode.validation.deepep_rows`);
                                                 message latencies are held (those times include them)
gap per step                 quadrature, 2 nodes uniform share of :data:`afdlib.decode.step.DECODE_T_GAP_S`,
                                                 none to all of it (Step-3's figures allow at most 3 ms)
fixed cost per kernel        first order         lognormal factor on the profile's t0; sigma the rms log
                                                 spread of t0 refitted to each GEMM source alone
                                                 (``fixed_per_kernel.by_source``, ``scripts/fit_kernels.py``)
usable HBM                   first order         uniform share from ``hbm_usable_fraction`` (0.9) to SGLang
                                                 0.5.23's default for a DeepEP decode server, all but
                                                 :data:`SGLANG_RESERVE_BYTES` (per device: 0.84 on 80 GB,
                                                 0.91 on 141 GB)
routing skew                 first order         uniform power 0..1 of the skew of DeepSeek-V3's measured
                                                 per-layer Zipf exponents over the model's experts after an
                                                 EPLB placement of each deployment
                                                 (:func:`afdlib.routing.balance.fitted_skew`); 0 is the
                                                 default, uniform routing over a perfect placement; not
                                                 varied where measured loads are given (``--counts``)
communication jitter         first order         uniform per-call CV of every communication stage, 0 to
                             (:mod:`~afdlib.     the wider of xDeepServe's published dispatch and combine
                             decision.jitter`)   spreads; each design's best deployment at the defaults
                                                 simulated (the pipeline simulator, one schedule)
AFD / EP composition         analytic            lognormal factor on the ratio; sigma the rms log error of
                                                 the predicted AFD / EP over the published head-to-heads
                                                 (:func:`afdlib.decision.head_to_head.ratio_error`), at its
                                                 one-sided 90% upper bound for their number of independent
                                                 sources (chi-square; the bound a spread exceeds with the
                                                 decision threshold's probability, :data:`DECIDED`)
===========================  ==================  ==========================================================

Held, with the reason: **MTP acceptance** enters only where accepted tokens per step are given
(``--mtp``; the default has none), and it scales both designs' tokens per step alike: from 1.7 to 1.9
accepted tokens each design's throughput grows 12-15% while AFD / EP moves 3% (DeepSeek-V3 on H800,
tests/test_uncertainty.py), a first-order term's size. **Overlap** (``ep_overlap``, ``afd_overlap``)
is no assumption: it comes from the schedule (the overrides are what-ifs). **Destinations per token**
(``afd_destinations``) and uniform routing's **per-step balancedness** are derived (uniform routing);
**two-stage forwarding** (``afd_two_stage``) and the searched forms (micro-batches, kernels, sizes,
redundant experts) are designs, not assumptions; **context and SLO** are the question asked.

**How they are propagated.** The first three are shared by both designs: one value moves both, and
the searches (:func:`afdlib.decode.search.compare`) re-run at it, so each design re-chooses its
deployment and batch, as an operator would on hardware that is that much faster or slower. They are
integrated by Gauss quadrature (:data:`HERMITE` nodes for a lognormal factor, :data:`LEGENDRE` for the
uniform gap share: 3 x 3 x 2 settings, searched as cells of one vectorised call). The
:data:`FIRST_ORDER` assumptions move the ratio by a few percent (each design re-chooses around
them): each is searched at two more cells of each gap setting, its mean minus and plus one
standard deviation, with the others at their defaults, and enters that gap setting (:func:`first_order`)
as a shift of the mean log ratio (the two points' average against the default: second order) and a
variance (their half-difference squared: first order), so the cost is 15 cells per call instead of 9
rather than 3^3 times more; checked against a Monte Carlo over the three (tests: within 0.02).
Given a setting's log ratio l_k and its variance v_k, the ratio's composition factor makes ln(AFD / EP)
normal with mean l_k and variance s_R^2 + v_k, so P(AFD better) = sum_k w_k Phi(l_k / S_k) over the
settings' weights w_k: no sampling, deterministic. Two designs identical by construction give r = 1 in
every cell, hence exactly 1/2.

**Why the ratio's error, not each design's.** Both designs run on one evaluator: an error in the
kernels, the attention or the engine moves both, and cancels in AFD / EP. Each design's own spread
against its published deployments (:func:`afdlib.decode.validation.design_spreads`) is the error
of its absolute tokens/s; adding the two as independent counted the shared part twice. A
published head-to-head measures the ratio's error directly; with few of them the spread is taken at its
upper confidence bound, so a handful of lucky agreements cannot decide a pair.

**Checked independently** (with the two designs' composition terms the verdict then had: a plain Monte
Carlo over the first five assumptions, both searches re-run at each of 3,000 draws, for DeepSeek-V3 on
H800, Kimi-K2 on H200 and Step-3 on H20): P(AFD better) 0.531, 0.565, 0.223 against the quadrature's
0.539, 0.589, 0.218, and the 10th-90th percentiles within 3%. A denser rule (7 x 5 x 5) gives 0.530, 0.578, 0.218: the three-point rule overstates P by up
to about 0.02 where a search switches deployments between nodes; no decision moves. The first-order
terms against a Monte Carlo over their three assumptions (300 draws, the other shared ones at their
defaults): 0.529 against 0.526 (DeepSeek-V3 on H800), 0.480 against 0.500 (Kimi-K2 on H200, whose
default sits on a local peak of the ratio that every assumption's points fall below).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from math import erf, sqrt
from statistics import NormalDist

import numpy as np

from afdlib.decode.search import best_ep, compare
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

NAMES = ("compute kernels", "networks", "gap per step", "fixed cost per kernel", "usable HBM", "routing skew",
         "AFD / EP composition")
"""The uncertain assumptions, in the order of :func:`uncertainties`."""
SHARED = NAMES[:3]
"""The assumptions one value of which moves both designs (re-searched at each), by quadrature."""
FIRST_ORDER = NAMES[3:6]
"""Shared assumptions that move the ratio little, taken to second order in the mean and first in the
variance from two searches each (module docstring)."""

HERMITE = ((-np.sqrt(3.0), 1 / 6), (0.0, 2 / 3), (np.sqrt(3.0), 1 / 6))
"""Three-point Gauss-Hermite rule for a standard normal z: (node, weight); exact for polynomials in
z up to degree 5. A lognormal factor's nodes are exp(scale z), at its 4th, 50th and 96th percentile."""
LEGENDRE = ((0.5 - 0.5 / np.sqrt(3.0), 0.5), (0.5 + 0.5 / np.sqrt(3.0), 0.5))
"""Two-point Gauss-Legendre rule on [0, 1]: (node, weight); the gap share's 21st and 79th percentile."""
DECIDED = 0.1
"""A pair is decided when P(AFD better) <= this or >= 1 - this."""
SGLANG_RESERVE_BYTES = 12 * 2 ** 30
"""HBM a serving engine keeps from weights and KV cache on a large GPU: SGLang 0.5.23 reserves at least
10 GiB on a GPU of more than 60 GiB, and 2 GiB more for DeepEP's all-to-all buffers in a decode server
(``sglang/srt/arg_groups/memory_hook.py``, ``handle_gpu_memory_settings`` and
``reserve_for_deepep_a2a_mb``): the other end of the ``usable HBM`` assumption."""


@dataclass(frozen=True)
class Uncertainty:
    """One uncertain assumption: ``kind`` lognormal (``scale``: sigma of the log factor) or uniform
    (a share between ``low`` and ``high``); what it applies to and its source. The model's default
    is 1 (factor or share)."""

    name: str
    kind: str
    scale: float
    low: float
    high: float
    applies_to: str
    source: str

    def nodes(self) -> tuple[tuple[float, float], ...]:
        """(value, weight) of the quadrature rule for this assumption (:data:`HERMITE`, :data:`LEGENDRE`)."""
        if self.kind == "lognormal":
            return tuple((float(np.exp(self.scale * z)), w) for z, w in HERMITE)
        return tuple((self.low + u * (self.high - self.low), w) for u, w in LEGENDRE)

    def points(self) -> tuple[float, float]:
        """The two values a first-order assumption is searched at: its mean minus and plus one
        standard deviation (of the log factor; of the share, which are :data:`LEGENDRE`'s nodes)."""
        if self.kind == "lognormal":
            return float(np.exp(-self.scale)), float(np.exp(self.scale))
        return self.nodes()[0][0], self.nodes()[-1][0]

    def ends(self) -> tuple[float, float]:
        """The outer nodes: the tornado chart's two ends."""
        n = self.nodes()
        return n[0][0], n[-1][0]

    def percentiles(self) -> str:
        """Where the outer nodes lie, in words: "4th and 96th"."""
        q = NormalDist().cdf(float(HERMITE[0][0])) if self.kind == "lognormal" else float(LEGENDRE[0][0])
        return f"{_ordinal(round(100 * q))} and {_ordinal(round(100 * (1 - q)))}"


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@lru_cache(maxsize=1)
def uncertainties() -> tuple[Uncertainty, ...]:
    """The distributions of :data:`NAMES`, each from its source (module docstring)."""
    from afdlib.decode.validation import deepep_rows, rms_log
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    kernels = read_yaml(data_dir() / "kernel_efficiency.yaml")
    fit, fixed = kernels["gemm"]["residuals"]["all"], kernels["fixed_per_kernel"]
    nic = [r for r in deepep_rows() if r["ep_size"] >= 16]
    from afdlib.decision.head_to_head import ratio_error
    ratio = ratio_error()
    return (
        Uncertainty(NAMES[0], "lognormal", float(fit["rms_log"]), 0, 0, "every kernel's time, both designs",
                    f"calibrated GEMM curve's rms log residual over {fit['points']} kernel times"),
        Uncertainty(NAMES[1], "lognormal", rms_log(r["model_both_us"] / r["both_us"] for r in nic), 0, 0,
                    "every transfer's time, both designs",
                    f"all-to-all model against DeepEP's low-latency times at {len(nic)} sizes across the NIC"),
        Uncertainty(NAMES[2], "uniform", 0.0, 0.0, 1.0, "the gap per step, both designs (a share of its value)",
                    f"none to the default, the upper end Step-3's figures allow ({DECODE_T_GAP_S * 1e3:g} ms)"),
        Uncertainty(NAMES[3], "lognormal", float(fixed["rms_log"]), 0, 0, "every kernel's fixed cost, both designs",
                    f"rms log spread of the fixed cost refitted to each of the {len(fixed['by_source'])} GEMM "
                    "kernel sources alone (data/kernel_efficiency.yaml)"),
        Uncertainty(NAMES[4], "uniform", 0.0, 0.0, 1.0, "the HBM share for weights and KV cache, every pool",
                    f"from the default share to SGLang 0.5.23's rule for a DeepEP decode server (all but "
                    f"{SGLANG_RESERVE_BYTES / 2 ** 30:g} GiB), a share of the way"),
        Uncertainty(NAMES[5], "uniform", 0.0, 0.0, 1.0, "the FFN side's balancedness, both designs (a power of "
                    "the skew)", "from none (uniform routing over a perfect placement, the default) to all of "
                    "the measured DeepSeek-V3 layers' Zipf skew after an EPLB placement of each deployment"),
        Uncertainty(NAMES[6], "lognormal", ratio["sigma"], 0, 0, "the AFD / EP ratio",
                    f"rms log error of the predicted AFD / EP over {ratio['pairs']} published head-to-heads "
                    f"({ratio['rms_log']:.3f}) at its one-sided {ratio['confidence']:.0%} upper bound for "
                    f"{ratio['sources']} independent sources (data/head_to_heads.yaml)"),
    )


def composition_spreads() -> str:
    """Each design's own composition spread in words: "EP 25%, AFD 23%" (one standard deviation of the
    log factor, as a share; :func:`afdlib.decode.validation.design_spreads`)."""
    from afdlib.decode.validation import design_spreads
    return ", ".join(f"{d.upper()} {np.expm1(s):.0%}" for d, (s, _) in design_spreads().items())


def ratio_spread_words() -> str:
    """The verdict's spread of the ratio in words: "30%, the one-sided 90% upper bound of an rms log error
    of 0.086 over 2 published head-to-heads from 2 sources"."""
    by = {x.name: x for x in uncertainties()}
    from afdlib.decision.head_to_head import ratio_error
    r = ratio_error()
    return (f"{np.expm1(by[NAMES[6]].scale):.0%}, the one-sided {r['confidence']:.0%} upper bound of an rms log error "
            f"of {r['rms_log']:.3f} over {r['pairs']} published head-to-heads from {r['sources']} sources")


def assumption_words() -> str:
    """The uncertain assumptions in words, for prose: the shared ones (:data:`SHARED`,
    :data:`FIRST_ORDER`) and the ratio's composition error."""
    shared = [n.replace("compute kernels", "kernel speeds").replace("networks", "network speeds")
              .replace("usable HBM", "the usable HBM share").replace("gap per step", "the gap per step")
              .replace("fixed cost per kernel", "the fixed cost per kernel").replace("routing skew", "the routing skew")
              for n in SHARED + FIRST_ORDER]
    return (", ".join(shared[:-1]) + f" and {shared[-1]} (each from its source, shared by both designs), the "
            "communication stages' per-call jitter, and the model's error in AFD / EP against published head-to-heads")


def decisive_band() -> tuple[float, float]:
    """The AFD / EP ratios between which no pair can be decided even with every shared assumption
    known: with the ratio's composition error alone (log spread S) P(AFD better) = Phi(ln r / S), which
    reaches 1 - :data:`DECIDED` only where |ln r| >= z S (z the standard normal's 1 - DECIDED quantile)."""
    by = {x.name: x for x in uncertainties()}
    z = NormalDist().inv_cdf(1 - DECIDED) * float(by[NAMES[6]].scale)
    return float(np.exp(-z)), float(np.exp(z))


_COMPUTE = ("flops", "bf16_flops", "fp4_flops", "int8_flops", "hbm_bytes_per_s")
_NETWORK = ("scale_up_bytes_per_s", "scale_out_bytes_per_s", "inter_domain_bytes_per_s")


def scaled(hardware: Hardware, compute, network, memory=1.0) -> Hardware:
    """The device with every kernel ``compute`` times and every transfer ``network`` times slower
    (arrays: one cell each; the FLOP, HBM and network rates divided) and ``memory`` times its HBM."""
    c, n = np.asarray(compute, dtype=float), np.asarray(network, dtype=float)
    fields = {f: getattr(hardware, f) / c for f in _COMPUTE if getattr(hardware, f) is not None}
    fields.update({f: getattr(hardware, f) / n for f in _NETWORK if getattr(hardware, f) is not None})
    if np.ndim(memory) or memory != 1.0:
        fields["hbm_bytes"] = hardware.hbm_bytes * np.asarray(memory, dtype=float)
    return replace(hardware, **fields)


def hbm_factor(hardware: Hardware, assumptions: Assumptions, share) -> np.ndarray:
    """The factor on the device's HBM that puts its usable part ``share`` of the way from the
    assumptions' usable share to SGLang's (all but :data:`SGLANG_RESERVE_BYTES`)."""
    d = assumptions.hbm_usable_fraction
    sglang = np.clip(1.0 - SGLANG_RESERVE_BYTES / np.asarray(hardware.hbm_bytes, dtype=float), 0.05, 1.0)
    return (d + np.asarray(share, dtype=float) * (sglang - d)) / d


def setting_bests(model, hardware, attn_hardware, budget, context, precision, assumptions, compute, network,
                  validated_only, ep_hardware=None, fixed=None, memory=None, skew=None, gap=None, scale_out=None, twins=None):
    """(best EP, best AFD) of the searches re-run at each cell's (compute, network) factors; EP on
    ``ep_hardware`` where given. Per cell too where given: ``fixed`` the factor on the fixed cost per
    kernel, ``memory`` the ``usable HBM`` share, ``skew`` the ``routing skew`` share, ``gap`` the share of
    the budget's gap per step (:func:`uncertainties`) and ``scale_out`` a factor on the scale-out bandwidth
    of both pools (the whole fabric on a Superpod; None: the defaults). A setting at its default
    (:data:`afdlib.decision.blocks.DEFAULTS`) gives the search at the defaults, to the bit; ``twins``: best_ep's."""
    from afdlib.decision.sweetspot import with_network
    arrays = [np.asarray(x, dtype=float) for x in (compute, network, fixed, memory, skew, gap, scale_out)
              if x is not None]
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    c, n = (np.broadcast_to(np.asarray(x, dtype=float), shape) for x in (compute, network))
    a = assumptions
    if gap is not None:
        budget = replace(budget, t_gap_s=budget.t_gap_s * np.broadcast_to(np.asarray(gap, dtype=float), shape)[..., None])
    if fixed is not None:
        a = replace(a, kernel_overhead_s=a.kernels.fixed_s * np.broadcast_to(fixed, shape)[..., None])
    if skew is not None and a.skew is None:
        from afdlib.routing.balance import fitted_skew
        a = replace(a, skew=fitted_skew(int(np.max(model.routed_experts))),
                    skew_share=np.broadcast_to(np.asarray(skew, dtype=float), shape)[..., None])

    def device(h):
        d = scaled(h, c, n, 1.0 if memory is None else hbm_factor(h, assumptions, np.broadcast_to(memory, shape)))
        return d if scale_out is None else with_network(d, d.scale_out_bytes_per_s * np.broadcast_to(scale_out, shape))
    hw = device(hardware)
    attn = None if attn_hardware is None else device(attn_hardware)
    ep, afd = compare(model, hw, budget, context, precision, a, attn, cell_shape=shape,
                      validated_only=validated_only, twins=twins)
    if ep_hardware is not None:
        ep = best_ep(model, device(ep_hardware), budget, context, precision, a, shape, validated_only=validated_only,
                     twins=twins)
    return ep, afd


def ratios_of(ep, afd) -> np.ndarray:
    """AFD / EP of two bests' tokens/s per GPU (inf where only AFD is feasible, 0 where only EP is, 1
    where neither)."""
    e, r = np.asarray(ep.tokens_per_s_per_gpu, dtype=float), np.asarray(afd.tokens_per_s_per_gpu, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(e > 0, r / np.where(e > 0, e, 1.0), np.where(r > 0, np.inf, 1.0))


def setting_ratios(*args, **kwargs) -> np.ndarray:
    """AFD / EP (:func:`ratios_of`) of :func:`setting_bests`."""
    return ratios_of(*setting_bests(*args, **kwargs))


@dataclass(frozen=True)
class Verdict:
    """``p_afd``: probability that AFD gives more tokens/s per GPU than EP; ``ratio_interval``: 10th
    and 90th percentile of AFD / EP (``ratio_median`` the 50th); ``tornado``: per assumption the
    ratio at its two outer nodes with every other at its default; ``decided``: p_afd <= :data:`DECIDED`
    or >= 1 - it."""

    p_afd: float
    ratio_interval: tuple[float, float]
    ratio_median: float
    tornado: tuple[dict, ...] = ()
    parts: tuple = field(default=(), compare=False, repr=False)   # the mixture's (log ratios, weights, spreads)

    @classmethod
    def of(cls, log_r, weights, sd, tornado: tuple = ()) -> "Verdict":
        """The verdict of a quadrature's settings (:func:`mixture`), keeping them for :meth:`with_term`."""
        return cls(*mixture(log_r, weights, sd), tornado, (log_r, weights, sd))

    def with_term(self, shift: float, var: float, row: dict | None = None) -> "Verdict":
        """The verdict with one more first-order assumption: every setting's log ratio moved by ``shift``
        and its variance grown by ``var`` (:func:`first_order`); ``row`` its tornado row, if any."""
        log_r, w, sd = self.parts
        rows = tuple(sorted(self.tornado + ((row,) if row and self.tornado else ()), key=lambda x: -x["width"]))
        return Verdict.of(log_r + shift, w, np.sqrt(np.asarray(sd) ** 2 + var), rows)

    @property
    def decided(self) -> bool:
        return self.p_afd <= DECIDED or self.p_afd >= 1 - DECIDED

    @property
    def recommendation(self) -> str:
        """The design more likely to give more tokens/s per GPU (AFD at exactly 1/2 only if never EP)."""
        return "AFD" if self.p_afd > 0.5 else "EP"

    def words(self) -> str:
        """The one-line verdict: "EP, P(AFD better) = 0.07" (and "undecided" when it is not decided)."""
        p = f"P(AFD better) = {self.p_afd:.2f}"
        return f"{self.recommendation}, {p}" if self.decided else f"{self.recommendation} (undecided), {p}"

    def to_json(self) -> dict:
        return {"p_afd": self.p_afd, "ratio_interval": list(self.ratio_interval), "ratio_median": self.ratio_median,
                "decided": self.decided, "tornado": list(self.tornado)}


def mixture(log_r: np.ndarray, weights: np.ndarray, sd) -> tuple[float, tuple[float, float], float]:
    """(P(ln R > 0), (10th, 90th percentile of R), median of R) for ln R = ln r_k + N(0, sd_k^2) with
    probability w_k (``sd``: one for all settings, or one each)."""
    lr = np.clip(log_r, -50.0, 50.0)
    sds = np.broadcast_to(np.asarray(sd, dtype=float), lr.shape)
    pairs, root2 = list(zip(lr.tolist(), sds.tolist())), sqrt(2.0)     # Python floats, NormalDist().cdf's formula
    def cdf(x):
        return float(np.sum(weights * np.array([0.5 * (1.0 + erf((x - m) / s / root2)) if s > 0 else float(x >= m)
                                                for m, s in pairs])))

    def quantile(q):
        lo, hi = float(lr.min()) - 8 * float(sds.max()) - 1, float(lr.max()) + 8 * float(sds.max()) + 1
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
        return float(np.exp((lo + hi) / 2))
    return 1.0 - cdf(0.0), (quantile(0.1), quantile(0.9)), quantile(0.5)


def first_order(mid, points) -> tuple[np.ndarray, np.ndarray]:
    """(shift of the mean log ratio, its variance) from first-order assumptions: ``mid`` the ratio at
    their defaults, ``points`` per assumption the ratios at its mean minus and plus one standard
    deviation (:meth:`Uncertainty.points`): for a log ratio f of the assumption, E f = f(mean) + f'' var / 2
    to second order, which the two points' average gives, and var f = f'^2 var to first order, the
    half-difference squared. A term whose ratios are not all finite (a design infeasible there) is left out."""
    lm = np.log(np.asarray(mid, dtype=float))
    shift, var = np.zeros(np.shape(lm)), np.zeros(np.shape(lm))
    for lo, hi in points:
        a, b = np.log(np.asarray(lo, dtype=float)), np.log(np.asarray(hi, dtype=float))
        ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(lm)
        shift += np.where(ok, (a + b) / 2 - lm, 0.0)
        var += np.where(ok, ((b - a) / 2) ** 2, 0.0)
    return shift, var


def quadrature_settings() -> dict[str, np.ndarray]:
    """The quadrature's settings of the shared assumptions (module docstring), gap-major: per gap node
    the compute x network grid (its (1, 1) setting in the middle) and each first-order assumption at its
    two points, as arrays over the settings of ``compute``, ``network``, ``fixed``, ``memory``, ``skew``
    and ``gap`` (:func:`setting_bests`)."""
    u = {x.name: x for x in uncertainties()}
    comp, net, gap = (u[n] for n in SHARED)
    grid = np.array([(c, n) for c, _ in comp.nodes() for n, _ in net.nodes()])
    k = len(grid) + 2 * len(FIRST_ORDER)
    c, n = (np.concatenate([grid[:, i], np.ones(k - len(grid))]) for i in (0, 1))
    fixed, memory, skew = np.ones(k), np.zeros(k), np.zeros(k)
    for j, (arr, name) in enumerate(zip((fixed, memory, skew), FIRST_ORDER)):
        arr[len(grid) + 2 * j: len(grid) + 2 * j + 2] = u[name].points()
    g = len(gap.nodes())
    return {"compute": np.tile(c, g), "network": np.tile(n, g), "fixed": np.tile(fixed, g),
            "memory": np.tile(memory, g), "skew": np.tile(skew, g),
            "gap": np.repeat([share for share, _ in gap.nodes()], k)}


def quadrature_of(every: np.ndarray) -> tuple:
    """(log ratio of every grid setting with the first-order shifts in, the weights, the log spreads:
    :func:`quadrature`'s) of the AFD / EP ratios ``every`` at :func:`quadrature_settings` (last axis)."""
    u = {x.name: x for x in uncertainties()}
    comp, net, gap = (u[n] for n in SHARED)
    n_grid = len(comp.nodes()) * len(net.nodes())
    k, mid = n_grid + 2 * len(FIRST_ORDER), n_grid // 2          # mid: the (1, 1) setting
    w_cn = np.outer([w for _, w in comp.nodes()], [w for _, w in net.nodes()]).ravel()
    s2 = u[NAMES[6]].scale ** 2
    log_r, weights, sd = [], [], []
    for g, (_, w_g) in enumerate(gap.nodes()):
        r = every[..., g * k:(g + 1) * k]
        pts = [(r[..., n_grid + 2 * j], r[..., n_grid + 2 * j + 1]) for j in range(len(FIRST_ORDER))]
        with np.errstate(divide="ignore", invalid="ignore"):
            shift, var = first_order(r[..., mid], pts)
            log_r.append(np.log(r[..., :n_grid]) + shift[..., None])
        sd.append(np.broadcast_to(np.sqrt(s2 + var)[..., None], log_r[-1].shape))
        weights.append(w_cn * w_g)
    return np.concatenate(log_r, axis=-1), np.concatenate(weights), np.concatenate(sd, axis=-1)


def quadrature(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
               assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
               validated_only: bool = False, ep_hardware: Hardware | None = None, cells: tuple = ()):
    """The shared assumptions' settings (module docstring): (the log AFD / EP ratio of every setting,
    shape ``cells`` + (settings,), gap-major, the first-order assumptions' shifts in; the settings'
    weights; the log spread of each setting, the ratio's composition factor's and the first-order
    assumptions' variance, shape as the ratios). ``cells``: leading axes the device's fields already
    carry (e.g. a sweep of its network), searched as cells too (:func:`quadrature_settings`,
    :func:`quadrature_of`)."""
    settings = quadrature_settings()
    shape = cells + (settings["gap"].size,)
    every = setting_ratios(model, hardware, attn_hardware, budget, context, precision, assumptions,
                           validated_only=validated_only, ep_hardware=ep_hardware,
                           **{k: np.broadcast_to(v, shape) for k, v in settings.items()})
    return quadrature_of(every)
