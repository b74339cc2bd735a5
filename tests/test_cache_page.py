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


def _speed(**changes: object):
    import dataclasses

    from labkit.experiments import smollm2_speed

    return dataclasses.replace(smollm2_speed.load(), **changes)


def test_the_real_model_estimate_is_computed_from_the_recorded_speeds() -> None:
    from labkit.experiments import smollm2_speed

    s = smollm2_speed.load()
    text = page.real_model_expectation()
    assert f"{s.prompt_tokens} tokens, was read at {s.prompt_per_second:g} tokens/s" in text
    assert f"{s.reply_tokens} tokens, written at {s.reply_per_second:g} tokens/s" in text
    assert f"about {s.round_seconds:.0f} s per round" in text and f"`{s.command}`" in text
    # slow: the 60 s limit cuts each reply, and the page says after how many tokens
    slow = page.real_model_expectation(
        _speed(prompt_tokens=800, prompt_per_second=20.0, reply_tokens=300, reply_per_second=5.0, startup_seconds=40.0)
    )
    assert "about 100 s per round**, more than the 60 s limit" in slow
    assert "stopped after about 100 of its 300 tokens" in slow and "expect about 160 s in all" in slow
    # fast: every reply arrives whole
    fast = page.real_model_expectation(
        _speed(prompt_tokens=800, prompt_per_second=200.0, reply_tokens=300, reply_per_second=30.0, startup_seconds=5.0)
    )
    assert "about 14 s per round**: expect about 33 s in all" in fast


def test_the_button_names_the_model_and_for_smollm2_how_long_it_takes_here(monkeypatch) -> None:
    from labkit.experiments import smollm2_speed
    from labkit.loop.strategies.reflector import ModelReflector

    monkeypatch.delenv("LABKIT_MODEL", raising=False)
    s = smollm2_speed.load()
    minutes = max(1, round((s.startup_seconds + 2 * min(s.round_seconds, ModelReflector.timeout)) / 60))
    assert page.real_model_button() == f"{page.REAL_MODEL_BUTTON} (SmolLM2: about {minutes} min here)"
    monkeypatch.setenv("LABKIT_MODEL", "openai/gpt-4o-mini")
    assert page.real_model_button() == "Ask openai/gpt-4o-mini to reflect instead"
