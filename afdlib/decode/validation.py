"""Published deployments against the decode model: the cases of ``data/deployments.yaml``.

Each case is predicted with one set of defaults (:class:`afdlib.decode.step.Assumptions`) and the
facts recorded for it (sizes, context, batch or SLO, MTP, data types, kernels), at the batch its
source gives where it gives one (``batch_from``: :data:`BATCH_FROM`); a case with an SLO is also
predicted at the batch the SLO and memory choose, a second column. What each design hides of its
communication comes from the schedule of its micro-batches (``hidden_share``). Every case, of
either design, also gets a what-if band between its design's two overlap overrides
(:data:`OVERLAP_OVERRIDE`): at 0, nothing of the communication hidden (EP: the all-to-all after the
compute; AFD: every transfer between the pools' compute), ``band_low``; at 1, all of it (EP: the
longer of compute and all-to-all; AFD: the pipeline's steady state), ``band_high``. The schedule's
prediction lies inside it for every case (tested).

The deployment forms the searches pick from (EP: micro-batches x DeepEP kernels; AFD:
micro-batches) are validated by the cases whose sources state that form
(:func:`validated_forms`). Each design's errors are the spread `afd advise` gives its predictions
(:mod:`afdlib.decision.uncertainty`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from afdlib.inputs.catalog import data_dir, load_hardware, load_model, per_die
from afdlib.decode.deployment import AFDDeployment, Deployment, EPDeployment, decode_step
from afdlib.decode.result import Step
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.errors import AfdError
from afdlib.inputs.files import read_yaml
from afdlib.inputs.specs import Budget, Efficiency, Precision
from afdlib.routing.provenance import RoutingData, ep_longrun_sigma, routing_data

_REQUIRED = {"ep": ("model", "hardware", "ep_size", "context", "l_accept", "published", "sources", "batch_from",
                    "micro_batches", "kernels"),
             "afd": ("model", "attn_hardware", "ffn_hardware", "n_attn", "n_ffn", "context", "l_accept",
                     "published", "sources", "batch_from", "micro_batches")}
BATCH_FROM = ("published", "derived", "assumed", "SLO and memory")
"""Where a case's batch comes from: its source states it; arithmetic on other published figures;
our assumption (the reason under ``assumptions``); none: the largest meeting the SLO and memory."""
FORM_FIELDS = {"ep": ("micro_batches", "kernels", "sbo"), "afd": ("micro_batches", "domains")}
"""What makes a deployment's form, per design: the choices the searches range over besides sizes and batch
(EP's ``sbo``, single-batch overlap, and AFD's ``domains``, data-parallel attention domains, are part of a
case's form where the case sets them: :func:`form_fields`)."""
OVERLAP_OVERRIDE = {"ep": "ep_overlap", "afd": "afd_overlap"}
"""Each design's what-if override of the share of its communication hidden
(:class:`afdlib.decode.step.Assumptions`): the one the validation band and the overlap
variations set, at the same values for both designs."""


@dataclass(frozen=True)
class Case:
    """One published deployment (see the header of ``data/deployments.yaml``)."""

    slug: str
    name: str
    label: str
    design: str
    facts: dict
    published: float
    sources: dict
    assumptions: dict


def load_deployments(path: str | Path | None = None) -> dict[str, Case]:
    """The cases of the deployments file, validated (every case has a design, facts and sources)."""
    path = Path(path) if path else data_dir() / "deployments.yaml"
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("deployments"), dict):
        raise AfdError(f"{path}: expected a top-level mapping 'deployments:'")
    return cases_of(doc["deployments"], path)


def cases_of(entries: dict, path: Path) -> dict[str, Case]:
    """The cases of ``entries`` (slug -> the fields of one deployment, as in ``data/deployments.yaml``),
    validated; ``path`` names the file in errors."""
    cases = {}
    for slug, entry in entries.items():
        where = f"{path}: deployment '{slug}'"
        if not isinstance(entry, dict) or entry.get("design") not in _REQUIRED:
            raise AfdError(f"{where}: needs design: ep or afd")
        missing = [k for k in _REQUIRED[entry["design"]] if k not in entry]
        if missing:
            raise AfdError(f"{where}: missing {', '.join(missing)}")
        if entry.get("batch_per_gpu") is None and entry.get("slo_ms") is None:
            raise AfdError(f"{where}: needs batch_per_gpu or slo_ms")
        if not isinstance(entry["sources"], dict) or not entry["sources"]:
            raise AfdError(f"{where}: sources must name a source for each fact")
        _check_batch_and_form(entry, where)
        cases[slug] = Case(slug, str(entry.get("name", slug)), str(entry.get("label", slug)), entry["design"], entry,
                           float(entry["published"]["tokens_per_s_per_gpu"]), dict(entry["sources"]),
                           dict(entry.get("assumptions") or {}))
    return cases


