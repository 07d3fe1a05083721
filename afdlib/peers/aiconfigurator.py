"""Side by side with NVIDIA aiconfigurator: its decode predictions against ours, setting by setting.

aiconfigurator (``pip install aiconfigurator==0.12.0``, about 850 MB, an optional extra) estimates
decode from kernel times measured on H100/H200/B200/GB200 and a ping-pong micro-batch pipeline for
AFD. ``scripts/aiconfigurator_grid.py`` runs it on the settings defined here and writes
``data/aiconfigurator.csv`` (schema: :data:`COLUMNS`); the book reads that file, so neither the
book nor the tests need aiconfigurator.

The settings (:func:`grid_settings`, :func:`deployment_settings`):

* **grid**: DeepSeek-V3 (MLA) and Qwen3-235B-A22B (GQA) on H100, H200, B200 and GB200, EP and AFD
  (one attention and one FFN pool of 8 GPUs each, 3 micro-batches), 8..256 requests per
  (attention) GPU, 4096 cached tokens, no MTP, the tool's default data types for FP8 checkpoints
  (FP8 block-scaled weights, FP8 KV cache and attention, BF16 on the wire). Where one node does not
  hold the weights (DeepSeek-V3 on the 80 GiB H100) the EP group or the FFN pool is 16 GPUs; where the
  tool has no cross-node data (Qwen3 on GB200, 4 GPUs per tray) its EP group is 4.
* **deployment**: each case of ``data/deployments.yaml`` that the tool can express, at the nearest
  setting it accepts (H100 for H800, the largest power-of-two EP size not above the published one:
  it has DeepEP all-to-all data only there; an FP8 KV cache: its wide-EP MLA tables have no other),
  with the case's batch, context, MTP and its other data types.

Every setting runs twice: with the tool's default MoE tables (measured under a power-law expert
load, exponent 1.01) and with its balanced tables (``distribution`` column).

Our side (:func:`our_step`) is the decode model (:mod:`afdlib.decode.step`) at the same setting, with
the tool's data types and no fixed gap per step (aiconfigurator's static decode has none), in the
form the tool models (:data:`TOOL_EP_MICRO_BATCHES`): its EP step is one batch, its AFD step the
setting's micro-batches.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from afdlib.inputs.catalog import data_dir, load_hardware, load_model
from afdlib.decode.deployment import AFDDeployment, Deployment, EPDeployment, decode_step
from afdlib.decode.result import Step
from afdlib.decode.step import Assumptions, afd_ffn_parts, draft_tokens
from afdlib.evaluator.grouped_gemm import KERNELS_ROUTED, active_experts
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget, Efficiency, Precision

TOOL = "aiconfigurator"
TOOL_VERSION = "0.12.0"

MODELS = {"deepseek-v3": "deepseek-ai/DeepSeek-V3", "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B-FP8"}
"""Our catalogue slug -> the checkpoint aiconfigurator loads (FP8 checkpoints: FP8 weights in both)."""

SYSTEMS = {"h100": "h100_sxm", "h200": "h200_sxm", "b200": "b200_sxm", "gb200": "gb200", "h800": "h100_sxm"}
"""Our hardware slug -> aiconfigurator's system. It has no H800: H100 is the proxy (same compute
and HBM; NVLink 900 instead of 400 GB/s per GPU both ways)."""

SYSTEM_GPUS_PER_NODE = {"h100_sxm": 8, "h200_sxm": 8, "b200_sxm": 8, "gb200": 4}
"""GPUs per node in aiconfigurator's system files (a GB200 node is one 4-GPU tray)."""

BATCHES = (8, 16, 32, 64, 128, 256)
CONTEXT = 4096
DISTRIBUTIONS = ("power_law_1.01", "balanced")

GRID_QUANT = {"gemm": "fp8_block", "moe": "fp8_block", "kvcache": "fp8", "fmha": "fp8", "comm": "half"}
"""The tool's resolved defaults for the FP8 checkpoints on trtllm, passed explicitly."""

EP_SIZE = {("deepseek-v3", "h100"): 16, ("qwen3-235b-a22b", "gb200"): 4}
"""EP group sizes other than 8: DeepSeek-V3's FP8 experts (~650 GB) do not fit in 8 x 80 GiB; the
tool has no cross-tray all-to-all data for Qwen3 on GB200."""
AFD_FFN_GPUS = {("deepseek-v3", "h100"): 16}
"""FFN pools other than 8 GPUs (same reason as :data:`EP_SIZE`)."""

