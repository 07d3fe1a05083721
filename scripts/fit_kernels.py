"""Fit the decode model's kernel-efficiency curves to published kernel measurements.

    .venv/bin/python scripts/fit_kernels.py [--out data/kernel_efficiency.yaml]

Sources (kernels only; deployments and aiconfigurator's end-to-end predictions are never used):

* ``../shared/reference/kernels.md`` sections 1-2: DeepGEMM's FP8 GEMM tables (H800) and FlashMLA's
  README figures, copied below point by point with their source;
* ``data/aiconfigurator_kernels.csv`` (``scripts/aiconfigurator_kernels.py``): aiconfigurator's
  measured tables of the same kernels on H100/H200 (Hopper) and B200/GB200 (Blackwell): DeepGEMM's
  dense FP8 GEMM by M, the DeepGEMM MoE layers (SGLang wide-EP ``deepepmoe`` on both, TensorRT-LLM's
  ``deepgemm`` MoE on Blackwell; balanced or uniform routing) and TensorRT-LLM's MLA decode kernel.

The FLOP and HBM fractions are keyed by architecture (:data:`ARCH`: Hopper, Blackwell), because the
data demand it (one Hopper fit leaves the Blackwell points biased); the corner's roundness p and
the fixed cost per kernel t0 are shared and fitted to the GEMM sources (the small-M intercepts of
the dense GEMMs, the MoE layers' intercept over their :data:`MOE_KERNELS` kernels); the attention
fractions are then fitted at that t0. Each source (and architecture) weighs the same in the loss: the sum over sources of the
mean squared log error of the kernel times. Deterministic: a nested grid search (no random start,
no optimiser library). The library reads the written file
(:mod:`afdlib.evaluator.kernels`); the tests check that it reproduces these points.

GEMM form (one kernel, DeepGEMM, FP8 weights with fine-grained scales): with B the bytes it moves,
F its FLOPs, BW and P the device's datasheet HBM rate and FP8 peak, and rows per weight matrix
below the tile height padded to it (F_eff = F max(1, BLOCK_M / rows)),

    t = t0 + ((B / (f_hbm BW))^p + (F_eff / (f_flop P))^p)^(1/p)

a roofline whose corner is rounded (p -> infinity: the hard max of the evaluator): near the ridge
a real kernel neither streams nor computes at full rate. t0 is the kernel's fixed cost (ramp and
tail). The achieved HBM fraction B / (BW t) then rises with the kernel's size (t0 amortised) and
falls as rows approach the ridge (compute shares the time); the achieved FLOP fraction rises with
rows. Both are monotone in rows at a fixed weight shape (tests/test_kernels.py). A MoE layer's
routed experts are one such GEMM over their summed bytes and FLOPs (as the decode model charges
them: :func:`afdlib.evaluator.grouped_gemm.routed_experts_work`), rows = pairs per active expert,
plus :data:`MOE_KERNELS` fixed costs. The active experts are counted as the measured kernel's
routing had them: aiconfigurator's balanced tables give every local expert a pair before any gets a
second (:func:`afdlib.evaluator.grouped_gemm.balanced_active_experts`, min(E / EP, pairs); their times
are flat once the pairs reach E / EP). The decode model charges the same curve at its own routing's
count (random: :func:`afdlib.evaluator.grouped_gemm.active_experts`); fitting under that count would
credit the kernel with weights it did read to experts the count calls idle (``fit(count=...)``: the
MoE residuals treble, tests/test_kernels.py).

Core attention (FlashMLA; TensorRT-LLM's MLA kernel): t = t0 + max(B / (f_hbm BW), F / (f_flop
P_bf16)), the hard roofline at the BF16 rate. On Blackwell TensorRT-LLM's kernel over an FP8
cache computes faster than BF16 allows (fractions above 1): those rows are left out, and the
decode model keeps the BF16 rate there (a conservative limit of the form, stated in the file).
"""
from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from afdlib.evaluator.alltoall import token_wire_bytes
from afdlib.evaluator.grouped_gemm import balanced_active_experts, expert_weight_bytes

ROOT = Path(__file__).resolve().parent.parent
DEEPGEMM = ("[P] deepseek-ai/DeepGEMM README, performance section at commit 327ec92 (2025-04-09), H800 SXM5, "
            "NVCC 12.8; as tabulated in shared/reference/kernels.md section 1")
