"""One chunk of a sweep's grid through the decode model: the same vectorised functions as `afd
throughput` (a given deployment: :func:`afdlib.decode.deployment.step_function` at the largest batch
of :func:`afdlib.decode.batch.batches`, which searches a chunk of thousands of points in fewer
evaluations) and as `afd advise` and the sweet-spot maps (a searched
deployment: :func:`afdlib.decode.search.best_ep`, :func:`~afdlib.decode.search.best_afd`), with the
chunk's points as one flat axis of cells. No formula lives here: this module only lays the spec's
values onto the library's types.

A chunk holds one value of every :meth:`Spec.scalar <afdlib.sweep.spec.Spec.scalar>` axis, so those
become Python numbers (or names); every other axis is an array over the chunk's points.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from afdlib.decode.batch import FIRST_BOUND, batches
from afdlib.decode.deployment import AFDDeployment, EPDeployment, Pool, step_function
from afdlib.decode.search import AFD_NODES, best_afd, best_ep, node_counts
from afdlib.decision.sweetspot import with_shape
from afdlib.decode.step import DECODE_T_GAP_S, EP_KERNELS, Assumptions
from afdlib.errors import AfdError
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget, Hardware, Model, Precision
from afdlib.sweep.spec import FIELDS, Spec

_HW_TARGET = {"fp8_tflops": ("flops", 1e12, "compute"), "bf16_tflops": ("bf16_flops", 1e12, "compute"),
              "fp4_tflops": ("fp4_flops", 1e12, "compute"), "hbm_tb_per_s": ("hbm_bytes_per_s", 1e12, "hbm"),
              "hbm_gb": ("hbm_bytes", 1e9, None), "scale_up_gb_per_s": ("scale_up_bytes_per_s", 1e9, "scale_up"),
              "scale_out_gb_per_s": ("scale_out_bytes_per_s", 1e9, "scale_out"),
              "inter_domain_gb_per_s": ("inter_domain_bytes_per_s", 1e9, "scale_out"),
              "scale_out_latency_us": ("scale_out_latency_s", 1e-6, None),
              "scale_up_latency_us": ("scale_up_latency_s", 1e-6, None),
              "gpus_per_node": ("gpus_per_node", 1, None), "scale_up_domain": ("scale_up_domain", 1, None)}
"""Hardware spec field -> (Hardware attribute, SI factor, the datasheet profile's efficiency applied)."""

VARIABLES = ("tokens_per_s_per_gpu", "tpot_ms", "batch_per_gpu", "feasible")
UNITS = {"tokens_per_s_per_gpu": "output tokens/s per GPU", "tpot_ms": "ms", "batch_per_gpu": "requests per GPU",
         "feasible": "", "ep_size": "GPUs", "redundant": "experts", "n_attn": "nodes", "n_ffn": "nodes",
         "micro_batches": "micro-batches", "on_search_bound": "", "moe_intermediate_size": "elements",
         "routed_experts": "experts", "experts_per_token": "experts"}
CHOICES = {"ep": ("ep_size", "redundant", "micro_batches", "on_search_bound"),
           "afd": ("n_attn", "n_ffn", "micro_batches", "on_search_bound")}


def variables(spec: Spec, design: str) -> tuple[str, ...]:
    """The variables one design gives: :data:`VARIABLES`, and the deployment found where one is searched."""
    if not spec.searched(design):
        return VARIABLES
    if spec.fully_searched(design):
        return VARIABLES + CHOICES[design]
    return VARIABLES + (("n_ffn",) if not spec.given("n_ffn") else ("n_attn",))   # AFD: one pool searched


def system(spec: Spec) -> tuple[Model, Hardware]:
    """The spec's model and hardware as the catalogue loads them (checked against the axes)."""
    model, hw = _load(spec.model, spec.model_profile, spec.hardware, spec.hw_profile)
    if model.attention is None:
        raise AfdError(f"model '{model.slug}' has no attention description; add an attention: block")
    names = set(spec.axes) | set(spec.fixed)
    if "fp8_tflops" in names and hw.flops_dtype != "fp8":
        raise AfdError(f"hardware '{hw.slug}' has no FP8 rate to vary; vary bf16_tflops")
    if hw.superpod and names & {"scale_out_gb_per_s", "inter_domain_gb_per_s"}:
        raise AfdError(f"hardware '{hw.slug}' is a Superpod: its scale-out is its scale-up fabric; vary scale_up_gb_per_s")
    for name in ("fp4_tflops", "inter_domain_gb_per_s", "bf16_tflops"):
        if name in names and getattr(hw, _HW_TARGET[name][0]) is None and hw.flops_dtype != "bf16":
            raise AfdError(f"hardware '{hw.slug}' has no {name} to vary")
    k_lo = min(_values(spec, "experts_per_token", model.experts_per_token))
    e_lo = min(_values(spec, "routed_experts", model.routed_experts))
    if max(_values(spec, "experts_per_token", model.experts_per_token)) > e_lo or k_lo < 1:
        raise AfdError("experts_per_token exceeds routed_experts at some point of the grid")
    return model, hw


CHECKED_COMBINATIONS = 10_000
"""Most combinations of the scalar model and node axes :func:`check_grid` builds one by one (beyond it, each
axis' values with the others at their first)."""


def check_grid(spec: Spec) -> None:
    """Refuse a grid with a model or device the commands refuse: each combination of the chunk-scalar model
    fields and node sizes built and checked as a file's would be (layers that do not add up, a vocabulary of
    0, a scale-up domain that splits no node), and a fixed or varied sigma below 1 / the GPUs a deployment
    spreads the experts over (:func:`_ranks`: no placement is that unbalanced)."""
    from itertools import product

    from afdlib.inputs import checks
    from afdlib.inputs.catalog import refuse_profile_of_flat
    from afdlib.inputs.specs import check_hardware, check_model
    model, hw = system(spec)
    if spec.hw_profile_given:
        refuse_profile_of_flat(hw, spec.hardware, f"hw_profile {spec.hw_profile}")
    names = [n for n in spec.axes if n in _SCALAR_CHECKED]
    fixed = {n: v for n, v in spec.fixed.items() if n in _SCALAR_CHECKED}
    grids = [list(spec.axes[n]) for n in names]
    if np.prod([len(g) for g in grids], dtype=float) <= CHECKED_COMBINATIONS:
        combos = product(*grids)
    else:
        combos = ([g[0] if j != i else v for j, g in enumerate(grids)] for i, g in enumerate(grids) for v in g)
    for combo in combos:
        values = {**fixed, **dict(zip(names, combo))}
        at = ", ".join(f"{k} {float(v):g}" for k, v in values.items())
        try:
            check_model(model_with(model, values))
            check_hardware(hardware_with(hw, values))
        except AfdError as e:
            raise AfdError(f"at {at}: {e}" if at else str(e)) from None
    small = [v for v in _values(spec, "sparsity", 1.0) if float(v) < 1]   # beyond the other end: the nearest
    if small:                                                               # member (K = 1), recorded as such
        raise AfdError(f"sparsity {float(small[0]):g}: E / K is at least 1 (no token takes more experts than there are)")
    from afdlib.decode.search import EP_MICRO_BATCHES
    bad = [v for v in _values(spec, "ep_micro_batches", 2) if int(v) not in EP_MICRO_BATCHES]
    if bad:
        raise AfdError(f"ep_micro_batches {bad[0]:g}: EP runs {' or '.join(map(str, EP_MICRO_BATCHES))} micro-batches "
                       "(afd throughput --ep-micro-batches)")
    if max(_values(spec, "micro_batches", 3)) > 64:
        raise AfdError("micro_batches: at most 64 (afd throughput --micro-batches)")
    for name, mb in (("ep_overlap", "ep_micro_batches"), ("afd_overlap", "micro_batches")):
        if spec.given(name) and 1 in [int(v) for v in _values(spec, mb, 0)]:
            raise AfdError(f"{name} sets how much of the other micro-batches' work hides a stage; at {mb} 1 there "
                           "is none: leave 1 out of the axis, or leave the overlap out")
    if spec.designs == ("ep",) and spec.given("ep_size") and spec.given("gpus_per_node"):
        raise AfdError("gpus_per_node sets an AFD node (the unit of n_attn and n_ffn) and EP's search grid; a given "
                       "ep_size spans the scale-up domain, which it does not change: vary scale_up_domain")
    room = max(_values(spec, "routed_experts", model.routed_experts)) + max(_values(spec, "redundant", 0))
    if "ep" in spec.designs and max(_values(spec, "ep_size", 0)) > room:
        raise AfdError(f"ep_size {max(_values(spec, 'ep_size', 0)):g} exceeds the routed + redundant experts at every "
                       f"point (at most {room:g}): every GPU of an EP group holds an expert")
    if spec.given("sigma"):
        ranks = [_ranks(spec, d, model, hw) for d in spec.designs]
        for v in _values(spec, "sigma", None):
            checks.balancedness(v, min(ranks), "sigma")


_SCALAR_CHECKED = ("num_layers", "dense_layers", "moe_layers", "mtp_layers", "vocab_size", "hidden_size", "shared_experts",
                   "dense_intermediate_size", "shared_expert_intermediate_size", "gpus_per_node", "scale_up_domain")


def _ranks(spec: Spec, design: str, model: Model, hw: Hardware) -> int:
    """GPUs the experts of ``design``'s deployments spread over, for a bound on sigma: a given EP size or FFN
    pool's smallest (every point's sigma must describe a placement, as ``afd throughput`` asks); a
    searched one's cap (as ``afd advise`` bounds ``--sigma``)."""
    from afdlib.decode.search import most_ffn_gpus
    g = int(min(_values(spec, "gpus_per_node", hw.gpus_per_node)))
    given = min(_values(spec, "ep_size" if design == "ep" else "n_ffn", 0)) * (1 if design == "ep" else g)
    return int(given or most_ffn_gpus(model, replace(hw, gpus_per_node=g), design))


@lru_cache(maxsize=8)
def _load(model: str, model_profile: str, hardware: str, hw_profile: str) -> tuple[Model, Hardware]:
    """The catalogue's model and hardware (read once per process: every chunk of a sweep asks)."""
    return load_model(model, profile=model_profile), load_hardware(hardware, profile=hw_profile)


def _values(spec: Spec, name: str, default):
    if name in spec.axes:
        return list(spec.axes[name])
    return [spec.fixed.get(name, default)]


def hardware_with(hw: Hardware, values: dict) -> Hardware:
    """``hw`` with the hardware fields of ``values`` (the catalogue's units, the profile's figure: the
    datasheet profile's efficiency applied as the loader applies it)."""
    eff, kw = hw.efficiency, {}
    for name, v in values.items():
        if FIELDS[name].kind != "hardware":
            continue
        attr, si, tier = _HW_TARGET[name]
        factor = si * (getattr(eff, tier) if eff is not None and tier else 1.0)
        kw[attr] = v if attr in ("gpus_per_node", "scale_up_domain") else np.asarray(v, dtype=float) * factor
        if name == "bf16_tflops" and hw.flops_dtype == "bf16":
            kw["flops"] = kw[attr]
        if name == "scale_up_gb_per_s" and hw.superpod:   # a Superpod's scale-out is its scale-up fabric
            kw["scale_out_bytes_per_s"] = kw[attr]
    return replace(hw, **{k: _plain(v) for k, v in kw.items()})


def model_with(model: Model, values: dict) -> Model:
    """``model`` with the model fields of ``values`` (MoE or dense layers varied without ``num_layers``: as many
    layers as they add up to), then the family member of ``expert_width`` and ``sparsity``
    (:func:`afdlib.decision.sweetspot.with_shape`, in that order)."""
    model = replace(model, **{k: _plain(v) for k, v in values.items() if FIELDS[k].kind == "model"})
    if {"moe_layers", "dense_layers"} & set(values) and "num_layers" not in values and not model.mixers:
        model = replace(model, num_layers=model.moe_layers + model.dense_layers)   # the depth follows its layers
    for name, axis in (("expert_width", "moe_intermediate_size"), ("sparsity", "sparsity")):
        if name in values:
            model = with_shape(model, axis, float(values[name]))
    return model


MEMBER = ("moe_intermediate_size", "routed_experts", "experts_per_token")
"""What a family axis leaves of the model: the member's M, E and K (variables of the Dataset)."""


def _plain(v):
    """A 0-d value as a Python number (the library keeps scalars as Python numbers)."""
    if np.ndim(v) == 0:
        x = np.asarray(v).item()
        return int(x) if isinstance(x, float) and x == int(x) and abs(x) < 2 ** 53 else x
    return np.asarray(v, dtype=float)


def settings(model: Model, values: dict) -> tuple:
    """(context, budget, precision, assumptions) as `afd throughput` builds them from its options."""
    get = values.get
    weights = get("weights") or model.weights_dtype or Precision.weights
    precision = Precision.for_weights(weights, get("attention_dtype") or None, get("kv_cache", "bf16"))
    t_gap = get("t_gap_ms")
    budget = Budget(slo_s=_plain(np.asarray(get("slo_ms", Budget.slo_s * 1e3)) / 1e3), l_accept=float(get("mtp", 1.0)),
                    t_gap_s=DECODE_T_GAP_S if t_gap is None else _plain(np.asarray(t_gap) / 1e3))
    a = Assumptions(ep_overlap=_opt(get("ep_overlap")), afd_overlap=_opt(get("afd_overlap")), sigma=_opt(get("sigma")),
                    matmul_efficiency=_opt(get("matmul_efficiency")), kernel_profile=get("kernels", Assumptions.kernel_profile))
    return _plain(get("context", 4096.0)), budget, precision, a


def _opt(v):
    return None if v is None else _plain(v)


def evaluate(spec: Spec, values: dict, n: int) -> dict[str, np.ndarray]:
    """Every variable of every design at ``n`` points (``values``: name -> an array of ``n`` values
    or one value; the spec's fixed values fill the rest). Keys ``design/variable``."""
    values = {**spec.fixed, **{k: (v if np.ndim(v) == 0 else np.asarray(v)) for k, v in values.items()}}
    out = {}
    for design in spec.designs:
        r = _design(spec, design, values, n)
        out.update({f"{design}/{k}": np.broadcast_to(np.asarray(v, dtype=float), (n,)) for k, v in r.items()})
    model = model_with(system(spec)[0], values)
    if family(spec):
        out.update({f"model/{k}": np.full(n, float(getattr(model, k))) for k in MEMBER})
    return out


def _design(spec: Spec, design: str, values: dict, n: int) -> dict:
    """One design's variables at ``n`` points (``values`` complete: the spec's fixed ones included)."""
    model, hw = system(spec)
    model, hw = model_with(model, values), hardware_with(hw, values)
    context, budget, precision, a = settings(model, values)
    if not spec.searched(design):
        return _fixed(design, model, hw, context, budget, precision, a, values, n, FIRST_BOUND)
    if design == "afd" and (spec.given("n_attn") or spec.given("n_ffn")):
        return _one_pool(model, hw, context, budget, precision, a, values, n)
    return _searched(design, model, hw, context, budget, precision, a, n)


def family(spec: Spec) -> bool:
    """Whether the spec varies or fixes a family member (its M, E and K are then variables)."""
    return any(FIELDS[k].kind == "family" for k in list(spec.axes) + list(spec.fixed))


def _fixed(design, model, hw, context, budget, precision, a, values, n, first=None) -> dict:
    """A given deployment at the largest batch meeting the SLO and memory (or at ``batch_per_gpu``;
    ``first``: the bound its search goes to first, :func:`afdlib.decode.batch.batches`)."""
    get = values.get
    if design == "ep":
        size, red = _plain(get("ep_size")), _plain(get("redundant", 0))
        d = EPDeployment(hw, size, red, int(get("ep_micro_batches", EPDeployment.micro_batches)),
                         get("all_to_all", EP_KERNELS))
        valid = np.asarray(size) <= np.asarray(model.routed_experts) + np.asarray(red)
    else:
        d = AFDDeployment.of(hw, _plain(get("n_attn")), _plain(get("n_ffn")),
                             micro_batches=int(get("micro_batches", AFDDeployment.micro_batches)))
        valid = True
    if get("batch_per_gpu") is not None:
        req = np.broadcast_to(np.asarray(get("batch_per_gpu"), dtype=float), (n,))
        st = step_function(model, d, context, budget, precision, a)(req)
        ok = np.asarray(st.fits_memory & (st.tpot_s <= budget.slo_s)) & valid
        return _result(ok, st.tokens_per_s_per_gpu, st.tpot_s, req)

    def step_at(req, at):
        """The step at ``req`` requests of the points ``at`` (the deployment, model, hardware, context,
        budget and assumptions cut to those points)."""
        if at.size == n and not np.any(np.diff(at) != 1):
            return step_function(model, d, context, budget, precision, a)(req)
        cut = [_cells(x, at, n) for x in (model, d, context, budget, a)]
        return step_function(cut[0], cut[1], cut[2], cut[3], precision, cut[4])(req)
    req, tokens, tpot = batches(lambda: step_function(model, d, context, budget, precision, a), step_at,
                                budget.slo_s, (n,), design, first=first)
    return _result((req > 0) & valid, tokens, tpot, req)


def _result(ok, tokens, tpot_s, req) -> dict:
    ok = np.asarray(ok, dtype=bool)
    return {"tokens_per_s_per_gpu": np.where(ok, tokens, 0.0), "tpot_ms": np.where(ok, np.asarray(tpot_s) * 1e3, np.nan),
            "batch_per_gpu": np.where(ok, req, 0.0), "feasible": ok}


def _one_pool(model, hw, context, budget, precision, a, values, n) -> dict:
    """AFD with one pool given: the other searched over 1..16 nodes (:data:`afdlib.decode.search.AFD_NODES`),
    each candidate a given deployment; the first best kept on ties (the smaller pool)."""
    missing = "n_ffn" if values.get("n_attn") is not None else "n_attn"
    best = None
    for c in node_counts(AFD_NODES[-1]):
        r = _fixed("afd", model, hw, context, budget, precision, a, {**values, missing: float(c)}, n)
        r[missing] = np.full(n, float(c))
        if best is None:
            best = {k: np.broadcast_to(v, (n,)).copy() for k, v in r.items()}
            continue
        better = np.broadcast_to(r["tokens_per_s_per_gpu"], (n,)) > best["tokens_per_s_per_gpu"]
        for k in best:
            best[k] = np.where(better, np.broadcast_to(r[k], (n,)), best[k])
    return best


def _searched(design, model, hw, context, budget, precision, a, n) -> dict:
    """The best deployment per point (the searches of `afd advise` and the sweet-spot maps), then its
    step at the batch found, for its TPOT."""
    if design == "ep":
        best = best_ep(model, hw, budget, context, precision, a, cell_shape=(n,))
        d = best.deployment
        choice = {"ep_size": d.ep_size, "redundant": d.redundant}
        forms = {(int(m), str(k)) for m, k in zip(np.ravel(d.micro_batches), np.ravel(d.kernels))}
    else:
        best = best_afd(model, hw, hw, budget, context, precision, a, cell_shape=(n,))
        d = best.deployment
        choice = {"n_attn": d.attention.nodes, "n_ffn": d.ffn.nodes}
        forms = {(int(m), int(k)) for m, k in zip(np.ravel(d.micro_batches), np.ravel(np.broadcast_to(d.domains, (n,))))}
    rate = np.asarray(best.tokens_per_s_per_gpu, dtype=float)
    req = np.asarray(d.requests, dtype=float)
    tpot = np.full(n, np.nan)
    for mb, second in forms:   # (micro-batches, EP kernels or AFD attention domains)
        at = np.flatnonzero((np.broadcast_to(d.micro_batches, (n,)) == mb) & (rate > 0)
                            & (np.broadcast_to(d.kernels if design == "ep" else d.domains, (n,)) == second))
        if not at.size:
            continue
        m, h, ctx = (_cells(x, at, n) for x in (model, hw, context))
        sub = (EPDeployment(h, _cells(d.ep_size, at, n), _cells(d.redundant, at, n), mb, second) if design == "ep"
               else AFDDeployment.of(h, _cells(d.attention.nodes, at, n), _cells(d.ffn.nodes, at, n), micro_batches=mb,
                                     domains=second))
        tpot[at] = step_function(m, sub, ctx, budget, precision, a)(req[at]).tpot_s
    ok = rate > 0
    out = _result(ok, rate, tpot, req)
    out.update(choice)
    out["micro_batches"] = d.micro_batches
    out["on_search_bound"] = best.bound
    return out


def _cells(obj, at: np.ndarray, n: int):
    """The points ``at`` of every array over the ``n`` points (the fields of a Model, Hardware, Budget,
    Assumptions or deployment, its pools' and hardware's too; or an array)."""
    if isinstance(obj, np.ndarray):
        return obj[at] if obj.shape == (n,) else obj
    if isinstance(obj, (Model, Hardware, Budget, Assumptions, Pool, EPDeployment, AFDDeployment)):
        kw = {k: c for k, v in vars(obj).items() if (c := _cells(v, at, n)) is not v}
        return replace(obj, **kw) if kw else obj
    return obj
