"""What the validation chapter quotes, computed from its tables: the error summary, where EP's
all-to-all binds, the band of the overlap what-ifs, the DeepEP check, and the readings of the
sensitivity table for the cases the chapter discusses. Text values, formatted as the chapter prints
them (the chapter glues them as they are)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from afdlib.decode.step import Assumptions
from afdlib.decode.validation import OVERLAP_ALL, OVERLAP_NONE, Case, predict
from afdlib.evaluator.alltoall import distinct_destinations
from afdlib.inputs.catalog import load_hardware, load_model

STEP3, JUNE, SEPT = ("step3-h800-2a2f", "deepseek-v3-gb200-ep48-sglang-june",
                     "deepseek-v3-gb200-ep48-sglang-september")
XDS_EP, XDS_AFD = ("deepseek-r1-cloudmatrix384-xdeepserve-colocated", "deepseek-r1-cloudmatrix384-xdeepserve-afd")
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'one AFD deployment', 'two AFD deployments' (digits from ten on)."""
    word = NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else f"{n:,}"
    return f"{word} {noun if n == 1 else plural or noun + 's'}"


def afd_case_readings(table: pd.DataFrame) -> dict:
    """The AFD cases in words: how many (``afd_cases``: 'one AFD deployment, Step-3, reads' / 'two AFD
    deployments: Step-3 reads'), and every one but Step-3 with its error (``afd_others``, empty where
    Step-3 is the only one)."""
    afd = table[table.design == "afd"]
    others = afd[afd.case != STEP3]
    lead = (f"{counted(len(afd), 'AFD deployment')}, Step-3, reads" if len(afd) == 1
            else f"{counted(len(afd), 'AFD deployment')}: Step-3 reads")
    return {"afd_cases": lead,
            "afd_others": "".join(f"; {lab} reads {e:+.1%}" for lab, e in zip(others.label, others.error))}


def xdeepserve_readings(table: pd.DataFrame, cases: dict[str, Case]) -> dict:
    """xDeepServe's pair on CloudMatrix384 (both cases per die): each error, the colocated run's step as
    published (requests x tokens per step / published rate) and as predicted, its all-to-all per layer
    as the model has it and as the paper measured it (the dispatch and combine means of
    ``data/jitter.yaml``), and the AFD run's form and hidden share."""
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    calls_us = read_yaml(data_dir() / "jitter.yaml")["calls_us"]
    by = table.set_index("case")
    if XDS_EP not in by.index or XDS_AFD not in by.index:
        return {}
    ep, afd, f = by.loc[XDS_EP], by.loc[XDS_AFD], cases[XDS_EP].facts
    step_pub = float(f["batch_per_gpu"]) * float(f["l_accept"]) / ep.published
    measured = float(calls_us["dispatch"]["mean"]) + float(calls_us["combine"]["mean"])
    return {"xds_ep_err": f"{ep.error:+.1%}", "xds_afd_err": f"{afd.error:+.1%}",
            "xds_ep_step": f"{ep.tpot_ms * float(f['l_accept']):.0f} ms", "xds_ep_step_published": f"{step_pub * 1e3:.0f} ms",
            "xds_comm_model": f"{ep.t_comm_us:.0f} us", "xds_comm_measured": f"{measured:.0f} us",
            "xds_comm_factor": f"{measured / ep.t_comm_us:.1f}",
            "xds_afd_form": f"{int(cases[XDS_AFD].facts['domains'])} attention domains of {int(afd.micro_batches)} micro-batches",
            "xds_afd_hidden": f"{afd.hidden_share:.0%}"}
ONLINE, PROFILE, H100 = ("deepseek-v3-h800-ep144-online", "deepseek-v3-h800-ep128-profile",
                         "deepseek-v3-h100-ep72-sglang")


def signed(x: float, digits: int = 0) -> str:
    """A signed percentage, with no minus sign on a value that rounds to zero."""
    text = f"{x:+.{digits}%}"
    return text.replace("-", "+") if float(text.rstrip("%")) == 0 else text


