"""The multi-case repair experiment: many small code-repair cases, several rounds, one ledger.

Each case (data/repair_cases/<id>/) is a buggy or already-correct module, visible tests the
repairer may see, hidden tests it never sees, and real patches: the correct fix, plausible
wrong ones, and tempting "improvements". Every round, for every case still in play:

  repairer proposes a change  ->  the validator runs the visible tests on it (real pytest)
  -> keep or roll back (ΔF within the visible check set, no new protective failure)
  -> the hidden tests score the kept state (for the accounting only; the loop never sees them)

Everything goes into the ledger with the case id and slice in `detail`, so
`labkit.loop.accounting.from_ledger` rebuilds per-case per-round correctness and the same
per-round accounting and stop rules read it. Validation results are cached by (candidate
content, suite, validator); re-runs that probe flakiness bypass the cache on purpose.

The offline repairer is *simulated*: it picks among each case's real patches with per-round
fix and break probabilities. The patches, the validator and the tests are real. With a
model set, `ModelRepairer` has the model write the new file instead.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import polars as pl

from labkit.core import patch as patches
from labkit.core.errors import (
    CaseError,
    LabkitError,
    ModelTimeout,
    ModelUnavailable,
    ReplyFormatError,
)
from labkit.core.paths import DATA
from labkit.core.types import Candidate, Evidence, Patch, TestResult, Usage, Verdict
from labkit.grading import checkset
from labkit.grading.acceptance import AcceptanceSuite
from labkit.loop import accounting
from labkit.loop.stopping import (
    Cap,
    History,
    MarginalNet,
    NoNewEvidence,
    Oscillation,
    Rule,
    Step,
    Stop,
    StopRecord,
    UnstableValidator,
    Verification,
    check,
)
from labkit.record.ledger import Ledger, new_run_id

if TYPE_CHECKING:
    from labkit.grading.validator import Validator

CASES_DIR = DATA / "repair_cases"
VISIBLE_TESTS, HIDDEN_TESTS = "tests/test_visible.py", "tests/test_hidden.py"

Kind = Literal["fix", "wrong", "tempt"]
Effect = Literal["resolves", "hidden_failure", "breaks_protective", "incomplete"]



# -- cases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CasePatch:
    """One of a case's real patches. `base` is what it applies to: the original or the fix."""

    name: str
    kind: Kind
    base: str
    patch: Patch
    effect: Effect  # measured when the case was built (see data/repair_cases/build.py)
    description: str = ""


@dataclass(frozen=True)
class RepairCase:
    """A buggy (or already correct) module with visible and hidden acceptance and real patches."""

    id: str
    slice: str
    title: str
    module: str
    original: Candidate
    visible: AcceptanceSuite
    hidden: AcceptanceSuite
    patches: tuple[CasePatch, ...]
    initially_correct: bool
    flaky: tuple[str, ...] = ()
    oscillates: tuple[str, ...] = ()

    def patch(self, name: str) -> CasePatch:
        for p in self.patches:
            if p.name == name:
                return p
        raise CaseError(f"case {self.id!r} has no patch {name!r}; it has {[p.name for p in self.patches]}")

    def candidate(self, name: str = "original") -> Candidate:
        """The original with patch `name` applied (on top of the fix, if that is its base)."""
        if name == "original":
            return self.original
        p = self.patch(name)
        base = self.candidate(p.base)
        return patches.apply(base, p.patch, label=name)

    def states(self) -> dict[str, Candidate]:
        """Every candidate the simulated repairer can reach: the original and each patch."""
        return {"original": self.original} | {p.name: self.candidate(p.name) for p in self.patches}


