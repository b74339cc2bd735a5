"""Actions with external effects (seed 002 §4–5): dry run, idempotency keys, reconciliation, checkpoints.

A worktree can branch; a sent message, a ticket, a deployment cannot. So an `EffectGate`
stands between the loop and an external system (an `Outbox`):

- in **dry-run** mode a send is only recorded as planned (search uses this);
- a live send carries an **idempotency key**; a key already delivered is not sent again;
- a send whose outcome is unknown (`UnknownEffect`) leaves the key *pending*: repeating it —
  or any send of the same payload — is refused until `reconcile` asks the external system;
- a `Checkpoint` records code version, dependency image, environment reference, the pending
  external actions and the ledger position. Restoring one brings back the code, nothing else:
  the budget stays spent and what was sent stays sent.

Every step is a `Kind.EFFECT` event in the ledger, paid through the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from labkit.core.error_classes import Action, ErrorClass
from labkit.core.errors import UnknownEffect
from labkit.core.types import Usage, digest
from labkit.loop.control.classify import classify
from labkit.record.budget import Operation
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

__all__ = ["Checkpoint", "EffectGate", "EffectStep", "Outbox", "duplicated_effects", "effect_steps"]


class Outbox(Protocol):
    """An external system: `send` delivers (may raise UnknownEffect), `lookup` says if a key was delivered."""

    def send(self, key: str, target: str, body: str) -> str: ...

    def lookup(self, key: str) -> bool: ...


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    name: str
    code_version: str
    dependency_image: str
    environment: str
    pending: tuple[dict[str, object], ...]
    position: int  # ledger sequence number at the checkpoint


@dataclass(kw_only=True)
class EffectGate:
    outbox: Outbox
    budget: Budget
    ledger: Ledger
    run_id: str
    unit: str
    mode: Literal["dry_run", "live"] = "live"
    cost: float = 1.0
    reconcile_first: bool = True  # False only to show what the guard prevents (the naive arm)
    pending: dict[str, dict[str, object]] = field(default_factory=dict)  # key -> planned/unknown action
    delivered: set[str] = field(default_factory=set)
    actions: int = 0

    def _log(self, mode: str, key: str, target: str, payload: str, outcome: str, error_class: str = "") -> None:
        self.ledger.record(
            self.run_id,
            self.actions,
            Role.TOOL,
            Kind.EFFECT,
            detail={
                "unit": self.unit,
                "action": self.actions,
                "mode": mode,
                "key": key,
                "target": target,
                "payload": payload,
                "outcome": outcome,
                "error_class": error_class,
            },
        )

    def _paid(self, fn: Callable[..., object], *args: object) -> object:
        op: Operation[object] = Operation(
            fn, args, upper=Usage(cost_units=self.cost), measure=lambda _: Usage(cost_units=self.cost)
        )
        return self.budget.paid(Kind.EFFECT, op, round=self.actions)

    def send(self, key: str, target: str, body: str) -> str:
        """Plan (dry run) or deliver once under `key`; returns the outcome recorded."""
        self.actions += 1
        payload = digest(body)
        if self.mode == "dry_run":
            self.pending[key] = {"key": key, "target": target, "payload": payload, "state": "planned"}
            self._log("dry_run", key, target, payload, "planned")
            return "planned"
        unknown = [
            k for k, p in self.pending.items() if p["state"] == "unknown" and (k == key or p["payload"] == payload)
        ]
        if unknown and self.reconcile_first:
            self._log("send", key, target, payload, "refused", ErrorClass.UNKNOWN_EFFECT.value)
            cls = classify(UnknownEffect(f"{unknown[0]} is unreconciled"), "tool")
            assert cls is not None
            cls.require(Action.REPEAT_ACTION)  # raises PermissionRefused: reconcile first
        if key in self.delivered:
            self._log("send", key, target, payload, "deduplicated")
            return "deduplicated"
        try:
            self._paid(self.outbox.send, key, target, body)
        except UnknownEffect:
            self.pending[key] = {"key": key, "target": target, "payload": payload, "state": "unknown"}
            self._log("send", key, target, payload, "unknown", ErrorClass.UNKNOWN_EFFECT.value)
            return "unknown"
        self.pending.pop(key, None)
        self.delivered.add(key)
        self._log("send", key, target, payload, "sent")
        return "sent"

    def reconcile(self, key: str) -> bool:
        """Ask the external system whether `key` was delivered; settles the pending action."""
        self.actions += 1
        p = self.pending.get(key, {"target": "", "payload": ""})
        found = bool(self._paid(self.outbox.lookup, key))
        self._log("reconcile", key, str(p["target"]), str(p["payload"]), "found" if found else "not_found")
        self.pending.pop(key, None)
        if found:
            self.delivered.add(key)
        return found

    def finish(self, status: str, reason: str) -> None:
        """The unit's end (a STOP event); pending unknown effects make it incomplete whatever `status` says."""
        unknown = sorted(k for k, p in self.pending.items() if p["state"] == "unknown")
        if unknown:
            status, reason = "incomplete", f"unreconciled effects: {unknown}"
        self.ledger.record(
            self.run_id,
            self.actions,
            Role.CONTROL,
            Kind.STOP,
            detail={"unit": self.unit, "status": status, "reason": reason},
        )

    def checkpoint(self, name: str, code_version: str, dependency_image: str, environment: str) -> Checkpoint:
        events = self.ledger.events(self.run_id)
        cp = Checkpoint(
            name=name,
            code_version=code_version,
            dependency_image=dependency_image,
            environment=environment,
            pending=tuple(dict(p) for p in self.pending.values()),
            position=events[-1].seq if events else 0,
        )
        self.ledger.record(
            self.run_id,
            self.actions,
            Role.CONTROL,
            Kind.CHECKPOINT,
            detail={
                "unit": self.unit,
                "reason": name,
                "code_version": code_version,
                "dependency_image": dependency_image,
                "environment": environment,
                "pending": list(cp.pending),
                "position": cp.position,
            },
        )
        return cp


