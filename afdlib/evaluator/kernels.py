"""Kernel profiles: how close each operator's kernel gets to the roofline, one set for both designs.

A profile turns an operator family's :class:`~afdlib.evaluator.roofline.Work` into the work its
kernel does on a device, by setting the work's ``flops_efficiency`` and ``hbm_efficiency`` and the
fixed cost per kernel. EP and AFD call the same operator families, so they get the same profile.

* ``calibrated`` (the decode model's default): efficiency by shape, fitted to published kernel
  measurements only (``data/kernel_efficiency.yaml``, written by ``scripts/fit_kernels.py`` with
  the source of every point, the fitted parameters and the residuals):

  The fractions are keyed by architecture (Hopper, Blackwell: :func:`architecture`), fitted
  jointly with one fixed cost per kernel to DeepGEMM's and FlashMLA's READMEs (H800) and
  aiconfigurator's measured kernel tables (H100, H200, B200, GB200).

  - **GEMMs** (attention projections, router, shared experts, dense FFN, LM head, the routed
    experts' grouped GEMMs), DeepGEMM's FP8 kernels: ``t = ((B / (f_hbm BW))^p + (F_pad / (f_flop
    P))^p)^(1/p)`` plus the fixed cost, a roofline with a rounded corner (:func:`gemm_seconds`);
    rows below DeepGEMM's tile height (64) are padded to it. The achieved HBM fraction therefore
    falls as rows (tokens, or tokens per active expert) approach the ridge, and the achieved FLOP
    fraction rises with rows.
  - **core attention**, FlashMLA's published figures and TensorRT-LLM's MLA kernel, a hard
    roofline, at the BF16 rate (the kernel dequantizes an FP8 cache:
    :func:`afdlib.evaluator.attention.attention_work`); a core computed in FP8
    (``Precision.attention_compute``: FP8 FlashMLA on Hopper, FP8 attention on Blackwell) runs at
    the BF16 kernel's fraction times its published speedup over it (:func:`attention_speedup`,
    ``data/attention_kernels.yaml``).
  - **fixed cost per kernel**: the joint fit's t0.

  Fractions are of the device's datasheet peak: the rate the hardware profile already discounted
  (``Hardware.efficiency``) is divided out first. Hardware given as sustained figures (the paper
  profile, user files without a datasheet block) is taken as peak: the fractions apply to it as given. The networks keep the hardware profile's
  efficiencies (DeepEP's measured all-to-all) and their message latencies.
* ``datasheet``: the earlier scalar profile: every GEMM and attention at 0.75 of peak FLOP/s
  (:data:`DATASHEET_MATMUL`), HBM and networks at the hardware profile's rates (datasheet: 0.8),
  3 us per kernel (:data:`DATASHEET_KERNEL_S`).
* ``roofline``: the speed of light: every tier at the datasheet peak (the hardware profile's
  efficiencies divided out), no fixed cost per kernel, no message latency.

The paper's own analysis (Figures 2-6) does not use profiles: it keeps the paper's assumptions.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.evaluator.roofline import Work
from afdlib.inputs.specs import ATTENTION_COMPUTE

PROFILES = ("calibrated", "datasheet", "roofline")

"""Kernel profiles, the default first."""

DATASHEET_MATMUL = 0.75
"""The datasheet profile's fraction of peak FLOP/s for GEMMs and attention: measured maximum
achievable matmul FLOPS (MAMF, FP8) is 73.4% of peak on H200, 76.3% on B200, 74.5% on B300, 72.3%
on GB200 (stas00/ml-engineering)."""

DATASHEET_KERNEL_S = 3e-6
"""The datasheet profile's fixed cost per kernel (launch gaps, ramp and tail), after
AIConfigurator's "+3 us per memory op" correction (ai-dynamo/aiconfigurator systems/*.yaml)."""


@dataclass(frozen=True)
class Curves:
    """The calibrated profile's parameters (``data/kernel_efficiency.yaml``)."""

    gemm_f_hbm: float
    gemm_f_flop: float
    gemm_p: float
    block_m: float
    attention_f_hbm: float
    attention_f_flop: float
    fixed_s: float


