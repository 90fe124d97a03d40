"""Local operator sets ("local spaces"): the named single-site operators of a site type.

A :class:`LocalSpace` stores each operator as ``phase * real_matrix`` with
``phase`` in ``{1, -1j}``, so that products such as ``Sy Sy`` of purely imaginary
operators give real coefficients and real MPOs (``from_opsum`` multiplies the phases
into the term's coefficient).

Basis order: index 0 is the highest ``Sz`` state (spin up), as in ``np.kron``
order conventions of the tests; for ``"pauli"`` index 0 is the ``Z = +1`` state; for
``"electron"`` (ITensor's ``"Electron"`` site) ``|0>, |up>, |dn>, |up dn>``.

A space may declare diagonal conserved charges, ``charges: name -> one integer per basis
state`` (TeNPy's convention: the spin spaces declare ``"2Sz"``, twice ``Sz``, so the charges
are integers). A declared charge is only a candidate: ``dmrg`` checks from the MPO whether
the Hamiltonian commutes with ``Q = sum_i q_i`` and reports the sector of its result
(``"2Sz"`` as ``"Sz"`` = value / 2). ``"pauli"`` declares ``"parity"`` (0 for ``Z = +1``, 1
for ``Z = -1``), a Z2 charge added mod 2: the transverse-field Ising model ``-J ZZ - g X``
does not conserve it, the same model in the rotated basis ``-J XX - g Z``
(``tfim(conserve="parity")``) does. ``"electron"`` declares the particle number ``"N"`` (0, 1,
1, 2) and ``"2Sz"`` (0, 1, -1, 0); a sector engine run conserves ``N`` or both together
(``conserve="N,Sz"``, :mod:`tensor4all.sites.charges`).

Fermions: a space lists its fermionic (odd) operators in ``fermionic`` and names the string
operator ``string`` (``"F"``, the local parity ``(-1)^n``). ``MPO.from_opsum`` then reads a
term's fermionic operators as Jordan-Wigner fermions ``c_j = (prod_{k<j} F_k) C_j`` and writes
the signs and ``F`` strings itself (:mod:`tensor4all.operators.jordan_wigner`), so ``os += (-t,
"Cdagup", i, "Cup", j)`` is the hopping ``-t c^dag_{i up} c_{j up}`` for any ``i, j``. As in
ITensor, only the ``C*`` operators are fermionic; ``A*`` (``"electron"``'s hard-core
ladders), ``N*``, ``S*``, ``F*`` are treated as bosonic: they get no string and commute with
everything when a term is ordered. ``N*``, ``S*``, ``F*`` are even; the ``A*`` change the
parity, so a term that mixes them with ``C*`` operators is the product in the fermions'
order, not in the written one (a sign apart from it; write such terms with ``C*`` only).
The built-in fermionic spaces:
``"fermion"`` (spinless, ``|0>, |1>``), ``"electron"`` and ``"tj"`` (``|0>, |up>, |dn>``, no
double occupancy; the electron's operators restricted to those three states). A new site type
declares them the same way::

    ops = {"Id": (1, np.eye(2)), "C": (1, c), "Cdag": (1, c.T), "N": (1, c.T @ c),
           "F": (1, np.diag([1.0, -1.0]))}
    LOCAL_SPACES["my-fermion"] = LocalSpace("my-fermion", 2, ops, charges={"N": (0, 1)},
                                            fermionic={"C", "Cdag"}, string="F")

Each fermionic operator must change the particle number by an odd amount and anticommute
with ``F``; the space's author vouches for that (it is not checked).
"""

from __future__ import annotations

import cmath
import numbers
from dataclasses import dataclass, field

import numpy as np

from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    Tensor4allError,
    Tensor4allTypeError,
)
from ..tools.checks import check_positive_int

__all__ = [
    "UnknownOperatorError",
    "UnknownLocalSpaceError",
    "LocalSpace",
    "local_space",
    "LOCAL_SPACES",
    "BUILT_IN_SPACES",
    "default_local_space",
]


