"""The AlpacaEval 2 leaderboard, read from the installed alpaca-eval package and analysed by labkit.

The package is a requirement (./run installs it): if it is missing these tests fail with the
install command, they do not skip.
"""

import csv
import importlib.metadata

import numpy as np
import pytest

from labkit.core.errors import LeaderboardFormatError, ReferenceDataMissing
from labkit.experiments.judging import leaderboard as L


@pytest.fixture(scope="module")
def board():
    return L.load()


@pytest.fixture(scope="module")
def analysis(board):
    return L.analyse(board)


def test_provenance_is_read_from_the_package(board):
    p = board.provenance
    assert (p.package, p.version) == ("alpaca-eval", importlib.metadata.version("alpaca-eval"))
    assert p.judge_model == "gpt-4-1106-preview" and p.judge == "GPT-4 Turbo"  # from the annotator's configs.yaml
    assert p.baseline == "gpt4_1106_preview" and p.n_instructions == 805  # the row that drew against itself
    assert len(board.entries) == 223


def test_the_chapter_figures_are_computed_from_the_file(analysis):
    # length explains the raw ranking more than the length-controlled one, but both clearly
    assert round(analysis.raw.r.estimate, 2) == 0.66
    assert round(analysis.lc.r.estimate, 2) == 0.51
    assert analysis.raw.r.low < analysis.raw.r.estimate < analysis.raw.r.high
    assert analysis.lc.r.low > 0.3  # length control weakens the verbosity effect, does not remove it
    # the null model: one constant reply; third on raw win rate, first once length is controlled
    null = analysis.null_model
    assert (null.raw_rank, null.lc_rank) == (3, 1)
    assert round(null.raw, 3) == 0.769 and round(null.lc, 3) == 0.865
    assert analysis.n_models == 223


def test_rank_moves_and_lines(analysis, board):
    up, down = analysis.movers(3)
    assert all(m.up > 0 for m in up) and all(m.up < 0 for m in down)
    assert up[0].up >= up[-1].up and down[0].up <= down[-1].up
    assert sum(m.up for m in analysis.moves) == 0  # no ties in either column: places are only exchanged
    # the least-squares line goes through the means
    length, raw = board.column("avg_length"), board.column("raw")
    assert analysis.raw.at(length.mean()) == pytest.approx(raw.mean())
    assert analysis.raw.slope_per_1000 > analysis.lc.slope_per_1000 > 0


def _rewrite(tmp_path, change):
    src = L.leaderboard_path()
    rows = list(csv.reader(src.open()))
    change(rows)
    out = tmp_path / "board.csv"
    with out.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return out


def test_the_figures_change_when_the_data_does(tmp_path):
    # shuffle average lengths: the correlation collapses — nothing is pinned
    def shuffle(rows):
        col = rows[0].index("avg_length")
        lengths = [r[col] for r in rows[1:]]
        np.random.default_rng(0).shuffle(lengths)
        for r, v in zip(rows[1:], lengths, strict=True):
            r[col] = v

    a = L.analyse(L.load(_rewrite(tmp_path, shuffle)))
    assert abs(a.raw.r.estimate) < 0.3 and abs(a.lc.r.estimate) < 0.3

    # a null model scored 60% LC drops in the LC ranking, behind every model above 60%
    def demote(rows):
        col = rows[0].index("length_controlled_winrate")
        (null,) = [r for r in rows if r[0] == "NullModel"]
        null[col] = "60.0"

    board = L.load(_rewrite(tmp_path, demote))
    above = sum(e.lc > 0.6 for e in board.entries)
    assert L.analyse(board).null_model.lc_rank == above + 1 > 1


def test_bad_files_say_what_is_wrong(tmp_path):
    def drop(rows):
        col = rows[0].index("avg_length")
        for r in rows:
            del r[col]

    with pytest.raises(LeaderboardFormatError, match="avg_length"):
        L.load(_rewrite(tmp_path, drop))

    def garble(rows):
        rows[5][rows[0].index("win_rate")] = "n/a"

    with pytest.raises(LeaderboardFormatError, match="line 6"):
        L.load(_rewrite(tmp_path, garble))

    def no_null(rows):
        rows[:] = [r for r in rows if r[0] != "NullModel"]

    with pytest.raises(LeaderboardFormatError, match="NullModel"):
        L.analyse(L.load(_rewrite(tmp_path, no_null)))


def test_a_missing_package_names_the_install_command(monkeypatch):
    def gone(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", gone)
    with pytest.raises(ReferenceDataMissing, match="pip install --no-deps alpaca-eval==0.6.6"):
        L.load()


def test_ranks_and_correlation():
    assert L.ranks(np.array([0.2, 0.9, 0.5, 0.9])).tolist() == [4, 1, 3, 1]
    x = np.arange(50, dtype=float)
    r = L.correlation(x, 2 * x + 1, resamples=200)
    assert r.estimate == pytest.approx(1.0) and r.low == pytest.approx(1.0)
    y = np.random.default_rng(1).normal(size=50)
    assert L.correlation(x, y).estimate == pytest.approx(np.corrcoef(x, y)[0, 1])


def test_chart_frame_marks_the_null_model_the_baseline_and_the_movers(board, analysis):
    from labkit.views import charts_leaderboard as cl

    frame = cl.leaderboard_frame(board, analysis, k=4)
    roles = dict(zip(frame["model"].to_list(), frame["role"].to_list(), strict=True))
    assert roles["NullModel"] == cl.ROLES[0] and roles[board.provenance.baseline] == cl.ROLES[1]
    up, down = analysis.movers(4)
    assert {m.name for m in up} <= {n for n, r in roles.items() if r == cl.ROLES[2]} | {"NullModel"}
    assert sum(r == cl.ROLES[3] for r in roles.values()) == len(down)
    raw, lc = cl.length_charts(frame, analysis)
    assert "0.658" in str(raw.to_dict()) and "0.506" in str(lc.to_dict())  # the correlation is in the subtitle
    assert cl.rank_moves_chart(frame).to_dict()


def test_the_rank_movers_names_do_not_overlap_where_ranks_are_close(board, analysis):
    # read where the rendered SVG puts each model name on the right: consecutive names at least
    # a line apart (two movers four ranks apart used to print on top of each other)
    import re

    from labkit.views import charts_leaderboard as cl
    from labkit.views.jupyter import static_chart

    svg = static_chart(cl.rank_moves_chart(cl.leaderboard_frame(board, analysis)))._repr_svg_()
    texts = re.findall(
        r'<text[^>]*"text mark"[^>]*translate\([\d.]+,([\d.]+)\)[^>]*font-size="(\d+)px"[^>]*>([^<]*)<', svg
    )
    assert len(texts) == 12 and "internlm2-chat-7b-ExPO" in {name for _, _, name in texts}
    ys = sorted(float(y) for y, _, _ in texts)
    size = max(int(s) for _, s, _ in texts)
    assert min(b - a for a, b in zip(ys, ys[1:], strict=False)) >= size + 1, ys


def test_spread_keeps_labels_apart_in_order_inside_the_plot_and_near_their_points():
    from labkit.views.charts_leaderboard import spread

    assert spread([50.0, 150.0], 12, 0, 300) == [50.0, 150.0]  # nothing to move
    assert spread([100.0, 104.0], 12, 0, 300) == [96.0, 108.0]  # centred on the pair
    assert spread([1.0, 0.0, 2.0], 12, 0, 300) == [12.0, 0.0, 24.0]  # kept in order, not above the top
    assert spread([299.0, 300.0], 12, 0, 300) == [288.0, 300.0]  # nor below the bottom
