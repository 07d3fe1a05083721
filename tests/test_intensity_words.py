"""The intensity chapter's words from its own sweep (issue 31): the regimes the whole node counts pass
through, never a fractional border, a zero-width regime or a dead zone on one fabric."""
import numpy as np
import pandas as pd

from afdlib.analysis.intensity import intensity_sweep
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.report.intensity_words import regime_runs, result_words, runs_line


def _sweep(model, hardware, profile="paper", top=64):
    m, hw = load_model(model), load_hardware(hardware, profile=profile)
    return m, hw, pd.DataFrame(intensity_sweep(m, hw, np.arange(1, top + 1)))


def test_the_paper_pair_reads_as_the_paper():
    # DeepSeek-V3 on H800 (K = 8, r = 160/50 = 3.2): stable from K / r = 2.5, i.e. N_F = 3, the dead zone from
    # N_F = K = 8, one expert per GPU from E / g = 256 / 8 = 32
    m, hw, sw = _sweep("deepseek-v3", "h800")
    assert [(r["regime"], r["first"], r["last"]) for r in regime_runs(sw)] == [
        ("scale-up-bound", 1, 2), ("stable", 3, 7), ("scale-out-bound", 8, 31), ("max-intensity", 32, 64)]
    words = result_words(sw, m.name, hw.name, m.experts_per_token, hw.bandwidth_ratio)
    assert "over N_F = 3-7" in words and "from N_F = K = 8" in words and "the dead zone" in words
    assert "until one expert per GPU at N_F = 32" in words


def test_eight_coarse_experts_have_one_per_gpu_at_once_and_no_stable_regime():
    # Mixtral-8x7B on H100: E / g = 8 / 8 = 1 expert per GPU from N_F = 1; K = 2 < r: scale-up never binds;
    # intensity falls 4 -> 2 at N_F = K = 2 (B_rank from 2 B_out to B_out with G = 1)
    m, hw, sw = _sweep("mixtral-8x7b", "h100")
    words = result_words(sw, m.name, hw.name, m.experts_per_token, hw.bandwidth_ratio)
    assert "one expert per GPU from the first FFN node (4.000 there)" in words
    assert "from N_F = K = 2 (2.000; the dead zone)" in words
    assert "flat" not in words and "0.28" not in words                  # K / r = 2 / 7.2 is no node count


def test_one_fabric_has_no_dead_zone():
    # Step3 on GB200 NVL72: scale-out = scale-up (r = 1), K = 3: the stable regime has zero width (K / r = K)
    m, hw, sw = _sweep("step3", "gb200")
    assert "stable" not in [r["regime"] for r in regime_runs(sw)]
    words = result_words(sw, m.name, hw.name, m.experts_per_token, hw.bandwidth_ratio)
    assert "no dead zone" in words and "pinned" not in words and "stays" not in words
    assert "dead zone" not in runs_line(sw, hw.bandwidth_ratio).replace("no dead zone", "")


def test_a_sweep_short_of_k_says_it_ends_before_the_dead_zone():
    m, hw, sw = _sweep("deepseek-v3", "h800", top=5)
    assert "ends before N_F = K = 8" in result_words(sw, m.name, hw.name, m.experts_per_token, hw.bandwidth_ratio)
