"""Parsing einsum subscripts into a canonical integer-label :class:`Spec`.

Two input forms are accepted, as in NumPy:

* a subscripts string, ``"ij,jk->ik"``, ``"ii"``, ``"...ij,...jk"``, ``"i->ii"``;
* the interleaved form ``op0, labels0, op1, labels1, ..., [labels_out]`` whose
  labels are non-negative integers or ``Ellipsis``.

:func:`canonicalize` then resolves ellipses against the operand shapes, applies
NumPy's implicit-output rule (ellipsis dimensions first, then the labels that
occur exactly once, sorted), checks ranks and label sizes, and relabels
everything ``0, 1, 2, ...`` in order of first appearance, so that equivalent
equations (``"ij,jk"`` and ``"ab,bc"``) share one spec and one plan.

Broadcasting follows NumPy: a dimension of size 1 broadcasts against the
label's size elsewhere. It is encoded without any new operation: the size-1
dimension gets a fresh label that only its operand carries, so it is summed
away (a size-1 sum is a squeeze).

>>> spec, sizes = canonicalize(parse_subscripts("ij,jk"), [(2, 3), (3, 4)])
>>> spec
Spec(inputs=((0, 1), (1, 2)), output=(0, 2))
>>> format_spec(spec)
'ab,bc->ac'
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple, Sequence

from ._errors import EinsumOperandError, EinsumShapeError, EinsumSubscriptError
from opt_einsum import get_symbol

__all__ = [
    "Spec",
    "Parsed",
    "parse_subscripts",
    "parse_interleaved",
    "canonicalize",
    "format_spec",
    "relabel",
    "symbol",
]

ELLIPSIS = Ellipsis


class Spec(NamedTuple):
    """Canonical einsum: integer labels per input and for the output.

    Labels are ``0..n-1`` in order of first appearance. Labels may repeat within
    an input (diagonal) and within the output (diagonal embedding); a label
    shared by three or more inputs is a hyper-edge.
    """

    inputs: tuple[tuple[int, ...], ...]
    output: tuple[int, ...]


class Parsed(NamedTuple):
    """Raw parse: per-term labels (characters or ints, ``Ellipsis`` for ``...``),
    the output (``None`` = implicit), and for error messages the subscripts text
    and each label's character position (``None`` for the interleaved form)."""

    terms: tuple[tuple[Any, ...], ...]
    output: tuple[Any, ...] | None
    text: str | None = None
    positions: tuple[tuple[int, ...], ...] | None = None
    out_positions: tuple[int, ...] | None = None


#: label letters handed out so far, and the next opt_einsum symbol number to look at
_LETTERS: list[str] = []
_NEXT = [0]
_LETTERS_LOCK = threading.Lock()


def symbol(i: int) -> str:
    """The ``i``-th label letter: opt_einsum's symbols with the non-letters skipped (past the
    ASCII letters opt_einsum counts through Unicode, which holds '×' and '÷'), so that every
    generated equation parses again."""
    if i >= len(_LETTERS):
        with _LETTERS_LOCK:  # extended once, in order, whichever thread asks first
            while len(_LETTERS) <= i:
                ch = get_symbol(_NEXT[0])
                _NEXT[0] += 1
                if ch.isalpha():
                    _LETTERS.append(ch)
    return _LETTERS[i]


def format_spec(spec: Spec) -> str:
    """The spec as a subscripts string (labels ``a, b, c, ...``)."""
    ins = ",".join("".join(symbol(l) for l in t) for t in spec.inputs)
    return ins + "->" + "".join(symbol(l) for l in spec.output)


def relabel(spec: Spec) -> Spec:
    """``spec`` with labels renumbered by first appearance (the canonical form)."""
    m: dict[int, int] = {}
    ins = tuple(tuple(m.setdefault(l, len(m)) for l in t) for t in spec.inputs)
    return Spec(ins, tuple(m.setdefault(l, len(m)) for l in spec.output))


