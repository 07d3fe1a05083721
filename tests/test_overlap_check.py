"""The schedule against SGLang's published two-batch-overlap ablation (data/overlap_checks.yaml)."""
import pytest

from afdlib.decode.overlap_check import check_readings, check_rows, load_checks


def test_tbo_ablation_signs_and_sizes():
    # published (LMSYS 2025-05-05, H100 EP72): -27% at 32, +35% at 128, +25.5% at 256 requests per GPU.
    # The schedule (two micro-batches against one serial, weights re-read per micro-batch) gets the sign
    # at all three and 128 within 10 points; recorded: -15%, +29%, +41% (256 is 16 points over: the model's
    # all-to-all grows with the batch faster than its compute there, the published gain falls)
    rows = {r["requests"]: r for r in check_rows()}
    assert set(rows) == {32, 128, 256}
    assert all(r["sign_agrees"] for r in rows.values())
    assert abs(rows[128]["points"]) <= 10
    assert [round(rows[n]["model"], 2) for n in (32, 128, 256)] == pytest.approx([-0.15, 0.29, 0.41], abs=0.011)
    assert [rows[n]["published"] for n in (32, 128, 256)] == [-0.27, 0.35, 0.255]
    # each row at its scenario's context: 256 per GPU is the 2K-input benchmark (22,310 tokens/s per node, the
    # benchmark's 22,282), which fits H100's HBM; at 4K it needed 102.8 GB of 80 GiB, which the check said
    assert all(r["fits_memory"] for r in rows.values())
    words = check_readings(list(rows.values()))
    assert words["tbo_memory"] == "every batch fits the model's HBM"
    assert words["tbo_sign"] == "the sign agrees at every batch"
    assert words["tbo_within"].startswith("within 10 percentage points at 128") and "256 (+16 points)" in words["tbo_within"]


def test_a_check_row_runs_at_its_own_context():
    # the 128 row (simulated MTP, 4K KV) and the others (the 2K benchmark) differ only in context: the
    # same check with every row at 4K reproduces the 128 row and moves the others (the attention grows)
    from afdlib.decode.overlap_check import load_checks
    c = load_checks()
    at_4k = {k: {**v, "contexts": {}} for k, v in c.items()}
    own, four = ({r["requests"]: r["model"] for r in check_rows(x)} for x in (c, at_4k))
    assert own[128] == four[128] and own[256] != four[256] and own[32] != four[32]


def test_checks_file_has_quotes_for_every_published_batch():
    for slug, c in load_checks().items():
        assert {str(k) for k in c["published_change"]} <= set(c["quotes"]), slug
        assert {"with_form", "without_form"} <= set(c), slug
