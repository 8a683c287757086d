"""A source document whose claims are tested (named in ``[tool.claimbook]`` or a claim marker).

Its own module, so that reading a book's settings (:mod:`claimbook.config`) at every pytest
start loads nothing else of the declaration layer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A source document whose claims are tested.

    Attributes:
        id: the catalog prefix of its claims, e.g. "ch04".
        title: the document's title as a reader knows it.
        document: where the text lives (file name or URL).
        path: the text's file name, relative to the sources folder
            (``CLAIMBOOK_SOURCES_DIR``); read at run time for the coverage map and
            page, never copied into the project.
    """

    id: str
    title: str
    document: str = ""
    path: str = ""
