"""The landing page's readings: where AFD wins, with thresholds, and where the book departs from the paper.

* :func:`lead_intervals` / :func:`bandwidth_windows`: the network bandwidths per GPU at which AFD gives
  more output tokens per second per GPU than EP (ratio above 1 at the model's defaults), over the range
  :func:`afdlib.decision.threshold.break_even_scale_out` searches, on its grid (:data:`FACTORS`
  times the device's own bandwidth), each edge interpolated as that function does (linear ratio against
  log bandwidth).
* :func:`p_afd_over_bandwidth` / :func:`probability_thresholds`: P(AFD better)
  (:func:`afdlib.decision.verdict.verdict`) along the same axis, the shared assumptions' quadrature
  settings and the bandwidths searched as the cells of one vectorised call per gap setting, and the
  bandwidths at which it crosses the decision levels.
* :func:`departures`: the rows of the departures table, each with a status computed from the readings
  passed in (a row whose reading agrees with the paper says so, and the page shows only departures).

Bandwidths are bytes/s per GPU, sustained; ratios AFD / EP.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afdlib.decision.threshold import FLIP_FACTORS, break_even_scale_out, flips
from afdlib.decode.search import compare
from afdlib.decode.step import Assumptions
from afdlib.decision.sweetspot import with_network
from afdlib.decision.decision import undecided_words
from afdlib.decision.jitter import with_jitter
from afdlib.decision.uncertainty import DECIDED, Verdict, quadrature
from afdlib.inputs.specs import Budget, Hardware, Model, Precision


FACTORS = FLIP_FACTORS
"""The bandwidths searched, as factors of the device's own: the grid of
:func:`afdlib.decision.threshold.break_even_scale_out` (one home: the page's edges are the command's break-evens)."""


def _gb(x: float) -> str:
    """GB/s from bytes/s: whole numbers from 10 on, one decimal below."""
    return f"{x / 1e9:,.0f}" if x >= 10e9 else f"{x / 1e9:.1f}"


def crossings(bandwidth, values, level: float = 1.0) -> list[float]:
    """Every bandwidth where ``values`` (over increasing ``bandwidth``) crosses ``level``, by the one rule
    of every threshold (:func:`afdlib.decision.threshold.flips`, in log bandwidth)."""
    return [float(x) for x in np.exp(flips(np.log(np.asarray(bandwidth, dtype=float)), values, level))]


def lead_intervals(bandwidth, values, level: float = 1.0) -> list[tuple[float | None, float | None]]:
    """The stretches of ``bandwidth`` where ``values`` exceed ``level``: (from, to) with
    :func:`crossings` as edges; None where a stretch runs to the end of the range searched."""
    bw, v = np.asarray(bandwidth, dtype=float), np.asarray(values, dtype=float)
    edges, out, start = crossings(bw, v, level), [], None if v[0] > level else "closed"
    for x in edges:
        if start == "closed":
            start = x
        else:
            out.append((start, x))
            start = "closed"
    if start != "closed":
        out.append((start, None))
    return out


def interval_words(intervals, low: float, high: float, what: str = "AFD ahead") -> str:
    """:func:`lead_intervals` in words, GB/s per GPU, over the range searched ``low``-``high``."""
    rng = f"{_gb(low)}-{_gb(high)} GB/s"
    if not intervals:
        return f"nowhere in {rng}"
    parts = []
    for a, b in intervals:
        if a is None and b is None:
            parts.append(f"everywhere in {rng}")
        elif a is None:
            parts.append(f"below {_gb(b)} GB/s")
        elif b is None:
            parts.append(f"above {_gb(a)} GB/s (to the top of the range, {_gb(high)})")
        else:
            parts.append(f"from {_gb(a)} to {_gb(b)} GB/s")
    return " and ".join(parts)


@dataclass(frozen=True)
class Window:
    """One (model, device): AFD / EP over the bandwidths searched, and where it exceeds 1."""

    model: str
    device: str
    bandwidth: np.ndarray
    ratio: np.ndarray
    own_bandwidth: float
    superpod: bool

    @property
    def intervals(self) -> list[tuple[float | None, float | None]]:
        return lead_intervals(self.bandwidth, self.ratio)

    @property
    def peak(self) -> tuple[float, float]:
        """(largest ratio, the bandwidth where it is reached)."""
        i = int(np.nanargmax(np.where(np.isfinite(self.ratio), self.ratio, np.nan)))
        return float(self.ratio[i]), float(self.bandwidth[i])

    def words(self) -> str:
        return interval_words(self.intervals, self.bandwidth[0], self.bandwidth[-1])


def bandwidth_windows(models: list[Model], devices: list[Hardware], budget: Budget, context: float,
                      precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
                      factors=FACTORS) -> list[Window]:
    """:class:`Window` of every model on every device: the ratio that
    :func:`afdlib.decision.threshold.break_even_scale_out` computes over ``factors`` (:data:`FACTORS`) x the
    device's network bandwidth (the NIC on 8-GPU nodes, the whole fabric on a Superpod)."""
    out = []
    for m in models:
        for hw in devices:
            _, ratio = break_even_scale_out(m, hw, budget, context, precision, assumptions, factors=factors)
            out.append(Window(m.name, hw.name, hw.scale_out_bytes_per_s * np.asarray(factors, dtype=float),
                              np.asarray(ratio, dtype=float), hw.scale_out_bytes_per_s, bool(hw.superpod)))
    return out


