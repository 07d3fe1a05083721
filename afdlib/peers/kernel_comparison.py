"""AFD's FFN stage kernel to kernel: our routed experts against aiconfigurator's own measured MoE
kernel at the same shape (``data/aiconfigurator_kernels.csv``, written by
``scripts/aiconfigurator_kernels.py``), and what each tool's FFN stage holds beyond that kernel.

The tool's AFD FFN stage t_f is its router GEMM, the dispatch and combine inside the FFN pool and
its MoE kernel (shared experts on a second stream beside them), plus an all-gather and a
reduce-scatter in the pool; ours (:func:`afdlib.decode.step.afd_step`) is the routed and shared
experts' GEMMs and their kernels' fixed cost (router GEMM in the attention stage, dispatch and
combine in the transfer stage). Readings are formatted as the chapter quotes them
(:mod:`afdlib.peers.comparison`).
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from afdlib.decode.step import Assumptions
from afdlib.evaluator.grouped_gemm import balanced_active_experts
from afdlib.inputs.catalog import data_dir, load_hardware, load_model
from afdlib.peers.aiconfigurator import DISTRIBUTIONS, our_ffn_split, setting_of
from afdlib.peers.comparison import CASE_MODEL


def _routed_bytes_per_gpu(model: str, ffn_gpus: int) -> float:
    """Bytes of one MoE layer's routed-expert weights on one FFN GPU (FP8: one byte per weight;
    gate, up and down projections)."""
    m = load_model(model, profile="reference")
    return m.routed_experts * 3 * m.hidden_size * m.moe_intermediate_size / ffn_gpus


HOPPER, BLACKWELL = ("h100", "h200"), ("b200", "gb200")
"""The grid's systems by architecture: the tool's TensorRT-LLM MoE table is its cutlass kernel on
Hopper (outside the calibrated profile's fit) and its DeepGEMM kernel on Blackwell (whose balanced
points the profile is fitted to)."""

KERNEL_EP = 8
"""The expert-parallel size of the tool's MoE kernel table (``data/aiconfigurator_kernels.csv``)."""


def load_tool_kernels(path: str | Path | None = None) -> pd.DataFrame:
    """The tool's measured kernel tables by shape (``data/aiconfigurator_kernels.csv``,
    ``scripts/aiconfigurator_kernels.py``; its first line is a provenance comment)."""
    return pd.read_csv(Path(path) if path else data_dir() / "aiconfigurator_kernels.csv", skiprows=1)


def tool_moe_kernel_us(kernels: pd.DataFrame, model: str, hardware: str, distribution: str, tokens: float,
                       ep: int = KERNEL_EP) -> float:
    """The tool's routed-expert MoE kernel (TensorRT-LLM table, FP8 block-scaled, EP ``ep``) for
    ``tokens`` tokens over the EP group, in us: linear between the two nearest measured token counts
    (so linear in tokens per expert, tokens x top-k / experts); NaN where the table has no such
    model, system, distribution or EP size, or ``tokens`` lies outside its token counts."""
    t = kernels[(kernels.family == "moe") & (kernels.kernel != "deepepmoe") & (kernels.model == model)
                & (kernels.system == hardware) & (kernels.distribution == distribution) & (kernels.ep == ep)]
    t = t.sort_values("tokens")
    if t.empty or not t.tokens.min() <= tokens <= t.tokens.max():
        return math.nan
    return float(np.interp(tokens, t.tokens, t.measured_us))


