"""A decode deployment, EP or AFD, and the one entry point that evaluates it (:func:`decode_step`).

* :class:`EPDeployment`: large-scale EP over ``ep_size`` GPUs of one device, ``redundant`` expert
  replicas, ``micro_batches`` (2: two-batch overlap) and DeepEP's ``kernels`` (low-latency or
  normal all-to-all);
* :class:`AFDDeployment`: an attention :class:`Pool` and an FFN :class:`Pool` (hardware and
  nodes of ``gpus_per_node`` GPUs each), ``micro_batches`` (3: the paper's 3BO) and whether both
  pools share one scale-up fabric (``superpod``; None: decided from the devices).

Both carry ``requests`` per (attention) GPU; None means "the largest batch that meets the SLO and
fits in memory" (:func:`afdlib.decode.batch.best_batch`). What is chosen when deploying (sizes,
micro-batches, kernels, batch) lives here; what is assumed about the hardware and software
(efficiencies, overlaps, balancedness) lives in :class:`afdlib.decode.step.Assumptions`.

Sizes, micro-batches, kernels and requests may be numpy arrays: the searches
(:mod:`afdlib.decode.search`) describe every candidate, and every map cell's best, by one
deployment whose fields broadcast, so one vectorised call evaluates them all. Only the
evaluation itself needs one micro-batch count and one kernel mode per call (they change the
code path); scalars are kept as Python ``int`` and ``str``.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, replace
from typing import Callable, ClassVar, Union

import numpy as np
from numpy.typing import ArrayLike

from afdlib.decode.result import Step
from afdlib.decode.step import EP_KERNELS, Assumptions, afd_step, ep_step
from afdlib.decode.batch import best_batch
from afdlib.errors import AfdError
from afdlib.evaluator.alltoall import EP_MODES
from afdlib.inputs import checks
from afdlib.inputs.specs import Budget, Hardware, Model, Precision


def _count(value, name: str, lo: int):
    """An integer >= ``lo``, or an array of whole numbers >= ``lo`` (the searches' candidates are
    float arrays); the refusal in :mod:`afdlib.inputs.checks`' words."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return checks.integer(value, name, lo=lo)
    v = checks.number(value, name)
    if not np.all(v >= lo) or not np.all(v == np.round(v)):
        raise checks.Refused(checks.integer_rule(lo), value, name)
    return value


def _scalar(obj, name: str, kind: type) -> None:
    """A 0-d field becomes a Python ``kind`` (frozen dataclass: set through object.__setattr__)."""
    value = getattr(obj, name)
    if np.ndim(value) == 0:
        object.__setattr__(obj, name, kind(np.asarray(value).item()))


def _plain(obj, *names: str) -> None:
    """0-d numpy fields become Python numbers (what the searches' picks leave)."""
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0:
            object.__setattr__(obj, name, value.item())


def _take(value, index):
    """``value[index]`` for an array field (a Python scalar where one element is left); scalars as they are."""
    if value is None or np.ndim(value) == 0:
        return value
    out = np.asarray(value)[index]
    return out.item() if np.ndim(out) == 0 else out


def _check_common(d) -> None:
    _count(d.micro_batches, "micro-batches", 1)
    _scalar(d, "micro_batches", int)
    if d.requests is not None:
        checks.nonnegative(d.requests, "requests per GPU")
    _plain(d, "requests")


@dataclass(frozen=True)
class Pool:
    """``nodes`` nodes of ``hardware`` (``hardware.gpus_per_node`` GPUs each)."""

    hardware: Hardware
    nodes: ArrayLike

    def __post_init__(self):
        if not isinstance(self.hardware, Hardware):
            raise AfdError(f"a pool needs a Hardware, got {type(self.hardware).__name__}")
        _count(self.nodes, "nodes", 1)
        _plain(self, "nodes")

    @property
    def gpus(self):
        return self.nodes * self.hardware.gpus_per_node


