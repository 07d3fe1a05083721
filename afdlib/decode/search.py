"""The best EP and the best AFD deployment of a model on given hardware, under an SLO.

Candidates (each a named, documented grid):

* **EP**: EP size R = g x {1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 32, 36, 48, 64} GPUs (and 1, 2, 4
  below one node), as long as every GPU holds an expert (R <= E + redundant); redundant experts
  0 or E / 8 (DeepSeek's 32 for 256 experts); DeepEP's low-latency or normal all-to-all kernels
  (normal: one copy per destination node, forwarded inside it, as AFD's two-stage transfer); one
  micro-batch or two (two-batch overlap re-reads the weights and launches the kernels twice, for
  the share of the all-to-all it hides);
* **AFD**: N_A and N_F in 1..16 nodes, 2, 3 or 4 micro-batches.

Not every form (EP: micro-batches x kernels; AFD: micro-batches) is backed by a published
deployment: :func:`afdlib.decode.validation.validated_forms` names the cases behind each, and
`afd advise` says which. ``validated_only`` restricts a search to those forms (a what-if: by
default the search ranges over all of them).

For every candidate the batch (requests per GPU, per attention GPU for AFD) is the largest that
meets the per-token SLO and fits in memory, found by a vectorised integer bisection (TPOT and
memory grow with the batch); throughput per GPU grows with the batch too, so that batch is the
candidate's best. The best candidate of each design maximises output tokens per second per GPU.

Everything broadcasts: model and hardware fields may be arrays over a map's cells
(:func:`afdlib.inputs.specs.stack`-style ``replace``), and :func:`compare` evaluates the cells in chunks
so a large map runs in bounded memory.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from afdlib.decode.deployment import AFDDeployment, Deployment, EPDeployment, Pool, step_function
from afdlib.decode.step import Assumptions
from afdlib.decode.batch import largest_batch
from afdlib.decode.validation import validated_forms
from afdlib.evaluator.alltoall import EP_MODES
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

EP_NODE_MULTIPLES = (1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 32, 36, 48, 64)
SUB_NODE_SIZES = (1, 2, 4)
AFD_NODES = tuple(range(1, 17))
AFD_MICRO_BATCHES = (2, 3, 4)
EP_MICRO_BATCHES = (1, 2)


def ep_candidates(model: Model, hardware: Hardware) -> tuple[np.ndarray, np.ndarray]:
    """(EP size, redundant experts) of every EP candidate, as flat arrays."""
    e = int(np.max(model.routed_experts))
    sizes = sorted({s for s in SUB_NODE_SIZES if s < hardware.gpus_per_node}
                   | {hardware.gpus_per_node * m for m in EP_NODE_MULTIPLES})
    red_options = sorted({0, max(1, e // 8)})
    pairs = [(s, r) for s in sizes for r in red_options if s <= e + r and not (r and s == 1)]
    size, red = (np.array(x, dtype=float) for x in zip(*pairs))
    return size, red


def afd_candidates(max_nodes: int = AFD_NODES[-1]) -> tuple[np.ndarray, np.ndarray]:
    """(N_A, N_F) of every AFD candidate, as flat arrays."""
    na, nf = np.meshgrid(np.arange(1, max_nodes + 1), np.arange(1, max_nodes + 1), indexing="ij")
    return na.ravel().astype(float), nf.ravel().astype(float)


@dataclass(frozen=True)
class Best:
    """The best candidate of one design (per map cell when the inputs are arrays).

    ``deployment``: the best candidate, its fields arrays over the cells (scalars without cells),
    its ``requests`` the batch found; ``tokens_per_s_per_gpu`` 0 (and ``requests`` 0) where no
    candidate is feasible. :meth:`at` gives one cell's.
    """

    design: str
    tokens_per_s_per_gpu: np.ndarray
    deployment: Deployment

    def at(self, index) -> Best:
        """One cell's best (its hardware as searched: stacked devices keep their arrays, see :meth:`on`)."""
        return Best(self.design, self.tokens_per_s_per_gpu[index], self.deployment.at(index))

    def on(self, hardware: Hardware, attn_hardware: Hardware | None = None) -> Best:
        """The same best on one device (AFD: its FFN pool; ``attn_hardware`` its attention pool)."""
        return replace(self, deployment=self.deployment.on(hardware, attn_hardware))


