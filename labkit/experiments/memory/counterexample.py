"""The counterexample, run for real (SPEC §4, §9): the right lesson vs the wrong generalisation.

Right: "multi-tenant cache keys must cover the tenant boundary" (conditioned: the cached values
differ per tenant). Wrong: "always add user_id to every cache key" (the condition dropped).

Both keys are run on the case's own `pricing.PriceService` (v1 key = product_id; v2 = the
composite-key patch, (user_id, product_id)) in a probe subprocess, under a seeded request mix
(Zipf product popularity, Zipf user activity; parameters in `Mix`), against two databases:
- a *public catalogue*: every user sees the same price for a product (the wrong lesson's target);
- *contract prices*: each tenant has its own price (where the right lesson's condition holds).
Measured per seed: cache entries, database queries, hit rate, and prices served wrong.

Then the store: the conditioned lesson, written from the verified correction of a real
cache-isolation run, is retrieved for the catalogue task and withheld because its precondition
("values differ per tenant") fails — the application the wrong generalisation would make.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from labkit.core.patch import apply
from labkit.core.paths import DATA, read_recording
from labkit.core.stats import Interval, bootstrap_mean
from labkit.core.versions import package_versions
from labkit.loop.engine.probe import Experiment, observe
from labkit.loop.engine.reflection import Experience
from labkit.loop.strategies.memory.store import (
    CandidateExplanation,
    Correction,
    ExperienceStore,
    Retrieval,
    find_correction,
)
from labkit.record.ledger import Ledger

__all__ = [
    "CATALOGUE_FACTS",
    "Counterexample",
    "DEPENDS_ON",
    "Mix",
    "NOTEBOOK_MIX",
    "RECORD",
    "Run",
    "TENANT_FACTS",
    "WRONG",
    "from_record",
    "lesson",
    "load",
    "main",
    "measure",
    "record",
    "refusal",
    "remember",
    "run",
    "summarise",
]

WRONG = "Always add user_id to every cache key."
TENANT_FACTS = {"multi-tenant": True, "values differ per tenant": True}
CATALOGUE_FACTS = {"multi-tenant": True, "values differ per tenant": False}  # many users, one price each


@dataclass(frozen=True, kw_only=True)
class Mix:
    """The seeded request mix (every parameter explicit)."""

    users: int = 300
    products: int = 600
    requests: int = 30_000
    product_zipf: float = 1.0  # popularity of product k ∝ 1 / k**s
    user_zipf: float = 0.7  # activity of user k ∝ 1 / k**s
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6, 7)


_PROBE = """
import json, random
from pricing import PriceService

class Db:
    def __init__(self, price):
        self.price, self.queries = price, 0
    def fetch_price(self, user_id, product_id):
        self.queries += 1
        return self.price(user_id, product_id)

m = json.loads(MIX)
out = []
for seed in m["seeds"]:
    rng = random.Random(seed)
    pw = [1 / (k + 1) ** m["product_zipf"] for k in range(m["products"])]
    uw = [1 / (k + 1) ** m["user_zipf"] for k in range(m["users"])]
    products = rng.choices(range(m["products"]), weights=pw, k=m["requests"])
    users = rng.choices(range(m["users"]), weights=uw, k=m["requests"])
    base = [rng.randint(5, 500) for _ in range(m["products"])]
    discount = [rng.choice([0.8, 0.9, 1.0, 1.1]) for _ in range(m["users"])]
    for db_name, price in (("public catalogue", lambda u, p: base[p]),
                           ("contract prices", lambda u, p: round(base[p] * discount[u], 2))):
        service = PriceService(Db(price))
        wrong = sum(service.price(u, p) != price(u, p) for u, p in zip(users, products))
        out.append({"seed": seed, "database": db_name, "entries": len(service._cache),
                    "queries": service.db.queries, "requests": m["requests"], "wrong": wrong})
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Counterexample:
    """Per-seed rows (`frame`) and per (database, key) means with bootstrap intervals."""

    mix: Mix
    frame: pl.DataFrame  # seed, database, key, entries, queries, hit_rate, wrong_rate
    hit_rate: dict[tuple[str, str], Interval]
    entries: dict[tuple[str, str], Interval]
    wrong_rate: dict[tuple[str, str], Interval]

    def table(self) -> pl.DataFrame:
        """One row per (database, key): means and 95% intervals."""
        rows = []
        for db, key in sorted(self.hit_rate):
            h, e, w = self.hit_rate[db, key], self.entries[db, key], self.wrong_rate[db, key]
            rows.append(
                {
                    "database": db,
                    "key": key,
                    "cache entries": round(e.estimate),
                    "entries 95% CI": f"{e.low:.0f}–{e.high:.0f}",
                    "hit rate": round(h.estimate, 3),
                    "hit rate 95% CI": f"{h.low:.3f}–{h.high:.3f}",
                    "wrong prices served": round(w.estimate, 3),
                }
            )
        return pl.DataFrame(rows)


