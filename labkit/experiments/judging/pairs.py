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
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from labkit.core.paths import DATA
from labkit.experiments.judging.questions import Question, make_questions

Label = Literal[0, 1, 2]  # 1: output_1 is better, 2: output_2 is better, 0: tie / equal quality
Format = Literal["auto", "labkit", "mtbench", "llmbar"]

DATA_DIR = DATA / "judge"


@dataclass(frozen=True, kw_only=True)
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
        return Pair(
            id=self.id,
            question=self.question,
            output_1=self.output_2,
            output_2=self.output_1,
            label=label,
            kind=self.kind,
            model_1=self.model_2,
            model_2=self.model_1,
            quality_1=self.quality_2,
            quality_2=self.quality_1,
            question_id=self.question_id,
        )


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


def _ordered(
    r: random.Random, pid: str, q: Question, kind: str, good: tuple[str, str, float], other: tuple[str, str, float]
) -> Pair:
    """A pair with `good` in a random slot. Entries are (text, model, quality)."""
    first, second = (good, other) if r.random() < 0.5 else (other, good)
    q1, q2 = first[2], second[2]
    label: Label = 0 if q1 == q2 else (1 if q1 > q2 else 2)
    return Pair(
        id=pid,
        question=q.text,
        output_1=first[0],
        output_2=second[0],
        label=label,
        kind=kind,
        model_1=first[1],
        model_2=second[1],
        quality_1=q1,
        quality_2=q2,
        question_id=q.id,
    )


def correctness_pairs(questions: Iterable[Question], seed: int = 0) -> list[Pair]:
    """A correct and an incorrect worked answer, same style, correct one in a random slot."""
    r = random.Random(seed)
    return [
        _ordered(
            r,
            f"c-{q.id}",
            q,
            "correctness",
            (concise(q.working, q.answer), "reference", 1.0),
            (concise(q.wrong_working, q.wrong_answer), "reference-wrong", 0.0),
        )
        for q in questions
    ]


def verbosity_pairs(questions: Iterable[Question], seed: int = 0) -> list[Pair]:
    """The same correct answer concise and padded (label 0: equal quality), plus the harder
    case of a padded wrong answer against a concise right one."""
    r = random.Random(seed)
    out = []
    for q in questions:
        out.append(
            _ordered(
                r,
                f"v-{q.id}",
                q,
                "verbosity",
                (concise(q.working, q.answer), "concise", 1.0),
                (padded(q.working, q.answer, r), "padded", 1.0),
            )
        )
        out.append(
            _ordered(
                r,
                f"vw-{q.id}",
                q,
                "verbosity_wrong",
                (concise(q.working, q.answer), "concise", 1.0),
                (padded(q.wrong_working, q.wrong_answer, r), "padded-wrong", 0.0),
            )
        )
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
            out.append(
                Pair(
                    id=f"w-{name.split('/')[1]}-{q.id}",
                    question=q.text,
                    output_1=_write(q, ok, style, r),
                    output_2=b_text,
                    label=label,
                    kind="writer",
                    model_1=name,
                    model_2=base,
                    quality_1=float(ok),
                    quality_2=float(b_ok),
                    question_id=q.id,
                )
            )
    return out


def self_pairs(questions: Iterable[Question], own: dict[str, str], judge: str, seed: int = 0) -> list[Pair]:
    """The judge's own answer against the project's reference answer, kept only where the own
    answer is correct, so both outputs have equal quality. `own` maps question id -> own text."""
    r = random.Random(seed)
    return [
        _ordered(r, f"s-{q.id}", q, "self", (own[q.id], judge, 1.0), (concise(q.working, q.answer), "reference", 1.0))
        for q in questions
        if q.id in own and q.is_correct(own[q.id])
    ]


def battery(
    questions: Sequence[Question], seed: int = 0, own: dict[str, str] | None = None, judge: str = ""
) -> list[Pair]:
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
