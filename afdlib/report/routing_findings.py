"""Which of the routing chapter's findings need the raw expert-load files, in one place.

The raw files (SGLang's DeepSeek-V3 expert loads) may not be redistributed, and a clone's routing chapter
runs on the Zipf fits shipped in ``data/deepseek_v3_routing_fit.yaml``. Per-batch balancedness needs each
layer's whole expert histogram, which no small statistic replaces, so the fits do not reproduce every
finding. ``scripts/routing_findings.py`` therefore runs the chapter on the raw files and ships what it
found, its headline numbers as printed (a few dozen strings, no counts), with the parameters and the source,
in ``data/deepseek_v3_routing_findings.yaml``. The chapter compares its own findings with that record
(:func:`compare`): in the reference book they agree (a check of the record); in a clone the table says
which findings differ without the raw files and by how much.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from afdlib.errors import AfdError
from afdlib.inputs.catalog import data_dir
from afdlib.inputs.files import read_yaml

FINDINGS_FILE = "deepseek_v3_routing_findings.yaml"
SAVED = "sigma_findings.json"
"""The chapter's findings and parameters, written into its output folder (the script reads them there)."""

FINDINGS = {
    "longrun_sigma_ep144": "long-run σ at EP144 + {redundant} (median over layers; the validation chapter's routing σ)",
    "sigma_afd": "σ of AFD's FFN pool at its own deployment",
    "sigma_ep": "σ of EP at its own deployment",
    "loss_afd": "throughput AFD loses to imbalance at its own deployment",
    "loss_ep": "throughput EP loses to imbalance at its own deployment",
    "like_sigma_afd": "like with like: AFD's step σ",
    "like_sigma_ep": "like with like: EP's step σ (same GPUs)",
    "like_gap": "like with like: AFD's lead in α at the paper's λ (points)",
    "sens_range": "AFD's lead as tokens per step vary (points)",
    "dp_lead": "AFD's lead with DP imbalance (points)",
    "dp_break_even": "DP balancedness below which EP keeps more, at the paper's λ",
    "alone_lead": "AFD's lead at EP's own λ (points)",
    "alone_break_even": "DP break-even at EP's own λ",
    "own_lead": "AFD's lead, the decode model's AFD deployment (points)",
    "own_break_even": "DP break-even, the decode model's AFD deployment",
}
"""Glue key -> what it is: the findings the record holds, in the chapter's order."""

NOT_RECORDED = ("the pipeline chapter's routing-driven stage times (another file of the same data) also run on the "
                "fits in a clone; they are not recorded")

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def record_path() -> Path:
    return data_dir() / FINDINGS_FILE


def save_findings(values: dict, parameters: dict, measured: bool, output_dir: str | Path) -> Path:
    """Write the chapter's findings (the :data:`FINDINGS` keys of ``values``, as printed), its
    parameters (those that set the findings: not the folders) and whether it ran on the raw files."""
    missing = [k for k in FINDINGS if k not in values]
    if missing:
        raise AfdError(f"the routing chapter's findings lack {', '.join(missing)}")
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / SAVED
    path.write_text(json.dumps({"measured": bool(measured), "parameters": comparable(parameters),
                                "findings": {k: str(values[k]) for k in FINDINGS}}, indent=1, ensure_ascii=False))
    return path


def comparable(parameters: dict) -> dict:
    """The parameters that set the findings (not where files are read or written), JSON-plain."""
    plain = json.loads(json.dumps(parameters, default=repr))
    return {k: v for k, v in sorted(plain.items()) if k not in ("counts_dir", "output_dir")}


def difference(this: str, recorded: str) -> str:
    """This build's value minus the recorded one, per number in the printed strings ("+0.1" against "+0.7":
    "-0.6"; a range: one difference per end, " / " between); "equal" where the strings are; "another
    outcome" where the strings do not hold the same count of numbers (e.g. a break-even against none)."""
    if this == recorded:
        return "equal"
    a, b = _NUMBER.findall(this), _NUMBER.findall(recorded)
    if not a or len(a) != len(b):
        return "another outcome"
    decimals = max(len(x.partition(".")[2]) for x in a + b)
    unit = " points" if this.rstrip().endswith("%") else ""
    return " / ".join(f"{float(x) - float(y):+.{decimals}f}" for x, y in zip(a, b)) + unit


def compare(values: dict, parameters: dict, measured: bool, record: dict | None = None) -> tuple[list[dict], dict]:
    """Rows (finding, this build, on the raw files as recorded, difference) and the glue values
    ``raw_note`` (the sentence that says what the table shows) and ``raw_differ`` (how many differ)."""
    if record is None:
        record = read_yaml(record_path()) if record_path().exists() else {}
    rec, rows = record.get("findings", {}), []
    for key, what in FINDINGS.items():
        this, then = str(values[key]), str(rec.get(key, "not recorded"))
        what = what.replace("{redundant}", str(parameters.get("redundant", "the chapter's redundant experts")))
        rows.append({"finding": what, "this build": this, "raw files (recorded)": then,
                     "difference": difference(this, then) if key in rec else "not recorded"})
    differ = sum(r["difference"] != "equal" for r in rows)
    ours, theirs = comparable(parameters), record.get("parameters", {})
    changed = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
    where = f"data/{FINDINGS_FILE}, written by scripts/routing_findings.py from the raw files"
    if not rec:
        lead = (f"No record of the chapter's findings on the raw files is shipped (data/{FINDINGS_FILE}): "
                f"write it with scripts/routing_findings.py where the raw files are.")
    elif changed:
        lead = (f"This run's parameters differ from the recorded run's ({', '.join(changed)}), so the table compares "
                f"other settings, not only other data; the record ({where}) holds the chapter's defaults.")
    elif measured:
        lead = (f"This build ran on the raw files and {'all' if not differ else f'{len(rows) - differ} of'} "
                f"its {len(rows)} findings equal the record shipped for clones ({where})"
                + ("." if not differ else f": regenerate the record, {differ} differ."))
    else:
        lead = (f"This build ran on the shipped fits (the raw files are not in this checkout): {differ} of its "
                f"{len(rows)} findings differ from what the chapter finds on the raw files ({where}); "
                f"for those, the recorded column is the data's finding and this build's is the fits'.")
    return rows, {"raw_note": f"{lead} Not in the table: {NOT_RECORDED}.", "raw_differ": differ}


def chapter_findings(values: dict, data, redundant: int, output_dir: str | Path):
    """The routing chapter's section: its findings (``values``, the chapter's readings, with the long-run
    sigma at EP144 + ``redundant`` of ``data``, a :class:`afdlib.routing.provenance.RoutingData`, added) saved
    (:func:`save_findings`) with the run's parameters and compared with the record (:func:`compare`); the
    sentence glued, the table (a DataFrame) returned for the chapter to glue."""
    import pandas as pd

    from afdlib.report.style import glue_all, run_parameters
    from afdlib.routing.provenance import ep_longrun_sigma
    values = {**values, "longrun_sigma_ep144": f"{ep_longrun_sigma(data, 144, redundant):.3f}"}
    save_findings(values, run_parameters(), data.measured, output_dir)
    rows, readings = compare(values, run_parameters(), data.measured)
    glue_all(readings)
    return pd.DataFrame(rows)