@dataclass(frozen=True)
class EPDeployment:
    """Large-scale EP: ``ep_size`` GPUs of ``hardware``, each running attention for its own
    ``requests`` (data parallel) and (E + ``redundant``) / ``ep_size`` routed experts;
    ``micro_batches`` (1 or 2) and DeepEP's ``kernels`` (:data:`afdlib.evaluator.alltoall.EP_MODES`);
    ``sbo``: single-batch overlap (one micro-batch, low-latency kernels: dispatch beside the shared
    experts, combine beside the down GEMM, :func:`afdlib.analysis.schedule.ep_moe_time`)."""

    hardware: Hardware
    ep_size: ArrayLike
    redundant: ArrayLike = 0
    micro_batches: ArrayLike = 2
    kernels: str | np.ndarray = EP_KERNELS
    requests: ArrayLike | None = None
    sbo: bool | np.ndarray = False
    design: ClassVar[str] = "ep"

    def __post_init__(self):
        if not isinstance(self.hardware, Hardware):
            raise AfdError(f"an EP deployment needs a Hardware, got {type(self.hardware).__name__}")
        _count(self.ep_size, "EP size", 1)
        _count(self.redundant, "redundant experts", 0)
        _plain(self, "ep_size", "redundant")
        _check_common(self)
        for kernels in np.unique(self.kernels) if isinstance(self.kernels, np.ndarray) else (self.kernels,):
            checks.one_of(kernels, EP_MODES, "EP kernels")
        _scalar(self, "kernels", str)
        _scalar(self, "sbo", bool)
        if isinstance(self.sbo, bool) and self.sbo and np.ndim(self.micro_batches) == 0 and (
                self.micro_batches != 1 or self.kernels != "low-latency"):
            raise AfdError("single-batch overlap (sbo) takes one micro-batch and DeepEP's low-latency kernels, "
                           f"got {self.micro_batches} micro-batches and {self.kernels} kernels")

    @property
    def gpus(self):
        return self.ep_size

    @property
    def label(self) -> str:
        """``EP144+32``: EP size and redundant experts (one deployment, not an array of them)."""
        return f"EP{_int(self.ep_size)}+{_int(self.redundant)}"

    def at(self, index) -> EPDeployment:
        """The deployment of one cell (``index`` into every array field; the hardware unchanged)."""
        return EPDeployment(self.hardware, *(_take(getattr(self, f), index) for f in
                                             ("ep_size", "redundant", "micro_batches", "kernels", "requests", "sbo")))

    def on(self, hardware: Hardware, attn_hardware: Hardware | None = None) -> EPDeployment:
        """The same deployment on ``hardware`` (``attn_hardware`` is AFD's and not used)."""
        return replace(self, hardware=hardware)

    def record(self) -> dict:
        """The flat record of tables: design, micro-batches, EP size, redundant experts, kernels, requests,
        single-batch overlap."""
        return {"design": "ep", "micro_batches": self.micro_batches, "ep_size": _int(self.ep_size),
                "redundant": _int(self.redundant), "kernels": self.kernels, "requests": _int(self.requests),
                "sbo": bool(self.sbo)}


@dataclass(frozen=True)
class AFDDeployment:
    """AFD: an ``attention`` pool and an ``ffn`` pool, ``micro_batches`` cycling attention ->
    dispatch -> FFN -> combine; ``requests`` per attention GPU; ``superpod``: both pools in one
    scale-up fabric (None: both devices Superpod-class and of the same kind); ``domains``: the
    attention pool in that many data-parallel domains, each with ``micro_batches`` of its own
    against the one FFN pool (xDeepServe's 3 x 2, :func:`afdlib.decode.step.afd_step`)."""

    attention: Pool
    ffn: Pool
    micro_batches: ArrayLike = 3
    requests: ArrayLike | None = None
    superpod: bool | None = None
    domains: ArrayLike = 1
    design: ClassVar[str] = "afd"

    def __post_init__(self):
        if not isinstance(self.attention, Pool) or not isinstance(self.ffn, Pool):
            raise AfdError("an AFD deployment needs an attention Pool and an FFN Pool")
        _check_common(self)
        _count(self.domains, "attention domains", 1)
        _scalar(self, "domains", int)
        if np.ndim(self.domains) == 0 and np.ndim(self.attention.nodes) == 0 and self.attention.gpus % self.domains:
            raise AfdError(f"{self.domains} attention domains need the attention GPUs in equal domains, "
                           f"got {self.attention.gpus} GPUs")
        if self.superpod is not None and not isinstance(self.superpod, (bool, np.bool_)):
            raise AfdError(f"superpod must be True, False or None, got {self.superpod!r}")

    @classmethod
    def of(cls, hardware: Hardware, n_attn: ArrayLike, n_ffn: ArrayLike, attn_hardware: Hardware | None = None,
           **kw) -> AFDDeployment:
        """``n_attn`` attention nodes (of ``attn_hardware``, default ``hardware``) and ``n_ffn`` FFN nodes."""
        return cls(Pool(attn_hardware or hardware, n_attn), Pool(hardware, n_ffn), **kw)

    @property
    def gpus(self):
        return self.attention.gpus + self.ffn.gpus

    @property
    def label(self) -> str:
        """``2A2F``: attention and FFN nodes (one deployment, not an array of them); ``6A4F/3``: in 3 attention domains."""
        return f"{_int(self.attention.nodes)}A{_int(self.ffn.nodes)}F" + (f"/{_int(self.domains)}" if self.domains > 1 else "")

    def at(self, index) -> AFDDeployment:
        """The deployment of one cell (``index`` into every array field; the hardware unchanged)."""
        return AFDDeployment(Pool(self.attention.hardware, _take(self.attention.nodes, index)),
                             Pool(self.ffn.hardware, _take(self.ffn.nodes, index)),
                             _take(self.micro_batches, index), _take(self.requests, index), self.superpod,
                             _take(self.domains, index))

    def on(self, hardware: Hardware, attn_hardware: Hardware | None = None) -> AFDDeployment:
        """The same deployment with its FFN pool on ``hardware``, its attention pool on
        ``attn_hardware`` (default ``hardware``)."""
        return replace(self, attention=replace(self.attention, hardware=attn_hardware or hardware),
                       ffn=replace(self.ffn, hardware=hardware))

    def record(self) -> dict:
        """The flat record of tables: design, micro-batches, N_A, N_F, requests (and attention domains,
        where more than one)."""
        out = {"design": "afd", "micro_batches": self.micro_batches, "n_attn": _int(self.attention.nodes),
               "n_ffn": _int(self.ffn.nodes), "requests": _int(self.requests)}
        return {**out, "domains": _int(self.domains)} if self.domains > 1 else out


