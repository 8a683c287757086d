"""Text shown to a reader: control characters made visible (no dependency: the terminal
tables and the pages both use it)."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text) -> str:
    """``text`` on one line with its control characters made visible (``\\x1b``), not raw."""
    return " ".join(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text)).split())
