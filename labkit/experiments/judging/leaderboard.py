"""Real judge data: the AlpacaEval 2 leaderboard that ships inside the `alpaca-eval` package.

The file `alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv`
lists every model's raw win rate and length-controlled (LC) win rate against a fixed baseline,
their standard errors and the model's average output length, judged by GPT-4 Turbo. It is read
as a file, found through the package's installed-file record: alpaca_eval's own modules are
never imported (they load API clients and download their GLM's data from the network).

`analyse` measures how much average length explains each ranking (correlation with a
bootstrap interval over models, and the least-squares line), how models move between the two
rankings, and where `NullModel` — one constant, judge-targeted reply for every instruction —
ranks under each.
"""

from __future__ import annotations

import csv
import importlib.metadata
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from labkit.core.errors import LeaderboardFormatError, ReferenceDataMissing
from labkit.core.stats import Interval, interval, resample_indices

__all__ = [
    "CSV",
    "INSTALL",
    "Leaderboard",
    "LeaderboardRow",
    "LengthAnalysis",
    "Line",
    "Move",
    "NULL_MODEL",
    "Provenance",
    "Standing",
    "analyse",
    "correlation",
    "leaderboard_path",
    "load",
    "ranks",
]

PACKAGE = "alpaca-eval"
CSV = "alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
JUDGE_CONFIG = "alpaca_eval/evaluators_configs/weighted_alpaca_eval_gpt4_turbo/configs.yaml"
INSTALL = "pip install --no-deps alpaca-eval==0.6.6"  # --no-deps: only its files are read
NULL_MODEL = "NullModel"
# OpenAI's API names and the names they are known by (the judge and the baseline are both GPT-4 Turbo)
KNOWN_AS = {"gpt-4-1106-preview": "GPT-4 Turbo", "gpt4_1106_preview": "GPT-4 Turbo"}
_COLUMNS = (
    "win_rate",
    "standard_error",
    "n_total",
    "n_draws",
    "mode",
    "avg_length",
    "length_controlled_winrate",
    "lc_standard_error",
)

Array = npt.NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """Where the figures come from, as data to show beside them."""

    package: str
    version: str
    file: str  # inside the package
    path: str  # on this machine
    annotator: str  # AlpacaEval's name for the judge configuration
    judge_model: str  # the model that judged, from that configuration
    baseline: str  # the row judged against itself (50%, every instruction a draw)
    n_instructions: int

    @property
    def judge(self) -> str:
        return KNOWN_AS.get(self.judge_model, self.judge_model)

    @property
    def baseline_known_as(self) -> str:
        return KNOWN_AS.get(self.baseline, self.baseline)


@dataclass(frozen=True, kw_only=True)
class LeaderboardRow:
    """One leaderboard row; win rates as fractions (the file has percentages)."""

    name: str
    raw: float
    raw_se: float
    lc: float
    lc_se: float | None  # the file leaves it empty for many rows
    avg_length: int  # characters
    mode: str  # AlpacaEval's label: verified, community, minimal, dev


@dataclass(frozen=True)
class Leaderboard:
    provenance: Provenance
    entries: tuple[LeaderboardRow, ...]

    def column(self, name: str) -> Array:
        return np.array([getattr(e, name) for e in self.entries], dtype=float)

    def entry(self, name: str) -> LeaderboardRow:
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(f"{name!r} is not on the leaderboard ({len(self.entries)} models)")


def _distribution() -> importlib.metadata.Distribution:
    try:
        return importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ReferenceDataMissing(
            f"the AlpacaEval 2 leaderboard ships in the {PACKAGE!r} package, which is not installed; "
            f"install it with `{INSTALL}` (or `./run install`)"
        ) from None


def _installed(dist: importlib.metadata.Distribution, file: str) -> Path:
    hits = [p for p in dist.files or () if str(p).replace("\\", "/") == file]
    path = Path(str(dist.locate_file(hits[0]))) if hits else None
    if path is None or not path.is_file():
        raise ReferenceDataMissing(
            f"{PACKAGE} {dist.version} is installed but {file} is not in it; reinstall with `{INSTALL}`"
        )
    return path


def leaderboard_path() -> Path:
    """The leaderboard CSV inside the installed package."""
    return _installed(_distribution(), CSV)


