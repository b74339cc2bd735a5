"""A glossary term's first use is a link: clicking it opens the glossary at the entry.
(On the way, on the same page: no table of lessons runs past its output, in either front end.)

In the prose (light DOM) and inside a step card (the stepper's shadow DOM in marimo, which a
plain #fragment link cannot leave): labkit/views/stepper.js handles both clicks.
"""

from __future__ import annotations

from typing import Any

import pytest

from e2e import browser as e2e
from e2e import pages

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

_SHOWN = """(entry) => {
  const box = entry.closest('details');
  const r = entry.getBoundingClientRect();
  return {open: !!box && box.open, visible: r.top >= 0 && r.bottom <= innerHeight && r.height > 0};
}"""


# Tables (views.tables.frame_html) wider than the output that holds them: a clipped column.
_WIDE_TABLES = """() => [...document.querySelectorAll('table.labkit-table')]
  .filter(t => t.getBoundingClientRect().width > t.parentElement.getBoundingClientRect().width + 1)
  .map(t => t.querySelector('th').textContent + ' ' + Math.round(t.getBoundingClientRect().width) + ' > ' + Math.round(t.parentElement.getBoundingClientRect().width))"""


# A link inside the stepper's shadow DOM gets none of the page's link styles: stepper.css gives it one.
_LOOKS_LIKE_A_LINK = """(a) => getComputedStyle(a).color !== getComputedStyle(a.parentElement).color
  && getComputedStyle(a).textDecorationLine.includes('underline')"""


def click_opens_entry(page: Any, link: Any, term: str) -> None:
    """Close the glossary, scroll to the top, click `link`: the entry for `term` is open and on screen."""
    entry = page.locator(f"#labkit-glossary-{term}")
    entry.evaluate("(e) => { e.closest('details').open = false; }")
    link.scroll_into_view_if_needed()  # the link on screen, the entry (far below, closed) not
    assert entry.evaluate(_SHOWN) == {"open": False, "visible": False}
    link.click()
    e2e.wait_until(lambda: entry.evaluate(_SHOWN)["visible"] or None, 10, f"the {term} entry on screen")
    assert entry.evaluate(_SHOWN) == {"open": True, "visible": True}


def test_a_first_use_link_opens_its_glossary_entry_in_marimo(chromium):
    # the notebook after its first run, or the walk's page (tests/e2e/pages.py)
    with pages.marimo_page(chromium, e2e.NOTEBOOKS / "lessons.py") as opened:
        page = opened.page
        page.locator(".labkit-stepper").first.wait_for(timeout=e2e.STEP_TIMEOUT * 1000)
        assert page.evaluate(_WIDE_TABLES) == []  # no table runs out of its output
        # the prose links each term once, at its first use
        prose = page.locator("a.labkit-term[data-term='error_classes']:not(.labkit-page *)")
        assert prose.count() == 1
        click_opens_entry(page, prose, "error_classes")
        # inside the step card (shadow DOM): the first event is a checkpoint, the second an effect
        page.locator(".labkit-next").first.click()
        card = page.locator(".labkit-page a.labkit-term[data-term='idempotency']")
        card.wait_for(timeout=e2e.STEP_TIMEOUT * 1000)
        assert card.evaluate(_LOOKS_LIKE_A_LINK), "the card's term link looks like plain text"
        card.scroll_into_view_if_needed()
        page.screenshot(path=str(e2e.BUILD / "glossary-lessons-card.png"))
        click_opens_entry(page, card, "idempotency")
        page.screenshot(path=str(e2e.BUILD / "glossary-lessons.png"))


def test_a_first_use_link_opens_its_glossary_entry_in_jupyterlab(chromium):
    notebook = e2e.NOTEBOOKS / "lessons.ipynb"
    # run all (every cell ran, none raised), or the walk's page (tests/e2e/pages.py)
    with pages.jupyter_page(chromium, notebook) as opened:
        page = opened.page
        page.locator(".labkit-stepper").first.wait_for(timeout=e2e.STEP_TIMEOUT * 1000)
        assert page.evaluate(_WIDE_TABLES) == []  # no table runs out of its output (a clipped column)
        prose = page.locator("a.labkit-term[data-term='error_classes']:not(.labkit-page *)")
        assert prose.count() == 1
        click_opens_entry(page, prose, "error_classes")
        page.locator(".labkit-next").first.click()
        card = page.locator(".labkit-page a.labkit-term[data-term='idempotency']")
        card.wait_for(timeout=e2e.STEP_TIMEOUT * 1000)
        click_opens_entry(page, card, "idempotency")
        page.screenshot(path=str(e2e.BUILD / "glossary-jupyter-lessons.png"))
