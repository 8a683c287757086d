"""A training run as a claim declares it (``@claim(trains=[Training(fn, config)])``).

A run is ``fn(config, seed)``: a function of the experiments and a config (usually a
dataclass); the seed comes from the claim instance. Its identity (:attr:`Training.ident`)
is the same in every process, so the plan, the pool and the shards agree on it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable


def plain_config(config) -> object:
    return dataclasses.asdict(config) if dataclasses.is_dataclass(config) else config


def _off_default(config) -> list[str]:
    """A dataclass's settings that differ from their defaults, as ``name=value``; a nested
    dataclass by its ``kind`` (if it has one) and its own settings off their defaults."""
    parts = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            parts += [str(value.kind)] if hasattr(value, "kind") else []
            parts += [p for p in _off_default(value) if not p.startswith("kind=")]
        elif f.default is dataclasses.MISSING or value != f.default:
            parts.append(f"{f.name}={value}")
    return parts


def describe(fn: Callable, config, seed: int | None = None) -> str:
    """A short human label of a run: the function and every setting off its default.

    E.g. ``train_lm(attention, n_kv_heads=2) seed 1`` for a config whose mixer is a nested
    dataclass of kind "attention"; without the seed when ``seed`` is None.
    """
    if dataclasses.is_dataclass(config):
        parts = _off_default(config)
    elif isinstance(config, dict):
        parts = [f"{k}={v}" for k, v in config.items()]
    else:
        parts = [repr(config)]
    label = f"{fn.__name__}({', '.join(parts)})"
    return label if seed is None else f"{label} seed {seed}"


@dataclasses.dataclass(frozen=True, eq=False)
class Training:
    """A training run up to its seed: ``fn(config, seed)``, as a claim declares it (``trains=``).

    Two trainings are equal when they name the same function and an equal config.
    """

    fn: Callable
    config: object

    @property
    def ident(self) -> str:
        """``module.function`` and the config as sorted JSON: the identity across processes."""
        config = json.dumps(plain_config(self.config), sort_keys=True, default=repr)
        return f"{self.fn.__module__}.{self.fn.__qualname__}:{config}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Training) and self.ident == other.ident

    def __hash__(self) -> int:
        return hash(self.ident)

    def label(self, seed: int | None = None) -> str:
        return describe(self.fn, self.config, seed)
