"""The paper's Table 3 conditions, one at a time and like for like (issue 19).

The paper names four conditions under which AFD can beat EP (Superpod-class interconnects, coarse
experts, lower sparsity, heterogeneous hardware) and states its method: the workloads vary "keeping the
total number of parameters constant". Here each condition is varied alone, with both designs searched
on the same footing at every point (same device, SLO, kernels and schedule):

* **coarse experts**: the reference model's family at the same total and activated routed parameters
  (:func:`afdlib.decision.sweetspot.with_shape`: E x M and K x M fixed, E / K unchanged), over M;
* **lower sparsity**: the family at the same total parameters (E and M fixed), over E / K (K varied);
* **Superpod**: one device's compute and memory with two networks, an 8-GPU node with a NIC per GPU
  (another catalogue device's, :func:`with_interconnect`) and its own Superpod fabric; and the NIC
  swept on 8-GPU nodes up to the scale-up bandwidth;
* **heterogeneous pools**: both pairings of two devices, and the price ratio at which each pays
  (:mod:`afdlib.studies.sweetspot_study`'s price reading).

Every point is read twice: under the schedule (each design hides what its max-plus schedule gives it)
and with the overlap override at 1 for both (the paper's idealisation, equal overlap). The AFD search is
extended where its best deployment sits on the bound (:func:`afdlib.decision.sweetspot.best_afd_open`),
and the endpoints get P(AFD better) (:func:`afdlib.decision.verdict.verdict`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from afdlib.decode.search import best_afd, best_ep
from afdlib.decode.step import Assumptions
from afdlib.decision.sweetspot import family, routed_parameters, shape_value, with_network
from afdlib.decision.uncertainty import DECIDED
from afdlib.decision.verdict import verdict
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

EQUAL = Assumptions(ep_overlap=1.0, afd_overlap=1.0)
"""The paper's idealisation for both designs: all communication hidden."""
_NETWORK = ("scale_up_bytes_per_s", "scale_out_bytes_per_s", "gpus_per_node", "scale_up_domain", "superpod",
            "inter_domain_bytes_per_s", "scale_out_latency_s", "scale_up_latency_s")


def with_interconnect(hardware: Hardware, like: Hardware) -> Hardware:
    """``hardware``'s compute and memory with ``like``'s network (bandwidths, latencies, node and
    scale-up domain sizes, Superpod or not): one device, two interconnects. The slug is kept: it names
    the chip, whose kernel efficiencies (:func:`afdlib.evaluator.kernels.architecture`) stay."""
    return replace(hardware, name=f"{hardware.name}, {like.name} network", **{f: getattr(like, f) for f in _NETWORK})


@dataclass(frozen=True)
class Point:
    """One point of a condition: AFD / EP under the schedule and with equal overlap, and the bound
    the AFD search needed (nodes per pool; ``on_bound``: still on it at the largest)."""

    x: float
    ratio: float
    ratio_equal: float
    bound: int
    on_bound: bool


def point(model: Model, hardware: Hardware, budget: Budget, context: float, x: float,
          precision: Precision = Precision()) -> Point:
    """Both designs searched on ``hardware`` under the schedule and with equal overlap."""
    return _points(model, hardware, np.array([x]), budget, context, precision, ())[0]


def network_points(model: Model, hardware: Hardware, bandwidths, budget: Budget, context: float,
                   precision: Precision = Precision()) -> tuple[Point, ...]:
    """:func:`point` on ``hardware`` with its network at each of ``bandwidths`` (bytes/s per GPU,
    :func:`~afdlib.decision.sweetspot.with_network`; x: GB/s), the bandwidths searched as the cells of one
    call per design and overlap reading: each cell's best is the search's on that device alone (the
    searches are per cell, widening included)."""
    bw = np.asarray(bandwidths, dtype=float)
    return _points(model, with_network(hardware, bw), bw / 1e9, budget, context, precision, bw.shape)


def _points(model, hardware, xs, budget, context, precision, cells: tuple) -> tuple[Point, ...]:
    """The :class:`Point` of each cell of ``cells`` (``hardware``'s fields over them; () for one device),
    at ``xs``: both designs' best under the schedule and with equal overlap, and the AFD search's bound
    (its widest pool; whether its best still sits on the cap, :func:`~afdlib.decision.sweetspot.best_afd_open`)."""
    shape = cells or (1,)
    readings = []
    for a in (Assumptions(), EQUAL):
        ep = np.asarray(best_ep(model, hardware, budget, context, precision, a, cells).tokens_per_s_per_gpu)
        afd = best_afd(model, hardware, hardware, budget, context, precision, a, cells)
        r = np.asarray(afd.tokens_per_s_per_gpu)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(ep > 0, r / np.where(ep > 0, ep, 1.0), np.nan)
        searched = np.max([np.broadcast_to(np.asarray(v, dtype=float), shape) for v in afd.searched.values()]
                          or [np.zeros(shape)], axis=0).astype(int)
        readings.append((np.broadcast_to(ratio, shape), searched, np.broadcast_to(afd.bound, shape)))
    (r0, n0, b0), (r1, n1, b1) = readings
    return tuple(Point(float(x), float(r0[k]), float(r1[k]), int(max(n0[k], n1[k])), bool(b0[k] or b1[k]))
                 for k, x in enumerate(np.reshape(xs, -1)))


