"""LLMBar's published judge verdicts: rebuilt from original files with digests checked, re-scored by
labkit's swap metrics to the authors' statistics.json exactly, and the seed's ">10%" claim counted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from labkit.core.errors import DigestMismatch, ReferenceDataMissing
from labkit.experiments.judging import bias
from labkit.experiments.published import __main__ as published_cli
from labkit.experiments.published import llmbar as L
from labkit.experiments.published import llmbar_build as build

FIXTURE = Path(__file__).parent / "fixtures" / "llmbar"
GPTOUT = "Dataset/LLMBar/Adversarial/GPTOut"
FIXTURE_PATHS = ["LICENSE", f"{GPTOUT}/dataset.json"] + [
    f"{GPTOUT}/evaluators/{j}/Vanilla/{f}.json" for j in ("GPT-4", "LLaMA2") for f in ("result", "statistics")
]
# folders whose statistics.json labkit cannot reproduce, with the reason: none (every one matches)
UNMATCHED: dict[tuple[str, str, str], str] = {}


@pytest.fixture(scope="module")
def scores() -> tuple[L.Scores, ...]:
    return L.score_all()


def _digests(paths: list[str]) -> dict[str, str]:
    recorded = build.read_digests(build.OUT / build.DIGESTS)
    return {p: recorded[p] for p in paths}


# --- the tables come from the original files, digests checked ----------------------------------


def test_rebuild_from_original_files_gives_the_committed_rows() -> None:
    src = build.read_source(FIXTURE, FIXTURE_PATHS, _digests(FIXTURE_PATHS))
    t = L.load()
    assert src.instances == t.instances.filter(pl.col("set") == "GPTOut").to_dicts()
    assert len(src.instances) == 47
    ours = build.verdict_frame(src.verdicts)
    committed = t.verdicts.filter(
        (pl.col("set") == "GPTOut") & (pl.col("strategy") == "Vanilla") & pl.col("judge").is_in(["GPT-4", "LLaMA2"])
    )
    assert ours.sort("judge", "id").equals(committed.sort("judge", "id"))
    # LLaMA2 once gave no verdict
    assert ours["order1"].null_count() + ours["order2"].null_count() == 1
    assert (
        src.published
        == t.published.filter(
            (pl.col("set") == "GPTOut") & (pl.col("strategy") == "Vanilla") & pl.col("judge").is_in(["GPT-4", "LLaMA2"])
        )
        .sort("judge")
        .to_dicts()
    )


def test_build_command_checks_digests_and_writes_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / build.DIGESTS).write_text("".join(f"{d}  {p}\n" for p, d in _digests(FIXTURE_PATHS).items()))
    assert published_cli.main(["build-llmbar", "--repo", str(FIXTURE), "--out", str(tmp_path)]) == 0
    assert "6 original files, digests checked" in capsys.readouterr().out
    rebuilt = L.load(tmp_path)
    assert rebuilt.verdicts.height == 2 * 47 and rebuilt.published.height == 2


def test_a_changed_original_file_is_refused(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE, tmp_path / "repo")
    f = tmp_path / "repo" / GPTOUT / "evaluators/GPT-4/Vanilla/result.json"
    f.write_text(f.read_text().replace('"winner": "1"', '"winner": "2"', 1))
    with pytest.raises(DigestMismatch, match="GPT-4/Vanilla/result.json: sha256"):
        build.read_source(tmp_path / "repo", FIXTURE_PATHS, _digests(FIXTURE_PATHS))


def test_a_missing_original_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ReferenceDataMissing, match="Natural/dataset.json is missing"):
        build.read_source(tmp_path, ["Dataset/LLMBar/Natural/dataset.json"], None)


def test_committed_tables_cover_every_comparison_folder_and_no_rating_one() -> None:
    t = L.load()
    paths = list(build.read_digests(build.OUT / build.DIGESTS))
    folders = {tuple(p.split("/")[-3:-1]) for p in paths if p.endswith("statistics.json")}
    assert len(paths) == 1 + 5 + 2 * 290 and t.published.height == 290
    assert {s for _, s in folders} == set(L.STRATEGIES) and {j for j, _ in folders} == set(L.JUDGES)
    assert t.instances.group_by("set").len().sort("set").to_dicts() == [
        {"set": s, "len": n}
        for s, n in sorted({"Natural": 100, "Neighbor": 134, "GPTInst": 92, "GPTOut": 47, "Manual": 46}.items())
    ]
    assert t.verdicts.height == t.verdicts.select("judge", "strategy", "set", "id").unique().height == 24302


# --- labkit's swap metrics reproduce the authors' statistics.json exactly ----------------------


def test_every_folder_equals_the_authors_statistics_exactly(scores: tuple[L.Scores, ...]) -> None:
    published = {(r["judge"], r["strategy"], r["set"]): r for r in L.load().published.iter_rows(named=True)}
    assert {(s.judge, s.strategy, s.set) for s in scores} == set(published)
    mismatched = {}
    for s in scores:
        r = published[(s.judge, s.strategy, s.set)]
        ours = {  # evaluate.py writes "k / n = {k / n * 100}%" and "{(kF + kT) / 2 / n * 100}%"
            "correct_False": f"{round(s.accuracy_order1.estimate * s.n)} / {s.n} = {L.authors_percent(s.accuracy_order1.estimate)}",
            "correct_True": f"{round(s.accuracy_order2.estimate * s.n)} / {s.n} = {L.authors_percent(s.accuracy_order2.estimate)}",
            "correct_average": L.authors_percent(s.accuracy_swap_avg.estimate),
            "equal": f"{round(s.consistency.estimate * s.n)} / {s.n} = {L.authors_percent(s.consistency.estimate)}",
        }  # fmt: skip
        if any(ours[k] != r[k] for k in ours):
            mismatched[(s.judge, s.strategy, s.set)] = {k: (ours[k], r[k]) for k in ours if ours[k] != r[k]}
    assert set(mismatched) == set(UNMATCHED), mismatched


def test_counting_missing_verdicts_wrong_is_what_makes_them_match() -> None:
    # LLaMA2/Vanilla on GPTOut has one reply with no verdict: labkit's default rule leaves the pair out
    t = L.swap_table(L.load(), "LLaMA2", "Vanilla", "GPTOut")
    left_out = bias.position(t, resamples=0)
    counted = bias.position(t, resamples=0, unparseable="wrong")
    assert (left_out.n_unparseable, left_out.n_scored, counted.n_scored) == (1, 46, 47)
    assert L.authors_percent(counted.llmbar.estimate) == "56.38297872340425%"
    assert L.authors_percent(left_out.llmbar.estimate) != "56.38297872340425%"


# --- the seed's claim on real judges ---------------------------------------------------------------


def _recount(t: L.Tables) -> tuple[int, int, int]:
    """The claim counted directly from the verdict rows (not through labkit's metrics)."""
    rows = t.verdicts.join(t.instances.select("set", "id", "label"), on=["set", "id"])
    order = shift = folders = 0
    for _, f in rows.group_by("judge", "strategy", "set"):
        n = f.height
        ok1 = (f["order1"] == f["label"]).fill_null(False)
        ok2 = (f["order2"] == f["label"]).fill_null(False)
        # the better output shown first / second
        first = ((f["label"] == 1) & ok1) | ((f["label"] == 2) & ok2)
        second = ((f["label"] == 1) & ok2) | ((f["label"] == 2) & ok1)
        folders += 1
        order += abs(int(ok1.sum()) - int(ok2.sum())) * 100 > 10 * n
        shift += abs(int(first.sum()) - int(second.sum())) * 100 > 10 * n
    return folders, order, shift


def test_swapping_moves_accuracy_by_more_than_10_points_for_these_folders(
    scores: tuple[L.Scores, ...],
) -> None:
    c = L.claim_frame(scores)
    assert (
        c.height,
        int(c["order_gap_holds"].sum()),
        int(c["gold_shift_holds"].sum()),
    ) == _recount(L.load())
    # accuracy in the authors' order vs swapped: the claim holds in 25 of 290 folders
    assert int(c["order_gap_holds"].sum()) == 25
    # better output shown first vs second (what position bias moves): in 202 of 290
    assert int(c["gold_shift_holds"].sum()) == 202
    by_judge = {
        r["judge"]: (r["n"], r["order"], r["shift"])
        for r in c.group_by("judge")
        .agg(
            n=pl.len(),
            order=pl.col("order_gap_holds").sum(),
            shift=pl.col("gold_shift_holds").sum(),
        )
        .iter_rows(named=True)
    }
    assert by_judge == {
        "GPT-4": (50, 0, 3),
        "ChatGPT": (50, 2, 48),
        "ChatGPT-0301": (50, 7, 47),
        "PaLM2": (40, 4, 19),
        "LLaMA2": (50, 1, 35),
        "Falcon": (50, 11, 50),
    }


# --- the command -------------------------------------------------------------------------------------


def test_llmbar_json_prints_every_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert published_cli.main(["llmbar", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == L.SOURCE_LABEL and len(out["rows"]) == 290
    row = next(r for r in out["rows"] if (r["judge"], r["strategy"], r["set"]) == ("GPT-4", "Vanilla", "Natural"))
    assert row == {
        "judge": "GPT-4",
        "strategy": "Vanilla",
        "set": "Natural",
        "n": 100,
        "accuracy_order1": 0.95,
        "accuracy_order2": 0.96,
        "consistency": 0.95,
        "accuracy_swap_avg": 0.955,
    }


def test_llmbar_table_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert published_cli.main(["llmbar", "--strategy", "Vanilla"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(L.SOURCE_LABEL)
    assert "Falcon       Vanilla           Natural   100    71.0%    77.0%      52.0%    74.0%" in out
    assert "in 2 of 30 judge/strategy/set folders" in out
