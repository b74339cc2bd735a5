"""Predictions scored against observations, read from the ledger (seed 002 §7).

A strategy that asks for a discriminating experiment may say what it expects the probe to
print (`Experiment.prediction`, one line each). The engine writes that prediction in the
`reflect` event that asks for the experiment, *before* the probe runs; the `experiment`
event that follows holds what was observed. `score` pairs them: a prediction holds when
every predicted line appears in the observed output. A prediction recorded after its
observation, or none at all, is reported as such and never counted as held.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.record.events import Kind

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["Scored", "held_rate", "score"]


@dataclass(frozen=True, kw_only=True)
class Scored:
    """One experiment: what was predicted (and when), what was observed, and whether it held."""

    case: str
    question: str
    prediction: tuple[str, ...]
    observation: str
    predicted_at: int | None  # ledger seq of the reflect event carrying the prediction
    observed_at: int  # ledger seq of the experiment event
    held: bool  # every predicted line was observed, and the prediction came first

    @property
    def before(self) -> bool:
        return self.predicted_at is not None and self.predicted_at < self.observed_at


def score(ledger: Ledger, run_id: str) -> tuple[Scored, ...]:
    """Every experiment of `run_id`, paired with the prediction asked with it."""
    out: list[Scored] = []
    asked: dict[tuple[str, str], tuple[int, tuple[str, ...]]] = {}  # (case, question) -> (seq, prediction)
    for e in ledger.events(run_id):
        case = str(e.detail.get("case", ""))
        if e.kind in (Kind.REFLECT, Kind.IDLE) and e.detail.get("experiment"):
            asked[(case, str(e.detail["experiment"]))] = (
                e.seq,
                tuple(e.detail.get("prediction") or ()),
            )
        elif e.kind == Kind.EXPERIMENT:
            question = str(e.detail.get("question", ""))
            seq, prediction = asked.pop((case, question), (None, ()))
            observed = ledger.get(e.output_hash) if e.output_hash else ""
            lines = set(observed.splitlines())
            held = bool(prediction) and seq is not None and seq < e.seq and all(p in lines for p in prediction)
            out.append(
                Scored(
                    case=case,
                    question=question,
                    prediction=prediction,
                    observation=observed,
                    predicted_at=seq if prediction else None,
                    observed_at=e.seq,
                    held=held,
                )
            )
    return tuple(out)


def held_rate(scored: tuple[Scored, ...]) -> tuple[int, int]:
    """(predictions that held, experiments): an experiment without a prediction counts as not held."""
    return sum(s.held for s in scored), len(scored)
