"""MkDocs hook: the command-line reference (``docs/cli.md``) from the ``tensor4all`` argument parsers.

At build time the marker line ``<!-- tensor4all-cli-help -->`` of a page is replaced by the
``--help`` of the program and of each of its commands, rendered by :func:`render` from
:func:`tensor4all.cli.build_parser` (the parsers ``python -m tensor4all`` runs), so the page
cannot drift from the options. ``tests/test_doc_examples.py`` checks that every command is
rendered. Configured in ``mkdocs.yml`` (``hooks:``).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

MARKER = "<!-- tensor4all-cli-help -->"
#: the terminal width the help is formatted for (argparse reads COLUMNS)
WIDTH = 100
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ROOT = Path(__file__).resolve().parents[2]


def _parsers():
    if str(_ROOT) not in sys.path:  # the checkout's packages, whether installed or not
        sys.path.insert(0, str(_ROOT))
    from tensor4all.cli import build_parser

    parser = build_parser()
    return parser, dict(parser.commands)


def render(width: int = WIDTH) -> str:
    """Markdown: the program's ``--help``, then one section per command with its ``--help``."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        parser, commands = _parsers()
        sections = [("tensor4all", parser)] + [(f"tensor4all {name}", sub) for name, sub in commands.items()]
        parts = []
        for title, p in sections:
            text = _ANSI.sub("", p.format_help()).rstrip()
            parts += [f"## `{title}`", "", "```text", f"$ {title} --help", text, "```", ""]
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, render())
    return markdown
