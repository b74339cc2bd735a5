"""labkit: the reflection loop as code you can run, step through, measure and break.

The public surface is what a researcher needs to run cases through the engine and to plug in a
strategy of their own (see the README's tour):

- cases and acceptance: `load_case`, `Task`, `Validator`;
- the engine: `run` (a suite of tasks) and `run_loop` (one case), returning an `EngineRun` /
  a trace; `Ledger` records every event, `Budget` pays for them;
- the strategy seam: a `Strategy` reads a `Situation` (visible evidence only) and returns a
  `Proposal`;
- `LabkitError`, the base of every error labkit raises (the rest are in labkit.core.errors).

Everything loads on first use, so `import labkit` stays fast and never imports litellm. Names
exported here before this surface was narrowed (the core types and errors, `complete`, …) still
resolve; their homes are labkit.core.types, labkit.core.errors and labkit.models.
"""

from labkit.core.lazy import attach

__getattr__, __dir__ = attach(
    __name__,
    {
        "Budget": "labkit.record.budget",
        "EngineRun": "labkit.loop.engine.trace",
        "LabkitError": "labkit.core.errors",
        "Ledger": "labkit.record.ledger",
        "Proposal": "labkit.loop.engine.strategy",
        "Situation": "labkit.loop.engine.strategy",
        "Strategy": "labkit.loop.engine.strategy",
        "Task": "labkit.loop.engine.trace",
        "Validator": "labkit.grading.validator",
        "load_case": "labkit.grading.cases",
        "run": "labkit.loop.engine",
        "run_loop": "labkit.loop.engine",
        # the earlier, wider surface: still resolvable, no longer listed in __all__
        **dict.fromkeys(
            (
                "Bucket",
                "Candidate",
                "Decision",
                "DecisionRecord",
                "Evidence",
                "Hypothesis",
                "Patch",
                "PatchSize",
                "Reply",
                "TestResult",
                "Usage",
                "Verdict",
            ),
            "labkit.core.types",
        ),
        **dict.fromkeys(
            (
                "BudgetExhausted",
                "IntegrityAlarm",
                "LedgerError",
                "MissingKey",
                "ModelError",
                "ModelTimeout",
                "ModelUnavailable",
                "PatchError",
                "PatchTooLarge",
                "ReplyFormatError",
                "UnknownModel",
                "ValidatorMismatch",
            ),
            "labkit.core.errors",
        ),
        "AcceptanceSuite": "labkit.grading.acceptance",
        "Limits": "labkit.grading.sandbox",
        "Operation": "labkit.record.budget",
        "complete": "labkit.models.gateway",
        "decide": "labkit.loop.engine",
    },
)

__all__ = [
    "Budget",
    "EngineRun",
    "LabkitError",
    "Ledger",
    "Proposal",
    "Situation",
    "Strategy",
    "Task",
    "Validator",
    "load_case",
    "run",
    "run_loop",
]
