"""What every command prints through, and how it exits: one line on stderr and a code.

Kept apart from `commands.py` so the subcommands in their own modules (check, search) and the
app that registers them import it, and not each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console

if TYPE_CHECKING:
    from labkit.grading.validator import Validator

__all__ = ["err", "fail", "out", "usage", "validator_for"]

out = Console()
err = Console(stderr=True)


def fail(reason: str, code: int = 1) -> typer.Exit:
    """One line on stderr, exit code 1 (a failed run or check)."""
    err.print(f"labkit: {reason}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(code)


def usage(reason: str) -> typer.Exit:
    """One line on stderr, exit code 2 (a usage or configuration error: nothing ran)."""
    return fail(reason, 2)


def validator_for(wall: float, memory: int) -> Validator:
    """The validator the command-line options ask for."""
    from labkit.grading.sandbox import Limits
    from labkit.grading.validator import Validator

    return Validator(Limits(wall_seconds=wall, memory_mb=memory))