FLASHMLA = ("[P] deepseek-ai/FlashMLA README (2025-2026): 'up to 3000 GB/s in memory-bound configuration and "
            "660 TFLOPS in computation-bound configuration on H800 SXM5 with CUDA 12.8'; FP8 KV cache: "
            "'dequantizes the cache to bfloat16 and performs attention computation in bfloat16' "
            "(shared/reference/kernels.md section 2)")
H800 = {"hbm_bytes_per_s": 3.35e12, "fp8_flops": 1979e12, "bf16_flops": 989e12,
        "source": "[P] kernels.md (H800 peak 3.35 TB/s, dense FP8 1,979 TFLOPS, BF16 989)"}
ARCH = {"hopper": ("h800", "h100", "h200", "h20"), "blackwell": ("b200", "b300", "gb200", "gb300")}
"""Architecture of each catalogue device (the key of the fitted fractions); other devices take
:data:`DEFAULT_ARCH`."""
DEFAULT_ARCH = "hopper"
AIC = ("[P] NVIDIA aiconfigurator 0.12.0 measured ('silicon') kernel tables, extracted by "
       "scripts/aiconfigurator_kernels.py into data/aiconfigurator_kernels.csv")
AIC_GEMM_KERNELS = ("sglang_deepgemm_gemm_nt_f8f8bf16", "deepgemm")
"""DeepGEMM's dense FP8 GEMM: SGLang 0.5.14 on H100/H200, TensorRT-LLM's DeepGEMM on B200/GB200."""
MOE_KERNELS = 5
"""Kernels of one MoE layer's routed experts, each paying the fixed cost (the decode model's
KERNELS_ROUTED: the same count the model charges)."""

BLOCK_M = 64
"""DeepGEMM's smallest tile height (rows of a block, BLOCK_M in its kernels): fewer rows per
weight matrix are padded to it."""

# (layout, groups, rows per group M, N, K, achieved TFLOPS, achieved GB/s)
POINTS = [("normal", 1, m, n, k, tf, gb) for m, n, k, tf, gb in [
    (64, 2112, 7168, 206, 1688), (64, 24576, 1536, 289, 2455), (64, 32768, 512, 219, 2143),
    (64, 7168, 16384, 336, 2668), (64, 4096, 7168, 287, 2320), (64, 7168, 2048, 295, 2470),
    (128, 2112, 7168, 352, 1509), (128, 24576, 1536, 535, 2448), (128, 32768, 512, 358, 2103),
    (128, 7168, 16384, 645, 2604), (128, 4096, 7168, 533, 2221), (128, 7168, 2048, 510, 2277),
    (4096, 2112, 7168, 1127, 562), (4096, 24576, 1536, 1212, 962), (4096, 32768, 512, 775, 1620),
    (4096, 7168, 16384, 1520, 384), (4096, 4096, 7168, 1410, 541), (4096, 7168, 2048, 1168, 794)]] + [
    ("contiguous", 4, 8192, 4096, 7168, 1346, 434), ("contiguous", 4, 8192, 7168, 2048, 1214, 752),
    ("contiguous", 8, 4096, 4096, 7168, 1346, 516), ("contiguous", 8, 4096, 7168, 2048, 1214, 826),
    ("masked", 1, 1024, 4096, 7168, 1233, 924), ("masked", 1, 1024, 7168, 2048, 925, 968),
    ("masked", 2, 512, 4096, 7168, 1040, 1288), ("masked", 2, 512, 7168, 2048, 916, 1405),
    ("masked", 4, 256, 4096, 7168, 932, 2064), ("masked", 4, 256, 7168, 2048, 815, 2047)]

RANGES = {"t0_s": (0.0, 10e-6), "p": (1.0, 8.0), "f_hbm": (0.5, 1.0), "f_flop": (0.3, 1.0)}
"""Search box of each parameter (fractions of peak at most 1: a kernel cannot beat the datasheet)."""


def arch_of(system: str) -> str:
    return next((a for a, s in ARCH.items() if system in s), DEFAULT_ARCH)