def load(path: Path | str | None = None) -> Leaderboard:
    """The leaderboard from the installed package (or from `path`, a file in the same format)."""
    dist = _distribution()
    file = Path(path) if path is not None else _installed(dist, CSV)
    judge = re.search(r'model_name:\s*"?([\w.\-]+)', _installed(dist, JUDGE_CONFIG).read_text())
    entries, n_total, baseline = [], {}, []
    with file.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in _COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise LeaderboardFormatError(f"{file}: no column {missing} (has {reader.fieldnames})")
        for lineno, row in enumerate(reader, start=2):
            name = row[reader.fieldnames[0]]  # type: ignore[index]  # the unnamed index column
            try:
                raw, lc = float(row["win_rate"]) / 100, float(row["length_controlled_winrate"]) / 100
                e = LeaderboardRow(
                    name=name,
                    raw=raw,
                    raw_se=float(row["standard_error"]) / 100,
                    lc=lc,
                    lc_se=float(row["lc_standard_error"]) / 100 if row["lc_standard_error"] else None,
                    avg_length=int(float(row["avg_length"])),
                    mode=row["mode"],
                )
                n_total[name], draws = int(float(row["n_total"])), int(float(row["n_draws"]))
            except ValueError as err:
                raise LeaderboardFormatError(f"{file}, line {lineno} ({name!r}): {err}") from None
            if not (0.0 <= raw <= 1.0 and 0.0 <= lc <= 1.0):
                raise LeaderboardFormatError(f"{file}, line {lineno} ({name!r}): a win rate outside 0–100%")
            entries.append(e)
            if draws == n_total[name] and raw == 0.5:
                baseline.append(name)
    if not entries:
        raise LeaderboardFormatError(f"{file}: no rows")
    if len(baseline) != 1:
        raise LeaderboardFormatError(f"{file}: expected one baseline row (50%, all draws), found {baseline}")
    prov = Provenance(
        package=PACKAGE,
        version=dist.version,
        file=CSV if path is None else str(path),
        path=str(file),
        annotator=JUDGE_CONFIG.split("/")[-2],
        judge_model=judge.group(1) if judge else "unknown",
        baseline=baseline[0],
        n_instructions=n_total[baseline[0]],
    )
    return Leaderboard(prov, tuple(entries))


# --- analysis ----------------------------------------------------------------------------------


def correlation(x: Array, y: Array, resamples: int = 2000, level: float = 0.95, seed: int | None = 0) -> Interval:
    """Pearson correlation with a percentile-bootstrap interval, resampling rows (models)."""
    idx = resample_indices(x.size, resamples, seed)
    xs, ys = x[idx], y[idx]
    xs = xs - xs.mean(axis=1, keepdims=True)
    ys = ys - ys.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (xs * ys).sum(axis=1) / np.sqrt((xs**2).sum(axis=1) * (ys**2).sum(axis=1))
    return interval(float(np.corrcoef(x, y)[0, 1]), boot, level)


def ranks(values: Array) -> npt.NDArray[np.int64]:
    """1 = highest; tied values share the better rank."""
    return np.array([int((values > v).sum()) + 1 for v in values], dtype=np.int64)


@dataclass(frozen=True)
class Line:
    """Win rate (fraction) against average length: correlation and least-squares line."""

    r: Interval
    slope_per_1000: float  # change in win rate per 1000 characters of average length
    intercept: float

    def at(self, length: float) -> float:
        return self.intercept + self.slope_per_1000 * length / 1000


@dataclass(frozen=True)
class Move:
    name: str
    raw_rank: int
    lc_rank: int

    @property
    def up(self) -> int:
        """Places gained under length control (negative: lost)."""
        return self.raw_rank - self.lc_rank


@dataclass(frozen=True, kw_only=True)
class Standing:
    """Where one model stands on both rankings."""

    name: str
    raw: float
    lc: float
    raw_rank: int
    lc_rank: int
    avg_length: int


@dataclass(frozen=True, kw_only=True)
class LengthAnalysis:
    provenance: Provenance
    n_models: int
    raw: Line
    lc: Line
    moves: tuple[Move, ...]  # every model, in leaderboard-file order
    null_model: Standing

    def movers(self, k: int = 5) -> tuple[tuple[Move, ...], tuple[Move, ...]]:
        """The k models gaining most places under length control, and the k losing most."""
        by = sorted(self.moves, key=lambda m: (-m.up, m.name))
        return tuple(by[:k]), tuple(sorted(by[-k:], key=lambda m: (m.up, m.name)))


def _line(x: Array, y: Array, resamples: int, level: float, seed: int | None) -> Line:
    slope, intercept = np.polyfit(x, y, 1)
    return Line(correlation(x, y, resamples, level, seed), float(slope) * 1000, float(intercept))


def analyse(lb: Leaderboard, resamples: int = 2000, level: float = 0.95, seed: int | None = 0) -> LengthAnalysis:
    """Length against both win rates, rank moves, and the null model's standing (see the module)."""
    length, raw, lc = lb.column("avg_length"), lb.column("raw"), lb.column("lc")
    if len(lb.entries) < 3:
        raise LeaderboardFormatError(f"{lb.provenance.path}: {len(lb.entries)} rows; a correlation needs 3 or more")
    r_raw, r_lc = ranks(raw), ranks(lc)
    moves = tuple(Move(e.name, int(a), int(b)) for e, a, b in zip(lb.entries, r_raw, r_lc, strict=True))
    try:
        i = next(k for k, e in enumerate(lb.entries) if e.name == NULL_MODEL)
    except StopIteration:
        raise LeaderboardFormatError(f"{lb.provenance.path}: no {NULL_MODEL!r} row") from None
    e = lb.entries[i]
    null = Standing(
        name=e.name, raw=e.raw, lc=e.lc, raw_rank=int(r_raw[i]), lc_rank=int(r_lc[i]), avg_length=e.avg_length
    )
    return LengthAnalysis(
        provenance=lb.provenance,
        n_models=len(lb.entries),
        raw=_line(length, raw, resamples, level, seed),
        lc=_line(length, lc, resamples, level, seed),
        moves=moves,
        null_model=null,
    )
