"""Published head-to-heads of AFD against EP on the same hardware: the error of the ratio itself.

Both designs run on one evaluator, so most of each design's error against its published deployment
(the kernels, the attention, the engine) is shared and cancels in AFD / EP. A head-to-head
(``data/head_to_heads.yaml``) gives a published ratio; each of its two deployments is predicted through
:func:`afdlib.decode.validation.predict` (its published batch, sizes, form and data types, the model's
defaults for everything else) and the ratio's error is

    e = ln(predicted AFD / EP) - ln(published AFD / EP)

per pair (:func:`head_to_head_rows`). Over the pairs, :func:`ratio_spread` gives the rms of e, and the
rms leaving out each independent source in turn (pairs from one source share its errors). Nothing is
fitted to these numbers: they check the model, as the deployments do.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from afdlib.decode.step import Assumptions
from afdlib.decode.validation import Case, cases_of, load_deployments, predict
from afdlib.errors import AfdError
from afdlib.inputs.catalog import data_dir
from afdlib.inputs.files import read_yaml

FIELDS = ("name", "afd", "ep", "published_ratio", "source", "secondary", "quote")
"""What every head-to-head states (``notes`` is optional)."""


@dataclass(frozen=True)
class HeadToHead:
    """One published comparison: the AFD and the EP deployment, the published AFD / EP ratio, the
    source it rests on and whether that source is secondary."""

    slug: str
    name: str
    afd: Case
    ep: Case
    published_ratio: float
    source: str
    secondary: bool
    quote: str
    notes: str = ""


def load_head_to_heads(path: str | Path | None = None, deployments: str | Path | None = None) -> dict[str, HeadToHead]:
    """The head-to-heads of the file (default ``data/head_to_heads.yaml``), each side a case of the
    deployments file (``deployments``, default ``data/deployments.yaml``) or a deployment of its own."""
    path = Path(path) if path else data_dir() / "head_to_heads.yaml"
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("head_to_heads"), dict):
        raise AfdError(f"{path}: expected a top-level mapping 'head_to_heads:'")
    known = load_deployments(deployments)
    out = {}
    for slug, entry in doc["head_to_heads"].items():
        where = f"{path}: head-to-head '{slug}'"
        missing = [k for k in FIELDS if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise AfdError(f"{where}: missing {', '.join(missing)}")
        sides = {}
        for design in ("afd", "ep"):
            side = entry[design]
            if isinstance(side, dict) and "case" in side:
                if side["case"] not in known:
                    raise AfdError(f"{where}: {design} names no case of the deployments file: {side['case']!r}")
                sides[design] = known[side["case"]]
            elif isinstance(side, dict) and isinstance(side.get("deployment"), dict):
                sides[design] = cases_of({f"{slug}-{design}": side["deployment"]}, path)[f"{slug}-{design}"]
            else:
                raise AfdError(f"{where}: {design} needs case: SLUG or deployment: {{...}}")
            if sides[design].design != design:
                raise AfdError(f"{where}: its {design} side is an {sides[design].design.upper()} deployment")
        ratio = float(entry["published_ratio"])
        if not np.isfinite(ratio) or ratio <= 0:
            raise AfdError(f"{where}: published_ratio must be a positive number, got {entry['published_ratio']!r}")
        out[slug] = HeadToHead(slug, str(entry["name"]), sides["afd"], sides["ep"], ratio, str(entry["source"]),
                               bool(entry["secondary"]), str(entry["quote"]), str(entry.get("notes", "")))
    return out


def head_to_head_rows(pairs: dict[str, HeadToHead] | None = None,
                      assumptions: Assumptions = Assumptions()) -> list[dict]:
    """Per pair: the published and the predicted AFD / EP (each side at its published batch and form),
    each side's predicted tokens/s per GPU, and the ratio's log error e (module docstring)."""
    rows = []
    for slug, p in (pairs if pairs is not None else load_head_to_heads()).items():
        afd, ep = (float(np.asarray(predict(c, assumptions).tokens_per_s_per_gpu)) for c in (p.afd, p.ep))
        predicted = afd / ep if ep > 0 else float("inf")
        rows.append({"pair": slug, "name": p.name, "source": p.source, "secondary": p.secondary,
                     "published_ratio": p.published_ratio, "predicted_ratio": predicted,
                     "afd_predicted": afd, "ep_predicted": ep,
                     "log_error": float(np.log(predicted / p.published_ratio))})
    return rows


def ratio_spread(rows: list[dict]) -> dict:
    """The rms log error of the predicted ratio over ``rows`` (:func:`head_to_head_rows`), the number
    of pairs and of independent sources, and the rms leaving out each source in turn (None where
    nothing is left)."""
    e = np.array([r["log_error"] for r in rows], dtype=float)
    sources = sorted({r["source"] for r in rows})

    def rms(x):
        return float(np.sqrt(np.mean(np.square(x)))) if x.size else None
    return {"rms_log": rms(e), "pairs": len(rows), "sources": len(sources),
            "leave_one_source_out": {s: rms(np.array([r["log_error"] for r in rows if r["source"] != s]))
                                     for s in sources}}


CONFIDENCE = 0.9
"""The one-sided confidence of the ratio error's upper bound (:func:`ratio_error`): the spread a verdict
uses is exceeded with probability 1 - 0.9 = 0.1, the decision threshold's own
(:data:`afdlib.decision.uncertainty.DECIDED`)."""


def chi2_quantile(q: float, dof: int) -> float:
    """The ``q`` quantile of the chi-square distribution with ``dof`` degrees of freedom, by bisection on
    its CDF (the regularized lower incomplete gamma function P(dof / 2, x / 2), summed as a series)."""
    import math
    a = dof / 2.0

    def cdf(x: float) -> float:
        if x <= 0:
            return 0.0
        y, term, total, k = x / 2.0, 1.0 / a, 1.0 / a, 0
        while term > 1e-16 * total and k < 10_000:
            k += 1
            term *= y / (a + k)
            total += term
        return math.exp(a * math.log(y) - y - math.lgamma(a)) * total
    lo, hi = 0.0, max(1.0, 10.0 * dof)
    while cdf(hi) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return (lo + hi) / 2


def upper_bound(rms: float, sources: int, confidence: float = CONFIDENCE) -> float:
    """A one-sided ``confidence`` upper bound of the spread sigma of mean-zero normal errors whose rms
    over ``sources`` independent samples is ``rms``: n rms^2 / sigma^2 is chi-square with n degrees of
    freedom, so sigma <= rms sqrt(n / chi2_{1 - confidence}(n))."""
    return float(rms * np.sqrt(sources / chi2_quantile(1.0 - confidence, sources)))


def ratio_error(rows: list[dict] | None = None) -> dict:
    """The verdict's spread of ln(AFD / EP): :func:`ratio_spread` of the head-to-heads (``rows``,
    default the shipped ones, predicted once per process) and its :func:`upper_bound` at
    :data:`CONFIDENCE` for their number of independent sources (``sigma``); the bound leaving out each
    source in turn too (``sigma_leave_one_source_out``); ``mean_log`` the errors' mean (its sign: the
    way the model leans)."""
    if rows is None:
        return dict(_shipped_ratio_error())
    return _ratio_error(rows)


@lru_cache(maxsize=1)
def _shipped_ratio_error() -> dict:
    return _ratio_error(head_to_head_rows())


def _ratio_error(rows: list[dict]) -> dict:
    s = ratio_spread(rows)
    if not s["pairs"]:
        raise AfdError("no published head-to-head: the ratio's error cannot be measured")
    left = {k: (None if v is None else upper_bound(v, s["sources"] - 1)) for k, v in s["leave_one_source_out"].items()}
    return {**s, "sigma": upper_bound(s["rms_log"], s["sources"]), "confidence": CONFIDENCE,
            "sigma_leave_one_source_out": left, "mean_log": float(np.mean([r["log_error"] for r in rows])),
            "signs": sorted({int(np.sign(r["log_error"])) for r in rows})}