def load_cases(root: str | Path = CASES_DIR, ids: Iterable[str] | None = None) -> tuple[RepairCase, ...]:
    """Read repair cases from `root` (every subdirectory with a case.json, or just `ids`)."""
    base = Path(root)
    if not base.is_dir():
        raise CaseError(f"no repair cases at {base}: not a directory")
    dirs = sorted(p.parent for p in base.glob("*/case.json"))
    if ids is not None:
        wanted = list(ids)
        by_name = {d.name: d for d in dirs}
        missing = [i for i in wanted if i not in by_name]
        if missing:
            raise CaseError(f"no repair case {missing[0]!r} under {base}; there are {sorted(by_name)}")
        dirs = [by_name[i] for i in wanted]
    if not dirs:
        raise CaseError(f"no repair cases (*/case.json) under {base}")
    return tuple(_load_case(d) for d in dirs)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CaseError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _load_case(d: Path) -> RepairCase:
    try:
        meta = json.loads(_read(d / "case.json"))
        module = meta["module"]
        original = Candidate({module: _read(d / module)}, label="original")
        vis, hid = meta["visible"], meta["hidden"]
        visible = AcceptanceSuite(
            f"{meta['id']}:visible", {VISIBLE_TESTS: _read(d / VISIBLE_TESTS)},
            tuple(vis["fail_to_pass"]), tuple(vis["pass_to_pass"]),
        )  # fmt: skip
        hidden = AcceptanceSuite(
            f"{meta['id']}:hidden", {HIDDEN_TESTS: _read(d / "hidden" / "test_hidden.py")},
            tuple(hid["fail_to_pass"]), tuple(hid["pass_to_pass"]),
        )  # fmt: skip
        case_patches = tuple(
            CasePatch(
                p["name"], p["kind"], p["base"],
                Patch(_read(d / "patches" / f"{p['name']}.diff"), p.get("description", "")),
                p["effect"], p.get("description", ""),
            )  # fmt: skip
            for p in meta["patches"]
        )
        return RepairCase(
            id=meta["id"], slice=meta["slice"], title=meta.get("title", ""), module=module,
            original=original, visible=visible, hidden=hidden, patches=case_patches,
            initially_correct=bool(meta["initially_correct"]), flaky=tuple(meta.get("flaky", ())),
            oscillates=tuple(meta.get("oscillates", ())),
        )  # fmt: skip
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise CaseError(f"malformed case in {d}: {type(exc).__name__}: {exc}") from exc
    except LabkitError as exc:
        if isinstance(exc, CaseError):
            raise
        raise CaseError(f"malformed case in {d}: {exc}") from exc


# -- validation, cached ---------------------------------------------------------------------


