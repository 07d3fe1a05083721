"""Modern MoE models with hybrid attention in the sweet-spot question: the models as published, and
each read as if every token-mixing layer were full attention.

A hybrid model (:mod:`afdlib.inputs.layers`: linear attention, Mamba-2, sliding windows, compressed
attention beside a few full-attention layers) holds less cache per request than the same model with
full attention everywhere, so more requests fit on an attention GPU and the attention side's time per
request falls. Both designs keep the cache on the GPUs that run attention (EP: every GPU; AFD: the
attention pool), so both gain; :func:`hybrid_study` asks whether the AFD / EP answer moves, and how
far, against :func:`all_full_attention`, the counterfactual of the same model.

Rows are plain dicts (the chapter turns them into tables); ratios are AFD / EP output tokens per
second per GPU of each design's best deployment under the SLO (:func:`afdlib.decision.advise.advice_table`,
the sweet-spot chapter's search), above 1 favouring AFD; ``shift`` is the hybrid's ratio over its
all-full-attention reading's (below 1: the hybrid layers move the answer toward EP).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from afdlib.decision.advise import advice_table
from afdlib.decode.step import Assumptions, afd_step
from afdlib.decision.uncertainty import DECIDED
from afdlib.decision.verdict import verdict
from afdlib.errors import AfdError
from afdlib.evaluator.attention import core_bytes_per_request, kv_cache_bytes, state_bytes_per_request
from afdlib.inputs import layers
from afdlib.inputs.layers import MIXER_KINDS, Mixer, parameter_counts
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

FULL_SUFFIX = "all full attention"
"""How the counterfactual model's name reads: "Qwen3.5-397B-A17B, all full attention"."""


def all_full_attention(model: Model) -> Model:
    """``model`` with every token-mixing layer full attention: each linear, Mamba-2, window or
    compressed layer becomes a layer like the model's own full-attention ones (their heads, gates and
    output projection; a model without any, DeepSeek-V4, takes its attention layers' heads with neither
    window, compression nor indexer); layers without a mixer (Nemotron-H's MoE blocks) stay without.
    Everything else (FFNs, experts, vocabulary) is kept. A catalogue model without ``mixers`` loses
    its local windows. Named ``"<name>, all full attention"``, slug ``"<slug>-all-full"``."""
    named = {"slug": f"{model.slug}-all-full", "name": f"{model.name}, {FULL_SUFFIX}"}
    if not model.mixers:
        if model.attention is None:
            raise AfdError(f"model '{model.slug}' has no attention description to read every layer with")
        return replace(model, attention=replace(model.attention, local_window=0, local_layers=0), **named)
    own = [g for g in model.mixers if g.kind == "attention"]
    like = own[0] if own else next((g for g in model.mixers if g.attention is not None), None)
    if like is None:
        raise AfdError(f"model '{model.slug}' has no attention layer whose heads every layer could take")
    mixing = sum(g.layers for g in model.mixers if g.kind != "none")
    full = Mixer("attention", mixing, like.attention, gate_params=like.gate_params, shared_kv=like.shared_kv,
                 o_lora_rank=like.o_lora_rank, o_groups=like.o_groups)
    return replace(model, mixers=(full,) + tuple(g for g in model.mixers if g.kind == "none"), **named)


def layer_counts(model: Model) -> str:
    """The model's token mixers in words: "45 linear, 15 attention" (most first; no-mixer blocks left out)."""
    groups = layers.model_mixers(model)
    counts = {k: sum(g.layers for g in groups if g.kind == k) for k in MIXER_KINDS if k != "none"}
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n)


def mixer_bytes_per_step(model: Model, context: float, precision: Precision = Precision()) -> float:
    """HBM bytes every mixer core of the model reads (and, for states, writes) per request and decode
    step at ``context`` (:func:`afdlib.evaluator.attention.core_bytes_per_request`)."""
    return float(core_bytes_per_request(model, precision, context))


