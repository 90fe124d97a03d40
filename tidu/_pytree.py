"""Pytrees: nested containers whose leaves are the values transforms act on.

Containers are tuples, lists, dicts (keys sorted), ``None`` (a node with no
children, as in JAX), namedtuples (children: the fields, rebuilt as the same
namedtuple type), ``collections.OrderedDict`` (keys in their order) and
``collections.defaultdict`` (keys sorted; the ``default_factory`` is kept), as in
JAX, and any type registered with :func:`register_pytree_node`. Everything else
is a leaf (other subclasses of these containers included, as in JAX).
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Hashable, Iterable, NamedTuple

from ._errors import InvalidArgumentError, TreeStructureError

__all__ = [
    "PyTreeDef",
    "tree_flatten",
    "tree_unflatten",
    "tree_map",
    "tree_leaves",
    "tree_structure",
    "register_pytree_node",
]


class _NodeType(NamedTuple):
    name: str
    flatten: Callable[[Any], tuple[Iterable[Any], Hashable]]
    unflatten: Callable[[Hashable, list[Any]], Any]


_registry: dict[type, _NodeType] = {}


def register_pytree_node(
    nodetype: type,
    flatten: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten: Callable[[Hashable, list[Any]], Any],
) -> None:
    """Register ``nodetype`` as a pytree container.

    ``flatten(node) -> (children, aux)`` where ``aux`` is hashable static data;
    ``unflatten(aux, children) -> node``.
    """
    if not isinstance(nodetype, type):
        raise InvalidArgumentError(
            f"register_pytree_node: nodetype must be a class, got {nodetype!r} of type {type(nodetype).__name__}"
        )
    for name, fn in (("flatten", flatten), ("unflatten", unflatten)):
        if not callable(fn):
            raise InvalidArgumentError(f"register_pytree_node: {name} must be callable, got {fn!r}")
    _registry[nodetype] = _NodeType(nodetype.__qualname__, flatten, unflatten)


def _dict_flatten(d: dict) -> tuple[list, tuple]:
    try:
        keys = tuple(sorted(d))
    except TypeError:  # keys of kinds that do not order ({1: x, "a": y}): JAX refuses them too
        kinds = sorted({type(k).__name__ for k in d})
        raise InvalidArgumentError(
            f"a dict in a pytree needs keys that sort (its children are ordered by key), got keys of the "
            f"kinds {', '.join(kinds)}; use keys of one kind (all str, or all int)"
        ) from None
    return [d[k] for k in keys], keys


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda l: (l, None), lambda _, c: list(c))
register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda n: ((), None), lambda _, c: None)
register_pytree_node(
    collections.OrderedDict,
    lambda d: (list(d.values()), tuple(d)),
    lambda keys, c: collections.OrderedDict(zip(keys, c)),
)


def _defaultdict_flatten(d: collections.defaultdict) -> tuple[list, tuple]:
    children, keys = _dict_flatten(d)
    return children, (d.default_factory, keys)


register_pytree_node(
    collections.defaultdict, _defaultdict_flatten, lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c))
)

#: the node type of each namedtuple class met so far (made on first use)
_namedtuples: dict[type, _NodeType] = {}


def is_namedtuple_class(cls: type) -> bool:
    """True for a class made by ``collections.namedtuple`` or ``typing.NamedTuple`` (a
    ``tuple`` subclass with ``_fields``), which is a pytree node as in JAX."""
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def node_type(cls: type) -> _NodeType | None:
    """How ``cls`` flattens and unflattens, or ``None`` when its values are leaves. A
    registration wins; an unregistered namedtuple class is a node with its fields as
    children."""
    nt = _registry.get(cls)
    if nt is None and cls not in _namedtuples and is_namedtuple_class(cls):
        _namedtuples[cls] = _NodeType(cls.__qualname__, lambda t: (tuple(t), None), lambda _, c: cls(*c))
    return nt if nt is not None else _namedtuples.get(cls)


def dict_keys(treedef: "PyTreeDef") -> tuple | None:
    """The keys of a dict node's children in order (``dict``, ``OrderedDict``, ``defaultdict``),
    or ``None`` for any other node."""
    if treedef.node is dict or treedef.node is collections.OrderedDict:
        return treedef.aux
    if treedef.node is collections.defaultdict:
        return treedef.aux[1]
    return None


class PyTreeDef:
    """The structure of a pytree: node types, static data and where leaves go."""

    __slots__ = ("node", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node: type | None, aux: Hashable, children: tuple["PyTreeDef", ...]):
        self.node = node  # None means "leaf"
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if node is None else sum(c.num_leaves for c in children)
        self._hash = None

    def _key(self):
        return (self.node, self.aux, self.children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        if self.node is None:
            return "*"
        inner = ", ".join(c._str() for c in self.children)
        if self.node is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node is list:
            return f"[{inner}]"
        if self.node is dict:
            return "{" + ", ".join(f"{k!r}: {c._str()}" for k, c in zip(self.aux, self.children)) + "}"
        if self.node is type(None):
            return "None"
        keys = dict_keys(self)
        if keys is not None:
            items = "{" + ", ".join(f"{k!r}: {c._str()}" for k, c in zip(keys, self.children)) + "}"
            if self.node is collections.defaultdict:
                return f"defaultdict({getattr(self.aux[0], '__name__', repr(self.aux[0]))}, {items})"
            return f"OrderedDict({items})"
        if self.node not in _registry and is_namedtuple_class(self.node):
            fields = ", ".join(f"{n}={c._str()}" for n, c in zip(self.node._fields, self.children))
            return f"{self.node.__qualname__}({fields})"
        return f"{self.node.__qualname__}[{self.aux!r}]({inner})"


LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree: Any) -> tuple[list[Any], PyTreeDef]:
    """Flatten ``tree`` into its leaves (depth first) and its structure."""
    leaves: list[Any] = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _flatten(tree: Any, leaves: list) -> PyTreeDef:
    nt = _registry.get(type(tree))
    if nt is None and isinstance(tree, tuple):  # a namedtuple (other tuple subclasses are leaves)
        nt = node_type(type(tree))
    if nt is None:
        leaves.append(tree)
        return LEAF
    children, aux = nt.flatten(tree)
    return PyTreeDef(type(tree), aux, tuple(_flatten(c, leaves) for c in children))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree with structure ``treedef`` from ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise TreeStructureError(
            f"tree_unflatten: structure {treedef} expects {treedef.num_leaves} leaves, got {len(leaves)}"
        )
    it = iter(leaves)
    return _unflatten(treedef, it)


def _unflatten(treedef: PyTreeDef, it) -> Any:
    if treedef.node is None:
        return next(it)
    children = [_unflatten(c, it) for c in treedef.children]
    nt = _registry.get(treedef.node) or node_type(treedef.node)
    return nt.unflatten(treedef.aux, children)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree``, depth first (``tree_flatten(tree)[0]``)."""
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> PyTreeDef:
    """The structure of ``tree`` (``tree_flatten(tree)[1]``)."""
    return tree_flatten(tree)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """Apply ``f`` leafwise; every tree in ``rest`` must have ``tree``'s structure."""
    leaves, treedef = tree_flatten(tree)
    others = []
    for i, r in enumerate(rest):
        rl, rdef = tree_flatten(r)
        if rdef != treedef:
            raise TreeStructureError(f"tree_map: argument {i + 1} has structure {rdef}, expected {treedef}")
        others.append(rl)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])
