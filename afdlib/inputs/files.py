"""Reading user files with one clear error line each (missing file, malformed JSON or YAML)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from afdlib.errors import AfdError


def read_json(path: str | Path) -> Any:
    """Parsed JSON of ``path``; :class:`AfdError` naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        return json.loads(_text(path))
    except json.JSONDecodeError as e:
        raise AfdError(f"{path}: not valid JSON ({e})") from None


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
    text = _text(path)
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise AfdError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if key is not None:
        _PARSED[key] = doc
        return copy.deepcopy(doc)
    return doc


def _text(path: Path) -> str:
    """The file's text; AfdError for a missing file, a directory, unreadable or non-UTF-8 bytes."""
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