def p_afd_over_bandwidth(model: Model, hardware: Hardware, budget: Budget, context: float, bandwidths,
                         precision: Precision = Precision(), assumptions: Assumptions = Assumptions()) -> np.ndarray:
    """P(AFD better) of :func:`afdlib.decision.verdict.verdict` for the device with its network at
    each of ``bandwidths`` (:func:`afdlib.decision.sweetspot.with_network`): the bandwidths x the
    kernel and network quadrature nodes are the cells of one search, and each bandwidth's verdict takes
    the communication jitter of its own best deployments (:func:`afdlib.decision.jitter.with_jitter`)."""
    bw = np.asarray(bandwidths, dtype=float)
    log_r, w, sd = quadrature(model, with_network(hardware, bw[:, None]), budget, context, precision,
                              assumptions, cells=bw.shape)
    ep, afd = compare(model, with_network(hardware, bw), budget, context, precision, assumptions, cell_shape=bw.shape)
    bests = [tuple(b.at(k).on(with_network(hardware, float(bw[k]))).deployment for b in (ep, afd))
             if float(ep.at(k).tokens_per_s_per_gpu) > 0 and float(afd.at(k).tokens_per_s_per_gpu) > 0 else None
             for k in range(bw.size)]
    return np.array([with_jitter(Verdict.of(log_r[k], w, sd[k]), model, bests[k], context, budget, precision,
                                 assumptions).p_afd for k in range(bw.size)])


