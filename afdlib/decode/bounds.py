"""The searches' bounds (:mod:`afdlib.decode.search`): widening them where a cell's best sits on one,
and saying so where one still binds.

:func:`widen` doubles the bounds of the cells whose best sits on one and searches only the new
candidates for those cells, round by round, until every best is inside its bounds or they reach their
hard cap; the cells are taken out of the inputs (:func:`take_cells`: every array field over the map's
cells, the assumptions' per-cell overrides included) and searched in chunks of at most
:data:`POINTS_PER_CALL` candidate-cells, so memory stays bounded whatever the map.
:func:`search_reasons` and :func:`bounds_reading` put the outcome in words for the advice and the book.
"""
from __future__ import annotations

import functools
from dataclasses import fields, is_dataclass

import numpy as np

AFD_NODE_CAP = 128
"""Hard cap of the widened AFD search: nodes per pool (1,024 GPUs on 8-GPU nodes). Cost: both pools at
the cap are 2,048 GPUs, 14 times the largest published decode deployment (EP144 over 18 nodes,
data/deployments.yaml); memory: the last widening (both pools to 80..128 nodes) adds 28^2 - 24^2 =
208 candidates per micro-batch count to each cell on the bound, searched in chunks."""
EP_MULTIPLE_CAP = 256
"""Hard cap of the widened EP search: node multiples (EP up to 256 nodes, 2,048 GPUs on 8-GPU nodes:
the GPUs of AFD's two pools at :data:`AFD_NODE_CAP`, so both designs may grow alike)."""
POINTS_PER_CALL = 1 << 16
"""Candidate-cells per vectorised call of a widening (memory stays bounded whatever the map)."""


def widen(rate, config, start: dict, cap: dict, cell_shape: tuple, inputs: tuple, search, ring_size,
          on_top=None):
    """Widen the searched axes (``start``: their first bounds, ``cap``: their hard caps) where a
    cell's best sits on a bound, doubling all of that cell's bounds (so that the cells of one round
    share them: one search per round) and searching only the new candidates for those cells (``search(inputs, shape, (old bounds, new bounds), floor=...)`` -> (rate, configuration) or None; ``floor``: each
    cell's best rate so far, which a new candidate must beat, :class:`afdlib.decode.batch.Rivals`;
    ``ring_size(bounds)``: about how many candidates that adds, for the chunks),
    until no cell's best is on a bound below its cap. ``on_top(config, bounds)``: whether the best
    sits on the bound of the (single) axis, where the configuration's value is not the bound itself.
    Returns the rate, the configuration, each axis's searched bound and whether the best is on it at
    the end, per cell (``cell_shape``)."""
    axes = list(start)
    rate = np.array(rate, dtype=float).reshape(-1)
    conf = {k: np.array(v).reshape(-1) for k, v in config.items()}
    lim = {k: np.full(rate.shape, start[k], dtype=int) for k in axes}

    def on_bound():
        hit = on_top(conf, lim) if on_top is not None else None
        if hit is None:
            return {k: (rate > 0) & (conf[k] >= lim[k]) for k in axes}
        return {axes[0]: (rate > 0) & np.asarray(hit).reshape(-1)}
    while True:
        on = on_bound()
        grows = np.logical_or.reduce([on[k] & (lim[k] < cap[k]) for k in axes])
        cells = np.flatnonzero(grows)
        if not cells.size:
            break
        # every axis of a cell doubles together, so the cells widened in one round share their bounds
        # (a cell stops at its first round with the best inside): one search per round
        new = {k: np.where(grows, np.minimum(2 * lim[k], cap[k]), lim[k]) for k in axes}
        keys = np.stack([lim[k][cells] for k in axes] + [new[k][cells] for k in axes], axis=1)
        for key in np.unique(keys, axis=0):
            group = cells[(keys == key).all(axis=1)]
            bounds = (tuple(int(x) for x in key[:len(axes)]), tuple(int(x) for x in key[len(axes):]))
            _search_cells(group, bounds, rate, conf, cell_shape, inputs, search, ring_size(bounds))
        lim = new
    shape = cell_shape
    on = {k: v.reshape(shape) if shape else bool(v[0]) for k, v in on.items()}
    out = {k: v.reshape(shape) if shape else v[0] for k, v in conf.items()}
    bounds = {k: v.reshape(shape).astype(float) if shape else float(v[0]) for k, v in lim.items()}
    return rate.reshape(shape) if shape else rate[0], out, bounds, on


