"""The aiconfigurator comparison: the committed CSV's schema and provenance, and the comparison
recomputed from it and our model (no aiconfigurator, no network)."""
from __future__ import annotations

import csv
import math
from math import comb

import numpy as np
import pytest

from afdlib.peers.aiconfigurator import (COLUMNS, DISTRIBUTIONS, TOOL_VERSION, Setting, cli_command, comparison_rows, deployment_settings, grid_settings, imbalance_factor, load_results, op_family, our_step, precision_of, tool_kwargs)
from afdlib.evaluator.alltoall import afd_destinations, exact_destinations
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.decode.step import Assumptions, ep_step
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget, Precision


@pytest.fixture(scope="module")
def rows():
    return load_results()


def test_csv_schema_and_provenance(rows):
    ids = {(r["id"], r["distribution"]) for r in rows}
    assert len(ids) == len(rows)                                   # one row per setting and table
    assert {r["distribution"] for r in rows} == set(DISTRIBUTIONS)
    for r in rows:
        assert r["tool"] == "aiconfigurator" and r["tool_version"] == TOOL_VERSION
        assert r["args"].startswith("aiconfigurator cli estimate --model-path ")
        assert f"--system {r['system']}" in r["args"] and f"--backend {r['backend']}" in r["args"]
        assert r["status"] == "ok" or r["status"].startswith("refused: ")
        if r["status"] == "ok":
            assert r["backend_version"] not in ("", "unknown")
            if r["design"] == "ep":                   # per-op sums add up to one step: TPOT x accepted tokens
                step = r["tpot_ms"] * (1 + r["nextn_accepted"])
                assert r["attn_ms"] + r["ffn_ms"] + r["other_ms"] == pytest.approx(step, rel=0.02)
            else:
                assert r["t_ffn_us"] > 0 and r["t_attn_us"] > 0
    ok = {r["id"] for r in rows if r["status"] == "ok" and r["distribution"] == DISTRIBUTIONS[0]}
    assert len(ok) >= 30                                           # the issue's "at least 30 settings"
    assert any(r["kind"] == "deployment" and r["status"] == "ok" for r in rows)


def test_csv_rows_are_the_defined_settings(rows):
    """Every setting the library defines was run, with the arguments it defines."""
    settings = grid_settings() + deployment_settings()[0]
    by_id = {r["id"]: r for r in rows if r["distribution"] == DISTRIBUTIONS[0]}
    assert set(by_id) == {s.id for s in settings}
    for s in settings:
        assert by_id[s.id]["args"] == cli_command(s)


def test_issue_example_values(rows):
    """The issue's measurements: H200, DeepSeek-V3, 4096 context, 128 per GPU: EP8 64.1 ms and
    1,997 tokens/s per GPU; AFD 1+1 nodes, 3 micro-batches: 108.3 ms, t_a 0.209, t_f 0.590 ms."""
    by = {(r["id"], r["distribution"]): r for r in rows}
    ep = by[("grid-ep-deepseek-v3-h200-b128", DISTRIBUTIONS[0])]
    assert ep["tpot_ms"] == pytest.approx(64.1, abs=0.05)
    assert ep["tokens_per_s_per_gpu"] == pytest.approx(1997, abs=1)
    assert ep["attn_ms"] == pytest.approx(21.1, abs=0.05)
    afd = by[("grid-afd-deepseek-v3-h200-b128", DISTRIBUTIONS[0])]
    assert afd["tpot_ms"] == pytest.approx(108.3, abs=0.05)
    assert (afd["t_attn_us"], afd["t_ffn_us"]) == (pytest.approx(209), pytest.approx(590))
    # its optimistic pipeline: the step is L m max(t_a, t_f, t_c) plus the LM head and the rest
    assert 61 * 3 * afd["t_ffn_us"] / 1e3 == pytest.approx(afd["tpot_ms"], rel=0.01)


