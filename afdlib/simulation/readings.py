"""What the pipeline studies say: the numbers the pipeline chapter quotes and its table.

Each function reads a study (:func:`afdlib.simulation.studies.ideal_sweep` or
:func:`afdlib.simulation.studies.jitter_study` as a DataFrame) or runs a small one, and returns a
dict of the values the prose quotes, keyed by the chapter's glue names and formatted as quoted
(strings; counts stay ``int``), or a table. Stage times in the studies are in us, times here in s.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from afdlib.analysis.schedule import constant_step
from afdlib.decode.deployment import Deployment, decode_step
from afdlib.decode.search import AFD_MICRO_BATCHES
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget
from afdlib.evaluator.attention import attention_kernels
from afdlib.routing.measured import moe_layers
from afdlib.simulation.pipeline import Jitter, attention_cv, simulate
from afdlib.simulation.studies import megascale_min_microbatches

MICRO_BATCHES = AFD_MICRO_BATCHES
"""The AFD micro-batch counts the chapter compares (2BO, 3BO, 4BO): the search's."""

PAPER_T_GAP_S = Budget.t_gap_s
"""The paper's fixed gap per step t_g (15 ms, :class:`afdlib.inputs.specs.Budget`'s default), against
which the extra kernels are weighed."""


def bubble_shares(micro_batches=(2, 3), n_layers: int = 200) -> dict:
    """Equal stages t_a = t_f = t_c: the attention pool's idle share over ``n_layers`` layers
    with each micro-batch count (2BO: about a third, the paper's Figure 1(b) bubble; 3BO: the fill
    and drain only)."""
    return {f"bubble_{m}": f"{float(constant_step('afd', 1.0, 1.0, 1.0, m, n_layers).idle_share('attention')):.1%}"
            for m in micro_batches}


def mva_readings(micro_batches=MICRO_BATCHES) -> dict:
    """Three equal stages with exponential times (CV = 1), m micro-batches in the cycle: mean-value
    analysis gives a throughput of m / (m + 2) per stage time, against min(1, m / 3) without
    jitter; the throughput and the relative loss 1 - (m / (m + 2)) / min(1, m / 3)."""
    out = {}
    for m in micro_batches:
        rate = m / (m + 2)
        out[f"mva_{m}"] = f"{rate:.2f}"
        out[f"mva_loss_{m}"] = f"{1 - rate / min(1, m / 3):.0%}"
    return out


def _at_cv(table: pd.DataFrame, cv: float) -> pd.DataFrame:
    rows = table[np.isclose(table.cv, cv)]
    if rows.empty:
        raise AfdError(f"the study has no CV {cv:g}; CVs: {', '.join(f'{c:g}' for c in sorted(set(table.cv)))}")
    return rows


def ideal_readings(ideal: pd.DataFrame, cv: float = 0.2, micro_batches=MICRO_BATCHES) -> dict:
    """Equal stages under jitter (:func:`afdlib.simulation.studies.ideal_sweep`): at ``cv`` each
    micro-batch count's loss and throughput (jitter-free 3BO = 1), where the loss peaks and which
    count delivers the most (each worded for its outcome), 3BO's jitter-free throughput, and 3BO's loss at the smallest CV above zero (glued as ``ideal_loss_3_005``) with that CV."""
    at = _at_cv(ideal, cv).set_index("micro_batches")
    const = _at_cv(ideal, 0.0).set_index("micro_batches")
    small_cv = float(ideal.cv[ideal.cv > 0].min())
    small = _at_cv(ideal, small_cv).set_index("micro_batches")
    out = {}
    for m in micro_batches:
        out[f"ideal_loss_{m}"] = f"{at.throughput_loss[m]:.1%}"
        out[f"ideal_thr_{m}"] = f"{at.throughput[m]:.2f}"
    worst = max(micro_batches, key=lambda m: at.throughput_loss[m])
    out["ideal_peak"] = ("the relative loss peaks at three micro-batches, as the paper says" if worst == 3 else
                         f"the relative loss is largest at {worst} micro-batches, not three as the paper says")
    thr = [at.throughput[m] for m in micro_batches]
    top = micro_batches[int(np.argmax(thr))]
    out["ideal_more"] = ("in absolute terms more micro-batches still deliver more" if all(np.diff(thr) > 0) else
                         f"in absolute terms {top}BO delivers the most")
    out["ideal_order"] = ("the same ordering" if worst == 3 and all(np.diff(thr) > 0) else
                          f"another ordering ({out['ideal_peak']}; {out['ideal_more']})")
    out.update({"ideal_thr_3_const": f"{const.throughput[3]:.2f}",
                "ideal_loss_3_005": f"{small.throughput_loss[3]:.1%}", "ideal_small_cv": f"{small_cv:g}"})
    return out