TOOL_EP_MICRO_BATCHES = 1
"""Micro-batches of the tool's EP decode step: one. aiconfigurator 0.12.0 builds a decode layer as
the sum of its operators' measured times (``aiconfigurator_core/sdk/models/deepseek.py``: the only
overlap in a generation layer is the shared experts beside the routed ones on a second stream,
``OverlapOp``; no two-batch overlap of compute and all-to-all exists in its EP graphs, and
``num_microbatches`` is an AFD setting only, ``sdk/config.py``). Matched settings compare our EP
deployment in the same form; DeepSeek's two micro-batches are a variant (:data:`VARIANTS`)."""


@dataclass(frozen=True)
class Setting:
    """One decode setting both tools are run on. ``batch_per_gpu``: requests per GPU (AFD: per
    attention GPU); ``context``: cached tokens per request (the tool's ISL)."""

    id: str
    kind: str                 # grid | deployment
    design: str               # ep | afd
    model: str                # our catalogue slug
    hardware: str             # our catalogue slug (the deployment's, for deployments)
    system: str               # aiconfigurator's system
    backend: str
    batch_per_gpu: int
    context: int
    ep_size: int = 0
    attn_gpus: int = 0
    ffn_gpus: int = 0
    micro_batches: int = 0
    nextn: int = 0
    nextn_accepted: float = 0.0
    quant: dict = field(default_factory=lambda: dict(GRID_QUANT))
    deployment: str = ""
    note: str = ""

    @property
    def gpus(self) -> int:
        return self.ep_size if self.design == "ep" else self.attn_gpus + self.ffn_gpus


def grid_settings() -> list[Setting]:
    """The comparison grid (module docstring): 2 models x 4 systems x 6 batches x (EP, AFD)."""
    out = []
    for model in MODELS:
        for hw in ("h100", "h200", "b200", "gb200"):
            for b in BATCHES:
                ep = EP_SIZE.get((model, hw), 8)
                out.append(Setting(f"grid-ep-{model}-{hw}-b{b}", "grid", "ep", model, hw, SYSTEMS[hw], "trtllm",
                                   b, CONTEXT, ep_size=ep))
                out.append(Setting(f"grid-afd-{model}-{hw}-b{b}", "grid", "afd", model, hw, SYSTEMS[hw], "trtllm",
                                   b, CONTEXT, attn_gpus=8, ffn_gpus=AFD_FFN_GPUS.get((model, hw), 8),
                                   micro_batches=3))
    return out


def _tool_dtype(ours: str, kind: str) -> str:
    if ours == "bf16":
        return "bfloat16"
    if ours == "nvfp4" and kind in ("gemm", "moe"):
        return "nvfp4"
    return "fp8_block" if kind in ("gemm", "moe") else "fp8"


def deployment_settings(cases: dict | None = None) -> tuple[list[Setting], dict[str, str]]:
    """Settings for the deployments the tool can express, and the reason for each it cannot.

    EP cases on a system it knows (H800 through its H100 proxy) at the largest power-of-two EP
    size not above the published one; AFD cases need a model it knows (Step-3 is not among them)."""
    from afdlib.decode.validation import load_deployments
    cases = cases if cases is not None else load_deployments()
    settings, refused = [], {}
    for slug, case in cases.items():
        f = case.facts
        if case.design != "ep":   # the cases' AFD runs: what the tool lacks for each, in its own terms
            hw, lacks = f["ffn_hardware"], []
            if f["model"] not in MODELS:
                lacks.append(f"no {f['model']} model")
            if hw not in SYSTEMS or hw == "h800":
                lacks.append(f"no {hw} system" + (" (H100 is our proxy for EP only)" if hw == "h800" else ""))
            if int(f.get("domains", 1)) > 1:
                lacks.append(f"no {int(f['domains'])} attention domains")
            refused[slug] = f"aiconfigurator's AFD mode has {' and '.join(lacks) or 'no such form'}"
            continue
        if f["model"] not in MODELS or f["hardware"] not in SYSTEMS:
            refused[slug] = f"aiconfigurator has no {f['model']} on {f['hardware']}"
            continue
        ep = 2 ** int(math.floor(math.log2(f["ep_size"])))
        p = Precision(**(f.get("precision") or {}))
        # its SGLang wide-EP MLA tables exist only for an FP8 KV cache (and FP8 block attention)
        quant = {"gemm": _tool_dtype(p.attention, "gemm"), "moe": _tool_dtype(p.weights, "moe"), "kvcache": "fp8",
                 "fmha": "fp8_block", "comm": "half"}
        drafts = draft_tokens(float(f["l_accept"]))
        notes = [] if p.kv_cache == "fp8" else [f"FP8 KV cache for {p.kv_cache.upper()}"]
        if f["hardware"] == "h800":
            notes.append("H100 as proxy for H800")
        if ep != f["ep_size"]:
            notes.append(f"EP{ep} for EP{f['ep_size']}")
        settings.append(Setting(f"deployment-{slug}", "deployment", "ep", f["model"], f["hardware"],
                                SYSTEMS[f["hardware"]], "sglang", int(f["batch_per_gpu"]), int(f["context"]),
                                ep_size=ep, nextn=drafts, nextn_accepted=float(f["l_accept"]) - 1.0,
                                quant=quant, deployment=slug, note="; ".join(notes)))
    return settings, refused


