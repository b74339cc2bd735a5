"""tax -> format: the printed TOTAL line shows tax's real output in currency units."""

from fmt import render
from receipts import receipts, refute
from tax import add_tax

N = 200


def test_total_line_shows_the_total():
    found = []
    for r in receipts(5, N):
        last = render(r.items(), add_tax(r.net)).splitlines()[-1].split()
        if last != ["TOTAL", f"{r.total:.2f}"]:
            found.append((r, f"{last}", f"['TOTAL', '{r.total:.2f}']"))
    refute("tax -> format", found, N)
