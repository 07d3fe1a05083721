"""pyproject.toml is the source of truth; environment.yml must list the same packages."""
import re
import sys

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (the README's minimum): the test extra installs tomli there
    import tomli as tomllib


def _project(root) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text())["project"]


def _norm(req: str) -> str:
    """A requirement without spaces, in lower case, and without its environment marker (conda has
    none: environment.yml lists ``tomli>=2`` for pyproject's ``tomli>=2; python_version < "3.11"``)."""
    return re.sub(r"\s+", "", req.split(";")[0]).lower()


def test_environment_yml_mirrors_pyproject(root):
    project = _project(root)
    wanted = {_norm(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    env = yaml.safe_load((root / "environment.yml").read_text())
    listed = {_norm(d) for d in env["dependencies"] if isinstance(d, str) and not d.startswith(("python", "pip"))}
    assert listed == wanted


def test_jupyter_book_pinned_below_2(root):
    assert any(_norm(d) == "jupyter-book>=1.0.4,<2" for d in _project(root)["dependencies"])


def test_tomli_only_where_tomllib_is_missing(root):
    tomli = [r for r in _project(root)["optional-dependencies"]["test"] if _norm(r).startswith("tomli")]
    assert [re.sub(r"\s+", "", r) for r in tomli] == ['tomli>=2;python_version<"3.11"']
