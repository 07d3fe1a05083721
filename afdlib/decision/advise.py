"""AFD or EP? The best deployment of each for one model on given hardware, and the computed reasons.

:func:`advise` searches both designs (:mod:`afdlib.decode.search`), compares their output tokens per
second per GPU (or per dollar, when prices per GPU-hour are given), gives the probability that AFD
is the better one under the model's uncertain assumptions (:mod:`afdlib.decision.uncertainty`; when
that decides: :mod:`afdlib.decision.decision`; over SLOs: :mod:`afdlib.decision.slo_axis`) and explains
the answer with numbers: each design's best configuration and binding limits, the AFD FFN side's
regime and HFU ceiling, each design's imbalance penalty, and what would flip the answer (each
design's hidden share on one footing, :mod:`afdlib.decision.overlap_whatif`; the scale-out bandwidth).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from afdlib.decode.deployment import decode_step
from afdlib.decision.overlap_whatif import overlap_what_ifs, what_if_reasons
from afdlib.decode.step import Assumptions, bound_names
from afdlib.errors import AfdError
from afdlib.analysis.hfu import dead_zone_floor, hfu_sweep
from afdlib.analysis.intensity import regime
from afdlib.decode.bounds import search_reasons
from afdlib.decode.search import AFD_NODES, EP_NODE_MULTIPLES, compare
from afdlib.decision.stacked import device_groups, searched, stacked
from afdlib.decision.threshold import FLIP_FACTORS, break_even_scale_out
from afdlib.decision.decision import costs, decision, tornado_reason, uncertainty_reason
from afdlib.decision.slo_axis import axis_json, axis_reason, holds_words
from afdlib.decision.explain import explained
from afdlib.decision.uncertainty import Verdict
from afdlib.decision.verdict import verdict
from afdlib.decode.validation import case_labels, form_label, validated_by, validated_forms
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

@dataclass(frozen=True)
class Advice:
    """``recommendation``: by cost where prices are given, else the design more likely to give more
    tokens/s per GPU (``verdict``); ``ratio``: AFD / EP at the model's defaults (None: EP infeasible);
    ``decisive``: the verdict is decided (P(AFD better) <= 0.1 or >= 0.9) under both the free search
    and the one held to the forms published deployments validate, for the same design, and neither
    design's best sits on a search bound (:func:`decision`); always where one design has no feasible
    deployment. ``held``: the validated-forms verdict where the free one is decided (else not computed);
    ``decision``: why the answer is or is not decided, in words."""

    recommendation: str
    ratio: float                # AFD / EP output tokens per second per GPU
    decisive: bool
    ep: dict
    afd: dict
    reasons: list
    cost: dict | None = None
    overlap_what_ifs: dict | None = None   # overlap_whatif.overlap_what_ifs (with the reasons, both feasible)
    verdict: Verdict | None = None         # None where one design has no feasible deployment
    held: Verdict | None = None            # the validated-forms search's verdict, where it was needed
    decision: str = ""
    slo_axis: list | None = None           # the verdict over SLOs (afdlib.decision.slo_axis), with the reasons

    @property
    def p_afd(self) -> float | None:
        """P(AFD better): the verdict's, 1 / 0 where only AFD / only EP is feasible, None where it was
        not computed."""
        if self.verdict is not None:
            return self.verdict.p_afd
        if self.ratio is None or self.ratio <= 0:
            return 1.0 if self.ratio is None else 0.0
        return None

    @property
    def on_bound(self) -> list[str]:
        """The search bounds either design's best sits on ("AFD: N_F = 128 nodes (the search's hard
        cap)"): where any, that design may do better than found (empty: no bound binds)."""
        return [f"{name}: {w}" for name, doc in (("EP", self.ep), ("AFD", self.afd)) for w in doc.get("on_bound", [])]

    def words(self) -> str:
        """The one-line verdict, e.g. "EP, P(AFD better) = 0.07" (by cost where prices decide)."""
        if self.cost and self.cost.get("ratio") is not None:
            return f"{self.recommendation} by cost per token"
        if self.verdict is not None:
            p = f"P(AFD better) = {self.verdict.p_afd:.2f}"
            return f"{self.recommendation}, {p}" if self.decisive else f"{self.recommendation} (undecided), {p}"
        return self.recommendation + ("" if self.p_afd is None else f", P(AFD better) = {self.p_afd:.2f}")

    def to_json(self) -> dict:
        v = self.verdict
        return {"recommendation": self.recommendation, "ratio": self.ratio, "decisive": self.decisive,
                "p_afd": self.p_afd, "ratio_interval": list(v.ratio_interval) if v else None,
                "verdict": self.words(), **({"uncertainty": v.to_json()} if v else {}),
                "decision": self.decision, **({"validated_forms_verdict": self.held.to_json()} if self.held else {}),
                **({"slo_axis": axis_json(self.slo_axis),
                    "holds": holds_words(self.slo_axis, self.recommendation, self.decisive)} if self.slo_axis else {}),
                "on_bound": self.on_bound,
                "ep": self.ep, "afd": self.afd,
                "reasons": self.reasons, **({"cost": self.cost} if self.cost else {}),
                **({"overlap_what_ifs": self.overlap_what_ifs} if self.overlap_what_ifs else {})}