# ---------------------------------------------------------------------------
# the two input forms
# ---------------------------------------------------------------------------
def _parse_term(text: str, start: int, stop: int) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    labels: list[Any] = []
    pos: list[int] = []
    i = start
    while i < stop:
        ch = text[i]
        if ch == ".":
            if text[i : i + 3] != "..." or i + 3 > stop:
                raise EinsumSubscriptError("einsum: '.' must be part of an ellipsis '...'", text, i)
            if ELLIPSIS in labels:
                raise EinsumSubscriptError("einsum: a term may contain at most one ellipsis '...'", text, i)
            labels.append(ELLIPSIS)
            pos.append(i)
            i += 3
            continue
        if ch == " ":
            i += 1
            continue
        if not ch.isalpha():
            raise EinsumSubscriptError(
                f"einsum: invalid character {ch!r} in subscripts (labels are letters; "
                "terms are separated by ',' and the output follows '->')",
                text,
                i,
            )
        labels.append(ch)
        pos.append(i)
        i += 1
    return tuple(labels), tuple(pos)


def parse_subscripts(subscripts: str) -> Parsed:
    """Parse a subscripts string (see the module docstring)."""
    text = subscripts
    arrow = text.find("->")
    if arrow >= 0 and text.find("->", arrow + 1) >= 0:
        raise EinsumSubscriptError("einsum: subscripts contain more than one '->'", text, text.find("->", arrow + 1))
    for i, ch in enumerate(text):
        if ch == "-" and (arrow < 0 or i != arrow):
            raise EinsumSubscriptError("einsum: '-' must be followed by '>' (as in '->')", text, i)
        if ch == ">" and (arrow < 0 or i != arrow + 1):
            raise EinsumSubscriptError("einsum: '>' must follow '-' (as in '->')", text, i)
    lhs_end = arrow if arrow >= 0 else len(text)
    terms, positions = [], []
    start = 0
    while True:
        comma = text.find(",", start, lhs_end)
        stop = comma if comma >= 0 else lhs_end
        t, p = _parse_term(text, start, stop)
        terms.append(t)
        positions.append(p)
        if comma < 0:
            break
        start = comma + 1
    output = out_pos = None
    if arrow >= 0:
        if "," in text[arrow + 2 :]:
            raise EinsumSubscriptError(
                "einsum: the output (after '->') must be a single term", text, text.index(",", arrow + 2)
            )
        output, out_pos = _parse_term(text, arrow + 2, len(text))
    return Parsed(tuple(terms), output, text, tuple(positions), out_pos)


def _interleaved_term(labels: Any, where: str) -> tuple[Any, ...]:
    try:
        items = list(labels)
    except TypeError:
        raise EinsumSubscriptError(
            f"einsum: {where} must be a list of integer labels (or Ellipsis), got {type(labels).__name__}"
        ) from None
    out: list[Any] = []
    for j, l in enumerate(items):
        if l is Ellipsis:
            if Ellipsis in out:
                raise EinsumSubscriptError(f"einsum: {where} contains more than one Ellipsis (entry {j})")
            out.append(l)
            continue
        if isinstance(l, bool) or not hasattr(l, "__index__"):
            raise EinsumSubscriptError(
                f"einsum: {where} entry {j} is {l!r}; interleaved labels must be non-negative integers or Ellipsis"
            )
        v = int(l.__index__())
        if v < 0:
            raise EinsumSubscriptError(f"einsum: {where} entry {j} is {v}; labels must be non-negative")
        out.append(v)
    return tuple(out)


def parse_interleaved(args: Sequence[Any]) -> tuple[list[Any], Parsed]:
    """Split NumPy's interleaved form into operands and a :class:`Parsed`."""
    ops = list(args[0::2])
    subs = list(args[1::2])
    output = None
    if len(args) % 2 == 1:
        output = _interleaved_term(args[-1], "the output label list")
        ops = ops[:-1]
    terms = tuple(_interleaved_term(s, f"the label list of operand {k}") for k, s in enumerate(subs))
    return ops, Parsed(terms, output)


# ---------------------------------------------------------------------------
# resolution against shapes
# ---------------------------------------------------------------------------
def _raw_label_str(label: Any) -> str:
    return repr(label) if isinstance(label, str) else str(label)


