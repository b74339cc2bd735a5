"""Spend the budget on explanations that discriminate (seed 002 §7): the recording, re-measured in part."""

from __future__ import annotations

from dataclasses import asdict

from recordings import assert_as_recorded

from labkit.experiments.lessons import triage
from labkit.loop.control.predictions import held_rate, score
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

SLICE = ("environment: textlib returns cents",)


def test_the_recording_shows_triage_wins_where_the_cause_is_data_or_environment() -> None:
    rec = triage.read()
    patches, probe = triage.summarise(rec, ("data", "environment"))
    assert (patches.cases, patches.correct, patches.visible_green, patches.spent) == (4, 0, 1, 20.0)
    assert (probe.cases, probe.correct, probe.visible_green, probe.spent) == (4, 4, 4, 16.0)
    assert (probe.predictions_held, probe.predictions) == (
        0,
        4,
    )  # "the cause is the code" never held here
    patches, probe = triage.summarise(rec, ("code",))  # where the cause is the code, three shots beat one
    assert (patches.correct, probe.correct, probe.predictions_held) == (2, 1, 2)
    assert all(o.spent <= triage.BUDGET for o in rec)
    # green for the loop, wrong for the task: a code patch compensating for a drifted environment
    (wrong,) = [o for o in rec if o.visible_green and not o.correct and o.cause != "code"]
    assert (wrong.arm, wrong.held) == (triage.ARMS[0], "amounts are cents: divide by 100")


def test_a_slice_measured_now_equals_the_recording() -> None:
    led = Ledger()
    now = triage.measure(cases=SLICE, ledger=led)
    recorded = [o for o in triage.read() if o.case in SLICE]
    assert len(now) == 2
    assert_as_recorded([asdict(o) for o in now], [asdict(o) for o in recorded], triage.record(), "the triage slice")
    rid = f"triage/{triage.ARMS[1]}/{SLICE[0]}"
    (s,) = score(led, rid)
    assert s.before and s.prediction == triage.PREDICTION and not s.held
    assert "image: MISMATCH" in s.observation.splitlines()


def _ask(led: Ledger, run: str, *prediction: str) -> None:
    detail = {"experiment": triage.EXPERIMENT.question} | ({"prediction": list(prediction)} if prediction else {})
    led.record(run, 1, str(Role.REFLECTOR), str(Kind.REFLECT), detail=detail)


def _observe(led: Ledger, run: str) -> None:
    detail = {"question": triage.EXPERIMENT.question}
    led.record(run, 1, str(Role.REFLECTOR), str(Kind.EXPERIMENT), outputs="image: MATCH", detail=detail)


def test_a_prediction_written_after_its_observation_or_never_is_not_held() -> None:
    led = Ledger()
    _observe(led, "late")  # the prediction comes after: it cannot be paired, so it scores as none
    _ask(led, "late", "image: MATCH")
    _ask(led, "none")
    _observe(led, "none")
    _ask(led, "first", "image: MATCH")
    _observe(led, "first")
    (late,), (none,), (first,) = score(led, "late"), score(led, "none"), score(led, "first")
    assert (late.prediction, late.predicted_at, late.held) == ((), None, False)
    assert (none.prediction, none.held) == ((), False)
    assert first.before and first.held
    assert held_rate((late, none, first)) == (1, 3)


def test_the_page_sentence_reads_its_numbers_from_the_recording() -> None:
    from labkit.views.diagnosis import triage_md, triage_summary_frame

    text = triage_md(triage.read())
    assert "**0/4** for **20** units" in text and "**4/4** for **16**" in text and "**0/4** of those" in text
    assert triage_summary_frame(triage.read()).height == 4
