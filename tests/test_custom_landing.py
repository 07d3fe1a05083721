"""The landing page of a book built for your own pair opens with the answer for that pair."""
from __future__ import annotations

import re

from afdlib.decision.advise import advise
from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.report.book import chapter_numbers
from afdlib.report.own_book import custom_parameters
from afdlib.report.custom_landing import LINES, chapter_defaults, landing_markdown


def _landing(hardware, model):
    params = custom_parameters(hardware, model)
    numbers = chapter_numbers()
    names = sorted(params, key=lambda n: numbers.get(n, len(numbers) + 1))
    return landing_markdown("the pair", "- built for", hardware, model, params, names), names


def _prose(text: str) -> str:
    """The page without its code spans (where the arguments given, slugs or paths, may stand)."""
    return re.sub(r"`[^`]*`", "", text)


def test_the_landing_page_answers_for_deepseek_v3_on_h200():
    text, names = _landing("h200", "deepseek-v3")
    # the same call, made here: the sweet-spot chapter's settings (50 ms, context 4096, no MTP, datasheet)
    a = advise(load_model("deepseek-v3", profile="reference"), load_hardware("h200", profile="datasheet"),
               Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S), 4096)
    lo, hi = a.verdict.ratio_interval
    head = text.split("\n\n")[1]
    assert head.startswith(f"**The answer for DeepSeek-V3 on NVIDIA H200 SXM: {a.recommendation}")
    assert f"P(AFD better) = {a.p_afd:.2f}" in head and a.words() in head
    assert re.search(r"P\(AFD better\) = [01]\.\d\d\b", head)          # two decimals
    assert f"**{a.ratio:.2f}x**" in text and f"{lo:.2f}x to {hi:.2f}x" in text
    assert f"| EP | EP{a.ep['ep_size']}, " in text and f"| AFD | {a.afd['n_attn']}A{a.afd['n_ffn']}F, " in text
    assert f"{a.ep['tokens_per_s_per_gpu']:,.0f} | {a.ep['tpot_ms']:.1f} ms |" in text
    top = [t["assumption"] for t in a.verdict.tornado[:2]]
    assert f"The ratio moves most with {top[0]} (" in text and f") and {top[1]} (" in text
    assert ("sits on a bound" in text) == bool(a.on_bound)
    # by hand: DeepSeek-V3 K = 8 on H200's paper profile, r = 360 / 50 = 7.2: stable from 8 / 7.2 = 1.11, the
    # whole node counts 2-7, the dead zone from N_F = K = 8;
    # 100% HFU in the dead zone needs M >= 1979 TFLOP/s / (2 x 50 GB/s) = 19,790; M = 2048 gives 10.3%
    assert re.search(r"stays (about )?flat.* over N_F = 2-7, and is pinned to the scale-out network from N_F = K = 8", text)
    assert "needs M >= 19,790 for 100% HFU; DeepSeek-V3's M = 2,048 sits at 10.3%" in text
    rows = [line for line in text.splitlines() if line.startswith("| {doc}`generated/")]
    assert [re.search(r"generated/(\w+)", r).group(1) for r in rows] == names and set(names) <= set(LINES)
    # the sweeps chapter's row: DeepSeek-V3's own crossing along H200's scale-out, 50 GB/s / 4 .. x 16
    sweeps = next(r for r in rows if "generated/sweeps`" in r)
    assert "DeepSeek-V3 itself: " in sweeps and "GB/s per GPU of scale-out" in sweeps
    assert all(12.5 <= float(x) <= 800 for x in re.findall(r"(\d+(?:\.\d+)?) GB/s", sweeps)), sweeps
    assert "n/a" not in text and "computed in the chapter" not in text
    prose = _prose(text)
    assert not re.search(r"\b(h200|deepseek-v3)\b", prose)        # names from the files, slugs only as code
    assert "Built with only" not in text                            # both were given
    # the sweet-spot chapter's heterogeneous pools (its H20 attention pool with H200's FFN nodes, and the
    # reverse), read on the landing page as the chapter's own price reading of them
    from afdlib.decision.sweetspot import pools_table
    from afdlib.studies.sweetspot_study import heterogeneous_price_reading, pools_rows
    h20, h200 = load_hardware("h20", profile="datasheet"), load_hardware("h200", profile="datasheet")
    pools = pools_rows(pools_table(load_model("deepseek-v3", profile="reference"), [(h20, h200), (h200, h20), (h200, h200),
                                                                                    (h20, h20)],
                                   Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S), 4096), ["h20", "h200"], priced=False)
    sweet = next(r for r in rows if "generated/sweet_spots`" in r)
    assert "heterogeneous pools: " in sweet and heterogeneous_price_reading(pools, h20, h200) in sweet


