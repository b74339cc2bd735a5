"""Fix the plan vs fix the state (seed 002 §5), scripted, every candidate run by the real validator.

A tiny shipping module (`shipping.py`) uses an installed dependency (`site/moneylib.py`,
pinned in `deps.lock`); a build cache (`.cache/fees.json`) and a background worker's state
file (`run/worker.json`, standing for a process that loaded the dependency) belong to the
environment too. The bug: an order of exactly 50 should ship free (`>` should be `>=`).

- **Plan error**: route A ("round the total first") is rolled back by the engine and route B
  (the threshold) is tried *from the same checkpoint*. Nothing outside the code changed, so
  restoring the code is a complete restore: the audit against the checkpoint finds nothing.
- **Corrupted state**: the agent upgrades moneylib to 2.0 (lock, installed package, cache and
  worker change in the shared environment) and ports the code; the engine rolls the change
  back. Restoring only the code leaves a *mixed state* (v0 code on moneylib 2.0), and the
  correct fix (route B) then fails there — the engine rolls back a right patch, for a wrong
  reason. Restoring every part the checkpoint recorded (or branching anew from it) lets the
  same fix be kept.

Every part's digest is written in a `checkpoint` event (code version, dependency image =
lock + installed package, environment = cache + worker, event position), so `audit` can say
which parts a restore left different. Labelled *scripted*: the files and routes are authored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core.types import Candidate, digest
from labkit.grading.acceptance import AcceptanceSuite
from labkit.loop.engine import Task, run
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = [
    "CODE", "PARTS", "Restore", "Routes", "StateCheckpoint", "Story", "audit", "checkpoint", "restore", "story",
]  # fmt: skip

CODE = "shipping.py"
PARTS: Mapping[str, tuple[str, ...]] = {  # what a complete restore brings back, part by part
    "code version": (CODE,),
    "dependency image": ("deps.lock", "site/moneylib.py"),
    "environment": (".cache/fees.json", "run/worker.json"),
}
_MONEYLIB = {
    "1.0": '__version__ = "1.0"\n\n\ndef round_cents(x):\n    return round(x + 1e-9, 2)\n',
    "2.0": '__version__ = "2.0"\n\n\ndef to_cents(x):  # 2.0: integer cents; round_cents was removed\n'
    "    return int(round(x * 100))\n",
}
_CODE = {
    "v0": "from moneylib import round_cents\n\n\ndef fee(total):\n    if total > 50:\n        return 0.0\n"
    "    return round_cents(total * 0.1)\n",
    "route A: round the total first": "from moneylib import round_cents\n\n\ndef fee(total):\n"
    "    if round_cents(total) > 50:\n        return 0.0\n    return round_cents(total * 0.1)\n",
    "route B: free from 50 (>=)": "from moneylib import round_cents\n\n\ndef fee(total):\n"
    "    if total >= 50:\n        return 0.0\n    return round_cents(total * 0.1)\n",
    "upgrade moneylib to 2.0, port the code": "from moneylib import to_cents\n\n\ndef fee(total):\n"
    "    if total > 50:\n        return 0.0\n    return to_cents(total * 0.1) / 100\n",
}
UPGRADE, ROUTE_A, ROUTE_B = (
    "upgrade moneylib to 2.0, port the code",
    "route A: round the total first",
    "route B: free from 50 (>=)",
)
_TESTS = (
    "from shipping import fee\n\n\ndef test_free_from_50():\n    assert fee(50) == 0.0\n\n\n"
    "def test_fee_in_cents():\n    assert fee(12.34) == 1.23\n"
)
SUITE = AcceptanceSuite(
    name="plan vs state",
    tests={"tests/test_shipping.py": _TESTS},
    fail_to_pass=("tests/test_shipping.py::test_free_from_50",),
    pass_to_pass=("tests/test_shipping.py::test_fee_in_cents",),
    import_roots=("site",),
)


def _environment(version: str) -> dict[str, str]:
    return {
        "deps.lock": f"moneylib=={version}\n",
        "site/moneylib.py": _MONEYLIB[version],
        ".cache/fees.json": json.dumps({"built_with": f"moneylib {version}"}) + "\n",
        "run/worker.json": json.dumps({"process": "fee-worker", "loaded": f"moneylib {version}"}) + "\n",
    }


def state(code: str, version: str, label: str) -> Candidate:
    """The machine as the validator sees it: the code plus the environment it runs in."""
    return Candidate({CODE: _CODE[code], **_environment(version)}, label=label)


@dataclass(frozen=True)
class StateCheckpoint:
    """What a complete restore needs: each part's files and digest, and the ledger position."""

    name: str
    files: Mapping[str, str]
    parts: Mapping[str, str]  # part -> digest
    position: int


def _digests(files: Mapping[str, str]) -> dict[str, str]:
    return {part: digest(json.dumps({p: files.get(p) for p in paths})) for part, paths in PARTS.items()}


def checkpoint(name: str, s: Candidate, ledger: Ledger, run_id: str) -> StateCheckpoint:
    """Record a checkpoint of every part in the ledger (a `checkpoint` event) and return it."""
    parts = _digests(s.files)
    ev = ledger.record(
        run_id,
        0,
        Role.CONTROL,
        Kind.CHECKPOINT,
        detail={  # a restore point
            "reason": name,
            "candidate": s.digest,
            "code_version": parts["code version"],
            "dependency_image": parts["dependency image"],
            "environment": parts["environment"],
            "position": len(ledger),  # events in the ledger before this one
        },
    )
    return StateCheckpoint(name, dict(s.files), parts, ev.seq)