def layer_sample(counts: np.ndarray, n_layers: int = 15) -> np.ndarray:
    """``n_layers`` of the measured MoE layers' expert loads (rows of ``counts``), evenly spread
    from the first to the last (first and last included), to keep the straggler sampling quick."""
    layers = moe_layers(counts)
    return counts[layers[np.linspace(0, layers.size - 1, n_layers).round().astype(int)]]


def _value(frame: pd.DataFrame, m: int, cv: float, column: str) -> float:
    hit = frame[(frame.micro_batches == m) & np.isclose(frame.cv, cv)][column]
    if hit.empty:
        raise AfdError(f"the study has no row for {m} micro-batches at CV {cv:g}")
    return float(hit.iloc[0])


def best_afd_crossing(study: pd.DataFrame) -> tuple[float | None, tuple[float, int, float] | None]:
    """Up to which CV 3BO is still the AFD deployment with the most tokens/s per GPU within the
    SLO (None: at no CV), and at the next CV the micro-batch count that overtakes it with its lead
    (best / 3BO - 1), or None when 3BO stays best on the whole grid (or never is)."""
    afd = study[study.design == "afd"]
    best_m = afd.loc[afd.groupby("cv").tokens_per_s_per_gpu_slo.idxmax()].set_index("cv").micro_batches
    still = [cv for cv, m in best_m.items() if m == 3]
    after = [(cv, m) for cv, m in best_m.items() if still and cv > max(still)]
    if not after:
        return (max(still) if still else None), None
    cv_a, m_a = after[0]
    lead = _value(afd, m_a, cv_a, "tokens_per_s_per_gpu_slo") / _value(afd, 3, cv_a, "tokens_per_s_per_gpu_slo") - 1
    return max(still), (cv_a, m_a, lead)


def deployment_readings(study: pd.DataFrame) -> dict:
    """The best deployments under jitter (:func:`afdlib.simulation.studies.jitter_study`): per
    AFD micro-batch count at CV 0.1, 0.2 and 0.3 (those in the study) the loss, tokens/s per GPU
    and batch within the SLO, 3BO's TPOT (also at CV 0); which micro-batch count has the fewest
    tokens/s within the SLO at each CV (``dep_last``); the routing stragglers' spread and loss; EP's
    largest loss and its loss with one batch. The conclusions drawn from them: :func:`deployment_headlines`."""
    afd, ep = study[study.design == "afd"], study[study.design == "ep"]
    out = {}
    for cv, tag in ((0.1, "01"), (0.2, "02"), (0.3, "03")):
        if np.isclose(study.cv, cv).any():
            for m in MICRO_BATCHES:
                out[f"dep_loss_{m}_{tag}"] = f"{_value(afd, m, cv, 'throughput_loss'):.1%}"
                out[f"dep_slo_{m}_{tag}"] = f"{_value(afd, m, cv, 'tokens_per_s_per_gpu_slo'):,.0f}"
                out[f"dep_batch_{m}_{tag}"] = f"{_value(afd, m, cv, 'batch_slo'):.0f}"
            out[f"dep_tpot_3_{tag}"] = f"{_value(afd, 3, cv, 'tpot_ms'):.1f}"
    for m in MICRO_BATCHES:
        out[f"dep_slo_{m}_00"] = f"{_value(afd, m, 0.0, 'tokens_per_s_per_gpu_slo'):,.0f}"
        out[f"dep_batch_{m}_00"] = f"{_value(afd, m, 0.0, 'batch_slo'):.0f}"
    out["dep_tpot_3_00"] = f"{_value(afd, 3, 0.0, 'tpot_ms'):.1f}"
    last = afd.loc[afd.groupby("cv").tokens_per_s_per_gpu_slo.idxmin()].set_index("cv").micro_batches
    out["dep_last"] = (f"the best {last.iloc[0]:.0f}BO deployment comes last at every CV" if last.nunique() == 1
                       else "the last at each CV: " + ", ".join(f"{m:.0f}BO at {cv:g}" for cv, m in last.items()))
    out.update({"straggler_cv": f"{study.straggler_cv.min():.1%}-{study.straggler_cv.max():.1%}",
                "straggler_loss": f"{afd[afd.cv == 0].throughput_loss.max():.2%}",
                "ep_loss_max": f"{ep.throughput_loss.max():.1%}", "ep_loss_words": ep_loss_words(ep),
                "ep_loss_1": f"{ep[ep.micro_batches == 1].throughput_loss.abs().max():.2%}"})
    return out


