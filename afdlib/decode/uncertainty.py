"""P(AFD beats EP): the decode model's uncertain assumptions propagated, one footing for both designs.

A verdict compares two predictions, each with an error. Instead of a band around 1, each uncertain
assumption gets a distribution from its source (:func:`uncertainties`), and the answer is the
probability that AFD gives more output tokens per second per GPU than EP under the SLO (``p_afd``),
with the 10th-90th percentile of the AFD / EP ratio.

**The assumptions** (:data:`NAMES`; every factor's distribution is centred on the model's default,
1; the gap's default is the top of its range):

* ``compute kernels``: a factor on the rate-bound part of every kernel's time (FLOP and HBM rates
  divided by it; the fixed cost per kernel stays) on both designs' GPUs, lognormal with the
  calibrated GEMM curve's rms log residual over its kernel measurements
  (``data/kernel_efficiency.yaml``): the same kernels run in both designs.
* ``networks``: a factor on the bandwidth-bound part of every transfer (scale-up, scale-out and
  inter-domain rates divided by it; message latencies stay), lognormal with the rms log deviation
  of the all-to-all model from DeepEP's published low-latency times across the NIC (EP16-EP256,
  :func:`afdlib.decode.validation.deepep_rows`).
* ``gap per step``: a share of the budget's gap per step, uniform between none and all of it (the
  default :data:`afdlib.decode.step.DECODE_T_GAP_S`, all of it, is the upper end Step-3's figures
  allow: its tornado bar lies on one side of the default's ratio).
* ``EP composition`` and ``AFD composition``: what the components do not explain, a factor on each
  design's throughput, independent of each other, lognormal with the rms log error of that design's
  published deployments (:func:`afdlib.decode.validation.validation_rows`; a design with fewer than
  :data:`MIN_CASES` cases takes all cases' spread). These errors already hold the kernels', the
  networks' and the gap's share, so the spread is counted more than once: conservative.

**How they are propagated.** The first three are shared by both designs: one value moves both, and
the searches (:func:`afdlib.decode.search.compare`) re-run at it, so each design re-chooses its
deployment and batch, as an operator would on hardware that is that much faster or slower. They are
integrated by Gauss quadrature (:data:`HERMITE` nodes for a lognormal factor, :data:`LEGENDRE` for the
uniform gap share: 3 x 3 x 2 settings, searched as cells of two vectorised calls). Given a setting's
ratio r, the two composition factors make ln(AFD / EP) normal with mean ln r and variance s_EP^2 +
s_AFD^2, so P(AFD better) = sum_k w_k Phi(ln r_k / S) over the settings' weights w_k: exact in the
composition factors, no sampling, deterministic. Two designs identical by construction give r = 1
in every setting, hence exactly 1/2.

**Checked independently** (a plain Monte Carlo over all five assumptions, both searches re-run at
each of 3,000 draws, for DeepSeek-V3 on H800, Kimi-K2 on H200 and Step-3 on H20): P(AFD better)
0.531, 0.565, 0.223 against this module's 0.539, 0.589, 0.218, and the 10th-90th percentiles within
3%. A denser rule (7 x 5 x 5) gives 0.530, 0.578, 0.218: the three-point rule overstates P by up
to about 0.02 where a search switches deployments between nodes; no decision moves.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from afdlib.decode.search import best_ep, compare
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

NAMES = ("compute kernels", "networks", "gap per step", "EP composition", "AFD composition")
"""The uncertain assumptions, in the order of :func:`uncertainties`."""
SHARED = NAMES[:3]
"""The assumptions one value of which moves both designs (re-searched at each)."""

HERMITE = ((-np.sqrt(3.0), 1 / 6), (0.0, 2 / 3), (np.sqrt(3.0), 1 / 6))
"""Three-point Gauss-Hermite rule for a standard normal z: (node, weight); exact for polynomials in
z up to degree 5. A lognormal factor's nodes are exp(scale z), at its 4th, 50th and 96th percentile."""
LEGENDRE = ((0.5 - 0.5 / np.sqrt(3.0), 0.5), (0.5 + 0.5 / np.sqrt(3.0), 0.5))
"""Two-point Gauss-Legendre rule on [0, 1]: (node, weight); the gap share's 21st and 79th percentile."""
DECIDED = 0.1
"""A pair is decided when P(AFD better) <= this or >= 1 - this."""
MIN_CASES = 3
"""A design's composition spread comes from its own published deployments only from this many on."""


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


def _rms_log(ratios) -> float:
    r = np.asarray(list(ratios), dtype=float)
    return float(np.sqrt(np.mean(np.log(r) ** 2)))


