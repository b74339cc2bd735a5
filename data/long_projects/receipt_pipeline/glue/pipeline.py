"""The plan's glue: parse -> normalise units -> discount -> tax -> format. Not a generated part."""

from dataclasses import dataclass
from decimal import Decimal

from discount import apply_discount
from fmt import render
from parse import parse
from tax import add_tax
from units import normalise


@dataclass(frozen=True)
class Receipt:
    total: Decimal
    text: str


def checkout(text: str) -> Receipt:
    items = normalise(parse(text))
    total = add_tax(apply_discount(items))
    return Receipt(total, render(items, total))
