from ratelimit import RateLimiter


def test_denied_requests_do_not_count():
    rl = RateLimiter(1, 10)
    assert rl.allow(0)
    assert not rl.allow(5)
    assert rl.allow(10)


def test_sliding_not_reset():
    rl = RateLimiter(2, 10)
    assert rl.allow(0) and rl.allow(5) and rl.allow(10)
    assert rl.allow(11) is False
