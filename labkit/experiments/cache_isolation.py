"""Worked example A: the cache-isolation case (SPEC §4), run for real.

Every number here comes from running the protected acceptance on real candidates in a
pytest subprocess: v1 (key = product_id), v2 (key = (user_id, product_id)), the tempting
"disable the cache" and the five-changes-at-once rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from labkit.core.types import Candidate, Decision, DecisionRecord, Verdict
from labkit.grading.cases import Case, load_case
from labkit.grading.validator import Validator
from labkit.loop.engine import Trace, assess, run_loop
from labkit.loop.engine.reflection import Experience
from labkit.loop.strategies.handwritten import HandWritten
from labkit.loop.strategies.reflector import ModelReflector

if TYPE_CHECKING:
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

CASE = "cache_isolation"
BRANCHES = {
    "main": "observe the keys, then the composite key",
    "tempting": "disable the cache first (blocked by the protective tests)",
    "five": "five changes at once first (green but not attributable)",
    "invalid": "unusable reflections first (the loop does not trust the reflector)",
}
OFFLINE_MODEL = "labkit/replay"


def case() -> Case:
    return load_case(CASE)


def reflector(branch: str = "main", model: str | None = None) -> ModelReflector:
    """No model: the branch's authored transcript, replayed (labelled scripted); a model string asks that model.

    A storyline is scripted whatever the environment says: $LABKIT_MODEL is never read here,
    only by the controls that ask a real model (they pass it in as `model`).
    """
    if branch not in BRANCHES:
        raise ValueError(f"unknown branch {branch!r}; choose one of {sorted(BRANCHES)}")
    c = case()
    name = model or OFFLINE_MODEL
    transcript = c.root / "transcript.jsonl" if name.startswith(OFFLINE_MODEL) else None
    return ModelReflector(model=name, environment=c.environment, transcript=transcript, branch=branch)


def run(
    branch: str = "main",
    *,
    model: str | None = None,
    validator: Validator | None = None,
    ledger: Ledger | None = None,
    budget: Budget | None = None,
    run_id: str = "",
    max_rounds: int = 5,
) -> Trace:
    """Run the loop on v1 with the chosen reflector branch (or a real model)."""
    c = case()
    return run_loop(
        c.start,
        c.suite,
        validator or Validator(),
        reflector(branch, model),
        max_rounds=max_rounds,
        patch_cap=dict(c.patch_cap),
        ledger=ledger,
        budget=budget,
        run_id=run_id or f"cache-{branch}",
    )


@dataclass(frozen=True)
class Row:
    candidate: str
    verdict: Verdict
    decision: DecisionRecord
    size: str


def compare(validator: Validator | None = None, ledger: Ledger | None = None) -> tuple[pl.DataFrame, list[Row]]:
    """The chapter's table, measured by the engine: v1 validated, then one round in which the
    three candidate patches are rival children, each validated and decided against v1."""
    from labkit.experiments.case_task import task_of
    from labkit.loop.engine import run
    from labkit.loop.strategies.rewrite import Rivals

    c = case()
    names = ("composite_key", "disable_cache", "five_changes")
    task = task_of(c)
    out = run(
        [task],
        Rivals(tuple((n, c.patch(n)) for n in names)),
        validator or Validator(),
        rounds=1,
        ledger=ledger,
        run_id="cache-compare",
    )
    trace = out.traces[task.id]
    v1 = trace.start_verdict
    rows = [Row(c.start.label, v1, assess(v1), "")]
    for a in trace.rounds[0].attempts:
        assert a.retest is not None and a.size is not None, a.decision.reason
        s = a.size
        rows.append(Row(c.patch(a.child.name).description, a.retest, a.decision, f"{s.files}f/{s.hunks}h/{s.lines}l"))
    return table(c, rows), rows


# The chapter's table, measured once and recorded: the page reads it on open (four pytest runs
# saved), tests/test_cache_case.py measures it again with `compare()` and asserts the same rows.
COMPARE_COMMAND = "python -m labkit.experiments.cache_isolation --write"
DEPENDS_ON = ("polars", "pytest")  # the validator runs pytest; the table is a polars frame


def _compare_recording() -> Path:
    from labkit.core.paths import data_root

    return data_root() / CASE / "compare.json"


def write_compare() -> Path:
    """Measure the chapter's table (`compare()`) and record it with the package versions it depends on."""
    import json

    from labkit.core.versions import package_versions

    path = _compare_recording()
    data = {"label": "recorded real run: v1 and three patches, one engine round, real validator",
            "command": COMPARE_COMMAND, "rows": compare()[0].to_dicts(), "versions": package_versions(DEPENDS_ON)}  # fmt: skip
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def compare_record() -> dict[str, Any]:
    """The recording as stored (label, command, rows, package versions)."""
    from labkit.core.paths import read_recording

    return read_recording(_compare_recording(), COMPARE_COMMAND)


