"""A book for your own hardware and model (``afd book --hardware F --model F --out DIR``).

Every notebook whose parameters admit the pair runs with them (:func:`custom_parameters`), into a
separate book in ``DIR`` that opens with the answer for the pair (:mod:`afdlib.report.custom_landing`);
it is published at ``DIR/_build/html`` only when whole, and the reference book is never touched. The
notebooks run and the book renders through :mod:`afdlib.report.book`, as the reference book does;
``--only`` re-runs chapters of a book already built in ``DIR`` for the same pair.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np

from afdlib.errors import AfdError
from afdlib.report import book
from afdlib.report.building import BuildFailed, lock, publish_whole, rmtree, writable_folder

PAPER_HARDWARE = ["h20", "h800", "h100", "h200", "b200", "b300", "gb200", "gb300"]
PAPER_MODELS = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]


def grid_words(models: list[str], hardware: list[str]) -> str:
    """The pairs a chapter's table covers, in words: "the paper's six models on its eight GPUs" for
    exactly the paper's grid, else the counts ("1 model on 2 devices")."""
    if (list(models), list(hardware)) == (PAPER_MODELS, PAPER_HARDWARE):
        return "the paper's six models on its eight GPUs"
    return (f"{len(models)} model{'s' if len(models) != 1 else ''} on {len(hardware)} "
            f"device{'s' if len(hardware) != 1 else ''}")


def custom_parameters(hardware: str | None, model: str | None) -> dict[str, dict]:
    """Papermill parameters of every notebook whose parameters admit the given hardware and/or
    model (catalogue slugs or absolute paths), keyed by notebook name."""
    out: dict[str, dict] = {}
    if hardware and model:
        out["fig2_intensity"] = {"hardware": hardware, "model": model}
        out["pipeline_jitter"] = {"hardware": hardware, "model": model}
    if hardware:
        out["sigma_from_routing"] = {"hardware": hardware}       # DeepSeek-V3's routing data, on this hardware
    fig4, fig3, app = {}, {}, {}
    if hardware:
        # the ceiling appendix sets an ordinary cluster beside a Superpod: the device takes the slot of its kind
        fig4["hardware"], fig3["hardware"] = [hardware], [hardware]
        app["superpod" if _is_superpod(hardware) else "ordinary"] = hardware
    if model:
        fig4.update(models=[model], ceiling_model=model)
        # the pair's own EP deployment (its local experts in the curves), on the chapter's paper figures as the
        # AFD ceiling of the previous chapter: its sentence names the profile
        fig3.update(afd_model=model, experts_per_gpu=None)
        app["models"] = [model]
    # the sweet spots: the paper's devices and models with the given ones added, the given pair as
    # the reference whose shape and bandwidth the maps move (the superpod stays GB200 for contrast)
    sweet: dict = {}
    if hardware:
        sweet.update(hardware=[*PAPER_HARDWARE, *([] if hardware in PAPER_HARDWARE else [hardware])],
                     ordinary=hardware, ffn_pool=hardware)
        if hardware == "gb200":     # the contrast is another Superpod, with its chip on 8-GPU boards as twin
            sweet.update(superpod="gb300", superpod_twin="b300")
    if model:
        sweet.update(models=[*PAPER_MODELS, *([] if model in PAPER_MODELS else [model])], reference_model=model)
    # the sweeps' break-even surface: the given model's family on the given device, the models placed
    # on it the paper's with the given one added
    sweeps = {"hardware": hardware} if hardware else {}
    if model:
        sweeps.update(model=model, models=[*PAPER_MODELS, *([] if model in PAPER_MODELS else [model])])
    for name, params in (("fig4_dead_zone", fig4), ("fig3_grouped_gemm", fig3), ("appendix_a_ceiling", app),
                         ("sweet_spots", sweet), ("sweeps", sweeps)):
        if params:
            out[name] = params
    return out


def _is_superpod(hardware: str) -> bool:
    """Whether the device is Superpod-class; False for one that does not load (the build refuses it
    before any notebook runs, with the loader's own message)."""
    from afdlib.inputs.catalog import load_hardware
    try:
        return bool(np.all(load_hardware(hardware).superpod))
    except AfdError:
        return False


def _absolute(name: str | None) -> str | None:
    """A user file as an absolute path (notebooks run in their own folders); a slug unchanged."""
    if name is None:
        return None
    path = Path(name)
    looks_like_file = name.endswith((".yaml", ".yml", ".json")) or os.sep in name
    return str(path.resolve()) if looks_like_file else name


