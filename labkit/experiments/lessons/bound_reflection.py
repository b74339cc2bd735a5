"""Seed 002 §2's example, run: a tool call denied by permission, reflected on two ways.

The tool is a **simulated** shell (labelled): the task is to put `app.conf` into
`/srv/deploy/`, and policy denies this role any write there (a PermissionError, as a real
shell would report "Permission denied"). Both reflectors are **scripted**:

- *unbound* reads the message as a command-syntax problem and tries ever-different commands
  (cp, cp -f, install, tee, rsync, …) — every one paid, none adding evidence;
- *bound* cites action 1, the class the control plane assigned (POLICY_DENIED), the artifact
  and the explanations not yet ruled out; POLICY_DENIED grants only an authorisation change
  or stop, so it escalates to a human after one action.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.core.error_classes import ErrorClass
from labkit.loop.control.bound import BoundReflection, Next, Observed, ToolRun, run_tool_task
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

__all__ = ["BUDGET", "Bound", "SimulatedShell", "Unbound", "artifact_of", "compare"]

BUDGET = 6.0  # cost units for the task; one tool call costs 1
TARGET = "/srv/deploy/app.conf"
FIRST = "cp app.conf /srv/deploy/"
# What an unbound reflector tries next when it reads "Permission denied" as bad syntax.
VARIANTS = ("cp -f app.conf /srv/deploy/app.conf", "install -m 644 app.conf /srv/deploy/",
            "cat app.conf > /srv/deploy/app.conf", "tee /srv/deploy/app.conf < app.conf",
            "rsync app.conf /srv/deploy/", "cp -- app.conf /srv/deploy/app.conf",
            "dd if=app.conf of=/srv/deploy/app.conf")  # fmt: skip


def artifact_of(command: str) -> str:
    """The file a command writes: its /srv/deploy operand, completed with the source's name."""
    for token in command.replace("=", " ").split():
        if token.startswith("/srv/deploy"):
            return token + "app.conf" if token.endswith("/") else token
    return ""


class SimulatedShell:
    """Simulated (labelled): writes under /srv/deploy are denied by policy; everything is logged."""

    simulated = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, command: str) -> str:
        self.calls.append(command)
        target = artifact_of(command)
        if target.startswith("/srv/deploy/"):
            raise PermissionError(13, "Permission denied", target)
        return "ok"


@dataclass
class Unbound:
    name: str = "unbound (scripted)"

    def reflect(self, seen: Observed, history: tuple[Observed, ...]) -> Next:
        tried = {o.command for o in history}
        nxt = next((v for v in VARIANTS if v not in tried), "")
        return Next(command=nxt, text=f"'{seen.output}' — the command must be malformed; try {nxt!r}")


@dataclass
class Bound:
    name: str = "observation-bound (scripted)"

    def reflect(self, seen: Observed, history: tuple[Observed, ...]) -> Next:
        assert seen.error_class is not None
        r = BoundReflection(
            action=seen.action,
            error_class=seen.error_class,
            artifact=seen.artifact,
            open=("this role lacks write permission on /srv/deploy", "the directory is read-only by deployment policy"),
            observation=f"action {seen.action} ({seen.command}) was refused: {seen.output}",
            hypothesis="the refusal is an authorisation decision, not the command's form",
            next_trial="ask the operator for write authorisation on /srv/deploy (or a deploy role); do not retry",
        )
        if seen.error_class is ErrorClass.POLICY_DENIED:
            return Next(escalate=True, reflection=r)
        return Next(command="", reflection=r)


def compare(ledger: Ledger | None = None) -> tuple[ToolRun, ToolRun]:
    """Both reflectors on the same simulated task, each under its own budget of BUDGET units."""
    led = ledger if ledger is not None else Ledger()
    out = []
    for reflector, bound in ((Unbound(), False), (Bound(), True)):
        run_id = f"deploy-{'bound' if bound else 'unbound'}"
        budget = Budget(limits(cost_units=BUDGET), ledger=led, run_id=run_id)
        out.append(
            run_tool_task(
                SimulatedShell(),
                artifact_of,
                reflector,
                FIRST,
                budget=budget,
                ledger=led,
                run_id=run_id,
                unit=run_id,
                require_bound=bound,
            )
        )
    return out[0], out[1]
