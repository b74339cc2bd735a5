"""The isolated runner's reply, read as facts: one `SandboxRun` from a job's two runs.

Everything in a reply's report streams may have been written by the code under test, so
nothing in them is trusted to parse: a line that is not a runner's JSON line (bad JSON,
NaN, an unknown outcome, a field of the wrong type) makes the stream unusable and the
report incomplete, with that as the reason — a failure of the candidate's run, never an
exception here. Only what no honest run can produce is an integrity problem: two session
ends, an exit status that disagrees with pytest's own, pytest's functions swapped or
plugins registered at run time, a flood of the report channel.
"""

from __future__ import annotations

import json
import math
import signal
from collections.abc import Mapping
from typing import Any

from labkit.core.types import TestResult
from labkit.grading.sandbox_facts import CORRUPT, SEVERITY, Limits, SandboxRun, describe

__all__ = ["from_reply"]

_TAIL = 2000  # characters of stderr kept as evidence
_MESSAGE = 500  # characters of a failure message kept per test
_COLLECT_MESSAGE = 2000  # characters of a collection error kept
_RAISED = 72  # confine.STARTED: the run itself raised after set-up
_CLOSED = "[labkit] report channel closed by the code under test"


def _reject(name: str) -> float:
    raise ValueError(f"{name} is not a number a runner writes")


def _problem(line: str) -> tuple[dict[str, Any], str]:
    """One report line as a runner writes it, or why it is not one."""
    try:
        item = json.loads(line, parse_constant=_reject)
    except ValueError as e:
        return {}, str(e)
    if not isinstance(item, dict) or not isinstance(item.get("k"), str):
        return {}, "not a JSON object with a kind"
    if item["k"] in ("test", "collect", "check"):
        if not isinstance(item.get("id"), str) or not isinstance(item.get("msg", ""), str):
            return {}, "id or message is not text"
        seconds = item.get("s", 0.0)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
            return {}, "duration is not a finite number"
        if item.get("outcome") not in (*SEVERITY, "unsupported"):
            return {}, f"unknown outcome {str(item.get('outcome'))[:40]!r}"
    if item["k"] == "alarm" and not isinstance(item.get("what"), str):
        return {}, "an alarm without words"
    return item, ""


def _stream(lines: list[str], kinds: tuple[str, ...]) -> tuple[list[dict[str, Any]], str]:
    """The stream's items, and why it cannot be used ("" if it can)."""
    items: list[dict[str, Any]] = []
    for line in lines:
        item, why = _problem(line)
        if not why and item["k"] not in kinds:
            why = f"a {item['k'][:20]!r} line"
        if why:
            return items, f"{CORRUPT} ({why}): {line[:80]!r}"
        items.append(item)
    return items, ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def from_reply(reply: dict[str, Any], protected: Mapping[str, str | bytes], limits: Limits, cgroup: str) -> SandboxRun:
    runs = {r["mode"]: r for r in reply["runs"]}
    main = runs["pytest"]
    timed_out = bool(reply["timed_out"])
    problems: list[str] = []
    notes: list[str] = []
    merged: dict[str, TestResult] = {}
    called: set[str] = set()
    started: list[str] = []
    items, corrupt = _stream(main["lines"], ("test", "collect", "end", "alarm"))
    ends = [i for i in items if i["k"] == "end"]
    problems += [f"tripwire in the pytest run: {i['what']}" for i in items if i["k"] == "alarm"]
    for item in items:
        if item["k"] in ("end", "alarm"):
            continue
        nodeid, outcome = item["id"], item["outcome"]
        cap = _COLLECT_MESSAGE if item["k"] == "collect" or outcome == "error" else _MESSAGE
        result = TestResult(nodeid, outcome, item.get("msg", "")[:cap], float(item.get("s", 0.0)))
        if item["k"] == "test" and item.get("when") == "call":
            called.add(nodeid)
        if item["k"] == "test" and item.get("when") == "setup":
            started.append(nodeid)
        prev = merged.get(nodeid)
        if prev is None or SEVERITY[outcome] > SEVERITY[prev.outcome]:
            merged[nodeid] = result
    # A test passed only if its call ran and passed: setup alone (then an interrupt) is not a pass.
    merged = {n: r for n, r in merged.items() if r.outcome != "passed" or n in called}
    status = main["status"]
    exit_code = None if timed_out or status is None or status >= 128 else status
    if timed_out:
        notes.append(f"[labkit] killed after the wall limit of {limits.wall_seconds:g}s")
    elif exit_code is None:
        notes.append(f"[labkit] killed by signal {_signal_name(status - 128) if status else '?'}")
    if len(ends) > 1:
        problems.append(f"the report stream has {len(ends)} session ends: lines were forged")
    end = ends[-1] if ends and not corrupt else None
    if end is not None and exit_code is not None and end.get("exit") != exit_code:
        problems.append(f"pytest ended with status {end.get('exit')} but the process exited {exit_code}")
    if end is not None and end.get("swapped"):
        problems.append(f"pytest's own functions were replaced during the run: {end['swapped']}")
    if end is not None and end.get("added"):
        problems.append(f"pytest plugins were registered during the run: {end['added']}")
    for run in reply["runs"]:
        for flag in run["flags"]:
            if flag == "report flood":
                problems.append("the report channel was flooded (over 4 MiB): the run was killed")
            else:
                notes.append(f"[labkit] {run['mode']} run: {flag} (limit enforced)")
    stderr = main["stderr"]
    why = _why_no_report(corrupt, stderr, status, exit_code, started, called)
    checks, unchecked, check_status, note = _checks(runs.get("check"), problems)
    after = main.get("protected_after")
    if after is None and not timed_out and "report flood" not in main["flags"]:
        problems.append("the protected tests could not be read back after the run")
    if main["stderr_bytes"] > len(stderr.encode()):
        notes.append(f"[labkit] stderr: {main['stderr_bytes']} bytes written, last {len(stderr)} kept")
    tail = (stderr + ("\n" if notes else "") + "\n".join(notes))[-_TAIL:]
    return SandboxRun(
        results=tuple(merged.values()),
        exit_code=exit_code,
        wall_seconds=float(reply.get("wall", 0.0)),
        timed_out=timed_out,
        report_found=end is not None,
        stderr_tail=tail,
        protected_after={rel: after.get(rel) for rel in protected} if after is not None else {},
        isolation=describe(cgroup, limits) + note,
        checks=checks,
        integrity=tuple(problems),
        report_problem=why,
        cross_checked="check" in runs,
        unchecked=unchecked,
        check_status=check_status,
    )


