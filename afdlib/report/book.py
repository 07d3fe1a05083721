"""Build the book: execute every notebook with papermill, then render HTML with jupyter-book 1.x.

Notebooks are executed once, by papermill, into ``book/generated/`` (git-ignored); jupyter-book
renders them with execution off, so nothing runs twice. The build fails (non-zero exit) on a
notebook error or any Sphinx warning (``-W -n --keep-going``): no half-empty page is published.

Nothing half-done looks current:

- each notebook runs in its own staging folder (``book/generated/.executing/<name>/``, also its
  working directory, so its ``figures/`` cannot collide with another's); only a notebook that
  succeeded replaces ``book/generated/<name>.ipynb`` and the files it wrote, and one that failed
  removes its earlier outputs (listed in the notebook's ``afd_outputs`` metadata);
- jupyter-book renders in ``_build/work/`` (kept between builds, so ``--only`` renders only what
  changed; a full build starts it afresh), is copied to ``_build/next/`` and replaces
  ``_build/html`` only on success. A failed build removes ``_build/html`` and leaves what it
  rendered in ``_build/html.failed`` (and Sphinx's state with it, so the next build is full);
- notebooks are scheduled longest first, by the durations of the last build
  (``book/generated/.durations.json``), so the two parallel slots finish together;
- a lock (``_build/.lock``) keeps two builds in one clone apart: the second exits with status 2;
- a book for your own pair (``afd book --out DIR``) is published at ``DIR/_build/html`` the same
  way, only when whole; the notebook workers and the renderer end with the build, even on
  ``kill -9`` (both: :mod:`afdlib.report.building`);
- rebuilds are byte-stable: each executed notebook loses papermill's timings, absolute paths and
  object addresses (``<... at 0x7f...>``); a chapter's tables are glued as MyST tables
  (:func:`afdlib.report.style.glue_table`), and a notebook that shows a Styler's HTML with pandas' random
  id (``T_1a2b3``) fails. The HTML is rendered from
  these notebooks, so it is stable too (as long as the notebooks themselves print the same).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import json
import multiprocessing
import os
import re
import shutil
import sys
import time
from pathlib import Path

from afdlib.errors import AfdError
from afdlib.report.computed import CACHE_ENV
from afdlib.report.building import (BuildFailed, die_with_parent, publish_whole, rmtree, run_child)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
GENERATED = ROOT / "book" / "generated"
BUILD = ROOT / "_build"          # _build/html is the published book
STATIC = ROOT / "book" / "_static"
STAGING = ".executing"            # per-notebook staging folders, under the target folder
CACHE = ".cache"                  # results shared between notebooks (afdlib.report.computed), per target
DURATIONS = ".durations.json"     # seconds each notebook took in the last build (for scheduling)


def chapter_numbers(toc: Path | None = None) -> dict[str, int]:
    """Chapter number of each page of the reference book, as Sphinx numbers them: the files of
    the numbered parts of ``_toc.yml``, in order (``book/generated/fig2_intensity`` -> 3)."""
    import yaml
    spec = yaml.safe_load((toc or ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in spec.get("parts", []) if part.get("numbered")
             for c in part.get("chapters", [])]
    return {Path(f).name: k for k, f in enumerate(files, start=1)}


def notebooks(folder: Path | None = None) -> list[Path]:
    """Source notebooks (the .ipynb halves of the jupytext pairs), in name order."""
    return sorted((folder or NOTEBOOK_DIR).glob("*.ipynb"))


def select(names: list[str] | None, folder: Path | None = None) -> list[Path]:
    """The notebooks of ``folder`` named in ``names`` (all when None); an unknown name is a user error."""
    available = notebooks(folder)
    unknown = sorted(set(names or []) - {nb.stem for nb in available})
    if unknown:
        raise AfdError(f"unknown notebook(s) {', '.join(unknown)}; valid: {', '.join(nb.stem for nb in available)}")
    return [nb for nb in available if names is None or nb.stem in names]


# --- byte-stable output ------------------------------------------------------------------------

_RANDOM_TABLE = re.compile(r'<table id=\\?"(T_[0-9a-f]{5})\\?"')  # pandas' default: "T_" + uuid4().hex[:5]
_TIMING = ("start_time", "end_time", "duration")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")  # "<pandas...Styler at 0x7f56...>" in text/plain reprs


def random_table_ids(text: str) -> list[str]:
    """The random table ids (``T_1a2b3``: pandas' default) of Stylers shown without
    ``.set_uuid(...)``, in HTML or a notebook's JSON, in order of appearance. The book's tables are
    glued as MyST tables (``glue_table``, tests/test_table_ids.py), which have no ids; a Styler shown
    as HTML with a random id would make two builds differ."""
    return list(dict.fromkeys(_RANDOM_TABLE.findall(text)))


def _finish_notebook(path: Path, input_path: str, outputs: list[str]) -> None:
    """Make an executed notebook byte-stable (no timings, absolute paths or object addresses; stable
    table ids) and record the files it wrote (relative paths) as metadata ``afd_outputs``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    meta = nb.setdefault("metadata", {})
    pm = meta.get("papermill", {})
    for k in _TIMING:
        pm.pop(k, None)
    pm.update(input_path=input_path, output_path=path.name)
    meta["afd_outputs"] = outputs
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        for k in _TIMING:
            cell.get("metadata", {}).get("papermill", {}).pop(k, None)
    text = _ADDRESS.sub(">", json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    path.write_text(text, encoding="utf-8")


def _remove_outputs(target: Path, name: str) -> None:
    """Remove an executed notebook and the files its last successful run wrote."""
    nb = target / name
    if not nb.exists():
        return
    with contextlib.suppress(ValueError, OSError):
        for rel in json.loads(nb.read_text(encoding="utf-8")).get("metadata", {}).get("afd_outputs", []):
            (target / rel).unlink(missing_ok=True)
    nb.unlink()


def _publish_outputs(stage: Path, target: Path, source: Path) -> None:
    """Move a successful run's notebook and files from its staging folder into ``target`` (the
    notebook last: its presence says the notebook was executed)."""
    wrote = sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*")
                   if p.is_file() and p.name != source.name and not p.name.startswith("."))
    _finish_notebook(stage / source.name, os.path.relpath(source, target), wrote)
    _remove_outputs(target, source.name)
    for rel in wrote + [source.name]:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        os.replace(stage / rel, target / rel)
    shutil.rmtree(stage)


# --- execution ---------------------------------------------------------------------------------

def _init_worker(parent: int, cache: str) -> None:
    """A notebook worker: it ends with the build (even on ``kill -9``), and its kernels start with
    a fixed hash seed, the notebooks' own backend and the build's cache of shared results
    (:mod:`afdlib.report.computed`; a cache the user named in ``$AFD_CACHE_DIR`` is kept)."""
    die_with_parent(parent)
    os.environ.pop("MPLBACKEND", None)
    os.environ["PYTHONHASHSEED"] = "0"
    os.environ.setdefault(CACHE_ENV, cache)
    import papermill  # noqa: F401  (imported once per worker, not once per notebook)


def _run_notebook(src: str, dst: str, cwd: str, parameters: dict | None = None,
                  cell_timeout: float | None = None) -> tuple[bool, float, str]:
    """Execute one notebook with papermill in a fresh kernel: (success, seconds, error text, or on
    success the slowest cell in words). ``cell_timeout``: seconds a cell may run (None: no limit)."""
    import logging

    import papermill as pm
    logging.getLogger("papermill").setLevel(logging.WARNING)
    t0 = time.perf_counter()
    # the kernel inherits this worker's stderr: keep its chatter (start-up warnings) in a file, shown
    # only when the notebook fails
    import tempfile
    with tempfile.TemporaryFile(mode="w+b") as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            for attempt in range(1 + KERNEL_START_RETRIES):
                try:
                    pm.execute_notebook(src, dst, cwd=cwd, kernel_name="python3", progress_bar=False,
                                        log_output=False, execution_timeout=cell_timeout,
                                        start_timeout=KERNEL_START_S, parameters=parameters or {})
                    break
                except RuntimeError as e:   # a kernel that died starting ran no cell: start another
                    if "before replying to kernel_info" not in str(e) or attempt == KERNEL_START_RETRIES:
                        raise
        except Exception as e:  # the notebook failed (or the kernel died): report, do not raise
            os.dup2(saved, 2)
            log.seek(0)
            chatter = log.read().decode(errors="replace")
            return False, time.perf_counter() - t0, f"{chatter[-2000:]}{type(e).__name__}: {e}"
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    text = Path(dst).read_text(encoding="utf-8")
    random_ids = random_table_ids(text)
    if random_ids:   # two builds would differ: the notebook must name its tables
        return False, time.perf_counter() - t0, (f"{len(random_ids)} table(s) shown without .set_uuid(...): "
                                                 'glue each table with afdlib.report.style.glue_table')
    return True, time.perf_counter() - t0, slowest_cell(json.loads(text))


KERNEL_START_RETRIES = 1
"""Kernels started again when one dies before it answers (jupyter_client's "Kernel died before replying
to kernel_info": no cell has run; seen once on a loaded 2-core machine)."""

KERNEL_START_S = 600
"""Seconds a notebook's kernel may take to start (papermill's default, 60, is tripped by a loaded machine)."""

SLOW_CELL_S = 5.0
"""A cell that takes longer is named in the build's line for its notebook."""


def slowest_cell(nb: dict) -> str:
    """The slowest code cell of an executed notebook in words ("slowest: cell 3, 17.2 s"), from
    papermill's per-cell durations; empty when none takes :data:`SLOW_CELL_S` or more."""
    code = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    took = [(float(c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0), k)
            for k, c in enumerate(code, start=1)]
    seconds, k = max(took, default=(0.0, 0))
    return f"slowest: code cell {k}, {seconds:.1f} s" if seconds >= SLOW_CELL_S else ""


JOBS = (os.cpu_count() or 1) + 1
"""Notebooks executed at once by default: one more than the cores, so that a notebook waiting for another's
shared computation (:mod:`afdlib.report.computed`) or a kernel starting leaves no core idle (on 2 cores the
reference book from scratch took 64 s with 2 and 60 s with 3)."""


def execute_notebooks(names: list[str] | None = None, jobs: int = JOBS, source: Path | None = None,
                      target: Path | None = None, parameters: dict[str, dict] | None = None,
                      cell_timeout: float | None = None) -> bool:
    """Execute notebooks of ``source`` into ``target``; True if every one succeeded.

    Each runs in ``target/.executing/<name>/``; see the module docstring for what success and
    failure leave behind. ``cell_timeout``: seconds one cell may run (None, the default: no limit, so
    a slow machine never fails the build for time alone; each notebook's line names its slowest cell).
    """
    target = target or GENERATED
    # longest first, so the parallel slots finish together: the durations of the last build when
    # known (``.durations.json``), else the notebook's size as a proxy
    durations_file = target / DURATIONS
    try:
        known = json.loads(durations_file.read_text())
    except (OSError, ValueError):
        known = {}
    todo = sorted(select(names, source), key=lambda p: (-float(known.get(p.stem, 0.0)), -p.stat().st_size))
    stages = {}
    for nb in todo:
        stage = target / STAGING / nb.stem
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir(parents=True)
        stages[nb] = stage
    ok = True
    # long-lived worker processes import papermill once and run one notebook after another (each
    # in a fresh kernel); spawned, so that no state of this process leaks into them
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, min(jobs, len(todo) or 1)), mp_context=context,
                                                initializer=_init_worker, initargs=(os.getpid(), str(target / CACHE))) as pool:
        futures = {pool.submit(_run_notebook, str(nb), str(stages[nb] / nb.name), str(stages[nb]),
                               (parameters or {}).get(nb.stem), cell_timeout): nb
                   for nb in todo}
        for n_done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            nb = futures[future]
            stage = stages[nb]
            success, seconds, message = future.result()
            took = f"{seconds:.1f} s"
            if success:
                took += f"; {message}" if message else ""
                _publish_outputs(stage, target, nb)
                known[nb.stem] = round(seconds, 1)
                print(f"[{n_done}/{len(todo)}] {nb.stem}: ok ({took})", flush=True)
            else:
                ok = False
                _remove_outputs(target, nb.name)
                print(f"[{n_done}/{len(todo)}] {nb.stem}: FAILED ({took}); partial output in {stage}", flush=True)
                print(message[-4000:], file=sys.stderr)
    with contextlib.suppress(OSError):
        (target / STAGING).rmdir()  # gone unless a failed notebook left its partial output there
    with contextlib.suppress(OSError):
        target.mkdir(parents=True, exist_ok=True)
        durations_file.write_text(json.dumps(known, sort_keys=True, indent=1) + "\n")
    return ok


