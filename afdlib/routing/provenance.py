"""Where the book's routing data came from, and the sentences that depend on it.

The routing chapters run on SGLang's measured DeepSeek-V3 expert loads where the raw files are present
(the reference book, ``../shared/data``) and on the Zipf fits shipped in ``data/deepseek_v3_routing_fit.yaml``
otherwise (a clone: the raw files may not be redistributed). :class:`RoutingData` says which, and its
readings word a chapter accordingly: "measured" only for measured counts, and no comparison of the fit
with itself; where the fits were used, the fit is checked against the measured statistics shipped
beside it (per-layer hottest-expert load, median balancedness) instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from afdlib.errors import AfdError
from afdlib.inputs.catalog import data_dir
from afdlib.inputs.files import read_yaml
from afdlib.routing.measured import counts_from_fit, default_counts_dir, load_counts
from afdlib.routing.popularity import zipf_popularity
from afdlib.routing.sweeps import longrun_balance

FIT_FILE = "deepseek_v3_routing_fit.yaml"
FITS_PHRASE = "the shipped fits of the measured loads"


@dataclass(frozen=True)
class RoutingData:
    """A (layers x E) counts matrix and whether it was measured or rebuilt from the shipped fits."""

    counts: np.ndarray
    name: str
    measured: bool
    fit_path: Path

    @property
    def origin(self) -> str:
        """The data source, as a chapter prints it."""
        if self.measured:
            return f"the measured counts of {self.name}.json"
        return f"{FITS_PHRASE} of {self.name} in data/{self.fit_path.name}"

    @property
    def loads(self) -> str:
        """What the loads are, for a sentence: "measured expert loads" or the shipped fits of them."""
        return "measured expert loads" if self.measured else "the shipped fits of the measured expert loads"

    def readings(self) -> dict[str, str]:
        """Glue values: ``origin``, ``loads``, ``routing`` ("measured routing" or the shipped fits)."""
        return {"origin": self.origin, "loads": self.loads,
                "routing": "measured routing" if self.measured else FITS_PHRASE}

    def fit_layers(self) -> dict[str, object] | None:
        """Where the fits were used: per MoE layer, the shipped fit against the shipped measured
        statistics (exponent, total variation, max/mean measured and fitted), in the columns of
        :func:`afdlib.routing.sweeps.zipf_fit_table`; None for measured data (fit those instead: a fit of
        the fits would compare the fit with itself)."""
        if self.measured:
            return None
        entry = _fit_entry(self.fit_path, self.name)
        e = self.counts.shape[1]
        s = np.asarray(entry["zipf_exponent"], dtype=float)
        return {"layer": np.asarray(entry["moe_layers"]), "zipf_exponent": s,
                "total_variation": np.asarray(entry["zipf_total_variation"], dtype=float),
                "max_over_mean_measured": np.asarray(entry["expert_max_over_mean"], dtype=float),
                "max_over_mean_fitted": zipf_popularity(e, s)[:, 0] * e}

    def fit_check(self, ep_sizes: list[int], redundant: int, longrun: dict) -> tuple[dict | None, str]:
        """The long-run sigma of the fits beside the data's, and the sentence that compares them.

        Measured data: the fits' long-run table (drawn dashed) and the largest gaps. Fitted data: no
        dashed table (it would lie on the solid lines); the fits' sigma against the measured medians
        shipped in the fit file, at the EP sizes both have."""
        tail = ": the measured hot experts cluster in some blocks, which a random order does not reproduce."
        eplb = f"eplb_plus_{redundant}"
        if self.measured:
            fitted = longrun_balance(counts_from_fit(self.fit_path, self.name), ep_sizes, redundant)
            gap = {k: float(np.max(np.abs(np.asarray(fitted[k]) - np.asarray(longrun[k])))) for k in ("contiguous", eplb)}
            return fitted, (f"Dashed: the same placements on the shipped Zipf fits (one exponent per layer, hot experts "
                            f"in a seeded random order). With replicas they stay within {gap[eplb]:.3f} of the measured "
                            f"balancedness; with contiguous blocks they miss by up to {gap['contiguous']:.3f}{tail}")
        shipped = _fit_entry(self.fit_path, self.name).get("median_balancedness", {})
        pairs = {k: [] for k in ("contiguous", eplb)}
        for i, r in enumerate(ep_sizes):
            for k, key in (("contiguous", f"ep{r}_contiguous"), (eplb, f"ep{r}_redundant{redundant}")):
                if key in shipped:
                    pairs[k].append((r, abs(float(longrun[k][i]) - float(shipped[key]))))
        lead = (f"The loads here are {FITS_PHRASE} (one Zipf exponent per layer, hot experts in a seeded random "
                f"order): the raw files are not in this checkout, so no dashed fit is drawn over them.")
        if not pairs["contiguous"] or not pairs[eplb]:
            return None, lead
        sizes = ", ".join(str(r) for r in sorted({r for p in pairs.values() for r, _ in p}))
        return None, (f"{lead} Against the measured medians shipped with the fits (EP {sizes}), with replicas they "
                      f"stay within {max(g for _, g in pairs[eplb]):.3f}; with contiguous blocks they miss by up to "
                      f"{max(g for _, g in pairs['contiguous']):.3f}{tail}")


@lru_cache(maxsize=4)
def _read_fit(fit_path: Path) -> dict:
    return read_yaml(fit_path)


def _fit_entry(fit_path: Path, name: str) -> dict:
    try:
        return _read_fit(Path(fit_path))["files"][name]
    except (KeyError, TypeError):
        raise AfdError(f"{fit_path}: no fit for '{name}'") from None


def routing_data(counts_dir: str | Path | None = None, name: str = "decode_in1000out1000",
                 fit_path: str | Path | None = None) -> RoutingData:
    """``<counts_dir>/<name>.json`` when present (``counts_dir`` None: :func:`default_counts_dir`), else
    the stand-in rebuilt from the shipped fits; either way, which one it is."""
    fit_path = Path(fit_path) if fit_path else data_dir() / FIT_FILE
    path = Path(counts_dir or default_counts_dir()) / f"{name}.json"
    if path.exists():
        return RoutingData(load_counts(path), name, True, fit_path)
    return RoutingData(counts_from_fit(fit_path, name), name, False, fit_path)


def ep_longrun_sigma(data: RoutingData, ep_size: int = 144, redundant: int = 32) -> float:
    """Median over MoE layers of the long-run sigma at EP ``ep_size`` with ``redundant`` EPLB replicas:
    the routing chapter's long-run table entry, the one home of the number other chapters quote."""
    return float(longrun_balance(data.counts, [ep_size], redundant)[f"eplb_plus_{redundant}"][0])
