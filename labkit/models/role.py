"""One base for every model-backed role (a judge, an answerer, a reflector, a repairer).

A role holds its model and where its calls go: the ledger (and run id) that records them,
the budget that pays for them, the cache that may serve them, and extra call options. It
asks through `ask(messages, ...)`, which sends one chat through `labkit.models.gateway.complete`
with all of that attached, so no role re-plumbs ledger, budget and cache itself.

    @dataclass(frozen=True)
    class MyRole(ModelRole):
        ROLE: ClassVar[str] = "reviewer"     # the ledger's role column for this role's calls
        max_tokens: int = 256

        def review(self, text: str) -> str:
            return self.ask([{"role": "user", "content": text}], max_tokens=self.max_tokens).text

`complete` may be injected (a fake of the same signature) for tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from labkit.core.types import Reply
from labkit.models.choice import is_simulated

if TYPE_CHECKING:
    from labkit.models.cache import ResponseCache
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

Complete = Callable[..., Reply]


@dataclass(frozen=True, kw_only=True)
class ModelRole:
    """A model plus where its calls are recorded, paid and cached. Subclass it for a role."""

    ROLE: ClassVar[str] = "model"

    model: str
    _: KW_ONLY
    ledger: Ledger | None = None
    run_id: str = ""
    budget: Budget | None = None
    cache: ResponseCache | None = None
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)  # extra kwargs per call
    complete: Complete | None = None  # injected instead of the gateway (tests)

    @property
    def name(self) -> str:
        return self.model

    @property
    def simulated(self) -> bool:
        """True when the replies were written or recorded beforehand (scripted, replay)."""
        return is_simulated(self.model)

    def recording(self, *, role: str | None = None, round: int = 0) -> dict[str, Any]:
        """The keyword arguments that record, pay and cache a call (for `complete` or a batch)."""
        kwargs: dict[str, Any] = {"ledger": self.ledger, "run_id": self.run_id,
                                  "round": round, "role": role or self.ROLE}  # fmt: skip
        if self.budget is not None:
            kwargs["budget"] = self.budget
        if self.cache is not None:
            kwargs["cache"] = self.cache
        return kwargs

    def ask(
        self,
        messages: list[dict[str, str]],
        *,
        role: str | None = None,
        round: int = 0,
        **options: Any,
    ) -> Reply:
        """One chat completion of this role: `options` for this call, then the role's `options`."""
        send: Complete
        if self.complete is not None:
            send = self.complete
        else:
            from labkit.models.gateway import complete as send
        kwargs = self.recording(role=role, round=round) | options | dict(self.options)
        return send(self.model, messages, **kwargs)
