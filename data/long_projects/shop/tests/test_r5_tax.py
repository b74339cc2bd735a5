import pytest

from shop.tax import tax


def test_california_rate():
    assert tax(2000, "CA") == 145


def test_oregon_has_no_sales_tax():
    assert tax(2000, "OR") == 0


def test_unknown_region_is_refused():
    with pytest.raises(ValueError):
        tax(100, "XX")
