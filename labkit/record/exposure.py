"""Which sealed final check sets were exposed: authorised as development material (seed 002 §8).

Once a sealed final set's diagnostics are authorised as development material, that final set
can no longer confirm anything: what was learnt from it would be graded by it. The authorisation
is an EXPOSE event in the ledger's own run `EXPOSURES`; `Recorder.confirm` reads it and refuses
an exposed final set (`ExposedFinalSet`) until the case's final test data is replaced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from labkit.core.errors import ExposedFinalSet
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Event, Ledger

__all__ = ["EXPOSURES", "exposure_of", "record_exposure", "refuse_exposed"]

EXPOSURES = "exposures"


def record_exposure(ledger: Ledger, final_set: str, *, authorised_by: str, reason: str, label: str) -> Event:
    """Record that the final set `final_set` (a suite digest) is now development material."""
    if not authorised_by.strip() or not reason.strip():
        raise ExposedFinalSet("an authorisation names who authorised it and why")
    return ledger.record(
        EXPOSURES,
        0,
        Role.HUMAN,
        Kind.EXPOSE,
        detail={"final_set": final_set, "authorised_by": authorised_by, "reason": reason, "label": label},
    )


def exposure_of(ledger: Ledger, final_set: str) -> Event | None:
    """The authorisation that exposed `final_set`, if any."""
    return next(
        (e for e in ledger.events(EXPOSURES) if e.kind == Kind.EXPOSE and e.detail.get("final_set") == final_set), None
    )


def refuse_exposed(ledger: Ledger, final_set: str, case: str) -> None:
    """Raise ExposedFinalSet if `final_set` was authorised as development material."""
    e = exposure_of(ledger, final_set)
    if e is not None:
        raise ExposedFinalSet(
            f"case {case!r}: its sealed final set {final_set} was authorised as development material "
            f"by {e.detail.get('authorised_by')} ({e.detail.get('reason')}); it can no longer confirm: "
            "replace the final test data"
        )
