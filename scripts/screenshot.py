"""Screenshots of the built book's pages in headless Chromium, to check tables and figures by eye.

    .venv/bin/python scripts/screenshot.py --out shots                      # every page of _build/html
    .venv/bin/python scripts/screenshot.py --out shots --html mybook/_build/html --width 1400 \
        book/generated/sigma_from_routing.html index.html                   # some pages only

One full-page PNG per page (``<out>/<page path with / as __>.png``) at ``--width`` CSS pixels (default 1280),
and one line per page: its height and every table, figure or code block wider than the text column (it
scrolls or is cut off), ``overflow:`` and the element's first words; the status is 1 when any page has one.
Chromium is driven over the DevTools protocol through a pipe (``--remote-debugging-pipe``), so nothing but
Chromium and Pillow (installed with the book's packages) is needed; ``--chromium`` (default: ``$CHROMIUM``, else ``chromium`` on the PATH) names it.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_HEIGHT = 30_000   # CSS pixels: a taller page is cut there (and the line says so)

OVERFLOW_JS = """
(() => {
  const out = [];
  const seen = new Set();
  for (const el of document.querySelectorAll('article table, article .cell_output, article pre, article img, '
                                             + 'article svg, article .pst-scrollable-table-container')) {
    if (el.closest('mjx-container') || !el.getClientRects().length) continue;   // formulas; hidden cells
    if (el.tagName === 'PRE' && !el.innerText.trim()) continue;                  // collapsed code
    let box = el;
    while (box && box.tagName !== 'ARTICLE') {
      if (box.scrollWidth > box.clientWidth + 1 && getComputedStyle(box).overflowX !== 'visible') break;
      box = box.parentElement;
    }
    const main = document.querySelector('article').getBoundingClientRect();
    const r = el.getBoundingClientRect();
    const scrolls = box && box.tagName !== 'ARTICLE';
    if (!scrolls && r.right <= main.right + 1) continue;
    const key = scrolls ? box : el;
    if (seen.has(key)) continue;
    seen.add(key);
    const text = (el.innerText || el.getAttribute('alt') || el.tagName).replace(/\\s+/g, ' ').slice(0, 60);
    out.push(`${el.tagName.toLowerCase()} ${scrolls ? 'scrolls' : 'cut off'} (${Math.round(key.scrollWidth)} px in `
             + `${Math.round(scrolls ? box.clientWidth : main.width)}): ${text}`);
  }
  return out;
})()
"""


SETTLED = """
Promise.race([new Promise(r => setTimeout(r, 10000)),
              Promise.all([document.fonts.ready, (window.MathJax && MathJax.startup && MathJax.startup.promise)
                           || Promise.resolve(),
                           ...[...document.images].map(i => { i.loading = 'eager'; return i.complete ? 1
                               : new Promise(r => { i.onload = r; i.onerror = r; }); })])])
  .then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))).then(() => 1)
