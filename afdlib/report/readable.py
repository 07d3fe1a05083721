"""An executed notebook a person can read: the chapter's prose with its glued values and figures in place.

The book fills a chapter's ``{glue:text}`` roles and ``{glue:figure}`` / ``{glue:md}`` directives from the
values its code cells glue (myst-nb), but an executed notebook opened by itself (papermill's output, the
README's command) shows the raw placeholders and, since every figure is glued without display, no figure.
So every value a chapter glues goes through :func:`glue`, which also records it for this run, and each
chapter ends with a cell tagged ``remove-cell`` (not in the book) that calls :func:`show_chapter`: the
chapter's markdown, read from its ``.ipynb`` beside the library, with every glue role and directive
replaced by its value, each figure drawn where its directive stands, and the MyST roles the notebook view
does not know (``{numref}``, ``{doc}``, ``{cite}``, ``{download}``) written as their plain text.
"""
from __future__ import annotations

import re
from pathlib import Path

_GLUED: dict = {}
"""The values glued in this run (name -> value); emptied when a notebook checks its parameters
(:func:`afdlib.report.params.check_parameters`), so one kernel's runs do not mix."""

_ROLE = re.compile(r"\{(glue:text|glue:md|glue|numref|doc|cite|download)\}`([^`]*)`")
_FENCE = re.compile(r"^(```+|:::+)\{([a-z:-]+)\}[ \t]*(.*)$")


def forget() -> None:
    """Start a run afresh: nothing glued yet."""
    _GLUED.clear()


def glue(name: str, value, display: bool = False) -> None:
    """myst-nb's ``glue`` (the book reads it), recorded for :func:`show_chapter`."""
    from myst_nb import glue as myst_glue
    myst_glue(name, value, display=display)
    _GLUED[name] = value


def _text(value, spec: str = "") -> str:
    """A glued value as the book prints it: a Markdown object's text, a number with the role's format."""
    if hasattr(value, "data") and isinstance(value.data, str):
        return value.data
    if spec:
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            pass
    return str(value)


def _role(match: re.Match, numbers: dict | None = None) -> str:
    kind, body = match.groups()
    if kind.startswith("glue"):
        name, _, spec = body.partition(":")
        return _text(_GLUED[name], spec) if name in _GLUED else f"[{name}: not glued in this run]"
    label = re.match(r"^(.*?)\s*<([^>]*)>$", body)             # {doc}`text <target>`: the text
    if kind == "numref":                 # this chapter's figures and tables numbered as the notebook shows them
        target = label.group(2) if label else body
        number = (numbers or {}).get(target)
        if label:
            return label.group(1).replace("%s", number.split()[-1] if number else target)
        return number or target
    if label:
        return label.group(1)
    return f"[{body}]" if kind == "cite" else body


def numbering(source: str) -> dict[str, str]:
    """``{label: "Figure 2"}``: the chapter's figures (``glue:figure``) and tables (``table``) in order,
    numbered within the chapter, for its ``{numref}`` roles (a label of another chapter keeps its name)."""
    numbers, counts, kind = {}, {"Figure": 0, "Table": 0}, None
    for line in source.splitlines():
        fence = _FENCE.match(line)
        if fence:
            kind = {"glue:figure": "Figure", "table": "Table"}.get(fence.group(2))
        name = re.match(r"^:name:\s*(\S+)", line.strip())
        if name and kind:
            counts[kind] += 1
            numbers[name.group(1)] = f"{kind} {counts[kind]}"
            kind = None
    return numbers


def render_markdown(source: str) -> list:
    """The chapter's markdown as a list of parts to display: Markdown text (roles filled in) and the
    glued figures where their directives stand (``glue:figure``: the figure, then its caption;
    ``glue:md``: the glued Markdown; other directives: their body, options dropped)."""
    parts, text, lines, i = [], [], source.splitlines(), 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            text.append(lines[i])
            i += 1
            continue
        mark, kind, argument = fence.groups()
        body, i = [], i + 1
        while i < len(lines) and lines[i].strip() != mark:
            body.append(lines[i])
            i += 1
        i += 1
        body = [x for x in body if not re.match(r"^:[a-z-]+:", x.strip())]      # directive options
        if kind == "glue:figure":
            parts.append(("markdown", "\n".join(text)))
            text = []
            parts.append(("figure", _GLUED.get(argument.strip())))
            text.extend(["", "*" + " ".join(x.strip() for x in body if x.strip()) + "*", ""])   # its caption
        elif kind == "glue:md":
            text.append(_text(_GLUED[argument.strip()]) if argument.strip() in _GLUED
                        else f"[{argument.strip()}: not glued in this run]")
        else:
            if argument:
                text.append(f"**{argument}**")
            text.extend(render_nested(body))
    parts.append(("markdown", "\n".join(text)))
    numbers = numbering(source)
    return [(k, _ROLE.sub(lambda m: _role(m, numbers), v) if k == "markdown" else v) for k, v in parts
            if v is not None]


def render_nested(body: list[str]) -> list[str]:
    """A directive's body with any directive inside it rendered (a ``{table}`` around a ``{glue:md}``)."""
    out = []
    for kind, value in render_markdown("\n".join(body)):
        out.append(value if kind == "markdown" else "")
    return out


def notebook_path(name: str) -> Path:
    """The chapter's ``.ipynb`` in the repository's ``notebooks/`` folder."""
    return Path(__file__).resolve().parents[2] / "notebooks" / f"{name}.ipynb"


def show_chapter(name: str) -> None:
    """Display chapter ``name`` as the book prints it for this run (module docstring): its markdown
    cells with the values glued so far, and its figures inline."""
    import json

    from IPython.display import Markdown, display
    cells = json.loads(notebook_path(name).read_text())["cells"]
    source = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for kind, value in render_markdown(source):
        if kind == "markdown":
            display(Markdown(value))
        elif hasattr(value, "savefig"):
            display(value)