class VerdictCache:
    """Verdicts keyed by (candidate digest, suite digest, validator id); optionally a JSON file.

    Only clean verdicts are stored (no alarm, no timeout). `save()` writes the file; loading
    a file whose contents are unreadable starts empty rather than trusting it.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._d: dict[str, Verdict] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.is_file():
            try:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                self._d = {k: _verdict_from(v) for k, v in raw.items()}
            except (OSError, ValueError, KeyError, TypeError):
                self._d = {}

    @staticmethod
    def key(candidate: Candidate, suite: AcceptanceSuite, validator_id: str) -> str:
        return f"{candidate.digest}:{suite.digest}:{validator_id}"

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            return self._d.get(key)

    def put(self, key: str, verdict: Verdict) -> None:
        if verdict.quarantined or verdict.evidence.timed_out:
            return
        with self._lock:
            self._d[key] = verdict

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: str) -> bool:
        return key in self._d

    def save(self) -> Path | None:
        if self.path is None:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            data = {k: _verdict_json(v) for k, v in self._d.items()}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(self.path)
        return self.path


def _verdict_json(v: Verdict) -> dict[str, Any]:
    e = v.evidence
    return {
        "evidence": {
            "candidate": e.candidate, "suite": e.suite, "validator": e.validator,
            "results": [[r.nodeid, r.outcome, r.message, r.seconds] for r in e.results],
            "exit_code": e.exit_code, "wall_seconds": e.wall_seconds, "alarms": list(e.alarms),
            "stderr_tail": e.stderr_tail, "timed_out": e.timed_out, "isolation": e.isolation,
        },  # fmt: skip
        "buckets": [list(v.fail_to_pass), list(v.fail_to_fail), list(v.pass_to_pass), list(v.pass_to_fail)],
    }


def _verdict_from(d: Mapping[str, Any]) -> Verdict:
    e = d["evidence"]
    evidence = Evidence(
        e["candidate"], e["suite"], e["validator"],
        tuple(TestResult(n, o, m, s) for n, o, m, s in e["results"]),
        e["exit_code"], e["wall_seconds"], tuple(e["alarms"]), e["stderr_tail"], e["timed_out"],
        e.get("isolation", ""),
    )  # fmt: skip
    f2p, f2f, p2p, p2f = (tuple(b) for b in d["buckets"])
    return Verdict(evidence, f2p, f2f, p2p, p2f)


@dataclass(frozen=True)
class Checked:
    """A verdict and whether it came from the cache (a cached verdict costs no time now)."""

    verdict: Verdict
    cached: bool

    @property
    def seconds(self) -> float:
        return 0.0 if self.cached else self.verdict.evidence.wall_seconds


class Checker:
    """The validator behind a verdict cache. Thread-safe; `runs` counts real pytest runs."""

    def __init__(self, validator: Validator | None = None, cache: VerdictCache | None = None) -> None:
        if validator is None:
            from labkit.grading.validator import Validator

            validator = Validator()
        self.validator = validator
        self.cache = cache if cache is not None else VerdictCache()
        self.runs = 0
        self._lock = threading.Lock()

    def check(self, candidate: Candidate, suite: AcceptanceSuite, *, use_cache: bool = True) -> Checked:
        key = VerdictCache.key(candidate, suite, self.validator.id)
        if use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return Checked(hit, True)
        verdict = self.validator.run(candidate, suite, use_cache=False)
        with self._lock:
            self.runs += 1
        self.cache.put(key, verdict)
        return Checked(verdict, False)

    def recheck(self, candidate: Candidate, suite: AcceptanceSuite, k: int, *, until_disagreement: bool = True) -> list[Verdict]:
        """Run the same candidate `k` more times, bypassing the cache (that is the point).

        Returns the first verdict (cached or fresh) followed by the re-runs; stops early at
        the first re-run whose outcomes differ, unless `until_disagreement` is False.
        """
        first = self.check(candidate, suite).verdict
        runs = [first]  # the recorded verdict: from the cache if there is one
        signature = Verification.of(first.evidence).signature
        for _ in range(k):
            again = self.check(candidate, suite, use_cache=False).verdict
            runs.append(again)
            if until_disagreement and Verification.of(again.evidence).signature != signature:
                break
        return runs

    def ready(self, case: RepairCase) -> bool:
        """True when every reachable state of `case` is cached on both suites (runs are instant)."""
        vid = self.validator.id
        return all(
            VerdictCache.key(c, s, vid) in self.cache for c in case.states().values() for s in (case.visible, case.hidden)
        )

    def warm(self, cases: Sequence[RepairCase], workers: int = 2, on_progress: Callable[[int, int], None] | None = None) -> int:
        """Validate every reachable state of every case on both suites; returns new pytest runs."""
        jobs = [(c, s) for case in cases for c in case.states().values() for s in (case.visible, case.hidden)]
        before, done = self.runs, 0
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for _ in pool.map(lambda job: self.check(*job), jobs):
                done += 1
                if on_progress is not None:
                    on_progress(done, len(jobs))
        return self.runs - before


# -- repairers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    """Where one case stands: the kept candidate, which named state it is, its visible verdict."""

    candidate: Candidate
    name: str  # "original", a patch name, or "model:<digest>" for model-written candidates
    verdict: Verdict

    @property
    def passing(self) -> bool:
        return self.verdict.resolved


@dataclass(frozen=True)
class Proposal:
    """A repairer's answer for one case in one round: the whole new candidate, and its source."""

    target: Candidate
    name: str  # named state it reaches (patch name) or "model:<digest>"
    source: str  # e.g. "fix", "wrong", "tempt", "model"
    usage: Usage = field(default_factory=Usage)
    note: str = ""


