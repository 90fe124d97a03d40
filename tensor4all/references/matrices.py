"""The explicit Hamiltonian matrix of an :class:`~tensor4all.OpSum` (:func:`sparse_hamiltonian`),
built term by term from Kronecker products with no MPO code: what the exact references
diagonalize."""

from __future__ import annotations

import numpy as np
import scipy.sparse

from ..operators.jordan_wigner import jordan_wigner_term
from ..operators.opsum import OpSum
from ..sites.local_spaces import local_space
from ..tools.checks import check_alloc, check_positive_int
from ..tools.errors import Tensor4allTypeError

__all__ = ["sparse_hamiltonian"]


def sparse_hamiltonian(os: OpSum, L: int, local: str = "spin-1/2") -> scipy.sparse.csr_matrix:
    """The OpSum as a sparse ``d**L x d**L`` matrix in ``np.kron`` order (site 0 most significant).
    Fermionic operators of the local space (``"electron"``, ``"fermion"``, ``"tj"``) get their
    Jordan-Wigner strings and the sign of the site ordering, as ``MPO.from_opsum`` gives them."""
    if not isinstance(os, OpSum):
        raise Tensor4allTypeError(f"sparse_hamiltonian expects an OpSum, got {type(os).__name__}")
    L = check_positive_int(L, "L (number of sites)")
    sp = local_space(local)
    d = sp.dim
    os.check_sites(L)
    for term in os:
        for name, _ in term.ops:
            sp.factor(name)  # unknown names: a typed error listing the valid ones
    check_alloc(d**L * (len(os) + 1) * 16, f"the sparse Hamiltonian of {L} sites (dimension {d}**{L})")
    complex_ops = any(np.iscomplexobj(sp.matrix(name)) for t in os for name, _ in t.ops)
    complex_coefs = any(np.iscomplexobj(np.asarray(t.coef)) for t in os)
    dtype = complex if (complex_ops or complex_coefs) else float
    H = scipy.sparse.csr_matrix((d**L, d**L), dtype=dtype)
    for term in os:
        mats = [None] * L
        sign, factors = jordan_wigner_term(term.ops, sp)
        for name, site in factors:
            m = sp.matrix(name).astype(dtype)
            mats[site] = m if mats[site] is None else mats[site] @ m
        # identities on untouched stretches are kept as a single sparse eye each
        out = scipy.sparse.csr_matrix(np.ones((1, 1), dtype=dtype))
        run = 0
        for m in mats + ["end"]:
            if m is None:
                run += 1
                continue
            if run:
                out = scipy.sparse.kron(out, scipy.sparse.identity(d**run, dtype=dtype, format="csr"), format="csr")
                run = 0
            if isinstance(m, str):
                break
            out = scipy.sparse.kron(out, scipy.sparse.csr_matrix(m), format="csr")
        coef = complex(np.asarray(term.coef)) if dtype is complex else float(np.real(np.asarray(term.coef)))
        H = H + (sign * coef) * out
    return H