def test_cli_command_is_the_issues_invocation():
    s = Setting("x", "grid", "ep", "deepseek-v3", "h200", "h200_sxm", "trtllm", 128, 4096, ep_size=8)
    cmd = cli_command(s)
    for part in ("--model-path deepseek-ai/DeepSeek-V3", "--system h200_sxm", "--backend trtllm",
                 "--estimate-mode static_gen", "--isl 4096", "--osl 2", "--stride 1", "--batch-size 128",
                 "--tp-size 1", "--attention-dp-size 8", "--moe-tp-size 1", "--moe-ep-size 8"):
        assert part in cmd
    a = Setting("y", "grid", "afd", "deepseek-v3", "gb200", "gb200", "trtllm", 64, 4096, attn_gpus=8, ffn_gpus=8,
                micro_batches=3)
    kw = tool_kwargs(a)                 # a GB200 node is a 4-GPU tray in its system file
    assert (kw["n_a_nodes"], kw["n_f_nodes"], kw["f_moe_ep_size"]) == (2, 2, 8)
    assert "--no-afd-combined-with-pd" in cli_command(a)


def test_comparison_recomputed_from_csv_and_model(rows):
    comp = {c["id"]: c for c in comparison_rows(rows)}
    r = next(r for r in rows if r["id"] == "grid-ep-deepseek-v3-h200-b128" and r["distribution"] == DISTRIBUTIONS[0])
    # our side by hand: the same step through ep_step, its data types, no gap per step, one batch
    # (the tool's EP step has no two-batch overlap)
    st = ep_step(load_model("deepseek-v3", profile="reference"), load_hardware("h200", profile="datasheet"), 8,
                 np.array(128.0), 4096, Budget(l_accept=1.0, t_gap_s=0.0),
                 Precision(weights="fp8", attention="fp8", dispatch="bf16", combine="bf16", kv_cache="fp8"),
                 micro_batches=1)
    c = comp["grid-ep-deepseek-v3-h200-b128"]
    assert c["our_tpot_ms"] == pytest.approx(float(st.tpot_s) * 1e3)
    assert c["ratio_tpot_ms"] == pytest.approx(float(st.tpot_s) * 1e3 / r["tpot_ms"])
    assert c["our_attn_ms"] == pytest.approx(61 * float(st.t_attn) * 1e3)
    # refused settings and the balanced tables are not in the default comparison
    assert all(c["id"] in {r["id"] for r in rows if r["status"] == "ok"} for c in comp.values())


def test_imbalance_factor_is_its_own_ratio(rows):
    f = imbalance_factor(rows)
    by = {(r["id"], r["distribution"]): r["tpot_ms"] for r in rows if r["status"] == "ok"}
    i = "grid-ep-deepseek-v3-h200-b128"
    assert f[i] == pytest.approx(by[(i, "power_law_1.01")] / by[(i, "balanced")])
    assert f[i] > 1.0                    # the power-law load costs it time at this batch


def test_precision_mapping():
    p = precision_of({"gemm": "fp8_block", "moe": "fp8_block", "kvcache": "fp8", "fmha": "fp8", "comm": "half"})
    assert (p.weights, p.attention, p.kv_cache, p.dispatch, p.combine) == ("fp8", "fp8", "fp8", "bf16", "bf16")
    assert precision_of({"gemm": "bfloat16", "moe": "fp8", "kvcache": "bfloat16", "fmha": "bfloat16",
                         "comm": "fp8"}).attention == "bf16"


def test_op_family():
    assert op_family("generation_mla_block") == "attention"
    assert op_family("generation_qkv_a_proj_gemm") == "attention"
    assert op_family("generation_moe_overlap") == "ffn"
    assert op_family("generation_moe_dispatch") == "ffn"
    assert op_family("generation_gate_ffn1_gemm") == "ffn"
    assert op_family("generation_add_norm_1") == "other"
    assert op_family("generation_logits_gemm") == "other"


