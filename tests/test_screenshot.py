"""scripts/screenshot.py on a two-page stand-in book: a full-page PNG per page, and a table wider than the
text column reported (exit status 1). Needs Chromium; skipped where there is none."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium")

PAGE = """<html><body style="margin:0"><div style="width:600px"><article style="width:500px">
<p>{text}</p><div style="overflow-x:auto"><table><tr>{cells}</tr></table></div>
<div style="height:{height}px;background:linear-gradient(#fff,#999)"></div></article></div></body></html>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_pages_are_shot_whole_and_a_wide_table_is_reported(tmp_path):
    from PIL import Image
    html = tmp_path / "html"
    (html / "book").mkdir(parents=True)
    (html / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/narrow.html" />')
    (html / "book" / "narrow.html").write_text(PAGE.format(text="narrow", cells="<td>1</td>", height=9000))
    wide = "".join(f"<td>{'x' * 30}{i}</td>" for i in range(8))
    (html / "book" / "wide.html").write_text(PAGE.format(text="wide", cells=wide, height=100))
    out = tmp_path / "shots"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "screenshot.py"), "--html", str(html), "--out",
                          str(out), "--width", "800", "--chromium", CHROMIUM], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr      # the wide table
    assert sorted(p.name for p in out.iterdir()) == ["book__narrow.png", "book__wide.png"]   # not the redirect
    tall = Image.open(out / "book__narrow.png")
    assert tall.size[0] == 800 and tall.size[1] > 9000      # the whole page, past one 4000 px slice
    bottom = tall.convert("L").getpixel((100, tall.size[1] - 20))
    assert bottom < 200                                     # painted to the end (the gradient's dark end)
    lines = run.stdout.splitlines()
    assert any(line.startswith("  overflow: table scrolls") or line.startswith("  overflow: div scrolls")
               for line in lines), run.stdout
    assert lines[-1] == "2 pages, 1 with a table or figure wider than the text"