def tool_kwargs(s: Setting) -> dict[str, Any]:
    """Keyword arguments of ``aiconfigurator.cli.api.cli_estimate`` for a setting."""
    kw: dict[str, Any] = {"model_path": MODELS[s.model], "system_name": s.system, "backend_name": s.backend,
                          "isl": s.context, "osl": 2}
    kw.update({f"{k}_quant_mode": v for k, v in s.quant.items()})
    if s.nextn:
        kw.update(nextn=s.nextn, nextn_accepted=s.nextn_accepted)
    if s.design == "ep":
        kw.update(mode="static_gen", stride=1, batch_size=s.batch_per_gpu, tp_size=1,
                  attention_dp_size=s.ep_size, moe_tp_size=1, moe_ep_size=s.ep_size)
    else:
        g = SYSTEM_GPUS_PER_NODE[s.system]
        kw.update(mode="afd", n_a_nodes=s.attn_gpus // g, n_f_nodes=s.ffn_gpus // g, a_tp_size=1,
                  a_batch_size=s.batch_per_gpu, f_moe_ep_size=s.ffn_gpus, num_microbatches=s.micro_batches,
                  afd_phase="decode", afd_combined_with_pd=False)
    return kw


_ATTENTION_WORDS = ("attention", "mla", "qkv", "q_a", "q_b", "kv_a", "kv_b", "downscale", "bmm", "proj", "rope")
_FFN_WORDS = ("moe", "ffn", "act", "router", "dispatch", "combine", "expert", "mlp", "shared", "gate")
_OTHER_WORDS = ("norm", "embedding", "logits", "p2p", "_ar")


def op_family(name: str) -> str:
    """``attention``, ``ffn`` or ``other`` for one of the tool's per-operator names
    (``generation_mla_block`` -> attention, ``generation_moe_overlap`` -> ffn, norms, embedding
    and the LM head -> other)."""
    n = name.lower()
    if any(w in n for w in _OTHER_WORDS):
        return "other"
    if any(w in n for w in _FFN_WORDS):
        return "ffn"
    if any(w in n for w in _ATTENTION_WORDS):
        return "attention"
    return "other"


_FLAG = {"model_path": "--model-path", "system_name": "--system", "backend_name": "--backend",
         "mode": "--estimate-mode"}


def cli_command(s: Setting, distribution: str = DISTRIBUTIONS[0]) -> str:
    """The ``aiconfigurator cli estimate`` command equivalent to a setting (the balanced tables
    are reachable only through the Python API, which the note at the end says)."""
    parts = ["aiconfigurator cli estimate"]
    for k, v in tool_kwargs(s).items():
        flag = _FLAG.get(k, "--" + k.replace("_", "-"))
        if isinstance(v, bool):
            parts.append(flag if v else "--no-" + flag[2:])
        else:
            parts.append(f"{flag} {v}")
    if distribution != DISTRIBUTIONS[0]:
        parts.append(f"# API: ModelConfig.workload_distribution='{distribution}'")
    return " ".join(parts)


