"""Try your own patch: a person's hypothesis and unified diff, as one round of the engine.

`HandWritten` is a strategy whose reflection record and patch a person wrote. Its record is
checked like a model's (`check_record`: one falsifiable cause, evidence, expected outcome);
its diff is applied, size-capped, validated and decided by the engine like any other child.
Nothing here validates or decides: a worked example runs it for one round through its own
loop (`cache_isolation.try_patch`, `repair_yours.try_patch`), so the patch meets exactly the
validator, patch cap and decide mode that loop uses. A bad diff or an empty hypothesis
never raises: the round records why it could not be tested ("keep investigating", with the
parser's own words).
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.core.types import Patch
from labkit.loop.engine.reflection import InvalidRecord, check_record
from labkit.loop.engine.strategy import Proposal, Situation

__all__ = ["NO_HYPOTHESIS", "YOU", "HandWritten"]

YOU = "you (a hand-written hypothesis and patch)"
NO_HYPOTHESIS = (
    "no hypothesis written, so nothing was tested: write one cause the tests could prove wrong "
    "(what is wrong, and where), then test your patch again"
)


@dataclass(frozen=True, kw_only=True)
class HandWritten:
    """A strategy for one round whose record and diff a person wrote, checked like a model's.

    The record's expected verification is read from the situation: the tests failing now
    must pass, the ones passing now must stay green. `phenomenon` defaults to naming them.
    """

    hypothesis: str
    diff: str
    refuted_if: str = ""
    phenomenon: str = ""
    environment: str = ""
    name: str = YOU
    simulated: bool = False

    def propose(self, situation: Situation) -> Proposal:
        results = situation.verdict.evidence.results
        failing = [r.nodeid for r in results if r.outcome != "passed"]
        passing = [r.nodeid for r in results if r.outcome == "passed"]
        short = ", ".join(n.split("::")[-1] for n in failing) or "none"
        data = {
            "phenomenon": self.phenomenon or f"failing visible tests: {short}",
            "evidence_ref": failing[0] if failing else "",
            "environment": self.environment,
            "hypothesis": {
                "cause": self.hypothesis.strip(),
                "refuted_if": self.refuted_if.strip() or "the failing tests still fail after the patch",
            },
            "action": "apply this one patch",
            "expected": {"acceptance": failing, "protective": passing},
        }
        if not self.hypothesis.strip():  # said plainly, before the record checker's own words
            return Proposal(failure=NO_HYPOTHESIS, raw=self.diff)
        try:
            record = check_record(data)
        except InvalidRecord as exc:
            return Proposal(failure=str(exc), raw=self.diff)
        if not self.diff.strip():
            return Proposal(record=record, failure="no diff: write the change to test", raw="")
        return Proposal(record=record, patch=Patch(self.diff, "your patch"), raw=self.diff)
