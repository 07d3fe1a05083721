"""Hardware and model catalogues: loading, validation, and the values the model uses.

Unit convention: the YAML files use the units in their field names (``_tflops``,
``_tb_per_s``, ``_gb_per_s``, ``_gb``); everything returned here is SI: FLOP/s, bytes,
bytes/s. Bandwidths are per GPU and per direction.

Two hardware profiles:

* ``paper``: Table 5 of arXiv 2602.09721, already "sustained" figures; reproduces its figures.
  A device without a paper row falls back to its datasheet profile (``Hardware.profile``
  says which one was used).
* ``datasheet``: vendor or reference numbers times named efficiency factors
  (:class:`Efficiency`), for predictions of real deployments.

Models have a ``reference`` profile (Hugging Face config values) and a ``paper`` profile
(the same, with the values printed in Table 4 where they differ).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from .errors import AfdError
from .files import read_yaml

TERA = 1e12
GIGA = 1e9

HARDWARE_PROFILES = ("paper", "datasheet")
MODEL_PROFILES = ("paper", "reference")

_HW_NUMERIC = ("fp8_tflops", "bf16_tflops", "hbm_tb_per_s", "hbm_gb", "scale_up_gb_per_s",
               "scale_out_gb_per_s", "inter_domain_gb_per_s")
_HW_REQUIRED = ("hbm_tb_per_s", "hbm_gb", "scale_up_gb_per_s", "scale_out_gb_per_s")
_MODEL_INT = ("hidden_size", "moe_intermediate_size", "num_layers", "dense_layers", "moe_layers",
              "routed_experts", "experts_per_token", "shared_experts")


def data_dir() -> Path:
    """Folder of the catalogue files: ``$AFDLIB_DATA`` or ``data/`` at the repository root."""
    env = os.environ.get("AFDLIB_DATA")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True)
class Efficiency:
    """Sustained fraction of datasheet peaks, applied by the ``datasheet`` profile only.

    Defaults are empirical, each from a cited measurement:
    hbm 0.8 (AIConfigurator's "HBM BW x 0.8" correction), scale_up 0.8 (NCCL on NVLink reaches
    80-82% of nominal, MLE; the paper itself uses 160 of H800's 200 GB/s), scale_out 0.8
    (DeepEP low-latency kernels reach 78-80% of 50 GB/s at large EP; StepFun uses 40 of 50),
    compute 1.0 (the paper assumes OFU = 100%).
    """

    compute: float = 1.0
    hbm: float = 0.8
    scale_up: float = 0.8
    scale_out: float = 0.8

    def __post_init__(self):
        for k, v in asdict(self).items():
            if not (0 < v <= 1):
                raise AfdError(f"efficiency {k} must be in (0, 1], got {v}")


@dataclass(frozen=True)
class Hardware:
    """One accelerator, SI units, per GPU, per direction."""

    slug: str
    name: str
    profile: str
    flops: float                  # peak dense FLOP/s used by the analysis (FP8, else BF16)
    flops_dtype: str              # "fp8" or "bf16"
    hbm_bytes_per_s: float
    hbm_bytes: float
    scale_up_bytes_per_s: float
    scale_out_bytes_per_s: float
    gpus_per_node: int = 8
    scale_up_domain: int = 8
    superpod: bool = False
    bf16_flops: float | None = None  # peak dense BF16 FLOP/s, for reference (None if not catalogued)
    sources: Mapping[str, str] = field(default_factory=dict)
    uncertain: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""

    @property
    def bandwidth_ratio(self) -> float:
        """r = BW_up / BW_out (NOTES section 3)."""
        return self.scale_up_bytes_per_s / self.scale_out_bytes_per_s

    def with_overrides(self, **kw) -> "Hardware":
        """A copy with some fields replaced (validated)."""
        hw = replace(self, **kw)
        _check_hardware(hw)
        return hw


@dataclass(frozen=True)
class Model:
    """The MoE fields of one model (counts; weights assumed FP8, 1 byte per parameter)."""

    slug: str
    name: str
    hidden_size: int
    moe_intermediate_size: int
    num_layers: int
    dense_layers: int
    moe_layers: int
    routed_experts: int
    experts_per_token: int
    shared_experts: int = 0
    profile: str = "reference"
    hf_id: str = ""
    sources: Mapping[str, str] = field(default_factory=dict)
    uncertain: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""

    @property
    def granularity(self) -> float:
        """H / M: small means coarse experts (favours AFD, paper Section 4)."""
        return self.hidden_size / self.moe_intermediate_size

    @property
    def sparsity(self) -> float:
        """E / K: routed experts per activated expert."""
        return self.routed_experts / self.experts_per_token

    def with_overrides(self, **kw) -> "Model":
        m = replace(self, **kw)
        _check_model(m)
        return m


# ----------------------------------------------------------------------------- loading

def _section(path: Path, key: str) -> dict:
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get(key), dict):
        raise AfdError(f"{path}: expected a top-level mapping '{key}:' of entries")
    return doc[key]


def _positive(where: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise AfdError(f"{where}: {name} must be a number, got {value!r}")
    if value <= 0:
        raise AfdError(f"{where}: {name} must be positive, got {value}")
    return float(value)


def _check_hardware(hw: Hardware) -> None:
    where = f"hardware '{hw.slug}'"
    for f_ in ("flops", "hbm_bytes_per_s", "hbm_bytes", "scale_up_bytes_per_s", "scale_out_bytes_per_s"):
        _positive(where, f_, getattr(hw, f_))
    for f_ in ("gpus_per_node", "scale_up_domain"):
        v = getattr(hw, f_)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise AfdError(f"{where}: {f_} must be a positive integer, got {v!r}")


def _hardware_from_block(slug: str, entry: dict, block: dict, profile: str,
                         eff: Efficiency | None, where: str) -> Hardware:
    unknown = set(block) - set(_HW_NUMERIC) - {"source", "sources", "uncertain", "notes"}
    if unknown:
        raise AfdError(f"{where}: unknown field(s) {sorted(unknown)}; valid: {sorted(_HW_NUMERIC)}")
    for req in _HW_REQUIRED:
        if req not in block:
            raise AfdError(f"{where}: missing field '{req}'")
    if "fp8_tflops" not in block and "bf16_tflops" not in block:
        raise AfdError(f"{where}: needs fp8_tflops or bf16_tflops")
    default_src = block.get("source")
    sources = dict(block.get("sources") or {})
    for k in _HW_NUMERIC:
        if k in block and k not in sources:
            if not default_src:
                raise AfdError(f"{where}: value '{k}' has no source (add sources.{k} or source)")
            sources[k] = default_src
    superpod = block["scale_out_gb_per_s"] == "superpod"
    vals = {k: _positive(where, k, block[k]) for k in _HW_NUMERIC
            if k in block and not (k == "scale_out_gb_per_s" and superpod)}
    dtype = "fp8" if "fp8_tflops" in vals else "bf16"
    flops = vals.get("fp8_tflops", vals.get("bf16_tflops")) * TERA
    hbm_bw = vals["hbm_tb_per_s"] * TERA
    up = vals["scale_up_gb_per_s"] * GIGA
    out = up if superpod else vals["scale_out_gb_per_s"] * GIGA
    if eff is not None:
        flops, hbm_bw = flops * eff.compute, hbm_bw * eff.hbm
        up, out = up * eff.scale_up, (up * eff.scale_up if superpod else out * eff.scale_out)
    bf16 = vals.get("bf16_tflops")
    sheet = entry.get("datasheet") if isinstance(entry.get("datasheet"), dict) else {}
    if bf16 is None and "bf16_tflops" in sheet:  # the paper lists FP8 only: BF16 from the datasheet
        bf16 = _positive(where, "bf16_tflops", sheet["bf16_tflops"])
        sources["bf16_tflops"] = (sheet.get("sources") or {}).get("bf16_tflops") or sheet.get("source", "")
    if bf16 is not None:
        bf16 *= TERA * (eff.compute if eff is not None else 1.0)
    topo = entry.get("topology_source")
    if topo:
        sources["gpus_per_node"] = sources["scale_up_domain"] = topo
    hw = Hardware(
        slug=slug, name=str(entry.get("name", slug)), profile=profile, flops=flops, flops_dtype=dtype,
        hbm_bytes_per_s=hbm_bw, hbm_bytes=vals["hbm_gb"] * GIGA,
        scale_up_bytes_per_s=up, scale_out_bytes_per_s=out,
        gpus_per_node=entry.get("gpus_per_node", 8), scale_up_domain=entry.get("scale_up_domain", 8),
        superpod=superpod, bf16_flops=bf16, sources=sources, uncertain=dict(block.get("uncertain") or {}),
        notes=str(block.get("notes", entry.get("notes", ""))),
    )
    _check_hardware(hw)
    return hw


def _hardware_entry(slug: str, entry: Any, profile: str, eff: Efficiency | None, origin: str) -> Hardware:
    where = f"{origin}: hardware '{slug}'"
    if profile not in HARDWARE_PROFILES:
        raise AfdError(f"unknown hardware profile '{profile}'; valid: {', '.join(HARDWARE_PROFILES)}")
    if not isinstance(entry, dict):
        raise AfdError(f"{where}: expected a mapping")
    if "paper" not in entry and "datasheet" not in entry:
        # a user file may give one flat block of values (treated as sustained figures)
        return _hardware_from_block(slug, entry, {k: v for k, v in entry.items() if k in _HW_NUMERIC
                                                  or k in ("source", "sources", "uncertain", "notes")},
                                    "user", None, where)
    if profile == "paper" and "paper" in entry:
        return _hardware_from_block(slug, entry, entry["paper"], "paper", None, where + " (paper)")
    if "datasheet" not in entry:
        raise AfdError(f"{where}: no datasheet profile")
    return _hardware_from_block(slug, entry, entry["datasheet"], "datasheet", eff or Efficiency(),
                                where + " (datasheet)")


def hardware_names(path: Path | None = None) -> list[str]:
    """Slugs of the hardware catalogue."""
    return sorted(_section(path or data_dir() / "hardware.yaml", "hardware"))


def model_names(path: Path | None = None) -> list[str]:
    """Slugs of the model catalogue."""
    return sorted(_section(path or data_dir() / "models.yaml", "models"))


def load_hardware(name: str, profile: str = "paper", efficiency: Efficiency | None = None,
                  catalog: Path | None = None) -> Hardware:
    """A catalogue device by slug, or a user YAML file (path ending in .yaml/.yml).

    A user file holds one device: either ``{slug: {...}}`` or the fields at top level
    (``name``, ``gpus_per_node``, ``fp8_tflops``, ``hbm_tb_per_s``, ``hbm_gb``,
    ``scale_up_gb_per_s``, ``scale_out_gb_per_s`` (or ``superpod``), ``source``), optionally
    with ``paper``/``datasheet`` blocks like the catalogue's.
    """
    if _looks_like_path(name):
        path = Path(name)
        doc = read_yaml(path)
        if not isinstance(doc, dict):
            raise AfdError(f"{path}: expected a mapping of hardware fields")
        if "hardware" in doc and isinstance(doc["hardware"], dict) and len(doc["hardware"]) == 1:
            doc = doc["hardware"]
        if len(doc) == 1 and isinstance(next(iter(doc.values())), dict):
            slug, entry = next(iter(doc.items()))
        else:
            slug, entry = path.stem, doc
        return _hardware_entry(str(slug), entry, profile, efficiency, str(path))
    cat_path = catalog or data_dir() / "hardware.yaml"
    entries = _section(cat_path, "hardware")
    key = name.strip().lower()
    if key not in entries:
        raise AfdError(f"unknown hardware '{name}'; valid: {', '.join(sorted(entries))} "
                       "(or a path to a .yaml file)")
    return _hardware_entry(key, entries[key], profile, efficiency, str(cat_path))


def _check_model(m: Model) -> None:
    where = f"model '{m.slug}'"
    for f_ in _MODEL_INT:
        v = getattr(m, f_)
        if not isinstance(v, int) or isinstance(v, bool):
            raise AfdError(f"{where}: {f_} must be an integer, got {v!r}")
        if v < 0 or (v == 0 and f_ not in ("dense_layers", "shared_experts")):
            raise AfdError(f"{where}: {f_} must be positive, got {v}")
    if m.experts_per_token > m.routed_experts:
        raise AfdError(f"{where}: TopK ({m.experts_per_token}) exceeds the routed experts "
                       f"({m.routed_experts})")
    if m.moe_layers > m.num_layers or m.dense_layers > m.num_layers:
        raise AfdError(f"{where}: moe_layers ({m.moe_layers}) and dense_layers ({m.dense_layers}) "
                       f"cannot exceed num_layers ({m.num_layers})")


def _model_entry(slug: str, entry: Any, profile: str, origin: str) -> Model:
    where = f"{origin}: model '{slug}'"
    if profile not in MODEL_PROFILES:
        raise AfdError(f"unknown model profile '{profile}'; valid: {', '.join(MODEL_PROFILES)}")
    if not isinstance(entry, dict):
        raise AfdError(f"{where}: expected a mapping")
    values = dict(entry)
    if profile == "paper":
        values.update(entry.get("paper") or {})
    missing = [f_ for f_ in _MODEL_INT if f_ not in values and f_ != "shared_experts"]
    if missing:
        raise AfdError(f"{where}: missing field(s) {', '.join(missing)}")
    default_src = entry.get("source")
    sources = dict(entry.get("sources") or {})
    for k in _MODEL_INT:
        if k in values and k not in sources:
            if not default_src:
                raise AfdError(f"{where}: value '{k}' has no source (add sources.{k} or source)")
            sources[k] = default_src
    for k in (entry.get("paper") or {}):
        if profile == "paper":
            sources[k] = "arXiv 2602.09721 Table 4 (as printed)"
    m = Model(slug=slug, name=str(entry.get("name", slug)),
              **{k: values.get(k, 0) for k in _MODEL_INT},
              profile=profile, hf_id=str(entry.get("hf_id", "")), sources=sources,
              uncertain=dict(entry.get("uncertain") or {}), notes=str(entry.get("notes", "")))
    _check_model(m)
    return m


def load_model(name: str, profile: str = "paper", catalog: Path | None = None) -> Model:
    """A catalogue model by slug, a Hugging Face ``config.json`` path, or a YAML file."""
    if _looks_like_path(name):
        path = Path(name)
        if path.suffix == ".json":
            from .hf_config import model_from_hf_config
            return model_from_hf_config(path)
        doc = read_yaml(path)
        if isinstance(doc, dict) and "models" in doc and isinstance(doc["models"], dict) and len(doc["models"]) == 1:
            doc = doc["models"]
        if isinstance(doc, dict) and len(doc) == 1 and isinstance(next(iter(doc.values())), dict):
            slug, entry = next(iter(doc.items()))
        else:
            slug, entry = path.stem, doc
        return _model_entry(str(slug), entry, profile, str(path))
    cat_path = catalog or data_dir() / "models.yaml"
    entries = _section(cat_path, "models")
    key = name.strip().lower()
    if key not in entries:
        raise AfdError(f"unknown model '{name}'; valid: {', '.join(sorted(entries))} "
                       "(or a path to a config.json or .yaml file)")
    return _model_entry(key, entries[key], profile, str(cat_path))


def _looks_like_path(name: str) -> bool:
    return name.endswith((".yaml", ".yml", ".json")) or os.sep in name


def load_catalog(profile: str = "paper") -> tuple[dict[str, Hardware], dict[str, Model]]:
    """Every catalogue device and model, validated."""
    hw = {s: load_hardware(s, profile=profile) for s in hardware_names()}
    models = {s: load_model(s, profile="paper" if profile == "paper" else "reference")
              for s in model_names()}
    return hw, models


def to_record(obj: Hardware | Model) -> dict:
    """Plain-dict form (JSON-ready)."""
    d = asdict(obj)
    d["sources"], d["uncertain"] = dict(obj.sources), dict(obj.uncertain)
    return json.loads(json.dumps(d))


def hardware_row(hw: Hardware) -> dict:
    """One Table-5-style row in display units (TFLOP/s, TB/s, GB, GB/s)."""
    return {"slug": hw.slug, "name": hw.name, "profile": hw.profile, "peak_tflops": hw.flops / TERA,
            "dtype": hw.flops_dtype, "bf16_tflops": None if hw.bf16_flops is None else hw.bf16_flops / TERA, "hbm_tb_per_s": hw.hbm_bytes_per_s / TERA, "hbm_gb": hw.hbm_bytes / GIGA,
            "scale_up_gb_per_s": hw.scale_up_bytes_per_s / GIGA,
            "scale_out_gb_per_s": hw.scale_out_bytes_per_s / GIGA, "gpus_per_node": hw.gpus_per_node,
            "superpod": hw.superpod}


def model_row(m: Model) -> dict:
    """One Table-4-style row, with granularity H/M and sparsity E/K."""
    return {"slug": m.slug, "name": m.name, "hidden_size": m.hidden_size, "num_layers": m.num_layers,
            "dense_layers": m.dense_layers, "moe_layers": m.moe_layers, "routed_experts": m.routed_experts,
            "experts_per_token": m.experts_per_token, "moe_intermediate_size": m.moe_intermediate_size,
            "granularity_h_over_m": m.granularity, "sparsity_e_over_k": m.sparsity}
