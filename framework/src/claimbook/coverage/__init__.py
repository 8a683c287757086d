"""Coverage of the source texts by claims: maps (maps.py), anchors in the text (anchors.py),
the claims of a run (catalog.py), the check and its findings (check.py), totals and the
fail-under gate (totals.py), and the command line (cli.py)."""

from claimbook.coverage.check import Finding, Report, check
from claimbook.coverage.maps import CoverageMap, CoverageMapError, Statement, read_map, read_maps

__all__ = [
    "CoverageMap", "CoverageMapError", "Finding", "Report", "Statement", "check", "read_map",
    "read_maps",
]  # fmt: skip