def _why_no_report(
    corrupt: str,
    stderr: str,
    status: int | None,
    exit_code: int | None,
    started: list[str],
    called: set[str],
) -> str:
    """Why pytest's report is incomplete, in the run's own terms (used only when it is)."""
    running = next((n for n in reversed(started) if n not in called), "")
    during = f" while running {running}" if running else ""
    if corrupt:
        return corrupt
    if _CLOSED in stderr:
        return "the code under test closed the report channel" + during
    if status is not None and status >= 128:
        return f"the run died of signal {_signal_name(status - 128)}{during}"
    if exit_code == _RAISED:  # pytest itself raised, e.g. its saved output fds were closed under it
        last = stderr.strip().splitlines()[-1][:300] if stderr.strip() else "no message (stderr was closed)"
        return f"pytest itself failed{during}: {last}"
    return f"pytest's report is missing or incomplete (exit code {exit_code}){during}"


def _checks(run: dict[str, Any] | None, problems: list[str]) -> tuple[dict[str, TestResult], tuple[str, ...], str, str]:
    """The independent runner's outcomes, the tests it could not run, and why it is incomplete."""
    if run is None:
        return {}, (), "", ""
    items, corrupt = _stream(run["lines"], ("check", "checked", "alarm"))
    problems += [f"tripwire in the independent run: {i['what']}" for i in items if i["k"] == "alarm"]
    checks: dict[str, TestResult] = {}
    unchecked: list[str] = []
    for item in items:
        if item["k"] != "check":
            continue
        if item["outcome"] == "unsupported":
            unchecked.append(item["id"])
        else:
            checks[item["id"]] = TestResult(item["id"], item["outcome"], item.get("msg", "")[:_MESSAGE])
    finished = any(i["k"] == "checked" for i in items)
    status = ""
    if not finished:
        status = f"the independent runner did not finish (exit {run['status']}): {run['stderr'][-300:].strip()}"
    if corrupt:  # written by the code under test: none of its outcomes is trusted
        checks, status = {}, f"{status}; its {corrupt[4:]}".lstrip("; ")
    note = f"; {len(checks)} required tests cross-checked by an independent runner"
    if unchecked:
        note += f", {len(unchecked)} not cross-checked (need pytest fixtures or marks)"
    return checks, tuple(unchecked), status, note
