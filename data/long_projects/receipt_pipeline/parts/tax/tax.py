"""tax: add 19 % VAT to the discounted net, rounded to the cent (currency units)."""

from decimal import Decimal

from receipt_money import to_cent

VAT = Decimal("0.19")


def add_tax(net: Decimal) -> Decimal:
    return net + to_cent(net * VAT)
