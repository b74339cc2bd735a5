"""R1: parse an order line "sku,qty,price" into a Line (price in integer cents)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    sku: str
    qty: int
    price_cents: int


def parse_line(text: str) -> Line:
    sku, qty, price = text.split(",")
    return Line(sku.strip(), int(qty), int(float(price) * 100))