def slo_edge_words(study: pd.DataFrame, slo_ms: float) -> str:
    """How far the simulator's fill and drain take a deployment found at the SLO's edge past the SLO
    without jitter (the study's CV-0 rows, their ``tpot_ms``): "by up to 9.6% (EP64)", or that none does."""
    at0 = study[np.isclose(study.cv, 0.0)]
    over = at0.tpot_ms / slo_ms - 1.0
    if not len(at0) or float(over.max()) <= 0:
        return "none of these deployments does"
    worst = at0.loc[over.idxmax()]
    label = (f"EP{int(worst.ep_size)}" if worst.design == "ep" else f"{int(worst.n_attn)}A{int(worst.n_ffn)}F "
             f"{int(worst.micro_batches)}BO")
    return f"here by up to {float(over.max()):.1%} ({label})"


def ep_loss_words(ep: pd.DataFrame) -> str:
    """What jitter costs EP's overlap over the study's CVs (its rows; columns micro_batches, throughput_loss):
    "EP's two-batch overlap loses at most 1.2% over the same range", or nothing measurable, or that EP's best
    deployments run one micro-batch (no overlap to break)."""
    loss = float(ep.throughput_loss.max()) if len(ep) else 0.0
    one, many = (ep.micro_batches == 1).all(), (ep.micro_batches >= 2).all()
    who = ("EP's two-batch overlap loses" if many else
           "EP's best deployment, one micro-batch with nothing overlapped to break, loses" if one else
           "EP's deployments, with one micro-batch and with two, lose")
    return (f"{who} at most {loss:.1%} over the same range" if round(loss, 3) > 0 else
            f"{who} nothing measurable over the same range (under 0.05%)")