def gemm_shapes():
    """Arrays (groups, M, N, K, FLOPs, bytes, measured seconds) of the DeepGEMM README points. Bytes: FP8
    weights N K and activations M K, BF16 output 2 M N per group (DeepGEMM's own count: the GB/s
    column equals bytes / time within 0.1%)."""
    g, m, n, k, tf, gb = (np.array([p[i] for p in POINTS], dtype=float) for i in range(1, 7))
    flops = 2 * g * m * n * k
    nbytes = g * (n * k + m * k + 2 * m * n)
    seconds = flops / (tf * 1e12)
    assert np.allclose(nbytes / seconds / 1e9, gb, rtol=2e-3), "byte count disagrees with DeepGEMM's GB/s"
    return g, m, n, k, flops, nbytes, seconds


def aic_table(path=None) -> pd.DataFrame:
    """aiconfigurator's kernel table (its first line is a provenance comment)."""
    return pd.read_csv(path or ROOT / "data" / "aiconfigurator_kernels.csv", skiprows=1)


def gemm_points(path=None, count=balanced_active_experts) -> pd.DataFrame:
    """Every GEMM point of the fit, one row each: source, architecture, system, kind (dense, moe), the
    table's own identifiers, rows, FLOPs, bytes, the device's peaks, kernels, measured seconds. A MoE
    layer's bytes and rows follow from its shape with ``count(pairs, local experts)`` active experts (the
    library's: the weights of the active experts and the activations in and out, rows = pairs per active
    expert); at the measured routing's count the bytes are the table's own."""
    _, m, n, k, flops, nbytes, seconds = gemm_shapes()
    readme = pd.DataFrame({"source": "deepgemm_readme", "arch": "hopper", "system": "h800", "kind": "dense",
                           "layout": [p[0] for p in POINTS], "groups": [p[1] for p in POINTS], "m": m, "n": n,
                           "k": k, "tokens": np.nan, "ep": np.nan, "model": "", "rows": m, "flops": flops,
                           "bytes": nbytes, "hbm_peak": H800["hbm_bytes_per_s"], "flop_peak": H800["fp8_flops"],
                           "kernels": 1, "measured_s": seconds})
    t = aic_table(path)
    dense = t[(t.family == "gemm") & t.kernel.isin(AIC_GEMM_KERNELS)]
    moe = t[(t.family == "moe") & (((t.kernel == "deepepmoe") & (t.distribution == "uniform"))
                                   | ((t.kernel == "deepgemm") & (t.distribution == "balanced")))]
    aic = pd.concat([dense, moe])
    is_moe = (aic.family == "moe").to_numpy()
    pairs = (aic.tokens * aic.topk / aic.ep).to_numpy(float)               # token-expert pairs on one GPU
    active = count(pairs, (aic.experts / aic.ep).to_numpy(float))
    moe_bytes = (expert_weight_bytes(active, aic.hidden.to_numpy(float), aic.inter.to_numpy(float))
                 + token_wire_bytes(pairs, aic.hidden.to_numpy(float)))
    if count is balanced_active_experts:
        assert np.allclose(moe_bytes[is_moe], aic.bytes[is_moe], rtol=1e-12), "MoE bytes disagree with the table's"
    table = pd.DataFrame({
        "source": np.where(is_moe, "aiconfigurator_moe", "aiconfigurator_gemm"), "arch": aic.system.map(arch_of),
        "system": aic.system, "kind": np.where(is_moe, "moe", "dense"), "layout": aic.kernel,
        "groups": np.where(is_moe, np.nan, 1.0), "m": aic.m, "n": aic.n, "k": aic.k, "tokens": aic.tokens,
        "ep": aic.ep, "model": aic.model.fillna(""),
        # dense: rows = M; MoE: pairs per active expert
        "rows": np.where(is_moe, pairs / np.where(is_moe, active, 1.0), aic.m),
        "flops": aic.flops.astype(float), "bytes": np.where(is_moe, moe_bytes, aic.bytes.astype(float)),
        "hbm_peak": aic.peak_hbm_tb_s * 1e12,
        "flop_peak": aic.peak_tflops * 1e12, "kernels": np.where(is_moe, MOE_KERNELS, 1),
        "measured_s": aic.measured_us * 1e-6})
    return pd.concat([readme, table], ignore_index=True)


