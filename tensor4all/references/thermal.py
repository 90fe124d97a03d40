"""Exact thermodynamics of the chains of the command-line program (what ``tensor4all thermal``
compares with).

* :func:`free_fermion_thermodynamics` -- ``H = sum_k eps_k n_k + const`` (every occupation
  allowed): ``ln Z = sum_k ln(1 + e^{-beta eps_k}) - beta const``, ``E = sum_k eps_k f_k + const``,
  ``C = beta^2 sum_k eps_k^2 f_k (1 - f_k)`` and the number variance ``sum_k f_k (1 - f_k)``
  (``f_k = 1 / (e^{beta eps_k} + 1)``).
* :func:`thermal_reference` -- per model, the exact values where they are known: the open XX
  chain ``J sum (Sx Sx + Sy Sy) - h sum Sz`` (Jordan-Wigner: hopping ``J/2``, ``Sz = n - 1/2``;
  ``chi_z = beta Var(sum Sz)``), the open transverse-field Ising chain ``-J sum Z Z - g sum X``
  (levels ``2 s_k``, ``s_k`` the singular values of the bidiagonal matrix with ``g`` on the
  diagonal and ``J`` above it; Lieb, Schultz and Mattis 1961, Pfeuty 1970), the Hubbard chain at
  ``U = 0`` (two free species of hopping ``-t``, ``-mu`` each), and any model of up to
  :data:`THERMAL_ED_MAX_DIM` states by full exact diagonalization of its OpSum.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from .. import models
from ..operators.opsum import OpSum
from ..tools.checks import check_positive_int
from ..tools.errors import InvalidOptionError
from .matrices import sparse_hamiltonian

__all__ = ["free_fermion_thermodynamics", "thermal_reference", "THERMAL_ED_MAX_DIM"]

#: the largest Hilbert space :func:`thermal_reference` diagonalizes in full (dense ``eigh``)
THERMAL_ED_MAX_DIM = 2**10
#: the models :func:`thermal_reference` knows (those of the command-line program)
MODELS = ("xx", "heisenberg", "xxz", "tfim", "hubbard")


def free_fermion_thermodynamics(levels: Any, betas: Any, const: float = 0.0) -> dict[str, np.ndarray]:
    """``ln Z``, ``E``, ``C`` and ``number_variance`` (``<N^2> - <N>^2``) of ``sum_k eps_k n_k +
    const`` at each of ``betas`` (see the module docstring); ``levels`` the one-particle energies."""
    eps = np.asarray(levels, dtype=float).reshape(-1)
    b = np.asarray(betas, dtype=float).reshape(-1)
    if not (np.all(np.isfinite(eps)) and np.all(np.isfinite(b)) and np.all(b >= 0)):
        raise InvalidOptionError("free_fermion_thermodynamics: levels must be finite and betas finite and >= 0")
    x = b[:, None] * eps
    f = 0.5 * (1.0 - np.tanh(0.5 * x))  # 1 / (e^x + 1), no overflow
    var = np.sum(f * (1.0 - f), axis=1)
    return {
        "log_z": np.sum(np.logaddexp(0.0, -x), axis=1) - b * const,
        "energy": np.sum(eps * f, axis=1) + const,
        "specific_heat": b**2 * np.sum(eps**2 * f * (1.0 - f), axis=1),
        "number_variance": var,
    }


def _hopping(L: int, t: float) -> np.ndarray:
    m = np.diag(np.full(L - 1, t), 1)
    return np.linalg.eigvalsh(m + m.T)


def thermal_reference(model: str, L: int, betas: Any, couplings: dict[str, float]) -> tuple[dict, str] | None:
    """``(values, how)`` or None: the exact ``log_z``, ``energy``, ``specific_heat`` and, where it is
    known, ``susceptibility`` (``chi_z = beta Var(sum Sz)``; the tfim's ``Z``: ED only) of ``model``
    (``"xx"``, ``"heisenberg"``, ``"xxz"``, ``"tfim"``, ``"hubbard"``, the couplings of the
    command-line program: ``J``, ``Jz``, ``h``, ``g``, ``t``, ``U``, ``mu``, with its defaults; ``Jz``
    follows ``J`` but for ``"xx"``) on the open chain of ``L`` sites at ``betas``, whole systems (not
    per site); ``how`` names the method."""
    if model not in MODELS:
        raise InvalidOptionError(
            f"thermal_reference: model must be one of {', '.join(map(repr, MODELS))}, got {model!r}"
        )
    L = check_positive_int(L, "thermal_reference: L")
    p = dict(couplings)
    for name, default in (("J", 1.0), ("h", 0.0), ("g", 1.0), ("t", 1.0), ("U", 4.0), ("mu", 0.0)):
        p.setdefault(name, default)
    p.setdefault("Jz", 0.0 if model == "xx" else p["J"])
    b = np.asarray(betas, dtype=float)
    if b.ndim != 1 or not np.all(np.isfinite(b)) or np.any(b < 0):
        raise InvalidOptionError(f"thermal_reference: betas must be a list of finite numbers >= 0, got {betas!r}")
    if model in ("xx", "heisenberg", "xxz") and p.get("Jz", 0.0) == 0.0:
        h = p.get("h", 0.0)
        v = free_fermion_thermodynamics(_hopping(L, 0.5 * p["J"]) - h, b, 0.5 * h * L)
        v["susceptibility"] = b * v.pop("number_variance")
        return v, "free fermions (Jordan-Wigner)"
    if model == "tfim":
        m = np.diag(np.full(L, float(p["g"]))) + np.diag(np.full(L - 1, float(p["J"])), 1)
        e = 2.0 * np.linalg.svd(m, compute_uv=False)
        v = free_fermion_thermodynamics(e, b, -0.5 * float(np.sum(e)))
        v.pop("number_variance")
        v["susceptibility"] = _ed(model, L, b, p, energies=False) if 2**L <= THERMAL_ED_MAX_DIM else None
        return v, "free fermions (Jordan-Wigner)"
    if model == "hubbard" and p.get("U", 0.0) == 0.0:
        one = free_fermion_thermodynamics(_hopping(L, -p["t"]) - p["mu"], b)
        v = {k: 2.0 * one[k] for k in ("log_z", "energy", "specific_heat")}
        v["susceptibility"] = b * 0.5 * one["number_variance"]  # Sz = (n_up - n_dn) / 2, two species
        return v, "free fermions (U = 0)"
    d = {"hubbard": 4}.get(model, 2)
    if d**L <= THERMAL_ED_MAX_DIM:
        return _ed(model, L, b, p), f"exact diagonalization ({d**L} states)"
    return None


def _ed(model: str, L: int, b: np.ndarray, p: dict[str, float], energies: bool = True) -> Any:
    """Full exact diagonalization: the values of :func:`thermal_reference` (``energies=False``: the
    susceptibility only), ``chi_z = (1/beta) d^2 ln Z / dh^2`` of ``H - h sum Sz`` (``Z`` for the
    tfim) from the second derivative of the eigenvalues (exact where ``M`` does not commute with
    ``H`` too: second-order perturbation theory in ``h``)."""
    build = {
        "tfim": lambda: models.tfim_opsum(L, J=p["J"], g=p["g"]),
        "hubbard": lambda: models.hubbard_opsum(L, t=p["t"], U=p["U"], mu=p["mu"]),
    }.get(model, lambda: models.heisenberg_opsum(L, J=p["J"], Jz=p.get("Jz", 0.0), h=p.get("h", 0.0)))
    local = {"tfim": "pauli", "hubbard": "electron"}.get(model, "spin-1/2")
    h = scipy.sparse.csr_matrix(sparse_hamiltonian(build(), L, local)).toarray()
    field = "Z" if model == "tfim" else "Sz"
    os = OpSum()
    for i in range(L):
        os += (1.0, field, i)
    m = scipy.sparse.csr_matrix(sparse_hamiltonian(os, L, local)).toarray()
    w, v = np.linalg.eigh(h)
    mm = v.conj().T @ m @ v
    diag = np.real(np.diag(mm))
    gap = w[None, :] - w[:, None]
    big = np.abs(gap) > 1e-10 * max(1.0, float(np.max(np.abs(w))))
    with np.errstate(divide="ignore"):
        second = np.where(big, np.abs(mm) ** 2 / np.where(big, gap, 1.0), 0.0).sum(axis=1)  # d^2 E_n / dh^2 / -2
    chi, out = [], {"log_z": [], "energy": [], "specific_heat": []}
    for beta in b:
        p_n = np.exp(-beta * (w - w[0]))
        z = p_n.sum()
        e = float(np.sum(w * p_n) / z)
        out["log_z"].append(np.log(z) - beta * w[0])
        out["energy"].append(e)
        out["specific_heat"].append(beta**2 * (float(np.sum(w * w * p_n) / z) - e * e))
        # ln Z(h) = ln sum e^{-beta E_n(h)}, E_n(h) = E_n - h M_nn - h^2 second_n (degenerate blocks:
        # the block of M is diagonal in a suitable basis; its trace-based variance is what counts)
        m1 = float(np.sum(diag * p_n) / z)
        m2 = _block_square(mm, w, p_n / z)
        chi.append(beta * (m2 - m1 * m1) + 2.0 * float(np.sum(second * p_n) / z))
    if not energies:
        return np.asarray(chi)
    res = {k: np.asarray(x) for k, x in out.items()}
    res["susceptibility"] = np.asarray(chi)
    return res


def _block_square(mm: np.ndarray, w: np.ndarray, p: np.ndarray) -> float:
    """``sum_n p_n (M^2 within the degenerate block of n)_nn``: the ``<M^2>`` of the first-order
    energy shifts (the eigenvalues of ``M`` within each degenerate block)."""
    tol = 1e-10 * max(1.0, float(np.max(np.abs(w))))
    same = np.abs(w[None, :] - w[:, None]) <= tol
    inner = np.where(same, mm, 0.0)
    return float(np.real(np.sum(p * np.real(np.einsum("ij,ji->i", inner, inner)))))
