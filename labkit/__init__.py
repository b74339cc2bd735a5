"""labkit: the reflection loop as code you can run, step through, measure and break.

Types and errors are imported eagerly; the primitives and experiments load on first use
(`labkit.run_loop`, `labkit.Validator`, …) so `import labkit` stays fast and never imports
litellm.
"""

from labkit.core.errors import (
    BudgetExhausted,
    IntegrityAlarm,
    LabkitError,
    LedgerError,
    MissingKey,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
    PatchError,
    PatchTooLarge,
    ReplyFormatError,
    UnknownModel,
    ValidatorMismatch,
)
from labkit.core.lazy import attach
from labkit.core.types import (
    Bucket,
    Candidate,
    Decision,
    DecisionRecord,
    Evidence,
    Hypothesis,
    Patch,
    PatchSize,
    Reply,
    TestResult,
    Usage,
    Verdict,
)

__getattr__, __dir__ = attach(__name__, {
    "AcceptanceSuite": "labkit.grading.acceptance",
    "Budget": "labkit.record.budget",
    "Ledger": "labkit.record.ledger",
    "Limits": "labkit.grading.sandbox",
    "Operation": "labkit.record.budget",
    "Validator": "labkit.grading.validator",
    "complete": "labkit.models.gateway",
    "decide": "labkit.loop.engine",
    "load_case": "labkit.grading.cases",
    "run_loop": "labkit.loop.engine",
})  # fmt: skip


__all__ = [
    "AcceptanceSuite",
    "Bucket",
    "Budget",
    "BudgetExhausted",
    "Candidate",
    "Decision",
    "DecisionRecord",
    "Evidence",
    "Hypothesis",
    "IntegrityAlarm",
    "LabkitError",
    "Ledger",
    "LedgerError",
    "Limits",
    "MissingKey",
    "ModelError",
    "ModelTimeout",
    "ModelUnavailable",
    "Operation",
    "Patch",
    "PatchError",
    "PatchSize",
    "PatchTooLarge",
    "Reply",
    "ReplyFormatError",
    "TestResult",
    "UnknownModel",
    "Usage",
    "Validator",
    "ValidatorMismatch",
    "Verdict",
    "complete",
    "decide",
    "load_case",
    "run_loop",
]
