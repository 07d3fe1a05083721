"""What the validation chapter quotes, computed from its tables: the error summary, where EP's
all-to-all binds, the band of the overlap what-ifs, the DeepEP check, and the readings of the
sensitivity table for the cases the chapter discusses. Text values, formatted as the chapter prints
them (the chapter glues them as they are)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from afdlib.decode.validation import Case
from afdlib.evaluator.alltoall import distinct_destinations
from afdlib.inputs.catalog import load_hardware, load_model

STEP3, JUNE, SEPT = ("step3-h800-2a2f", "deepseek-v3-gb200-ep48-sglang-june",
                     "deepseek-v3-gb200-ep48-sglang-september")
ONLINE, PROFILE, H100 = ("deepseek-v3-h800-ep144-online", "deepseek-v3-h800-ep128-profile",
                         "deepseek-v3-h100-ep72-sglang")


def _ep_published(table: pd.DataFrame) -> pd.DataFrame:
    """The EP cases whose batch is published or derived from published figures."""
    return table[(table.design == "ep") & table.batch_from.isin(["published", "derived"])]


def summary_readings(table: pd.DataFrame, before: pd.DataFrame) -> dict:
    """The errors (now, and with the datasheet kernels in ``before``), the EP cases with a published
    batch, their scheduled shares and the what-if band, and where EP's all-to-all is longer than the
    layer's compute."""
    err, ep_pub = table.error.abs(), _ep_published(table)
    inside = ((ep_pub.band_low <= ep_pub.published) & (ep_pub.published <= ep_pub.band_high)).all()
    ep = table[table.design == "ep"]
    nic = ep[ep.t_comm_us > ep.t_attn_us + ep.t_ffn_us]
    margin = nic.t_comm_us / (nic.t_attn_us + nic.t_ffn_us) - 1
    rel_lo, rel_hi = ep_pub.band_low / ep_pub.published - 1, ep_pub.band_high / ep_pub.published - 1
    return {"errors_datasheet": f"median {before.error.abs().median():.1%}, largest {before.error.abs().max():.1%}",
            "n_cases": len(table), "median_error": f"{err.median():.1%}", "max_error": f"{err.max():.1%}",
            "n_within_20": int((err <= 0.20).sum()),
            "ep_published_max_error": f"{ep_pub.error.abs().max():.0%}", "n_ep_published": len(ep_pub),
            "n_afd_cases": int((table.design == "afd").sum()),
            "ep_hidden": f"{ep_pub.hidden_share.min():.0%}-{ep_pub.hidden_share.max():.0%}",
            "band_holds": "holds" if inside else "does not hold",
            "n_comm_bound": f"{len(nic)} of the {len(ep)}",
            "comm_bound_where": ", ".join(sorted(set(nic.label.str.split(", ").str[1].str.split(" ").str[0]))),
            "comm_margin": f"{margin.min():.0%} to {margin.max():.0%}" if len(nic) else "none",
            "band_width": f"from {rel_lo.min():+.0%} to {rel_hi.max():+.0%}"}


def deepep_readings(deepep: pd.DataFrame, all_nic: pd.DataFrame) -> dict:
    """The all-to-all against DeepEP's measured low-latency times (``deepep_rows``), and with every
    copy crossing the NIC (``all_nic``, indexed by EP size)."""
    large = deepep[deepep.ep_size >= 16]
    ep8 = deepep[deepep.ep_size == 8].iloc[0]
    return {"deepep_max_dev": f"{(large.model_both_us / large.both_us - 1).abs().max():.0%}",
            "deepep_all_nic_16": f"{all_nic.model_both_us[16] / all_nic.both_us[16]:.1f}",
            "deepep_max_dev_dispatch": f"{(large.model_dispatch_us / large.dispatch_us - 1).abs().max():.0%}",
            "deepep_ep8": f"{float(ep8.model_both_us / ep8.both_us - 1):+.0%}"}


