"""Cross-user isolation: two users reading the same product each get their own price."""

from pricing import PriceDatabase, PriceService

PRICES = {("alice", "p1"): 100, ("bob", "p1"): 80, ("alice", "p2"): 50, ("bob", "p2"): 45}


def test_user_b_does_not_get_user_a_price():
    service = PriceService(PriceDatabase(PRICES))
    assert service.price("alice", "p1") == 100
    assert service.price("bob", "p1") == 80


def test_user_a_does_not_get_user_b_price():
    service = PriceService(PriceDatabase(PRICES))
    assert service.price("bob", "p2") == 45
    assert service.price("alice", "p2") == 50