def _check_batch_and_form(entry: dict, where: str) -> None:
    """The batch's origin agrees with the batch and is backed (a quote, or an assumption with its
    reason); each part of the form is quoted or assumed."""
    quotes, assumed = entry.get("quotes") or {}, entry.get("assumptions") or {}
    origin, batch = entry["batch_from"], entry.get("batch_per_gpu")
    if origin not in BATCH_FROM:
        raise AfdError(f"{where}: batch_from must be one of {', '.join(BATCH_FROM)}, got {origin!r}")
    if (batch is None) != (origin == "SLO and memory"):
        raise AfdError(f"{where}: batch_from '{origin}' " + ("needs batch_per_gpu: null and an slo_ms"
                                                             if origin == "SLO and memory" else "needs a batch_per_gpu"))
    backing = {"published": quotes, "derived": quotes, "assumed": assumed}.get(origin)
    if backing is not None and not str(backing.get("batch_per_gpu") or "").strip():
        raise AfdError(f"{where}: a batch {origin} needs the reason under "
                       + ("assumptions" if origin == "assumed" else "quotes (the source's sentence)") + ": batch_per_gpu")
    for field in form_fields(entry):
        if (field in quotes) == (field in assumed):
            raise AfdError(f"{where}: {field} must be quoted from a source or listed under assumptions (one of them)")


def form_fields(entry: dict) -> tuple[str, ...]:
    """The fields that make one case's form (:data:`FORM_FIELDS`; ``sbo`` and ``domains`` only where the case
    sets them)."""
    return tuple(f for f in FORM_FIELDS[entry["design"]] if f not in ("sbo", "domains") or entry.get(f) is not None)


def deployment_of(case: Case, efficiency: Efficiency | None = None) -> Deployment:
    """The case's deployment: its sizes, micro-batches, kernels and published batch (None: the
    largest meeting its SLO), on its hardware under ``hw_profile`` (``efficiency``: the datasheet
    profile's, if other than the default)."""
    f = case.facts

    def device(slug):   # ``dies_per_chip``: the deployment counts dies (catalog.per_die); ``gpus_per_node``:
        # the node the deployment counts in, where not the catalogue's
        hw = load_hardware(slug, profile=f.get("hw_profile", "datasheet"), efficiency=efficiency)
        hw = per_die(hw, int(f.get("dies_per_chip", 1)))
        return hw if f.get("gpus_per_node") is None else hw.with_overrides(gpus_per_node=int(f["gpus_per_node"]))
    batch = f.get("batch_per_gpu")
    if case.design == "ep":
        return EPDeployment(device(f["hardware"]), f["ep_size"], f.get("redundant_experts", 0),
                            int(f["micro_batches"]), f["kernels"], batch, bool(f.get("sbo", False)))
    return AFDDeployment.of(device(f["ffn_hardware"]), f["n_attn"], f["n_ffn"], device(f["attn_hardware"]),
                            micro_batches=int(f["micro_batches"]), requests=batch, domains=int(f.get("domains", 1)))


def _step(case: Case, assumptions: Assumptions, requests=None, efficiency: Efficiency | None = None) -> Step:
    """The case's step at ``requests`` (None: its published batch, else the largest meeting its SLO)."""
    f = case.facts
    budget = Budget(slo_s=(f.get("slo_ms") or 1e6) / 1e3, l_accept=float(f["l_accept"]),
                    t_gap_s=f.get("t_gap_ms", DECODE_T_GAP_S * 1e3) / 1e3)
    deployment = deployment_of(case, efficiency)
    if requests is not None:
        deployment = replace(deployment, requests=requests)
    return decode_step(load_model(f["model"], profile="reference"), deployment, f["context"], budget,
                       Precision(**(f.get("precision") or {})), assumptions)


