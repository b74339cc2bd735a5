"""Integration: whole receipts through the plan's pipeline; the totals are checked."""

from decimal import Decimal

import pytest
from pipeline import checkout

RECEIPTS = {
    "small": ("apple | 3 pcs | 0.45\nmilk | 2 pcs | 1.09", "4.20"),  # 3.53 + 19 %
    "weighed": ("cheese | 250 g | 18.90/kg\nbread | 1 pcs | 2.79", "8.95"),  # 7.52 + 1.43
    "discounted": (
        "wine | 4 pcs | 11.95\ncoffee | 2 pcs | 7.49",
        "67.24",
    ),  # 62.78 - 6.28 = 56.50, + 10.74
    "just_below": (
        "coffee | 5 pcs | 7.49\nbread | 1 pcs | 2.79\nmilk | 7 pcs | 1.09",
        "56.97",
    ),  # 47.87: no discount
}


@pytest.mark.parametrize("name", sorted(RECEIPTS))
def test_total(name):
    text, total = RECEIPTS[name]
    assert checkout(text).total == Decimal(total)
