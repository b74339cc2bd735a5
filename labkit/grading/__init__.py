"""grading: what counts as evidence: protected acceptance, the sandbox, the validator, check sets, cases."""

from labkit.core.lazy import attach

__getattr__, __dir__ = attach(
    __name__,
    {
        "AcceptanceSuite": "labkit.grading.acceptance",
        "Case": "labkit.grading.cases",
        "CheckSet": "labkit.grading.checkset",
        "Limits": "labkit.grading.sandbox",
        "Validator": "labkit.grading.validator",
        "load_case": "labkit.grading.cases",
        "run_pytest": "labkit.grading.sandbox",
    },
)

__all__ = [
    "AcceptanceSuite",
    "Case",
    "CheckSet",
    "Limits",
    "Validator",
    "load_case",
    "run_pytest",
]
