"""Every marimo notebook, served by `marimo run` and driven in a real Chromium.

For each notebook: wait until its first run has finished, then step through the rounds
with the stepper (clicks and arrow keys) and check that what is shown is that round's
content (tests/e2e/browser.py: walk_stepper, SPECS). Screenshots land in build/e2e/.
"""

from __future__ import annotations

import pytest

from e2e import browser as e2e

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def chromium():
    with e2e.shared_chromium() as c:
        yield c


@pytest.mark.parametrize("notebook", e2e.marimo_notebooks(), ids=lambda p: p.name)
def test_marimo_app_steps_through_rounds(chromium, notebook):
    ctx = chromium.context()  # fails with the install hint if Chromium is missing
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
            page.screenshot(path=str(e2e.BUILD / f"marimo-{notebook.stem}.png"), full_page=True)
            spec = e2e.SPECS.get(notebook.stem)
            for k in range(steppers.count()):
                s = e2e.StepperDriver.nth(page, k, runs)
                views = e2e.walk_stepper(s, spec, e2e.BUILD, f"marimo-{notebook.stem}-{k}")
                assert len(set(views.values())) >= 2, "every round showed the same thing"
        assert not errors, f"uncaught errors in the page: {errors}"
    finally:
        ctx.close()