def _f(x) -> float:
    return float(np.asarray(x).reshape(-1)[0])


def _us(x) -> float:
    return round(_f(x) * 1e6, 1)


def advise(model: Model, hardware: Hardware, budget: Budget, context: float, precision: Precision = Precision(),
           assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
           prices: dict[str, float] | None = None, explain: bool = True, validated_only: bool = False) -> Advice:
    """The recommendation for one model on ``hardware`` (AFD's FFN pool; ``attn_hardware`` its
    attention pool, default the same). ``prices``: USD per GPU-hour by hardware slug.
    ``validated_only``: both searches held to the forms published deployments validate (a what-if)."""
    if model.attention is None:
        raise AfdError(f"model '{model.slug}' has no attention description; add an attention: block")
    ep, afd = compare(model, hardware, budget, context, precision, assumptions, attn_hardware,
                      validated_only=validated_only)
    return _advice_of(model, hardware, budget, context, precision, assumptions, ep, afd, attn_hardware, prices,
                      explain, validated_only)


def _advice_of(model, hardware, budget, context, precision, assumptions, ep, afd, attn_hardware=None, prices=None,
               explain: bool = False, validated_only: bool = False, uncertain: bool = True,
               given: Verdict | None = None) -> Advice:
    """The advice from the best EP and AFD deployments already found (``uncertain``: with the
    verdict's probability, ``given`` where already computed, without the tornado; without, the
    recommendation follows the ratio and nothing is decided)."""
    attn = attn_hardware or hardware
    e, a = _f(ep.tokens_per_s_per_gpu), _f(afd.tokens_per_s_per_gpu)
    if e <= 0 and a <= 0:
        raise AfdError(f"neither EP nor AFD meets the {budget.slo_s * 1e3:g} ms SLO and fits in memory for "
                       f"{model.name} on {hardware.name} at context {context:g}")
    ratio = a / e if e > 0 else None   # None: EP has no feasible deployment
    ep_doc = _ep_doc(model, hardware, budget, context, precision, assumptions, ep) if e > 0 else {"feasible": False}
    afd_doc = (_afd_doc(model, attn, hardware, budget, context, precision, assumptions, afd) if a > 0
               else {"feasible": False})
    cost = None
    if prices:
        cost = costs(prices, hardware, attn, ep_doc, afd_doc)
    by_cost = cost is not None and cost.get("ratio") is not None
    axis = None
    if given is None and uncertain and e > 0 and a > 0 and explain:   # the asked SLO's verdict is one of the axis'
        axis, rows, even = explained(model, hardware, budget, context, precision, assumptions, attn_hardware,
                                     validated_only, asked=((e, a), (ep.deployment, afd.deployment)))
        asked = next(r for r in axis if r["asked"])
        v = replace(asked["verdict"], tornado=tuple(sorted(rows + (asked["jitter"],), key=lambda x: -x["width"])))
    else:
        even = None
        v = given if given is not None or not (uncertain and e > 0 and a > 0) else verdict(
            model, hardware, budget, context, precision, assumptions, attn_hardware, validated_only, tornado=False,
            bests=(ep.deployment, afd.deployment))
    if ratio is None or a <= 0:
        rec = "AFD" if ratio is None else "EP"
    elif by_cost:
        rec = "AFD" if cost["ratio"] > 1 else "EP"
    else:
        rec = v.recommendation if v is not None else ("AFD" if ratio > 1 else "EP")
    what_ifs = (overlap_what_ifs(model, hardware, budget, context, precision, assumptions, e, a, attn_hardware,
                                 validated_only=validated_only) if explain and e > 0 and a > 0 else None)
    reasons = _reasons(model, hardware, attn, budget, context, precision, assumptions, ep_doc, afd_doc, ratio,
                       cost, validated_only, what_ifs, v, even) if explain else []
    bounds = [w for doc in (ep_doc, afd_doc) for w in doc.get("on_bound", [])]
    held = None
    if v is not None and v.decided and not bounds and not validated_only:
        try:   # the decision holds only if the search held to validated forms gives it too
            held = verdict(model, hardware, budget, context, precision, assumptions, attn_hardware, True, tornado=False)
        except AfdError as e:
            held = e
    decisive, why = decision(v, held, bounds, validated_only, ratio is None or a <= 0)
    if explain:
        reasons.append(why)
    if axis:
        reasons.append(axis_reason(axis, rec, decisive))
    return Advice(rec, ratio, decisive, ep_doc, afd_doc, reasons, cost, what_ifs, v,
                  held if isinstance(held, Verdict) else None, why, axis)



