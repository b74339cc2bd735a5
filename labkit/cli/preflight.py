"""What `labkit run` checks before round 1: the reflector can answer, the run id is free.

A configuration error found here exits 2 with its cause in about a second, instead of
burning every round on "keep investigating" and ending on "round cap reached". No model is
called and litellm is not imported for a well-known provider without its key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from labkit.core.errors import LabkitError

if TYPE_CHECKING:
    from labkit.grading.cases import Case
    from labkit.loop.strategies.reflector import ModelReflector
    from labkit.record.ledger import Ledger

__all__ = ["reflector_for", "refuse_reuse", "transcript_problem"]

_err = Console(stderr=True)


def _usage(reason: str) -> typer.Exit:
    _err.print(f"labkit: {reason}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2)


def transcript_problem(path: Path, branch: str, rounds: int) -> tuple[str | None, str]:
    """(why the transcript cannot drive round 1 or None, a note on how far it goes)."""
    from labkit.models.replay import load

    try:
        keys = load(path)
    except LabkitError as exc:
        return str(exc), ""
    mine = {k.removeprefix(f"{branch}/") for k in keys if k.startswith(f"{branch}/")}
    if "round-1" not in mine:
        branches = sorted({k.split("/", 1)[0] for k in keys if "/" in k})
        return (
            f"transcript {path} has no reply for branch {branch!r} round 1 "
            f"(its branches: {', '.join(branches) or 'none'}); give --branch or another transcript"
        ), ""
    last = max(int(k.split("-", 1)[1]) for k in mine if k.startswith("round-") and k[6:].isdigit())
    note = f"; it has replies up to round {last} of {rounds}: later rounds get no reply" if last < rounds else ""
    return None, note


def reflector_for(spec: str, case: Case, branch: str, rounds: int) -> tuple[ModelReflector, str]:
    """The reflector `labkit run` uses, checked; and a line saying which one and why."""
    from labkit.models.choice import DEFAULT_ENV, problem

    env = os.environ.get(DEFAULT_ENV, "").strip()
    has_transcript = (case.root / "transcript.jsonl").is_file()
    if spec:
        chosen, source = spec, "--reflector"
    elif env:
        chosen, source = env, f"${DEFAULT_ENV}"
    elif has_transcript:
        chosen, source = "replay:transcript.jsonl", "the case's transcript"
    else:
        raise _usage(f"no --reflector given, ${DEFAULT_ENV} is not set and the case has no transcript.jsonl")
    unused = f"; ${DEFAULT_ENV}={env} is not used: --reflector wins" if spec and env else ""
    if chosen.startswith("replay:") or chosen.startswith("labkit/replay:"):
        raw = chosen.split(":", 1)[1]
        path = Path(raw)
        path = path if path.is_absolute() or path.exists() else case.root / path
        if not path.is_file():
            raise _usage(f"transcript {path} does not exist ({source})")
        why, note = transcript_problem(path, branch, rounds)
        if why:
            raise _usage(why)
        said = f"reflector: scripted transcript {path}, branch {branch!r} (from {source}){unused}{note}"
        if "transcript.jsonl replays" in case.notes:
            said += (
                "\nnote: this imported case's transcript replays the reference solution, so "
                "'resolved' checks the case, not a model; give --reflector MODEL to try a model"
            )
        from labkit.loop.strategies.reflector import (
            ModelReflector,  # after the checks: it takes a while
        )

        return ModelReflector(model="labkit/replay", environment=case.environment, transcript=path, branch=branch), said
    why = problem(chosen)
    if why:
        raise _usage(f"reflector {chosen!r} (from {source}) cannot be used: {why}")
    said = f"reflector: {chosen} (from {source}){unused}"
    from labkit.loop.strategies.reflector import ModelReflector

    return ModelReflector(model=chosen, environment=case.environment), said


def refuse_reuse(book: Ledger, run_id: str, resume: bool) -> None:
    """RunIdInUse for an existing run id without `resume`; RunLeaseHeld while a live process
    writes it. The engine checks both again when it takes the lease (one transaction)."""
    from labkit.core.errors import RunIdInUse
    from labkit.record.lease import check_free, earlier_run

    check_free(book, run_id)
    events = earlier_run(book, run_id)
    if events and not resume:
        raise RunIdInUse(run_id, book.path, events)
