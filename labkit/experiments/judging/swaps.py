"""Pairs judged in both orders, as columns: what every judge-bias metric reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from labkit.experiments.judging.judge import Swap

__all__ = ["Array", "IntArray", "SwapTable", "table"]

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False, kw_only=True)
class SwapTable:
    """One row per pair judged in both orders, as columns.

    Codes in w12 / w21 / label: 1 or 2 = that output, 0 = tie, −1 = unparseable (w) or
    unknown (label). `w12` is the output chosen with output_1 shown first, `w21` with it
    shown second.
    """

    pair_ids: npt.NDArray[np.object_]
    w12: IntArray
    w21: IntArray
    label: IntArray
    len_1: Array
    len_2: Array
    quality_1: Array  # NaN where unknown
    quality_2: Array
    model_1: npt.NDArray[np.object_]
    model_2: npt.NDArray[np.object_]
    kind: npt.NDArray[np.object_]
    judge: str
    simulated: bool

    @property
    def n(self) -> int:
        return int(self.w12.size)

    @property
    def valid(self) -> npt.NDArray[np.bool_]:
        """Pairs whose two replies both gave a verdict."""
        return (self.w12 >= 0) & (self.w21 >= 0)

    def where(self, mask: npt.ArrayLike) -> SwapTable:
        """The rows selected by a boolean mask."""
        m = np.asarray(mask, dtype=bool)
        return SwapTable(
            pair_ids=self.pair_ids[m],
            w12=self.w12[m],
            w21=self.w21[m],
            label=self.label[m],
            len_1=self.len_1[m],
            len_2=self.len_2[m],
            quality_1=self.quality_1[m],
            quality_2=self.quality_2[m],
            model_1=self.model_1[m],
            model_2=self.model_2[m],
            kind=self.kind[m],
            judge=self.judge,
            simulated=self.simulated,
        )

    def take(self, rows: npt.ArrayLike) -> SwapTable:
        """The rows at integer positions `rows`, repeats allowed (an index resample)."""
        i = np.asarray(rows, dtype=np.intp)
        return SwapTable(
            pair_ids=self.pair_ids[i],
            w12=self.w12[i],
            w21=self.w21[i],
            label=self.label[i],
            len_1=self.len_1[i],
            len_2=self.len_2[i],
            quality_1=self.quality_1[i],
            quality_2=self.quality_2[i],
            model_1=self.model_1[i],
            model_2=self.model_2[i],
            kind=self.kind[i],
            judge=self.judge,
            simulated=self.simulated,
        )

    def of_kind(self, *kinds: str) -> SwapTable:
        return self.where(np.isin(self.kind, kinds))


def table(swaps: Sequence[Swap]) -> SwapTable:
    """Columns from judged pairs. All judgments must come from one judge."""
    if not swaps:
        raise ValueError("no judged pairs to analyse")
    judges = {j.judge for s in swaps for j in (s.first, s.second)}
    if len(judges) != 1:
        raise ValueError(f"a table holds one judge's verdicts; got {sorted(judges)}")
    for s in swaps:
        if s.first.order != "12" or s.second.order != "21" or not s.first.pair_id == s.pair.id == s.second.pair_id:
            raise ValueError(f"pair {s.pair.id}: expected its order-12 then order-21 judgment")
    nan = float("nan")
    cols = list(
        zip(
            *[
                (
                    s.pair.id,
                    _code(s.first.winner),
                    _code(s.second.winner),
                    _code(s.pair.label),
                    len(s.pair.output_1),
                    len(s.pair.output_2),
                    nan if s.pair.quality_1 is None else s.pair.quality_1,
                    nan if s.pair.quality_2 is None else s.pair.quality_2,
                    s.pair.model_1,
                    s.pair.model_2,
                    s.pair.kind,
                )
                for s in swaps
            ],
            strict=True,
        )
    )
    ids, w12, w21, label, l1, l2, q1, q2, m1, m2, kind = cols
    return SwapTable(
        pair_ids=np.array(ids, dtype=object),
        w12=np.array(w12, dtype=np.int64),
        w21=np.array(w21, dtype=np.int64),
        label=np.array(label, dtype=np.int64),
        len_1=np.array(l1, dtype=float),
        len_2=np.array(l2, dtype=float),
        quality_1=np.array(q1, dtype=float),
        quality_2=np.array(q2, dtype=float),
        model_1=np.array(m1, dtype=object),
        model_2=np.array(m2, dtype=object),
        kind=np.array(kind, dtype=object),
        judge=judges.pop(),
        simulated=any(j.simulated for s in swaps for j in (s.first, s.second)),
    )


def _code(x: int | None) -> int:
    return -1 if x is None else int(x)
