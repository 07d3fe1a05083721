"""A sweep's grid on Dask: chunks of at most ``chunk`` points (one value of every axis that selects a
code path, :meth:`afdlib.sweep.spec.Spec.scalar`), one task each through
:func:`afdlib.sweep.evaluate.evaluate`, laid out as an xarray Dataset with one dimension per axis,
and written as Zarr (or NetCDF where xarray has an engine for it) chunk by chunk, so memory is
bounded by the chunk, not by the grid.

Variables: ``tokens_per_s_per_gpu``, ``tpot_ms``, ``batch_per_gpu``, ``feasible`` (and, where a
deployment is searched, the deployment found); with design ``both`` they carry a ``design``
dimension (``ep``, ``afd``) and ``afd_over_ep`` is the ratio of the two throughputs (NaN where EP
has none).
"""
from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np

from afdlib.errors import AfdError
from afdlib.sweep.evaluate import MEMBER, UNITS, evaluate, family, variables
from afdlib.sweep.spec import FIELDS, Spec

DEFAULT_CHUNK = {"given": 100_000, "searched": 2_000}
"""Points per task: a given deployment's points cost a batch search each; a searched one's cost that
times its candidates (hundreds), so its chunks are smaller for the same memory."""


def default_chunk(spec: Spec) -> int:
    return DEFAULT_CHUNK["searched" if any(spec.searched(d) for d in spec.designs) else "given"]