def _span(lo: float, hi: float, fmt: str = "+.0%") -> str:
    """'lo to hi', or one value where both read the same (a single case)."""
    a, b = format(lo, fmt), format(hi, fmt)
    return a if a == b else f"{a} to {b}"


def _ep_published(table: pd.DataFrame) -> pd.DataFrame:
    """The EP cases whose batch is published or derived from published figures."""
    return table[(table.design == "ep") & table.batch_from.isin(["published", "derived"])]


def summary_readings(table: pd.DataFrame, before: pd.DataFrame) -> dict:
    """The errors (now, and with the datasheet kernels in ``before``), the EP cases with a published
    batch, their scheduled shares and the what-if band, the AFD cases' band, whether every case's
    prediction lies inside its band, and where EP's all-to-all is longer than the layer's compute."""
    err, ep_pub = table.error.abs(), _ep_published(table)
    inside = ((ep_pub.band_low <= ep_pub.published) & (ep_pub.published <= ep_pub.band_high)).all()
    ep = table[table.design == "ep"]
    nic = ep[ep.t_comm_us > ep.t_attn_us + ep.t_ffn_us]
    margin = nic.t_comm_us / (nic.t_attn_us + nic.t_ffn_us) - 1
    rel_lo, rel_hi = ep_pub.band_low / ep_pub.published - 1, ep_pub.band_high / ep_pub.published - 1
    over, beyond = ep[ep.error > 0], table[err > 0.20].sort_values("error", key=abs, ascending=False)
    afd = table[table.design == "afd"]
    within = ((table.band_low <= table.predicted * (1 + 1e-9)) & (table.predicted <= table.band_high * (1 + 1e-9))).all()
    return {"n_ep": len(ep), "n_ep_over": len(over),
            "ep_over_range": _span(over.error.min(), over.error.max()) if len(over) else "none",
            "ep_under": ", ".join(f"{e:+.1%}" for e in ep[ep.error <= 0].error) or "none",
            "afd_errors": ", ".join(f"{e:+.1%}" for e in table[table.design == "afd"].error),
            "n_beyond_20": len(beyond),
            "beyond_20": "; ".join(f"{lab} ({e:+.1%})" for lab, e in zip(beyond.label, beyond.error)) or "none",
"errors_datasheet": f"median {before.error.abs().median():.1%}, largest {before.error.abs().max():.1%}",
            "n_cases": len(table), "median_error": f"{err.median():.1%}", "max_error": f"{err.max():.1%}",
            "n_within_20": int((err <= 0.20).sum()),
            "ep_published_max_error": f"{ep_pub.error.abs().max():.0%}", "n_ep_published": len(ep_pub),
            "n_afd_cases": int((table.design == "afd").sum()),
            "ep_hidden": f"{ep_pub.hidden_share.min():.0%}-{ep_pub.hidden_share.max():.0%}",
            "band_holds": "holds" if inside else "does not hold",
            "n_comm_bound": f"{len(nic)} of the {len(ep)}",
            "comm_bound_where": ", ".join(sorted(set(nic.label.str.split(", ").str[1].str.split(" ").str[0]))),
            "comm_margin": _span(margin.min(), margin.max(), ".0%") if len(nic) else "none",
            "ep_lean": ("lean one way: the model over-predicts" if len(over) in (0, len(ep)) else
                        "lean over more often than under: the model over-predicts" if 2 * len(over) > len(ep) else
                        "do not lean one way: the model over-predicts"),
            "band_width": f"from {rel_lo.min():+.0%} to {rel_hi.max():+.0%}",
            "prediction_in_band": "lies inside" if within else "does not always lie inside",
            "afd_published_where": " / ".join(dict.fromkeys(
                "above" if p > hi else "below" if p < lo else "inside"
                for lo, hi, p in zip(afd.band_low, afd.band_high, afd.published))) or "none",
            "afd_band": "; ".join(f"{lab}: {lo / p - 1:+.0%} to {hi / p - 1:+.0%}" for lab, lo, hi, p in
                                  zip(afd.label, afd.band_low, afd.band_high, afd.published)) or "none"}


