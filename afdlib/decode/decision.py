"""The decision: when an AFD / EP verdict is decided, and why it is or is not, in words.

A verdict is decided only where three things hold (issue 29): the free search's P(AFD better) is
beyond the threshold (:data:`afdlib.decode.uncertainty.DECIDED`: at most 0.1 or at least 0.9); no
design's best sits on a bound of its search (the best there might be better than found); and the
search held to the forms published deployments validate decides the same design (the answer then
rests on forms a deployment has run, not only on forms the model can express). Where only one design
has a feasible deployment, it is the answer.
"""
from __future__ import annotations

from afdlib.decode.uncertainty import DECIDED, Verdict, assumption_words


def decision(v: Verdict | None, held, bounds: list, validated_only: bool, one_feasible: bool) -> tuple[bool, str]:
    """(decided, why): a verdict is decided only where the free search's is (P(AFD better) beyond the
    threshold), no best sits on a search bound, and the search held to validated forms (``held``: its
    Verdict, or the AfdError saying no validated form is feasible) decides the same design; with
    ``validated_only`` the searches are one. Where only one design is feasible, it is the answer."""
    if v is None:
        return one_feasible, "decided: only one design has a feasible deployment" if one_feasible else ""
    if not v.decided:
        return False, f"undecided: P(AFD better) = {v.p_afd:.2f} is inside {DECIDED:g} to {1 - DECIDED:g}"
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
