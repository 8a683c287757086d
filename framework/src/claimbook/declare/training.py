"""A training run as a claim reads it: a fixture, named once (:func:`training`).

A run is ``fn(config, seed)``: a function of the book's experiments and a config (usually a
dataclass); the seed comes from the claim instance. ``recall = training(train, config)`` at
module level (or in a conftest) is a pytest fixture: a claim test that takes ``recall`` as
an argument reads that run at its own ``seed`` (a test that takes ``seeds`` instead gets
{seed: run} for every seed). The plugin finds the trainings among a test's fixtures at
collection, as pytest-benchmark finds its ``benchmark``, trains them before the tests, and
keeps claims about one run in one shard. A run's identity (:attr:`Training.ident`) is the
same in every process, so the plan, the pool and the shards agree on it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest

TRAINING_ATTR = "claimbook_training"  # a training fixture's function carries its Training


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


def training(fn: Callable, config, *, name: str | None = None):
    """A pytest fixture that gives a claim test the run ``fn(config, seed)`` of its seed.

    Assign it at module level or in a conftest.py; its name is the variable's (or ``name``)::

        attention_recall = claimbook.training(train_recall, RecallConfig(mixer="attention"))

        @claim("book.recall", "likely", at="...", rule=MostSeeds("worst accuracy", above=0.99))
        def test_attention_recalls(attention_recall, measure):
            measure("worst accuracy", min(attention_recall["accuracy"]))

    The value is what ``fn`` returned (a dict of JSON values), read from the run cache: the
    plugin trains every run a selected test's fixtures name before the first test. A test
    that takes ``seeds`` and no ``seed`` gets {seed: run} for every seed of the session.
    """
    run = Training(fn, config)

    def read_run(request, runs):
        params = request.node.callspec.params if hasattr(request.node, "callspec") else {}
        if "seed" in params:
            return runs(fn, config, params["seed"])
        if "seeds" in request.fixturenames:
            return {s: runs(fn, config, s) for s in request.getfixturevalue("seeds")}
        raise pytest.UsageError(
            f"{request.node.nodeid}: the training fixture {request.fixturename!r} needs the "
            "test to take 'seed' (one run per seed) or 'seeds' (every seed's run at once)"
        )

    setattr(read_run, TRAINING_ATTR, run)
    read_run.__doc__ = f"The run {run.label()} at the test's seed (claimbook.training)."
    return pytest.fixture(read_run, name=name) if name else pytest.fixture(read_run)


def fixture_trainings(item) -> list[Training]:
    """The trainings among ``item``'s fixtures, in the order the test names them."""
    info = getattr(item, "_fixtureinfo", None)
    found = []
    for fixture in item.fixturenames:
        defs = info.name2fixturedefs.get(fixture) if info is not None else None
        run = getattr(defs[-1].func, TRAINING_ATTR, None) if defs else None
        if run is not None and run not in found:
            found.append(run)
    return found
