import re

import pytest

from labkit.views.stepper import Stepper


def test_stepper_clamps_and_steps():
    s = Stepper(3, ["a", "b", "c"])
    assert s.step(1) == 1 and s.step(5) == 2 and s.step(-9) == 0
    s.index = 7
    assert s.index == 2


def test_stepper_rejects_bad_shapes():
    with pytest.raises(ValueError, match="1 pages for 2"):
        Stepper(2, pages=["<p>a</p>"])
    with pytest.raises(ValueError, match="2 labels for 3"):
        Stepper(3, ["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        Stepper(0)


def test_jupyter_browser_swaps_precomputed_cards():
    from test_report import CASE, TwoSteps

    from labkit.grading.validator import Validator
    from labkit.loop.engine import run_loop
    from labkit.views.jupyter import trace_browser

    trace = run_loop(CASE.start, CASE.suite, Validator(), TwoSteps())
    stepper = trace_browser(trace, CASE.suite)
    pages = stepper.pages
    assert len(pages) == 3 and "Start" in pages[0]
    text = re.sub(r"<[^>]+>", "", pages[1])  # a glossary term in the card is a link
    assert "Round 1: roll back" in text and "breaks protective tests" in text
    assert "Round 2: keep" in pages[2]
    assert all("scripted reflector" in p for p in pages)  # simulated reflectors are labelled
    assert stepper.step(1) == 1  # stepping moves the index only; the pages were computed once


def test_pages_render_charts_to_static_svg():
    import altair as alt
    import polars as pl

    from labkit.views.pages import side_by_side

    chart = alt.Chart(pl.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_bar().encode(x="x:O", y="y:Q")
    page = side_by_side(chart, "<p>who moved</p>")
    assert "<svg" in page and "who moved" in page


def test_frame_html_shows_every_row_plainly_with_few_decimals():
    import polars as pl

    from labkit.views.tables import frame_html, rounded

    f = pl.DataFrame({"case": [f"c{i}" for i in range(40)], "rate": [1 / 3] * 40, "n": list(range(40))})
    page = frame_html(f)
    assert page.count("<tr>") == 41  # header + all 40 rows: nothing hidden behind "…"
    assert "0.333<" in page and "0.3333" not in page
    assert '"c1"' not in page and "str" not in page  # no quotes, no dtype row
    assert rounded(f, 2)["rate"][0] == 0.33 and rounded(f)["n"].dtype == pl.Int64


def test_bounded_estimates_say_when_the_data_set_no_limit():
    from labkit.core.stats import Interval
    from labkit.views.tables import bounded

    assert bounded(Interval(0.5, 0.1, 0.9)) == "0.50 [0.10, 0.90]"
    shown = bounded(Interval(8.005, 8.005, 8.005), separated=True)
    assert shown.startswith("unbounded (≥ 8.01") and "[" not in shown
    assert "same value" in bounded(Interval(1.0, 1.0, 1.0))


def test_glossary_explains_the_terms_and_refuses_unknown_ones():
    from labkit.views.glossary import TERMS, glossary_html

    page = glossary_html(["f2p", "patch_size", "beta"])
    assert page.startswith("<details") and "1f/1h/2l" in page and "β̂" in page
    assert "FastChat" not in page and "FastChat" in glossary_html()
    assert all(len(text) > 40 for _, text in TERMS.values())


@pytest.mark.parametrize("ask", ["glossary_html", "link_first_uses", "term_link"])
def test_an_unknown_glossary_key_is_a_specific_error_naming_it_and_the_known_keys(ask):
    from labkit.core.errors import LabkitError, UnknownGlossaryTerm
    from labkit.views import glossary

    calls = {
        "glossary_html": lambda: glossary.glossary_html(["f2p", "nope"]),
        "link_first_uses": lambda: glossary.link_first_uses(["F2P"], ["f2p", "nope"]),
        "term_link": lambda: glossary.term_link("nope", "shown"),
    }
    with pytest.raises(UnknownGlossaryTerm) as caught:
        calls[ask]()
    err = caught.value
    assert isinstance(err, LabkitError) and isinstance(err, KeyError)  # a KeyError handler still sees it
    assert err.unknown == ["nope"] and err.known == sorted(glossary.TERMS)
    assert str(err).startswith("no glossary entry for ['nope']; known keys: ")  # no KeyError quotes
    assert all(k in str(err) for k in glossary.TERMS) and "'f2p'" not in str(err).split("known")[0]


def test_frame_html_lets_only_long_tokens_break_anywhere():
    import polars as pl

    from labkit.views.tables import frame_html

    page = frame_html(
        pl.DataFrame(
            {
                "why": ["tests/test_cache_hits.py::test_repeat_request_is_served_from_cache"],
                "cost": [14.0],
                "status": ["invalid_environment"],
            }
        )
    )
    cells = page.split("<td ")[1:]
    assert "overflow-wrap:anywhere" in cells[0]  # a test id may break: the table fits its notebook
    assert not any("overflow-wrap" in c for c in cells[1:])  # numbers and words stay whole


def test_a_term_links_to_its_glossary_entry_at_its_first_use_only():
    from labkit.views.glossary import link_first_uses

    texts = ["# F2P in a heading\nThe `F2P` bucket in code, then F2P in prose; F2P again.", "Later F2P and F2F."]
    linked = link_first_uses(texts, ["f2p"])
    link = '<a class="labkit-term" href="#labkit-glossary-f2p" data-term="f2p"'
    assert linked[0].count(link) == 1 and linked[1] == texts[1]  # once across all the texts
    assert linked[0].startswith("# F2P in a heading\nThe `F2P` bucket in code, then " + link)
    assert linked[0].endswith(">F2P</a> in prose; F2P again.")
    # a word inside another word, a placeholder or a tag is not a use
    assert link_first_uses(["unfair F2Pish {F2P} <b title='F2P'>x</b>"], ["f2p"]) == [
        "unfair F2Pish {F2P} <b title='F2P'>x</b>"
    ]


def test_the_lessons_prose_links_each_of_its_terms_once_and_shows_their_entries():
    from labkit.views import lessons as page

    prose = "".join(
        [
            page.INTRO,
            page.COVERAGE,
            page.COVERAGE_CAPTION,
            page.TEST_CHANGE,
            page.BOUND,
            page.EFFECTS,
            page.METRICS,
            page.METRICS_CAPTION,
        ]
    )
    for key in page.GLOSSARY:
        assert prose.count(f'data-term="{key}"') == 1, key
        assert f'id="labkit-glossary-{key}"' in page.glossary()
    assert 'data-term="p2p"' in page.COVERAGE and 'data-term="error_classes"' in page.BOUND


def test_a_run_downloads_as_csv_parquet_and_json_with_the_same_rows():
    import io
    import json

    import polars as pl
    from test_report import CASE, TwoSteps

    from labkit.grading.validator import Validator
    from labkit.loop.engine import run_loop
    from labkit.record.ledger import Ledger
    from labkit.views.downloads import encode, steps_frame

    ledger = Ledger()
    trace = run_loop(CASE.start, CASE.suite, Validator(), TwoSteps(), ledger=ledger, run_id="dl")
    steps = steps_frame(trace, CASE.suite)
    assert steps["decision"].to_list() == ["reflect", "roll back", "keep"]
    assert steps["same-user hit passed"].to_list() == ["2/2", "0/2", "2/2"]
    frame = ledger.frame("dl")
    assert pl.read_csv(io.BytesIO(encode(frame, "csv")))["kind"].to_list() == frame["kind"].to_list()
    assert pl.read_parquet(io.BytesIO(encode(steps, "parquet"))).equals(steps)
    assert [r["step"] for r in json.loads(encode(steps, "json"))] == [0, 1, 2]
    with pytest.raises(ValueError, match="unknown download format 'xlsx'"):
        encode(steps, "xlsx")  # type: ignore[arg-type]


def _notebook_glossary(name: str) -> list[str]:
    """The glossary keys notebooks/<name>.py shows (its `glossary_html([...])` call)."""
    import ast
    from pathlib import Path

    src = (Path(__file__).parents[1] / "notebooks" / f"{name}.py").read_text(encoding="utf-8")
    found = re.findall(r"glossary_html\((\[[^\]]*\])\)", src)
    assert len(found) == 1, f"{name}.py shows {len(found)} glossaries"
    return list(ast.literal_eval(found[0]))


def _terms(text: str) -> list[str]:
    return re.findall(r'data-term="([a-z_0-9]+)"', text)


def test_judge_bias_links_the_scoring_rules_beta_and_the_first_token_to_its_glossary():
    from labkit.experiments.judging.judge import Judgment, Swap
    from labkit.experiments.judging.pairs import Pair
    from labkit.views import charts_judge as cj
    from labkit.views import judge_page as page

    shown = _notebook_glossary("judge_bias")
    assert _terms(page.BIAS) == ["scoring_rules"] and "FastChat" in re.sub(r"<[^>]+>", "", page.BIAS)
    _, sim = page.simulate(2.0, 1.0, 0.8, 0.5, 40)
    assert _terms(page.calibration_md(sim, 2.0, 1.0, 0.8, 0.5)) == ["beta"]
    pair = Pair(id="q", question="2+2?", output_1="4", output_2="5", label=1)
    real = Swap(
        pair,
        Judgment(pair_id="q", order="12", pick="A", judge="m", simulated=False, probs=(0.7, 0.2, 0.1), mass=0.26),
        Judgment(pair_id="q", order="21", pick="A", judge="m", simulated=False, probs=(0.6, 0.3, 0.1), mass=0.3),
    )
    card = cj.swap_html(real)
    assert _terms(card) == ["letter_mass"] and "letters held 26% of the" in card
    assert {"scoring_rules", "beta", "letter_mass"} <= set(shown)  # every link has its entry on the page


def test_diminishing_returns_links_net_protective_and_the_stop_rule_to_its_glossary():
    from types import SimpleNamespace

    from labkit.experiments import repair
    from labkit.loop.engine import accounting
    from labkit.views import diminishing as page

    shown = _notebook_glossary("diminishing_returns")
    chapter = accounting.read_rounds(accounting.CHAPTER_EXAMPLE)
    assert _terms(page.paradox_md(accounting.per_round(chapter, resamples=50))) == ["net"]
    assert _terms(page.cases_md(repair.load_cases())) == ["p2p"]
    run = SimpleNamespace(
        strategy="simulated repairer", simulated=True, round_stats=lambda: accounting.round_stats(chapter)
    )
    assert _terms(page.real_md(run, 0, True)) == ["stop_reasons"]  # type: ignore[arg-type]
    assert {"net", "p2p", "stop_reasons"} <= set(shown)


def test_reflection_worth_it_links_its_rollback_words_and_stops_to_its_glossary():
    import polars as pl

    from labkit.views import arms_page as page

    shown = _notebook_glossary("reflection_worth_it")
    calm = pl.DataFrame(
        {
            "arm": ["reflect"],
            "round": [1],
            "wrong → right": [1],
            "right → wrong": [0],
            "stayed right": [2],
            "stayed wrong": [0],
        }
    )
    assert _terms(page.flips_md(calm)) == ["p2p", "decisions"]
    from labkit.views import arms_steps

    ledger, _ = page.real_ledgers()["humaneval"]
    _, pages = arms_steps.case_pages(ledger)
    stops = [p for p in pages if ">stop</a></b>: " in p]  # a job's last round says why it stopped
    assert stops and all(_terms(p) == ["stop_reasons"] for p in stops)
    assert {"p2p", "decisions", "stop_reasons"} <= set(shown)


def test_the_glossary_explains_each_term_the_class_asked_about():
    """Issue #16: scoring rules, F2P buckets, patch-size notation, stop reasons and β̂ each have an
    entry, and each entry is found from the words a notebook uses for it."""
    from labkit.views.glossary import TERMS, link_first_uses

    for words, key in [
        ("FastChat", "scoring_rules"),
        ("LLMBar", "scoring_rules"),
        ("JudgeBench", "scoring_rules"),
        ("F2P", "f2p"),
        ("1f/1h/2l", "patch_size"),
        ("stop rule", "stop_reasons"),
        ("report unknowns", "stop_reasons"),
        ("β̂", "beta"),
    ]:
        assert key in TERMS, key
        assert _terms(link_first_uses([f"the {words} here"], [key])[0]) == [key], words


def test_round_pages_draw_each_rounds_transition_counts_without_a_chart_renderer():
    import re

    from labkit.loop.engine import accounting
    from labkit.views import charts_rounds
    from labkit.views import rounds_page as rounds

    chapter = accounting.read_rounds(accounting.CHAPTER_EXAMPLE)
    transitions = accounting.transitions(chapter)
    pages = rounds.chapter_pages(chapter)
    assert len(pages) == int(transitions["round"].max())  # type: ignore[arg-type]
    for r, page in enumerate(pages, start=1):
        want = {
            f"{b} → {a}: {n}"
            for b, a, n in transitions.filter(transitions["round"] == r).select("before", "after", "count").iter_rows()
        }
        assert want <= set(re.findall(r"<title>([^<]*)</title>", page))
        assert page.count("<svg") == 1 and "round " + str(r) in charts_rounds.transitions_svg(transitions, r)


def test_tables_have_human_headers_whole_numbers_and_aligned_dashes():
    import polars as pl

    from labkit.core.stats import Interval
    from labkit.views.tables import estimate, frame_html

    page = frame_html(pl.DataFrame({"fix_rate": [0.25, None], "cost": [3.0, 4.0], "name": ["a", "b"]}))
    heads = re.findall(r"<th [^>]*>([^<]*)</th>", page)
    assert heads == ["fix rate", "cost units", "name"]  # snake_case never reaches a header; cost has its unit
    assert ">3<" in page and "3.000" not in page  # a whole-number float column prints integers
    cells = page.split("<td ")[1:]
    dash = next(c for c in cells if ">—<" in c)
    assert "text-align:right" in dash  # "—" lines up with the numbers of its column
    assert "text-align:right" not in cells[2]  # words stay left
    assert (
        estimate(Interval(0.0, 0.0, 0.0)) == "0.00" and estimate(Interval(0.5, 0.25, 0.75)) == "0.50 [0.25,\u00a00.75]"
    )


def test_the_stop_text_never_projects_a_round_the_example_does_not_have():
    from labkit.loop.engine import accounting
    from labkit.views.diminishing import stop_md

    stats = accounting.round_stats(accounting.read_rounds(accounting.CHAPTER_EXAMPLE))
    low = stop_md(-5, True, stats)
    assert "round 4 this example does not have" in low and "Round 3 ran before anything stopped it" in low
    assert "It stopped **before round 3**" not in low  # the paragraph agrees with the rule
    default = stop_md(0, True, stats)
    assert "It stopped **before round 3** ran" in default and "-3.2" in default
