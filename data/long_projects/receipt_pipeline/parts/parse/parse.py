"""parse: 'name | quantity unit | price[/unit]' lines -> Line records (prices as written)."""

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Line:
    name: str
    qty: Decimal
    unit: str  # as written: pcs, g, kg, ml, l
    price: Decimal  # as written on the shelf, in currency units
    per: str  # the unit the price is for (pcs when no '/unit')


def parse(text: str) -> list[Line]:
    lines = []
    for raw in text.strip().splitlines():
        if not raw.strip():
            continue
        name, qty, price = (field.strip() for field in raw.split("|"))
        amount, unit = qty.split()
        value, _, per = price.partition("/")
        lines.append(Line(name, Decimal(amount), unit, Decimal(value), per or "pcs"))
    return lines
