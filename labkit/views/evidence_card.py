"""The evidence card (seed 002 §1) as a table, one small cell at the top of each worked example.

Both twins of a notebook call `card_html(card, source)`; the card itself is derived from the
run's ledger by `labkit.experiments.evidence_card` (nothing here reads or computes a run).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import polars as pl

from labkit.experiments.evidence_card import CLAIMED, FIELDS, check
from labkit.views.tables import frame_html

if TYPE_CHECKING:
    from labkit.experiments.evidence_card import Card

__all__ = ["CHECKABLE", "card_frame", "card_html"]

CHECKABLE = (
    "evaluation isolation",
    "gate criteria",
    "rollback granularity",
)  # see evidence_card.check


def card_frame(card: Card) -> pl.DataFrame:
    """Field, what the ledger shows, the seed's claim, and whether the ledger contradicts it."""
    contradicted = check(card)

    def verdict(name: str) -> str:
        if name in contradicted:
            return "contradicted: " + contradicted[name]
        return "holds" if name in CHECKABLE else "not checked"

    return pl.DataFrame({
        "field": list(FIELDS),
        "this run, read from its ledger": [card.fields[f] for f in FIELDS],
        "the seed's in-task card (002 §1)": [CLAIMED[f] for f in FIELDS],
        "claim": [verdict(f) for f in FIELDS],
    })  # fmt: skip


def card_html(card: Card, source: str) -> str:
    """The card in a collapsible block, its source named (e.g. "the main storyline, scripted")."""
    head = (f"<summary><b>Evidence card</b> — derived from the ledger of {escape(source)} "
            f"({card.runs} run{'s' if card.runs != 1 else ''}); claims checked: {', '.join(CHECKABLE)}</summary>")  # fmt: skip
    return f"<details open>{head}{frame_html(card_frame(card))}</details>"
