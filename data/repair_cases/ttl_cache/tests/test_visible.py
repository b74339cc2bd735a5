from ttlcache import TTLCache


def test_expires_at_ttl():
    c = TTLCache(5)
    c.set("a", 1, now=0)
    assert c.get("a", now=5) is None


def test_fresh():
    c = TTLCache(5)
    c.set("a", 1, now=0)
    assert c.get("a", now=4) == 1


def test_missing():
    assert TTLCache(5).get("nope", now=0) is None
