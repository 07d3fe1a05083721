"""The decision: when an AFD / EP verdict is decided, and why it is or is not, in words.

A verdict is decided only where three things hold (issue 29): the free search's P(AFD better) is
beyond the threshold (:data:`afdlib.decision.uncertainty.DECIDED`: at most 0.1 or at least 0.9); no
design's best sits on a bound of its search (the best there might be better than found); and the
search held to the forms published deployments validate decides the same design (the answer then
rests on forms a deployment has run, not only on forms the model can express). Where only one design
has a feasible deployment, it is the answer. Where prices per GPU-hour are given, the answer is by cost
per token (:func:`costs`). The verdict's own lines of ``afd advise``'s reasons are here too
(:func:`uncertainty_reason`, :func:`tornado_reason`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from afdlib.decision.uncertainty import DECIDED, Verdict, assumption_words, decisive_band, ratio_spread_words
from afdlib.errors import AfdError
from afdlib.inputs.specs import Hardware


def _p(p: float) -> str:
    """P with two decimals, or as many as it takes not to read as the threshold it is inside of (0.1004, not 0.10)."""
    d = 2
    while d < 6 and any(f"{p:.{d}f}" == f"{t:.{d}f}" for t in (DECIDED, 1 - DECIDED)) and p not in (DECIDED, 1 - DECIDED):
        d += 1
    return f"{p:.{d}f}"


def decision(v: Verdict | None, held, bounds: list, validated_only: bool, one_feasible: bool) -> tuple[bool, str]:
    """(decided, why): a verdict is decided only where the free search's is (P(AFD better) beyond the
    threshold), no best sits on a search bound, and the search held to validated forms (``held``: its
    Verdict, or the AfdError saying no validated form is feasible) decides the same design; with
    ``validated_only`` the searches are one. Where only one design is feasible, it is the answer."""
    if v is None:
        return one_feasible, "decided: only one design has a feasible deployment" if one_feasible else ""
    if not v.decided:
        return False, f"undecided: P(AFD better) = {_p(v.p_afd)} is inside {DECIDED:g} to {1 - DECIDED:g}"
    if bounds:
        return False, ("undecided: the free search decides " + v.recommendation + f" (P(AFD better) = {v.p_afd:.2f}), "
                       "but a best sits on a search bound (" + "; ".join(bounds) + ")")
    if validated_only:
        return True, f"decided {v.recommendation} under the validated forms (P(AFD better) = {v.p_afd:.2f})"
    if not isinstance(held, Verdict):
        return False, (f"undecided: the free search decides {v.recommendation} (P(AFD better) = {v.p_afd:.2f}), "
                       f"but the search held to validated forms has no answer ({held})")
    if held.decided and held.recommendation == v.recommendation:
        return True, (f"decided {v.recommendation} under both the free search (P(AFD better) = {v.p_afd:.2f}) and the "
                      f"search held to validated forms ({held.p_afd:.2f})")
    return False, (f"undecided: the free search decides {v.recommendation} (P(AFD better) = {v.p_afd:.2f}), the search "
                   f"held to validated forms " + (f"decides {held.recommendation}" if held.decided else "does not")
                   + f" ({held.p_afd:.2f})")


def uncertainty_reason(v: Verdict) -> str:
    """One line: P(AFD better) and the ratio's interval, and whether that decides."""
    lo, hi = v.ratio_interval
    state = "decided" if v.decided else f"undecided (deciding takes P(AFD better) <= {DECIDED} or >= {1 - DECIDED:g})"
    return (f"over the model's uncertain assumptions ({assumption_words()}) P(AFD better) = {v.p_afd:.2f}, the ratio {lo:.2f} to {hi:.2f} (10th to 90th "
            f"percentile): {v.recommendation} is the more likely, {state}")


def tornado_reason(v: Verdict) -> str:
    """One line: which assumptions move the ratio most (the tornado's two widest)."""
    top = [f"{t['assumption']} ({t['low']:.2f} to {t['high']:.2f} at its {t['at']} percentile)" for t in v.tornado[:2]]
    return "the ratio moves most with " + " and ".join(top)


def costs(prices: dict[str, float], ffn: Hardware, attn: Hardware, ep: dict, afd: dict) -> dict:
    """USD per million output tokens of each feasible design at ``prices`` per GPU-hour (AFD: both
    pools' GPUs), and EP / AFD where both are (``ratio``: above 1, AFD is the cheaper): the decision
    by cost, where prices are given. AfdError naming a pool without a price."""
    missing = [h.slug for h in {ffn.slug: ffn, attn.slug: attn}.values() if h.slug not in prices]
    if missing:
        raise AfdError(f"no price for {', '.join(missing)}; give --price-per-gpu-hour SLUG=USD for each pool")
    out: dict[str, Any] = {}
    if ep.get("feasible"):
        out["ep_usd_per_million_tokens"] = prices[ffn.slug] / 3600 / ep["tokens_per_s_per_gpu"] * 1e6
    if afd.get("feasible"):
        g_a, g_f = afd["n_attn"] * attn.gpus_per_node, afd["n_ffn"] * ffn.gpus_per_node
        usd_per_s = (g_a * prices[attn.slug] + g_f * prices[ffn.slug]) / 3600
        out["afd_usd_per_million_tokens"] = usd_per_s / (afd["tokens_per_s_per_gpu"] * (g_a + g_f)) * 1e6
    if len(out) == 2:
        out["ratio"] = out["ep_usd_per_million_tokens"] / out["afd_usd_per_million_tokens"]
    return out


def undecided_words(v: "Verdict", ratio: float) -> str:
    """Why a verdict is undecided, in one computed sentence ("decided" where it is): the band of
    :func:`decisive_band` and where the pair's ratio at the model's defaults sits."""
    if v.decided:
        return "decided"
    lo, hi = decisive_band()
    a, b = v.ratio_interval
    over = (f", and {a:.2f} to {b:.2f} (10th to 90th percentile) over all of them" if np.isfinite([a, b]).all()
            else "")
    return (f"undecided because the model's error in AFD / EP against published head-to-heads alone "
            f"({ratio_spread_words()}) decides a pair only where AFD / EP lies below {lo:.2f} or above {hi:.2f} "
            f"with every shared assumption known; here it is {ratio:.2f} at the model's defaults{over}")
