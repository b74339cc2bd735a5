"""The cache-isolation worked example's prose and "try your own patch" section, built once for both notebooks.

`notebooks/cache_isolation.py` (marimo) and `notebooks/cache_isolation.ipynb` (JupyterLab)
call these and differ only in their widgets. The round itself is run by
`labkit.experiments.cache_isolation.try_patch`; nothing here validates or decides. The first
use of each glossary term in a notebook's prose links to its entry (`labkit.views.glossary`);
the two twins read their prose in a different order, so each gets its own linked copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from labkit.views.glossary import glossary_html, link_first_uses
from labkit.views.report import step_view
from labkit.views.step_card import step_html

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.loop.engine import Trace

__all__ = [
    "COMPARE", "EVIDENCE", "GLOSSARY", "LEAK", "REMEMBER", "TEMPTING", "TWIN_COMPARE", "TWIN_YOURS", "YOURS",
    "YOURS_DIFF_LABEL", "YOURS_HYPOTHESIS_LABEL", "YOURS_PLACEHOLDER", "YOURS_RUNNING", "YOURS_WAIT", "glossary",
    "yours_html",
]  # fmt: skip

GLOSSARY = ("decisions", "f2p", "p2p", "patch_size")

_LEAK = """# User B sees user A's price

A pricing service caches each price after the first fetch. Prices are **per user**,
but the cache key is only `product_id`. Below, Alice reads product `p1` (her price: 100),
then Bob reads the same product (his price: 80). This is run for real, in a subprocess:"""

_EVIDENCE = """Asking the model to "think again" about this code changes nothing: it is the same
model reading the same text. What changes the information state is **external
evidence**: the protected acceptance below — two cross-user *isolation* tests (failing)
and two *same-user hit* tests (protective, counted through the database's query counter).

Pick a storyline for the reflector, then step through the rounds."""

_TEMPTING = """## The tempting branch: disable the cache

The failing isolation tests pass, but the protective same-user-hit tests fail: the decision is *roll back*."""

_COMPARE = """## On the failing tests alone, two patches look identical

The same validator, on all four candidates. Both the composite key and "disable the
cache" pass the isolation tests; only the protective *same-user hit* tests tell them
apart. And the five-changes rewrite also goes green — but nobody can say which of
its changes fixed the leak, so under the patch size rule it is rolled back. (Patch size is
files/hunks/lines: `1f/1h/2l` is one file, one hunk, two changed lines; this case allows
at most 2 hunks and 8 lines.)"""

_REMEMBER = """## What to remember — with its condition

Only a verified correction yields experience, and the lesson keeps the condition under
which it holds. The scripted reflector distils it; provenance points at this run."""

_YOURS = """## Try your own patch

Write a hypothesis and a diff of `pricing.py` (the code is shown in each card's diff; the
cache key is decided on line 28). Your patch goes through **the same protected validator,
patch-size cap and decision** as every round above, and its card shows the outcome the same
way. Editing the tests is not allowed: the validator will say so."""

# Each twin's prose in its reading order, each glossary term linked at its first use.
LEAK, EVIDENCE, YOURS, COMPARE, REMEMBER = link_first_uses([_LEAK, _EVIDENCE, _YOURS, _COMPARE, _REMEMBER], GLOSSARY)
TEMPTING, TWIN_YOURS, TWIN_COMPARE = link_first_uses([_TEMPTING, _YOURS, _COMPARE], GLOSSARY)

YOURS_HYPOTHESIS_LABEL = "Your hypothesis (one falsifiable cause)"
YOURS_PLACEHOLDER = "e.g. the cache key leaves out something that makes a price differ"
YOURS_DIFF_LABEL = "Your patch (a unified diff of pricing.py)"
YOURS_WAIT = "_Write a hypothesis, edit the diff, then press **Test my patch**._"
YOURS_RUNNING = "Testing your patch (a real pytest run)…"


def yours_html(trace: Trace, suite: AcceptanceSuite) -> str:
    """Your round's step card, like any other round's: tests flipped and the loop's decision."""
    return step_html(step_view(trace, 1, suite))


def glossary() -> str:
    """The collapsible glossary the prose (and each step card's words) refer to."""
    return glossary_html(GLOSSARY)
