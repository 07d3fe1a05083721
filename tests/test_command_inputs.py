"""Issue 22, the command-line inputs and outputs of throughput, advise and simulate: each case of the
issue exits 2 with one line naming the rule (or gives a correct, finite answer), and the checks
they use (afdlib.inputs.checks, afdlib.inputs.files) at their boundaries."""
import json
import math
import time

import numpy as np
import pytest

from afdlib.cli import given_options, main
from afdlib.errors import AfdError
from afdlib.inputs import checks
from afdlib.inputs.files import MAX_YAML_BYTES, read_yaml

DS = ["--model", "deepseek-v3", "--hardware", "h800"]
EP144 = ["--design", "ep", "--ep-size", "144"]
AFD = ["--design", "afd", "--n-attn", "4", "--n-ffn", "2"]
TIMES = ["--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "50"]
HW = "fp8_tflops: 1000\nbf16_tflops: 500\nhbm_tb_per_s: 3\nhbm_gb: 80\nscale_up_gb_per_s: 400\nscale_out_gb_per_s: 50\nsource: x\n"
MODEL = ("hidden_size: 1024\nmoe_intermediate_size: 512\nnum_layers: 4\ndense_layers: 0\nmoe_layers: 4\n"
         "routed_experts: 8\nexperts_per_token: 2\nsource: test\n")


def refused(capsys, argv, message):
    """The command exits 2 with one line on stderr holding ``message``, nothing on stdout."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert err.startswith("afd: error: ") and err.count("\n") == 1, err
    assert message in err, err
    assert out == ""
    return err


def counts_file(tmp_path, experts, name="c.json"):
    f = tmp_path / name
    f.write_text(json.dumps({"logical_count": [[1.0 + (i % 5) for i in range(experts)]] * 3}))
    return str(f)


# ----------------------------------------------------------------------------- the checks' vocabulary

def test_balancedness_is_at_least_one_over_the_ranks():
    # 144 ranks: all the load on one of them is mean/max = 1/144; just below it no placement exists
    assert checks.balancedness(1 / 144, 144) == 1 / 144 and checks.balancedness(1.0, 144) == 1.0
    for bad in (math.nextafter(1 / 144, 0), 1e-300, math.nextafter(1.0, 2)):
        with pytest.raises(AfdError, match=r"^--sigma must be in \[1/144, 1\] .* got "):
            checks.balancedness(bad, 144, "--sigma")
    with pytest.raises(AfdError, match=r"in \[1/1, 1\]"):   # one rank is always balanced
        checks.balancedness(0.5, 1)
    with pytest.raises(AfdError, match="finite"):
        checks.balancedness(math.nan, 8)


def test_labels_are_one_short_line_of_text():
    assert checks.label("H800 SXM") == "H800 SXM" and checks.label(5090) == "5090"
    long = checks.label("x" * 100_000)
    assert len(long) == checks.LABEL_CHARS and long.endswith("...")
    assert checks.label("a\nb\tc") == "a b c"
    for bad, kind in (([1, 2], "list"), ({"a": 1}, "dict"), (None, "NoneType"), (True, "bool")):
        with pytest.raises(AfdError, match=f"^f: name must be text, got a {kind}$"):
            checks.label(bad, "name", "f")


def test_finite_names_the_first_non_finite_entry():
    doc = {"a": 1.0, "b": [0, {"c": 2.5}], "d": "nan is a word here"}
    assert checks.finite(doc) is doc
    with pytest.raises(AfdError, match=r"\(b\[1\]\.c = inf\)"):
        checks.finite({"a": 1.0, "b": [0, {"c": math.inf}]})
    with pytest.raises(AfdError, match=r"\(tpot_ms = nan\): these inputs take the model beyond floating point"):
        checks.finite({"tpot_ms": np.float64("nan")})     # the likely cause first, "please report" only if not
    assert checks.finite_text("infeasible at 2.0 GB/s; info") == "infeasible at 2.0 GB/s; info"
    for bad in ("break even at nan GB/s", "TPOT inf ms", "ratio -inf", "Infinity"):
        with pytest.raises(AfdError, match="not finite"):
            checks.finite_text(bad)


# ----------------------------------------------------------------------------- files

def test_yaml_alias_bombs_and_huge_files_are_refused_quickly(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        levels.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    bomb.write_text("\n".join(levels) + "\nname: *i\n" + HW)   # 9^9 = 387 million strings
    loop = tmp_path / "loop.yaml"
    loop.write_text("a: &a [*a]\n")
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as f:
        f.truncate(MAX_YAML_BYTES + 1)
    for path, message in ((bomb, "expands to more than 1,000,000 values"), (loop, "expands to more than"),
                          (huge, "more than the 8 MiB")):
        t0 = time.process_time()
        with pytest.raises(AfdError, match=message):
            read_yaml(path)
        assert time.process_time() - t0 < 5


def test_a_hardware_name_from_a_file_is_shown_truncated(capsys, tmp_path):
    small_bomb = tmp_path / "b.yaml"   # within the values bound, but a name must be text
    small_bomb.write_text("name: [&a [x, x, x, x, x, x, x, x, x, x], *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" + HW)
    refused(capsys, ["throughput", *DS[:2], "--hardware", str(small_bomb), *EP144], "name must be text, got a list")
    long = tmp_path / "long.yaml"
    long.write_text("name: " + "X" * 1_000_000 + "\n" + HW)
    assert main(["throughput", *DS[:2], "--hardware", str(long), *AFD]) == 0
    out = capsys.readouterr().out
    assert "X" * (checks.LABEL_CHARS - 3) + "..." in out and "X" * checks.LABEL_CHARS not in out
    assert max(len(line) for line in out.splitlines()) < 1000


@pytest.mark.parametrize("extra, message", [
    ("vocab_size: 0\n", "vocab_size must be a positive integer, got 0"),
    ("attention: {family: gqa, num_heads: 32, num_kv_heads: 5, head_dim: 128}\n",
     "num_heads (32) must be a multiple of num_kv_heads (5)"),
])
def test_model_files_refuse_impossible_fields(capsys, tmp_path, extra, message):
    f = tmp_path / "m.yaml"
    f.write_text(MODEL + extra)
    refused(capsys, ["throughput", "--model", str(f), "--hardware", "h800", "--design", "ep", "--ep-size", "8"],
            message)


@pytest.mark.parametrize("field, message", [
    ({"vocab_size": 0}, "field 'vocab_size' must be a positive integer, got 0"),
    ({"num_key_value_heads": 5}, "num_heads (32) must be a multiple of num_kv_heads (5)"),
])
def test_hf_configs_refuse_impossible_fields(capsys, tmp_path, field, message):
    cfg = {"hidden_size": 4096, "moe_intermediate_size": 1024, "num_hidden_layers": 4, "num_local_experts": 8,
           "num_experts_per_tok": 2, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000}
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**cfg, **field}))
    refused(capsys, ["throughput", "--model", str(f), "--hardware", "h800", "--design", "ep", "--ep-size", "8"],
            message)
    f.write_text(json.dumps(cfg))   # the same config with the field as it should be answers
    assert main(["throughput", "--model", str(f), "--hardware", "h800", "--design", "ep", "--ep-size", "8",
                 "--json"]) == 0
    capsys.readouterr()


# ----------------------------------------------------------------------------- physics

@pytest.mark.parametrize("argv, message", [
    # the case: TPOT inf (EP) or nan (AFD) printed; sigma below 1/ranks is no placement
    (["throughput", *DS, *EP144, "--sigma", "1e-300", "--batch-per-gpu", "1"], "--sigma must be in [1/144, 1]"),
    (["throughput", *DS, *AFD, "--sigma", "1e-300", "--batch-per-gpu", "1"], "--sigma must be in [1/16, 1]"),
    (["simulate", *DS, *EP144, "--sigma", "0.005"], "--sigma must be in [1/144, 1]"),
    # advise: every candidate takes the sigma; the largest FFN side it may search is AFD's at its cap,
    # 128 nodes x 8 GPUs = 1024 (EP stops at 256 + 32 = 288: every GPU holds an expert)
    (["advise", *DS, "--sigma", "0.0005"], "deepseek-v3 on h800: --sigma must be in [1/288, 1]"),
    (["simulate", *DS, "--design", "ep", "--ep-size", "300"], "exceeds the routed + redundant experts (256 + 0)"),
    (["simulate", *DS, *EP144, "--batch-per-gpu", "1000000"], "do not fit in memory"),
    (["simulate", "--design", "ep", "--t-attn-us", "0", "--t-ffn-us", "0", "--t-comm-us", "0", "--layers", "3"],
     "are all 0"),
])
def test_physically_impossible_input_is_refused(capsys, argv, message):
    refused(capsys, argv, message)


def test_sigma_at_its_bound_gives_a_finite_answer(capsys):
    assert main(["throughput", *DS, *EP144, "--sigma", str(1 / 144), "--batch-per-gpu", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # one request per GPU, every routed pair of the group on the busiest GPU: slow but finite
    assert doc["breakdown"]["sigma"] == pytest.approx(1 / 144) and math.isfinite(doc["tpot_ms"])


@pytest.mark.parametrize("experts", [4, 16, 128])
def test_a_counts_file_must_have_the_models_experts_in_every_command(capsys, tmp_path, experts):
    f = counts_file(tmp_path, experts)
    line = f"{f}: {experts} experts per layer, the model (deepseek-v3) has 256"
    a = refused(capsys, ["advise", *DS, "--counts", f], line)
    s = refused(capsys, ["simulate", *DS, *EP144, "--counts", f, "--steps", "10"], line)
    assert a == s   # one check, one wording


def test_a_counts_file_with_the_models_experts_is_taken(capsys, tmp_path):
    f = counts_file(tmp_path, 256)
    assert main(["simulate", *DS, *EP144, "--counts", f, "--steps", "20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ffn_straggler_cv"] > 0


# ----------------------------------------------------------------------------- bounded work, Ctrl-C

def test_a_long_simulation_is_refused_before_it_starts(capsys):
    t0 = time.process_time()
    refused(capsys, ["simulate", "--design", "afd", *TIMES, "--layers", "10000", "--steps", "10000000",
                     "--cv-ffn", "0.1"], "3 micro-batches = 300,000,000,000 random stage times, more than the 50,000,000")
    refused(capsys, ["simulate", *DS, "--design", "afd", "--n-attn", "2", "--n-ffn", "4", "--steps", "10000000",
                     "--cv-comm", "0.1"], "random stage times")
    assert time.process_time() - t0 < 5
    # without jitter every step is the same: the constant schedule alone, at once
    t0 = time.process_time()
    assert main(["simulate", "--design", "afd", *TIMES, "--layers", "10000", "--steps", "10000000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # 10000 layers x 3 micro-batches x 100 us + the fill (attention 100 us, transfer 50 us, the last transfer 50 us)
    assert doc["tpot_ms"] == pytest.approx((10000 * 3 * 100 + 150) / 1e3, rel=1e-3)
    assert time.process_time() - t0 < 10


def test_straggler_sampling_bounds_its_work(capsys):
    from afdlib.simulation.pipeline import MAX_ROUTED_PAIRS, check_routed_pairs
    check_routed_pairs(MAX_ROUTED_PAIRS // (8 * 16 * 4), 8, 16, 4)
    with pytest.raises(AfdError, match="routed pairs, more than"):
        check_routed_pairs(MAX_ROUTED_PAIRS // (8 * 16 * 4) + 1, 8, 16, 4)
    # Qwen3-30B (top-8, 48 MoE layers, 16 sampled) on 128 attention GPUs at 1000 requests each, 3 micro-batches:
    # 42,667 tokens x 8 x 16 x 4 = 2.2e7 pairs, within; at 100 attention nodes (800 GPUs) 1.4e8, refused at once
    t0 = time.process_time()
    refused(capsys, ["simulate", "--model", "qwen3-30b-a3b", "--hardware", "h200", "--design", "afd", "--n-attn",
                     "100", "--n-ffn", "16", "--batch-per-gpu", "1000", "--context", "0", "--slo-ms", "1e6",
                     "--stragglers", "uniform", "--steps", "10"], "routed pairs, more than")
    assert time.process_time() - t0 < 5


def test_ctrl_c_stops_with_one_line(capsys, monkeypatch):
    import afdlib.simulation.pipeline as pipeline

    def interrupted(*args, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(pipeline, "simulate", interrupted)
    assert main(["simulate", "--design", "afd", *TIMES, "--layers", "4", "--cv-ffn", "0.2"]) == 130
    out, err = capsys.readouterr()
    assert err == "afd: interrupted\n" and out == ""


# ----------------------------------------------------------------------------- options that would be ignored

def test_given_options_are_those_on_the_line():
    assert given_options(["throughput", *DS, *EP144, "--json"]) == {"model", "hardware", "design", "ep_size", "json"}
    assert given_options(["advise", "--all"]) == {"all"}


@pytest.mark.parametrize("argv, message", [
    (["simulate", *DS, *EP144, "--n-attn", "3"], "--n-attn is an AFD option; --design ep does not use it"),
    (["simulate", *DS, *EP144, "--attn-hardware", "h20"], "--attn-hardware is an AFD option"),
    (["simulate", *DS, *AFD, "--redundant", "0"], "--redundant is an EP option; --design afd does not use it"),
    (["throughput", *DS, *AFD, "--ep-overlap", "0.5"], "--ep-overlap is an EP option"),
    (["throughput", *DS, *AFD, "--all-to-all", "normal"], "--all-to-all is an EP option"),
    (["throughput", *DS, *EP144, "--afd-overlap", "1"], "--afd-overlap is an AFD option"),
    (["throughput", *DS, *EP144, "--micro-batches", "4"], "EP's are --ep-micro-batches"),
    (["throughput", *DS, *EP144, "--gpus-per-node", "4"], "--gpus-per-node sets the size of an AFD node"),
    (["simulate", "--design", "afd", *TIMES, "--layers", "4", "--hardware", "h800"], "--hardware sets the decode model"),
    (["simulate", "--design", "afd", *TIMES, "--layers", "4", "--context", "100"], "--context sets the decode model"),
    (["simulate", "--design", "afd", *TIMES, "--layers", "4", "--model", "deepseek-v3"], "not both"),
    (["simulate", *DS, *EP144, "--layers", "4"], "--layers sets the layers of given stage times"),
    (["advise", *DS, "--price-per-gpu-hour", "h800=2", "h800=3"], "gives h800 twice (2 and 3)"),
    (["advise", *DS, "--price-per-gpu-hour", "h800=2", "h20=1"], "names h20, which is no pool here (h800)"),
    (["advise", *DS, "--price-per-gpu-hour", "h800=1e300"], "a price in [0.001, 1e+06]"),
    # 1e-308 printed costs of 0.000 USD and decided 'AFD by cost per token' between them
    (["advise", *DS, "--price-per-gpu-hour", "h800=1e-308"], "a price in [0.001, 1e+06]"),
    (["advise", "--all", "--model", "deepseek-v3"], "give --all or --model and --hardware, not both"),
])
def test_options_that_would_be_ignored_are_refused(capsys, argv, message):
    refused(capsys, argv, message)


def test_gpus_per_node_takes_effect_for_afd(capsys):
    # 2A2F of 8-GPU nodes is 32 GPUs; of 4-GPU nodes, 16
    for g, gpus in ((None, 32), ("4", 16)):
        extra = [] if g is None else ["--gpus-per-node", g]
        assert main(["throughput", "--model", "step3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
                     "--n-ffn", "2", "--kv-cache", "fp8", *extra, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["gpus"] == gpus


def test_the_same_options_with_their_own_design_answer(capsys):
    assert main(["simulate", *DS, *AFD, "--attn-hardware", "h20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["design"] == "afd"
    assert main(["throughput", *DS, *AFD, "--attn-hardware", "h20", "--afd-overlap", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["design"] == "afd"
    assert main(["advise", *DS, "--price-per-gpu-hour", "H800=2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"]["ep_usd_per_million_tokens"] > 0


# ----------------------------------------------------------------------------- non-finite numbers

def test_a_flip_next_to_an_infeasible_ep_is_finite():
    from afdlib.decision.threshold import _flip
    # EP infeasible (ratio inf) at the first bandwidth, behind AFD from the second: the answer turns there
    assert _flip(np.log([10.0, 20.0, 40.0]), np.array([np.inf, 0.5, 0.4])) == pytest.approx(np.log(20.0))
    assert _flip(np.array([0.0, 1.0, 2.0]), np.array([0.5, 2.0, np.inf])) == pytest.approx(1 / 3)


def test_advise_reasons_carry_finite_numbers(capsys):
    # sigma 0.01: EP has no feasible deployment at the lowest bandwidths searched, so the break-even
    # bandwidth sat next to an infinite ratio and read "nan GB/s"
    assert main(["advise", *DS, "--sigma", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "break even at a scale-out bandwidth of" in out and " nan " not in out
