"""Same-user hits: a repeated request by the same user is served from the cache.

Asserted through the database's query counter, not timing.
"""

from pricing import PriceDatabase, PriceService

PRICES = {("alice", "p1"): 100, ("bob", "p1"): 80, ("alice", "p2"): 50, ("bob", "p2"): 45}


def test_repeat_request_is_served_from_cache():
    db = PriceDatabase(PRICES)
    service = PriceService(db)
    for _ in range(3):
        assert service.price("alice", "p1") == 100
    assert db.queries == 1


def test_second_users_repeat_is_a_hit():
    db = PriceDatabase(PRICES)
    service = PriceService(db)
    service.price("alice", "p1")
    assert service.price("bob", "p2") == 45
    assert service.price("bob", "p2") == 45
    assert db.queries == 2
