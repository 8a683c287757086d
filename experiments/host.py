"""What identifies the CPU a run's float digits came from, beyond the recorded machine class.

The machine class claimbook records (``claimbook.runs.keys.machine``: CPU model name, core
count, the instruction set torch dispatches to) reads "AMD EPYC x 2, x86_64 AVX512" here, and
a host recorded as "AMD EPYC x 2" too gave other last digits with the same code and torch.
The model name of a virtual CPU says little, so this module reads the finer facts the kernel
reports (CPU family, model, stepping, microcode, cache size), so that a page can say which
host printed which digits. It only describes; why two hosts differ is not measured here.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

FIELDS = ("model name", "cpu family", "model", "stepping", "microcode", "cache size")


def cpu_facts() -> dict[str, str]:
    """The first processor's ``/proc/cpuinfo`` fields in ``FIELDS`` (empty where unreadable),
    torch's CPU capability and the core count."""
    facts: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break  # the first processor's block ends here
            name, _, value = line.partition(":")
            if name.strip() in FIELDS:
                facts[name.strip()] = value.strip()
    except OSError:
        facts["model name"] = platform.processor() or platform.machine()
    import torch

    facts["torch capability"] = torch.backends.cpu.get_cpu_capability()
    facts["cores"] = str(os.cpu_count())
    return facts


def cpu_identity() -> str:
    """One line for a page: ``AMD EPYC, family 26 model 2 stepping 1, microcode 0x...``."""
    f = cpu_facts()
    parts = [
        f.get("model name", "?"),
        f"family {f.get('cpu family', '?')} model {f.get('model', '?')} "
        f"stepping {f.get('stepping', '?')}",
        f"microcode {f.get('microcode', '?')}",
        f"L2 {f.get('cache size', '?')}",
        f"torch {f['torch capability']}",
        f"{f['cores']} cores",
    ]
    return ", ".join(parts)
