"""normalise units: quantities to pcs / kg / l, and each line's amount.

Generated in parallel with the other parts. Its premise: money inside the pipeline is
integer cents (amount = 135 means 1.35)."""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

_TO_BASE = {"g": ("kg", Decimal("0.001")), "ml": ("l", Decimal("0.001"))}


@dataclass(frozen=True)
class Item:
    name: str
    qty: Decimal  # in `unit`
    unit: str  # pcs, kg or l
    amount: int  # cents


def normalise(lines) -> list[Item]:
    items = []
    for line in lines:
        unit, factor = _TO_BASE.get(line.unit, (line.unit, Decimal(1)))
        qty = line.qty * factor
        if unit != line.per:
            raise ValueError(f"{line.name}: quantity in {unit}, price per {line.per}")
        cents = (qty * line.price * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        items.append(Item(line.name, qty, unit, int(cents)))
    return items
