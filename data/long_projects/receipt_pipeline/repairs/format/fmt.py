"""format: the printed receipt, one line per item and the total.

Repaired premise: an item's amount arrives in currency units (Decimal("1.35")), like the total."""

from decimal import Decimal


def render(items, total: Decimal) -> str:
    rows = [f"{i.name:<12}{i.qty:>8} {i.unit:<4}{i.amount:>9.2f}" for i in items]
    rows.append(f"{'TOTAL':<25}{total:>9.2f}")
    return "\n".join(rows)