def _ep_doc(model, hw, budget, context, precision, a, best) -> dict:
    d = best.deployment
    st = decode_step(model, d, context, budget, precision, a)
    flat = decode_step(model, d, context, budget, precision, replace(a, sigma=1.0))
    return {"feasible": True, "tokens_per_s_per_gpu": _f(st.tokens_per_s_per_gpu), "ep_size": int(d.ep_size),
            "redundant": int(d.redundant), "batch_per_gpu": int(d.requests), "gpus": int(d.gpus),
            "kernels": d.kernels, "micro_batches": d.micro_batches, "sbo": bool(d.sbo),
            "tpot_ms": _f(st.tpot_s) * 1e3, "attention_us": _us(st.t_attn), "ffn_us": _us(st.t_ffn),
            "comm_us": _us(st.t_comm),
            "bound": {"attention": str(bound_names(st.bound_attn)), "ffn": str(bound_names(st.bound_ffn)),
                      "comm": str(bound_names(st.bound_comm))},
            "sigma": _f(st.sigma), "imbalance_alpha": _f(st.tokens_per_s_per_gpu / flat.tokens_per_s_per_gpu),
            "hidden_share": _f(st.hidden_share), **_validation_doc("ep", d.micro_batches, d.kernels, d.sbo),
            **_search_doc(best)}


def _validation_doc(design: str, micro_batches: int, kernels: str | None = None, sbo: bool = False,
                    domains: int = 1) -> dict:
    """The published deployments that validate the form (``validated_by``), or why none does."""
    cases = validated_by(design, micro_batches, kernels, sbo=sbo, domains=domains)
    doc: dict[str, Any] = {"form": form_label(design, micro_batches, kernels, sbo, domains), "validated_by": list(cases)}
    if not cases:
        others = [form_label(*f) for f in validated_forms() if f[0] == design]
        doc["not_validated"] = (f"no published deployment in data/deployments.yaml states this form; validated "
                                f"{design.upper()} forms: " + ("; ".join(others) if others else "none"))
    return doc


def _afd_doc(model, attn, ffn, budget, context, precision, a, best) -> dict:
    d = best.deployment
    st = decode_step(model, d, context, budget, precision, a)
    flat = decode_step(model, d, context, budget, precision, replace(a, sigma=1.0))
    stages = {"attention": _f(st.t_attn), "ffn": _f(st.t_ffn), "comm": _f(st.t_comm)}
    return {"feasible": True, "tokens_per_s_per_gpu": _f(st.tokens_per_s_per_gpu), "n_attn": int(d.attention.nodes),
            "n_ffn": int(d.ffn.nodes), "micro_batches": d.micro_batches, "domains": int(d.domains),
            "batch_per_gpu": int(d.requests), "gpus": int(d.gpus),
            "tpot_ms": _f(st.tpot_s) * 1e3, "attention_us": _us(st.t_attn), "ffn_us": _us(st.t_ffn),
            "comm_us": _us(st.t_comm), "pace": max(stages, key=stages.get),
            "bound": {"attention": str(bound_names(st.bound_attn)), "ffn": str(bound_names(st.bound_ffn)),
                      "comm": str(bound_names(st.bound_comm))},
            "bubble_attn": _f(st.afd.bubble_attn), "bubble_ffn": _f(st.afd.bubble_ffn),
            "hidden_share": _f(st.hidden_share), "sigma": _f(st.sigma),
            "imbalance_alpha": _f(st.tokens_per_s_per_gpu / flat.tokens_per_s_per_gpu),
            **_validation_doc("afd", d.micro_batches, domains=d.domains), **_search_doc(best)}


