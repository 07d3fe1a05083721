"""Benchmarks (not timed tests): the speed targets side by side with their floors, and the
library's hot spots.

    .venv/bin/python scripts/benchmark.py            # everything (the book and the tests included)
    .venv/bin/python scripts/benchmark.py --no-book  # skip the book build and the test suite
    .venv-aic/bin/python scripts/benchmark.py --aiconfigurator-only   # against aiconfigurator

    .venv/bin/python scripts/benchmark.py --speed-only   # where people wait, side by side (minutes)

Targets, each printed with its floor and whether it is met. Where people wait (``--speed-only``, the
issue "Speed where people wait"): ``afd catalog``, ``afd hfu`` and ``afd throughput`` each within 2x of
``python -c "import numpy, yaml"`` per fresh query; ``afd advise`` <= 0.3 s per pair in a fresh process
and ``--all`` <= 30 s; ``./run test`` <= 120 s; ``./run book`` from scratch <= 60 s; an own-pair book for
a device file the project has never seen and a published config.json <= 90 s. The library's: 10^6-point
grids at <= 40 ns and <= 100 bytes per point; Monte-Carlo routing of 10^6 tokens x top-8 of 256 in
<= 0.5 s. Wall-clock seconds on this machine (and CPU seconds where the machine's load would blur them);
run it idle.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))


def timed(cmd: list[str], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best


def library() -> None:
    import numpy as np

    from afdlib.routing.balance import route_tokens
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.analysis.hfu import hfu_grid
    models = [load_model(m) for m in ("deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7")]
    hws = [load_hardware(h) for h in ("h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300")]
    n = np.arange(1, 65)
    best = float("inf")
    for _ in range(50):
        t0 = time.perf_counter()
        hfu_grid(models, hws, n)
        best = min(best, time.perf_counter() - t0)
    print(f"Figure 4 grid (8 devices x 6 models x 64 N_F) in one call: {best * 1e3:.2f} ms (best of 50)")
    for name, pop in (("uniform", np.ones(256)), ("measured-like Zipf s=0.45", np.arange(1, 257) ** -0.45)):
        t0 = time.perf_counter()
        route_tokens(10**6, 8, pop, np.random.default_rng(0))
        print(f"Monte-Carlo routing of 10^6 tokens, top-8 of 256 ({name}): {time.perf_counter() - t0:.2f} s")


def decode_sweep() -> None:
    """The end-to-end decode model over 10^5 points (batch x EP size x context) in one call."""
    import numpy as np

    from afdlib.decode.deployment import AFDDeployment, EPDeployment, decode_step
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget
    model, hw = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.003)
    reqs = np.arange(1, 251, dtype=float)[:, None, None]
    ep = np.array([16, 32, 64, 128])[None, :, None]
    ctx = np.geomspace(512, 65536, 100)[None, None, :]
    points = reqs.size * ep.size * ctx.size
    ep_grid = EPDeployment(hw, ep, redundant=32, requests=reqs)      # one deployment, arrays broadcasting
    afd_grid = AFDDeployment.of(hw, ep // 8, 2, micro_batches=3, requests=reqs)
    for name, call in (("EP", lambda: decode_step(model, ep_grid, ctx, budget)),
                       ("AFD", lambda: decode_step(model, afd_grid, ctx, budget))):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - t0)
        print(f"decode model, {name}, {points:,} points (batch x size x context) in one call: "
              f"{best:.3f} s = {best / points * 1e6:.2f} us per point (target <= 10)")


def pipeline_simulation() -> None:
    """10^5 decode steps of a 61-layer AFD 3BO pipeline under jitter (the simulator's target: about 2 s)."""
    from afdlib.simulation.pipeline import Jitter, simulate
    t0 = time.perf_counter()
    simulate("afd", 1.0, 1.0, 1.0, 3, 61, steps=100_000, jitter=Jitter(cv_ffn=0.2, cv_comm=0.2), seed=0)
    print(f"pipeline simulator, 10^5 steps x 61 layers x 3 micro-batches under jitter: "
          f"{time.perf_counter() - t0:.2f} s (target about 2 s)")


def advise_and_maps() -> None:
    """afd advise in the library (one pair, with reasons) and a 12 x 12 sweet-spot map."""
    import numpy as np

    from afdlib.decision.advise import advise
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget
    from afdlib.decision.sweetspot import ratio_map
    model, hw = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.003)
    t0 = time.perf_counter()
    advise(model, hw, budget, 4096)
    print(f"advise, one pair with reasons (library): {time.perf_counter() - t0:.2f} s (target < 1 s)")
    rm = ratio_map(model, hw, budget, 4096, np.geomspace(10e9, 640e9, 12), np.geomspace(512, 16384, 12),
                   "moe_intermediate_size")
    print(f"sweet-spot map 12 x 12: {rm.seconds:.2f} s for {rm.points:,} candidate-cells "
          f"({rm.seconds / rm.points * 1e6:.1f} us each; 10^8 would take {rm.seconds / rm.points * 1e8 / 60:.0f} min)")


