"""SIMULATED memory effects (every parameter explicit, every figure from a seeded run):

1. Raw transcript vs distilled experience (seed 000): the next task sees either the whole
   dialogue of a past cache-isolation branch (the real replies in transcript.jsonl, rejected
   actions included) or the conditioned lesson from the experience store (real
   `ExperienceStore.retrieve`, preconditions re-checked). A simulated actor copies an action
   from its context with probability `p_copy` (from a transcript: weighted by how much of the
   transcript each action occupies), else reasons on its own (right with `p_own`).
2. Experience-following (seed 001 §06.4): a replayed past success as a few-shot example,
   relevant with probability `quality`; the actor follows it with `p_follow`.
3. Hindsight relabelling (HER): a failed trajectory that reached another goal is stored as an
   example of that goal; with an example the actor succeeds with `p_with_example`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from labkit.core.paths import DATA
from labkit.core.stats import Interval, bootstrap_mean
from labkit.loop.strategies.memory.store import ExperienceStore

__all__ = [
    "ACTIONS",
    "Pollution",
    "Trajectory",
    "experience_following",
    "hindsight",
    "pollution",
    "relabel",
    "transcript_actions",
]

# What each cache-case action is, read from the reply's "action" text.
ACTIONS = {"composite": "(user_id, product_id)", "disable": "Disable the cache", "rewrite": "Rewrite the cache"}


def transcript_actions(branch: str = "tempting") -> list[tuple[str, int]]:
    """(action kind, characters) for each round reply of `branch` in the cache case's transcript."""
    out = []
    for line in (DATA / "cache_isolation" / "transcript.jsonl").read_text().splitlines():
        d = json.loads(line)
        if not d["key"].startswith(f"{branch}/round-"):
            continue
        try:
            action = str(json.loads(d["reply"]).get("action", ""))
        except json.JSONDecodeError:
            action = ""
        kind = next((k for k, marker in ACTIONS.items() if marker in action), "other")
        out.append((kind, len(d["reply"])))
    return out


@dataclass(frozen=True)
class Pollution:
    frame: pl.DataFrame  # arm, task, tenant, action, correct, copied_rejected
    success: dict[str, Interval]
    rejected_copied: dict[str, Interval]  # share of tasks acting on a rolled-back action


def pollution(
    store: ExperienceStore,
    environment: str,
    *,
    branch: str = "tempting",
    tasks: int = 2000,
    tenant_share: float = 0.5,
    p_copy: float = 0.6,
    p_own: float = 0.6,
    seed: int = 0,
) -> Pollution:
    """Next tasks: tenant (right action: composite key) or public catalogue (right: keep the
    product key). Arms: no memory, raw transcript of `branch`, distilled lesson from `store`."""
    from labkit.experiments.memory.counterexample import CATALOGUE_FACTS, TENANT_FACTS

    raw = transcript_actions(branch)
    kinds, weights = [k for k, _ in raw], [n for _, n in raw]
    # a retrieval reads the store and re-checks preconditions: a pure function of the task's
    # facts, of which there are two kinds, so each is retrieved once rather than once per task
    found = {
        tenant: bool(store.retrieve(TENANT_FACTS if tenant else CATALOGUE_FACTS, environment=environment).candidates)
        for tenant in (True, False)
    }
    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        tenant = rng.random() < tenant_share
        right = "composite" if tenant else "keep"
        own = right if rng.random() < p_own else ("keep" if tenant else "composite")
        copy = rng.random() < p_copy
        pick = rng.choices(kinds, weights=weights)[0]
        lesson = "composite" if found[tenant] else ""
        for arm, action in (
            ("no memory", own),
            ("raw transcript", pick if copy else own),
            ("distilled", lesson if copy and lesson else own),
        ):
            rows.append(
                {
                    "arm": arm,
                    "task": t,
                    "tenant": tenant,
                    "action": action,
                    "correct": action == right,
                    "copied_rejected": action in ("disable", "rewrite"),
                }
            )
    frame = pl.DataFrame(rows)

    def ci(col: str) -> dict[str, Interval]:
        return {
            a: bootstrap_mean(frame.filter(pl.col("arm") == a)[col].cast(pl.Float64).to_numpy())
            for a in ("no memory", "raw transcript", "distilled")
        }

    return Pollution(frame, ci("correct"), ci("copied_rejected"))


def experience_following(
    qualities: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0),
    *,
    tasks: int = 2000,
    p_follow: float = 0.7,
    p_own: float = 0.6,
    seed: int = 0,
) -> pl.DataFrame:
    """Success vs retrieval quality with a replayed example, and the no-replay baseline, per quality."""
    rows = []
    for q in qualities:
        rng = random.Random(f"{seed}:{q}")
        own, replay = [], []
        for _ in range(tasks):
            right_own = rng.random() < p_own
            relevant = rng.random() < q
            follows = rng.random() < p_follow
            own.append(float(right_own))
            replay.append(float(relevant if follows else right_own))
        b, r = bootstrap_mean(own), bootstrap_mean(replay)
        d = bootstrap_mean([x - y for x, y in zip(replay, own, strict=True)])
        rows.append(
            {
                "quality": q,
                "no replay": b.estimate,
                "replay": r.estimate,
                "replay - none": d.estimate,
                "diff low": d.low,
                "diff high": d.high,
            }
        )
    return pl.DataFrame(rows)


@dataclass(frozen=True)
class Trajectory:
    goal: str  # what it was asked to do
    reached: str  # what it actually achieved
    steps: tuple[str, ...]

    @property
    def success(self) -> bool:
        return self.goal == self.reached


def relabel(t: Trajectory) -> Trajectory:
    """Hindsight relabelling: the trajectory is an example of the goal it reached."""
    return Trajectory(t.reached, t.reached, t.steps)


def hindsight(
    *,
    goals: int = 20,
    episodes: int = 60,
    tests: int = 2000,
    p_reach: float = 0.2,
    p_with_example: float = 0.7,
    seed: int = 0,
) -> dict[str, Interval]:
    """Success on new tasks after `episodes` attempts, replaying stored examples: only successes
    vs successes + relabelled failures. Without an example the actor succeeds with `p_reach`."""
    rng = random.Random(seed)
    names = [f"goal-{i}" for i in range(goals)]
    plain: dict[str, Trajectory] = {}
    her: dict[str, Trajectory] = {}
    for e in range(episodes):
        g = rng.choice(names)
        ok = rng.random() < p_reach
        t = Trajectory(g, g if ok else rng.choice([n for n in names if n != g]), (f"episode {e}",))
        if t.success:
            plain.setdefault(g, t)
        stored = t if t.success else relabel(t)
        her.setdefault(stored.goal, stored)
    out = {}
    for arm, buf in (("successes only", plain), ("with hindsight relabelling", her)):
        trng = random.Random(f"{seed}:test")
        wins = []
        for _ in range(tests):
            g = trng.choice(names)
            wins.append(float(trng.random() < (p_with_example if g in buf else p_reach)))
        out[arm] = bootstrap_mean(wins)
    return out
