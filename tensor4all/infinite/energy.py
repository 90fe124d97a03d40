"""The energy per site of an infinite MPS as the sum of its terms' expectation values, and its
derivatives in the couplings by Hellmann-Feynman.

``e = (1/n) sum_t c_t <O_t>`` over the cell's terms (:class:`.impo.InfiniteMPO`). A variational
fixed point (VUMPS at its bond dimension) minimizes ``e`` over the states of that bond dimension,
so ``de/dc = <dH/dc> / n`` there: the expectation values are held fixed and only the coefficients
carry tidu tracers, so ``tidu.grad`` of the energy costs nothing beyond the run (the same
argument as :func:`tensor4all.dmrg`'s ``custom_jvp``, here plain arithmetic on the tracers).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tenferro as tf

from ..sites.local_spaces import local_space
from ..tools.checks import is_traced
from ..tools.errors import DimensionMismatchError, Tensor4allTypeError
from ..tools.threads import thread_policy
from .impo import InfiniteMPO, _value
from .imps import iMPS
from .transfer import term_expectation

__all__ = ["energy_per_site", "has_traced_couplings"]


def has_traced_couplings(H: InfiniteMPO) -> bool:
    """Whether any coefficient of ``H``'s terms is a tidu tracer."""
    return any(is_traced(c) for c, _, _ in H.terms)


@thread_policy()
def energy_per_site(psi: iMPS, H: InfiniteMPO) -> Any:
    """``<H>`` per site of ``psi``: a float, or a tenferro scalar linear in ``H``'s traced couplings
    (Hellmann-Feynman at a variational fixed point)."""
    if not isinstance(psi, iMPS):
        raise Tensor4allTypeError(f"energy_per_site: psi must be an iMPS, got {type(psi).__name__}")
    if not isinstance(H, InfiniteMPO):
        raise Tensor4allTypeError(f"energy_per_site: H must be an InfiniteMPO, got {type(H).__name__}")
    mpo_dims = [int(H.tensors[i % H.cell].shape[1]) for i in range(psi.cell)]
    if psi.cell % H.cell or list(psi.phys_dims) != mpo_dims:
        raise DimensionMismatchError(
            f"energy_per_site: a state of cell {psi.cell} (local dimensions {list(psi.phys_dims)}) and an MPO of "
            f"cell {H.cell} (local dimensions {mpo_dims[: H.cell]}); the state's cell must be a multiple of the "
            "MPO's, with the MPO's local dimension at every site"
        )
    if psi.local is not None and bool(local_space(psi.local).fermionic) != bool(local_space(H.local).fermionic):
        # one dimension, bases that do not match (a spin-1/2 state's up/down against a fermion's empty/occupied);
        # spaces of one kind share their basis (spin-1/2 and pauli: up, down) and may be mixed
        raise DimensionMismatchError(
            f"energy_per_site: the state is on the local space {psi.local!r}, the MPO on {H.local!r} (one of them "
            "fermionic); build both on the same local space (iMPS(..., local=H.local))"
        )
    n = psi.cell
    concrete_part = 0.0
    traced: Any = None
    for shift in range(0, n, H.cell):
        for coef, sign, factors in H.terms:
            v = term_expectation(psi, tuple((s + shift, m) for s, m in factors)) * sign / n
            v = v.real if abs(v.imag) <= 1e-13 else v
            if is_traced(coef):
                term = tf.asarray(np.float64(v) if isinstance(v, float) else v) * coef
                traced = term if traced is None else traced + term
            else:
                concrete_part += _value(coef) * v
    if traced is None:
        return float(np.real(concrete_part))
    # the real part, as the concrete value's: a complex coupling and its adjoint's cancel their
    # imaginary parts only to rounding, and a complex dtype would stop tidu.grad
    return tf.real(traced) + float(np.real(concrete_part))
