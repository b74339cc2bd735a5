"""R1: parse an order line "sku,qty,price" into a Line (price in integer cents)."""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal


@dataclass(frozen=True)
class Line:
    sku: str
    qty: int
    price_cents: int


def parse_line(text: str) -> Line:
    sku, qty, price = (part.strip() for part in text.split(","))
    cents = (Decimal(price) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return Line(sku, int(qty), int(cents))
