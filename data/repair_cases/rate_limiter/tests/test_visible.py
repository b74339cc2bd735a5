from ratelimit import RateLimiter


def test_expires_after_window():
    rl = RateLimiter(1, 10)
    rl.allow(0)
    assert rl.allow(10) is True


def test_limit():
    rl = RateLimiter(2, 10)
    assert rl.allow(0) and rl.allow(1)
    assert rl.allow(2) is False


def test_within_window():
    rl = RateLimiter(1, 10)
    rl.allow(0)
    assert rl.allow(5) is False