def deepep_readings(deepep: pd.DataFrame, all_nic: pd.DataFrame) -> dict:
    """The all-to-all against DeepEP's measured low-latency times (``deepep_rows``), and with every
    copy crossing the NIC (``all_nic``, indexed by EP size)."""
    large = deepep[deepep.ep_size >= 16]
    ep8 = deepep[deepep.ep_size == 8].iloc[0]
    d8 = float(ep8.model_both_us / ep8.both_us - 1)
    return {"deepep_max_dev": f"{(large.model_both_us / large.both_us - 1).abs().max():.0%}",
            "deepep_all_nic_16": f"{all_nic.model_both_us[16] / all_nic.both_us[16]:.1f}",
            "deepep_max_dev_dispatch": f"{(large.model_dispatch_us / large.dispatch_us - 1).abs().max():.0%}",
            "deepep_ep8": f"{abs(d8):.0%} {'below' if d8 < 0 else 'above'}"}


def sensitivity_readings(table: pd.DataFrame, sens: pd.DataFrame, cases: dict[str, Case],
                         hbm_usable_fraction: float, tg_default_ms: float) -> dict:
    """The readings of the sensitivity table (``sensitivity_rows``) the chapter discusses: Step-3
    under the paper's gap, a BF16 cache, none and all of its transfers hidden, one copy per expert and a 6 us
    kernel cost, at its published batch and at its SLO's, and the gap per step (``tg_default_ms``
    by default) its published step time implies; the EP cases under the overlap what-ifs and kernel
    costs; the GB200 cases; and :func:`lever_spans`."""
    def err_of(case: str, variation: str) -> float:
        return float(sens[(sens.case == case) & (sens.variation == variation)].error.iloc[0])

    s3_var = sens[sens.case == STEP3].set_index("variation")
    tg15, bf16 = s3_var.loc["t_g 15 ms (the paper's)"], s3_var.loc["KV cache BF16"]
    by_case = table.set_index("case")
    s3, s3_facts = by_case.loc[STEP3], cases[STEP3].facts
    implied_ms = s3.batch_per_gpu * s3_facts["n_attn"] / (s3.published * (s3_facts["n_attn"] + s3_facts["n_ffn"])) * 1e3
    s3_model = load_model(s3_facts["model"])
    gb = table[table.label.str.contains("GB200")]
    out = {"step3_tg15": f"{tg15.error:+.0%}", "step3_tg0": f"{s3_var.loc['t_g 0 ms'].error:+.1%}",
           "step3_tg15_tpot": f"{tg15.tpot_ms:.1f} ms, "
                              f"{'beyond' if tg15.tpot_ms > s3_facts['slo_ms'] else 'within'}",
           "step3_bf16": f"{bf16.error:+.0%}",
           "step3_bf16_fits": "would still fit" if bf16.fits_memory else "would no longer fit",
           "step3_none": f"{err_of(STEP3, OVERLAP_NONE):+.0%}", "step3_all": signed(err_of(STEP3, OVERLAP_ALL)),
           "profile_none": f"{err_of(PROFILE, OVERLAP_NONE):+.0%}",
           "profile_all": f"{err_of(PROFILE, OVERLAP_ALL):+.0%}",
           "online_all": f"{err_of(ONLINE, OVERLAP_ALL):+.0%}",
           "june_nokernel": f"{err_of(JUNE, 'no kernel overhead'):+.0%}",
           "june_k6": signed(err_of(JUNE, 'kernel overhead 6 us')),
           "profile_k6": f"{err_of(PROFILE, 'kernel overhead 6 us'):+.0%}",
           "s3_copies": f"{float(distinct_destinations(s3_model.experts_per_token, s3_facts['n_ffn'])):.2f}",
           "s3_k": s3_model.experts_per_token,
           "gb_tpot": f"{gb.tpot_ms.min():.0f}-{gb.tpot_ms.max():.0f} ms",
           "step3_per_expert": f"{err_of(STEP3, 'AFD: one copy per expert over scale-out'):+.0%}",
           "s3_err": f"{s3.error:+.1%}", "s3_batch": f"{s3.batch_per_gpu:.0f}", "s3_hidden": f"{s3.hidden_share:.0%}", "s3_tpot": f"{s3.tpot_ms:.1f}",
           "s3_implied_ms": f"{implied_ms:.1f}",
           "s3_gap_needed": f"{s3_facts.get('t_gap_ms', tg_default_ms) + implied_ms - s3.tpot_ms:.1f}", "s3_tpot_ratio": f"{s3.tpot_ms / implied_ms - 1:+.0%}",
           "s3_err_slo": f"{s3.error_slo:+.1%}", "s3_batch_slo": f"{s3.batch_slo:.0f}",
           "s3_batch_ratio": f"{s3.batch_slo / s3.batch_per_gpu - 1:+.0%}",
           "s3_k6": f"{err_of(STEP3, 'kernel overhead 6 us'):+.0%}",
           "s3_hbm_gb": f"{load_hardware(s3_facts['attn_hardware'], profile='datasheet').hbm_bytes / 1e9:.1f}",
           "hbm_usable": f"{hbm_usable_fraction:.0%}",
           "june_err": f"{by_case.loc[JUNE].error:+.1%}", "sept_err": f"{by_case.loc[SEPT].error:+.1%}"}
    out["s3_tell"] = tell_apart({"one copy per expert": err_of(STEP3, "AFD: one copy per expert over scale-out"),
                                 "6 us per kernel": err_of(STEP3, "kernel overhead 6 us"),
                                 "nothing hidden": err_of(STEP3, OVERLAP_NONE), "all hidden": err_of(STEP3, OVERLAP_ALL),
                                 "the schedule's share": float(s3.error)})
    out.update(lever_spans(table, sens))
    for key, slug in (("online", ONLINE), ("h100", H100), ("profile", PROFILE), ("june", JUNE)):
        out.update({f"{key}_err": f"{by_case.loc[slug].error:+.1%}",
                    f"{key}_hidden": f"{by_case.loc[slug].hidden_share:.0%}",
                    f"{key}_none": f"{err_of(slug, OVERLAP_NONE):+.0%}"})
    return out


