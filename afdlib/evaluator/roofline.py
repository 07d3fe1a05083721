"""The roofline as time: one evaluator for every stage the library models.

An operator states its work per tier (:class:`Work`: FLOPs by data type, HBM bytes, scale-up and
scale-out bytes, fixed costs); :func:`stage_time` turns a list of operators into time on one
:class:`~afdlib.inputs.specs.Hardware` and names the bound that binds. Within one operator the tiers
overlap (its time is the longest tier: the roofline); operators of a stage run one after another
(their times add). Both readings are returned: ``seconds`` (each operator overlapped, max over
tiers) and ``serial`` (nothing overlapped, the sum of every tier), as in the scaling-book's
"lower bound max(T_math, T_comms), upper bound their sum".

Every field broadcasts over numpy arrays, so one call evaluates a whole grid. SI units.

The classic helpers (:func:`ridge_point`, :func:`attainable_flops`, :func:`binding_bound`) give the
same roofline as rates (FLOP/s against intensity), for the figures that draw it that way.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

TIERS = ("compute", "hbm", "scale-out", "scale-up", "inter-domain")
"""Bound names, in the order ties are resolved (the first tier of a tie binds)."""


@dataclass(frozen=True)
class Work:
    """Work of one operator (or one stage of operators of the same kind), per GPU.

    ``flops_fp8`` run at the device's FP8 (else BF16) peak, ``flops_bf16`` at its BF16 peak,
    ``flops_fp4`` at its FP4 peak (W4A4 GEMMs of NVFP4 weights; refused on a device without FP4);
    ``inter_domain_bytes`` leave the scale-up domain of a Superpod-class device (rack to rack, at
    its ``inter_domain_bytes_per_s``; where the catalogue has none, at its scale-out rate);
    ``fixed_s`` is time that no bandwidth shortens (kernel launch and tail, message latency),
    added after the roofline. ``flops_efficiency`` and ``hbm_efficiency`` are the fractions of the
    hardware's FLOP and HBM rates this operator's kernel reaches (1: the roofline; a kernel profile,
    :mod:`afdlib.evaluator.kernels`, sets them from the operator's shape); they are not work and
    are neither added nor scaled.
    """

    flops_fp8: ArrayLike = 0.0
    flops_bf16: ArrayLike = 0.0
    flops_fp4: ArrayLike = 0.0
    hbm_bytes: ArrayLike = 0.0
    scale_up_bytes: ArrayLike = 0.0
    scale_out_bytes: ArrayLike = 0.0
    inter_domain_bytes: ArrayLike = 0.0
    fixed_s: ArrayLike = 0.0
    flops_efficiency: ArrayLike = 1.0
    hbm_efficiency: ArrayLike = 1.0

    def __add__(self, other: "Work") -> "Work":
        rates = {n: getattr(self, n) for n in RATE_FIELDS}
        if any(not np.array_equal(getattr(other, n), v) for n, v in rates.items()):
            raise ValueError("cannot add the work of operators with different efficiencies: time them apart")
        return Work(**{n: np.add(getattr(self, n), getattr(other, n)) for n in WORK_FIELDS}, **rates)

    def scaled(self, factor: ArrayLike) -> "Work":
        """Every tier times ``factor`` (fixed costs included; the efficiencies unchanged)."""
        return replace(self, **{n: np.multiply(getattr(self, n), factor) for n in WORK_FIELDS})

    def network_scaled(self, factor: ArrayLike) -> "Work":
        """The network tiers times ``factor`` (the busiest receiver's share), the rest unchanged."""
        return replace(self, **{n: np.multiply(getattr(self, n), factor)
                                for n in ("scale_up_bytes", "scale_out_bytes", "inter_domain_bytes")})

    @property
    def flops(self) -> np.ndarray:
        total = np.asarray(self.flops_fp8, dtype=float)
        for other in (self.flops_bf16, self.flops_fp4):
            if np.ndim(other) or other:                       # no pass over a grid for absent work
                total = np.add(total, other)
        return total


RATE_FIELDS = ("flops_efficiency", "hbm_efficiency")
WORK_FIELDS = tuple(f.name for f in fields(Work) if f.name not in RATE_FIELDS)


@dataclass(frozen=True)
class StageTime:
    """Time of a stage: ``seconds`` (tiers overlapped within each operator), ``serial`` (none
    overlapped), ``bound`` (index into :data:`TIERS` of the tier that takes most of ``seconds``)
    and ``tiers`` (seconds of each tier summed over the operators, in :data:`TIERS` order).
    ``bound``, ``serial`` and ``tiers`` are computed when asked for: a search that only ranks
    candidates by ``seconds`` never pays for them."""

    seconds: np.ndarray
    parts: tuple = field(default=(), repr=False)   # per operator: its tiers' seconds
    fixed: tuple = field(default=(), repr=False)   # per operator: its fixed seconds

    @cached_property
    def bound(self) -> np.ndarray:
        """The tier whose binding seconds, summed over the operators, are largest (ties: the
        first of :data:`TIERS`); each operator's binding tier is its longest."""
        shape = np.shape(self.seconds)
        if len(self.parts) == 1 and isinstance(self.parts[0], (tuple, list)):
            return _longest_tier(self.parts[0], shape)       # one operator: its longest tier, unstacked
        n = len(TIERS)
        index = np.arange(n).reshape((-1,) + (1,) * len(shape))
        binding = np.zeros((n,) + shape)
        for op in self.parts:
            t = (np.stack([np.broadcast_to(x, shape) for x in op]) if isinstance(op, (tuple, list))
                 else np.broadcast_to(op, (n,) + shape))
            binding += np.where(index == np.argmax(t, axis=0), t, 0.0)
        return np.argmax(binding, axis=0)

    @property
    def serial(self) -> np.ndarray:
        """Seconds with nothing overlapped: every tier of every operator, one after another."""
        shape = np.shape(self.seconds)
        return sum(np.broadcast_to(sum(op), shape) for op in self.parts) + sum(self.fixed)

    @property
    def tiers(self) -> np.ndarray:
        shape = np.shape(self.seconds)
        return np.stack([sum(np.broadcast_to(op[i], shape) for op in self.parts) for i in range(len(TIERS))])

    @property
    def bound_name(self) -> np.ndarray:
        return np.asarray(TIERS)[self.bound]


def tier_times(work: Work, hardware, compute_efficiency: ArrayLike = 1.0) -> np.ndarray:
    """Seconds of each tier of one operator, stacked along a new first axis in :data:`TIERS` order.

    ``compute_efficiency`` is the fraction of peak FLOP/s the operator's kernels reach (1: roofline).
    """
    return np.stack(np.broadcast_arrays(*operator_tiers(work, hardware, compute_efficiency)))


def operator_time(tiers: list, fixed: ArrayLike = 0.0) -> StageTime:
    """The :class:`StageTime` of one operator from its tiers' seconds (:func:`operator_tiers`): the
    longest tier plus ``fixed``, found without stacking the tiers (grids of millions of points)."""
    fixed = np.asarray(fixed, dtype=float)
    # an unused tier (a scalar zero: a GEMM's network tiers) cannot exceed the others (times >= 0)
    used = [t for t in tiers[1:] if np.ndim(t) or t != 0]
    shape = np.broadcast_shapes(*(np.shape(t) for t in tiers), fixed.shape)
    best = np.maximum(tiers[0], used[0]) if used else tiers[0]          # a new array: in place from here
    if np.shape(best) != shape or not isinstance(best, np.ndarray) or not used:
        best = np.array(np.broadcast_to(best, shape), dtype=float)
    for t in used[1:]:
        np.maximum(best, t, out=best)
    if np.any(fixed):
        best += fixed
    # the binding tier is found only when asked for (StageTime.bound: the first of the longest)
    return StageTime(seconds=best, parts=(tuple(tiers),), fixed=(fixed,))


def _longest_tier(tiers, shape) -> np.ndarray:
    """Index (into :data:`TIERS`) of the longest of one operator's tiers, ties to the first: found by
    comparing in place, not by stacking the tiers (grids of millions of points)."""
    best = np.array(np.broadcast_to(tiers[0], shape), dtype=float)
    k = np.zeros(shape, dtype=np.int8)
    for i, t in enumerate(tiers[1:], 1):
        if np.ndim(t) == 0 and t == 0:
            continue                      # an unused tier cannot exceed the others (times >= 0)
        np.copyto(k, np.int8(i), where=t > best)   # strictly longer: ties stay with the first tier
        np.maximum(best, t, out=best)
    return k


def operator_tiers(work: Work, hardware, compute_efficiency: ArrayLike = 1.0) -> list:
    """The tiers' seconds of one operator as separate (unbroadcast) arrays, in :data:`TIERS` order."""
    eff = np.asarray(compute_efficiency, dtype=float)
    if np.ndim(work.flops_efficiency) or work.flops_efficiency != 1:
        # 1.0 * x is x exactly: no pass over a grid for the calibrated profile's scalar 1
        eff = work.flops_efficiency if (not eff.ndim and eff == 1.0) else eff * work.flops_efficiency
    compute = np.asarray(work.flops_fp8, dtype=float) / (hardware.peak("fp8") * eff)
    if np.ndim(work.flops_bf16) or work.flops_bf16:       # no pass over a grid for absent BF16 work
        compute = compute + np.asarray(work.flops_bf16, dtype=float) / (_bf16_peak(hardware, work) * eff)
    if np.ndim(work.flops_fp4) or work.flops_fp4:         # nor for absent FP4 work
        compute = compute + np.asarray(work.flops_fp4, dtype=float) / (_fp4_peak(hardware, work) * eff)
    hbm = np.asarray(work.hbm_bytes, dtype=float) / hardware.hbm_bytes_per_s
    if np.ndim(work.hbm_efficiency) or work.hbm_efficiency != 1:
        hbm = hbm / work.hbm_efficiency
    return [compute, hbm,
            np.asarray(work.scale_out_bytes, dtype=float) / hardware.scale_out_bytes_per_s,
            np.asarray(work.scale_up_bytes, dtype=float) / hardware.scale_up_bytes_per_s,
            np.asarray(work.inter_domain_bytes, dtype=float) / inter_domain_rate(hardware)]


def inter_domain_rate(hardware):
    """Bytes/s per GPU between scale-up domains: the catalogue's figure, else the scale-out rate."""
    rate = getattr(hardware, "inter_domain_bytes_per_s", None)
    return hardware.scale_out_bytes_per_s if rate is None else rate


def _bf16_peak(hardware, work: Work):
    # only ask the catalogue for a BF16 rate where the work has BF16 FLOPs (a device with a BF16 rate
    # gives it without a pass over the work: 0 FLOPs take 0 s at any rate)
    if getattr(hardware, "bf16_flops", None) is not None:
        return hardware.peak("bf16")
    return hardware.peak("bf16") if np.any(np.asarray(work.flops_bf16) > 0) else 1.0


def _fp4_peak(hardware, work: Work):
    # only ask for an FP4 rate (refused where the device has none) where the work has FP4 FLOPs
    return hardware.peak("nvfp4") if np.any(np.asarray(work.flops_fp4) > 0) else 1.0


def stage_time(works: Work | Sequence[Work], hardware, compute_efficiency: ArrayLike = 1.0) -> StageTime:
    """Time of operators run one after another on ``hardware`` (each its own roofline).

    ``compute_efficiency`` applies to every operator (a scalar or an array broadcasting with the
    work). Returns a :class:`StageTime`; ``bound`` names the tier that contributes most of
    ``seconds`` (ties go to the first of :data:`TIERS`).
    """
    works = [works] if isinstance(works, Work) else list(works)
    fixed = [np.asarray(w.fixed_s, dtype=float) for w in works]
    if len(works) == 1:
        return operator_time(operator_tiers(works[0], hardware, compute_efficiency), fixed[0])
    # each operator's tiers unstacked and unbroadcast (a GEMM's absent network tiers stay scalar
    # zeros, never copied over a grid); each takes its longest tier (the roofline), found as
    # operator_time finds it; the binding tier only if asked for
    per_op = [tuple(operator_tiers(w, hardware, compute_efficiency)) for w in works]
    longest = [operator_time(list(t)).seconds for t in per_op]
    shape = np.broadcast_shapes(*(t.shape for t in longest), *(f.shape for f in fixed))
    fixed_total = np.broadcast_to(sum(fixed), shape)
    seconds = sum(np.broadcast_to(t, shape) for t in longest) + fixed_total
    return StageTime(seconds=seconds, parts=tuple(per_op), fixed=tuple(fixed))


def overlap(a: ArrayLike, b: ArrayLike, hidden: ArrayLike) -> np.ndarray:
    """Two activities on separate resources: ``max(a, b) + (1 - hidden) * min(a, b)``.

    ``hidden`` = 1: the shorter one hides entirely behind the longer (overlapped, the max);
    0: they run one after the other (serial, the sum).
    """
    a, b, h = (np.asarray(x, dtype=float) for x in (a, b, hidden))
    return np.maximum(a, b) + (1.0 - h) * np.minimum(a, b)


# ----------------------------------------------------------------------------- rates

BOUNDS = ("compute", "memory", "communication")


def ridge_point(peak_flops: ArrayLike, bandwidth: ArrayLike) -> np.ndarray:
    """Intensity (FLOP/byte) where a bandwidth roof meets the compute roof."""
    return np.asarray(peak_flops, dtype=float) / np.asarray(bandwidth, dtype=float)


def _ceilings(peak_flops, intensity_mem, hbm_bandwidth, intensity_comm, comm_bandwidth):
    roofs = [np.broadcast_to(np.asarray(peak_flops, dtype=float), np.shape(intensity_mem)),
             np.asarray(intensity_mem, dtype=float) * np.asarray(hbm_bandwidth, dtype=float)]
    if intensity_comm is not None:
        roofs.append(np.asarray(intensity_comm, dtype=float) * np.asarray(comm_bandwidth, dtype=float))
    return np.broadcast_arrays(*roofs)


def attainable_flops(peak_flops: ArrayLike, intensity_mem: ArrayLike, hbm_bandwidth: ArrayLike,
                     intensity_comm: ArrayLike | None = None, comm_bandwidth: ArrayLike | None = None) -> np.ndarray:
    """FLOP/s under the compute, memory and (optional) communication roofs."""
    return np.minimum.reduce(_ceilings(peak_flops, intensity_mem, hbm_bandwidth, intensity_comm, comm_bandwidth))


def binding_bound(peak_flops: ArrayLike, intensity_mem: ArrayLike, hbm_bandwidth: ArrayLike,
                  intensity_comm: ArrayLike | None = None, comm_bandwidth: ArrayLike | None = None) -> np.ndarray:
    """Name of the roof that binds at each point (ties go to the first of :data:`BOUNDS`)."""
    roofs = np.stack(_ceilings(peak_flops, intensity_mem, hbm_bandwidth, intensity_comm, comm_bandwidth))
    return np.asarray(BOUNDS)[np.argmin(roofs, axis=0)]
