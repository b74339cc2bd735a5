"""Rich tables for the CLI: a verdict's F2P/P2P table, a trace's rounds, a ledger's summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:
    import polars as pl

    from labkit.core.types import Candidate, Verdict
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.cases import Case
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker
    from labkit.loop.engine import Trace
    from labkit.loop.engine.strategy import Child, Proposal, Situation

__all__ = ["ledger_tables", "patches_table", "rounds_table", "verdict_table"]

_STYLE = {
    "passed": "green",
    "failed": "red",
    "error": "red",
    "skipped": "yellow",
    "missing": "yellow",
}


def verdict_table(verdict: Verdict, suite: AcceptanceSuite, title: str) -> Table:
    """One row per required test: its bucket (F2P or P2P), outcome and the first message line."""
    table = Table(title=title, title_justify="left")
    for col in ("bucket", "test", "outcome", "message"):
        table.add_column(col, overflow="fold")
    by_id = {r.nodeid: r for r in verdict.evidence.results}
    for bucket, ids in (("F2P", suite.fail_to_pass), ("P2P", suite.pass_to_pass)):
        for nodeid in ids:
            r = by_id.get(nodeid)
            outcome = r.outcome if r else "missing"
            message = (r.message.splitlines() or [""])[0][:120] if r and r.message else ""
            table.add_row(bucket, nodeid, f"[{_STYLE[outcome]}]{outcome}[/]", message)
    a, n = verdict.score("acceptance")
    p, m = verdict.score("protective")
    table.caption = (
        f"acceptance (F2P) {a}/{n} · protective (P2P) {p}/{m}"
        + (" · QUARANTINED: " + "; ".join(verdict.evidence.alarms) if verdict.quarantined else "")
        + (
            f" · {verdict.status}: {', '.join(verdict.evidence.unchecked)}"
            if verdict.resolved and not verdict.cross_checked
            else ""
        )
    )
    table.caption_justify = "left"
    return table


@dataclass(frozen=True)
class _EveryPatch:
    """A scripted strategy for one round: every named patch of the case, as rival children."""

    children: tuple[Child, ...]
    name: str = "the case's named patches"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        from labkit.loop.engine.strategy import Proposal

        return Proposal(children=self.children, note="each named patch, judged against the start")


def patches_table(case: Case, validator: Validator, start: Verdict) -> Table:
    """Each named patch offered to the engine for one round against the start: step 4 (protected
    paths, the case's size cap, apply), step 5 (re-test, same validator) and step 6 (decide) are
    the engine's, so a patch is judged exactly as the loop would judge it. The size is the change
    from the start (a patch based on another patch carries its base). Hidden tests, if any, are
    scored afterwards in one batch: the loop never sees them."""
    from labkit.core import patch as patches
    from labkit.grading.verdicts import Checker, VerdictCache
    from labkit.loop import engine
    from labkit.loop.engine.strategy import Child

    def candidate(name: str) -> Candidate:
        base = case.patch_specs[name].base if name in case.patch_specs else "original"
        root = case.start if base in ("original", "start") else candidate(base)
        return patches.apply(root, case.patch(name), label=name)

    checker = Checker(validator, VerdictCache())
    checker.cache.put(checker.key(case.start, case.suite), start)  # the start's verdict: not run again
    offered = _EveryPatch(tuple(Child(target=candidate(n), name=n, source="patch") for n in case.patches))
    task = engine.Task(id=case.name, start=case.start, suite=case.suite, patch_cap=case.patch_cap)
    run = engine.run([task], offered, checker, rounds=1, stop_at_green=False)
    attempts = run.traces[task.id].rounds[0].attempts if run.traces[task.id].rounds else ()
    if case.hidden is not None:  # scored only, in one batch
        checker.warm([(a.patched, case.hidden) for a in attempts if a.patched is not None])

    table = Table(title="patches, each judged against the start", title_justify="left")
    hidden = ("hidden F2P", "hidden P2P") if case.hidden is not None else ()
    for col in ("patch", "size", "F2P", "P2P", *hidden, "decision", "why"):
        table.add_column(col, overflow="fold")
    for a in attempts:
        name, p = a.child.name, case.patches[a.child.name]
        verdicts = [a.retest] + ([_lookup(checker, a.patched, case.hidden)] if case.hidden is not None else [])
        scores = [f"{x}/{n}" for v in verdicts for x, n in _scores(v)]
        size = f"{a.size.files}f/{a.size.hunks}h/{a.size.lines}l" if a.size is not None else "-"
        table.add_row(
            f"{name} ({p.description})" if p.description != name else name,
            size,
            *scores,
            a.decision.decision.value,
            a.decision.reason,
        )
    return table


def _lookup(checker: Checker, candidate: Candidate | None, suite: AcceptanceSuite) -> Verdict | None:
    return checker.lookup(candidate, suite) if candidate is not None else None


def _scores(v: Verdict | None) -> list[tuple[str, str]]:
    """Acceptance and protective passing/required ("-" when there is no verdict to read)."""
    if v is None:
        return [("-", "-"), ("-", "-")]
    (a, n), (p, m) = v.score("acceptance"), v.score("protective")
    return [(str(a), str(n)), (str(p), str(m))]


def rounds_table(trace: Trace) -> Table:
    """Each round: what the reflector proposed, the decision and why."""
    kind = "scripted" if trace.simulated else "model"
    table = Table(title=f"run {trace.run_id} · reflector {trace.reflector} ({kind})", title_justify="left")
    for col in ("round", "hypothesis / request", "F2P", "P2P", "decision", "why"):
        table.add_column(col, overflow="fold")
    for r in trace.rounds:
        rec = r.reflection.record
        said = rec.hypothesis.cause if rec else ""
        if r.reflection.experiment is not None or r.observations:
            said = f"(observed {len(r.observations)}×) {said}"
        after = r.retest or r.verdict
        a, n = after.score("acceptance")
        p, m = after.score("protective")
        table.add_row(
            str(r.index),
            said[:160],
            f"{a}/{n}",
            f"{p}/{m}",
            r.decision.decision.value,
            r.decision.reason,
        )
    return table


def ledger_tables(rounds: pl.DataFrame) -> list[Table]:
    """Per run: each round's decision and why, and its cost, from `Ledger.rounds()` (each
    charge counted once), figures rounded and labelled with their units."""
    from labkit.record.usage import readable

    tables = []
    for (run_id,), rows in rounds.group_by(["run_id"], maintain_order=True):
        t = Table(title=f"run {run_id}", title_justify="left")
        for col, right in (
            ("round", True),
            ("decision", False),
            ("why", False),
            ("cost units", True),
            ("tokens", True),
            ("seconds", True),
        ):
            t.add_column(col, overflow="fold", justify="right" if right else "left")
        stop = ""
        for row in rows.iter_rows(named=True):
            label = row["decision"] or ("start" if row["round"] == 0 else "")
            t.add_row(
                str(row["round"]),
                label,
                readable(row["reason"]),
                f"{row['cost_units']:g}",
                str(row["tokens"]),
                f"{row['wall_seconds']:.1f}",
            )
            stop = row["stop"] or stop
        total = rows["cost_units"].sum()
        source = rows["counted_from"][0]
        last = max(rows["round"].to_list())
        t.caption = (
            f"stop: {readable(stop) or '(none recorded)'}\n{last} round(s) · "
            f"{total:g} cost units in all, counted once (from the {source}'s "
            f"{'charges' if source == 'budget' else 'own usage'})"
        )
        t.caption_justify = "left"
        tables.append(t)
    return tables
