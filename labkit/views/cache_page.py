"""The cache-isolation worked example's prose and "try your own patch" section, built once for both notebooks.

`notebooks/cache_isolation.py` (marimo) and `notebooks/cache_isolation.ipynb` (JupyterLab)
call these and differ only in their widgets. The round itself is run by
`labkit.experiments.cache_isolation.try_patch`; nothing here validates or decides. The first
use of each glossary term in a notebook's prose links to its entry (`labkit.views.glossary`);
the two twins read their prose in a different order, so each gets its own linked copy.
"""

from __future__ import annotations

import base64
import html
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, cast

from labkit.experiments import cache_isolation as cache_case
from labkit.views.downloads import FORMATS, encode, steps_frame
from labkit.views.glossary import glossary_html, link_first_uses
from labkit.views.report import step_view
from labkit.views.step_card import step_html

if TYPE_CHECKING:
    import polars as pl

    from labkit.experiments.evidence_card import Card
    from labkit.experiments.smollm2_speed import Speed
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.loop.engine import Trace
    from labkit.loop.engine.reflection import Experience
    from labkit.views.downloads import Format

__all__ = [
    "COMPARE", "DOWNLOAD_INTRO", "Download", "EVIDENCE", "GLOSSARY", "LEAK", "REAL_MODEL", "REAL_MODEL_BUTTON",
    "REAL_MODEL_ROUNDS", "REAL_MODEL_RUNNING", "REMEMBER", "RealModelRun", "STORYLINE_LABEL", "StorylineRun", "TEMPTING",
    "TWIN_COMPARE", "TWIN_REMEMBER", "TWIN_YOURS", "YOURS", "YOURS_DIFF_LABEL", "YOURS_HYPOTHESIS_LABEL", "YOURS_PLACEHOLDER",
    "YOURS_RUNNING", "YOURS_WAIT", "ask_real_model", "chapter_table_html", "download_links_html", "downloads", "glossary", "leak_html",
    "lesson_md", "real_model_button", "real_model_expectation", "real_model_lesson_md", "real_model_md", "run_storyline", "scores_title", "storyline_options",
    "wrong_generalisation_md", "yours_html",
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
# the JupyterLab twin opens on the same leak and evidence, then the tempting branch before the rest
TEMPTING, TWIN_YOURS, TWIN_COMPARE, TWIN_REMEMBER = link_first_uses(
    [_LEAK, _EVIDENCE, _TEMPTING, _YOURS, _COMPARE, _REMEMBER], GLOSSARY
)[2:]

YOURS_HYPOTHESIS_LABEL = "Your hypothesis (one falsifiable cause)"
YOURS_PLACEHOLDER = "e.g. the cache key leaves out something that makes a price differ"
YOURS_DIFF_LABEL = "Your patch (a unified diff of pricing.py)"
YOURS_WAIT = "_Write a hypothesis, edit the diff, then press **Test my patch**._"
YOURS_RUNNING = "Testing your patch (a real pytest run)…"


def leak_html() -> str:
    """The leak, run for real in a subprocess: who asked, the price served, their own price."""
    import polars as pl

    from labkit.views.tables import frame_html

    rows = cache_case.leak_demo()
    return frame_html(pl.DataFrame(rows, schema=["user", "product", "price served", "own price"], orient="row"))


def chapter_table_html() -> str:
    """The chapter's table, read from its recording (data/cache_isolation/compare.json) and labelled
    by it; tests/test_cache_case.py measures it again with the engine and asserts the same rows."""
    from labkit.views.tables import frame_html

    rec = cache_case.compare_record()
    source = f"<p><i>Source: {rec['label']} (<code>{rec['command']}</code>; the suite re-measures it).</i></p>"
    return frame_html(cache_case.recorded_table()) + source


def scores_title() -> str:
    return "Tests passing per step (steps counted as in the stepper)"


def lesson_md(learned: Experience | None) -> str:
    """What to remember from a run (`cache_isolation.lesson(trace)`): the lesson with its condition,
    or that there is none."""
    if learned is None:
        return f"**{cache_case.NO_LESSON}**: this run did not end on a kept, verified fix."
    fields = [("condition", learned.condition), ("failure mode", learned.failure_mode), ("signal", learned.signal),
              ("strategy", learned.strategy), ("counter-example", learned.counterexample), ("source", learned.source),
              ("version", learned.version)]  # fmt: skip
    rows = "\n".join(f"| {k} | {v} |" for k, v in fields)
    return f"**{learned.lesson}**\n\n| field | value |\n|:---|:---|\n{rows}"


def wrong_generalisation_md() -> str:
    """The wrong generalisation ("put user_id in every cache key"), measured: read from the memory
    notebook's recording of the real run (data/memory/counterexample.json), so the page opens fast."""
    from labkit.views.memory_pages import counterexample_md, counterexample_run

    return "### The wrong generalisation, measured\n\n" + counterexample_md(counterexample_run())


def yours_html(trace: Trace, suite: AcceptanceSuite) -> str:
    """Your round's step card, like any other round's: tests flipped and the loop's decision."""
    return step_html(step_view(trace, 1, suite))


def glossary() -> str:
    """The collapsible glossary the prose (and each step card's words) refer to."""
    return glossary_html(GLOSSARY)


# --- the storyline picker: which scripted run the stepper shows -------------------------------

STORYLINE_LABEL = "Reflector storyline (scripted: authored replies, whatever LABKIT_MODEL says)"


def storyline_options() -> dict[str, str]:
    """The picker's choices: what each scripted storyline does -> its branch name."""
    return {text: key for key, text in cache_case.BRANCHES.items()}


@dataclass(frozen=True)
class StorylineRun:
    """One scripted storyline, run once: its trace, its ledger rows and its evidence card."""

    trace: Trace
    ledger: pl.DataFrame
    card: Card  # derived from the run's ledger (labkit.experiments.evidence_card)


@cache  # one run per storyline per process: the evidence card and the stepper show the same run
def run_storyline(branch: str) -> StorylineRun:
    """Run the loop on one scripted storyline (a real pytest per candidate), with its own ledger."""
    from labkit.experiments.evidence_card import derive
    from labkit.record.ledger import Ledger

    ledger = Ledger()
    trace = cache_case.run(branch, ledger=ledger)
    return StorylineRun(trace, ledger.frame(trace.run_id), derive(ledger, [trace.run_id]))


# --- take the run home -------------------------------------------------------------------------

DOWNLOAD_INTRO = "**Download this run** (its steps and its ledger):"


@dataclass(frozen=True)
class Download:
    """One file a student can take home: what is in it, and its bytes."""

    filename: str
    mimetype: str
    label: str
    data: bytes


def downloads(trace: Trace, suite: AcceptanceSuite, ledger: pl.DataFrame) -> list[Download]:
    """The run's steps (as the cards show them) and its ledger rows, in every download format."""
    frames = (("steps", steps_frame(trace, suite)), ("ledger", ledger))
    return [
        Download(
            f"{trace.run_id}-{what}.{fmt}",
            mime,
            f"{what} · {fmt.upper()}",
            encode(frame, cast("Format", fmt)),
        )
        for what, frame in frames
        for fmt, mime in FORMATS.items()
    ]


def download_links_html(files: list[Download]) -> str:
    """The files as self-contained links (data URIs), for a notebook without a download widget."""
    links = " ".join(
        f'<a class="labkit-download" style="{_CHIP}" download="{html.escape(f.filename)}" '
        f'href="data:{f.mimetype};base64,{base64.b64encode(f.data).decode()}">⤓ {html.escape(f.label)}</a>'
        for f in files
    )
    return (
        '<div class="labkit-downloads" style="line-height:2.2"><b>Download this run</b> '
        f"(its steps and its ledger):<br>{links}</div>"
    )


_CHIP = (
    "display:inline-block;margin:0 0.3em 0.3em 0;padding:0 0.6em;border:1px solid #1565c0;"
    "border-radius:3px;color:#1565c0;text-decoration:none;line-height:1.8;white-space:nowrap"
)


# --- ask a real model: the only control that reads LABKIT_MODEL --------------------------------

REAL_MODEL = """## Ask a real model

The storylines above are **scripted**. Press the button to let a real model write the
reflection record and the diff — by default SmolLM2-135M, in-process and offline
(`LABKIT_MODEL` picks another). A tiny model mostly fails here, and that is the point:
the loop does not trust the reflector, every bad reply is an explained round. Each round's
card shows the model's reply raw, exactly as received — and a reply stopped at the time
limit shows what had arrived by then."""
REAL_MODEL_BUTTON = "Ask a real model to reflect instead"
REAL_MODEL_RUNNING = "A real model is reflecting on the evidence; the line below says what it is doing now"
REAL_MODEL_DEFAULT = "labkit/smollm2"
REAL_MODEL_ROUNDS = 2


def real_model_expectation(speed: Speed | None = None, rounds: int = REAL_MODEL_ROUNDS) -> str:
    """What the button will do and how long SmolLM2 takes here, from the recorded measurement."""
    from labkit.experiments import smollm2_speed
    from labkit.loop.strategies.reflector import ModelReflector

    s = speed or smollm2_speed.load()
    limit = ModelReflector.timeout
    write = s.reply_tokens / s.reply_per_second
    text = (
        f"**What to expect with SmolLM2 on this machine.** The button runs at most {rounds} rounds; in each, "
        f"the validator runs the tests (seconds), then the model reads the evidence and writes a "
        f"reflection, and the loop waits at most {limit:g} s for that reply. Measured here "
        f"({s.cores} cores, load average {s.load_before:g}, {s.measured_on}, `{s.command}`): starting "
        f"litellm and the model took {s.startup_seconds:.0f} s (first press only); round 1's prompt, "
        f"{s.prompt_tokens} tokens, was read at {s.prompt_per_second:g} tokens/s ({s.reading_seconds:.0f} s) "
        f"and its reply, {s.reply_tokens} tokens, written at {s.reply_per_second:g} tokens/s "
        f"({write:.0f} s): **about {s.round_seconds:.0f} s per round**"
    )
    if s.round_seconds > limit:
        return text + (
            f", more than the {limit:g} s limit. At that speed a reply is stopped after about "
            f"{s.tokens_within(limit)} of its {s.reply_tokens} tokens, and the round's card shows that "
            f"much, raw; expect about {_expected_seconds(s, rounds):.0f} s in all. A less busy "
            "machine is faster."
        )
    return text + (
        f": expect about {_expected_seconds(s, rounds):.0f} s in all. A reply still "
        f"unfinished after {limit:g} s is stopped, and its card shows what had arrived, raw."
    )


def real_model_button() -> str:
    """The button's label: which model it asks and, for SmolLM2, how long that takes here."""
    from labkit.experiments import smollm2_speed
    from labkit.models.choice import choose

    model = choose(None, default=REAL_MODEL_DEFAULT)
    if model != REAL_MODEL_DEFAULT:
        return f"Ask {model} to reflect instead"
    minutes = _expected_seconds(smollm2_speed.load(), REAL_MODEL_ROUNDS) / 60
    return f"{REAL_MODEL_BUTTON} (SmolLM2: about {max(1, round(minutes))} min here)"


def _expected_seconds(s: Speed, rounds: int) -> float:
    """Start-up plus `rounds` replies, each at the measured speed or cut at the time limit."""
    from labkit.loop.strategies.reflector import ModelReflector

    return s.startup_seconds + rounds * min(s.round_seconds, ModelReflector.timeout)


@dataclass(frozen=True)
class RealModelRun:
    """What asking a real model gave: the model, why it could not be used (or None), its run."""

    model: str
    problem: str | None
    trace: Trace | None
    lesson: str | None


def ask_real_model(
    max_rounds: int = REAL_MODEL_ROUNDS, on_progress: Callable[[str], None] | None = None, every: float = 1.0
) -> RealModelRun:
    """Run the loop with the model $LABKIT_MODEL names (default SmolLM2), if it can be used here.

    A model that is unknown, lacks its key or engine comes back with `problem` set and no run:
    a notebook says so plainly and the scripted run stands. `on_progress`, if given, is called
    every `every` seconds while the run goes on with one line saying what it is doing (for a
    local engine, the reply being written so far).
    """
    from labkit.models.choice import choose, problem

    model = choose(None, default=REAL_MODEL_DEFAULT)
    why = problem(model)
    if why is not None:
        return RealModelRun(model, why, None, None)
    if on_progress is None:
        return _ask(model, max_rounds)
    watch = _Progress(model, max_rounds)
    with ThreadPoolExecutor(1, "labkit-real-model") as pool:
        future = pool.submit(_ask, model, max_rounds)
        while True:
            try:
                return future.result(timeout=every)
            except FutureTimeout:
                on_progress(watch.line())


def _ask(model: str, max_rounds: int) -> RealModelRun:
    trace = cache_case.run(model=model, max_rounds=max_rounds, run_id="cache-real-model")
    learned = cache_case.lesson(trace, model)
    return RealModelRun(model, None, trace, learned.lesson if learned else None)


class _Progress:
    """One status line for a running real-model run: elapsed time, and the reply so far."""

    def __init__(self, model: str, rounds: int) -> None:
        from labkit.models import smollm2

        backend, _, path = model.removeprefix("labkit/").partition(":")
        local = model.startswith("labkit/") and backend in ("smollm2", "gguf")
        self._stream = (lambda: smollm2.latest_stream(path or None)) if local else (lambda: None)
        self._before = self._stream()  # a reply from an earlier press is not this run's
        self._seen: list[object] = []
        self.model, self.rounds, self.t0 = model, rounds, time.perf_counter()

    def line(self) -> str:
        elapsed = f"{time.perf_counter() - self.t0:.0f} s"
        stream = self._stream()
        if stream is None or stream is self._before:
            return f"{elapsed}: running the tests, then asking {self.model} (at most {self.rounds} rounds)…"
        if stream not in self._seen:
            self._seen.append(stream)
        request = len(self._seen)
        what = f"reflection {request} of at most {self.rounds}" if request <= self.rounds else "the lesson"
        text = " ".join(stream.text.split())
        if not text:
            return f"{elapsed}: {self.model} is reading the evidence for {what}…"
        tail = text if len(text) <= 160 else "…" + text[-160:]
        return f"{elapsed}: {self.model} is writing {what} ({len(text)} characters so far): {tail}"


def real_model_md(asked: RealModelRun) -> str:
    """The line above the real model's stepper, or why there is none."""
    from labkit.models.choice import label

    if asked.problem is not None:
        return f"**{asked.model} cannot be used here:** {asked.problem} — the scripted run above stands."
    return f"**Reflector: {label(asked.model)}** — step through its rounds:"


def real_model_lesson_md(asked: RealModelRun) -> str:
    """The lesson the real model's run yields, or that it yields none."""
    return f"**Lesson:** {asked.lesson}" if asked.lesson else f"**{cache_case.NO_LESSON}.**"
