from shop.discount import line_total
from shop.parse import Line


def test_small_quantity_pays_full_price():
    assert line_total(Line("A", 2, 150)) == 300


def test_bulk_quantity_gets_ten_percent_off():
    assert line_total(Line("A", 12, 100)) == 1080
