"""Intrinsic self-correction (Huang et al., ICLR 2024): a model reviews and revises its own
answer with no oracle, and we count what the revisions did.

Round 0 is the first answer. Each later round asks the model to find problems with its
previous answer, then to improve it; nothing outside the model's own text enters the
conversation. The loop is `labkit.loop.engine.run` with the `IntrinsicCritique` strategy: an
answer is a candidate (`answer_check`), the visible suite gives no evidence, every revision is
kept without a gate (keep="always"), and the engine's hidden scoring checks every round's answer
against the computed answer, never shown to the model; the ledger records every step.

The per-round 2×2 transition (right→right, right→wrong, wrong→right, wrong→wrong) says
where accuracy went. "Oracle stopping" — stop as soon as the answer is correct — uses
the ground truth the loop is not supposed to have; it makes even a random re-answerer,
which knows nothing, look like it improves every round. That is the inflation Huang et
al. found in earlier self-correction results.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
import numpy.typing as npt

from labkit.core.paths import DATA
from labkit.core.stats import Interval, bootstrap_columns
from labkit.core.types import Candidate, Usage, digest
from labkit.experiments.judging.questions import Question, extract_number
from labkit.models.role import ModelRole

# The engine (and answer_check, which builds on it) is imported where a loop runs, not here: the
# notebook opens on a recorded run (labkit.experiments.judging.random_run) and reads only its answers.
if TYPE_CHECKING:
    from labkit.loop.engine import EngineRun, Proposal, Situation
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

__all__ = [
    "ASK",
    "Answerer",
    "HUANG_CSV",
    "IntrinsicCritique",
    "ModelAnswerer",
    "PublishedPoint",
    "REVIEW",
    "REVISE",
    "RandomReanswerer",
    "RoundAnswer",
    "SelfCorrectionRun",
    "Transition",
    "Turn",
    "accuracy",
    "expected_random",
    "load_huang",
    "oracle_stopping",
    "own_answers",
    "run_intrinsic",
    "transitions",
]

Turn = Literal["answer", "review", "revise"]  # which turn of the conversation a call is

HUANG_CSV = DATA / "huang2024_intrinsic.csv"

# The prompts, after Huang et al.'s fixed self-correction prompts for GSM8K.
ASK = "{question}\nSolve it step by step, and give your final answer as a single number in the form \\boxed{{answer}}."
REVIEW = "Review your previous answer and find problems with your answer."
REVISE = (
    "Based on the problems you found, improve your answer. Please reiterate your answer, "
    "with your final answer a single number, in the form \\boxed{answer}."
)


class Answerer(Protocol):
    """Something that answers, reviews and revises. It sees only the conversation."""

    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool: ...

    def respond(self, question: Question, messages: list[dict[str, str]], step: Turn, round: int) -> str: ...


@dataclass(frozen=True, kw_only=True)
class ModelAnswerer(ModelRole):
    """A model through `labkit.models.gateway.complete` (or an injected `complete` of the same
    shape), recorded, paid and cached as a `ModelRole`; each call's role is its step."""

    max_tokens: int = 256
    temperature: float = 0.0

    def respond(self, question: Question, messages: list[dict[str, str]], step: Turn, round: int) -> str:
        reply = self.ask(messages, role=step, round=round, max_tokens=self.max_tokens, temperature=self.temperature)
        return str(reply.text)


@dataclass(frozen=True)
class RandomReanswerer:
    """Knows nothing: every answer is right with probability `p_correct`, independently of
    the question, the round and everything said before. Simulated."""

    p_correct: float = 0.3
    seed: int = 0
    name: str = "sim/random-reanswerer"

    @property
    def simulated(self) -> bool:
        return True

    def respond(self, question: Question, messages: list[dict[str, str]], step: Turn, round: int) -> str:
        if step == "review":
            return "(simulated: a random re-answerer does not review)"
        u = int(digest(f"{self.seed}:{question.id}:{round}"), 16) / 16**16
        value = question.answer if u < self.p_correct else question.wrong_answer
        return f"(simulated) \\boxed{{{value}}}"


@dataclass(frozen=True, kw_only=True)
class RoundAnswer:
    """One round's answer to one question, as the engine held it and its hidden check scored it."""

    question_id: str
    round: int
    text: str
    value: float | None  # the number the answer ends in (None: no number)
    correct: bool
    review: str = ""  # the model's critique that preceded this answer (rounds ≥ 1)


