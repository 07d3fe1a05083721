"""Tokens an FFN rank can receive, their arithmetic intensity, and the four regimes.

Paper Section 3.1 (Eqs. 9-10, Fig. 2). Bandwidths in bytes/s per GPU and direction, times in
seconds, sizes in elements. Every function broadcasts over numpy arrays (``n_ffn`` sweeps).
Bytes follow a :class:`afdlib.inputs.specs.Precision`, by default the paper's: a token puts
3 H bytes on the wire (FP8 dispatch + BF16 combine, :func:`afdlib.evaluator.alltoall.token_wire_bytes`),
an expert's weights are 1 byte per parameter (FP8).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.evaluator.alltoall import token_wire_bytes
from afdlib.inputs.specs import Precision

REGIMES = ("scale-up-bound", "stable", "scale-out-bound", "max-intensity")


def tokens_deliverable(bandwidth: ArrayLike, t_b: ArrayLike, hidden_size: ArrayLike,
                       precision: Precision = Precision()) -> np.ndarray:
    """B_x = BW_x * t_B / (3 H): tokens a link of ``bandwidth`` bytes/s delivers within t_B, each
    putting :func:`afdlib.evaluator.alltoall.token_wire_bytes` on it (3 H at the paper's precision)."""
    return np.asarray(bandwidth, dtype=float) * (np.asarray(t_b) / token_wire_bytes(1, hidden_size, precision))


def forwarding_fan(n_ffn: ArrayLike, experts_per_token: ArrayLike) -> np.ndarray:
    """max(1, K / N_F): the copies of a token that one scale-out crossing turns into (two-stage
    forwarding: a token crosses scale-out once per destination node and is fanned out to up to
    K / N_F GPUs inside the node over scale-up)."""
    return np.maximum(1.0, np.asarray(experts_per_token, dtype=float) / np.asarray(n_ffn, dtype=float))


def scale_out_feed(n_ffn: ArrayLike, experts_per_token: ArrayLike, scale_out: ArrayLike) -> np.ndarray:
    """BW_out * max(1, K / N_F), bytes/s: what two-stage forwarding over scale-out can feed one FFN
    rank (:func:`forwarding_fan`)."""
    return np.asarray(scale_out, dtype=float) * forwarding_fan(n_ffn, experts_per_token)


def effective_bandwidth(n_ffn: ArrayLike, experts_per_token: ArrayLike, scale_out: ArrayLike,
                        scale_up: ArrayLike) -> np.ndarray:
    """BW_eff = min(BW_out * max(1, K / N_F), BW_up), bytes/s into one FFN rank (see :func:`scale_out_feed`)."""
    return np.minimum(scale_out_feed(n_ffn, experts_per_token, scale_out), np.asarray(scale_up, dtype=float))


def tokens_per_rank(n_ffn: ArrayLike, experts_per_token: ArrayLike, scale_out: ArrayLike,
                    scale_up: ArrayLike, t_b: ArrayLike, hidden_size: ArrayLike,
                    precision: Precision = Precision()) -> np.ndarray:
    """Eq. 9: B_rank = min(B_out * max(1, K / N_F), B_up), tokens one FFN rank receives in t_B."""
    bw = effective_bandwidth(n_ffn, experts_per_token, scale_out, scale_up)
    return tokens_deliverable(bw, t_b, hidden_size, precision)


def local_experts(routed_experts: ArrayLike, n_ffn: ArrayLike, gpus_per_node: ArrayLike = 8,
                  continuous: bool = False) -> np.ndarray:
    """G, routed experts per FFN GPU: ceil(E / (N_F g)), or E / (N_F g) when ``continuous``.

    The continuous form is floored at 1: a GPU holds at least one whole expert (more nodes
    than E / g only add replicas).
    """
    g = np.asarray(routed_experts, dtype=float) / (np.asarray(n_ffn, dtype=float) * np.asarray(gpus_per_node))
    return np.maximum(1.0, g if continuous else np.ceil(g - 1e-12))


def arithmetic_intensity(tokens: ArrayLike, n_local_experts: ArrayLike, precision: Precision = Precision()
                         ) -> np.ndarray:
    """Eq. 10: I = 2 B_rank / (G b_w), FLOP per weight byte of the grouped GEMMs (2 B_rank / G at
    the paper's FP8 weights, b_w = 1 byte per parameter).

    Each token does 2 FLOPs per weight element of the expert it visits; a rank reads the
    weights of its G experts once per step (activation bytes neglected).
    """
    return 2.0 * np.asarray(tokens, dtype=float) / (np.asarray(n_local_experts, dtype=float)
                                                    * precision.bytes("weights"))


def normalised_intensity(n_ffn: ArrayLike, experts_per_token: int, routed_experts: int,
                         bandwidth_ratio: float, gpus_per_node: int = 8,
                         continuous: bool = False, precision: Precision = Precision()) -> np.ndarray:
    """Eq. 10 with B_out = 1 token (Fig. 2's axis): 2 min(max(1, K/N_F), r) / (G b_w).

    B_rank / B_out = BW_eff / BW_out: the bytes per token on the wire cancel, the weights' do not.
    """
    b = effective_bandwidth(n_ffn, experts_per_token, 1.0, bandwidth_ratio)
    return arithmetic_intensity(b, local_experts(routed_experts, n_ffn, gpus_per_node, continuous), precision)


def regime_borders(experts_per_token: float, routed_experts: float, bandwidth_ratio: float,
                   gpus_per_node: float = 8) -> dict[str, float]:
    """N_F at which each regime starts (Fig. 2): stable at K/r, scale-out at K, G = 1 at E/g."""
    return {"stable": experts_per_token / bandwidth_ratio,
            "scale-out-bound": float(experts_per_token),
            "max-intensity": routed_experts / gpus_per_node}


def regime(n_ffn: ArrayLike, experts_per_token: float, routed_experts: float, bandwidth_ratio: float,
           gpus_per_node: float = 8) -> np.ndarray:
    """Regime of each N_F (array of names from :data:`REGIMES`).

    1. ``scale-up-bound``: K / N_F > r, scale-up limits B_rank, I grows as G shrinks;
    2. ``stable``: 1 <= K / N_F <= r (but N_F < K), I is constant;
    3. ``scale-out-bound`` (the dead zone): N_F >= K, B_rank = B_out, FLOPs per rank stop growing;
    4. ``max-intensity``: G = ceil(E / (N_F g)) = 1; takes precedence over the others.
    """
    return np.asarray(REGIMES)[regime_code(n_ffn, experts_per_token, routed_experts, bandwidth_ratio, gpus_per_node)]


def regime_code(n_ffn: ArrayLike, experts_per_token: float, routed_experts: float, bandwidth_ratio: float,
                gpus_per_node: float = 8) -> np.ndarray:
    """:func:`regime` as int8 indices into :data:`REGIMES` (for grids: names only at the output)."""
    n = np.asarray(n_ffn, dtype=float)
    g = local_experts(routed_experts, n, gpus_per_node)
    out = np.where(np.asarray(experts_per_token) / n > bandwidth_ratio, np.int8(0), np.int8(1))
    out = np.where(n >= experts_per_token, np.int8(2), out)
    return np.where(g <= 1, np.int8(3), out).astype(np.int8)


def intensity_sweep(model, hardware, n_ffn: ArrayLike, precision: Precision = Precision()) -> dict[str, np.ndarray]:
    """Fig. 2 data for one model on one device: columns keyed as the ``afd intensity`` rows."""
    n = np.asarray(n_ffn)
    k, e, r, g = model.experts_per_token, model.routed_experts, hardware.bandwidth_ratio, hardware.gpus_per_node
    return {
        "n_ffn": n,
        "local_experts": local_experts(e, n, g).astype(int),
        "intensity": normalised_intensity(n, k, e, r, g, precision=precision),
        "intensity_continuous": normalised_intensity(n, k, e, r, g, continuous=True, precision=precision),
        "regime": regime(n, k, e, r, g),
    }


def regime_spans(n_max: float, experts_per_token: float, routed_experts: float, bandwidth_ratio: float,
                 gpus_per_node: float = 8, n_min: float = 1.0) -> list[tuple[float, float, str]]:
    """Contiguous N_F intervals ``(start, end, regime)`` covering [n_min, n_max], for shading."""
    cuts = [b for b in regime_borders(experts_per_token, routed_experts, bandwidth_ratio, gpus_per_node).values()
            if n_min < b < n_max]
    edges = np.unique(np.array([n_min, *cuts, n_max], dtype=float))
    mids = regime((edges[:-1] + edges[1:]) / 2, experts_per_token, routed_experts, bandwidth_ratio, gpus_per_node)
    spans: list[tuple[float, float, str]] = []
    for lo, hi, name in zip(edges[:-1], edges[1:], mids):
        if spans and spans[-1][2] == name:
            spans[-1] = (spans[-1][0], float(hi), str(name))
        else:
            spans.append((float(lo), float(hi), str(name)))
    return spans