def sensitivity_readings(table: pd.DataFrame, sens: pd.DataFrame, cases: dict[str, Case],
                         hbm_usable_fraction: float) -> dict:
    """The readings of the sensitivity table (``sensitivity_rows``) the chapter discusses: Step-3
    under the paper's gap, a BF16 cache, half-hidden transfers, one copy per expert and a 6 us
    kernel cost, at its published batch and at its SLO's; the EP cases under the overlap what-ifs
    and kernel costs; the GB200 cases."""
    def err_of(case: str, variation: str) -> float:
        return float(sens[(sens.case == case) & (sens.variation == variation)].error.iloc[0])

    s3_var = sens[sens.case == STEP3].set_index("variation")
    tg15, bf16 = s3_var.loc["t_g 15 ms (the paper's)"], s3_var.loc["KV cache BF16"]
    by_case = table.set_index("case")
    s3, s3_facts = by_case.loc[STEP3], cases[STEP3].facts
    implied_ms = s3.batch_per_gpu * s3_facts["n_attn"] / (s3.published * (s3_facts["n_attn"] + s3_facts["n_ffn"])) * 1e3
    s3_model = load_model(s3_facts["model"])
    gb = table[table.label.str.contains("GB200")]
    out = {"step3_tg15": f"{tg15.error:+.0%}",
           "step3_tg15_tpot": f"{tg15.tpot_ms:.1f} ms, "
                              f"{'beyond' if tg15.tpot_ms > s3_facts['slo_ms'] else 'within'}",
           "step3_bf16": f"{bf16.error:+.0%}",
           "step3_bf16_fits": "would still fit" if bf16.fits_memory else "would no longer fit",
           "step3_half": f"{err_of(STEP3, 'AFD transfers half hidden (0.5)'):+.0%}",
           "profile_none": f"{err_of(PROFILE, 'EP all-to-all hidden: none (0)'):+.0%}",
           "profile_all": f"{err_of(PROFILE, 'EP all-to-all hidden: all (1)'):+.0%}",
           "online_all": f"{err_of(ONLINE, 'EP all-to-all hidden: all (1)'):+.0%}",
           "june_nokernel": f"{err_of(JUNE, 'no kernel overhead'):+.0%}",
           "june_k6": f"{err_of(JUNE, 'kernel overhead 6 us'):+.0%}",
           "profile_k6": f"{err_of(PROFILE, 'kernel overhead 6 us'):+.0%}",
           "s3_copies": f"{float(distinct_destinations(s3_model.experts_per_token, s3_facts['n_ffn'])):.2f}",
           "s3_k": s3_model.experts_per_token,
           "gb_tpot": f"{gb.tpot_ms.min():.0f}-{gb.tpot_ms.max():.0f} ms",
           "step3_per_expert": f"{err_of(STEP3, 'AFD: one copy per expert over scale-out'):+.0%}",
           "s3_err": f"{s3.error:+.1%}", "s3_batch": f"{s3.batch_per_gpu:.0f}", "s3_tpot": f"{s3.tpot_ms:.1f}",
           "s3_implied_ms": f"{implied_ms:.1f}", "s3_tpot_ratio": f"{s3.tpot_ms / implied_ms - 1:+.0%}",
           "s3_err_slo": f"{s3.error_slo:+.1%}", "s3_batch_slo": f"{s3.batch_slo:.0f}",
           "s3_batch_ratio": f"{s3.batch_slo / s3.batch_per_gpu - 1:+.0%}",
           "s3_k6": f"{err_of(STEP3, 'kernel overhead 6 us'):+.0%}",
           "s3_hbm_gb": f"{load_hardware(s3_facts['attn_hardware'], profile='datasheet').hbm_bytes / 1e9:.1f}",
           "hbm_usable": f"{hbm_usable_fraction:.0%}",
           "june_err": f"{by_case.loc[JUNE].error:+.1%}", "sept_err": f"{by_case.loc[SEPT].error:+.1%}"}
    for key, slug in (("online", ONLINE), ("h100", H100)):
        out.update({f"{key}_err": f"{by_case.loc[slug].error:+.1%}",
                    f"{key}_hidden": f"{by_case.loc[slug].hidden_share:.0%}",
                    f"{key}_none": f"{err_of(slug, 'EP all-to-all hidden: none (0)'):+.0%}"})
    return out


def batch_match(rate: np.ndarray, requests: np.ndarray, published: float) -> str:
    """The batch at which a case's predicted throughput curve reaches its published figure."""
    return f"{np.interp(published, rate, requests):.0f}"