def _search_doc(best) -> dict:
    """How far the search went on each axis (``searched``: AFD nodes per pool, EP GPUs and redundant
    experts) and the bounds its best still sits on, in words (``on_bound``; empty: none binds)."""
    return {"searched": {k: int(_f(v)) for k, v in best.searched.items()}, "on_bound": best.bound_words()}


def _reasons(model, ffn, attn, budget, context, precision, a, ep, afd, ratio, cost, validated_only=False,
             what_ifs=None, v: Verdict | None = None, even: tuple | None = None) -> list[str]:
    r = []
    if ep.get("feasible"):
        r.append(f"EP: best is EP{ep['ep_size']} with {ep['redundant']} redundant experts at {ep['batch_per_gpu']} "
                 f"requests per GPU: {ep['tokens_per_s_per_gpu']:,.0f} tokens/s per GPU (TPOT {ep['tpot_ms']:.1f} ms); "
                 f"per MoE layer attention {ep['attention_us']:.0f} us ({ep['bound']['attention']}), experts "
                 f"{ep['ffn_us']:.0f} us ({ep['bound']['ffn']}), dispatch+combine {ep['comm_us']:.0f} us "
                 f"({ep['bound']['comm']}, {ep['kernels']} kernels), "
                 + (f"two micro-batches hiding {ep['hidden_share']:.0%} of the shorter of compute and all-to-all"
                    + (" (override)" if a.ep_overlap is not None else " (by the schedule)")
                    if ep["micro_batches"] > 1 else
                    f"one batch with single-batch overlap hiding {ep['hidden_share']:.0%} of the shorter of compute "
                    "and all-to-all (dispatch beside the shared experts, combine beside the down GEMM)"
                    if ep.get("sbo") else "one batch: nothing of the all-to-all hidden"))
        r.append(_validation_reason(ep))
        r.extend(search_reasons("EP", ep, {"ep_size": ffn.gpus_per_node * EP_NODE_MULTIPLES[-1]}))
    else:
        r.append(f"EP: no EP size meets the {budget.slo_s * 1e3:g} ms SLO and fits in memory")
    if afd.get("feasible"):
        r.append(f"AFD: best is {afd['n_attn']}A{afd['n_ffn']}F ({afd['gpus']} GPUs) with "
                 + (f"the attention pool in {afd['domains']} data-parallel domains of {afd['micro_batches']} "
                    if afd.get("domains", 1) > 1 else f"{afd['micro_batches']} ")
                 + f"micro-batches at {afd['batch_per_gpu']} requests per attention GPU: "
                 f"{afd['tokens_per_s_per_gpu']:,.0f} tokens/s per GPU (TPOT {afd['tpot_ms']:.1f} ms); per micro-batch "
                 f"t_a {afd['attention_us']:.0f} us ({afd['bound']['attention']}), t_f {afd['ffn_us']:.0f} us "
                 f"({afd['bound']['ffn']}), t_c {afd['comm_us']:.0f} us ({afd['bound']['comm']}); the {afd['pace']} "
                 f"stage sets the pace (FFN pool idle {afd['bubble_ffn']:.0%}, attention pool idle "
                 f"{afd['bubble_attn']:.0%})")
        r.append(_validation_reason(afd))
        r.extend(search_reasons("AFD", afd, {"n_attn": AFD_NODES[-1], "n_ffn": AFD_NODES[-1]}))
        nf = afd["n_ffn"]
        reg = str(regime(nf, model.experts_per_token, model.routed_experts, ffn.bandwidth_ratio, ffn.gpus_per_node))
        res, _ = hfu_sweep(model, ffn, np.array([nf]))
        floor = float(dead_zone_floor(ffn.scale_out_bytes_per_s, model.moe_intermediate_size, ffn.flops))
        r.append(f"AFD FFN side at N_F = {nf}: regime {reg}; the paper's HFU ceiling there is "
                 f"{min(1.0, float(res['comm_ceiling'][0])):.1%}, and from N_F >= K = {model.experts_per_token} "
                 f"the dead-zone floor is {floor:.1%}")
    else:
        r.append(f"AFD: no N_A, N_F <= {AFD_NODES[-1]} meets the {budget.slo_s * 1e3:g} ms SLO and fits in memory")
    if ep.get("feasible") and afd.get("feasible"):
        r.append(f"imbalance: EP sigma {ep['sigma']:.3f} keeps {ep['imbalance_alpha']:.1%} of its balanced "
                 f"throughput, AFD sigma {afd['sigma']:.3f} keeps {afd['imbalance_alpha']:.1%}")
        r.append(f"AFD gives {ratio:.2f}x EP's tokens/s per GPU ({'more' if ratio > 1 else 'less'}) at the model's "
                 f"defaults; {uncertainty_reason(v)}")
        r.append(tornado_reason(v))
        r.extend(what_if_reasons(what_ifs, ep, afd, a))
        bw, _ = even or break_even_scale_out(model, ffn, budget, context, precision, a,
                                             None if attn is ffn else attn, validated_only=validated_only)
        now = ffn.scale_out_bytes_per_s
        what = "fabric (scale-out, scale-up in proportion)" if ffn.superpod else "scale-out"
        if bw is None:
            r.append(f"no {what} bandwidth between {now * FLIP_FACTORS[0] / 1e9:.1f} and "
                     f"{now * FLIP_FACTORS[-1] / 1e9:,.0f} GB/s per GPU flips the answer")
        else:
            r.append(f"AFD and EP break even at a {what} bandwidth of {bw / 1e9:.0f} GB/s per GPU "
                     f"(now {now / 1e9:.0f} GB/s, sustained)")
    if cost and cost.get("ratio") is not None:
        r.append(f"cost: EP {cost['ep_usd_per_million_tokens']:.3f} USD and AFD "
                 f"{cost['afd_usd_per_million_tokens']:.3f} USD per million output tokens")
    return r


