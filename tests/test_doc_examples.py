"""Every Python example of README.md and of the documentation site (``docs/**/*.md``) runs.

Each fenced code block whose info string starts with ``python`` (or ``py``, ``pycon``) is one test case,
named by its file and line (``README.md:404``, ``docs/how-to/gpu.md:7``): it runs as a script of its
own in a fresh interpreter (``sys.executable``, the working directory a fresh temporary one, one
BLAS/OpenMP thread, a timeout), so a block must carry its own imports and definitions. A block that
shows ``>>>`` prompts is run by doctest instead (``python -m doctest``, with ELLIPSIS and
NORMALIZE_WHITESPACE), its shown outputs compared with what it prints.

No block is skipped, except by a marker in its info string; the markers in use are

* ``python gpu``: the block needs a GPU; it runs where CuPy sees a CUDA device, else it is
  skipped with that reason (docs/how-to/gpu.md).

Keep the markers few: a fragment or a slow example is fixed in its page, not marked here.

The site's structure is checked here too, cheaply: ``mkdocs.yml``'s nav lists every page under
``docs/`` and only pages that exist, the README links only to files that exist, and the CLI
reference (rendered at build time by ``docs/hooks/cli_help.py``) covers every command of the
``tensor4all`` program.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"
TIMEOUT_S = 120
#: info-string words (after the language) that this test understands
MARKERS = {"gpu"}
PYTHON_LANGUAGES = {"python", "py", "python3", "pycon"}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclasses.dataclass(frozen=True)
class CodeBlock:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int  # 1-based line of the opening fence
    language: str  # the info string's first word, lower case ("" when none)
    markers: tuple  # the info string's other words
    code: str  # the content, its fence's indentation removed

    @property
    def id(self) -> str:
        try:
            name = self.path.resolve().relative_to(ROOT).as_posix()
        except ValueError:  # a file outside the checkout: its name
            name = self.path.name
        return f"{name}:{self.line}"

    @property
    def is_doctest(self) -> bool:
        """Whether the block shows interactive ``>>>`` prompts (then doctest runs it)."""
        return any(line.lstrip().startswith(">>>") for line in self.code.splitlines())


def code_blocks(path, languages=None) -> list[CodeBlock]:
    """The fenced code blocks of the Markdown file ``path`` in order, those indented inside
    list items included; only blocks whose language is in ``languages`` (lower case) when given.

    A fence is three or more backticks or tildes, closed by a line of at least as many of the same
    character (CommonMark); an unclosed block runs to the end of the file. The content is dedented
    by the opening fence's indentation.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        start, indent, fence = i, m["indent"], m["fence"]
        words = m["info"].split()
        body = []
        i += 1
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if (
                close is not None
                and close["fence"][0] == fence[0]
                and len(close["fence"]) >= len(fence)
                and not close["info"].strip()
            ):
                break
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        language = words[0].lower() if words else ""
        if languages is None or language in languages:
            blocks.append(
                CodeBlock(
                    path,
                    start + 1,
                    language,
                    tuple(w.lower() for w in words[1:]),
                    textwrap.dedent("\n".join(body)) + "\n",
                )
            )
    return blocks


def python_blocks(path=README) -> list[CodeBlock]:
    return code_blocks(path, PYTHON_LANGUAGES)


def doc_pages() -> list[Path]:
    """The Markdown pages of the site: ``docs/**/*.md`` (the hooks' folder holds no pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def doc_files() -> list[Path]:
    """README.md, then every page of the site."""
    return [README, *doc_pages()]


_GPU_PROBE = """
import sys
try:
    import cupy
except ImportError:
    sys.exit("needs CuPy (the 'gpu' extra) and a CUDA device")
try:
    n = cupy.cuda.runtime.getDeviceCount()
except Exception as exc:  # CUDA driver errors have many types
    sys.exit(f"needs a CUDA device: CuPy cannot reach one ({type(exc).__name__}: {exc})")
if n < 1:
    sys.exit("needs a CUDA device: CuPy sees none")
