"""Bad and extreme input: one line, status 2, never a traceback; JSON never holds NaN or Infinity."""
import json

import numpy as np
import pytest

from afdlib.cli import main
from afdlib.errors import AfdError

EDGES = ["0", "-1", "1", "2", "0.5", "1e-300", "1e300", "1e308", "nan", "inf", "-inf", "abc", "", "3.7",
         "100000", "9999999999999999999", "1..3", "0..4", "1,2,4"]

COMMANDS = {
    "intensity": (["--model", "deepseek-v3", "--hardware", "h800"], ["--n-ffn", "--gpus-per-node"]),
    "hfu": (["--model", "deepseek-v3", "--hardware", "h800"],
            ["--n-ffn", "--slo-ms", "--l-accept", "--t-gap-ms", "--hbm-fraction", "--ofu"]),
    "penalty": (["--sigma", "0.8", "--n-attn", "8", "--n-ffn", "2"], ["--sigma", "--n-attn", "--n-ffn", "--lambda-ep"]),
    "throughput": (["--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144"],
                   ["--context", "--batch-per-gpu", "--slo-ms", "--mtp", "--t-gap-ms", "--sigma", "--ep-overlap",
                    "--matmul-efficiency", "--redundant", "--ep-size"]),
    "simulate": (["--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "100", "--layers", "4",
                  "--steps", "20"],
                 ["--cv-ffn", "--cv-comm", "--cv-attn", "--steps", "--micro-batches", "--layers", "--t-ffn-us",
                  "--t-comm-us", "--seed", "--mtp", "--t-gap-ms"]),
}


def _no_nan(text: str):
    def bad(name):
        raise AssertionError(f"non-finite number {name} in JSON")
    return json.loads(text, parse_constant=bad)


def test_random_bad_and_extreme_options_never_crash_nor_emit_nan(capsys):
    rng = np.random.default_rng(7)
    for _ in range(160):
        command = list(COMMANDS)[rng.integers(len(COMMANDS))]
        base, options = COMMANDS[command]
        argv = [command, *base]
        for option in rng.choice(options, size=rng.integers(1, 3), replace=False):
            argv += [str(option), str(rng.choice(EDGES))]
        argv.append("--json")
        code = main(argv)
        out, err = capsys.readouterr()
        assert code in (0, 2), argv
        if code == 0:
            _no_nan(out)
        else:
            assert err.startswith("afd: error:") and err.count("\n") == 1, (argv, err)


@pytest.mark.parametrize("argv, message", [
    (["intensity", "--model", "deepseek-v3", "--hardware", "h800", "--n-ffn", "100000000000000"], "<= 100,000"),
    (["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--t-gap-ms", "nan"], "--t-gap-ms"),
    (["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--n-ffn", "1..100000000"], "<= 100,000"),
    (["penalty", "--sigma", "0.8", "--n-attn", "8", "--n-ffn", "0"], "N_F"),
    (["penalty", "--sigma", "0.8", "--n-attn", "8", "--n-ffn", "2", "--lambda-ep", "inf"], "finite"),
    (["simulate", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep"], "needs --ep-size"),
    (["simulate", "--model", "deepseek-v3", "--hardware", "h800", "--design", "afd"], "needs --n-attn"),
    (["simulate", "--design", "afd", "--t-attn-us", "1", "--t-ffn-us", "1", "--t-comm-us", "1"], "--layers"),
    (["simulate", "--design", "afd", "--t-attn-us", "1", "--t-ffn-us", "1", "--t-comm-us", "1", "--layers", "2",
      "--stragglers", "uniform"], "need the decode model"),
    (["simulate", "--design", "afd", "--t-attn-us", "1", "--t-ffn-us", "1", "--t-comm-us", "1", "--layers", "2",
      "--cv-ffn", "11"], "--cv-ffn"),
])
def test_listed_cases(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_balance_extremes(capsys, tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"logical_count": [[1e308, 1e308, 1, 1]]}))
    assert main(["balance", "--counts", str(f), "--ranks", "2", "--json"]) == 0
    doc = _no_nan(capsys.readouterr().out)
    assert doc["median_contiguous"] == pytest.approx(0.5)   # blocks of 2: (1e308 + 1e308) vs 2 -> mean/max 1/2
    for extra, message in ((["--seed", "-1"], "--seed"), (["--redundant", "1000000000"], "--redundant"),
                           (["--tokens", "100000000"], "--tokens"),
                           (["--top-k", "9"], "has no effect")):   # --top-k only samples (--tokens)
        code = main(["balance", "--counts", str(f), "--ranks", "2", *extra])
        err = capsys.readouterr().err
        assert code == 2 and message in err


def test_unreadable_files(capsys, tmp_path):
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    for argv, message in (
            (["hfu", "--model", "deepseek-v3", "--hardware", str(tmp_path) + "/"], "is a directory"),
            (["hfu", "--model", "deepseek-v3", "--hardware", str(binary)], "not UTF-8"),
            (["hfu", "--model", str(binary), "--hardware", "h800"], "not UTF-8"),
            (["balance", "--counts", str(tmp_path), "--ranks", "2"], "is a directory")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


@pytest.mark.parametrize("text, message", [
    ("fp8_tflops: 1979\nhbm_tb_per_s: 3.35\nhbm_gb: 80\nscale_up_gb_per_s: 160\nscale_out_gb_per_s: 50\n"
     "source: x\nsources: oops\n", "'sources' must be a mapping"),
    ("fp8_tflops: 1979\nhbm_tb_per_s: 3.35\nhbm_gb: 80\nscale_up_gb_per_s: 160\nscale_out_gb_per_s: 50\n"
     "source: x\nuncertain: 5\n", "'uncertain' must be a mapping"),
    ("x:\n  paper: 5\n", "'paper' must be a mapping"),
    ("fp8_tflops: 1e300\nhbm_tb_per_s: 3.35\nhbm_gb: 80\nscale_up_gb_per_s: 160\nscale_out_gb_per_s: 50\n"
     "source: x\n", "YAML reads 1e300 as text"),
    ("fp8_tflops: 1.0e+300\nhbm_tb_per_s: 3.35\nhbm_gb: 80\nscale_up_gb_per_s: 160\nscale_out_gb_per_s: 50\n"
     "source: x\n", "fp8_tflops = 1e+300 is out of range"),
    ("hardware:\n  a: {fp8_tflops: 1}\n  b: {fp8_tflops: 2}\n", "holds 2 entries"),
])
def test_hardware_file_messages(capsys, tmp_path, text, message):
    f = tmp_path / "hw.yaml"
    f.write_text(text)
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(f)]) == 2
    assert message in capsys.readouterr().err