class UnknownOperatorError(Tensor4allError, KeyError):
    """An operator name that the local space does not define."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownLocalSpaceError(Tensor4allError, KeyError):
    """A local-space name that tensor4all does not know."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class LocalSpace:
    """A named site type: its dimension, its operators ``name -> (phase, real matrix)`` and
    its diagonal conserved charges ``name -> (one integer per basis state)``, the names of its
    fermionic operators and the name of its Jordan-Wigner string operator (``"F"``).

    A user-made space declares its charges as ``LocalSpace("spin-3/2", 4, ops,
    charges={"2Sz": (3, 1, -1, -3)})``; ``dmrg`` finds the space of an MPO by its name in
    :data:`LOCAL_SPACES` (add the space there: ``LOCAL_SPACES[space.name] = space``).
    """

    name: str
    dim: int
    ops: dict[str, tuple[complex, np.ndarray]] = field(repr=False)
    charges: dict[str, tuple[int, ...]] = field(default_factory=dict, repr=False)
    fermionic: frozenset[str] = field(default_factory=frozenset, repr=False)
    string: str = field(default="F", repr=False)

    def __post_init__(self) -> None:
        """Checks a user-made space: a name, a positive dimension, ``name -> (phase, real
        dim x dim matrix)`` operators with finite entries and a finite phase, and ``name ->
        dim integers`` charges (stored as tuples)."""
        if not isinstance(self.name, str) or not self.name:
            raise Tensor4allTypeError(f"LocalSpace: name must be a non-empty string, got {self.name!r}")
        check_positive_int(self.dim, f"LocalSpace {self.name!r}: dim")
        if not isinstance(self.ops, dict):
            raise Tensor4allTypeError(
                f"LocalSpace {self.name!r}: ops must be a dict name -> (phase, matrix), got {type(self.ops).__name__}"
            )
        ops = {}  # read-only copies: factor() hands out the stored matrices, which no caller may change
        for op, value in self.ops.items():
            if not isinstance(op, str) or not isinstance(value, tuple) or len(value) != 2:
                raise Tensor4allTypeError(
                    f"LocalSpace {self.name!r}: ops must map names to (phase, matrix) pairs, got {op!r}: {value!r}"
                )
            phase, m = value
            if isinstance(phase, (bool, np.bool_)) or not isinstance(phase, numbers.Number):
                raise Tensor4allTypeError(
                    f"LocalSpace {self.name!r}: the phase of {op!r} must be a number, got {phase!r}"
                )
            try:
                m = np.asarray(m)
            except (TypeError, ValueError):  # ragged rows
                raise DimensionMismatchError(
                    f"LocalSpace {self.name!r}: operator {op!r} must be a real {self.dim}x{self.dim} matrix, "
                    "got rows of different lengths"
                ) from None
            if m.shape != (self.dim, self.dim) or m.dtype.kind not in "iuf":
                raise DimensionMismatchError(
                    f"LocalSpace {self.name!r}: operator {op!r} must be a real "
                    f"{self.dim}x{self.dim} matrix, got shape {m.shape} and dtype {m.dtype}"
                )
            if not (cmath.isfinite(complex(phase)) and np.isfinite(m).all()):
                raise NonFiniteError(f"LocalSpace {self.name!r}: operator {op!r} holds NaN or infinity")
            m = m.copy()
            m.setflags(write=False)
            ops[op] = (phase, m)
        object.__setattr__(self, "ops", ops)
        if not isinstance(self.charges, dict):
            raise Tensor4allTypeError(
                f"LocalSpace {self.name!r}: charges must be a dict name -> integers per "
                f"basis state, got {type(self.charges).__name__}"
            )
        charges = {}
        for name, q in self.charges.items():
            if not isinstance(name, str) or not name or isinstance(q, (str, bytes)):
                raise Tensor4allTypeError(
                    f"LocalSpace {self.name!r}: charges must map names to integers per basis state, got {name!r}: {q!r}"
                )
            try:
                values = tuple(q)
            except TypeError:
                raise Tensor4allTypeError(
                    f"LocalSpace {self.name!r}: charge {name!r} must be {self.dim} integers "
                    f"(one per basis state), got {q!r}"
                ) from None
            if len(values) != self.dim or not all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values
            ):
                raise DimensionMismatchError(
                    f"LocalSpace {self.name!r}: charge {name!r} must be {self.dim} "
                    f"integers (one per basis state), got {q!r}"
                )
            charges[name] = tuple(int(v) for v in values)
        object.__setattr__(self, "charges", charges)
        if isinstance(self.fermionic, (str, bytes)) or not hasattr(self.fermionic, "__iter__"):
            raise Tensor4allTypeError(
                f"LocalSpace {self.name!r}: fermionic must be a set of operator names, got {self.fermionic!r}"
            )
        fermionic = frozenset(self.fermionic)
        unknown = sorted(repr(op) for op in fermionic if not isinstance(op, str) or op not in self.ops)
        if unknown:
            raise UnknownOperatorError(
                f"LocalSpace {self.name!r}: fermionic operators {', '.join(unknown)} are not "
                f"among its operators: {', '.join(sorted(self.ops))}"
            )
        object.__setattr__(self, "fermionic", fermionic)
        if not isinstance(self.string, str):
            raise Tensor4allTypeError(f"LocalSpace {self.name!r}: string must be an operator name, got {self.string!r}")
        if fermionic and self.string not in self.ops:
            raise UnknownOperatorError(
                f"LocalSpace {self.name!r}: the string operator {self.string!r} of its "
                f"fermionic operators is not among its operators: {', '.join(sorted(self.ops))}"
            )
        if self.string in fermionic:
            raise InvalidOptionError(
                f"LocalSpace {self.name!r}: the string operator {self.string!r} is bosonic "
                f"(the parity), it cannot be fermionic"
            )

    def operator_names(self) -> list[str]:
        return sorted(self.ops)

    def factor(self, op: str) -> tuple[complex, np.ndarray]:
        """``(phase, real_matrix)`` of the operator named ``op``."""
        try:
            return self.ops[op]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise UnknownOperatorError(
                f"unknown operator {op!r} for local space {self.name!r}; valid operators: "
                f"{', '.join(self.operator_names())}"
            ) from None

    def matrix(self, op: str) -> np.ndarray:
        """The ``dim x dim`` matrix of ``op`` (complex only where it must be)."""
        phase, m = self.factor(op)
        return m.copy() if phase == 1 else phase * m


