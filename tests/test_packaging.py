"""pyproject.toml is the source of truth; environment.yml must list the same packages."""
import re
import tomllib

import yaml


def _norm(req: str) -> str:
    return re.sub(r"\s+", "", req).lower()


def test_environment_yml_mirrors_pyproject(root):
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    wanted = {_norm(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    env = yaml.safe_load((root / "environment.yml").read_text())
    listed = {_norm(d) for d in env["dependencies"] if isinstance(d, str) and not d.startswith(("python", "pip"))}
    assert listed == wanted


def test_jupyter_book_pinned_below_2(root):
    deps = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(_norm(d) == "jupyter-book>=1.0.4,<2" for d in deps)
