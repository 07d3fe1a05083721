"""The schedule against SGLang's published two-batch-overlap ablation (data/overlap_checks.yaml)."""
import pytest

from afdlib.decode.overlap_check import check_readings, check_rows, load_checks


def test_tbo_ablation_signs_and_sizes():
    # published (LMSYS 2025-05-05, H100 EP72): -27% at 32, +35% at 128, +25.5% at 256 requests per GPU.
    # The schedule (two micro-batches against one serial, weights re-read per micro-batch) gets the sign
    # at all three and 128 within 10 points; recorded: -14%, +29%, +44% (256 is 18 points over: the model's
    # all-to-all grows with the batch faster than its compute there, the published gain falls)
    rows = {r["requests"]: r for r in check_rows()}
    assert set(rows) == {32, 128, 256}
    assert all(r["sign_agrees"] for r in rows.values())
    assert abs(rows[128]["points"]) <= 10
    assert [round(rows[n]["model"], 2) for n in (32, 128, 256)] == pytest.approx([-0.14, 0.29, 0.44], abs=0.011)
    assert [rows[n]["published"] for n in (32, 128, 256)] == [-0.27, 0.35, 0.255]
    # 256 requests at 4K with a BF16 cache need 102.8 GB of H100's 80 GiB (an independent recomputation
    # found it): the check says so rather than timing it silently
    assert rows[32]["fits_memory"] and rows[128]["fits_memory"] and not rows[256]["fits_memory"]
    words = check_readings(list(rows.values()))
    assert words["tbo_memory"].startswith("256 requests per GPU do not fit")
    assert words["tbo_sign"] == "the sign agrees at every batch"
    assert words["tbo_within"].startswith("within 10 percentage points at 128") and "256 (+18 points)" in words["tbo_within"]


def test_checks_file_has_quotes_for_every_published_batch():
    for slug, c in load_checks().items():
        assert {str(k) for k in c["published_change"]} <= set(c["quotes"]), slug
        assert {"with_form", "without_form"} <= set(c), slug
