"""The best EP and the best AFD deployment of a model on given hardware, under an SLO.

Candidates (each a named, documented grid):

* **EP**: EP size R = g x {1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 32, 36, 48, 64} GPUs (and 1, 2, 4
  below one node), as long as every GPU holds an expert (R <= E + redundant); redundant experts
  0 or E / 8 (DeepSeek's 32 for 256 experts); DeepEP's low-latency or normal all-to-all kernels
  (normal: one copy per destination node, forwarded inside it, as AFD's two-stage transfer); one
  micro-batch or two (two-batch overlap re-reads the weights and launches the kernels twice, for
  the share of the all-to-all it hides);
* **AFD**: N_A and N_F in 1..16 nodes, 2, 3 or 4 micro-batches, or the attention pool in 2 or 3
  data-parallel domains of 2 micro-batches each against the one FFN pool (xDeepServe's form,
  :data:`AFD_DOMAIN_FORMS`; only where the attention GPUs split into equal domains).

No bound of these grids binds silently. Where a cell's best sits on the top of a searched axis
(AFD: N_A or N_F at its largest node count; EP: the grid's largest EP size, while larger ones would
still give every GPU an expert), the cell's bounds are doubled (AFD: both pools, four node counts
per doubling, :func:`node_counts`; EP: node multiples 72, 96, 128, then 144, 192, 256) and only
the new candidates are searched, for the cells on a bound only, until each cell's best is inside
its bounds or they reach their hard cap (:data:`AFD_NODE_CAP`, :data:`EP_MULTIPLE_CAP`), in chunks
of bounded size (:func:`afdlib.decode.bounds.widen`). :class:`Best` says per cell how far each axis
was searched (``searched``) and which bounds its best still sits on (``on_bound``). The redundant
experts (0 or E / 8) are not widened: a best at E / 8 is reported as on its bound.

Not every form (EP: micro-batches x kernels; AFD: micro-batches) is backed by a published
deployment: :func:`afdlib.decode.validation.validated_forms` names the cases behind each, and
`afd advise` says which. ``validated_only`` restricts a search to those forms (a what-if: by
default the search ranges over all of them).

For every candidate the batch (requests per GPU, per attention GPU for AFD) is the largest that
meets the per-token SLO and fits in memory, found by :func:`afdlib.decode.batch.batches` (TPOT and
memory grow with the batch; a pair's hundreds of candidate-cells by vectorised bisection, a map's
thousands by the same batch in fewer step evaluations); throughput per GPU grows with the batch too, so that batch is the
candidate's best. The best candidate of each design maximises output tokens per second per GPU.

Everything broadcasts: model and hardware fields may be arrays over a map's cells
(:func:`afdlib.inputs.specs.stack`-style ``replace``), and :func:`compare` evaluates the cells in chunks
so a large map runs in bounded memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from afdlib.decode.deployment import AFDDeployment, Deployment, EPDeployment, Pool, step_function
from afdlib.decode.step import Assumptions
from afdlib.decode.batch import MAX_REQUESTS, Rivals, batches
from afdlib.decode.bounds import AFD_NODE_CAP, EP_MULTIPLE_CAP, take_cells, widen
from afdlib.decode.validation import validated_forms
from afdlib.evaluator.alltoall import EP_MODES
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

EP_NODE_MULTIPLES = (1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 32, 36, 48, 64)
SUB_NODE_SIZES = (1, 2, 4)
AFD_NODES = tuple(range(1, 17))
AFD_MICRO_BATCHES = (2, 3, 4)
AFD_DOMAIN_FORMS = ((2, 2), (3, 2))
"""(attention domains, micro-batches per domain) AFD searches besides one domain: xDeepServe's 3 x 2
(arXiv 2508.02520v6, data/deployments.yaml) and the 2 x 2 between it and plain two-batch AFD."""
EP_MICRO_BATCHES = (1, 2)


def ep_multiples(top: int = EP_NODE_MULTIPLES[-1]) -> set[int]:
    """The node multiples of the EP grid up to ``top`` (:data:`EP_NODE_MULTIPLES`, and from 64 on
    each doubling's doubles of them: 72, 96, 128 up to 128)."""
    out, k = set(EP_NODE_MULTIPLES), 2
    while EP_NODE_MULTIPLES[-1] * k <= 2 * top:
        out |= {m * k for m in EP_NODE_MULTIPLES}
        k *= 2
    return {m for m in out if m <= top}


def ep_candidates(model: Model, hardware: Hardware, top: int = EP_NODE_MULTIPLES[-1],
                  above: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(EP size, redundant experts) of every EP candidate, as flat arrays: node multiples up to
    ``top`` (:func:`ep_multiples`) and above ``above`` (a widening's new ones)."""
    e = int(np.max(model.routed_experts))
    g = hardware.gpus_per_node
    sizes = sorted(({s for s in SUB_NODE_SIZES if s < g} if not above else set())
                   | {g * m for m in ep_multiples(top) if m > above})
    red_options = sorted({0, max(1, e // 8)})
    pairs = [(s, r) for s in sizes for r in red_options if s <= e + r and not (r and s == 1)]
    if not pairs:
        return np.zeros(0), np.zeros(0)
    size, red = (np.array(x, dtype=float) for x in zip(*pairs))
    return size, red


def most_ffn_gpus(model: Model, hardware: Hardware, design: str) -> int:
    """The most GPUs a searched ``design``'s experts may spread over, at the caps its widening stops at
    (EP: the largest group; AFD: the largest FFN pool): the fewest ranks a given sigma is bounded by
    (none of its candidates is less balanced than 1 / its ranks)."""
    if design == "ep":
        return int(ep_candidates(model, hardware, EP_MULTIPLE_CAP)[0].max())
    return int(AFD_NODE_CAP * hardware.gpus_per_node)


def node_counts(bound: int, base: int = AFD_NODES[-1]) -> np.ndarray:
    """The node counts an AFD pool is searched over up to ``bound``: 1..``base``, then for each
    doubling B -> 2B the four counts B + B/4, ..., 2B (20, 24, 28, 32; 40, ..., 64; 80, ..., 128:
    about the EP grid's resolution beyond 64 nodes, 72, 96, 128)."""
    out, b = list(range(1, min(bound, base) + 1)), base
    while b < bound:
        step = max(1, b // 4)
        out += range(b + step, min(2 * b, bound) + 1, step)
        b *= 2
    return np.array(out, dtype=float)


def afd_candidates(max_nodes: int = AFD_NODES[-1], inside: tuple[int, int] = (0, 0),
                   max_ffn: int | None = None, base: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(N_A, N_F) of every AFD candidate, as flat arrays: N_A over :func:`node_counts` up to
    ``max_nodes``, N_F up to ``max_ffn`` (default the same), from a first grid of 1..``base`` (default
    ``max_nodes``); less those with N_A <= inside[0] and N_F <= inside[1] (a widening's new ones)."""
    base = base or max_nodes
    na, nf = np.meshgrid(node_counts(max_nodes, base), node_counts(max_ffn or max_nodes, base), indexing="ij")
    new = (na > inside[0]) | (nf > inside[1])
    return na[new], nf[new]


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
    searched: dict = field(default_factory=dict)    # axis -> how far it was searched, per cell
    on_bound: dict = field(default_factory=dict)    # axis -> the best sits on that bound, per cell (bool)

    def at(self, index) -> Best:
        """One cell's best (its hardware as searched: stacked devices keep their arrays, see :meth:`on`)."""
        return Best(self.design, self.tokens_per_s_per_gpu[index], self.deployment.at(index),
                    {k: _item(v, index) for k, v in self.searched.items()},
                    {k: _item(v, index) for k, v in self.on_bound.items()})

    @property
    def bound(self) -> np.ndarray:
        """Per cell: the best sits on a bound the search could not (AFD: :data:`AFD_NODE_CAP`; EP:
        :data:`EP_MULTIPLE_CAP`) or does not (EP's redundant experts) widen."""
        flags = [np.asarray(v, dtype=bool) for v in self.on_bound.values()]
        return np.logical_or.reduce(flags) if flags else np.zeros(np.shape(self.tokens_per_s_per_gpu), bool)

    def bound_words(self) -> list[str]:
        """The bounds one cell's best sits on, in words (empty where none): e.g. "N_F = 128 nodes (the
        search's hard cap)"."""
        words = {"n_attn": "N_A = {} nodes (the search's hard cap)", "n_ffn": "N_F = {} nodes (the search's hard cap)",
                 "ep_size": "EP size {} (the search's hard cap)",
                 "redundant": "{} redundant experts (the search's E / 8, not widened)"}
        out = [words[k].format(int(self.searched[k])) for k, v in self.on_bound.items() if bool(np.all(v))]
        requests = getattr(self.deployment, "requests", None)
        if requests is not None and bool(np.all(np.asarray(requests, dtype=float) >= MAX_REQUESTS)):
            out.append(f"{MAX_REQUESTS:,} requests per GPU (the batch search's cap)")   # a larger batch may do more
        return out

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
    """(kernels, micro-batches, single-batch overlap) searched: every combination, or only those a
    published deployment validates (AfdError where none of the allowed ones is). EP's one micro-batch on
    low-latency kernels is searched with single-batch overlap, which is never slower than without
    (max <= sum, :func:`afdlib.analysis.schedule.ep_moe_time`), and without it only where a published
    deployment validates that form and the other does not (``validated_only``)."""
    pairs = [(k, int(mb), sbo) for k in kernels for mb in micro_batches
             for sbo in ((False, True) if design == "ep" and k == "low-latency" and int(mb) == 1 else (False,))]
    if not validated_only:
        return [p for p in pairs if not (p[2] is False and (p[0], p[1], True) in pairs)]
    ok = {(k, mb, sbo) for (d, mb, k, sbo, domains) in validated_forms() if d == design and domains == 1}
    kept = [p for p in pairs if p in ok]
    kept = [p for p in kept if not (p[2] is False and (p[0], p[1], True) in kept)]
    if not kept:
        raise AfdError(f"no {design.upper()} form searched here is validated by a published deployment "
                       f"(data/deployments.yaml); drop the restriction to validated forms")
    return kept


def best_ep(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions(), cell_shape: tuple = (), modes=EP_MODES,
            micro_batches=EP_MICRO_BATCHES, validated_only: bool = False, twins=None) -> Best:
    """The best EP candidate per cell (model and hardware fields may be arrays of ``cell_shape``),
    over EP sizes, redundant experts, the all-to-all kernels (``modes``, of
    :data:`afdlib.evaluator.alltoall.EP_MODES`) and one or two micro-batches (with one, nothing of
    the all-to-all is hidden); ``validated_only``: only the forms a published deployment validates.
    Where the best is the grid's largest EP size and larger ones would still give every GPU an
    expert, the grid is widened (module docstring). ``twins``: per cell (flat), a cell whose steps are
    this one's (they differ in their SLO only; :class:`~afdlib.decode.batch.Rivals`), or None."""
    forms = _forms("ep", modes, micro_batches, validated_only)
    cells = hardware
    g, top = hardware.gpus_per_node, EP_NODE_MULTIPLES[-1]

    def search(inputs, shape, lims, twins=None, floor=None):
        (old,), (new,) = lims
        size, red = ep_candidates(model, hardware, new, old)
        return _ep_search(*inputs, precision, shape, forms, size, red, twins, floor) if size.size else None
    inputs = (model, hardware, context, assumptions, budget)     # a widening takes its cells of each
    rate, c = search(inputs, cell_shape, ((0,), (top,)), twins)
    red_max = max(ep_candidates(model, hardware)[1])
    room = np.broadcast_to(np.asarray(model.routed_experts, dtype=float) + red_max, cell_shape).reshape(-1)
    rate, c, lim, on = widen(rate, c, {"ep_size": top}, {"ep_size": EP_MULTIPLE_CAP}, cell_shape, inputs, search,
                             _ring_size, on_top=lambda c, lim: (c["ep_size"] >= g * lim["ep_size"]) & (g * lim["ep_size"] < room))
    kernels = np.asarray(EP_MODES)[c["kernels"].astype(int)]
    on["redundant"] = (rate > 0) & (c["redundant"] >= red_max) & (red_max > 0)
    searched = {"ep_size": g * lim["ep_size"], "redundant": np.full(np.shape(rate), float(red_max))}
    return Best("ep", rate, EPDeployment(cells, c["ep_size"], c["redundant"], c["micro_batches"], kernels,
                                         c["requests"], c["sbo"] > 0), searched, on)


def _ep_search(model, hardware, context, assumptions, budget, precision, cell_shape, forms, size, red, twins=None,
               floor=None):
    """(best rate, its configuration) per cell over the EP candidates (``size``, ``red``: flat arrays);
    ``twins`` and ``floor`` (each cell's rate to beat, a widening's best so far): :class:`Rivals`'."""
    model, hardware, context = (_with_candidate_axis(x) for x in (model, hardware, context))
    axis = (1,) * len(cell_shape)
    size, red = size.reshape(axis + (-1,)), red.reshape(axis + (-1,))
    shape = cell_shape + (size.shape[-1],)
    rates, configs = [], []
    valid = np.broadcast_to(size <= np.asarray(model.routed_experts) + red, shape)  # every GPU holds an expert
    floor = _floor(floor, cell_shape)             # each cell's best rate so far, over every form
    for mode, mb, sbo in forms:
        def make(m, h, s, r, c, a, b, mode=mode, mb=mb, sbo=sbo):
            return step_function(m, EPDeployment(h, s, r, int(mb), mode, sbo=sbo), c, b, precision, a)
        n, tokens = _batches(make, (model, hardware, size, red, context, assumptions, budget), shape, "ep",
                             Rivals(shape[-1], valid.reshape(-1), floor, twins))
        rates.append(np.where((n > 0) & valid, tokens, 0.0))
        configs.append({"ep_size": np.broadcast_to(size, shape), "redundant": np.broadcast_to(red, shape),
                        "requests": n, "kernels": np.full(shape, float(EP_MODES.index(mode))),
                        "micro_batches": np.full(shape, float(mb)), "sbo": np.full(shape, float(sbo))})
    rate = np.concatenate(rates, axis=-1)
    return _pick(rate, {k: np.concatenate([c[k] for c in configs], axis=-1) for k in configs[0]})


def best_afd(model: Model, attn_hardware: Hardware, ffn_hardware: Hardware, budget: Budget, context,
             precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
             cell_shape: tuple = (), micro_batches=AFD_MICRO_BATCHES, max_nodes: int = AFD_NODES[-1],
             validated_only: bool = False, cap: int | None = None, domain_forms=AFD_DOMAIN_FORMS,
             twins=None) -> Best:
    """The best AFD candidate per cell over N_A, N_F in 1..``max_nodes``, the micro-batch counts and the
    attention-domain forms (``domain_forms``; ``validated_only``: only the forms a published deployment
    validates); N_A or N_F widened up to
    ``cap`` nodes (default :data:`AFD_NODE_CAP`) where the best sits on its bound (module docstring;
    ``cap=max_nodes``: never). ``twins``: as :func:`best_ep`'s."""
    cap = AFD_NODE_CAP if cap is None else cap
    forms = _afd_forms(micro_batches, domain_forms, validated_only)
    cells = attn_hardware, ffn_hardware

    def search(inputs, shape, lims, twins=None, floor=None):
        (old_a, old_f), (new_a, new_f) = lims
        na, nf = afd_candidates(new_a, (old_a, old_f), new_f, max_nodes)
        return _afd_search(*inputs, precision, shape, forms, na, nf, twins, floor)
    inputs = (model, attn_hardware, ffn_hardware, context, assumptions, budget)   # a widening takes its cells of each
    rate, c = search(inputs, cell_shape, ((0, 0), (max_nodes, max_nodes)), twins)
    rate, c, lim, on = widen(rate, c, {"n_attn": max_nodes, "n_ffn": max_nodes},
                             {"n_attn": max(cap, max_nodes), "n_ffn": max(cap, max_nodes)}, cell_shape, inputs, search,
                             _ring_size)
    return Best("afd", rate, AFDDeployment(Pool(cells[0], c["n_attn"]), Pool(cells[1], c["n_ffn"]),
                                           c["micro_batches"], c["requests"], domains=c["domains"]), lim, on)


def _afd_forms(micro_batches, domain_forms, validated_only: bool) -> list[tuple[int, int]]:
    """(micro-batches, attention domains) AFD searches: each micro-batch count in one domain and each
    of ``domain_forms`` ((domains, micro-batches per domain)); ``validated_only``: only those a
    published deployment validates (AfdError where none is)."""
    forms = [(int(mb), 1) for mb in micro_batches] + [(int(mb), int(d)) for d, mb in domain_forms]
    if not validated_only:
        return forms
    ok = {(mb, d) for (design, mb, _, _, d) in validated_forms() if design == "afd"}
    kept = [f for f in forms if f in ok]
    if not kept:
        raise AfdError("no AFD form searched here is validated by a published deployment "
                       "(data/deployments.yaml); drop the restriction to validated forms")
    return kept


def _afd_search(model, attn_hardware, ffn_hardware, context, assumptions, budget, precision, cell_shape,
                forms, na, nf, twins=None, floor=None):
    """(best rate, its configuration) per cell over the AFD candidates (``na``, ``nf``: flat arrays) and
    ``forms`` ((micro-batches, attention domains)); a domain form only where the attention GPUs split
    into equal domains (else rate 0); ``twins``, ``floor``: :func:`_ep_search`'s."""
    model, attn_hardware, ffn_hardware, context = (_with_candidate_axis(x) for x in
                                                   (model, attn_hardware, ffn_hardware, context))
    axis = (1,) * len(cell_shape)
    rates, configs = [], []
    g_a = np.asarray(attn_hardware.gpus_per_node, dtype=float)
    plain = [m for m, d in forms if d == 1]
    floor = _floor(floor, cell_shape)             # each cell's best rate so far, over every form
    # the one-domain forms in one evaluation, a micro-batch count per candidate (the schedule's closed
    # form takes it); each domain form apart (its schedule is the recurrence, one count per call)
    groups = ([(np.repeat(np.asarray(plain, dtype=float), na.size), 1)] if plain else []) + \
        [(float(m), d) for m, d in forms if d != 1]
    for m, d in groups:
        a_n, f_n = (np.tile(na, len(plain)), np.tile(nf, len(plain))) if d == 1 else (na, nf)
        # a domain form only where the attention GPUs split into equal domains: the others are not
        # evaluated (one node size for every cell) or count as infeasible (node sizes per cell)
        keep = (np.mod(a_n * g_a, d) == 0) if np.ndim(g_a) == 0 else np.ones(a_n.shape, bool)
        if not keep.any():
            continue
        a_n, f_n = a_n[keep].reshape(axis + (-1,)), f_n[keep].reshape(axis + (-1,))
        mb = m[keep].reshape(axis + (-1,)) if np.ndim(m) else int(m)
        shape = cell_shape + (a_n.shape[-1],)

        def make(mo, ha, hf, a_n, f_n, c, a, mb, b, d=d):
            return step_function(mo, AFDDeployment(Pool(ha, a_n), Pool(hf, f_n), mb, domains=d), c, b, precision, a)
        inputs = (model, attn_hardware, ffn_hardware, a_n, f_n, context, assumptions, mb, budget)
        valid = np.broadcast_to(np.mod(a_n * g_a, d) == 0, shape)
        n, tokens = _batches(make, inputs, shape, "afd", Rivals(shape[-1], valid.reshape(-1), floor, twins))
        rates.append(np.where((n > 0) & valid, tokens, 0.0))
        configs.append({"n_attn": np.broadcast_to(a_n, shape), "n_ffn": np.broadcast_to(f_n, shape),
                        "micro_batches": np.broadcast_to(np.asarray(mb, dtype=float), shape), "requests": n,
                        "domains": np.full(shape, float(d))})
    rate = np.concatenate(rates, axis=-1)
    return _pick(rate, {k: np.concatenate([c[k] for c in configs], axis=-1) for k in configs[0]})


def _floor(floor, cell_shape: tuple) -> np.ndarray:
    """Each cell's rate to beat, flat (a copy: the search raises it in place); 0 where none is given."""
    n = int(np.prod(cell_shape))
    return np.zeros(n) if floor is None else np.array(np.broadcast_to(np.asarray(floor, dtype=float).reshape(-1), (n,)))


def _batches(make, inputs: tuple, shape: tuple, design: str, rivals: Rivals) -> tuple[np.ndarray, np.ndarray]:
    """(largest batch, tokens/s per GPU there) per candidate-cell of ``shape``, of the steps
    ``make(*inputs)`` (inputs broadcasting over ``shape``; the budget's SLO may not):
    :func:`afdlib.decode.batch.batches`, the candidates of a cell (the last axis) ``rivals``: where one
    cannot beat its cell's best, its batch and rate are a feasible pair below its own best."""
    budget = inputs[-1]
    points = int(np.prod(shape))
    flat = []

    def step_at(requests, at):
        if not flat:
            flat.append(take_cells(inputs, shape, np.arange(points)))
        return make(*take_cells(flat[0], (points,), at))(requests)
    n, tokens, _ = batches(lambda: make(*inputs), step_at, budget.slo_s, shape, design, rivals=rivals)
    return n, tokens


def _ring_size(bounds) -> int:
    """Candidates a widening adds (an upper estimate for EP: its node multiples)."""
    old, new = bounds
    if len(new) == 1:
        return int(new[0])
    return int(np.prod([node_counts(b).size for b in new]) - np.prod([node_counts(b).size for b in old]))


def _item(value, index):
    return value[index] if np.ndim(value) else value


def compare(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
            cell_shape: tuple = (), chunk: int | None = None, validated_only: bool = False,
            twins=None) -> tuple[Best, Best]:
    """(best EP, best AFD) per cell. With ``chunk``, the cells' first axis is evaluated ``chunk``
    rows at a time (model and hardware arrays must then have that axis first or size 1);
    ``validated_only``: both searches held to the forms published deployments validate; ``twins``: as
    :func:`best_ep`'s (not with ``chunk``)."""
    attn = attn_hardware or hardware
    if not chunk or not cell_shape or cell_shape[0] <= chunk:
        return (best_ep(model, hardware, budget, context, precision, assumptions, cell_shape,
                        validated_only=validated_only, twins=twins),
                best_afd(model, attn, hardware, budget, context, precision, assumptions, cell_shape,
                         validated_only=validated_only, twins=twins))
    if twins is not None:
        raise AfdError("twins and chunks do not combine: search the cells in one call")
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
                         cat(lambda d: d.micro_batches), cat(lambda d: d.kernels), cat(lambda d: d.requests),
                         cat(lambda d: d.sbo))
    else:
        d = AFDDeployment(Pool(attn, cat(lambda d: d.attention.nodes)), Pool(hardware, cat(lambda d: d.ffn.nodes)),
                          cat(lambda d: d.micro_batches), cat(lambda d: d.requests), domains=cat(lambda d: d.domains))
    extra = [{k: np.concatenate([np.atleast_1d(getattr(b, f)[k]) for b in bests]) for k in getattr(bests[0], f)}
             for f in ("searched", "on_bound")]
    return Best(bests[0].design, rate, d, *extra)


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
