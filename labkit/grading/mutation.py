"""Inputs for differential testing: seed inputs read from a HumanEval `check`, then type-aware
mutation of them (EvalPlus's `TypedMutGen`, Liu et al. 2023, `evalplus/gen/type_mut.py`).

Seeds are the arguments of the `candidate(...)` calls in `check` that are literals (read with
`ast`, never run). Mutation follows EvalPlus's rules: an int moves by -1..+1 or becomes an
"ingredient" (a constant seen in the seeds), a float moves or scales, a string gets an
ingredient inserted, a slice dropped or mutated, a character repeated; a list or tuple loses,
gains, repeats or changes one element; a dict loses, gains or changes one entry; new values are
drawn per type. Differences from EvalPlus, each for reproducibility or to keep the set small:

- one argument is mutated at a time, so the arity never changes (EvalPlus mutates the argument
  list like any list and relies on the contract to reject a changed arity);
- the random source is `random.Random` seeded with a string (sha512 of it, so it does not
  depend on PYTHONHASHSEED), ingredients are kept in first-seen order in lists, never sets, and
  duplicates are found by `repr`, never `hash`: the same seeds give the same inputs everywhere;
- an input whose `repr` is longer than `MAX_REPR` characters or that `ast.literal_eval` cannot
  read back to an equal value is not kept (the table stores inputs as Python literals).

Nothing here runs the canonical solution: `labkit.grading.differential_build` does, in the
sandbox.
"""

from __future__ import annotations

import ast
import random
import string
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["MAX_REPR", "Mutator", "as_literal", "literal_seeds", "mutated_inputs"]

MAX_REPR = 600  # characters of an input's repr: longer inputs are not kept
_MAX_STEPS = 5  # mutations chained on one pick (EvalPlus: MAX_MULTI_STEP_SIZE)
_PATIENCE = 8  # tries to make a mutation change something (EvalPlus: MUTATE_BOUND_SIZE)
_ATTEMPTS = 30  # picks per wanted input before giving up on a problem


def as_literal(value: Any) -> str | None:
    """`repr(value)` if it reads back (ast.literal_eval) to an equal value of the same type."""
    text = repr(value)
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text if _same(back, value) else None


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def literal_seeds(check_source: str) -> list[tuple[Any, ...]]:
    """The argument tuples of `candidate(...)` calls in `check` whose arguments are all literals,
    in source order, duplicates (by repr) dropped."""
    seeds: list[tuple[Any, ...]] = []
    seen: set[str] = set()
    calls = [
        n
        for n in ast.walk(ast.parse(check_source))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "candidate"
    ]
    for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        try:
            args = tuple(ast.literal_eval(a) for a in call.args)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        key = as_literal(args)
        if key is not None and key not in seen:
            seen.add(key)
            seeds.append(args)
    return seeds


