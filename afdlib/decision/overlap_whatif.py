"""What share of hidden communication would flip `afd advise`'s verdict, on one footing for both designs.

Each design's overlap what-if override (:class:`afdlib.decode.step.Assumptions`: ``ep_overlap``,
``afd_overlap``) is swept over the same shares, three ways (:data:`WHAT_IFS`): the same share for
both designs, EP's alone (AFD as its schedule runs it) and AFD's alone (EP as scheduled). EP's
override applies to the form whose overlap is in question, two micro-batches with DeepEP's
low-latency kernels (the normal kernels hold the SMs and one batch has nothing beside it); its other
forms stay as the schedule runs them. AFD's applies to every AFD form (2-4 micro-batches, each with
a transfer lane beside the pools' compute). Each design's best deployment is searched again at every
share, in one vectorised call per design over the shares.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from afdlib.decode.deployment import decode_step
from afdlib.decode.search import EP_MICRO_BATCHES, Best, best_afd, best_ep
from afdlib.decode.validation import form_label, validated_forms
from afdlib.evaluator.alltoall import EP_MODES

FLIP_OVERLAPS = np.linspace(0.0, 1.0, 11)
"""Hidden shares searched for the break-even points (the same grid for both designs)."""

WHAT_IFS = {"both": "the same share hidden by both designs",
            "ep": "EP's share alone (two micro-batches, low-latency kernels; AFD {afd})",
            "afd": "AFD's share alone (every form; EP {ep})"}
"""The overlap what-ifs of :func:`overlap_what_ifs`, by key, as the advice names them (the other
design as scheduled, or at the override the assumptions give it)."""


def _held(override) -> str:
    """How the design not varied is run: by its schedule, or at the caller's override."""
    return "as scheduled" if override is None else f"at its override {float(np.asarray(override)):.0%}"


