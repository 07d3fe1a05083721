"""Every notebook: its jupytext pair is in sync, and it runs under papermill with non-default parameters."""
import ast
import json
import re
from pathlib import Path

import jupytext
import pandas as pd
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _cells(nb):
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=lambda p: p.stem)
def test_pair_in_sync_and_clean(ipynb):
    text = ipynb.with_suffix(".py")
    assert text.exists(), f"{ipynb.name} has no paired .py"
    assert _cells(jupytext.read(ipynb)) == _cells(jupytext.read(text)), \
        f"{ipynb.name} and {text.name} differ: run `jupytext --sync notebooks/{text.name}`"
    raw = json.loads(ipynb.read_text())
    assert raw["metadata"]["kernelspec"]["language"] == "python"
    assert raw["metadata"]["kernelspec"]["name"] == "python3"
    assert not any(c.get("outputs") for c in raw["cells"] if c["cell_type"] == "code"), "commit without outputs"
    assert sum("parameters" in c["metadata"].get("tags", []) for c in raw["cells"]) == 1


def execute_papermill(name: str, tmp_path: Path, **parameters) -> Path:
    """The notebook under papermill in a fresh kernel, as the book runs it."""
    pm.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(tmp_path / f"{name}.ipynb"),
                        parameters={"output_dir": str(tmp_path / "figures"), **parameters}, cwd=str(tmp_path),
                        kernel_name="python3", progress_bar=False)
    return tmp_path / "figures"


def execute(name: str, tmp_path: Path, **parameters) -> Path:
    """Every code cell of the notebook, in order, in this process (no kernel to start: the test
    suite stays fast), with ``parameters`` injected after the ``parameters`` cell as papermill does
    and the working directory at ``tmp_path``. Papermill itself runs every notebook in the book
    build and in the tests marked so below."""
    import os

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import myst_nb
    cells = [c for c in jupytext.read(ROOT / "notebooks" / f"{name}.py").cells if c.cell_type == "code"]
    namespace: dict = {"__name__": "__main__"}
    glued: set = set()
    real_glue = myst_nb.glue

    def glue_once(key, *args, **kwargs):
        # the book build fails on a key glued twice (a warning, and warnings are errors): catch it here
        assert key not in glued, f"{name}: glue key '{key}' glued twice"
        glued.add(key)
        return real_glue(key, *args, **kwargs)

    here = os.getcwd()
    os.chdir(tmp_path)
    myst_nb.glue = glue_once
    try:
        for cell in cells:
            exec(compile(cell.source, f"{name}.py", "exec"), namespace)
            if "parameters" in cell.metadata.get("tags", []):
                namespace.update({"output_dir": str(tmp_path / "figures"), **parameters})
    finally:
        myst_nb.glue = real_glue
        os.chdir(here)
        plt.close("all")
    return tmp_path / "figures"


SMALL_GRID = {"hardware": ["h800", "gb200"], "models": ["deepseek-v3", "step3"], "condition_points": 3}
"""The small grid of the landing page's and the sweet-spot chapter's tests: the reference pair and its
Superpod, a fine- and a coarse-expert model, the paper's Table 3 at 3 points per condition (6 in the
book: the same code at fewer points); the two chapters read one advice table and one Table-3 study of
it (:mod:`afdlib.report.computed`)."""


