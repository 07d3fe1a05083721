"""The configurations chapter's tables merged to fit the page (afdlib.report.tables): no value lost."""
import pandas as pd

from afdlib.inputs.catalog import hardware_row, load_hardware, load_model, model_row
from afdlib.report.tables import cell, hardware_display, models_display


def test_cells_without_needless_decimals():
    assert [cell(4500.0), cell(3.35), cell(2614.9), cell(8), cell(float("nan")), cell(None)] == [
        "4500", "3.35", "2614.9", "8", "-", "-"]


def test_the_model_table_in_eight_columns_keeps_every_value():
    m = load_model("deepseek-v3", profile="paper")
    shown = models_display(pd.DataFrame([model_row(m)]))
    assert len(shown.columns) == 8
    # DeepSeek-V3 (paper's Table 4): H 7168, 61 layers of which 3 dense and 58 MoE, E 256, K 8, M 2048
    assert shown.iloc[0].tolist() == ["DeepSeek-V3 (deepseek-v3)", "7168", "61 (3 + 58)", "256", "8", "2048",
                                      "3.50", "32"]


def test_the_hardware_table_in_six_columns_keeps_every_value():
    rows = pd.DataFrame([hardware_row(load_hardware(s, profile="paper")) for s in ("h800", "gb200")])
    shown = hardware_display(rows)
    assert len(shown.columns) == 6
    # the paper's Table 5: H800 1979 FP8 TFLOP/s (989 BF16, no FP4), 3.35 TB/s, 80 GB, NVLink 160 / NIC 50 GB/s
    assert shown.iloc[0].tolist() == ["NVIDIA H800 SXM (h800, paper)", "1979 FP8", "989 / -", "3.35 / 80",
                                      "160 / 50", "8"]
    assert shown.iloc[1, -1] == "8, Superpod" and shown.iloc[1, 4] == "720 / 720"
