"""A long project's steps on the engine's own runner, inside the project's one run.

A long project is one run: one ledger run id, one budget, one set of paid verdicts (the
engine's rule: the first validation of a (candidate, suite, validator) in a run is paid, a
repeat is free). Each of its steps that validates is a short engine run sharing the project's
`Recorder`:

- develop: one round, the developer as the strategy, keep="resolved" on the iteration's
  dev tests (steps 2-6: the held candidate validated, the change proposed, applied with its
  protected paths checked, re-tested and decided by the engine);
- status, QA: no rounds, only step 2 on a candidate (the status check on every dev test, and
  the engine's scoring of the held candidate on the hidden benchmark; QA's checks on a frozen
  snapshot).

`engine.run` makes a Recorder of its own per call (so repeats across steps would be paid again)
and refuses a run id that holds events; this builds the engine's `Runner` on the project's
Recorder instead. The seam it stands in for: `engine.run(..., recorder=rec)` (or a run's paid
keys carried over), which would let this module go.
"""

from __future__ import annotations

from labkit.loop.engine.engine import as_strategy
from labkit.loop.engine.runner import Runner
from labkit.loop.engine.steps import Recorder
from labkit.loop.engine.strategy import Proposal, Situation, Strategy
from labkit.loop.engine.trace import EngineRun, Task

__all__ = ["NOTHING", "engine_step"]


class _Nothing:
    """The strategy of a step without rounds: never asked."""

    name = "none (a check, no rounds)"
    simulated = True

    def propose(self, situation: Situation) -> Proposal:
        return Proposal(note="a check has no rounds")


NOTHING: Strategy = _Nothing()


def engine_step(rec: Recorder, task: Task, strategy: Strategy = NOTHING, *, rounds: int = 0) -> EngineRun:
    """`task` through the engine's runner on the project's Recorder: `rounds` rounds (0: step 2
    only, plus the engine's scoring on `task.hidden` if it has one), keep="resolved"."""
    runner = Runner(
        rec=rec,
        tasks=(task,),
        strategy=as_strategy(strategy),
        rounds=rounds,
        rules=(),
        case_rules=(),
        keep="resolved",
        stop_at_green=False,
        observe="visible",
        recheck=0,
        max_experiments=0,
        workers=1,
    )
    return runner.go(None)
