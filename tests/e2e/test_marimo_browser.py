"""Every marimo notebook, served by `marimo run` and driven in a real Chromium.

For each notebook: wait until its first run has finished, then step through the rounds
with the stepper (clicks and arrow keys) and check that what is shown is that round's
content (benchmarks/_browser.py: walk_stepper, SPECS). Screenshots land in build/e2e/.
"""

from __future__ import annotations

import re

import pytest

from e2e import browser as e2e
from e2e import pages

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # notebooks run their loops for real


@pytest.mark.parametrize("notebook", e2e.marimo_notebooks(), ids=lambda p: p.name)
def test_marimo_app_steps_through_rounds(chromium, notebook):
    pages.discard()  # a page kept from another test (tests/e2e/pages.py): this walk opens its own
    ctx = chromium.context()  # fails with the install hint if Chromium is missing
    kept = False
    try:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        runs = e2e.MarimoRuns(page)
        with e2e.marimo_run(notebook) as server:
            page.goto(server.url, wait_until="domcontentloaded")
            try:
                e2e.settle_marimo(page, runs, 0, e2e.RENDER_TIMEOUT, "the first run to finish")
                steppers = page.locator(".labkit-stepper")
                e2e.wait_until(steppers.count, e2e.STEP_TIMEOUT, "a round stepper on the page")
            except e2e.E2EError as err:
                page.screenshot(path=str(e2e.BUILD / f"marimo-{notebook.stem}-FAILED.png"))
                raise e2e.E2EError(f"{err}\n--- marimo log ---\n{server.log_tail()}") from None
            e2e.page_shot(page, e2e.BUILD / f"marimo-{notebook.stem}.png")
            spec = e2e.SPECS.get(notebook.stem)
            for k in range(steppers.count()):
                s = e2e.StepperDriver.nth(page, k, runs)
                views = e2e.walk_stepper(s, spec, e2e.BUILD, f"marimo-{notebook.stem}-{k}")
                assert len(set(views.values())) >= 2, "every round showed the same thing"
        assert not errors, f"uncaught errors in the page: {errors}"
        # every stepper is back on its first item: the page, run once, is left for the next
        # test that reads this notebook (tests/e2e/pages.py)
        pages.keep(pages.Opened("marimo", notebook, {}, ctx, page, server, runs))
        kept = True
    finally:
        if not kept:
            ctx.close()


def test_the_lab_opens_with_results_rendered(chromium):
    # `./run lab` opens marimo's editor: with the project's auto_instantiate the notebook has
    # already run when the page shows, so the stepper is there without anyone pressing Run.
    notebook = e2e.NOTEBOOKS / "cache_isolation.py"
    ctx = chromium.context()
    try:
        page = ctx.new_page()
        with e2e.marimo_edit(notebook) as server:
            page.goto(server.url, wait_until="domcontentloaded")
            try:
                page.locator(".labkit-stepper").first.wait_for(timeout=e2e.RENDER_TIMEOUT * 1000)
            except Exception as err:
                page.screenshot(path=str(e2e.BUILD / "marimo-edit-FAILED.png"))
                raise e2e.E2EError(f"{err}\n--- marimo log ---\n{server.log_tail()}") from None
            label = page.locator(".labkit-stepper .labkit-label").first.inner_text()
            assert re.search(r"\b1 of \d+", label), label
            page.screenshot(path=str(e2e.BUILD / "marimo-edit-cache_isolation.png"))
    finally:
        ctx.close()


# A view that follows the clicks, not the round: it changes on every step, so only the
# "coming back shows the same thing" rule can catch it. Proves walk_stepper can fail.
_CLICK_COUNTER_APP = """
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

    from labkit.views.stepper import Stepper

    return Stepper, mo


@app.cell
def _(Stepper, mo):
    stepper = mo.ui.anywidget(Stepper(3, ["a", "b", "c"]))
    stepper
    return (stepper,)


@app.cell
def _():
    seen = []
    return (seen,)


@app.cell
def _(mo, seen, stepper):
    seen.append(stepper.value["index"])
    mo.md(f"moves so far: {len(seen)}")
    return


if __name__ == "__main__":
    app.run()
"""


def test_walk_fails_when_the_view_follows_clicks_not_rounds(chromium, tmp_path, monkeypatch):
    # this view never comes back, so the walk fails only once the revisit deadline has passed:
    # a short one here (every other wait keeps its own deadline, the step's re-run included)
    monkeypatch.setattr(e2e, "REVISIT_TIMEOUT", 2.0)
    app = tmp_path / "click_counter.py"
    app.write_text(_CLICK_COUNTER_APP)
    ctx = chromium.context()
    try:
        page = ctx.new_page()
        runs = e2e.MarimoRuns(page)
        with e2e.marimo_run(app) as server:
            page.goto(server.url, wait_until="domcontentloaded")
            e2e.settle_marimo(page, runs, 0, e2e.RENDER_TIMEOUT, "the first run to finish")
            s = e2e.StepperDriver.nth(page, 0, runs)
            with pytest.raises(e2e.E2EError, match="coming back to step .* something else"):
                e2e.walk_stepper(s, None, None, "click-counter")
    finally:
        ctx.close()


def test_a_missing_chromium_fails_with_the_install_hint(monkeypatch, tmp_path):
    monkeypatch.setattr(e2e, "CHROMIUM", tmp_path / "no-chromium")
    c = e2e.Chromium()
    for _ in range(2):  # the first failure is remembered, not retried
        with pytest.raises(e2e.BrowserMissing, match=r"\.ci/install-system\.sh"):
            c.context()


def test_a_context_leaves_no_cookies_or_site_storage_for_the_next_test(chromium, tmp_path):
    # every test's Context shares one profile (its caches outlive a test, benchmarks/_browser.py):
    # what one test's page stored must be gone for the next one's
    import functools
    import http.server
    import threading

    (tmp_path / "index.html").write_text("<title>blank</title>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    read = "() => [localStorage.getItem('left'), document.cookie, sessionStorage.getItem('left')]"
    try:
        first = chromium.context()
        page = first.new_page()
        page.goto(url)
        page.evaluate("() => { localStorage.setItem('left', 'x'); sessionStorage.setItem('left', 'x'); }")
        page.evaluate("() => { document.cookie = 'left=x; max-age=3600'; }")
        assert page.evaluate(read) == ["x", "left=x", "x"]
        first.close()
        second = chromium.context()
        try:
            page = second.new_page()
            page.goto(url)
            assert page.evaluate(read) == [None, "", None]
        finally:
            second.close()
    finally:
        server.shutdown()