def deployment_headlines(study: pd.DataFrame, same_shape: dict, tie: float = 0.02) -> dict:
    """The pipeline chapter's conclusions about the best deployments under jitter, each worded for the
    outcome the study's own numbers give (``same_shape``: :func:`same_shape_tpot`'s): which AFD
    micro-batch count loses most at CV 0.2 (the largest CV studied below it where 0.2 is not) and whether
    that is 3BO, as the paper says (the paper's reason given only then); which delivers the most tokens/s
    within the SLO at moderate jitter (CV 0.1 and 0.2); 3BO's batch under jitter; up to which CV 3BO
    is the best AFD choice and what overtakes it next (a lead below ``tie`` is called a tie); whether 4BO absorbs jitter better and starts behind or ahead; whether EP
    loses less than every AFD deployment, and whether its two-batch network stage has slack."""
    afd, ep = study[study.design == "afd"], study[study.design == "ep"]
    cvs = sorted({float(c) for c in afd.cv})
    moderate = [c for c in cvs if 0 < c <= 0.2 + 1e-9] or [max(cvs)]
    at = moderate[-1]
    loss = {m: _value(afd, m, at, "throughput_loss") for m in MICRO_BATCHES}
    worst = max(loss, key=loss.get)
    why = (" The search for the best deployment makes the stages nearly equal for every micro-batch count; with "
           "three micro-batches on equal stages nothing is spare, while 2BO has its bubble and 4BO a queued micro-batch.")
    out = {"dep_fragile": (f"3BO is the most fragile, as the paper says (CV {at:g})." if worst == 3 else
                           f"{worst}BO is the most fragile here (CV {at:g}), not 3BO as the paper says."),
           "dep_fragile_why": why if worst == 3 else ""}
    best = {c: max(MICRO_BATCHES, key=lambda m: _value(afd, m, c, "tokens_per_s_per_gpu_slo")) for c in moderate}
    everywhere = {max(MICRO_BATCHES, key=lambda m: _value(afd, m, c, "tokens_per_s_per_gpu_slo"))
                  for c in sorted(set(afd.cv))}
    names = " and ".join(f"{c:g}" for c in moderate)
    where = "at every CV studied" if len(everywhere) == 1 else f"at moderate jitter (CV {names})"
    if set(best.values()) == {3}:
        out["dep_most"] = f"3BO still delivers the most AFD throughput {where}."
    elif len(set(best.values())) == 1:
        out["dep_most"] = f"{best[moderate[0]]}BO, not 3BO, delivers the most AFD throughput {where}."
    else:
        out["dep_most"] = ("The most AFD throughput at moderate jitter comes from "
                           + " and ".join(f"{m}BO at CV {c:g}" for c, m in best.items()) + ".")
    b0, b1 = _value(afd, 3, 0.0, "batch_slo"), _value(afd, 3, max(cvs), "batch_slo")
    out["dep_batch_3"] = (f"batch {b0:.0f} at every CV" if b0 == b1 else
                          f"batch {b0:.0f} {'shrinking' if b1 < b0 else 'growing'} to {b1:.0f}")
    cross, after = best_afd_crossing(study)
    if cross is None:
        lead = max(MICRO_BATCHES, key=lambda m: _value(afd, m, 0.0, "tokens_per_s_per_gpu_slo"))
        out["dep_choice"] = f"it is not the best AFD choice at any CV studied (the best {lead}BO deployment leads without jitter)"
    else:
        out["dep_choice"] = ((f"it is the best AFD choice up to CV {cross:g}" if cross > 0 else
                              "it is the best AFD choice only without jitter (CV 0)")
                             + (" on the whole grid" if after is None else
                                f"; at CV {after[0]:g} the best {after[1]:.0f}-micro-batch deployment is {after[2]:.1%} ahead"
                                + (", a tie within the simulation's noise" if after[2] < tie else "")))
    absorbs = _value(afd, 4, at, "throughput_loss") < loss[3]
    gap = 1 - _value(afd, 4, 0.0, "tokens_per_s_per_gpu_slo") / _value(afd, 3, 0.0, "tokens_per_s_per_gpu_slo")
    behind = gap > 0
    costs = float(same_shape["same_shape_4"]) > float(same_shape["same_shape_3"])
    out["dep_4"] = (f"4BO absorbs jitter {'better' if absorbs else 'no better'} {'but' if absorbs == behind else 'and'} "
                    f"starts {abs(gap):.0%} {'behind' if behind else 'ahead'} without any"
                    + (": each extra micro-batch re-reads the experts' weights and pays every kernel's fixed cost again "
                       f"(at the 3BO deployment's own shape and batch, four micro-batches take {same_shape['same_shape_4']} ms "
                       f"per token in the decode model instead of {same_shape['same_shape_3']})" if behind and costs else ""))
    top = max(cvs)
    robust = ep.throughput_loss.max() < min(_value(afd, m, top, "throughput_loss") for m in MICRO_BATCHES)
    out["ep_robust"] = ("EP is robust in relative terms." if robust else
                        "EP is not more robust than AFD here in relative terms.")
    two = ep[(ep.micro_batches == 2) & (ep.cv == 0)]
    comm, compute = ((float(two.t_comm_us.iloc[0]), float(two.t_attn_us.iloc[0] + two.t_ffn_us.iloc[0]))
                     if not two.empty else (np.nan, np.nan))
    out["ep_slack"] = ("" if not np.isfinite(comm + compute) else      # no two-batch EP studied: not said
                       "With two micro-batches the network stage has slack behind the GPUs' compute." if comm < compute
                       else "With two micro-batches the network stage sets the pace, so its jitter shows in the step.")
    return out


