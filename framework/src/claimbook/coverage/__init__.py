"""Coverage of the source texts by claims: maps (maps.py), anchors in the text (anchors.py),
the claims of a run (catalog.py), the check and its findings (check.py), totals and the
fail-under gate (totals.py), and the command line (cli.py). Nothing is imported here: the
plugin reads the catalog alone."""