def attention_points(path=None) -> pd.DataFrame:
    """TensorRT-LLM's MLA decode kernel (BF16 compute): every row on Hopper, the BF16-cache rows on
    Blackwell (its FP8-cache rows compute above the BF16 peak: not this form)."""
    t = aic_table(path)
    a = t[(t.family == "mla") & ~(t.system.map(arch_of).eq("blackwell") & t.kv_dtype.eq("fp8"))
          & (t.measured_us >= MLA_MIN_US)]
    return pd.DataFrame({"source": "aiconfigurator_mla", "arch": a.system.map(arch_of), "system": a.system,
                         "kv_dtype": a.kv_dtype, "batch": a.batch, "context": a.context,
                         "flops": a.flops.astype(float), "bytes": a.bytes.astype(float),
                         "hbm_peak": a.peak_hbm_tb_s * 1e12, "flop_peak": a.peak_tflops * 1e12, "kernels": 1,
                         "measured_s": a.measured_us * 1e-6}).reset_index(drop=True)


MLA_MIN_US = 50.0
"""MLA rows shorter than this are left out of the fit: there the time is the kernel's own intercept
(13-30 us at batch 1 on every device: split-KV decode and its combine), not one kernel's fixed cost nor its rates."""

FLASHMLA_FRACTIONS = {"f_hbm": 3000e9 / H800["hbm_bytes_per_s"], "f_flop": 660e12 / H800["bf16_flops"]}
"""FlashMLA's two 'up to' figures as fractions of the H800 peaks: two Hopper points of the attention fit
(the log ratio of the fitted fraction to each figure)."""


def gemm_time(flops, nbytes, rows, f_hbm, f_flop, p, t0_s, hbm=H800["hbm_bytes_per_s"], peak=H800["fp8_flops"],
              kernels=1):
    """The form of the module docstring (the library's :func:`afdlib.evaluator.kernels.gemm_seconds`)."""
    mem = nbytes / (f_hbm * hbm)
    comp = flops * np.maximum(1.0, BLOCK_M / np.maximum(rows, 1e-9)) / (f_flop * peak)
    return kernels * t0_s + (mem ** p + comp ** p) ** (1.0 / p)


def attention_time(flops, nbytes, f_hbm, f_flop, t0_s, hbm, peak, kernels=1):
    return kernels * t0_s + np.maximum(nbytes / (f_hbm * hbm), flops / (f_flop * peak))


def _loss(pts: pd.DataFrame, time_of) -> np.ndarray:
    """Sum over the sources in ``pts`` of the mean squared log error (``time_of(columns)`` broadcasts)."""
    total = 0.0
    for _, s in pts.groupby("source", sort=True):
        cols = {c: s[c].to_numpy(float) for c in ("flops", "bytes", "rows", "hbm_peak", "flop_peak", "kernels",
                                                    "measured_s") if c in s}
        total = total + (np.log(time_of(cols) / cols["measured_s"]) ** 2).mean(axis=-1)
    return total


