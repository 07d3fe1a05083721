"""Data types: bytes per element of every type name the catalogues, the configs and :class:`Precision`
use, and the tensor-core rate a GEMM over them runs at."""
from __future__ import annotations

from afdlib.errors import AfdError

NVFP4_BYTES = 0.5 + 1.0 / 16
"""Bytes per NVFP4 weight: a 4-bit (E2M1) value plus one FP8 (E4M3) scale per block of 16 values,
4.5 bits = 0.5625 bytes (shared/reference/kernels.md section 4); the one FP32 scale per tensor is
negligible."""

MXFP4_BYTES = 0.5 + 1.0 / 32
"""Bytes per MXFP4 weight (OCP microscaling): a 4-bit (E2M1) value plus one 8-bit (E8M0) scale per
block of 32 values, 4.25 bits (gpt-oss, DeepSeek-V4's and Kimi-K3's experts)."""

INT4_BYTES = 0.5 + 2.0 / 32
"""Bytes per INT4 weight as Kimi-K2.5 stores its routed experts (compressed-tensors ``pack-quantized``:
4-bit symmetric integers, one BF16 scale per group of 32, no zero point): 4.5 bits = 0.5625 bytes."""

DTYPE_BYTES = {"nvfp4": NVFP4_BYTES, "fp4": NVFP4_BYTES, "mxfp4": MXFP4_BYTES, "int4": INT4_BYTES, "fp8": 1.0,
               "int8": 1.0, "bf16": 2.0, "fp16": 2.0, "fp32": 4.0}
"""Bytes per element of each data type name. ``fp4`` means NVFP4, scales included (FP4 weights are never
stored without block scales); ``int4`` is weight-only (W4A16, :data:`WEIGHT_ONLY`)."""

FP4_DTYPES = ("nvfp4", "fp4")
"""Names of NVFP4: GEMMs whose weights are NVFP4 run W4A4 at the device's FP4 rate (:func:`matmul_tier`)."""

WEIGHT_ONLY = ("int4",)
"""Weight-only formats: the kernel dequantizes the weights and multiplies BF16 activations (W4A16, the
format's ``input_activations: null``), so the GEMM runs at the BF16 rate while reading 4-bit weights."""

ATTENTION_COMPUTE = ("bf16", "fp8")
"""The core attention's compute types (``Precision.attention_compute``), the default first: BF16 (FlashMLA
dequantizes an FP8 cache), FP8 (FP8 FlashMLA on Hopper, FP8 attention on Blackwell)."""

MATMUL_TIERS = ("fp4", "fp8", "bf16")


def dtype_bytes(name: str) -> float:
    """Bytes per element of a data type name (``fp8``, ``bf16``, ...); AfdError for an unknown one."""
    try:
        return DTYPE_BYTES[str(name).lower()]
    except KeyError:
        raise AfdError(f"unknown data type '{name}'; valid: {', '.join(DTYPE_BYTES)}") from None


def matmul_tier(dtype: str) -> str:
    """The tensor-core rate (:data:`MATMUL_TIERS`) a GEMM whose operands are ``dtype`` runs at:
    ``fp4`` for NVFP4 and MXFP4 (W4A4: the kernel quantizes the activations to FP4 as well, as the
    Blackwell FP4 GEMM and grouped-GEMM kernels do), ``bf16`` for weight-only formats (:data:`WEIGHT_ONLY`)
    and 2-byte types, ``fp8`` for 1-byte types."""
    b = dtype_bytes(dtype)
    name = str(dtype).lower()
    if name in FP4_DTYPES + ("mxfp4",):
        return "fp4"
    return "bf16" if name in WEIGHT_ONLY or b > 1 else "fp8"
