"""What every book build shares (the reference book's and ``afd book --out``'s): one build at a
time per folder, a book published only when whole, and child processes that end with the build.

- :func:`publish_whole` runs the build's steps under a lock (``<build>/.lock``); they render the
  book into ``<build>/next``, a sibling of the published ``<build>/html``, which replaces it by two
  renames only when every step succeeded. A step that fails (:class:`BuildFailed`, a full disk or
  any other ``OSError``, Ctrl-C) removes ``<build>/html``, so an earlier book never looks current,
  and keeps what was rendered in ``<build>/html.failed``.
- :func:`die_with_parent` (a notebook worker calls it first) and :func:`run_child` (the renderer)
  tie a child to the build: ``kill -9`` of the build runs no clean-up in it, so the children watch
  it themselves (Linux's ``PR_SET_PDEATHSIG``; elsewhere a thread polling the parent's id). The
  kernels the workers start end with them (ipykernel polls its parent), and multiprocessing's
  resource tracker once none of them holds its pipe.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from afdlib.errors import AfdError


class BuildFailed(Exception):
    """A step of the build failed; ``str()`` says which, for the build's one-line report."""


def rmtree(path: Path) -> None:
    """Remove a folder, a file or a link, if there."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def publish(new: Path, html: Path) -> None:
    """Put the finished book ``new`` at ``html``: two renames, so the published path holds either
    the old book or the new one (and, for an instant, nothing), never a mixture."""
    old = html.with_name(html.name + ".old")
    rmtree(old)
    if html.exists() or html.is_symlink():
        os.replace(html, old)
    os.replace(new, html)
    rmtree(old)


@contextlib.contextmanager
def lock(build: Path):
    """Exclusive lock on ``build/.lock`` for the whole build; a second build is a user error."""
    import fcntl
    build.mkdir(parents=True, exist_ok=True)
    with open(build / ".lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AfdError(f"another build is running here (it holds {build / '.lock'}); "
                           "wait for it to finish") from None
        yield  # the lock goes with the file


def writable_folder(out: Path, option: str = "--out") -> Path:
    """``out`` as a folder this process can write (created if missing), or one AfdError line."""
    if out.exists() and not out.is_dir():
        raise AfdError(f"{option} {out} is a file, not a folder; give a folder for the book")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with open(out / ".afd-write-test", "w"):
            pass
        (out / ".afd-write-test").unlink()
    except OSError as e:
        raise AfdError(f"{option} {out}: cannot write there ({e.strerror or e})") from None
    return out


def publish_whole(build: Path, steps: Callable[[Path], None], t0: float) -> int:
    """Run ``steps(next)`` under the lock of ``build``; they leave the whole book in
    ``next/_build/html`` (``next`` is ``build/next``) or raise. Publish it at ``build/html`` only
    then; a failure removes ``build/html`` and prints one line. Returns the exit status (0, 1, or
    130 when interrupted)."""
    html, nxt, failed = build / "html", build / "next", build / "html.failed"

    def fail(reason: str) -> None:
        rmtree(failed)
        partial, where = nxt / "_build" / "html", "nothing rendered"
        if partial.exists():
            os.replace(partial, failed)
            where = f"partial build (not the book) in {failed}"
        rmtree(html)
        rmtree(nxt)
        print(f"afd book: FAILED, {reason} ({time.perf_counter() - t0:.1f} s); {where}; "
              f"nothing published at {html}", file=sys.stderr)

    with lock(build):
        try:
            rmtree(nxt)
            steps(nxt)
            publish(nxt / "_build" / "html", html)
        except BuildFailed as e:
            fail(str(e))
            return 1
        except KeyboardInterrupt:
            fail("interrupted")
            return 130
        except OSError as e:   # a full disk, a folder removed under the build
            fail(f"{e.strerror or e}{f' ({e.filename})' if e.filename else ''}")
            return 1
        rmtree(nxt)
        rmtree(failed)
    return 0


# --- children end with the build ---------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` (the process that started it) ends, however it ends."""
    try:
        import ctypes
        if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):       # not Linux: poll
        def poll():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)
        threading.Thread(target=poll, daemon=True).start()
    if os.getppid() != parent:              # it ended before the watch was set
        os._exit(1)


def run_child(cmd: list[str], cwd: Path | str) -> subprocess.CompletedProcess:
    """``subprocess.run`` of ``cmd`` (text output captured) that ends with this process (on Linux:
    elsewhere the watch is a thread, which does not survive the child's exec)."""
    parent = os.getpid()
    return subprocess.run(cmd, cwd=cwd, text=True, capture_output=True, preexec_fn=lambda: die_with_parent(parent))
