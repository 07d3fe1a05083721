"""Reading user files with one clear error line each (missing file, malformed JSON or YAML, too large,
not a regular file, a key given twice, nested too deeply).

Only regular files are read (a FIFO would block forever, ``/dev/zero`` never ends), and each only up
to a size (:data:`MAX_YAML_BYTES`, :data:`MAX_JSON_BYTES`: far above any catalogue, config or counts
file), counted as it is read; a YAML document only up to a number of values counted as its aliases
expand them (:data:`MAX_YAML_VALUES`): a few lines of nested aliases ("billion laughs") would
otherwise stand for more values than any machine can print or walk. A key given twice in one
mapping is an error, in YAML and in JSON, not the last value silently taken.
"""
from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from afdlib.errors import AfdError


def read_json(path: str | Path) -> Any:
    """Parsed JSON of ``path``; :class:`AfdError` naming the file when it is missing or malformed."""
    path = Path(path)

    def pairs(items):
        out = {}
        for key, value in items:
            if key in out:
                raise AfdError(f"{path}: key '{key}' given twice in one object; give each key once")
            out[key] = value
        return out
    try:
        return json.loads(_text(path, MAX_JSON_BYTES), object_pairs_hook=pairs)
    except json.JSONDecodeError as e:
        raise AfdError(f"{path}: not valid JSON ({e})") from None
    except RecursionError:
        raise AfdError(f"{path}: not valid JSON (nested too deeply)") from None
    except AfdError:            # a special file, a size or a repeated key: its own line already names the file
        raise
    except ValueError as e:     # an integer of more than 4,300 digits, which Python refuses to convert
        raise AfdError(f"{path}: not valid JSON here ({str(e).split(';')[0]})") from None


MAX_YAML_BYTES = 8 << 20
"""Largest YAML file read (8 MiB; the largest catalogue file is about 0.1 MiB)."""
MAX_JSON_BYTES = 64 << 20
"""Largest JSON file read (64 MiB; a config.json or a counts file of layers x experts is far smaller)."""
MAX_YAML_VALUES = 1_000_000
"""Most values (mappings, lists and scalars, each alias counted as often as it is used) in a YAML document."""

_PARSED: dict = {}


def read_yaml(path: str | Path, copy_result: bool = True) -> Any:
    """Parsed YAML of ``path``; :class:`AfdError` naming the file when it is missing or malformed.

    Each file is parsed once per process and size/modification time (libyaml's loader where
    available); callers get their own deep copy, so editing a file or the result is safe
    (``copy_result=False``: the parsed document itself, for a caller that copies only what it keeps)."""
    import copy

    import yaml
    path = Path(path)
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _PARSED:
        return copy.deepcopy(_PARSED[key]) if copy_result else _PARSED[key]
    text = _text(path, MAX_YAML_BYTES)
    try:
        doc = yaml.load(text, Loader=_loader())
    except _DuplicateKey as e:
        raise AfdError(f"{path}: key '{e.args[0]}' given twice in one mapping (line {e.args[1]}); give each key once") from None
    except _AmbiguousNumber as e:
        raise AfdError(f"{path}: the number '{e.args[0]}' (line {e.args[1]}) is in a YAML 1.1 notation that "
                       "reads as another number (a leading zero is octal: 010 is 8; ':' is base 60: 1:30 is 90; "
                       "'_' groups digits, 0x hex); write plain decimal digits") from None
    except yaml.YAMLError as e:
        raise AfdError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    except RecursionError:
        raise AfdError(f"{path}: not valid YAML (nested too deeply)") from None
    if _values(doc, MAX_YAML_VALUES) > MAX_YAML_VALUES:
        raise AfdError(f"{path}: expands to more than {MAX_YAML_VALUES:,} values (aliases used over and over?); "
                       "refused")
    if key is not None:
        _PARSED[key] = doc
        return copy.deepcopy(doc) if copy_result else doc
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


class _DuplicateKey(Exception):
    """A mapping key given twice (key, line)."""


_LOADERS: dict = {}


def _loader():
    """The safe YAML loader (libyaml's where available) that refuses a key given twice in one mapping."""
    if "strict" not in _LOADERS:
        import yaml
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class Strict(base):   # type: ignore[misc, valid-type]
            def construct_yaml_int(self, node):
                _plain_number(node)
                return super().construct_yaml_int(node)

            def construct_yaml_float(self, node):
                _plain_number(node)
                return super().construct_yaml_float(node)

            def construct_mapping(self, node, deep=False):
                seen = set()
                for key_node, _ in node.value:     # a key as written (scalars: all this project's keys)
                    if isinstance(key_node, yaml.ScalarNode):
                        if key_node.value in seen:
                            raise _DuplicateKey(key_node.value, key_node.start_mark.line + 1)
                        seen.add(key_node.value)
                return super().construct_mapping(node, deep)
        Strict.add_constructor("tag:yaml.org,2002:int", Strict.construct_yaml_int)
        Strict.add_constructor("tag:yaml.org,2002:float", Strict.construct_yaml_float)
        _LOADERS["strict"] = Strict
    return _LOADERS["strict"]


def _plain_number(node) -> None:
    """Refuse a number written in one of YAML 1.1's other notations, which PyYAML reads and a reader
    would not: a leading zero (octal: 080 is refused, 010 would be 8), 0x / 0o / 0b, digits grouped
    with '_' (1_000) and base 60 (1:30 is 90)."""
    text = node.value.lstrip("+-")
    if "_" in text or ":" in text or re.match(r"0[0-9]", text) or text[:2].lower() in ("0x", "0o", "0b"):
        raise _AmbiguousNumber(node.value, node.start_mark.line + 1)


class _AmbiguousNumber(Exception):
    pass


def _text(path: Path, limit: int) -> str:
    """The file's text; AfdError for a missing file, a directory or anything but a regular file (a
    FIFO, a device), a file over ``limit`` bytes (counted as read, so a file that grows or lies about
    its size stops there), unreadable or non-UTF-8 bytes."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise AfdError(f"{path}: no such file") from None
    except OSError:
        mode = None   # opening says why
    if mode is not None and stat.S_ISDIR(mode):
        raise AfdError(f"{path}: is a directory, not a file")
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else \
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
        raise AfdError(f"{path}: is {kind}, not a regular file; give a file")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise AfdError(f"{path}: more than the {limit / 2**20:g} MiB read from such a file")
        return data.decode("utf-8")
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