_CURVES: dict = {}


def _curves_at(path: str) -> tuple[dict, dict, str]:
    """({architecture: Curves}, {device slug: architecture}, default architecture) of a fitted file."""
    from afdlib.inputs.files import read_yaml
    doc = read_yaml(path)
    try:
        g, att = doc["gemm"]["parameters"], doc["attention_core"]["parameters"]["by_architecture"]
        by_arch = {a: Curves(float(v["f_hbm"]), float(v["f_flop"]), float(g["p"]), float(doc["gemm"]["block_m"]),
                             float(att[a]["f_hbm"]), float(att[a]["f_flop"]), float(doc["fixed_per_kernel"]["seconds"]))
                   for a, v in g["by_architecture"].items()}
        devices = {slug: a for a, slugs in doc["architectures"].items() for slug in slugs}
        return by_arch, devices, str(doc["default_architecture"])
    except (KeyError, TypeError, ValueError) as e:
        raise AfdError(f"{path}: malformed kernel efficiency file ({e}); re-run scripts/fit_kernels.py") from None


def _table() -> tuple[dict, dict, str]:
    key = os.environ.get("AFDLIB_DATA")
    t = _CURVES.get(key)
    if t is None:
        from afdlib.inputs.catalog import data_dir
        t = _CURVES[key] = _curves_at(str(data_dir() / "kernel_efficiency.yaml"))
    return t


def architecture(hardware=None) -> str:
    """The architecture key of the fitted fractions for ``hardware`` (an object with a ``slug``, or a
    slug): the file's ``architectures`` table, else its default (Hopper: the DeepGEMM README's)."""
    _, devices, default = _table()
    slug = hardware if isinstance(hardware, str) else getattr(hardware, "slug", None)
    if isinstance(slug, str) and "+" in slug:      # devices stacked for one search (afdlib.decision.advise)
        found = {devices.get(part, default) for part in slug.split("+")}
        if len(found) > 1:
            raise AfdError(f"stacked devices {slug} mix kernel architectures ({', '.join(sorted(found))}); "
                           "search them apart")
        return found.pop()
    return devices.get(slug, default)


_SPEEDUPS: dict = {}


def attention_speedup(hardware, compute: str) -> float:
    """The published speedup of the core attention's ``compute``-type kernel over the BF16 kernel
    on ``hardware``'s architecture (``data/attention_kernels.yaml``: 1 for BF16; FP8 FlashMLA on
    Hopper 1.7, FP8 attention on Blackwell 1.8), read once per data folder."""
    if compute not in ATTENTION_COMPUTE:
        raise AfdError(f"unknown attention compute type '{compute}'; valid: {', '.join(ATTENTION_COMPUTE)}")
    key = os.environ.get("AFDLIB_DATA")
    table = _SPEEDUPS.get(key)
    if table is None:
        from afdlib.inputs.catalog import data_dir
        from afdlib.inputs.files import read_yaml
        doc = read_yaml(data_dir() / "attention_kernels.yaml")
        try:
            table = _SPEEDUPS[key] = {(c, a): float(v["speedup_over_bf16"])
                                      for c, by in doc["compute"].items() for a, v in by.items()}
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise AfdError(f"{data_dir() / 'attention_kernels.yaml'}: malformed ({e})") from None
    arch = architecture(hardware)
    if (compute, arch) not in table:
        raise AfdError(f"no {compute.upper()} attention kernel measured for {arch} devices "
                       "(data/attention_kernels.yaml); use --attention-compute bf16")
    return table[(compute, arch)]


def curves(hardware=None) -> Curves:
    """The calibrated curves of ``hardware``'s architecture (:func:`architecture`; default: Hopper),
    read once (per data folder) from ``data/kernel_efficiency.yaml``."""
    return _table()[0][architecture(hardware)]


