"""The afd command: JSON shapes, check values, and the user-error path (one line, exit 2)."""
import json
import subprocess
import sys

import pytest

from afdlib.cli import main


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_intensity_json_reproduces_the_check_values(capsys):
    rows = run_json(capsys, "intensity", "--model", "deepseek-v3", "--hardware", "h800", "--json")
    assert [r["n_ffn"] for r in rows] == list(range(1, 65))
    assert set(rows[0]) == {"n_ffn", "local_experts", "intensity", "intensity_continuous", "regime"}
    by_n = {r["n_ffn"]: r for r in rows}
    assert by_n[1]["intensity"] == pytest.approx(0.2)
    assert by_n[3]["intensity"] == pytest.approx(0.485, abs=5e-4)
    assert by_n[3]["intensity_continuous"] == pytest.approx(0.5)
    assert by_n[12]["intensity"] == pytest.approx(0.667, abs=5e-4) and by_n[12]["local_experts"] == 3
    assert by_n[24]["intensity_continuous"] == pytest.approx(1.5)
    assert by_n[32]["intensity"] == pytest.approx(2.0) and by_n[32]["regime"] == "max-intensity"
    assert by_n[2]["regime"] == "scale-up-bound" and by_n[4]["regime"] == "stable"
    assert by_n[8]["regime"] == "scale-out-bound"


def test_intensity_n_ffn_lists(capsys):
    rows = run_json(capsys, "intensity", "--model", "step3", "--hardware", "b200", "--n-ffn", "1..3,8", "--json")
    assert [r["n_ffn"] for r in rows] == [1, 2, 3, 8]


def test_catalog_json_carries_sources(capsys):
    doc = run_json(capsys, "catalog", "--json")
    assert doc["hardware"]["h800"]["scale_up_bytes_per_s"] == pytest.approx(160e9)
    assert doc["hardware"]["h800"]["sources"]["scale_up_gb_per_s"].startswith("arXiv 2602.09721")
    assert doc["models"]["deepseek-v3"]["routed_experts"] == 256


def test_human_output(capsys):
    assert main(["intensity", "--model", "deepseek-v3", "--hardware", "h800", "--n-ffn", "1..4"]) == 0
    out = capsys.readouterr().out
    assert "regimes start at N_F = stable 2.5, scale-out-bound 8, max-intensity 32" in out
    assert main(["catalog"]) == 0 and "deepseek-v3" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["intensity", "--model", "nope", "--hardware", "h800"], "unknown model 'nope'"),
    (["intensity", "--model", "deepseek-v3", "--hardware", "h900"], "unknown hardware 'h900'"),
    (["intensity", "--model", "deepseek-v3", "--hardware", "h800", "--gpus-per-node", "0"], "gpus-per-node"),
    (["intensity", "--model", "deepseek-v3", "--hardware", "/no/such.yaml"], "no such file"),
])
def test_user_errors_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("afd: error:") and message in err and err.count("\n") == 1


def test_bad_n_ffn_is_an_argument_error(capsys):
    assert main(["intensity", "--model", "deepseek-v3", "--hardware", "h800", "--n-ffn", "0..4"]) == 2
    assert ">= 1" in capsys.readouterr().err


