"""The weights one GPU holds in a decode deployment, per design's pool (bytes), and the spare expert
slots a placement leaves: what the memory checks of :mod:`afdlib.decode.step` charge besides the
KV cache (:func:`afdlib.evaluator.attention.kv_cache_bytes`).

* :func:`dense_side_bytes`: every attention GPU (EP: every GPU): the token mixers' weights, the
  dense layers' FFNs, the BF16 input embedding and the LM head (one matrix where tied);
* :func:`ffn_side_bytes`: the MoE layers' experts on one GPU: its routed experts and the shared ones;
* :func:`spare_slots`: the expert slots beyond the E experts, the replicas a placement can use.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.evaluator.attention import mixer_weight_bytes
from afdlib.evaluator.dense import dense_intermediate_size, ffn_params
from afdlib.evaluator.grouped_gemm import expert_weight_bytes
from afdlib.inputs.specs import Model, Precision


def dense_side_bytes(model: Model, precision: Precision) -> float:
    """Bytes every attention (EP: every) GPU holds besides the routed experts and the KV cache."""
    h = model.hidden_size
    attn = mixer_weight_bytes(model, precision)
    dense = ffn_params(h, dense_intermediate_size(model), model.dense_layers, model.ffn_matrices) * precision.bytes("weights")
    lm = precision.bytes("lm_head")   # BF16 embedding + LM head; tied (tie_word_embeddings): one matrix
    embed = model.vocab_size * h * (max(2.0, lm) if model.tied_embeddings else 2.0 + lm)
    return attn + dense + embed


def ffn_side_bytes(model: Model, precision: Precision, local: ArrayLike) -> np.ndarray:
    """Bytes of the MoE layers' experts on one GPU: ``local`` routed experts and the shared ones."""
    mats = model.ffn_matrices
    return model.moe_layers * (expert_weight_bytes(local, model.routed_width, model.moe_intermediate_size, precision,
                                                   mats)
                               + expert_weight_bytes(model.shared_experts, model.hidden_size, model.shared_size,
                                                     precision, mats))


def spare_slots(local, ranks, experts):
    """Expert slots of a placement beyond the E experts: ``local`` slots on each of ``ranks`` GPUs,
    as the memory check charges them (EP: the deployment's redundant experts rounded up to whole
    slots per GPU; AFD: the FFN pool's rounding), the replicas a placement can use. One rule for
    both designs."""
    return np.maximum(np.asarray(local, dtype=float) * ranks - experts, 0.0)

