"""Which routing findings need the raw files: the record shipped for clones, and the chapter's comparison."""
import pytest

from afdlib.inputs.files import read_yaml
from afdlib.report.routing_findings import FINDINGS, comparable, compare, difference, record_path
from afdlib.routing.measured import default_counts_dir
from afdlib.routing.provenance import FIT_FILE, ep_longrun_sigma, routing_data

RECORD = read_yaml(record_path())


def test_differences_are_taken_between_the_printed_numbers():
    assert difference("+0.7", "+0.1") == "+0.6"
    assert difference("0.964", "0.995") == "-0.031"
    assert difference("4.7%", "3.6%") == "+1.1 points"
    assert difference("+0.7 to +1.4", "+0.1 to +0.8") == "+0.6 / +0.6"
    assert difference("0.904", "none, EP keeping more at any DP balancedness") == "another outcome"
    assert difference("0.816", "0.816") == "equal"


def test_the_record_holds_every_finding_and_the_chapters_default_parameters():
    import tests.test_notebooks as nb
    from afdlib.report.style import run_parameters
    assert set(RECORD["findings"]) == set(FINDINGS) and "SGLang" in RECORD["source"]
    nb._check_in_process("sigma_from_routing")     # the chapter's parameter cell at its defaults
    assert comparable(run_parameters()) == RECORD["parameters"]


def test_the_record_agrees_with_the_fit_files_measured_statistic():
    # two scripts on the same raw files: the median long-run sigma at EP144+32 shipped beside the fits (0.8751)
    shipped = read_yaml(record_path().parent / FIT_FILE)["files"]["decode_in1000out1000"]["median_balancedness"]
    assert RECORD["findings"]["longrun_sigma_ep144"] == f"{shipped['ep144_redundant32']:.3f}"


@pytest.mark.skipif(not (default_counts_dir() / "decode_in1000out1000.json").exists(), reason="raw files absent")
def test_the_record_is_the_raw_files_finding():
    assert RECORD["findings"]["longrun_sigma_ep144"] == f"{ep_longrun_sigma(routing_data()):.3f}"


def test_a_clone_lists_the_findings_its_fits_change(tmp_path, monkeypatch):
    monkeypatch.setenv("AFDLIB_COUNTS_DIR", str(tmp_path))
    data = routing_data()
    assert not data.measured
    values = dict(RECORD["findings"], longrun_sigma_ep144=f"{ep_longrun_sigma(data):.3f}")
    rows, readings = compare(values, RECORD["parameters"], data.measured)
    row = next(r for r in rows if r["finding"].startswith("long-run σ at EP144 + 32 "))   # the recorded run: 32 redundant
    # the fits' sigma at EP144+32 is not the measured 0.875 (the routing chapter's table: 0.816)
    assert row["this build"] != "0.875" == row["raw files (recorded)"]
    assert row["difference"].startswith("-") and readings["raw_differ"] == 1
    assert "ran on the shipped fits" in readings["raw_note"] and "1 of its 15 findings differ" in readings["raw_note"]


def test_the_reference_build_checks_the_record_and_other_settings_are_said():
    rows, readings = compare(RECORD["findings"], RECORD["parameters"], True)
    assert readings["raw_differ"] == 0 and "all its 15 findings equal the record" in readings["raw_note"]
    _, other = compare(RECORD["findings"], dict(RECORD["parameters"], hardware="h200"), False)
    assert "parameters differ from the recorded run's (hardware)" in other["raw_note"]
    _, none = compare(RECORD["findings"], RECORD["parameters"], False, record={})
    assert "No record" in none["raw_note"]
