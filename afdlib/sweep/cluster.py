"""Where a sweep runs: a Dask ``LocalCluster`` of worker processes (one thread each) on this machine, or
an existing Dask scheduler (``tcp://host:port``) and its workers; a progress bar on stderr."""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from pathlib import Path

from afdlib.errors import AfdError
from afdlib.sweep.evaluate import evaluate
from afdlib.sweep.grid import dataset, default_chunk, target, write
from afdlib.sweep.spec import Spec


def default_workers() -> int:
    """min(2, cores): a sweep's workers on this machine by default."""
    return max(1, min(2, os.cpu_count() or 1))


def first_point(spec: Spec) -> None:
    """Evaluate the grid's first point here, so a spec the library refuses fails in one line before
    any worker starts."""
    evaluate(spec, {k: v[0] for k, v in spec.axes.items()}, 1)


def run(spec: Spec, out: str | Path, workers: int | None = None, scheduler: str | None = None,
        chunk: int | None = None, progress: bool = True, pin: bool = False) -> dict:
    """Evaluate ``spec`` on Dask and write it to ``out``; returns a summary (points, seconds, workers, chunk,
    each worker's CPU seconds and peak memory). ``pin``: each local worker on a core of its own (Linux;
    for measurements)."""
    from distributed import Client, LocalCluster
    from distributed.diagnostics.progressbar import progress as bar
    if workers is not None and scheduler is not None:
        raise AfdError("give --workers (a local cluster) or --scheduler (an existing one), not both")
    target(out)
    first_point(spec)
    chunk = chunk or default_chunk(spec)
    ds = dataset(spec, chunk)
    t_start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if scheduler is None:
            n = workers or default_workers()
            cluster = stack.enter_context(LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                       dashboard_address=":0", silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(scheduler, timeout="10s"))
            except (OSError, TimeoutError) as e:
                raise AfdError(f"no Dask scheduler at {scheduler} ({type(e).__name__})") from None
        n = len(client.scheduler_info().get("workers", {}))
        if not n:
            raise AfdError(f"the Dask scheduler at {scheduler} has no workers")
        if pin and scheduler is None and hasattr(os, "sched_setaffinity"):
            cores = sorted(os.sched_getaffinity(0))
            for i, address in enumerate(sorted(client.scheduler_info()["workers"])):
                client.run(os.sched_setaffinity, 0, {cores[i % len(cores)]}, workers=[address])
        cpu0 = client.run(cpu_seconds)
        t0 = time.perf_counter()   # the sweep's own time, without the cluster's start
        future = client.compute(write(ds, out, compute=False))
        if progress:
            with contextlib.redirect_stdout(sys.stderr):
                bar(future)
        future.result()
        seconds = time.perf_counter() - t0
        cpu = {w: c - cpu0.get(w, 0.0) for w, c in client.run(cpu_seconds).items()}
        peaks = sorted(client.run(peak_mb).values())

    return {"out": str(out), "points": spec.points, "dims": dict(zip(spec.axes, spec.shape)),
            "variables": sorted(ds.data_vars), "workers": n, "chunk": chunk, "seconds": seconds,
            "startup_seconds": t0 - t_start, "cpu_seconds_per_worker": sorted(cpu.values()),
            "peak_mb_per_worker": [p for p in peaks if p is not None]}


def cpu_seconds() -> float:
    """This process' CPU time so far (user + system), seconds: a worker's share of a sweep, whatever
    else the machine runs."""
    t = os.times()
    return t.user + t.system


def peak_mb() -> float | None:
    """This process' peak resident memory, MB (None where the platform does not say)."""
    try:
        import resource
    except ImportError:
        return None
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # kilobytes on Linux
    return kb / 1024 if sys.platform != "darwin" else kb / 2 ** 20
