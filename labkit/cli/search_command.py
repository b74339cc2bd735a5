"""`labkit search`: frontier search over a case's routes under a budget, from the command line.

The search is labkit.loop.search.search_run (seed 002 §3: `engine.run` with a frontier) on a
search case (case.json with `final` and `costs`; `severity` and `route_order` optional — see
the README's "Search" section). The
routes are the case's patches, proposed by a scripted generator (simulated: say so); every
execution, verification and the sealed final confirmation is real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from labkit.cli.console import fail, out, usage

__all__ = ["search"]

# Why a search stopped, in words (the reasons labkit.loop.search.readback gives).
WHY = {
    "budget_exhausted": "the next step did not fit in what was left",
    "frontier_empty": "no route left to try",
    "max_expansions": "the expansion limit was reached",
    "stalled": "expansions stopped making progress",
    "confirmation_unfunded": "a route was sealed but nothing was left to confirm it",
    "confirmation_failed": "the sealed winner failed the sealed final tests",
    "policy_denied": "a policy refused an action",
    "integrity_or_effect_unresolved": "an integrity alarm or unknown effect quarantined the task",
}


def search(
    folder: Annotated[
        Path,
        typer.Argument(exists=True, file_okay=False, help="a search case folder (with case.json)"),
    ],
    budget: Annotated[float, typer.Option(help="total cost units, the reserve included", min=0)] = 15.0,
    reserve: Annotated[
        float | None,
        typer.Option(help="cost units held for the final confirmation [default: its declared cost]", min=0),
    ] = None,
    ledger: Annotated[Path | None, typer.Option(help="append-only ledger (SQLite) to record to")] = None,
    run_id: Annotated[str, typer.Option(help="run id in the ledger [default: a new one]")] = "",
) -> None:
    """Search a case's routes under a budget: each branch's cost and outcome, the sealed winner,
    its confirmation on the sealed final tests, and the accounts (exit 1 if incomplete)."""
    from labkit.grading.sealed import load_search_case
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker
    from labkit.loop.search.search_case import costs_of, spend
    from labkit.loop.search.search_case import search as run_search
    from labkit.record.ledger import Ledger, new_run_id
    from labkit.record.usage import readable

    case = load_search_case(folder)
    costs = costs_of(case)
    held = costs.confirm if reserve is None else reserve
    if held > budget:
        raise usage(f"--reserve {held:g} is more than --budget {budget:g}")
    rid = run_id or new_run_id(case.case.name)
    checker = Checker(Validator())
    baseline = checker.check(case.case.start, case.suite).verdict
    with Ledger(ledger or ":memory:") as book:
        if book.events(rid):
            raise usage(f"run id {rid!r} is already in {book.path}: give a new --run-id")
        result = run_search(case, checker, baseline, total=budget, reserve=held, ledger=book, run_id=rid)
        accounts = spend(book, rid, budget)
    order = {
        "label": "by label",
        "size": "smallest change first",
        "listed": "as listed in case.json",
    }
    out.print(
        f"case {case.case.name!r}: routes offered {order[case.route_order]} (scripted generator: "
        f"simulated), costs {', '.join(f'{k} {v:g}' for k, v in costs.as_dict().items())}, budget {budget:g} with {held:g} reserved for confirmation"
    )
    table = Table(title=f"search {rid}", title_justify="left")
    for col in ("expansion", "route", "outcome", "why", "cost units"):
        table.add_column(col, overflow="fold", justify="right" if col in ("expansion", "cost units") else "left")
    for b in result.branches:
        table.add_row(str(b.expansion), b.name, b.outcome, readable(b.reason), f"{b.spent:g}")
    out.print(table)
    winner = result.winner.route if result.winner else "none"
    confirmed = {True: "passed", False: "failed", None: "not run"}[result.confirmed]
    out.print(
        f"sealed: {', '.join(s.route for s in result.sealed) or 'none'} · winner: {winner} "
        f"(rule {result.rule}) · confirmation on the sealed final tests: {confirmed}"
    )
    out.print(
        f"spent {accounts.search:g} on search + {accounts.confirmation:g} on confirmation = "
        f"{accounts.total:g} of {budget:g} cost units ({accounts.left:g} left)"
    )
    if ledger is not None:
        out.print(f"ledger: {ledger} (run {rid})")
    out.print(f"status: {result.status}; the search stopped: {WHY.get(result.reason, result.reason)}")
    if not result.success:
        raise fail(f"search incomplete: {result.reason}")
