"""What one decode step gives (:func:`afdlib.decode.step.ep_step`, :func:`~afdlib.decode.step.afd_step`):
typed records, arrays broadcast over the inputs, seconds and bytes."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class PoolMemory:
    """What one GPU of a pool must hold before its KV cache: ``weights_bytes`` of its
    ``capacity_bytes`` usable (:attr:`Assumptions.hbm_usable_fraction` of its HBM), bytes."""

    pool: str                      # "GPU" (EP), "attention GPU" or "FFN GPU" (AFD)
    weights_bytes: np.ndarray
    capacity_bytes: float


@dataclass(frozen=True)
class AFDPipeline:
    """AFD's pipeline in one MoE layer, per micro-batch (arrays as the step's).

    ``bubble_attn``, ``bubble_ffn``: the pools' idle shares of a layer in the pipeline's steady
    state, 1 - m t / max(m t_a, m t_f, m t_c, t_a + t_f + t_c), in [0, 1) (of the overridden layer
    under an ``afd_overlap`` override); ``no_attention_bubble``, ``no_ffn_bubble``: the paper's Eqs. 3-4 of (t_a, t_f, t_c)
    (:func:`afdlib.analysis.budget.no_attention_bubble`, :func:`~afdlib.analysis.budget.no_ffn_bubble`);
    ``stage_max_s``: t_B = max(t_a, t_f, t_c); the two pools' memory per GPU (bytes)."""

    superpod: bool
    bubble_attn: np.ndarray
    bubble_ffn: np.ndarray
    no_attention_bubble: np.ndarray
    no_ffn_bubble: np.ndarray
    stage_max_s: np.ndarray
    attn_memory_bytes: np.ndarray
    ffn_memory_bytes: np.ndarray


@dataclass(frozen=True)
class Step:
    """One decode step, arrays broadcast over the inputs.

    Per-layer times are those of one MoE layer (per micro-batch for AFD's ``t_attn``, ``t_ffn``,
    ``t_comm``; for EP the whole layer's compute of all micro-batches split into attention and
    FFN, and its dispatch + combine; :meth:`per_micro_batch` and :meth:`per_layer` put both designs
    in one unit); ``t_layer`` is the schedule's makespan of the step's MoE
    layers over their number (the pipeline's fill and drain included). The rest of the step, seconds: ``dense_layer_s`` (one dense
    layer), ``lm_head_s``, ``mtp_s`` (the MTP drafts), ``t_gap_s``; ``tokens_per_request`` per step
    (1 + drafts); ``memory``: each pool's weights against its capacity; ``afd``: AFD's pipeline
    (None for EP). ``hidden_share``: the share of the step's MoE time that could overlap which the
    schedule overlaps, (serial - scheduled) / (serial - bound), in [0, 1]: serial is every stage
    of every micro-batch in turn, m L (t_a + t_f + t_c); bound the longest of each resource's
    busy time and one micro-batch's path, L max(m (t_a + t_f), m t_c, t_a + t_f + t_c) for EP
    (compute on the GPU, dispatch + combine on the network) and L max(m t_a, m t_f, m t_c, t_a +
    t_f + t_c) for AFD (:func:`afdlib.analysis.schedule.hidden_share`). For EP it is the share of the
    shorter of compute and all-to-all hidden (what ``ep_overlap`` overrides); 0 with one batch or
    normal kernels. ``bound_*`` index :data:`afdlib.evaluator.roofline.TIERS`; they are found when
    first asked for (``bounds`` computes them), so that a search ranking thousands of candidates
    by throughput does not pay for them.
    """

    design: str
    requests: np.ndarray           # per attention (EP: every) GPU
    step_s: np.ndarray
    tpot_s: np.ndarray
    tokens_per_s_per_gpu: np.ndarray
    t_attn: np.ndarray
    t_ffn: np.ndarray
    t_comm: np.ndarray
    t_layer: np.ndarray
    sigma: np.ndarray
    memory_bytes: np.ndarray       # per GPU (AFD: the fuller of the two pools, relative to its HBM)
    fits_memory: np.ndarray
    dense_layer_s: np.ndarray
    lm_head_s: np.ndarray
    mtp_s: np.ndarray
    t_gap_s: float
    tokens_per_request: int
    micro_batches: int
    memory: tuple[PoolMemory, ...]
    afd: AFDPipeline | None = None
    hidden_share: np.ndarray | None = None
    t_dispatch: np.ndarray | None = None   # EP: the dispatch part of t_comm (same unit); AFD: None (one lane)
    sbo_parts: tuple | None = None         # EP with single-batch overlap: (shared, up, down) of t_ffn, seconds
    domains: int = 1                       # AFD: data-parallel attention domains, micro_batches each
    bounds: Callable[[], tuple] | None = field(default=None, repr=False)   # () -> (attention, FFN, comm)

    @cached_property
    def _bounds(self) -> tuple:
        shape = np.shape(self.requests)
        return tuple(np.broadcast_to(b, shape) for b in self.bounds())

    def per_micro_batch(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(t_attn, t_ffn, t_comm) of one MoE layer and one micro-batch, seconds, for either design
        (EP's fields hold a layer's times over all its micro-batches: divided here)."""
        m = self.micro_batches if self.design == "ep" else 1
        return tuple(np.asarray(t, dtype=float) / m for t in (self.t_attn, self.t_ffn, self.t_comm))

    def per_layer(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(t_attn, t_ffn, t_comm) of one MoE layer over all its micro-batches, seconds, for either
        design: each stage's busy time per layer (AFD's fields hold one micro-batch's: multiplied)."""
        m = self.micro_batches if self.design == "afd" else 1
        d = self.domains     # the FFN pool serves every domain's micro-batches
        return tuple(np.asarray(t, dtype=float) * k for t, k in zip((self.t_attn, self.t_ffn, self.t_comm), (m, m * d, m)))

    @property
    def bound_attn(self) -> np.ndarray:
        return self._bounds[0]

    @property
    def bound_ffn(self) -> np.ndarray:
        return self._bounds[1]

    @property
    def bound_comm(self) -> np.ndarray:
        return self._bounds[2]
