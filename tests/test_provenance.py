"""A clone without the raw routing files: the routing chapters word their data as the shipped fits,
never compare the fit with itself, and the validation chapter quotes the routing chapter's sigma."""
import re

import numpy as np
import pytest

from afdlib.inputs.catalog import data_dir
from afdlib.inputs.files import read_yaml
from afdlib.routing.measured import default_counts_dir
from afdlib.routing.provenance import FIT_FILE, ep_longrun_sigma, routing_data
from afdlib.routing.sweeps import longrun_balance

EP_SIZES = [8, 16, 32, 64, 128, 144, 256, 288]   # the routing chapter's defaults


def unmeasured(text: str) -> str:
    """The text with the one allowed use of "measured" for fitted data removed."""
    return text.replace("fits of the measured", "")


@pytest.fixture
def clone(tmp_path, monkeypatch):
    """The lookup pointed at an empty folder, as in a clone without ../shared/data."""
    from afdlib.decode.validation import routing_sigma
    monkeypatch.setenv("AFDLIB_COUNTS_DIR", str(tmp_path))
    routing_sigma.cache_clear()
    yield routing_data()
    routing_sigma.cache_clear()


def test_fitted_data_is_never_called_measured(clone):
    assert not clone.measured
    words = " ".join(clone.readings().values())
    assert "measured" not in unmeasured(words) and "raw file not found" not in words
    assert "shipped fits" in clone.origin and FIT_FILE in clone.origin


def test_the_fit_is_checked_against_shipped_measurements_not_itself(clone):
    longrun = longrun_balance(clone.counts, EP_SIZES, 32)
    fitted, sentence = clone.fit_check(EP_SIZES, 32, longrun)
    assert fitted is None                               # no dashed fit over itself
    assert "of the measured balancedness" not in sentence and "Dashed" not in sentence
    shipped = read_yaml(data_dir() / FIT_FILE)["files"]["decode_in1000out1000"]["median_balancedness"]
    # independent: the fits' sigma at EP144+32 against the measured median shipped with them (0.8751)
    gap144 = abs(longrun["eplb_plus_32"][EP_SIZES.index(144)] - shipped["ep144_redundant32"])
    within = float(re.search(r"within (\d\.\d{3})", sentence).group(1))
    assert within >= round(gap144, 3) > 0               # a real comparison: the fit is not the data


def test_the_zipf_summary_of_fitted_data_uses_the_shipped_measurements(clone):
    from afdlib.routing.sweeps import zipf_fit_summary
    summary = zipf_fit_summary(clone.fit_layers())
    entry = read_yaml(data_dir() / FIT_FILE)["files"]["decode_in1000out1000"]
    measured, fitted = summary["median"][2], summary["median"][3]
    assert measured == pytest.approx(np.median(entry["expert_max_over_mean"]))   # 5.2025 over the 58 layers
    assert summary["median"][1] == pytest.approx(np.median(entry["zipf_total_variation"]))
    assert fitted > measured    # the finding of the reference book: the fit overstates the hottest expert


def test_the_validation_chapter_quotes_the_routing_chapters_sigma(clone):
    from afdlib.decode.validation import sensitivity_variations
    label, kind, values = sensitivity_variations()[-1]
    table = longrun_balance(clone.counts, EP_SIZES, 32)    # the routing chapter's long-run table
    sigma = float(table["eplb_plus_32"][EP_SIZES.index(144)])
    assert values["sigma"] == pytest.approx(sigma) == pytest.approx(ep_longrun_sigma(clone))
    assert f"{sigma:.3f}" in label and "measured" not in unmeasured(label)


@pytest.mark.skipif(not (default_counts_dir() / "decode_in1000out1000.json").exists(), reason="raw files absent")
def test_measured_data_is_compared_with_its_fit():
    data = routing_data()
    assert data.measured and data.readings()["routing"] == "measured routing" and data.fit_layers() is None
    longrun = longrun_balance(data.counts, EP_SIZES, 32)
    fitted, sentence = data.fit_check(EP_SIZES, 32, longrun)
    assert fitted is not None and "of the measured balancedness" in sentence
    # the shipped median at EP144+32 was computed from this file (scripts/fit_routing.py)
    shipped = read_yaml(data_dir() / FIT_FILE)["files"]["decode_in1000out1000"]["median_balancedness"]
    assert ep_longrun_sigma(data) == pytest.approx(shipped["ep144_redundant32"], abs=1e-4)


@pytest.mark.parametrize("chapter", ["sigma_from_routing", "pipeline_jitter", "intro", "decode_validation"])
def test_chapters_do_not_type_measured_routing_into_their_prose(chapter):
    """What the routing data is comes from the readings: the prose does not call it measured itself."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "notebooks" / f"{chapter}.py").read_text()
    for phrase in ("measured routing", "measured expert loads", "measured loads", "raw file not found",
                   "Measured DeepSeek", "measured expert imbalance"):
        hits = [line for line in text.splitlines() if phrase in line and line.startswith("#")
                and "SGLang's published" not in line]
        assert not hits, f"{chapter}: {phrase!r} typed into the prose: {hits}"


def test_the_landing_pages_departure_row_names_the_fits(clone):
    from afdlib.report.landing import method_rows
    rows = method_rows(4.0, 1.0, "8A2F", 0.015, 0.003, 8.0, 5.25, "x", [])
    row = next(r for r in rows if r["chapter"] == "sigma_from_routing")
    words = " ".join(str(v) for v in row.values())
    assert "shipped fits" in words and "measured" not in unmeasured(words)
