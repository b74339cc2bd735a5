"""Best-of-N, honestly: sampling N from one prompt plus an external selector is search too.

SIMULATED. `simulate` draws, for each of `tasks` tasks, N candidates whose correctness is
correlated (a Gaussian copula: latent u_i = sqrt(rho)·z + sqrt(1-rho)·e_i, correct when
u_i is below the quantile for the base rate p), and a selector that scores each candidate
``signal·correct + noise``: signal 0 is a coin, a large signal is an oracle. It reports,
per N, how often the selected candidate is correct, the oracle ceiling (any correct) and
the cost per correct answer. Raising N buys little when candidates are correlated (they
fail together) or the selector is unreliable (it cannot find the good one) — seed 002 §2.

The real runs are elsewhere: best-of-N on a model through the engine
(`labkit.experiments.best_of_n_model`, strategy `labkit.loop.strategies.best_of_n.BestOfN`) and
the selector cascade with real hard checks (`labkit.experiments.judging.cascade`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from labkit.core.errors import BestOfNError

__all__ = ["BestOfN", "BestOfNError", "simulate"]

SIMULATED = "simulated: correlated candidates and a noisy selector (labkit.experiments.best_of_n)"


@dataclass(frozen=True, kw_only=True)
class BestOfN:
    """Per N: share of tasks whose selected candidate is correct, and the oracle ceiling."""

    ns: tuple[int, ...]
    selected: tuple[float, ...]  # P(selected candidate correct)
    ceiling: tuple[float, ...]  # P(at least one candidate correct): a perfect selector
    cost_per_correct: tuple[float, ...]  # N generations + N verifications per task / correct
    p: float
    rho: float
    signal: float
    tasks: int
    label: str = SIMULATED

    def gain(self) -> float:
        """Selected-correct at the largest N minus at the smallest."""
        return self.selected[-1] - self.selected[0]


def simulate(
    ns: Sequence[int] = (1, 2, 4, 8, 16),
    *,
    p: float = 0.3,
    rho: float = 0.0,
    signal: float = 3.0,
    tasks: int = 4000,
    seed: int = 0,
    generate_cost: float = 1.0,
    verify_cost: float = 1.0,
) -> BestOfN:
    """Simulate best-of-N selection (see the module docstring). Same seed, same numbers."""
    if not 0 < p < 1:
        raise BestOfNError(f"p must be in (0, 1), got {p}")
    if not 0 <= rho <= 1:
        raise BestOfNError(f"rho must be in [0, 1], got {rho}")
    if signal < 0 or tasks < 1 or not ns or min(ns) < 1:
        raise BestOfNError(f"need signal >= 0, tasks >= 1 and every N >= 1; got {signal}, {tasks}, {ns}")
    rng = np.random.default_rng(seed)
    big = max(ns)
    z = rng.standard_normal((tasks, 1))
    e = rng.standard_normal((tasks, big))
    correct = (math.sqrt(rho) * z + math.sqrt(1 - rho) * e) < NormalDist().inv_cdf(p)
    score = signal * correct + rng.standard_normal((tasks, big))
    selected, ceiling, cost = [], [], []
    for n in ns:  # the first n draws of each task: nested, so N=8 extends N=4
        pick = np.argmax(score[:, :n], axis=1)
        hit = float(correct[np.arange(tasks), pick].mean())
        selected.append(hit)
        ceiling.append(float(correct[:, :n].any(axis=1).mean()))
        cost.append(n * (generate_cost + verify_cost) / hit if hit else math.inf)
    return BestOfN(
        ns=tuple(ns),
        selected=tuple(selected),
        ceiling=tuple(ceiling),
        cost_per_correct=tuple(cost),
        p=p,
        rho=rho,
        signal=signal,
        tasks=tasks,
    )
