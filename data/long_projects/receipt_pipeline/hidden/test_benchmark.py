"""The hidden benchmark: 40 receipts, the printed receipt and the total. No role sees it."""

import pytest
from pipeline import checkout
from receipts import receipts

CASES = receipts(2024, 40)


def expected_text(r):
    rows = [f"{n:<12}{q:>8} {u:<4}{a:>9.2f}" for n, q, u, a in r.rows]
    return "\n".join([*rows, f"{'TOTAL':<25}{r.total:>9.2f}"])


@pytest.mark.parametrize("k", range(len(CASES)))
def test_receipt(k):
    r = CASES[k]
    got = checkout(r.text)
    assert (got.total, got.text) == (r.total, expected_text(r))