def _validation_reason(doc: dict) -> str:
    """One line: the published deployments behind the best form, or that none is."""
    if doc["validated_by"]:
        return f"{doc['form']}: validated by {'; '.join(case_labels(doc['validated_by']))} (data/deployments.yaml)"
    return f"{doc['form']}: not validated: {doc['not_validated']}"


MAX_PRICE = 1e6
"""Highest price per GPU-hour taken (USD): far above any rental, low enough that costs stay finite."""
MIN_PRICE = 1e-3
"""Lowest price per GPU-hour taken (USD), a tenth of a cent: below it the costs print as 0.000 while the
decision by cost still compares them."""


def parse_prices(items: list[str] | None) -> dict[str, float] | None:
    """``['h800=2.0', 'h20=1.1']`` -> {slug: USD per GPU-hour}."""
    if not items:
        return None
    out = {}
    for item in items:
        slug, sep, value = item.partition("=")
        try:
            price = float(value)
        except ValueError:
            price = float("nan")
        if not sep or not slug.strip() or not np.isfinite(price) or not MIN_PRICE <= price <= MAX_PRICE:
            raise AfdError(f"--price-per-gpu-hour expects SLUG=USD with a price in [{MIN_PRICE:g}, {MAX_PRICE:g}], "
                           f"got '{item}'")
        key = slug.strip().lower()
        if key in out:
            raise AfdError(f"--price-per-gpu-hour gives {key} twice ({out[key]:g} and {price:g}); give each once")
        out[key] = price
    return out