def afd_kernel_rows(rows: list[dict], assumptions: Assumptions | None = None, kernels: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per AFD grid setting and the tool's two tables (balanced, power-law): the tool's t_f, its MoE
    kernel at its shape (:func:`tool_moe_kernel_us` at its micro-batch's tokens over the FFN pool:
    ceil(requests per attention GPU / micro-batches) x attention GPUs, against our unrounded share), the rest of its t_f (t_f - kernel: the other work in its FFN stage), our t_f split
    (:func:`afdlib.peers.aiconfigurator.our_ffn_split`) and our routed experts (their grouped GEMMs
    plus their kernels' fixed cost) over its kernel. Like with like on routing: against its balanced
    tables ours (routed experts and t_f) is routed as those tables were measured, every FFN GPU the
    same pairs (sigma 1) dealt to its experts in turn
    (:func:`afdlib.evaluator.grouped_gemm.balanced_active_experts`); against its power-law ones, as
    the decode model routes (a router's count, uniform routing's sigma: the tool's power-law draw
    has no counterpart in ours)."""
    a, kernels = assumptions or Assumptions(), load_tool_kernels() if kernels is None else kernels
    out = []
    for r in rows:
        if r["status"] != "ok" or r["kind"] != "grid" or r["design"] != "afd":
            continue
        s = setting_of(r)
        balanced = r["distribution"] == DISTRIBUTIONS[1]
        ours = (our_ffn_split(s, replace(a, sigma=1.0), balanced_active_experts) if balanced
                else our_ffn_split(s, a))
        tokens = math.ceil(s.batch_per_gpu / s.micro_batches) * s.attn_gpus * (1 + s.nextn)  # its micro-batch
        kernel = tool_moe_kernel_us(kernels, s.model, s.hardware, r["distribution"], tokens, s.ffn_gpus)
        routed = ours["routed_us"] + ours["routed_kernels"] * a.kernels.fixed_s * 1e6
        out.append({"id": s.id, "model": s.model, "hardware": s.hardware, "batch_per_gpu": s.batch_per_gpu,
                    "distribution": r["distribution"], "aic_tokens": tokens, "aic_t_ffn_us": float(r["t_ffn_us"]),
                    "aic_kernel_us": kernel, "aic_rest_us": float(r["t_ffn_us"]) - kernel, **ours,
                    "our_routed_us": routed, "our_t_ffn_us": ours["routed_us"] + ours["shared_us"] + ours["fixed_us"],
                    "ratio_kernel": routed / kernel})
    return pd.DataFrame(out)


def _direction(ratio: float, tolerance: float = 0.05) -> str:
    """Which kernel is the slower at a median ratio ours / its: the same within ``tolerance``."""
    if abs(ratio - 1) <= tolerance:
        return f"the two within {tolerance:.0%}"
    return "its kernel slower" if ratio < 1 else "its kernel faster"


def afd_kernel_readings(kr: pd.DataFrame, batch: int = 128) -> dict:
    """Kernel to kernel on the AFD grid (:func:`afd_kernel_rows`), per table (``bal``: balanced,
    ``pl``: power-law) over the settings whose shape the tool's table holds: how many, the median
    and range of our routed experts over its kernel, the median rest of its t_f (us and share of
    t_f), the median t_f ratio (ours / its) and the factor of it that is not the kernels' (each
    tool's t_f over its routed-expert kernel, ours over its); its power-law kernel over its balanced one
    where it has both (``kern_pl_over_bal``); and DeepSeek-V3 on H200 at ``batch``
    requests per GPU: tokens per micro-batch (ours, its), our routed experts' GEMMs, with their
    kernels' fixed cost, our shared experts and the stage's fixed cost, its kernel and the rest of its
    t_f (us), and one FFN GPU's routed-expert weights (GB) over our routed experts, its kernel and its
    t_f as shares of the datasheet HBM bandwidth."""
    out = {}
    for tag, dist in (("bal", DISTRIBUTIONS[1]), ("pl", DISTRIBUTIONS[0])):
        d = kr[(kr.distribution == dist) & kr.aic_kernel_us.notna()]
        out.update({f"kern_{tag}_n": len(d), f"kern_{tag}_models": " and ".join(sorted(d.model.unique())),
                    f"kern_{tag}_median": f"{d.ratio_kernel.median():.2f}",
                    f"kern_{tag}_dir": _direction(d.ratio_kernel.median()),
                    f"kern_{tag}_range": f"{d.ratio_kernel.min():.2f}-{d.ratio_kernel.max():.2f}",
                    f"kern_{tag}_rest": f"{d.aic_rest_us.median():.0f}",
                    f"kern_{tag}_rest_share": f"{(d.aic_rest_us / d.aic_t_ffn_us).median():.0%}",
                    f"kern_{tag}_tf_ratio": f"{(d.our_t_ffn_us / d.aic_t_ffn_us).median():.2f}",
                    f"kern_{tag}_rest_factor": f"{(d.our_t_ffn_us / d.our_routed_us * d.aic_kernel_us / d.aic_t_ffn_us).median():.2f}"})
        for arch, systems in (("hopper", HOPPER), ("blackwell", BLACKWELL)):
            out[f"kern_{tag}_median_{arch}"] = f"{d[d.hardware.isin(systems)].ratio_kernel.median():.2f}"
        case = d[(d.hardware == "h200") & (d.model == CASE_MODEL) & (d.batch_per_gpu == batch)].iloc[0]
        out.update({f"case_kernel_{tag}": f"{case.aic_kernel_us:.0f}", f"case_rest_{tag}": f"{case.aic_rest_us:.0f}",
                    f"case_ratio_{tag}": f"{case.ratio_kernel:.2f}"})
    both = kr.pivot_table(index="id", columns="distribution", values="aic_kernel_us").dropna()
    own = both[DISTRIBUTIONS[0]] / both[DISTRIBUTIONS[1]]     # its power-law kernel over its balanced one
    out["kern_pl_over_bal"] = f"{own.median():.2f} ({own.min():.2f}-{own.max():.2f}, {len(own)} settings)"
    case = kr[(kr.hardware == "h200") & (kr.model == CASE_MODEL) & (kr.batch_per_gpu == batch)]
    pl, bal = (case[case.distribution == d].iloc[0] for d in DISTRIBUTIONS)
    w = _routed_bytes_per_gpu(CASE_MODEL, KERNEL_EP)
    bw = (lambda hw: hw.hbm_bytes_per_s / hw.efficiency.hbm)(load_hardware("h200", profile="datasheet"))
    share = {key: w / (us * 1e-6) / bw for key, us in (("our", pl.our_routed_us), ("pl", pl.aic_kernel_us),
                                                       ("bal", bal.aic_kernel_us), ("tf_pl", pl.aic_t_ffn_us),
                                                       ("tf_bal", bal.aic_t_ffn_us))}
    case = pl
    rest = sorted((pl.aic_rest_us, bal.aic_rest_us))
    out.update({"case_rest": f"{rest[0]:.0f}-{rest[1]:.0f}", "case_weights_gb": f"{w / 1e9:.2f}", "case_our_routed_hbm": f"{share['our']:.2f}",
                "case_aic_kernel_hbm": f"{share['pl']:.2f}-{share['bal']:.2f}",
                "case_aic_tf_hbm": f"{share['tf_pl']:.2f}-{share['tf_bal']:.2f}"})
    out.update({"case_tokens": f"{case.tokens:.0f}", "case_aic_tokens": int(case.aic_tokens), "case_our_routed_gemm": f"{case.routed_us:.0f}",
                "case_our_routed": f"{case.our_routed_us:.0f}", "case_our_shared": f"{case.shared_us:.0f}",
                "case_our_fixed": f"{case.fixed_us:.0f}"})
    return out