def chunks(spec: Spec, chunk: int) -> tuple[tuple[int, ...], ...]:
    """Dask chunks per axis: one value of a scalar axis; the others filled from the last axis
    backwards so that a block holds at most ``chunk`` points."""
    left, out = max(1, int(chunk)), []
    for name, values in reversed(list(spec.axes.items())):
        size = len(values)
        c = 1 if spec.scalar(name) else max(1, min(size, left))
        left = max(1, left // c)
        out.append(tuple([c] * (size // c) + ([size % c] if size % c else [])))
    return tuple(reversed(out))


def names(spec: Spec) -> list[str]:
    """The flat variables of one block, ``design/variable``, in order."""
    return [f"{d}/{v}" for d in spec.designs for v in variables(spec, d)] + [f"model/{k}" for k in MEMBER] * family(spec)


@functools.cache
def arrays_in_heap() -> bool:
    """Once per process (glibc only): keep a chunk's temporary arrays in malloc's heap instead of
    mapping and unmapping each from the kernel, and the freed heap for the next one. A chunk's
    evaluation makes thousands of short-lived arrays of ``chunk`` floats (800 kB at 10^5 points),
    above glibc's mapping threshold; Dask's worker processes also set ``MALLOC_TRIM_THRESHOLD_``,
    which freezes that threshold, so every such array cost fresh zeroed pages: a worker ran a chunk
    3.5x slower than this process did. The threshold goes to 32 MiB (glibc's largest), the heap
    is trimmed past 256 MiB; a worker's peak memory stays bounded by its chunk. Returns whether
    it was set."""
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(mallopt(M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(M_TRIM_THRESHOLD, 256 << 20))


def block(spec: Spec, slices: tuple[slice, ...]) -> np.ndarray:
    """One block of the grid: (variables, *block shape), through :func:`evaluate` on its points flattened."""
    arrays_in_heap()
    coords = [np.asarray(v)[s] for v, s in zip(spec.axes.values(), slices)]
    shape = tuple(len(c) for c in coords)
    n = int(np.prod(shape))
    mesh = np.meshgrid(*coords, indexing="ij") if coords else []
    values = {}
    for (name, c), m in zip(zip(spec.axes, coords), mesh):
        values[name] = c[0] if spec.scalar(name) else m.reshape(-1).astype(float)
    out = evaluate(spec, values, n)
    return np.stack([out[k] for k in names(spec)]).reshape((len(out),) + shape)


def _block_task(spec: Spec, block_info=None):
    loc = block_info[None]["array-location"][1:]
    return block(spec, tuple(slice(a, b) for a, b in loc))


def dataset(spec: Spec, chunk: int | None = None):
    """The sweep as a lazy (Dask-backed) xarray Dataset: nothing is evaluated until it is computed or written."""
    import dask.array as da
    import xarray as xr
    dims = list(spec.axes)
    flat = names(spec)
    layout = chunks(spec, chunk or default_chunk(spec))
    arr = da.map_blocks(_block_task, spec, dtype=float, chunks=((len(flat),),) + layout, meta=np.array((), float))
    coords = {}
    for name, values in spec.axes.items():
        f = FIELDS[name]
        coords[name] = xr.Variable(name, values.astype(str) if values.dtype == object else values,
                                   {"units": f.unit, "kind": f.kind})
    data = {}
    for i, key in enumerate(flat):
        design, var = key.split("/")
        x = arr[i]
        x = x.astype(bool) if var in ("feasible", "on_search_bound") else x
        data.setdefault(var, {})[design] = x
    ds = xr.Dataset(coords=coords)
    for var, by_design in data.items():
        attrs = {"units": UNITS[var]}
        if "model" in by_design:   # the family member's M, E and K
            ds[var] = xr.DataArray(by_design["model"], dims=dims, attrs={**attrs, "description": "the family member's"})
        elif spec.design == "both" and len(by_design) == 2:
            ds[var] = xr.DataArray(da.stack([by_design["ep"], by_design["afd"]]), dims=["design"] + dims,
                                   coords={"design": ["ep", "afd"]}, attrs=attrs)
        elif spec.design == "both":   # a deployment variable of one design only
            (design, x), = by_design.items()
            ds[f"{design}_{var}"] = xr.DataArray(x, dims=dims, attrs=attrs)
        else:
            ds[var] = xr.DataArray(next(iter(by_design.values())), dims=dims, attrs=attrs)
    if spec.design == "both":
        t = ds["tokens_per_s_per_gpu"]
        ds["afd_over_ep"] = (t.sel(design="afd") / t.sel(design="ep").where(t.sel(design="ep") > 0)).assign_attrs(
            units="", description="AFD / EP output tokens/s per GPU")
    ds.attrs.update({"model": spec.model, "hardware": spec.hardware, "design": spec.design,
                     "model_profile": spec.model_profile, "hw_profile": spec.hw_profile,
                     "fixed": repr(spec.fixed), "searched": ", ".join(d for d in spec.designs if spec.searched(d)),
                     "produced_by": "afd sweep (afdlib.sweep)"})
    return ds


def target(path: str | Path) -> tuple[Path, str]:
    """(path, format) of an output path: ``.nc`` NetCDF (refused where xarray has no engine for it), ``.zarr``
    (or no suffix) Zarr; any other suffix is refused (``r.csv`` would be a Zarr folder named like a table),
    and so is an existing path (a sweep never overwrites another's result)."""
    if not str(path).strip():
        raise AfdError("--out is empty; give the result's path (a .zarr folder)")
    p = Path(path)
    if p.exists():
        raise AfdError(f"{p} exists; remove it or give another --out")
    if p.suffix.lower() not in ("", ".zarr", ".nc") and ".partial-" not in p.name:   # (a sweep's own partial store)
        raise AfdError(f"{p}: a sweep writes Zarr (.zarr) or NetCDF (.nc), not {p.suffix}; name --out so (xarray "
                       "turns either into a table: ds.to_dataframe().to_csv(...))")
    if p.suffix == ".nc":
        import xarray as xr
        engines = set(xr.backends.list_engines())
        if not engines & {"netcdf4", "h5netcdf", "scipy"}:
            raise AfdError(f"{p}: no NetCDF engine is installed (netCDF4, h5netcdf or scipy); write .zarr instead")
        return p, "netcdf"
    return p, "zarr"


def write(ds, path: str | Path, compute: bool = True):
    """Write ``ds`` to ``path`` (:func:`target`): Zarr chunk by chunk (each task writes its own block), or
    NetCDF. ``compute=False`` returns the delayed write."""
    p, fmt = target(path)
    if fmt == "netcdf":
        return ds.to_netcdf(p, compute=compute)
    import warnings
    encoding = {k: {"chunks": ds[k].data.chunksize} for k in ds.data_vars}
    with warnings.catch_warnings():   # zarr 3: consolidated metadata is an extension (xarray reads it)
        warnings.filterwarnings("ignore", message="Consolidated metadata")
        warnings.filterwarnings("ignore", message=".*does not have a Zarr V3 specification")   # the design names
        return ds.to_zarr(p, mode="w-", compute=compute, encoding=encoding)


def index_points(spec: Spec, count: int, seed: int = 0) -> list[tuple[int, ...]]:
    """``count`` grid indices drawn without repeats (all of them where the grid is smaller)."""
    total = spec.points
    if total <= count:
        return list(itertools.product(*(range(s) for s in spec.shape)))
    flat = np.random.default_rng(seed).choice(total, size=count, replace=False)
    return [tuple(int(i) for i in np.unravel_index(f, spec.shape)) for f in flat]
