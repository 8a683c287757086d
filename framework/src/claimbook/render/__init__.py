"""Rendering: results JSON -> view models -> Jinja2 Markdown and matplotlib figures
(:func:`claimbook.render.site.render_site`). Nothing is imported here, so that the gate and
the terminal can use the light modules (the tables) without matplotlib."""
