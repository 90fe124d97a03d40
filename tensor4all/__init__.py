"""tensor4all: tensor networks and structured tensors over tenferro tensors.

* :class:`MPS` -- matrix product states (site tensors ``(left, physical, right)``),
  :func:`overlap`; an MPS is a tidu pytree, so ``tidu.grad`` works over it.
* :class:`OpSum` and :class:`MPO` -- operator sums compiled to MPOs by a finite-state
  automaton and compressed (``MPO.from_opsum``); :func:`expectation`.
* :mod:`tensor4all.models` -- Heisenberg/XXZ/XX, transverse-field Ising and J1-J2 models on
  any lattice of :mod:`tensor4all.lattices` (chain, ladder, square, triangular, honeycomb);
  the Hubbard chain. Fermionic local spaces (``"fermion"``, ``"electron"``, ``"tj"``) get
  their Jordan-Wigner strings in ``MPO.from_opsum`` automatically.
* :func:`dmrg` -- two-site and one-site (subspace expansion) DMRG; its energy is
  differentiable in the couplings (Hellmann-Feynman).
* :func:`tdvp`, :func:`tebd`, :func:`apply` -- time evolution (real and imaginary, dense and
  symmetric, differentiable) and MPO application; MPS sums and scaling.
* :func:`scan` and :class:`ScanTask` -- parameter scans on Dask (the ``distributed`` extra),
  one row per point in one Parquet file that a rerun resumes from.

>>> import tensor4all as t4a
>>> H = t4a.models.heisenberg(8)
>>> res = t4a.dmrg(H, max_bond=16)
>>> round(res.energy, 8)
-3.3749326
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from .tools.errors import (
    BondDimensionError,
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    NonHermitianError,
    NotDifferentiableError,
    SiteOutOfRangeError,
    Tensor4allError,
    Tensor4allMemoryError,
    Tensor4allTypeError,
    ValueRangeError,
    NoOrthogonalStateError,
    ZeroNormError,
    OptionalDependencyError,
)
from .operators.opsum import EmptyOpSumError, OpSumTermError
from .networks.files import MPSFileError, MPSFileIOError, MPSFileNotFoundError, UnsupportedFileFormatError
from .sites.local_spaces import UnknownLocalSpaceError, UnknownOperatorError
from .sites.charges import NonConservingError
from .scans.errors import ScanClusterError, ScanFileError, ScanFileIOError
from .algorithms.tdvp import FrozenBondsWarning
from .sites.local_spaces import LOCAL_SPACES, LocalSpace, local_space
from .networks.mps import MPS, add, overlap
from .operators.opsum import OpSum, Term
from .networks.mpo import MPO, expectation
from .algorithms.apply import apply
from . import lattices
from . import models
from .algorithms.dmrg import BondUpdate, DMRGResult, SweepRecord, dmrg
from .algorithms.excited import ExcitedStates, Gap, excited_states, gap
from .scans import ScanTask, scan
from .algorithms.tebd import tebd
from .algorithms.tdvp import tdvp
from .algorithms.evolution import EvolutionRecord, EvolutionResult

__all__ = [
    "MPS",
    "overlap",
    "add",
    "apply",
    "OpSum",
    "Term",
    "MPO",
    "expectation",
    "models",
    "lattices",
    "dmrg",
    "excited_states",
    "ExcitedStates",
    "gap",
    "Gap",
    "DMRGResult",
    "SweepRecord",
    "BondUpdate",
    "scan",
    "ScanTask",
    "tebd",
    "tdvp",
    "EvolutionResult",
    "EvolutionRecord",
    "LocalSpace",
    "local_space",
    "LOCAL_SPACES",
    "FrozenBondsWarning",
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
    "NoOrthogonalStateError",
    "Tensor4allMemoryError",
    "NonConservingError",
    "OptionalDependencyError",
    "ScanFileError",
    "ScanFileIOError",
    "ScanClusterError",
]

# structured tensors (diagonal, block-diagonal), shapes and the layered dispatcher
from .structured import (
    BlockDiagonal,
    DensifyError,
    DiagonalTensor,
    JaggedShape,
    MixedPlacementError,
    Nested,
    ShapeCombineError,
    SquareBlockError,
    StructuredError,
    StructuredFallbackWarning,
    StructuredShapeError,
    StructuredTensor,
    StructuredTypeError,
    TiledShape,
    TilingError,
    combine,
    einsum,
    fallback_policy,
    fallback_stats,
    get_fallback_policy,
    matmul,
    reset_fallback_stats,
    set_fallback_policy,
    to_dense,
    SymmetricTensor,
    SectorDiagonal,
    tensordot,
    SymmetryError,
    ChargeError,
    LegError,
    SectorMismatchError,
    SymmetryViolationError,
    StructuredValueError,
    ChargeTypeError,
    LegTypeError,
)
from . import linalg
from . import structured
from . import symmetry  # noqa: E402

__all__ += [
    "structured",
    "linalg",
    "StructuredTensor",
    "DiagonalTensor",
    "BlockDiagonal",
    "einsum",
    "matmul",
    "to_dense",
    "fallback_stats",
    "reset_fallback_stats",
    "fallback_policy",
    "set_fallback_policy",
    "get_fallback_policy",
    "StructuredFallbackWarning",
    "JaggedShape",
    "TiledShape",
    "Nested",
    "combine",
    "StructuredError",
    "StructuredShapeError",
    "StructuredTypeError",
    "TilingError",
    "SquareBlockError",
    "MixedPlacementError",
    "DensifyError",
    "ShapeCombineError",
    "symmetry",
    "SymmetricTensor",
    "SectorDiagonal",
    "tensordot",
    "SymmetryError",
    "ChargeError",
    "LegError",
    "SectorMismatchError",
    "SymmetryViolationError",
    "StructuredValueError",
    "ChargeTypeError",
    "LegTypeError",
]

# reference energies of the built-in models (exact diagonalization, free fermions, tables);
# the command-line program is tensor4all.cli (python -m tensor4all dmrg)
from . import references  # noqa: E402
from . import measurements  # noqa: E402  (density, correlations, entanglement per sector of a state)

__all__ += ["measurements"]

__all__ += ["references", "tci", "quantics"]
from . import tci  # noqa: E402  (tensor cross interpolation: crossinterpolate2, interpolant, tt_* helpers)
from . import quantics  # noqa: E402  (quantics grids, QTT interpolation and operators)
from . import trees  # noqa: E402  (tree tensor networks: TreeTN, tree operators, tree sweeps, tree TCI)
from .trees import Tree, TreeOperator, TreeTN, tree_crossinterpolate, tree_dmrg  # noqa: E402

__all__ += ["trees", "Tree", "TreeTN", "TreeOperator", "tree_dmrg", "tree_crossinterpolate"]
from .networks.interchange import from_quimb, from_tenpy, mpo_from_quimb, mpo_from_tenpy  # noqa: E402
from .networks.interchange import mpo_to_quimb, mpo_to_tenpy, to_quimb, to_tenpy  # noqa: E402
from .networks.interchange_hdf5 import load_itensors_hdf5, save_itensors_hdf5  # noqa: E402

# files other codes read: TeNPy, quimb (the interop extra) and ITensors.jl's HDF5 layout
__all__ += ["to_tenpy", "from_tenpy", "mpo_to_tenpy", "mpo_from_tenpy", "to_quimb", "from_quimb"]
__all__ += ["mpo_to_quimb", "mpo_from_quimb", "save_itensors_hdf5", "load_itensors_hdf5"]

# dynamical correlations G(x, t) and spectral functions S(q, omega) (time evolution, Chebyshev)
from .spectra import (  # noqa: E402
    DynamicalCorrelation,
    SpectralFunction,
    WindowResolutionError,
    dynamical_correlation,
    linear_prediction,
    spectral_function,
    spectral_function_chebyshev,
    window_resolution,
)

__all__ += ["dynamical_correlation", "spectral_function", "spectral_function_chebyshev", "linear_prediction"]
__all__ += ["window_resolution", "DynamicalCorrelation", "SpectralFunction", "WindowResolutionError"]

# finite temperature: purification, thermodynamics as derivatives of ln Z, METTS
from .thermal import MettsResult, ThermalResult, Thermodynamics, metts, metts_tasks  # noqa: E402
from .thermal import evolve_thermal, thermal_state, thermodynamics  # noqa: E402

__all__ += ["thermal_state", "thermodynamics", "metts", "metts_tasks", "ThermalResult", "Thermodynamics"]
__all__ += ["MettsResult"]
__all__ += ["evolve_thermal"]

# infinite systems: uniform MPS, VUMPS, iTEBD (measurements in tensor4all.infinite)
from .infinite import InfiniteMPO, VUMPSResult, iMPS, infinite_model, itebd, vumps  # noqa: E402

__all__ += ["iMPS", "InfiniteMPO", "infinite_model", "vumps", "itebd", "VUMPSResult"]
from .infinite import IDMRGResult, idmrg  # noqa: E402
from .infinite import BrokenSymmetryWarning  # noqa: E402

__all__ += ["idmrg", "IDMRGResult", "BrokenSymmetryWarning"]
from .infinite import itdvp  # noqa: E402

__all__ += ["itdvp"]


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show
    (the imports this module uses stay out of sight)."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
