"""Side effects a rollback cannot undo (seed 002 §4–5), on the cache case.

The fix for the cache case (v2, composite key) comes with an external action: a notice to
customers that prices were recalculated. The outbox is a **local in-process stub**
(labelled simulated): it stores what it is sent and, on the first delivery, loses the
acknowledgement — the message arrived, the sender cannot tell (UNKNOWN_EFFECT).

- **gated** (`loop.effects.EffectGate`): the search plans the notice in dry run; the chosen
  candidate sends it live under an idempotency key; the lost ack leaves it pending; a retry is
  refused until reconciliation, which finds it delivered; a sibling's send of the same key is
  deduplicated. Then the change is rolled back to the checkpoint: the code is v1 again, the
  budget already spent stays spent, and the notice stays sent.
- **naive**: retries the failed send with a fresh key, and an audit finds two deliveries.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field

from labkit.core.errors import PermissionRefused, UnknownEffect
from labkit.core.patch import apply
from labkit.core.types import digest
from labkit.grading.cases import load_case
from labkit.loop.control.effects import Checkpoint, EffectGate, duplicated_effects, effect_steps
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

__all__ = ["LocalOutbox", "Story", "effect_steps", "gated", "naive"]

TARGET = "customers@shop.example"
BODY = "Prices were recalculated per customer; your cached quote may have changed."


@dataclass
class LocalOutbox:
    """Simulated external system (in-process stub): keeps every delivery; loses the first ack."""

    lose_first_ack: bool = True
    delivered: list[tuple[str, str, str]] = field(default_factory=list)  # (key, target, body)
    simulated: bool = True

    def send(self, key: str, target: str, body: str) -> str:
        self.delivered.append((key, target, body))
        if self.lose_first_ack and len(self.delivered) == 1:
            raise UnknownEffect(f"send {key}: connection reset after the request left", action="send")
        return f"receipt-{key}"

    def lookup(self, key: str) -> bool:
        return any(k == key for k, _, _ in self.delivered)


@dataclass(frozen=True, kw_only=True)
class Story:
    run_id: str
    steps: tuple[tuple[str, str], ...]  # (what the loop did, outcome)
    delivered: int  # messages the stub holds at the end
    duplicates: int  # from the ledger
    spent_before_rollback: float
    spent_after_rollback: float
    code_after_rollback: str
    checkpoints: tuple[Checkpoint, ...]
    ledger: Ledger


def _image() -> str:
    return digest(f"python {platform.python_version()} · pytest 8 · labkit")


def gated(ledger: Ledger | None = None) -> Story:
    led = ledger if ledger is not None else Ledger()
    c = load_case("cache_isolation")
    v1, v2 = c.start, apply(c.start, c.patch("composite_key"))
    run_id = "effects-gated"
    budget = Budget(limits(cost_units=20), ledger=led, run_id=run_id)
    box = LocalOutbox()
    gate = EffectGate(outbox=box, budget=budget, ledger=led, run_id=run_id, unit=run_id, mode="dry_run")
    steps: list[tuple[str, str]] = []
    c0 = gate.checkpoint("before the change", v1.digest, _image(), c.environment)
    steps.append(("search: plan the notice (dry run)", gate.send("notice-1", TARGET, BODY)))
    c1 = gate.checkpoint("candidate chosen", v2.digest, _image(), c.environment)
    gate.mode = "live"
    steps.append(("chosen candidate: send the notice (key notice-1)", gate.send("notice-1", TARGET, BODY)))
    try:
        gate.send("notice-1", TARGET, BODY)
    except PermissionRefused as exc:
        steps.append(("retry the send before reconciling", f"refused: {exc}"))
    steps.append(("reconcile notice-1 with the outbox", "found" if gate.reconcile("notice-1") else "not found"))
    steps.append(("a sibling branch sends notice-1 again", gate.send("notice-1", TARGET, BODY)))
    gate.finish("success", "notice delivered once, reconciled")
    before = budget.spent.cost_units
    c2 = gate.checkpoint("rolled back to 'before the change'", c0.code_version, c0.dependency_image, c0.environment)
    steps.append(
        ("roll the code back to the first checkpoint", f"code {c2.code_version}; outbox holds {len(box.delivered)}")
    )
    after = Budget(limits(cost_units=20), ledger=led, run_id=run_id).spent.cost_units  # re-read from the ledger
    return Story(
        run_id=run_id,
        steps=tuple(steps),
        delivered=len(box.delivered),
        duplicates=duplicated_effects(led, run_id),
        spent_before_rollback=before,
        spent_after_rollback=after,
        code_after_rollback=c2.code_version,
        checkpoints=(c0, c1, c2),
        ledger=led,
    )


def naive(ledger: Ledger | None = None) -> Story:
    """Retry a failed send with a fresh key; an audit (reconcile every key used) shows what arrived."""
    led = ledger if ledger is not None else Ledger()
    run_id = "effects-naive"
    budget = Budget(limits(cost_units=20), ledger=led, run_id=run_id)
    box = LocalOutbox()
    gate = EffectGate(
        outbox=box, budget=budget, ledger=led, run_id=run_id, unit=run_id, mode="live", reconcile_first=False
    )
    steps = [("send the notice (key attempt-1)", gate.send("attempt-1", TARGET, BODY))]
    steps.append(("it failed, so send again (key attempt-2)", gate.send("attempt-2", TARGET, BODY)))
    for key in ("attempt-1", "attempt-2"):
        steps.append((f"audit: reconcile {key}", "found" if gate.reconcile(key) else "not found"))
    gate.finish("success", "the send finally succeeded")
    spent = budget.spent.cost_units
    return Story(
        run_id=run_id,
        steps=tuple(steps),
        delivered=len(box.delivered),
        duplicates=duplicated_effects(led, run_id),
        spent_before_rollback=spent,
        spent_after_rollback=spent,
        code_after_rollback="",
        checkpoints=(),
        ledger=led,
    )
