"""Each claim instance starts from one process state, whatever ran before it.

The state a test can leave behind and another's numbers depend on: the working directory,
the environment, Python's, NumPy's and torch's global random streams, NumPy's print options,
and torch's thread count, default dtype, grad mode and deterministic-algorithm flags. The
state is taken once, when the tests start (after collection: what a test module sets when
it is imported applies to every test, as it would in a process of its own). Before each
claim instance's setup the process is put back into that state, and after its teardown too;
an instance that left a setting changed is named, with what it changed, and its outcome
stands (the next instance starts clean). The global random streams (Python's, NumPy's,
torch's) are then seeded from the instance's seed, so a test that draws from them unseeded
still gets the same numbers in every run; drawing from or seeding them is no fault. NumPy
and torch are read only if something imported them.
"""

from __future__ import annotations

import os
import random
import sys


def _numpy():
    return sys.modules.get("numpy")


def _torch():
    torch = sys.modules.get("torch")
    return torch if torch is not None and hasattr(torch, "get_num_threads") else None


def _environ(saved: dict) -> None:
    """Put the environment back (pytest's own PYTEST_CURRENT_TEST left as pytest has it)."""
    for name in set(os.environ) - set(saved) - {"PYTEST_CURRENT_TEST"}:
        del os.environ[name]
    os.environ.update(saved)


def _equal(a, b) -> bool:
    """Equality of two saved values (print options hold plain values only)."""
    return type(a) is type(b) and a == b


class ProcessState:
    """The state a claim instance starts from (see the module docstring)."""

    def __init__(self):
        self.saved = self.take()
        self.changes: dict[tuple[str, ...], list[str]] = {}  # settings changed -> node ids

    @staticmethod
    def take() -> dict:
        environ = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        state = {"cwd": os.getcwd(), "environ": environ}  # the random streams: see seed()
        np, torch = _numpy(), _torch()
        if np is not None:
            state["numpy print options"] = np.get_printoptions()
        if torch is not None:
            state.update({
                "torch threads": torch.get_num_threads(),
                "torch default dtype": torch.get_default_dtype(),
                "torch grad mode": torch.is_grad_enabled(),
                "torch deterministic algorithms": (
                    torch.are_deterministic_algorithms_enabled(),
                    torch.is_deterministic_algorithms_warn_only_enabled(),
                ),
            })  # fmt: skip
        return state

    def changed(self) -> list[str]:
        """What differs from the saved state now (a library imported since is not counted)."""
        now = self.take()
        return [name for name, value in self.saved.items()
                if name in now and not _equal(value, now[name])]  # fmt: skip

    def restore(self) -> list[str]:
        """Put back what changed; return the names of the changed settings."""
        changed = self.changed()
        s, np, torch = self.saved, _numpy(), _torch()
        put_back = {
            "cwd": lambda: os.chdir(s["cwd"]),
            "environ": lambda: _environ(s["environ"]),
            "numpy print options": lambda: np.set_printoptions(**s["numpy print options"]),
            "torch threads": lambda: torch.set_num_threads(s["torch threads"]),
            "torch default dtype": lambda: torch.set_default_dtype(s["torch default dtype"]),
            "torch grad mode": lambda: torch.set_grad_enabled(s["torch grad mode"]),
            "torch deterministic algorithms": lambda: torch.use_deterministic_algorithms(
                s["torch deterministic algorithms"][0],
                warn_only=s["torch deterministic algorithms"][1],
            ),
        }
        for name in changed:
            put_back[name]()
        return changed

    def note(self, nodeid: str, changed: list[str]) -> None:
        """Remember that the instance ``nodeid`` left the settings ``changed`` changed."""
        self.changes.setdefault(tuple(changed), []).append(nodeid)

    def lines(self) -> list[str]:
        """The terminal's lines: one per set of settings changed, with the tests that did."""
        lines = []
        for changed, nodeids in self.changes.items():
            shown = ", ".join(nodeids[:3]) + (
                f" and {len(nodeids) - 3} more" if len(nodeids) > 3 else ""
            )
            lines.append(f"{len(nodeids)} claim tests changed the process state "
                         f"({', '.join(changed)}), put back after each: {shown}; a test "
                         "should set what it needs and leave no trace")  # fmt: skip
        return lines

    def seed(self, seed: int | None) -> None:
        """Seed every global random stream from the instance's seed (0 for a claim without
        one): the same seed gives the same numbers, whatever ran before. A fresh process
        would not do: torch's and NumPy's first state there is drawn afresh each time."""
        value = 0 if seed is None else int(seed)
        random.seed(value)
        np, torch = _numpy(), _torch()
        if np is not None:
            np.random.seed(value)
        if torch is not None:
            torch.manual_seed(value)

    def refresh(self) -> None:
        """Take in what was imported since (numpy or torch first loaded by a test), as a
        fresh process importing it would have it."""
        now = self.take()
        for name, value in now.items():
            self.saved.setdefault(name, value)
