"""Numbers the README quotes come from the code: each is recomputed here from the recording or run
that produced it, so a README that drifts from what labkit measures fails."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _row(start: str) -> str:
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| {start}"):
            return line
    raise AssertionError(f"README has no table row starting {start}")


def test_the_memory_row_quotes_the_counterexample_recording() -> None:
    from labkit.experiments.memory import counterexample as ce

    table = ce.load().result.table()
    catalogue = {r["key"]: r for r in table.iter_rows(named=True) if r["database"] == "public catalogue"}
    before, after = catalogue["product_id"], catalogue["(user_id, product_id)"]
    quoted = re.search(
        r"(\d[\d,]*) → (\d[\d,]*) cache entries, hit rate (\d\.\d{3}) → (\d\.\d{3})",
        _row("`memory.py`"),
    )
    assert quoted, "the memory row no longer quotes the counterexample's entries and hit rates"
    entries = tuple(int(g.replace(",", "")) for g in quoted.group(1, 2))
    rates = tuple(float(g) for g in quoted.group(3, 4))
    assert entries == (before["cache entries"], after["cache entries"])
    assert rates == (round(before["hit rate"], 3), round(after["hit rate"], 3))


def test_layer_metrics_are_cited_from_seed_002_section_7() -> None:
    # seed 002 §7 ("将预算用在可区分的解释上") lists the layer's metrics; §6 is long projects
    assert "layer metrics (seed 002 §7)" in _row("`lessons.py` §5")


def test_the_published_ladder_table_is_the_recordings() -> None:
    from labkit.experiments.published import ladder
    from labkit.experiments.published import reflexion_logs as reflexion

    rows, _ = ladder.load_recording()
    runs = reflexion.load_runs()
    names = {
        "Reflexion, HumanEval": "reflexion-humaneval",
        "single-shot, HumanEval": "simple-humaneval",
        "Reflexion, MBPP": "reflexion-mbpp",
        "single-shot, MBPP": "simple-mbpp",
    }
    rungs = ("own_tests", "visible", "check", "differential_raw", "differential_contract")
    for label, run in names.items():
        cells = [c.strip() for c in _row(label).strip("|").split("|")]
        logged = int(runs.filter(runs["run"] == run)["is_solved"].sum())
        graded = [[r["passed"] for r in rows if r["run"] == run and r["rung"] == g] for g in rungs]
        expected = [str(logged)] + [str(sum(g)) if g else "—" for g in graded]
        assert cells[1:7] == expected, label


def test_the_triage_row_quotes_the_triage_recording() -> None:
    from labkit.experiments.lessons import triage

    patches, probe = triage.summarise(triage.read(), ("data", "environment"))
    row = [line for line in README.read_text(encoding="utf-8").splitlines() if "discriminate (seed 002 §7)" in line]
    assert len(row) == 1
    quoted = re.search(
        r"on (\d+) scripted cases .* at (\d+) units each, three code patches end correct on "
        r"(\d+)/(\d+) for (\d+) units, .* on (\d+)/(\d+) for (\d+)",
        row[0],
    )
    assert quoted, "the triage row no longer quotes its figures"
    assert tuple(int(g) for g in quoted.groups()) == (
        patches.cases,
        int(triage.BUDGET),
        patches.correct,
        patches.cases,
        int(patches.spent),
        probe.correct,
        probe.cases,
        int(probe.spent),
    )
