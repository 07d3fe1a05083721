"""The build pipeline (afdlib/book.py): a failing notebook fails `afd book`, and nothing half-done,
stale or random is published. Fast: tiny notebooks, or the execution and rendering steps replaced."""
import errno
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pandas as pd
import papermill as pm
import pytest

from afdlib.report import book
from afdlib.report.book import execute_notebooks, random_table_ids
from afdlib.cli import main
from afdlib.errors import AfdError

ROOT = Path(__file__).resolve().parent.parent


def _notebook(path, source, title=None):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(source)]
    if title:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}"))
    nbformat.write(nb, path)


def _tree(folder: Path) -> dict:
    """Every output file (the scheduling record of the last build's durations aside)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".durations.json"}


def test_a_failing_notebook_fails_execution(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _notebook(src / "good.ipynb", "y = x + 1")
    _notebook(src / "bad.ipynb", "raise RuntimeError('boom')")
    assert execute_notebooks(source=src, target=out) is False
    printed = capsys.readouterr()
    assert "bad: FAILED" in printed.out and "good: ok" in printed.out and "boom" in printed.err
    assert (out / "good.ipynb").exists() and not (out / "bad.ipynb").exists()
    assert execute_notebooks(["good"], source=src, target=out) is True
    with pytest.raises(AfdError, match="unknown notebook.*missing.*valid: bad, good"):
        execute_notebooks(["missing"], source=src, target=out)


# --- papermill stages each notebook; only a success replaces book/generated/<name>.ipynb ---------

TABLE = """
import pathlib
import pandas as pd
pathlib.Path("figures").mkdir()
pathlib.Path("figures/table.csv").write_text("a\\n1\\n")
{fail}
pd.DataFrame({{"a": [1, 2]}}).style.set_uuid("table_t").highlight_max()
"""


def test_executed_notebooks_are_staged_byte_stable_and_unpublished_on_failure(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _notebook(src / "table.ipynb", TABLE.format(fail=""))
    assert execute_notebooks(source=src, target=out)
    first = _tree(out)
    durations = json.loads((out / ".durations.json").read_text())   # the scheduling record
    assert set(durations) == {"table"} and durations["table"] > 0
    assert set(first) == {"table.ipynb", "figures/table.csv"}  # no staging folder left behind
    nb = json.loads(first["table.ipynb"])
    assert nb["metadata"]["afd_outputs"] == ["figures/table.csv"]
    assert "start_time" not in nb["metadata"]["papermill"] and str(tmp_path) not in first["table.ipynb"].decode()
    assert b"T_table_t_row1_col0" in first["table.ipynb"] and b" at 0x" not in first["table.ipynb"]

    assert execute_notebooks(source=src, target=out)
    assert _tree(out) == first  # a rerun is byte-identical (timings, addresses, Styler ids)

    # the notebook now fails after writing its figure: its earlier outputs must not look current
    _notebook(src / "table.ipynb", TABLE.format(fail="raise RuntimeError('late')"))
    assert not execute_notebooks(source=src, target=out)
    assert not (out / "table.ipynb").exists() and not (out / "figures" / "table.csv").exists()
    assert (out / ".executing" / "table" / "figures" / "table.csv").exists()  # the partial output, aside


# --- Styler ids ------------------------------------------------------------------------------------

def test_a_table_without_its_own_id_fails_its_notebook(tmp_path, capsys):
    """pandas draws a random table id per Styler, so two builds would differ: a notebook showing a
    Styler without .set_uuid(...) fails, and says why."""
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    assert len(random_table_ids(frame.style.to_html())) == 1
    assert random_table_ids(frame.style.set_uuid("nb_table").to_html()) == []
    assert random_table_ids(json.dumps(frame.style.to_html()))              # escaped quotes in a notebook's JSON
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _notebook(src / "bare.ipynb", "import pandas as pd\npd.DataFrame({'a': [1, 2]}).style.highlight_max()")
    assert execute_notebooks(source=src, target=out) is False
    assert "without .set_uuid" in capsys.readouterr().err
    assert not (out / "bare.ipynb").exists()


# --- afd book: fresh build directory, publish on success only, lock, user errors -------------------

def _stand_in_render(state: dict, path_output, kept: bool):
    """jupyter-book's stand-in: writes a numbered index.html into ``path_output/_build/html`` (which
    must not exist unless ``kept``), then fails as ``state["render"]`` says (False, or "disk full")."""
    html = path_output / "_build" / "html"
    html.mkdir(parents=True, exist_ok=kept)
    state["version"] += 1
    (html / "index.html").write_text(f"book {state['version']}")
    if state["render"] == "disk full":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(html / "fig.svg"))
    return state["render"]


@pytest.fixture
def fake_book(tmp_path, monkeypatch):
    """afd book on a fake clone: two notebooks; execution and jupyter-book replaced by stand-ins whose
    outcome the test sets (``state["execute"]``, ``state["render"]``: True, False, or "disk full":
    a write fails with ENOSPC after one page)."""
    (tmp_path / "notebooks").mkdir()
    for name in ("one", "two"):
        _notebook(tmp_path / "notebooks" / f"{name}.ipynb", "pass")
    monkeypatch.setattr(book, "NOTEBOOK_DIR", tmp_path / "notebooks")
    monkeypatch.setattr(book, "GENERATED", tmp_path / "generated")
    monkeypatch.setattr(book, "BUILD", tmp_path / "_build")
    state = {"execute": True, "render": True, "version": 0}

    def execute(names=None, jobs=2, cell_timeout=None):
        book.GENERATED.mkdir(parents=True, exist_ok=True)
        if state["execute"] == "interrupt":
            raise KeyboardInterrupt
        for nb in book.select(names):
            (book.GENERATED / nb.name).unlink(missing_ok=True)
            if state["execute"]:
                shutil.copy(nb, book.GENERATED / nb.name)
        return state["execute"]

    def render(path_output):
        return _stand_in_render(state, path_output, kept=True)   # Sphinx's work folder is kept between builds

    monkeypatch.setattr(book, "execute_notebooks", execute)
    monkeypatch.setattr(book, "render_html", render)
    return state


def test_success_replaces_the_book_and_leaves_no_build_debris(fake_book, capsys):
    html = book.BUILD / "html"
    assert main(["book"]) == 0
    assert (html / "index.html").read_text() == "book 1"
    assert main(["book", "--no-execute"]) == 0
    assert (html / "index.html").read_text() == "book 2"
    # the published book, the lock, and Sphinx's work folder (kept so --only renders incrementally)
    assert sorted(p.name for p in book.BUILD.iterdir()) == [".lock", "html", "work"]
    assert capsys.readouterr().out.strip().endswith("s)")


@pytest.mark.parametrize("failure", ["render", "disk full", "execute", "no-execute after a failed run", "interrupt"])
def test_a_failed_build_leaves_no_book_at_the_published_path(fake_book, capsys, failure):
    html, failed = book.BUILD / "html", book.BUILD / "html.failed"
    assert main(["book"]) == 0 and (html / "index.html").exists()
    capsys.readouterr()
    if failure in ("render", "disk full"):
        fake_book["render"] = False if failure == "render" else failure
        assert main(["book", "--only", "two"]) == 1
        assert (failed / "index.html").read_text() == "book 2"  # the partial build, aside and named so
        assert not (book.BUILD / "work").exists()                # Sphinx's state with it: the next build is full
    elif failure == "interrupt":
        fake_book["execute"] = "interrupt"
        assert main(["book"]) == 130
    else:
        fake_book["execute"] = False
        assert main(["book", "--only", "two"]) == 1
        if failure != "execute":
            fake_book["execute"] = True
            capsys.readouterr()
            assert main(["book", "--no-execute"]) == 2     # nothing to render: a usage error, nothing touched
    assert not html.exists() and not (book.BUILD / "next").exists()
    err = capsys.readouterr().err.strip().splitlines()
    if failure == "no-execute after a failed run":
        assert len(err) == 1 and err[0].startswith("afd: error: --no-execute renders the notebooks already executed")
    else:
        assert len(err) == 1 and "FAILED" in err[0] and f"nothing published at {html}" in err[0]
    if failure in ("render", "disk full"):
        assert str(failed) in err[0]
        assert ("No space left on device" in err[0]) == (failure == "disk full")
    if failure == "no-execute after a failed run":
        assert "not executed yet: two" in err[0]
    fake_book["execute"] = fake_book["render"] = True
    assert main(["book"]) == 0 and html.exists() and not failed.exists()  # the next success cleans up


def test_a_second_build_in_the_same_clone_is_refused(fake_book, capsys):
    book.BUILD.mkdir()
    with open(book.BUILD / ".lock", "a") as held:  # another build (flock: per open file, so in-process works)
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["book"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another build is running" in err[0]
    assert not (book.BUILD / "html").exists() and not book.GENERATED.exists()  # nothing touched
    assert main(["book"]) == 0  # released


def test_an_unknown_notebook_is_a_user_error(capsys):
    assert main(["book", "--only", "fig2_intensity", "nonexistent"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nonexistent" in err[0]
    assert all(nb.stem in err[0] for nb in book.notebooks())  # names the valid ones


# --- ./run: a .venv copied from another clone is pointed back at this one --------------------------

FAKE_PYTHON = """#!/usr/bin/env bash
# stands in for .venv/bin/python: says afdlib lives in $AFDLIB_AT, that it is Python $PYVER, and logs pip calls
if [ "$1" = "-I" ]; then echo "$AFDLIB_AT"; exit 0; fi
if [ "$1" = "-c" ]; then echo "${PYVER:-3.11}"; exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "afdlib.cli" ]; then echo "$$ $*" > "$(dirname "$0")/build.log"; exit 0; fi
echo "$@" >> "$(dirname "$0")/pip.log"
"""


def _fake_clone(tmp_path, stamp: bool) -> Path:
    """./run, pyproject.toml and requirements.lock in tmp_path, and a stand-in .venv/bin/python;
    with ``stamp`` the venv says it has the packages of these two files installed."""
    for name in ("run", "pyproject.toml", "requirements.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    if stamp:
        files = (tmp_path / "pyproject.toml").read_bytes() + (tmp_path / "requirements.lock").read_bytes()
        (tmp_path / ".venv" / ".installed.stamp").write_text(hashlib.sha256(files).hexdigest() + "\n")
    return python


def test_run_reinstalls_a_venv_copied_from_another_clone(tmp_path):
    python = _fake_clone(tmp_path, stamp=True)
    here = tmp_path.resolve()

    def setup(afdlib_at):
        return subprocess.run(["bash", "run", "setup"], cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "AFDLIB_AT": str(afdlib_at)})

    proc = setup("/elsewhere/clone")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == f"run: .venv runs afdlib from /elsewhere/clone, not from {here}; reinstalling it from here"
    assert (python.parent / "pip.log").read_text().split() == "-m pip install --quiet --no-deps -e .".split()
    (python.parent / "pip.log").unlink()
    proc = setup(here)
    assert proc.returncode == 0 and proc.stderr == "" and not (python.parent / "pip.log").exists()


def test_run_book_is_the_build_process(tmp_path):
    """./run book replaces itself with the build (exec): kill -9 of ./run is kill -9 of the build,
    whose children end with it (test_kill_9_of_a_build_leaves_none_of_its_processes)."""
    python = _fake_clone(tmp_path, stamp=True)
    proc = subprocess.Popen(["bash", "run", "book", "--only", "x"], cwd=tmp_path,
                            env={**os.environ, "AFDLIB_AT": str(tmp_path.resolve())})
    assert proc.wait() == 0
    assert (python.parent / "build.log").read_text().split() == [str(proc.pid), "-m", "afdlib.cli", "book", "--only", "x"]


@pytest.mark.parametrize("version, installs", [
    ("3.11", ["-m pip install --quiet -r requirements.lock", "-m pip install --quiet --no-deps -e ."]),
    ("3.12", ["-m pip install --quiet -e .[test]"]),
])
def test_run_installs_the_lock_for_its_python_and_pyproject_s_ranges_otherwise(tmp_path, version, installs):
    python = _fake_clone(tmp_path, stamp=False)
    env = {**os.environ, "AFDLIB_AT": str(tmp_path.resolve()), "PYVER": version}
    proc = subprocess.run(["bash", "run", "setup"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (python.parent / "pip.log").read_text().splitlines() == ["-m pip install --quiet --upgrade pip", *installs]
    assert ("is for Python 3.11" in proc.stderr) == (version != "3.11")
    (python.parent / "pip.log").unlink()
    proc = subprocess.run(["bash", "run", "setup"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.stderr == "" and not (python.parent / "pip.log").exists()   # the stamp: nothing to do
    with (tmp_path / "requirements.lock").open("a") as lock:
        lock.write("extra-package==1.0\n")
    subprocess.run(["bash", "run", "setup"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert len((python.parent / "pip.log").read_text().splitlines()) == 1 + len(installs)   # a new lock: again


# --- the real jupyter-book, twice on a one-page book: byte-identical --------------------------------

@pytest.mark.notebook
def test_rebuilds_are_byte_identical(tmp_path):
    src = tmp_path / "book"
    (src / "nb").mkdir(parents=True)
    (src / "_config.yml").write_text("title: t\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: 'off'\n")
    (src / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: generated/table\n")
    (src / "intro.md").write_text("# Intro\n")
    _notebook(src / "nb" / "table.ipynb",
              "import pandas as pd\npd.DataFrame({'a': [1, 2]}).style.set_uuid('table_t').highlight_max()",
              title="A table")
    trees = []
    for run in ("out1", "out2"):
        assert execute_notebooks(source=src / "nb", target=src / "generated")
        assert book.render_html(tmp_path / run, source=src)
        trees.append(_tree(tmp_path / run / "_build" / "html"))
    assert trees[0] == trees[1]
    assert b"T_table_t" in trees[0]["generated/table.html"]


# --- a separate book for your own hardware and model -------------------------------------------------

def defaults_of(name: str) -> dict:
    return {k: v["default"] for k, v in pm.inspect_notebook(str(ROOT / "notebooks" / f"{name}.ipynb")).items()}


def test_custom_parameters_take_every_notebook_that_admits_them():
    from afdlib.report.own_book import custom_parameters
    both = custom_parameters("/x/my.yaml", "kimi-k2")
    assert set(both) == {"fig2_intensity", "pipeline_jitter", "sigma_from_routing", "fig4_dead_zone",
                         "fig3_grouped_gemm", "appendix_a_ceiling", "sweet_spots", "sweeps"}
    # the sweeps' surface: the given model's family on the given device, the model placed with the paper's
    assert both["sweeps"] == {"hardware": "/x/my.yaml", "model": "kimi-k2", "models": eval(defaults_of("sweeps")["models"])}
    assert custom_parameters(None, "/m.yaml")["sweeps"]["models"][-1] == "/m.yaml"
    assert both["fig4_dead_zone"] == {"hardware": ["/x/my.yaml"], "models": ["kimi-k2"], "ceiling_model": "kimi-k2"}
    # the sweet spots: the paper's selection (the notebook's defaults) with the given pair added once
    defaults = {k: v["default"] for k, v in pm.inspect_notebook(str(ROOT / "notebooks" / "sweet_spots.ipynb")).items()}
    sweet = both["sweet_spots"]
    assert sweet["hardware"] == [*eval(defaults["hardware"]), "/x/my.yaml"]
    assert sweet["models"] == eval(defaults["models"])            # kimi-k2 is one of the paper's six already
    assert (sweet["ordinary"], sweet["ffn_pool"], sweet["reference_model"]) == ("/x/my.yaml", "/x/my.yaml", "kimi-k2")
    assert set(custom_parameters(None, "kimi-k2")) == {"fig4_dead_zone", "fig3_grouped_gemm", "appendix_a_ceiling",
                                                       "sweet_spots", "sweeps"}
    assert custom_parameters("h200", None)["sweeps"] == {"hardware": "h200"}
    assert "fig2_intensity" not in custom_parameters("h200", None)      # it needs both
    # a Superpod takes the ceiling appendix's Superpod slot (its ordinary cluster stays the paper's); the
    # sweet spots' contrast Superpod is another one than the device itself
    pod = custom_parameters("gb300", "deepseek-v3")
    assert pod["appendix_a_ceiling"] == {"superpod": "gb300", "models": ["deepseek-v3"]}
    assert custom_parameters("h800", None)["appendix_a_ceiling"] == {"ordinary": "h800"}
    assert custom_parameters("gb200", None)["sweet_spots"]["superpod"] == "gb300" != pod["sweet_spots"].get("superpod", "gb200")
    # every parameter named exists in its notebook (papermill would only warn)
    for name, params in both.items():
        declared = set(pm.inspect_notebook(str(ROOT / "notebooks" / f"{name}.ipynb")))
        assert set(params) <= declared, name


@pytest.mark.parametrize("argv, message", [
    (["book", "--hardware", "h200"], "give --out DIR"),
    (["book", "--out", "x"], "needs --hardware and/or --model"),
    (["book", "--hardware", "h200", "--out", str(ROOT / "_build" / "mine")], "overlaps the reference book"),
    (["book", "--hardware", "h200", "--out", str(ROOT)], "overlaps the reference book"),
    (["book", "--hardware", "nosuch", "--out", "/tmp/x"], "unknown hardware 'nosuch'"),
    (["book", "--model", "k.yaml", "--out", "/tmp/x", "--no-execute"], "does not apply"),
    (["book", "--only"], "needs at least one notebook name"),
    (["book", "--cell-timeout", "0"], "--cell-timeout must be"),
    (["book", "--cell-timeout", "soon"], "--cell-timeout must be"),
    (["book", "--hardware", "h200", "--out", "/proc/afd-no-book-here", "--only", "sweet_spots"],
     "build it whole first"),
])
def test_custom_book_refuses_bad_requests(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_chapter_numbers_follow_the_numbered_parts_of_the_toc(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: intro\nparts:\n"
                   "  - caption: A\n    numbered: true\n    chapters:\n      - file: book/generated/x\n      - file: book/n\n"
                   "  - caption: B\n    numbered: true\n    chapters:\n      - file: book/generated/y\n"
                   "  - caption: Back\n    chapters:\n      - file: book/bibliography\n")
    # numbering continues across numbered parts; an unnumbered part gets none
    assert book.chapter_numbers(toc) == {"x": 1, "n": 2, "y": 3}
    # the reference book: every notebook but the landing page is a numbered chapter, numbered 1..n
    numbers = book.chapter_numbers()
    assert sorted(numbers.values()) == list(range(1, len(numbers) + 1))
    assert {p.stem for p in book.notebooks()} - {"intro"} <= set(numbers)


# --- afd book --out: a folder that can be written, a book published only when whole ------------------

@pytest.mark.parametrize("where", ["file", "under a file", "cannot be created"])
def test_custom_book_out_must_be_a_writable_folder(tmp_path, capsys, where):
    (tmp_path / "a-file").write_text("x")
    out = {"file": tmp_path / "a-file", "under a file": tmp_path / "a-file" / "book",
           "cannot be created": Path("/sys/afd-book-test")}[where]
    if where == "cannot be created" and not Path("/sys").is_dir():
        pytest.skip("no /sys (not Linux)")
    assert main(["book", "--hardware", "h200", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("afd: error: --out ") and str(out) in err
    assert ("is a file, not a folder" in err) == (where == "file")
    assert (tmp_path / "a-file").read_text() == "x"


@pytest.fixture
def fake_custom_book(monkeypatch):
    """afd book --out with execution and jupyter-book replaced by stand-ins whose outcome the test
    sets, as for ``fake_book``."""
    state = {"execute": True, "render": True, "version": 0, "executed": []}

    def execute(names, jobs, target, parameters, cell_timeout=None):
        target.mkdir(parents=True, exist_ok=True)
        state["executed"].append(list(names))
        for name in names:
            (target / f"{name}.ipynb").write_text(json.dumps(parameters[name]))
        return state["execute"]

    def render(path_output, source):
        return _stand_in_render(state, path_output, kept=False)

    def landing(what, built_for, *args):   # the real one computes the pair's advice: tests/test_custom_landing.py
        return f"# AFD vs EP for {what}\n\n{built_for}\n"

    import afdlib.report.custom_landing as custom_landing
    monkeypatch.setattr(book, "execute_notebooks", execute)
    monkeypatch.setattr(book, "render_html", render)
    monkeypatch.setattr(custom_landing, "landing_markdown", landing)
    return state


def test_only_with_out_reruns_chapters_of_the_book_built_there(tmp_path, fake_custom_book, capsys):
    out = tmp_path / "mine"
    assert main(["book", "--hardware", "h200", "--out", str(out)]) == 0
    whole = fake_custom_book["executed"][-1]
    assert "sweet_spots" in whole and len(whole) > 2
    landing = (out / "book" / "intro.md").read_text()
    assert main(["book", "--hardware", "h200", "--out", str(out), "--only", "sweet_spots"]) == 0
    assert fake_custom_book["executed"][-1] == ["sweet_spots"]           # that chapter alone
    assert (out / "book" / "intro.md").read_text() == landing             # the landing page kept
    assert all((out / "book" / "generated" / f"{n}.ipynb").exists() for n in whole)
    capsys.readouterr()
    # another pair, or a chapter the book does not have: one line, status 2, nothing run
    for argv, message in ((["--hardware", "b200", "--only", "sweet_spots"], "was built for"),
                          (["--hardware", "h200", "--only", "fig6_penalty"], "not a chapter of this book")):
        assert main(["book", *argv, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
    assert len(fake_custom_book["executed"]) == 2


@pytest.mark.parametrize("failure", ["execute", "render", "disk full"])
def test_a_failed_custom_rebuild_leaves_no_book_at_the_published_path(tmp_path, fake_custom_book, capsys, failure):
    out = tmp_path / "mine"
    html, failed = out / "_build" / "html", out / "_build" / "html.failed"
    assert main(["book", "--hardware", "h200", "--out", str(out)]) == 0
    assert (html / "index.html").read_text() == "book 1"
    assert "H200" in (out / "book" / "intro.md").read_text()
    capsys.readouterr()
    if failure == "execute":
        fake_custom_book["execute"] = False
    else:
        fake_custom_book["render"] = False if failure == "render" else "disk full"
    # another pair into the same folder fails: the H200 book is gone, not left looking current
    assert main(["book", "--hardware", "b200", "--out", str(out)]) == 1
    assert not html.exists() and not (out / "_build" / "next").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "FAILED" in err[0] and f"nothing published at {html}" in err[0]
    if failure == "execute":
        assert "notebook execution failed" in err[0] and not failed.exists()
    else:   # what was rendered is aside, named so
        assert (failed / "index.html").read_text() == "book 2" and str(failed) in err[0]
        assert ("No space left on device" in err[0]) == (failure == "disk full")
    fake_custom_book.update(execute=True, render=True)
    assert main(["book", "--hardware", "b200", "--out", str(out)]) == 0
    assert (html / "index.html").read_text().startswith("book ") and not failed.exists()
    assert "B200" in (out / "book" / "intro.md").read_text()
    assert sorted(p.name for p in (out / "_build").iterdir()) == [".lock", "html"]


# --- kill -9 of a build: nothing of it is left running --------------------------------------------------

def _descendants(pid: int) -> dict[int, str]:
    """Every process below ``pid`` (children, their children, ...): id -> command name."""
    parent, name = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()   # after "pid (comm) "
        parent[int(stat.parent.name)] = int(fields[1])
        name[int(stat.parent.name)] = text[text.index("(") + 1:text.rindex(")")]
    found, todo = {}, [pid]
    while todo:
        p = todo.pop()
        for child in [c for c, pp in parent.items() if pp == p and c not in found]:
            found[child] = name[child]
            todo.append(child)
    return found


def _running(pids) -> list[int]:
    """Those of ``pids`` still running (a zombie has ended: it only waits to be reaped)."""
    def state(p):
        try:
            text = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            return "gone"
        return text[text.rindex(")") + 2]
    return [p for p in pids if state(p) not in ("gone", "Z", "X")]


def _kill_and_watch(proc: subprocess.Popen, expected: int) -> None:
    """kill -9 ``proc`` (at least ``expected`` processes below it); each of them ends within 5 s."""
    import signal
    import time
    below = _descendants(proc.pid)
    assert len(below) >= expected, below
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while _running(below) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _running(below)
    for p in left:       # do not leave them to the next test
        os.kill(p, signal.SIGKILL)
    assert not left, f"still running 5 s after kill -9 of the build: {[below[p] for p in left]}"


KILLED_BUILD = """
import sys
from pathlib import Path
from afdlib.cli import main
from afdlib.report import book
root = Path(sys.argv[1])
book.NOTEBOOK_DIR, book.GENERATED, book.BUILD = root / "notebooks", root / "generated", root / "_build"
sys.exit(main(["book", "--jobs", "2"]))
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.notebook
def test_kill_9_of_a_build_leaves_none_of_its_processes(tmp_path):
    """afd book on two stub chapters that wait: two pool workers, their kernels and
    multiprocessing's resource tracker run below it; kill -9 ends them all within 5 s."""
    import sys
    import time
    (tmp_path / "notebooks").mkdir()
    for name in ("one", "two"):
        _notebook(tmp_path / "notebooks" / f"{name}.ipynb",
                  f"import pathlib, time\npathlib.Path({str(tmp_path)!r}, 'started-{name}').touch()\ntime.sleep(300)")
    proc = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(tmp_path)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while not all((tmp_path / f"started-{n}").exists() for n in ("one", "two")):
            assert proc.poll() is None and time.monotonic() < deadline, "the stub chapters did not start"
            time.sleep(0.2)
        _kill_and_watch(proc, expected=5)       # 2 workers, 2 kernels, the resource tracker
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_kill_9_of_a_build_ends_its_renderer(tmp_path):
    """jupyter-book runs as a child of the build (afdlib.report.building.run_child): it ends with it."""
    import sys
    import time
    script = "from afdlib.report.building import run_child\nrun_child(['sleep', '300'], '.')\n"
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while "sleep" not in _descendants(proc.pid).values():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        _kill_and_watch(proc, expected=1)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("pair", [["--hardware", "h200"], ["--model", "kimi-k2"], ["--hardware", "h200", "--model", "kimi-k2"]])
def test_every_page_a_custom_book_links_to_is_in_it(tmp_path, fake_custom_book, pair):
    """A chapter run for your own pair may link to one it does not run ({doc}`aiconfigurator_comparison`
    in the sweet spots): that one is a page saying it is in the reference book, under its own title
    (a link to a missing page is a Sphinx warning, and warnings fail the build)."""
    import re

    import yaml
    out = tmp_path / "mine"
    assert main(["book", *pair, "--out", str(out)]) == 0
    toc = yaml.safe_load((out / "_toc.yml").read_text())
    pages = {c["file"] for part in toc["parts"] for c in part["chapters"]}
    run = {p.name.removesuffix(".ipynb") for p in (out / "book" / "generated").glob("*.ipynb")}
    assert run and {f"book/generated/{n}" for n in run} <= pages
    for name in run:
        for target in re.findall(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`", (ROOT / "notebooks" / f"{name}.py").read_text()):
            assert os.path.normpath(f"book/generated/{target}") in pages, f"{name} links to {target}, not in the book"
    stub = (out / "book" / "generated" / "aiconfigurator_comparison.md").read_text()
    title = next(line for line in (ROOT / "notebooks" / "aiconfigurator_comparison.py").read_text().splitlines()
                 if line.startswith("# # "))[4:]
    assert stub.startswith(f"# {title}\n") and "reference book" in stub
    assert {p.stem for p in book.notebooks()} - {"intro"} == {Path(f).name for f in pages if "generated" in f}


def test_a_second_custom_build_into_the_same_folder_is_refused(tmp_path, fake_custom_book, capsys):
    out = tmp_path / "mine"
    (out / "_build").mkdir(parents=True)
    with open(out / "_build" / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["book", "--hardware", "h200", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another build is running" in err and not (out / "_config.yml").exists()
    assert main(["book", "--hardware", "h200", "--out", str(out)]) == 0


def test_the_build_names_a_notebook_s_slowest_cell():
    nb = {"cells": [{"cell_type": "markdown"},
                    {"cell_type": "code", "metadata": {"papermill": {"duration": 1.5}}},
                    {"cell_type": "code", "metadata": {"papermill": {"duration": 7.25}}},
                    {"cell_type": "code", "metadata": {}}]}
    assert book.slowest_cell(nb) == "slowest: code cell 2, 7.2 s"       # the second code cell, not the third cell
    nb["cells"][2]["metadata"]["papermill"]["duration"] = book.SLOW_CELL_S - 0.1
    assert book.slowest_cell(nb) == ""                                   # nothing slow: nothing said


def test_cell_timeout_reaches_the_notebooks(fake_book, monkeypatch):
    seen = []
    real = book.execute_notebooks

    def execute(names=None, jobs=2, cell_timeout=None):
        seen.append(cell_timeout)
        return real(names, jobs, cell_timeout=cell_timeout)
    monkeypatch.setattr(book, "execute_notebooks", execute)
    assert main(["book", "--cell-timeout", "900"]) == 0 and seen == [900.0]
    assert main(["book"]) == 0 and seen == [900.0, None]                  # default: no limit


def test_a_kernel_that_dies_starting_is_started_again(tmp_path, monkeypatch, capsys):
    # jupyter_client's start-up failure (no cell ran) is retried once; a notebook's own error is not
    import papermill
    from afdlib.report import book
    real, calls = papermill.execute_notebook, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return real(*args, **kwargs)
    monkeypatch.setattr(papermill, "execute_notebook", flaky)
    src = tmp_path / "good.ipynb"
    _notebook(src, "y = x + 1")
    ok, _, why = book._run_notebook(str(src), str(tmp_path / "out.ipynb"), str(tmp_path))
    assert ok and len(calls) == 2, why
    monkeypatch.setattr(papermill, "execute_notebook",
                        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("Kernel died before replying to kernel_info")))
    ok, _, why = book._run_notebook(str(src), str(tmp_path / "out2.ipynb"), str(tmp_path))
    assert not ok and "kernel_info" in why          # twice in a row: reported, not retried forever


def test_the_book_refuses_fewer_than_one_job_in_one_line(capsys):
    from afdlib.cli import main
    from afdlib.report.book import JOBS
    assert main(["book", "--jobs", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["afd: error: argument --jobs: --jobs must be an integer in 1..64, got 0 (see afd book --help)"]
    assert JOBS >= 2                                    # one more than the cores: at least 2


def test_a_refused_own_pair_rebuild_leaves_no_book_at_the_published_path(tmp_path):
    import json

    import pytest

    from afdlib.errors import AfdError
    from afdlib.report.building import lock
    from afdlib.report.own_book import BUILT_FOR, build_custom_book
    out = tmp_path / "mine"
    html = out / "_build" / "html"

    def earlier():
        html.mkdir(parents=True, exist_ok=True)
        (html / "index.html").write_text("<html>an earlier book</html>")
        (out / "book").mkdir(exist_ok=True)
        (out / "book" / BUILT_FOR).write_text(json.dumps({"hardware": "h800", "model": None}))
    earlier()
    with pytest.raises(AfdError, match=r"no such file; the previous build's book, for hardware h800, is no longer "
                                       r"published: moved to .*_build/html.previous"):
        build_custom_book(out, hardware=str(tmp_path / "missing.yaml"))
    assert not html.exists() and (out / "_build" / "html.previous" / "index.html").exists()
    earlier()                                              # while another build holds the folder: left alone
    with lock(out / "_build"), pytest.raises(AfdError, match="is the previous build's, for hardware h800, not this"):
        build_custom_book(out, hardware=str(tmp_path / "missing.yaml"))
    assert (html / "index.html").exists()
    # a refused --only re-run keeps the book it would have updated, and says whose it is
    with pytest.raises(AfdError, match="--only: the book in .* was built for .*; the book at .* is the previous"):
        build_custom_book(out, model="deepseek-v3", only=["fig2_intensity"])
    assert (html / "index.html").exists()
    with pytest.raises(AfdError) as fresh:                 # no book there: the error alone
        build_custom_book(tmp_path / "other", hardware=str(tmp_path / "missing.yaml"))
    assert "previous build" not in str(fresh.value)


def test_an_own_pair_rebuild_failing_by_a_bug_leaves_no_book_at_the_published_path(tmp_path, monkeypatch):
    # a failure that is no refusal (here a KeyError from inside the build) left the earlier pair's book published
    import pytest

    import afdlib.report.own_book as own_book
    out = tmp_path / "mine"
    html = out / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<html>an earlier book</html>")

    def broken(*args, **kwargs):
        raise KeyError("a bug")
    monkeypatch.setattr(own_book, "_build_custom_book", broken)
    with pytest.raises(KeyError):
        own_book.build_custom_book(out, hardware="h800")
    assert not html.exists() and (out / "_build" / "html.previous" / "index.html").exists()