def test_a_device_file_with_its_own_name_appears_by_that_name(tmp_path):
    # the catalogue's H200 datasheet numbers, on nodes of 4 GPUs, under a name of its own
    path = tmp_path / "my.yaml"
    path.write_text("name: Lab node (4 x H200-class)\ngpus_per_node: 4\nscale_up_domain: 4\nbf16_tflops: 989\n"
                    "fp8_tflops: 1979\nhbm_tb_per_s: 4.8\nhbm_gb: 141\nscale_up_gb_per_s: 450\n"
                    "scale_out_gb_per_s: 50\nscale_out_latency_us: 10\nsource: copied from data/hardware.yaml h200\n")
    text, names = _landing(str(path), None)
    reference = chapter_defaults("sweet_spots")["reference_model"]
    model = load_model(reference).name
    assert f"**The answer for {model} on Lab node (4 x H200-class): " in text
    assert (f"Built with only `--hardware`: the model is the sweet-spot chapter's reference model, {model}"
            in text)
    prose = _prose(text)
    assert not re.search(r"\bmy\b", prose) and "datasheet" not in prose   # no stem; no profile it lacks
    assert "the device file's own figures" in prose
    # the dead-zone chapter draws each device on its own node (4 GPUs here), as the grouped-GEMM chapter does
    assert "-GPU nodes, the chapter" not in text
    fig4 = re.search(r"FFN side on Lab node \(4 x H200-class\) peaks at ([\d.]+%)", text).group(1)
    assert f"peaks at {fig4} of peak there" in text          # the grouped-GEMM chapter's AFD ceiling, same number
    assert "n/a" not in text and len([r for r in text.splitlines() if r.startswith("| {doc}")]) == len(names)


def test_a_best_on_a_search_bound_is_said_on_the_landing_page():
    from dataclasses import replace

    from afdlib.report.custom_landing import Pair, answer_markdown
    pair = Pair("h200", "deepseek-v3", custom_parameters("h200", "deepseek-v3"))
    assert "sits on a bound" not in answer_markdown(pair)      # no bound binds for this pair (the test above)
    capped = "N_F = 128 nodes (the search's hard cap)"
    pair.advice = replace(pair.advice, afd={**pair.advice.afd, "on_bound": [capped]})
    assert f"The search's best sits on a bound (AFD: {capped}): that design may do better" in answer_markdown(pair)


def test_the_landing_page_of_a_superpod_says_it_has_no_dead_zone():
    """GB300 NVL72 with DeepSeek-V3: the dead-zone chapter's and the ceiling appendix's rows read the one
    fabric (no dead zone; the ceiling at M = 2,048 on 720 GB/s: 2 x 720e9 x 2048 / 4500e12 = 65.5%), not a
    dead-zone floor, and the appendix's row ends with the model's own ceiling."""
    text, _ = _landing("gb300", "deepseek-v3")
    rows = {re.search(r"generated/(\w+)", r).group(1): r for r in text.splitlines() if r.startswith("| {doc}`generated/")}
    assert "on its one fabric there is no dead zone" in rows["fig4_dead_zone"] and "floor" not in rows["fig4_dead_zone"]
    assert "DeepSeek-V3's M = 2,048 sits at 65.5%" in rows["appendix_a_ceiling"]
    # the two rows that give a bandwidth say on which footing: sustained (advise) and datasheet (the sweep)
    assert "sustained" in rows["sweet_spots"] and "as the datasheet gives it" in rows["sweeps"]