def gemm_seconds(flops: ArrayLike, nbytes: ArrayLike, rows: ArrayLike, hbm_peak: float, flop_peak: float,
                 c: Curves | None = None) -> np.ndarray:
    """Seconds of a GEMM kernel without its fixed cost: ``((B / (f_hbm BW))^p + (F max(1, m / rows) /
    (f_flop P))^p)^(1/p)`` (m: the kernel's tile height, ``block_m`` in the file) at the device's datasheet peaks ``hbm_peak`` (bytes/s) and ``flop_peak``."""
    c = c or curves()
    mem = np.asarray(nbytes, dtype=float) / (c.gemm_f_hbm * hbm_peak)
    comp = (np.asarray(flops, dtype=float) * _padding(rows, c) / (c.gemm_f_flop * flop_peak))
    return _rounded(mem, comp, c.gemm_p)


def _padding(rows, c: Curves) -> np.ndarray:
    r = np.asarray(rows, dtype=float)
    return np.maximum(1.0, c.block_m / np.maximum(r, 1e-9))


def _rounded(a, b, p):
    """``hi (1 + (lo / hi)^p)^(1/p)`` of the larger ``hi`` and smaller ``lo`` of ``a`` and ``b`` (0 where
    hi is not positive), computed in place: the same operations in the same order, fewer arrays."""
    hi, r = np.maximum(a, b), np.minimum(a, b)
    if not isinstance(r, np.ndarray) or r.shape != np.shape(hi):      # a number, or broadcast: a copy to work in
        r = np.array(np.broadcast_to(r, np.shape(hi)), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(r, hi, out=r)
    off = ~(hi > 0)
    if off.any():
        r[off] = 0.0
    np.power(r, p, out=r)
    r += 1.0
    np.power(r, 1.0 / p, out=r)
    np.multiply(hi, r, out=r)
    return r if r.ndim else r[()]          # a number for numbers, as numpy's own arithmetic gives


def _one(x) -> bool:
    return np.ndim(x) == 0 and x == 1.0


def _applied(hardware):
    """(compute, hbm, scale-up, scale-out) efficiencies the hardware profile put into the rates."""
    e = getattr(hardware, "efficiency", None)
    return (1.0, 1.0, 1.0, 1.0) if e is None else (e.compute, e.hbm, e.scale_up, e.scale_out)


@dataclass(frozen=True)
class KernelProfile:
    """A kernel profile (:data:`PROFILES`); ``matmul_efficiency`` and ``kernel_overhead_s``, where
    given, replace every operator's FLOP fraction and the fixed cost per kernel (what-ifs)."""

    name: str = PROFILES[0]
    matmul_efficiency: float | None = None
    kernel_overhead_s: float | None = None

    def __post_init__(self):
        if self.name not in PROFILES:
            raise AfdError(f"unknown kernel profile '{self.name}'; valid: {', '.join(PROFILES)}")

    @property
    def stage_efficiency(self) -> float:
        """The FLOP fraction the evaluator applies to every operator of a stage (the datasheet
        profile's scalar; the calibrated one sets it per operator, the roofline has none)."""
        if self.name == "datasheet":
            return DATASHEET_MATMUL if self.matmul_efficiency is None else self.matmul_efficiency
        return 1.0

    @property
    def fixed_s(self) -> float:
        """Fixed cost per kernel, seconds."""
        if self.kernel_overhead_s is not None:
            return self.kernel_overhead_s
        return {"calibrated": curves().fixed_s if self.name == "calibrated" else 0.0,
                "datasheet": DATASHEET_KERNEL_S, "roofline": 0.0}[self.name]

    def _flop_fraction(self, fitted: float) -> float:
        return fitted if self.matmul_efficiency is None else self.matmul_efficiency

    def gemm(self, work: Work, hardware, rows: ArrayLike) -> Work:
        """A GEMM (or grouped GEMM) of ``rows`` rows per weight matrix (tokens; tokens per active
        expert) as the profile's kernel runs it."""
        if self.name != "calibrated":
            return work
        c = curves(hardware)
        f_flop = self._flop_fraction(c.gemm_f_flop)
        return self._calibrated(work, hardware, c.gemm_f_hbm, f_flop / _padding(rows, c), c.gemm_p)

    def attention(self, work: Work, hardware) -> Work:
        """The core attention (scores and values against the cache) as the profile's kernel runs it."""
        fp8 = bool(np.ndim(work.flops_fp8) or work.flops_fp8)
        if fp8 and getattr(hardware, "flops_dtype", "fp8") != "fp8":
            raise AfdError(f"hardware '{hardware.slug}' has no FP8 tensor cores: its attention cannot compute in "
                           "FP8; use --attention-compute bf16")
        if self.name != "calibrated":
            return work
        c = curves(hardware)
        f_flop = self._flop_fraction(c.attention_f_flop)
        if fp8 and self.matmul_efficiency is None:   # the BF16 kernel's fraction times the FP8 kernel's speedup
            f_flop = min(1.0, f_flop * attention_speedup(hardware, "fp8") * hardware.peak("bf16") / hardware.peak("fp8"))
        return self._calibrated(work, hardware, c.attention_f_hbm, f_flop, np.inf)

    @staticmethod
    def _calibrated(work: Work, hardware, f_hbm, f_flop, p) -> Work:
        """``work`` with the efficiencies (relative to the hardware's rates) that make the
        evaluator's longest tier equal the rounded roofline at fractions of the datasheet peak."""
        e_c, e_h, _, _ = _applied(hardware)
        t_mem = np.asarray(work.hbm_bytes, dtype=float) / hardware.hbm_bytes_per_s   # at the hardware's rate
        t_flop = np.asarray(work.flops_fp8, dtype=float) / hardware.peak("fp8")
        if np.ndim(work.flops_bf16) or work.flops_bf16:
            t_flop = t_flop + np.asarray(work.flops_bf16, dtype=float) / hardware.peak("bf16")
        if np.ndim(work.flops_fp4) or work.flops_fp4:
            # NVFP4 GEMMs take the FP8 fit's fraction of their own peak: no FP4 kernel measurement is on file
            t_flop = t_flop + np.asarray(work.flops_fp4, dtype=float) / hardware.peak("nvfp4")
        # seconds at the fitted fraction of the datasheet peak (x * 1.0 is x: no pass where the
        # hardware profile applied no efficiency)
        a = (t_mem if _one(e_h) else t_mem * e_h) / f_hbm
        b = (t_flop if _one(e_c) else t_flop * e_c) / f_flop
        t = np.maximum(a, b) if p == np.inf else _rounded(a, b, p)
        positive = t > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            mem_eff = np.where((a >= b) & positive, t_mem / t, f_hbm / e_h)
            flop_eff = np.where((b > a) & positive, t_flop / t, f_flop if _one(e_c) else f_flop / e_c)
        return replace(work, hbm_efficiency=mem_eff, flops_efficiency=flop_eff)

    def at_peak(self, work: Work, hardware) -> Work:
        """The roofline profile: ``work`` at the datasheet peak of every tier (the hardware profile's
        efficiencies divided out), without message latency; other profiles: unchanged."""
        if self.name != "roofline":
            return work
        e_c, e_h, e_up, e_out = _applied(hardware)
        return replace(work, flops_efficiency=np.divide(work.flops_efficiency, e_c),
                       hbm_efficiency=np.divide(work.hbm_efficiency, e_h),
                       scale_up_bytes=np.multiply(work.scale_up_bytes, e_up),
                       scale_out_bytes=np.multiply(work.scale_out_bytes, e_out),
                       inter_domain_bytes=np.multiply(work.inter_domain_bytes, e_out), fixed_s=0.0)


def fit_points() -> dict[str, list[dict]]:
    """The measurements the calibrated curves were fitted to, by block (``gemm``, ``attention_core``),
    from the points file beside ``data/kernel_efficiency.yaml`` (its ``points_file``)."""
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    name = read_yaml(data_dir() / "kernel_efficiency.yaml").get("points_file", "kernel_efficiency_points.yaml")
    return read_yaml(data_dir() / name)


def measured_points() -> list[dict]:
    """The GEMM measurements the calibrated curves were fitted to (:func:`fit_points`), each with its
    source, device, shape, measured and fitted kernel seconds and achieved HBM and FLOP fractions of
    its own device's datasheet peaks."""
    return list(fit_points()["gemm"])


def gemm_fractions(n: int, k: int, rows: ArrayLike, hbm_peak: float = 3.35e12, flop_peak: float = 1979e12,
                   groups: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(achieved HBM fraction, achieved FLOP fraction) of a GEMM of ``rows`` rows through an N x K FP8
    weight (``groups`` of them) under the calibrated curve, fixed cost included (default: H800 peaks)."""
    r = np.asarray(rows, dtype=float)
    flops, nbytes = 2.0 * groups * r * n * k, groups * (n * k + r * k + 2.0 * r * n)
    t = gemm_seconds(flops, nbytes, r, hbm_peak, flop_peak) + curves().fixed_s
    return nbytes / hbm_peak / t, flops / flop_peak / t


CURVE_SHAPES = ((4096, 7168), (7168, 2048))
"""Weight shapes (N, K) drawn with the fitted curve: DeepSeek-V3's expert gate-up and down GEMMs."""


def curve_rows(rows: ArrayLike = np.geomspace(1, 8192, 120)) -> list[dict]:
    """The calibrated GEMM curve's achieved fractions (H800 peaks) for :data:`CURVE_SHAPES`."""
    out = []
    for n, k in CURVE_SHAPES:
        hbm, flop = gemm_fractions(n, k, rows)
        out += [{"shape": f"N{n} x K{k}", "rows": float(r), "hbm_fraction": float(h), "flop_fraction": float(f)}
                for r, h, f in zip(np.asarray(rows), hbm, flop)]
    return out


def assumption_rows() -> list[dict]:
    """Each assumption of the calibrated profile with its value and source, for the book."""
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    from afdlib.inputs.specs import Efficiency
    doc = read_yaml(data_dir() / "kernel_efficiency.yaml")
    g, a = doc["gemm"]["parameters"], doc["attention_core"]["parameters"]["by_architecture"]
    res, ares = doc["gemm"]["residuals"]["all"], doc["attention_core"]["residuals"]["all"]
    fit = f"joint fit to {res['points']} FP8 GEMM and MoE kernel times: DeepGEMM README (H800), aiconfigurator " \
          f"tables (H100, H200, B200, GB200); rms {res['rms_log']:.1%}"
    afit = f"FlashMLA README (H800) and aiconfigurator's MLA table ({ares['points']} times, rms {ares['rms_log']:.1%})"
    e = Efficiency()

    def arch(d, key, fmt):
        return " / ".join(f"{d[x][key]:{fmt}}" for x in ("hopper", "blackwell"))
    return [
        {"assumption": "GEMM: HBM fraction f_hbm, Hopper / Blackwell (before the rounded corner)",
         "value": arch(g["by_architecture"], "f_hbm", ".2f"), "source": fit},
        {"assumption": "GEMM: FLOP fraction f_flop, Hopper / Blackwell", "value": arch(g["by_architecture"], "f_flop", ".3f"),
         "source": fit},
        {"assumption": "GEMM: roundness of the roofline's corner p", "value": f"{g['p']:.2f}", "source": fit},
        {"assumption": "GEMM: rows padded to the tile height", "value": f"{doc['gemm']['block_m']}",
         "source": "DeepGEMM's smallest BLOCK_M"},
        {"assumption": "fixed cost per kernel", "value": f"{g['t0_s'] * 1e6:.2f} µs", "source": fit},
        {"assumption": "core attention: HBM fraction, Hopper / Blackwell", "value": arch(a, "f_hbm", ".3f"), "source": afit},
        {"assumption": "core attention: BF16 FLOP fraction, Hopper / Blackwell", "value": arch(a, "f_flop", ".3f"),
         "source": afit},
        {"assumption": "core attention over an FP8 cache", "value": "BF16 rate, FP8 bytes",
         "source": "FlashMLA README: dequantizes to BF16, computes in BF16"},
        {"assumption": "scale-up / scale-out fraction", "value": f"{e.scale_up:g} / {e.scale_out:g}",
         "source": "hardware profile (afdlib.inputs.specs.Efficiency): NCCL on NVLink, DeepEP low-latency"},
    ]
