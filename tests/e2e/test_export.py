"""Exported static HTML opens offline: every marimo notebook, exported the way an instructor
would (`python -m labkit.views.export notebooks/<nb>.py -o <file>.html`), opened from file:// in
Chromium with every non-file request aborted, shows the notebook's content.

The export of each notebook is the session's one run of it (tests/conftest.py: headless), whose
probes the notebook's own tests read; the command line itself is run here on a small notebook."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import browser as e2e
from e2e import pages
from labkit.views.export import (
    KEY_BASE,
    STATIC_NOTE,
    OfflineExportError,
    marimo_assets,
    offline_html,
)

LOCAL = ("file:", "data:", "blob:")
# text a notebook's static copy must show, beyond its title
SHOWN = {"judge_bias": ("Real judges (LLMBar)", "ChatGPT changed its verdict with the order on 143 instances")}
_H1 = re.compile(r'mo\.md\(\s*r?f?"""\s*\n\s*#\s+(.+)')  # a markdown cell that opens with a title
_APP_TITLE = re.compile(r'app_title="([^"]+)"')  # else the app's title (its text lives in labkit)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the export runs the notebook for real
@pytest.mark.parametrize("notebook", e2e.marimo_notebooks(), ids=lambda p: p.name)
def test_exported_notebook_opens_offline(chromium, notebook, headless):
    run = headless(notebook.stem)  # the offline default; exported once a session (conftest.py)
    run.check()
    assert run.html is not None and run.html.is_file(), f"{notebook.name}: the export wrote no page"
    out = run.html

    source = notebook.read_text(encoding="utf-8")
    title = _H1.search(source) or _APP_TITLE.search(source)
    assert title, f"{notebook.name} has no markdown title cell or app_title to look for"
    pages.discard()  # no page of another test shares the browser while every request is routed here
    ctx = chromium.context()
    try:
        asked: list[str] = []

        def offline(route):
            if route.request.url.startswith(LOCAL):
                route.continue_()
            else:
                asked.append(route.request.url)
                route.abort("internetdisconnected")

        ctx.route("**/*", offline)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(out.as_uri(), wait_until="commit")
        page.locator("h1", has_text=title.group(1).strip()).first.wait_for(timeout=e2e.RENDER_TIMEOUT * 1000)
        if "Stepper(" in source or "mo.ui.anywidget(" in source:
            label = page.locator(".labkit-stepper .labkit-label").first
            label.wait_for()
            assert re.search(r"\b1 of \d+", label.inner_text()), label.inner_text()
        page.get_by_text("Static copy of a labkit notebook").wait_for()
        for text in SHOWN.get(notebook.stem, ()):  # sections that must render in the static copy
            page.get_by_text(text).first.wait_for()
        if "is_static_export()" in source:  # controls that need a kernel say so, and are off
            page.get_by_text(STATIC_NOTE.split(" (")[0]).first.wait_for()
            # every control that needs a kernel is off: storyline radios, case pickers, patch boxes
            controls = [*page.get_by_role("radio").all(), *page.get_by_role("combobox").all(),
                        *page.locator("textarea").all(), *page.get_by_role("button", name="Test my patch").all()]  # fmt: skip
            assert controls, "the notebook says it disables controls offline, but none was found"
            live = [c.evaluate("e => e.outerHTML.slice(0, 120)") for c in controls if not c.is_disabled()]
            assert not live, f"controls live offline: {live}"
        # marimo copies its stylesheets into widgets' shadow roots only if it recognises them
        styled = page.evaluate(
            """() => Array.from(document.querySelectorAll('marimo-table, marimo-anywidget'))
                 .every(e => !e.shadowRoot || e.shadowRoot.adoptedStyleSheets.length > 0)"""
        )
        e2e.page_shot(page, e2e.BUILD / f"export-{notebook.stem}.png")
        assert styled, "a widget's shadow root got none of marimo's stylesheets"
        assert not asked, f"the offline page tried the network: {asked[:5]}"
        assert not errors, f"uncaught errors in the page: {errors}"
    finally:
        ctx.close()


