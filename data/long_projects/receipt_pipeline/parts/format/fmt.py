"""format: the printed receipt, one line per item and the total.

Generated in parallel with the other parts. Its premise for the item lines: an item's
amount is integer cents (135 prints as 1.35); the total arrives in currency units."""

from decimal import Decimal


def render(items, total: Decimal) -> str:
    rows = [f"{i.name:<12}{i.qty:>8} {i.unit:<4}{i.amount / 100:>9.2f}" for i in items]
    rows.append(f"{'TOTAL':<25}{total:>9.2f}")
    return "\n".join(rows)