def predict(case: Case, assumptions: Assumptions = Assumptions(), efficiency: Efficiency | None = None) -> Step:
    """The model's step for a case: at its batch (published, derived or assumed), or at the largest
    batch meeting its SLO where it has none."""
    return _step(case, assumptions, None, efficiency)


def predict_at_slo(case: Case, assumptions: Assumptions = Assumptions()) -> Step | None:
    """The case's step at the largest batch meeting its SLO and fitting in memory, whatever batch
    its source gives; None for a case without an SLO."""
    if case.facts.get("slo_ms") is None:
        return None
    return predict(with_facts(case, batch_per_gpu=None), assumptions)


def form_of(case: Case) -> tuple:
    """The case's form: ("ep", micro-batches, kernels, single-batch overlap, 1) or ("afd", micro-batches,
    None, False, attention domains)."""
    f = case.facts
    ep = case.design == "ep"
    return (case.design, int(f["micro_batches"]), f["kernels"] if ep else None, bool(ep and f.get("sbo", False)),
            1 if ep else int(f.get("domains", 1)))


def form_stated(case: Case) -> bool:
    """Whether the case's source states its whole form (every part quoted, none assumed)."""
    quotes = case.facts.get("quotes") or {}
    return all(field in quotes for field in form_fields(case.facts))


def validated_forms(cases: dict[str, Case] | None = None) -> dict[tuple, tuple[str, ...]]:
    """Each form some case's source states, and those cases (slugs, in file order)."""
    out: dict[tuple, tuple[str, ...]] = {}
    for slug, case in (cases or _default_cases()).items():
        if form_stated(case):
            out[form_of(case)] = out.get(form_of(case), ()) + (slug,)
    return out


def validated_by(design: str, micro_batches: int, kernels: str | None = None,
                 cases: dict[str, Case] | None = None, sbo: bool = False, domains: int = 1) -> tuple[str, ...]:
    """The cases that validate one form (empty: none does)."""
    key = (design, int(micro_batches), kernels if design == "ep" else None, bool(design == "ep" and sbo),
           1 if design == "ep" else int(domains))
    return validated_forms(cases).get(key, ())


def case_labels(slugs) -> list[str]:
    """The short labels of cases of the deployments file (tables, reasons)."""
    cases = _default_cases()
    return [cases[s].label if s in cases else s for s in slugs]


def form_label(design: str, micro_batches: int, kernels: str | None = None, sbo: bool = False,
               domains: int = 1) -> str:
    """``EP, 2 micro-batches, low-latency kernels`` / ``EP, one batch with single-batch overlap,
    low-latency kernels`` / ``AFD, 3 micro-batches`` / ``AFD, 3 attention domains x 2 micro-batches``."""
    mb = "one batch" if int(micro_batches) == 1 else f"{int(micro_batches)} micro-batches"
    mb += " with single-batch overlap" if sbo else ""
    mb = f"{int(domains)} attention domains x {mb}" if int(domains) > 1 else mb
    return f"{design.upper()}, {mb}" + (f", {kernels} kernels" if design == "ep" else "")


@lru_cache(maxsize=1)
def _default_cases() -> dict[str, Case]:
    """The deployments file's cases, read once (what the searches and advise look up forms in)."""
    return load_deployments()


def source_rows(cases: dict[str, Case] | None = None) -> list[dict[str, Any]]:
    """Where each case's batch and form come from: the batch's origin and the source's words (or
    the assumption's reason), the form and whether its source states it, the cases' own order."""
    rows = []
    for case in (cases or load_deployments()).values():
        quotes = case.facts.get("quotes") or {}
        words = quotes.get("batch_per_gpu") or case.assumptions.get("batch_per_gpu") or "-"
        rows.append({"case": case.label, "batch": case.facts.get("batch_per_gpu"),
                     "batch from": case.facts["batch_from"], "the source's words, as recorded (or the assumption)": words,
                     "form": form_label(*form_of(case)), "form stated": "yes" if form_stated(case) else "assumed"})
    return rows


