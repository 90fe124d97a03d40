"""Batching: :func:`vmap`, the vectorizing map (JAX's ``vmap``, ``torch.func.vmap``).

A :class:`BatchTracer` holds a value with one extra axis, the batch axis ``bdim`` (``None``:
not mapped), and shows the per-example value's aval to the code it runs through. Each
primitive applied to batch tracers calls its batching rule (``Primitive.def_batch``),
``rule(axis_size, args, dims, **params) -> (out, out_dim)``: the arguments with their batch
axes (``None`` for unmapped ones), the result and where its batch axis is (one per output for
primitives with several results). A rule runs the batched computation in one application
(a batch label for a contraction, a trailing batch for linalg): no loop over examples. A
primitive without a rule raises :class:`MissingRuleError` naming it.

Batching composes with the other transformations by levels, as JVP does (autodidax):
``vmap(grad(f))``, ``grad(vmap(f))`` and ``vmap(vmap(f))`` each run the inner
transformation's rules on the outer one's tracers. The value type moves and inserts axes
through its :class:`VSpace` (``ndim``, ``axis_size``, ``unbatched_aval``, ``move_axis``,
``broadcast_axis``), so tidu knows nothing of arrays.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

from ._core import Primitive, Trace, new_trace
from ._errors import InvalidArgumentError, MissingRuleError, RuleError, UnbatchableError, UnregisteredTypeError
from ._pytree import PyTreeDef, dict_keys, is_namedtuple_class, tree_flatten, tree_unflatten
from ._tracer import Tracer, aval_of, vspace_of
from ._vspace import vspace_of_aval

__all__ = ["BatchTrace", "BatchTracer", "vmap", "move_batch_axis", "broadcast_batch"]


class BatchTracer(Tracer):
    """A value with a batch axis ``bdim`` (``None``: the same value for every example)."""

    __slots__ = ("val", "bdim", "_aval")

    def __init__(self, trace: "BatchTrace", val: Any, bdim: int | None):
        self._trace = trace
        self.val = val
        self.bdim = bdim
        self._aval = None

    @property
    def aval(self) -> Any:
        a = self._aval
        if a is None:
            a = aval_of(self.val)
            if self.bdim is not None:
                a = vspace_of_aval(a).unbatched_aval(a, self.bdim)
            self._aval = a
        return a

    def __repr__(self) -> str:
        return f"BatchTracer(val={self.val!r}, bdim={self.bdim})"


class BatchTrace(Trace):
    """The trace of one :func:`vmap`: ``axis_size`` examples."""

    __slots__ = ("axis_size",)

    def __init__(self, axis_size: int):
        super().__init__()
        self.axis_size = axis_size

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> Any:
        vals, dims = [], []
        for a in args:
            if type(a) is BatchTracer and a._trace is self:
                vals.append(a.val)
                dims.append(a.bdim)
            else:
                vals.append(a)
                dims.append(None)
        if all(d is None for d in dims):
            return prim.bind(*vals, **params)
        rule = prim.batch_rule
        if rule is None:
            raise MissingRuleError(
                f"vmap: primitive '{prim.name}' has no batching rule, so a function that applies it cannot be "
                "vectorized (register one with Primitive.def_batch; meanwhile map with a Python loop)"
            )
        out, out_dims = rule(self.axis_size, vals, dims, **params)
        if prim.multiple_results:
            if len(out) != len(out_dims):
                raise RuleError(
                    f"vmap: the batching rule of '{prim.name}' returned {len(out)} results but "
                    f"{len(out_dims)} batch axes"
                )
            return [self._wrap(o, d) for o, d in zip(out, out_dims)]
        return self._wrap(out, out_dims)

    def _wrap(self, value: Any, bdim: int | None) -> Any:
        return value if bdim is None else BatchTracer(self, value, bdim)


# ---- helpers for batching rules ----------------------------------------------------------
def move_batch_axis(x: Any, bdim: int | None, dst: int, axis_size: int) -> Any:
    """``x`` with its batch axis at ``dst`` (negative counts from the end of the batched
    value); an unmapped ``x`` (``bdim is None``) gets a new axis of ``axis_size`` there."""
    vs = vspace_of(x)
    a = aval_of(x)
    if bdim is None:
        n = vs.ndim(a) + 1
        return vs.broadcast_axis(x, axis_size, dst % n)
    n = vs.ndim(a)
    dst %= n
    return x if dst == bdim else vs.move_axis(x, bdim, dst)


def broadcast_batch(x: Any, bdim: int | None, axis_size: int) -> Any:
    """``x`` with its batch axis last (inserted for an unmapped ``x``)."""
    return move_batch_axis(x, bdim, -1, axis_size)


# ---- vmap ----------------------------------------------------------------------------------
def _prefix_axes(axes: Any, tree: PyTreeDef, what: str, path: str) -> list:
    """One axis (int or None) per leaf of ``tree`` from the prefix tree ``axes``."""
    if axes is None or (isinstance(axes, int) and not isinstance(axes, bool)):
        return [axes] * tree.num_leaves
    if isinstance(axes, (tuple, list)) and (
        tree.node in (tuple, list) or (tree.node is not None and is_namedtuple_class(tree.node))
    ):
        if len(axes) != len(tree.children):
            raise InvalidArgumentError(
                f"vmap: {what}{path} has {len(axes)} entries but the value there has "
                f"{len(tree.children)}; give one axis (int or None) per entry or one for all"
            )
        out: list = []
        for k, (ax, child) in enumerate(zip(axes, tree.children)):
            out += _prefix_axes(ax, child, what, f"{path}[{k}]")
        return out
    if isinstance(axes, dict) and dict_keys(tree) is not None:
        keys = list(dict_keys(tree))
        if sorted(axes) != sorted(keys):
            raise InvalidArgumentError(
                f"vmap: {what}{path} has keys {sorted(axes)} but the value there has {sorted(keys)}"
            )
        out = []
        for key, child in zip(keys, tree.children):
            out += _prefix_axes(axes[key], child, what, f"{path}[{key!r}]")
        return out
    raise InvalidArgumentError(
        f"vmap: {what}{path} must be an int, None, or a tuple/list/dict prefix of the value's structure; got "
        f"{axes!r} for a value of structure {tree}"
    )


def _normalize(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"vmap: {what} {axis} is out of range for a value with {ndim} axes")
    return axis % ndim


def _leaf_paths(tree: PyTreeDef, prefix: str = "") -> list[str]:
    """Where each leaf of ``tree`` sits (``[0]['w']``), depth first."""
    if tree.node is None:
        return [prefix]
    keys = dict_keys(tree) or range(len(tree.children))
    out: list[str] = []
    for key, child in zip(keys, tree.children):
        out += _leaf_paths(child, f"{prefix}[{key!r}]")
    return out


def _arg_labels(tree: PyTreeDef, ktree: PyTreeDef | None) -> list[str]:
    """Each input leaf named for a message: ``argument 1``, ``argument 0[2]``, ``keyword argument 'b'``."""
    labels = [f"argument {i}{p}" for i, child in enumerate(tree.children) for p in _leaf_paths(child)]
    if ktree is not None:
        labels += [
            f"keyword argument {key!r}{p}" for key, child in zip(ktree.aux, ktree.children) for p in _leaf_paths(child)
        ]
    return labels


def _constant_fix(in_axes: Any, nargs: int, label: str) -> str:
    """How to pass the argument of ``label`` as a constant (its ``in_axes`` entry None)."""
    if not label.startswith("argument "):
        return (
            "pass it positionally with in_axes=None for it, or bind it with functools.partial, to use it "
            "unchanged in every example"
        )
    i = int(label.split()[1].split("[")[0])
    if nargs == 1 or in_axes is None:
        return "pass in_axes=None and axis_size=<number of examples> to use it unchanged in every example"
    if isinstance(in_axes, int) and "[" not in label:
        axes = tuple(None if k == i else in_axes for k in range(nargs))
        return f"pass in_axes={axes!r} to use it unchanged in every example"
    return "set its entry of in_axes to None to use it unchanged in every example"


def _an(word: str) -> str:
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _batchable(x: Any) -> tuple[Any, Any, int, str]:
    """``x``'s vector space, aval and number of axes; (None, None, 0, why) when vmap cannot batch it."""
    try:
        vs = vspace_of(x)
    except UnregisteredTypeError:
        return None, None, 0, "no vector space is registered for its type (tidu.register_vspace)"
    a = aval_of(x)
    try:
        return vs, a, vs.ndim(a), ""
    except NotImplementedError:
        return None, None, 0, f"its vector space {type(vs).__name__} has no batching methods (VSpace.ndim)"


