"""Best-of-N on a real model: N samples per prompt, three selectors, and how correlated they are.

REAL (whatever `model` says: the default is SmolLM2-135M in-process, offline). Each task is
an addition "a + b"; the model continues "a + b = " N times at temperature > 0 under a
grammar that only allows digits; the hard check is the exact sum. Per N (nested: the first n samples):

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

from labkit.core.types import Usage
from labkit.models import choice, gateway

__all__ = ["ModelBestOfN", "addition_tasks", "run_model"]

DEFAULT_MODEL = "labkit/smollm2"
_DIGITS = "root ::= [0-9] [0-9]? [0-9]?"


@dataclass(frozen=True)
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

    @property
    def pass_at_1(self) -> float:
        return self.random[0]


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
    """Sample `n` answers for each of `tasks` additions and score the three selectors."""
    problems = addition_tasks(tasks, seed, largest)
    answers: list[tuple[str, ...]] = []
    usage = Usage()
    for t, (a, b) in enumerate(problems):
        row = []
        for i in range(n):
            prompt = [{"role": "user", "content": f"{a} + {b} = ?"},
                      {"role": "assistant", "content": f"{a} + {b} = "}]  # continued from here
            reply = gateway.complete(
                model, prompt,
                max_tokens=4, temperature=temperature, grammar=_DIGITS, seed=seed * 100_003 + t * 1_009 + i,
            )  # fmt: skip
            row.append(reply.text.strip())
            usage = usage + reply.usage
        answers.append(tuple(row))
    correct = [[ans == str(a + b) for ans in row] for (a, b), row in zip(problems, answers, strict=True)]
    ns = tuple(k for k in (1, 2, 4, 8, 16, 32) if k <= n) or (n,)
    hard, major, rand = [], [], []
    for k in ns:
        hard.append(sum(any(c[:k]) for c in correct) / tasks)
        rand.append(sum(sum(c[:k]) / k for c in correct) / tasks)
        hits = 0
        for (a, b), sampled in zip(problems, answers, strict=True):
            counts = Counter(sampled[:k])
            top = max(counts.values())
            pick = next(x for x in sampled[:k] if counts[x] == top)  # ties: the earliest
            hits += pick == str(a + b)
        major.append(hits / tasks)
    return ModelBestOfN(model, choice.label(model), tuple(problems), tuple(answers), ns, tuple(hard),
                        tuple(major), tuple(rand), _icc(correct), usage)  # fmt: skip