@dataclass(frozen=True)
class Condition:
    """One condition on one device: its points (increasing x), the direction in which the paper says
    it favours AFD (+1: larger x, -1: smaller), and P(AFD better) at the two ends (schedule)."""

    name: str
    device: str
    axis: str                      # what x is, in words
    points: tuple
    paper_sign: int
    p_ends: tuple = (np.nan, np.nan)
    end_labels: tuple = ()         # the two ends in words, where "axis = x" would not say what they are

    @property
    def x(self) -> np.ndarray:
        return np.array([p.x for p in self.points])

    def ratios(self, equal: bool = False) -> np.ndarray:
        return np.array([p.ratio_equal if equal else p.ratio for p in self.points])

    def agrees(self, equal: bool = False) -> bool:
        """Whether the ratio moves the paper's way from the end it disfavours to the end it favours."""
        r = self.ratios(equal)
        return bool((r[-1] - r[0]) * self.paper_sign > 0)

    @property
    def bound_binds(self) -> bool:
        return any(p.on_bound for p in self.points)

    def sentence(self, fmt: str = "{:.0f}") -> str:
        """"agrees with the paper" or "departs, because ...", with the end ratios and P(AFD better)."""
        r, e, x = self.ratios(), self.ratios(True), self.x
        lo, hi = self.end_labels or (f"{self.axis} = {fmt.format(x[0])}", fmt.format(x[-1]))
        ends = (f"{r[0]:.2f} at {lo} to {r[-1]:.2f} at {hi}"
                f" (P(AFD better) {self.p_ends[0]:.2f} to {self.p_ends[1]:.2f}{{decided}}); with equal overlap "
                f"{e[0]:.2f} to {e[-1]:.2f}")
        bound = (f"; the AFD search was extended to {max(p.bound for p in self.points)} nodes per pool"
                 if any(p.bound > 16 for p in self.points) else "")
        bound += "; its best still sits on that bound" if self.bound_binds else ""
        decided = [f"{w} {p:.2f}" for w, p in zip(("decided for EP at", "decided for AFD at"), (min(self.p_ends),
                   max(self.p_ends))) if (p <= DECIDED if w.endswith("EP at") else p >= 1 - DECIDED)]
        ends = ends.replace("{decided}", f"; {'; '.join(decided)}" if decided else "")   # beside the P it reads
        if round(float(r[0]), 2) == round(float(r[-1]), 2):
            return f"is level on {self.device} at two decimals (the ratio does not move either way): {ends}{bound}"
        if self.agrees():
            return f"agrees with the paper on {self.device} (the ratio moves toward AFD): {ends}{bound}"
        why = ("of the overlap the schedule gives each design (with equal overlap it agrees)" if self.agrees(True)
               else "of what the decode model adds to the paper's HFU bound, whatever the overlap")
        return f"departs on {self.device} (the ratio moves toward EP), because {why}: {ends}{bound}"


def _verdict_ends(members, hardware, budget, context, precision) -> tuple:
    return tuple(verdict(m, hw, budget, context, precision, tornado=False).p_afd
                 for m, hw in ((members[0], hardware[0]), (members[-1], hardware[-1])))


def shape_condition(model: Model, hardware: Hardware, axis: str, values, budget: Budget, context: float,
                    precision: Precision = Precision(), verdicts: bool = True) -> Condition:
    """Coarse experts (``axis`` 'moe_intermediate_size', the paper: larger M favours AFD) or lower
    sparsity ('sparsity': smaller E / K favours AFD) on ``model``'s family at the same total
    parameters, at ``hardware``'s own network."""
    members = family(model, axis, values)
    pts = tuple(point(m, hardware, budget, context, shape_value(m, axis), precision) for m in members)
    p = _verdict_ends(members, [hardware] * 2, budget, context, precision) if verdicts else (np.nan, np.nan)
    name, word, sign = (("coarse experts", "M", 1) if axis == "moe_intermediate_size" else
                        ("lower sparsity", "E/K", -1))
    return Condition(name, hardware.name, word, pts, sign, p)


