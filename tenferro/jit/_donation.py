"""Buffer donation (``tenferro.jit(f, donate_argnums=...)``), with JAX's contract.

A donated argument's buffer belongs to the program: the generated code may write
its results into it, and after the call the argument tensor is **deleted**: it
holds a :class:`_DonatedBuffer` instead of its array, so any later use (an
operation, ``.numpy()``, printing, passing it to ``jit`` again) raises
:class:`DeletedTensorError` naming the call it was donated to. When the call
raises, an argument whose buffer the program had not yet written into (it writes
only from a line known when it is generated) stays valid; one it had is deleted.

Donation takes a buffer only when the tensor owns it exclusively, which CPython
can tell exactly: the array owns its memory (or is a view of an owner nothing
else references), is writeable and column-major contiguous, is not passed twice,
and no other object references it (its reference count: a NumPy array the caller
holds, ``asarray`` of an F-ordered or 1-d array, the array ``.numpy()`` returned,
a view, another tensor over the same array, a constant of the compiled function
each hold one).
Otherwise the call donates a private copy instead (as JAX, which warns "Some
donated buffers were not usable"), warns with :class:`DonationWarning` naming the
argument and the reason, and the argument stays valid. A program that writes into
no argument (:attr:`Program.writes_inputs` false: the native backend's) needs no
copy: it consumes every donated argument as it is (a view of an earlier native
result included), except a constant of the function, which is copied as above.
An argument the user passed as a NumPy array (not a tensor) is converted first,
by a silent copy when the conversion shared the user's memory.
"""

from __future__ import annotations

import mmap
import sys
import warnings
from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np

from .._errors import TenferroError
from .._tensor import Tensor
from ._codegen import Program

__all__ = ["DeletedTensorError", "DonationWarning", "run_donating", "is_deleted"]


class DeletedTensorError(TenferroError, RuntimeError):
    """A tensor whose buffer was donated to a compiled function (``tenferro.jit(...,
    donate_argnums=...)``) was used after the call; donation consumes the argument."""


class DonationWarning(UserWarning):
    """A donated argument's buffer was not exclusively owned (a view, shared with a
    NumPy array, read-only, passed twice); the call donated a copy and the argument
    stays valid."""


class _DonatedBuffer:
    """What a donated tensor holds instead of its array: every use raises
    :class:`DeletedTensorError` (attributes, NumPy protocols, operators)."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message

    def _deleted(self, *args: Any, **kwargs: Any) -> Any:
        raise DeletedTensorError(self.message)

    def __getattr__(self, name: str) -> Any:
        raise DeletedTensorError(self.message)

    @property
    def __class__(self) -> type:  # so that isinstance(buffer, np.ndarray) raises too
        raise DeletedTensorError(self.message)

    def __repr__(self) -> str:
        return "<deleted buffer>"


for _name in (
    "__array__",
    "__array_ufunc__",
    "__array_function__",
    "__dlpack__",
    "__dlpack_device__",
    "__len__",
    "__iter__",
    "__getitem__",
    "__setitem__",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__complex__",
    "__neg__",
    "__pos__",
    "__abs__",
    "__invert__",
    *(
        f"__{p}{op}__"
        for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor")
        for p in ("", "r", "i")
    ),
):
    setattr(_DonatedBuffer, _name, _DonatedBuffer._deleted)


def is_deleted(x: Tensor) -> bool:
    """True when ``x``'s buffer was donated to a compiled function (any use raises)."""
    return type(x) is Tensor and type(x._data) is _DonatedBuffer


# ---------------------------------------------------------------------------
# ownership
# ---------------------------------------------------------------------------
def _refcount(t: Tensor) -> int:
    return sys.getrefcount(t._data)


def _base_refcount(a: Any) -> int:
    return sys.getrefcount(a.base)


_OWNED = _refcount(Tensor._wrap(np.empty(1)))
"""References to the array of a tensor that alone holds it, as :func:`_refcount` counts them."""
_VIEWED = _base_refcount(np.empty(2)[:1])
"""References to the owner of a view that alone holds it, as :func:`_base_refcount` counts them."""


def _maps_a_file(a: Any) -> bool:
    b = a
    while b is not None:
        if isinstance(b, (np.memmap, mmap.mmap)):
            return True
        b = getattr(b, "base", None) if isinstance(b, np.ndarray) else None
    return False