@pytest.fixture(scope="session")
def landing_small(shared_results):
    """The landing page on :data:`SMALL_GRID`, run once per test run for the tests that read it, on
    whichever xdist worker asks first (the others wait for it under a lock and read its files)."""
    import fcntl
    folder = shared_results.parent / "landing-small"
    folder.mkdir(exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (folder / "done").exists():
                execute("intro", folder, **SMALL_GRID)
                (folder / "done").touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder / "figures"


@pytest.mark.notebook
def test_fig2_on_b200_with_kimi(tmp_path):
    out = execute("fig2_intensity", tmp_path, hardware="b200", model="kimi-k2", n_ffn_max=16)
    df = pd.read_csv(out / "fig2_intensity.csv")
    assert list(df.n_ffn) == list(range(1, 17))
    # B200: r = 720 / 50 = 14.4 > K = 8, so the rank is never scale-up bound; Kimi-K2 E = 384, g = 8:
    # N_F = 1: B_rank = 8 B_out, G = 48 -> I = 2 x 8 / 48 = 0.333
    assert df.intensity[0] == pytest.approx(1 / 3, abs=1e-5)
    assert set(df.regime) == {"stable", "scale-out-bound"}
    assert (out / "fig2_intensity.svg").stat().st_size > 0


@pytest.mark.notebook
def test_configurations_reference_profile(tmp_path):
    out = execute("configurations", tmp_path, hw_profile="datasheet", model_profile="reference")
    models = pd.read_csv(out / "table4_models.csv").set_index("slug")
    hw = pd.read_csv(out / "table5_hardware.csv").set_index("slug")
    assert models.loc["glm-4.7", "moe_layers"] == 89
    assert hw.loc["h200", "hbm_tb_per_s"] == pytest.approx(4.8 * 0.8)
    assert models.loc["deepseek-v3", "granularity_h_over_m"] == pytest.approx(3.5)


@pytest.mark.notebook
def test_fig4_with_100ms_slo_and_two_panels(tmp_path, monkeypatch):
    import myst_nb
    glued: dict = {}
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, **kw: glued.__setitem__(key, value))
    out = execute("fig4_dead_zone", tmp_path, hardware=["h800", "b300"], models=["deepseek-v3", "glm-4.7"],
                  slo_ms=100.0, n_ffn_max=16)
    # the maxima tables name the devices from their data, not their slugs
    for key in ("tab_dead_zone_maxima", "tab_dead_zone_best_n"):
        table = glued[key].data
        assert "| NVIDIA H800 SXM |" in table and "| h800 |" not in table and "| b300 |" not in table
    assert glued["capacities"].startswith("this figure takes its HBM capacities from the paper's Table 5")
    maxima = pd.read_csv(out / "fig4_maxima_percent.csv").set_index("hardware")
    assert maxima.loc["h800", "DeepSeek-V3"] == pytest.approx(33.1, abs=0.05)
    # B300: 100 GB/s NIC x 8 = 800 > 720 scale-up: 2 x 720 x 2048 / 4500e3 = 65.5%
    assert maxima.loc["b300", "DeepSeek-V3"] == pytest.approx(65.5, abs=0.05)
    bound = pd.read_csv(out / "fig4_hfu_bound.csv")
    assert len(bound) == 2 * 2 * 16 and bound.hfu.max() <= 1


@pytest.mark.notebook
def test_fig3_with_other_skews(tmp_path):
    out = execute("fig3_grouped_gemm", tmp_path, hardware=["h100"], zipf_exponents=[2.0], experts_per_gpu=4)
    df = pd.read_csv(out / "fig3_grouped_gemm.csv")
    assert set(df.zipf_exponent) == {0.0, 2.0} and set(df.hardware) == {"h100"}
    bal = df[df.zipf_exponent == 0].hfu.to_numpy()
    skew = df[df.zipf_exponent == 2].hfu.to_numpy()
    assert (skew <= bal + 1e-9).all() and bal.max() == pytest.approx(1)


@pytest.mark.notebook
def test_appendix_a_on_b200_superpod_gb300(tmp_path):
    out = execute("appendix_a_ceiling", tmp_path, ordinary="b200", superpod="gb300", models=["deepseek-v3", "step3"])
    t = pd.read_csv(out / "appendix_a_models.csv").set_index("model")
    assert t.loc["DeepSeek-V3", "best_gb300"] == pytest.approx(0.655, abs=1e-3)
    assert t.loc["DeepSeek-V3", "best_b200"] == pytest.approx(0.364, abs=1e-3)


@pytest.mark.notebook
def test_fig6_with_other_grid(tmp_path):
    out = execute("fig6_penalty", tmp_path, n_ffn_values=[3], sigmas=[0.9])
    df = pd.read_csv(out / "fig6_penalty.csv")
    assert set(df.n_ffn) == {3} and set(df.sigma) == {0.9} and (df.alpha_afd <= df.alpha_ep + 1e-12).all()
    # sigma N_A whole (N_A = 10: 9) -> AFD equals EP
    row = df[df.n_attn == 10].iloc[0]
    assert row.rounding == "exact" and row.alpha_afd == pytest.approx(row.alpha_ep)


@pytest.mark.notebook
def test_fig5_with_sigma_07(tmp_path):
    out = execute("fig5_timelines", tmp_path, sigma=0.7, ep_ranks=3, n_layers=1, n_layers_measure=10)
    df = pd.read_csv(out / "fig5_timelines.csv")
    assert {"EP, EP imbalance", "AFD, DP imbalance"} <= set(df.case)
    assert set(df.stage) <= {"attention", "dispatch", "ffn", "combine", "idle"}


