"""Shared by every part (the plan's one given module): the cent and the rounding rule."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def to_cent(x: Decimal) -> Decimal:
    """Round half up to whole cents of the currency unit."""
    return Decimal(x).quantize(CENT, rounding=ROUND_HALF_UP)
