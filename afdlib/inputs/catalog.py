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

import copy
import json
import math
import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Sequence

from afdlib.errors import AfdError
from afdlib.inputs import checks
from afdlib.inputs.files import read_yaml
from afdlib.inputs.hf_config import model_from_hf_config
from afdlib.inputs.specs import (ATTENTION_INT_FIELDS, MODEL_INT_FIELDS, MODEL_OPTIONAL_INT_FIELDS, Attention, Efficiency, Hardware, Model, _positive, check_hardware, check_model)

__all__ = ["Efficiency", "Hardware", "Model", "data_dir", "hardware_names", "model_names", "load_hardware",
           "load_model", "load_catalog", "to_record", "hardware_row", "model_row"]

TERA = 1e12
GIGA = 1e9

HARDWARE_PROFILES = ("paper", "datasheet")
MODEL_PROFILES = ("paper", "reference")

_HW_NUMERIC = ("fp8_tflops", "bf16_tflops", "fp4_tflops", "int8_tflops", "hbm_tb_per_s", "hbm_gb", "scale_up_gb_per_s",
               "scale_out_gb_per_s", "inter_domain_gb_per_s", "scale_out_latency_us", "scale_up_latency_us")
_HW_REQUIRED = ("hbm_tb_per_s", "hbm_gb", "scale_up_gb_per_s", "scale_out_gb_per_s")
_MODEL_INT = MODEL_INT_FIELDS
_HW_ENTRY = ("name", "gpus_per_node", "scale_up_domain", "paper", "datasheet", "topology_source", "notes")
"""Fields of a hardware entry outside its profile blocks."""
_PROVENANCE = ("source", "sources", "uncertain", "notes")
_MODEL_ENTRY = (*MODEL_INT_FIELDS, *MODEL_OPTIONAL_INT_FIELDS, "attention", "weights_dtype", "name", "hf_id", "paper",
                *_PROVENANCE)
"""Fields of a model entry."""
NOTES_CHARS = 400
"""Longest ``notes`` kept from a file (the catalogue's are under 120 characters)."""


