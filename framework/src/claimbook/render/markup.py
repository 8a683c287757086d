"""Text as the pages show it: literal, on one line, safe in Markdown, tables and headings."""

from __future__ import annotations

import html
import re

import yaml

from claimbook.text import shown

__all__ = ["code", "front_matter", "heading", "md_escape", "shown", "text_line"]

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")  # ~ is plain text without pymdownx.tilde


def md_escape(text) -> str:
    """Show ``text`` literally, on one line, in Markdown: HTML-escape it, backslash its specials."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(shown(text), quote=False))


def text_line(text) -> str:
    """A line of a source text in a table cell: shown literally, its indentation kept."""
    body = str(text).expandtabs(4)
    rest = body.lstrip(" ")
    return "&nbsp;" * (len(body) - len(rest)) + md_escape(rest)


def heading(text, width: int = 0) -> str:
    """``text`` as a Markdown heading's words: shown literally, cut at a word before ``width``
    characters (with an ellipsis), and no brace that attr_list could read as attributes."""
    text = shown(text)
    if width and len(text) > width:
        text = text[:width].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return md_escape(text).replace("{", "&#123;").replace("}", "&#125;")


def code(text) -> str:
    """``text`` as inline code that no character of it can end or turn into markup."""
    return f"<code>{html.escape(shown(text), quote=False)}</code>"


def front_matter(fields: dict) -> str:
    """A page's YAML front matter, written by a YAML serializer (``null``, ``yes`` and ``off``
    stay strings). MkDocs and Material put the title into ``<title>``, the navigation and the
    tags index as it stands, unescaped: it is HTML-escaped here, the one place it is written."""
    plain = {
        k: [shown(v) for v in x] if isinstance(x, list) else shown(x) for k, x in fields.items()
    }
    if "title" in plain:
        plain["title"] = html.escape(plain["title"])
    return "---\n" + yaml.safe_dump(plain, sort_keys=False, allow_unicode=True) + "---"
