"""A planning step on and off, and *where* it helped (seed 002 §7) — SIMULATED, one configuration each.

A task needs `steps` sub-steps within `budget` actions. Each action attempts the next
undone sub-step and succeeds with probability `p_step` (the model's skill).

- **No plan**: the agent keeps no checklist. After each action it re-verifies every sub-step
  done so far (repeated verifications), and with probability `p_redo` it loses track and
  spends the action redoing a finished sub-step instead.
- **Plan**: one action up front writes the checklist; afterwards it verifies only the sub-step
  it just did and never redoes a finished one.

`compare` reports, per configuration, completion with and without the plan and the repeated
verifications per task — so the page can say whether the plan helped completion, or mainly
cut repeated verification, *in that configuration only*. The model is a toy with stated
parameters: it shows how to report the comparison, not what planning does for a real model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["CONFIGS", "Config", "PlanResult", "compare", "simulate"]


@dataclass(frozen=True, kw_only=True)
class Config:
    name: str
    p_step: float
    p_redo: float
    steps: int = 4
    budget: int = 9
    tasks: int = 2000
    seed: int = 0


CONFIGS = (
    Config(name="weaker model (p_step 0.55, p_redo 0.30)", p_step=0.55, p_redo=0.30),
    Config(name="stronger model (p_step 0.95, p_redo 0.10)", p_step=0.95, p_redo=0.10),
)


@dataclass(frozen=True, kw_only=True)
class PlanResult:
    config: str
    plan: bool
    completed: int
    tasks: int
    verifications: float  # per task
    repeated: float  # verifications of an already-verified sub-step, per task


def simulate(cfg: Config, plan: bool) -> PlanResult:
    rng = np.random.default_rng([cfg.seed, int(plan)])
    completed, verifications, repeated = 0, 0, 0
    for _ in range(cfg.tasks):
        done, actions = 0, 1 if plan else 0  # the plan costs one action
        while done < cfg.steps and actions < cfg.budget:
            actions += 1
            if not plan and done and rng.random() < cfg.p_redo:
                verifications += done  # it redid a finished step and re-checked everything
                repeated += done
                continue
            if rng.random() < cfg.p_step:
                done += 1
            verifications += 1 if plan else max(done, 1)
            repeated += 0 if plan else max(done - 1, 0)
        completed += done == cfg.steps
    return PlanResult(
        config=cfg.name,
        plan=plan,
        completed=completed,
        tasks=cfg.tasks,
        verifications=verifications / cfg.tasks,
        repeated=repeated / cfg.tasks,
    )


def compare(configs: tuple[Config, ...] = CONFIGS) -> list[dict[str, object]]:
    """Per configuration: both results and where the plan helped (completion, or verifications)."""
    out = []
    for cfg in configs:
        off, on = simulate(cfg, False), simulate(cfg, True)
        gain = (on.completed - off.completed) / cfg.tasks
        where = (
            "completion"
            if gain >= 0.05
            else "fewer repeated verifications (completion within 5 points)"
            if on.repeated < off.repeated
            else "nowhere"
        )
        out.append(
            {"config": asdict(cfg), "off": asdict(off), "on": asdict(on), "completion_gain": gain, "helped": where}
        )
    return out
