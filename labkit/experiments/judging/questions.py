"""Project-made questions with computed answers: each with one worked mistake for its incorrect variant.

Every answer is computed, not typed in, so a judge's verdict on a pair built from these questions
(`pairs`) can be scored against ground truth.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Question", "extract_number", "make_questions"]


@dataclass(frozen=True, kw_only=True)
class Question:
    """A question with a computed answer, and one worked mistake for the incorrect variant."""

    id: str
    kind: str  # arithmetic, units, percent, rate, temperature
    text: str
    answer: str
    working: str  # correct steps, ending in the answer
    wrong_answer: str
    wrong_working: str  # the same steps with one mistake, ending in wrong_answer

    def is_correct(self, reply: str) -> bool:
        """True if the last number in `reply` equals the computed answer."""
        got = extract_number(reply)
        return got is not None and abs(got - float(self.answer)) < 1e-6


# --- numbers -------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def extract_number(text: str) -> float | None:
    """The last number in `text` (commas as thousands separators allowed), or None.

    A boxed answer (\\boxed{42}) wins over the last number, as in Huang et al.'s prompts.
    """
    boxed = re.findall(r"\\boxed\{([^}]*)\}", text)
    if boxed:
        text = boxed[-1]
    found = _NUMBER.findall(text)
    if not found:
        return None
    try:
        return float(found[-1].replace(",", ""))
    except ValueError:
        return None


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# --- question generators: each returns (kind, text, answer, working, wrong, wrong_working) ----

_Made = tuple[str, str, float, str, float, str]


def _arithmetic(r: random.Random) -> _Made:
    a, b = r.randint(3, 19), r.randint(4, 24)
    c = r.randint(2, a * b - 1)
    ans = a * b - c
    text = (
        f"A crate holds {a} boxes and each box holds {b} apples. After {c} apples are sold, how many apples are left?"
    )
    working = f"{a} × {b} = {a * b} apples; {a * b} − {c} = {ans}."
    wrong = a * b + c  # the mistake: adds what was sold
    wrong_working = f"{a} × {b} = {a * b} apples; {a * b} + {c} = {wrong}."
    return "arithmetic", text, ans, working, wrong, wrong_working


# (larger unit plural, singular, smaller unit, factor)
_UNITS = [
    ("km", "km", "metres", 1000),
    ("kg", "kg", "grams", 1000),
    ("litres", "litre", "millilitres", 1000),
    ("hours", "hour", "minutes", 60),
    ("minutes", "minute", "seconds", 60),
    ("feet", "foot", "inches", 12),
]


def _units(r: random.Random) -> _Made:
    big, one, small, factor = r.choice(_UNITS)
    x = r.randint(2, 40)
    ans = x * factor
    text = f"How many {small} are in {x} {big}?"
    working = f"1 {one} = {factor} {small}; {x} × {factor} = {ans}."
    wrong = x * 100  # the mistake: the wrong conversion factor
    wrong_working = f"1 {one} = 100 {small}; {x} × 100 = {wrong}."
    return "units", text, ans, working, wrong, wrong_working


def _percent(r: random.Random) -> _Made:
    p = r.choice([5, 10, 15, 20, 25, 30, 40, 50, 75])
    n = r.randint(2, 40) * 20
    ans = p * n // 100
    text = f"What is {p}% of {n}?"
    working = f"{p}% of {n} = {n} × {p} / 100 = {ans}."
    wrong = n * p // 10  # the mistake: divides by 10, not 100
    wrong_working = f"{p}% of {n} = {n} × {p} / 10 = {wrong}."
    return "percent", text, ans, working, wrong, wrong_working


def _rate(r: random.Random) -> _Made:
    v, t = r.randint(4, 30) * 5, r.randint(2, 6)
    d = v * t
    text = f"A train travels {d} km in {t} hours at a steady speed. What is its speed in km/h?"
    working = f"speed = distance / time = {d} / {t} = {v} km/h."
    wrong = d * t  # the mistake: multiplies instead of dividing
    wrong_working = f"speed = distance × time = {d} × {t} = {wrong} km/h."
    return "rate", text, v, working, wrong, wrong_working


def _temperature(r: random.Random) -> _Made:
    c = r.randint(-4, 20) * 5
    ans = c * 9 // 5 + 32
    text = f"Convert {c} °C to °F."
    working = f"°F = °C × 9/5 + 32 = {c} × 9/5 + 32 = {ans}."
    wrong = c * 9 // 5  # the mistake: forgets the offset
    wrong_working = f"°F = °C × 9/5 = {c} × 9/5 = {wrong}."
    return "temperature", text, ans, working, wrong, wrong_working


_GENERATORS: Sequence[Callable[[random.Random], _Made]] = (_arithmetic, _units, _percent, _rate, _temperature)


def make_questions(n: int = 60, seed: int = 0) -> list[Question]:
    """`n` questions cycling through the kinds, each with a computed answer and one worked mistake."""
    r = random.Random(seed)
    out = []
    for i in range(n):
        kind, text, ans, working, wrong, wrong_working = _GENERATORS[i % len(_GENERATORS)](r)
        assert wrong != ans, (kind, text)  # a "mistake" that gives the right answer is no mistake
        out.append(
            Question(
                id=f"q{i:03d}",
                kind=kind,
                text=text,
                answer=_fmt(ans),
                working=working,
                wrong_answer=_fmt(wrong),
                wrong_working=wrong_working,
            )
        )
    return out