def tell_apart(errors: dict[str, float], within: float = 0.20) -> str:
    """What one case says of alternative readings (name -> error against its published figure):
    those beyond ``within`` it rules out, those within it cannot tell apart."""
    beyond = [name for name, e in errors.items() if abs(e) > within]
    if not beyond:
        return f"all of these readings lie within {within:.0%} of the published figure: it cannot tell them apart"
    if len(beyond) == len(errors):
        return f"all of these readings lie beyond {within:.0%} of the published figure"
    return (f"{' and '.join(beyond)} {'lies' if len(beyond) == 1 else 'lie'} beyond {within:.0%} of the published "
            f"figure; it cannot tell the other readings apart")


def batch_match(rate: np.ndarray, requests: np.ndarray, published: float) -> str:
    """The batch at which a case's predicted throughput curve reaches its published figure."""
    return f"{np.interp(published, rate, requests):.0f}"


LEVERS = {"overlap": (OVERLAP_NONE, OVERLAP_ALL),
          "kernel": ("no kernel overhead", "kernel overhead 6 us"),
          "gap": ("t_g 0 ms", "t_g 15 ms (the paper's)")}
"""The sensitivity table's pairs of variations that bound one lever each: the all-to-all's hidden share
(none to all), the fixed cost per kernel (0 to 6 us), the fixed gap per step (0 to 15 ms)."""