def _spin_half() -> LocalSpace:
    sp = np.array([[0.0, 1.0], [0.0, 0.0]])
    sm = sp.T.copy()
    return LocalSpace(
        "spin-1/2",
        2,
        {
            "Id": (1, np.eye(2)),
            "Sz": (1, np.diag([0.5, -0.5])),
            "S+": (1, sp),
            "S-": (1, sm),
            "Sx": (1, 0.5 * (sp + sm)),
            "Sy": (-1j, 0.5 * (sp - sm)),  # Sy = (S+ - S-) / (2i) = -i (S+ - S-) / 2
            "exp(i pi Sz)": (-1j, np.diag([-1.0, 1.0])),  # diag(i, -i): a string operator (MPS.correlation)
        },
        charges={"2Sz": (1, -1)},
    )


def _pauli() -> LocalSpace:
    return LocalSpace(
        "pauli",
        2,
        {
            "Id": (1, np.eye(2)),
            "X": (1, np.array([[0.0, 1.0], [1.0, 0.0]])),
            "Y": (-1j, np.array([[0.0, 1.0], [-1.0, 0.0]])),  # Y = -i [[0, 1], [-1, 0]]
            "Z": (1, np.diag([1.0, -1.0])),
        },
        charges={"parity": (0, 1)},
    )  # Z2: the parity prod Z (conserved by tfim(conserve="parity"))


def _spin_one() -> LocalSpace:
    r2 = np.sqrt(2.0)
    sp = np.array([[0.0, r2, 0.0], [0.0, 0.0, r2], [0.0, 0.0, 0.0]])
    sm = sp.T.copy()
    return LocalSpace(
        "spin-1",
        3,
        {
            "Id": (1, np.eye(3)),
            "Sz": (1, np.diag([1.0, 0.0, -1.0])),
            "S+": (1, sp),
            "S-": (1, sm),
            "Sx": (1, 0.5 * (sp + sm)),
            "Sy": (-1j, 0.5 * (sp - sm)),
            "exp(i pi Sz)": (1, np.diag([-1.0, 1.0, -1.0])),  # the Haldane string (MPS.correlation(string=...))
        },
        charges={"2Sz": (2, 0, -2)},
    )


def _electron() -> LocalSpace:
    """ITensor's ``"Electron"`` site: basis ``|0>, |up>, |dn>, |up dn>`` (``"Emp"``, ``"Up"``,
    ``"Dn"``, ``"UpDn"``), with ``|up dn> = c^dag_up c^dag_dn |0>`` (up before down).

    ``A*`` are the bosonic (hard-core) ladder operators, no signs; ``C*`` the fermionic ones
    with the in-site Jordan-Wigner sign (``Cdn = Fup Adn``, ``Cdagdn = Adagdn Fup``); between
    sites ``MPO.from_opsum`` inserts the strings (:mod:`._jordan_wigner`).
    """
    aup = np.zeros((4, 4))
    aup[0, 1] = aup[2, 3] = 1.0  # |up> -> |0>, |up dn> -> |dn>
    adn = np.zeros((4, 4))
    adn[0, 2] = adn[1, 3] = 1.0  # |dn> -> |0>, |up dn> -> |up>
    fup, fdn = np.diag([1.0, -1.0, 1.0, -1.0]), np.diag([1.0, 1.0, -1.0, -1.0])
    nup, ndn = np.diag([0.0, 1.0, 0.0, 1.0]), np.diag([0.0, 0.0, 1.0, 1.0])
    return LocalSpace(
        "electron",
        4,
        {
            "Id": (1, np.eye(4)),
            "Aup": (1, aup),
            "Adagup": (1, aup.T.copy()),
            "Adn": (1, adn),
            "Adagdn": (1, adn.T.copy()),
            "Fup": (1, fup),
            "Fdn": (1, fdn),
            "F": (1, fup @ fdn),
            "Cup": (1, aup.copy()),
            "Cdagup": (1, aup.T.copy()),
            "Cdn": (1, fup @ adn),
            "Cdagdn": (1, adn.T @ fup),
            "Nup": (1, nup),
            "Ndn": (1, ndn),
            "Ntot": (1, nup + ndn),
            "Nupdn": (1, nup @ ndn),
            "NupNdn": (1, nup @ ndn),  # NupNdn: ITensor's name
            "Sz": (1, 0.5 * (nup - ndn)),
            "S+": (1, aup.T @ adn),
            "S-": (1, adn.T @ aup),
        },
        charges={"N": (0, 1, 1, 2), "2Sz": (0, 1, -1, 0)},
        fermionic={"Cup", "Cdagup", "Cdn", "Cdagdn"},
    )