class Repairer(Protocol):
    name: str
    simulated: bool

    def propose(self, case: RepairCase, state: State, round: int) -> Proposal | None: ...


@dataclass(frozen=True)
class SimulatedRepairer:
    """A *simulated* repairer: it picks among each case's real patches, at random, per round.

    A case whose visible tests fail gets the correct fix with probability
    `fix * fix_decay**(round-1)`, else one of its wrong patches. A case whose visible tests
    pass is "improved" anyway with probability `breaks * break_growth**(round-1)`, using one
    of its tempting patches. Draws are seeded per (seed, case, round): the same case gets
    the same choices whichever other cases run with it.
    """

    fix: float = 0.6
    fix_decay: float = 0.7
    breaks: float = 0.03
    break_growth: float = 2.0
    seed: int = 0
    name: str = "simulated repairer"
    simulated: bool = True

    def __post_init__(self) -> None:
        for what in ("fix", "fix_decay", "breaks", "break_growth"):
            value = getattr(self, what)
            if not value >= 0:
                raise ValueError(f"SimulatedRepairer.{what} must be >= 0, got {value!r}")

    def p_fix(self, round: int) -> float:
        return min(1.0, self.fix * self.fix_decay ** (round - 1))

    def p_break(self, round: int) -> float:
        return min(1.0, self.breaks * self.break_growth ** (round - 1))

    def propose(self, case: RepairCase, state: State, round: int) -> Proposal | None:
        rng = random.Random(f"{self.seed}:{case.id}:{round}")
        u = rng.random()
        if not state.passing:
            wrong = [p for p in case.patches if p.kind == "wrong" and p.name != state.name]
            fix = [p for p in case.patches if p.kind == "fix"]
            pick = fix[0] if fix and (u < self.p_fix(round) or not wrong) else (rng.choice(wrong) if wrong else None)
        else:
            tempt = [p for p in case.patches if p.kind == "tempt" and p.base == state.name]
            pick = rng.choice(tempt) if tempt and u < self.p_break(round) else None
        if pick is None:
            return None
        # One nominal cost unit per simulated call, so cost caps have something to count.
        return Proposal(case.candidate(pick.name), pick.name, pick.kind, Usage(calls=1, cost_units=1.0), pick.description)


_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


@dataclass(frozen=True)
class ModelRepairer:
    """A model writes the new module: it sees the code, the visible tests and their failures only.

    Cases whose visible tests pass are shown too (that is how over-editing is measured);
    the model may answer NO CHANGE. A reply without a python code block is no proposal.
    """

    model: str
    max_tokens: int = 1024
    temperature: float = 0.0
    name: str = "model repairer"

    @property
    def simulated(self) -> bool:
        from labkit.models import gateway as models

        return models.is_simulated(self.model)

    def messages(self, case: RepairCase, state: State) -> list[dict[str, str]]:
        code = state.candidate.files[case.module]
        tests = case.visible.tests[VISIBLE_TESTS]
        failures = [r for r in state.verdict.evidence.results if r.outcome != "passed"]
        if failures:
            evidence = "\n".join(f"- {r.nodeid}: {r.outcome}: {r.message[:300]}" for r in failures)
            ask = f"These tests fail:\n{evidence}\nFix the module so they pass without breaking the others."
        else:
            ask = "All these tests pass. If you see a real bug, fix it; otherwise reply exactly NO CHANGE."
        return [
            {"role": "system", "content": "You repair Python modules. Reply with the complete corrected module in one ```python block, nothing else."},
            {"role": "user", "content": f"Module {case.module}:\n```python\n{code}```\n\nTests:\n```python\n{tests}```\n\n{ask}"},
        ]

    def propose(self, case: RepairCase, state: State, round: int) -> Proposal | None:
        from labkit.models import gateway as models

        reply = models.complete(self.model, self.messages(case, state), max_tokens=self.max_tokens, temperature=self.temperature)
        match = _FENCE.search(reply.text)
        if match is None or "NO CHANGE" in reply.text[:40]:
            return None
        text = match.group(1)
        if not text.endswith("\n"):
            text += "\n"
        target = state.candidate.with_files({**state.candidate.files, case.module: text}, label="model")
        name = next((n for n, c in case.states().items() if c.digest == target.digest), f"model:{target.digest[:8]}")
        return Proposal(target, name, "model", reply.usage, "model-written")


