"""Forms production decode runs (issue 28): FP8 attention compute apart from the cache's type, and
single-batch overlap as a schedule of one EP micro-batch."""
import json

import numpy as np
import pytest

from afdlib.cli import main
from afdlib.decode.deployment import EPDeployment, decode_step
from afdlib.decode.step import Assumptions, _time
from afdlib.errors import AfdError
from afdlib.evaluator.attention import attention_work
from afdlib.evaluator.kernels import KernelProfile, attention_speedup
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget, Precision

NO_FIXED = Assumptions(kernel_overhead_s=0.0)


def _core_s(model, hw, precision, requests, context):
    _, core = attention_work(model, precision, requests, context)
    return float(_time([KernelProfile().attention(core, hw)], hw, NO_FIXED)[0])


@pytest.mark.parametrize("slug, speedup", [("h20", 1.7), ("h800", 1.7), ("b200", 1.8)])
def test_fp8_attention_runs_at_its_kernels_published_speedup_where_compute_bound(ds, slug, speedup):
    # data/attention_kernels.yaml: FP8 FlashMLA 1.7x BF16 FlashMLA on Hopper (Ant Group), FP8 attention
    # 1.8x on Blackwell (SGLang GB200 part II). On H20 (148 BF16 TFLOP/s, 4 TB/s) the MLA core at 64
    # requests and 4K is compute-bound, so the FP8 core takes exactly 1 / speedup of the BF16 one
    hw = load_hardware(slug, profile="datasheet")
    assert attention_speedup(hw, "fp8") == speedup and attention_speedup(hw, "bf16") == 1.0
    fp8_cache = Precision(kv_cache="fp8")
    bf16 = _core_s(ds, hw, fp8_cache, 64, 4096)
    fp8 = _core_s(ds, hw, Precision(kv_cache="fp8", attention_compute="fp8"), 64, 4096)
    if slug == "h20":
        assert bf16 / fp8 == pytest.approx(speedup, rel=1e-9)
    assert 1.0 <= bf16 / fp8 <= speedup * (1 + 1e-9)      # never more than the kernel's speedup


def test_fp8_attention_gains_nothing_where_the_core_is_memory_bound(h800):
    # GQA (Qwen3-235B-A22B: 64 query heads over 4 KV heads of 128): 2 x 64 x (128 + 128) = 32,768 FLOPs
    # per cached token against 2 x 4 x 128 x 2 = 2,048 bytes of BF16 cache, 16 FLOP/byte, far below
    # H800's ridge (989 TFLOP/s / 3.35 TB/s = 295): the cache read binds, the compute type changes nothing
    qwen = load_model("qwen3-235b-a22b", profile="reference")
    one = _core_s(qwen, h800, Precision(), 64, 8192)
    assert _core_s(qwen, h800, Precision(attention_compute="fp8"), 64, 8192) == pytest.approx(one, rel=1e-12)
    # MLA's 128 heads over one latent cache are compute-bound even at one request: there FP8 gains
    mla = load_model("deepseek-v3", profile="reference")
    assert _core_s(mla, h800, Precision(), 1, 32768) > _core_s(mla, h800, Precision(attention_compute="fp8"), 1, 32768)


def test_fp8_attention_is_refused_without_fp8_tensor_cores(ds):
    a100 = load_hardware("a100", profile="datasheet")
    _, core = attention_work(ds, Precision(attention_compute="fp8"), 8, 4096)
    with pytest.raises(AfdError, match="no FP8 tensor cores"):
        KernelProfile().attention(core, a100)
    with pytest.raises(AfdError, match="attention compute must be bf16 or fp8"):
        Precision(attention_compute="fp4")


def test_single_batch_overlap_lies_between_serial_and_all_hidden(ds, h800):
    budget = Budget(slo_s=1.0, l_accept=1.0, t_gap_s=0.003)
    for requests in (8, 64, 256):
        serial = decode_step(ds, EPDeployment(h800, 64, 0, 1, "low-latency", requests), 4096, budget)
        sbo = decode_step(ds, EPDeployment(h800, 64, 0, 1, "low-latency", requests, True), 4096, budget)
        best = decode_step(ds, EPDeployment(h800, 64, 0, 1, "low-latency", requests, True), 4096, budget,
                           assumptions=Assumptions(ep_overlap=1.0))
        assert float(best.t_layer) <= float(sbo.t_layer) < float(serial.t_layer)
        assert 0 < float(sbo.hidden_share) <= 1 and float(serial.hidden_share) == 0
        # the stage times are the serial step's: only the schedule differs
        assert float(sbo.t_ffn) == pytest.approx(float(serial.t_ffn)) and float(sbo.t_comm) == pytest.approx(float(serial.t_comm))


