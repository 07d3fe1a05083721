"""Blocks of settings searched as the cells of one call: every search one explained answer needs (the
SLO axis' defaults and quadratures, the tornado's ends, the break-even's bandwidth grid) pays one
search's fixed cost instead of one each, with each block's results those of searching it alone
(tests/test_explain.py)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from afdlib.decision.uncertainty import setting_bests

DEFAULTS = {"compute": 1.0, "network": 1.0, "fixed": 1.0, "memory": 0.0, "skew": 0.0, "gap": 1.0, "scale_out": 1.0}
"""Each setting's value at the model's defaults (factors 1, the HBM and skew shares 0, all of the gap;
``scale_out``: a factor on the scale-out, :func:`afdlib.decision.sweetspot.with_network`)."""


def search_blocks(model, hardware, attn_hardware, budget, context, precision, assumptions, validated_only,
                  blocks: list[dict], ep_hardware=None, cells: tuple = ()) -> tuple:
    """(best EP, best AFD, one slice per block) of blocks of settings searched as the cells of one
    :func:`afdlib.decision.uncertainty.setting_bests` call: each block a dict of equal-length arrays over
    its cells, keys of :data:`DEFAULTS` and ``slo`` (seconds; a key left out at its default, the budget's
    SLO; ``{}``: one cell at the defaults). The bests run over every block's cells in order (the last
    axis); a block's are those of its slice, as if searched alone (``ep_hardware``: EP's device).
    ``cells``: leading axes the device's fields already carry (stacked devices,
    :mod:`afdlib.decision.stacked`), in front of the blocks' axis."""
    sizes = [max((np.size(v) for v in b.values()), default=1) for b in blocks]
    settings = {k: np.concatenate([np.broadcast_to(np.asarray(b.get(k, d), dtype=float), (m,))
                                   for b, m in zip(blocks, sizes)])
                for k, d in (*DEFAULTS.items(), ("slo", budget.slo_s))}
    slo = settings.pop("slo")
    ep, afd = setting_bests(model, hardware, attn_hardware, replace(budget, slo_s=slo[:, None]), context, precision,
                            assumptions, validated_only=validated_only, ep_hardware=ep_hardware,
                            twins=twins_of(settings, int(np.prod(cells))),
                            **{k: np.broadcast_to(v, cells + v.shape) for k, v in settings.items()})
    ends = np.cumsum([0, *sizes])
    return ep, afd, [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:])]


def twins_of(settings: dict[str, np.ndarray], leading: int = 1) -> np.ndarray:
    """Per cell (flat over ``leading`` stacked devices x the settings' cells), the first cell of the same
    device with the same settings (the SLO aside, which no step reads): cells whose searches probe the
    same steps (:class:`afdlib.decode.batch.Rivals`)."""
    rows = np.stack([np.asarray(settings[k], dtype=float) for k in sorted(settings)], axis=1)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    within = first[inverse.reshape(-1)]
    m = within.size
    return (np.arange(leading)[:, None] * m + within[None, :]).reshape(-1)
