"""normalise units: quantities to pcs / kg / l, and each line's amount.

Repaired premise: money inside the pipeline is in currency units, rounded to the cent
(amount = Decimal("1.35")), as the plan states and discount, tax and format read it."""

from dataclasses import dataclass
from decimal import Decimal

from receipt_money import to_cent

_TO_BASE = {"g": ("kg", Decimal("0.001")), "ml": ("l", Decimal("0.001"))}


@dataclass(frozen=True)
class Item:
    name: str
    qty: Decimal  # in `unit`
    unit: str  # pcs, kg or l
    amount: Decimal  # currency units, to the cent


def normalise(lines) -> list[Item]:
    items = []
    for line in lines:
        unit, factor = _TO_BASE.get(line.unit, (line.unit, Decimal(1)))
        qty = line.qty * factor
        if unit != line.per:
            raise ValueError(f"{line.name}: quantity in {unit}, price per {line.per}")
        items.append(Item(line.name, qty, unit, to_cent(qty * line.price)))
    return items
