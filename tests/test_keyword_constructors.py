"""Constructors with more than five parameters take keyword arguments (issue 26).

`Round(3, "r", 0.2, True, ...)` cannot be read without the class open beside it; `Round(round=3, ...)`
can. Every dataclass in labkit whose `__init__` has more than five parameters is `kw_only`, so a
positional call is a TypeError at once (and a mypy error before that)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import labkit

MAX_POSITIONAL = 5


def _dataclasses() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(labkit.__path__, "labkit."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and obj.__module__ == info.name:
                found.append(obj)
    return found


def test_every_constructor_with_more_than_five_parameters_takes_keywords_only() -> None:
    classes = _dataclasses()
    assert len(classes) > 100  # the walk really reached the package
    positional = []
    for cls in classes:
        params = inspect.signature(cls).parameters.values()
        if len(params) > MAX_POSITIONAL:
            by_position = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
            if by_position:
                positional.append(f"{cls.__module__}.{cls.__qualname__}: {', '.join(by_position)}")
    assert not positional, "positional parameters on a constructor with > 5 parameters:\n" + "\n".join(positional)


def test_a_positional_call_is_refused() -> None:
    from labkit.loop.engine.trace import Round

    n = len(inspect.signature(Round).parameters)
    try:
        Round(*range(n))  # type: ignore[misc]
    except TypeError as e:
        assert "positional" in str(e)
    else:  # pragma: no cover - the point of the test
        raise AssertionError("Round accepted positional arguments")