def advices(model: Model, hardware: list[Hardware], budget: Budget, context: float,
            precision: Precision = Precision(), assumptions: Assumptions = Assumptions(), prices: dict | None = None,
            validated_only: bool = False, uncertain: bool = True) -> list[Advice | AfdError]:
    """:func:`advise` without the reasons (``explain`` False) on each of ``hardware``, in order, the
    devices of one structure searched in one vectorised call, their defaults and their verdicts'
    quadratures as blocks of it (:func:`afdlib.decision.stacked.searched`; without ``uncertain``, the
    defaults alone, :func:`afdlib.decode.search.compare` over a cell axis): the same advice as pair by pair. A pair that cannot be answered is its :class:`AfdError`; where a group's
    call fails, its pairs are answered one by one (so each error names its own device)."""
    out: list = [None] * len(hardware)
    for idx in device_groups(hardware):
        devices = [hardware[i] for i in idx]
        try:
            if model.attention is None:
                raise AfdError(f"model '{model.slug}' has no attention description; add an attention: block")
            if uncertain:     # the defaults and the verdicts' quadratures as blocks of one call
                found = searched(model, devices, budget, context, precision, assumptions, validated_only)
            else:
                hw = devices[0] if len(devices) == 1 else stacked(devices)
                ep, afd = compare(model, hw, budget, context, precision, assumptions, None,
                                  cell_shape=() if len(devices) == 1 else (len(devices),), validated_only=validated_only)
                found = [(ep, afd, None)] if len(devices) == 1 else [
                    (*(b.at(c).on(hardware[i]) for b in (ep, afd)), None) for c, i in enumerate(idx)]
        except AfdError as e:
            if len(devices) == 1:
                out[idx[0]] = e
            else:
                for i in idx:
                    out[i] = advices(model, [hardware[i]], budget, context, precision, assumptions, prices,
                                     validated_only, uncertain)[0]
            continue
        for c, i in enumerate(idx):
            ep_c, afd_c, v = found[c]
            try:
                out[i] = _advice_of(model, hardware[i], budget, context, precision, assumptions, ep_c, afd_c, None,
                                    prices, validated_only=validated_only, uncertain=uncertain, given=v)
            except AfdError as e:
                out[i] = e
    return out


def advice_table(models: list[Model], hardware: list[Hardware], budget: Budget, context: float,
                 precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
                 validated_only: bool = False, uncertain: bool = True) -> list[dict]:
    """Recommendation and ratio for every (model, device) pair (no reasons: the fast path), with
    each design's best form and whether a published deployment validates it.

    The best EP and AFD deployments of one model are searched for all devices of the same
    structure in one vectorised call (:func:`advices`); the results are those of :func:`advise` pair
    by pair, with P(AFD better) and the ratio's 10th-90th
    percentile (``p_afd``, ``ratio_lo``, ``ratio_hi``; about a quarter of a second per pair: ``uncertain``
    False leaves them out, NaN, and decides nothing); ``on_bound``: the search bounds either best sits
    on (:attr:`Advice.on_bound`, joined; empty where none binds)."""
    found = {j: advices(m, hardware, budget, context, precision, assumptions, validated_only=validated_only,
                        uncertain=uncertain) for j, m in enumerate(models)}
    rows = []
    for j, m in enumerate(models):
        for i, h in enumerate(hardware):
            adv = found[j][i]
            if isinstance(adv, AfdError):
                rows.append({"model": m.slug, "hardware": h.slug, "recommendation": "-", "ratio": np.nan,
                             "decisive": False, "p_afd": np.nan, "ratio_lo": np.nan, "ratio_hi": np.nan,
                             "ep": np.nan, "afd": np.nan, "on_bound": "", "note": str(adv)})
                continue
            lo, hi = adv.verdict.ratio_interval if adv.verdict is not None else (np.nan, np.nan)
            rows.append({"model": m.slug, "hardware": h.slug, "model_name": m.name, "hardware_name": h.name,
                         "recommendation": adv.recommendation,
                         "ratio": adv.ratio, "decisive": adv.decisive,
                         "p_afd": np.nan if adv.p_afd is None else adv.p_afd, "ratio_lo": lo, "ratio_hi": hi,
                         "ep": adv.ep.get("tokens_per_s_per_gpu", 0.0), "afd": adv.afd.get("tokens_per_s_per_gpu", 0.0),
                         "ep_config": (f"EP{adv.ep['ep_size']}" if adv.ep.get("feasible") else "-"),
                         "afd_config": (f"{adv.afd['n_attn']}A{adv.afd['n_ffn']}F" if adv.afd.get("feasible") else "-"),
                         **{f"{k}_{field}": (adv_doc.get(field, "-") if field == "form"
                                             else bool(adv_doc.get("validated_by")))
                            for k, adv_doc in (("ep", adv.ep), ("afd", adv.afd)) for field in ("form", "validated")},
                         "on_bound": "; ".join(adv.on_bound), "note": ""})
    return rows
