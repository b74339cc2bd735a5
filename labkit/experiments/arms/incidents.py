"""Batch incidents and conditional subsets (seed 002 §4), on same-budget arms jobs.

**Batch incident.** An `IncidentRule` is registered in the control ledger (a BATCH event,
action "register", with its digest) before the first batch starts. Before each job the
control plane observes the shared environment's fingerprint; when it differs from the one the
batch registered, the rule pauses the batch (no further job runs), voids it whole (its
results never enter a conclusion) and starts a new batch under the new fingerprint, which
runs every eligible job again. The voided batch's exposure (jobs run, cases whose hidden
tests were scored, validations) and cost are still reported, and counted in the total.

**Conditional subset.** A mechanism analysis on the "mechanism activated" jobs (a round was
worked: the arm's reflection, critique or self-tests acted on a failing start)
answers a conditional question; `MechanismRow` can only be built with the end-to-end result
on every eligible job beside it, and refuses a subset that does not partition the eligible.

The jobs are real engine runs (labkit.experiments.arms.run: a simulated policy, every
candidate validated); the incident itself is *scripted* (`Incident`: the fingerprint observed
from a given job on).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from labkit.core.errors import InvalidSetting
from labkit.core.paths import DATA
from labkit.core.types import Usage, digest
from labkit.core.versions import package_versions
from labkit.experiments.arms.arm_metrics import runs
from labkit.experiments.arms.run import Job, JobResult, Plan, jobs_for, merge, run_job
from labkit.record import outcomes
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

__all__ = [
    "BatchReport",
    "COMMAND",
    "DEPENDS_ON",
    "Incident",
    "IncidentRule",
    "MechanismRow",
    "RECORDING",
    "default_plan",
    "measure",
    "mechanism_rows",
    "recorded",
    "run_batches",
]

DEPENDS_ON = ("numpy", "polars", "pytest")  # the packages the recording's numbers depend on

RECORDING = DATA / "arms" / "batch_incident.json"
COMMAND = "python -m labkit.experiments.arms.incidents"
CASES = ("camel_to_snake", "chunks", "flatten", "median")
ARMS = ("direct", "reflect")
MECHANISM_ARMS = ("reflect", "self_refine", "eval_opt", "self_tests")

CONTROL = "batches"


@dataclass(frozen=True)
class IncidentRule:
    """Registered before the first batch: what voids a batch and what happens then."""

    trigger: str = "the shared environment's fingerprint differs from the one the batch registered"
    action: str = "pause the batch, void it whole, start a new batch that runs every eligible job"
    report: str = "the voided batch's exposure and cost, beside the new batch's"

    @property
    def digest(self) -> str:
        return digest(json.dumps(asdict(self), sort_keys=True))


@dataclass(frozen=True)
class Incident:
    """Scripted: from job `at` (0-based, in batch order) of batch 1 on, the fingerprint reads `becomes`."""

    at: int
    becomes: str
    simulated: bool = True


@dataclass(frozen=True, kw_only=True)
class BatchReport:
    batch: int
    environment: str
    status: str  # voided | complete
    reason: str
    planned: int
    ran: int
    cases_exposed: int  # distinct cases whose hidden tests were scored in this batch
    validations: int  # verify + score events
    cost_units: float
    success: dict[str, float] = field(default_factory=dict)  # per arm; only a complete batch concludes
    jobs: tuple[tuple[str, bool, float], ...] = ()  # (run id, solved on hidden tests, cost units) per job run


def _log(ledger: Ledger, batch: int, action: str, rule: IncidentRule, **detail: object) -> None:
    ledger.record(
        CONTROL,
        batch,
        Role.CONTROL,
        Kind.BATCH,
        detail={"batch": batch, "action": action, "rule": rule.digest, **detail},
    )


def _report(batch: int, env: str, status: str, reason: str, planned: int, book: Ledger) -> BatchReport:
    if not book.runs():
        return BatchReport(
            batch=batch,
            environment=env,
            status=status,
            reason=reason,
            planned=planned,
            ran=0,
            cases_exposed=0,
            validations=0,
            cost_units=0.0,
        )
    frame = runs(book)
    events = book.events()
    scores = outcomes.scores(events)
    checks = sum(e.kind == Kind.VERIFY for e in events) + len(scores)
    scored = {s.case for s in scores}
    success = (
        {}
        if status == "voided"
        else {
            str(r["arm"]): float(r["correct"])
            for r in frame.group_by("arm").agg(pl.col("correct").mean()).iter_rows(named=True)
        }
    )
    rows = tuple((str(r["run"]), bool(r["correct"]), float(r["cost"])) for r in frame.iter_rows(named=True))
    return BatchReport(
        batch=batch,
        environment=env,
        status=status,
        reason=reason,
        planned=planned,
        ran=frame.height,
        cases_exposed=len(scored),
        validations=checks,
        cost_units=float(frame["cost"].sum()),
        success=success,
        jobs=rows,
    )


def run_batches(
    jobs: Sequence[Job],
    runner: Callable[[Job], JobResult],
    fingerprint: str,
    incident: Incident | None,
    *,
    rule: IncidentRule | None = None,
    control: Ledger | None = None,
    max_batches: int = 2,
) -> tuple[BatchReport, ...]:
    """Run `jobs` in batches under the incident rule; every batch is reported, voided or not."""
    rule = rule or IncidentRule()
    control = control if control is not None else Ledger()
    if control.events(CONTROL):
        raise InvalidSetting("the incident rule must be registered before the first batch: the control run has events")
    _log(control, 0, "register", rule, reason=json.dumps(asdict(rule)), environment=fingerprint)
    reports: list[BatchReport] = []
    env = fingerprint
    for batch in range(1, max_batches + 1):
        registered = env
        _log(control, batch, "start", rule, environment=registered, jobs=len(jobs))
        book, voided = Ledger(), ""
        for i, job in enumerate(jobs):
            seen = incident.becomes if incident and batch == 1 and i >= incident.at else registered
            if seen != registered:  # the pre-registered trigger: pause, void the whole batch
                voided = f"environment changed before job {i + 1}: {registered!r} -> {seen!r}"
                _log(control, batch, "pause", rule, reason=voided, environment=seen, simulated=True)
                env = seen
                break
            merge(book, [runner(job)])
        report = _report(batch, registered, "voided" if voided else "complete", voided, len(jobs), book)
        _log(
            control,
            batch,
            "void" if voided else "complete",
            rule,
            reason=voided or "no incident",
            jobs=report.ran,
            cost_units=report.cost_units,
        )
        reports.append(report)
        if not voided:
            break
    return tuple(reports)


@dataclass(frozen=True, kw_only=True)
class MechanismRow:
    """One arm's end-to-end result on every eligible job, with the activated subset beside it."""

    arm: str
    eligible: int
    solved: int
    activated: int
    activated_solved: int
    not_activated_solved: int

    def __post_init__(self) -> None:
        if self.eligible <= 0:
            raise InvalidSetting(f"{self.arm}: the end-to-end result needs every eligible job (got {self.eligible})")
        if not 0 <= self.activated <= self.eligible or self.activated_solved + self.not_activated_solved != self.solved:
            raise InvalidSetting(f"{self.arm}: the activated subset must partition the eligible jobs")


