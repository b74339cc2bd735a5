"""labkit's errors. Each names what went wrong specifically enough to act on it."""

from __future__ import annotations


class LabkitError(Exception):
    """Base of every error labkit raises on purpose."""


class PatchError(LabkitError):
    """A diff is malformed or does not apply. The message names the file and hunk."""


class PatchTooLarge(PatchError):
    """A patch exceeds the loop's size cap: its effect could not be attributed."""


class IntegrityAlarm(LabkitError):
    """A candidate or patch tampered with the grader (protected tests, plugins, fake results)."""

    def __init__(self, reasons: tuple[str, ...] | list[str], candidate: str = "") -> None:
        self.reasons = tuple(reasons)
        self.candidate = candidate
        super().__init__("integrity alarm: " + "; ".join(self.reasons))


class ValidatorMismatch(LabkitError):
    """A re-test used a different suite or validator than the failure it claims to fix."""


class BudgetExhausted(LabkitError):
    """An action's reserved upper bound does not fit in what is left of the budget."""


class LedgerError(LabkitError):
    """The ledger cannot record (disk full, read-only, schema mismatch). Nothing recorded is lost."""


class ModelError(LabkitError):
    """A model call failed. Subclasses say how."""


class UnknownModel(ModelError):
    """The model string names no provider litellm or labkit knows."""


class MissingKey(ModelError):
    """The provider needs an API key that is not set."""


class ModelTimeout(ModelError):
    """The model did not answer within the time limit."""


class ModelUnavailable(ModelError):
    """The provider or server could not be reached."""


class ReplyFormatError(ModelError):
    """The model replied, but not in the format asked for (e.g. invalid JSON or record)."""

    def __init__(self, message: str, reply: str = "") -> None:
        self.reply = reply
        super().__init__(message)
