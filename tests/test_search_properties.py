"""Progress with severity, and properties of frontier search over random trees and failures.

The trees, verdicts and failures here are simulated (a scripted world standing in for the
strategy, the build of step 4 and the validator): the properties are about the engine's
control flow and accounts under the search's configuration, which do not depend on what the
checks run.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.core.error_classes import RetryPolicy, UnknownEffect
from labkit.core.errors import ModelUnavailable, PatchError
from labkit.core.types import Candidate, Evidence, TestResult, Usage, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.checkset import Check, CheckSet, compare
from labkit.grading.verdicts import Checker
from labkit.loop.engine.progress import judge
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task
from labkit.loop.search.frontier import Costs, SearchLimits
from labkit.loop.search.search_case import spend
from labkit.loop.search.search_run import run_search
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

# -- ΔF with severity: what never counts as progress -------------------------------------


def _set(*checks: tuple[str, str], version: str = "") -> CheckSet:
    return CheckSet("dev", tuple(Check(i, version if i == "b" else "", s) for i, s in checks))  # type: ignore[arg-type]


def test_fixes_with_nothing_new_are_progress() -> None:
    cs = _set(("a", "medium"), ("b", "medium"))
    p = judge(compare(cs.record({"a": "failed", "b": "failed"}), cs.record({"a": "passed", "b": "failed"})))
    assert p.comparable and p.delta_f == 1 and p.resolved == (("a", "medium"),)


def test_skipping_a_test_is_never_progress() -> None:
    cs = _set(("a", "medium"), ("b", "medium"))
    p = judge(compare(cs.record({"a": "failed", "b": "failed"}), cs.record({"a": "passed", "b": "skipped"})))
    assert not p.comparable and "not run" in p.reason and p.not_run == (("b", "medium"),)


def test_changing_a_tests_version_is_never_progress() -> None:
    before = _set(("a", "medium"), ("b", "medium"), version="v1").record({"a": "failed", "b": "failed"})
    after = _set(("a", "medium"), ("b", "medium"), version="v2").record({"a": "passed", "b": "passed"})
    p = judge(compare(before, after))
    assert not p.comparable and "versions changed" in p.reason and p.changed == (("b", "medium"),)


def test_many_light_fixes_never_mask_one_severe_failure() -> None:
    cs = _set(*((f"l{i}", "low") for i in range(5)), ("s", "high"))
    before = cs.record({**{f"l{i}": "failed" for i in range(5)}, "s": "passed"})
    after = cs.record({**{f"l{i}": "passed" for i in range(5)}, "s": "failed"})
    p = judge(compare(before, after))
    assert p.delta_f == 4 and not p.comparable and p.new == (("s", "high"),)


def test_a_new_failure_worse_than_every_fix_is_not_progress() -> None:
    cs = _set(("l1", "low"), ("l2", "low"), ("m", "medium"))
    before = cs.record({"l1": "failed", "l2": "failed", "m": "passed"})
    p = judge(compare(before, cs.record({"l1": "passed", "l2": "passed", "m": "failed"})))
    assert p.delta_f == 1 and not p.comparable and "mask" in p.reason


# -- random search trees, random failures (simulated world) --------------------------------

CHECKS = CheckSet("sim", (Check("t.py::a", "", "medium"), Check("t.py::b", "", "medium"), Check("t.py::c", "", "high")))
DEV = AcceptanceSuite(
    name="sim dev checks",
    tests={"t.py": "a = 0\nb = 0\nc = 0  # simulated\n"},
    fail_to_pass=("t.py::a", "t.py::b"),
    pass_to_pass=("t.py::c",),
)
FINAL = AcceptanceSuite(
    name="sim final (sealed)",
    tests={"final/t.py": "f = 0  # simulated\n"},
    fail_to_pass=("final/t.py::f",),
    pass_to_pass=(),
)
OUTCOMES = ("pass", "progress", "flat", "severe", "alarm", "unknown", "patch_error", "memory")
_RESULTS = {
    "pass": ("passed", "passed", "passed"),
    "progress": ("passed", "failed", "passed"),
    "flat": ("failed", "failed", "passed"),
    "severe": ("passed", "passed", "failed"),
    "alarm": ("passed", "passed", "passed"),
}


def sim_verdict(kind: str, cand: str, suite: str = "suite", validator: str = "validator") -> Verdict:
    outcomes = _RESULTS[kind]
    results = tuple(TestResult(c.id, o) for c, o in zip(CHECKS.checks, outcomes, strict=True))  # type: ignore[arg-type]
    ev = Evidence(
        candidate=cand,
        suite=suite,
        validator=validator,
        results=results,
        exit_code=0,
        wall_seconds=0.0,
        alarms=("tamper",) if kind == "alarm" else (),
    )
    ok = {r.nodeid for r in results if r.outcome == "passed"}
    f2p = ("t.py::a", "t.py::b")
    return Verdict(
        ev,
        tuple(i for i in f2p if i in ok),
        tuple(i for i in f2p if i not in ok),
        tuple(i for i in ("t.py::c",) if i in ok),
        tuple(i for i in ("t.py::c",) if i not in ok),
    )


@dataclass
class World:
    """A random tree: each propose draws 0..4 children, each with a random fate; the same world
    is the build run in step 4 (an unknown effect, a patch error, a memory blow-up) and the
    validator (dev verdicts by fate; the sealed final set passes 80% of the time)."""

    seed: int
    weights: tuple[float, ...]
    budget: Budget | None = None
    violations: list[str] = field(default_factory=list)
    fates: dict[str, str] = field(default_factory=dict)
    model_down: int = 0
    name: str = "random tree (simulated)"
    simulated: bool = True
    id: str = "sim-validator"
    python: str = sys.executable
    limits: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(wall_seconds=1.0))

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def check(self, where: str) -> None:
        b = self.budget
        assert b is not None
        if b.spent.cost_units + b.reserved.cost_units > b.limit.cost_units + 1e-9:
            self.violations.append(where)

    def propose(self, situation: Situation) -> Proposal:
        self.check("generate")
        if self.model_down > 0 and self.rng.random() < 0.3:
            raise ModelUnavailable("simulated outage")
        kids = []
        for _ in range(self.rng.randint(0, 4)):
            name = f"n{self.rng.getrandbits(40):x}"
            self.fates[name] = self.rng.choices(OUTCOMES, self.weights)[0]
            kids.append(Child(target=Candidate({"n": name}), name=name))
        return Proposal(children=tuple(kids))

    def build(self, c: Candidate) -> None:
        self.check("execute")
        fate = self.fates[c.files["n"]]
        if fate == "unknown":
            raise UnknownEffect("write may have happened")
        if fate == "patch_error":
            raise PatchError("hunk does not apply")
        if fate == "memory":
            raise MemoryError()

    def run(self, c: Candidate, suite: AcceptanceSuite, **_: object) -> Verdict:
        if suite.digest == FINAL.digest:
            self.check("confirm")
            ok = self.rng.random() < 0.8
            ev = Evidence(
                candidate=c.digest,
                suite=suite.digest,
                validator=self.id,
                results=(TestResult("final/t.py::f", "passed" if ok else "failed"),),
                exit_code=0,
                wall_seconds=0.0,
            )
            return Verdict(ev, ("final/t.py::f",) if ok else (), () if ok else ("final/t.py::f",), (), ())
        self.check("verify")
        name = c.files["n"]
        return sim_verdict(self.fates.get(name, "flat"), c.digest, suite.digest, self.id)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    weights=st.tuples(*(st.floats(0.0, 1.0) for _ in OUTCOMES)).filter(lambda w: sum(w) > 0),
    total=st.integers(0, 60),
    reserve=st.integers(0, 4),
    costs=st.tuples(*(st.integers(0, 4) for _ in range(4))),
    lim=st.tuples(*(st.integers(1, 5) for _ in range(4))),
    model_down=st.integers(0, 1),
)
def test_random_trees_never_overspend_and_incomplete_is_never_success(
    seed: int,
    weights: tuple[float, ...],
    total: int,
    reserve: int,
    costs: tuple[int, int, int, int],
    lim: tuple[int, int, int, int],
    model_down: int,
) -> None:
    reserve = min(reserve, total)
    world = World(seed, weights, model_down=model_down)
    with Ledger() as led:
        budget = Budget(limits(cost_units=total), confirmation=Usage(cost_units=reserve), ledger=led, run_id="r")
        world.budget = budget
        task = Task(id="sim", start=Candidate({"n": "root"}), suite=DEV, hidden=FINAL, checks=CHECKS)
        result = run_search(
            task,
            world,
            Checker(world),
            budget,
            Costs(*costs),
            limits=SearchLimits(*lim),  # type: ignore[arg-type]
            ledger=led,
            run_id="r",
            retry=RetryPolicy(infrastructure_retries=1),
            build=world.build,
        ).result
        # spent + reserved <= limit at every paid action, and at the end
        assert world.violations == []
        assert budget.spent.cost_units <= total and budget.reserved.cost_units == 0
        assert spend(led, "r", total).total == budget.spent.cost_units
        # an incomplete task is never reported as success
        assert result.success == (result.status == "success")
        if result.success:
            assert result.winner is not None and result.confirmed is True
            assert result.winner in result.sealed
            assert result.reason != "integrity_or_effect_unresolved"
        quarantined = any(e.kind == "decision" and e.detail.get("action") == "quarantine" for e in led.events("r"))
        if quarantined:
            assert not result.success and result.winner is None
        if not result.sealed:
            assert not result.success
        stop = next(e for e in led.events("r") if e.kind == "stop")
        assert stop.detail["status"] == result.status
        # every event that names a unit names the one task (retries and branches are not units)
        assert {e.detail["unit"] for e in led.events("r") if "unit" in e.detail} == {"r"}