def requests_that_fit(model: Model, hardware: Hardware, context: float, precision: Precision = Precision(),
                      assumptions: Assumptions = Assumptions()) -> int:
    """Requests of ``context`` tokens whose cache and states fit on one AFD attention GPU beside its
    weights (the mixers', the dense layers', embeddings and LM head), in the usable share of its HBM:
    the memory bound on the attention side's batch, before any SLO."""
    budget = Budget(l_accept=1.0)
    pool = afd_step(model, hardware, hardware, 1, 1, 1, context, budget, precision, assumptions).memory[0]
    free = pool.capacity_bytes - float(np.asarray(pool.weights_bytes).reshape(-1)[0])
    return max(int(free // float(kv_cache_bytes(model, precision, context))), 0)


@dataclass(frozen=True)
class HybridStudy:
    """The study's rows: per model (as published, and :func:`all_full_attention`) and device, ``kv_mb``
    (cache and states per request at the context, MB), ``state_mb`` (the constant states alone),
    ``fit`` (:func:`requests_that_fit`), ``ep``, ``afd`` (best tokens/s per GPU), ``ratio``, ``p_afd``
    and the ratio's 10th and 90th percentile ``ratio_lo``, ``ratio_hi`` (NaN where not computed) and
    ``decisive``; ``base`` the published model's slug, ``reading``
    "hybrid" or "all full"."""

    rows: tuple
    context: float

    def pairs(self) -> list[dict]:
        """Per published model and device: the two readings side by side, and ``shift`` = hybrid
        ratio / all-full ratio."""
        by = {(r["base"], r["reading"], r["hardware"]): r for r in self.rows}
        out = []
        for r in self.rows:
            if r["reading"] != "hybrid":
                continue
            f = by[(r["base"], "all full", r["hardware"])]
            out.append({"model": r["base"], "model_name": r["model_name"], "hardware": r["hardware"],
                        "hardware_name": r["hardware_name"], "kv_mb": r["kv_mb"], "kv_mb_full": f["kv_mb"],
                        "fit": r["fit"], "fit_full": f["fit"], "ratio": r["ratio"], "ratio_full": f["ratio"],
                        "shift": r["ratio"] / f["ratio"], "p_afd": r["p_afd"], "p_afd_full": f["p_afd"],
                        "band": (r["ratio_lo"] / r["ratio"], r["ratio_hi"] / r["ratio"]),
                        "ep_gain": r["ep"] / f["ep"], "afd_gain": r["afd"] / f["afd"], "step_mb": r["step_mb"],
                        "step_mb_full": f["step_mb"]})
        return out

    def table(self, hardware: str) -> list[dict]:
        """Per published model on one device (a slug), each column "hybrid / all full": the book's table."""
        by = {(r["base"], r["reading"], r["hardware"]): r for r in self.rows}
        bases = list(dict.fromkeys(r["base"] for r in self.rows))
        if (bases[0], "hybrid", hardware) not in by:
            raise AfdError(f"device '{hardware}' is not in the study")

        def both(base, key, fmt):
            return " / ".join(fmt.format(by[(base, reading, hardware)][key]) for reading in ("hybrid", "all full"))
        return [{"model": by[(b, "hybrid", hardware)]["model_name"], "token mixers": by[(b, "hybrid", hardware)]["layers"],
                 "parameters, B": both(b, "params_b", "{:.0f}"), "cache + state, MB": both(b, "kv_mb", "{:,.0f}"),
                 "mixers' bytes per step, MB": both(b, "step_mb", "{:,.0f}"), "requests that fit": both(b, "fit", "{:,}"),
                 "EP tokens/s/GPU": both(b, "ep", "{:,.0f}"), "AFD tokens/s/GPU": both(b, "afd", "{:,.0f}"),
                 "AFD / EP": both(b, "ratio", "{:.2f}")} for b in bases]

    def summary(self) -> list[dict]:
        """Per published model over the devices: the cache's factor (all-full / hybrid), the median
        factor on requests that fit, the geometric mean and range of ``shift``, and on how many devices
        the hybrid moves the answer toward EP (shift < 1) or to the other design (the ratio crosses 1)."""
        out = []
        for base in dict.fromkeys(p["model"] for p in self.pairs()):
            ps = [p for p in self.pairs() if p["model"] == base]
            shift = np.array([p["shift"] for p in ps], dtype=float)
            out.append({"model": base, "model_name": ps[0]["model_name"], "devices": len(ps),
                        "kv_factor": ps[0]["kv_mb_full"] / ps[0]["kv_mb"],
                        "fit_factor": float(np.median([p["fit"] / max(p["fit_full"], 1) for p in ps])),
                        "shift": _geomean(shift), "shift_min": float(shift.min()),
                        "shift_max": float(shift.max()), "toward_ep": int((shift < 1).sum()),
                        "flips": int(sum((p["ratio"] > 1) != (p["ratio_full"] > 1) for p in ps)),
                        "ep_gain": _geomean([p["ep_gain"] for p in ps]), "afd_gain": _geomean([p["afd_gain"] for p in ps]),
                        "step_factor": ps[0]["step_mb_full"] / ps[0]["step_mb"]})
        return out


def hybrid_study(models: list[Model], hardware: list[Hardware], budget: Budget, context: float,
                 precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
                 verdict_hardware: tuple[str, ...] = ()) -> HybridStudy:
    """Both readings of every model on every device at ``context`` (module docstring); P(AFD better)
    (:func:`afdlib.decision.verdict.verdict`, about half a second a pair) on the devices whose slugs
    ``verdict_hardware`` names, else NaN."""
    unknown = sorted(set(verdict_hardware) - {h.slug for h in hardware})
    if unknown:
        raise AfdError(f"P(AFD better) asked for on {', '.join(unknown)}, not among the study's devices "
                       f"({', '.join(h.slug for h in hardware)})")
    full = [all_full_attention(m) for m in models]
    table = advice_table(models + full, hardware, budget, context, precision, assumptions, uncertain=False)
    cell = {(r["model"], r["hardware"]): r for r in table}
    rows = []
    for reading, group in (("hybrid", models), ("all full", full)):
        for base, m in zip(models, group):
            kv = float(kv_cache_bytes(m, precision, context))
            for h in hardware:
                r = cell[(m.slug, h.slug)]
                if not np.isfinite(r["ratio"]):
                    raise AfdError(f"{m.name} on {h.name}: {r['note']}")
                v = (verdict(m, h, budget, context, precision, assumptions, tornado=False)
                     if h.slug in verdict_hardware else None)
                p, (lo, hi) = (np.nan, (np.nan, np.nan)) if v is None else (v.p_afd, v.ratio_interval)
                rows.append({"base": base.slug, "reading": reading, "model": m.slug, "model_name": m.name,
                             "hardware": h.slug, "hardware_name": h.name, "kv_mb": kv / 1e6,
                             "state_mb": state_bytes_per_request(m) / 1e6, "layers": layer_counts(m),
                             "step_mb": mixer_bytes_per_step(m, context, precision) / 1e6,
                             "params_b": parameter_counts(m)[0] / 1e9,
                             "fit": requests_that_fit(m, h, context, precision, assumptions),
                             "ep": r["ep"], "afd": r["afd"], "ratio": r["ratio"], "p_afd": p,
                             "ratio_lo": lo, "ratio_hi": hi,
                             "decisive": bool(np.isfinite(p) and (p <= DECIDED or p >= 1 - DECIDED))})
    return HybridStudy(tuple(rows), context)


def _geomean(x) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(x, dtype=float)))))
