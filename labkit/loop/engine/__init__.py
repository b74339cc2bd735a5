"""The engine: six strictly ordered steps for one case or a suite of cases (see `engine.py`).

Import the entry points from here: `from labkit.loop.engine import run, run_loop, Task`.
"""

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
    decide,
    resume_point,
    run,
    run_loop,
)

__all__ = [
    "EngineRun", "Proposal", "Round", "Situation", "Task", "Trace",
    "as_strategy", "assess", "candidate_from_json", "decide", "resume_point", "run", "run_loop",
]  # fmt: skip
