"""claimbook: an ML text's claims as pytest tests, run across seeds, judged, and published.

The public surface for claim authors is re-exported here.
"""

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
from claimbook.declare.spec import LEVELS, WHOLE_TEXT, ClaimSpec, Figure, Source
from claimbook.declare.training import Training, training
from claimbook.judge.verdicts import VERDICTS

__all__ = [
    "LEVELS", "VERDICTS", "WHOLE_TEXT", "AllOf", "Beats", "ClaimSpec", "Diff", "Figure",
    "Matches", "MostSeeds", "Ranking", "Slower", "Source", "Training", "Typical", "Universal",
    "claim", "defaults", "source", "source_text", "training",
]  # fmt: skip
