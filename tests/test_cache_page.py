"""cache_isolation's shared page text: each twin's prose links a glossary term once, at its first use."""

from __future__ import annotations

import re

from labkit.views import cache_page as page

MARIMO = [page.LEAK, page.EVIDENCE, page.YOURS, page.COMPARE, page.REMEMBER]
JUPYTER = [page.TEMPTING, page.TWIN_YOURS, page.TWIN_COMPARE]


def test_each_twin_links_each_term_once_to_an_entry_of_its_glossary() -> None:
    for prose in (MARIMO, JUPYTER):
        linked = re.findall(r'data-term="(\w+)"', "".join(prose))
        assert len(linked) == len(set(linked)) and {"decisions", "p2p", "patch_size"} <= set(linked), linked
        assert all(f'id="labkit-glossary-{t}"' in page.glossary() for t in linked)


def test_the_link_is_on_the_first_use_in_reading_order() -> None:
    assert 'data-term="p2p"' in page.EVIDENCE and 'data-term="p2p"' not in page.COMPARE  # "protective"
    assert 'data-term="p2p"' in page.TEMPTING and 'data-term="p2p"' not in page.TWIN_COMPARE
    assert 'data-term="patch_size"' in page.COMPARE and "`1f/1h/2l`" in page.COMPARE  # code is never linked
