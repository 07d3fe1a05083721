"""The build pipeline: a failing notebook fails `afd book` (no half-empty page is published)."""
import nbformat

from afdlib.book import execute_notebooks
from afdlib.cli import main


def _notebook(path, source):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, path)


def test_a_failing_notebook_fails_execution(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _notebook(src / "good.ipynb", "y = x + 1")
    _notebook(src / "bad.ipynb", "raise RuntimeError('boom')")
    assert execute_notebooks(source=src, target=out) is False
    printed = capsys.readouterr()
    assert "bad: FAILED" in printed.out and "good: ok" in printed.out and "boom" in printed.err
    assert execute_notebooks(["good"], source=src, target=out) is True
    assert execute_notebooks(["missing"], source=src, target=out) is False


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert capsys.readouterr().out.startswith("afd ")
