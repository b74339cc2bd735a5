"""The comparison a differential test runs, inside the sandbox (standard library only).

`labkit.grading.differential` copies this module's source, unchanged, to the top of every
generated test module (the test must be self-contained: nothing of labkit is importable in the
sandbox), then adds the table's cases and one test that calls `dt_run`. Every name here starts
with `dt_` so that no HumanEval entry point (`compare`, `check`, ...) can clash with it.

The comparison is EvalPlus's (`evalplus/eval/__init__.py`): equal, or, where floats are
expected, equal within atol 1e-6 and rtol 1e-7 elementwise (EvalPlus: `np.allclose` with those
tolerances). Two guards EvalPlus does not have: the answer must be built from plain values
(an object whose `__eq__` always says yes is refused), and each call has a wall-clock limit so
a slow or looping answer fails on its input rather than killing the whole run. Two problems
have more than one right answer: HumanEval/32 (`find_zero`: any root will do) is judged like its
`check` does, by the polynomial's value at the answer, as EvalPlus's special oracle does;
HumanEval/20 (`find_closest_elements`: any closest pair, among ties) by the pair's distance.
"""

from __future__ import annotations

import copy
import math
import signal
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "DT_LIMIT_SECONDS",
    "DT_SLOW",
    "dt_close",
    "dt_closest_pair",
    "dt_describe",
    "dt_plain",
    "dt_poly",
    "dt_run",
]

DT_LIMIT_SECONDS = 2.0  # wall seconds per call
_ATOL, _RTOL = 1e-6, 1e-7
_SHOW = 150  # characters of each value shown in a counterexample
_PLAIN = (type(None), bool, int, float, complex, str, bytes)


# At the limit the alarm raises SystemExit(DT_SLOW): not an Exception, so a solution's own
# `except Exception` cannot swallow it (no exception class here: this runs without labkit).
DT_SLOW = "labkit: time limit"


def dt_plain(value: Any, depth: int = 0) -> bool:
    """True if `value` is made only of plain values, lists, tuples, sets and dicts."""
    if depth > 50:
        return False
    if type(value) in _PLAIN:
        return True
    if type(value) in (list, tuple, set, frozenset):
        return all(dt_plain(x, depth + 1) for x in value)
    if type(value) is dict:
        return all(dt_plain(k, depth + 1) and dt_plain(v, depth + 1) for k, v in value.items())
    return False


def dt_close(got: Any, expected: Any) -> bool:
    """`got == expected`, with float tolerance where a float is expected (EvalPlus's rule)."""
    if isinstance(expected, float) and type(got) in (int, float):
        return got == expected or abs(got - expected) <= _ATOL + _RTOL * abs(expected)
    if type(expected) in (list, tuple) and type(got) is type(expected):
        return len(got) == len(expected) and all(dt_close(g, e) for g, e in zip(got, expected, strict=True))
    if type(expected) is dict and type(got) is dict:
        return set(got) == set(expected) and all(dt_close(got[k], expected[k]) for k in expected)
    return bool(got == expected)


def dt_poly(xs: Sequence[float], x: float) -> float:
    """HumanEval/32's polynomial, computed here: the candidate's own `poly` is not trusted."""
    return sum(c * math.pow(x, i) for i, c in enumerate(xs))


def dt_closest_pair(got: Any, expected: Any, numbers: Sequence[float]) -> bool:
    """HumanEval/20: any pair of the list's elements at the least distance, smaller first, will do
    (the docstring sets no order among ties; the canonical returns the first pair it meets)."""
    if type(got) is not tuple or len(got) != 2 or not all(type(x) in (int, float) for x in got):
        return False
    rest = list(numbers)
    for x in got:
        if x not in rest:
            return False
        rest.remove(x)
    return got[0] <= got[1] and dt_close(got[1] - got[0], expected[1] - expected[0])


def dt_describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOW else text[: _SHOW - 3] + "..."


def _alarm(signum: int, frame: object) -> None:
    raise SystemExit(DT_SLOW)


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """(returned, value or the exception's description), within the time limit."""
    try:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, DT_LIMIT_SECONDS)
        armed = True
    except ValueError:  # not the main thread: run without the per-call limit
        armed = False
    try:
        return True, fn(*copy.deepcopy(args))
    except SystemExit as e:
        if e.code != DT_SLOW:
            return False, f"raised SystemExit: {e.code!r}"
        return False, f"no answer within {DT_LIMIT_SECONDS:g} s"
    except BaseException as e:  # noqa: BLE001 - the solution's error is the observation
        return False, f"raised {type(e).__name__}: {str(e)[:80]}"
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def dt_run(
    fn: Callable[..., Any],
    name: str,
    cases: Sequence[tuple[tuple[Any, ...], Any]],
    oracle: str = "",
) -> None:
    """Call `fn` on every case; on the first disagreement fail with that one counterexample."""
    for k, (args, expected) in enumerate(cases, start=1):
        returned, got = _call(fn, args)
        if not returned:
            verdict, shown = False, str(got)
        elif not dt_plain(got):
            verdict, shown = False, f"a {type(got).__name__}, not a plain value"
        elif oracle == "find_zero":
            # any root will do: as near to zero as the canonical's answer, or within check's 1e-4
            try:
                bound = max(1e-4, abs(dt_poly(args[0], expected)))
                verdict = type(got) in (int, float) and abs(dt_poly(args[0], got)) <= bound
            except (OverflowError, ValueError):
                verdict = False
            shown = dt_describe(got)
        elif oracle == "closest_pair":
            verdict, shown = dt_closest_pair(got, expected, args[0]), dt_describe(got)
        else:
            verdict, shown = dt_close(got, expected), dt_describe(got)
        if not verdict:
            call = f"{name}{dt_describe(args)}" if len(args) != 1 else f"{name}({dt_describe(args[0])})"
            raise AssertionError(
                f"counterexample (input {k} of {len(cases)}): {call} expected {dt_describe(expected)}, got {shown}"
            )