def _config(deployments: list[Deployment], design: str = "afd", micro_batches: int = 3) -> Deployment:
    hit = [d for d in deployments if d.design == design and d.micro_batches == micro_batches]
    if not hit:
        raise AfdError(f"no {design.upper()} deployment with {micro_batches} micro-batches among the configurations")
    return hit[0]


def same_shape_tpot(model, budget, context: float, deployments: list[Deployment], micro_batches=(3, 4)) -> dict:
    """The decode model's TPOT (ms) of the best 3BO deployment's shape and batch (``deployments``,
    as :func:`afdlib.simulation.studies.best_deployments` returns them) run with each micro-batch
    count: what an extra micro-batch costs at the same deployment."""
    d = _config(deployments)

    def tpot_ms(m: int) -> float:
        return float(decode_step(model, replace(d, micro_batches=m), context, budget).tpot_s) * 1e3

    return {f"same_shape_{m}": f"{tpot_ms(m):.1f}" for m in micro_batches}


def _three_bo(study: pd.DataFrame) -> pd.Series:
    """The study's row of the best 3BO AFD deployment without other noise (CV 0)."""
    afd = study[study.design == "afd"]
    return afd[(afd.micro_batches == 3) & (afd.cv == 0)].iloc[0]


def context_readings(model, study: pd.DataFrame, steps: int, seed: int, context_cv: float = 1.0) -> dict:
    """Varying context lengths at the best 3BO deployment: with each request's cached length
    varying by ``context_cv`` (1: about an exponential distribution), the attention stage's CV
    over a micro-batch's requests (:func:`afdlib.simulation.pipeline.attention_cv`) and the loss
    it alone causes in the simulator."""
    row = _three_bo(study)
    requests = int(round(row.requests / 3))
    cv_attn = float(attention_cv(context_cv, requests))
    sim = simulate("afd", row.t_attn_us * 1e-6, row.t_ffn_us * 1e-6, row.t_comm_us * 1e-6, 3, model.moe_layers,
                   steps, Jitter(cv_attn=cv_attn), seed)
    return {"ctx_cv": f"{context_cv:g}", "ctx_requests": requests, "ctx_attn_cv": f"{cv_attn:.2f}",
            "ctx_loss": f"{float(sim.throughput_loss):.1%}"}


def kernel_readings(model, study: pd.DataFrame, deployments: list[Deployment], fixed_us: float,
                    what_if_us: float = 10.0) -> dict:
    """3BO's extra kernels: the attention side's kernels per layer and micro-batch, and what a
    third micro-batch adds per step, L x k_attn x cost (ms, and as a share of the paper's t_g), at
    the kernel profile's fixed cost ``fixed_us`` (keys ``*_fit``) and at ``what_if_us`` (keys
    ``*_what_if``);
    MegaScale-Infer's m >= 2 (1 + T_c / T_f) at the best 3BO deployment with T_c each way (half our
    round trip t_c) and with the paper's one-lane t_c."""
    k_attn = attention_kernels(model)
    out = {}
    for tag, us in (("fit", fixed_us), ("what_if", what_if_us)):
        extra = model.num_layers * k_attn * us * 1e-6
        out[f"kernel_{tag}_us"] = f"{us:.2g}"
        out[f"extra_kernels_{tag}"] = f"{extra * 1e3:.1f}"
        out[f"extra_kernels_{tag}_share"] = f"{extra / PAPER_T_GAP_S:.0%}"
    d, row = _config(deployments), _three_bo(study)
    out.update({"k_attn": k_attn, "n_all_layers": model.num_layers,
                "ms_rule": f"{megascale_min_microbatches(row.t_comm_us / 2, row.t_ffn_us):.1f}",
                "ms_rule_one_lane": f"{megascale_min_microbatches(row.t_comm_us, row.t_ffn_us):.1f}",
                "cfg3": d.label})
    return out