def _pick(rate: np.ndarray, configs: dict) -> tuple[np.ndarray, dict]:
    """Maximum over the last axis and the configuration where it is reached."""
    k = np.argmax(rate, axis=-1)
    best = np.take_along_axis(rate, k[..., None], axis=-1)[..., 0]
    return best, {name: np.take_along_axis(np.broadcast_to(v, rate.shape), k[..., None], axis=-1)[..., 0]
                  for name, v in configs.items()}


def _forms(design: str, kernels, micro_batches, validated_only: bool) -> list[tuple]:
    """(kernels, micro-batches) pairs searched: every combination, or only those a published
    deployment validates (AfdError where none of the allowed ones is)."""
    pairs = [(k, int(mb)) for k in kernels for mb in micro_batches]
    if not validated_only:
        return pairs
    ok = {(k, mb) for (d, mb, k) in validated_forms() if d == design}
    kept = [p for p in pairs if p in ok]
    if not kept:
        raise AfdError(f"no {design.upper()} form searched here is validated by a published deployment "
                       f"(data/deployments.yaml); drop the restriction to validated forms")
    return kept


def best_ep(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions(), cell_shape: tuple = (), modes=EP_MODES,
            micro_batches=EP_MICRO_BATCHES, validated_only: bool = False) -> Best:
    """The best EP candidate per cell (model and hardware fields may be arrays of ``cell_shape``),
    over EP sizes, redundant experts, the all-to-all kernels (``modes``, of
    :data:`afdlib.evaluator.alltoall.EP_MODES`) and one or two micro-batches (with one, nothing of
    the all-to-all is hidden); ``validated_only``: only the forms a published deployment validates."""
    forms = _forms("ep", modes, micro_batches, validated_only)
    size, red = ep_candidates(model, hardware)
    cells = hardware
    model, hardware, context = (_with_candidate_axis(x) for x in (model, hardware, context))
    axis = (1,) * len(cell_shape)
    size, red = size.reshape(axis + (-1,)), red.reshape(axis + (-1,))
    shape = cell_shape + (size.shape[-1],)

    rates, configs = [], []
    for mode, mb in forms:
        step_of = step_function(model, EPDeployment(hardware, size, red, int(mb), mode), context, budget,
                                precision, assumptions)
        n = largest_batch(step_of, budget.slo_s, shape)
        st = step_of(np.maximum(n, 1.0))
        valid = size <= np.asarray(model.routed_experts) + red   # every GPU holds an expert (per cell)
        rates.append(np.where((n > 0) & valid, st.tokens_per_s_per_gpu, 0.0))
        configs.append({"ep_size": np.broadcast_to(size, shape), "redundant": np.broadcast_to(red, shape),
                        "requests": n, "kernels": np.full(shape, float(EP_MODES.index(mode))),
                        "micro_batches": np.full(shape, float(mb))})
    rate = np.concatenate(rates, axis=-1)
    best, c = _pick(rate, {k: np.concatenate([c[k] for c in configs], axis=-1) for k in configs[0]})
    kernels = np.asarray(EP_MODES)[c["kernels"].astype(int)]
    return Best("ep", best, EPDeployment(cells, c["ep_size"], c["redundant"], c["micro_batches"], kernels,
                                         c["requests"]))


def best_afd(model: Model, attn_hardware: Hardware, ffn_hardware: Hardware, budget: Budget, context,
             precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
             cell_shape: tuple = (), micro_batches=AFD_MICRO_BATCHES, max_nodes: int = AFD_NODES[-1],
             validated_only: bool = False) -> Best:
    """The best AFD candidate per cell over N_A, N_F and the micro-batch counts (``validated_only``:
    only those a published deployment validates)."""
    micro_batches = [mb for _, mb in _forms("afd", (None,), micro_batches, validated_only)]
    na, nf = afd_candidates(max_nodes)
    cells = attn_hardware, ffn_hardware
    model, attn_hardware, ffn_hardware, context = (_with_candidate_axis(x) for x in
                                                   (model, attn_hardware, ffn_hardware, context))
    axis = (1,) * len(cell_shape)
    na, nf = na.reshape(axis + (-1,)), nf.reshape(axis + (-1,))
    shape = cell_shape + (na.shape[-1],)
    rates, configs = [], []
    for m in micro_batches:
        candidates = AFDDeployment(Pool(attn_hardware, na), Pool(ffn_hardware, nf), int(m))
        step_of = step_function(model, candidates, context, budget, precision, assumptions)
        n = largest_batch(step_of, budget.slo_s, shape)
        st = step_of(np.maximum(n, 1.0))
        rates.append(np.where(n > 0, st.tokens_per_s_per_gpu, 0.0))
        configs.append({"n_attn": np.broadcast_to(na, shape), "n_ffn": np.broadcast_to(nf, shape),
                        "micro_batches": np.full(shape, float(m)), "requests": n})
    rate = np.concatenate(rates, axis=-1)
    merged = {k: np.concatenate([c[k] for c in configs], axis=-1) for k in configs[0]}
    best, c = _pick(rate, merged)
    return Best("afd", best, AFDDeployment(Pool(cells[0], c["n_attn"]), Pool(cells[1], c["n_ffn"]),
                                           c["micro_batches"], c["requests"]))


