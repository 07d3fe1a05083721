"""afd model: what the tool understood of a model (a catalogue slug, a config.json or a YAML file).

Its name, its layers by token mixer and by FFN kind, total and active parameters, the KV cache per
token (BF16, all layers; windows excluded: they hold a constant per request), the constant state
per request (recurrent and convolution states; full windows), the weights' format and the config
fields it read.
"""
from __future__ import annotations

import argparse

from afdlib.cli.options import dumps


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("model", help="what the tool understood of a model: layers, parameters, cache")
    p.add_argument("--model", required=True, help="catalogue slug, config.json or .yaml file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)
    return p


def summary(model) -> dict:
    """The document ``afd model --json`` prints for ``model``."""
    from afdlib.inputs.layers import (MIXER_KINDS, kv_elements_per_token, model_mixers, parameter_counts,
                                      state_bytes, window_elements)
    from afdlib.evaluator.dense import dense_intermediate_size
    from afdlib.inputs.specs import dtype_bytes
    groups = model_mixers(model)
    mixers = {k: sum(g.layers for g in groups if g.kind == k) for k in MIXER_KINDS}
    total, active = parameter_counts(model)
    bf16 = dtype_bytes("bf16")
    fields = model.sources.get("config_fields")
    return {
        "name": model.name, "slug": model.slug,
        "layers": {"total": model.num_layers, "mixer": {k: v for k, v in mixers.items() if v},
                   "ffn": {k: v for k, v in (("moe", model.moe_layers), ("dense", model.dense_layers),
                                             ("none", model.num_layers - model.moe_layers - model.dense_layers)) if v}},
        "attention_family": None if model.attention is None else model.attention.family,
        "vocab_size": model.vocab_size,
        "dense_intermediate_size": dense_intermediate_size(model) if model.dense_layers else None,
        "dense_intermediate_size_assumed": bool(model.dense_layers and not model.dense_intermediate_size),
        "total_params": total, "active_params": active,
        "input_embedding_params": 0.0 if model.tied_embeddings else float(model.vocab_size * model.hidden_size),
        "kv_bytes_per_token": sum(g.layers * kv_elements_per_token(g) for g in groups) * bf16,
        "window_bytes_per_request": sum(g.layers * window_elements(g) for g in groups) * bf16,
        "state_bytes_per_request": sum(g.layers * state_bytes(g) for g in groups),
        "moe_latent_size": model.moe_latent_size, "ffn_matrices": model.ffn_matrices,
        "experts": {"routed": model.routed_experts, "per_token": model.experts_per_token,
                    "shared": model.shared_experts, "intermediate_size": model.moe_intermediate_size},
        "weights": model.weights_dtype or f"fp8 (default: {model.sources.get('weights_unread', 'none declared')})",
        "fields_read": fields.split(", ") if fields else sorted(model.sources),
        "fields_ignored": (model.sources.get("config_ignored") or "").split(", ") if model.sources.get("config_ignored")
        else [],
        "lists_read_by_first_entry": model.sources["config_lists"].split("; ") if model.sources.get("config_lists")
        else [],
    }


def run(args) -> int:
    from afdlib.inputs.catalog import load_model
    doc = summary(load_model(args.model, profile="reference"))
    if args.json:
        print(dumps(doc, indent=1))
        return 0
    g = 1e9
    lines = [f"{doc['name']} ({doc['slug']})",
             f"  layers          {doc['layers']['total']}: mixers " + ", ".join(f"{k} {v}" for k, v in doc["layers"]["mixer"].items())
             + "; FFN " + ", ".join(f"{k} {v}" for k, v in doc["layers"]["ffn"].items()),
             f"  parameters      {doc['total_params'] / g:.1f}B total, {doc['active_params'] / g:.1f}B active per token"
             + (f" (the input embedding's {doc['input_embedding_params'] / g:.2f}B, a lookup, not counted as active)"
                if doc["input_embedding_params"] else " (the embedding is tied to the LM head, counted once)"
                if doc["vocab_size"] else " (no vocab_size given: no embedding or LM head modelled)"),
             f"  KV cache        {doc['kv_bytes_per_token'] / 1e3:.1f} kB per token (BF16, all layers)"
             + (f" + {doc['window_bytes_per_request'] / 1e6:.1f} MB of windows per request"
                if doc["window_bytes_per_request"] else ""),
             f"  state           {doc['state_bytes_per_request'] / 1e6:.1f} MB per request",
             f"  experts         {doc['experts']['routed']} routed, {doc['experts']['per_token']} per token, "
             f"{doc['experts']['shared']} shared; {doc['ffn_matrices']} matrices"
             + (f"; latent width {doc['moe_latent_size']}" if doc["moe_latent_size"] else ""),
             f"  weights         {doc['weights']}",
             *([f"  dense FFN       width {doc['dense_intermediate_size']:,} assumed: K x M + the shared experts' "
                "(no dense_intermediate_size given)"] if doc["dense_intermediate_size_assumed"] else []),
             f"  fields read     {', '.join(doc['fields_read'])}"]
    if doc["lists_read_by_first_entry"]:   # [text, vision] lists where one number is read
        lines.append(f"  lists read      by their first entry (the text model's): {', '.join(doc['lists_read_by_first_entry'])}")
    if doc["fields_ignored"]:       # a config.json's fields the reader never looked at
        lines.append(f"  fields ignored  {', '.join(doc['fields_ignored'])}")
    print("\n".join(lines))
    return 0