def interconnect_condition(model: Model, superpod: Hardware, ordinary: Hardware, budget: Budget, context: float,
                           points: int = 6, precision: Precision = Precision(), verdicts: bool = True) -> Condition:
    """The Superpod condition on one device: ``superpod``'s compute with ``ordinary``'s nodes,
    its NIC swept from ``ordinary``'s to the scale-up bandwidth (``points`` log spaced), then the
    device as it is (its x: its fabric's bandwidth, drawn last)."""
    hgx = with_interconnect(superpod, ordinary)
    nics = np.geomspace(ordinary.scale_out_bytes_per_s, hgx.scale_up_bytes_per_s, points)
    last = point(model, superpod, budget, context, float(superpod.scale_out_bytes_per_s) / 1e9, precision)
    pts = network_points(model, hgx, nics, budget, context, precision) + (replace(last, x=last.x * 1.25),)
    # (the Superpod drawn just past the sweep)
    p = (_verdict_ends([model, model], [with_network(hgx, float(nics[0])), superpod], budget, context, precision)
         if verdicts else (np.nan,) * 2)
    return Condition("Superpod-class interconnect", f"{superpod.name} compute", "NIC GB/s", pts, 1, p,
                     (f"{hgx.gpus_per_node}-GPU nodes with {ordinary.name}'s NIC ({pts[0].x:.0f} GB/s)",
                      f"its {superpod.name} fabric"))


def domain_condition(model: Model, superpod: Hardware, budget: Budget, context: float, domains=(16, 36, 72, 144),
                     precision: Precision = Precision(), verdicts: bool = True) -> Condition:
    """The Superpod's scale-up domain alone: ``superpod`` (a Superpod-class device) with its fabric
    spanning ``domains`` GPUs, the fabric's and the inter-domain network's bandwidths kept (x: GPUs
    per domain; traffic leaving a domain crosses the inter-domain network). The model's Superpod path
    sends AFD's copies that leave a domain one per expert (no two-stage forwarding across domains, which
    EP's normal kernels have): with a domain of one node that path costs AFD far more than the 8-GPU
    nodes' two-stage transfer, so the default domains start at two nodes."""
    devices = [replace(superpod, scale_up_domain=int(d)) for d in domains]
    pts = tuple(point(model, hw, budget, context, hw.scale_up_domain, precision) for hw in devices)
    p = _verdict_ends([model, model], [devices[0], devices[-1]], budget, context, precision) if verdicts else (np.nan,) * 2
    return Condition("Superpod-class interconnect", f"{superpod.name}, scale-up domain", "GPUs per domain", pts, 1, p)


def superpod_gain(models: list[Model], superpod: Hardware, ordinary: Hardware, budget: Budget, context: float,
                  precision: Precision = Precision()) -> dict:
    """Per model, ratio on ``superpod`` over the ratio on the same device with ``ordinary``'s network
    (schedule and equal overlap), and the medians: above 1 the Superpod favours AFD."""
    hgx = with_interconnect(superpod, ordinary)
    rows = {m.name: [point(m, hw, budget, context, 0, precision) for hw in (hgx, superpod)] for m in models}
    gain = {k: (s.ratio / o.ratio, s.ratio_equal / o.ratio_equal) for k, (o, s) in rows.items()}
    return {"per_model": gain, "nodes": hgx.gpus_per_node, "median": float(np.median([g[0] for g in gain.values()])),
            "median_equal": float(np.median([g[1] for g in gain.values()]))}


def parameters_constant(model: Model, axis: str, values) -> tuple[float, float]:
    """Largest relative departure of the family's (total, activated) routed parameters from the
    model's: total 0 by construction; activated 0 for granularity (within the rounding of E)."""
    t0, a0 = routed_parameters(model)
    tot, act = zip(*(routed_parameters(m) for m in family(model, axis, values)))
    return float(np.max(np.abs(np.array(tot) / t0 - 1))), float(np.max(np.abs(np.array(act) / a0 - 1)))


def hetero_sentence(pools: list[dict], attn: Hardware, ffn: Hardware) -> str:
    """The heterogeneous pairing (``attn`` attention, ``ffn`` FFN) against the paper's condition, from
    :func:`afdlib.studies.sweetspot_study.pools_rows` rows: agrees where some price ratio makes it cheaper
    than EP on either device alone."""
    from afdlib.studies.sweetspot_study import heterogeneous_price_reading, heterogeneous_prices
    low, high = heterogeneous_prices(pools, attn.slug, ffn.slug)
    if np.isnan(low) or low < high:
        side = "agrees with the paper" if low < high else "not comparable"
        return f"{attn.name} attention + {ffn.name} FFN {side}: {heterogeneous_price_reading(pools, attn, ffn)}"
    rate = {r["design"]: r["tokens/s per GPU"] for r in pools}
    ep = rate[f"EP on {attn.slug}"] / rate[f"EP on {ffn.slug}"]
    flops, hbm = attn.flops / ffn.flops, attn.hbm_bytes_per_s / ffn.hbm_bytes_per_s
    # compute-bound only where EP's rates follow the FLOP/s ratio within 25% (and closer than the HBM ratio)
    near = abs(np.log(ep / flops)) < min(np.log(1.25), abs(np.log(ep / hbm)))
    buys = ("memory-rich attention GPUs buy little" if np.all(attn.hbm_bytes > ffn.hbm_bytes)
            else "the pairing buys little")
    why = (f"decode is bound by compute here (EP on {attn.name} gives {ep:.2f} times {ffn.name}'s tokens/s per GPU, "
           f"near their FLOP/s ratio {flops:.2f}, not their HBM ratio {hbm:.2f}), so {buys}" if near
           else "of the GPU-hours each pool needs")
    return (f"{attn.name} attention + {ffn.name} FFN departs, because {why}: "
            f"{heterogeneous_price_reading(pools, attn, ffn)}")


