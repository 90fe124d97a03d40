"""The measurements of an :class:`~tensor4all.MPS`, which its methods delegate to:
``expect`` and ``correlation`` (ratios ``<psi|prod O|psi> / <psi|psi>`` on sites scaled by
powers of two, blockwise on a symmetric state when every operator has one charge),
``correlation_matrix`` and ``expect`` at every site (one pass of environments,
:mod:`.correlations`), and the Schmidt values, entanglement entropies and, for a symmetric
state, entanglement spectra by sector (SciPy SVDs on concrete values, :mod:`.symmetric_sites`
and :mod:`tensor4all.linalg.canonical`). ``psi`` is the MPS measured."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import tenferro as tf

from ..linalg.canonical import schmidt_values as dense_schmidt_values
from ..tools.checks import check_finite_arrays, exponent, ldexp, to_numpy
from ..tools.errors import InvalidOptionError, ZeroNormError
from .chain import leaves_of
from .contractions import check_nonzero_norm, overlap_tensors, sandwich, scaled_sites
from .correlations import correlation_matrix as sites_correlation_matrix
from .correlations import correlation_operators, expect_operators, expect_profile
from .symmetric_sites import check_bond, operator_tensor, schmidt_spectra

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
    if site is None:
        ts, _ = scaled_sites(psi._tensors)  # the ratio does not change; nothing overflows
        return expect_profile(ts, op, None, local)
    site = psi._check_site(site, "expect: site")
    ops, herm = expect_operators(op, site, psi.phys_dims, local)
    return _ratio(psi, ops, herm, "expect")


def correlation(psi: Any, op_a: Any, op_b: Any, i: int, j: int, local: Any, string: Any) -> Any:
    """``MPS.correlation`` (see there)."""
    i = psi._check_site(i, "correlation: site i")
    j = psi._check_site(j, "correlation: site j")
    ops, herm = correlation_operators(op_a, op_b, i, j, psi.phys_dims, local, string)
    return _ratio(psi, ops, herm, "correlation")


def correlation_matrix(psi: Any, op_a: Any, op_b: Any, sites: Sequence[int] | None, string: Any, local: Any) -> Any:
    """``MPS.correlation_matrix`` (see there)."""
    ts, _ = scaled_sites(psi._tensors)  # the ratio does not change; nothing overflows
    return sites_correlation_matrix(ts, op_a, op_b, sites, string, local)


def entanglement_entropy(psi: Any, bond: int | None) -> Any:
    """``MPS.entanglement_entropy`` (see there)."""
    if bond is not None:
        bond = check_bond(bond, psi.L, "entanglement_entropy")
    spectra = psi.schmidt_values()
    ents = [float(-np.sum(p * np.log(p))) for p in (s * s / np.sum(s * s) for s in spectra) for p in [p[p > 0]]]
    return ents if bond is None else ents[int(bond)]


def schmidt_values(psi: Any) -> list[np.ndarray]:
    """``MPS.schmidt_values`` (see there)."""
    if psi.symmetric:
        return [np.sort(np.concatenate(list(sp.values())))[::-1] for sp in _sector_spectra(psi, "MPS.schmidt_values")]
    ts = [to_numpy(t, "MPS.schmidt_values") for t in psi._tensors]
    check_finite_arrays(ts, "MPS.schmidt_values")
    out = dense_schmidt_values([ldexp(t, -exponent(t)) for t in ts])
    if out is None:
        raise ZeroNormError(
            "MPS.schmidt_values: the state has norm 0, so it has no Schmidt values (nor an entanglement entropy)"
        )
    return out


def entanglement_spectrum(psi: Any, bond: int) -> dict[Any, np.ndarray]:
    """``MPS.entanglement_spectrum`` (see there)."""
    bond = check_bond(bond, psi.L, "entanglement_spectrum")
    if not psi.symmetric:
        raise InvalidOptionError(
            "entanglement_spectrum: this MPS is dense and has no charge sectors; use "
            "schmidt_values(), or a symmetric MPS (conserve=... in dmrg, MPS.random, "
            "MPS.product_state)"
        )
    spectrum = _sector_spectra(psi, "MPS.entanglement_spectrum")[bond]
    if psi._grading is None:
        return spectrum
    return {psi._grading.value(q): s for q, s in spectrum.items()}


def _sector_spectra(psi: Any, what: str) -> list[dict[Any, np.ndarray]]:
    for b in leaves_of(psi._tensors):
        to_numpy(b, what)
    check_finite_arrays(leaves_of(psi._tensors), what)
    if not float(psi.norm()) > 0.0:
        raise ZeroNormError(f"{what}: the state has norm 0, so it has no Schmidt values (nor an entanglement entropy)")
    return schmidt_spectra(psi._tensors)


def _ratio(psi: Any, ops: dict[int, np.ndarray], hermitian: bool, what: str) -> Any:
    sites = psi._tensors
    if psi.symmetric:  # operators of one charge act on the blocks; others on the dense sites
        sym_ops = {i: operator_tensor(m, sites[i].legs[1]) for i, m in ops.items()}
        if all(o is not None for o in sym_ops.values()):
            ops = sym_ops
        else:
            sites = psi.dense()._tensors
    ts, _ = scaled_sites(sites)  # the ratio does not change; nothing overflows
    num = sandwich(ts, ops)
    den = tf.real(overlap_tensors(ts, ts))
    check_nonzero_norm(den, f"MPS.{what}")
    val = num / den
    return tf.real(val) if hermitian else val