@dataclass(frozen=True)
class SelfCorrectionRun:
    """Every question's answers, rounds 0..rounds, and the engine run they came from (if any)."""

    answerer: str
    simulated: bool
    rounds: int
    attempts: tuple[tuple[RoundAnswer, ...], ...]
    engine: EngineRun | None = None

    @property
    def n(self) -> int:
        return len(self.attempts)

    def correct(self) -> npt.NDArray[np.bool_]:
        """(questions, rounds + 1) correctness."""
        return np.array([[a.correct for a in row] for row in self.attempts], dtype=bool).reshape(
            self.n, self.rounds + 1
        )

    def unchanged(self) -> npt.NDArray[np.bool_]:
        """(questions, rounds): round r's answer has the same number as round r − 1's."""
        return np.array(
            [[row[r].value == row[r - 1].value for r in range(1, self.rounds + 1)] for row in self.attempts], dtype=bool
        ).reshape(self.n, self.rounds)


@dataclass
class IntrinsicCritique:
    """The engine's strategy for intrinsic self-correction: the answerer reviews its held answer
    and revises it, with nothing from outside the conversation (the situation's visible verdict
    carries no evidence and is not shown). One child per round: the revised answer."""

    answerer: Answerer
    questions: Mapping[str, Question]
    progress: Callable[[], None] | None = None
    talks: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # case -> conversation so far

    @property
    def name(self) -> str:
        return f"intrinsic critique ({self.answerer.name})"

    @property
    def simulated(self) -> bool:
        return self.answerer.simulated

    @property
    def upper(self) -> Usage:
        """A proposal is two calls (review, revise): what the engine reserves for it."""
        from labkit.loop.engine.steps import REFLECT_UPPER

        return Usage(
            tokens=2 * REFLECT_UPPER.tokens,
            calls=2,
            wall_seconds=2 * REFLECT_UPPER.wall_seconds,
            cost_units=2 * REFLECT_UPPER.cost_units,
        )

    def first(self, q: Question) -> str:
        """Round 0: the answer the loop starts from."""
        self.talks[q.id] = [{"role": "user", "content": ASK.format(question=q.text)}]
        return self._say(q, self.talks[q.id], "answer", 0)

    def propose(self, situation: Situation) -> Proposal:
        from labkit.experiments.judging.answer_check import ANSWER_FILE, answer_of
        from labkit.loop.engine import Proposal
        from labkit.loop.engine.strategy import Child

        q, r = self.questions[situation.case], situation.round
        said = [*self.talks[q.id], {"role": "assistant", "content": answer_of(situation.candidate)}]
        said = [*said, {"role": "user", "content": REVIEW}]
        review = self.answerer.respond(q, said, "review", r)
        said = [*said, {"role": "assistant", "content": review}, {"role": "user", "content": REVISE}]
        self.talks[q.id] = said
        text = self._say(q, said, "revise", r)
        child = Child(
            target=Candidate({ANSWER_FILE: text}, label=f"{q.id}:revise-{r}"), name=f"revise-{r}", source="revise"
        )
        return Proposal(children=(child,), raw=review, note="intrinsic: no external evidence")

    def _say(self, q: Question, messages: list[dict[str, str]], step: Turn, r: int) -> str:
        text = self.answerer.respond(q, messages, step, r)
        if self.progress is not None:
            self.progress()
        return text


def run_intrinsic(
    questions: Sequence[Question],
    answerer: Answerer,
    rounds: int = 2,
    progress: Callable[[int], None] | None = None,
    *,
    ledger: Ledger | None = None,
    budget: Budget | None = None,
) -> SelfCorrectionRun:
    """Intrinsic self-correction over `questions` through `labkit.loop.engine.run`: round 0 is
    each question's first answer (the start), every later round the strategy's revision, kept
    without a gate (keep="always"); the hidden gold check scores every round (for accounting only,
    never shown). `progress(k)` after the k-th answer (of n × (rounds + 1)). The answerer's own
    calls are recorded and paid where its `ModelRole` says; `budget` pays the engine's steps
    (reading an answer costs nothing: validation_cost 0)."""
    from labkit.experiments.judging.answer_check import AnswerCheck, answer_of, answer_tasks
    from labkit.loop import engine

    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    said = count()
    strategy = IntrinsicCritique(
        answerer, {q.id: q for q in questions}, (lambda: progress(next(said) + 1)) if progress is not None else None
    )
    tasks = answer_tasks(questions, [strategy.first(q) for q in questions])
    out = engine.run(
        tasks,
        strategy,
        AnswerCheck(),
        rounds=rounds,
        keep="always",
        stop_at_green=False,
        ledger=ledger,
        budget=budget,
        validation_cost=0.0,
    )
    correct = {(row["case"], row["round"]): row["correct"] for row in out.correctness().iter_rows(named=True)}
    rows = []
    for q in questions:
        trace = out.traces[q.id]
        texts = [answer_of(trace.start)] + [answer_of(rnd.kept) for rnd in trace.rounds]
        reviews = [""] + [rnd.reflection.raw for rnd in trace.rounds]
        rows.append(
            tuple(
                RoundAnswer(
                    question_id=q.id,
                    round=r,
                    text=t,
                    value=extract_number(t),
                    correct=bool(correct[(q.id, r)]),
                    review=rv,
                )
                for r, (t, rv) in enumerate(zip(texts, reviews, strict=True))
            )
        )
    return SelfCorrectionRun(answerer.name, answerer.simulated, rounds, tuple(rows), out)


