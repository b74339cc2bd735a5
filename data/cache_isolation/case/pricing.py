"""A small multi-user pricing service with a read-through cache (v1).

Prices are per user (contract pricing): the same product can cost Alice 100 and Bob 80.
The database counts its queries, so tests can tell a cache hit from a miss without timing.
"""


class PriceDatabase:
    """Per-user prices. `queries` counts every fetch that reached the database."""

    def __init__(self, prices):
        self._prices = dict(prices)
        self.queries = 0

    def fetch_price(self, user_id, product_id):
        self.queries += 1
        return self._prices[(user_id, product_id)]


class PriceService:
    """Serves prices, caching each one after the first fetch."""

    def __init__(self, db):
        self.db = db
        self._cache = {}

    def cache_key(self, user_id, product_id):
        return product_id

    def price(self, user_id, product_id):
        key = self.cache_key(user_id, product_id)
        if key in self._cache:
            return self._cache[key]
        value = self.db.fetch_price(user_id, product_id)
        self._cache[key] = value
        return value
