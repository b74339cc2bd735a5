"""discount: 10 % off the subtotal from 50.00 (currency units) up, rounded to the cent."""

from decimal import Decimal

from receipt_money import to_cent

THRESHOLD = Decimal("50.00")
RATE = Decimal("0.10")


def apply_discount(items) -> Decimal:
    subtotal = sum((Decimal(i.amount) for i in items), Decimal(0))
    if subtotal >= THRESHOLD:
        subtotal -= to_cent(subtotal * RATE)
    return subtotal
