"""Free shipping, as the ticket's author understood it."""

from shipping import shipping_fee


def test_small_order_pays_the_flat_fee():
    assert shipping_fee(20.0) == 5.0


def test_large_order_ships_free():
    assert shipping_fee(80.0) == 0.0


def test_order_at_the_threshold_pays():
    # The ticket's author read "over 50" as strictly greater than 50.
    assert shipping_fee(50.0) == 5.0