def compare(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
            cell_shape: tuple = (), chunk: int | None = None, validated_only: bool = False) -> tuple[Best, Best]:
    """(best EP, best AFD) per cell. With ``chunk``, the cells' first axis is evaluated ``chunk``
    rows at a time (model and hardware arrays must then have that axis first or size 1);
    ``validated_only``: both searches held to the forms published deployments validate."""
    attn = attn_hardware or hardware
    if not chunk or not cell_shape or cell_shape[0] <= chunk:
        return (best_ep(model, hardware, budget, context, precision, assumptions, cell_shape,
                        validated_only=validated_only),
                best_afd(model, attn, hardware, budget, context, precision, assumptions, cell_shape,
                         validated_only=validated_only))
    parts = []
    for lo in range(0, cell_shape[0], chunk):
        rows = slice(lo, min(lo + chunk, cell_shape[0]))
        sub = (min(lo + chunk, cell_shape[0]) - lo,) + cell_shape[1:]
        parts.append(compare(_rows(model, rows), _rows(hardware, rows), budget, _rows(context, rows), precision,
                             assumptions, _rows(attn, rows) if attn_hardware else None, sub,
                             validated_only=validated_only))
    return _join([p[0] for p in parts], hardware, attn), _join([p[1] for p in parts], hardware, attn)


def _join(bests: list[Best], hardware: Hardware, attn: Hardware) -> Best:
    """The chunks' bests as one, on the whole (unchunked) hardware."""
    ds = [b.deployment for b in bests]

    def cat(get):
        return np.concatenate([np.atleast_1d(get(d)) for d in ds])
    rate = np.concatenate([b.tokens_per_s_per_gpu for b in bests])
    if bests[0].design == "ep":
        d = EPDeployment(hardware, cat(lambda d: d.ep_size), cat(lambda d: d.redundant),
                         cat(lambda d: d.micro_batches), cat(lambda d: d.kernels), cat(lambda d: d.requests))
    else:
        d = AFDDeployment(Pool(attn, cat(lambda d: d.attention.nodes)), Pool(hardware, cat(lambda d: d.ffn.nodes)),
                          cat(lambda d: d.micro_batches), cat(lambda d: d.requests))
    return Best(bests[0].design, rate, d)


def _with_candidate_axis(obj):
    """Array fields (over map cells) get a trailing axis, so they broadcast against the candidates."""
    if isinstance(obj, np.ndarray):
        return obj[..., None] if obj.ndim else obj
    if isinstance(obj, (Model, Hardware)):
        fields = {k: v[..., None] for k, v in vars(obj).items() if isinstance(v, np.ndarray) and v.ndim}
        return replace(obj, **fields) if fields else obj
    return obj


def _rows(obj, rows: slice):
    """Rows of every array field (first axis) of a Model/Hardware, or of an array."""
    if isinstance(obj, np.ndarray):
        return obj[rows] if obj.ndim and obj.shape[0] > 1 else obj
    if isinstance(obj, (Model, Hardware)):
        fields = {k: v[rows] for k, v in vars(obj).items()
                  if isinstance(v, np.ndarray) and v.ndim and v.shape[0] > 1}
        return replace(obj, **fields) if fields else obj
    return obj


def check_search_inputs(model: Model, budget: Budget, context: float) -> None:
    if model.attention is None:
        raise AfdError(f"model '{model.slug}' has no attention description; add an attention: block")
    if not np.all(np.asarray(context) >= 0):
        raise AfdError("context must be non-negative")