def crossings(values: np.ndarray, ratios: np.ndarray) -> np.ndarray:
    """Where ``ratios`` (over increasing ``values``) crosses 1, linearly interpolated; empty if never."""
    above = ratios > 1
    change = np.flatnonzero(above[1:] != above[:-1])
    r0, r1 = ratios[change], ratios[change + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.where(np.isfinite(r0) & np.isfinite(r1), (1 - r0) / (r1 - r0), 0.5)
    return values[change] + step * (values[change + 1] - values[change])


def leads(values: np.ndarray, ratios: np.ndarray) -> list[dict]:
    """The stretches of ``values`` over which each design leads (AFD where the AFD / EP ratio exceeds
    1), from the first value to the last, split at the interpolated crossings: ``[{"design",
    "from", "to"}]``."""
    cuts = [float(values[0]), *crossings(values, ratios), float(values[-1])]
    above = ratios > 1
    first = bool(above[0])
    return [{"design": "AFD" if first != bool(k % 2) else "EP", "from": cuts[k], "to": cuts[k + 1]}
            for k in range(len(cuts) - 1)]


def percents(values) -> list[str]:
    """Shares as percentages, with as many decimals (up to 2) as keep distinct neighbours apart (a
    stretch from 99.6% to 100% does not read '100% to 100%')."""
    values = [float(v) for v in values]
    for digits in range(3):
        text = [f"{v:.{digits}%}" for v in values]
        if all(a != b for a, b, x, y in zip(text, text[1:], values, values[1:]) if x != y):
            break
    return text


def leads_text(stretches: list[dict]) -> str:
    """``AFD leads from 0% to 34%, EP from 34% to 100%`` / ``AFD leads at every share from 0% to 100%``."""
    cuts = percents([stretches[0]["from"], *(s["to"] for s in stretches)])
    if len(stretches) == 1:
        return f"{stretches[0]['design']} leads at every share from {cuts[0]} to {cuts[1]}"
    return ", ".join(f"{s['design']}{' leads' if k == 0 else ''} from {cuts[k]} to {cuts[k + 1]}"
                     for k, s in enumerate(stretches))


def ep_rates_at(model, hardware, budget, context, precision, assumptions, shares: np.ndarray,
                validated_only: bool = False) -> tuple[np.ndarray, float]:
    """EP's best tokens/s per GPU at each EP override share (two micro-batches, low-latency
    kernels), against its other forms as the schedule runs them (``validated_only``: only the forms a
    published deployment validates); and the best of those other forms."""
    a = replace(assumptions, ep_overlap=None)
    ok = {(k, mb) for (d, mb, k, *_) in validated_forms() if d == "ep"}
    others = [(mode, mb) for mode in EP_MODES for mb in EP_MICRO_BATCHES
              if (mode, mb) != ("low-latency", 2) and (not validated_only or (mode, mb) in ok)]
    base = max((float(np.asarray(best_ep(model, hardware, budget, context, precision, a, modes=(mode,),
                                         micro_batches=(mb,)).tokens_per_s_per_gpu)) for mode, mb in others),
               default=0.0)
    rates = best_ep(model, hardware, budget, context, precision, replace(a, ep_overlap=shares[:, None]),
                    cell_shape=shares.shape, modes=("low-latency",), micro_batches=(2,)).tokens_per_s_per_gpu
    return np.maximum(base, rates), base


def afd_rates_at(model, attn, ffn, budget, context, precision, assumptions, shares: np.ndarray,
                 validated_only: bool = False) -> np.ndarray:
    """AFD's best tokens/s per GPU at each AFD override share (every AFD form)."""
    return best_afd(model, attn, ffn, budget, context, precision, replace(assumptions, afd_overlap=shares[:, None]),
                    cell_shape=shares.shape, validated_only=validated_only).tokens_per_s_per_gpu


def json_ratios(ratio: np.ndarray) -> list:
    """The ratios as a JSON list: None where EP has no feasible deployment (the ratio is infinite)."""
    return [float(r) if np.isfinite(r) else None for r in np.asarray(ratio, dtype=float)]


def _ratio(afd, ep) -> np.ndarray:
    afd, ep = np.broadcast_arrays(np.asarray(afd, dtype=float), np.asarray(ep, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ep > 0, afd / np.where(ep > 0, ep, 1.0), np.inf)


def overlap_what_ifs(model, ffn, budget, context, precision, assumptions, ep_rate: float, afd_rate: float,
                     attn=None, overlaps: np.ndarray = FLIP_OVERLAPS, validated_only: bool = False) -> dict:
    """The AFD / EP ratio over ``overlaps`` for each what-if of :data:`WHAT_IFS`, with ``ep_rate`` and
    ``afd_rate`` each design's best as scheduled (``ffn``: AFD's FFN pool and EP's device; ``attn``
    AFD's attention pool, default the same). Per key: ``what`` (its words), ``shares``, ``ratios``
    (:func:`json_ratios`), ``flips_at`` (the interpolated crossings of 1), ``leads`` (:func:`leads`); the single-design
    what-ifs also ``deployment``: at the first crossing, that design's best there, its requests and
    the share its own schedule hides (None without a crossing)."""
    shares = np.asarray(overlaps, dtype=float)
    attn = attn or ffn
    ep, _ = ep_rates_at(model, ffn, budget, context, precision, assumptions, shares, validated_only)
    afd = afd_rates_at(model, attn, ffn, budget, context, precision, assumptions, shares, validated_only)
    ratios = {"both": _ratio(afd, ep), "ep": _ratio(afd_rate, ep), "afd": _ratio(afd, ep_rate)}
    out = {}
    for key, ratio in ratios.items():
        flips = crossings(shares, ratio)
        what = WHAT_IFS[key].format(ep=_held(assumptions.ep_overlap), afd=_held(assumptions.afd_overlap))
        doc = {"what": what, "shares": shares.tolist(), "ratios": json_ratios(ratio),
               "flips_at": flips.tolist(), "leads": leads(shares, ratio)}
        if key != "both":
            doc["deployment"] = (None if not flips.size else
                                 _deployment_at(key, float(flips[0]), model, ffn, attn, budget, context, precision,
                                                assumptions, validated_only))
        out[key] = doc
    return out


def _deployment_at(design, share, model, ffn, attn, budget, context, precision, assumptions, validated_only):
    """One design's best at its override ``share``: its label, form, requests and the share its schedule hides."""
    if design == "ep":
        best: Best = best_ep(model, ffn, budget, context, precision, replace(assumptions, ep_overlap=share),
                             modes=("low-latency",), micro_batches=(2,))
    else:
        best = best_afd(model, attn, ffn, budget, context, precision, replace(assumptions, afd_overlap=share),
                        validated_only=validated_only)
    if float(np.asarray(best.tokens_per_s_per_gpu)) <= 0:
        return None
    d = best.deployment
    scheduled = replace(assumptions, ep_overlap=None, afd_overlap=None)
    own = float(np.asarray(decode_step(model, d, context, budget, precision, scheduled).hidden_share).reshape(-1)[0])
    form = form_label("ep", d.micro_batches, d.kernels, d.sbo) if design == "ep" else form_label("afd", d.micro_batches, domains=d.domains)
    return {"label": d.label, "form": form, "requests": int(d.requests), "scheduled_share": own}


def what_if_reasons(doc: dict, ep: dict, afd: dict, assumptions) -> list[str]:
    """The advice's lines for :func:`overlap_what_ifs`' result (``ep``, ``afd``: the designs'
    documents, for the shares their best deployments hide under ``assumptions``)."""
    now = (f"EP's best hides {ep['hidden_share']:.0%} of what could overlap ({_held(assumptions.ep_overlap)}), "
           f"AFD's {afd['hidden_share']:.0%} ({_held(assumptions.afd_overlap)})")
    lines = [f"overlap what-if, {doc['both']['what']} (EP's on two micro-batches with low-latency kernels, its "
             f"other forms as scheduled; AFD's on every form): {leads_text(doc['both']['leads'])}; {now}"]
    for key, per in (("ep", "requests per GPU"), ("afd", "requests per attention GPU")):
        d = doc[key]
        line = f"overlap what-if, {d['what']}: {leads_text(d['leads'])}"
        if d["deployment"] is not None:
            at = d["deployment"]
            line += (f"; at {percents([0.0, *d['flips_at'], 1.0])[1]} {key.upper()}'s best would be {at['label']} at {at['requests']} "
                     f"{per}, which hides {at['scheduled_share']:.0%} by the schedule")
        lines.append(line)
    return lines
