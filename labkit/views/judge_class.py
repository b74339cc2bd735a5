"""judge_bias as a class reads it: reasons a student can act on, and the self-correction attempts
as a table instead of a raw grid.

A model that cannot be used says why (`labkit.models.choice.problem`); the part of that reason
addressed to a programmer ("pass api_key=...") is cut, since no one can pass a parameter from
the app. The attempts of a self-correction run become one readable row each: the number the
answer ended in, whether it was right, and the start of the critique, with LaTeX's
`\\boxed{361}` shown as 361.
"""

from __future__ import annotations

import re

import polars as pl

from labkit.experiments.judging import selfcorrect as sc
from labkit.models.choice import PYTHON_HINT

__all__ = ["NO_REAL_JUDGE", "attempts_frame", "for_class"]

NO_REAL_JUDGE = (
    "the real model is not available here, so no real judge ran: there is nothing to set beside the "
    "simulated judge above"
)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def for_class(why: str | None) -> str | None:
    """A model's problem in words a student can act on (no "pass api_key=..."), or None."""
    return None if why is None else why.replace(PYTHON_HINT, "")


def _plain(text: str, limit: int) -> str:
    flat = " ".join(_BOXED.sub(r"\1", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def attempts_frame(run: sc.SelfCorrectionRun) -> pl.DataFrame:
    """One row per answer: question, round, the number it ended in, right or not, the critique's start."""
    rows = [
        {
            "question": a.question_id,
            "round": a.round,
            "answer": "—" if a.value is None else f"{a.value:g}",
            "right": "yes" if a.correct else "no",
            "critique before it (start)": _plain(a.review, 90) if a.round else "— (first answer)",
        }
        for row in run.attempts
        for a in row
    ]
    return pl.DataFrame(rows)
