"""The arms table as Markdown, from a recorded ledger (what the note and data/arms/README show).

python -m labkit.experiments.arms.markdown_table data/arms/smollm2_humaneval.sqlite
"""

from __future__ import annotations

import sys

import polars as pl

from labkit.core.stats import Interval
from labkit.experiments.arms import arm_metrics as metrics
from labkit.record.ledger import Ledger

__all__ = ["markdown"]


def _i(x: Interval | None, pct: bool = True) -> str:
    if x is None:
        return "—"
    if pct:
        return f"{x.estimate:.0%} [{x.low:.0%}, {x.high:.0%}]"
    return f"{x.estimate:.1f} [{x.low:.1f}, {x.high:.1f}]"


def markdown(ledger: Ledger) -> str:
    frame = metrics.runs(ledger)
    judged = metrics.self_test_judgements(ledger)
    head = (
        "| arm | jobs | success (hidden) | visible | visible−hidden gap | first-right broken | start-right broken | gain r1 | gain r2 | "
        "rounds | rollback | incomplete | calls mean/max (limit) | tokens mean/max (limit) | tokens per success |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in metrics.table(frame, rounds=2):
        if r.status:
            lines.append(f"| {r.arm} | {r.jobs} | {r.status} |" + " |" * 12)
            continue
        s = r.spend or {}
        calls = f"{s.get('calls_mean', 0):.1f}/{s.get('calls_max', 0):.0f} ({s.get('limit_calls', float('nan')):.0f})"
        toks = f"{s.get('tokens_mean', 0):.0f}/{s.get('tokens_max', 0):.0f} ({s.get('limit_tokens', float('nan')):.0f})"
        g = [_i(x) for x in r.gains[:2]] + ["—"] * (2 - len(r.gains[:2]))
        lines.append(
            f"| {r.arm} | {r.jobs} | {_i(r.success)} | {_i(r.visible)} | {_i(r.gap)} | {_i(r.broken_first)} | {_i(r.broken_start)} | {g[0]} | {g[1]} | "
            f"{_i(r.rounds, pct=False)} | {r.rollback:.0%} | {_i(r.incomplete)} | {calls} | {toks} | {_i(r.tokens_per_success, pct=False)} |"
        )
    wrong = judged.filter(~pl.col("hidden_pass"))
    rate = sum(bool(x) for x in wrong["own_pass"].to_list()) / wrong.height if wrong.height else 0.0
    fp = f"{rate:.0%} of {wrong.height}" if wrong.height else "no wrong code was judged"
    lines.append("")
    lines.append(f"Self-written tests: {judged.height} judgements; passed code the hidden tests fail: {fp}.")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(Ledger(sys.argv[1], read_only=True)))
