"""data/aiconfigurator_kernels.csv (scripts/aiconfigurator_kernels.py, aiconfigurator 0.12.0's
measured tables): it parses, has its columns, and its fractions follow from its own numbers."""
from __future__ import annotations

import pandas as pd
import pytest

from afdlib.inputs.catalog import data_dir

COLUMNS = ["system", "family", "model", "kernel", "dtype", "kv_dtype", "distribution", "hidden", "inter",
           "experts", "topk", "ep", "tokens", "tokens_per_expert", "heads", "batch", "context", "m", "n", "k",
           "measured_us", "bytes", "flops", "peak_hbm_tb_s", "peak_tflops", "hbm_fraction", "flop_fraction"]


@pytest.fixture(scope="module")
def table():
    path = data_dir() / "aiconfigurator_kernels.csv"
    assert path.read_text().startswith("# Written by scripts/aiconfigurator_kernels.py from aiconfigurator 0.12.0")
    return pd.read_csv(path, comment="#")


def test_columns_and_size(table):
    assert list(table.columns) == COLUMNS
    assert 100 <= len(table) <= 1000
    assert set(table.family) == {"moe", "mla", "gemm"}
    assert set(table.system) == {"h100", "h200", "b200", "gb200"}
    assert (table.measured_us > 0).all()


def test_fractions_follow_from_bytes_flops_and_peaks(table):
    t = table.measured_us * 1e-6
    assert table.hbm_fraction.to_numpy() == pytest.approx((table.bytes / (t * table.peak_hbm_tb_s * 1e12)).to_numpy(),
                                                          rel=1e-3, abs=6e-5)
    assert table.flop_fraction.to_numpy() == pytest.approx((table.flops / (t * table.peak_tflops * 1e12)).to_numpy(),
                                                           rel=1e-3, abs=6e-5)
    # a kernel's balanced work cannot beat the datasheet peak (power-law rows time a rank with fewer
    # experts; FP8-cache MLA is below, its FLOP fraction being of the BF16 peak)
    bound = table[(table.distribution != "power_law_1.01") & (table.kv_dtype != "fp8")]
    assert bound.hbm_fraction.max() < 1.0 and bound.flop_fraction.max() < 1.0


def test_fp8_cache_mla_beats_the_bf16_peak_on_blackwell_only(table):
    # TensorRT-LLM's MLA over an FP8 cache computes faster than BF16 allows on B200/GB200 (not on
    # Hopper): there it does not dequantize to BF16 as FlashMLA does (shared/reference/kernels.md)
    fp8 = table[(table.family == "mla") & (table.kv_dtype == "fp8")].groupby("system").flop_fraction.max()
    assert fp8["b200"] > 1.0 and fp8["gb200"] > 1.0
    assert fp8["h100"] < 1.0 and fp8["h200"] < 1.0


def test_deepseek_grouped_gemm_bytes_by_hand(table):
    # H200, EP 8, 32 tokens of the EP group, top 8 of 256: 1 token per expert, all 32 local experts
    # active: 32 * 3 * 7168 * 2048 = 1,409,286,144 weight bytes, plus 32 pairs * 7168 * (1 + 2)
    # activation bytes = 688,128: 1,409,974,272; peak 4.8 TB/s (data/hardware.yaml, datasheet).
    row = table[(table.system == "h200") & (table.family == "moe") & (table.model == "deepseek-v3")
                & (table.distribution == "balanced") & (table.tokens == 32)].iloc[0]
    assert row.tokens_per_expert == 1.0
    assert row.bytes == 1_409_974_272
    assert row.peak_hbm_tb_s == 4.8
