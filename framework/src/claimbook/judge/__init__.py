"""Judging: numbers, verdicts per claim, the run's outcome, and the baseline rules."""
