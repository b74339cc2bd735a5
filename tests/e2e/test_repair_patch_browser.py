"""Try your own patch on a repair case, in a real Chromium, in marimo and in JupyterLab:

pick a case, write a hypothesis, put a diff in the editor, press "Test my patch": the step
card shows the loop's decision (tests flipped) and, after it, the hidden tests' score. In
marimo a malformed diff then comes back as "keep investigating" with the parser's words.
"""

from __future__ import annotations

import pytest

from e2e import browser as e2e
from e2e import pages

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

CASE = "flatten"
LABEL = "flatten: strings are atoms, not sequences"
FIX = (e2e.ROOT / "data" / "repair_cases" / CASE / "patches" / "fix.diff").read_text()
HYPOTHESIS = "hasattr __iter__ treats a string as a sequence, so strings get split"
PLACEHOLDER = "e.g. the condition treats some inputs as the wrong kind"


def _check_card(page) -> None:
    card = page.locator(".labkit-step", has_text=HYPOTHESIS)
    card.wait_for()
    text = card.inner_text()
    assert "Round 1: keep" in text and "1 now pass (test_strings_are_atoms)" in text, text
    hidden = page.locator(".labkit-hidden").inner_text()
    assert "after the decision: all pass (correct)" in hidden, hidden


def test_marimo_try_your_own_patch_on_a_repair_case(chromium):
    # the notebook after its first run, or the walk's page (tests/e2e/pages.py)
    with pages.marimo_page(chromium, e2e.NOTEBOOKS / "diminishing_returns.py") as opened:
        page, server, runs = opened.page, opened.server, opened.runs
        assert runs is not None
        try:
            mark = runs.seq
            page.locator("select").filter(has_text=LABEL).select_option(label=LABEL)
            e2e.settle_marimo(page, runs, mark, e2e.STEP_TIMEOUT, "the case to be shown")
            page.get_by_text("Visible tests failing now: test_strings_are_atoms").first.wait_for()
            page.get_by_placeholder(PLACEHOLDER).fill(HYPOTHESIS)
            editor = page.locator(".cm-content").last
            assert "# edit here" in editor.inner_text()  # prefilled with the template
            editor.click()
            page.keyboard.press("Control+A")
            page.keyboard.insert_text(FIX)
            mark = runs.seq
            page.get_by_role("button", name="Test my patch").click()
            e2e.settle_marimo(page, runs, mark, e2e.STEP_TIMEOUT, "your patch to be tested")
            _check_card(page)
            page.locator(".labkit-step").locator("xpath=..").screenshot(
                path=str(e2e.BUILD / "diminishing-your-patch-marimo.png")
            )

            # a malformed diff: the card names the parser's error, nothing crashes
            editor.click()
            page.keyboard.press("Control+A")
            page.keyboard.insert_text("return isinstance(x, (list, tuple))")
            mark = runs.seq
            page.get_by_role("button", name="Test my patch").click()
            e2e.settle_marimo(page, runs, mark, e2e.STEP_TIMEOUT, "the malformed diff's round")
            card = page.locator(".labkit-step", has_text="patch does not apply")
            card.wait_for()
            assert "not a unified diff" in card.inner_text()
        except Exception as err:
            page.screenshot(path=str(e2e.BUILD / "diminishing-your-patch-marimo-FAILED.png"), full_page=True)
            raise e2e.E2EError(f"{err}\n--- marimo log ---\n{server.log_tail()}") from None
        assert not opened.errors, f"uncaught errors in the page: {opened.errors}"


def test_jupyterlab_try_your_own_patch_on_a_repair_case(chromium):
    notebook = e2e.NOTEBOOKS / "diminishing_returns.ipynb"
    with pages.jupyter_page(chromium, notebook) as opened:  # run all, or the walk's page (tests/e2e/pages.py)
        page, server = opened.page, opened.server
        try:
            page.locator(".widget-dropdown select").select_option(label=LABEL)
            page.get_by_text("Visible tests failing now: test_strings_are_atoms").first.wait_for()
            diff = page.locator(".labkit-diff textarea")
            e2e.wait_until(lambda: "flatten.py" in diff.input_value(), e2e.STEP_TIMEOUT, "the flatten template")
            assert "# edit here" in diff.input_value()
            page.get_by_placeholder(PLACEHOLDER).fill(HYPOTHESIS)
            diff.fill(FIX)
            page.get_by_role("button", name="Test my patch").click()
            _check_card(page)
            page.locator(".labkit-hidden").scroll_into_view_if_needed()
            page.screenshot(path=str(e2e.BUILD / "diminishing-your-patch-jupyter.png"))
        except Exception as err:
            page.screenshot(path=str(e2e.BUILD / "diminishing-your-patch-jupyter-FAILED.png"))
            raise e2e.E2EError(f"{err}\n--- jupyter log ---\n{server.log_tail()}") from None
        assert not opened.errors, f"uncaught errors in the page: {opened.errors}"