def restore(s: Candidate, cp: StateCheckpoint, parts: tuple[str, ...], label: str) -> Candidate:
    """`s` with the files of the named parts put back as `cp` recorded them."""
    files = dict(s.files)
    for part in parts:
        for path in PARTS[part]:
            files.pop(path, None)
            if path in cp.files:
                files[path] = cp.files[path]
    return Candidate(files, label=label)


def audit(s: Candidate, cp: StateCheckpoint) -> tuple[str, ...]:
    """The parts of `s` that differ from what the checkpoint recorded: empty means complete."""
    now = _digests(s.files)
    return tuple(p for p in PARTS if now[p] != cp.parts[p])


@dataclass(frozen=True)
class Routes:
    """Scripted: one named code route per round, applied to whatever state the case holds."""

    routes: tuple[str, ...]
    name: str = "scripted routes"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        if situation.round > len(self.routes):
            return Proposal(note="no route left")
        route = self.routes[situation.round - 1]
        env = _environment("2.0") if route == UPGRADE else {}  # the upgrade also installs, rebuilds, restarts
        target = situation.candidate.with_files({**situation.candidate.files, **env, CODE: _CODE[route]}, label=route)
        return Proposal(children=(Child(target=target, name=route, source="scripted"),))


@dataclass(frozen=True, kw_only=True)
class Restore:
    """One restore before the next candidate: what it put back, what it left, and the engine's verdict."""

    name: str
    parts: tuple[str, ...]  # restored
    left_different: tuple[str, ...]  # the audit against the checkpoint
    decision: str  # the engine's decision on route B from the restored state
    reason: str
    resolved: bool  # route B's visible verdict there
    failure: str  # the first failure the validator reported for route B there ("" if none)
    run_id: str


@dataclass(frozen=True, kw_only=True)
class Story:
    plan_decisions: tuple[tuple[str, str, str], ...]  # (route, decision, reason) from one checkpoint
    plan_audit: tuple[str, ...]  # parts different after route A's roll back (none: code restore complete)
    plan_resolved: bool
    upgrade_decision: str
    upgrade_reason: str
    upgraded_parts: tuple[str, ...]  # parts the upgrade changed
    restores: tuple[Restore, ...]  # code only, complete
    checkpoints: tuple[StateCheckpoint, ...]
    run_id: str


def _decided(
    validator: Validator | Checker | None, ledger: Ledger, run_id: str, start: Candidate, routes: tuple[str, ...]
) -> list[tuple[str, str, str, bool, str]]:
    task = Task(id=run_id, start=start, suite=SUITE)
    out = run(
        [task],
        Routes(routes),
        validator,
        rounds=len(routes),
        stop_at_green=True,
        ledger=ledger,
        run_id=run_id,
    )
    rows = []
    for r in out.traces[task.id].rounds:
        for a in r.attempts:
            fails = a.retest.evidence.failures if a.retest is not None else ()
            first = fails[0].message.strip().splitlines()[-1] if fails and fails[0].message.strip() else ""
            first = re.sub(r" \(/tmp/[^)]*\)", "", first)  # the sandbox's random workspace path
            rows.append(
                (
                    a.child.name,
                    a.decision.decision.value,
                    a.decision.reason,
                    bool(a.retest is not None and a.retest.resolved),
                    first,
                )
            )
    return rows


def story(validator: Validator | Checker | None = None, ledger: Ledger | None = None) -> Story:
    """Both lessons through the engine and the validator; checkpoints and audits in `ledger`."""
    from labkit.record.ledger import Ledger

    led = ledger if ledger is not None else Ledger()
    rid = "plan-state"
    c0 = checkpoint("C0: before any change", state("v0", "1.0", "v0 on moneylib 1.0"), led, rid)
    start = Candidate(c0.files, label="C0")
    # A plan error: two routes in turn from the same checkpoint.
    plan = _decided(validator, led, "plan-error", start, (ROUTE_A, ROUTE_B))
    after_a = restore(state(ROUTE_A, "1.0", ROUTE_A), c0, ("code version",), "route A rolled back")
    # Corrupted state: the upgrade changes the shared environment, then the engine rejects it.
    ((_, up_decision, up_reason, _, _),) = _decided(validator, led, "upgrade", start, (UPGRADE,))
    upgraded = state(UPGRADE, "2.0", UPGRADE)  # the machine after the upgrade ran, whatever the verdict
    c1 = checkpoint("C1: after the upgrade and port", upgraded, led, rid)
    restores = []
    for name, parts in (
        ("code only", ("code version",)),
        ("complete (every recorded part)", tuple(PARTS)),
    ):
        restored = restore(upgraded, c0, parts, f"restored: {name}")
        checkpoint(f"after the {name} restore", restored, led, rid)
        run_id = f"next-candidate-{parts[-1].replace(' ', '-')}"
        ((_, decision, reason, resolved, failure),) = _decided(validator, led, run_id, restored, (ROUTE_B,))
        restores.append(
            Restore(
                name=name,
                parts=parts,
                left_different=audit(restored, c0),
                decision=decision,
                reason=reason,
                resolved=resolved,
                failure=failure,
                run_id=run_id,
            )
        )
    return Story(
        plan_decisions=tuple((r, d, why) for r, d, why, _, _ in plan),
        plan_audit=audit(after_a, c0),
        plan_resolved=plan[-1][3],
        upgrade_decision=up_decision,
        upgrade_reason=up_reason,
        upgraded_parts=audit(upgraded, c0),
        restores=tuple(restores),
        checkpoints=(c0, c1),
        run_id=rid,
    )


if __name__ == "__main__":  # python -m labkit.experiments.lessons.plan_state
    told = story()
    for route, decision, why in told.plan_decisions:
        print(f"plan error, from C0: {route} -> {decision} ({why})")
    for r in told.restores:
        print(f"{r.name} restore: left {r.left_different or 'nothing'} different; route B -> {r.decision} ({r.reason})")