def measure(mix: Mix | None = None) -> Counterexample:
    """Run both keys (the case's v1 and the composite-key patch) on both databases, every seed."""
    from labkit.experiments.cache_isolation import case

    mix = mix or Mix()
    c = case()
    keys = {"product_id": c.start, "(user_id, product_id)": apply(c.start, c.patch("composite_key"))}
    rows = []
    for key, cand in keys.items():
        probe = _PROBE.replace("MIX", repr(json.dumps(asdict(mix))))
        obs = observe(cand, Experiment(f"cache size and hit rate with key {key}", probe), timeout=300)
        if obs.exit_code != 0:
            raise RuntimeError(f"counterexample probe failed for key {key}: {obs.output[-500:]}")
        for r in json.loads(obs.output.splitlines()[-1]):
            rows.append(
                {
                    "seed": r["seed"],
                    "database": r["database"],
                    "key": key,
                    "entries": r["entries"],
                    "queries": r["queries"],
                    "hit_rate": 1 - r["queries"] / r["requests"],
                    "wrong_rate": r["wrong"] / r["requests"],
                }
            )
    return summarise(mix, pl.DataFrame(rows))


def summarise(mix: Mix, frame: pl.DataFrame) -> Counterexample:
    """Per (database, key) means with bootstrap intervals from the per-seed rows of `measure`."""

    def ci(col: str) -> dict[tuple[str, str], Interval]:
        groups = frame.group_by("database", "key", maintain_order=True).agg(pl.col(col))
        return {(d, k): bootstrap_mean(v) for d, k, v in groups.iter_rows()}

    return Counterexample(mix, frame, ci("hit_rate"), ci("entries"), ci("wrong_rate"))


def lesson(result: Counterexample, environment: str) -> Experience:
    """The conditioned lesson, its rejected generalisation carrying the measured cost."""
    cat = "public catalogue"
    h1, h2 = result.hit_rate[cat, "product_id"], result.hit_rate[cat, "(user_id, product_id)"]
    e1, e2 = result.entries[cat, "product_id"], result.entries[cat, "(user_id, product_id)"]
    why = (
        f"measured on a public catalogue ({result.mix.requests} requests × {len(result.mix.seeds)} seeds): "
        f"cache entries {e1.estimate:.0f} -> {e2.estimate:.0f} (×{e2.estimate / e1.estimate:.1f}), "
        f"hit rate {h1.estimate:.3f} -> {h2.estimate:.3f}, with no price served wrong by either key"
    )
    return Experience.from_mapping(
        {
            "lesson": "Multi-tenant cache keys must cover the tenant boundary.",
            "condition": "a cache shared by several tenants whose cached values differ per tenant",
            "requires": TENANT_FACTS,
            "failure_mode": "cross-tenant leak: one tenant is served another tenant's cached value",
            "signal": "two users reading the same product get the same price; the cache keys omit the user",
            "strategy": "put the tenant dimension in the key, (user_id, product_id); verify isolation AND same-user hits",
            "counterexample": "public data that is the same for every user (a catalogue): " + why,
            "source": "pending (the store writes the run's correction)",
            "version": environment,
            "rejected": [{"claim": WRONG, "why_wrong": "it drops the condition; " + why}],
        }
    )


