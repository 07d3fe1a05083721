"""The imbalance penalty: throughput per node relative to perfect balance (paper Section 3.3, Fig. 6).

``sigma`` is balancedness, mean/max load of a stage (0 < sigma <= 1); ``alpha`` is the share of
balanced throughput that remains (<= 1). All functions broadcast over numpy arrays.

* EP imbalance under large-scale EP (t_B = t_a + t_f): the FFN time grows by 1/sigma, so
  ``alpha_EP = (lambda + 1) / (lambda + 1/sigma)`` with ``lambda = t_a / t_f``.
* DP imbalance under EP: the attention straggler fixes t_a while the FFN only sees sigma of the
  tokens; EP regrows its batch into the freed FFN time, ``x (t_a + sigma t_f) = t_a + t_f``,
  so ``alpha = sigma (lambda + 1) / (lambda + sigma)`` (between sigma and 1).
* DP imbalance under AFD: the stage budget is fixed, the batch must shrink: ``alpha = sigma``.
* EP imbalance under AFD (t_B = t_a = t_f): the FFN side is 1/sigma slower, so attention must be
  shrunk to sigma N_A nodes (whole nodes only); with ``lambda = N_A / N_F``,
  exact ``alpha = sigma (N_A + N_F) / (sigma N_A + N_F)``, and otherwise the better of rounding
  sigma N_A down or up (see :func:`alpha_afd`).

Erratum: the paper prints the constant c as lambda + 1; the constant consistent with its exact
form is ``c = (N_A + N_F) / N_A`` (with c = lambda + 1, alpha = lambda at sigma = 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from afdlib.inputs import checks

ROUNDINGS = ("exact", "floor", "ceil")
"""How :func:`alpha_afd` sized the attention side: sigma N_A exactly, rounded down or up."""


def _check_sigma(sigma: ArrayLike) -> np.ndarray:
    return np.asarray(checks.fraction(np.asarray(sigma), "sigma (balancedness, mean/max)"), dtype=float)


def _check_positive(name: str, value: ArrayLike, minimum: float = 0.0) -> np.ndarray:
    """``value`` > 0, or >= ``minimum`` where one is given (node counts: >= 1)."""
    v = np.asarray(value)
    checked = checks.at_least(v, minimum, name) if minimum else checks.positive(v, name)
    return np.asarray(checked, dtype=float)


def alpha_ep(sigma: ArrayLike, lam: ArrayLike) -> np.ndarray:
    """EP imbalance under large-scale EP: (lambda + 1) / (lambda + 1/sigma), lambda = t_a / t_f."""
    s, lam = _check_sigma(sigma), _check_positive("lambda", lam)
    return (lam + 1) / (lam + 1 / s)


def alpha_dp_ep(sigma: ArrayLike, lam: ArrayLike) -> np.ndarray:
    """DP imbalance under EP with the batch regrown into freed FFN time: sigma (lambda+1)/(lambda+sigma)."""
    s, lam = _check_sigma(sigma), _check_positive("lambda", lam)
    return s * (lam + 1) / (lam + s)


def alpha_dp_afd(sigma: ArrayLike) -> np.ndarray:
    """DP imbalance under AFD: the fixed stage budget cannot absorb it, alpha = sigma."""
    return _check_sigma(sigma).copy()


def alpha_afd_exact(sigma: ArrayLike, n_attn: ArrayLike, n_ffn: ArrayLike) -> np.ndarray:
    """EP imbalance under AFD if attention could shrink to exactly sigma N_A nodes.

    sigma (N_A + N_F) / (sigma N_A + N_F), which equals (lambda + 1)/(lambda + 1/sigma) with
    lambda = N_A / N_F: the same form as EP.
    """
    s = _check_sigma(sigma)
    na, nf = _check_positive("N_A", n_attn, minimum=1), _check_positive("N_F", n_ffn, minimum=1)
    return s * (na + nf) / (s * na + nf)


@dataclass(frozen=True)
class AfdPenalty:
    """alpha under AFD with whole attention nodes, the exact form, and which rounding won."""

    alpha: np.ndarray
    exact: np.ndarray
    floor: np.ndarray
    ceil: np.ndarray
    rounding_code: np.ndarray  # int8 indices into ROUNDINGS

    @property
    def rounding(self) -> np.ndarray:
        """Which form won, by name (:data:`ROUNDINGS`): names only at the output edge."""
        return np.asarray(ROUNDINGS)[self.rounding_code]


def alpha_afd(sigma: ArrayLike, n_attn: ArrayLike, n_ffn: ArrayLike, atol: float = 1e-9) -> AfdPenalty:
    """EP imbalance under AFD with whole attention nodes (corrected constant c = (N_A + N_F) / N_A).

    With a = sigma N_A not a whole number, either keep floor(a) nodes at full speed,
    ``c floor(a) / (floor(a) + N_F)``, or ceil(a) nodes that are partly idle,
    ``c ceil(a) / (ceil(a) + N_F) * a / ceil(a)``; the better of the two is taken. When a is whole
    both equal the exact form.
    """
    s = _check_sigma(sigma)
    na, nf = _check_positive("N_A", n_attn, minimum=1), _check_positive("N_F", n_ffn, minimum=1)
    a = s * na
    c = (na + nf) / na
    exact = s * (na + nf) / (a + nf)
    whole = np.isclose(a, np.round(a), rtol=0, atol=atol)
    lo, hi = np.floor(a), np.maximum(np.ceil(a), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # a whole a: both forms are the exact one (also where a rounds to 0 nodes, which ceil(a) / 0 would not give)
        floor_form = np.where(whole, exact, c * lo / (lo + nf))
        ceil_form = np.where(whole, exact, c * hi / (hi + nf) * a / hi)
    alpha = np.where(whole, exact, np.maximum(floor_form, ceil_form))
    rounding = np.where(whole, np.int8(0), np.where(floor_form >= ceil_form, np.int8(1), np.int8(2)))
    return AfdPenalty(alpha, exact, floor_form, ceil_form, rounding)


def alpha_afd_as_printed(sigma: ArrayLike, n_attn: ArrayLike, n_ffn: ArrayLike) -> np.ndarray:
    """The paper's printed floor form with c = lambda + 1 (wrong; kept to show the erratum).

    At sigma = 1 it gives (lambda + 1) N_A / (N_A + N_F) = lambda instead of 1.
    """
    s = _check_sigma(sigma)
    na, nf = _check_positive("N_A", n_attn, minimum=1), _check_positive("N_F", n_ffn, minimum=1)
    lo = np.floor(s * na + 1e-9)
    return (na / nf + 1) * lo / (lo + nf)