def _search_cells(group, bounds, rate, conf, cell_shape, inputs, search, candidates: int) -> None:
    """Search the new candidates of ``bounds`` for the flat cells ``group`` (in chunks of cells so
    that at most :data:`POINTS_PER_CALL` candidate-cells of the ``candidates`` new ones are evaluated at
    once) and keep, in place, each cell's better of the two."""
    per_call = max(1, POINTS_PER_CALL // max(1, candidates))
    for lo in range(0, group.size, per_call):
        idx = group[lo:lo + per_call]
        # each cell's best so far is the floor a new candidate must beat: those that cannot leave early
        found = (search(take_cells(inputs, cell_shape, idx), (idx.size,), bounds, floor=rate[idx].copy()) if cell_shape
                 else search(inputs, (), bounds, floor=rate[idx].copy()))
        if found is None:
            return
        r = np.asarray(found[0], dtype=float).reshape(-1)
        better = r > rate[idx]
        rate[idx[better]] = r[better]
        for k in conf:
            conf[k][idx[better]] = np.asarray(found[1][k]).reshape(-1)[better]


def take_cells(obj, cell_shape: tuple, idx: np.ndarray):
    """The cells ``idx`` (flat indices into ``cell_shape``) of an input whose array fields broadcast over
    the cells (``cell_shape``, or ``cell_shape + (1,)`` with the candidate axis: the assumptions'
    overrides): the same input over one axis of those cells (tuples of inputs item by item)."""
    if isinstance(obj, tuple):
        return tuple(take_cells(x, cell_shape, idx) for x in obj)
    if isinstance(obj, np.ndarray):
        if not obj.ndim:
            return obj
        try:
            return np.broadcast_to(obj, cell_shape).reshape(-1)[idx]
        except ValueError:
            return np.broadcast_to(obj, cell_shape + (1,)).reshape(-1, 1)[idx]
    if is_dataclass(obj) and not isinstance(obj, type):
        picked = {name: take_cells(getattr(obj, name), cell_shape, idx) for name in _field_names(type(obj))
                  if isinstance(getattr(obj, name), np.ndarray) and getattr(obj, name).ndim}
        return _with_fields(obj, picked) if picked else obj
    return obj


@functools.cache
def _field_names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _with_fields(obj, picked: dict):
    """``obj`` with the array fields ``picked`` (its cells' values) replaced: a copy of its fields without
    ``__init__``, whose checks the whole arrays already passed (a search takes cells every round); no
    cached value computed from the whole arrays is carried over."""
    new = object.__new__(type(obj))
    new.__dict__.update({name: obj.__dict__[name] for name in _field_names(type(obj))})
    new.__dict__.update(picked)
    return new


def search_reasons(name: str, doc: dict, first: dict) -> list[str]:
    """The advice's lines on a design's search bounds (``doc``: its document with ``searched`` and
    ``on_bound``; ``first``: the first grid's bounds): where the search widened them, and where the
    best still sits on one (then the design may do better than found: the ratio leans against it)."""
    wider = {k: v for k, v in doc["searched"].items() if k in first and v > first[k]}
    label = f"EP{doc['ep_size']}" if name == "EP" else f"{doc['n_attn']}A{doc['n_ffn']}F"

    def words(b):
        return f"EP size <= {b['ep_size']}" if name == "EP" else f"N_A, N_F <= {max(b.values())} nodes"
    out = []
    if wider:
        out.append(f"{name}: the first grid's best sat on its bound ({words(first)}); the search widened it to "
                   f"{words(wider)}" + ("" if doc["on_bound"] else f" and the best ({label}) is inside"))
    if doc["on_bound"]:
        out.append(f"{name}: the best sits on a bound of the search, {'; '.join(doc['on_bound'])}: a larger "
                   f"{name} deployment was not searched and might do better")
    return out


def bounds_reading(rows: list[dict], maps=(), others: dict | None = None) -> str:
    """The hard caps, and how many pairs of an advice table (:func:`afdlib.decision.advise.advice_table`
    rows, their ``on_bound``) and cells of ratio maps (:class:`afdlib.decision.sweetspot.RatioMap`, their
    ``on_bound`` count) have a best on a bound of the search, in words; ``others``: more tables by
    label, each named with its pairs on a bound where it has any."""
    maps = list(maps)
    pairs = sum(bool(r.get("on_bound")) for r in rows)
    cells, total = sum(m.on_bound for m in maps), sum(m.ratio.size for m in maps)

    def named(table):
        return ", ".join(f"{r.get('model_name', r['model'])} on {r.get('hardware_name', r['hardware'])}, "
                         f"{r['on_bound']}" for r in table if r.get("on_bound"))
    more = [f"{label}: {named(t)}" for label, t in (others or {}).items() if named(t)]
    return (f"up to {AFD_NODE_CAP} nodes per AFD pool and EP over {EP_MULTIPLE_CAP} nodes; a best sits on a bound "
            f"in {pairs} of the {len(rows)} pairs" + (f" and {cells} of the maps' {total} cells" if total else "")
            + (f" ({'; '.join(more)})" if more else ""))