@lru_cache(maxsize=1)
def uncertainties() -> tuple[Uncertainty, ...]:
    """The distributions of :data:`NAMES`, each from its source (module docstring)."""
    from afdlib.decode.validation import deepep_rows, validation_rows
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    fit = read_yaml(data_dir() / "kernel_efficiency.yaml")["gemm"]["residuals"]["all"]
    nic = [r for r in deepep_rows() if r["ep_size"] >= 16]
    rows = validation_rows()
    pooled = _rms_log(1 + r["error"] for r in rows)

    def spread(design):
        errs = [1 + r["error"] for r in rows if r["design"] == design]
        if len(errs) >= MIN_CASES:
            return _rms_log(errs), f"rms log error of its {len(errs)} published deployments"
        return pooled, f"rms log error of all {len(rows)} published deployments (it has {len(errs)})"
    (s_ep, src_ep), (s_afd, src_afd) = spread("ep"), spread("afd")
    return (
        Uncertainty(NAMES[0], "lognormal", float(fit["rms_log"]), 0, 0, "every kernel's time, both designs",
                    f"calibrated GEMM curve's rms log residual over {fit['points']} kernel times"),
        Uncertainty(NAMES[1], "lognormal", _rms_log(r["model_both_us"] / r["both_us"] for r in nic), 0, 0,
                    "every transfer's time, both designs",
                    f"all-to-all model against DeepEP's low-latency times at {len(nic)} sizes across the NIC"),
        Uncertainty(NAMES[2], "uniform", 0.0, 0.0, 1.0, "the gap per step, both designs (a share of its value)",
                    f"none to the default, the upper end Step-3's figures allow ({DECODE_T_GAP_S * 1e3:g} ms)"),
        Uncertainty(NAMES[3], "lognormal", s_ep, 0, 0, "EP's throughput", src_ep),
        Uncertainty(NAMES[4], "lognormal", s_afd, 0, 0, "AFD's throughput", src_afd),
    )


def composition_spreads() -> str:
    """Each design's composition spread in words: "EP 25%, AFD 23%" (one standard deviation of the
    log factor, as a share)."""
    by = {x.name: x for x in uncertainties()}
    return ", ".join(f"{d} {np.expm1(by[f'{d} composition'].scale):.0%}" for d in ("EP", "AFD"))


_COMPUTE = ("flops", "bf16_flops", "fp4_flops", "hbm_bytes_per_s")
_NETWORK = ("scale_up_bytes_per_s", "scale_out_bytes_per_s", "inter_domain_bytes_per_s")


def scaled(hardware: Hardware, compute, network) -> Hardware:
    """The device with every kernel ``compute`` times and every transfer ``network`` times slower
    (arrays: one cell each; the FLOP, HBM and network rates divided)."""
    c, n = np.asarray(compute, dtype=float), np.asarray(network, dtype=float)
    fields = {f: getattr(hardware, f) / c for f in _COMPUTE if getattr(hardware, f) is not None}
    fields.update({f: getattr(hardware, f) / n for f in _NETWORK if getattr(hardware, f) is not None})
    return replace(hardware, **fields)