# --- rendering and publishing --------------------------------------------------------------------

def vendor_mathjax() -> None:
    """Copy MathJax 3 (``tex-svg-full.js`` from the django-static-mathjax package, no dependencies)
    into book/_static/mathjax. It embeds its fonts and TeX extensions in one file, so the book
    renders its maths without a network; the copy is git-ignored. The book's style sheet
    (``book/afd.css``) is copied beside it.
    """
    import mathjax
    src = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5" / "tex-svg-full.js"
    dst = STATIC / "mathjax" / "tex-svg-full.js"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    css = ROOT / "book" / "afd.css"          # the book's own style sheet (tracked), beside the vendored files
    if not (STATIC / css.name).exists() or (STATIC / css.name).read_bytes() != css.read_bytes():
        shutil.copyfile(css, STATIC / css.name)


def render_html(path_output: Path, source: Path | None = None) -> bool:
    """jupyter-book build of ``source`` (the repository root) into ``path_output/_build/html``
    (execution off; warnings are errors). Run by this interpreter, not by the console script, whose
    first line may name another clone's venv."""
    if source is None:
        vendor_mathjax()
    cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(source or ROOT),
           "--path-output", str(path_output), "--builder", "html", "-W", "-n", "--keep-going", "--quiet"]
    t0 = time.perf_counter()
    proc = run_child(cmd, cwd=source or ROOT)   # ends with this process
    print(f"jupyter-book: {'ok' if proc.returncode == 0 else 'FAILED'} ({time.perf_counter() - t0:.1f} s)")
    if proc.returncode != 0:
        print(proc.stdout[-6000:], proc.stderr[-6000:], sep="\n", file=sys.stderr)
    return proc.returncode == 0


