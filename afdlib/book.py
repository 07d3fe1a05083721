"""Build the book: execute every notebook with papermill, then render HTML with jupyter-book 1.x.

Notebooks are executed once, by papermill, into ``book/generated/`` (git-ignored); jupyter-book
renders them with execution off, so nothing runs twice. The build fails (non-zero exit) on a
notebook error or any Sphinx warning (``-W -n --keep-going``): no half-empty page is published.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
GENERATED = ROOT / "book" / "generated"


def notebooks(folder: Path = NOTEBOOK_DIR) -> list[Path]:
    """Source notebooks (the .ipynb halves of the jupytext pairs), in name order."""
    return sorted(folder.glob("*.ipynb"))


def _papermill_cmd(src: Path, dst: Path, cwd: Path, parameters: dict | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "papermill", str(src), str(dst), "--cwd", str(cwd),
           "-k", "python3", "--no-progress-bar", "--log-level", "WARNING",
           "--execution-timeout", "300"]
    for k, v in (parameters or {}).items():
        cmd += ["-p", k, str(v)]
    return cmd


def execute_notebooks(names: list[str] | None = None, jobs: int = 2, source: Path = NOTEBOOK_DIR,
                      target: Path = GENERATED) -> bool:
    """Execute notebooks of ``source`` into ``target``; True if every one succeeded."""
    target.mkdir(parents=True, exist_ok=True)
    available = notebooks(source)
    # the largest notebooks usually run longest: start them first so the parallel slots finish together
    todo = sorted((nb for nb in available if names is None or nb.stem in names), key=lambda p: -p.stat().st_size)
    unknown = set(names or []) - {nb.stem for nb in available}
    if unknown:
        print(f"afd book: unknown notebook(s) {sorted(unknown)}; valid: {[nb.stem for nb in available]}",
              file=sys.stderr)
        return False
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["PYTHONHASHSEED"] = "0"
    running: list[tuple[Path, subprocess.Popen, float]] = []
    ok = True
    queue = list(todo)
    n_done = 0
    while queue or running:
        while queue and len(running) < max(1, jobs):
            nb = queue.pop(0)
            proc = subprocess.Popen(_papermill_cmd(nb, target / nb.name, target), env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            running.append((nb, proc, time.perf_counter()))
        for item in list(running):
            nb, proc, t0 = item
            if proc.poll() is None:
                continue
            running.remove(item)
            n_done += 1
            out = proc.stdout.read() if proc.stdout else ""
            status = "ok" if proc.returncode == 0 else "FAILED"
            print(f"[{n_done}/{len(todo)}] {nb.stem}: {status} ({time.perf_counter() - t0:.1f} s)", flush=True)
            if proc.returncode != 0:
                ok = False
                print(out[-4000:], file=sys.stderr)
        time.sleep(0.05)
    return ok


STATIC = ROOT / "book" / "_static"


def vendor_mathjax() -> None:
    """Copy MathJax 3 (``tex-svg-full.js`` from the django-static-mathjax package, no dependencies)
    into book/_static/mathjax. It embeds its fonts and TeX extensions in one file, so the book
    renders its maths without a network; the copy is git-ignored.
    """
    import mathjax
    src = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5" / "tex-svg-full.js"
    dst = STATIC / "mathjax" / "tex-svg-full.js"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def render_html() -> bool:
    """jupyter-book build of the repository root (execution off; warnings are errors)."""
    vendor_mathjax()
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT), "--builder", "html",
           "-W", "-n", "--keep-going", "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True)
    print(f"jupyter-book: {'ok' if proc.returncode == 0 else 'FAILED'} ({time.perf_counter() - t0:.1f} s)")
    if proc.returncode != 0:
        print(proc.stdout[-6000:], proc.stderr[-6000:], sep="\n", file=sys.stderr)
    return proc.returncode == 0


def build_book(only: list[str] | None = None, jobs: int = 2, execute: bool = True) -> int:
    """Execute (all, or ``only`` some) notebooks and build ``_build/html``; returns an exit code."""
    t0 = time.perf_counter()
    if execute and only is None and GENERATED.exists():
        shutil.rmtree(GENERATED)  # a full build never reuses stale outputs
    if execute and not execute_notebooks(only, jobs):
        print(f"afd book: notebook execution failed ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        return 1
    missing = [nb.stem for nb in notebooks() if not (GENERATED / nb.name).exists()]
    if missing:
        print(f"afd book: not executed yet: {missing} (run without --no-execute)", file=sys.stderr)
        return 1
    if not render_html():
        return 1
    print(f"book: {ROOT / '_build' / 'html' / 'index.html'} (total {time.perf_counter() - t0:.1f} s)")
    return 0
