"""Devices searched together: one :class:`Hardware` whose numeric fields are arrays over several devices.

A vectorised search takes a device whose fields are arrays over cells; devices that agree on every
field the model branches on (:func:`structure`) can so be searched in one call, each a cell, with the
results of searching each alone (tests/test_kernels.py, tests/test_uncertainty.py).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from afdlib.evaluator.kernels import architecture as kernel_architecture
from afdlib.decode.step import Assumptions
from afdlib.decision.blocks import search_blocks
from afdlib.decision.uncertainty import Verdict, quadrature, quadrature_of, quadrature_settings, ratios_of
from afdlib.decision.jitter import with_jitter
from afdlib.decision.verdict import verdict
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

STACKED = ("flops", "hbm_bytes_per_s", "hbm_bytes", "scale_up_bytes_per_s", "scale_out_bytes_per_s", "bf16_flops",
           "inter_domain_bytes_per_s", "scale_out_latency_s", "scale_up_latency_s")
"""The fields laid along the devices' axis; every other field must be equal (:func:`structure`)."""


def structure(hw: Hardware) -> tuple:
    """What must be equal for devices to be searched in one vectorised call: the fields the model
    branches on, which optional fields are present, and the calibrated kernel fractions' architecture
    (chosen per call, not per cell)."""
    return (hw.gpus_per_node, hw.scale_up_domain, hw.superpod, hw.flops_dtype, kernel_architecture(hw),
            *(getattr(hw, f) is None for f in STACKED))


def device_groups(devices: list[Hardware]) -> list[list[int]]:
    """The indices of ``devices`` grouped by :func:`structure`, in order of first appearance."""
    groups: dict[tuple, list[int]] = {}
    for i, h in enumerate(devices):
        groups.setdefault(structure(h), []).append(i)
    return list(groups.values())


def stacked(devices: list[Hardware], trailing: int = 0) -> Hardware:
    """One Hardware whose :data:`STACKED` fields are arrays over ``devices`` (same structure), with
    ``trailing`` axes of length 1 after the devices' (1: the devices as leading cells of a call that
    adds its own cell axis, as the verdict's quadrature does)."""
    fields = {f: np.array([getattr(h, f) for h in devices], dtype=float).reshape((len(devices),) + (1,) * trailing)
              for f in STACKED if getattr(devices[0], f) is not None}
    return replace(devices[0], slug="+".join(h.slug for h in devices), **fields)


def verdicts(model: Model, devices: list[Hardware], budget: Budget, context, precision: Precision = Precision(),
             assumptions: Assumptions = Assumptions(), validated_only: bool = False, bests: list | None = None
             ) -> list[Verdict]:
    """:func:`afdlib.decision.verdict.verdict` (without the tornado) on each of ``devices``, all of one
    :func:`structure`: their quadratures searched as leading cells of one call, with the results of each
    alone; ``bests``: per device (EP's, AFD's) best deployment at the defaults, whose communication jitter
    each verdict takes (:func:`afdlib.decision.jitter.with_jitter`; None: searched with the quadrature,
    :func:`searched`)."""
    if bests is None:
        return [v for _, _, v in searched(model, devices, budget, context, precision, assumptions, validated_only)]
    if len(devices) == 1:
        return [verdict(model, devices[0], budget, context, precision, assumptions, None, validated_only, False,
                        bests=bests[0])]
    log_r, weights, sd = quadrature(model, stacked(devices, trailing=1), budget, context, precision, assumptions,
                                    validated_only=validated_only, cells=(len(devices),))
    return [with_jitter(Verdict.of(log_r[c], weights, sd[c]), model, bests[c], context, budget, precision, assumptions)
            for c in range(len(devices))]


def searched(model: Model, devices: list[Hardware], budget: Budget, context, precision: Precision = Precision(),
             assumptions: Assumptions = Assumptions(), validated_only: bool = False) -> list[tuple]:
    """Per device of ``devices`` (all of one :func:`structure`): (best EP, best AFD, the verdict without the
    tornado, None where either design is infeasible at the defaults), the defaults and every quadrature
    setting of every device searched as blocks of one call (:func:`afdlib.decision.blocks.search_blocks`):
    :func:`afdlib.decode.search.compare` and :func:`afdlib.decision.verdict.verdict` of each alone."""
    one = len(devices) == 1
    hw, cells = (devices[0], ()) if one else (stacked(devices, trailing=1), (len(devices),))
    ep, afd, (here, quad) = search_blocks(model, hw, None, budget, context, precision, assumptions, validated_only,
                                          [{}, quadrature_settings()], cells=cells)
    log_r, weights, sd = quadrature_of(ratios_of(ep, afd)[..., quad])
    out = []
    for c, d in enumerate(devices):
        at = (here.start,) if one else (c, here.start)
        e, a = ep.at(at).on(d), afd.at(at).on(d)
        both = float(e.tokens_per_s_per_gpu) > 0 and float(a.tokens_per_s_per_gpu) > 0
        v = (with_jitter(Verdict.of(log_r[at[:-1]], weights, sd[at[:-1]]), model, (e.deployment, a.deployment), context,
                         budget, precision, assumptions) if both else None)
        out.append((e, a, v))
    return out