@dataclass(frozen=True)
class Thresholds:
    """P(AFD better) of one pair over the bandwidths searched, and where it crosses the levels."""

    model: str
    device: str
    bandwidth: np.ndarray
    p_afd: np.ndarray
    own_bandwidth: float

    def above(self, level: float) -> list[tuple[float | None, float | None]]:
        """Stretches of bandwidth where P(AFD better) exceeds ``level``."""
        return lead_intervals(self.bandwidth, self.p_afd, level)

    @property
    def peak(self) -> tuple[float, float]:
        i = int(np.argmax(self.p_afd))
        return float(self.p_afd[i]), float(self.bandwidth[i])

    @property
    def at_own(self) -> float:
        """P(AFD better) at the bandwidth searched nearest the device's own."""
        return float(self.p_afd[int(np.argmin(np.abs(np.log(self.bandwidth / self.own_bandwidth))))])

    def grid_words(self) -> str:
        """The bandwidths searched: "2.5 to 2,560 GB/s, 41 bandwidths a factor 1.19 apart"."""
        step = self.bandwidth[1] / self.bandwidth[0]
        return (f"{_gb(self.bandwidth[0])} to {_gb(self.bandwidth[-1])} GB/s, {self.bandwidth.size} bandwidths "
                f"a factor {step:.2f} apart")

    def words(self) -> str:
        """Where AFD is the more likely design, where it would be decided, and where EP is decided."""
        lo, hi = self.bandwidth[0], self.bandwidth[-1]
        p, at = self.peak
        likely = interval_words(self.above(0.5), lo, hi)
        decided = self.above(1 - DECIDED)
        ep = lead_intervals(self.bandwidth, -self.p_afd, -DECIDED)   # P <= DECIDED
        ep_words = "nowhere in the range" if not ep else interval_words(ep, lo, hi)
        afd_words = (f"P reaches {1 - DECIDED:g} {interval_words(decided, lo, hi)}" if decided else
                     f"P never reaches {1 - DECIDED:g} (at most {p:.2f}, at {_gb(at)} GB/s): no bandwidth in the "
                     "range decides for AFD")
        return (f"AFD is the more likely design (P above 0.5) {likely}; {afd_words}; EP is decided (P at most "
                f"{DECIDED:g}) {ep_words}")


def probability_thresholds(model: Model, hardware: Hardware, budget: Budget, context: float,
                           factors=FACTORS, precision: Precision = Precision(),
                           assumptions: Assumptions = Assumptions()) -> Thresholds:
    """:class:`Thresholds` over ``factors`` x the device's network bandwidth (:data:`FACTORS`)."""
    bw = hardware.scale_out_bytes_per_s * np.asarray(factors, dtype=float)
    return Thresholds(model.name, hardware.name, bw,
                      p_afd_over_bandwidth(model, hardware, budget, context, bw, precision, assumptions),
                      hardware.scale_out_bytes_per_s)


# --- where the book departs from the paper ----------------------------------------------------------

def _row(claim: str, paper: str, book: str, reason: str, chapter: str, departs: bool) -> dict:
    return {"claim": claim, "paper": paper, "this book": book, "reason": reason, "chapter": chapter,
            "departs": bool(departs)}


def verdict_words(row: dict) -> str:
    """An advice-table row's verdict in words: "AFD (undecided), P(AFD better) = 0.54"."""
    p = f"P(AFD better) = {row['p_afd']:.2f}"
    return f"{row['recommendation']}, {p}" if row["decisive"] else f"{row['recommendation']} (undecided), {p}"


def reference_row(reference: dict, paper_like: float, spreads: str, model: str, device: str, lean: str = "",
                  superpod: bool = False) -> dict:
    """The paper's verdict for the reference device's kind against the reference pair's (``reference``: its
    advice-table row; ``paper_like``: its ratio with all communication hidden for both designs;
    ``lean``: how the model leans against aiconfigurator, :func:`afdlib.peers.comparison.lean_readings`):
    on ordinary clusters EP keeps the lead; on a Superpod (``superpod``) the paper finds AFD competitive,
    which a verdict decided for EP departs from."""
    agrees = (reference["decisive"] and reference["recommendation"] == "EP") if not superpod else \
        not (reference["decisive"] and reference["recommendation"] == "EP")
    why = (f"end to end the model's error in AFD / EP against published head-to-heads ({spreads}) enters the verdict"
           if reference["decisive"] else
           undecided_words(Verdict(reference["p_afd"], (reference.get("ratio_lo", np.nan),
                                                        reference.get("ratio_hi", np.nan)), np.nan), reference["ratio"]))
    claim, paper = ((f"AFD is competitive on a Superpod ({model} on {device})", "AFD competitive (coarse experts)")
                    if superpod else (f"EP keeps the lead on ordinary clusters ({model} on {device})",
                                      "EP: its grouped GEMMs' HFU above AFD's FFN-side ceiling"))
    return _row(claim, paper,
                f"{verdict_words(reference)}; AFD / EP {reference['ratio']:.2f} at the model's defaults",
                f"{why}; with all communication hidden for both designs (the paper's own models) the ratio is "
                f"{paper_like:.2f}: the answer turns on how much of each design's communication hides"
                + (f"; against NVIDIA aiconfigurator the model leans {lean}" if lean else ""),
                "sweet_spots", not agrees)