@pytest.mark.notebook
def test_sigma_notebook_with_the_fitted_fallback(tmp_path, monkeypatch):
    import myst_nb
    glued: dict = {}
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, **kw: glued.__setitem__(key, value))
    # an empty counts_dir forces the shipped Zipf fits; small sweeps keep it quick
    out = execute("sigma_from_routing", tmp_path, counts_dir=str(tmp_path), ep_sizes=[8, 32, 144], redundant=32,
                  batch_tokens=[256, 1024], trials=1, layer_sample=4, uniform_trials=4, ep_size=32)
    # the prose says the data are the shipped fits and never compares the fit with itself
    texts = [v for v in glued.values() if isinstance(v, str)]
    assert not [t for t in texts if "raw file not found" in t or "of the measured balancedness" in t]
    for key in ("origin", "loads", "routing"):
        assert "shipped fits" in glued[key] and "measured" not in glued[key].replace("fits of the measured", "")
    assert "no dashed fit" in glued["fit_check"] and "EP 8, 32, 144" in glued["fit_check"]
    assert glued["mm_fitted"] != glued["mm_measured"]    # shipped measured max/mean (5.20), not the fit's own
    cost = pd.read_csv(out / "sigma_cost.csv")
    assert len(cost) == 2 and ((cost.sigma > 0) & (cost.sigma <= 1)).all() and (cost.alpha <= 1).all()
    fit = pd.read_csv(out / "sigma_zipf_fit.csv")
    assert len(fit) == 58 and fit.zipf_exponent.between(0.2, 0.8).all()
    # the findings against the raw files' record: other settings than the record's, said so
    saved = json.loads((out / "sigma_findings.json").read_text())
    assert saved["measured"] is False and saved["parameters"]["ep_size"] == 32
    assert "parameters differ from the recorded run's (batch_tokens, ep_size, ep_sizes" in glued["raw_note"]


@pytest.mark.notebook
def test_decode_validation_without_overlap(tmp_path):
    out = execute("decode_validation", tmp_path, ep_overlap=0.0, afd_overlap=0.0)
    table = pd.read_csv(out / "decode_validation.csv").set_index("case")
    # nothing hidden, for both designs: each prediction is its band's lower end (EP and AFD alike)
    assert set(table.design) == {"ep", "afd"}
    assert (table.predicted - table.band_low).abs().max() < 1e-6 * table.predicted.max()
    # a band is a point only where nothing can hide (EP's one micro-batch without single-batch overlap)
    serial = (table.design == "ep") & (table.micro_batches == 1) & ~table.sbo.astype(bool)
    # (GB200 June and xDeepServe's colocated run: one batch, nothing overlapped)
    assert (table.band_high > table.band_low * 1.01)[~serial].all() and serial.sum() == 2
    assert (out / "decode_deepep.csv").exists() and (out / "decode_gb200_batch.svg").exists()


@pytest.mark.notebook
def test_sweet_spots_with_the_reference_device_one_of_the_paper_s(tmp_path):
    # `afd book --hardware b200` makes B200 the reference device, which the bandwidth figure also
    # draws: each device is drawn (and its crossings glued) once
    out = execute("sweet_spots", tmp_path, hardware=["h800", "b200", "gb200"], models=["deepseek-v3"], map_size=3,
                  ordinary="b200", ffn_pool="b200", condition_points=3)
    assert (out / "sweet_spots_advice.csv").exists()


def test_sweet_spots_small(tmp_path, landing_small):
    out = execute("sweet_spots", tmp_path, **SMALL_GRID, map_size=3)
    table = pd.read_csv(out / "sweet_spots_advice.csv")
    # the landing page's Table 2 verdicts are this table's (one computed advice table)
    landing = pd.read_csv(landing_small / "intro_results.csv").set_index("claim").loc[
        "Where AFD can beat EP end to end (Section 4, the paper's Table 3)", "this book"]
    assert f"{table.ratio.min():.2f} to {table.ratio.max():.2f} over 4 pairs" in landing
    assert len(table) == 4 and set(table.recommendation) <= {"AFD", "EP"}
    # the ratio is AFD / EP tokens per second per GPU
    assert ((table.ratio - table.afd / table.ep) / table.ratio).abs().max() < 1e-4  # CSV keeps 6 digits
    maps = pd.read_csv(out / "sweet_spots_maps.csv")
    assert len(maps) == 4 * 3 * 3