def setting_ratios(model, hardware, attn_hardware, budget, context, precision, assumptions, compute, network,
            validated_only, ep_hardware=None) -> np.ndarray:
    """AFD / EP of the re-run searches at each cell's (compute, network) factors (inf where only AFD
    is feasible, 0 where only EP is, 1 where neither); EP on ``ep_hardware`` where given."""
    c, n = np.broadcast_arrays(np.asarray(compute, dtype=float), np.asarray(network, dtype=float))
    hw = scaled(hardware, c, n)
    attn = None if attn_hardware is None else scaled(attn_hardware, c, n)
    ep, afd = compare(model, hw, budget, context, precision, assumptions, attn, cell_shape=c.shape,
                      validated_only=validated_only)
    if ep_hardware is not None:
        ep = best_ep(model, scaled(ep_hardware, c, n), budget, context, precision, assumptions, c.shape,
                     validated_only=validated_only)
    e, a = np.asarray(ep.tokens_per_s_per_gpu, dtype=float), np.asarray(afd.tokens_per_s_per_gpu, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(e > 0, a / np.where(e > 0, e, 1.0), np.where(a > 0, np.inf, 1.0))


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


def mixture(log_r: np.ndarray, weights: np.ndarray, sd: float) -> tuple[float, tuple[float, float], float]:
    """(P(ln R > 0), (10th, 90th percentile of R), median of R) for ln R = ln r_k + N(0, sd^2) with
    probability w_k."""
    lr = np.clip(log_r, -50.0, 50.0)
    norm = NormalDist()

    def cdf(x):
        return float(np.sum(weights * np.array([norm.cdf((x - m) / sd) if sd > 0 else float(x >= m) for m in lr])))

    def quantile(q):
        lo, hi = float(lr.min()) - 8 * sd - 1, float(lr.max()) + 8 * sd + 1
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
        return float(np.exp((lo + hi) / 2))
    return 1.0 - cdf(0.0), (quantile(0.1), quantile(0.9)), quantile(0.5)


def quadrature(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
               assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
               validated_only: bool = False, ep_hardware: Hardware | None = None, cells: tuple = ()):
    """The shared assumptions' quadrature settings (module docstring): (per gap node, the AFD / EP
    ratios of the compute x network grid, shape ``cells`` + (compute x network,); the settings'
    weights, gap-major; the composition factors' combined log spread S). ``cells``: leading axes
    the device's fields already carry (e.g. a sweep of its network), searched as cells too."""
    u = {x.name: x for x in uncertainties()}
    comp, net, gap = (u[n] for n in SHARED)
    lead = (1,) * len(cells)
    c = np.array([v for v, _ in comp.nodes()]).reshape(lead + (-1, 1)) * np.ones(cells + (1, len(net.nodes())))
    n = np.array([v for v, _ in net.nodes()]).reshape(lead + (1, -1)) * np.ones(cells + (len(comp.nodes()), 1))
    w_cn = np.outer([w for _, w in comp.nodes()], [w for _, w in net.nodes()])
    ratios, weights = [], []
    for share, w_g in gap.nodes():
        b = replace(budget, t_gap_s=budget.t_gap_s * share)
        ratios.append(setting_ratios(model, hardware, attn_hardware, b, context, precision, assumptions, c, n,
                                     validated_only, ep_hardware).reshape(cells + (-1,)))
        weights.append((w_cn * w_g).ravel())
    return ratios, np.concatenate(weights), float(np.hypot(u[NAMES[3]].scale, u[NAMES[4]].scale))


def verdict(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
            validated_only: bool = False, tornado: bool = True, ep_hardware: Hardware | None = None) -> Verdict:
    """P(AFD better), the ratio's interval and (``tornado``) the tornado rows for one pair, the
    searches re-run at every quadrature setting of the shared assumptions (:func:`quadrature`).
    ``ep_hardware``: EP's device where it differs from AFD's pools' (a what-if)."""
    ratios, weights, sd = quadrature(model, hardware, budget, context, precision, assumptions, attn_hardware,
                                     validated_only, ep_hardware)
    p, interval, median = mixture(np.log(np.concatenate(ratios)), weights, sd)
    rows = _tornado(model, hardware, attn_hardware, budget, context, precision, assumptions, validated_only,
                    ratios, ep_hardware) if tornado else ()
    return Verdict(p, interval, median, rows)


def _tornado(model, hardware, attn_hardware, budget, context, precision, assumptions, validated_only,
             gap_ratios, ep_hardware=None) -> tuple[dict, ...]:
    """Per assumption the ratio at its outer nodes, every other at its default (1), widest first; the
    gap's ends are the gap rule's nodes at default kernels and networks (the middle cell of
    ``gap_ratios``)."""
    u = {x.name: x for x in uncertainties()}
    lo_c, hi_c = u[NAMES[0]].ends()
    lo_n, hi_n = u[NAMES[1]].ends()
    r = setting_ratios(model, hardware, attn_hardware, budget, context, precision, assumptions,
                [1.0, lo_c, hi_c, 1.0, 1.0], [1.0, 1.0, 1.0, lo_n, hi_n], validated_only, ep_hardware)
    nominal = float(r[0])
    mid = len(gap_ratios[0]) // 2      # the (1, 1) cell of the 3 x 3 grid
    ends = {NAMES[0]: (r[1], r[2]), NAMES[1]: (r[3], r[4]), NAMES[2]: (gap_ratios[0][mid], gap_ratios[-1][mid])}
    for name, sign in ((NAMES[3], -1.0), (NAMES[4], 1.0)):   # a slower EP (factor < 1) raises AFD / EP
        lo, hi = u[name].ends()
        ends[name] = (nominal * lo ** sign, nominal * hi ** sign)
    rows = [{"assumption": name, "low": float(a), "high": float(b), "nominal": nominal,
             "width": float(abs(b - a)), "at": u[name].percentiles(), "source": u[name].source}
            for name, (a, b) in ends.items()]
    return tuple(sorted(rows, key=lambda x: -x["width"]))
