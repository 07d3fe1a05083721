"""Book tables that fit the text column: related columns of a wide table merged into one cell each
("61 (3 + 58)", "200 / 50"), so that nothing scrolls and no value is lost. The data files keep every column
as it is; these frames are only what the page shows (text cells)."""
from __future__ import annotations

import math

import pandas as pd


def cell(value) -> str:
    """One value as a table shows it: no needless decimals (4500, 3.35, 2614.9), "-" where there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)


def models_display(table: pd.DataFrame) -> pd.DataFrame:
    """The configurations chapter's model table (:func:`afdlib.inputs.catalog.model_row` rows) in eight
    columns: the model with its slug, the layers with their dense and MoE counts, E, K, M and the two ratios
    (the prose names the letters)."""
    return pd.DataFrame({
        "model (slug)": [f"{n} ({s})" for n, s in zip(table["name"], table["slug"])],
        "H": table["hidden_size"].map(cell),
        "layers (dense + MoE)": [f"{cell(n)} ({cell(d)} + {cell(m)})"
                                 for n, d, m in zip(table["num_layers"], table["dense_layers"], table["moe_layers"])],
        "E": table["routed_experts"].map(cell), "K": table["experts_per_token"].map(cell),
        "M": table["moe_intermediate_size"].map(cell),
        "H / M": table["granularity_h_over_m"].map(lambda v: f"{v:.2f}"),
        "E / K": table["sparsity_e_over_k"].map(cell)})


def hardware_display(table: pd.DataFrame) -> pd.DataFrame:
    """The configurations chapter's hardware table (:func:`afdlib.inputs.catalog.hardware_row` rows) in six
    columns: the device with its slug and profile, the peak with its data type, BF16 / FP4, HBM bandwidth /
    capacity, scale-up / scale-out, and the GPUs per node marked where the device is a Superpod."""
    def pair(a, b):
        return [f"{cell(x)} / {cell(y)}" for x, y in zip(table[a], table[b])]
    return pd.DataFrame({
        "device (slug, profile)": [f"{n} ({s}, {p})" for n, s, p in zip(table["name"], table["slug"], table["profile"])],
        "peak TFLOP/s": [f"{cell(v)} {str(d).upper()}" for v, d in zip(table["peak_tflops"], table["dtype"])],
        "BF16 / FP4 TFLOP/s": pair("bf16_tflops", "fp4_tflops"),
        "HBM TB/s / GB": pair("hbm_tb_per_s", "hbm_gb"),
        "scale-up / scale-out GB/s": pair("scale_up_gb_per_s", "scale_out_gb_per_s"),
        "GPUs per node": [f"{cell(g)}{', Superpod' if bool(s) else ''}"
                          for g, s in zip(table["gpus_per_node"], table["superpod"])]})
