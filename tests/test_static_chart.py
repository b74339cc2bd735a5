"""A JupyterLab twin's charts as offline SVG, each spec rendered by vl-convert once: kept for the
session and in <build>/chart-svg by the digest of the spec and vl-convert's version."""

from __future__ import annotations

import os

import altair as alt
import polars as pl
import pytest
import vl_convert as vlc

from labkit.views import jupyter
from labkit.views.pages import chart_svg


def _chart(title: str) -> alt.Chart:
    data = pl.DataFrame({"x": [1, 2, 3], "y": [2.0, 1.0, 3.0]})
    return alt.Chart(data).mark_line().encode(x="x:Q", y="y:Q").properties(title=title)


def _renders(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Count vl-convert's conversions from here on (each still made for real)."""
    calls: list[object] = []
    real = vlc.vegalite_to_svg

    def counted(spec: dict[str, object]) -> str:  # static_chart passes the spec alone
        calls.append(spec)
        return str(real(spec))

    monkeypatch.setattr(vlc, "vegalite_to_svg", counted)
    return calls


def test_a_spec_is_rendered_once_then_read_back(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LABKIT_BUILD", str(tmp_path))
    monkeypatch.setattr(jupyter, "_SESSION", {})
    plain = chart_svg(_chart("cached chart"))  # vl-convert called directly
    calls = _renders(monkeypatch)
    first = jupyter.static_chart(_chart("cached chart")).svg
    assert len(calls) == 1 and first == plain and "cached chart" in first
    stored = list((tmp_path / "chart-svg").glob("*.svg"))
    assert [p.read_text() for p in stored] == [first]
    assert jupyter.static_chart(_chart("cached chart")).svg == first and len(calls) == 1  # this session's copy
    monkeypatch.setattr(jupyter, "_SESSION", {})  # a new kernel: read from the build folder
    assert jupyter.static_chart(_chart("cached chart"))._repr_svg_() == first and len(calls) == 1
    other = jupyter.static_chart(_chart("another title")).svg  # another spec is another render
    assert len(calls) == 2 and "another title" in other and "cached chart" not in other


def test_another_vl_convert_version_or_a_damaged_file_renders_again(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LABKIT_BUILD", str(tmp_path))
    monkeypatch.setattr(jupyter, "_SESSION", {})
    calls = _renders(monkeypatch)
    svg = jupyter.static_chart(_chart("versioned")).svg
    (stored,) = (tmp_path / "chart-svg").glob("*.svg")
    stored.write_text(svg[: len(svg) // 2])  # cut short
    monkeypatch.setattr(jupyter, "_SESSION", {})
    assert jupyter.static_chart(_chart("versioned")).svg == svg and len(calls) == 2
    assert stored.read_text() == svg  # rewritten whole
    monkeypatch.setattr(jupyter, "_SESSION", {})
    monkeypatch.setattr(vlc, "__version__", "0.0.0-other")
    jupyter.static_chart(_chart("versioned"))
    assert len(calls) == 3 and len(list((tmp_path / "chart-svg").glob("*.svg"))) == 2


def test_the_build_folder_keeps_the_newest_svgs_only(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "chart-svg"
    folder.mkdir()
    for i in range(jupyter._KEEP + 1):
        (folder / f"{i:04d}.svg").write_text("<svg></svg>")
        os.utime(folder / f"{i:04d}.svg", (i, i))
    jupyter._prune(folder)
    kept = sorted(p.name for p in folder.glob("*.svg"))
    assert (
        len(kept) == jupyter._KEEP // 2
        and kept[-1] == f"{jupyter._KEEP:04d}.svg"
        and kept[0] == f"{jupyter._KEEP // 2 + 1:04d}.svg"
    )
