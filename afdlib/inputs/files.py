"""Reading user files with one clear error line each (missing file, malformed JSON or YAML, too large).

A file is read only up to a size (:data:`MAX_YAML_BYTES`, :data:`MAX_JSON_BYTES`: far above any
catalogue, config or counts file), and a YAML document only up to a number of values counted as
its aliases expand them (:data:`MAX_YAML_VALUES`): a few lines of nested aliases ("billion
laughs") would otherwise stand for more values than any machine can print or walk.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from afdlib.errors import AfdError


def read_json(path: str | Path) -> Any:
    """Parsed JSON of ``path``; :class:`AfdError` naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        return json.loads(_text(path, MAX_JSON_BYTES))
    except json.JSONDecodeError as e:
        raise AfdError(f"{path}: not valid JSON ({e})") from None


MAX_YAML_BYTES = 8 << 20
"""Largest YAML file read (8 MiB; the largest catalogue file is about 0.1 MiB)."""
MAX_JSON_BYTES = 64 << 20
"""Largest JSON file read (64 MiB; a config.json or a counts file of layers x experts is far smaller)."""
MAX_YAML_VALUES = 1_000_000
"""Most values (mappings, lists and scalars, each alias counted as often as it is used) in a YAML document."""

_PARSED: dict = {}


def read_yaml(path: str | Path) -> Any:
    """Parsed YAML of ``path``; :class:`AfdError` naming the file when it is missing or malformed.

    Each file is parsed once per process and size/modification time (libyaml's loader where
    available); callers get their own deep copy, so editing a file or the result is safe."""
    import copy

    import yaml
    path = Path(path)
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _PARSED:
        return copy.deepcopy(_PARSED[key])
    text = _text(path, MAX_YAML_BYTES)
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise AfdError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    except RecursionError:
        raise AfdError(f"{path}: not valid YAML (nested too deeply)") from None
    if _values(doc, MAX_YAML_VALUES) > MAX_YAML_VALUES:
        raise AfdError(f"{path}: expands to more than {MAX_YAML_VALUES:,} values (aliases used over and over?); "
                       "refused")
    if key is not None:
        _PARSED[key] = doc
        return copy.deepcopy(doc)
    return doc


def _values(doc: Any, limit: int) -> int:
    """Values in ``doc`` as its aliases expand it (a shared object counted at each use), counting
    stops just past ``limit`` (a self-referencing alias never ends otherwise)."""
    seen, stack = 0, [doc]
    while stack and seen <= limit:
        x = stack.pop()
        seen += 1
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    return seen


def _text(path: Path, limit: int) -> str:
    """The file's text; AfdError for a missing file, a directory, a file over ``limit`` bytes,
    unreadable or non-UTF-8 bytes."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0   # reading says why
    if size > limit:
        raise AfdError(f"{path}: {size / 2**20:,.1f} MiB, more than the {limit / 2**20:g} MiB read from such a file")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AfdError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AfdError(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise AfdError(f"{path}: permission denied") from None
    except UnicodeDecodeError as e:
        raise AfdError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise AfdError(f"{path}: cannot be read ({e.strerror})") from None