def data_dir() -> Path:
    """Folder of the catalogue files: ``$AFDLIB_DATA`` or ``data/`` at the repository root."""
    env = os.environ.get("AFDLIB_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "data"


# ----------------------------------------------------------------------------- loading

def _section(path: Path, key: str) -> dict:
    """The ``key:`` mapping of a catalogue file, as parsed once per process: not to be edited (an entry taken
    from it is copied, :func:`_entry`)."""
    doc = read_yaml(path, copy_result=False)
    if not isinstance(doc, dict) or not isinstance(doc.get(key), dict):
        raise AfdError(f"{path}: expected a top-level mapping '{key}:' of entries")
    return doc[key]


def _mapping(where: str, name: str, value: Any, required: bool = False) -> dict:
    """A sub-block that must be a mapping (``paper:``, ``sources:``, ...); {} when absent."""
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise AfdError(f"{where}: '{name}' must be a mapping of fields, got {value!r}")
    return value


def _provenance(where: str, block: dict, known: Sequence[str]) -> tuple[Any, dict, dict]:
    """(``source:``, ``sources:``, ``uncertain:``) of an entry: the default source, and copies of the
    per-field mappings ({} when absent), each naming only fields of ``known`` (a misspelt name would
    leave its field's source the default, unsaid)."""
    sources, uncertain = (dict(_mapping(where, k, block.get(k))) for k in ("sources", "uncertain"))
    for name, mapping in (("sources", sources), ("uncertain", uncertain)):
        unknown_fields(f"{where} {name}", mapping, known)
        for field_, text in mapping.items():     # a source is words (a list or a mapping was kept as its repr)
            checks.label(text, f"{name}.{field_}", where, limit=NOTES_CHARS)
    source = block.get("source")
    if source is not None:
        checks.label(source, "source", where, limit=NOTES_CHARS)
    return source, sources, uncertain


def _with_default_source(where: str, sources: dict, default_src: Any, fields: Sequence[str], values: dict) -> dict:
    """``sources`` plus the default source for every field of ``fields`` that ``values`` holds and
    ``sources`` does not name; AfdError where such a field has no source at all."""
    missing = [k for k in fields if k in values and k not in sources]
    if missing and not default_src:
        raise AfdError(f"{where}: value '{missing[0]}' has no source (add sources.{missing[0]} or source)")
    return {**sources, **{k: default_src for k in missing}}


def _one_entry(path: Path, doc: dict, key: str) -> tuple[str, Any]:
    """(slug, entry) of a user file holding one device or model, at top level or under ``key:``."""
    if key in doc and isinstance(doc[key], dict):
        others = [str(k) for k in doc if k != key]
        if others:     # beside the section, every other key would be dropped without a word
            raise AfdError(f"{path}: holds {', '.join(repr(k) for k in others)} beside '{key}:'; a file with a "
                           f"'{key}:' section holds that section only")
        doc = doc[key]
        if len(doc) != 1:
            raise AfdError(f"{path}: holds {len(doc)} entries under '{key}:' ({', '.join(map(str, doc))}); "
                           "give a file with one")
    entries = [k for k, v in doc.items() if isinstance(v, dict) and k not in ("paper", "datasheet", "sources",
                                                                               "uncertain", "attention")]
    if len(doc) == 1 and entries:
        return str(entries[0]), doc[entries[0]]
    if len(entries) > 1 and len(entries) == len(doc):
        raise AfdError(f"{path}: holds {len(entries)} entries ({', '.join(map(str, entries))}); give a file with one")
    return path.stem, doc


def unknown_fields(where: str, block: dict, known) -> None:
    """AfdError naming every field of ``block`` not in ``known``, each with the nearest known name where
    one is close (a misspelt field would otherwise be dropped without a word)."""
    import difflib
    unknown = [k for k in block if k not in known]
    if not unknown:
        return
    def hint(k):
        near = difflib.get_close_matches(str(k), list(known), n=1, cutoff=0.6)
        return f"'{k}'" + (f" (did you mean '{near[0]}'?)" if near else "")
    raise AfdError(f"{where}: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(hint(k) for k in unknown)}; "
                   f"known: {', '.join(sorted(set(known)))}")


def _hardware_from_block(slug: str, entry: dict, block: dict, profile: str,
                         eff: Efficiency | None, where: str) -> Hardware:
    block = _mapping(where, profile if profile != "user" else "hardware", block, required=True)
    unknown_fields(where, block, _HW_NUMERIC + _PROVENANCE)
    for req in _HW_REQUIRED:
        if req not in block:
            raise AfdError(f"{where}: missing field '{req}'")
    if "fp8_tflops" not in block and "bf16_tflops" not in block:
        raise AfdError(f"{where}: needs fp8_tflops or bf16_tflops")
    default_src, sources, uncertain = _provenance(where, block, _HW_NUMERIC + ("gpus_per_node", "scale_up_domain"))
    sources = _with_default_source(where, sources, default_src, _HW_NUMERIC, block)
    sout = block["scale_out_gb_per_s"]
    superpod = isinstance(sout, str) and sout.strip().lower() == "superpod"   # the one word it takes (SuperPod too)
    vals = {k: (float(checks.nonnegative(block[k], k, where)) if k.endswith("_latency_us") else
                _positive(where, k, block[k])) for k in _HW_NUMERIC       # a latency may be 0, as in a sweep
            if k in block and not (k == "scale_out_gb_per_s" and superpod)}
    dtype = "fp8" if "fp8_tflops" in vals else "bf16"
    flops = vals.get("fp8_tflops", vals.get("bf16_tflops")) * TERA
    hbm_bw = vals["hbm_tb_per_s"] * TERA
    up = vals["scale_up_gb_per_s"] * GIGA
    out = up if superpod else vals["scale_out_gb_per_s"] * GIGA
    if eff is not None:
        flops, hbm_bw = flops * eff.compute, hbm_bw * eff.hbm
        up, out = up * eff.scale_up, (up * eff.scale_up if superpod else out * eff.scale_out)
    for field_, value in (("fp8_tflops" if dtype == "fp8" else "bf16_tflops", flops), ("hbm_tb_per_s", hbm_bw),
                          ("scale_up_gb_per_s", up), ("scale_out_gb_per_s", out),
                          ("hbm_gb", vals["hbm_gb"] * GIGA)):
        if not math.isfinite(value):
            raise AfdError(f"{where}: {field_} = {block.get(field_)} is out of range")
    sheet = _mapping(where, "datasheet", entry.get("datasheet"))
    rates = {}
    for key in ("bf16_tflops", "fp4_tflops", "int8_tflops"):
        rate = vals.get(key)
        if rate is None and key in sheet:  # the paper lists FP8 only: BF16 and FP4 from the datasheet
            rate = _positive(where, key, sheet[key])
            sources[key] = (sheet.get("sources") or {}).get(key) or sheet.get("source", "")
            if key in (sheet.get("uncertain") or {}):
                uncertain[key] = sheet["uncertain"][key]
        rates[key] = None if rate is None else rate * TERA * (eff.compute if eff is not None else 1.0)
    bf16 = rates["bf16_tflops"]
    topo = entry.get("topology_source")
    if topo:
        sources["gpus_per_node"] = sources["scale_up_domain"] = topo
    inter = vals.get("inter_domain_gb_per_s")
    if inter is not None and not superpod:   # read only where one fabric spans the scale-up domains
        raise AfdError(f"{where}: inter_domain_gb_per_s is the bandwidth between a Superpod's scale-up domains "
                       "(scale_out_gb_per_s: superpod); this device's links between nodes are scale_out_gb_per_s")
    if inter is not None:
        inter *= GIGA * (eff.scale_out if eff is not None else 1.0)
    latency = {k: (vals[k] * 1e-6 if k in vals else None) for k in ("scale_out_latency_us", "scale_up_latency_us")}
    hw = Hardware(
        slug=slug, name=checks.label(entry.get("name", slug), "name", where), profile=profile, flops=flops, flops_dtype=dtype,
        hbm_bytes_per_s=hbm_bw, hbm_bytes=vals["hbm_gb"] * GIGA,
        scale_up_bytes_per_s=up, scale_out_bytes_per_s=out,
        gpus_per_node=entry.get("gpus_per_node", 8),      # a scale-up domain spans one node unless given
        scale_up_domain=entry.get("scale_up_domain", entry.get("gpus_per_node", 8)),
        superpod=superpod, bf16_flops=bf16, fp4_flops=rates["fp4_tflops"],
        int8_flops=rates["int8_tflops"], inter_domain_bytes_per_s=inter,
        scale_out_latency_s=latency["scale_out_latency_us"], scale_up_latency_s=latency["scale_up_latency_us"],
        efficiency=eff, sources=sources, uncertain=uncertain,
        notes=checks.label(block.get("notes", entry.get("notes", "")), "notes", where, limit=NOTES_CHARS),
    )
    check_hardware(hw)
    return hw


def _hardware_entry(slug: str, entry: Any, profile: str, eff: Efficiency | None, origin: str) -> Hardware:
    where = f"{origin}: hardware '{slug}'"
    if profile not in HARDWARE_PROFILES:
        raise AfdError(f"unknown hardware profile '{profile}'; valid: {', '.join(HARDWARE_PROFILES)}")
    if not isinstance(entry, dict):
        raise AfdError(f"{where}: expected a mapping")
    flat = "paper" not in entry and "datasheet" not in entry
    unknown_fields(where, entry, _HW_ENTRY + (_HW_NUMERIC + _PROVENANCE if flat else ()))
    if flat:
        # a user file may give one flat block of values (treated as sustained figures)
        return _hardware_from_block(slug, entry, {k: v for k, v in entry.items() if k in _HW_NUMERIC + _PROVENANCE},
                                    "user", None, where)
    # both blocks checked, whichever is asked for (a wrong value is never latent); the datasheet first, as
    # the paper profile reads its BF16 / FP4 / INT8 rates from it
    sheet = (_hardware_from_block(slug, entry, entry["datasheet"], "datasheet", eff or Efficiency(),
                                  where + " (datasheet)") if "datasheet" in entry else None)
    if "paper" in entry:
        paper = _hardware_from_block(slug, entry, entry["paper"], "paper", None, where + " (paper)")
        if profile == "paper":
            return paper
    if sheet is None:
        raise AfdError(f"{where}: no datasheet profile")
    return sheet


def refuse_profile_of_flat(hw: Hardware, name: str, option: str) -> None:
    """A hardware profile named (``option``: ``--hw-profile paper``, a spec's ``hw_profile: paper``) for a flat
    device file, which holds one set of figures (no ``paper:`` or ``datasheet:`` block): refused, as it
    would choose nothing."""
    if hw.profile == "user":
        raise AfdError(f"{option}: {name} gives one flat set of figures, with no paper: or datasheet: block to "
                       f"choose between; drop {option.split()[0]}, or put the figures under those blocks")


def per_die(hw: Hardware, dies: int) -> Hardware:
    """One of the ``dies`` compute dies of a multi-die package run as a device of its own (Ascend 910C:
    two dies, which CloudMatrix384's serving papers count as the unit, arXiv 2508.02520): every rate,
    the memory and every bandwidth divided by ``dies`` (the package's links shared evenly), a node and a
    scale-up domain holding ``dies`` times as many; latencies as the package's."""
    n = checks.integer(dies, "dies per package", lo=1)
    if n == 1:
        return hw

    def part(x):
        return None if x is None else x / n
    return hw.with_overrides(
        name=f"{hw.name}, one of {n} dies", flops=hw.flops / n, bf16_flops=part(hw.bf16_flops),
        fp4_flops=part(hw.fp4_flops), int8_flops=part(hw.int8_flops), hbm_bytes_per_s=hw.hbm_bytes_per_s / n,
        hbm_bytes=hw.hbm_bytes / n, scale_up_bytes_per_s=hw.scale_up_bytes_per_s / n,
        scale_out_bytes_per_s=hw.scale_out_bytes_per_s / n, inter_domain_bytes_per_s=part(hw.inter_domain_bytes_per_s),
        gpus_per_node=hw.gpus_per_node * n, scale_up_domain=hw.scale_up_domain * n)


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
    slug, entry, origin = _entry(name, catalog, "hardware", "hardware", "a .yaml file")
    return _hardware_entry(slug, entry, profile, efficiency, origin)


def _entry(name: str, catalog: Path | None, section: str, what: str, files: str) -> tuple[str, Any, str]:
    """(slug, entry, origin) of ``name``: the one entry of a user YAML file when ``name`` is a path,
    else the entry under ``section:`` of the catalogue (``catalog`` or data/SECTION.yaml)."""
    if _looks_like_path(name):
        path = Path(name)
        doc = read_yaml(path)
        if not isinstance(doc, dict):
            raise AfdError(f"{path}: expected a mapping of {what} fields")
        slug, entry = _one_entry(path, doc, section)
        return checks.label(slug, "entry name", str(path)), entry, str(path)
    cat_path = catalog or data_dir() / f"{section}.yaml"
    entries = _section(cat_path, section)
    key = name.strip().lower()
    if key not in entries:
        raise AfdError(f"unknown {what} '{name}'; valid: {', '.join(sorted(entries))} (or a path to {files})")
    return key, copy.deepcopy(entries[key]), str(cat_path)


def _model_entry(slug: str, entry: Any, profile: str, origin: str) -> Model:
    where = f"{origin}: model '{slug}'"
    if profile not in MODEL_PROFILES:
        raise AfdError(f"unknown model profile '{profile}'; valid: {', '.join(MODEL_PROFILES)}")
    if not isinstance(entry, dict):
        raise AfdError(f"{where}: expected a mapping")
    values = dict(entry)
    unknown_fields(where, entry, _MODEL_ENTRY)
    paper = _mapping(where, "paper", entry.get("paper"))
    unknown_fields(f"{where} (paper)", paper, _MODEL_INT + MODEL_OPTIONAL_INT_FIELDS)
    if paper and profile != "paper":  # checked whichever profile is asked for (a wrong value is never latent)
        try:
            _model_entry(slug, entry, "paper", origin)
        except AfdError as e:
            raise AfdError(f"{e} (in its paper: block)") from None
    if profile == "paper":
        values.update(paper)
    missing = [f_ for f_ in _MODEL_INT if f_ not in values and f_ != "shared_experts"]
    if missing:
        raise AfdError(f"{where}: missing field(s) {', '.join(missing)}")
    default_src, sources, uncertain = _provenance(where, entry, _MODEL_ENTRY)
    sources = _with_default_source(where, sources, default_src, _MODEL_INT, values)
    for k in paper:
        if profile == "paper":
            sources[k] = "arXiv 2602.09721 Table 4 (as printed)"
    sources = _with_default_source(where, sources, default_src,
                                   MODEL_OPTIONAL_INT_FIELDS + ("attention", "weights_dtype"), values)
    if values.get("shared_expert_intermediate_size") and not values.get("shared_experts"):   # it would be dropped
        raise AfdError(f"{where}: shared_expert_intermediate_size is given but shared_experts is 0: give the count")
    weights = values.get("weights_dtype")
    if "vocab_size" in values:  # absent: no LM head modelled; given: a vocabulary of at least one token
        checks.integer(values["vocab_size"], "vocab_size", where, lo=1)
    m = Model(slug=slug, name=checks.label(entry.get("name", slug), "name", where),
              **{k: values.get(k, 0) for k in _MODEL_INT + MODEL_OPTIONAL_INT_FIELDS},
              attention=_attention(values.get("attention"), where),
              weights_dtype=None if weights is None else str(weights).lower(),
              profile=profile, hf_id=checks.label(entry.get("hf_id", ""), "hf_id", where), sources=sources,
              uncertain=uncertain, notes=checks.label(entry.get("notes", ""), "notes", where, limit=NOTES_CHARS))
    # the paper profile keeps Table 4 as printed (GLM-4.7: 92 MoE beside 3 dense layers of 92)
    check_model(m, layer_sum=not (profile == "paper" and paper))
    return m


def _attention(block: Any, where: str) -> Attention | None:
    """The ``attention:`` block of a model entry (None when absent)."""
    if block is None:
        return None
    if not isinstance(block, dict):
        raise AfdError(f"{where}: attention must be a mapping of fields, got {block!r}")
    unknown = set(block) - set(ATTENTION_INT_FIELDS) - {"family"}
    if unknown:
        raise AfdError(f"{where}: unknown attention field(s) {sorted(unknown)}; valid: family, "
                       f"{', '.join(ATTENTION_INT_FIELDS)}")
    for req in ("family", "num_heads", "num_kv_heads", "head_dim"):
        if req not in block:
            raise AfdError(f"{where}: attention needs '{req}'")
    family = str(block["family"]).lower()
    if family != "mla" and block.get("qk_rope_head_dim"):   # a config.json may carry it (read there, unused)
        raise AfdError(f"{where}: attention.qk_rope_head_dim is MLA's decoupled RoPE width; a {family} block "
                       "does not read it (drop it, or give family: mla)")
    return Attention(family=family, **{k: block[k] for k in ATTENTION_INT_FIELDS if k in block})


HYBRID_CATALOGUE = "models_hybrid.yaml"
"""Models whose layers differ by token mixer, each read from its published config.json in
``data/hf_configs/`` (:func:`hybrid_model_names`); loaded by slug like the others, but not yet in
:func:`model_names` (the book's chapters and ``advise --all``)."""


def hybrid_model_names() -> list[str]:
    """Slugs of the hybrid-model catalogue (``data/models_hybrid.yaml``)."""
    path = data_dir() / HYBRID_CATALOGUE
    return sorted(_section(path, "models")) if path.is_file() else []


def _hybrid_entry(slug: str, profile: str) -> Model:
    """A hybrid catalogue model: its config read as a user's would be, named and sourced by the entry."""
    path = data_dir() / HYBRID_CATALOGUE
    entry = copy.deepcopy(_section(path, "models")[slug])
    where = f"{path}: model '{slug}'"
    if not isinstance(entry, dict) or not isinstance(entry.get("hf_config"), str):
        raise AfdError(f"{where}: needs 'hf_config', the file in {data_dir() / 'hf_configs'}")
    config = data_dir() / "hf_configs" / entry["hf_config"]
    m = model_from_hf_config(config, slug=slug)
    source = checks.label(entry.get("source", str(config)), "source", where, limit=NOTES_CHARS)

    def shipped(text: str) -> str:   # the catalogue's files by their place in it, not this machine's path
        return text.replace(str(data_dir()), data_dir().name)
    return replace(m, slug=slug, name=checks.label(entry.get("name", slug), "name", where), profile=profile,
                   hf_id=str(entry.get("hf_id", "")), sources={**{k: source for k in m.sources}, "config": shipped(str(config)),
                   **{k: shipped(m.sources[k]) for k in ("config_fields", "weights_dtype", "weights_unread") if k in m.sources}},
                   notes=checks.label(entry.get("notes", ""), "notes", where, limit=NOTES_CHARS))


def load_model(name: str, profile: str = "paper", catalog: Path | None = None) -> Model:
    """A catalogue model by slug (:func:`model_names`, :func:`hybrid_model_names`), a Hugging Face
    ``config.json`` path, or a YAML file."""
    if _looks_like_path(name) and Path(name).suffix.lower() == ".json":     # config.JSON too
        return model_from_hf_config(Path(name))
    if catalog is None and not _looks_like_path(name) and name.strip().lower() not in model_names() \
            and name.strip().lower() in hybrid_model_names():    # the main catalogue first: one file read, not two
        return _hybrid_entry(name.strip().lower(), profile)
    slug, entry, origin = _entry(name, catalog, "models", "model", "a config.json or .yaml file")
    return _model_entry(slug, entry, profile, origin)


def _looks_like_path(name: str) -> bool:
    return name.lower().endswith((".yaml", ".yml", ".json")) or os.sep in name


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
            "dtype": hw.flops_dtype, "bf16_tflops": None if hw.bf16_flops is None else hw.bf16_flops / TERA,
            "fp4_tflops": None if hw.fp4_flops is None else hw.fp4_flops / TERA,
            "int8_tflops": None if hw.int8_flops is None else hw.int8_flops / TERA,
            "hbm_tb_per_s": hw.hbm_bytes_per_s / TERA, "hbm_gb": hw.hbm_bytes / GIGA,
            "scale_up_gb_per_s": hw.scale_up_bytes_per_s / GIGA,
            "scale_out_gb_per_s": hw.scale_out_bytes_per_s / GIGA, "gpus_per_node": hw.gpus_per_node,
            "superpod": hw.superpod}


def model_row(m: Model) -> dict:
    """One Table-4-style row, with granularity H/M and sparsity E/K."""
    return {"slug": m.slug, "name": m.name, "hidden_size": m.hidden_size, "num_layers": m.num_layers,
            "dense_layers": m.dense_layers, "moe_layers": m.moe_layers, "routed_experts": m.routed_experts,
            "experts_per_token": m.experts_per_token, "moe_intermediate_size": m.moe_intermediate_size,
            "granularity_h_over_m": m.granularity, "sparsity_e_over_k": m.sparsity}