def test_sweeps_small(tmp_path):
    out = execute("sweeps", tmp_path, bandwidth={"from": 25, "to": 400, "num": 3, "log": True},
                  expert_widths=[1024, 4096], sparsities=[16, 32], models=["deepseek-v3"])
    surface = pd.read_csv(out / "sweeps_surface.csv")
    assert len(surface) == 2 * 2 * 3 and set(surface.scale_out_gb_per_s.round(3)) == {25.0, 100.0, 400.0}
    # the spec it writes is one `afd sweep` reads
    import yaml

    from afdlib.sweep.spec import parse
    assert parse(yaml.safe_load((out / "sweeps_spec.yaml").read_text())).points == 12
    assert pd.read_csv(out / "sweeps_models.csv").model.tolist() == ["DeepSeek-V3"]


def test_sweeps_for_an_own_pair_on_a_superpod(tmp_path):
    """An own-pair book's sweeps chapter (its parameters from custom_parameters): Qwen3-Coder's family
    on GB200, whose scale-out is its scale-up fabric, so that fabric is the axis swept (afd sweep refuses
    scale-out on a Superpod); its range and the family's cells derived from the pair."""
    import yaml

    from afdlib.inputs.catalog import load_model
    from afdlib.report.own_book import custom_parameters
    params = custom_parameters("gb200", "qwen3-coder")["sweeps"]
    assert params["hardware"] == "gb200" and params["model"] == "qwen3-coder"
    out = execute("sweeps", tmp_path, **{**params, "models": ["qwen3-coder"]})
    spec = yaml.safe_load((out / "sweeps_spec.yaml").read_text())
    # GB200's NVLink: 900 GB/s per GPU (datasheet), the range 900 / 4 .. 900 x 16
    assert spec["vary"]["scale_up_gb_per_s"] == {"from": 225.0, "to": 14400.0, "num": 25, "log": True}
    m = load_model("qwen3-coder", profile="reference")        # the model's own cell in the middle
    assert spec["vary"]["expert_width"][2] == m.moe_intermediate_size and spec["vary"]["sparsity"][2] == m.sparsity
    surface = pd.read_csv(out / "sweeps_surface.csv")
    assert len(surface) == 5 * 4 * 25 and "scale_up_gb_per_s" in surface
    assert pd.read_csv(out / "sweeps_models.csv").model.tolist() == [m.name]


@pytest.mark.notebook
def test_modern_moe_small(tmp_path):
    out = execute("modern_moe", tmp_path, hardware=["h800", "b200"], models=["qwen3.5-397b-a17b", "mimo-v2-flash"],
                  verdict_hardware=[], long_hardware=["gb200"], long_context=32768)
    table = pd.read_csv(out / "modern_moe_pairs.csv")
    assert len(table) == 2 * 2 * 2 and set(table.reading) == {"hybrid", "all full"}
    assert ((table.ratio - table.afd / table.ep) / table.ratio).abs().max() < 1e-4  # CSV keeps 6 digits
    assert table.p_afd.isna().all()                                                 # no verdict asked for
    # reading every layer as full attention never shrinks the cache of these models
    wide = table.pivot_table(index=["base", "hardware"], columns="reading", values="kv_mb")
    assert (wide["all full"] > wide["hybrid"]).all()
    assert set(pd.read_csv(out / "modern_moe_long_context.csv").hardware) == {"gb200"}
    assert (out / "modern_moe_ratios.svg").exists()


@pytest.mark.notebook
def test_pipeline_jitter_on_h200(tmp_path):
    out = execute("pipeline_jitter", tmp_path, hardware="h200", cvs=[0.0, 0.2], ideal_cvs=[0.0, 0.2], steps=100)
    dep = pd.read_csv(out / "pipeline_deployments.csv")
    assert set(dep.design) == {"afd", "ep"} and set(dep.cv) == {0.0, 0.2}
    assert (dep[dep.cv == 0].throughput_loss.abs() < 0.01).all()          # routing stragglers alone: little
    assert (dep[dep.cv == 0.2].throughput_loss.to_numpy() > dep[dep.cv == 0].throughput_loss.to_numpy() - 1e-3).all()
    ideal = pd.read_csv(out / "pipeline_ideal.csv").set_index(["micro_batches", "cv"])
    assert ideal.throughput_loss[(3, 0.2)] > ideal.throughput_loss[(2, 0.2)]   # 3BO the most fragile
    assert ideal.throughput[(3, 0.0)] == pytest.approx(1.0)


