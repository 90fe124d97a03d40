"""Every Python example of README.md runs.

Each fenced code block whose info string starts with ``python`` (or ``py``, ``pycon``) is one test case,
named by its line in README.md (``README.md:404``): it runs as a script of its own in a fresh
interpreter (``sys.executable``, the working directory a fresh temporary one, one BLAS/OpenMP
thread, a timeout), so a block must carry its own imports and definitions. A block that shows
``>>>`` prompts is run by doctest instead (``python -m doctest``, with ELLIPSIS and
NORMALIZE_WHITESPACE), its shown outputs compared with what it prints.

No block is skipped, except by a marker in its info string; the markers in use are

* ``python gpu``: the block needs a GPU; it runs where CuPy sees a CUDA device, else it is
  skipped with that reason (README.md, "GPU (CuPy)").

Keep the markers few: a fragment or a slow example is fixed in README.md, not marked here.
:func:`code_blocks` takes any Markdown file, for a docs site to reuse.
"""

from __future__ import annotations

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
        return f"{self.path.name}:{self.line}"

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
        script = cwd / "readme_example.txt"
        command = [sys.executable, "-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE", str(script)]
    else:
        script = cwd / "readme_example.py"
        command = [sys.executable, str(script)]
    script.write_text(block.code, encoding="utf-8")
    return subprocess.run(command, cwd=cwd, env=_environment(), capture_output=True, text=True, timeout=timeout)


BLOCKS = python_blocks()


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 10, [b.id for b in BLOCKS]
    unknown = {b.id: b.markers for b in BLOCKS if set(b.markers) - MARKERS}
    assert not unknown, f"unknown info-string markers (known: {sorted(MARKERS)}): {unknown}"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_example(block: CodeBlock, tmp_path: Path):
    if "gpu" in block.markers:
        reason = _gpu_unavailable()
        if reason is not None:
            pytest.skip(f"{block.id}: marked 'python gpu': {reason}")
    try:
        proc = run_block(block, tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.id}: still running after {TIMEOUT_S} s; a README example should be quick")
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