def versus_aiconfigurator(write: Path | None = None) -> None:
    """One prediction and a 100-point sweep (DeepSeek-V3, H200, EP8, 4096 cached tokens, 1..100
    requests per GPU) through aiconfigurator's public API and through ours, in this one process.
    Needs the optional extra (pip install -e '.[aiconfigurator]'); skipped without it."""
    try:
        import logging
        import warnings

        from aiconfigurator.cli.api import cli_estimate
    except ImportError:
        print("aiconfigurator not installed: comparison skipped (pip install -e '.[aiconfigurator]')")
        return
    import numpy as np

    from afdlib.peers.aiconfigurator import Setting, our_step, tool_kwargs
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    base = Setting("bench", "grid", "ep", "deepseek-v3", "h200", "h200_sxm", "trtllm", 128, 4096, ep_size=8)
    cli_estimate(**tool_kwargs(base))          # first call loads its database: not counted
    t0 = time.perf_counter()
    cli_estimate(**tool_kwargs(base))
    theirs_one = time.perf_counter() - t0
    our_step(base)                             # warm the catalogue cache likewise
    t0 = time.perf_counter()
    our_step(base)
    ours_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    for b in range(1, 101):
        cli_estimate(**tool_kwargs(Setting("bench", "grid", "ep", "deepseek-v3", "h200", "h200_sxm", "trtllm", b,
                                           4096, ep_size=8)))
    theirs_sweep = time.perf_counter() - t0
    t0 = time.perf_counter()
    for b in range(1, 101):
        our_step(Setting("bench", "grid", "ep", "deepseek-v3", "h200", "h200_sxm", "trtllm", b, 4096, ep_size=8))
    ours_loop = time.perf_counter() - t0
    from afdlib.decode.deployment import EPDeployment, decode_step
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.inputs.specs import Budget, Precision
    model, hw = load_model("deepseek-v3", profile="reference"), load_hardware("h200", profile="datasheet")
    prec = Precision(kv_cache="fp8", dispatch="bf16")
    t0 = time.perf_counter()
    decode_step(model, EPDeployment(hw, 8, requests=np.arange(1, 101, dtype=float)), 4096,
                Budget(l_accept=1.0, t_gap_s=0.0), prec)
    ours_vector = time.perf_counter() - t0
    if write:
        import csv
        import datetime

        import aiconfigurator
        with open(write, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["what", "aiconfigurator_s", "ours_s", "cores", "tool_version", "run_date"])
            meta = [os.cpu_count(), aiconfigurator.__version__, datetime.date.today().isoformat()]
            w.writerow(["one prediction", f"{theirs_one:.4g}", f"{ours_one:.4g}", *meta])
            w.writerow(["100-point sweep, one call per point", f"{theirs_sweep:.4g}", f"{ours_loop:.4g}", *meta])
            w.writerow(["100-point sweep, ours as one vectorised call", f"{theirs_sweep:.4g}", f"{ours_vector:.4g}",
                        *meta])
    print(f"one prediction: aiconfigurator {theirs_one:.3f} s, ours {ours_one * 1e3:.2f} ms "
          f"({theirs_one / ours_one:,.0f}x)")
    print(f"100-point sweep: aiconfigurator {theirs_sweep:.1f} s, ours {ours_loop:.3f} s one call per point "
          f"({theirs_sweep / ours_loop:,.0f}x), {ours_vector * 1e3:.2f} ms as one vectorised call "
          f"({theirs_sweep / ours_vector:,.0f}x)")