MAX_LABELS = 52
"""The most dimensions one einsum operand (or the output) may have: NumPy's einsum
kernel, which runs every step, takes at most 52 distinct labels."""


def canonicalize(parsed: Parsed, shapes: Sequence[tuple[int, ...]]) -> tuple[Spec, tuple[int, ...]]:
    """Resolve ``parsed`` against operand ``shapes``: the canonical :class:`Spec`
    and the size of each canonical label. Four phases: ellipsis extents, label
    sizes (with NumPy broadcasting of size 1), the output labels, relabelling."""
    terms, text = parsed.terms, parsed.text
    if len(terms) != len(shapes):
        raise EinsumOperandError(
            f"einsum: the subscripts have {len(terms)} input term{'s' * (len(terms) != 1)} but "
            f"{len(shapes)} operand{'s' * (len(shapes) != 1)} were given"
            + (f" (subscripts {text!r})" if text is not None else "")
        )
    for k, s in enumerate(shapes):
        if len(s) > MAX_LABELS:
            raise EinsumSubscriptError(
                f"einsum: operand {k} has rank {len(s)}; one einsum term can name at most {MAX_LABELS} dimensions "
                "(the limit of NumPy's einsum, which runs each step); reshape the operand first"
            )
    ell_ext, n_ell = _ellipsis_extents(parsed, shapes)
    ell_size = _ellipsis_sizes(terms, shapes, ell_ext, n_ell)
    size_of = _label_sizes(terms, shapes, ell_ext, n_ell)
    out_raw = _output_labels(parsed, n_ell)
    return _relabel(terms, shapes, ell_ext, n_ell, ell_size, size_of, out_raw)


def _ellipsis_extents(parsed: Parsed, shapes: Sequence[tuple[int, ...]]) -> tuple[list[int], int]:
    """How many dimensions ``...`` covers in each operand, and the most of them."""
    n_ell = 0
    ell_ext: list[int] = []
    for k, (t, s) in enumerate(zip(parsed.terms, shapes)):
        named = len(t) - (ELLIPSIS in t)
        if ELLIPSIS in t:
            if len(s) < named:
                raise EinsumShapeError(
                    f"einsum: operand {k} has rank {len(s)} (shape {tuple(s)}) but its term "
                    f"{_term_text(parsed, k)} names {named} dimensions besides '...'",
                    k,
                )
            ell_ext.append(len(s) - named)
            n_ell = max(n_ell, len(s) - named)
        else:
            if len(s) != named:
                raise EinsumShapeError(
                    f"einsum: operand {k} has rank {len(s)} (shape {tuple(s)}) but its term "
                    f"{_term_text(parsed, k)} has {named} label{'s' * (named != 1)}",
                    k,
                )
            ell_ext.append(0)
    return ell_ext, n_ell


def _ellipsis_sizes(
    terms: Sequence[tuple], shapes: Sequence[tuple[int, ...]], ell_ext: list[int], n_ell: int
) -> list[int]:
    """Sizes of the ellipsis dimensions (right-aligned, NumPy broadcasting)."""
    ell_size = [1] * n_ell
    for k, (t, s) in enumerate(zip(terms, shapes)):
        if ELLIPSIS not in t:
            continue
        e = t.index(ELLIPSIS)
        m = ell_ext[k]
        for j in range(m):
            n = s[e + j]
            slot = n_ell - m + j
            if n != 1 and ell_size[slot] != 1 and ell_size[slot] != n:
                raise EinsumShapeError(
                    f"einsum: the '...' dimensions of operand {k} (shape {tuple(s)}) do not broadcast "
                    f"with the other operands: size {n} against {ell_size[slot]}",
                    k,
                )
            if n != 1:
                ell_size[slot] = n
    return ell_size