"""


@functools.lru_cache(maxsize=None)
def _gpu_unavailable() -> str | None:
    """Why a GPU block cannot run here, or None: asked of a fresh interpreter, as the blocks run
    (this process may hold a stand-in for CuPy, ``--placement fakegpu``)."""
    proc = subprocess.run(
        [sys.executable, "-c", _GPU_PROBE], env=_environment(), capture_output=True, text=True, timeout=TIMEOUT_S
    )
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["CuPy probe failed"])[-1]


def _environment() -> dict:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0", MPLBACKEND="Agg")
    # the package from this checkout, whatever the working directory
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def run_block(block: CodeBlock, cwd: Path, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess:
    """Run one block in a fresh interpreter in ``cwd``: as a script, or by doctest when it shows
    ``>>>`` prompts."""
    if block.is_doctest:
        script = cwd / "doc_example.txt"
        command = [sys.executable, "-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE", str(script)]
    else:
        script = cwd / "doc_example.py"
        command = [sys.executable, str(script)]
    script.write_text(block.code, encoding="utf-8")
    return subprocess.run(command, cwd=cwd, env=_environment(), capture_output=True, text=True, timeout=timeout)


README_BLOCKS = python_blocks(README)
BLOCKS = [block for path in doc_files() for block in python_blocks(path)]


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def test_readme_and_docs_have_python_examples():
    # the README: one short example per package; the site: the tutorials and guides
    assert len(README_BLOCKS) >= 3, [b.id for b in README_BLOCKS]
    assert len(BLOCKS) >= 30, [b.id for b in BLOCKS]
    unknown = {b.id: b.markers for b in BLOCKS if set(b.markers) - MARKERS}
    assert not unknown, f"unknown info-string markers (known: {sorted(MARKERS)}): {unknown}"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_example(block: CodeBlock, tmp_path: Path):
    if "gpu" in block.markers:
        reason = _gpu_unavailable()
        if reason is not None:
            pytest.skip(f"{block.id}: marked 'python gpu': {reason}")
    try:
        proc = run_block(block, tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.id}: still running after {TIMEOUT_S} s; an example should be quick")
    if proc.returncode != 0:
        how = "doctest" if block.is_doctest else "script"
        pytest.fail(
            f"{block.id} ({how}) exited with {proc.returncode} (line n of the script or doctest is line "
            f"{block.line} + n of {block.path.name})\n"
            f"--- stdout (tail) ---\n{_tail(proc.stdout)}\n--- stderr (tail) ---\n{_tail(proc.stderr)}",
            pytrace=False,
        )


def test_code_blocks_parser(tmp_path: Path):
    """The extractor: indented fences in list items, tildes, longer fences, info strings, prompts."""
    md = tmp_path / "doc.md"
    md.write_text(
        textwrap.dedent("""\
        text
        ```python
        x = 1
        ```
        - item

          ```python gpu
          if x:
              y = 2
          ```
        ````py
        ```
        inner
        ```
        ````
        ~~~bash
        ls
        ~~~
        ```pycon
        >>> 1 + 1
        2
        ```
        ```python
        >>> print(3)
        3
        ```
        """),
        encoding="utf-8",
    )
    blocks = code_blocks(md)
    assert [(b.line, b.language, b.markers) for b in blocks] == [
        (2, "python", ()),
        (7, "python", ("gpu",)),
        (11, "py", ()),
        (16, "bash", ()),
        (19, "pycon", ()),
        (23, "python", ()),
    ]
    assert blocks[1].code == "if x:\n    y = 2\n"
    assert blocks[2].code == "```\ninner\n```\n"
    assert [b.is_doctest for b in blocks] == [False, False, False, False, True, True]
    assert [b.line for b in code_blocks(md, PYTHON_LANGUAGES)] == [2, 7, 11, 19, 23]
    assert code_blocks(md, PYTHON_LANGUAGES)[0].id == "doc.md:2"


# -- the site's structure ---------------------------------------------------------------------


def _nav_pages() -> list[str]:
    """The pages ``mkdocs.yml``'s nav names (``docs/``-relative), read without a YAML parser (the
    docs extra is not installed where the tests run first)."""
    text = MKDOCS_YML.read_text(encoding="utf-8")
    nav = text[text.index("\nnav:\n") :]
    nav = nav[: re.search(r"\n\S", nav[1:]).start() + 1]  # up to the next top-level key
    return re.findall(r"^\s+- (?:[^\n]*?: )?([\w./-]+\.md)\s*$", nav, flags=re.M)


def test_mkdocs_nav_lists_every_page():
    nav = _nav_pages()
    pages = [p.relative_to(DOCS).as_posix() for p in doc_pages()]
    assert len(nav) == len(set(nav)), sorted(n for n in nav if nav.count(n) > 1)
    assert sorted(nav) == sorted(pages), {
        "in the nav, no such page": sorted(set(nav) - set(pages)),
        "pages missing from the nav": sorted(set(pages) - set(nav)),
    }


def test_readme_links_exist():
    """The README's relative links (``[docs](docs/index.md)``, images) name files of the checkout."""
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link.split("#")[0] for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]
    assert local, "the README links to no file (where are the docs?)"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_readme_says_where_the_docs_are():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    assert 'pip install -e ".[docs]" && mkdocs serve' in text
    assert "docs/" in text


def _cli_hook():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cli_help_hook", DOCS / "hooks" / "cli_help.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_page_covers_every_command():
    """The CLI reference is generated from the parsers: each command's ``--help`` is on the page."""
    from tensor4all.cli import build_parser

    hook = _cli_hook()
    assert hook.MARKER in (DOCS / "cli.md").read_text(encoding="utf-8")
    page = hook.render()
    commands = build_parser().commands
    assert set(commands) >= {"dmrg", "scan", "evolve"}
    for name, parser in commands.items():
        assert f"## `tensor4all {name}`" in page
        assert f"usage: tensor4all {name}" in page
        for action in parser._actions:  # every option of the command is listed (unless hidden)
            if action.help == argparse.SUPPRESS:
                continue
            for option in action.option_strings:
                assert option in page, (name, option)
