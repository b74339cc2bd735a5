"""The section "Merging parts: premises and dependents" (issue 24, seed 002 §6), for both twins.

Everything shown is read from the recording `data/long_projects/merge_recording.json`
(`python -m labkit.experiments.long_projects.merge --record`): the page opens without running
a check. The parts and repairs are scripted; every check in the recording ran for real in
labkit's validator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import polars as pl

from labkit.experiments.long_projects.merge import read_recorded
from labkit.experiments.long_projects.merge_graph import Dag, Edge

__all__ = [
    "CRITIQUES",
    "Cell",
    "POLICY_NAMES",
    "STATUS_COLOURS",
    "cells",
    "critiques_frame",
    "dag_of",
    "merge_frame",
    "merge_md",
    "recorded",
    "stale_chart",
]

POLICY_NAMES = {
    "naive": "naive: accept every part whose local tests pass",
    "repair_only": "repair, no re-check",
    "recheck_all": "repair, re-check everything",
    "dependency_aware": "repair, re-check what the graph marks stale",
}
STATUS_COLOURS = {
    "verified": "#4c9a2a",
    "refuted, repaired": "#d62728",
    "still valid (not re-run)": "#c7e9c0",
    "stale": "#ff9f1c",
    "stale, accepted unchecked": "#8c2d04",
    "not checked yet": "#e0e0e0",
}
CRITIQUES = """### Critiques kept at aggregation

Each refutation the merge acted on, as the ledger keeps it (a `critique` event per refuted
interface, dependency-aware merge): the check's own smallest counterexample, the premise the
repair changed, and whether the repair held on the check it refuted."""
_STAGES = {1: "1 local tests", 2: "2 interfaces"}  # then "3 re-check", ...


def recorded() -> dict[str, Any]:
    """The recording (read whole; a missing file names the command that makes it)."""
    return read_recorded()


def dag_of(rec: Mapping[str, Any]) -> Dag:
    edges = tuple(Edge(e["producer"], e["consumer"], e["carries"], "") for e in rec["edges"])
    return Dag(tuple(rec["parts"]), edges)


def _check_name(check: str) -> str:
    if check.startswith("local:"):
        return f"{check.removeprefix('local:')} (its own tests)"
    a, b = check.removeprefix("edge:").split("->")
    return f"{a} → {b}"


def merge_md(rec: Mapping[str, Any]) -> str:
    """The section's text, its numbers read from the recording."""
    p = rec["policies"]
    naive, only, aware, every = (
        p["naive"],
        p["repair_only"],
        p["dependency_aware"],
        p["recheck_all"],
    )
    edges = ", ".join(f"{e['producer']} → {e['consumer']} ({e['carries']})" for e in rec["edges"])
    first, second = aware["critiques"][0], aware["critiques"][1]
    return f"""## Merging parts: premises and dependents

*scripted*: five parts of a receipt pipeline, written as if generated in parallel, each passing
its own local tests; every check below ran for real in labkit's validator. The plan's premise:
{rec["premise"]}. The edges: {edges}.

- **Naive merge** — every part passes its local tests, and the merge fails the integration
  tests: {naive["integration"][0]} of {naive["integration"][1]} receipts right.
- **Targeted refutation** — one counterexample search per interface finds the conflict:
  `{first["counterexample"]}`. The repair changes one premise, in {first["part"]} ({first["premise"]}).
- **Without a re-check** the integration tests pass ({only["integration"][0]} of
  {only["integration"][1]}), yet the hidden benchmark gets {only["hidden"][0]} of {only["hidden"][1]}
  receipts right: {second["part"]}'s item lines were verified under the old premise, a stale
  conclusion nobody looked at again.
- **Dependency-aware** — the graph marks stale exactly the conclusions that executed the changed
  part; re-checking them refutes one (`{second["counterexample"]}`), repaired locally:
  hidden {aware["hidden"][0]} of {aware["hidden"][1]} for {aware["recheck_cost"]:g} cost units of
  re-checks, where re-checking everything pays {every["recheck_cost"]:g} for the same result.
"""