def _label_sizes(
    terms: Sequence[tuple], shapes: Sequence[tuple[int, ...]], ell_ext: list[int], n_ell: int
) -> dict[Any, int]:
    """The size of each named label (size 1 broadcasts, as in NumPy)."""
    size_of: dict[Any, int] = {}
    first_at: dict[Any, int] = {}
    for k, (t, s) in enumerate(zip(terms, shapes)):
        dims = _expand(t, ell_ext[k], n_ell)
        own: dict[Any, int] = {}
        for j, lab in enumerate(dims):
            if isinstance(lab, tuple):
                continue
            n = s[j]
            if lab in own and own[lab] != n:
                raise EinsumShapeError(
                    f"einsum: label {_raw_label_str(lab)} is repeated in operand {k} with different sizes "
                    f"{own[lab]} and {n} (shape {tuple(s)})",
                    k,
                )
            own[lab] = n
            prev = size_of.get(lab)
            if prev is None or prev == 1:
                if prev is None:
                    first_at[lab] = k
                size_of[lab] = n
            elif n != 1 and n != prev:
                raise EinsumShapeError(
                    f"einsum: label {_raw_label_str(lab)} has size {prev} in operand {first_at[lab]} but size "
                    f"{n} in operand {k} (shape {tuple(s)})",
                    k,
                )
    return size_of


def _output_labels(parsed: Parsed, n_ell: int) -> list[Any]:
    """The output's raw labels: the explicit output (``...`` expanded; a ``...``
    of zero dimensions is allowed), or NumPy's implicit one."""
    terms = parsed.terms
    all_labels = [l for t in terms for l in t if l is not ELLIPSIS]
    if parsed.output is None:
        counts: dict[Any, int] = {}
        for l in all_labels:
            counts[l] = counts.get(l, 0) + 1
        out_named = sorted(l for l, c in counts.items() if c == 1)
        return [("ell", j) for j in range(n_ell)] + out_named
    out_raw: list[Any] = []
    present = set(all_labels)
    for j, l in enumerate(parsed.output):
        if l is ELLIPSIS:
            out_raw.extend(("ell", i) for i in range(n_ell))
        elif l not in present:
            pos = parsed.out_positions[j] if parsed.out_positions is not None else None
            raise EinsumSubscriptError(
                f"einsum: output label {_raw_label_str(l)} does not appear in any input term", parsed.text, pos
            )
        else:
            out_raw.append(l)
    return out_raw


def _relabel(
    terms: Sequence[tuple],
    shapes: Sequence[tuple[int, ...]],
    ell_ext: list[int],
    n_ell: int,
    ell_size: list[int],
    size_of: dict[Any, int],
    out_raw: list[Any],
) -> tuple[Spec, tuple[int, ...]]:
    """Canonical integer labels, in order of first appearance; a dimension of size
    1 broadcast against a larger one gets its own (summed) label."""
    canon: dict[Any, int] = {}
    sizes: list[int] = []
    inputs = []
    for k, (t, s) in enumerate(zip(terms, shapes)):
        dims = _expand(t, ell_ext[k], n_ell)
        labs = []
        for j, lab in enumerate(dims):
            n = s[j]
            full = ell_size[lab[1]] if isinstance(lab, tuple) else size_of[lab]
            if n == 1 and full != 1:
                key: Any = ("bcast", k, j if isinstance(lab, tuple) else lab)  # broadcast: own summed label
                full = 1
            else:
                key = lab
            if key not in canon:
                canon[key] = len(sizes)
                sizes.append(full)
            labs.append(canon[key])
        inputs.append(tuple(labs))
    output = []
    for lab in out_raw:
        if lab not in canon:  # an ellipsis dim all of whose operands broadcast it (size 1)
            canon[lab] = len(sizes)
            sizes.append(ell_size[lab[1]])
        output.append(canon[lab])
    return Spec(tuple(inputs), tuple(output)), tuple(sizes)


def _expand(term: tuple[Any, ...], m: int, n_ell: int) -> list[Any]:
    """Term labels with ``...`` replaced by its ``m`` right-aligned ellipsis slots."""
    if ELLIPSIS not in term:
        return list(term)
    e = term.index(ELLIPSIS)
    return list(term[:e]) + [("ell", n_ell - m + j) for j in range(m)] + list(term[e + 1 :])


def _term_text(parsed: Parsed, k: int) -> str:
    if parsed.text is not None:
        return repr("".join("..." if l is ELLIPSIS else l for l in parsed.terms[k]))
    return repr(list(parsed.terms[k]))