# -- the experiment -------------------------------------------------------------------------

Keep = Literal["no_worse", "resolved"]
DEFAULT_RULES: tuple[Rule, ...] = (MarginalNet(), NoNewEvidence(), Cap())
DEFAULT_CASE_RULES: tuple[Rule, ...] = (Oscillation(), UnstableValidator())


@dataclass(frozen=True)
class RepairRun:
    """What an experiment produced. Numbers are recomputed from the ledger, never kept aside."""

    run_id: str
    ledger: Ledger
    cases: tuple[RepairCase, ...]
    rounds_run: int
    stops: tuple[StopRecord, ...]  # per-case stops and (last, if any) the run's stop
    simulated: bool
    repairer: str
    final: Mapping[str, str]  # case id -> named state kept at the end (after any roll back)

    @property
    def stop(self) -> StopRecord | None:
        """The rule that stopped the whole run, if one did."""
        return next((s for s in self.stops if not s.case), None)

    def correctness(self) -> pl.DataFrame:
        """Per-case per-round correctness on the hidden tests, rebuilt from the ledger."""
        return accounting.from_ledger(self.ledger.frame(self.run_id))

    def per_round(self, **kw: Any) -> pl.DataFrame:
        return accounting.per_round(self.correctness(), **kw)

    def per_slice(self, by: str = "slice", **kw: Any) -> pl.DataFrame:
        return accounting.per_slice(self.correctness(), by, **kw)

    def transitions(self) -> pl.DataFrame:
        return accounting.transitions(self.correctness())

    def events(self) -> pl.DataFrame:
        return self.ledger.frame(self.run_id)

    def round_stats(self) -> tuple[accounting.RoundStats, ...]:
        """Per-round counts (hidden scoring) as the stop rules read them."""
        return accounting.round_stats(self.correctness())

    def moves(self, round: int) -> pl.DataFrame:
        """Who got fixed or broken in `round`, with the patch each case held after it."""
        moved = accounting.moved(self.correctness(), round)
        held = {c.id: "original" for c in self.cases}
        for r, kind, raw in self.events().select("round", "kind", "detail").iter_rows():
            detail = json.loads(raw)
            if r <= round and kind == "decide" and detail.get("decision") == "keep":
                held[detail["case"]] = detail["proposal"]
        by_id = {c.id: c for c in self.cases}
        rows = [
            (case, by_id[case].slice, move, held[case], _effect_of(by_id[case], held[case]))
            for move in ("fixed", "broken")
            for case in moved[move]
        ]
        schema = {"case": pl.Utf8, "slice": pl.Utf8, "move": pl.Utf8, "now holds": pl.Utf8, "effect": pl.Utf8}
        return pl.DataFrame(rows, schema=schema, orient="row")


def _effect_of(case: RepairCase, state: str) -> str:
    if state == "original":
        return "original (correct)" if case.initially_correct else "original (buggy)"
    if state.startswith("model:"):
        return "model-written"
    return case.patch(state).effect


def _summary(verdict: Verdict) -> dict[str, Any]:
    e = verdict.evidence
    return {
        "candidate": e.candidate, "suite": e.suite, "validator": e.validator, "digest": e.digest,
        "resolved": verdict.resolved, "failing": [r.nodeid for r in e.failures],
    }  # fmt: skip