_TINY = """import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

    only_in_the_code = 1
    mo.md("# A tiny notebook")
    return


if __name__ == "__main__":
    app.run()
"""


@pytest.mark.slow
def test_the_command_line_exports_a_notebook(tmp_path: Path):
    # what an instructor types; the notebooks above are exported through the same export_offline
    notebook, out = tmp_path / "tiny.py", tmp_path / "out" / "tiny.html"
    notebook.write_text(_TINY)
    proc = subprocess.run(
        [sys.executable, "-m", "labkit.views.export", str(notebook), "-o", str(out)],
        cwd=e2e.ROOT,
        env=e2e.notebook_env(),
        capture_output=True,
        text=True,
        timeout=e2e.RENDER_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"wrote {out} (") and proc.stdout.rstrip().endswith("opens offline")
    page = out.read_text(encoding="utf-8")
    assert "A tiny notebook" in page and "Static copy of a labkit notebook" in page
    assert "only_in_the_code" not in page  # outputs only: the code stays in the notebook
    assert 'id="labkit-marimo-assets"' in page  # the frontend inside the page (offline_html)


def test_offline_html_rewrites_every_asset_reference():
    assets = marimo_assets()
    entry = next(p.name for p in assets.glob("index-*.js"))
    style = next(p.name for p in assets.glob("index-*.css"))
    cdn = "https://cdn.example/npm/@marimo-team/frontend@0/dist/"
    page = (
        f'<html><head><script type="module" crossorigin src="{cdn}assets/{entry}"></script>'
        f'<link rel="modulepreload" crossorigin href="{cdn}assets/{entry}">'
        f'<link rel="stylesheet" crossorigin href="{cdn}assets/{style}">'
        f'<link rel="icon" href="{cdn}favicon.ico" /></head><body>hi</body></html>'
    )
    out = offline_html(page)
    assert cdn not in out
    assert f'import "{KEY_BASE}{entry}"' in out
    assert "Static copy of a labkit notebook" in out.split("<body>", 1)[1]  # says what works offline
    assert f'__labkitStylesheet("{style}")' in out
    # the import map names must be what the chunks import: no chunk keeps a "./sibling.js"
    assert '"./' + entry not in out


def test_offline_html_refuses_assets_of_another_marimo_version():
    cdn = "https://cdn.example/dist/"
    page = f'<html><head><script type="module" src="{cdn}assets/index-NOTREAL.js"></script></head></html>'
    with pytest.raises(OfflineExportError, match="another marimo version"):
        offline_html(page)


def test_offline_html_refuses_a_page_that_is_not_a_marimo_export():
    with pytest.raises(OfflineExportError, match="not a marimo HTML export|no marimo frontend"):
        offline_html("<html><head></head><body>plain</body></html>")


def test_an_export_reads_the_bytecode_the_install_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """export_offline runs marimo with PYTHONPYCACHEPREFIX (its session file goes there, not into
    notebooks/): Python then looks for bytecode only under that prefix. Seeded once, the prefix
    holds the install's own files where Python looks, so the first export compiles nothing
    that was compiled at install."""
    import importlib.util

    import marimo

    from labkit.views import export

    export._seed_bytecode(tmp_path)
    installed = Path(importlib.util.cache_from_source(marimo.__file__))
    assert installed.is_file(), "the install compiles bytecode (./run: --compile-bytecode)"
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    looked_up = Path(importlib.util.cache_from_source(marimo.__file__))
    assert looked_up.is_relative_to(tmp_path) and looked_up.read_bytes() == installed.read_bytes()
    assert (tmp_path / ".seeded").is_file()  # the next export links nothing again


def test_a_prefix_that_cannot_be_written_leaves_the_export_to_compile(tmp_path: Path):
    """Seeding is only a speed-up: a prefix it cannot write (here a file in the way) stops it
    without an error and without the marker, so a later export tries again."""
    from labkit.views import export

    blocked = tmp_path / "prefix"
    blocked.write_text("not a folder")
    export._seed_bytecode(blocked / "inside")
    assert blocked.read_text() == "not a folder" and not (blocked / "inside" / ".seeded").exists()
