from decimal import Decimal
from types import SimpleNamespace as L

from units import Item, normalise


def test_pieces_in_cents():
    got = normalise([L(name="apple", qty=Decimal(3), unit="pcs", price=Decimal("0.45"), per="pcs")])
    assert got == [Item("apple", Decimal(3), "pcs", 135)]


def test_grams_to_kilograms_rounded_half_up():
    (item,) = normalise(
        [L(name="cheese", qty=Decimal(250), unit="g", price=Decimal("18.90"), per="kg")]
    )
    assert (item.qty, item.unit, item.amount) == (Decimal("0.250"), "kg", 473)
