"""Every pandas Styler a notebook shows has a stable table id of its own (``.set_uuid``), so
rebuilds of the book give the same HTML without rewriting random ids afterwards."""
import re
from pathlib import Path



ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "notebooks").glob("*.py"))
_AFTER_STYLE = re.compile(r"\.style\s*\.\s*(\w+)\(\s*([^)]*)\)")


def _uuids(path: Path) -> list[str]:
    """The uuid given to each Styler of a notebook source; '' where ``.style`` is not followed by
    ``.set_uuid("...")`` with a literal string."""
    out = []
    for method, args in _AFTER_STYLE.findall(path.read_text()):
        literal = re.fullmatch(r"""\s*(["'])(\w+)\1\s*""", args)
        out.append(literal.group(2) if method == "set_uuid" and literal else "")
    return out


def test_every_styler_has_a_uuid_named_after_its_notebook():
    checked = SOURCES
    assert len(checked) >= 9 and sum(len(_uuids(p)) for p in checked) >= 9   # the tables are found
    for path in checked:
        for uuid in _uuids(path):
            assert uuid.startswith(path.stem + "_"), f"{path.name}: .style.set_uuid('{path.stem}_...') first"


def test_uuids_are_unique_in_the_book():
    uuids = [u for p in SOURCES for u in _uuids(p) if u]
    assert len(uuids) == len(set(uuids))
