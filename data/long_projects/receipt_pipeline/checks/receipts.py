"""Receipts drawn from a seeded generator, with what the requirements say about each.

Written from the requirements (not from any part): amounts in currency units rounded half
up to the cent; 10 % off a subtotal of 50.00 or more; 19 % VAT on the discounted net."""

import random
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from types import SimpleNamespace

CATALOGUE = [
    ("apple", "pcs", "0.45", None),
    ("milk", "pcs", "1.09", None),
    ("bread", "pcs", "2.79", None),
    ("coffee", "pcs", "7.49", None),
    ("wine", "pcs", "11.95", None),
    ("cheese", "g", "18.90", "kg"),
    ("olives", "g", "12.40", "kg"),
    ("juice", "ml", "2.20", "l"),
]


def cent(x):
    return Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Receipt:
    text: str
    lines: list  # the plan's Line interface, as parse hands it on
    rows: list  # (name, qty in pcs/kg/l, unit, amount in currency units)
    subtotal: Decimal
    net: Decimal
    total: Decimal

    def items(self):
        """The plan's Item interface (amount in currency units), as units should hand it on."""
        return [SimpleNamespace(name=n, qty=q, unit=u, amount=a) for n, q, u, a in self.rows]


def draw(rng):
    text, lines, rows = [], [], []
    for name, unit, price, per in rng.sample(CATALOGUE, rng.randint(1, 5)):
        qty = (
            Decimal(rng.randint(1, 6))
            if unit == "pcs"
            else Decimal(rng.choice([125, 250, 400, 750, 1000, 1500]))
        )
        base_qty = qty if per is None else qty * Decimal("0.001")  # grams to kg, to the gram
        base_unit = per or "pcs"
        text.append(f"{name} | {qty} {unit} | {price}" + (f"/{per}" if per else ""))
        lines.append(
            SimpleNamespace(name=name, qty=qty, unit=unit, price=Decimal(price), per=base_unit)
        )
        rows.append((name, base_qty, base_unit, cent(base_qty * Decimal(price))))
    subtotal = sum((r[3] for r in rows), Decimal(0))
    net = subtotal - cent(subtotal * Decimal("0.10")) if subtotal >= Decimal("50.00") else subtotal
    return Receipt("\n".join(text), lines, rows, subtotal, net, net + cent(net * Decimal("0.19")))


def receipts(seed, n):
    """n receipts, smallest subtotal first: the first one refuting a claim is the smallest counterexample."""
    rng = random.Random(seed)
    return sorted((draw(rng) for _ in range(n)), key=lambda r: (r.subtotal, r.text))


def refute(edge, found, n):
    """Fail with the count and the smallest counterexample (found: [(receipt, got, expected)])."""
    if found:
        r, got, want = found[0]
        text = r.text.replace("\n", " / ")
        raise AssertionError(
            f"{len(found)} of {n} receipts refute {edge}; smallest: [{text}] gave {got}, the requirements say {want}"
        )
