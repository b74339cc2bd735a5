"""labkit's errors. Each names what went wrong specifically enough to act on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from labkit.core.types import Usage


class LabkitError(Exception):
    """Base of every error labkit raises on purpose."""


class PatchError(LabkitError):
    """A diff is malformed or does not apply. The message names the file and hunk."""


class PatchTooLarge(PatchError):
    """A patch exceeds the loop's size cap: its effect could not be attributed."""


class PermissionRefused(LabkitError):
    """A controller tried an action its error class does not grant (see core.error_classes)."""


class TestChangeRefused(PermissionRefused):
    """A change to a protected test without independent requirement evidence (or that cannot be
    re-validated): the acceptance stays as it was."""

    __test__ = False  # not a pytest test class


class UnknownEffect(LabkitError):
    """An action ended without telling whether its effect happened (e.g. a write that timed out)."""

    def __init__(self, message: str, action: str = "") -> None:
        self.action = action
        super().__init__(message)


class UnitError(LabkitError, ValueError):
    """Experimental units are malformed: unknown status, unassigned unit, or a unit counted twice."""


class SearchError(LabkitError, ValueError):
    """A search was set up wrongly (bad limit, bad cost, a winner rule not registered up front)."""


class SearchHalted(LabkitError):
    """Inside a search: an error class left only quarantine (integrity, unknown effect) or stop."""

    def __init__(self, message: str, error_class: str, quarantine: bool) -> None:
        self.error_class = error_class
        self.quarantine = quarantine
        super().__init__(message)


class BestOfNError(LabkitError, ValueError):
    """A best-of-N simulation parameter or a reviewer's answer is out of range."""


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


class BudgetOverrun(UserWarning):
    """A warning: an action used more than the upper bound it reserved (charged the bound)."""


class LedgerError(LabkitError):
    """The ledger cannot record (disk full, read-only, schema mismatch). Nothing recorded is lost."""


class RunIdInUse(LedgerError):
    """A run id the ledger already holds events for was given to a new run: continuing it needs
    resume=True (`labkit run --resume`), otherwise two runs would merge into one record."""

    def __init__(self, run_id: str, ledger: str, events: int) -> None:
        self.run_id, self._args = run_id, (run_id, ledger, events)
        super().__init__(
            f"run id {run_id!r} was run before ({events} events in ledger {ledger}): continue it with "
            "resume=True (labkit run --resume) or give a new run id; two runs under one id would "
            "merge (costs added together, two stops)"
        )

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:  # crosses process pools intact
        return type(self), self._args


class RunLeaseHeld(LedgerError):
    """Another live process holds the lease of this run id: one writer per run id."""

    def __init__(self, run_id: str, ledger: str, pid: int, host: str, why: str = "") -> None:
        self.run_id, self.pid, self.host = run_id, pid, host
        self._args = (run_id, ledger, pid, host, why)
        super().__init__(
            f"run {run_id!r} in ledger {ledger} is being written by process {pid} on host {host!r}"
            f"{why}; one writer per run id: wait for it to finish (or stop it), then resume"
        )

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:  # crosses process pools intact
        return type(self), self._args


class ModelError(LabkitError):
    """A model call failed. Subclasses say how."""


class UnknownModel(ModelError):
    """The model string names no provider litellm or labkit knows."""


class MissingKey(ModelError):
    """The provider needs an API key that is not set."""


class ModelTimeout(ModelError):
    """The model did not answer within the time limit.

    `partial` is the reply text received before the model was stopped ("" when the provider
    streams nothing back, or nothing had arrived): a page shows it raw, marked as cut off.
    """

    def __init__(self, message: str, partial: str = "") -> None:
        self.partial = partial
        super().__init__(message)


class ModelUnavailable(ModelError):
    """The provider or server could not be reached."""


class ReplyFormatError(ModelError):
    """The model replied, but not in the format asked for (e.g. invalid JSON or record).

    `reply` is the raw text; `usage` what the call spent (set by the gateway: it was paid for).
    """

    def __init__(self, message: str, reply: str = "", usage: Usage | None = None) -> None:
        self.reply = reply
        self.usage = usage
        super().__init__(message)


class ReplayMiss(ModelError):
    """The transcript has no reply for this request (the message names key and file)."""


