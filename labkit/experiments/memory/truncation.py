"""When the buffer's token budget matters: many trials, many plausible wrong answers, reflections
of realistic length — and how the buffer is cut (keep the newest, keep the oldest, summarise).

On the repair cases a buffer never outgrows its budget (a case has two or three wrong patches),
so truncation only shows in unit tests. Here each HumanEval problem offers its canonical
solution, the visible-example lookup table, `return None` and up to `mutants` single-site
mutants of the canonical solution that its visible examples reject (measured by validation;
`labkit.experiments.memory.mutants`). Problems are drawn with a seed among those whose
canonical solution has at least `min_sites` mutable sites, and kept when at least
`min_failing` of their mutants fail the visible examples (a measured selection, before any arm
runs).

SIMULATED actor (`reflexion.SimActor`, p_fix small so the fix is no likelier than any one wrong
answer): it leaves out the actions its window says were tried and failed — from the
reflections shown in full, and from the summary line under "summarise" — and nothing else (it
does not infer them from a "not yet ruled out" list). Each reflection is the real text the
wrapper writes from the real verdict (error class, first failing visible example, exception,
what is not ruled out): with a dozen options it runs to over a hundred tokens, so a tight
budget holds one or two. Every arm has the same trials and one simulated call per trial.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from labkit.core.stats import Interval, bootstrap_mean
from labkit.experiments.memory.mutants import entry_point, mutants
from labkit.experiments.memory.on_humaneval import HumanEvalCase, load
from labkit.experiments.memory.reflexion_repair import ReflexionSetup, Result, compare, run_arm
from labkit.grading.verdicts import Checker
from labkit.loop.strategies.memory.episodic import tokens

__all__ = ["Setting", "arms", "measure", "problems", "reflection_tokens"]


@dataclass(frozen=True, kw_only=True)
class Setting:
    """Every parameter of the truncation measurement, explicit."""

    problems: int = 6  # drawn, before the min_failing filter
    draw_seed: int = 7
    min_sites: int = 12
    mutants: int = 8
    min_failing: int = 6
    trials: int = 8
    generous: int = 4000  # tokens: never binds here
    tight: int = 150  # tokens: about one reflection
    p_fix: float = 0.1
    seeds: tuple[int, ...] = tuple(range(12))


def problems(setting: Setting, checker: Checker) -> tuple[HumanEvalCase, ...]:
    """The drawn problems with their measured failing mutants (see the module docstring)."""
    from labkit.experiments.arms.suites import humaneval_cases

    pool = []
    for c in humaneval_cases():
        entry = entry_point(c)
        source = c.states["canonical"][0].files["solution.py"]
        if "lookup" in c.states and entry and len(mutants(str(source), entry)) >= setting.min_sites:
            pool.append(c.task.id)
    ids = random.Random(setting.draw_seed).sample(sorted(pool), setting.problems)
    loaded = load(sorted(ids, key=lambda i: int(i.split("-")[1])), mutants=setting.mutants, checker=checker)
    kept = tuple(c for c in loaded if sum(p.name.startswith("mutant") for p in c.patches) >= setting.min_failing)
    # every state may be kept as progress over the stub and then scored: validate them all up front, two at a time
    checker.warm(
        [
            (st.candidate, s)
            for c in kept
            for st in c.states.values()
            for s in (c.task.suite, c.task.hidden)
            if s is not None
        ],
        workers=2,
    )
    return kept


def arms(setting: Setting) -> tuple[ReflexionSetup, ...]:
    return (
        ReflexionSetup(name="no memory", memory=False),
        ReflexionSetup(name=f"generous ({setting.generous} tok)", memory=True, budget=setting.generous),
        ReflexionSetup(
            name=f"tight ({setting.tight} tok), keep newest", memory=True, budget=setting.tight, truncate="newest"
        ),
        ReflexionSetup(
            name=f"tight ({setting.tight} tok), keep oldest", memory=True, budget=setting.tight, truncate="oldest"
        ),
        ReflexionSetup(
            name=f"tight ({setting.tight} tok), summarise", memory=True, budget=setting.tight, truncate="summarise"
        ),
    )


def reflection_tokens(cs: Sequence[HumanEvalCase], checker: Checker, setting: Setting) -> Interval:
    """Tokens per reflection as written in the generous arm (what a tight budget has to cut)."""
    _, strategy = run_arm(arms(setting)[1], cs, checker, trials=setting.trials, seed=0, p_fix=setting.p_fix)
    assert strategy.buffer is not None
    sizes = [tokens(r.text()) for rs in strategy.buffer.items.values() for r in rs]
    return bootstrap_mean(sizes)


def measure(setting: Setting | None = None, checker: Checker | None = None) -> tuple[tuple[HumanEvalCase, ...], Result]:
    """(the problems, the `reflexion.Result`: success by trial per arm with intervals)."""
    setting = setting or Setting()
    checker = checker or Checker()
    cs = problems(setting, checker)
    result = compare(
        arms(setting), seeds=setting.seeds, trials=setting.trials, checker=checker, p_fix=setting.p_fix, among=cs
    )
    return cs, result
