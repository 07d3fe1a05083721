"""The two HFU chapters' readings (Figures 3 and 4) for a pair the project has never seen: a device
file with its own name and 4 GPUs per node, and a published config.json. Every glued string is
computed for that pair or left out (no "n/a"), names come from the files, and both chapters read
the device's own node."""
from __future__ import annotations

import json

import numpy as np
import pytest

from afdlib.analysis.hfu import grid_summaries, hfu_grid, hfu_sweep
from afdlib.evaluator.grouped_gemm import ep_tokens_per_expert
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.report.custom_landing import chapter_defaults
from afdlib.report.hfu_readings import Panels, dead_zone_readings, grouped_gemm_readings

DEVICE = "Lab node (4 x H200-class)"

# Qwen/Qwen3-Coder-480B-A35B-Instruct's published config.json (Hugging Face; the copy aiconfigurator
# ships as model_configs/Qwen--Qwen3-Coder-480B-A35B-Instruct_config.json), the fields the reader uses
QWEN3_CODER = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "head_dim": 128,
               "hidden_size": 6144, "intermediate_size": 8192, "moe_intermediate_size": 2560,
               "num_attention_heads": 96, "num_key_value_heads": 8, "num_experts": 160, "num_experts_per_tok": 8,
               "num_hidden_layers": 62, "decoder_sparse_step": 1, "mlp_only_layers": [],
               "shared_expert_intermediate_size": 0, "vocab_size": 151936, "torch_dtype": "bfloat16",
               "tie_word_embeddings": False, "max_position_embeddings": 262144}


@pytest.fixture()
def pair(tmp_path):
    """H200's paper numbers on nodes of 4 GPUs under a name of its own, and Qwen3-Coder's config.json."""
    device = tmp_path / "lab.yaml"
    device.write_text(f"name: {DEVICE}\ngpus_per_node: 4\nscale_up_domain: 4\nfp8_tflops: 1979\n"
                      "hbm_tb_per_s: 4.0\nhbm_gb: 141\nscale_up_gb_per_s: 360\nscale_out_gb_per_s: 50\n"
                      "source: copied from data/hardware.yaml h200 (paper profile)\n")
    (tmp_path / "qwen3-coder").mkdir()
    config = tmp_path / "qwen3-coder" / "config.json"
    config.write_text(json.dumps(QWEN3_CODER))
    return load_hardware(str(device)), load_model(str(config))


def _no_gap(readings: dict) -> None:
    for key, value in readings.items():
        assert "n/a" not in value and "None" not in value and "nan" not in value.lower(), (key, value)
        assert "{" not in value.replace("{numref}", ""), (key, value)       # every slot filled


def _fig4(hws, ms, gpus_per_node=None, focus=None, model=None):
    p = chapter_defaults("fig4_dead_zone")
    if gpus_per_node:
        hws = [h.with_overrides(gpus_per_node=gpus_per_node) for h in hws]
    n = np.arange(1, p["n_ffn_max"] + 1)
    budgets = [Budget(slo_s=slo / 1e3, l_accept=p["mtp"], t_gap_s=p["t_gap_ms"] / 1e3)
               for slo in (p["slo_ms"], p["slo_ms_alt"])]
    grids = [hfu_grid(ms, hws, n, b, hbm_usable_fraction=p["hbm_usable_fraction"]) for b in budgets]
    panels = Panels(hws, ms, n, grids[0], *(grid_summaries(ms, hws, n, g) for g in grids))
    return dead_zone_readings(panels, focus or hws[0].slug, model or ms[0].slug, budgets[0], p["slo_ms"],
                              p["slo_ms_alt"], gpus_per_node), panels


def test_dead_zone_readings_for_a_never_seen_pair(pair):
    hw, m = pair
    readings, panels = _fig4([hw], [m])
    _no_gap(readings)
    assert DEVICE in readings["focus_lead"] and m.name in readings["focus_lead"]
    assert readings["result_md"] == ""            # the opening's comparisons need the paper's other panels
    assert readings["g_node"] == "4 GPUs per node (each device's own)"
    # the paper's other panels are not drawn: their sentences are left out
    assert readings["panels_md"] == readings["h800_memory_md"] == readings["unchecked"] == ""
    # the memory sentence names this device's capacity and where it comes from, not the paper's H800
    assert readings["capacities"] == f"this figure takes its HBM capacities from the device's own file ({DEVICE}: 141 GB)"
    other = readings["reading_md"].replace(DEVICE, "")
    assert not any(name in other for name in ("H800", "B200", "GB200", "H20", "DeepSeek-V3"))
    # one bullet for the pair, one for the SLO; the pair's peak as the figure's grid gives it
    s = panels.summ[hw.slug, m.slug]
    assert readings["reading_md"].count("\n- ") == 1 and f"**{m.name} on {DEVICE}**" in readings["reading_md"]
    assert (f"{100 * s.max_hfu:.1f}%" if s.max_hfu is not None else "no feasible point") in readings["reading_md"]
    # the SLO bullet: a count of changed maxima only where one changes ("are 0 of 1, on no device" read badly)
    alt = panels.summ_alt[hw.slug, m.slug]
    same = (None if s.max_hfu is None else round(100 * s.max_hfu, 1)) == \
        (None if alt.max_hfu is None else round(100 * alt.max_hfu, 1))
    assert ("the one panel's maximum is the same to 0.1%" in readings["reading_md"]) == same
    assert "are 0 of" not in readings["reading_md"] and "on no device" not in readings["reading_md"]