def decided_reading(rows: list[dict]) -> str:
    """What the decided verdicts of :func:`afdlib.decision.advise.advice_table` rows say, in words: "no
    verdict is decided", or how many are and for which design ("3 of 48 verdicts are decided, all for
    EP"; "... 2 for EP and 1 for AFD")."""
    decided = [r["recommendation"] for r in rows if r.get("decisive") and r["recommendation"] in ("EP", "AFD")]
    if not decided:
        return "no verdict is decided"
    ep, afd = decided.count("EP"), decided.count("AFD")
    which = (f"all for {'EP' if ep else 'AFD'}" if not (ep and afd) else f"{ep} for EP and {afd} for AFD")
    return f"{len(decided)} of {len(rows)} verdicts {'is' if len(decided) == 1 else 'are'} decided, {which}"


def recommendation_words(rows: list[dict], grid: str) -> str:
    """The landing page's opening recommendation for advice-table ``rows`` on ``grid`` (words naming
    the pairs): which pairs are decided and for which design (decided under both searches, off every
    search bound), and for the rest how the undecided split and why they stay undecided (the ratio's
    own error, :func:`afdlib.decision.uncertainty.decisive_band`)."""
    from afdlib.decision.head_to_head import ratio_error
    from afdlib.decision.uncertainty import NAMES, decisive_band, uncertainties
    ok = [r for r in rows if r["recommendation"] in ("EP", "AFD") and np.isfinite(r.get("ratio", np.nan))]
    decided = [r for r in ok if r.get("decisive")]
    rest = [r for r in ok if not r.get("decisive")]
    lo, hi = decisive_band()

    def name(r):
        return f"{r.get('model_name', r['model'])} on {r.get('hardware_name', r['hardware']).removeprefix('NVIDIA ')}"
    if decided:
        head = (f"For {grid}, the model decides {len(decided)} of {len(ok)} pairs: "
                + "; ".join(f"{r['recommendation']} for {name(r)} (AFD / EP {r['ratio']:.2f}, P(AFD better) "
                            f"{r['p_afd']:.2f})" for r in decided)
                + f"; {'it holds' if len(decided) == 1 else 'each holds'} under both the free search and the one held "
                  "to the forms published deployments validate.")
    else:
        head = f"For {grid}, the model decides none of the {len(ok)} pairs."
    if not rest:
        return head
    afd = sum(r["recommendation"] == "AFD" for r in rest)
    ratios = [r["ratio"] for r in rest]
    split = (f"AFD is the more likely in {afd} and EP in {len(rest) - afd}" if afd and afd < len(rest)
             else f"{'AFD' if afd else 'EP'} is the more likely in all of them")
    err, spread = ratio_error(), next(u.scale for u in uncertainties() if u.name == NAMES[6])
    return (f"{head} {'The other' if decided else 'All'} {len(rest)} stay undecided (AFD / EP {min(ratios):.2f} to {max(ratios):.2f} at the "
            f"model's defaults; {split}): with the model's own error in AFD / EP ({np.expm1(spread):.0%}, the "
            f"{err['confidence']:.0%} upper bound over {err['pairs']} published head-to-heads) a pair is decided only "
            f"below {lo:.2f} or above {hi:.2f}; for these, measure both designs on the deployment itself.")