def _fermion() -> LocalSpace:
    """ITensor's ``"Fermion"`` site: spinless, basis ``|0>, |1>``; ``C``, ``Cdag`` fermionic."""
    c = np.array([[0.0, 1.0], [0.0, 0.0]])  # |1> -> |0>
    return LocalSpace(
        "fermion",
        2,
        {
            "Id": (1, np.eye(2)),
            "C": (1, c),
            "Cdag": (1, c.T.copy()),
            "N": (1, np.diag([0.0, 1.0])),
            "F": (1, np.diag([1.0, -1.0])),
        },
        charges={"N": (0, 1)},
        fermionic={"C", "Cdag"},
    )


def _tj() -> LocalSpace:
    """ITensor's ``"tJ"`` site: basis ``|0>, |up>, |dn>`` (no double occupancy); the
    ``"electron"`` operators restricted to these states (``Cdn = Fup Adn`` there is ``|0><dn|``
    with sign +1), ``F = (-1)^n``."""
    cup, cdn = np.zeros((3, 3)), np.zeros((3, 3))
    cup[0, 1] = 1.0  # |up> -> |0>
    cdn[0, 2] = 1.0  # |dn> -> |0>
    nup, ndn = np.diag([0.0, 1.0, 0.0]), np.diag([0.0, 0.0, 1.0])
    sp = np.zeros((3, 3))
    sp[1, 2] = 1.0  # |dn> -> |up>
    return LocalSpace(
        "tj",
        3,
        {
            "Id": (1, np.eye(3)),
            "Cup": (1, cup),
            "Cdagup": (1, cup.T.copy()),
            "Cdn": (1, cdn),
            "Cdagdn": (1, cdn.T.copy()),
            "Nup": (1, nup),
            "Ndn": (1, ndn),
            "Ntot": (1, nup + ndn),
            "Sz": (1, 0.5 * (nup - ndn)),
            "S+": (1, sp),
            "S-": (1, sp.T.copy()),
            "F": (1, np.diag([1.0, -1.0, -1.0])),
            "Fup": (1, np.diag([1.0, -1.0, 1.0])),
            "Fdn": (1, np.diag([1.0, 1.0, -1.0])),
        },
        charges={"N": (0, 1, 1), "2Sz": (0, 1, -1)},
        fermionic={"Cup", "Cdagup", "Cdn", "Cdagdn"},
    )


LOCAL_SPACES: dict[str, LocalSpace] = {
    s.name: s for s in (_spin_half(), _pauli(), _spin_one(), _electron(), _fermion(), _tj())
}
#: the spaces built in (a guess of a state's space from its dimension looks only among these: a
#: space added later, by the user or as a purification's doubled space, is named with ``local=``)
BUILT_IN_SPACES: frozenset[str] = frozenset(LOCAL_SPACES)


def local_space(name: str | LocalSpace) -> LocalSpace:
    """The local space called ``name`` (``"spin-1/2"``, ``"pauli"``, ``"spin-1"``, ``"electron"``,
    ``"fermion"``, ``"tj"``)."""
    if isinstance(name, LocalSpace):
        return name
    try:
        return LOCAL_SPACES[name]
    except (KeyError, TypeError):
        raise UnknownLocalSpaceError(
            f"unknown local space {name!r}; valid local spaces: {', '.join(sorted(LOCAL_SPACES))}"
        ) from None


def default_local_space(d: int) -> LocalSpace:
    """The local space used for operator names on sites of dimension ``d`` (2: spin-1/2, 3: spin-1)."""
    for s in ("spin-1/2", "spin-1"):
        if LOCAL_SPACES[s].dim == d:
            return LOCAL_SPACES[s]
    raise UnknownLocalSpaceError(
        f"no default local space for physical dimension {d}; pass operators as {d}x{d} matrices "
        f"or a local= name among: {', '.join(sorted(LOCAL_SPACES))}"
    )
