"""Typed errors of tensor4all: one base class, and the subclasses for the kinds of bad input
every layer meets (options, types, shapes, sites, non-finite values, memory). Errors of one
feature live beside it: files (:mod:`tensor4all.networks.files`), scans
(:mod:`tensor4all.scans.errors`), local spaces and charges (:mod:`tensor4all.sites`), operator
sums (:mod:`tensor4all.operators.opsum`), TCI (:mod:`tensor4all.tci.errors`), structured tensors
(:mod:`tensor4all.structured`); ``tensor4all`` exports them all.

Every error names what was wrong and what was expected. The subclasses also derive
from the matching built-in exception (``ValueError``, ``TypeError``, ``IndexError``,
``KeyError``, ``FileNotFoundError``) so generic handlers keep working; code raises a
subclass, never :class:`Tensor4allError` itself.
"""

from __future__ import annotations

__all__ = [
    "Tensor4allError",
    "SiteOutOfRangeError",
    "DimensionMismatchError",
    "BondDimensionError",
    "NonHermitianError",
    "NotDifferentiableError",
    "Tensor4allTypeError",
    "InvalidOptionError",
    "NonFiniteError",
    "ZeroNormError",
    "ValueRangeError",
    "NoOrthogonalStateError",
    "Tensor4allMemoryError",
    "OptionalDependencyError",
]


class Tensor4allError(Exception):
    """Base class of every error raised by tensor4all."""


class SiteOutOfRangeError(Tensor4allError, IndexError):
    """A site or bond index outside the chain."""


class DimensionMismatchError(Tensor4allError, ValueError):
    """Shapes that do not fit together (bond or physical dimensions)."""


class BondDimensionError(Tensor4allError, ValueError):
    """A bond dimension or a number of sites that is not a positive integer."""


class NonHermitianError(Tensor4allError, ValueError):
    """A Hamiltonian that is not Hermitian where one is required (dmrg)."""


class NotDifferentiableError(Tensor4allError, TypeError):
    """An operation that tensor4all does not differentiate was given traced values."""


class Tensor4allTypeError(Tensor4allError, TypeError):
    """An argument of the wrong kind (an MPS where an MPO is expected, ...)."""


class InvalidOptionError(Tensor4allError, ValueError):
    """An option outside its valid values (an unknown eigensolver, model or spin; a
    negative cutoff); the message lists what is accepted."""


class NonFiniteError(Tensor4allError, ValueError):
    """NaN or infinity where finite values are needed: a coupling, an OpSum coefficient,
    an MPS or MPO site tensor, an operator matrix, a dense vector. The message names
    which one (and the site)."""


class ZeroNormError(Tensor4allError, ValueError):
    """A state of norm zero where a normalized one is needed (``MPS.normalize``,
    expectation values, correlations, Schmidt values, a DMRG start state)."""


class ValueRangeError(Tensor4allError, OverflowError):
    """A computation whose results would leave the floating-point range (a Hamiltonian
    whose energies exceed about 1e308); the message says how to rescale."""


class NoOrthogonalStateError(Tensor4allError, ValueError):
    """No state orthogonal to the given ones was found where one was asked for: the sector holds
    no more states than ``excited_states``'s ``n`` (or than ``dmrg``'s ``orthogonal_to``), or the
    sweeps ended with a state that still overlaps one of them; the message names the overlap or the
    sector's size."""


class Tensor4allMemoryError(Tensor4allError, MemoryError):
    """An array that cannot be allocated (a dense vector or matrix of a long chain, a
    random MPS with huge bonds); the message names the bytes."""


class OptionalDependencyError(Tensor4allError, ImportError):
    """A function that needs an optional extra that is not installed (``tensor4all.scan``
    without Dask: the ``distributed`` extra); the message names the extra and the
    ``pip install`` line."""
