"""The intensity chapter's (the paper's Figure 2) words, read from its own sweep: which regimes the integer
N_F = 1, 2, ... actually pass through, where each runs and what the intensity does there. The borders of
:func:`afdlib.analysis.intensity.regime_borders` are real numbers (K / r may be 0.28 or equal K); a reader
gets the whole node counts of the table, and a regime the sweep never enters is not described as if it did
(issue 31: "flat from N_F = 0.28", a "stable" regime of zero width, a "dead zone" on a fabric whose
scale-out is its scale-up)."""
from __future__ import annotations

import numpy as np
import pandas as pd

NAMES = {"scale-up-bound": "scale-up bound", "stable": "stable",
         "scale-out-bound": "scale-out bound (the dead zone)", "max-intensity": "maximum intensity (G = 1)"}
ONE_NETWORK = 1.0 + 1e-9
"""r = BW_up / BW_out at or under which scale-out is as fast as scale-up (a Superpod's one fabric): the
scale-out-bound regime then caps nothing the scale-up would not, and is no dead zone."""


def regime_runs(sweep: pd.DataFrame) -> list[dict]:
    """Contiguous runs of one regime along the sweep's N_F (columns n_ffn, intensity, regime, as
    :func:`afdlib.analysis.intensity.intensity_sweep`): regime, first and last N_F, intensity at each."""
    runs: list[dict] = []
    for n, i, reg in zip(sweep["n_ffn"], sweep["intensity"], sweep["regime"]):
        if runs and runs[-1]["regime"] == reg:
            runs[-1].update(last=int(n), i_last=float(i))
        else:
            runs.append({"regime": str(reg), "first": int(n), "last": int(n), "i_first": float(i), "i_last": float(i)})
    return runs


def _trend(a: float, b: float, about: float = 1e-3) -> str:
    """"flat at 1.000", "about flat (0.485 to 0.457)" (within ``about``), "rising from 0.5 to 1.0"."""
    if np.isclose(a, b, rtol=1e-3):
        return f"flat at {a:.3f}"
    if np.isclose(a, b, rtol=about):
        return f"about flat ({a:.3f} to {b:.3f})"
    return f"{'rising' if b > a else 'falling'} from {a:.3f} to {b:.3f}"


def _span(run: dict) -> str:
    return f"N_F = {run['first']}" if run["first"] == run["last"] else f"N_F = {run['first']}-{run['last']}"


def runs_line(sweep: pd.DataFrame, bandwidth_ratio: float) -> str:
    """Every regime the sweep passes through, in order, with its node counts and its intensity: "scale-up
    bound at N_F = 1-2 (rising from 0.200 to 0.400); stable at N_F = 3-7 (falling from 0.485 to 0.457); ..."."""
    names = NAMES if bandwidth_ratio > ONE_NETWORK else {**NAMES, "scale-out-bound": "scale-out bound (one fabric: no dead zone)"}
    return "; ".join(f"{names[r['regime']]} at {_span(r)} ("
                     + (f"{r['i_first']:.3f}" if r["first"] == r["last"] else _trend(r["i_first"], r["i_last"])) + ")"
                     for r in regime_runs(sweep))


def result_words(sweep: pd.DataFrame, model_name: str, hw_name: str, experts_per_token: int,
                 bandwidth_ratio: float) -> str:
    """The chapter's one-sentence answer, chosen by the sweep: how it starts (one expert per GPU at once, a
    stable run, or rising while scale-up binds), where each rank is pinned to the scale-out network (the
    first N_F >= K: the dead zone; on one fabric, r <= 1, said to be none; beyond the sweep, said so) and
    where one expert per GPU is reached."""
    runs = regime_runs(sweep)
    by = {r["regime"]: r for r in runs}
    n = np.asarray(sweep["n_ffn"], dtype=float)
    at = dict(zip(n.astype(int), np.asarray(sweep["intensity"], dtype=float)))
    if runs[0]["regime"] == "max-intensity":
        start = f"has one expert per GPU from the first FFN node ({runs[0]['i_first']:.3f} there)"
    elif "stable" in by:
        start = f"stays {_trend(by['stable']['i_first'], by['stable']['i_last'], 0.1)} over {_span(by['stable'])}"
    else:
        a, b = runs[0]["i_first"], runs[0]["i_last"]
        start = (f"{'rises' if b > a else 'falls'} from {a:.3f} to {b:.3f} over {_span(runs[0])} while scale-up binds"
                 if not np.isclose(a, b, rtol=1e-3) else f"is {a:.3f} while scale-up binds ({_span(runs[0])})")
    reach = n[n >= experts_per_token]
    if not reach.size:
        return (f"For {model_name} on {hw_name} the arithmetic intensity of an FFN rank's grouped GEMMs {start}; "
                f"the sweep ends before N_F = K = {experts_per_token}, where the scale-out network would pin it")
    k = int(reach[0])
    until = (f" until one expert per GPU at N_F = {by['max-intensity']['first']}"
             if "max-intensity" in by and by["max-intensity"]["first"] > k else "")
    if bandwidth_ratio > ONE_NETWORK:
        pinned = (f"is pinned to the scale-out network from N_F = K = {k} ({at[k]:.3f}; the dead zone){until}: there, "
                  "adding FFN nodes no longer adds tokens per rank, only fewer experts per GPU")
    else:
        pinned = (f"from N_F = K = {k} each rank receives the scale-out share, which on this one fabric "
                  f"(r = {bandwidth_ratio:.2f}) is the scale-up's: no dead zone{until.replace(' until', ', up to')}")
    return f"For {model_name} on {hw_name} the arithmetic intensity of an FFN rank's grouped GEMMs {start}, and {pinned}"