def test_single_batch_overlap_takes_one_micro_batch_and_low_latency_kernels(h800):
    with pytest.raises(AfdError, match="single-batch overlap"):
        EPDeployment(h800, 64, 0, 2, "low-latency", 8, True)
    with pytest.raises(AfdError, match="single-batch overlap"):
        EPDeployment(h800, 64, 0, 1, "normal", 8, True)
    d = EPDeployment(h800, 64, 0, 1, "low-latency", 8, True)
    assert d.record()["sbo"] is True and EPDeployment(h800, 64).record()["sbo"] is False


def test_cli_forms(capsys):
    base = ["throughput", "--model", "deepseek-v3", "--hardware", "h20", "--design", "ep", "--ep-size", "16",
            "--batch-per-gpu", "32", "--mtp", "1.85", "--context", "4864", "--kv-cache", "fp8", "--json"]
    assert main(base + ["--ep-micro-batches", "1"]) == 0
    serial = json.loads(capsys.readouterr().out)
    assert main(base + ["--sbo", "--attention-compute", "fp8"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["breakdown"]["hidden_share"] > 0 == serial["breakdown"]["hidden_share"]
    assert both["tokens_per_s_per_gpu"] > serial["tokens_per_s_per_gpu"]
    assert both["breakdown"]["attention_us"] < serial["breakdown"]["attention_us"]
    assert main(base + ["--sbo", "--ep-micro-batches", "2"]) == 2
    assert "--sbo" in capsys.readouterr().err
    assert main(["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
                 "--n-ffn", "2", "--sbo"]) == 2
    assert "EP option" in capsys.readouterr().err
    assert main(base + ["--attention-compute", "fp16"]) == 2


def test_an_sbo_search_never_loses_to_the_serial_one_batch(ds, h800):
    from afdlib.decode.search import best_ep
    budget = Budget(slo_s=0.05)
    best = best_ep(ds, h800, budget, 4096, micro_batches=(1,), modes=("low-latency",))
    assert bool(best.deployment.sbo) and int(best.deployment.micro_batches) == 1
    assert np.all(best.tokens_per_s_per_gpu > 0)


def test_advise_answers_first_in_one_line(capsys):
    from afdlib.cli.advise import answer_line
    ep = {"feasible": True, "form": "EP, 2 micro-batches, low-latency kernels", "validated_by": ["deepseek-v3-h800-ep128-profile"]}
    afd = {"feasible": True, "form": "AFD, 4 micro-batches", "validated_by": []}
    doc = {"ratio": 0.84, "ratio_interval": [0.78, 0.9], "p_afd": 0.03, "decisive": True, "recommendation": "EP",
           "ep": ep, "afd": afd}
    assert answer_line(doc) == ("EP: AFD / EP 0.84 (0.78-0.90), P(AFD better) 0.03; forms: EP, 2 micro-batches, "
                                "low-latency kernels (validated by DeepSeek profile, H800 EP128); AFD, 4 micro-batches "
                                "(no published deployment validates it)")
    undecided = answer_line({**doc, "decisive": False, "recommendation": "AFD", "ratio": 1.05, "p_afd": 0.51})
    assert undecided.startswith("undecided (AFD more likely): AFD / EP 1.05 (0.78-0.90), P(AFD better) 0.51;")
    # no ratio: EP has no feasible deployment
    assert answer_line({**doc, "ratio": None}) == "AFD: EP has no feasible deployment"
    assert answer_line({**doc, "ratio": None, "afd": {"feasible": False}}).startswith("neither design is feasible")
    assert main(["advise", "--model", "deepseek-v3", "--hardware", "h800"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "AFD / EP" in first and "P(AFD better)" in first and "forms: EP" in first


def test_throughput_reports_the_step_floor_with_each_term_and_its_source(capsys):
    args = ["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size", "64",
            "--mtp", "1.7", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    floor = doc["floor"]
    t = floor["terms_ms"]
    # the step is its MoE layers, dense layers, LM head, MTP drafts and gap (afdlib.decode.step.ep_step)
    assert t["moe_layers"] + t["dense_layers"] + t["lm_head"] + t["mtp"] + t["gap"] == pytest.approx(floor["step_ms"])
    assert floor["tpot_ms"] == pytest.approx(floor["step_ms"] / 1.7) and floor["batch_per_gpu"] == 1
    assert 0 < t["kernels_fixed"] < floor["step_ms"] and t["gap"] == 3.0
    assert "DECODE_T_GAP_S" in floor["sources"]["gap"] and "fixed_per_kernel" in floor["sources"]["kernels_fixed"]
    assert floor["tpot_ms"] <= doc["tpot_ms"]           # one request is the fastest step
    assert main(args + ["--t-gap-ms", "1", "--kernels", "roofline"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["floor"]["terms_ms"]["gap"] == 1.0 and doc["floor"]["sources"]["gap"] == "--t-gap-ms"
    assert doc["floor"]["terms_ms"]["kernels_fixed"] == 0.0      # the speed of light has no fixed cost per kernel