def lever_spans(table: pd.DataFrame, sens: pd.DataFrame) -> dict:
    """How far each lever of :data:`LEVERS` moves the EP cases' errors (percentage points between its
    two ends), as a range over the EP cases whose all-to-all crosses the NIC (``nic``) and over those
    on NVLink (``nvl``: GB200): keys ``span_<lever>_<nic|nvl>``."""
    ep = table[table.design == "ep"]
    groups = {"nic": ep[~ep.label.str.contains("GB200")].case, "nvl": ep[ep.label.str.contains("GB200")].case}
    by = sens.set_index(["case", "variation"]).error
    out = {}
    for lever, (lo, hi) in LEVERS.items():
        for group, slugs in groups.items():
            span = [abs(by[(c, hi)] - by[(c, lo)]) * 100 for c in slugs]
            out[f"span_{lever}_{group}"] = f"{min(span):.0f}-{max(span):.0f}" if span else "none"
    out["gap15_nic"] = ", ".join(signed(by[(c, LEVERS["gap"][1])]) for c in groups["nic"]) or "none"
    return out


def _nic_two_batch(table: pd.DataFrame) -> pd.DataFrame:
    """The EP cases of two micro-batches whose all-to-all crosses the NIC (all but GB200's NVLink):
    the cases the chapter's two-batch-overlap reading is about (one micro-batch with single-batch
    overlap is read apart, :func:`form_readings`)."""
    return table[(table.design == "ep") & ~table.label.str.contains("GB200") & (table.micro_batches == 2)]


def implied_shares(cases: dict[str, Case], slugs, assumptions: Assumptions = Assumptions()) -> dict[str, float]:
    """For EP cases, the share of the all-to-all hidden (the ``ep_overlap`` override) at which the
    model meets the published figure, interpolated over 0..1 in steps of 0.01; NaN where no share
    does (the published figure outside the what-if band)."""
    shares = np.linspace(0.0, 1.0, 101)
    out = {}
    for slug in slugs:
        case = cases[slug]
        rate = np.asarray(predict(case, replace(assumptions, ep_overlap=shares)).tokens_per_s_per_gpu, float).ravel()
        inside = rate.min() <= case.published <= rate.max()
        out[slug] = float(np.interp(case.published, rate, shares)) if inside else float("nan")
    return out


def implied_readings(table: pd.DataFrame, cases: dict[str, Case], assumptions: Assumptions = Assumptions()) -> dict:
    """The EP cases of two micro-batches whose all-to-all crosses the NIC (all but GB200's): their
    errors, the share the schedule hides and the share their published figures imply
    (:func:`implied_shares`)."""
    ep = _nic_two_batch(table)
    implied = implied_shares(cases, ep.case, assumptions)
    named = "; ".join(f"{lab}: {h:.0%} by the schedule, "
                      + (f"{implied[c]:.0%} implied" if implied[c] == implied[c] else "none implied within 0-100%")
                      for c, lab, h in zip(ep.case, ep.label, ep.hidden_share))
    found = [v for v in implied.values() if v == v]
    return {"implied_shares": named or "none", "n_nic_over": len(ep),
            "nic_over_range": _span(ep.error.min(), ep.error.max()) if len(ep) else "none",
            "implied_range": f"{min(found):.0%}-{max(found):.0%}" if found else "none",
            "scheduled_range": f"{ep.hidden_share.min():.0%}-{ep.hidden_share.max():.0%}" if len(ep) else "none"}


def nic_compute_readings(table: pd.DataFrame) -> dict:
    """For the EP cases of two micro-batches whose all-to-all crosses the NIC (all but GB200's): the
    all-to-all's time per layer and micro-batch over the layer's compute (attention + FFN), per case."""
    ep = _nic_two_batch(table)
    ratio = ep.t_comm_us / (ep.t_attn_us + ep.t_ffn_us)
    return {"nic_comm_ratio": "; ".join(f"{lab}: {r:.2f} times" for lab, r in zip(ep.label, ratio))}


