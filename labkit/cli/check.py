"""`labkit check`: what a case author needs to know before running the loop on a case.

case.json is valid; every patch applies; each transcript reply is a usable record whose diff
applies and whose cited tests exist; the start candidate's F2P/P2P table (a test that cannot
even be collected — an import or syntax error — fails the check, its error shown once); and,
on request, the hidden tests and each patch decided as the loop would.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from labkit.cli.console import err, fail, out, usage, validator_for
from labkit.cli.show import verdict_table
from labkit.core.errors import LabkitError

if TYPE_CHECKING:
    from labkit.core.types import Candidate, Verdict
    from labkit.grading.cases import Case

__all__ = ["case_folder", "check", "collection_errors", "transcript_problems"]

EXIT_CODES = (
    "Exit codes: 0 the check passed; 1 it failed (malformed case.json, a patch or transcript "
    "diff that does not apply, a protective test failing or a test that cannot be collected on "
    "the start); 2 a usage error (no such folder, a folder without case.json, a file given)."
)


def case_folder(path: Path) -> Path:
    """`path` if it is a case folder, else a usage error (exit 2) saying what to give."""
    if path.is_file():
        hint = f": give its folder, labkit check {path.parent}" if path.name == "case.json" else ""
        raise usage(f"{path} is a file, not a case folder{hint}")
    if not path.is_dir():
        raise usage(f"{path} does not exist (a case folder with case.json was expected)")
    if not (path / "case.json").is_file():
        raise usage(f"{path} has no case.json: not a case folder (labkit new-case writes one)")
    return path


def check(
    folder: Annotated[Path, typer.Argument(help="a case folder (with case.json)")],
    hidden: Annotated[bool, typer.Option(help="also run the hidden tests")] = False,
    with_patches: Annotated[
        bool,
        typer.Option("--patches", help="also validate each patch (visible and hidden tests) and decide it"),
    ] = False,
    wall: Annotated[float, typer.Option(help="wall-clock limit of one test run, seconds", min=1)] = 60.0,
    memory: Annotated[int, typer.Option(help="memory limit of one test run, MB", min=64)] = 1024,
    branch: Annotated[str, typer.Option(help="transcript branch to check (the one `labkit run` replays)")] = "main",
    all_branches: Annotated[bool, typer.Option("--all-branches", help="check every transcript branch")] = False,
) -> None:
    from labkit.core import patch as patches
    from labkit.grading.cases import load_case

    case = load_case(case_folder(folder))
    out.print(
        f"case {case.name!r}: {len(case.start.files)} code file(s), "
        f"{len(case.suite.tests)} protected file(s), {len(case.patches)} patch(es)"
        + (f", import roots {list(case.suite.import_roots)}" if case.suite.import_roots else "")
    )
    for name, p in case.patches.items():
        if case.patch_specs[name].base not in ("original", "start"):
            continue  # applies on top of another patch
        try:
            patches.apply(case.start, p)
        except LabkitError as exc:
            raise fail(f"patch {name!r} does not apply to the start: {exc}") from None
    if case.spec is not None:
        for ex in case.spec.excluded:
            out.print(f"  not required: {ex.id} — {ex.reason}")
    validator = validator_for(wall, memory)
    verdict = validator.run(case.start, case.suite)
    out.print(verdict_table(verdict, case.suite, f"start candidate ({case.start.label})"))
    if verdict.evidence.isolation:
        out.print(f"how it ran: {verdict.evidence.isolation}")
    problems = transcript_problems(case, verdict, None if all_branches else branch)
    if hidden and case.hidden is None:
        out.print("hidden tests: this case has none (case.json has no 'hidden' entry)")
    elif hidden and case.hidden is not None:
        hv = validator.run(case.start, case.hidden)
        out.print(verdict_table(hv, case.hidden, "hidden tests"))
    broken = collection_errors(verdict)
    for text, ids in broken.items():
        err.print(f"[red]cannot collect[/] {', '.join(ids)}:\n{text}", highlight=False)
    if verdict.quarantined:
        raise fail("start candidate quarantined: " + "; ".join(verdict.evidence.alarms))
    required = set(case.suite.required)
    uncollected = [i for ids in broken.values() for i in ids if i in required]
    if uncollected:
        raise fail(f"required tests cannot be collected on the start (error above): {', '.join(uncollected)}")
    if verdict.pass_to_fail:
        raise fail(f"protective tests fail on the start candidate: {', '.join(verdict.pass_to_fail)}")
    if verdict.fail_to_pass:
        out.print(f"note: already passing on the start: {', '.join(verdict.fail_to_pass)}")
    if with_patches:
        from labkit.cli.show import patches_table

        out.print(patches_table(case, validator, verdict))
    if problems:
        raise fail(f"transcript: {len(problems)} problem(s): " + "; ".join(problems))


check.__doc__ = f"""Validate case.json, dry-apply patches and transcript diffs, run the start candidate,
print the F2P/P2P table.

