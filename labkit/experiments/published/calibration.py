"""What the Reflexion authors' logs say about the simulations' parameters, with intervals, or that they cannot say.

The arms notebook's SimulatedPolicy and the memory notebook's SimActor run on parameters typed in
as defaults. This module estimates each from the published runs where a log identifies it (every
interval is the one bootstrap of core.stats, resampling problems) and names the ones no logged run
identifies. SimulatedPolicy's defaults for rho, overfit and weak_tests are taken from these
estimates (rounded onto the sliders' grid inside the interval: `DEFAULTS_FROM_LOGS`); the rest keep
typed-in values, and `test_every_default_respects_what_the_logs_say` holds every default to its
interval (or to the side of the bound a proxy gives).

What the logs make possible, read from the authors' code (SOURCE.md):
- reflexion-humaneval graded its FIRST attempt on the benchmark's hidden tests and reflected only
  after that failed, so "no reflection" means "the first sample passed": a second, independent
  sample of each problem beside the single-shot run (this identifies the correlation rho);
- its reflections were driven by GPT-4's own tests (58.5 % of which accept the canonical), so a
  fix rate measured here is a fix rate under *self-written* evidence, not the visible tests the
  simulated arms show;
- reflexion-mbpp revised any first attempt its own tests rejected, correct or not, so a problem
  the single-shot run solved that Reflexion's final answer fails bounds p(break) from above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from statistics import NormalDist

import numpy as np

from labkit.core.stats import Interval, bootstrap_mean, interval, resample_kind_counts
from labkit.experiments.arms.policy import SimulatedPolicy
from labkit.experiments.memory.reflexion_repair import SimActor
from labkit.experiments.published.gains import LadderRow, outcomes, self_test_accuracy
from labkit.experiments.published.reflexion_logs import load_runs

__all__ = ["DEFAULTS_FROM_LOGS", "Estimate", "calibrate", "tetrachoric"]

# the simulated defaults set from the estimates below (value, typed in before)
DEFAULTS_FROM_LOGS = {
    "SimulatedPolicy.rho": (0.9, 0.5),
    "SimulatedPolicy.overfit": (0.7, 0.3),
    "SimulatedPolicy.weak_tests": (0.15, 0.4),
}


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """One simulated parameter: its default, what the logs give (None: not identifiable), and how."""

    parameter: str  # e.g. "SimulatedPolicy.p_fix_evidence"
    default: float
    estimate: Interval | None
    counts: str  # the counts the estimate is made of ("16 of 30 problems"), or ""
    source: str  # which log, which problems
    note: str  # what it is and is not; for an unidentifiable one, why the default is kept


def _defaults() -> dict[str, float]:
    out = {
        f"SimulatedPolicy.{f.name}": float(f.default) for f in fields(SimulatedPolicy) if isinstance(f.default, float)
    }
    out["SimActor.p_fix"] = float(next(f.default for f in fields(SimActor) if f.name == "p_fix"))  # type: ignore[arg-type]
    return out


def _norm_cdf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and labkit does not depend on scipy.
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(96)


_LO = -8.0  # the integral in x starts here (the density below it is negligible)


def _grid(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Gauss-Legendre nodes in x on [_LO, a] per row, and the standard normal density at them."""
    x = _LO + (a[:, None] - _LO) * (_NODES[None, :] + 1.0) / 2.0
    return x, np.exp(-x * x / 2.0) / math.sqrt(2.0 * math.pi)


