"""Reading user files with one clear error line each (missing file, malformed JSON or YAML)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import AfdError


def read_json(path: str | Path) -> Any:
    """Parsed JSON of ``path``; :class:`AfdError` naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise AfdError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise AfdError(f"{path}: not valid JSON ({e})") from None


def read_yaml(path: str | Path) -> Any:
    """Parsed YAML of ``path``; :class:`AfdError` naming the file when it is missing or malformed."""
    import yaml
    path = Path(path)
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except FileNotFoundError:
        raise AfdError(f"{path}: no such file") from None
    except yaml.YAMLError as e:
        raise AfdError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