UNSEEN_DEVICE = """name: Lab node (4 x H200-class, never in the catalogue)
gpus_per_node: 4
scale_up_domain: 4
bf16_tflops: 989
fp8_tflops: 1979
hbm_tb_per_s: 4.8
hbm_gb: 141
scale_up_gb_per_s: 450
scale_out_gb_per_s: 50
scale_out_latency_us: 10
source: the catalogue's H200 datasheet numbers on nodes of 4 GPUs (a benchmark input)
"""
PUBLISHED_CONFIG = ROOT / "data" / "hf_configs" / "Qwen--Qwen3.5-397B-A17B_config.json"
"""A published Hugging Face config.json the own-pair book is built for."""


def timed_cpu(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU of the command and its children) seconds of one run."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def where_people_wait(builds: bool = True) -> None:
    """This issue's targets side by side, each as a ratio of its floor or its target."""
    import tempfile
    py, afd = str(BIN / "python"), str(BIN / "afd")
    floor = timed([py, "-c", "import numpy, yaml"], repeat=5)
    print(f"floor: python -c 'import numpy, yaml': {floor:.3f} s (best of 5)")
    for argv in (["catalog", "--json"], ["hfu", "--model", "deepseek-v3", "--hardware", "h800", "--json"],
                 ["throughput", "--model", "deepseek-v3", "--hardware", "h800", "--design", "ep", "--ep-size",
                  "144", "--redundant", "32", "--json"]):
        t = timed([afd, *argv], repeat=5)
        print(f"afd {argv[0]}: {t:.3f} s = {t / floor:.2f}x the floor (target <= 2x: {verdict(t / floor, 2.0)})")
    runs = [timed_cpu([afd, "advise", "--model", "deepseek-v3", "--hardware", "h800", "--json"]) for _ in range(3)]
    wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
    print(f"afd advise, one pair, fresh process: {wall:.2f} s ({cpu:.2f} CPU-s; {wall / floor:.1f}x the floor; "
          f"target <= 0.3 s: {verdict(wall, 0.3)})")
    wall, cpu = timed_cpu([afd, "advise", "--all", "--json"])
    print(f"afd advise --all: {wall:.1f} s ({cpu:.1f} CPU-s; target <= 30 s: {verdict(wall, 30)})")
    if not builds:
        return
    wall, cpu = timed_cpu([str(ROOT / "run"), "test", "-q", "-p", "no:cacheprovider"])
    print(f"./run test: {wall:.0f} s ({cpu:.0f} CPU-s; target <= 120 s: {verdict(wall, 120)})")
    for path in (ROOT / "_build", ROOT / "book" / "generated"):
        shutil.rmtree(path, ignore_errors=True)
    wall, cpu = timed_cpu([str(ROOT / "run"), "book"])
    print(f"./run book from scratch: {wall:.0f} s ({cpu:.0f} CPU-s; target <= 60 s: {verdict(wall, 60)})")
    with tempfile.TemporaryDirectory() as tmp:
        device = Path(tmp) / "lab.yaml"
        device.write_text(UNSEEN_DEVICE)
        wall, cpu = timed_cpu([afd, "book", "--hardware", str(device), "--model", str(PUBLISHED_CONFIG),
                               "--out", str(Path(tmp) / "book")])
    print(f"own-pair book (a 4-GPU-node device file, {PUBLISHED_CONFIG.name}): {wall:.0f} s ({cpu:.0f} CPU-s; "
          f"target <= 90 s: {verdict(wall, 90)})")


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


