"""How long "Ask a real model" takes with SmolLM2 on this machine: one recorded measurement.

    python -m labkit.experiments.smollm2_speed [--out data/models/smollm2_speed.json]

sends round 1 of cache_isolation's real-model run as its button does (the reflector's system
prompt and the start's evidence, the reply schema as a decoding constraint, the reflector's
max_tokens, temperature 0) to SmolLM2 with no time limit, and records llama.cpp's own timings:
how many prompt tokens it read and how fast, how many reply tokens it wrote and how fast, the
wall time, the start-up (importing litellm and loading the model), and the machine (cores,
threads, load average before and after), with the package versions. The cache_isolation page
turns it into the button's time estimate (`Speed.round_seconds`, `Speed.tokens_within`).
Speeds depend on the load at the time; the recording says which load that was.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from labkit.core.paths import DATA, read_recording
from labkit.core.versions import package_versions
from labkit.experiments import cache_isolation as cache_case
from labkit.grading.validator import Validator
from labkit.loop.engine.strategy import Situation
from labkit.loop.strategies.reflector import REPLY_SCHEMA
from labkit.models import smollm2
from labkit.models.call import request
from labkit.models.providers import litellm

__all__ = [
    "COMMAND",
    "MODEL",
    "RECORDING",
    "Speed",
    "load",
    "main",
    "measure",
    "round_one_messages",
    "send_round_one",
]

MODEL = "labkit/smollm2"
RECORDING = DATA / "models" / "smollm2_speed.json"
COMMAND = "python -m labkit.experiments.smollm2_speed --out data/models/smollm2_speed.json"
_NO_LIMIT = 3600.0  # seconds: the measurement waits for the whole reply


@dataclass(frozen=True, kw_only=True)
class Speed:
    """One measured round-1 reflection by SmolLM2 (numbers as llama.cpp timed them)."""

    prompt_tokens: int
    prompt_per_second: float
    reply_tokens: int
    reply_per_second: float
    max_tokens: int
    finish_reason: str  # "stop": the reply ended; "length": cut at max_tokens
    wall_seconds: float  # the call, as the caller waited for it
    startup_seconds: float  # importing litellm and loading the model, once per process
    cores: int
    threads: int
    load_before: float  # 1-minute load average just before the call
    load_after: float
    measured_on: str  # UTC date and time
    command: str = COMMAND
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def reading_seconds(self) -> float:
        """Time to read the round-1 prompt before the first reply token."""
        return self.prompt_tokens / self.prompt_per_second

    @property
    def round_seconds(self) -> float:
        """One round's reply time at the measured speeds: read the prompt, write the reply."""
        return self.reading_seconds + self.reply_tokens / self.reply_per_second

    def tokens_within(self, limit: float) -> int:
        """How many reply tokens arrive before `limit` seconds at the measured speeds."""
        return max(0, min(self.reply_tokens, int((limit - self.reading_seconds) * self.reply_per_second)))


def round_one_messages() -> list[dict[str, str]]:
    """The messages round 1 of cache_isolation's real-model run sends (validated start, real evidence)."""
    c = cache_case.case()
    verdict = Validator().run(c.start, c.suite)
    reflector = cache_case.reflector(model=MODEL)
    return reflector.messages(Situation(round=1, candidate=c.start, verdict=verdict, suite=c.suite, state="start"))


def send_round_one(max_tokens: int | None = None) -> dict[str, Any]:
    """Send round 1 to SmolLM2 as the button does (max_tokens: the reflector's unless given),
    with no time limit; llama.cpp's whole response, its `usage` and `timings` included."""
    reflector = cache_case.reflector(model=MODEL)
    req = request(
        MODEL,
        round_one_messages(),
        max_tokens=max_tokens or reflector.max_tokens,
        temperature=0.0,
        json_schema=REPLY_SCHEMA,
        timeout=_NO_LIMIT,
    )
    backend = MODEL.partition("/")[2]
    return smollm2.chat(backend, [dict(m) for m in req.messages], dict(req.params), timeout=_NO_LIMIT)


def measure() -> Speed:
    """Send round 1 to SmolLM2 once, with no time limit, and time it (minutes on a loaded machine)."""
    t0 = time.perf_counter()
    litellm()  # the button's first press pays these two as well
    engine = smollm2.engine()
    startup = time.perf_counter() - t0
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    result = send_round_one()
    wall = time.perf_counter() - t0
    timings, usage = result.get("timings") or {}, result.get("usage") or {}
    return Speed(
        prompt_tokens=int(usage["prompt_tokens"]),
        prompt_per_second=round(float(timings["prompt_per_second"]), 2),
        reply_tokens=int(usage["completion_tokens"]),
        reply_per_second=round(float(timings["predicted_per_second"]), 2),
        max_tokens=cache_case.reflector(model=MODEL).max_tokens,
        finish_reason=str(result["choices"][0].get("finish_reason")),
        wall_seconds=round(wall, 1),
        startup_seconds=round(startup, 1),
        cores=os.cpu_count() or 0,
        threads=engine.threads,
        load_before=round(load_before, 2),
        load_after=round(os.getloadavg()[0], 2),
        measured_on=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        versions=package_versions(smollm2.DISTRIBUTIONS),
    )


def load(path: Path = RECORDING) -> Speed:
    """The recorded measurement (ReferenceDataMissing naming the file and the command if absent)."""
    return Speed(**read_recording(path, COMMAND))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labkit.experiments.smollm2_speed", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=None, help="write the recording here (default: print it)")
    args = parser.parse_args(argv)
    missing = smollm2.available()
    if missing:
        print(f"SmolLM2 cannot run here: {missing}", file=sys.stderr)
        return 2
    text = json.dumps(asdict(measure()), indent=1) + "\n"
    if args.out is None:
        print(text, end="")
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
