"""Rendering: results JSON -> view models -> Jinja2 Markdown and matplotlib figures."""

from claimbook.render.site import render_site

__all__ = ["render_site"]