def targets() -> None:
    """The library's targets, each beside its floor (the commands': :func:`where_people_wait`)."""
    import tracemalloc

    import numpy as np

    from afdlib.routing.balance import alias_table, route_tokens
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.analysis.hfu import hfu_grid
    models = [load_model(m) for m in ("deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7")]
    hws = [load_hardware(h) for h in ("h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300")]
    n = np.arange(1, 20834 + 1)
    pts = 8 * 6 * n.size
    hfu_grid(models, hws, n[:10])
    best = min(_seconds(lambda: hfu_grid(models, hws, n)) for _ in range(3))
    tracemalloc.start()
    grid = hfu_grid(models, hws, n)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del grid
    ns, per = best / pts * 1e9, peak / pts
    print(f"hfu_grid, 10^6 points: {ns:.1f} ns and {per:.0f} bytes (peak) per point "
          f"(targets <= 40 ns: {verdict(ns, 40)}, <= 100 bytes: {verdict(per, 100)}); floor: one float64 "
          f"array is 8 bytes per point")
    pop = np.arange(1, 257) ** -0.45
    t = min(_seconds(lambda: route_tokens(10**6, 8, pop, np.random.default_rng(0))) for _ in range(2))
    prob, alias = alias_table(pop)
    rng = np.random.default_rng(0)

    def with_replacement():
        i = rng.integers(0, 256, 8 * 10**6)
        return np.where(rng.random(8 * 10**6) < prob[i], i, alias[i])
    f = min(_seconds(with_replacement) for _ in range(2))
    print(f"Monte-Carlo routing, 10^6 tokens x top-8 of 256: {t:.2f} s (target <= 0.5 s: {verdict(t, 0.5)}); "
          f"floor: 8 x 10^6 draws with replacement {f:.2f} s")


SWEEP_SPEC = {"model": "deepseek-v3", "hardware": "h800", "design": "afd", "fixed": {"n_attn": 2}}
"""The sweep benchmark's grid: AFD 2A x N_F in {1, 2, 4, 8} on H800, scale-out bandwidth (100 values,
log), HBM bandwidth (100) and context (points / 40,000 values): a given deployment per point, its
batch searched (the `afd throughput` path)."""


def _sweep_spec(points: int) -> dict:
    ctx = max(1, points // 40_000)
    return {**SWEEP_SPEC, "vary": {"scale_out_gb_per_s": {"from": 10, "to": 400, "num": 100, "log": True},
                                   "hbm_tb_per_s": {"from": 2, "to": 8, "num": 100},
                                   "context": {"from": 512, "to": 65536, "num": ctx, "log": True},
                                   "n_ffn": [1, 2, 4, 8]}}


def _sweep_run(doc: dict, workers: int, chunk: int | None = None, pin: bool = False) -> dict:
    """One `afd sweep` run (written to a scratch Zarr, removed): its summary (seconds, the workers' CPU
    seconds and peak memory) with the points and the load average it started under."""
    import tempfile

    from afdlib.sweep import cluster
    from afdlib.sweep.spec import parse
    spec = parse(doc)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="afd-sweep-") as tmp:
        out = cluster.run(spec, Path(tmp) / "r.zarr", workers=workers, chunk=chunk, progress=False, pin=pin)
    return {**out, "load": load}


def _sweep_line(what: str, r: dict) -> str:
    pts, s, w = r["points"], r["seconds"], r["workers"]
    cpu = sum(r["cpu_seconds_per_worker"])
    return (f"afd sweep, {what}, {pts:.2e} points on {w} worker(s): {s:,.1f} s wall, {pts / s / w:,.0f} points/s "
            f"per worker; {cpu / pts * 1e6:.2f} us of worker CPU per point ({pts / cpu:,.0f} points per CPU-second); "
            f"peak {max(r['peak_mb_per_worker'] or [float('nan')]):,.0f} MB per worker "
            f"(load average {r['load']:.1f} on {os.cpu_count()} cores at the start)")