class TranscriptError(ModelError):
    """A transcript file is missing or malformed (the message names file and line)."""


class ScriptExhausted(ModelError):
    """A scripted model was asked more often than it has replies."""


class CacheError(LabkitError):
    """The cache file cannot be opened or written (the message names the file)."""


class SuiteError(LabkitError):
    """An acceptance suite is malformed: unknown test file or test name, overlap, bad group."""


class SandboxError(LabkitError):
    """The sandbox was asked for something it will not do (e.g. write outside the workspace)."""


class IsolationUnavailable(SandboxError):
    """Namespaces cannot be used here (no bubblewrap, not permitted); the reason says which."""


class RunnerTimeout(IsolationUnavailable):
    """The isolated runner did not answer within a job's wall limit plus grace: it was killed
    from outside, and the validation counts as the candidate's run hitting the wall limit."""


class CheckSetError(LabkitError, ValueError):
    """A check set or a run of it is malformed (duplicate check, unknown check or severity)."""


class CaseError(LabkitError, ValueError):
    """A case directory is missing a file, or its case.json is malformed or inconsistent."""


class InvalidRecord(ReplyFormatError):
    """A reflection record that cannot drive the loop. `problems` names each missing/invalid part."""

    def __init__(self, problems: list[str], reply: str = "") -> None:
        self.problems = problems
        super().__init__("invalid reflection record: " + "; ".join(problems), reply)


class InvalidRounds(LabkitError, ValueError):
    """The per-case per-round frame cannot be accounted (missing column, round 0, duplicates...)."""


class PairFormatError(LabkitError, ValueError):
    """A pairwise file has a malformed line. The message names the file, the line and the field."""


class UnknownGlossaryTerm(LabkitError, KeyError):
    """A notebook asked for a glossary entry that does not exist. `unknown` holds the keys asked
    for and missing, `known` every key the glossary has; the message names both."""

    def __init__(self, unknown: list[str], known: list[str]) -> None:
        self.unknown = list(unknown)
        self.known = list(known)
        super().__init__(f"no glossary entry for {self.unknown}; known keys: {', '.join(self.known)}")

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0])


class OfflineExportError(LabkitError):
    """The notebook could not be exported, or its export refers to files this marimo lacks."""


class ReferenceDataMissing(LabkitError):
    """Reference data a page or experiment reads is missing or unreadable: data shipped inside
    another package (e.g. the AlpacaEval leaderboard; the message names the package, the file
    and the install command) or one of labkit's own recordings under data/ (the message names
    the file and the command that records it again; `core.paths.read_recording`)."""


class LeaderboardFormatError(LabkitError, ValueError):
    """A leaderboard file lacks a column labkit reads, or a value is not a number. Names file and row."""


class InvalidSetting(LabkitError, ValueError):
    """A run was configured with a setting it cannot use (e.g. an unknown patch_cap key)."""


class BackendUnavailable(LabkitError):
    """A sweep's execution backend could not be started (e.g. a local Ray cluster that did not
    come up twice in a row); the message says which backend and why."""


class RunInterrupted(LabkitError):
    """A run ended on an error. Its stop (with the error as reason) was recorded when the ledger
    could still be written; `run` holds what was done so far (an `EngineRun`), `trace` the
    single case's trace for one-case runs. The original error is the `__cause__`."""

    def __init__(self, message: str, run: object = None, trace: object = None) -> None:
        self.run = run
        self.trace = trace
        super().__init__(message)


class MemoryRefused(LabkitError):
    """The experience store refused a write: the lesson is not backed by a kept, validated
    change in a ledger, or its diagnostics come from sealed final tests. Nothing is written."""


class ExposedFinalSet(LabkitError):
    """A sealed final check set whose diagnostics were authorised as development material was
    asked to confirm a candidate (or an authorisation was incomplete): replace the final test data."""


class SelectionError(LabkitError):
    """The selector cascade refused: its rule was not registered before the candidates, the
    rule given is not the one registered, or a candidate that failed a hard check was to win."""


class DigestMismatch(LabkitError):
    """A file read to rebuild published data (data/published/<source>/) is not the file its
    provenance records: its sha256 differs. The message names the file, both digests and the commit."""