@pytest.mark.notebook
def test_aiconfigurator_comparison_with_other_kernel_cost(tmp_path):
    from afdlib.peers.aiconfigurator import comparison_rows
    out = execute("aiconfigurator_comparison", tmp_path, kernel_overhead_us=10.0)
    comp = pd.read_csv(out / "aiconfigurator_comparison.csv")
    assert len(comp) >= 30 and set(comp.design) == {"ep", "afd"}
    # a larger fixed cost per kernel makes every one of our predictions slower than the defaults'
    base = pd.DataFrame(comparison_rows())
    assert list(base.id) == list(comp.id)
    assert (comp.our_tpot_ms.to_numpy() > base.our_tpot_ms.to_numpy()).all()


@pytest.mark.notebook
def test_notebook_parameters_are_checked_under_papermill(tmp_path):
    with pytest.raises(pm.PapermillExecutionError, match=re.escape("unknown notebook parameter(s) sigmaz")):
        execute_papermill("fig6_penalty", tmp_path, sigmaz=[0.8])
    assert not (tmp_path / "figures" / "fig6_penalty.csv").exists()  # nothing written before the check


def _check_in_process(name: str, **overrides):
    """The notebook's parameter cell and the cell that checks it, run in this process with
    ``overrides`` injected as papermill would (for values the check refuses: it raises first)."""
    cells = [c for c in jupytext.read(ROOT / "notebooks" / f"{name}.py").cells if c.cell_type == "code"]
    i = next(k for k, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(cells[i].source, namespace)
    namespace.update(overrides)
    exec(cells[i + 1].source, namespace)


@pytest.mark.parametrize("name", [p.stem for p in NOTEBOOKS])
def test_every_notebook_refuses_an_unknown_parameter(name):
    from afdlib.errors import AfdError
    with pytest.raises(AfdError, match=re.escape("unknown notebook parameter(s) hardwar")):
        _check_in_process(name, hardwar="h800")


@pytest.mark.parametrize("parameters, message", [
    ({"n_ffn_values": "abc"}, "notebook parameter 'n_ffn_values' must be a list"),
    ({"lambda_min": -5}, "notebook parameter 'lambda_min' must be positive"),
])
def test_notebook_parameter_values_are_checked(parameters, message):
    from afdlib.errors import AfdError
    with pytest.raises(AfdError, match=re.escape(message)):
        _check_in_process("fig6_penalty", **parameters)


def test_papermill_sees_every_parameter():
    # a comment with "=" or a tuple assignment hides a parameter from papermill's inference
    for ipynb in NOTEBOOKS:
        params = pm.inspect_notebook(str(ipynb))
        cell = next(c for c in jupytext.read(ipynb).cells if "parameters" in c.metadata.get("tags", []))
        names = {line.split("=")[0].strip() for line in cell.source.splitlines()
                 if "=" in line and not line.startswith((" ", "#"))}
        assert names == set(params), ipynb.name


@pytest.mark.notebook
def test_two_runs_with_other_parameters_do_not_share_outputs(tmp_path):
    execute_papermill("fig6_penalty", tmp_path)
    execute_papermill("fig6_penalty", tmp_path)  # the same parameters again: fine
    with pytest.raises(pm.PapermillExecutionError, match="holds the output of a run with other parameters"):
        execute_papermill("fig6_penalty", tmp_path, sigmas=[0.5])


@pytest.mark.notebook
def test_landing_page_results_table_on_a_small_grid(landing_small):
    out = landing_small
    table = pd.read_csv(out / "intro_results.csv")
    assert set(table.status) <= {"reproduced", "deviates (erratum)", "beyond the paper"}
    # the H800 ceiling and floor do not depend on the SLO once the point is feasible (Figure 4)
    row = table.set_index("claim").loc["HFU ceiling of the AFD FFN side, DeepSeek-V3 on H800 (Fig. 4)"]
    assert row["this book"] == row["paper"] == "33.1%"
    # every claim links to a numbered chapter of the reference book
    from afdlib.report.book import chapter_numbers
    assert set(table.chapter) <= set(chapter_numbers())
    # the departures table links to numbered chapters too, and the erratum always departs
    departures = pd.read_csv(out / "intro_departures.csv")
    assert set(departures.chapter) <= set(chapter_numbers())
    assert departures.set_index("claim").departs["AFD's imbalance penalty (Section 3.3)"]
    assert len(pd.read_csv(out / "intro_conditions.csv")) == 2 * 2 + 2   # two models on two devices, two pairings
    # the verdicts are the sweet-spot chapter's, pair for pair (one computed table)
    verdicts = pd.read_csv(out / "intro_results.csv").set_index("claim").loc[
        "Where AFD can beat EP end to end (Section 4, the paper's Table 3)", "this book"]
    assert "over 4 pairs" in verdicts


def test_landing_page_refuses_a_grid_without_its_reference_devices(tmp_path):
    from afdlib.errors import AfdError
    with pytest.raises(AfdError, match="'hardware' must include h800, gb200 .*gb200 missing"):
        execute("intro", tmp_path, hardware=["h800"], models=["deepseek-v3"])


@pytest.mark.parametrize("ipynb", [p for p in NOTEBOOKS if p.stem != "intro"], ids=lambda p: p.stem)
def test_chapter_reads_as_a_report(ipynb):
    """Each chapter opens with its result, ends with its limitations, and shows every figure as a
    numbered, captioned {glue:figure} (no bare plt.show()), referenced by its name."""
    text = ipynb.with_suffix(".py").read_text()
    opening = text[text.index("# # "):text.index("# %%", text.index("# # "))]
    assert "**Result.**" in opening, "the chapter's first cell states its result"
    assert "# ## Limitations" in text
    assert "plt.show()" not in text
    glued = set(re.findall(r'glue\("(fig_\w+)", fig', text))
    glued |= {f"fig_{stem}" for stem in re.findall(r'glue_figure\(.*?, "(\w+)", output_dir\)', text)}
    shown = dict(re.findall(r"```\{glue:figure\} (fig_\w+)\n# :name: ([\w-]+)", text))
    assert glued == set(shown), f"figures glued but not shown, or shown but not glued: {glued ^ set(shown)}"
    for name in shown.values():    # each figure is referenced from the prose by number
        assert f"{{numref}}`{name}`" in text, f"figure {name} is never referenced"


# A table numbered by hand ("Table 2", "Tables 2-4"): the book numbers tables itself ({table} with :name:,
# referenced by {numref}). The paper's own tables are named as such ("the paper's Table 3"), and a
# table of another document by its source ("Table 9 of its report").
HAND_NUMBERED = re.compile(r"\bTables? \d+(?:(?:\s*[-–,]\s*|\s+and\s+)\d+)*")


def hand_numbered_tables(text: str) -> list[str]:
    text = " ".join(text.split())
    return [m.group(0) for m in HAND_NUMBERED.finditer(text)
            if not text[:m.start()].endswith(("paper's ", "paper’s ")) and not text[m.end():].startswith(" of ")]


def test_hand_numbered_tables_are_found():
    assert hand_numbered_tables("Table 1: the stage times") == ["Table 1"]
    assert hand_numbered_tables("as in Table 2,\nand Tables 2-4 take") == ["Table 2", "Tables 2-4"]
    assert hand_numbered_tables("its Table 3 and Tables 4 and 5") == ["Table 3", "Tables 4 and 5"]
    assert hand_numbered_tables("the paper's\nTable 3; the paper's Tables 4 and 5; Table 9 of its report; "
                                "{numref}`tab-x`") == []


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=lambda p: p.stem)
def test_tables_are_numbered_by_the_book(ipynb):
    """Every table a chapter glues is shown in a numbered {table} with a caption and a :name:, and the
    prose refers to it by {numref}; no table is numbered by hand in the chapter's markdown."""
    nb = jupytext.read(ipynb.with_suffix(".py"))
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert hand_numbered_tables(markdown) == [], "number tables with {table} :name: and {numref}, not by hand"
    for cell in (c for c in nb.cells if c.cell_type == "code"):    # a cell's value shown as a Styler: unnumbered
        last = (ast.parse(cell.source).body or [None])[-1]
        if isinstance(last, ast.Expr):
            names = {getattr(n, "attr", getattr(n, "id", None)) for n in ast.walk(last)}
            assert "style" not in names or "glue_table" in names, f"a table shown unnumbered: {cell.source[-80:]}"
    glued = set(re.findall(r'glue_table\(\s*"(tab_\w+)"', code))
    shown = re.findall(r":::\{table\} (\S.*)\n:name: (tab-[\w-]+)\n\n```\{glue:md\} (tab_\w+)\n:format: myst\n```\n:::",
                       markdown)
    assert glued == {key for _, _, key in shown}, "tables glued but not shown in a {table}, or shown but not glued"
    for caption, name, _ in shown:
        assert not re.match(r"Table\b", caption), f"{name}: the caption starts with a hand number"
        assert f"{{numref}}`{name}`" in markdown, f"table {name} is never referenced"
    if ipynb.stem != "intro":    # a chapter runs alone in an own-pair book: another chapter's table may be missing
        assert set(re.findall(r"\{numref\}`(tab-[\w-]+)`", markdown)) <= {name for _, name, _ in shown}


