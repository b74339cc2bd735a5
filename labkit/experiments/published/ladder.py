"""The oracle-strength ladder of the Reflexion runs, read from the recording (never re-graded here).

`python -m labkit.experiments.published ladder [--json]` prints, for each run and rung,
{"passed": n, "total": n} (a rung with no verdicts says why: "not available" or "not
computed"), the logged `is_solved` count, the paper's published pass@1 (Table 1 of Shinn et al.
2023, a cited figure, not computed here) and "disagreements_with_log": the problems where
labkit's `check` verdict differs from the logged `is_solved`, each with its cause from
disagreements.json (found by reading the authors' grader; see SOURCE.md).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labkit.core.errors import ReferenceDataMissing
from labkit.core.paths import read_recording
from labkit.experiments.published.reflexion_logs import RUNS, load_runs, tables_dir
from labkit.experiments.published.regrade import RUNGS

__all__ = [
    "PUBLISHED",
    "Disagreement",
    "disagreements",
    "ladder",
    "load_recording",
    "main",
    "table",
]

REGRADE = "python -m labkit.experiments.published regrade"
# Table 1 of Shinn et al. 2023 (pass@1, %). The single-shot figures are the paper's "GPT-4" column;
# for HumanEval that 80.1 is not the single-shot log here (its own is_solved count is 141/164).
PUBLISHED = {
    "reflexion-humaneval": 91.0,
    "simple-humaneval": 80.1,
    "reflexion-mbpp": 77.1,
    "simple-mbpp": 80.1,
}


@dataclass(frozen=True, kw_only=True)
class Disagreement:
    """A problem where labkit's `check` verdict and the logged is_solved differ, and why."""

    run: str
    task_id: str
    labkit: bool
    logged: bool
    reason: str  # labkit's failing test and message ("" when labkit passed)
    cause: str | None  # from disagreements.json; None when no cause is written down yet
    evidence: str | None


def load_recording(path: Path | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """ladder.jsonl's rows and ladder.meta.json (ReferenceDataMissing naming the file and command)."""
    path = path or tables_dir() / "ladder.jsonl"
    meta = read_recording(path.with_suffix(".meta.json"), REGRADE)
    if not path.is_file():
        raise ReferenceDataMissing(f"{path} is missing: record it with `{REGRADE}`")
    try:
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReferenceDataMissing(f"{path} cannot be read ({e}): record it again with `{REGRADE}`") from e
    return rows, meta


def _causes(path: Path) -> dict[tuple[str, str], Mapping[str, Any]]:
    if not path.is_file():
        return {}
    data = read_recording(path, "written by hand from the authors' grader (see SOURCE.md)")
    return {(d["run"], d["task_id"]): d for d in data["disagreements"]}


def disagreements(rows: Sequence[Mapping[str, Any]], causes_path: Path | None = None) -> list[Disagreement]:
    """Every (run, task) whose recorded `check` verdict differs from the logged is_solved."""
    logged = {(r["run"], r["task_id"]): bool(r["is_solved"]) for r in load_runs().to_dicts()}
    causes = _causes(causes_path or tables_dir() / "disagreements.json")
    out = []
    for r in rows:
        key = (r["run"], r["task_id"])
        if r["rung"] == "check" and r["passed"] != logged[key]:
            c = causes.get(key, {})
            out.append(
                Disagreement(
                    run=key[0],
                    task_id=key[1],
                    labkit=r["passed"],
                    logged=logged[key],
                    reason=r["reason"],
                    cause=c.get("cause"),
                    evidence=c.get("evidence"),
                )
            )
    return out


def ladder(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """{run: {rung: {"passed", "total"[, "status"]}, "logged": ..., "published_pass_at_1": ...,
    "disagreements_with_log": [...]}} from the recording."""
    rows, meta = load_recording(path)
    unavailable: Mapping[str, Mapping[str, Mapping[str, int]]] = meta.get("unavailable", {})
    runs = load_runs()
    out: dict[str, dict[str, Any]] = {}
    found = disagreements(rows)
    for run in RUNS:
        entry: dict[str, Any] = {}
        for rung in RUNGS:
            mine = [r for r in rows if r["run"] == run and r["rung"] == rung]
            cell: dict[str, Any] = {"passed": sum(r["passed"] for r in mine), "total": len(mine)}
            why = unavailable.get(run, {}).get(rung)
            if not mine:
                status = "; ".join(why) if why else f"not recorded: run `{REGRADE} --runs {run} --rungs {rung}`"
                cell = {"passed": None, "total": None, "status": status}
            elif why:
                cell["not_graded"] = dict(why)  # some problems had no suite on this rung
            entry[rung] = cell
        logged = runs.filter(runs["run"] == run)
        entry["logged"] = {"passed": int(logged["is_solved"].sum()), "total": logged.height}
        entry["published_pass_at_1"] = PUBLISHED[run]
        entry["disagreements_with_log"] = [
            {"task_id": d.task_id, "labkit": d.labkit, "logged": d.logged, "cause": d.cause}
            for d in found
            if d.run == run
        ]
        out[run] = entry
    return out


def table(summary: Mapping[str, Mapping[str, Any]]) -> str:
    """The ladder as a plain text table for people: passed/total per run and rung."""
    cols = ["logged is_solved", *RUNGS, "paper pass@1 %"]
    lines = [" | ".join(["run", *cols]), " | ".join(["---"] * (len(cols) + 1))]
    notes: dict[str, str] = {}
    for run, e in summary.items():
        cells = [f"{e['logged']['passed']}/{e['logged']['total']}"]
        for rung in RUNGS:
            c = e[rung]
            if c["total"] is None:
                mark = "n/a" if c["status"].startswith("not available") else "not computed"
                notes[f"{run} {rung}"] = c["status"]
                cells.append(mark)
            else:
                cells.append(f"{c['passed']}/{c['total']}")
        cells.append(f"{e['published_pass_at_1']:.1f}")
        lines.append(" | ".join([run, *cells]))
    lines.append("")
    lines.append(
        "Published run, re-graded by labkit (isolated validator). Disagreements with the log (check vs is_solved):"
    )
    for run, e in summary.items():
        for d in e["disagreements_with_log"]:
            verdict = f"labkit {'pass' if d['labkit'] else 'fail'}, logged {'solved' if d['logged'] else 'unsolved'}"
            lines.append(f"  {run} {d['task_id']}: {verdict}: {d['cause'] or 'cause not written down yet'}")
    lines += ["", "Rungs without verdicts:"] + [f"  {k}: {v}" for k, v in sorted(notes.items())]
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m labkit.experiments.published ladder",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--recording",
        type=Path,
        default=None,
        help="default: data/published/reflexion/ladder.jsonl",
    )
    a = p.parse_args(list(argv))
    summary = ladder(a.recording)
    print(json.dumps(summary, indent=1) if a.json else table(summary))
    return 0