def _unmappable(x: Any, ax: int, label: str, why: str, fix: str, tree: PyTreeDef) -> UnbatchableError:
    what, axis = "it", f"axis {ax}"
    if label.startswith("keyword "):
        axis += " (keyword arguments are always mapped over their axis 0, as in JAX)"
    elif "[" in label:  # a leaf of a container argument
        arg = label.split("[")[0]
        node = tree.children[int(arg.split()[1])].node
        if node in (list, tuple):
            what = arg
            why += (
                f"; {arg} is {_an(node.__name__)}, and vmap maps each of its entries separately, not the "
                f"{node.__name__} as one array"
            )
    return UnbatchableError(
        f"vmap: {label} is {_an(type(x).__name__)}, which vmap cannot map over {axis}: {why}. Convert {what} to "
        f"a tensor of a registered type (e.g. tenferro.asarray(...)) to map over it, or {fix}"
    )


def _output(val: Any, label: str, flat: list, size: int) -> tuple[Any, Any]:
    """An output that no mapped input reaches, with its vector space: a value of a registered type
    as is, a number as a 0-d value of an input's type (JAX's broadcast of constants)."""
    vs, _, _, why = _batchable(val)
    if vs is not None:
        return val, vs
    t = type(val).__name__
    if not isinstance(val, numbers.Number):
        reason = "" if why.startswith("no vector space") else f" ({why})"
        raise UnbatchableError(
            f"vmap's {label} is {_an(t)}{reason}; vmap returns tensors and numbers (stacked along "
            f"out_axes): return a tensor, or build the {t} outside the vmapped function"
        )
    for x in flat:
        host, a, _, _ = _batchable(x)
        if host is None:
            continue
        try:
            value = host.scalar(val, a)
        except NotImplementedError:
            continue
        return value, vspace_of(value)
    raise UnbatchableError(
        f"vmap's {label} is the {t} {val!r}, the same for all {size} examples, and no argument's type can hold "
        "a number to broadcast it (VSpace.scalar); return a tensor, or pass out_axes=None for it to return it "
        "unchanged"
    )