def test_model_layers_must_add_up(capsys, tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("hidden_size: 1024\nmoe_intermediate_size: 512\nnum_layers: 4\ndense_layers: 2\nmoe_layers: 4\n"
                 "routed_experts: 8\nexperts_per_token: 2\nsource: test\n")
    assert main(["hfu", "--model", str(f), "--hardware", "h800"]) == 2
    assert "exceed num_layers" in capsys.readouterr().err
    # the paper profile keeps GLM-4.7's printed 92 MoE + 3 dense layers of 92
    assert main(["hfu", "--model", "glm-4.7", "--hardware", "h800", "--json"]) == 0


FLAT = "fp8_tflops: 1979\nhbm_tb_per_s: 3.35\nhbm_gb: 80\nscale_up_gb_per_s: 160\nscale_out_gb_per_s: 50\nsource: x\n"


@pytest.mark.parametrize("text, message", [
    # a misspelt optional field is named with the nearest known one, not dropped
    (FLAT + "scale_out_latency_usec: 10\n", "unknown field 'scale_out_latency_usec' (did you mean 'scale_out_latency_us'?)"),
    (FLAT.replace("hbm_tb_per_s", "hbm_tb_per_sec"), "unknown field 'hbm_tb_per_sec' (did you mean 'hbm_tb_per_s'?)"),
    (FLAT + "colour: red\n", "unknown field 'colour'; known: "),
    # a key given twice: an error, not the last value silently taken
    (FLAT + "hbm_gb: 141\n", "key 'hbm_gb' given twice in one mapping (line 7)"),
])
def test_hardware_files_refuse_unknown_and_repeated_fields(capsys, tmp_path, text, message):
    f = tmp_path / "hw.yaml"
    f.write_text(text)
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(f)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_model_files_and_json_refuse_unknown_and_repeated_fields(capsys, tmp_path):
    import yaml

    from afdlib.inputs.catalog import data_dir
    entry = yaml.safe_load((data_dir() / "models.yaml").read_text())["models"]["deepseek-v3"]
    entry = {k: v for k, v in entry.items() if k != "paper"}
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump({**entry, "routed_expert": 256}))
    assert main(["hfu", "--model", str(f), "--hardware", "h800"]) == 2
    assert "unknown field 'routed_expert' (did you mean 'routed_experts'?)" in capsys.readouterr().err
    counts = tmp_path / "c.json"
    counts.write_text('{"a": [1, 2], "a": [3, 4]}')
    assert main(["balance", "--counts", str(counts), "--ranks", "2"]) == 2
    assert "key 'a' given twice in one object" in capsys.readouterr().err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["balance", "--counts", str(deep), "--ranks", "2"]) == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err and err.count("\n") == 1