def test_landing_page_jitter_row_matches_the_pipeline_chapter(landing_small):
    """The landing page recomputes the pipeline chapter's equal-stage study at that chapter's
    defaults: the two pages must print the same losses (the row depends on neither the SLO nor the
    verdicts' grid, so the small grid's landing page shows it)."""
    from afdlib.inputs.catalog import load_model
    from afdlib.simulation.studies import ideal_sweep
    defaults = {k: v["default"] for k, v in pm.inspect_notebook(str(ROOT / "notebooks" / "pipeline_jitter.ipynb")).items()}
    chapter = pd.DataFrame(ideal_sweep([0.0, 0.2], (2, 3, 4), load_model(eval(defaults["model"])).moe_layers,
                                       int(defaults["steps"]), int(defaults["seed"])))
    expected = " / ".join(f"{100 * chapter[(chapter.cv == 0.2) & (chapter.micro_batches == m)].throughput_loss.iloc[0]:.1f}%"
                          for m in (2, 3, 4))
    row = pd.read_csv(landing_small / "intro_results.csv").set_index("claim").loc[
        "3BO lowers the tolerance to t_B fluctuations (Section 2)"]
    assert expected in row["this book"]


MAX_CODE_LINES = 150


def code_lines(path: Path) -> int:
    """Non-blank, non-comment lines in the code cells of a jupytext notebook (markdown cells excluded)."""
    return sum(1 for cell in jupytext.read(path).cells if cell.cell_type == "code"
               for line in cell.source.splitlines() if line.strip() and not line.strip().startswith("#"))


