"""Computed once, read many times: the book's expensive tables shared between the chapters that show them.

The landing page and the sweet-spot chapter show the same 48-pair advice table (and the tests that
check them run those chapters again). :func:`shared` computes a call once per inputs and per version
of the code and data, stores the result in the folder ``$AFD_CACHE_DIR`` (the book build sets it to
``<generated>/.cache``, removed with every full build; the test suite to one folder per run), and
every later call with the same inputs reads it. Without ``$AFD_CACHE_DIR`` nothing is stored: a
notebook run by hand computes everything itself.

A call's key is a SHA-256 of the function's qualified name, a canonical encoding of its arguments
bound to its signature, defaults applied (:func:`fingerprint`: dataclasses field by field, arrays by dtype, shape and bytes, floats by
``repr``; any other type is refused rather than keyed loosely) and :func:`code_version` (every
``afdlib`` source file and ``data/`` file, and the Python and numpy versions). A stored result is
therefore never stale: any change to the code, the catalogues or the inputs is a new key.

Two notebooks that run at once share the work: :func:`shared_each` takes a list of calls, computes
the ones no other process is computing (a non-blocking ``flock`` on the call's lock file), then waits
for the others and reads what they stored; the landing page and the sweet-spot chapter so each
compute about half of the advice table.
"""
from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import inspect
import os
import pickle
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

CACHE_ENV = "AFD_CACHE_DIR"
"""The environment variable that names the cache folder (unset: nothing is stored)."""


def _encode(obj: Any, out: "hashlib._Hash") -> None:
    """Feed a canonical encoding of ``obj`` into ``out`` (type-tagged, so 1 and 1.0 and '1' differ)."""
    if obj is None or isinstance(obj, (bool, str, int)):
        out.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, (float, np.floating)):
        out.update(f"f:{float(obj)!r};".encode())
    elif isinstance(obj, np.integer):
        out.update(f"int:{int(obj)!r};".encode())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        out.update(f"nd:{a.dtype.str}:{a.shape};".encode())
        out.update(a.tobytes())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out.update(f"dc:{type(obj).__module__}.{type(obj).__qualname__}(".encode())
        for f in dataclasses.fields(obj):
            out.update(f"{f.name}=".encode())
            _encode(getattr(obj, f.name), out)
        out.update(b")")
    elif isinstance(obj, (list, tuple)):
        out.update(f"{type(obj).__name__}[{len(obj)}](".encode())
        for x in obj:
            _encode(x, out)
        out.update(b")")
    elif isinstance(obj, dict):
        out.update(f"dict[{len(obj)}](".encode())
        for k in sorted(obj, key=repr):
            _encode(k, out)
            _encode(obj[k], out)
        out.update(b")")
    elif isinstance(obj, Path):
        out.update(f"path:{obj.resolve()};".encode())
    else:
        raise TypeError(f"no canonical encoding for {type(obj).__name__}: not a cache key")


def fingerprint(*objs: Any) -> str:
    """The SHA-256 (hex) of the canonical encoding of ``objs``."""
    h = hashlib.sha256()
    for x in objs:
        _encode(x, h)
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_version() -> str:
    """SHA-256 over every ``afdlib`` source file and every file of ``data/`` (paths and bytes, in
    path order) and the Python and numpy versions: what a computed result may depend on."""
    from afdlib.inputs.catalog import data_dir
    package = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"{sys.version}|{np.__version__}".encode())
    for base, pattern in ((package, "*.py"), (data_dir(), "*")):
        for p in sorted(base.rglob(pattern)):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(base)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def cache_dir() -> Path | None:
    """The cache folder from ``$AFD_CACHE_DIR`` (created), or None when unset or empty."""
    name = os.environ.get(CACHE_ENV, "").strip()
    if not name:
        return None
    path = Path(name)
    path.mkdir(parents=True, exist_ok=True)
    return path


Call = tuple[Callable, tuple, dict]


def _key(call: Call) -> str:
    """The call's key: its arguments bound to the function's signature with the defaults applied, so
    ``f(x, prices=None)`` and ``f(x)`` share one result."""
    fn, args, kwargs = call
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return fingerprint(f"{fn.__module__}.{fn.__qualname__}", dict(bound.arguments), code_version())


def _read(path: Path) -> tuple[bool, Any]:
    try:
        with path.open("rb") as f:
            return True, pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError):
        return False, None


def _compute_and_store(call: Call, path: Path) -> Any:
    fn, args, kwargs = call
    value = fn(*args, **kwargs)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)          # whole or not at all: a reader never sees half a result
    return value


def shared_each(calls: list[Call]) -> list[Any]:
    """``[fn(*args, **kwargs) for fn, args, kwargs in calls]``, each computed once across processes
    (module docstring): first the calls no other process holds, then the held ones, waited for."""
    folder = cache_dir()
    if folder is None:
        return [fn(*args, **kwargs) for fn, args, kwargs in calls]
    results: dict[int, Any] = {}
    held: list[int] = []
    for blocking in (False, True):
        for i in (range(len(calls)) if not blocking else held):
            if i in results:
                continue
            path = folder / f"{_key(calls[i])}.pickle"
            ok, value = _read(path)
            if ok:
                results[i] = value
                continue
            with (folder / f"{path.stem}.lock").open("a") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
                except BlockingIOError:    # another process computes it: come back to it
                    held.append(i)
                    continue
                try:
                    ok, value = _read(path)     # it may have finished between the read and the lock
                    results[i] = value if ok else _compute_and_store(calls[i], path)
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
    return [results[i] for i in range(len(calls))]


def shared(fn: Callable, *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)``, computed once per inputs and code version (:func:`shared_each`)."""
    return shared_each([(fn, args, kwargs)])[0]


def advice(models: list, hardware: list, *args, **kwargs) -> list[dict]:
    """:func:`afdlib.decision.advise.advice_table`, one model on one group of devices searched together
    (:func:`afdlib.decision.stacked.device_groups`) at a time, each computed once: the rows are those of
    one call over every pair (it searches each model on each group on its own), in the same order, and
    two grids that share a model and a group share its rows."""
    from afdlib.decision.advise import advice_table
    from afdlib.decision.stacked import device_groups
    groups = device_groups(hardware)
    units = [(j, g) for j in range(len(models)) for g in groups]
    tables = shared_each([(advice_table, ([models[j]], [hardware[i] for i in g], *args), kwargs) for j, g in units])
    rows = {(j, i): row for (j, g), t in zip(units, tables) for i, row in zip(g, t)}
    return [rows[(j, i)] for j in range(len(models)) for i in range(len(hardware))]