def refusal(store: ExperienceStore, environment: str) -> tuple[Retrieval, Retrieval]:
    """Retrieve for a multi-tenant contract-price task and for a public-catalogue task."""
    return (
        store.retrieve(TENANT_FACTS, environment=environment),
        store.retrieve(CATALOGUE_FACTS, environment=environment),
    )


@dataclass(frozen=True)
class Run:
    result: Counterexample
    store: ExperienceStore
    tenant: tuple[CandidateExplanation, ...]  # retrieved for the contract-price task
    catalogue: Retrieval  # withheld for the catalogue task, with the failing precondition


def run(mix: Mix | None = None, ledger: Ledger | None = None) -> Run:
    """The whole counterexample: a real cache-isolation run (its kept correction is the only
    thing allowed to teach), the measured keys, the lesson written and retrieved for both tasks."""
    from labkit.experiments.cache_isolation import run as run_case

    ledger = ledger or Ledger()
    trace = run_case("main", ledger=ledger)
    return remember(measure(mix), find_correction(ledger, trace.run_id))


def remember(result: Counterexample, correction: Correction) -> Run:
    """Write the lesson (verified by `correction`, the real run's kept change) and retrieve it for both tasks."""
    from labkit.experiments.cache_isolation import case

    env = case().environment
    store = ExperienceStore()
    store.write(lesson(result, env), correction)
    tenant, catalogue = refusal(store, env)
    return Run(result, store, tenant.candidates, catalogue)


def record(mix: Mix) -> dict[str, Any]:
    """The JSON record of `run(mix)`: the real cache-isolation run's correction and the probes' per-seed rows."""
    from labkit.experiments.cache_isolation import run as run_case

    ledger = Ledger()
    trace = run_case("main", ledger=ledger)
    correction = find_correction(ledger, trace.run_id)
    frame = measure(mix).frame
    return {
        "mix": asdict(mix),
        "correction": asdict(correction),
        "columns": frame.columns,
        "rows": [list(row) for row in frame.iter_rows()],
    }


def from_record(rec: dict[str, Any]) -> Run:
    """The counterexample rebuilt from `record`'s output: intervals, lesson and retrievals computed
    here from the recorded rows and correction (nothing probed, no engine run)."""
    m = rec["mix"]
    mix = Mix(**{**m, "seeds": tuple(m["seeds"])})
    frame = pl.DataFrame(rec["rows"], schema=rec["columns"], orient="row")
    return remember(summarise(mix, frame), Correction(**rec["correction"]))


NOTEBOOK_MIX = Mix(users=100, products=200, requests=10_000, seeds=(0, 1, 2, 3))
DEPENDS_ON = ("numpy", "polars", "pytest")  # the packages the recording's numbers depend on
RECORD = DATA / "memory" / "counterexample.json"


def load(path: Path = RECORD) -> Run:
    """The memory notebook's counterexample, rebuilt from its recording (see `main`)."""
    return from_record(
        read_recording(
            path, f"python -m labkit.experiments.memory.counterexample --out {path}", "data/memory/README.md"
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m labkit.experiments.memory.counterexample", description=__doc__)
    p.add_argument("--out", type=Path, required=True, help="the .json record (the notebook's mix)")
    args = list(sys.argv[1:] if argv is None else argv)
    a = p.parse_args(args)
    rec = {
        "command": "python -m labkit.experiments.memory.counterexample " + " ".join(args),
        "versions": package_versions(DEPENDS_ON),
        **record(NOTEBOOK_MIX),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(rec["correction"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