def test_special_files_are_refused_without_reading_them(capsys, tmp_path):
    import os
    fifo = tmp_path / "hw.yaml"
    os.mkfifo(fifo)                        # reading would block forever: refused at once
    for argv, message in ((["hfu", "--model", "deepseek-v3", "--hardware", str(fifo)], "is a FIFO, not a regular file"),
                          (["hfu", "--model", "deepseek-v3", "--hardware", "/dev/zero"], "is a device, not a regular file"),
                          (["balance", "--counts", "/dev/urandom", "--ranks", "2"], "is a device, not a regular file")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_a_scale_up_domain_follows_the_node_size_unless_given(tmp_path):
    from afdlib.inputs.catalog import load_hardware
    f = tmp_path / "four.yaml"
    f.write_text(FLAT + "gpus_per_node: 4\n")
    assert load_hardware(str(f)).scale_up_domain == 4        # was 8: a 4-GPU node in an 8-GPU domain
    f.write_text(FLAT + "gpus_per_node: 4\nscale_up_domain: 16\n")
    assert load_hardware(str(f)).scale_up_domain == 16


def test_a_tiny_sigma_prints_no_nan(capsys):
    # sigma 1e-300 is below any placement's floor (1 / (2 nodes x 4096 GPUs)): refused; at the floor,
    # sigma N_A = 8 / 8192 rounds down to 0 whole nodes: that form is 0, not 0 / 0
    assert main(["penalty", "--sigma", "1e-300", "--n-attn", "8", "--n-ffn", "2"]) == 2
    capsys.readouterr()
    assert main(["penalty", "--sigma", str(1 / 8192), "--n-attn", "8", "--n-ffn", "2"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "floor 0.0000" in out


def test_a_given_batch_says_whether_it_meets_the_slo(capsys):
    argv = ["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144",
            "--batch-per-gpu", "64"]
    assert main([*argv, "--slo-ms", "10", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meets_slo"] is False and doc["slo_ms"] == 10 and doc["tpot_ms"] > 10
    assert main([*argv, "--slo-ms", "10"]) == 0
    assert "(given; over the 10 ms SLO)" in capsys.readouterr().out
    assert main([*argv, "--slo-ms", "100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meets_slo"] is True


def test_advise_refuses_a_sigma_no_ep_deployment_can_have(capsys):
    # DeepSeek-V3's EP groups reach E + r = 256 + 32 = 288 GPUs: sigma below 1/288 describes no EP
    # deployment (the answer was "AFD, P(AFD better) = 1.00" against an EP that cannot exist)
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800", "--sigma", "0.001"]) == 2
    err = capsys.readouterr().err
    assert "[1/288, 1]" in err and err.count("\n") == 1


def test_balance_refuses_unbounded_sampling_before_running(capsys, tmp_path):
    counts = tmp_path / "c.json"
    counts.write_text(json.dumps({"logical_count": [[10 + i + j for j in range(16)] for i in range(4)]}))
    # 10^7 tokens x 8 x 1000 trials x 4 layers = 3.2e11 choices: refused at once (it ran for hours)
    assert main(["balance", "--counts", str(counts), "--ranks", "4", "--tokens", "10000000", "--trials", "1000"]) == 2
    err = capsys.readouterr().err
    assert "= 3.2e+11 sampled expert choices, more than the 1e+09" in err and err.count("\n") == 1
    assert main(["balance", "--counts", str(counts), "--ranks", "4", "--tokens", "1000", "--trials", "3"]) == 0


def test_long_numbers_are_shortened_in_error_lines(capsys):
    digits = "9" * 300
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", digits]) == 2
    err = capsys.readouterr().err
    assert "got 99999999... (300 digits)" in err and len(err) < 300 and err.count("\n") == 1
    from afdlib.inputs.checks import shortened
    assert shortened("1e400") == "1e400" and shortened("x" * 50) == "x" * 50           # a path stays whole
    assert shortened("x" * 400) == "x" * 297 + "..."


def test_afd_model_lists_the_config_fields_it_ignored(capsys, tmp_path):
    """A config.json keeps its many unrelated fields, but none is dropped unseen: afd model lists each
    field the reader never looked at (a new field that would change the model shows there)."""
    from pathlib import Path
    src = Path(__file__).resolve().parent.parent / "data" / "hf_configs" / "Qwen--Qwen3.5-397B-A17B_config.json"
    cfg = json.loads(src.read_text())
    cfg["text_config"]["moe_router_new_field"] = 3
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    assert main(["model", "--model", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "moe_router_new_field" in doc["fields_ignored"] and "architectures" in doc["fields_ignored"]
    assert not set(doc["fields_ignored"]) & set(doc["fields_read"])
    assert "tie_word_embeddings" not in doc["fields_ignored"]          # read (the LM head's weights)
    assert main(["model", "--model", str(f)]) == 0
    assert "fields ignored  " in capsys.readouterr().out


def test_a_negative_jitter_loss_is_said_to_be_sampling_noise(capsys):
    from afdlib.cli.simulate import loss_words
    assert loss_words(0.012, 30) == "throughput loss 1.2%"
    assert loss_words(-0.017, 30).startswith("throughput loss -1.7% (a gain within the sampling noise of 30 steps")
    # seed 1 of this small run gives -1.7% (checked by hand): the text says what it is
    assert main(["simulate", "--design", "ep", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "50",
                 "--layers", "4", "--steps", "30", "--micro-batches", "2", "--cv-ffn", "0.3", "--seed", "1"]) == 0
    assert "a gain within the sampling noise of 30 steps" in capsys.readouterr().out


def test_a_computed_number_in_an_error_line_is_never_hundreds_of_digits(capsys, tmp_path):
    """A device of 10^-300 TFLOPS takes some 10^304 ms per token: the line says so in 3 figures."""
    import re
    f = tmp_path / "slow.yaml"
    f.write_text("name: Slow\ngpus_per_node: 8\nbf16_tflops: 1.0e-300\nfp8_tflops: 1.0e-300\nhbm_tb_per_s: 3.35\n"
                 "hbm_gb: 141\nscale_up_gb_per_s: 450\nscale_out_gb_per_s: 50\nscale_out_latency_us: 10\nsource: a test\n")
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", str(f), "--design", "ep", "--ep-size", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(r"TPOT \d\.\d\de\+30\d ms", err) and not re.search(r"\d{16}", err), err
    from afdlib.cli import readable_numbers
    assert readable_numbers("/tmp/run12345678901234567890/x: 12345678901234567890.5 ms") == \
        "/tmp/run12345678901234567890/x: 1.23e+19 ms"                     # the path as it is, the number shortened


@pytest.mark.parametrize("argv, message", [
    (["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--l-accept", "1e300"], "--l-accept must be in"),
    (["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--slo-ms", "1e300"], "--slo-ms must be in"),
    (["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--slo", "30"], "unrecognized arguments: --slo 30"),
    (["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144",
      "--batch", "16"], "unrecognized arguments: --batch 16"),
    # an empty data type read as none given: the default FP8, unsaid
    (["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144",
      "--weights", ""], "--weights is empty"),
])
def test_out_of_range_budgets_and_option_prefixes_are_one_line_and_status_2(capsys, argv, message):
    # hfu printed 'nan%' with status 0 at an SLO of 1e300 ms; '--slo' was taken for '--slo-ms' (a prefix that a
    # later option could also start with)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_config_named_in_capitals_is_read_as_config_json(tmp_path, capsys):
    import shutil
    from afdlib.inputs.catalog import data_dir
    shutil.copy(data_dir() / "hf_configs" / "XiaomiMiMo--MiMo-V2-Flash_config.json", tmp_path / "MIMO.JSON")
    assert main(["model", "--model", str(tmp_path / "MIMO.JSON"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["experts"]["routed"] == 256 and doc["experts"]["per_token"] == 8   # its card: 256 experts, top-8


def test_advise_all_as_json_says_its_progress_on_stderr(monkeypatch, capsys):
    # with --json the table's lines (the progress without it) are gone: 182 pairs took minutes in silence
    import afdlib.inputs.catalog as catalog
    monkeypatch.setattr(catalog, "model_names", lambda *a, **k: ["deepseek-v3"])
    monkeypatch.setattr(catalog, "hardware_names", lambda *a, **k: ["h800", "h20"])
    assert main(["advise", "--all", "--json"]) == 0
    out, err = capsys.readouterr()
    assert [r["hardware"] for r in json.loads(out)] == ["h800", "h20"]
    assert err.startswith("afd advise --all: deepseek-v3 done, 2 of 2 pairs, ") and err.count("\n") == 1


def test_text_output_has_no_runaway_numbers_for_an_extreme_device(tmp_path, capsys):
    # a device file's scale-up / scale-out ratio of 10^12 printed as 1000000000000.00
    import re
    (tmp_path / "hw.yaml").write_text("name: Extreme\ngpus_per_node: 8\nfp8_tflops: 1979\nhbm_tb_per_s: 3.35\nhbm_gb: 80\n"
                                      "scale_up_gb_per_s: 1.0e+6\nscale_out_gb_per_s: 1.0e-6\nsource: a test\n")
    for command in ("intensity", "hfu"):
        assert main([command, "--model", "deepseek-v3", "--hardware", str(tmp_path / "hw.yaml")]) == 0
        out = capsys.readouterr().out
        assert "r=BW_up/BW_out=1e+12" in out or command == "hfu"
        assert not re.search(r"\d{10,}", out.replace(",", "")), out[:300]


@pytest.mark.parametrize("value", ["010", "1_000", "1:30", "0x50", "1_0.5"])
def test_a_yaml_number_in_a_notation_read_as_another_number_is_refused(tmp_path, value):
    # PyYAML (YAML 1.1) reads 010 as 8 and 1:30 as 90: an HBM of "010" GB would have been 8 GB
    from afdlib.errors import AfdError
    from afdlib.inputs.catalog import load_hardware
    path = tmp_path / "h.yaml"
    text = ("name: X\ngpus_per_node: 8\nfp8_tflops: 1979\nhbm_tb_per_s: 3.35\nhbm_gb: {}\nscale_up_gb_per_s: 160\n"
            "scale_out_gb_per_s: 50\nsource: a test\n")
    path.write_text(text.format(value))
    with pytest.raises(AfdError, match=rf"the number '{value}' \(line 5\) is in a YAML 1.1 notation"):
        load_hardware(str(path))
    path.write_text(text.format("80"))
    assert load_hardware(str(path)).hbm_bytes == 80e9


def test_a_counts_file_of_flags_text_or_another_model_s_layers_is_refused(tmp_path, capsys):
    # numpy read true as 1 and "5" as 5; a dump of 122 layers was taken for a 61-layer model's loads
    rows = [[float(e + 1) for e in range(256)] for _ in range(61)]
    for name, doc, message in (
            ("flags.json", {"logical_count": [[1, True, 3, 4]]}, "no true/false, no text"),
            ("text.json", {"logical_count": [["5", 2, 3, 4]]}, "no true/false, no text"),
            ("twice.json", {"logical_count": rows + rows}, "122 layers, 122 with routed tokens; the model (deepseek-v3) "
                                                          "has 61 layers, 58 of them MoE")):
        (tmp_path / name).write_text(json.dumps(doc))
        argv = (["balance", "--counts", str(tmp_path / name), "--ranks", "2"] if name != "twice.json" else
                ["advise", "--model", "deepseek-v3", "--hardware", "h800", "--counts", str(tmp_path / name)])
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_options_a_command_would_ignore_are_refused_or_used(tmp_path, capsys):
    # balance scored the long-run counts whatever --top-k said; simulate ran one domain whatever
    # --attention-domains said with given stage times
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps({"logical_count": [[1.0, 2.0, 3.0, 4.0]] * 2}))
    assert main(["balance", "--counts", str(counts), "--ranks", "2", "--top-k", "4"]) == 2
    assert "--top-k samples batches of --tokens tokens" in capsys.readouterr().err
    times = ["simulate", "--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "100",
             "--layers", "4", "--json"]
    tpot = []
    for d in ("1", "2"):
        assert main(times + ["--attention-domains", d]) == 0
        tpot.append(json.loads(capsys.readouterr().out)["tpot_ms_no_jitter"])
    # by hand: the FFN serves 2 domains x 3 micro-batches of 100 us per layer, 4 layers: 2.4 ms, plus the
    # fill and drain of one micro-batch's attention and transfer (0.2 ms); one domain: 1.4 ms as before
    assert tpot == pytest.approx([1.4, 2.6])
    # --counts samples the stragglers from measured loads: an explicit --stragglers none was overridden unsaid
    loads = tmp_path / "v3.json"
    loads.write_text(json.dumps({"logical_count": [[float(e % 7 + 1) for e in range(256)]] * 58}))
    assert main(["simulate", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "64",
                 "--counts", str(loads), "--stragglers", "none", "--steps", "10"]) == 2
    assert "--stragglers none contradicts it" in capsys.readouterr().err


def test_a_long_balance_sampling_reports_its_progress_and_the_same_answer(tmp_path, monkeypatch, capsys):
    # 10^9 sampled choices ran for a minute in silence; the progress consumes no random numbers
    import afdlib.cli.balance as balance
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps({"logical_count": [[float(e % 5 + 1) for e in range(16)]] * 20}))
    argv = ["balance", "--counts", str(counts), "--ranks", "4", "--tokens", "64", "--top-k", "2", "--json"]
    assert main(argv) == 0
    quiet = capsys.readouterr()
    monkeypatch.setattr(balance, "PROGRESS_PICKS", 0)
    assert main(argv) == 0
    loud = capsys.readouterr()
    assert loud.out == quiet.out and quiet.err == ""
    assert loud.err.splitlines() == [f"afd balance: {k} of 20 MoE layers sampled" for k in range(2, 21, 2)]


def test_mtp_on_a_model_that_declares_no_mtp_module_says_how_its_drafts_are_costed(capsys):
    # Qwen3-235B's config declares no MTP module; --mtp 1.8 costed each draft as DeepSeek-V3's module without
    # a word. DeepSeek-V3 declares one (its header is unchanged); without --mtp nothing is said
    base = ["throughput", "--hardware", "h200", "--design", "ep", "--ep-size", "16"]
    assert main(base + ["--model", "qwen3-235b-a22b", "--mtp", "1.8"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.endswith("the model declares no MTP module (mtp_layers 0): each draft is costed as one MoE layer "
                         "and an LM head, as DeepSeek-V3's MTP module")
    assert main(base + ["--model", "deepseek-v3", "--mtp", "1.8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mtp_module"]["declared"] is True
    assert main(base + ["--model", "qwen3-235b-a22b", "--json"]) == 0
    assert "mtp_module" not in json.loads(capsys.readouterr().out)


def test_an_ffn_pool_of_more_slots_than_experts_says_it_holds_replicas(capsys):
    # 16 FFN GPUs for Mixtral's 8 experts were silently replicas; by hand: ceil(8 / 16) -> 1 expert per GPU,
    # 16 - 8 = 8 replica slots; DeepSeek-V3 on 24 GPUs: ceil(256 / 24) = 11 per GPU, 264 - 256 = 8; on 16: none
    base = ["throughput", "--hardware", "h200", "--design", "afd", "--n-attn", "1", "--json"]
    pools = []
    for model, n_ffn in (("mixtral-8x7b", "2"), ("deepseek-v3", "3"), ("deepseek-v3", "2")):
        assert main(base + ["--model", model, "--n-ffn", n_ffn]) == 0
        pool = json.loads(capsys.readouterr().out)["ffn_pool"]
        pools.append((pool["gpus"], pool["experts_per_gpu"], pool["replica_slots"]))
    assert pools == [(16, 1, 8), (24, 11, 8), (16, 16, 0)]
    assert main(base[:-1] + ["--model", "mixtral-8x7b", "--n-ffn", "2"]) == 0
    assert "16 FFN GPUs for 8 routed experts: 1 per GPU, 8 slots of replicas" in capsys.readouterr().out.splitlines()[0]


def test_a_careless_user_s_inputs_are_one_line_and_status_2(tmp_path, capsys):
    # each found by a probe of the commands (issue 32): a negative answer, a traceback or a silently kept input
    import yaml
    from afdlib.inputs.catalog import data_dir
    cat = yaml.safe_load((data_dir() / "hardware.yaml").read_text())["hardware"]["h800"]
    model = yaml.safe_load((data_dir() / "models.yaml").read_text())["models"]["deepseek-v3"]

    def write(name, doc, text=None):
        path = tmp_path / name
        path.write_text(text if text is not None else (json.dumps(doc) if name.endswith(".json") else yaml.safe_dump(doc)))
        return str(path)
    rope = {**model, "attention": {**model["attention"], "qk_rope_head_dim": 100000}}
    sheet_sources = {"hardware": {"h800": {**cat, "datasheet": {**cat["datasheet"], "sources": [1, 2]}}}}
    sheet_typo = {"hardware": {"h800": {**cat, "datasheet": {**cat["datasheet"], "hbm_gbb": 85.9}}}}
    beside = {"hardware": {"h800": cat}, "extra_top": 1}
    cases = (
        # 100,000 rope dimensions of a 192-wide head gave negative attention times and -319B active parameters
        (["model", "--model", write("rope.yaml", rope)], "qk_rope_head_dim (100000) must be less than head_dim (192)"),
        # a list for the datasheet's sources was a traceback; a typo there passed under the paper profile
        (["hfu", "--model", "deepseek-v3", "--hardware", write("s.yaml", sheet_sources)], "'sources' must be a mapping"),
        (["hfu", "--model", "deepseek-v3", "--hardware", write("t.yaml", sheet_typo)], "unknown field 'hbm_gbb'"),
        (["hfu", "--model", "deepseek-v3", "--hardware", write("b.yaml", beside)], "holds 'extra_top' beside 'hardware:'"),
        # YAML reads 1.0e308 as text: the hint said to add the decimal point it already had
        (["hfu", "--model", "deepseek-v3", "--hardware", write("e.yaml", None, yaml.safe_dump(
            {k: v for k, v in cat["paper"].items() if k not in ("sources", "uncertain")} | {"name": "x", "source": "s"}
        ).replace("hbm_gb: 80.0", "hbm_gb: 1.0e308").replace("hbm_gb: 80", "hbm_gb: 1.0e308"))], "write it as 1.0e+308"),
        # the last of two --model won without a word; Python's int() read '1_000' and full-width digits
        (["throughput", "--model", "kimi-k2", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep",
          "--ep-size", "16"], "--model given twice; give it once"),
        (["penalty", "--sigma", "0.8", "--n-attn", "1_000", "--n-ffn", "2"], "got '1_000'"),
        # 64 attention domains were left out of the simulator's work bound (it ran for minutes)
        (["simulate", "--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "10", "--layers", "61",
          "--attention-domains", "64", "--micro-batches", "64", "--cv-ffn", "0.1", "--steps", "12000"],
         "x 64 micro-batches x 64 attention domains = 2,998,272,000 random stage times"),
        # a text_config disagreeing with the top level silently won; null kv_lora_rank beside MLA fields was MHA
        (["model", "--model", write("c_config.json", {"num_hidden_layers": 61, "text_config": {"num_hidden_layers": 30}})],
         "'num_hidden_layers' is 61 at the top level and 30 in text_config"),
    )
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, (argv, err)
    # a JSON file's own error is said once, not as "not valid JSON (... FIFO ...)"
    import os
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    assert main(["balance", "--counts", str(fifo), "--ranks", "8"]) == 2
    assert capsys.readouterr().err == f"afd: error: {fifo}: is a FIFO, not a regular file; give a file\n"


def test_text_output_shortens_runaway_numbers_and_one_step_has_no_p99(capsys):
    # a what-if efficiency of 1e-300 printed a TPOT of 300 digits in text (--json said 4.13e+300)
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "16",
                 "--matmul-efficiency", "1e-300", "--batch-per-gpu", "1", "--slo-ms", "1e6"]) == 0
    out = capsys.readouterr().out
    assert "TPOT 4.13e+300 ms" in out and not __import__("re").search(r"\d{20}", out)
    # one simulated step is its own 99th percentile: none is reported below 100 steps
    times = ["simulate", "--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "10",
             "--layers", "8", "--cv-ffn", "0.5"]
    assert main(times + ["--steps", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["p99_tpot_ms"] is None
    assert main(times + ["--steps", "100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["p99_tpot_ms"] > 0


def test_a_counts_file_with_a_second_logical_count_is_refused(tmp_path, capsys):
    # 'logical_coun' beside 'logical_count' was dropped without a word; SGLang's other keys stay allowed
    bad, fine = tmp_path / "bad.json", tmp_path / "fine.json"
    bad.write_text(json.dumps({"logical_count": [[1, 2, 3, 4]], "logical_coun": 1}))
    fine.write_text(json.dumps({"logical_count": [[1, 2, 3, 4]], "physical_count": "x"}))
    assert main(["balance", "--counts", str(bad), "--ranks", "2"]) == 2
    assert "key 'logical_coun' beside \"logical_count\"" in capsys.readouterr().err
    assert main(["balance", "--counts", str(fine), "--ranks", "2"]) == 0
    assert capsys.readouterr().out.startswith(f"{fine}: 1 MoE layer x 4 experts on 2 ranks")


def test_a_device_s_fabric_fields_that_would_be_ignored_or_impossible_are_refused(tmp_path, capsys):
    # inter_domain_gb_per_s on an 8-GPU-node device changed nothing (EP64's all-to-all the same 414.8 us);
    # a 12-GPU scale-up domain of 8-GPU nodes holds one and a half nodes
    base = ("name: Mine\nfp8_tflops: 1979\nbf16_tflops: 989\nhbm_tb_per_s: 3.35\nhbm_gb: 80\nscale_up_gb_per_s: 160\n"
            "scale_out_gb_per_s: 50\ngpus_per_node: 8\nsource: test\n")
    for extra, message in (("inter_domain_gb_per_s: 5\n", "inter_domain_gb_per_s is the bandwidth between a Superpod's"),
                           ("scale_up_domain: 12\n", "a scale-up domain of 12 GPUs neither holds whole 8-GPU nodes")):
        path = tmp_path / "d.yaml"
        path.write_text(base + extra)
        assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(path)]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    for fine in ("scale_up_domain: 16\n", "scale_up_domain: 4\n"):     # two nodes; half a node
        path.write_text(base + fine)
        assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(path), "--json"]) == 0
        capsys.readouterr()


def test_an_unknown_option_points_to_its_command_s_help(capsys):
    # it pointed to 'afd --help', whose page lists the commands, not the options
    assert main(["simulate", "--design", "ep", "--bogus", "1"]) == 2
    assert capsys.readouterr().err == "afd: error: unrecognized arguments: --bogus 1 (see afd simulate --help)\n"


def test_a_pool_that_does_not_fit_says_sizes_that_differ(capsys):
    # Kimi-K2 on EP16 of H800: "the GPU's weights need 77.3 GB of the 77.3 GB usable" (both rounded)
    assert main(["throughput", "--model", "kimi-k2", "--hardware", "h800", "--design", "ep", "--ep-size", "16"]) == 2
    err = capsys.readouterr().err
    need, have = (float(x) for x in __import__("re").search(r"need ([\d.]+) GB of the ([\d.]+) GB", err).groups())
    assert need > have
    from afdlib.decode.batch import _apart          # a device of 1 MB usable read "of the 0.0 GB usable"
    assert _apart(59.7, 0.0009) == "59.7 GB of the 0.0009" and _apart(77.324, 77.314) == "77.32 GB of the 77.31"


def test_a_value_given_twice_in_a_list_or_a_one_point_range_is_refused(capsys):
    # intensity printed the row of N_F 1 three times; a sweep range of num 1 dropped its 'to' without a word
    from afdlib.sweep.spec import axis_values
    assert main(["intensity", "--model", "deepseek-v3", "--hardware", "h800", "--n-ffn", "1..4,2"]) == 2
    assert "N_F 2 given twice in '1..4,2'" in capsys.readouterr().err
    with pytest.raises(AfdError, match="has num 1, which is its 'from' alone"):
        axis_values("slo_ms", {"from": 30, "to": 100, "num": 1})
    assert list(axis_values("slo_ms", {"from": 50, "to": 50, "num": 1})) == [50.0]


def test_a_source_or_an_hf_id_that_is_not_text_is_refused(tmp_path, capsys):
    # source: [a, b] and hf_id: {a: 1} were kept as their Python repr
    hw = ("name: Mine\nfp8_tflops: 1979\nbf16_tflops: 989\nhbm_tb_per_s: 3.35\nhbm_gb: 80\nscale_up_gb_per_s: 160\n"
          "scale_out_gb_per_s: 50\ngpus_per_node: 8\n")
    path = tmp_path / "d.yaml"
    for extra, message in (("source: [a, b]\n", "source must be text, got a list"),
                           ("source: s\nsources: {hbm_gb: {a: 1}}\n", "sources.hbm_gb must be text, got a dict")):
        path.write_text(hw + extra)
        assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(path)]) == 2
        assert message in capsys.readouterr().err


def test_a_file_s_message_latency_may_be_zero_as_in_a_sweep(tmp_path, capsys):
    # scale_out_latency_us: 0 was refused in a file ("must be positive") while a sweep and the checker took it
    path = tmp_path / "d.yaml"
    path.write_text("name: Mine\nfp8_tflops: 1979\nbf16_tflops: 989\nhbm_tb_per_s: 3.35\nhbm_gb: 80\n"
                    "scale_up_gb_per_s: 160\nscale_out_gb_per_s: 50\ngpus_per_node: 8\nsource: s\n"
                    "scale_out_latency_us: 0\n")
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", str(path), "--design", "ep", "--ep-size", "64",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tokens_per_s_per_gpu"] > 0
    path.write_text(path.read_text().replace("scale_out_latency_us: 0", "scale_out_latency_us: -1"))
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(path)]) == 2
    assert "scale_out_latency_us must be >= 0, got -1" in capsys.readouterr().err


def test_a_model_file_s_paper_block_is_checked_under_the_reference_profile_too(tmp_path, capsys):
    # paper: {hidden_size: -1} passed `afd model` (reference profile) and failed only under hfu's paper profile
    import yaml
    from afdlib.inputs.catalog import data_dir
    entry = yaml.safe_load((data_dir() / "models.yaml").read_text())["models"]["deepseek-v3"]
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({**entry, "paper": {"hidden_size": -1}}))
    assert main(["model", "--model", str(path)]) == 2
    assert capsys.readouterr().err.endswith("hidden_size must be a positive integer, got -1 (in its paper: block)\n")


FLAT_DEVICE = ("name: Flat GPU\ngpus_per_node: 8\nfp8_tflops: 1000\nhbm_tb_per_s: 3\nhbm_gb: 80\n"
               "scale_up_gb_per_s: 400\nscale_out_gb_per_s: 50\nsource: made up for a test\n")


@pytest.mark.parametrize("argv", [["hfu", "--model", "deepseek-v3"], ["intensity", "--model", "deepseek-v3"],
                                  ["throughput", "--model", "deepseek-v3", "--design", "ep", "--ep-size", "8"],
                                  ["advise", "--model", "deepseek-v3"],
                                  ["simulate", "--model", "deepseek-v3", "--design", "ep", "--ep-size", "8"]])
def test_a_hardware_profile_given_for_a_flat_device_file_is_refused_not_dropped(tmp_path, capsys, argv):
    # a flat file holds one set of figures ("user"): --hw-profile would choose nothing, so naming one is an
    # error; left to its default it is no choice and the file's figures are used
    path = tmp_path / "flat.yaml"
    path.write_text(FLAT_DEVICE)
    assert main([*argv, "--hardware", str(path), "--hw-profile", "datasheet"]) == 2
    err = capsys.readouterr().err
    assert "--hw-profile datasheet" in err and "no paper: or datasheet: block" in err and err.count("\n") == 1
    if argv[0] in ("hfu", "intensity"):
        assert main([*argv, "--hardware", str(path)]) == 0
        assert "on Flat GPU (user)" in capsys.readouterr().out


def test_simulate_bounds_the_ops_it_schedules_jittered_or_not_and_its_help_says_the_bounds(capsys):
    # 10,000 layers x 64 micro-batches x 64 domains scheduled op by op took minutes with no jitter at all
    # (the bound counted only random draws); the help's figures are the constants'
    import re

    from afdlib.simulation.pipeline import MAX_SCHEDULED_OPS, MAX_STAGE_DRAWS
    given = ["simulate", "--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "10", "--steps", "1"]
    assert main([*given, "--layers", "10000", "--micro-batches", "64", "--attention-domains", "64"]) == 2
    err = capsys.readouterr().err
    assert "40,960,000 ops to schedule one by one, more than the 500,000" in err and err.count("\n") == 1
    assert main([*given, "--layers", "100", "--micro-batches", "8", "--attention-domains", "8"]) == 0
    capsys.readouterr()
    assert main(["simulate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert float(re.search(r"at most (\de\d) random stage times", text).group(1)) == MAX_STAGE_DRAWS
    assert float(re.search(r"at most (\de\d) ops to schedule", text).group(1)) == MAX_SCHEDULED_OPS


def test_negative_zero_is_read_as_zero_in_options_and_sweep_axes(capsys):
    # "-0" printed as "gap -0.0" and "t_g -0 ms", and a sweep kept the coordinate -0.0
    from afdlib.sweep.spec import parse
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144",
                 "--t-gap-ms", "-0", "--json"]) == 0
    out = capsys.readouterr().out
    assert "-0" not in out.replace("e-0", "") and '"t_gap_ms": 0.0' in out
    axis = parse({"model": "deepseek-v3", "hardware": "h800", "design": "ep", "fixed": {"ep_size": 64},
                  "vary": {"t_gap_ms": [-0.0, 3]}}).axes["t_gap_ms"]
    assert not np.signbit(axis.astype(float)).any()


@pytest.mark.parametrize("argv, words", [
    (["--jobs", "３"], "--jobs must be an integer in 1..64"), (["--jobs", "99999999999999999999"], "--jobs must be"),
    (["--cell-timeout", "1e-300"], "--cell-timeout must be in [1, 604800]"),
    (["--cell-timeout", "１０"], "--cell-timeout must be a number"),
    (["--only", "fig2_intensity", "--no-execute"], "--no-execute executes none"),
    (["--only", "fig2_intensity", "fig2_intensity"], "--only names fig2_intensity twice")])
def test_book_options_are_checked_before_anything_runs(capsys, argv, words):
    # each was taken: full-width and 20-digit --jobs, a 1e-300 s cell limit, --only that --no-execute ignores
    assert main(["book", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_book_no_execute_with_nothing_executed_is_a_usage_error(tmp_path, monkeypatch, capsys):
    # it was "afd book: FAILED, not executed yet: ..." with status 1, as if a build had failed
    import afdlib.report.book as book
    monkeypatch.setattr(book, "GENERATED", tmp_path / "generated")
    assert main(["book", "--no-execute"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("afd: error: --no-execute renders the notebooks already executed; not executed yet: ")


@pytest.mark.parametrize("text, hint", [("080", "write it without the leading zero, as 80"),
                                        ("'80'", "write it as 80, without quotes or a tag"),
                                        ("!!str 80", "write it as 80, without quotes or a tag"),
                                        ("1e3", "write it as 1.0e+3")])
def test_the_hint_for_a_number_yaml_reads_as_text_fits_how_it_was_written(tmp_path, capsys, text, hint):
    # every such value got "write it with a decimal point and a signed exponent", wrong advice for 080 or "80"
    path = tmp_path / "dev.yaml"
    path.write_text(FLAT_DEVICE.replace("hbm_gb: 80", f"hbm_gb: {text}"))
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(path)]) == 2
    assert hint in capsys.readouterr().err


def test_a_name_with_a_control_character_is_refused(tmp_path, capsys):
    # an escape sequence in a device's name reached the terminal (ESC [31m turned the output red)
    path = tmp_path / "dev.yaml"
    path.write_text(FLAT_DEVICE.replace("name: Flat GPU", 'name: "a\\x1b[31mred"'))
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(path)]) == 2
    assert "name must be printable text (it holds the control character '\\x1b')" in capsys.readouterr().err


def test_a_count_beyond_floating_point_is_said_so_not_called_a_malformed_list(tmp_path, capsys):
    path = tmp_path / "counts.json"
    path.write_text('{"logical_count": [[' + "9" * 400 + ", 1]]}")
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800", "--counts", str(path)]) == 2
    assert "logical_count holds a count beyond floating point" in capsys.readouterr().err


def test_physically_impossible_ratios_are_refused(tmp_path, capsys):
    # each gave a confident answer: BF16 at 50x the FP8 rate, an MLA latent of 2^24 for a 7168-wide model
    # (41,540B parameters), a penalty at sigma 1e-300 (all alphas 0, "exact") for one FFN node
    path = tmp_path / "dev.yaml"
    path.write_text(FLAT_DEVICE + "bf16_tflops: 100000\n")
    assert main(["hfu", "--model", "deepseek-v3", "--hardware", str(path)]) == 2
    assert "its BF16 rate exceeds its FP8 rate" in capsys.readouterr().err
    from afdlib.inputs.catalog import load_model
    from afdlib.inputs.specs import check_model
    from dataclasses import replace
    ds = load_model("deepseek-v3", profile="reference")
    with pytest.raises(AfdError, match=r"attention.kv_lora_rank \(8192\) exceeds hidden_size \(7168\)"):
        check_model(replace(ds, attention=replace(ds.attention, kv_lora_rank=8192)))
    with pytest.raises(AfdError, match=r"moe_latent_size \(8192\) exceeds hidden_size \(7168\)"):
        check_model(replace(ds, moe_latent_size=8192))
    assert main(["penalty", "--sigma", "1e-300", "--n-attn", "1", "--n-ffn", "1"]) == 2
    assert "--sigma must be in [1/4096, 1]" in capsys.readouterr().err
    assert main(["penalty", "--sigma", "0.5", "--n-attn", "1", "--n-ffn", "1"]) == 0


def test_simulate_refuses_the_overlap_what_ifs_and_says_when_its_step_misses_the_slo(capsys):
    # --afd-overlap 0 gave the same simulation as without it (the schedule derives the overlap), and a
    # given batch simulated at 57.7 ms against a 10 ms SLO said nothing of it
    base = ["simulate", "--model", "deepseek-v3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
            "--n-ffn", "2", "--steps", "200"]
    assert main([*base, "--afd-overlap", "0"]) == 2
    assert "--afd-overlap is a what-if of the decode model's overlap" in capsys.readouterr().err
    assert main([*base, "--batch-per-gpu", "50", "--slo-ms", "10", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tpot_ms"] > 10 and doc["meets_slo"] is False and doc["slo_ms"] == 10
    assert main([*base, "--batch-per-gpu", "50", "--slo-ms", "10"]) == 0
    assert "the simulated TPOT is over the 10 ms SLO (--batch-per-gpu is simulated as given)" in capsys.readouterr().out


def test_intensity_lists_its_regime_borders_in_order_and_says_which_are_never_reached():
    # one expert: "stable 0.3125, scale-out-bound 1, max-intensity 0.125", out of order, and max-intensity
    # (G = 1) takes precedence, so the other two are never reached
    from afdlib.cli.intensity import _borders_line
    from afdlib.analysis.intensity import regime_borders
    assert _borders_line(regime_borders(1, 1, 3.2, 8)) == (
        "regimes start at N_F = max-intensity 0.125 (stable (0.3125) and scale-out-bound (1) never reached: "
        "max-intensity, G = 1, takes precedence)")
    # DeepSeek-V3 on H800: K / r = 8 / 3.2, K = 8, E / g = 256 / 8
    assert _borders_line(regime_borders(8, 256, 3.2, 8)) == "regimes start at N_F = stable 2.5, scale-out-bound 8, max-intensity 32"


def test_a_superpod_device_file_may_write_the_word_in_any_case(tmp_path, capsys):
    # "SuperPod" was "must be a number" (only lower case was read as the word)
    path = tmp_path / "dev.yaml"
    path.write_text(FLAT_DEVICE.replace("scale_out_gb_per_s: 50", "scale_out_gb_per_s: SuperPod"))
    from afdlib.inputs.catalog import load_hardware
    hw = load_hardware(str(path))
    assert hw.superpod and hw.scale_out_bytes_per_s == hw.scale_up_bytes_per_s


def test_second_probe_refusals_of_options_with_no_effect(capsys):
    # each was accepted with no effect: an overlap what-if at one micro-batch (said "by the override"), a
    # seed without jitter, --stragglers uniform beside --counts (the counts won)
    ep = ["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144"]
    assert main([*ep, "--ep-overlap", "1", "--ep-micro-batches", "1"]) == 2
    assert "one micro-batch has none" in capsys.readouterr().err
    assert main([*ep, "--ep-overlap", "0.5", "--sbo", "--json"]) == 0          # single-batch overlap: it applies
    capsys.readouterr()
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
                 "--n-ffn", "4", "--micro-batches", "1", "--afd-overlap", "1"]) == 2
    capsys.readouterr()
    given = ["simulate", "--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "10",
             "--layers", "4", "--steps", "20"]
    assert main([*given, "--seed", "3"]) == 2 and "nothing is random" in capsys.readouterr().err
    assert main([*given, "--seed", "3", "--cv-ffn", "0.1"]) == 0
    capsys.readouterr()


def test_gpus_per_node_sets_both_pools_with_an_attention_device(capsys):
    # with --attn-hardware the attention pool kept 8-GPU nodes: 48 GPUs, not 64, for 2A2F of 16-GPU nodes
    afd = ["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
           "--n-ffn", "2", "--gpus-per-node", "16", "--json"]
    docs = []
    for extra in ([], ["--attn-hardware", "h800"]):
        assert main([*afd, *extra]) == 0
        docs.append(json.loads(capsys.readouterr().out))
    assert docs[0]["gpus"] == docs[1]["gpus"] == 64
    assert docs[0]["tokens_per_s_per_gpu"] == docs[1]["tokens_per_s_per_gpu"]


def test_a_jitter_free_simulation_loses_nothing_not_minus_zero():
    # the constant and the jittered makespans of constant stages summed in another order: -2.2e-16, "-0.0%"
    from afdlib.simulation.pipeline import Jitter, simulate
    sim = simulate("ep", 2e-4, 1e-4, 3e-4, 2, 58, 200, Jitter(), 0, 3e-3)
    assert float(sim.throughput_loss) == 0.0 and not np.signbit(sim.throughput_loss)


def test_a_probability_next_to_the_threshold_is_not_printed_as_it():
    # "P(AFD better) = 0.10 is inside 0.1 to 0.9"
    from afdlib.decision.decision import _p
    assert (_p(0.1004), _p(0.9003), _p(0.5)) == ("0.1004", "0.9003", "0.50")


def test_fp4_on_hopper_names_both_options_that_give_fp4(capsys):
    # --attention-dtype fp4 was told to use --weights fp8, which changed nothing
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "144",
                 "--attention-dtype", "fp4"]) == 2
    assert "--attention-dtype fp8 for an FP4 attention" in capsys.readouterr().err


def test_a_quantization_file_given_as_the_model_points_to_its_config(tmp_path):
    from afdlib.inputs.hf_config import model_from_hf_config
    path = tmp_path / "hf_quant_config.json"
    path.write_text(json.dumps({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}))
    with pytest.raises(AfdError, match="this is a quantization file .*give the model's config.json"):
        model_from_hf_config(path)


def test_a_batch_at_the_search_s_cap_is_said_and_is_a_search_bound(tmp_path, capsys):
    # a one-element hidden size: every batch up to 2^16 met the SLO; "largest meeting 50 ms" was the cap
    import yaml
    doc = {"name": "Tiny", "hidden_size": 1, "moe_intermediate_size": 1, "num_layers": 1, "dense_layers": 0,
           "moe_layers": 1, "routed_experts": 8, "experts_per_token": 1, "source": "test",
           "attention": {"family": "gqa", "num_heads": 1, "num_kv_heads": 1, "head_dim": 1}}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["throughput", "--model", str(path), "--hardware", "h800", "--design", "ep", "--ep-size", "8"]) == 0
    assert "up to the search's cap of 65,536: a larger batch may do more" in capsys.readouterr().out
    from afdlib.decode.search import Best
    from afdlib.decode.deployment import EPDeployment
    from afdlib.inputs.catalog import load_hardware
    best = Best("ep", np.array(1.0), EPDeployment(load_hardware("h800"), 8, 0, 2, "low-latency", 65536), {}, {})
    assert best.bound_words() == ["65,536 requests per GPU (the batch search's cap)"]


def test_the_roofline_profile_ignores_message_latency_in_the_all_to_all_split_too(tmp_path, capsys):
    # "no fixed costs": the stage times dropped the latency, but the dispatch / combine split still took it
    # off, so 100 us of scale-out latency made EP144 faster (3,748 -> 3,867 tokens/s)
    out = []
    for us in (0, 100):
        path = tmp_path / f"lat{us}.yaml"
        path.write_text("name: eight\ngpus_per_node: 8\nfp8_tflops: 1979\nbf16_tflops: 989\nhbm_tb_per_s: 3.35\n"
                        f"hbm_gb: 80\nscale_up_gb_per_s: 160\nscale_out_gb_per_s: 50\nscale_out_latency_us: {us}\n"
                        "source: an H800-like device for a test\n")
        assert main(["throughput", "--model", "deepseek-v3", "--hardware", str(path), "--design", "ep", "--ep-size",
                     "144", "--kernels", "roofline", "--json"]) == 0
        out.append(json.loads(capsys.readouterr().out)["tokens_per_s_per_gpu"])
    assert out[0] == out[1]


def test_penalty_json_holds_every_number_its_text_prints(capsys):
    # the text's DP line and the rounded forms were not in --json; DP's alpha for AFD is sigma itself
    import re
    argv = ["penalty", "--sigma", "0.8", "--n-attn", "1", "--n-ffn", "1"]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    text = capsys.readouterr().out
    dp = re.search(r"DP imbalance:  alpha_EP = ([\d.]+) .* alpha_AFD = ([\d.]+)", text).groups()
    assert (float(dp[0]), float(dp[1])) == (round(doc["dp"]["alpha_ep"], 4), round(doc["dp"]["alpha_afd"], 4))
    assert doc["dp"]["alpha_afd"] == 0.8 and f"ceil {doc['alpha_afd_ceil']:.4f}" in text


def test_a_shared_expert_size_without_shared_experts_is_refused(tmp_path):
    import yaml

    from afdlib.inputs.catalog import load_model
    doc = {"name": "Mini", "hidden_size": 4096, "moe_intermediate_size": 1536, "num_layers": 40, "dense_layers": 0,
           "moe_layers": 40, "routed_experts": 128, "experts_per_token": 8, "shared_experts": 0, "source": "test",
           "shared_expert_intermediate_size": 2048,
           "attention": {"family": "gqa", "num_heads": 32, "num_kv_heads": 4, "head_dim": 128}}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(AfdError, match="shared_expert_intermediate_size is given but shared_experts is 0"):
        load_model(str(path))
    path.write_text(yaml.safe_dump({**doc, "shared_experts": 1}))
    assert load_model(str(path)).shared_experts == 1


def test_a_catalogue_entry_is_a_copy_of_the_file_parsed_once():
    # load_catalog deep-copied the whole file once per entry (half of afd catalog's time); an entry is now
    # the only copy taken, and editing it leaves the next load as the file says
    from afdlib.inputs.catalog import _entry, load_hardware
    slug, entry, _ = _entry("h800", None, "hardware", "hardware", "a .yaml file")
    entry["paper"]["fp8_tflops"] = 1.0
    assert load_hardware("h800").flops > 1e14