def build_book(only: list[str] | None = None, jobs: int = JOBS, execute: bool = True,
               cell_timeout: float | None = None) -> int:
    """Execute (all, or ``only`` some) notebooks and build ``_build/html``; returns an exit code.
    ``cell_timeout``: seconds one cell may run (None: no limit)."""
    t0 = time.perf_counter()
    select(only)  # an unknown name fails here (status 2), before anything is touched
    missing = [nb.stem for nb in notebooks() if not (GENERATED / nb.name).exists()]
    if not execute and missing:   # nothing to render: a usage error (status 2), before anything is touched
        raise AfdError(f"--no-execute renders the notebooks already executed; not executed yet: {', '.join(missing)} "
                       "(run afd book without --no-execute)")

    def steps(nxt: Path) -> None:
        work = BUILD / "work"    # Sphinx's environment, kept between builds so --only renders incrementally
        if execute and only is None:
            rmtree(GENERATED)  # a full build never reuses stale outputs
            rmtree(work)
        if execute and not execute_notebooks(only, jobs, cell_timeout=cell_timeout):
            raise BuildFailed("notebook execution failed")
        missing = [nb.stem for nb in notebooks() if not (GENERATED / nb.name).exists()]
        if missing:
            raise BuildFailed(f"not executed yet: {', '.join(missing)} (run without --no-execute)")
        rendered = False
        try:
            rendered = render_html(work)
        finally:
            if not rendered and work.exists():   # its partial HTML goes aside, Sphinx's state too
                os.replace(work, nxt)
        if not rendered:
            raise BuildFailed("jupyter-book reported errors or warnings")
        shutil.copytree(work / "_build" / "html", nxt / "_build" / "html")

    status = publish_whole(BUILD, steps, t0)
    if status == 0:
        print(f"book: {BUILD / 'html' / 'index.html'} (total {time.perf_counter() - t0:.1f} s)")
    return status
