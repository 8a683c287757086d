"""Timing for timing claims (``Slower``): calls interleaved one at a time, with a control.

A load on the machine that comes and goes (another process, a neighbour's job) makes any
function slower while it lasts. Timed in blocks (all of A's calls, then all of B's), one
block can fall in a busy moment and the other in a quiet one, and their ratio says more
about the load than about A and B. Here every round calls each function once, in an order
rotated from round to round, so a load that lasts longer than a round falls on all of them
alike. One function (``again``) is also timed a second time, in a slot of its own: identical
work, whose ratio to itself would be 1 on a quiet machine. How far that ratio strays is the
machine's noise, which ``Slower(noise=...)`` weighs before deciding a claim.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def again_name(name: str) -> str:
    """The control's name in :func:`interleaved_times`'s result: "attention (again)"."""
    return f"{name} (again)"


def interleaved_times(
    fns: dict[str, Callable[[], object]],
    repetitions: int = 15,
    calls: int = 5,
    again: str | None = None,
    sync: Callable[[], object] = lambda: None,
) -> dict[str, list[float]]:
    """Seconds per call of each function in every repetition (index i of every list is
    repetition i: pair them by index).

    A repetition is ``calls`` rounds; a round calls every function once, one call timed at a
    time, starting each round one function further along. With ``again``, that function is
    timed twice a round, the second time under :func:`again_name`. ``sync`` runs before and
    after each timed call (a GPU's work is asynchronous: synchronise it there). Every function
    is called once first, untimed (allocator, kernel selection)."""
    if again is not None and again not in fns:
        raise ValueError(f"again={again!r} names none of the functions {sorted(fns)}")
    slots = {**fns, again_name(again): fns[again]} if again is not None else dict(fns)
    names = list(slots)
    for fn in slots.values():
        fn()
    sync()
    times: dict[str, list[float]] = {name: [] for name in names}
    turn = 0
    for _ in range(repetitions):
        total = dict.fromkeys(names, 0.0)
        for _ in range(calls):
            shift = turn % len(names)
            turn += 1
            for name in names[shift:] + names[:shift]:
                sync()
                start = time.perf_counter()
                slots[name]()
                sync()
                total[name] += time.perf_counter() - start
        for name in names:
            times[name].append(total[name] / calls)
    return times