def _lean_words(err: dict) -> str:
    """Which way the head-to-heads find the model leaning, from the signs of their log errors."""
    n = err["pairs"]
    every = "the one head-to-head finds" if n == 1 else "both head-to-heads find" if n == 2 else f"all {n} head-to-heads find"
    if err["signs"] in ([-1], [1]):
        higher, toward = ("higher", "EP") if err["signs"] == [-1] else ("lower", "AFD")
        return (f"{every} AFD / EP {higher} than the model predicts (mean log error {err['mean_log']:+.3f}): on "
                f"them the model leans toward {toward}, and the verdict does not correct for it")
    return "the head-to-heads' errors have both signs: no lean shows"


def verdict_glue(rows: list[dict]) -> dict[str, str]:
    """The numbers and words a chapter states about how its verdicts (``rows``: advice-table rows) are
    decided: the shared assumptions (``assumption_list``), the ratio's error and its band
    (``ratio_spread``, ``band_lo``, ``band_hi``), the head-to-heads behind it (``n_head_to_heads``,
    ``ratio_loso``: the rms leaving out each source), each design's own error (``spreads``) and what the
    decided verdicts say (``decided_reading``)."""
    from afdlib.decision.head_to_head import ratio_error
    from afdlib.decision.uncertainty import assumption_words, composition_spreads, decisive_band, ratio_spread_words
    from afdlib.decode.validation import design_spreads
    err, (lo, hi) = ratio_error(), decisive_band()
    own = min(s for s, _ in design_spreads().values())
    return {"assumption_list": assumption_words(), "ratio_spread": ratio_spread_words(), "band_lo": f"{lo:.2f}",
            "band_hi": f"{hi:.2f}", "n_head_to_heads": str(err["pairs"]), "n_sources": str(err["sources"]),
            "ratio_rms": f"{np.expm1(err['rms_log']):.0%}",
            "ratio_vs_designs": "smaller than" if err["rms_log"] < own else "no smaller than",
            "ratio_lean": _lean_words(err),
            "ratio_loso": "; ".join(f"{v:.3f} without {k}" for k, v in err["leave_one_source_out"].items()),
            "spreads": composition_spreads(), "decided_reading": decided_reading(rows)}


PAPER_CONDITIONS = {"Superpod-class interconnect": "Superpod-class interconnects favour AFD (the paper's Table 3)",
                    "coarse experts": "Coarse experts (large M) favour AFD (the paper's Table 3)",
                    "lower sparsity": "Lower sparsity (small E/K) favours AFD (the paper's Table 3)",
                    "heterogeneous hardware": "Heterogeneous hardware favours AFD (the paper's Table 3)"}
"""The paper's Table 3 conditions, by the name the sweet-spot chapter's study gives them."""


def condition_rows(table3) -> list[dict]:
    """The paper's Table 3 conditions as the sweet-spot chapter reads them, one home:
    :func:`afdlib.studies.conditions.table3_study`'s rows, joined per condition; a condition departs
    when any of its readings does (each reading says "agrees" or "departs, because ...")."""
    by: dict[str, list[str]] = {}
    for r in table3.rows():
        by.setdefault(r["condition (paper)"], []).append(r["reading"])
    return [_row(PAPER_CONDITIONS.get(name, name), "favours AFD", "; ".join(readings),
                 "each condition varied alone with both designs on one footing (the reference model's family at the "
                 "same total parameters, the Superpod's network on its own chip, both pool pairings); the readings "
                 "say where and why", "sweet_spots", any("departs" in x for x in readings))
            for name, readings in by.items()]


