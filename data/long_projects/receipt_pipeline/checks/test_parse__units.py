"""parse -> units: what crosses here is each line's quantity and unit (money crosses later)."""

from parse import parse
from receipts import receipts, refute
from units import normalise

N = 200


def test_quantities_and_units_survive_the_interface():
    found = []
    for r in receipts(1, N):
        got = [(i.name, i.qty, i.unit) for i in normalise(parse(r.text))]
        want = [(n, q, u) for n, q, u, _ in r.rows]
        if got != want:
            found.append((r, got, want))
    refute("parse -> units", found, N)