def duplicated_effects(ledger: Ledger, run_id: str | None = None) -> int:
    """Deliveries beyond the first of one payload to one target in one unit (sent, or found on reconciling)."""
    keys: dict[tuple[str, str, str], set[str]] = {}
    for e in ledger.events(run_id):
        d = e.detail
        if e.kind == Kind.EFFECT and d.get("outcome") in ("sent", "found"):
            keys.setdefault((str(d.get("unit")), str(d.get("target")), str(d.get("payload"))), set()).add(str(d["key"]))
    return sum(len(k) - 1 for k in keys.values())


@dataclass(frozen=True, kw_only=True)
class EffectStep:
    """One recorded effect, checkpoint or stop, with the accounts as they stood after it."""

    seq: int
    kind: str
    detail: dict[str, object]
    spent: float  # budget charged up to and including this step
    delivered: tuple[str, ...]  # keys known delivered (sent, or found on reconciling)
    pending: tuple[str, ...]  # keys planned or unknown


def effect_steps(ledger: Ledger, run_id: str) -> list[EffectStep]:
    """The run's effect/checkpoint/stop events, each with spend and delivery state read from the ledger."""
    out: list[EffectStep] = []
    spent, delivered, pending = 0.0, list[str](), dict[str, str]()
    for e in ledger.events(run_id):
        d = dict(e.detail)
        if e.role == Role.BUDGET:
            spent += e.cost_units if d.get("status") in ("settled", "unknown", "overrun") else 0.0
            continue
        if e.kind == Kind.EFFECT:
            key, outcome = str(d["key"]), d.get("outcome")
            if outcome in ("sent", "found") and key not in delivered:
                delivered.append(key)
            if outcome in ("planned", "unknown"):
                pending[key] = str(outcome)
            elif outcome in ("sent", "found", "not_found", "deduplicated"):
                pending.pop(key, None)
        elif e.kind not in (Kind.CHECKPOINT, Kind.STOP):
            continue
        out.append(
            EffectStep(
                seq=e.seq,
                kind=e.kind,
                detail=d,
                spent=spent,
                delivered=tuple(delivered),
                pending=tuple(f"{k} ({v})" for k, v in pending.items()),
            )
        )
    return out