def mechanism_rows(ledger: Ledger, arms: Sequence[str]) -> list[MechanismRow]:
    """Per arm, from the ledger: every eligible job (incomplete ones included) and the subset
    where the mechanism acted (a round was worked: the start failed a visible test, so the arm's
    reflection, critique or self-tests ran; on a start that already passes it never does)."""
    frame = runs(ledger)
    out = []
    for arm in arms:
        f = frame.filter(pl.col("arm") == arm)
        act = f.filter(pl.col("rounds") >= 1)
        rest = f.filter(pl.col("rounds") < 1)
        out.append(
            MechanismRow(
                arm=arm,
                eligible=f.height,
                solved=int(f["correct"].sum()),
                activated=act.height,
                activated_solved=int(act["correct"].sum()),
                not_activated_solved=int(rest["correct"].sum()),
            )
        )
    return out


def default_plan() -> Plan:
    """The simulated default setting of reflection_worth_it (data/arms/simulated_default.json)."""
    meta = json.loads((DATA / "arms" / "simulated_default.json").read_text())
    return Plan(
        limit=Usage(**meta["limit"]),
        sim=dict(meta["sim"]),
        stronger="sim",
        n=meta["n"],
        rounds=meta["rounds"],
    )


def fingerprint() -> str:
    return f"pytest {package_versions(('pytest',))['pytest']} · labkit sandbox image v1"


def measure() -> dict[str, Any]:
    """The recording: 8 jobs per batch, a scripted incident before job 4 of batch 1, and the
    mechanism rows of the recorded default sweep."""
    plan, jobs = default_plan(), jobs_for("repair", CASES, ARMS, [0])
    control = Ledger()
    batches = run_batches(
        jobs,
        lambda j: run_job(plan, j),
        fingerprint(),
        Incident(3, fingerprint().replace("v1", "v2 (updated mid-batch; scripted)")),
        control=control,
    )
    sweep = Ledger(DATA / "arms" / "simulated_default.sqlite", read_only=True)
    out = {
        "command": COMMAND,
        "source": "recorded real runs (simulated policy, real validation); the incident is scripted",
        "rule": asdict(IncidentRule()), "rule_digest": IncidentRule().digest,
        "batches": [asdict(b) for b in batches],
        "control": [dict(e.detail) for e in control.events(CONTROL)],
        "mechanism_source": "data/arms/simulated_default.sqlite (SIMULATED policy, recorded run)",
        "mechanism": [asdict(r) for r in mechanism_rows(sweep, MECHANISM_ARMS)],
        "versions": package_versions(DEPENDS_ON),
    }  # fmt: skip
    return dict(json.loads(json.dumps(out)))


def recorded() -> dict[str, Any]:
    return dict(json.loads(RECORDING.read_text()))


if __name__ == "__main__":  # regenerate the recording (about a minute)
    RECORDING.write_text(json.dumps(measure(), indent=1) + "\n")
    print(f"wrote {RECORDING}")
