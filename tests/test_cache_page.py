"""cache_isolation's shared page text: each twin's prose links a glossary term once, at its first use."""

from __future__ import annotations

import re

from labkit.views import cache_page as page

MARIMO = [page.LEAK, page.EVIDENCE, page.YOURS, page.COMPARE, page.REMEMBER]
JUPYTER = [page.LEAK, page.EVIDENCE, page.TEMPTING, page.TWIN_YOURS, page.TWIN_COMPARE, page.TWIN_REMEMBER]


def test_each_twin_links_each_term_once_to_an_entry_of_its_glossary() -> None:
    for prose in (MARIMO, JUPYTER):
        linked = re.findall(r'data-term="(\w+)"', "".join(prose))
        assert len(linked) == len(set(linked)) and {"decisions", "p2p", "patch_size"} <= set(linked), linked
        assert all(f'id="labkit-glossary-{t}"' in page.glossary() for t in linked)


def test_the_link_is_on_the_first_use_in_reading_order() -> None:
    assert 'data-term="p2p"' in page.EVIDENCE and 'data-term="p2p"' not in page.COMPARE  # "protective"
    assert 'data-term="p2p"' not in page.TEMPTING + page.TWIN_COMPARE  # the twin reads EVIDENCE first too
    assert 'data-term="patch_size"' in page.COMPARE and "`1f/1h/2l`" in page.COMPARE  # code is never linked


def test_download_links_carry_the_files_bytes() -> None:
    import base64
    import re

    import polars as pl

    files = [page.Download("r-steps.csv", "text/csv", "steps · CSV", pl.DataFrame({"a": [1]}).write_csv().encode())]
    links = re.findall(r'download="([^"]+)" href="data:([^;]+);base64,([^"]+)"', page.download_links_html(files))
    assert links == [("r-steps.csv", "text/csv", base64.b64encode(b"a\n1\n").decode())]


def test_ask_real_model_says_plainly_why_a_model_cannot_be_used(monkeypatch) -> None:
    monkeypatch.setenv("LABKIT_MODEL", "openai/gpt-4o-mini")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    asked = page.ask_real_model()
    assert asked.model == "openai/gpt-4o-mini" and asked.trace is None and asked.problem
    assert page.real_model_md(asked).startswith("**openai/gpt-4o-mini cannot be used here:**")
    assert page.real_model_lesson_md(asked) == "**no verified correction, so no lesson.**"


def test_each_storyline_runs_with_its_ledger_and_its_downloads() -> None:
    import io

    import polars as pl

    from labkit.experiments import cache_isolation as cache_case

    suite = cache_case.case().suite
    assert set(page.storyline_options().values()) == set(cache_case.BRANCHES)
    run = page.run_storyline("tempting")
    files = {f.filename: f for f in page.downloads(run.trace, suite, run.ledger)}
    assert set(files) == {f"cache-tempting-{w}.{x}" for w in ("steps", "ledger") for x in ("csv", "parquet", "json")}
    steps = pl.read_parquet(io.BytesIO(files["cache-tempting-steps.parquet"].data))
    assert steps["decision"].to_list()[:2] == ["reflect", "roll back"] and len(steps) == len(run.trace.rounds) + 1
    ledger = pl.read_csv(io.BytesIO(files["cache-tempting-ledger.csv"].data))
    assert len(ledger) == len(run.ledger) > 0