def sweeps(sizes=(10 ** 6, 10 ** 7), searched: bool = True, pin: bool = False) -> None:
    """`afd sweep` on a local Dask cluster: points/s per worker at each size (wall) and the workers' CPU
    time per point (what a worker with a core of its own would take, whatever else the shared machine
    runs), the speed-up from 1 to 2 workers, the peak memory per worker and the projected time of 10^10
    points on N workers. ``pin``: each worker on a core of its own."""
    runs = {}
    compared = [n for n in sizes if n < 10 ** 8] or list(sizes)
    for n in sizes:
        # 10^8 points on two workers only (the one-worker rate is measured on the smaller grids)
        for w in (1, 2) if n in compared else (2,):
            runs[(n, w)] = r = _sweep_run(_sweep_spec(n), w, pin=pin)
            print(_sweep_line("given deployments", r) + (", workers pinned to a core each" if pin else ""))
        if n not in compared:
            continue
        one, two = runs[(n, 1)], runs[(n, 2)]
        print(f"  speed-up 1 -> 2 workers at {n:.0e} points: {one['seconds'] / two['seconds']:.2f}x in wall time; "
              f"CPU per point {sum(two['cpu_seconds_per_worker']) / sum(one['cpu_seconds_per_worker']):.2f}x "
              f"the one worker's (1.00: no cost of splitting the work)")
    n = max(compared)
    one, two = runs[(n, 1)], runs[(n, 2)]
    per_cpu = one["points"] / sum(one["cpu_seconds_per_worker"])      # a worker with a core of its own
    per_wall = two["points"] / two["seconds"] / 2
    # the chunks are independent (no data moves between workers but each chunk's result to the store), so
    # each worker with a core of its own runs at the one-worker CPU rate; the rate measured here on the
    # shared machine is shown beside it
    for workers in (1, 2, 16, 64, 256):
        print(f"  projected 10^10 points on {workers} workers with a core each, at {per_cpu:,.0f} points per "
              f"CPU-second: {_duration(1e10 / (per_cpu * workers))} ({_duration(1e10 / (per_wall * workers))} at the "
              f"{per_wall:,.0f} points/s per worker measured here with 2 workers)")
    if searched:
        doc = {"model": "deepseek-v3", "hardware": "h800", "design": "both",
               "vary": {"scale_out_gb_per_s": {"from": 10, "to": 400, "num": 1000, "log": True},
                        "experts_per_token": [4, 8], "moe_intermediate_size": [1024, 2048]}}
        for w in (1, 2):
            print(_sweep_line("best EP and best AFD searched per point", _sweep_run(doc, w, pin=pin)))


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds >= 3600 else f"{seconds / 60:,.1f} min"


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-book", action="store_true")
    ap.add_argument("--aiconfigurator-only", action="store_true",
                    help="only the side-by-side with aiconfigurator (run with its virtual environment)")
    ap.add_argument("--write-speed", type=Path, metavar="CSV",
                    help="also write the side-by-side timings (the book reads data/aiconfigurator_speed.csv)")
    ap.add_argument("--sweep-only", action="store_true", help="only the afd sweep section")
    ap.add_argument("--speed-only", action="store_true",
                    help="only where people wait: per-query floors, advise, the tests, the book, an own-pair book")
    ap.add_argument("--sweep-points", default="1e6,1e7", help="afd sweep sizes (default 1e6,1e7)")
    ap.add_argument("--sweep-1e8", action="store_true", help="add the 10^8-point sweep (minutes)")
    ap.add_argument("--sweep-pin", action="store_true", help="each sweep worker on a core of its own")
    ap.add_argument("--sweep-no-searched", action="store_true", help="skip the searched-deployment sweep")
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}")
    sizes = [int(float(x)) for x in args.sweep_points.split(",")] + [10 ** 8] * args.sweep_1e8
    if args.speed_only:
        where_people_wait(builds=not args.no_book)
        return
    if args.sweep_only:
        sweeps(sizes, searched=not args.sweep_no_searched, pin=args.sweep_pin)
        return
    if args.aiconfigurator_only:
        versus_aiconfigurator(args.write_speed)
        return
    versus_aiconfigurator()
    library()
    decode_sweep()
    pipeline_simulation()
    advise_and_maps()
    afd = str(BIN / "afd")
    for argv in (["throughput", "--model", "step3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
                  "--n-ffn", "2", "--kv-cache", "fp8", "--json"],
                 ["advise", "--model", "deepseek-v3", "--hardware", "h800", "--json"]):
        print(f"afd {' '.join(argv)}: {timed([afd, *argv], repeat=5):.3f} s (best of 5)")
    sweeps(sizes)
    targets()
    where_people_wait(builds=not args.no_book)


if __name__ == "__main__":
    main()