COLUMNS = {
    # provenance
    "id": str, "kind": str, "deployment": str, "note": str, "distribution": str, "tool": str,
    "tool_version": str, "backend": str, "backend_version": str, "args": str, "run_date": str, "status": str,
    # the setting
    "design": str, "model": str, "hf_model": str, "hardware": str, "system": str, "batch_per_gpu": int,
    "context": int, "ep_size": int, "attn_gpus": int, "ffn_gpus": int, "micro_batches": int, "nextn": int,
    "nextn_accepted": float, "gemm": str, "moe": str, "kvcache": str, "fmha": str, "comm": str,
    # the tool's prediction (NaN where the status is not ok)
    "tpot_ms": float, "tokens_per_s_per_gpu": float, "attn_ms": float, "ffn_ms": float, "other_ms": float,
    "t_attn_us": float, "t_ffn_us": float, "t_comm_us": float, "memory_gb": float, "oom": int,
}
"""Schema of ``data/aiconfigurator.csv``. EP rows: ``attn_ms``, ``ffn_ms`` (MoE, dense FFN and
all-to-all), ``other_ms`` (norms, embedding, LM head) are one step's per-operator sums over all
layers; AFD rows: ``t_attn_us``, ``t_ffn_us``, ``t_comm_us`` (both transfers) per layer and
micro-batch. ``oom``: 1 where the tool reports the batch does not fit."""

PROVENANCE = ("tool", "tool_version", "backend_version", "args", "run_date", "status")


def results_path() -> Path:
    return data_dir() / "aiconfigurator.csv"


