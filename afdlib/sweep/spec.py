"""A sweep's spec: which model on which hardware, which design, what is held fixed and what varies.

.. code-block:: yaml

   model: deepseek-v3          # catalogue slug or a file, as `afd throughput --model`
   hardware: h800              # catalogue slug or a file (the FFN pool's, for AFD)
   design: both                # ep, afd or both (EP and AFD side by side, and their ratio)
   vary:                       # one dimension each, in this order
     scale_out_gb_per_s: {from: 10, to: 400, num: 40, log: true}
     slo_ms: [30, 50, 100]
   fixed: {context: 4096}

Every name is a field of one kind (:data:`FIELDS`): a hardware field in the catalogue's units (the
profile's figure: with ``hw_profile: datasheet``, the default, the datasheet value, which the
profile's efficiency turns into the sustained rate exactly as the catalogue loader does); a model
field (``moe_intermediate_size``, ``routed_experts``, ``experts_per_token``, ...); a deployment field;
a setting of the decode model (those of ``afd throughput``); or a member of the model's family at the
same total routed parameters (``expert_width``, ``sparsity``: the paper's method, as the sweet-spot
maps vary them). Defaults are ``afd throughput``'s.

A design's deployment is evaluated as given where its size is given (EP: ``ep_size``; AFD: ``n_attn``
and ``n_ffn``), at the largest batch that meets the SLO and fits in memory (or at ``batch_per_gpu``);
where it is not given the best deployment is searched, as `afd advise` and the sweet-spot maps do
(:mod:`afdlib.decode.search`); with one AFD pool given, the other is searched over 1..16 nodes.

Everything is checked before anything runs; a mistake is one :class:`~afdlib.errors.AfdError` line.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from afdlib.errors import AfdError
from afdlib.inputs import checks
from afdlib.inputs.specs import MAX_GPUS_PER_NODE, MAX_MODEL_SIZE, MAX_SCALE_UP_DOMAIN

# kind, unit, rule (checks.*), whether a chunk must hold one value of it (it selects a code path or a
# candidate grid, or is used as a Python number: such axes are chunked one value at a time)
_HW = {"fp8_tflops": ("TFLOP/s", "positive"), "bf16_tflops": ("TFLOP/s", "positive"),
       "fp4_tflops": ("TFLOP/s", "positive"), "hbm_tb_per_s": ("TB/s", "positive"), "hbm_gb": ("GB", "positive"),
       "scale_up_gb_per_s": ("GB/s", "positive"), "scale_out_gb_per_s": ("GB/s", "positive"),
       "inter_domain_gb_per_s": ("GB/s", "positive"), "scale_out_latency_us": ("us", "nonnegative"),
       "scale_up_latency_us": ("us", "nonnegative"), "gpus_per_node": ("GPUs", "count"),
       "scale_up_domain": ("GPUs", "count")}
_MODEL = {"hidden_size": "elements", "moe_intermediate_size": "elements", "num_layers": "layers",
          "dense_layers": "layers", "moe_layers": "layers", "routed_experts": "experts",
          "experts_per_token": "experts", "shared_experts": "experts", "shared_expert_intermediate_size": "elements",
          "dense_intermediate_size": "elements", "vocab_size": "tokens", "mtp_layers": "layers"}
_DEPLOYMENT = {"ep_size": ("GPUs", "count", "ep"), "redundant": ("experts", "count0", "ep"),
               "ep_micro_batches": ("micro-batches", "count", "ep"), "all_to_all": ("", "text", "ep"),
               "n_attn": ("nodes", "count", "afd"), "n_ffn": ("nodes", "count", "afd"),
               "micro_batches": ("micro-batches", "count", "afd"), "batch_per_gpu": ("requests", "count", "")}
_SETTINGS = {"context": ("tokens", "nonnegative"), "slo_ms": ("ms", "positive"), "mtp": ("tokens per step", "mtp"),
             "t_gap_ms": ("ms", "nonnegative"), "sigma": ("", "fraction"), "matmul_efficiency": ("", "fraction"),
             "ep_overlap": ("", "share"), "afd_overlap": ("", "share"), "kernels": ("", "text"),
             "weights": ("", "text"), "attention_dtype": ("", "text"), "kv_cache": ("", "text")}

_FAMILY = {"expert_width": "elements", "sparsity": "E / K"}
"""Members of the model's family at the same total routed parameters (the paper's method,
:func:`afdlib.decision.sweetspot.with_shape`): ``expert_width`` M with E and K scaled by 1 / M (the
activated parameters kept too), ``sparsity`` E / K with K = round(E / value) (E and M kept)."""

SCALAR = {"expert_width", "sparsity", "gpus_per_node", "scale_up_domain", "ep_micro_batches", "all_to_all", "micro_batches", "mtp", "kernels",
          "weights", "attention_dtype", "kv_cache", "num_layers", "dense_layers", "moe_layers", "mtp_layers",
          "vocab_size", "hidden_size", "shared_experts", "dense_intermediate_size", "shared_expert_intermediate_size"}
"""Fields a chunk holds one value of (a code path, a candidate grid, or a Python number in the model)."""

SEARCH_SCALAR = set(_MODEL) | {"gpus_per_node", "scale_up_domain", "slo_ms", "t_gap_ms", "sigma", "matmul_efficiency",
                               "ep_overlap", "afd_overlap"}
"""Fields held to one value per chunk when a design is searched: the searches' candidate grids
(EP sizes, redundant experts) are built from the model and the node size, and the budget and the
assumptions do not carry the searches' candidate axis (the hardware's rates and the context do)."""


@dataclass(frozen=True)
class Field:
    name: str
    kind: str       # hardware, model, deployment, setting
    unit: str
    rule: str
    design: str = ""   # deployment fields: the design that has them ("" both)


FIELDS = {**{k: Field(k, "hardware", u, r) for k, (u, r) in _HW.items()},
          **{k: Field(k, "model", u, "count0" if k in ("dense_layers", "shared_experts") or k in
                      ("shared_expert_intermediate_size", "dense_intermediate_size", "mtp_layers")
                      else "count") for k, u in _MODEL.items()},
          **{k: Field(k, "deployment", u, r, d) for k, (u, r, d) in _DEPLOYMENT.items()},
          **{k: Field(k, "setting", u, r) for k, (u, r) in _SETTINGS.items()},
          **{k: Field(k, "family", u, "positive") for k, u in _FAMILY.items()}}
"""Every name a spec may fix or vary."""

DESIGNS = ("ep", "afd", "both")
MAX_POINTS = 10 ** 12
MAX_AXIS = 10 ** 7
KEYS = {"model", "hardware", "design", "vary", "fixed", "model_profile", "hw_profile"}


@dataclass(frozen=True)
class Spec:
    """A checked spec: ``axes`` name -> coordinate values (numpy array, in the spec's order),
    ``fixed`` name -> value."""

    model: str
    hardware: str
    design: str
    axes: dict
    fixed: dict = field(default_factory=dict)
    model_profile: str = "reference"
    hw_profile: str = "datasheet"
    hw_profile_given: bool = False     # the spec names hw_profile (a flat device file has none to choose)

    @property
    def designs(self) -> tuple[str, ...]:
        return ("ep", "afd") if self.design == "both" else (self.design,)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.axes.values())

    @property
    def points(self) -> int:
        return int(np.prod(self.shape, dtype=float))

    def given(self, name: str) -> bool:
        return name in self.axes or name in self.fixed

    def searched(self, design: str) -> bool:
        """Whether ``design``'s deployment is searched (its size not given)."""
        return not self.given("ep_size") if design == "ep" else not (self.given("n_attn") and self.given("n_ffn"))

    def fully_searched(self, design: str) -> bool:
        """Whether ``design``'s whole deployment is searched (AFD: neither pool given)."""
        return not self.given("ep_size") if design == "ep" else not (self.given("n_attn") or self.given("n_ffn"))

    def scalar(self, name: str) -> bool:
        """Whether a chunk must hold one value of axis ``name``."""
        text = isinstance(self.axes[name][0], str)
        return text or name in SCALAR or (any(self.fully_searched(d) for d in self.designs) and name in SEARCH_SCALAR)


def parse(doc) -> Spec:
    """The spec of a mapping read from YAML; AfdError (one line) for any mistake."""
    if not isinstance(doc, dict):
        raise AfdError("a sweep spec is a mapping with model, hardware, design and vary")
    unknown = set(doc) - KEYS
    if unknown:
        raise AfdError(f"unknown spec key(s) {sorted(unknown)}; valid: {sorted(KEYS)}")
    for key in ("model", "hardware", "design", "vary"):
        if key not in doc:
            raise AfdError(f"the spec needs '{key}'")
    model, hardware = (checks.text(doc[k], k) for k in ("model", "hardware"))
    design = checks.one_of(doc["design"], DESIGNS, "design")
    prof = {"model_profile": checks.one_of(doc.get("model_profile", "reference"), ("paper", "reference"), "model_profile"),
            "hw_profile": checks.one_of(doc.get("hw_profile", "datasheet"), ("paper", "datasheet"), "hw_profile")}
    vary, fixed = doc["vary"], doc.get("fixed") or {}
    for name, block in (("vary", vary), ("fixed", fixed)):
        if not isinstance(block, dict) or (name == "vary" and not block):
            raise AfdError(f"'{name}' must be a mapping of field names" + " (at least one axis)" * (name == "vary"))
    both = set(vary) & set(fixed)
    if both:
        raise AfdError(f"{sorted(both)[0]} is both fixed and varied")
    axes = {name: axis_values(name, v) for name, v in vary.items()}
    fixed = {name: fixed_value(name, v) for name, v in fixed.items()}
    spec = Spec(model, hardware, design, axes, fixed, prof["model_profile"], prof["hw_profile"], "hw_profile" in doc)
    _check_designs(spec)
    if spec.points > MAX_POINTS:
        raise AfdError(f"the grid has {spec.points:.3g} points; at most {MAX_POINTS:.0e}")
    return spec


def _field(name: str) -> Field:
    if name not in FIELDS:
        raise AfdError(f"unknown field '{name}'; valid: {', '.join(sorted(FIELDS))}")
    return FIELDS[name]


_RANGES = {"context": checks.CONTEXT_TOKENS, "slo_ms": checks.SLO_MS, "t_gap_ms": checks.GAP_MS}
"""Settings held to the commands' ranges (``--context``, ``--slo-ms``, ``--t-gap-ms``)."""
_COUNT_MAX = {"ep_size": checks.MAX_DEPLOYMENT_COUNT, "redundant": checks.MAX_DEPLOYMENT_COUNT,
              "batch_per_gpu": checks.MAX_DEPLOYMENT_COUNT, "n_attn": checks.MAX_NODES, "n_ffn": checks.MAX_NODES,
              "gpus_per_node": MAX_GPUS_PER_NODE, "scale_up_domain": MAX_SCALE_UP_DOMAIN}
"""Counts held to the commands' and the files' bounds (model fields: :data:`afdlib.inputs.specs.MAX_MODEL_SIZE`)."""


def _check(f: Field, value):
    """One value of field ``f``, checked against its rule (numbers as float, -0 as 0; counts as int)."""
    out = _checked(f, value)
    return out + 0.0 if isinstance(out, float) else out


def _checked(f: Field, value):
    where = f"{f.name}"
    if f.rule == "text":     # names as the options take them: lower case; weights fp4 the NVFP4 it stands for
        name = checks.text(value, where).strip().lower()
        return "nvfp4" if name == "fp4" and f.name == "weights" else name
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise AfdError(f"{where} must be a number, got {value!r}")
    checks.number(value, where)               # NaN or an infinity, before any rounding
    if f.rule in ("count", "count0"):
        if float(value) != round(float(value)):
            raise AfdError(f"{where} must be a whole number, got {value!r}")
        return int(checks.integer(int(round(float(value))), where, lo=1 if f.rule == "count" else 0,
                                  hi=_COUNT_MAX.get(f.name, MAX_MODEL_SIZE if f.kind == "model" else 10 ** 9)))
    if f.name in _RANGES:                  # the commands' own ranges (afdlib.inputs.checks)
        lo, hi = _RANGES[f.name]
        return float(checks.in_range(value, lo, hi, where, lo_open=f.name == "slo_ms"))
    rules = {"positive": checks.positive, "nonnegative": checks.nonnegative, "fraction": checks.fraction,
             "share": checks.share}
    if f.rule == "mtp":
        return float(checks.in_range(value, *checks.ACCEPTED_TOKENS, where))
    return float(rules[f.rule](value, where))


def fixed_value(name: str, value):
    f = _field(name)
    if isinstance(value, (list, dict)):
        raise AfdError(f"fixed {name} must be one value; vary it to give several")
    return _check(f, value)


def axis_values(name: str, value) -> np.ndarray:
    """An axis' coordinates: a list of values, or ``{from, to, num, log}`` (``num`` values from ``from`` to
    ``to``, evenly or, with ``log: true``, geometrically spaced; a whole-number field's even steps must be
    whole, its geometric values are rounded, repeats dropped)."""
    f = _field(name)
    if isinstance(value, dict):
        if f.rule == "text":
            raise AfdError(f"{name} takes a list of names, not a range")
        extra = set(value) - {"from", "to", "num", "log"}
        if extra or not {"from", "to", "num"} <= set(value):
            raise AfdError(f"the range of {name} needs from, to and num (and optionally log), got {sorted(value)}")
        lo, hi = (_check(f, value[k]) for k in ("from", "to"))
        num = checks.integer(value["num"], f"{name} num", lo=1, hi=MAX_AXIS)
        if num == 1 and lo != hi:     # one point is "from": "to" would be dropped without a word
            raise AfdError(f"the range of {name} has num 1, which is its 'from' alone; give num 2 or more, or a list")
        log = value.get("log", False)
        if not isinstance(log, bool):
            raise AfdError(f"{name} log must be true or false, got {log!r}")
        if log and (lo <= 0 or hi <= 0):
            raise AfdError(f"{name}: a log range needs positive ends, got {lo:g} to {hi:g}")
        vals = np.geomspace(lo, hi, num) if log else np.linspace(lo, hi, num)
        if f.rule.startswith("count"):
            if not log and np.any(np.abs(vals - np.round(vals)) > 1e-9 * np.maximum(1.0, np.abs(vals))):
                step = (hi - lo) / (num - 1)
                raise AfdError(f"the range of {name} from {lo:g} to {hi:g} in {num} values steps by {step:.4g}, "
                               "between whole numbers; give a num whose steps are whole, or a list")
            vals = np.round(vals)      # a log range's values: the nearest whole numbers
        # every rule is an interval, so the values between the two checked ends pass it too: no check per
        # value (a 10^7-value axis took a minute of Python checks before the grid's size was refused); the
        # values are monotone, so a repeat (whole numbers rounded) is its neighbour's
        return vals[np.r_[True, vals[1:] != vals[:-1]]].astype(float)
    elif isinstance(value, list):
        values = [_check(f, v) for v in value]
    else:
        raise AfdError(f"{name} must vary over a list or a {{from, to, num}} range, got {value!r}")
    if not values:
        raise AfdError(f"the axis {name} is empty")
    if len(set(values)) != len(values):
        if isinstance(value, list):
            raise AfdError(f"the axis {name} repeats a value")
        values = list(dict.fromkeys(values))
    return np.array(values, dtype=object if f.rule == "text" else float)


def _check_designs(spec: Spec) -> None:
    """Deployment fields belong to a design the spec evaluates; searched deployments take none."""
    names = list(spec.axes) + list(spec.fixed)
    for name in names:
        f = FIELDS[name]
        if f.kind != "deployment" or not f.design:
            continue
        if f.design not in spec.designs:
            raise AfdError(f"{name} is a {f.design.upper()} deployment field; design {spec.design} does not use it")
    for name, design in (("ep_overlap", "ep"), ("afd_overlap", "afd")):   # a design's what-if, on the other's grid
        if name in names and design not in spec.designs:
            raise AfdError(f"{name} is {design.upper()}'s overlap what-if; design {spec.design} does not use it")
    if "ep" in spec.designs and spec.searched("ep"):
        given = [n for n in ("redundant", "ep_micro_batches", "all_to_all") if spec.given(n)]
        if given:
            raise AfdError(f"{given[0]} is searched with the EP deployment; give ep_size to fix the deployment")
    if "afd" in spec.designs and not spec.given("n_attn") and not spec.given("n_ffn") and spec.given("micro_batches"):
        raise AfdError("micro_batches is searched with the AFD deployment; give n_attn and n_ffn to fix it")
    family = [n for n in names if FIELDS[n].kind == "family"]
    raw = [n for n in names if n in ("moe_intermediate_size", "routed_experts", "experts_per_token")]
    if family and raw:
        raise AfdError(f"{family[0]} sets the family member's E, K and M: give it without {raw[0]}")
    if spec.given("batch_per_gpu") and any(spec.searched(d) for d in spec.designs):
        raise AfdError("batch_per_gpu needs a fixed deployment (ep_size; n_attn and n_ffn): a search finds the batch")
