"""How often a model's reply is the record it was asked for, with and without the constraint.

    python -m labkit.experiments.arms.wellformed --model labkit/smollm2 --n 10 --what code

The same prompts (the arms' own: `ModelPolicy` asking for a JSON record) are sent twice per
HumanEval problem: once with the schema as a decoding constraint (litellm's
`response_format`; llama.cpp turns it into a grammar), once with the schema only described
in the prompt. Counted per reply: it is the record (JSON valid against the schema) and, for
code, the module parses and defines the problem's function. Problems are a seeded sample
(`--seed`) of the 164, fixed before anything runs; each request has its own sampling seed.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Literal

from labkit.experiments.arms.policy import Act, ModelPolicy
from labkit.experiments.arms.suites import ArmCase, humaneval_cases
from labkit.loop.engine.strategy import Situation
from labkit.loop.strategies.rewrite import module_of

__all__ = ["WellFormed", "measure", "sample"]

What = Literal["code", "critique"]


@dataclass(frozen=True, kw_only=True)
class WellFormed:
    what: str
    constrained: bool
    asked: int
    records: int  # replies that are JSON valid against the schema
    defines: int  # code only: the module parses and defines the problem's function
    errors: tuple[str, ...]  # the first line of each error (what was wrong)

    @property
    def record_rate(self) -> float:
        return self.records / self.asked if self.asked else 0.0


def sample(n: int, seed: int = 13) -> tuple[ArmCase, ...]:
    """`n` HumanEval problems, a seeded sample fixed before the run."""
    cases = humaneval_cases()
    ids = sorted(c.id for c in cases)
    chosen = set(random.Random(seed).sample(ids, n))
    return tuple(c for c in cases if c.id in chosen)


def _situation(case: ArmCase) -> Situation:
    from labkit.grading.validator import Validator

    start = case.task.start
    verdict = Validator().run(start, case.task.suite)
    return Situation(round=1, candidate=start, verdict=verdict, case=case.id, state="start", suite=case.task.suite)


def _defines(act: Act, case: ArmCase) -> bool:
    if act.candidate is None:
        return False
    entry = _entry(case)
    try:
        tree = ast.parse(act.candidate.files[module_of(act.candidate)])
    except SyntaxError:
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == entry for n in ast.walk(tree))


def _entry(case: ArmCase) -> str:
    """The function the problem asks for: the last top-level def of its stub."""
    tree = ast.parse(case.task.start.files[module_of(case.task.start)])
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)][-1]


def measure(
    model: str,
    cases: Sequence[ArmCase],
    *,
    what: What = "code",
    constrained: bool = True,
    seed: int = 0,
    max_tokens: int | None = None,
) -> WellFormed:
    """Ask each case once (the arms' prompt for `what`) and count well-formed replies."""
    policy = ModelPolicy(model=model, seed=seed, constrained=constrained)
    if max_tokens is not None:
        policy = replace(policy, max_tokens=max_tokens)
    records = defines = 0
    errors: list[str] = []
    for case in cases:
        s = _situation(case)
        act = policy.draft(s, 0) if what == "code" else policy.critique(s, critic=True)
        if act.error:
            errors.append(act.error.splitlines()[0][:160])
            continue
        records += 1
        defines += what == "code" and _defines(act, case)
    return WellFormed(
        what=what, constrained=constrained, asked=len(cases), records=records, defines=defines, errors=tuple(errors)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m labkit.experiments.arms.wellformed")
    ap.add_argument("--model", default="labkit/smollm2")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--what", choices=("code", "critique"), default="code")
    ap.add_argument("--max-tokens", type=int, default=None, help="default: the arms' policy's")
    a = ap.parse_args(argv)
    cases = sample(a.n, a.seed)
    for constrained in (True, False):
        got = measure(a.model, cases, what=a.what, constrained=constrained, max_tokens=a.max_tokens)
        print(json.dumps({**asdict(got), "record_rate": got.record_rate, "cases": [c.id for c in cases]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
