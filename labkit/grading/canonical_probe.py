"""Runs a HumanEval canonical solution on many inputs, inside the sandbox (standard library only).

`labkit.grading.differential_build` lays out `solution.py` (prompt + canonical solution) and
`_job.json`, and runs this module's source as a probe script (`labkit.grading.script`): the
canonical is trusted, but it is still code, and a mutated input can make it loop or eat memory.
It prints one JSON line per observation, on the stdout it had at start (the solution's own
prints are swallowed):

- `{"k": "seed", "args": ...}`: with `record_check`, the arguments of every call `check` made
  (the problem's helpers in scope, `random` seeded with 0), for problems whose `check` calls the
  candidate with no literal argument;
- `{"k": "input", "i": ..., "status": "ok" | "raises" | "timeout", "out": ..., "contract": ...}`:
  the canonical's answer (its repr) on input i, and the contract predicate's value on it;
- `{"k": "example", ...}`: the canonical on each docstring example, and whether it agrees;
- `{"k": "done"}` last.

The contract predicate is Python source over the entry point's parameter names, evaluated here
(never in labkit's process) on a copy of the input; an error in it counts as False (the input
is outside the contract: a contract can only remove inputs).
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import json
import random
import signal
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["main"]

_RECORDED = 10  # seeds kept from a recorded check
_OUT_CAP = 2000  # characters of an answer's repr kept; longer answers are "large"


# At the time limit the alarm raises SystemExit with this code: not an Exception, so the
# solution's own `except Exception` cannot swallow it (this module defines no exception class:
# it runs without labkit, so it cannot use labkit.core.errors).
_SLOW = "labkit: time limit"


def _alarm(signum: int, frame: object) -> None:
    raise SystemExit(_SLOW)


def _timed(fn: Callable[..., Any], args: tuple[Any, ...], limit: float) -> tuple[str, Any]:
    saved, sys.stdout = sys.stdout, io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return "ok", fn(*copy.deepcopy(args))
    except SystemExit as e:
        if e.code != _SLOW:
            return "raises", f"SystemExit: {e.code!r}"
        return "timeout", f"no answer within {limit:g} s"
    except BaseException as e:  # noqa: BLE001 - the canonical's error is what is recorded
        return "raises", f"{type(e).__name__}: {str(e)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout = saved


def _contract(predicate: str | None, params: list[str], args: tuple[Any, ...]) -> bool | None:
    if predicate is None:
        return None
    scope = dict(zip(params, copy.deepcopy(args), strict=False))
    try:
        # the arguments are globals, so comprehensions in the predicate see them too
        return bool(eval(predicate, {"__builtins__": builtins, **scope}))  # noqa: S307 - labkit's own contract data, in the sandbox
    except Exception:  # noqa: BLE001 - a predicate that cannot be evaluated rules the input out
        return False


def _literal(value: Any) -> str | None:
    if isinstance(value, (set, frozenset)):
        return None  # a set's repr order depends on the hash seed: not stored
    text = repr(value)
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text if repr(back) == text else None


def main() -> None:
    out = sys.stdout

    def emit(**line: Any) -> None:
        out.write(json.dumps(line) + "\n")
        out.flush()

    with open("_job.json", encoding="utf-8") as f:
        job = json.load(f)
    signal.signal(signal.SIGALRM, _alarm)
    import solution

    fn = getattr(solution, job["entry"])
    limit = float(job["limit"])
    if job.get("record_check"):
        calls: list[str] = []

        def recorder(*args: Any) -> Any:
            text = _literal(tuple(args))
            if text is not None and text not in calls and len(calls) < _RECORDED:
                calls.append(text)
            return fn(*args)

        scope = dict(vars(solution))
        random.seed(0)
        exec(job["record_check"], scope)  # noqa: S102 - the problem's own check, in the sandbox
        scope["check"](recorder)
        for call in calls:
            emit(k="seed", args=call)
    for i, args_src in enumerate(job["inputs"]):
        args = ast.literal_eval(args_src)
        status, value = _timed(fn, args, limit)
        if status == "ok":
            text = _literal(value)
            if text is None:
                status, value = "unliteral", f"a {type(value).__name__} whose repr is not a literal"
            elif len(text) > _OUT_CAP:
                status, value = "large", f"an answer of {len(text)} characters"
            else:
                value = text
        emit(
            k="input",
            i=i,
            status=status,
            out=value,
            contract=_contract(job["contract"], job["params"], args),
        )
    for args_src, value_src, call in job["examples"]:
        status, value = _timed(fn, ast.literal_eval(args_src), limit)
        agrees = status == "ok" and value == ast.literal_eval(value_src)
        emit(
            k="example",
            call=call,
            docstring=value_src,
            canonical=repr(value) if status == "ok" else value,
            agrees=agrees,
        )
    emit(k="done")


if __name__ == "__main__":
    main()