def method_rows(printed_alpha: float, corrected_alpha: float, nodes: str, paper_gap_s: float, gap_s: float,
                destinations_paper: float, destinations_book: float, destinations_case: str,
                layer_mismatches: list[tuple[str, int, int, int, int]], routing: str | None = None) -> list[dict]:
    """The departures in formulas and inputs: the penalty's constant (``printed_alpha`` and
    ``corrected_alpha`` without imbalance for ``nodes``, e.g. "8A2F"), the gap per step, the FFN nodes a
    token crosses to (paper's rule against the decode model's, for ``destinations_case``) and the
    catalogue's models whose printed layers do not add up ((name, layers, dense, MoE as printed, MoE of the
    reference profile)); ``routing``: what the routing chapter's data are (None: its reading,
    :func:`afdlib.routing.provenance.routing_data`, "measured routing" or the shipped fits)."""
    if routing is None:
        from afdlib.routing.provenance import routing_data
        routing = routing_data().readings()["routing"]
    rows = [
        _row("AFD's imbalance penalty (Section 3.3)", f"c = λ + 1: α = {printed_alpha:g} without imbalance ({nodes})",
             f"c = (N_A + N_F) / N_A: α = {corrected_alpha:g} without imbalance",
             "a penalty is 1 without imbalance; the corrected constant is also the one that makes the floor and "
             "ceiling forms equal the exact form where σ N_A is whole", "fig6_penalty", printed_alpha != corrected_alpha),
        _row("Imbalance penalises AFD more than EP (Fig. 5-6)", "at equal σ for both designs",
             f"each design at its own σ from {routing}, compared at the same GPUs and tokens per GPU",
             f"the paper takes one σ for both; {routing} gives each design its own (AFD's few FFN GPUs hold "
             "many expert slots each), AFD's α moves in whole attention nodes, and DP imbalance is not in the data",
             "sigma_from_routing", True),
        _row("Fixed gap per step t_g (Eq. 1)", f"{paper_gap_s * 1e3:g} ms",
             f"{gap_s * 1e3:g} ms in the end-to-end decode model (the paper's in the HFU-bound chapters)",
             "the paper's gap also holds the dense layers, which the decode model computes; its default is the "
             "upper end that Step-3's published figures allow", "decode_validation", paper_gap_s != gap_s),
        _row("FFN nodes a token crosses to (two-stage forwarding)", "every node, up to K: min(K, N_F)",
             f"{destinations_book:.2f} expected for {destinations_case} (paper: {destinations_paper:g})",
             f"under uniform routing a token's K experts fall on fewer distinct nodes; the paper's count "
             f"overstates AFD's traffic by {destinations_paper / destinations_book - 1:.0%} there (the HFU-bound "
             "chapters keep it, the conservative rule)", "appendix_a_ceiling", destinations_paper != destinations_book),
    ]
    rows += [_row(f"{name}'s layers (the paper's Table 4)", f"{moe} MoE and {dense} dense of {layers} layers",
                  f"{ref} MoE layers in the reference profile", "dense and MoE layers add up to the layers",
                  "configurations", moe != ref) for name, layers, dense, moe, ref in layer_mismatches]
    return rows


