"""discount -> tax: VAT added to discount's real output matches the requirement."""

from discount import apply_discount
from receipts import receipts, refute
from tax import add_tax

N = 200


def test_total_matches_the_requirement():
    found = []
    for r in receipts(4, N):
        got = add_tax(apply_discount(r.items()))
        if got != r.total:
            found.append((r, f"total {got}", f"total {r.total}"))
    refute("discount -> tax", found, N)
