"""Heavy libraries imported on first use: a pytest run that collects no claim never pays for
scipy or pandas (the plugin loads in every pytest run of an environment that has it)."""

from __future__ import annotations

import importlib
from types import ModuleType


class lazy(ModuleType):
    """A stand-in for the module ``name``, imported when one of its attributes is first read."""

    def __init__(self, name: str):
        super().__init__(name)

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self.__name__), attr)