def _is_constant(t: Tensor, consts: Sequence[Any]) -> bool:
    """Whether ``t`` (or its array) is a constant the compiled function closes over."""
    return any(c is t or type(c) is Tensor and c._data is t._data for c in consts)


def _not_owned(t: Tensor, seen: Counter, consts: Sequence[Any]) -> str | None:
    """Why the program may not take ``t``'s buffer (``None``: it may)."""
    shared = _refcount(t) > _OWNED  # (first: the local below is one more reference)
    a = t._data
    flags = a.flags
    if not getattr(flags, "writeable", True):
        return "it is read-only" + (" (a memory-mapped file)" if _maps_a_file(a) else "")
    if _maps_a_file(a):
        return "it maps a file"
    if seen[id(a)] > 1:
        return "the same buffer is passed as another argument too"
    if _is_constant(t, consts):
        return "it is a constant the compiled function closes over"
    if shared:
        return (
            "its buffer is shared with another object (a NumPy array the caller holds: asarray of an "
            "F-ordered or 1-d array and .numpy() share memory; a view; another tensor over the same array)"
        )
    if not flags.f_contiguous:
        return "it is not a column-major contiguous buffer (the program writes its results in that layout)"
    if not flags.owndata:  # a NumPy view: fine when its owner is referenced by nothing else
        if (
            type(a) is not np.ndarray
            or _base_refcount(a) > _VIEWED
            or type(a.base) is not np.ndarray
            or not a.base.flags.owndata
        ):
            return (
                "it does not own its buffer (a view, or memory imported through DLPack), whose owner "
                "something else may still reference"
            )
    return None


# ---------------------------------------------------------------------------
# the donor
# ---------------------------------------------------------------------------
def run_donating(run: Callable[..., list], leaves: list, donation: Any) -> list:
    """Run ``run`` (compiled with ``donation.donate``) on ``leaves``: each donated
    leaf it may take is consumed (deleted after the call), any other donated
    leaf is replaced by a private copy (with a :class:`DonationWarning`, unless
    the user passed a NumPy array there). When the call raises, a taken leaf
    stays valid if the program had not reached its first line writing into that
    buffer (:meth:`Program.written`; any executable that is no :class:`Program`:
    every taken leaf is deleted). ``donation`` is a :class:`tidu._staging.Donation`."""
    seen = Counter(id(x._data) for x in leaves if type(x) is Tensor)
    reads_only = isinstance(run, Program) and not run.writes_inputs
    args = list(leaves)
    taken: list[Tensor] = []
    refused: list[str] = []
    for i, (x, d) in enumerate(zip(leaves, donation.donate)):
        if not d or type(x) is not Tensor:
            continue
        why = _not_owned(x, seen, donation.consts)
        if why is None or (reads_only and not _is_constant(x, donation.consts)):
            taken.append(x)
            continue
        args[i] = x.copy()
        if not donation.converted[i]:
            refused.append(f"{donation.describe(i)}: {why}")
    if refused:
        warnings.warn(
            f"{donation.name}: some donated buffers were not usable, so a copy was donated instead and the "
            f"argument stays valid: {'; '.join(refused)}. Donate a tensor nothing else references (e.g. "
            "x.copy(), or the result of an earlier call) to save the copy.",
            DonationWarning,
            stacklevel=3,
        )
    names = {id(x): donation.describe(i) for i, x in enumerate(leaves) if any(x is t for t in taken)}
    try:
        outs = run(*args)
    except BaseException as exc:
        # the program writes into a donated buffer only from a known line on: a call that raised
        # before it leaves that argument untouched and valid; any other taken argument is consumed
        written = run.written(exc) if isinstance(run, Program) else None
        for i, x in enumerate(leaves):
            if any(x is t for t in taken) and (written is None or i in written):
                x._data = _DonatedBuffer(
                    f"this tensor was donated to {donation.name} ({names[id(x)]}), which raised "
                    f"{type(exc).__name__} after writing into its buffer, and deleted: its contents are lost. "
                    "Pass x.copy() to keep x"
                )
        raise
    # an output that is a donated argument itself (f returned it) becomes a new tensor over its buffer
    outs = [Tensor._wrap(o._data) if any(o is x for x in taken) else o for o in outs]
    for x in taken:
        x._data = _DonatedBuffer(
            f"this tensor was donated to {donation.name} ({names[id(x)]}) and deleted: its buffer belongs to "
            "that call's outputs now. Donation consumes the argument (as in JAX): use the call's result, "
            "or pass x.copy() to keep x"
        )
    return outs
