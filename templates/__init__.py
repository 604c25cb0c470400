"""Jinja2 templates shipped with fastscale (project scaffold, CI workflows, dashboard body, reports).

`render("dashboard.json.j2", **ctx)` renders one by its path inside this package. Undefined variables are
errors (StrictUndefined), so a missing context key fails loudly instead of rendering an empty string.
Nothing is HTML-escaped: the outputs are YAML, JSON, Makefiles and Markdown.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

TEMPLATES_DIR = Path(__file__).resolve().parent


@functools.cache
def environment() -> jinja2.Environment:
    """The shared Jinja2 environment (built on first use, so importing this package costs nothing)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )


def render(name: str, **ctx: Any) -> str:
    """Render the template at `name` (relative to this package, e.g. "ci/github.yml.j2")."""
    text: str = environment().get_template(name).render(**ctx)
    return text
