"""Issue 32 item 7: one generator of malformed files per input kind (hardware YAML, model YAML, Hugging
Face config.json, sweep spec, expert-counts JSON), each run against the commands that take that kind.

Every mutation of a valid file is one of: a field's name misspelt, a field duplicated, a value of the
wrong type, a huge, zero, negative or non-finite number, a value nested 10,000 deep, the file empty, or
the file replaced by a special file (a directory, a FIFO, /dev/zero, /dev/null). The property: the
command exits 2 with one ``afd: error`` line and nothing on stdout, or exits 0 with finite numbers,
within a CPU limit; a misspelt or duplicated field is never taken (always exit 2), since a typo that
reads is a silently ignored input. Seeded, so a failure reproduces."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import yaml

from test_command_property import NON_FINITE, finite_json, run

SEED = 32
DRAWS = 20                          # per (kind, command): the suite's time budget
HW = {"name": "Probe", "gpus_per_node": 8, "bf16_tflops": 989, "fp8_tflops": 1979, "hbm_tb_per_s": 3.35,
      "hbm_gb": 80, "scale_up_gb_per_s": 450, "scale_out_gb_per_s": 50, "scale_out_latency_us": 10, "source": "a test"}
MODEL = {"name": "Probe-MoE", "hidden_size": 1024, "moe_intermediate_size": 512, "num_layers": 4, "dense_layers": 0,
         "moe_layers": 4, "routed_experts": 8, "experts_per_token": 2, "source": "a test"}
HF = {"hidden_size": 2048, "moe_intermediate_size": 768, "num_hidden_layers": 8, "num_experts": 16,
      "num_experts_per_tok": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
      "vocab_size": 32000, "tie_word_embeddings": False, "use_cache": True}
SPEC = {"model": "deepseek-v3", "hardware": "h800", "design": "ep", "vary": {"slo_ms": [50, 100]},
        "fixed": {"ep_size": 64, "context": 4096}}
COUNTS = {"logical_count": [[1.0 + (i % 5) for i in range(256)]] * 3}
WRONG = ["text", [1, 2], {"a": 1}, True, None]
NUMBERS = [0, -1, 1e308, 10 ** 400, float("nan"), float("inf"), 1e-300]


def _dump(doc, kind: str) -> str:
    if kind in ("hf", "counts"):
        return json.dumps(doc, allow_nan=True)
    return yaml.safe_dump(doc, sort_keys=False, width=10 ** 6)


def _misspelt(rng, key: str) -> str:
    i = int(rng.integers(len(key)))
    how = int(rng.integers(3))
    out = key[:i] + key[i + 1:] if how == 0 else key[:i] + key[i] + key[i:] if how == 1 else key[:i] + key[i].swapcase() + key[i + 1:]
    return out if out != key else key + "s"


def mutate(rng, doc: dict, kind: str, path) -> str:
    """Writes one mutation of ``doc`` at ``path`` (or puts a special file there); returns its kind:
    ``typo`` and ``duplicate`` must be refused, the others refused or answered."""
    what = ["typo", "duplicate", "type", "number", "deep", "empty", "special"][int(rng.integers(7))]
    # a config.json keeps fields the reader never reads (use_cache): their misspelling is no input of ours
    keys = [k for k in doc if k not in ("name", "source") and not (kind == "hf" and what == "typo" and k == "use_cache")]
    key = keys[int(rng.integers(len(keys)))]
    if kind == "counts" and what in ("typo", "duplicate"):
        what = "type"                       # one field, whose misspelling is a missing field: "type" covers it
    text = None
    if what == "typo":
        text = _dump({(_misspelt(rng, k) if k == key else k): v for k, v in doc.items()}, kind)
    elif what == "duplicate":
        text = _dump(doc, kind)
        if kind == "hf":
            text = text[:-1] + f', {json.dumps(key)}: {json.dumps(doc[key])}' + "}"
        else:
            text = text + yaml.safe_dump({key: doc[key]}, width=10 ** 6)
    elif what == "type":
        text = _dump({**doc, key: WRONG[int(rng.integers(len(WRONG)))]}, kind)
    elif what == "number":
        n = NUMBERS[int(rng.integers(len(NUMBERS)))]
        text = _dump({**doc, key: n}, kind) if not isinstance(n, int) or n < 1e300 else \
            _dump({**doc, key: 0}, kind).replace(": 0", f": {n}", 1)
    elif what == "deep":
        text = _dump({**doc, key: "DEEP"}, kind).replace('"DEEP"' if kind in ("hf", "counts") else "DEEP",
                                                          "[" * 10_000 + "]" * 10_000)
    elif what == "empty":
        text = ["", "# only a comment\n", "[]", "null"][int(rng.integers(4))]
    else:
        special = ["dir", "fifo", "/dev/zero", "/dev/null"][int(rng.integers(4))]
        if os.path.lexists(path):
            os.remove(path)
        if special == "dir":
            path.mkdir()
        elif special == "fifo":
            os.mkfifo(path)
        else:
            os.symlink(special, path)
    if text is not None:
        path.write_text(text)
    return what


KINDS = {   # kind: (valid document, file name, commands with {} for the file)
    "hardware": (HW, "hw.yaml", [["hfu", "--model", "deepseek-v3", "--hardware", "{}", "--json"],
                                 ["throughput", "--model", "deepseek-v3", "--hardware", "{}", "--design", "ep",
                                  "--ep-size", "64", "--json"]]),
    "model": (MODEL, "m.yaml", [["model", "--model", "{}", "--json"],
                                ["throughput", "--model", "{}", "--hardware", "h800", "--design", "ep", "--ep-size",
                                 "8", "--json"]]),
    "hf": (HF, "config.json", [["model", "--model", "{}", "--json"],
                               ["throughput", "--model", "{}", "--hardware", "h800", "--design", "ep", "--ep-size",
                                "8", "--json"]]),
    "spec": (SPEC, "spec.yaml", [["sweep", "{}", "--out", "OUT"]]),
    "counts": (COUNTS, "c.json", [["balance", "--counts", "{}", "--ranks", "32", "--json"]]),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_malformed_files_are_refused_in_one_line_or_answered(capsys, tmp_path, kind):
    doc, name, commands = KINDS[kind]
    rng = np.random.default_rng([SEED, list(KINDS).index(kind)])
    seen = set()
    for i in range(DRAWS * len(commands)):
        folder = tmp_path / f"draw{i}"
        folder.mkdir()
        path = folder / name
        what = mutate(rng, doc, kind, path)
        if kind == "spec" and what not in ("typo", "duplicate", "empty", "special", "deep"):
            continue                       # a spec that parses starts a Dask cluster: the sweep tests cover those
        argv = [str(path) if a == "{}" else str(folder / "out.zarr") if a == "OUT" else a for a in commands[i % len(commands)]]
        code, out, err, seconds = run(argv, capsys)
        seen.add(code)
        assert code in (0, 2), (what, argv, code, err[-2000:])
        if code == 2:
            assert err.startswith("afd: error: ") and err.count("\n") == 1 and out == "", (what, argv, err)
            assert not re.search(r"\d{16}", err), err
        else:
            assert what not in ("typo", "duplicate"), (what, argv, path.read_text()[:500])   # never taken silently
            if "--json" in argv:
                finite_json(out, argv)
            else:
                assert not NON_FINITE.search(out), out
        assert not (folder / "out.zarr").exists(), argv
    assert 2 in seen, seen