def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None) -> Callable:
    """Vectorize ``f`` over an axis of its arguments (JAX's meaning).

    ``in_axes``: an int (every positional argument mapped over that axis), ``None`` (not
    mapped: a constant, of any type) or a tuple/list/dict prefix of the positional arguments
    giving one per argument or leaf; negative axes count from the end. Keyword arguments are
    always mapped over their axis 0 (as in JAX). ``out_axes``: where the batch axis goes in
    each output, alike (``None``: the output is the same for every example, and must not
    depend on a mapped input); an output that no mapped input reaches (a tensor, or a number,
    made a tensor of an argument's type) is broadcast along it. ``axis_size``: the number of
    examples when no argument is mapped. Pytrees (MPS, structured tensors) map leaf by leaf.
    Each primitive runs once on the whole batch through its batching rule (see the module);
    one without a rule raises :class:`MissingRuleError`. A mapped argument vmap cannot batch
    (an int, a list of numbers, a NumPy array) or a string output raises :class:`UnbatchableError`.
    """
    if not callable(f):
        raise InvalidArgumentError(f"vmap expects a callable, got {type(f).__name__}")
    if axis_size is not None and (not isinstance(axis_size, int) or isinstance(axis_size, bool) or axis_size < 0):
        raise InvalidArgumentError(f"vmap: axis_size must be a non-negative int or None, got {axis_size!r}")

    def batched(*args: Any, **kwargs: Any) -> Any:
        flat, tree = tree_flatten(args)
        axes = _prefix_axes(in_axes, tree, "in_axes", "")
        npos, ktree = len(flat), None
        if kwargs:  # mapped over axis 0, as in JAX
            kflat, ktree = tree_flatten(kwargs)
            flat, axes = flat + kflat, axes + [0] * len(kflat)

        def label(k: int) -> str:
            return _arg_labels(tree, ktree)[k]

        sizes: dict[int, int] = {}
        for k, (x, ax) in enumerate(zip(flat, axes)):
            if ax is None:
                continue
            vs, a, ndim, why = _batchable(x)
            if vs is None:
                raise _unmappable(x, ax, label(k), why, _constant_fix(in_axes, len(args), label(k)), tree)
            if k >= npos and ndim == 0:
                raise UnbatchableError(
                    f"vmap: {label(k)} has no axes, but keyword arguments are always mapped over "
                    f"their axis 0 (as in JAX); {_constant_fix(in_axes, len(args), label(k))}"
                )
            if not -ndim <= ax < ndim:
                _normalize(ax, ndim, f"in_axes entry for {label(k)}:")  # raises, naming the argument
            axes[k] = ax = ax % ndim
            sizes[k] = vs.axis_size(a, ax)
        found = set(sizes.values())
        if len(found) > 1:
            named = ", ".join(f"{label(k)}: {n}" for k, n in sizes.items())
            raise InvalidArgumentError(
                f"vmap got inconsistent sizes for the mapped axis ({named}); every mapped "
                "argument needs the same extent along its mapped axis"
            )
        if axis_size is not None and found and found != {axis_size}:
            raise InvalidArgumentError(f"vmap: axis_size={axis_size} but the mapped arguments have size {found.pop()}")
        if not found and axis_size is None:
            raise InvalidArgumentError("vmap: no argument is mapped (in_axes all None), so give axis_size")
        size = found.pop() if found else axis_size
        with new_trace(BatchTrace(size)) as trace:
            ins = [x if ax is None else BatchTracer(trace, x, ax) for x, ax in zip(flat, axes)]
            kw = {} if ktree is None else tree_unflatten(ktree, ins[npos:])
            out = f(*tree_unflatten(tree, ins[:npos]), **kw)
            out_flat, out_tree = tree_flatten(out)
            oaxes = _prefix_axes(out_axes, out_tree, "out_axes", "")
            res = []
            for j, (o, oa) in enumerate(zip(out_flat, oaxes)):
                val, d = (o.val, o.bdim) if type(o) is BatchTracer and o._trace is trace else (o, None)
                if oa is None:
                    if d is not None:
                        raise InvalidArgumentError(
                            "vmap: out_axes is None for an output that depends on a mapped "
                            "input (it differs between examples)"
                        )
                    res.append(val)
                    continue
                if d is None:
                    where = "output" + ("" if out_tree.node is None else _leaf_paths(out_tree)[j])
                    val, vs = _output(val, where, flat, size)
                else:
                    vs = vspace_of(val)
                n = vs.ndim(aval_of(val)) + (1 if d is None else 0)
                res.append(move_batch_axis(val, d, _normalize(oa, n, "out_axes entry"), size))
        return tree_unflatten(out_tree, res)

    batched.__name__ = f"vmap_{getattr(f, '__name__', 'f')}"
    batched.__doc__ = f.__doc__
    return batched