def _decide(case: RepairCase, before: Verdict, after: Verdict, keep: Keep) -> tuple[bool, str, int]:
    """Keep or roll back, judged on the visible check set only. Returns (keep, reason, ΔF)."""
    severity: dict[str, checkset.Severity] = {n: "high" for n in case.visible.pass_to_pass}
    cs = checkset.CheckSet.from_tests(case.visible.name, case.visible.tests, case.visible.required, severity)
    report = checkset.compare(cs.read(before.evidence), cs.read(after.evidence))
    if after.quarantined:
        return False, f"quarantined: {'; '.join(after.evidence.alarms)}", report.delta_f
    if keep == "resolved":
        ok = after.resolved
        why = "all visible tests pass" if ok else f"{len(after.fail_to_fail) + len(after.pass_to_fail)} visible test(s) fail"
        return ok, why, report.delta_f
    worst = report.worst_new()
    if worst in ("high", "critical"):
        names = ", ".join(e.check.split("::")[-1] for e in report.new if e.severity == worst)
        return False, f"new {worst}-severity failure: {names}", report.delta_f
    if report.delta_f < 0:
        return False, f"ΔF {report.delta_f:+d} on the visible tests", report.delta_f
    return True, f"ΔF {report.delta_f:+d}, no new protective failure", report.delta_f


