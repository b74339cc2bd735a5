"""Public names of a package, imported from their modules on first use (PEP 562).

A package's `__init__` names where each public name lives; `import labkit.models` then
costs nothing, and `labkit.models.complete` imports the gateway when it is first touched.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType
from typing import Any


def attach(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`, whose public `names` live in the given modules."""

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(import_module(names[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__


def defer_import(name: str, functions: Sequence[str]) -> bool:
    """Stand in for module `name` until it is really used; True if the stand-in was installed.

    For a third-party module that another library imports eagerly but rarely calls: the
    stand-in's `functions` import the real module on their first call (and pass the call on),
    any other attribute imports it on first access; from then on `sys.modules[name]` is the
    real module. Nothing changes but when the import's cost is paid. No-op if the module is
    already imported or not installed.
    """
    if name in sys.modules or find_spec(name) is None:
        return False
    shim = ModuleType(name, f"stand-in for {name}: imported on first use (labkit.core.lazy)")

    def real() -> ModuleType:
        with _defer_lock:
            if sys.modules.get(name) is shim:
                del sys.modules[name]
            return import_module(name)

    def proxy(function: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(real(), function)(*args, **kwargs)

        call.__name__ = call.__qualname__ = function
        return call

    for function in functions:
        setattr(shim, function, proxy(function))

    def attribute(attr: str) -> Any:
        if attr.startswith("__"):  # the import system's own probes (__path__, ...): not a use
            raise AttributeError(attr)
        return getattr(real(), attr)

    shim.__getattr__ = attribute  # type: ignore[method-assign]
    sys.modules[name] = shim
    return True


_defer_lock = threading.RLock()
