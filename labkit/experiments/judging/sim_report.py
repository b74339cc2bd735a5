"""The simulated judge on the battery, and its bias report at the judge-bias page's opening setting, recorded.

`simulate(setting)` lets the simulated judge (`SimulatedJudge`) judge the battery of pairs in both
orders and measures it with `bias.report`: 1000 bootstrap resamples and the judge's logistic model
fitted back, about half a second, the largest part of the page's own work when it opens. So the report
at the opening setting (`OPENING`, the sliders' starting values) is computed once and stored
(data/judge/sim_report.json, `record_sim_report()`); `simulate` reads it for that setting and
computes every other setting. The verdicts themselves are always computed (they are cheap).
tests/test_judge_sim_report.py computes the report again and checks it equals the stored one.
Recorded or not, everything here is simulated.
"""

from __future__ import annotations

import functools
import json
import math
import types
from dataclasses import asdict, dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from labkit.core.paths import DATA, read_recording
from labkit.core.versions import package_versions
from labkit.experiments.judging import bias, pairs, questions
from labkit.experiments.judging.judge import Swap
from labkit.experiments.judging.simjudge import SimulatedJudge, simulated_own

__all__ = ["DEPENDS_ON", "OPENING", "SIM_REPORT", "SimSetting", "record_sim_report", "recorded_sim_report",
           "report_leaves", "simulate"]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class SimSetting:
    """The simulated judge's biases and the battery's size."""

    k: float
    beta: float
    phi: float
    delta: float
    n_questions: int
    seed: int = 0


OPENING = SimSetting(k=2.0, beta=1.0, phi=0.8, delta=0.5, n_questions=200)
SIM_REPORT = DATA / "judge" / "sim_report.json"
DEPENDS_ON = ("numpy",)  # the bootstrap draws and the fits
COMMAND = "python -c 'from labkit.experiments.judging.sim_report import record_sim_report as r; r()'"


def judged(s: SimSetting) -> list[Swap]:
    """Every pair of the battery of `s.n_questions` questions, judged in both orders."""
    judge = SimulatedJudge(k=s.k, beta=s.beta, phi=s.phi, delta=s.delta, seed=s.seed)
    qs = questions.make_questions(s.n_questions, s.seed)
    return judge.run(pairs.battery(qs, s.seed, simulated_own(qs), judge.name))


def simulate(s: SimSetting) -> tuple[list[Swap], bias.BiasReport]:
    """The judged pairs and their report; at the recorded setting the report is the stored one."""
    swaps = judged(s)
    return swaps, recorded_sim_report() if s == OPENING else bias.report(swaps)


def record_sim_report(path: Path = SIM_REPORT) -> bias.BiasReport:
    """Compute the report at OPENING and store it at `path`."""
    report = bias.report(judged(OPENING))
    data = {"command": COMMAND, "versions": package_versions(DEPENDS_ON), "setting": asdict(OPENING),
            "report": _encode(report)}  # fmt: skip
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return report


def recorded_sim_report(path: Path = SIM_REPORT) -> bias.BiasReport:
    """The stored report; refused if it was recorded at another setting than OPENING."""
    rec = read_recording(path, COMMAND)
    if rec.get("setting") != asdict(OPENING):
        raise ValueError(f"{path} holds the report at {rec.get('setting')}, not at {asdict(OPENING)}: {COMMAND}")
    report: bias.BiasReport = _decode(bias.BiasReport, rec["report"])
    return report


def report_leaves(report: bias.BiasReport) -> list[tuple[str, Any]]:
    """Every value in `report` by its path ("position.consistency.low", ...): what a test compares."""
    out: list[tuple[str, Any]] = []

    def walk(x: Any, where: str) -> None:
        if is_dataclass(x):
            for f in fields(x):
                walk(getattr(x, f.name), f"{where}.{f.name}" if where else f.name)
        elif isinstance(x, tuple | list):
            for i, v in enumerate(x):
                walk(v, f"{where}[{i}]")
        else:
            out.append((where, x))

    walk(report, "")
    return out


# --- nested frozen dataclasses <-> JSON (floats exact; NaN as "NaN") ---------------------------


def _encode(x: Any) -> Any:
    if is_dataclass(x):
        return {f.name: _encode(getattr(x, f.name)) for f in fields(x)}
    if isinstance(x, tuple | list):
        return [_encode(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    return x.item() if hasattr(x, "item") else x  # a numpy scalar as its Python value


@functools.cache
def _hints(tp: type) -> dict[str, Any]:
    return get_type_hints(tp)


def _decode(tp: Any, v: Any) -> Any:
    if v is None:
        return None
    if get_origin(tp) in (Union, types.UnionType):
        (inner,) = [a for a in get_args(tp) if a is not type(None)]
        return _decode(inner, v)
    if get_origin(tp) is tuple:
        return tuple(_decode(get_args(tp)[0], e) for e in v)
    if isinstance(tp, type) and is_dataclass(tp):
        hints = _hints(tp)
        return tp(**{name: _decode(hints[name], value) for name, value in v.items()})
    return float(v) if tp is float else v
