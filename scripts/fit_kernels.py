"""Fit the decode model's kernel-efficiency curves to published kernel measurements.

    .venv/bin/python scripts/fit_kernels.py [--out data/kernel_efficiency.yaml]

Sources: ``../shared/reference/kernels.md`` sections 1-2 (DeepGEMM's FP8 GEMM tables, FlashMLA's
README figures), copied below point by point with their source. Deployments are never used.
Deterministic: a nested grid search (no random start, no optimiser library) minimising the
squared log error of the kernel times. The library reads the written file
(:mod:`afdlib.evaluator.kernels`); the tests check that it reproduces these points.

GEMM form (one kernel, DeepGEMM, FP8 weights with fine-grained scales): with B the bytes it moves,
F its FLOPs, BW and P the device's datasheet HBM rate and FP8 peak, and rows per weight matrix
below the tile height padded to it (F_eff = F max(1, BLOCK_M / rows)),

    t = t0 + ((B / (f_hbm BW))^p + (F_eff / (f_flop P))^p)^(1/p)

a roofline whose corner is rounded (p -> infinity: the hard max of the evaluator): near the ridge
a real kernel neither streams nor computes at full rate. t0 is the kernel's fixed cost (ramp and
tail). The achieved HBM fraction B / (BW t) then rises with the kernel's size (t0 amortised) and
falls as rows approach the ridge (compute shares the time); the achieved FLOP fraction rises with
rows. Both are monotone in rows at a fixed weight shape (tests/test_kernels.py).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEEPGEMM = ("[P] deepseek-ai/DeepGEMM README, performance section at commit 327ec92 (2025-04-09), H800 SXM5, "
            "NVCC 12.8; as tabulated in shared/reference/kernels.md section 1")
FLASHMLA = ("[P] deepseek-ai/FlashMLA README (2025-2026): 'up to 3000 GB/s in memory-bound configuration and "
            "660 TFLOPS in computation-bound configuration on H800 SXM5 with CUDA 12.8'; FP8 KV cache: "
            "'dequantizes the cache to bfloat16 and performs attention computation in bfloat16' "
            "(shared/reference/kernels.md section 2)")
H800 = {"hbm_bytes_per_s": 3.35e12, "fp8_flops": 1979e12, "bf16_flops": 989e12,
        "source": "[P] kernels.md (H800 peak 3.35 TB/s, dense FP8 1,979 TFLOPS, BF16 989)"}
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

RANGES = {"f_hbm": (0.5, 1.0), "f_flop": (0.4, 1.0), "p": (1.0, 8.0), "t0_s": (0.0, 10e-6)}
"""Search box of each parameter (fractions of peak at most 1: a kernel cannot beat the datasheet)."""


def gemm_shapes():
    """Arrays (groups, M, N, K, FLOPs, bytes, measured seconds) of the DeepGEMM points. Bytes: FP8
    weights N K and activations M K, BF16 output 2 M N per group (DeepGEMM's own count: the GB/s
    column equals bytes / time within 0.1%)."""
    g, m, n, k, tf, gb = (np.array([p[i] for p in POINTS], dtype=float) for i in range(1, 7))
    flops = 2 * g * m * n * k
    nbytes = g * (n * k + m * k + 2 * m * n)
    seconds = flops / (tf * 1e12)
    assert np.allclose(nbytes / seconds / 1e9, gb, rtol=2e-3), "byte count disagrees with DeepGEMM's GB/s"
    return g, m, n, k, flops, nbytes, seconds


def gemm_time(flops, nbytes, rows, f_hbm, f_flop, p, t0_s, hbm=H800["hbm_bytes_per_s"], peak=H800["fp8_flops"]):
    """The form of the module docstring (the library's :func:`afdlib.evaluator.kernels.gemm_seconds`)."""
    mem = nbytes / (f_hbm * hbm)
    comp = flops * np.maximum(1.0, BLOCK_M / np.maximum(rows, 1e-9)) / (f_flop * peak)
    return t0_s + (mem ** p + comp ** p) ** (1.0 / p)


def fit_gemm():
    """Nested grid search (6 rounds of 15 points per parameter, each round narrowing the box around the
    best point) for the least squared log error; returns the parameters."""
    _, m, _, _, flops, nbytes, seconds = gemm_shapes()
    box = dict(RANGES)
    best = None
    for _ in range(6):
        axes = [np.linspace(lo, hi, 15) for lo, hi in box.values()]
        grid = [a[..., None] for a in np.meshgrid(*axes, indexing="ij")]
        err = (np.log(gemm_time(flops, nbytes, m, *grid) / seconds) ** 2).sum(axis=-1)
        idx = np.unravel_index(np.argmin(err), err.shape)
        best = [float(a[i]) for a, i in zip(axes, idx)]
        box = {name: (max(RANGES[name][0], b - (hi - lo) / 7), min(RANGES[name][1], b + (hi - lo) / 7))
               for (name, (lo, hi)), b in zip(box.items(), best)}
    return dict(zip(RANGES, best))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "data" / "kernel_efficiency.yaml"))
    args = ap.parse_args()
    g, m, n, k, flops, nbytes, seconds = gemm_shapes()
    par = fit_gemm()
    pred = gemm_time(flops, nbytes, m, **par)
    rel = pred / seconds - 1
    points = [{"layout": p[0], "groups": p[1], "m": p[2], "n": p[3], "k": p[4], "tflops": p[5], "gb_per_s": p[6],
               "measured_us": round(float(s) * 1e6, 3), "fitted_us": round(float(f) * 1e6, 3),
               "residual": round(float(r), 4)} for p, s, f, r in zip(POINTS, seconds, pred, rel)]
    mem_bound = m <= 256
    doc = {
        "description": "Kernel efficiency by shape for the decode model's calibrated profile "
                       "(afdlib.evaluator.kernels). Fitted by scripts/fit_kernels.py to kernel measurements only; "
                       "fractions are of the datasheet peak of the device the kernel runs on.",
        "hardware_of_the_measurements": H800,
        "gemm": {
            "source": DEEPGEMM,
            "form": "t = t0 + ((B / (f_hbm BW))^p + (F max(1, block_m / rows) / (f_flop P))^p)^(1/p)",
            "applies_to": "every GEMM of the decode step: attention projections, router, shared experts, dense FFN, "
                          "LM head (rows = tokens), routed experts' grouped GEMMs (rows = tokens per active expert); "
                          "BF16 GEMMs take the same fractions of the BF16 peak (assumption: no BF16 table)",
            "block_m": BLOCK_M,
            "parameters": {key: round(v, 9 if key == "t0_s" else 4) for key, v in par.items()},
            "fit": "least squared log error of the kernel time, nested grid search over "
                   + ", ".join(f"{key} in [{lo:g}, {hi:g}]" for key, (lo, hi) in RANGES.items()),
            "validity": "rows per weight matrix 64..8192 (below 64: padded to the tile, as DeepGEMM computes; the "
                        "achieved fractions are then those at 64 rows), N 2112..32768, K 512..16384, 1-8 groups. "
                        "Outside: the form's own limits (no clamp needed above 8192 rows: it saturates at f_flop).",
            "residuals": {"rms_log": round(float(np.sqrt(np.mean(np.log1p(rel) ** 2))), 4),
                          "max_abs": round(float(np.abs(rel).max()), 4),
                          "median_abs": round(float(np.median(np.abs(rel))), 4),
                          "max_abs_memory_bound_rows_le_256": round(float(np.abs(rel[mem_bound]).max()), 4)},
            "points": points,
        },
        "attention_core": {
            "source": FLASHMLA,
            "form": "t = max(cache bytes / (f_hbm BW), FLOPs / (f_flop P_bf16)); core attention always at the "
                    "BF16 rate (the kernel dequantizes an FP8 cache), bytes at the cache's data type",
            "applies_to": "the core attention of every family (MLA: FlashMLA; GQA/MFA: assumed the same fractions)",
            "parameters": {"f_hbm": round(3000e9 / H800["hbm_bytes_per_s"], 4),
                           "f_flop": round(660e12 / H800["bf16_flops"], 4)},
            "points": [{"bound": "memory", "gb_per_s": 3000}, {"bound": "compute", "bf16_tflops": 660}],
            "fit": "each fraction is its one published figure over the H800 peak (two figures, two parameters: "
                   "residual 0 by construction)",
            "validity": "FlashMLA's 'up to' figures: large batch x context (the benchmark's own configurations); "
                        "checked against StepFun's attention-layer times (Step-3 report Table 9), not fitted to them",
            "residuals": {"max_abs": 0.0},
        },
        "fixed_per_kernel": {
            "source": "the GEMM fit's t0 (DeepGEMM kernel times: ramp and tail inside the kernel)",
            "seconds": round(par["t0_s"], 9),
            "applies_to": "every kernel of the step (GEMMs, attention, norms, activations), as the datasheet "
                          "profile's 3 us does; the all-to-all pays its message latency instead",
        },
    }
    Path(args.out).write_text(
        "# Written by scripts/fit_kernels.py: do not edit by hand (re-run the script).\n"
        + yaml.safe_dump(doc, sort_keys=False, width=110))
    print(f"{args.out}: " + ", ".join(f"{key} {v:.4g}" for key, v in par.items())
          + f"; residuals rms {doc['gemm']['residuals']['rms_log']}, max {doc['gemm']['residuals']['max_abs']}")


if __name__ == "__main__":
    main()
