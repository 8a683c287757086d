"""Which claim instances a session runs, and why that is less than the suite.

:class:`Selection` keeps the claim tests as collected (the suite), what -k, -m and a shard
keep of them (the selection, which the planned looks extend), how many tests have finished,
and says which options and arguments narrowed the run: a narrowed run is partial.
"""

from __future__ import annotations

import pytest

from claimbook.declare.marker import SPEC
from claimbook.judge.outcome import SHARD, plural
from claimbook.plugin.options import adaptive, base_seeds, option
from claimbook.runs.plan import shard_of


class Selection:
    """The claim node ids of one session, before and after selection, and its progress."""

    def __init__(self):
        self.suite: list[str] = []  # claim node ids before -k, -m or a shard narrow them
        self.selected: list[str] = []  # those that run, the planned looks' seeds added
        self.total = self.done = 0  # tests to run (claims or not) and tests finished
        self.deselected = self.shard_dropped = 0  # by -k, -m or a shard; by the shard alone

    def shard(self, config: pytest.Config, items: list, looks, settings) -> None:
        """Keep this shard's whole claims (in place), each with its planned looks' seeds
        (see :func:`claimbook.runs.plan.shard_of`)."""
        index, count = option(config, "shard")
        assigned = shard_of(*looks.shard_groups(items, count, settings))
        kept = [item for item in items if assigned[item.nodeid] == index - 1]
        looks.keep({i.stash[SPEC].id for i in kept if SPEC in i.stash})
        dropped = [item for item in items if assigned[item.nodeid] != index - 1]
        self.shard_dropped = len(dropped)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept

    def select(self, items: list) -> set[str]:
        """Note the items that run (after deselection); returns their claim ids."""
        self.total = len(items)
        self.selected = [i.nodeid for i in items if i.get_closest_marker("claim")]
        return {i.stash[SPEC].id for i in items if SPEC in i.stash}

    def add(self, items: list) -> None:
        """A planned look's held seeds join the run."""
        self.selected += [i.nodeid for i in items]
        self.total += len(items)

    def restrictions(self, config: pytest.Config, claims_dir: str) -> list[str]:
        """Why this session's selection is narrower than the suite, from its options and
        args (``claims_dir``: the book's claims folder)."""
        found = []
        suite = (config.rootpath / claims_dir).resolve()
        here = config.invocation_params.dir
        covered = False
        for arg in config.args:
            path = (here / arg.split("::")[0]).resolve()
            if "::" in arg:
                found.append(f"node id {arg}")
            elif path == suite or path in suite.parents:
                covered = True
            elif suite in path.parents:
                found.append(f"path {arg} (a part of {claims_dir})")
        if not covered and not any(r.startswith(("node id", "path")) for r in found):
            found.append(f"the claims folder {claims_dir} was not run")
        other = self.deselected - self.shard_dropped  # -k or -m that keeps all: no restriction
        if other:
            chosen = [f"-k {config.option.keyword}"] if config.option.keyword else []
            chosen += [f"-m {config.option.markexpr}"] if config.option.markexpr else []
            found.append(
                f"{plural(other, 'test')} deselected ({', '.join(chosen) or 'e.g. --deselect'})"
            )
        if not adaptive(config):
            seeds = ",".join(map(str, base_seeds(config)))
            found.append(
                f"--claimbook-seeds {seeds}: a fixed sample of seeds, not the planned looks"
            )
        elif option(config, "budget") == 0:
            found.append("--claimbook-budget 0: no training past the first look")
        shard = option(config, "shard")
        if shard:
            found.append(f"{SHARD}{shard[0]}/{shard[1]} of the suite")
        return found
