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


def test_lock_pins_every_dependency_within_its_range(root):
    """requirements.lock (what ./run setup installs) pins each package pyproject.toml asks for, at
    a version pyproject allows, for the Python version named in its header."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    lock = (root / "requirements.lock").read_text()
    python = re.search(r"^# python: (\d+\.\d+)$", lock, re.M).group(1)
    pins = dict(line.split("==") for line in lock.splitlines() if line and not line.startswith("#"))
    pins = {canonicalize_name(name): version for name, version in pins.items()}
    project = _project(root)
    for req in map(Requirement, project["dependencies"] + project["optional-dependencies"]["test"]):
        if req.marker and not req.marker.evaluate({"python_version": python}):
            continue
        assert req.specifier.contains(pins[canonicalize_name(req.name)]), (req, pins.get(req.name))


def test_citation_cff_cites_the_project_and_the_paper(root):
    """CITATION.cff is YAML in the CFF 1.2.0 layout and names the paper by its arXiv id."""
    cff = yaml.safe_load((root / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors"} <= set(cff)
    assert cff["license"] == _project(root)["license"] == "MIT"
    assert cff["version"] == _project(root)["version"]
    paper = cff["references"][0]
    assert "arXiv:2602.09721" in [i["value"] for i in paper["identifiers"]]
    assert paper["title"].startswith("Revealing the Challenges of Attention-FFN Disaggregation")
    assert len(paper["authors"]) == 8
