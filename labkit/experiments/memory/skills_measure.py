"""The verified skill library, measured: prompt tokens per disclosure level as the library grows
(10 -> 100 -> 1,000 skills) and retrieval precision on held-out tasks.

SYNTHETIC skills (stated): small numeric skills generated from 10 operations x 50 domain nouns
x 2 constants, every 10th a composite that calls two simpler ones, and one candidate in 10
deliberately buggy. Each candidate is checked by an external oracle — its code run in a separate
process against expected values computed here from an independent reference — and only the
passing ones enter the library. Held-out tasks paraphrase a stored skill's description (a
different verb, same domain noun and constant); precision@1 asks whether BM25 puts that skill
first.

`measure()` validates 1,250 candidates in a subprocess and builds three libraries (about 0.7 s),
so the memory notebook reads the table it made, recorded once by

    python -m labkit.experiments.memory.skills_measure --out data/memory/skills.json

tests/test_memory_skills_record.py measures again and compares the recording exactly.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import polars as pl

from labkit.core.paths import DATA, read_recording
from labkit.core.stats import bootstrap_mean
from labkit.core.types import Candidate
from labkit.core.versions import package_versions
from labkit.loop.engine.probe import Experiment, observe
from labkit.loop.strategies.memory.skills import Check, Skill, SkillLibrary

__all__ = ["DEPENDS_ON", "Op", "RECORD", "SIZES", "SkillCandidate", "SkillQuery", "build", "candidates", "load", "main", "measure", "tasks",
           "verify"]  # fmt: skip

SIZES = (10, 100, 1000)
DEPENDS_ON = ("bm25s", "numpy", "polars", "scipy")  # the packages the table's numbers depend on
RECORD = DATA / "memory" / "skills.json"
INPUTS = (0, 3, 10, 41)


@dataclass(frozen=True)
class Op:
    key: str
    describe: str  # the stored description ({k}, {noun})
    ask: str  # the held-out paraphrase
    expr: str  # the implementation, in x and k
    ref: Callable[[int, int], int]  # the independent reference the oracle compares with


OPS = (
    Op("add", "Add {k} to a {noun} amount, returning the raised amount.", "raise the {noun} by {k}", "x + {k}", lambda x, k: x + k),
    Op("sub", "Subtract {k} from a {noun} amount, returning the lowered amount.", "lower the {noun} by {k}", "x - {k}", lambda x, k: x - k),
    Op("mul", "Multiply a {noun} amount by {k}, returning the scaled amount.", "scale the {noun} {k} times", "x * {k}", lambda x, k: x * k),
    Op("mod", "Remainder of a {noun} amount modulo {k}, wrapping it around.", "wrap the {noun} around {k}", "x % {k}", lambda x, k: x % k),
    Op("cap", "Clamp a {noun} amount to at most {k}, a cap.", "cap the {noun} at {k}", "min(x, {k})", lambda x, k: min(x, k)),
    Op("floor", "Clamp a {noun} amount to at least {k}, a floor.", "floor the {noun} at {k}", "max(x, {k})", lambda x, k: max(x, k)),
    Op("div", "Integer division of a {noun} amount by {k}, splitting it into shares.", "split the {noun} into {k} shares", "x // {k}", lambda x, k: x // k),
    Op("dist", "Absolute distance between a {noun} amount and {k}, how far off it is.", "how far off the {noun} is from {k}", "abs(x - {k})", lambda x, k: abs(x - k)),
    Op("round", "Round a {noun} amount down to a multiple of {k}, bucketing it.", "bucket the {noun} by {k}", "x - x % {k}", lambda x, k: x - x % k),
    Op("neg", "Subtract a {noun} amount from {k}, the remaining headroom.", "headroom of the {noun} under {k}", "{k} - x", lambda x, k: k - x),
)  # fmt: skip

NOUNS = (
    "invoice", "order", "sensor", "temperature", "playlist", "shipment", "payroll", "ticket", "inventory", "budget",
    "mileage", "voltage", "rainfall", "altitude", "latency", "bandwidth", "calorie", "dosage", "rent", "mortgage",
    "pension", "tariff", "subscription", "warranty", "parcel", "pallet", "harvest", "fleet", "runway", "turbine",
    "reservoir", "glacier", "orchard", "vineyard", "library", "museum", "stadium", "concert", "tournament", "classroom",
    "hospital", "pharmacy", "bakery", "brewery", "refinery", "quarry", "satellite", "telescope", "submarine", "lighthouse",
)  # fmt: skip


@dataclass(frozen=True)
class SkillCandidate:
    skill: Skill
    ref: Callable[[int], int]
    buggy: bool


@dataclass(frozen=True)
class SkillQuery:
    query: str
    skill: str  # the skill that answers it


def _apply(op: Op, k: int, x: int) -> int:
    return op.ref(x, k)


def _chain(first: Callable[[int], int], then: Callable[[int], int], x: int) -> int:
    return then(first(x))


def candidates(seed: int = 0) -> list[SkillCandidate]:
    """1,100 candidate skills in a seeded order: base skills first, a composite after every 9
    (calling two earlier base skills), one candidate in 10 buggy (off by one)."""
    rng = random.Random(seed)
    base = [(op, noun, k) for op in OPS for noun in NOUNS for k in (rng.randint(10, 49), rng.randint(50, 99))]
    rng.shuffle(base)
    out: list[SkillCandidate] = []
    made: list[SkillCandidate] = []
    for i, (op, noun, k) in enumerate(base):
        name = f"{op.key}_{noun}_{k}"
        buggy = rng.random() < 0.1
        expr = op.expr.format(k=k) + (" + 1" if buggy else "")
        sk = Skill(
            name=name,
            description=op.describe.format(k=k, noun=noun),
            code=f"def {name}(x):\n    return {expr}\n",
            files={"examples.txt": "\n".join(f"{name}({x}) == {op.ref(x, k)}" for x in INPUTS)},
        )
        c = SkillCandidate(sk, partial(_apply, op, k), buggy)
        out.append(c)
        if not buggy:
            made.append(c)
        if i % 9 == 8 and len(made) >= 2:
            a, b = rng.sample(made[-20:], 2)
            cname = f"{a.skill.name}_then_{b.skill.name}"
            desc = f"Pipeline: {a.skill.description.rstrip('.')} then {b.skill.description[0].lower()}{b.skill.description[1:]}"
            code = f"def {cname}(x):\n    return {b.skill.name}({a.skill.name}(x))\n"
            out.append(
                SkillCandidate(
                    Skill(name=cname, description=desc, code=code, calls=(a.skill.name, b.skill.name)),
                    partial(_chain, a.ref, b.ref),
                    False,
                )
            )
    return out


_ORACLE = """
import json
cases = json.load(open("skills_under_test.json"))
code = {c["name"]: c for c in cases}
out = {}
for c in cases:
    ns = {}
    try:
        for dep in c["calls"]:
            exec(code[dep]["code"], ns)
        exec(c["code"], ns)
        got = [ns[c["name"]](x) for x in c["inputs"]]
        bad = [(x, g, e) for x, g, e in zip(c["inputs"], got, c["expected"]) if g != e]
        out[c["name"]] = [not bad, f"{len(c['inputs']) - len(bad)}/{len(c['inputs'])} tests passed" + (f"; {c['name']}({bad[0][0]}) == {bad[0][1]}, expected {bad[0][2]}" if bad else "")]
    except Exception as exc:
        out[c["name"]] = [False, f"{type(exc).__name__}: {exc}"]
