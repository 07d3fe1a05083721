"""afd sweep: every point of the Dataset is the single-point library call for the same settings; tokens/s
never falls as the scale-out bandwidth grows; a run against an existing Dask scheduler; bad specs are one
line and status 2."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import yaml

from afdlib.cli import main
from afdlib.decode.deployment import AFDDeployment, EPDeployment, decode_step
from afdlib.decode.search import best_afd, best_ep
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.errors import AfdError
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget, Precision
from afdlib.sweep.grid import dataset, index_points
from afdlib.sweep.spec import parse

GIVEN = {"model": "deepseek-v3", "hardware": "h800", "design": "both",
         "vary": {"scale_out_gb_per_s": {"from": 10, "to": 400, "num": 6, "log": True},
                  "hbm_tb_per_s": [2.0, 3.35, 8.0], "slo_ms": [30, 50, 100], "n_ffn": [1, 2, 4],
                  "moe_intermediate_size": [1024, 2048, 4096]},
         "fixed": {"context": 4096, "n_attn": 2, "ep_size": 64, "redundant": 32}}
"""Given deployments (as `afd throughput`): 486 points, each design one step search per point."""


def _computed(doc, chunk=None):
    spec = parse(doc)
    return spec, dataset(spec, chunk).compute(scheduler="synchronous")


@pytest.fixture(scope="module", params=["bisection", "narrowed"])
def given(request):
    """Small chunks (many blocks, the scalar axes one value each), their batches found by the library's
    bisection or, as chunks of 2,048 points and more do, by afdlib.decode.batch.largest."""
    import afdlib.decode.batch as batch
    before = batch.NARROWED_FROM
    batch.NARROWED_FROM = 1 if request.param == "narrowed" else 10 ** 9
    try:
        return _computed(GIVEN, chunk=50)
    finally:
        batch.NARROWED_FROM = before


def _single(model, hw, deployment, point):
    """`afd throughput`'s path for one point: decode_step at the largest batch (None where none fits)."""
    budget = Budget(slo_s=point["slo_ms"] / 1e3, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
    try:
        return decode_step(model, deployment, 4096.0, budget, Precision(), Assumptions())
    except AfdError:
        return None


def test_every_sampled_point_equals_the_single_point_call(given):
    spec, ds = given
    base_model, base_hw = load_model("deepseek-v3", "reference"), load_hardware("h800", "datasheet")
    assert base_hw.efficiency.scale_out == 0.8 and base_hw.efficiency.hbm == 0.8  # the datasheet profile's factors
    checked = 0
    for idx in index_points(spec, 25, seed=1):
        point = {k: float(v[i]) for (k, v), i in zip(spec.axes.items(), idx)}
        # the catalogue's units and profile: 50 GB/s of scale-out is 40e9 B/s sustained, as the loader makes it
        hw = replace(base_hw, scale_out_bytes_per_s=point["scale_out_gb_per_s"] * 1e9 * 0.8,
                     hbm_bytes_per_s=point["hbm_tb_per_s"] * 1e12 * 0.8)
        model = base_model.with_overrides(moe_intermediate_size=int(point["moe_intermediate_size"]))
        sel = dict(zip(spec.axes, idx))
        for design, d in (("ep", EPDeployment(hw, 64, 32)), ("afd", AFDDeployment.of(hw, 2, int(point["n_ffn"])))):
            st = _single(model, hw, d, point)
            got = ds.sel(design=design).isel(sel)
            if st is None:
                assert not bool(got.feasible) and float(got.tokens_per_s_per_gpu) == 0
                continue
            checked += 1
            assert bool(got.feasible)
            assert float(got.tokens_per_s_per_gpu) == pytest.approx(float(st.tokens_per_s_per_gpu), rel=1e-12)
            assert float(got.tpot_ms) == pytest.approx(float(st.tpot_s) * 1e3, rel=1e-12)
            assert float(got.batch_per_gpu) == float(st.requests)
        ratio = float(ds.afd_over_ep.isel(sel))
        e, a = (float(ds.tokens_per_s_per_gpu.sel(design=x).isel(sel)) for x in ("ep", "afd"))
        assert (np.isnan(ratio) and e == 0) or ratio == pytest.approx(a / e)
    assert checked >= 25   # most sampled points are feasible: the test compares numbers, not zeros


def test_tokens_never_fall_as_scale_out_bandwidth_grows(given):
    _, ds = given
    t = ds.tokens_per_s_per_gpu.transpose("scale_out_gb_per_s", ...).values
    assert np.all(np.diff(t, axis=0) >= -1e-9 * np.abs(t[1:]))
    assert np.any(np.diff(t, axis=0) > 0)   # and the bandwidth matters somewhere


def test_coordinates_carry_units_and_the_dataset_its_spec(given):
    _, ds = given
    assert ds.scale_out_gb_per_s.attrs["units"] == "GB/s" and ds.slo_ms.attrs["units"] == "ms"
    assert ds.n_ffn.attrs["units"] == "nodes" and ds.tpot_ms.attrs["units"] == "ms"
    assert list(ds.design.values) == ["ep", "afd"] and ds.attrs["model"] == "deepseek-v3"
    assert np.allclose(ds.scale_out_gb_per_s.values[[0, -1]], [10, 400])   # the range's ends, geometric


def test_searched_points_equal_the_searches():
    """Without a deployment, each point is the best EP and the best AFD (`afd advise`'s searches)."""
    doc = {"model": "deepseek-v3", "hardware": "h800", "design": "both",
           "vary": {"scale_out_gb_per_s": [25, 100], "experts_per_token": [4, 8]}, "fixed": {"slo_ms": 50}}
    spec, ds = _computed(doc)
    base_model, base_hw = load_model("deepseek-v3", "reference"), load_hardware("h800", "datasheet")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
    for i, j in ((0, 0), (1, 1)):
        hw = replace(base_hw, scale_out_bytes_per_s=[25, 100][i] * 0.8e9)
        model = base_model.with_overrides(experts_per_token=[4, 8][j])
        ep, afd = best_ep(model, hw, budget, 4096.0), best_afd(model, hw, hw, budget, 4096.0)
        for name, best in (("ep", ep), ("afd", afd)):
            got = ds.sel(design=name).isel(scale_out_gb_per_s=i, experts_per_token=j)
            assert float(got.tokens_per_s_per_gpu) == pytest.approx(float(best.tokens_per_s_per_gpu), rel=1e-12)
            assert float(got.batch_per_gpu) == float(best.deployment.requests)
        assert int(ds.ep_ep_size.isel(scale_out_gb_per_s=i, experts_per_token=j)) == int(ep.deployment.ep_size)
        assert int(ds.afd_n_ffn.isel(scale_out_gb_per_s=i, experts_per_token=j)) == int(afd.deployment.ffn.nodes)


def _spec_file(tmp_path, doc):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


SMALL = {"model": "deepseek-v3", "hardware": "h800", "design": "afd",
         "vary": {"scale_out_gb_per_s": [25, 50, 100], "n_ffn": [1, 2]}, "fixed": {"n_attn": 2}}


def test_a_run_against_an_existing_scheduler(tmp_path, capsys, monkeypatch):
    import xarray as xr
    from distributed import LocalCluster

    import afdlib.sweep.cluster as sweep_cluster
    monkeypatch.setattr(sweep_cluster, "SAY_GRAPH_TASKS", 3)   # a graph of 3 blocks here (6 points in 2s)
    spec_path = _spec_file(tmp_path, SMALL)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        out = tmp_path / "r.zarr"
        assert main(["sweep", spec_path, "--out", str(out), "--scheduler", cluster.scheduler_address,
                     "--chunk", "2", "--json"]) == 0
    captured = capsys.readouterr()
    doc = yaml.safe_load(captured.out)
    assert doc["points"] == 6 and doc["workers"] == 1
    assert "100% Completed" in captured.err     # the progress bar, on stderr
    assert "afd sweep: building the task graph of 3 blocks" in captured.err   # (seconds before it, at 10^5 blocks)
    got = xr.open_zarr(out).load()
    _, expected = _computed(SMALL)
    assert np.array_equal(got.tokens_per_s_per_gpu.values, expected.tokens_per_s_per_gpu.values)
    assert got.scale_out_gb_per_s.attrs["units"] == "GB/s"


@pytest.mark.parametrize("doc, words", [
    ({**SMALL, "vary": {"scale_out_gbps": [1, 2]}}, "unknown field 'scale_out_gbps'"),
    ({**SMALL, "vary": {"scale_out_gb_per_s": []}}, "the axis scale_out_gb_per_s is empty"),
    ({**SMALL, "vary": {"scale_out_gb_per_s": [10, "fast"]}}, "scale_out_gb_per_s must be a number, got 'fast'"),
    ({**SMALL, "vary": {"slo_ms": {"from": 10, "to": 50}}}, "needs from, to and num"),
    ({**SMALL, "vary": {"n_ffn": [1.5]}}, "n_ffn must be a whole number"),
    ({**SMALL, "vary": {"ep_size": [64]}}, "ep_size is a EP deployment field; design afd does not use it"),
    ({**SMALL, "vary": {"experts_per_token": [8, 300]}}, "experts_per_token exceeds routed_experts"),
    ({**SMALL, "colour": "red"}, "unknown spec key(s) ['colour']"),
    ({**SMALL, "vary": {}}, "at least one axis"),
    ({**SMALL, "model": "nope"}, "unknown model 'nope'"),
    ({**SMALL, "fixed": {"n_attn": 2, "batch_per_gpu": 0}}, "batch_per_gpu must be an integer"),
])
def test_bad_specs_are_one_line_and_status_2(tmp_path, capsys, doc, words):
    code = main(["sweep", _spec_file(tmp_path, doc), "--out", str(tmp_path / "x.zarr")])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1, err
    assert not (tmp_path / "x.zarr").exists()


def test_workers_with_a_scheduler_and_an_existing_result_are_refused(tmp_path, capsys):
    spec_path = _spec_file(tmp_path, SMALL)
    assert main(["sweep", spec_path, "--out", str(tmp_path / "a.zarr"), "--workers", "2",
                 "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "not both" in capsys.readouterr().err
    (tmp_path / "b.zarr").mkdir()
    assert main(["sweep", spec_path, "--out", str(tmp_path / "b.zarr")]) == 2
    assert "exists" in capsys.readouterr().err
    import xarray as xr
    if not set(xr.backends.list_engines()) & {"netcdf4", "h5netcdf", "scipy"}:
        assert main(["sweep", spec_path, "--out", str(tmp_path / "c.nc")]) == 2
        assert "no NetCDF engine" in capsys.readouterr().err


def test_chunks_hold_one_value_of_a_code_path_axis():
    from afdlib.sweep.grid import chunks
    spec = parse({**GIVEN, "vary": {**GIVEN["vary"], "kernels": ["calibrated", "datasheet"]}})
    layout = chunks(spec, 100)
    assert layout[-1] == (1, 1)                       # kernels: one profile per block
    assert all(max(c) * 1 <= 100 for c in layout)     # and no block over the chunk
    assert int(np.prod([max(c) for c in layout])) <= 100


def test_the_issue_spec_on_a_local_cluster_of_processes(tmp_path, capsys):
    """The issue's spec (design afd, N_F varied, N_A searched over 1..16 nodes), shrunk, on a
    LocalCluster of one worker process; N_A found equals the best of the given deployments."""
    import xarray as xr
    doc = {"model": "deepseek-v3", "hardware": "h800", "design": "afd",
           "vary": {"scale_out_gb_per_s": {"from": 10, "to": 400, "num": 3, "log": True},
                    "hbm_tb_per_s": {"from": 2, "to": 8, "num": 2}, "slo_ms": [50, 100], "n_ffn": [2, 4]},
           "fixed": {"context": 4096}}
    out = tmp_path / "issue.zarr"
    assert main(["sweep", _spec_file(tmp_path, doc), "--out", str(out), "--workers", "1"]) == 0
    assert "24 points" in capsys.readouterr().out
    assert not list(tmp_path.glob(".issue.partial-*"))      # written beside, renamed to --out when whole
    assert xr.open_zarr(out).attrs["complete"] == 1
    got = xr.open_zarr(out).isel(scale_out_gb_per_s=2, hbm_tb_per_s=1, slo_ms=0, n_ffn=1).load()
    hw = replace(load_hardware("h800", "datasheet"), scale_out_bytes_per_s=400 * 0.8e9, hbm_bytes_per_s=8 * 0.8e12)
    rates = [_single(load_model("deepseek-v3", "reference"), hw, AFDDeployment.of(hw, na, 4), {"slo_ms": 50})
             for na in range(1, 17)]
    best = max(range(16), key=lambda i: -1 if rates[i] is None else float(rates[i].tokens_per_s_per_gpu))
    assert int(got.n_attn) == best + 1
    assert float(got.tokens_per_s_per_gpu) == pytest.approx(float(rates[best].tokens_per_s_per_gpu), rel=1e-12)


def test_crossing_reads_the_overtake_and_the_retake():
    """Hand-made ratios along a bandwidth axis of 10, 20, 40, 80: AFD ahead from 20 to 40 (overtake
    between 10 and 20, retake between 40 and 80), from the bottom, never, and up to the top."""
    import xarray as xr

    from afdlib.sweep.readings import crossing
    r = xr.DataArray([[0.5, 2.0, 2.0, 0.5], [1.5, 1.2, 0.9, 0.8], [0.5, 0.6, 0.7, 0.9], [0.5, 0.8, 1.0, 1.1]],
                     dims=["case", "bw"], coords={"bw": [10.0, 20.0, 40.0, 80.0]})
    c = crossing(r, "bw")
    # the break-even's rule (afdlib.decision.threshold.flips), linear in the ratio and in log bandwidth:
    # 0.5 -> 2.0 passes 1 a third of the way, 10 x 2^(1/3); 2.0 -> 0.5 two thirds of the way, 40 x 2^(2/3)
    assert c.overtake[0] == pytest.approx(10 * 2 ** (1 / 3)) and c.retake[0] == pytest.approx(40 * 2 ** (2 / 3))
    assert c.overtake[1] == 10 and c.where[1] == "from the bottom"
    # 1.2 -> 0.9: (1 - 1.2) / (0.9 - 1.2) = 2/3 of the way from 20 to 40 in log bandwidth
    assert c.retake[1] == pytest.approx(20 * 2 ** (2 / 3))
    assert np.isnan(c.overtake[2]) and c.where[2] == "never"
    # 1.0 at 40 is not above 1: AFD ahead from 80 on, the crossing 0 of the way from 40; still ahead at 80
    assert c.overtake[3] == pytest.approx(40) and np.isnan(c.retake[3])


def test_family_axes_are_the_sweet_spot_maps_members():
    """expert_width and sparsity give the members of the model's family at the same total routed
    parameters (with_shape, the paper's method): M = 4096 halves E and K (256 -> 128, 8 -> 4), E / K = 16
    then sets K = 8 of the 128; the point is the best EP of that member."""
    from afdlib.decision.sweetspot import with_shape
    doc = {"model": "deepseek-v3", "hardware": "h800", "design": "ep",
           "vary": {"expert_width": [4096], "sparsity": [16], "scale_out_gb_per_s": [50]}}
    _, ds = _computed(doc)
    assert tuple(int(ds[k].squeeze()) for k in ("routed_experts", "experts_per_token", "moe_intermediate_size")) == (128, 8, 4096)
    base = load_model("deepseek-v3", "reference")
    member = with_shape(with_shape(base, "moe_intermediate_size", 4096), "sparsity", 16)
    best = best_ep(member, load_hardware("h800", "datasheet"), Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S),
                   4096.0)
    assert float(ds.tokens_per_s_per_gpu.squeeze()) == pytest.approx(float(best.tokens_per_s_per_gpu), rel=1e-12)
    with pytest.raises(AfdError, match="give it without experts_per_token"):
        parse({**doc, "fixed": {"experts_per_token": 4}})


def test_the_narrowed_batch_search_finds_the_largest_feasible_batch():
    """afdlib.decode.batch.largest against a brute-force scan of 1..hi on made-up steps: TPOT a + s b + q b^2
    (flat, linear, convex; with a kink where a tile fills), memory w + k b against a capacity; points
    where one request is over the SLO or over memory give 0, points feasible at the bound give it; the
    search below the memory's own bound (afdlib.decode.batch.memory_bound) finds the same batches."""
    from types import SimpleNamespace

    from afdlib.decode.batch import largest
    rng = np.random.default_rng(3)
    n, hi = 2000, 1024
    a, s, q = rng.uniform(5e-3, 60e-3, n), 10 ** rng.uniform(-7, -3, n), 10 ** rng.uniform(-10, -6, n) * (rng.random(n) < 0.5)
    w, k = rng.uniform(0, 60e9, n), 10 ** rng.uniform(5, 9, n)
    slo = 0.05

    def step(b, at):
        t = a[at] + s[at] * b + q[at] * b ** 2 + np.where(b > 64, 1e-3, 0.0)
        mem = w[at] + k[at] * b
        return SimpleNamespace(tpot_s=t, fits_memory=mem <= 72e9, tokens_per_s_per_gpu=b / t, memory_bytes=mem,
                               requests=b, memory=(SimpleNamespace(capacity_bytes=72e9, weights_bytes=w[at]),))
    got, tokens, tpot = largest(step, slo, n, hi, "ep")
    b = np.arange(1, hi + 1, dtype=float)[:, None]
    every = step(b, np.arange(n))
    ok = every.fits_memory & (every.tpot_s <= slo)
    expected = np.where(ok.any(axis=0), hi - np.argmax(ok[::-1], axis=0), 0)
    assert np.all(ok.cumsum(axis=0)[-1] == expected)          # the made-up steps are monotone: 1..n feasible
    assert np.array_equal(got, expected)
    assert {0, hi} <= set(got.astype(int)) and len(set(got)) > 100   # none, the bound, and many between
    at = np.maximum(got, 1.0)
    assert np.array_equal(tpot, step(at, np.arange(n)).tpot_s) and np.array_equal(tokens, at / tpot)


@pytest.mark.parametrize("design", ["ep", "afd"])
def test_the_memory_bound_is_one_above_the_largest_batch_that_fits(design):
    """memory_bound from the step at one request: the cache's pool fits floor((capacity - weights) / per
    request) requests and not two more (EP32 and 2A2F of DeepSeek-V3 on H800 at 4K and 32K)."""
    from afdlib.decode.batch import memory_bound
    from afdlib.decode.deployment import AFDDeployment, EPDeployment, Pool, decode_step
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget
    ds, h800 = load_model("deepseek-v3"), load_hardware("h800")
    for context in (4096.0, 32768.0):
        def at(requests, context=context):
            d = (EPDeployment(h800, 32, 0, 2, "low-latency", requests) if design == "ep"
                 else AFDDeployment(Pool(h800, 2), Pool(h800, 2), 3, requests))
            return decode_step(ds, d, context, Budget(slo_s=10.0))
        bound = float(memory_bound(at(1.0), design))
        assert 1 < bound < 1e5
        assert bool(at(bound - 1).fits_memory) and not bool(at(bound + 1).fits_memory)


@pytest.mark.parametrize("narrowed", [False, True])
def test_batches_past_the_first_bound_are_searched_to_the_library_s_maximum(monkeypatch, narrowed):
    """The batch search goes to 1,024 requests first and searches the points that reach it again up to
    the library's maximum: a long SLO with a short context and a large HBM gives batches of about 4,000,
    each decode_step's own."""
    import afdlib.decode.batch as batch
    from afdlib.decode.batch import FIRST_BOUND
    monkeypatch.setattr(batch, "NARROWED_FROM", 1 if narrowed else 10 ** 9)
    doc = {"model": "deepseek-v3", "hardware": "h800", "design": "ep", "vary": {"context": [16, 256], "slo_ms": [200, 1000]},
           "fixed": {"ep_size": 128, "redundant": 32, "hbm_gb": 400}}
    _, ds = _computed(doc)
    batches = ds.batch_per_gpu.values
    assert batches.min() < FIRST_BOUND < batches.max()
    model, base = load_model("deepseek-v3", "reference"), load_hardware("h800", "datasheet")
    hw = replace(base, hbm_bytes=400e9)
    for i, ctx in enumerate((16.0, 256.0)):
        for j, slo in enumerate((0.2, 1.0)):
            st = decode_step(model, EPDeployment(hw, 128, 32), ctx, Budget(slo_s=slo, l_accept=1.0, t_gap_s=DECODE_T_GAP_S))
            assert batches[i, j] == st.requests
            assert float(ds.tokens_per_s_per_gpu[i, j]) == pytest.approx(float(st.tokens_per_s_per_gpu), rel=1e-12)


def test_the_surface_s_default_axes_are_the_reference_chapter_s_and_follow_the_pair():
    """The sweeps chapter's axes derived from its pair: for DeepSeek-V3 (M = 2048, E / K = 256 / 8 = 32)
    on H800 (a 50 GB/s NIC, datasheet) the reference book's M 512 .. 8192, E / K 8 .. 64 and 12.5 ..
    800 GB/s of scale-out; on GB200, a Superpod, its 900 GB/s scale-up fabric instead."""
    from afdlib.sweep.study import bandwidth_axis, bandwidth_range, family_axes
    h800, gb200 = load_hardware("h800", "datasheet"), load_hardware("gb200", "datasheet")
    assert family_axes(load_model("deepseek-v3", "reference")) == ([512, 1024, 2048, 4096, 8192], [8, 16, 32, 64])
    assert family_axes(load_model("deepseek-v3", "reference"), [1, 2], [3, 4]) == ([1, 2], [3, 4])   # as given
    assert bandwidth_axis(h800) == "scale_out_gb_per_s" and bandwidth_axis(gb200) == "scale_up_gb_per_s"
    assert bandwidth_range(h800, "scale_out_gb_per_s") == {"from": 12.5, "to": 800.0, "num": 25, "log": True}   # 2^(1/4) apart: 64x in 24 steps
    assert bandwidth_range(gb200, "scale_up_gb_per_s")["from"] == 225.0


def test_crossing_counts_the_stretches_afd_leads_over():
    """A ratio that leads, dips below 1 at a swept point and leads again has two stretches (its band
    read from the ends hides the dip); one that leads once has one; one that never leads none."""
    import xarray as xr

    from afdlib.sweep.readings import crossing
    r = xr.DataArray([[0.9, 1.1, 0.95, 1.05, 0.8], [1.1, 1.2, 0.9, 0.8, 0.7], [0.9, 0.8, 0.7, 0.6, 0.5]],
                     dims=("cell", "bw"), coords={"bw": [10.0, 20, 40, 80, 160]})
    c = crossing(r, "bw")
    assert c.stretches.tolist() == [2, 1, 0]
    assert 10 < c.overtake[0] < 20 and 80 < c.retake[0] < 160   # the band's ends span the dip


def test_the_peak_is_worded_for_a_lead_or_none():
    from afdlib.sweep.study import peak_words
    assert peak_words(1.05, 0.47) == "A lead of 5% is not a decision: at that peak P(AFD better) is 0.47"
    # the own-pair book's "a lead of a few percent" where the ratio peaks at 0.96
    assert peak_words(0.96, 0.2) == "Even at its peak AFD does not lead (AFD / EP 0.96): there P(AFD better) is 0.20"


def test_a_sweep_refuses_what_it_cannot_finish_in_one_line(tmp_path, capsys):
    """Before any worker starts: a scheduler that is no address, an --out whose folder does not exist, a
    grid whose task graph would hold more than MAX_TASKS blocks (10^12 points took minutes to build)."""
    small = {"model": "deepseek-v3", "hardware": "h800", "design": "ep", "vary": {"slo_ms": [50, 100]},
             "fixed": {"ep_size": 64, "context": 4096}}
    huge = {**small, "vary": {k: {"from": 1, "to": 2, "num": 1000} for k in ("scale_out_gb_per_s", "slo_ms", "hbm_tb_per_s", "hbm_gb")}}
    for doc, extra, message in (
            (small, ["--out", str(tmp_path / "a.zarr"), "--scheduler", "garbage"], "is not a Dask scheduler address"),
            # Dask's own answer to these is a TypeError traceback (no certificates; no UCX)
            (small, ["--out", str(tmp_path / "a.zarr"), "--scheduler", "tls://127.0.0.1:1"], "tls:// needs certificates"),
            (small, ["--out", str(tmp_path / "a.zarr"), "--scheduler", "ucx://127.0.0.1:1"], "ucx:// needs UCX"),
            (small, ["--out", str(tmp_path / "no" / "a.zarr")], "does not exist"),
            # a Zarr folder named like a table; and AFD's what-if evaluated on an EP grid, where it changes nothing
            (small, ["--out", str(tmp_path / "r.csv")], "a sweep writes Zarr (.zarr) or NetCDF (.nc), not .csv"),
            ({**small, "vary": {"afd_overlap": [0.0, 1.0]}}, ["--out", str(tmp_path / "d.zarr")],
             "afd_overlap is AFD's overlap what-if; design ep does not use it"),
            # a misspelt name past an axis' first value failed in a worker, as a traceback
            ({**small, "vary": {**small["vary"], "kernels": ["calibrated", "nope"]}}, ["--out", str(tmp_path / "c.zarr")],
             "kernel profile must be one of calibrated, datasheet, roofline, got 'nope'"),
            # /sys refuses a new file even to root, whom os.access would have let through
            (small, ["--out", "/sys/a.zarr"], "its folder /sys is not writable"),
            (huge, ["--out", str(tmp_path / "b.zarr")], "tasks, more than the 2e+05 a sweep builds; give --chunk")):
        assert main(["sweep", _spec_file(tmp_path, doc), *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not list(tmp_path.glob("*.zarr")) and not list(tmp_path.glob(".*partial*"))


def _running_sweep(tmp_path):
    """(process, --out) of a long sweep in a session of its own, once its partial store's group is written
    (its folder alone, a moment earlier, is no dataset for a reader either)."""
    import subprocess
    import sys
    import time
    doc = {"model": "deepseek-v3", "hardware": "h800", "design": "ep",
           "vary": {"slo_ms": {"from": 20, "to": 200, "num": 400}, "hbm_tb_per_s": {"from": 2, "to": 8, "num": 50}},
           "fixed": {"ep_size": 64, "context": 4096}}
    out = tmp_path / "grid.zarr"
    proc = subprocess.Popen([sys.executable, "-m", "afdlib.cli", "sweep", _spec_file(tmp_path, doc), "--out", str(out),
                             "--workers", "1", "--chunk", "50"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (list(tmp_path.glob(".grid.partial-*/zarr.json")) or list(tmp_path.glob(".grid.partial-*/.zattrs"))) \
            and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, proc.stderr.read().decode()           # still running: the store is being written
    return proc, out


def _no_process_left(session: int) -> bool:
    """No process of the sweep's session left within 30 s (its workers end with it)."""
    import subprocess
    import time
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not subprocess.run(["pgrep", "-s", str(session)], capture_output=True, text=True).stdout.split():
            return True
        time.sleep(0.5)
    return False


@pytest.mark.parametrize("signame", ["SIGINT", "SIGHUP", "SIGTERM"])
def test_an_interrupted_sweep_is_one_line_and_leaves_nothing(tmp_path, signame):
    """Ctrl-C (SIGINT), a hangup (SIGHUP) or a kill (SIGTERM) mid-sweep, to every process of the group as a
    terminal sends them: the sweep says one line ('afd: interrupted', on a line of its own below the
    progress bar's), no process prints a traceback (each worker printed its KeyboardInterrupt before, and
    under SIGHUP multiprocessing's resource tracker a KeyError per shared-memory name), the status is
    128 + the signal's number, --out does not exist, the hidden .partial store is removed, and no worker
    outlives the sweep."""
    import os
    import signal
    sig = getattr(signal, signame)
    proc, out = _running_sweep(tmp_path)
    os.killpg(proc.pid, sig)
    err = proc.communicate(timeout=60)[1].decode()
    assert "Traceback" not in err and (err == "afd: interrupted\n" or err.endswith("\nafd: interrupted\n")), err
    lines = [x for x in err.replace("\r", "\n").split("\n") if x.strip() and "Completed" not in x]
    assert [x.strip("\x1b[2K") for x in lines] == ["afd: interrupted"], err
    assert proc.returncode == 128 + int(sig) and not out.exists() and not list(tmp_path.glob(".grid.partial-*"))
    assert _no_process_left(proc.pid)


def test_a_killed_sweep_leaves_nothing_at_its_published_path(tmp_path):
    """kill -9 mid-sweep (no cleanup can run): --out does not exist, so no reader opens a store of NaN as
    the result; what is left is the hidden .partial store beside it, marked incomplete and removed by the
    next sweep into that --out; the workers end with the sweep."""
    import os
    import signal
    proc, out = _running_sweep(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert not out.exists()
    left_behind = [p for p in tmp_path.iterdir() if p.suffix == ".zarr"]
    assert [p.name.startswith(".grid.partial-") for p in left_behind] == [True]
    import xarray as xr       # and the store itself says it is incomplete (a finished one says complete 1)
    assert xr.open_zarr(left_behind[0], consolidated=False).attrs["complete"] == 0   # (written at the end)
    assert _no_process_left(proc.pid)
    # the next sweep into that --out removes it (its process is gone), not a running sweep's (this one's pid)
    from afdlib.sweep.cluster import _remove_stale
    running = tmp_path / f".grid.partial-{os.getpid()}.zarr"
    running.mkdir()
    _remove_stale(tmp_path, out)
    assert not left_behind[0].exists() and running.exists()


def test_a_spec_holds_its_values_to_the_commands_ranges():
    # NaN and infinity in a count were tracebacks (round()); values the commands refuse were grid points
    # written as infeasible: a context of 1e300 (--context stops at 1e7), 10^9 layers (files stop at 2^24)
    import re

    from afdlib.sweep.spec import axis_values
    for name, value, message in (("n_ffn", [float("nan")], "n_ffn must be finite"),
                                 ("n_ffn", {"from": 1, "to": float("inf"), "num": 3}, "n_ffn must be finite"),
                                 ("context", [4096, 1e300], "context must be in [0, 1e+07]"),
                                 ("num_layers", [61, 10 ** 9], "num_layers must be an integer in 1..16777216"),
                                 ("ep_size", [16, 10 ** 7], "ep_size must be an integer in 1..1000000"),
                                 ("slo_ms", [0.0], "slo_ms must be in (0, 1e+06]")):
        with pytest.raises(AfdError, match=re.escape(message)):
            axis_values(name, value)
    assert list(axis_values("context", [0, 1e7])) == [0, 1e7]


def test_a_scheduler_address_that_never_speaks_dask_is_one_line(tmp_path, monkeypatch, capsys):
    # an HTTP server on the port held the client's own 10 s timeout off for minutes; another host's bytes
    # were read as a 3 EiB message (a MemoryError traceback): a listener that accepts and stays silent
    import socket
    import threading

    import afdlib.sweep.cluster as cluster
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()
    monkeypatch.setattr(cluster, "CONNECT_S", 2)
    port = server.getsockname()[1]
    assert main(["sweep", _spec_file(tmp_path, SMALL), "--out", str(tmp_path / "a.zarr"),
                 "--scheduler", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err == f"afd: error: no Dask scheduler answers at tcp://127.0.0.1:{port} within 2 s (is it a Dask scheduler's address?)\n"
    assert not list(tmp_path.glob("*.zarr")) and not list(tmp_path.glob(".*partial*"))
    server.close()


def test_more_workers_than_the_machine_runs_are_refused(tmp_path, monkeypatch, capsys):
    # --workers 1024 would start 1024 processes of about 115 MB (32 on 2 cores took 42 s to start)
    import os
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert main(["sweep", _spec_file(tmp_path, SMALL), "--out", str(tmp_path / "a.zarr"), "--workers", "5"]) == 2
    assert "--workers 5 on 2 cores: at most 4" in capsys.readouterr().err


@pytest.mark.parametrize("change, message", [
    ({"vary": {"moe_layers": [57, 58]}, "fixed": {"ep_size": 64, "num_layers": 61}},
     r"at num_layers 61, moe_layers 57: model 'deepseek-v3': moe_layers \(57\) \+ dense_layers \(3\) fall short"),
    ({"vary": {"moe_layers": [58, 61]}, "fixed": {"ep_size": 64, "num_layers": 61}},
     r"at num_layers 61, moe_layers 61: model 'deepseek-v3': moe_layers \(61\) \+ dense_layers \(3\) exceed"),
    ({"vary": {"gpus_per_node": [3, 8]}, "design": "afd", "fixed": {"n_attn": 2, "n_ffn": 2}},
     "at gpus_per_node 3: hardware 'h800': a scale-up domain of 8 GPUs neither holds whole 3-GPU nodes"),
    ({"vary": {"vocab_size": [0, 1000]}}, "vocab_size must be an integer in 1.."),
    ({"vary": {"sigma": [0.001, 0.5]}}, r"sigma must be in \[1/64, 1\]"),
    ({"vary": {"ep_size": [64, 100000]}, "fixed": {}}, "ep_size 100000 exceeds the routed \\+ redundant experts"),
])
def test_a_grid_point_the_commands_refuse_is_refused_before_the_sweep_runs(change, message):
    # each was a feasible or merely infeasible point: a model whose layers do not add up, a node size the
    # scale-up domain splits unevenly, no vocabulary, a sigma no placement over 64 GPUs reaches, an EP group
    # larger than the experts (the CLI refuses each in one line)
    from afdlib.sweep.evaluate import check_grid
    from afdlib.sweep.spec import parse
    doc = {"model": "deepseek-v3", "hardware": "h800", "design": "ep", "fixed": {"ep_size": 64}, **change}
    with pytest.raises(AfdError, match=message):
        check_grid(parse(doc))
    check_grid(parse({"model": "deepseek-v3", "hardware": "h800", "design": "ep", "fixed": {"ep_size": 64},
                      "vary": {"moe_layers": [40, 58], "sigma": [0.5, 1.0]}}))   # in bounds: 43 and 61 layers


def test_a_spec_naming_a_hardware_profile_for_a_flat_device_file_is_refused(tmp_path):
    from afdlib.sweep.evaluate import check_grid
    from afdlib.sweep.spec import parse
    from tests.test_hardening import FLAT_DEVICE
    path = tmp_path / "flat.yaml"
    path.write_text(FLAT_DEVICE)
    doc = {"model": "deepseek-v3", "hardware": str(path), "design": "ep", "fixed": {"ep_size": 8},
           "vary": {"hbm_tb_per_s": [3, 4]}}
    check_grid(parse(doc))
    with pytest.raises(AfdError, match="hw_profile paper: .* gives one flat set of figures"):
        check_grid(parse({**doc, "hw_profile": "paper"}))


def test_an_even_range_of_a_whole_number_field_must_step_by_whole_numbers():
    # ep_size from 8 to 64 in 4 values was 8, 27, 45, 64: 26.67 and 45.33 rounded without a word
    from afdlib.sweep.spec import axis_values
    with pytest.raises(AfdError, match="steps by 18.67, between whole numbers"):
        axis_values("ep_size", {"from": 8, "to": 64, "num": 4})
    assert axis_values("ep_size", {"from": 8, "to": 64, "num": 8}).tolist() == [8, 16, 24, 32, 40, 48, 56, 64]
    # a geometric range of counts is rounded, as documented (1, 5.6, 31.6, 177.8, 1000)
    assert axis_values("batch_per_gpu", {"from": 1, "to": 1000, "num": 5, "log": True}).tolist() == [1, 6, 32, 178, 1000]


@pytest.mark.parametrize("change, message", [
    ({"fixed": {"ep_size": 144}, "vary": {"ep_micro_batches": [1, 3]}}, "ep_micro_batches 3: EP runs 1 or 2"),
    ({"fixed": {"ep_size": 144, "ep_micro_batches": 1}, "vary": {"ep_overlap": [0, 1]}},
     "ep_overlap sets how much .* at ep_micro_batches 1 there is none"),
    ({"fixed": {"ep_size": 144}, "vary": {"sparsity": [0.5, 1]}}, "sparsity 0.5: E / K is at least 1"),
    ({"fixed": {"ep_size": 144}, "vary": {"gpus_per_node": [4, 8]}}, "gpus_per_node sets an AFD node")])
def test_a_grid_of_forms_the_commands_refuse_is_refused(change, message):
    # ep_micro_batches 3 got a confident answer; overlaps at one micro-batch and K > E were flat axes
    from afdlib.sweep.evaluate import check_grid
    from afdlib.sweep.spec import parse
    with pytest.raises(AfdError, match=message):
        check_grid(parse({"model": "deepseek-v3", "hardware": "h800", "design": "ep", **change}))


def test_a_text_axis_reads_names_as_the_options_do():
    # kernels: [Roofline] was refused while weights: [FP8] was taken, and weights fp4 beside nvfp4 (one type) ran twice
    from afdlib.sweep.spec import axis_values
    assert axis_values("kernels", ["Roofline", "calibrated"]).tolist() == ["roofline", "calibrated"]
    with pytest.raises(AfdError, match="the axis weights repeats a value"):
        axis_values("weights", ["FP8", "fp4", "nvfp4"])