def _both_below(
    a: np.ndarray, b: np.ndarray, r: np.ndarray, grid: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """P(X < a, Y < b) for a standard bivariate normal with correlation r (elementwise; Gauss-Legendre in x).
    `grid` is `_grid(a)`, passed in by a caller that asks for many r with the same a (the bisection)."""
    x, dens = grid if grid is not None else _grid(a)
    inner = _norm_cdf((b[:, None] - r[:, None] * x) / np.sqrt(1.0 - r[:, None] ** 2))
    return np.asarray((a - _LO) / 2.0 * ((dens * inner) @ _WEIGHTS))


def _tetra(cells: np.ndarray) -> np.ndarray:
    """Tetrachoric correlation per row of (k, 4) counts [both pass, first only, second only, neither]."""
    n = cells.sum(axis=1)
    p1, p2, p11 = (cells[:, 0] + cells[:, 1]) / n, (cells[:, 0] + cells[:, 2]) / n, cells[:, 0] / n
    ok = (p1 > 0) & (p1 < 1) & (p2 > 0) & (p2 < 1)
    inv = NormalDist().inv_cdf
    a = np.array([inv(float(p)) if g else 0.0 for p, g in zip(p1, ok, strict=True)])
    b = np.array([inv(float(p)) if g else 0.0 for p, g in zip(p2, ok, strict=True)])
    lo, hi = np.full(n.shape, -0.999), np.full(n.shape, 0.999)
    grid = _grid(a)  # the same for every r: computed once, not once per bisection step
    for _ in range(40):  # P(both pass) grows with r: bisect
        mid = (lo + hi) / 2.0
        below = _both_below(a, b, mid, grid) < p11
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return np.where(ok, (lo + hi) / 2.0, np.nan)


def tetrachoric(cells: Sequence[int], resamples: int = 1000, seed: int = 0) -> Interval:
    """The latent correlation of two pass/fail samples of the same problems, from their 2x2 counts
    [both pass, first only, second only, neither], with a bootstrap interval over problems."""
    c = np.asarray(cells, dtype=float)
    if c.shape != (4,) or c.sum() == 0:
        raise ValueError(f"tetrachoric needs four non-negative counts, got {list(cells)}")
    draws = _tetra(resample_kind_counts(c, resamples, seed))
    return interval(float(_tetra(c[None, :])[0]), draws)


def _share(hits: Sequence[bool], seed: int) -> tuple[Interval | None, str]:
    x = np.asarray(hits, dtype=float)
    if x.size == 0:
        return None, "0 problems"
    return bootstrap_mean(x, seed=seed), f"{int(x.sum())} of {x.size}"


def _ladder_share(ladder: Sequence[LadderRow] | None, runs: Sequence[str], rung: str) -> list[bool]:
    """Among logged solutions labkit's `check` fails, whether each passes `rung` (the oracle that missed it).

    An unsolved row of the March-2023 Reflexion log keeps no answer (solution ""): its candidate is
    the prompt alone, not a wrong answer the model gave, so it is left out."""
    logged = load_runs()
    empty = {(r, t) for r, t, s in logged.select("run", "task_id", "solution").iter_rows() if not s.strip()}
    verdict = {(r.run, r.task_id, r.rung): r.passed for r in ladder or ()}
    return [
        verdict[(run, t, rung)]
        for (run, t, g), ok in verdict.items()
        if g == "check" and not ok and run in runs and (run, t) not in empty and (run, t, rung) in verdict
    ]


def calibrate(ladder: Sequence[LadderRow] | None = None, seed: int = 0) -> list[Estimate]:
    """Every simulated parameter, with the logs' estimate or the reason there is none."""
    d = _defaults()
    he, mb = outcomes("humaneval"), outcomes("mbpp")
    reflected = he.reflections > 0  # exactly the problems whose first attempt failed the hidden tests
    fix, fix_n = _share(he.reflexion[reflected].tolist(), seed)
    first, first_n = _share((he.reflexion[reflected] & (he.reflections[reflected] == 1)).tolist(), seed)
    first_pass = ~reflected
    cells = [int(np.sum(first_pass & he.single)), int(np.sum(first_pass & ~he.single)),
             int(np.sum(~first_pass & he.single)), int(np.sum(~first_pass & ~he.single))]  # fmt: skip
    rho = tetrachoric(cells, seed=seed)
    revised = mb.single & (mb.reflections > 0)
    brk, brk_n = _share((~mb.reflexion[revised]).tolist(), seed)
    wrong_tests = self_test_accuracy(seed)
    he_runs = ("reflexion-humaneval", "simple-humaneval")
    over, over_n = _share(_ladder_share(ladder, he_runs, "visible"), seed)
    weak, weak_n = _share(_ladder_share(ladder, he_runs, "own_tests"), seed)
    no_ladder = (
        "" if ladder else "not computed yet: needs ladder.jsonl (python -m labkit.experiments.published regrade). "
    )
    he_log = "reflexion-humaneval log"
    out = [
        Estimate(parameter="SimulatedPolicy.p_fix_evidence", default=d["SimulatedPolicy.p_fix_evidence"], estimate=fix, counts=f"{fix_n} problems", source=he_log,
                 note="per PROBLEM, within up to 9 reflections on GPT-4's own tests, among the problems whose first "
                 "attempt failed the hidden tests; the per-revision rate is not identified (a fix is seen only when "
                 f"its own tests also pass): the first revision alone fixed {first_n}."),
        Estimate(parameter="SimActor.p_fix", default=d["SimActor.p_fix"], estimate=first, counts=f"{first_n} problems", source=he_log,
                 note="the first reflection's fix rate, a LOWER bound (a first-round fix that its own wrong tests "
                 "rejected is not seen as one)."),
        Estimate(parameter="SimulatedPolicy.p_fix_blind", default=d["SimulatedPolicy.p_fix_blind"], estimate=None, counts="", source="—",
                 note=f"not identifiable from these logs, kept at {d['SimulatedPolicy.p_fix_blind']}: no logged run revises "
                 "without evidence (the single-shot run drafts from the prompt; nothing asks it to think again)."),
        Estimate(parameter="SimulatedPolicy.p_break", default=d["SimulatedPolicy.p_break"], estimate=brk, counts=f"{brk_n} problems", source="reflexion-mbpp + simple-mbpp logs",
                 note="an UPPER-bound proxy: among problems the single-shot run solved and Reflexion revised, the share "
                 "its final answer fails, as if its first attempt were right whenever the single-shot one was; "
                 "the revisions had (often wrong) self-written test evidence, not none. HumanEval cannot say: "
                 "its loop never revised an answer that passed the hidden tests."),
        Estimate(parameter="SimulatedPolicy.rho", default=d["SimulatedPolicy.rho"], estimate=rho,
                 counts=f"both pass {cells[0]}, first attempt only {cells[1]}, single-shot only {cells[2]}, neither {cells[3]}",
                 source="reflexion-humaneval first attempts + simple-humaneval",
                 note="tetrachoric correlation of two samples of each problem: Reflexion's first attempt (graded on the "
                 "hidden tests in this log) and the single-shot answer; the simulation's Gaussian copula has the "
                 "same meaning."),
        Estimate(parameter="SimulatedPolicy.overfit", default=d["SimulatedPolicy.overfit"], estimate=over, counts=f"{over_n} wrong solutions" if over else "",
                 source="ladder: HumanEval, both runs", note=no_ladder + "among logged solutions labkit's check fails, the share that pass the "
                 "docstring examples (the visible tests)."),
        Estimate(parameter="SimulatedPolicy.weak_tests", default=d["SimulatedPolicy.weak_tests"], estimate=weak, counts=f"{weak_n} wrong solutions" if weak else "",
                 source="ladder own_tests rung (self-tests from the test-acc log)",
                 note=no_ladder + "among logged solutions labkit's check fails, the share GPT-4's own tests accept. The test-acc log "
                 f"measures the other error: {wrong_tests.problems - wrong_tests.passed} of {wrong_tests.problems} "
                 "self-written test files reject the canonical solution."),
        Estimate(parameter="SimulatedPolicy.critic_accuracy", default=d["SimulatedPolicy.critic_accuracy"], estimate=None, counts="", source="—",
                 note=f"not identifiable from these logs, kept at {d['SimulatedPolicy.critic_accuracy']}: no logged run "
                 "has a critique without tests (Self-Refine style)."),
    ]  # fmt: skip
    return out