print(json.dumps(out))
"""


def verify(cands: Sequence[SkillCandidate]) -> dict[str, Check]:
    """The external oracle: every candidate's code run in one separate process, compared with
    the reference's expected values (computed here, not by the code under test)."""
    payload = [
        {
            "name": c.skill.name,
            "code": c.skill.code,
            "calls": list(c.skill.calls),
            "inputs": list(INPUTS),
            "expected": [c.ref(x) for x in INPUTS],
        }
        for c in cands
    ]
    obs = observe(
        Candidate({"skills_under_test.json": json.dumps(payload)}, label="skills"),
        Experiment("do the candidate skills pass their tests?", _ORACLE),
        timeout=120,
    )
    if obs.exit_code != 0:
        raise RuntimeError(f"skill oracle failed: {obs.output[-500:]}")
    return {n: Check(n, bool(ok), detail) for n, (ok, detail) in json.loads(obs.output.splitlines()[-1]).items()}


def build(size: int, cands: Sequence[SkillCandidate], checks: dict[str, Check]) -> tuple[SkillLibrary, list[str]]:
    """Add candidates in order until the library holds `size` skills. Returns it and the names refused."""
    lib = SkillLibrary()
    refused = []
    from labkit.core.errors import MemoryRefused

    for c in cands:
        if len(lib) >= size:
            break
        try:
            lib.add(c.skill, checks[c.skill.name])
        except MemoryRefused:
            refused.append(c.skill.name)
    return lib, refused