def own_answers(answerer: Answerer, questions: Iterable[Question]) -> dict[str, str]:
    """Round-0 answers (the loop's first prompt) by question id: a judge's own answers."""
    return {
        q.id: answerer.respond(q, [{"role": "user", "content": ASK.format(question=q.text)}], "answer", 0)
        for q in questions
    }


# --- what the rounds did ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Transition:
    """From round r − 1 to round r, as shares of all questions."""

    round: int
    n: int
    right_right: Interval
    right_wrong: Interval
    wrong_right: Interval
    wrong_wrong: Interval
    unchanged: Interval  # the answer's number did not change


def _shares(matrix: npt.ArrayLike, n: int, resamples: int, seed: int | None) -> list[Interval]:
    """Column means of a (questions, k) 0/1 matrix with intervals, questions resampled jointly."""
    return [
        Interval(iv.estimate / n, iv.low / n, iv.high / n, iv.level)
        for iv in bootstrap_columns(matrix, resamples=resamples, seed=seed)
    ]


def accuracy(run: SelfCorrectionRun, resamples: int = 1000, seed: int | None = 0) -> list[Interval]:
    """Accuracy at each round with no oracle: the answer the loop ends that round with."""
    return _shares(run.correct(), run.n, resamples, seed)


def oracle_stopping(run: SelfCorrectionRun, resamples: int = 1000, seed: int | None = 0) -> list[Interval]:
    """Accuracy at each round if the loop stops the first time the answer is correct — which
    needs the ground truth. Equals "correct at any round so far"."""
    return _shares(np.maximum.accumulate(run.correct(), axis=1), run.n, resamples, seed)


def transitions(run: SelfCorrectionRun, resamples: int = 1000, seed: int | None = 0) -> list[Transition]:
    """The 2×2 transition and the unchanged share for every round ≥ 1."""
    c, same = run.correct(), run.unchanged()
    out = []
    for r in range(1, run.rounds + 1):
        before, after = c[:, r - 1], c[:, r]
        cols = np.stack([before & after, before & ~after, ~before & after, ~before & ~after, same[:, r - 1]], axis=1)
        rr, rw, wr, ww, same_share = _shares(cols.astype(float), run.n, resamples, seed)
        out.append(
            Transition(
                round=r, n=run.n, right_right=rr, right_wrong=rw, wrong_right=wr, wrong_wrong=ww, unchanged=same_share
            )
        )
    return out


def expected_random(p_correct: float, rounds: int) -> tuple[list[float], list[float]]:
    """A random re-answerer's expected accuracy per round: (no oracle, oracle stopping)."""
    return [p_correct] * (rounds + 1), [1.0 - (1.0 - p_correct) ** (r + 1) for r in range(rounds + 1)]


# --- the published table ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PublishedPoint:
    """One cell of a published results table."""

    model: str
    benchmark: str
    round: int
    accuracy: float  # percent
    source: str
    note: str = ""


def load_huang(path: Path | str | None = None) -> list[PublishedPoint]:
    """Huang et al. (ICLR 2024), intrinsic self-correction, as quoted in SPEC §6 / seed 001."""
    p = Path(path) if path else HUANG_CSV
    with p.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    need = {"model", "benchmark", "round", "accuracy", "source"}
    if not rows or not need <= set(rows[0]):
        raise ValueError(f"{p}: expected columns {sorted(need)}")
    return [
        PublishedPoint(
            model=r["model"],
            benchmark=r["benchmark"],
            round=int(r["round"]),
            accuracy=float(r["accuracy"]),
            source=r["source"],
            note=r.get("note", "") or "",
        )
        for r in rows
    ]
