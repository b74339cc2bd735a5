from shop.invoice import total
from shop.parse import Line


def test_total_without_coupon_in_oregon():
    got = total([Line("A", 2, 150), Line("B", 1, 200)])
    assert got["total"] == 500


def test_coupon_comes_before_tax():
    got = total([Line("A", 4, 500)], coupon="SAVE5", region="NY")
    assert (got["after_coupon"], got["tax"], got["total"]) == (1500, 60, 1560)