def blackwell_readings(table: pd.DataFrame, sens: pd.DataFrame, before: pd.DataFrame) -> dict:
    """What sets the GB200 cases: the calibrated GEMM and attention fractions of Blackwell against
    Hopper's (``afdlib.evaluator.kernels.curves``), September's attention time against June's, and
    September's error with the datasheet kernels (``before``), with no kernel cost and hiding none."""
    from afdlib.evaluator.kernels import curves
    bw, hp = curves("gb200"), curves("h800")
    by, old = table.set_index("case"), before.set_index("case")
    s = sens[sens.case == SEPT].set_index("variation").error
    return {"bw_fractions": f"GEMMs at {bw.gemm_f_hbm:.2f} of peak HBM bandwidth and {bw.gemm_f_flop:.2f} of peak FP8 "
                            f"FLOP/s (Hopper: {hp.gemm_f_hbm:.2f} and {hp.gemm_f_flop:.2f}), attention at "
                            f"{bw.attention_f_hbm:.2f} and {bw.attention_f_flop:.2f} (Hopper: {hp.attention_f_hbm:.2f} "
                            f"and {hp.attention_f_flop:.2f})",
            "sept_attn_ratio": f"{by.loc[SEPT].t_attn_us / by.loc[JUNE].t_attn_us - 1:+.0%}",
            "sept_datasheet": f"{old.loc[SEPT].error:+.1%}", "june_datasheet": f"{old.loc[JUNE].error:+.1%}",
            "sept_nokernel": f"{s['no kernel overhead']:+.0%}", "sept_none": f"{s[OVERLAP_NONE]:+.0%}",
            "june_all": f"{sens[(sens.case == JUNE) & (sens.variation == OVERLAP_ALL)].error.iloc[0]:+.0%}"}


ANT = ("deepseek-r1-h20-ep16-ant-base", "deepseek-r1-h20-ep16-ant-pro", "deepseek-r1-h20-ep16-ant-max")
"""SGLang/Ant Group's H20 tiers: one micro-batch with single-batch overlap, FP8 attention compute."""


def form_readings(table: pd.DataFrame, cases: dict[str, Case], assumptions: Assumptions = Assumptions()) -> dict:
    """What the forms production decode runs do to the cases that run them: per Ant tier its error,
    the share its single-batch overlap hides, what that overlap adds (against the same batch served
    serially: the band's lower end) and what the FP8 attention kernel adds (against the BF16 one),
    and the tiers' errors without either form; September's hidden share."""
    from afdlib.decode.validation import with_facts
    by_case = table.set_index("case")
    ant = [s for s in ANT if s in by_case.index]
    if not ant:
        return {"ant_errors": "none", "ant_hidden": "none", "ant_sbo_gain": "none", "ant_fp8_gain": "none",
                "ant_plain": "none", "ant_verdict": "no case runs these forms", "sept_hidden": f"{by_case.loc[SEPT].hidden_share:.0%}" if SEPT in by_case.index else "none"}
    rows = by_case.loc[ant]

    def rate(slug, **facts):
        return float(predict(with_facts(cases[slug], **facts), assumptions).tokens_per_s_per_gpu)
    bf16 = np.array([rate(s, precision={"attention_compute": "bf16"}) for s in ant])
    plain = np.array([rate(s, precision={"attention_compute": "bf16"}, sbo=False) for s in ant])
    pub = rows.published.to_numpy()
    return {"ant_errors": ", ".join(f"{lab.split(',')[0]} {e:+.1%}" for lab, e in zip(rows.label, rows.error)),
            "ant_hidden": _span(rows.hidden_share.min(), rows.hidden_share.max(), ".0%"),
            "ant_sbo_gain": _span(float((rows.predicted / rows.band_low - 1).min()),
                                  float((rows.predicted / rows.band_low - 1).max())),
            "ant_fp8_gain": _span(float((rows.predicted.to_numpy() / bf16 - 1).min()),
                                  float((rows.predicted.to_numpy() / bf16 - 1).max())),
            "ant_plain": ", ".join(f"{e:+.0%}" for e in plain / pub - 1),
            "ant_verdict": ("every tier lands nearer its published figure with the forms than without: what the "
                            "model missed there was these forms" if np.all(rows.error.abs().to_numpy() < np.abs(plain / pub - 1))
                            else "not every tier lands nearer its published figure with the forms: they explain "
                            "only part of the miss"),
            "sept_hidden": f"{by_case.loc[SEPT].hidden_share:.0%}" if SEPT in by_case.index else "none"}
