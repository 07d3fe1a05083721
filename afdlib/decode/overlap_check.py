"""Published on/off ablations of an overlap form against the schedule (``data/overlap_checks.yaml``).

SGLang's two-batch overlap on H100 (EP72) is published at three batches: the model's change in
throughput per GPU from switching the form on, at each published batch, is the schedule's own
(:func:`afdlib.analysis.schedule.ep_moe_time`: two micro-batches against one serial one, the same
kernels, weights re-read per micro-batch). A check of the schedule, not a fitting target: nothing
is tuned to it.
"""
from __future__ import annotations

from typing import Any

from afdlib.decode.deployment import EPDeployment, decode_step
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.errors import AfdError
from afdlib.inputs.catalog import data_dir, load_hardware, load_model
from afdlib.inputs.files import read_yaml
from afdlib.inputs.specs import Budget


def load_checks(path=None) -> dict[str, dict]:
    """The ablations of the checks file, each with its published change per batch."""
    path = path or data_dir() / "overlap_checks.yaml"
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("checks"), dict):
        raise AfdError(f"{path}: expected a top-level mapping 'checks:'")
    return doc["checks"]


def _step(c: dict, form: dict, requests: float, assumptions: Assumptions):
    """The check's deployment in one ``form`` (micro-batches, single-batch overlap) at ``requests`` per GPU."""
    model = load_model(c["model"], profile="reference")
    hw = load_hardware(c["hardware"], profile=c.get("hw_profile", "datasheet"))
    budget = Budget(slo_s=1e3, l_accept=float(c["l_accept"]), t_gap_s=c.get("t_gap_ms", DECODE_T_GAP_S * 1e3) / 1e3)
    d = EPDeployment(hw, c["ep_size"], c.get("redundant_experts", 0), int(form["micro_batches"]),
                     c.get("kernels", EPDeployment.kernels), requests, bool(form.get("sbo", False)))
    context = c.get("contexts", {}).get(int(requests), c["context"])    # a published batch's own scenario
    return decode_step(model, d, context, budget, assumptions=assumptions)


def check_rows(checks: dict[str, dict] | None = None, assumptions: Assumptions = Assumptions()) -> list[dict[str, Any]]:
    """One row per check and published batch: the published and the model's change in throughput
    per GPU with the form on against off (on / off - 1), the difference in percentage points, and
    whether the sign agrees; the model's hidden share with the form on; whether the batch fits the
    model's HBM (the steps are timed at the published batch either way: the ratio is of step times)."""
    rows = []
    for slug, c in (checks or load_checks()).items():
        for requests, published in sorted(c["published_change"].items()):
            on = _step(c, c["with_form"], float(requests), assumptions)
            off = _step(c, c["without_form"], float(requests), assumptions)
            change = float(on.tokens_per_s_per_gpu / off.tokens_per_s_per_gpu) - 1
            rows.append({"check": slug, "name": c["name"], "requests": int(requests), "published": float(published),
                         "model": change, "points": 100 * (change - float(published)),
                         "sign_agrees": (change > 0) == (float(published) > 0),
                         "hidden_share": float(on.hidden_share),
                         "fits_memory": bool(on.fits_memory) and bool(off.fits_memory)})
    return rows


def check_readings(rows: list[dict[str, Any]], within_points: float = 10.0) -> dict[str, str]:
    """The validation chapter's words for the checks: the model's and the published changes per
    batch, whether the signs agree at every batch, and the batches where the two lie within
    ``within_points`` percentage points (and those beyond)."""
    if not rows:
        return {"tbo_model": "none", "tbo_published": "none", "tbo_sign": "no check", "tbo_within": "no check",
                "tbo_memory": "no check"}
    agree = all(r["sign_agrees"] for r in rows)
    near = [r["requests"] for r in rows if abs(r["points"]) <= within_points]
    far = [f"{r['requests']} ({r['points']:+.0f} points)" for r in rows if abs(r["points"]) > within_points]
    return {"tbo_model": ", ".join(f"{r['model']:+.0%} at {r['requests']}" for r in rows),
            "tbo_published": ", ".join(f"{r['published']:+.1%} at {r['requests']}" for r in rows),
            "tbo_sign": "the sign agrees at every batch" if agree else
                        "the sign disagrees at " + ", ".join(str(r["requests"]) for r in rows if not r["sign_agrees"]),
            "tbo_within": (f"within {within_points:.0f} percentage points at " + (", ".join(map(str, near)) or "no batch")
                           + ("; beyond at " + ", ".join(far) if far else "")),
            "tbo_memory": ("every batch fits the model's HBM" if all(r["fits_memory"] for r in rows) else
                           ", ".join(str(r["requests"]) for r in rows if not r["fits_memory"])
                           + " requests per GPU do not fit the model's HBM with the check's BF16 cache (the post does not "
                             "state the cache's type): there the ratio is of the step times alone")}
