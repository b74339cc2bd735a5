from decimal import Decimal
from types import SimpleNamespace as I

from fmt import render


def test_item_lines_and_total():
    text = render(
        [I(name="apple", qty=Decimal(3), unit="pcs", amount=Decimal("1.35"))], Decimal("1.61")
    )
    first, total = text.splitlines()
    assert first.split() == ["apple", "3", "pcs", "1.35"]
    assert total.split() == ["TOTAL", "1.61"]
