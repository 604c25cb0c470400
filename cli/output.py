"""Where command output goes: the rich console on stdout or stderr (control characters in what it shows
replaced by visible escapes), messages word-wrapped to the width the reader has, and a quiet stop when that
reader closes the pipe. Light at import (rich is imported when something is printed), so :mod:`.errors`
and :mod:`.main` use it at start-up."""

from __future__ import annotations

import functools
import os
import re
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from fastscale.infra.base.printable import UNPRINTABLE, printable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

#: Exit code when the reader of the output went away first (`fastscale ... | head`): 128 + SIGPIPE, as a
#: shell reports a program that a closed pipe stopped.
EXIT_CLOSED_PIPE = 141


def closed_pipe() -> NoReturn:
    """The reader closed the pipe: stop quietly. What is still buffered goes nowhere, instead of a
    BrokenPipeError traceback when Python flushes it on the way out."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):  # not a real file (e.g. captured in a test)
            pass
    sys.exit(EXIT_CLOSED_PIPE)


def console(stderr: bool = False) -> Console:
    """The console every message, table and progress line is printed through; it shows control characters
    as visible escapes (:func:`~fastscale.infra.base.printable.printable`) whatever their source."""
    # emoji off: hints quote ARNs like `arn:aws:secretsmanager:...:secret:name`, which rich would turn into ㊙.
    # soft_wrap on: rich never breaks a line by itself; `say` and `print_table` fit the width they are given.
    out = _printable_console_class()(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)
    out.on_broken_pipe = closed_pipe  # type: ignore[method-assign]  # rich's own exits 1
    return out


@functools.cache
def _printable_console_class() -> type[Console]:
    from rich.console import Console  # lazy: rich, for the commands that print (errors imports this module)
    from rich.segment import Segment

    class PrintableConsole(Console):
        """A rich console that never writes a control character of the text it shows to the terminal.

        Text is made printable where it enters (``render_str``: markup, messages, table cells), so widths
        are measured on what is shown; whatever reaches the output another way (a ``Text`` built elsewhere,
        a spinner's label) is made printable segment by segment in ``render``. rich's own control segments
        (cursor moves of the spinner) and the styles it renders around text are not text and pass as they are."""

        def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
            return super().render_str(printable(text), *args, **kwargs)

        def render(self, renderable: Any, options: Any = None) -> Any:
            for segment in super().render(renderable, options):
                if segment.control is None and UNPRINTABLE.search(segment.text):
                    segment = Segment(printable(segment.text), segment.style)
                yield segment

    return PrintableConsole


def output_width(out: Console) -> int | None:
    """The columns output must fit: COLUMNS when set (on a terminal or not), else the terminal's width.
    None when piped without COLUMNS: nothing limits a log's width, so nothing is wrapped or folded and
    every line stays whole for grep."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return out.width if out.is_terminal else None


def escape(text: str) -> str:
    """``text`` shown literally inside rich markup (a name or message may hold ``[...]``)."""
    from rich.markup import escape as markup_escape  # lazy: rich, as in console()

    return markup_escape(text)


def say(markup: str, *, stderr: bool = False, indent: str = "") -> None:
    """Print a message (rich markup), word-wrapped to :func:`output_width`. Commands written between
    backticks are never split over two lines, nor is any single word; continuation lines start with
    ``indent``. Line breaks in the message are kept."""
    out = console(stderr=stderr)
    for line in wrap_text(out.render_str(markup), output_width(out), indent):
        out.print(line)


_PROTECTED = re.compile(r"`[^`\n]*`")


def wrap_text(text: Text, width: int | None, indent: str = "") -> list[Text]:
    """``text`` cut into lines of at most ``width`` cells at spaces outside `backtick` spans (styles
    kept). A word or a quoted command longer than the width gets a line of its own, whole."""
    from rich.cells import cell_len  # lazy: rich
    from rich.text import Text

    lines: list[Text] = []
    for paragraph in text.split("\n", allow_blank=True):
        plain = paragraph.plain
        if width is None or cell_len(plain) <= width:
            lines.append(paragraph)
            continue
        protected = [m.span() for m in _PROTECTED.finditer(plain)]
        # Every run of spaces outside a protected span is a place the line may break.
        breaks = [
            m.span()
            for m in re.finditer(r" +", plain)
            if not any(start < m.start() < end for start, end in protected)
        ]
        start, prefix = 0, ""
        while start < len(plain):
            limit = width - cell_len(prefix)
            later = [b for b in breaks if b[0] > start]
            if cell_len(plain[start:]) <= limit or not later:
                piece, start = paragraph[start:], len(plain)
            else:
                fitting = [b for b in later if cell_len(plain[start : b[0]]) <= limit]
                cut = fitting[-1] if fitting else later[0]
                piece, start = paragraph[start : cut[0]], cut[1]
            lines.append(Text(prefix) + piece if prefix else piece)
            prefix = indent
    return lines
