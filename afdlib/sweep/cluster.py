"""Where a sweep runs: a Dask ``LocalCluster`` of worker processes (one thread each) on this machine, or
an existing Dask scheduler (``tcp://host:port``) and its workers; a progress bar on stderr.

The result appears at ``--out`` only when whole: the sweep writes into a hidden sibling
(``.<stem>.partial-<pid><suffix>``) and renames it there at the end, so an interrupted or failed sweep (kill,
TERM, INT, an error) never leaves a store that opens as a complete dataset of NaN at the published
path; the sibling is removed on every exit the process sees (not on kill -9, where it stays hidden
beside ``--out``). A grid is refused before its task graph is built where it would hold more than
:data:`MAX_TASKS` blocks."""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from afdlib.errors import AfdError
from afdlib.sweep.evaluate import check_grid, evaluate
from afdlib.sweep.grid import chunks, dataset, default_chunk, target, write
from afdlib.sweep.spec import Spec

SAY_GRAPH_TASKS = 20_000
"""Blocks from which a sweep says on stderr that it is building its task graph (about a second, before the
progress bar starts; MAX_TASKS take about 6 s)."""
MAX_TASKS = 200_000
"""Most blocks (Dask tasks) a sweep's graph is built with: about 6 s to build on this project's 2-core machine
(10^5 tasks took 3 s, 10^6 took 40 s before the first point ran); a 10^12-point grid in the default
chunks would be 10^7 tasks."""


def default_workers() -> int:
    """min(2, cores): a sweep's workers on this machine by default."""
    return max(1, min(2, os.cpu_count() or 1))


def first_point(spec: Spec) -> None:
    """Evaluate the grid's first point here, and each name of an axis of names (kernel profiles, data
    types) at the first point's other values, so a spec the library refuses fails in one line before
    any worker starts (a misspelt name at a later grid point failed in a worker, as a traceback)."""
    check_grid(spec)
    first = {k: v[0] for k, v in spec.axes.items()}
    evaluate(spec, first, 1)
    for name, values in spec.axes.items():
        if np.asarray(values).dtype == object:
            for v in values[1:]:
                evaluate(spec, {**first, name: v}, 1)


def scheduler_address(address: str) -> str:
    """``address`` unless it names a transport afd cannot connect over: TLS needs certificates and UCX a
    UCX install, neither of which afd takes (Dask's own error there is a TypeError traceback); refused in
    one line. Other addresses are Dask's to judge (tcp://host:port; inproc:// within one process)."""
    scheme = address.split("://", 1)[0].lower() if "://" in address else "tcp"
    why = {"tls": "tls:// needs certificates, a security configuration afd does not take",
           "ucx": "ucx:// needs UCX, which afd does not set up"}
    if scheme in why:
        raise AfdError(f"--scheduler {address!r}: {why[scheme]}; give tcp://host:port")
    return address


