"""claimbook: an ML text's claims as pytest tests, run across seeds, judged, and published.

The public surface for claim authors is re-exported here, each name imported on first use
(PEP 562): the plugin loads in every pytest run of an environment with claimbook installed,
and a run that collects no claim should not pay for the declaration layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_WHERE = {
    "claimbook.config": ("source", "source_text"),
    "claimbook.declare.design": ("AllOf", "Beats", "Diff", "Matches", "MostSeeds", "Ranking",
                                 "Slower", "Typical", "Universal"),
    "claimbook.declare.marker": ("claim", "defaults"),
    "claimbook.declare.spec": ("LEVELS", "WHOLE_TEXT", "ClaimSpec", "Figure"),
    "claimbook.declare.source": ("Source",),
    "claimbook.declare.training": ("Training", "training"),
    "claimbook.judge.verdicts": ("VERDICTS",),
}  # fmt: skip
_MODULE = {name: module for module, names in _WHERE.items() for name in names}
__all__ = [
    "LEVELS", "VERDICTS", "WHOLE_TEXT", "AllOf", "Beats", "ClaimSpec", "Diff", "Figure",
    "Matches", "MostSeeds", "Ranking", "Slower", "Source", "Training", "Typical", "Universal",
    "claim", "defaults", "source", "source_text", "training",
]  # fmt: skip


def __getattr__(name: str):
    if name not in _MODULE:
        raise AttributeError(f"module 'claimbook' has no attribute {name!r}")
    # looked up each time, never kept here: a module imported anew (pytester's in-process
    # sessions drop what they imported) must not leave this package its old classes
    return getattr(importlib.import_module(_MODULE[name]), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what a type checker and an editor read
    from claimbook.config import source, source_text
    from claimbook.declare.design import (
        AllOf,
        Beats,
        Diff,
        Matches,
        MostSeeds,
        Ranking,
        Slower,
        Typical,
        Universal,
    )
    from claimbook.declare.marker import claim, defaults
    from claimbook.declare.source import Source
    from claimbook.declare.spec import LEVELS, WHOLE_TEXT, ClaimSpec, Figure
    from claimbook.declare.training import Training, training
    from claimbook.judge.verdicts import VERDICTS
