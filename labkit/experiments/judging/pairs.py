"""Judge material with known answers: project-made questions, answer pairs, and a pairwise loader.

Every question here has its answer computed, not typed in, so a judge's verdict can be
scored against ground truth. From each question we write a correct and an incorrect
worked answer (the incorrect one has one locatable mistake), and concise and padded
forms of the same answer (padding adds words, never information).

`python -m labkit.experiments.judging.pairs` writes data/judge/*.jsonl. `pair_files.load_pairs` reads those files and
pairwise files in MT-Bench (human judgments) or LLMBar style, so researchers can point
the lab at their own data.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from labkit.core.paths import DATA

Label = Literal[0, 1, 2]  # 1: output_1 is better, 2: output_2 is better, 0: tie / equal quality
Format = Literal["auto", "labkit", "mtbench", "llmbar"]

DATA_DIR = DATA / "judge"



@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Pair:
    """Two answers to one question. `label` is the gold verdict when known (None: unknown).

    `quality_*` is the ground-truth quality the simulated judge reads (1 correct, 0 wrong);
    `model_*` says who wrote each output (used for self-preference and length control).
    """

    id: str
    question: str
    output_1: str
    output_2: str
    label: Label | None = None
    kind: str = ""
    model_1: str = ""
    model_2: str = ""
    quality_1: float | None = None
    quality_2: float | None = None
    question_id: str = ""

    def swapped(self) -> Pair:
        """The same pair with the outputs exchanged (label, models and qualities follow)."""
        label: Label | None = {1: 2, 2: 1, 0: 0, None: None}[self.label]
        return Pair(self.id, self.question, self.output_2, self.output_1, label, self.kind,
                    self.model_2, self.model_1, self.quality_2, self.quality_1, self.question_id)


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
    text = (f"A crate holds {a} boxes and each box holds {b} apples. "
            f"After {c} apples are sold, how many apples are left?")
    working = f"{a} × {b} = {a * b} apples; {a * b} − {c} = {ans}."
    wrong = a * b + c  # the mistake: adds what was sold
    wrong_working = f"{a} × {b} = {a * b} apples; {a * b} + {c} = {wrong}."
    return "arithmetic", text, ans, working, wrong, wrong_working


# (larger unit plural, singular, smaller unit, factor)
_UNITS = [("km", "km", "metres", 1000), ("kg", "kg", "grams", 1000), ("litres", "litre", "millilitres", 1000),
          ("hours", "hour", "minutes", 60), ("minutes", "minute", "seconds", 60), ("feet", "foot", "inches", 12)]


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


_GENERATORS: Sequence[Callable[[random.Random], _Made]] = (
    _arithmetic, _units, _percent, _rate, _temperature)


def make_questions(n: int = 60, seed: int = 0) -> list[Question]:
    """`n` questions cycling through the kinds, each with a computed answer and one worked mistake."""
    r = random.Random(seed)
    out = []
    for i in range(n):
        kind, text, ans, working, wrong, wrong_working = _GENERATORS[i % len(_GENERATORS)](r)
        assert wrong != ans, (kind, text)  # a "mistake" that gives the right answer is no mistake
        out.append(Question(f"q{i:03d}", kind, text, _fmt(ans), working, _fmt(wrong), wrong_working))
    return out


# --- answer texts ----------------------------------------------------------------------------

_PADDING = [
    "Let me think about this question carefully and work through it step by step.",
    "It is important to read the question closely before starting any calculation.",
    "First, I will identify the quantities that are given in the problem.",
    "Then I will apply the appropriate operation to combine them correctly.",
    "Careful reasoning like this helps to avoid simple mistakes.",
    "I have double-checked each step of the calculation to make sure it is consistent.",
    "This kind of problem comes up often, so it is worth being methodical.",
    "In summary, following the steps above leads directly to the result.",
]


def concise(working: str, answer: str) -> str:
    """The worked steps and the answer, nothing else."""
    return f"{working} The answer is {answer}."


def padded(working: str, answer: str, r: random.Random, extra: int | None = None) -> str:
    """The same steps and answer wrapped in filler sentences that add no information."""
    k = extra if extra is not None else r.randint(2, 6)
    # keep the filler in its written order so the padded text still reads fluently
    before = [_PADDING[i] for i in sorted(r.sample(range(4), min(k, 4)))]
    after = [_PADDING[4 + i] for i in sorted(r.sample(range(4), max(0, min(k - 4, 4))))]
    return " ".join([*before, working, *after, f"Therefore, the final answer is {answer}."])


def terse(answer: str) -> str:
    return f"{answer}."


# --- pair sets -------------------------------------------------------------------------------

def _ordered(r: random.Random, pid: str, q: Question, kind: str,
             good: tuple[str, str, float], other: tuple[str, str, float]) -> Pair:
    """A pair with `good` in a random slot. Entries are (text, model, quality)."""
    first, second = (good, other) if r.random() < 0.5 else (other, good)
    q1, q2 = first[2], second[2]
    label: Label = 0 if q1 == q2 else (1 if q1 > q2 else 2)
    return Pair(pid, q.text, first[0], second[0], label, kind, first[1], second[1], q1, q2, q.id)


def correctness_pairs(questions: Iterable[Question], seed: int = 0) -> list[Pair]:
    """A correct and an incorrect worked answer, same style, correct one in a random slot."""
    r = random.Random(seed)
    return [_ordered(r, f"c-{q.id}", q, "correctness",
                     (concise(q.working, q.answer), "reference", 1.0),
                     (concise(q.wrong_working, q.wrong_answer), "reference-wrong", 0.0))
            for q in questions]


def verbosity_pairs(questions: Iterable[Question], seed: int = 0) -> list[Pair]:
    """The same correct answer concise and padded (label 0: equal quality), plus the harder
    case of a padded wrong answer against a concise right one."""
    r = random.Random(seed)
    out = []
    for q in questions:
        out.append(_ordered(r, f"v-{q.id}", q, "verbosity",
                            (concise(q.working, q.answer), "concise", 1.0),
                            (padded(q.working, q.answer, r), "padded", 1.0)))
        out.append(_ordered(r, f"vw-{q.id}", q, "verbosity_wrong",
                            (concise(q.working, q.answer), "concise", 1.0),
                            (padded(q.wrong_working, q.wrong_answer, r), "padded-wrong", 0.0)))
    return out


# Writers for the length-controlled win rate: (name, P(correct), style). The baseline,
# "padded" and "terse" have equal accuracy and differ only in length; every style's length
# varies from answer to answer, so the length effect can be told apart from the writer's.
WRITERS: tuple[tuple[str, float, str], ...] = (
    ("writer/baseline", 0.6, "mixed"),
    ("writer/padded", 0.6, "padded"),
    ("writer/terse", 0.6, "terse"),
    ("writer/strong", 0.85, "mixed"),
)


def _write(q: Question, correct: bool, style: str, r: random.Random) -> str:
    working, answer = (q.working, q.answer) if correct else (q.wrong_working, q.wrong_answer)
    if style == "padded":  # one to six filler sentences
        return padded(working, answer, r, r.randint(1, 6))
    if style == "terse":  # mostly the bare number, sometimes the steps
        return terse(answer) if r.random() < 0.7 else concise(working, answer)
    extra = r.randint(0, 3)  # "mixed": the steps, sometimes with a little filler
    return padded(working, answer, r, extra) if extra else concise(working, answer)


def writer_pairs(questions: Iterable[Question], seed: int = 0) -> list[Pair]:
    """Each non-baseline writer's answer against the baseline's on every question.

    output_1 is always the writer, output_2 the baseline; judges see both orders anyway.
    """
    r = random.Random(seed)
    (base, p_base, base_style), *others = WRITERS
    out = []
    for q in questions:
        b_ok = r.random() < p_base
        b_text = _write(q, b_ok, base_style, r)
        for name, p, style in others:
            ok = r.random() < p
            label: Label = 0 if ok == b_ok else (1 if ok else 2)
            out.append(Pair(f"w-{name.split('/')[1]}-{q.id}", q.text, _write(q, ok, style, r), b_text,
                            label, "writer", name, base, float(ok), float(b_ok), q.id))
    return out


def self_pairs(questions: Iterable[Question], own: dict[str, str], judge: str, seed: int = 0) -> list[Pair]:
    """The judge's own answer against the project's reference answer, kept only where the own
    answer is correct, so both outputs have equal quality. `own` maps question id -> own text."""
    r = random.Random(seed)
    return [_ordered(r, f"s-{q.id}", q, "self", (own[q.id], judge, 1.0),
                     (concise(q.working, q.answer), "reference", 1.0))
            for q in questions if q.id in own and q.is_correct(own[q.id])]


def battery(questions: Sequence[Question], seed: int = 0, own: dict[str, str] | None = None,
            judge: str = "") -> list[Pair]:
    """Every pair set for one judge: correctness, verbosity (and padded-wrong), writers against
    the baseline, and self-preference pairs when the judge's own answers are given."""
    out = correctness_pairs(questions, seed) + verbosity_pairs(questions, seed) + writer_pairs(questions, seed)
    if own:
        out += self_pairs(questions, own, judge, seed)
    return out


# --- reading and writing ---------------------------------------------------------------------

def write_jsonl(path: Path, rows: Iterable[Any]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(asdict(row), ensure_ascii=False) + "\n")
            n += 1
    return n


def main(out: Path = DATA_DIR, n: int = 60, seed: int = 0) -> dict[str, int]:
    """Write the project's judge data set; returns rows written per file."""
    qs = make_questions(n, seed)
    counts = {
        "questions.jsonl": write_jsonl(out / "questions.jsonl", qs),
        "correctness.jsonl": write_jsonl(out / "correctness.jsonl", correctness_pairs(qs, seed)),
        "verbosity.jsonl": write_jsonl(out / "verbosity.jsonl", verbosity_pairs(qs, seed)),
        "writers.jsonl": write_jsonl(out / "writers.jsonl", writer_pairs(qs, seed)),
    }
    return counts


if __name__ == "__main__":
    for name, count in main().items():
        print(f"wrote {count:4d} rows to {DATA_DIR / name}")