def test_code_lines_count_code_cells_only(tmp_path):
    nb = tmp_path / "nb.py"
    nb.write_text('# %% [markdown]\n# # Title\n# x = 1\n\n# %%\nx = 1\n\n# a comment\n    # indented comment\n'
                  'y = [1,\n     2]  # trailing\n\n# %% tags=["hide-input"]\nprint(x)\n')
    assert code_lines(nb) == 4          # x = 1; y = [1,; 2]; print(x)


@pytest.mark.parametrize("chapter", [p.stem for p in sorted((ROOT / "notebooks").glob("*.py"))])
def test_chapters_are_thin(chapter):
    """A chapter is parameters, calls into the library, figures, glued numbers and prose: what it
    computes lives in the library, where it is tested."""
    n = code_lines(ROOT / "notebooks" / f"{chapter}.py")
    assert n <= MAX_CODE_LINES, f"{chapter}: {n} code lines (at most {MAX_CODE_LINES}); move computation to afdlib"


# --- a parameter error ends papermill with one line and status 2 -------------------------------------

def test_a_list_given_as_text_names_the_yaml_option():
    import yaml

    from afdlib.errors import AfdError
    with pytest.raises(AfdError) as refused:
        _check_in_process("fig6_penalty", sigmas="[0.5, 0.8]")   # what `-p sigmas "[0.5, 0.8]"` passes
    message = str(refused.value)
    assert message.startswith("notebook parameter 'sigmas' must be a list") and "\n" not in message
    suggested = re.search(r'-y "(.*)"', message).group(1)
    assert yaml.safe_load(suggested) == {"sigmas": [0.5, 0.8]}
    _check_in_process("fig6_penalty", **yaml.safe_load(suggested))    # the suggestion is accepted
    with pytest.raises(AfdError, match=re.escape('-y "hardware: [h800]"')):
        _check_in_process("fig4_dead_zone", hardware="h800")


@pytest.mark.parametrize("name", ["sigma_from_routing", "pipeline_jitter"])
def test_a_counts_dir_that_does_not_exist_is_an_error(tmp_path, name):
    from afdlib.errors import AfdError
    with pytest.raises(AfdError, match=re.escape("notebook parameter 'counts_dir' must be an existing folder, "
                                                 f"got '{tmp_path / 'nope'}'")):
        _check_in_process(name, counts_dir=str(tmp_path / "nope"))
    _check_in_process(name, counts_dir=str(tmp_path))    # a folder without the file: the fitted data, said so
    _check_in_process(name, counts_dir=None)             # the shared reference data


