"""A notebook's page after its first run, left by one browser test for the next that needs it.

A walk (test_marimo_browser, test_jupyter_browser) opens a notebook fresh, runs it, and steps
every stepper back to its first item. A test that then only reads that page, or uses one of its
own controls (a glossary link, "Test my patch", the storyline picker), takes the page over
instead of running the whole notebook again. One page is kept per process: the last one left,
closed before anything else opens. A JupyterLab page left by a test of another notebook is not
closed but re-used, as a user opens the next twin in the lab they have open (`lab_page`): its
notebooks are closed first (a notebook left open would start a kernel again once the next
test's jupyter_lab() shut its kernel down), so booting JupyterLab's frontend (5-7 s of CPU) is
paid once per process, not once per twin.
A test that finds none for its notebook, or finds it dead (Chromium closed, kernel shut down),
opens and runs a fresh one, and leaves it in turn. Under pytest-xdist each such test is
scheduled right after the walk it takes over from (tests/conftest.py: RIGHT_AFTER).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2e import browser as e2e

_KERNEL_ID = "() => jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.id ?? null"


@dataclass
class Opened:
    """A notebook's page after its first run (in marimo: `runs` follows its cells)."""

    front: str  # "marimo" or "jupyter"
    notebook: Path
    env: dict[str, str]
    ctx: Any
    page: Any
    server: e2e.Server
    runs: e2e.MarimoRuns | None = None
    errors: list[str] = field(default_factory=list)  # uncaught page errors while this test holds it
    _listener: Callable[[Any], None] | None = None

    def watch_errors(self) -> None:
        self.errors = []
        errors = self.errors
        self._listener = lambda e: errors.append(str(e))
        self.page.on("pageerror", self._listener)

    def unwatch_errors(self) -> None:
        if self._listener is not None:
            self.page.remove_listener("pageerror", self._listener)
            self._listener = None


_kept: Opened | None = None


def keep(opened: Opened) -> None:
    """Leave `opened` for the next browser test of this process (closing the one kept before)."""
    global _kept
    discard()
    opened.unwatch_errors()
    _kept = opened


def discard() -> None:
    global _kept
    if _kept is not None:
        with contextlib.suppress(Exception):
            _kept.ctx.close()
        _kept = None


def _take(front: str, notebook: Path, env: dict[str, str]) -> Opened | None:
    """The kept page if it is this notebook's (same front end and env) and still alive; else
    None, and the kept page is left where it is (`lab_page` may re-use it, `discard` closes it)."""
    global _kept
    opened = _kept
    if opened is None or (opened.front, opened.notebook, opened.env) != (front, notebook, env):
        return None
    _kept = None
    if _alive(opened):
        return opened
    with contextlib.suppress(Exception):
        opened.ctx.close()
    return None


# Close every notebook of a JupyterLab page, unsaved (no "save your work?" dialog); a launcher
# or other panel may stay. Resolves once none is left.
_CLOSE_NOTEBOOKS = """async () => {
  const notebooks = () => Array.from(jupyterapp.shell.widgets('main')).filter(w => w.context);
  for (const w of notebooks()) {
    w.context.model.dirty = false;
    w.close();
  }
  for (let i = 0; i < 200 && notebooks().length; i++) await new Promise(r => setTimeout(r, 50));
  return notebooks().length;
}"""


@dataclass
class LabPage:
    """A Chromium page for a notebook in JupyterLab: `booted` if JupyterLab's frontend already
    runs in it (no notebook open), else a blank page in a fresh Context."""

    ctx: Any
    page: Any
    booted: bool


def lab_page(chromium: e2e.Chromium) -> LabPage:
    """The kept page if it is a JupyterLab one still alive, its notebooks closed; else (any other
    kept page closed) a fresh Context and page."""
    global _kept
    opened, _kept = _kept, None
    if opened is not None and opened.front == "jupyter" and _alive(opened):
        try:
            if opened.page.evaluate(_CLOSE_NOTEBOOKS) == 0:
                return LabPage(opened.ctx, opened.page, booted=True)
        except Exception:  # a page that no longer answers: closed below, a fresh one instead
            pass
    if opened is not None:
        with contextlib.suppress(Exception):
            opened.ctx.close()
    ctx = chromium.context()
    return LabPage(ctx, ctx.new_page(), booted=False)


def _alive(o: Opened) -> bool:
    if o.server.proc.poll() is not None:
        return False
    try:
        if o.front == "marimo":
            return o.runs is not None and not o.runs.busy() and o.page.evaluate("() => 1") == 1
        kernel = o.page.evaluate(_KERNEL_ID)
        kernels = e2e.get_json(f"{o.server.url}/api/kernels", o.server.headers)
        return kernel is not None and [k["id"] for k in kernels] == [kernel]
    except Exception:  # a closed browser or page, a server that no longer answers
        return False


def _failed_to_open(o: Opened, err: BaseException, what: str) -> e2e.E2EError:
    with contextlib.suppress(Exception):
        o.page.screenshot(path=str(e2e.BUILD / f"{o.front}-{o.notebook.stem}-open-FAILED.png"))
    with contextlib.suppress(Exception):
        o.ctx.close()
    return e2e.E2EError(f"{err}\n--- {what} log ---\n{o.server.log_tail()}")


@contextlib.contextmanager
def _held(opened: Opened) -> Iterator[Opened]:
    """Lend `opened` to the test; kept for the next one if the test passed, else closed."""
    try:
        yield opened
    except BaseException:
        with contextlib.suppress(Exception):
            opened.ctx.close()
        raise
    keep(opened)


@contextlib.contextmanager
def marimo_page(chromium: e2e.Chromium, notebook: Path, env: dict[str, str] | None = None) -> Iterator[Opened]:
    """`notebook` served by `marimo run` (with `env`), its first run finished and every cell idle."""
    env = env or {}
    opened = _take("marimo", notebook, env)
    if opened is not None:
        opened.watch_errors()
    else:
        discard()
        ctx = chromium.context()
        page = ctx.new_page()
        runs = e2e.MarimoRuns(page)
        with e2e.marimo_run(notebook, env=env) as server:
            opened = Opened("marimo", notebook, env, ctx, page, server, runs)
            opened.watch_errors()
            try:
                page.goto(server.url, wait_until="domcontentloaded")
                e2e.settle_marimo(page, runs, 0, e2e.RENDER_TIMEOUT, "the first run to finish")
            except Exception as err:
                raise _failed_to_open(opened, err, "marimo") from None
    with _held(opened):
        yield opened


@contextlib.contextmanager
def jupyter_page(chromium: e2e.Chromium, notebook: Path) -> Iterator[Opened]:
    """The twin `notebook` in JupyterLab after one Run All in which every code cell ran and none
    raised (checked again on a page taken over: it still reads so)."""
    from e2e.test_jupyter_browser import _CELLS, open_and_run_all

    opened = _take("jupyter", notebook, {})
    if opened is not None:
        opened.watch_errors()
        cells = opened.page.evaluate(_CELLS)
        failed = [c for c in cells if c["count"] is None or any(o.startswith("error") for o in c["outputs"])]
        assert not failed, f"cells not run or raised: {failed}"
    else:
        lab = lab_page(chromium)
        with e2e.jupyter_lab(notebook, leave_running=True) as server:
            opened = Opened("jupyter", notebook, {}, lab.ctx, lab.page, server)
            opened.watch_errors()
            try:
                open_and_run_all(lab, server, notebook.name)
            except Exception as err:
                raise _failed_to_open(opened, err, "jupyter") from None
    with _held(opened):
        yield opened