def _title(name: str) -> str:
    """The title of a reference chapter (its notebook's first heading)."""
    cells = json.loads((book.NOTEBOOK_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    lines = ("".join(c["source"]).splitlines() for c in cells if c["cell_type"] == "markdown")
    return next((line[2:].strip() for cell in lines for line in cell if line.startswith("# ")), name)


def _write_custom_sources(out: Path, what: str, names: list[str], hw, hardware: str | None, m,
                          model: str | None) -> None:
    """The separate book's sources in ``out``: configuration, table of contents, landing page,
    bibliography and static files (the chapters are executed into ``out/book/generated``)."""
    (out / "book").mkdir(exist_ok=True)
    book.vendor_mathjax()
    shutil.copytree(book.STATIC, out / "book" / "_static", dirs_exist_ok=True)
    shutil.copy(book.ROOT / "book" / "references.bib", out / "book" / "references.bib")
    shutil.copy(book.ROOT / "book" / "bibliography.md", out / "book" / "bibliography.md")
    config = (book.ROOT / "_config.yml").read_text()
    config = re.sub(r'^title: .*$', f'title: "AFD vs EP for {what}"', config, count=1, flags=re.M)
    (out / "_config.yml").write_text(config)
    toc = ["format: jb-book", "root: book/intro", "parts:", "  - caption: Chapters", "    numbered: true",
           "    chapters:"]
    toc += [f"      - file: book/generated/{n}" for n in names]
    # the reference book's other chapters, as pages that say so: a chapter run here may link to one
    others = [n for n in book.chapter_numbers() if n not in names and (book.NOTEBOOK_DIR / f"{n}.ipynb").exists()]
    toc += ["  - caption: In the reference book only", "    chapters:"]
    toc += [f"      - file: book/generated/{n}" for n in others]
    (out / "book" / "generated").mkdir(parents=True, exist_ok=True)
    with_both = custom_parameters("hardware", "model")
    for n in others:
        why = ("runs in a book built with both `--hardware` and `--model`" if n in with_both
               else "does not take a hardware or a model")
        (out / "book" / "generated" / f"{n}.md").write_text(
            f"# {_title(n)}\n\nThis chapter {why}: it is in the reference book (`afd book`).\n")
    toc += ["  - caption: Back matter", "    chapters:", "      - file: book/bibliography"]
    (out / "_toc.yml").write_text("\n".join(toc) + "\n")
    from afdlib.report.custom_landing import landing_markdown   # the decode model: only for a custom book
    built_for = "\n".join(f"- **{label}**: {obj.name} (`{arg}`)" for label, obj, arg in
                           (("hardware", hw, hardware), ("model", m, model)) if obj is not None)
    (out / "book" / "intro.md").write_text(landing_markdown(what, built_for, hardware, model,
                                                            custom_parameters(hardware, model), names))


BUILT_FOR = "built_for.json"
"""The pair an own-pair book was built for (``out/book/built_for.json``): ``--only`` re-runs chapters of
that book only for the same pair."""


def _only_chapters(out: Path, names: list[str], only: list[str], built_for: dict) -> list[str]:
    """The chapters of an existing own-pair book in ``out`` that ``only`` names, checked: the book was
    built whole before, for the same pair, and each name is one of its chapters."""
    try:
        before = json.loads((out / "book" / BUILT_FOR).read_text())
    except (OSError, ValueError):
        raise AfdError(f"--only re-runs chapters of a book already built in {out}: build it whole first "
                       "(the same command without --only)") from None
    if before != built_for:
        raise AfdError(f"--only: the book in {out} was built for {before}, not {built_for}; "
                       "build it whole for this pair (without --only) or give another --out")
    unknown = [n for n in only if n not in names]
    if unknown:
        raise AfdError(f"--only: {', '.join(unknown)} not a chapter of this book; its chapters: {', '.join(names)}")
    return [n for n in names if n in only]


def build_custom_book(out: Path, hardware: str | None = None, model: str | None = None, jobs: int = book.JOBS,
                      only: list[str] | None = None, cell_timeout: float | None = None) -> int:
    """:func:`_build_custom_book`. Where a whole build is refused (one ``afd: error`` line) and ``out``
    already publishes a book, that book is the previous build's, perhaps of other inputs: it is moved
    out of the published path to ``_build/html.previous`` (the line says so and for which pair), so
    nothing at ``out/_build/html`` is taken for this run's. A refused ``--only`` re-run keeps the book
    it would have updated (the line says it is the previous build's), as does a refusal while another
    build holds the folder."""
    try:
        return _build_custom_book(out, hardware, model, jobs, only, cell_timeout)
    except AfdError as e:
        build = Path(out) / "_build"
        if not (build / "html" / "index.html").exists():
            raise
        try:
            before = json.loads((Path(out) / "book" / BUILT_FOR).read_text())
            pair = ", ".join(f"{k} {v}" for k, v in sorted(before.items()) if v) or "an unknown pair"
        except (OSError, ValueError, AttributeError):
            pair = "an unknown pair"
        if only is None and _unpublish(build):
            raise AfdError(f"{e}; the previous build's book, for {pair}, is no longer published: moved to "
                           f"{build / 'html.previous'}") from None
        raise AfdError(f"{e}; the book at {build / 'html'} is the previous build's, for {pair}, not this run's") from None
    except Exception:      # a failure that is no refusal (a bug): the previous whole book is not left published
        if only is None and (Path(out) / "_build" / "html" / "index.html").exists():
            _unpublish(Path(out) / "_build")
        raise


def _unpublish(build: Path) -> bool:
    """Move the book published at ``build/html`` to ``build/html.previous``; False where another build
    holds the folder (its book stays as it is)."""
    try:
        with lock(build):
            rmtree(build / "html.previous")
            os.replace(build / "html", build / "html.previous")
    except AfdError:
        return False
    return True


def _build_custom_book(out: Path, hardware: str | None = None, model: str | None = None, jobs: int = book.JOBS,
                      only: list[str] | None = None, cell_timeout: float | None = None) -> int:
    """Build a separate book in ``out`` for ``hardware`` and/or ``model`` (slugs or files): every
    notebook whose parameters admit them, run with them, and a landing page that opens with the
    answer for the pair and what each chapter finds for it (:mod:`afdlib.report.custom_landing`). Published at ``out/_build/html`` only when whole (:func:`publish_whole`); the
    reference book (``_build/html``, ``book/generated``) is never touched. ``only``: re-run just these
    chapters of the book already built in ``out`` for the same pair (the others and the landing page
    kept); ``cell_timeout``: seconds one cell may run (None: no limit)."""
    from afdlib.inputs.catalog import load_hardware, load_model
    t0 = time.perf_counter()
    if not hardware and not model:
        raise AfdError("afd book --out needs --hardware and/or --model")
    hardware, model = _absolute(hardware), _absolute(model)
    hw = load_hardware(hardware) if hardware else None            # fail early, with one clear line
    m = load_model(model) if model else None
    out = Path(out).resolve()
    for reference in (book.ROOT, book.BUILD.resolve(), (book.ROOT / "book").resolve()):
        if out == reference or reference in out.parents or out in reference.parents:
            raise AfdError(f"--out {out} overlaps the reference book ({reference}); give a folder of its own")
    params = custom_parameters(hardware, model)
    numbers = book.chapter_numbers()                       # in the reference book's order
    names = sorted(params, key=lambda n: numbers.get(n, len(numbers) + 1))
    built_for = {"hardware": hardware, "model": model}
    run = names if only is None else _only_chapters(out, names, only, built_for)
    writable_folder(out)
    what = ", ".join(x for x in (hw and hw.name, m and m.name) if x)

    def steps(nxt: Path) -> None:
        if only is None:
            rmtree(out / "book" / "generated")   # never a page of the previous pair's
            _write_custom_sources(out, what, names, hw, hardware, m, model)
            # the pair this folder's chapters are for: --only may re-run one of them, also one that failed
            (out / "book" / BUILT_FOR).write_text(json.dumps(built_for, sort_keys=True) + "\n")
        if not book.execute_notebooks(run, jobs, target=out / "book" / "generated", parameters=params,
                                 cell_timeout=cell_timeout):
            raise BuildFailed("notebook execution failed")
        missing = [n for n in names if not (out / "book" / "generated" / f"{n}.ipynb").exists()]
        if missing:
            raise BuildFailed(f"not executed: {', '.join(missing)} (re-run them with --only, or build the book "
                              "whole without it)")
        if not book.render_html(nxt, source=out):
            raise BuildFailed("jupyter-book reported errors or warnings")

    status = publish_whole(out / "_build", steps, t0)
    if status:
        return status
    print(f"book for {what}: {out / '_build' / 'html' / 'index.html'} (total {time.perf_counter() - t0:.1f} s)")
    return 0
