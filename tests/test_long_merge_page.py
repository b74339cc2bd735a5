"""The merge section's views (labkit.views.long_merge): read from the recording, no check runs."""

from __future__ import annotations

from labkit.views import long_merge as page
from labkit.views.jupyter import static_chart

REC = page.recorded()
DAG = page.dag_of(REC)


def _end(policy: str) -> dict[str, str]:
    return {c.check: c.status for c in page.cells(REC, policy) if c.stage == "end"}


def test_without_the_recheck_the_stale_conclusions_end_accepted_unchecked() -> None:
    stale = {page._check_name(c) for c in DAG.stale("units")} - {"units → discount"}  # verified on the repair
    assert {k for k, v in _end("repair_only").items() if v == "stale, accepted unchecked"} == stale
    assert "stale, accepted unchecked" not in _end("dependency_aware").values()
    assert "stale, accepted unchecked" not in _end("recheck_all").values()


def test_the_chart_shows_parts_turning_stale_then_re_verified() -> None:
    aware = page.cells(REC, "dependency_aware")
    stages = list(dict.fromkeys(c.stage for c in aware))
    assert stages == [
        "1 local tests",
        "2 interfaces",
        "units changed",
        "3 re-check",
        "format changed",
        "4 re-check",
        "end",
    ]
    turned = {c.check for c in aware if c.stage == "units changed" and c.status == "stale"}
    redone = {c.check for c in aware if c.stage == "3 re-check" and c.status in ("verified", "refuted, repaired")}
    assert turned == redone == {"units (its own tests)", "parse → units", "units → format"}
    assert static_chart(page.stale_chart(REC)).svg.startswith("<svg")


def test_the_tables_and_text_carry_the_recorded_numbers() -> None:
    table = page.merge_frame(REC)
    assert table["merge"].to_list() == list(page.POLICY_NAMES.values())
    row = dict(zip(table.columns, table.row(3), strict=True))
    aware = REC["policies"]["dependency_aware"]
    assert row["hidden benchmark (receipts right)"] == f"{aware['hidden'][0]} of {aware['hidden'][1]}"
    assert row["cost units"] == aware["cost_units"] and row["of which re-checks"] == aware["recheck_cost"]
    text = page.merge_md(REC)
    assert text.startswith("## Merging parts: premises and dependents") and "*scripted*" in text
    assert aware["critiques"][1]["counterexample"] in text
    critiques = page.critiques_frame(REC)
    assert critiques["part repaired"].to_list() == ["units", "format"]
    assert critiques["receipts refuting it"].to_list() == ["200 of 200", "200 of 200"]
    assert (
        critiques["smallest counterexample"][0] == "[apple | 1 pcs | 0.45] gave net 45, the requirements say net 0.45"
    )