{EXIT_CODES}"""


_WORKSPACE = re.compile(r"/tmp/ws-[0-9a-f]+/")
_ROUND = re.compile(r"round-\d+(/obs-\d+)?")  # the keys the loop replays as reflection records


def collection_errors(verdict: Verdict) -> dict[str, list[str]]:
    """Collection errors (import, syntax) kept by the validator: each distinct traceback once,
    shortened to the case's own frames and pytest's `E` lines, with the tests it stopped."""
    grouped: dict[str, list[str]] = {}
    for r in verdict.evidence.results:
        if r.outcome != "error" or "\n" not in r.message:
            continue
        grouped.setdefault(_short(r.message), []).append(r.nodeid)
    return grouped


def _short(message: str) -> str:
    lines = _WORKSPACE.sub("", message).splitlines()
    kept, skip_frame = [], False
    for line in lines[1:]:  # the first line names the module; the caller names the tests
        if line.startswith(("Hint:", "Traceback:")):
            continue
        if not line.startswith(" "):  # a frame header: keep the case's, drop the interpreter's
            skip_frame = line.startswith(("/", "<frozen")) or "site-packages" in line
        if not skip_frame:
            kept.append(line)
    return "\n".join(kept).strip() or lines[0]


def transcript_problems(case: Case, start: Verdict, branch: str | None = "main") -> list[str]:
    """Each round reply of `branch` (None: every branch) read as the loop would, its diff
    dry-applied (to the start, else on top of the branch's previous diff) and the tests it cites
    looked up; one line each. Other keys (a branch's `distill` reply) are not reflection records:
    they are checked when they are used."""
    from labkit.core import patch as patches
    from labkit.core.types import Patch
    from labkit.loop.engine.reflection import check_record, parse_json_reply
    from labkit.models.replay import load

    path = case.root / "transcript.jsonl"
    if not path.is_file():
        return []
    keys = load(path)  # a malformed line is a TranscriptError here (exit 1, names the line)
    branches = sorted({k.split("/", 1)[0] for k in keys if "/" in k})
    out.print(f"transcript: {len(keys)} key(s), branches {branches}")
    known = set(case.suite.required) | {r.nodeid for r in start.evidence.results} | {start.evidence.digest}
    problems: list[str] = []
    last: dict[str, Candidate] = {}
    chosen = [k for k in keys if branch is None or k.split("/", 1)[0] == branch]
    if branch is not None and not chosen:
        return [f"no reply for branch {branch!r} (branches: {', '.join(branches)})"]
    for key in sorted(chosen, key=_round_order):
        if not _ROUND.fullmatch(key.partition("/")[2]):
            out.print(f"  {key}: not a round reply, not checked here")
            continue
        reply = keys[key][0].reply
        try:
            data = parse_json_reply(reply)
            if "experiment" in data:
                out.print(f"  {key}: asks for an experiment")
                continue
            record = check_record(data, raw=reply)
        except LabkitError as exc:
            problems.append(f"{key}: {exc}")
            continue
        cited = [r.strip() for r in record.evidence_ref.split(",")]
        cited += list(record.expected.acceptance) + list(record.expected.protective)
        unknown = sorted({c for c in cited if c not in known})
        if unknown:
            problems.append(f"{key}: cites test id(s) the case does not have: {', '.join(unknown)}")
        diff = data.get("diff")
        if not isinstance(diff, str) or not diff.strip():
            problems.append(f"{key}: no 'diff'")
            continue
        patch = Patch(diff, description=record.action)
        where, applied, why = "the start", None, ""
        for base_name, base in (
            ("the start", case.start),
            ("the branch's previous diff", last.get(key.split("/", 1)[0])),
        ):
            if base is None:
                continue
            try:
                applied = patches.apply(base, patch)
                where = base_name
                break
            except LabkitError as exc:
                why = str(exc)
        if applied is None:
            problems.append(f"{key}: diff does not apply: {why}")
            continue
        last[key.split("/", 1)[0]] = applied
        s = patches.size(patch)
        out.print(
            f"  {key}: record ok; diff applies to {where} ({s.files}f/{s.hunks}h/{s.lines}l)"
            + ("" if unknown else f"; {len(set(cited))} cited test id(s) known")
        )
    return problems


def _round_order(key: str) -> tuple[str, int, str]:
    branch, _, rest = key.partition("/")
    m = re.match(r"round-(\d+)", rest)
    return branch, int(m.group(1)) if m else 0, rest