def recorded_table() -> pl.DataFrame:
    """The chapter's table as recorded (what the page shows on open)."""
    return pl.DataFrame(compare_record()["rows"])


def table(c: Case, rows: list[Row]) -> pl.DataFrame:
    def frac(v: Verdict, group: str) -> str:
        ok, n = c.suite.score(v, group)
        return f"{ok}/{n}"

    return pl.DataFrame(
        {
            "candidate": [r.candidate for r in rows],
            "isolation": [frac(r.verdict, "isolation") for r in rows],
            "same-user hit": [frac(r.verdict, "same-user hit") for r in rows],
            "failing tests alone": ["pass" if not r.verdict.fail_to_fail else "fail" for r in rows],
            "patch size": [r.size or "—" for r in rows],
            "decision": [
                "reflect" if r.decision.decision is Decision.INVESTIGATE else r.decision.decision.value for r in rows
            ],
            "why": [r.decision.reason for r in rows],
        }
    )


def distill(trace: Trace, model: str | None = None, branch: str = "main") -> Experience:
    """The conditioned lesson, with provenance pointing at the run that verified it."""
    if trace.final_verdict.resolved is False:
        raise ValueError("only a verified correction yields experience; this run did not resolve")
    exp = reflector(branch, model).distill(
        f"Run {trace.run_id}: kept {trace.final.label!r}; final verdict {trace.final_verdict.report()}"
    )
    kept = next(r for r in trace.rounds if r.decision.decision is Decision.KEEP)
    return replace(exp, source=f"run {trace.run_id}, round {kept.index}: {exp.source}")


# --- try your own patch ------------------------------------------------------------------

# What a student starts from: a well-formed diff of the one line that decides the cache key,
# changed only by a comment. Run as is, it fixes nothing (and the loop says so).
PHENOMENON = "user B is served user A's cached price"
PATCH_TEMPLATE = """--- a/pricing.py
+++ b/pricing.py
@@ -27,2 +27,2 @@
     def cache_key(self, user_id, product_id):
-        return product_id
+        return product_id  # edit this line: what must the key contain?
"""


def try_patch(
    hypothesis: str,
    diff: str,
    *,
    refuted_if: str = "",
    validator: Validator | None = None,
    ledger: Ledger | None = None,
    run_id: str = "cache-yours",
) -> Trace:
    """One round on v1 with a hand-written hypothesis and diff: the same protected validator,
    patch-size cap and decision as every other round. Never raises for a bad diff or an empty
    hypothesis: the round says why it could not be tested ("keep investigating")."""
    c = case()
    return run_loop(
        c.start,
        c.suite,
        validator or Validator(),
        HandWritten(
            hypothesis=hypothesis, diff=diff, refuted_if=refuted_if, phenomenon=PHENOMENON, environment=c.environment
        ),
        max_rounds=1,
        patch_cap=dict(c.patch_cap),
        ledger=ledger,
        run_id=run_id,
        on_alarm="stop",  # one hand-written try: an alarm ends it, and the page says so
    )


NO_LESSON = "no verified correction, so no lesson"


def lesson(trace: Trace, model: str | None = None, branch: str = "main") -> Experience | None:
    """The distilled lesson of a run that resolved, else None (show NO_LESSON): never an error."""
    if not trace.final_verdict.resolved or not any(r.decision.decision is Decision.KEEP for r in trace.rounds):
        return None
    return distill(trace, model, branch)


LEAK_PRICES = {("alice", "p1"): 100, ("bob", "p1"): 80}  # each user's own price in the demo database


def leak_demo(candidate: Candidate | None = None) -> list[tuple[str, str, int, int]]:
    """The leak itself, run in a subprocess: (user, product, price served, own price) for A then B."""
    from labkit.loop.engine.probe import Experiment, observe

    probe = (
        "from pricing import PriceDatabase, PriceService\n"
        f"s = PriceService(PriceDatabase({LEAK_PRICES!r}))\n"
        "for user in ('alice', 'bob'):\n"
        "    print(user, 'p1', s.price(user, 'p1'))\n"
    )
    obs = observe(candidate or case().start, Experiment("who gets which price", probe))
    out = []
    for line in obs.output.splitlines():
        user, product, price = line.split()
        out.append((user, product, int(price), LEAK_PRICES[(user, product)]))
    return out


if __name__ == "__main__":
    import sys

    if "--write" not in sys.argv[1:]:
        raise SystemExit(f"usage: {COMPARE_COMMAND}")
    print(write_compare())
