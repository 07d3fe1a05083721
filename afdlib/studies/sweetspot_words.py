"""The sweet-spot chapter's conclusions in words, each chosen by the chapter's own numbers with a
wording for every outcome (issue 31): who leads at an equal hidden share, the break-even bandwidth,
and how AFD's micro-batch counts compare (Table 2)."""
from __future__ import annotations

import numpy as np

from afdlib.studies.sweetspot_study import MapReadings, OverlapReadings


def paper_claim_words(superpod: bool) -> str:
    """What the paper says of a device of this kind: EP keeps the lead on ordinary clusters; on a
    Superpod-class fabric it finds AFD competitive (GB200/GB300 with coarse experts)."""
    if superpod:
        return ("this device is a Superpod-class system (one fabric joins its GPUs at scale-up speed), where the "
                "paper finds AFD competitive for coarse experts (GB200/GB300 with Step3 and ERNIE-4.5)")
    return "the paper says EP keeps the lead on ordinary clusters"


def equal_share_words(all_hidden: float, half_hidden: float, superpod: bool = False) -> str:
    """Which design leads when both hide the same share of their communication (AFD / EP with all of it
    hidden and with half), against the paper's reading for the device's kind (:func:`paper_claim_words`:
    EP ahead on ordinary clusters; on a Superpod, AFD competitive)."""
    lead = ["EP" if r < 1 else "AFD" for r in (all_hidden, half_hidden)]
    if superpod:
        if lead[0] == lead[1]:
            return (f"{lead[0]} ahead when both designs hide the same share"
                    + (", as far as the paper's 'competitive' goes" if lead[0] == "AFD" else
                       ", short of the AFD the paper finds competitive on Superpods"))
    elif lead == ["EP", "EP"]:
        return "EP ahead, as the paper says, when both designs hide the same share"
    elif lead == ["AFD", "AFD"]:
        return "AFD ahead, against the paper, even when both designs hide the same share"
    return f"{lead[0]} ahead with all hidden and {lead[1]} with half: the lead turns with the share both hide"


def break_even_words(bandwidth: float | None, side: str, now: float, network: str = "NIC") -> str:
    """``afd advise``'s break-even bandwidth in a sentence (bytes/s per GPU; ``side``:
    :func:`break_even_side`'s; ``network``: what the bandwidth is, "NIC" or a Superpod's "fabric"), or that
    there is none in the bandwidths searched."""
    where = {"never": "AFD never ahead in the range searched", "always": "AFD ahead throughout the range searched",
             "above": "the ratio above 1 just above it", "below": "the ratio above 1 just below it"}[side]
    if bandwidth is None:
        return (f"Under the schedule afd advise finds no bandwidth at which the ratio crosses 1 ({where}; "
                f"sustained, now {now / 1e9:.0f} GB/s)")
    return (f"Under the schedule afd advise finds the ratio crossing 1 nearest today's {network} at about "
            f"{bandwidth / 1e9:.0f} GB/s per GPU ({where}; interpolated between the bandwidths it searches; "
            f"sustained, now {now / 1e9:.0f} GB/s)")


def afd_form_words(o: OverlapReadings) -> str:
    """Table 2's AFD reading worded by its outcome: how three micro-batches compare with two and with
    four (ratios of tokens/s per GPU), and whether that agrees with the paper's choice of 3BO."""
    r2, r4 = o.afd_3_over_2, o.afd_3_over_4
    if r2 > 1 and r4 > 1:
        return f"three micro-batches beat two ({r2:.2f}x) and four ({r4:.2f}x), as the paper's choice of 3BO implies"
    if r4 > 1:
        return (f"two micro-batches beat three (3BO gives {r2:.2f}x 2BO's throughput) and three beat four "
                f"({r4:.2f}x), against the paper's choice of 3BO")
    if r2 > 1:
        return (f"four micro-batches beat three (3BO gives {r4:.2f}x 4BO's throughput) and three beat two "
                f"({r2:.2f}x), against the paper's choice of 3BO")
    return (f"three micro-batches give no more than two ({r2:.2f}x) or four ({r4:.2f}x), against the paper's "
            "choice of 3BO")


def rests_on(n: int) -> str:
    """'one published deployment, whose error is' / 'two published deployments, whose errors are'."""
    from afdlib.studies.validation_readings import counted
    return f"{counted(n, 'published deployment')}, whose error{' is' if n == 1 else 's are'}"


def decided_words(n: int) -> str:
    """How many pairs are decided, with the verb agreeing: "none is decided", "1 is decided", "3 are decided"."""
    return "none is decided" if n == 0 else f"{n} {'is' if n == 1 else 'are'} decided"


def one_domain_note(rows: list[dict], model: str, hardware: str, methods: list[dict]) -> str:
    """Where the pair's best AFD deployment overall (its advice row: ``afd_form``, ``afd_config``, ``afd``
    tokens/s per GPU) splits the attention pool into domains and beats every AFD row of Table 2
    (``methods``: :func:`afdlib.decision.sweetspot.overlap_methods`, one attention domain each, as the
    paper's), the sentence that says so; empty otherwise (model, hardware: slugs)."""
    r = next((x for x in rows if (x["model"], x["hardware"]) == (model, hardware)), None)
    best_row = max((m["tokens_per_s_per_gpu"] for m in methods if m["design"] == "AFD"), default=0.0)
    if r is None or "domain" not in str(r.get("afd_form", "")) or not r["afd"] > best_row:
        return ""
    return (f" These rows keep the attention pool in one domain, as the paper does: the best AFD deployment "
            f"overall, {r['afd_config']} ({r['afd_form']}, {r['afd']:,.0f} tokens/s per GPU, "
            f"{r['afd'] / best_row:.2f}x the best row here), splits it.")


def top_row_clause(r: MapReadings) -> str:
    """The M map's top bandwidth row after the device's own row ("; at 640 GB/s it goes from 0.88 to 0.91"),
    or nothing where the own row is the top row (the clause would repeat it)."""
    if np.isclose(r.m_top_bw, r.m_row_bw):
        return ""
    return f"; at {r.m_top_bw / 1e9:.0f} GB/s it goes from {r.m_top_small:.2f} to {r.m_top_large:.2f}"


def paper_side(at_afd_end: float, at_other_end: float) -> str:
    """Whether a reading agrees with the paper's condition: the ratio at the end the paper says favours
    AFD (coarse experts, low sparsity) against the other end's; level at the two decimals printed, neither."""
    if round(float(at_afd_end), 2) == round(float(at_other_end), 2):
        return "level at two decimals: neither with nor against the paper"
    return "with the paper" if at_afd_end > at_other_end else "against the paper"


def duplex_words(gain: float) -> str:
    """What carrying AFD's dispatch and combine in opposite directions at once would do
    (:func:`afdlib.studies.sweetspot_study.duplex_gain`), and so whom the shared lane favours: "gains 4%: the
    shared lane favours EP"; under half a percent, nothing; a loss (the search's best moving) no gain."""
    if gain >= 0.005:
        return f"gains {gain:.0%}: the shared lane favours EP"
    if gain > -0.005:
        return "gains nothing measurable: the shared lane does not bind here"
    return f"gains nothing (its best changes by {gain:+.0%}): the shared lane does not bind here"
