"""Best-of-N on a real model: N samples per prompt, three selectors, and how correlated they are.

REAL (whatever `model` says: the default is SmolLM2-135M in-process, offline). Each task is
an addition "a + b"; the model continues "a + b = " N times at temperature > 0 under a
grammar that only allows digits; the hard check is the exact sum. The run is one round of
`labkit.loop.engine.run` with the `BestOfN` strategy: the N samples are that round's children,
each validated by the hard check and decided by the engine, which holds the best (so the
ledger records every sample, verdict and decision). Per N (nested: the first n samples):

- `hard_check`: some sample passes the hard check (an external verifier: the ceiling);
- `majority`: the most frequent answer (self-consistency: no external verifier; ties go
  to the earliest), correct or not;
- `random`: the expected correctness of a uniformly random pick (the mean of the first n).

`rho` estimates how correlated the samples' correctness is within a task (an intraclass
correlation from the between-task variance); correlated samples fail together, which is
what makes a larger N buy little.

    .venv/bin/python -c "from labkit.experiments.best_of_n_model import run_model; print(run_model())"

On SmolLM2-135M (20 tasks, N = 8, seed 0; about a minute on two cores) this measured: pass@1
0.20; some sample correct 0.20 / 0.25 / 0.25 / 0.35 at N = 1 / 2 / 4 / 8 (an external check
gains a little); majority vote 0.20 / 0.20 / 0.15 / 0.15 (an unreliable selector gains
nothing); rho ~ 0.77 (the samples repeat each other's mistakes). tests/test_best_of_n.py
re-derives every figure from the replies of a smaller run; it does not assert these numbers.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from labkit.core.types import Candidate, Usage
from labkit.experiments.judging.answer_check import (
    ANSWER_FILE,
    AnswerCheck,
    answer_of,
    hidden_suite,
)
from labkit.experiments.judging.questions import Question
from labkit.loop import engine
from labkit.loop.engine import EngineRun, Situation, Task
from labkit.loop.strategies.best_of_n import BestOfN, Sample
from labkit.models import choice
from labkit.models.role import ModelRole

__all__ = ["Adder", "ModelBestOfN", "addition_tasks", "run_model"]

DEFAULT_MODEL = "labkit/smollm2"
_DIGITS = "root ::= [0-9] [0-9]? [0-9]?"


@dataclass(frozen=True, kw_only=True)
class ModelBestOfN:
    model: str
    label: str  # choice.label(model): "real ..." or "simulated ..."
    tasks: tuple[tuple[int, int], ...]
    answers: tuple[tuple[str, ...], ...]  # per task, the N answers in sampling order
    ns: tuple[int, ...]
    hard_check: tuple[float, ...]
    majority: tuple[float, ...]
    random: tuple[float, ...]
    rho: float
    usage: Usage
    engine: EngineRun | None = None  # the run that drew, validated and kept the samples

    @property
    def pass_at_1(self) -> float:
        return self.random[0]


@dataclass(frozen=True, kw_only=True)
class Adder(ModelRole):
    """The model continues "a + b = " under a digits-only grammar: one sample per call."""

    ROLE: ClassVar[str] = "sampler"
    temperature: float = 0.9
    seed: int = 0

    def sample(self, t: int, a: int, b: int, i: int) -> Sample:
        prompt = [
            {"role": "user", "content": f"{a} + {b} = ?"},
            {"role": "assistant", "content": f"{a} + {b} = "},
        ]  # continued from here
        reply = self.ask(
            prompt,
            max_tokens=4,
            temperature=self.temperature,
            grammar=_DIGITS,
            seed=self.seed * 100_003 + t * 1_009 + i,
        )
        text = reply.text.strip()
        return Sample(Candidate({ANSWER_FILE: text}, label=f"sample-{i}"), reply.usage, text)


def addition_tasks(k: int, seed: int = 0, largest: int = 29) -> list[tuple[int, int]]:
    """`k` additions a + b with 2 <= a <= `largest` and 2 <= b <= 9."""
    rng = random.Random(seed)
    return [(rng.randint(2, largest), rng.randint(2, 9)) for _ in range(k)]


def _icc(correct: Sequence[Sequence[bool]]) -> float:
    """Intraclass correlation of binary correctness across samples of the same task."""
    n = len(correct[0])
    means = [sum(row) / n for row in correct]
    p = sum(means) / len(means)
    if n < 2 or p in (0.0, 1.0):
        return 1.0 if p in (0.0, 1.0) else 0.0
    between = sum((m - p) ** 2 for m in means) / len(means)
    return max(0.0, min(1.0, (between - p * (1 - p) / n) / (p * (1 - p) * (1 - 1 / n))))


def run_model(
    model: str = DEFAULT_MODEL,
    *,
    tasks: int = 20,
    n: int = 8,
    temperature: float = 0.9,
    seed: int = 0,
    largest: int = 29,
) -> ModelBestOfN:
    """Sample `n` answers for each of `tasks` additions and score the three selectors.

    One round of `labkit.loop.engine.run` with `BestOfN`: each addition is a task whose
    visible check is the exact sum (`answer_check`); the n samples are the round's children,
    each validated by that check and decided (keep="resolved"), and the engine holds the best.
    Every figure is read from what the engine recorded for each child, in sampling order."""
    problems = addition_tasks(tasks, seed, largest)
    questions = [
        Question(
            id=f"add{t}",
            kind="arithmetic",
            text=f"{a} + {b} = ?",
            answer=str(a + b),
            working="",
            wrong_answer="",
            wrong_working="",
        )
        for t, (a, b) in enumerate(problems)
    ]
    adder = Adder(model=model, temperature=temperature, seed=seed)

    def draw(s: Situation, i: int) -> Sample:
        t = int(s.case.removeprefix("add"))
        return adder.sample(t, *problems[t], i)

    start = Candidate({ANSWER_FILE: ""}, label="no answer yet")
    run = engine.run(
        [Task(id=q.id, start=start, suite=hidden_suite(q)) for q in questions],
        BestOfN(draw, n, name=f"best of {n} ({model})", simulated=adder.simulated),
        AnswerCheck(),
        rounds=1,
        keep="resolved",
    )
    answers: list[tuple[str, ...]] = []
    correct: list[list[bool]] = []
    usage = Usage()
    for q in questions:
        (rnd,) = run.traces[q.id].rounds
        answers.append(tuple(answer_of(a.child.target) if a.child.target else "" for a in rnd.attempts))
        correct.append([a.retest is not None and a.retest.resolved for a in rnd.attempts])
        usage = usage + rnd.reflection.usage
    ns = tuple(k for k in (1, 2, 4, 8, 16, 32) if k <= n) or (n,)
    hard, major, rand = [], [], []
    for k in ns:
        hard.append(sum(any(c[:k]) for c in correct) / tasks)
        rand.append(sum(sum(c[:k]) / k for c in correct) / tasks)
        hits = 0
        for sampled, ok in zip(answers, correct, strict=True):
            counts = Counter(sampled[:k])
            top = max(counts.values())
            pick = next(j for j, x in enumerate(sampled[:k]) if counts[x] == top)  # ties: the earliest
            hits += ok[pick]
        major.append(hits / tasks)
    return ModelBestOfN(
        model=model,
        label=choice.label(model),
        tasks=tuple(problems),
        answers=tuple(answers),
        ns=ns,
        hard_check=tuple(hard),
        majority=tuple(major),
        random=tuple(rand),
        rho=_icc(correct),
        usage=usage,
        engine=run,
    )
