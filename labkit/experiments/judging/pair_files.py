"""Reading judge material from files: the project's own JSONL, MT-Bench and LLMBar pairs.

Every malformed line is a PairFormatError naming the file, the line and the field, so a
researcher pointing the lab at their own data learns exactly what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from labkit.core.errors import PairFormatError
from labkit.experiments.judging.pairs import DATA_DIR, Format, Label, Pair
from labkit.experiments.judging.questions import Question


def load_questions(path: Path | str | None = None) -> list[Question]:
    """Questions written by `python -m labkit.experiments.judging.pairs` (default data/judge/questions.jsonl)."""
    p = Path(path) if path else DATA_DIR / "questions.jsonl"
    fields = set(Question.__dataclass_fields__)
    out = []
    for lineno, row in _rows(p):
        _require(row, fields, p, lineno, "labkit questions")
        out.append(Question(**{k: str(row[k]) for k in fields}))
    return out


def load_pairs(path: Path | str, format: Format = "auto") -> list[Pair]:
    """Pairs from a JSONL file in labkit, MT-Bench (human judgments) or LLMBar format.

    "auto" decides per file from the first line's fields. A malformed line raises
    PairFormatError naming the file, line and field; nothing is skipped silently.
    """
    p = Path(path)
    rows = list(_rows(p))
    if not rows:
        raise PairFormatError(f"{p}: no pairs (the file is empty)")
    fmt = _detect(rows[0][1], p) if format == "auto" else format
    parse = {"labkit": _from_labkit, "mtbench": _from_mtbench, "llmbar": _from_llmbar}.get(fmt)
    if parse is None:
        raise PairFormatError(f"{p}: unknown format {fmt!r}; use labkit, mtbench or llmbar")
    return [parse(row, p, lineno) for lineno, row in rows]


def _rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise PairFormatError(f"{path}: no such file")
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise PairFormatError(f"{path}:{lineno}: not valid JSON ({e.msg} at column {e.colno})") from None
            if not isinstance(row, dict):
                raise PairFormatError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            yield lineno, row


def _detect(row: dict[str, Any], path: Path) -> str:
    keys = set(row)
    if {"output_1", "output_2", "question"} <= keys:
        return "labkit"
    if {"input", "output_1", "output_2"} <= keys:
        return "llmbar"
    if {"model_a", "model_b", "winner"} <= keys:
        return "mtbench"
    raise PairFormatError(
        f"{path}:1: cannot tell the format from fields {sorted(keys)}; expected labkit "
        "(question, output_1, output_2), LLMBar (input, output_1, output_2, label) or MT-Bench "
        "(model_a, model_b, winner, conversation_a, conversation_b)"
    )


def _require(row: dict[str, Any], fields: Iterable[str], path: Path, lineno: int, fmt: str) -> None:
    missing = [f for f in fields if f not in row]
    if missing:
        raise PairFormatError(
            f"{path}:{lineno}: missing field {missing[0]!r} ({fmt} format needs {', '.join(sorted(fields))})"
        )


def _text(row: dict[str, Any], field: str, path: Path, lineno: int) -> str:
    v = row[field]
    if not isinstance(v, str):
        raise PairFormatError(f"{path}:{lineno}: field {field!r} must be a string, got {type(v).__name__}")
    return v


def _from_labkit(row: dict[str, Any], path: Path, lineno: int) -> Pair:
    _require(row, ("id", "question", "output_1", "output_2"), path, lineno, "labkit")
    label = row.get("label")
    if label not in (0, 1, 2, None):
        raise PairFormatError(f"{path}:{lineno}: label must be 0 (tie), 1, 2 or null, got {label!r}")
    q1, q2 = row.get("quality_1"), row.get("quality_2")
    return Pair(
        id=str(row["id"]),
        question=_text(row, "question", path, lineno),
        output_1=_text(row, "output_1", path, lineno),
        output_2=_text(row, "output_2", path, lineno),
        label=label,
        kind=str(row.get("kind", "")),
        model_1=str(row.get("model_1", "")),
        model_2=str(row.get("model_2", "")),
        quality_1=None if q1 is None else float(q1),
        quality_2=None if q2 is None else float(q2),
        question_id=str(row.get("question_id", "")),
    )


def _from_llmbar(row: dict[str, Any], path: Path, lineno: int) -> Pair:
    _require(row, ("input", "output_1", "output_2", "label"), path, lineno, "LLMBar")
    label = row["label"]
    if label not in (1, 2):
        raise PairFormatError(f"{path}:{lineno}: LLMBar label must be 1 or 2, got {label!r}")
    return Pair(
        id=str(row.get("id", f"{path.stem}-{lineno}")),
        question=_text(row, "input", path, lineno),
        output_1=_text(row, "output_1", path, lineno),
        output_2=_text(row, "output_2", path, lineno),
        label=label,
        kind="llmbar",
    )


_WINNERS: dict[str, Label] = {"model_a": 1, "model_b": 2, "tie": 0, "tie (bothbad)": 0}


def _from_mtbench(row: dict[str, Any], path: Path, lineno: int) -> Pair:
    _require(
        row,
        ("question_id", "model_a", "model_b", "winner", "conversation_a", "conversation_b"),
        path,
        lineno,
        "MT-Bench human-judgment",
    )
    winner = row["winner"]
    if winner not in _WINNERS:
        raise PairFormatError(f"{path}:{lineno}: winner must be one of {sorted(_WINNERS)}, got {winner!r}")
    turn = row.get("turn", 1)
    if not isinstance(turn, int) or turn < 1:
        raise PairFormatError(f"{path}:{lineno}: turn must be a positive integer, got {turn!r}")
    question, out_a = _turn(row["conversation_a"], turn, path, lineno, "conversation_a")
    _, out_b = _turn(row["conversation_b"], turn, path, lineno, "conversation_b")
    qid = str(row["question_id"])
    return Pair(
        id=f"mt-{qid}-{turn}-{row['model_a']}-{row['model_b']}-{lineno}",
        question=question,
        output_1=out_a,
        output_2=out_b,
        label=_WINNERS[winner],
        kind="mtbench",
        model_1=str(row["model_a"]),
        model_2=str(row["model_b"]),
        question_id=qid,
    )


def _turn(conv: Any, turn: int, path: Path, lineno: int, field: str) -> tuple[str, str]:
    """(the conversation up to the turn's user message, that turn's assistant answer)."""
    ok = isinstance(conv, list) and all(isinstance(m, dict) and "role" in m and "content" in m for m in conv)
    if not ok:
        raise PairFormatError(f"{path}:{lineno}: {field} must be a list of {{role, content}} messages")
    answers = [i for i, m in enumerate(conv) if m["role"] == "assistant"]
    if len(answers) < turn:
        raise PairFormatError(f"{path}:{lineno}: {field} has {len(answers)} assistant turn(s), turn {turn} asked for")
    end = answers[turn - 1]
    before = conv[:end]
    if len(before) == 1:
        question = str(before[0]["content"])
    else:
        question = "\n\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in before)
    return question, str(conv[end]["content"])
