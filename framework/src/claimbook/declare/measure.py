"""The per-test recorder of measured values.

Each value is appended, as a JSON-ready entry, to the measures of its instance's record
(:class:`claimbook.plugin.collector.Record`). A non-finite value is recorded explicitly
and then raises :class:`NonFiniteValueError`, so its instance is an ``error`` that says
which value it was.
"""

from __future__ import annotations

import json

from claimbook.declare.numbers import NonFiniteValueError, nonfinite_in, plain, reproduces

CORRECTION = "correction"  # the measure name of an erratum's correction (Measure.correct)


class Measure:
    """Records measured values of one test instance, with the printed value beside them.

    Call it as ``measure(name, value, printed=None, unit=None, x=None, seed=None,
    tolerance=None)``; it returns ``value`` so it can wrap an expression.
    ``printed`` is the source's number (give "1.00" as a string to keep its
    digits); whether it reproduces is recorded (see
    :func:`claimbook.declare.numbers.reproduces`). ``x`` gives the abscissa of a
    list-valued measure, which the site plots; ``seed`` tags a value of one seed
    inside a claim about all seeds at once.

    Raises:
        NonFiniteValueError: the value is (or holds) NaN or an infinity; it is recorded first.
    """

    def __init__(self, measures: list):
        self.measures = measures  # the instance record's: entries appended in order

    def __call__(
        self, name: str, value, printed=None, unit=None, x=None, seed=None, tolerance=None
    ):
        entry = {"name": str(name), "value": plain(value)}
        if printed is not None:
            entry["printed"] = plain(printed)
            entry["reproduced"] = reproduces(entry["value"], entry["printed"], tolerance)
            if tolerance is not None:
                entry["tolerance"] = float(tolerance)
        if unit:
            entry["unit"] = unit
        if x is not None:
            entry["x"] = plain(x)
        if seed is not None:
            entry["seed"] = int(seed)
        bad = nonfinite_in(entry["value"])
        if bad:
            entry["nonfinite"] = True
        json.dumps(entry, allow_nan=False)  # fail here, in the test, if it cannot be reported
        self.measures.append(entry)
        if bad:
            raise NonFiniteValueError(f"measured value {name!r} is {', '.join(sorted(set(bad)))}")
        return value

    def reproduces(self, name: str, value, printed, *, unit=None, tolerance=None):
        """Record ``value`` beside the source's ``printed`` one and assert that it reproduces
        it (to the printed digits, or within ``tolerance``): the printed number is stated
        once, and the test fails, naming both, when it does not reproduce. Returns ``value``.
        """
        self(name, value, printed=printed, unit=unit, tolerance=tolerance)
        entry = self.measures[-1]
        assert entry["reproduced"], f"{name}: measured {value!r}, printed {printed!r}"
        return value

    def correct(self, text: str) -> str:
        """Record the correction an author can paste for an erratum (a corrected number or
        sentence, computed from what the test measured); call it before the assertion that
        fails. It is recorded per instance (a claim over seeds records one per seed); the
        pages show identical corrections once."""
        if not isinstance(text, str) or not text.strip():
            raise TypeError(f"a correction is a non-empty sentence, got {text!r}")
        self.measures.append({"name": CORRECTION, "value": text, "correction": True})
        return text