class Mutator:
    """EvalPlus's type-aware generator and mutator, on one seeded random source."""

    def __init__(self, seeds: Sequence[tuple[Any, ...]], rng: random.Random) -> None:
        self.rng = rng
        self.ingredients: dict[type, list[Any]] = {int: [], float: [], str: []}
        for seed in seeds:
            self.fetch(seed)

    # -- ingredients: constants seen in the seeds and in kept inputs -----------------------
    def fetch(self, value: Any) -> None:
        kind = type(value)
        if kind in self.ingredients:
            self._add(kind, value)
            if kind is str:
                for token in value.strip().split():
                    self._add(str, token)
        elif isinstance(value, (list, tuple)):
            for x in value:
                self.fetch(x)
        elif isinstance(value, dict):
            for x in [*value.keys(), *value.values()]:
                self.fetch(x)

    def _add(self, kind: type, value: Any) -> None:
        pool = self.ingredients[kind]
        if len(pool) < 200 and value not in pool:
            pool.append(value)

    def _ingredient(self, kind: type, prob: float) -> tuple[bool, Any]:
        pool = self.ingredients.get(kind)
        if pool and self.rng.random() < prob:
            return True, self.rng.choice(pool)
        return False, None

    # -- generation: a fresh value of a type ------------------------------------------------
    def gen(self, like: Any) -> Any:
        r = self.rng
        if like is None:
            return None
        if isinstance(like, bool):
            return r.choice([True, False])
        if isinstance(like, (int, float, str)):
            used, value = self._ingredient(type(like), 0.5)
            if used:
                return value
            if isinstance(like, int):
                return r.randint(-100, 100)
            if isinstance(like, float):
                return r.uniform(-100, 100)
            return "".join(r.choice(string.ascii_letters) for _ in range(r.randint(0, 10)))
        if isinstance(like, tuple):
            return tuple(self.gen([]))
        if isinstance(like, dict):
            key_like = r.choice([0, 0.0, ""])
            return {self.gen(key_like): self.gen(v) for v in self.gen([])}
        if isinstance(like, list):
            size = r.randint(0, 10)
            if r.randint(0, 4) == 0:  # heterogeneous
                return [self._any() for _ in range(size)]
            kind = r.choice([False, 0, 0.0, ""])
            return [self.gen(kind) for _ in range(size)]
        return like  # a type EvalPlus does not generate: kept as it is

    def _any(self) -> Any:
        kinds: list[Any] = [True, 1, 1.1, "str", [], (), {}, None]
        return self.gen(self.rng.choices(kinds, [0.2, 0.2, 0.2, 0.2, 0.05, 0.05, 0.05, 0.05])[0])

    # -- mutation: a value changed a little ------------------------------------------------
    def mutate(self, value: Any) -> Any:
        r = self.rng
        if value is None:
            return None
        if isinstance(value, bool):
            return r.choice([True, False])
        if isinstance(value, int):
            used, x = self._ingredient(int, 0.5)
            return x if used else value + r.randint(-1, 1)
        if isinstance(value, float):
            used, x = self._ingredient(float, 0.5)
            if used:
                return x
            return value + r.uniform(-1, 1) if r.randint(0, 1) else value * (1 + r.uniform(-0.5, 0.5))
        if isinstance(value, str):
            return self._mutate_str(value)
        if isinstance(value, tuple):
            return tuple(self.mutate(list(value)))
        if isinstance(value, list):
            return self._mutate_list(list(value))
        if isinstance(value, dict):
            return self._mutate_dict(dict(value))
        return value

    def _mutate_list(self, items: list[Any]) -> list[Any]:
        r = self.rng
        if not items:
            return list(self.gen([]))
        choice, idx = r.randint(0, 3), r.randint(0, len(items) - 1)
        if choice == 0:  # remove one element
            items.pop(r.randint(0, len(items) - 1))
        elif choice == 1:  # add a mutated element
            items.insert(r.randint(0, len(items) - 1), self.mutate(items[idx]))
        elif choice == 2:  # repeat one element
            items.append(items[idx])
        else:  # change one element in place
            items[idx] = self.mutate(items[idx])
        return items

    def _mutate_str(self, text: str) -> str:
        r = self.rng
        used, x = self._ingredient(str, 0.4)
        if used:
            return str(x)
        choice = r.randint(0, 2) if text else 0
        if choice == 0 and self.ingredients[str]:  # insert an ingredient
            idx = r.randint(0, len(text))
            return text[:idx] + r.choice(self.ingredients[str]) + text[idx:]
        if choice == 1:  # drop a slice, or mutate it
            start = r.randint(0, len(text) - 1)
            end = r.randint(start + 1, len(text))
            mid = "" if r.randint(0, 1) else self._mutate_str(text[start:end])
            return text[:start] + mid + text[end:]
        if choice == 2:  # repeat one character
            idx = r.randint(0, len(text) - 1)
            return text[:idx] + text[r.randint(0, len(text) - 1)] + text[idx:]
        return str(self.gen(""))

    def _mutate_dict(self, items: dict[Any, Any]) -> dict[Any, Any]:
        r = self.rng
        if not items:
            return dict(self.gen({}))
        choice = r.randint(0, 2)
        if choice == 0:  # remove an entry
            del items[r.choice(list(items))]
        elif choice == 1:  # add an entry
            items[self.mutate(r.choice(list(items)))] = self.mutate(r.choice(list(items.values())))
        else:  # change a value
            key = r.choice(list(items))
            items[key] = self.mutate(items[key])
        return items

    def mutate_args(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Mutate one argument (the arity never changes); retry while nothing changed."""
        if not args:
            return args
        out = args
        for _ in range(_PATIENCE):
            k = self.rng.randrange(len(args))
            out = (*args[:k], self.mutate(args[k]), *args[k + 1 :])
            if repr(out) != repr(args):
                break
        return out


def mutated_inputs(seeds: Iterable[tuple[Any, ...]], count: int, seed: str) -> list[tuple[Any, ...]]:
    """Up to `count` new argument tuples mutated from `seeds` (none of them a seed), in the
    order made. Deterministic: the same seeds, count and seed string give the same list."""
    pool = [s for s in seeds if as_literal(s) is not None]
    seen = {repr(s) for s in pool}
    if not pool:
        return []
    mutator = Mutator(pool, random.Random(seed))
    made: list[tuple[Any, ...]] = []
    for _ in range(_ATTEMPTS * count):
        if len(made) >= count:
            break
        value = mutator.rng.choice(pool)
        for _ in range(mutator.rng.randint(1, _MAX_STEPS)):
            value = mutator.mutate_args(value)
        key = as_literal(value)
        if key is None or len(key) > MAX_REPR or key in seen:
            continue
        seen.add(key)
        mutator.fetch(value)
        pool.append(value)
        made.append(value)
    return made
