"""The folder layout shows the layers: imports go down the layers only, and no module imports
itself back through others (no circle), counting imports inside functions too."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "afdlib"

LAYERS = ("errors", "inputs", "routing", "evaluator", "analysis", "decode", "simulation", "decision", "peers", "sweep",
          "studies", "report", "cli")
"""Bottom to top: a module may import from its own layer or one below, never from one above."""

MAX_LINES = 450


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every afdlib module ``path`` imports, at module level or inside functions."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("afdlib"):
            out.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path.name}: relative import; write afdlib.<layer>.<module>")
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("afdlib")}
    return out


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return -1                                  # afdlib itself: __version__
    return LAYERS.index(parts[1])


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {m: _imports(p) - {m} for m, p in MODULES.items()}


def test_every_module_is_in_a_layer():
    for m in MODULES:
        if m != "afdlib":
            assert m.split(".")[1] in LAYERS, f"{m} is in no layer of {LAYERS}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "afdlib"))
def test_imports_go_down(module):
    up = [t for t in GRAPH[module] if _layer(t) > _layer(module)]
    assert not up, f"{module} imports from a layer above it: {up}"


def test_no_import_circle():
    """Depth-first search for a back edge over the module graph (package __init__ edges included)."""
    state: dict[str, int] = {}

    def visit(m, path):
        state[m] = 1
        for t in sorted(GRAPH.get(m, ())):
            if t not in MODULES:
                continue
            if state.get(t) == 1:
                raise AssertionError("import circle: " + " -> ".join(path + [m, t]))
            if not state.get(t):
                visit(t, path + [m])
        state[m] = 2

    for m in sorted(MODULES):
        if not state.get(m):
            visit(m, [])


def test_layers_catch_an_upward_import():
    """The check can fail: an evaluator module importing the decode model would be refused."""
    assert _layer("afdlib.decode.step") > _layer("afdlib.evaluator.roofline")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_are_small(module):
    n = len(MODULES[module].read_text().splitlines())
    assert n <= MAX_LINES, f"{module} has {n} lines (at most {MAX_LINES}: split it by concept)"


def test_at_least_four_subpackages():
    subpackages = [p.parent.name for p in PACKAGE.glob("*/__init__.py")]
    assert len(subpackages) >= 4