def test_only_a_notebook_s_user_error_is_one_papermill_line():
    from afdlib.report.papermill_errors import user_error_line
    error = pm.PapermillExecutionError(2, 3, "check", "Refused", "notebook parameter 'x' must be positive, got -1",
                                       ["a long traceback"])
    assert user_error_line(error) == "papermill: error: notebook parameter 'x' must be positive, got -1"
    assert user_error_line(pm.PapermillExecutionError(2, 3, "1 / 0", "ZeroDivisionError", "division by zero", [])) is None
    assert user_error_line(ValueError("x")) is None


@pytest.mark.notebook
def test_papermill_ends_on_a_bad_parameter_with_one_line_and_status_2(tmp_path):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "papermill", str(ROOT / "notebooks" / "fig6_penalty.ipynb"),
                           str(tmp_path / "out.ipynb"), "-p", "sigmas", "[0.5]", "-p", "output_dir", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].startswith("papermill: error: notebook parameter 'sigmas' must be a list")
    # no traceback of the error; on a loaded machine jupyter's zmq event loop may log one of its own
    # while the kernel shuts down (zmqstream.py), which is not the notebook's
    blocks = (proc.stderr + proc.stdout).split("Traceback (most recent call last):")[1:]
    assert [b for b in blocks if "zmq/eventloop/zmqstream.py" not in b] == []


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.py")), ids=lambda p: p.stem)
def test_no_code_cell_shows_a_return_value_by_accident(path):
    """A code cell whose last statement is an expression shows its value in the book (the sweeps chapter
    once printed ``PosixPath('figures/sweeps_break_even.svg')``): such a cell ends in a ``;`` or in
    a statement, except a display call meant to show (``glue_table`` renders nothing)."""
    import ast
    for cell in jupytext.read(path).cells:
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        tree = ast.parse(cell.source)
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr) and not cell.source.rstrip().endswith(";"):
            call = last.value.func if isinstance(last.value, ast.Call) else None
            name = getattr(call, "id", getattr(call, "attr", ""))
            assert name not in {"save_data", "save_figure", "glue_figure", "write_text", "mkdir"}, (
                f"{path.name}: a code cell ends in {name}(...), whose return value the book shows: end it with ';'")


@pytest.mark.notebook
def test_an_executed_notebook_shows_its_chapter_with_values_and_figures(tmp_path):
    # the README's papermill run gave a notebook of raw {glue:text} placeholders and no figure: its last cell
    # (removed from the book) now shows the chapter's prose with the run's values, and its figures
    import json
    execute_papermill("fig6_penalty", tmp_path, sigmas=[0.6, 0.9])
    last = json.loads((tmp_path / "fig6_penalty.ipynb").read_text())["cells"][-1]
    assert last["metadata"]["tags"] == ["remove-cell"]
    kinds = [k for o in last["outputs"] for k in o.get("data", {})]
    text = "".join("".join(o["data"]["text/markdown"]) for o in last["outputs"] if "text/markdown" in o.get("data", {}))
    assert "image/png" in kinds and text.startswith("# ")
    assert "{glue" not in text and "not glued in this run" not in text and "{numref}" not in text


def test_a_chapter_s_markdown_is_rendered_with_the_run_s_values():
    from afdlib.report import readable
    readable.forget()
    readable._GLUED.update({"n": 3, "x": 0.12345, "tab": type("M", (), {"data": "| a |\n| --- |\n| 1 |"})()})
    source = ("A {glue:text}`n` and {glue:text}`x:.2f` see {numref}`fig-b` and {numref}`tab-a`, "
              "{numref}`Fig. %s <fig-b>`, {doc}`the intro <intro>` {cite}`paper` {glue:text}`missing`\n"
              ":::{table} Caption\n:name: tab-a\n\n```{glue:md} tab\n:format: myst\n```\n:::\n"
              "```{glue:figure} fig\n:name: fig-b\n\nIts caption.\n```\n")
    parts = readable.render_markdown(source)
    text = "\n".join(v for k, v in parts if k == "markdown")
    # by hand: the table comes first in the chapter (Table 1), the figure is Figure 1; x to two decimals
    assert text.startswith("A 3 and 0.12 see Figure 1 and Table 1, Fig. 1, the intro [paper] [missing: not glued")
    assert "**Caption**" in text and "| a |" in text and "*Its caption.*" in text and ":name:" not in text
    readable.forget()
