from decimal import Decimal

from tax import add_tax


def test_nineteen_percent():
    assert add_tax(Decimal("10.00")) == Decimal("11.90")


def test_rounded_half_up_to_the_cent():
    assert add_tax(Decimal("0.50")) == Decimal("0.60")  # 0.095 VAT -> 0.10
