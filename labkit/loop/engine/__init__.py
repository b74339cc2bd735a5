"""The engine: six strictly ordered steps for one case or a suite of cases (see `engine.py`).

Import the entry points from here: `from labkit.loop.engine import run, run_loop, Task`.
Loaded on first use (labkit.core.lazy): importing one of the engine's modules, say
`labkit.loop.engine.accounting` for a recorded run's figures, does not import the runner.
"""

from typing import TYPE_CHECKING

from labkit.core.lazy import attach

# `decide` is also the name of a submodule: imported now, so that importing the submodule later
# (which sets the package's attribute `decide`) cannot shadow the function. It is light.
from labkit.loop.engine.decide import decide

if TYPE_CHECKING:  # what mypy sees; at run time each name is imported on first use
    from labkit.loop.engine.engine import (
        EngineRun,
        Proposal,
        Round,
        Situation,
        Task,
        Trace,
        as_strategy,
        assess,
        candidate_from_json,
        resume_point,
        run,
        run_loop,
    )

__all__ = [
    "EngineRun", "Proposal", "Round", "Situation", "Task", "Trace",
    "as_strategy", "assess", "candidate_from_json", "decide", "resume_point", "run", "run_loop",
]  # fmt: skip

__getattr__, __dir__ = attach(__name__, dict.fromkeys(set(__all__) - {"decide"}, "labkit.loop.engine.engine"))
