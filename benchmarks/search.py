"""Frontier search on a 50-node tree: expansions per second and the share of time in validation.

    .venv/bin/python benchmarks/search.py [--ledger memory|file]

The tree is real work on data/api_change (a scripted generator, labelled simulated): the
root proposes 7 variants of route A (restore the old API; each differs by a comment, so
each is its own artifact), which are progress and enter the frontier; each of those 7
states proposes 6 variants of route C on top, which pass every dev check and are sealed.
That is 1 + 7 + 7·6 = 50 nodes, 8 expansions, 49 sandboxed validations, then one
confirmation on the sealed final check set.

The search is `engine.run` with a frontier (labkit.loop.search.search_run), read back from its
events (labkit.loop.search.readback).

Baselines measured in the same run, on the same 49 candidates:
  validation only   Validator.run on each candidate, nothing else (what search cannot avoid)
  search, no pytest the same tree with the validator replaced by a lookup of the verdicts
                    already computed (the engine's bookkeeping: budget, ledger, ΔF, sealing,
                    and reading the search back)
and it prints the search's time as a ratio to the first, and the share of its wall time
spent inside verify. On a shared machine the two real-validation timings move with the
load (each is ~50 sandboxed pytest runs); the share in verify and the no-pytest line are
the stable figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core import patch as patches
from labkit.core.types import Candidate, Patch, Usage, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sealed import load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.search.frontier import SearchLimits
from labkit.loop.search.search_case import byte_compile, costs_of, task_of
from labkit.loop.search.search_run import run_search
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

ROOT_CHILDREN, LEAF_CHILDREN = 7, 6


@dataclass
class Timed:
    """The validator, timed; with `lookup`, answered from the verdicts a real run computed."""

    inner: Validator
    verdicts: dict[tuple[str, str], Verdict]
    lookup: bool
    spent: float = 0.0
    seen: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.inner.id

    def __getattr__(self, name: str) -> Any:  # limits, python, ...: the real validator's
        return getattr(self.inner, name)

    def run(self, candidate: Candidate, suite: AcceptanceSuite) -> Verdict:
        key = (candidate.digest, suite.digest)
        if self.lookup:
            return self.verdicts[key]
        t0 = time.perf_counter()
        self.verdicts[key] = v = self.inner.run(candidate, suite)
        self.spent += time.perf_counter() - t0
        return v


def _variant(start: Candidate, patch: Patch, tag: str) -> Candidate:
    out = patches.apply(start, patch)
    return out.with_files({**out.files, "app/variant.py": f"# variant {tag}\n"}, label=tag)


@dataclass
class Tree:
    """Scripted (simulated) generator: 7 A-variants at the root, 6 C-variants under each."""

    fix: Patch
    restore: Patch
    name: str = "benchmark tree (scripted)"
    simulated: bool = True

    def propose(self, s: Situation) -> Proposal:
        if s.state == "start":
            kids = [
                Child(target=_variant(s.candidate, self.restore, f"A{i}"), name=f"A{i}") for i in range(ROOT_CHILDREN)
            ]
        else:
            kids = [
                Child(target=_variant(s.candidate, self.fix, f"{s.state}.C{j}"), name=f"C{j}")
                for j in range(LEAF_CHILDREN)
            ]
        return Proposal(children=tuple(kids))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--ledger", choices=("memory", "file"), default="file")
    args = parser.parse_args()

    case = load_search_case("api_change")
    validator = Validator()
    tree = Tree(case.case.patches["fix_callers"], case.case.patches["restore_old_api"])
    lim = SearchLimits(max_expansions=50, max_stalled=50, max_depth=3, max_children=8)
    verdicts: dict[tuple[str, str], Verdict] = {}
    timed = Timed(validator, verdicts, lookup=False)

    def run(tag: str, lookup: bool) -> tuple[float, int, int]:
        with tempfile.TemporaryDirectory(prefix="labkit-bench-") as tmp:
            path = ":memory:" if args.ledger == "memory" else Path(tmp) / "ledger.sqlite"
            with Ledger(path) as led:
                # a fresh, empty verdict cache: every validation in this run is a real pytest run
                checker = Checker(timed if not lookup else Timed(validator, verdicts, lookup=True), VerdictCache())  # type: ignore[arg-type]
                budget = Budget(limits(cost_units=10_000), confirmation=Usage(cost_units=2), ledger=led, run_id=tag)
                t0 = time.perf_counter()
                r = run_search(
                    task_of(case),
                    tree,
                    checker,
                    budget,
                    costs_of(case),
                    limits=lim,
                    ledger=led,
                    run_id=tag,
                    build=byte_compile,
                ).result
                wall = time.perf_counter() - t0
        nodes = 1 + len(r.branches)
        assert nodes == 50 and r.success, (nodes, r.status, r.reason)
        return wall, len(r.expansions), nodes

    candidates = _candidates(tree, case.case.start)
    t0 = time.perf_counter()
    for c in candidates:
        validator.run(c, case.suite)
    validate_only = time.perf_counter() - t0
    search_wall, expansions, nodes = run("bench-search", lookup=False)
    lookup_wall, _, _ = run("bench-lookup", lookup=True)

    print(
        f"50-node tree on data/api_change, {expansions} expansions, {nodes - 1} validated nodes, ledger={args.ledger}"
    )
    print(
        f"  search (real validation)   {search_wall:7.2f} s   {expansions / search_wall:6.2f} expansions/s"
        f"   {(nodes - 1) / search_wall:6.2f} nodes/s"
    )
    print(
        f"  share of time in verify    {timed.spent / search_wall:7.1%}   "
        f"outside verify {search_wall - timed.spent:.2f} s"
    )
    print(
        f"  validation only (baseline) {validate_only:7.2f} s   search / validation-only = "
        f"{search_wall / validate_only:.2f}x"
    )
    print(
        f"  search, no pytest          {lookup_wall:7.3f} s   {expansions / lookup_wall:6.1f} expansions/s"
        f"   bookkeeping {1000 * lookup_wall / (nodes - 1):.1f} ms/node"
    )


def _candidates(tree: Tree, start: Candidate) -> list[Candidate]:
    root = [_variant(start, tree.restore, f"A{i}") for i in range(ROOT_CHILDREN)]
    leaves = [_variant(a, tree.fix, f"A{i}.C{j}") for i, a in enumerate(root) for j in range(LEAF_CHILDREN)]
    return root + leaves


if __name__ == "__main__":
    main()
