"""A griffe extension for the API reference: the docstrings' Sphinx markup as Markdown.

The docstrings of the three packages are Sphinx-style prose: roles (``:func:`dmrg```,
``:class:`~tenferro.Tensor```), ``double backticks`` and doctest examples (``>>>``) without a
fence. Markdown reads ``double backticks`` as code already; this extension rewrites the rest
once the packages are loaded, before mkdocstrings renders them:

* a role becomes an optional cross-reference, ``<autoref identifier="..." optional>``: a link
  where the target is rendered in the API reference, plain code otherwise (never a warning).
  The target is resolved as Sphinx would: as written, then relative to the object's module,
  its parent and its package (``~`` shows the last component only);
* a run of doctest lines (``>>>`` and ``...`` with their output, up to a blank line) becomes a
  fenced ``pycon`` block, so that ``sorted(row)[:3]`` followed by ``['X', ...]`` is not read as
  a Markdown link.

The source files are not touched. Configured in ``mkdocs.yml`` (the ``extensions`` option of
the mkdocstrings Python handler).
"""

from __future__ import annotations

import html
import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?P<role>func|class|mod|meth|attr|data|exc|obj|const):`(?P<target>[^`]+)`")
_PROMPT = re.compile(r"^(?P<indent>[ \t]*)>>>( |$)")


def _exists(loader: griffe.GriffeLoader, path: str) -> bool:
    try:
        loader.modules_collection.get_member(path)
    except (KeyError, ValueError, AttributeError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return False
    return True


def _resolve(loader: griffe.GriffeLoader, obj: griffe.Object, target: str) -> str:
    """The full path a role's target names, seen from ``obj`` (``target`` itself when none exists)."""
    module = obj if obj.is_module else obj.module
    package = module.path.split(".")[0]
    if target.startswith("."):  # relative to the object's package
        base = module.path if module.is_package else module.path.rpartition(".")[0]
        stripped = target.lstrip(".")
        for _ in range(len(target) - len(stripped) - 1):
            base = base.rpartition(".")[0]
        return f"{base}.{stripped}" if base else stripped
    candidates = [target]
    for scope in (obj, obj.parent, module, module.parent):
        if scope is not None:
            candidates.append(f"{scope.path}.{target}")
    candidates.append(f"{package}.{target}")
    for path in candidates:
        if _exists(loader, path):
            return path
    return target


def _role(loader: griffe.GriffeLoader, obj: griffe.Object, match: re.Match) -> str:
    target = match["target"].strip()
    short = target.startswith("~")
    target = target.lstrip("~")
    if match["role"] in ("func", "meth") and target.endswith("()"):
        target = target[:-2]
    shown = target.rpartition(".")[2] if short else target
    if match["role"] in ("func", "meth"):
        shown += "()"
    identifier = _resolve(loader, obj, target)
    return f'<autoref identifier="{html.escape(identifier)}" optional><code>{html.escape(shown)}</code></autoref>'


def _fence_doctests(text: str) -> str:
    """Wrap each run of doctest lines (a ``>>>`` line up to the next blank line) in a pycon fence."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        m = None if in_fence else _PROMPT.match(line)
        if m is None:
            out.append(line)
            i += 1
            continue
        indent = m["indent"]
        if out and out[-1].strip():
            out.append("")
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


def convert(text: str, loader: griffe.GriffeLoader, obj: griffe.Object) -> str:
    """The Markdown form of one docstring's Sphinx markup."""
    text = _fence_doctests(text)
    return _ROLE.sub(lambda m: _role(loader, obj, m), text)


def _objects(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if member.is_alias:
            continue
        yield from _objects(member)


class SphinxMarkup(griffe.Extension):
    """Rewrite every docstring of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = convert(obj.docstring.value, loader, obj)
