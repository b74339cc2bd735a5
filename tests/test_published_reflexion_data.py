"""The Reflexion tables: rebuilt from a fixture of the original logs, digests checked, loaders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from labkit.core.errors import ReferenceDataMissing
from labkit.experiments.published import reflexion_logs as rx

FIXTURE = Path(__file__).parent / "fixtures" / "published" / "reflexion"


def _fixture_digests() -> dict[str, str]:
    rows = (line.split("  ", 1) for line in (FIXTURE / "SHA256SUMS").read_text().splitlines())
    return {path: digest for digest, path in rows}


def _committed(name: str) -> list[dict[str, object]]:
    return [json.loads(x) for x in (rx.tables_dir() / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_fixture_rebuilds_into_the_committed_rows(tmp_path: Path) -> None:
    tables = rx.build(FIXTURE, tmp_path, _fixture_digests())
    assert {n: len(r) for n, r in tables.items()} == {"problems": 6, "runs": 12, "self_tests": 3}
    for name, rows in tables.items():
        written = [json.loads(x) for x in (tmp_path / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert written == rows
        keys = {(r.get("run"), r["benchmark"], r["task_id"]) for r in rows}
        committed = [r for r in _committed(name) if (r.get("run"), r["benchmark"], r["task_id"]) in keys]
        assert committed == rows  # the committed tables hold exactly these rows for these ids
    runs = {(r["run"], r["task_id"]): r for r in tables["runs"]}
    # the Reflexion HumanEval log keeps no solution for an unsolved problem
    assert runs["reflexion-humaneval", "HumanEval/32"]["solution"] == ""
    assert runs["reflexion-humaneval", "HumanEval/32"]["is_solved"] is False
    assert runs["simple-mbpp", "mbpp_234_volume_cube"]["reflections"] == []


def test_the_recorded_digests_refuse_the_truncated_fixture(tmp_path: Path) -> None:
    # The default digests are the real originals' (SOURCE.md): a truncated log is not one of them.
    with pytest.raises(ReferenceDataMissing, match="sha256 .* refusing to build"):
        rx.build(FIXTURE, tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_changed_byte_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    log = repo / rx.ORIGINALS[1].path
    log.write_bytes(log.read_bytes().replace(b'"is_solved": true', b'"is_solved": false', 1))
    with pytest.raises(ReferenceDataMissing, match=rx.ORIGINALS[1].path.replace(".", r"\.")):
        rx.build(repo, tmp_path / "out", _fixture_digests())


def test_source_md_records_every_original_digest() -> None:
    source = (rx.tables_dir() / "SOURCE.md").read_text(encoding="utf-8")
    assert rx.COMMIT in source and rx.REPOSITORY in source and "MIT License" in source
    for o in rx.ORIGINALS:
        assert f"`{o.path}`" in source and f"`{o.sha256}`" in source


def test_loaders_read_the_tables() -> None:
    problems, runs, tests = rx.load_problems(), rx.load_runs(), rx.load_self_tests()
    assert problems.group_by("benchmark").len().sort("benchmark").rows() == [
        ("humaneval", 164),
        ("mbpp", 397),
    ]
    solved = runs.group_by("run").agg(pl.len(), pl.col("is_solved").sum()).sort("run").rows()
    assert solved == [
        ("reflexion-humaneval", 164, 150),
        ("reflexion-mbpp", 397, 306),
        ("simple-humaneval", 164, 141),
        ("simple-mbpp", 397, 318),
    ]
    assert tests.height == 164 and int(tests["is_solved"].sum()) == 96
    assert problems.filter(pl.col("benchmark") == "mbpp")["canonical_solution"].is_null().all()


def test_a_damaged_table_names_the_file_and_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "published" / "reflexion"
    folder.mkdir(parents=True)
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    with pytest.raises(ReferenceDataMissing, match="runs.jsonl is missing.*build-reflexion"):
        rx.load_runs()
    (folder / "runs.jsonl").write_text('{"run": "x", "task_id": \n')
    with pytest.raises(ReferenceDataMissing, match="runs.jsonl cannot be read.*build-reflexion"):
        rx.load_runs()


def test_candidate_source_follows_the_authors_assembly() -> None:
    problems = {r["task_id"]: r for r in rx.load_problems().to_dicts()}
    runs = {(r["run"], r["task_id"]): r for r in rx.load_runs().to_dicts()}
    he0 = problems["HumanEval/0"]
    body = runs["reflexion-humaneval", "HumanEval/0"]
    # a body: prompt + body; a logged prompt + body: as logged; an empty solution: the prompt alone
    assert rx.candidate_source(he0, body) == he0["prompt"] + body["solution"]
    full = runs["simple-humaneval", "HumanEval/0"]
    assert rx.candidate_source(he0, full) == full["solution"]
    assert rx.candidate_source(he0, runs["reflexion-humaneval", "HumanEval/32"] | {"solution": ""}) == he0["prompt"]
