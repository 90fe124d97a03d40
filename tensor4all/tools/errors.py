"""Typed errors of tensor4all: one base class, one subclass per kind of bad input.

Every error names what was wrong and what was expected. The subclasses also derive
from the matching built-in exception (``ValueError``, ``TypeError``, ``IndexError``,
``KeyError``, ``FileNotFoundError``) so generic handlers keep working; code raises a
subclass, never :class:`Tensor4allError` itself.
"""
from __future__ import annotations

__all__ = [
    "Tensor4allError",
    "UnknownOperatorError",
    "UnknownLocalSpaceError",
    "SiteOutOfRangeError",
    "DimensionMismatchError",
    "BondDimensionError",
    "EmptyOpSumError",
    "OpSumTermError",
    "NonHermitianError",
    "NotDifferentiableError",
    "Tensor4allTypeError",
    "InvalidOptionError",
    "UnsupportedFileFormatError",
    "MPSFileError",
    "MPSFileNotFoundError",
    "MPSFileIOError",
    "NonFiniteError",
    "ZeroNormError",
    "ValueRangeError",
    "Tensor4allMemoryError",
    "NonConservingError",
    "OptionalDependencyError",
    "ScanFileError",
    "ScanFileIOError",
    "ScanClusterError",
    "FrozenBondsWarning",
]


class Tensor4allError(Exception):
    """Base class of every error raised by tensor4all."""


class UnknownOperatorError(Tensor4allError, KeyError):
    """An operator name that the local space does not define."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownLocalSpaceError(Tensor4allError, KeyError):
    """A local-space name that tensor4all does not know."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SiteOutOfRangeError(Tensor4allError, IndexError):
    """A site or bond index outside the chain."""


class DimensionMismatchError(Tensor4allError, ValueError):
    """Shapes that do not fit together (bond or physical dimensions)."""


class BondDimensionError(Tensor4allError, ValueError):
    """A bond dimension or a number of sites that is not a positive integer."""


class EmptyOpSumError(Tensor4allError, ValueError):
    """An OpSum without terms where an operator is needed."""


class OpSumTermError(Tensor4allError, ValueError):
    """A malformed OpSum term (not ``(coef, name, site, name, site, ...)``)."""


class NonConservingError(Tensor4allError, ValueError):
    """A Hamiltonian that does not conserve the charge a symmetric run asks for
    (``conserve="Sz"`` with a transverse field, a term without its Hermitian partner)."""


class NonHermitianError(Tensor4allError, ValueError):
    """A Hamiltonian that is not Hermitian where one is required (dmrg)."""


class NotDifferentiableError(Tensor4allError, TypeError):
    """An operation that tensor4all does not differentiate was given traced values."""


class Tensor4allTypeError(Tensor4allError, TypeError):
    """An argument of the wrong kind (an MPS where an MPO is expected, ...)."""


class InvalidOptionError(Tensor4allError, ValueError):
    """An option outside its valid values (an unknown eigensolver, model or spin; a
    negative cutoff); the message lists what is accepted."""


class UnsupportedFileFormatError(Tensor4allError, ValueError):
    """A file name or ``format=`` that names no supported file format; the message
    lists the extensions and formats that are."""


class MPSFileError(Tensor4allError, ValueError):
    """A file that holds no MPS in the layout :meth:`MPS.save` writes
    (entries ``site_0000``, ``site_0001``, ...)."""


class MPSFileNotFoundError(Tensor4allError, FileNotFoundError):
    """:meth:`MPS.load` of a path where no file exists."""


class MPSFileIOError(Tensor4allError, OSError):
    """The operating system refused to read or write an MPS file (permissions, a missing
    directory, a path that is a directory, a full disk); the message names the path."""


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


class Tensor4allMemoryError(Tensor4allError, MemoryError):
    """An array that cannot be allocated (a dense vector or matrix of a long chain, a
    random MPS with huge bonds); the message names the bytes."""


class OptionalDependencyError(Tensor4allError, ImportError):
    """A function that needs an optional extra that is not installed (``tensor4all.scan``
    without Dask: the ``distributed`` extra); the message names the extra and the
    ``pip install`` line."""


class ScanFileError(Tensor4allError, ValueError):
    """A scan's output file that cannot be resumed: not a table written by
    :func:`tensor4all.scan`, unreadable or corrupt, or a scan of another task or of other
    parameters; the message names the file and what differs."""


class ScanFileIOError(Tensor4allError, OSError):
    """The operating system refused to write a scan's output file (a missing directory, no
    permission, a full disk); the message names the path."""


class ScanClusterError(Tensor4allError, ConnectionError):
    """The Dask scheduler a scan was given by address cannot be reached; the message names
    the address and Dask's reason."""


class FrozenBondsWarning(UserWarning):
    """One-site TDVP keeps the start state's bond dimensions: started from a product state, it
    stays a product state (grow the bonds with two-site steps first)."""