@dataclass(frozen=True)
class Table3:
    """The four conditions computed: coarse experts and lower sparsity on the ordinary device and the
    Superpod, the Superpod's interconnect on its own compute (and its gain per model), the pools."""

    shape: tuple
    interconnect: Condition
    domain: Condition
    gain: dict
    pools: list
    hetero: tuple                  # the sentences of both pairings

    def rows(self) -> list[dict]:
        """The table: condition, where, and the reading (agrees / departs, with numbers)."""
        g = self.gain
        out = [{"condition (paper)": c.name, "reading": c.sentence()} for c in self.shape]
        out += [{"condition (paper)": c.name, "reading": c.sentence()} for c in (self.interconnect, self.domain)]
        side = "agrees with the paper" if g["median"] > 1 else (
            "departs, because of the overlap the schedule gives each design (with equal overlap it agrees)"
            if g["median_equal"] > 1 else "departs, whatever the overlap")
        gains = [k for k, (v, _) in g["per_model"].items() if v > 1]
        out.append({"condition (paper)": self.interconnect.name,
                    "reading": f"over the {len(g['per_model'])} models, {side}: the Superpod over the same device with "
                               f"{g['nodes']}-GPU nodes, median {g['median']:.2f} (equal overlap {g['median_equal']:.2f}); AFD gains "
                               f"on it for {len(gains)} ({', '.join(gains) or 'none'})"})
        out += [{"condition (paper)": "heterogeneous hardware", "reading": s} for s in self.hetero]
        return out

    KEYS = ("t3_coarse_ordinary", "t3_coarse_superpod", "t3_sparse_ordinary", "t3_sparse_superpod", "t3_superpod",
            "t3_domain", "t3_superpod_models", "t3_hetero", "t3_hetero_reverse")

    def glue(self) -> dict:
        """The readings by name (:attr:`KEYS`, in the order of :meth:`rows`)."""
        return dict(zip(self.KEYS, (r["reading"] for r in self.rows())))

    def panels(self) -> dict:
        """For :func:`afdlib.report.figures.conditions_figure`."""
        def curves(cs):
            return {c.device: (c.x, c.ratios(), c.ratios(True), c.p_ends) for c in cs}
        coarse = [c for c in self.shape if c.name == "coarse experts"]
        sparse = [c for c in self.shape if c.name == "lower sparsity"]
        ic = self.interconnect
        return {"coarse experts (same total)": ("expert size M (E, K scaled)", curves(coarse)),
                "lower sparsity (same total)": ("E / K (K varied)", curves(sparse)),
                "Superpod (same compute)": ("NIC GB/s (last point: the Superpod)", curves([ic])),
                "Superpod domain (same fabric)": ("GPUs per scale-up domain", curves([self.domain]))}


def table3_study(model: Model, models: list[Model], ordinary: Hardware, superpod: Hardware, twin: Hardware,
                 pools: list[dict], attn: Hardware, ffn: Hardware, budget: Budget, context: float,
                 size: int = 6) -> Table3:
    """Every condition of the paper's Table 3 for ``model`` (``size`` points per shape condition, the
    maps' ranges: M 512-16384, E/K 4-128, and NIC bandwidths of the Superpod condition's sweep); the
    Superpod against its ``twin``'s 8-GPU network; the pools
    both ways (``pools``: :func:`afdlib.studies.sweetspot_study.pools_rows` rows of ``attn`` and ``ffn``)."""
    m_values, s_values = np.geomspace(512, 16384, size), np.geomspace(4, 128, size)
    shape = tuple(shape_condition(model, hw, axis, v, budget, context)
                  for axis, v in (("moe_intermediate_size", m_values), ("sparsity", s_values))
                  for hw in (ordinary, superpod))
    return Table3(shape, interconnect_condition(model, superpod, twin, budget, context, points=size),
                  domain_condition(model, superpod, budget, context),
                  superpod_gain(models, superpod, twin, budget, context), pools,
                  (hetero_sentence(pools, attn, ffn), hetero_sentence(pools, ffn, attn)))
