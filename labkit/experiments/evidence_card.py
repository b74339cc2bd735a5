"""The layer's evidence card (seed 002 §1), derived from a run's configuration and its ledger.

Nine fields describe an evolution layer: mutable objects, observed signals, attribution
method, candidate generation, evaluation isolation, gate criteria, release method, rollback
granularity and failure modes. The seed gives the in-task layer's card as prose (`CLAIMED`);
`derive` reads what one or more recorded runs actually did, field by field, from their events
(`START`/`DEFINE` carry the configuration: keep mode, visible and sealed suites), and `check`
lists every claim the ledger contradicts. Three claims are checkable:

- **evaluation isolation** — which suites' verdicts reached a prompt: a `reflect` event's input
  is the evidence digest of the verdict it was shown, so a sealed (hidden) suite whose verdict
  digest appears there has leaked into the repair context;
- **gate criteria** — a run configured to keep children without a visible gate (keep="always")
  contradicts "required checks pass";
- **rollback granularity** — a checkpoint that recorded only a code version (no dependency
  image, no environment) cannot be restored completely.

Nothing here is typed in per notebook: a field the ledger holds no evidence for says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.record import outcomes
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Event, Ledger

__all__ = [
    "CHECKABLE",
    "CLAIMED",
    "FIELDS",
    "Card",
    "Facts",
    "check",
    "derive",
    "facts",
    "verdicts",
]

FIELDS = (
    "mutable objects", "observed signals", "attribution method", "candidate generation", "evaluation isolation",
    "gate criteria", "release method", "rollback granularity", "failure modes",
)  # fmt: skip
CLAIMED = dict(
    zip(
        FIELDS,
        (  # seed 002 §1, the in-task layer's card (SPEC §10's English)
            "plan, candidate branches, temporary reflections, retrieval scope, allocated budget",
            "tool errors, test diffs, environment state, review diagnostics, cost deltas",
            "error classes, hypothesis→action→result chains, candidate comparison in a fixed environment",
            "best-of-N, tree search, independent work units, minimal repair",
            "dev diagnostics may flow back; sealed final tests never enter the repair context",
            "required checks pass, budget and side-effect caps; failure sets are diagnostic only",
            "the task's own artifact is selected; no global config change",
            "branch, worktree, restorable checkpoint",
            "endless retry, self-confirmation, wrong reflection, duplicated side effects, test leakage",
        ),
        strict=True,
    )
)
NOT_SEEN = "no evidence in this ledger"


@dataclass(frozen=True, kw_only=True)
class Facts:
    """What the ledger says the runs did, counted once (the card's fields are sentences over these)."""

    runs: int
    files_changed: tuple[str, ...]
    kinds: dict[str, int]  # event kind -> count
    budgeted: bool
    decide_rules: dict[str, int]  # "keep: resolved" -> count
    children_per_proposal: int  # the most children one proposal offered
    sequence: bool
    keep_modes: tuple[str, ...]
    visible_suites: tuple[str, ...]
    sealed_suites: tuple[str, ...]
    prompted_suites: tuple[str, ...]  # suites whose verdict evidence reached a reflect event's input
    predictions: int  # experiments that carried a prediction written before them
    checkpoint_parts: tuple[tuple[str, ...], ...]  # per checkpoint event, the parts it recorded
    rollbacks: int
    stop_rules: dict[str, int]
    held: tuple[str, ...]  # the labels of the candidates runs ended holding

    @property
    def leaked(self) -> tuple[str, ...]:
        return tuple(s for s in self.sealed_suites if s in self.prompted_suites)


@dataclass(frozen=True)
class Card:
    runs: int
    fields: dict[str, str]  # field -> what the ledger shows
    facts: Facts


def facts(ledger: Ledger, run_ids: Sequence[str] = (), sealed: Sequence[str] = ()) -> Facts:
    """Read the runs (every run in `ledger` when none are named). `sealed`: suite digests the run's
    configuration declares sealed besides those its events name (e.g. a search case's final set)."""
    from labkit.core.patch import touched
    from labkit.core.types import Patch

    ids = list(run_ids) or ledger.runs()
    events: list[Event] = [e for r in ids for e in ledger.events(r)]
    kinds = Counter(str(e.kind) for e in events if e.role != Role.BUDGET)
    files: set[str] = set()
    verdict_suite: dict[str, str] = {}  # evidence blob hash -> suite digest
    prompted, visible, keep, held = set(), set(), set(), []
    found: set[str] = set(sealed)
    rules: Counter[str] = Counter()
    stops: Counter[str] = Counter()
    children, sequence, predictions, rollbacks = 0, False, 0, 0
    parts: list[tuple[str, ...]] = []
    frontier = {e.run_id for e in events if e.kind == Kind.START and e.detail.get("expand")}  # frontier searches
    for e in events:
        d = e.detail
        if e.run_id in frontier:  # the search on the engine, in its own nouns (labkit.loop.search.readback)
            if e.kind in (Kind.REFLECT, Kind.IDLE):
                kinds[str(Kind.EXPAND)] += 1
            elif e.kind == Kind.GENERATE and e.role == Role.EXECUTOR and e.round > 0:
                kinds[str(Kind.BRANCH)] += 1
            elif e.kind == Kind.CONFIRM and e.role == Role.DECISION:
                kinds[str(Kind.SEAL)] += int(d.get("green") or 0)
                held.append(str(d.get("state", "")))
        if e.kind == Kind.START and d.get("keep"):
            keep.add(str(d["keep"]))
        elif e.kind == Kind.DEFINE and e.role == Role.DECISION:
            visible.add(str(d.get("suite", "")))
            if d.get("hidden"):
                found.add(str(d["hidden"]))
        elif e.kind == Kind.GENERATE and e.role == Role.EXECUTOR and e.input_hash:
            files.update(touched(Patch(ledger.get(e.input_hash))))
        elif e.kind == Kind.VERIFY and e.output_hash:
            verdict_suite[e.output_hash] = str(d.get("suite", ""))
        elif e.kind == Kind.REFLECT:
            children = max(children, int(d.get("children") or 0))
            predictions += bool(d.get("prediction"))
            prompted.add(str(d.get("suite", "")))  # the visible suite the strategy was shown
            if e.input_hash in verdict_suite:  # and the suite of the verdict it was handed
                prompted.add(verdict_suite[e.input_hash])
        elif e.kind == Kind.CHECKPOINT:
            parts.append(tuple(p for p in ("code_version", "dependency_image", "environment", "pending") if d.get(p)))
        elif e.kind == Kind.EXPAND:
            children = max(children, int(d.get("proposed") or 0))
        elif e.kind == Kind.STOP:
            search = e.role == Role.SEARCH
            stops[str(d.get("rule") or (d.get("reason") if search else "") or d.get("status") or "stop")] += 1
            if search and d.get("winner"):
                held.append(str(d["winner"]))
            if e.output_hash and e.role == Role.DECISION and e.run_id not in frontier:  # a search releases its winner
                import json

                held.append(str(json.loads(ledger.get(e.output_hash)).get("label", "")))
        sequence = sequence or (e.kind == Kind.CHECKPOINT and "step" in d)
    found.update(s.scored_suite for s in outcomes.scores(events) if s.scored_on == "hidden")
    for decided in outcomes.decisions(events):
        rules[f"{decided.decision}: {decided.rule}"] += 1
        rollbacks += sum(c.decision == "roll back" for c in decided.each)
    budgeted = any(e.role == Role.BUDGET for e in events)
    return Facts(
        runs=len(ids),
        files_changed=tuple(sorted(files)),
        kinds=dict(kinds),
        budgeted=budgeted,
        decide_rules=dict(rules),
        children_per_proposal=children,
        sequence=sequence,
        keep_modes=tuple(sorted(keep)),
        visible_suites=tuple(sorted(visible - {""})),
        sealed_suites=tuple(sorted(found - {""})),
        prompted_suites=tuple(sorted(prompted)),
        predictions=predictions,
        checkpoint_parts=tuple(parts),
        rollbacks=rollbacks,
        stop_rules=dict(stops),
        held=tuple(held),
    )


def _counted(pairs: Sequence[tuple[str, int]]) -> str:
    return "; ".join(f"{what} ×{n}" for what, n in pairs if n) or NOT_SEEN


def derive(ledger: Ledger, run_ids: Sequence[str] = (), sealed: Sequence[str] = ()) -> Card:
    """The card of the named runs (or every run in `ledger`), each field read from the events;
    `sealed` as in `facts`."""
    f = facts(ledger, run_ids, sealed)
    k = f.kinds.get
    mutable = [f"candidate files ({', '.join(f.files_changed)})" if f.files_changed else "",
               "search branches" if k(Kind.BRANCH) else "", "temporary reflections" if k(Kind.REFLECT) else "",
               "checkpointed state" if f.checkpoint_parts else "", "allocated budget" if f.budgeted else ""]  # fmt: skip
    signals = _counted(
        [
            ("test verdicts", k(Kind.VERIFY, 0)),
            ("probe observations", k(Kind.EXPERIMENT, 0)),
            ("tool outcomes", k(Kind.TOOL, 0)),
            ("integrity alarms", k(Kind.ALARM, 0)),
            ("model errors", k(Kind.ERROR, 0)),
            ("sealed confirmations", k(Kind.CONFIRM, 0)),
        ]
    )
    if f.budgeted:
        signals += "; cost deltas (budget events)"
    attribution = (
        "candidate compared on the same suite and validator, decided by rule: "
        + _counted(sorted(f.decide_rules.items()))
        if f.decide_rules
        else ""
    )
    if k(Kind.ERROR_DECISION) or k(Kind.TOOL):
        attribution += ("; " if attribution else "") + "error classes"
    if k(Kind.BRANCH):
        attribution += ("; " if attribution else "") + "ΔF with severity per branch, on fixed checks"
    if k(Kind.EXPERIMENT):
        attribution += f"; discriminating experiments ({f.predictions} with a prediction recorded first)"
    if k(Kind.EXPAND):
        generation = f"tree search: {k(Kind.EXPAND)} expansion(s), {k(Kind.BRANCH, 0)} branch(es), up to {f.children_per_proposal} per expansion"
    elif f.sequence:
        generation = "dependent steps, each on the last green checkpoint"
    elif f.children_per_proposal > 1:
        generation = f"up to {f.children_per_proposal} rival candidates per proposal (best-of-N style)"
    elif f.children_per_proposal == 1:
        generation = "one candidate per proposal (minimal repair)"
    else:
        generation = ""
    isolation = (
        f"repair context saw {len(f.prompted_suites)} suite(s) {', '.join(f.prompted_suites) or '—'}; "
        f"sealed: {', '.join(f.sealed_suites) or 'none'}; "
    )
    if k(Kind.CONFIRM):
        isolation += f"sealed final set confirmed ×{k(Kind.CONFIRM)}, pass/fail only; "
    isolation += (
        f"LEAK: sealed {', '.join(f.leaked)} reached a prompt" if f.leaked else "no sealed suite reached a prompt"
    )
    gate = (f"keep mode {', '.join(f.keep_modes)}; " if f.keep_modes else "") + _counted(
        sorted((r, n) for r, n in f.decide_rules.items() if r.startswith("keep:"))
    )
    if k(Kind.SEAL):
        seal = f"sealed when every required check passes ×{k(Kind.SEAL)}"
        gate = seal if gate == NOT_SEEN else f"{gate}; {seal}"
    release = f"held at the end: {', '.join(dict.fromkeys(f.held))}" if f.held else ""
    if k(Kind.SEAL):
        release += ("; " if release else "") + f"{k(Kind.SEAL)} sealed candidate(s)"
    rollback = _counted(
        [
            ("child rolled back", f.rollbacks),
            ("checkpoint recorded", len(f.checkpoint_parts)),
            ("branch run apart from its siblings", k(Kind.BRANCH, 0)),
        ]
    )
    if f.checkpoint_parts:
        recorded = sorted({p for ps in f.checkpoint_parts for p in ps})
        rollback += f" (parts recorded: {', '.join(recorded)})"
    # in words, as a class reads them: "stopped by budget exhausted", never "budget_exhausted"
    failures = _counted([("stopped by " + r.replace("_", " "), n) for r, n in sorted(f.stop_rules.items())])
    if f.leaked:
        failures += "; test leakage"
    values = [", ".join(m for m in mutable if m), signals, attribution, generation, isolation, gate, release,
              rollback, failures]  # fmt: skip
    return Card(f.runs, {name: v or NOT_SEEN for name, v in zip(FIELDS, values, strict=True)}, f)


def check(card: Card) -> dict[str, str]:
    """Each claim of `CLAIMED` the ledger contradicts, with why (empty: none contradicted)."""
    f, out = card.facts, {}
    if f.leaked:
        out["evaluation isolation"] = f"sealed suite(s) {', '.join(f.leaked)} reached the repair context"
    if "always" in f.keep_modes:
        out["gate criteria"] = "children were kept without a visible gate (keep mode 'always')"
    partial = [p for p in f.checkpoint_parts if not {"dependency_image", "environment"} <= set(p)]
    if partial:
        out["rollback granularity"] = f"{len(partial)} checkpoint(s) recorded no dependency image or environment"
    return out


CHECKABLE = (
    "evaluation isolation",
    "gate criteria",
    "rollback granularity",
)  # the claims `check` tests


def verdicts(card: Card) -> dict[str, str]:
    """Per field: "contradicted: why", "holds", "nothing to check in this run" (a checkable claim
    the ledger gives no material for: no sealed suite, no gate decision, no checkpoint), or
    "not checked" (a claim no ledger event can test)."""
    f, bad = card.facts, check(card)
    material = {
        "evaluation isolation": bool(f.sealed_suites),
        "gate criteria": bool(f.keep_modes or f.decide_rules or f.kinds.get(Kind.SEAL)),
        "rollback granularity": bool(f.checkpoint_parts),
    }
    out = {}
    for name in FIELDS:
        if name in bad:
            out[name] = "contradicted: " + bad[name]
        elif name not in CHECKABLE:
            out[name] = "not checked"
        else:
            out[name] = "holds" if material[name] else "nothing to check in this run"
    return out