def with_facts(case: Case, **facts) -> Case:
    """The case with some facts replaced (``precision`` entries are merged)."""
    f = dict(case.facts)
    for k, v in facts.items():
        f[k] = {**(f.get(k) or {}), **v} if k == "precision" else v
    return replace(case, facts=f)


OVERLAP_NONE, OVERLAP_ALL = "overlap what-if: none hidden (0), both designs", "overlap what-if: all hidden (1), both designs"
"""The sensitivity table's overlap variations: each design's override (:data:`OVERLAP_OVERRIDE`)
at the same share, so that an EP case varies its all-to-all's and an AFD case its transfers'."""

SENSITIVITY = (
    (OVERLAP_NONE, "assumption", {name: 0.0 for name in OVERLAP_OVERRIDE.values()}),
    (OVERLAP_ALL, "assumption", {name: 1.0 for name in OVERLAP_OVERRIDE.values()}),
    ("matmul efficiency 0.6", "assumption", {"matmul_efficiency": 0.6}),
    ("matmul efficiency 0.9", "assumption", {"matmul_efficiency": 0.9}),
    ("no kernel overhead", "assumption", {"kernel_overhead_s": 0.0}),
    ("kernel overhead 6 us", "assumption", {"kernel_overhead_s": 6e-6}),
    ("AFD: one copy per expert over scale-out", "assumption", {"afd_two_stage": False}),
    ("kernels: datasheet profile (0.75, HBM 0.8, 3 us)", "assumption", {"kernel_profile": "datasheet"}),
    ("networks at 100% of nominal", "efficiency", {"scale_up": 1.0, "scale_out": 1.0}),
    ("t_g 0 ms", "fact", {"t_gap_ms": 0.0}),
    ("t_g 15 ms (the paper's)", "fact", {"t_gap_ms": 15.0}),
    ("KV cache FP8", "fact", {"precision": {"kv_cache": "fp8"}}),
    ("KV cache BF16", "fact", {"precision": {"kv_cache": "bf16"}}),
)
"""One-at-a-time variations of the named assumptions and uncertain facts: (label, kind, values); with
:func:`routing_sigma`'s variation, :func:`sensitivity_variations`."""

ROUTING_EP, ROUTING_REDUNDANT = 144, 32
"""DeepSeek's decode deployment: EP144 with 32 redundant experts placed by EPLB."""


@lru_cache(maxsize=1)
def routing_sigma() -> tuple[float, RoutingData]:
    """The skew of real routing after EPLB: the routing chapter's long-run sigma at EP144+32 (its table,
    :func:`afdlib.routing.provenance.ep_longrun_sigma`) of the same data, measured or the shipped fits,
    and the data (which says which)."""
    data = routing_data()
    return ep_longrun_sigma(data, ROUTING_EP, ROUTING_REDUNDANT), data


def sensitivity_variations() -> tuple:
    """:data:`SENSITIVITY` and the routing chapter's sigma at DeepSeek's EP144+32 (:func:`routing_sigma`)."""
    sigma, data = routing_sigma()
    label = f"sigma {sigma:.3f} (EP{ROUTING_EP}+{ROUTING_REDUNDANT}, {'measured' if data.measured else 'fitted'} routing)"
    return (*SENSITIVITY, (label, "assumption", {"sigma": sigma}))


def sensitivity_rows(cases: dict[str, Case] | None = None, assumptions: Assumptions = Assumptions(),
                     variations=None) -> list[dict[str, Any]]:
    """Each case's error under each variation (long table: case, variation, predicted, error, the
    change against the defaults, batch, TPOT and whether the batch fits in memory)."""
    rows, variations = [], variations or sensitivity_variations()
    for slug, case in (cases or load_deployments()).items():
        base = float(predict(case, assumptions).tokens_per_s_per_gpu)
        for label, kind, values in variations:
            if kind == "assumption":
                st = predict(case, replace(assumptions, **values))
            elif kind == "efficiency":
                st = predict(case, assumptions, Efficiency(**values))
            else:
                st = predict(with_facts(case, **values), assumptions)
            pred = float(st.tokens_per_s_per_gpu)
            rows.append({"case": slug, "variation": label, "predicted": pred, "error": pred / case.published - 1,
                         "change": pred / base - 1, "batch_per_gpu": float(st.requests),
                         "tpot_ms": float(st.tpot_s) * 1e3, "fits_memory": bool(st.fits_memory)})
    return rows