def layer_mismatches(slugs: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The models of ``slugs`` whose paper profile's dense and MoE layers do not add up to its layers:
    (name, layers, dense, MoE as printed, MoE of the reference profile)."""
    from afdlib.inputs.catalog import load_model
    out = []
    for slug in slugs:
        p, r = load_model(slug, profile="paper"), load_model(slug, profile="reference")
        if p.dense_layers + p.moe_layers != p.num_layers:
            out.append((p.name, p.num_layers, p.dense_layers, p.moe_layers, r.moe_layers))
    return out


def condition_table_rows(windows: list[Window], pools: list[tuple[str, str]]) -> list[dict]:
    """The conditions table: per :class:`Window` where AFD leads along the network bandwidth and its
    largest ratio there; then each heterogeneous pairing's price window (``pools``: (pairing, reading))."""
    rows = [{"condition": f"{w.model}: {'fabric' if w.superpod else 'NIC'} bandwidth per GPU, {w.device} "
                          f"(now {_gb(w.own_bandwidth)} GB/s)",
             "where AFD / EP > 1": "ratio above 1 " + w.words(),
             "largest AFD / EP": f"{w.peak[0]:.2f} at {_gb(w.peak[1])} GB/s"} for w in windows]
    rows += [{"condition": pairing, "where AFD / EP > 1": f"per output token, {reading}", "largest AFD / EP": "-"}
             for pairing, reading in pools]
    return rows


def pairing_readings(pool_rows: list[dict], attention: Hardware, ffn: Hardware) -> list[tuple[str, str, bool]]:
    """For the heterogeneous pairing (``attention`` attention GPUs, ``ffn`` FFN GPUs) and the reverse
    one: (label, :func:`afdlib.studies.sweetspot_study.heterogeneous_price_reading`, whether some price
    makes it cheaper than EP on either device alone), from :func:`afdlib.studies.sweetspot_study.pools_rows`."""
    import re

    from afdlib.decode.search import AFD_NODES
    from afdlib.studies.sweetspot_study import heterogeneous_design, heterogeneous_price_reading, heterogeneous_prices
    out = []
    for a, f in ((attention, ffn), (ffn, attention)):
        low, high = heterogeneous_prices(pool_rows, a.slug, f.slug)
        design = heterogeneous_design(pool_rows, a.slug, f.slug)
        nodes = [int(x) for x in re.findall(r"(\d+)[AF] ", design + " ")]
        bound = f" (on the search's bound of {AFD_NODES[-1]} nodes per pool)" if AFD_NODES[-1] in nodes else ""
        out.append((f"{design}: {a.name} attention, {f.name} FFN GPUs{bound}",
                    heterogeneous_price_reading(pool_rows, a, f), bool(low < high)))
    return out


def departure_table(pairs: list[dict], equal: list[dict], table3, model: Model, ordinary: Hardware,
                    slugs: list[str]):
    """Every row of the departures table (column ``departs``: whether this build's reading departs from
    the paper): ``pairs`` and ``equal`` advice tables (the schedule's overlap, and all communication
    hidden for both designs) holding ``model`` on ``ordinary``, the sweet-spot chapter's Table 3
    study (:func:`afdlib.studies.conditions.table3_study`), and the paper's models ``slugs`` (their
    printed layers)."""
    import pandas as pd

    from afdlib.analysis.imbalance import alpha_afd, alpha_afd_as_printed
    from afdlib.decode.step import DECODE_T_GAP_S
    from afdlib.studies.sweetspot_study import ratio_of
    from afdlib.decision.uncertainty import ratio_spread_words
    from afdlib.evaluator.alltoall import afd_destinations
    k, e = model.experts_per_token, model.routed_experts
    ref = next(r for r in pairs if (r["model"], r["hardware"]) == (model.slug, ordinary.slug))
    from afdlib.peers.comparison import lean_readings
    rows = ([reference_row(ref, ratio_of(equal, model.slug, ordinary.slug), ratio_spread_words(), model.name,
                           ordinary.name, lean_readings()["aic_lean"], bool(np.all(ordinary.superpod)))]
            + condition_rows(table3)
            + method_rows(float(alpha_afd_as_printed(1.0, 8, 2)), float(alpha_afd(1.0, 8, 2).alpha), "8A2F",
                          Budget().t_gap_s, DECODE_T_GAP_S, float(afd_destinations("paper", k, e, k)),
                          float(afd_destinations("expected", k, e, k)), f"{model.name} at N_F = K = {k}",
                          layer_mismatches(slugs)))
    return pd.DataFrame(rows)


def landing_note(measured: bool) -> str:
    """The landing page's pointer to the routing chapter's section, worded for the data the build ran on."""
    if measured:
        return ("the raw files are not redistributed: a clone runs on the shipped fits, and the routing chapter "
                "lists which of its findings differ there")
    return ("this build ran without the raw files, on the shipped fits, and the routing chapter lists which of its "
            "findings differ from the raw files' and by how much")
