"""cache_isolation in a real Chromium, as a class would use it beyond stepping:

with a real provider named in LABKIT_MODEL and no key, the scripted storylines stay scripted
(the lesson is shown, nothing fails) and only "ask a real model" reads the setting; and a
student's own hypothesis and diff come back as a step card with the loop's decision — in
marimo and in the JupyterLab twin (ipywidgets: a Textarea, a Button, an Output).
"""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Error as PlaywrightError

from e2e import browser as e2e
from e2e import pages

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

NOTEBOOK = e2e.NOTEBOOKS / "cache_isolation.py"
TWIN = e2e.NOTEBOOKS / "cache_isolation.ipynb"
HYPOTHESIS = "the cache key leaves out the user, so users share one entry"
COMPOSITE = (e2e.ROOT / "data" / "cache_isolation" / "patches" / "composite_key.diff").read_text()
BROKEN = COMPOSITE.replace("+        return (user_id, product_id)", "+        return (user_id, product_id")
BROKEN_HYPOTHESIS = "the key needs the user, typed in a hurry"
assert BROKEN != COMPOSITE


def test_scripted_with_labkit_model_set_and_try_your_own_patch(chromium, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "OPENAI_API_KEY" not in os.environ
    ctx = chromium.context()
    try:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        runs = e2e.MarimoRuns(page)
        with e2e.marimo_run(NOTEBOOK, env={"LABKIT_MODEL": "openai/gpt-4o-mini"}) as server:
            page.goto(server.url, wait_until="domcontentloaded")
            try:
                e2e.settle_marimo(page, runs, 0, e2e.RENDER_TIMEOUT, "the first run to finish")
                # the scripted storyline ran as scripted, kept the fix and taught its lesson
                stepper = e2e.StepperDriver.nth(page, 0, runs)
                assert "scripted reflector" in stepper.view()
                page.get_by_text("Multi-tenant cache keys must cover the tenant boundary.").wait_for()
                assert page.get_by_text("no verified correction").count() == 0

                # only the real-model button reads LABKIT_MODEL: it names that model and says
                # why it cannot be used
                mark = runs.seq
                page.get_by_role("button", name="Ask openai/gpt-4o-mini to reflect instead").click()
                e2e.settle_marimo(page, runs, mark, e2e.STEP_TIMEOUT, "the real-model cell")
                page.get_by_text("openai/gpt-4o-mini cannot be used here").wait_for()

                # try your own patch: hypothesis + the composite-key diff -> a "keep" card
                page.get_by_placeholder("e.g. the cache key leaves out").fill(
                    "the cache key leaves out the user, so users share one entry"
                )
                editor = page.locator(".cm-content").last
                editor.click()
                page.keyboard.press("Control+A")
                page.keyboard.insert_text(COMPOSITE)
                mark = runs.seq
                page.get_by_role("button", name="Test my patch").click()
                e2e.settle_marimo(page, runs, mark, e2e.STEP_TIMEOUT, "your patch to be tested")
                card = page.locator(".labkit-step", has_text="the cache key leaves out the user")
                card.wait_for()
                text = card.inner_text()
                assert "Round 1: keep" in text and "2 now pass" in text, text

                # a patch with a SyntaxError: its card shows Python's own error line, not only "error" rows
                editor.click()
                page.keyboard.press("Control+A")
                page.keyboard.insert_text(BROKEN)
                page.get_by_placeholder("e.g. the cache key leaves out").fill(BROKEN_HYPOTHESIS)
                mark = runs.seq
                page.get_by_role("button", name="Test my patch").click()
                e2e.settle_marimo(page, runs, mark, e2e.STEP_TIMEOUT, "the broken patch to be tested")
                card = page.locator(".labkit-step", has_text=BROKEN_HYPOTHESIS)
                card.wait_for()
                error = card.locator(".labkit-import-error")
                error.wait_for()
                said = error.inner_text()
                assert "does not import" in said and "SyntaxError: '(' was never closed" in said, said
                assert "return (user_id, product_id" in said, said
                error.scroll_into_view_if_needed()
                page.screenshot(path=str(e2e.BUILD / "cache-isolation-syntax-error.png"))
            except Exception as err:
                page.screenshot(path=str(e2e.BUILD / "cache-isolation-class-FAILED.png"), full_page=True)
                raise e2e.E2EError(f"{err}\n--- marimo log ---\n{server.log_tail()}") from None
            e2e.page_shot(page, e2e.BUILD / "cache-isolation-your-patch.png")
        assert not errors, f"uncaught errors in the page: {errors}"
    finally:
        ctx.close()


def test_jupyterlab_try_your_own_patch(chromium):
    with pages.jupyter_page(chromium, TWIN) as opened:  # run all, or the walk's page (tests/e2e/pages.py)
        page, server = opened.page, opened.server
        try:
            # the twin opens on the leak, as the marimo notebook does: Bob is served Alice's price
            page.get_by_role("heading", name="User B sees user A's price").wait_for()
            leak = page.locator("table.labkit-table", has_text="price served").first
            leak.scroll_into_view_if_needed()
            rows = [
                [(td.text_content() or "").strip() for td in r.locator("td").all()]
                for r in leak.locator("tbody tr").all()
            ]
            assert rows == [["alice", "p1", "100", "100"], ["bob", "p1", "100", "80"]], rows
            page.get_by_text("Tests passing per step").first.wait_for()  # the scores chart (SVG)
            page.get_by_role("heading", name="The wrong generalisation, measured").wait_for()

            page.get_by_text("Write a hypothesis, edit the diff, then press").wait_for()
            diff = page.locator(".labkit-diff textarea")
            assert "edit this line: what must the key contain?" in diff.input_value()  # the template
            page.get_by_placeholder("e.g. the cache key leaves out").fill(HYPOTHESIS)
            diff.fill(COMPOSITE)
            page.get_by_role("button", name="Test my patch").click()
            card = page.locator(".labkit-step", has_text=HYPOTHESIS)
            card.wait_for(timeout=e2e.STEP_TIMEOUT * 1000)
            text = card.inner_text()
            assert "Round 1: keep" in text and "2 now pass" in text, text
            page.get_by_role("button", name="Test my patch").scroll_into_view_if_needed()
            page.screenshot(path=str(e2e.BUILD / "cache-isolation-your-patch-jupyter.png"))
        except Exception as err:
            page.screenshot(path=str(e2e.BUILD / "cache-isolation-your-patch-jupyter-FAILED.png"))
            raise e2e.E2EError(f"{err}\n--- jupyter log ---\n{server.log_tail()}") from None
        assert not opened.errors, f"uncaught errors in the page: {opened.errors}"


_SET_KERNEL_ENV = """async (code) => {
  const kernel = jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await kernel.requestExecute({code}).done;
}"""


def test_jupyterlab_storyline_picker_downloads_and_real_model(chromium):
    """The picker swaps which precomputed run is shown (stepper and downloads); a download is that
    run's file; "ask a real model" is not called on open, and with a keyless provider it says why."""
    import io
    from pathlib import Path

    import polars as pl

    with pages.jupyter_page(chromium, TWIN) as opened:  # run all, or the walk's page (tests/e2e/pages.py)
        page, server = opened.page, opened.server
        try:
            # the main storyline: 2 steps, its first round keeps the composite key
            first = e2e.StepperDriver.nth(page, 0)
            assert first.label()[:2] == (1, 2), first.label()
            first.click("next")
            page.locator(".labkit-page h3", has_text="Round 1: keep").first.wait_for()
            main_round = first.root.locator("xpath=following-sibling::*[1]").inner_text()
            assert page.locator("a.labkit-download[download='cache-main-steps.csv']").count() == 1

            # pick another storyline: the stepper is that run's (3 steps, opens on its start)
            page.get_by_text(cache_text("tempting"), exact=True).click()
            shown = e2e.StepperDriver.nth(page, 0)

            def swapped() -> bool:  # the old stepper's element is detached while the new one attaches
                try:
                    return shown.label()[:2] == (1, 3)
                except (e2e.E2EError, PlaywrightError):
                    return False

            e2e.wait_until(swapped, e2e.STEP_TIMEOUT, "the tempting run's stepper")
            shown.click("next")
            page.locator(".labkit-page h3", has_text="Round 1: roll back").first.wait_for()
            tempting_round = shown.root.locator("xpath=following-sibling::*[1]").inner_text()
            assert "Round 1: roll back" in tempting_round and tempting_round != main_round

            # ... and its downloads: a real file with that run's steps
            link = page.locator("a.labkit-download[download='cache-tempting-steps.csv']")
            assert page.locator("a.labkit-download[download='cache-main-steps.csv']").count() == 0
            page.get_by_text(cache_text("tempting"), exact=True).scroll_into_view_if_needed()
            page.screenshot(path=str(e2e.BUILD / "cache-isolation-storylines-jupyter.png"))
            link.scroll_into_view_if_needed()
            page.screenshot(path=str(e2e.BUILD / "cache-isolation-downloads-jupyter.png"))
            with page.expect_download() as got:
                link.click()
            steps = pl.read_csv(io.BytesIO(Path(got.value.path()).read_bytes()))
            assert steps["run_id"].unique().to_list() == ["cache-tempting"], steps
            assert steps["decision"].to_list()[:2] == ["reflect", "roll back"], steps

            # "ask a real model": nothing was asked on open; with a keyless provider it says why
            ask = page.get_by_role("button", name="Ask a real model to reflect instead")
            assert page.get_by_text("cannot be used here").count() == 0
            page.evaluate(
                _SET_KERNEL_ENV,
                "import os; os.environ['LABKIT_MODEL'] = 'openai/gpt-4o-mini'; os.environ.pop('OPENAI_API_KEY', None)",
            )
            ask.click()
            page.get_by_text("openai/gpt-4o-mini cannot be used here").wait_for(timeout=e2e.STEP_TIMEOUT * 1000)
            ask.scroll_into_view_if_needed()
            page.screenshot(path=str(e2e.BUILD / "cache-isolation-real-model-jupyter.png"))
        except Exception as err:
            page.screenshot(path=str(e2e.BUILD / "cache-isolation-storylines-jupyter-FAILED.png"))
            raise e2e.E2EError(f"{err}\n--- jupyter log ---\n{server.log_tail()}") from None
        assert not opened.errors, f"uncaught errors in the page: {opened.errors}"


def cache_text(branch: str) -> str:
    from labkit.experiments.cache_isolation import BRANCHES

    return BRANCHES[branch]
