"""Every pandas Styler a notebook builds is handed to ``glue_table``, which glues its displayed values
as a MyST table for a numbered ``{table}``: no Styler HTML reaches the book, so no random pandas table
id (``T_1a2b3``) can make two builds differ (``afd book`` still refuses one: book.random_table_ids)."""
import ast
from pathlib import Path

from afdlib.report.book import random_table_ids

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "notebooks").glob("*.py"))


def _styler_statements(path: Path) -> list[tuple[int, bool]]:
    """(line, handed to glue_table) for each top-level statement of a notebook that builds a Styler."""
    out = []
    for stmt in ast.parse(path.read_text()).body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        names = {getattr(n, "attr", getattr(n, "id", None)) for n in ast.walk(stmt)}
        if "style" in names:
            out.append((stmt.lineno, "glue_table" in names))
    return out


def test_every_styler_goes_to_glue_table():
    found = [(p.name, line, ok) for p in SOURCES for line, ok in _styler_statements(p)]
    assert len(found) >= 9                                      # the tables are found
    assert [f for f in found if not f[2]] == []


def test_random_table_ids_are_found():
    assert random_table_ids('<table id="T_1a2b3"> <style>#T_1a2b3_row0 {}</style> id="T_intro_results"') == ["T_1a2b3"]
