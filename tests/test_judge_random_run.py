"""The random re-answerer's run the judge-bias notebook opens on is read from data/; here the engine
runs it again, whole, and every answer must equal the stored one (labkit.experiments.judging.random_run)."""

import json

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import ReferenceDataMissing
from labkit.experiments.judging import random_run
from labkit.experiments.judging import selfcorrect as sc


def _answers(run: sc.SelfCorrectionRun) -> list[object]:
    head = [run.answerer, run.simulated, run.rounds, run.n]
    return [
        head,
        *([a.question_id, a.round, a.text, a.value, a.correct, a.review] for row in run.attempts for a in row),
    ]


def test_the_recorded_random_run_is_what_the_engine_gives_now() -> None:
    now = random_run.run_random()
    assert now.engine is not None and now.engine.correctness().height == 300 * 3  # it went through the engine
    recorded = random_run.recorded_random_run()
    record = json.loads(random_run.RANDOM_RUN.read_text(encoding="utf-8"))
    assert_as_recorded(_answers(now), _answers(recorded), record, "the random re-answerer's run")
    assert recorded.simulated and recorded.n == 300 and recorded.rounds == 2 and recorded.engine is None
    # what the notebook draws from it: the same intervals from the stored answers as from the run
    assert sc.accuracy(recorded) == sc.accuracy(now) and sc.transitions(recorded) == sc.transitions(now)
    assert sc.oracle_stopping(recorded) == sc.oracle_stopping(now)


def test_a_missing_recording_names_the_command_that_records_it(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(ReferenceDataMissing, match="record_random_run"):
        random_run.recorded_random_run(tmp_path / "absent.json")
