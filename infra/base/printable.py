"""Text fastscale prints to a terminal or a log, made safe to print.

Names, keys, paths and messages fastscale shows come from places a pull request or a remote service
chooses: config keys, file names, AWS error messages, Terraform's diagnostics and events. A control
character among them is an instruction to the terminal, not text: ESC and CSI (0x9b) start escape
sequences that recolour, move the cursor, clear the screen, set the window title, or on some terminals
answer back; a carriage return or backspace overwrites what was already shown; a bidirectional override
makes the text read in another order than it is stored. :func:`printable` replaces each with its visible
escape (``\\x1b``, ``\\u202e``) so it is shown, never obeyed.

Kept: line feed and tab, which the layout needs (a carriage return before a line feed becomes a plain
line feed). Machine output (``--json``) never goes through here: JSON escapes control characters itself
and keeps the text exact.
"""

from __future__ import annotations

import re

#: C0 controls but tab and line feed, DEL, C1 controls (CSI 0x9b among them), and the Unicode controls that
#: reorder or split displayed text (bidirectional embeddings, overrides and isolates; line and paragraph
#: separators).
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character of :data:`UNPRINTABLE` shown as its escape; unchanged when it has none."""
    if not UNPRINTABLE.search(text):
        return text
    return UNPRINTABLE.sub(_escaped, text.replace("\r\n", "\n"))