def test_console_script_without_traceback(tmp_path):
    bad = tmp_path / "hw.yaml"
    bad.write_text("fp8_tflops: 1\nhbm_tb_per_s: 1\nhbm_gb: 1\nscale_up_gb_per_s: 1\nscale_out_gb_per_s: -1\n"
                   "source: x\n")
    proc = subprocess.run([sys.executable, "-m", "afdlib.cli", "intensity", "--model", "deepseek-v3",
                           "--hardware", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "scale_out_gb_per_s must be positive" in proc.stderr


def test_hfu_json(capsys):
    doc = run_json(capsys, "hfu", "--model", "deepseek-v3", "--hardware", "h800", "--json")
    assert set(doc) == {"rows", "max_hfu", "best_n_ffn", "dead_zone_floor"}
    assert doc["max_hfu"] == pytest.approx(0.331, abs=1e-3) and doc["best_n_ffn"] == 2
    assert doc["dead_zone_floor"] == pytest.approx(0.103, abs=1e-3)
    assert set(doc["rows"][0]) == {"n_ffn", "hfu", "limit", "feasible", "fails"} and len(doc["rows"]) == 64
    assert doc["rows"][0]["feasible"] is False and doc["rows"][0]["limit"] == "hbm-capacity"
    # every rule N_F = 1 fails: 58 x 32 x 44 MB = 81.7 GB > 80 GB (paper profile), and one layer's
    # 1.41 GB read at 3.35 TB/s (0.42 ms) exceeds t_B = 0.38 ms
    assert doc["rows"][0]["fails"] == ["hbm-capacity", "hbm-time"] and doc["rows"][1]["fails"] == []
    for model, want in (("deepseek-v3", 0.655), ("kimi-k2", 0.655), ("glm-4.7", 0.492)):
        for hw in ("gb200", "gb300"):
            got = run_json(capsys, "hfu", "--model", model, "--hardware", hw, "--json")["max_hfu"]
            assert got == pytest.approx(want, abs=1e-3)


def test_hfu_options_and_errors(capsys):
    doc = run_json(capsys, "hfu", "--model", "kimi-k2", "--hardware", "h200", "--slo-ms", "100", "--n-ffn", "1,2",
                   "--json")
    assert doc["rows"][0]["feasible"] is True
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--slo-ms", "5"]) == 2
    assert "no time left per stage" in capsys.readouterr().err
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--hbm-fraction", "1.5"]) == 2
    assert "hbm-fraction" in capsys.readouterr().err
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--n-ffn", "1..3"]) == 0
    assert "max HFU upper bound: 33.1% at N_F = 2" in capsys.readouterr().out


def test_penalty_json(capsys):
    doc = run_json(capsys, "penalty", "--sigma", "0.8", "--n-attn", "8", "--n-ffn", "2", "--json")
    assert set(doc) == {"alpha_ep", "alpha_afd", "alpha_afd_exact", "rounding", "alpha_afd_floor", "alpha_afd_ceil", "dp"}
    assert doc["alpha_afd"] == pytest.approx(0.9375) and doc["rounding"] == "floor"
    assert doc["alpha_ep"] == pytest.approx(0.952, abs=5e-4)  # lambda defaults to N_A / N_F = 4
    assert doc["alpha_afd_exact"] == pytest.approx(doc["alpha_ep"])
    doc = run_json(capsys, "penalty", "--sigma", "0.8", "--n-attn", "10", "--n-ffn", "2", "--lambda-ep", "4", "--json")
    assert doc["rounding"] == "exact" and doc["alpha_afd"] == pytest.approx(0.96)
    assert doc["alpha_ep"] == pytest.approx(0.952, abs=5e-4)


@pytest.mark.parametrize("argv, message", [
    (["--sigma", "1.5", "--n-attn", "8", "--n-ffn", "2"], "sigma"),
    (["--sigma", "0", "--n-attn", "8", "--n-ffn", "2"], "sigma"),
    (["--sigma", "0.8", "--n-attn", "0", "--n-ffn", "2"], "N_A"),
    (["--sigma", "0.8", "--n-attn", "8", "--n-ffn", "-1"], "N_F"),
])
def test_penalty_errors(capsys, argv, message):
    assert main(["penalty", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("afd: error:") and message in err


def _counts_file(tmp_path):
    f = tmp_path / "counts.json"
    f.write_text(json.dumps({"logical_count": [[0] * 8, [8, 0, 1, 1, 1, 1, 1, 1], [1] * 8]}))
    return f


def test_balance_json_on_any_file(capsys, tmp_path):
    doc = run_json(capsys, "balance", "--counts", str(_counts_file(tmp_path)), "--ranks", "4", "--json")
    assert set(doc) == {"median_contiguous", "median_redundant", "layers"}
    assert [r["layer"] for r in doc["layers"]] == [1, 2]  # the all-zero dense layer is skipped
    assert doc["layers"][0]["contiguous"] == pytest.approx(0.4375) and doc["layers"][1]["contiguous"] == 1
    sampled = run_json(capsys, "balance", "--counts", str(_counts_file(tmp_path)), "--ranks", "4", "--tokens", "100",
                       "--top-k", "2", "--seed", "3", "--json")
    again = run_json(capsys, "balance", "--counts", str(_counts_file(tmp_path)), "--ranks", "4", "--tokens", "100",
                     "--top-k", "2", "--seed", "3", "--json")
    assert sampled == again  # seeded


@pytest.mark.parametrize("extra, message", [
    (["--ranks", "0"], "ranks"), (["--ranks", "4", "--redundant", "-1"], "redundant"),
    (["--ranks", "4", "--tokens", "0"], "tokens"), (["--ranks", "4", "--top-k", "9", "--tokens", "5"], "top-k"),
    (["--ranks", "16"], "slots"),
])
def test_balance_errors(capsys, tmp_path, extra, message):
    assert main(["balance", "--counts", str(_counts_file(tmp_path)), *extra]) == 2
    assert message in capsys.readouterr().err


def test_balance_malformed_file(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"something": []}')
    assert main(["balance", "--counts", str(bad), "--ranks", "4"]) == 2
    assert "logical_count" in capsys.readouterr().err


def test_the_command_line_imports_no_decode_model_until_a_command_runs_it():
    """`afd --help` builds every subcommand's parser: none of them imports the decode model (its ~50 ms
    are paid by the commands that evaluate a deployment), and the EP micro-batch default the help
    states is EPDeployment's."""
    import subprocess
    import sys
    code = ("import sys; from afdlib.cli import build_parser; p = build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith('afdlib.decode')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() in ("[]", "['afdlib.decode']")
    from afdlib.decode.deployment import EPDeployment
    assert EPDeployment.micro_batches == 2     # "2 (two-batch overlap; the default)" in afd throughput --help


def test_a_line_naming_a_subcommand_builds_only_its_parser_and_any_other_line_every_one():
    """A fresh query pays for its own subcommand's options only; help and a mistyped command still list
    all eleven (afd --help names each)."""
    import argparse

    from afdlib.cli import SUBCOMMANDS, build_parser

    def names(parser):
        return sorted(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)
    everyone = sorted(c.__name__.rsplit(".", 1)[-1] for c in SUBCOMMANDS)
    assert len(everyone) == 11
    assert names(build_parser(["hfu", "--model", "x"])) == ["hfu"]
    assert names(build_parser(["--help"])) == names(build_parser(["hfuu"])) == names(build_parser()) == everyone


def test_dispatch_sets_the_bytes_tokens_cross_the_wire_in(capsys):
    """--dispatch: the token bytes sent to the experts (the way back stays BF16). At a fixed batch the
    all-to-all's bandwidth term is proportional to the wire bytes per element, dispatch + combine:
    fp4 (NVFP4, 0.5625 with its scales) + 2 = 2.5625, fp8 1 + 2 = 3, bf16 2 + 2 = 4, so
    (bf16 - fp8) / (fp8 - fp4) = 1 / 0.4375 (the latency term cancels)."""
    import json
    comm = {}
    for d in ("fp4", "fp8", "bf16"):
        assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size",
                     "144", "--redundant", "32", "--batch-per-gpu", "64", "--ep-micro-batches", "1",
                     "--dispatch", d, "--json"]) == 0
        comm[d] = json.loads(capsys.readouterr().out)["breakdown"]["comm_us"]
    assert (comm["bf16"] - comm["fp8"]) / (comm["fp8"] - comm["fp4"]) == pytest.approx(1 / 0.4375, rel=1e-6)
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "8",
                 "--dispatch", "fp5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dispatch" in err and "fp5" in err
    # with given stage times the decode model's options are refused, this one too
    assert main(["simulate", "--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "120", "--t-comm-us", "60",
                 "--layers", "8", "--dispatch", "fp4"]) == 2
    assert "--dispatch" in capsys.readouterr().err
