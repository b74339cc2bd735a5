"""units -> discount: discount applied to units' real output matches the requirement."""

from discount import apply_discount
from receipts import receipts, refute
from units import normalise

N = 200


def test_discounted_net_matches_the_requirement():
    found = []
    for r in receipts(2, N):
        got = apply_discount(normalise(r.lines))
        if got != r.net:
            found.append((r, f"net {got}", f"net {r.net}"))
    refute("units -> discount", found, N)
