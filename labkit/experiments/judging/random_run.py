"""The random re-answerer's intrinsic self-correction run that the judge-bias notebook opens on, recorded.

`run_random()` is the run itself: `selfcorrect.run_intrinsic` through the engine on 300 questions
(`questions.make_questions(300, seed=2)`), the simulated `RandomReanswerer(p_correct=0.3)`, two rounds.
The engine writes about 3,500 ledger events for it, which on every open is most of the page's own
work; the figures need only the answers. So `record_random_run()` stores every answer once
(data/judge/random_reanswerer_run.json) and `recorded_random_run()` reads them back as the same
`SelfCorrectionRun` (without the engine run object). tests/test_selfcorrect.py runs it again and
checks every answer equals the stored one. It is simulated, recorded or not.
"""

from __future__ import annotations

import json
from pathlib import Path

from labkit.core.paths import DATA, read_recording
from labkit.core.versions import package_versions
from labkit.experiments.judging.questions import make_questions
from labkit.experiments.judging.selfcorrect import (
    RandomReanswerer,
    RoundAnswer,
    SelfCorrectionRun,
    run_intrinsic,
)

__all__ = ["DEPENDS_ON", "RANDOM_RUN", "record_random_run", "recorded_random_run", "run_random"]

RANDOM_RUN = DATA / "judge" / "random_reanswerer_run.json"
QUESTIONS, SEED, P_CORRECT, ROUNDS = 300, 2, 0.3, 2
# The questions come from the stdlib's random, the answers from sha256 digests: no package moves them.
DEPENDS_ON: tuple[str, ...] = ()
COMMAND = "python -c 'from labkit.experiments.judging.random_run import record_random_run as r; r()'"


def run_random() -> SelfCorrectionRun:
    """The run, computed now through the engine."""
    return run_intrinsic(make_questions(QUESTIONS, seed=SEED), RandomReanswerer(p_correct=P_CORRECT), rounds=ROUNDS)


def record_random_run(path: Path = RANDOM_RUN) -> SelfCorrectionRun:
    """Compute `run_random()` and store its answers at `path` (one line per question)."""
    run = run_random()
    head = {"command": COMMAND, "versions": package_versions(DEPENDS_ON), "answerer": run.answerer,
            "simulated": run.simulated, "rounds": run.rounds, "questions": QUESTIONS, "seed": SEED,
            "p_correct": P_CORRECT}  # fmt: skip
    rows = [
        json.dumps({"question": row[0].question_id, "answers": [[a.text, a.value, a.correct, a.review] for a in row]})
        for row in run.attempts
    ]
    body = json.dumps(head, indent=1)[:-2]  # the header's fields, then the answers one question a line
    path.write_text(body + ',\n "attempts": [\n  ' + ",\n  ".join(rows) + "\n ]\n}\n", encoding="utf-8")
    return run


def recorded_random_run(path: Path = RANDOM_RUN) -> SelfCorrectionRun:
    """The stored run: every answer as the engine held it and its hidden check scored it."""
    rec = read_recording(path, COMMAND)
    attempts = tuple(
        tuple(
            RoundAnswer(
                question_id=row["question"],
                round=r,
                text=text,
                value=None if value is None else float(value),
                correct=bool(correct),
                review=review,
            )
            for r, (text, value, correct, review) in enumerate(row["answers"])
        )
        for row in rec["attempts"]
    )
    return SelfCorrectionRun(str(rec["answerer"]), bool(rec["simulated"]), int(rec["rounds"]), attempts)
