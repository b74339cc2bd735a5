class TTLCache:
    def __init__(self, ttl):
        self.ttl = ttl
        self._d = {}

    def set(self, key, value, now):
        self._d[key] = (value, now)

    def get(self, key, now):
        if key not in self._d:
            return None
        value, t = self._d[key]
        if now - t <= self.ttl:
            return value
        return None

    def __len__(self):
        return len(self._d)