def merge_frame(rec: Mapping[str, Any]) -> pl.DataFrame:
    """The merge table: one row per policy, what it passed and what it paid."""
    rows = []
    for key, name in POLICY_NAMES.items():
        r = rec["policies"][key]
        rows.append(
            {
                "merge": name,
                "integration (receipts right)": f"{r['integration'][0]} of {r['integration'][1]}",
                "hidden benchmark (receipts right)": f"{r['hidden'][0]} of {r['hidden'][1]}",
                "stale conclusions caught": r["stale_caught"],
                "re-checks run": sum(1 for run in r["runs"] if run["recheck"]),
                "cost units": int(r["cost_units"]),
                "of which re-checks": int(r["recheck_cost"]),
            }
        )
    return pl.DataFrame(rows)


def critiques_frame(rec: Mapping[str, Any], policy: str = "dependency_aware") -> pl.DataFrame:
    """The critiques kept at aggregation (the ledger's `critique` events, as recorded)."""
    rows = []
    for c in rec["policies"][policy]["critiques"]:
        head, _, smallest = c["counterexample"].partition("; smallest: ")
        rows.append(
            {
                "stage": c["stage"],
                "refuted conclusion": _check_name(c["check"]),
                "receipts refuting it": head.partition(" receipts")[0],
                "smallest counterexample": smallest or head,
                "premise changed": c["premise"],
                "part repaired": c["part"],
                "repair held": c["kept"],
            }
        )
    return pl.DataFrame(rows)


@dataclass(frozen=True)
class Cell:
    """One conclusion at one stage of one policy."""

    policy: str
    stage: str
    order: int
    check: str
    status: str


def cells(rec: Mapping[str, Any], policy: str) -> list[Cell]:
    """Each conclusion's status stage by stage, the moment after each repair (what it made stale:
    the checks that executed the changed part), and at the end."""
    dag = dag_of(rec)
    runs: Sequence[Mapping[str, Any]] = rec["policies"][policy]["runs"]
    state = dict.fromkeys(dag.checks(), "not checked yet")
    carried = {"verified": "still valid (not re-run)"}
    out: list[Cell] = []

    def column(label: str, status: Mapping[str, str]) -> None:
        out.extend(
            Cell(policy, label, len({c.stage for c in out}) + 1, _check_name(c), status[c]) for c in dag.checks()
        )

    for n in sorted({r["stage"] for r in runs}):
        here = {r["check"]: r for r in runs if r["stage"] == n}
        shown = {}
        for check in dag.checks():
            r = here.get(check)
            if r is None:
                shown[check] = "still valid (not re-run)" if state[check] == "verified" else state[check]
            else:
                shown[check] = "verified" if r["held"] else "refuted, repaired" if r["repaired"] else "refuted"
                state[check] = "verified" if r["held"] or r["repaired"] else "refuted"
        column(_STAGES.get(n, f"{n} re-check"), shown)
        repaired = [r for r in here.values() if r["repaired"]]
        for r in repaired:
            for check in dag.stale(r["repaired"]):
                if check != r["check"]:  # the engine verified the repair on the check it refuted
                    state[check] = "stale"
        if repaired:
            column(
                " + ".join(r["repaired"] for r in repaired) + " changed",
                {c: carried.get(v, v) for c, v in state.items()},
            )
    ending = {"stale": "stale, accepted unchecked", **carried}
    column("end", {c: ending.get(v, v) for c, v in state.items()})
    return out


def stale_chart(
    rec: Mapping[str, Any], policies: Sequence[str] = ("repair_only", "dependency_aware")
) -> alt.FacetChart:
    """The DAG's conclusions stage by stage: parts turning stale and being re-verified (or not)."""
    frame = pl.DataFrame([{**c.__dict__, "policy": POLICY_NAMES[c.policy]} for p in policies for c in cells(rec, p)])
    checks = [_check_name(c) for c in dag_of(rec).checks()]
    base = alt.Chart(frame).encode(
        x=alt.X(
            "stage:N",
            sort=alt.EncodingSortField("order"),
            title=None,
            axis=alt.Axis(labelAngle=-35),
        ),
        y=alt.Y("check:N", sort=checks, title=None),
    )
    rects = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color(
            "status:N",
            title="conclusion",
            scale=alt.Scale(domain=list(STATUS_COLOURS), range=list(STATUS_COLOURS.values())),
        ),
        tooltip=["policy", "stage", "check", "status"],
    )
    return (
        rects.properties(width=alt.Step(34), height=alt.Step(22))
        .facet(column=alt.Column("policy:N", title=None, sort=[POLICY_NAMES[p] for p in policies]))
        .resolve_scale(x="independent")
        .properties(title="Conclusions stage by stage (scripted parts; every check run in the validator)")
    )
