"""pyproject.toml is the source of truth; environment.yml must list the same packages."""
import ast
import re

import yaml

try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:  # Python 3.10 (the README's minimum)
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None


def _mini_toml(text: str) -> dict:
    """Tables with string and list-of-strings values: the part of TOML that pyproject.toml's
    [project] uses (other values are skipped). For Python 3.10 without tomli."""
    doc: dict = {}
    table = doc
    pending = ""
    for line in text.splitlines():
        line = re.sub(r"""^((?:[^#"']|"[^"]*"|'[^']*')*)#.*$""", r"\1", line).strip()  # comments
        if not line:
            continue
        if not pending and line.startswith("[") and not line.startswith("[["):
            table = doc
            for part in line.strip("[]").split("."):
                table = table.setdefault(part.strip().strip('"'), {})
            continue
        pending += " " + line
        if "=" not in pending or pending.count("[") > pending.count("]"):
            continue  # a list continues on the next line
        key, value = pending.split("=", 1)
        pending = ""
        try:
            table[key.strip().strip('"')] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            pass  # numbers, booleans, inline tables: not needed here
    return doc


def _project(root) -> dict:
    text = (root / "pyproject.toml").read_text()
    return (tomllib.loads(text) if tomllib else _mini_toml(text))["project"]


def _norm(req: str) -> str:
    return re.sub(r"\s+", "", req).lower()


def test_environment_yml_mirrors_pyproject(root):
    project = _project(root)
    wanted = {_norm(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    env = yaml.safe_load((root / "environment.yml").read_text())
    listed = {_norm(d) for d in env["dependencies"] if isinstance(d, str) and not d.startswith(("python", "pip"))}
    assert listed == wanted


def test_jupyter_book_pinned_below_2(root):
    assert any(_norm(d) == "jupyter-book>=1.0.4,<2" for d in _project(root)["dependencies"])


def test_mini_toml_reads_pyproject_as_tomllib_does(root):
    text = (root / "pyproject.toml").read_text()
    mini = _mini_toml(text)["project"]
    assert mini["dependencies"] and mini["optional-dependencies"]["test"]
    if tomllib:
        full = tomllib.loads(text)["project"]
        assert mini["dependencies"] == full["dependencies"]
        assert mini["optional-dependencies"] == full["optional-dependencies"]
        assert mini["name"] == full["name"]