def run(
    cases: Sequence[RepairCase],
    repairer: Repairer,
    *,
    rounds: int = 3,
    checker: Checker | None = None,
    ledger: Ledger | None = None,
    run_id: str | None = None,
    rules: Sequence[Rule] = DEFAULT_RULES,
    case_rules: Sequence[Rule] = DEFAULT_CASE_RULES,
    keep: Keep = "no_worse",
    observe: Literal["hidden", "visible"] = "hidden",
    recheck: int = 0,
    workers: int = 2,
) -> RepairRun:
    """Run every case through up to `rounds` repair rounds and record everything in `ledger`.

    Round 0 validates each original (plus `recheck` uncached re-runs to catch an unstable
    acceptance before any repair) and scores it on the hidden tests. After each round the
    per-case rules (oscillation, unstable validator) may freeze a case, and the run rules
    (marginal net, no new evidence, caps) may stop the run; a stop whose outcome is roll
    back restores the previous round's states. `observe` says which accounting the run rules
    read: "hidden" (the lab's held-out scoring, as in the chapter) or "visible" (all a
    deployed loop could see — it cannot see what it breaks).
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    if not cases:
        raise ValueError("run needs at least one case")
    if len({c.id for c in cases}) != len(cases):
        raise ValueError("case ids must be unique")
    if keep not in ("no_worse", "resolved"):
        raise ValueError(f"keep must be 'no_worse' or 'resolved', got {keep!r}")
    checker = checker or Checker()
    ledger = ledger if ledger is not None else Ledger()
    run_id = run_id or new_run_id("repair")
    simulated = bool(getattr(repairer, "simulated", True))
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:

        def rec(round: int, role: str, kind: str, case: RepairCase, **kw: Any) -> None:
            detail = {"case": case.id, "slice": case.slice, "simulated": simulated, **kw.pop("detail", {})}
            ledger.record(run_id, round, role, kind, detail=detail, **kw)

        def verify(round: int, case: RepairCase, cand: Candidate, checked: Checked, why: str) -> None:
            rec(round, "validator", "verify", case, evidence=_summary(checked.verdict),
                usage=Usage(wall_seconds=checked.seconds),
                detail={"suite": "visible", "cached": checked.cached, "why": why})  # fmt: skip

        def score(round: int, case: RepairCase, checked: Checked) -> None:
            rec(round, "scorer", "score", case, evidence=_summary(checked.verdict),
                usage=Usage(wall_seconds=checked.seconds),
                detail={"suite": "hidden", "cached": checked.cached, "correct": checked.verdict.resolved})  # fmt: skip

        ledger.record(run_id, 0, "experiment", "start", detail={
            "repairer": repr(repairer), "simulated": simulated, "cases": [c.id for c in cases],
            "rounds": rounds, "keep": keep, "observe": observe, "recheck": recheck,
            "rules": [getattr(r, "name", type(r).__name__) for r in rules],
            "case_rules": [getattr(r, "name", type(r).__name__) for r in case_rules],
        })  # fmt: skip

        # Round 0: the originals, as the executor left them (re-run `recheck` times, uncached).
        def first(case: RepairCase) -> list[Checked]:
            runs = [checker.check(case.original, case.visible)]
            if recheck:
                again = checker.recheck(case.original, case.visible, recheck)[1:]
                runs += [Checked(v, False) for v in again]
            return runs

        states: dict[str, State] = {}
        steps: list[Step] = []
        verifications: list[Verification] = []
        firsts = list(pool.map(first, cases))
        hidden0 = list(pool.map(lambda c: checker.check(c.original, c.hidden), cases))
        for case, runs, scored in zip(cases, firsts, hidden0, strict=True):
            for i, checked_run in enumerate(runs):
                verify(0, case, case.original, checked_run, "original" if i == 0 else f"re-run {i} (uncached)")
                verifications.append(Verification.of(checked_run.verdict.evidence, case.id))
            states[case.id] = State(case.original, "original", runs[0].verdict)
            steps.append(Step.of(case.id, 0, runs[0].verdict.evidence))
            score(0, case, scored)
        hidden_state = {c.id: hidden0[i].verdict.resolved for i, c in enumerate(cases)}

        correct_rows: list[tuple[str, int, bool, bool]] = [(c.id, 0, hidden_state[c.id], states[c.id].passing) for c in cases]
        risk_by_round: dict[int, float] = {}
        frozen: dict[str, StopRecord] = {}
        stops: list[StopRecord] = []
        history_states: list[dict[str, State]] = [dict(states)]
        rounds_run = 0
        run_stop: StopRecord | None = None

        def freeze_cases(round: int, history: History) -> None:
            for case in cases:
                if case.id in frozen:
                    continue
                fired = check(case_rules, history.for_case(case.id))
                if fired is not None:
                    fired = StopRecord(fired.decision, fired.reason, fired.rule, fired.outcome, case.id)
                    frozen[case.id] = fired
                    stops.append(fired)
                    rec(round, "decision", "stop", case, detail={"rule": fired.rule, "outcome": str(fired.outcome), "reason": fired.reason})

        freeze_cases(0, History((), tuple(steps), tuple(verifications)))

        for r in range(1, rounds + 1):
            active = [c for c in cases if c.id not in frozen]
            proposals: dict[str, Proposal | None] = {}
            for case in active:
                try:
                    proposal = repairer.propose(case, states[case.id], r)
                except (ModelTimeout, ModelUnavailable, ReplyFormatError) as exc:  # recorded, not fatal
                    rec(r, "executor", "error", case, detail={"error": f"{type(exc).__name__}: {exc}"})
                    proposal = None
                proposals[case.id] = proposal
                if proposal is None:
                    rec(r, "executor", "idle", case, detail={"state": states[case.id].name})
                    continue
                current = states[case.id].candidate
                diff = patches.make(current.files, proposal.target.files, proposal.note)
                rec(r, "executor", "generate", case, inputs=current.files[case.module], outputs=diff.diff,
                    usage=proposal.usage, detail={"proposal": proposal.name, "source": proposal.source, "note": proposal.note,
                                                  "lines": patches.size(diff).lines if diff.diff else 0})  # fmt: skip
            jobs = [(c.id, p.target, c.visible) for c in active if (p := proposals[c.id]) is not None]
            checked = dict(zip([j[0] for j in jobs], pool.map(lambda j: checker.check(j[1], j[2]), jobs), strict=True))

            risk = 0.0
            for case in active:
                proposal = proposals[case.id]
                state = states[case.id]
                if proposal is None:
                    steps.append(Step.of(case.id, r, state.verdict.evidence))
                    continue
                result = checked[case.id]
                verify(r, case, proposal.target, result, f"proposal {proposal.name}")
                verifications.append(Verification.of(result.verdict.evidence, case.id))
                kept, reason, delta_f = _decide(case, state.verdict, result.verdict, keep)
                steps.append(Step.of(case.id, r, result.verdict.evidence, kept=kept))
                if not kept:  # the case still holds its previous state this round
                    steps.append(Step.of(case.id, r, state.verdict.evidence))
                rec(r, "decision", "decide", case, detail={"decision": "keep" if kept else "roll back", "reason": reason,
                                                          "delta_f": delta_f, "proposal": proposal.name})  # fmt: skip
                if kept:
                    diff = patches.make(state.candidate.files, proposal.target.files)
                    risk += patches.size(diff).lines if diff.diff else 0
                    states[case.id] = State(proposal.target, proposal.name, result.verdict)

            kept_now = [(states[c.id].candidate, c.hidden) for c in cases]
            hidden_now = list(pool.map(lambda j: checker.check(*j), kept_now))
            for case, scored_now in zip(cases, hidden_now, strict=True):
                score(r, case, scored_now)
                hidden_state[case.id] = scored_now.verdict.resolved
                correct_rows.append((case.id, r, hidden_state[case.id], states[case.id].passing))
            history_states.append(dict(states))
            rounds_run = r
            risk_by_round[r] = risk

            history = History(_observed(correct_rows, observe, risk_by_round, run_id, ledger), tuple(steps), tuple(verifications))
            freeze_cases(r, history)
            run_stop = check(rules, history)
            if run_stop is not None:
                stops.append(run_stop)
                ledger.record(run_id, r, "decision", "stop", detail={"rule": run_stop.rule, "outcome": str(run_stop.outcome), "reason": run_stop.reason})
                if run_stop.outcome is Stop.ROLL_BACK and len(history_states) >= 2:
                    # The round did more harm than good: restore every case's previous state.
                    for case in cases:
                        before = history_states[-2][case.id]
                        if before.name != states[case.id].name:
                            rec(r, "decision", "decide", case, detail={"decision": "roll back", "reason": f"run stop: {run_stop.reason}", "delta_f": 0, "proposal": before.name})
                    states = dict(history_states[-2])
                break
            if len(frozen) == len(cases):
                break
    finally:
        pool.shutdown()
    return RepairRun(
        run_id, ledger, tuple(cases), rounds_run, tuple(stops), simulated,
        getattr(repairer, "name", type(repairer).__name__), {c: s.name for c, s in states.items()},
    )  # fmt: skip


def _observed(
    rows: list[tuple[str, int, bool, bool]],
    observe: str,
    risk: Mapping[int, float],
    run_id: str,
    ledger: Ledger,
) -> tuple[accounting.RoundStats, ...]:
    """Per-round counts the run rules read: hidden or visible correctness, plus spend and risk."""
    col = 2 if observe == "hidden" else 3
    frame = pl.DataFrame(
        {"case": [x[0] for x in rows], "round": [x[1] for x in rows], "correct": [x[col] for x in rows]},
        schema={"case": pl.Utf8, "round": pl.Int64, "correct": pl.Boolean},
    )
    usage = ledger.frame(run_id).group_by("round").agg(pl.col("cost_units").sum(), pl.col("wall_seconds").sum())
    cost = dict(zip(usage["round"].to_list(), usage["cost_units"].to_list(), strict=True))
    secs = dict(zip(usage["round"].to_list(), usage["wall_seconds"].to_list(), strict=True))
    return tuple(
        accounting.RoundStats(s.round, s.fixed, s.broken, s.wrong_before, s.right_before,
                              cost=float(cost.get(s.round, 0.0)),
                              seconds=float(secs.get(s.round, 0.0)), risk=risk.get(s.round, 0.0))  # fmt: skip
        for s in accounting.round_stats(frame)
    )


def label(run: RepairRun) -> str:
    """How to caption a run's numbers: simulated repairers say so."""
    return f"{run.repairer} ({'simulated' if run.simulated else 'model'}; validator and tests real)"