def load_results(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The rows of the aiconfigurator CSV, typed by :data:`COLUMNS`; AfdError naming the file and
    the row where a column is missing, a value does not parse, or a provenance field is empty."""
    path = Path(path) if path else results_path()
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise AfdError(f"{path}: missing column(s) {', '.join(missing)}")
            rows = []
            for i, raw in enumerate(reader, start=2):
                row = {}
                for name, kind in COLUMNS.items():
                    v = raw[name]
                    try:
                        row[name] = (kind(v) if kind is str else kind(float(v)) if kind is int
                                     else float(v) if v not in ("", None) else math.nan)
                    except (TypeError, ValueError):
                        raise AfdError(f"{path}:{i}: column {name} is not a {kind.__name__}: {v!r}") from None
                empty = [c for c in PROVENANCE if not row[c]]
                if empty:
                    raise AfdError(f"{path}:{i}: empty provenance field(s) {', '.join(empty)}")
                if row["status"] == "ok" and not row["tpot_ms"] > 0:
                    raise AfdError(f"{path}:{i}: status ok without a TPOT")
                rows.append(row)
    except FileNotFoundError:
        raise AfdError(f"{path}: not found (run scripts/aiconfigurator_grid.py with aiconfigurator installed)") from None
    return rows


def setting_of(row: dict) -> Setting:
    """The setting of a CSV row."""
    quant = {k: row[k] for k in GRID_QUANT}
    return Setting(row["id"], row["kind"], row["design"], row["model"], row["hardware"], row["system"],
                   row["backend"], int(row["batch_per_gpu"]), int(row["context"]), ep_size=int(row["ep_size"]),
                   attn_gpus=int(row["attn_gpus"]), ffn_gpus=int(row["ffn_gpus"]),
                   micro_batches=int(row["micro_batches"]), nextn=int(row["nextn"]),
                   nextn_accepted=float(row["nextn_accepted"]), quant=quant, deployment=row["deployment"],
                   note=row["note"])


def precision_of(quant: dict) -> Precision:
    """Our data types for the tool's quantisation modes (block-scaled FP8 counts as FP8, NVFP4 as NVFP4)."""
    def ours(v: str) -> str:
        return "bf16" if v in ("bfloat16", "half", "float16") else "nvfp4" if v == "nvfp4" else "fp8"
    wire = ours(quant["comm"])
    return Precision(weights=ours(quant["moe"]), attention=ours(quant["gemm"]), dispatch=wire, combine=wire,
                     kv_cache=ours(quant["kvcache"]))


@lru_cache(maxsize=None)
def _model(slug: str):
    return load_model(slug, profile="reference")


@lru_cache(maxsize=None)
def _hardware(slug: str, efficiency: Efficiency | None):
    return load_hardware(slug, profile="datasheet", efficiency=efficiency)


def our_deployment(s: Setting, hardware, ep: dict | None = None) -> Deployment:
    """The setting as our deployment on ``hardware``: EP over ``ep_size`` GPUs in the tool's form
    (:data:`TOOL_EP_MICRO_BATCHES` micro-batch, low-latency kernels, no redundant experts), or AFD's
    attention and FFN GPUs as nodes, at the setting's batch. ``ep``: EP deployment fields to change
    (a variant, e.g. DeepSeek's two micro-batches)."""
    batch = float(s.batch_per_gpu)
    if s.design == "ep":
        return EPDeployment(hardware, s.ep_size, requests=batch,
                            **{"micro_batches": TOOL_EP_MICRO_BATCHES, **(ep or {})})
    g = hardware.gpus_per_node
    return AFDDeployment.of(hardware, s.attn_gpus / g, s.ffn_gpus / g,
                            micro_batches=s.micro_batches or AFDDeployment.micro_batches, requests=batch)


def our_step(s: Setting, assumptions: Assumptions = Assumptions(), t_gap_s: float = 0.0,
             hardware: str | None = None, efficiency: Efficiency | None = None, ep: dict | None = None) -> Step:
    """Our decode model at a setting: the same model, GPUs, batch, context, MTP and data types
    (datasheet hardware profile, reference model profile); ``hardware`` overrides the device
    (e.g. ``h100`` to put our model on the tool's H800 proxy); ``ep`` changes EP deployments
    (:func:`our_deployment`)."""
    model, hw = _model(s.model), _hardware(hardware or s.hardware, efficiency)
    budget = Budget(slo_s=1.0, l_accept=1.0 + s.nextn_accepted, t_gap_s=t_gap_s)
    return decode_step(model, our_deployment(s, hw, ep), s.context, budget, precision_of(s.quant), assumptions)


def our_breakdown(s: Setting, st: Step) -> dict[str, float]:
    """Our step in the tool's terms: TPOT, tokens/s per GPU; EP: attention, FFN side and the rest
    as one step's sums over all layers (ms); AFD: per-layer, per-micro-batch stage times (us)."""
    model = _model(s.model)
    out = {"tpot_ms": float(st.tpot_s) * 1e3, "tokens_per_s_per_gpu": float(st.tokens_per_s_per_gpu),
           "fits_memory": bool(st.fits_memory)}
    if s.design == "ep":
        attn = model.num_layers * float(st.t_attn)
        other = float(st.lm_head_s) + float(st.mtp_s) + float(st.t_gap_s)
        out.update(attn_ms=attn * 1e3, ffn_ms=(float(st.step_s) - attn - other) * 1e3, other_ms=other * 1e3)
    else:
        out.update(t_attn_us=float(st.t_attn) * 1e6, t_ffn_us=float(st.t_ffn) * 1e6, t_comm_us=float(st.t_comm) * 1e6)
    return out


def our_ffn_split(s: Setting, assumptions: Assumptions = Assumptions(), count=active_experts) -> dict[str, float]:
    """Our AFD FFN stage at an AFD setting split as :func:`afdlib.decode.step.afd_step` builds it
    (:func:`afdlib.decode.step.afd_ffn_parts`: one FFN GPU, one MoE layer, one micro-batch; us): the
    routed experts' grouped GEMMs (``routed_us``), the shared experts' GEMMs (``shared_us``), the
    fixed cost of the stage's kernels (``fixed_us``: the routed experts' and the shared experts'),
    the routed experts' kernel count (``routed_kernels``) and the tokens of one micro-batch over the
    attention pool (``tokens``). The router's GEMM is in our attention stage and the dispatch and
    combine in our transfer stage, not here. ``count``: the routed experts the pairs reach
    (:func:`afdlib.decode.step.afd_ffn_parts`)."""
    if s.design != "afd":
        raise AfdError(f"{s.id}: not an AFD setting")
    tokens = float(s.batch_per_gpu) * (1 + draft_tokens(1.0 + s.nextn_accepted)) / (s.micro_batches or AFDDeployment.micro_batches) * s.attn_gpus
    parts = afd_ffn_parts(_model(s.model), _hardware(s.hardware, None), precision_of(s.quant), assumptions, tokens,
                          s.ffn_gpus, count)
    return {"routed_us": float(parts["routed_s"]) * 1e6, "shared_us": float(parts["shared_s"]) * 1e6,
            "fixed_us": float(parts["fixed_s"]) * 1e6, "routed_kernels": KERNELS_ROUTED, "tokens": tokens}


def comparison_rows(rows: list[dict] | None = None, assumptions: Assumptions = Assumptions(),
                    distribution: str = DISTRIBUTIONS[0], efficiency: Efficiency | None = None,
                    ep: dict | None = None) -> list[dict[str, Any]]:
    """One row per setting the tool answered (status ok, ``distribution`` tables): its prediction,
    ours, and the ratio ours / its for TPOT and each stage (``ep``: changes to our EP deployments)."""
    rows = load_results() if rows is None else rows
    out = []
    for r in rows:
        if r["status"] != "ok" or r["distribution"] != distribution:
            continue
        s = setting_of(r)
        ours = our_breakdown(s, our_step(s, assumptions, efficiency=efficiency, ep=ep))
        row = {k: r[k] for k in ("id", "kind", "deployment", "note", "design", "model", "hardware", "system",
                                 "batch_per_gpu", "ep_size", "attn_gpus", "ffn_gpus", "oom")}
        row["gpus"] = s.gpus
        for k in ("tpot_ms", "tokens_per_s_per_gpu", "attn_ms", "ffn_ms", "t_attn_us", "t_ffn_us", "t_comm_us"):
            if k in ours:
                row[f"aic_{k}"], row[f"our_{k}"] = r[k], ours[k]
                row[f"ratio_{k}"] = ours[k] / r[k] if r[k] > 0 else math.nan
        row["our_fits_memory"] = ours["fits_memory"]
        out.append(row)
    return out


def imbalance_factor(rows: list[dict] | None = None) -> dict[str, float]:
    """Per setting id, the tool's own TPOT with its power-law MoE tables over its TPOT with its
    balanced ones: how much of its prediction is the imbalance baked into its measurements."""
    rows = load_results() if rows is None else rows
    by = {(r["id"], r["distribution"]): r for r in rows if r["status"] == "ok"}
    return {i: by[(i, DISTRIBUTIONS[0])]["tpot_ms"] / by[(i, DISTRIBUTIONS[1])]["tpot_ms"]
            for (i, d) in by if d == DISTRIBUTIONS[1] and (i, DISTRIBUTIONS[0]) in by}


VARIANTS = (
    ("our defaults", "assumption", {}),
    ("its balanced MoE tables (no power-law load)", "tables", {}),
    ("kernel overhead 0 us", "assumption", {"kernel_overhead_s": 0.0}),
    ("kernel overhead 10 us", "assumption", {"kernel_overhead_s": 10e-6}),
    ("matmul efficiency 0.5", "assumption", {"matmul_efficiency": 0.5}),
    ("kernels: datasheet profile (0.75, HBM 0.8, 3 us)", "assumption", {"kernel_profile": "datasheet"}),
    ("HBM at 55% of datasheet (datasheet kernels)", "efficiency", {"hbm": 0.55}),
    ("networks at 50% of datasheet (was 80%)", "efficiency", {"scale_up": 0.5, "scale_out": 0.5}),
    ("EP all-to-all not hidden (overlap 0)", "assumption", {"ep_overlap": 0.0}),
    ("EP: two micro-batches (DeepSeek's overlap; the tool models one)", "deployment", {"micro_batches": 2}),
    ("AFD transfers not hidden (overlap 0)", "assumption", {"afd_overlap": 0.0}),
    ("AFD: its send probability", "assumption", {"afd_destinations": "exact"}),
    ("AFD: the paper's max(1, K/N_F)", "assumption", {"afd_destinations": "paper"}),
)
"""One-at-a-time changes, to see which closes a gap to the tool: (label, kind, values). Kinds:
``assumption`` (:class:`afdlib.decode.step.Assumptions` fields), ``deployment`` (fields of our EP
deployments, :class:`afdlib.decode.deployment.EPDeployment`), ``efficiency`` (the datasheet
hardware profile's :class:`afdlib.inputs.specs.Efficiency`; a change of HBM runs under the datasheet
kernel profile: the calibrated one takes its HBM fractions from kernel measurements), ``tables`` (compare against the tool's balanced MoE
tables instead of its power-law ones: the imbalance assumption changed on its side, since our
uniform-routing balancedness is already close to balanced)."""


def variant_rows(rows: list[dict] | None = None, assumptions: Assumptions = Assumptions(),
                 variants=VARIANTS) -> list[dict[str, Any]]:
    """Long table: for every setting the tool answered, our TPOT and stage times over its under
    each variant."""
    rows = load_results() if rows is None else rows
    out = []
    for label, kind, values in variants:
        a = (replace(assumptions, **values) if kind == "assumption"
             else replace(assumptions, kernel_profile="datasheet") if "hbm" in values else assumptions)
        eff = Efficiency(**values) if kind == "efficiency" else None
        dist = DISTRIBUTIONS[1] if kind == "tables" else DISTRIBUTIONS[0]
        for c in comparison_rows(rows, a, dist, eff, values if kind == "deployment" else None):
            out.append({"variant": label, "id": c["id"], "kind": c["kind"], "design": c["design"],
                        "model": c["model"], "hardware": c["hardware"], "batch_per_gpu": c["batch_per_gpu"],
                        **{k: c[k] for k in c if k.startswith("ratio_")}})
    return out