"""
"""Resolves when fonts, formulas and every image (lazy ones made eager) are in (at most 10 s) and two frames
have been drawn."""


SLICE = 4000
"""CSS pixels per capture: one capture of a taller page leaves its lower part blank; slices are stitched."""


def blank_band(shot: bytes, rows: int = 300) -> bool:
    """Whether the capture holds ``rows`` or more consecutive rows of one colour across the text column
    (a book page has no such gap; Chromium returns one where it has not painted yet)."""
    import io

    import numpy as np
    from PIL import Image
    image = np.asarray(Image.open(io.BytesIO(shot)).convert("L"), dtype=float)
    flat = image[:, image.shape[1] // 4: 3 * image.shape[1] // 4].std(axis=1) == 0
    run = 0
    for f in flat:
        run = run + 1 if f else 0
        if run >= rows:
            return True
    return False


def stitch(png: Path, slices: list[bytes]) -> None:
    """The slices, top to bottom, as one PNG."""
    import io

    from PIL import Image
    images = [Image.open(io.BytesIO(b)) for b in slices]
    page = Image.new("RGB", (images[0].width, sum(i.height for i in images)), "white")
    y = 0
    for image in images:
        page.paste(image, (0, y))
        y += image.height
    page.save(png)


class Browser:
    """Headless Chromium, spoken to in DevTools protocol messages over a pipe (NUL-terminated JSON)."""

    def __init__(self, chromium: str):
        self.profile = tempfile.mkdtemp(prefix="afd-shot-")
        to_chrome, self._w = os.pipe()
        self._r, from_chrome = os.pipe()

        def pipes():   # in the child: the protocol's fds 3 (commands in) and 4 (replies out), inherited
            into, out = os.dup(to_chrome), os.dup(from_chrome)   # above 6: neither is 3 or 4
            os.dup2(into, 3)
            os.dup2(out, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", "--no-first-run", "--allow-file-access-from-files",
             f"--user-data-dir={self.profile}", "about:blank"],
            preexec_fn=pipes, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome)
        os.close(from_chrome)
        self._buf, self._id, self.events = b"", 0, []

    def send(self, method: str, session: str | None = None, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(e.get("method") == method for e in self.events):
                self.events = [e for e in self.events if e.get("method") != method]
                return
            self.events.append(self._read())
        raise TimeoutError(method)

    def _read(self) -> dict:
        while b"\0" not in self._buf:
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def shoot(browser: Browser, page: Path, png: Path, width: int) -> tuple[int, list[str]]:
    """One full-page screenshot of ``page``: its height (CSS px) and the elements wider than the text."""
    target = browser.send("Target.createTarget", url="about:blank")["targetId"]
    s = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    try:
        browser.send("Page.enable", s)
        browser.send("Emulation.setDeviceMetricsOverride", s, width=width, height=900, deviceScaleFactor=1,
                     mobile=False)
        browser.send("Page.navigate", s, url=page.resolve().as_uri())
        browser.wait_event("Page.loadEventFired")
        height = 0
        for _ in range(4):   # until the page's height holds: images and formulas change it as they come in
            browser.send("Runtime.evaluate", s, expression=SETTLED, awaitPromise=True)
            now = int(browser.send("Page.getLayoutMetrics", s)["cssContentSize"]["height"])
            if now == height:
                break
            height = now
            shown = min(height, MAX_HEIGHT)
            browser.send("Emulation.setDeviceMetricsOverride", s, width=width, height=shown, deviceScaleFactor=1,
                         mobile=False)
            time.sleep(0.3)
        found = browser.send("Runtime.evaluate", s, expression=OVERFLOW_JS, returnByValue=True)["result"]
        overflow = list(found.get("value") or [])
        slices = []
        for y in range(0, shown, SLICE):
            for _ in range(6):   # a slice not yet painted comes back with a blank band: take it again
                shot = base64.b64decode(browser.send(
                    "Page.captureScreenshot", s, format="png", captureBeyondViewport=False,
                    clip={"x": 0, "y": y, "width": width, "height": min(SLICE, shown - y), "scale": 1})["data"])
                if not blank_band(shot):
                    break
                time.sleep(0.5)
            slices.append(shot)
        stitch(png, slices)
        return height, overflow
    finally:
        browser.send("Target.closeTarget", targetId=target)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", help="pages relative to --html (default: every .html page)")
    ap.add_argument("--html", default=str(ROOT / "_build" / "html"), help="the built book (default: _build/html)")
    ap.add_argument("--out", required=True, help="folder for the PNGs")
    ap.add_argument("--width", type=int, default=1280, help="window width in CSS pixels (default 1280)")
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM") or shutil.which("chromium") or "chromium")
    args = ap.parse_args()
    html = Path(args.html)
    if not (html / "index.html").exists():
        sys.exit(f"{html}: no built book (index.html) there; build it first (afd book)")
    skip = {"genindex.html", "search.html"}
    pages = [html / p for p in args.pages] or sorted(   # not the index's redirect, the search or the index
        p for p in html.rglob("*.html") if p.name not in skip and not {"_static", "_sources"} & set(p.parts)
        and "http-equiv=\"Refresh\"" not in p.read_text(errors="replace")[:300])
    missing = [str(p) for p in pages if not p.exists()]
    if missing:
        sys.exit(f"no such page: {', '.join(missing)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    browser, bad = Browser(args.chromium), 0
    try:
        for page in pages:
            rel = page.relative_to(html).as_posix()
            png = out / (rel.removesuffix(".html").replace("/", "__") + ".png")
            height, overflow = shoot(browser, page, png, args.width)
            cut = f" (cut at {MAX_HEIGHT})" if height > MAX_HEIGHT else ""
            print(f"{rel}: {args.width} x {height} px{cut} -> {png}")
            for line in overflow:
                print(f"  overflow: {line}")
            bad += bool(overflow)
    finally:
        browser.close()
    print(f"{len(pages)} pages, {bad} with a table or figure wider than the text")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
