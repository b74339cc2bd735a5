from decimal import Decimal
from types import SimpleNamespace as I

from discount import apply_discount


def test_below_the_threshold_nothing_off():
    assert apply_discount([I(amount=Decimal("30.00")), I(amount=Decimal("19.99"))]) == Decimal(
        "49.99"
    )


def test_from_the_threshold_ten_percent_off():
    assert apply_discount([I(amount=Decimal("30.00")), I(amount=Decimal("25.00"))]) == Decimal(
        "49.50"
    )