def batch_curve(case: Case, requests, assumptions: Assumptions = Assumptions()) -> Step:
    """The case's step over a range of requests per GPU (its other facts unchanged)."""
    return _step(case, assumptions, np.asarray(requests, dtype=float))


def validation_rows(cases: dict[str, Case] | None = None, assumptions: Assumptions = Assumptions()
                    ) -> list[dict[str, Any]]:
    """One row per case: published and predicted tokens/s per GPU, the relative error, the batch
    and where it comes from (the source's words for it), TPOT, per-layer times (us) and their
    bounds, the share the schedule hides; the form (micro-batches, kernels, single-batch overlap) and whether the source
    states it; for a case with an SLO, the prediction at the batch the SLO and memory choose
    (``*_slo``; NaN without one); every case also the what-if band of its design's overlap override
    (:data:`OVERLAP_OVERRIDE`) at 0, none hidden (``band_low``), and 1, all hidden (``band_high``)."""
    from afdlib.decode.step import bound_names
    rows = []
    for slug, case in (cases or load_deployments()).items():
        st, at_slo = predict(case, assumptions), predict_at_slo(case, assumptions)
        slo_rate = np.nan if at_slo is None else float(at_slo.tokens_per_s_per_gpu)
        row = {"case": slug, "label": case.label, "name": case.name, "design": case.design,
               "published": case.published,
               "predicted": float(st.tokens_per_s_per_gpu), "batch_per_gpu": float(st.requests),
               "batch_from": case.facts["batch_from"],
               "batch_quote": str((case.facts.get("quotes") or {}).get("batch_per_gpu", "")),
               "predicted_slo": slo_rate, "error_slo": slo_rate / case.published - 1,
               "batch_slo": np.nan if at_slo is None else float(at_slo.requests),
               "micro_batches": int(case.facts["micro_batches"]), "kernels": case.facts.get("kernels", ""),
               "sbo": bool(case.facts.get("sbo", False)), "form": form_label(*form_of(case)),
               "form_stated": form_stated(case),
               "tpot_ms": float(st.tpot_s) * 1e3, "t_attn_us": float(st.t_attn) * 1e6,
               "t_ffn_us": float(st.t_ffn) * 1e6, "t_comm_us": float(st.t_comm) * 1e6,
               "bound_attn": str(bound_names(st.bound_attn)), "bound_ffn": str(bound_names(st.bound_ffn)),
               "bound_comm": str(bound_names(st.bound_comm)), "sigma": float(st.sigma),
               "hidden_share": float(st.hidden_share),
               "fits_memory": bool(st.fits_memory), "shown_in_issue": bool(case.facts.get("shown_in_issue"))}
        row["error"] = row["predicted"] / row["published"] - 1
        row["band_low"], row["band_high"] = (
            float(predict(case, replace(assumptions, **{OVERLAP_OVERRIDE[case.design]: share})).tokens_per_s_per_gpu)
            for share in (0.0, 1.0))
        rows.append(row)
    return rows


def deepep_rows(path: str | Path | None = None, scale_up_domain: int | None = None) -> list[dict[str, Any]]:
    """The all-to-all operator against DeepEP's measured low-latency times (``data/kernels.yaml``):
    dispatch alone (FP8 copies) and dispatch + combine, model and measurement, in microseconds.
    ``scale_up_domain`` overrides the device's (1: every copy to another GPU crosses the NIC)."""
    from afdlib.evaluator.alltoall import ep_all_to_all_work
    from afdlib.routing.balance import uniform_balancedness
    from afdlib.evaluator.roofline import stage_time
    path = Path(path) if path else data_dir() / "kernels.yaml"
    doc = read_yaml(path)
    try:
        block = doc["deepep_low_latency"]
        model, hw = load_model(block["model"]), load_hardware(block["hardware"], profile="datasheet")
        if scale_up_domain is not None:
            hw = hw.with_overrides(scale_up_domain=scale_up_domain)
        rows = []
        for r in block["rows"]:
            ep, t = r["ep_size"], block["tokens"]
            # as in the step model: the busiest receiver sets the time (uniform routing, T = t x R tokens)
            sigma = float(uniform_balancedness(t * ep, model.experts_per_token, model.routed_experts, ep))
            times = {}
            for name, prec in (("both", Precision()), ("fp8", Precision(combine="fp8"))):
                w = ep_all_to_all_work(model, prec, hw, t, ep)
                times[name] = float(stage_time(w.network_scaled(1.0 / sigma), hw).seconds) * 1e6
            rows.append({"ep_size": ep, "sigma": sigma, "dispatch_us": r["dispatch_us"],
                         "model_dispatch_us": times["fp8"] / 2,
                         "both_us": r["dispatch_us"] + r["combine_us"], "model_both_us": times["both"],
                         "tier": "scale-up" if ep <= hw.scale_up_domain else "scale-out + scale-up"})
    except (KeyError, TypeError) as e:
        raise AfdError(f"{path}: malformed deepep_low_latency block ({e})") from None
    return rows