def fit(path=None, rounds: int = 6, n: int = 13, count=balanced_active_experts) -> dict:
    """Nested grid search (``rounds`` rounds of ``n`` points per parameter, each narrowing every box
    around the best point): shared t0 and p, per architecture the GEMM's and the attention's f_hbm
    and f_flop. Given (t0, p) the components separate, so each round evaluates every component on its
    own 4-D grid; the GEMM components' minima, summed, choose (t0, p) (the MLA table's intercept is
    not one kernel's fixed cost: split-KV decode and its combine, with a longer ramp), and the
    attention fractions are then fitted at that t0. ``count``: the MoE points' active experts
    (:func:`gemm_points`)."""
    gp, ap = gemm_points(path, count), attention_points(path)
    archs = sorted(ARCH)
    shared = {"t0_s": RANGES["t0_s"], "p": RANGES["p"]}
    boxes = {(c, a): {"f_hbm": RANGES["f_hbm"], "f_flop": RANGES["f_flop"]} for c in ("gemm", "attention")
             for a in archs}
    best = {}
    for _ in range(rounds):
        t0, p = (np.linspace(*shared[key], n) for key in ("t0_s", "p"))
        T0, P = (x[:, :, None, None, None] for x in np.meshgrid(t0, p, indexing="ij"))
        total, inner = 0.0, {}
        for (comp, arch), box in boxes.items():
            fh, ff = (np.linspace(*box[key], n) for key in ("f_hbm", "f_flop"))
            FH, FF = (x[None, None, :, :, None] for x in np.meshgrid(fh, ff, indexing="ij"))
            if comp == "gemm":
                err = _loss(gp[gp.arch == arch], partial(_gemm_cols, f_hbm=FH, f_flop=FF, p=P, t0_s=T0))
                total = total + err.reshape(n, n, n * n).min(axis=-1)
            else:
                err = _loss(ap[ap.arch == arch], partial(_attention_cols, f_hbm=FH, f_flop=FF, t0_s=T0))
                if arch == "hopper":
                    err = err + (np.log(FH / FLASHMLA_FRACTIONS["f_hbm"]) ** 2
                                 + np.log(FF / FLASHMLA_FRACTIONS["f_flop"]) ** 2)[..., 0] / 2
                err = np.broadcast_to(err, (n, n, n, n))
            inner[(comp, arch)] = (fh, ff, err.reshape(n, n, n * n).argmin(axis=-1))
        i, j = np.unravel_index(np.argmin(total), total.shape)
        best = {"t0_s": float(t0[i]), "p": float(p[j])}
        shared = {key: (max(RANGES[key][0], best[key] - (hi - lo) / (n // 2)),
                        min(RANGES[key][1], best[key] + (hi - lo) / (n // 2))) for key, (lo, hi) in shared.items()}
        for key, (fh, ff, arg) in inner.items():
            a, b = np.unravel_index(arg[i, j], (n, n))
            best[key] = {"f_hbm": float(fh[a]), "f_flop": float(ff[b])}
            boxes[key] = {name: (max(RANGES[name][0], v - (hi - lo) / (n // 2)),
                                 min(RANGES[name][1], v + (hi - lo) / (n // 2)))
                          for (name, (lo, hi)), v in zip(boxes[key].items(), best[key].values())}
    return best


def _gemm_cols(c, f_hbm, f_flop, p, t0_s):
    return gemm_time(c["flops"], c["bytes"], c["rows"], f_hbm, f_flop, p, t0_s, c["hbm_peak"], c["flop_peak"],
                     c["kernels"])


def _attention_cols(c, f_hbm, f_flop, t0_s):
    return attention_time(c["flops"], c["bytes"], f_hbm, f_flop, t0_s, c["hbm_peak"], c["flop_peak"], c["kernels"])


T0_GRID = np.linspace(0.0, 2 * RANGES["t0_s"][1], 4001)
"""Fixed costs per kernel each GEMM source is refitted over alone (:func:`t0_by_source`), seconds."""


def t0_by_source(gp: pd.DataFrame, par: dict) -> dict:
    """Per GEMM source (and architecture) the fixed cost per kernel that fits its points best with the
    other parameters at the fit's: how far the sources disagree on t0 is its uncertainty (the decode
    model's ``fixed cost per kernel``, :mod:`afdlib.decision.uncertainty`)."""
    out = {}
    for (src, arch), s in gp.groupby(["source", "arch"], sort=True):
        g = par["gemm"][arch]
        cols = {c: s[c].to_numpy(float) for c in ("flops", "bytes", "rows", "hbm_peak", "flop_peak", "kernels",
                                                    "measured_s")}
        err = (np.log(_gemm_cols(cols, g["f_hbm"], g["f_flop"], par["p"], T0_GRID[:, None])
                      / cols["measured_s"]) ** 2).mean(axis=-1)
        out[f"{src} {arch}"] = round(float(T0_GRID[int(np.argmin(err))]), 9)
    return out


def rounded(par: dict) -> dict:
    """The parameters as the file stores them."""
    out = {"t0_s": round(par["t0_s"], 9), "p": round(par["p"], 4)}
    for (comp, arch), v in sorted((k, v) for k, v in par.items() if isinstance(k, tuple)):
        out.setdefault(comp, {})[arch] = {key: round(x, 4) for key, x in v.items()}
    return out


def _residuals(rel: np.ndarray) -> dict:
    return {"points": int(len(rel)), "rms_log": round(float(np.sqrt(np.mean(np.log1p(rel) ** 2))), 4),
            "max_abs": round(float(np.abs(rel).max()), 4), "median_abs": round(float(np.median(np.abs(rel))), 4)}


def _clean(d: dict) -> dict:
    out = {}
    for key, v in d.items():
        if isinstance(v, float) and np.isnan(v) or v == "":
            continue
        out[key] = v.item() if hasattr(v, "item") else v
    return out


def points_file(out: Path) -> Path:
    """Where the fitted points go beside the parameters file ``out``: ``<stem>_points.yaml`` (kept
    apart so that a query reading the parameters does not parse thousands of points)."""
    return out.with_name(out.stem + "_points.yaml")


def main() -> None:
    ap_ = argparse.ArgumentParser()
    ap_.add_argument("--out", default=str(ROOT / "data" / "kernel_efficiency.yaml"))
    args = ap_.parse_args()
    par = rounded(fit())
    t0, p = par["t0_s"], par["p"]
    gp, ap = gemm_points(), attention_points()
    g, a = par["gemm"], par["attention"]
    gp["fitted_s"] = [gemm_time(r.flops, r.bytes, r.rows, g[r.arch]["f_hbm"], g[r.arch]["f_flop"], p, t0, r.hbm_peak,
                                r.flop_peak, r.kernels) for r in gp.itertuples()]
    ap["fitted_s"] = [attention_time(r.flops, r.bytes, a[r.arch]["f_hbm"], a[r.arch]["f_flop"], t0, r.hbm_peak,
                                     r.flop_peak, r.kernels) for r in ap.itertuples()]
    for d in (gp, ap):
        d["residual"] = d.fitted_s / d.measured_s - 1

    def rows_of(d, keys):
        return [_clean({**{k: getattr(r, k) for k in keys}, "measured_us": round(r.measured_s * 1e6, 3),
                        "fitted_us": round(r.fitted_s * 1e6, 3), "residual": round(r.residual, 4),
                        "hbm_fraction": round(r.bytes / r.hbm_peak / r.measured_s, 4),
                        "flop_fraction": round(r.flops / r.flop_peak / r.measured_s, 4)})
                for r in d.itertuples()]

    by_source = lambda d: {f"{s} {arch}": _residuals(x.residual.to_numpy())          # noqa: E731
                           for (s, arch), x in d.groupby(["source", "arch"], sort=True)}
    readme = gp[gp.source == "deepgemm_readme"]
    doc = {
        "description": "Kernel efficiency by shape for the decode model's calibrated profile "
                       "(afdlib.evaluator.kernels). Fitted by scripts/fit_kernels.py to kernel measurements only "
                       "(DeepGEMM's and FlashMLA's READMEs, aiconfigurator's measured kernel tables); fractions are "
                       "of the datasheet peak of the device the kernel runs on, keyed by its architecture.",
        "sources": {"deepgemm_readme": DEEPGEMM, "flashmla_readme": FLASHMLA, "aiconfigurator_gemm": AIC
                    + ": DeepGEMM's dense FP8 GEMM (" + ", ".join(AIC_GEMM_KERNELS) + "), DeepSeek-V3 shapes by M",
                    "aiconfigurator_moe": AIC + ": one GPU's routed experts of one DeepSeek-V3 / Qwen3 MoE layer, "
                    "DeepGEMM grouped GEMMs (SGLang wide-EP deepepmoe, uniform; TensorRT-LLM deepgemm, balanced); active "
                    "experts min(E / EP, pairs), the tables' routing (their times are flat once the pairs reach "
                    "E / EP)",
                    "aiconfigurator_mla": AIC + ": TensorRT-LLM's MLA decode kernel, 128 heads, BF16 compute "
                    "(Blackwell: BF16 cache only)"},
        "hardware_of_the_measurements": H800,
        "architectures": {key: list(v) for key, v in ARCH.items()},
        "default_architecture": DEFAULT_ARCH,
        "gemm": {
            "source": "deepgemm_readme (H800), aiconfigurator_gemm and aiconfigurator_moe (H100, H200, B200, GB200)",
            "form": "t = kernels t0 + ((B / (f_hbm BW))^p + (F max(1, block_m / rows) / (f_flop P))^p)^(1/p)",
            "applies_to": "every GEMM of the decode step: attention projections, router, shared experts, dense FFN, "
                          "LM head (rows = tokens), routed experts' grouped GEMMs (rows = pairs per active expert, the "
                          "decode model counting the active experts of random routing); "
                          "BF16 GEMMs take the same fractions of the BF16 peak (assumption: no BF16 table)",
            "block_m": BLOCK_M,
            "moe_kernels": MOE_KERNELS,
            "parameters": {"p": p, "t0_s": t0, "by_architecture": g},
            "fit": "with the fixed cost (the attention core is fitted after, at that t0): sum over sources (and "
                   "architectures) of the "
                   "mean squared log error of the kernel time, nested grid search over "
                   + ", ".join(f"{key} in [{lo:g}, {hi:g}]" for key, (lo, hi) in RANGES.items()),
            "validity": "rows per weight matrix 1..8192 (below 64: padded to the tile, as DeepGEMM computes), "
                        "N 2112..32768, K 512..16384; MoE layers of DeepSeek-V3 and Qwen3-235B shapes, 0.25..512 "
                        "tokens per expert. Outside: the form's own limits.",
            "residuals": {"all": _residuals(gp.residual.to_numpy()), **by_source(gp),
                          "deepgemm_readme max_abs_memory_bound_rows_le_256":
                              round(float(readme.residual[readme.m <= 256].abs().max()), 4)},
        },
        "attention_core": {
            "source": "flashmla_readme (H800 figures), aiconfigurator_mla (H100, H200, B200, GB200)",
            "form": "t = t0 + max(cache bytes / (f_hbm BW), FLOPs / (f_flop P_bf16)); core attention always at the "
                    "BF16 rate (FlashMLA dequantizes an FP8 cache), bytes at the cache's data type",
            "applies_to": "the core attention of every family (MLA; GQA/MFA: assumed the same fractions)",
            "parameters": {"by_architecture": a},
            "figures": [{"source": "flashmla_readme", "bound": "memory", "gb_per_s": 3000,
                         "fraction": round(FLASHMLA_FRACTIONS["f_hbm"], 4),
                         "residual": round(a["hopper"]["f_hbm"] / FLASHMLA_FRACTIONS["f_hbm"] - 1, 4)},
                        {"source": "flashmla_readme", "bound": "compute", "bf16_tflops": 660,
                         "fraction": round(FLASHMLA_FRACTIONS["f_flop"], 4),
                         "residual": round(a["hopper"]["f_flop"] / FLASHMLA_FRACTIONS["f_flop"] - 1, 4)}],
            "fit": "with the GEMMs (shared t0); Hopper: the MLA table and FlashMLA's two figures (the two figures "
                   "together one source, each the log ratio of the fitted fraction to it)",
            "validity": "batch 1..512, context 1k..16k, 128 heads; Blackwell over an FP8 cache: TensorRT-LLM's kernel "
                        "computes faster than the BF16 rate this form keeps (rows left out: the model is slow there). "
                        "Checked against StepFun's attention-layer times (Step-3 report Table 9), not fitted to them",
            "residuals": {"all": _residuals(ap.residual.to_numpy()), **by_source(ap)},
        },
        "fixed_per_kernel": {
            "source": "the GEMM fit's t0 (small-M intercepts of the dense GEMMs, the MoE layers' intercept over "
                      f"{MOE_KERNELS} kernels; ramp and tail inside each kernel)",
            "seconds": t0,
            "applies_to": "every kernel of the step (GEMMs, attention, norms, activations), as the datasheet "
                          "profile's 3 us does; the all-to-all pays its message latency instead",
            "by_source": (by_t0 := t0_by_source(gp, par)),
            "rms_log": round(float(np.sqrt(np.mean(np.log(np.array(list(by_t0.values())) / t0) ** 2))), 4),
            "spread": "by_source: each GEMM source's own best t0, the other parameters at the fit's; rms_log: their "
                      "rms log ratio to the fitted t0 (the decode model's uncertainty on the fixed cost per kernel)",
        },
    }
    points_path = points_file(Path(args.out))
    doc["points_file"] = points_path.name
    points = {"gemm": rows_of(gp, ("source", "system", "kind", "layout", "groups", "m", "n", "k", "model", "ep",
                                   "tokens", "rows")),
              "attention_core": rows_of(ap, ("source", "system", "kv_dtype", "batch", "context"))}
    header = "# Written by scripts/fit_kernels.py: do not edit by hand (re-run the script).\n"
    Path(args.out).write_text(header + yaml.safe_dump(doc, sort_keys=False, width=110))
    points_path.write_text(header + f"# The measurements {Path(args.out).name} is fitted to, each with its fitted time.\n"
                           + yaml.safe_dump(points, sort_keys=False, width=110))
    print(f"{args.out}: t0 {t0 * 1e6:.3g} us, p {p}, gemm {g}, attention {a}")
    print(yaml.safe_dump({"gemm": doc["gemm"]["residuals"], "attention": doc["attention_core"]["residuals"]}))


if __name__ == "__main__":
    main()