def run(spec: Spec, out: str | Path, workers: int | None = None, scheduler: str | None = None,
        chunk: int | None = None, progress: bool = True, pin: bool = False) -> dict:
    """Evaluate ``spec`` on Dask and write it to ``out``; returns a summary (points, seconds, workers, chunk,
    each worker's CPU seconds and peak memory). ``pin``: each local worker on a core of its own (Linux;
    for measurements)."""
    from distributed import Client, LocalCluster
    from distributed.diagnostics.progressbar import progress as bar
    if workers is not None and scheduler is not None:
        raise AfdError("give --workers (a local cluster) or --scheduler (an existing one), not both")
    if scheduler is not None:
        scheduler_address(scheduler)
    out, _ = target(out)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise AfdError(f"{out}: {parent} is a file, not a folder" if parent.exists() else
                       f"{out}: its folder {parent} does not exist")
    try:      # a file written and removed, not os.access: root passes that on a read-only file system
        tempfile.TemporaryFile(dir=parent).close()
    except OSError as e:
        raise AfdError(f"{out}: its folder {parent} is not writable ({e.strerror or e})") from None
    chunk = chunk or default_chunk(spec)
    tasks = 1
    for per_axis in chunks(spec, chunk):
        tasks *= len(per_axis)
    if tasks > MAX_TASKS:
        need = -(-spec.points // MAX_TASKS)
        raise AfdError(f"the grid's {spec.points:.3g} points in blocks of at most {chunk:,} are {tasks:.3g} tasks, more "
                       f"than the {MAX_TASKS:.0e} a sweep builds; give --chunk {need:,} or more, or a smaller grid")
    first_point(spec)
    if progress and tasks >= SAY_GRAPH_TASKS:    # seconds before the first block runs: say what they are
        print(f"afd sweep: building the task graph of {tasks:,} blocks", file=sys.stderr, flush=True)
    ds = dataset(spec, chunk)
    partial = parent / f".{out.stem}.partial-{os.getpid()}{out.suffix}"   # the suffix names the format
    _remove_stale(parent, out)
    t_start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        # gone on every exit but a finished rename; registered first, so it runs last: after the client
        # and the cluster are closed, when no worker can still write a block into it
        stack.callback(_remove, partial)
        if scheduler is None:
            n = workers or default_workers()
            with _workers_without_interrupt():
                cluster = stack.enter_context(LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                           dashboard_address=":0", silence_logs=logging.ERROR))
                client = stack.enter_context(Client(cluster))
        else:
            client = stack.enter_context(_connect(Client, scheduler))
        n = len(client.scheduler_info().get("workers", {}))
        if not n:
            raise AfdError(f"the Dask scheduler at {scheduler} has no workers")
        if pin and scheduler is None and hasattr(os, "sched_setaffinity"):
            cores = sorted(os.sched_getaffinity(0))
            for i, address in enumerate(sorted(client.scheduler_info()["workers"])):
                client.run(os.sched_setaffinity, 0, {cores[i % len(cores)]}, workers=[address])
        cpu0 = client.run(cpu_seconds)
        t0 = time.perf_counter()   # the sweep's own time, without the cluster's start
        with _signals_raise():
            # a store left by a killed sweep says so: complete 0 until every block is written
            ds.attrs["complete"] = 0
            future = client.compute(write(ds, partial, compute=False))
            if progress:
                try:
                    with contextlib.redirect_stdout(sys.stderr):
                        bar(future)
                except KeyboardInterrupt as e:     # the bar's line is unfinished: the message goes below it
                    e.mid_line = True
                    raise
            future.result()
            _mark_complete(partial)
            if out.exists():                       # another sweep published there meanwhile
                raise AfdError(f"{out} appeared while this sweep ran (another sweep into the same --out?); "
                               "this sweep's result is discarded: give another --out")
            os.rename(partial, out)
        seconds = time.perf_counter() - t0
        cpu = {w: c - cpu0.get(w, 0.0) for w, c in client.run(cpu_seconds).items()}
        peaks = sorted(client.run(peak_mb).values())

    return {"out": str(out), "points": spec.points, "dims": dict(zip(spec.axes, spec.shape)),
            "variables": sorted(ds.data_vars), "workers": n, "chunk": chunk, "seconds": seconds,
            "startup_seconds": t0 - t_start, "cpu_seconds_per_worker": sorted(cpu.values()),
            "peak_mb_per_worker": [p for p in peaks if p is not None]}


CONNECT_S = 20
"""Longest wait for an existing scheduler to answer: a server that accepts the connection but never speaks
Dask's protocol (an HTTP server on that port) held Client's own 10 s timeout off for minutes."""


def _connect(client_class, scheduler: str):
    """A client of the Dask scheduler at ``scheduler``, or one line (:class:`AfdError`) where nothing answers
    as a Dask scheduler there within :data:`CONNECT_S` (a closed port, a silent host, another protocol: an
    HTTP server's reply was read as a 3 EiB message and ended in a MemoryError)."""
    import threading
    got: dict = {}

    def connect():
        try:
            got["client"] = client_class(scheduler, timeout="10s")
        except (ValueError, TypeError) as e:
            got["error"] = AfdError(f"--scheduler {scheduler!r} is not a Dask scheduler address ({e}); "
                                    "give tcp://host:port")
        except BaseException as e:    # OSError, TimeoutError, a MemoryError from another protocol's bytes
            got["error"] = AfdError(f"no Dask scheduler answers at {scheduler} ({type(e).__name__})")
    worker = threading.Thread(target=connect, daemon=True)
    worker.start()
    worker.join(CONNECT_S)
    if "client" in got:
        return got["client"]
    raise got.get("error") or AfdError(f"no Dask scheduler answers at {scheduler} within {CONNECT_S} s (is it a "
                                       "Dask scheduler's address?)")