def test_figure_4_takes_the_device_s_own_node_as_figure_3_does(pair):
    hw, m = pair
    own = _fig4([hw], [m])[1].summ[hw.slug, m.slug]
    # Figure 3's AFD ceiling: the same model on the same device (its own 4-GPU node, the default budget)
    fig3 = hfu_sweep(m, hw, np.arange(1, 65))[1]
    assert own.max_hfu == pytest.approx(fig3.max_hfu, abs=1e-12)
    # forced to 8-GPU nodes the bound differs, and the text says that the parameter overrides the node
    readings, forced = _fig4([hw], [m], gpus_per_node=8)
    assert forced.summ[hw.slug, m.slug].max_hfu != pytest.approx(own.max_hfu, abs=1e-3)
    assert readings["g_node"] == "8 GPUs per node (the chapter's `gpus_per_node`, for every device)"
    assert readings["focus_lead"].startswith("With 8-GPU nodes") or "no dead zone" in readings["focus_tail"]
    assert "--gpus-per-node 8`" in readings["rerun_md"]


def test_grouped_gemm_readings_for_a_never_seen_pair(pair):
    hw, m = pair
    p = chapter_defaults("fig3_grouped_gemm")
    deployed = load_model(p["ep_model"])
    physical = deployed.routed_experts + p["ep_redundant_experts"]
    # DeepSeek's deployment: 1850 tok/s per GPU / 20 tok/s per user = 92.5 requests x 2 tokens x 144 GPUs x 8 / 288
    # = 740 tokens per expert, whichever model the book is built for
    ep_tokens = ep_tokens_per_expert(14800 / 8, p["ep_tokens_per_user_s"], p["ep_tokens_per_request_step"],
                                     p["ep_gpus"], deployed.experts_per_token, physical)
    assert ep_tokens == pytest.approx(740)
    afd = {hw.slug: hfu_sweep(m, hw, np.arange(1, 65))[1].max_hfu}
    readings = grouped_gemm_readings([hw], hw.slug, afd, m, deployed, ep_tokens, p["experts_per_gpu"],
                                     [0.0, *p["zipf_exponents"]], p["ofu"], p["paper_ep_hfu"],
                                     p["ep_tokens_per_request_step"], p["ep_gpus"], physical)
    _no_gap(readings)
    assert readings["hw_focus"] == DEVICE and DEVICE in readings["result_md"] and DEVICE in readings["measured_md"]
    # the paper measured on H800: on another device its measured HFU is not compared, nor called "the same hardware"
    assert "same" not in readings["result_md"] + readings["measured_md"] and "H800" not in readings["result_md"]
    assert f"AFD ceiling of {m.name} on {DEVICE} is {100 * afd[hw.slug]:.1f}%" in readings["result_md"]
    # H200's ridge: 1979 TFLOP/s x 1 byte / (2 x 4.0 TB/s) = 247 tokens per expert; no second device
    assert readings["ridges"] == f"247 tokens per expert on {DEVICE}" and readings["low_ridge_md"] == ""


def test_a_config_json_model_on_the_paper_s_devices(pair):
    # `afd book --model config.json`: the paper's eight devices, the user's model read on H800
    _, m = pair
    hws = [load_hardware(h, profile="paper") for h in ("h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300")]
    readings, panels = _fig4(hws, [m], focus="h800", model=m.slug)
    _no_gap(readings)
    assert f"{m.name} on H800 SXM peaks at" in readings["focus_lead"]
    # the superpods' flat bound is the user's model's, named so; the catalogue models' sentences are left out
    gb200 = panels.summ["gb200", m.slug].max_hfu
    assert f"({100 * gb200:.1f}% for {m.name} at every $N_F$ on GB200 NVL72)" in readings["result_md"]
    assert "DeepSeek-V3" not in readings["result_md"] + readings["reading_md"]
    # Figure 3 on H800: the paper's measured EP HFU is DeepSeek-V3's, said so beside the user's model's ceiling
    p = chapter_defaults("fig3_grouped_gemm")
    deployed = load_model(p["ep_model"])
    h800 = [h for h in hws if h.slug == "h800"]
    afd = {"h800": hfu_sweep(m, h800[0], np.arange(1, 65))[1].max_hfu}
    fig3 = grouped_gemm_readings(h800, "h800", afd, m, deployed, 740.0, 8, [0.0, 1.0], 1.0, 0.6, 2.0, 144, 288)
    _no_gap(fig3)
    assert "EP's measured HFU (DeepSeek-V3's)" in fig3["result_md"] and "first argument" not in fig3["measured_md"]


def test_the_capacities_sentence_names_each_profile_and_capacity():
    from afdlib.report.hfu_readings import capacities
    hws = [load_hardware("h800"), load_hardware("h200", profile="datasheet")]
    # the paper's Table 5 prints 80 GB for H800; H200's datasheet 141 GB
    assert capacities(hws) == ("this figure takes its HBM capacities from the paper's Table 5 as printed (H800 SXM: "
                               "80 GB); from the datasheet profile (H200 SXM: 141 GB)")


def test_full_hfu_words_for_one_model_and_for_several():
    from afdlib.report.hfu_readings import full_hfu_words
    # one model: a sentence about it, never "none of the models above"
    assert full_hfu_words(["Kimi-K2"], [], []) == ("Kimi-K2 does not reach 100%", "does not reach it")
    assert full_hfu_words(["Step3"], ["Step3"], []) == ("Step3 reaches 100%", "does not reach it")
    assert full_hfu_words(["Step3"], ["Step3"], ["Step3"])[1] == "reaches it"
    assert full_hfu_words(["A", "B", "C"], [], []) == ("None of the models above reaches 100%", "none of them")
    assert full_hfu_words(["A", "B", "C"], ["A", "C"], ["C"]) == ("Of the models above, A and C reach 100%", "C")
    assert full_hfu_words(["A", "B", "C"], ["B"], ["A", "B", "C"]) == (
        "Of the models above, B reaches 100%", "A, B and C")