Deployment = Union[EPDeployment, AFDDeployment]


def _int(x):
    return None if x is None else int(x)


def from_record(record: dict, hardware: Hardware, attn_hardware: Hardware | None = None) -> Deployment:
    """The deployment of a flat record (:meth:`EPDeployment.record`, :meth:`AFDDeployment.record`) on
    ``hardware`` (AFD: the FFN pool; ``attn_hardware`` the attention pool, default the same)."""
    r = record
    if r.get("design") == "ep":
        return EPDeployment(hardware, r["ep_size"], r.get("redundant", 0), r.get("micro_batches", 2),
                            r.get("kernels", EPDeployment.kernels), r.get("requests"), bool(r.get("sbo", False)))
    if r.get("design") == "afd":
        return AFDDeployment.of(hardware, r["n_attn"], r["n_ffn"], attn_hardware,
                                micro_batches=r.get("micro_batches", 3), requests=r.get("requests"),
                                domains=int(r.get("domains", 1)))
    raise AfdError(f"a deployment record needs design ep or afd, got {r.get('design')!r}")


def step_function(model: Model, deployment: Deployment, context: ArrayLike, budget: Budget,
                  precision: Precision = Precision(), assumptions: Assumptions = Assumptions()
                  ) -> Callable[[ArrayLike], Step]:
    """The deployment's step as a function of its requests per (attention) GPU, which the batch
    searches (:func:`afdlib.decode.batch.largest_batch`, :func:`~afdlib.decode.batch.best_batch`)
    call with arrays; the deployment's own ``requests`` are not used. One micro-batch count and
    one kernel mode per call (AFD in one attention domain may take a micro-batch count per candidate:
    its schedule has a closed form in it)."""
    d = deployment
    if (d.design == "ep" and (np.ndim(d.micro_batches) or np.ndim(d.kernels) or np.ndim(d.sbo))) or (
            d.design == "afd" and (np.ndim(d.domains) or (np.ndim(d.micro_batches) and d.domains != 1))):
        raise AfdError("evaluate one micro-batch count and kernel mode at a time (Best.at(cell))")
    if d.design == "ep":
        return lambda r: ep_step(model, d.hardware, d.ep_size, r, context, budget, precision, assumptions,
                                 d.redundant, micro_batches=d.micro_batches, kernels=d.kernels, sbo=d.sbo)
    return lambda r: afd_step(model, d.attention.hardware, d.ffn.hardware, d.attention.nodes, d.ffn.nodes, r,
                              context, budget, precision, assumptions, d.superpod, micro_batches=d.micro_batches,
                              domains=d.domains)


def decode_step(model: Model, deployment: Deployment, context: ArrayLike, budget: Budget,
                precision: Precision = Precision(), assumptions: Assumptions = Assumptions()) -> Step:
    """One decode step of ``deployment`` at ``context`` cached tokens: :func:`afdlib.decode.step.ep_step`
    or :func:`~afdlib.decode.step.afd_step` at its ``requests``, or, where they are None, at the
    largest batch meeting ``budget.slo_s`` and fitting in memory (AfdError saying why where none does).
    EP: AfdError where a GPU would hold no expert (EP size > routed + redundant experts)."""
    if deployment.design == "ep" and np.any(np.asarray(deployment.ep_size)
                                            > np.asarray(model.routed_experts) + np.asarray(deployment.redundant)):
        raise AfdError(f"EP size {deployment.ep_size} exceeds the routed + redundant experts "
                       f"({model.routed_experts} + {deployment.redundant}): every GPU must hold an expert")
    step_of = step_function(model, deployment, context, budget, precision, assumptions)
    if deployment.requests is None:
        return best_batch(step_of, budget.slo_s)[1]
    return step_of(np.asarray(deployment.requests, dtype=float))
