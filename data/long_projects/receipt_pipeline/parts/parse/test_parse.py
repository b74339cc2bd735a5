from decimal import Decimal

from parse import Line, parse


def test_pieces():
    assert parse("apple | 3 pcs | 0.45") == [
        Line("apple", Decimal(3), "pcs", Decimal("0.45"), "pcs")
    ]


def test_weighed_and_blank_lines():
    got = parse("\ncheese | 250 g | 18.90/kg\n\nmilk | 2 pcs | 1.09\n")
    assert got[0] == Line("cheese", Decimal(250), "g", Decimal("18.90"), "kg")
    assert [x.name for x in got] == ["cheese", "milk"]
