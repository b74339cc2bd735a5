"""units -> format: each printed item line shows the line's amount in currency units."""

from fmt import render
from receipts import receipts, refute
from units import normalise

N = 200


def test_item_lines_show_the_amounts():
    found = []
    for r in receipts(3, N):
        printed = render(normalise(r.lines), r.total).splitlines()[:-1]
        got = [row.split()[-1] for row in printed]
        want = [f"{a:.2f}" for *_, a in r.rows]
        if got != want:
            found.append((r, f"lines {got}", f"lines {want}"))
    refute("units -> format", found, N)