def _mark_complete(path: Path) -> None:
    """Set the written store's ``complete`` attribute to 1: Zarr in place (its metadata consolidated again,
    which xarray reads); a NetCDF file read and written again with it (not every NetCDF engine sets an
    attribute in place; a NetCDF sweep is small enough to be one file)."""
    if path.suffix == ".nc":
        import xarray as xr
        with xr.open_dataset(path) as done:
            whole = done.load()
        whole.attrs["complete"] = 1
        whole.to_netcdf(path, mode="w")
        return
    import warnings

    import zarr
    zarr.open_group(str(path), mode="r+").attrs["complete"] = 1
    with warnings.catch_warnings():   # zarr 3: consolidated metadata is an extension (xarray reads it), as in write()
        warnings.filterwarnings("ignore", message="Consolidated metadata")
        zarr.consolidate_metadata(str(path))


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


def _remove_stale(parent: Path, out: Path) -> None:
    """The partial stores a killed sweep into ``out`` left beside it (``kill -9``: no cleanup could run),
    removed: those whose process is gone (a sweep still running into the same ``out`` keeps its own)."""
    import re
    for p in parent.glob(f".{out.stem}.partial-*{out.suffix}"):
        m = re.fullmatch(rf"\.{re.escape(out.stem)}\.partial-(\d+){re.escape(out.suffix)}", p.name)
        if m and not _alive(int(m.group(1))):
            _remove(p)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True          # another user's process (or no such pid number): leave its store alone
    return True


def _remove(path: Path) -> None:
    """A partial result, removed (a Zarr store is a folder, a NetCDF file a file)."""
    import shutil
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _workers_without_interrupt():
    """SIGINT and SIGHUP ignored while the local cluster starts its worker processes, which inherit the
    ignored signals (Python and asyncio leave an ignored SIGINT alone): a Ctrl-C or a hangup, which the
    terminal sends to every process of its group, then reaches only this process, which shuts the workers
    down; before, each worker printed its own KeyboardInterrupt traceback (SIGINT), or died at once and
    left multiprocessing's resource tracker printing a KeyError traceback per shared-memory name (SIGHUP).
    (A blocked signal would be kept for later instead, but the threads Dask starts processes from do not
    inherit a block.) A Ctrl-C in these few seconds is lost: press it again once the sweep runs."""
    import signal
    signals = [s for s in (signal.SIGINT, getattr(signal, "SIGHUP", None)) if s is not None]
    try:
        saved = {s: signal.signal(s, signal.SIG_IGN) for s in signals}
    except ValueError:                             # not the main thread: leave the handlers alone
        yield
        return
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


RESEND_S = 0.05
"""Seconds after which a signal that arrived during a garbage collection is sent again (a collection
takes milliseconds)."""


@contextlib.contextmanager
def _signals_raise():
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt inside the block (with the signal's number, the
    status's 128 + signum), so the cleanup runs on each. Never inside a garbage-collector callback (Dask
    keeps some in this process): an exception cannot leave one, so Python prints it as "Exception
    ignored" with a traceback and goes on, and Dask's callback, cut in half, fails the next time round.
    A signal that arrives during a collection is sent again a moment later."""
    import gc
    import signal
    import threading
    collecting = []

    def again(signum):
        threading.Timer(RESEND_S, os.kill, (os.getpid(), signum)).start()

    def stop(signum, frame):
        if collecting:
            return again(signum)
        e = KeyboardInterrupt(f"signal {signum}")
        e.signum = signum
        raise e

    def first(phase, info):                    # before every other callback of a collection's start
        if phase == "start":
            collecting.append(1)

    def last(phase, info):                     # after every other callback of its stop
        if phase == "stop":
            collecting.clear()
    hook = sys.unraisablehook

    def unraisable(u):                         # one that landed in first() itself: sent again, not printed
        return again(getattr(u.exc_value, "signum", signal.SIGINT)) if isinstance(u.exc_value, KeyboardInterrupt) \
            else hook(u)
    saved = {}
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            try:
                saved[sig] = signal.signal(sig, stop)
            except ValueError:                     # not the main thread: leave the handlers alone
                pass
    gc.callbacks.insert(0, first)
    gc.callbacks.append(last)
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        sys.unraisablehook = hook
        gc.callbacks.remove(first)
        gc.callbacks.remove(last)
        for sig, handler in saved.items():
            signal.signal(sig, handler)
