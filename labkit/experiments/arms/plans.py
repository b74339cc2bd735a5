"""The one way a sweep's `Plan` is built from its settings (the CLI and the notebook page share it).

Every arm gets the same limit: `calls` calls, `tokens_per_call × calls` tokens, `wall` seconds
and `3 × calls + 2` cost units; best-of-n draws `n` samples (default: `calls`) and the
iterative arms work up to `calls` rounds. With no `model`, the policy is the SIMULATED one with
parameters `sim` (names as in `SimulatedPolicy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields

from labkit.core.errors import InvalidSetting
from labkit.core.types import Usage
from labkit.experiments.arms.policy import SimulatedPolicy
from labkit.experiments.arms.run import Plan

__all__ = ["SIM_PARAMETERS", "budget_plan", "parse_sim"]

SIM_PARAMETERS = tuple(f.name for f in fields(SimulatedPolicy) if f.type in ("float", float))


def budget_plan(
    calls: int,
    *,
    tokens_per_call: int = 1024,
    wall: float = 900.0,
    model: str = "",
    stronger: str = "",
    sim: Mapping[str, float] | None = None,
    n: int = 0,
) -> Plan:
    """The plan every job of a sweep shares, from its settings (see the module docstring)."""
    if int(calls) < 1:
        raise InvalidSetting(f"a budget needs at least 1 call, got {calls}")
    unknown = sorted(set(sim or {}) - set(SIM_PARAMETERS))
    if unknown:
        raise InvalidSetting(f"unknown simulated-policy parameter(s) {unknown}; they are {list(SIM_PARAMETERS)}")
    calls = int(calls)
    limit = Usage(
        tokens=calls * tokens_per_call, calls=calls, wall_seconds=float(wall), cost_units=float(3 * calls + 2)
    )
    return Plan(
        limit=limit,
        model=model,
        sim={k: float(v) for k, v in (sim or {}).items()},
        stronger=stronger,
        n=n or calls,
        rounds=calls,
    )


def parse_sim(text: str) -> dict[str, float]:
    """`"p_fix_blind=0.3,rho=0.5"` -> {"p_fix_blind": 0.3, "rho": 0.5}; a malformed item is named."""
    out: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, value = item.partition("=")
        try:
            if not eq:
                raise ValueError
            out[key.strip()] = float(value)
        except ValueError:
            raise InvalidSetting(f"--sim item {item!r} is not NAME=NUMBER") from None
    budget_plan(1, sim=out)  # names checked here
    return out
