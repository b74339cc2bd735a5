from ttlcache import TTLCache


def test_expired_entries_are_evicted():
    c = TTLCache(5)
    c.set("a", 1, now=0)
    c.get("a", now=7)
    assert len(c) == 0


def test_absolute_expiry():
    c = TTLCache(5)
    c.set("a", 1, now=0)
    assert c.get("a", now=4) == 1
    assert c.get("a", now=6) is None


def test_overwrite_refreshes():
    c = TTLCache(5)
    c.set("a", 1, now=0)
    c.set("a", 2, now=3)
    assert c.get("a", now=6) == 2
