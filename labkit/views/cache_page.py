"""The cache-isolation worked example's "try your own patch" section, built once for both notebooks.

`notebooks/cache_isolation.py` (marimo) and `notebooks/cache_isolation.ipynb` (JupyterLab)
call these and differ only in their widgets. The round itself is run by
`labkit.experiments.cache_isolation.try_patch`; nothing here validates or decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from labkit.views.report import step_view
from labkit.views.step_card import step_html

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.loop.engine import Trace

__all__ = [
    "YOURS", "YOURS_DIFF_LABEL", "YOURS_HYPOTHESIS_LABEL", "YOURS_PLACEHOLDER", "YOURS_RUNNING", "YOURS_WAIT", "yours_html",
]  # fmt: skip

YOURS = """## Try your own patch

Write a hypothesis and a diff of `pricing.py` (the code is shown in each card's diff; the
cache key is decided on line 28). Your patch goes through **the same protected validator,
patch-size cap and decision** as every round above, and its card shows the outcome the same
way. Editing the tests is not allowed: the validator will say so."""

YOURS_HYPOTHESIS_LABEL = "Your hypothesis (one falsifiable cause)"
YOURS_PLACEHOLDER = "e.g. the cache key leaves out something that makes a price differ"
YOURS_DIFF_LABEL = "Your patch (a unified diff of pricing.py)"
YOURS_WAIT = "_Write a hypothesis, edit the diff, then press **Test my patch**._"
YOURS_RUNNING = "Testing your patch (a real pytest run)…"


def yours_html(trace: Trace, suite: AcceptanceSuite) -> str:
    """Your round's step card, like any other round's: tests flipped and the loop's decision."""
    return step_html(step_view(trace, 1, suite))
