"""Measured expert loads: SGLang's expert-distribution dumps, and their Zipf fits.

``load_counts`` reads a ``{"logical_count": [[...E...] x layers]}`` file; ``fit_zipf`` fits a Zipf
exponent to one layer's loads; ``counts_or_fit`` takes the raw file where it is present and the
committed fit (``data/deepseek_v3_routing_fit.yaml``) where it is not, and says which it used.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.inputs.files import read_json, read_yaml
from afdlib.routing.popularity import zipf_popularity


def load_counts(path: str | Path) -> np.ndarray:
    """Read an SGLang-style ``{"logical_count": [[...E...] x layers]}`` file; shape (layers, E)."""
    path = Path(path)
    doc = read_json(path)
    if not isinstance(doc, dict) or "logical_count" not in doc:
        raise AfdError(f'{path}: expected a JSON object with key "logical_count" (layers x experts)')
    import difflib
    near = [k for k in doc if k != "logical_count" and difflib.get_close_matches(str(k), ["logical_count"], cutoff=0.8)]
    if near:      # SGLang's dumps carry other keys; one spelt like the counts' is a second copy, or a typo
        raise AfdError(f'{path}: key {near[0]!r} beside "logical_count": which holds the counts? give one')
    rows = doc["logical_count"]
    if not isinstance(rows, list) or any(not isinstance(x, (int, float)) or isinstance(x, bool)
                                         for row in rows for x in (row if isinstance(row, list) else [row])):
        # numpy would read true as 1 and the text "5" as 5
        raise AfdError(f"{path}: logical_count must be a list of equal-length lists of numbers (no true/false, no text)")
    try:
        counts = np.asarray(rows, dtype=float)
    except OverflowError:     # an integer beyond float's range: the list is well formed, the count is not
        raise AfdError(f"{path}: logical_count holds a count beyond floating point (about 1.8e308)") from None
    except (TypeError, ValueError):
        raise AfdError(f"{path}: logical_count must be a list of equal-length lists of numbers") from None
    if counts.ndim == 1:
        counts = counts[None, :]
    if counts.ndim != 2 or counts.shape[1] < 1:
        raise AfdError(f"{path}: logical_count must be a list of equal-length lists of numbers")
    if np.any(~np.isfinite(counts)) or np.any(counts < 0):
        raise AfdError(f"{path}: counts must be finite and non-negative")
    # loads matter only relative to each other: rows whose sum would overflow are scaled by their maximum
    with np.errstate(over="ignore"):
        total = counts.sum(axis=1)
    big = ~np.isfinite(total) | (total > 1e300)
    if big.any():
        counts[big] = counts[big] / counts[big].max(axis=1, keepdims=True)
    return counts


def moe_layers(counts: np.ndarray) -> np.ndarray:
    """Indices of the layers with any routed tokens (dense layers are all zero)."""
    return np.flatnonzero(np.asarray(counts).sum(axis=1) > 0)


@dataclass(frozen=True)
class ZipfFit:
    """Zipf exponent fitted to one histogram's sorted shares, and how well it fits."""

    exponent: float
    total_variation: float      # 0.5 * sum |fitted - measured| over sorted shares, 0 = perfect
    max_over_mean_measured: float
    max_over_mean_fitted: float


@lru_cache(maxsize=8)
def _default_zipf_table(n_experts: int) -> tuple[np.ndarray, np.ndarray]:
    """The default exponent grid (0..3 in steps of 0.001) and its Zipf shares, built once per E."""
    grid = np.linspace(0, 3, 3001)
    table = zipf_popularity(n_experts, grid)
    grid.setflags(write=False)
    table.setflags(write=False)
    return grid, table


def fit_zipf(expert_loads: ArrayLike, grid: ArrayLike | None = None) -> ZipfFit:
    """Least-squares Zipf exponent for the sorted expert shares (vectorised over a grid of s)."""
    x = np.sort(np.asarray(expert_loads, dtype=float))[::-1]
    if x.sum() <= 0:
        raise AfdError("cannot fit an all-zero histogram")
    shares = x / x.sum()
    if grid is None:
        s_grid, model = _default_zipf_table(shares.size)
    else:
        s_grid = np.asarray(grid, dtype=float)
        model = zipf_popularity(shares.size, s_grid)
    err = ((model - shares) ** 2).sum(axis=1)
    best = int(np.argmin(err))
    fitted = model[best]
    return ZipfFit(float(s_grid[best]), float(0.5 * np.abs(fitted - shares).sum()),
                   float(shares[0] * shares.size), float(fitted[0] * shares.size))


def zipf_counts(total: float, n_experts: int, exponent: float, seed: int | None = 0) -> np.ndarray:
    """Long-run counts following a Zipf law, experts in a random (seeded) order.

    Real hot experts are not the lowest-numbered ones; a seeded permutation spreads them over the
    contiguous blocks as a fitted stand-in for a measured histogram. ``seed=None`` keeps rank order.
    """
    counts = total * zipf_popularity(n_experts, exponent)
    if seed is None:
        return counts
    return counts[np.random.default_rng(seed).permutation(n_experts)]


def counts_from_fit(fit_path: str | Path, name: str) -> np.ndarray:
    """A (layers x E) stand-in for a measured counts file, rebuilt from its shipped Zipf fits.

    Each MoE layer gets its fitted exponent and measured selection total, experts in a seeded
    random order (seed = layer index); dense layers stay zero. Statistically similar to the
    measured file, not equal to it: the hot experts land in different contiguous blocks.
    """
    doc = read_yaml(fit_path)
    try:
        entry = doc["files"][name]
        n_layers = max(entry["moe_layers"]) + 1
        counts = np.zeros((n_layers, int(doc["routed_experts"])))
        for layer, s in zip(entry["moe_layers"], entry["zipf_exponent"]):
            counts[layer] = zipf_counts(entry["selections_per_layer_median"], counts.shape[1], s, seed=layer)
    except (KeyError, TypeError, ValueError) as e:
        raise AfdError(f"{fit_path}: no usable fit for '{name}' ({e})") from None
    return counts


def counts_or_fit(counts_dir: str | Path | None, name: str, fit_path: str | Path) -> tuple[np.ndarray, str]:
    """Measured counts ``<counts_dir>/<name>.json`` when present, else the fitted stand-in.

    Returns the matrix and a phrase saying which one was used.
    """
    path = Path(counts_dir) / f"{name}.json" if counts_dir else None
    if path is not None and path.exists():
        return load_counts(path), f"measured counts ({path.name})"
    return counts_from_fit(fit_path, name), f"the shipped Zipf fits of the measured loads ({name})"


def default_counts_dir() -> Path:
    """``$AFDLIB_COUNTS_DIR``, or the shared reference data beside the repository."""
    env = os.environ.get("AFDLIB_COUNTS_DIR")
    root = Path(__file__).resolve().parents[2]
    return Path(env) if env else root.parent / "shared" / "data" / "deepseek-v3-expert-load"
