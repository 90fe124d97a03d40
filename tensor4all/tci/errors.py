"""Typed errors of tensor cross interpolation (:mod:`tensor4all.tci`).

Each names what was wrong (the local dimension, the pivot, the multi-index where the
function gave NaN, the shape it returned) and what was expected. All derive from
:class:`TCIError`, itself a :class:`~tensor4all.Tensor4allError` and a ``ValueError``,
except :class:`TCITypeError`, a ``TypeError`` (an argument of the wrong kind).
"""

from __future__ import annotations

from ..tools.errors import InvalidOptionError, NonFiniteError, Tensor4allError, Tensor4allTypeError

__all__ = [
    "TCIError",
    "LocalDimsError",
    "MultiIndexError",
    "MultiIndexOutOfRangeError",
    "FunctionValueError",
    "FunctionShapeError",
    "NonFiniteValueError",
    "ZeroFunctionError",
    "TCIOptionError",
    "TCITypeError",
]


class TCIError(Tensor4allError, ValueError):
    """Bad input to tensor cross interpolation (base of the classes below)."""


class LocalDimsError(TCIError):
    """``local_dims`` that is empty or holds a dimension below 1."""


class MultiIndexError(TCIError):
    """An initial pivot (or an index given to ``tt_evaluate``) that is not a multi-index
    with one entry per site."""


class MultiIndexOutOfRangeError(MultiIndexError, IndexError):
    """An initial pivot (or an index given to ``tt_evaluate``) with an entry outside
    ``0 .. local_dims[k] - 1``; the message names the pivot, the site and the range."""


class FunctionValueError(TCIError):
    """The interpolated function returned something that is not a number."""


class FunctionShapeError(FunctionValueError):
    """In batched mode, the function returned an array of the wrong shape (it must
    return one value per multi-index: shape ``(n,)``)."""


class NonFiniteValueError(FunctionValueError, NonFiniteError):
    """The function returned NaN or infinity; the message names the multi-index."""


class ZeroFunctionError(TCIError):
    """The function is zero at every initial pivot, so the interpolation has nothing to
    start from: give ``initial_pivots`` where it is not zero."""


class TCIOptionError(TCIError, InvalidOptionError):
    """An option outside its valid values (a relative ``tolerance`` outside (0, 1), an
    absolute one ``<= 0``, an unknown ``pivot_search``, ``max_iter < 1``); the message lists
    what is accepted."""


class TCITypeError(Tensor4allTypeError):
    """An argument of the wrong kind (a function that is not callable, local dimensions
    that are not integers, a tolerance that is not a number, an MPS expected)."""