def attention_layer_rows(assumptions: Assumptions = Assumptions(), path: str | Path | None = None
                         ) -> list[dict[str, Any]]:
    """One attention layer against StepFun's measured layer times (``data/kernels.yaml``,
    ``stepfun_attention_layer``): a check of the kernel profile's attention and GEMM curves."""
    from afdlib.decode.step import attention_layer_s
    path = Path(path) if path else data_dir() / "kernels.yaml"
    block = read_yaml(path).get("stepfun_attention_layer")
    try:
        rows = []
        for r in block["rows"]:
            model, hw = load_model(r["model"], profile="reference"), load_hardware(r["hardware"], profile="datasheet")
            ours = float(attention_layer_s(model, Precision(), hw, assumptions, block["requests"], r["context"])) * 1e6
            rows.append({**r, "model_us": ours, "error": ours / r["layer_us"] - 1})
    except (KeyError, TypeError) as e:
        raise AfdError(f"{path}: malformed stepfun_attention_layer block ({e})") from None
    return rows


def attention_layer_readings(assumptions: Assumptions = Assumptions()) -> dict[str, str]:
    """The book's readings of :func:`attention_layer_rows`: median |error|, range, the largest miss."""
    rows = attention_layer_rows(assumptions)
    err = np.array([r["error"] for r in rows])
    worst = rows[int(np.argmax(np.abs(err)))]
    ds_h800 = [r["error"] for r in rows if (r["model"], r["hardware"]) == ("deepseek-v3", "h800")]
    return {"stepfun_median": f"{np.median(np.abs(err)):.0%}", "stepfun_range": f"{err.min():+.0%} to {err.max():+.0%}",
            "stepfun_worst": f"{load_model(worst['model']).name} on {worst['hardware'].upper()} at "
                             f"{worst['context'] // 1024}K ({worst['error']:+.0%})",
            "stepfun_ds_h800": ("not measured" if not ds_h800 else f"{min(ds_h800):+.0%}"
                                if f"{min(ds_h800):+.0%}" == f"{max(ds_h800):+.0%}"
                                else f"{min(ds_h800):+.0%} to {max(ds_h800):+.0%}")}


MIN_CASES = 3
"""A design's composition spread comes from its own published deployments only from this many on."""


def rms_log(ratios) -> float:
    """The root mean square of the logs of ``ratios`` (predicted / published, say)."""
    r = np.asarray(list(ratios), dtype=float)
    return float(np.sqrt(np.mean(np.log(r) ** 2)))


def design_spreads() -> dict[str, tuple[float, str]]:
    """Each design's own composition spread, for its absolute tokens/s only (not the verdict, whose
    ratio cancels what the two share): the rms log error of its published deployments (fewer than
    :data:`MIN_CASES`: all cases'), with its source in words."""
    rows = validation_rows()
    pooled = rms_log(1 + r["error"] for r in rows)
    out = {}
    for design in ("ep", "afd"):
        errs = [1 + r["error"] for r in rows if r["design"] == design]
        out[design] = ((rms_log(errs), f"rms log error of its {len(errs)} published deployments")
                       if len(errs) >= MIN_CASES else
                       (pooled, f"rms log error of all {len(rows)} published deployments (it has {len(errs)})"))
    return out