def deployment_table(study: pd.DataFrame) -> pd.DataFrame:
    """Table 1: per deployment (with its micro-batches and batch per (attention) GPU) and CV, the stage
    times, the mean TPOT with and without jitter and its p99, the loss, the bubbles and the largest batch
    within the SLO with its tokens/s per GPU; compact cells (no spaces inside a group of numbers) and seven
    columns, so that the table fits the page."""
    s = study
    return pd.DataFrame({
        "deployment": [(f"AFD {r.n_attn:.0f}A{r.n_ffn:.0f}F" if r.design == "afd" else f"EP{r.ep_size:.0f} ({r.kernels})")
                       + f", {r.micro_batches:.0f} µb, batch {r.requests:.0f}" for r in s.itertuples()],
        "CV": s.cv.map("{:.1f}".format),
        "t_a/t_f/t_c µs": [f"{a:.0f}/{f:.0f}/{c:.0f}" for a, f, c in zip(s.t_attn_us, s.t_ffn_us, s.t_comm_us)],
        "TPOT ms: mean (no jitter), p99": [f"{t:.1f} ({c:.1f}), {p:.1f}"
                                           for t, c, p in zip(s.tpot_ms, s.tpot_const_ms, s.p99_tpot_ms)],
        "loss": [f"{round(x, 3) + 0.0:.1%}" for x in s.throughput_loss],     # no "-0.0%"
        "bubbles attn/FFN": [f"{a:.0%}/{f:.0%}" if d == "afd" else f"{a:.0%} (GPU)"
                             for a, f, d in zip(s.bubble_attn, s.bubble_ffn, s.design)],
        "within the SLO: batch, tok/s/GPU": [f"{b:.0f}, {t:,.0f}"
                                             for b, t in zip(s.batch_slo, s.tokens_per_s_per_gpu_slo)]})


def ep_model_readings(model, budget, context: float, study: pd.DataFrame, deployments: list[Deployment]) -> dict:
    """EP in the simulator and in the decode model: the largest relative difference between the
    simulator's jitter-free TPOT and the decode model's (both schedule EP's micro-batches), and the
    share of the all-to-all the decode model's schedule hides at the best two-batch EP deployment."""
    ep = study[(study.design == "ep") & (study.cv == 0)]
    gap, hidden = 0.0, None
    for d in (d for d in deployments if d.design == "ep"):
        st = decode_step(model, d, context, budget)
        sim = float(ep[ep.micro_batches == d.micro_batches].tpot_const_ms.iloc[0])
        gap = max(gap, abs(sim / (float(st.tpot_s) * 1e3) - 1))
        if d.micro_batches == 2:
            hidden = float(st.hidden_share)
    if hidden is None:
        raise AfdError("no EP deployment with 2 micro-batches among the configurations")
    return {"ep_sim_gap": f"{gap:.1%}", "ep_hidden_2": f"{hidden:.0%}"}


def validation_ep_readings(cases=None) -> dict:
    """What the validation chapter finds for EP (:func:`afdlib.decode.validation.validation_rows`,
    default assumptions): how many EP cases the decode model over-predicts, of how many, and the
    range of their errors."""
    from afdlib.decode.validation import validation_rows

    errors = [r["error"] for r in validation_rows(cases) if r["design"] == "ep"]
    return {"val_ep_over": sum(e > 0 for e in errors), "val_ep_n": len(errors),
            "val_ep_range": f"{min(errors):+.0%} to {max(errors):+.0%}"}