def tasks(lib: SkillLibrary, n: int = 60, seed: int = 1) -> list[SkillQuery]:
    """Held-out tasks: paraphrases of base skills in `lib` (different verb; same noun and constant)."""
    rng = random.Random(seed)
    ops = {op.key: op for op in OPS}
    base = [name for name, s in lib.skills.items() if not s.calls]
    out = []
    for name in rng.sample(base, min(n, len(base))):
        key, noun, k = name.split("_")
        out.append(SkillQuery(ops[key].ask.format(noun=noun, k=k), name))
    return out


def measure(sizes: Sequence[int] = SIZES, k: int = 2, seed: int = 0) -> pl.DataFrame:
    """Per library size: mean prompt tokens per level and retrieval precision@1 / recall@k on
    held-out tasks, plus how many buggy candidates the gate refused on the way."""
    cands = candidates(seed)
    checks = verify(cands[: int(max(sizes) * 1.25)])
    rows = []
    for size in sizes:
        lib, refused = build(size, cands, checks)
        ts = tasks(lib)
        prompts = [lib.prompt(t.query, k, l1="all", open_files=(f"{t.skill}/examples.txt",)) for t in ts]
        narrow = [lib.prompt(t.query, k, l1="retrieved") for t in ts]
        hits1 = [lib.search(t.query, 1)[:1] == [t.skill] for t in ts]
        hitsk = [t.skill in lib.search(t.query, k) for t in ts]
        n = len(ts)
        rows.append(
            {
                "skills": len(lib),
                "refused by the gate": len(refused),
                "composites": sum(bool(s.calls) for s in lib.skills.values()),
                "L1 tokens (all skills)": sum(p.l1_tokens for p in prompts) / n,
                "L1 tokens (retrieved only)": sum(p.l1_tokens for p in narrow) / n,
                "L2 tokens": sum(p.l2_tokens for p in prompts) / n,
                "L3 tokens": sum(p.l3_tokens for p in prompts) / n,
                "L1 tokens per skill": sum(p.l1_tokens for p in prompts) / n / len(lib),
                "precision@1": sum(hits1) / n,
                "precision@1 low": bootstrap_mean([float(h) for h in hits1]).low,
                f"recall@{k}": sum(hitsk) / n,
                "tasks": n,
            }
        )
    return pl.DataFrame(rows)


def load(path: Path = RECORD) -> pl.DataFrame:
    """The recorded `measure()` table (the notebook's), exactly as measured."""
    rec = read_recording(
        path, f"python -m labkit.experiments.memory.skills_measure --out {path}", "data/memory/README.md"
    )
    return pl.DataFrame(rec["rows"], schema=rec["columns"], orient="row")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m labkit.experiments.memory.skills_measure", description=__doc__)
    p.add_argument("--out", type=Path, required=True, help="the .json record")
    args = list(sys.argv[1:] if argv is None else argv)
    a = p.parse_args(args)
    m = measure()
    record = {"command": "python -m labkit.experiments.memory.skills_measure " + " ".join(args),
              "setting": {"sizes": list(SIZES), "k": 2, "seed": 0}, "versions": package_versions(DEPENDS_ON),
              "columns": m.columns,
              "rows": [list(r) for r in m.iter_rows()]}  # fmt: skip
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"skills": m["skills"].to_list()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