def test_destination_rules():
    for nf in (1, 2, 3, 4, 8, 16, 32):
        # the tool's send probability: 1 - C(E - E/N_F, K) / C(E, K) per node, times N_F
        expected = nf * (1 - comb(256 - 256 // nf, 8) / comb(256, 8)) if 256 % nf == 0 else None
        got = float(exact_destinations(8, 256, nf))
        if expected is not None:
            assert got == pytest.approx(expected, rel=1e-9)
        assert 1.0 - 1e-12 <= got <= min(8, nf) + 1e-12
        assert float(afd_destinations("paper", 8, 256, nf)) == min(8, nf)
    # without replacement touches at least as many nodes as with replacement
    n = np.arange(1, 65)
    assert np.all(exact_destinations(8, 256, n) >= afd_destinations("expected", 8, 256, n) - 1e-12)
    with pytest.raises(AfdError, match="destination rule"):
        afd_destinations("bogus", 8, 256, 2)
    with pytest.raises(AfdError, match="afd_destinations"):
        Assumptions(afd_destinations="bogus")


def test_deployment_settings_say_what_they_change():
    settings, refused = deployment_settings()
    assert "step3-h800-2a2f" in refused                # no Step-3 in the tool
    by = {s.deployment: s for s in settings}
    online = by["deepseek-v3-h800-ep144-online"]
    assert online.ep_size == 128 and online.system == "h100_sxm"
    assert "H100 as proxy" in online.note and "EP128 for EP144" in online.note
    assert online.nextn == 1 and online.nextn_accepted == pytest.approx(0.875)
    assert by["deepseek-v3-gb200-ep48-sglang-june"].ep_size == 32


def _write(tmp_path, rows, drop=None):
    path = tmp_path / "aic.csv"
    cols = [c for c in COLUMNS if c != drop]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
    return path


def test_load_results_refuses_bad_files(tmp_path, rows):
    good = rows[0]
    with pytest.raises(AfdError, match="missing column.*tool_version"):
        load_results(_write(tmp_path, [good], drop="tool_version"))
    with pytest.raises(AfdError, match=r"aic.csv:2: column batch_per_gpu"):
        load_results(_write(tmp_path, [{**good, "batch_per_gpu": "many"}]))
    with pytest.raises(AfdError, match="empty provenance field.*args"):
        load_results(_write(tmp_path, [{**good, "args": ""}]))
    with pytest.raises(AfdError, match="not found"):
        load_results(tmp_path / "nope.csv")


def test_our_step_uses_the_settings_gpus():
    """AFD on GB200: 8 + 8 GPUs are two trays each in its file and one 8-GPU node each in ours."""
    s = Setting("z", "grid", "afd", "deepseek-v3", "gb200", "gb200", "trtllm", 64, 4096, attn_gpus=8, ffn_gpus=16,
                micro_batches=3)
    st = our_step(s)
    # tokens/s per GPU counts both pools: 8 attention GPUs x 64 requests / TPOT / 24 GPUs
    assert float(st.tokens_per_s_per_gpu) == pytest.approx(8 * 64 / float(st.tpot_s) / 24)


def test_speed_file_is_a_side_by_side_measurement():
    """data/aiconfigurator_speed.csv (scripts/benchmark.py --write-speed): both tools timed on the
    same work in one process, with the machine's cores and the tool's version."""
    from afdlib.inputs.catalog import data_dir
    with open(data_dir() / "aiconfigurator_speed.csv", newline="") as fh:
        rows = {r["what"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"one prediction", "100-point sweep, one call per point",
                         "100-point sweep, ours as one vectorised call"}
    for r in rows.values():
        assert float(r["aiconfigurator_s"]) > 0 and float(r["ours_s"]) > 0
        assert r["tool_version"] == TOOL_VERSION and int(r["cores"]) >= 1 and r["run_date"]
    # the sweep is 100 of the tool's single predictions
    one = float(rows["one prediction"]["aiconfigurator_s"])
    sweep = float(rows["100-point sweep, one call per point"]["aiconfigurator_s"])
    assert 50 * one < sweep < 200 * one
