"""The measurements of an :class:`~tensor4all.MPS`, which its methods delegate to. A concrete
state is measured on its Schmidt form (:mod:`.schmidt_form`, made once and kept on the MPS):
the entropies and spectra are read, ``expect`` and ``correlation`` contract the sites between
the operators, ``correlation_matrix`` and ``expect`` at every site are one pass
(:mod:`.correlations` builds the operators). A traced state (``tidu.grad``) takes the
differentiable path: ratios ``<psi|prod O|psi> / <psi|psi>`` on sites scaled by powers of two,
blockwise on a symmetric state when every operator has one charge. ``psi`` is the MPS measured."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import tenferro as tf

from ..tools.checks import any_traced
from ..tools.errors import InvalidOptionError
from .chain import leaves_of
from .contractions import check_nonzero_norm, overlap_tensors, scaled_sites
from .contractions import sandwich as sandwich_sites
from .correlations import correlation_matrix as sites_correlation_matrix
from .correlations import correlation_operators, expect_operators, expect_profile
from .correlations import form_correlation_matrix, form_expect_profile
from .schmidt_form import SchmidtForm, sandwich
from .symmetric_sites import check_bond, operator_tensor, order_key, state_local

__all__ = [
    "expect",
    "correlation",
    "correlation_matrix",
    "entanglement_entropy",
    "schmidt_values",
    "entanglement_spectrum",
]


def expect(psi: Any, op: Any, site: int | None, local: Any) -> Any:
    """``MPS.expect`` (see there)."""
    local = state_local(psi._grading, psi.phys_dims, local)
    form = _form(psi, "MPS.expect")
    if site is None:
        if form is not None:
            return form_expect_profile(form, psi.phys_dims, op, None, local)
        ts, _ = scaled_sites(psi._tensors)  # the ratio does not change; nothing overflows
        return expect_profile(ts, op, None, local)
    site = psi._check_site(site, "expect: site")
    ops, herm = expect_operators(op, site, psi.phys_dims, local)
    return _ratio(psi, form, ops, herm, "expect")


def correlation(psi: Any, op_a: Any, op_b: Any, i: int, j: int, local: Any, string: Any) -> Any:
    """``MPS.correlation`` (see there)."""
    i = psi._check_site(i, "correlation: site i")
    j = psi._check_site(j, "correlation: site j")
    local = state_local(psi._grading, psi.phys_dims, local)
    ops, herm = correlation_operators(op_a, op_b, i, j, psi.phys_dims, local, string)
    return _ratio(psi, _form(psi, "MPS.correlation"), ops, herm, "correlation")


def correlation_matrix(psi: Any, op_a: Any, op_b: Any, sites: Sequence[int] | None, string: Any, local: Any) -> Any:
    """``MPS.correlation_matrix`` (see there)."""
    local = state_local(psi._grading, psi.phys_dims, local)
    form = _form(psi, "MPS.correlation_matrix")
    if form is not None:
        return form_correlation_matrix(form, psi.phys_dims, op_a, op_b, sites, string, local)
    ts, _ = scaled_sites(psi._tensors)  # the ratio does not change; nothing overflows
    return sites_correlation_matrix(ts, op_a, op_b, sites, string, local)


def entanglement_entropy(psi: Any, bond: int | None) -> Any:
    """``MPS.entanglement_entropy`` (see there): read from the Schmidt form."""
    if bond is not None:
        bond = check_bond(bond, psi.L, "entanglement_entropy")
    ents = psi._schmidt_form("MPS.entanglement_entropy").entropies()
    return ents if bond is None else ents[int(bond)]


def schmidt_values(psi: Any) -> list[np.ndarray]:
    """``MPS.schmidt_values`` (see there): read from the Schmidt form."""
    return psi._schmidt_form("MPS.schmidt_values").schmidt_values()


def entanglement_spectrum(psi: Any, bond: int) -> dict[Any, np.ndarray]:
    """``MPS.entanglement_spectrum`` (see there): read from the Schmidt form."""
    bond = check_bond(bond, psi.L, "entanglement_spectrum")
    if not psi.symmetric:
        raise InvalidOptionError(
            "entanglement_spectrum: this MPS is dense and has no charge sectors; use "
            "schmidt_values(), or a symmetric MPS (conserve=... in dmrg, MPS.random, "
            "MPS.product_state)"
        )
    values = psi._schmidt_form("MPS.entanglement_spectrum").values[bond]
    spectrum = {q: values[q].copy() for q in sorted(values, key=order_key)}  # the caller's own arrays
    if psi._grading is None:
        return spectrum
    return {psi._grading.value(q): s for q, s in spectrum.items()}


def _form(psi: Any, what: str) -> SchmidtForm | None:
    """The state's Schmidt form, or None for traced sites (the differentiable path)."""
    if psi._form is not None:  # made from these (concrete) sites
        return psi._form
    return None if any_traced(leaves_of(psi._tensors)) else psi._schmidt_form(what)


def _ratio(psi: Any, form: SchmidtForm | None, ops: dict[int, np.ndarray], hermitian: bool, what: str) -> Any:
    if form is not None:
        val = sandwich(form, ops)
        return tf.asarray(val.real if hermitian else val)
    sites = psi._tensors
    if psi.symmetric:  # operators of one charge act on the blocks; others on the dense sites
        sym_ops = {i: operator_tensor(m, sites[i].legs[1]) for i, m in ops.items()}
        if all(o is not None for o in sym_ops.values()):
            ops = sym_ops
        else:
            sites = psi.dense()._tensors
    ts, _ = scaled_sites(sites)  # the ratio does not change; nothing overflows
    num = sandwich_sites(ts, ops)
    den = tf.real(overlap_tensors(ts, ts))
    check_nonzero_norm(den, f"MPS.{what}")
    val = num / den
    return tf.real(val) if hermitian else val
