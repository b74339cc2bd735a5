"""The evidence card (seed 002 §1) as a table, one small cell at the top of each worked example.

Both twins of a notebook call `card_html(card, source)`; the card itself is derived from the
run's ledger by `labkit.experiments.evidence_card` (nothing here reads or computes a run).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import polars as pl

from labkit.experiments.evidence_card import CHECKABLE, CLAIMED, FIELDS, verdicts
from labkit.views.tables import frame_html

if TYPE_CHECKING:
    from labkit.experiments.evidence_card import Card
    from labkit.grading.sealed import SearchCase
    from labkit.loop.search.recorded import Sweep

__all__ = ["cache_card", "card_frame", "card_html", "recorded_real_card", "search_card"]


def card_frame(card: Card) -> pl.DataFrame:
    """Field, what the ledger shows, the seed's claim, and whether the ledger bears the claim out."""
    said = verdicts(card)
    return pl.DataFrame(
        {
            "field": list(FIELDS),
            "this run, read from its ledger": [card.fields[f] for f in FIELDS],
            "the seed's in-task card (002 §1)": [CLAIMED[f] for f in FIELDS],
            "claim": [said[f] for f in FIELDS],
        }
    )


def card_html(card: Card, source: str) -> str:
    """The card in a collapsible block, its source named (e.g. "the main storyline, scripted")."""
    head = (
        f"<summary><b>Evidence card</b> — derived from the ledger of {escape(source)} "
        f"({card.runs} run{'s' if card.runs != 1 else ''}); claims checked: {', '.join(CHECKABLE)}</summary>"
    )
    return f"<details open>{head}{frame_html(card_frame(card))}</details>"


def recorded_real_card(suite: str = "repair") -> str:
    """reflection_worth_it's card: the recorded real SmolLM2 run on `suite`, every arm (read only)."""
    from labkit.experiments.evidence_card import derive
    from labkit.views.arms_page import real_ledgers

    ledger, meta = real_ledgers()[suite]
    source = f"the recorded real run on the {suite} suite ({meta.get('model', 'a real model')}, every arm)"
    return card_html(derive(ledger), source)


def search_card(run: Sweep, case: SearchCase) -> str:
    """search_budget's card: one search's ledger; its case's sealed final set is the configuration's."""
    from labkit.experiments.evidence_card import derive

    if run.ledger is None:
        raise ValueError("this search was run without keeping its ledger: no card can be derived")
    card = derive(run.ledger, [f"sweep-{run.total:g}"], sealed=[case.final.digest])
    return card_html(card, f"the search at {run.total:g} units (scripted routes, real checks)")


def cache_card() -> str:
    """cache_isolation's card: the main storyline's run (the one the stepper opens on)."""
    from labkit.views.cache_page import run_storyline

    return card_html(run_storyline("main").card, "the main storyline (scripted reflector, real validator)")
